/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Opens the counters the BPF side reads: one perf event per CPU per slot,
 * counting every task on that CPU (pid -1), never sampling.
 *
 * The events are counted in groups (a plan): a group is what the BPF
 * slots read during one interval, event n of the group in slot n. Every
 * group is opened at start, disabled; td_pmu_activate() makes one group
 * count and points the slots at it. With one group nothing ever changes;
 * with more the collector rotates them (user/collect/collector.h).
 */
#ifndef TOPDOWN_PMU_H
#define TOPDOWN_PMU_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/perf_event.h>
#include <linux/types.h>

#include "events.h"
#include "run.h"
#include "topdown.h"

/* The events one interval counts together. */
struct td_counter_group {
	size_t nr_events;
	int events[TD_MAX_SLOTS]; /* indexes into the event list; slot n reads events[n] */
	/*
	 * events[0..kernel_group) open as one perf group led by events[0]:
	 * Intel's slots event and its topdown-* metric events, which the
	 * kernel schedules and reads together, or, in a plan made for what
	 * the PMU gives (td_tma_plan_for), every event of the group, so that
	 * they share one running time. 0: every event stands alone.
	 */
	size_t kernel_group;
};

struct td_counter_plan {
	size_t nr_groups;
	struct td_counter_group groups[TD_MAX_EVENTS]; /* a group holds at least one event of its own */
};

struct td_pmu_counters;

/*
 * The perf_event_attr of each event of group, in slot order: counting
 * (no sample period, no sample type), disabled until the group is made
 * active, no exclude_* filters, not inherited (the BPF read needs that),
 * enabled and running times read with the count.
 */
void td_pmu_group_attrs(const struct td_event *events, const struct td_counter_group *group,
			struct perf_event_attr *attrs);

/*
 * The slots of group whose enabled and running times need not be read,
 * as a mask (bit n: slot n): software events standing alone or in a
 * kernel group of software events only (a hardware member moves the
 * group onto its PMU). The kernel never multiplexes those, so both times of
 * a slice are the slice itself; the BPF programs then read the count
 * alone, which costs about half as much (docs/BENCHMARKS.md).
 */
uint32_t td_counter_group_untimed_slots(const struct td_event *events, const struct td_counter_group *group);

/*
 * Opens every group of plan on every CPU of cpus (a sysfs cpu list such
 * as "0-7,16-23": the CPUs the events' PMU covers; NULL or "" for all),
 * then activates group 0. Offline CPUs are skipped. The fds go into the
 * BPF perf-event-array map_fd at cpu * slots_per_cpu + slot. On failure
 * nothing stays open and err names the event, the reason and the fix.
 */
int td_pmu_open_plan(const struct td_event *events, const struct td_counter_plan *plan,
		     const char *cpus, int map_fd, int slots_per_cpu, struct td_pmu_counters **out,
		     char *err, size_t errlen);

/* The same for events[0..count) as one group (count <= TD_MAX_SLOTS), on every CPU. */
int td_pmu_open(const struct td_event *events, size_t count, int map_fd,
		int slots_per_cpu, struct td_pmu_counters **out,
		char *err, size_t errlen);
void td_pmu_close(struct td_pmu_counters *counters);

/*
 * One sampling event on one CPU, all tasks: an overflow every period
 * events, or frequency_hz times a second when period is 0; precise asks
 * the PMU for the instruction that caused the event (Intel PEBS) instead
 * of one a few cycles later. The fd, or -ENODEV for an offline CPU, or
 * another negative errno with err naming the event, the reason and the fix.
 */
int td_pmu_open_sampling(const struct td_event *event, uint64_t frequency_hz, uint64_t period, bool precise,
			 int cpu, char *err, size_t errlen);

/*
 * Stops the active group, starts group (counting from where it stopped
 * last time), points slot n of every CPU at its event n and empties the
 * slots it leaves unused. A BPF reading taken across the switch mixes two
 * events: the caller must discard the slot deltas of that moment.
 */
int td_pmu_activate(struct td_pmu_counters *counters, size_t group, char *err, size_t errlen);

/*
 * Parses a sysfs cpu list ("0-3,8,10-11") into cpus[0..nr_cpus): true for
 * each CPU listed; CPUs at or above nr_cpus are ignored. -EINVAL with err
 * on bad syntax.
 */
int td_cpulist_parse(const char *list, bool *cpus, int nr_cpus, char *err, size_t errlen);

/*
 * What a PMU gives right now, as opposed to what its datasheet says: a
 * VM's PMU often has fewer general-purpose counters, and other monitors
 * (the NMI watchdog, another profiler's pinned events) hold some.
 */
struct td_pmu_probe {
	bool done;             /* false: not probed */
	unsigned gp_free;      /* general-purpose counters one group can use together now */
	bool gp_more;          /* a group of one more than asked for counted too */
	unsigned nr_fixed;     /* fixed events asked about */
	uint32_t fixed_free;   /* bit n: fixed event n counts beside gp_free general ones */
};

/*
 * Probes on cpu by counting growing perf groups of gp_event (an event
 * that needs a general-purpose counter): the largest group of up to
 * max_gp copies that the kernel schedules at once is gp_free, and one
 * more is tried to tell whether the PMU has more than max_gp (gp_more).
 * Then each fixed[n] joins gp_free copies: whether it still counts says
 * whether its dedicated counter is free (a cycle counter taken makes
 * cycles need a general one). A group counts when its running time
 * after enabling is above 0; each try opens, enables, reads and closes,
 * so the whole probe takes about a millisecond. Negative errno with err
 * when gp_event cannot be opened at all (no PMU, no permission).
 */
int td_pmu_probe(const struct td_event *gp_event, unsigned max_gp, const struct td_event *fixed,
		 size_t nr_fixed, int cpu, struct td_pmu_probe *out, char *err, size_t errlen);

/*
 * Whether this host has hardware counters: opens a cycles counter on
 * CPU 0 and closes it. When not, why says so in one sentence, and errno
 * is the open's (EACCES or EPERM: we may not, rather than there are none).
 */
bool td_pmu_hardware_available(char *why, size_t whylen);

#endif
