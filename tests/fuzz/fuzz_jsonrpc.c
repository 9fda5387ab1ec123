// SPDX-License-Identifier: BSD-3-Clause
/*
 * Fuzzes the MCP server's input path: the bytes reach a fresh, initialized
 * server as they would arrive on stdin (td_mcp_feed: framing, parsing,
 * dispatch, the methods and tools behind it). Whatever the input, each
 * message written must be one line of JSON-RPC 2.0: an object with
 * "jsonrpc": "2.0" and either a method (a notification) or an id with
 * exactly one of result and error.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "server.h"

static int check_message(void *ctx, const char *text, size_t len)
{
	json_t *m = json_loadb(text, len, 0, NULL);
	bool result, error, method;

	(void)ctx;
	if (!m || memchr(text, '\n', len))
		abort();
	result = json_object_get(m, "result") != NULL;
	error = json_object_get(m, "error") != NULL;
	method = json_is_string(json_object_get(m, "method"));
	if (!json_is_string(json_object_get(m, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(m, "jsonrpc")), "2.0"))
		abort();
	if (method ? result || error || json_object_get(m, "id")
		   : !json_object_get(m, "id") || result == error)
		abort();
	json_decref(m);
	return 0;
}

static const char initialize[] =
	"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
	"\"2025-11-25\",\"capabilities\":{}}}\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char db[64];
	struct td_mcp_options opts = { .db = db, .page_size = 4 };
	struct td_mcp_server *server;

	if (!db[0]) { /* one scratch store for the whole run */
		char dir[] = "/tmp/td-fuzz-mcp-XXXXXX";

		if (!mkdtemp(dir))
			abort();
		snprintf(db, sizeof(db), "%s/runs.db", dir);
	}
	server = td_mcp_server_new(&opts, check_message, NULL);
	if (!server)
		return 0;
	td_mcp_feed(server, initialize, sizeof(initialize) - 1);
	td_mcp_feed(server, (const char *)data, size);
	td_mcp_feed(server, "\n", 1);
	td_mcp_server_free(server);
	return 0;
}
