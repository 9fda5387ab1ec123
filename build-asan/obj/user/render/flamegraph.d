build-asan/obj/user/render/flamegraph.o: user/render/flamegraph.c \
 user/core/array.h user/render/flamegraph.h user/query/hot.h \
 user/core/profile.h user/query/query.h user/query/stats.h \
 storage/storage.h user/core/labels.h user/core/run.h user/core/labels.h \
 user/core/name_index.h user/core/profile.h user/core/utf8.h
user/core/array.h:
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
user/core/utf8.h:
