/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Locate's questions over stored profiles: the hot functions (self and
 * total share of the samples), the folded stacks a flame graph is drawn
 * from, and what got hotter or cooler between two sets of runs. The
 * CLI, MCP and the report call these; they print nothing.
 *
 * A function is a name in a module: its inlined copies in other
 * functions and its addresses all count as one. Self: samples whose
 * innermost frame it is. Total: samples with it anywhere on the stack,
 * a recursive one counted once. Shares are of all samples in scope (the
 * threads asked for, over the runs asked for).
 */
#ifndef TOPDOWN_HOT_H
#define TOPDOWN_HOT_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "query.h"

/*
 * The profiles of the runs a filter selects, read once: what every
 * question here starts from, and what exporters (pprof) walk themselves.
 * profiles[i] is runs[i]->profile; the list owns the runs.
 */
struct td_profile_list {
	struct td_run **runs;
	const struct td_profile **profiles;
	size_t count;
};

/* The runs of filter that have a profile, newest first; TD_QUERY_NOTHING with a hint when none. */
int td_read_profiles(struct td_store *store, const struct td_run_filter *filter, struct td_profile_list *l,
		     char *err, size_t errlen);
/* Leaves l empty: releasing it again is harmless. */
void td_profile_list_release(struct td_profile_list *l);

/* Whether a stack is of the thread asked for: thread NULL (all), a tid in
 * decimal, or a thread name matched as its group (TD_SCOPE_GROUP). */
bool td_profile_stack_in_scope(const struct td_profile_stack *s, const char *thread);

struct td_hot_function {
	char *name;       /* the frame's name: function, or module+0xoffset, or a marker */
	char *module;     /* NULL when unknown */
	char *file;       /* the source line that took most of its self samples (else any); NULL without */
	uint32_t line;
	uint64_t self_count, total_count;
	double self_share, total_share; /* fractions of td_hot.samples */
};

struct td_hot {
	size_t nr_runs;       /* runs with a profile that matched */
	char *event;          /* what was sampled, as the newest run says; "mixed" when runs differ */
	char *unit;
	uint64_t samples;     /* samples of the threads in scope */
	uint64_t lost_samples; /* of the runs, samples without a stack or not counted */
	double unresolved_share; /* frames without a function name, sample-weighted */
	size_t nr_functions;
	struct td_hot_function *functions; /* by self count, then total, then name */
};

/*
 * The hot functions of the runs q selects, for q->thread (NULL: every
 * thread), at most q->top_n (0: all). TD_QUERY_NOTHING when no matching
 * run has a profile, or its threads have no samples.
 */
int td_query_hot(struct td_store *store, const struct td_query *q, struct td_hot **out, char *err, size_t errlen);
void td_hot_free(struct td_hot *hot);

/* The same over profiles in memory (what collect shows of its own run). */
int td_profiles_hot(const struct td_profile *const *profiles, size_t n, const char *thread, size_t top_n,
		    struct td_hot **out, char *err, size_t errlen);

/*
 * Folded stacks: one line per distinct stack, "group;frame;...;frame"
 * outermost first, led by the thread group (thread names with digits
 * folded, as TD_SCOPE_GROUP), with its count in the new set and in the
 * base set (a differential graph; 0 without a base).
 */
struct td_folded {
	char *stack;
	uint64_t count;
	uint64_t base_count;
};

struct td_folded_set {
	size_t nr_runs, nr_base_runs;
	char *event, *unit;
	uint64_t samples, base_samples;
	size_t nr_stacks;
	struct td_folded *stacks; /* sorted by stack text */
};

/* base NULL: one set. TD_QUERY_NOTHING when the (new) set has no samples. */
int td_query_folded(struct td_store *store, const struct td_query *q, const struct td_query *base,
		    struct td_folded_set **out, char *err, size_t errlen);
void td_folded_set_free(struct td_folded_set *set);

/*
 * What moved between two sets of runs, by self share: every function of
 * either side, the largest rise first and the largest fall last (a
 * renderer shows both ends). top_n of the queries is not applied.
 */
struct td_hot_change {
	char *name;
	char *module;
	double base_self_share, self_share; /* 0 where the function has no samples */
	double delta;                       /* self_share - base_self_share */
};

struct td_hot_comparison {
	struct td_hot *base, *current;
	size_t nr_changes;
	struct td_hot_change *changes; /* by delta, largest rise first */
};

int td_compare_hot(struct td_store *store, const struct td_query *base, const struct td_query *current,
		   struct td_hot_comparison **out, char *err, size_t errlen);
void td_hot_comparison_free(struct td_hot_comparison *c);

#endif
