// SPDX-License-Identifier: BSD-3-Clause
/*
 * kb: turns the parsed definitions into ready-to-evaluate models.
 *
 * For each model: compile every formula, check the tree (parents exist,
 * levels step by one), order the metrics so each follows the metrics it
 * names, give every event, constant and metric its slot, bind the
 * formulas to those slots, and work out which events each metric and
 * each collection depth needs.  Any inconsistency is a load error naming
 * the model and metric, so a broken definition never reaches a user.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "expr.h"
#include "kb_internal.h"

/* Every kb/defs file in one NUL-terminated text; kb/kb.mk builds it. */
extern const char td_kb_defs[];

/* The '#' constants td_model_set_constants() knows how to fill. */
static const char *const known_constants[] = {
	"#SMT_on", "#core_wide", "#has_pmem", "#slots",
};

static int model_fail(const struct kb_model *km, const char *metric, const char *problem,
		      char *err, size_t errlen)
{
	snprintf(err, errlen, "%s, model %s%s%s: %s; fix the definition file", km->file,
		 km->pub.name, metric ? ", metric " : "", metric ? metric : "", problem);
	return -EINVAL;
}

static size_t metric_base(const struct kb_model *km)
{
	return km->pub.n_events + km->pub.n_constants;
}

/* ---- the name index: events, constants, metrics and aliases ---------- */

/* FNV-1a over len bytes. */
static size_t name_hash(const char *name, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 1099511628211ull;
	return (size_t)h;
}

/* The table cell of name: its entry, or the empty cell it would take. */
static struct kb_name *name_cell(const struct kb_model *km, const char *name, size_t len)
{
	size_t i = name_hash(name, len) & km->index_mask;
	while (km->index[i].name &&
	       (km->index[i].len != len || memcmp(km->index[i].name, name, len) != 0))
		i = (i + 1) & km->index_mask;
	return &km->index[i];
}

static int add_name(struct kb_model *km, const char *name, size_t len, int slot, char *err,
		    size_t errlen)
{
	struct kb_name *cell = name_cell(km, name, len);
	if (cell->name) {
		char shown[128];
		snprintf(shown, sizeof(shown), "%.*s", (int)len, name);
		return model_fail(km, shown, "the name is defined twice", err, errlen);
	}
	*cell = (struct kb_name){ name, len, slot };
	return 0;
}

/* A metric's name and each word of its aliases. */
static int add_metric_names(struct kb_model *km, const struct td_metric_def *m, int slot,
			    char *err, size_t errlen)
{
	int rc = add_name(km, m->name, strlen(m->name), slot, err, errlen);
	for (const char *w = m->aliases; *w && !rc;) {
		size_t n = strcspn(w, " ");
		if (n)
			rc = add_name(km, w, n, slot, err, errlen);
		w += n + (w[n] == ' ');
	}
	return rc;
}

static size_t count_words(const char *list)
{
	size_t n = 0;
	for (const char *w = list; *w; w++)
		n += *w != ' ' && (w == list || w[-1] == ' ');
	return n;
}

/* (Re)build the index with the slots the current order gives. */
static int build_index(struct kb_model *km, char *err, size_t errlen)
{
	struct td_model *m = &km->pub;
	size_t names = m->n_slots, cells = 16;
	for (size_t i = 0; i < m->n_metrics; i++)
		names += count_words(km->metrics[i].aliases);
	while (cells < 2 * names) /* at most half full: short probes */
		cells *= 2;
	free(km->index);
	km->index = calloc(cells, sizeof(*km->index));
	if (!km->index)
		return -ENOMEM;
	km->index_mask = cells - 1;
	int rc = 0;
	for (size_t i = 0; i < m->n_events && !rc; i++)
		rc = add_name(km, km->events[i].name, strlen(km->events[i].name), (int)i, err,
			      errlen);
	for (size_t i = 0; i < m->n_constants && !rc; i++)
		rc = add_name(km, km->constants[i], strlen(km->constants[i]),
			      (int)(m->n_events + i), err, errlen);
	for (size_t i = 0; i < m->n_metrics && !rc; i++)
		rc = add_metric_names(km, &km->metrics[i], (int)(metric_base(km) + i), err,
				      errlen);
	return rc;
}

static int slot_lookup(const struct kb_model *km, const char *name)
{
	const struct kb_name *cell = name_cell(km, name, strlen(name));
	return cell->name ? cell->slot : -ENOENT;
}

static int slot_of(void *ctx, const char *name)
{
	return slot_lookup(ctx, name);
}

/* ---- checks ---------------------------------------------------------- */

static int check_model(const struct kb_model *km, char *err, size_t errlen)
{
	const struct td_model *m = &km->pub;
	if ((int)m->vendor < 0)
		return model_fail(km, NULL, "no vendor line", err, errlen);
	if (!m->long_name || !m->pmu || !m->slots_per_cycle || !m->gp_counters)
		return model_fail(km, NULL, "long, pmu, slots and counters gp= are required", err,
				  errlen);
	if (!m->n_metrics)
		return model_fail(km, NULL, "no metrics", err, errlen);
	for (size_t i = 0; i < m->n_constants; i++) {
		size_t k = 0, n = sizeof(known_constants) / sizeof(known_constants[0]);
		while (k < n && strcmp(known_constants[k], km->constants[i]) != 0)
			k++;
		if (k == n)
			return model_fail(km, km->constants[i], "unknown constant", err, errlen);
	}
	return 0;
}

static struct td_metric_def *metric_named(struct kb_model *km, const char *name)
{
	int slot = slot_lookup(km, name);
	return slot >= (int)metric_base(km) ? &km->metrics[slot - (int)metric_base(km)] : NULL;
}

static int check_placement(struct kb_model *km, const struct td_metric_def *m, char *err,
			   size_t errlen)
{
	if (m->kind != TD_METRIC_TREE)
		return m->level || m->parent || m->node
			       ? model_fail(km, m->name, "level, parent and node are for tree metrics",
					    err, errlen)
			       : 0;
	if (!m->level || !m->node)
		return model_fail(km, m->name, "a tree metric needs level and node", err, errlen);
	if ((m->level == 1) != !m->parent)
		return model_fail(km, m->name, "level 1, and only level 1, has no parent", err,
				  errlen);
	const struct td_metric_def *parent = m->parent ? metric_named(km, m->parent) : NULL;
	if (m->parent && (!parent || parent->kind != TD_METRIC_TREE))
		return model_fail(km, m->name, "the parent is not a tree metric of the model", err,
				  errlen);
	if (parent && parent->level != m->level - 1)
		return model_fail(km, m->name, "the level is not the parent's plus one", err,
				  errlen);
	return 0;
}

/* "Backend_Bound.Memory_Bound.DRAM_Bound": the nodes from level 1 down. */
static int build_path(struct kb_model *km, struct td_metric_def *m)
{
	if (m->path || m->kind != TD_METRIC_TREE)
		return 0;
	struct td_metric_def *parent = m->parent ? metric_named(km, m->parent) : NULL;
	if (parent && build_path(km, parent))
		return -ENOMEM;
	char *path;
	if (parent ? asprintf(&path, "%s.%s", parent->path, m->node) < 0
		   : !(path = strdup(m->node)))
		return -ENOMEM;
	m->path = path;
	return 0;
}

static int check_tree(struct kb_model *km, char *err, size_t errlen)
{
	for (size_t i = 0; i < km->pub.n_metrics; i++) {
		int rc = check_placement(km, &km->metrics[i], err, errlen);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < km->pub.n_metrics; i++)
		if (build_path(km, &km->metrics[i]))
			return -ENOMEM;
	return 0;
}

static bool is_event_name(const struct kb_model *km, const char *name, size_t len)
{
	const struct kb_name *cell = name_cell(km, name, len);
	return cell->name && cell->slot < (int)km->pub.n_events;
}

/* Sampling opens the events a sample line names with the model's own
 * encodings, so each must be an event of the model. */
static int check_samples(const struct kb_model *km, char *err, size_t errlen)
{
	for (size_t i = 0; i < km->pub.n_metrics; i++) {
		const struct td_metric_def *m = &km->metrics[i];
		bool known = !m->sample || is_event_name(km, m->sample, strlen(m->sample));
		for (const char *w = m->sample_also; *w && known;) {
			size_t n = strcspn(w, " ");
			known = !n || is_event_name(km, w, n);
			w += n + (w[n] == ' ');
		}
		if (!known)
			return model_fail(km, m->name, "a sample event is no event of the model", err,
					  errlen);
	}
	return 0;
}

/* ---- compile, order, bind --------------------------------------------- */

static int compile_formula(struct kb_model *km, const char *metric, const char *text,
			   struct td_expr **out, char *err, size_t errlen)
{
	char why[512];

