build-asan/obj/user/query/hot.o: user/query/hot.c user/core/array.h \
 kb/engine.h kb/kb.h user/core/run.h user/core/labels.h \
 user/core/name_index.h user/core/profile.h user/query/hot.h \
 user/core/profile.h user/query/query.h user/query/stats.h \
 storage/storage.h user/core/labels.h user/core/name_index.h
user/core/array.h:
kb/engine.h:
kb/kb.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
user/query/hot.h:
user/core/profile.h:
user/query/query.h:
user/query/stats.h:
storage/storage.h:
user/core/labels.h:
user/core/name_index.h:
