build-asan/obj/mcp/streamable.o: mcp/streamable.c mcp/collect.h mcp/mcp.h \
 mcp/jsonrpc.h mcp/server.h storage/store_open.h storage/storage.h \
 user/core/labels.h user/core/run.h user/core/labels.h \
 user/core/name_index.h user/core/profile.h storage/storage.h \
 mcp/streamable.h user/http/httpd.h
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
mcp/streamable.h:
user/http/httpd.h:
