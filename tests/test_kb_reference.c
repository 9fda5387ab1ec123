// SPDX-License-Identifier: BSD-3-Clause
/*
 * The knowledge base against the vendors' own data in ../shared/reference
 * (or $TOPDOWN_REFERENCE_DIR), read at test time:
 *   - every formula and threshold agrees with the reference formula, both
 *     compiled by kb/expr, on 1000 plausible counter vectors per model;
 *   - the tree (levels, parents) is the reference tree, complete to level 3;
 *   - every event encoding is the one the reference event files give;
 *   - every CPU the reference maps to a model is detected as that model;
 *   - Intel's general-counter variants (icx-alt, ...) against Intel's own
 *     alternate metrics (intel/alt): formulas, thresholds, tree, events.
 * Deliberate differences: the Arm level-1 formulas name the slot width
 * #slots where Arm writes the number, so sysfs caps/slots can override it;
 * with #slots set to the file's num_slots they must agree exactly.
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cpuinfo.h"
#include "expr.h"
#include "kb.h"
#include "test_kb_vectors.h"

#define VECTORS 1000

enum ref_kind { REF_INTEL, REF_ARM, REF_AMD, REF_INTEL_ALT };

/* Which reference file defines each model. */
static const struct ref_source {
	const char *model;
	enum ref_kind kind;
	const char *dir;   /* intel/<dir>, arm/<dir>.json, amd/<dir>; the event files for alt */
	const char *file;  /* Intel metrics file; intel/alt/<file> for alt */
	const char *unit;  /* hybrid Intel: the PMU of the metrics */
} sources[] = {
	{ "skl", REF_INTEL, "skylake", "skl-metrics.json", NULL },
	{ "skx", REF_INTEL, "skylakex", "skx-metrics.json", NULL },
	{ "clx", REF_INTEL, "cascadelakex", "clx-metrics.json", NULL },
	{ "icl", REF_INTEL, "icelake", "icl-metrics.json", NULL },
	{ "icx", REF_INTEL, "icelakex", "icx-metrics.json", NULL },
	{ "tgl", REF_INTEL, "tigerlake", "tgl-metrics.json", NULL },
	{ "rkl", REF_INTEL, "rocketlake", "rkl-metrics.json", NULL },
	{ "adl", REF_INTEL, "alderlake", "adl-metrics.json", "cpu_core" },
	{ "adl-atom", REF_INTEL, "alderlake", "adl-metrics.json", "cpu_atom" },
	{ "spr", REF_INTEL, "sapphirerapids", "spr-metrics.json", NULL },
	{ "emr", REF_INTEL, "emeraldrapids", "emr-metrics.json", NULL },
	{ "gnr", REF_INTEL, "graniterapids", "gnr-metrics.json", NULL },
	{ "mtl", REF_INTEL, "meteorlake", "mtl-metrics.json", "cpu_core" },
	{ "mtl-atom", REF_INTEL, "meteorlake", "mtl-metrics.json", "cpu_atom" },
	{ "lnl", REF_INTEL, "lunarlake", "lnl-metrics.json", "cpu_core" },
	{ "lnl-atom", REF_INTEL, "lunarlake", "lnl-metrics.json", "cpu_atom" },
	{ "arl", REF_INTEL, "arrowlake", "arl-metrics.json", "cpu_core" },
	{ "arl-atom", REF_INTEL, "arrowlake", "arl-metrics.json", "cpu_atom" },
	{ "neoverse-n1", REF_ARM, "neoverse-n1", NULL, NULL },
	{ "neoverse-v1", REF_ARM, "neoverse-v1", NULL, NULL },
	{ "neoverse-n2", REF_ARM, "neoverse-n2", NULL, NULL },
	{ "neoverse-n2-r0p3", REF_ARM, "neoverse-n2-r0p3", NULL, NULL },
	{ "neoverse-v2", REF_ARM, "neoverse-v2", NULL, NULL },
	{ "neoverse-v3", REF_ARM, "neoverse-v3", NULL, NULL },
	{ "neoverse-n3", REF_ARM, "neoverse-n3", NULL, NULL },
	{ "zen4", REF_AMD, "amdzen4", NULL, NULL },
	{ "zen5", REF_AMD, "amdzen5", NULL, NULL },
	{ "icx-alt", REF_INTEL_ALT, "icelakex", "icx_alt_tma_metrics.json", NULL },
	{ "spr-alt", REF_INTEL_ALT, "sapphirerapids", "spr_alt_tma_metrics.json", NULL },
	{ "emr-alt", REF_INTEL_ALT, "emeraldrapids", "emr_alt_tma_metrics.json", NULL },
	{ "gnr-alt", REF_INTEL_ALT, "graniterapids", "gnr_alt_tma_metrics.json", NULL },
};

/* The Info metrics every Intel model must offer, by core type. */
static const char *const intel_core_info[] = {
	"tma_info_thread_ipc", "tma_info_thread_cpi", "tma_info_thread_slots",
	"tma_info_thread_clks", "tma_info_bad_spec_ipmispredict", "tma_info_memory_l1mpki",
	"tma_info_memory_l2mpki", "tma_info_memory_l3mpki", "tma_info_memory_tlb_load_stlb_mpki",
	"tma_info_memory_tlb_store_stlb_mpki", "tma_info_memory_tlb_code_stlb_mpki", NULL,
};
static const char *const intel_atom_info[] = {
	"tma_info_core_ipc", "tma_info_core_cpi", "tma_info_br_inst_mix_ipmispredict", NULL,
};

static struct td_kb *kb;
static char refdir[1024];

static int load_kb(void **state)
{
	(void)state;
	char err[512];
	const char *dir = getenv("TOPDOWN_REFERENCE_DIR");
	snprintf(refdir, sizeof(refdir), "%s", dir && *dir ? dir : "../shared/reference");
	kb = td_kb_new(err, sizeof(err));
	if (!kb)
		print_message("td_kb_new: %s\n", err);
	return kb ? 0 : -1;
}

static int free_kb(void **state)
{
	(void)state;
	td_kb_free(kb);
	return 0;
}

static json_t *load_json(const char *fmt, ...)
{
	char path[2048], rel[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s", refdir, rel);
	json_error_t jerr;
	json_t *j = json_load_file(path, 0, &jerr);
	if (!j)
		fail_msg("%s: %s", path, jerr.text);
	return j;
}

/* Skip the whole test, visibly, when the reference is not beside us. */
static void require_reference(void)
{
	char path[1100];
	snprintf(path, sizeof(path), "%s/README.md", refdir);
	FILE *f = fopen(path, "r");
	if (!f) {
		print_message("SKIP: no reference data at %s (set TOPDOWN_REFERENCE_DIR)\n", refdir);
		skip();
	}
	fclose(f);
}

static const char *str(json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

static uint64_t hex(json_t *obj, const char *key)
{
	const char *s = str(obj, key);
	return s ? strtoull(s, NULL, 0) : 0;
}

/* ---- one reference metric, whatever the vendor --------------------------- */

struct ref_metric {
	const char *name, *expr, *threshold;
	char name_buf[128], *expr_buf, *threshold_buf; /* alt: rewritten into the forms above */
	bool fraction;  /* ScaleUnit 100% / units "percent of ..." */
	double scale;   /* what the reference multiplies by to show it */
	int level;      /* tree level, 0 off-tree */
	char parent[128];
};

/* Intel: TopdownL<n> and tma_<parent>_group in MetricGroup. */
static void intel_placement(json_t *m, struct ref_metric *r)
{
	char groups[1024];
	snprintf(groups, sizeof(groups), "%s", str(m, "MetricGroup") ? str(m, "MetricGroup") : "");
	for (char *save, *g = strtok_r(groups, ";", &save); g; g = strtok_r(NULL, ";", &save)) {
		size_t n = strlen(g);
		if (strncmp(g, "TopdownL", 8) == 0)
			r->level = atoi(g + 8);
		else if (strncmp(g, "tma_", 4) == 0 && strncmp(g, "tma_L", 5) != 0 && n > 6 &&
			 strcmp(g + n - 6, "_group") == 0)
			snprintf(r->parent, sizeof(r->parent), "%.*s", (int)(n - 6), g);
	}
}

static size_t intel_metrics(json_t *file, const char *unit, struct ref_metric *out, size_t cap)
{
	size_t n = 0, i;
	json_t *m;
	json_array_foreach(file, i, m) {
		if ((unit && (!str(m, "Unit") || strcmp(str(m, "Unit"), unit) != 0)) || n == cap)
			continue;
		struct ref_metric *r = &out[n++];
		memset(r, 0, sizeof(*r));
		r->name = str(m, "MetricName");
		r->expr = str(m, "MetricExpr");
		r->threshold = str(m, "MetricThreshold");
		r->fraction = str(m, "ScaleUnit") && strcmp(str(m, "ScaleUnit"), "100%") == 0;
		r->scale = r->fraction ? 100 : 1;
		intel_placement(m, r);
	}
	return n;
}

/* Arm: the decision tree gives levels and parents. */
static void arm_placement(json_t *file, struct ref_metric *r)
{
	json_t *tree = json_object_get(
		json_object_get(json_object_get(file, "methodologies"), "topdown_methodology"),
		"decision_tree");
	size_t i, k;
	json_t *node, *next;
	json_array_foreach(json_object_get(tree, "root_nodes"), i, node)
		if (strcmp(json_string_value(node), r->name) == 0)
			r->level = 1;
	json_array_foreach(json_object_get(tree, "metrics"), i, node)
		json_array_foreach(json_object_get(node, "next_items"), k, next)
			if (strcmp(json_string_value(next), r->name) == 0)
				snprintf(r->parent, sizeof(r->parent), "%s", str(node, "name"));
}

static size_t arm_metrics(json_t *file, struct ref_metric *out, size_t cap)
{
	size_t n = 0;
	const char *name;
	json_t *m;
	json_object_foreach(json_object_get(file, "metrics"), name, m) {
		if (n == cap)
			break;
		struct ref_metric *r = &out[n++];
		memset(r, 0, sizeof(*r));
		r->name = name;
		r->expr = str(m, "formula");
		r->fraction = strncmp(str(m, "units"), "percent", 7) == 0;
		r->scale = 1; /* the formulas already give percent */
		arm_placement(file, r);
	}
	return n;
}

static size_t amd_metrics(json_t *file, struct ref_metric *out, size_t cap)
{
	size_t n = 0, i;
	json_t *m;
	json_array_foreach(file, i, m) {
		const char *g = str(m, "MetricGroup");
		if (!str(m, "MetricName") || n == cap)
			continue;
		struct ref_metric *r = &out[n++];
		memset(r, 0, sizeof(*r));
		r->name = str(m, "MetricName");
		r->expr = str(m, "MetricExpr");
		r->fraction = str(m, "ScaleUnit") && strncmp(str(m, "ScaleUnit"), "100%", 4) == 0;
		r->scale = r->fraction ? 100 : 1;
		r->level = !g ? 0 : strstr(g, "PipelineL1") ? 1 : strstr(g, "PipelineL2") ? 2 : 0;
		const char *group = g ? strchr(g, ';') : NULL;
		if (r->level == 2 && group)
			snprintf(r->parent, sizeof(r->parent), "%.*s", (int)(strlen(group + 1) - 6),
				 group + 1);
	}
	return n;
}

/* Intel's alternate metrics name nodes ("Frontend_Bound"); the kb, as
 * perf, names them tma_frontend_bound. */
static void alt_metric_name(const char *node, char *out, size_t len)
{
	size_t i = snprintf(out, len, "tma_");
	for (; *node && i + 1 < len; node++)
		out[i++] = (char)(*node >= 'A' && *node <= 'Z' ? *node - 'A' + 'a' : *node);
	out[i] = '\0';
}

/*
 * An alternate formula with each one-letter alias replaced: events by
 * their kb form (EVENT:c1 is cpu@EVENT\,cmask\=1@), threshold metrics
 * ("metric_TMA_..Fetch_Latency(%)") by 100 * the kb metric, as they are
 * percent there. The whole is divided by 100 when it is a formula.
 */
static char *alt_formula(const char *formula, json_t *aliases, const char *value_key, bool percent)
{
	size_t cap = 8192, n = 0;
	char *out = malloc(cap);
	assert_non_null(out);
	n += snprintf(out + n, cap - n, "%s", percent ? "(" : "");
	for (const char *c = formula; *c; c++) {
		bool alias = *c >= 'a' && *c <= 'z' && (c == formula || !isalnum((unsigned char)c[-1])) &&
			     !isalnum((unsigned char)c[1]) && c[1] != '_' && c[1] != '(';
		json_t *a;
		size_t i;
		const char *value = NULL;
		if (alias)
			json_array_foreach(aliases, i, a)
				if (str(a, "Alias")[0] == *c && !str(a, "Alias")[1])
					value = str(a, value_key);
		if (!value) {
			out[n++] = *c;
		} else if (!percent) { /* a threshold's metric, in percent */
			char node[128], name[128];
			const char *start = strstr(value, "TMA_") + 4;
			start += strspn(start, ".");
			snprintf(node, sizeof(node), "%.*s", (int)strcspn(start, "("), start);
			alt_metric_name(node, name, sizeof(name));
			n += snprintf(out + n, cap - n, "(100 * %s)", name);
		} else if (strstr(value, ":c")) {
			const char *mod = strstr(value, ":c");
			n += snprintf(out + n, cap - n, "cpu@%.*s\\,cmask\\=%s@", (int)(mod - value), value, mod + 2);
		} else {
			n += snprintf(out + n, cap - n, "%s", value);
		}
		assert_true(n < cap - 64);
	}
	snprintf(out + n, cap - n, "%s", percent ? ") / 100" : "");
	return out;
}

static size_t intel_alt_metrics(json_t *file, struct ref_metric *out, size_t cap)
{
	size_t n = 0, i;
	json_t *m;
	json_array_foreach(json_object_get(file, "Metrics"), i, m) {
		json_t *threshold = json_object_get(m, "Threshold");
		if (n == cap)
			break;
		struct ref_metric *r = &out[n++];
		memset(r, 0, sizeof(*r));
		alt_metric_name(str(m, "MetricName"), r->name_buf, sizeof(r->name_buf));
		r->name = r->name_buf;
		r->expr = r->expr_buf = alt_formula(str(m, "Formula"), json_object_get(m, "Events"), "Name", true);
		if (threshold)
			r->threshold = r->threshold_buf = alt_formula(str(threshold, "Formula"),
								      json_object_get(threshold, "ThresholdMetrics"),
								      "Value", false);
		r->fraction = true; /* percent, shown as such */
		r->scale = 100;
		r->level = (int)json_integer_value(json_object_get(m, "Level"));
		if (str(m, "ParentCategory"))
			alt_metric_name(str(m, "ParentCategory"), r->parent, sizeof(r->parent));
	}
	return n;
}

struct ref_model {
	const struct ref_source *src;
	json_t *file;
	struct ref_metric metrics[512];
	size_t n;
	unsigned width; /* Arm num_slots; 0 elsewhere */
};

static void load_ref_model(const struct ref_source *src, struct ref_model *rm)
{
	rm->src = src;
	rm->width = 0;
	switch (src->kind) {
	case REF_INTEL:
		rm->file = load_json("intel/%s/%s", src->dir, src->file);
		rm->n = intel_metrics(rm->file, src->unit, rm->metrics, 512);
		break;
	case REF_ARM:
		rm->file = load_json("arm/%s.json", src->dir);
		rm->n = arm_metrics(rm->file, rm->metrics, 512);
		rm->width = (unsigned)json_integer_value(json_object_get(
			json_object_get(rm->file, "product_configuration"), "num_slots"));
		break;
	case REF_AMD:
		rm->file = load_json("amd/%s/pipeline.json", src->dir);
		rm->n = amd_metrics(rm->file, rm->metrics, 512);
		break;
	case REF_INTEL_ALT:
		rm->file = load_json("intel/alt/%s", src->file);
		rm->n = intel_alt_metrics(rm->file, rm->metrics, 512);
		break;
	}
}

static void release_ref_model(struct ref_model *rm)
{
	for (size_t i = 0; i < rm->n; i++) {
		free(rm->metrics[i].expr_buf);
		free(rm->metrics[i].threshold_buf);
	}
	json_decref(rm->file);
}

static const struct ref_metric *ref_metric(const struct ref_model *rm, const char *name)
{
	for (size_t i = 0; i < rm->n; i++)
		if (strcmp(rm->metrics[i].name, name) == 0)
			return &rm->metrics[i];
	return NULL;
}

static const struct ref_source *source_of(const char *model)
{
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
		if (strcmp(sources[i].model, model) == 0)
			return &sources[i];
	fail_msg("model %s has no reference source in this test", model);
	return NULL;
}

/* ---- formulas ----------------------------------------------------------- */

static int model_slot(void *ctx, const char *name)
{
	return td_model_slot(ctx, name);
}

static struct td_expr *compile_ref(const struct td_model *m, const char *metric, const char *text)
{
	char err[512];
	struct td_expr *e = td_expr_parse(text, err, sizeof(err));
	if (!e)
		fail_msg("%s %s: reference formula does not parse: %s", m->name, metric, err);
	if (td_expr_bind(e, model_slot, (void *)m, err, sizeof(err)))
		fail_msg("%s %s: the reference formula needs what the model lacks: %s", m->name,
			 metric, err);
	return e;
}

static bool agree(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	return a == b || fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

struct pair {
	const struct td_metric_def *mine;
	struct td_expr *ref, *ref_threshold;
	size_t finite;
};

static void compare_on_vectors(const struct td_model *m, struct pair *pairs, size_t n,
			       unsigned width)
{
	struct kbv_rng rng = { 0x2545f4914f6cdd1dull };
	double *values = calloc(m->n_slots, sizeof(*values));
	assert_non_null(values);
	for (int v = 0; v < VECTORS; v++) {
		kbv_fill(m, &rng, width, values);
		for (size_t i = 0; i < n; i++) {
			const struct td_metric_def *d = pairs[i].mine;
			double mine = values[d->slot], ref = td_expr_eval(pairs[i].ref, values);
			if (!agree(mine, ref))
				fail_msg("%s %s: %.17g here, %.17g by the reference", m->name, d->name,
					 mine, ref);
			pairs[i].finite += isfinite(mine);
			if (!pairs[i].ref_threshold)
				continue;
			double t = td_expr_eval(d->compiled_threshold, values);
			double rt = td_expr_eval(pairs[i].ref_threshold, values);
			if (!agree(t, rt))
				fail_msg("%s %s: threshold %g here, %g by the reference", m->name,
					 d->name, t, rt);
		}
	}
	free(values);
}

/* Intel and AMD give fractions as 0..1 shown at 100%; Arm's formulas give
 * percent, which the kb scales by 0.01 to a fraction. */
static void check_unit(const struct td_model *m, const struct td_metric_def *d,
		       const struct ref_metric *r)
{
	double want = !r->fraction ? 1 : r->scale == 100 ? 1 : 0.01;
	if ((d->unit == TD_UNIT_FRACTION) != r->fraction || fabs(d->scale - want) > 1e-12)
		fail_msg("%s %s: unit %s, scale %g; the reference implies %s, scale %g", m->name,
			 d->name, d->unit == TD_UNIT_FRACTION ? "fraction" : "ratio", d->scale,
			 r->fraction ? "fraction" : "ratio", want);
}

static void test_formulas(void **state)
{
	(void)state;
	require_reference();
	static struct ref_model rm;
	size_t total = 0;
	for (size_t i = 0; i < td_kb_model_count(kb); i++) {
		const struct td_model *m = td_kb_model_at(kb, i);
		load_ref_model(source_of(m->name), &rm);
		struct pair *pairs = calloc(m->n_metrics, sizeof(*pairs));
		assert_non_null(pairs);
		for (size_t k = 0; k < m->n_metrics; k++) {
			const struct td_metric_def *d = &m->metrics[k];
			const struct ref_metric *r = ref_metric(&rm, d->name);
			if (!r)
				fail_msg("%s %s: not in the reference", m->name, d->name);
			if (!r->threshold != !d->threshold)
				fail_msg("%s %s: threshold present on one side only", m->name, d->name);
			check_unit(m, d, r);
			pairs[k] = (struct pair){ d, compile_ref(m, d->name, r->expr),
						  r->threshold ? compile_ref(m, d->name, r->threshold)
							       : NULL, 0 };
		}
		compare_on_vectors(m, pairs, m->n_metrics, rm.width);
		for (size_t k = 0; k < m->n_metrics; k++) {
			if (pairs[k].finite * 10 < VECTORS * 9)
				fail_msg("%s %s: finite on only %zu of %d vectors", m->name,
					 pairs[k].mine->name, pairs[k].finite, VECTORS);
			td_expr_free(pairs[k].ref);
			td_expr_free(pairs[k].ref_threshold);
		}
		total += m->n_metrics;
		free(pairs);
		release_ref_model(&rm);
	}
	print_message("%zu formulas agree with the reference on %d vectors each\n", total, VECTORS);
}

/* ---- the tree ------------------------------------------------------------ */

static void check_placement(const struct td_model *m, const struct ref_metric *r, int deepest)
{
	const struct td_metric_def *d = td_model_metric(m, r->name);
	bool in_tree = r->level >= 1 && r->level <= deepest;
	if (!d && in_tree)
		fail_msg("%s: reference node %s (level %d) is missing", m->name, r->name, r->level);
	if (!d || d->kind != TD_METRIC_TREE)
		return;
	if (d->level != r->level || strcmp(d->parent ? d->parent : "", r->parent) != 0)
		fail_msg("%s %s: level %d under '%s' here, level %d under '%s' in the reference",
			 m->name, d->name, d->level, d->parent ? d->parent : "", r->level, r->parent);
}

/* Arm's Topdown_* groups hold one node (backend_busy_bound) that no
 * decision-tree item leads to: the kb hangs it under backend_bound. */
static void fix_orphan(struct ref_metric *r)
{
	if (r->level == 0 && !r->parent[0] && strcmp(r->name, "backend_busy_bound") == 0) {
		r->level = 2;
		snprintf(r->parent, sizeof(r->parent), "backend_bound");
	}
}

static int arm_level(const struct ref_model *rm, const struct ref_metric *r)
{
	if (r->level == 1 || !r->parent[0])
		return r->level;
	return 1 + arm_level(rm, ref_metric(rm, r->parent));
}

static void check_info(const struct td_model *m, const struct ref_source *src)
{
	if (src->kind != REF_INTEL)
		return;
	const char *const *names = src->unit && strcmp(src->unit, "cpu_atom") == 0
					   ? intel_atom_info : intel_core_info;
	for (; *names; names++) {
		const struct td_metric_def *d = td_model_metric(m, *names);
		if (!d || d->kind != TD_METRIC_INFO)
			fail_msg("%s: Info metric %s is missing", m->name, *names);
	}
}

static void test_tree(void **state)
{
	(void)state;
	require_reference();
	static struct ref_model rm;
	for (size_t i = 0; i < td_kb_model_count(kb); i++) {
		const struct td_model *m = td_kb_model_at(kb, i);
		load_ref_model(source_of(m->name), &rm);
		for (size_t k = 0; k < rm.n; k++) {
			struct ref_metric *r = &rm.metrics[k];
			if (rm.src->kind == REF_ARM) {
				fix_orphan(r);
				r->level = arm_level(&rm, r);
			}
			/* Intel to level 3; Arm's and AMD's trees in full */
			check_placement(m, r, rm.src->kind == REF_INTEL ? 3 : 9);
		}
		check_info(m, rm.src);
		if (rm.width && m->slots_per_cycle != rm.width)
			fail_msg("%s: %u slots per cycle, the reference says %u", m->name,
				 m->slots_per_cycle, rm.width);
		release_ref_model(&rm);
	}
}

/* Arm: the width is #slots, not a number, so caps/slots can change it. */
static void test_arm_width_is_a_parameter(void **state)
{
	(void)state;
	for (size_t i = 0; i < td_kb_model_count(kb); i++) {
		const struct td_model *m = td_kb_model_at(kb, i);
		const struct td_metric_def *be = td_model_metric(m, "backend_bound");
		if (m->vendor != TD_VENDOR_ARM || !be)
			continue;
		double *values = calloc(m->n_slots, sizeof(*values));
		struct kbv_rng rng = { 7 };
		kbv_fill(m, &rng, m->slots_per_cycle, values);
		double at_width = values[be->slot];
		struct td_host_facts facts = { .slots_per_cycle = m->slots_per_cycle * 2 };
		td_model_set_constants(m, &facts, values);
		kbv_evaluate(m, values);
		if (!(values[be->slot] < at_width))
			fail_msg("%s: backend_bound ignores #slots", m->name);
		free(values);
	}
}

/* ---- event encodings ------------------------------------------------------ */

/* perf's JSON converter encodes these architectural fixed-counter events
 * by their general-purpose codes; the other fixed events keep the JSON's. */
static const struct { const char *name; uint64_t config; } perf_fixed[] = {
	{ "INST_RETIRED.ANY", 0xc0 },
	{ "CPU_CLK_UNHALTED.THREAD", 0x3c },
	{ "CPU_CLK_UNHALTED.CORE", 0x3c },
	{ "CPU_CLK_UNHALTED.THREAD_ANY", 0x3c | 1ull << 21 },
};

static json_t *find_event(json_t **files, size_t n, const char *name, const char *unit)
{
	for (size_t f = 0; f < n; f++) {
		size_t i;
		json_t *e;
		json_array_foreach(files[f], i, e) {
			if (str(e, "EventName") && strcmp(str(e, "EventName"), name) == 0 &&
			    (!unit || (str(e, "Unit") && strcmp(str(e, "Unit"), unit) == 0)))
				return e;
		}
	}
	return NULL;
}

/* "cmask=1,edge" onto a config: the Intel and AMD core PMU bit positions. */
static uint64_t apply_modifiers(uint64_t config, char *mods)
{
	static const struct { const char *term; int shift; uint64_t mask; } terms[] = {
		{ "umask", 8, 0xff }, { "edge", 18, 1 }, { "inv", 23, 1 }, { "cmask", 24, 0xff },
	};
	for (char *save, *t = strtok_r(mods, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');
		uint64_t v = eq ? strtoull(eq + 1, NULL, 0) : 1;
		size_t k = 0, n = sizeof(terms) / sizeof(terms[0]);
		if (eq)
			*eq = '\0';
		while (k < n && strcmp(terms[k].term, t) != 0)
			k++;
		if (k == n)
			fail_msg("unknown modifier %s", t);
		config = (config & ~(terms[k].mask << terms[k].shift)) | v << terms[k].shift;
	}
	return config;
}

/* "cpu_core/EVENT,cmask=1/" -> "EVENT" and "cmask=1". */
static void split_name(const struct td_model *m, const char *name, char *base, size_t len,
		       char **mods)
{
	size_t pmu = strlen(m->pmu);
	if (strcmp(m->pmu, "cpu") != 0 && strncmp(name, m->pmu, pmu) == 0 && name[pmu] == '/')
		snprintf(base, len, "%.*s", (int)(strlen(name) - pmu - 2), name + pmu + 1);
	else
		snprintf(base, len, "%s", name);
	char *comma = strchr(base, ',');
	*mods = comma ? comma + 1 : base + strlen(base);
	if (comma)
		*comma = '\0';
}

static uint32_t counter_mask(const char *counters, bool *fixed)
{
	uint32_t mask = 0;
	*fixed = strncmp(counters, "Fixed counter", 13) == 0;
	if (*fixed)
		return 1u << atoi(counters + 13);
	char copy[128];
	snprintf(copy, sizeof(copy), "%s", counters);
	for (char *save, *c = strtok_r(copy, ",", &save); c; c = strtok_r(NULL, ",", &save))
		mask |= 1u << atoi(c);
	return mask;
}

static void check_intel_event(const struct td_model *m, const struct td_event_def *ev,
			      json_t **files, size_t n, const char *unit)
{
	char base[256], *mods;
	split_name(m, ev->name, base, sizeof(base), &mods);
	json_t *e = find_event(files, n, base, unit);
	if (!e)
		fail_msg("%s: event %s is not in the reference", m->name, ev->name);
	uint64_t config = (hex(e, "EventCode") & 0xff) | hex(e, "UMask") << 8 |
			  hex(e, "EdgeDetect") << 18 | hex(e, "AnyThread") << 21 |
			  hex(e, "Invert") << 23 | hex(e, "CounterMask") << 24;
	for (size_t k = 0; k < sizeof(perf_fixed) / sizeof(perf_fixed[0]); k++)
		if (strcmp(perf_fixed[k].name, base) == 0)
			config = perf_fixed[k].config;
	bool fixed;
	uint32_t counters = counter_mask(str(e, "Counter"), &fixed);
	if (m->alternate_for && fixed) { /* a variant without fixed counters: any general one */
		counters = (1u << m->gp_counters) - 1;
		fixed = false;
	}
	config = apply_modifiers(config, mods);
	uint64_t config1 = str(e, "MSRIndex") ? hex(e, "MSRValue") : 0;
	if (ev->config != config || ev->config1 != config1 || ev->config2 != 0)
		fail_msg("%s %s: config %#llx/%#llx, the reference gives %#llx/%#llx", m->name,
			 ev->name, (unsigned long long)ev->config, (unsigned long long)ev->config1,
			 (unsigned long long)config, (unsigned long long)config1);
	if (ev->counters != counters || !(ev->flags & TD_EVENT_FIXED) != !(fixed && !*mods))
		fail_msg("%s %s: counters %#x%s, the reference says %s", m->name, ev->name,
			 ev->counters, ev->flags & TD_EVENT_FIXED ? " (fixed)" : "", str(e, "Counter"));
	if (!(ev->flags & TD_EVENT_SLOTS_LEADER) != !!strcmp(base, "TOPDOWN.SLOTS"))
		fail_msg("%s %s: the slots leader is TOPDOWN.SLOTS", m->name, ev->name);
}

/* The kernel's own events have no JSON: perf-metrics members. */
static bool is_perf_metric(const struct td_model *m, const struct td_event_def *ev)
{
	char base[256], *mods;
	split_name(m, ev->name, base, sizeof(base), &mods);
	if (strncmp(base, "topdown-", 8) != 0)
		return false;
	if (!(ev->flags & TD_EVENT_PERF_METRICS) || ev->counters || (ev->config & 0xff) ||
	    (ev->config >> 8 & 0xff) < 0x80)
		fail_msg("%s %s: a perf-metrics event is event 0x00, umask 0x80 and up, flagged",
			 m->name, ev->name);
	return true;
}

static void check_intel_events(const struct td_model *m, const struct ref_source *src)
{
	static const char *const names[] = { "cache", "floating-point", "frontend", "memory",
					     "other", "pipeline", "virtual-memory" };
	json_t *files[7];
	size_t n = sizeof(names) / sizeof(names[0]), perf_metrics = 0;
	for (size_t f = 0; f < n; f++)
		files[f] = load_json("intel/%s/%s.json", src->dir, names[f]);
	for (size_t i = 0; i < m->n_events; i++) {
		if (is_perf_metric(m, &m->events[i]))
			perf_metrics++;
		else
			check_intel_event(m, &m->events[i], files, n, src->unit);
	}
	for (size_t f = 0; f < n; f++)
		json_decref(files[f]);
	if (perf_metrics)
		print_message("%s: %zu perf-metrics events have no reference JSON (kernel "
			      "encodings, checked for form only)\n", m->name, perf_metrics);
}

static void check_arm_events(const struct td_model *m, const struct ref_source *src)
{
	json_t *file = load_json("arm/%s.json", src->dir);
	json_t *events = json_object_get(file, "events");
	for (size_t i = 0; i < m->n_events; i++) {
		const struct td_event_def *ev = &m->events[i];
		json_t *e = json_object_get(events, ev->name);
		if (!e || ev->config != hex(e, "code") || ev->config1 || ev->config2)
			fail_msg("%s %s: not the reference event code", m->name, ev->name);
	}
	json_decref(file);
}

static void check_amd_events(const struct td_model *m, const struct ref_source *src)
{
	static const char *const zen4[] = { "branch", "cache", "core", "floating-point", "memory",
					    "other", "pipeline" };
	static const char *const zen5[] = { "branch-prediction", "decode", "execution",
					    "floating-point", "inst-cache", "l2-cache",
					    "load-store", "pipeline" };
	bool is4 = strcmp(src->dir, "amdzen4") == 0;
	size_t n = is4 ? 7 : 8;
	json_t *files[8];
	for (size_t f = 0; f < n; f++)
		files[f] = load_json("amd/%s/%s.json", src->dir, is4 ? zen4[f] : zen5[f]);
	for (size_t i = 0; i < m->n_events; i++) {
		const struct td_event_def *ev = &m->events[i];
		char base[256], *mods;
		split_name(m, ev->name, base, sizeof(base), &mods);
		json_t *e = find_event(files, n, base, NULL);
		if (!e)
			fail_msg("%s: event %s is not in the reference", m->name, ev->name);
		uint64_t code = hex(e, "EventCode");
		uint64_t config = apply_modifiers((code & 0xff) | hex(e, "UMask") << 8 |
							  (code >> 8 & 0xf) << 32, mods);
		if (ev->config != config || ev->config1 || ev->config2)
			fail_msg("%s %s: config %#llx, the reference gives %#llx", m->name, ev->name,
				 (unsigned long long)ev->config, (unsigned long long)config);
	}
	for (size_t f = 0; f < n; f++)
		json_decref(files[f]);
}

/* counter.json, where the reference has it: the counter budget. */
static void check_budget(const struct td_model *m, const struct ref_source *src)
{
	char path[2048];
	snprintf(path, sizeof(path), "%s/intel/%s/counter.json", refdir, src->dir);
	json_t *file = json_load_file(path, 0, NULL), *e;
	size_t i;
	json_array_foreach(file, i, e) {
		const char *unit = str(e, "Unit");
		if (!unit || strcmp(unit, src->unit ? src->unit : "core") != 0)
			continue;
		if (m->gp_counters != strtoul(str(e, "CountersNumGeneric"), NULL, 10) ||
		    m->fixed_counters != strtoul(str(e, "CountersNumFixed"), NULL, 10))
			fail_msg("%s: %u GP and %u fixed counters, the reference says %s and %s",
				 m->name, m->gp_counters, m->fixed_counters,
				 str(e, "CountersNumGeneric"), str(e, "CountersNumFixed"));
	}
	json_decref(file);
}

static void test_event_encodings(void **state)
{
	(void)state;
	require_reference();
	size_t total = 0;
	for (size_t i = 0; i < td_kb_model_count(kb); i++) {
		const struct td_model *m = td_kb_model_at(kb, i);
		const struct ref_source *src = source_of(m->name);
		if (src->kind == REF_INTEL) {
			check_intel_events(m, src);
			check_budget(m, src);
		} else if (src->kind == REF_INTEL_ALT) {
			/* the main model's events and counters, without fixed counters */
			check_intel_events(m, src);
			if (m->gp_counters != m->alternate_for->gp_counters || m->fixed_counters ||
			    m->alternate_for->gp_alternate != m)
				fail_msg("%s: %u general and %u fixed counters as the variant of %s (%u general)",
					 m->name, m->gp_counters, m->fixed_counters,
					 m->alternate_for->name, m->alternate_for->gp_counters);
		} else if (src->kind == REF_ARM) {
			check_arm_events(m, src);
		} else {
			check_amd_events(m, src);
		}
		total += m->n_events;
	}
	print_message("%zu event encodings checked\n", total);
}

/* ---- detection -------------------------------------------------------------- */

/* One line of a perf mapfile: CPUID regex -> model folder. */
struct map_entry {
	regex_t re;
	bool with_stepping; /* the regex covers Vendor-Family-Model-Stepping */
	char folder[64];
};

static size_t load_mapfile(const char *mapfile, struct map_entry *out, size_t cap)
{
	char path[2048], line[512];
	size_t n = 0;
	snprintf(path, sizeof(path), "%s/%s", refdir, mapfile);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	while (n < cap && fgets(line, sizeof(line), f)) {
		char *save, *re_text = strtok_r(line, ",", &save), *version = strtok_r(NULL, ",", &save);
		char *dir = strtok_r(NULL, ",", &save);
		if (!version || !dir || strcmp(re_text, "Family-model") == 0)
			continue;
		int dashes = 0;
		for (const char *c = re_text; *c; c++)
			dashes += *c == '-';
		out[n].with_stepping = dashes >= 3;
		snprintf(out[n].folder, sizeof(out[n].folder), "%s", dir);
		assert_int_equal(regcomp(&out[n].re, re_text, REG_EXTENDED), 0);
		n++;
	}
	fclose(f);
	return n;
}

static void free_mapfile(struct map_entry *map, size_t n)
{
	for (size_t i = 0; i < n; i++)
		regfree(&map[i].re);
}

/*
 * perf's x86 match: the first line whose regex covers the whole
 * "Vendor-Family-Model" id, or "Vendor-Family-Model-Stepping" when the
 * line names steppings.
 */
static const char *map_lookup(const struct map_entry *map, size_t n, const struct td_cpuinfo *cpu)
{
	for (size_t i = 0; i < n; i++) {
		char id[64];
		regmatch_t match;
		snprintf(id, sizeof(id), map[i].with_stepping ? "%s-%u-%X-%X" : "%s-%u-%X",
			 cpu->vendor, cpu->family, cpu->model, cpu->stepping);
		if (regexec(&map[i].re, id, 1, &match, 0) == 0 && match.rm_so == 0 &&
		    (size_t)match.rm_eo == strlen(id))
			return map[i].folder;
	}
	return NULL;
}

/* What detection must answer for cpu: the model the folder names (the kb
 * accepts reference folder names as aliases), or none. */
static void expect_detected(const struct td_cpuinfo *cpu, const char *folder)
{
	const struct td_model *want = folder ? td_kb_model(kb, folder) : NULL, *got = NULL;
	char err[512];
	int rc = td_kb_detect_model(kb, cpu, &got, err, sizeof(err));
	if (want != got || (rc == 0) != (want != NULL))
		fail_msg("%s family %u model %#x stepping %u: detected %s, the reference says %s",
			 cpu->vendor, cpu->family, cpu->model, cpu->stepping, got ? got->name : "none",
			 want ? want->name : folder ? folder : "none");
}

static void test_detect_x86(void **state)
{
	(void)state;
	require_reference();
	static struct map_entry map[128];
	size_t n = load_mapfile("intel/mapfile.csv", map, 128);
	struct td_cpuinfo cpu = { .vendor = "GenuineIntel", .family = 6 };
	for (cpu.model = 0; cpu.model < 256; cpu.model++)
		for (cpu.stepping = 0; cpu.stepping < 16; cpu.stepping++)
			expect_detected(&cpu, map_lookup(map, n, &cpu));
	free_mapfile(map, n);

	n = load_mapfile("amd/mapfile.csv", map, 128);
	struct td_cpuinfo amd = { .vendor = "AuthenticAMD", .family = 25 };
	for (amd.model = 0; amd.model < 256; amd.model++) {
		const char *folder = map_lookup(map, n, &amd);
		/* Zen 3 has a folder but no pipeline metrics: no model */
		expect_detected(&amd, folder && strcmp(folder, "amdzen3") != 0 ? folder : NULL);
	}
	free_mapfile(map, n);
	/* The README: upstream maps family 26 to amdzen5. */
	amd.family = 26;
	for (amd.model = 0; amd.model < 256; amd.model++)
		expect_detected(&amd, "amdzen5");
}

static void test_detect_arm(void **state)
{
	(void)state;
	require_reference();
	static const char *const files[] = { "neoverse-n1", "neoverse-v1", "neoverse-n2",
					     "neoverse-n2-r0p3", "neoverse-v2", "neoverse-v3",
					     "neoverse-n3" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		json_t *file = load_json("arm/%s.json", files[i]);
		json_t *pc = json_object_get(file, "product_configuration");
		struct td_cpuinfo cpu = { .vendor = "ARM" };
		cpu.implementer = (unsigned)hex(pc, "implementer");
		cpu.part = (unsigned)hex(pc, "part_num");
		cpu.variant = (unsigned)hex(pc, "major_revision");
		cpu.revision = (unsigned)hex(pc, "minor_revision");
		expect_detected(&cpu, files[i]);
		json_decref(file);
	}
	/* neoverse-n2-r0p0.json and -r0p1.json name neoverse-n2.json */
	struct td_cpuinfo n2 = { .vendor = "ARM", .implementer = 0x41, .part = 0xd49 };
	for (n2.revision = 0; n2.revision < 2; n2.revision++)
		expect_detected(&n2, "neoverse-n2");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_formulas),
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_arm_width_is_a_parameter),
		cmocka_unit_test(test_event_encodings),
		cmocka_unit_test(test_detect_x86),
		cmocka_unit_test(test_detect_arm),
	};
	return cmocka_run_group_tests(tests, load_kb, free_kb);
}
