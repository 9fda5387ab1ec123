/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The agent's /metrics endpoint, in the Prometheus text exposition
 * format (0.0.4): Top-Down level 1 and 2 gauges of the last window per
 * process and per thread-name group, and the agent's health. Per-thread
 * (tid) series are never exported: tid churn would explode cardinality.
 *
 * The server runs in a thread of its own and serves the text the agent
 * last published; publishing swaps it under a lock, so a scrape never
 * sees half a window.
 */
#ifndef TOPDOWN_EXPORTER_H
#define TOPDOWN_EXPORTER_H

#include <stddef.h>
#include <stdint.h>

#include "labels.h"
#include "run.h"

/* The agent's own state, exported with the window's gauges. */
struct td_agent_health {
	uint64_t windows;          /* windows stored since the agent started */
	uint64_t partial_windows;  /* of which cut short */
	uint64_t dropped;          /* threads and slices the kernel side could not keep, in total */
	size_t spool_depth;        /* runs waiting for the store */
	uint64_t runs_spooled;     /* in total */
	uint64_t runs_replayed;
	size_t store_queue;        /* runs in memory, not yet handed to the store or the spool */
	uint64_t runs_stored_late; /* runs handed over more than a window after their window's end */
	uint64_t runs_lost;        /* runs neither the store nor the spool took */
	double agent_cpu_seconds;  /* the agent's user+sys time, in total */
	double bpf_seconds;        /* the BPF programs' run time (bpf_stats), in total */
	double overhead_percent;   /* last window: (agent CPU + BPF time) / (window wall time x CPUs) */
	double duty;               /* last window: the fraction of it that was counted, 0..1 */
};

/*
 * The exposition text for runs (the last window's, with their metric
 * rows; thread rows are ignored) and health (NULL: none). labels (the
 * agent's --label ones; NULL: none) go on every Top-Down gauge. Names,
 * labels and the one-series-per-process rule: exposition.c. malloc'd;
 * NULL when out of memory.
 */
char *td_exposition_render(const struct td_run *const *runs, size_t nr_runs,
			   const struct td_labels *labels, const struct td_agent_health *health);

struct td_exporter;

/*
 * Binds listen ("127.0.0.1:9464", "[::1]:9464", "localhost:9464"; port
 * 1..65535) and starts serving GET /metrics, empty until the first
 * publish. NULL with err (port in use, bad address).
 */
struct td_exporter *td_exporter_start(const char *listen, char *err, size_t errlen);

/* Renders and swaps in what the next scrapes see. 0 or -ENOMEM. */
int td_exporter_publish(struct td_exporter *exporter, const struct td_run *const *runs,
			size_t nr_runs, const struct td_labels *labels,
			const struct td_agent_health *health);

/* Stops the server thread and closes the socket. NULL is fine. */
void td_exporter_stop(struct td_exporter *exporter);

#endif
