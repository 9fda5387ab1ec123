/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the counting commands share on the command line. Targets (collect,
 * top): --process NAME, --pid PID[,PID...] or --system-wide, exactly one,
 * with the same checks and the same one-line errors in every command.
 * Sampling (collect, agent, install-service): --sample[=EVENT] and its
 * rate, decided in one place.
 */
#ifndef TOPDOWN_TARGET_ARGS_H
#define TOPDOWN_TARGET_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cli_options.h"
#include "collector.h"

#define TD_TARGET_MAX_PIDS 64

struct td_target_args {
	bool system_wide;
	pid_t pids[TD_TARGET_MAX_PIDS];
	size_t nr_pids;
	const char *process;
	int given; /* how many target options the user typed */
};

/* One target option into the struct td_target_args field (a td_opt_call_fn). */
int td_target_option(void *field, const struct td_opt *opt, const char *value, char *err, size_t errlen);

/* The target options, into the struct td_target_args field of type. */
#define TD_OPTS_TARGET(type, field) \
	TD_OPTION("process", TD_OPT_CALL, offsetof(type, field), "NAME", \
		  "the threads of the processes named NAME (their comm)", .call = td_target_option, \
		  .short_name = 'p'), \
	TD_OPTION("pid", TD_OPT_CALL, offsetof(type, field), "PID[,PID...]", "the threads of these processes", \
		  .call = td_target_option, .short_name = 'P'), \
	TD_OPTION("system-wide", TD_OPT_CALL, offsetof(type, field), NULL, "every thread on every CPU", \
		  .call = td_target_option, .short_name = 'a')

/*
 * --sample[=EVENT] and --sample-freq HZ, into the fields sample_field
 * (bool), event_field (const char *) and freq_field (uint64_t, 0 unless
 * given) of type; group tags the entries (TD_OPT_GROUP_AGENT, or 0).
 */
#define TD_OPTS_SAMPLE(type, sample_field, event_field, freq_field, group_) \
	TD_OPTION("sample", TD_OPT_TEXT, offsetof(type, event_field), "EVENT", \
		  "also sample the targets' stacks (locate): EVENT, or the default (cycles; cpu-clock " \
		  "without a hardware PMU); topdown query --hot and flamegraph read them", \
		  .optional = true, .sets = true, .set_offset = offsetof(type, sample_field), .group = (group_)), \
	TD_OPTION("sample-freq", TD_OPT_U64, offsetof(type, freq_field), "HZ", \
		  "samples per second per CPU (default 99)", .min = 1, .max = 1000000, .short_name = 'F', \
		  .group = (group_))

/*
 * How often to sample, decided once for every command: --sample-freq or
 * --sample-period (0: not given), each only with --sample, not both;
 * --sample-for NODE (NULL: not given) instead of --sample=EVENT. 0, or
 * -EINVAL with err.
 */
int td_sample_options_check(bool sample, const char *event, const char *node, uint64_t freq_hz,
			    uint64_t period, char *err, size_t errlen);

/* After the options: exactly one target, and a process name that can match. */
int td_target_args_check(const struct td_target_args *t, char *err, size_t errlen);

/* "system-wide", the process name, or the pids joined by commas; malloc'd, NULL without memory. */
char *td_target_args_describe(const struct td_target_args *t);

/* Points the collector's target fields at t (which must outlive opts). */
void td_target_args_to_opts(const struct td_target_args *t, struct td_collector_opts *opts);

#endif
