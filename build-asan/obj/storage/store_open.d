build-asan/obj/storage/store_open.o: storage/store_open.c \
 storage/store_open.h storage/storage.h user/core/labels.h \
 user/core/run.h user/core/labels.h user/core/name_index.h \
 user/core/profile.h
storage/store_open.h:
storage/storage.h:
user/core/labels.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
