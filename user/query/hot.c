// SPDX-License-Identifier: BSD-3-Clause
/*
 * Hot functions, folded stacks and their comparison, over the profiles
 * of stored runs. Each profile's frames are first mapped to functions
 * (or folded-stack names) once, so a stack costs one pass over its frame
 * indexes whatever its depth.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "engine.h"
#include "hot.h"
#include "name_index.h"

/* ---- which stacks a question covers ---- */

bool td_profile_stack_in_scope(const struct td_profile_stack *s, const char *thread)
{
	char want[TD_COMM_LEN], have[TD_COMM_LEN];
	char *end;
	unsigned long tid;

	if (!thread)
		return true;
	tid = strtoul(thread, &end, 10);
	if (*thread >= '0' && *thread <= '9' && !*end)
		return s->tid == tid;
	td_thread_group_name(thread, want, sizeof(want));
	td_thread_group_name(s->comm, have, sizeof(have));
	return strcmp(want, have) == 0;
}

/* The function key of a frame: its name and module, as hot functions tell them apart. */
static void function_key(const struct td_frame *f, char *buf, size_t len)
{
	char name[512];

	td_frame_name(f, name, sizeof(name));
	snprintf(buf, len, "%s%c%s", name, '\x1f', f->module ? f->module : "");
}

/* ---- hot functions ---- */

struct hot_builder {
	struct td_name_index names;
	struct td_hot_function *functions;
	size_t cap;
	double *line_weight;  /* per function: the self samples behind its chosen line */
	size_t weight_cap;
	uint64_t *seen;       /* per function: the serial of the last stack that counted it */
	size_t seen_cap;
	uint64_t serial;
	uint64_t frames, unresolved;
};

static int function_of(struct hot_builder *b, const struct td_frame *f, uint32_t *out)
{
	char key[600], name[512];
	bool added;
	int64_t at;

	function_key(f, key, sizeof(key));
	at = td_name_index_get(&b->names, key, &added);
	if (at < 0)
		return (int)at;
	if (added) {
		struct td_hot_function *grown = td_grow(b->functions, &b->cap, (size_t)at, sizeof(*grown));
		double *w = td_grow(b->line_weight, &b->weight_cap, (size_t)at, sizeof(*w));
		uint64_t *seen = td_grow(b->seen, &b->seen_cap, (size_t)at, sizeof(*seen));

		if (grown)
			b->functions = grown;
		if (w)
			b->line_weight = w;
		if (seen)
			b->seen = seen;
		if (!grown || !w || !seen)
			return -ENOMEM;
		td_frame_name(f, name, sizeof(name));
		b->functions[at] = (struct td_hot_function){ .name = strdup(name),
							      .module = f->module ? strdup(f->module) : NULL };
		b->line_weight[at] = -1;
		b->seen[at] = 0;
		if (!b->functions[at].name || (f->module && !b->functions[at].module))
			return -ENOMEM;
	}
	*out = (uint32_t)at;
	return 0;
}

/* One profile's stacks in scope into the builder; *samples adds what they hold. */
static int add_profile(struct hot_builder *b, const struct td_profile *p, const char *thread, uint64_t *samples)
{
	uint32_t *fn = malloc((p->nr_frames ? p->nr_frames : 1) * sizeof(*fn));
	double *leaf = calloc(p->nr_frames ? p->nr_frames : 1, sizeof(*leaf));
	int ret = fn && leaf ? 0 : -ENOMEM;

	for (size_t i = 0; !ret && i < p->nr_frames; i++)
		ret = function_of(b, &p->frames[i], &fn[i]);
	for (size_t s = 0; !ret && s < p->nr_stacks; s++) {
		const struct td_profile_stack *st = &p->stacks[s];

		if (!td_profile_stack_in_scope(st, thread) || st->nr_frames == 0)
			continue;
		*samples += st->count;
		b->serial++;
		for (uint32_t f = 0; f < st->nr_frames; f++) {
			uint32_t at = fn[st->frames[f]];

			b->frames += st->count;
			b->unresolved += p->frames[st->frames[f]].function ? 0 : st->count;
			if (b->seen[at] != b->serial) {
				b->seen[at] = b->serial;
				b->functions[at].total_count += st->count;
			}
		}
		b->functions[fn[st->frames[st->nr_frames - 1]]].self_count += st->count;
		leaf[st->frames[st->nr_frames - 1]] += (double)st->count;
	}
	/* Each function's line: its frame with the most self samples, else any frame with a line. */
	for (size_t i = 0; !ret && i < p->nr_frames; i++) {
		struct td_hot_function *h = &b->functions[fn[i]];

		if (!p->frames[i].file || leaf[i] <= b->line_weight[fn[i]])
			continue;
		free(h->file);
		if (!(h->file = strdup(p->frames[i].file)))
			ret = -ENOMEM;
		h->line = p->frames[i].line;
		b->line_weight[fn[i]] = leaf[i];
	}
	free(fn);
	free(leaf);
	return ret;
}

static int by_heat(const void *a, const void *b)
{
	const struct td_hot_function *x = a, *y = b;

	if (x->self_count != y->self_count)
		return x->self_count > y->self_count ? -1 : 1;
	if (x->total_count != y->total_count)
		return x->total_count > y->total_count ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void release_function(struct td_hot_function *h)
{
	free(h->name);
	free(h->module);
	free(h->file);
}

void td_hot_free(struct td_hot *hot)
{
	if (!hot)
		return;
	for (size_t i = 0; i < hot->nr_functions; i++)
		release_function(&hot->functions[i]);
	free(hot->functions);
	free(hot->event);
	free(hot->unit);
	free(hot);
}

/* The event and unit the profiles share, or "mixed". */
static int name_events(const struct td_profile *const *profiles, size_t n, char **event, char **unit)
{
	bool same = true;

	for (size_t i = 1; i < n; i++)
		same = same && strcmp(profiles[i]->event, profiles[0]->event) == 0 &&
		       strcmp(profiles[i]->unit, profiles[0]->unit) == 0;
	*event = strdup(n && same ? profiles[0]->event : "mixed");
	*unit = strdup(n && same ? profiles[0]->unit : "samples");
	return *event && *unit ? 0 : -ENOMEM;
}

int td_profiles_hot(const struct td_profile *const *profiles, size_t n, const char *thread, size_t top_n,
		    struct td_hot **out, char *err, size_t errlen)
{
	struct hot_builder b = { 0 };
	struct td_hot *hot = calloc(1, sizeof(*hot));
	int ret = hot ? 0 : -ENOMEM;

	*out = NULL;
	for (size_t i = 0; !ret && i < n; i++) {
		ret = add_profile(&b, profiles[i], thread, &hot->samples);
		hot->lost_samples += profiles[i]->lost_samples;
	}
	if (!ret)
		ret = name_events(profiles, n, &hot->event, &hot->unit);
	if (!ret) {
		hot->nr_runs = n;
		hot->functions = b.functions;
		hot->nr_functions = b.names.count;
		b.functions = NULL;
		qsort(hot->functions, hot->nr_functions, sizeof(*hot->functions), by_heat);
		for (size_t i = 0; i < hot->nr_functions; i++) {
			struct td_hot_function *h = &hot->functions[i];

			h->self_share = hot->samples ? (double)h->self_count / (double)hot->samples : NAN;
			h->total_share = hot->samples ? (double)h->total_count / (double)hot->samples : NAN;
		}
		/* Functions only of threads out of scope have no samples: they go. */
		while (hot->nr_functions && hot->functions[hot->nr_functions - 1].total_count == 0)
			release_function(&hot->functions[--hot->nr_functions]);
		for (size_t i = top_n; top_n && i < hot->nr_functions; i++)
			release_function(&hot->functions[i]);
		if (top_n && hot->nr_functions > top_n)
			hot->nr_functions = top_n;
		hot->unresolved_share = b.frames ? (double)b.unresolved / (double)b.frames : 0;
	}
	for (size_t i = 0; b.functions && i < b.names.count; i++)
		release_function(&b.functions[i]);
	free(b.functions);
	free(b.line_weight);
	free(b.seen);
	td_name_index_free(&b.names);
	if (ret) {
		snprintf(err, errlen, "out of memory ranking hot functions");
		td_hot_free(hot);
		return ret;
	}
	if (!hot->samples) {
		snprintf(err, errlen, "%s", thread ? "the matching runs have no samples of that thread; "
			 "drop --thread, or name one that ran (topdown query --threads lists them)" :
			 "the matching runs' profiles hold no samples; collect longer or raise --sample-freq");
		td_hot_free(hot);
		return TD_QUERY_NOTHING;
	}
	*out = hot;
	return 0;
}

/* ---- reading the profiles of the selected runs ---- */

void td_profile_list_release(struct td_profile_list *l)
{
	for (size_t i = 0; i < l->count; i++)
		td_run_free(l->runs[i]);
	free(l->runs);
	free(l->profiles);
	memset(l, 0, sizeof(*l));
}

int td_read_profiles(struct td_store *store, const struct td_run_filter *filter, struct td_profile_list *l,
		     char *err, size_t errlen)
{
	struct td_run_summary *runs = NULL;
	size_t count = 0;
	int ret = td_store_list_runs(store, filter, &runs, &count, err, errlen);

	memset(l, 0, sizeof(*l));
	if (!ret && count) {
		l->runs = calloc(count, sizeof(*l->runs));
		l->profiles = calloc(count, sizeof(*l->profiles));
		if (!l->runs || !l->profiles) {
			snprintf(err, errlen, "out of memory reading profiles");
			ret = -ENOMEM;
		}
	}
	for (size_t i = 0; !ret && i < count; i++) {
		struct td_run *run = NULL;

		ret = td_store_read_run(store, runs[i].id, &run, err, errlen);
		if (!ret && run->profile) {
			l->runs[l->count] = run;
			l->profiles[l->count++] = run->profile;
		} else {
			td_run_free(run);
		}
	}
	td_run_summaries_free(runs, count);
	if (!ret && l->count == 0) {
		snprintf(err, errlen, "%zu run%s matched, none with a profile; collect with --sample to record "
			 "where the samples land", count, count == 1 ? "" : "s");
		ret = TD_QUERY_NOTHING;
	}
	if (ret)
		td_profile_list_release(l);
	return ret;
}

int td_query_hot(struct td_store *store, const struct td_query *q, struct td_hot **out, char *err, size_t errlen)
{
	struct td_profile_list l;
	int ret = td_read_profiles(store, &q->runs, &l, err, errlen);

	*out = NULL;
	if (ret)
		return ret;
	ret = td_profiles_hot(l.profiles, l.count, q->thread, q->top_n, out, err, errlen);
	td_profile_list_release(&l);
	return ret;
}

/* ---- folded stacks ---- */

struct folded_builder {
	struct td_name_index stacks;
	struct td_folded *items;
	size_t cap;
	char *line;
	size_t line_cap;
};

/* Appends text to the line being built, growing it. */
static int line_add(struct folded_builder *b, size_t *len, const char *text)
{
	size_t n = strlen(text);

	if (*len + n + 2 > b->line_cap) {
		size_t cap = (*len + n + 2) * 2;
		char *grown = realloc(b->line, cap);

		if (!grown)
			return -ENOMEM;
		b->line = grown;
		b->line_cap = cap;
	}
	memcpy(b->line + *len, text, n + 1);
	*len += n;
	return 0;
}

static int fold_profile(struct folded_builder *b, const struct td_profile *p, const char *thread, bool base,
			uint64_t *samples)
{
	int ret = 0;

	for (size_t s = 0; !ret && s < p->nr_stacks; s++) {
		const struct td_profile_stack *st = &p->stacks[s];
		char group[TD_COMM_LEN], name[512];
		size_t len = 0;
		bool added;
		int64_t at;

		if (!td_profile_stack_in_scope(st, thread))
			continue;
		*samples += st->count;
		td_thread_group_name(st->comm, group, sizeof(group));
		ret = line_add(b, &len, group[0] ? group : "[unnamed]");
		if (!ret && st->truncated) /* its outermost frames are missing: the marker stands for them */
			ret = line_add(b, &len, ";[truncated]");
		for (uint32_t f = 0; !ret && f < st->nr_frames; f++) {
			/* ';' separates frames: a name holding one would split in two */
			td_frame_name(&p->frames[st->frames[f]], name, sizeof(name));
			for (char *c = name; *c; c++)
				*c = *c == ';' ? ':' : *c;
			ret = line_add(b, &len, ";");
			if (!ret)
				ret = line_add(b, &len, name);
		}
		at = ret ? ret : td_name_index_get(&b->stacks, b->line, &added);
		if (at < 0) {
			ret = (int)at;
			break;
		}
		if (added) {
			struct td_folded *grown = td_grow(b->items, &b->cap, (size_t)at, sizeof(*grown));

			if (!grown)
				return -ENOMEM;
			b->items = grown;
			b->items[at] = (struct td_folded){ 0 };
		}
		if (base)
			b->items[at].base_count += st->count;
		else
			b->items[at].count += st->count;
	}
	return ret;
}

static int by_stack_text(const void *a, const void *b)
{
	return strcmp(((const struct td_folded *)a)->stack, ((const struct td_folded *)b)->stack);
}

void td_folded_set_free(struct td_folded_set *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->nr_stacks; i++)
		free(set->stacks[i].stack);
	free(set->stacks);
	free(set->event);
	free(set->unit);
	free(set);
}

int td_query_folded(struct td_store *store, const struct td_query *q, const struct td_query *base,
		    struct td_folded_set **out, char *err, size_t errlen)
{
	struct folded_builder b = { 0 };
	struct td_profile_list now = { 0 }, before = { 0 };
	struct td_folded_set *set = calloc(1, sizeof(*set));
	int ret = set ? td_read_profiles(store, &q->runs, &now, err, errlen) : -ENOMEM;

	*out = NULL;
	if (!ret && base)
		ret = td_read_profiles(store, &base->runs, &before, err, errlen);
	for (size_t i = 0; !ret && i < now.count; i++)
		ret = fold_profile(&b, now.profiles[i], q->thread, false, &set->samples);
	for (size_t i = 0; !ret && i < before.count; i++)
		ret = fold_profile(&b, before.profiles[i], base->thread, true, &set->base_samples);
	if (!ret)
		ret = name_events(now.profiles, now.count, &set->event, &set->unit);
	if (!ret) {
		set->nr_runs = now.count;
		set->nr_base_runs = before.count;
		set->nr_stacks = b.stacks.count;
		set->stacks = b.items;
		for (size_t i = 0; i < b.stacks.count; i++) { /* the index's keys become the stacks' text */
			set->stacks[i].stack = b.stacks.keys[i];
			b.stacks.keys[i] = NULL;
		}
		b.stacks.count = 0;
		b.items = NULL;
		qsort(set->stacks, set->nr_stacks, sizeof(*set->stacks), by_stack_text);
	}
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory folding stacks");
	free(b.items);
	free(b.line);
	td_name_index_free(&b.stacks);
	td_profile_list_release(&now);
	td_profile_list_release(&before);
	if (!ret && !set->samples) {
		snprintf(err, errlen, "the matching runs have no samples%s; drop --thread or widen the selection",
			 q->thread ? " of that thread" : "");
		ret = TD_QUERY_NOTHING;
	}
	if (ret) {
		td_folded_set_free(set);
		return ret;
	}
	*out = set;
	return 0;
}

/* ---- comparing two sets ---- */

void td_hot_comparison_free(struct td_hot_comparison *c)
{
	if (!c)
		return;
	td_hot_free(c->base);
	td_hot_free(c->current);
	for (size_t i = 0; i < c->nr_changes; i++) {
		free(c->changes[i].name);
		free(c->changes[i].module);
	}
	free(c->changes);
	free(c);
}

static int by_delta(const void *a, const void *b)
{
	const struct td_hot_change *x = a, *y = b;

	if (x->delta != y->delta)
		return x->delta > y->delta ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Every function of either side, matched by name and module. */
static int pair_functions(struct td_hot_comparison *c)
{
	struct td_name_index ix = { 0 };
	const struct td_hot *sides[] = { c->base, c->current };
	size_t cap = 0;
	int ret = 0;

	for (int side = 0; side < 2 && !ret; side++) {
		for (size_t i = 0; i < sides[side]->nr_functions && !ret; i++) {
			const struct td_hot_function *h = &sides[side]->functions[i];
			char key[600];
			bool added;
			int64_t at;

			snprintf(key, sizeof(key), "%s%c%s", h->name, '\x1f', h->module ? h->module : "");
			at = td_name_index_get(&ix, key, &added);
			if (at < 0) {
				ret = (int)at;
				break;
			}
			if (added) {
				struct td_hot_change *grown = td_grow(c->changes, &cap, (size_t)at, sizeof(*grown));

				if (!grown) {
					ret = -ENOMEM;
					break;
				}
				c->changes = grown;
				c->changes[at] = (struct td_hot_change){ .name = strdup(h->name),
									 .module = h->module ? strdup(h->module) : NULL };
				c->nr_changes++;
				if (!c->changes[at].name)
					ret = -ENOMEM;
			}
			if (side == 0)
				c->changes[at].base_self_share = h->self_share;
			else
				c->changes[at].self_share = h->self_share;
		}
	}
	for (size_t i = 0; i < c->nr_changes; i++)
		c->changes[i].delta = c->changes[i].self_share - c->changes[i].base_self_share;
	if (!ret)
		qsort(c->changes, c->nr_changes, sizeof(*c->changes), by_delta);
	td_name_index_free(&ix);
	return ret;
}

int td_compare_hot(struct td_store *store, const struct td_query *base, const struct td_query *current,
		   struct td_hot_comparison **out, char *err, size_t errlen)
{
	struct td_hot_comparison *c = calloc(1, sizeof(*c));
	struct td_query all_base = *base, all_current = *current;
	int ret;

	*out = NULL;
	if (!c) {
		snprintf(err, errlen, "out of memory comparing hot functions");
		return -ENOMEM;
	}
	/* Every function on both sides, so one that vanished still shows. */
	all_base.top_n = all_current.top_n = 0;
	ret = td_query_hot(store, &all_base, &c->base, err, errlen);
	if (!ret)
		ret = td_query_hot(store, &all_current, &c->current, err, errlen);
	if (!ret && (ret = pair_functions(c)))
		snprintf(err, errlen, "out of memory comparing hot functions");
	if (ret) {
		td_hot_comparison_free(c);
		return ret;
	}
	*out = c;
	return 0;
}
