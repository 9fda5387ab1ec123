// SPDX-License-Identifier: BSD-3-Clause
/* topdown top's refresh loop (top_loop.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "format.h"
#include "top_loop.h"
#include "top_screen.h"
#include "top_view.h"

#define KEY_WAIT_MS 100 /* the longest a key or an exit record waits */

static int64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * One interval's rows from the collector. The collector's own window ends
 * here too, so what it keeps stays bounded by the live threads however
 * long top runs and however many threads come and go.
 */
static int take_interval(const struct td_top_opts *o, struct td_interval *interval, char *err, size_t errlen)
{
	struct td_thread_row *totals = NULL;
	size_t n;
	int ret = td_collector_drain(o->collector, interval, err, errlen);

	if (!ret)
		ret = td_collector_end_window(o->collector, &totals, &n, err, errlen);
	free(totals);
	if (!ret) /* the next counter group's turn, when there are several */
		ret = td_collector_rotate(o->collector, err, errlen);
	if (ret) {
		free(interval->threads);
		interval->threads = NULL;
	}
	return ret;
}

static void screen_title(const struct td_top_opts *o, char *buf, size_t len)
{
	char when[32];

	snprintf(buf, len, "topdown top %s %s", o->target, td_format_time(now_ns(CLOCK_REALTIME), when, sizeof(when)));
}

/* Keys until the interval ends at end_mono: 1 to quit, else 0; an error below 0. */
static int wait_keys(const struct td_top_opts *o, struct td_top_screen *screen, struct td_top_view *v,
		     int64_t end_mono, char *err, size_t errlen)
{
	char title[256];
	int64_t now;
	int ret;

	while (!*o->stop && (now = now_ns(CLOCK_MONOTONIC)) < end_mono) {
		int64_t wait_ms = (end_mono - now + 999999) / 1000000;
		enum td_top_action action;

		if (!screen) {
			if ((ret = td_collector_poll(o->collector, wait_ms < KEY_WAIT_MS ? wait_ms : KEY_WAIT_MS,
						     err, errlen)))
				return ret;
			continue;
		}
		action = td_top_screen_handle(screen, v, td_top_screen_key(screen, wait_ms < KEY_WAIT_MS ?
									    (int)wait_ms : KEY_WAIT_MS));
		if (action == TD_TOP_QUIT)
			return 1;
		if (action == TD_TOP_RELAYOUT && td_top_view_layout(v)) {
			snprintf(err, errlen, "out of memory laying out the threads");
			return -ENOMEM;
		}
		if (action != TD_TOP_NOTHING) {
			screen_title(o, title, sizeof(title));
			td_top_screen_draw(screen, v, title, o->tma_status);
		}
		if ((ret = td_collector_poll(o->collector, 0, err, errlen)))
			return ret;
	}
	return 0;
}

static int loop(const struct td_top_opts *o, struct td_top_screen *screen, struct td_top_view *v,
		char *err, size_t errlen)
{
	int64_t last = now_ns(CLOCK_MONOTONIC), end = last + o->interval_ns;
	char title[256];
	long frames = 0;
	int ret;

	if (screen) {
		screen_title(o, title, sizeof(title));
		td_top_screen_draw(screen, v, title, o->tma_status);
	}
	while (!(ret = wait_keys(o, screen, v, end, err, errlen)) && !*o->stop) {
		struct td_interval interval = { 0 };
		int64_t now = now_ns(CLOCK_MONOTONIC);

		if ((ret = take_interval(o, &interval, err, errlen)))
			return ret;
		/* paused: the interval is drained all the same, so a resume shows the next one alone */
		if (screen && td_top_screen_paused(screen)) {
			free(interval.threads);
		} else {
			td_top_view_set_interval(v, interval.threads, interval.nr_threads, (uint64_t)(now - last));
			if (td_top_view_layout(v)) {
				snprintf(err, errlen, "out of memory laying out the threads");
				return -ENOMEM;
			}
		}
		last = now;
		/* a late wake-up (a suspended terminal) starts afresh instead of catching up */
		end = end + (int64_t)o->interval_ns > now ? end + (int64_t)o->interval_ns : now + (int64_t)o->interval_ns;
		if (!screen) {
			td_top_print_frame(stdout, v, now_ns(CLOCK_REALTIME));
			fflush(stdout);
			if (o->iterations && ++frames >= o->iterations)
				return 0;
			/* frames of nothing help no script: the last one showed the exits */
			if (o->targets_gone && o->targets_gone(o->targets)) {
				fprintf(stderr, "topdown top: every target has exited\n");
				return 0;
			}
			continue;
		}
		screen_title(o, title, sizeof(title));
		td_top_screen_draw(screen, v, title, o->tma_status);
	}
	return ret < 0 ? ret : 0;
}

int td_top_run(const struct td_top_opts *o, char *err, size_t errlen)
{
	struct td_top_screen *screen = NULL;
	struct td_top_view v;
	int ret = td_top_view_init(&v, o->event_names, o->nr_events, o->engine);

	if (ret) {
		snprintf(err, errlen, "out of memory");
		return ret;
	}
	if (o->batch)
		fprintf(stderr, "topdown top: %s\n", o->tma_status);
	else if (!(screen = td_top_screen_open(err, errlen)))
		ret = -ENOTTY;
	if (!ret)
		ret = loop(o, screen, &v, err, errlen);
	td_top_screen_close(screen);
	td_top_view_release(&v);
	return ret;
}
