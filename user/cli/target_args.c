// SPDX-License-Identifier: BSD-3-Clause
/* The target options of collect and top (target_args.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "procmatch.h"
#include "target_args.h"

int td_target_args_take(struct td_target_args *t, int opt, const char *arg, char *err, size_t errlen)
{
	switch (opt) {
	case 'p':
		t->process = arg;
		break;
	case 'P':
		if (td_parse_pid_list(arg, t->pids, TD_TARGET_MAX_PIDS, &t->nr_pids, err, errlen))
			return -EINVAL;
		break;
	case 'a':
		t->system_wide = true;
		break;
	default:
		return 0;
	}
	t->given++;
	return 1;
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
