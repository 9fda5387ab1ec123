build-asan/obj/user/core/utf8.o: user/core/utf8.c user/core/utf8.h
user/core/utf8.h:
