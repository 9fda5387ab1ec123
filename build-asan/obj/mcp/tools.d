build-asan/obj/mcp/tools.o: mcp/tools.c user/render/explain_render.h \
 kb/explain.h kb/kb.h mcp/collect.h mcp/mcp.h mcp/jsonrpc.h mcp/server.h \
 storage/store_open.h storage/storage.h user/core/labels.h \
 user/core/run.h user/core/labels.h user/core/name_index.h \
 user/core/profile.h storage/storage.h user/core/parse.h \
 user/query/query.h user/query/stats.h user/query/hot.h \
 user/core/profile.h user/query/query.h user/render/query_render.h \
 user/core/format.h
user/render/explain_render.h:
kb/explain.h:
kb/kb.h:
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
user/query/query.h:
user/query/stats.h:
user/query/hot.h:
user/core/profile.h:
user/query/query.h:
user/render/query_render.h:
user/core/format.h:
