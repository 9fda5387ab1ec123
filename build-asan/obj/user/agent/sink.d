build-asan/obj/user/agent/sink.o: user/agent/sink.c user/agent/sink.h \
 user/core/run.h user/core/labels.h user/core/name_index.h \
 user/core/profile.h storage/store_open.h storage/storage.h \
 user/core/labels.h storage/storage.h
user/agent/sink.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
storage/store_open.h:
storage/storage.h:
user/core/labels.h:
storage/storage.h:
