build-asan/obj/user/cli/cmd_import.o: user/cli/cmd_import.c \
 user/cli/cli_options.h storage/store_open.h storage/storage.h \
 user/core/labels.h user/core/run.h user/core/labels.h \
 user/core/name_index.h user/core/profile.h user/cli/commands.h \
 user/core/format.h user/core/progress.h kb/engine.h kb/kb.h \
 user/import/import.h kb/kb.h user/core/parse.h storage/storage.h \
 user/render/tma_render.h
user/cli/cli_options.h:
storage/store_open.h:
storage/storage.h:
user/core/labels.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
user/cli/commands.h:
user/core/format.h:
user/core/progress.h:
kb/engine.h:
kb/kb.h:
user/import/import.h:
kb/kb.h:
user/core/parse.h:
storage/storage.h:
user/render/tma_render.h:
