build-asan/obj/mcp/jsonrpc.o: mcp/jsonrpc.c mcp/jsonrpc.h
mcp/jsonrpc.h:
