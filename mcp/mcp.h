/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the parts of the MCP server share: the server's state, the shape
 * of a method handler, protocol errors, logging, pagination and the store.
 * Not for use outside mcp/.
 */
#ifndef TOPDOWN_MCP_MCP_H
#define TOPDOWN_MCP_MCP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "jsonrpc.h"
#include "server.h"
#include "storage.h"

#define TD_MCP_PROTOCOL_LATEST "2025-11-25"

/* notifications/message levels, as RFC 5424 orders them. */
enum td_mcp_log_level {
	TD_MCP_LOG_DEBUG,
	TD_MCP_LOG_INFO,
	TD_MCP_LOG_NOTICE,
	TD_MCP_LOG_WARNING,
	TD_MCP_LOG_ERROR,
	TD_MCP_LOG_CRITICAL,
	TD_MCP_LOG_ALERT,
	TD_MCP_LOG_EMERGENCY,
};

struct td_mcp_collect;

struct td_mcp_server {
	struct td_mcp_options opts;
	td_mcp_write_fn write;
	void *write_ctx;
	bool initialized;          /* initialize was answered */
	bool output_failed;        /* the peer stopped reading: time to go */
	char protocol_version[16];
	enum td_mcp_log_level log_level; /* the least notifications/message sends */
	struct td_store *store;    /* opened at the first call that needs it */
	int64_t deadline_ns;       /* of the request being answered (CLOCK_MONOTONIC) */
	bool timed_out;            /* the last request answered ran out of time */
	struct td_line_reader reader;
	struct td_mcp_collect *collect; /* the collection running, if any */
};

/* A request being answered. */
struct td_mcp_request {
	const json_t *id;
	const json_t *params;         /* an object, or NULL */
	const json_t *progress_token; /* params._meta.progressToken, or NULL */
};

/* A protocol error: the JSON-RPC error a request is answered with. */
struct td_mcp_error {
	int code;
	char message[768];
	json_t *data; /* owned; NULL for none */
};

/*
 * A method: 0 with *result set, -1 with e filled in, or TD_MCP_DEFERRED
 * when the answer will be sent later (a running collection).
 */
#define TD_MCP_DEFERRED 1
typedef int (*td_mcp_method_fn)(struct td_mcp_server *s, const struct td_mcp_request *req,
				json_t **result, struct td_mcp_error *e);

/* Fills e and returns -1. */
int td_mcp_fail(struct td_mcp_error *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Writes one message (and takes it); a failed write marks the server to stop. */
void td_mcp_send(struct td_mcp_server *s, json_t *message);

/* To stderr from warnings up, and as notifications/message when the
 * client asked for that level. */
void td_mcp_log(struct td_mcp_server *s, enum td_mcp_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The store, opened on first use with the CLI's flags and environment;
 * NULL with err when it cannot be opened (the next call tries again). */
struct td_store *td_mcp_store(struct td_mcp_server *s, char *err, size_t errlen);

/*
 * Pagination of list results: the cursor of a request is the offset of
 * its first item, in the form td_mcp_next_cursor() gave it.
 */
int td_mcp_page_start(const struct td_mcp_request *req, size_t *offset, struct td_mcp_error *e);
/* Adds "nextCursor" to result when more than the page's items remain. */
void td_mcp_next_cursor(json_t *result, size_t offset, size_t shown, size_t total);
size_t td_mcp_page_size(const struct td_mcp_server *s);
/* {key: the request's page of items, nextCursor when more follow}; takes
 * items (NULL: out of memory, *result stays NULL). */
int td_mcp_page_result(const struct td_mcp_server *s, const struct td_mcp_request *req,
		       const char *key, json_t *items, json_t **result, struct td_mcp_error *e);

/* A string member of params: 0 and *out (NULL when absent and optional),
 * or -1 with an invalid-params error. */
int td_mcp_param_string(const json_t *params, const char *name, bool required, const char **out,
			struct td_mcp_error *e);

/* Text rendered by a FILE-based renderer into a string (open_memstream). */
struct td_mcp_text {
	FILE *out;
	char *text;
	size_t len;
};
int td_mcp_text_open(struct td_mcp_text *t);
/* Closes the stream; the text stays in t->text (free it). */
void td_mcp_text_close(struct td_mcp_text *t);

/* ---- the method families (tools.c, resources.c, prompts.c, complete.c) ---- */

int td_mcp_tools_list(struct td_mcp_server *s, const struct td_mcp_request *req, json_t **result,
		      struct td_mcp_error *e);
int td_mcp_tools_call(struct td_mcp_server *s, const struct td_mcp_request *req, json_t **result,
		      struct td_mcp_error *e);
int td_mcp_resources_list(struct td_mcp_server *s, const struct td_mcp_request *req,
			  json_t **result, struct td_mcp_error *e);
int td_mcp_resources_read(struct td_mcp_server *s, const struct td_mcp_request *req,
			  json_t **result, struct td_mcp_error *e);
int td_mcp_resource_templates_list(struct td_mcp_server *s, const struct td_mcp_request *req,
				   json_t **result, struct td_mcp_error *e);
int td_mcp_prompts_list(struct td_mcp_server *s, const struct td_mcp_request *req,
			json_t **result, struct td_mcp_error *e);
int td_mcp_prompts_get(struct td_mcp_server *s, const struct td_mcp_request *req,
		       json_t **result, struct td_mcp_error *e);
int td_mcp_complete(struct td_mcp_server *s, const struct td_mcp_request *req, json_t **result,
		    struct td_mcp_error *e);

/* Adds labels given as {"key": "value", ...} to labels, each checked as
 * the CLI checks --label key=value; -EINVAL with err. */
int td_mcp_labels_from_json(const json_t *object, struct td_labels *labels, char *err,
			    size_t errlen);

/* Adds labels given as text, "key=value[,key=value...]" (the first len
 * bytes of text), as the prompts take them; -EINVAL with err. */
int td_mcp_labels_from_text(const char *text, size_t len, struct td_labels *labels, char *err,
			    size_t errlen);

/* A tool result: isError with one text item. */
json_t *td_mcp_tool_error(const char *message);

#endif
