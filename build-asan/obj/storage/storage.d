build-asan/obj/storage/storage.o: storage/storage.c storage/backend.h \
 user/core/array.h storage/storage.h user/core/labels.h user/core/run.h \
 user/core/labels.h user/core/name_index.h user/core/profile.h
storage/backend.h:
user/core/array.h:
storage/storage.h:
user/core/labels.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
