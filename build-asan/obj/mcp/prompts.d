build-asan/obj/mcp/prompts.o: mcp/prompts.c user/core/labels.h mcp/mcp.h \
 mcp/jsonrpc.h mcp/server.h storage/store_open.h storage/storage.h \
 user/core/run.h user/core/labels.h user/core/name_index.h \
 user/core/profile.h storage/storage.h
user/core/labels.h:
mcp/mcp.h:
mcp/jsonrpc.h:
mcp/server.h:
storage/store_open.h:
storage/storage.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
storage/storage.h:
