build-asan/obj/user/core/labels.o: user/core/labels.c user/core/labels.h \
 user/core/utf8.h
user/core/labels.h:
user/core/utf8.h:
