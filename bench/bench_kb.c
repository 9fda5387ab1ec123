// SPDX-License-Identifier: BSD-3-Clause
/*
 * bench_kb: how fast the knowledge base loads and the Top-Down engine
 * evaluates.  Prints a Markdown table of medians over repeated rounds,
 * with the fastest and slowest round:
 *
 *   - parsing and compiling every definition (td_kb_new);
 *   - the full level-3 tree plus Info metrics for one thread
 *     (td_engine_eval), per model, with every event of that depth counted;
 *   - 10,000 threads x 1 interval: evaluating every thread alone, and the
 *     whole td_engine_compute (thread, thread-name group and process rows
 *     appended to the run);
 *   - the same threads stored twice, as the run's one interval and as the
 *     whole run, as a collection of one interval stores them: the
 *     td_engine_compute of both spans.
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

/* The median, fastest and slowest of n timings. */
struct spread {
	double median, min, max;
};

static struct spread spread_of(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), by_value);
	return (struct spread){ n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0], v[n - 1] };
}

/* "median | min-max" in unit (scale: per second), to precision decimals. */
static const char *cells(struct spread s, double scale, int precision, const char *unit,
			 char *buf, size_t len)
{
	snprintf(buf, len, "%.*f %s | %.*f-%.*f %s", precision, s.median * scale, unit, precision,
		 s.min * scale, precision, s.max * scale, unit);
	return buf;
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

static struct spread bench_parse(int rounds)
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
	return spread_of(t, rounds);
}

/* Seconds per td_engine_eval of one thread's level-3 tree. */
static struct spread bench_one_thread(const struct td_model *m, int rounds, size_t *outputs)
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
	return spread_of(t, rounds);
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
	return run;
}

/* The whole run's threads again as its one interval. */
static void add_equal_interval(struct td_run *run)
{
	run->nr_intervals = 1;
	run->intervals = calloc(1, sizeof(*run->intervals));
	run->intervals[0].nr_threads = run->nr_threads;
	run->intervals[0].threads = malloc(run->nr_threads * sizeof(*run->threads));
	memcpy(run->intervals[0].threads, run->threads, run->nr_threads * sizeof(*run->threads));
}

/* The run as before td_engine_compute, strings too: each round interns
 * every string anew, as the compute of a fresh run does. */
static void drop_rows(struct td_run *run)
{
	td_name_index_free(&run->strings);
	run->strings = (struct td_name_index){ 0 };
	run->nr_metrics = 0;
}

/* Seconds for one td_engine_compute of run; *rows: the rows it made. */
static double time_compute(const struct td_engine *e, struct td_run *run, size_t *rows)
{
	double start = now_s(), took;
	char err[256];

	if (td_engine_compute(e, run, err, sizeof(err)) != 0) {
		fprintf(stderr, "bench_kb: %s\n", err);
		exit(1);
	}
	took = now_s() - start;
	*rows = run->nr_metrics;
	drop_rows(run);
	return took;
}

/*
 * Seconds to evaluate every thread alone, for td_engine_compute, and for
 * td_engine_compute of the threads as one interval and the whole run;
 * rounds of the three alternate, so a busy spell of the host hits all.
 */
static void bench_threads(const struct td_model *m, int rounds, struct spread *eval,
			  struct spread *compute, struct spread *twice, size_t *rows, size_t *rows_twice)
{
	struct td_run *run = many_threads(m), *both = many_threads(m);
	struct td_engine *e = td_engine_new(m, 3, (const char *const *)run->event_names,
					    run->nr_events, NULL, NULL, 0);
	double *values = calloc(td_engine_scratch_size(e), sizeof(*values));
	double te[rounds], tc[rounds], tt[rounds];
	struct td_metric_value *out = calloc(td_engine_output_count(e), sizeof(*out));

	add_equal_interval(both);
	for (int r = 0; r < rounds; r++) {
		double start = now_s();

		for (size_t t = 0; t < run->nr_threads; t++)
			td_engine_eval(e, run->threads[t].counters, values, out);
		te[r] = now_s() - start;
		tc[r] = time_compute(e, run, rows);
		tt[r] = time_compute(e, both, rows_twice);
	}
	*eval = spread_of(te, rounds);
	*compute = spread_of(tc, rounds);
	*twice = spread_of(tt, rounds);
	td_engine_free(e);
	td_run_free(run);
	td_run_free(both);
	free(values);
	free(out);
}

int main(int argc, char **argv)
{
	static const char *const models[] = { "skx", "icx", "spr", "gnr", "adl", "neoverse-v3", "zen4" };
	int rounds = argc > 1 ? atoi(argv[1]) : 21;
	char err[512];
	struct td_kb *kb = td_kb_new(err, sizeof(err));
	size_t metrics = 0, outputs, rows, rows_twice;
	struct spread eval, compute, twice;
	char buf[128];

	if (!kb || rounds < 1) {
		fprintf(stderr, "bench_kb: %s\n", kb ? "ROUNDS must be at least 1" : err);
		return 1;
	}
	for (size_t i = 0; i < td_kb_model_count(kb); i++)
		metrics += td_kb_model_at(kb, i)->n_metrics;
	printf("Medians of %d rounds, with the fastest and slowest round.\n\n", rounds);
	printf("| measurement | model | median | min-max | target |\n|---|---|---|---|---|\n");
	printf("| parse and compile all definitions (%zu models, %zu metrics) | all | %s | <= 5 ms |\n",
	       td_kb_model_count(kb), metrics, cells(bench_parse(rounds), 1e3, 2, "ms", buf, sizeof(buf)));
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		const struct td_model *m = td_kb_model(kb, models[i]);
		struct spread s = bench_one_thread(m, rounds, &outputs);

		printf("| level-3 tree + Info, one thread (%zu values) | %s | %s | <= 5 us |\n",
		       outputs, m->name, cells(s, 1e6, 2, "us", buf, sizeof(buf)));
	}
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i += 2) {
		const struct td_model *m = td_kb_model(kb, models[i]);

		bench_threads(m, rounds, &eval, &compute, &twice, &rows, &rows_twice);
		printf("| 10,000 threads x 1 interval: evaluate each thread | %s | %s | <= 50 ms |\n",
		       m->name, cells(eval, 1e3, 1, "ms", buf, sizeof(buf)));
		printf("| 10,000 threads x 1 interval: td_engine_compute, %zu rows | %s | %s | <= 50 ms |\n",
		       rows, m->name, cells(compute, 1e3, 1, "ms", buf, sizeof(buf)));
		printf("| the same as one interval and the whole run: td_engine_compute, %zu rows | %s | %s | |\n",
		       rows_twice, m->name, cells(twice, 1e3, 1, "ms", buf, sizeof(buf)));
	}
	td_kb_free(kb);
	return 0;
}
