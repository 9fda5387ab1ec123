// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown top's table without a terminal (user/top/top_view.h): live
 * threads shown alone and exited ones folded into their name group, the
 * groups view, each sort key, the name filter, the cells' text, the
 * Top-Down columns of a real model (Zen 4 level 1, worked out here from
 * kb/defs/zen4.def), and a --batch frame.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine.h"
#include "kb.h"
#include "top_view.h"

#define MS 1000000ull

static const char *const task_clock[] = { "task-clock" };

static struct td_thread_row thread(const char *comm, uint32_t tid, uint64_t oncpu_ms, bool exited, double count)
{
	struct td_thread_row t = { .tid = tid, .pid = 100, .oncpu_ns = oncpu_ms * MS, .exited = exited,
				   .voluntary_switches = tid, .involuntary_switches = 1, .migrations = 2,
				   .runq_wait_ns = 3 * MS };

	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	t.counters[0] = (struct td_counter_value){ count, 1 };
	return t;
}

/* A workload's interval: a spinner, two I/O threads, three short-lived threads that exited. */
static void set_workload(struct td_top_view *v)
{
	const struct td_thread_row rows[] = {
		thread("io_thd_1", 102, 30, false, 3e7), thread("spinner", 101, 800, false, 8e8),
		thread("short_1", 201, 10, true, 1e7), thread("io_thd_2", 103, 40, false, NAN),
		thread("short_2", 202, 20, true, 2e7), thread("short_3", 203, 30, true, 3e7),
	};
	struct td_thread_row *copy = malloc(sizeof(rows));

	assert_non_null(copy);
	memcpy(copy, rows, sizeof(rows));
	td_top_view_set_interval(v, copy, 6, 1000 * MS);
	assert_int_equal(td_top_view_layout(v), 0);
}

static const char *cell(const struct td_top_view *v, size_t row, size_t column)
{
	static char buf[64];

	assert_true(row < v->nr_rows);
	return td_top_cell(v, &v->rows[row], column, buf, sizeof(buf));
}

static void test_threads_fold_exited(void **state)
{
	struct td_top_view v;

	(void)state;
	assert_int_equal(td_top_view_init(&v, task_clock, 1, NULL), 0);
	set_workload(&v);
	assert_int_equal(v.nr_rows, 4); /* 3 live threads, the exited ones as one short_* row */
	assert_string_equal(cell(&v, 0, TD_TOP_COL_NAME), "spinner");
	assert_string_equal(cell(&v, 0, TD_TOP_COL_TID), "101");
	assert_string_equal(cell(&v, 1, TD_TOP_COL_NAME), "short_*");
	assert_string_equal(cell(&v, 1, TD_TOP_COL_TID), "[3]");
	assert_int_equal(v.rows[1].figures.oncpu_ns, 60 * MS);
	assert_string_equal(cell(&v, 1, TD_TOP_COL_ONCPU), "6.0");
	assert_string_equal(cell(&v, 1, TD_TOP_COL_VOL), "606");
	assert_string_equal(cell(&v, 1, TD_TOP_FIXED_COLUMNS), "6e+07"); /* td_format_count: exponent from 1e7 */
	assert_string_equal(cell(&v, 2, TD_TOP_COL_NAME), "io_thd_2");
	assert_string_equal(cell(&v, 2, TD_TOP_FIXED_COLUMNS), "n/a"); /* a counter that did not run */
	assert_string_equal(cell(&v, 3, TD_TOP_COL_NAME), "io_thd_1");
	assert_string_equal(cell(&v, 3, TD_TOP_COL_RUNQ), "3.00ms");
	td_top_view_release(&v);
}

static void test_groups(void **state)
{
	struct td_top_view v;

	(void)state;
	assert_int_equal(td_top_view_init(&v, task_clock, 1, NULL), 0);
	v.groups = true;
	set_workload(&v);
	assert_int_equal(v.nr_rows, 3);
	assert_string_equal(td_top_column_title(&v, TD_TOP_COL_TID), "THREADS");
	assert_string_equal(cell(&v, 0, TD_TOP_COL_NAME), "spinner");
	assert_string_equal(cell(&v, 0, TD_TOP_COL_TID), "1");
	assert_int_equal(v.rows[0].figures.tid, 101); /* a group of one keeps its thread's tid */
	assert_string_equal(cell(&v, 1, TD_TOP_COL_NAME), "io_thd_*");
	assert_string_equal(cell(&v, 1, TD_TOP_COL_TID), "2");
	assert_string_equal(cell(&v, 1, TD_TOP_FIXED_COLUMNS), "3e+07"); /* NaN left out of the sum */
	assert_string_equal(cell(&v, 2, TD_TOP_COL_NAME), "short_*");
	td_top_view_release(&v);
}

