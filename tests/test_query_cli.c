// SPDX-License-Identifier: BSD-3-Clause
/*
 * query, compare, gc and export as a user runs them, on both backends:
 * exit codes (2 for bad input, 1 when the work fails, 3 for a regression
 * under --fail-on-regression), the three output formats, colours only on
 * a terminal and never with NO_COLOR, and bad input that is refused before
 * anything happens. Also list and collect with --backend and --dsn.
 */
#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "backends.h"
#include "cli.h"

/* argv of the command (NULL-terminated) and the store's flags after it. */
static size_t build_argv(const struct backend *b, const char **argv, size_t max, va_list ap)
{
	size_t n = 0;
	const char *arg;

	argv[n++] = "topdown";
	while ((arg = va_arg(ap, const char *)) && n < max - 5)
		argv[n++] = arg;
	if (is_postgres(b)) {
		argv[n++] = "--backend";
		argv[n++] = "postgresql";
		argv[n++] = "--dsn";
		argv[n++] = b->dsn;
	} else {
		argv[n++] = "--db";
		argv[n++] = b->path;
	}
	argv[n] = NULL;
	return n;
}

/* Runs topdown ARGS... (then the store's flags), output into r. */
static void cli(const struct backend *b, struct cli_result *r, ...)
{
	const char *argv[48];
	va_list ap;

	va_start(ap, r);
	build_argv(b, argv, 48, ap);
	va_end(ap);
	cli_run(argv, r);
}

/* The same on a terminal; stdout and stderr both in r->out. */
static void cli_on_tty(const struct backend *b, struct cli_result *r, ...)
{
	const char *argv[48];
	size_t used = 0;
	va_list ap;
	int master, status;
	pid_t pid;

	va_start(ap, r);
	build_argv(b, argv, 48, ap);
	va_end(ap);
	pid = forkpty(&master, NULL, NULL, NULL);
	assert_true(pid >= 0);
	if (pid == 0) {
		execv(cli_topdown_path(), (char **)argv);
		_exit(127);
	}
	for (;;) {
		ssize_t n = read(master, r->out + used, sizeof(r->out) - 1 - used);

		if (n <= 0) /* EIO once the child is gone */
			break;
		used += (size_t)n;
	}
	r->out[used] = '\0';
	close(master);
	waitpid(pid, &status, 0);
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void expect(const struct cli_result *r, int status, const char *in_out, const char *in_err)
{
	if (r->status != status || (in_out && !strstr(r->out, in_out)) ||
	    (in_err && !strstr(r->err, in_err)))
		fail_msg("exit %d (want %d)\nstdout: %.2000s\nstderr: %s", r->status, status, r->out,
			 r->err);
}

/* One line on stderr, nothing on stdout. */
static void expect_refused(const struct cli_result *r, int status, const char *words)
{
	expect(r, status, NULL, words);
	assert_string_equal(r->out, "");
	assert_non_null(strchr(r->err, '\n'));
	assert_int_equal(strchr(r->err, '\n')[1], '\0');
}

static json_t *parse_json(const char *text)
{
	json_error_t error;
	json_t *root = json_loads(text, 0, &error);

	if (!root)
		fail_msg("not JSON (%s): %.500s", error.text, text);
	return root;
}

static size_t count_lines(const char *text)
{
	size_t n = 0;

	for (; *text; text++)
		n += *text == '\n';
	return n;
}

static struct cli_result r; /* large: not on the stack */

/* ---- data ---- */

/* Four runs, branch main then dev; dev has 10 pp more Backend_Bound. */
static void store_branches(struct backend *b, char (*ids)[TD_RUN_ID_LEN])
{
	for (int i = 0; i < 8; i++) {
		bool dev = i >= 4;
		double wiggle = (i % 2) * 0.01;
		struct td_run *run = new_run("app", 1000 + i, dev ? "branch=dev,test=get"
								  : "branch=main,test=get");

		add_node(run, "Frontend_Bound", 0.2, false);
		add_node(run, "Backend_Bound", (dev ? 0.5 : 0.4) + wiggle, true);
		add_node(run, "Backend_Bound.Memory_Bound", (dev ? 0.3 : 0.2) + wiggle, true);
		add_row(run, TD_SCOPE_PROCESS, "100", "Retiring", 0.3 - wiggle, false,
			i == 0 ? 0.2 : 1);
		add_thread(run, 7, "io_thd_1", 1000000);
		add_row(run, TD_SCOPE_THREAD, "7", "Backend_Bound", 0.5, true, 1);
		add_row(run, TD_SCOPE_GROUP, "io_thd_*", "Backend_Bound", 0.5, true, 1);
		store_run(b, run, ids ? ids[i] : NULL);
	}
}

/* ---- query ---- */

static void test_query_modes(void **state)
{
	struct backend *b = backend_of(state);
	char ids[8][TD_RUN_ID_LEN], prefix[16];
	json_t *root;

	store_branches(b, ids);
	cli(b, &r, "query", "--label", "branch=dev", NULL);
	expect(&r, 0, "Backend_Bound.Memory_Bound", NULL);
	assert_non_null(strstr(r.out, "over 4 runs"));
	assert_null(strstr(r.out, "\033["));
	cli(b, &r, "query", "--funnel", "--label", "branch=main", NULL);
	expect(&r, 0, "useful work 29.5%", NULL); /* 0.30, 0.29, 0.30, 0.29 */
	assert_non_null(strstr(r.out, "█"));
	assert_non_null(strstr(r.out, "✗"));
	assert_non_null(strstr(r.out, "~ low confidence")); /* run 0's Retiring */
	cli(b, &r, "query", "--tree", "--level", "1", "--csv", NULL);
	expect(&r, 0, "path,level,value", NULL);
	assert_int_equal(count_lines(r.out), 1 + 3);
	snprintf(prefix, sizeof(prefix), "%.8s", ids[7]);
	cli(b, &r, "query", "--threads", "--run-id", prefix, "--json", NULL);
	expect(&r, 0, NULL, NULL);
	root = parse_json(r.out);
	assert_string_equal(json_string_value(json_object_get(json_object_get(root, "run"),
							      "run_id")), ids[7]);
	assert_int_equal(json_array_size(json_object_get(root, "threads")), 1);
	json_decref(root);
	cli(b, &r, "query", "--bottleneck", "Memory_Bound", "--min-pct", "25", "--json", NULL);
	expect(&r, 0, NULL, NULL);
	root = parse_json(r.out);
	assert_int_equal(json_array_size(json_object_get(root, "runs")), 4); /* dev only */
	json_decref(root);
	cli(b, &r, "query", "--trend", "Backend_Bound", "--window", "3", "--sigma", "2",
	    "--top-n", "5", NULL);
	expect(&r, 0, "Backend_Bound over 5 samples", NULL);
	assert_non_null(strstr(r.out, "anomaly")); /* the jump to dev */
	cli(b, &r, "query", "--bottlenecks", "--thread", "io_thd_9", "--json", NULL);
	expect(&r, 0, "\"Backend_Bound\"", NULL);
}

static void test_query_pooled(void **state)
{
	struct backend *b = backend_of(state);
	json_t *root, *node;

	store_two_counter_windows(b, "neoverse-n1");
	cli(b, &r, "query", "--tree", "--pooled", "--label", "test=pool", NULL);
	expect(&r, 0, "pooled over 2 runs of 2 hosts, 2.00s on-CPU", NULL);
	assert_non_null(strstr(r.out, "COUNTED"));
	assert_non_null(strstr(r.out, "30.0%"));
	assert_non_null(strstr(r.out, "40.0%"));
	assert_null(strstr(r.out, "n/a"));
	cli(b, &r, "query", "--funnel", "--pooled", "--label", "test=pool", NULL);
	expect(&r, 0, "Pipeline slots pooled over 2 runs", NULL);
	cli(b, &r, "query", "--tree", "--pooled", "--label", "test=pool", "--json", NULL);
	expect(&r, 0, NULL, NULL);
	root = parse_json(r.out);
	assert_true(json_is_true(json_object_get(root, "pooled")));
	assert_int_equal(json_integer_value(json_object_get(root, "oncpu_ns")), 2000000000);
	assert_int_equal(json_integer_value(json_object_get(root, "hosts")), 2);
	node = json_array_get(json_object_get(root, "nodes"), 0);
	assert_string_equal(json_string_value(json_object_get(node, "path")), "Frontend_Stalled_Cycles");
	assert_int_equal(json_integer_value(json_object_get(node, "counted_ns")), 1000000000);
	json_decref(root);
	cli(b, &r, "query", "--tree", "--pooled", "--label", "test=pool", "--csv", NULL);
	expect(&r, 0, "useful,counted_ns\n", NULL);
	assert_non_null(strstr(r.out, ",1000000000\n"));

	/* Bad input: a mode it does not go with; runs of two models. */
	cli(b, &r, "query", "--bottlenecks", "--pooled", NULL);
	expect_refused(&r, 2, "--pooled goes with --tree or --funnel");
	store_two_counter_windows(b, "neoverse-v1");
	cli(b, &r, "query", "--tree", "--pooled", "--label", "test=pool", NULL);
	expect_refused(&r, 2, "add --label tma_model=neoverse-");
}

static void test_query_bad_input(void **state)
{
	struct backend *b = backend_of(state);

	store_branches(b, NULL);
	cli(b, &r, "query", "--label", "branch", NULL);
	expect_refused(&r, 2, "bad label 'branch'");
	cli(b, &r, "query", "--last", "yesterday", NULL);
	expect_refused(&r, 2, "bad duration 'yesterday' for --last");
	cli(b, &r, "query", "--funnel", "--tree", NULL);
	expect_refused(&r, 2, "give one mode");
	cli(b, &r, "query", "--min-pct", "5", NULL);
	expect_refused(&r, 2, "--min-pct goes with --bottleneck");
	cli(b, &r, "query", "--bottleneck", "DRAM_Bound", "--min-pct", "150", NULL);
	expect_refused(&r, 2, "from 0 to 100");
	cli(b, &r, "query", "--trend", "Retiring", "--window", "2", NULL);
	expect_refused(&r, 2, "--window");
	cli(b, &r, "query", "--level", "9", NULL);
	expect_refused(&r, 2, "--level");
	cli(b, &r, "query", "--nope", NULL);
	expect_refused(&r, 2, "unknown option");
	cli(b, &r, "query", "--run-id", "0123456789ab", NULL);
	expect_refused(&r, 1, "no run '0123456789ab'");
	cli(b, &r, "query", "--run-id", "x'; DROP TABLE runs; --", NULL);
	expect_refused(&r, 2, "not a run id");
	cli(b, &r, "query", "--threads", "--sort", "DRAM_Bound", NULL);
	expect_refused(&r, 2, "cannot sort by 'DRAM_Bound'");
	/* A name no model knows: exit 2 with a suggestion, never an empty answer. */
	cli(b, &r, "query", "--threads", "--sort", "Retirng", NULL);
	expect_refused(&r, 2, "unknown metric 'Retirng'; did you mean Retiring?");
	cli(b, &r, "query", "--bottleneck", "Frontend_Bond", NULL);
	expect_refused(&r, 2, "unknown metric 'Frontend_Bond'; did you mean Frontend_Bound?");
	cli(b, &r, "query", "--bottleneck", "NoSuch", NULL);
	expect_refused(&r, 2, "unknown metric 'NoSuch'");
	cli(b, &r, "query", "--trend", "Frontend_Bond", NULL);
	expect_refused(&r, 2, "did you mean Frontend_Bound?");
	cli(b, &r, "report", "--trend", "Frontend_Bond", NULL);
	expect_refused(&r, 2, "did you mean Frontend_Bound?");
	/* Metacharacters are data: they match nothing, and break nothing. */
	cli(b, &r, "query", "--label", "branch=main' OR '1'='1", NULL);
	expect_refused(&r, 0, "no stored run matches"); /* an empty answer, not a failure */
	cli(b, &r, "query", "--process", "app\" OR 1=1 --", NULL);
	expect_refused(&r, 0, "no stored run matches");
	cli(b, &r, "list", "--json", NULL);
	expect(&r, 0, NULL, NULL);
	json_decref(parse_json(r.out));
	assert_non_null(strstr(r.out, "\"branch\": \"dev\"")); /* all still there */
}

static void test_ambiguous_run_id(void **state)
{
	struct backend *b = backend_of(state);
	static const char *const ids[] = {
		"feedbeef-0000-4000-8000-000000000001", "feedbeef-0000-4000-8000-000000000002",
	};

	for (int i = 0; i < 2; i++) {
		struct td_run *run = new_run("app", i, NULL);

		snprintf(run->id, sizeof(run->id), "%s", ids[i]);
		add_node(run, "Retiring", 0.5, false);
		store_run(b, run, NULL);
	}
	cli(b, &r, "query", "--tree", "--run-id", "feedbeef", NULL);
	expect_refused(&r, 1, "ambiguous");
	assert_non_null(strstr(r.err, ids[0]));
	assert_non_null(strstr(r.err, ids[1]));
	cli(b, &r, "query", "--tree", "--run-id", "feedbeef-0000-4000-8000-000000000002", NULL);
	expect(&r, 0, "over 1 run", NULL);
	cli(b, &r, "compare", "feedbeef", ids[1], NULL);
	expect_refused(&r, 1, "ambiguous");
}

/* ---- colours ---- */

static void test_colors_only_on_a_terminal(void **state)
{
	struct backend *b = backend_of(state);

	store_branches(b, NULL);
	unsetenv("NO_COLOR");
	cli_on_tty(b, &r, "query", "--funnel", NULL);
	expect(&r, 0, "\033[", NULL);
	setenv("NO_COLOR", "1", 1);
	cli_on_tty(b, &r, "query", "--funnel", NULL);
	expect(&r, 0, "useful work", NULL);
	assert_null(strstr(r.out, "\033["));
	unsetenv("NO_COLOR");
	cli(b, &r, "compare", "--label-a", "branch=main", "--label-b", "branch=dev", NULL);
	expect(&r, 0, "regression", NULL);
	assert_null(strstr(r.out, "\033["));
}

/* ---- compare ---- */

static void test_compare(void **state)
{
	struct backend *b = backend_of(state);
	char ids[8][TD_RUN_ID_LEN];
	json_t *root, *metrics;

	store_branches(b, ids);
	cli(b, &r, "compare", "--label-a", "branch=main", "--label-b", "branch=dev", NULL);
	expect(&r, 0, "A: 4 runs, B: 4 runs; 2 regressions", NULL);
	assert_non_null(strstr(r.out, "Welch's t-test"));
	assert_non_null(strstr(r.out, "+10.0pp"));
	cli(b, &r, "compare", "--label-a", "branch=main", "--label-b", "branch=dev",
	    "--fail-on-regression", NULL);
	expect(&r, 3, "regression", NULL);
	/* Above the change: nothing counts, CI passes. */
	cli(b, &r, "compare", "--label-a", "branch=main", "--label-b", "branch=dev",
	    "--fail-on-regression", "--threshold", "15", NULL);
	expect(&r, 0, "0 regressions", NULL);
	/* The other way round it is an improvement. */
	cli(b, &r, "compare", "--label-a", "branch=dev", "--label-b", "branch=main", "--json",
	    "--fail-on-regression", NULL);
	expect(&r, 0, NULL, NULL);
	root = parse_json(r.out);
	assert_string_equal(json_string_value(json_object_get(root, "test")), "welch");
	assert_int_equal(json_integer_value(json_object_get(root, "improvements")), 2);
	metrics = json_object_get(root, "metrics");
	assert_string_equal(json_string_value(json_object_get(json_array_get(metrics, 0),
							      "change")), "improvement");
	json_decref(root);
	cli(b, &r, "compare", ids[0], ids[7], "--csv", NULL);
	expect(&r, 0, "thread_name,path,level", NULL);
	assert_int_equal(count_lines(r.out), 1 + 4);
	cli(b, &r, "compare", "--label-a", "branch=main", "--label-b", "branch=dev", "--threads",
	    NULL);
	expect(&r, 0, "io_thd_*: Backend_Bound", NULL);
}

static void test_compare_bad_input(void **state)
{
	struct backend *b = backend_of(state);
	char ids[8][TD_RUN_ID_LEN];

	store_branches(b, ids);
	cli(b, &r, "compare", ids[0], NULL);
	expect_refused(&r, 2, "name two runs");
	cli(b, &r, "compare", "--label-a", "branch=main", NULL);
	expect_refused(&r, 2, "give both --label-a and --label-b");
	cli(b, &r, "compare", ids[0], ids[1], "--label-a", "branch=main", "--label-b", "x=y", NULL);
	expect_refused(&r, 2, "not both");
	cli(b, &r, "compare", "--label-a", "branch=main", "--label-b", "branch=dev", "--threshold",
	    "-1", NULL);
	expect_refused(&r, 2, "--threshold");
	cli(b, &r, "compare", "--label-a", "branch=main", "--label-b", "test=get", NULL);
	expect_refused(&r, 2, "matches both sides");
	cli(b, &r, "compare", "--label-a", "branch=main", "--label-b", "branch=nope",
	    "--fail-on-regression", NULL);
	expect_refused(&r, 0, "no stored run matches side B");
}

/* ---- gc and export ---- */

static void test_gc(void **state)
{
	struct backend *b = backend_of(state);
	int64_t now = (int64_t)time(NULL) * 1000000000;

	for (int i = 0; i < 25; i++) /* 10.5 to 34.5 days old */
		store_run(b, new_run("app", now - (int64_t)(21 + 2 * i) * 43200 * 1000000000, NULL),
			  NULL);
	store_run(b, new_run("app", now, NULL), NULL);
	cli(b, &r, "gc", "--older-than", "30d", "--dry-run", NULL);
	expect(&r, 0, "would delete 5 runs", NULL);
	cli(b, &r, "gc", "--older-than", "30", NULL);
	expect_refused(&r, 2, "bad duration '30' for --older-than");
	cli(b, &r, "gc", NULL);
	expect_refused(&r, 2, "--older-than");
	cli(b, &r, "gc", "--older-than", "30d", "--json", NULL);
	expect_refused(&r, 2, "do not apply");
	/* Past 106,751 days int64 nanoseconds wrap and the cutoff lands in the
	 * future: every run would go. Past 100 years is refused, and nothing is. */
	for (int i = 0; i < 4; i++) {
		static const char *const huge[] = { "127600d", "150000d", "200000d", "213503d" };

		cli(b, &r, "gc", "--older-than", huge[i], NULL);
		expect_refused(&r, 2, "for --older-than: it is longer than 100 years; use at most 36500d");
		cli(b, &r, "list", "--last", huge[i], NULL);
		expect_refused(&r, 2, "for --last: it is longer than 100 years");
		cli(b, &r, "query", "--last", huge[i], NULL);
		expect_refused(&r, 2, "for --last: it is longer than 100 years");
	}
	cli(b, &r, "gc", "--older-than", "36500d", NULL);
	expect(&r, 0, "deleted 0 runs", NULL);
	cli(b, &r, "list", "--last", "36500d", "--limit", "100", "--json", NULL);
	expect(&r, 0, NULL, NULL);
	json_t *all = parse_json(r.out);

	assert_int_equal(json_array_size(all), 26); /* every run, none lost */
	json_decref(all);
	cli(b, &r, "gc", "--older-than", "20d", "--batch", "3", NULL);
	expect(&r, 0, "deleted 15 runs", NULL);
	cli(b, &r, "list", "--limit", "100", "--json", NULL);
	expect(&r, 0, NULL, NULL);
	json_t *root = parse_json(r.out);

	assert_int_equal(json_array_size(root), 11);
	json_decref(root);
}

static void test_export(void **state)
{
	struct backend *b = backend_of(state);
	char path[PATH_MAX + 16], ids[8][TD_RUN_ID_LEN], text[4096];
	json_t *root, *run;
	int fd;

	store_branches(b, ids);
	cli(b, &r, "export", "--label", "branch=dev", NULL);
	expect(&r, 0, NULL, NULL);
	root = parse_json(r.out);
	assert_int_equal(json_array_size(root), 4);
	run = json_array_get(root, 0);
	assert_string_equal(json_string_value(json_object_get(run, "run_id")), ids[7]);
	assert_int_equal(json_array_size(json_object_get(run, "metrics")), 6);
	assert_int_equal(json_array_size(json_object_get(run, "thread_rows")), 1);
	json_decref(root);
	cli(b, &r, "export", "--format", "csv", NULL);
	expect(&r, 0, "run_id,started_ns,ended_ns,process", NULL);
	assert_int_equal(count_lines(r.out), 1 + 8 * 6);
	/* A run without metric rows still has its line. */
	store_run(b, new_run("bare", 1, NULL), NULL);
	cli(b, &r, "export", "--format", "csv", "--process", "bare", NULL);
	expect(&r, 0, ",bare,import,{},,,,,,,,,,\n", NULL);
	cli(b, &r, "export", "--format", "xml", NULL);
	expect_refused(&r, 2, "json, csv, pprof or folded");
	cli(b, &r, "export", "--format", "pprof", NULL); /* runs without stacks: a hint, nothing written */
	expect_refused(&r, 0, "none with a profile; collect with --sample");
	cli(b, &r, "export", "--thread", "1", NULL);
	expect_refused(&r, 2, "--format pprof or --format folded");
	cli(b, &r, "export", "--label", "branch=none", NULL);
	expect(&r, 0, "[]", NULL);
	if (is_postgres(b))
		return; /* the file half needs no second run */
	snprintf(path, sizeof(path), "%s/out.json", b->dir);
	cli(b, &r, "export", "--run-id", ids[0], "--output", path, NULL);
	expect(&r, 0, NULL, NULL);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	cli_slurp(fd, text, sizeof(text));
	json_decref(parse_json(text));
	cli(b, &r, "export", "--output", "/nonexistent/dir/out.json", NULL);
	expect_refused(&r, 1, "cannot write '/nonexistent/dir/out.json'");
}

/* A number as export writes it: null for NaN. */
static void assert_json_number(json_t *json, double want)
{
	if (isnan(want))
		assert_true(json_is_null(json));
	else if (!json_is_number(json) || json_number_value(json) != want)
		fail_msg("exported %g, stored %.17g", json_number_value(json), want);
}

static void assert_threads_json(json_t *rows, const struct td_run *run, const struct td_thread_row *t,
				size_t n)
{
	assert_int_equal(json_array_size(rows), n);
	for (size_t i = 0; i < n; i++) {
		json_t *row = json_array_get(rows, i), *counters = json_object_get(row, "counters");

		assert_int_equal(json_integer_value(json_object_get(row, "tid")), t[i].tid);
		assert_string_equal(json_string_value(json_object_get(row, "comm")), t[i].comm);
		assert_int_equal(json_integer_value(json_object_get(row, "oncpu_ns")), t[i].oncpu_ns);
		assert_int_equal(json_object_size(counters), run->nr_events);
		for (size_t e = 0; e < run->nr_events; e++)
			assert_json_number(json_object_get(json_object_get(counters, run->event_names[e]), "value"),
					   t[i].counters[e].value);
	}
}

/* The exported object of a run holds what was stored: fields, events,
 * thread rows, each interval with its threads, each metric row in order. */
static void assert_run_json(json_t *json, const struct td_run *run)
{
	json_t *intervals = json_object_get(json, "intervals"), *metrics = json_object_get(json, "metrics");
	json_t *events = json_object_get(json, "events");

	assert_string_equal(json_string_value(json_object_get(json, "run_id")), run->id);
	assert_string_equal(json_string_value(json_object_get(json, "process")), run->process);
	assert_int_equal(json_integer_value(json_object_get(json, "started_ns")), run->started_ns);
	assert_int_equal(json_array_size(events), run->nr_events);
	for (size_t e = 0; e < run->nr_events; e++)
		assert_string_equal(json_string_value(json_array_get(events, e)), run->event_names[e]);
	assert_threads_json(json_object_get(json, "thread_rows"), run, run->threads, run->nr_threads);
	assert_int_equal(json_array_size(intervals), run->nr_intervals);
	for (size_t i = 0; i < run->nr_intervals; i++) {
		const struct td_interval *iv = &run->intervals[i];
		json_t *x = json_array_get(intervals, i);

		assert_int_equal(json_integer_value(json_object_get(x, "seq")), iv->seq);
		assert_int_equal(json_integer_value(json_object_get(x, "start_ns")), iv->start_ns);
		assert_int_equal(json_integer_value(json_object_get(x, "end_ns")), iv->end_ns);
		assert_threads_json(json_object_get(x, "threads"), run, iv->threads, iv->nr_threads);
	}
	assert_int_equal(json_array_size(metrics), run->nr_metrics);
	for (size_t i = 0; i < run->nr_metrics; i++) {
		const struct td_metric_row *m = &run->metrics[i];
		json_t *x = json_array_get(metrics, i);

		assert_string_equal(json_string_value(json_object_get(x, "path")), m->path);
		assert_string_equal(json_string_value(json_object_get(x, "scope_key")), m->scope_key);
		assert_int_equal(json_integer_value(json_object_get(x, "interval_seq")), m->interval_seq);
		assert_json_number(json_object_get(x, "value"), m->value);
		assert_json_number(json_object_get(x, "confidence"), m->confidence);
	}
}

/* The CSV lines of a run: one per metric row, in order, or one with the
 * metric fields empty. Returns the text after them. */
static const char *assert_run_csv(const char *text, const struct td_run *run)
{
	char want[256];

	for (size_t i = 0; i < (run->nr_metrics ? run->nr_metrics : 1); i++) {
		const struct td_metric_row *m = run->nr_metrics ? &run->metrics[i] : NULL;
		const char *end = strchr(text, '\n');

		assert_non_null(end);
		assert_memory_equal(text, run->id, strlen(run->id));
		if (m)
			snprintf(want, sizeof(want), ",%s,%s,%d,%s,", td_scope_name(m->scope), m->scope_key,
				 m->interval_seq, m->path);
		else
			snprintf(want, sizeof(want), ",,,,,,,,,\n");
		if (!memmem(text, (size_t)(end - text) + 1, want, strlen(want)))
			fail_msg("line '%.*s' lacks '%s'", (int)(end - text), text, want);
		text = end + 1;
	}
	return text;
}

/*
 * export reads runs part by part and writes them as it goes: the output
 * holds what was stored for a run with several intervals (one without
 * threads, rows of intervals, a metric row without a confidence), the
 * empty run, and a run without intervals, in JSON and in CSV.
 */
static void test_export_streams(void **state)
{
	struct backend *b = backend_of(state);
	struct td_run *runs[3] = { new_run("streamed", 3000, "k=v"), new_run("streamed", 2000, NULL),
				   new_run("streamed", 1000, "q=x\"y") };
	struct td_run *full = runs[0], *no_intervals = runs[2];
	json_t *root;
	const char *rest;

	full->nr_events = 2;
	full->event_names[0] = strdup("cycles");
	full->event_names[1] = strdup("instructions");
	add_thread(full, 7, "io_thd_1", 1000000);
	add_thread(full, 8, "main", 2000000);
	full->threads[0].counters[0] = (struct td_counter_value){ 1e9 / 3, 1 };
	full->threads[1].counters[1] = (struct td_counter_value){ NAN, 0 };
	full->nr_intervals = 3;
	full->intervals = calloc(3, sizeof(*full->intervals));
	for (size_t i = 0; i < 3; i++) {
		struct td_interval *iv = &full->intervals[i];

		*iv = (struct td_interval){ .seq = (uint32_t)(2 * i), .start_ns = 3000 + (int64_t)i,
					    .end_ns = 3001 + (int64_t)i, .nr_threads = i == 1 ? 0 : 2 };
		iv->threads = calloc(2, sizeof(*iv->threads));
		memcpy(iv->threads, full->threads, 2 * sizeof(*iv->threads));
		iv->threads[1].counters[0].value = 5.5 * (double)i;
	}
	add_node(full, "Backend_Bound", 0.5, true);
	add_row(full, TD_SCOPE_THREAD, "7", "Backend_Bound.Memory_Bound", 0.25, false, NAN);
	add_row(full, TD_SCOPE_GROUP, "io_thd_*", "Frontend_Bound", NAN, false, 0.5);
	full->metrics[2].interval_seq = 4;
	add_node(no_intervals, "Retiring", 0.125, false);
	add_thread(no_intervals, 9, "lone", 5);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(td_store_write_run(b->store, runs[i], b->err, ERRLEN), 0);

	cli(b, &r, "export", "--process", "streamed", NULL); /* newest first */
	expect(&r, 0, NULL, NULL);
	assert_memory_equal(r.out, "[\n{\n  \"run_id\": ", 16);
	assert_string_equal(r.out + strlen(r.out) - 3, "\n]\n");
	root = parse_json(r.out);
	assert_int_equal(json_array_size(root), 3);
	for (size_t i = 0; i < 3; i++)
		assert_run_json(json_array_get(root, i), runs[i]);
	json_decref(root);
	cli(b, &r, "export", "--process", "streamed", "--format", "csv", NULL);
	expect(&r, 0, "run_id,started_ns,ended_ns,process", NULL);
	rest = strchr(r.out, '\n') + 1;
	for (size_t i = 0; i < 3; i++)
		rest = assert_run_csv(rest, runs[i]);
	assert_string_equal(rest, "");
	for (size_t i = 0; i < 3; i++)
		td_run_free(runs[i]);
}

/* ---- where the store is ---- */

#define SECRET "pw-Xyzzy-42"

static void test_every_command_takes_dsn(void **state)
{
	struct backend *b = backend_of(state);
	static const char *const commands[][2] = {
		{ "list", NULL }, { "query", NULL }, { "gc", "--older-than=1d" }, { "export", NULL },
	};
	const char *argv[] = { "topdown", NULL, NULL, "--dsn",
			       "postgresql://td:" SECRET "@127.0.0.1:1/runs", NULL, NULL };

	(void)b;
	/* Every command takes --dsn, and names the host but not the password. */
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		char out_name[] = "/tmp/td-qcli-XXXXXX";
		int fd = mkstemp(out_name), status;
		pid_t pid;

		argv[1] = commands[i][0];
		argv[2] = commands[i][1] ? commands[i][1] : "--json";
		pid = fork();
		if (pid == 0) {
			dup2(fd, STDERR_FILENO);
			dup2(fd, STDOUT_FILENO);
			execv(cli_topdown_path(), (char **)argv);
			_exit(127);
		}
		waitpid(pid, &status, 0);
		cli_slurp(fd, r.err, sizeof(r.err));
		unlink(out_name);
		assert_int_equal(WEXITSTATUS(status), 1);
		if (!strstr(r.err, "127.0.0.1") || strstr(r.err, SECRET))
			fail_msg("%s: %s", commands[i][0], r.err);
	}
}

