// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown query: questions over stored runs, one mode per call. The
 * answers come from user/query/query.c (shared with the MCP server); this file
 * only reads options and picks the renderer.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "parse.h"
#include "query.h"
#include "query_cli.h"
#include "query_render.h"

enum mode {
	MODE_BOTTLENECKS,
	MODE_FUNNEL,
	MODE_TREE,
	MODE_RUNS_ABOVE,
	MODE_THREADS,
	MODE_TREND,
	MODE_HOT,
	MODE_FOLDED,
};

struct query_args {
	struct td_query_cli cli;
	enum mode mode;
	int nr_modes;
	const char *node;       /* --bottleneck or --trend */
	double min_pct;         /* --min-pct */
	const char *sort;       /* --sort, with --threads */
	const char *thread;     /* --thread */
	bool all_threads;       /* --all-threads, with --threads */
	bool pooled;            /* --pooled, with --tree or --funnel */
	long level, top_n, window;
	double sigma;
};

/* A mode option: the mode in .min, its node (or none) in value. */
static int set_mode(void *field, const struct td_opt *opt, const char *value, char *err, size_t errlen)
{
	struct query_args *a = field;

	(void)err;
	(void)errlen;
	a->mode = (enum mode)opt->min;
	a->node = value;
	a->nr_modes++;
	return 0;
}

#define MODE(name, mode, value, help) \
	TD_OPTION(name, TD_OPT_CALL, 0, value, help, .min = mode, .call = set_mode)

static const struct td_opt query_options[] = {
	TD_USAGE_HEADING("modes (one):"),
	MODE("bottlenecks", MODE_BOTTLENECKS, NULL, "deepest crossing node of each branch, ranked (default)"),
	MODE("funnel", MODE_FUNNEL, NULL, "where the pipeline slots go, with a bar per node"),
	MODE("tree", MODE_TREE, NULL, "every node with its value, threshold and confidence"),
	MODE("bottleneck", MODE_RUNS_ABOVE, "NODE", "the runs where NODE is at least --min-pct percent"),
	MODE("threads", MODE_THREADS, NULL, "per thread name, then the busiest threads of one run"),
	MODE("trend", MODE_TREND, "NODE", "NODE over time, anomalies flagged"),
	MODE("hot", MODE_HOT, NULL, "where the samples land (runs collected with --sample): the functions "
	     "by self share, with total share and source line"),
	MODE("folded", MODE_FOLDED, NULL, "the sampled stacks as folded text (\"group;frame;frame COUNT\"), "
	     "for flamegraph.pl, speedscope or inferno"),
	TD_USAGE_HEADING("options:"),
	TD_OPTION("pooled", TD_OPT_FLAG, offsetof(struct query_args, pooled), NULL,
	  "with --tree or --funnel: one tree from the runs' counts pooled, each event over all the time its "
	  "counter group counted (for hosts with few counters, and hosts whose rotations were offset)"),
	TD_OPTION("min-pct", TD_OPT_NUMBER, offsetof(struct query_args, min_pct), "N",
	  "with --bottleneck: the share NODE reaches at least (default 0)", .low = 0, .high = 100),
	TD_OPTION("sort", TD_OPT_NAME, offsetof(struct query_args, sort), "NODE", "with --threads: the busiest by NODE"),
	TD_OPTION("all-threads", TD_OPT_FLAG, offsetof(struct query_args, all_threads), NULL,
	  "with --threads: every thread (--json has them all)"),
	TD_OPTION("window", TD_OPT_INT, offsetof(struct query_args, window), "N",
	  "with --trend: the runs each one is compared with (default 10)", .min = TD_TREND_MIN_HISTORY, .max = 100000),
	TD_OPTION("sigma", TD_OPT_NUMBER, offsetof(struct query_args, sigma), "S",
	  "with --trend: how far from the window's mean an anomaly is (default 3)", .low = 0.1, .high = 100),
	TD_OPTION("thread", TD_OPT_TEXT, offsetof(struct query_args, thread), "NAME|TID",
	  "one thread, or a thread-name group (io_thd_3 and io_thd_* are the same)"),
	TD_OPTION("level", TD_OPT_INT, offsetof(struct query_args, level), "N", "the tree's depth, 1 to 4", .min = 1, .max = 4),
	TD_OPTION("top-n", TD_OPT_INT, offsetof(struct query_args, top_n), "N", "at most N rows", .min = 1, .max = 1000000),
	TD_OPTS_RUN_FILTERS(struct query_args, cli),
	{ 0 }
};

static const struct td_cli query_command = {
	.command = "query",
	.synopsis = "usage: topdown query [MODE] [--label key=value]... [--process NAME] [--last 24h]\n"
		    "                     [--run-id ID] [--thread NAME|TID] [--level 1..4] [--top-n N] [--pooled]\n"
		    "                     [--json | --csv] [--db PATH | --backend postgresql --dsn DSN]\n",
	.opts = query_options,
};

static int usage_error(const char *message)
{
	return td_cli_usage_error(&query_command, message);
}

/* Combinations that make no sense; NULL when there is none. */
static const char *conflict(const struct query_args *a, const struct td_cli_seen *seen)
{
	if (a->nr_modes > 1)
		return "give one mode: --bottlenecks, --funnel, --tree, --bottleneck, --threads, "
		       "--trend, --hot or --folded";
	if (a->mode == MODE_FOLDED && a->cli.format != TD_FORMAT_TABLE)
		return "--folded is a text format of its own: leave out --json and --csv";
	if (td_cli_given(&query_command, seen, "min-pct") && a->mode != MODE_RUNS_ABOVE)
		return "--min-pct goes with --bottleneck NODE";
	if (a->pooled && a->mode != MODE_TREE && a->mode != MODE_FUNNEL)
		return "--pooled goes with --tree or --funnel";
	if (a->sort && a->mode != MODE_THREADS)
		return "--sort goes with --threads";
	if (a->all_threads && a->mode != MODE_THREADS)
		return "--all-threads goes with --threads";
	if ((a->window || a->sigma) && a->mode != MODE_TREND)
		return "--window and --sigma go with --trend NODE";
	if (a->node && !*a->node)
		return "--bottleneck and --trend take a node name, e.g. DRAM_Bound";
	return NULL;
}

static int parse_args(int argc, char **argv, struct query_args *a)
{
	struct td_cli_seen seen;
	int ret = td_cli_read(&query_command, argc, argv, a, &seen);

	if (ret)
		return ret;
	return conflict(a, &seen) ? usage_error(conflict(a, &seen)) : 0;
}

static int run_mode(struct td_store *store, const struct query_args *a, const struct td_query *q,
		    const struct td_render *r, char *err, size_t errlen)
{
	union {
		struct td_tree *tree;
		struct td_bottlenecks *bottlenecks;
		struct td_run_matches *matches;
		struct td_thread_breakdown *threads;
		struct td_trend *trend;
		struct td_hot *hot;
		struct td_folded_set *folded;
	} res;
	int ret;

	switch (a->mode) {
	case MODE_FUNNEL:
	case MODE_TREE:
		ret = td_query_tree(store, q, &res.tree, err, errlen);
		if (ret == 0)
			(a->mode == MODE_FUNNEL ? td_render_funnel : td_render_tree)(r, res.tree);
		td_tree_free(res.tree);
		return ret;
	case MODE_RUNS_ABOVE:
		ret = td_query_runs_above(store, q, a->node, a->min_pct / 100, &res.matches, err,
					  errlen);
		if (ret == 0)
			td_render_run_matches(r, res.matches);
		td_run_matches_free(res.matches);
		return ret;
	case MODE_THREADS:
		ret = td_query_threads(store, q, a->sort, &res.threads, err, errlen);
		if (ret == 0)
			td_render_threads(r, res.threads);
		td_thread_breakdown_free(res.threads);
		return ret;
	case MODE_TREND:
		ret = td_query_trend(store, q, a->node, a->window ? (size_t)a->window : TD_TREND_WINDOW,
				     a->sigma ? a->sigma : TD_TREND_SIGMA, &res.trend, err, errlen);
		if (ret == 0)
			td_render_trend(r, res.trend);
		td_trend_free(res.trend);
		return ret;
	case MODE_HOT:
		ret = td_query_hot(store, q, &res.hot, err, errlen);
		if (ret == 0)
			td_render_hot(r, res.hot);
		td_hot_free(res.hot);
		return ret;
	case MODE_FOLDED:
		ret = td_query_folded(store, q, NULL, &res.folded, err, errlen);
		if (ret == 0)
			td_render_folded(r->out, res.folded);
		td_folded_set_free(res.folded);
		return ret;
	case MODE_BOTTLENECKS:
	default:
		ret = td_query_bottlenecks(store, q, &res.bottlenecks, err, errlen);
		if (ret == 0)
			td_render_bottlenecks(r, res.bottlenecks);
		td_bottlenecks_free(res.bottlenecks);
		return ret;
	}
}

/* The query the options describe, on store. */
static int query(struct td_store *store, void *args, char *err, size_t errlen)
{
	struct query_args *a = args;
	struct td_query q = { .thread = a->thread, .max_level = (int)a->level, .top_n = (size_t)a->top_n,
			      .pooled = a->pooled };
	struct td_render r = { .out = stdout, .format = a->cli.format, .color = td_render_wants_color(stdout),
			       .all_threads = a->all_threads };
	int ret = td_run_selection_filter(&a->cli.sel, store, &q.runs, err, errlen);

	return ret ? ret : run_mode(store, a, &q, &r, err, errlen);
}

int td_cmd_query(int argc, char **argv)
{
	struct query_args a = { 0 };
	int ret;

	td_query_cli_init(&a.cli);
	ret = parse_args(argc, argv, &a);
	if (ret == 0)
		ret = td_query_cli_run(&a.cli, "query", TD_STORE_READ_ONLY, query, &a);
	td_query_cli_release(&a.cli);
	return ret < 0 ? 0 : ret;
}
