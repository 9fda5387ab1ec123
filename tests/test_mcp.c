// SPDX-License-Identifier: BSD-3-Clause
/*
 * The MCP server at the protocol level: every malformed or edge-case
 * message gets its exact JSON-RPC error code (or, for notifications and
 * responses, no answer at all) and the server keeps serving; the tools
 * answer from a store whose answers were worked out by hand; results stay
 * small. First in-process through td_mcp_handle_line(), then the binary
 * over pipes for what only a process shows: framing, flushing, a huge
 * line, input ending mid-message, SIGTERM.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "backends.h"
#include "jsonrpc.h"
#include "server.h"

/* ---- the in-process server and what it writes ---- */

struct session {
	struct td_mcp_server *server;
	json_t *messages; /* what it wrote since the last look */
	char dir[64], db[PATH_MAX];
};

static int capture(void *ctx, const char *text, size_t len)
{
	struct session *s = ctx;
	json_error_t error;
	json_t *message;

	if (memchr(text, '\n', len))
		fail_msg("a message holds a newline: %.*s", (int)len, text);
	if (!(message = json_loadb(text, len, 0, &error)))
		fail_msg("the server wrote invalid JSON (%s): %.200s", error.text, text);
	json_array_append_new(s->messages, message);
	return 0;
}

/* What the server wrote for one line (a new array: decref it). */
static json_t *say(struct session *s, const char *line)
{
	json_t *out;

	td_mcp_handle_line(s->server, line, strlen(line));
	out = s->messages;
	s->messages = json_array();
	return out;
}

static void say_nothing(struct session *s, const char *line)
{
	json_t *out = say(s, line);

	if (json_array_size(out))
		fail_msg("no answer expected to %s, got %s", line, json_dumps(out, 0));
	json_decref(out);
}

/* The one message the server wrote for line (decref it). */
static json_t *answer(struct session *s, const char *line)
{
	json_t *out = say(s, line), *message;

	if (json_array_size(out) != 1)
		fail_msg("one answer expected to %.200s, got %zu", line, json_array_size(out));
	message = json_incref(json_array_get(out, 0));
	json_decref(out);
	assert_string_equal(json_string_value(json_object_get(message, "jsonrpc")), "2.0");
	return message;
}

/* id: the expected id as JSON text ("null", "7", "\"a\""). */
static void expect_error(struct session *s, const char *line, int code, const char *id)
{
	json_t *m = answer(s, line), *want = json_loads(id, JSON_DECODE_ANY, NULL);
	json_t *error = json_object_get(m, "error");

	if (!error)
		fail_msg("error %d expected to %.200s, got %s", code, line, json_dumps(m, 0));
	assert_int_equal(json_integer_value(json_object_get(error, "code")), code);
	assert_true(json_string_length(json_object_get(error, "message")) > 0);
	assert_true(json_equal(json_object_get(m, "id"), want));
	assert_null(json_object_get(m, "result"));
	json_decref(want);
	json_decref(m);
}

/* The result of a request that must succeed (decref it). */
static json_t *result_of(struct session *s, const char *line)
{
	json_t *m = answer(s, line), *result = json_incref(json_object_get(m, "result"));

	if (!result)
		fail_msg("a result expected to %.200s, got %s", line, json_dumps(m, 0));
	json_decref(m);
	return result;
}

static const char initialize_line[] =
	"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
	"\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}";

static void initialize(struct session *s)
{
	json_decref(result_of(s, initialize_line));
	say_nothing(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

static struct session *session_alloc(void)
{
	struct session *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	s->messages = json_array();
	return s;
}

static void session_start(struct session *s, const struct td_mcp_options *opts)
{
	s->server = td_mcp_server_new(opts, capture, s);
	assert_non_null(s->server);
}

static struct session *session_new(const struct td_mcp_options *opts)
{
	struct session *s = session_alloc();

	session_start(s, opts);
	return s;
}

static void session_free(struct session *s)
{
	td_mcp_server_free(s->server);
	json_decref(s->messages);
	if (s->db[0])
		unlink(s->db);
	if (s->dir[0])
		rmdir(s->dir);
	free(s);
}

/* A session on a SQLite store of its own (created at first use), initialized or not. */
static int setup_session(void **state, bool init)
{
	struct session *s = session_alloc();
	struct td_mcp_options opts = { .db = s->db };

	strcpy(s->dir, "/tmp/td-mcp-XXXXXX");
	if (!mkdtemp(s->dir))
		return -1;
	snprintf(s->db, sizeof(s->db), "%s/runs.db", s->dir);
	session_start(s, &opts);
	if (init)
		initialize(s);
	*state = s;
	return 0;
}

static int setup_initialized(void **state)
{
	return setup_session(state, true);
}

static int setup_fresh(void **state)
{
	return setup_session(state, false);
}

static int teardown_session(void **state)
{
	session_free(*state);
	return 0;
}

/* ---- framing and message shapes ---- */

static void test_malformed_messages(void **state)
{
	struct session *s = *state;

	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"", TD_RPC_PARSE_ERROR, "null");
	expect_error(s, "not json at all", TD_RPC_PARSE_ERROR, "null");
	expect_error(s, "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", TD_RPC_INVALID_REQUEST, "1");
	expect_error(s, "{\"id\":2,\"method\":\"ping\"}", TD_RPC_INVALID_REQUEST, "2");
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":3}", TD_RPC_INVALID_REQUEST, "3");
	expect_error(s, "{\"jsonrpc\":\"2.0\"}", TD_RPC_INVALID_REQUEST, "null");
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":42}", TD_RPC_INVALID_REQUEST, "4");
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\",\"result\":{}}",
		     TD_RPC_INVALID_REQUEST, "5");
	expect_error(s, "[]", TD_RPC_INVALID_REQUEST, "null");
	expect_error(s, "[{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}]", TD_RPC_INVALID_REQUEST, "null");
	expect_error(s, "42", TD_RPC_INVALID_REQUEST, "null");
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":[1]}",
		     TD_RPC_INVALID_PARAMS, "7");
	/* still serving */
	json_decref(result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}"));
}

static void test_id_types(void **state)
{
	struct session *s = *state;
	json_t *m;

	m = answer(s, "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"ping\"}");
	assert_string_equal(json_string_value(json_object_get(m, "id")), "abc");
	json_decref(m);
	m = answer(s, "{\"jsonrpc\":\"2.0\",\"id\":9007199254740991,\"method\":\"ping\"}");
	assert_true(json_integer_value(json_object_get(m, "id")) == 9007199254740991LL);
	json_decref(m);
	m = answer(s, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}");
	assert_true(json_is_integer(json_object_get(m, "id")));
	assert_int_equal(json_integer_value(json_object_get(m, "id")), 0);
	assert_non_null(json_object_get(m, "result"));
	json_decref(m);
	m = answer(s, "{\"jsonrpc\":\"2.0\",\"id\":-3,\"method\":\"ping\"}");
	assert_int_equal(json_integer_value(json_object_get(m, "id")), -3);
	json_decref(m);
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", TD_RPC_INVALID_REQUEST, "null");
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", TD_RPC_INVALID_REQUEST, "null");
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", TD_RPC_INVALID_REQUEST, "null");
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"ping\"}", TD_RPC_INVALID_REQUEST, "null");
}

static void test_notifications_are_never_answered(void **state)
{
	struct session *s = *state;

	say_nothing(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
	say_nothing(s, "{\"jsonrpc\":\"2.0\",\"method\":\"no/such/notification\"}");
	say_nothing(s, "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}");
	say_nothing(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":77}}");
	say_nothing(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":[1]}");
	/* responses from the client, with and without an id */
	say_nothing(s, "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32700,\"message\":\"bad\"}}");
	say_nothing(s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}");
	say_nothing(s, "{\"jsonrpc\":\"2.0\",\"id\":6,\"error\":{\"code\":-32601,\"message\":\"no\"}}");
	json_decref(result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"));
}

static void test_unknown_method(void **state)
{
	struct session *s = *state;

	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":\"m\",\"method\":\"tools/destroy\"}",
		     TD_RPC_METHOD_NOT_FOUND, "\"m\"");
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/subscribe\",\"params\":{\"uri\":\"x\"}}",
		     TD_RPC_METHOD_NOT_FOUND, "2");
}

static void test_framing(void **state)
{
	struct session *s = *state;
	static const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
	json_t *out;
	char *big;
	size_t n = TD_RPC_MAX_LINE + 1;

	/* two messages in one read, CRLF, empty lines, one split across reads */
	assert_int_equal(td_mcp_feed(s->server, "\n\r\n", 3), 0);
	assert_int_equal(td_mcp_feed(s->server, ping, sizeof(ping) - 1), 0);
	assert_int_equal(td_mcp_feed(s->server, "\r\n", 2), 0);
	assert_int_equal(td_mcp_feed(s->server, "{\"jsonrpc\":\"2.0\",\"id\":2,", 24), 0);
	assert_int_equal(json_array_size(s->messages), 1);
	assert_int_equal(td_mcp_feed(s->server, "\"method\":\"ping\"}\n", 17), 0);
	out = say(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
	assert_int_equal(json_array_size(out), 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(json_integer_value(json_object_get(json_array_get(out, i), "id")), i + 1);
	json_decref(out);

	/* a line over the limit: one error as it starts, then business as usual */
	big = malloc(n);
	assert_non_null(big);
	memset(big, ' ', n);
	big[0] = '{';
	assert_int_equal(td_mcp_feed(s->server, big, n / 2), 0);
	assert_int_equal(td_mcp_feed(s->server, big + n / 2, n - n / 2), 0);
	assert_int_equal(td_mcp_feed(s->server, "}\n", 2), 0);
	assert_int_equal(td_mcp_feed(s->server, ping, sizeof(ping) - 1), 0);
	assert_int_equal(td_mcp_feed(s->server, "\n", 1), 0);
	out = say(s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}");
	assert_int_equal(json_array_size(out), 3);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(json_array_get(out, 0),
		"error"), "code")), TD_RPC_INVALID_REQUEST);
	assert_true(json_is_null(json_object_get(json_array_get(out, 0), "id")));
	assert_int_equal(json_integer_value(json_object_get(json_array_get(out, 1), "id")), 1);
	json_decref(out);

	/* a line of exactly the limit is read: a request with padding in it */
	memset(big, ' ', TD_RPC_MAX_LINE);
	memcpy(big, ping, sizeof(ping) - 1);
	assert_int_equal(td_mcp_feed(s->server, big, TD_RPC_MAX_LINE), 0);
	assert_int_equal(td_mcp_feed(s->server, "\n", 1), 0);
	out = say(s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}");
	assert_int_equal(json_array_size(out), 2);
	assert_non_null(json_object_get(json_array_get(out, 0), "result"));
	json_decref(out);
	free(big);
}

/* ---- lifecycle ---- */

static void test_before_initialize(void **state)
{
	struct session *s = *state;

	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", TD_RPC_INVALID_REQUEST, "1");
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"list_profiling_runs\"}}",
		     TD_RPC_INVALID_REQUEST, "2");
	json_decref(result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}"));
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"initialize\",\"params\":{}}",
		     TD_RPC_INVALID_PARAMS, "4");
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"initialize\",\"params\":{\"protocolVersion\":7}}",
		     TD_RPC_INVALID_PARAMS, "4");
	initialize(s);
	json_decref(result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}"));
	expect_error(s, initialize_line, TD_RPC_INVALID_REQUEST, "0");
}

static void negotiate(const char *requested, const char *expected)
{
	struct session *s;
	char line[256];
	json_t *result;

	assert_int_equal(setup_fresh((void **)&s), 0);
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
		 "\"params\":{\"protocolVersion\":\"%s\",\"capabilities\":{}}}", requested);
	result = result_of(s, line);
	assert_string_equal(json_string_value(json_object_get(result, "protocolVersion")), expected);
	assert_string_equal(json_string_value(json_object_get(json_object_get(result, "serverInfo"),
							      "name")), "topdown");
	for (const char *const *cap = (const char *const[]){ "tools", "resources", "prompts",
							     "logging", "completions", NULL }; *cap; cap++)
		assert_true(json_is_object(json_object_get(json_object_get(result, "capabilities"), *cap)));
	assert_true(json_string_length(json_object_get(result, "instructions")) > 0);
	json_decref(result);
	teardown_session((void **)&s);
}

static void test_version_negotiation(void **state)
{
	(void)state;
	negotiate("2025-11-25", "2025-11-25");
	negotiate("2025-06-18", "2025-06-18");
	negotiate("2025-03-26", "2025-03-26");
	negotiate("2024-11-05", "2024-11-05");
	negotiate("2024-10-07", "2025-11-25");
	negotiate("2099-01-01", "2025-11-25");
	negotiate("", "2025-11-25");
}

static void test_logging(void **state)
{
	struct session *s = *state;
	json_t *out, *note;

	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"loud\"}}",
		     TD_RPC_INVALID_PARAMS, "1");
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logging/setLevel\"}", TD_RPC_INVALID_PARAMS, "1");
	json_decref(say(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"debug\"}}"));
	out = say(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
	assert_int_equal(json_array_size(out), 2); /* the answer, then a debug line about it */
	note = json_array_get(out, 1);
	assert_string_equal(json_string_value(json_object_get(note, "method")), "notifications/message");
	assert_null(json_object_get(note, "id"));
	assert_string_equal(json_string_value(json_object_get(json_object_get(note, "params"), "level")), "debug");
	json_decref(out);
	json_decref(result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"emergency\"}}"));
	json_decref(result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}"));
}

/* ---- tools: the protocol side ---- */

static void test_tools_list(void **state)
{
	struct session *s = *state;
	json_t *result = result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	json_t *tools = json_object_get(result, "tools"), *tool;
	size_t i;

	assert_int_equal(json_array_size(tools), 14);
	assert_null(json_object_get(result, "nextCursor"));
	json_array_foreach(tools, i, tool) {
		json_t *input = json_object_get(tool, "inputSchema");

		assert_true(json_is_false(json_object_get(input, "additionalProperties")));
		assert_string_equal(json_string_value(json_object_get(input, "type")), "object");
		assert_true(json_is_object(json_object_get(input, "properties")));
		assert_string_equal(json_string_value(json_object_get(json_object_get(tool, "outputSchema"),
								      "type")), "object");
		assert_true(json_is_boolean(json_object_get(json_object_get(tool, "annotations"),
							    "readOnlyHint")));
		assert_true(json_string_length(json_object_get(tool, "description")) > 40);
	}
	json_decref(result);
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{\"cursor\":\"x1\"}}",
		     TD_RPC_INVALID_PARAMS, "2");
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{\"cursor\":5}}",
		     TD_RPC_INVALID_PARAMS, "2");
	result = result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":{\"cursor\":\"14\"}}");
	assert_int_equal(json_array_size(json_object_get(result, "tools")), 0);
	json_decref(result);
}

/* word as a whole word in text: not part of a longer name (run_id is not run). */
static bool names_word(const char *text, const char *word)
{
	size_t len = strlen(word);

	for (const char *p = text; (p = strstr(p, word)); p++) {
		bool before = p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
		bool after = isalnum((unsigned char)p[len]) || p[len] == '_';

		if (!before && !after)
			return true;
	}
	return false;
}

/*
 * A description an assistant can act on: it names an argument that
 * narrows the answer and another tool to call next, so the tools read
 * as one path (query_bottlenecks -> explain_metric, get_hot_functions).
 */
static void test_tool_descriptions(void **state)
{
	struct session *s = *state;
	json_t *result = result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	json_t *tools = json_object_get(result, "tools"), *tool, *other, *schema;
	size_t i, j;

	assert_true(json_array_size(tools) > 1);
	json_array_foreach(tools, i, tool) {
		const char *name = json_string_value(json_object_get(tool, "name"));
		const char *text = json_string_value(json_object_get(tool, "description"));
		const char *arg;
		bool names_arg = false, names_tool = false;

		assert_non_null(name);
		assert_non_null(text);
		json_object_foreach(json_object_get(json_object_get(tool, "inputSchema"), "properties"),
				    arg, schema)
			names_arg |= names_word(text, arg);
		json_array_foreach(tools, j, other) {
			const char *other_name = json_string_value(json_object_get(other, "name"));

			if (j != i)
				names_tool |= names_word(text, other_name);
		}
		if (!names_arg)
			fail_msg("%s: the description names none of its arguments: %s", name, text);
		if (!names_tool)
			fail_msg("%s: the description names no other tool to call: %s", name, text);
	}
	json_decref(result);
	/* the check itself: a word inside a longer name does not count */
	assert_true(names_word("the run_id, then", "run_id"));
	assert_false(names_word("the run_id, then", "run"));
	assert_false(names_word("get_run_tree", "run"));
}

static void test_pagination(void **state)
{
	struct td_mcp_options opts = { .page_size = 5, .db = "/nonexistent/runs.db" };
	struct session *s = session_new(&opts);
	const char *cursor = NULL;
	int pages = 0;
	size_t seen = 0;

	(void)state;
	initialize(s);
	do {
		char line[160];
		json_t *result;

		snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/list\"%s%s%s}",
			 pages, cursor ? ",\"params\":{\"cursor\":\"" : "", cursor ? cursor : "",
			 cursor ? "\"}" : "");
		result = result_of(s, line);
		seen += json_array_size(json_object_get(result, "tools"));
		free((char *)cursor);
		cursor = json_string_value(json_object_get(result, "nextCursor"));
		cursor = cursor ? strdup(cursor) : NULL;
		json_decref(result);
		pages++;
	} while (cursor && pages < 10);
	assert_int_equal(pages, 3);
	assert_int_equal(seen, 14);
	session_free(s);
}

/* The text of an isError result (checked to be one). */
static char *tool_error(struct session *s, const char *line)
{
	json_t *result = result_of(s, line);
	char *text;

	if (!json_is_true(json_object_get(result, "isError")))
		fail_msg("isError expected to %.200s, got %s", line, json_dumps(result, 0));
	text = strdup(json_string_value(json_object_get(json_array_get(json_object_get(result, "content"), 0), "text")));
	json_decref(result);
	return text;
}

static void expect_tool_error(struct session *s, const char *line, const char *mentions)
{
	char *text = tool_error(s, line);

	if (!strstr(text, mentions))
		fail_msg("the error '%s' should mention '%s'", text, mentions);
	free(text);
}

static json_t *structured(json_t *result)
{
	if (!json_is_false(json_object_get(result, "isError")))
		fail_msg("a tool result expected, got %s", json_dumps(result, 0));
	return json_object_get(result, "structuredContent");
}

/*
 * A valid question that matches nothing: an answer, not a failure. The
 * empty result (its required fields there, total 0) carries the hint as
 * text and as structuredContent.hint.
 */
static void expect_empty_answer(struct session *s, const char *line, const char *hint)
{
	json_t *result = result_of(s, line), *content = structured(result);
	const char *text = json_string_value(json_object_get(json_array_get(json_object_get(result, "content"), 0), "text"));

	if (!json_is_false(json_object_get(result, "isError")) || !text || !strstr(text, hint))
		fail_msg("an empty answer with the hint '%s' expected to %.200s, got %s", hint, line, json_dumps(result, 0));
	assert_non_null(strstr(json_string_value(json_object_get(content, "hint")), hint));
	assert_int_equal(json_integer_value(json_object_get(content, "total")), 0);
	assert_true(json_is_false(json_object_get(content, "truncated")));
	json_decref(result);
}

/* tools/call with what the model got wrong, each followed by a ping: the server stays up. */
static void expect_arg_error(struct session *s, const char *tool, const char *arguments, const char *mentions)
{
	char line[200000];

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":40,\"method\":\"tools/call\",\"params\":{\"name\":"
		 "\"%s\",\"arguments\":%s}}", tool, arguments);
	expect_tool_error(s, line, mentions);
	json_decref(result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"ping\"}"));
}

/*
 * The request's own shape and an unknown tool are protocol errors; what
 * the arguments get wrong is a tool result with isError, which the model
 * sees and can fix (MCP 2025-11-25, SEP-1303), naming the argument.
 */
static void test_tool_call_errors(void **state)
{
	struct session *s = *state;
	char huge[100000], deep[256];

	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"no_such_tool\"}}",
		     TD_RPC_INVALID_PARAMS, "1");
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{}}",
		     TD_RPC_INVALID_PARAMS, "2");
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":7}}",
		     TD_RPC_INVALID_PARAMS, "3");
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"tools/call\",\"params\":{\"name\":\"explain_metric\","
		     "\"arguments\":[\"DRAM_Bound\"]}}", TD_RPC_INVALID_PARAMS, "14");
	/* wrong types */
	expect_arg_error(s, "query_bottlenecks", "{\"limit\":\"10\"}", "argument 'limit' must be an integer from 1 to 100");
	expect_arg_error(s, "query_bottlenecks", "{\"limit\":2.5}", "argument 'limit' must be an integer");
	expect_arg_error(s, "query_bottlenecks", "{\"labels\":[\"a=b\"]}", "argument 'labels' must be");
	expect_arg_error(s, "query_bottlenecks", "{\"labels\":{\"a\":1}}", "argument 'labels' must be");
	expect_arg_error(s, "compare_runs", "{\"run_a\":\"x\",\"run_b\":\"y\",\"by_thread_name\":\"yes\"}",
			 "argument 'by_thread_name' must be true or false");
	/* out of range */
	expect_arg_error(s, "query_bottlenecks", "{\"limit\":0}", "from 1 to 100");
	expect_arg_error(s, "get_funnel", "{\"max_level\":5}", "argument 'max_level' must be an integer from 1 to 4");
	/* extra and missing arguments */
	expect_arg_error(s, "query_bottlenecks", "{\"colour\":\"red\"}", "has no argument 'colour'; its arguments are: labels");
	expect_arg_error(s, "explain_metric", "{}", "explain_metric needs the argument 'name'");
	expect_arg_error(s, "explain_metric", "{\"metric\":\"zzz\"}", "explain_metric has no argument 'metric'");
	/* too big, too deep: refused with the limit named */
	snprintf(huge, sizeof(huge), "{\"process\":\"%0*d\"}", 70000, 0);
	expect_arg_error(s, "query_bottlenecks", huge, "the limit is 65536");
	snprintf(deep, sizeof(deep), "{\"labels\":{\"a\":{\"b\":{\"c\":[[[[1]]]]}}}}");
	expect_arg_error(s, "query_bottlenecks", deep, "nest deeper than 2 levels");
	/* a message that is not UTF-8 is a parse error, and the server goes on */
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":16,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}",
		     TD_RPC_PARSE_ERROR, "null");
	json_decref(result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"ping\"}"));
}

static void test_collect_refused(void **state)
{
	struct session *s = *state;
	struct td_mcp_options opts = { .allow_collect = true, .db = "/nonexistent/runs.db",
				       .topdown_path = "/nonexistent/topdown" };
	struct session *allowed;

	expect_tool_error(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
			  "\"collect_topdown\",\"arguments\":{\"process\":\"init\"}}}", "--allow-collect");
	/* allowed, but the arguments are wrong before anything starts */
	allowed = session_new(&opts);
	initialize(allowed);
	expect_tool_error(allowed, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
			  "\"collect_topdown\",\"arguments\":{\"process\":\"a\",\"pid\":\"1\"}}}", "exactly one target");
	expect_tool_error(allowed, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
			  "\"collect_topdown\",\"arguments\":{}}}", "exactly one target");
	expect_tool_error(allowed, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
			  "\"collect_topdown\",\"arguments\":{\"process\":\"a\",\"duration\":\"10 parsecs\"}}}", "'10 parsecs' for argument 'duration'");
	expect_tool_error(allowed, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":"
			  "\"collect_topdown\",\"arguments\":{\"process\":\"a\",\"labels\":{\"k=\":\"v\"}}}}", "bad label");
	{
		char line[4096] = "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":"
				  "\"collect_topdown\",\"arguments\":{\"process\":\"a\",\"labels\":{";
		size_t used = strlen(line);

		for (int i = 0; i < 70; i++)
			used += snprintf(line + used, sizeof(line) - used, "%s\"k%d\":\"v\"", i ? "," : "", i);
		snprintf(line + used, sizeof(line) - used, "}}}}");
		expect_tool_error(allowed, line, "too many labels");
	}
	session_free(allowed);
}

/* ---- tools and resources on a store with known answers ---- */

/*
 * Three runs of app labeled test=x, one of it labeled test=y:
 *   runs 1, 2: Backend_Bound 0.6 > Memory_Bound 0.4 > DRAM_Bound 0.3, all
 *              crossed; Frontend_Bound 0.1; Retiring 0.3
 *   run 3:     Frontend_Bound 0.5 crossed; Backend_Bound 0.2; Retiring 0.3
 *   test=y:    Bad_Speculation 0.7 crossed
 * Bottlenecks of test=x: DRAM_Bound in 2 samples (mean 0.3), then
 * Frontend_Bound in 1 (0.5).
 */
static void store_known_runs(struct backend *b, char ids[3][TD_RUN_ID_LEN])
{
	for (int r = 0; r < 2; r++) {
		struct td_run *run = new_run("app", 1000 + r, "test=x,git_branch=main");

		add_node(run, "Frontend_Bound", 0.1, false);
		add_node(run, "Backend_Bound", 0.6, true);
		add_node(run, "Backend_Bound.Memory_Bound", 0.4, true);
		add_node(run, "Backend_Bound.Memory_Bound.DRAM_Bound", 0.3, true);
		add_node(run, "Retiring", 0.3, false);
		store_run(b, run, ids[r]);
	}
	struct td_run *run = new_run("app", 1002, "test=x,git_branch=dev");

	add_node(run, "Frontend_Bound", 0.5, true);
	add_node(run, "Backend_Bound", 0.2, false);
	add_node(run, "Retiring", 0.3, false);
	store_run(b, run, ids[2]);
	run = new_run("other", 1003, "test=y");
	add_node(run, "Bad_Speculation", 0.7, true);
	store_run(b, run, NULL);
}

/* An initialized session on b's store, with the time limit per request
 * timeout_ns (0: the default). */
static struct session *session_limited(struct backend *b, uint64_t timeout_ns)
{
	struct td_mcp_options opts = { .request_timeout_ns = timeout_ns };
	struct session *s;

	if (is_postgres(b)) {
		opts.store_flags.backend = "postgresql";
		opts.store_flags.dsn = b->dsn;
	} else {
		opts.db = b->path;
	}
	s = session_new(&opts);
	initialize(s);
	return s;
}

static struct session *session_on(struct backend *b)
{
	return session_limited(b, 0);
}

static const char *text_of(json_t *result)
{
	return json_string_value(json_object_get(json_array_get(json_object_get(result, "content"), 0), "text"));
}

static void assert_close(double got, double want)
{
	if (!(fabs(got - want) <= 1e-6))
		fail_msg("got %.9g, want %.9g", got, want);
}

static void test_tool_answers(void **state)
{
	struct backend *b = backend_of(state);
	char ids[3][TD_RUN_ID_LEN], line[512];
	struct session *s;
	json_t *result, *items;

	store_known_runs(b, ids);
	s = session_on(b);
	result = result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
			   "\"query_bottlenecks\",\"arguments\":{\"labels\":{\"test\":\"x\"}}}}");
	items = json_object_get(structured(result), "bottlenecks");
	assert_int_equal(json_array_size(items), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(items, 0), "path")),
			    "Backend_Bound.Memory_Bound.DRAM_Bound");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(items, 0), "samples")), 2);
	assert_close(json_real_value(json_object_get(json_array_get(items, 0), "value")), 0.3);
	assert_string_equal(json_string_value(json_object_get(json_array_get(items, 1), "path")), "Frontend_Bound");
	assert_true(json_is_false(json_object_get(structured(result), "truncated")));
	assert_int_equal(json_integer_value(json_object_get(structured(result), "total")), 2);
	assert_non_null(strstr(text_of(result), "DRAM_Bound"));
	json_decref(result);

	/* limit 1: the first, and a notice in both forms */
	result = result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
			   "\"query_bottlenecks\",\"arguments\":{\"labels\":{\"test\":\"x\"},\"limit\":1}}}");
	assert_int_equal(json_array_size(json_object_get(structured(result), "bottlenecks")), 1);
	assert_true(json_is_true(json_object_get(structured(result), "truncated")));
	assert_int_equal(json_integer_value(json_object_get(structured(result), "total")), 2);
	assert_non_null(strstr(text_of(result), "showing 1 of 2"));
	assert_null(strstr(text_of(result), "Frontend_Bound"));
	json_decref(result);

	/* the process filter and the run prefix reach the same query */
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
		 "\"get_run_tree\",\"arguments\":{\"run_id\":\"%.8s\"}}}", ids[2]);
	result = result_of(s, line);
	assert_string_equal(json_string_value(json_object_get(structured(result), "run_id")), ids[2]);
	assert_int_equal(json_array_size(json_object_get(structured(result), "nodes")), 3);
	assert_close(json_real_value(json_object_get(structured(result), "useful")), 0.3);
	json_decref(result);

	/* compare the dev run against the main runs */
	result = result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
			   "\"compare_by_labels\",\"arguments\":{\"labels_a\":{\"git_branch\":\"main\"},"
			   "\"labels_b\":{\"git_branch\":\"dev\"},\"labels\":{\"test\":\"x\"}}}}");
	assert_int_equal(json_integer_value(json_object_get(structured(result), "runs_a")), 2);
	assert_int_equal(json_integer_value(json_object_get(structured(result), "runs_b")), 1);
	items = json_object_get(structured(result), "metrics");
	for (size_t i = 0; i < json_array_size(items); i++) {
		json_t *m = json_array_get(items, i);

		if (!strcmp(json_string_value(json_object_get(m, "path")), "Frontend_Bound"))
			assert_close(json_real_value(json_object_get(m, "delta")), 0.4);
	}
	json_decref(result);

	/* runs where Frontend_Bound reaches 40% */
	result = result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":"
			   "\"query_by_bottleneck\",\"arguments\":{\"node\":\"Frontend_Bound\",\"min_pct\":40}}}");
	items = json_object_get(structured(result), "runs");
	assert_int_equal(json_array_size(items), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(items, 0), "run_id")), ids[2]);
	json_decref(result);

	/* matching nothing is an answer */
	expect_empty_answer(s, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":"
			    "\"query_bottlenecks\",\"arguments\":{\"labels\":{\"test\":\"nope\"}}}}", "no stored run matches");
	expect_empty_answer(s, "{\"jsonrpc\":\"2.0\",\"id\":60,\"method\":\"tools/call\",\"params\":{\"name\":"
			    "\"list_profiling_runs\",\"arguments\":{\"labels\":{\"test\":\"nope\"}}}}", "no stored run matches");
	expect_empty_answer(s, "{\"jsonrpc\":\"2.0\",\"id\":61,\"method\":\"tools/call\",\"params\":{\"name\":"
			    "\"query_trend\",\"arguments\":{\"node\":\"Retiring\",\"labels\":{\"test\":\"nope\"}}}}",
			    "no stored run matches");
	/* failures the model can act on */
	expect_tool_error(s, "{\"jsonrpc\":\"2.0\",\"id\":62,\"method\":\"tools/call\",\"params\":{\"name\":"
			  "\"query_trend\",\"arguments\":{\"node\":\"Retirng\"}}}", "unknown metric 'Retirng'");
	/* A node no model knows is an error with a suggestion, never an empty list. */
	expect_tool_error(s, "{\"jsonrpc\":\"2.0\",\"id\":63,\"method\":\"tools/call\",\"params\":{\"name\":"
			  "\"query_by_bottleneck\",\"arguments\":{\"node\":\"Frontend_Bond\"}}}",
			  "unknown metric 'Frontend_Bond'; did you mean Frontend_Bound?");
	expect_tool_error(s, "{\"jsonrpc\":\"2.0\",\"id\":64,\"method\":\"tools/call\",\"params\":{\"name\":"
			  "\"query_by_bottleneck\",\"arguments\":{\"node\":\"NoSuch\",\"min_pct\":1}}}",
			  "unknown metric 'NoSuch'");
	expect_tool_error(s, "{\"jsonrpc\":\"2.0\",\"id\":65,\"method\":\"tools/call\",\"params\":{\"name\":"
			  "\"get_thread_breakdown\",\"arguments\":{\"sort\":\"Backend_Bond\"}}}",
			  "did you mean Backend_Bound?");
	expect_tool_error(s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":"
			  "\"query_bottlenecks\",\"arguments\":{\"labels\":{\"test\":\"\"}}}}", "bad label");
	expect_tool_error(s, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":"
			  "\"list_profiling_runs\",\"arguments\":{\"last\":\"yesterday\"}}}", "'yesterday' for argument 'last'");
	expect_tool_error(s, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":"
			  "\"compare_runs\",\"arguments\":{\"run_a\":\"00000000\",\"run_b\":\"11111111\"}}}", "00000000");
	expect_tool_error(s, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":"
			  "\"explain_metric\",\"arguments\":{\"name\":\"DRAM_Bund\"}}}", "DRAM_Bound");
	expect_tool_error(s, "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{\"name\":"
			  "\"explain_metric\",\"arguments\":{\"name\":\"DRAM_Bound\",\"model\":\"pentium\"}}}", "pentium");
	session_free(s);
}

