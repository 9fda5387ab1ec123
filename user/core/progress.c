// SPDX-License-Identifier: BSD-3-Clause
/* Progress on one line of a terminal's stderr (see progress.h). */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

#define REDRAW_NS 100000000 /* ten times a second at most */

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void td_progress_begin(struct td_progress *p, const char *what, const char *unit, uint64_t total)
{
	*p = (struct td_progress){ .on = isatty(STDERR_FILENO), .what = what, .unit = unit, .total = total };
}

void td_progress_step(struct td_progress *p, uint64_t done)
{
	int64_t now;

	if (!p->on)
		return;
	now = now_ns();
	if (p->drawn_ns && now - p->drawn_ns < REDRAW_NS && done != p->total)
		return;
	p->drawn_ns = now;
	if (p->total)
		fprintf(stderr, "\rtopdown: %s %llu/%llu %s (%.0f%%)\033[K", p->what, (unsigned long long)done,
			(unsigned long long)p->total, p->unit, 100.0 * (double)done / (double)p->total);
	else
		fprintf(stderr, "\rtopdown: %s %llu %s\033[K", p->what, (unsigned long long)done, p->unit);
	fflush(stderr);
}

void td_progress_stage(struct td_progress *p, const char *stage)
{
	if (!p->on)
		return;
	fprintf(stderr, "\rtopdown: %s\033[K", stage);
	fflush(stderr);
	p->drawn_ns = now_ns();
}

void td_progress_end(struct td_progress *p)
{
	if (p->on && p->drawn_ns)
		fputs("\r\033[K", stderr);
	p->drawn_ns = 0;
}
