build-asan/obj/user/core/parse.o: user/core/parse.c user/core/parse.h
user/core/parse.h:
