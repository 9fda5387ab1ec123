// SPDX-License-Identifier: BSD-3-Clause
/*
 * The MCP server: lifecycle, dispatch and the stdio loop. The methods
 * themselves live in tools.c, resources.c, prompts.c and complete.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect.h"
#include "format.h"
#include "mcp.h"

#include "version.h"

#define READ_CHUNK 65536

static const char *const log_level_names[] = {
	[TD_MCP_LOG_DEBUG] = "debug", [TD_MCP_LOG_INFO] = "info",
	[TD_MCP_LOG_NOTICE] = "notice", [TD_MCP_LOG_WARNING] = "warning",
	[TD_MCP_LOG_ERROR] = "error", [TD_MCP_LOG_CRITICAL] = "critical",
	[TD_MCP_LOG_ALERT] = "alert", [TD_MCP_LOG_EMERGENCY] = "emergency",
};

/* Newest first: a client asking for another version gets the newest. */
static const char *const protocol_versions[] = {
	TD_MCP_PROTOCOL_LATEST, "2025-06-18", "2025-03-26", "2024-11-05",
};

static const char instructions[] =
	"topdown stores per-thread Top-Down (TMA) profiles: where a program's CPU pipeline "
	"slots go (Frontend_Bound, Bad_Speculation, Backend_Bound and their children, and "
	"Retiring, the useful work), as labeled runs (git_branch, test_name, ...). Start with "
	"list_profiling_runs to see what is stored (list_labels for the labels to filter by), "
	"query_bottlenecks for what holds a process back, get_funnel or get_run_tree for the "
	"whole tree, get_thread_breakdown for which threads differ, explain_metric for what a "
	"node means and what to do about it, and compare_by_labels, compare_runs or query_trend "
	"for what changed. Values are fractions of pipeline slots (0..1); low_confidence marks "
	"values whose counters ran less than half the time.";

int td_mcp_fail(struct td_mcp_error *e, int code, const char *fmt, ...)
{
	va_list ap;

	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	return -1;
}

void td_mcp_send(struct td_mcp_server *s, json_t *message)
{
	char *text = message ? json_dumps(message, JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;

	json_decref(message);
	if (!text) {
		fprintf(stderr, "topdown mcp-serve: a message could not be encoded (out of memory, or "
			"text that is not UTF-8); it was dropped\n");
		return;
	}
	if (!s->output_failed && s->write(s->write_ctx, text, strlen(text)) < 0)
		s->output_failed = true;
	free(text);
}

void td_mcp_log(struct td_mcp_server *s, enum td_mcp_log_level level, const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (level >= TD_MCP_LOG_INFO)
		fprintf(stderr, "topdown mcp-serve: %s\n", text);
	if (s->initialized && level >= s->log_level)
		td_mcp_send(s, td_rpc_notification("notifications/message",
			json_pack("{s:s, s:s, s:s}", "level", log_level_names[level],
				  "logger", "topdown", "data", text)));
}

struct td_store *td_mcp_store(struct td_mcp_server *s, char *err, size_t errlen)
{
	if (!s->store) {
		s->store = td_store_open_flags(&s->opts.store_flags, s->opts.db, TD_STORE_READ_ONLY,
					       NULL, 0, err, errlen);
		if (s->store)
			td_store_set_deadline(s->store, s->deadline_ns);
	}
	return s->store;
}

int td_mcp_param_string(const json_t *params, const char *name, bool required, const char **out,
			struct td_mcp_error *e)
{
	json_t *value = json_object_get(params, name);

	*out = json_string_value(value);
	if (value && !*out)
		return td_mcp_fail(e, TD_RPC_INVALID_PARAMS, "\"%s\" must be a string", name);
	if (required && !*out)
		return td_mcp_fail(e, TD_RPC_INVALID_PARAMS, "\"%s\" is missing", name);
	return 0;
}

/* ---- pagination ---- */

size_t td_mcp_page_size(const struct td_mcp_server *s)
{
	return s->opts.page_size;
}

int td_mcp_page_start(const struct td_mcp_request *req, size_t *offset, struct td_mcp_error *e)
{
	const char *cursor;
	size_t digits;

	*offset = 0;
	if (td_mcp_param_string(req->params, "cursor", false, &cursor, e))
		return -1;
	if (!cursor)
		return 0;
	digits = strspn(cursor, "0123456789");
	if (digits && digits <= 9 && !cursor[digits]) {
		*offset = strtoul(cursor, NULL, 10);
		return 0;
	}
	return td_mcp_fail(e, TD_RPC_INVALID_PARAMS,
				   "invalid cursor '%.40s': pass the nextCursor of the previous page, "
				   "or none for the first", cursor);
}

void td_mcp_next_cursor(json_t *result, size_t offset, size_t shown, size_t total)
{
	char cursor[32];

	if (offset + shown >= total)
		return;
	snprintf(cursor, sizeof(cursor), "%zu", offset + shown);
	json_object_set_new(result, "nextCursor", json_string(cursor));
}

int td_mcp_page_result(const struct td_mcp_server *s, const struct td_mcp_request *req,
		       const char *key, json_t *items, json_t **result, struct td_mcp_error *e)
{
	size_t offset, total = json_array_size(items), shown = 0;
	json_t *page;

	if (td_mcp_page_start(req, &offset, e)) {
		json_decref(items);
		return -1;
	}
	if (!items)
		return 0; /* out of memory: the caller answers with an internal error */
	page = json_array();
	for (size_t i = offset; page && i < total && shown < s->opts.page_size; i++, shown++)
		json_array_append(page, json_array_get(items, i));
	json_decref(items);
	*result = page ? json_pack("{s:o}", key, page) : NULL;
	if (*result)
		td_mcp_next_cursor(*result, offset, shown, total);
	return 0;
}

/* ---- text rendered into memory ---- */

int td_mcp_text_open(struct td_mcp_text *t)
{
	memset(t, 0, sizeof(*t));
	t->out = open_memstream(&t->text, &t->len);
	return t->out ? 0 : -ENOMEM;
}

void td_mcp_text_close(struct td_mcp_text *t)
{
	if (t->out)
		fclose(t->out);
	t->out = NULL;
}

json_t *td_mcp_tool_error(const char *message)
{
	return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", message,
			 "isError", true);
}

/* ---- lifecycle ---- */

/* Our entry for version, or NULL when we do not speak it. */
static const char *known_version(const char *version)
{
	for (size_t i = 0; i < sizeof(protocol_versions) / sizeof(protocol_versions[0]); i++)
		if (!strcmp(version, protocol_versions[i]))
			return protocol_versions[i];
	return NULL;
}

bool td_mcp_protocol_supported(const char *version)
{
	return known_version(version);
}

static const char *negotiate(const char *requested)
{
	const char *version = known_version(requested);

	return version ? version : TD_MCP_PROTOCOL_LATEST;
}

static int m_initialize(struct td_mcp_server *s, const struct td_mcp_request *req,
			json_t **result, struct td_mcp_error *e)
{
	const char *requested, *client;

	if (s->initialized)
		return td_mcp_fail(e, TD_RPC_INVALID_REQUEST, "the session is already initialized");
	if (td_mcp_param_string(req->params, "protocolVersion", true, &requested, e))
		return -1;
	snprintf(s->protocol_version, sizeof(s->protocol_version), "%s", negotiate(requested));
	*result = json_pack("{s:s, s:{s:{s:b}, s:{s:b, s:b}, s:{s:b}, s:{}, s:{}},"
			    " s:{s:s, s:s, s:s}, s:s}",
			    "protocolVersion", s->protocol_version,
			    "capabilities", "tools", "listChanged", false,
			    "resources", "subscribe", false, "listChanged", false,
			    "prompts", "listChanged", false, "logging", "completions",
			    "serverInfo", "name", "topdown", "title", "topdown (Top-Down profiles)",
			    "version", TOPDOWN_VERSION, "instructions", instructions);
	s->initialized = true;
	client = json_string_value(json_object_get(json_object_get(req->params, "clientInfo"),
						   "name"));
	td_mcp_log(s, TD_MCP_LOG_DEBUG, "initialized by %s, protocol %s", client ? client : "a client",
		   s->protocol_version);
	return 0;
}

static int m_ping(struct td_mcp_server *s, const struct td_mcp_request *req, json_t **result,
		  struct td_mcp_error *e)
{
	(void)s;
	(void)req;
	(void)e;
	*result = json_object();
	return 0;
}

static int m_set_level(struct td_mcp_server *s, const struct td_mcp_request *req,
		       json_t **result, struct td_mcp_error *e)
{
	const char *level;

	if (td_mcp_param_string(req->params, "level", true, &level, e))
		return -1;
	for (size_t i = 0; i < sizeof(log_level_names) / sizeof(log_level_names[0]); i++) {
		if (!strcmp(level, log_level_names[i])) {
			s->log_level = i;
			*result = json_object();
			return 0;
		}
	}
	return td_mcp_fail(e, TD_RPC_INVALID_PARAMS,
			   "unknown log level '%.40s': use debug, info, notice, warning, error, "
			   "critical, alert or emergency", level);
}

static const struct method {
	const char *name;
	td_mcp_method_fn run;
} methods[] = {
	{ "initialize", m_initialize },
	{ "ping", m_ping },
	{ "tools/list", td_mcp_tools_list },
	{ "tools/call", td_mcp_tools_call },
	{ "resources/list", td_mcp_resources_list },
	{ "resources/read", td_mcp_resources_read },
	{ "resources/templates/list", td_mcp_resource_templates_list },
	{ "prompts/list", td_mcp_prompts_list },
	{ "prompts/get", td_mcp_prompts_get },
	{ "logging/setLevel", m_set_level },
	{ "completion/complete", td_mcp_complete },
};

static const struct method *find_method(const char *name)
{
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (!strcmp(methods[i].name, name))
			return &methods[i];
	return NULL;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

bool td_mcp_request_timed_out(const struct td_mcp_server *s)
{
	return s->timed_out;
}

/*
 * Runs m under the request time limit: the store stops what it does at
 * the deadline (what takes long is reading many runs), and the request
 * is answered with TD_RPC_REQUEST_TIMEOUT instead of a partial result.
 */
static int run_in_time(struct td_mcp_server *s, const struct method *m,
		       const struct td_mcp_request *req, json_t **result, struct td_mcp_error *e)
{
	char limit[32];
	int rc;

	s->deadline_ns = now_ns() + (int64_t)s->opts.request_timeout_ns;
	if (s->store)
		td_store_set_deadline(s->store, s->deadline_ns);
	rc = m->run(s, req, result, e);
	s->timed_out = s->store && td_store_timed_out(s->store);
	s->deadline_ns = 0;
	if (s->store)
		td_store_set_deadline(s->store, 0);
	if (!s->timed_out)
		return rc;
	json_decref(*result);
	*result = NULL;
	json_decref(e->data);
	e->data = NULL;
	return td_mcp_fail(e, TD_RPC_REQUEST_TIMEOUT, "the request ran past the server's time "
			   "limit of %s while reading the store: narrow it (labels, a process, a "
			   "shorter time window), or ask for the limit to be raised (mcp-serve "
			   "--request-timeout, agent --mcp-request-timeout)",
			   td_format_duration(s->opts.request_timeout_ns, limit, sizeof(limit)));
}

static void handle_request(struct td_mcp_server *s, const struct td_rpc_message *msg)
{
	const struct method *m = find_method(msg->method);
	struct td_mcp_request req = { .id = msg->id, .params = msg->params };
	struct td_mcp_error e = { 0 };
	json_t *result = NULL;
	int64_t start = now_ns();
	int rc;

	s->timed_out = false;
	if (!m)
		rc = td_mcp_fail(&e, TD_RPC_METHOD_NOT_FOUND, "unknown method '%.64s'", msg->method);
	else if (!s->initialized && m->run != m_initialize && m->run != m_ping)
		rc = td_mcp_fail(&e, TD_RPC_INVALID_REQUEST,
				 "the session is not initialized: send initialize first");
	else {
		const json_t *token = json_object_get(json_object_get(msg->params, "_meta"),
						      "progressToken");

		if (json_is_string(token) || json_is_integer(token))
			req.progress_token = token;
		rc = run_in_time(s, m, &req, &result, &e);
		if (rc == 0 && !result)
			rc = td_mcp_fail(&e, TD_RPC_INTERNAL_ERROR, "the answer to %s could not be "
					 "built (out of memory, or text that is not UTF-8)", msg->method);
	}
	if (rc == 0)
		td_mcp_send(s, td_rpc_result(msg->id, result));
	else if (rc < 0)
		td_mcp_send(s, td_rpc_error(msg->id, e.code, e.message, e.data));
	td_mcp_log(s, TD_MCP_LOG_DEBUG, "%.64s answered in %.2f ms%s", msg->method,
		   (now_ns() - start) / 1e6, rc < 0 ? " (error)" : "");
}

static void handle_notification(struct td_mcp_server *s, const struct td_rpc_message *msg)
{
	if (!strcmp(msg->method, "notifications/cancelled")) {
		const json_t *id = json_object_get(msg->params, "requestId");

		if (id)
			td_mcp_collect_cancel(s, id);
	}
	/* notifications/initialized and the rest need nothing from us */
}

void td_mcp_handle_line(struct td_mcp_server *s, const char *line, size_t len)
{
	struct td_rpc_message msg;
	char why[96];

	if (!line) {
		snprintf(why, sizeof(why), "the message is over the %u MiB limit and was dropped",
			 TD_RPC_MAX_LINE >> 20);
		td_mcp_send(s, td_rpc_error(NULL, TD_RPC_INVALID_REQUEST, why, NULL));
		return;
	}
	td_rpc_parse(line, len, &msg);
	switch (msg.kind) {
	case TD_RPC_REQUEST:
		handle_request(s, &msg);
		break;
	case TD_RPC_NOTIFICATION:
		handle_notification(s, &msg);
		break;
	case TD_RPC_INVALID:
		td_mcp_send(s, td_rpc_error(msg.id, msg.error_code, msg.error, NULL));
		break;
	case TD_RPC_RESPONSE: /* we send no requests: nothing waits for it */
		break;
	}
	td_rpc_message_release(&msg);
}

static void on_line(void *ctx, const char *line, size_t len)
{
	td_mcp_handle_line(ctx, line, len);
}

int td_mcp_feed(struct td_mcp_server *s, const char *data, size_t len)
{
	return td_line_reader_feed(&s->reader, data, len, on_line, s);
}

struct td_mcp_server *td_mcp_server_new(const struct td_mcp_options *opts, td_mcp_write_fn write,
					void *ctx)
{
	struct td_mcp_server *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->opts = *opts;
	if (!s->opts.max_duration_ns)
		s->opts.max_duration_ns = TD_MCP_DEFAULT_MAX_DURATION_NS;
	if (!s->opts.request_timeout_ns)
		s->opts.request_timeout_ns = TD_MCP_DEFAULT_REQUEST_TIMEOUT_NS;
	if (!s->opts.page_size)
		s->opts.page_size = TD_MCP_DEFAULT_PAGE_SIZE;
	s->write = write;
	s->write_ctx = ctx;
	s->log_level = TD_MCP_LOG_INFO;
	snprintf(s->protocol_version, sizeof(s->protocol_version), "%s", TD_MCP_PROTOCOL_LATEST);
	td_line_reader_init(&s->reader, TD_RPC_MAX_LINE);
	return s;
}

void td_mcp_server_free(struct td_mcp_server *s)
{
	if (!s)
		return;
	td_mcp_collect_stop(s);
	td_store_close(s->store);
	td_line_reader_release(&s->reader);
	free(s);
}

/* ---- the stdio loop ---- */

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

/* SIGTERM and SIGINT end the loop: blocked outside ppoll, so none is lost
 * between checking the flag and sleeping. */
static void install_signals(sigset_t *poll_mask)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };
	struct sigaction ignore = { .sa_handler = SIG_IGN };
	sigset_t block;

	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, poll_mask);
	sigdelset(poll_mask, SIGTERM);
	sigdelset(poll_mask, SIGINT);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGPIPE, &ignore, NULL); /* a closed stdout shows as a failed write */
}

/* Reads what stdin has; false at its end or on a read error. */
static bool read_input(struct td_mcp_server *s, int fd)
{
	char buf[READ_CHUNK];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n < 0)
		return errno == EINTR || errno == EAGAIN;
	if (n == 0)
		return false;
	if (td_mcp_feed(s, buf, (size_t)n) < 0) {
		td_mcp_log(s, TD_MCP_LOG_ERROR, "out of memory reading a message; stopping");
		return false;
	}
	return true;
}

int td_mcp_serve(struct td_mcp_server *s, int in_fd)
{
	struct pollfd fds[3];
	sigset_t poll_mask;

	install_signals(&poll_mask);
	while (!stop_signal && !s->output_failed) {
		size_t n = 1 + td_mcp_collect_pollfds(s, fds + 1, 2);
		int timeout_ms = td_mcp_collect_timeout_ms(s);
		struct timespec timeout = { timeout_ms / 1000, (timeout_ms % 1000) * 1000000L };

		fds[0] = (struct pollfd){ .fd = in_fd, .events = POLLIN };
		if (ppoll(fds, n, timeout_ms < 0 ? NULL : &timeout, &poll_mask) < 0) {
			if (errno == EINTR)
				continue;
			td_mcp_log(s, TD_MCP_LOG_ERROR, "poll failed: %s", strerror(errno));
			break;
		}
		if (fds[0].revents && !read_input(s, in_fd))
			break;
		td_mcp_collect_step(s, fds + 1, n - 1);
	}
	/* the client is gone or going: these are for the log only */
	if (td_line_reader_pending(&s->reader))
		fprintf(stderr, "topdown mcp-serve: the input ended inside a message; it was dropped\n");
	if (stop_signal)
		fprintf(stderr, "topdown mcp-serve: stopping on %s\n", strsignal(stop_signal));
	td_mcp_collect_stop(s);
	return s->output_failed ? -EPIPE : 0;
}
