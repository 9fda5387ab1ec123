// SPDX-License-Identifier: BSD-3-Clause
/*
 * A run's threads folded by name group (user/render/thread_table.h):
 * groups summed and counted, busiest first, NaN counters left out of
 * sums, and the printed table leaving out what it says it leaves out.
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

#include "thread_table.h"

static struct td_thread_row row(const char *comm, uint32_t tid, uint64_t oncpu_ns, bool exited, double count)
{
	struct td_thread_row r = { .tid = tid, .pid = 1, .oncpu_ns = oncpu_ns, .exited = exited,
				   .voluntary_switches = 1, .involuntary_switches = 2, .migrations = 3,
				   .runq_wait_ns = 10 };

	snprintf(r.comm, sizeof(r.comm), "%s", comm);
	r.counters[0].value = count;
	return r;
}

static void test_fold(void **state)
{
	struct td_thread_row rows[] = {
		row("short_1", 11, 100, true, 5), row("main", 1, 500, false, 50), row("short_22", 12, 300, true, NAN),
		row("short_3", 13, 200, false, 7), row("io_thd_1", 2, 50, false, NAN),
	};
	struct td_thread_group_row *groups;
	long n;

	(void)state;
	n = td_fold_thread_rows(rows, 5, 1, &groups);
	assert_int_equal(n, 3);
	assert_string_equal(groups[0].sum.comm, "short_*"); /* 600 ns: the busiest */
	assert_int_equal(groups[0].threads, 3);
	assert_int_equal(groups[0].exited, 2);
	assert_int_equal(groups[0].sum.oncpu_ns, 600);
	assert_int_equal(groups[0].sum.voluntary_switches, 3);
	assert_int_equal(groups[0].sum.runq_wait_ns, 30);
	assert_true(groups[0].sum.counters[0].value == 12); /* the NaN adds nothing */
	assert_string_equal(groups[1].sum.comm, "main");
	assert_int_equal(groups[1].threads, 1);
	assert_string_equal(groups[2].sum.comm, "io_thd_*");
	assert_true(isnan(groups[2].sum.counters[0].value)); /* never counted: still NaN */
	free(groups);
	assert_int_equal(td_fold_thread_rows(NULL, 0, 1, &groups), 0);
	free(groups);
}

static void test_print_limits(void **state)
{
	struct td_run run = { .process = "w", .started_ns = 0, .ended_ns = 1000, .nr_events = 1,
			      .event_names = { "task-clock" } };
	struct td_thread_row rows[40];
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	(void)state;
	for (int i = 0; i < 40; i++) {
		char comm[16];

		snprintf(comm, sizeof(comm), "short_%d", i);
		rows[i] = row(comm, 100 + i, 10 + i, i % 2, 1);
	}
	run.threads = rows;
	run.nr_threads = 40;
	td_print_thread_table(out, &run, 1, 5, "--all-threads lists them");
	fclose(out);
	char name[16];
	size_t threads = 0;

	assert_int_equal(sscanf(strstr(text, "\nshort_*"), " %15s %zu", name, &threads), 2);
	assert_int_equal(threads, 40);
	assert_non_null(strstr(text, "(20 exited)"));
	assert_non_null(strstr(text, "short_39 "));  /* the busiest thread is shown */
	assert_null(strstr(text, "short_34 "));      /* the sixth busiest is not */
	assert_non_null(strstr(text, "... 35 more threads (--all-threads lists them)\n"));
	assert_non_null(strstr(text, "task-clock"));
	free(text);
}

/* Counters counted part of the time: the table says how much, on-CPU-time weighted. */
static void test_print_counted_share(void **state)
{
	struct td_run run = { .process = "w", .started_ns = 0, .ended_ns = 1000, .nr_events = 2,
			      .event_names = { "instructions", "cycles" } };
	struct td_thread_row rows[2] = { row("a", 1, 300, false, 10), row("b", 2, 100, false, 10) };
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	(void)state;
	rows[0].counters[0].running_fraction = 0.5; /* (0.5 * 300 + 0.1 * 100) / 400 = 40% */
	rows[1].counters[0].running_fraction = 0.1;
	rows[0].counters[1].running_fraction = 1;
	rows[1].counters[1].running_fraction = 1;
	run.threads = rows;
	run.nr_threads = 2;
	out = open_memstream(&text, &len);
	td_print_thread_table(out, &run, 1, 5, "");
	fclose(out);
	assert_non_null(strstr(text, "counted, as a share of the threads' on-CPU time (each count above is scaled "
				     "to all of it): instructions 40%, cycles 100%\n"));
	free(text);

	/* all counted all the time, or no counters shown: nothing to say */
	rows[0].counters[0].running_fraction = rows[1].counters[0].running_fraction = 1;
	out = open_memstream(&text, &len);
	td_print_thread_table(out, &run, 1, 5, "");
	fclose(out);
	assert_null(strstr(text, "counted,"));
	free(text);
	rows[0].counters[0].running_fraction = 0.5;
	out = open_memstream(&text, &len);
	td_print_thread_table(out, &run, 0, 5, "");
	fclose(out);
	assert_null(strstr(text, "counted,"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fold),
		cmocka_unit_test(test_print_limits),
		cmocka_unit_test(test_print_counted_share),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
