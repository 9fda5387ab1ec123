// SPDX-License-Identifier: BSD-3-Clause
/*
 * Pooled trees (query.h, "Pooled"): one Top-Down tree from the counts of
 * many runs, rather than the mean of each run's tree.
 *
 * Why. A host with two free counters counts a level's events in many
 * groups that take turns, so each window counts every group for a small
 * share of its time, and a short window may give some group no turn at
 * all: its nodes are n/a or low-confidence in every window. The same
 * windows taken together counted every group for a while. Pooling the
 * counts before the formulas, each event over the time it was counted,
 * gives one tree from all of that time, and says how much it was.
 *
 * How. A stored thread counter is already scaled: value = counted x
 * time / running time, with running_fraction = running time / time. So
 * value x running_fraction is what the event counted, and
 * running_fraction x the thread's on-CPU time is how long it counted.
 * Summed over the pooled threads and runs, an event's estimate is
 * counted x all on-CPU time / its counting time, and its running
 * fraction is its counting time / all on-CPU time: the ratio estimate
 * a window's own thread rows make, taken over every window. Events
 * counted in one kernel group share their counting time, so a ratio of
 * two of them is the ratio of what they counted together.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "engine.h"
#include "kb.h"
#include "query_internal.h"

/* One event over the pooled rows. */
struct pooled_event {
	double counted;     /* what it counted: value x running fraction, summed */
	double counting_ns; /* running fraction x on-CPU time, summed */
	double counting_rows; /* running fractions summed: the weight when no row has on-CPU time */
};

struct pool {
	const struct td_query *q;
	struct scope_choice scope;    /* the threads pooled: every one, or q->thread's */
	struct td_name_index events;  /* event names in the order first seen */
	struct pooled_event *sums;    /* by events position */
	size_t sums_cap;
	double oncpu_ns;              /* the pooled rows' on-CPU time */
	size_t nr_rows;               /* thread rows pooled */
	size_t nr_runs;               /* runs with Top-Down */
	struct td_name_index hosts;   /* "node" labels */
	/* What every pooled run must share, from the first one. */
	char model[32];
	char smt[8];
	char slots[16];
	int deepest;                  /* the deepest tma_level */
};


/* The run's whole-run thread rows into the sums (a td_run_visitor's run). */
static int pool_run(void *ctx, const struct td_run *run, char *err, size_t errlen)
{
	struct pool *p = ctx;
	size_t at[TD_MAX_EVENTS];

	for (size_t i = 0; i < run->nr_events; i++) {
		bool added;
		int64_t pos = td_name_index_get(&p->events, run->event_names[i], &added);
		struct pooled_event *grown = pos < 0 ? NULL : td_grow(p->sums, &p->sums_cap, (size_t)pos,
								       sizeof(*grown));

		if (!grown)
			return td_query_no_memory(err, errlen);
		p->sums = grown;
		if (added)
			p->sums[pos] = (struct pooled_event){ 0 };
		at[i] = (size_t)pos;
	}
	for (size_t k = 0; k < run->nr_threads; k++) {
		const struct td_thread_row *t = &run->threads[k];
		char tid[16];

		snprintf(tid, sizeof(tid), "%u", t->tid);
		if (!td_query_thread_wanted(&p->scope, tid, t->comm))
			continue;
		p->nr_rows++;
		p->oncpu_ns += (double)t->oncpu_ns;
		for (size_t i = 0; i < run->nr_events; i++) {
			const struct td_counter_value *c = &t->counters[i];
			struct pooled_event *s = &p->sums[at[i]];

			if (isnan(c->value) || !(c->running_fraction > 0))
				continue; /* its group never had a counter in this thread */
			s->counted += c->value * c->running_fraction;
			s->counting_ns += c->running_fraction * (double)t->oncpu_ns;
			s->counting_rows += c->running_fraction;
		}
	}
	return 0;
}

/* The label every pooled run must agree on: -EINVAL naming both values
 * and the filter that picks one. */
static int agree(char *kept, size_t len, const char *key, const char *value, const char *what,
		 char *err, size_t errlen)
{
	if (!kept[0]) {
		snprintf(kept, len, "%s", value);
		return 0;
	}
	if (strcmp(kept, value) == 0)
		return 0;
	snprintf(err, errlen, "the runs matching the filters differ in %s (%s and %s), and only runs of one "
		 "can be pooled: add --label %s=%s (or %s=%s)", what, kept, value, key, kept, key, value);
	return -EINVAL;
}

/* Checks a run's labels against the pool's and pools its threads; runs
 * without Top-Down are passed over. */
static int pool_summary(struct td_store *store, struct pool *p, const struct td_run_summary *run,
			char *err, size_t errlen)
{
	const struct td_labels *l = &run->labels;
	/* collect and the agent say tma_model; import says cpu_model */
	const char *model_key = td_labels_get(l, "tma_model") ? "tma_model" : "cpu_model";
	const char *model = td_labels_get(l, model_key), *level = td_labels_get(l, "tma_level");
	const char *host = td_labels_get(l, "node");
	struct td_run_visitor v = { .run = pool_run, .ctx = p };
	bool added;
	int ret;

	if (!model)
		return 0;
	if ((ret = agree(p->model, sizeof(p->model), model_key, model, "CPU model", err, errlen)) ||
	    (ret = agree(p->smt, sizeof(p->smt), "smt", td_labels_get(l, "smt") ? td_labels_get(l, "smt") : "off",
			 "SMT", err, errlen)) ||
	    (ret = agree(p->slots, sizeof(p->slots), "pmu_slots",
			 td_labels_get(l, "pmu_slots") ? td_labels_get(l, "pmu_slots") : "model",
			 "slots per cycle", err, errlen)))
		return ret;
	if (level && atoi(level) > p->deepest)
		p->deepest = atoi(level);
	if (host && td_name_index_get(&p->hosts, host, &added) < 0)
		return td_query_no_memory(err, errlen);
	p->nr_runs++;
	return td_store_walk_run(store, run->id, &v, err, errlen);
}

/* The pooled estimate of each event, in the pool's order. */
static void pooled_counters(const struct pool *p, struct td_counter_value *out)
{
	bool by_time = p->oncpu_ns > 0;
	double all = by_time ? p->oncpu_ns : (double)p->nr_rows;

	for (size_t i = 0; i < p->events.count; i++) {
		const struct pooled_event *s = &p->sums[i];
		double counting = by_time ? s->counting_ns : s->counting_rows;

		out[i] = counting > 0 ? (struct td_counter_value){ s->counted * all / counting, fmin(counting / all, 1) }
				      : (struct td_counter_value){ NAN, 0 };
	}
}

/* The model's tree over the pooled counters, as the metric rows of one sample. */
static int evaluate(const struct pool *p, const struct td_model *model, int depth,
		    struct td_metric_row **rows, size_t *nr_rows, char *err, size_t errlen)
{
	struct td_host_facts facts = {
		.smt_on = strcmp(p->smt, "on") == 0,
		.slots_per_cycle = (unsigned)strtoul(p->slots, NULL, 10), /* "model": 0 */
	};
	size_t n = p->events.count;
	struct td_counter_value *counters = calloc(n + 1, sizeof(*counters));
	struct td_engine *e = td_engine_new(model, depth, (const char *const *)p->events.keys, n, &facts,
					    err, errlen);
	double *values = e ? calloc(td_engine_scratch_size(e) + 1, sizeof(*values)) : NULL;
	struct td_metric_value *out = e ? calloc(td_engine_output_count(e) + 1, sizeof(*out)) : NULL;
	int ret = 0;

	*rows = NULL;
	*nr_rows = 0;
	if (!e) {
		ret = -EINVAL;
		goto done;
	}
	if (!counters || !values || !out || !(*rows = calloc(td_engine_output_count(e) + 1, sizeof(**rows)))) {
		ret = td_query_no_memory(err, errlen);
		goto done;
	}
	pooled_counters(p, counters);
	td_engine_eval(e, counters, values, out);
	for (size_t i = 0; i < td_engine_output_count(e); i++) {
		const struct td_metric_def *d = td_engine_output(e, i);
		const struct td_metric_def *parent = d->parent ? td_model_metric(model, d->parent) : NULL;

		if (d->kind != TD_METRIC_TREE)
			continue;
		(*rows)[(*nr_rows)++] = (struct td_metric_row){
			.scope = TD_SCOPE_PROCESS, .scope_key = "pooled", .interval_seq = -1,
			.path = d->path, .parent = parent ? parent->path : NULL, .level = d->level,
			.value = out[i].value, .threshold_crossed = out[i].threshold_crossed,
			.confidence = out[i].confidence,
			.counted_ns = out[i].confidence > 0 ? (uint64_t)llround(out[i].confidence * p->oncpu_ns) : 0,
		};
	}
done:
	free(counters);
	free(values);
	free(out);
	td_engine_free(e);
	return ret;
}

static int pooled_tree(const struct pool *p, struct td_tree **out, char *err, size_t errlen)
{
	const struct td_kb *kb = td_kb_load(err, errlen);
	const struct td_model *model = kb ? td_kb_model(kb, p->model) : NULL;
	int depth = p->q->max_level ? p->q->max_level : p->deepest ? p->deepest : 4;
	struct td_metric_row *rows = NULL;
	struct td_tree *tree = NULL;
	size_t nr_rows = 0;
	int ret;

	if (!kb)
		return -EINVAL;
	if (!model) {
		snprintf(err, errlen, "the runs were counted on CPU model '%s', which this topdown does not know; "
			 "query them with the topdown that stored them", p->model);
		return -EINVAL;
	}
	ret = evaluate(p, model, depth, &rows, &nr_rows, err, errlen);
	if (!ret && !(tree = calloc(1, sizeof(*tree))))
		ret = td_query_no_memory(err, errlen);
	if (!ret && td_tree_of_rows(rows, nr_rows, p->q->top_n, tree))
		ret = td_query_no_memory(err, errlen);
	free(rows);
	if (ret) {
		td_tree_free(tree);
		return ret;
	}
	tree->nr_runs = p->nr_runs;
	tree->nr_samples = 1;
	tree->pooled = true;
	tree->oncpu_ns = (uint64_t)p->oncpu_ns;
	tree->nr_hosts = p->hosts.count;
	snprintf(tree->model, sizeof(tree->model), "%s", p->model);
	*out = tree;
	return 0;
}

int td_query_pooled_tree(struct td_store *store, const struct td_query *q, struct td_tree **out,
			 char *err, size_t errlen)
{
	struct pool p = { .q = q };
	struct td_run_summary *runs = NULL;
	size_t nr_runs = 0;
	int ret;

	*out = NULL;
	td_query_choose_scope(q, &p.scope);
	ret = td_store_list_runs(store, &q->runs, &runs, &nr_runs, err, errlen);
	for (size_t i = 0; ret == 0 && i < nr_runs; i++)
		ret = pool_summary(store, &p, &runs[i], err, errlen);
	if (ret == 0 && (!p.nr_runs || !p.nr_rows))
		ret = td_query_nothing_found(store, &q->runs, "the filters", p.scope.described, err, errlen);
	if (ret == 0)
		ret = pooled_tree(&p, out, err, errlen);
	td_run_summaries_free(runs, nr_runs);
	td_name_index_free(&p.events);
	td_name_index_free(&p.hosts);
	free(p.sums);
	return ret;
}
