/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Locate's kernel half, seen from userspace: one sampling perf event per
 * CPU, each running the on_sample BPF program, which counts samples per
 * (thread, user stack, kernel stack) in the kernel. Draining turns those
 * counts into raw stacks (user/core/profile.h) and empties the maps, so
 * they hold one interval's stacks at a time. Used by the collector only.
 */
#ifndef TOPDOWN_SAMPLER_H
#define TOPDOWN_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events.h"
#include "profile.h"

struct bpf_program;
struct td_sampler;

/* What to sample: one event, at a frequency or every period events. */
struct td_sample_opts {
	struct td_event event;
	uint64_t frequency_hz; /* samples per second per CPU when period is 0 */
	uint64_t period;       /* events per sample; 0: sample at frequency_hz */
	bool precise;          /* the PMU names the instruction itself (Intel PEBS) */
	uint32_t max_stacks;   /* stack map capacity; 0: TD_SAMPLER_DEFAULT_STACKS */
};

#define TD_SAMPLER_DEFAULT_STACKS 16384
/* Distinct (thread, stack) keys kept between two drains. */
#define TD_SAMPLER_MAX_KEYS 65536

/*
 * Opens the event on every CPU of cpus (NULL: all) and attaches prog to
 * each. An event this host cannot sample fails with the errno of
 * perf_event_open and err naming the event.
 */
int td_sampler_open(struct bpf_program *prog, const struct td_sample_opts *opts, const char *cpus,
		    int nr_cpus, struct td_sampler **out, char *err, size_t errlen);
void td_sampler_close(struct td_sampler *sampler);

/*
 * Samples another event from now on: opens and attaches opts' event, then
 * closes the old one (the two overlap for an instant). On failure the old
 * event samples on and err says why. What is counted but not drained
 * stays, under the event it was counted on: drain before switching.
 */
int td_sampler_switch(struct td_sampler *sampler, struct bpf_program *prog, const struct td_sample_opts *opts,
		      const char *cpus, char *err, size_t errlen);

/*
 * Moves every counted (thread, stack) out of the kernel's maps and hands
 * each to fn, sorted by pid. counts_fd and stacks_fd: the sample_counts
 * and stack_traces maps.
 */
int td_sampler_drain(struct td_sampler *sampler, int counts_fd, int stacks_fd, td_raw_stack_fn fn, void *ctx,
		     char *err, size_t errlen);

/* The kernel's cap on sampling frequency (kernel.perf_event_max_sample_rate); 0 when unreadable. */
uint64_t td_sampler_max_frequency(void);

#endif
