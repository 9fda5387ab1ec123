// SPDX-License-Identifier: BSD-3-Clause
/*
 * The topdown binary as a user runs it: collect and list, their JSON, and
 * every bad-input path (one line on stderr naming the fix, a non-zero
 * exit, and no run stored). Needs root for the collecting tests.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "e2e.h"
#include "labels.h"
#include "pmu.h"
#include "storage.h"

static char db_path[64];

/* Runs topdown with args (NULL-terminated, without the program name). */
static void run_topdown(struct cli_result *r, const char *const *args)
{
	const char *argv[32] = { "topdown" };

	for (int i = 0; args[i] && i < 30; i++)
		argv[i + 1] = args[i];
	cli_run(argv, r);
}

static size_t stored_runs(void)
{
	struct td_store_config config = { .path = db_path };
	struct td_run_summary *runs = NULL;
	struct td_run_filter filter = { 0 };
	struct td_store *store;
	char err[512];
	size_t count = 0;

	store = td_store_open(&config, err, sizeof(err));
	if (!store)
		fail_msg("%s", err);
	assert_int_equal(td_store_list_runs(store, &filter, &runs, &count, err, sizeof(err)), 0);
	td_run_summaries_free(runs, count);
	td_store_close(store);
	return count;
}

static size_t count_lines(const char *text)
{
	size_t n = 0;

	for (; *text; text++)
		n += *text == '\n';
	return n;
}

/* A bad invocation: non-zero exit, one line naming `expect`, nothing stored. */
static void expect_refusal(const char *const *args, const char *expect)
{
	struct cli_result r;
	size_t before = stored_runs();

	run_topdown(&r, args);
	print_message("  %s", r.err);
	assert_int_not_equal(r.status, 0);
	assert_int_equal(count_lines(r.err), 1);
	if (!strstr(r.err, expect))
		fail_msg("stderr lacks '%s': %s", expect, r.err);
	assert_int_equal(stored_runs(), before);
}

static int setup(void **state)
{
	(void)state;
	snprintf(db_path, sizeof(db_path), "/tmp/td-cli-%d.db", getpid());
	return 0;
}

static int teardown(void **state)
{
	char path[80];

	(void)state;
	unlink(db_path);
	snprintf(path, sizeof(path), "%s-wal", db_path);
	unlink(path);
	snprintf(path, sizeof(path), "%s-shm", db_path);
	unlink(path);
	return 0;
}

static void test_bad_arguments_are_refused(void **state)
{
	(void)state;
	{ const char *a[] = { "collect", "--pid", "1", "--duration", "5x", "--db", db_path, NULL }; expect_refusal(a, "bad duration '5x' for --duration"); }
	{ const char *a[] = { "collect", "--pid", "1", "--label", "novalue", "--db", db_path, NULL }; expect_refusal(a, "--label git_branch=unstable"); }
	{ const char *a[] = { "collect", "--duration", "1s", "--db", db_path, NULL }; expect_refusal(a, "name exactly one target"); }
	{ const char *a[] = { "collect", "--pid", "1", "--level", "7", "--db", db_path, NULL }; expect_refusal(a, "--level"); }
	{ const char *a[] = { "collect", "--pid", "1", "--events", "no-such-event", "--db", db_path, NULL }; expect_refusal(a, "unknown event 'no-such-event'"); }
	{ const char *a[] = { "list", "--last", "yesterday", "--db", db_path, NULL }; expect_refusal(a, "bad duration 'yesterday' for --last"); }
	{ const char *a[] = { "frobnicate", NULL }; expect_refusal(a, "unknown command 'frobnicate'"); }
	{ const char *a[] = { "collect", "--pid", "1", "--frob", NULL }; expect_refusal(a, "unknown option, or one missing its value: '--frob'"); }
	{ const char *a[] = { "list", "--limit", NULL }; expect_refusal(a, "--limit needs a value: --limit N"); }
	{ const char *a[] = { "list", "--limit", "0", "--db", db_path, NULL }; expect_refusal(a, "--limit"); }
	{ const char *a[] = { "collect", "--pid", "1", "--level", "2", "--events", "task-clock", "--db", db_path, NULL };
	  expect_refusal(a, "--events replaces the Top-Down counters"); }
	{ const char *a[] = { "collect", "--pid", "1", "--cpu-model", "pentium", "--db", db_path, NULL };
	  struct cli_result r;

	  expect_refusal(a, "unknown CPU model 'pentium'; known models: ");
	  run_topdown(&r, a);
	  assert_int_equal(r.status, 2);
	  assert_non_null(strstr(r.err, " spr, "));
	  assert_non_null(strstr(r.err, " neoverse-v2, ")); }
}

static void test_collect_errors_store_nothing(void **state)
{
	pid_t gone = e2e_dead_pid();
	char pid[16];

	(void)state;
	e2e_require_bpf();
	snprintf(pid, sizeof(pid), "%d", gone);
	{ const char *a[] = { "collect", "--process", "no-such-proc-x", "--duration", "1s", "--db", db_path, NULL };
	  expect_refusal(a, "no running process is named 'no-such-proc-x'"); }
	{ const char *a[] = { "collect", "--pid", pid, "--duration", "1s", "--db", db_path, NULL };
	  expect_refusal(a, "no process with pid"); }
	{ const char *a[] = { "collect", "--pid", "1", "--duration", "1s", "--db", "/proc/no/such/dir/x.db", NULL };
	  expect_refusal(a, "--db"); }
	if (access("/sys/bus/event_source/devices/cpu", F_OK)) {
		const char *a[] = { "collect", "--pid", "1", "--events", "cycles", "--duration", "1s", "--db", db_path, NULL };

		expect_refusal(a, "no such hardware counter");
	}
}

/* Dropping root shows the privilege message (setpriv is util-linux's). */
static void test_unprivileged_collect_is_refused(void **state)
{
	const char *a[] = { "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
			    NULL, "collect", "--pid", "1", "--duration", "1s", "--db", "/tmp/td-unpriv.db", NULL };
	char exe[4096];
	struct cli_result r;
	int status;
	pid_t pid;

	(void)state;
	e2e_require_bpf();
	if (!realpath(cli_topdown_path(), exe))
		fail_msg("no binary at %s", cli_topdown_path());
	a[4] = exe;
	pid = fork();
	if (pid == 0) {
		const char *argv[16] = { "setpriv" };
		int err = open("/tmp/td-unpriv.err", O_WRONLY | O_CREAT | O_TRUNC, 0644);

		for (int i = 0; a[i]; i++)
			argv[i + 1] = a[i];
		dup2(err, STDERR_FILENO);
		execvp("setpriv", (char **)argv);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	cli_slurp(open("/tmp/td-unpriv.err", O_RDONLY), r.err, sizeof(r.err));
	unlink("/tmp/td-unpriv.err");
	print_message("  %s", r.err);
	assert_int_equal(WEXITSTATUS(status), 1);
	assert_non_null(strstr(r.err, "needs root, or CAP_BPF and CAP_PERFMON"));
	assert_int_equal(count_lines(r.err), 1);
}

static json_t *find_thread(json_t *threads, const char *comm)
{
	size_t i;
	json_t *t;

	json_array_foreach(threads, i, t)
		if (!strcmp(json_string_value(json_object_get(t, "comm")), comm))
			return t;
	return NULL;
}

/* collect's text: one line per thread group, short_* folded with its counts, then the busiest threads. */
static void test_collect_text_folds_thread_groups(void **state)
{
	char pid[16], name[16], *line;
	struct cli_result r;
	size_t threads = 0, exited = 0;
	pid_t child;
	int go;

	(void)state;
	e2e_require_bpf();
	for (int all = 0; all < 2; all++) {
		/* short threads, two at a time, for longer than the window */
		child = e2e_spawn_workload(&go, NULL, "--duration-ms", "3000", "--short-threads", "4000",
					   "--short-work-us", "500", NULL);
		assert_int_equal(write(go, "g", 1), 1);
		snprintf(pid, sizeof(pid), "%d", child);
		{
			const char *a[] = { "collect", "--pid", pid, "--duration", "1500ms", "--db", db_path,
					    all ? "--all-threads" : NULL, NULL };
			run_topdown(&r, a);
		}
		close(go);
		waitpid(child, NULL, 0);
		assert_int_equal(r.status, 0);
		line = strstr(r.out, "\nshort_* ");
		assert_non_null(line);
		assert_int_equal(sscanf(line, " %15s %zu", name, &threads), 2);
		assert_true(threads > 30 && threads <= 4000); /* more than the thread table shows */
		assert_non_null(strstr(line, "exited)"));
		assert_int_equal(sscanf(strstr(line, "(") + 1, "%zu exited", &exited), 1);
		assert_true(exited > 0 && exited <= threads);
		assert_non_null(strstr(r.out, "\nspinner "));
		if (all)
			assert_null(strstr(r.out, "more threads"));
		else
			assert_non_null(strstr(r.out, "more threads (--all-threads lists them, --json too)"));
	}
}

/* A target none of whose threads ran (the workload held before its start, asleep): stored, and said. */
static void test_collect_idle_target_says_so(void **state)
{
	char pid[16];
	struct cli_result r;
	pid_t child;
	int go;

	(void)state;
	e2e_require_bpf();
	child = e2e_spawn_workload(&go, NULL, "--duration-ms", "100", NULL);
	snprintf(pid, sizeof(pid), "%d", child);
	{
		const char *a[] = { "collect", "--pid", pid, "--duration", "300ms", "--db", db_path, NULL };
		run_topdown(&r, a);
	}
	close(go); /* EOF: the workload ends without starting */
	waitpid(child, NULL, 0);
	assert_int_equal(r.status, 0);
	if (!strstr(r.out, ", 0 threads")) {
		print_message("SKIP: the held workload ran during the window; nothing to say\n");
		skip();
	}
	assert_non_null(strstr(r.err, "no thread of td-workload ran during the window"));
}

/* kthreadd (pid 2) runs no code of its own: refused before any window, exit 2. */
static void test_collect_refuses_kernel_thread(void **state)
{
	const char *a[] = { "collect", "--pid", "2", "--duration", "30s", "--db", db_path, NULL };
	struct cli_result r;

	(void)state;
	expect_refusal(a, "pid 2 (kthreadd) is a kernel thread");
	run_topdown(&r, a);
	assert_int_equal(r.status, 2);
}

static void test_collect_json_and_list(void **state)
{
	char pid[16];
	struct cli_result r;
	json_error_t jerr;
	json_t *root, *labels, *spinner;
	pid_t child;
	int go;

	(void)state;
	e2e_require_bpf();
	/* outlives the window however slowly collect starts: a target that exits ends the window */
	child = e2e_spawn_workload(&go, NULL, "--duration-ms", "60000", "--short-threads", "20", NULL);
	assert_int_equal(write(go, "g", 1), 1);
	snprintf(pid, sizeof(pid), "%d", child);
	{
		const char *a[] = { "collect", "--pid", pid, "--duration", "1500ms", "--interval", "500ms", "--json",
				    "--label", "git_branch=unstable", "--label", "node=override", "--db", db_path, NULL };
		run_topdown(&r, a);
	}
	close(go);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_int_equal(r.status, 0);
	root = json_loads(r.out, 0, &jerr);
	if (!root)
		fail_msg("collect --json is not JSON (%s): %.200s", jerr.text, r.out);
	assert_true(json_real_value(json_object_get(root, "duration_s")) > 1.4);
	assert_false(json_is_true(json_object_get(root, "targets_exited")));
	assert_string_equal(json_string_value(json_object_get(root, "stored_in")), db_path);
	assert_true(json_is_null(json_object_get(root, "spooled_in")));
	assert_int_equal(json_integer_value(json_object_get(root, "dropped")), 0);
	assert_int_equal(json_integer_value(json_object_get(root, "intervals")), 3);
	labels = json_object_get(root, "labels");
	assert_string_equal(json_string_value(json_object_get(labels, "git_branch")), "unstable");
	assert_string_equal(json_string_value(json_object_get(labels, "node")), "override"); /* user wins */
	assert_string_equal(json_string_value(json_object_get(labels, "collector")), "bpf");
	assert_string_equal(json_string_value(json_object_get(labels, "pid")), pid);
	spinner = find_thread(json_object_get(root, "threads"), "spinner");
	assert_non_null(spinner);
	assert_true(json_integer_value(json_object_get(spinner, "oncpu_ns")) > 0);
	assert_non_null(json_object_get(json_object_get(spinner, "counters"), "task-clock"));
	/*
	 * A software event counts all the time: its running fraction is 1, less the share of
	 * slices whose switch-in the kernel did not show (docs/DESIGN.md, "On-CPU time"; on
	 * this kind of VM, any share at all). The count is extrapolated over them, so whatever
	 * the fraction, task-clock is the spinner's on-CPU time, within the 15% by which perf's
	 * clock and the scheduler's drift apart on a KVM guest.
	 */
	{
		double fraction = json_real_value(json_object_get(json_object_get(spinner, "running_fraction"),
								  "task-clock"));
		double rate = json_real_value(json_object_get(json_object_get(spinner, "counters"), "task-clock")) /
			      (double)json_integer_value(json_object_get(spinner, "oncpu_ns"));

		print_message("  spinner task-clock: running fraction %.4f, %.4f of its on-CPU time\n", fraction, rate);
		assert_true(fraction > 0 && fraction <= 1.0);
		assert_true(rate > 0.85 && rate < 1.15);
	}
	assert_non_null(find_thread(json_object_get(root, "threads"), "io_thd_1"));

	{
		const char *a[] = { "list", "--label", "git_branch=unstable", "--json", "--db", db_path, NULL };
		run_topdown(&r, a);
	}
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, json_string_value(json_object_get(root, "run_id"))));
	{
		const char *a[] = { "list", "--label", "git_branch=other", "--db", db_path, NULL };
		run_topdown(&r, a);
	}
	assert_non_null(strstr(r.out, "(no runs match)"));
	json_decref(root);
}

static size_t count_matches(const char *text, const char *needle)
{
	size_t n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/*
 * On a host without a PMU (this VM), a Top-Down collection still stores
 * the scheduling figures and software counters, with no metric rows, and
 * says why once.
 */
static void test_level2_without_pmu_stores_threads_only(void **state)
{
	struct td_store_config config = { .path = db_path };
	char pid[16], why[256], err[512];
	struct td_store *store;
	struct td_run *run = NULL;
	struct cli_result r;
	json_t *root;
	pid_t child;
	int go;

	(void)state;
	e2e_require_bpf();
	if (td_pmu_hardware_available(why, sizeof(why))) {
		print_message("SKIP: this host has hardware counters; the no-PMU path needs a host without them\n");
		skip();
	}
	child = e2e_spawn_workload(&go, NULL, "--duration-ms", "2000", NULL);
	assert_int_equal(write(go, "g", 1), 1);
	snprintf(pid, sizeof(pid), "%d", child);
	{
		const char *a[] = { "collect", "--pid", pid, "--level", "2", "--duration", "1s", "--interval", "500ms",
				    "--json", "--db", db_path, NULL };
		run_topdown(&r, a);
	}
	close(go);
	waitpid(child, NULL, 0);
	print_message("  %s", r.err);
	assert_int_equal(r.status, 0);
	assert_int_equal(count_lines(r.err), 1);
	assert_int_equal(count_matches(r.err, "TMA unavailable"), 1);
	assert_non_null(strstr(r.err, "no hardware PMU"));
	root = json_loads(r.out, 0, NULL);
	assert_non_null(root);
	assert_non_null(json_object_get(json_object_get(root, "tma"), "unavailable"));
	assert_string_equal(json_string_value(json_object_get(json_object_get(root, "labels"), "tma_level")), "2");

	store = td_store_open(&config, err, sizeof(err));
	assert_non_null(store);
	if (td_store_read_run(store, json_string_value(json_object_get(root, "run_id")), &run, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(run->level, 2);
	assert_true(run->nr_threads >= 2); /* the workload's main thread and spinner at least */
	assert_int_equal(run->nr_metrics, 0);
	assert_int_equal(run->nr_events, 1);
	assert_string_equal(run->event_names[0], "task-clock");
	td_run_free(run);
	td_store_close(store);
	json_decref(root);
}

/* SIGINT ends the window early; the run is kept and marked partial. */
static void test_interrupted_collect_stores_partial_run(void **state)
{
	char out_name[] = "/tmp/td-cli-int-XXXXXX", buf[4096];
	int out = mkstemp(out_name), status;
	size_t before;
	pid_t pid;

	(void)state;
	e2e_require_bpf();
	before = stored_runs();
	pid = fork();
	if (pid == 0) {
		const char *argv[] = { "topdown", "collect", "--pid", "1", "--duration", "60s", "--db", db_path, NULL };

		dup2(out, STDOUT_FILENO);
		execv(cli_topdown_path(), (char **)argv);
		_exit(127);
	}
	usleep(1500 * 1000);
	kill(pid, SIGINT);
	waitpid(pid, &status, 0);
	cli_slurp(out, buf, sizeof(buf));
	unlink(out_name);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_non_null(strstr(buf, "partial: stopped early"));
	assert_int_equal(stored_runs(), before + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_arguments_are_refused),
		cmocka_unit_test(test_collect_errors_store_nothing),
		cmocka_unit_test(test_unprivileged_collect_is_refused),
		cmocka_unit_test(test_collect_json_and_list),
		cmocka_unit_test(test_collect_text_folds_thread_groups),
		cmocka_unit_test(test_collect_idle_target_says_so),
		cmocka_unit_test(test_collect_refuses_kernel_thread),
		cmocka_unit_test(test_level2_without_pmu_stores_threads_only),
		cmocka_unit_test(test_interrupted_collect_stores_partial_run),
	};

	e2e_filter_tests();
	return cmocka_run_group_tests(tests, setup, teardown);
}
