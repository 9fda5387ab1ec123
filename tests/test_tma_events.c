// SPDX-License-Identifier: BSD-3-Clause
/*
 * Choosing and grouping Top-Down counters without hardware: the packing
 * rules on hand-made event sets, then every model of the kb at every
 * depth bound to a made-up sysfs, checked group by group (slots leader
 * first, metric events never sampling and unfiltered, fixed counters off
 * the general-purpose budget, the budget kept), then the recorded hosts.
 *
 * The checks do not reuse the packer's logic: counter assignment is
 * verified by trying every assignment (backtracking), not by matching.
 */
#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <cmocka.h>

#include "cpuinfo.h"
#include "engine.h"
#include "events_plan.h"
#include "kb.h"
#include "pmu.h"
#include "tma_events.h"

#define HOSTS "tests/data/hosts"
#define NEOVERSE "tests/data/neoverse"

static const struct td_kb *kb;

static int load_kb(void **state)
{
	char err[512];

	(void)state;
	kb = td_kb_load(err, sizeof(err));
	if (!kb)
		print_message("kb: %s\n", err);
	return kb ? 0 : -1;
}

/* ---- a made-up sysfs: root/sys/bus/event_source/devices/<file> = text ---- */

static void write_file(const char *root, const char *file, const char *text)
{
	char path[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/sys/bus/event_source/devices/%s", root, file);
	for (slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A root holding files[] ("pmu/file", "text" pairs, NULL-terminated). */
static char *make_root(const char *const *files)
{
	char *root = strdup("/tmp/td-tma-events-XXXXXX");

	assert_non_null(mkdtemp(root));
	for (size_t i = 0; files[i]; i += 2)
		write_file(root, files[i], files[i + 1]);
	return root;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void remove_root(char *root)
{
	nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(root);
}

/* ---- independent checks of a plan ---- */

/* Whether events (masks) can each take a different counter below gp: tries every way. */
static bool assignable(const uint32_t *masks, size_t n, uint32_t used, unsigned gp)
{
	if (n == 0)
		return true;
	for (unsigned c = 0; c < gp; c++)
		if (masks[0] & (1u << c) && !(used & (1u << c)) && assignable(masks + 1, n - 1, used | 1u << c, gp))
			return true;
	return false;
}

static bool group_has_event(const struct td_counter_group *g, int event)
{
	for (size_t i = 0; i < g->nr_events; i++)
		if (g->events[i] == event)
			return true;
	return false;
}

static bool gp_event(const struct td_counter_need *need)
{
	return !(need->flags & (TD_EVENT_FIXED | TD_EVENT_SLOTS_LEADER | TD_EVENT_PERF_METRICS));
}

/*
 * The rules, checked on plan for needs: every event counted somewhere;
 * no group over group_events; no event twice in a group; metric events
 * only inside a kernel group that the slots event leads; the general-
 * purpose events of a group assignable to distinct counters; fixed
 * events never sharing a fixed counter. Returns the most general-purpose
 * events any group holds.
 */
static size_t check_plan(const struct td_counter_need *needs, size_t n, const struct td_counter_budget *b,
			 const struct td_counter_plan *plan)
{
	size_t most_gp = 0;
	bool counted[TD_MAX_EVENTS] = { false };

	assert_true(plan->nr_groups >= (n ? 1 : 0));
	for (size_t g = 0; g < plan->nr_groups; g++) {
		const struct td_counter_group *group = &plan->groups[g];
		uint32_t masks[TD_MAX_SLOTS], fixed_used = 0;
		size_t nr_gp = 0;

		assert_true(group->nr_events >= 1 && group->nr_events <= b->group_events);
		assert_true(group->kernel_group == 0 || group->kernel_group >= 2);
		if (group->kernel_group)
			assert_true(needs[group->events[0]].flags & TD_EVENT_SLOTS_LEADER);
		for (size_t i = 0; i < group->nr_events; i++) {
			const struct td_counter_need *need = &needs[group->events[i]];

			assert_true(group->events[i] >= 0 && (size_t)group->events[i] < n);
			for (size_t j = 0; j < i; j++)
				assert_int_not_equal(group->events[i], group->events[j]);
			counted[group->events[i]] = true;
			/* metric events are exactly the kernel group's members after the leader */
			assert_int_equal(!!(need->flags & TD_EVENT_PERF_METRICS), i > 0 && i < group->kernel_group);
			if (gp_event(need)) {
				uint32_t all = b->gp_counters >= 32 ? UINT32_MAX : (1u << b->gp_counters) - 1;

				masks[nr_gp++] = need->counters ? need->counters & all : all;
			} else if (!(need->flags & TD_EVENT_PERF_METRICS)) {
				assert_false(fixed_used & need->counters);
				fixed_used |= need->counters;
			}
		}
		assert_true(nr_gp <= b->gp_counters);
		assert_true(assignable(masks, nr_gp, 0, b->gp_counters));
		if (nr_gp > most_gp)
			most_gp = nr_gp;
	}
	for (size_t e = 0; e < n; e++)
		if (!counted[e])
			fail_msg("event %zu (%s) is in no group", e, needs[e].name);
	return most_gp;
}

static void build_ok(const struct td_counter_need *needs, size_t n, const struct td_counter_budget *b,
		     struct td_counter_plan *plan)
{
	char err[256] = "";

	if (td_counter_plan_build(needs, n, b, plan, err, sizeof(err)))
		fail_msg("plan: %s", err);
	check_plan(needs, n, b, plan);
}

/* ---- the packing rules on hand-made sets ---- */

static void test_software_events_rotate_in_fours(void **state)
{
	struct td_counter_need needs[10];
	struct td_counter_budget budget = { .gp_counters = 4, .group_events = 4 };
	struct td_counter_plan plan;

	(void)state;
	for (size_t e = 0; e < 10; e++)
		needs[e] = (struct td_counter_need){ "sw", 0, 0 };
	build_ok(needs, 10, &budget, &plan);
	/* first fit in order: 0-3, 4-7, 8-9 */
	assert_int_equal(plan.nr_groups, 3);
	assert_int_equal(plan.groups[0].nr_events, 4);
	assert_int_equal(plan.groups[1].nr_events, 4);
	assert_int_equal(plan.groups[2].nr_events, 2);
	for (size_t g = 0; g < 3; g++)
		for (size_t i = 0; i < plan.groups[g].nr_events; i++)
			assert_int_equal(plan.groups[g].events[i], g * 4 + i);
}

static void test_one_group_when_it_fits(void **state)
{
	struct td_counter_need needs[3] = { { "a", 0, 0 }, { "b", 0, 0 }, { "c", 0, 0 } };
	struct td_counter_budget budget = { .gp_counters = 8, .group_events = TD_MAX_SLOTS };
	struct td_counter_plan plan;

	(void)state;
	build_ok(needs, 3, &budget, &plan);
	assert_int_equal(plan.nr_groups, 1);
	assert_int_equal(plan.groups[0].kernel_group, 0);
}

/* An Ice Lake-like level 1: slots + 4 metrics in one perf group, fixed counters everywhere. */
static void test_perf_metrics_group_and_fixed_counters(void **state)
{
	struct td_counter_need needs[] = {
		{ "INST_RETIRED.ANY", 0x1, TD_EVENT_FIXED },
		{ "topdown-retiring", 0, TD_EVENT_PERF_METRICS },
		{ "CPU_CLK_UNHALTED.THREAD", 0x2, TD_EVENT_FIXED },
		{ "topdown-bad-spec", 0, TD_EVENT_PERF_METRICS },
		{ "TOPDOWN.SLOTS", 0x8, TD_EVENT_FIXED | TD_EVENT_SLOTS_LEADER },
		{ "topdown-fe-bound", 0, TD_EVENT_PERF_METRICS },
		{ "topdown-be-bound", 0, TD_EVENT_PERF_METRICS },
		{ "GP1", 0, 0 }, { "GP2", 0, 0 }, { "GP3", 0, 0 }, { "GP4", 0, 0 }, { "GP5", 0, 0 },
	};
	struct td_counter_budget budget = { .gp_counters = 4, .group_events = TD_MAX_SLOTS };
	struct td_counter_plan plan;

	(void)state;
	build_ok(needs, 12, &budget, &plan);
	/* slots first, then the four metric events in order */
	assert_int_equal(plan.groups[0].events[0], 4);
	assert_int_equal(plan.groups[0].kernel_group, 5);
	assert_int_equal(plan.groups[0].events[1], 1);
	assert_int_equal(plan.groups[0].events[4], 6);
	/* group 0: 5 + GP1..GP3 fills the 8 slots; GP4, GP5 and the fixed events go on */
	assert_int_equal(plan.nr_groups, 2);
	assert_int_equal(plan.groups[0].nr_events, 8);
	/* group 1: GP4, GP5, then INST, CLK and slots: fixed events fill free slots */
	assert_int_equal(plan.groups[1].nr_events, 5);
	assert_int_equal(plan.groups[1].kernel_group, 0);
	assert_int_equal(plan.groups[1].events[0], 7 + 3);
	assert_int_equal(plan.groups[1].events[2], 0);
	assert_int_equal(plan.groups[1].events[3], 2);
	assert_int_equal(plan.groups[1].events[4], 4);
}

/* With four general-purpose counters, eight GP events need two groups however many slots. */
static void test_fixed_events_take_no_gp_counter(void **state)
{
	struct td_counter_need needs[] = {
		{ "F0", 0x1, TD_EVENT_FIXED }, { "F1", 0x2, TD_EVENT_FIXED }, { "F2", 0x4, TD_EVENT_FIXED },
		{ "G0", 0, 0 }, { "G1", 0, 0 }, { "G2", 0, 0 }, { "G3", 0, 0 },
	};
	struct td_counter_budget budget = { .gp_counters = 4, .group_events = TD_MAX_SLOTS };
	struct td_counter_plan plan;

	(void)state;
	build_ok(needs, 7, &budget, &plan);
	assert_int_equal(plan.nr_groups, 1); /* 4 GP + 3 fixed = 7 slots, 4 counters */
	assert_int_equal(plan.groups[0].nr_events, 7);
}

/* Two fixed events on the same fixed counter never share a group. */
static void test_fixed_counter_conflict_splits(void **state)
{
	struct td_counter_need needs[] = { { "A", 0x2, TD_EVENT_FIXED }, { "B", 0x2, TD_EVENT_FIXED } };
	struct td_counter_budget budget = { .gp_counters = 4, .group_events = TD_MAX_SLOTS };
	struct td_counter_plan plan;

	(void)state;
	build_ok(needs, 2, &budget, &plan);
	assert_int_equal(plan.nr_groups, 2);
}

/* Events restricted to counters 0-3 of 8: at most four of them per group. */
static void test_counter_masks_respected(void **state)
{
	struct td_counter_need needs[10];
	struct td_counter_budget budget = { .gp_counters = 8, .group_events = TD_MAX_SLOTS };
	struct td_counter_plan plan;

	(void)state;
	for (size_t e = 0; e < 6; e++)
		needs[e] = (struct td_counter_need){ "low", 0xf, 0 };
	for (size_t e = 6; e < 10; e++)
		needs[e] = (struct td_counter_need){ "any", 0xff, 0 };
	build_ok(needs, 10, &budget, &plan);
	/* 4 low + 4 any fill group 0; the other 2 low go to group 1 */
	assert_int_equal(plan.nr_groups, 2);
	assert_int_equal(plan.groups[0].nr_events, 8);
	assert_int_equal(plan.groups[1].nr_events, 2);
}

/* Nine metric-group events (an SPR level 2) do not fit 8 slots: two perf groups, each led by slots. */
static void test_metric_events_split_with_slots_again(void **state)
{
	struct td_counter_need needs[9] = { { "TOPDOWN.SLOTS", 0x8, TD_EVENT_FIXED | TD_EVENT_SLOTS_LEADER } };
	struct td_counter_budget budget = { .gp_counters = 8, .group_events = TD_MAX_SLOTS };
	struct td_counter_plan plan;

	(void)state;
	for (size_t e = 1; e < 9; e++)
		needs[e] = (struct td_counter_need){ "topdown-x", 0, TD_EVENT_PERF_METRICS };
	build_ok(needs, 9, &budget, &plan);
	assert_int_equal(plan.nr_groups, 2);
	assert_int_equal(plan.groups[0].kernel_group, 8);
	assert_int_equal(plan.groups[1].kernel_group, 2);
	assert_int_equal(plan.groups[1].events[0], 0);
	assert_int_equal(plan.groups[1].events[1], 8);
}

static void expect_plan_error(const struct td_counter_need *needs, size_t n, unsigned gp, unsigned per_group,
			      const char *expect)
{
	struct td_counter_budget budget = { .gp_counters = gp, .group_events = per_group };
	struct td_counter_plan plan = { .nr_groups = 99 };
	char err[256] = "";

	assert_int_equal(td_counter_plan_build(needs, n, &budget, &plan, err, sizeof(err)), -EINVAL);
	assert_int_equal(plan.nr_groups, 0);
	if (!strstr(err, expect))
		fail_msg("error '%s' lacks '%s'", err, expect);
}

static void test_plan_errors(void **state)
{
	static struct td_counter_need many[TD_MAX_EVENTS + 1];
	struct td_counter_need metrics_alone[] = { { "topdown-retiring", 0, TD_EVENT_PERF_METRICS } };
	struct td_counter_need with_slots[] = {
		{ "TOPDOWN.SLOTS", 0x8, TD_EVENT_FIXED | TD_EVENT_SLOTS_LEADER },
		{ "topdown-retiring", 0, TD_EVENT_PERF_METRICS },
	};
	struct td_counter_need high_counter[] = { { "ODD.EVENT", 0x10, 0 } };

	(void)state;
	expect_plan_error(metrics_alone, 1, 8, 8, "slots event as their group leader");
	expect_plan_error(with_slots, 2, 8, 1, "room for both");
	expect_plan_error(high_counter, 1, 4, 8, "'ODD.EVENT' can count on none of the 4");
	expect_plan_error(with_slots, 2, 8, 0, "1 to 8 events, not 0");
	expect_plan_error(with_slots, 2, 8, TD_MAX_SLOTS + 1, "1 to 8 events, not 9");
	expect_plan_error(many, TD_MAX_EVENTS + 1, 8, 8, "more than the");
}

/* ---- every model ---- */

/*
 * What every group's attributes must be: counting, unfiltered, not
 * inherited, enabled/running read; the kernel group led by slots.
 */
static void check_attrs(const struct td_tma_setup *s)
{
	for (size_t g = 0; g < s->plan.nr_groups; g++) {
		const struct td_counter_group *group = &s->plan.groups[g];
		struct perf_event_attr attrs[TD_MAX_SLOTS];

		td_pmu_group_attrs(s->events, group, attrs);
		for (size_t i = 0; i < group->nr_events; i++) {
			const struct perf_event_attr *a = &attrs[i];
			const struct td_event_def *def = td_model_event(s->model, s->events[group->events[i]].name);

			assert_non_null(def);
			assert_int_equal(a->config, def->config);
			assert_int_equal(a->config1, def->config1);
			assert_int_equal(a->config2, def->config2);
			assert_int_equal(a->sample_period, 0);
			assert_int_equal(a->sample_type, 0);
			assert_int_equal(a->freq, 0);
			assert_int_equal(a->inherit, 0);
			assert_int_equal(a->exclude_user | a->exclude_kernel | a->exclude_hv | a->exclude_idle |
					 a->exclude_host | a->exclude_guest | a->exclude_callchain_kernel |
					 a->exclude_callchain_user, 0);
			assert_int_equal(a->read_format, PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING);
			if (i == 0 && group->kernel_group)
				assert_true(def->flags & TD_EVENT_SLOTS_LEADER);
		}
	}
}

/* collect builds the engine from the setup's event names: it must take them. */
static void check_engine_accepts(const struct td_tma_setup *s)
{
	const char *names[TD_MAX_EVENTS];
	struct td_engine *engine;
	char err[512];

	for (size_t e = 0; e < s->nr_events; e++)
		names[e] = s->events[e].name;
	engine = td_engine_new(s->model, s->depth, names, s->nr_events, &s->facts, err, sizeof(err));
	if (!engine)
		fail_msg("%s level %d: engine: %s", s->model->name, s->depth, err);
	assert_true(td_engine_output_count(engine) > 0);
	td_engine_free(engine);
}

static const char *const every_pmu[] = {
	"cpu/type", "4\n", "cpu/events/slots", "event=0x00,umask=0x4\n", "cpu_core/type", "8\n",
	"cpu_atom/type", "10\n", "armv8_pmuv3_0/type", "12\n", NULL,
};

static unsigned type_of(const char *pmu)
{
	return !strcmp(pmu, "cpu") ? 4 : !strcmp(pmu, "cpu_core") ? 8 : !strcmp(pmu, "cpu_atom") ? 10 : 12;
}

/* Metric events need the slots event even where no formula names it: it comes last. */
static size_t with_slots_leader(const struct td_model *model, int *idx, size_t n)
{
	bool metrics = false, leader = false;

	for (size_t i = 0; i < n; i++) {
		metrics |= model->events[idx[i]].flags & TD_EVENT_PERF_METRICS;
		leader |= model->events[idx[i]].flags & TD_EVENT_SLOTS_LEADER;
	}
	if (!metrics || leader)
		return n;
	for (size_t e = 0; e < model->n_events; e++)
		if (!strcmp(model->events[e].name, "TOPDOWN.SLOTS") || strstr(model->events[e].name, "/TOPDOWN.SLOTS/"))
			idx[n] = e;
	return n + 1;
}

/* Every model, every depth it can do, SMT on and off: the rules hold. */
static void test_every_model_and_depth(void **state)
{
	char *root = make_root(every_pmu), err[512];
	struct td_tma_setup *s = malloc(sizeof(*s));
	size_t rotating = 0;

	(void)state;
	for (size_t m = 0; m < td_kb_model_count(kb); m++) {
		const struct td_model *model = td_kb_model_at(kb, m);

		for (int smt = 0; smt < 2; smt++) {
			struct td_cpuinfo cpu = { .smt_on = smt };

			for (int depth = 1; depth <= 4; depth++) {
				struct td_counter_need needs[TD_MAX_EVENTS];
				int idx[TD_MAX_EVENTS];
				size_t n = td_model_events_for(model, td_level_mask(depth, false), idx, TD_MAX_EVENTS);
				int ret = td_tma_setup(model, depth, root, &cpu, s, err, sizeof(err));

				if (depth == 4 && n > td_model_events_for(model, td_level_mask(3, false), idx, 0)) {
					assert_int_equal(ret, -EINVAL);
					continue;
				}
				if (ret)
					fail_msg("%s level %d: %s", model->name, depth, err);
				n = with_slots_leader(model, idx, n);
				assert_int_equal(s->nr_events, n);
				assert_string_equal(s->pmu, model->pmu[0] == 'a' ? "armv8_pmuv3_0" : model->pmu);
				assert_int_equal(s->budget.gp_counters, smt ? model->gp_counters : model->gp_counters_smt_off);
				assert_int_equal(s->facts.smt_on, smt);
				for (size_t e = 0; e < n; e++) {
					const struct td_event_def *def = &model->events[idx[e]];

					assert_string_equal(s->events[e].name, def->name);
					assert_int_equal(s->events[e].type, type_of(s->pmu));
					needs[e] = (struct td_counter_need){ def->name, def->counters, def->flags };
				}
				check_plan(needs, n, &s->budget, &s->plan);
				check_attrs(s);
				check_engine_accepts(s);
				rotating += s->plan.nr_groups > 1;
			}
		}
	}
	print_message("  %zu of the model/depth/SMT combinations rotate counter groups\n", rotating);
	assert_true(rotating > 0);
	free(s);
	remove_root(root);
}

/* A Sapphire Rapids level 2 (hand-counted from the definitions): 10 events; 9 of them in perf groups. */
static void test_spr_level2_plan(void **state)
{
	struct td_cpuinfo cpu;
	struct td_tma_setup *s = malloc(sizeof(*s));
	char err[512];

	(void)state;
	assert_int_equal(td_cpuinfo_read(HOSTS "/intel-spr", &cpu, err, sizeof(err)), 0);
	if (td_tma_setup(td_kb_model(kb, "spr"), 2, HOSTS "/intel-spr", &cpu, s, err, sizeof(err)))
		fail_msg("%s", err);
	assert_string_equal(s->pmu, "cpu");
	assert_int_equal(s->events[0].type, 4); /* the recorded cpu/type */
	assert_true(s->facts.smt_on);
	assert_int_equal(s->budget.gp_counters, 8);
	assert_int_equal(s->nr_events, 10);
	/* slots + 8 topdown-* events exceed 8 slots: two perf groups */
	assert_int_equal(s->plan.nr_groups, 2);
	assert_int_equal(s->plan.groups[0].kernel_group, 8);
	assert_string_equal(s->events[s->plan.groups[0].events[0]].name, "TOPDOWN.SLOTS");
	assert_string_equal(s->events[s->plan.groups[1].events[0]].name, "TOPDOWN.SLOTS");
	assert_int_equal(s->pmu_cpus[0], '\0');
	free(s);
}

static void test_host_pmu_binding(void **state)
{
	static const char *const arm_with_caps[] = {
		"armv8_pmuv3_0/type", "9\n", "armv8_pmuv3_0/caps/slots", "0x00000008\n", "armv8_pmuv3_0/cpus", "0-63\n", NULL,
	};
	static const char *const non_hybrid_adl[] = { "cpu/type", "4\n", NULL };
	static const char *const hybrid_adl[] = {
		"cpu/type", "4\n", "cpu_core/type", "8\n", "cpu_core/cpus", "0-15\n", NULL,
	};
	struct td_cpuinfo cpu = { .smt_on = false };
	struct td_tma_setup *s = malloc(sizeof(*s));
	char *root, err[512];

	(void)state;
	/* Neoverse V2: the PMU by prefix, the slot width from caps/slots */
	root = make_root(arm_with_caps);
	assert_int_equal(td_tma_setup(td_kb_model(kb, "neoverse-v2"), 1, root, &cpu, s, err, sizeof(err)), 0);
	assert_string_equal(s->pmu, "armv8_pmuv3_0");
	assert_int_equal(s->events[0].type, 9);
	assert_int_equal(s->facts.slots_per_cycle, 8);
	assert_string_equal(s->pmu_cpus, "0-63");
	remove_root(root);

	/* the recorded Grace host has no caps/slots: the model's width (0 here) */
	assert_int_equal(td_tma_setup(td_kb_model(kb, "neoverse-v2"), 1, HOSTS "/neoverse-v2", &cpu, s, err,
				      sizeof(err)), 0);
	assert_int_equal(s->facts.slots_per_cycle, 0);
	assert_int_equal(s->events[0].type, 10); /* the recorded armv8_pmuv3_0/type */
	/* its formulas then take the model's documented width, and the run says so */
	assert_int_equal(td_model_slot_width(s->model, &s->facts, NULL), s->model->slots_per_cycle);
	assert_true(td_tma_describe_slots(s, err, sizeof(err)));
	assert_non_null(strstr(err, "formulas take 8 slots per cycle, the width its definition documents: "
				    "PMU armv8_pmuv3_0 reports none (caps/slots absent or 0)"));

	/* Alder Lake without E-cores registers its core PMU as cpu */
	root = make_root(non_hybrid_adl);
	assert_int_equal(td_tma_setup(td_kb_model(kb, "adl"), 1, root, &cpu, s, err, sizeof(err)), 0);
	assert_string_equal(s->pmu, "cpu");
	remove_root(root);

	/* a hybrid one: cpu_core, on the P-cores only */
	root = make_root(hybrid_adl);
	assert_int_equal(td_tma_setup(td_kb_model(kb, "adl"), 1, root, &cpu, s, err, sizeof(err)), 0);
	assert_string_equal(s->pmu, "cpu_core");
	assert_int_equal(s->events[0].type, 8);
	assert_string_equal(s->pmu_cpus, "0-15");
	remove_root(root);
	free(s);
}

static void test_setup_errors(void **state)
{
	static const char *const bad_type[] = { "cpu/type", "four\n", NULL };
	struct td_cpuinfo cpu = { .smt_on = true };
	struct td_tma_setup *s = malloc(sizeof(*s));
	char *root, err[512] = "";

	(void)state;
	/* this VM: no cpu PMU */
	assert_int_equal(td_tma_setup(td_kb_model(kb, "zen5"), 1, HOSTS "/kvm-nopmu", &cpu, s, err, sizeof(err)),
			 -ENODEV);
	assert_non_null(strstr(err, "no 'cpu' PMU"));
	/* big.LITTLE Cortex PMUs are not armv8_pmuv3* */
	assert_int_equal(td_tma_setup(td_kb_model(kb, "neoverse-n1"), 1, HOSTS "/arm-rk3399", &cpu, s, err,
				      sizeof(err)), -ENODEV);
	assert_non_null(strstr(err, "no 'armv8_pmuv3' PMU"));
	assert_int_equal(td_tma_setup(td_kb_model(kb, "spr"), 0, HOSTS "/intel-spr", &cpu, s, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "level 0 does not exist"));
	assert_int_equal(td_tma_setup(td_kb_model(kb, "spr"), 5, HOSTS "/intel-spr", &cpu, s, err, sizeof(err)),
			 -EINVAL);
	root = make_root(bad_type);
	assert_int_equal(td_tma_setup(td_kb_model(kb, "spr"), 1, root, &cpu, s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "cannot read the type of PMU 'cpu'"));
	remove_root(root);
	free(s);
}

static void test_choose_model(void **state)
{
	const struct td_model *model = NULL;
	struct td_cpuinfo cpu;
	char err[1024] = "";

	(void)state;
	assert_int_equal(td_tma_choose_model(kb, "sapphirerapids", NULL, &model, err, sizeof(err)), 0);
	assert_string_equal(model->name, "spr");
	assert_int_equal(td_tma_choose_model(kb, "NEOVERSE_V2", NULL, &model, err, sizeof(err)), 0);
	assert_string_equal(model->name, "neoverse-v2");
	assert_int_equal(td_tma_choose_model(kb, "pentium", NULL, &model, err, sizeof(err)), -ENOENT);
	assert_null(strchr(err, '\n'));
	assert_non_null(strstr(err, "unknown CPU model 'pentium'; known models: "));
	assert_non_null(strstr(err, " spr,"));
	assert_non_null(strstr(err, " zen4,"));
	assert_non_null(strstr(err, " neoverse-n1,"));
	/* detection from the recorded hosts */
	assert_int_equal(td_cpuinfo_read(HOSTS "/intel-spr", &cpu, err, sizeof(err)), 0);
	assert_int_equal(td_tma_choose_model(kb, NULL, &cpu, &model, err, sizeof(err)), 0);
	assert_string_equal(model->name, "spr");
	assert_int_equal(td_cpuinfo_read(HOSTS "/amd-zen4", &cpu, err, sizeof(err)), 0);
	assert_int_equal(td_tma_choose_model(kb, NULL, &cpu, &model, err, sizeof(err)), 0);
	assert_string_equal(model->name, "zen4");
	assert_int_equal(td_cpuinfo_read(HOSTS "/arm-rk3399", &cpu, err, sizeof(err)), 0);
	assert_int_equal(td_tma_choose_model(kb, NULL, &cpu, &model, err, sizeof(err)), -ENOTSUP);
	assert_true(err[0] != '\0');
}

/* An every-group event takes a general-purpose counter in each group; the others share the rest. */
static void test_every_group_event(void **state)
{
	const struct td_counter_need needs[] = {
		{ "a", 0, 0 }, { "b", 0, 0 }, { "cycles", 0, TD_NEED_EVERY_GROUP }, { "c", 0, 0 }, { "d", 0x1, 0 },
	};
	struct td_counter_budget two = { 2, TD_MAX_SLOTS }, one = { 1, TD_MAX_SLOTS };
	struct td_counter_plan plan;
	char err[256] = "";

	(void)state;
	build_ok(needs, 5, &two, &plan);
	assert_int_equal(plan.nr_groups, 4); /* a, b, c, d: one each beside cycles */
	for (size_t g = 0; g < plan.nr_groups; g++) {
		assert_int_equal(plan.groups[g].nr_events, 2);
		assert_true(group_has_event(&plan.groups[g], 2));
	}
	/* no counter left for the others */
	assert_int_equal(td_counter_plan_build(needs, 5, &one, &plan, err, sizeof(err)), -ENOSPC);
	assert_non_null(strstr(err, "no room is left"));
	assert_int_equal(plan.nr_groups, 0);
}

/* A plan for what a probe found: the Neoverse N1's level 1 to 3 on 2 free counters. */
static void test_plan_for_probe(void **state)
{
	static const char *const arm[] = { "armv8_pmuv3_0/type", "12\n", NULL };
	struct td_cpuinfo cpu = { .smt_on = false };
	struct td_tma_setup *s = malloc(sizeof(*s));
	char *root = make_root(arm), note[512], err[512] = "";
	const struct td_model *n1 = td_kb_model(kb, "neoverse-n1");
	struct td_pmu_probe cycles_taken = { .done = true, .gp_free = 2, .nr_fixed = 1, .fixed_free = 0 };
	struct td_pmu_probe cycles_free = { .done = true, .gp_free = 2, .nr_fixed = 1, .fixed_free = 1 };
	struct td_pmu_probe all_held = { .done = true, .gp_free = 0, .nr_fixed = 1, .fixed_free = 1 };
	struct td_pmu_probe more = { .done = true, .gp_free = 6, .gp_more = true, .nr_fixed = 1, .fixed_free = 1 };

	(void)state;
	for (int depth = 1; depth <= 3; depth++) {
		int cycles;

		assert_int_equal(td_tma_setup(n1, depth, root, &cpu, s, err, sizeof(err)), 0);
		cycles = -1;
		for (size_t e = 0; e < s->nr_events; e++)
			if (!strcmp(s->events[e].name, "CPU_CYCLES"))
				cycles = (int)e;
		assert_true(cycles >= 0);
		if (td_tma_plan_for(s, &cycles_taken, note, sizeof(note), err, sizeof(err)))
			fail_msg("level %d: %s", depth, err);
		assert_int_equal(s->budget.gp_counters, 2);
		assert_non_null(strstr(note, "2 of 6 general-purpose counters free"));
		assert_non_null(strstr(note, "fixed counter taken"));
		for (size_t g = 0; g < s->plan.nr_groups; g++) {
			/* at most 2 events, cycles among them, counted as one perf group */
			assert_true(s->plan.groups[g].nr_events <= 2);
			assert_true(group_has_event(&s->plan.groups[g], cycles));
			assert_int_equal(s->plan.groups[g].kernel_group, s->plan.groups[g].nr_events);
		}
		assert_int_equal(td_tma_setup(n1, depth, root, &cpu, s, err, sizeof(err)), 0);
		assert_int_equal(td_tma_plan_for(s, &cycles_free, note, sizeof(note), err, sizeof(err)), 0);
		for (size_t g = 0; g < s->plan.nr_groups; g++) {
			/* cycles on its own counter beside 2 general ones */
			assert_true(s->plan.groups[g].nr_events <= 3);
			assert_true(group_has_event(&s->plan.groups[g], cycles));
		}
		assert_null(strstr(note, "fixed counter taken"));
	}
	assert_int_equal(td_tma_plan_for(s, &all_held, note, sizeof(note), err, sizeof(err)), -ENOSPC);
	assert_non_null(strstr(err, "held by another user"));
	assert_null(strchr(err, '\n'));
	assert_int_equal(td_tma_setup(n1, 1, root, &cpu, s, err, sizeof(err)), 0);
	assert_int_equal(td_tma_plan_for(s, &more, note, sizeof(note), err, sizeof(err)), 0);
	assert_non_null(strstr(note, "more than the 6 general-purpose counters"));
	assert_int_equal(s->budget.gp_counters, 6);
	remove_root(root);
	free(s);
}

/*
 * A VM's Intel PMU without PERF_METRICS lists no slots event: the models
 * with a general-counter variant switch to it, say why, and plan only
 * general-purpose events; with slots listed they keep their own.
 */
static void test_general_counter_variant(void **state)
{
	static const char *const no_metrics[] = { "cpu/type", "4\n", NULL };
	static const char *const metrics[] = { "cpu/type", "4\n", "cpu/events/slots", "event=0x00,umask=0x4\n", NULL };
	static const char *const models[] = { "icx", "spr", "emr", "gnr" };
	struct td_cpuinfo cpu = { .smt_on = true };
	struct td_tma_setup *s = malloc(sizeof(*s));
	char *root, err[512] = "";

	(void)state;
	root = make_root(no_metrics);
	for (size_t m = 0; m < sizeof(models) / sizeof(models[0]); m++) {
		const struct td_model *model = td_kb_model(kb, models[m]);

		for (int depth = 1; depth <= 4; depth++) { /* the variant's 4 is its 3: no deeper nodes */
			if (td_tma_setup(model, depth, root, &cpu, s, err, sizeof(err)))
				fail_msg("%s level %d: %s", model->name, depth, err);
			assert_ptr_equal(s->model, model->gp_alternate);
			assert_non_null(strstr(s->variant, "no slots event"));
			assert_non_null(strstr(s->variant, model->gp_alternate->name));
			for (size_t e = 0; e < s->nr_events; e++)
				assert_false(td_model_event(s->model, s->events[e].name)->flags &
					     (TD_EVENT_FIXED | TD_EVENT_PERF_METRICS));
			for (size_t g = 0; g < s->plan.nr_groups; g++)
				assert_true(s->plan.groups[g].nr_events <= model->gp_counters);
		}
	}
	remove_root(root);
	root = make_root(metrics);
	assert_int_equal(td_tma_setup(td_kb_model(kb, "spr"), 1, root, &cpu, s, err, sizeof(err)), 0);
	assert_string_equal(s->model->name, "spr");
	assert_string_equal(s->variant, "");
	/* named directly, a variant needs no slots either way */
	assert_int_equal(td_tma_setup(td_kb_model(kb, "spr-alt"), 2, root, &cpu, s, err, sizeof(err)), 0);
	assert_string_equal(s->model->name, "spr-alt");
	assert_string_equal(s->variant, "");
	remove_root(root);
	free(s);
}

/* --cpu-model spr-alt on an AMD or Arm host is refused, naming what the host is. */
static void test_variant_of_another_vendor(void **state)
{
	const struct td_model *model = NULL;
	struct td_cpuinfo cpu;
	char err[1024] = "";

	(void)state;
	assert_int_equal(td_cpuinfo_read(HOSTS "/amd-zen4", &cpu, err, sizeof(err)), 0);
	assert_int_equal(td_tma_choose_model(kb, "spr-alt", &cpu, &model, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--cpu-model spr-alt"));
	assert_non_null(strstr(err, "zen4"));
	assert_null(strchr(err, '\n'));
	assert_int_equal(td_cpuinfo_read(HOSTS "/neoverse-v2", &cpu, err, sizeof(err)), 0);
	assert_int_equal(td_tma_choose_model(kb, "icx-alt", &cpu, &model, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "neoverse-v2"));
	assert_int_equal(td_cpuinfo_read(HOSTS "/intel-spr", &cpu, err, sizeof(err)), 0);
	assert_int_equal(td_tma_choose_model(kb, "spr-alt", &cpu, &model, err, sizeof(err)), 0);
	assert_string_equal(model->name, "spr-alt");
	/* no host to check against (import) */
	assert_int_equal(td_tma_choose_model(kb, "gnr-alt", NULL, &model, err, sizeof(err)), 0);
	assert_string_equal(model->name, "gnr-alt");
}

/*
 * The Neoverse trees of tests/data/neoverse (see its README): from
 * cpuinfo and MIDR to the kb model, from the PMU's sysfs to the setup,
 * and the slot width the formulas get. Expected values are Arm's: part
 * numbers and the slot widths of its telemetry data.
 */
static void test_neoverse_hosts(void **state)
{
	static const struct {
		const char *dir, *cpu_name, *model;
		unsigned part, revision;
		uint32_t pmu_type;
		unsigned caps_slots; /* what caps/slots says; 0 on N1, which has no PMMIR_EL1 */
		unsigned slots;      /* the width the formulas are evaluated with */
	} hosts[] = {
		{ "n1", "Neoverse-N1", "neoverse-n1", 0xd0c, 1, 8, 0, 5 },
		{ "v1", "Neoverse-V1", "neoverse-v1", 0xd40, 1, 9, 8, 8 },
		{ "n2", "Neoverse-N2", "neoverse-n2-r0p3", 0xd49, 3, 10, 5, 5 },
		{ "v2", "Neoverse-V2", "neoverse-v2", 0xd4f, 1, 11, 8, 8 },
		{ "v3", "Neoverse-V3", "neoverse-v3", 0xd84, 1, 12, 10, 10 },
	};
	struct td_tma_setup *s = malloc(sizeof(*s));

	(void)state;
	for (size_t h = 0; h < sizeof(hosts) / sizeof(hosts[0]); h++) {
		const struct td_model *model = NULL;
		struct td_cpuinfo cpu;
		char root[64], err[512] = "";
		int idx[TD_MAX_EVENTS];
		double *values;
		bool has_slots_constant = false;

		snprintf(root, sizeof(root), NEOVERSE "/%s", hosts[h].dir);
		if (td_cpuinfo_read(root, &cpu, err, sizeof(err)))
			fail_msg("%s: %s", root, err);
		assert_string_equal(cpu.vendor, "ARM");
		assert_string_equal(cpu.model_name, hosts[h].cpu_name);
		assert_int_equal(cpu.part, hosts[h].part);
		assert_int_equal(cpu.revision, hosts[h].revision);
		assert_false(cpu.smt_on);
		assert_int_equal(cpu.online_cpus, 2);

		if (td_tma_choose_model(kb, NULL, &cpu, &model, err, sizeof(err)))
			fail_msg("%s: %s", root, err);
		assert_string_equal(model->name, hosts[h].model);

		if (td_tma_setup(model, 1, root, &cpu, s, err, sizeof(err)))
			fail_msg("%s: %s", root, err);
		assert_ptr_equal(s->model, model);
		assert_string_equal(s->pmu, "armv8_pmuv3_0");
		assert_string_equal(s->pmu_cpus, "0-1");
		assert_int_equal(s->budget.gp_counters, model->gp_counters_smt_off);
		assert_int_equal(s->nr_events, td_model_events_for(model, td_level_mask(1, false), idx, TD_MAX_EVENTS));
		for (size_t e = 0; e < s->nr_events; e++) {
			assert_int_equal(s->events[e].type, hosts[h].pmu_type);
			assert_string_equal(s->events[e].name, model->events[idx[e]].name);
		}
		check_attrs(s);
		check_engine_accepts(s);

		/* The slot width: caps/slots where the PMU reports one, else the model's. */
		assert_int_equal(s->facts.slots_per_cycle, hosts[h].caps_slots);
		values = calloc(model->n_events + model->n_constants, sizeof(*values));
		assert_non_null(values);
		td_model_set_constants(model, &s->facts, values);
		for (size_t c = 0; c < model->n_constants; c++) {
			if (strcmp(model->constants[c], "#slots") == 0) {
				assert_int_equal(values[model->n_events + c], hosts[h].slots);
				has_slots_constant = true;
			}
		}
		free(values);
		/* N1's level 1 is cycle-based: no formula takes the slot width. */
		assert_int_equal(has_slots_constant, strcmp(hosts[h].dir, "n1") != 0);
		/* and the run says which width, and whence; all of these report caps/slots but N1 */
		assert_int_equal(td_model_slot_width(model, &s->facts, NULL), has_slots_constant ? hosts[h].slots : 0);
		assert_false(td_tma_describe_slots(s, err, sizeof(err)));
		if (has_slots_constant) {
			char want[128];

			snprintf(want, sizeof(want), "take %u slots per cycle, from PMU armv8_pmuv3_0's caps/slots",
				 hosts[h].slots);
			assert_non_null(strstr(err, want));
		} else {
			assert_string_equal(err, "");
		}
		assert_int_equal(model->slots_per_cycle, hosts[h].slots);
	}
	free(s);
}

/* ---- the counters of an --events list ---- */

static struct td_event event_of(const char *name, uint32_t type, uint64_t config)
{
	struct td_event e = { .type = type, .config = config };

	snprintf(e.name, sizeof(e.name), "%s", name);
	return e;
}

/* An Arm host's list: cycles, instructions, raw codes, an event of the core PMU's own type, software. */
#define ARM_TYPE 10
static const struct td_event *arm_list(size_t *n)
{
	static struct td_event events[8];

	events[0] = event_of("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	events[1] = event_of("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	events[2] = event_of("instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	events[3] = event_of("r08", PERF_TYPE_RAW, 0x08);
	events[4] = event_of("r11", PERF_TYPE_RAW, 0x11);
	events[5] = event_of("r1b", PERF_TYPE_RAW, 0x1b);
	events[6] = event_of("armv8_pmuv3_0/event=0x11/", ARM_TYPE, 0x11);
	events[7] = event_of("arm_spe_0//", ARM_TYPE + 1, 0);
	*n = 8;
	return events;
}

/* Hardware events count on the core PMU; the first cycles event is the one every group gets. */
static void test_events_roles(void **state)
{
	static const char *const sysfs[] = { "armv8_pmuv3_0/type", "10\n", "armv8_pmuv3_0/cpus", "0-3\n",
					     "arm_spe_0/type", "11\n", "arm_spe_0/cpumask", "0-3\n", NULL };
	char *root = make_root(sysfs), sys[512];
	enum td_event_role roles[8];
	const struct td_event *events;
	size_t n;

	(void)state;
	snprintf(sys, sizeof(sys), "%s/sys", root);
	events = arm_list(&n);
	td_events_roles(sys, events, n, true, roles);
	assert_int_equal(roles[0], TD_ROLE_OTHER);
	assert_int_equal(roles[1], TD_ROLE_CYCLES);
	for (size_t e = 2; e <= 6; e++) /* r11 and the PMU's event 0x11 are a second cycles: ordinary counters */
		assert_int_equal(roles[e], TD_ROLE_COUNTER);
	assert_int_equal(roles[7], TD_ROLE_OTHER); /* another PMU's: it has a cpumask, not cpus */
	/* without perf's cycles, Arm's raw 0x11 is the cycles; on x86 it is not */
	td_events_roles(sys, events + 3, 2, true, roles);
	assert_int_equal(roles[1], TD_ROLE_CYCLES);
	td_events_roles(sys, events + 3, 2, false, roles);
	assert_int_equal(roles[1], TD_ROLE_COUNTER);
	remove_root(root);
}

/*
 * Checks an --events plan against its inputs: each group's kernel group
 * is exactly its hardware events and fits gp_free general-purpose
 * counters (the cycles too when cycles_on_gp); every hardware event but
 * the cycles is in exactly one group, the cycles in every group when
 * ruler; every software event in some group.
 */
static void check_events_plan(const struct td_counter_plan *plan, const enum td_event_role *roles, size_t n,
			      unsigned gp_free, bool cycles_on_gp, bool ruler)
{
	size_t seen[TD_MAX_EVENTS] = { 0 };

	assert_true(plan->nr_groups > 1);
	for (size_t g = 0; g < plan->nr_groups; g++) {
		const struct td_counter_group *group = &plan->groups[g];
		unsigned gp = 0;
		bool cycles = false;

		assert_true(group->nr_events >= 1 && group->nr_events <= TD_MAX_SLOTS);
		for (size_t i = 0; i < group->nr_events; i++) {
			enum td_event_role role = roles[group->events[i]];

			seen[group->events[i]]++;
			assert_int_equal(i < group->kernel_group, role != TD_ROLE_OTHER);
			gp += role == TD_ROLE_COUNTER || (role == TD_ROLE_CYCLES && cycles_on_gp);
			cycles |= role == TD_ROLE_CYCLES;
		}
		if (gp > gp_free)
			fail_msg("group %zu needs %u general-purpose counters of %u", g, gp, gp_free);
		if (ruler && !cycles)
			fail_msg("group %zu has no cycles", g);
	}
	for (size_t e = 0; e < n; e++)
		if (roles[e] == TD_ROLE_COUNTER || (roles[e] == TD_ROLE_CYCLES && !ruler))
			assert_int_equal(seen[e], 1);
		else
			assert_true(seen[e] >= 1);
}

static int plan_events(const struct td_event *events, size_t n, const struct td_pmu_probe *probe,
		       struct td_counter_plan *plan, enum td_event_role *roles, char *note, char *err)
{
	td_events_roles("/nonexistent", events, n, true, roles);
	return td_events_plan_for(events, roles, n, probe, false, plan, note, 512, err, 512);
}

/*
 * The lab's held PMU: 2 general-purpose counters free, the cycle counter
 * taken. Listed with cycles, each other hardware event gets a group of
 * its own beside cycles; with the cycle counter free, two share a group.
 */
static void test_events_plan_split(void **state)
{
	struct td_pmu_probe taken = { .done = true, .gp_free = 2, .nr_fixed = 1, .fixed_free = 0 };
	struct td_pmu_probe free_cycles = { .done = true, .gp_free = 2, .nr_fixed = 1, .fixed_free = 1 };
	struct td_counter_plan plan;
	enum td_event_role roles[8];
	char note[512], err[512] = "";
	size_t n;
	const struct td_event *events = arm_list(&n);

	(void)state;
	n = 6; /* task-clock, cycles, instructions, r08, r11, r1b */
	if (plan_events(events, n, &taken, &plan, roles, note, err))
		fail_msg("%s", err);
	check_events_plan(&plan, roles, n, 2, true, true);
	assert_int_equal(plan.nr_groups, 4);
	for (size_t g = 0; g < plan.nr_groups; g++) { /* one event, cycles, then task-clock standing alone */
		assert_int_equal(plan.groups[g].kernel_group, 2);
		assert_int_equal(plan.groups[g].nr_events, 3);
		assert_int_equal(plan.groups[g].events[2], 0);
	}
	assert_non_null(strstr(note, "2 general-purpose counters free, the cycle counter taken"));
	assert_non_null(strstr(note, "4 kernel perf groups"));
	assert_non_null(strstr(note, "cycles in each"));
	assert_null(strchr(note, '\n'));

	assert_int_equal(plan_events(events, n, &free_cycles, &plan, roles, note, err), 0);
	check_events_plan(&plan, roles, n, 2, false, true);
	assert_int_equal(plan.nr_groups, 2);
	assert_non_null(strstr(note, "and the cycle counter"));
}

/* Without cycles the hardware events are grouped to the free counters, and none is in every group. */
static void test_events_plan_without_cycles(void **state)
{
	struct td_pmu_probe taken = { .done = true, .gp_free = 2, .nr_fixed = 0 };
	struct td_event events[5];
	struct td_counter_plan plan;
	enum td_event_role roles[5];
	char note[512], err[512] = "";

	(void)state;
	events[0] = event_of("instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	events[1] = event_of("r08", PERF_TYPE_RAW, 0x08);
	events[2] = event_of("context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES);
	events[3] = event_of("r1b", PERF_TYPE_RAW, 0x1b);
	events[4] = event_of("r23", PERF_TYPE_RAW, 0x23);
	assert_int_equal(plan_events(events, 5, &taken, &plan, roles, note, err), 0);
	check_events_plan(&plan, roles, 5, 2, false, false);
	assert_int_equal(plan.nr_groups, 2);
	assert_non_null(strstr(note, "list cycles"));
}

/* When the hardware events fit, the plan is the one made without a probe, and nothing is said. */
static void test_events_plan_fits(void **state)
{
	struct td_pmu_probe full = { .done = true, .gp_free = 6, .nr_fixed = 1, .fixed_free = 1 };
	struct td_pmu_probe held = { .done = true, .gp_free = 2, .nr_fixed = 1, .fixed_free = 0 };
	struct td_counter_plan plan, unprobed;
	enum td_event_role roles[8];
	char note[512], err[512] = "";
	size_t n;
	const struct td_event *events = arm_list(&n);

	(void)state;
	n = 6;
	assert_int_equal(plan_events(events, n, &full, &plan, roles, note, err), 0);
	assert_int_equal(td_events_plan_unprobed(events, n, TD_MAX_SLOTS, &unprobed, err, sizeof(err)), 0);
	assert_int_equal(plan.nr_groups, 1);
	assert_int_equal(plan.groups[0].kernel_group, 0);
	assert_memory_equal(&plan.groups[0], &unprobed.groups[0], sizeof(plan.groups[0]));
	assert_string_equal(note, "");
	/* cycles and instructions on the 2 free counters: one group as well (the lab's held_alt_events) */
	assert_int_equal(plan_events(events + 1, 2, &held, &plan, roles, note, err), 0);
	assert_int_equal(plan.nr_groups, 1);
	assert_string_equal(note, "");
	/* software events only: nothing to plan for */
	assert_int_equal(plan_events(events, 1, &held, &plan, roles, note, err), 0);
	assert_int_equal(plan.nr_groups, 1);
}

/*
 * Too few counters: none free is an error naming an event and the
 * watchdog where it holds one; one free with the cycle counter taken
 * leaves no room for cycles beside the others: each counts alone.
 */
static void test_events_plan_short(void **state)
{
	struct td_pmu_probe none = { .done = true, .gp_free = 0, .nr_fixed = 1, .fixed_free = 0 };
	struct td_pmu_probe cycles_only = { .done = true, .gp_free = 0, .nr_fixed = 1, .fixed_free = 1 };
	struct td_pmu_probe one = { .done = true, .gp_free = 1, .nr_fixed = 1, .fixed_free = 0 };
	struct td_counter_plan plan;
	enum td_event_role roles[8];
	char note[512], err[512] = "";
	size_t n;
	const struct td_event *events = arm_list(&n);

	(void)state;
	n = 6;
	td_events_roles("/nonexistent", events, n, true, roles);
	assert_int_equal(td_events_plan_for(events, roles, n, &none, true, &plan, note, sizeof(note), err, sizeof(err)),
			 -ENOSPC);
	assert_non_null(strstr(err, "held by another user"));
	assert_non_null(strstr(err, "nmi_watchdog=0"));
	assert_non_null(strstr(err, "instructions cannot count"));
	assert_null(strchr(err, '\n'));
	assert_int_equal(plan.nr_groups, 0);
	/* cycles alone has its own counter */
	assert_int_equal(plan_events(events, 2, &cycles_only, &plan, roles, note, err), 0);
	assert_int_equal(plan.nr_groups, 1);
	assert_int_equal(plan_events(events, 2, &none, &plan, roles, note, err), -ENOSPC);
	assert_non_null(strstr(err, "cycles cannot count"));
	assert_null(strstr(err, "nmi_watchdog"));

	assert_int_equal(plan_events(events, n, &one, &plan, roles, note, err), 0);
	check_events_plan(&plan, roles, n, 1, true, false);
	assert_int_equal(plan.nr_groups, 5); /* cycles, instructions, r08, r11, r1b: one each */
	assert_non_null(strstr(note, "too few counters"));
}

/* 8 counters free beside the cycle counter: a group keeps a slot for cycles. */
static void test_events_plan_wide(void **state)
{
	struct td_pmu_probe wide = { .done = true, .gp_free = 8, .nr_fixed = 1, .fixed_free = 1 };
	struct td_event events[12];
	struct td_counter_plan plan;
	enum td_event_role roles[12];
	char note[512], err[512] = "", name[16];

	(void)state;
	events[0] = event_of("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	for (size_t e = 1; e < 12; e++) {
		snprintf(name, sizeof(name), "r%zx", 0x20 + e);
		events[e] = event_of(name, PERF_TYPE_RAW, 0x20 + e);
	}
	assert_int_equal(plan_events(events, 12, &wide, &plan, roles, note, err), 0);
	check_events_plan(&plan, roles, 12, 8, false, true);
	assert_int_equal(plan.nr_groups, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_software_events_rotate_in_fours),
		cmocka_unit_test(test_one_group_when_it_fits),
		cmocka_unit_test(test_perf_metrics_group_and_fixed_counters),
		cmocka_unit_test(test_fixed_events_take_no_gp_counter),
		cmocka_unit_test(test_fixed_counter_conflict_splits),
		cmocka_unit_test(test_counter_masks_respected),
		cmocka_unit_test(test_metric_events_split_with_slots_again),
		cmocka_unit_test(test_plan_errors),
		cmocka_unit_test(test_every_model_and_depth),
		cmocka_unit_test(test_spr_level2_plan),
		cmocka_unit_test(test_host_pmu_binding),
		cmocka_unit_test(test_setup_errors),
		cmocka_unit_test(test_choose_model),
		cmocka_unit_test(test_general_counter_variant),
		cmocka_unit_test(test_every_group_event),
		cmocka_unit_test(test_plan_for_probe),
		cmocka_unit_test(test_variant_of_another_vendor),
		cmocka_unit_test(test_neoverse_hosts),
		cmocka_unit_test(test_events_roles),
		cmocka_unit_test(test_events_plan_split),
		cmocka_unit_test(test_events_plan_without_cycles),
		cmocka_unit_test(test_events_plan_fits),
		cmocka_unit_test(test_events_plan_short),
		cmocka_unit_test(test_events_plan_wide),
	};

	return cmocka_run_group_tests(tests, load_kb, NULL);
}
