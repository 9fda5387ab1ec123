/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The agent's writer: a thread of its own that takes each window's runs
 * from an in-memory queue and hands them to the sink (sink.h: the store,
 * or the spool while the store does not take them). The window loop only
 * queues, so however long the store holds a write (a lock held by
 * another process, a server that does not answer), every window ends at
 * its boundary with its own counts; a stall delays storing, never
 * counting.
 *
 * A run handed to the sink more than late_after_ns after its window
 * ended carries the label agent.store_delay_ms (that delay), so a stall
 * is visible in the stored runs; the state counts such runs.
 */
#ifndef TOPDOWN_WRITER_H
#define TOPDOWN_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "run.h"
#include "sink.h"

/* What the writer has done, for the agent's log and /metrics. */
struct td_writer_state {
	struct td_sink_stats sink; /* after the last batch */
	size_t queued;             /* runs in memory, not yet handed to the sink */
	uint64_t late;             /* runs handed over more than late_after_ns after their window */
	uint64_t lost;             /* runs neither the store nor the spool took */
	char last_lost[768];       /* the last of them and why; "" if none */
};

struct td_writer;

/*
 * Starts the thread, which owns sink from now on (td_writer_free closes
 * it). NULL with err when the thread cannot start (the sink is then
 * still the caller's).
 */
struct td_writer *td_writer_start(struct td_sink *sink, int64_t late_after_ns, char *err, size_t errlen);

/*
 * Queues a window's runs (runs malloc'd, each run too; the writer frees
 * them) and returns at once. nr_runs 0 (runs may be NULL) gives the spool
 * its turn to drain.
 */
void td_writer_submit(struct td_writer *writer, struct td_run **runs, size_t nr_runs);

/* Waits until the queue is written, then flushes the sink (td_sink_flush): 0, or its error with err. */
int td_writer_finish(struct td_writer *writer, char *err, size_t errlen);

void td_writer_state(struct td_writer *writer, struct td_writer_state *out);

/* Writes what is queued, stops the thread and closes the sink. NULL is fine. */
void td_writer_free(struct td_writer *writer);

#endif
