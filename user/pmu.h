/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Opens the counters the BPF side reads: one perf event per CPU per slot,
 * counting every task on that CPU (pid -1), never sampling.
 */
#ifndef TOPDOWN_PMU_H
#define TOPDOWN_PMU_H

#include <stdbool.h>
#include <stddef.h>

#include "events.h"

struct td_pmu_counters;

/*
 * Opens events[0..count) on every CPU and stores the fds in the BPF
 * perf-event-array map_fd at cpu * slots_per_cpu + slot. Offline CPUs are
 * skipped. On failure nothing stays open and err names the event, the
 * reason and the fix.
 */
int td_pmu_open(const struct td_event *events, size_t count, int map_fd,
		int slots_per_cpu, struct td_pmu_counters **out,
		char *err, size_t errlen);
void td_pmu_close(struct td_pmu_counters *counters);

/*
 * Whether this host has hardware counters: opens a cycles counter on
 * CPU 0 and closes it. When not, why says so in one sentence.
 */
bool td_pmu_hardware_available(char *why, size_t whylen);

#endif
