/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Questions over stored runs: where the slots go (tree, funnel), what
 * holds a run back (bottlenecks), which runs cross a line, how threads
 * differ, how a metric moves over time (trend), what changed between two
 * sets of runs (compare), and which labels the runs carry to choose them
 * by (labels). The CLI and the MCP server call the same functions: each
 * takes plain structs, returns a result struct the caller frees, prints
 * nothing, and on failure returns a negative errno with one sentence in
 * err.
 *
 * Nothing to answer. A question whose filters are valid but match no run,
 * or only runs without Top-Down rows, returns TD_QUERY_NOTHING with a hint
 * in err (what matched, and what would add runs): every face shows it as
 * an empty answer, not a failure (the CLI exits 0, an MCP tool returns an
 * empty result). An unknown run id, metric or label key is an error.
 *
 * Values are fractions 0..1 (NaN when undefined). Only whole-run tree
 * rows count (levels 1..4; Info metrics are left out).
 *
 * Samples. A question over several runs treats the rows of one run for
 * one scope key as one sample: one process (pid) of a run, or one thread
 * name of a run with --thread NAME, or one thread with --thread TID.
 * Means, spreads and tests are over samples.
 */
#ifndef TOPDOWN_QUERY_H
#define TOPDOWN_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <errno.h>

#include "stats.h"
#include "storage.h"

#define TD_QUERY_NOTHING (-ENODATA) /* nothing matches: an empty answer, err the hint */

/*
 * What a user selects runs by, as typed on the command line or given as
 * MCP arguments: both faces fill one and make the store's filter of it
 * with td_run_selection_filter.
 */
struct td_run_selection {
	struct td_labels labels;
	const char *process;
	uint64_t last_ns;        /* only runs that started this long ago or later; 0: any */
	const char *run_id;      /* a whole id or a unique prefix of at least 8 characters */
	char resolved_id[TD_RUN_ID_LEN];
};

void td_run_selection_init(struct td_run_selection *sel);
void td_run_selection_release(struct td_run_selection *sel);

/*
 * The run filter sel describes, its run id resolved against store (the
 * filter points into sel, which must outlive it). 0, or -errno with err
 * (an unknown or ambiguous id).
 */
int td_run_selection_filter(struct td_run_selection *sel, struct td_store *store,
			    struct td_run_filter *filter, char *err, size_t errlen);

/* Which runs a question covers and which part of each. */
struct td_query {
	struct td_run_filter runs; /* run_id must be a whole id: td_store_resolve_run_id() */
	const char *thread;        /* NULL: processes; a tid in decimal: that thread; else a
				    * thread name, matched as its group ("io_thd_3" and
				    * "io_thd_*" both mean the io_thd_* group) */
	int max_level;             /* deepest tree level; 0: every level */
	size_t top_n;              /* at most this many result rows (for trees: children
				    * per node, the largest kept); 0: all */
	bool pooled;               /* trees: from the runs' counts pooled (below) */
};

/* ---- tree and funnel ---- */

struct td_tree_node {
	char *path;          /* Backend_Bound.Memory_Bound */
	const char *name;    /* its last part, inside path */
	int level;           /* 1..4 */
	double value;        /* mean over the samples where it is defined */
	double min, max;
	size_t nr_values;    /* samples where it is defined */
	size_t nr_crossed;   /* samples where it crosses its threshold */
	bool crossed;        /* in more than half of nr_values */
	double confidence;   /* the lowest over the samples */
	bool low_confidence; /* below the engine's TD_CONFIDENCE_LOW */
	bool useful;         /* under Retiring: slots that did useful work */
	uint64_t counted_ns; /* the on-CPU time it was counted, summed over the samples
			      * (pooled: the least any of its events counted) */
};

struct td_tree {
	size_t nr_runs, nr_samples;
	size_t nr_nodes;
	struct td_tree_node *nodes; /* depth first: each node before its children,
				     * siblings in the order the engine wrote them */
	double useful;              /* the Retiring value (NaN without it) */
	double wasted;              /* the other level-1 values added up */
	bool pooled;                /* the fields below are set */
	uint64_t oncpu_ns;          /* the threads' on-CPU time pooled: what counted_ns is of */
	size_t nr_hosts;            /* distinct "node" labels among the runs */
	char model[32];             /* the runs' tma_model */
};

/*
 * -ENOENT (err says why) when no matching run has Top-Down rows.
 *
 * Pooled (q->pooled). Each run's whole-run thread counters (of every
 * thread, or of q->thread) are pooled before any formula is evaluated:
 * an event's count is the sum of what it counted (value x running
 * fraction) over all the on-CPU time its group had a counter, scaled to
 * all the on-CPU time. Windows of a host with few counters, each of
 * which counted some groups only, or hosts of one label set whose
 * rotations were offset, then give one tree from all the time each
 * group counted: a node's counted_ns says how much that was, its
 * confidence is counted_ns / oncpu_ns. The assumption is that the
 * pooled threads ran one workload: the same mix of work whichever
 * group was counting. One model (label tma_model, or cpu_model for
 * imports), SMT setting and slot width only (-EINVAL, naming the label to
 * narrow by); runs without a model label are skipped.
 * Without q->max_level the depth is the deepest tma_level of the runs.
 */
int td_query_tree(struct td_store *store, const struct td_query *q, struct td_tree **out,
		  char *err, size_t errlen);
void td_tree_free(struct td_tree *tree);

/* ---- bottlenecks ---- */

/*
 * A bottleneck of a sample is the deepest node on a branch of its tree
 * that crosses its threshold: a crossing node none of whose children (down
 * to max_level) cross.
 */
struct td_bottleneck {
	char *path;
	const char *name;
	int level;
	double value;        /* mean over the samples where it is a bottleneck */
	size_t nr_samples;   /* samples where it is a bottleneck */
	double confidence;   /* the lowest there */
	bool low_confidence;
};

struct td_bottlenecks {
	size_t nr_runs, nr_samples;
	size_t count;
	struct td_bottleneck *items; /* most frequent first, then largest */
};

int td_query_bottlenecks(struct td_store *store, const struct td_query *q,
			 struct td_bottlenecks **out, char *err, size_t errlen);
void td_bottlenecks_free(struct td_bottlenecks *b);

/* ---- runs where a node reaches a value ---- */

struct td_run_match {
	struct td_run_summary run;
	char *scope_key;     /* the pid, thread name or tid of the sample */
	char *path;
	double value;
	bool crossed;
	double confidence;
	bool low_confidence;
};

struct td_run_matches {
	size_t count;
	struct td_run_match *items; /* largest value first */
};

/* node: a dotted path or its end ("DRAM_Bound"), td_query_check_node()'d;
 * min_value a fraction. */
int td_query_runs_above(struct td_store *store, const struct td_query *q, const char *node,
			double min_value, struct td_run_matches **out, char *err, size_t errlen);
void td_run_matches_free(struct td_run_matches *m);

/* ---- threads of one run ---- */

struct td_thread_line {
	char *key;            /* tid in decimal, or the thread name (group) */
	char comm[TD_COMM_LEN];
	uint64_t oncpu_ns;    /* a group: its threads added up */
	size_t nr_threads;    /* 1, or the threads of the group */
	double *values;       /* one per column */
	bool *low_confidence; /* one per column */
};

struct td_thread_breakdown {
	struct td_run_summary run;
	size_t nr_columns;
	char **columns;                 /* paths, in tree order */
	size_t nr_threads, nr_groups;
	struct td_thread_line *threads; /* per thread */
	struct td_thread_line *groups;  /* per thread name */
};

/*
 * The run q->runs.run_id names, or else the newest matching run with
 * per-thread rows. Columns: nodes down to max_level (1 when 0). Lines are
 * sorted by sort_node (a column's path or end) when given, else by
 * on-CPU time, largest first; top_n limits each list.
 */
int td_query_threads(struct td_store *store, const struct td_query *q, const char *sort_node,
		     struct td_thread_breakdown **out, char *err, size_t errlen);
void td_thread_breakdown_free(struct td_thread_breakdown *t);

/* ---- trend ---- */

#define TD_TREND_MIN_HISTORY 3 /* earlier samples needed before flagging anomalies */
#define TD_TREND_WINDOW 10      /* the window and sigma every face asks with by default */
#define TD_TREND_SIGMA 3.0

struct td_trend_point {
	struct td_run_summary run;
	char *scope_key;
	double value;
	double mean, sd;     /* of the window of samples before this one */
	double deviation;    /* (value - mean) / sd; NaN without enough history */
	bool anomaly;        /* |deviation| > sigma */
	bool low_confidence;
};

struct td_trend {
	char *path;
	size_t window;
	double sigma;
	size_t count, nr_anomalies;
	struct td_trend_point *points; /* oldest first; top_n keeps the newest */
};

/* window: how many earlier samples each point is judged against (at least
 * TD_TREND_MIN_HISTORY for anomalies to be possible); sigma: how far off,
 * in their standard deviations, makes an anomaly. */
int td_query_trend(struct td_store *store, const struct td_query *q, const char *node,
		   size_t window, double sigma, struct td_trend **out, char *err, size_t errlen);
void td_trend_free(struct td_trend *t);

/* ---- compare ---- */

struct td_compare_args {
	struct td_run_filter a, b; /* each side; run_id for one run */
	bool by_thread_name;       /* per thread name (group rows), not per process */
	int max_level;             /* 0: every level */
	double threshold;          /* smallest change that counts, a fraction (2 pp: 0.02) */
	double alpha;              /* the p-value below which a change is real; 0: 0.05 */
	size_t top_n;
};

enum td_change {
	TD_CHANGE_NONE,        /* within the threshold, or not significant */
	TD_CHANGE_REGRESSION,
	TD_CHANGE_IMPROVEMENT,
	TD_CHANGE_ONLY_A,      /* the metric exists on side A only */
	TD_CHANGE_ONLY_B,
};

struct td_metric_change {
	char *group;            /* the thread name with by_thread_name, else NULL */
	char *path;
	const char *name;
	int level;
	bool higher_is_better;  /* Retiring and its children; stall categories are not */
	struct td_sample_stats a, b;
	double delta;           /* mean b - mean a */
	double p_value;         /* Welch's t-test, two-sided; NaN with < 2 samples a side */
	double effect_size;     /* Cohen's d; NaN with < 2 samples a side */
	enum td_change change;
	bool low_confidence;    /* a value on either side is low-confidence */
};

struct td_comparison {
	size_t nr_runs_a, nr_runs_b;
	size_t count;
	struct td_metric_change *items; /* regressions and improvements first, by effect
					 * size (by |delta| without one), then the others */
	size_t nr_regressions, nr_improvements;
};

/*
 * A change counts when |delta| >= threshold and, with two samples or more
 * on each side, Welch's p < alpha. -EINVAL when a run belongs to both
 * sides; -ENOENT when a side has no run with Top-Down rows.
 */
int td_compare(struct td_store *store, const struct td_compare_args *args,
	       struct td_comparison **out, char *err, size_t errlen);
void td_comparison_free(struct td_comparison *c);

const char *td_change_name(enum td_change change);

/* The threshold every face compares with by default: 1 percentage point. */
#define TD_COMPARE_THRESHOLD 0.01

/* ---- labels ---- */

struct td_label_count {
	char *value;
	size_t nr_runs;              /* runs carrying key=value */
};

struct td_label_key {
	char *key;
	size_t nr_runs;              /* runs carrying the key */
	size_t nr_values;            /* its distinct values, all of them */
	size_t count;                /* values kept (top_n) */
	struct td_label_count *values; /* most runs first, then by value */
};

struct td_label_set {
	size_t nr_runs;              /* runs looked at */
	size_t count;
	struct td_label_key *keys;   /* by key */
};

/*
 * The label keys of the runs matching filter (NULL: all; its limit, the
 * newest that many), or only key when not NULL, each with its values and
 * how many runs carry each; top_n keeps that many values per key (0:
 * all). -EINVAL when key cannot be a label key; -ENOENT (err saying what
 * is there) when no run matches, or none carries key.
 */
int td_query_labels(struct td_store *store, const struct td_run_filter *filter, const char *key,
		    size_t top_n, struct td_label_set **out, char *err, size_t errlen);
void td_label_set_free(struct td_label_set *set);

/* The last part of a dotted path: "DRAM_Bound". */
const char *td_node_name(const char *path);

/*
 * Whether node names Top-Down nodes some model knows: a node
 * ("DRAM_Bound"), a metric name, or a dotted path or its end
 * ("Memory_Bound.DRAM_Bound"), each part checked; any case. Every query
 * taking a node calls it first, so a typo is an error everywhere rather
 * than an empty answer: -EINVAL with "unknown metric 'Frontend_Bond'; did
 * you mean Frontend_Bound? ..." in err (td_explain_lookup's suggestions).
 */
int td_query_check_node(const char *node, char *err, size_t errlen);

/* Retiring and everything under it is better when higher. */
bool td_metric_higher_is_better(const char *path);

#endif
