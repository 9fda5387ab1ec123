// SPDX-License-Identifier: BSD-3-Clause
/* The target and sampling options of the counting commands (target_args.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "procmatch.h"
#include "target_args.h"

int td_target_option(void *field, const struct td_opt *opt, const char *value, char *err, size_t errlen)
{
	struct td_target_args *t = field;

	if (strcmp(opt->name, "process") == 0)
		t->process = value;
	else if (strcmp(opt->name, "pid") == 0 &&
		 td_parse_pid_list(value, t->pids, TD_TARGET_MAX_PIDS, &t->nr_pids, err, errlen))
		return -EINVAL;
	else if (strcmp(opt->name, "system-wide") == 0)
		t->system_wide = true;
	t->given++;
	return 0;
}

int td_sample_options_check(bool sample, const char *event, const char *node, uint64_t freq_hz,
			    uint64_t period, char *err, size_t errlen)
{
	const char *problem = NULL;

	if (freq_hz && !sample)
		problem = "--sample-freq sets the rate of --sample: give --sample too";
	else if (period && !sample)
		problem = "--sample-period sets the rate of --sample: give --sample too";
	else if (period && freq_hz)
		problem = "--sample-freq and --sample-period both set the rate: give one";
	else if (node && event)
		problem = "--sample-for chooses the event that --sample=EVENT names: give one or the other";
	else if (event && !*event)
		problem = "--sample= names no event: give --sample alone for the default, or --sample=EVENT";
	if (problem)
		snprintf(err, errlen, "%s", problem);
	return problem ? -EINVAL : 0;
}

int td_target_args_check(const struct td_target_args *t, char *err, size_t errlen)
{
	if (t->given != 1) {
		snprintf(err, errlen, "name exactly one target: --process NAME, --pid PID or --system-wide");
		return -EINVAL;
	}
	return t->process ? td_proc_name_check(t->process, err, errlen) : 0;
}

char *td_target_args_describe(const struct td_target_args *t)
{
	char buf[TD_TARGET_MAX_PIDS * 12] = "";
	size_t used = 0;

	if (t->system_wide)
		return strdup("system-wide");
	if (t->process)
		return strdup(t->process);
	for (size_t i = 0; i < t->nr_pids; i++)
		used += snprintf(buf + used, sizeof(buf) - used, "%s%d", i ? "," : "", t->pids[i]);
	return strdup(buf);
}

void td_target_args_to_opts(const struct td_target_args *t, struct td_collector_opts *opts)
{
	opts->system_wide = t->system_wide;
	opts->pids = t->pids;
	opts->nr_pids = t->nr_pids;
	opts->process_names = &t->process;
	opts->nr_process_names = t->process ? 1 : 0;
}
