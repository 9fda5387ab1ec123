// SPDX-License-Identifier: BSD-3-Clause
/*
 * MCP over Streamable HTTP (mcp/streamable.c): the checks alone, the
 * request handler as a function (no sockets), then the server on a free
 * port spoken to with curl and raw sockets: sessions, Origin, the token,
 * argument errors as tool errors (isError) beside JSON-RPC errors,
 * limits, HTTP/1.0, a streamed collection and a client leaving it, a
 * slowloris from another address, sessions per client, and the binary's
 * own limits and drain on SIGTERM.
 *
 * collect_topdown runs a stand-in collector (a shell script) so that no
 * BPF is needed: it sleeps $TD_FAKE_SLEEP seconds and prints a run.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backends.h"
#include "httpd.h"
#include "jsonrpc.h"
#include "slowloris.h"
#include "streamable.h"

static const char init_body[] =
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
	"\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
static const char ping_body[] = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}";

static char dir[] = "/tmp/td-mcp-http-XXXXXX";
static char fake[128], db[128];

static int setup(void **state)
{
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(fake, sizeof(fake), "%s/fake-topdown", dir);
	snprintf(db, sizeof(db), "%s/runs.db", dir);
	f = fopen(fake, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\necho $$ > %s/collector.pid\nsleep ${TD_FAKE_SLEEP:-1}\n"
		"echo '{\"run_id\":\"r1\",\"process\":\"fake\",\"duration_s\":1.0,\"partial\":false,"
		"\"dropped\":0,\"threads\":[],\"intervals\":1,\"tma\":{\"unavailable\":\"a stand-in\"}}'\n",
		dir);
	fclose(f);
	assert_int_equal(chmod(fake, 0755), 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[160];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static struct td_mcp_http *keeper(const char *listen, const char *token, unsigned max_sessions,
				  uint64_t idle_ns)
{
	struct td_mcp_http_options o = {
		.mcp = { .db = db, .allow_collect = true, .topdown_path = fake },
		.listen = listen, .token = token, .max_sessions = max_sessions,
		.session_idle_ns = idle_ns,
	};
	char err[256] = "";
	struct td_mcp_http *h = td_mcp_http_new(&o, err, sizeof(err));

	if (!h)
		fail_msg("%s: %s", listen, err);
	return h;
}

/* ---- the checks alone ---- */

static void test_origin_and_token_checks(void **state)
{
	(void)state;
	assert_true(td_mcp_http_origin_allowed(NULL, false, "127.0.0.1", 8000));
	assert_true(td_mcp_http_origin_allowed("http://localhost:8000", false, "127.0.0.1", 8000));
	assert_true(td_mcp_http_origin_allowed("http://127.0.0.1:8000/", false, "127.0.0.1", 8000));
	assert_true(td_mcp_http_origin_allowed("http://127.0.0.1", false, "127.0.0.1", 80));
	assert_true(td_mcp_http_origin_allowed("HTTPS://[::1]", true, "127.0.0.1", 443));
	assert_true(td_mcp_http_origin_allowed("https://[::1]:8000", true, "127.0.0.1", 8000));
	assert_true(td_mcp_http_origin_allowed("https://box.example:8000", true, "box.example", 8000));
	/* another port of this host is another origin: another server's page */
	assert_false(td_mcp_http_origin_allowed("http://localhost:6274", false, "127.0.0.1", 8000));
	assert_false(td_mcp_http_origin_allowed("http://127.0.0.1", false, "127.0.0.1", 8000));
	assert_false(td_mcp_http_origin_allowed("http://127.0.0.1:80000", false, "127.0.0.1", 8000));
	assert_false(td_mcp_http_origin_allowed("http://127.0.0.1:8000x", false, "127.0.0.1", 8000));
	assert_false(td_mcp_http_origin_allowed("http://127.0.0.1:", false, "127.0.0.1", 8000));
	/* and another scheme */
	assert_false(td_mcp_http_origin_allowed("https://127.0.0.1:8000", false, "127.0.0.1", 8000));
	assert_false(td_mcp_http_origin_allowed("http://127.0.0.1:8000", true, "127.0.0.1", 8000));
	assert_false(td_mcp_http_origin_allowed("ws://127.0.0.1:8000", false, "127.0.0.1", 8000));
	assert_false(td_mcp_http_origin_allowed("https://evil.example:8000", true, "127.0.0.1", 8000));
	assert_false(td_mcp_http_origin_allowed("http://127.0.0.1.evil.example:8000", false, "127.0.0.1", 8000));
	assert_false(td_mcp_http_origin_allowed("http://127.0.0.1@evil.example:8000", false, "127.0.0.1", 8000));
	assert_false(td_mcp_http_origin_allowed("null", false, "127.0.0.1", 8000));
	assert_false(td_mcp_http_origin_allowed("http://", false, "127.0.0.1", 80));
	assert_false(td_mcp_http_origin_allowed("http://[::1", false, "127.0.0.1", 80));

	assert_true(td_mcp_http_token_matches("Bearer 0123456789abcdef", "0123456789abcdef"));
	assert_true(td_mcp_http_token_matches("bearer  0123456789abcdef", "0123456789abcdef"));
	assert_false(td_mcp_http_token_matches(NULL, "0123456789abcdef"));
	assert_false(td_mcp_http_token_matches("Bearer ", "0123456789abcdef"));
	assert_false(td_mcp_http_token_matches("Bearer 0123456789abcde", "0123456789abcdef"));
	assert_false(td_mcp_http_token_matches("Bearer 0123456789abcdefX", "0123456789abcdef"));
	assert_false(td_mcp_http_token_matches("Bearer 0123456789abcdeF", "0123456789abcdef"));
	assert_false(td_mcp_http_token_matches("Basic 0123456789abcdef", "0123456789abcdef"));

	assert_true(td_httpd_host_is_loopback("localhost"));
	assert_true(td_httpd_host_is_loopback("::1"));
	assert_false(td_httpd_host_is_loopback("127.0.0.2"));
	assert_false(td_httpd_host_is_loopback("0.0.0.0"));
}

static void test_listen_rules(void **state)
{
	struct td_mcp_http_options o = { .listen = "0.0.0.0:8000" };
	char err[256] = "", path[160], *token;
	FILE *f;

	(void)state;
	assert_null(td_mcp_http_new(&o, err, sizeof(err)));
	assert_non_null(strstr(err, "--listen 0.0.0.0:8000 is not loopback: give --token-file FILE"));
	o.listen = "127.0.0.1";
	assert_null(td_mcp_http_new(&o, err, sizeof(err)));
	assert_non_null(strstr(err, "no port in --listen '127.0.0.1'"));

	snprintf(path, sizeof(path), "%s/token", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("0123456789abcdef0123\n", f);
	fclose(f);
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(td_mcp_http_read_token(path, "--token-file", &token, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "is open to group or others (mode 0644): chmod 600 it"));
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(td_mcp_http_read_token(path, "--token-file", &token, err, sizeof(err)), 0);
	assert_string_equal(token, "0123456789abcdef0123");
	free(token);
	f = fopen(path, "w");
	fputs("short\n", f);
	fclose(f);
	assert_int_equal(td_mcp_http_read_token(path, "--token-file", &token, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "must hold one token of 16 to"));
	assert_true(td_mcp_http_read_token("/nonexistent", "--token-file", &token, err, sizeof(err)) < 0);
}

/* ---- the handler, called directly ---- */

struct exchange {
	struct td_httpd_header headers[8];
	size_t n;
	struct td_httpd_response resp;
};

/* The connection call() says the requests come over: the client's address
 * and the server's port (as user/http fills them in). */
static const char *call_peer = "127.0.0.1";
static int call_port;

/* method path body, then header name/value pairs up to NULL. */
static struct td_httpd_response *call(struct td_mcp_http *h, struct exchange *x, const char *method,
				      const char *body, ...)
{
	struct td_httpd_request req = { .method = method, .path = "/mcp", .version = "HTTP/1.1",
					.body = body ? body : "", .body_len = body ? strlen(body) : 0,
					.peer = call_peer, .port = call_port };
	const char *name;
	va_list ap;

	td_httpd_response_release(&x->resp);
	memset(x, 0, sizeof(*x));
	va_start(ap, body);
	while ((name = va_arg(ap, const char *)) && x->n < 8) {
		x->headers[x->n].name = name;
		x->headers[x->n++].value = va_arg(ap, const char *);
	}
	va_end(ap);
	req.headers = x->headers;
	req.nr_headers = x->n;
	td_mcp_http_handle(h, &req, &x->resp);
	return &x->resp;
}

static const char *resp_header(const struct td_httpd_response *r, const char *name)
{
	for (size_t i = 0; i < r->nr_headers; i++)
		if (!strcasecmp(r->headers[i].name, name))
			return r->headers[i].value;
	return NULL;
}

#define JSON "Content-Type", "application/json"

static void initialize(struct td_mcp_http *h, char id[40])
{
	struct exchange x = { 0 };
	struct td_httpd_response *r = call(h, &x, "POST", init_body, JSON, NULL);

	assert_int_equal(r->status, 200);
	assert_string_equal(r->content_type, "application/json");
	assert_non_null(strstr(r->body, "\"protocolVersion\":\"2025-06-18\""));
	assert_non_null(resp_header(r, "Mcp-Session-Id"));
	assert_int_equal(strlen(resp_header(r, "Mcp-Session-Id")), 32);
	snprintf(id, 40, "%s", resp_header(r, "Mcp-Session-Id"));
	td_httpd_response_release(r);
}

static void test_handler_sessions(void **state)
{
	struct td_mcp_http *h = keeper("127.0.0.1:0", NULL, 2, 0);
	struct exchange x = { 0 };
	struct td_httpd_response *r;
	char id[40], other[40];

	(void)state;
	initialize(h, id);
	call_peer = "127.0.0.2"; /* each address may hold one of the two */
	initialize(h, other);
	call_peer = "127.0.0.1";
	assert_string_not_equal(id, other);
	r = call(h, &x, "POST", ping_body, JSON, "Mcp-Session-Id", id, NULL);
	assert_int_equal(r->status, 200);
	assert_string_equal(r->body, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}");
	/* a notification: 202, nothing said */
	r = call(h, &x, "POST", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
		 JSON, "Mcp-Session-Id", id, NULL);
	assert_int_equal(r->status, 202);
	assert_null(r->body);
	/* no session, an unknown one, one ended */
	r = call(h, &x, "POST", ping_body, JSON, NULL);
	assert_int_equal(r->status, 400);
	assert_non_null(strstr(r->body, "no Mcp-Session-Id header"));
	r = call(h, &x, "POST", ping_body, JSON, "Mcp-Session-Id", "0123", NULL);
	assert_int_equal(r->status, 404);
	r = call(h, &x, "DELETE", NULL, "Mcp-Session-Id", id, NULL);
	assert_int_equal(r->status, 204);
	r = call(h, &x, "POST", ping_body, JSON, "Mcp-Session-Id", id, NULL);
	assert_int_equal(r->status, 404);
	r = call(h, &x, "DELETE", NULL, "Mcp-Session-Id", id, NULL);
	assert_int_equal(r->status, 404);
	/* the other session is untouched, and a slot is free again */
	r = call(h, &x, "POST", ping_body, JSON, "Mcp-Session-Id", other, NULL);
	assert_int_equal(r->status, 200);
	/* a failed initialize leaves no session behind */
	r = call(h, &x, "POST", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}",
		 JSON, NULL);
	assert_int_equal(r->status, 200);
	assert_non_null(strstr(r->body, "\"error\""));
	assert_null(resp_header(r, "Mcp-Session-Id"));
	td_httpd_response_release(r);
	initialize(h, id);
	td_mcp_http_free(h);
}

static void test_handler_refusals(void **state)
{
	struct td_mcp_http *h = keeper("127.0.0.1:0", NULL, 0, 0);
	struct exchange x = { 0 };
	struct td_httpd_response *r;
	char id[40];

	(void)state;
	initialize(h, id);
	r = call(h, &x, "POST", ping_body, "Content-Type", "text/plain", "Mcp-Session-Id", id, NULL);
	assert_int_equal(r->status, 415);
	r = call(h, &x, "POST", ping_body, JSON, "Accept", "text/html", "Mcp-Session-Id", id, NULL);
	assert_int_equal(r->status, 406);
	r = call(h, &x, "POST", ping_body, JSON, "Accept", "*/*", "Mcp-Session-Id", id, NULL);
	assert_int_equal(r->status, 200);
	r = call(h, &x, "POST", "{\"jsonrpc\":", JSON, "Mcp-Session-Id", id, NULL);
	assert_int_equal(r->status, 400);
	assert_non_null(strstr(r->body, "\"code\":-32700"));
	r = call(h, &x, "POST", "[]", JSON, "Mcp-Session-Id", id, NULL);
	assert_int_equal(r->status, 400);
	assert_non_null(strstr(r->body, "\"code\":-32600"));
	r = call(h, &x, "POST", ping_body, "Content-Type", "application/json; charset=utf-8",
		 "Origin", "https://evil.example", "Mcp-Session-Id", id, NULL);
	assert_int_equal(r->status, 403);
	r = call(h, &x, "POST", ping_body, JSON, "MCP-Protocol-Version", "2099-01-01",
		 "Mcp-Session-Id", id, NULL);
	assert_int_equal(r->status, 400);
	assert_non_null(strstr(r->body, "unsupported MCP-Protocol-Version"));
	r = call(h, &x, "POST", ping_body, JSON, "MCP-Protocol-Version", "2025-03-26",
		 "Mcp-Session-Id", id, NULL);
	assert_int_equal(r->status, 200);
	r = call(h, &x, "GET", NULL, "Accept", "text/event-stream", "Mcp-Session-Id", id, NULL);
	assert_int_equal(r->status, 405);
	assert_string_equal(resp_header(r, "Allow"), "POST, DELETE");
	r = call(h, &x, "PUT", NULL, NULL);
	assert_int_equal(r->status, 405);
	td_httpd_response_release(r);
	td_mcp_http_free(h);
}

/* Notifications ride along, as SSE, when the client takes a stream. */
static void test_handler_sse_and_logs(void **state)
{
	struct td_mcp_http *h = keeper("127.0.0.1:0", NULL, 0, 0);
	struct exchange x = { 0 };
	struct td_httpd_response *r;
	char id[40];

	(void)state;
	initialize(h, id);
	r = call(h, &x, "POST", "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"logging/setLevel\","
		 "\"params\":{\"level\":\"debug\"}}", JSON, "Mcp-Session-Id", id, NULL);
	assert_int_equal(r->status, 200);
	r = call(h, &x, "POST", ping_body, JSON, "Accept", "application/json, text/event-stream",
		 "Mcp-Session-Id", id, NULL);
	assert_int_equal(r->status, 200);
	assert_string_equal(r->content_type, "text/event-stream");
	/* the log line first, the answer last */
	assert_non_null(strstr(r->body, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":"
			       "\"notifications/message\""));
	assert_non_null(strstr(r->body, "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n"));
	assert_true(strstr(r->body, "notifications/message") < strstr(r->body, "\"id\":2"));
	/* without a stream, just the answer */
	r = call(h, &x, "POST", ping_body, JSON, "Accept", "application/json", "Mcp-Session-Id", id,
		 NULL);
	assert_string_equal(r->content_type, "application/json");
	assert_string_equal(r->body, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}");
	td_httpd_response_release(r);
	td_mcp_http_free(h);
}

/* One POST in the session: 200 and a JSON body holding want; then ping still answers. */
static void expect_answer(struct td_mcp_http *h, const char *id, const char *body,
			  const char *want)
{
	struct exchange x = { 0 };
	struct td_httpd_response *r = call(h, &x, "POST", body, JSON, "Mcp-Session-Id", id, NULL);

	if (r->status != 200 || !r->body || !strstr(r->body, want))
		fail_msg("%s: %d %s, not 200 with %s", body, r->status, r->body ? r->body : "", want);
	assert_string_equal(r->content_type, "application/json");
	r = call(h, &x, "POST", ping_body, JSON, "Mcp-Session-Id", id, NULL);
	assert_int_equal(r->status, 200);
	assert_string_equal(r->body, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}");
	td_httpd_response_release(r);
}

#define TOOL_CALL(id, tool, args) \
	"{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"tools/call\",\"params\":{\"name\":\"" \
	tool "\",\"arguments\":" args "}}"

/*
 * Over HTTP as over stdio: a wrong argument is the model's to fix, so it
 * is a tool result with isError (HTTP 200); an unknown tool or method,
 * and a request before initialize, stay JSON-RPC errors. The session
 * answers a ping after each.
 */
static void test_handler_tool_errors(void **state)
{
	struct td_mcp_http *h = keeper("127.0.0.1:0", NULL, 0, 0);
	struct exchange x = { 0 };
	struct td_httpd_response *r;
	char id[40];

	(void)state;
	/* before initialize: no session to speak in, a JSON-RPC error with HTTP 400 */
	r = call(h, &x, "POST", TOOL_CALL(5, "explain_metric", "{\"name\":\"DRAM_Bound\"}"), JSON,
		 NULL);
	assert_int_equal(r->status, 400);
	assert_string_equal(r->content_type, "application/json");
	assert_non_null(strstr(r->body, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,"));
	td_httpd_response_release(r);
	initialize(h, id);
	/* a missing argument, a wrong type, one out of range, one unknown: tool errors */
	expect_answer(h, id, TOOL_CALL(6, "get_run_tree", "{}"), "\"isError\":true");
	expect_answer(h, id, TOOL_CALL(6, "get_run_tree", "{}"), "run_id");
	expect_answer(h, id, TOOL_CALL(7, "explain_metric", "{\"name\":5}"), "\"isError\":true");
	expect_answer(h, id, TOOL_CALL(8, "query_bottlenecks", "{\"limit\":\"ten\"}"),
		      "\"isError\":true");
	expect_answer(h, id, TOOL_CALL(9, "query_bottlenecks", "{\"max_level\":9}"),
		      "\"isError\":true");
	expect_answer(h, id, TOOL_CALL(10, "explain_metric", "{\"name\":\"x\",\"nope\":1}"),
		      "\"isError\":true");
	/* the same tool, rightly called, is no error */
	expect_answer(h, id, TOOL_CALL(11, "explain_metric", "{\"name\":\"DRAM_Bound\"}"),
		      "\"isError\":false");
	/* an unknown tool, an unknown method: JSON-RPC errors carrying the request's id */
	expect_answer(h, id, TOOL_CALL(12, "no_such_tool", "{}"),
		      "{\"jsonrpc\":\"2.0\",\"id\":12,\"error\":{\"code\":-32602,");
	expect_answer(h, id, "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"no/such\"}",
		      "{\"jsonrpc\":\"2.0\",\"id\":13,\"error\":{\"code\":-32601,");
	/* arguments that are no object at all: the request is malformed */
	expect_answer(h, id, TOOL_CALL(14, "explain_metric", "[1]"),
		      "{\"jsonrpc\":\"2.0\",\"id\":14,\"error\":{\"code\":-32602,");
	td_mcp_http_free(h);
}

/*
 * The time limit per request: a call whose store work runs past it gets
 * HTTP 504 with the JSON-RPC error saying why (as JSON, even to a client
 * that takes streams), and the session goes on.
 */
static void test_handler_time_limit(void **state)
{
	struct td_mcp_http_options o = {
		.mcp = { .db = db, .request_timeout_ns = 1 }, .listen = "127.0.0.1:0",
	};
	struct backend b = { .cfg.path = db };
	struct exchange x = { 0 };
	struct td_httpd_response *r;
	static const char *const sqlite_files[] = { "", "-wal", "-shm" };
	struct td_mcp_http *h;
	char id[40], err[256], path[160];

	(void)state;
	b.store = td_store_open(&b.cfg, b.err, ERRLEN);
	if (!b.store)
		fail_msg("%s", b.err);
	store_many_runs(&b, 200);
	td_store_close(b.store);
	h = td_mcp_http_new(&o, err, sizeof(err));
	assert_non_null(h);
	initialize(h, id);
	for (int sse = 0; sse < 2; sse++) {
		r = call(h, &x, "POST", TOOL_CALL(3, "query_bottlenecks", "{}"), JSON,
			 "Mcp-Session-Id", id, "Accept",
			 sse ? "application/json, text/event-stream" : "application/json", NULL);
		assert_int_equal(r->status, 504);
		assert_string_equal(r->content_type, "application/json");
		assert_non_null(strstr(r->body, "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32001,"));
		assert_non_null(strstr(r->body, "time limit"));
	}
	/* the session lives on: what reads nothing of the store is answered */
	expect_answer(h, id, TOOL_CALL(4, "explain_metric", "{\"name\":\"DRAM_Bound\"}"),
		      "\"isError\":false");
	td_httpd_response_release(&x.resp);
	td_mcp_http_free(h);
	for (size_t i = 0; i < sizeof(sqlite_files) / sizeof(sqlite_files[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", db, sqlite_files[i]);
		unlink(path); /* the later tests start from no store */
	}
}

static void test_handler_token_and_expiry(void **state)
{
	static const char token[] = "0123456789abcdef0123";
	struct td_mcp_http *h = keeper("127.0.0.2:0", token, 0, 50 * 1000000ull);
	struct exchange x = { 0 };
	struct td_httpd_response *r;
	char id[40];

	(void)state;
	r = call(h, &x, "POST", init_body, JSON, NULL);
	assert_int_equal(r->status, 401);
	assert_non_null(strstr(resp_header(r, "WWW-Authenticate"), "Bearer"));
	r = call(h, &x, "POST", init_body, JSON, "Authorization", "Bearer 0123456789abcdef012X", NULL);
	assert_int_equal(r->status, 401);
	r = call(h, &x, "POST", init_body, JSON, "Authorization", "Bearer 0123456789abcdef0123", NULL);
	assert_int_equal(r->status, 200);
	snprintf(id, sizeof(id), "%s", resp_header(r, "Mcp-Session-Id"));
	/* the listen host itself may be the Origin, on the server's port */
	call_port = 8000;
	r = call(h, &x, "POST", ping_body, JSON, "Authorization", "Bearer 0123456789abcdef0123",
		 "Origin", "http://127.0.0.2:8000", "Mcp-Session-Id", id, NULL);
	assert_int_equal(r->status, 200);
	r = call(h, &x, "POST", ping_body, JSON, "Authorization", "Bearer 0123456789abcdef0123",
		 "Origin", "http://127.0.0.2:8001", "Mcp-Session-Id", id, NULL);
	assert_int_equal(r->status, 403);
	assert_non_null(strstr(r->body, "scheme, host and port"));
	call_port = 0;
	usleep(120000);
	r = call(h, &x, "POST", ping_body, JSON, "Authorization", "Bearer 0123456789abcdef0123",
		 "Mcp-Session-Id", id, NULL);
	assert_int_equal(r->status, 404);
	td_httpd_response_release(r);
	td_mcp_http_free(h);
}

/* A ping in session id as call_peer: the status. */
static int ping(struct td_mcp_http *h, const char *id)
{
	struct exchange x = { 0 };
	int status = call(h, &x, "POST", ping_body, JSON, "Mcp-Session-Id", id, NULL)->status;

	td_httpd_response_release(&x.resp);
	return status;
}

/*
 * Sessions per client: one address holds a quarter of --max-sessions (2
 * of 8 here); its next initialize ends its own longest idle session, not
 * another client's. A full table ends the longest idle session of anyone
 * instead of refusing newcomers until sessions expire; 503 only when
 * every session is in use.
 */
static void test_handler_sessions_per_client(void **state)
{
	static const char *const others[] = { "127.0.0.3", "127.0.0.3", "127.0.0.4", "127.0.0.4",
					       "127.0.0.5" };
	struct td_mcp_http *h = keeper("127.0.0.1:0", NULL, 8, 0);
	struct exchange x = { 0 };
	struct td_httpd_response *r;
	char a1[40], a2[40], a3[40], good[40], id[40], newest[40];

	(void)state;
	call_peer = "127.0.0.2";
	initialize(h, a1);
	initialize(h, a2);
	assert_int_equal(ping(h, a1), 200); /* a2 is now its longest idle */
	initialize(h, a3);
	assert_int_equal(ping(h, a2), 404);
	assert_int_equal(ping(h, a1), 200);
	assert_int_equal(ping(h, a3), 200);
	/* however many it starts, another address still gets one */
	for (int i = 0; i < 20; i++)
		initialize(h, id);
	call_peer = "127.0.0.1";
	initialize(h, good);
	/* the table fills (2 + 1 + 5 = 8); the next ends the longest idle */
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		call_peer = others[i];
		initialize(h, id);
	}
	call_peer = "127.0.0.1";
	assert_int_equal(ping(h, good), 200);
	call_peer = "127.0.0.6";
	initialize(h, newest);
	assert_int_equal(ping(h, newest), 200);
	call_peer = "127.0.0.1";
	assert_int_equal(ping(h, good), 200); /* used lately: kept */
	td_mcp_http_free(h);

	/* every session in use (a collection streaming): the newcomer gets 503 */
	h = keeper("127.0.0.1:0", NULL, 1, 0);
	initialize(h, id);
	setenv("TD_FAKE_SLEEP", "30", 1);
	r = call(h, &x, "POST", TOOL_CALL(7, "collect_topdown", "{\"pid\":\"1\",\"duration\":\"30s\"}"),
		 JSON, "Accept", "application/json, text/event-stream", "Mcp-Session-Id", id, NULL);
	assert_int_equal(r->status, 200);
	assert_non_null(r->read); /* streaming: the session is held */
	{
		struct exchange y = { 0 };

		call_peer = "127.0.0.2";
		assert_int_equal(call(h, &y, "POST", init_body, JSON, NULL)->status, 503);
		assert_non_null(strstr(y.resp.body, "every one busy"));
		td_httpd_response_release(&y.resp);
		call_peer = "127.0.0.1";
	}
	td_httpd_response_release(&x.resp); /* the stream ends: its collection is cancelled */
	setenv("TD_FAKE_SLEEP", "0", 1);
	call_peer = "127.0.0.2";
	initialize(h, newest); /* the idle one makes room now */
	call_peer = "127.0.0.1";
	assert_int_equal(ping(h, id), 404);
	td_mcp_http_free(h);

	/* with a token every client is the token's: the whole table is theirs,
	 * and a full one ends the longest idle session */
	h = keeper("127.0.0.1:0", "0123456789abcdef0123", 2, 0);
	for (int i = 0; i < 3; i++) {
		r = call(h, &x, "POST", init_body, JSON, "Authorization", "Bearer 0123456789abcdef0123",
			 NULL);
		assert_int_equal(r->status, 200);
		snprintf(i == 0 ? a1 : i == 1 ? a2 : a3, 40, "%s", resp_header(r, "Mcp-Session-Id"));
	}
	for (int i = 0; i < 3; i++) {
		r = call(h, &x, "POST", ping_body, JSON, "Authorization", "Bearer 0123456789abcdef0123",
			 "Mcp-Session-Id", i == 0 ? a1 : i == 1 ? a2 : a3, NULL);
		assert_int_equal(r->status, i == 0 ? 404 : 200);
	}
	td_httpd_response_release(r);
	td_mcp_http_free(h);
}

/* ---- over the network ---- */

struct served {
	struct td_mcp_http *h;
	struct td_httpd *http;
	int port;
	char url[TD_HTTPD_HOST_MAX + 32];
};

/* Serves s->h, made already, on listen. */
static void serve_keeper(struct served *s, const char *listen)
{
	struct td_httpd_options o = {
		.listen = listen, .option = "--listen", .ephemeral_port = true, .max_body = 65536,
		.max_head = 16384, .max_connections = 16, .timeout_s = 10,
		.handler = td_mcp_http_handle,
	};
	char err[256] = "", host[TD_HTTPD_HOST_MAX];
	long port;

	o.ctx = s->h;
	s->http = td_httpd_start(&o, err, sizeof(err));
	if (!s->http)
		fail_msg("%s: %s", listen, err);
	s->port = td_httpd_port(s->http);
	assert_int_equal(td_httpd_parse_listen(listen, "--listen", true, host, &port, err,
					       sizeof(err)), 0);
	snprintf(s->url, sizeof(s->url), "http://%s:%d/mcp", host, s->port);
}

static void serve(struct served *s, const char *listen, const char *token)
{
	s->h = keeper(listen, token, 0, 0);
	serve_keeper(s, listen);
}

static void unserve(struct served *s)
{
	td_httpd_stop(s->http);
	td_mcp_http_free(s->h);
}

/* curl -s -i ARGS URL: the whole response, head and body (malloc'd). */
static char *curl(const struct served *s, const char *fmt, ...)
{
	char args[1024], cmd[1400], *out = NULL;
	size_t cap = 0, len;
	FILE *p;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "curl -s -i --max-time 20 %s '%s'", args, s->url);
	p = popen(cmd, "r");
	assert_non_null(p);
	len = getdelim(&out, &cap, '\0', p);
	pclose(p);
	if ((ssize_t)len < 0) {
		free(out);
		out = strdup("");
	}
	return out;
}

static int status_of(const char *response)
{
	int status = 0;

	sscanf(response, "HTTP/%*s %d", &status);
	return status;
}

static void expect(const struct served *s, int status, const char *fmt, ...)
{
	char args[1024], *out;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	out = curl(s, "%s", args);
	if (status_of(out) != status)
		fail_msg("curl %s: %d, not %d:\n%s", args, status_of(out), status, out);
	free(out);
}

static void net_initialize(const struct served *s, const char *auth, char id[40])
{
	char *out = curl(s, "-H 'Content-Type: application/json' %s -d '%s'", auth, init_body);
	const char *h = strcasestr(out, "\r\nMcp-Session-Id: ");

	assert_int_equal(status_of(out), 200);
	assert_non_null(h);
	snprintf(id, 40, "%.32s", h + 18);
	free(out);
}

static void test_network(void **state)
{
	struct served s;
	char id[40], big[80000], *out;
	FILE *f;

	(void)state;
	serve(&s, "127.0.0.1:0", NULL);
	net_initialize(&s, "", id);
	expect(&s, 200, "-H 'Content-Type: application/json' -H 'Mcp-Session-Id: %s' -d '%s'", id,
	       ping_body);
	/* a missing argument over the socket too: a tool error, HTTP 200, the session goes on */
	out = curl(&s, "-H 'Content-Type: application/json' -H 'Mcp-Session-Id: %s' -d '%s'", id,
		   TOOL_CALL(3, "get_run_tree", "{}"));
	assert_int_equal(status_of(out), 200);
	assert_non_null(strstr(out, "\"id\":3,\"result\":"));
	assert_non_null(strstr(out, "\"isError\":true"));
	free(out);
	expect(&s, 200, "-H 'Content-Type: application/json' -H 'Mcp-Session-Id: %s' -d '%s'", id,
	       ping_body);
	expect(&s, 400, "-H 'Content-Type: application/json' -d '%s'", ping_body);
	expect(&s, 404, "-H 'Content-Type: application/json' -H 'Mcp-Session-Id: nope' -d '%s'",
	       ping_body);
	expect(&s, 403, "-H 'Content-Type: application/json' -H 'Origin: http://evil.example' "
	       "-H 'Mcp-Session-Id: %s' -d '%s'", id, ping_body);
	expect(&s, 415, "-H 'Content-Type: text/plain' -H 'Mcp-Session-Id: %s' -d '%s'", id,
	       ping_body);
	out = curl(&s, "-H 'Content-Type: application/json' -H 'Mcp-Session-Id: %s' -d '{nope'", id);
	assert_int_equal(status_of(out), 400);
	assert_non_null(strstr(out, "\"code\":-32700"));
	free(out);
	/* over the body limit (64 KiB here): 413, whether its length is told or not */
	memset(big, ' ', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	snprintf(big + sizeof(big) - 300, 300, "%s", ping_body);
	f = fopen("/tmp/td-mcp-http-big.json", "w");
	assert_non_null(f);
	fputs(big, f);
	fclose(f);
	expect(&s, 413, "-H 'Content-Type: application/json' -H 'Mcp-Session-Id: %s' "
	       "--data-binary @/tmp/td-mcp-http-big.json", id);
	expect(&s, 413, "-H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' "
	       "-H 'Mcp-Session-Id: %s' --data-binary @/tmp/td-mcp-http-big.json", id);
	unlink("/tmp/td-mcp-http-big.json");
	/* HTTP/1.0 */
	out = curl(&s, "-0 -H 'Content-Type: application/json' -H 'Mcp-Session-Id: %s' -d '%s'",
		   id, ping_body);
	assert_int_equal(status_of(out), 200);
	assert_non_null(strstr(out, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}"));
	free(out);
	/* DELETE, then the session is gone */
	expect(&s, 204, "-X DELETE -H 'Mcp-Session-Id: %s'", id);
	expect(&s, 404, "-H 'Content-Type: application/json' -H 'Mcp-Session-Id: %s' -d '%s'", id,
	       ping_body);
	expect(&s, 405, "-X GET -H 'Accept: text/event-stream'");
	unserve(&s);
}

/* Not loopback (127.0.0.2 counts as not): the token is asked for. */
static void test_network_token(void **state)
{
	struct served s;
	char id[40];

	(void)state;
	serve(&s, "127.0.0.2:0", "0123456789abcdef0123");
	expect(&s, 401, "-H 'Content-Type: application/json' -d '%s'", init_body);
	expect(&s, 401, "-H 'Authorization: Bearer wrong' -H 'Content-Type: application/json' "
	       "-d '%s'", init_body);
	net_initialize(&s, "-H 'Authorization: Bearer 0123456789abcdef0123'", id);
	unserve(&s);
}

static long long ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/*
 * mcp-serve's own limits (td_mcp_http_listen) against 500 connections
 * from 127.0.0.2 that never finish a request: a client on 127.0.0.1
 * starts a session and is answered within a second all along.
 */
static void test_network_slowloris(void **state)
{
	struct td_httpd_options o = { .option = "--listen", .ephemeral_port = true };
	struct slowloris *attack = malloc(sizeof(*attack));
	char err[256] = "", id[40];
	const char *why;
	size_t reached, held = 0;
	long long t0;
	struct served s;

	(void)state;
	assert_non_null(attack);
	if ((why = slowloris_cannot_run())) {
		free(attack);
		print_message("SKIP: %s\n", why);
		skip();
	}
	s.h = keeper("127.0.0.1:0", NULL, 0, 0);
	s.http = td_mcp_http_listen(s.h, &o, err, sizeof(err));
	if (!s.http)
		fail_msg("%s", err);
	s.port = td_httpd_port(s.http);
	snprintf(s.url, sizeof(s.url), "http://127.0.0.1:%d/mcp", s.port);
	reached = slowloris_open(attack, s.port, SLOWLORIS_MAX,
				 "POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n");
	assert_true(reached > 0);
	for (int round = 0; round < 4; round++) {
		held = slowloris_trickle(attack);
		t0 = ms_now();
		net_initialize(&s, "", id);
		expect(&s, 200, "-H 'Content-Type: application/json' -H 'Mcp-Session-Id: %s' -d '%s'",
		       id, ping_body);
		if (ms_now() - t0 >= 1000)
			fail_msg("round %d: a session and a ping took %lld ms", round, ms_now() - t0);
		usleep(300000);
	}
	print_message("  slowloris: %zu of %d connections reached the server, %zu held\n", reached,
		      SLOWLORIS_MAX, held);
	assert_true(held > 0);
	slowloris_close(attack);
	free(attack);
	unserve(&s);
}

/* Sessions are counted per address over the network too: curl from
 * 127.0.0.2 is another client than curl from 127.0.0.1. */
static void test_network_sessions_per_address(void **state)
{
	struct served s;
	char mine[40], theirs[40], theirs2[40];

	(void)state;
	s.h = keeper("127.0.0.1:0", NULL, 4, 0); /* one session per address */
	serve_keeper(&s, "127.0.0.1:0");
	net_initialize(&s, "", mine);
	net_initialize(&s, "--interface 127.0.0.2", theirs);
	net_initialize(&s, "--interface 127.0.0.2", theirs2); /* ends its own first */
	expect(&s, 200, "-H 'Content-Type: application/json' -H 'Mcp-Session-Id: %s' -d '%s'",
	       mine, ping_body);
	expect(&s, 404, "-H 'Content-Type: application/json' -H 'Mcp-Session-Id: %s' -d '%s'",
	       theirs, ping_body);
	expect(&s, 200, "-H 'Content-Type: application/json' -H 'Mcp-Session-Id: %s' -d '%s'",
	       theirs2, ping_body);
	/* a page of another server on this host (another port) may not call */
	expect(&s, 403, "-H 'Content-Type: application/json' -H 'Origin: http://127.0.0.1:1' "
	       "-H 'Mcp-Session-Id: %s' -d '%s'", mine, ping_body);
	expect(&s, 200, "-H 'Content-Type: application/json' -H 'Origin: http://localhost:%d' "
	       "-H 'Mcp-Session-Id: %s' -d '%s'", s.port, mine, ping_body);
	unserve(&s);
}

static const char collect_body[] =
	"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":"
	"\"collect_topdown\",\"arguments\":{\"pid\":\"1\",\"duration\":\"2s\"},"
	"\"_meta\":{\"progressToken\":\"p1\"}}}";

/* A collection streamed as SSE: progress, then the answer. */
static void test_network_stream(void **state)
{
	struct served s;
	char id[40], *out;

	(void)state;
	serve(&s, "127.0.0.1:0", NULL);
	net_initialize(&s, "", id);
	setenv("TD_FAKE_SLEEP", "2", 1);
	out = curl(&s, "-N -H 'Content-Type: application/json' -H 'Accept: application/json, "
		   "text/event-stream' -H 'Mcp-Session-Id: %s' -d '%s'", id, collect_body);
	assert_int_equal(status_of(out), 200);
	assert_non_null(strcasestr(out, "\r\nContent-Type: text/event-stream"));
	assert_non_null(strstr(out, "\"method\":\"notifications/progress\""));
	assert_non_null(strstr(out, "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":"));
	assert_non_null(strstr(out, "Stored run r1"));
	assert_true(strstr(out, "notifications/progress") < strstr(out, "\"id\":7"));
	free(out);
	/* and as plain JSON for a client that takes no stream */
	setenv("TD_FAKE_SLEEP", "0", 1);
	out = curl(&s, "-H 'Content-Type: application/json' -H 'Accept: application/json' "
		   "-H 'Mcp-Session-Id: %s' -d '%s'", id, collect_body);
	assert_int_equal(status_of(out), 200);
	assert_non_null(strstr(out, "\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":"));
	free(out);
	unserve(&s);
}

static pid_t collector_pid(void)
{
	char path[160];
	FILE *f;
	int pid = 0;

	snprintf(path, sizeof(path), "%s/collector.pid", dir);
	for (int i = 0; i < 100 && !pid; i++) {
		f = fopen(path, "r");
		if (f && fscanf(f, "%d", &pid) != 1)
			pid = 0;
		if (f)
			fclose(f);
		if (!pid)
			usleep(50000);
	}
	unlink(path);
	return pid;
}

/* notifications/cancelled, sent in a request of its own, ends the
 * stream of the call it names, without an answer. */
static void test_network_cancel(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct served s;
	char id[40], request[2048];
	pid_t pid;
	int fd;
	char *out;

	(void)state;
	serve(&s, "127.0.0.1:0", NULL);
	net_initialize(&s, "", id);
	setenv("TD_FAKE_SLEEP", "30", 1);
	snprintf(request, sizeof(request), "%s/collector.pid", dir);
	unlink(request); /* an earlier test's */
	sa.sin_port = htons((uint16_t)s.port);
	snprintf(request, sizeof(request), "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: "
		 "application/json\r\nAccept: application/json, text/event-stream\r\n"
		 "Mcp-Session-Id: %s\r\nContent-Length: %zu\r\n\r\n%s", id, strlen(collect_body),
		 collect_body);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(send(fd, request, strlen(request), 0), (ssize_t)strlen(request));
	pid = collector_pid();
	assert_true(pid > 0);
	expect(&s, 202, "-H 'Content-Type: application/json' -H 'Mcp-Session-Id: %s' -d "
	       "'{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
	       "{\"requestId\":7}}'", id);
	{
		char buf[4096];
		size_t len = 0;
		ssize_t n;
		struct timeval tv = { .tv_sec = 10 };

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		while (len < sizeof(buf) - 1 && (n = recv(fd, buf + len, sizeof(buf) - 1 - len, 0)) > 0) {
			len += (size_t)n;
			buf[len] = '\0';
			if (strstr(buf, "\r\n0\r\n\r\n"))
				break; /* the chunked stream's end */
		}
		buf[len] = '\0';
		if (!strstr(buf, "\r\n0\r\n\r\n"))
			fail_msg("no end of the stream in:\n%s", buf);
		assert_null(strstr(buf, "\"id\":7"));
	}
	close(fd);
	assert_true(kill(pid, 0) < 0);
	/* the session still serves */
	out = curl(&s, "-H 'Content-Type: application/json' -H 'Mcp-Session-Id: %s' -d '%s'", id,
		   ping_body);
	assert_int_equal(status_of(out), 200);
	free(out);
	unserve(&s);
}

/* The binary: refuses an open listener without a token, serves, and
 * exits 0 on SIGTERM. */
/* 500 slow connections from 127.0.0.2 to mcp-serve on port, and sessions
 * started from 127.0.0.1 meanwhile: NULL when each was answered within a
 * second, else what went wrong (no assertion: the caller stops the server
 * first). */
static const char *binary_under_slowloris(int port)
{
	static char problem[128];
	struct slowloris *attack = malloc(sizeof(*attack));
	struct served s = { .port = port };
	const char *verdict = NULL;
	char *out;
	long long t0;

	if (!attack)
		return "out of memory";
	snprintf(s.url, sizeof(s.url), "http://127.0.0.1:%d/mcp", port);
	if (!slowloris_open(attack, port, SLOWLORIS_MAX, "POST /mcp HTTP/1.1\r\nHost: a\r\n"))
		verdict = "no slow connection reached it";
	for (int round = 0; round < 3 && !verdict; round++) {
		slowloris_trickle(attack);
		t0 = ms_now();
		out = curl(&s, "-H 'Content-Type: application/json' -d '%s'", init_body);
		if (status_of(out) != 200 || ms_now() - t0 >= 1000) {
			snprintf(problem, sizeof(problem), "round %d: initialize got %d in %lld ms", round,
				 status_of(out), ms_now() - t0);
			verdict = problem;
		}
		free(out);
		usleep(300000);
	}
	slowloris_close(attack);
	free(attack);
	return verdict;
}

static void test_binary(void **state)
{
	const char *topdown = getenv("TD_TOPDOWN") ? getenv("TD_TOPDOWN") : "build/topdown";
	char cmd[512], line[256] = "", path[160];
	const char *why, *slow = NULL;
	int status, wstatus;
	FILE *p;

	(void)state;
	snprintf(cmd, sizeof(cmd), "%s mcp-serve --transport http --listen 0.0.0.0:0 2>&1", topdown);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(line, sizeof(line), p));
	status = pclose(p);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	assert_non_null(strstr(line, "is not loopback: give --token-file FILE"));

	snprintf(path, sizeof(path), "%s/serve.log", dir);
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		assert_non_null(freopen(path, "w", stderr));
		execl(topdown, "topdown", "mcp-serve", "--transport", "http", "--port", "0", "--db", db,
		      (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 100; i++) {
		FILE *f = fopen(path, "r");

		line[0] = '\0';
		if (f) {
			if (!fgets(line, sizeof(line), f))
				line[0] = '\0';
			fclose(f);
		}
		if (strstr(line, "serving MCP at http://127.0.0.1:"))
			break;
		usleep(50000);
	}
	assert_non_null(strstr(line, "serving MCP at http://127.0.0.1:"));
	/* the binary's own limits against a slowloris, as mcp-serve runs;
	 * the verdict waits until the server is stopped */
	if ((why = slowloris_cannot_run()))
		print_message("  no slowloris against the binary: %s\n", why);
	else
		slow = binary_under_slowloris(atoi(strstr(line, "127.0.0.1:") + 10));
	assert_int_equal(kill(pid, SIGTERM), 0);
	assert_int_equal(waitpid(pid, &wstatus, 0), pid);
	assert_true(WIFEXITED(wstatus));
	assert_int_equal(WEXITSTATUS(wstatus), 0);
	if (slow)
		fail_msg("the binary under a slowloris: %s", slow);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_origin_and_token_checks),
		cmocka_unit_test(test_listen_rules),
		cmocka_unit_test(test_handler_sessions),
		cmocka_unit_test(test_handler_refusals),
		cmocka_unit_test(test_handler_sse_and_logs),
		cmocka_unit_test(test_handler_tool_errors),
		cmocka_unit_test(test_handler_time_limit),
		cmocka_unit_test(test_handler_token_and_expiry),
		cmocka_unit_test(test_handler_sessions_per_client),
		cmocka_unit_test(test_network),
		cmocka_unit_test(test_network_token),
		cmocka_unit_test(test_network_slowloris),
		cmocka_unit_test(test_network_sessions_per_address),
		cmocka_unit_test(test_network_stream),
		cmocka_unit_test(test_network_cancel),
		cmocka_unit_test(test_binary),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, teardown);
}
