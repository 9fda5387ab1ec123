// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown report: the funnel, tree, threads, trends, comparison, hot
 * functions and flame graph of the selected runs as one HTML page
 * (user/render/report.c). Each part is the answer of the query the CLI's
 * own mode gives, asked the same way; this file runs them and leaves out
 * the parts that have nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "fileio.h"
#include "format.h"
#include "hot.h"
#include "query.h"
#include "query_cli.h"
#include "report.h"

#define MAX_TRENDS 32

struct report_args {
	struct td_query_cli cli;
	struct td_labels labels_a, labels_b;
	const char *run_a, *run_b;
	const char *trends[MAX_TRENDS]; /* --trend NODE; none: the level-1 nodes */
	size_t nr_trends;
	const char *output;
};

/* What the queries answered; NULL where a part has nothing. */
struct parts {
	struct td_tree *tree;
	struct td_thread_breakdown *threads;
	struct td_trend *trends[MAX_TRENDS];
	size_t nr_trends;
	struct td_comparison *comparison;
	struct td_hot *hot;
	struct td_folded_set *folded;
	char hint[512];     /* the first empty answer's hint: said when every part is empty */
	char left_out[512]; /* the first of a part asked for by name (--trend, a comparison) */
};

/* --trend NODE, repeatable. */
static int add_trend(void *field, const struct td_opt *opt, const char *value, char *err, size_t errlen)
{
	struct report_args *a = field;

	(void)opt;
	if (!*value || a->nr_trends == MAX_TRENDS) {
		snprintf(err, errlen, "--trend takes a node name (e.g. DRAM_Bound), at most %d times", MAX_TRENDS);
		return -EINVAL;
	}
	a->trends[a->nr_trends++] = value;
	return 0;
}

static const struct td_opt report_options[] = {
	TD_OPTION("label-a", TD_OPT_LABEL, offsetof(struct report_args, labels_a), "key=value",
	  "compare: side A, the runs with this label (repeatable)"),
	TD_OPTION("label-b", TD_OPT_LABEL, offsetof(struct report_args, labels_b), "key=value",
	  "compare: side B, against A (repeatable)"),
	TD_OPTION("trend", TD_OPT_CALL, 0, "NODE", "the trend of NODE (repeatable; default: the level-1 nodes)",
	  .call = add_trend),
	TD_OPTION("output", TD_OPT_NAME, offsetof(struct report_args, output), "FILE", "write the page here (- : stdout)"),
	TD_OPTS_RUN_FILTERS(struct report_args, cli),
	{ 0 }
};

static const struct td_cli report_command = {
	.command = "report",
	.synopsis = "usage: topdown report [--label key=value]... [--process NAME] [--last 24h] [--run-id ID]\n"
		    "                      [--trend NODE]... [--output FILE]\n"
		    "       topdown report RUN_A RUN_B [...]         with the comparison of B against A\n"
		    "       topdown report --label-a key=value... --label-b key=value... [...]\n",
	.notes = "Writes one HTML page (inline style and script: it opens offline and prints) with the\n"
		 "funnel and tree of the selected runs, the threads of the newest one (or of --run-id),\n"
		 "the trend of each --trend NODE (default: the level-1 nodes), the comparison of A and B,\n"
		 "and the hot functions and flame graph of runs collected with --sample. A part with\n"
		 "nothing to show is left out; without --output (or with --output -) the page goes to stdout.\n",
	.opts = report_options,
	.max_operands = -1, /* two run ids, or none: sides_problem says */
};

static int usage_error(const char *message)
{
	return td_cli_usage_error(&report_command, message);
}

/* No comparison, or one by two run ids or by two label sets. */
static const char *sides_problem(const struct report_args *a, int nr_args)
{
	const char *problem = td_query_cli_sides_problem(&a->labels_a, &a->labels_b, nr_args);

	if (a->cli.format != TD_FORMAT_TABLE)
		return "a report is an HTML page: --json and --csv do not apply (topdown query --json does)";
	if (problem)
		return problem;
	if (nr_args != 0 && nr_args != 2)
		return "a comparison takes two run ids (topdown report RUN_A RUN_B)";
	return NULL;
}

