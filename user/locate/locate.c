// SPDX-License-Identifier: BSD-3-Clause
/*
 * Raw stacks into the run's profile. The kernel gives instruction
 * pointers innermost first; a profile keeps frames outermost first, so
 * each side is walked backwards, user side first: a sample taken in the
 * kernel has the system call (or the interrupted user code) below it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "locate.h"

/* Inlined functions a single address may expand into, plus the function itself. */
#define MAX_INLINE_DEPTH 16
#define MAX_FRAMES (2 * TD_MAX_STACK_DEPTH * MAX_INLINE_DEPTH + 1)

struct td_locate {
	struct td_symbolizer_opts opts;
	struct td_profile *profile;
	struct td_symbolizer *symbolizer;
	uint32_t last_pid;  /* raw stacks come grouped by pid: its maps are read once per drain */
	bool have_last_pid;
	struct td_locate_summary summary;
	uint32_t frames[MAX_FRAMES];
};

struct td_locate *td_locate_new(const struct td_symbolizer_opts *opts, char *err, size_t errlen)
{
	struct td_locate *locate = calloc(1, sizeof(*locate));

	if (!locate) {
		snprintf(err, errlen, "out of memory preparing to sample");
		return NULL;
	}
	locate->opts = opts ? *opts : (struct td_symbolizer_opts){ 0 };
	locate->symbolizer = td_symbolizer_new(&locate->opts, err, errlen);
	locate->profile = locate->symbolizer ? td_profile_new() : NULL;
	if (!locate->profile) {
		if (locate->symbolizer)
			snprintf(err, errlen, "out of memory preparing to sample");
		td_locate_free(locate);
		return NULL;
	}
	return locate;
}

void td_locate_free(struct td_locate *locate)
{
	if (!locate)
		return;
	td_profile_free(locate->profile);
	td_symbolizer_free(locate->symbolizer);
	free(locate);
}

struct td_profile *td_locate_take_profile(struct td_locate *l, const char *event, uint64_t frequency_hz,
					  uint64_t period, uint64_t lost_samples)
{
	struct td_profile *p = l->profile, *fresh = td_profile_new();
	struct td_symbolizer *symbolizer = td_symbolizer_new(&l->opts, (char[8]){ 0 }, 8);
	size_t unit_len = strlen(event) + sizeof(" samples");

	if (!fresh || !symbolizer) {
		td_profile_free(fresh);
		td_symbolizer_free(symbolizer);
		return NULL;
	}
	p->event = strdup(event);
	p->unit = malloc(unit_len);
	if (p->unit)
		snprintf(p->unit, unit_len, "%s samples", event);
	p->frequency_hz = period ? 0 : frequency_hz;
	p->period = period;
	p->samples = l->summary.samples + lost_samples;
	p->lost_samples = l->summary.lost_stack_samples + lost_samples;
	if (!p->event || !p->unit) {
		td_profile_free(fresh);
		td_symbolizer_free(symbolizer);
		return NULL;
	}
	/* A new symbolizer drops the processes (and their open files) read so far. */
	td_symbolizer_free(l->symbolizer);
	l->symbolizer = symbolizer;
	l->profile = fresh;
	l->have_last_pid = false;
	memset(&l->summary, 0, sizeof(l->summary));
	return p;
}

/* Interns frames[0..n) into the stack being built, then releases them. */
static int push_frames(struct td_locate *l, struct td_frame *frames, int n, uint32_t *depth, uint64_t count)
{
	int ret = 0;

	for (int i = 0; i < n; i++) {
		int64_t index = ret ? -1 : td_profile_intern_frame(l->profile, &frames[i]);

		if (index < 0 && !ret)
			ret = (int)index;
		if (!ret && *depth < MAX_FRAMES) {
			l->frames[(*depth)++] = (uint32_t)index;
			l->summary.frames += count;
			l->summary.unresolved_frames += frames[i].function ? 0 : count;
		}
		td_frame_release(&frames[i]);
	}
	return ret;
}

/* A stand-in frame for a stack the kernel did not keep, named so it reads as what happened. */
static int push_marker(struct td_locate *l, const char *name, uint32_t *depth)
{
	struct td_frame marker = { .function = (char *)name };
	int64_t index = td_profile_intern_frame(l->profile, &marker);

	if (index < 0)
		return (int)index;
	l->frames[(*depth)++] = (uint32_t)index;
	return 0;
}

int td_locate_raw_stack(void *ctx, const struct td_raw_stack *raw)
{
	struct td_locate *l = ctx;
	struct td_frame frames[MAX_INLINE_DEPTH];
	struct td_profile_stack stack = { .tid = raw->tid, .pid = raw->pid, .count = raw->count,
					  .truncated = raw->truncated };
	uint32_t depth = 0;
	char err[256];
	int ret = 0, n;

	if (!l->have_last_pid || l->last_pid != raw->pid) {
		/* A process gone already keeps what an earlier drain read of it. */
		td_symbolizer_add_process(l->symbolizer, (pid_t)raw->pid, err, sizeof(err));
		l->last_pid = raw->pid;
		l->have_last_pid = true;
	}
	memcpy(stack.comm, raw->comm, sizeof(stack.comm));
	for (uint32_t i = raw->nr_user; i-- > 0 && !ret;) {
		n = td_symbolize_user(l->symbolizer, (pid_t)raw->pid, raw->user_ips[i], i > 0, frames,
				      MAX_INLINE_DEPTH);
		ret = n < 0 ? n : push_frames(l, frames, n, &depth, raw->count);
	}
	for (uint32_t i = raw->nr_kernel; i-- > 0 && !ret;) {
		n = td_symbolize_kernel(l->symbolizer, raw->kernel_ips[i], &frames[0]);
		ret = n < 0 ? n : push_frames(l, frames, 1, &depth, raw->count);
	}
	if (!ret && raw->stack_lost)
		ret = push_marker(l, TD_FRAME_STACK_LOST, &depth);
	else if (!ret && depth == 0)
		ret = push_marker(l, TD_FRAME_NO_STACK, &depth);
	if (ret)
		return ret;
	l->summary.samples += raw->count;
	l->summary.user_samples += raw->nr_user ? raw->count : 0;
	l->summary.shallow_user_samples += raw->nr_user == 1 ? raw->count : 0;
	l->summary.truncated_samples += raw->truncated ? raw->count : 0;
	l->summary.lost_stack_samples += raw->stack_lost ? raw->count : 0;
	stack.nr_frames = depth;
	stack.frames = l->frames;
	return td_profile_add_stack(l->profile, &stack);
}

void td_locate_summarize(const struct td_locate *locate, struct td_locate_summary *summary)
{
	*summary = locate->summary;
}

const char *td_locate_frame_pointer_hint(const struct td_locate_summary *s)
{
	/* Half the user samples one frame deep: the unwinder found no frame chain to follow. */
	if (s->user_samples >= 20 && s->shallow_user_samples * 2 >= s->user_samples)
		return "most user stacks are one frame deep: build the target with -fno-omit-frame-pointer "
		       "(and -mno-omit-leaf-frame-pointer) to see its callers";
	return NULL;
}
