build-asan/obj/user/collect/events.o: user/collect/events.c \
 user/core/fileio.h user/collect/events.h
user/core/fileio.h:
user/collect/events.h:
