// SPDX-License-Identifier: BSD-3-Clause
/*
 * The knowledge base on its own: it loads, every model is consistent
 * (lint), names and CPUs map to the right models, and every malformed
 * definition is refused with a message naming the problem.  The checks
 * against the vendors' reference files are in test_kb_reference.c.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "cpuinfo.h"
#include "expr.h"
#include "kb.h"

static struct td_kb *kb;

static void assert_near(double got, double want, double tolerance)
{
	if (!(fabs(got - want) <= tolerance))
		fail_msg("got %.17g, want %.17g", got, want);
}

static int load_kb(void **state)
{
	(void)state;
	char err[512] = "";
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	kb = td_kb_new(err, sizeof(err));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!kb) {
		print_message("td_kb_new: %s\n", err);
		return -1;
	}
	size_t metrics = 0;
	for (size_t i = 0; i < td_kb_model_count(kb); i++)
		metrics += td_kb_model_at(kb, i)->n_metrics;
	print_message("loaded %zu models, %zu metrics in %.2f ms\n", td_kb_model_count(kb), metrics,
		      (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	return 0;
}

static int free_kb(void **state)
{
	(void)state;
	td_kb_free(kb);
	return 0;
}

static const struct td_model *model(const char *name)
{
	const struct td_model *m = td_kb_model(kb, name);
	if (!m)
		fail_msg("no model %s", name);
	return m;
}

/* ---- lookups ------------------------------------------------------------ */

static void test_model_names(void **state)
{
	(void)state;
	const struct td_model *spr = model("spr");
	assert_string_equal(spr->name, "spr");
	assert_ptr_equal(td_kb_model(kb, "SPR"), spr);
	assert_ptr_equal(td_kb_model(kb, "sapphirerapids"), spr);
	assert_ptr_equal(td_kb_model(kb, "sapphire rapids"), spr);
	assert_ptr_equal(td_kb_model(kb, "Neoverse_N2_R0P3"), model("neoverse-n2-r0p3"));
	assert_ptr_equal(td_kb_model(kb, "rpl"), model("adl"));
	assert_null(td_kb_model(kb, "sapphire"));
	assert_null(td_kb_model(kb, ""));
	assert_null(td_kb_model_at(kb, td_kb_model_count(kb)));
}

static void test_metric_and_event_lookup(void **state)
{
	(void)state;
	const struct td_model *spr = model("spr");
	const struct td_metric_def *dram = td_model_metric(spr, "tma_dram_bound");
	assert_non_null(dram);
	assert_ptr_equal(td_model_metric(spr, "TMA_L3_MISS_BOUND"), dram);
	assert_string_equal(dram->path, "Backend_Bound.Memory_Bound.DRAM_Bound");
	assert_int_equal(td_model_slot(spr, "tma_dram_bound"), dram->slot);
	assert_null(td_model_metric(spr, "tma_dram"));
	assert_int_equal(td_model_slot(spr, "no_such_name"), -ENOENT);

	const struct td_event_def *slots = td_model_event(spr, "TOPDOWN.SLOTS");
	assert_non_null(slots);
	assert_true(slots->flags & TD_EVENT_SLOTS_LEADER);
	assert_int_equal(td_model_slot(spr, "TOPDOWN.SLOTS"), slots->slot);
	assert_null(td_model_event(spr, "tma_retiring")); /* a metric, not an event */
}

static void test_level_mask(void **state)
{
	(void)state;
	assert_int_equal(td_level_mask(1, false), TD_USED_BY_LEVEL(1));
	assert_int_equal(td_level_mask(2, true),
			 TD_USED_BY_INFO | TD_USED_BY_LEVEL(1) | TD_USED_BY_LEVEL(2));
	assert_int_equal(td_level_mask(9, false), td_level_mask(4, false));
	assert_int_equal(td_level_mask(0, true), TD_USED_BY_INFO);
}

static bool contains(const int *list, size_t n, int value)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == value)
			return true;
	return false;
}

/* Events only sample lines name: no formula needs them. */
static size_t sample_only_events(const struct td_model *m)
{
	size_t n = 0;
	for (size_t e = 0; e < m->n_events; e++)
		n += !m->events[e].used_by;
	return n;
}

static void test_events_for_depth(void **state)
{
	(void)state;
	const struct td_model *spr = model("spr");
	int level1[256], all[256];
	size_t n1 = td_model_events_for(spr, td_level_mask(1, false), level1, 256);
	size_t n4 = td_model_events_for(spr, td_level_mask(4, true), all, 256);
	/* every event some metric needs, and only as many as fit when cap is short */
	assert_true(sample_only_events(spr) > 0);
	assert_int_equal(n4, spr->n_events - sample_only_events(spr));
	assert_int_equal(td_model_events_for(spr, td_level_mask(4, true), all, 2), n4);
	assert_true(n1 < n4);
	for (size_t i = 0; i < spr->n_metrics; i++) {
		const struct td_metric_def *d = &spr->metrics[i];
		for (size_t k = 0; d->kind == TD_METRIC_TREE && d->level == 1 && k < d->n_events; k++)
			assert_true(contains(level1, n1, d->events[k]));
	}
	/* AMX busy cycles are a level-3 matter on Sapphire Rapids */
	assert_false(contains(level1, n1, td_model_event(spr, "EXE.AMX_BUSY")->slot));
	assert_true(contains(level1, n1, td_model_event(spr, "TOPDOWN.SLOTS")->slot));
}

static void test_shared_instance(void **state)
{
	(void)state;
	char err[256];
	const struct td_kb *a = td_kb_load(err, sizeof(err));
	assert_non_null(a);
	assert_ptr_equal(td_kb_load(err, sizeof(err)), a);
	assert_int_equal(td_kb_model_count(a), td_kb_model_count(kb));
}

/* ---- lint --------------------------------------------------------------- */

static void lint_tree_metric(const struct td_model *m, const struct td_metric_def *d)
{
	if (d->level == 1) {
		assert_null(d->parent);
		assert_string_equal(d->path, d->node);
		return;
	}
	const struct td_metric_def *p = td_model_metric(m, d->parent);
	if (!p || p->kind != TD_METRIC_TREE || p->level != d->level - 1)
		fail_msg("%s %s: parent %s is not a tree node one level up", m->name, d->name,
			 d->parent);
	char path[512];
	snprintf(path, sizeof(path), "%s.%s", p->path, d->node);
	assert_string_equal(d->path, path);
}

/* Every name of every formula is an event, constant or metric of the model,
 * bound to the slot the model says. */
static void lint_names(const struct td_model *m, const struct td_metric_def *d,
		       const struct td_expr *e)
{
	for (size_t k = 0; e && k < td_expr_name_count(e); k++) {
		int slot = td_model_slot(m, td_expr_name(e, k));
		if (slot < 0 || (size_t)slot >= m->n_slots)
			fail_msg("%s %s: '%s' does not resolve", m->name, d->name,
				 td_expr_name(e, k));
	}
}

/* Whether a word of the space-separated list is name. */
static bool in_list(const char *list, const char *name)
{
	size_t len = strlen(name);
	for (const char *w = list; *w; w += strcspn(w, " "), w += *w == ' ')
		if (strncmp(w, name, len) == 0 && (w[len] == ' ' || !w[len]))
			return true;
	return false;
}

/* A formula needs the event, or a sample line names it. */
static bool event_used(const struct td_model *m, size_t e)
{
	const char *name = m->events[e].name;
	for (size_t i = 0; i < m->n_metrics; i++) {
		const struct td_metric_def *d = &m->metrics[i];
		for (size_t k = 0; k < d->n_events; k++)
			if (d->events[k] == (int)e)
				return true;
		if ((d->sample && strcmp(d->sample, name) == 0) || in_list(d->sample_also, name))
			return true;
	}
	return false;
}

static void lint_events(const struct td_model *m)
{
	size_t leaders = 0, perf_metrics = 0;
	for (size_t e = 0; e < m->n_events; e++) {
		const struct td_event_def *ev = &m->events[e];
		unsigned limit = ev->flags & TD_EVENT_FIXED ? m->fixed_counters : m->gp_counters;
		if (ev->counters >> limit) /* fixed counters are numbered 0..6 on Skymont */
			assert_true(ev->flags & TD_EVENT_FIXED && ev->counters < 1u << 7);
		if (!event_used(m, e))
			fail_msg("%s: event %s is used by no metric", m->name, ev->name);
		assert_int_equal(ev->slot, (int)e);
		assert_string_equal(ev->pmu, m->pmu);
		leaders += !!(ev->flags & TD_EVENT_SLOTS_LEADER);
		perf_metrics += !!(ev->flags & TD_EVENT_PERF_METRICS);
	}
	/* perf-metrics members need exactly one slots leader in the model */
	assert_int_equal(m->perf_metrics, perf_metrics > 0);
	assert_int_equal(leaders, m->perf_metrics ? 1 : 0);
}

/* What a level needs: the events of its metrics carry its used_by bit. */
static void lint_use(const struct td_model *m, const struct td_metric_def *d)
{
	unsigned bit = d->kind == TD_METRIC_TREE ? TD_USED_BY_LEVEL(d->level)
		       : d->kind == TD_METRIC_INFO ? TD_USED_BY_INFO : 0;
	assert_int_equal(d->used_by & bit, bit);
	for (size_t k = 0; k < d->n_events; k++)
		if ((m->events[d->events[k]].used_by & d->used_by) != d->used_by)
			fail_msg("%s %s: event %s misses a level of the metric", m->name, d->name,
				 m->events[d->events[k]].name);
}

/* Level 4 is defined only where it costs no events beyond levels 1-3 and
 * the Info metrics. */
static void lint_level4(const struct td_model *m)
{
	unsigned shallow = td_level_mask(3, true);
	for (size_t i = 0; i < m->n_metrics; i++) {
		const struct td_metric_def *d = &m->metrics[i];
		if (d->kind != TD_METRIC_TREE || d->level != 4 || m->vendor != TD_VENDOR_INTEL)
			continue;
		for (size_t k = 0; k < d->n_events; k++)
			if (!(m->events[d->events[k]].used_by & shallow))
				fail_msg("%s %s needs %s, which levels 1-3 do not", m->name, d->name,
					 m->events[d->events[k]].name);
	}
}

/* Two nodes on one path would make the tree ambiguous to readers. */
static void lint_unique_paths(const struct td_model *m)
{
	for (size_t i = 0; i < m->n_metrics; i++)
		for (size_t k = i + 1; m->metrics[i].path && k < m->n_metrics; k++)
			if (m->metrics[k].path && !strcmp(m->metrics[i].path, m->metrics[k].path))
				fail_msg("%s: %s and %s share the path %s", m->name,
					 m->metrics[i].name, m->metrics[k].name, m->metrics[i].path);
}

/* Arm metrics are kept to what one group of counters can count at once. */
static void lint_arm_budget(const struct td_model *m)
{
	for (size_t i = 0; m->vendor == TD_VENDOR_ARM && i < m->n_metrics; i++) {
		const struct td_metric_def *d = &m->metrics[i];
		size_t gp = 0;
		for (size_t k = 0; k < d->n_events; k++)
			gp += !(m->events[d->events[k]].flags & TD_EVENT_FIXED);
		if (gp > m->gp_counters)
			fail_msg("%s %s needs %zu counters of %u", m->name, d->name, gp,
				 m->gp_counters);
	}
}

static void test_lint_every_model(void **state)
{
	(void)state;
	size_t tree_nodes = 0;
	for (size_t i = 0; i < td_kb_model_count(kb); i++) {
		const struct td_model *m = td_kb_model_at(kb, i);
		size_t level1 = 0;
		assert_true(m->n_slots == m->n_events + m->n_constants + m->n_metrics);
		for (size_t k = 0; k < m->n_metrics; k++) {
			const struct td_metric_def *d = &m->metrics[k];
			assert_int_equal(d->slot, (int)(m->n_events + m->n_constants + k));
			assert_non_null(d->expr);
			assert_non_null(d->compiled);
			assert_true(d->threshold ? d->compiled_threshold != NULL
						 : d->compiled_threshold == NULL);
			assert_true(d->scale > 0);
			lint_names(m, d, d->compiled);
			lint_names(m, d, d->compiled_threshold);
			lint_use(m, d);
			if (d->kind == TD_METRIC_TREE) {
				lint_tree_metric(m, d);
				level1 += d->level == 1;
				tree_nodes++;
			} else {
				assert_int_equal(d->level, 0);
				assert_null(d->path);
			}
		}
		if (level1 < 2)
			fail_msg("%s has %zu level-1 nodes", m->name, level1);
		lint_events(m);
		lint_level4(m);
		lint_unique_paths(m);
		lint_arm_budget(m);
		assert_true(m->e_core == NULL || strcmp(m->e_core->pmu, "cpu_atom") == 0);
	}
	print_message("%zu tree nodes across %zu models\n", tree_nodes, td_kb_model_count(kb));
}

/* metrics[] order: each formula names only earlier metrics. */
static void test_evaluation_order(void **state)
{
	(void)state;
	for (size_t i = 0; i < td_kb_model_count(kb); i++) {
		const struct td_model *m = td_kb_model_at(kb, i);
		for (size_t k = 0; k < m->n_metrics; k++) {
			const struct td_expr *e = m->metrics[k].compiled;
			for (size_t j = 0; j < td_expr_name_count(e); j++) {
				int slot = td_model_slot(m, td_expr_name(e, j));
				if (slot >= m->metrics[k].slot)
					fail_msg("%s: %s names %s, which comes later", m->name,
						 m->metrics[k].name, td_expr_name(e, j));
			}
		}
	}
}

/* ---- detection ----------------------------------------------------------- */

static void detect_host(const char *host, const char *expect)
{
	char root[256], err[512];
	struct td_cpuinfo cpu;
	const struct td_model *m = NULL;
	snprintf(root, sizeof(root), "tests/data/hosts/%s", host);
	assert_int_equal(td_cpuinfo_read(root, &cpu, err, sizeof(err)), 0);
	int rc = td_kb_detect_model(kb, &cpu, &m, err, sizeof(err));
	if (!expect) {
		assert_int_equal(rc, -ENOTSUP);
		assert_null(m);
		assert_non_null(strstr(err, "--cpu-model"));
		return;
	}
	if (rc)
		fail_msg("%s: %s", host, err);
	assert_string_equal(m->name, expect);
}

/* The recorded hosts of tests/data/hosts (see its README for the CPUs). */
static void test_detect_recorded_hosts(void **state)
{
	(void)state;
	detect_host("intel-spr", "spr");         /* Xeon Platinum 8488C */
	detect_host("amd-zen4", "zen4");         /* EPYC 9654 */
	detect_host("kvm-nopmu", "zen5");        /* family 26 */
	detect_host("neoverse-n1", "neoverse-n1");
	detect_host("neoverse-v2", "neoverse-v2");
	detect_host("arm-rk3399", NULL);         /* Cortex-A72/A53: no definitions */
}

static const struct td_model *detect(struct td_cpuinfo cpu, int expect_rc, char *err,
				     size_t errlen)
{
	const struct td_model *m = NULL;
	assert_int_equal(td_kb_detect_model(kb, &cpu, &m, err, errlen), expect_rc);
	return m;
}

static void test_detect_facts(void **state)
{
	(void)state;
	char err[512];
	struct td_cpuinfo intel = { .vendor = "GenuineIntel", .family = 6, .model = 0x55 };
	struct td_cpuinfo arm = { .vendor = "ARM", .implementer = 0x41, .part = 0xd49 };

	intel.stepping = 4; /* Skylake-SP steppings stop at 4, Cascade Lake starts at 5 */
	assert_string_equal(detect(intel, 0, err, sizeof(err))->name, "skx");
	intel.stepping = 7;
	assert_string_equal(detect(intel, 0, err, sizeof(err))->name, "clx");
	intel.model = 0x97; /* Alder Lake: the P-core model, E-cores beside it */
	const struct td_model *adl = detect(intel, 0, err, sizeof(err));
	assert_string_equal(adl->name, "adl");
	assert_string_equal(adl->e_core->name, "adl-atom");
	assert_string_equal(adl->pmu, "cpu_core");

	arm.revision = 2; /* N2 r0p2: the early formulas; r0p3 and later: the new */
	assert_string_equal(detect(arm, 0, err, sizeof(err))->name, "neoverse-n2");
	arm.revision = 3;
	assert_string_equal(detect(arm, 0, err, sizeof(err))->name, "neoverse-n2-r0p3");
	arm.variant = 1;
	arm.revision = 0;
	assert_string_equal(detect(arm, 0, err, sizeof(err))->name, "neoverse-n2-r0p3");

	struct td_cpuinfo zen3 = { .vendor = "AuthenticAMD", .family = 0x19, .model = 0x21 };
	assert_null(detect(zen3, -ENOTSUP, err, sizeof(err)));
	assert_non_null(strstr(err, "Zen 3"));

	struct td_cpuinfo other = { .vendor = "HygonGenuine", .family = 0x18 };
	assert_null(detect(other, -ENOTSUP, err, sizeof(err)));
	assert_non_null(strstr(err, "--cpu-model"));
	intel.model = 0x2a; /* Sandy Bridge: older than any definition */
	assert_null(detect(intel, -ENOTSUP, err, sizeof(err)));
}

/* ---- constants ----------------------------------------------------------- */

static double constant(const struct td_model *m, const double *values, const char *name)
{
	int slot = td_model_slot(m, name);
	assert_true(slot >= (int)m->n_events && slot < (int)(m->n_events + m->n_constants));
	return values[slot];
}

static void test_constants(void **state)
{
	(void)state;
	const struct td_model *skl = model("skl"), *v2 = model("neoverse-v2");
	double values[512];
	struct td_host_facts facts = { .smt_on = true };
	assert_true(skl->n_slots <= 512 && v2->n_slots <= 512);

	td_model_set_constants(skl, &facts, values);
	assert_true(constant(skl, values, "#SMT_on") == 1);
	assert_true(constant(skl, values, "#core_wide") == 0); /* per-thread counts */
	facts.smt_on = false;
	td_model_set_constants(skl, &facts, values);
	assert_true(constant(skl, values, "#core_wide") == 1);

	td_model_set_constants(v2, &facts, values); /* no caps/slots: the model's width */
	assert_true(constant(v2, values, "#slots") == v2->slots_per_cycle);
	facts.slots_per_cycle = 6;
	td_model_set_constants(v2, &facts, values);
	assert_true(constant(v2, values, "#slots") == 6);
}

/* ---- definitions the loader must refuse ---------------------------------- */

#define HEADER "model t\nlong Test\nvendor intel\npmu cpu\nslots 4\ncounters gp=4\n"

static void expect_refused(const char *text, const char *needle)
{
	char err[512] = "";
	struct td_kb *bad = td_kb_parse(text, err, sizeof(err));
	if (bad) {
		td_kb_free(bad);
		fail_msg("accepted a definition that should fail with '%s'", needle);
	}
	if (!strstr(err, needle))
		fail_msg("error '%s' does not mention '%s'", err, needle);
}

