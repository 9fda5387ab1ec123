/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Folded stacks as a flame graph: one self-contained SVG file (inline
 * style and script, no external assets) that a browser shows with
 * tooltips, click to zoom, regex search with a "Matched" readout, an
 * icicle toggle and, for differential graphs, a negate toggle; zoom,
 * search and toggles live in the URL hash, so a reload or a shared link
 * shows the same view. Without script (an image viewer) the first layout
 * still draws.
 *
 * Decisions a reader of the output needs:
 * - The stacks merge into one tree whose root is a frame named "all"
 *   (the total); children are sorted by name, so the same input always
 *   gives byte-identical output.
 * - Frame names are made safe for XML here: an empty frame (";;", or an
 *   empty stack) is "[unknown]"; bytes that are not valid UTF-8, control
 *   characters and U+FFFE/U+FFFF become U+FFFD. Frames that differ only
 *   in such bytes merge.
 * - Widths are counts of the new set (count). A differential graph
 *   colours each frame by its share of the total in count minus its share
 *   in base_count: red hotter, blue cooler, the intensity relative to the
 *   largest change; the page's Negate toggle sizes frames by base_count
 *   instead, the colours keeping their meaning.
 * - Frames narrower than min_width_px in the first view (in either set
 *   for a differential graph) are not written, which bounds the output
 *   to about width_px / min_width_px frames per stack depth; the footer
 *   says how many. Zooming does not bring them back, and search does not
 *   count them.
 */
#ifndef TOPDOWN_FLAMEGRAPH_H
#define TOPDOWN_FLAMEGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hot.h"

/*
 * The stacks are struct td_folded (user/query/hot.h): frames outermost
 * first joined by ';' ("main;run;hot_a"), and their weight. In a
 * differential graph base_count is the weight in the base set and count
 * in the new set; otherwise base_count is ignored. A stack that weighs 0
 * (in both sets) is skipped.
 */

struct td_flamegraph_opts {
	const char *title;   /* "topdown: cpu-clock, branch=main"; NULL: "Flame graph" */
	const char *unit;    /* what a count is ("samples", "L3 misses"): tooltips and the readout say it; required */
	bool differential;   /* colour by the change from base_count to count */
	bool inverted;       /* start as an icicle (root on top); the page toggles it anyway */
	unsigned width_px;   /* 0: 1200; else 400 to 100000 */
	double min_width_px; /* frames narrower are not drawn; 0 (or less): 0.1 */
};

/*
 * Writes the flame graph of stacks[0..n) to out. 0, or a negative errno
 * with one sentence in err: -ENODATA when there is nothing to draw (no
 * stacks, every count 0, or an empty set in a differential graph),
 * -EOVERFLOW when a set's counts add up past UINT64_MAX, -EINVAL for
 * options out of range, -ENOMEM, -EIO when out could not be written.
 * Nothing is written on an error found before drawing.
 */
int td_flamegraph_svg(FILE *out, const struct td_folded *stacks, size_t n,
		      const struct td_flamegraph_opts *opts, char *err, size_t errlen);

#endif
