// SPDX-License-Identifier: BSD-3-Clause
/*
 * The host checks collect and agent make before anything is loaded
 * (user/collect/collect_setup.h): below the minimum kernel, one line
 * naming the feature it lacks. And the event that samples a node's code,
 * bound to a recorded host's PMU as the counters are.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "collect_setup.h"
#include "cpuinfo.h"

#define HOSTS "tests/data/hosts"

static void test_minimum_kernel(void **state)
{
	char err[512];

	(void)state;
	assert_int_equal(td_kernel_check("5.10.0-32-amd64", err, sizeof(err)), 0);
	assert_int_equal(td_kernel_check("6.1.0-50-amd64", err, sizeof(err)), 0);
	assert_int_equal(td_kernel_check("6.18.44", err, sizeof(err)), 0);
	assert_int_equal(td_kernel_check("10.0", err, sizeof(err)), 0);

	assert_int_equal(td_kernel_check("5.9.16", err, sizeof(err)), -ENOTSUP);
	assert_non_null(strstr(err, "kernel 5.9.16 is older than 5.10"));
	assert_non_null(strstr(err, "BPF_F_TEST_RUN_ON_CPU"));
	assert_null(strstr(err, "ring buffers")); /* 5.9 has them */
	assert_non_null(strstr(err, "use a kernel of 5.10 or later"));

	assert_int_equal(td_kernel_check("4.14.355-275.582.amzn2.x86_64", err, sizeof(err)), -ENOTSUP);
	assert_non_null(strstr(err, "nor has BPF ring buffers (5.8)"));
	assert_int_equal(td_kernel_check("5.4.0-150-generic", err, sizeof(err)), -ENOTSUP);
	assert_null(strchr(err, '\n')); /* one line */

	assert_int_equal(td_kernel_check("linux", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "cannot read the kernel version from 'linux'"));
}

/* A setup of model on a recorded host, depth 1. */
static struct td_tma_setup *setup_on(const char *model, const char *host)
{
	const struct td_kb *kb;
	struct td_tma_setup *s = malloc(sizeof(*s));
	struct td_cpuinfo cpu;
	char root[256], err[512];

	snprintf(root, sizeof(root), "%s/%s", HOSTS, host);
	assert_non_null(s);
	assert_non_null(kb = td_kb_load(err, sizeof(err)));
	assert_int_equal(td_cpuinfo_read(root, &cpu, err, sizeof(err)), 0);
	if (td_tma_setup(td_kb_model(kb, model), 1, root, &cpu, s, err, sizeof(err)))
		fail_msg("%s on %s: %s", model, host, err);
	return s;
}

static void expect_sample(const struct td_tma_setup *s, const char *node, const char *name, uint32_t type,
			  uint64_t config, uint64_t config1, bool precise)
{
	struct td_event ev;
	bool p = !precise;
	char err[512];

	if (td_collect_sample_for_node(s, node, &ev, &p, err, sizeof(err)))
		fail_msg("%s %s: %s", s->model->name, node, err);
	assert_string_equal(ev.name, name);
	assert_int_equal(ev.type, type);
	assert_int_equal(ev.config, config);
	assert_int_equal(ev.config1, config1);
	assert_int_equal(p, precise);
}

static void test_sample_for_node(void **state)
{
	struct td_tma_setup *spr = setup_on("spr", "intel-spr"), *skl = setup_on("skl", "intel-spr");
	struct td_tma_setup *v2 = setup_on("neoverse-v2", "neoverse-v2");
	struct td_event ev;
	bool precise;
	char err[512];

	(void)state;
	/* the node's own event, with the kb's encoding on the recorded cpu PMU (type 4) */
	expect_sample(spr, "DRAM_Bound", "MEM_LOAD_RETIRED.L3_MISS", 4, 0x20d1, 0, false);
	expect_sample(spr, "Frontend_Bound", "FRONTEND_RETIRED.LATENCY_GE_4", 4, 0x1c6, 0x600406, true);
	/* none of its own: the parent's; none above either: cycles */
	expect_sample(spr, "Backend_Bound.Memory_Bound", "TOPDOWN.BACKEND_BOUND_SLOTS", 4, 0x2a4, 0, false);
	expect_sample(skl, "Memory_Bound", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 0, false);
	/* Arm: the numbered PMU the counters use */
	expect_sample(v2, "backend_bound", "STALL_SLOT_BACKEND", 10, 0x3d, 0, false);

	assert_int_equal(td_collect_sample_for_node(spr, "Nope_Bound", &ev, &precise, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "Sapphire Rapids has no Top-Down node 'Nope_Bound'"));
	free(spr);
	free(skl);
	free(v2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minimum_kernel),
		cmocka_unit_test(test_sample_for_node),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
