// SPDX-License-Identifier: BSD-3-Clause
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "tma_render.h"

#define LEVEL1_MAX 8 /* level-1 nodes of any model, with room to spare */

const char *td_format_metric(const struct td_model *model, const struct td_metric_row *row,
			     char *buf, size_t len)
{
	const struct td_metric_def *def = row->level ? NULL : td_model_metric(model, row->path);

	if (isnan(row->value))
		snprintf(buf, len, "n/a");
	else if (row->level || (def && def->unit == TD_UNIT_FRACTION))
		snprintf(buf, len, "%.1f%%", row->value * 100);
	else if (fabs(row->value) >= 1e6)
		snprintf(buf, len, "%.4g", row->value);
	else
		snprintf(buf, len, "%.3f", row->value);
	return buf;
}

json_t *td_metric_row_json(const struct td_metric_row *row)
{
	const char *node = row->level ? strrchr(row->path, '.') : NULL;

	/* NaN has no JSON form (json_real refuses it): null, for the value and the confidence */
	return json_pack("{s:s, s:s, s:o, s:i, s:o, s:b, s:o, s:b, s:I}", row->level ? "path" : "name",
			 row->path, "node", node ? node + 1 : row->path,
			 "parent", row->parent ? json_string(row->parent) : json_null(), "level", row->level,
			 "value", isnan(row->value) ? json_null() : json_real(row->value),
			 "threshold_crossed", row->threshold_crossed,
			 "confidence", isnan(row->confidence) ? json_null() : json_real(row->confidence),
			 "low_confidence", td_metric_low_confidence(row->confidence),
			 "counted_ns", (json_int_t)row->counted_ns);
}

static bool whole_run(const struct td_metric_row *row, enum td_metric_scope scope)
{
	return row->interval_seq < 0 && row->scope == scope;
}

json_t *td_metric_trees_json(const struct td_run *run, enum td_metric_scope scope)
{
	json_t *trees = json_object();

	for (size_t i = 0; i < run->nr_metrics; i++) {
		const struct td_metric_row *row = &run->metrics[i];
		json_t *tree;

		if (!whole_run(row, scope))
			continue;
		if (!(tree = json_object_get(trees, row->scope_key))) {
			tree = json_array();
			json_object_set_new(trees, row->scope_key, tree);
		}
		json_array_append_new(tree, td_metric_row_json(row));
	}
	return trees;
}

/* One line of the group table: a group's level-1 rows and its threads' on-CPU time. */
struct group_line {
	const char *key;
	uint64_t oncpu_ns;
	const struct td_metric_row *level1[LEVEL1_MAX];
};

struct group_table {
	const struct td_metric_def *columns[LEVEL1_MAX];
	size_t nr_columns;
	struct group_line *lines;
	size_t nr_lines;
};

static struct group_line *find_line(struct group_table *t, const char *key)
{
	for (size_t i = 0; i < t->nr_lines; i++)
		if (!strcmp(t->lines[i].key, key))
			return &t->lines[i];
	return NULL;
}

static int compare_busiest_first(const void *a, const void *b)
{
	const struct group_line *x = a, *y = b;

	return x->oncpu_ns < y->oncpu_ns ? 1 : x->oncpu_ns > y->oncpu_ns ? -1 : strcmp(x->key, y->key);
}

/* Lines from the group rows of the level-1 columns; on-CPU time from the threads. */
static int fill_table(struct group_table *t, const struct td_run *run)
{
	char name[TD_COMM_LEN * 2];

	t->lines = calloc(run->nr_metrics + 1, sizeof(*t->lines));
	if (!t->lines)
		return -1;
	for (size_t i = 0; i < run->nr_metrics; i++) {
		const struct td_metric_row *row = &run->metrics[i];
		struct group_line *line;

		if (!whole_run(row, TD_SCOPE_GROUP) || row->level != 1)
			continue;
		if (!(line = find_line(t, row->scope_key))) {
			line = &t->lines[t->nr_lines++];
			line->key = row->scope_key;
		}
		for (size_t c = 0; c < t->nr_columns; c++)
			if (!strcmp(t->columns[c]->path, row->path))
				line->level1[c] = row;
	}
	for (size_t i = 0; i < run->nr_threads; i++) {
		struct group_line *line;

		td_thread_group_name(run->threads[i].comm, name, sizeof(name));
		if ((line = find_line(t, name)))
			line->oncpu_ns += run->threads[i].oncpu_ns;
	}
	qsort(t->lines, t->nr_lines, sizeof(*t->lines), compare_busiest_first);
	return 0;
}

void td_print_group_level1(FILE *out, const struct td_run *run, const struct td_engine *engine,
			   size_t max_rows)
{
	const struct td_model *model = td_engine_model(engine);
	struct group_table t = { 0 };
	bool low = false;
	char value[32];

	for (size_t i = 0; i < td_engine_output_count(engine) && t.nr_columns < LEVEL1_MAX; i++) {
		const struct td_metric_def *def = td_engine_output(engine, i);

		if (def->kind == TD_METRIC_TREE && def->level == 1)
			t.columns[t.nr_columns++] = def;
	}
	if (fill_table(&t, run)) {
		fprintf(out, "(out of memory laying out the Top-Down table)\n");
		return;
	}
	fprintf(out, "%-20s", "GROUP");
	for (size_t c = 0; c < t.nr_columns; c++)
		fprintf(out, " %16s ", t.columns[c]->node);
	fprintf(out, "\n");
	for (size_t i = 0; i < t.nr_lines && i < max_rows; i++) {
		td_fputs_safe(out, t.lines[i].key, 20); /* a thread group's name */
		for (size_t c = 0; c < t.nr_columns; c++) {
			const struct td_metric_row *row = t.lines[i].level1[c];
			bool mark = !row || td_metric_low_confidence(row->confidence);

			if (row)
				td_format_metric(model, row, value, sizeof(value));
			else
				snprintf(value, sizeof(value), "n/a");
			fprintf(out, " %16s%s", value, mark ? TD_MARK_LOW_CONFIDENCE : " ");
			low |= mark;
		}
		fprintf(out, "\n");
	}
	if (t.nr_lines > max_rows)
		fprintf(out, "... %zu more groups (--json lists all)\n", t.nr_lines - max_rows);
	if (low)
		fprintf(out, "%s\n", TD_LEGEND_LOW_CONFIDENCE);
	free(t.lines);
}
