// SPDX-License-Identifier: BSD-3-Clause
/*
 * End-to-end tests of the BPF collector with software counters: the real
 * programs on the real scheduler, checked against what the threads measure
 * themselves (CLOCK_THREAD_CPUTIME_ID). They need root (or CAP_BPF and
 * CAP_PERFMON) and kernel BTF, and SKIP visibly without them.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "e2e.h"
#include "collector.h"
#include "events.h"

#define TOLERANCE 0.02 /* the bound: 2% */

static struct td_event task_clock;

static int setup(void **state)
{
	char err[256];

	(void)state;
	return td_event_resolve("task-clock", &task_clock, err, sizeof(err));
}

static const struct td_thread_row *find_tid(const struct td_thread_row *rows, size_t n, pid_t tid)
{
	for (size_t i = 0; i < n; i++)
		if ((pid_t)rows[i].tid == tid)
			return &rows[i];
	return NULL;
}

static void assert_close(const char *what, double got, double want, double tolerance)
{
	double off = fabs(got - want) / want;

	print_message("  %-40s collector %.0f, self-measured %.0f, off by %.2f%%\n", what, got, want, 100 * off);
	assert_true(want > 0);
	assert_true(off <= tolerance);
}

/* --- a CPU spinner in this process that never blocks --- */

static atomic_bool spinner_stop;
static atomic_int spinner_tid;

static void *spin(void *arg)
{
	volatile unsigned long x = 0;

	(void)arg;
	atomic_store(&spinner_tid, gettid());
	while (!atomic_load_explicit(&spinner_stop, memory_order_relaxed))
		x++;
	return NULL;
}

static uint64_t thread_cpu_ns(pthread_t thread)
{
	struct timespec ts;
	clockid_t clock;

	pthread_getcpuclockid(thread, &clock);
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void spinner_accounted(bool force_raw_tp)
{
	pid_t self = getpid();
	struct td_collector_opts opts = { .pids = &self, .nr_pids = 1, .events = &task_clock,
					  .nr_events = 1, .force_raw_tp = force_raw_tp };
	struct td_interval interval = { 0 };
	const struct td_thread_row *row;
	struct td_collector *c;
	uint64_t before, after;
	pthread_t thread;
	char err[512] = "";

	atomic_store(&spinner_stop, false);
	assert_int_equal(pthread_create(&thread, NULL, spin, NULL), 0);
	usleep(50 * 1000); /* let it get going: it is already running when we attach */
	c = td_collector_new(&opts, err, sizeof(err));
	if (!c)
		fail_msg("collector: %s", err);
	assert_string_equal(td_collector_attach_kind(c), force_raw_tp ? "raw_tp" : "tp_btf");
	before = thread_cpu_ns(thread);
	usleep(1000 * 1000);
	assert_int_equal(td_collector_drain(c, &interval, err, sizeof(err)), 0);
	after = thread_cpu_ns(thread);
	atomic_store(&spinner_stop, true);
	pthread_join(thread, NULL);

	row = find_tid(interval.threads, interval.nr_threads, atomic_load(&spinner_tid));
	assert_non_null(row);
	assert_close("spinner on-CPU ns", row->oncpu_ns, after - before, TOLERANCE);
	assert_close("spinner task-clock vs its on-CPU ns", row->counters[0].value, row->oncpu_ns, TOLERANCE);
	assert_int_equal(td_collector_dropped(c), 0);
	free(interval.threads);
	td_collector_free(c);
}

static void test_spinner_fully_accounted_tp_btf(void **state)
{
	(void)state;
	e2e_require_bpf();
	spinner_accounted(false);
}

static void test_spinner_fully_accounted_raw_tp(void **state)
{
	(void)state;
	e2e_require_bpf();
	spinner_accounted(true);
}

/* --- the bundled workload: a spinner, io threads and 1,000 short-lived threads --- */

struct report_line {
	pid_t tid;
	char comm[16];
	double cpu_ns;
};

static size_t read_report(const char *path, struct report_line *lines, size_t max)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	assert_non_null(f);
	while (n < max && fscanf(f, "%d %15s %lf", &lines[n].tid, lines[n].comm, &lines[n].cpu_ns) == 3)
		n++;
	fclose(f);
	return n;
}

/*
 * A reaped process's threads may still be finishing their last context
 * switch (a loaded machine can hold a dying thread on a run queue for a
 * while): drain until every reported thread has its exit record, up to 5 s.
 */
