// SPDX-License-Identifier: BSD-3-Clause
/*
 * Counter groups for a list of events the user named (see events_plan.h).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "events_plan.h"
#include "fileio.h"
#include "tma_events.h"

#define ARM_CPU_CYCLES 0x11 /* the event Arm's cycle counter counts */

/* Whether the PMU of a sysfs type counts on the CPUs' own counters: "cpu", or one with a cpus file. */
static bool core_pmu_type(const char *sysfs_root, uint32_t type)
{
	char devices[4096], path[4400], text[32];
	bool core = false, found = false;
	struct dirent *entry;
	DIR *dir;

	snprintf(devices, sizeof(devices), "%s/bus/event_source/devices", sysfs_root ? sysfs_root : "/sys");
	if (!(dir = opendir(devices)))
		return false;
	while (!found && (entry = readdir(dir))) {
		snprintf(path, sizeof(path), "%s/%s/type", devices, entry->d_name);
		if (entry->d_name[0] == '.' || td_read_first_line(path, text, sizeof(text)) ||
		    strtoul(text, NULL, 0) != type)
			continue;
		found = true;
		snprintf(path, sizeof(path), "%s/%s/cpus", devices, entry->d_name);
		core = !strcmp(entry->d_name, "cpu") || access(path, F_OK) == 0;
	}
	closedir(dir);
	return core;
}

void td_events_roles(const char *sysfs_root, const struct td_event *events, size_t n, bool arm,
		     enum td_event_role *roles)
{
	bool cycles_seen = false;

	for (size_t e = 0; e < n; e++) {
		const struct td_event *ev = &events[e];
		bool raw = ev->type == PERF_TYPE_RAW || (ev->type >= PERF_TYPE_MAX && core_pmu_type(sysfs_root, ev->type));
		bool cycles = (ev->type == PERF_TYPE_HARDWARE && (uint32_t)ev->config == PERF_COUNT_HW_CPU_CYCLES) ||
			      (arm && raw && (ev->config & 0xffff) == ARM_CPU_CYCLES);

		if (cycles && !cycles_seen) {
			roles[e] = TD_ROLE_CYCLES;
			cycles_seen = true;
		} else if (raw || ev->type == PERF_TYPE_HARDWARE || ev->type == PERF_TYPE_HW_CACHE) {
			roles[e] = TD_ROLE_COUNTER;
		} else {
			roles[e] = TD_ROLE_OTHER;
		}
	}
}

int td_events_plan_unprobed(const struct td_event *events, size_t n, unsigned per_group,
			    struct td_counter_plan *plan, char *err, size_t errlen)
{
	struct td_counter_need needs[TD_MAX_EVENTS] = { 0 };
	struct td_counter_budget budget = { .gp_counters = per_group, .group_events = per_group };

	if (n > TD_MAX_EVENTS) {
		snprintf(err, errlen, "%zu events are more than the %d a collection can count; name fewer events",
			 n, TD_MAX_EVENTS);
		return -EINVAL;
	}
	for (size_t e = 0; e < n; e++)
		needs[e].name = events[e].name;
	return td_counter_plan_build(needs, n, &budget, plan, err, errlen);
}

/*
 * Each group's hardware events first, as its kernel perf group; the
 * others after them, standing alone (a software event joining would move
 * the whole group onto the PMU, and lose the cheap read of untimed slots).
 */
static void hardware_first(struct td_counter_plan *plan, const enum td_event_role *roles)
{
	for (size_t g = 0; g < plan->nr_groups; g++) {
		struct td_counter_group *group = &plan->groups[g];
		int others[TD_MAX_SLOTS];
		size_t hw = 0, nr_others = 0;

		for (size_t i = 0; i < group->nr_events; i++)
			if (roles[group->events[i]] == TD_ROLE_OTHER)
				others[nr_others++] = group->events[i];
			else
				group->events[hw++] = group->events[i];
		memcpy(&group->events[hw], others, nr_others * sizeof(others[0]));
		group->kernel_group = hw;
	}
}

int td_events_plan_for(const struct td_event *events, const enum td_event_role *roles, size_t n,
		       const struct td_pmu_probe *probe, bool nmi_watchdog, struct td_counter_plan *plan,
		       char *note, size_t notelen, char *err, size_t errlen)
{
	struct td_counter_need needs[TD_MAX_EVENTS];
	int order[TD_MAX_EVENTS]; /* needs[i] is events[order[i]] */
	struct td_counter_budget budget = { probe->gp_free < TD_MAX_SLOTS ? probe->gp_free : TD_MAX_SLOTS,
					    TD_MAX_SLOTS };
	bool cycles_free = probe->nr_fixed && (probe->fixed_free & 1), ruler;
	size_t counters = 0, m = 0;
	int cycles = -1, ret;

	if (notelen)
		note[0] = '\0';
	for (size_t e = 0; e < n && e < TD_MAX_EVENTS; e++) {
		counters += roles[e] == TD_ROLE_COUNTER;
		if (roles[e] == TD_ROLE_CYCLES)
			cycles = e;
	}
	if (n > TD_MAX_EVENTS || (!counters && cycles < 0))
		return td_events_plan_unprobed(events, n, TD_MAX_SLOTS, plan, err, errlen);
	if (budget.gp_counters == 0 && (counters || !cycles_free)) {
		int named = cycles; /* the first event that needs a general-purpose counter */

		for (size_t e = n; e-- > 0;)
			if (roles[e] == TD_ROLE_COUNTER)
				named = e;
		snprintf(err, errlen, "every general-purpose counter of the PMU is held by another user%s, so %s "
			 "cannot count; stop the other monitor, or list software events only",
			 nmi_watchdog ? " (the NMI watchdog holds one: `sysctl -w kernel.nmi_watchdog=0` frees it)" : "",
			 events[named].name);
		plan->nr_groups = 0;
		return -ENOSPC;
	}
	/* cycles beside every group's events: on its own counter, or on a general one that leaves one for them */
	ruler = cycles >= 0 && (cycles_free || budget.gp_counters >= 2);
	if (ruler && cycles_free && budget.gp_counters == TD_MAX_SLOTS)
		budget.gp_counters--; /* a slot for cycles in every group */
	if (cycles >= 0) /* first, so that it takes its slot before the software events take theirs */
		order[m++] = cycles;
	for (size_t e = 0; e < n; e++)
		if ((int)e != cycles)
			order[m++] = e;
	for (size_t i = 0; i < n; i++) {
		const char *name = events[order[i]].name;

		if (roles[order[i]] == TD_ROLE_OTHER) /* no counter: into every group with a free slot */
			needs[i] = (struct td_counter_need){ name, 0, TD_EVENT_FIXED };
		else if (roles[order[i]] == TD_ROLE_CYCLES && ruler)
			needs[i] = (struct td_counter_need){ name, cycles_free ? 1 : 0,
							     cycles_free ? TD_EVENT_FIXED : TD_NEED_EVERY_GROUP };
		else
			needs[i] = (struct td_counter_need){ name, 0, 0 };
	}
	if ((ret = td_counter_plan_build(needs, n, &budget, plan, err, errlen)))
		return ret;
	if (plan->nr_groups == 1) /* all fit: as without a probe */
		return td_events_plan_unprobed(events, n, TD_MAX_SLOTS, plan, err, errlen);
	for (size_t g = 0; g < plan->nr_groups; g++)
		for (size_t i = 0; i < plan->groups[g].nr_events; i++)
			plan->groups[g].events[i] = order[plan->groups[g].events[i]];
	hardware_first(plan, roles);
	if (notelen)
		snprintf(note, notelen, "%u general-purpose counter%s free%s: the hardware events count in %zu kernel "
			 "perf groups, one per interval in turn, %s%s", probe->gp_free, probe->gp_free == 1 ? "" : "s",
			 cycles < 0 ? "" : cycles_free ? ", and the cycle counter" : ", the cycle counter taken",
			 plan->nr_groups, ruler ? events[cycles].name : "",
			 ruler ? " in each, which scales the others" :
			 cycles >= 0 ? "too few counters to count cycles beside the others: each is scaled by time" :
			 "each scaled by time (list cycles to count it in every group and scale by it)");
	return 0;
}

int td_events_plan(const struct td_event *events, size_t n, struct td_counter_plan *plan, char *note,
		   size_t notelen, char *err, size_t errlen)
{
#if defined(__aarch64__) || defined(__arm__)
	const bool arm = true;
#else
	const bool arm = false;
#endif
	enum td_event_role roles[TD_MAX_EVENTS];
	const struct td_event *gp_event = NULL, *cycles = NULL;
	struct td_pmu_probe probe;
	char ignored[256];

	if (notelen)
		note[0] = '\0';
	if (n > TD_MAX_EVENTS)
		return td_events_plan_unprobed(events, n, TD_MAX_SLOTS, plan, err, errlen);
	td_events_roles(NULL, events, n, arm, roles);
	for (size_t e = 0; e < n; e++) {
		const struct td_event *ev = &events[e];
		/* perf's instructions and ref-cycles may take x86's fixed counters: they would probe one too many */
		bool may_be_fixed = !arm && ev->type == PERF_TYPE_HARDWARE &&
				    ((uint32_t)ev->config == PERF_COUNT_HW_INSTRUCTIONS ||
				     (uint32_t)ev->config == PERF_COUNT_HW_REF_CPU_CYCLES);

		if (roles[e] == TD_ROLE_CYCLES)
			cycles = ev;
		else if (roles[e] == TD_ROLE_COUNTER && !may_be_fixed && !gp_event)
			gp_event = ev;
	}
	/* nothing to probe with, or no PMU: the collection's own open says why when it fails */
	if (!gp_event || td_pmu_probe(gp_event, TD_MAX_SLOTS, cycles, cycles != NULL, 0, &probe, ignored,
				      sizeof(ignored)))
		return td_events_plan_unprobed(events, n, TD_MAX_SLOTS, plan, err, errlen);
	return td_events_plan_for(events, roles, n, &probe, td_nmi_watchdog_holds_counter(arm), plan, note, notelen,
				  err, errlen);
}
