// SPDX-License-Identifier: BSD-3-Clause
/*
 * End-to-end tests of the BPF collector with software counters: the real
 * programs on the real scheduler, checked against what the threads measure
 * themselves (CLOCK_THREAD_CPUTIME_ID). They need root (or CAP_BPF and
 * CAP_PERFMON) and kernel BTF, and SKIP visibly without them.
 */
#include <errno.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "e2e.h"
#include "collector.h"
#include "events.h"
#include "procmatch.h"

#define TOLERANCE 0.02 /* the bound: 2% */
#define MAX_TICK_NS 10e6 /* the scheduler's tick at the lowest CONFIG_HZ, 100 */

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

	print_message("  %-40s collector %.0f, reference %.0f, off by %.2f%%\n", what, got, want, 100 * off);
	assert_true(want > 0);
	assert_true(off <= tolerance);
}

/*
 * A reference read around the collector's own reading: lo from the
 * readings just after the collector's start and just before its end, hi
 * from just before its start and just after its end. The collector read
 * somewhere in between, so its figure lies in [lo, hi] whatever the
 * scheduler did to this thread meanwhile (a loaded host preempts it for
 * tens of ms at a time); the tolerance is the accuracy claimed beyond that.
 */
struct bracket {
	double start_before, start_after, end_before, end_after;
};

static void assert_bracketed(const char *what, double got, const struct bracket *b, double tolerance)
{
	double lo = b->end_before - b->start_after, hi = b->end_after - b->start_before;

	print_message("  %-40s collector %.0f, reference %.0f to %.0f\n", what, got, lo, hi);
	assert_true(hi > 0);
	assert_true(got >= lo * (1 - tolerance) && got <= hi * (1 + tolerance));
}

/* --- a CPU spinner in this process that never blocks --- */

static atomic_bool spinner_stop;
static atomic_int spinner_tid, waiter_tid;

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

/*
 * The kernel's own task-clock of a task (pid = tid, any CPU; with inherit,
 * of a process and the threads it starts, summed as they exit): the oracle
 * for the task-clock topdown attributes. It is checked against that rather
 * than against on-CPU time because on this KVM guest perf's software clocks
 * run up to 15% apart from the scheduler's runtime at times (docs/DESIGN.md),
 * which would test the host's clocks, not the attribution.
 */
static int open_task_clock(pid_t pid, bool inherit)
{
	struct perf_event_attr attr = { .size = sizeof(attr), .type = PERF_TYPE_SOFTWARE,
					.config = PERF_COUNT_SW_TASK_CLOCK, .inherit = inherit };
	int fd = syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
}

static double read_count(int fd)
{
	uint64_t value;

	assert_int_equal(read(fd, &value, sizeof(value)), sizeof(value));
	return value;
}

static void spinner_accounted(bool force_raw_tp)
{
	pid_t self = getpid();
	struct td_collector_opts opts = { .pids = &self, .nr_pids = 1, .events = &task_clock,
					  .nr_events = 1, .force_raw_tp = force_raw_tp };
	struct td_interval interval = { 0 };
	const struct td_thread_row *row;
	struct td_collector *c;
	struct bracket oncpu, clock;
	double unread_ns, tolerance;
	pthread_t thread;
	char err[512] = "";
	int clock_fd;

	atomic_store(&spinner_stop, false);
	assert_int_equal(pthread_create(&thread, NULL, spin, NULL), 0);
	usleep(50 * 1000); /* let it get going: it is already running when we attach */
	clock_fd = open_task_clock(atomic_load(&spinner_tid), false);
	oncpu.start_before = thread_cpu_ns(thread);
	clock.start_before = read_count(clock_fd);
	c = td_collector_new(&opts, err, sizeof(err));
	if (!c)
		fail_msg("collector: %s", err);
	oncpu.start_after = thread_cpu_ns(thread);
	clock.start_after = read_count(clock_fd);
	assert_string_equal(td_collector_attach_kind(c), force_raw_tp ? "raw_tp" : "tp_btf");
	usleep(1000 * 1000);
	oncpu.end_before = thread_cpu_ns(thread);
	clock.end_before = read_count(clock_fd);
	assert_int_equal(td_collector_drain(c, &interval, err, sizeof(err)), 0);
	oncpu.end_after = thread_cpu_ns(thread);
	clock.end_after = read_count(clock_fd);
	close(clock_fd);
	atomic_store(&spinner_stop, true);
	pthread_join(thread, NULL);

	row = find_tid(interval.threads, interval.nr_threads, atomic_load(&spinner_tid));
	assert_non_null(row);
	assert_bracketed("spinner on-CPU ns", row->oncpu_ns, &oncpu, TOLERANCE);
	print_message("  spinner task-clock / on-CPU ns           %.4f (the host's clocks, for information)\n",
		      row->counters[0].value / row->oncpu_ns);
	unread_ns = td_collector_unread_ns(c, atomic_load(&spinner_tid));
	print_message("  spinner task-clock counted %.4f of its on-CPU time; %.4f unread\n",
		      row->counters[0].running_fraction, unread_ns / row->oncpu_ns);
	/*
	 * With unread time (a switch-in the kernel did not show, docs/DESIGN.md) the count is
	 * extrapolated from the read time, whose first slice, opened by the start's flush,
	 * began at the runtime of the spinner's last tick, up to a tick before its counter
	 * reading: the read time is that much long, the extrapolation that much low.
	 */
	tolerance = TOLERANCE + (unread_ns > 0 ? MAX_TICK_NS / (row->oncpu_ns - unread_ns) : 0);
	assert_bracketed("spinner task-clock vs the kernel's count", row->counters[0].value, &clock, tolerance);
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

/* --- run-queue wait: two spinners sharing one CPU --- */

static atomic_int pinned_tids[2];

static void *spin_on_cpu0(void *arg)
{
	cpu_set_t cpu0;

	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	assert_int_equal(sched_setaffinity(0, sizeof(cpu0), &cpu0), 0);
	atomic_store(&pinned_tids[(intptr_t)arg], gettid());
	return spin(NULL);
}

/* The scheduler's run-queue wait of a thread of this process: schedstat's second figure. */
static double run_delay_ns(pid_t tid)
{
	char path[64];
	unsigned long long ns = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%*s %llu", &ns), 1);
	fclose(f);
	return ns;
}

/*
 * Each of two spinners pinned to CPU 0 waits on the run queue about half
 * the time: the collector's run-queue wait is the scheduler's own,
 * bracketed like on-CPU time.
 */
static void runq_wait_accounted(bool force_raw_tp)
{
	pid_t self = getpid();
	struct td_collector_opts opts = { .pids = &self, .nr_pids = 1, .events = &task_clock,
					  .nr_events = 1, .force_raw_tp = force_raw_tp };
	struct td_interval interval = { 0 };
	struct bracket wait[2];
	struct td_collector *c;
	pthread_t threads[2];
	char err[512] = "";

	atomic_store(&spinner_stop, false);
	for (intptr_t i = 0; i < 2; i++) {
		atomic_store(&pinned_tids[i], 0);
		assert_int_equal(pthread_create(&threads[i], NULL, spin_on_cpu0, (void *)i), 0);
	}
	/* both running on CPU 0; a loaded host may take a while to get there */
	for (int tries = 0; tries < 500 && !(atomic_load(&pinned_tids[0]) && atomic_load(&pinned_tids[1])); tries++)
		usleep(10 * 1000);
	for (int i = 0; i < 2; i++) {
		assert_true(atomic_load(&pinned_tids[i]) > 0);
		wait[i].start_before = run_delay_ns(atomic_load(&pinned_tids[i]));
	}
	c = td_collector_new(&opts, err, sizeof(err));
	if (!c)
		fail_msg("collector: %s", err);
	for (int i = 0; i < 2; i++)
		wait[i].start_after = run_delay_ns(atomic_load(&pinned_tids[i]));
	usleep(1000 * 1000);
	for (int i = 0; i < 2; i++)
		wait[i].end_before = run_delay_ns(atomic_load(&pinned_tids[i]));
	assert_int_equal(td_collector_drain(c, &interval, err, sizeof(err)), 0);
	for (int i = 0; i < 2; i++)
		wait[i].end_after = run_delay_ns(atomic_load(&pinned_tids[i]));
	atomic_store(&spinner_stop, true);
	for (int i = 0; i < 2; i++)
		pthread_join(threads[i], NULL);

	for (int i = 0; i < 2; i++) {
		const struct td_thread_row *row = find_tid(interval.threads, interval.nr_threads,
							   atomic_load(&pinned_tids[i]));

		assert_non_null(row);
		assert_bracketed("pinned spinner run-queue wait ns", row->runq_wait_ns, &wait[i], TOLERANCE);
	}
	free(interval.threads);
	td_collector_free(c);
}

static void test_runq_wait_is_the_schedulers_tp_btf(void **state)
{
	(void)state;
	e2e_require_bpf();
	runq_wait_accounted(false);
}

static void test_runq_wait_is_the_schedulers_raw_tp(void **state)
{
	(void)state;
	e2e_require_bpf();
	runq_wait_accounted(true);
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
	double short_self = 0, short_oncpu = 0;
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
			short_seen++;
			continue;
		}
		snprintf(what, sizeof(what), "%s on-CPU ns", lines[i].comm);
		assert_close(what, row->oncpu_ns, lines[i].cpu_ns, TOLERANCE);
		print_message("  %-40s %.4f (the host's clocks, for information)\n", "  task-clock / on-CPU ns",
			      row->counters[0].value / row->oncpu_ns);
	}
	assert_int_equal(short_seen, short_threads);
	assert_close("short-lived threads: total on-CPU ns", short_oncpu, short_self, TOLERANCE);
}

/* The task-clock topdown gave the process's threads, against the kernel's own inherited count. */
static void check_task_clock_total(const struct td_thread_row *rows, size_t nr_rows, pid_t pid,
				   double kernel_count)
{
	double attributed = 0;

	for (size_t i = 0; i < nr_rows; i++)
		if ((pid_t)rows[i].pid == pid)
			attributed += rows[i].counters[0].value;
	assert_close("all threads: task-clock vs the kernel's count", attributed, kernel_count, TOLERANCE);
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
	int go, clock_fd;

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
	clock_fd = open_task_clock(child, true);
	e2e_start_and_wait(c, child, go);
	lines = calloc(short_threads + 16, sizeof(*lines));
	nr_lines = read_report(report, lines, short_threads + 16);
	assert_int_equal(nr_lines, short_threads + 3); /* + spinner, 2 io threads */
	drain_until_exited(c, lines, nr_lines, &rows, &nr_rows);
	assert_int_equal(td_collector_dropped(c), 0);
	check_against_report(rows, nr_rows, lines, nr_lines, short_threads);
	check_task_clock_total(rows, nr_rows, child, read_count(clock_fd));
	close(clock_fd);

	free(lines);
	free(rows);
	td_collector_free(c);
	unlink(report);
}

/* --process NAME also takes processes with that name that start later. */
static void test_process_started_during_window_is_followed(void **state)
{
	const char *name = "td-workload";
	struct td_collector_opts opts = { .process_names = &name, .nr_process_names = 1, .events = &task_clock,
					  .nr_events = 1 };
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
	char init_comm[16], err[512] = "";
	const char *names[] = { init_comm, "no-such-proc-x" }; /* each name must run: the second does not */
	struct td_collector_opts by_name = { .process_names = names, .nr_process_names = 2, .events = &task_clock,
					     .nr_events = 1 };

	(void)state;
	e2e_require_bpf();
	assert_int_equal(td_proc_comm("/proc", 1, init_comm, sizeof(init_comm)), 0);
	assert_null(td_collector_new(&by_pid, err, sizeof(err)));
	assert_non_null(strstr(err, "no process with pid"));
	err[0] = '\0';
	assert_null(td_collector_new(&by_name, err, sizeof(err)));
	assert_non_null(strstr(err, "no running process is named 'no-such-proc-x'"));
}

/* --- rotation: more events than one group holds, counted in turn --- */

#define ROTATION_EVENTS 10
#define ROTATION_GROUP 4      /* the forced budget: groups of 4, 4 and 2 */
#define ROTATION_INTERVALS 6  /* each group twice */
#define ROTATION_INTERVAL_MS 300
#define ROTATION_CLOCK_1 7    /* each group's clock: task-clock, task-clock again, cpu-clock */
static const size_t rotation_clock[3] = { 0, ROTATION_CLOCK_1, 8 };

/* task-clock leads group 0 and cpu-clock group 2: both clocks, counted at different times. */
static size_t rotation_events(struct td_event *events)
{
	char err[256];
	size_t n = 0;

	assert_int_equal(td_event_list_parse("task-clock,context-switches,cpu-migrations,page-faults,"
					     "minor-faults,major-faults,alignment-faults,emulation-faults,cpu-clock",
					     events, ROTATION_EVENTS, &n, err, sizeof(err)), 0);
	/* a clock in the middle group too (the list refuses one event twice): every group has one */
	events[ROTATION_CLOCK_1] = (struct td_event){ "task-clock-again", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 0, 0, false };
	events[n++] = (struct td_event){ "dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, 0, 0, false };
	return n;
}

/*
 * One interval's spinner row: the group active then (interval % 3) is
 * counted, every other event is NaN with running fraction 0; and no count
 * is a bogus delta across a switch (which would be off by the whole
 * count of another event, or wrap around to ~1.8e19). unread_share: the
 * interval's on-CPU time whose counters went unread, not counted by any event.
 */
static void check_rotation_interval(const struct td_thread_row *row, size_t interval, double interval_ns,
				    double unread_share)
{
	size_t group = interval % 3;

	for (size_t e = 0; e < ROTATION_EVENTS; e++) {
		const struct td_counter_value *v = &row->counters[e];

		if (e / ROTATION_GROUP == group) {
			assert_false(isnan(v->value));
			/* software events always run: only the unread time is not counted */
			assert_true(v->running_fraction > 0.99 * (1 - unread_share));
			assert_true(v->running_fraction <= 1.0);
			assert_true(v->value >= 0 && v->value <= 1.1 * interval_ns);
		} else {
			assert_true(isnan(v->value));
			assert_true(v->running_fraction == 0.0);
		}
	}
	/* the thread's switches, as the scheduler counts them; a count extrapolated over unread
	 * time (see above) may stand for switches of that time too */
	if (group == 0)
		assert_true(row->counters[1].value <=
			    (row->voluntary_switches + row->involuntary_switches + 5) / (1 - unread_share));
}

/* The spinner's on-CPU time since the collector started, as of its last drain or rotation. */
static double spinner_oncpu_ns(const struct td_collector *c)
{
	const struct td_thread_row *row;
	struct td_thread_row *rows;
	double oncpu;
	size_t n;

	assert_int_equal(td_collector_totals(c, &rows, &n), 0);
	row = find_tid(rows, n, atomic_load(&spinner_tid));
	assert_non_null(row);
	oncpu = row->oncpu_ns;
	free(rows);
	return oncpu;
}

/*
 * Ten software events, groups of four: each event is counted one interval
 * in three, whole-run counts are scaled by the share of time counted, and
 * those shares are recorded.
 *
 * Scaling: a whole-run clock count, extrapolated from the intervals it
 * was counted in, must be the spinner's on-CPU time (the scheduler's
 * figure) times the rate its clocks tick at, less the time each rotation
 * discards: the on-CPU time charged from the drain's read to the
 * rotation's, measured here as the spinner's on-CPU total after each (a
 * few microseconds of wall time, but the running spinner's runtime is as
 * of its last tick, so now and then a whole tick). Idle, that rate is 1
 * and the result within 1%. But in this KVM guest perf's clocks drift
 * from the scheduler's runtime when other work preempts the spinner: the
 * rate then moves between intervals, by 5-10% under a concurrent test
 * suite (measured), and no extrapolation can know the rate of intervals
 * it did not count. So the rate is measured in every interval that
 * counted a clock (task-clock or cpu-clock, which agree to 0.1% on the
 * same thread), and the scaled count must lie between the lowest and the
 * highest rate times the on-CPU time, with the suite's 2% beyond them.
 * The faults this test exists to catch are far larger: an unscaled count
 * is 3x off, a delta across a switch 1e9 or more, a count charged twice 2x.
 *
 * Each event's recorded fraction is its group's share of the spinner's
 * counted time: the same for the events of a group, and the three groups'
 * shares add up to 1 less the share of its on-CPU time whose counters went
 * unread (td_collector_unread_ns: slices whose switch-in the kernel never
 * showed, which count toward the time but not toward any group). Each is
 * about 1/3, but on a loaded machine the spinner runs more in some
 * intervals than in others, so it is checked against the share of the
 * spinner's on-CPU time that fell in that group's intervals: groups of
 * software events only are read without their times and charged the
 * slice's runtime (docs/DESIGN.md, "Reads without times"), so counted time
 * runs on the scheduler's clock, and perf's drifting rate (above) does not
 * enter. The two may differ by what this run measured, no more:
 *   - the on-CPU time of the rotations, which counters discard and the
 *     next interval's on-CPU time keeps (discarded_ns);
 *   - the unread time.
 * (Against the share of the clocks' counts, a loaded host failed this
 * check now and then: it is off by the drift of perf's rate between
 * intervals.)
 */
static void test_rotation_counts_each_group_in_turn(void **state)
{
	struct td_event events[ROTATION_EVENTS];
	pid_t self = getpid();
	struct td_collector_opts opts = { .pids = &self, .nr_pids = 1, .events = events,
					  .max_group_events = ROTATION_GROUP };
	struct td_thread_row *rows;
	const struct td_thread_row *row;
	struct td_collector *c;
	pthread_t thread;
	size_t nr_rows, counted[ROTATION_EVENTS] = { 0 };
	double discarded_ns = 0, group_oncpu[3] = { 0 }, all_oncpu = 0, min_rate = INFINITY, max_rate = 0;
	double unread_share, share_tolerance, fractions;
	uint64_t unread_ns, unread_before_ns = 0;
	char err[512] = "";

	(void)state;
	e2e_require_bpf();
	opts.nr_events = rotation_events(events);
	atomic_store(&spinner_stop, false);
	assert_int_equal(pthread_create(&thread, NULL, spin, NULL), 0);
	usleep(50 * 1000);
	c = td_collector_new(&opts, err, sizeof(err));
	if (!c)
		fail_msg("collector: %s", err);
	for (size_t i = 0; i < ROTATION_INTERVALS; i++) {
		struct td_interval interval = { 0 };
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		usleep(ROTATION_INTERVAL_MS * 1000);
		assert_int_equal(td_collector_drain(c, &interval, err, sizeof(err)), 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		row = find_tid(interval.threads, interval.nr_threads, atomic_load(&spinner_tid));
		assert_non_null(row);
		unread_ns = td_collector_unread_ns(c, atomic_load(&spinner_tid));
		check_rotation_interval(row, i, (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec),
					row->oncpu_ns ? (double)(unread_ns - unread_before_ns) / row->oncpu_ns : 0);
		unread_before_ns = unread_ns;
		for (size_t e = 0; e < ROTATION_EVENTS; e++)
			counted[e] += !isnan(row->counters[e].value);
		group_oncpu[i % 3] += row->oncpu_ns;
		all_oncpu += row->oncpu_ns;
		{
			double clock = row->counters[rotation_clock[i % 3]].value;

			min_rate = fmin(min_rate, clock / row->oncpu_ns);
			max_rate = fmax(max_rate, clock / row->oncpu_ns);
		}
		free(interval.threads);
		if (i + 1 < ROTATION_INTERVALS) {
			double drained = spinner_oncpu_ns(c);

			assert_int_equal(td_collector_rotate(c, err, sizeof(err)), 0);
			discarded_ns += spinner_oncpu_ns(c) - drained;
		}
	}
	atomic_store(&spinner_stop, true);
	pthread_join(thread, NULL);

	for (size_t e = 0; e < ROTATION_EVENTS; e++)
		assert_int_equal(counted[e], ROTATION_INTERVALS / 3);
	assert_int_equal(td_collector_totals(c, &rows, &nr_rows), 0);
	row = find_tid(rows, nr_rows, atomic_load(&spinner_tid));
	assert_non_null(row);
	unread_share = (double)td_collector_unread_ns(c, atomic_load(&spinner_tid)) / row->oncpu_ns;
	share_tolerance = discarded_ns / all_oncpu + unread_share + 0.001;
	print_message("  rotations discarded %.2f ms of counter time; %.4f of the on-CPU time unread\n",
		      discarded_ns / 1e6, unread_share);
	print_message("  the spinner's clocks ticked at %.4f to %.4f of its on-CPU time\n", min_rate, max_rate);
	for (size_t e = 0; e < ROTATION_EVENTS; e++) {
		double share = group_oncpu[e / ROTATION_GROUP] / all_oncpu;
		double group_first = row->counters[e / ROTATION_GROUP * ROTATION_GROUP].running_fraction;

		print_message("  %-20s counted %.3f of the time; its intervals had %.3f of the on-CPU time (+-%.3f)\n",
			      events[e].name, row->counters[e].running_fraction, share, share_tolerance);
		assert_true(fabs(row->counters[e].running_fraction - share) <= share_tolerance);
		assert_true(fabs(row->counters[e].running_fraction - group_first) <= 0.001); /* read microseconds apart */
	}
	fractions = row->counters[0].running_fraction + row->counters[4].running_fraction +
		    row->counters[8].running_fraction;
	assert_true(fractions <= 1.001);
	assert_true(fractions >= 1 - unread_share * max_rate / min_rate - 0.001);
	for (size_t e = 0; e < ROTATION_EVENTS; e += 8) { /* task-clock, cpu-clock */
		double scaled = row->counters[e].value, oncpu = row->oncpu_ns;

		print_message("  spinner scaled %-10s %.0f, on-CPU ns %.0f, off by %.2f%%\n", events[e].name, scaled,
			      oncpu, 100 * (scaled - oncpu) / oncpu);
		assert_true(scaled <= max_rate * oncpu * (1 + TOLERANCE));
		assert_true(scaled >= min_rate * (oncpu - discarded_ns) * (1 - TOLERANCE));
	}
	assert_int_equal(td_collector_dropped(c), 0);
	free(rows);
	td_collector_free(c);
}

/*
 * td_collector_activate_group: any group, not only the next. Three groups
 * of the ten software events; the intervals count groups 0, then 2
 * (skipping 1), 2 again (activating the active group changes nothing),
 * then 0 (td_collector_rotate goes on from 2), each checked as the
 * rotation test checks its intervals. A group that does not exist is
 * refused and leaves the active one counting.
 */
static void test_activate_group_starts_any_group(void **state)
{
	static const size_t turns[] = { 0, 2, 2, 0, 0 }; /* the group each interval counts */
	struct td_event events[ROTATION_EVENTS];
	pid_t self = getpid();
	struct td_collector_opts opts = { .pids = &self, .nr_pids = 1, .events = events,
					  .max_group_events = ROTATION_GROUP };
	struct td_collector *c;
	pthread_t thread;
	uint64_t unread_ns, unread_before_ns = 0;
	char err[512] = "";

	(void)state;
	e2e_require_bpf();
	opts.nr_events = rotation_events(events);
	atomic_store(&spinner_stop, false);
	assert_int_equal(pthread_create(&thread, NULL, spin, NULL), 0);
	usleep(50 * 1000);
	if (!(c = td_collector_new(&opts, err, sizeof(err))))
		fail_msg("collector: %s", err);
	assert_int_equal(td_collector_group_count(c), 3);
	for (size_t i = 0; i < sizeof(turns) / sizeof(turns[0]); i++) {
		struct td_interval interval = { 0 };
		const struct td_thread_row *row;
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		usleep(ROTATION_INTERVAL_MS * 1000);
		assert_int_equal(td_collector_drain(c, &interval, err, sizeof(err)), 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		row = find_tid(interval.threads, interval.nr_threads, atomic_load(&spinner_tid));
		assert_non_null(row);
		unread_ns = td_collector_unread_ns(c, atomic_load(&spinner_tid));
		/* check_rotation_interval expects group interval % 3 */
		check_rotation_interval(row, turns[i], (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec),
					row->oncpu_ns ? (double)(unread_ns - unread_before_ns) / row->oncpu_ns : 0);
		unread_before_ns = unread_ns;
		free(interval.threads);
		if (i == 0 || i == 1)
			assert_int_equal(td_collector_activate_group(c, 2, err, sizeof(err)), 0);
		else if (i == 2)
			assert_int_equal(td_collector_rotate(c, err, sizeof(err)), 0);
		else if (i == 3) {
			assert_int_equal(td_collector_activate_group(c, 3, err, sizeof(err)), -EINVAL);
			assert_string_equal(err, "counter group 3 does not exist (the plan has 3)");
		}
	}
	atomic_store(&spinner_stop, true);
	pthread_join(thread, NULL);
	td_collector_free(c);
}

/* ---- the ruler: counts scaled by what was counted beside them ---- */

#define RULER_PAGES_A 200  /* faults while the first group counts */
#define RULER_PAGES_B 1800 /* and while the second does */
#define RULER_SPIN_NS 40000000 /* of the worker's CPU time, in each turn */

static atomic_int ruler_phase;        /* 1, 2: run that phase; the worker sets it back to 0 */
static atomic_uint ruler_worker_tid;

/* Spins RULER_SPIN_NS of its own CPU time while faulting in pages new pages. */
static void ruler_work(size_t pages)
{
	long page = sysconf(_SC_PAGESIZE);
	char *mem = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct timespec start, now;

	assert_true(mem != MAP_FAILED);
	madvise(mem, pages * page, MADV_NOHUGEPAGE); /* a fault per page */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
	for (size_t i = 0;; i++) {
		if (i < pages)
			mem[i * page] = 1;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
		if ((now.tv_sec - start.tv_sec) * 1000000000L + now.tv_nsec - start.tv_nsec >= RULER_SPIN_NS && i >= pages)
			break;
	}
	munmap(mem, pages * page);
}

static void *ruler_worker(void *arg)
{
	(void)arg;
	atomic_store(&ruler_worker_tid, (unsigned)syscall(SYS_gettid));
	for (int done = 0; done < 2;) {
		int phase = atomic_load(&ruler_phase);

		if (phase == 0) {
			usleep(1000);
			continue;
		}
		ruler_work(phase == 1 ? RULER_PAGES_A : RULER_PAGES_B);
		atomic_store(&ruler_phase, 0);
		done++;
	}
	return NULL;
}

static void ruler_run_phase(int phase)
{
	atomic_store(&ruler_phase, phase);
	while (atomic_load(&ruler_phase))
		usleep(1000);
}

/*
 * A plan whose groups each count page-faults beside an event of their own,
 * in one kernel group: page-faults is the ruler. The worker spins as long
 * in each group's turn, but faults 9 times as often in the second. Its
 * minor faults, counted in the first turn only, are all of its faults, so
 * their truth over the window is what page-faults counted in both turns:
 * scaled by the ruler (the faults over those counted beside them) they
 * are; scaled by time (twice the first turn's) they would be 5 times too
 * few. The ruler itself, counted in both turns, is scaled by time.
 *
 * (cpu-clock or task-clock as the member read 0 through BPF in a group led
 * by page-faults on this kernel, so the member is a fault count too.)
 */
static void test_ruler_scales_by_what_it_counted_beside(void **state)
{
	static const struct td_event events[] = {
		{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 0, 0, false },
		{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, 0, 0, false },
		{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 0, 0, false },
	};
	struct td_counter_plan plan = {
		.nr_groups = 2,
		.groups = { { .nr_events = 2, .events = { 0, 1 }, .kernel_group = 2 },
			    { .nr_events = 2, .events = { 0, 2 }, .kernel_group = 2 } },
	};
	pid_t self = getpid();
	struct td_collector_opts opts = { .pids = &self, .nr_pids = 1, .events = events, .nr_events = 3,
					  .plan = &plan };
	double faults[2] = { 0 }, minor_first = 0, truth, by_time;
	struct td_thread_row *rows;
	const struct td_thread_row *row;
	struct td_collector *c;
	pthread_t thread;
	size_t n;
	char err[512] = "";

	(void)state;
	e2e_require_bpf();
	atomic_store(&ruler_phase, 0);
	atomic_store(&ruler_worker_tid, 0);
	assert_int_equal(pthread_create(&thread, NULL, ruler_worker, NULL), 0);
	while (!atomic_load(&ruler_worker_tid))
		usleep(1000);
	c = td_collector_new(&opts, err, sizeof(err));
	if (!c)
		fail_msg("collector: %s", err);
	for (int phase = 1; phase <= 2; phase++) {
		struct td_interval interval = { 0 };

		ruler_run_phase(phase);
		assert_int_equal(td_collector_drain(c, &interval, err, sizeof(err)), 0);
		row = find_tid(interval.threads, interval.nr_threads, atomic_load(&ruler_worker_tid));
		assert_non_null(row);
		faults[phase - 1] = row->counters[0].value;
		if (phase == 1) {
			minor_first = row->counters[1].value;
			assert_int_equal(td_collector_rotate(c, err, sizeof(err)), 0);
		}
		free(interval.threads);
	}
	pthread_join(thread, NULL);
	/* the faults are the pages touched, and more of the thread's own (a sanitizer's shadow
	 * pages): the second turn's several times the first's */
	assert_true(faults[0] >= RULER_PAGES_A && faults[1] >= RULER_PAGES_B);
	assert_true(faults[1] >= 4 * faults[0]);
	assert_true(minor_first >= RULER_PAGES_A && minor_first <= faults[0]);
	assert_int_equal(td_collector_totals(c, &rows, &n), 0);
	row = find_tid(rows, n, atomic_load(&ruler_worker_tid));
	assert_non_null(row);
	truth = faults[0] + faults[1];
	by_time = minor_first / row->counters[1].running_fraction;
	print_message("  minor faults: %.0f counted in the first turn, %.0f scaled by the ruler, %.0f by time;"
		      " %.0f faults in both turns\n", minor_first, row->counters[1].value, by_time, truth);
	assert_true(fabs(row->counters[1].value - truth) <= 0.02 * truth);
	assert_true(by_time < truth / 3); /* the test tells the two apart */
	assert_true(fabs(row->counters[0].value - truth) <= 0.02 * truth);
	free(rows);
	td_collector_free(c);
}

/* Sums what a drain of the samples hands over for one tid. */
struct sample_sum {
	uint32_t tid;
	uint64_t samples, of_tid, with_user_stack;
};

static int add_samples(void *ctx, const struct td_raw_stack *raw)
{
	struct sample_sum *sum = ctx;

	sum->samples += raw->count;
	if (raw->tid == sum->tid) {
		sum->of_tid += raw->count;
		sum->with_user_stack += raw->nr_user ? raw->count : 0;
	}
	return 0;
}

/*
 * Locate's kernel side: the spinner's samples come back with its stacks,
 * counted once per (thread, stack) by the kernel; switching the event
 * keeps sampling, and an event that cannot open leaves the old one on.
 */
static void test_sampling_and_switching_event(void **state)
{
	pid_t self = getpid();
	struct td_sample_opts sample = { .frequency_hz = 499 };
	struct td_collector_opts opts = { .pids = &self, .nr_pids = 1, .events = &task_clock, .nr_events = 1,
					  .sample = &sample };
	struct td_sample_tally tally;
	struct sample_sum first = { 0 }, second = { 0 }, third = { 0 };
	struct td_collector *c;
	pthread_t thread;
	char err[512] = "";

	(void)state;
	e2e_require_bpf();
	assert_int_equal(td_event_resolve("cpu-clock", &sample.event, err, sizeof(err)), 0);
	atomic_store(&spinner_stop, false);
	assert_int_equal(pthread_create(&thread, NULL, spin, NULL), 0);
	usleep(50 * 1000);
	c = td_collector_new(&opts, err, sizeof(err));
	if (!c)
		fail_msg("collector: %s", err);
	first.tid = second.tid = third.tid = atomic_load(&spinner_tid);
	usleep(400 * 1000);
	assert_int_equal(td_collector_drain_samples(c, add_samples, &first, err, sizeof(err)), 0);
	assert_int_equal(td_event_resolve("task-clock", &sample.event, err, sizeof(err)), 0);
	assert_int_equal(td_collector_resample(c, &sample, err, sizeof(err)), 0);
	usleep(400 * 1000);
	assert_int_equal(td_collector_drain_samples(c, add_samples, &second, err, sizeof(err)), 0);
	sample.event = (struct td_event){ "bogus-sw", PERF_TYPE_SOFTWARE, 0x7777, 0, 0, false };
	assert_int_equal(td_collector_resample(c, &sample, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "bogus-sw"));
	usleep(400 * 1000);
	assert_int_equal(td_collector_drain_samples(c, add_samples, &third, err, sizeof(err)), 0);
	td_collector_sample_tally(c, &tally);
	atomic_store(&spinner_stop, true);
	pthread_join(thread, NULL);
	print_message("  spinner samples: %llu on cpu-clock, %llu on task-clock, %llu after a failed switch\n",
		      (unsigned long long)first.of_tid, (unsigned long long)second.of_tid,
		      (unsigned long long)third.of_tid);
	/* ~0.4 s at 499 Hz on a spinner that has at least a third of a CPU */
	assert_true(first.of_tid > 40 && second.of_tid > 40 && third.of_tid > 40);
	assert_true(first.with_user_stack == first.of_tid); /* a user thread: every sample has its user side */
	assert_true(tally.samples >= first.samples + second.samples + third.samples);
	assert_int_equal(tally.lost_samples, 0);
	td_collector_free(c);
}

/* Refused before anything loads: a malformed plan, too many events. */
static void test_bad_plans_are_errors(void **state)
{
	pid_t self = getpid();
	struct td_counter_plan bad_index = { .nr_groups = 1, .groups[0] = { .nr_events = 1, .events = { 1 } } };
	struct td_counter_plan empty_group = { .nr_groups = 1 };
	struct td_collector_opts opts = { .pids = &self, .nr_pids = 1, .events = &task_clock, .nr_events = 1 };
	static struct td_event many[TD_MAX_EVENTS + 1];
	char err[512] = "";

	(void)state;
	opts.plan = &bad_index;
	assert_null(td_collector_new(&opts, err, sizeof(err)));
	assert_non_null(strstr(err, "counter group 0 is malformed"));
	opts.plan = &empty_group;
	assert_null(td_collector_new(&opts, err, sizeof(err)));
	assert_non_null(strstr(err, "counter group 0 is malformed"));
	opts.plan = NULL;
	opts.events = many;
	opts.nr_events = TD_MAX_EVENTS + 1;
	assert_null(td_collector_new(&opts, err, sizeof(err)));
	assert_non_null(strstr(err, "more than the"));
}

/* An event the kernel refuses: nothing is left open, and the message names it. */
static void test_unopenable_event_is_an_error(void **state)
{
	pid_t self = getpid();
	struct td_event bogus = { "bogus-sw", PERF_TYPE_SOFTWARE, 0x7777, 0, 0, false };
	struct td_collector_opts opts = { .pids = &self, .nr_pids = 1, .events = &bogus, .nr_events = 1 };
	char err[512] = "";

	(void)state;
	e2e_require_bpf();
	assert_null(td_collector_new(&opts, err, sizeof(err)));
	print_message("  %s\n", err);
	assert_non_null(strstr(err, "cannot open event 'bogus-sw' on CPU 0"));
}

/* --- windows (the agent's): per-window totals, forgetting, pause, losses --- */

static void *exit_at_once(void *arg)
{
	(void)arg;
	atomic_store((atomic_int *)arg, gettid());
	return NULL;
}

static const struct td_thread_row *spinner_row(const struct td_thread_row *rows, size_t n)
{
	const struct td_thread_row *row = find_tid(rows, n, atomic_load(&spinner_tid));

	assert_non_null(row);
	return row;
}

/*
 * Each window's rows hold what happened in that window only; a thread
 * that exited is reported in its window and then forgotten.
 */
static void test_windows_report_and_forget(void **state)
{
	pid_t self = getpid();
	struct td_collector_opts opts = { .pids = &self, .nr_pids = 1, .events = &task_clock, .nr_events = 1 };
	struct td_collector *c;
	pthread_t spinner, shortlived;
	atomic_int short_tid = 0;
	size_t tracked_before = 0;
	struct bracket oncpu;
	char err[512] = "";

	(void)state;
	e2e_require_bpf();
	atomic_store(&spinner_stop, false);
	assert_int_equal(pthread_create(&spinner, NULL, spin, NULL), 0);
	usleep(50 * 1000);
	oncpu.start_before = thread_cpu_ns(spinner);
	c = td_collector_new(&opts, err, sizeof(err));
	if (!c)
		fail_msg("collector: %s", err);
	oncpu.start_after = thread_cpu_ns(spinner);
	for (int window = 0; window < 3; window++) {
		struct td_thread_row *rows;
		size_t n;

		if (window == 0) {
			assert_int_equal(pthread_create(&shortlived, NULL, exit_at_once, &short_tid), 0);
			pthread_join(shortlived, NULL);
		}
		usleep(500 * 1000);
		assert_int_equal(td_collector_poll(c, 0, err, sizeof(err)), 0);
		oncpu.end_before = thread_cpu_ns(spinner);
		assert_int_equal(td_collector_drain(c, NULL, err, sizeof(err)), 0);
		oncpu.end_after = thread_cpu_ns(spinner);
		if (window == 1)
			tracked_before = td_collector_thread_count(c);
		assert_int_equal(td_collector_end_window(c, &rows, &n, err, sizeof(err)), 0);
		assert_bracketed("spinner on-CPU ns in the window", spinner_row(rows, n)->oncpu_ns, &oncpu, TOLERANCE);
		/* this window ended with the drain: the next one starts there */
		oncpu.start_before = oncpu.end_before;
		oncpu.start_after = oncpu.end_after;
		if (window == 0) {
			const struct td_thread_row *gone = find_tid(rows, n, atomic_load(&short_tid));

			assert_non_null(gone);
			assert_true(gone->exited);
		} else {
			assert_null(find_tid(rows, n, atomic_load(&short_tid)));
		}
		for (size_t i = 0; i < n; i++)
			assert_false(rows[i].exited && window > 0); /* only window 0 had a thread exit */
		free(rows);
	}
	/* what is kept: the live threads, no more than before the window ended */
	assert_true(td_collector_thread_count(c) <= tracked_before);
	atomic_store(&spinner_stop, true);
	pthread_join(spinner, NULL);
	assert_int_equal(td_collector_dropped(c), 0);
	td_collector_free(c);
}

/* A thread that waits for a byte on fd (arg), then exits. */
static void *exit_on_byte(void *arg)
{
	char byte;

	atomic_store(&waiter_tid, gettid());
	if (read((int)(intptr_t)arg, &byte, 1) < 0)
		return NULL;
	return NULL;
}

/*
 * Paused, nothing is charged; after a resume only the time since counts.
 * A thread that dies while paused still sends its record: it is in the
 * window's rows, exited, and the collector forgets it.
 */
static void test_pause_charges_nothing(void **state)
{
	pid_t self = getpid();
	struct td_collector_opts opts = { .pids = &self, .nr_pids = 1, .events = &task_clock, .nr_events = 1 };
	struct td_collector *c;
	pthread_t spinner, waiter;
	struct bracket counted;
	char err[512] = "";
	int fds[2];

	(void)state;
	e2e_require_bpf();
	atomic_store(&spinner_stop, false);
	assert_int_equal(pthread_create(&spinner, NULL, spin, NULL), 0);
	usleep(50 * 1000);
	counted.start_before = thread_cpu_ns(spinner);
	c = td_collector_new(&opts, err, sizeof(err));
	if (!c)
		fail_msg("collector: %s", err);
	counted.start_after = thread_cpu_ns(spinner);
	for (int window = 0; window < 2; window++) {
		struct td_thread_row *rows;
		size_t n;

		if (window > 0) { /* counting starts again at the resume */
			counted.start_before = thread_cpu_ns(spinner);
			assert_int_equal(td_collector_resume(c, err, sizeof(err)), 0);
			counted.start_after = thread_cpu_ns(spinner);
		}
		if (window == 0) {
			assert_int_equal(pipe(fds), 0);
			assert_int_equal(pthread_create(&waiter, NULL, exit_on_byte, (void *)(intptr_t)fds[0]), 0);
		}
		usleep(400 * 1000);
		counted.end_before = thread_cpu_ns(spinner);
		assert_int_equal(td_collector_drain(c, NULL, err, sizeof(err)), 0);
		td_collector_pause(c);
		counted.end_after = thread_cpu_ns(spinner);
		if (window == 0) { /* the waiter, known to the collector, dies while paused */
			assert_int_equal(write(fds[1], "x", 1), 1);
			pthread_join(waiter, NULL);
		}
		usleep(400 * 1000); /* the spinner keeps running: none of this may be charged */
		assert_int_equal(td_collector_poll(c, 0, err, sizeof(err)), 0);
		assert_int_equal(td_collector_end_window(c, &rows, &n, err, sizeof(err)), 0);
		assert_bracketed("spinner on-CPU ns, counted part only", spinner_row(rows, n)->oncpu_ns, &counted,
				 TOLERANCE);
		if (window == 0) {
			const struct td_thread_row *gone = find_tid(rows, n, atomic_load(&waiter_tid));

			assert_non_null(gone);
			assert_true(gone->exited);
		} else {
			assert_null(find_tid(rows, n, atomic_load(&waiter_tid)));
		}
		free(rows);
	}
	close(fds[0]);
	close(fds[1]);
	atomic_store(&spinner_stop, true);
	pthread_join(spinner, NULL);
	td_collector_free(c);
}

/*
 * A collector with places for max_threads records, following a process
 * of 300 short threads (two at a time) and two I/O threads to its end;
 * lines (room for 400) gets the threads' own report of themselves.
 */
static struct td_collector *follow_short_threads(uint32_t max_threads, struct report_line *lines, size_t *nr_lines,
						 pid_t *child)
{
	char report[] = "/tmp/td-e2e-report-XXXXXX", err[512] = "";
	struct td_collector_opts opts = { .events = &task_clock, .nr_events = 1, .max_threads = max_threads };
	struct td_collector *c;
	int go;

	assert_non_null(lines);
	close(mkstemp(report));
	*child = e2e_spawn_workload(&go, report, "--duration-ms", "300", "--io-threads", "2", "--short-threads", "300",
				    "--short-work-us", "200", NULL);
	opts.pids = child;
	opts.nr_pids = 1;
	c = td_collector_new(&opts, err, sizeof(err));
	if (!c)
		fail_msg("collector: %s", err);
	e2e_start_and_wait(c, *child, go);
	*nr_lines = read_report(report, lines, 400);
	unlink(report);
	assert_int_equal(*nr_lines, 303);
	return c;
}

/*
 * Records for 4 threads, for a process of 300 short threads and five
 * long ones: most short threads never get a record. Every thread is
 * either in the rows, exited, or counted as lost: none goes missing
 * unreported.
 */
static void test_lost_threads_are_counted_exactly(void **state)
{
	struct report_line *lines = calloc(400, sizeof(*lines));
	size_t nr_lines, exited = 0, threads;
	struct td_collector *c;
	char err[512] = "";
	pid_t child;

	(void)state;
	e2e_require_bpf();
	c = follow_short_threads(4, lines, &nr_lines, &child);
	threads = nr_lines + 2; /* the main thread and the spawner write no report line */
	for (int attempt = 0; attempt < 100 && exited + td_collector_lost_threads(c) < threads; attempt++) {
		struct td_thread_row *rows;
		size_t n;

		usleep(50 * 1000);
		assert_int_equal(td_collector_drain(c, NULL, err, sizeof(err)), 0);
		assert_int_equal(td_collector_end_window(c, &rows, &n, err, sizeof(err)), 0);
		for (size_t i = 0; i < n; i++)
			exited += (pid_t)rows[i].pid == child && rows[i].exited;
		free(rows);
	}
	print_message("  %zu threads: %zu reported exited, %llu lost (records for 4), %llu slices dropped\n", threads,
		      exited, (unsigned long long)td_collector_lost_threads(c),
		      (unsigned long long)td_collector_dropped(c));
	assert_true(td_collector_lost_threads(c) > 0);
	assert_int_equal(exited + td_collector_lost_threads(c), threads);
	free(lines);
	td_collector_free(c);
}

/*
 * The records' places come back at each exit: the 300 short threads pass
 * through 16 places, none lost, every one reported exited.
 */
static void test_places_are_reused(void **state)
{
	struct report_line *lines = calloc(400, sizeof(*lines));
	struct td_thread_row *rows;
	struct td_collector *c;
	size_t nr_lines, nr_rows;
	pid_t child;

	(void)state;
	e2e_require_bpf();
	c = follow_short_threads(16, lines, &nr_lines, &child);
	drain_until_exited(c, lines, nr_lines, &rows, &nr_rows);
	print_message("  303 threads through 16 places: %llu lost, %llu slices dropped\n",
		      (unsigned long long)td_collector_lost_threads(c), (unsigned long long)td_collector_dropped(c));
	assert_int_equal(td_collector_lost_threads(c), 0);
	assert_int_equal(td_collector_dropped(c), 0);
	free(rows);
	free(lines);
	td_collector_free(c);
}

/*
 * One process of short threads that all exit with no drain meanwhile;
 * then drains until each is reported exited, and checks each is there once.
 */
static void churn_undrained(struct td_collector *c, const char *path, int short_threads)
{
	char report[] = "/tmp/td-e2e-report-XXXXXX", count[16];
	size_t max_lines = short_threads + 8, nr_lines, nr_rows;
	struct report_line *lines = calloc(max_lines, sizeof(*lines));
	struct td_thread_row *rows;
	pid_t child;
	int go, status;

	assert_non_null(lines);
	close(mkstemp(report));
	snprintf(count, sizeof(count), "%d", short_threads);
	child = e2e_spawn_workload_at(path, &go, report, "--duration-ms", "10", "--io-threads", "1", "--short-threads",
				      count, "--short-work-us", "1", NULL);
	assert_int_equal(write(go, "g", 1), 1); /* the kernel made it a target at exec, by name */
	close(go);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	nr_lines = read_report(report, lines, max_lines);
	assert_int_equal(nr_lines, short_threads + 2); /* and the I/O thread and the spinner */
	drain_until_exited(c, lines, nr_lines, &rows, &nr_rows);
	for (size_t i = 0; i < nr_lines; i++) {
		size_t seen = 0;

		for (size_t r = 0; r < nr_rows; r++)
			seen += rows[r].tid == (uint32_t)lines[i].tid && (pid_t)rows[r].pid == child;
		assert_int_equal(seen, 1);
	}
	free(rows);
	free(lines);
	unlink(report);
}

/*
 * More exits between two drains than the exit ring holds (about 13,000):
 * the rest stay in their records, marked, and the drain reads them and
 * frees their places. Twice, with places for 4,096 threads: the second
 * process's kept exits need the places the first one's held.
 */
static void test_exits_beyond_the_ring_are_kept(void **state)
{
	char name[16], path[4096], err[512] = "";
	const char *names[] = { name };
	struct td_collector_opts opts = { .process_names = names, .nr_process_names = 1, .wait_for_targets = true,
					  .events = &task_clock, .nr_events = 1, .max_threads = 4096 };
	struct td_collector *c;
	uint64_t kept_first;

	(void)state;
	e2e_require_bpf();
	snprintf(name, sizeof(name), "tdw-k%d", getpid());
	e2e_workload_link(name, path, sizeof(path));
	c = td_collector_new(&opts, err, sizeof(err));
	if (!c)
		fail_msg("collector: %s", err);
	churn_undrained(c, path, 16000);
	kept_first = td_collector_exits_kept(c);
	churn_undrained(c, path, 16000);
	print_message("  2 x 16002 threads exited undrained: %llu then %llu exit records kept in the map, "
		      "%llu lost, %llu slices dropped\n", (unsigned long long)kept_first,
		      (unsigned long long)(td_collector_exits_kept(c) - kept_first),
		      (unsigned long long)td_collector_lost_threads(c), (unsigned long long)td_collector_dropped(c));
	assert_true(kept_first > 0);
	assert_true(td_collector_exits_kept(c) > kept_first);
	assert_int_equal(td_collector_lost_threads(c), 0);
	assert_int_equal(td_collector_dropped(c), 0);
	td_collector_free(c);
	e2e_workload_unlink(path);
}

static void test_bpf_run_time_is_measured(void **state)
{
	pid_t self = getpid();
	struct td_collector_opts opts = { .pids = &self, .nr_pids = 1, .events = &task_clock, .nr_events = 1 };
	struct td_collector *c;
	uint64_t first, second;
	char err[512] = "";

	(void)state;
	e2e_require_bpf();
	c = td_collector_new(&opts, err, sizeof(err));
	if (!c)
		fail_msg("collector: %s", err);
	assert_int_equal(td_collector_time_bpf(c, true, err, sizeof(err)), 0);
	assert_int_equal(td_collector_bpf_run_ns(c, &first, err, sizeof(err)), 0);
	for (int i = 0; i < 200; i++)
		usleep(1000); /* 200 switches of this thread at least */
	assert_int_equal(td_collector_bpf_run_ns(c, &second, err, sizeof(err)), 0);
	print_message("  BPF run time over 200 sleeps: %llu ns\n", (unsigned long long)(second - first));
	assert_true(second > first);
	assert_true(second - first < 200 * 1000000ull); /* far below the time it took */
	/* off again: unless the sysctl times every program anyway, there is no figure */
	assert_int_equal(td_collector_time_bpf(c, false, err, sizeof(err)), 0);
	if (!td_collector_bpf_always_timed())
		assert_int_equal(td_collector_bpf_run_ns(c, &second, err, sizeof(err)), -EOPNOTSUPP);
	td_collector_free(c);
}

/* Drops CAP_SYS_ADMIN from this process's effective set (root keeps CAP_BPF, CAP_PERFMON). */
static void drop_sys_admin(void)
{
	struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	assert_int_equal(syscall(SYS_capget, &header, data), 0);
	data[CAP_SYS_ADMIN / 32].effective &= ~(1u << (CAP_SYS_ADMIN % 32));
	assert_int_equal(syscall(SYS_capset, &header, data), 0);
}

/*
 * Without CAP_SYS_ADMIN the kernel will not start timing BPF programs
 * for us: the collector still runs, and asking for the run time says why
 * it has none (unless someone set kernel.bpf_stats_enabled meanwhile).
 */
static void test_bpf_run_time_without_sys_admin(void **state)
{
	pid_t child;
	int status;

	(void)state;
	e2e_require_bpf();
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pid_t self = getpid();
		struct td_collector_opts opts = { .pids = &self, .nr_pids = 1, .events = &task_clock, .nr_events = 1 };
		struct td_collector *c;
		uint64_t run_ns;
		char err[512] = "";
		int ret;

		drop_sys_admin();
		c = td_collector_new(&opts, err, sizeof(err));
		if (!c) {
			print_message("  collector without CAP_SYS_ADMIN: %s\n", err);
			_exit(2);
		}
		ret = td_collector_time_bpf(c, true, err, sizeof(err));
		print_message("  without CAP_SYS_ADMIN, timing: %d %s\n", ret, err);
		if (ret != -EPERM || !strstr(err, "that needs CAP_SYS_ADMIN"))
			_exit(5);
		ret = td_collector_bpf_run_ns(c, &run_ns, err, sizeof(err));
		print_message("  without CAP_SYS_ADMIN: %d %s\n", ret, err);
		if (td_collector_bpf_always_timed())
			_exit(ret == 0 ? 0 : 3);
		_exit(ret == -EOPNOTSUPP && strstr(err, "needs CAP_SYS_ADMIN") ? 0 : 4);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* Waiting for a name no process has yet; following it once one starts (exec). */
static void test_absent_name_is_waited_for(void **state)
{
	char name[16], path[4096], err[512] = "";
	const char *names[] = { "no-such-proc-x", name };
	struct td_collector_opts opts = { .process_names = names, .nr_process_names = 2, .wait_for_targets = true,
					  .events = &task_clock, .nr_events = 1 };
	struct td_thread_row *rows;
	struct td_collector *c;
	size_t n, seen = 0;
	pid_t child;
	int go;

	(void)state;
	e2e_require_bpf();
	snprintf(name, sizeof(name), "tdw-c%d", getpid());
	e2e_workload_link(name, path, sizeof(path));
	c = td_collector_new(&opts, err, sizeof(err));
	if (!c)
		fail_msg("collector: %s", err);
	assert_int_equal(td_collector_processes_named(c, 0), 0);
	assert_int_equal(td_collector_processes_named(c, 1), 0);
	child = e2e_spawn_workload_at(path, &go, NULL, NULL);
	usleep(100 * 1000); /* exec'd, held at --wait-start */
	assert_int_equal(td_collector_drain(c, NULL, err, sizeof(err)), 0);
	assert_int_equal(td_collector_processes_named(c, 1), 1);
	e2e_start_and_wait(c, child, go);
	assert_int_equal(td_collector_drain(c, NULL, err, sizeof(err)), 0);
	assert_int_equal(td_collector_end_window(c, &rows, &n, err, sizeof(err)), 0);
	for (size_t i = 0; i < n; i++)
		seen += (pid_t)rows[i].pid == child && !strcmp(rows[i].comm, "spinner");
	assert_int_equal(seen, 1);
	free(rows);
	td_collector_free(c);
	e2e_workload_unlink(path);
}

/* Releases a held workload and waits until it has exited, unreaped: a zombie. */
static void release_until_zombie(struct td_collector *c, pid_t pid, int go)
{
	char err[256];

	assert_int_equal(write(go, "g", 1), 1);
	close(go);
	for (int i = 0; i < 200 && td_proc_state("/proc", pid) != TD_PROC_ZOMBIE; i++)
		assert_int_equal(td_collector_poll(c, 50, err, sizeof(err)), 0);
	assert_int_equal(td_proc_state("/proc", pid), TD_PROC_ZOMBIE);
}

/* Targets run until the last has exited: --pid's, then a name's, the one that started later included. */
static void test_targets_running_until_the_last_exits(void **state)
{
	char name[16], path[4096], err[512] = "";
	const char *names[] = { name };
	struct td_collector_opts by_name = { .process_names = names, .nr_process_names = 1, .events = &task_clock,
					     .nr_events = 1 };
	struct td_collector_opts wide = { .system_wide = true, .events = &task_clock, .nr_events = 1 };
	struct td_collector_opts by_pid = { .events = &task_clock, .nr_events = 1 };
	struct td_collector *c;
	pid_t pids[2];
	int go[2];

	(void)state;
	e2e_require_bpf();
	for (int i = 0; i < 2; i++)
		pids[i] = e2e_spawn_workload(&go[i], NULL, "--duration-ms", "50", "--io-threads", "0", NULL);
	by_pid.pids = pids;
	by_pid.nr_pids = 2;
	c = td_collector_new(&by_pid, err, sizeof(err));
	if (!c)
		fail_msg("collector: %s", err);
	assert_true(td_collector_targets_running(c));
	release_until_zombie(c, pids[0], go[0]);
	assert_true(td_collector_targets_running(c)); /* the second runs on */
	release_until_zombie(c, pids[1], go[1]);
	assert_false(td_collector_targets_running(c));
	td_collector_free(c);
	for (int i = 0; i < 2; i++)
		assert_int_equal(waitpid(pids[i], NULL, 0), pids[i]);

	snprintf(name, sizeof(name), "tdw-t%d", getpid());
	e2e_workload_link(name, path, sizeof(path));
	pids[0] = e2e_spawn_workload_at(path, &go[0], NULL, "--duration-ms", "50", "--io-threads", "0", NULL);
	usleep(100 * 1000); /* exec'd, held at --wait-start */
	c = td_collector_new(&by_name, err, sizeof(err));
	if (!c)
		fail_msg("collector: %s", err);
	pids[1] = e2e_spawn_workload_at(path, &go[1], NULL, "--duration-ms", "50", "--io-threads", "0", NULL);
	usleep(100 * 1000);
	release_until_zombie(c, pids[0], go[0]);
	assert_int_equal(waitpid(pids[0], NULL, 0), pids[0]); /* gone altogether */
	assert_true(td_collector_targets_running(c)); /* the one that started during the window */
	release_until_zombie(c, pids[1], go[1]);
	assert_false(td_collector_targets_running(c));
	assert_int_equal(waitpid(pids[1], NULL, 0), pids[1]);
	assert_false(td_collector_targets_running(c));
	td_collector_free(c);
	e2e_workload_unlink(path);

	c = td_collector_new(&wide, err, sizeof(err));
	if (!c)
		fail_msg("collector: %s", err);
	assert_true(td_collector_targets_running(c));
	td_collector_free(c);

	/* a kernel thread followed by name never exits */
	snprintf(name, sizeof(name), "kthreadd");
	c = td_collector_new(&by_name, err, sizeof(err));
	if (!c)
		fail_msg("collector: %s", err);
	assert_true(td_collector_targets_running(c));
	td_collector_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spinner_fully_accounted_tp_btf),
		cmocka_unit_test(test_spinner_fully_accounted_raw_tp),
		cmocka_unit_test(test_runq_wait_is_the_schedulers_tp_btf),
		cmocka_unit_test(test_runq_wait_is_the_schedulers_raw_tp),
		cmocka_unit_test(test_workload_threads_match_self_measurement),
		cmocka_unit_test(test_process_started_during_window_is_followed),
		cmocka_unit_test(test_system_wide_sees_workload),
		cmocka_unit_test(test_missing_targets_are_errors),
		cmocka_unit_test(test_rotation_counts_each_group_in_turn),
		cmocka_unit_test(test_activate_group_starts_any_group),
		cmocka_unit_test(test_ruler_scales_by_what_it_counted_beside),
		cmocka_unit_test(test_bad_plans_are_errors),
		cmocka_unit_test(test_unopenable_event_is_an_error),
		cmocka_unit_test(test_sampling_and_switching_event),
		cmocka_unit_test(test_windows_report_and_forget),
		cmocka_unit_test(test_pause_charges_nothing),
		cmocka_unit_test(test_lost_threads_are_counted_exactly),
		cmocka_unit_test(test_places_are_reused),
		cmocka_unit_test(test_exits_beyond_the_ring_are_kept),
		cmocka_unit_test(test_bpf_run_time_is_measured),
		cmocka_unit_test(test_bpf_run_time_without_sys_admin),
		cmocka_unit_test(test_absent_name_is_waited_for),
		cmocka_unit_test(test_targets_running_until_the_last_exits),
	};

	e2e_filter_tests();
	return cmocka_run_group_tests(tests, setup, NULL);
}
