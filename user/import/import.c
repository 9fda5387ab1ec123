// SPDX-License-Identifier: BSD-3-Clause
/*
 * import: counts read from a perf stat file (perf_stat.c) → a run with
 * its Top-Down tree. The file's events are mapped onto the model's
 * (event_map.c), the counts summed per thread and interval, and the
 * engine computes the tree; td_import_build() alone knows models.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "engine.h"
#include "import.h"

#define MAX_MAPPED 4 /* model events one perf event may stand for */

static int add_note(struct td_import *imp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int add_note(struct td_import *imp, const char *fmt, ...)
{
	char **grown = reallocarray(imp->notes, imp->n_notes + 1, sizeof(*grown));
	va_list ap;
	int n;

	if (!grown)
		return -ENOMEM;
	imp->notes = grown;
	va_start(ap, fmt);
	n = vasprintf(&imp->notes[imp->n_notes], fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	imp->n_notes++;
	return 0;
}

/* Appends ", name" to a list being built in buf (names past len are cut). */
static void list_append(char *buf, size_t len, const char *name)
{
	size_t used = strlen(buf);

	if (used + 1 < len)
		snprintf(buf + used, len - used, "%s%s", used ? ", " : "", name);
}

#define TASK_CLOCK (-2) /* file events not mapped: -1; task-clock: on-CPU time */

/* What the file's events became: per file event, its run events. */
struct mapping {
	int (*run_events)[MAX_MAPPED];
	size_t *n_run_events;
	int model_event[TD_MAX_EVENTS]; /* per run event, its index in m->events */
	size_t n;
	int duration_event;             /* the file's duration_time, or -1 */
};

/* The lowest tree level that needs model event i; 5 for Info, 6 for none. */
static int event_rank(const struct td_model *m, int i)
{
	unsigned used = m->events[i].used_by;

	for (int level = 1; level <= 4; level++)
		if (used & TD_USED_BY_LEVEL(level))
			return level;
	return used & TD_USED_BY_INFO ? 5 : 6;
}

static int claim_event(const struct td_perf_stat *ps, const struct td_model *m, size_t f,
		       int model_event, int *claimed_by, struct td_import *imp)
{
	if (claimed_by[model_event] >= 0)
		return add_note(imp, "'%s' and '%s' both count %s; the counts of '%s' were used",
				ps->events[claimed_by[model_event]], ps->events[f],
				m->events[model_event].name, ps->events[claimed_by[model_event]]);
	claimed_by[model_event] = (int)f;
	return 0;
}

/*
 * Which model events the run keeps: those the file counts, first come
 * first served, then, if more than a run holds, the ones the shallowest
 * levels need.
 */
static int map_file_events(const struct td_perf_stat *ps, const struct td_model *m,
			   struct mapping *map, struct td_import *imp)
{
	int *claimed_by = malloc((m->n_events + 1) * sizeof(*claimed_by));
	char unused[512] = "", other[512] = "", dropped[512] = "";
	size_t n_unused = 0, n_other = 0, n_dropped = 0, n_claimed = 0;
	int rc = claimed_by ? 0 : -ENOMEM;

	map->duration_event = -1;
	for (size_t i = 0; claimed_by && i < m->n_events; i++)
		claimed_by[i] = -1;
	for (size_t f = 0; f < ps->n_events && !rc; f++) {
		int found[MAX_MAPPED];
		bool other_pmu;
		size_t n = td_import_map_event(m, ps->events[f], found, MAX_MAPPED, &other_pmu);

		map->n_run_events[f] = 0;
		if (strcmp(ps->events[f], "duration_time") == 0)
			map->duration_event = (int)f;
		if (strcasecmp(ps->events[f], "task-clock") == 0 && strcmp(ps->event_units[f], "msec") == 0) {
			map->run_events[f][0] = TASK_CLOCK;
			map->n_run_events[f] = 1;
		} else if (!n && other_pmu) {
			n_other++;
			list_append(other, sizeof(other), ps->events[f]);
		} else if (!n && map->duration_event != (int)f) {
			n_unused++;
			list_append(unused, sizeof(unused), ps->events[f]);
		}
		for (size_t k = 0; k < n && k < MAX_MAPPED && !rc; k++)
			rc = claim_event(ps, m, f, found[k], claimed_by, imp);
	}
	for (size_t i = 0; i < m->n_events; i++)
		n_claimed += claimed_by && claimed_by[i] >= 0;
	/* Keep by rank, then model order, until the run is full. */
	for (int rank = 1; rank <= 6 && !rc; rank++)
		for (size_t i = 0; i < m->n_events; i++) {
			if (claimed_by[i] < 0 || event_rank(m, (int)i) != rank)
				continue;
			if (map->n == TD_MAX_EVENTS) {
				n_dropped++;
				list_append(dropped, sizeof(dropped), m->events[i].name);
				continue;
			}
			size_t f = (size_t)claimed_by[i];

			map->model_event[map->n] = (int)i;
			if (map->n_run_events[f] < MAX_MAPPED)
				map->run_events[f][map->n_run_events[f]++] = (int)map->n;
			map->n++;
		}
	free(claimed_by);
	if (!rc && n_unused)
		rc = add_note(imp, "%zu event(s) the model %s does not use were left out: %s", n_unused,
			      m->name, unused);
	if (!rc && n_other)
		rc = add_note(imp, "%zu event(s) of another PMU than %s were left out: %s", n_other,
			      m->pmu, other);
	if (!rc && n_dropped)
		rc = add_note(imp, "a run keeps at most %d events; %zu of the %zu counted, needed only "
				   "deeper in the tree or by Info metrics, were left out: %s",
			      TD_MAX_EVENTS, n_dropped, n_claimed, dropped);
	return rc;
}

/* A count assigned to its run event, span and thread. */
struct entry {
	int32_t seq; /* interval, -1 without */
	uint32_t tid;
	int event;   /* run event, or TASK_CLOCK */
	int unit;
	int line;
	double value, runtime_ns, running_fraction;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->event != y->event)
		return x->event < y->event ? -1 : 1;
	if (x->unit != y->unit)
		return x->unit < y->unit ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

static int double_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Sorted distinct values of n doubles, in place; returns how many. */
static size_t unique_doubles(double *v, size_t n)
{
	size_t k = 0;

	qsort(v, n, sizeof(*v), double_cmp);
	for (size_t i = 0; i < n; i++)
		if (!k || v[i] != v[k - 1])
			v[k++] = v[i];
	return k;
}

static size_t unique_u32(uint32_t *v, size_t n)
{
	size_t k = 0;

	qsort(v, n, sizeof(*v), u32_cmp);
	for (size_t i = 0; i < n; i++)
		if (!k || v[i] != v[k - 1])
			v[k++] = v[i];
	return k;
}

/* Counts of one (span, thread, event) added up over CPUs or units. */
struct acc {
	double value;
	bool counted, untimed;
	double runtime_ns, enabled_ns;
	double fraction_sum;
	size_t n_counted;
};

static void acc_add(struct acc *a, const struct entry *e)
{
	if (isnan(e->value))
		return;
	a->value += e->value;
	a->counted = true;
	a->n_counted++;
	a->fraction_sum += e->running_fraction;
	if (!isnan(e->runtime_ns) && e->running_fraction > 0) {
		a->runtime_ns += e->runtime_ns;
		a->enabled_ns += e->runtime_ns / e->running_fraction;
	} else {
		a->untimed = true;
	}
}

static struct td_counter_value acc_value(const struct acc *a)
{
	if (!a->counted)
		return (struct td_counter_value){ NAN, 0 };
	return (struct td_counter_value){
		a->value, !a->untimed && a->enabled_ns > 0 ? a->runtime_ns / a->enabled_ns
							   : a->fraction_sum / (double)a->n_counted,
	};
}

/* Everything the sweep over sorted entries needs. */
struct builder {
	const struct td_perf_stat *ps;
	const struct td_import_opts *opts;
	struct td_import *imp;
	struct mapping map;
	struct entry *entries;
	size_t n_entries;
	double *stamps;   /* distinct interval timestamps, ascending */
	size_t n_stamps;
	uint32_t *tids;   /* distinct threads, ascending */
	size_t n_tids;
	char (*comms)[TD_COMM_LEN]; /* per tid */
	struct acc *whole; /* [tid index][run event + task clock] when intervals exist */
	char name[TD_COMM_LEN]; /* the thread name without --per-thread */
	uint32_t pid;
	size_t n_repeats;       /* counts given twice for one span, thread and CPU */
	int first_repeat;
	bool counted[TD_MAX_EVENTS]; /* run events the file has a count line for */
};

static size_t tid_index(const struct builder *b, uint32_t tid)
{
	const uint32_t *hit = bsearch(&tid, b->tids, b->n_tids, sizeof(tid), u32_cmp);

	return (size_t)(hit - b->tids);
}

static int32_t interval_seq(const struct builder *b, double stamp)
{
	const double *hit;

	if (isnan(stamp))
		return -1;
	hit = bsearch(&stamp, b->stamps, b->n_stamps, sizeof(stamp), double_cmp);
	return (int32_t)(hit - b->stamps);
}

static int collect_entries(struct builder *b)
{
	const struct td_perf_stat *ps = b->ps;
	size_t n = 0;

	for (size_t i = 0; i < ps->n_counts; i++)
		n += b->map.n_run_events[ps->counts[i].event];
	b->entries = malloc((n + 1) * sizeof(*b->entries));
	b->stamps = malloc((ps->n_counts + 1) * sizeof(*b->stamps));
	b->tids = malloc((ps->n_counts + 1) * sizeof(*b->tids));
	b->comms = calloc(ps->n_counts + 1, sizeof(*b->comms));
	if (!b->entries || !b->stamps || !b->tids || !b->comms)
		return -ENOMEM;
	for (size_t i = 0; i < ps->n_counts; i++) {
		b->stamps[b->n_stamps] = ps->counts[i].interval_s;
		b->n_stamps += !isnan(ps->counts[i].interval_s);
		b->tids[i] = ps->counts[i].tid;
	}
	b->n_stamps = unique_doubles(b->stamps, b->n_stamps);
	b->n_tids = unique_u32(b->tids, ps->n_counts);
	for (size_t i = ps->n_counts; i-- > 0;) /* the first name seen wins */
		memcpy(b->comms[tid_index(b, ps->counts[i].tid)], ps->counts[i].comm, TD_COMM_LEN);
	for (size_t i = 0; i < ps->n_counts; i++) {
		const struct td_perf_count *c = &ps->counts[i];

		for (size_t k = 0; k < b->map.n_run_events[c->event]; k++) {
			if (b->map.run_events[c->event][k] >= 0)
				b->counted[b->map.run_events[c->event][k]] = true;
			b->entries[b->n_entries++] = (struct entry){
				.seq = interval_seq(b, c->interval_s),
				.tid = c->tid,
				.event = b->map.run_events[c->event][k],
				.unit = c->unit,
				.line = c->line,
				.value = c->value,
				.runtime_ns = c->runtime_ns,
				.running_fraction = c->running_fraction,
			};
		}
	}
	qsort(b->entries, b->n_entries, sizeof(*b->entries), entry_cmp);
	return 0;
}

static struct td_thread_row blank_row(const struct builder *b, uint32_t tid)
{
	struct td_thread_row row = { .tid = tid, .pid = b->pid };

	memcpy(row.comm, b->ps->per_thread ? b->comms[tid_index(b, tid)] : b->name, TD_COMM_LEN);
	for (size_t i = 0; i < TD_MAX_EVENTS; i++)
		row.counters[i] = (struct td_counter_value){ NAN, 0 };
	return row;
}

static void set_counter(struct td_thread_row *row, int event, const struct acc *a)
{
	struct td_counter_value v = acc_value(a);

	if (event == TASK_CLOCK)
		row->oncpu_ns = a->counted && v.value > 0 ? (uint64_t)(v.value * 1e6) : 0;
	else
		row->counters[event] = v;
}

static struct acc *whole_acc(struct builder *b, uint32_t tid, int event)
{
	size_t width = b->map.n + 1;

	return &b->whole[tid_index(b, tid) * width + (event == TASK_CLOCK ? b->map.n : (size_t)event)];
}

/* The file's name of run event e (the first file event that stands for it). */
static const char *file_event_name(const struct builder *b, int e)
{
	for (size_t f = 0; f < b->ps->n_events; f++)
		for (size_t k = 0; k < b->map.n_run_events[f]; k++)
			if (b->map.run_events[f][k] == e)
				return b->ps->events[f];
	return "?";
}

/*
 * A thread must have a count line for every event the file counts, in
 * every span it appears in: a thread without its cycles line would give
 * its group and the process sums whose numerators and divisors cover
 * different threads, a tree that looks real and is not.  Such a file is
 * refused, naming the thread's first line in that span; "<not counted>"
 * is a line, and keeps its meaning (the event was not counted).
 */
static int check_complete(const struct builder *b, const struct entry *first, const bool *has,
			  int first_line, char *err, size_t errlen)
{
	char span[64] = "the run", who[TD_COMM_LEN + 48] = "";

	for (size_t e = 0; e < b->map.n; e++) {
		if (!b->counted[e] || has[e])
			continue;
		if (first->seq >= 0)
			snprintf(span, sizeof(span), "the interval at %.9g s", b->stamps[first->seq]);
		if (b->ps->per_thread)
			snprintf(who, sizeof(who), "thread %s-%u has no count for %s in ",
				 b->comms[tid_index(b, first->tid)], first->tid, file_event_name(b, (int)e));
		snprintf(err, errlen,
			 "line %d: %s%s%s%s, which the file counts elsewhere; the Top-Down formulas need "
			 "every event of every thread in every span, so give each its line "
			 "(\"<not counted>\" when perf did not count it)",
			 first_line, who, span, who[0] ? "" : " has no count for ",
			 who[0] ? "" : file_event_name(b, (int)e));
		return -EINVAL;
	}
	return 0;
}

/* The entries of one (span, thread): their row; entries[*i] is the first. */
static int sweep_thread(struct builder *b, size_t *i, struct td_thread_row *row, char *err,
			size_t errlen)
{
	const struct entry *first = &b->entries[*i];
	bool has[TD_MAX_EVENTS] = { false };
	int first_line = first->line;
	size_t k = *i;

	*row = blank_row(b, first->tid);
	while (k < b->n_entries && b->entries[k].seq == first->seq && b->entries[k].tid == first->tid) {
		struct acc a = { 0 };
		int event = b->entries[k].event;

		for (; k < b->n_entries && b->entries[k].seq == first->seq &&
		       b->entries[k].tid == first->tid && b->entries[k].event == event;
		     k++) {
			const struct entry *e = &b->entries[k], *prev = k > *i ? e - 1 : NULL;

			if (e->event >= 0)
				has[e->event] = true;
			if (e->line < first_line)
				first_line = e->line;
			if (prev && prev->event == event && prev->unit == e->unit) {
				if (!b->n_repeats++)
					b->first_repeat = e->line;
				continue;
			}
			acc_add(&a, e);
			if (b->whole)
				acc_add(whole_acc(b, e->tid, event), e);
		}
		set_counter(row, event, &a);
	}
	*i = k;
	return check_complete(b, first, has, first_line, err, errlen);
}

/* The rows of every span, in entry order: intervals, or the whole run. */
static int sweep(struct builder *b, struct td_run *run, char *err, size_t errlen)
{
	int rc = 0;

	if (b->n_stamps) {
		run->intervals = calloc(b->n_stamps, sizeof(*run->intervals));
		b->whole = calloc(b->n_tids * (b->map.n + 1), sizeof(*b->whole));
		if (!run->intervals || !b->whole)
			return -ENOMEM;
		run->nr_intervals = b->n_stamps;
	}
	for (size_t i = 0; i < b->n_stamps; i++)
		run->intervals[i].seq = (uint32_t)i;
	struct td_thread_row *rows = calloc(b->n_tids, sizeof(*rows));

	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < b->n_entries && !rc;) {
		int32_t seq = b->entries[i].seq;
		size_t n = 0;

		while (!rc && i < b->n_entries && b->entries[i].seq == seq)
			rc = sweep_thread(b, &i, &rows[n++], err, errlen);
		if (seq < 0) {
			run->threads = rows;
			run->nr_threads = n;
		} else {
			run->intervals[seq].threads = rows;
			run->intervals[seq].nr_threads = n;
		}
		rows = calloc(b->n_tids, sizeof(*rows));
		if (!rows)
			rc = -ENOMEM;
	}
	if (b->whole && !rc) { /* whole-run rows from the interval counts */
		free(run->threads);
		run->threads = rows;
		rows = NULL;
		run->nr_threads = b->n_tids;
		for (size_t t = 0; t < b->n_tids; t++) {
			run->threads[t] = blank_row(b, b->tids[t]);
			for (size_t e = 0; e < b->map.n; e++)
				set_counter(&run->threads[t], (int)e, whole_acc(b, b->tids[t], (int)e));
			set_counter(&run->threads[t], TASK_CLOCK, whole_acc(b, b->tids[t], TASK_CLOCK));
		}
	}
	free(rows);
	if (!rc && b->n_repeats)
		rc = add_note(b->imp, "%zu count(s) repeat an earlier one for the same span, thread and "
				      "CPU (first on line %d); the first of each was used",
			      b->n_repeats, b->first_repeat);
	return rc;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Longer than any run can be, and short enough that its ns fit an int64. */
#define MAX_RUN_SECONDS 1e9

/* Wall-clock times of the run and its intervals. */
static int set_times(const struct builder *b, struct td_run *run, char *err, size_t errlen)
{
	double duration_s = b->n_stamps ? b->stamps[b->n_stamps - 1] : 0;

	if (!b->n_stamps && b->map.duration_event >= 0)
		for (size_t i = 0; i < b->ps->n_counts; i++)
			if ((int)b->ps->counts[i].event == b->map.duration_event &&
			    b->ps->counts[i].value > duration_s * 1e9)
				duration_s = b->ps->counts[i].value / 1e9;
	if (!(duration_s <= MAX_RUN_SECONDS)) {
		snprintf(err, errlen, "the file's times say the run lasted %.3g s, which no perf stat run "
			 "can; check the interval timestamps and the duration_time count", duration_s);
		return -EINVAL;
	}
	if (b->ps->started_ns) {
		run->started_ns = b->ps->started_ns;
		run->ended_ns = run->started_ns + (int64_t)(duration_s * 1e9);
	} else {
		run->ended_ns = b->opts->file_time_ns ? b->opts->file_time_ns : now_ns();
		run->started_ns = run->ended_ns - (int64_t)(duration_s * 1e9);
	}
	for (size_t i = 0; i < run->nr_intervals; i++) {
		run->intervals[i].start_ns = run->started_ns + (int64_t)((i ? b->stamps[i - 1] : 0) * 1e9);
		run->intervals[i].end_ns = run->started_ns + (int64_t)(b->stamps[i] * 1e9);
	}
	return 0;
}

/*
 * How many tree nodes the whole-run counts define with this SMT setting,
 * and the deepest level: 1 when any level-1 node is defined, then down as
 * long as each level has more than half of its nodes defined (a node that
 * is a constant without its events, such as a memory kind the host lacks,
 * must not make a level look counted).
 */
static int count_defined(const struct td_model *m, const struct td_run *run, bool smt_on,
			 size_t *defined, int *deepest, char *err, size_t errlen)
{
	struct td_host_facts facts = { .smt_on = smt_on };
	struct td_engine *e = td_engine_new(m, 4, (const char *const *)run->event_names,
					    run->nr_events, &facts, err, errlen);
	struct td_counter_value *sum = e ? calloc(run->nr_events + 1, sizeof(*sum)) : NULL;
	double *values = e ? calloc(td_engine_scratch_size(e), sizeof(*values)) : NULL;
	struct td_metric_value *out = e ? calloc(td_engine_output_count(e) + 1, sizeof(*out)) : NULL;
	size_t nodes[5] = { 0 }, known[5] = { 0 };
	int rc = e && sum && values && out ? 0 : -ENOMEM;

	*defined = 0;
	*deepest = 0;
	if (!rc) {
		td_engine_eval_sum(e, run->threads, run->nr_threads, sum, values, out);
		for (size_t i = 0; i < td_engine_output_count(e); i++) {
			const struct td_metric_def *d = td_engine_output(e, i);

			if (d->kind != TD_METRIC_TREE)
				continue;
			nodes[d->level]++;
			known[d->level] += !isnan(out[i].value);
			*defined += !isnan(out[i].value);
		}
		*deepest = known[1] > 0;
		while (*deepest && *deepest < 4 && 2 * known[*deepest + 1] > nodes[*deepest + 1])
			(*deepest)++;
	}
	td_engine_free(e);
	free(sum);
	free(values);
	free(out);
	return rc;
}

static int no_tree_error(const struct td_model *m, const struct td_run *run, char *err,
			 size_t errlen)
{
	int idx[TD_MAX_EVENTS * 2];
	size_t n = td_model_events_for(m, TD_USED_BY_LEVEL(1), idx, TD_MAX_EVENTS * 2);
	char missing[768] = "";

	for (size_t i = 0; i < n && i < TD_MAX_EVENTS * 2; i++) {
		bool have = false;

		for (size_t k = 0; k < run->nr_events && !have; k++)
			have = strcmp(run->event_names[k], m->events[idx[i]].name) == 0;
		if (!have)
			list_append(missing, sizeof(missing), m->events[idx[i]].name);
	}
	snprintf(err, errlen,
		 "the counts define no Top-Down node of model %s; level 1 needs %s, which the file "
		 "lacks or never counted (record them with perf stat -e or -M TopdownL1)",
		 m->name, missing[0] ? missing : "events");
	return -EINVAL;
}

/* SMT and depth: the user's, or what the counts define best. */
static int choose_setup(struct builder *b, struct td_run *run, char *err, size_t errlen)
{
	const struct td_model *m = b->opts->model;
	size_t off = 0, on = 0;
	int deep_off = 0, deep_on = 0, rc;

	rc = count_defined(m, run, b->opts->smt == 1, &off, &deep_off, err, errlen);
	if (!rc && b->opts->smt < 0)
		rc = count_defined(m, run, true, &on, &deep_on, err, errlen);
	if (rc)
		return rc;
	b->imp->smt_on = b->opts->smt == 1 || (b->opts->smt < 0 && on > off);
	if (b->imp->smt_on && b->opts->smt < 0) {
		deep_off = deep_on;
		rc = add_note(b->imp, "SMT taken as on: the file counts the events the SMT-on "
				      "formulas use (--smt off overrides)");
	}
	if (!rc && !deep_off)
		return no_tree_error(m, run, err, errlen);
	b->imp->depth = b->opts->depth ? b->opts->depth : deep_off;
	return rc;
}

static int set_labels(const struct builder *b, struct td_run *run)
{
	const struct td_import_opts *o = b->opts;
	char level[16];
	int rc;

	snprintf(level, sizeof(level), "%d", b->imp->depth);
	rc = td_labels_set(&run->labels, "cpu_model", o->model->name) ?:
	     td_labels_set(&run->labels, "collector", "import") ?:
	     td_labels_set(&run->labels, "tma_level", level) ?:
	     td_labels_set(&run->labels, "smt", b->imp->smt_on ? "on" : "off");
	if (!rc && o->source)
		rc = td_labels_set(&run->labels, "source", base_name(o->source));
	for (size_t i = 0; o->labels && i < o->labels->count && !rc; i++)
		rc = td_labels_set(&run->labels, o->labels->items[i].key, o->labels->items[i].value);
	return rc;
}

static int fill_run(struct builder *b, struct td_run *run, char *err, size_t errlen)
{
	const struct td_import_opts *o = b->opts;
	int rc;

	run->collector = strdup("import");
	if (o->process)
		run->process = strdup(o->process);
	else if (o->source) /* "skx-l1.csv" -> "skx-l1" */
		run->process = strndup(base_name(o->source), strcspn(base_name(o->source), "."));
	else
		run->process = strdup("import");
	if (!run->collector || !run->process)
		return -ENOMEM;
	snprintf(b->name, sizeof(b->name), "%s", run->process);
	run->nr_events = b->map.n;
	for (size_t i = 0; i < b->map.n; i++)
		if (!(run->event_names[i] = strdup(o->model->events[b->map.model_event[i]].name)))
			return -ENOMEM;
	rc = collect_entries(b);
	if (!rc && b->ps->per_thread && b->n_tids)
		b->pid = b->tids[0]; /* -p PID: the main thread has the lowest tid */
	if (!rc)
		rc = sweep(b, run, err, errlen);
	if (!rc)
		rc = set_times(b, run, err, errlen);
	if (rc)
		return rc;
	rc = choose_setup(b, run, err, errlen);
	run->level = b->imp->depth;
	return rc ? rc : set_labels(b, run);
}

static int compute_tree(struct td_import *imp, struct td_run *run, char *err, size_t errlen)
{
	struct td_host_facts facts = { .smt_on = imp->smt_on };
	struct td_engine *e = td_engine_new(imp->model, imp->depth, (const char *const *)run->event_names,
					    run->nr_events, &facts, err, errlen);
	int rc = e ? td_engine_compute(e, run, err, errlen) : -EINVAL;

	td_engine_free(e);
	return rc;
}

void td_import_free(struct td_import *imp)
{
	if (!imp)
		return;
	td_run_free(imp->run);
	for (size_t i = 0; i < imp->n_notes; i++)
		free(imp->notes[i]);
	free(imp->notes);
	free(imp);
}

int td_import_build(const struct td_perf_stat *ps, const struct td_import_opts *opts,
		    struct td_import **out, char *err, size_t errlen)
{
	struct td_import *imp = calloc(1, sizeof(*imp));
	struct builder b = { .ps = ps, .opts = opts, .imp = imp };
	int rc = 0;

	*out = NULL;
	if (!opts->model || opts->depth < 0 || opts->depth > 4) {
		free(imp);
		snprintf(err, errlen, "a model and a depth of 0 (automatic) to 4 are required");
		return -EINVAL;
	}
	b.map.run_events = calloc(ps->n_events + 1, sizeof(*b.map.run_events));
	b.map.n_run_events = calloc(ps->n_events + 1, sizeof(*b.map.n_run_events));
	if (!imp || !(imp->run = td_run_new()) || !b.map.run_events || !b.map.n_run_events)
		rc = -ENOMEM;
	if (imp)
		imp->model = opts->model;
	if (!rc)
		rc = map_file_events(ps, opts->model, &b.map, imp);
	if (!rc)
		rc = fill_run(&b, imp->run, err, errlen);
	if (!rc)
		rc = compute_tree(imp, imp->run, err, errlen);
	if (!rc && opts->model->notes)
		rc = add_note(imp, "%s", opts->model->notes);
	free(b.map.run_events);
	free(b.map.n_run_events);
	free(b.entries);
	free(b.stamps);
	free(b.tids);
	free(b.comms);
	free(b.whole);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory while importing the counts");
	if (rc) {
		td_import_free(imp);
		return rc;
	}
	*out = imp;
	return 0;
}