static void test_refused_syntax(void **state)
{
	(void)state;
	expect_refused("slots 4\n", "outside a model");
	expect_refused(HEADER "colour blue\n", "unknown keyword 'colour'");
	expect_refused(HEADER "vendor via\n", "unknown vendor 'via'");
	expect_refused(HEADER "slots four\n", "bad slots");
	expect_refused(HEADER "counters gp=-1\n", "bad counters item");
	expect_refused(HEADER "detect family=6 model=9-1\n", "bad detect item");
	expect_refused(HEADER "detect socket=1\n", "bad detect item");
	expect_refused(HEADER "constants SMT_on\n", "start with '#'");
	expect_refused(HEADER "event E\n", "expected 'event NAME CONFIG'");
	expect_refused(HEADER "event E 0x1 config1=zz\n", "bad config1");
	expect_refused(HEADER "event E 0x1 counters=0x1ffffffff\n", "bad counters mask");
	expect_refused(HEADER "event E 0x1 sampling\n", "unknown event attribute");
	expect_refused(HEADER "metric m sideways\nexpr 1\n", "unknown metric kind");
	expect_refused(HEADER "metric m tree level=5\nexpr 1\n", "level must be 1..4");
	expect_refused(HEADER "metric m info scale=0\nexpr 1\n", "bad scale");
	expect_refused(HEADER "metric m info unit=furlong\nexpr 1\n", "unknown unit");
	expect_refused(HEADER "metric m info colour=1\nexpr 1\n", "unknown metric attribute");
	expect_refused(HEADER "expr 1\n", "formula before any metric");
	expect_refused(HEADER "metric m info\nexpr 1\nexpr 2\n", "second formula");
	expect_refused("file\n", "file without name");
	expect_refused("file x.def\n\nbogus\n", "x.def line 2");
}

static void test_refused_models(void **state)
{
	(void)state;
	expect_refused("model t\nvendor intel\n", "long, pmu, slots");
	expect_refused("model t\nlong T\npmu cpu\nslots 4\ncounters gp=4\n", "no vendor");
	expect_refused(HEADER, "no metrics");
	expect_refused(HEADER "constants #cores\nmetric m info\nexpr #cores\n", "unknown constant");
	expect_refused(HEADER "metric m info\n", "no expr line");
	expect_refused(HEADER "metric m info\nexpr (1\n", "expression error");
	expect_refused(HEADER "metric m info\nexpr 1\nthreshold m >\n", "expression error");
	expect_refused(HEADER "metric m info\nexpr NO_SUCH_EVENT\n", "'NO_SUCH_EVENT' is no event");
	expect_refused(HEADER "metric a info\nexpr b\nmetric b info\nexpr a\n", "refers back");
	expect_refused(HEADER "event E 1\nmetric E info\nexpr 1\n", "defined twice");
	expect_refused(HEADER "metric a info alias=b\nexpr 1\nmetric b info\nexpr 1\n",
		       "defined twice");
	expect_refused(HEADER "ecore u\nmetric m info\nexpr 1\n", "ecore model is not defined");
}

static void test_refused_trees(void **state)
{
	(void)state;
	expect_refused(HEADER "metric m tree level=1\nexpr 1\n", "needs level and node");
	expect_refused(HEADER "metric m tree node=M\nexpr 1\n", "needs level and node");
	expect_refused(HEADER "metric m tree level=2 node=M\nexpr 1\n", "only level 1");
	expect_refused(HEADER "metric m tree level=1 node=M parent=x\nexpr 1\n", "only level 1");
	expect_refused(HEADER "metric m tree level=2 node=M parent=x\nexpr 1\n",
		       "parent is not a tree metric");
	expect_refused(HEADER "metric p info\nexpr 1\nmetric m tree level=2 node=M parent=p\n"
			      "expr 1\n",
		       "parent is not a tree metric");
	expect_refused(HEADER "metric p tree level=1 node=P\nexpr 1\n"
			      "metric m tree level=3 node=M parent=p\nexpr 1\n",
		       "not the parent's plus one");
	expect_refused(HEADER "metric m info level=1\nexpr 1\n", "for tree metrics");
}