/* get_funnel over the counts pooled: the tree no single window has
 * (backends.h, store_two_counter_windows), with the time counted. */
static void test_pooled_funnel(void **state)
{
	struct backend *b = backend_of(state);
	struct session *s;
	json_t *result, *node;

	store_two_counter_windows(b, "neoverse-n1");
	s = session_on(b);
	result = result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
			   "\"get_funnel\",\"arguments\":{\"labels\":{\"test\":\"pool\"},\"pooled\":true}}}");
	assert_true(json_is_true(json_object_get(structured(result), "pooled")));
	assert_int_equal(json_integer_value(json_object_get(structured(result), "hosts")), 2);
	node = json_array_get(json_object_get(structured(result), "nodes"), 1);
	assert_string_equal(json_string_value(json_object_get(node, "path")), "Backend_Stalled_Cycles");
	assert_close(json_real_value(json_object_get(node, "value")), 0.4);
	assert_int_equal(json_integer_value(json_object_get(node, "counted_ns")), 1000000000);
	assert_non_null(strstr(text_of(result), "pooled over 2 runs of 2 hosts"));
	json_decref(result);
	/* without pooled: the mean of the runs' own trees, which these runs lack */
	expect_empty_answer(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
			    "\"get_funnel\",\"arguments\":{\"labels\":{\"test\":\"pool\"},\"pooled\":false}}}",
			    "have no Top-Down metrics");
	store_two_counter_windows(b, "neoverse-v1");
	expect_tool_error(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
			  "\"get_funnel\",\"arguments\":{\"labels\":{\"test\":\"pool\"},\"pooled\":true}}}",
			  "--label tma_model=");
	session_free(s);
}

/* Many threads: the answer is cut to fit, and says so. */
/* A request whose store work runs past the time limit gets error -32001
 * saying so, and no partial answer; the next one on the same session and
 * store is served as usual. */
static void test_request_time_limit(void **state)
{
	static const char bottlenecks[] = "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
					  "\"params\":{\"name\":\"query_bottlenecks\",\"arguments\":{}}}";
	struct backend *b = backend_of(state);
	struct session *s;
	json_t *m, *result;
	char line[256];
	const char *message;

	store_many_runs(b, 200);
	s = session_limited(b, 1); /* a nanosecond: any read of the store outlasts it */
	snprintf(line, sizeof(line), bottlenecks, 1);
	expect_error(s, line, TD_RPC_REQUEST_TIMEOUT, "1");
	snprintf(line, sizeof(line), bottlenecks, 2);
	m = answer(s, line);
	message = json_string_value(json_object_get(json_object_get(m, "error"), "message"));
	assert_non_null(message);
	assert_non_null(strstr(message, "time limit of 1ns"));
	assert_non_null(strstr(message, "--request-timeout"));
	json_decref(m);
	assert_true(td_mcp_request_timed_out(s->server));
	/* what does not read the store is not bounded */
	json_decref(result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}"));
	assert_false(td_mcp_request_timed_out(s->server));
	session_free(s);

	s = session_on(b); /* the default, 30 s */
	snprintf(line, sizeof(line), bottlenecks, 4);
	result = result_of(s, line);
	assert_int_equal(json_integer_value(json_object_get(structured(result), "runs")), 200);
	assert_false(td_mcp_request_timed_out(s->server));
	json_decref(result);
	session_free(s);
}

static void test_answers_stay_small(void **state)
{
	struct backend *b = backend_of(state);
	struct td_run *run = new_run("app", 5000, "test=big");
	struct session *s;
	json_t *result;
	char key[16], *st;
	size_t size;

	for (uint32_t tid = 1; tid <= 600; tid++) {
		snprintf(key, sizeof(key), "%u", tid);
		add_thread(run, tid, "worker", 1000000ull * tid);
		add_row(run, TD_SCOPE_THREAD, key, "Frontend_Bound", 0.1, false, 1.0);
		add_row(run, TD_SCOPE_THREAD, key, "Bad_Speculation", 0.1, false, 1.0);
		add_row(run, TD_SCOPE_THREAD, key, "Backend_Bound", 0.5, true, 1.0);
		add_row(run, TD_SCOPE_THREAD, key, "Retiring", 0.3, false, 1.0);
	}
	add_row(run, TD_SCOPE_GROUP, "worker", "Backend_Bound", 0.5, true, 1.0);
	add_node(run, "Backend_Bound", 0.5, true);
	store_run(b, run, NULL);
	s = session_on(b);
	result = result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
			   "\"get_thread_breakdown\",\"arguments\":{\"limit\":500}}}");
	st = json_dumps(structured(result), JSON_COMPACT);
	size = strlen(st) + strlen(text_of(result));
	/* about 10,000 tokens: 40,000 bytes at the usual 4 bytes a token */
	if (size > 40000)
		fail_msg("the answer is %zu bytes", size);
	assert_true(json_is_true(json_object_get(structured(result), "truncated")));
	assert_int_equal(json_integer_value(json_object_get(structured(result), "total")), 600);
	assert_true(json_array_size(json_object_get(structured(result), "threads")) < 500);
	assert_true(json_array_size(json_object_get(structured(result), "threads")) > 20);
	/* busiest first: tid 600 has the most on-CPU time */
	assert_string_equal(json_string_value(json_object_get(json_array_get(
		json_object_get(structured(result), "threads"), 0), "tid")), "600");
	assert_non_null(strstr(text_of(result), "would not fit"));
	free(st);
	json_decref(result);
	session_free(s);
}

static void test_resources(void **state)
{
	struct backend *b = backend_of(state);
	char ids[3][TD_RUN_ID_LEN], line[512];
	struct session *s;
	json_t *result, *content, *value;

	store_known_runs(b, ids);
	s = session_on(b);
	result = result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/list\"}");
	assert_int_equal(json_array_size(json_object_get(result, "resources")), 2 + 4);
	json_decref(result);

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\","
		 "\"params\":{\"uri\":\"topdown://runs/%.12s/tree\"}}", ids[0]);
	result = result_of(s, line);
	content = json_array_get(json_object_get(result, "contents"), 0);
	assert_string_equal(json_string_value(json_object_get(content, "mimeType")), "application/json");
	value = json_loads(json_string_value(json_object_get(content, "text")), 0, NULL);
	assert_int_equal(json_array_size(json_object_get(value, "nodes")), 5);
	json_decref(value);
	json_decref(result);

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\","
		 "\"params\":{\"uri\":\"topdown://runs/%s\"}}", ids[1]);
	result = result_of(s, line);
	value = json_loads(json_string_value(json_object_get(json_array_get(json_object_get(result, "contents"), 0),
							     "text")), 0, NULL);
	assert_string_equal(json_string_value(json_object_get(value, "run_id")), ids[1]);
	assert_string_equal(json_string_value(json_object_get(json_object_get(value, "labels"), "test")), "x");
	json_decref(value);
	json_decref(result);

	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/read\",\"params\":{\"uri\":"
		     "\"topdown://runs/01234567-89ab-4def-8123-456789abcdef\"}}", TD_RPC_RESOURCE_NOT_FOUND, "4");
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/read\",\"params\":{\"uri\":"
		     "\"topdown://runs/0123/tree\"}}", TD_RPC_RESOURCE_NOT_FOUND, "5");
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/read\",\"params\":{\"uri\":"
		     "\"file:///etc/passwd\"}}", TD_RPC_RESOURCE_NOT_FOUND, "6");
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"resources/read\",\"params\":{\"uri\":"
		     "\"topdown://metrics/Not_A_Metric\"}}", TD_RPC_RESOURCE_NOT_FOUND, "7");
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"resources/read\",\"params\":{}}",
		     TD_RPC_INVALID_PARAMS, "8");
	session_free(s);
}

static void test_resources_without_store(void **state)
{
	struct session *s = *state;
	json_t *result, *content;

	result = result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":"
			   "\"topdown://methodology\"}}");
	content = json_array_get(json_object_get(result, "contents"), 0);
	assert_string_equal(json_string_value(json_object_get(content, "mimeType")), "text/markdown");
	assert_non_null(strstr(json_string_value(json_object_get(content, "text")), "Frontend_Bound"));
	json_decref(result);
	result = result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/templates/list\"}");
	assert_int_equal(json_array_size(json_object_get(result, "resourceTemplates")), 3);
	json_decref(result);
	result = result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\",\"params\":{\"uri\":"
			   "\"topdown://metrics/tma_dram_bound\"}}");
	assert_non_null(strstr(json_string_value(json_object_get(json_array_get(json_object_get(result, "contents"), 0),
								 "text")), "Backend_Bound.Memory_Bound.DRAM_Bound"));
	json_decref(result);
}

static void test_prompts(void **state)
{
	struct session *s = *state;
	json_t *result;
	const char *text;

	result = result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/list\"}");
	assert_int_equal(json_array_size(json_object_get(result, "prompts")), 3);
	json_decref(result);
	result = result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"prompts/get\",\"params\":{\"name\":"
			   "\"compare_builds\",\"arguments\":{\"label_a\":\"git_branch=main,test=x\","
			   "\"label_b\":\"git_branch=dev\"}}}");
	text = json_string_value(json_object_get(json_object_get(json_array_get(json_object_get(result, "messages"), 0),
								 "content"), "text"));
	assert_non_null(strstr(text, "labels_a {\"git_branch\":\"main\",\"test\":\"x\"}"));
	assert_non_null(strstr(text, "labels_b {\"git_branch\":\"dev\"}"));
	json_decref(result);
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"prompts/get\",\"params\":{\"name\":"
		     "\"compare_builds\",\"arguments\":{\"label_a\":\"git_branch=main\"}}}", TD_RPC_INVALID_PARAMS, "3");
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"prompts/get\",\"params\":{\"name\":"
		     "\"compare_builds\",\"arguments\":{\"label_a\":\"main\",\"label_b\":\"x=y\"}}}",
		     TD_RPC_INVALID_PARAMS, "4");
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"prompts/get\",\"params\":{\"name\":"
		     "\"explain_regression\",\"arguments\":{\"run_a\":1,\"run_b\":\"x\"}}}", TD_RPC_INVALID_PARAMS, "5");
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"prompts/get\",\"params\":{\"name\":\"nope\"}}",
		     TD_RPC_INVALID_PARAMS, "6");
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"prompts/get\",\"params\":{\"name\":"
		     "\"explain_regression\",\"arguments\":{\"run_a\":\"x\",\"run_b\":\"y\",\"run_c\":\"z\"}}}",
		     TD_RPC_INVALID_PARAMS, "7");
}

static void test_completion_errors(void **state)
{
	struct session *s = *state;
	json_t *result;

	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"completion/complete\",\"params\":{}}",
		     TD_RPC_INVALID_PARAMS, "1");
	expect_error(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"completion/complete\",\"params\":{\"ref\":"
		     "{\"type\":\"ref/prompt\",\"name\":\"compare_builds\"},\"argument\":{\"name\":\"x\"}}}",
		     TD_RPC_INVALID_PARAMS, "2");
	result = result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"completion/complete\",\"params\":{\"ref\":"
			   "{\"type\":\"ref/resource\",\"uri\":\"topdown://metrics/{name}\"},"
			   "\"argument\":{\"name\":\"name\",\"value\":\"mem\"}}}");
	assert_true(json_array_size(json_object_get(json_object_get(result, "completion"), "values")) > 0);
	json_decref(result);
}

/* store_known_runs: git_branch main on 2 runs, dev on 1; test x on 3, y on 1. */
static void test_list_labels(void **state)
{
	struct backend *b = backend_of(state);
	char ids[3][TD_RUN_ID_LEN];
	struct session *s;
	json_t *result, *keys, *values;

	store_known_runs(b, ids);
	s = session_on(b);
	result = result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
			   "\"list_labels\"}}");
	assert_int_equal(json_integer_value(json_object_get(structured(result), "runs")), 4);
	keys = json_object_get(structured(result), "keys");
	assert_int_equal(json_array_size(keys), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(keys, 0), "key")), "git_branch");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(keys, 0), "runs")), 3);
	values = json_object_get(json_array_get(keys, 0), "values");
	assert_string_equal(json_string_value(json_object_get(json_array_get(values, 0), "value")), "main");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(values, 0), "runs")), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(values, 1), "value")), "dev");
	assert_string_equal(json_string_value(json_object_get(json_array_get(keys, 1), "key")), "test");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(keys, 1), "runs")), 4);
	assert_true(json_is_false(json_object_get(structured(result), "truncated")));
	assert_int_equal(json_integer_value(json_object_get(structured(result), "total")), 4); /* pairs */
	assert_non_null(strstr(text_of(result), "main (2)"));
	json_decref(result);

	/* one key, its most frequent value: cut, and said so in both forms */
	result = result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
			   "\"list_labels\",\"arguments\":{\"key\":\"test\",\"limit\":1}}}");
	keys = json_object_get(structured(result), "keys");
	assert_int_equal(json_array_size(keys), 1);
	values = json_object_get(json_array_get(keys, 0), "values");
	assert_int_equal(json_array_size(values), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(values, 0), "value")), "x");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(keys, 0), "distinct_values")), 2);
	assert_true(json_is_true(json_object_get(structured(result), "truncated")));
	assert_int_equal(json_integer_value(json_object_get(structured(result), "total")), 2);
	assert_non_null(strstr(text_of(result), "(1 more)"));
	assert_non_null(strstr(text_of(result), "showing 1 of 2: raise limit"));
	json_decref(result);

	/* the run filters are the other tools' */
	result = result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
			   "\"list_labels\",\"arguments\":{\"process\":\"app\",\"labels\":{\"git_branch\":\"dev\"},"
			   "\"last\":\"36500d\"}}}");
	assert_int_equal(json_integer_value(json_object_get(structured(result), "runs")), 1);
	json_decref(result);
	/* past 100 years a duration is refused, never wrapped into the future */
	expect_tool_error(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
			  "\"list_labels\",\"arguments\":{\"last\":\"150000d\"}}}",
			  "bad duration '150000d' for argument 'last': it is longer than 100 years; use at most 36500d");
	/* a label value that no store would keep */
	expect_tool_error(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
			  "\"list_labels\",\"arguments\":{\"labels\":{\"k\":\"a\\u0085b\"}}}}",
			  "the value holds a control character");

	/* failures the model can act on */
	expect_tool_error(s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
			  "\"list_labels\",\"arguments\":{\"key\":\"branch\"}}}", "the keys there are git_branch, test");
	expect_tool_error(s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":"
			  "\"list_labels\",\"arguments\":{\"key\":\"git branch\"}}}", "bad label key 'git branch'");
	expect_tool_error(s, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":"
			  "\"list_labels\",\"arguments\":{\"labels\":{\"test\":\"\"}}}}", "bad label");
	expect_empty_answer(s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":"
			    "\"list_labels\",\"arguments\":{\"labels\":{\"test\":\"nope\"}}}}", "no stored run matches");
	expect_tool_error(s, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":"
			  "\"list_labels\",\"arguments\":{\"last\":\"a while\"}}}", "a while");
	/* arguments the schema refuses: tool errors the model sees */
	expect_arg_error(s, "list_labels", "{\"limit\":0}", "argument 'limit'");
	expect_arg_error(s, "list_labels", "{\"key\":7}", "argument 'key' must be a string");
	expect_arg_error(s, "list_labels", "{\"run_id\":\"abcdefgh\"}", "has no argument 'run_id'");
	expect_arg_error(s, "list_labels", "{\"labels\":\"test=x\"}", "argument 'labels' must be");
	session_free(s);
}

/* Labels too many to fit: every key keeps its most frequent values. */
static void test_labels_stay_small(void **state)
{
	struct backend *b = backend_of(state);
	struct session *s;
	json_t *result, *keys;
	char labels[256];
	size_t a, z;

	/* 400 runs, each with a value of a of its own (long) and of z (short) */
	for (int i = 0; i < 400; i++) {
		snprintf(labels, sizeof(labels), "a=%0100d,z=%d", i, i);
		store_run(b, new_run("app", 1000 + i, labels), NULL);
	}
	s = session_on(b);
	result = result_of(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
			   "\"list_labels\",\"arguments\":{\"limit\":1000}}}");
	keys = json_object_get(structured(result), "keys");
	assert_int_equal(json_array_size(keys), 2);
	a = json_array_size(json_object_get(json_array_get(keys, 0), "values"));
	z = json_array_size(json_object_get(json_array_get(keys, 1), "values"));
	/* taken rank by rank: a gets as many as z, or one more */
	if (z == 0 || a < z || a > z + 1 || a + z >= 800)
		fail_msg("a shows %zu values, z %zu", a, z);
	assert_true(json_is_true(json_object_get(structured(result), "truncated")));
	assert_int_equal(json_integer_value(json_object_get(structured(result), "total")), 800);
	assert_non_null(strstr(text_of(result), "would not fit"));
	json_decref(result);
	session_free(s);
}

/* The values completion/complete offers for a prompt's argument, as a
 * comma-separated string ("" for none). */
static char *completions(struct session *s, const char *prompt, const char *argument,
			 const char *value)
{
	json_t *request = json_pack("{s:s, s:i, s:s, s:{s:{s:s, s:s}, s:{s:s, s:s}}}", "jsonrpc",
				    "2.0", "id", 1, "method", "completion/complete", "params", "ref",
				    "type", "ref/prompt", "name", prompt, "argument", "name",
				    argument, "value", value);
	char *line = json_dumps(request, JSON_COMPACT), *joined = calloc(1, 4096);
	json_t *result = result_of(s, line), *completion = json_object_get(result, "completion");
	json_t *item;
	size_t i;

	json_array_foreach(json_object_get(completion, "values"), i, item)
		snprintf(joined + strlen(joined), 4096 - strlen(joined), "%s%s", i ? "," : "",
			 json_string_value(item));
	assert_int_equal(json_integer_value(json_object_get(completion, "total")), i);
	assert_true(json_is_false(json_object_get(completion, "hasMore")));
	json_decref(result);
	json_decref(request);
	free(line);
	return joined;
}

static void expect_completions(struct session *s, const char *prompt, const char *argument,
			       const char *value, const char *want)
{
	char *got = completions(s, prompt, argument, value);

	if (strcmp(got, want))
		fail_msg("%s '%s' completes to '%s', want '%s'", argument, value, got, want);
	free(got);
}

static void test_label_completion(void **state)
{
	struct backend *b = backend_of(state);
	char ids[3][TD_RUN_ID_LEN];
	struct session *s;

	store_known_runs(b, ids);
	s = session_on(b);
	/* keys before '=', values after it, most frequent first */
	expect_completions(s, "compare_builds", "label_a", "", "git_branch=,test=");
	expect_completions(s, "compare_builds", "label_b", "te", "test=");
	expect_completions(s, "compare_builds", "label_a", "test=", "test=x,test=y");
	expect_completions(s, "compare_builds", "label_a", "git_branch=d", "git_branch=dev");
	expect_completions(s, "diagnose_bottleneck", "labels", "g", "git_branch=");
	/* the pairs before narrow the runs, and their keys are not offered again */
	expect_completions(s, "diagnose_bottleneck", "labels", "test=y,", "");
	expect_completions(s, "diagnose_bottleneck", "labels", "git_branch=dev,", "git_branch=dev,test=");
	expect_completions(s, "compare_builds", "label_a", "git_branch=main,test=", "git_branch=main,test=x");
	expect_completions(s, "compare_builds", "label_a", "test=y,git_branch=", "");
	/* what cannot match offers nothing, and is no error */
	expect_completions(s, "compare_builds", "label_a", "nope=", "");
	expect_completions(s, "compare_builds", "label_a", "bad key=", "");
	expect_completions(s, "compare_builds", "label_a", "=x", "");
	expect_completions(s, "compare_builds", "label_a", "oops,test=", "");
	expect_completions(s, "compare_builds", "label_a", "test=z", "");
	/* other arguments keep their own values */
	expect_completions(s, "diagnose_bottleneck", "process", "o", "other");
	session_free(s);
}

/* ---- the binary over pipes ---- */

static const char *topdown_path(void)
{
	const char *path = getenv("TD_TOPDOWN");

	return path ? path : "build/topdown";
}

struct child {
	pid_t pid;
	int in, out; /* its stdin (ours to write), its stdout */
};

static void spawn_server(struct child *c, const char *db)
{
	int in[2], out[2];

	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		int null_fd = open("/dev/null", O_WRONLY);

		dup2(in[0], STDIN_FILENO);
		dup2(out[1], STDOUT_FILENO);
		dup2(null_fd, STDERR_FILENO);
		close(in[1]);
		close(out[0]);
		execl(topdown_path(), "topdown", "mcp-serve", "--db", db, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in = in[1];
	c->out = out[0];
	signal(SIGPIPE, SIG_IGN);
}

static void write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t n = write(fd, data, len);

		assert_true(n > 0);
		data += n;
		len -= (size_t)n;
	}
}

/* One line of the child's stdout, within timeout_ms; NULL at its end. */
static char *read_line(int fd, int timeout_ms)
{
	static char buf[1 << 16];
	static size_t have;
	char *nl, *line;

	while (!(nl = memchr(buf, '\n', have))) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, timeout_ms) != 1)
			fail_msg("no answer within %d ms", timeout_ms);
		n = read(fd, buf + have, sizeof(buf) - have);
		if (n <= 0) {
			assert_int_equal(have, 0); /* nothing half-written at the end */
			return NULL;
		}
		have += (size_t)n;
	}
	line = strndup(buf, (size_t)(nl - buf));
	have -= (size_t)(nl + 1 - buf);
	memmove(buf, nl + 1, have);
	return line;
}

static void expect_line_id(int fd, int id)
{
	char *line = read_line(fd, 5000);
	json_t *m = line ? json_loads(line, 0, NULL) : NULL;

	if (!m)
		fail_msg("a JSON-RPC message expected, got %s", line ? line : "the end of the output");
	assert_int_equal(json_integer_value(json_object_get(m, "id")), id);
	json_decref(m);
	free(line);
}

/* The exit status, waiting up to timeout_ms (then killing it and failing). */
static int wait_exit(pid_t pid, int timeout_ms)
{
	int status;

	for (int waited = 0; waited < timeout_ms; waited += 10) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	fail_msg("the server did not exit within %d ms", timeout_ms);
	return -1;
}

static void test_process_serves_and_exits(void **state)
{
	struct session *s = *state;
	static const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n";
	struct child c;
	size_t huge = 5u << 20;
	char *junk = malloc(huge);
	int status;

	spawn_server(&c, s->db);
	/* each answer arrives before the next request is sent: it was flushed */
	write_all(c.in, initialize_line, strlen(initialize_line));
	write_all(c.in, "\n", 1);
	expect_line_id(c.out, 0);
	write_all(c.in, ping, strlen(ping));
	expect_line_id(c.out, 2);
	/* a 5 MiB line: an error with a null id, then it serves on */
	assert_non_null(junk);
	memset(junk, 'x', huge);
	write_all(c.in, junk, huge);
	write_all(c.in, "\n", 1);
	free(junk);
	{
		char *line = read_line(c.out, 5000);
		json_t *m = json_loads(line, 0, NULL);

		assert_int_equal(json_integer_value(json_object_get(json_object_get(m, "error"), "code")),
				 TD_RPC_INVALID_REQUEST);
		assert_true(json_is_null(json_object_get(m, "id")));
		json_decref(m);
		free(line);
	}
	write_all(c.in, ping, strlen(ping));
	expect_line_id(c.out, 2);
	/* input ends in the middle of a request: no answer, a clean exit */
	write_all(c.in, "{\"jsonrpc\":\"2.0\",\"id\":3,\"meth", 29);
	close(c.in);
	assert_null(read_line(c.out, 5000));
	status = wait_exit(c.pid, 2000);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(c.out);
}

static void test_process_stops_on_sigterm(void **state)
{
	struct session *s = *state;
	struct child c;
	int status;

	spawn_server(&c, s->db);
	write_all(c.in, initialize_line, strlen(initialize_line));
	write_all(c.in, "\n", 1);
	expect_line_id(c.out, 0);
	kill(c.pid, SIGTERM);
	status = wait_exit(c.pid, 2000);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_null(read_line(c.out, 1000));
	close(c.in);
	close(c.out);
}

/* The exit status of topdown with args; its stderr into err. */
static int run_topdown(const char *const *args, char *err, size_t errlen)
{
	const char *argv[16] = { "topdown" };
	int fds[2], status, n = 1;
	ssize_t got;
	pid_t pid;

	while (*args && n < 15)
		argv[n++] = *args++;
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null_fd = open("/dev/null", O_RDWR);

		dup2(null_fd, STDIN_FILENO);
		dup2(null_fd, STDOUT_FILENO);
		dup2(fds[1], STDERR_FILENO);
		execv(topdown_path(), (char **)argv);
		_exit(127);
	}
	close(fds[1]);
	got = read(fds[0], err, errlen - 1);
	err[got > 0 ? got : 0] = '\0';
	close(fds[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_command_line(void **state)
{
	char err[1024];

	(void)state;
	assert_int_equal(run_topdown((const char *const[]){ "mcp-serve", "--max-duration", "forever", NULL },
				     err, sizeof(err)), 2);
	assert_non_null(strstr(err, "forever"));
	assert_int_equal(strchr(err, '\n') - err + 1, (long)strlen(err)); /* one line */
	assert_int_equal(run_topdown((const char *const[]){ "mcp-serve", "--page-size", "0", NULL },
				     err, sizeof(err)), 2);
	assert_non_null(strstr(err, "--page-size"));
	assert_int_equal(run_topdown((const char *const[]){ "mcp-serve", "--request-timeout", "0s", NULL },
				     err, sizeof(err)), 2);
	assert_non_null(strstr(err, "bad duration '0s' for --request-timeout: it is shorter than 1ms"));
	assert_int_equal(run_topdown((const char *const[]){ "mcp-serve", "serve", NULL }, err, sizeof(err)), 2);
	assert_non_null(strstr(err, "unexpected argument 'serve'"));
	assert_int_equal(run_topdown((const char *const[]){ "mcp-serve", "--help", NULL }, err, sizeof(err)), 0);
	/* stdin at its end at once: a clean exit with nothing said */
	assert_int_equal(run_topdown((const char *const[]){ "mcp-serve", "--db", "/nonexistent/x.db", NULL },
				     err, sizeof(err)), 0);
	assert_string_equal(err, "");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_malformed_messages, setup_initialized, teardown_session),
		cmocka_unit_test_setup_teardown(test_id_types, setup_initialized, teardown_session),
		cmocka_unit_test_setup_teardown(test_notifications_are_never_answered, setup_initialized, teardown_session),
		cmocka_unit_test_setup_teardown(test_unknown_method, setup_initialized, teardown_session),
		cmocka_unit_test_setup_teardown(test_framing, setup_initialized, teardown_session),
		cmocka_unit_test_setup_teardown(test_before_initialize, setup_fresh, teardown_session),
		cmocka_unit_test(test_version_negotiation),
		cmocka_unit_test_setup_teardown(test_logging, setup_initialized, teardown_session),
		cmocka_unit_test_setup_teardown(test_tools_list, setup_initialized, teardown_session),
		cmocka_unit_test_setup_teardown(test_tool_descriptions, setup_initialized, teardown_session),
		cmocka_unit_test(test_pagination),
		cmocka_unit_test_setup_teardown(test_tool_call_errors, setup_initialized, teardown_session),
		cmocka_unit_test_setup_teardown(test_collect_refused, setup_initialized, teardown_session),
		ON_BOTH(test_tool_answers),
		ON_BOTH(test_pooled_funnel),
		ON_BOTH(test_answers_stay_small),
		ON_BOTH(test_request_time_limit),
		ON_BOTH(test_resources),
		ON_BOTH(test_list_labels),
		ON_BOTH(test_labels_stay_small),
		ON_BOTH(test_label_completion),
		cmocka_unit_test_setup_teardown(test_resources_without_store, setup_initialized, teardown_session),
		cmocka_unit_test_setup_teardown(test_prompts, setup_initialized, teardown_session),
		cmocka_unit_test_setup_teardown(test_completion_errors, setup_initialized, teardown_session),
		cmocka_unit_test_setup_teardown(test_process_serves_and_exits, setup_fresh, teardown_session),
		cmocka_unit_test_setup_teardown(test_process_stops_on_sigterm, setup_fresh, teardown_session),
		cmocka_unit_test(test_command_line),
	};

	(void)argc;
	return run_on_backends("mcp", tests, sizeof(tests) / sizeof(tests[0]), argv[0]);
}
