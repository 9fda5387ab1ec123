// SPDX-License-Identifier: BSD-3-Clause
/*
 * The agent's window bookkeeping that needs no BPF: threads whose tid the
 * kernel handed out again within a window become one row
 * (td_agent_merge_reused_tids), and the counter groups a window counts
 * (rotation.h), alone and across the hosts of a fleet. The window loop
 * itself runs in tests/test_agent_e2e.c.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "agent.h"
#include "rotation.h"

#define MS 1000000ll

static struct td_thread_row row(uint32_t tid, uint64_t oncpu_ns, bool exited, double value, double running)
{
	struct td_thread_row r = { .tid = tid, .pid = 100, .oncpu_ns = oncpu_ns, .exited = exited,
				   .voluntary_switches = 1, .involuntary_switches = 2, .migrations = 3,
				   .runq_wait_ns = 4 };

	r.counters[0] = (struct td_counter_value){ .value = value, .running_fraction = running };
	return r;
}

static void test_distinct_tids_are_kept_sorted(void **state)
{
	struct td_thread_row rows[] = { row(30, 1, false, 1, 1), row(10, 2, false, 2, 1), row(20, 3, true, 3, 1) };

	(void)state;
	assert_int_equal(td_agent_merge_reused_tids(rows, 3, 1), 3);
	assert_int_equal(rows[0].tid, 10);
	assert_int_equal(rows[1].tid, 20);
	assert_int_equal(rows[2].tid, 30);
	assert_int_equal(rows[1].oncpu_ns, 3);
	assert_true(rows[1].exited);
}

static void test_reused_tid_sums_and_weights(void **state)
{
	/* tid 7 three times: 100 ns counted 0.5 of the time, 300 ns fully, 0 ns never ran */
	struct td_thread_row rows[] = { row(7, 100, true, 10, 0.5), row(9, 50, false, 1, 1),
					row(7, 300, false, 30, 1.0), row(7, 0, true, NAN, 0) };

	(void)state;
	assert_int_equal(td_agent_merge_reused_tids(rows, 4, 1), 2);
	assert_int_equal(rows[0].tid, 7);
	assert_int_equal(rows[0].oncpu_ns, 400);
	assert_int_equal(rows[0].voluntary_switches, 3);
	assert_int_equal(rows[0].involuntary_switches, 6);
	assert_int_equal(rows[0].migrations, 9);
	assert_int_equal(rows[0].runq_wait_ns, 12);
	assert_true(fabs((rows[0].counters[0].value) - (40)) < 1e-9); /* NaN adds nothing */
	assert_true(fabs((rows[0].counters[0].running_fraction) - ((0.5 * 100 + 1.0 * 300) / 400)) < 1e-9);
	assert_false(rows[0].exited); /* one of them still runs */
	assert_int_equal(rows[1].tid, 9);
	assert_int_equal(rows[1].oncpu_ns, 50);
}

static void test_no_oncpu_time_keeps_the_larger_fraction(void **state)
{
	struct td_thread_row rows[] = { row(5, 0, true, NAN, 0.25), row(5, 0, true, NAN, 0.75) };

	(void)state;
	assert_int_equal(td_agent_merge_reused_tids(rows, 2, 1), 1);
	assert_true(isnan(rows[0].counters[0].value));
	assert_true(fabs((rows[0].counters[0].running_fraction) - (0.75)) < 1e-12);
	assert_true(rows[0].exited);
}

static void test_empty(void **state)
{
	(void)state;
	assert_int_equal(td_agent_merge_reused_tids(NULL, 0, 0), 0);
}

static struct td_metric_row node(enum td_metric_scope scope, int32_t seq, const char *path, int level,
				  double value, bool crossed)
{
	return (struct td_metric_row){ .scope = scope, .scope_key = "100", .interval_seq = seq, .path = (char *)path,
				       .level = level, .value = value, .threshold_crossed = crossed };
}

/* The next window's sampling node: deepest crossing whole-run process node, larger value among equals. */
static void test_deepest_crossing(void **state)
{
	struct td_run *a = td_run_new(), *b = td_run_new();
	struct td_run *runs[] = { a, b };
	struct td_metric_row rows_a[] = {
		node(TD_SCOPE_PROCESS, -1, "Backend_Bound", 1, 0.6, true),
		node(TD_SCOPE_PROCESS, -1, "Backend_Bound.Memory_Bound", 2, 0.3, true),
		node(TD_SCOPE_PROCESS, -1, "Backend_Bound.Memory_Bound.DRAM_Bound", 3, 0.2, false), /* not crossed */
		node(TD_SCOPE_THREAD, -1, "Backend_Bound.Core_Bound.Ports_Utilization", 3, 0.9, true), /* a thread */
		node(TD_SCOPE_PROCESS, 2, "Frontend_Bound.Fetch_Latency.ICache_Misses", 3, 0.9, true), /* an interval */
		node(TD_SCOPE_PROCESS, -1, "tma_info_thread_ipc", 0, 3.0, true), /* an Info metric */
	};
	struct td_metric_row rows_b[] = {
		node(TD_SCOPE_PROCESS, -1, "Bad_Speculation.Branch_Mispredicts", 2, 0.25, true),
		node(TD_SCOPE_PROCESS, -1, "Frontend_Bound.Fetch_Latency", 2, 0.4, true),
	};

	(void)state;
	assert_null(td_agent_deepest_crossing(runs, 2));
	for (size_t i = 0; i < sizeof(rows_a) / sizeof(rows_a[0]); i++)
		assert_int_equal(td_run_add_metric(a, &rows_a[i]), 0);
	assert_string_equal(td_agent_deepest_crossing(runs, 1), "Backend_Bound.Memory_Bound");
	for (size_t i = 0; i < sizeof(rows_b) / sizeof(rows_b[0]); i++)
		assert_int_equal(td_run_add_metric(b, &rows_b[i]), 0);
	assert_string_equal(td_agent_deepest_crossing(runs, 2), "Frontend_Bound.Fetch_Latency"); /* 0.4 > 0.3, 0.25 */
	td_run_free(a);
	td_run_free(b);
}

/* --- counter group rotation --- */

/* Sub-intervals of counted / groups, rounded up, between 10 ms and 1 s; the turns fill the counted time. */
static void test_sub_intervals_and_turns(void **state)
{
	(void)state;
	/* 1 s over 3 groups: 333.333334 ms each, so 3 turns, not a 4th of 1 ns */
	assert_int_equal(td_rotation_sub_interval_ns(1000 * MS, 3), 333333334);
	assert_int_equal(td_rotation_turns(1000 * MS, 3), 3);
	/* long windows: turns of 1 s, more turns than groups */
	assert_int_equal(td_rotation_sub_interval_ns(60000 * MS, 3), 1000 * MS);
	assert_int_equal(td_rotation_turns(60000 * MS, 3), 60);
	assert_int_equal(td_rotation_turns(60000 * MS, 1), 60);
	/* short counted time, many groups: turns of 10 ms, fewer turns than groups */
	assert_int_equal(td_rotation_sub_interval_ns(100 * MS, 30), 10 * MS);
	assert_int_equal(td_rotation_turns(100 * MS, 30), 10);
	assert_int_equal(td_rotation_turns(105 * MS, 30), 11); /* the last one 5 ms */
	assert_int_equal(td_rotation_turns(5 * MS, 2), 1);
	assert_int_equal(td_rotation_turns(10 * MS, 2), 1);
	/* whenever each group's share is between 10 ms and 1 s, one turn per group, whatever the remainder */
	for (size_t groups = 1; groups <= TD_MAX_EVENTS; groups++)
		for (int64_t counted = (int64_t)groups * 10 * MS; counted <= (int64_t)groups * 1000 * MS;
		     counted += 7 * MS + 13)
			if (td_rotation_turns(counted, groups) != groups)
				fail_msg("%lld ns over %zu groups: %llu turns", (long long)counted, groups,
					 (unsigned long long)td_rotation_turns(counted, groups));
}

static void test_window_index(void **state)
{
	uint64_t minute = 60000 * MS;

	(void)state;
	assert_int_equal(td_rotation_window_index(0, minute), 0);
	assert_int_equal(td_rotation_window_index(59999 * MS, minute), 0);
	assert_int_equal(td_rotation_window_index(60000 * MS, minute), 1);
	assert_int_equal(td_rotation_window_index(-5, minute), 0); /* a clock before 1970 */
	/* 2023-11-14T22:13:20Z, in minutes since 1970 */
	assert_int_equal(td_rotation_window_index(1700000000ll * 1000 * MS, minute), 1700000000 / 60);
}

/* The formula against the product itself, in 128 bits: below 2^65 x 2^62, nothing overflows. */
static void test_first_group_formula(void **state)
{
	const uint64_t windows[] = { 0, 1, 2, 3, 1000003, 28333333333ull, UINT64_MAX / 3, UINT64_MAX };
	const uint64_t turns[] = { 1, 2, 3, 7, 10, 60, 86400, (1ull << 62) + 3 };
	const unsigned offsets[] = { 0, 1, 2, 5, 1000, TD_ROTATION_MAX_OFFSET };

	(void)state;
	/* one group, or none: always the first */
	assert_int_equal(td_rotation_first_group(12345, 3, 7, 1), 0);
	assert_int_equal(td_rotation_first_group(12345, 3, 7, 0), 0);
	/* 5 groups, 2 turns a window: windows start at 0, 2, 4, 1, 3, ...; offset 1 is one window ahead */
	assert_int_equal(td_rotation_first_group(0, 2, 0, 5), 0);
	assert_int_equal(td_rotation_first_group(1, 2, 0, 5), 2);
	assert_int_equal(td_rotation_first_group(2, 2, 0, 5), 4);
	assert_int_equal(td_rotation_first_group(3, 2, 0, 5), 1);
	assert_int_equal(td_rotation_first_group(0, 2, 1, 5), 2);
	assert_int_equal(td_rotation_first_group(2, 2, 1, 5), 1);
	for (size_t groups = 2; groups <= TD_MAX_EVENTS; groups++)
		for (size_t w = 0; w < sizeof(windows) / sizeof(windows[0]); w++)
			for (size_t t = 0; t < sizeof(turns) / sizeof(turns[0]); t++)
				for (size_t o = 0; o < sizeof(offsets) / sizeof(offsets[0]); o++) {
					unsigned __int128 want = ((unsigned __int128)windows[w] + offsets[o]) * turns[t] % groups;

					assert_int_equal(td_rotation_first_group(windows[w], turns[t], offsets[o], groups),
							 (size_t)want);
				}
}

/*
 * Marks in seen[] the groups a window counts: count() in agent.c starts at
 * the first group and rotates to the next one (mod groups) between turns.
 */
static void mark_window(uint64_t window, uint64_t turns, unsigned offset, size_t groups, bool *seen)
{
	size_t g = td_rotation_first_group(window, turns, offset, groups);

	for (uint64_t t = 0; t < turns; t++, g = (g + 1) % groups)
		seen[g] = true;
}

static size_t count_seen(const bool *seen, size_t groups)
{
	size_t n = 0;

	for (size_t g = 0; g < groups; g++)
		n += seen[g];
	return n;
}

/*
 * The fleet's promise: with G groups and T turns a window, H = ceil(G / T)
 * hosts with offsets 0..H-1 count every group within the same window, and
 * one host counts every group over H consecutive windows. H - 1 hosts do
 * not, when (H - 1) x T < G: the count is tight, and the check can fail.
 */
static void test_offsets_cover_every_group(void **state)
{
	const uint64_t windows[] = { 0, 1, 2, 17, 28333333, 1700000000ull / 60, UINT64_MAX / 2 };

	(void)state;
	for (size_t groups = 1; groups <= TD_MAX_EVENTS; groups++) {
		for (uint64_t turns = 1; turns <= groups + 1; turns++) {
			unsigned hosts = (unsigned)((groups + turns - 1) / turns);

			for (size_t w = 0; w < sizeof(windows) / sizeof(windows[0]); w++) {
				bool fleet[TD_MAX_EVENTS] = { 0 }, alone[TD_MAX_EVENTS] = { 0 }, fewer[TD_MAX_EVENTS] = { 0 };

				for (unsigned h = 0; h < hosts; h++) {
					mark_window(windows[w], turns, h, groups, fleet);
					mark_window(windows[w] + h, turns, 0, groups, alone);
					if (h + 1 < hosts)
						mark_window(windows[w], turns, h, groups, fewer);
				}
				if (count_seen(fleet, groups) != groups || count_seen(alone, groups) != groups)
					fail_msg("%zu groups, %llu turns, window %llu: %u hosts count %zu groups, "
						 "one host over %u windows %zu", groups, (unsigned long long)turns,
						 (unsigned long long)windows[w], hosts, count_seen(fleet, groups), hosts,
						 count_seen(alone, groups));
				assert_int_equal(count_seen(fewer, groups), (size_t)(hosts - 1) * turns);
			}
		}
	}
}

/* auto: FNV-1a of the host name, its two halves folded; checked on the FNV authors' test vectors. */
static void test_host_offset_is_a_stable_hash(void **state)
{
	unsigned residues[4] = { 0 };
	char name[32];

	(void)state;
	assert_int_equal(td_rotation_host_offset(""), (0x811c9dc5u >> 16 ^ 0x811c9dc5u) & 0xffff);
	assert_int_equal(td_rotation_host_offset("a"), (0xe40c292cu >> 16 ^ 0xe40c292cu) & 0xffff);
	assert_int_equal(td_rotation_host_offset("foobar"), (0xbf9cf968u >> 16 ^ 0xbf9cf968u) & 0xffff);
	/* numbered hosts spread over the offsets: no residue mod 4 gets much more than its quarter */
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "web-%03d.example.com", i);
		assert_true(td_rotation_host_offset(name) <= TD_ROTATION_MAX_OFFSET);
		residues[td_rotation_host_offset(name) % 4]++;
	}
	for (int r = 0; r < 4; r++)
		assert_true(residues[r] > 180 && residues[r] < 320);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_distinct_tids_are_kept_sorted),
		cmocka_unit_test(test_reused_tid_sums_and_weights),
		cmocka_unit_test(test_no_oncpu_time_keeps_the_larger_fraction),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_deepest_crossing),
		cmocka_unit_test(test_sub_intervals_and_turns),
		cmocka_unit_test(test_window_index),
		cmocka_unit_test(test_first_group_formula),
		cmocka_unit_test(test_offsets_cover_every_group),
		cmocka_unit_test(test_host_offset_is_a_stable_hash),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
