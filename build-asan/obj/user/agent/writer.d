build-asan/obj/user/agent/writer.o: user/agent/writer.c \
 user/core/labels.h user/agent/writer.h user/core/run.h \
 user/core/labels.h user/core/name_index.h user/core/profile.h \
 user/agent/sink.h storage/store_open.h storage/storage.h
user/core/labels.h:
user/agent/writer.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
user/agent/sink.h:
storage/store_open.h:
storage/storage.h:
