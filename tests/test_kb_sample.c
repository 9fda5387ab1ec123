// SPDX-License-Identifier: BSD-3-Clause
/*
 * Each node's sampling event (the kb's sample lines) against the vendors'
 * data in ../shared/reference (or $TOPDOWN_REFERENCE_DIR), read at test
 * time:
 *   - Intel: the Locate-with cell of each node in TMA_Metrics-full.csv,
 *     its "MODELS ? A : B" conditions evaluated for the model's column;
 *     the kb names exactly those events, _PS written as the precise flag.
 *     #NA means no sample line (the node inherits), and so does a choice
 *     the model's event files lack (the spreadsheet names another core's
 *     event). The E-core spreadsheet has no Locate-with: no sample lines.
 *   - Arm: every metric's sample_events, exactly;
 *   - AMD: every chosen event is an event of the model's reference files;
 *   - every sample event is an event of its model, so it opens with the
 *     kb's encoding as the counting events do; where libpfm4 knows the
 *     model (LIBPFM_FORCE_PMU, one per child process) and the name, its
 *     event and umask agree with the kb's;
 *   - the fallback: the nearest ancestor's event, else cycles.
 */
#include <errno.h>
#include <glob.h>
#include <jansson.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "events.h"
#include "kb.h"

static struct td_kb *kb;
static char refdir[1024];

/* The Intel P-core models, their reference folder and spreadsheet column. */
static const struct intel_source {
	const char *model, *dir, *token; /* token: its model column in the spreadsheet */
	const char *libpfm; /* LIBPFM_FORCE_PMU that encodes for it, or NULL */
} intel[] = {
	{ "skl", "skylake", "SKL", "skl" },
	{ "skx", "skylakex", "SKX", "skx" },
	{ "clx", "cascadelakex", "CLX", "clx" },
	{ "icl", "icelake", "ICL", "icl" },
	{ "icx", "icelakex", "ICX", "icx" },
	{ "tgl", "tigerlake", "TGL", NULL },
	{ "rkl", "rocketlake", "RKL", NULL },
	{ "adl", "alderlake", "ADL", NULL },
	{ "spr", "sapphirerapids", "SPR", "spr" },
	{ "emr", "emeraldrapids", "EMR", "spr" },
	{ "gnr", "graniterapids", "GNR", NULL },
	{ "mtl", "meteorlake", "MTL", NULL },
	{ "lnl", "lunarlake", "LNL", NULL },
	{ "arl", "arrowlake", "ARL", NULL },
};

static const char *const intel_atoms[] = { "adl-atom", "mtl-atom", "lnl-atom", "arl-atom" };
static const char *const arm_models[] = { "neoverse-n1", "neoverse-v1", "neoverse-n2",
					  "neoverse-n2-r0p3", "neoverse-v2", "neoverse-v3",
					  "neoverse-n3" };

#define N(a) (sizeof(a) / sizeof((a)[0]))

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

static const struct td_model *model(const char *name)
{
	const struct td_model *m = td_kb_model(kb, name);
	if (!m)
		fail_msg("model %s is missing", name);
	return m;
}

static json_t *load_json(const char *fmt, ...)
{
	char rel[1024], path[2048];
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

/* "cpu_core/NAME/" -> "NAME": the hybrid models name events with their PMU. */
static void bare_name(const struct td_model *m, const char *name, size_t len, char *out,
		      size_t outlen)
{
	size_t pmu = strlen(m->pmu);
	if (strcmp(m->pmu, "cpu") != 0 && strncmp(name, m->pmu, pmu) == 0 && name[pmu] == '/')
		snprintf(out, outlen, "%.*s", (int)(len - pmu - 2), name + pmu + 1);
	else
		snprintf(out, outlen, "%.*s", (int)len, name);
}

/* The kb's sample events of a metric, bare, joined by ';' as the vendors
 * write lists: "" without a sample line. */
static void kb_list(const struct td_model *m, const struct td_metric_def *d, char *out,
		    size_t len)
{
	char bare[256];
	size_t used = 0;
	out[0] = '\0';
	if (!d->sample)
		return;
	bare_name(m, d->sample, strlen(d->sample), bare, sizeof(bare));
	used = snprintf(out, len, "%s", bare);
	for (const char *w = d->sample_also; *w && used < len;) {
		size_t n = strcspn(w, " ");
		bare_name(m, w, n, bare, sizeof(bare));
		used += snprintf(out + used, len - used, ";%s", bare);
		w += n + (w[n] == ' ');
	}
}

/* ---- Intel ------------------------------------------------------------ */

/* Whether every event of a ';' list is in the model's event files (of its
 * PMU, for the hybrids). */
static bool all_in_event_files(json_t *const *files, size_t n, const char *unit, const char *list)
{
	char copy[512], *save;
	snprintf(copy, sizeof(copy), "%s", list);
	for (char *e = strtok_r(copy, ";", &save); e; e = strtok_r(NULL, ";", &save)) {
		bool found = false;
		for (size_t f = 0; f < n && !found; f++) {
			size_t i;
			json_t *ev;
			json_array_foreach(files[f], i, ev) {
				const char *u = json_string_value(json_object_get(ev, "Unit"));
				found |= !strcmp(json_string_value(json_object_get(ev, "EventName")), e) &&
					 (!unit || !u || !strcmp(u, unit));
			}
		}
		if (!found)
			return false;
	}
	return true;
}

/* One field of a CSV line (quotes as the spreadsheet writes them). */
static const char *csv_field(const char *line, size_t col, char *out, size_t len)
{
	const char *p = line;
	for (size_t c = 0;; c++) {
		size_t o = 0;
		bool quoted = *p == '"';
		p += quoted;
		while (*p && (quoted || (*p != ',' && *p != '\n' && *p != '\r'))) {
			if (quoted && *p == '"') {
				if (p[1] != '"') {
					p++;
					quoted = false;
					continue;
				}
				p++;
			}
			if (c == col && o + 1 < len)
				out[o++] = *p;
			p++;
		}
		if (c == col) {
			out[o] = '\0';
			return out;
		}
		if (*p != ',')
			return NULL;
		p++;
	}
}

/* The Locate-with cell of the spreadsheet row of a node ("" if none). */
static void csv_locate_with(const char *node, char *out, size_t len)
{
	char path[2048], line[65536], cell[256];
	snprintf(path, sizeof(path), "%s/intel/TMA_Metrics-full.csv", refdir);
	FILE *f = fopen(path, "r");
	if (!f)
		fail_msg("%s: cannot open", path);
	long locate = -1;
	out[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		if (locate < 0 && csv_field(line, 0, cell, sizeof(cell)) && !strcmp(cell, "Key")) {
			for (long c = 0; csv_field(line, c, cell, sizeof(cell)); c++)
				if (!strcmp(cell, "Locate-with"))
					locate = c;
			continue;
		}
		for (size_t level = 1; locate >= 0 && level <= 6; level++)
			if (csv_field(line, level, cell, sizeof(cell)) && !strcasecmp(cell, node))
				csv_field(line, locate, out, len);
	}
	fclose(f);
	if (locate < 0)
		fail_msg("%s: no Locate-with column", path);
}

/*
 * The cell's choice for one model: cells read "SKL/SKX ? A : ICL ? B : C"
 * (a chain of conditions on the spreadsheet's model columns), or just "A".
 * Then its ';' list without the _PS suffixes, and whether they had it;
 * "" for #NA.
 */
static void locate_for(const char *cell, const char *token, char *out, size_t len, bool *precise)
{
	static const char model_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/-";
	const char *c = cell + strspn(cell, " "), *end = NULL, *q;
	char list[512], *save;
	size_t tl = strlen(token), used = 0;
	int ps = -1;
	while (!end && (q = strstr(c, " ? ")) && q == c + strspn(c, model_chars)) {
		const char *alt = strstr(q + 3, " : ");
		bool mine = false;
		if (!alt)
			fail_msg("'%s': a condition without alternative", cell);
		for (const char *m = c; m < q; m += strcspn(m, "/ "), m += *m == '/')
			mine |= !strncmp(m, token, tl) && (m[tl] == '/' || m[tl] == ' ');
		if (mine)
			end = alt;
		c = mine ? q + 3 : alt + 3 + strspn(alt + 3, " ");
	}
	snprintf(list, sizeof(list), "%.*s", (int)(end ? (size_t)(end - c) : strlen(c)), c);
	out[0] = '\0';
	*precise = false;
	if (!strncmp(list, "#NA", 3))
		return;
	for (char *e = strtok_r(list, "; ", &save); e; e = strtok_r(NULL, "; ", &save)) {
		size_t el = strlen(e);
		bool is_ps = el > 3 && strcmp(e + el - 3, "_PS") == 0;
		if (ps >= 0 && ps != is_ps)
			fail_msg("'%s' mixes precise and other events; the kb has one flag", cell);
		ps = is_ps;
		used += snprintf(out + used, len - used, "%s%.*s", used ? ";" : "",
				 (int)(el - (is_ps ? 3 : 0)), e);
	}
	*precise = ps == 1;
}

/* The spreadsheet's cell for a kb metric: by its node (tma_NODE), or an alias. */
static void cell_of(const struct td_metric_def *d, char *cell, size_t len)
{
	csv_locate_with(d->name + strlen("tma_"), cell, len);
	for (const char *a = d->aliases; !cell[0] && *a; a += strcspn(a, " "), a += *a == ' ') {
		char alias[128];
		snprintf(alias, sizeof(alias), "%.*s", (int)strcspn(a, " "), a);
		if (!strncmp(alias, "tma_", 4))
			csv_locate_with(alias + 4, cell, len);
	}
}

static void check_intel_model(const struct intel_source *src)
{
	static const char *const names[] = { "cache", "floating-point", "frontend", "memory",
					     "other", "pipeline", "virtual-memory" };
	const struct td_model *m = model(src->model);
	const char *unit = strcmp(m->pmu, "cpu") ? m->pmu : NULL;
	json_t *files[N(names)];
	size_t compared = 0, inherited = 0, sampled = 0;
	for (size_t f = 0; f < N(names); f++)
		files[f] = load_json("intel/%s/%s.json", src->dir, names[f]);
	for (size_t k = 0; k < m->n_metrics; k++) {
		const struct td_metric_def *d = &m->metrics[k];
		char cell[4096], want[512], have[512];
		bool precise;
		if (strncmp(d->name, "tma_", 4))
			continue;
		cell_of(d, cell, sizeof(cell));
		locate_for(cell, src->token, want, sizeof(want), &precise);
		if (want[0] && !all_in_event_files(files, N(names), unit, want)) {
			inherited++;
			want[0] = '\0';
		}
		kb_list(m, d, have, sizeof(have));
		if (strcmp(have, want) || (want[0] && d->sample_precise != precise))
			fail_msg("%s %s: the kb samples '%s'%s, the spreadsheet says '%s'%s", m->name,
				 d->name, have, d->sample_precise ? " (precise)" : "", want,
				 precise ? " (precise)" : "");
		compared += want[0] != '\0';
		sampled += d->sample != NULL;
	}
	for (size_t f = 0; f < N(names); f++)
		json_decref(files[f]);
	if (!compared)
		fail_msg("%s: nothing compared", m->name);
	print_message("%s: %zu metrics sample their Locate-with event, %zu name events the model "
		      "lacks (they inherit)\n", m->name, sampled, inherited);
}

static void test_intel(void **state)
{
	(void)state;
	for (size_t s = 0; s < N(intel); s++)
		check_intel_model(&intel[s]);
	for (size_t a = 0; a < N(intel_atoms); a++) {
		const struct td_model *m = model(intel_atoms[a]);
		for (size_t k = 0; k < m->n_metrics; k++)
			if (m->metrics[k].sample)
				fail_msg("%s %s: the E-core spreadsheet has no Locate-with", m->name,
					 m->metrics[k].name);
	}
}

/* ---- Arm and AMD -------------------------------------------------------- */

static void check_arm_model(const char *name)
{
	const struct td_model *m = model(name);
	json_t *file = load_json("arm/%s.json", name);
	json_t *metrics = json_object_get(file, "metrics");
	size_t compared = 0;
	for (size_t k = 0; k < m->n_metrics; k++) {
		const struct td_metric_def *d = &m->metrics[k];
		json_t *events = json_object_get(json_object_get(metrics, d->name), "sample_events");
		char want[512] = "", have[512];
		size_t used = 0, i;
		json_t *e;
		json_array_foreach(events, i, e)
			used += snprintf(want + used, sizeof(want) - used, "%s%s", used ? ";" : "",
					 json_string_value(e));
		kb_list(m, d, have, sizeof(have));
		if (strcmp(have, want) || d->sample_precise)
			fail_msg("%s %s: the kb samples '%s', the reference says '%s'", m->name,
				 d->name, have, want);
		compared += want[0] != '\0';
	}
	json_decref(file);
	if (!compared)
		fail_msg("%s: no metric with sample_events", name);
}

static void test_arm(void **state)
{
	(void)state;
	for (size_t a = 0; a < N(arm_models); a++)
		check_arm_model(arm_models[a]);
}

static bool amd_has_event(const char *dir, const char *name)
{
	char pattern[2048];
	glob_t files;
	bool found = false;
	snprintf(pattern, sizeof(pattern), "%s/amd/%s/*.json", refdir, dir);
	if (glob(pattern, 0, NULL, &files) || !files.gl_pathc)
		fail_msg("%s: no event files", pattern);
	for (size_t f = 0; f < files.gl_pathc && !found; f++) {
		json_t *j = load_json("amd/%s/%s", dir, strrchr(files.gl_pathv[f], '/') + 1), *e;
		size_t i;
		json_array_foreach(j, i, e) {
			const char *n = json_string_value(json_object_get(e, "EventName"));
			found |= n && !strcmp(n, name);
		}
		json_decref(j);
	}
	globfree(&files);
	return found;
}

static void check_amd_model(const char *name, const char *dir)
{
	const struct td_model *m = model(name);
	size_t sampled = 0;
	for (size_t k = 0; k < m->n_metrics; k++) {
		const struct td_metric_def *d = &m->metrics[k];
		if (!d->sample)
			continue;
		if (*d->sample_also || d->sample_precise)
			fail_msg("%s %s: one chosen event, not precise (IBS is another PMU)", name,
				 d->name);
		if (!amd_has_event(dir, d->sample))
			fail_msg("%s %s: %s is no event of amd/%s", name, d->name, d->sample, dir);
		sampled++;
	}
	/* every node has an event of its own or a parent's */
	for (size_t k = 0; k < m->n_metrics; k++)
		if (m->metrics[k].kind == TD_METRIC_TREE &&
		    !strcmp(td_model_sample_event(m, m->metrics[k].name, NULL), TD_SAMPLE_CYCLES))
			fail_msg("%s %s: falls back to cycles", name, m->metrics[k].name);
	assert_true(sampled > 0);
}

static void test_amd(void **state)
{
	(void)state;
	check_amd_model("zen4", "amdzen4");
	check_amd_model("zen5", "amdzen5");
}

/* ---- resolution ---------------------------------------------------------- */

/* Every sample event opens with its kb encoding: it is an event of the model. */
static void each_sample_event(const struct td_model *m,
			      void (*fn)(const struct td_model *, const char *, size_t, void *),
			      void *ctx)
{
	for (size_t k = 0; k < m->n_metrics; k++) {
		const struct td_metric_def *d = &m->metrics[k];
		if (d->sample)
			fn(m, d->sample, strlen(d->sample), ctx);
		for (const char *w = d->sample_also; *w; w += strcspn(w, " "), w += *w == ' ')
			fn(m, w, strcspn(w, " "), ctx);
	}
}

static void require_model_event(const struct td_model *m, const char *name, size_t len,
				void *ctx)
{
	char copy[256];
	(void)ctx;
	snprintf(copy, sizeof(copy), "%.*s", (int)len, name);
	if (!td_model_event(m, copy))
		fail_msg("%s: sample event %s is no event of the model", m->name, copy);
}

struct pfm_tally {
	size_t agree, unknown, differ, known_differ;
};

/*
 * Where libpfm4 4.13 encodes otherwise than Intel's event files, which
 * the kb follows (test_kb_reference): UOPS_RETIRED.MS is umask 0x04 with
 * MSR 0x8 in Intel's files, umask 0x08 in libpfm4's Sapphire Rapids table.
 */
static const struct {
	const char *libpfm, *event;
} libpfm_differs[] = {
	{ "spr", "UOPS_RETIRED.MS" },
};

static bool known_difference(const char *pmu, const char *event)
{
	for (size_t i = 0; i < N(libpfm_differs); i++)
		if (!strcmp(libpfm_differs[i].libpfm, pmu) && !strcmp(libpfm_differs[i].event, event))
			return true;
	return false;
}

/* libpfm4's event and umask for the name agree with the kb's. */
static void compare_libpfm(const struct td_model *m, const char *name, size_t len, void *ctx)
{
	struct pfm_tally *t = ctx;
	char copy[256], err[512];
	struct td_event ev;
	snprintf(copy, sizeof(copy), "%.*s", (int)len, name);
	const struct td_event_def *def = td_model_event(m, copy);
	if (def->flags & TD_EVENT_FIXED) /* the kb writes the fixed-counter pseudo code */
		return;
	if (td_event_resolve(copy, &ev, err, sizeof(err))) {
		t->unknown++;
		return;
	}
	if (!(ev.config & 0xff)) /* libpfm4's pseudo code for a fixed or metric counter */
		return;
	if ((ev.config & 0xffff) == (def->config & 0xffff)) {
		t->agree++;
	} else if (known_difference(getenv("LIBPFM_FORCE_PMU"), copy)) {
		t->known_differ++;
	} else {
		t->differ++;
		print_message("%s %s: libpfm4 %#llx, the kb %#llx\n", m->name, copy,
			      (unsigned long long)ev.config, (unsigned long long)def->config);
	}
}

/* libpfm4 encodes for one forced PMU per process: one child per model.
 * An x86 build's libpfm4 only knows Intel's PMUs (see test_resolve). */
static __attribute__((unused)) void check_libpfm(const struct intel_source *src)
{
	const struct td_model *m = model(src->model);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct pfm_tally t = { 0 };
		setenv("LIBPFM_FORCE_PMU", src->libpfm, 1);
		each_sample_event(m, compare_libpfm, &t);
		printf("%s (libpfm4 %s): %zu agree, %zu unknown to libpfm4, %zu differ (%zu as "
		       "known)\n", m->name, src->libpfm, t.agree, t.unknown, t.differ + t.known_differ,
		       t.known_differ);
		fflush(stdout);
		_exit(t.differ || !t.agree ? 1 : 0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail_msg("%s: libpfm4 disagrees with the kb, or knows none of its events", m->name);
}

static void test_resolve(void **state)
{
	(void)state;
	for (size_t i = 0; i < td_kb_model_count(kb); i++)
		each_sample_event(td_kb_model_at(kb, i), require_model_event, NULL);
	/* A libpfm4 build knows the CPUs of its own architecture only (tests/test_events.c):
	 * the Intel cross-check runs in an x86 build. */
#if defined(__x86_64__)
	for (size_t s = 0; s < N(intel); s++)
		if (intel[s].libpfm)
			check_libpfm(&intel[s]);
#endif
}

/* ---- the lookup ------------------------------------------------------------ */

static void expect(const char *model_name, const char *node, const char *event, bool precise)
{
	bool p = !precise;
	const char *got = td_model_sample_event(model(model_name), node, &p);
	if (!event) {
		assert_null(got);
		return;
	}
	if (!got || strcmp(got, event) || p != precise)
		fail_msg("%s %s: %s%s, expected %s%s", model_name, node, got ? got : "NULL",
			 p ? " (precise)" : "", event, precise ? " (precise)" : "");
}

static void test_lookup(void **state)
{
	(void)state;
	/* its own, by path, node, name or alias */
	expect("spr", "Backend_Bound.Memory_Bound.DRAM_Bound", "MEM_LOAD_RETIRED.L3_MISS", false);
	expect("spr", "dram_bound", "MEM_LOAD_RETIRED.L3_MISS", false);
	expect("spr", "tma_dram_bound", "MEM_LOAD_RETIRED.L3_MISS", false);
	expect("spr", "tma_store_bound", "MEM_INST_RETIRED.ALL_STORES", true);
	expect("skx", "Branch_Mispredicts", "BR_MISP_RETIRED.ALL_BRANCHES", true);
	expect("icx", "Branch_Mispredicts", "BR_MISP_RETIRED.ALL_BRANCHES", false);
	expect("adl", "Frontend_Bound", "cpu_core/FRONTEND_RETIRED.LATENCY_GE_4/", true);
	/* Memory_Bound names none: Backend_Bound's, and none above it on Skylake */
	expect("spr", "Backend_Bound.Memory_Bound", "TOPDOWN.BACKEND_BOUND_SLOTS", false);
	expect("skl", "Memory_Bound", TD_SAMPLE_CYCLES, false);
	expect("adl-atom", "Backend_Bound", TD_SAMPLE_CYCLES, false);
	/* zen4: the parent's choice */
	expect("zen4", "Bad_Speculation_Mispredicts", "ex_ret_brn_misp", false);
	expect("spr", "No_Such_Node", NULL, false);
	assert_string_equal(td_model_sample_event(model("neoverse-v2"), "backend_bound", NULL),
			    "STALL_SLOT_BACKEND");
}

/* A sample line must name an event of the model, once per metric. */
static void test_parse_errors(void **state)
{
	(void)state;
	static const char head[] = "model tiny\nlong Tiny\nvendor arm\npmu armv8_pmuv3\nslots 2\n"
				   "counters gp=6\nevent STALL 0x24\nevent CYCLES 0x11\n"
				   "metric stalled tree level=1 node=Stalled\nexpr STALL / CYCLES\n";
	static const struct {
		const char *tail, *error;
	} cases[] = {
		{ "sample REFILL\n", "a sample event is no event of the model" },
		{ "sample STALL also=CYCLES,REFILL\n", "a sample event is no event of the model" },
		{ "sample STALL\nsample CYCLES\n", "second sample line" },
		{ "sample STALL bogus\n", "unknown sample attribute" },
		{ "sample\n", "sample without event" },
	};
	char text[1024], err[512];
	for (size_t c = 0; c < N(cases); c++) {
		snprintf(text, sizeof(text), "%s%s", head, cases[c].tail);
		struct td_kb *bad = td_kb_parse(text, err, sizeof(err));
		if (bad || !strstr(err, cases[c].error))
			fail_msg("'%s': expected '%s', got '%s'", cases[c].tail, cases[c].error,
				 bad ? "no error" : err);
	}
	snprintf(text, sizeof(text), "%ssample STALL precise also=CYCLES\n", head);
	struct td_kb *good = td_kb_parse(text, err, sizeof(err));
	if (!good)
		fail_msg("%s", err);
	const struct td_metric_def *d = &td_kb_model_at(good, 0)->metrics[0];
	assert_string_equal(d->sample, "STALL");
	assert_string_equal(d->sample_also, "CYCLES");
	assert_true(d->sample_precise);
	td_kb_free(good);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intel),
		cmocka_unit_test(test_arm),
		cmocka_unit_test(test_amd),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_parse_errors),
	};
	return cmocka_run_group_tests(tests, load_kb, free_kb);
}
