build-asan/obj/user/agent/rotation.o: user/agent/rotation.c \
 user/agent/rotation.h
user/agent/rotation.h:
