/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The run: what one collection (or import) produced, in the shape every
 * later stage shares. The collector fills threads and intervals, the kb
 * engine appends metric rows, storage writes it as given.
 *
 * Ownership: td_run_new() allocates, td_run_free() releases everything
 * the run points to, including strings and arrays added with the helpers.
 * The metric rows' strings are interned: each distinct one is stored once
 * in run->strings and every row that uses it points there, so half a
 * million rows cost a few thousand strings, not a million and a half.
 */
#ifndef TOPDOWN_RUN_H
#define TOPDOWN_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "labels.h"
#include "name_index.h"
#include "profile.h"

#define TD_MAX_EVENTS 96 /* events a run may count, rotating groups of up to TD_MAX_SLOTS */
#define TD_COMM_LEN 16
#define TD_RUN_ID_LEN 37 /* UUID text plus NUL */

/* One counter of one thread over a span: the count already scaled by
 * enabled/running, and the fraction of the span it was really counted. */
struct td_counter_value {
	double value;            /* NaN when the event never ran */
	double running_fraction; /* 0..1 */
};

/* Scheduling figures and counters of one thread over a span. */
struct td_thread_row {
	uint32_t tid;
	uint32_t pid;
	char comm[TD_COMM_LEN];
	bool exited;
	uint64_t oncpu_ns;
	uint64_t voluntary_switches;
	uint64_t involuntary_switches;
	uint64_t migrations;
	uint64_t runq_wait_ns;
	struct td_counter_value counters[TD_MAX_EVENTS]; /* by run->event_names index */
};

/* The threads seen in one periodic sample inside the run. */
struct td_interval {
	uint32_t seq;
	int64_t start_ns; /* wall clock, ns since the Unix epoch */
	int64_t end_ns;
	size_t nr_threads;
	struct td_thread_row *threads;
};

/* What a metric row describes. */
enum td_metric_scope {
	TD_SCOPE_THREAD,  /* scope_key: tid in decimal */
	TD_SCOPE_GROUP,   /* scope_key: thread name with digits folded, io_thd_* */
	TD_SCOPE_PROCESS, /* scope_key: pid in decimal */
};

/*
 * One node of a TMA tree, for one scope, for the whole run or one interval.
 * In a run's metrics[] the strings are the run's (td_run_intern): shared
 * with other rows, alive until td_run_free(), never freed one by one.
 */
struct td_metric_row {
	enum td_metric_scope scope;
	const char *scope_key;
	int32_t interval_seq; /* -1: the whole run */
	const char *path;     /* dotted: Backend_Bound.Memory_Bound */
	const char *parent;   /* dotted path of the parent, NULL at the top */
	int level;
	double value;         /* fraction 0..1 for tree nodes; NaN when undefined */
	bool threshold_crossed;
	double confidence;    /* fraction of the run its events were counted */
	uint64_t counted_ns;  /* the on-CPU time that is: confidence x the scope's on-CPU
			       * time, so that spans add up (query.h, "Pooled"); 0 when
			       * unknown (rows stored before it was kept, imports) */
};

struct td_run {
	char id[TD_RUN_ID_LEN];
	int64_t started_ns; /* wall clock, ns since the Unix epoch */
	int64_t ended_ns;
	char *process;      /* target as the user named it: a name, pids, or "system-wide" */
	int level;          /* requested TMA level, 0 when none */
	char *collector;    /* "bpf" or "import" */
	struct td_labels labels;
	uint64_t dropped;   /* threads or exit records the kernel side could not keep */
	bool partial;       /* the window was cut short */

	size_t nr_events;
	char *event_names[TD_MAX_EVENTS];

	size_t nr_threads; /* whole-run totals per thread */
	struct td_thread_row *threads;

	size_t nr_intervals;
	struct td_interval *intervals;

	size_t nr_metrics, cap_metrics;
	struct td_metric_row *metrics;
	struct td_name_index strings; /* the rows' strings, each distinct one once */

	struct td_profile *profile; /* locate's sampled stacks; NULL when the run did not sample */
};

/* A run with a fresh random UUID and empty contents; NULL when out of memory. */
struct td_run *td_run_new(void);
void td_run_free(struct td_run *run);

/* Fill buf (TD_RUN_ID_LEN bytes) with a random version 4 UUID. */
int td_uuid_v4(char *buf);

/*
 * The run's copy of s (not NULL): the same pointer for every equal
 * string, alive until td_run_free(). NULL when out of memory.
 */
const char *td_run_intern(struct td_run *run, const char *s);

/* Appends a copy of row, its strings interned; -ENOMEM on failure. */
int td_run_add_metric(struct td_run *run, const struct td_metric_row *row);

/*
 * Appends a copy of row whose strings are already the run's (each one
 * td_run_intern returned, or NULL): nothing is looked up, so a producer
 * of many rows interns each distinct string once. -ENOMEM on failure.
 */
int td_run_append_metric(struct td_run *run, const struct td_metric_row *row);

#endif
