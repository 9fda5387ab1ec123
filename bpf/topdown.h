/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one header shared by topdown.bpf.c and the userspace loader: map
 * layouts and the per-thread record. Nothing here knows about metrics.
 */
#ifndef TOPDOWN_BPF_H
#define TOPDOWN_BPF_H

#define TD_MAX_SLOTS 8      /* counters read on every switch */
#define TD_TASK_COMM_LEN 16

/* Sums of per-slice deltas of one counter slot. enabled/running let
 * userspace scale a multiplexed counter to the whole time it was enabled. */
struct td_slot_sum {
	__u64 count;
	__u64 enabled;
	__u64 running;
};

/*
 * One thread's totals since the collector attached. The same record goes
 * to the exit ring buffer, with exited set, when the thread dies.
 * start_ns tells a reused tid apart from the thread it replaced.
 */
struct td_thread_stats {
	__u32 tid;           /* 0: a free place in the records array */
	__u32 tgid;
	__u64 start_ns;
	char comm[TD_TASK_COMM_LEN];
	struct td_slot_sum slots[TD_MAX_SLOTS];
	__u64 oncpu_ns;
	__u64 voluntary_switches;
	__u64 involuntary_switches;
	__u64 migrations;
	__u64 runq_wait_ns;
	__u64 charged_runtime_ns; /* kernel bookkeeping: se.sum_exec_runtime already in oncpu_ns */
	__u64 charged_run_delay_ns; /* kernel bookkeeping: sched_info.run_delay already in runq_wait_ns */
	__u64 unread_oncpu_ns; /* of oncpu_ns, the slices whose counters were not read: their
				* start was never seen (see on_switch); userspace extrapolates */
	__s32 last_cpu;      /* kernel bookkeeping: -1 before the first slice */
	__u32 exited;        /* TD_EXIT_SENT or TD_EXIT_IN_MAP once the thread has died */
	__u32 epoch;         /* kernel bookkeeping: the counting period the charged_* figures belong to */
	__u32 place;         /* kernel bookkeeping: the record's index in the records array */
};

#define TD_EXIT_SENT 1   /* the exit record went to the ring; the programs freed the place */
#define TD_EXIT_IN_MAP 2 /* the full ring refused it: userspace reads the record and frees it */

/*
 * The thread records are an array, and a thread's place in it is found
 * by its tid: an index of a u32 per tid (place + 1; 0: none), in blocks
 * of TD_INDEX_BLOCK, the elements of an array map sized from pid_max.
 * Both lookups are array indexing, which the verifier inlines, where a
 * hash of tids cost a hash and a bucket walk on every switch of a target
 * (docs/BENCHMARKS.md). The price is 4 bytes per possible pid: 128 KiB at
 * a pid_max of 32768, 16 MiB at 4194304. Free places wait in a stack map;
 * userspace fills it at start, the programs take a place for a new thread
 * and give it back at the thread's exit.
 */
#define TD_INDEX_BLOCK 1024

struct td_index_block {
	__u32 place[TD_INDEX_BLOCK];
};

/* What the kernel side could not keep, reported with every run. */
struct td_drop_counts {
	__u64 slices;        /* slices not charged: every thread record was taken */
	__u64 exits_in_map;  /* exit records the full ring buffer refused: kept
			      * in their records, marked TD_EXIT_IN_MAP, read and
			      * freed at the next drain (nothing lost, but a sign
			      * the drain is too slow) */
	__u64 threads;       /* threads that died without a record (the map was
			      * full all their life): absent from every run */
	__u64 samples;       /* locate: samples taken on targets, kept or not */
	__u64 samples_lost;  /* samples not counted: the sample map was full */
	__u64 stacks_lost;   /* samples counted without a stack the kernel could
			      * not keep (stack map full or a bucket taken) */
};

/*
 * Locate: samples of the sampling event counted in the kernel per thread
 * and stack, so nothing wakes userspace per sample. The stacks are ids in
 * a stack-trace map; an id below 0 means that side has no stack (a kernel
 * thread's user side) or lost it (drops.stacks_lost).
 */
#define TD_STACK_DEPTH 127 /* PERF_MAX_STACK_DEPTH: frames kept per side */

struct td_sample_key {
	__u32 tid;
	__u32 pid;
	__s32 user_stack;
	__s32 kernel_stack;
};

struct td_sample_value {
	__u64 count;
	char comm[TD_TASK_COMM_LEN];
};

/*
 * The target processes: a byte per tgid (1: followed), in blocks of
 * TD_TARGET_BLOCK, the elements of an array map. Finding a tgid there is
 * an index on every switch, where a hash costs a hash and a bucket walk
 * (docs/BENCHMARKS.md). Userspace maps the array and sets or clears its
 * bytes in place, as the programs set them at exec, so neither side ever
 * rewrites a byte of the other's.
 */
#define TD_TARGET_BLOCK 4096

struct td_target_block {
	__u8 is[TD_TARGET_BLOCK];
};

/*
 * Process names followed in process mode: a comm, NUL-padded to
 * TD_TASK_COMM_LEN, is the key of the target_comms hash.
 */
#define TD_MAX_TARGET_COMMS 64

#endif
