// SPDX-License-Identifier: BSD-3-Clause
/* One interval's threads as `topdown top` lays them out (top_view.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "thread_table.h"
#include "tma_render.h"
#include "top_view.h"

#define NAME_WIDTH 16
#define EVENT_WIDTH 14
#define NODE_WIDTH 16

static const char *const fixed_titles[TD_TOP_FIXED_COLUMNS] = {
	"NAME", "TID", "ONCPU%", "VOL-SW", "INVOL-SW", "MIGR", "RUNQ-WAIT",
};
static const int fixed_widths[TD_TOP_FIXED_COLUMNS] = { NAME_WIDTH, 8, 7, 8, 8, 6, 10 };

int td_top_view_init(struct td_top_view *v, const char *const *event_names, size_t nr_events,
		     const struct td_engine *engine)
{
	memset(v, 0, sizeof(*v));
	v->event_names = event_names;
	v->nr_events = nr_events;
	v->sort_column = TD_TOP_COL_ONCPU;
	if (!engine)
		return 0;
	v->engine = engine;
	for (size_t i = 0; i < td_engine_output_count(engine) && v->nr_nodes < TD_TOP_MAX_NODES; i++) {
		const struct td_metric_def *def = td_engine_output(engine, i);

		if (def->kind == TD_METRIC_TREE)
			v->node_output[v->nr_nodes++] = i;
	}
	v->values = calloc(td_engine_scratch_size(engine) + 1, sizeof(*v->values));
	v->outputs = calloc(td_engine_output_count(engine) + 1, sizeof(*v->outputs));
	v->sum = calloc(nr_events + 1, sizeof(*v->sum));
	if (v->values && v->outputs && v->sum)
		return 0;
	td_top_view_release(v);
	return -ENOMEM;
}

void td_top_view_release(struct td_top_view *v)
{
	free(v->threads);
	free(v->rows);
	free(v->values);
	free(v->outputs);
	free(v->sum);
	memset(v, 0, sizeof(*v));
}

void td_top_view_set_interval(struct td_top_view *v, struct td_thread_row *threads, size_t nr_threads,
			      uint64_t span_ns)
{
	free(v->threads);
	v->threads = threads;
	v->nr_threads = nr_threads;
	v->span_ns = span_ns;
}

/* The Top-Down values of rows[0..n) taken together: one thread's own, or summed for a group. */
static void eval_nodes(struct td_top_view *v, const struct td_thread_row *rows, size_t n, struct td_top_row *out)
{
	if (!v->engine)
		return;
	if (n == 1)
		td_engine_eval(v->engine, rows->counters, v->values, v->outputs);
	else
		td_engine_eval_sum(v->engine, rows, n, v->sum, v->values, v->outputs);
	for (size_t i = 0; i < v->nr_nodes; i++)
		out->nodes[i] = v->outputs[v->node_output[i]];
}

struct member {
	char group[TD_COMM_LEN * 2];
	size_t index;
};

static int by_group(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	int c = strcmp(x->group, y->group);

	return c ? c : x->index < y->index ? -1 : x->index > y->index;
}

static bool wanted(const struct td_top_view *v, const char *name)
{
	return !v->filter[0] || strstr(name, v->filter);
}

/*
 * Appends one row per name group of the threads picked[0..n): the figures
 * folded as thread_table folds them, Top-Down from the members' summed
 * counters. scratch holds n rows.
 */
static int add_groups(struct td_top_view *v, struct member *picked, size_t n, struct td_thread_row *scratch)
{
	qsort(picked, n, sizeof(*picked), by_group);
	for (size_t first = 0, end; first < n; first = end) {
		struct td_thread_group_row *group;
		struct td_top_row *row;
		size_t k = 0;

		for (end = first; end < n && !strcmp(picked[end].group, picked[first].group); end++)
			scratch[k++] = v->threads[picked[end].index];
		if (!wanted(v, picked[first].group)) {
			v->nr_hidden++;
			continue;
		}
		if (td_fold_thread_rows(scratch, k, v->nr_events, &group) != 1) {
			free(group);
			return -ENOMEM;
		}
		row = &v->rows[v->nr_rows++];
		memset(row, 0, sizeof(*row));
		row->figures = group->sum;
		row->threads = group->threads;
		if (k == 1) /* a group of one is that thread: its tid helps */
			row->figures.tid = scratch[0].tid;
		free(group);
		eval_nodes(v, scratch, k, row);
	}
	return 0;
}

static double sort_value(const struct td_top_view *v, const struct td_top_row *r, size_t column)
{
	size_t e = column - TD_TOP_FIXED_COLUMNS;

	switch (column) {
	case TD_TOP_COL_TID: return v->groups ? (double)r->threads : (double)r->figures.tid;
	case TD_TOP_COL_ONCPU: return (double)r->figures.oncpu_ns;
	case TD_TOP_COL_VOL: return (double)r->figures.voluntary_switches;
	case TD_TOP_COL_INVOL: return (double)r->figures.involuntary_switches;
	case TD_TOP_COL_MIGR: return (double)r->figures.migrations;
	case TD_TOP_COL_RUNQ: return (double)r->figures.runq_wait_ns;
	}
	return e < v->nr_events ? r->figures.counters[e].value : r->nodes[e - v->nr_events].value;
}

/* Names and TIDs ascending, figures descending (the busiest on top), undefined last. */
static int by_column(const void *a, const void *b, void *view)
{
	const struct td_top_row *x = a, *y = b;
	const struct td_top_view *sorting = view;
	size_t c = sorting->sort_column;
	double p, q;
	int cmp;

	if (c == TD_TOP_COL_NAME) {
		if ((cmp = strcmp(x->figures.comm, y->figures.comm)))
			return cmp;
		return x->figures.tid < y->figures.tid ? -1 : x->figures.tid > y->figures.tid;
	}
	p = sort_value(sorting, x, c);
	q = sort_value(sorting, y, c);
	if (isnan(p) || isnan(q))
		cmp = isnan(p) - isnan(q);
	else if (c == TD_TOP_COL_TID)
		cmp = p < q ? -1 : p > q;
	else
		cmp = p > q ? -1 : p < q;
	return cmp ? cmp : strcmp(x->figures.comm, y->figures.comm);
}

int td_top_view_layout(struct td_top_view *v)
{
	struct td_thread_row *scratch = malloc((v->nr_threads + 1) * sizeof(*scratch));
	struct member *folded = malloc((v->nr_threads + 1) * sizeof(*folded));
	struct td_top_row *rows = realloc(v->rows, (v->nr_threads + 1) * sizeof(*rows));
	size_t nr_folded = 0;
	int ret = 0;

	if (rows)
		v->rows = rows;
	v->nr_rows = v->nr_hidden = 0;
	if (!scratch || !folded || !rows) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < v->nr_threads; i++) {
		const struct td_thread_row *t = &v->threads[i];
		struct td_top_row *row;

		if (v->groups || t->exited) {
			td_thread_group_name(t->comm, folded[nr_folded].group, sizeof(folded[nr_folded].group));
			folded[nr_folded++].index = i;
			continue;
		}
		if (!wanted(v, t->comm)) {
			v->nr_hidden++;
			continue;
		}
		row = &v->rows[v->nr_rows++];
		memset(row, 0, sizeof(*row));
		row->figures = *t;
		eval_nodes(v, t, 1, row);
	}
	ret = add_groups(v, folded, nr_folded, scratch);
	qsort_r(v->rows, v->nr_rows, sizeof(*v->rows), by_column, v);
out:
	free(scratch);
	free(folded);
	return ret;
}

size_t td_top_column_count(const struct td_top_view *v)
{
	return TD_TOP_FIXED_COLUMNS + v->nr_events + v->nr_nodes;
}

const char *td_top_column_title(const struct td_top_view *v, size_t column)
{
	size_t e = column - TD_TOP_FIXED_COLUMNS;

	if (column == TD_TOP_COL_NAME)
		return v->groups ? "GROUP" : "THREAD";
	if (column == TD_TOP_COL_TID)
		return v->groups ? "THREADS" : "TID";
	if (column < TD_TOP_FIXED_COLUMNS)
		return fixed_titles[column];
	if (e < v->nr_events)
		return v->event_names[e];
	return td_engine_output(v->engine, v->node_output[e - v->nr_events])->node;
}

int td_top_column_width(const struct td_top_view *v, size_t column)
{
	int title = (int)strlen(td_top_column_title(v, column)), width;

	if (column < TD_TOP_FIXED_COLUMNS)
		width = fixed_widths[column];
	else
		width = column - TD_TOP_FIXED_COLUMNS < v->nr_events ? EVENT_WIDTH : NODE_WIDTH;
	return title > width ? title : width;
}

static const char *node_cell(const struct td_top_view *v, const struct td_metric_value *m, char *buf, size_t len)
{
	struct td_metric_row row = { .level = 1, .value = m->value };
	char value[32];

	td_format_metric(td_engine_model(v->engine), &row, value, sizeof(value));
	snprintf(buf, len, "%s%s", value, td_metric_low_confidence(m->confidence) ? TD_MARK_LOW_CONFIDENCE : "");
	return buf;
}

const char *td_top_cell(const struct td_top_view *v, const struct td_top_row *row, size_t column,
			char *buf, size_t len)
{
	const struct td_thread_row *t = &row->figures;
	size_t e = column - TD_TOP_FIXED_COLUMNS;

	switch (column) {
	case TD_TOP_COL_NAME: /* the thread's own choice, escaped for the terminal */
		td_safe_text(t->comm, buf, len);
		break;
	case TD_TOP_COL_TID:
		if (v->groups)
			snprintf(buf, len, "%zu", row->threads);
		else if (row->threads) /* exited threads folded: how many */
			snprintf(buf, len, "[%zu]", row->threads);
		else
			snprintf(buf, len, "%u", t->tid);
		break;
	case TD_TOP_COL_ONCPU:
		snprintf(buf, len, "%.1f", v->span_ns ? 100.0 * t->oncpu_ns / v->span_ns : 0.0);
		break;
	case TD_TOP_COL_VOL:
		snprintf(buf, len, "%llu", (unsigned long long)t->voluntary_switches);
		break;
	case TD_TOP_COL_INVOL:
		snprintf(buf, len, "%llu", (unsigned long long)t->involuntary_switches);
		break;
	case TD_TOP_COL_MIGR:
		snprintf(buf, len, "%llu", (unsigned long long)t->migrations);
		break;
	case TD_TOP_COL_RUNQ:
		td_format_duration(t->runq_wait_ns, buf, len);
		break;
	default:
		if (e < v->nr_events)
			td_format_count(t->counters[e].value, buf, len);
		else
			node_cell(v, &row->nodes[e - v->nr_events], buf, len);
	}
	return buf;
}

bool td_top_sort_key(struct td_top_view *v, int key)
{
	size_t columns = td_top_column_count(v);

	switch (key) {
	case 'c': v->sort_column = TD_TOP_COL_ONCPU; break;
	case 's': v->sort_column = TD_TOP_COL_VOL; break;
	case 'w': v->sort_column = TD_TOP_COL_RUNQ; break;
	case 'n': v->sort_column = TD_TOP_COL_NAME; break;
	case 't': v->sort_column = TD_TOP_COL_TID; break;
	case '<': v->sort_column = (v->sort_column + columns - 1) % columns; break;
	case '>': v->sort_column = (v->sort_column + 1) % columns; break;
	default: return false;
	}
	return true;
}

void td_top_summary(const struct td_top_view *v, char *buf, size_t len)
{
	char span[32];
	int used = snprintf(buf, len, "%zu %s of %zu threads in %s, sorted by %s", v->nr_rows,
			    v->groups ? "groups" : "rows", v->nr_threads, td_format_duration(v->span_ns, span, sizeof(span)),
			    td_top_column_title(v, v->sort_column));

	if (v->filter[0] && used >= 0 && (size_t)used < len)
		snprintf(buf + used, len - used, ", filter '%s' (%zu hidden)", v->filter, v->nr_hidden);
}

void td_top_line(const struct td_top_view *v, const struct td_top_row *row, char *buf, size_t len)
{
	size_t used = 0;
	char cell[64];

	buf[0] = '\0';
	for (size_t c = 0; c < td_top_column_count(v) && used + 1 < len; c++) {
		const char *text = row ? td_top_cell(v, row, c, cell, sizeof(cell)) : td_top_column_title(v, c);
		int width = td_top_column_width(v, c), n;

		if (c == TD_TOP_COL_NAME) /* a long group name must not push the columns right */
			n = snprintf(buf + used, len - used, "%-*.*s", width, width, text);
		else
			n = snprintf(buf + used, len - used, " %*s", width, text);
		if (n < 0)
			break;
		used += (size_t)n < len - used ? (size_t)n : len - used - 1;
	}
}

void td_top_print_frame(FILE *out, const struct td_top_view *v, int64_t wall_ns)
{
	char when[32], summary[256], line[4096];

	td_top_summary(v, summary, sizeof(summary));
	fprintf(out, "topdown top %s: %s\n", td_format_time(wall_ns, when, sizeof(when)), summary);
	td_top_line(v, NULL, line, sizeof(line));
	fprintf(out, "%s\n", line);
	for (size_t i = 0; i < v->nr_rows; i++) {
		td_top_line(v, &v->rows[i], line, sizeof(line));
		fprintf(out, "%s\n", line);
	}
	fputc('\n', out);
}