/* A small model built from text: order, slots, paths, use and values. */
static void test_small_model(void **state)
{
	(void)state;
	static const char text[] =
		"model tiny\nlong Tiny\nalias small wee\nvendor arm\npmu armv8_pmuv3\nslots 2\n"
		"counters gp=6 fixed=1\nconstants #slots\n"
		"event CYCLES 0x11 fixed\nevent STALL 0x24\nevent REFILL 0x3\nevent INST 0x8\n"
		"metric stalled_share tree level=2 parent=stalled node=Share scale=0.01\n"
		"expr 100 * half / stalled\n"
		"metric half helper unit=ratio\nexpr stalled / 2\n"
		"metric stalled tree level=1 node=Stalled sum\nexpr STALL / (CYCLES * #slots)\n"
		"threshold stalled > 0.25 & half < 1\n"
		"metric mpki info unit=ratio alias=refills_pki,misses_pki\n"
		"expr 1000 * REFILL / INST\n";
	char err[512] = "";
	struct td_kb *t = td_kb_parse(text, err, sizeof(err));
	if (!t)
		fail_msg("%s", err);
	const struct td_model *m = td_kb_model(t, "WEE");
	assert_non_null(m);
	assert_int_equal(m->n_slots, 4 + 1 + 4);
	/* stalled, then half, then stalled_share; mpki keeps its place */
	assert_string_equal(m->metrics[0].name, "stalled");
	assert_string_equal(m->metrics[1].name, "half");
	assert_string_equal(m->metrics[2].name, "stalled_share");
	assert_string_equal(m->metrics[2].path, "Stalled.Share");
	assert_ptr_equal(td_model_metric(m, "misses_pki"), td_model_metric(m, "mpki"));
	assert_string_equal(td_model_metric(m, "mpki")->aliases, "refills_pki misses_pki");

	/* half serves the level-2 node and the threshold of the level-1 node */
	const struct td_metric_def *half = td_model_metric(m, "half");
	assert_int_equal(half->used_by, TD_USED_BY_LEVEL(1) | TD_USED_BY_LEVEL(2));
	assert_int_equal(half->n_events, 2); /* CYCLES and STALL, through stalled */
	assert_int_equal(td_model_metric(m, "stalled_share")->used_by, TD_USED_BY_LEVEL(2));
	assert_int_equal(td_model_event(m, "REFILL")->used_by, TD_USED_BY_INFO);
	assert_int_equal(td_model_event(m, "STALL")->used_by,
			 TD_USED_BY_LEVEL(1) | TD_USED_BY_LEVEL(2));

	double v[9];
	struct td_host_facts facts = { 0 };
	v[td_model_slot(m, "CYCLES")] = 1000;
	v[td_model_slot(m, "STALL")] = 1200;
	v[td_model_slot(m, "REFILL")] = 30;
	v[td_model_slot(m, "INST")] = 6000;
	td_model_set_constants(m, &facts, v);
	for (size_t i = 0; i < m->n_metrics; i++)
		v[m->metrics[i].slot] = td_expr_eval(m->metrics[i].compiled, v);
	/* 1200 / (1000 * 2) = 0.6; half 0.3; share 100 * 0.3 / 0.6 = 50 (percent) */
	assert_near(v[td_model_slot(m, "stalled")], 0.6, 1e-12);
	assert_near(v[td_model_slot(m, "stalled_share")] * m->metrics[2].scale, 0.5,
			    1e-12);
	assert_near(v[td_model_slot(m, "refills_pki")], 5.0, 1e-12);
	assert_near(td_expr_eval(td_model_metric(m, "stalled")->compiled_threshold, v), 1,
			    0);
	td_kb_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model_names),
		cmocka_unit_test(test_metric_and_event_lookup),
		cmocka_unit_test(test_level_mask),
		cmocka_unit_test(test_events_for_depth),
		cmocka_unit_test(test_shared_instance),
		cmocka_unit_test(test_lint_every_model),
		cmocka_unit_test(test_evaluation_order),
		cmocka_unit_test(test_detect_recorded_hosts),
		cmocka_unit_test(test_detect_facts),
		cmocka_unit_test(test_constants),
		cmocka_unit_test(test_refused_syntax),
		cmocka_unit_test(test_refused_models),
		cmocka_unit_test(test_refused_trees),
		cmocka_unit_test(test_small_model),
	};
	return cmocka_run_group_tests(tests, load_kb, free_kb);
}
