/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The BPF collector: loads and attaches the sched_switch programs, opens
 * the counters, tracks targets, and turns the kernel's cumulative
 * per-thread totals into per-interval and whole-run thread rows.
 * It knows nothing of formulas or storage.
 */
#ifndef TOPDOWN_COLLECTOR_H
#define TOPDOWN_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "events.h"
#include "pmu.h"
#include "run.h"
#include "sampler.h"

struct td_collector_opts {
	bool system_wide;
	const pid_t *pids;        /* --pid */
	size_t nr_pids;
	/* --process: running processes with these names now, and ones that start later */
	const char *const *process_names;
	size_t nr_process_names;  /* at most TD_MAX_TARGET_COMMS */
	bool wait_for_targets;    /* no process of a name running yet is fine: it is waited for */
	const struct td_event *events;
	size_t nr_events;         /* at most TD_MAX_EVENTS */
	/*
	 * The groups the events are counted in (user/collect/tma_events.h builds them
	 * for a Top-Down depth). NULL: the events in order, max_group_events
	 * (0: TD_MAX_SLOTS) to a group, each group counted in turn.
	 */
	const struct td_counter_plan *plan;
	unsigned max_group_events; /* tests force rotation of software events with it */
	const char *pmu_cpus;     /* CPUs the events' PMU covers (sysfs cpu list); NULL: all */
	uint32_t max_threads;     /* thread records: how many threads can have one at once; 0: a default */
	bool force_raw_tp;        /* skip the tp_btf probe: tests the fallback path */
	const struct td_sample_opts *sample; /* locate: sample this event's stacks; NULL: no sampling */
};

struct td_collector;

/* Loads, attaches and starts counting; NULL with err set on failure. */
struct td_collector *td_collector_new(const struct td_collector_opts *opts,
				      char *err, size_t errlen);
void td_collector_free(struct td_collector *collector);

/* Which tracepoint flavour was attached: "tp_btf" or "raw_tp". */
const char *td_collector_attach_kind(const struct td_collector *collector);

/*
 * Takes in exit records for up to timeout_ms. Call it often: it keeps the
 * ring buffer from filling while threads come and go.
 */
int td_collector_poll(struct td_collector *collector, int timeout_ms,
		      char *err, size_t errlen);

/*
 * Charges the slice in flight on every CPU, drains the kernel's totals,
 * and appends to interval the threads that ran (or exited) since the
 * previous drain, with their deltas: the active group's events scaled by
 * their enabled/running times, NaN (running fraction 0) for the events of
 * the other groups. interval->threads is owned by the caller afterwards.
 * interval NULL: the deltas only go into the totals (no rows are built).
 */
int td_collector_drain(struct td_collector *collector, struct td_interval *interval,
		       char *err, size_t errlen);

/*
 * Ends the active counter group's turn and starts group's (0 up to
 * td_collector_group_count). Call it between drains (the intervals, or
 * an agent's windows), never after the last. The slot readings taken across the switch mix two
 * events, so the collector charges them at once (flushing every CPU) and
 * discards them: the counters lose the moment of the switch, the
 * scheduling figures lose nothing. No-op when group is the active one;
 * -EINVAL with err when there is no such group.
 */
int td_collector_activate_group(struct td_collector *collector, size_t group, char *err, size_t errlen);

/* The next group's turn (td_collector_activate_group), after the last the first. No-op with one group. */
int td_collector_rotate(struct td_collector *collector, char *err, size_t errlen);

/*
 * Every thread seen since start (or since the last td_collector_end_window),
 * with its totals: the run's thread rows. Call after a final drain.
 * *rows is malloc'd.
 *
 * A whole-run counter is the sum over the intervals its groups were
 * active, scaled to the thread's counter time over all intervals:
 * count * counted / running; its running_fraction is running / counted,
 * the share of the thread's time it was really counted.
 */
int td_collector_totals(const struct td_collector *collector,
			struct td_thread_row **rows, size_t *count);

/*
 * Marks starved[e] (nr_events of them) for each event whose counter group
 * had its turns while threads ran (enabled time above 0) yet never got the
 * PMU's counters (running 0 in every thread): another monitor took them
 * after the plan was made. Returns how many it marked.
 */
size_t td_collector_starved_events(const struct td_collector *collector, bool *starved);

/*
 * Ends a window (call after a drain): *rows receives the threads that ran
 * or exited since the previous window's end, with their totals over the
 * window (as td_collector_totals computes them), and the collector
 * forgets what only that window needed: exited threads, the per-window
 * sums, threads that are gone without an exit record, and target
 * processes that have exited. Memory then depends on the live threads,
 * not on how many windows or threads went by. *rows is malloc'd.
 */
int td_collector_end_window(struct td_collector *collector, struct td_thread_row **rows,
			    size_t *count, char *err, size_t errlen);

/*
 * The duty cycle: while paused the BPF programs charge nothing (they stay
 * attached, and dying threads still send their records). Drain before
 * pausing; what a resume finds running starts afresh, the pause is never
 * charged to anyone.
 */
void td_collector_pause(struct td_collector *collector);
int td_collector_resume(struct td_collector *collector, char *err, size_t errlen);

/* Slices the kernel could not charge (every thread record taken) since start. */
uint64_t td_collector_dropped(const struct td_collector *collector);

/* Counter groups that take turns (td_collector_rotate); 1 when all count at once. */
size_t td_collector_group_count(const struct td_collector *collector);

/*
 * Threads that died without ever having a record (the records were
 * full all their life) since start: missing from every row. Exact.
 */
uint64_t td_collector_lost_threads(const struct td_collector *collector);

/*
 * Exit records the full exit ring refused since start: each stayed in the
 * records until the next drain read it, so nothing was lost, but the
 * drains are too far apart for the threads' churn.
 */
uint64_t td_collector_exits_kept(const struct td_collector *collector);

/*
 * Whether this kernel loads BPF_PROG_TYPE_TRACING programs on
 * sched_switch (the tp_btf flavour); else the raw_tp one is used. Decided
 * by loading a trivial one; needs the privileges collecting does.
 */
bool td_collector_tp_btf_supported(void);

/*
 * Of the on-CPU time of thread tid since the start, what ran in slices
 * whose counters could not be read (their switch-in was never seen): its
 * counts are extrapolated over it, and their running fraction is lower by
 * its share. 0 for a tid not seen.
 */
uint64_t td_collector_unread_ns(const struct td_collector *collector, uint32_t tid);

/*
 * The time the collector's BPF programs have run while the kernel timed
 * them, summed. The kernel times them only while asked to:
 * td_collector_time_bpf asks, or kernel.bpf_stats_enabled is set.
 * -EOPNOTSUPP with err saying so when neither holds.
 */
int td_collector_bpf_run_ns(const struct td_collector *collector, uint64_t *run_ns,
			    char *err, size_t errlen);

/*
 * Turns the kernel's timing of BPF programs on (BPF_ENABLE_STATS, which
 * needs CAP_SYS_ADMIN) or off. While on, every BPF program on the host
 * pays two clock reads per run (~60 ns in a KVM guest, docs/BENCHMARKS.md),
 * so the agent times a sample of each window only. 0, or -errno with err.
 */
int td_collector_time_bpf(struct td_collector *collector, bool on, char *err, size_t errlen);

/* kernel.bpf_stats_enabled is set: every BPF program is timed all along, whoever asked. */
bool td_collector_bpf_always_timed(void);

/* Running processes with process_names[name] found by the last scan of /proc. */
size_t td_collector_processes_named(const struct td_collector *collector, size_t name);

/*
 * Locate: hands over the stacks sampled since the previous call, each
 * (thread, stack) once with its sample count, sorted by pid, and empties
 * the kernel's maps. Call it at each drain, while the sampled processes
 * still live, so their maps can be read. 0 without sampling.
 */
int td_collector_drain_samples(struct td_collector *collector, td_raw_stack_fn fn, void *ctx,
			       char *err, size_t errlen);

/*
 * Locate: samples opts' event from now on, on the CPUs the collector was
 * given; drain the samples first (they carry no event of their own). On
 * failure the old event samples on. -EINVAL when the collector does not
 * sample.
 */
int td_collector_resample(struct td_collector *collector, const struct td_sample_opts *opts, char *err,
			  size_t errlen);

/* Locate's tallies since start: samples taken, samples the full map refused, and stacks lost. */
struct td_sample_tally {
	uint64_t samples;
	uint64_t lost_samples;
	uint64_t lost_stacks;
};
void td_collector_sample_tally(const struct td_collector *collector, struct td_sample_tally *tally);

/*
 * Whether a target process still runs: false once every process the
 * collector follows has exited (gone, or a zombie its parent has not
 * reaped). The --pid processes; with process names, every process that
 * had one of the names when counting started or took one since (at fork
 * or exec), so a name's later process counts only while another still
 * runs; a kernel thread a name matched never exits. Always true
 * system-wide. Cheap while the target it found last runs on (one read
 * of its stat file); else it scans the targets.
 */
bool td_collector_targets_running(struct td_collector *collector);

/* Processes currently targeted (process mode), for progress reports. */
size_t td_collector_thread_count(const struct td_collector *collector);

#endif