/* TOPDOWN_BACKEND and TOPDOWN_DSN alone, without flags. */
static void test_environment(void **state)
{
	struct backend *b = backend_of(state);
	const char *argv[] = { "topdown", "query", "--tree", NULL };
	char out_name[] = "/tmp/td-qcli-XXXXXX";
	int fd, status;
	pid_t pid;

	store_branches(b, NULL);
	fd = mkstemp(out_name);
	pid = fork();
	if (pid == 0) {
		setenv("TOPDOWN_BACKEND", "postgresql", 1);
		setenv("TOPDOWN_DSN", b->dsn, 1);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		execv(cli_topdown_path(), (char **)argv);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	cli_slurp(fd, r.out, sizeof(r.out));
	unlink(out_name);
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_non_null(strstr(r.out, "over 8 runs"));
}

/* collect takes --dsn too: with an unreachable server it stops before counting. */
static void test_collect_takes_dsn(void **state)
{
	const char *argv[] = { "topdown", "collect", "--system-wide", "--duration", "1s", "--dsn",
			       "postgresql://td:" SECRET "@127.0.0.1:1/runs", NULL };
	char out_name[] = "/tmp/td-qcli-XXXXXX";
	int fd = mkstemp(out_name), status;
	pid_t pid;

	(void)state;
	if (geteuid() != 0) {
		unlink(out_name);
		print_message("SKIP: collect checks its privileges first; run the suite as root\n");
		skip();
	}
	pid = fork();
	if (pid == 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		execv(cli_topdown_path(), (char **)argv);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	cli_slurp(fd, r.err, sizeof(r.err));
	unlink(out_name);
	assert_int_equal(WEXITSTATUS(status), 1);
	if (!strstr(r.err, "cannot connect to PostgreSQL at host 127.0.0.1") ||
	    strstr(r.err, SECRET))
		fail_msg("collect: %s", r.err);
}

/* ---- list --labels ---- */

/* store_branches: branch main and dev, 4 runs each, all test=get. */
static void test_list_labels(void **state)
{
	struct backend *b = backend_of(state);
	json_t *root, *key;

	store_branches(b, NULL);
	cli(b, &r, "list", "--labels", NULL);
	expect(&r, 0, "Labels of 8 runs", NULL);
	assert_non_null(strstr(r.out, "branch                        8       2  dev (4)\n"));
	assert_non_null(strstr(r.out, "                                         main (4)\n"));
	assert_non_null(strstr(r.out, "test                          8       1  get (8)\n"));
	assert_null(strstr(r.out, "\033[")); /* not a terminal */

	/* one key, and one value of it */
	cli(b, &r, "list", "--labels", "branch", "--limit", "1", "--json", NULL);
	expect(&r, 0, NULL, NULL);
	root = parse_json(r.out);
	assert_int_equal(json_integer_value(json_object_get(root, "runs")), 8);
	assert_int_equal(json_array_size(json_object_get(root, "keys")), 1);
	key = json_array_get(json_object_get(root, "keys"), 0);
	assert_string_equal(json_string_value(json_object_get(key, "key")), "branch");
	assert_int_equal(json_integer_value(json_object_get(key, "distinct_values")), 2);
	assert_int_equal(json_array_size(json_object_get(key, "values")), 1);
	json_decref(root);
	cli(b, &r, "list", "--label", "branch=main", "branch", "--labels", NULL);
	expect(&r, 0, "Labels of 4 runs", NULL);
	assert_non_null(strstr(r.out, "main (4)"));
	assert_null(strstr(r.out, "dev"));
	cli(b, &r, "list", "--labels", "branch", "--limit", "1", NULL);
	expect(&r, 0, "(1 more)", NULL);
	cli(b, &r, "list", "--labels", "--process", "app", "--last", "1d", NULL);
	expect(&r, 0, NULL, "no stored run matches the filters"); /* started in 1970 */

	/* every matching run counts, not the 20 newest that list shows */
	for (int i = 0; i < 15; i++)
		store_run(b, new_run("app", 2000 + i, "branch=extra"), NULL);
	cli(b, &r, "list", "--labels", "branch", NULL);
	expect(&r, 0, "Labels of 23 runs", NULL);
	assert_non_null(strstr(r.out, "extra (15)"));
	assert_non_null(strstr(r.out, "main (4)"));
}

static void test_list_labels_bad_input(void **state)
{
	struct backend *b = backend_of(state);

	cli(b, &r, "list", "--labels", NULL);
	expect_refused(&r, 0, "no run is stored yet");
	store_branches(b, NULL);
	cli(b, &r, "list", "--labels", "nope", NULL);
	expect_refused(&r, 1, "no run carries the label 'nope'; the keys there are branch, test");
	cli(b, &r, "list", "--labels", "bad key", NULL);
	expect_refused(&r, 2, "bad label key 'bad key'");
	cli(b, &r, "list", "--labels", "branch", "test", NULL);
	expect_refused(&r, 2, "unexpected argument 'test' after the key of --labels");
	cli(b, &r, "list", "branch", NULL);
	expect_refused(&r, 2, "unexpected argument 'branch'");
	cli(b, &r, "list", "--labels", "--label", "branch=none", NULL);
	expect_refused(&r, 0, "no stored run matches the filters");
	cli(b, &r, "list", "--labels", "--label", "branch", NULL);
	expect_refused(&r, 2, "bad label 'branch'");
	cli(b, &r, "list", "--labels", "--limit", "0", NULL);
	expect_refused(&r, 2, "--limit");
	cli(b, &r, "list", "--help", NULL);
	expect(&r, 0, "topdown list --labels [KEY]", NULL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		ON_BOTH(test_query_modes),
		ON_BOTH(test_query_pooled),
		ON_BOTH(test_query_bad_input),
		ON_BOTH(test_ambiguous_run_id),
		ON_BOTH(test_colors_only_on_a_terminal),
		ON_BOTH(test_compare),
		ON_BOTH(test_compare_bad_input),
		ON_BOTH(test_gc),
		ON_BOTH(test_export),
		ON_BOTH(test_export_streams),
		ON_BOTH(test_list_labels),
		ON_BOTH(test_list_labels_bad_input),
		BACKEND_TEST(test_every_command_takes_dsn, "postgresql"),
		BACKEND_TEST(test_environment, "postgresql"),
		cmocka_unit_test(test_collect_takes_dsn),
	};

	(void)argc;
	return run_on_backends("query commands", tests, sizeof(tests) / sizeof(tests[0]), argv[0]);
}
