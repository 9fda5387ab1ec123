/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What `topdown collect` and `topdown agent` both do before counting:
 * check the host can run the BPF collector, choose the counters (the
 * Top-Down ones of the CPU's model and a level, or what works without a
 * PMU), build the Top-Down engine, and build the run's labels.
 */
#ifndef TOPDOWN_COLLECT_SETUP_H
#define TOPDOWN_COLLECT_SETUP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "engine.h"
#include "events.h"
#include "labels.h"
#include "run.h"
#include "sampler.h"
#include "tma_events.h"

/* The Top-Down side of a collection. */
struct td_tma_choice {
	bool wanted;                /* no --events: the tree is what the run is for */
	struct td_tma_setup *setup; /* the counters and groups; NULL when TMA is unavailable */
	char unavailable[512];      /* why not, said once */
	char counters_note[512];    /* what the PMU's probe changed in the plan, said once; "" when nothing */
	struct td_engine *engine;   /* from td_collect_new_engine */
	struct td_counter_plan *events_plan; /* --events: their groups (events_plan.h); NULL otherwise */
};

/* The counter groups the collection opens: the Top-Down setup's, the --events plan, or NULL. */
const struct td_counter_plan *td_tma_choice_plan(const struct td_tma_choice *tma);

/* Frees the setup, the engine and the --events plan; the choice is empty afterwards. */
void td_tma_choice_release(struct td_tma_choice *tma);

/* BPF tracing needs root or CAP_BPF with CAP_PERFMON; CO-RE needs kernel BTF;
 * the kernel must be TD_MIN_KERNEL or later (td_kernel_check). */
int td_collect_check_host(char *err, size_t errlen);

/*
 * The oldest kernel every part of the collector works on: BPF ring buffers
 * (5.8) and running a program on a chosen CPU, BPF_F_TEST_RUN_ON_CPU for
 * raw_tp programs (5.10), which the flush of never-switching threads uses.
 * The kernel lab runs the collector on Debian's 5.10 (docs/LAB.md).
 */
#define TD_MIN_KERNEL_MAJOR 5
#define TD_MIN_KERNEL_MINOR 10

/* release as uname(2) gives it ("5.10.0-32-amd64"): 0, or -ENOTSUP with
 * one sentence naming the missing feature. */
int td_kernel_check(const char *release, char *err, size_t errlen);

/*
 * The counters: when events_given, *events as the user listed them,
 * planned for what the PMU gives (td_events_plan: tma->events_plan, and
 * tma->counters_note when the plan splits them; -ENOSPC with err when
 * others hold every counter they need); else the Top-Down ones of the model (cpu_model, NULL: detected) at
 * level, or when TMA is unavailable the ones that do work: task-clock
 * everywhere, cycles and instructions where the host has hardware
 * counters (tma->unavailable says why). A level the model cannot do is
 * an error.
 */
int td_collect_choose_events(const char *cpu_model, long level, bool events_given,
			     struct td_event *events, size_t *nr_events, struct td_tma_choice *tma,
			     char *err, size_t errlen);

/* The engine for the events a run counts, by name (none without a Top-Down setup). */
int td_collect_new_engine(struct td_tma_choice *tma, const char *const *event_names, size_t nr_events,
			  char *err, size_t errlen);

/*
 * Locate's default rate, for collect and the agent: a prime, so sampling
 * does not beat with periodic work; 99 Hz keeps an always-on collection
 * cheap and gives about 1,000 samples per busy CPU over a 10 s window.
 */
#define TD_DEFAULT_SAMPLE_FREQ_HZ 99

/*
 * The event that finds the code behind a node of the setup's model (a
 * metric name, dotted path or node name, see td_model_sample_event): its
 * own, else its nearest ancestor's, else cycles; the kb's encoding bound
 * to the PMU the counters use, and whether to sample it precisely. -ENOENT
 * with err for a node the model lacks. The agent can call it between
 * windows to sample the bottleneck the last window found.
 */
int td_collect_sample_for_node(const struct td_tma_setup *setup, const char *node, struct td_event *out,
			       bool *precise, char *err, size_t errlen);

/*
 * Locate's event: requested as the user named it (--sample=EVENT), or
 * NULL for the default. The default, on hardware, is node's own event
 * (--sample-for NODE) when the run counts the Top-Down tree of a model,
 * else cycles; where the host has no hardware PMU, cpu-clock. *notice
 * says what the user did not ask for (an empty notice: nothing to say):
 * cpu-clock, or cycles instead of node's event. frequency_hz above the
 * kernel's cap (kernel.perf_event_max_sample_rate) is lowered to it, and
 * *notice says that too. An unknown event or node is an error naming it.
 */
int td_collect_choose_sample(const char *requested, const char *node, const struct td_tma_choice *tma,
			     uint64_t frequency_hz, struct td_sample_opts *out, char *notice, size_t noticelen,
			     char *err, size_t errlen);

/* Host labels, then collector, tma_level and tma_model. */
int td_collect_base_labels(const struct td_tma_choice *tma, long level, struct td_labels *labels,
			   char *err, size_t errlen);

/*
 * The target's labels: comm (process_name, or the comm of first_pid when
 * it runs), pid (pids, the target's pid list, when given), and first_pid's
 * cgroup and container. NULL and 0 leave the matching labels out.
 */
int td_collect_target_labels(const char *process_name, const char *pids, pid_t first_pid,
			     struct td_labels *labels, char *err, size_t errlen);

#endif
