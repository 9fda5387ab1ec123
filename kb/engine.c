// SPDX-License-Identifier: BSD-3-Clause
/*
 * engine: the Top-Down tree of a run, per thread, thread-name group and
 * process, per interval and for the whole run.
 *
 * Everything that depends only on the model and the run's event list is
 * decided in td_engine_new(): where each run event goes in the value
 * vector, which metrics must be evaluated, which are reported and in what
 * order, and which run events each reported metric rests on.  What is
 * left per counter vector is a copy, the compiled formulas, and a scan of
 * the running fractions.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "expr.h"

/* A reported metric with what its rows and its confidence need. */
struct output {
	const struct td_metric_def *def;
	const char *path;        /* tree path, or the metric name for Info */
	const char *parent_path; /* NULL at level 1 and for Info */
	int *run_events;         /* run event indexes the metric uses */
	size_t n_run_events;
	bool lacks_events;       /* the metric uses events the run did not count */
};

struct td_engine {
	const struct td_model *model;
	size_t nr_events;
	char **event_names; /* copies: td_engine_compute checks the run against them */
	int *event_slot;    /* per run event: its slot in the value vector, or -1 */
	double *blank;      /* the value vector before any count: NaN, constants set */
	size_t *eval;       /* metrics[] indexes to evaluate, in order */
	size_t n_eval;
	struct output *outputs;
	size_t n_outputs;
};

void td_thread_group_name(const char *comm, char *out, size_t outlen)
{
	size_t len = strnlen(comm, TD_COMM_LEN), n = 0;

	if (!outlen)
		return;
	for (size_t i = 0; i < len && n + 1 < outlen; i++) {
		bool digit = comm[i] >= '0' && comm[i] <= '9';

		if (!digit)
			out[n++] = comm[i];
		else if (i == 0 || comm[i - 1] < '0' || comm[i - 1] > '9')
			out[n++] = '*';
	}
	out[n] = '\0';
}

/* ---- building ------------------------------------------------------------ */

static int fail(char *err, size_t errlen, int rc, const char *what)
{
	snprintf(err, errlen, "%s", what);
	return rc;
}

static bool uses_event(const struct td_metric_def *m, int model_event)
{
	for (size_t i = 0; i < m->n_events; i++)
		if (m->events[i] == model_event)
			return true;
	return false;
}

/* Level-1 nodes in the order the pipeline spends slots on them. */
static int pipeline_rank(const struct td_metric_def *m)
{
	static const char *const prefixes[] = { "Frontend", "Bad_Speculation", "Backend" };

	for (int i = 0; i < 3; i++)
		if (strncmp(m->node, prefixes[i], strlen(prefixes[i])) == 0)
			return i;
	return strncmp(m->node, "Retiring", 8) == 0 ? 4 : 3;
}

static int add_output(struct td_engine *e, const struct td_metric_def *m)
{
	struct output *o = &e->outputs[e->n_outputs++];
	const struct td_metric_def *parent = m->parent ? td_model_metric(e->model, m->parent) : NULL;

	o->def = m;
	o->path = m->kind == TD_METRIC_TREE ? m->path : m->name;
	o->parent_path = parent ? parent->path : NULL;
	o->run_events = malloc((e->nr_events ? e->nr_events : 1) * sizeof(*o->run_events));
	if (!o->run_events)
		return -ENOMEM;
	for (size_t i = 0; i < e->nr_events; i++)
		if (e->event_slot[i] >= 0 && uses_event(m, e->event_slot[i]))
			o->run_events[o->n_run_events++] = (int)i;
	o->lacks_events = o->n_run_events < m->n_events;
	return 0;
}

/* The node, then its children down to depth, each in metrics[] order. */
static int add_subtree(struct td_engine *e, const struct td_metric_def *node, int depth)
{
	const struct td_model *m = e->model;
	int rc = add_output(e, node);

	for (size_t i = 0; i < m->n_metrics && !rc; i++) {
		const struct td_metric_def *child = &m->metrics[i];

		if (child->kind == TD_METRIC_TREE && child->level <= depth && child->parent &&
		    strcmp(child->parent, node->name) == 0)
			rc = add_subtree(e, child, depth);
	}
	return rc;
}

static int add_tree_outputs(struct td_engine *e, int depth)
{
	const struct td_model *m = e->model;
	int rc = 0;

	for (int rank = 0; rank <= 4 && !rc; rank++)
		for (size_t i = 0; i < m->n_metrics && !rc; i++)
			if (m->metrics[i].kind == TD_METRIC_TREE && m->metrics[i].level == 1 &&
			    pipeline_rank(&m->metrics[i]) == rank)
				rc = add_subtree(e, &m->metrics[i], depth);
	return rc;
}

/*
 * An Info metric is reported when the run counted every event it names,
 * or when it is defined anyway: formulas with "#SMT_on" branches name
 * events of the branch not taken.  The second test evaluates once with
 * distinct made-up counts, so no difference of two counts is zero.
 */
static bool info_defined(const struct td_engine *e, const struct td_metric_def *m,
			 const double *probe)
{
	size_t counted = 0;

	for (size_t k = 0; k < m->n_events; k++)
		for (size_t i = 0; i < e->nr_events; i++)
			if (e->event_slot[i] == m->events[k]) {
				counted++;
				break;
			}
	return counted == m->n_events || !isnan(probe[m->slot]);
}

static int add_info_outputs(struct td_engine *e)
{
	const struct td_model *m = e->model;
	struct td_counter_value *made_up = calloc(e->nr_events + 1, sizeof(*made_up));
	double *probe = malloc(m->n_slots * sizeof(*probe));
	struct td_metric_value *ignored = calloc(e->n_outputs + 1, sizeof(*ignored));
	int rc = made_up && probe && ignored ? 0 : -ENOMEM;

	for (size_t i = 0; i < e->nr_events && !rc; i++)
		made_up[i] = (struct td_counter_value){ 1e6 + 7919.0 * (double)(i * i + 3 * i + 1), 1 };
	if (!rc)
		td_engine_eval(e, made_up, probe, ignored);
	for (size_t i = 0; i < m->n_metrics && !rc; i++)
		if (m->metrics[i].kind == TD_METRIC_INFO && info_defined(e, &m->metrics[i], probe))
			rc = add_output(e, &m->metrics[i]);
	free(made_up);
	free(probe);
	free(ignored);
	return rc;
}

static int map_events(struct td_engine *e, const char *const *names, char *err, size_t errlen)
{
	for (size_t i = 0; i < e->nr_events; i++) {
		const struct td_event_def *def = td_model_event(e->model, names[i]);

		for (size_t k = 0; k < i; k++)
			if (strcmp(names[k], names[i]) == 0) {
				snprintf(err, errlen,
					 "event '%s' is listed twice; list each event of a run once",
					 names[i]);
				return -EINVAL;
			}
		e->event_names[i] = strdup(names[i]);
		if (!e->event_names[i])
			return -ENOMEM;
		e->event_slot[i] = def ? def->slot : -1;
	}
	return 0;
}

/* The metrics a mask of td_level_mask() needs, in evaluation order. */
static void choose_evaluated(struct td_engine *e, unsigned mask)
{
	const struct td_model *m = e->model;

	e->n_eval = 0;
	for (size_t i = 0; i < m->n_metrics; i++)
		if (m->metrics[i].used_by & mask)
			e->eval[e->n_eval++] = i;
}

static int plan(struct td_engine *e, int depth, const char *const *names,
		const struct td_host_facts *facts, char *err, size_t errlen)
{
	const struct td_model *m = e->model;
	size_t n_tree;
	int rc = map_events(e, names, err, errlen);

	if (rc)
		return rc;
	for (size_t i = 0; i < m->n_slots; i++)
		e->blank[i] = NAN;
	td_model_set_constants(m, facts, e->blank);
	choose_evaluated(e, td_level_mask(depth, true));
	rc = add_tree_outputs(e, depth);
	n_tree = e->n_outputs;
	if (!rc)
		rc = add_info_outputs(e);
	/* Without Info outputs their formulas need not run. */
	if (!rc && e->n_outputs == n_tree)
		choose_evaluated(e, td_level_mask(depth, false));
	return rc;
}

struct td_engine *td_engine_new(const struct td_model *model, int depth,
				const char *const *event_names, size_t nr_events,
				const struct td_host_facts *facts, char *err, size_t errlen)
{
	static const struct td_host_facts smt_off;
	struct td_engine *e;
	int rc;

	if (!model || depth < 1 || depth > 4) {
		fail(err, errlen, -EINVAL, "the Top-Down depth must be 1 to 4 and a model is required");
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		fail(err, errlen, -ENOMEM, "out of memory while preparing the Top-Down formulas");
		return NULL;
	}
	e->model = model;
	e->nr_events = nr_events;
	e->event_names = calloc(nr_events + 1, sizeof(*e->event_names));
	e->event_slot = calloc(nr_events + 1, sizeof(*e->event_slot));
	e->blank = calloc(model->n_slots + 1, sizeof(*e->blank));
	e->eval = calloc(model->n_metrics + 1, sizeof(*e->eval));
	e->outputs = calloc(model->n_metrics + 1, sizeof(*e->outputs));
	rc = e->event_names && e->event_slot && e->blank && e->eval && e->outputs
		     ? plan(e, depth, event_names, facts ? facts : &smt_off, err, errlen)
		     : -ENOMEM;
	if (rc) {
		if (rc == -ENOMEM)
			fail(err, errlen, rc, "out of memory while preparing the Top-Down formulas");
		td_engine_free(e);
		return NULL;
	}
	return e;
}

void td_engine_free(struct td_engine *e)
{
	if (!e)
		return;
	for (size_t i = 0; e->event_names && i < e->nr_events; i++)
		free(e->event_names[i]);
	for (size_t i = 0; i < e->n_outputs; i++)
		free(e->outputs[i].run_events);
	free(e->event_names);
	free(e->event_slot);
	free(e->blank);
	free(e->eval);
	free(e->outputs);
	free(e);
}

const struct td_model *td_engine_model(const struct td_engine *e)
{
	return e->model;
}

size_t td_engine_output_count(const struct td_engine *e)
{
	return e->n_outputs;
}

const struct td_metric_def *td_engine_output(const struct td_engine *e, size_t i)
{
	return i < e->n_outputs ? e->outputs[i].def : NULL;
}

size_t td_engine_scratch_size(const struct td_engine *e)
{
	return e->model->n_slots;
}

/* ---- evaluating ------------------------------------------------------------ */

/*
 * The least running fraction of the metric's events.  Events the run lacks
 * count only when the value is undefined: a defined value does not rest on
 * them (they sit in the branch of a conditional not taken).
 */
static double confidence(const struct output *o, const struct td_counter_value *counters,
			 double value)
{
	double least = o->n_run_events && !(isnan(value) && o->lacks_events) ? 1 : 0;

	for (size_t k = 0; k < o->n_run_events; k++) {
		double f = counters[o->run_events[k]].running_fraction;

		if (!(f >= least)) /* NaN is no evidence of counting */
			least = isnan(f) ? 0 : f;
	}
	return least;
}

/*
 * The running fraction every model event of the run shares, or NaN.  Most
 * collections count every event all the time (or rotate them evenly):
 * then no metric needs its own scan.
 */
static double uniform_fraction(const struct td_engine *e, const struct td_counter_value *counters)
{
	double shared = NAN;

	for (size_t i = 0; i < e->nr_events; i++) {
		if (e->event_slot[i] < 0)
			continue;
		if (isnan(shared))
			shared = counters[i].running_fraction;
		else if (counters[i].running_fraction != shared)
			return NAN;
	}
	return shared;
}

void td_engine_eval(const struct td_engine *e, const struct td_counter_value *counters,
		    double *values, struct td_metric_value *out)
{
	const struct td_metric_def *metrics = e->model->metrics;

	memcpy(values, e->blank, e->model->n_slots * sizeof(*values));
	for (size_t i = 0; i < e->nr_events; i++)
		if (e->event_slot[i] >= 0)
			values[e->event_slot[i]] = counters[i].value;
	for (size_t k = 0; k < e->n_eval; k++) {
		const struct td_metric_def *m = &metrics[e->eval[k]];

		values[m->slot] = td_expr_eval(m->compiled, values);
	}
	double uniform = uniform_fraction(e, counters);

	for (size_t i = 0; i < e->n_outputs; i++) {
		const struct output *o = &e->outputs[i];
		double v = values[o->def->slot] * o->def->scale;
		double t = NAN;

		if (!isfinite(v))
			v = NAN;
		else if (o->def->compiled_threshold)
			t = td_expr_eval(o->def->compiled_threshold, values);
		out[i] = (struct td_metric_value){
			.value = v,
			.confidence = !isnan(uniform) && o->n_run_events && !(isnan(v) && o->lacks_events)
					      ? uniform
					      : confidence(o, counters, v),
			.threshold_crossed = !isnan(t) && t != 0,
		};
	}
}

/* ---- rows ------------------------------------------------------------------ */

/* Per-call working memory: nothing is allocated per thread. */
struct work {
	const struct td_engine *e;
	struct td_run *run;
	const char **paths;       /* per output: its path and parent, the run's strings */
	const char **parents;
	double *values;
	struct td_metric_value *out;
	struct td_counter_value *sum;
	size_t *order;            /* thread indexes of one span, sorted by scope */
	char (*group)[TD_COMM_LEN]; /* folded name of each thread of the span */
	const struct td_thread_row *threads;
};

/*
 * The rows of one scope's outputs.  Its key is interned here, once for
 * all of them; paths and parents were interned before the first span.
 */
static int add_rows(struct work *w, enum td_metric_scope scope, const char *key, int32_t seq,
		    uint64_t oncpu_ns)
{
	const struct td_engine *e = w->e;
	const char *run_key = td_run_intern(w->run, key);

	if (!run_key)
		return -ENOMEM;
	for (size_t i = 0; i < e->n_outputs; i++) {
		const struct output *o = &e->outputs[i];
		struct td_metric_row row = {
			.scope = scope,
			.scope_key = run_key,
			.interval_seq = seq,
			.path = w->paths[i],
			.parent = w->parents[i],
			.level = o->def->kind == TD_METRIC_TREE ? o->def->level : 0,
			.value = w->out[i].value,
			.threshold_crossed = w->out[i].threshold_crossed,
			.confidence = w->out[i].confidence,
			.counted_ns = w->out[i].confidence > 0 ? (uint64_t)llround(w->out[i].confidence *
										 (double)oncpu_ns) : 0,
		};
		int rc = td_run_append_metric(w->run, &row);

		if (rc)
			return rc;
	}
	return 0;
}

/*
 * Counters of threads[idx[0..n)] (threads[0..n) when idx is NULL) added
 * up.  A thread whose event never ran adds nothing to the count but
 * lowers the running fraction, which is weighted by on-CPU time (plainly
 * averaged when there is none).
 */
static void sum_counters(const struct td_engine *e, const struct td_thread_row *threads,
			 const size_t *idx, size_t n, struct td_counter_value *sum)
{
	uint64_t oncpu_ns = 0;

	for (size_t k = 0; k < n; k++)
		oncpu_ns += threads[idx ? idx[k] : k].oncpu_ns;
	for (size_t i = 0; i < e->nr_events; i++)
		sum[i] = (struct td_counter_value){ NAN, 0 };
	/* Thread by thread: each row's counters are contiguous. */
	for (size_t k = 0; k < n; k++) {
		const struct td_thread_row *t = &threads[idx ? idx[k] : k];
		double weight = oncpu_ns ? (double)t->oncpu_ns / (double)oncpu_ns : 1.0 / (double)n;

		for (size_t i = 0; i < e->nr_events; i++) {
			const struct td_counter_value *c = &t->counters[i];

			if (!isnan(c->value))
				sum[i].value = isnan(sum[i].value) ? c->value : sum[i].value + c->value;
			if (!isnan(c->running_fraction))
				sum[i].running_fraction += weight * c->running_fraction;
		}
	}
}

void td_engine_eval_sum(const struct td_engine *e, const struct td_thread_row *threads, size_t n,
			struct td_counter_value *sum, double *values, struct td_metric_value *out)
{
	sum_counters(e, threads, NULL, n, sum);
	td_engine_eval(e, sum, values, out);
}

/* Appends ", name" (or "name" first) to text while it fits; a name already there is not repeated. */
static void add_name(char *text, size_t len, const char *name)
{
	size_t used = strlen(text), n = strlen(name);
	const char *p;

	for (p = strstr(text, name); p; p = strstr(p + 1, name))
		if ((p == text || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0'))
			return;
	if (used + n + 3 < len)
		snprintf(text + used, len - used, "%s%s", used ? ", " : "", name);
}

/* Whether output o uses an event that counted 0 in every thread. */
static bool uses_zero(const struct output *o, const struct td_counter_value *sum)
{
	for (size_t k = 0; k < o->n_run_events; k++)
		if (sum[o->run_events[k]].value == 0)
			return true;
	return false;
}

/* The events of output o that counted 0 in every thread (zero) or were never counted (uncounted). */
static void gap_events(const struct td_engine *e, const struct output *o, const struct td_counter_value *sum,
		       char *zero, char *uncounted, size_t len)
{
	for (size_t k = 0; k < o->n_run_events; k++) {
		double count = sum[o->run_events[k]].value;

		if (count == 0)
			add_name(zero, len, e->event_names[o->run_events[k]]);
		else if (isnan(count))
			add_name(uncounted, len, e->event_names[o->run_events[k]]);
	}
}

#define GAP_NAMES 512 /* bytes of one list of names in the sentence */

int td_engine_explain_undefined(const struct td_engine *e, const struct td_run *run, char *why, size_t len)
{
	struct td_counter_value *sum = calloc(e->nr_events + 1, sizeof(*sum));
	double *values = calloc(e->model->n_slots + 1, sizeof(*values));
	struct td_metric_value *out = calloc(e->n_outputs + 1, sizeof(*out));
	char names[GAP_NAMES] = "", zero[GAP_NAMES] = "", uncounted[GAP_NAMES] = "";
	char low[GAP_NAMES] = "", low_zero[GAP_NAMES] = "", ignored[GAP_NAMES] = "";
	int undefined = 0, lowered = 0;
	size_t used = 0;

	why[0] = '\0';
	if (!sum || !values || !out) {
		free(sum);
		free(values);
		free(out);
		return -ENOMEM;
	}
	td_engine_eval_sum(e, run->threads, run->nr_threads, sum, values, out);
	for (size_t i = 0; i < e->n_outputs; i++) {
		const struct output *o = &e->outputs[i];
		const char *name = o->def->node ? o->def->node : o->def->name;

		if (isnan(out[i].value)) {
			undefined++;
			add_name(names, sizeof(names), name);
			gap_events(e, o, sum, zero, uncounted, GAP_NAMES);
			continue;
		}
		/* A tree node that reads its value from events counting 0 everywhere;
		 * Info metrics are left alone: no crypto in a run is no news. */
		if (o->def->kind != TD_METRIC_TREE || !uses_zero(o, sum))
			continue;
		lowered++;
		add_name(low, sizeof(low), name);
		gap_events(e, o, sum, low_zero, ignored, GAP_NAMES);
	}
	if (undefined)
		used = snprintf(why, len, "%s %s n/a over the whole run: ", names, undefined == 1 ? "is" : "are");
	if (undefined && !zero[0] && !uncounted[0] && used < len)
		used += snprintf(why + used, len - used, "%s by zero", undefined == 1 ? "its formula divides" :
				 "their formulas divide");
	if (zero[0] && used < len)
		used += snprintf(why + used, len - used, "%s counted 0 in every thread (a PMU counts 0 of an event it "
				 "does not implement, as an emulated CPU's does of most, and a ratio over 0 is undefined)",
				 zero);
	if (uncounted[0] && used < len)
		used += snprintf(why + used, len - used, "%s%s never counted (their counter group had no turn in "
				 "a window too short for every group, or no free counter in it)", zero[0] ? "; " : "",
				 uncounted);
	if (lowered && used < len)
		snprintf(why + used, len - used, "%s%s rest%s on %s, which counted 0 in every thread: a PMU that does "
			 "not implement an event counts 0 of it", undefined ? "; " : "", low, lowered == 1 ? "s" : "",
			 low_zero);
	free(sum);
	free(values);
	free(out);
	return undefined + lowered;
}

static int thread_rows(struct work *w, size_t n, int32_t seq)
{
	int rc = 0;

	for (size_t i = 0; i < n && !rc; i++) {
		char key[16];

		snprintf(key, sizeof(key), "%u", w->threads[i].tid);
		td_engine_eval(w->e, w->threads[i].counters, w->values, w->out);
		rc = add_rows(w, TD_SCOPE_THREAD, key, seq, w->threads[i].oncpu_ns);
	}
	return rc;
}

static int by_group(const void *a, const void *b, void *ctx)
{
	const struct work *w = ctx;
	size_t i = *(const size_t *)a, k = *(const size_t *)b;
	int c = strcmp(w->group[i], w->group[k]);

	return c ? c : (i > k) - (i < k);
}

static int by_pid(const void *a, const void *b, void *ctx)
{
	const struct work *w = ctx;
	size_t i = *(const size_t *)a, k = *(const size_t *)b;
	uint32_t p = w->threads[i].pid, q = w->threads[k].pid;

	return p != q ? (p > q) - (p < q) : (i > k) - (i < k);
}

static bool same_group(const struct work *w, size_t a, size_t b)
{
	return strcmp(w->group[w->order[a]], w->group[w->order[b]]) == 0;
}

static bool same_pid(const struct work *w, size_t a, size_t b)
{
	return w->threads[w->order[a]].pid == w->threads[w->order[b]].pid;
}

/* Rows of every group of threads that sort together under cmp. */
static int grouped_rows(struct work *w, size_t n, int32_t seq, enum td_metric_scope scope,
			int (*cmp)(const void *, const void *, void *),
			bool (*same)(const struct work *, size_t, size_t))
{
	int rc = 0;

	for (size_t i = 0; i < n; i++)
		w->order[i] = i;
	qsort_r(w->order, n, sizeof(*w->order), cmp, w);
	for (size_t from = 0, to; from < n && !rc; from = to) {
		char key[TD_COMM_LEN + 16];
		uint64_t oncpu_ns = w->threads[w->order[from]].oncpu_ns;

		for (to = from + 1; to < n && same(w, from, to); to++)
			oncpu_ns += w->threads[w->order[to]].oncpu_ns;
		if (scope == TD_SCOPE_GROUP)
			snprintf(key, sizeof(key), "%s", w->group[w->order[from]]);
		else
			snprintf(key, sizeof(key), "%u", w->threads[w->order[from]].pid);
		sum_counters(w->e, w->threads, w->order + from, to - from, w->sum);
		td_engine_eval(w->e, w->sum, w->values, w->out);
		rc = add_rows(w, scope, key, seq, oncpu_ns);
	}
	return rc;
}

static int span_rows(struct work *w, const struct td_thread_row *threads, size_t n, int32_t seq)
{
	int rc;

	w->threads = threads;
	for (size_t i = 0; i < n; i++)
		td_thread_group_name(threads[i].comm, w->group[i], sizeof(w->group[i]));
	rc = thread_rows(w, n, seq);
	if (!rc)
		rc = grouped_rows(w, n, seq, TD_SCOPE_GROUP, by_group, same_group);
	if (!rc)
		rc = grouped_rows(w, n, seq, TD_SCOPE_PROCESS, by_pid, same_pid);
	return rc;
}

static int check_run(const struct td_engine *e, const struct td_run *run, char *err,
		     size_t errlen)
{
	bool same = run->nr_events == e->nr_events;

	for (size_t i = 0; same && i < e->nr_events; i++)
		same = run->event_names[i] && strcmp(run->event_names[i], e->event_names[i]) == 0;
	if (same)
		return 0;
	return fail(err, errlen, -EINVAL,
		    "the run's events are not the ones the Top-Down engine was built for; "
		    "build it from the run's event names");
}

/* The outputs' paths and parents as the run's strings, each looked up once. */
static int intern_paths(struct work *w)
{
	for (size_t i = 0; i < w->e->n_outputs; i++) {
		const struct output *o = &w->e->outputs[i];

		w->paths[i] = td_run_intern(w->run, o->path);
		w->parents[i] = o->parent_path ? td_run_intern(w->run, o->parent_path) : NULL;
		if (!w->paths[i] || (o->parent_path && !w->parents[i]))
			return -ENOMEM;
	}
	return 0;
}

static size_t largest_span(const struct td_run *run)
{
	size_t n = run->nr_threads;

	for (size_t i = 0; i < run->nr_intervals; i++)
		if (run->intervals[i].nr_threads > n)
			n = run->intervals[i].nr_threads;
	return n;
}

/*
 * Whether the whole run is its only interval: the same threads in the same
 * order with the same figures the engine reads (a collection of one
 * interval usually stores both).  Equal bits in, equal rows out.
 */
static bool whole_run_is_interval(const struct td_engine *e, const struct td_run *run)
{
	const struct td_interval *iv = run->intervals;

	if (run->nr_intervals != 1 || iv->nr_threads != run->nr_threads)
		return false;
	for (size_t i = 0; i < run->nr_threads; i++) {
		const struct td_thread_row *a = &iv->threads[i], *b = &run->threads[i];

		if (a->tid != b->tid || a->pid != b->pid || a->oncpu_ns != b->oncpu_ns ||
		    strncmp(a->comm, b->comm, TD_COMM_LEN) != 0 ||
		    memcmp(a->counters, b->counters, e->nr_events * sizeof(*a->counters)) != 0)
			return false;
	}
	return true;
}

/* The rows from first on again, as whole-run rows. */
static int copy_as_whole_run(struct td_run *run, size_t first)
{
	size_t end = run->nr_metrics;
	int rc = 0;

	for (size_t i = first; i < end && !rc; i++) {
		struct td_metric_row row = run->metrics[i]; /* appending may move the array */

		row.interval_seq = -1;
		rc = td_run_append_metric(run, &row);
	}
	return rc;
}

int td_engine_compute(const struct td_engine *e, struct td_run *run, char *err, size_t errlen)
{
	size_t before = run->nr_metrics, span = largest_span(run);
	struct work w = {
		.e = e,
		.run = run,
		.values = malloc(e->model->n_slots * sizeof(*w.values)),
		.out = malloc((e->n_outputs + 1) * sizeof(*w.out)),
		.sum = malloc((e->nr_events + 1) * sizeof(*w.sum)),
		.order = malloc((span + 1) * sizeof(*w.order)),
		.group = malloc((span + 1) * sizeof(*w.group)),
		.paths = malloc((e->n_outputs + 1) * sizeof(*w.paths)),
		.parents = malloc((e->n_outputs + 1) * sizeof(*w.parents)),
	};
	int rc = check_run(e, run, err, errlen);

	if (!rc && !(w.values && w.out && w.sum && w.order && w.group && w.paths && w.parents))
		rc = -ENOMEM;
	if (!rc)
		rc = intern_paths(&w);
	for (size_t i = 0; i < run->nr_intervals && !rc; i++) {
		const struct td_interval *iv = &run->intervals[i];

		rc = span_rows(&w, iv->threads, iv->nr_threads, (int32_t)iv->seq);
	}
	if (!rc && whole_run_is_interval(e, run))
		rc = copy_as_whole_run(run, before);
	else if (!rc)
		rc = span_rows(&w, run->threads, run->nr_threads, -1);
	if (rc == -ENOMEM) {
		/* The rows own nothing: strings interned meanwhile stay with the run. */
		run->nr_metrics = before;
		fail(err, errlen, rc, "out of memory while computing the Top-Down tree");
	}
	free(w.values);
	free(w.out);
	free(w.sum);
	free(w.order);
	free(w.group);
	free(w.paths);
	free(w.parents);
	return rc;
}
