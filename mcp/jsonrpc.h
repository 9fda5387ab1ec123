/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * JSON-RPC 2.0 as MCP uses it over stdio: one message per line.
 *
 * This layer knows the shape of messages, not what they mean: it splits
 * the byte stream into lines (rejecting lines over a size limit), tells
 * requests from notifications and responses, and builds the replies.
 * mcp/server.c decides what each method does.
 */
#ifndef TOPDOWN_MCP_JSONRPC_H
#define TOPDOWN_MCP_JSONRPC_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* The error codes of JSON-RPC 2.0, the one MCP adds for resources, and
 * the one its SDKs give a request that ran out of time. */
#define TD_RPC_PARSE_ERROR -32700
#define TD_RPC_INVALID_REQUEST -32600
#define TD_RPC_METHOD_NOT_FOUND -32601
#define TD_RPC_INVALID_PARAMS -32602
#define TD_RPC_INTERNAL_ERROR -32603
#define TD_RPC_RESOURCE_NOT_FOUND -32002
#define TD_RPC_REQUEST_TIMEOUT -32001

#define TD_RPC_MAX_LINE (4u << 20) /* bytes in one message, without its newline */

enum td_rpc_kind {
	TD_RPC_REQUEST,      /* method and id: answered exactly once */
	TD_RPC_NOTIFICATION, /* method, no id: never answered */
	TD_RPC_RESPONSE,     /* result or error: the peer answering us */
	TD_RPC_INVALID,      /* answered with an error (the id when it was usable, else null) */
};

/* One message, pointing into the parsed document (which it holds). */
struct td_rpc_message {
	enum td_rpc_kind kind;
	json_t *root;       /* owned: the whole message */
	json_t *id;         /* borrowed; NULL for notifications, json null when unusable */
	const char *method; /* NULL unless a request or notification */
	json_t *params;     /* borrowed; NULL when absent */
	int error_code;     /* TD_RPC_INVALID: the code and why */
	char error[160];
};

/*
 * Parses one line. Always fills msg (release it with td_rpc_message_release):
 * malformed JSON becomes TD_RPC_INVALID with TD_RPC_PARSE_ERROR, a message
 * that is not a valid request, notification or response becomes
 * TD_RPC_INVALID with TD_RPC_INVALID_REQUEST.
 */
void td_rpc_parse(const char *line, size_t len, struct td_rpc_message *msg);
void td_rpc_message_release(struct td_rpc_message *msg);

/* {"jsonrpc":"2.0","id":id,"result":result}; steals result. */
json_t *td_rpc_result(const json_t *id, json_t *result);
/* {"jsonrpc":"2.0","id":id,"error":{"code","message"[,"data"]}}; id NULL means null;
 * steals data (may be NULL). */
json_t *td_rpc_error(const json_t *id, int code, const char *message, json_t *data);
/* {"jsonrpc":"2.0","method":method,"params":params}; steals params. */
json_t *td_rpc_notification(const char *method, json_t *params);
/* Whether text (as td_mcp_send writes it, JSON_COMPACT) is a notification
 * built by td_rpc_notification, rather than a response. */
bool td_rpc_text_is_notification(const char *text);

/*
 * Splits a byte stream into lines. A line longer than max is dropped up to
 * its newline; the owner hears of it once, as it starts, through on_line
 * with line == NULL. A trailing '\r' is removed; empty lines are skipped.
 */
struct td_line_reader {
	char *buf;
	size_t len, cap, max;
	bool discarding; /* inside a line that was too long */
};

typedef void (*td_line_fn)(void *ctx, const char *line, size_t len);

void td_line_reader_init(struct td_line_reader *r, size_t max);
void td_line_reader_release(struct td_line_reader *r);
/* 0, or -ENOMEM (the data was not taken in). */
int td_line_reader_feed(struct td_line_reader *r, const char *data, size_t n, td_line_fn on_line,
			void *ctx);
/* What is left without a newline when the input ends: true if anything. */
bool td_line_reader_pending(const struct td_line_reader *r);

#endif
