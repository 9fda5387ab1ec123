/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A run's threads as a person reads them: one row per thread-name group
 * (short_* with its thread count, exited count and summed figures), the
 * busiest first, then the busiest threads themselves. Programs read
 * --json, which keeps every thread.
 */
#ifndef TOPDOWN_THREAD_TABLE_H
#define TOPDOWN_THREAD_TABLE_H

#include <stddef.h>
#include <stdio.h>

#include "run.h"

/* The threads of one name group, added up: sum.comm holds the group's name. */
struct td_thread_group_row {
	struct td_thread_row sum; /* scheduling figures and counter values summed (NaN only if all are) */
	size_t threads, exited;
};

/*
 * Folds rows[0..n) by thread-name group (td_thread_group_name), busiest
 * (most on-CPU time) first. *out is malloc'd; the number of groups, or
 * -ENOMEM.
 */
long td_fold_thread_rows(const struct td_thread_row *rows, size_t n, size_t nr_events,
			 struct td_thread_group_row **out);

/*
 * The groups, then the busiest max_threads threads (all of them with
 * SIZE_MAX), each table with the run's events when with_counters. Says
 * how many threads it left out, and how to see them (more_hint).
 */
void td_print_thread_table(FILE *out, const struct td_run *run, int with_counters, size_t max_threads,
			   const char *more_hint);

#endif
