build-asan/obj/user/query/query.o: user/query/query.c user/core/array.h \
 kb/engine.h kb/kb.h user/core/run.h user/core/labels.h \
 user/core/name_index.h user/core/profile.h kb/explain.h \
 user/core/parse.h user/query/query.h user/query/stats.h \
 storage/storage.h user/core/labels.h user/query/query_internal.h
user/core/array.h:
kb/engine.h:
kb/kb.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
kb/explain.h:
user/core/parse.h:
user/query/query.h:
user/query/stats.h:
storage/storage.h:
user/core/labels.h:
user/query/query_internal.h:
