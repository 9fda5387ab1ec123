build-asan/obj/user/agent/service.o: user/agent/service.c \
 user/agent/service.h user/core/labels.h
user/agent/service.h:
user/core/labels.h:
