// SPDX-License-Identifier: BSD-3-Clause
/*
 * explain: joins the prose table (explain_text.c) with the kb definitions.
 *
 * An entry of the table explains, on every model of its vendor, the kb
 * metric whose name or alias is the entry's name or one of its aliases.
 * Nothing here caches: the table has a few hundred entries and the kb a
 * few dozen models, so a lookup simply walks both.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "explain.h"

/* How well a query names an entry; lower is better. */
enum match_rank { MATCH_NAME, MATCH_ALIAS, MATCH_PATH, MATCH_NODE, MATCH_NONE };

/* Longest name that suggestions consider; every real name is far shorter. */
#define SUGGEST_MAX_LEN 255

const char *td_explain_vendor_name(enum td_vendor vendor)
{
	switch (vendor) {
	case TD_VENDOR_INTEL: return "intel";
	case TD_VENDOR_ARM: return "arm";
	case TD_VENDOR_AMD: return "amd";
	}
	return "unknown";
}

/* Ties between vendors go to Intel, then Arm, then AMD (see explain.h). */
static int vendor_rank(enum td_vendor vendor)
{
	switch (vendor) {
	case TD_VENDOR_INTEL: return 0;
	case TD_VENDOR_ARM: return 1;
	case TD_VENDOR_AMD: return 2;
	}
	return 3;
}

/* Appends to a NUL-terminated buffer, truncating silently when full. */
static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

static bool str_eq_null(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Whether the space-separated list holds word, case-insensitively. */
static bool word_in_list(const char *list, const char *word)
{
	size_t len = strlen(word);

	for (const char *p = list; p && *p;) {
		size_t n = strcspn(p, " ");

		if (n == len && !strncasecmp(p, word, len))
			return true;
		p += n;
		p += strspn(p, " ");
	}
	return false;
}

/* The kb metric entry t explains on model m, or NULL.  Helpers are plumbing,
 * never explained. */
static const struct td_metric_def *text_metric(const struct td_explain_text *t,
						const struct td_model *m)
{
	const struct td_metric_def *d;

	if (m->vendor != t->vendor)
		return NULL;
	d = td_model_metric(m, t->name);
	for (size_t i = 0; !d && t->aliases[i]; i++)
		d = td_model_metric(m, t->aliases[i]);
	return d && d->kind != TD_METRIC_HELPER ? d : NULL;
}

static const char *ref_leaf(const char *ref_path)
{
	const char *dot = strrchr(ref_path, '.');

	return dot ? dot + 1 : ref_path;
}

static enum match_rank rank_metric(const struct td_metric_def *d, const char *query)
{
	if (!strcasecmp(d->name, query))
		return MATCH_NAME;
	if (word_in_list(d->aliases, query))
		return MATCH_ALIAS;
	if (d->path && !strcasecmp(d->path, query))
		return MATCH_PATH;
	if (d->node && !strcasecmp(d->node, query))
		return MATCH_NODE;
	return MATCH_NONE;
}

static enum match_rank rank_table(const struct td_explain_text *t, const char *query)
{
	if (!strcasecmp(t->name, query))
		return MATCH_NAME;
	for (size_t i = 0; t->aliases[i]; i++)
		if (!strcasecmp(t->aliases[i], query))
			return MATCH_ALIAS;
	if (t->ref_path && !strcasecmp(t->ref_path, query))
		return MATCH_PATH;
	if (t->ref_path && !strcasecmp(ref_leaf(t->ref_path), query))
		return MATCH_NODE;
	return MATCH_NONE;
}

/* How well query names entry t on model only, or on any model (or none,
 * for explained-only entries) when only is NULL. */
static enum match_rank rank_text(const struct td_kb *kb, const struct td_explain_text *t,
				 const struct td_model *only, const char *query)
{
	enum match_rank best = MATCH_NONE;
	bool defined = false;
	size_t n = only ? 1 : td_kb_model_count(kb);

	for (size_t i = 0; i < n; i++) {
		const struct td_model *m = only ? only : td_kb_model_at(kb, i);
		const struct td_metric_def *d = text_metric(t, m);
		enum match_rank r;

		if (!d)
			continue;
		defined = true;
		r = rank_metric(d, query);
		if (r < best)
			best = r;
	}
	if (only && !defined)
		return MATCH_NONE;
	enum match_rank r = rank_table(t, query);
	return r < best ? r : best;
}

struct candidate {
	enum match_rank rank;
	int vendor;
	size_t index;
};

static int candidate_cmp(const void *pa, const void *pb)
{
	const struct candidate *a = pa, *b = pb;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->vendor != b->vendor)
		return a->vendor < b->vendor ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* Every entry query names, best first.  *out is NULL when there are none. */
static int find_candidates(const struct td_kb *kb, const char *query, const struct td_model *only,
			   struct candidate **out, size_t *count)
{
	struct candidate *c = calloc(td_explain_text_count, sizeof(*c));
	size_t n = 0;

	if (!c)
		return -ENOMEM;
	for (size_t i = 0; i < td_explain_text_count; i++) {
		const struct td_explain_text *t = &td_explain_texts[i];
		enum match_rank r = rank_text(kb, t, only, query);

		if (r != MATCH_NONE)
			c[n++] = (struct candidate){ r, vendor_rank(t->vendor), i };
	}
	qsort(c, n, sizeof(*c), candidate_cmp);
	if (!n) {
		free(c);
		c = NULL;
	}
	*out = c;
	*count = n;
	return 0;
}

/* ---------------------------------------------------------------- suggestions */

/* Edit distance, case-insensitive; any value above limit means "too far". */
static size_t edit_distance(const char *a, const char *b, size_t limit)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t row[SUGGEST_MAX_LEN + 1];

	if (la > SUGGEST_MAX_LEN || lb > SUGGEST_MAX_LEN)
		return limit + 1;
	if ((la > lb ? la - lb : lb - la) > limit)
		return limit + 1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0], row_min;

		row[0] = i;
		row_min = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			size_t best = diag + cost;

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
			if (best < row_min)
				row_min = best;
		}
		if (row_min > limit)
			return limit + 1;
	}
	return row[lb];
}

/* Typos worth correcting grow with the length of what was typed. */
static size_t typo_limit(const char *query)
{
	size_t limit = strlen(query) / 4 + 1;

	return limit > 3 ? 3 : limit;
}

struct suggestions {
	const char *query;
	size_t limit;
	const char **names;
	size_t dist[TD_EXPLAIN_MAX_SUGGESTIONS];
	size_t count, max;
};

/* Keeps name if it is among the max nearest so far; the first seen wins ties. */
static void consider(struct suggestions *s, const char *name)
{
	size_t d, at;

	if (!name)
		return;
	for (size_t i = 0; i < s->count; i++)
		if (!strcasecmp(s->names[i], name))
			return;
	d = edit_distance(s->query, name, s->limit);
	if (d > s->limit)
		return;
	for (at = s->count; at > 0 && s->dist[at - 1] > d; at--)
		;
	if (at >= s->max)
		return;
	if (s->count < s->max)
		s->count++;
	for (size_t i = s->count - 1; i > at; i--) {
		s->names[i] = s->names[i - 1];
		s->dist[i] = s->dist[i - 1];
	}
	s->names[at] = name;
	s->dist[at] = d;
}

static void consider_metric(struct suggestions *s, const struct td_metric_def *d)
{
	consider(s, d->node);
	consider(s, d->name);
	consider(s, d->path);
}

size_t td_explain_suggest(const struct td_kb *kb, const char *query, const struct td_model *model,
			  const char **names, size_t max)
{
	struct suggestions s = {
		.query = query, .limit = typo_limit(query), .names = names,
		.max = max < TD_EXPLAIN_MAX_SUGGESTIONS ? max : TD_EXPLAIN_MAX_SUGGESTIONS,
	};

	for (size_t i = 0; i < td_explain_text_count; i++) {
		const struct td_explain_text *t = &td_explain_texts[i];
		size_t n = model ? 1 : td_kb_model_count(kb);
		bool defined = false;

		for (size_t k = 0; k < n; k++) {
			const struct td_model *m = model ? model : td_kb_model_at(kb, k);
			const struct td_metric_def *d = text_metric(t, m);

			if (d) {
				consider_metric(&s, d);
				defined = true;
			}
		}
		if (model && !defined)
			continue;
		consider(&s, t->name);
		for (size_t a = 0; t->aliases[a]; a++)
			consider(&s, t->aliases[a]);
		if (t->ref_path) {
			consider(&s, ref_leaf(t->ref_path));
			consider(&s, t->ref_path);
		}
	}
	return s.count;
}

/* ---------------------------------------------------------------- errors */

static int unknown_model(const struct td_kb *kb, const char *name, char *err, size_t errlen)
{
	snprintf(err, errlen, "unknown model '%s'; known models:", name);
	for (size_t i = 0; i < td_kb_model_count(kb); i++)
		append(err, errlen, "%s %s", i ? "," : "", td_kb_model_at(kb, i)->name);
	return -EINVAL;
}

static void append_models(char *err, size_t errlen, const struct td_kb *kb,
			  const struct td_explain_text *t)
{
	const char *sep = "";

	for (size_t i = 0; i < td_kb_model_count(kb); i++) {
		const struct td_model *m = td_kb_model_at(kb, i);

		if (text_metric(t, m)) {
			append(err, errlen, "%s%s", sep, m->name);
			sep = ", ";
		}
	}
}

/* The -ENOENT sentence: not on this model, or unknown with suggestions. */
static int not_found(const struct td_kb *kb, const char *query, const struct td_model *model,
		     char *err, size_t errlen)
{
	const char *names[TD_EXPLAIN_MAX_SUGGESTIONS];
	struct candidate *c;
	size_t n;

	if (model && !find_candidates(kb, query, NULL, &c, &n) && n) {
		const struct td_explain_text *t = &td_explain_texts[c[0].index];

		free(c);
		snprintf(err, errlen, "metric '%s' is not defined on model %s", query, model->name);
		if (t->ref_path) {
			append(err, errlen, " (topdown computes it on no model; `topdown explain %s` "
			       "without --model describes it)", query);
		} else {
			append(err, errlen, "; it is defined on ");
			append_models(err, errlen, kb, t);
		}
		return -ENOENT;
	}
	snprintf(err, errlen, "unknown metric '%s'", query);
	n = td_explain_suggest(kb, query, model, names, TD_EXPLAIN_MAX_SUGGESTIONS);
	for (size_t i = 0; i < n; i++)
		append(err, errlen, "%s%s", i ? ", " : "; did you mean ", names[i]);
	append(err, errlen, "%s (topdown explain --list%s%s shows all)", n ? "?" : "",
	       model ? " --model " : "", model ? model->name : "");
	return -ENOENT;
}

/* ---------------------------------------------------------------- building an explanation */

/* Appends p to a pointer array grown one slot at a time (they stay small). */
static int push(const void ***items, size_t *count, const void *p)
{
	const void **grown = realloc(*items, (*count + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	grown[(*count)++] = p;
	*items = grown;
	return 0;
}

#define PUSH(items, count, p) push((const void ***)(items), (count), (p))

/* Adds the first len bytes of name unless it is e->name or already there. */
static int add_alias(struct td_explanation *e, const char *name, size_t len)
{
	char *copy;

	if (strlen(e->name) == len && !strncasecmp(e->name, name, len))
		return 0;
	for (size_t i = 0; i < e->n_aliases; i++)
		if (strlen(e->aliases[i]) == len && !strncasecmp(e->aliases[i], name, len))
			return 0;
	copy = strndup(name, len);
	if (!copy || PUSH(&e->aliases, &e->n_aliases, copy) < 0) {
		free(copy);
		return -ENOMEM;
	}
	return 0;
}

static int add_alias_list(struct td_explanation *e, const char *list)
{
	for (const char *p = list; p && *p;) {
		size_t n = strcspn(p, " ");

		if (n && add_alias(e, p, n) < 0)
			return -ENOMEM;
		p += n;
		p += strspn(p, " ");
	}
	return 0;
}

static int add_note(struct td_explanation *e, const char *note)
{
	if (!note)
		return 0;
	for (size_t i = 0; i < e->n_notes; i++)
		if (!strcmp(e->notes[i], note))
			return 0;
	return PUSH(&e->notes, &e->n_notes, note);
}

/* Files model_name under the placement with this path, parent, level and
 * threshold, starting a new placement when none matches. */
static int add_placement(struct td_explanation *e, const char *path, const char *parent, int level,
			 const char *threshold, const char *model_name)
{
	struct td_explain_placement *p = NULL;

	for (size_t i = 0; i < e->n_placements && !p; i++) {
		struct td_explain_placement *q = &e->placements[i];

		if (str_eq_null(q->path, path) && str_eq_null(q->parent, parent) &&
		    q->level == level && str_eq_null(q->threshold, threshold))
			p = q;
	}
	if (!p) {
		struct td_explain_placement *grown =
			realloc(e->placements, (e->n_placements + 1) * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		e->placements = grown;
		p = &grown[e->n_placements++];
		*p = (struct td_explain_placement){ path, parent, level, threshold, NULL, 0 };
	}
	return model_name ? PUSH(&p->models, &p->n_models, model_name) : 0;
}

/* Most models first; equal counts keep kb order. */
static void sort_placements(struct td_explanation *e)
{
	for (size_t i = 1; i < e->n_placements; i++) {
		struct td_explain_placement p = e->placements[i];
		size_t j = i;

		for (; j > 0 && e->placements[j - 1].n_models < p.n_models; j--)
			e->placements[j] = e->placements[j - 1];
		e->placements[j] = p;
	}
}

static int add_model(struct td_explanation *e, const struct td_model *m,
		     const struct td_metric_def *d)
{
	const struct td_metric_def *parent = d->parent ? td_model_metric(m, d->parent) : NULL;

	if (d->kind == TD_METRIC_TREE)
		e->kind = TD_METRIC_TREE;
	if (add_placement(e, d->path, parent ? parent->path : NULL, d->level, d->threshold,
			  m->name) < 0 ||
	    add_alias(e, d->name, strlen(d->name)) < 0 || add_alias_list(e, d->aliases) < 0 ||
	    add_note(e, m->notes) < 0)
		return -ENOMEM;
	return 0;
}

/* An entry no model computes: placed by its ref_path alone. */
static int add_reference_placement(struct td_explanation *e)
{
	const char *path = e->text->ref_path;
	const char *dot = strrchr(path, '.');
	int level = 1;

	for (const char *p = path; *p; p++)
		level += *p == '.';
	if (dot && !(e->ref_parent = strndup(path, (size_t)(dot - path))))
		return -ENOMEM;
	e->kind = TD_METRIC_TREE;
	return add_placement(e, path, e->ref_parent, level, NULL, NULL);
}

static int fill_explanation(const struct td_kb *kb, struct td_explanation *e,
			    const struct td_model *only)
{
	const struct td_explain_text *t = e->text;
	size_t n = only ? 1 : td_kb_model_count(kb);

	for (size_t i = 0; i < n; i++) {
		const struct td_model *m = only ? only : td_kb_model_at(kb, i);
		const struct td_metric_def *d = text_metric(t, m);

		if (d && add_model(e, m, d) < 0)
			return -ENOMEM;
	}
	e->computed = e->n_placements > 0;
	if (!e->computed && t->ref_path && add_reference_placement(e) < 0)
		return -ENOMEM;
	if (add_alias(e, t->name, strlen(t->name)) < 0)
		return -ENOMEM;
	for (size_t i = 0; t->aliases[i]; i++)
		if (add_alias(e, t->aliases[i], strlen(t->aliases[i])) < 0)
			return -ENOMEM;
	sort_placements(e);
	return 0;
}

/* The last node of a dotted path. */
static const char *path_leaf(const char *path)
{
	const char *dot = strrchr(path, '.');

	return dot ? dot + 1 : path;
}

static void set_locate(struct td_explanation *e, const struct td_model *model)
{
	const char *path = e->computed ? (e->n_placements ? e->placements[0].path : NULL) : e->ref_parent;

	e->locate_node = path ? path_leaf(path) : e->name;
	if (model && (e->sample_event = td_model_sample_event(model, e->locate_node, &e->sample_precise)))
		e->sample_model = model->name;
}

/* The explanation of the best candidate, c[0]; the others become also. */
static struct td_explanation *explain_candidates(const struct td_kb *kb, const struct candidate *c,
						 size_t n, const struct td_model *model)
{
	struct td_explanation *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->text = &td_explain_texts[c[0].index];
	e->kind = TD_METRIC_INFO;
	e->name = model ? text_metric(e->text, model)->name : e->text->name;
	for (size_t i = 1; i < n; i++)
		if (PUSH(&e->also, &e->n_also, &td_explain_texts[c[i].index]) < 0)
			goto fail;
	if (fill_explanation(kb, e, model) < 0)
		goto fail;
	set_locate(e, model);
	return e;
fail:
	td_explanation_free(e);
	return NULL;
}

int td_explain_lookup(const struct td_kb *kb, const char *query, const char *model_name,
		      struct td_explanation **out, char *err, size_t errlen)
{
	const struct td_model *model = NULL;
	struct candidate *c;
	size_t n;

	*out = NULL;
	if (!query || !*query) {
		snprintf(err, errlen, "no metric name given; name one (DRAM_Bound, tma_dram_bound, "
			 "backend_bound) or run topdown explain --list");
		return -ENOENT;
	}
	if (model_name && !(model = td_kb_model(kb, model_name)))
		return unknown_model(kb, model_name, err, errlen);
	if (find_candidates(kb, query, model, &c, &n) < 0)
		goto nomem;
	if (!n)
		return not_found(kb, query, model, err, errlen);
	*out = explain_candidates(kb, c, n, model);
	free(c);
	if (*out)
		return 0;
nomem:
	snprintf(err, errlen, "out of memory while looking up '%s'", query);
	return -ENOMEM;
}

void td_explanation_free(struct td_explanation *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n_aliases; i++)
		free(e->aliases[i]);
	free(e->aliases);
	for (size_t i = 0; i < e->n_placements; i++)
		free(e->placements[i].models);
	free(e->placements);
	free(e->notes);
	free(e->also);
	free(e->ref_parent);
	free(e);
}

/* ---------------------------------------------------------------- listing */

/* A node before the tree is built: flat, in table order. */
struct flat_node {
	struct td_explain_node node;
	const char *parent; /* dotted path */
	size_t order;       /* index in the table; unexplained metrics last */
	bool is_root;
};

/* What the listing builds for one group before turning it into trees. */
struct group_build {
	struct flat_node *nodes;
	size_t n_nodes;
	struct flat_node *info;
	size_t n_info;
};

enum group_key { GROUP_INTEL, GROUP_INTEL_ATOM, GROUP_ARM, GROUP_AMD, GROUP_COUNT };

static const char *const group_labels[GROUP_COUNT] = {
	"Intel", "Intel E-core (cpu_atom)", "Arm Neoverse", "AMD Zen",
};

static enum group_key group_of(const struct td_model *m)
{
	switch (m->vendor) {
	case TD_VENDOR_INTEL:
		return m->pmu && !strcmp(m->pmu, "cpu_atom") ? GROUP_INTEL_ATOM : GROUP_INTEL;
	case TD_VENDOR_ARM:
		return GROUP_ARM;
	case TD_VENDOR_AMD:
		break;
	}
	return GROUP_AMD;
}

/* Adds n, or its models to the node with the same path (tree) or name
 * (Info) already there. */
static int add_flat(struct flat_node **nodes, size_t *count, const struct flat_node *n)
{
	struct flat_node *grown;

	for (size_t i = 0; i < *count; i++) {
		struct td_explain_node *o = &(*nodes)[i].node;

		if (n->node.path ? str_eq_null(o->path, n->node.path) : !strcasecmp(o->name, n->node.name)) {
			o->models |= n->node.models;
			return 0;
		}
	}
	grown = realloc(*nodes, (*count + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	grown[(*count)++] = *n;
	*nodes = grown;
	return 0;
}

static int add_metric_node(struct group_build *b, const struct td_model *m, uint64_t bit,
			   const struct td_metric_def *d, const struct td_explain_text *t)
{
	const struct td_metric_def *parent = d->parent ? td_model_metric(m, d->parent) : NULL;
	struct flat_node n = {
		.node = { .text = t, .name = d->name, .computed = true, .models = bit },
		.order = t ? (size_t)(t - td_explain_texts) : SIZE_MAX,
	};

	if (d->kind != TD_METRIC_TREE)
		return add_flat(&b->info, &b->n_info, &n);
	n.node.node = d->node;
	n.node.path = d->path;
	n.node.level = d->level;
	n.parent = parent ? parent->path : NULL;
	return add_flat(&b->nodes, &b->n_nodes, &n);
}

/* Every explained and every unexplained metric of model m, the group's
 * model number index. */
static int add_model_metrics(struct group_build *b, const struct td_model *m, size_t index)
{
	uint64_t bit = (uint64_t)1 << index;
	bool *explained = calloc(m->n_metrics ? m->n_metrics : 1, sizeof(*explained));
	int ret = 0;

	if (!explained)
		return -ENOMEM;
	for (size_t i = 0; !ret && i < td_explain_text_count; i++) {
		const struct td_explain_text *t = &td_explain_texts[i];
		const struct td_metric_def *d = text_metric(t, m);

		if (d) {
			explained[d - m->metrics] = true;
			ret = add_metric_node(b, m, bit, d, t);
		}
	}
	for (size_t i = 0; !ret && i < m->n_metrics; i++)
		if (!explained[i] && m->metrics[i].kind != TD_METRIC_HELPER)
			ret = add_metric_node(b, m, bit, &m->metrics[i], NULL);
	free(explained);
	return ret;
}

/* The explained-only entries of a vendor, placed by their ref_path. */
static int add_reference_nodes(struct group_build *b, enum td_vendor vendor)
{
	for (size_t i = 0; i < td_explain_text_count; i++) {
		const struct td_explain_text *t = &td_explain_texts[i];
		struct flat_node n = {
			.node = { .text = t, .name = t->name, .path = t->ref_path, .computed = false },
			.order = i,
		};
		const char *dot;
		int ret;

		if (t->vendor != vendor || !t->ref_path)
			continue;
		n.node.node = ref_leaf(t->ref_path);
		n.node.level = 1;
		for (const char *p = t->ref_path; *p; p++)
			n.node.level += *p == '.';
		dot = strrchr(t->ref_path, '.');
		if (dot && !(n.parent = strndup(t->ref_path, (size_t)(dot - t->ref_path))))
			return -ENOMEM;
		size_t before = b->n_nodes;

		ret = add_flat(&b->nodes, &b->n_nodes, &n);
		if (b->n_nodes == before)
			free((char *)n.parent); /* refused, or a kb node has the path */
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int flat_cmp(const void *pa, const void *pb)
{
	const struct flat_node *a = pa, *b = pb;

	if (a->order != b->order)
		return a->order < b->order ? -1 : 1;
	return strcasecmp(a->node.name, b->node.name);
}

/* Copies the children of parent (the roots when NULL) into *out, each with
 * its own children; nodes is sorted, so children come in table order. */
static int build_children(const struct flat_node *nodes, size_t count, const char *parent,
			  struct td_explain_node **out, size_t *n_out)
{
	size_t n = 0;

	*out = NULL;
	*n_out = 0;
	for (size_t i = 0; i < count; i++)
		n += parent ? str_eq_null(nodes[i].parent, parent) : nodes[i].is_root;
	if (!n)
		return 0;
	*out = calloc(n, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++) {
		struct td_explain_node *node;

		if (parent ? !str_eq_null(nodes[i].parent, parent) : !nodes[i].is_root)
			continue;
		node = &(*out)[(*n_out)++];
		*node = nodes[i].node;
		if (build_children(nodes, count, node->path, &node->children, &node->n_children) < 0)
			return -ENOMEM;
	}
	return 0;
}

static void free_nodes(struct td_explain_node *nodes, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free_nodes(nodes[i].children, nodes[i].n_children);
	free(nodes);
}

/* Roots: level-1 nodes, and any node whose parent is missing, so that
 * nothing defined goes unlisted. */
static void mark_roots(struct flat_node *nodes, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		nodes[i].is_root = true;
		for (size_t j = 0; nodes[i].parent && j < count && nodes[i].is_root; j++)
			if (str_eq_null(nodes[j].node.path, nodes[i].parent))
				nodes[i].is_root = false;
	}
}

/* qsort must not see the NULL of an empty array. */
static void sort_flat(struct flat_node *nodes, size_t count)
{
	if (count > 1)
		qsort(nodes, count, sizeof(*nodes), flat_cmp);
}

static int finish_group(struct td_explain_group *g, struct group_build *b)
{
	sort_flat(b->nodes, b->n_nodes);
	sort_flat(b->info, b->n_info);
	mark_roots(b->nodes, b->n_nodes);
	if (build_children(b->nodes, b->n_nodes, NULL, &g->roots, &g->n_roots) < 0)
		return -ENOMEM;
	if (b->n_info) {
		g->info = calloc(b->n_info, sizeof(*g->info));
		if (!g->info)
			return -ENOMEM;
		for (size_t i = 0; i < b->n_info; i++)
			g->info[g->n_info++] = b->info[i].node;
	}
	return 0;
}

static void free_build(struct group_build *b)
{
	for (size_t i = 0; i < b->n_nodes; i++)
		if (!b->nodes[i].node.computed)
			free((char *)b->nodes[i].parent);
	free(b->nodes);
	free(b->info);
}

/* Whether a listing for model (every model when NULL) shows m: a hybrid
 * P-core model brings its E-core model along. */
static bool in_listing(const struct td_model *m, const struct td_model *model)
{
	return !model || m == model || m == model->e_core;
}

/* Builds group key from the listed models that belong to it; an empty
 * group is left out of the listing. */
static int build_group(const struct td_kb *kb, const struct td_model *model, enum group_key key,
		       struct td_explain_listing *l)
{
	struct td_explain_group g = { .label = group_labels[key] };
	struct group_build b = { 0 };
	int ret = 0;

	for (size_t i = 0; !ret && i < td_kb_model_count(kb); i++) {
		const struct td_model *m = td_kb_model_at(kb, i);

		if (group_of(m) != key || !in_listing(m, model))
			continue;
		if (g.n_models == TD_EXPLAIN_MAX_GROUP_MODELS) {
			ret = -E2BIG;
			break;
		}
		g.vendor = m->vendor;
		ret = PUSH(&g.models, &g.n_models, m->name);
		if (!ret)
			ret = add_model_metrics(&b, m, g.n_models - 1);
	}
	if (!ret && !model && key == GROUP_INTEL && g.n_models)
		ret = add_reference_nodes(&b, TD_VENDOR_INTEL);
	if (!ret && g.n_models)
		ret = finish_group(&g, &b);
	if (!ret && g.n_models) {
		struct td_explain_group *grown =
			realloc(l->groups, (l->n_groups + 1) * sizeof(*grown));

		if (grown) {
			l->groups = grown;
			l->groups[l->n_groups++] = g;
		} else {
			ret = -ENOMEM;
		}
	}
	if (ret || !g.n_models) {
		free(g.models);
		free_nodes(g.roots, g.n_roots);
		free(g.info);
	}
	free_build(&b);
	return ret;
}

int td_explain_list(const struct td_kb *kb, const char *model_name,
		    struct td_explain_listing **out, char *err, size_t errlen)
{
	const struct td_model *model = NULL;
	struct td_explain_listing *l;

	*out = NULL;
	if (model_name && !(model = td_kb_model(kb, model_name)))
		return unknown_model(kb, model_name, err, errlen);
	l = calloc(1, sizeof(*l));
	if (!l)
		goto nomem;
	for (int key = 0; key < GROUP_COUNT; key++) {
		int ret = build_group(kb, model, key, l);

		if (ret == -E2BIG) {
			td_explain_listing_free(l);
			snprintf(err, errlen, "more than %d models share the %s tree; raise "
				 "TD_EXPLAIN_MAX_GROUP_MODELS in kb/explain.h",
				 TD_EXPLAIN_MAX_GROUP_MODELS, group_labels[key]);
			return ret;
		}
		if (ret < 0) {
			td_explain_listing_free(l);
			goto nomem;
		}
	}
	*out = l;
	return 0;
nomem:
	snprintf(err, errlen, "out of memory while listing the metrics");
	return -ENOMEM;
}

void td_explain_listing_free(struct td_explain_listing *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n_groups; i++) {
		free(l->groups[i].models);
		free_nodes(l->groups[i].roots, l->groups[i].n_roots);
		free(l->groups[i].info);
	}
	free(l->groups);
	free(l);
}