static void test_sort_keys(void **state)
{
	struct td_top_view v;
	size_t last;

	(void)state;
	assert_int_equal(td_top_view_init(&v, task_clock, 1, NULL), 0);
	set_workload(&v);
	last = td_top_column_count(&v) - 1;
	assert_true(td_top_sort_key(&v, 'n'));
	assert_int_equal(td_top_view_layout(&v), 0);
	assert_string_equal(cell(&v, 0, TD_TOP_COL_NAME), "io_thd_1");
	assert_string_equal(cell(&v, 3, TD_TOP_COL_NAME), "spinner");
	assert_true(td_top_sort_key(&v, 's'));
	assert_int_equal(td_top_view_layout(&v), 0);
	assert_string_equal(cell(&v, 0, TD_TOP_COL_NAME), "short_*"); /* 201 + 202 + 203 switches */
	assert_string_equal(cell(&v, 1, TD_TOP_COL_NAME), "io_thd_2");
	assert_true(td_top_sort_key(&v, 't')); /* TIDs ascending, the folded row's tid 0 first */
	assert_int_equal(td_top_view_layout(&v), 0);
	assert_string_equal(cell(&v, 1, TD_TOP_COL_NAME), "spinner");
	assert_true(td_top_sort_key(&v, '<'));
	assert_int_equal(v.sort_column, TD_TOP_COL_NAME);
	assert_true(td_top_sort_key(&v, '<'));
	assert_int_equal(v.sort_column, last);
	assert_true(td_top_sort_key(&v, '>'));
	assert_int_equal(v.sort_column, TD_TOP_COL_NAME);
	/* a counter column: the NaN row last */
	assert_true(td_top_sort_key(&v, '<'));
	assert_int_equal(td_top_view_layout(&v), 0);
	assert_string_equal(cell(&v, 0, TD_TOP_COL_NAME), "spinner");
	assert_string_equal(cell(&v, 3, TD_TOP_COL_NAME), "io_thd_2");
	assert_true(td_top_sort_key(&v, 'c'));
	assert_int_equal(v.sort_column, TD_TOP_COL_ONCPU);
	assert_true(td_top_sort_key(&v, 'w'));
	assert_int_equal(v.sort_column, TD_TOP_COL_RUNQ);
	assert_false(td_top_sort_key(&v, 'x'));
	assert_int_equal(v.sort_column, TD_TOP_COL_RUNQ);
	td_top_view_release(&v);
}

static void test_filter(void **state)
{
	struct td_top_view v;
	char summary[256];

	(void)state;
	assert_int_equal(td_top_view_init(&v, task_clock, 1, NULL), 0);
	snprintf(v.filter, sizeof(v.filter), "spin");
	set_workload(&v);
	assert_int_equal(v.nr_rows, 1);
	assert_int_equal(v.nr_hidden, 3);
	assert_string_equal(cell(&v, 0, TD_TOP_COL_NAME), "spinner");
	td_top_summary(&v, summary, sizeof(summary));
	assert_non_null(strstr(summary, "filter 'spin' (3 hidden)"));
	/* groups match by the group's name */
	snprintf(v.filter, sizeof(v.filter), "thd_*");
	v.groups = true;
	assert_int_equal(td_top_view_layout(&v), 0);
	assert_int_equal(v.nr_rows, 1);
	assert_string_equal(cell(&v, 0, TD_TOP_COL_NAME), "io_thd_*");
	snprintf(v.filter, sizeof(v.filter), "nothing");
	assert_int_equal(td_top_view_layout(&v), 0);
	assert_int_equal(v.nr_rows, 0);
	td_top_view_release(&v);
}

/* Lines never overrun their buffer, and the header names the columns in order. */
static void test_lines(void **state)
{
	struct td_top_view v;
	char line[512], tiny[10];

	(void)state;
	assert_int_equal(td_top_view_init(&v, task_clock, 1, NULL), 0);
	set_workload(&v);
	td_top_line(&v, NULL, line, sizeof(line));
	assert_true(strstr(line, "THREAD") == line);
	assert_true(strstr(line, "TID") < strstr(line, "ONCPU%"));
	assert_true(strstr(line, "RUNQ-WAIT") < strstr(line, "task-clock"));
	td_top_line(&v, &v.rows[0], tiny, sizeof(tiny));
	assert_string_equal(tiny, "spinner  ");
	td_top_view_release(&v);
}

static void test_batch_frame(void **state)
{
	struct td_top_view v;
	char *text = NULL;
	size_t size = 0, lines = 0;
	FILE *out = open_memstream(&text, &size);

	(void)state;
	assert_non_null(out);
	assert_int_equal(td_top_view_init(&v, task_clock, 1, NULL), 0);
	set_workload(&v);
	td_top_print_frame(out, &v, 0);
	fclose(out);
	for (char *p = text; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 1 + 1 + 4 + 1); /* header, titles, rows, the blank line between frames */
	assert_non_null(strstr(text, "4 rows of 6 threads in 1.00s, sorted by ONCPU%\nTHREAD "));
	free(text);
	td_top_view_release(&v);
}

