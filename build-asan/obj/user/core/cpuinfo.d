build-asan/obj/user/core/cpuinfo.o: user/core/cpuinfo.c \
 user/core/cpuinfo.h user/core/fileio.h
user/core/cpuinfo.h:
user/core/fileio.h:
