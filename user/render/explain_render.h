/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The meaning of a Top-Down metric and what to do about it, or the whole
 * tree, as `topdown explain` prints it; the MCP tools and resources show
 * the same through these.
 */
#ifndef TOPDOWN_EXPLAIN_RENDER_H
#define TOPDOWN_EXPLAIN_RENDER_H

#include <stdio.h>

#include <jansson.h>

#include "explain.h"

/* One metric as text, wrapped for a terminal. */
void td_explain_print(FILE *out, const struct td_explanation *e);
/* The same data as one JSON object; NULL on allocation failure.  The
 * top-level path, level, parent, threshold and models are those of the
 * first placement (the one most models share); "placements" has them all. */
json_t *td_explain_json(const struct td_explanation *e);

/* The trees, indented by level, then each group's Info metrics. */
void td_explain_print_listing(FILE *out, const struct td_explain_listing *l);
/* {"groups": [...]}; NULL on allocation failure. */
json_t *td_explain_listing_json(const struct td_explain_listing *l);

#endif
