build-asan/obj/storage/postgres.o: storage/postgres.c \
 /usr/include/postgresql/libpq-fe.h \
 /usr/include/postgresql/postgres_ext.h \
 /usr/include/postgresql/pg_config_ext.h storage/backend.h \
 user/core/array.h storage/storage.h user/core/labels.h user/core/run.h \
 user/core/labels.h user/core/name_index.h user/core/profile.h
/usr/include/postgresql/libpq-fe.h:
/usr/include/postgresql/postgres_ext.h:
/usr/include/postgresql/pg_config_ext.h:
storage/backend.h:
user/core/array.h:
storage/storage.h:
user/core/labels.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
