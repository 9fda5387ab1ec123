/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The profile: where a run's sampled events happened (locate). The
 * collector hands over raw stacks (addresses, per thread, with counts),
 * the symbolizer turns addresses into frames, and the run keeps the
 * result: frames deduplicated in one table, each stack a list of frame
 * indexes with its thread and count. Storage writes it as given; query
 * and the renderers read it back in the same shape.
 *
 * Ownership: td_profile_new() allocates, td_profile_free() releases every
 * frame, stack and string the profile points to.
 */
#ifndef TOPDOWN_PROFILE_H
#define TOPDOWN_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TD_PROFILE_COMM_LEN 16
/* Frames the kernel keeps per stack, user and kernel side each
 * (PERF_MAX_STACK_DEPTH is 127): deeper stacks lose their roots. */
#define TD_MAX_STACK_DEPTH 127

/* The one frame of a sample whose stack the kernel did not keep, or that had none. */
#define TD_FRAME_STACK_LOST "[stack lost]"
#define TD_FRAME_NO_STACK "[no stack]"

/* One code location. An unresolved one keeps what is known: the module
 * and the offset into it, or nothing at all ("[unknown]"). */
struct td_frame {
	char *function;  /* symbol, with inlined functions as frames of their own; NULL: unresolved */
	char *module;    /* file name of the mapping, "[kernel]" for the kernel; NULL: no mapping */
	uint64_t offset; /* address relative to the module's load address */
	char *file;      /* source file; NULL without line information */
	uint32_t line;   /* 0 without line information */
	bool kernel;
};

/* One distinct stack of one thread, with the samples that landed on it. */
struct td_profile_stack {
	uint32_t tid;
	uint32_t pid;
	char comm[TD_PROFILE_COMM_LEN]; /* the thread's name, as in the run's thread rows */
	uint64_t count;                 /* samples */
	bool truncated;                 /* deeper than TD_MAX_STACK_DEPTH: the outermost frames are missing */
	uint32_t nr_frames;
	uint32_t *frames;               /* indexes into td_profile.frames, outermost first */
};

struct td_profile {
	char *event;           /* what was sampled: "cpu-clock", "mem_load_retired.l3_miss" */
	char *unit;            /* what a sample stands for in pictures: "samples", "L3 misses" */
	uint64_t period;       /* events per sample; 0 when sampled at a frequency */
	uint64_t frequency_hz; /* samples per second per CPU; 0 when sampled by period */
	uint64_t samples;      /* every sample taken, stack kept or not */
	uint64_t lost_samples; /* samples whose stack or key the kernel could not keep (map full) */

	size_t nr_frames, cap_frames;
	struct td_frame *frames;
	size_t nr_stacks, cap_stacks;
	struct td_profile_stack *stacks;
	void *index;           /* private: the hash tables that deduplicate frames and stacks */
};

/*
 * A stack as the kernel keeps it, before symbolization: instruction
 * pointers innermost first, user and kernel side. nr_user or nr_kernel is
 * 0 when that side had no stack; stack_lost when the kernel could not
 * keep one (its stack map was full, or the stack was recycled between
 * the sample and the drain).
 */
struct td_raw_stack {
	uint32_t tid;
	uint32_t pid;
	char comm[TD_PROFILE_COMM_LEN];
	uint64_t count;
	bool stack_lost;
	bool truncated; /* a side filled all TD_MAX_STACK_DEPTH frames: its outermost ones are missing */
	uint32_t nr_user;
	uint32_t nr_kernel;
	uint64_t user_ips[TD_MAX_STACK_DEPTH];
	uint64_t kernel_ips[TD_MAX_STACK_DEPTH];
};

/* Takes one raw stack; raw stacks of one pid come one after another. */
typedef int (*td_raw_stack_fn)(void *ctx, const struct td_raw_stack *raw);

struct td_profile *td_profile_new(void);
void td_profile_free(struct td_profile *profile);

/* Frees the strings of a frame filled by the symbolizer; the frame itself stays. */
void td_frame_release(struct td_frame *frame);

/*
 * The index of a frame equal to *frame (all fields), adding a copy of it
 * when there is none yet; -ENOMEM on failure. The caller keeps *frame.
 */
int64_t td_profile_intern_frame(struct td_profile *profile, const struct td_frame *frame);

/*
 * Adds a stack (frames copied, outermost first). A stack equal to one
 * already there for the same thread adds its count to it. -ENOMEM.
 */
int td_profile_add_stack(struct td_profile *profile, const struct td_profile_stack *stack);

/*
 * A new profile holding src's stacks of process pid (all of them when
 * pid is 0) and the frames they use, with src's event, unit and rate.
 * Its samples are its stacks' counts and its lost samples those of its
 * TD_FRAME_STACK_LOST stacks: samples the kernel could not key at all
 * belong to no process, and stay with the whole. NULL when out of memory.
 */
struct td_profile *td_profile_subset(const struct td_profile *src, uint32_t pid);

/*
 * The frame's name as pictures show it: the function, else
 * "module+0xoffset", else "[unknown]". Writes at most len bytes.
 */
void td_frame_name(const struct td_frame *frame, char *buf, size_t len);

#endif
