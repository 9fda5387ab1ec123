// SPDX-License-Identifier: BSD-3-Clause
#include <errno.h>
#include <stdio.h>

#include "agent_options.h"
#include "format.h"

int td_agent_options_check(size_t nr_process_names, bool system_wide, uint64_t every_ns,
			   uint64_t duration_ns, char *err, size_t errlen)
{
	char every[32], duration[32];

	if (!nr_process_names == !system_wide) {
		snprintf(err, errlen, "name the targets: --process NAME (repeatable) or --system-wide, not both");
		return -EINVAL;
	}
	if (every_ns < TD_AGENT_MIN_EVERY_NS) {
		snprintf(err, errlen, "--every %s is shorter than 10ms; windows that short cost more than they tell",
			 td_format_duration(every_ns, every, sizeof(every)));
		return -EINVAL;
	}
	if (duration_ns > every_ns) {
		snprintf(err, errlen, "--duration %s is longer than the --every %s window; count at most the whole window",
			 td_format_duration(duration_ns, duration, sizeof(duration)),
			 td_format_duration(every_ns, every, sizeof(every)));
		return -EINVAL;
	}
	return 0;
}
