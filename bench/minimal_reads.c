// SPDX-License-Identifier: BSD-3-Clause
/*
 * td-minimal-reads EVENTS: loads bench/minimal_reads.bpf.c with the same
 * per-CPU counters topdown would open, read as topdown reads them (the
 * count alone where the times need no reading), and stays attached until
 * SIGINT or SIGTERM. --timed EVENTS reads every counter with its times;
 * --empty attaches the do-nothing program instead. Used only by
 * bench/sched_switch.sh.
 */
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "events.h"
#include "minimal_reads.skel.h"
#include "pmu.h"
#include "topdown.h"

static volatile sig_atomic_t done;

static void on_signal(int sig)
{
	(void)sig;
	done = 1;
}

int main(int argc, char **argv)
{
	struct td_event events[TD_MAX_SLOTS];
	struct td_pmu_counters *counters = NULL;
	struct minimal_reads_bpf *skel;
	size_t nr_events;
	char err[512];

	bool empty = argc == 2 && !strcmp(argv[1], "--empty");
	bool timed = argc == 3 && !strcmp(argv[1], "--timed");
	struct td_counter_group group = { 0 };

	if (timed) {
		argc--;
		argv++;
	}
	if (argc != 2 || (!empty && td_event_list_parse(argv[1], events, TD_MAX_SLOTS, &nr_events, err, sizeof(err)))) {
		fprintf(stderr, "usage: td-minimal-reads [--timed] EVENT[,EVENT...] | --empty%s%s\n",
			argc == 2 ? ": " : "", argc == 2 ? err : "");
		return 2;
	}
	skel = minimal_reads_bpf__open();
	if (!skel)
		return 1;
	if (empty)
		nr_events = 0;
	bpf_program__set_autoload(empty ? skel->progs.minimal_switch : skel->progs.empty_switch, false);
	skel->rodata->nr_slots = nr_events;
	group.nr_events = nr_events; /* one group, each event standing alone, as td_pmu_open opens them */
	for (size_t n = 0; n < nr_events; n++)
		group.events[n] = n;
	skel->rodata->untimed_slots = timed ? 0 : td_counter_group_untimed_slots(events, &group);
	bpf_map__set_max_entries(skel->maps.counters, libbpf_num_possible_cpus() * TD_MAX_SLOTS);
	if (minimal_reads_bpf__load(skel) ||
	    td_pmu_open(events, nr_events, bpf_map__fd(skel->maps.counters), TD_MAX_SLOTS, &counters, err, sizeof(err)) ||
	    minimal_reads_bpf__attach(skel)) {
		fprintf(stderr, "td-minimal-reads: cannot start: %s\n", err);
		minimal_reads_bpf__destroy(skel);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while (!done)
		pause();
	minimal_reads_bpf__destroy(skel);
	td_pmu_close(counters);
	return 0;
}