static void drain_until_exited(struct td_collector *c, const struct report_line *lines, size_t nr_lines,
			       struct td_thread_row **rows, size_t *nr_rows)
{
	char err[256];

	for (int attempt = 0; attempt < 100; attempt++) {
		struct td_interval interval = { 0 };
		size_t exited = 0;

		assert_int_equal(td_collector_drain(c, &interval, err, sizeof(err)), 0);
		free(interval.threads);
		assert_int_equal(td_collector_totals(c, rows, nr_rows), 0);
		for (size_t i = 0; i < nr_lines; i++) {
			const struct td_thread_row *row = find_tid(*rows, *nr_rows, lines[i].tid);

			exited += row && row->exited;
		}
		if (exited == nr_lines)
			return;
		free(*rows);
		usleep(50 * 1000);
	}
	assert_int_equal(td_collector_totals(c, rows, nr_rows), 0);
	for (size_t i = 0; i < nr_lines; i++) {
		const struct td_thread_row *row = find_tid(*rows, *nr_rows, lines[i].tid);

		if (!row || !row->exited)
			print_message("  no exit for %s (tid %d, self-measured %.0f ns): %s, on-CPU %llu ns\n",
				      lines[i].comm, lines[i].tid, lines[i].cpu_ns, row ? "seen alive" : "never seen",
				      row ? (unsigned long long)row->oncpu_ns : 0ull);
	}
	fail_msg("some threads never showed their exit (dropped slices: %llu)",
		 (unsigned long long)td_collector_dropped(c));
}

/*
 * Long-lived threads are checked one by one; the 1,000 short-lived ones
 * (5 ms each) as a total, as the issue states it: one interrupt landing in
 * a 5 ms thread moves it by more than the tolerance on its own.
 */
static void check_against_report(const struct td_thread_row *rows, size_t nr_rows,
				  const struct report_line *lines, size_t nr_lines, size_t short_threads)
{
	double short_self = 0, short_oncpu = 0, short_task_clock = 0;
	size_t short_seen = 0;

	for (size_t i = 0; i < nr_lines; i++) {
		const struct td_thread_row *row = find_tid(rows, nr_rows, lines[i].tid);
		char what[64];

		assert_non_null(row);
		if (!row->exited)
			fail_msg("thread %d (%s) is not marked exited", lines[i].tid, lines[i].comm);
		if (!strncmp(lines[i].comm, "short_", 6)) {
			short_self += lines[i].cpu_ns;
			short_oncpu += row->oncpu_ns;
			short_task_clock += row->counters[0].value;
			short_seen++;
			continue;
		}
		snprintf(what, sizeof(what), "%s on-CPU ns", lines[i].comm);
		assert_close(what, row->oncpu_ns, lines[i].cpu_ns, TOLERANCE);
		snprintf(what, sizeof(what), "%s task-clock vs on-CPU ns", lines[i].comm);
		assert_close(what, row->counters[0].value, row->oncpu_ns, TOLERANCE);
	}
	assert_int_equal(short_seen, short_threads);
	assert_close("short-lived threads: total on-CPU ns", short_oncpu, short_self, TOLERANCE);
	assert_close("short-lived threads: total task-clock", short_task_clock, short_oncpu, TOLERANCE);
}

static void test_workload_threads_match_self_measurement(void **state)
{
	const size_t short_threads = 1000;
	char report[] = "/tmp/td-e2e-report-XXXXXX", err[512] = "";
	struct td_collector_opts opts = { .events = &task_clock, .nr_events = 1 };
	struct td_thread_row *rows;
	struct report_line *lines;
	struct td_collector *c;
	size_t nr_rows, nr_lines;
	pid_t child;
	int go;

	(void)state;
	e2e_require_bpf();
	close(mkstemp(report));
	/*
	 * io threads wake every 1 ms and work 400 us. Much shorter slices run
	 * into a limit of the kernel's software clocks, not of topdown: in a
	 * KVM guest task-clock and cpu-clock (local_clock) lag the scheduler's
	 * runtime by ~4 us per wake-up from idle (docs/DESIGN.md).
	 */
	child = e2e_spawn_workload(&go, report, "--duration-ms", "1500", "--io-threads", "2", "--io-work-us", "400",
				   "--short-threads", "1000", "--short-work-us", "5000", NULL);
	opts.pids = &child;
	opts.nr_pids = 1;
	c = td_collector_new(&opts, err, sizeof(err));
	if (!c)
		fail_msg("collector: %s", err);
	e2e_start_and_wait(c, child, go);
	lines = calloc(short_threads + 16, sizeof(*lines));
	nr_lines = read_report(report, lines, short_threads + 16);
	assert_int_equal(nr_lines, short_threads + 3); /* + spinner, 2 io threads */
	drain_until_exited(c, lines, nr_lines, &rows, &nr_rows);
	assert_int_equal(td_collector_dropped(c), 0);
	check_against_report(rows, nr_rows, lines, nr_lines, short_threads);

	free(lines);
	free(rows);
	td_collector_free(c);
	unlink(report);
}

/* --process NAME also takes processes with that name that start later. */
static void test_process_started_during_window_is_followed(void **state)
{
	struct td_collector_opts opts = { .process_name = "td-workload", .events = &task_clock, .nr_events = 1 };
	struct td_thread_row *rows;
	struct td_interval interval = { 0 };
	struct td_collector *c;
	char err[512] = "";
	size_t nr_rows, seen = 0;
	pid_t first, later;
	int go_first, go_later;

	(void)state;
	e2e_require_bpf();
	first = e2e_spawn_workload(&go_first, NULL, "--duration-ms", "100", NULL);
	c = td_collector_new(&opts, err, sizeof(err));
	if (!c)
		fail_msg("collector: %s", err);
	later = e2e_spawn_workload(&go_later, NULL, "--duration-ms", "300", NULL);
	e2e_start_and_wait(c, later, go_later);
	e2e_start_and_wait(c, first, go_first);
	assert_int_equal(td_collector_drain(c, &interval, err, sizeof(err)), 0);
	assert_int_equal(td_collector_totals(c, &rows, &nr_rows), 0);
	for (size_t i = 0; i < nr_rows; i++)
		if ((pid_t)rows[i].pid == later && !strcmp(rows[i].comm, "spinner"))
			seen++;
	assert_int_equal(seen, 1);
	free(rows);
	free(interval.threads);
	td_collector_free(c);
}

static void test_system_wide_sees_workload(void **state)
{
	struct td_collector_opts opts = { .system_wide = true, .events = &task_clock, .nr_events = 1 };
	char report[] = "/tmp/td-e2e-report-XXXXXX", err[512] = "";
	struct report_line lines[8];
	const struct td_thread_row *row;
	struct td_thread_row *rows;
	struct td_collector *c;
	size_t nr_rows, nr_lines;
	pid_t child;
	int go;

	(void)state;
	e2e_require_bpf();
	close(mkstemp(report));
	child = e2e_spawn_workload(&go, report, "--duration-ms", "500", "--io-threads", "0", NULL);
	c = td_collector_new(&opts, err, sizeof(err));
	if (!c)
		fail_msg("collector: %s", err);
	e2e_start_and_wait(c, child, go);
	nr_lines = read_report(report, lines, 8);
	assert_int_equal(nr_lines, 1);
	drain_until_exited(c, lines, nr_lines, &rows, &nr_rows);
	assert_int_equal(td_collector_dropped(c), 0);
	row = find_tid(rows, nr_rows, lines[0].tid);
	assert_non_null(row);
	assert_string_equal(row->comm, "spinner");
	assert_int_equal(row->pid, child);
	assert_close("spinner on-CPU ns, system-wide", row->oncpu_ns, lines[0].cpu_ns, TOLERANCE);
	assert_true(nr_rows > 3); /* the rest of the system is there too */
	free(rows);
	td_collector_free(c);
	unlink(report);
}

static void test_missing_targets_are_errors(void **state)
{
	pid_t gone = e2e_dead_pid();
	struct td_collector_opts by_pid = { .pids = &gone, .nr_pids = 1, .events = &task_clock, .nr_events = 1 };
	struct td_collector_opts by_name = { .process_name = "no-such-proc-x", .events = &task_clock, .nr_events = 1 };
	char err[512] = "";

	(void)state;
	e2e_require_bpf();
	assert_null(td_collector_new(&by_pid, err, sizeof(err)));
	assert_non_null(strstr(err, "no process with pid"));
	err[0] = '\0';
	assert_null(td_collector_new(&by_name, err, sizeof(err)));
	assert_non_null(strstr(err, "no running process is named 'no-such-proc-x'"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spinner_fully_accounted_tp_btf),
		cmocka_unit_test(test_spinner_fully_accounted_raw_tp),
		cmocka_unit_test(test_workload_threads_match_self_measurement),
		cmocka_unit_test(test_process_started_during_window_is_followed),
		cmocka_unit_test(test_system_wide_sees_workload),
		cmocka_unit_test(test_missing_targets_are_errors),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
