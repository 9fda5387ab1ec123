build-asan/obj/user/render/pprof.o: user/render/pprof.c user/core/array.h \
 user/query/hot.h user/core/profile.h user/query/query.h \
 user/query/stats.h storage/storage.h user/core/labels.h user/core/run.h \
 user/core/labels.h user/core/name_index.h user/core/profile.h \
 user/core/name_index.h user/render/pprof.h build-asan/pb/profile.pb-c.h \
 user/core/version.h
user/core/array.h:
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
user/core/name_index.h:
user/render/pprof.h:
build-asan/pb/profile.pb-c.h:
user/core/version.h:
