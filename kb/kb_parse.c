// SPDX-License-Identifier: BSD-3-Clause
/*
 * kb_parse: the syntax of the definition files under kb/defs/.
 *
 * One statement per line; '#' at the start of a line is a comment.  A
 * model section starts with "model NAME" and holds, in any order:
 *
 *   long TEXT                 long name
 *   alias NAME...             other accepted names
 *   vendor intel|amd|arm
 *   pmu NAME                  the PMU the events belong to
 *   slots N                   issue slots per cycle the formulas assume
 *   counters gp=N gp_smt_off=N fixed=N
 *   perf_metrics              the events include Intel topdown-* metrics
 *   l1sum                     the level-1 nodes add up to 1
 *   ecore NAME                the model of this part's E-cores
 *   alternate_for NAME        this model is NAME's variant on general-purpose
 *                             counters only, for hosts without its fixed
 *                             counters or PERF_METRICS
 *   note TEXT                 shown with every result of the model
 *   detect KEY=V,...          CPU match; keys family model stepping
 *                             implementer part variant revision; values
 *                             are numbers or lo-hi ranges
 *   constants #NAME...        machine constants the formulas use
 *   event NAME CONFIG [config1=X] [config2=X] [counters=MASK]
 *         [fixed] [slots_leader] [perf_metrics]
 *   metric NAME tree|info|helper [level=N] [parent=NAME] [node=NAME]
 *         [unit=fraction|ratio] [scale=X] [alias=NAME,...] [sum]
 *   expr TEXT                 the formula of the metric above
 *   threshold TEXT            its threshold rule
 *   sample EVENT [precise] [also=EVENT,...]
 *                             the event to sample to find the code behind
 *                             the metric above, and the vendor's other
 *                             choices: events of the model
 *
 * The build inserts "file PATH" lines between files so errors name them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_internal.h"

struct parser {
	struct td_kb *kb;
	struct kb_model *model; /* current section, or NULL */
	struct td_metric_def *metric; /* last metric line, or NULL */
	const char *file;
	int line;
	char *err;
	size_t errlen;
};

static int fail(struct parser *p, const char *what, const char *arg)
{
	snprintf(p->err, p->errlen, "%s line %d: %s '%s'; fix the definition file", p->file,
		 p->line, what, arg);
	return -EINVAL;
}

/* Grow *arr (of elem-byte items) so that it holds n + 1; 0 or -ENOMEM. */
static int kb_grow(void *arr, size_t *cap, size_t n, size_t elem)
{
	void **p = arr;
	if (n < *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 16;
	void *np = realloc(*p, ncap * elem);
	if (!np)
		return -ENOMEM;
	memset((char *)np + *cap * elem, 0, (ncap - *cap) * elem);
	*p = np;
	*cap = ncap;
	return 0;
}

/* Next space-separated word of *s, NUL-terminated in place; NULL at end. */
static char *next_word(char **s)
{
	char *w = *s + strspn(*s, " \t");
	if (!*w)
		return NULL;
	char *end = w + strcspn(w, " \t");
	*s = *end ? end + 1 : end;
	*end = '\0';
	return w;
}

static bool parse_u64(const char *s, uint64_t *out)
{
	char *end;
	if (!*s || *s == '-')
		return false;
	errno = 0;
	*out = strtoull(s, &end, 0);
	return !errno && !*end;
}

static bool parse_unsigned(const char *s, unsigned *out)
{
	uint64_t v;
	if (!parse_u64(s, &v) || v > 0xffffffffu)
		return false;
	*out = (unsigned)v;
	return true;
}

/* "key=value": the value when word starts with key=, else NULL. */
static const char *value_of(const char *word, const char *key)
{
	size_t n = strlen(key);
	return strncmp(word, key, n) == 0 && word[n] == '=' ? word + n + 1 : NULL;
}

/* "a,b,c" -> "a b c" in place: the space-separated lists of td_metric_def. */
static const char *word_list(const char *v)
{
	for (char *c = (char *)v; *c; c++)
		if (*c == ',')
			*c = ' ';
	return v;
}

static int need_model(struct parser *p, const char *keyword)
{
	return p->model ? 0 : fail(p, "statement outside a model section", keyword);
}

static int parse_model(struct parser *p, char *rest)
{
	struct td_kb *kb = p->kb;
	char *name = next_word(&rest);
	if (!name || next_word(&rest))
		return fail(p, "expected 'model NAME', got", name ? name : "");
	if (kb_grow(&kb->models, &kb->cap_models, kb->n_models, sizeof(*kb->models)))
		return -ENOMEM;
	p->model = &kb->models[kb->n_models++];
	p->model->pub.name = name;
	p->model->pub.aliases = "";
	p->model->pub.vendor = (enum td_vendor)-1;
	p->model->file = p->file;
	p->metric = NULL;
	return 0;
}

static int parse_counters(struct parser *p, char *rest)
{
	struct td_model *m = &p->model->pub;
	char *w;
	while ((w = next_word(&rest))) {
		const char *v;
		unsigned *dst = NULL;
		if ((v = value_of(w, "gp")))
			dst = &m->gp_counters;
		else if ((v = value_of(w, "gp_smt_off")))
			dst = &m->gp_counters_smt_off;
		else if ((v = value_of(w, "fixed")))
			dst = &m->fixed_counters;
		if (!dst || !parse_unsigned(v, dst))
			return fail(p, "bad counters item", w);
	}
	return 0;
}

static const char *const detect_keys[KB_KEY_COUNT] = {
	[KB_KEY_FAMILY] = "family",           [KB_KEY_MODEL] = "model",
	[KB_KEY_STEPPING] = "stepping",       [KB_KEY_IMPLEMENTER] = "implementer",
	[KB_KEY_PART] = "part",               [KB_KEY_VARIANT] = "variant",
	[KB_KEY_REVISION] = "revision",
};

/* "0x4e,0x5e" or "5-15" or a mix. */
static bool parse_ranges(char *s, struct kb_match *m)
{
	char *save;
	for (char *item = strtok_r(s, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(item, '-');
		if (m->n == KB_MAX_RANGES)
			return false;
		if (dash)
			*dash = '\0';
		if (!parse_unsigned(item, &m->lo[m->n]) ||
		    !parse_unsigned(dash ? dash + 1 : item, &m->hi[m->n]) ||
		    m->lo[m->n] > m->hi[m->n])
			return false;
		m->n++;
	}
	return m->n > 0;
}

static int parse_detect(struct parser *p, char *rest)
{
	struct kb_model *km = p->model;
	if (kb_grow(&km->rules, &km->cap_rules, km->n_rules, sizeof(*km->rules)))
		return -ENOMEM;
	struct kb_detect_rule *r = &km->rules[km->n_rules++];
	char *w;
	while ((w = next_word(&rest))) {
		int k;
		char *v = NULL;
		for (k = 0; k < KB_KEY_COUNT; k++)
			if ((v = (char *)value_of(w, detect_keys[k])))
				break;
		if (k == KB_KEY_COUNT || r->key[k].n || !parse_ranges(v, &r->key[k]))
			return fail(p, "bad detect item", w);
	}
	return 0;
}

static int parse_constants(struct parser *p, char *rest)
{
	struct kb_model *km = p->model;
	char *w;
	while ((w = next_word(&rest))) {
		if (w[0] != '#')
			return fail(p, "constants start with '#', not", w);
		if (kb_grow(&km->constants, &km->cap_constants, km->pub.n_constants,
			    sizeof(*km->constants)))
			return -ENOMEM;
		km->constants[km->pub.n_constants++] = w;
	}
	return 0;
}

static int parse_event_flag(struct parser *p, struct td_event_def *e, char *w)
{
	static const struct { const char *word; unsigned flag; } flags[] = {
		{ "fixed", TD_EVENT_FIXED },
		{ "slots_leader", TD_EVENT_SLOTS_LEADER },
		{ "perf_metrics", TD_EVENT_PERF_METRICS },
	};
	const char *v;
	uint64_t counters;
	if ((v = value_of(w, "config1")))
		return parse_u64(v, &e->config1) ? 0 : fail(p, "bad config1", w);
	if ((v = value_of(w, "config2")))
		return parse_u64(v, &e->config2) ? 0 : fail(p, "bad config2", w);
	if ((v = value_of(w, "counters"))) {
		if (!parse_u64(v, &counters) || counters > 0xffffffffu)
			return fail(p, "bad counters mask", w);
		e->counters = (uint32_t)counters;
		return 0;
	}
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (strcmp(w, flags[i].word) == 0) {
			e->flags |= flags[i].flag;
			return 0;
		}
	return fail(p, "unknown event attribute", w);
}

static int parse_event(struct parser *p, char *rest)
{
	struct kb_model *km = p->model;
	if (kb_grow(&km->events, &km->cap_events, km->pub.n_events, sizeof(*km->events)))
		return -ENOMEM;
	struct td_event_def *e = &km->events[km->pub.n_events];
	char *name = next_word(&rest), *config = next_word(&rest), *w;
	if (!name || !config || !parse_u64(config, &e->config))
		return fail(p, "expected 'event NAME CONFIG', got", name ? name : "");
	e->name = name;
	while ((w = next_word(&rest))) {
		int rc = parse_event_flag(p, e, w);
		if (rc)
			return rc;
	}
	km->pub.n_events++;
	return 0;
}

static int parse_metric_kind(struct parser *p, struct td_metric_def *m, const char *w)
{
	if (!w)
		return fail(p, "metric without kind", m->name);
	if (strcmp(w, "tree") == 0)
		m->kind = TD_METRIC_TREE;
	else if (strcmp(w, "info") == 0)
		m->kind = TD_METRIC_INFO;
	else if (strcmp(w, "helper") == 0)
		m->kind = TD_METRIC_HELPER;
	else
		return fail(p, "unknown metric kind", w);
	return 0;
}

static int parse_metric_attr(struct parser *p, struct td_metric_def *m, char *w)
{
	const char *v;
	char *end;
	unsigned level;
	if ((v = value_of(w, "level"))) {
		if (!parse_unsigned(v, &level) || level < 1 || level > 4)
			return fail(p, "level must be 1..4, not", w);
		m->level = (int)level;
	} else if ((v = value_of(w, "parent"))) {
		m->parent = v;
	} else if ((v = value_of(w, "node"))) {
		m->node = v;
	} else if ((v = value_of(w, "unit"))) {
		if (strcmp(v, "fraction") == 0)
			m->unit = TD_UNIT_FRACTION;
		else if (strcmp(v, "ratio") == 0)
			m->unit = TD_UNIT_RATIO;
		else
			return fail(p, "unknown unit", w);
	} else if ((v = value_of(w, "scale"))) {
		m->scale = strtod(v, &end);
		if (end == v || *end || !(m->scale > 0))
			return fail(p, "bad scale", w);
	} else if ((v = value_of(w, "alias"))) {
		m->aliases = word_list(v);
	} else if (strcmp(w, "sum") == 0) {
		m->children_sum = true;
	} else {
		return fail(p, "unknown metric attribute", w);
	}
	return 0;
}

static int parse_metric(struct parser *p, char *rest)
{
	struct kb_model *km = p->model;
	if (kb_grow(&km->metrics, &km->cap_metrics, km->pub.n_metrics, sizeof(*km->metrics)))
		return -ENOMEM;
	struct td_metric_def *m = &km->metrics[km->pub.n_metrics];
	char *w;
	m->name = next_word(&rest);
	if (!m->name)
		return fail(p, "metric without name", "");
	m->aliases = "";
	m->sample_also = "";
	m->scale = 1;
	int rc = parse_metric_kind(p, m, next_word(&rest));
	while (!rc && (w = next_word(&rest)))
		rc = parse_metric_attr(p, m, w);
	if (rc)
		return rc;
	p->metric = m;
	km->pub.n_metrics++;
	return 0;
}

static int parse_formula(struct parser *p, const char *keyword, char *rest)
{
	if (!p->metric)
		return fail(p, "formula before any metric", keyword);
	const char **dst = keyword[0] == 'e' ? &p->metric->expr : &p->metric->threshold;
	if (*dst)
		return fail(p, "second formula of the same kind for", p->metric->name);
	*dst = rest + strspn(rest, " \t");
	return 0;
}

static int parse_sample(struct parser *p, char *rest)
{
	struct td_metric_def *m = p->metric;
	const char *v;
	char *w;
	if (!m)
		return fail(p, "sample before any metric", "sample");
	if (m->sample)
		return fail(p, "second sample line for", m->name);
	if (!(m->sample = next_word(&rest)))
		return fail(p, "sample without event for", m->name);
	while ((w = next_word(&rest))) {
		if (strcmp(w, "precise") == 0) {
			m->sample_precise = true;
		} else if ((v = value_of(w, "also")) && *v) {
			m->sample_also = word_list(v);
		} else {
			return fail(p, "unknown sample attribute", w);
		}
	}
	return 0;
}

static int parse_vendor(struct parser *p, char *rest)
{
	static const char *const names[] = {
		[TD_VENDOR_INTEL] = "intel", [TD_VENDOR_AMD] = "amd", [TD_VENDOR_ARM] = "arm"
	};
	char *w = next_word(&rest);
	for (size_t v = 0; w && v < sizeof(names) / sizeof(names[0]); v++)
		if (strcmp(w, names[v]) == 0) {
			p->model->pub.vendor = (enum td_vendor)v;
			return 0;
		}
	return fail(p, "unknown vendor", w ? w : "");
}

/* Statements that set one word or the rest of the line of the model. */
static int parse_model_field(struct parser *p, const char *keyword, char *rest)
{
	struct td_model *m = &p->model->pub;
	const char *text = rest + strspn(rest, " \t");
	char *w;
	if (strcmp(keyword, "long") == 0)
		m->long_name = text;
	else if (strcmp(keyword, "alias") == 0)
		m->aliases = text;
	else if (strcmp(keyword, "note") == 0)
		m->notes = text;
	else if (strcmp(keyword, "pmu") == 0)
		m->pmu = next_word(&rest);
	else if (strcmp(keyword, "ecore") == 0)
		p->model->e_core_name = next_word(&rest);
	else if (strcmp(keyword, "alternate_for") == 0)
		p->model->alternate_for_name = next_word(&rest);
	else if (strcmp(keyword, "perf_metrics") == 0)
		m->perf_metrics = true;
	else if (strcmp(keyword, "l1sum") == 0)
		m->level1_sums = true;
	else if (strcmp(keyword, "slots") == 0) {
		w = next_word(&rest);
		if (!w || !parse_unsigned(w, &m->slots_per_cycle))
			return fail(p, "bad slots", w ? w : "");
	} else
		return fail(p, "unknown keyword", keyword);
	return 0;
}

static int parse_line(struct parser *p, char *line)
{
	char *rest = line;
	char *keyword = next_word(&rest);
	if (!keyword || keyword[0] == '#')
		return 0;
	if (strcmp(keyword, "file") == 0) {
		const char *file = next_word(&rest);
		if (!file)
			return fail(p, "file without name", "");
		p->file = file;
		p->line = 0; /* the file's first line follows */
		p->model = NULL;
		return 0;
	}
	if (strcmp(keyword, "model") == 0)
		return parse_model(p, rest);
	int rc = need_model(p, keyword);
	if (rc)
		return rc;
	if (strcmp(keyword, "event") == 0)
		return parse_event(p, rest);
	if (strcmp(keyword, "metric") == 0)
		return parse_metric(p, rest);
	if (strcmp(keyword, "expr") == 0 || strcmp(keyword, "threshold") == 0)
		return parse_formula(p, keyword, rest);
	if (strcmp(keyword, "sample") == 0)
		return parse_sample(p, rest);
	if (strcmp(keyword, "vendor") == 0)
		return parse_vendor(p, rest);
	if (strcmp(keyword, "counters") == 0)
		return parse_counters(p, rest);
	if (strcmp(keyword, "detect") == 0)
		return parse_detect(p, rest);
	if (strcmp(keyword, "constants") == 0)
		return parse_constants(p, rest);
	return parse_model_field(p, keyword, rest);
}

int kb_parse_text(struct td_kb *kb, char *text, char *err, size_t errlen)
{
	struct parser p = { .kb = kb, .file = "definitions", .err = err, .errlen = errlen };
	char *line = text;
	while (line) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		p.line++;
		int rc = parse_line(&p, line);
		if (rc == -ENOMEM)
			snprintf(err, errlen, "out of memory while reading the definitions");
		if (rc)
			return rc;
		line = nl ? nl + 1 : NULL;
	}
	return 0;
}