static int parse_args(int argc, char **argv, struct report_args *a)
{
	struct td_cli_seen seen;
	int ret = td_cli_read(&report_command, argc, argv, a, &seen);

	if (ret)
		return ret;
	if (sides_problem(a, seen.nr_operands))
		return usage_error(sides_problem(a, seen.nr_operands));
	if (seen.nr_operands) {
		a->run_a = seen.operands[0];
		a->run_b = seen.operands[1];
	}
	return 0;
}

/* An empty answer leaves its part out: no failure, but a part asked for by
 * name is said to be missing, lest the page look complete. */
static int part(int ret, struct parts *p, bool asked, const char *err)
{
	if (ret != TD_QUERY_NOTHING)
		return ret;
	if (!p->hint[0])
		snprintf(p->hint, sizeof(p->hint), "%s", err);
	if (asked && !p->left_out[0])
		snprintf(p->left_out, sizeof(p->left_out), "%s", err);
	return 0;
}

/* "git_branch=main, build=old" into buf at used; the new length. */
static size_t describe_labels(const struct td_labels *labels, char *buf, size_t len, size_t used)
{
	for (size_t i = 0; i < labels->count && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s=%s", used ? ", " : "", labels->items[i].key,
					 labels->items[i].value);
	return used;
}

/* The selection, for the page's heading. */
static void describe_selection(const struct td_run_selection *sel, char *buf, size_t len)
{
	size_t used = describe_labels(&sel->labels, buf, len, 0);

	if (sel->process && used < len)
		used += (size_t)snprintf(buf + used, len - used, "%sprocess %s", used ? ", " : "", sel->process);
	if (sel->last_ns && used < len)
		used += (size_t)snprintf(buf + used, len - used, "%sthe last %.0f h", used ? ", " : "",
					 (double)sel->last_ns / 3.6e12);
	if (sel->run_id && used < len)
		used += (size_t)snprintf(buf + used, len - used, "%srun %s", used ? ", " : "", sel->run_id);
	if (!used)
		snprintf(buf, len, "all runs");
}

static const char *describe_side(const char *run, const struct td_labels *labels, char *buf, size_t len)
{
	if (run)
		snprintf(buf, len, "run %s", run);
	else
		describe_labels(labels, buf, len, 0);
	return buf;
}

/* The trend of each asked node, or of each level-1 node of the tree. */
static int query_trends(struct td_store *store, const struct report_args *a, const struct td_query *q,
			struct parts *p, char *err, size_t errlen)
{
	struct td_query tq = *q;
	const char *nodes[MAX_TRENDS];
	size_t n = 0;
	int ret = 0;

	tq.top_n = TD_REPORT_TREND_POINTS;
	for (size_t i = 0; i < a->nr_trends; i++)
		nodes[n++] = a->trends[i];
	for (size_t i = 0; !a->nr_trends && p->tree && i < p->tree->nr_nodes && n < MAX_TRENDS; i++)
		if (p->tree->nodes[i].level == 1)
			nodes[n++] = p->tree->nodes[i].path;
	for (size_t i = 0; !ret && i < n; i++)
		ret = part(td_query_trend(store, &tq, nodes[i], TD_TREND_WINDOW, TD_TREND_SIGMA,
					  &p->trends[p->nr_trends++], err, errlen), p, a->nr_trends > 0, err);
	return ret;
}

static int query_comparison(struct td_store *store, struct report_args *a, const struct td_run_filter *shared,
			    struct parts *p, char *err, size_t errlen)
{
	struct td_compare_args args = { .threshold = TD_COMPARE_THRESHOLD };
	char id_a[TD_RUN_ID_LEN], id_b[TD_RUN_ID_LEN];
	int ret = td_query_cli_side_filter(store, shared, a->run_a, id_a, &a->labels_a, &args.a, err, errlen);

	if (!ret)
		ret = td_query_cli_side_filter(store, shared, a->run_b, id_b, &a->labels_b, &args.b, err, errlen);
	return ret ? ret : part(td_compare(store, &args, &p->comparison, err, errlen), p, true, err);
}

static int query_parts(struct td_store *store, struct report_args *a, struct parts *p, char *err, size_t errlen)
{
	struct td_query q = { 0 }, hot_q;
	int ret = td_run_selection_filter(&a->cli.sel, store, &q.runs, err, errlen);

	if (!ret)
		ret = part(td_query_tree(store, &q, &p->tree, err, errlen), p, false, err);
	if (!ret)
		ret = part(td_query_threads(store, &q, NULL, &p->threads, err, errlen), p, false, err);
	if (!ret)
		ret = query_trends(store, a, &q, p, err, errlen);
	if (!ret && (a->run_a || a->labels_a.count)) {
		struct td_run_filter shared = q.runs;

		shared.run_id = NULL; /* --run-id picks the run of the other parts, not a side */
		ret = query_comparison(store, a, &shared, p, err, errlen);
	}
	hot_q = q;
	hot_q.top_n = TD_REPORT_HOT_FUNCTIONS;
	if (!ret)
		ret = part(td_query_hot(store, &hot_q, &p->hot, err, errlen), p, false, err);
	if (!ret)
		ret = part(td_query_folded(store, &q, NULL, &p->folded, err, errlen), p, false, err);
	return ret;
}

static int write_page(FILE *out, void *ctx, char *err, size_t errlen)
{
	return td_report_html(out, ctx, err, errlen);
}

static void parts_free(struct parts *p)
{
	td_tree_free(p->tree);
	td_thread_breakdown_free(p->threads);
	for (size_t i = 0; i < p->nr_trends; i++)
		td_trend_free(p->trends[i]);
	td_comparison_free(p->comparison);
	td_hot_free(p->hot);
	td_folded_set_free(p->folded);
}

static int report(struct td_store *store, void *args, char *err, size_t errlen)
{
	struct report_args *a = args;
	char title[512], side_a[256], side_b[256];
	struct parts p = { 0 };
	int ret = query_parts(store, a, &p, err, errlen);
	struct td_report r = {
		.title = title, .tree = p.tree, .threads = p.threads,
		.trends = (const struct td_trend *const *)p.trends, .nr_trends = p.nr_trends,
		.comparison = p.comparison, .hot = p.hot, .folded = p.folded,
	};

	describe_selection(&a->cli.sel, title, sizeof(title));
	if (p.comparison) {
		r.side_a = describe_side(a->run_a, &a->labels_a, side_a, sizeof(side_a));
		r.side_b = describe_side(a->run_b, &a->labels_b, side_b, sizeof(side_b));
	}
	if (!ret)
		ret = td_write_output(a->output, write_page, &r, err, errlen);
	if (ret == TD_QUERY_NOTHING && p.hint[0]) /* every part was empty: say why the first one was */
		snprintf(err, errlen, "%s", p.hint);
	if (!ret && a->output && strcmp(a->output, "-") != 0) { /* the title names runs and labels */
		char safe_path[TD_SAFE_LEN(1024)], safe_title[TD_SAFE_LEN(256)];

		fprintf(stderr, "topdown report: %s: %s\n", td_safe_text(a->output, safe_path, sizeof(safe_path)),
			td_safe_text(title, safe_title, sizeof(safe_title)));
	}
	if (!ret && p.left_out[0])
		fprintf(stderr, "topdown report: left out, with nothing to show: %s\n", p.left_out);
	parts_free(&p);
	return ret;
}

int td_cmd_report(int argc, char **argv)
{
	struct report_args a = { 0 };
	int ret;

	td_query_cli_init(&a.cli);
	td_labels_init(&a.labels_a);
	td_labels_init(&a.labels_b);
	ret = parse_args(argc, argv, &a);
	if (ret == 0)
		ret = td_query_cli_run(&a.cli, "report", TD_STORE_READ_ONLY, report, &a);
	td_labels_free(&a.labels_a);
	td_labels_free(&a.labels_b);
	td_query_cli_release(&a.cli);
	return ret < 0 ? 0 : ret;
}
