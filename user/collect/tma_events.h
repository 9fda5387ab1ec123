/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which counters a Top-Down collection opens, and in which groups.
 *
 * A depth of a model's tree needs a set of events (kb's
 * td_model_events_for). They are bound to the host's PMU (its dynamic
 * type from sysfs) and packed into counter groups (user/collect/pmu.h) that fit
 * the PMU: when one group cannot hold them all, the collector rotates
 * the groups across intervals.
 *
 * Packing rules (td_counter_plan_build):
 *   - Intel topdown-* metric events (TD_EVENT_PERF_METRICS) take no
 *     counter but must form a perf group led by the slots event
 *     (TD_EVENT_SLOTS_LEADER): each such group is the slots event, then
 *     as many metric events as the group has room for; more metric
 *     events start another group with the slots event again.
 *   - A general-purpose event needs a counter of its mask (bits below the
 *     budget's gp_counters; mask 0 = any): a group takes it when every
 *     one of its events still gets a counter of its own.
 *   - Fixed-counter events (TD_EVENT_FIXED) take no general-purpose
 *     counter: they join every group with a free slot whose fixed counter
 *     is free, so they are counted as much of the time as possible.
 *   - An event with TD_NEED_EVERY_GROUP joins every group and takes one of
 *     its general-purpose counters there.
 *   - No group holds more than budget->group_events events.
 */
#ifndef TOPDOWN_TMA_EVENTS_H
#define TOPDOWN_TMA_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpuinfo.h"
#include "events.h"
#include "kb.h"
#include "pmu.h"

/* What one event asks of the PMU. */
struct td_counter_need {
	const char *name;  /* for messages */
	uint32_t counters; /* the counters it may use (fixed counters with TD_EVENT_FIXED); 0 = any */
	unsigned flags;    /* TD_EVENT_FIXED, TD_EVENT_SLOTS_LEADER, TD_EVENT_PERF_METRICS,
			    * TD_NEED_EVERY_GROUP */
};

/*
 * A general-purpose event that every group counts, as a fixed event would
 * (the cycles a formula divides by, when the cycle counter is taken): it
 * takes one general-purpose counter in each group, so that whatever a
 * group counts has its own cycles beside it.
 */
#define TD_NEED_EVERY_GROUP (1u << 16)

struct td_counter_budget {
	unsigned gp_counters;  /* general-purpose counters of one logical CPU */
	unsigned group_events; /* events one group may hold: TD_MAX_SLOTS, fewer to test rotation */
};

/*
 * Packs needs[0..n) (n <= TD_MAX_EVENTS) into plan by the rules above;
 * plan's event indexes are positions in needs. -EINVAL with err when an
 * event fits no group (no counter of its mask, metric events without a
 * slots event) or the budget is empty.
 */
int td_counter_plan_build(const struct td_counter_need *needs, size_t n,
			  const struct td_counter_budget *budget, struct td_counter_plan *plan,
			  char *err, size_t errlen);

/*
 * The model to collect with: the one named (--cpu-model; short name, long
 * name or alias) or, when name is NULL, the one cpu is. -ENOENT with err
 * listing the known names for an unknown name; -ENOTSUP with err when the
 * CPU has no definitions; -EINVAL with err naming the detected model when
 * name is a general-counter variant (spr-alt, ...) of another vendor than
 * cpu's (cpu NULL: not checked, as for import).
 */
int td_tma_choose_model(const struct td_kb *kb, const char *name, const struct td_cpuinfo *cpu,
			const struct td_model **out, char *err, size_t errlen);

/* Everything a Top-Down collection of one model at one depth opens. */
struct td_tma_setup {
	const struct td_model *model;  /* the model counted with: the one asked for, or its
					* general-counter variant (variant says why) */
	char variant[256];             /* why model is the variant of the one asked for; "" when not */
	int depth;
	char pmu[64];                  /* the sysfs PMU the events were bound to */
	uint32_t pmu_type;             /* its perf_event_attr type */
	char pmu_cpus[1024];           /* the CPUs it covers (its sysfs cpus file), "" for all */
	struct td_host_facts facts;    /* SMT from cpuinfo; Arm slot width from the PMU's caps/slots */
	struct td_counter_budget budget;
	size_t nr_events;
	struct td_event events[TD_MAX_EVENTS]; /* named as the kb names them */
	struct td_counter_plan plan;
	struct td_pmu_probe probe;     /* what the PMU gave when probed (td_tma_probe); probe.done
					* false when it was not */
};

/*
 * Fills setup for model at depth (1..4; 4 only where level 4 needs no
 * event beyond level 3) on the host whose /proc and /sys are under root
 * ("" for this one) and whose CPU is cpu. A model with a general-counter
 * variant (kb's gp_alternate) is swapped for it when the PMU has no
 * "slots" event: the kernel lists slots only where PERF_METRICS works,
 * which most VMs lack (perf decides the same way). -EINVAL with err for
 * a depth the model cannot do, -ENODEV with err when the host lacks the
 * model's PMU.
 */
int td_tma_setup(const struct td_model *model, int depth, const char *root,
		 const struct td_cpuinfo *cpu, struct td_tma_setup *setup, char *err, size_t errlen);

/*
 * One sentence, into buf, on the slot width the setup's formulas use and
 * where it comes from (the PMU's caps/slots, or the model's documented
 * width when the PMU reports none); "" when no formula uses one. Returns
 * whether the width is the model's, which a run says once.
 */
bool td_tma_describe_slots(const struct td_tma_setup *setup, char *buf, size_t len);

/*
 * Plans the setup's events for what probe found the PMU gives (probe->done):
 * at most probe->gp_free general-purpose counters, never more than the
 * model documents; a fixed event whose counter is taken moves to a
 * general-purpose counter in every group (TD_NEED_EVERY_GROUP); and each
 * group without Intel's slots group opens as one kernel perf group, so
 * that its events are scheduled together and share one running time,
 * which the ratios of the formulas need. note (notelen may be 0) says
 * what the plan had to do differently from the datasheet, "" when
 * nothing. -ENOSPC with err when nothing can count (every counter held).
 */
int td_tma_plan_for(struct td_tma_setup *setup, const struct td_pmu_probe *probe, char *note, size_t notelen,
		    char *err, size_t errlen);

/*
 * Probes the setup's PMU on its first CPU (td_pmu_probe, with one of the
 * setup's general-purpose events and each of its fixed ones) and plans
 * for what it found (td_tma_plan_for). A probe that cannot open even one
 * event leaves the datasheet's plan (the collection's own open then says
 * why, as it always did) and returns 0 with note empty.
 */
int td_tma_probe(struct td_tma_setup *setup, char *note, size_t notelen, char *err, size_t errlen);

/* Whether the NMI watchdog is on and, on this CPU (arm: Arm's), holds a general-purpose counter. */
bool td_nmi_watchdog_holds_counter(bool arm);

/* A kb event as perf_event_open(2) wants it, on the PMU of that type. */
int td_tma_bind_event(const struct td_event_def *def, uint32_t pmu_type, struct td_event *out, char *err,
		      size_t errlen);

#endif
