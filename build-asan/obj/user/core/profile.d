build-asan/obj/user/core/profile.o: user/core/profile.c user/core/array.h \
 user/core/profile.h
user/core/array.h:
user/core/profile.h:
