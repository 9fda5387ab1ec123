// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Per-thread counter accounting on sched_switch.
 *
 * Userspace opens one perf event per CPU per counter slot and puts the fds
 * in `counters` at cpu * TD_MAX_SLOTS + slot. Each CPU keeps the reading
 * taken when the current thread's slice began; at the next switch (or a
 * flush) the difference is charged to that thread. A slice is only opened
 * for threads we track, so a switch between two untracked threads costs
 * two loads from the targets array, one per task's tgid (none with
 * --system-wide), and nothing else: the filter path.
 *
 * Every handler exists twice: tp_btf where the kernel has BTF-enabled
 * tracing programs, raw_tp otherwise. Userspace probes and loads one set.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "topdown.h"

#define TASK_RUNNING 0
#define TASK_DEAD 0x80
#define EFAULT 14 /* bpf_get_stackid: no stack on that side */

const volatile bool system_wide = false;
const volatile __u32 nr_slots = 0;
/* --process NAME: processes that exec (or fork) with a comm of target_comms become targets */
const volatile bool match_comm = false;

/*
 * Set by userspace through the mapped .bss. While paused the programs
 * charge nothing (the agent's duty cycle); each resume starts a new
 * epoch, and a thread's runtime or a CPU's slice left over from an older
 * epoch is taken as a fresh start, never charged: it spans the pause.
 */
volatile __u32 paused = 0;
volatile __u32 epoch = 0;

/*
 * The slots of the active counter group whose enabled and running times
 * are not read, bit n for slot n (set by userspace with each group): a
 * software event standing alone is never multiplexed, so both of its
 * times over a slice are the slice itself, which the scheduler's runtime
 * gives. bpf_perf_event_read_value reads the perf clock for those times
 * at every call, as much again as the count: see docs/BENCHMARKS.md.
 */
volatile __u32 untimed_slots = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} counters SEC(".maps"); /* max_entries set by userspace: cpus * TD_MAX_SLOTS */

/* The thread records and their index by tid: see TD_INDEX_BLOCK. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct td_thread_stats);
} records SEC(".maps"); /* max_entries set by userspace: the threads it can follow at once */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct td_index_block);
} record_index SEC(".maps"); /* max_entries set by userspace from pid_max */

struct {
	__uint(type, BPF_MAP_TYPE_STACK);
	__type(value, __u32);
} free_places SEC(".maps"); /* max_entries as records'; filled by userspace */

/*
 * Per CPU, one above the highest place it ever gave out: userspace reads
 * the records below the highest of them. A stack hands the places given
 * back out first, so they stay packed at the start of the array.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} places_used SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct td_target_block);
} targets SEC(".maps"); /* tgids tracked in process mode; max_entries set by userspace from pid_max */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TD_MAX_TARGET_COMMS);
	__type(key, char[TD_TASK_COMM_LEN]);
	__type(value, __u8);
} target_comms SEC(".maps"); /* process names followed, filled by userspace */

/* The counter readings of the slice in flight on each CPU. */
struct cpu_slice {
	__u32 tid; /* whose slice; 0: no tracked thread on this CPU */
	__u32 epoch; /* when the start readings were taken */
	__u64 start_runtime_ns; /* the thread's se.sum_exec_runtime at switch-in: exact there */
	__u64 start_run_delay_ns; /* its sched_info.run_delay there, before the wait that ends */
	struct bpf_perf_event_value start[TD_MAX_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_slice);
} slices SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
} exits SEC(".maps"); /* max_entries set by userspace */

/* Locate's maps: max_entries set by userspace (1 when not sampling). */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, TD_STACK_DEPTH * sizeof(__u64));
} stack_traces SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct td_sample_key);
	__type(value, struct td_sample_value);
} sample_counts SEC(".maps");

struct td_drop_counts drops = {};

/* Before 5.14 the field was `long state`. */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

/*
 * Task fields on the switch path. With tp_btf the arguments are trusted
 * BTF pointers the program may load from directly; raw_tp must go through
 * bpf_probe_read_kernel. `btf` is a constant after inlining, so each
 * flavour compiles to one kind of access, and the direct loads keep the
 * per-switch cost down (see docs/BENCHMARKS.md).
 */
#define TASK_FIELD(btf, task, field) ((btf) ? (task)->field : BPF_CORE_READ(task, field))

static __always_inline __u32 task_state(struct task_struct *task, const bool btf)
{
	if (bpf_core_field_exists(task->__state))
		return TASK_FIELD(btf, task, __state);
	return TASK_FIELD(btf, (struct task_struct___pre514 *)task, state);
}

/* tgid's byte in the targets array; NULL above the pid_max it was sized for */
static __always_inline __u8 *target_byte(__u32 tgid)
{
	__u32 block = tgid / TD_TARGET_BLOCK;
	struct td_target_block *targets_of_block = bpf_map_lookup_elem(&targets, &block);

	return targets_of_block ? &targets_of_block->is[tgid % TD_TARGET_BLOCK] : NULL;
}

static __always_inline bool is_target(__u32 tid, __u32 tgid)
{
	__u8 *followed;

	if (tid == 0) /* the idle task is idle time, not a thread */
		return false;
	if (system_wide)
		return true;
	followed = target_byte(tgid);
	return followed && *followed;
}

/*
 * On-CPU time comes from the scheduler's own account of the thread
 * (se.sum_exec_runtime, as CLOCK_THREAD_CPUTIME_ID and schedstat report
 * it): each charge adds what the thread ran since the previous charge.
 * That needs no switch-in to have been seen, and timestamps taken here
 * would drift from the scheduler's clock by some hundred ns per switch.
 * For the running thread a flush sees the runtime as of its last tick.
 */
static __always_inline __u64 task_runtime(struct task_struct *task, const bool btf)
{
	return TASK_FIELD(btf, task, se.sum_exec_runtime);
}

/*
 * Run-queue wait likewise comes from the scheduler's account
 * (sched_info.run_delay, the second figure of schedstat): the time the
 * thread spent runnable, waking or preempted, before each switch-in. The
 * kernel adds a wait at the switch-in, after the sched_switch tracepoint,
 * so a switch-out charges the waits up to the slice now ending. That
 * needs no sched_wakeup program. Without CONFIG_SCHED_INFO it reads 0.
 */
static __always_inline __u64 task_run_delay(struct task_struct *task, const bool btf)
{
	if (!bpf_core_field_exists(task->sched_info))
		return 0;
	return TASK_FIELD(btf, task, sched_info.run_delay);
}

/* Where a thread's charges start: its runtime and run-queue wait then. */
struct charge_base {
	__u64 runtime_ns;
	__u64 run_delay_ns;
};

/* tid's entry in the record index; NULL above the pid_max it was sized for */
static __always_inline __u32 *index_entry(__u32 tid)
{
	__u32 block = tid / TD_INDEX_BLOCK;
	struct td_index_block *index = bpf_map_lookup_elem(&record_index, &block);

	return index ? &index->place[tid % TD_INDEX_BLOCK] : NULL;
}

/* The thread's record, or NULL; *entry is its index entry (NULL: tid beyond the index). */
static __always_inline struct td_thread_stats *find_record(__u32 tid, __u32 **entry)
{
	struct td_thread_stats *stats;
	__u32 place;

	*entry = index_entry(tid);
	if (!*entry || !**entry)
		return NULL;
	place = **entry - 1;
	stats = bpf_map_lookup_elem(&records, &place);
	/* a place that userspace took back (the thread vanished) and gave to another */
	return stats && stats->tid == tid ? stats : NULL;
}

/*
 * The thread's record, created on first use with its runtime and wait up
 * to base as already charged; NULL when every place is taken.
 */
static __always_inline struct td_thread_stats *thread_stats(struct task_struct *task, __u32 tid,
							    const struct charge_base *base)
{
	struct td_thread_stats *stats;
	__u32 *entry, place, zero = 0;
	__u64 *used;

	stats = find_record(tid, &entry);
	if (stats || !entry)
		return stats;
	/*
	 * Only the CPU a thread runs on, or its wakeup under its run queue's
	 * lock, ever gets here for it: no two programs create one tid's record.
	 */
	if (bpf_map_pop_elem(&free_places, &place))
		return NULL;
	stats = bpf_map_lookup_elem(&records, &place);
	if (!stats)
		return NULL;
	__builtin_memset(stats, 0, sizeof(*stats));
	stats->place = place;
	stats->tgid = BPF_CORE_READ(task, tgid);
	stats->start_ns = BPF_CORE_READ(task, start_time);
	stats->charged_runtime_ns = base->runtime_ns;
	stats->charged_run_delay_ns = base->run_delay_ns;
	stats->last_cpu = -1;
	stats->epoch = epoch;
	BPF_CORE_READ_STR_INTO(&stats->comm, task, comm);
	barrier(); /* tid last: userspace reads the records whose tid is set */
	stats->tid = tid;
	*entry = place + 1;
	used = bpf_map_lookup_elem(&places_used, &zero);
	if (used && *used <= place)
		*used = place + 1;
	return stats;
}

/* bpf_perf_event_read returns an error as a count in [-4095, -1]. */
#define MAX_ERRNO 4095

/* One slot's reading now, its times too unless untimed; all zero when it cannot be read. */
static __always_inline void read_slot(__u32 slot, __u32 cpu, bool untimed, struct bpf_perf_event_value *now)
{
	__u32 index = cpu * TD_MAX_SLOTS + slot;

	if (untimed) {
		__u64 count = bpf_perf_event_read(&counters, index);

		now->counter = count >= (__u64)-MAX_ERRNO ? 0 : count;
		now->enabled = now->running = 0;
	} else if (bpf_perf_event_read_value(&counters, index, now, sizeof(*now))) {
		__builtin_memset(now, 0, sizeof(*now));
	}
}

/*
 * Reads every slot on this CPU, charges the difference from the slice
 * start to stats (when given; slice_ns is then the slice's runtime, both
 * times of an untimed slot), and makes the reading the new slice start.
 */
static __always_inline void read_slots(struct cpu_slice *slice, struct td_thread_stats *stats, __u32 cpu,
				       __u64 slice_ns)
{
	__u32 untimed_mask = untimed_slots; /* one load: userspace may change it at a rotation */
	struct bpf_perf_event_value now;

	for (__u32 slot = 0; slot < TD_MAX_SLOTS; slot++) {
		bool untimed = untimed_mask & (1u << slot);

		if (slot >= nr_slots)
			break;
		read_slot(slot, cpu, untimed, &now);
		if (stats) {
			stats->slots[slot].count += now.counter - slice->start[slot].counter;
			stats->slots[slot].enabled += untimed ? slice_ns : now.enabled - slice->start[slot].enabled;
			stats->slots[slot].running += untimed ? slice_ns : now.running - slice->start[slot].running;
		}
		slice->start[slot] = now;
	}
}

/*
 * Charges the thread's runtime and run-queue wait since the previous
 * charge; counted says whether the counters of that time were read (the
 * slice's start was seen), else it is also added to unread_oncpu_ns. A
 * record last charged before a pause starts again from base: what the
 * thread did since then is not ours to count.
 */
static __always_inline void charge_time(struct td_thread_stats *stats, struct task_struct *task,
					const struct charge_base *base, __u32 cpu, bool counted,
					const bool btf)
{
	__u64 runtime = task_runtime(task, btf), run_delay = task_run_delay(task, btf);

	if (stats->epoch != epoch) {
		stats->epoch = epoch;
		stats->charged_runtime_ns = base->runtime_ns;
		stats->charged_run_delay_ns = base->run_delay_ns;
	}
	stats->oncpu_ns += runtime - stats->charged_runtime_ns;
	if (!counted)
		stats->unread_oncpu_ns += runtime - stats->charged_runtime_ns;
	stats->charged_runtime_ns = runtime;
	stats->runq_wait_ns += run_delay - stats->charged_run_delay_ns;
	stats->charged_run_delay_ns = run_delay;
	if (stats->last_cpu >= 0 && stats->last_cpu != (__s32)cpu)
		stats->migrations++;
	stats->last_cpu = cpu;
}

/*
 * A dead thread's last switch: send its totals and give its place back.
 * Its index entry is cleared either way, so that a new thread with its
 * tid starts a record of its own.
 */
static __always_inline void retire_thread(struct td_thread_stats *stats, __u32 tid)
{
	__u32 *entry = index_entry(tid), place = stats->place;

	if (entry)
		*entry = 0;
	stats->exited = TD_EXIT_SENT;
	if (bpf_ringbuf_output(&exits, stats, sizeof(*stats), 0)) {
		stats->exited = TD_EXIT_IN_MAP;
		__sync_fetch_and_add(&drops.exits_in_map, 1);
		return;
	}
	stats->tid = 0;
	bpf_map_push_elem(&free_places, &place, 0);
}

/*
 * Paused: nothing is charged, but a tracked thread that dies still sends
 * its record, so the map does not keep the dead.
 */
static __always_inline int on_switch_paused(struct task_struct *prev, const bool btf)
{
	__u32 tid = TASK_FIELD(btf, prev, pid), *entry;
	struct td_thread_stats *stats;

	if (!(task_state(prev, btf) & TASK_DEAD))
		return 0;
	stats = find_record(tid, &entry);
	if (stats)
		retire_thread(stats, tid);
	return 0;
}

/* Counters are charged only for a slice whose start was read, in this epoch. */
static __always_inline bool slice_is_of(const struct cpu_slice *slice, __u32 tid)
{
	return slice->tid == tid && slice->epoch == epoch;
}

static __always_inline int on_switch(bool preempt, struct task_struct *prev, struct task_struct *next,
				     const bool btf)
{
	__u32 prev_tid = TASK_FIELD(btf, prev, pid), next_tid = TASK_FIELD(btf, next, pid);
	bool track_prev = is_target(prev_tid, TASK_FIELD(btf, prev, tgid));
	bool track_next = is_target(next_tid, TASK_FIELD(btf, next, tgid));
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0;
	struct td_thread_stats *stats = NULL;
	struct charge_base base;
	struct cpu_slice *slice;
	bool counted;

	if (!track_prev && !track_next)
		return 0; /* neither side tracked: the cheap path */
	if (paused) /* after the filter: a thread with a record is a target's */
		return on_switch_paused(prev, btf);
	slice = bpf_map_lookup_elem(&slices, &zero);
	if (!slice)
		return 0;

	if (track_prev) {
		/*
		 * Where prev's charges start when its record is new or older
		 * than this epoch: its switch-in, exact, when seen in this
		 * epoch, else now.
		 */
		base.runtime_ns = task_runtime(prev, btf);
		base.run_delay_ns = task_run_delay(prev, btf);
		/* two loads, not one from either pointer: the verifier refuses that */
		barrier_var(base.runtime_ns);
		barrier_var(base.run_delay_ns);
		if (slice_is_of(slice, prev_tid)) {
			base.runtime_ns = slice->start_runtime_ns;
			base.run_delay_ns = slice->start_run_delay_ns;
		}
		stats = thread_stats(prev, prev_tid, &base);
		if (!stats)
			__sync_fetch_and_add(&drops.slices, 1);
		if (!stats && (task_state(prev, btf) & TASK_DEAD))
			__sync_fetch_and_add(&drops.threads, 1);
	}
	/*
	 * A slice that is not prev's: this kernel now and then runs a thread
	 * with no switch-in event for it, so its start was never read. Its
	 * time is charged as unread: userspace scales the counts of the
	 * thread's read slices up to it, and lowers their confidence.
	 */
	counted = stats && slice_is_of(slice, prev_tid);
	read_slots(slice, counted ? stats : NULL, cpu, task_runtime(prev, btf) - slice->start_runtime_ns);
	if (stats) {
		__u32 state = task_state(prev, btf);

		charge_time(stats, prev, &base, cpu, counted, btf);
		/* threads rename themselves */
		if (btf)
			__builtin_memcpy(stats->comm, prev->comm, TD_TASK_COMM_LEN);
		else
			BPF_CORE_READ_STR_INTO(&stats->comm, prev, comm);
		if (!preempt && state != TASK_RUNNING)
			stats->voluntary_switches++;
		else
			stats->involuntary_switches++;
		if (state & TASK_DEAD)
			retire_thread(stats, prev_tid);
	}

	/* next's record is not touched: its slice's start is all it needs */
	slice->tid = track_next ? next_tid : 0;
	slice->epoch = epoch;
	if (track_next) {
		slice->start_runtime_ns = task_runtime(next, btf);
		slice->start_run_delay_ns = task_run_delay(next, btf);
	}
	return 0;
}

/*
 * A new thread of a target: its record from birth, so that its first
 * slice is charged even when its switch-in is not seen (see on_switch).
 */
static __always_inline int on_wakeup_new(struct task_struct *task)
{
	struct charge_base base = {
		.runtime_ns = BPF_CORE_READ(task, se.sum_exec_runtime),
		.run_delay_ns = task_run_delay(task, false),
	};
	__u32 tid = BPF_CORE_READ(task, pid);

	if (!paused && is_target(tid, BPF_CORE_READ(task, tgid)))
		thread_stats(task, tid, &base);
	return 0;
}

/* Exec or fork of a process with one of the names we were asked to follow. */
static __always_inline int on_new_process(struct task_struct *task)
{
	char comm[TD_TASK_COMM_LEN] = {}; /* NUL-padded, as the keys are */
	__u32 tgid = BPF_CORE_READ(task, tgid);
	__u8 *followed;

	if (!match_comm || BPF_CORE_READ(task, pid) != tgid)
		return 0;
	BPF_CORE_READ_STR_INTO(&comm, task, comm);
	if (bpf_map_lookup_elem(&target_comms, comm) && (followed = target_byte(tgid)))
		*followed = 1;
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(switch_btf, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(preempt, prev, next, true);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(switch_raw, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(preempt, prev, next, false);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(wakeup_new_btf, struct task_struct *task)
{
	return on_wakeup_new(task);
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(wakeup_new_raw, struct task_struct *task)
{
	return on_wakeup_new(task);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(exec_btf, struct task_struct *task)
{
	return on_new_process(task);
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(exec_raw, struct task_struct *task)
{
	return on_new_process(task);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(fork_btf, struct task_struct *parent, struct task_struct *child)
{
	return on_new_process(child);
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(fork_raw, struct task_struct *parent, struct task_struct *child)
{
	return on_new_process(child);
}

/*
 * Run by userspace on each CPU (BPF_PROG_TEST_RUN with
 * BPF_F_TEST_RUN_ON_CPU): charges the slice in flight up to now, so a
 * thread that never switches is still accounted. Run once at start (or
 * at a resume), it opens slices for the tracked threads already on a CPU.
 */
SEC("raw_tp")
int flush_cpu(void *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, cpu = bpf_get_smp_processor_id(), zero = 0;
	struct td_thread_stats *stats;
	struct charge_base base;
	struct cpu_slice *slice;
	bool counted;

	if (paused || !is_target(tid, pid_tgid >> 32))
		return 0;
	slice = bpf_map_lookup_elem(&slices, &zero);
	/* new (running since before we attached) or stale: counted from now */
	base.runtime_ns = task_runtime(task, false);
	base.run_delay_ns = task_run_delay(task, false);
	stats = thread_stats(task, tid, &base);
	if (!slice)
		return 0;
	if (!stats)
		__sync_fetch_and_add(&drops.slices, 1);
	counted = stats && slice_is_of(slice, tid);
	read_slots(slice, counted ? stats : NULL, cpu, base.runtime_ns - slice->start_runtime_ns);
	slice->tid = tid;
	slice->epoch = epoch;
	slice->start_runtime_ns = base.runtime_ns;
	slice->start_run_delay_ns = base.run_delay_ns;
	if (stats) /* a new record has nothing to charge yet: counted or not, it adds 0 */
		charge_time(stats, task, &base, cpu, counted, false);
	return 0;
}

/*
 * Locate: runs at every sample of the sampling event, one event per CPU.
 * The same targets as the counters (is_target), the same pause; the
 * sample only bumps a count keyed by thread and stacks.
 */
SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct td_sample_key key = { .tid = (__u32)pid_tgid, .pid = pid_tgid >> 32 };
	struct td_sample_value *value, fresh = { .count = 1 };

	if (paused || !is_target(key.tid, key.pid))
		return 0;
	__sync_fetch_and_add(&drops.samples, 1);
	key.user_stack = bpf_get_stackid(ctx, &stack_traces, BPF_F_USER_STACK);
	key.kernel_stack = bpf_get_stackid(ctx, &stack_traces, 0);
	/* -EFAULT: no stack on that side (a kernel thread's user side); anything else lost one */
	if ((key.user_stack < 0 && key.user_stack != -EFAULT) ||
	    (key.kernel_stack < 0 && key.kernel_stack != -EFAULT))
		__sync_fetch_and_add(&drops.stacks_lost, 1);
	value = bpf_map_lookup_elem(&sample_counts, &key);
	if (value) {
		__sync_fetch_and_add(&value->count, 1);
		return 0;
	}
	bpf_get_current_comm(fresh.comm, sizeof(fresh.comm));
	if (bpf_map_update_elem(&sample_counts, &key, &fresh, BPF_NOEXIST)) {
		value = bpf_map_lookup_elem(&sample_counts, &key); /* another CPU added it meanwhile */
		if (value)
			__sync_fetch_and_add(&value->count, 1);
		else
			__sync_fetch_and_add(&drops.samples_lost, 1);
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
