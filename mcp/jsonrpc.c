// SPDX-License-Identifier: BSD-3-Clause
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"

static void set_invalid(struct td_rpc_message *msg, int code, const char *fmt, ...)
{
	va_list ap;

	msg->kind = TD_RPC_INVALID;
	msg->error_code = code;
	va_start(ap, fmt);
	vsnprintf(msg->error, sizeof(msg->error), fmt, ap);
	va_end(ap);
}

/* MCP ids are strings or integers; anything else cannot be echoed back. */
static bool usable_id(const json_t *id)
{
	return id && (json_is_string(id) || json_is_integer(id));
}

/* Sorts a parsed object into one of the four kinds. */
static void classify(struct td_rpc_message *msg)
{
	json_t *root = msg->root, *id = json_object_get(root, "id");
	json_t *method = json_object_get(root, "method");
	const char *version = json_string_value(json_object_get(root, "jsonrpc"));
	bool answer = json_object_get(root, "result") || json_object_get(root, "error");

	msg->id = usable_id(id) ? id : NULL;
	msg->params = json_object_get(root, "params");
	if (!method && answer) {
		msg->kind = TD_RPC_RESPONSE; /* never answered, with or without an id */
		return;
	}
	if (id && !msg->id)
		return set_invalid(msg, TD_RPC_INVALID_REQUEST,
				   "the id must be a string or an integer");
	if (!version || strcmp(version, "2.0"))
		return set_invalid(msg, TD_RPC_INVALID_REQUEST,
				   "\"jsonrpc\" must be \"2.0\"");
	if (!method)
		return set_invalid(msg, TD_RPC_INVALID_REQUEST,
				   "the message has no \"method\" (nor \"result\" or \"error\")");
	if (!json_is_string(method) || answer)
		return set_invalid(msg, TD_RPC_INVALID_REQUEST,
				   "\"method\" must be a string, without \"result\" or \"error\"");
	msg->method = json_string_value(method);
	msg->kind = msg->id ? TD_RPC_REQUEST : TD_RPC_NOTIFICATION;
	if (msg->kind == TD_RPC_REQUEST && msg->params && !json_is_object(msg->params))
		set_invalid(msg, TD_RPC_INVALID_PARAMS, "\"params\" must be an object");
}

void td_rpc_parse(const char *line, size_t len, struct td_rpc_message *msg)
{
	json_error_t error;

	memset(msg, 0, sizeof(*msg));
	msg->root = json_loadb(line, len, JSON_DECODE_ANY, &error);
	if (!msg->root)
		return set_invalid(msg, TD_RPC_PARSE_ERROR, "not valid JSON: %s (column %d)",
				   error.text, error.column);
	if (json_is_array(msg->root))
		return set_invalid(msg, TD_RPC_INVALID_REQUEST,
				   "batches are not supported: send one message per line");
	if (!json_is_object(msg->root))
		return set_invalid(msg, TD_RPC_INVALID_REQUEST, "a message must be a JSON object");
	classify(msg);
}

void td_rpc_message_release(struct td_rpc_message *msg)
{
	json_decref(msg->root);
	memset(msg, 0, sizeof(*msg));
}

json_t *td_rpc_result(const json_t *id, json_t *result)
{
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result);
}

json_t *td_rpc_error(const json_t *id, int code, const char *message, json_t *data)
{
	json_t *error = json_pack("{s:i, s:s}", "code", code, "message", message);

	if (error && data)
		json_object_set_new(error, "data", data);
	else
		json_decref(data);
	if (!error)
		return NULL;
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(),
			 "error", error);
}

json_t *td_rpc_notification(const char *method, json_t *params)
{
	return json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method", method, "params", params);
}

/* jansson dumps members in the order td_rpc_notification packs them. */
bool td_rpc_text_is_notification(const char *text)
{
	static const char head[] = "{\"jsonrpc\":\"2.0\",\"method\":";

	return !strncmp(text, head, sizeof(head) - 1);
}

/* ---- line framing ---- */

void td_line_reader_init(struct td_line_reader *r, size_t max)
{
	memset(r, 0, sizeof(*r));
	r->max = max;
}

void td_line_reader_release(struct td_line_reader *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

static int append(struct td_line_reader *r, const char *data, size_t n)
{
	if (n == 0)
		return 0;
	if (r->len + n > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		char *grown;

		while (cap < r->len + n)
			cap *= 2;
		if (!(grown = realloc(r->buf, cap)))
			return -ENOMEM;
		r->buf = grown;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, data, n);
	r->len += n;
	return 0;
}

static void emit(struct td_line_reader *r, td_line_fn on_line, void *ctx)
{
	size_t len = r->len;

	if (len && r->buf[len - 1] == '\r')
		len--;
	if (len)
		on_line(ctx, r->buf, len);
	r->len = 0;
}

int td_line_reader_feed(struct td_line_reader *r, const char *data, size_t n, td_line_fn on_line,
			void *ctx)
{
	while (n) {
		const char *nl = memchr(data, '\n', n);
		size_t take = nl ? (size_t)(nl - data) : n;

		if (!r->discarding && r->len + take > r->max) {
			r->discarding = true;
			r->len = 0;
			on_line(ctx, NULL, 0);
		}
		if (!r->discarding && append(r, data, take))
			return -ENOMEM;
		if (nl) {
			if (!r->discarding)
				emit(r, on_line, ctx);
			r->discarding = false;
			take++;
		}
		data += take;
		n -= take;
	}
	return 0;
}

bool td_line_reader_pending(const struct td_line_reader *r)
{
	return r->len > 0 || r->discarding;
}
