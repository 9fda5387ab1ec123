build-asan/obj/user/core/run.o: user/core/run.c user/core/run.h \
 user/core/labels.h user/core/name_index.h user/core/profile.h
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