/* A thread that named itself with terminal controls: escaped in its cell and the frame. */
static void test_names_are_escaped(void **state)
{
	struct td_thread_row *rows = malloc(2 * sizeof(*rows));
	struct td_top_view v;
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	(void)state;
	assert_non_null(rows);
	assert_non_null(out);
	rows[0] = thread("\x1b[31m\x07", 300, 500, false, 5e8);
	rows[1] = thread("\x1b]0;pwn\x07", 301, 100, false, 1e8);
	assert_int_equal(td_top_view_init(&v, task_clock, 1, NULL), 0);
	td_top_view_set_interval(&v, rows, 2, 1000 * MS);
	assert_int_equal(td_top_view_layout(&v), 0);
	assert_string_equal(cell(&v, 0, TD_TOP_COL_NAME), "\\x1b[31m\\x07");
	assert_string_equal(cell(&v, 1, TD_TOP_COL_NAME), "\\x1b]0;pwn\\x07");
	td_top_print_frame(out, &v, 0);
	fclose(out);
	assert_null(strpbrk(text, "\x1b\x07"));
	assert_non_null(strstr(text, "\\x1b[31m\\x07"));
	free(text);
	td_top_view_release(&v);
}

/* ---- Top-Down columns: Zen 4 level 1 ---------------------------------------- */

static const char *const zen4_events[] = {
	"ls_not_halted_cyc",
	"de_no_dispatch_per_slot.no_ops_from_frontend",
	"de_no_dispatch_per_slot.backend_stalls",
	"de_no_dispatch_per_slot.smt_contention",
	"de_src_op_disp.all",
	"ex_ret_ops",
};

static struct td_thread_row zen4_thread(const char *comm, uint32_t tid, double cycles, double frontend,
					double running_fraction)
{
	/* slots are 6 a cycle: frontend / (6 * cycles) is Frontend_Bound */
	const double counts[] = { cycles, frontend, cycles, 0, cycles, cycles };
	struct td_thread_row t = { .tid = tid, .pid = 100, .oncpu_ns = 100 * MS };

	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	for (size_t i = 0; i < 6; i++)
		t.counters[i] = (struct td_counter_value){ counts[i], running_fraction };
	return t;
}

static void test_topdown_columns(void **state)
{
	char err[512];
	const struct td_kb *kb = td_kb_load(err, sizeof(err));
	const struct td_model *zen4 = kb ? td_kb_model(kb, "zen4") : NULL;
	struct td_engine *e;
	struct td_thread_row *rows = malloc(3 * sizeof(*rows));
	struct td_top_view v;
	size_t frontend;

	(void)state;
	assert_non_null(zen4);
	assert_non_null(rows);
	e = td_engine_new(zen4, 1, zen4_events, 6, NULL, err, sizeof(err));
	assert_non_null(e);
	assert_int_equal(td_top_view_init(&v, zen4_events, 6, e), 0);
	assert_int_equal(v.nr_nodes, 5);
	frontend = TD_TOP_FIXED_COLUMNS + 6;
	assert_string_equal(td_top_column_title(&v, frontend), "Frontend_Bound");
	rows[0] = zen4_thread("worker_1", 1, 1000, 1500, 1);   /* 1500 / 6000: 25% */
	rows[1] = zen4_thread("worker_2", 2, 3000, 1800, 1);   /* 10% */
	rows[2] = zen4_thread("sampled", 3, 1000, 600, 0.25); /* 10%, counted a quarter of the time */
	td_top_view_set_interval(&v, rows, 3, 1000 * MS);
	assert_true(td_top_sort_key(&v, 'n'));
	assert_int_equal(td_top_view_layout(&v), 0);
	assert_string_equal(cell(&v, 0, frontend), "10.0%~");
	assert_string_equal(cell(&v, 1, frontend), "25.0%");
	assert_string_equal(cell(&v, 2, frontend), "10.0%");
	/* the group from its summed counters: 3300 / 24000, not the mean of 25% and 10% */
	v.groups = true;
	assert_int_equal(td_top_view_layout(&v), 0);
	assert_string_equal(cell(&v, 1, TD_TOP_COL_NAME), "worker_*");
	assert_string_equal(cell(&v, 1, frontend), "13.8%");
	/* sorted by the node: the highest first */
	v.sort_column = frontend;
	assert_int_equal(td_top_view_layout(&v), 0);
	assert_string_equal(cell(&v, 0, TD_TOP_COL_NAME), "worker_*");
	td_top_view_release(&v);
	td_engine_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads_fold_exited),
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_sort_keys),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_batch_frame),
		cmocka_unit_test(test_names_are_escaped),
		cmocka_unit_test(test_topdown_columns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
