/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topdown explain: the meaning of a Top-Down metric and what to do about
 * it, or the whole tree.  The renderers are public so that the MCP tools
 * show exactly what the CLI shows.
 */
#ifndef TOPDOWN_CMD_EXPLAIN_H
#define TOPDOWN_CMD_EXPLAIN_H

#include <stdio.h>

#include <jansson.h>

#include "explain.h"

/* topdown explain NAME [--model M] [--json]
 * topdown explain --list [--model M] [--json]
 * argv[0] is "explain"; returns the exit code (0, 1 on internal failure,
 * 2 on bad arguments, unknown metric or unknown model). */
int td_cmd_explain(int argc, char **argv);

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
