/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topdown top's refresh loop: drains the collector every interval, lays
 * out the interval's rows, draws them on the screen or prints them as
 * --batch frames, and answers the keys in between.
 */
#ifndef TOPDOWN_TOP_LOOP_H
#define TOPDOWN_TOP_LOOP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collector.h"
#include "engine.h"

struct td_top_opts {
	struct td_collector *collector; /* counting already */
	const char *target;             /* as the user named it */
	uint64_t interval_ns;
	bool batch;                     /* plain text frames on stdout, no keys */
	long iterations;                /* --batch: frames before returning; 0: until stopped */
	const char *tma_status;         /* one line on Top-Down: the model, or why there is none */
	const char *const *event_names; /* what the collector counts, in its order */
	size_t nr_events;
	const struct td_engine *engine; /* the Top-Down nodes per row; NULL without Top-Down */
	volatile sig_atomic_t *stop;    /* set by the caller's signal handlers */
	/* --batch: after each frame, whether every target has exited (then the
	 * run ends, said on stderr); NULL: targets never end (system-wide) */
	bool (*targets_gone)(const void *targets);
	const void *targets;
};

/* Until q, *stop, the batch's frames, or (--batch) every target gone: 0, or
 * an error with err. The terminal is always given back. */
int td_top_run(const struct td_top_opts *o, char *err, size_t errlen);

#endif
