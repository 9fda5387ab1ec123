/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How query results and stored runs look: a table for people, JSON and CSV
 * for programs. Tables show percentages and mark low-confidence values
 * (TD_MARK_LOW_CONFIDENCE, as every CLI output does); JSON and CSV carry the fractions (0..1) as stored, with NaN as
 * null (JSON) or an empty field (CSV). The *_json builders are shared with
 * the MCP server; the caller owns (json_decref) what they return.
 */
#ifndef TOPDOWN_QUERY_RENDER_H
#define TOPDOWN_QUERY_RENDER_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "hot.h"
#include "query.h"

enum td_format { TD_FORMAT_TABLE, TD_FORMAT_JSON, TD_FORMAT_CSV };

struct td_render {
	FILE *out;
	enum td_format format;
	bool color; /* ANSI colors in tables */
	bool all_threads; /* --threads tables: every thread, not only the busiest TD_THREAD_TABLE_ROWS */
};

#define TD_THREAD_TABLE_ROWS 30

/* Colors only for a terminal, and never when NO_COLOR is set (no-color.org). */
bool td_render_wants_color(FILE *out);

void td_render_tree(const struct td_render *r, const struct td_tree *t);
void td_render_funnel(const struct td_render *r, const struct td_tree *t);
void td_render_bottlenecks(const struct td_render *r, const struct td_bottlenecks *b);
void td_render_run_matches(const struct td_render *r, const struct td_run_matches *m);
void td_render_threads(const struct td_render *r, const struct td_thread_breakdown *t);
void td_render_trend(const struct td_render *r, const struct td_trend *t);
void td_render_comparison(const struct td_render *r, const struct td_comparison *c);
/* A table or JSON (no CSV: a key's values make no flat table). */
void td_render_labels(const struct td_render *r, const struct td_label_set *set);

/* Locate. The comparison's table shows at most rows rises and rows falls (0: all). */
void td_render_hot(const struct td_render *r, const struct td_hot *h);
void td_render_hot_comparison(const struct td_render *r, const struct td_hot_comparison *c, size_t rows);
json_t *td_hot_json(const struct td_hot *h);
json_t *td_hot_comparison_json(const struct td_hot_comparison *c);
/* Folded stacks as flamegraph.pl and speedscope read them: "a;b;c COUNT" a line. */
void td_render_folded(FILE *out, const struct td_folded_set *set);

json_t *td_run_summary_json(const struct td_run_summary *s);
json_t *td_tree_json(const struct td_tree *t);
json_t *td_bottlenecks_json(const struct td_bottlenecks *b);
json_t *td_run_matches_json(const struct td_run_matches *m);
json_t *td_thread_breakdown_json(const struct td_thread_breakdown *t);
json_t *td_trend_json(const struct td_trend *t);
json_t *td_comparison_json(const struct td_comparison *c);
json_t *td_label_set_json(const struct td_label_set *set);
/* Export's CSV header; td_export_run() writes a run's lines under it: one
 * per metric row (one with empty metric fields for a run without any). */
void td_export_csv_header(FILE *out);
/*
 * One stored run, read part by part (td_store_walk_run) and written as it
 * comes, in little memory whatever its length: as JSON, the run object
 * (its fields, events, thread rows, intervals and metric rows, indented
 * by two spaces, without a newline after it), or as CSV, its lines.
 */
int td_export_run(struct td_store *store, const char *run_id, enum td_format format, FILE *out,
		  char *err, size_t errlen);

#endif
