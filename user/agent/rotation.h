/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which counter groups a window of the agent counts, and in what order.
 *
 * Where the PMU has too few counters for a Top-Down level (2 general
 * ones in many cloud VMs), its events are packed into several groups that
 * take turns within each window, in sub-intervals of at least 10 ms. A
 * window counted for less than groups x 10 ms has fewer turns than there
 * are groups, so each window counts some groups only. Each window's
 * first group is therefore decided from the wall clock and the host's
 * rotation offset (td_rotation_first_group), not from where the last
 * window stopped: one host alone counts every group over consecutive
 * windows, and hosts of a fleet with offsets 0..H-1 count every group
 * within the same window once H x turns >= groups (docs/DESIGN.md,
 * "Fleet: group rotation offset by host").
 */
#ifndef TOPDOWN_ROTATION_H
#define TOPDOWN_ROTATION_H

#include <stddef.h>
#include <stdint.h>

#define TD_ROTATION_MAX_OFFSET 65535 /* --rotation-offset N: 0 up to this */

/*
 * The length of a window's sub-intervals when counted_ns of it is
 * counted with groups counter groups: counted_ns / groups, rounded up
 * so that those turns fill the counted time, between 10 ms and 1 s.
 */
int64_t td_rotation_sub_interval_ns(int64_t counted_ns, size_t groups);

/* The turns (sub-intervals) of counted_ns at td_rotation_sub_interval_ns; at least 1. */
uint64_t td_rotation_turns(int64_t counted_ns, size_t groups);

/*
 * The window that starts at start_ns (CLOCK_REALTIME) among windows of
 * every_ns: start_ns / every_ns, so hosts with the same --every agree on
 * it without talking (0 before 1970).
 */
uint64_t td_rotation_window_index(int64_t start_ns, uint64_t every_ns);

/*
 * The group a window's first turn counts: (window + offset) x turns mod
 * groups. The turns of window w on a host with offset h count groups
 * (w + h) x turns up to (w + h + 1) x turns - 1, mod groups: hosts with
 * offsets 0..H-1 count (w x turns) up to (w + H) x turns - 1, every
 * group when H x turns >= groups, and one host counts the same run of
 * groups over windows w..w+H-1.
 */
size_t td_rotation_first_group(uint64_t window, uint64_t turns, unsigned offset, size_t groups);

/*
 * --rotation-offset auto: a stable hash of the host's name (FNV-1a,
 * folded to 0..TD_ROTATION_MAX_OFFSET), the same on every start. Two
 * hosts' hashes can fall on the same groups; an index per host cannot.
 */
unsigned td_rotation_host_offset(const char *host_name);

#endif
