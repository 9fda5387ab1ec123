// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The benchmark's yardstick: a sched_switch program that reads the same
 * counter slots as topdown's and does nothing else, and one that does
 * nothing at all. topdown's per-switch cost is reported beside both.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "topdown.h"

const volatile __u32 nr_slots = 0;
const volatile __u32 untimed_slots = 0; /* as topdown reads them: td_counter_group_untimed_slots */

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} counters SEC(".maps");

struct readings {
	struct bpf_perf_event_value slot[TD_MAX_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct readings);
} last SEC(".maps"); /* somewhere to put the readings so they are not optimised away */

SEC("tp_btf/sched_switch")
int BPF_PROG(minimal_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0;
	struct readings *r = bpf_map_lookup_elem(&last, &zero);

	if (!r)
		return 0;
	for (__u32 slot = 0; slot < TD_MAX_SLOTS; slot++) {
		if (slot >= nr_slots)
			break;
		if (untimed_slots & (1u << slot))
			r->slot[slot].counter = bpf_perf_event_read(&counters, cpu * TD_MAX_SLOTS + slot);
		else
			bpf_perf_event_read_value(&counters, cpu * TD_MAX_SLOTS + slot, &r->slot[slot], sizeof(r->slot[0]));
	}
	return 0;
}

/* The floor: what bpf_stats reports for a program that does nothing. */
SEC("tp_btf/sched_switch")
int BPF_PROG(empty_switch)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
