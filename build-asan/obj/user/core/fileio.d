build-asan/obj/user/core/fileio.o: user/core/fileio.c user/core/fileio.h
user/core/fileio.h:
