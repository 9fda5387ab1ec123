// SPDX-License-Identifier: BSD-3-Clause
/*
 * The agent's window bookkeeping that needs no BPF: threads whose tid the
 * kernel handed out again within a window become one row
 * (td_agent_merge_reused_tids). The window loop itself runs in
 * tests/test_agent_e2e.c.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "agent.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_distinct_tids_are_kept_sorted),
		cmocka_unit_test(test_reused_tid_sums_and_weights),
		cmocka_unit_test(test_no_oncpu_time_keeps_the_larger_fraction),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_deepest_crossing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
