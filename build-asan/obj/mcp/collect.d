build-asan/obj/mcp/collect.o: mcp/collect.c mcp/collect.h mcp/mcp.h \
 mcp/jsonrpc.h mcp/server.h storage/store_open.h storage/storage.h \
 user/core/labels.h user/core/run.h user/core/labels.h \
 user/core/name_index.h user/core/profile.h storage/storage.h \
 user/core/parse.h user/core/format.h
mcp/collect.h:
mcp/mcp.h:
mcp/jsonrpc.h:
mcp/server.h:
storage/store_open.h:
storage/storage.h:
user/core/labels.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
storage/storage.h:
user/core/parse.h:
user/core/format.h:
