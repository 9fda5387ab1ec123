// SPDX-License-Identifier: BSD-3-Clause
/* A run's threads folded by name group for people (thread_table.h). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "format.h"
#include "thread_table.h"

#define MAX_GROUP_ROWS 30 /* a table a person reads; --json has every thread */

static int by_oncpu_desc(const void *a, const void *b)
{
	const struct td_thread_row *x = a, *y = b;

	return x->oncpu_ns < y->oncpu_ns ? 1 : x->oncpu_ns > y->oncpu_ns ? -1 : strcmp(x->comm, y->comm);
}

static void add_row(struct td_thread_group_row *g, const struct td_thread_row *t, size_t nr_events)
{
	g->sum.oncpu_ns += t->oncpu_ns;
	g->sum.voluntary_switches += t->voluntary_switches;
	g->sum.involuntary_switches += t->involuntary_switches;
	g->sum.migrations += t->migrations;
	g->sum.runq_wait_ns += t->runq_wait_ns;
	for (size_t e = 0; e < nr_events; e++) {
		double *v = &g->sum.counters[e].value;

		*v = isnan(*v) ? t->counters[e].value : isnan(t->counters[e].value) ? *v : *v + t->counters[e].value;
	}
	g->threads++;
	g->exited += t->exited;
}

long td_fold_thread_rows(const struct td_thread_row *rows, size_t n, size_t nr_events,
			 struct td_thread_group_row **out)
{
	struct td_thread_group_row *groups = calloc(n + 1, sizeof(*groups));
	size_t count = 0;

	if (!(*out = groups))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		char name[TD_COMM_LEN];
		size_t g;

		td_thread_group_name(rows[i].comm, name, sizeof(name));
		for (g = 0; g < count && strcmp(groups[g].sum.comm, name); g++)
			;
		if (g == count) { /* a new group: its figures start from nothing */
			snprintf(groups[count].sum.comm, sizeof(groups[count].sum.comm), "%s", name);
			for (size_t e = 0; e < nr_events; e++)
				groups[count].sum.counters[e].value = NAN;
			count++;
		}
		add_row(&groups[g], &rows[i], nr_events);
	}
	/* sum is the first member: sorting groups sorts by their sums */
	qsort(groups, count, sizeof(*groups), by_oncpu_desc);
	return (long)count;
}

static void header(FILE *out, const struct td_run *run, size_t nr_events, const char *first, const char *second)
{
	fprintf(out, "%-16s %8s %7s %8s %8s %6s %10s", first, second, "ONCPU%", "VOL-SW", "INVOL-SW", "MIGR",
		"RUNQ-WAIT");
	for (size_t e = 0; e < nr_events; e++) {
		char name[256]; /* an imported file names its own events */

		fprintf(out, " %14s", td_safe_text(run->event_names[e], name, sizeof(name)));
	}
	fputc('\n', out);
}

static void figures(FILE *out, const struct td_thread_row *t, double duration_ns, size_t nr_events)
{
	char a[32], b[32];

	fprintf(out, " %6.1f%% %8llu %8llu %6llu %10s", 100.0 * t->oncpu_ns / duration_ns,
		(unsigned long long)t->voluntary_switches, (unsigned long long)t->involuntary_switches,
		(unsigned long long)t->migrations, td_format_duration(t->runq_wait_ns, a, sizeof(a)));
	for (size_t e = 0; e < nr_events; e++)
		fprintf(out, " %14s", td_format_count(t->counters[e].value, b, sizeof(b)));
}

/*
 * An event's running fraction over the whole run: its threads' fractions
 * weighted by their on-CPU time (the plain mean when none has any).
 */
static double run_fraction(const struct td_run *run, size_t e)
{
	double weighted = 0, oncpu = 0, plain = 0;

	for (size_t i = 0; i < run->nr_threads; i++) {
		const struct td_thread_row *t = &run->threads[i];

		weighted += t->counters[e].running_fraction * t->oncpu_ns;
		oncpu += t->oncpu_ns;
		plain += t->counters[e].running_fraction;
	}
	return oncpu > 0 ? weighted / oncpu : run->nr_threads ? plain / run->nr_threads : 1;
}

/* Rounded to a whole percent, a fraction under this shows as less than 100%. */
#define FULLY_COUNTED 0.995

/*
 * When some counter was counted part of the time (groups taking turns,
 * or more events than the PMU has counters), the share each was: the
 * confidence of the scaled counts above.
 */
static void print_counted(FILE *out, const struct td_run *run)
{
	bool partly = false;

	for (size_t e = 0; e < run->nr_events && !partly; e++)
		partly = run_fraction(run, e) < FULLY_COUNTED;
	if (!partly)
		return;
	fprintf(out, "\ncounted, as a share of the threads' on-CPU time (each count above is scaled to all of it):");
	for (size_t e = 0; e < run->nr_events; e++) {
		char name[256];

		fprintf(out, "%s %s %.0f%%", e ? "," : "", td_safe_text(run->event_names[e], name, sizeof(name)),
			100 * run_fraction(run, e));
	}
	fputc('\n', out);
}

void td_print_thread_table(FILE *out, const struct td_run *run, int with_counters, size_t max_threads,
			   const char *more_hint)
{
	double duration_ns = run->ended_ns > run->started_ns ? (double)(run->ended_ns - run->started_ns) : 1;
	size_t nr_events = with_counters ? run->nr_events : 0, shown;
	struct td_thread_row *busiest = malloc((run->nr_threads + 1) * sizeof(*busiest));
	struct td_thread_group_row *groups = NULL;
	long nr_groups = td_fold_thread_rows(run->threads, run->nr_threads, nr_events, &groups);

	if (nr_groups < 0 || !busiest) {
		fprintf(out, "(out of memory laying out the threads; --json lists them)\n");
		free(groups);
		free(busiest);
		return;
	}
	header(out, run, nr_events, "THREAD GROUP", "THREADS");
	for (long g = 0; g < nr_groups && g < MAX_GROUP_ROWS; g++) {
		td_fputs_safe(out, groups[g].sum.comm, 16); /* names the traced program chose */
		fprintf(out, " %8zu", groups[g].threads);
		figures(out, &groups[g].sum, duration_ns, nr_events);
		if (groups[g].exited)
			fprintf(out, "  (%zu exited)", groups[g].exited);
		fputc('\n', out);
	}
	if (nr_groups > MAX_GROUP_ROWS)
		fprintf(out, "... %ld more thread groups (%s)\n", nr_groups - MAX_GROUP_ROWS, more_hint);

	memcpy(busiest, run->threads, run->nr_threads * sizeof(*busiest));
	qsort(busiest, run->nr_threads, sizeof(*busiest), by_oncpu_desc);
	shown = run->nr_threads < max_threads ? run->nr_threads : max_threads;
	fputc('\n', out);
	header(out, run, nr_events, "THREAD", "TID");
	for (size_t i = 0; i < shown; i++) {
		td_fputs_safe(out, busiest[i].comm, 16);
		fprintf(out, " %8u", busiest[i].tid);
		figures(out, &busiest[i], duration_ns, nr_events);
		fprintf(out, "%s\n", busiest[i].exited ? "  (exited)" : "");
	}
	if (run->nr_threads > shown)
		fprintf(out, "... %zu more threads (%s)\n", run->nr_threads - shown, more_hint);
	if (with_counters)
		print_counted(out, run);
	free(groups);
	free(busiest);
}