	errno = 0;
	*out = td_expr_parse(text, why, sizeof(why));
	if (!*out && errno == ENOMEM) { /* the memory, not the definition, is short */
		snprintf(err, errlen, "%s", why);
		return -ENOMEM;
	}
	return *out ? 0 : model_fail(km, metric, why, err, errlen);
}

static int compile_model(struct kb_model *km, char *err, size_t errlen)
{
	for (size_t i = 0; i < km->pub.n_metrics; i++) {
		struct td_metric_def *m = &km->metrics[i];
		if (!m->expr)
			return model_fail(km, m->name, "no expr line", err, errlen);
		int rc = compile_formula(km, m->name, m->expr, &m->compiled, err, errlen);
		if (!rc && m->threshold)
			rc = compile_formula(km, m->name, m->threshold, &m->compiled_threshold, err,
					     errlen);
		if (rc)
			return rc;
	}
	return 0;
}

/* The slots one formula names, resolved once while a model is built. */
struct refs {
	int *slot;
	size_t n;
};

/* Per metric, parallel to metrics[]: what its formula and threshold name. */
struct links {
	struct refs expr, threshold;
};

static bool is_metric(const struct kb_model *km, int slot)
{
	return slot >= (int)metric_base(km);
}

static int resolve(struct kb_model *km, const char *metric, const struct td_expr *e,
		   struct refs *out, char *err, size_t errlen)
{
	size_t n = e ? td_expr_name_count(e) : 0;
	out->slot = malloc((n ? n : 1) * sizeof(*out->slot));
	if (!out->slot)
		return -ENOMEM;
	for (out->n = 0; out->n < n; out->n++) {
		const char *name = td_expr_name(e, out->n);
		int slot = slot_lookup(km, name);
		if (slot < 0) {
			char why[256];
			snprintf(why, sizeof(why), "'%s' is no event, constant or metric of the model",
				 name);
			return model_fail(km, metric, why, err, errlen);
		}
		out->slot[out->n] = slot;
	}
	return 0;
}

static int resolve_model(struct kb_model *km, struct links *links, char *err, size_t errlen)
{
	for (size_t i = 0; i < km->pub.n_metrics; i++) {
		const struct td_metric_def *m = &km->metrics[i];
		int rc = resolve(km, m->name, m->compiled, &links[i].expr, err, errlen);
		if (!rc)
			rc = resolve(km, m->name, m->compiled_threshold, &links[i].threshold, err,
				     errlen);
		if (rc)
			return rc;
	}
	return 0;
}

static void free_links(struct links *links, size_t n)
{
	for (size_t i = 0; links && i < n; i++) {
		free(links[i].expr.slot);
		free(links[i].threshold.slot);
	}
	free(links);
}

enum { UNSEEN, VISITING, PLACED };

static int place_metric(struct kb_model *km, const struct links *links, size_t i, char *state,
			size_t *order, size_t *n, char *err, size_t errlen)
{
	if (state[i] == PLACED)
		return 0;
	if (state[i] == VISITING)
		return model_fail(km, km->metrics[i].name, "the formula refers back to itself",
				  err, errlen);
	state[i] = VISITING;
	const struct refs *r = &links[i].expr;
	for (size_t k = 0; k < r->n; k++) {
		int slot = r->slot[k];
		int rc = is_metric(km, slot) ? place_metric(km, links, (size_t)slot - metric_base(km),
							    state, order, n, err, errlen)
					     : 0;
		if (rc)
			return rc;
	}
	state[i] = PLACED;
	order[(*n)++] = i;
	return 0;
}

/* Put metrics i and links i at position[i]; metric slots in links follow. */
static int permute(struct kb_model *km, struct links *links, const size_t *order)
{
	size_t nm = km->pub.n_metrics, base = metric_base(km);
	struct td_metric_def *metrics = malloc(nm * sizeof(*metrics));
	struct links *moved = malloc(nm * sizeof(*moved));
	size_t *position = malloc(nm * sizeof(*position));
	int rc = metrics && moved && position ? 0 : -ENOMEM;
	for (size_t i = 0; i < nm && !rc; i++) {
		metrics[i] = km->metrics[order[i]];
		moved[i] = links[order[i]];
		position[order[i]] = i;
	}
	for (size_t i = 0; i < nm && !rc; i++) {
		struct refs *r[2] = { &moved[i].expr, &moved[i].threshold };
		for (int k = 0; k < 2; k++)
			for (size_t j = 0; j < r[k]->n; j++)
				if (is_metric(km, r[k]->slot[j]))
					r[k]->slot[j] = (int)(base + position[r[k]->slot[j] - base]);
	}
	if (!rc) {
		memcpy(km->metrics, metrics, nm * sizeof(*metrics));
		memcpy(links, moved, nm * sizeof(*moved));
	}
	free(metrics);
	free(moved);
	free(position);
	return rc;
}

/* Reorder metrics[] so that each comes after the metrics its formula
 * names; the file order is kept where the formulas allow it. */
static int order_metrics(struct kb_model *km, struct links *links, char *err, size_t errlen)
{
	size_t nm = km->pub.n_metrics, n = 0;
	char *state = calloc(nm, 1);
	size_t *order = calloc(nm, sizeof(*order));
	int rc = state && order ? 0 : -ENOMEM;
	for (size_t i = 0; i < nm && !rc; i++)
		rc = place_metric(km, links, i, state, order, &n, err, errlen);
	if (!rc)
		rc = permute(km, links, order);
	free(state);
	free(order);
	return rc;
}

static int bind_formula(struct kb_model *km, const char *metric, struct td_expr *e, char *err,
			size_t errlen)
{
	char why[512];
	if (!e || td_expr_bind(e, slot_of, km, why, sizeof(why)) == 0)
		return 0;
	return model_fail(km, metric, why, err, errlen);
}

static int bind_model(struct kb_model *km, char *err, size_t errlen)
{
	for (size_t i = 0; i < km->pub.n_events; i++)
		km->events[i].slot = (int)i;
	for (size_t i = 0; i < km->pub.n_metrics; i++) {
		struct td_metric_def *m = &km->metrics[i];
		m->slot = (int)(metric_base(km) + i);
		int rc = bind_formula(km, m->name, m->compiled, err, errlen);
		if (!rc)
			rc = bind_formula(km, m->name, m->compiled_threshold, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- what each metric and each depth needs ----------------------------- */

/* The events of each metric's formula, directly or through the metrics it
 * names (which come earlier in metrics[]), as ascending index lists. */
static int link_events(struct kb_model *km, const struct links *links)
{
	size_t ne = km->pub.n_events, words = (ne + 63) / 64, nm = km->pub.n_metrics;
	size_t base = metric_base(km);
	uint64_t *bits = calloc(nm * words + 1, sizeof(*bits));
	if (!bits)
		return -ENOMEM;
	int rc = 0;
	for (size_t i = 0; i < nm && !rc; i++) {
		struct td_metric_def *m = &km->metrics[i];
		uint64_t *mine = bits + i * words;
		for (size_t k = 0; k < links[i].expr.n; k++) {
			size_t slot = (size_t)links[i].expr.slot[k];
			if (slot >= base)
				for (size_t w = 0; w < words; w++)
					mine[w] |= bits[(slot - base) * words + w];
			else if (slot < ne)
				mine[slot / 64] |= 1ull << (slot % 64);
		}
		int *list = malloc((ne ? ne : 1) * sizeof(*list));
		if (!list)
			rc = -ENOMEM;
		for (size_t e = 0; list && e < ne; e++)
			if (mine[e / 64] >> (e % 64) & 1)
				list[m->n_events++] = (int)e;
		m->events = list;
	}
	free(bits);
	return rc;
}

static unsigned own_use(const struct td_metric_def *m)
{
	if (m->kind == TD_METRIC_TREE)
		return TD_USED_BY_LEVEL(m->level);
	return m->kind == TD_METRIC_INFO ? TD_USED_BY_INFO : 0;
}

/* Pass a metric's use on to what r names; returns whether anything changed. */
static bool spread_use(struct kb_model *km, unsigned use, const struct refs *r)
{
	bool changed = false;
	for (size_t k = 0; k < r->n; k++) {
		size_t slot = (size_t)r->slot[k];
		unsigned *dst = slot >= metric_base(km) ? &km->metrics[slot - metric_base(km)].used_by
			      : slot < km->pub.n_events ? &km->events[slot].used_by
							: NULL;
		if (dst && (*dst | use) != *dst) {
			*dst |= use;
			changed = true;
		}
	}
	return changed;
}

/* Thresholds may name later metrics, so spread until nothing changes. */
static void link_use(struct kb_model *km, const struct links *links)
{
	for (size_t i = 0; i < km->pub.n_metrics; i++)
		km->metrics[i].used_by = own_use(&km->metrics[i]);
	bool changed = true;
	while (changed) {
		changed = false;
		for (size_t i = km->pub.n_metrics; i-- > 0;) {
			unsigned use = km->metrics[i].used_by;
			changed |= spread_use(km, use, &links[i].expr);
			changed |= spread_use(km, use, &links[i].threshold);
		}
	}
}

static int build_model(struct kb_model *km, char *err, size_t errlen)
{
	struct links *links = calloc(km->pub.n_metrics + 1, sizeof(*links));
	int rc = links ? check_model(km, err, errlen) : -ENOMEM;
	km->pub.n_slots = metric_base(km) + km->pub.n_metrics;
	if (!rc)
		rc = compile_model(km, err, errlen);
	if (!rc)
		rc = build_index(km, err, errlen);
	if (!rc)
		rc = resolve_model(km, links, err, errlen);
	if (!rc)
		rc = order_metrics(km, links, err, errlen);
	if (!rc) /* slots moved with the order */
		rc = build_index(km, err, errlen);
	if (!rc)
		rc = check_tree(km, err, errlen);
	if (!rc)
		rc = check_samples(km, err, errlen);
	if (!rc)
		rc = bind_model(km, err, errlen);
	if (!rc)
		rc = link_events(km, links);
	if (!rc)
		link_use(km, links);
	free_links(links, km->pub.n_metrics);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory while building the definitions");
	if (rc)
		return rc;
	struct td_model *m = &km->pub;
	for (size_t i = 0; i < m->n_events; i++)
		km->events[i].pmu = m->pmu;
	m->events = km->events;
	m->constants = km->constants;
	m->metrics = km->metrics;
	return 0;
}

static struct td_model *model_named(struct td_kb *kb, const char *name)
{
	for (size_t k = 0; k < kb->n_models; k++)
		if (strcmp(kb->models[k].pub.name, name) == 0)
			return &kb->models[k].pub;
	return NULL;
}

/* The models one names in another: ecore and alternate_for. */
static int link_models(struct td_kb *kb, char *err, size_t errlen)
{
	for (size_t i = 0; i < kb->n_models; i++) {
		struct kb_model *km = &kb->models[i];
		struct td_model *main_model;

		if (km->e_core_name && !(km->pub.e_core = model_named(kb, km->e_core_name)))
			return model_fail(km, NULL, "the ecore model is not defined", err, errlen);
		if (!km->alternate_for_name)
			continue;
		main_model = model_named(kb, km->alternate_for_name);
		if (!main_model || main_model->alternate_for || main_model->gp_alternate ||
		    main_model->vendor != km->pub.vendor)
			return model_fail(km, NULL, "alternate_for names no main model of the same vendor "
					  "without a variant", err, errlen);
		km->pub.alternate_for = main_model;
		main_model->gp_alternate = &km->pub;
	}
	return 0;
}

/* ---- public ------------------------------------------------------------ */

struct td_kb *td_kb_parse(const char *text, char *err, size_t errlen)
{
	struct td_kb *kb = calloc(1, sizeof(*kb));
	if (!kb || !(kb->text = strdup(text))) {
		free(kb);
		snprintf(err, errlen, "out of memory while reading the definitions");
		return NULL;
	}
	int rc = kb_parse_text(kb, kb->text, err, errlen);
	for (size_t i = 0; i < kb->n_models && !rc; i++)
		rc = build_model(&kb->models[i], err, errlen);
	if (!rc)
		rc = link_models(kb, err, errlen);
	if (rc) {
		td_kb_free(kb);
		return NULL;
	}
	return kb;
}

struct td_kb *td_kb_new(char *err, size_t errlen)
{
	return td_kb_parse(td_kb_defs, err, errlen);
}

static void free_model(struct kb_model *km)
{
	for (size_t i = 0; i < km->pub.n_metrics; i++) {
		struct td_metric_def *m = &km->metrics[i];
		td_expr_free(m->compiled);
		td_expr_free(m->compiled_threshold);
		free((char *)m->path);
		free((int *)m->events);
	}
	free(km->events);
	free(km->constants);
	free(km->metrics);
	free(km->rules);
	free(km->index);
}

void td_kb_free(struct td_kb *kb)
{
	if (!kb)
		return;
	for (size_t i = 0; i < kb->n_models; i++)
		free_model(&kb->models[i]);
	free(kb->models);
	free(kb->text);
	free(kb);
}

static pthread_once_t shared_once = PTHREAD_ONCE_INIT;
static struct td_kb *shared_kb;
static char shared_err[512];

static void load_shared(void)
{
	shared_kb = td_kb_new(shared_err, sizeof(shared_err));
}

const struct td_kb *td_kb_load(char *err, size_t errlen)
{
	pthread_once(&shared_once, load_shared);
	if (!shared_kb)
		snprintf(err, errlen, "%s", shared_err);
	return shared_kb;
}

size_t td_kb_model_count(const struct td_kb *kb)
{
	return kb->n_models;
}

const struct td_model *td_kb_model_at(const struct td_kb *kb, size_t i)
{
	return i < kb->n_models ? &kb->models[i].pub : NULL;
}

/* Case-insensitive, '-' and '_' equal: how users may spell model names. */
static int model_name_cmp(const char *a, const char *b)
{
	for (;; a++, b++) {
		int ca = tolower(*a == '_' ? '-' : (unsigned char)*a);
		int cb = tolower(*b == '_' ? '-' : (unsigned char)*b);
		if (ca != cb || !ca)
			return ca - cb;
	}
}

/* Whether name is one of the space-separated words of list, compared
 * with cmp over the word's length. */
static bool in_word_list(const char *list, const char *name,
			 int (*cmp)(const char *, const char *))
{
	char word[128];
	while (*list) {
		size_t n = strcspn(list, " ");
		if (n && n < sizeof(word)) {
			memcpy(word, list, n);
			word[n] = '\0';
			if (cmp(word, name) == 0)
				return true;
		}
		list += n + (list[n] == ' ');
	}
	return false;
}

const struct td_model *td_kb_model(const struct td_kb *kb, const char *name)
{
	for (size_t i = 0; i < kb->n_models; i++) {
		const struct td_model *m = &kb->models[i].pub;
		if (model_name_cmp(m->name, name) == 0 || model_name_cmp(m->long_name, name) == 0 ||
		    in_word_list(m->aliases, name, model_name_cmp))
			return m;
	}
	return NULL;
}

int td_model_slot(const struct td_model *m, const char *name)
{
	return slot_lookup(kb_model_of(m), name);
}

const struct td_metric_def *td_model_metric(const struct td_model *m, const char *name)
{
	for (size_t i = 0; i < m->n_metrics; i++)
		if (strcasecmp(m->metrics[i].name, name) == 0 ||
		    in_word_list(m->metrics[i].aliases, name, strcasecmp))
			return &m->metrics[i];
	return NULL;
}

const struct td_metric_def *td_model_node(const struct td_model *m, const char *node)
{
	const struct td_metric_def *found = td_model_metric(m, node);
	for (size_t i = 0; i < m->n_metrics && !found; i++)
		if (m->metrics[i].kind == TD_METRIC_TREE &&
		    (strcasecmp(m->metrics[i].path, node) == 0 ||
		     strcasecmp(m->metrics[i].node, node) == 0))
			found = &m->metrics[i];
	return found;
}

const char *td_model_sample_event(const struct td_model *m, const char *node, bool *precise)
{
	const struct td_metric_def *metric = td_model_node(m, node);
	if (!metric)
		return NULL;
	while (!metric->sample && metric->parent)
		metric = td_model_metric(m, metric->parent);
	if (precise)
		*precise = metric->sample && metric->sample_precise;
	return metric->sample ? metric->sample : TD_SAMPLE_CYCLES;
}

const struct td_event_def *td_model_event(const struct td_model *m, const char *name)
{
	int slot = td_model_slot(m, name);
	return slot >= 0 && (size_t)slot < m->n_events ? &m->events[slot] : NULL;
}

unsigned td_level_mask(int depth, bool with_info)
{
	unsigned mask = with_info ? TD_USED_BY_INFO : 0;
	for (int level = 1; level <= depth && level <= 4; level++)
		mask |= TD_USED_BY_LEVEL(level);
	return mask;
}

size_t td_model_events_for(const struct td_model *m, unsigned mask, int *out, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < m->n_events; i++) {
		if (!(m->events[i].used_by & mask))
			continue;
		if (n < cap)
			out[n] = (int)i;
		n++;
	}
	return n;
}
