// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown query: questions over stored runs, one mode per call. The
 * answers come from user/query/query.c (shared with the MCP server); this file
 * only reads options and picks the renderer.
 */
#include <errno.h>
#include <getopt.h>
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
	bool min_pct_given;
	const char *sort;       /* --sort, with --threads */
	const char *thread;     /* --thread */
	bool all_threads;       /* --all-threads, with --threads */
	long level, top_n, window;
	double sigma;
};

static const char usage_text[] =
	"usage: topdown query [MODE] [--label key=value]... [--process NAME] [--last 24h]\n"
	"                     [--run-id ID] [--thread NAME|TID] [--level 1..4] [--top-n N]\n"
	"                     [--json | --csv] [--db PATH | --backend postgresql --dsn DSN]\n"
	"modes (one):\n"
	"  --bottlenecks               deepest crossing node of each branch, ranked (default)\n"
	"  --funnel                    where the pipeline slots go, with a bar per node\n"
	"  --tree                      every node with its value, threshold and confidence\n"
	"  --bottleneck NODE [--min-pct N]  the runs where NODE is at least N percent\n"
	"  --threads [--sort NODE] [--all-threads]  per thread name, then the busiest threads\n"
	"                              (every thread with --all-threads or --json), of one run\n"
	"  --trend NODE [--window 10] [--sigma 3]  NODE over time, anomalies flagged\n"
	"  --hot                       where the samples land (runs collected with --sample): the\n"
	"                              functions by self share, with total share and source line\n"
	"  --folded                    the sampled stacks as folded text (\"group;frame;frame COUNT\"),\n"
	"                              for flamegraph.pl, speedscope or inferno\n";

static int usage_error(const char *message)
{
	fprintf(stderr, "topdown query: %s (topdown query --help lists the options)\n", message);
	return TD_EXIT_USAGE;
}

static void set_mode(struct query_args *a, enum mode mode, const char *node)
{
	a->mode = mode;
	a->node = node;
	a->nr_modes++;
}

/* The query's own options; 0, or -EINVAL with err. */
static int own_option(void *args, int opt, const char *arg, char *err, size_t errlen)
{
	struct query_args *a = args;

	switch (opt) {
	case 'B': set_mode(a, MODE_BOTTLENECKS, NULL); return 0;
	case 'F': set_mode(a, MODE_FUNNEL, NULL); return 0;
	case 'T': set_mode(a, MODE_TREE, NULL); return 0;
	case 'b': set_mode(a, MODE_RUNS_ABOVE, arg); return 0;
	case 'H': set_mode(a, MODE_THREADS, NULL); return 0;
	case 'R': set_mode(a, MODE_TREND, arg); return 0;
	case 'O': set_mode(a, MODE_HOT, NULL); return 0;
	case 'f': set_mode(a, MODE_FOLDED, NULL); return 0;
	case 'm': a->min_pct_given = true;
		return td_parse_number(arg, "--min-pct", 0, 100, &a->min_pct, err, errlen);
	case 's': a->sort = arg; return 0;
	case 'A': a->all_threads = true; return 0;
	case 'h': a->thread = arg; return 0;
	case 'l': return td_parse_int_range(arg, "--level", 1, 4, &a->level, err, errlen);
	case 'n': return td_parse_int_range(arg, "--top-n", 1, 1000000, &a->top_n, err, errlen);
	case 'w': return td_parse_int_range(arg, "--window", TD_TREND_MIN_HISTORY, 100000,
					   &a->window, err, errlen);
	case 'g': return td_parse_number(arg, "--sigma", 0.1, 100, &a->sigma, err, errlen);
	default: return 0;
	}
}

/* Combinations that make no sense; NULL when there is none. */
static const char *conflict(const struct query_args *a)
{
	if (a->nr_modes > 1)
		return "give one mode: --bottlenecks, --funnel, --tree, --bottleneck, --threads, "
		       "--trend, --hot or --folded";
	if (a->mode == MODE_FOLDED && a->cli.format != TD_FORMAT_TABLE)
		return "--folded is a text format of its own: leave out --json and --csv";
	if (a->min_pct_given && a->mode != MODE_RUNS_ABOVE)
		return "--min-pct goes with --bottleneck NODE";
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
	static const struct option options[] = {
		TD_QUERY_CLI_OPTIONS,
		{ "bottlenecks", no_argument, NULL, 'B' },
		{ "funnel", no_argument, NULL, 'F' },
		{ "tree", no_argument, NULL, 'T' },
		{ "bottleneck", required_argument, NULL, 'b' },
		{ "min-pct", required_argument, NULL, 'm' },
		{ "threads", no_argument, NULL, 'H' },
		{ "sort", required_argument, NULL, 's' },
		{ "all-threads", no_argument, NULL, 'A' },
		{ "trend", required_argument, NULL, 'R' },
		{ "hot", no_argument, NULL, 'O' },
		{ "folded", no_argument, NULL, 'f' },
		{ "window", required_argument, NULL, 'w' },
		{ "sigma", required_argument, NULL, 'g' },
		{ "thread", required_argument, NULL, 'h' },
		{ "level", required_argument, NULL, 'l' },
		{ "top-n", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, TD_QUERY_CLI_HELP },
		{ 0 }
	};
	char err[512] = "";
	int ret;

	ret = td_query_cli_parse(&a->cli, argc, argv, options, usage_text, own_option, a, false, err, sizeof(err));
	if (ret == TD_QUERY_CLI_HELP_SHOWN)
		return -1;
	if (ret)
		return usage_error(err);
	return conflict(a) ? usage_error(conflict(a)) : 0;
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
	struct td_query q = { .thread = a->thread, .max_level = (int)a->level, .top_n = (size_t)a->top_n };
	struct td_render r = { .out = stdout, .format = a->cli.format, .color = td_render_wants_color(stdout),
			       .all_threads = a->all_threads };
	int ret = td_run_selection_filter(&a->cli.sel, store, &q.runs, err, errlen);

	return ret ? ret : run_mode(store, a, &q, &r, err, errlen);
}

int td_cmd_query(int argc, char **argv)
{
	struct query_args a = { 0 };
	int ret;

	td_query_cli_init(&a.cli, &argc, argv);
	ret = parse_args(argc, argv, &a);
	if (ret == 0)
		ret = td_query_cli_run(&a.cli, "query", TD_STORE_READ_ONLY, query, &a);
	td_query_cli_release(&a.cli);
	return ret < 0 ? 0 : ret;
}
