// SPDX-License-Identifier: BSD-3-Clause
/*
 * The profile: frames and stacks deduplicated as they are added, with two
 * open-addressing hash tables of indexes (frames; stacks per thread). A
 * table holds index + 1, 0 marking a free slot, and doubles at half full.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "profile.h"

struct index_table {
	uint32_t *slots; /* item index + 1; 0: free */
	size_t cap;      /* a power of two */
	size_t used;
};

struct profile_index {
	struct index_table frames;
	struct index_table stacks;
};

/* FNV-1a, fed piece by piece. */
#define FNV_OFFSET 14695981039346656037ULL
static uint64_t fnv(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
	return s ? fnv(h, s, strlen(s) + 1) : fnv(h, "", 1) * 31;
}

static uint64_t frame_hash(const struct td_frame *f)
{
	uint64_t h = FNV_OFFSET;

	h = fnv_str(h, f->function);
	h = fnv_str(h, f->module);
	h = fnv_str(h, f->file);
	h = fnv(h, &f->offset, sizeof(f->offset));
	h = fnv(h, &f->line, sizeof(f->line));
	return fnv(h, &f->kernel, sizeof(f->kernel));
}

static uint64_t stack_hash(const struct td_profile_stack *s)
{
	uint64_t h = FNV_OFFSET;

	h = fnv(h, &s->tid, sizeof(s->tid));
	h = fnv(h, &s->pid, sizeof(s->pid));
	h = fnv(h, s->comm, strnlen(s->comm, sizeof(s->comm)));
	h = fnv(h, &s->truncated, sizeof(s->truncated));
	return fnv(h, s->frames, s->nr_frames * sizeof(*s->frames));
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same_frame(const struct td_frame *a, const struct td_frame *b)
{
	return a->offset == b->offset && a->line == b->line && a->kernel == b->kernel &&
	       same_str(a->function, b->function) && same_str(a->module, b->module) &&
	       same_str(a->file, b->file);
}

static bool same_stack(const struct td_profile_stack *a, const struct td_profile_stack *b)
{
	return a->tid == b->tid && a->pid == b->pid && a->truncated == b->truncated &&
	       strncmp(a->comm, b->comm, sizeof(a->comm)) == 0 && a->nr_frames == b->nr_frames &&
	       memcmp(a->frames, b->frames, a->nr_frames * sizeof(*a->frames)) == 0;
}

/* The slot where the item of hash h is, or the free slot where it would go. */
typedef bool (*item_matches)(const struct td_profile *profile, uint32_t index, const void *item);

static uint32_t *table_find(struct index_table *t, uint64_t h, const struct td_profile *profile,
			    item_matches matches, const void *item)
{
	size_t mask = t->cap - 1;

	for (size_t i = h & mask;; i = (i + 1) & mask)
		if (!t->slots[i] || matches(profile, t->slots[i] - 1, item))
			return &t->slots[i];
}

static bool frame_matches(const struct td_profile *profile, uint32_t index, const void *item)
{
	return same_frame(&profile->frames[index], item);
}

static bool stack_matches(const struct td_profile *profile, uint32_t index, const void *item)
{
	return same_stack(&profile->stacks[index], item);
}

/* Makes room for one more entry, rehashing every item (count of them). */
static int table_reserve(struct index_table *t, const struct td_profile *profile, size_t count,
			 uint64_t (*hash)(const void *item, const struct td_profile *profile, uint32_t index))
{
	size_t cap;
	uint32_t *slots;

	if (t->slots && (t->used + 1) * 2 <= t->cap)
		return 0;
	cap = t->cap ? t->cap * 2 : 64;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (uint32_t i = 0; i < count; i++) {
		size_t j = hash(NULL, profile, i) & (cap - 1);

		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

static uint64_t frame_hash_at(const void *item, const struct td_profile *profile, uint32_t index)
{
	return frame_hash(item ? item : &profile->frames[index]);
}

static uint64_t stack_hash_at(const void *item, const struct td_profile *profile, uint32_t index)
{
	return stack_hash(item ? item : &profile->stacks[index]);
}

struct td_profile *td_profile_new(void)
{
	struct td_profile *profile = calloc(1, sizeof(*profile));

	if (!profile)
		return NULL;
	profile->index = calloc(1, sizeof(struct profile_index));
	if (!profile->index) {
		free(profile);
		return NULL;
	}
	return profile;
}

void td_frame_release(struct td_frame *frame)
{
	free(frame->function);
	free(frame->module);
	free(frame->file);
	frame->function = frame->module = frame->file = NULL;
}

void td_profile_free(struct td_profile *profile)
{
	struct profile_index *index;

	if (!profile)
		return;
	index = profile->index;
	if (index) {
		free(index->frames.slots);
		free(index->stacks.slots);
		free(index);
	}
	for (size_t i = 0; i < profile->nr_frames; i++)
		td_frame_release(&profile->frames[i]);
	free(profile->frames);
	for (size_t i = 0; i < profile->nr_stacks; i++)
		free(profile->stacks[i].frames);
	free(profile->stacks);
	free(profile->event);
	free(profile->unit);
	free(profile);
}

/* strdup() that keeps NULL as NULL; false only when a copy failed. */
static bool dup_or_null(char **dst, const char *src)
{
	*dst = src ? strdup(src) : NULL;
	return !src || *dst;
}

int64_t td_profile_intern_frame(struct td_profile *profile, const struct td_frame *frame)
{
	struct profile_index *index = profile->index;
	struct td_frame *copy, *grown;
	uint32_t *slot;

	if (table_reserve(&index->frames, profile, profile->nr_frames, frame_hash_at) < 0)
		return -ENOMEM;
	slot = table_find(&index->frames, frame_hash(frame), profile, frame_matches, frame);
	if (*slot)
		return *slot - 1;
	grown = td_grow(profile->frames, &profile->cap_frames, profile->nr_frames, sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	profile->frames = grown;
	copy = &profile->frames[profile->nr_frames];
	*copy = *frame;
	if (!dup_or_null(&copy->function, frame->function) || !dup_or_null(&copy->module, frame->module) ||
	    !dup_or_null(&copy->file, frame->file)) {
		td_frame_release(copy);
		return -ENOMEM;
	}
	*slot = (uint32_t)++profile->nr_frames;
	index->frames.used++;
	return *slot - 1;
}

int td_profile_add_stack(struct td_profile *profile, const struct td_profile_stack *stack)
{
	struct profile_index *index = profile->index;
	struct td_profile_stack *copy, *grown;
	uint32_t *slot;

	if (table_reserve(&index->stacks, profile, profile->nr_stacks, stack_hash_at) < 0)
		return -ENOMEM;
	slot = table_find(&index->stacks, stack_hash(stack), profile, stack_matches, stack);
	if (*slot) {
		profile->stacks[*slot - 1].count += stack->count;
		return 0;
	}
	grown = td_grow(profile->stacks, &profile->cap_stacks, profile->nr_stacks, sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	profile->stacks = grown;
	copy = &profile->stacks[profile->nr_stacks];
	*copy = *stack;
	copy->frames = malloc((stack->nr_frames ? stack->nr_frames : 1) * sizeof(*copy->frames));
	if (!copy->frames)
		return -ENOMEM;
	memcpy(copy->frames, stack->frames, stack->nr_frames * sizeof(*copy->frames));
	*slot = (uint32_t)++profile->nr_stacks;
	index->stacks.used++;
	return 0;
}

void td_frame_name(const struct td_frame *frame, char *buf, size_t len)
{
	if (frame->function)
		snprintf(buf, len, "%s", frame->function);
	else if (frame->module)
		snprintf(buf, len, "%s+0x%" PRIx64, frame->module, frame->offset);
	else
		snprintf(buf, len, "[unknown]");
}

/* Whether a stack is the marker of a sample that lost its stack. */
static bool is_lost_marker(const struct td_profile *p, const struct td_profile_stack *s)
{
	const char *name = s->nr_frames == 1 ? p->frames[s->frames[0]].function : NULL;

	return name && strcmp(name, TD_FRAME_STACK_LOST) == 0;
}

struct td_profile *td_profile_subset(const struct td_profile *src, uint32_t pid)
{
	struct td_profile *p = td_profile_new();
	int64_t *remap = calloc(src->nr_frames + 1, sizeof(*remap));
	uint32_t *frames = NULL;
	size_t cap = 0;
	int ret = p && remap ? 0 : -ENOMEM;

	if (!ret && (!dup_or_null(&p->event, src->event) || !dup_or_null(&p->unit, src->unit)))
		ret = -ENOMEM;
	if (!ret) {
		p->period = src->period;
		p->frequency_hz = src->frequency_hz;
	}
	for (size_t i = 0; i < src->nr_frames; i++)
		remap[i] = -1; /* not interned yet */
	for (size_t s = 0; !ret && s < src->nr_stacks; s++) {
		const struct td_profile_stack *st = &src->stacks[s];
		struct td_profile_stack copy = *st;

		if (pid && st->pid != pid)
			continue;
		if (st->nr_frames > cap) {
			uint32_t *grown = realloc(frames, st->nr_frames * sizeof(*frames));

			if (!grown) {
				ret = -ENOMEM;
				break;
			}
			frames = grown;
			cap = st->nr_frames;
		}
		for (uint32_t f = 0; !ret && f < st->nr_frames; f++) {
			uint32_t from = st->frames[f];

			if (remap[from] < 0)
				remap[from] = td_profile_intern_frame(p, &src->frames[from]);
			if (remap[from] < 0)
				ret = -ENOMEM;
			else
				frames[f] = (uint32_t)remap[from];
		}
		copy.frames = frames;
		if (!ret)
			ret = td_profile_add_stack(p, &copy);
		p->samples += st->count;
		p->lost_samples += is_lost_marker(src, st) ? st->count : 0;
	}
	free(frames);
	free(remap);
	if (ret) {
		td_profile_free(p);
		return NULL;
	}
	return p;
}
