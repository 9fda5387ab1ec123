/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The agent: always-on collection in windows (`topdown agent`).
 *
 * The BPF programs load once and stay attached. Every --every the agent
 * ends a window: it drains the collector, which forgets what only that
 * window needed (so memory stays flat), and queues one run per target
 * process for the writer thread (user/agent/writer.h), which stores them
 * through the durable sink (user/agent/sink.h), with the window's start
 * and end, the labels, and what the agent itself cost. A window ends at
 * the instant its counts are read, which starts the next: a stalled
 * store delays storing, never a window's end.
 *
 * Inside a window the collector counts for --duration (the duty cycle;
 * the whole window by default) and is paused for the rest. Counting is
 * cut into sub-intervals of counted time / counter groups, between 10 ms
 * and 1 s: the counter groups take turns between them, and /proc is
 * rescanned for targets at each. A window long enough counts every group;
 * one counted for less than groups x 10 ms counts some, starting from a
 * group its wall-clock start and the host's --rotation-offset decide
 * (rotation.h), so that consecutive windows, or the same window on hosts
 * of other offsets, count the others.
 *
 * Targets: --process NAME (repeatable) follows every process of each
 * name, waits for names with no process running (one log line when the
 * waiting starts, one when a process appears), and follows restarts (a
 * new pid with the same name). --system-wide stores one run per window
 * holding every thread of the system; its process-scope trees (and the
 * thread rows' pids) tell the processes apart.
 *
 * Locate (--sample): with --sample alone on a host with a Top-Down tree,
 * the first window samples cycles and each next one the event of the
 * deepest node the last window's runs crossed (td_agent_deepest_crossing,
 * the kb's locate event of that node), said in the log when it changes.
 * The sampling event runs with the counters, under the
 * same duty cycle (paused with them) and the same overhead budget (its
 * BPF time and the symbolization count in agent.bpf_ms and agent.cpu_ms).
 * Stacks are symbolized at every sub-interval, while the processes live;
 * each run holds its own process's stacks (the whole system's with
 * --system-wide), and the symbolizer starts afresh every window so its
 * memory follows the live processes.
 *
 * Self-accounting, on every run of the window (labels):
 *   agent.cpu_ms       the agent's user+sys CPU time in the window
 *   agent.bpf_ms       the BPF programs' run time in the window: timed by the
 *                      kernel for a sample at the window's start and scaled by
 *                      the host's context switches (agent.c, struct bpf_timing),
 *                      or timed whole where kernel.bpf_stats_enabled is set; left
 *                      out, and out of the overhead, when the kernel cannot time
 *                      them: that needs CAP_SYS_ADMIN or kernel.bpf_stats_enabled
 *   agent.overhead_pct (agent.cpu_ms + agent.bpf_ms) / (window wall time x online CPUs) x 100
 *   agent.duty         counted time / window time, 0..1
 *   agent.duty_limit   "max-overhead" when --max-overhead shortened the counted time
 *   agent.threads, agent.threads_exited
 *                      threads the run stands for, and of them those that exited:
 *                      more than its rows when a tid was reused in the window
 *                      (td_agent_merge_reused_tids)
 *   pmu_groups, rotation_offset
 *                      with counter groups that take turns: how many, and the
 *                      host's offset their turns started from (rotation.h)
 *   agent.store_delay_ms
 *                      on a run that waited in memory for the writer for more
 *                      than a window (a stalled store): how long (writer.h)
 * The cost of building and storing a window falls in the next window's
 * figures (the writer is a thread of the agent's).
 */
#ifndef TOPDOWN_AGENT_H
#define TOPDOWN_AGENT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events.h"
#include "labels.h"
#include "procmatch.h"
#include "run.h"
#include "store_open.h"
#include "pmu.h" /* TD_MAX_TARGET_COMMS, through the BPF side's header */

/* What the agent is asked to do: the command's options, checked. */
struct td_agent_config {
	const char *process_names[TD_MAX_TARGET_COMMS];
	size_t nr_process_names;
	bool system_wide;
	long level;
	uint64_t every_ns, duration_ns; /* duration_ns: the whole window when equal */
	double max_overhead_pct;        /* 0: no budget */
	const char *metrics_listen, *spool, *log_path, *db;
	long windows;                   /* 0: until stopped */
	bool events_given;
	struct td_event events[TD_MAX_EVENTS]; /* --events: instead of the Top-Down ones */
	size_t nr_events;
	bool sample;                    /* --sample: each run also holds its process's sampled stacks */
	const char *sample_event;       /* --sample=EVENT; NULL: the default (td_collect_choose_sample) */
	uint64_t sample_freq_hz;        /* --sample-freq */
	bool rotation_offset_given;     /* --rotation-offset N; else auto: the host name's hash (rotation.h) */
	unsigned rotation_offset;
	struct td_labels user_labels;   /* TOPDOWN_LABELS, then --label over them */
	struct td_store_flags store_flags;
	/*
	 * Set by the caller's signal handlers and read between polls: stop
	 * ends the window early (stored as partial) and the loop; reopen
	 * makes the agent open log_path anew (logrotate), and is cleared.
	 */
	volatile sig_atomic_t *stop_requested, *reopen_requested;
};

struct td_agent;

/*
 * Everything that can fail before the first window: the log, the host's
 * checks, the events, the spool and the store, /metrics, the BPF
 * programs. NULL with one sentence in err (also logged to log_path when
 * it opened). config must outlive the agent.
 */
struct td_agent *td_agent_new(const struct td_agent_config *config, char *err, size_t errlen);

/* Windows until config->windows or a stop request. 0, or -errno with err. */
int td_agent_run(struct td_agent *agent, char *err, size_t errlen);

void td_agent_free(struct td_agent *agent);

/*
 * A run holds one row per tid, but with thousands of short threads in a
 * window the kernel hands a tid out again: those threads, which no query
 * could tell apart, become one row (sorted by tid; figures summed, each
 * counter's running fraction weighted by on-CPU time, exited only when
 * all were). Returns the rows left.
 */
size_t td_agent_merge_reused_tids(struct td_thread_row *rows, size_t n, size_t nr_events);

/*
 * Locate with --sample alone and a Top-Down tree: the node whose event the
 * next window samples, the deepest node that crosses its threshold in the
 * whole-run process rows of runs (the larger value among equals). NULL
 * when none crosses; the path points into the runs.
 */
const char *td_agent_deepest_crossing(struct td_run *const *runs, size_t n);

#endif
