/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The answers about one selection of runs as one self-contained HTML page
 * (topdown report): inline style and script, no network, readable in
 * print. Each section embeds the JSON its *_json builder makes (the same
 * text `topdown query ... --json` prints, as compact JSON) in a
 * <script type="application/json"> block, and the page's script draws
 * the section from it, so what the page shows equals the CLI's --json by
 * construction. The flame graph is td_flamegraph_svg's own page, framed
 * from a data: URL so that its script keeps its own document.
 *
 * A part left NULL (its query had nothing) is absent from the page: no
 * heading, no block, no entry in the contents.
 */
#ifndef TOPDOWN_REPORT_H
#define TOPDOWN_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "hot.h"
#include "query.h"

/* Trends keep the newest this many points each: 10,000 runs would
 * otherwise weigh megabytes per node and slow the page down. */
#define TD_REPORT_TREND_POINTS 1000
/* The hot functions table: the hottest this many. */
#define TD_REPORT_HOT_FUNCTIONS 50

struct td_report {
	const char *title;                        /* what was selected; NULL: "all runs" */
	const struct td_tree *tree;               /* funnel and tree */
	const struct td_thread_breakdown *threads;
	const struct td_trend *const *trends;     /* nr_trends of them (top_n TD_REPORT_TREND_POINTS), NULL ones skipped */
	size_t nr_trends;
	const struct td_comparison *comparison;
	const char *side_a, *side_b;              /* what each side of it is, for people */
	const struct td_hot *hot;                 /* top_n TD_REPORT_HOT_FUNCTIONS */
	const struct td_folded_set *folded;       /* drawn as the flame graph */
};

/*
 * Writes the page to out. 0, or a negative errno with one sentence in
 * err: -ENODATA when every part is absent (nothing is written then),
 * -ENOMEM, -EIO when out could not be written.
 */
int td_report_html(FILE *out, const struct td_report *r, char *err, size_t errlen);

#endif
