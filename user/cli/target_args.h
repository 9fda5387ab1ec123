/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The target options the counting commands share (collect, top):
 * --process NAME, --pid PID[,PID...] or --system-wide, exactly one, with
 * the same checks and the same one-line errors in every command.
 */
#ifndef TOPDOWN_TARGET_ARGS_H
#define TOPDOWN_TARGET_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "collector.h"

#define TD_TARGET_MAX_PIDS 64

struct td_target_args {
	bool system_wide;
	pid_t pids[TD_TARGET_MAX_PIDS];
	size_t nr_pids;
	const char *process;
	int given; /* how many target options the user typed */
};

/*
 * Takes getopt_long's opt with its argument, where the command's table
 * gives "process" 'p', "pid" 'P' and "system-wide" 'a' (listed in each
 * table, where tests/check_cli_docs.sh reads them): 1 when it was
 * a target option, 0 when it is not one, -EINVAL with err on a bad value.
 */
int td_target_args_take(struct td_target_args *t, int opt, const char *arg, char *err, size_t errlen);

/* After the options: exactly one target, and a process name that can match. */
int td_target_args_check(const struct td_target_args *t, char *err, size_t errlen);

/* "system-wide", the process name, or the pids joined by commas; malloc'd, NULL without memory. */
char *td_target_args_describe(const struct td_target_args *t);

/* Points the collector's target fields at t (which must outlive opts). */
void td_target_args_to_opts(const struct td_target_args *t, struct td_collector_opts *opts);

#endif
