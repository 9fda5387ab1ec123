/* SPDX-License-Identifier: BSD-3-Clause */
/* What the files of user/query share and nobody else calls. */
#ifndef TOPDOWN_QUERY_INTERNAL_H
#define TOPDOWN_QUERY_INTERNAL_H

#include "query.h"

/* Which rows a question reads: the whole-run rows of processes, or of
 * q->thread (a tid, or a thread name's group). */
struct scope_choice {
	struct td_metric_filter filter;
	char group[TD_COMM_LEN * 2];
	char described[TD_COMM_LEN * 2 + 32]; /* " for thread X", for messages */
};

void td_query_choose_scope(const struct td_query *q, struct scope_choice *c);

/* Whether a thread (tid in decimal, comm) is one scope covers. */
bool td_query_thread_wanted(const struct scope_choice *scope, const char *tid, const char *comm);

/* "out of memory answering the query" in err; -ENOMEM. */
int td_query_no_memory(char *err, size_t errlen);

/* The tree of rows, one value per node (as one sample's), into tree's
 * nodes and totals; -ENOMEM. */
int td_tree_of_rows(const struct td_metric_row *rows, size_t n, size_t top_n, struct td_tree *tree);

/* td_query_tree with q->pooled (pooled.c). */
int td_query_pooled_tree(struct td_store *store, const struct td_query *q, struct td_tree **out,
			 char *err, size_t errlen);

/*
 * Why a question found no rows, as TD_QUERY_NOTHING with err saying so:
 * no run matches runs at all (side names them), or those that do have no
 * Top-Down rows (scope: " for thread X", or "").
 */
int td_query_nothing_found(struct td_store *store, const struct td_run_filter *runs,
			   const char *side, const char *scope, char *err, size_t errlen);

#endif
