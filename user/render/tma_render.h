/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How Top-Down metric rows (run.h, from the kb engine) look in the CLI's
 * text and JSON outputs. Every output marks a low-confidence value
 * (td_metric_low_confidence: its events were counted less than half the
 * time) and shows an undefined one as n/a (null in JSON), never 0.
 */
#ifndef TOPDOWN_TMA_RENDER_H
#define TOPDOWN_TMA_RENDER_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "engine.h"
#include "run.h"

#define TD_MARK_LOW_CONFIDENCE "~"
#define TD_LEGEND_LOW_CONFIDENCE "~ low confidence: its events were counted less than half the time"

/*
 * A row's value: "42.1%" for tree nodes and fraction-unit Info metrics,
 * "1.234" for other ratios, "%.4g" from a million up (SLOTS, CLKS),
 * "n/a" for NaN.
 */
const char *td_format_metric(const struct td_model *model, const struct td_metric_row *row,
			     char *buf, size_t len);

/*
 * {path|name, node, parent, level, value, threshold_crossed, confidence,
 * low_confidence}: tree nodes have "path", Info metrics "name"; an
 * undefined value is null.
 */
json_t *td_metric_row_json(const struct td_metric_row *row);

/* The whole-run rows of scope as {scope_key: [row, ...]}, rows in tree order. */
json_t *td_metric_trees_json(const struct td_run *run, enum td_metric_scope scope);

/*
 * The level-1 nodes of the engine's tree for each thread-name group of
 * the run, busiest group (on-CPU time) first, at most max_rows groups:
 * one line each, values marked TD_MARK_LOW_CONFIDENCE when low, and the
 * legend when any was.
 */
void td_print_group_level1(FILE *out, const struct td_run *run, const struct td_engine *engine,
			   size_t max_rows);

#endif
