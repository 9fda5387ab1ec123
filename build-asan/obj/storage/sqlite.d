build-asan/obj/storage/sqlite.o: storage/sqlite.c storage/backend.h \
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
