// SPDX-License-Identifier: BSD-3-Clause
/* topdown top's curses screen (top_screen.h). */
#include <curses.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "top_screen.h"

#define KEY_ESCAPE 27
#define HEADER_LINES 3 /* title, status, column titles */

struct td_top_screen {
	SCREEN *term;
	bool paused, help, editing;
	char edit[TD_TOP_FILTER_LEN];
	size_t edit_len;
};

static const char *const help_lines[] = {
	"topdown top: keys",
	"",
	"  c        sort by on-CPU time",
	"  s        sort by voluntary switches",
	"  w        sort by run-queue wait",
	"  n        sort by name",
	"  t        sort by TID (groups: thread count)",
	"  < >      sort by the column left or right",
	"  /        filter by name substring (Enter applies, Esc cancels)",
	"  p space  pause or resume the display",
	"  g        threads or thread-name groups",
	"  h ?      this help",
	"  q        quit",
	"",
	"any key closes the help",
};

struct td_top_screen *td_top_screen_open(char *err, size_t errlen)
{
	struct td_top_screen *s = calloc(1, sizeof(*s));

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	setlocale(LC_CTYPE, "");
	/* newterm, unlike initscr, returns NULL for an unknown TERM instead of exiting */
	if (!(s->term = newterm(NULL, stdout, stdin))) {
		snprintf(err, errlen, "cannot use the terminal (TERM=%s)", getenv("TERM") ? getenv("TERM") : "");
		free(s);
		return NULL;
	}
	cbreak(); /* keys at once; ^C still raises SIGINT, whose handler ends the loop */
	noecho();
	curs_set(0);
	keypad(stdscr, TRUE);
	set_escdelay(25); /* Esc cancels a filter without a second's wait */
	return s;
}

void td_top_screen_close(struct td_top_screen *s)
{
	if (!s)
		return;
	endwin();
	delscreen(s->term);
	free(s);
}

int td_top_screen_key(struct td_top_screen *s, int timeout_ms)
{
	int key;

	(void)s;
	timeout(timeout_ms);
	key = getch();
	return key == ERR ? -1 : key;
}

bool td_top_screen_paused(const struct td_top_screen *s)
{
	return s->paused;
}

static enum td_top_action edit_key(struct td_top_screen *s, struct td_top_view *v, int key)
{
	switch (key) {
	case '\n': case '\r': case KEY_ENTER:
		s->editing = false;
		snprintf(v->filter, sizeof(v->filter), "%s", s->edit);
		return TD_TOP_RELAYOUT;
	case KEY_ESCAPE:
		s->editing = false;
		return TD_TOP_REDRAW;
	case KEY_BACKSPACE: case 127: case '\b':
		if (s->edit_len)
			s->edit[--s->edit_len] = '\0';
		return TD_TOP_REDRAW;
	}
	if (key >= ' ' && key < 127 && s->edit_len + 1 < sizeof(s->edit)) {
		s->edit[s->edit_len++] = (char)key;
		s->edit[s->edit_len] = '\0';
		return TD_TOP_REDRAW;
	}
	return TD_TOP_NOTHING;
}

enum td_top_action td_top_screen_handle(struct td_top_screen *s, struct td_top_view *v, int key)
{
	if (key < 0) /* no key within the wait */
		return TD_TOP_NOTHING;
	if (key == KEY_RESIZE)
		return TD_TOP_REDRAW;
	if (s->editing)
		return edit_key(s, v, key);
	if (s->help) {
		s->help = false;
		return key == 'q' ? TD_TOP_QUIT : TD_TOP_REDRAW;
	}
	if (td_top_sort_key(v, key))
		return TD_TOP_RELAYOUT;
	switch (key) {
	case 'q': case 'Q':
		return TD_TOP_QUIT;
	case 'p': case ' ':
		s->paused = !s->paused;
		return TD_TOP_REDRAW;
	case 'g':
		v->groups = !v->groups;
		return TD_TOP_RELAYOUT;
	case 'h': case '?':
		s->help = true;
		return TD_TOP_REDRAW;
	case '/': /* starts from the filter in force, so it can be edited or cleared */
		s->editing = true;
		s->edit_len = strlen(v->filter);
		memcpy(s->edit, v->filter, s->edit_len + 1);
		return TD_TOP_REDRAW;
	}
	return TD_TOP_NOTHING;
}

/* Each column's first character on a line td_top_line lays out. */
static int column_x(const struct td_top_view *v, size_t column)
{
	int x = 0;

	for (size_t c = 0; c < column; c++)
		x += td_top_column_width(v, c) + (c != TD_TOP_COL_NAME);
	return x + (column != TD_TOP_COL_NAME);
}

static void draw_help(void)
{
	size_t n = sizeof(help_lines) / sizeof(help_lines[0]);
	int width = 68, top = (LINES - (int)n - 2) / 2, left = (COLS - width) / 2;

	if (top < 0)
		top = 0;
	if (left < 0)
		left = 0;
	for (size_t i = 0; i < n + 2 && top + (int)i < LINES; i++) {
		move(top + (int)i, left);
		attron(A_REVERSE);
		printw(" %-*.*s ", width - 2, width - 2, i && i <= n ? help_lines[i - 1] : "");
		attroff(A_REVERSE);
	}
}

void td_top_screen_draw(struct td_top_screen *s, const struct td_top_view *v, const char *title,
			const char *status)
{
	char line[4096], summary[256];
	int y = HEADER_LINES;

	erase();
	td_top_summary(v, summary, sizeof(summary));
	snprintf(line, sizeof(line), "%s  %s%s", title, summary, s->paused ? "  [PAUSED]" : "");
	mvaddnstr(0, 0, line, COLS);
	mvaddnstr(1, 0, status, COLS);
	td_top_line(v, NULL, line, sizeof(line));
	attron(A_REVERSE);
	mvaddnstr(2, 0, line, COLS);
	mvchgat(2, 0, -1, A_REVERSE, 0, NULL);
	attroff(A_REVERSE);
	/* the sort column's title stands out: bold, not reversed */
	if (column_x(v, v->sort_column) < COLS)
		mvchgat(2, column_x(v, v->sort_column), td_top_column_width(v, v->sort_column), A_BOLD, 0, NULL);
	for (size_t i = 0; i < v->nr_rows && y < LINES - 1; i++, y++) {
		td_top_line(v, &v->rows[i], line, sizeof(line));
		mvaddnstr(y, 0, line, COLS);
	}
	if (s->editing)
		snprintf(line, sizeof(line), "filter by name: %s_", s->edit);
	else
		snprintf(line, sizeof(line), "c s w n < > sort  / filter  p pause  g %s  h help  q quit",
			 v->groups ? "threads" : "groups");
	mvaddnstr(LINES - 1, 0, line, COLS);
	if (s->help)
		draw_help();
	refresh();
}
