// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown compare: what changed between two runs, or between two sets of
 * runs chosen by labels, tested with Welch's t-test (td_compare in
 * user/query/query.c). --fail-on-regression turns a regression into exit code 3
 * for CI gates.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "parse.h"
#include "query.h"
#include "query_cli.h"
#include "query_render.h"

#define DEFAULT_THRESHOLD_PP (100 * TD_COMPARE_THRESHOLD)

struct compare_args {
	struct td_query_cli cli;      /* --process, --last, --label (both sides), output */
	struct td_labels labels_a, labels_b;
	const char *run_a, *run_b;
	double threshold_pp, alpha;
	bool fail_on_regression, threads, hot;
	const char *thread;           /* --thread, with --hot */
	long level, top_n;
};

static const struct td_opt compare_options[] = {
	TD_OPTION("label-a", TD_OPT_LABEL, offsetof(struct compare_args, labels_a), "key=value",
	  "side A: the runs with this label (repeatable)"),
	TD_OPTION("label-b", TD_OPT_LABEL, offsetof(struct compare_args, labels_b), "key=value",
	  "side B: the runs with this label (repeatable)"),
	TD_OPTION("threshold", TD_OPT_NUMBER, offsetof(struct compare_args, threshold_pp), "PP",
	  "the smallest change that counts, in percentage points (default 1)", .low = 0, .high = 100),
	TD_OPTION("alpha", TD_OPT_NUMBER, offsetof(struct compare_args, alpha), "P",
	  "the t-test's significance level (default 0.05)", .low = 0.000001, .high = 0.5),
	TD_OPTION("fail-on-regression", TD_OPT_FLAG, offsetof(struct compare_args, fail_on_regression), NULL,
	  "exit 3 when a regression is found"),
	TD_OPTION("threads", TD_OPT_FLAG, offsetof(struct compare_args, threads), NULL, "compare thread names' trees too"),
	TD_OPTION("hot", TD_OPT_FLAG, offsetof(struct compare_args, hot), NULL,
	  "which functions got hotter or cooler (runs collected with --sample), by self share"),
	TD_OPTION("thread", TD_OPT_TEXT, offsetof(struct compare_args, thread), "NAME|TID", "with --hot: one thread's samples"),
	TD_OPTION("level", TD_OPT_INT, offsetof(struct compare_args, level), "N", "the tree's depth, 1 to 4", .min = 1, .max = 4),
	TD_OPTION("top-n", TD_OPT_INT, offsetof(struct compare_args, top_n), "N", "rows each way (default 10)",
	  .min = 1, .max = 1000000),
	TD_OPTS_RUN_FILTERS(struct compare_args, cli),
	{ 0 }
};

static const struct td_cli compare_command = {
	.command = "compare",
	.synopsis = "usage: topdown compare RUN_A RUN_B [OPTIONS]\n"
		    "       topdown compare --label-a key=value... --label-b key=value... [--label key=value]...\n"
		    "                       [--process NAME] [--last 7d] [OPTIONS]\n",
	.notes = "B is compared against A with Welch's t-test; --threshold (percentage points, default 1)\n"
		 "is the smallest change that counts; --fail-on-regression exits 3 when one is found.\n",
	.opts = compare_options,
	.max_operands = -1, /* two run ids, or none: sides_problem says */
};

static int usage_error(const char *message)
{
	return td_cli_usage_error(&compare_command, message);
}

/* Two run ids, or two label sets: one way to name the sides. */
static const char *sides_problem(const struct compare_args *a, int nr_args)
{
	bool by_labels = a->labels_a.count || a->labels_b.count;
	const char *problem = td_query_cli_sides_problem(&a->labels_a, &a->labels_b, nr_args);

	if (a->cli.sel.run_id)
		return "compare takes its two run ids as arguments, not --run-id";
	if (problem)
		return problem;
	if (!by_labels && nr_args != 2)
		return "name two runs (topdown compare RUN_A RUN_B) or two label sets "
		       "(--label-a key=value --label-b key=value)";
	return NULL;
}

static int parse_args(int argc, char **argv, struct compare_args *a)
{
	struct td_cli_seen seen;
	int ret = td_cli_read(&compare_command, argc, argv, a, &seen);

	if (ret)
		return ret;
	if (sides_problem(a, seen.nr_operands))
		return usage_error(sides_problem(a, seen.nr_operands));
	if (a->thread && !a->hot)
		return usage_error("--thread goes with --hot (--threads compares thread names' trees)");
	if (a->hot && (a->threads || a->fail_on_regression || a->level || a->threshold_pp != DEFAULT_THRESHOLD_PP ||
		       a->alpha))
		return usage_error("--hot compares where samples land: --threads, --level, --threshold, --alpha and "
				   "--fail-on-regression go with the Top-Down comparison");
	if (seen.nr_operands) {
		a->run_a = seen.operands[0];
		a->run_b = seen.operands[1];
	}
	return 0;
}

/* compare --hot: the same two sides, over where their samples land. */
static int compare_hot(const struct compare_args *a, struct td_store *store, const struct td_compare_args *args,
		       const struct td_render *r, char *err, size_t errlen)
{
	struct td_query base = { .runs = args->a, .thread = a->thread };
	struct td_query current = { .runs = args->b, .thread = a->thread };
	struct td_hot_comparison *c = NULL;
	int ret = td_compare_hot(store, &base, &current, &c, err, errlen);

	if (ret == 0)
		td_render_hot_comparison(r, c, a->top_n ? (size_t)a->top_n : 10);
	td_hot_comparison_free(c);
	return ret;
}

/* The comparison on store; TD_EXIT_REGRESSION when one was found and --fail-on-regression. */
static int compare(struct td_store *store, void *compare_args, char *err, size_t errlen)
{
	struct compare_args *a = compare_args;
	struct td_compare_args args = {
		.by_thread_name = a->threads, .max_level = (int)a->level,
		.threshold = a->threshold_pp / 100,
		.alpha = a->alpha, .top_n = (size_t)a->top_n,
	};
	struct td_render r = { .out = stdout, .format = a->cli.format,
			       .color = td_render_wants_color(stdout) };
	char id_a[TD_RUN_ID_LEN], id_b[TD_RUN_ID_LEN];
	struct td_comparison *result = NULL;
	struct td_run_filter shared;
	int ret = td_run_selection_filter(&a->cli.sel, store, &shared, err, errlen);

	if (ret == 0)
		ret = td_query_cli_side_filter(store, &shared, a->run_a, id_a, &a->labels_a, &args.a, err, errlen);
	if (ret == 0)
		ret = td_query_cli_side_filter(store, &shared, a->run_b, id_b, &a->labels_b, &args.b, err, errlen);
	if (ret == 0 && a->hot)
		return compare_hot(a, store, &args, &r, err, errlen);
	if (ret == 0)
		ret = td_compare(store, &args, &result, err, errlen);
	if (ret == 0) {
		td_render_comparison(&r, result);
		if (result->nr_regressions > 0 && a->fail_on_regression)
			ret = TD_EXIT_REGRESSION;
	}
	td_comparison_free(result);
	return ret;
}

int td_cmd_compare(int argc, char **argv)
{
	struct compare_args a = { 0 };
	int ret;

	a.threshold_pp = DEFAULT_THRESHOLD_PP;
	td_query_cli_init(&a.cli);
	td_labels_init(&a.labels_a);
	td_labels_init(&a.labels_b);
	ret = parse_args(argc, argv, &a);
	if (ret == 0)
		ret = td_query_cli_run(&a.cli, "compare", TD_STORE_READ_ONLY, compare, &a);
	td_labels_free(&a.labels_a);
	td_labels_free(&a.labels_b);
	td_query_cli_release(&a.cli);
	return ret < 0 ? 0 : ret;
}
