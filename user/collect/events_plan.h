/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The counter groups of a list of events the user named (--events), for
 * what the PMU gives now, as the Top-Down path plans its own
 * (td_tma_plan_for): when the list's hardware events do not fit the free
 * general-purpose counters at once, they are split into groups sized to
 * them, each opened as one kernel perf group, and the listed cycles event
 * joins every group, so the collector scales each event by the cycles
 * counted beside it (its ruler, user/collect/collector.c) rather than by
 * time. Software events and other PMUs' stand alone in the groups' free
 * slots, as they always did.
 */
#ifndef TOPDOWN_EVENTS_PLAN_H
#define TOPDOWN_EVENTS_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "events.h"
#include "pmu.h"

/* What one listed event asks of the core PMU (the one the CPUs count on). */
enum td_event_role {
	TD_ROLE_OTHER,   /* none: a software event or another PMU's */
	TD_ROLE_COUNTER, /* a general-purpose counter */
	TD_ROLE_CYCLES,  /* the list's first cycles event: the cycle counter when free, else a
			  * general-purpose one; it joins every group */
};

/*
 * The role of each of events[0..n) on the host whose sysfs is at
 * sysfs_root (NULL: /sys). Hardware events are perf's generic and cache
 * ones, raw codes, and those of a core PMU's own type (one named "cpu" or
 * with a cpus file, as perf tells them). Cycles are perf's cycles or, on
 * Arm's PMU (arm), the raw event 0x11 the cycle counter counts.
 */
void td_events_roles(const char *sysfs_root, const struct td_event *events, size_t n, bool arm,
		     enum td_event_role *roles);

/*
 * Plans events[0..n) of roles for what probe found the PMU gives
 * (probe->fixed_free bit 0: the cycle counter is free; nr_fixed 0 when no
 * cycles event is listed). When the hardware events fit in one group,
 * the plan is the one a collection makes without a probe (every event
 * standing alone, up to TD_MAX_SLOTS to a group) and note is "". Else the
 * hardware events open as kernel perf groups of at most the free
 * counters, the cycles event in each, the others after them, and note
 * says so in one sentence. -ENOSPC with err naming who may hold the
 * counters (nmi_watchdog: the NMI watchdog holds one) when the hardware
 * events cannot count at all.
 */
int td_events_plan_for(const struct td_event *events, const enum td_event_role *roles, size_t n,
		       const struct td_pmu_probe *probe, bool nmi_watchdog, struct td_counter_plan *plan,
		       char *note, size_t notelen, char *err, size_t errlen);

/*
 * The same on this host: probes the core PMU on CPU 0 with one of the
 * list's events that takes a general-purpose counter only, and its cycles
 * event. Where nothing can be probed (no hardware event in the list, none
 * that takes a general-purpose counter only, no PMU) the plan is the
 * unprobed one, as above.
 */
int td_events_plan(const struct td_event *events, size_t n, struct td_counter_plan *plan, char *note,
		   size_t notelen, char *err, size_t errlen);

/* The plan of events[0..n) without a probe: in order, per_group to a group, each standing alone. */
int td_events_plan_unprobed(const struct td_event *events, size_t n, unsigned per_group,
			    struct td_counter_plan *plan, char *err, size_t errlen);

#endif
