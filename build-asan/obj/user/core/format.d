build-asan/obj/user/core/format.o: user/core/format.c user/core/format.h \
 user/core/utf8.h
user/core/format.h:
user/core/utf8.h:
