build-asan/obj/user/agent/agent_options.o: user/agent/agent_options.c \
 user/agent/agent_options.h user/core/format.h
user/agent/agent_options.h:
user/core/format.h:
