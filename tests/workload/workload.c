// SPDX-License-Identifier: BSD-3-Clause
/*
 * td-workload: a multi-threaded program with named threads, for the demo,
 * the end-to-end tests and the benchmark. It measures itself, so what the
 * collector reports can be checked against it:
 *
 *   spinner      one thread that computes and never blocks
 *   io_thd_N     threads that sleep and wake often, doing a little work
 *   short_N      threads that live for a few milliseconds of CPU and exit
 *   known_loop   with --known-loop N: a loop of exactly 2N instructions
 *   known_alt    with --known-alt N: bursts of that loop, each followed by a nap
 *   split_a/b    with --split: locate's truth, a known split of each thread's
 *                instructions between functions (see split_a)
 *   deep         with --deep N: spins N calls deep in recurse(), deeper than
 *                the kernel keeps a stack when N is above 127
 *   stacks       with --stacks N: spins in turn at the end of N distinct
 *                call paths, for what many distinct stacks cost a profiler
 *
 * It is built with frame pointers, as a profiled program should be, so
 * that sampled stacks reach main.
 * Every measured thread reads its own CLOCK_THREAD_CPUTIME_ID as its last act and
 * the report (--report FILE) lists "tid comm cpu_ns" per thread.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct thread_result {
	pid_t tid;
	char comm[16];
	uint64_t cpu_ns;
};

static struct {
	long duration_ms;
	int io_threads;
	long io_period_us;
	long io_work_us;
	int short_threads;
	long short_work_us;
	bool wait_start;
	long long known_loop;
	long long known_alt;
	int alt_bursts;
	bool split;
	int deep;
	int stacks;
	const char *report;
} cfg = { .duration_ms = 2000, .io_threads = 2, .io_period_us = 1000, .io_work_us = 20,
	  .short_threads = 0, .short_work_us = 3000, .alt_bursts = 25 };

static atomic_bool stop;
static struct thread_result *results;
static atomic_int nr_results;

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* The thread's last act: record who it was and the CPU time it used. */
static void record_self(void)
{
	struct thread_result *r = &results[atomic_fetch_add(&nr_results, 1)];

	r->tid = gettid();
	pthread_getname_np(pthread_self(), r->comm, sizeof(r->comm));
	r->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static volatile uint64_t sink;

static void burn_cpu_us(long us)
{
	uint64_t until = clock_ns(CLOCK_THREAD_CPUTIME_ID) + us * 1000;
	uint64_t x = sink;

	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < until)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

static void *spinner(void *arg)
{
	uint64_t x = 1;

	(void)arg;
	pthread_setname_np(pthread_self(), "spinner");
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
	record_self();
	return NULL;
}

static void *io_thread(void *arg)
{
	char name[16];
	struct timespec period = { 0, cfg.io_period_us * 1000 };

	snprintf(name, sizeof(name), "io_thd_%d", (int)(intptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	while (!atomic_load(&stop)) {
		nanosleep(&period, NULL);
		burn_cpu_us(cfg.io_work_us);
	}
	record_self();
	return NULL;
}

static void *short_thread(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "short_%d", (int)(intptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	burn_cpu_us(cfg.short_work_us);
	record_self();
	return NULL;
}

#if defined(__aarch64__)
#define COUNT_DOWN(n) __asm__ volatile("1: subs %0, %0, #1\n\tb.ne 1b" : "+r"(n) : : "cc")
#elif defined(__x86_64__)
#define COUNT_DOWN(n) __asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(n) : : "cc")
#else
#error "td-workload needs its counting loop written for this architecture"
#endif

/*
 * --known-loop N: a thread whose loop retires exactly 2N instructions (a
 * decrement and a conditional branch a turn), the truth the kernel lab
 * checks per-thread instruction counts against; naming the thread and
 * recording it add a few thousand more, in user space and the kernel.
 */
static void *known_loop(void *arg)
{
	unsigned long long n = cfg.known_loop;

	(void)arg;
	pthread_setname_np(pthread_self(), "known_loop");
	COUNT_DOWN(n);
	record_self();
	return NULL;
}

/*
 * --known-alt N: a thread that alternates busy and asleep --alt-bursts
 * times: N turns of the known loop (2N instructions; 20 ms on the kernel
 * lab's 1 GHz virtual clock for N = 10,000,000), then ALT_NAP_MS of
 * nanosleep. Its loops retire exactly 2N times the bursts, the truth for
 * per-thread counts of a thread that leaves its CPU as often as it runs.
 */
#define ALT_NAP_MS 20

static void *known_alt(void *arg)
{
	struct timespec nap = { 0, ALT_NAP_MS * 1000000L };

	(void)arg;
	pthread_setname_np(pthread_self(), "known_alt");
	for (int burst = 0; burst < cfg.alt_bursts; burst++) {
		unsigned long long n = cfg.known_alt;

		COUNT_DOWN(n);
		nanosleep(&nap, NULL);
	}
	record_self();
	return NULL;
}

/*
 * --split: split_a retires 70% of its instructions in hot_a and 30% in
 * hot_b, split_b all of its own in hot_c: the same loop (as --known-loop's)
 * in each, so a share of time is a share of instructions. noipa keeps
 * each a function of its own, never inlined or merged with its twins.
 */
#define SPLIT_CHUNK 100000ull /* turns of a loop per call: ~30 us */
/* A local on the stack, so that even these leaves set up a frame and a
 * sampled stack reaches their caller. */
#define SPLIT_FRAME volatile int framed = 1; (void)framed

__attribute__((noipa)) void hot_a(unsigned long long n)
{
	SPLIT_FRAME;
	COUNT_DOWN(n);
}

__attribute__((noipa)) void hot_b(unsigned long long n)
{
	SPLIT_FRAME;
	COUNT_DOWN(n);
}

__attribute__((noipa)) void hot_c(unsigned long long n)
{
	SPLIT_FRAME;
	COUNT_DOWN(n);
}

static void *split_a(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "split_a");
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		hot_a(7 * SPLIT_CHUNK);
		hot_b(3 * SPLIT_CHUNK);
	}
	record_self();
	return NULL;
}

static void *split_b(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "split_b");
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		hot_c(10 * SPLIT_CHUNK);
	record_self();
	return NULL;
}

/* --deep: the spin at the bottom of depth calls. The addition after the call keeps it a real call. */
__attribute__((noipa)) unsigned long long recurse(int depth)
{
	unsigned long long n = 0;

	if (depth == 0) {
		while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
			n = SPLIT_CHUNK;
			COUNT_DOWN(n);
		}
		return n;
	}
	return recurse(depth - 1) + 1;
}

static void *deep(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "deep");
	sink = recurse(cfg.deep);
	record_self();
	return NULL;
}

/*
 * --stacks N: path p of 0..N-1 is a walk of fork_0/fork_1 calls, one a bit
 * of p, from the lowest, as many as it takes for N-1; each pair of twins is
 * a distinct call site, so each path is a distinct stack. The walk takes
 * the paths in turn, spinning a little at the end of each.
 */
#define STACKS_SPIN 20000ull /* turns of the loop at each path's end: ~6 us */

void fork_0(unsigned int path, int depth);
void fork_1(unsigned int path, int depth);

static inline void walk(unsigned int path, int depth)
{
	unsigned long long n = STACKS_SPIN;

	if (depth == 0) {
		COUNT_DOWN(n);
		return;
	}
	if (path & 1)
		fork_1(path >> 1, depth - 1);
	else
		fork_0(path >> 1, depth - 1);
}

/* Twins kept apart (noipa) with a frame each, like hot_a and hot_b. */
__attribute__((noipa)) void fork_0(unsigned int path, int depth)
{
	SPLIT_FRAME;
	walk(path, depth);
}

__attribute__((noipa)) void fork_1(unsigned int path, int depth)
{
	SPLIT_FRAME;
	walk(path, depth);
}

static void *stacks(void *arg)
{
	int depth = 0;

	(void)arg;
	pthread_setname_np(pthread_self(), "stacks");
	while (depth < 31 && (1u << depth) < (unsigned int)cfg.stacks)
		depth++;
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		for (unsigned int p = 0; p < (unsigned int)cfg.stacks; p++)
			walk(p, depth);
	record_self();
	return NULL;
}

/* Starts the short-lived threads two at a time until all have run. */
static void *spawner(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "spawner");
	for (int i = 0; i < cfg.short_threads; i += 2) {
		pthread_t t[2];
		int n = cfg.short_threads - i < 2 ? cfg.short_threads - i : 2;

		for (int j = 0; j < n; j++)
			pthread_create(&t[j], NULL, short_thread, (void *)(intptr_t)(i + j + 1));
		for (int j = 0; j < n; j++)
			pthread_join(t[j], NULL);
	}
	return NULL; /* scaffolding, not one of the measured kinds: no report line */
}

static int write_report(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "td-workload: cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	for (int i = 0; i < atomic_load(&nr_results); i++)
		fprintf(f, "%d %s %llu\n", results[i].tid, results[i].comm,
			(unsigned long long)results[i].cpu_ns);
	return fclose(f) ? 1 : 0;
}

static int parse_args(int argc, char **argv)
{
	static const struct option options[] = {
		{ "duration-ms", required_argument, NULL, 'd' },
		{ "io-threads", required_argument, NULL, 'i' },
		{ "io-period-us", required_argument, NULL, 'p' },
		{ "io-work-us", required_argument, NULL, 'o' },
		{ "short-threads", required_argument, NULL, 's' },
		{ "short-work-us", required_argument, NULL, 'w' },
		{ "wait-start", no_argument, NULL, 'W' },
		{ "known-loop", required_argument, NULL, 'k' },
		{ "known-alt", required_argument, NULL, 'a' },
		{ "alt-bursts", required_argument, NULL, 'b' },
		{ "split", no_argument, NULL, 'S' },
		{ "deep", required_argument, NULL, 'D' },
		{ "stacks", required_argument, NULL, 'T' },
		{ "report", required_argument, NULL, 'r' },
		{ 0 }
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'd': cfg.duration_ms = atol(optarg); break;
		case 'i': cfg.io_threads = atoi(optarg); break;
		case 'p': cfg.io_period_us = atol(optarg); break;
		case 'o': cfg.io_work_us = atol(optarg); break;
		case 's': cfg.short_threads = atoi(optarg); break;
		case 'w': cfg.short_work_us = atol(optarg); break;
		case 'W': cfg.wait_start = true; break;
		case 'k': cfg.known_loop = atoll(optarg); break;
		case 'a': cfg.known_alt = atoll(optarg); break;
		case 'b': cfg.alt_bursts = atoi(optarg); break;
		case 'S': cfg.split = true; break;
		case 'D': cfg.deep = atoi(optarg); break;
		case 'T': cfg.stacks = atoi(optarg); break;
		case 'r': cfg.report = optarg; break;
		default:
			fprintf(stderr, "usage: td-workload [--duration-ms N] [--io-threads N] [--io-period-us N] [--io-work-us N] "
				"[--short-threads N] [--short-work-us N] [--wait-start] [--known-loop N] [--known-alt N] [--alt-bursts N] [--split] [--deep N] [--stacks N] [--report FILE]\n");
			return -1;
		}
	}
	if (cfg.duration_ms <= 0 || cfg.io_threads < 0 || cfg.io_threads > 64 || cfg.short_threads < 0 ||
	    cfg.io_period_us <= 0 || cfg.io_work_us <= 0 || cfg.short_work_us <= 0 || cfg.known_loop < 0 ||
	    cfg.known_alt < 0 || cfg.alt_bursts <= 0 ||
	    cfg.deep < 0 || cfg.deep > 100000 || cfg.stacks < 0 || cfg.stacks > 1 << 24) {
		fprintf(stderr, "td-workload: every number must be positive (at most 64 io threads)\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t spin, spawn, io[64], loop, alt, split[2], deep_thread, stacks_thread;
	struct timespec run;
	char go;

	if (parse_args(argc, argv))
		return 2;
	results = calloc(cfg.short_threads + cfg.io_threads + 8, sizeof(*results));
	if (!results)
		return 1;
	/* --wait-start: block until a byte (or EOF) on stdin, so a collector can attach first. */
	if (cfg.wait_start && read(0, &go, 1) < 0)
		return 1;
	pthread_create(&spin, NULL, spinner, NULL);
	for (int i = 0; i < cfg.io_threads; i++)
		pthread_create(&io[i], NULL, io_thread, (void *)(intptr_t)(i + 1));
	pthread_create(&spawn, NULL, spawner, NULL);
	if (cfg.known_loop)
		pthread_create(&loop, NULL, known_loop, NULL);
	if (cfg.known_alt)
		pthread_create(&alt, NULL, known_alt, NULL);
	if (cfg.split) {
		pthread_create(&split[0], NULL, split_a, NULL);
		pthread_create(&split[1], NULL, split_b, NULL);
	}
	if (cfg.deep) {
		pthread_attr_t attr;

		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 1024 * 1024 + (size_t)cfg.deep * 256);
		pthread_create(&deep_thread, &attr, deep, NULL);
		pthread_attr_destroy(&attr);
	}
	if (cfg.stacks)
		pthread_create(&stacks_thread, NULL, stacks, NULL);

	run.tv_sec = cfg.duration_ms / 1000;
	run.tv_nsec = cfg.duration_ms % 1000 * 1000000;
	nanosleep(&run, NULL);
	pthread_join(spawn, NULL); /* the short threads always all run */
	if (cfg.known_loop)
		pthread_join(loop, NULL);
	if (cfg.known_alt)
		pthread_join(alt, NULL);
	atomic_store(&stop, true);
	pthread_join(spin, NULL);
	for (int i = 0; cfg.split && i < 2; i++)
		pthread_join(split[i], NULL);
	if (cfg.deep)
		pthread_join(deep_thread, NULL);
	if (cfg.stacks)
		pthread_join(stacks_thread, NULL);
	for (int i = 0; i < cfg.io_threads; i++)
		pthread_join(io[i], NULL);
	return cfg.report ? write_report(cfg.report) : 0;
}
