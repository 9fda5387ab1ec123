// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown flamegraph: the sampled stacks of the selected runs as one
 * self-contained, interactive SVG (user/render/flamegraph.c). Two runs,
 * or two label sets, give a differential graph: widths from the second
 * set, red where a frame took a larger share of the samples than in the
 * first, blue where a smaller one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "fileio.h"
#include "format.h"
#include "flamegraph.h"
#include "hot.h"
#include "parse.h"
#include "query_cli.h"

struct flamegraph_args {
	struct td_query_cli cli;
	struct td_labels labels_a, labels_b;
	const char *run_a, *run_b;
	const char *thread, *output, *title;
	bool inverted;
	long width;
};

static const struct td_opt flamegraph_options[] = {
	TD_OPTION("label-a", TD_OPT_LABEL, offsetof(struct flamegraph_args, labels_a), "key=value",
	  "differential: side A, the runs with this label (repeatable)"),
	TD_OPTION("label-b", TD_OPT_LABEL, offsetof(struct flamegraph_args, labels_b), "key=value",
	  "differential: side B, drawn against A (repeatable)"),
	TD_OPTION("thread", TD_OPT_TEXT, offsetof(struct flamegraph_args, thread), "NAME|TID", "one thread's samples"),
	TD_OPTION("output", TD_OPT_NAME, offsetof(struct flamegraph_args, output), "FILE", "write the SVG here (- : stdout)"),
	TD_OPTION("title", TD_OPT_TEXT, offsetof(struct flamegraph_args, title), "TEXT", "the graph's title"),
	TD_OPTION("inverted", TD_OPT_FLAG, offsetof(struct flamegraph_args, inverted), NULL, "an icicle: roots at the top"),
	TD_OPTION("width", TD_OPT_INT, offsetof(struct flamegraph_args, width), "PX", "the SVG's width (200 to 100000)",
	  .min = 200, .max = 100000),
	TD_OPTS_RUN_FILTERS(struct flamegraph_args, cli),
	{ 0 }
};

static const struct td_cli flamegraph_command = {
	.command = "flamegraph",
	.synopsis = "usage: topdown flamegraph [--label key=value]... [--process NAME] [--last 24h] [--run-id ID]\n"
		    "                          [--thread NAME|TID] [--output FILE] [--title TEXT] [--inverted] [--width PX]\n"
		    "       topdown flamegraph RUN_A RUN_B [...]        differential: B against A\n"
		    "       topdown flamegraph --label-a key=value... --label-b key=value... [...]\n",
	.notes = "Draws where the samples of runs collected with --sample landed, as an SVG that a browser\n"
		 "zooms (click), searches (Ctrl-F or /) and flips (icicle); without --output (or with\n"
		 "--output -) it goes to stdout.\n",
	.opts = flamegraph_options,
	.max_operands = -1, /* two run ids, or none: sides_problem says */
};

static int usage_error(const char *message)
{
	return td_cli_usage_error(&flamegraph_command, message);
}

/* One set (no operands, no --label-a/b), or two: by run ids or by label sets. */
static const char *sides_problem(const struct flamegraph_args *a, int nr_args)
{
	bool by_labels = a->labels_a.count || a->labels_b.count;
	const char *problem = td_query_cli_sides_problem(&a->labels_a, &a->labels_b, nr_args);

	if (problem)
		return problem;
	if (nr_args != 0 && nr_args != 2)
		return "a differential graph takes two run ids (topdown flamegraph RUN_A RUN_B)";
	if ((nr_args || by_labels) && a->cli.sel.run_id)
		return "--run-id selects one set: a differential graph names its two runs as arguments";
	return NULL;
}

static int parse_args(int argc, char **argv, struct flamegraph_args *a)
{
	struct td_cli_seen seen;
	int ret = td_cli_read(&flamegraph_command, argc, argv, a, &seen);

	if (ret)
		return ret;
	if (a->cli.format != TD_FORMAT_TABLE)
		return usage_error("a flame graph is an SVG: --json and --csv do not apply (topdown query --hot --json does)");
	if (sides_problem(a, seen.nr_operands))
		return usage_error(sides_problem(a, seen.nr_operands));
	if (seen.nr_operands) {
		a->run_a = seen.operands[0];
		a->run_b = seen.operands[1];
	}
	return 0;
}

/* The title a graph gets unless --title names one: the event and what was selected. */
static void default_title(const struct flamegraph_args *a, const struct td_folded_set *set, char *buf, size_t len)
{
	size_t used = (size_t)snprintf(buf, len, "topdown: %s%s", set->event, set->nr_base_runs ? ", differential" : "");

	for (size_t i = 0; i < a->cli.sel.labels.count && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s %s=%s", i ? "," : ",", a->cli.sel.labels.items[i].key,
					 a->cli.sel.labels.items[i].value);
	if (a->thread && used < len)
		snprintf(buf + used, len - used, ", thread %s", a->thread);
}

struct svg_job {
	const struct td_folded_set *set;
	const struct td_flamegraph_opts *opts;
};

static int write_svg(FILE *out, void *ctx, char *err, size_t errlen)
{
	const struct svg_job *job = ctx;

	return td_flamegraph_svg(out, job->set->stacks, job->set->nr_stacks, job->opts, err, errlen);
}

static int flamegraph(struct td_store *store, void *args, char *err, size_t errlen)
{
	struct flamegraph_args *a = args;
	struct td_query q = { .thread = a->thread }, base = { .thread = a->thread };
	char id_a[TD_RUN_ID_LEN], id_b[TD_RUN_ID_LEN];
	bool differential = a->run_a || a->labels_a.count;
	struct td_folded_set *set = NULL;
	struct td_run_filter shared;
	int ret = td_run_selection_filter(&a->cli.sel, store, &shared, err, errlen);

	q.runs = shared;
	if (!ret && differential)
		ret = td_query_cli_side_filter(store, &shared, a->run_a, id_a, &a->labels_a, &base.runs, err, errlen);
	if (!ret && differential)
		ret = td_query_cli_side_filter(store, &shared, a->run_b, id_b, &a->labels_b, &q.runs, err, errlen);
	if (!ret)
		ret = td_query_folded(store, &q, differential ? &base : NULL, &set, err, errlen);
	if (!ret) {
		struct td_flamegraph_opts opts = { .title = a->title, .unit = set->unit,
						   .differential = set->nr_base_runs > 0, .inverted = a->inverted,
						   .width_px = (unsigned)a->width };
		char title[512];

		if (!opts.title) {
			default_title(a, set, title, sizeof(title));
			opts.title = title;
		}
		ret = td_write_output(a->output, write_svg, &(struct svg_job){ set, &opts }, err, errlen);
	}
	if (!ret && a->output && strcmp(a->output, "-") != 0) {
		char path[TD_SAFE_LEN(1024)];

		fprintf(stderr, "topdown flamegraph: %s: %zu stacks, %llu %s over %zu run%s\n",
			td_safe_text(a->output, path, sizeof(path)), set->nr_stacks, (unsigned long long)set->samples,
			set->unit, set->nr_runs, set->nr_runs == 1 ? "" : "s");
	}
	td_folded_set_free(set);
	return ret;
}

int td_cmd_flamegraph(int argc, char **argv)
{
	struct flamegraph_args a = { 0 };
	int ret;

	td_query_cli_init(&a.cli);
	td_labels_init(&a.labels_a);
	td_labels_init(&a.labels_b);
	ret = parse_args(argc, argv, &a);
	if (ret == 0)
		ret = td_query_cli_run(&a.cli, "flamegraph", TD_STORE_READ_ONLY, flamegraph, &a);
	td_labels_free(&a.labels_a);
	td_labels_free(&a.labels_b);
	td_query_cli_release(&a.cli);
	return ret < 0 ? 0 : ret;
}
