build-asan/obj/user/render/report.o: user/render/report.c \
 user/render/flamegraph.h user/query/hot.h user/core/profile.h \
 user/query/query.h user/query/stats.h storage/storage.h \
 user/core/labels.h user/core/run.h user/core/labels.h \
 user/core/name_index.h user/core/profile.h user/render/query_render.h \
 user/query/query.h user/render/report.h
user/render/flamegraph.h:
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
user/render/query_render.h:
user/query/query.h:
user/render/report.h:
