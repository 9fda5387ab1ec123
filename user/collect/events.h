/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Event names as users write them (-e cycles,instructions), turned into
 * what perf_event_open(2) wants: a type and config words.
 *
 * Forms, tried in this order:
 *   - perf's software events: task-clock, cpu-clock, context-switches (cs),
 *     cpu-migrations (migrations), page-faults (faults), minor-faults,
 *     major-faults, alignment-faults, emulation-faults;
 *   - perf's generic hardware events: cycles (cpu-cycles), instructions,
 *     branches (branch-instructions), branch-misses, cache-references,
 *     cache-misses, ref-cycles, bus-cycles, stalled-cycles-frontend,
 *     stalled-cycles-backend;
 *   - raw codes "rNNNN" (hex, PERF_TYPE_RAW);
 *   - "pmu/term=val,term/" read from sysfs: the PMU's type file, its
 *     format/<term> bit ranges (config:0-7,21), and events/<alias> for a
 *     bare name (msr/tsc/, cpu/slots/); a bare format term means 1;
 *     config, config1 and config2 may be set directly;
 *   - anything else through libpfm4 (INST_RETIRED.ANY, TOPDOWN.SLOTS), whose
 *     tables cover the CPUs of the architecture it was built for.
 *
 * Any of them may end in ":u" (instructions:u, r08:u): the event counts in
 * user space only, as perf's modifier does (exclude_kernel, exclude_hv).
 * The name keeps the suffix, so a run can count both instructions and
 * instructions:u.
 *
 * libpfm4 is initialised lazily, once per process, by the first name that
 * needs it (pthread_once), so threads may resolve events concurrently from
 * the start. It is never terminated: its tables live as long as the
 * process. Setting LIBPFM_FORCE_PMU (e.g. "spr") before that first call
 * makes libpfm4 encode for another CPU than the one it runs on.
 */
#ifndef TOPDOWN_EVENTS_H
#define TOPDOWN_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TD_EVENT_NAME_MAX 64 /* bytes, with the NUL */

/* An event as perf_event_open(2) wants it. */
struct td_event {
	char name[TD_EVENT_NAME_MAX]; /* as the user wrote it */
	uint32_t type;                /* PERF_TYPE_* or a dynamic PMU type from sysfs */
	uint64_t config, config1, config2;
	bool user_only;               /* ":u": exclude_kernel and exclude_hv when opened */
};

/* Resolves one name; reads pmu/.../ forms under /sys. 0 or a negative errno. */
int td_event_resolve(const char *name, struct td_event *out, char *err, size_t errlen);

/*
 * Parses a comma-separated list; commas inside pmu/.../ belong to the
 * event, spaces around names are ignored. At most max events; empty
 * items, a name twice, two names for the same encoding and too many
 * events are errors. *count is 0 on error.
 */
int td_event_list_parse(const char *list, struct td_event *out, size_t max,
			size_t *count, char *err, size_t errlen);

/*
 * The same two with the sysfs directory given: sysfs_root stands for /sys,
 * so the PMUs are read from sysfs_root/bus/event_source/devices. Tests
 * point it at a recorded tree.
 */
int td_event_resolve_at(const char *sysfs_root, const char *name, struct td_event *out,
			char *err, size_t errlen);
int td_event_list_parse_at(const char *sysfs_root, const char *list, struct td_event *out,
			   size_t max, size_t *count, char *err, size_t errlen);

#endif
