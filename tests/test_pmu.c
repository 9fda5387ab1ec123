// SPDX-License-Identifier: BSD-3-Clause
/*
 * The parts of user/pmu that need no counters: CPU lists as sysfs writes
 * them, and the attributes a counter group is opened with. Opening and
 * switching groups is exercised on real software events by
 * test_collector_e2e.c.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "pmu.h"

static void expect_cpus(const char *list, const char *want)
{
	bool cpus[12];
	char err[256] = "", got[13];

	if (td_cpulist_parse(list, cpus, 12, err, sizeof(err)))
		fail_msg("'%s': %s", list, err);
	for (int i = 0; i < 12; i++)
		got[i] = cpus[i] ? '1' : '0';
	got[12] = '\0';
	assert_string_equal(got, want);
}

static void test_cpulist(void **state)
{
	(void)state;
	expect_cpus("0", "100000000000");
	expect_cpus("0-3,8,10-11\n", "111100001011");
	expect_cpus("2-2", "001000000000");
	expect_cpus("4-7,9", "000011110100");
	expect_cpus("10-63", "000000000011"); /* beyond the possible CPUs: ignored */
	expect_cpus("64", "000000000000");
}

static void test_cpulist_errors(void **state)
{
	static const char *const bad[] = { "", "\n", "a", "3-1", "1,", ",1", "-1", " 1", "1-", "0-3x", "1,,2", "+1", "1--2" };
	bool cpus[4];
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (td_cpulist_parse(bad[i], cpus, 4, err, sizeof(err)) != -EINVAL)
			fail_msg("'%s' was accepted", bad[i]);
		assert_non_null(strstr(err, "cannot read the CPU list"));
	}
}

/* ":u" (user_only) excludes the kernel and the hypervisor, never user space. */
static void test_user_only_attrs(void **state)
{
	struct td_event events[2] = {
		{ "instructions:u", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 0, 0, true },
		{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 0, 0, false },
	};
	struct td_counter_group group = { .nr_events = 2, .events = { 0, 1 } };
	struct perf_event_attr attrs[2];

	(void)state;
	td_pmu_group_attrs(events, &group, attrs);
	assert_int_equal(attrs[0].exclude_kernel, 1);
	assert_int_equal(attrs[0].exclude_hv, 1);
	assert_int_equal(attrs[0].exclude_user, 0);
	assert_int_equal(attrs[1].exclude_kernel | attrs[1].exclude_hv | attrs[1].exclude_user, 0);
}

static void test_group_attrs_follow_plan_order(void **state)
{
	struct td_event events[4] = {
		{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 0, 0, false },
		{ "raw", PERF_TYPE_RAW, 0x1c2, 0x3, 0x4, false },
		{ "slots", 4, 0x400, 0, 0, false },
		{ "topdown-be-bound", 4, 0x8300, 0, 0, false },
	};
	/* slot order differs from event order: the attrs follow the slots */
	struct td_counter_group group = { .nr_events = 4, .events = { 2, 3, 1, 0 }, .kernel_group = 2 };
	struct perf_event_attr attrs[4];
	const int order[4] = { 2, 3, 1, 0 };

	(void)state;
	memset(attrs, 0xff, sizeof(attrs)); /* every field must be written */
	td_pmu_group_attrs(events, &group, attrs);
	for (int i = 0; i < 4; i++) {
		const struct td_event *e = &events[order[i]];

		assert_int_equal(attrs[i].size, sizeof(attrs[i]));
		assert_int_equal(attrs[i].type, e->type);
		assert_int_equal(attrs[i].config, e->config);
		assert_int_equal(attrs[i].config1, e->config1);
		assert_int_equal(attrs[i].config2, e->config2);
		assert_int_equal(attrs[i].sample_period, 0);
		assert_int_equal(attrs[i].sample_type, 0);
		assert_int_equal(attrs[i].disabled, 1);
		assert_int_equal(attrs[i].inherit, 0);
		assert_int_equal(attrs[i].pinned, 0);
		assert_int_equal(attrs[i].exclude_user | attrs[i].exclude_kernel | attrs[i].exclude_hv |
				 attrs[i].exclude_idle | attrs[i].exclude_host | attrs[i].exclude_guest, 0);
		assert_int_equal(attrs[i].read_format, PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING);
	}
}

/*
 * Only a software event the kernel never multiplexes is read without its
 * times: standing alone, or in a group of software events only; a group
 * with a hardware member, whoever leads it, is scheduled (and
 * multiplexed) on that PMU. Hardware events are always read with their times.
 */
static void test_untimed_slots(void **state)
{
	struct td_event events[5] = {
		{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 0, 0, false },
		{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 0, 0, false },
		{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 0, 0, false },
		{ "raw", PERF_TYPE_RAW, 0x1c2, 0, 0, false },
		{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 0, 0, false },
	};
	struct td_counter_group alone = { .nr_events = 5, .events = { 0, 1, 2, 3, 4 } };
	struct td_counter_group led_by_hardware = { .nr_events = 4, .events = { 1, 0, 2, 4 }, .kernel_group = 2 };
	struct td_counter_group software_group = { .nr_events = 3, .events = { 0, 2, 1 }, .kernel_group = 2 };
	struct td_counter_group led_by_software = { .nr_events = 3, .events = { 0, 2, 1 }, .kernel_group = 3 };
	struct td_counter_group hardware_only = { .nr_events = 2, .events = { 1, 3 } };
	struct td_counter_group empty = { 0 };

	(void)state;
	assert_int_equal(td_counter_group_untimed_slots(events, &alone), 0x15);          /* slots 0, 2, 4 */
	assert_int_equal(td_counter_group_untimed_slots(events, &led_by_hardware), 0xc); /* 2, 3: outside the group */
	assert_int_equal(td_counter_group_untimed_slots(events, &software_group), 0x3);  /* cycles outside it */
	assert_int_equal(td_counter_group_untimed_slots(events, &led_by_software), 0);    /* cycles in it */
	assert_int_equal(td_counter_group_untimed_slots(events, &hardware_only), 0);
	assert_int_equal(td_counter_group_untimed_slots(events, &empty), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpulist),
		cmocka_unit_test(test_cpulist_errors),
		cmocka_unit_test(test_group_attrs_follow_plan_order),
		cmocka_unit_test(test_user_only_attrs),
		cmocka_unit_test(test_untimed_slots),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
