build-asan/obj/user/render/query_render.o: user/render/query_render.c \
 user/render/query_render.h user/query/hot.h user/core/profile.h \
 user/query/query.h user/query/stats.h storage/storage.h \
 user/core/labels.h user/core/run.h user/core/labels.h \
 user/core/name_index.h user/core/profile.h user/query/query.h \
 user/core/format.h user/render/tma_render.h kb/engine.h kb/kb.h \
 user/core/utf8.h
user/render/query_render.h:
user/query/hot.h:
user/core/profile.h:
user/query/query.h:
user/query/stats.h:
storage/storage.h:
user/core/labels.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
user/query/query.h:
user/core/format.h:
user/render/tma_render.h:
kb/engine.h:
kb/kb.h:
user/core/utf8.h:
