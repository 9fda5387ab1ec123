build-asan/obj/user/cli/cmd_explain.o: user/cli/cmd_explain.c \
 user/cli/cli_options.h storage/store_open.h storage/storage.h \
 user/core/labels.h user/core/run.h user/core/labels.h \
 user/core/name_index.h user/core/profile.h user/cli/commands.h \
 user/core/format.h user/render/explain_render.h kb/explain.h kb/kb.h
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
user/render/explain_render.h:
kb/explain.h:
kb/kb.h:
