// SPDX-License-Identifier: BSD-3-Clause
/*
 * td-gen-runs: fills a store with synthetic labeled runs for the query
 * benchmark (bench/bench_query.sh), through the same td_store_write_run
 * the collector uses, or times the storing of one large run.
 *
 *   td-gen-runs --runs N --threads T [--metrics M] [--seed S] [store options]
 *   td-gen-runs --time-one --threads T [--repeat R] [store options]
 *   td-gen-runs --writers N --seconds S [--threads-max T2] [--threads T] [store options]
 *
 * Store options are the CLI's: --db PATH, or --backend postgresql --dsn DSN.
 *
 * Each run has T threads (named worker_N, io_thd_N and main) with four
 * counters, and M tree nodes of Sapphire Rapids (levels 1-3, from the kb)
 * for every thread, thread name and the process. Labels: git_branch
 * branch-00..99 (100 runs each per 10,000), test_name test-00..19, host
 * ci-0..3, a commit, and the model's (tma_model spr, tma_level 3, smt off). Runs start one every 4 minutes back from now, so
 * 10,000 runs span four weeks. Values come from a seeded generator; the
 * odd branches have 5 points more DRAM_Bound, taken from Retiring, so that
 * comparisons find something.
 *
 * --writers: a fleet of N agents writing into one store at once (the
 * fleet bench, bench/bench_fleet.sh). Each is a process that, for S
 * seconds, makes the run of one agent window of a process with T to T2
 * threads (whole-run rows only, as the agent stores them), opens the
 * store, writes the run and closes the store again, as the agent's sink
 * does every window. Every run carries the label fleet_round (one value
 * per invocation) and fleet_writer. At the end the ids the writers were
 * told were stored are checked against the store's: none missing, none
 * twice, none that no writer stored. Prints one line:
 *   fleet_round=R writers=N windows=W seconds=E per_second=P failed=F lost=L extra=X
 * and exits 1 when any write failed or any id is lost, doubled or extra.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kb.h"
#include "run.h"
#include "storage.h"
#include "store_open.h"

#define MAX_NODES 64
#define RUN_SPACING_NS (240LL * 1000000000) /* one run every 4 minutes */
#define RUN_LENGTH_NS (10LL * 1000000000)

struct node {
	const char *path, *parent;
	int level;
};

struct gen {
	struct node nodes[MAX_NODES];
	size_t nr_nodes;
	long threads;
	long threads_max; /* --writers: threads drawn from threads..threads_max */
	uint64_t rng;
};

/* splitmix64: small, fast and the same everywhere. */
static uint64_t next_random(struct gen *g)
{
	uint64_t z = (g->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double uniform(struct gen *g)
{
	return (double)(next_random(g) >> 11) / 9007199254740992.0;
}

static int compare_nodes(const void *a, const void *b)
{
	return strcmp(((const struct node *)a)->path, ((const struct node *)b)->path);
}

/* The first max tree nodes of levels 1-3 of a model, parents first. */
static int pick_nodes(struct gen *g, size_t max)
{
	const struct td_model *m;
	const struct td_kb *kb;
	char err[256];

	kb = td_kb_load(err, sizeof(err));
	m = kb ? td_kb_model(kb, "spr") : NULL;
	if (!m) {
		fprintf(stderr, "td-gen-runs: no kb model: %s\n", kb ? "spr missing" : err);
		return -1;
	}
	for (int level = 1; level <= 3; level++)
		for (size_t i = 0; i < m->n_metrics && g->nr_nodes < max; i++)
			if (m->metrics[i].kind == TD_METRIC_TREE && m->metrics[i].level == level)
				g->nodes[g->nr_nodes++] = (struct node){
					.path = m->metrics[i].path, .level = level,
				};
	/* Sorted by path, every parent comes before its children. */
	qsort(g->nodes, g->nr_nodes, sizeof(g->nodes[0]), compare_nodes);
	for (size_t i = 0; i < g->nr_nodes; i++)
		for (size_t j = 0; j < g->nr_nodes; j++)
			if (g->nodes[j].level == g->nodes[i].level - 1 &&
			    strncmp(g->nodes[i].path, g->nodes[j].path, strlen(g->nodes[j].path)) == 0 &&
			    g->nodes[i].path[strlen(g->nodes[j].path)] == '.')
				g->nodes[i].parent = g->nodes[j].path;
	return 0;
}

static const char *last_part(const char *path)
{
	const char *dot = strrchr(path, '.');

	return dot ? dot + 1 : path;
}

/* One tree for one scope key: values around a base, the odd branches
 * with more DRAM_Bound. */
static int add_tree(struct gen *g, struct td_run *run, enum td_metric_scope scope,
		    const char *key, bool slow_branch)
{
	for (size_t i = 0; i < g->nr_nodes; i++) {
		const struct node *n = &g->nodes[i];
		double base = n->level == 1 ? 0.25 : n->level == 2 ? 0.10 : 0.04;
		double value = base * (0.8 + 0.4 * uniform(g));
		struct td_metric_row row = {
			.scope = scope, .scope_key = (char *)key, .interval_seq = -1,
			.path = (char *)n->path, .parent = (char *)n->parent, .level = n->level,
			.confidence = uniform(g) < 0.02 ? 0.4 : 1.0,
		};

		if (slow_branch && strcmp(last_part(n->path), "DRAM_Bound") == 0)
			value += 0.05;
		if (slow_branch && strcmp(n->path, "Retiring") == 0)
			value -= 0.05;
		row.value = value;
		row.threshold_crossed = value > 1.5 * base;
		if (td_run_add_metric(run, &row) < 0)
			return -ENOMEM;
	}
	return 0;
}

static const char *thread_name(long i)
{
	static const char *const names[] = { "worker_%ld", "worker_%ld", "io_thd_%ld" };
	static char buf[TD_COMM_LEN];

	if (i == 0)
		return "main";
	snprintf(buf, sizeof(buf), names[i % 3], i);
	return buf;
}

static struct td_run *make_run(struct gen *g, long index, int64_t started_ns)
{
	static const char *const groups[] = { "main", "worker_*", "io_thd_*" };
	static const char *const events[] = { "cycles", "instructions", "slots", "topdown-retiring" };
	struct td_run *run = td_run_new();
	bool slow = index % 2 == 1;
	char value[64];
	int ret = run ? 0 : -ENOMEM;

	if (ret == 0) {
		run->started_ns = started_ns;
		run->ended_ns = started_ns + RUN_LENGTH_NS;
		run->process = strdup("app");
		run->collector = strdup("bpf");
		run->level = 3;
		run->nr_events = 4;
		for (int e = 0; e < 4; e++)
			run->event_names[e] = strdup(events[e]);
		run->threads = calloc((size_t)g->threads, sizeof(*run->threads));
		run->nr_threads = (size_t)g->threads;
		snprintf(value, sizeof(value), "branch-%02ld", index % 100);
		td_labels_set(&run->labels, "git_branch", value);
		snprintf(value, sizeof(value), "test-%02ld", index % 20);
		td_labels_set(&run->labels, "test_name", value);
		snprintf(value, sizeof(value), "ci-%ld", index % 4);
		td_labels_set(&run->labels, "host", value);
		snprintf(value, sizeof(value), "%016llx", (unsigned long long)next_random(g));
		td_labels_set(&run->labels, "commit", value);
		td_labels_set(&run->labels, "arch", "x86_64");
		/* what collect records of the model, so that --pooled can evaluate it */
		td_labels_set(&run->labels, "tma_model", "spr");
		td_labels_set(&run->labels, "tma_level", "3");
		td_labels_set(&run->labels, "smt", "off");
	}
	for (long t = 0; ret == 0 && t < g->threads; t++) {
		struct td_thread_row *th = &run->threads[t];
		char key[16];

		th->tid = (uint32_t)(1000 + t);
		th->pid = 1000;
		snprintf(th->comm, sizeof(th->comm), "%s", thread_name(t));
		th->oncpu_ns = (uint64_t)(uniform(g) * 1e9);
		for (int e = 0; e < 4; e++)
			th->counters[e] = (struct td_counter_value){ uniform(g) * 1e9, 1.0 };
		snprintf(key, sizeof(key), "%u", th->tid);
		ret = add_tree(g, run, TD_SCOPE_THREAD, key, slow);
	}
	for (size_t i = 0; ret == 0 && i < 3; i++)
		ret = add_tree(g, run, TD_SCOPE_GROUP, groups[i], slow);
	if (ret == 0)
		ret = add_tree(g, run, TD_SCOPE_PROCESS, "1000", slow);
	if (ret < 0) {
		td_run_free(run);
		return NULL;
	}
	return run;
}

static int64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Stores repeat runs of g->threads threads, timing each write alone. */
static int time_one(struct gen *g, struct td_store *store, long repeat)
{
	double *ms = calloc((size_t)repeat, sizeof(*ms));
	char err[1024];

	for (long i = 0; ms && i < repeat; i++) {
		struct td_run *run = make_run(g, i, now_ns(CLOCK_REALTIME));
		int64_t start = now_ns(CLOCK_MONOTONIC);
		int ret = run ? td_store_write_run(store, run, err, sizeof(err)) : -ENOMEM;

		ms[i] = (double)(now_ns(CLOCK_MONOTONIC) - start) / 1e6;
		td_run_free(run);
		if (ret) {
			fprintf(stderr, "td-gen-runs: %s\n", ret == -ENOMEM ? "out of memory" : err);
			free(ms);
			return 1;
		}
	}
	qsort(ms, (size_t)repeat, sizeof(*ms), compare_doubles);
	printf("%.1f\n", ms[repeat / 2]);
	free(ms);
	return 0;
}

static int generate(struct gen *g, struct td_store *store, long runs)
{
	int64_t newest = now_ns(CLOCK_REALTIME);
	char err[1024];

	for (long i = 0; i < runs; i++) {
		struct td_run *run = make_run(g, i, newest - (runs - 1 - i) * RUN_SPACING_NS);
		int ret = run ? td_store_write_run(store, run, err, sizeof(err)) : -ENOMEM;

		td_run_free(run);
		if (ret) {
			fprintf(stderr, "td-gen-runs: %s\n", ret == -ENOMEM ? "out of memory" : err);
			return 1;
		}
	}
	return 0;
}

/* ---- a fleet of writers ---- */

/*
 * One writer: windows until the deadline, each id that was stored sent
 * down out (a line of 37 bytes, under PIPE_BUF, so the writers' lines
 * never mix). Returns the number of failed writes, which it reports.
 */
static int fleet_writer(struct gen *g, const struct td_store_flags *flags, const char *db,
			const char *round, long writer, int64_t deadline, int out)
{
	char err[1024], value[32], line[TD_RUN_ID_LEN + 1];
	long fewest = g->threads, span = g->threads_max - g->threads + 1;
	int failed = 0;

	snprintf(value, sizeof(value), "%ld", writer);
	for (long i = 0; now_ns(CLOCK_MONOTONIC) < deadline; i++) {
		struct td_run *run;
		struct td_store *store;
		int ret;

		g->threads = fewest + (long)(next_random(g) % (uint64_t)span);
		run = make_run(g, i, now_ns(CLOCK_REALTIME));
		if (!run || td_labels_set(&run->labels, "fleet_round", round) < 0 ||
		    td_labels_set(&run->labels, "fleet_writer", value) < 0) {
			fprintf(stderr, "td-gen-runs: writer %ld: out of memory\n", writer);
			td_run_free(run);
			return failed + 1;
		}
		store = td_store_open_flags(flags, db, TD_STORE_READ_WRITE, NULL, 0, err, sizeof(err));
		ret = store ? td_store_write_run(store, run, err, sizeof(err)) : -errno;
		td_store_close(store);
		if (ret == 0) {
			snprintf(line, sizeof(line), "%s\n", run->id);
			if (write(out, line, strlen(line)) != (ssize_t)strlen(line))
				ret = -EIO;
		}
		if (ret < 0) {
			fprintf(stderr, "td-gen-runs: writer %ld: %s\n", writer, err);
			failed++;
		}
		td_run_free(run);
	}
	return failed;
}

static int compare_ids(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The ids the writers sent, sorted; -1 when memory ran out. */
static long read_ids(FILE *in, char (**ids)[TD_RUN_ID_LEN])
{
	char line[TD_RUN_ID_LEN + 8];
	long count = 0, cap = 0;

	*ids = NULL;
	while (fgets(line, sizeof(line), in)) {
		if (count == cap) {
			char (*grown)[TD_RUN_ID_LEN] = realloc(*ids, (size_t)(cap = 2 * cap + 1024) *
							       sizeof(**ids));

			if (!grown)
				return -1;
			*ids = grown;
		}
		line[strcspn(line, "\n")] = '\0';
		if (strlen(line) >= TD_RUN_ID_LEN)
			return -1; /* not what a writer sends */
		memcpy((*ids)[count++], line, TD_RUN_ID_LEN);
	}
	qsort(*ids, (size_t)count, sizeof(**ids), compare_ids);
	return count;
}

/*
 * Compares the sorted ids the writers were told were stored with the runs
 * of the round in the store: *lost counts ids missing or sent twice,
 * *extra runs stored that no writer reported (or stored twice).
 */
static int check_round(const struct td_store_flags *flags, const char *db, const char *round,
		       char (*sent)[TD_RUN_ID_LEN], long nr_sent, long *lost, long *extra)
{
	struct td_run_summary *runs = NULL;
	struct td_labels labels;
	struct td_run_filter filter = { .labels = &labels };
	struct td_store *store;
	size_t count = 0;
	char err[1024];
	char (*stored)[TD_RUN_ID_LEN] = NULL;
	long i = 0, j = 0;
	int ret;

	td_labels_init(&labels);
	store = td_store_open_flags(flags, db, TD_STORE_READ_ONLY, NULL, 0, err, sizeof(err));
	ret = store && td_labels_set(&labels, "fleet_round", round) == 0 ? 0 : -1;
	if (ret == 0)
		ret = td_store_list_runs(store, &filter, &runs, &count, err, sizeof(err));
	if (ret == 0 && !(stored = calloc(count + 1, sizeof(*stored))))
		ret = -ENOMEM;
	for (size_t k = 0; ret == 0 && k < count; k++)
		memcpy(stored[k], runs[k].id, TD_RUN_ID_LEN);
	if (ret == 0)
		qsort(stored, count, sizeof(*stored), compare_ids);
	*lost = *extra = 0;
	/* A merge of the two sorted lists; a repeat on either side counts. */
	while (ret == 0 && (i < nr_sent || j < (long)count)) {
		int c = i == nr_sent ? 1 : j == (long)count ? -1 : strcmp(sent[i], stored[j]);

		if (c < 0)
			++*lost, i++;
		else if (c > 0)
			++*extra, j++;
		else
			i++, j++;
	}
	if (ret < 0)
		fprintf(stderr, "td-gen-runs: checking the round: %s\n", store ? err : "cannot open");
	free(stored);
	td_run_summaries_free(runs, count);
	td_labels_free(&labels);
	td_store_close(store);
	return ret;
}

static int fleet(struct gen *g, const struct td_store_flags *flags, const char *db,
		 long writers, long seconds)
{
	int64_t start = now_ns(CLOCK_MONOTONIC), deadline = start + seconds * 1000000000LL;
	char round[32], (*ids)[TD_RUN_ID_LEN] = NULL;
	long nr_ids, lost = 0, extra = 0, failed = 0;
	int pipefd[2], status;
	double elapsed;
	FILE *in;

	snprintf(round, sizeof(round), "%016llx", (unsigned long long)(next_random(g) ^ start));
	if (pipe(pipefd) < 0) {
		perror("td-gen-runs: pipe");
		return 1;
	}
	for (long w = 0; w < writers; w++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("td-gen-runs: fork");
			return 1; /* the writers started end with their deadline */
		}
		if (pid == 0) {
			close(pipefd[0]);
			g->rng += (uint64_t)w * 0x9e3779b97f4a7c15ULL; /* each its own values */
			_exit(fleet_writer(g, flags, db, round, w, deadline, pipefd[1]) ? 1 : 0);
		}
	}
	close(pipefd[1]);
	in = fdopen(pipefd[0], "r");
	nr_ids = in ? read_ids(in, &ids) : -1;
	if (in)
		fclose(in);
	while (wait(&status) > 0)
		failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	elapsed = (double)(now_ns(CLOCK_MONOTONIC) - start) / 1e9;
	if (nr_ids < 0 || check_round(flags, db, round, ids, nr_ids, &lost, &extra) < 0) {
		free(ids);
		return 1;
	}
	printf("fleet_round=%s writers=%ld windows=%ld seconds=%.1f per_second=%.2f "
	       "failed_writers=%ld lost=%ld extra=%ld\n", round, writers, nr_ids, elapsed,
	       (double)nr_ids / elapsed, failed, lost, extra);
	free(ids);
	return failed || lost || extra;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "runs", required_argument, NULL, 'r' },
		{ "threads", required_argument, NULL, 't' },
		{ "metrics", required_argument, NULL, 'm' },
		{ "seed", required_argument, NULL, 's' },
		{ "db", required_argument, NULL, 'D' },
		{ "backend", required_argument, NULL, 'B' },
		{ "dsn", required_argument, NULL, 'N' },
		{ "time-one", no_argument, NULL, 'o' },
		{ "repeat", required_argument, NULL, 'R' },
		{ "writers", required_argument, NULL, 'w' },
		{ "seconds", required_argument, NULL, 'S' },
		{ "threads-max", required_argument, NULL, 'T' },
		{ 0 }
	};
	struct gen g = { .threads = 50, .rng = 1 };
	struct td_store_flags flags = { 0 };
	long runs = 0, metrics = 40, repeat = 10, writers = 0, seconds = 10;
	const char *db = NULL;
	bool one = false;
	struct td_store *store;
	char err[1024];
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'r': runs = atol(optarg); break;
		case 't': g.threads = atol(optarg); break;
		case 'm': metrics = atol(optarg); break;
		case 's': g.rng = strtoull(optarg, NULL, 10); break;
		case 'D': db = optarg; break;
		case 'B': flags.backend = optarg; break;
		case 'N': flags.dsn = optarg; break;
		case 'o': one = true; break;
		case 'R': repeat = atol(optarg); break;
		case 'w': writers = atol(optarg); break;
		case 'S': seconds = atol(optarg); break;
		case 'T': g.threads_max = atol(optarg); break;
		default:
			fprintf(stderr, "usage: td-gen-runs (--runs N | --time-one [--repeat R] | "
				"--writers N [--seconds S] [--threads-max T2]) [--threads T] "
				"[--metrics M] [--seed S] [--db PATH | --backend postgresql --dsn DSN]\n");
			return 2;
		}
	}
	if (!g.threads_max)
		g.threads_max = g.threads;
	if ((!one && !writers && runs <= 0) || g.threads <= 0 || g.threads_max < g.threads ||
	    metrics <= 0 || metrics > MAX_NODES || repeat <= 0 || writers < 0 || seconds <= 0 ||
	    pick_nodes(&g, (size_t)metrics) < 0) {
		fprintf(stderr, "td-gen-runs: give --runs N (or --time-one, or --writers N with "
			"--seconds S > 0), --threads T <= --threads-max and --metrics 1..%d\n",
			MAX_NODES);
		return 2;
	}
	if (writers)
		return fleet(&g, &flags, db, writers, seconds);
	store = td_store_open_flags(&flags, db, TD_STORE_READ_WRITE, NULL, 0, err, sizeof(err));
	if (!store) {
		fprintf(stderr, "td-gen-runs: %s\n", err);
		return 1;
	}
	ret = one ? time_one(&g, store, repeat) : generate(&g, store, runs);
	td_store_close(store);
	return ret;
}
