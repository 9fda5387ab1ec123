build-asan/obj/user/cli/cli_options.o: user/cli/cli_options.c \
 user/cli/cli_options.h storage/store_open.h storage/storage.h \
 user/core/labels.h user/core/run.h user/core/labels.h \
 user/core/name_index.h user/core/profile.h user/core/format.h \
 user/cli/commands.h user/core/parse.h
user/cli/cli_options.h:
storage/store_open.h:
storage/storage.h:
user/core/labels.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
user/core/format.h:
user/cli/commands.h:
user/core/parse.h:
