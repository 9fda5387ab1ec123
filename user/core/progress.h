/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Progress of long work (export, gc, import) on one line of stderr, only
 * when stderr is a terminal: a pipe or a file never gets it, so scripts
 * and logs see the command's own output alone. At most ten redraws a
 * second; the line is wiped at the end.
 */
#ifndef TOPDOWN_PROGRESS_H
#define TOPDOWN_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct td_progress {
	bool on;          /* stderr is a terminal */
	const char *what; /* "exporting", "deleting" */
	const char *unit; /* "runs" */
	uint64_t total;   /* 0: not known */
	int64_t drawn_ns; /* when last drawn; 0: never */
};

void td_progress_begin(struct td_progress *p, const char *what, const char *unit, uint64_t total);
void td_progress_step(struct td_progress *p, uint64_t done);
/* A stage of work whose size is not known: "reading counts.csv (412 MB)". */
void td_progress_stage(struct td_progress *p, const char *stage);
void td_progress_end(struct td_progress *p);

#endif
