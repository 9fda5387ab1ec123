build-asan/obj/user/core/array.o: user/core/array.c user/core/array.h
user/core/array.h:
