// SPDX-License-Identifier: BSD-3-Clause
/*
 * explain: lookups by every name form, suggestions, the kb lint (prose for
 * every node, a node for every prose entry, parents that exist), coverage
 * of the vendors' reference metric files, and `topdown explain` output.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>

#include "commands.h"
#include "explain_render.h"
#include "explain.h"
#include "kb.h"

static const struct td_kb *kb;

static int setup(void **state)
{
	char err[512];

	(void)state;
	kb = td_kb_load(err, sizeof(err));
	if (!kb)
		fprintf(stderr, "kb: %s\n", err);
	return kb ? 0 : -1;
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Looks query up and checks it found the entry (vendor, name). */
static struct td_explanation *lookup_ok(const char *query, const char *model,
					enum td_vendor vendor, const char *name)
{
	struct td_explanation *e = NULL;
	char err[1024] = "";
	int ret = td_explain_lookup(kb, query, model, &e, err, sizeof(err));

	if (ret)
		fail_msg("lookup '%s' (model %s): %d %s", query, model ? model : "-", ret, err);
	assert_non_null(e);
	assert_int_equal(e->text->vendor, vendor);
	assert_string_equal(e->text->name, name);
	return e;
}

/* The placement whose models include model, or NULL. */
static const struct td_explain_placement *placement_on(const struct td_explanation *e,
							const char *model)
{
	for (size_t i = 0; i < e->n_placements; i++)
		for (size_t k = 0; k < e->placements[i].n_models; k++)
			if (!strcmp(e->placements[i].models[k], model))
				return &e->placements[i];
	return NULL;
}

static bool has_alias(const struct td_explanation *e, const char *alias)
{
	for (size_t i = 0; i < e->n_aliases; i++)
		if (!strcmp(e->aliases[i], alias))
			return true;
	return false;
}

/* ---------------------------------------------------------------- lookups */

static void test_lookup_name_forms(void **state)
{
	static const char *const forms[] = {
		"Backend_Bound.Memory_Bound.DRAM_Bound", "backend_bound.memory_bound.dram_bound",
		"DRAM_Bound", "dram_bound", "tma_l3_miss_bound", "tma_dram_bound", "TMA_DRAM_BOUND",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		struct td_explanation *e = lookup_ok(forms[i], NULL, TD_VENDOR_INTEL, "tma_l3_miss_bound");
		const struct td_explain_placement *p = placement_on(e, "skx");

		assert_true(e->computed);
		assert_int_equal(e->kind, TD_METRIC_TREE);
		assert_true(has_alias(e, "tma_dram_bound"));
		assert_non_null(p);
		assert_string_equal(p->path, "Backend_Bound.Memory_Bound.DRAM_Bound");
		assert_string_equal(p->parent, "Backend_Bound.Memory_Bound");
		assert_int_equal(p->level, 3);
		assert_non_null(p->threshold);
		assert_non_null(strstr(p->threshold, "tma_l3_miss_bound"));
		assert_non_null(placement_on(e, "spr"));
		assert_null(placement_on(e, "zen4"));
		td_explanation_free(e);
	}
}

static void test_lookup_vendor_names(void **state)
{
	struct td_explanation *e;

	(void)state;
	/* Arm and AMD share the name: without a model Arm wins, the rest are
	 * listed in also; a model picks its vendor's entry. */
	e = lookup_ok("backend_bound", NULL, TD_VENDOR_ARM, "backend_bound");
	assert_int_equal(e->n_also, 2);
	assert_int_equal(e->also[0]->vendor, TD_VENDOR_AMD);
	assert_int_equal(e->also[1]->vendor, TD_VENDOR_INTEL);
	assert_non_null(placement_on(e, "neoverse-v2"));
	assert_null(placement_on(e, "zen4"));
	td_explanation_free(e);

	e = lookup_ok("Backend_Bound", "zen4", TD_VENDOR_AMD, "backend_bound");
	assert_int_equal(e->n_placements, 1);
	assert_string_equal(e->placements[0].models[0], "zen4");
	td_explanation_free(e);

	e = lookup_ok("backend_bound", "skx", TD_VENDOR_INTEL, "tma_backend_bound");
	assert_string_equal(e->name, "tma_backend_bound");
	td_explanation_free(e);

	/* Zen 5 renamed the level-2 nodes: one entry, either name. */
	e = lookup_ok("frontend_bound_by_latency", NULL, TD_VENDOR_AMD, "frontend_bound_latency");
	assert_non_null(placement_on(e, "zen4"));
	assert_non_null(placement_on(e, "zen5"));
	assert_true(has_alias(e, "frontend_bound_by_latency"));
	td_explanation_free(e);
	e = lookup_ok("Frontend_Bound_Latency", "zen5", TD_VENDOR_AMD, "frontend_bound_latency");
	assert_string_equal(e->name, "frontend_bound_by_latency");
	assert_string_equal(e->placements[0].path, "Frontend_Bound.Frontend_Bound_By_Latency");
	td_explanation_free(e);

	/* N1's cycle-based top level carries the model's note. */
	e = lookup_ok("FRONTEND_STALLED_CYCLES", "neoverse-n1", TD_VENDOR_ARM, "frontend_stalled_cycles");
	assert_int_equal(e->placements[0].level, 1);
	assert_int_equal(e->n_notes, 1);
	assert_non_null(strstr(e->notes[0], "N1"));
	td_explanation_free(e);
}

static void test_lookup_placements_and_kinds(void **state)
{
	struct td_explanation *e;
	const struct td_explain_placement *p;

	(void)state;
	/* P-cores and E-cores put ICache_Misses under different parents. */
	e = lookup_ok("ICache_Misses", NULL, TD_VENDOR_INTEL, "tma_icache_misses");
	assert_int_equal(e->n_placements, 2);
	assert_string_equal(placement_on(e, "skl")->parent, "Frontend_Bound.Fetch_Latency");
	assert_string_equal(placement_on(e, "adl-atom")->parent, "Frontend_Bound.IFetch_Latency");
	assert_true(e->placements[0].n_models >= e->placements[1].n_models);
	td_explanation_free(e);

	e = lookup_ok("tma_info_thread_ipc", NULL, TD_VENDOR_INTEL, "tma_info_thread_ipc");
	assert_int_equal(e->kind, TD_METRIC_INFO);
	p = placement_on(e, "spr");
	assert_non_null(p);
	assert_null(p->path);
	assert_null(p->parent);
	assert_int_equal(p->level, 0);
	td_explanation_free(e);

	/* Explained, not computed: placed by the table's reference path. */
	e = lookup_ok("DTLB_Load", NULL, TD_VENDOR_INTEL, "tma_dtlb_load");
	assert_false(e->computed);
	assert_int_equal(e->n_placements, 1);
	assert_string_equal(e->placements[0].path, "Backend_Bound.Memory_Bound.L1_Bound.DTLB_Load");
	assert_string_equal(e->placements[0].parent, "Backend_Bound.Memory_Bound.L1_Bound");
	assert_int_equal(e->placements[0].level, 4);
	assert_int_equal(e->placements[0].n_models, 0);
	td_explanation_free(e);
}

static void test_lookup_errors(void **state)
{
	struct td_explanation *e = (void *)1;
	char err[1024];

	(void)state;
	assert_int_equal(td_explain_lookup(kb, "DRAM_Bund", NULL, &e, err, sizeof(err)), -ENOENT);
	assert_null(e);
	assert_string_equal(err, "unknown metric 'DRAM_Bund'; did you mean DRAM_Bound? "
				 "(topdown explain --list shows all)");

	assert_int_equal(td_explain_lookup(kb, "qqqqqqqqqqqqqqqq", NULL, &e, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "unknown metric 'qqqqqqqqqqqqqqqq' (topdown explain --list shows all)");

	assert_int_equal(td_explain_lookup(kb, "tma_amx_busy", "skx", &e, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "not defined on model skx"));
	assert_non_null(strstr(err, "spr"));

	assert_int_equal(td_explain_lookup(kb, "tma_dtlb_load", "spr", &e, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "computes it on no model"));

	assert_int_equal(td_explain_lookup(kb, "DRAM_Bound", "nosuch", &e, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown model 'nosuch'; known models:"));
	assert_non_null(strstr(err, " skl"));
	assert_non_null(strstr(err, " zen5"));

	assert_int_equal(td_explain_lookup(kb, "", NULL, &e, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "no metric name given"));
	assert_int_equal(td_explain_lookup(kb, NULL, "skx", &e, err, sizeof(err)), -ENOENT);
	assert_null(e);

	/* A short buffer truncates the sentence but stays terminated. */
	assert_int_equal(td_explain_lookup(kb, "DRAM_Bund", NULL, &e, err, 12), -ENOENT);
	assert_string_equal(err, "unknown met");
}

static void test_suggestions(void **state)
{
	const char *names[TD_EXPLAIN_MAX_SUGGESTIONS];
	const struct td_model *zen4 = td_kb_model(kb, "zen4");

	(void)state;
	assert_int_equal(td_explain_suggest(kb, "DRAM_Bund", NULL, names, 3) > 0, 1);
	assert_string_equal(names[0], "DRAM_Bound");
	assert_true(td_explain_suggest(kb, "tma_fronted_bound", NULL, names, 3) > 0);
	assert_string_equal(names[0], "tma_frontend_bound");
	assert_true(td_explain_suggest(kb, "backend_bund", NULL, names, 1) == 1);
	assert_true(!strcasecmp(names[0], "backend_bound"));
	assert_int_equal(td_explain_suggest(kb, "completely_unrelated_words", NULL, names, 3), 0);
	/* Restricted to a model: only that model's names. */
	assert_non_null(zen4);
	assert_true(td_explain_suggest(kb, "smt_contension", zen4, names, 3) > 0);
	assert_true(!strcasecmp(names[0], "smt_contention"));
	assert_int_equal(td_explain_suggest(kb, "tma_l1_bund", zen4, names, 3), 0);
}

/* ---------------------------------------------------------------- lint */

static size_t count_items(const char *const *items)
{
	size_t n = 0;

	while (items[n])
		n++;
	return n;
}

/* Text for a reader: non-empty, a full sentence. */
static void check_sentence(const struct td_explain_text *t, const char *what, const char *s)
{
	size_t len = s ? strlen(s) : 0;

	if (len < 10 || (s[len - 1] != '.' && s[len - 1] != ')'))
		fail_msg("%s %s: '%s' is not a sentence", t->name, what, s ? s : "(null)");
}

static void test_lint_entries(void **state)
{
	(void)state;
	assert_true(td_explain_text_count >= 120);
	for (size_t i = 0; i < td_explain_text_count; i++) {
		const struct td_explain_text *t = &td_explain_texts[i];
		size_t causes, hints;

		/* The arrays must keep their NULL terminator. */
		assert_null(t->causes[TD_EXPLAIN_MAX_ITEMS]);
		assert_null(t->hints[TD_EXPLAIN_MAX_ITEMS]);
		assert_null(t->aliases[TD_EXPLAIN_MAX_ALIASES]);
		causes = count_items(t->causes);
		hints = count_items(t->hints);
		assert_non_null(t->name);
		assert_non_null(t->title);
		assert_true(t->title[0] != '\0');
		check_sentence(t, "description", t->description);
		if (!causes || !hints)
			fail_msg("%s: %zu causes and %zu hints", t->name, causes, hints);
		for (size_t k = 0; k < causes; k++)
			check_sentence(t, "cause", t->causes[k]);
		for (size_t k = 0; k < hints; k++) {
			check_sentence(t, "hint", t->hints[k]);
			/* topdown samples events itself; perf only for what it cannot
			 * (branch records, AMD IBS) */
			if (strstr(t->hints[k], "perf record") && !strstr(t->hints[k], "perf record -b") &&
			    !strstr(t->hints[k], "ibs_"))
				fail_msg("%s: a hint sends the user to perf record", t->name);
		}
		/* One entry per vendor name; no alias shadows another entry. */
		for (size_t j = 0; j < i; j++) {
			const struct td_explain_text *o = &td_explain_texts[j];

			if (o->vendor != t->vendor)
				continue;
			if (!strcasecmp(o->name, t->name))
				fail_msg("%s is in the table twice", t->name);
			for (size_t a = 0; t->aliases[a]; a++)
				if (!strcasecmp(o->name, t->aliases[a]))
					fail_msg("alias %s of %s is entry %s", t->aliases[a], t->name, o->name);
		}
	}
}

/* How many table entries explain metric d of model m. */
static size_t explainers(const struct td_model *m, const struct td_metric_def *d)
{
	size_t n = 0;

	for (size_t i = 0; i < td_explain_text_count; i++) {
		const struct td_explain_text *t = &td_explain_texts[i];
		bool hit = t->vendor == m->vendor && td_model_metric(m, t->name) == d;

		for (size_t a = 0; !hit && t->vendor == m->vendor && t->aliases[a]; a++)
			hit = td_model_metric(m, t->aliases[a]) == d;
		n += hit;
	}
	return n;
}

static void test_lint_every_kb_metric_explained(void **state)
{
	(void)state;
	assert_true(td_kb_model_count(kb) > 0);
	for (size_t i = 0; i < td_kb_model_count(kb); i++) {
		const struct td_model *m = td_kb_model_at(kb, i);

		for (size_t k = 0; k < m->n_metrics; k++) {
			const struct td_metric_def *d = &m->metrics[k];
			size_t n;

			if (d->kind == TD_METRIC_HELPER)
				continue;
			n = explainers(m, d);
			if (n != 1)
				fail_msg("%s on %s: %zu explanations in kb/explain_text.c", d->name, m->name, n);
		}
	}
}

static void test_lint_kb_tree_parents(void **state)
{
	char expect[512];

	(void)state;
	for (size_t i = 0; i < td_kb_model_count(kb); i++) {
		const struct td_model *m = td_kb_model_at(kb, i);

		for (size_t k = 0; k < m->n_metrics; k++) {
			const struct td_metric_def *d = &m->metrics[k];
			const struct td_metric_def *parent;

			if (d->kind != TD_METRIC_TREE)
				continue;
			assert_non_null(d->path);
			assert_non_null(d->node);
			if (d->level == 1) {
				assert_null(d->parent);
				assert_string_equal(d->path, d->node);
				continue;
			}
			parent = d->parent ? td_model_metric(m, d->parent) : NULL;
			if (!parent || parent->kind != TD_METRIC_TREE)
				fail_msg("%s on %s: parent %s is not a tree node", d->name, m->name,
					 d->parent ? d->parent : "(none)");
			assert_int_equal(parent->level, d->level - 1);
			snprintf(expect, sizeof(expect), "%s.%s", parent->path, d->node);
			assert_string_equal(d->path, expect);
		}
	}
}

/* Whether some tree metric of vendor has this path. */
static bool kb_has_path(enum td_vendor vendor, const char *path)
{
	for (size_t i = 0; i < td_kb_model_count(kb); i++) {
		const struct td_model *m = td_kb_model_at(kb, i);

		for (size_t k = 0; m->vendor == vendor && k < m->n_metrics; k++)
			if (m->metrics[k].path && !strcmp(m->metrics[k].path, path))
				return true;
	}
	return false;
}

static bool table_has_ref_path(const char *path)
{
	for (size_t i = 0; i < td_explain_text_count; i++)
		if (td_explain_texts[i].ref_path && !strcmp(td_explain_texts[i].ref_path, path))
			return true;
	return false;
}

static void test_lint_every_entry_has_a_node(void **state)
{
	(void)state;
	for (size_t i = 0; i < td_explain_text_count; i++) {
		const struct td_explain_text *t = &td_explain_texts[i];
		bool defined = false;

		for (size_t k = 0; k < td_kb_model_count(kb) && !defined; k++) {
			const struct td_model *m = td_kb_model_at(kb, k);

			defined = m->vendor == t->vendor && td_model_metric(m, t->name);
			for (size_t a = 0; !defined && m->vendor == t->vendor && t->aliases[a]; a++)
				defined = td_model_metric(m, t->aliases[a]);
		}
		if (defined && t->ref_path)
			fail_msg("%s has a ref_path in kb/explain_text.c but the kb now defines it: "
				 "delete the ref_path", t->name);
		if (!defined && !t->ref_path)
			fail_msg("%s is explained but no model defines it", t->name);
		if (t->ref_path) {
			char parent[256];
			const char *dot = strrchr(t->ref_path, '.');

			assert_non_null(dot);
			snprintf(parent, sizeof(parent), "%.*s", (int)(dot - t->ref_path), t->ref_path);
			if (!kb_has_path(t->vendor, parent) && !table_has_ref_path(parent))
				fail_msg("%s: parent %s of its ref_path does not exist", t->name, parent);
		}
	}
}

/* Every node and Info metric can be explained by name and by path. */
static void test_explain_works_for_every_node(void **state)
{
	char err[1024];

	(void)state;
	for (size_t i = 0; i < td_kb_model_count(kb); i++) {
		const struct td_model *m = td_kb_model_at(kb, i);

		for (size_t k = 0; k < m->n_metrics; k++) {
			const struct td_metric_def *d = &m->metrics[k];
			const char *queries[] = { d->name, d->path, d->node };
			struct td_explanation *e;

			if (d->kind == TD_METRIC_HELPER)
				continue;
			for (size_t q = 0; q < 3 && queries[q]; q++) {
				if (td_explain_lookup(kb, queries[q], m->name, &e, err, sizeof(err)))
					fail_msg("%s on %s: %s", queries[q], m->name, err);
				assert_string_equal(e->name, d->name);
				assert_int_equal(e->n_placements, 1);
				assert_true(str_eq(e->placements[0].path, d->path));
				td_explanation_free(e);
			}
		}
	}
}

/* ---------------------------------------------------------------- reference coverage */

static const char *reference_dir(void)
{
	const char *dir = getenv("TOPDOWN_REFERENCE_DIR");

	return dir && *dir ? dir : "../shared/reference";
}

static bool has_entry(enum td_vendor vendor, const char *name)
{
	for (size_t i = 0; i < td_explain_text_count; i++) {
		const struct td_explain_text *t = &td_explain_texts[i];

		if (t->vendor != vendor)
			continue;
		if (!strcasecmp(t->name, name))
			return true;
		for (size_t a = 0; t->aliases[a]; a++)
			if (!strcasecmp(t->aliases[a], name))
				return true;
	}
	return false;
}

/* The lowest TopdownL<n> level in a MetricGroup list, or 0. */
static int topdown_level(const char *groups)
{
	int level = 0;

	for (const char *p = groups; (p = strstr(p, "TopdownL")); p += 8)
		if (p[8] >= '1' && p[8] <= '9' && (!level || p[8] - '0' < level))
			level = p[8] - '0';
	return level;
}

/* The vendor files are test oracles kept beside the project; without them
 * the coverage tests are skipped, not failed. */
static bool reference_present(void)
{
	char path[1024];
	struct stat st;

	snprintf(path, sizeof(path), "%s/README.md", reference_dir());
	return !stat(path, &st);
}

/* Loads dir/rel; NULL when the file is missing or not JSON (some
 * reference files are placeholders). */
static json_t *load_reference(const char *rel)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", reference_dir(), rel);
	return json_load_file(path, 0, NULL);
}

static void test_reference_intel_levels_1_to_4(void **state)
{
	static const char *const files[] = {
		"skylake/skl", "skylakex/skx", "cascadelakex/clx", "icelake/icl", "icelakex/icx",
		"tigerlake/tgl", "rocketlake/rkl", "alderlake/adl", "sapphirerapids/spr",
		"emeraldrapids/emr", "graniterapids/gnr", "meteorlake/mtl", "lunarlake/lnl",
		"arrowlake/arl",
	};
	char rel[256];
	size_t checked = 0;

	(void)state;
	if (!reference_present())
		skip();
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		json_t *metrics, *m;
		size_t i;

		snprintf(rel, sizeof(rel), "intel/%s-metrics.json", files[f]);
		metrics = load_reference(rel);
		if (!metrics)
			fail_msg("cannot read %s/%s", reference_dir(), rel);
		json_array_foreach(metrics, i, m) {
			const char *name = json_string_value(json_object_get(m, "MetricName"));
			const char *groups = json_string_value(json_object_get(m, "MetricGroup"));
			int level = groups ? topdown_level(groups) : 0;

			if (!name || strncmp(name, "tma_", 4) || level < 1 || level > 4)
				continue;
			if (!has_entry(TD_VENDOR_INTEL, name))
				fail_msg("%s (level %d in %s) has no explanation", name, level, rel);
			checked++;
		}
		json_decref(metrics);
	}
	assert_true(checked > 1000);
}

static void test_reference_arm_and_amd(void **state)
{
	static const char *const arm[] = {
		"neoverse-n1", "neoverse-n2", "neoverse-n2-r0p3", "neoverse-n3",
		"neoverse-v1", "neoverse-v2", "neoverse-v3",
	};
	static const char *const amd[] = { "amdzen4", "amdzen5" };
	char rel[256];
	size_t checked = 0;
	const char *key;
	json_t *doc, *value;
	size_t i;

	(void)state;
	if (!reference_present())
		skip();
	for (size_t f = 0; f < sizeof(arm) / sizeof(arm[0]); f++) {
		snprintf(rel, sizeof(rel), "arm/%s.json", arm[f]);
		doc = load_reference(rel);
		if (!doc)
			fail_msg("cannot read %s/%s", reference_dir(), rel);
		json_object_foreach(json_object_get(doc, "metrics"), key, value) {
			if (!has_entry(TD_VENDOR_ARM, key))
				fail_msg("Arm %s (%s) has no explanation", key, arm[f]);
			checked++;
		}
		json_decref(doc);
	}
	for (size_t f = 0; f < sizeof(amd) / sizeof(amd[0]); f++) {
		snprintf(rel, sizeof(rel), "amd/%s/pipeline.json", amd[f]);
		doc = load_reference(rel);
		if (!doc)
			fail_msg("cannot read %s/%s", reference_dir(), rel);
		json_array_foreach(doc, i, value) {
			const char *name = json_string_value(json_object_get(value, "MetricName"));
			const char *group = json_string_value(json_object_get(value, "MetricGroup"));

			if (!name || !group || !strstr(group, "Pipeline"))
				continue;
			if (!has_entry(TD_VENDOR_AMD, name))
				fail_msg("AMD %s (%s) has no explanation", name, amd[f]);
			checked++;
		}
		json_decref(doc);
	}
	assert_true(checked > 200);
}

/* ---------------------------------------------------------------- the command */

struct captured {
	int ret;
	char *out;
	char *err;
};

static char *slurp(FILE *f)
{
	long len;
	char *s;

	fflush(f);
	len = ftell(f);
	s = calloc(1, (size_t)len + 1);
	rewind(f);
	if (s && len && fread(s, 1, (size_t)len, f) != (size_t)len) {
		free(s);
		s = NULL;
	}
	return s;
}

/* Runs td_cmd_explain with stdout and stderr sent to temporary files. */
static void run_explain(struct captured *c, int argc, char **argv)
{
	FILE *out = tmpfile(), *err = tmpfile();
	int saved_out, saved_err;

	assert_non_null(out);
	assert_non_null(err);
	fflush(stdout);
	fflush(stderr);
	saved_out = dup(STDOUT_FILENO);
	saved_err = dup(STDERR_FILENO);
	dup2(fileno(out), STDOUT_FILENO);
	dup2(fileno(err), STDERR_FILENO);
	c->ret = td_cmd_explain(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, STDOUT_FILENO);
	dup2(saved_err, STDERR_FILENO);
	close(saved_out);
	close(saved_err);
	c->out = slurp(out);
	c->err = slurp(err);
	fclose(out);
	fclose(err);
	assert_non_null(c->out);
	assert_non_null(c->err);
}

static void captured_free(struct captured *c)
{
	free(c->out);
	free(c->err);
}

#define RUN(c, ...)                                                              \
	do {                                                                     \
		char *argv_[] = { "explain", __VA_ARGS__, NULL };                  \
		run_explain((c), (int)(sizeof(argv_) / sizeof(argv_[0])) - 1, argv_); \
	} while (0)

static void test_cmd_text(void **state)
{
	struct captured c;

	(void)state;
	RUN(&c, "DRAM_Bound");
	assert_int_equal(c.ret, 0);
	assert_string_equal(c.err, "");
	assert_true(starts_with(c.out, "DRAM Bound"));
	assert_non_null(strstr(c.out, "\n  metric     tma_l3_miss_bound (intel)\n"));
	assert_non_null(strstr(c.out, "\n  aliases    tma_dram_bound\n"));
	assert_non_null(strstr(c.out, "\n  path       Backend_Bound.Memory_Bound.DRAM_Bound\n"));
	assert_non_null(strstr(c.out, "\n  level      3\n"));
	assert_non_null(strstr(c.out, "\n  parent     Backend_Bound.Memory_Bound\n"));
	assert_non_null(strstr(c.out, "\n  threshold  tma_l3_miss_bound > 0.1"));
	assert_non_null(strstr(c.out, "skx"));
	assert_non_null(strstr(c.out, "\nWhat it measures\n"));
	assert_non_null(strstr(c.out, "\nTypical causes\n  - "));
	assert_non_null(strstr(c.out, "\nWhat to do next\n  - "));
	/* A backticked command is never split across lines. */
	assert_non_null(strstr(c.out, "`topdown collect --pid PID --sample=mem_load_retired.l3_miss`"));
	/* The way to the code comes first: without a model, in general terms */
	assert_non_null(strstr(c.out, "\nWhat to do next\n  - Find its code: "
				      "`topdown collect --process NAME --sample-for DRAM_Bound`\n    samples "
				      "the event that finds it on the CPU's model (--model names it);"));
	captured_free(&c);

	/* with a model, its event; a node without one takes its parent's */
	RUN(&c, "DRAM_Bound", "--model", "spr");
	assert_int_equal(c.ret, 0);
	assert_non_null(strstr(c.out, "--sample-for DRAM_Bound`\n    samples MEM_LOAD_RETIRED.L3_MISS on spr;"));
	captured_free(&c);
	RUN(&c, "Memory_Bound", "--model", "skx");
	assert_int_equal(c.ret, 0);
	assert_non_null(strstr(c.out, "samples cycles on skx, which names no event for it;"));
	captured_free(&c);
	RUN(&c, "Frontend_Bound", "--model", "icx");
	assert_int_equal(c.ret, 0);
	assert_non_null(strstr(c.out, "FRONTEND_RETIRED.LATENCY_GE_4 precisely on icx;"));
	captured_free(&c);

	RUN(&c, "backend_bound");
	assert_int_equal(c.ret, 0);
	assert_non_null(strstr(c.out, "backend_bound (arm)"));
	assert_non_null(strstr(c.out, "The name also matches: amd backend_bound, intel tma_backend_bound"));
	captured_free(&c);
}

static void test_cmd_json(void **state)
{
	const struct td_explain_text *text = NULL;
	struct captured c;
	json_error_t error;
	json_t *root, *models, *causes;
	bool skx = false;
	size_t i;
	json_t *v;

	(void)state;
	RUN(&c, "--json", "tma_dram_bound");
	assert_int_equal(c.ret, 0);
	assert_string_equal(c.err, "");
	root = json_loads(c.out, 0, &error);
	if (!root)
		fail_msg("bad JSON at line %d: %s", error.line, error.text);
	assert_string_equal(json_string_value(json_object_get(root, "name")), "tma_l3_miss_bound");
	assert_string_equal(json_string_value(json_object_get(root, "vendor")), "intel");
	assert_string_equal(json_string_value(json_object_get(root, "kind")), "tree");
	assert_true(json_is_true(json_object_get(root, "computed")));
	assert_string_equal(json_string_value(json_object_get(root, "path")),
			    "Backend_Bound.Memory_Bound.DRAM_Bound");
	assert_string_equal(json_string_value(json_object_get(root, "parent")),
			    "Backend_Bound.Memory_Bound");
	assert_int_equal(json_integer_value(json_object_get(root, "level")), 3);
	assert_non_null(strstr(json_string_value(json_object_get(root, "threshold")), "tma_l3_miss_bound"));
	models = json_object_get(root, "models");
	json_array_foreach(models, i, v)
		skx |= !strcmp(json_string_value(v), "skx");
	assert_true(skx);
	assert_string_equal(json_string_value(json_array_get(json_object_get(root, "aliases"), 0)),
			    "tma_dram_bound");
	assert_int_equal(json_array_size(json_object_get(root, "placements")), 1);

	for (i = 0; i < td_explain_text_count; i++)
		if (!strcmp(td_explain_texts[i].name, "tma_l3_miss_bound"))
			text = &td_explain_texts[i];
	assert_non_null(text);
	assert_string_equal(json_string_value(json_object_get(root, "title")), text->title);
	assert_string_equal(json_string_value(json_object_get(root, "description")), text->description);
	causes = json_object_get(root, "causes");
	assert_int_equal(json_array_size(causes), count_items(text->causes));
	assert_string_equal(json_string_value(json_array_get(causes, 0)), text->causes[0]);
	assert_int_equal(json_array_size(json_object_get(root, "hints")), count_items(text->hints));
	assert_int_equal(json_array_size(json_object_get(root, "also")), 0);
	json_decref(root);
	captured_free(&c);

	/* Info metrics have no place in the tree: null path, level 0. */
	RUN(&c, "ipc", "--model", "neoverse-v2", "--json");
	assert_int_equal(c.ret, 0);
	root = json_loads(c.out, 0, &error);
	assert_non_null(root);
	assert_string_equal(json_string_value(json_object_get(root, "kind")), "info");
	assert_true(json_is_null(json_object_get(root, "path")));
	assert_int_equal(json_integer_value(json_object_get(root, "level")), 0);
	/* Arm names its events to sample for Info metrics too */
	v = json_object_get(root, "locate");
	assert_string_equal(json_string_value(json_object_get(v, "node")), "ipc");
	assert_string_equal(json_string_value(json_object_get(v, "event")), "INST_RETIRED");
	assert_false(json_is_true(json_object_get(v, "precise")));
	assert_string_equal(json_string_value(json_object_get(v, "model")), "neoverse-v2");
	json_decref(root);
	captured_free(&c);
}

/* The node at path in a --list --json tree, searching depth first. */
static json_t *find_json_node(json_t *nodes, const char *path, int *depth)
{
	size_t i;
	json_t *n;

	json_array_foreach(nodes, i, n) {
		json_t *found;

		if (!strcmp(json_string_value(json_object_get(n, "path")), path))
			return n;
		(*depth)++;
		found = find_json_node(json_object_get(n, "children"), path, depth);
		if (found)
			return found;
		(*depth)--;
	}
	return NULL;
}

static void test_cmd_list(void **state)
{
	struct captured c;
	json_t *root, *groups, *intel, *node;
	int depth = 1;

	(void)state;
	RUN(&c, "--list");
	assert_int_equal(c.ret, 0);
	assert_string_equal(c.err, "");
	assert_true(starts_with(c.out, "Intel ("));
	assert_non_null(strstr(c.out, "\n  Backend_Bound "));
	assert_non_null(strstr(c.out, "\n    Memory_Bound "));
	assert_non_null(strstr(c.out, "\n      DRAM_Bound "));
	assert_non_null(strstr(c.out, "\n        DTLB_Load "));
	assert_non_null(strstr(c.out, "(explained, not computed)"));
	assert_non_null(strstr(c.out, "\nIntel E-core (cpu_atom) ("));
	assert_non_null(strstr(c.out, "\nArm Neoverse ("));
	assert_non_null(strstr(c.out, "\nAMD Zen (zen4, zen5)\n"));
	assert_non_null(strstr(c.out, "  [zen5]\n"));
	assert_non_null(strstr(c.out, "\n  Info metrics\n"));
	captured_free(&c);

	RUN(&c, "--list", "--json");
	assert_int_equal(c.ret, 0);
	root = json_loads(c.out, 0, NULL);
	assert_non_null(root);
	groups = json_object_get(root, "groups");
	assert_int_equal(json_array_size(groups), 4);
	intel = json_array_get(groups, 0);
	assert_string_equal(json_string_value(json_object_get(intel, "label")), "Intel");
	node = find_json_node(json_object_get(intel, "tree"), "Backend_Bound.Memory_Bound.DRAM_Bound", &depth);
	assert_non_null(node);
	assert_int_equal(depth, 3);
	assert_int_equal(json_integer_value(json_object_get(node, "level")), 3);
	assert_string_equal(json_string_value(json_object_get(node, "name")), "tma_l3_miss_bound");
	assert_true(json_array_size(json_object_get(node, "children")) >= 1);
	assert_true(json_array_size(json_object_get(intel, "info")) >= 10);
	json_decref(root);
	captured_free(&c);

	/* A hybrid P-core model brings its E-core tree along. */
	RUN(&c, "--list", "--model", "adl");
	assert_int_equal(c.ret, 0);
	assert_true(starts_with(c.out, "Intel (adl)\n  Frontend_Bound "));
	assert_non_null(strstr(c.out, "\nIntel E-core (cpu_atom) (adl-atom)\n"));
	assert_null(strstr(c.out, "(explained, not computed)"));
	captured_free(&c);

	RUN(&c, "--list", "--model", "zen4");
	assert_int_equal(c.ret, 0);
	assert_true(starts_with(c.out, "AMD Zen (zen4)\n  Frontend_Bound "));
	assert_null(strstr(c.out, "Intel"));
	assert_null(strstr(c.out, "by_latency"));
	captured_free(&c);
}

static void test_cmd_errors(void **state)
{
	static const char usage[] =
		"usage: topdown explain NAME [--model M] [--json] | topdown explain --list [--model M] [--json]\n";
	struct captured c;

	(void)state;
	RUN(&c, "DRAM_Bund");
	assert_int_equal(c.ret, 2);
	assert_string_equal(c.out, "");
	assert_string_equal(c.err, "unknown metric 'DRAM_Bund'; did you mean DRAM_Bound? "
				   "(topdown explain --list shows all)\n");
	captured_free(&c);

	RUN(&c, "DRAM_Bound", "--model", "nosuch");
	assert_int_equal(c.ret, 2);
	assert_string_equal(c.out, "");
	assert_true(starts_with(c.err, "unknown model 'nosuch'; known models: "));
	assert_non_null(strstr(c.err, "spr"));
	assert_ptr_equal(strchr(c.err, '\n'), c.err + strlen(c.err) - 1); /* one line */
	captured_free(&c);

	RUN(&c, "--list", "--model", "nosuch");
	assert_int_equal(c.ret, 2);
	assert_true(starts_with(c.err, "unknown model 'nosuch'"));
	captured_free(&c);

	RUN(&c, "--bogus");
	assert_int_equal(c.ret, 2);
	assert_string_equal(c.err, "topdown explain: unknown option, or one missing its value: '--bogus'"
				   " (topdown explain --help lists the options)\n");
	captured_free(&c);

	RUN(&c, "a", "b");
	assert_int_equal(c.ret, 2);
	assert_string_equal(c.err, "topdown explain: unexpected argument 'b'"" (topdown explain --help lists the options)\n");
	captured_free(&c);

	RUN(&c, "--list", "DRAM_Bound");
	assert_int_equal(c.ret, 2);
	assert_string_equal(c.err, "topdown explain: --list lists them all: leave out NAME"" (topdown explain --help lists the options)\n");
	captured_free(&c);

	RUN(&c, "DRAM_Bound", "--model");
	assert_int_equal(c.ret, 2);
	assert_string_equal(c.err, "topdown explain: --model needs a value: --model M"" (topdown explain --help lists the options)\n");
	captured_free(&c);

	RUN(&c, "--json");
	assert_int_equal(c.ret, 2);
	assert_string_equal(c.err, "topdown explain: name one metric, e.g. DRAM_Bound, or give --list"" (topdown explain --help lists the options)\n");
	captured_free(&c);

	RUN(&c, "--help");
	assert_int_equal(c.ret, 0);
	assert_true(starts_with(c.out, usage)); /* then a line per option */
	assert_non_null(strstr(c.out, "\n  --list "));
	assert_string_equal(c.err, "");
	captured_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup_name_forms),
		cmocka_unit_test(test_lookup_vendor_names),
		cmocka_unit_test(test_lookup_placements_and_kinds),
		cmocka_unit_test(test_lookup_errors),
		cmocka_unit_test(test_suggestions),
		cmocka_unit_test(test_lint_entries),
		cmocka_unit_test(test_lint_every_kb_metric_explained),
		cmocka_unit_test(test_lint_kb_tree_parents),
		cmocka_unit_test(test_lint_every_entry_has_a_node),
		cmocka_unit_test(test_explain_works_for_every_node),
		cmocka_unit_test(test_reference_intel_levels_1_to_4),
		cmocka_unit_test(test_reference_arm_and_amd),
		cmocka_unit_test(test_cmd_text),
		cmocka_unit_test(test_cmd_json),
		cmocka_unit_test(test_cmd_list),
		cmocka_unit_test(test_cmd_errors),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
