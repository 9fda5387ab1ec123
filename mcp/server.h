/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MCP server behind `topdown mcp-serve`: the lifecycle (initialize,
 * version negotiation, capabilities), the method table, logging to the
 * client, and the stdio loop.
 *
 * Messages go out through a write callback, one complete JSON text per
 * call, so tests and the fuzzer drive the server in-process with
 * td_mcp_handle_line() and read what it answers; td_mcp_serve() wires it
 * to stdin and stdout. Nothing else in the server writes to stdout.
 */
#ifndef TOPDOWN_MCP_SERVER_H
#define TOPDOWN_MCP_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store_open.h"

#define TD_MCP_DEFAULT_MAX_DURATION_NS (60ull * 1000000000)
#define TD_MCP_DEFAULT_REQUEST_TIMEOUT_NS (30ull * 1000000000)
#define TD_MCP_DEFAULT_PAGE_SIZE 100

struct td_mcp_options {
	bool allow_collect;        /* --allow-collect: collect_topdown may run */
	uint64_t max_duration_ns;  /* --max-duration: the longest collection; 0: the default */
	uint64_t request_timeout_ns; /* --request-timeout: the store's time for one request
					(collections excepted); 0: the default */
	size_t page_size;          /* items per page of a list result; 0: the default */
	struct td_store_flags store_flags; /* --backend, --dsn */
	const char *db;            /* --db */
	const char *topdown_path;  /* the binary collect_topdown runs; NULL: this process's */
};

/* Sends one message: text is a complete JSON document without a newline.
 * Returns 0, or a negative errno when the peer is gone. */
typedef int (*td_mcp_write_fn)(void *ctx, const char *text, size_t len);

struct td_mcp_server;

/* The options are copied (their strings must outlive the server). NULL
 * when out of memory. */
struct td_mcp_server *td_mcp_server_new(const struct td_mcp_options *opts, td_mcp_write_fn write,
					void *ctx);
void td_mcp_server_free(struct td_mcp_server *s);

/* Whether the last request answered ran out of its time (an error
 * TD_RPC_REQUEST_TIMEOUT answered it): HTTP gives it a status of its own. */
bool td_mcp_request_timed_out(const struct td_mcp_server *s);

/* Whether the server speaks this MCP protocol version ("2025-06-18"). */
bool td_mcp_protocol_supported(const char *version);

/* Handles one message (a line without its newline); line NULL reports a
 * line that was dropped for being over TD_RPC_MAX_LINE. */
void td_mcp_handle_line(struct td_mcp_server *s, const char *line, size_t len);

/* Feeds raw input bytes (the framing of td_mcp_serve, for the fuzzer). */
int td_mcp_feed(struct td_mcp_server *s, const char *data, size_t len);

/*
 * Serves newline-delimited JSON-RPC from in_fd until it ends or SIGTERM
 * or SIGINT arrives, with a running collection's progress and output in
 * the same loop. Returns 0, or a negative errno when the output failed.
 */
int td_mcp_serve(struct td_mcp_server *s, int in_fd);

#endif
