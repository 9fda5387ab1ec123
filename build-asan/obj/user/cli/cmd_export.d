build-asan/obj/user/cli/cmd_export.o: user/cli/cmd_export.c \
 user/cli/commands.h user/core/fileio.h user/core/progress.h \
 user/query/hot.h user/core/profile.h user/query/query.h \
 user/query/stats.h storage/storage.h user/core/labels.h user/core/run.h \
 user/core/labels.h user/core/name_index.h user/core/profile.h \
 user/render/pprof.h user/cli/query_cli.h user/cli/cli_options.h \
 storage/store_open.h storage/storage.h user/render/query_render.h \
 user/query/query.h
user/cli/commands.h:
user/core/fileio.h:
user/core/progress.h:
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
user/render/pprof.h:
user/cli/query_cli.h:
user/cli/cli_options.h:
storage/store_open.h:
storage/storage.h:
user/render/query_render.h:
user/query/query.h:
