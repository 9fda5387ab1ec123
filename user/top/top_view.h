/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What `topdown top` shows, without the terminal: one interval's thread
 * rows laid out as a table (threads, or thread-name groups), filtered by
 * name, sorted by a column, each cell as text. The curses screen and the
 * --batch frames both draw from it, and the unit tests check it alone.
 *
 * Columns: name, TID (THREADS for groups), on-CPU %, voluntary and
 * involuntary switches, migrations, run-queue wait, the counted events,
 * then, given an engine, the Top-Down nodes of its depth (level 1 unless
 * --level says more), each from the row's own counters (a group's summed).
 *
 * Threads view: every live thread, and the threads that exited during the
 * interval folded into their name group (td_fold_thread_rows), so a
 * process that spawns short-lived threads shows one short_* row, not a
 * screenful. Groups view: every thread folded by name.
 */
#ifndef TOPDOWN_TOP_VIEW_H
#define TOPDOWN_TOP_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine.h"
#include "run.h"

#define TD_TOP_FILTER_LEN 64
#define TD_TOP_MAX_NODES 32

enum td_top_fixed_column {
	TD_TOP_COL_NAME,
	TD_TOP_COL_TID,
	TD_TOP_COL_ONCPU,
	TD_TOP_COL_VOL,
	TD_TOP_COL_INVOL,
	TD_TOP_COL_MIGR,
	TD_TOP_COL_RUNQ,
	TD_TOP_FIXED_COLUMNS /* then the events, then the Top-Down nodes */
};

struct td_top_row {
	struct td_thread_row figures; /* a thread's, or its group's summed; comm is the group name then */
	size_t threads;               /* threads folded into the row; 0 for one thread shown as itself */
	struct td_metric_value nodes[TD_TOP_MAX_NODES];
};

struct td_top_view {
	/* what the user chose */
	bool groups;
	size_t sort_column;
	char filter[TD_TOP_FILTER_LEN];

	/* the columns */
	const char *const *event_names;
	size_t nr_events;
	const struct td_engine *engine; /* NULL: no Top-Down columns */
	size_t nr_nodes, node_output[TD_TOP_MAX_NODES]; /* their engine output indexes */

	/* the interval shown */
	struct td_thread_row *threads;
	size_t nr_threads;
	uint64_t span_ns;

	/* laid out by td_top_view_layout */
	struct td_top_row *rows;
	size_t nr_rows;
	size_t nr_hidden; /* rows the filter left out */

	/* the engine's scratch */
	double *values;
	struct td_metric_value *outputs;
	struct td_counter_value *sum;
};

/* An empty view of these columns, sorted by on-CPU time, threads view. -ENOMEM. */
int td_top_view_init(struct td_top_view *v, const char *const *event_names, size_t nr_events,
		     const struct td_engine *engine);
void td_top_view_release(struct td_top_view *v);

/* The interval to show: the view takes threads (malloc'd) and frees the previous ones. */
void td_top_view_set_interval(struct td_top_view *v, struct td_thread_row *threads, size_t nr_threads,
			      uint64_t span_ns);

/* Rows from the interval, the grouping, the filter and the sort: 0 or -ENOMEM. */
int td_top_view_layout(struct td_top_view *v);

size_t td_top_column_count(const struct td_top_view *v);
const char *td_top_column_title(const struct td_top_view *v, size_t column);
/* Characters the column takes, its title included; the name column is left-aligned. */
int td_top_column_width(const struct td_top_view *v, size_t column);
/* A row's cell as text: "n/a" for a counter that did not run, a "~" after a low-confidence Top-Down value. */
const char *td_top_cell(const struct td_top_view *v, const struct td_top_row *row, size_t column,
			char *buf, size_t len);

/*
 * A sort key: 'c' on-CPU, 's' switches (voluntary), 'w' run-queue wait,
 * 'n' name, 't' TID, '<' and '>' the column left or right of the current
 * one. Returns whether key was one (re-layout then).
 */
bool td_top_sort_key(struct td_top_view *v, int key);

/* The summary line: rows shown, threads, interval, sort column, filter. */
void td_top_summary(const struct td_top_view *v, char *buf, size_t len);

/* A table line, header (row NULL) or row, cells separated by a space, at most len - 1 characters. */
void td_top_line(const struct td_top_view *v, const struct td_top_row *row, char *buf, size_t len);

/* A --batch frame: a header line with the time and counts, the column titles, the rows. */
void td_top_print_frame(FILE *out, const struct td_top_view *v, int64_t wall_ns);

#endif
