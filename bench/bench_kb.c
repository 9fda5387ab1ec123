// SPDX-License-Identifier: BSD-3-Clause
/*
 * bench_kb: how fast the knowledge base loads and the Top-Down engine
 * evaluates.  Prints a Markdown table of medians over repeated rounds:
 *
 *   - parsing and compiling every definition (td_kb_new);
 *   - the full level-3 tree plus Info metrics for one thread
 *     (td_engine_eval), per model, with every event of that depth counted;
 *   - 10,000 threads x 1 interval: evaluating every thread alone, and the
 *     whole td_engine_compute (thread, thread-name group and process rows
 *     appended to the run).
 *
 * Counts are random but plausible (cycles ~1e9, other events a fraction
 * of it), drawn once with a fixed seed; the formulas take no data-dependent
 * branches, so the figures do not depend on the values.
 *
 * usage: make bench-kb    (or build/bench_kb [ROUNDS])
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "kb.h"
#include "run.h"

#define THREADS 10000
#define PROCESSES 10
#define EVALS_PER_ROUND 20000

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), by_value);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double random_count(unsigned *seed, size_t i)
{
	double cycles = 1e9 * (0.5 + (double)rand_r(seed) / RAND_MAX);

	return i == 0 ? cycles : cycles * (0.001 + 0.999 * (double)rand_r(seed) / RAND_MAX);
}

/* The events a level-3 collection with Info metrics counts, as a run has them. */
static size_t level3_events(const struct td_model *m, const char **names)
{
	int idx[TD_MAX_EVENTS];
	size_t n = td_model_events_for(m, td_level_mask(3, true), idx, TD_MAX_EVENTS);

	if (n > TD_MAX_EVENTS)
		n = TD_MAX_EVENTS;
	for (size_t i = 0; i < n; i++)
		names[i] = m->events[idx[i]].name;
	return n;
}

static double bench_parse(int rounds)
{
	double t[rounds];
	char err[512];

	for (int r = 0; r < rounds; r++) {
		double start = now_s();
		struct td_kb *kb = td_kb_new(err, sizeof(err));

		t[r] = now_s() - start;
		if (!kb) {
			fprintf(stderr, "bench_kb: %s\n", err);
			exit(1);
		}
		td_kb_free(kb);
	}
	return median(t, rounds);
}

/* Seconds per td_engine_eval of one thread's level-3 tree. */
static double bench_one_thread(const struct td_model *m, int rounds, size_t *outputs)
{
	const char *names[TD_MAX_EVENTS];
	size_t n = level3_events(m, names);
	struct td_engine *e = td_engine_new(m, 3, names, n, NULL, NULL, 0);
	struct td_counter_value counters[TD_MAX_EVENTS];
	double *values = calloc(td_engine_scratch_size(e), sizeof(*values)), t[rounds], sink = 0;
	struct td_metric_value *out = calloc(td_engine_output_count(e), sizeof(*out));
	unsigned seed = 42;

	for (size_t i = 0; i < n; i++)
		counters[i] = (struct td_counter_value){ random_count(&seed, i), 1 };
	for (int r = 0; r < rounds; r++) {
		double start = now_s();

		for (int k = 0; k < EVALS_PER_ROUND; k++) {
			td_engine_eval(e, counters, values, out);
			sink += out[0].value;
		}
		t[r] = (now_s() - start) / EVALS_PER_ROUND;
	}
	*outputs = td_engine_output_count(e);
	if (sink == 42) /* keep the loop from being optimised away */
		puts("");
	td_engine_free(e);
	free(values);
	free(out);
	return median(t, rounds);
}

static struct td_run *many_threads(const struct td_model *m)
{
	const char *names[TD_MAX_EVENTS];
	size_t n = level3_events(m, names);
	struct td_run *run = td_run_new();
	unsigned seed = 7;

	run->nr_events = n;
	for (size_t i = 0; i < n; i++)
		run->event_names[i] = strdup(names[i]);
	run->nr_threads = THREADS;
	run->threads = calloc(THREADS, sizeof(*run->threads));
	for (uint32_t t = 0; t < THREADS; t++) {
		struct td_thread_row *row = &run->threads[t];

		row->pid = 1000 + t % PROCESSES;
		row->tid = 1000 + t;
		row->oncpu_ns = 1000000;
		snprintf(row->comm, sizeof(row->comm), "%s_%u", t % 3 ? "worker" : "io_thd", t % 64);
		for (size_t i = 0; i < n; i++)
			row->counters[i] = (struct td_counter_value){ random_count(&seed, i), 1 };
	}
	/* One span of 10,000 thread rows.  A collection with one interval
	 * stores that span twice (the interval and the whole run): twice this. */
	return run;
}

/* The run as before td_engine_compute, strings too: each round interns
 * every string anew, as the compute of a fresh run does. */
static void drop_rows(struct td_run *run)
{
	td_name_index_free(&run->strings);
	run->strings = (struct td_name_index){ 0 };
	run->nr_metrics = 0;
}

/* Seconds to evaluate every thread alone, and for td_engine_compute. */
static void bench_threads(const struct td_model *m, int rounds, double *eval_s, double *compute_s,
			  size_t *rows)
{
	struct td_run *run = many_threads(m);
	struct td_engine *e = td_engine_new(m, 3, (const char *const *)run->event_names,
					    run->nr_events, NULL, NULL, 0);
	double *values = calloc(td_engine_scratch_size(e), sizeof(*values)), te[rounds], tc[rounds];
	struct td_metric_value *out = calloc(td_engine_output_count(e), sizeof(*out));
	char err[256];

	for (int r = 0; r < rounds; r++) {
		double start = now_s();

		for (size_t t = 0; t < run->nr_threads; t++)
			td_engine_eval(e, run->threads[t].counters, values, out);
		te[r] = now_s() - start;
		start = now_s();
		if (td_engine_compute(e, run, err, sizeof(err)) != 0) {
			fprintf(stderr, "bench_kb: %s\n", err);
			exit(1);
		}
		tc[r] = now_s() - start;
		*rows = run->nr_metrics;
		drop_rows(run);
	}
	*eval_s = median(te, rounds);
	*compute_s = median(tc, rounds);
	td_engine_free(e);
	td_run_free(run);
	free(values);
	free(out);
}

int main(int argc, char **argv)
{
	static const char *const models[] = { "skx", "icx", "spr", "gnr", "adl", "neoverse-v3", "zen4" };
	int rounds = argc > 1 ? atoi(argv[1]) : 21;
	char err[512];
	struct td_kb *kb = td_kb_new(err, sizeof(err));
	size_t metrics = 0, outputs, rows;
	double eval_s, compute_s;

	if (!kb || rounds < 1) {
		fprintf(stderr, "bench_kb: %s\n", kb ? "ROUNDS must be at least 1" : err);
		return 1;
	}
	for (size_t i = 0; i < td_kb_model_count(kb); i++)
		metrics += td_kb_model_at(kb, i)->n_metrics;
	printf("Medians of %d rounds.\n\n", rounds);
	printf("| measurement | model | median | target |\n|---|---|---|---|\n");
	printf("| parse and compile all definitions (%zu models, %zu metrics) | all | %.2f ms | <= 5 ms |\n",
	       td_kb_model_count(kb), metrics, bench_parse(rounds) * 1e3);
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		const struct td_model *m = td_kb_model(kb, models[i]);
		double s = bench_one_thread(m, rounds, &outputs);

		printf("| level-3 tree + Info, one thread (%zu values) | %s | %.2f us | <= 5 us |\n",
		       outputs, m->name, s * 1e6);
	}
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i += 2) {
		const struct td_model *m = td_kb_model(kb, models[i]);

		bench_threads(m, rounds, &eval_s, &compute_s, &rows);
		printf("| 10,000 threads x 1 interval: evaluate each thread | %s | %.1f ms | <= 50 ms |\n",
		       m->name, eval_s * 1e3);
		printf("| 10,000 threads x 1 interval: td_engine_compute, %zu rows | %s | %.1f ms | |\n",
		       rows, m->name, compute_s * 1e3);
	}
	td_kb_free(kb);
	return 0;
}
