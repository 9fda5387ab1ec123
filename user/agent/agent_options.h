/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The checks `topdown agent` makes of its targets and window, shared with
 * `topdown install-service`, so that a service is never installed with
 * options its agent would refuse at every start.
 */
#ifndef TOPDOWN_AGENT_OPTIONS_H
#define TOPDOWN_AGENT_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TD_AGENT_DEFAULT_EVERY_NS (60 * 1000000000ull) /* --every */
#define TD_AGENT_MIN_EVERY_NS (10 * 1000000ull)        /* shorter windows cost more than they tell */

/*
 * Targets: --process names or --system-wide, exactly one of them. Window:
 * --every at least TD_AGENT_MIN_EVERY_NS, --duration (0: all of it)
 * within it. 0, or -EINVAL with one sentence in err.
 */
int td_agent_options_check(size_t nr_process_names, bool system_wide, uint64_t every_ns,
			   uint64_t duration_ns, char *err, size_t errlen);

#endif
