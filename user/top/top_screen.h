/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topdown top's terminal (ncurses): draws a view, reads the keys. The
 * screen keeps what belongs to the person at the keyboard (paused, the
 * help shown, a filter being typed); the view keeps the table.
 */
#ifndef TOPDOWN_TOP_SCREEN_H
#define TOPDOWN_TOP_SCREEN_H

#include <stdbool.h>
#include <stddef.h>

#include "top_view.h"

struct td_top_screen;

enum td_top_action {
	TD_TOP_NOTHING,  /* no key, or one that changes nothing */
	TD_TOP_REDRAW,   /* the screen changed (help, prompt, resize, pause) */
	TD_TOP_RELAYOUT, /* the view's rows changed (sort, filter, grouping) */
	TD_TOP_QUIT,
};

/* Takes the terminal on stdin and stdout; NULL with err when it cannot. */
struct td_top_screen *td_top_screen_open(char *err, size_t errlen);
/* Gives the terminal back as it was (endwin). NULL is fine. */
void td_top_screen_close(struct td_top_screen *s);

/* A key, waiting at most timeout_ms; -1 for none (or a signal). */
int td_top_screen_key(struct td_top_screen *s, int timeout_ms);
/* What key does to the screen and the view. */
enum td_top_action td_top_screen_handle(struct td_top_screen *s, struct td_top_view *v, int key);
bool td_top_screen_paused(const struct td_top_screen *s);

/* title: the first line (target, time); status: the second (Top-Down's state). */
void td_top_screen_draw(struct td_top_screen *s, const struct td_top_view *v, const char *title,
			const char *status);

#endif
