// SPDX-License-Identifier: BSD-3-Clause
/*
 * Raw stacks into the run's profile. The kernel gives instruction
 * pointers innermost first; a profile keeps frames outermost first, so
 * each side is walked backwards, user side first: a sample taken in the
 * kernel has the system call (or the interrupted user code) below it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "locate.h"

/* Inlined functions a single address may expand into, plus the function itself. */
#define MAX_INLINE_DEPTH 16
#define MAX_FRAMES (2 * TD_MAX_STACK_DEPTH * MAX_INLINE_DEPTH + 1)

struct td_locate {
	struct td_profile *profile;
	struct td_symbolizer *symbolizer;
	uint32_t last_pid;  /* raw stacks come grouped by pid: its maps are read once per drain */
	bool have_last_pid;
	struct td_locate_summary summary;
	uint32_t frames[MAX_FRAMES];
};

struct td_locate *td_locate_new(struct td_profile *profile, struct td_symbolizer *symbolizer)
{
	struct td_locate *locate = calloc(1, sizeof(*locate));

	if (!locate)
		return NULL;
	locate->profile = profile;
	locate->symbolizer = symbolizer;
	return locate;
}

void td_locate_free(struct td_locate *locate)
{
	free(locate);
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
		ret = push_marker(l, "[stack lost]", &depth);
	else if (!ret && depth == 0)
		ret = push_marker(l, "[no stack]", &depth);
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
