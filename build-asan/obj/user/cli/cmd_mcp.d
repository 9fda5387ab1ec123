build-asan/obj/user/cli/cmd_mcp.o: user/cli/cmd_mcp.c \
 user/cli/cli_options.h storage/store_open.h storage/storage.h \
 user/core/labels.h user/core/run.h user/core/labels.h \
 user/core/name_index.h user/core/profile.h user/cli/commands.h \
 user/core/format.h user/core/parse.h mcp/server.h mcp/streamable.h \
 user/http/httpd.h mcp/server.h
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
user/core/parse.h:
mcp/server.h:
mcp/streamable.h:
user/http/httpd.h:
mcp/server.h:
