// SPDX-License-Identifier: BSD-3-Clause
/* The agent's counter group rotation (rotation.h). */
#include "rotation.h"

#define MIN_SUB_INTERVAL_NS (10 * 1000000ll) /* a shorter turn costs more in switching than it counts */
#define MAX_SUB_INTERVAL_NS 1000000000ll    /* at least one turn a second: /proc is rescanned at each */

int64_t td_rotation_sub_interval_ns(int64_t counted_ns, size_t groups)
{
	int64_t n = groups ? (int64_t)groups : 1, sub = (counted_ns + n - 1) / n;

	return sub > MAX_SUB_INTERVAL_NS ? MAX_SUB_INTERVAL_NS : sub < MIN_SUB_INTERVAL_NS ? MIN_SUB_INTERVAL_NS : sub;
}

uint64_t td_rotation_turns(int64_t counted_ns, size_t groups)
{
	int64_t sub = td_rotation_sub_interval_ns(counted_ns, groups);

	return counted_ns > sub ? (uint64_t)((counted_ns + sub - 1) / sub) : 1;
}

uint64_t td_rotation_window_index(int64_t start_ns, uint64_t every_ns)
{
	return start_ns > 0 && every_ns ? (uint64_t)start_ns / every_ns : 0;
}

size_t td_rotation_first_group(uint64_t window, uint64_t turns, unsigned offset, size_t groups)
{
	if (groups < 2)
		return 0;
	/* each factor reduced first, so that no product can overflow whatever the inputs */
	return (size_t)((window % groups + offset % groups) % groups * (turns % groups) % groups);
}

unsigned td_rotation_host_offset(const char *host_name)
{
	uint32_t hash = 2166136261u; /* FNV-1a, 32 bits */

	for (const unsigned char *c = (const unsigned char *)host_name; *c; c++)
		hash = (hash ^ *c) * 16777619u;
	return (hash >> 16 ^ hash) & TD_ROTATION_MAX_OFFSET; /* the high half folded in: the low one alone is weaker */
}
