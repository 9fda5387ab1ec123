build-asan/obj/mcp/complete.o: mcp/complete.c kb/explain.h kb/kb.h \
 mcp/mcp.h mcp/jsonrpc.h mcp/server.h storage/store_open.h \
 storage/storage.h user/core/labels.h user/core/run.h user/core/labels.h \
 user/core/name_index.h user/core/profile.h storage/storage.h \
 user/query/query.h user/query/stats.h
kb/explain.h:
kb/kb.h:
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
user/query/query.h:
user/query/stats.h:
