// SPDX-License-Identifier: BSD-3-Clause
/*
 * The questions of query.h. Storage hands over the whole-run metric rows
 * of the matching runs (td_store_read_metrics); everything else is worked
 * out here, so every backend gives the same answers.
 *
 * The rows of one run are split into samples by scope key; rows of one
 * node (and thread name, when comparing per thread name) across samples
 * are gathered into a series, which the tree, the bottlenecks and the
 * comparison are built from.
 */
#include <errno.h>
#include <math.h>
#include <search.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array.h"
#include "engine.h"
#include "explain.h"
#include "parse.h"
#include "query.h"
#include "query_internal.h"

#define DEFAULT_ALPHA 0.05
#define THREAD_COLUMNS_LEVEL 1 /* the columns of td_query_threads without max_level */

/* ---- small helpers ---- */

const char *td_node_name(const char *path)
{
	const char *dot = strrchr(path, '.');

	return dot ? dot + 1 : path;
}

bool td_metric_higher_is_better(const char *path)
{
	static const char retiring[] = "Retiring";
	size_t n = sizeof(retiring) - 1;

	return strncmp(path, retiring, n) == 0 && (path[n] == '\0' || path[n] == '.');
}

/* path is node, or ends with ".node". */
static bool path_matches(const char *path, const char *node)
{
	size_t len = strlen(path), n = strlen(node);

	return strcmp(path, node) == 0 ||
	       (len > n && path[len - n - 1] == '.' && strcmp(path + len - n, node) == 0);
}

static bool is_descendant(const char *path, const char *ancestor)
{
	size_t n = strlen(ancestor);

	return strncmp(path, ancestor, n) == 0 && path[n] == '.';
}

int td_query_no_memory(char *err, size_t errlen)
{
	snprintf(err, errlen, "out of memory answering the query; free memory and retry");
	return -ENOMEM;
}

static bool is_tid(const char *text)
{
	return text[0] && strspn(text, "0123456789") == strlen(text);
}

/* Values sort largest first, NaN last. */
static int compare_desc(double x, double y)
{
	if (isnan(x) || isnan(y))
		return isnan(x) - isnan(y);
	return (x < y) - (x > y);
}

/* ---- which rows a question reads ---- */

void td_query_choose_scope(const struct td_query *q, struct scope_choice *c)
{
	memset(c, 0, sizeof(*c));
	c->filter.scope = TD_SCOPE_PROCESS;
	c->filter.min_level = 1;
	c->filter.max_level = q->max_level;
	if (!q->thread)
		return;
	if (is_tid(q->thread)) {
		c->filter.scope = TD_SCOPE_THREAD;
		c->filter.scope_key = q->thread;
	} else {
		td_thread_group_name(q->thread, c->group, sizeof(c->group));
		c->filter.scope = TD_SCOPE_GROUP;
		c->filter.scope_key = c->group;
	}
	snprintf(c->described, sizeof(c->described), " for thread %s", c->filter.scope_key);
}

/* No run matches, or none of them has Top-Down rows (query_internal.h). */
int td_query_nothing_found(struct td_store *store, const struct td_run_filter *runs,
			   const char *side, const char *scope, char *err, size_t errlen)
{
	struct td_run_filter one = *runs;
	struct td_run_summary *found = NULL;
	size_t count = 0;
	int ret;

	one.limit = 1;
	ret = td_store_list_runs(store, &one, &found, &count, err, errlen);
	if (ret < 0)
		return ret;
	td_run_summaries_free(found, count);
	if (!count)
		snprintf(err, errlen, "no stored run matches %s; 'topdown list' with the same "
			 "filters shows what is there", side);
	else
		snprintf(err, errlen, "the runs matching %s have no Top-Down metrics%s; runs "
			 "collected without a hardware PMU have none ('topdown import' adds runs "
			 "from perf stat counts)", side, scope);
	return TD_QUERY_NOTHING;
}

/* ---- selecting runs ---- */

void td_run_selection_init(struct td_run_selection *sel)
{
	memset(sel, 0, sizeof(*sel));
	td_labels_init(&sel->labels);
}

void td_run_selection_release(struct td_run_selection *sel)
{
	td_labels_free(&sel->labels);
}

int td_run_selection_filter(struct td_run_selection *sel, struct td_store *store,
			    struct td_run_filter *filter, char *err, size_t errlen)
{
	int ret;

	*filter = (struct td_run_filter){ .labels = &sel->labels, .process = sel->process };
	if (sel->last_ns)
		filter->since_ns = td_now_minus_ns(sel->last_ns);
	if (!sel->run_id)
		return 0;
	ret = td_store_resolve_run_id(store, sel->run_id, sel->resolved_id, err, errlen);
	if (ret == 0)
		filter->run_id = sel->resolved_id;
	return ret;
}

/* ---- samples: the rows of one run for one scope key ---- */

struct sample {
	const struct td_run_metrics *run;
	const char *key;
	const struct td_metric_row **rows; /* written order */
	size_t nr_rows;
};

struct samples {
	struct td_run_metrics *runs;
	size_t nr_runs;
	const struct td_metric_row **rows; /* every row, grouped by sample */
	struct sample *items;
	size_t count;
};

/* By scope key, then written order (the rows are one array). */
static int compare_row_keys(const void *a, const void *b)
{
	const struct td_metric_row *x = *(const struct td_metric_row *const *)a;
	const struct td_metric_row *y = *(const struct td_metric_row *const *)b;
	int c = strcmp(x->scope_key, y->scope_key);

	return c ? c : (x > y) - (x < y);
}

static int split_samples(struct samples *s)
{
	size_t total = 0, at = 0;

	for (size_t i = 0; i < s->nr_runs; i++)
		total += s->runs[i].nr_rows;
	s->rows = calloc(total + 1, sizeof(*s->rows));
	s->items = calloc(total + 1, sizeof(*s->items)); /* a sample has a row at least */
	if (!s->rows || !s->items)
		return -ENOMEM;
	for (size_t i = 0; i < s->nr_runs; i++) {
		const struct td_run_metrics *run = &s->runs[i];
		const struct td_metric_row **first = s->rows + at;

		for (size_t j = 0; j < run->nr_rows; j++)
			first[j] = &run->rows[j];
		qsort(first, run->nr_rows, sizeof(*first), compare_row_keys);
		for (size_t j = 0; j < run->nr_rows; j++) {
			if (j == 0 || strcmp(first[j]->scope_key, first[j - 1]->scope_key))
				s->items[s->count++] = (struct sample){
					.run = run, .key = first[j]->scope_key, .rows = first + j,
				};
			s->items[s->count - 1].nr_rows++;
		}
		at += run->nr_rows;
	}
	return 0;
}

static void samples_free(struct samples *s)
{
	td_run_metrics_free(s->runs, s->nr_runs);
	free(s->rows);
	free(s->items);
}

/* The samples of filter's rows of the runs; -ENOENT (err saying why) when
 * there are none. side names the runs in that message. */
static int load_samples(struct td_store *store, const struct td_run_filter *runs,
			const struct scope_choice *scope, const char *side, struct samples *s,
			char *err, size_t errlen)
{
	int ret;

	memset(s, 0, sizeof(*s));
	ret = td_store_read_metrics(store, runs, &scope->filter, &s->runs, &s->nr_runs, err,
				    errlen);
	if (ret == 0 && split_samples(s) < 0)
		ret = td_query_no_memory(err, errlen);
	if (ret == 0 && s->count == 0)
		ret = td_query_nothing_found(store, runs, side, scope->described, err, errlen);
	if (ret < 0)
		samples_free(s);
	return ret;
}

/* ---- series: one node across samples ---- */

struct series {
	char *key;          /* the index key: path, or group '\x1f' path */
	char *group;        /* NULL unless grouped by thread name */
	char *path, *parent;
	int level;
	double *values;     /* one per row, NaN included */
	size_t nr_rows, cap;
	size_t nr_crossed;
	double confidence;  /* the lowest that is a number */
	bool low_confidence;
	uint64_t counted_ns; /* summed */
};

struct series_table {
	struct series *items; /* in the order first seen */
	size_t count, cap;
	struct hsearch_data index; /* key -> position in items */
	bool indexed;
};

static int table_init(struct series_table *t, size_t capacity)
{
	memset(t, 0, sizeof(*t));
	/* A hash table does not grow: room for every row, at most half full. */
	if (!hcreate_r(2 * capacity + 16, &t->index))
		return -ENOMEM;
	t->indexed = true;
	return 0;
}

static void table_free(struct series_table *t)
{
	for (size_t i = 0; i < t->count; i++) {
		struct series *s = &t->items[i];

		free(s->key);
		free(s->group);
		free(s->path);
		free(s->parent);
		free(s->values);
	}
	free(t->items);
	if (t->indexed)
		hdestroy_r(&t->index);
}

static char *series_key(const char *group, const char *path)
{
	char *key;

	if (!group)
		return strdup(path);
	return asprintf(&key, "%s\x1f%s", group, path) < 0 ? NULL : key;
}

static struct series *table_find(struct series_table *t, const char *key)
{
	ENTRY item = { .key = (char *)key }, *found;

	return hsearch_r(item, FIND, &found, &t->index) ? &t->items[(uintptr_t)found->data]
							: NULL;
}

/* The series of row's node (in group), created when new; NULL: no memory. */
static struct series *table_get(struct series_table *t, const char *group,
				const struct td_metric_row *row)
{
	char *key = series_key(group, row->path);
	struct series *s = key ? table_find(t, key) : NULL, *grown;
	ENTRY item = { .key = key, .data = (void *)(uintptr_t)t->count }, *entered;

	if (!key || s) {
		free(key);
		return s;
	}
	grown = td_grow(t->items, &t->cap, t->count, sizeof(*grown));
	if (!grown) {
		free(key);
		return NULL;
	}
	t->items = grown;
	s = &t->items[t->count];
	*s = (struct series){
		.key = key, .group = group ? strdup(group) : NULL, .path = strdup(row->path),
		.parent = row->parent ? strdup(row->parent) : NULL, .level = row->level,
		.confidence = NAN,
	};
	t->count++; /* freed with the table from here on */
	if (!s->path || (group && !s->group) || (row->parent && !s->parent) ||
	    !hsearch_r(item, ENTER, &entered, &t->index))
		return NULL;
	return s;
}

static int series_add(struct series *s, double value, bool crossed, double confidence,
		      uint64_t counted_ns)
{
	double *grown = td_grow(s->values, &s->cap, s->nr_rows, sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	s->values = grown;
	s->values[s->nr_rows++] = value;
	s->nr_crossed += crossed;
	s->counted_ns += counted_ns;
	if (!isnan(confidence) && (isnan(s->confidence) || confidence < s->confidence))
		s->confidence = confidence;
	s->low_confidence |= td_metric_low_confidence(confidence);
	return 0;
}

static int table_add_row(struct series_table *t, const char *group,
			 const struct td_metric_row *row)
{
	struct series *s = table_get(t, group, row);

	return s ? series_add(s, row->value, row->threshold_crossed, row->confidence, row->counted_ns) :
		   -ENOMEM;
}

static size_t total_rows(const struct samples *set)
{
	size_t rows = 0;

	for (size_t i = 0; i < set->count; i++)
		rows += set->items[i].nr_rows;
	return rows;
}

/* Every row of every sample, grouped by sample key when by_key. */
static int table_of_samples(const struct samples *set, bool by_key, struct series_table *t)
{
	int ret = table_init(t, total_rows(set));

	for (size_t i = 0; ret == 0 && i < set->count; i++) {
		const struct sample *sm = &set->items[i];

		for (size_t j = 0; ret == 0 && j < sm->nr_rows; j++)
			ret = table_add_row(t, by_key ? sm->key : NULL, sm->rows[j]);
	}
	return ret;
}

/* ---- tree and funnel ---- */

struct tree_builder {
	const struct series_table *table;
	size_t top_n;
	bool *emitted;
	struct td_tree *tree;
};

/* Whether series s hangs under parent (NULL: the roots, which are the
 * nodes whose parent is not in the table). */
static bool child_of(const struct tree_builder *b, const struct series *s, const char *parent)
{
	if (!parent)
		return !s->parent || !table_find((struct series_table *)b->table, s->parent);
	return s->parent && strcmp(s->parent, parent) == 0;
}

static int emit_node(struct tree_builder *b, size_t i)
{
	const struct series *s = &b->table->items[i];
	struct td_tree_node *node = &b->tree->nodes[b->tree->nr_nodes];
	struct td_sample_stats st;

	td_sample_describe(s->values, s->nr_rows, &st);
	*node = (struct td_tree_node){
		.path = strdup(s->path), .level = s->level, .value = st.mean, .min = st.min,
		.max = st.max, .nr_values = st.n, .nr_crossed = s->nr_crossed,
		.crossed = 2 * s->nr_crossed > st.n, .confidence = s->confidence,
		.low_confidence = s->low_confidence, .useful = td_metric_higher_is_better(s->path),
		.counted_ns = s->counted_ns,
	};
	if (!node->path)
		return -ENOMEM;
	node->name = td_node_name(node->path);
	b->tree->nr_nodes++;
	b->emitted[i] = true;
	return 0;
}

/* The mean of series i, for picking the top_n largest children. */
static double series_mean(const struct series_table *t, size_t i)
{
	struct td_sample_stats st;

	td_sample_describe(t->items[i].values, t->items[i].nr_rows, &st);
	return st.mean;
}

/* Marks in keep[] the top_n of the n children (all when top_n is 0). */
static void keep_largest(const struct tree_builder *b, const size_t *children, size_t n,
			 bool *keep)
{
	for (size_t i = 0; i < n; i++) {
		size_t larger = 0;
		double mine = series_mean(b->table, children[i]);

		for (size_t j = 0; b->top_n && j < n; j++) {
			int c = compare_desc(series_mean(b->table, children[j]), mine);

			larger += c < 0 || (c == 0 && j < i);
		}
		keep[i] = !b->top_n || larger < b->top_n;
	}
}

/* Emits the children of parent depth first, in the order first seen. */
static int emit_children(struct tree_builder *b, const char *parent)
{
	const struct series_table *t = b->table;
	size_t *children = calloc(t->count + 1, sizeof(*children)), n = 0;
	bool *keep = calloc(t->count + 1, sizeof(*keep));
	int ret = children && keep ? 0 : -ENOMEM;

	for (size_t i = 0; ret == 0 && i < t->count; i++)
		if (!b->emitted[i] && child_of(b, &t->items[i], parent))
			children[n++] = i;
	if (ret == 0)
		keep_largest(b, children, n, keep);
	for (size_t i = 0; ret == 0 && i < n; i++) {
		/* The emitted check stops malformed parents from looping. */
		if (!keep[i] || b->emitted[children[i]])
			continue;
		ret = emit_node(b, children[i]);
		if (ret == 0)
			ret = emit_children(b, t->items[children[i]].path);
	}
	free(children);
	free(keep);
	return ret;
}

static void tree_totals(struct td_tree *tree)
{
	tree->useful = NAN;
	tree->wasted = 0;
	for (size_t i = 0; i < tree->nr_nodes; i++) {
		const struct td_tree_node *n = &tree->nodes[i];

		if (n->level != 1 || isnan(n->value))
			continue;
		if (n->useful)
			tree->useful = n->value;
		else
			tree->wasted += n->value;
	}
}

static int build_tree(const struct series_table *table, size_t top_n, struct td_tree *tree)
{
	struct tree_builder b = { .table = table, .top_n = top_n, .tree = tree };
	int ret;

	tree->nodes = calloc(table->count + 1, sizeof(*tree->nodes));
	b.emitted = calloc(table->count + 1, sizeof(*b.emitted));
	ret = tree->nodes && b.emitted ? emit_children(&b, NULL) : -ENOMEM;
	free(b.emitted);
	tree_totals(tree);
	return ret;
}

void td_tree_free(struct td_tree *tree)
{
	if (!tree)
		return;
	for (size_t i = 0; i < tree->nr_nodes; i++)
		free(tree->nodes[i].path);
	free(tree->nodes);
	free(tree);
}

int td_tree_of_rows(const struct td_metric_row *rows, size_t n, size_t top_n, struct td_tree *tree)
{
	struct series_table table = { 0 };
	int ret = table_init(&table, n);

	for (size_t i = 0; ret == 0 && i < n; i++)
		ret = table_add_row(&table, NULL, &rows[i]);
	if (ret == 0)
		ret = build_tree(&table, top_n, tree);
	table_free(&table);
	return ret;
}

int td_query_tree(struct td_store *store, const struct td_query *q, struct td_tree **out,
		  char *err, size_t errlen)
{
	struct scope_choice scope;
	struct series_table table = { 0 };
	struct samples set;
	struct td_tree *tree = NULL;
	int ret;

	*out = NULL;
	if (q->pooled)
		return td_query_pooled_tree(store, q, out, err, errlen);
	td_query_choose_scope(q, &scope);
	ret = load_samples(store, &q->runs, &scope, "the filters", &set, err, errlen);
	if (ret < 0)
		return ret;
	ret = table_of_samples(&set, false, &table);
	if (ret == 0 && !(tree = calloc(1, sizeof(*tree))))
		ret = -ENOMEM;
	if (ret == 0) {
		tree->nr_runs = set.nr_runs;
		tree->nr_samples = set.count;
		ret = build_tree(&table, q->top_n, tree);
	}
	table_free(&table);
	samples_free(&set);
	if (ret < 0) {
		td_tree_free(tree);
		return td_query_no_memory(err, errlen);
	}
	*out = tree;
	return 0;
}

/* ---- bottlenecks ---- */

/* A crossing row no crossing row of the sample lies under. */
static bool is_bottleneck(const struct sample *sm, const struct td_metric_row *row)
{
	if (!row->threshold_crossed)
		return false;
	for (size_t i = 0; i < sm->nr_rows; i++)
		if (sm->rows[i]->threshold_crossed && is_descendant(sm->rows[i]->path, row->path))
			return false;
	return true;
}

static int compare_bottlenecks(const void *a, const void *b)
{
	const struct td_bottleneck *x = a, *y = b;

	if (x->nr_samples != y->nr_samples)
		return x->nr_samples < y->nr_samples ? 1 : -1;
	return compare_desc(x->value, y->value) ?: strcmp(x->path, y->path);
}

/* Appends one bottleneck to out, whose items have room for it. */
static int add_bottleneck(struct td_bottlenecks *out, const char *path, int level, double value,
			  size_t nr_samples, double confidence, bool low_confidence)
{
	struct td_bottleneck *b = &out->items[out->count];

	*b = (struct td_bottleneck){
		.path = strdup(path), .level = level, .value = value, .nr_samples = nr_samples,
		.confidence = confidence, .low_confidence = low_confidence,
	};
	if (!b->path)
		return -ENOMEM;
	b->name = td_node_name(b->path);
	out->count++;
	return 0;
}

/* Most frequent first, then largest; the top_n of them (0: all). */
static void rank_bottlenecks(struct td_bottlenecks *out, size_t top_n)
{
	qsort(out->items, out->count, sizeof(*out->items), compare_bottlenecks);
	while (top_n && out->count > top_n)
		free(out->items[--out->count].path);
}

/*
 * From the rows themselves, for a store that leaves the adding up to us:
 * the deepest crossing rows of every sample, one series per path.
 */
static int bottlenecks_of_rows(struct td_store *store, const struct td_query *q,
			       const struct scope_choice *scope, struct td_bottlenecks *out,
			       char *err, size_t errlen)
{
	struct series_table table = { 0 };
	struct samples set;
	int ret;

	ret = load_samples(store, &q->runs, scope, "the filters", &set, err, errlen);
	if (ret < 0)
		return ret;
	ret = table_init(&table, total_rows(&set));
	for (size_t i = 0; ret == 0 && i < set.count; i++) {
		const struct sample *sm = &set.items[i];

		for (size_t j = 0; ret == 0 && j < sm->nr_rows; j++)
			if (is_bottleneck(sm, sm->rows[j]))
				ret = table_add_row(&table, NULL, sm->rows[j]);
	}
	out->nr_runs = set.nr_runs;
	out->nr_samples = set.count;
	if (ret == 0 && !(out->items = calloc(table.count + 1, sizeof(*out->items))))
		ret = -ENOMEM;
	for (size_t i = 0; ret == 0 && i < table.count; i++) {
		const struct series *s = &table.items[i];
		struct td_sample_stats st;

		td_sample_describe(s->values, s->nr_rows, &st);
		ret = add_bottleneck(out, s->path, s->level, st.mean, s->nr_rows, s->confidence,
				     s->low_confidence);
	}
	table_free(&table);
	samples_free(&set);
	return ret < 0 ? td_query_no_memory(err, errlen) : 0;
}

/*
 * From what the store added up where the rows are. The mean is the sum
 * over the count, as td_sample_describe() has it from the same values in
 * the same order; a NaN confidence counts as low (td_metric_low_confidence),
 * so the lowest number decides only when there was none.
 */
static int bottlenecks_of_sums(const struct td_crossing_sums *sums, struct td_bottlenecks *out)
{
	int ret = 0;

	out->nr_runs = sums->nr_runs;
	out->nr_samples = sums->nr_samples;
	out->items = calloc(sums->count + 1, sizeof(*out->items));
	if (!out->items)
		return -ENOMEM;
	for (size_t i = 0; ret == 0 && i < sums->count; i++) {
		const struct td_crossing_sum *c = &sums->items[i];
		double mean = c->nr_values ? c->sum / (double)c->nr_values : NAN;

		ret = add_bottleneck(out, c->path, c->level, mean, c->nr_rows, c->min_confidence,
				     c->nan_confidence || td_metric_low_confidence(c->min_confidence));
	}
	return ret;
}

void td_bottlenecks_free(struct td_bottlenecks *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->count; i++)
		free(b->items[i].path);
	free(b->items);
	free(b);
}

/*
 * A store that can (PostgreSQL) adds the deepest crossing rows up where
 * they are: over thousands of runs, sending every row to be added here
 * took longer than the rest of the question.
 */
int td_query_bottlenecks(struct td_store *store, const struct td_query *q,
			 struct td_bottlenecks **out, char *err, size_t errlen)
{
	struct td_crossing_sums *sums = NULL;
	struct td_bottlenecks *result;
	struct scope_choice scope;
	int ret;

	*out = NULL;
	if (!(result = calloc(1, sizeof(*result))))
		return td_query_no_memory(err, errlen);
	td_query_choose_scope(q, &scope);
	ret = td_store_sum_deepest_crossings(store, &q->runs, &scope.filter, &sums, err, errlen);
	if (ret == -EOPNOTSUPP)
		ret = bottlenecks_of_rows(store, q, &scope, result, err, errlen);
	else if (ret == 0 && !sums->nr_samples)
		ret = td_query_nothing_found(store, &q->runs, "the filters", scope.described, err, errlen);
	else if (ret == 0 && bottlenecks_of_sums(sums, result) < 0)
		ret = td_query_no_memory(err, errlen);
	td_crossing_sums_free(sums);
	if (ret < 0) {
		td_bottlenecks_free(result);
		return ret;
	}
	rank_bottlenecks(result, q->top_n);
	*out = result;
	return 0;
}

/* ---- runs where a node reaches a value ---- */

static void match_release(struct td_run_match *m)
{
	td_run_summary_release(&m->run);
	free(m->scope_key);
	free(m->path);
}

void td_run_matches_free(struct td_run_matches *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->count; i++)
		match_release(&m->items[i]);
	free(m->items);
	free(m);
}

static int compare_matches(const void *a, const void *b)
{
	const struct td_run_match *x = a, *y = b;

	return compare_desc(x->value, y->value) ?: strcmp(x->run.id, y->run.id);
}

static int add_match(struct td_run_matches *m, const struct td_run_summary *run,
		     const struct td_metric_row *row)
{
	struct td_run_match *match = &m->items[m->count];

	*match = (struct td_run_match){
		.scope_key = strdup(row->scope_key), .path = strdup(row->path),
		.value = row->value, .crossed = row->threshold_crossed,
		.confidence = row->confidence,
		.low_confidence = td_metric_low_confidence(row->confidence),
	};
	if (td_run_summary_copy(&match->run, run) < 0) {
		free(match->scope_key);
		free(match->path);
		return -ENOMEM;
	}
	m->count++;
	return match->scope_key && match->path ? 0 : -ENOMEM;
}

int td_query_runs_above(struct td_store *store, const struct td_query *q, const char *node,
			double min_value, struct td_run_matches **out, char *err, size_t errlen)
{
	struct td_run_matches *m = calloc(1, sizeof(*m));
	struct td_run_metrics *runs = NULL;
	struct scope_choice scope;
	size_t nr_runs = 0, total = 0;
	int ret;

	*out = NULL;
	if (!m)
		return td_query_no_memory(err, errlen);
	if ((ret = td_query_check_node(node, err, errlen))) {
		td_run_matches_free(m);
		return ret;
	}
	td_query_choose_scope(q, &scope);
	scope.filter.node = node;
	scope.filter.min_value = min_value;
	/* No run reaching the value is an answer, not an error. */
	ret = td_store_read_metrics(store, &q->runs, &scope.filter, &runs, &nr_runs, err, errlen);
	for (size_t i = 0; i < nr_runs; i++)
		total += runs[i].nr_rows;
	if (ret == 0 && !(m->items = calloc(total + 1, sizeof(*m->items))))
		ret = td_query_no_memory(err, errlen);
	for (size_t i = 0; ret == 0 && i < nr_runs; i++)
		for (size_t j = 0; ret == 0 && j < runs[i].nr_rows; j++)
			if (!isnan(runs[i].rows[j].value) && add_match(m, &runs[i].run,
								     &runs[i].rows[j]) < 0)
				ret = td_query_no_memory(err, errlen);
	td_run_metrics_free(runs, nr_runs);
	if (ret < 0) {
		td_run_matches_free(m);
		return ret;
	}
	qsort(m->items, m->count, sizeof(*m->items), compare_matches);
	while (q->top_n && m->count > q->top_n)
		match_release(&m->items[--m->count]);
	*out = m;
	return 0;
}

/* ---- threads of one run ---- */

static void line_release(struct td_thread_line *line)
{
	free(line->key);
	free(line->values);
	free(line->low_confidence);
}

static void lines_free(struct td_thread_line *lines, size_t n)
{
	for (size_t i = 0; lines && i < n; i++)
		line_release(&lines[i]);
	free(lines);
}

void td_thread_breakdown_free(struct td_thread_breakdown *t)
{
	if (!t)
		return;
	td_run_summary_release(&t->run);
	for (size_t i = 0; i < t->nr_columns; i++)
		free(t->columns[i]);
	free(t->columns);
	lines_free(t->threads, t->nr_threads);
	lines_free(t->groups, t->nr_groups);
	free(t);
}

/* The whole-run rows the breakdown shows. */
static bool breakdown_row(const struct td_metric_row *m, int max_level)
{
	return m->interval_seq == -1 && (m->scope == TD_SCOPE_THREAD || m->scope == TD_SCOPE_GROUP) &&
	       m->level >= 1 && m->level <= max_level;
}

static ssize_t column_of(const struct td_thread_breakdown *t, const char *path)
{
	for (size_t i = 0; i < t->nr_columns; i++)
		if (strcmp(t->columns[i], path) == 0)
			return (ssize_t)i;
	return -1;
}

static int add_columns(struct td_thread_breakdown *t, const struct td_run *run, int max_level)
{
	t->columns = calloc(run->nr_metrics + 1, sizeof(*t->columns));
	if (!t->columns)
		return -ENOMEM;
	for (size_t i = 0; i < run->nr_metrics; i++) {
		const struct td_metric_row *m = &run->metrics[i];

		if (!breakdown_row(m, max_level) || column_of(t, m->path) >= 0)
			continue;
		if (!(t->columns[t->nr_columns] = strdup(m->path)))
			return -ENOMEM;
		t->nr_columns++;
	}
	return 0;
}

static int line_init(struct td_thread_line *line, const char *key, size_t nr_columns)
{
	line->key = strdup(key);
	line->values = calloc(nr_columns + 1, sizeof(*line->values));
	line->low_confidence = calloc(nr_columns + 1, sizeof(*line->low_confidence));
	for (size_t i = 0; line->values && i < nr_columns; i++)
		line->values[i] = NAN;
	return line->key && line->values && line->low_confidence ? 0 : -ENOMEM;
}

static struct td_thread_line *find_line(struct td_thread_line *lines, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(lines[i].key, key) == 0)
			return &lines[i];
	return NULL;
}

/* Whether the breakdown keeps a thread (tid, comm) under q->thread. */
bool td_query_thread_wanted(const struct scope_choice *scope, const char *tid, const char *comm)
{
	char group[TD_COMM_LEN * 2];

	if (scope->filter.scope == TD_SCOPE_PROCESS)
		return true;
	if (scope->filter.scope == TD_SCOPE_THREAD)
		return strcmp(scope->filter.scope_key, tid) == 0;
	td_thread_group_name(comm, group, sizeof(group));
	return strcmp(scope->filter.scope_key, group) == 0;
}

/* One line per whole-run thread, and one per thread name with its on-CPU
 * time added up; both only for the threads q->thread keeps. */
static int add_lines(struct td_thread_breakdown *t, const struct td_run *run,
		     const struct scope_choice *scope)
{
	int ret = 0;

	t->threads = calloc(run->nr_threads + 1, sizeof(*t->threads));
	t->groups = calloc(run->nr_threads + 1, sizeof(*t->groups));
	if (!t->threads || !t->groups)
		return -ENOMEM;
	for (size_t i = 0; ret == 0 && i < run->nr_threads; i++) {
		const struct td_thread_row *th = &run->threads[i];
		struct td_thread_line *group;
		char tid[16], name[TD_COMM_LEN * 2];

		snprintf(tid, sizeof(tid), "%u", th->tid);
		if (!td_query_thread_wanted(scope, tid, th->comm))
			continue;
		td_thread_group_name(th->comm, name, sizeof(name));
		group = find_line(t->groups, t->nr_groups, name);
		if (!group) {
			group = &t->groups[t->nr_groups++];
			ret = line_init(group, name, t->nr_columns);
			snprintf(group->comm, sizeof(group->comm), "%.*s",
				 (int)sizeof(group->comm) - 1, name);
		}
		group->oncpu_ns += th->oncpu_ns;
		group->nr_threads++;
		if (ret == 0)
			ret = line_init(&t->threads[t->nr_threads], tid, t->nr_columns);
		snprintf(t->threads[t->nr_threads].comm, sizeof(th->comm), "%.*s",
			 (int)sizeof(th->comm) - 1, th->comm);
		t->threads[t->nr_threads].oncpu_ns = th->oncpu_ns;
		t->threads[t->nr_threads++].nr_threads = 1;
	}
	return ret;
}

static void fill_values(struct td_thread_breakdown *t, const struct td_run *run, int max_level)
{
	for (size_t i = 0; i < run->nr_metrics; i++) {
		const struct td_metric_row *m = &run->metrics[i];
		struct td_thread_line *line;
		ssize_t col;

		if (!breakdown_row(m, max_level))
			continue;
		line = m->scope == TD_SCOPE_THREAD ? find_line(t->threads, t->nr_threads, m->scope_key)
						   : find_line(t->groups, t->nr_groups, m->scope_key);
		col = column_of(t, m->path);
		if (!line || col < 0)
			continue;
		line->values[col] = m->value;
		line->low_confidence[col] = td_metric_low_confidence(m->confidence);
	}
}

/* By the values of column *arg (none when negative), then on-CPU time. */
static int compare_lines(const void *a, const void *b, void *arg)
{
	const struct td_thread_line *x = a, *y = b;
	ssize_t column = *(const ssize_t *)arg;
	int c = column >= 0 ? compare_desc(x->values[column], y->values[column]) : 0;

	if (c)
		return c;
	if (x->oncpu_ns != y->oncpu_ns)
		return x->oncpu_ns < y->oncpu_ns ? 1 : -1;
	return strcmp(x->key, y->key);
}

static ssize_t find_column(const struct td_thread_breakdown *t, const char *node)
{
	for (size_t i = 0; i < t->nr_columns; i++)
		if (path_matches(t->columns[i], node))
			return (ssize_t)i;
	return -1;
}

static int unknown_column(const struct td_thread_breakdown *t, const char *node,
			  char *err, size_t errlen)
{
	size_t used = (size_t)snprintf(err, errlen, "cannot sort by '%s': the columns are", node);

	for (size_t i = 0; i < t->nr_columns && used < errlen; i++)
		used += (size_t)snprintf(err + used, errlen - used, "%s %s", i ? "," : "",
					 t->columns[i]);
	if (used < errlen)
		snprintf(err + used, errlen - used, " (--level shows deeper ones)");
	return -EINVAL;
}

static void sort_lines(struct td_thread_line *lines, size_t *n, ssize_t column, size_t top_n)
{
	qsort_r(lines, *n, sizeof(*lines), compare_lines, &column);
	while (top_n && *n > top_n)
		line_release(&lines[--*n]);
}

/* The run the breakdown is about: q's run id, or the newest matching run
 * with per-thread rows, found by its per-thread-name rows (the engine
 * writes both; storage indexes the latter). */
static int breakdown_run(struct td_store *store, const struct td_query *q,
			 const struct scope_choice *scope, struct td_run **run,
			 char *err, size_t errlen)
{
	struct td_metric_filter any_thread = { .scope = TD_SCOPE_GROUP, .min_level = 1,
					       .max_level = 1 };
	struct td_run_filter newest = q->runs;
	struct td_run_metrics *found = NULL;
	size_t count = 0;
	int ret;

	if (q->runs.run_id)
		return td_store_read_run(store, q->runs.run_id, run, err, errlen);
	newest.limit = 1;
	ret = td_store_read_metrics(store, &newest, &any_thread, &found, &count, err, errlen);
	if (ret == 0 && count == 0)
		ret = td_query_nothing_found(store, &q->runs, "the filters", scope->described, err, errlen);
	if (ret == 0)
		ret = td_store_read_run(store, found[0].run.id, run, err, errlen);
	td_run_metrics_free(found, count);
	return ret;
}

int td_query_threads(struct td_store *store, const struct td_query *q, const char *sort_node,
		     struct td_thread_breakdown **out, char *err, size_t errlen)
{
	int max_level = q->max_level ? q->max_level : THREAD_COLUMNS_LEVEL;
	struct td_thread_breakdown *t = calloc(1, sizeof(*t));
	struct scope_choice scope;
	struct td_run *run = NULL;
	ssize_t column = -1;
	int ret;

	*out = NULL;
	if (!t)
		return td_query_no_memory(err, errlen);
	td_query_choose_scope(q, &scope);
	ret = sort_node ? td_query_check_node(sort_node, err, errlen) : 0;
	if (ret == 0)
		ret = breakdown_run(store, q, &scope, &run, err, errlen);
	if (ret == 0) {
		struct td_run_summary sum = {
			.started_ns = run->started_ns, .ended_ns = run->ended_ns,
			.process = run->process, .level = run->level, .collector = run->collector,
			.labels = run->labels, .dropped = run->dropped, .partial = run->partial,
			.nr_threads = run->nr_threads,
		};

		memcpy(sum.id, run->id, sizeof(sum.id));
		if (td_run_summary_copy(&t->run, &sum) < 0 || add_columns(t, run, max_level) < 0 ||
		    add_lines(t, run, &scope) < 0)
			ret = td_query_no_memory(err, errlen);
	}
	if (ret == 0 && t->nr_columns == 0) {
		snprintf(err, errlen, "run %s has no per-thread Top-Down metrics; runs collected "
			 "without a hardware PMU have none", run->id);
		ret = TD_QUERY_NOTHING;
	}
	if (ret == 0 && sort_node && (column = find_column(t, sort_node)) < 0)
		ret = unknown_column(t, sort_node, err, errlen);
	if (ret == 0) {
		fill_values(t, run, max_level);
		sort_lines(t->threads, &t->nr_threads, column, q->top_n);
		sort_lines(t->groups, &t->nr_groups, column, q->top_n);
	}
	td_run_free(run);
	if (ret < 0) {
		td_thread_breakdown_free(t);
		return ret;
	}
	*out = t;
	return 0;
}

/* ---- trend ---- */

void td_trend_free(struct td_trend *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->count; i++) {
		td_run_summary_release(&t->points[i].run);
		free(t->points[i].scope_key);
	}
	free(t->points);
	free(t->path);
	free(t);
}

static int add_point(struct td_trend *t, const struct sample *sm)
{
	const struct td_metric_row *row = sm->rows[0];
	struct td_trend_point *p = &t->points[t->count];

	*p = (struct td_trend_point){
		.scope_key = strdup(sm->key), .value = row->value,
		.low_confidence = td_metric_low_confidence(row->confidence),
	};
	if (td_run_summary_copy(&p->run, &sm->run->run) < 0) {
		free(p->scope_key);
		return -ENOMEM;
	}
	t->count++;
	if (!p->scope_key || (!t->path && !(t->path = strdup(row->path))))
		return -ENOMEM;
	return 0;
}

/* The points of the samples, oldest run first (storage gives the newest
 * first), the samples of one run in key order. */
static int trend_points(const struct samples *set, struct td_trend *t)
{
	int ret = 0;

	t->points = calloc(set->count + 1, sizeof(*t->points));
	if (!t->points)
		return -ENOMEM;
	for (size_t end = set->count; ret == 0 && end > 0;) {
		size_t first = end - 1;

		while (first > 0 && set->items[first - 1].run == set->items[end - 1].run)
			first--;
		for (size_t i = first; ret == 0 && i < end; i++)
			ret = add_point(t, &set->items[i]);
		end = first;
	}
	return ret;
}

/* Each point against the window of points before it. */
static void flag_anomalies(struct td_trend *t)
{
	double *history = malloc((t->window + 1) * sizeof(*history));

	for (size_t i = 0; history && i < t->count; i++) {
		struct td_trend_point *p = &t->points[i];
		size_t from = i > t->window ? i - t->window : 0;
		struct td_sample_stats st;

		for (size_t j = from; j < i; j++)
			history[j - from] = t->points[j].value;
		td_sample_describe(history, i - from, &st);
		p->mean = st.mean;
		p->sd = st.sd;
		p->deviation = NAN;
		if (st.n < TD_TREND_MIN_HISTORY || isnan(p->value))
			continue;
		if (st.sd > 0)
			p->deviation = (p->value - st.mean) / st.sd;
		else
			p->deviation = p->value == st.mean ? 0 : copysign(INFINITY, p->value - st.mean);
		p->anomaly = fabs(p->deviation) > t->sigma;
		t->nr_anomalies += p->anomaly;
	}
	free(history);
}

/* Keeps the newest top_n points. */
static void keep_newest(struct td_trend *t, size_t top_n)
{
	size_t drop = top_n && t->count > top_n ? t->count - top_n : 0;

	for (size_t i = 0; i < drop; i++) {
		t->nr_anomalies -= t->points[i].anomaly;
		td_run_summary_release(&t->points[i].run);
		free(t->points[i].scope_key);
	}
	memmove(t->points, t->points + drop, (t->count - drop) * sizeof(*t->points));
	t->count -= drop;
}

/*
 * A node no model knows is the user's mistake (with the explanation's
 * suggestions); a known one without stored rows is an empty answer.
 */
int td_query_check_node(const char *node, char *err, size_t errlen)
{
	const struct td_kb *kb = td_kb_load(err, errlen);
	const char *part = node;
	int ret = 0;

	if (!kb)
		return -EINVAL;
	do { /* each part of a dotted path is a node of its own */
		size_t len = strcspn(part, ".");
		char *name = strndup(part, len);
		struct td_explanation *x = NULL;

		if (!name)
			return td_query_no_memory(err, errlen);
		ret = td_explain_lookup(kb, name, NULL, &x, err, errlen);
		td_explanation_free(x);
		free(name);
		part += len;
	} while (ret == 0 && *part++ == '.');
	return ret == -ENOENT ? -EINVAL : ret; /* a usage error, not a missing thing */
}

int td_query_trend(struct td_store *store, const struct td_query *q, const char *node,
		   size_t window, double sigma, struct td_trend **out, char *err, size_t errlen)
{
	struct td_trend *t = calloc(1, sizeof(*t));
	struct scope_choice scope;
	struct samples set;
	char side[160];
	int ret;

	*out = NULL;
	if (!t)
		return td_query_no_memory(err, errlen);
	t->window = window ? window : 1;
	t->sigma = sigma;
	if ((ret = td_query_check_node(node, err, errlen))) {
		td_trend_free(t);
		return ret;
	}
	td_query_choose_scope(q, &scope);
	scope.filter.node = node;
	snprintf(side, sizeof(side), "the filters with metric '%s'", node);
	ret = load_samples(store, &q->runs, &scope, side, &set, err, errlen);
	if (ret < 0) {
		td_trend_free(t);
		return ret;
	}
	ret = trend_points(&set, t);
	samples_free(&set);
	if (ret < 0) {
		td_trend_free(t);
		return td_query_no_memory(err, errlen);
	}
	flag_anomalies(t);
	keep_newest(t, q->top_n);
	*out = t;
	return 0;
}

/* ---- compare ---- */

const char *td_change_name(enum td_change change)
{
	static const char *const names[] = {
		[TD_CHANGE_NONE] = "unchanged", [TD_CHANGE_REGRESSION] = "regression",
		[TD_CHANGE_IMPROVEMENT] = "improvement", [TD_CHANGE_ONLY_A] = "only-a",
		[TD_CHANGE_ONLY_B] = "only-b",
	};

	return names[change];
}

void td_comparison_free(struct td_comparison *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->count; i++) {
		free(c->items[i].group);
		free(c->items[i].path);
	}
	free(c->items);
	free(c);
}

/* What sorts first: regressions, improvements, the rest, one-sided. */
static int change_rank(enum td_change change)
{
	static const int rank[] = {
		[TD_CHANGE_REGRESSION] = 0, [TD_CHANGE_IMPROVEMENT] = 1, [TD_CHANGE_NONE] = 2,
		[TD_CHANGE_ONLY_A] = 3, [TD_CHANGE_ONLY_B] = 4,
	};

	return rank[change];
}

/* How large a change is: its effect size, or |delta| without one. */
static double magnitude(const struct td_metric_change *c)
{
	return fabs(isnan(c->effect_size) ? c->delta : c->effect_size);
}

static int compare_changes(const void *a, const void *b)
{
	const struct td_metric_change *x = a, *y = b;
	int c = change_rank(x->change) - change_rank(y->change);

	if (c)
		return c;
	c = compare_desc(magnitude(x), magnitude(y));
	if (c)
		return c;
	c = strcmp(x->group ? x->group : "", y->group ? y->group : "");
	return c ? c : strcmp(x->path, y->path);
}

static enum td_change classify(const struct td_metric_change *c, const struct td_compare_args *args)
{
	double alpha = args->alpha > 0 ? args->alpha : DEFAULT_ALPHA;
	bool worse;

	if (isnan(c->delta) || fabs(c->delta) < args->threshold || c->delta == 0)
		return TD_CHANGE_NONE;
	if (!isnan(c->p_value) && !(c->p_value < alpha))
		return TD_CHANGE_NONE;
	worse = (c->delta > 0) != c->higher_is_better;
	return worse ? TD_CHANGE_REGRESSION : TD_CHANGE_IMPROVEMENT;
}

/* One metric of the union: a and b (either may be NULL). */
static int add_change(struct td_comparison *out, const struct series *a, const struct series *b,
		      const struct td_compare_args *args)
{
	const struct series *any = a ? a : b;
	struct td_metric_change *c = &out->items[out->count];
	struct td_welch welch;

	*c = (struct td_metric_change){
		.group = any->group ? strdup(any->group) : NULL, .path = strdup(any->path),
		.level = any->level, .higher_is_better = td_metric_higher_is_better(any->path),
		.low_confidence = (a && a->low_confidence) || (b && b->low_confidence),
		.delta = NAN, .p_value = NAN, .effect_size = NAN,
	};
	out->count++;
	if (!c->path || (any->group && !c->group))
		return -ENOMEM;
	c->name = td_node_name(c->path);
	td_sample_describe(a ? a->values : NULL, a ? a->nr_rows : 0, &c->a);
	td_sample_describe(b ? b->values : NULL, b ? b->nr_rows : 0, &c->b);
	if (!a || !b) {
		c->change = a ? TD_CHANGE_ONLY_A : TD_CHANGE_ONLY_B;
		return 0;
	}
	c->delta = c->b.mean - c->a.mean;
	td_welch_t_test(&c->a, &c->b, &welch);
	c->p_value = welch.p;
	c->effect_size = td_cohens_d(&c->a, &c->b);
	c->change = classify(c, args);
	out->nr_regressions += c->change == TD_CHANGE_REGRESSION;
	out->nr_improvements += c->change == TD_CHANGE_IMPROVEMENT;
	return 0;
}

static int fill_changes(struct series_table *a, struct series_table *b,
			const struct td_compare_args *args, struct td_comparison *out)
{
	int ret = 0;

	out->items = calloc(a->count + b->count + 1, sizeof(*out->items));
	if (!out->items)
		return -ENOMEM;
	for (size_t i = 0; ret == 0 && i < a->count; i++)
		ret = add_change(out, &a->items[i], table_find(b, a->items[i].key), args);
	for (size_t i = 0; ret == 0 && i < b->count; i++)
		if (!table_find(a, b->items[i].key))
			ret = add_change(out, NULL, &b->items[i], args);
	if (ret < 0)
		return ret;
	qsort(out->items, out->count, sizeof(*out->items), compare_changes);
	while (args->top_n && out->count > args->top_n) {
		out->count--;
		free(out->items[out->count].group);
		free(out->items[out->count].path);
	}
	return 0;
}

/* A run on both sides makes the test meaningless. */
static int check_disjoint(const struct samples *a, const struct samples *b,
			  char *err, size_t errlen)
{
	for (size_t i = 0; i < a->nr_runs; i++)
		for (size_t j = 0; j < b->nr_runs; j++)
			if (strcmp(a->runs[i].run.id, b->runs[j].run.id) == 0) {
				snprintf(err, errlen, "run %s matches both sides; make the two "
					 "sides' filters exclude each other", a->runs[i].run.id);
				return -EINVAL;
			}
	return 0;
}

int td_compare(struct td_store *store, const struct td_compare_args *args,
	       struct td_comparison **out, char *err, size_t errlen)
{
	struct td_query scope_query = { .max_level = args->max_level };
	struct series_table ta = { 0 }, tb = { 0 };
	struct td_comparison *result = NULL;
	struct samples a, b;
	struct scope_choice scope;
	int ret;

	*out = NULL;
	td_query_choose_scope(&scope_query, &scope);
	if (args->by_thread_name)
		scope.filter.scope = TD_SCOPE_GROUP;
	ret = load_samples(store, &args->a, &scope, "side A", &a, err, errlen);
	if (ret < 0)
		return ret;
	ret = load_samples(store, &args->b, &scope, "side B", &b, err, errlen);
	if (ret < 0) {
		samples_free(&a);
		return ret;
	}
	ret = check_disjoint(&a, &b, err, errlen);
	if (ret == 0) {
		if (table_of_samples(&a, args->by_thread_name, &ta) < 0 ||
		    table_of_samples(&b, args->by_thread_name, &tb) < 0 ||
		    !(result = calloc(1, sizeof(*result))) ||
		    fill_changes(&ta, &tb, args, result) < 0)
			ret = td_query_no_memory(err, errlen);
	}
	if (result) {
		result->nr_runs_a = a.nr_runs;
		result->nr_runs_b = b.nr_runs;
	}
	table_free(&ta);
	table_free(&tb);
	samples_free(&a);
	samples_free(&b);
	if (ret < 0) {
		td_comparison_free(result);
		return ret;
	}
	*out = result;
	return 0;
}

/* ---- labels ---- */

/* One label of one run, pointing into the run summaries. */
struct label_pair {
	const char *key, *value;
};

/* By key, then value: the runs of one key=value come together. */
static int compare_pairs(const void *a, const void *b)
{
	const struct label_pair *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : strcmp(x->value, y->value);
}

/* Most runs first, then by value. */
static int compare_label_counts(const void *a, const void *b)
{
	const struct td_label_count *x = a, *y = b;

	if (x->nr_runs != y->nr_runs)
		return x->nr_runs < y->nr_runs ? 1 : -1;
	return strcmp(x->value, y->value);
}

/* Every label of every run, sorted; NULL without memory. */
static struct label_pair *label_pairs(const struct td_run_summary *runs, size_t nr_runs,
				      size_t *count)
{
	struct label_pair *pairs;
	size_t total = 0;

	for (size_t i = 0; i < nr_runs; i++)
		total += runs[i].labels.count;
	if (!(pairs = calloc(total + 1, sizeof(*pairs))))
		return NULL;
	*count = 0;
	for (size_t i = 0; i < nr_runs; i++)
		for (size_t l = 0; l < runs[i].labels.count; l++)
			pairs[(*count)++] = (struct label_pair){ runs[i].labels.items[l].key,
								 runs[i].labels.items[l].value };
	qsort(pairs, *count, sizeof(*pairs), compare_pairs);
	return pairs;
}

/* How many pairs from pairs[0] on share its key. */
static size_t same_key(const struct label_pair *pairs, size_t n)
{
	size_t run = 1;

	while (run < n && !strcmp(pairs[run].key, pairs[0].key))
		run++;
	return run;
}

/*
 * One key from its n pairs (n >= 1). A run carries a key once, so the
 * pairs count its runs. The values are counted while they point into the
 * summaries; only the top_n kept are copied.
 */
static int build_label_key(struct td_label_key *k, const struct label_pair *pairs, size_t n,
			   size_t top_n)
{
	struct td_label_count *values = calloc(n, sizeof(*values));
	size_t distinct = 0, kept;

	k->values = values;
	k->nr_runs = n;
	if (!values || !(k->key = strdup(pairs[0].key)))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || strcmp(pairs[i].value, pairs[i - 1].value))
			values[distinct++].value = (char *)pairs[i].value;
		values[distinct - 1].nr_runs++;
	}
	qsort(values, distinct, sizeof(*values), compare_label_counts);
	k->nr_values = distinct;
	kept = top_n && top_n < distinct ? top_n : distinct;
	for (; k->count < kept; k->count++)
		if (!(values[k->count].value = strdup(values[k->count].value)))
			return -ENOMEM; /* count: the copies made so far, which free frees */
	return 0;
}

/* The keys of the sorted pairs, or key alone, into set. */
static int build_label_set(const struct label_pair *pairs, size_t n, const char *key,
			   size_t top_n, struct td_label_set *set)
{
	size_t nr_keys = 0;

	for (size_t at = 0; at < n; at += same_key(pairs + at, n - at))
		nr_keys++;
	if (!(set->keys = calloc(nr_keys + 1, sizeof(*set->keys))))
		return -ENOMEM;
	for (size_t at = 0, run; at < n; at += run) {
		run = same_key(pairs + at, n - at);
		if (key && strcmp(pairs[at].key, key))
			continue;
		/* counted first: td_label_set_free() frees a key half built */
		if (build_label_key(&set->keys[set->count++], pairs + at, run, top_n) < 0)
			return -ENOMEM;
	}
	return 0;
}

static bool filters_runs(const struct td_run_filter *f)
{
	return f && ((f->labels && f->labels->count) || f->process || f->run_id || f->since_ns ||
		     f->before_ns);
}

/* No run carries key: which keys they do carry, as many as err holds. */
static int unknown_label_key(const struct label_pair *pairs, size_t n, const char *key,
			     bool filtered, char *err, size_t errlen)
{
	size_t used = (size_t)snprintf(err, errlen, "no run %scarries the label '%s'; ",
				       filtered ? "matching the filters " : "", key);

	if (!n && used < errlen)
		snprintf(err + used, errlen - used, "those runs have no labels");
	for (size_t at = 0; at < n && used < errlen; at += same_key(pairs + at, n - at))
		used += (size_t)snprintf(err + used, errlen - used, "%s%s", at ? ", " : "the keys "
					 "there are ", pairs[at].key);
	return -ENOENT;
}

int td_query_labels(struct td_store *store, const struct td_run_filter *filter, const char *key,
		    size_t top_n, struct td_label_set **out, char *err, size_t errlen)
{
	struct td_run_summary *runs = NULL;
	struct label_pair *pairs = NULL;
	struct td_label_set *set = NULL;
	size_t nr_runs = 0, nr_pairs = 0;
	int ret;

	*out = NULL;
	if (key && (ret = td_label_key_check(key, err, errlen)) < 0)
		return ret;
	ret = td_store_list_runs(store, filter, &runs, &nr_runs, err, errlen);
	if (ret < 0)
		return ret;
	if (!nr_runs) {
		if (filters_runs(filter))
			snprintf(err, errlen, "no stored run matches the filters; fewer filters (or "
				 "none) show the labels of more runs");
		else
			snprintf(err, errlen, "no run is stored yet; 'topdown collect' or 'topdown "
				 "import' adds runs");
		ret = TD_QUERY_NOTHING;
	} else if (!(pairs = label_pairs(runs, nr_runs, &nr_pairs)) ||
		   !(set = calloc(1, sizeof(*set))) ||
		   build_label_set(pairs, nr_pairs, key, top_n, set) < 0) {
		ret = td_query_no_memory(err, errlen);
	} else if (key && !set->count) {
		ret = unknown_label_key(pairs, nr_pairs, key, filters_runs(filter), err, errlen);
	}
	if (set)
		set->nr_runs = nr_runs;
	free(pairs);
	td_run_summaries_free(runs, nr_runs);
	if (ret < 0) {
		td_label_set_free(set);
		return ret;
	}
	*out = set;
	return 0;
}

void td_label_set_free(struct td_label_set *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->count; i++) {
		struct td_label_key *k = &set->keys[i];

		for (size_t j = 0; j < k->count; j++)
			free(k->values[j].value);
		free(k->values);
		free(k->key);
	}
	free(set->keys);
	free(set);
}
