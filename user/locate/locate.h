/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Raw stacks into a profile: each address symbolized (inlined functions
 * become frames of their own), the stack turned outermost first (user
 * frames, then the kernel's above them), and added to the profile with
 * its thread and count. The collector calls td_locate_raw_stack at every
 * drain, while the sampled processes still live (td_raw_stack_fn).
 */
#ifndef TOPDOWN_LOCATE_H
#define TOPDOWN_LOCATE_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "symbolize.h"

struct td_locate;

/* What the run says about its stacks, besides the profile itself. */
struct td_locate_summary {
	uint64_t samples;            /* samples with a stack, or a marker for its loss */
	uint64_t frames;             /* frames over all samples (a frame of a stack of n samples counts n) */
	uint64_t unresolved_frames;  /* of those, without a function name */
	uint64_t user_samples;       /* samples with a user stack */
	uint64_t shallow_user_samples; /* of those, with one user frame: no frame pointers? */
	uint64_t truncated_samples;  /* deeper than the kernel keeps */
	uint64_t lost_stack_samples; /* counted without their stack */
};

/* With a symbolizer of its own (opts NULL: the defaults) and an empty profile; NULL with err. */
struct td_locate *td_locate_new(const struct td_symbolizer_opts *opts, char *err, size_t errlen);
void td_locate_free(struct td_locate *locate);

/*
 * The profile so far, named: event, what was sampled, at frequency_hz
 * (or every period events), with the samples the kernel took but could
 * not keep (lost_samples: its maps were full; they count in samples
 * too). The caller owns it; locate starts an empty one and forgets the
 * processes it read, so a long-lived caller (the agent) stays flat.
 * NULL when out of memory.
 */
struct td_profile *td_locate_take_profile(struct td_locate *locate, const char *event, uint64_t frequency_hz,
					  uint64_t period, uint64_t lost_samples);

/* A td_raw_stack_fn: ctx is the struct td_locate. Negative errno on failure. */
int td_locate_raw_stack(void *ctx, const struct td_raw_stack *raw);

/* Since the last td_locate_take_profile. */
void td_locate_summarize(const struct td_locate *locate, struct td_locate_summary *summary);

/*
 * The hint a user needs when most user stacks are one frame deep (the
 * target was built without frame pointers), else NULL.
 */
const char *td_locate_frame_pointer_hint(const struct td_locate_summary *summary);

#endif
