// SPDX-License-Identifier: BSD-3-Clause
/*
 * `topdown agent` end to end, as root with BPF and software counters:
 * windows stored as runs (read back through storage), SIGTERM, targets
 * that come and go, thread churn, flat memory, and bad input.
 *
 * Workloads run under a name of their own (a link to td-workload), so
 * a colleague's td-workload running at the same time is never a target.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <bpf/bpf.h>
#include <sqlite3.h>

#include "backends.h"
#include "cli.h"
#include "collector.h"
#include "e2e.h"
#include "labels.h"
#include "rotation.h"
#include "storage.h"

#define NS_PER_SEC 1000000000ll

static char dir[64], db_path[96], spool_path[96], log_path[96], name[16], link_path[4096];
static const char *store_flag, *store_value; /* where the agent stores: --db db_path, or --dsn */

static int setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/td-agent-e2e-%d", getpid());
	mkdir(dir, 0700);
	snprintf(log_path, sizeof(log_path), "%s/agent.log", dir);
	return 0;
}

static int teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

/* A fresh database, spool, log and workload name for each test. */
static void fresh(const char *test)
{
	snprintf(db_path, sizeof(db_path), "%s/%s.db", dir, test);
	snprintf(spool_path, sizeof(spool_path), "%s/%s-spool.db", dir, test);
	snprintf(log_path, sizeof(log_path), "%s/%s.log", dir, test);
	snprintf(name, sizeof(name), "tdw%d%.4s", getpid() % 100000, test);
	store_flag = "--db";
	store_value = db_path;
	e2e_workload_link(name, link_path, sizeof(link_path));
}

static void done(void)
{
	e2e_workload_unlink(link_path);
}

/*
 * Starts `topdown agent args... --db --spool`, stdout and stderr into
 * log_path; without_sys_admin: root without CAP_SYS_ADMIN (dropped from
 * the bounding set, so the exec does not grant it).
 */
static pid_t agent_start_as(const char *const *args, bool without_sys_admin)
{
	const char *argv[48] = { "topdown", "agent" };
	int argc = 2, log = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0600);
	pid_t pid;

	for (int i = 0; args[i] && argc < 40; i++)
		argv[argc++] = args[i];
	argv[argc++] = store_flag;
	argv[argc++] = store_value;
	argv[argc++] = "--spool";
	argv[argc++] = spool_path;
	argv[argc] = NULL;
	assert_true(log >= 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(log, STDOUT_FILENO);
		dup2(log, STDERR_FILENO);
		if (without_sys_admin && prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0))
			_exit(126);
		execv(cli_topdown_path(), (char **)argv);
		_exit(127);
	}
	close(log);
	return pid;
}

static pid_t agent_start(const char *const *args)
{
	return agent_start_as(args, false);
}

static int agent_wait(pid_t pid)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void release(int go)
{
	assert_int_equal(write(go, "g", 1), 1);
	close(go);
}

static int reap(pid_t pid)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * The agent (args, ending with --windows) run to its end beside this
 * test's workload: a spinner, and one io thread unless spinner_only.
 * The agent's exit status; the workload's pid in *worker_pid (NULL: not wanted).
 */
static int agent_beside_workload(const char *const *args, bool spinner_only, pid_t *worker_pid)
{
	pid_t worker, agent;
	int go, status;

	worker = e2e_spawn_workload_at(link_path, &go, NULL, "--duration-ms", "60000",
				       spinner_only ? "--io-threads" : NULL, "0", NULL);
	release(go);
	agent = agent_start(args);
	status = agent_wait(agent);
	kill(worker, SIGTERM);
	reap(worker);
	if (worker_pid)
		*worker_pid = worker;
	return status;
}

/* The runs of process (NULL: all) in store, newest first. */
static struct td_run_summary *list_runs_in(struct td_store *store, const char *process, size_t *count)
{
	struct td_run_filter filter = { .process = process };
	struct td_run_summary *runs = NULL;
	char err[512];

	if (td_store_list_runs(store, &filter, &runs, count, err, sizeof(err)))
		fail_msg("%s", err);
	return runs;
}

/* The same in the SQLite file at db_path. */
static struct td_run_summary *list_runs(const char *process, size_t *count)
{
	struct td_store_config config = { .path = db_path };
	struct td_run_summary *runs;
	struct td_store *store;
	char err[512];

	store = td_store_open(&config, err, sizeof(err));
	if (!store)
		fail_msg("%s", err);
	runs = list_runs_in(store, process, count);
	td_store_close(store);
	return runs;
}

static size_t count_in(const char *text, const char *what)
{
	size_t n = 0;

	for (const char *at = text; (at = strstr(at, what)); at += strlen(what))
		n++;
	return n;
}

static void read_log(char *buf, size_t len)
{
	int fd = open(log_path, O_RDONLY);

	assert_true(fd >= 0);
	cli_slurp(fd, buf, len);
}

/* Waits (up to 30 s: a loaded host starts the agent slowly) until the log says what. */
static void wait_for_log(const char *what)
{
	char log[4096];

	for (int i = 0; i < 300; i++) {
		read_log(log, sizeof(log));
		if (strstr(log, what))
			return;
		usleep(100 * 1000);
	}
	fail_msg("the agent's log never said '%s': %s", what, log);
}

static long label_number(const struct td_run_summary *run, const char *key)
{
	const char *value = td_labels_get(&run->labels, key);

	if (!value)
		fail_msg("run %s has no label %s", run->id, key);
	return strtol(value, NULL, 10);
}

/* Until process has at least want runs stored, or timeout_s passes. */
static size_t wait_for_runs(const char *process, size_t want, int timeout_s)
{
	size_t count = 0;

	for (int i = 0; i < timeout_s * 10; i++) {
		struct td_run_summary *runs = list_runs(process, &count);

		td_run_summaries_free(runs, count);
		if (count >= want)
			break;
		usleep(100 * 1000);
	}
	return count;
}

/* --- one run per window per process --- */

static void test_one_run_per_window_per_process(void **state)
{
	const char *args[] = { "--process", NULL, "--process", "no-such-proc-x", "--every", "1s", "--windows", "3",
			       "--label", "team=perf", NULL };
	pid_t workers[2], agent;
	int go[2];
	size_t count, per_pid[2] = { 0 };
	struct td_run_summary *runs;

	(void)state;
	e2e_require_bpf();
	fresh("windows");
	args[1] = name;
	for (int i = 0; i < 2; i++) {
		workers[i] = e2e_spawn_workload_at(link_path, &go[i], NULL, "--duration-ms", "8000", "--io-threads", "1", NULL);
		release(go[i]);
	}
	setenv("TOPDOWN_LABELS", "team=env,tier=test", 1);
	agent = agent_start(args);
	unsetenv("TOPDOWN_LABELS");
	assert_int_equal(agent_wait(agent), 0);
	for (int i = 0; i < 2; i++) {
		kill(workers[i], SIGTERM);
		reap(workers[i]);
	}

	runs = list_runs(name, &count);
	print_message("  %zu runs of %s in 3 windows of 1 s, two processes\n", count, name);
	assert_int_equal(count, 6);
	for (size_t i = 0; i < count; i++) {
		const struct td_run_summary *run = &runs[i];
		double seconds = (run->ended_ns - run->started_ns) / 1e9;
		long pid = label_number(run, "pid");

		assert_false(run->partial);
		assert_true(seconds > 0.9 && seconds < 1.5); /* a window, drains and storing included */
		assert_true(run->nr_threads >= 2);          /* the spinner and the io thread */
		assert_string_equal(td_labels_get(&run->labels, "team"), "perf"); /* --label wins */
		assert_string_equal(td_labels_get(&run->labels, "tier"), "test"); /* TOPDOWN_LABELS */
		assert_string_equal(td_labels_get(&run->labels, "collector"), "bpf");
		assert_non_null(td_labels_get(&run->labels, "agent.cpu_ms"));
		assert_non_null(td_labels_get(&run->labels, "agent.bpf_ms"));
		assert_non_null(td_labels_get(&run->labels, "agent.overhead_pct"));
		assert_string_equal(td_labels_get(&run->labels, "agent.duty"), "1.000");
		assert_null(td_labels_get(&run->labels, "pmu_groups")); /* no groups take turns */
		assert_null(td_labels_get(&run->labels, "rotation_offset"));
		per_pid[0] += pid == workers[0];
		per_pid[1] += pid == workers[1];
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(runs[j].id, run->id);
	}
	assert_int_equal(per_pid[0], 3);
	assert_int_equal(per_pid[1], 3);
	/* a process's windows follow each other without overlapping */
	for (size_t i = 0; i < count; i++)
		for (size_t j = i + 1; j < count; j++)
			if (label_number(&runs[i], "pid") == label_number(&runs[j], "pid"))
				assert_true(runs[i].ended_ns <= runs[j].started_ns || runs[j].ended_ns <= runs[i].started_ns);
	td_run_summaries_free(runs, count);
	done();
}

/* --system-wide: one run per window, every thread of the system in it, the workload's among them. */
static void test_system_wide_one_run_per_window(void **state)
{
	const char *args[] = { "--system-wide", "--every", "500ms", "--windows", "2", NULL };
	struct td_run_summary *runs;
	struct td_store_config config = { .path = db_path };
	struct td_store *store;
	struct td_run *run;
	size_t count, of_worker = 0;
	char err[512];
	pid_t worker;

	(void)state;
	e2e_require_bpf();
	fresh("system");
	assert_int_equal(agent_beside_workload(args, false, &worker), 0);

	runs = list_runs(NULL, &count);
	assert_int_equal(count, 2);
	for (size_t i = 0; i < count; i++) {
		assert_string_equal(runs[i].process, "system-wide");
		assert_null(td_labels_get(&runs[i].labels, "pid"));
	}
	store = td_store_open(&config, err, sizeof(err));
	assert_non_null(store);
	assert_int_equal(td_store_read_run(store, runs[0].id, &run, err, sizeof(err)), 0);
	for (size_t i = 0; i < run->nr_threads; i++)
		of_worker += (pid_t)run->threads[i].pid == worker;
	print_message("  %zu threads in the last window, %zu of the workload\n", run->nr_threads, of_worker);
	assert_true(of_worker >= 2); /* the spinner and the io threads */
	assert_true(run->nr_threads > of_worker);
	td_run_free(run);
	td_store_close(store);
	td_run_summaries_free(runs, count);
	done();
}

/* --- SIGTERM mid-window --- */

static void test_sigterm_stores_partial_window(void **state)
{
	const char *args[] = { "--process", NULL, "--every", "30s", NULL };
	struct td_run_summary *runs;
	size_t count;
	pid_t worker, agent;
	int go;

	(void)state;
	e2e_require_bpf();
	fresh("sigterm");
	args[1] = name;
	worker = e2e_spawn_workload_at(link_path, &go, NULL, "--duration-ms", "6000", NULL);
	release(go);
	agent = agent_start(args);
	wait_for_log("following '"); /* up, its handlers in place: a SIGTERM before them would kill it */
	sleep(1);
	kill(agent, SIGTERM);
	assert_int_equal(agent_wait(agent), 0);
	kill(worker, SIGTERM);
	reap(worker);

	runs = list_runs(name, &count);
	assert_int_equal(count, 1);
	print_message("  partial window of %.2f s\n", (runs[0].ended_ns - runs[0].started_ns) / 1e9);
	assert_true(runs[0].partial);
	assert_true(runs[0].ended_ns - runs[0].started_ns < 10 * NS_PER_SEC);
	assert_true(runs[0].nr_threads >= 1);
	td_run_summaries_free(runs, count);
	done();
}

/* --- targets that come and go --- */

/*
 * Absent at first, then one process, gone, a new one (the restart), gone:
 * each change is one log line, however many windows it lasts, and both
 * processes have runs under the one name.
 */
static void test_restart_followed_absent_waited_for(void **state)
{
	const char *args[] = { "--process", NULL, "--every", "500ms", "--log", log_path, NULL };
	char log[16384], waiting[64];
	size_t count, of[2] = { 0 };
	struct td_run_summary *runs;
	pid_t workers[2], agent;
	int go;

	(void)state;
	e2e_require_bpf();
	fresh("restart");
	args[1] = name;
	agent = agent_start(args);
	sleep(2); /* four windows with nothing to follow */
	for (int i = 0; i < 2; i++) {
		workers[i] = e2e_spawn_workload_at(link_path, &go, NULL, "--duration-ms", "1500", NULL);
		release(go);
		assert_int_equal(reap(workers[i]), 0);
		sleep(2); /* gone for four windows */
	}
	kill(agent, SIGTERM);
	assert_int_equal(agent_wait(agent), 0);

	read_log(log, sizeof(log));
	print_message("%s", log);
	snprintf(waiting, sizeof(waiting), "no process named '%s' is running; waiting for one", name);
	assert_int_equal(count_in(log, waiting), 3);
	assert_int_equal(count_in(log, "following '"), 3); /* the start line and the two appearances */
	runs = list_runs(name, &count);
	for (size_t i = 0; i < count; i++) {
		of[0] += label_number(&runs[i], "pid") == workers[0];
		of[1] += label_number(&runs[i], "pid") == workers[1];
	}
	print_message("  runs: %zu of the first process, %zu of the restarted one\n", of[0], of[1]);
	assert_true(of[0] >= 2 && of[1] >= 2); /* 1.5 s each, in 0.5 s windows */
	assert_int_equal(of[0] + of[1], count);
	td_run_summaries_free(runs, count);
	done();
}

/* SIGHUP: the log moved away (logrotate) is reopened at its path. */
static void test_sighup_reopens_log(void **state)
{
	const char *args[] = { "--process", NULL, "--every", "200ms", "--log", log_path, NULL };
	char rotated[128], log[4096];
	pid_t agent;

	(void)state;
	e2e_require_bpf();
	fresh("sighup");
	args[1] = name;
	agent = agent_start(args);
	/* Its signal handlers come before its first log line; a SIGHUP before them would end it. */
	wait_for_log("following '");
	snprintf(rotated, sizeof(rotated), "%s.1", log_path);
	assert_int_equal(rename(log_path, rotated), 0);
	kill(agent, SIGHUP);
	usleep(500 * 1000);
	kill(agent, SIGTERM);
	assert_int_equal(agent_wait(agent), 0);
	read_log(log, sizeof(log));
	assert_non_null(strstr(log, "log reopened"));
	assert_non_null(strstr(log, "stopped after"));
	unlink(rotated);
	done();
}

/* --- thread churn --- */

/*
 * 100,000 threads of 1 us of work, two at a time, in 2 s windows: each
 * thread exits exactly once, so the exited threads of the process's runs
 * and the threads reported lost add up to what the workload started
 * (100,000 short ones, the spinner, the spawner and the main thread).
 */
static void test_thread_churn_loses_nothing_unreported(void **state)
{
	const char *args[] = { "--process", NULL, "--every", "2s", NULL };
	const long short_threads = 100000, others = 3;
	long exited = 0, dropped = 0, rows = 0;
	struct td_run_summary *runs;
	struct timespec t0, t1;
	size_t count;
	pid_t worker, agent;
	int go;

	(void)state;
	e2e_require_bpf();
	fresh("churn");
	args[1] = name;
	worker = e2e_spawn_workload_at(link_path, &go, NULL, "--duration-ms", "1", "--io-threads", "0",
				       "--short-threads", "100000", "--short-work-us", "1", NULL);
	agent = agent_start(args);
	wait_for_log("following '"); /* attached, following the held workload */
	sleep(1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	release(go);
	assert_int_equal(reap(worker), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	sleep(3); /* the last window with its exits ends */
	kill(agent, SIGTERM);
	assert_int_equal(agent_wait(agent), 0);

	runs = list_runs(name, &count);
	for (size_t i = 0; i < count; i++) {
		exited += label_number(&runs[i], "agent.threads_exited");
		dropped += runs[i].dropped;
		rows += runs[i].nr_threads;
	}
	print_message("  %ld threads in %.1f s: %ld exited in %zu runs (%ld thread rows over the windows), %ld lost\n",
		      short_threads + others, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, exited, count,
		      rows, dropped);
	assert_int_equal(exited + dropped, short_threads + others);
	td_run_summaries_free(runs, count);
	done();
}

/* The spinner's row of a stored run, copied out. */
static struct td_thread_row spinner_row(const char *run_id, size_t *nr_events)
{
	struct td_store_config config = { .path = db_path };
	struct td_store *store = td_store_open(&config, NULL, 0);
	struct td_thread_row row = { .tid = 0 };
	struct td_run *run;
	char err[512];

	assert_non_null(store);
	if (td_store_read_run(store, run_id, &run, err, sizeof(err)))
		fail_msg("%s", err);
	*nr_events = run->nr_events;
	for (size_t i = 0; i < run->nr_threads; i++)
		if (!strcmp(run->threads[i].comm, "spinner"))
			row = run->threads[i];
	td_run_free(run);
	td_store_close(store);
	assert_true(row.tid != 0);
	return row;
}

/* --- the store stalled, deleted, replaced --- */

/* Every run in the SQLite file at path, oldest first. */
static struct td_run_summary *runs_at(const char *path, size_t *count)
{
	struct td_store_config config = { .path = path };
	struct td_run_filter oldest = { .oldest_first = true };
	struct td_run_summary *runs = NULL;
	struct td_store *store;
	char err[512];

	if (!(store = td_store_open(&config, err, sizeof(err))))
		fail_msg("%s", err);
	if (td_store_list_runs(store, &oldest, &runs, count, err, sizeof(err)))
		fail_msg("%s", err);
	td_store_close(store);
	return runs;
}

/* The largest on-CPU time of a thread of run (in the file at path) over its window's length. */
static double busiest_thread_share(const char *path, const struct td_run_summary *summary)
{
	struct td_store_config config = { .path = path };
	struct td_store *store = td_store_open(&config, NULL, 0);
	double wall = (double)(summary->ended_ns - summary->started_ns), most = 0;
	struct td_run *run;
	char err[512];

	assert_non_null(store);
	if (td_store_read_run(store, summary->id, &run, err, sizeof(err)))
		fail_msg("%s", err);
	for (size_t i = 0; i < run->nr_threads; i++)
		if (run->threads[i].oncpu_ns / wall > most)
			most = run->threads[i].oncpu_ns / wall;
	td_run_free(run);
	td_store_close(store);
	return most;
}

/* More than a 1 s window runs to when late (one of an ASan build on a host
 * with a load of 24 ran past 3 s), less than the 12 s stall: no window
 * swallows the stall. */
#define LONGEST_WINDOW_NS (6 * NS_PER_SEC)

/*
 * Runs that follow each other: each starts where the one before it ended,
 * none is longer than LONGEST_WINDOW_NS, and no thread is on CPU for longer
 * than its run's window, give or take the boundary's own width: the
 * scheduler's runtime lag at each end (a tick, 4 ms at HZ=250), and the
 * time between reading one CPU's counts and the instant that ends the
 * window (the other CPU read, the window's rows built), which an ASan
 * build on a loaded host stretched to 15 ms (101.5% of a 1.009 s window).
 * BOUNDARY_SLACK allows 2% of the window for both; a window that swallows
 * a stall, as before the writer thread, showed 141% to 596%.
 */
#define BOUNDARY_SLACK 0.02
static void assert_contiguous(const char *path, const struct td_run_summary *runs, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		int64_t wall = runs[i].ended_ns - runs[i].started_ns;
		double share = busiest_thread_share(path, &runs[i]);

		print_message("  window %zu: %.3f s, %s after the last; busiest thread %.1f%% on CPU; stored %s ms late\n",
			      i, wall / 1e9, i ? (runs[i].started_ns == runs[i - 1].ended_ns ? "right" : "NOT right") : "-",
			      share * 100, td_labels_get(&runs[i].labels, "agent.store_delay_ms") ?: "0");
		assert_true(wall > 0 && wall < LONGEST_WINDOW_NS);
		assert_true(share * wall <= wall + (2 * 4e6 > BOUNDARY_SLACK * wall ? 2 * 4e6 : BOUNDARY_SLACK * wall));
		if (i)
			assert_true(runs[i].started_ns == runs[i - 1].ended_ns);
	}
}

/*
 * Another process holds the database (BEGIN EXCLUSIVE) for 12 s, more
 * than twice SQLite's 5 s busy timeout, so that at least one write fails
 * and its runs go to the spool: windows still end at their boundaries,
 * each with its own counts (no thread above 100% of its window), one
 * right after the other; the stall is a delay in storing, said in the
 * log and on the runs stored late; in the end every window is stored.
 */
static void test_stalled_store_keeps_each_window_its_own(void **state)
{
	const char *args[] = { "--process", NULL, "--every", "1s", "--windows", "18", NULL };
	struct td_run_summary *runs;
	size_t count, late = 0;
	sqlite3 *holder = NULL;
	pid_t worker, agent;
	char log[8192];
	int go;

	(void)state;
	e2e_require_bpf();
	fresh("stall");
	args[1] = name;
	worker = e2e_spawn_workload_at(link_path, &go, NULL, "--duration-ms", "60000", "--io-threads", "0", NULL);
	release(go);
	agent = agent_start(args);
	assert_true(wait_for_runs(name, 3, 30) >= 3);
	assert_int_equal(sqlite3_open(db_path, &holder), SQLITE_OK);
	assert_int_equal(sqlite3_exec(holder, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
	sleep(12);
	assert_int_equal(sqlite3_exec(holder, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(holder);
	assert_int_equal(agent_wait(agent), 0);
	kill(worker, SIGTERM);
	reap(worker);

	runs = runs_at(db_path, &count);
	assert_int_equal(count, 18);
	assert_contiguous(db_path, runs, count);
	for (size_t i = 0; i < count; i++)
		late += td_labels_get(&runs[i].labels, "agent.store_delay_ms") != NULL;
	assert_true(late >= 2);
	td_run_summaries_free(runs, count);
	{ /* what `topdown list` shows of the stall */
		const char *argv[] = { "topdown", "list", "--json", "--db", db_path, NULL };
		static struct cli_result listed;

		cli_run(argv, &listed);
		assert_int_equal(listed.status, 0);
		assert_int_equal(count_in(listed.out, "\"agent.store_delay_ms\": \""), late);
	}
	read_log(log, sizeof(log));
	assert_non_null(strstr(log, "the database does not take runs"));
	assert_non_null(strstr(log, "the database takes runs again"));
	done();
}

/*
 * The agent's database changes under it at changed_ns: the file now at
 * db_path holds every window from the one under way then on, one after
 * the other; the file that was there (kept, still linked) and it together
 * hold every window the agent counted.
 */
static void assert_every_window_kept(const char *kept, int64_t changed_ns, size_t windows)
{
	struct td_run_summary *before, *after;
	size_t nr_before, nr_after, distinct;

	before = runs_at(kept, &nr_before);
	after = runs_at(db_path, &nr_after);
	print_message("  %zu windows in the old file, %zu in the new one\n", nr_before, nr_after);
	assert_true(nr_after > 0);
	assert_true(after[0].started_ns <= changed_ns);
	assert_contiguous(db_path, after, nr_after);
	assert_contiguous(kept, before, nr_before);
	/* a run written into the old file after it went is written again into the new one */
	distinct = nr_before + nr_after;
	for (size_t i = 0; i < nr_before; i++)
		for (size_t j = 0; j < nr_after; j++)
			distinct -= !strcmp(before[i].id, after[j].id);
	assert_int_equal(distinct, windows);
	assert_true(!nr_before || before[nr_before - 1].ended_ns >= after[0].started_ns);
	td_run_summaries_free(before, nr_before);
	td_run_summaries_free(after, nr_after);
}

/* The agent's store, once it has taken some windows, deleted or replaced by change(). */
static void store_file_changes(const char *test, void (*change)(const char *kept), const char *said)
{
	const char *args[] = { "--process", NULL, "--every", "1s", "--windows", "8", NULL };
	char kept[160], log[8192];
	int64_t changed_ns;
	pid_t worker, agent;
	struct timespec ts;
	int go;

	e2e_require_bpf();
	fresh(test);
	args[1] = name;
	snprintf(kept, sizeof(kept), "%s/%s-kept.db", dir, test);
	worker = e2e_spawn_workload_at(link_path, &go, NULL, "--duration-ms", "60000", "--io-threads", "0", NULL);
	release(go);
	agent = agent_start(args);
	assert_true(wait_for_runs(name, 2, 30) >= 2);
	assert_int_equal(link(db_path, kept), 0); /* to read the old file afterwards */
	clock_gettime(CLOCK_REALTIME, &ts);
	changed_ns = ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
	change(kept);
	assert_int_equal(agent_wait(agent), 0);
	kill(worker, SIGTERM);
	reap(worker);

	read_log(log, sizeof(log));
	assert_int_equal(count_in(log, said), 1);
	assert_int_equal(access(db_path, F_OK), 0);
	assert_every_window_kept(kept, changed_ns, 8);
	done();
}

static void delete_store(const char *kept)
{
	(void)kept;
	assert_int_equal(unlink(db_path), 0);
}

/* Another topdown database renamed over the agent's. */
static void replace_store(const char *kept)
{
	struct td_store_config config = { .path = NULL };
	char other[192], err[512];
	struct td_store *store;

	snprintf(other, sizeof(other), "%s.other", kept);
	config.path = other;
	if (!(store = td_store_open(&config, err, sizeof(err))))
		fail_msg("%s", err);
	td_store_close(store);
	assert_int_equal(rename(other, db_path), 0);
}

/* rm of the database under the running agent: said once, created anew, no window lost. */
static void test_deleted_store_file_is_created_anew(void **state)
{
	(void)state;
	store_file_changes("deleted", delete_store, "was deleted while the agent had it open");
}

/* Another database moved over the agent's: said once, written from then on, no window lost. */
static void test_replaced_store_file_is_written_from_then_on(void **state)
{
	(void)state;
	store_file_changes("replaced", replace_store, "was replaced by another file");
}

/* --- counter groups --- */

/* Nine software events: more than one group holds (8), so two take turns. */
#define GROUPED_EVENTS "task-clock,cpu-clock,context-switches,cpu-migrations,page-faults," \
		       "minor-faults,major-faults,alignment-faults,emulation-faults"
#define NR_GROUPED_EVENTS 9


/*
 * --events with two counter groups: they take turns within each window
 * (a second each of a 2 s window), so every event of the spinner was
 * counted for at most half of its counted time, and task-clock scaled up
 * to the window comes near the spinner's on-CPU time (loosely: this
 * guest's perf clocks drift from the scheduler's by up to 15%,
 * docs/DESIGN.md).
 *
 * The two halves make at most the whole, less the slices whose switch-in
 * this VM's kernel did not show: no group reads those, and the stored run
 * keeps only what each group read (docs/DESIGN.md, "On-CPU time"). One
 * such slice can take most of a turn, since it lasts until the next drain
 * finds the spinner running (once in CI: group 1 read 0.04 of a window,
 * group 2 0.50). So each group must have read its half less at most
 * what went unread in the window, whichever turn that was in, and it may
 * have read nothing only when a whole turn went unread.
 */
static void test_counter_groups_take_turns_within_a_window(void **state)
{
	const char *args[] = { "--process", NULL, "--every", "2s", "--windows", "2", "--events", GROUPED_EVENTS, NULL };
	struct td_run_summary *runs;
	struct utsname host;
	char offset[16];
	size_t count;

	(void)state;
	e2e_require_bpf();
	fresh("groups");
	args[1] = name;
	assert_int_equal(agent_beside_workload(args, true, NULL), 0);

	assert_int_equal(uname(&host), 0);
	snprintf(offset, sizeof(offset), "%u", td_rotation_host_offset(host.nodename)); /* auto */
	runs = list_runs(name, &count);
	assert_int_equal(count, 2);
	for (size_t i = 0; i < count; i++) {
		size_t nr_events;
		struct td_thread_row row = spinner_row(runs[i].id, &nr_events);
		double first = row.counters[0].running_fraction, last = row.counters[8].running_fraction;
		/* slack: the spinner may run less in one turn than in the other, when others want its CPU */
		double unread = 1.0 - first - last, turn = 0.5, slack = 0.1;
		double scaled_error = fabs(row.counters[0].value - (double)row.oncpu_ns) / row.oncpu_ns;

		assert_int_equal(nr_events, NR_GROUPED_EVENTS);
		assert_string_equal(td_labels_get(&runs[i].labels, "pmu_groups"), "2");
		assert_string_equal(td_labels_get(&runs[i].labels, "rotation_offset"), offset);
		print_message("  window %zu: group 1 counted %.2f of it, group 2 %.2f, unread %.2f; "
			      "task-clock %.3f s, on-CPU %.3f s\n",
			      i, first, last, unread, row.counters[0].value / 1e9, row.oncpu_ns / 1e9);
		for (size_t e = 0; e < NR_GROUPED_EVENTS; e++) {
			double fraction = row.counters[e].running_fraction;

			/* read for some of its turn, or none of it read at all */
			assert_true(fraction > 0 ? !isnan(row.counters[e].value) : unread > turn - slack);
			assert_true(fabs(fraction - (e < 8 ? first : last)) < 0.02); /* a group counts together */
		}
		assert_true(unread >= -1e-9); /* never both groups at once */
		assert_true(first < turn + slack && last < turn + slack);
		assert_true(first + unread > turn - slack && last + unread > turn - slack);
		assert_true(first == 0 || scaled_error < 0.3);
	}
	td_run_summaries_free(runs, count);
	done();
}

/*
 * --duration 10ms of 1 s windows with two counter groups: one turn a
 * window (a turn lasts at least 10 ms), so each window counts one group,
 * the one its wall-clock start and --rotation-offset choose: with offset
 * 1, group (window + 1) mod 2, where window is the run's start over
 * --every (rotation.h). The other group's events read nothing in that
 * window, and the runs say pmu_groups=2, rotation_offset=1.
 */
static void test_rotation_offset_chooses_each_windows_group(void **state)
{
	const char *args[] = { "--process", NULL, "--every", "1s", "--duration", "10ms", "--windows", "4",
			       "--events", GROUPED_EVENTS, "--rotation-offset", "1", NULL };
	struct td_run_summary *runs;
	size_t count, read = 0, groups_seen[2] = { 0 };

	(void)state;
	e2e_require_bpf();
	fresh("offset");
	args[1] = name;
	assert_int_equal(agent_beside_workload(args, true, NULL), 0);

	runs = list_runs(name, &count);
	assert_int_equal(count, 4);
	for (size_t i = 0; i < count; i++) {
		size_t nr_events, group = (size_t)((runs[i].started_ns / NS_PER_SEC + 1) % 2);
		struct td_thread_row row = spinner_row(runs[i].id, &nr_events);
		double counted = row.counters[group ? 8 : 0].running_fraction;

		assert_int_equal(nr_events, NR_GROUPED_EVENTS);
		assert_string_equal(td_labels_get(&runs[i].labels, "pmu_groups"), "2");
		assert_string_equal(td_labels_get(&runs[i].labels, "rotation_offset"), "1");
		print_message("  window starting %.3f s: group %zu counted, for %.3f of the spinner's counted time\n",
			      runs[i].started_ns / 1e9, group + 1, counted);
		for (size_t e = 0; e < NR_GROUPED_EVENTS; e++) {
			if ((e < 8 ? 0 : 1) == group)
				continue;
			if (row.counters[e].running_fraction != 0 || !isnan(row.counters[e].value))
				fail_msg("window starting %.3f s counts group %zu, yet event %zu of the other read %g (%.3f)",
					 runs[i].started_ns / 1e9, group + 1, e, row.counters[e].value,
					 row.counters[e].running_fraction);
		}
		read += counted > 0;
		groups_seen[group]++;
	}
	assert_true(groups_seen[0] > 0 && groups_seen[1] > 0); /* consecutive windows: both groups */
	assert_true(read >= count / 2); /* the group the formula names is the one that counted */
	td_run_summaries_free(runs, count);
	done();
}

/* --- duty cycle --- */

static double label_real(const struct td_run_summary *run, const char *key)
{
	const char *value = td_labels_get(&run->labels, key);

	if (!value)
		fail_msg("run %s has no label %s", run->id, key);
	return strtod(value, NULL);
}


/*
 * --duration 300ms of every 1 s: the runs say a duty of about 0.3, and
 * the spinner, which never stops, is charged for the counted part only.
 */
static void test_duty_cycle_counts_part_of_each_window(void **state)
{
	const char *args[] = { "--process", NULL, "--every", "1s", "--duration", "300ms", "--windows", "3", NULL };
	struct td_run_summary *runs;
	size_t count, nr_events;

	(void)state;
	e2e_require_bpf();
	fresh("duty");
	args[1] = name;
	assert_int_equal(agent_beside_workload(args, true, NULL), 0);

	runs = list_runs(name, &count);
	assert_int_equal(count, 3);
	for (size_t i = 0; i < count; i++) {
		double duty = label_real(&runs[i], "agent.duty"), oncpu = spinner_row(runs[i].id, &nr_events).oncpu_ns;
		double wall_ns = runs[i].ended_ns - runs[i].started_ns, counted_ns = duty * wall_ns;

		print_message("  window of %.3f s: duty %.3f (%.3f s counted), spinner on-CPU %.3f s\n", wall_ns / 1e9,
			      duty, counted_ns / 1e9, oncpu / 1e9);
		/* Bounds from this window's own figures, however late a loaded host ran the agent:
		 * it counts --duration at least (the label rounds to 0.001 of the window), never
		 * the whole window, and the spinner is charged for the counted part only, give or
		 * take the scheduler's runtime lag at each end (a tick: 4 ms at HZ=250, the lowest
		 * HZ of Debian's kernels). */
		assert_true(counted_ns >= 300e6 - 0.0005 * wall_ns);
		assert_true(duty < 1); /* it paused */
		assert_true(oncpu > 0 && oncpu <= counted_ns + 2 * 4e6);
		assert_null(td_labels_get(&runs[i].labels, "agent.duty_limit"));
	}
	td_run_summaries_free(runs, count);
	done();
}

/*
 * A budget no agent can meet (0.01%): after the first window the agent
 * counts only the floor (100 ms) of each window, says so once in the
 * log, and marks those runs.
 */
static void test_max_overhead_shortens_the_duty(void **state)
{
	const char *args[] = { "--process", NULL, "--every", "500ms", "--max-overhead", "0.01", "--windows", "4",
			       "--log", log_path, NULL };
	struct td_run_summary *runs;
	char log[8192];
	size_t count;

	(void)state;
	e2e_require_bpf();
	fresh("budget");
	args[1] = name;
	assert_int_equal(agent_beside_workload(args, false, NULL), 0);

	read_log(log, sizeof(log));
	print_message("%s", log);
	assert_int_equal(count_in(log, "is over --max-overhead 0.01%: counting 100ms of each window"), 1);
	runs = list_runs(name, &count); /* newest first */
	assert_int_equal(count, 4);
	for (size_t i = 0; i < count; i++) {
		bool first = i == count - 1;
		double duty = label_real(&runs[i], "agent.duty");

		print_message("  window %zu: duty %.3f, overhead %s%%, limit %s\n", count - i, duty,
			      td_labels_get(&runs[i].labels, "agent.overhead_pct"),
			      td_labels_get(&runs[i].labels, "agent.duty_limit") ?: "none");
		if (first) {
			assert_true(duty > 0.9);
			assert_null(td_labels_get(&runs[i].labels, "agent.duty_limit"));
		} else {
			assert_true(duty < 0.4); /* 100 ms of 500, drains included */
			assert_string_equal(td_labels_get(&runs[i].labels, "agent.duty_limit"), "max-overhead");
		}
	}
	td_run_summaries_free(runs, count);
	done();
}

/* --- timing the BPF programs --- */

/* The agent's sched_switch program's run count, as the kernel keeps it (0 until found). */
static uint64_t switch_program_runs(void)
{
	uint32_t id = 0;
	uint64_t runs = 0;

	while (!runs && !bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = { 0 };
		uint32_t len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    (!strcmp(info.name, "switch_btf") || !strcmp(info.name, "switch_raw")))
			runs = info.run_cnt;
		close(fd);
	}
	return runs;
}

/*
 * The start the timing tests share: skipped where kernel.bpf_stats_enabled
 * times every program anyway; a workload (a spinner and an io thread)
 * under a fresh name, then the agent (args[1] gets the name). The agent's
 * pid; the workload's in *worker.
 */
static pid_t start_timing_case(const char *test, const char **args, bool without_sys_admin, pid_t *worker)
{
	int go;

	if (td_collector_bpf_always_timed()) {
		print_message("SKIP: kernel.bpf_stats_enabled is set: every program is timed all along\n");
		skip();
	}
	fresh(test);
	args[1] = name;
	*worker = e2e_spawn_workload_at(link_path, &go, NULL, "--duration-ms", "60000", NULL);
	release(go);
	return agent_start_as(args, without_sys_admin);
}

/*
 * Timing BPF programs costs every program on the host two clock reads per
 * run, so the agent has the kernel time them for a tenth of each window
 * (agent.c, struct bpf_timing). Watched from here: the switch program's
 * run count, which the kernel keeps only while timing, grows in a few of
 * the 20 ms steps of a window, not in most, though the workload's io
 * thread switches all along; and every run still carries agent.bpf_ms.
 */
static void test_bpf_timed_in_samples(void **state)
{
	const char *args[] = { "--process", NULL, "--every", "1s", "--windows", "3", NULL };
	size_t steps = 0, growing = 0, count;
	struct td_run_summary *runs;
	uint64_t last = 0, now;
	pid_t worker, agent;

	(void)state;
	e2e_require_bpf();
	agent = start_timing_case("bpftime", args, false, &worker);
	while (waitpid(agent, NULL, WNOHANG) == 0) {
		usleep(20 * 1000);
		now = switch_program_runs();
		if (last && now) { /* both readings of the same program, loaded and running */
			steps++;
			growing += now > last;
		}
		last = now;
	}
	kill(worker, SIGTERM);
	reap(worker);
	print_message("  the switch program was timed in %zu of %zu steps of 20 ms\n", growing, steps);
	assert_true(steps > 50);
	assert_true(growing > 0);
	assert_true(growing < steps / 3); /* a tenth of each window, a step either side of each sample */
	runs = list_runs(name, &count);
	assert_int_equal(count, 3);
	for (size_t i = 0; i < count; i++)
		assert_true(label_real(&runs[i], "agent.bpf_ms") > 0);
	td_run_summaries_free(runs, count);
	done();
}

/*
 * Without CAP_SYS_ADMIN the kernel will not time the programs for the
 * agent: it counts all the same, says so once in its log, and its runs
 * carry no agent.bpf_ms (the overhead is its own CPU time alone).
 */
static void test_bpf_untimed_without_sys_admin(void **state)
{
	const char *args[] = { "--process", NULL, "--every", "500ms", "--windows", "3", "--log", log_path, NULL };
	struct td_run_summary *runs;
	pid_t worker, agent;
	char log[8192];
	size_t count;

	(void)state;
	e2e_require_bpf();
	agent = start_timing_case("untimed", args, true, &worker);
	assert_int_equal(agent_wait(agent), 0);
	kill(worker, SIGTERM);
	reap(worker);
	read_log(log, sizeof(log));
	print_message("%s", log);
	assert_int_equal(count_in(log, "that needs CAP_SYS_ADMIN (or set kernel.bpf_stats_enabled=1); "
				       "runs of this agent carry no agent.bpf_ms"), 1);
	runs = list_runs(name, &count);
	assert_int_equal(count, 3);
	for (size_t i = 0; i < count; i++) {
		assert_null(td_labels_get(&runs[i].labels, "agent.bpf_ms"));
		assert_non_null(td_labels_get(&runs[i].labels, "agent.overhead_pct"));
	}
	td_run_summaries_free(runs, count);
	done();
}

/* --- /metrics --- */

static void expect_failure(const char *const *args, const char *env_labels, int status, const char *expect);

/* A port nothing listens on now, and a socket bound to it when hold is set. */
static int free_port(int *hold)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	if (hold) {
		assert_int_equal(listen(fd, 1), 0);
		*hold = fd;
	} else {
		close(fd);
	}
	return ntohs(sa.sin_port);
}

/* Sends request to port on loopback and reads the answer into buf; false
 * when nothing answers yet. */
static bool http_exchange(int port, const char *request, char *buf, size_t len)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	size_t n = 0;
	ssize_t got;

	assert_true(fd >= 0);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return false;
	}
	assert_int_equal(write(fd, request, strlen(request)), (ssize_t)strlen(request));
	while (n + 1 < len && (got = read(fd, buf + n, len - n - 1)) > 0)
		n += got;
	buf[n] = '\0';
	close(fd);
	return true;
}

/* GET /metrics on port into buf; false when nothing answers yet. */
static bool scrape(int port, char *buf, size_t len)
{
	return http_exchange(port, "GET /metrics HTTP/1.0\r\n\r\n", buf, len);
}

/* POSTs one JSON-RPC message to /mcp on port in session (NULL: none yet). */
static void post_mcp(int port, const char *session, const char *body, char *buf, size_t len)
{
	char request[1024];

	snprintf(request, sizeof(request),
		 "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
		 "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
		 "%s%s%sContent-Length: %zu\r\n\r\n%s",
		 session ? "Mcp-Session-Id: " : "", session ? session : "", session ? "\r\n" : "",
		 strlen(body), body);
	assert_true(http_exchange(port, request, buf, len));
}

/* The agent's health on /metrics after a few windows; a port in use is a one-line failure. */
static void test_metrics_endpoint(void **state)
{
	const char *args[] = { "--process", NULL, "--every", "300ms", "--metrics-listen", NULL, NULL };
	static char page[1 << 16];
	char listen_at[32];
	const char *windows = NULL;
	pid_t worker, agent;
	int go, held;

	(void)state;
	e2e_require_bpf();
	fresh("metrics");
	args[1] = name;
	snprintf(listen_at, sizeof(listen_at), "127.0.0.1:%d", free_port(NULL));
	args[5] = listen_at;
	worker = e2e_spawn_workload_at(link_path, &go, NULL, "--duration-ms", "20000", NULL);
	release(go);
	agent = agent_start(args);
	for (int i = 0; i < 100 && (!windows || atoi(windows + strlen("topdown_agent_windows_total ")) < 3); i++) {
		usleep(100 * 1000);
		if (scrape(atoi(strchr(listen_at, ':') + 1), page, sizeof(page)))
			windows = strstr(page, "\ntopdown_agent_windows_total ");
	}
	kill(agent, SIGTERM);
	assert_int_equal(agent_wait(agent), 0);
	kill(worker, SIGTERM);
	reap(worker);
	assert_non_null(windows);
	print_message("  %.40s\n", windows + 1);
	assert_true(atoi(windows + strlen("\ntopdown_agent_windows_total ")) >= 3);
	assert_non_null(strstr(page, "\ntopdown_agent_duty_ratio 1"));
	assert_non_null(strstr(page, "\ntopdown_agent_cpu_seconds_total "));

	snprintf(db_path, sizeof(db_path), "%s/metrics-refused.db", dir); /* this one must stay empty */
	snprintf(listen_at, sizeof(listen_at), "127.0.0.1:%d", free_port(&held));
	{ const char *a[] = { "--process", "x", "--metrics-listen", listen_at, NULL };
	  expect_failure(a, NULL, 1, listen_at); }
	close(held);
	done();
}

/*
 * --mcp-listen: the agent answers MCP over HTTP about the runs it stores,
 * beside its /metrics, and SIGTERM still ends it with 0.
 */
static void test_mcp_beside_the_windows(void **state)
{
	const char *args[] = { "--process", NULL, "--every", "300ms", "--metrics-listen", NULL,
			       "--mcp-listen", NULL, NULL };
	static char answer[1 << 16];
	char metrics_at[32], mcp_at[32], session[64] = "";
	const char *id;
	pid_t worker, agent;
	int go, port;

	(void)state;
	e2e_require_bpf();
	fresh("mcp");
	args[1] = name;
	snprintf(metrics_at, sizeof(metrics_at), "127.0.0.1:%d", free_port(NULL));
	args[5] = metrics_at;
	port = free_port(NULL);
	snprintf(mcp_at, sizeof(mcp_at), "127.0.0.1:%d", port);
	args[7] = mcp_at;
	worker = e2e_spawn_workload_at(link_path, &go, NULL, "--duration-ms", "30000", NULL);
	release(go);
	agent = agent_start(args);
	wait_for_log("serving MCP at http://127.0.0.1:");
	assert_true(wait_for_runs(name, 2, 30) >= 2);

	post_mcp(port, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
		 "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
		 "\"clientInfo\":{\"name\":\"e2e\",\"version\":\"1\"}}}", answer, sizeof(answer));
	id = strcasestr(answer, "\r\nMcp-Session-Id: ");
	assert_non_null(id);
	sscanf(id + strlen("\r\nMcp-Session-Id: "), "%63[0-9a-f]", session);
	assert_int_equal(strlen(session), 32);
	post_mcp(port, session, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
		 "{\"name\":\"list_profiling_runs\",\"arguments\":{\"limit\":5}}}", answer,
		 sizeof(answer));
	kill(agent, SIGTERM);
	assert_int_equal(agent_wait(agent), 0);
	kill(worker, SIGTERM);
	reap(worker);
	assert_non_null(strstr(answer, "HTTP/1.1 200"));
	if (!strstr(answer, name))
		fail_msg("list_profiling_runs over the agent's /mcp does not name %s: %.600s", name, answer);
	/* what the agent's MCP must not do: start collections of its own */
	assert_null(strstr(answer, "\"isError\":true"));
	done();
}

/* --- the database going away and coming back (PostgreSQL) --- */

/*
 * The private PostgreSQL server stops for 3 s in the middle of 500 ms
 * windows and starts again: the windows of the outage wait in the spool
 * and are replayed, in order. Every window the agent ran is in the
 * database once, and the log says once that the database went, once
 * that it came back.
 */
static void test_pg_outage_spooled_then_replayed(void **state)
{
	struct backend *b = backend_of(state);
	const char *args[] = { "--process", NULL, "--every", "500ms", "--log", log_path, NULL };
	const char *out_of_order = "SELECT count(*) FROM (SELECT started_ns, lag(started_ns) OVER (ORDER BY pk) AS prev"
				   " FROM runs) t WHERE prev > started_ns";
	struct td_run_summary *runs;
	struct td_store *store;
	char log[16384];
	const char *stopped;
	size_t count;
	long windows = -1;
	pid_t worker, agent;
	int go;

	e2e_require_bpf();
	fresh("pg");
	args[1] = name;
	store_flag = "--dsn";
	store_value = b->dsn;
	worker = e2e_spawn_workload_at(link_path, &go, NULL, "--duration-ms", "60000", NULL);
	release(go);
	agent = agent_start(args);
	wait_for_log("following '");
	sleep(1);
	if (!pg_pause())
		fail_msg("cannot stop the server: %s", pg_server.why);
	sleep(3);
	if (!pg_resume())
		fail_msg("cannot start the server again: %s", pg_server.why);
	sleep(6); /* the sink's back-off (1 s, 2 s, ...) passes, the spool replays */
	kill(agent, SIGTERM);
	assert_int_equal(agent_wait(agent), 0);
	kill(worker, SIGTERM);
	reap(worker);

	read_log(log, sizeof(log));
	print_message("%s", log);
	stopped = strstr(log, "stopped after ");
	assert_non_null(stopped);
	windows = strtol(stopped + strlen("stopped after "), NULL, 10);
	store = backend_open(b); /* the fixture's connection died with the server */
	runs = list_runs_in(store, name, &count);
	td_store_close(store);
	print_message("  %ld windows, %zu runs in PostgreSQL\n", windows, count);
	assert_int_equal(count, windows); /* one process, a run per window: none lost, none twice */
	assert_int_equal(count_in(log, "the database does not take runs"), 1);
	assert_int_equal(count_in(log, "the database takes runs again"), 1);
	assert_int_equal(pg_int(b->dsn, out_of_order), 0); /* stored in the order of the windows */
	td_run_summaries_free(runs, count);
	done();
}

static int pg_test_teardown(void **state)
{
	pg_resume(); /* after a failure during the outage */
	return backend_teardown(state);
}

/* --- memory --- */

static long vm_rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/*
 * The short version of bench/bench_agent.sh's 10,000 windows: RSS after
 * 1,000 windows of 20 ms is within 2% of RSS after 100.
 */
static void test_rss_flat_over_windows(void **state)
{
	const char *args[] = { "--process", NULL, "--every", "20ms", NULL };
	long rss_100, rss_1000;
	size_t seen;
	pid_t worker, agent;
	int go;

	(void)state;
	e2e_require_bpf();
#ifdef __SANITIZE_ADDRESS__
	print_message("SKIP: under ASan, RSS measures its quarantine of freed memory, not the agent\n");
	skip();
#endif
	fresh("rss");
	args[1] = name;
	worker = e2e_spawn_workload_at(link_path, &go, NULL, "--duration-ms", "600000", "--io-threads", "2", NULL);
	release(go);
	agent = agent_start(args);
	seen = wait_for_runs(name, 100, 60);
	rss_100 = vm_rss_kb(agent);
	print_message("  after %zu windows: VmRSS %ld kB\n", seen, rss_100);
	seen = wait_for_runs(name, 1000, 240);
	rss_1000 = vm_rss_kb(agent);
	print_message("  after %zu windows: VmRSS %ld kB (%+.1f%%)\n", seen, rss_1000,
		      100.0 * (rss_1000 - rss_100) / rss_100);
	kill(agent, SIGTERM);
	assert_int_equal(agent_wait(agent), 0);
	kill(worker, SIGTERM);
	reap(worker);
	assert_true(seen >= 1000);
	/* Flat within 2%: the agent's SQLite caches are bounded small (user/agent/sink.c),
	 * and nothing else may grow with the number of windows. */
	assert_true(rss_1000 <= rss_100 * 1.02);
	done();
}

/* --- bad input --- */

/* One line naming expect, exit status, nothing stored. */
static void expect_failure(const char *const *args, const char *env_labels, int status, const char *expect)
{
	/* args come last: theirs win over these (getopt keeps the last) */
	const char *argv[24] = { "topdown", "agent", "--db", db_path, "--spool", spool_path };
	struct cli_result *r = malloc(sizeof(*r));
	int argc = 6;

	for (int i = 0; args[i]; i++)
		argv[argc++] = args[i];
	argv[argc] = NULL;
	if (env_labels)
		setenv("TOPDOWN_LABELS", env_labels, 1);
	cli_run(argv, r);
	unsetenv("TOPDOWN_LABELS");
	print_message("  %s", r->err);
	assert_int_equal(r->status, status);
	assert_int_equal(count_in(r->err, "\n"), 1);
	if (!strstr(r->err, expect))
		fail_msg("stderr lacks '%s': %s", expect, r->err);
	if (access(db_path, F_OK) == 0) { /* opened before the failure: empty */
		size_t count;
		struct td_run_summary *runs = list_runs(NULL, &count);

		td_run_summaries_free(runs, count);
		assert_int_equal(count, 0);
	}
	free(r);
}

/* A usage error: exit 2 before anything is opened. */
static void expect_refusal(const char *const *args, const char *env_labels, const char *expect)
{
	expect_failure(args, env_labels, 2, expect);
	assert_int_equal(access(db_path, F_OK), -1);
	assert_int_equal(access(spool_path, F_OK), -1);
}

static void test_bad_inputs_are_refused(void **state)
{
	(void)state;
	fresh("bad");
	{ const char *a[] = { "--every", "1s", NULL }; expect_refusal(a, NULL, "name the targets"); }
	{ const char *a[] = { "--process", "x", "--system-wide", NULL }; expect_refusal(a, NULL, "not both"); }
	{ const char *a[] = { "--process", "x", "--every", "soon", NULL }; expect_refusal(a, NULL, "bad duration 'soon' for --every"); }
	{ const char *a[] = { "--process", "x", "--every", "5ms", NULL }; expect_refusal(a, NULL, "shorter than 10ms"); }
	{ const char *a[] = { "--process", "x", "--every", "10s", "--duration", "20s", NULL };
	  expect_refusal(a, NULL, "is longer than the --every"); }
	{ const char *a[] = { "--process", "x", NULL }; expect_refusal(a, "team=db,tier", "TOPDOWN_LABELS: bad label 'tier'"); }
	{ const char *a[] = { "--process", "x", "--frob", NULL };
	  expect_refusal(a, NULL, "unknown option, or one missing its value: '--frob'"); }
	{ const char *a[] = { "--process", "x", "--max-overhead", "lots", NULL }; expect_refusal(a, NULL, "--max-overhead takes a number from 0.01 to 100, not 'lots'"); }
	{ const char *a[] = { "--process", "x", "--windows", "0", NULL }; expect_refusal(a, NULL, "--windows"); }
	{ const char *a[] = { "--process", "x", "--label", "nokey", NULL }; expect_refusal(a, NULL, "bad label 'nokey'"); }
	{ const char *a[] = { "--process", "/usr/bin/x", NULL }; expect_refusal(a, NULL, "--process takes a process name"); }
	{ const char *a[] = { "--process", "x", "--events", "task-clock", "--level", "2", NULL };
	  expect_refusal(a, NULL, "give one or the other"); }
	{ const char *a[] = { "--process", "x", "--events", "no-such-event", NULL }; expect_refusal(a, NULL, "no-such-event"); }
	{ const char *a[] = { "--process", "x", "--mcp-token-file", "/etc/hostname", NULL };
	  expect_refusal(a, NULL, "--mcp-token-file goes with --mcp-listen"); }
	{ const char *a[] = { "--process", "x", "--mcp-request-timeout", "5s", NULL };
	  expect_refusal(a, NULL, "--mcp-request-timeout goes with --mcp-listen"); }
	{ const char *a[] = { "--process", "x", "--mcp-listen", "127.0.0.1:0", "--mcp-request-timeout", "0s", NULL };
	  expect_refusal(a, NULL, "bad duration '0s' for --mcp-request-timeout: it is shorter than 1ms"); }
	done();
}

/* What fails once the arguments are fine: exit 1, one line, no run. */
static void test_startup_failures(void **state)
{
	(void)state;
	e2e_require_bpf();
	fresh("startup");
	{ const char *a[] = { "--process", "x", "--log", "/nonexistent-dir/agent.log", NULL };
	  expect_failure(a, NULL, 1, "cannot open the log /nonexistent-dir/agent.log"); }
	{ const char *a[] = { "--process", "x", "--spool", "/nonexistent-dir/spool.db", NULL };
	  expect_failure(a, NULL, 1, "/nonexistent-dir/spool.db"); }
	{ const char *a[] = { "--process", "x", "--mcp-listen", "0.0.0.0:0", NULL };
	  expect_failure(a, NULL, 1, "--mcp-listen 0.0.0.0:0 is not loopback: give --mcp-token-file FILE"); }
	{ const char *a[] = { "--process", "x", "--mcp-listen", "127.0.0.1:0", "--mcp-token-file",
			      "/nonexistent-dir/token", NULL };
	  expect_failure(a, NULL, 1, "cannot read --mcp-token-file /nonexistent-dir/token"); }
	done();
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_inputs_are_refused),
		cmocka_unit_test(test_startup_failures),
		cmocka_unit_test(test_one_run_per_window_per_process),
		cmocka_unit_test(test_system_wide_one_run_per_window),
		cmocka_unit_test(test_sigterm_stores_partial_window),
		cmocka_unit_test(test_restart_followed_absent_waited_for),
		cmocka_unit_test(test_sighup_reopens_log),
		cmocka_unit_test(test_thread_churn_loses_nothing_unreported),
		cmocka_unit_test(test_rss_flat_over_windows),
		cmocka_unit_test(test_counter_groups_take_turns_within_a_window),
		cmocka_unit_test(test_rotation_offset_chooses_each_windows_group),
		cmocka_unit_test(test_duty_cycle_counts_part_of_each_window),
		cmocka_unit_test(test_max_overhead_shortens_the_duty),
		cmocka_unit_test(test_bpf_timed_in_samples),
		cmocka_unit_test(test_bpf_untimed_without_sys_admin),
		cmocka_unit_test(test_metrics_endpoint),
		cmocka_unit_test(test_mcp_beside_the_windows),
		cmocka_unit_test(test_stalled_store_keeps_each_window_its_own),
		cmocka_unit_test(test_deleted_store_file_is_created_anew),
		cmocka_unit_test(test_replaced_store_file_is_written_from_then_on),
		{ .name = "test_pg_outage_spooled_then_replayed", .test_func = test_pg_outage_spooled_then_replayed,
		  .setup_func = backend_setup, .teardown_func = pg_test_teardown, .initial_state = (void *)"postgresql" },
	};
	int failed;

	(void)argc;
	setup();
	e2e_filter_tests();
	failed = run_on_backends("topdown agent", tests, sizeof(tests) / sizeof(tests[0]), argv[0]);
	teardown();
	return failed;
}
