build-asan/obj/user/collect/procmatch.o: user/collect/procmatch.c \
 user/core/fileio.h user/collect/procmatch.h
user/core/fileio.h:
user/collect/procmatch.h:
