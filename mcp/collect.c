// SPDX-License-Identifier: BSD-3-Clause
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect.h"
#include "labels.h"
#include "parse.h"
#include "format.h"

#define DEFAULT_DURATION_NS (10ull * 1000000000)
#define PROGRESS_EVERY_NS (1000ll * 1000000)
#define MAX_ARGS 128 /* room for some 50 labels */
#define STDERR_KEPT 16384 /* the child's last words, for the error message */

struct buffer {
	char *data;
	size_t len, cap;
};

struct td_mcp_collect {
	pid_t pid;
	int out_fd, err_fd;        /* -1 once the child closed them */
	struct buffer out, err;    /* its stdout (the run as JSON) and stderr */
	json_t *request_id;
	json_t *progress_token;    /* NULL: no progress wanted */
	int64_t start_ns, duration_ns, next_progress_ns;
	bool capped;               /* the duration asked for exceeded --max-duration */
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int buffer_append(struct buffer *b, const char *data, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *grown;

		while (cap < b->len + n + 1)
			cap *= 2;
		if (!(grown = realloc(b->data, cap)))
			return -ENOMEM;
		b->data = grown;
		b->cap = cap;
	}
	memcpy(b->data + b->len, data, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

/* Keeps the last STDERR_KEPT bytes. */
static void buffer_keep_tail(struct buffer *b)
{
	if (b->len <= STDERR_KEPT)
		return;
	memmove(b->data, b->data + b->len - STDERR_KEPT, STDERR_KEPT + 1);
	b->len = STDERR_KEPT;
}

static void job_free(struct td_mcp_collect *job)
{
	if (job->out_fd >= 0)
		close(job->out_fd);
	if (job->err_fd >= 0)
		close(job->err_fd);
	free(job->out.data);
	free(job->err.data);
	json_decref(job->request_id);
	json_decref(job->progress_token);
	free(job);
}

/* ---- the command line of the child ---- */

struct command {
	char *argv[MAX_ARGS];
	int argc;
	bool full;             /* an argument did not fit */
	char *owned[MAX_ARGS]; /* the strings made here */
	int nr_owned;
};

static void add(struct command *cmd, const char *arg)
{
	if (cmd->argc < MAX_ARGS - 1)
		cmd->argv[cmd->argc++] = (char *)arg;
	else
		cmd->full = true;
}

static int add_owned(struct command *cmd, char *arg)
{
	if (!arg || cmd->nr_owned == MAX_ARGS) {
		free(arg);
		return -ENOMEM;
	}
	cmd->owned[cmd->nr_owned++] = arg;
	add(cmd, arg);
	return 0;
}

static void command_release(struct command *cmd)
{
	for (int i = 0; i < cmd->nr_owned; i++)
		free(cmd->owned[i]);
}

/* --flag value, when args has it. */
static void add_string_flag(struct command *cmd, const json_t *args, const char *name,
			    const char *flag)
{
	const char *value = json_string_value(json_object_get(args, name));

	if (value) {
		add(cmd, flag);
		add(cmd, value);
	}
}

/* One target, as the CLI wants exactly one. */
static int add_target(struct command *cmd, const json_t *args, char *err, size_t errlen)
{
	int targets = !!json_object_get(args, "process") + !!json_object_get(args, "pid") +
		      json_is_true(json_object_get(args, "system_wide"));

	if (targets != 1) {
		snprintf(err, errlen, "name exactly one target: process (a name), pid (4242 or "
			 "4242,4243) or system_wide: true");
		return -EINVAL;
	}
	add_string_flag(cmd, args, "process", "--process");
	add_string_flag(cmd, args, "pid", "--pid");
	if (json_is_true(json_object_get(args, "system_wide")))
		add(cmd, "--system-wide");
	return 0;
}

/* The duration asked for (10 s by default), capped at --max-duration. */
static int add_duration(struct command *cmd, struct td_mcp_collect *job, const json_t *args,
			uint64_t max_ns, char *err, size_t errlen)
{
	const char *text = json_string_value(json_object_get(args, "duration"));
	uint64_t ns = DEFAULT_DURATION_NS;
	char *arg = NULL;
	int ret = text ? td_parse_duration_ns(text, "argument 'duration'", &ns, err, errlen) : 0;

	if (ret)
		return ret;
	if (ns > max_ns) {
		ns = max_ns;
		job->capped = true;
	}
	job->duration_ns = (int64_t)ns;
	add(cmd, "--duration");
	if (asprintf(&arg, "%" PRIu64 ".%06" PRIu64 "ms", ns / 1000000, ns % 1000000) < 0)
		arg = NULL;
	return add_owned(cmd, arg);
}

static int add_labels(struct command *cmd, const json_t *args, char *err, size_t errlen)
{
	struct td_labels labels;
	int ret;

	td_labels_init(&labels);
	ret = td_mcp_labels_from_json(json_object_get(args, "labels"), &labels, err, errlen);
	for (size_t i = 0; !ret && i < labels.count; i++) {
		char *pair = NULL;

		if (asprintf(&pair, "%s=%s", labels.items[i].key, labels.items[i].value) < 0)
			pair = NULL;
		add(cmd, "--label");
		ret = add_owned(cmd, pair);
	}
	td_labels_free(&labels);
	return ret;
}

static int build_command(struct td_mcp_server *s, struct td_mcp_collect *job, const json_t *args,
			 struct command *cmd, char *err, size_t errlen)
{
	const json_t *level = json_object_get(args, "level");
	int ret;

	add(cmd, s->opts.topdown_path ? s->opts.topdown_path : "/proc/self/exe");
	add(cmd, "collect");
	ret = add_target(cmd, args, err, errlen);
	if (!ret)
		ret = add_duration(cmd, job, args, s->opts.max_duration_ns, err, errlen);
	if (!ret)
		ret = add_labels(cmd, args, err, errlen);
	if (!ret && level) {
		char *arg = NULL;

		if (asprintf(&arg, "%" JSON_INTEGER_FORMAT, json_integer_value(level)) < 0)
			arg = NULL;
		add(cmd, "--level");
		ret = add_owned(cmd, arg);
	}
	add_string_flag(cmd, args, "interval", "--interval");
	add_string_flag(cmd, args, "cpu_model", "--cpu-model");
	add(cmd, "--json");
	cmd->argv[cmd->argc] = NULL;
	if (!ret && cmd->full) {
		snprintf(err, errlen, "too many labels for one collection: give at most %d",
			 (MAX_ARGS - 20) / 2);
		ret = -E2BIG;
	}
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory preparing the collection");
	return ret;
}

/* ---- the child ---- */

/* In the child: its stdio, the store settings as environment, default
 * signal handling; then the command. Never returns. */
static void exec_child(const struct td_mcp_server *s, char **argv, int out_fd, int err_fd)
{
	int null_fd = open("/dev/null", O_RDONLY);
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (null_fd < 0 || dup2(null_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
	    dup2(err_fd, STDERR_FILENO) < 0)
		_exit(127);
	if (s->opts.db)
		setenv("TOPDOWN_DB_PATH", s->opts.db, 1);
	if (s->opts.store_flags.backend)
		setenv("TOPDOWN_BACKEND", s->opts.store_flags.backend, 1);
	if (s->opts.store_flags.dsn)
		setenv("TOPDOWN_DSN", s->opts.store_flags.dsn, 1);
	execv(argv[0], argv);
	dprintf(STDERR_FILENO, "cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

static int spawn(struct td_mcp_server *s, struct td_mcp_collect *job, char **argv, char *err,
		 size_t errlen)
{
	int out[2] = { -1, -1 }, errp[2] = { -1, -1 };

	if (pipe2(out, O_CLOEXEC) || pipe2(errp, O_CLOEXEC)) {
		snprintf(err, errlen, "cannot create pipes for the collection: %s", strerror(errno));
		goto fail;
	}
	job->pid = fork();
	if (job->pid < 0) {
		snprintf(err, errlen, "cannot start the collection: %s", strerror(errno));
		goto fail;
	}
	if (job->pid == 0)
		exec_child(s, argv, out[1], errp[1]);
	close(out[1]);
	close(errp[1]);
	job->out_fd = out[0];
	job->err_fd = errp[0];
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (errp[i] >= 0)
			close(errp[i]);
	}
	return -EIO;
}

int td_mcp_collect_start(struct td_mcp_server *s, const struct td_mcp_request *req,
			 const json_t *args, json_t **result)
{
	struct command cmd = { 0 };
	struct td_mcp_collect *job;
	char err[768] = "";
	int ret;

	if (!s->opts.allow_collect) {
		*result = td_mcp_tool_error(
			"collecting is turned off in this server: start it as `topdown mcp-serve "
			"--allow-collect` (which needs root, or CAP_BPF and CAP_PERFMON) to allow "
			"collect_topdown; the query tools work on runs already stored");
		return 0;
	}
	if (s->collect) {
		*result = td_mcp_tool_error("a collection is already running: wait for its answer, "
					    "or cancel it, before starting another");
		return 0;
	}
	if (!(job = calloc(1, sizeof(*job)))) {
		*result = td_mcp_tool_error("out of memory starting the collection");
		return 0;
	}
	job->out_fd = job->err_fd = -1;
	ret = build_command(s, job, args, &cmd, err, sizeof(err));
	if (!ret)
		ret = spawn(s, job, cmd.argv, err, sizeof(err));
	command_release(&cmd);
	if (ret) {
		job_free(job);
		*result = td_mcp_tool_error(err);
		return 0;
	}
	job->request_id = json_deep_copy(req->id);
	job->progress_token = req->progress_token ? json_deep_copy(req->progress_token) : NULL;
	job->start_ns = job->next_progress_ns = now_ns();
	s->collect = job;
	td_mcp_log(s, TD_MCP_LOG_INFO, "collection started (pid %d) for %.3f s%s", (int)job->pid,
		   job->duration_ns / 1e9, job->capped ? ", capped by --max-duration" : "");
	return TD_MCP_DEFERRED;
}

/* ---- while it runs ---- */

size_t td_mcp_collect_pollfds(const struct td_mcp_server *s, struct pollfd *fds, size_t max)
{
	const struct td_mcp_collect *job = s->collect;
	size_t n = 0;

	if (!job)
		return 0;
	if (job->out_fd >= 0 && n < max)
		fds[n++] = (struct pollfd){ .fd = job->out_fd, .events = POLLIN };
	if (job->err_fd >= 0 && n < max)
		fds[n++] = (struct pollfd){ .fd = job->err_fd, .events = POLLIN };
	return n;
}

int td_mcp_collect_timeout_ms(const struct td_mcp_server *s)
{
	const struct td_mcp_collect *job = s->collect;
	int64_t wait_ns;

	if (!job || !job->progress_token)
		return -1;
	wait_ns = job->next_progress_ns - now_ns();
	return wait_ns <= 0 ? 0 : (int)((wait_ns + 999999) / 1000000);
}

static void send_progress(struct td_mcp_server *s, struct td_mcp_collect *job)
{
	int64_t now = now_ns(), elapsed = now - job->start_ns;
	double done_s = (elapsed < job->duration_ns ? elapsed : job->duration_ns) / 1e9;
	char message[96];

	if (!job->progress_token || now < job->next_progress_ns)
		return;
	job->next_progress_ns = now + PROGRESS_EVERY_NS;
	snprintf(message, sizeof(message), elapsed < job->duration_ns ?
		 "collecting: %.0f s of %.0f s" : "collected %.0f s of %.0f s; storing the run",
		 done_s, job->duration_ns / 1e9);
	td_mcp_send(s, td_rpc_notification("notifications/progress", json_pack(
		"{s:O, s:f, s:f, s:s}", "progressToken", job->progress_token,
		"progress", elapsed / 1e9, "total", job->duration_ns / 1e9, "message", message)));
}

/* Reads what fd has into b; closes it at its end. */
static void drain(int *fd, struct buffer *b, bool forward)
{
	char chunk[65536];
	ssize_t n = read(*fd, chunk, sizeof(chunk));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close(*fd);
		*fd = -1;
		return;
	}
	if (forward) /* the collector's own messages belong in our log */
		(void)!write(STDERR_FILENO, chunk, (size_t)n);
	if (buffer_append(b, chunk, (size_t)n) == 0 && forward)
		buffer_keep_tail(b);
}

/* The last non-empty line of the child's stderr, for the error message. */
static const char *last_line(struct buffer *b)
{
	char *end;

	if (!b->data)
		return NULL;
	while (b->len && (b->data[b->len - 1] == '\n' || b->data[b->len - 1] == '\r'))
		b->data[--b->len] = '\0';
	end = strrchr(b->data, '\n');
	return b->len ? (end ? end + 1 : b->data) : NULL;
}

static json_t *failure(struct td_mcp_collect *job, int status)
{
	const char *why = last_line(&job->err);
	char message[1024];

	if (why)
		snprintf(message, sizeof(message), "%s", why);
	else if (WIFSIGNALED(status))
		snprintf(message, sizeof(message), "the collection was killed by %s",
			 strsignal(WTERMSIG(status)));
	else
		snprintf(message, sizeof(message), "the collection failed (exit status %d)",
			 WEXITSTATUS(status));
	return td_mcp_tool_error(message);
}

/* What the run is: the collect JSON without the per-thread detail. */
static json_t *run_structured(const struct td_mcp_collect *job, json_t *run)
{
	json_t *tma = json_object_get(run, "tma");
	json_t *threads = json_object_get(run, "threads");

	if (json_is_object(tma)) {
		tma = json_copy(tma);
		json_object_del(tma, "groups");
		json_object_del(tma, "processes");
	} else {
		tma = json_null();
	}
	return json_pack("{s:O?, s:O?, s:O?, s:b, s:b, s:O?, s:I, s:O?, s:O?, s:o}",
			 "run_id", json_object_get(run, "run_id"),
			 "process", json_object_get(run, "process"),
			 "duration_s", json_object_get(run, "duration_s"),
			 "duration_capped", job->capped,
			 "partial", json_is_true(json_object_get(run, "partial")),
			 "dropped", json_object_get(run, "dropped"),
			 "threads", (json_int_t)json_array_size(threads),
			 "intervals", json_object_get(run, "intervals"),
			 "events", json_object_get(run, "events"), "tma", tma);
}

static char *run_text(const json_t *st)
{
	const json_t *tma = json_object_get(st, "tma");
	const char *unavailable = json_string_value(json_object_get(tma, "unavailable"));
	const char *model = json_string_value(json_object_get(tma, "model_name"));
	const char *id = json_string_value(json_object_get(st, "run_id"));
	char duration[32], *text = NULL, treeline[600];

	if (unavailable)
		snprintf(treeline, sizeof(treeline), "Top-Down unavailable: %s.", unavailable);
	else if (model)
		snprintf(treeline, sizeof(treeline), "Top-Down tree of %s, level %" JSON_INTEGER_FORMAT
			 ", stored per thread, thread name and process.", model,
			 json_integer_value(json_object_get(tma, "level")));
	else
		snprintf(treeline, sizeof(treeline), "Counters only (no Top-Down tree).");
	if (asprintf(&text, "Stored run %s: %s, %s, %" JSON_INTEGER_FORMAT " threads%s%s\n%s\n"
		     "Next: query_bottlenecks or get_thread_breakdown with run_id %s.\n",
		     id, json_string_value(json_object_get(st, "process")),
		     td_format_duration((uint64_t)(json_number_value(json_object_get(st, "duration_s")) * 1e9),
					duration, sizeof(duration)),
		     json_integer_value(json_object_get(st, "threads")),
		     json_is_true(json_object_get(st, "partial")) ? " (partial)" : "",
		     json_is_true(json_object_get(st, "duration_capped")) ?
		     " (duration capped by the server's --max-duration)" : "", treeline, id) < 0)
		return NULL;
	return text;
}

static json_t *success(struct td_mcp_collect *job)
{
	json_t *run = json_loadb(job->out.data ? job->out.data : "", job->out.len, 0, NULL);
	json_t *st = json_is_object(run) ? run_structured(job, run) : NULL;
	char *text = st ? run_text(st) : NULL;
	json_t *result = NULL;

	if (text && json_is_string(json_object_get(st, "run_id")))
		result = json_pack("{s:[{s:s, s:s}], s:O, s:b}", "content", "type", "text", "text",
				   text, "structuredContent", st, "isError", false);
	free(text);
	json_decref(st);
	json_decref(run);
	return result ? result : td_mcp_tool_error("the collection ended without describing the "
						   "run it stored; `topdown list` shows it");
}

static void finish(struct td_mcp_server *s, struct td_mcp_collect *job)
{
	int status = 0;
	json_t *result;

	while (waitpid(job->pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		result = success(job);
	else
		result = failure(job, status);
	td_mcp_log(s, TD_MCP_LOG_INFO, "collection %s", json_is_true(json_object_get(result, "isError")) ?
		   "failed" : "done");
	td_mcp_send(s, td_rpc_result(job->request_id, result));
	s->collect = NULL;
	job_free(job);
}

void td_mcp_collect_step(struct td_mcp_server *s, const struct pollfd *fds, size_t n)
{
	struct td_mcp_collect *job = s->collect;

	if (!job)
		return;
	for (size_t i = 0; i < n; i++) {
		if (!fds[i].revents)
			continue;
		if (fds[i].fd == job->out_fd)
			drain(&job->out_fd, &job->out, false);
		else if (fds[i].fd == job->err_fd)
			drain(&job->err_fd, &job->err, true);
	}
	if (job->out_fd < 0 && job->err_fd < 0)
		finish(s, job);
	else
		send_progress(s, job);
}

/* Ends the child at once: a collection cut in its window stores nothing. */
static void kill_job(struct td_mcp_server *s)
{
	struct td_mcp_collect *job = s->collect;

	kill(job->pid, SIGKILL);
	while (waitpid(job->pid, NULL, 0) < 0 && errno == EINTR)
		;
	s->collect = NULL;
	job_free(job);
}

bool td_mcp_collect_answers(const struct td_mcp_server *s, const json_t *request_id)
{
	return s->collect && json_equal(s->collect->request_id, request_id);
}

void td_mcp_collect_cancel(struct td_mcp_server *s, const json_t *request_id)
{
	if (!td_mcp_collect_answers(s, request_id))
		return;
	kill_job(s);
	td_mcp_log(s, TD_MCP_LOG_INFO, "collection cancelled");
}

void td_mcp_collect_stop(struct td_mcp_server *s)
{
	if (!s->collect)
		return;
	kill_job(s);
	fprintf(stderr, "topdown mcp-serve: a running collection was stopped\n");
}
