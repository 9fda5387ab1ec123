build-asan/obj/user/core/progress.o: user/core/progress.c \
 user/core/progress.h
user/core/progress.h:
