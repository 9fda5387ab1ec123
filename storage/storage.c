// SPDX-License-Identifier: BSD-3-Clause
/*
 * The storage front: resolves the backend by name, checks what callers
 * pass, and dispatches. Checks that hold for every backend live here so
 * each backend can trust the shape of the run it is given.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "backend.h"
#include "storage.h"

static const struct td_store_ops *const backends[] = {
	&td_sqlite_ops,
	&td_postgres_ops,
};

#define NR_BACKENDS (sizeof(backends) / sizeof(backends[0]))

static const struct td_store_ops *find_backend(const char *name, char *err, size_t errlen)
{
	char known[128] = "";
	size_t used = 0;

	if (!name)
		return backends[0];
	for (size_t i = 0; i < NR_BACKENDS; i++)
		if (strcmp(backends[i]->name, name) == 0)
			return backends[i];
	for (size_t i = 0; i < NR_BACKENDS && used < sizeof(known); i++)
		used += (size_t)snprintf(known + used, sizeof(known) - used, "%s%s",
					 i ? ", " : "", backends[i]->name);
	snprintf(err, errlen, "unknown storage backend '%s'; use one of: %s", name, known);
	return NULL;
}

struct td_store *td_store_open(const struct td_store_config *cfg, char *err, size_t errlen)
{
	static const struct td_store_config defaults;
	const struct td_store_ops *ops;

	struct td_store *store;

	if (!cfg)
		cfg = &defaults;
	ops = find_backend(cfg->backend, err, errlen);
	store = ops ? ops->open(cfg, err, errlen) : td_store_open_failed(-EINVAL);
	if (store)
		store->mode = cfg->mode;
	return store;
}

struct td_store *td_store_open_failed(int ret)
{
	errno = -ret;
	return NULL;
}

int td_store_backend_check(const char *name, char *err, size_t errlen)
{
	return find_backend(name, err, errlen) ? 0 : -EINVAL;
}

void td_store_close(struct td_store *store)
{
	if (store)
		store->ops->close(store);
}

const char *td_store_location(const struct td_store *store)
{
	return store && store->location ? store->location : "?";
}

int td_store_schema_version(const struct td_store *store)
{
	return store ? store->schema_version : 0;
}

enum td_store_mode td_store_mode(const struct td_store *store)
{
	return store ? store->mode : TD_STORE_READ_WRITE;
}

/* A reader's store refuses writes before the backend sees them: its
 * connection could not make them anyway, and this names the cause. */
static int read_only(struct td_store *store, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "cannot %s in %s: the store was opened read-only; this is a bug "
		 "in the caller, which must open it to write", what, td_store_location(store));
	return -EROFS;
}

void td_store_set_deadline(struct td_store *store, int64_t deadline_ns)
{
	store->deadline_ns = deadline_ns;
	store->timed_out = false;
}

bool td_store_timed_out(const struct td_store *store)
{
	return store && store->timed_out;
}

int64_t td_store_time_left_ns(struct td_store *store)
{
	struct timespec now;
	int64_t left;

	if (!store->deadline_ns)
		return INT64_MAX;
	clock_gettime(CLOCK_MONOTONIC, &now);
	left = store->deadline_ns - ((int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
	if (left > 0)
		return left;
	store->timed_out = true;
	return 0;
}

static int invalid_run(char *err, size_t errlen, const char *why)
{
	snprintf(err, errlen, "cannot store the run: %s; this is a bug in the code that built it",
		 why);
	return -EINVAL;
}

/* A profile's stacks name frames it holds; its event and unit are named. */
static int check_profile(const struct td_profile *p, char *err, size_t errlen)
{
	if (!p)
		return 0;
	if (!p->event || !p->unit)
		return invalid_run(err, errlen, "its profile does not name its event and unit");
	if ((p->nr_frames && !p->frames) || (p->nr_stacks && !p->stacks))
		return invalid_run(err, errlen, "its profile counts frames or stacks it does not hold");
	for (size_t i = 0; i < p->nr_stacks; i++) {
		const struct td_profile_stack *stack = &p->stacks[i];

		if (stack->nr_frames && !stack->frames)
			return invalid_run(err, errlen, "a profile stack counts frames it does not hold");
		for (uint32_t f = 0; f < stack->nr_frames; f++)
			if (stack->frames[f] >= p->nr_frames)
				return invalid_run(err, errlen, "a profile stack names a frame the profile lacks");
	}
	return 0;
}

/* Pointers a count promises must be there; everything else a backend may
 * reject through its own constraints. */
static int check_run(const struct td_run *run, char *err, size_t errlen)
{
	if (!run->id[0] || !memchr(run->id, '\0', sizeof(run->id)))
		return invalid_run(err, errlen, "it has no id");
	if (run->nr_events > TD_MAX_EVENTS)
		return invalid_run(err, errlen, "it names more events than TD_MAX_EVENTS");
	for (size_t i = 0; i < run->nr_events; i++)
		if (!run->event_names[i])
			return invalid_run(err, errlen, "an event has no name");
	if ((run->nr_threads && !run->threads) || (run->nr_intervals && !run->intervals) ||
	    (run->nr_metrics && !run->metrics))
		return invalid_run(err, errlen, "a count is set but its array is missing");
	for (size_t i = 0; i < run->nr_intervals; i++)
		if (run->intervals[i].nr_threads && !run->intervals[i].threads)
			return invalid_run(err, errlen,
					   "an interval counts threads it does not hold");
	for (size_t i = 0; i < run->nr_metrics; i++) {
		const struct td_metric_row *m = &run->metrics[i];

		if (!m->path || !m->scope_key)
			return invalid_run(err, errlen, "a metric row has no path or scope key");
		if (m->scope != TD_SCOPE_THREAD && m->scope != TD_SCOPE_GROUP &&
		    m->scope != TD_SCOPE_PROCESS)
			return invalid_run(err, errlen, "a metric row has an unknown scope");
	}
	return check_profile(run->profile, err, errlen);
}

int td_store_write_run(struct td_store *store, const struct td_run *run,
		       char *err, size_t errlen)
{
	int rc;

	if (!store || !run)
		return invalid_run(err, errlen, "no store or no run was given");
	if (store->mode == TD_STORE_READ_ONLY)
		return read_only(store, "store a run", err, errlen);
	rc = check_run(run, err, errlen);
	return rc < 0 ? rc : store->ops->write_run(store, run, err, errlen);
}

int td_store_read_run(struct td_store *store, const char *run_id, struct td_run **out,
		      char *err, size_t errlen)
{
	if (!store || !run_id || !out) {
		snprintf(err, errlen, "cannot read a run without a store, a run id and a result; "
			 "this is a bug in the caller");
		return -EINVAL;
	}
	*out = NULL;
	return store->ops->read_run(store, run_id, out, err, errlen);
}

int td_store_walk_run(struct td_store *store, const char *run_id, const struct td_run_visitor *v,
		      char *err, size_t errlen)
{
	if (!store || !run_id || !v || !v->run) {
		snprintf(err, errlen, "cannot walk a run without a store, a run id and a visitor; "
			 "this is a bug in the caller");
		return -EINVAL;
	}
	return store->ops->walk_run(store, run_id, v, err, errlen);
}

static int caller_bug(char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "cannot %s without a store and a result; this is a bug in the caller",
		 what);
	return -EINVAL;
}

int td_store_list_runs(struct td_store *store, const struct td_run_filter *filter,
		       struct td_run_summary **out, size_t *count, char *err, size_t errlen)
{
	static const struct td_run_filter any;

	if (!store || !out || !count)
		return caller_bug(err, errlen, "list runs");
	*out = NULL;
	*count = 0;
	return store->ops->list_runs(store, filter ? filter : &any, out, count, err, errlen);
}

void td_run_summary_release(struct td_run_summary *summary)
{
	free(summary->process);
	free(summary->collector);
	td_labels_free(&summary->labels);
}

int td_run_summary_copy(struct td_run_summary *dst, const struct td_run_summary *src)
{
	*dst = *src;
	dst->process = src->process ? strdup(src->process) : NULL;
	dst->collector = src->collector ? strdup(src->collector) : NULL;
	td_labels_init(&dst->labels);
	if ((src->process && !dst->process) || (src->collector && !dst->collector) ||
	    td_labels_copy(&dst->labels, &src->labels) < 0) {
		td_run_summary_release(dst);
		return -ENOMEM;
	}
	return 0;
}

void td_run_summaries_free(struct td_run_summary *summaries, size_t count)
{
	for (size_t i = 0; summaries && i < count; i++)
		td_run_summary_release(&summaries[i]);
	free(summaries);
}

/* ---- run ids ---- */

#define MAX_CANDIDATES 5 /* ambiguous prefixes: how many matches the message lists */

/* The lower-case form of text into prefix, or an error when it cannot
 * begin a run id (ids are UUIDs: hex digits and '-'). */
static int normalize_run_id(const char *text, char prefix[TD_RUN_ID_LEN],
			    char *err, size_t errlen)
{
	size_t len = strlen(text);

	for (size_t i = 0; i < len && len < TD_RUN_ID_LEN; i++) {
		if (!isxdigit((unsigned char)text[i]) && text[i] != '-')
			break;
		prefix[i] = (char)tolower((unsigned char)text[i]);
		if (i + 1 == len) {
			prefix[len] = '\0';
			return 0;
		}
	}
	snprintf(err, errlen, "'%.40s' is not a run id: ids are UUIDs such as "
		 "3f2a9c1e-...; 'topdown list' shows them", text);
	return -EINVAL;
}

static int ambiguous(const char *prefix, char (*ids)[TD_RUN_ID_LEN], size_t count,
		     char *err, size_t errlen)
{
	size_t used = (size_t)snprintf(err, errlen, "run id '%s' is ambiguous: it starts", prefix);

	for (size_t i = 0; i < count && i < MAX_CANDIDATES && used < errlen; i++)
		used += (size_t)snprintf(err + used, errlen - used, "%s %s", i ? "," : "", ids[i]);
	if (used < errlen)
		snprintf(err + used, errlen - used, "%s; give more of the id",
			 count > MAX_CANDIDATES ? " and more" : "");
	return -ENOTUNIQ;
}

int td_store_resolve_run_id(struct td_store *store, const char *text, char id[TD_RUN_ID_LEN],
			    char *err, size_t errlen)
{
	char ids[MAX_CANDIDATES + 1][TD_RUN_ID_LEN], prefix[TD_RUN_ID_LEN], high[TD_RUN_ID_LEN];
	size_t len, count = 0;
	int ret;

	if (!store || !text || !id)
		return caller_bug(err, errlen, "resolve a run id");
	ret = normalize_run_id(text, prefix, err, errlen);
	if (ret < 0)
		return ret;
	/* Every id starting with prefix sorts below prefix with its last
	 * character incremented ('-', digits and letters have successors). */
	len = strlen(prefix);
	memcpy(high, prefix, len + 1);
	high[len - 1]++;
	ret = store->ops->find_run_ids(store, prefix, high, ids, MAX_CANDIDATES + 1, &count,
				       err, errlen);
	if (ret < 0)
		return ret;
	if (count && strcmp(ids[0], prefix) == 0) /* a whole id sorts before its extensions */
		count = 1;
	else if (len < TD_RUN_ID_MIN_PREFIX) {
		snprintf(err, errlen, "run id '%s' is too short: give the whole id or at least its "
			 "first %d characters", prefix, TD_RUN_ID_MIN_PREFIX);
		return -EINVAL;
	}
	if (count == 0) {
		snprintf(err, errlen, "no run '%s' in %s; list the stored runs with 'topdown list'",
			 prefix, td_store_location(store));
		return -ENOENT;
	}
	if (count > 1)
		return ambiguous(prefix, ids, count, err, errlen);
	memcpy(id, ids[0], TD_RUN_ID_LEN);
	return 0;
}

/* ---- metric rows ---- */

static bool valid_scope(enum td_metric_scope scope)
{
	return scope == TD_SCOPE_THREAD || scope == TD_SCOPE_GROUP || scope == TD_SCOPE_PROCESS;
}

static const struct td_run_filter any_run;

/* The metric filter a backend sees: metrics or every process row, with
 * no value bound as NaN. -EINVAL for a scope that does not exist. */
static int metric_filter_of(const struct td_metric_filter *metrics,
			    struct td_metric_filter *filter, char *err, size_t errlen)
{
	static const struct td_metric_filter process_rows = { .scope = TD_SCOPE_PROCESS };

	*filter = metrics ? *metrics : process_rows;
	if (!valid_scope(filter->scope)) {
		snprintf(err, errlen, "cannot read metric rows of scope %d, which does not exist; "
			 "this is a bug in the caller", (int)filter->scope);
		return -EINVAL;
	}
	if (filter->min_value == 0)
		filter->min_value = NAN;
	return 0;
}

int td_store_read_metrics(struct td_store *store, const struct td_run_filter *runs,
			  const struct td_metric_filter *metrics,
			  struct td_run_metrics **out, size_t *count, char *err, size_t errlen)
{
	struct td_metric_filter filter;
	int ret;

	if (!store || !out || !count)
		return caller_bug(err, errlen, "read metrics");
	*out = NULL;
	*count = 0;
	ret = metric_filter_of(metrics, &filter, err, errlen);
	if (ret < 0)
		return ret;
	return store->ops->read_metrics(store, runs ? runs : &any_run, &filter, out, count,
					err, errlen);
}

int td_store_sum_deepest_crossings(struct td_store *store, const struct td_run_filter *runs,
				   const struct td_metric_filter *metrics,
				   struct td_crossing_sums **out, char *err, size_t errlen)
{
	struct td_metric_filter filter;
	struct td_crossing_sums *sums;
	int ret;

	if (!store || !out)
		return caller_bug(err, errlen, "sum metric rows");
	*out = NULL;
	if (!store->ops->sum_deepest_crossings) {
		snprintf(err, errlen, "the %s backend does not sum rows where they are stored; "
			 "read them with td_store_read_metrics", store->ops->name);
		return -EOPNOTSUPP;
	}
	ret = metric_filter_of(metrics, &filter, err, errlen);
	if (ret < 0)
		return ret;
	sums = calloc(1, sizeof(*sums));
	if (!sums) {
		snprintf(err, errlen, "out of memory summing metric rows; free memory and retry");
		return -ENOMEM;
	}
	ret = store->ops->sum_deepest_crossings(store, runs ? runs : &any_run, &filter, sums,
						err, errlen);
	if (ret < 0) {
		td_crossing_sums_free(sums);
		return ret;
	}
	*out = sums;
	return 0;
}

void td_crossing_sums_free(struct td_crossing_sums *sums)
{
	if (!sums)
		return;
	for (size_t i = 0; i < sums->count; i++)
		free(sums->items[i].path);
	free(sums->items);
	free(sums);
}

void td_run_metrics_free(struct td_run_metrics *items, size_t count)
{
	for (size_t i = 0; items && i < count; i++) {
		td_run_summary_release(&items[i].run);
		free(items[i].rows);
		td_name_index_free(&items[i].strings);
	}
	free(items);
}

int td_metrics_result_add_run(struct td_metrics_result *r, long long key,
			      struct td_run_summary *summary)
{
	struct td_run_metrics *items = td_grow(r->items, &r->cap, r->count, sizeof(*items));
	long long *keys;

	if (items)
		r->items = items;
	keys = items ? td_grow(r->keys, &r->key_cap, r->count, sizeof(*keys)) : NULL;
	if (!keys) {
		td_run_summary_release(summary);
		return -ENOMEM;
	}
	r->keys = keys;
	r->keys[r->count] = key;
	r->items[r->count++] = (struct td_run_metrics){ .run = *summary };
	return 0;
}

static int compare_by_key(const void *a, const void *b, void *keys_arg)
{
	const long long *keys = keys_arg;
	long long x = keys[*(const size_t *)a], y = keys[*(const size_t *)b];

	return (x > y) - (x < y);
}

/*
 * The rows gathered so far go to the current item, their strings with
 * them, and no item is current until select_run() finds the next: a
 * failed look-up must not settle the empty rows over an item's.
 */
static void settle_rows(struct td_metrics_result *r)
{
	if (r->current < r->count) {
		r->items[r->current].rows = r->rows.metrics;
		r->items[r->current].nr_rows = r->rows.nr_metrics;
		r->items[r->current].strings = r->rows.strings;
		r->current = r->count;
	}
	r->rows.metrics = NULL;
	r->rows.nr_metrics = r->rows.cap_metrics = 0;
	r->rows.strings = (struct td_name_index){ 0 };
}

/* Makes the run with key the current item; -EIO when there is none. */
static int select_run(struct td_metrics_result *r, long long key)
{
	size_t lo = 0, hi = r->count;

	if (!r->by_key) {
		r->by_key = calloc(r->count + 1, sizeof(*r->by_key));
		if (!r->by_key)
			return -ENOMEM;
		for (size_t i = 0; i < r->count; i++)
			r->by_key[i] = i;
		qsort_r(r->by_key, r->count, sizeof(*r->by_key), compare_by_key, r->keys);
		r->current = r->count;
	}
	settle_rows(r);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->keys[r->by_key[mid]] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Rows come grouped by run: a run seen before would lose its rows. */
	if (lo == r->count || r->keys[r->by_key[lo]] != key || r->items[r->by_key[lo]].rows)
		return -EIO;
	r->current = r->by_key[lo];
	return 0;
}

int td_metrics_result_add_row(struct td_metrics_result *r, long long key,
			      const struct td_metric_row *row)
{
	int ret = 0;

	if (!r->by_key || r->current == r->count || r->keys[r->current] != key)
		ret = select_run(r, key);
	return ret < 0 ? ret : td_run_add_metric(&r->rows, row);
}

int td_metrics_result_finish(struct td_metrics_result *r, int ret,
			     struct td_run_metrics **out, size_t *count)
{
	size_t kept = 0;

	settle_rows(r);
	free(r->keys);
	free(r->by_key);
	if (ret < 0) {
		td_run_metrics_free(r->items, r->count);
		return ret;
	}
	/* A run whose rows went away between the two queries is left out. */
	for (size_t i = 0; i < r->count; i++) {
		if (r->items[i].nr_rows)
			r->items[kept++] = r->items[i];
		else
			td_run_summary_release(&r->items[i].run);
	}
	if (!kept) {
		free(r->items);
		r->items = NULL;
	}
	*out = r->items;
	*count = kept;
	return 0;
}

/* ---- deleting ---- */

#define DEFAULT_DELETE_BATCH 100

int td_store_delete_runs(struct td_store *store, const struct td_run_filter *filter,
			 size_t batch, size_t *deleted, char *err, size_t errlen)
{
	return td_store_delete_runs_with(store, filter, batch, NULL, NULL, deleted, err, errlen);
}

int td_store_delete_runs_with(struct td_store *store, const struct td_run_filter *filter, size_t batch,
			      td_delete_progress_fn progress, void *ctx, size_t *deleted, char *err, size_t errlen)
{
	static const struct td_run_filter every_run;
	struct td_run_filter f;
	size_t gone;
	int ret;

	if (!store || !deleted)
		return caller_bug(err, errlen, "delete runs");
	*deleted = 0;
	if (store->mode == TD_STORE_READ_ONLY)
		return read_only(store, "delete runs", err, errlen);
	f = filter ? *filter : every_run;
	f.limit = 0;
	if (!batch)
		batch = DEFAULT_DELETE_BATCH;
	do {
		gone = 0;
		ret = store->ops->delete_batch(store, &f, batch, &gone, err, errlen);
		*deleted += gone;
		if (progress)
			progress(ctx, *deleted);
	} while (ret == 0 && gone == batch);
	return ret;
}

/* ---- shared by the backends ---- */

char *td_like_suffix_pattern(const char *node)
{
	char *pattern = malloc(2 * strlen(node) + 3), *p = pattern;

	if (!pattern)
		return NULL;
	*p++ = '%';
	*p++ = '.';
	for (; *node; node++) {
		if (*node == '%' || *node == '_' || *node == '\\')
			*p++ = '\\';
		*p++ = *node;
	}
	*p = '\0';
	return pattern;
}

#define WHOLE_RUN_SEQ -1

int td_run_take_summary(struct td_run *run, struct td_run_summary *sum)
{
	memcpy(run->id, sum->id, sizeof(run->id));
	run->started_ns = sum->started_ns;
	run->ended_ns = sum->ended_ns;
	run->process = sum->process;
	run->level = sum->level;
	run->collector = sum->collector;
	run->labels = sum->labels;
	run->dropped = sum->dropped;
	run->partial = sum->partial;
	if (sum->nr_threads && !(run->threads = calloc(sum->nr_threads, sizeof(*run->threads))))
		return -ENOMEM;
	run->nr_threads = sum->nr_threads;
	return 0;
}

int td_run_append_interval(struct td_run *run, size_t *cap, int64_t seq, int64_t start_ns,
			   int64_t end_ns, int64_t nr_threads)
{
	struct td_interval *grown, *iv;

	if (nr_threads < 0 || seq < 0 || seq > UINT32_MAX ||
	    (run->nr_intervals && seq <= run->intervals[run->nr_intervals - 1].seq))
		return -EIO;
	grown = td_grow(run->intervals, cap, run->nr_intervals, sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	run->intervals = grown;
	iv = &run->intervals[run->nr_intervals];
	*iv = (struct td_interval){ .seq = (uint32_t)seq, .start_ns = start_ns, .end_ns = end_ns };
	if (nr_threads && !(iv->threads = calloc((size_t)nr_threads, sizeof(*iv->threads))))
		return -ENOMEM;
	iv->nr_threads = (size_t)nr_threads;
	run->nr_intervals++;
	return 0;
}

void td_interval_walk_init(struct td_interval_walk *w, const struct td_run *run,
			   const struct td_run_visitor *v)
{
	memset(w, 0, sizeof(*w));
	w->run = run;
	w->v = v;
	w->window = *run; /* a shallow copy: td_run_thread_slot() finds w->iv in it */
	w->window.nr_intervals = 0;
	w->window.intervals = &w->iv;
}

/* Hands the interval read so far to the visitor. */
static int interval_walk_flush(struct td_interval_walk *w)
{
	if (!w->window.nr_intervals)
		return 0;
	w->window.nr_intervals = 0;
	w->ret = w->v->interval(w->v->ctx, w->run, &w->iv, w->err, sizeof(w->err));
	return w->ret;
}

int td_interval_walk_at(struct td_interval_walk *w, int64_t seq, int64_t start_ns, int64_t end_ns,
			int64_t nr_threads)
{
	int ret;

	if (w->window.nr_intervals && seq == w->iv.seq)
		return 0;
	if (nr_threads < 0 || seq < 0 || seq > UINT32_MAX || (w->window.nr_intervals && seq < w->iv.seq))
		return -EIO;
	if ((ret = interval_walk_flush(w)) < 0)
		return ret;
	if ((size_t)nr_threads > w->cap) {
		struct td_thread_row *grown = reallocarray(w->iv.threads, (size_t)nr_threads, sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		w->iv.threads = grown;
		w->cap = (size_t)nr_threads;
	}
	/* As read_run's: zeroed, then filled by the thread rows read. */
	if (nr_threads)
		memset(w->iv.threads, 0, (size_t)nr_threads * sizeof(*w->iv.threads));
	w->iv.seq = (uint32_t)seq;
	w->iv.start_ns = start_ns;
	w->iv.end_ns = end_ns;
	w->iv.nr_threads = (size_t)nr_threads;
	w->window.nr_intervals = 1;
	return 0;
}

int td_interval_walk_finish(struct td_interval_walk *w)
{
	return interval_walk_flush(w);
}

void td_interval_walk_release(struct td_interval_walk *w)
{
	free(w->iv.threads);
	w->iv.threads = NULL;
	w->cap = 0;
}

static int compare_seq(const void *key, const void *item)
{
	int64_t seq = *(const int64_t *)key;
	uint32_t other = ((const struct td_interval *)item)->seq;

	return seq < other ? -1 : seq > other;
}

struct td_thread_row *td_run_thread_slot(struct td_run *run, int64_t interval_seq,
					 int64_t ordinal)
{
	struct td_thread_row *threads = run->threads;
	size_t nr_threads = run->nr_threads;

	if (interval_seq != WHOLE_RUN_SEQ) {
		struct td_interval *iv = bsearch(&interval_seq, run->intervals, run->nr_intervals,
						 sizeof(*iv), compare_seq);

		if (!iv)
			return NULL;
		threads = iv->threads;
		nr_threads = iv->nr_threads;
	}
	return ordinal >= 0 && (uint64_t)ordinal < nr_threads ? &threads[ordinal] : NULL;
}

static const char *const scope_names[] = {
	[TD_SCOPE_THREAD] = "thread",
	[TD_SCOPE_GROUP] = "group",
	[TD_SCOPE_PROCESS] = "process",
};

#define NR_SCOPES (sizeof(scope_names) / sizeof(scope_names[0]))

const char *td_scope_name(enum td_metric_scope scope)
{
	return scope_names[scope];
}

int td_scope_parse(const char *name)
{
	for (size_t i = 0; name && i < NR_SCOPES; i++)
		if (strcmp(name, scope_names[i]) == 0)
			return (int)i;
	return -1;
}

/*
 * json_dumps, checked. jansson (2.14) ignores the result of writing a
 * string into its output buffer, so when an allocation fails there it
 * returns malformed text ('{"collector:"bpf"}') as if all went well, and
 * the store would keep a run nobody can read back. Here the buffer is
 * ours and remembers a failed allocation; NULL, errno ENOMEM, after one.
 */
struct dump_buffer {
	char *text;
	size_t len, cap;
	bool failed;
};

static int dump_append(const char *bytes, size_t size, void *ctx)
{
	struct dump_buffer *b = ctx;

	if (b->len + size > b->cap) {
		size_t cap = (b->len + size) * 2;
		char *text = b->failed ? NULL : realloc(b->text, cap);

		if (!text) {
			b->failed = true;
			return -1;
		}
		b->text = text;
		b->cap = cap;
	}
	memcpy(b->text + b->len, bytes, size);
	b->len += size;
	return 0;
}

static char *dump_checked(const json_t *json)
{
	struct dump_buffer b = { 0 };

	if (json_dump_callback(json, dump_append, &b, JSON_COMPACT) != 0 ||
	    dump_append("", 1, &b) != 0 || b.failed) {
		free(b.text);
		errno = ENOMEM;
		return NULL;
	}
	return b.text;
}

char *td_labels_to_json(const struct td_labels *labels)
{
	json_t *obj = json_object();
	char *text = NULL;
	size_t i;

	for (i = 0; obj && i < labels->count; i++)
		if (json_object_set_new(obj, labels->items[i].key,
					json_string(labels->items[i].value)) < 0)
			break;
	if (obj && i == labels->count)
		text = dump_checked(obj);
	json_decref(obj);
	return text;
}

char *td_event_names_to_json(const struct td_run *run)
{
	json_t *array = json_array();
	char *text = NULL;
	size_t i;

	for (i = 0; array && i < run->nr_events; i++)
		if (json_array_append_new(array, json_string(run->event_names[i])) < 0)
			break;
	if (array && i == run->nr_events)
		text = dump_checked(array);
	json_decref(array);
	return text;
}

int td_run_json_failed(const struct td_run *run, char *err, size_t errlen)
{
	if (errno == ENOMEM) { /* json_string fails on bad UTF-8 and leaves errno */
		snprintf(err, errlen, "out of memory storing run %s; free memory and retry", run->id);
		return -ENOMEM;
	}
	snprintf(err, errlen, "cannot store run %s: a label or event name is not UTF-8 text; "
		 "give labels as UTF-8", run->id);
	return -EINVAL;
}

/*
 * Stored JSON as jansson loads it; *ret -ENOMEM when it failed for want
 * of memory, which is no damage to the store, else -EIO. jansson reports
 * an allocation that fails inside its lexer as a syntax error, so errno,
 * which malloc sets, tells the two apart.
 */
static json_t *load_stored_json(const char *text, int *ret)
{
	json_t *json;

	errno = 0;
	json = text ? json_loads(text, 0, NULL) : NULL;
	*ret = json ? 0 : text && errno == ENOMEM ? -ENOMEM : -EIO;
	return json;
}

int td_labels_from_json(const char *text, struct td_labels *labels)
{
	int ret;
	json_t *obj = load_stored_json(text, &ret);
	const char *key;
	json_t *value;

	if (obj && !json_is_object(obj))
		ret = -EIO;

	json_object_foreach(obj, key, value) {
		if (!json_is_string(value))
			ret = -EIO;
		else if (td_labels_set(labels, key, json_string_value(value)) < 0)
			ret = -ENOMEM;
		if (ret < 0)
			break;
	}
	json_decref(obj);
	return ret;
}

int td_event_names_from_json(const char *text, struct td_run *run)
{
	int ret;
	json_t *array = load_stored_json(text, &ret);
	size_t n = json_array_size(array);

	if (array && (!json_is_array(array) || n > TD_MAX_EVENTS))
		ret = -EIO;

	for (size_t i = 0; ret == 0 && i < n; i++) {
		const char *name = json_string_value(json_array_get(array, i));

		if (!name)
			ret = -EIO;
		else if (!(run->event_names[i] = strdup(name)))
			ret = -ENOMEM;
		else
			run->nr_events = i + 1;
	}
	json_decref(array);
	return ret;
}

char *td_frame_list_to_text(const uint32_t *frames, uint32_t nr)
{
	size_t len = 0, cap = (size_t)nr * 11 + 1; /* ten digits and a comma each */
	char *text = malloc(cap);

	if (!text)
		return NULL;
	text[0] = '\0';
	for (uint32_t i = 0; i < nr; i++)
		len += (size_t)snprintf(text + len, cap - len, "%s%" PRIu32, i ? "," : "", frames[i]);
	return text;
}

int td_frame_list_from_text(const char *text, size_t nr_frames, uint32_t **frames, uint32_t *nr)
{
	size_t count = 0, cap;
	const char *p = text;
	uint32_t *out;

	*frames = NULL;
	*nr = 0;
	if (!text)
		return -EIO;
	cap = 1;
	for (const char *c = text; *c; c++)
		cap += *c == ',';
	out = malloc(cap * sizeof(*out));
	if (!out)
		return -ENOMEM;
	while (*p) {
		char *end;
		unsigned long long index;

		if (*p < '0' || *p > '9')
			break;
		errno = 0;
		index = strtoull(p, &end, 10);
		if (errno || index >= nr_frames || count == cap)
			break;
		out[count++] = (uint32_t)index;
		p = end;
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			break;
	}
	if (*p) {
		free(out);
		return -EIO;
	}
	*frames = out;
	*nr = (uint32_t)count;
	return 0;
}
