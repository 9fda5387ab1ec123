// SPDX-License-Identifier: BSD-3-Clause
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "parse.h"

static uint64_t duration_ok(const char *text)
{
	uint64_t ns = 0;
	char err[256] = "";

	assert_int_equal(td_parse_duration_ns(text, "--every", &ns, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	return ns;
}

static void duration_bad(const char *text, const char *want)
{
	uint64_t ns = 12345;
	char err[256] = "";

	assert_int_equal(td_parse_duration_ns(text, "--every", &ns, err, sizeof(err)), -EINVAL);
	assert_int_equal(ns, 12345); /* untouched on error */
	assert_non_null(strstr(err, want));
}

static void test_duration_units(void **state)
{
	(void)state;
	assert_int_equal(duration_ok("500ms"), 500000000ULL);
	assert_int_equal(duration_ok("30s"), 30000000000ULL);
	assert_int_equal(duration_ok("5m"), 300000000000ULL);
	assert_int_equal(duration_ok("2h"), 7200000000000ULL);
	assert_int_equal(duration_ok("7d"), 604800000000000ULL);
	assert_int_equal(duration_ok("1ms"), 1000000ULL);
	assert_int_equal(duration_ok("007s"), 7000000000ULL);
}

static void test_duration_decimals(void **state)
{
	(void)state;
	assert_int_equal(duration_ok("1.5m"), 90000000000ULL);
	assert_int_equal(duration_ok("0.1s"), 100000000ULL);
	assert_int_equal(duration_ok("0.001s"), 1000000ULL);
	assert_int_equal(duration_ok("2.25h"), 8100000000000ULL);
	/* One third of a day, to the nanosecond, with digits past 1e-18 dropped. */
	assert_int_equal(duration_ok("0.33333333333333333333333d"), 28799999999999ULL);
	/* The bounds: 1ms and 100 years of 365 days, both included. */
	assert_int_equal(duration_ok("1ms"), TD_DURATION_MIN_NS);
	assert_int_equal(duration_ok("36500d"), 36500ULL * 86400000000000ULL);
	assert_int_equal(duration_ok("876000h"), TD_DURATION_MAX_NS);
}

static void test_duration_errors(void **state)
{
	(void)state;
	const char *syntax = "use a number and a unit, e.g. 500ms, 30s, 5m, 1h, 7d";

	duration_bad("30x", "bad duration '30x' for --every: use a number and a unit"); /* names the option */
	duration_bad("30", syntax);        /* missing unit */
	duration_bad("s", syntax);         /* missing number */
	duration_bad("", syntax);
	duration_bad(NULL, syntax);
	duration_bad("-5s", syntax);
	duration_bad("+5s", syntax);
	duration_bad(" 5s", syntax);
	duration_bad("5s ", syntax);
	duration_bad("5 s", syntax);
	duration_bad("1.s", syntax);
	duration_bad(".5s", syntax);
	duration_bad("1e3s", syntax);
	duration_bad("0x10s", syntax);
	duration_bad("infs", syntax);
	duration_bad("5S", syntax);
	duration_bad("5sec", syntax);
	duration_bad("5ms5", syntax);
	duration_bad("1.2.3s", syntax);
	duration_bad("0s", "shorter than 1ms; use at least 1ms");
	duration_bad("0.0ms", "shorter than 1ms");
	duration_bad("0.0000001ms", "shorter than 1ms"); /* 0.1 ns */
	duration_bad("0.999ms", "shorter than 1ms");
	duration_bad("0.000001ms", "shorter than 1ms");
	/* Past 100 years: refused, never wrapped (106,751 days overflow int64 ns) */
	duration_bad("36500.001d", "bad duration '36500.001d' for --every: it is longer than 100 years; use at most 36500d");
	duration_bad("36501d", "longer than 100 years");
	duration_bad("110000d", "longer than 100 years");
	duration_bad("127600d", "longer than 100 years");
	duration_bad("150000d", "longer than 100 years");
	duration_bad("213503d", "longer than 100 years");
	duration_bad("213504d", "longer than 100 years");
	duration_bad("99999999999999999999999ms", "longer than 100 years");
	duration_bad("18446744073709551615.9ms", "longer than 100 years");
}

/* "Older than" and "the last": a time in the past, saturated rather than wrapped. */
static void test_time_minus(void **state)
{
	(void)state;
	int64_t now = 1800000000LL * 1000000000LL; /* 2027 */

	assert_int_equal(td_time_minus_ns(now, 1000000000ULL), now - 1000000000LL);
	/* the longest duration from now is still in the past, and representable */
	assert_true(td_time_minus_ns(now, TD_DURATION_MAX_NS) < now);
	assert_int_equal(td_time_minus_ns(now, TD_DURATION_MAX_NS), now - (int64_t)TD_DURATION_MAX_NS);
	/* beyond what int64 holds: the earliest time, never one in the future */
	assert_int_equal(td_time_minus_ns(now, UINT64_MAX), INT64_MIN);
	assert_int_equal(td_time_minus_ns(INT64_MIN + 5, 10), INT64_MIN);
	assert_int_equal(td_time_minus_ns(now, (uint64_t)INT64_MAX + 1), INT64_MIN);
	assert_true(td_now_minus_ns(TD_DURATION_MAX_NS) < td_now_minus_ns(TD_DURATION_MIN_NS));
}

static void test_duration_error_truncates_long_input(void **state)
{
	(void)state;
	char text[400], err[512];
	uint64_t ns;

	memset(text, '7', sizeof(text) - 2);
	text[sizeof(text) - 2] = 'x';
	text[sizeof(text) - 1] = '\0';
	assert_int_equal(td_parse_duration_ns(text, "--every", &ns, err, sizeof(err)), -EINVAL);
	assert_true(strlen(err) < 200);
	/* A tiny buffer is truncated, never overrun. */
	char tiny[4];
	assert_int_equal(td_parse_duration_ns("x", "--every", &ns, tiny, sizeof(tiny)), -EINVAL);
	assert_string_equal(tiny, "bad");
}

static void test_pid_list_ok(void **state)
{
	(void)state;
	pid_t pids[4];
	size_t count = 99;
	char err[256] = "";

	assert_int_equal(td_parse_pid_list("123", pids, 4, &count, err, sizeof(err)), 0);
	assert_int_equal(count, 1);
	assert_int_equal(pids[0], 123);
	assert_int_equal(td_parse_pid_list("1,4194304,77,9", pids, 4, &count, err, sizeof(err)), 0);
	assert_int_equal(count, 4);
	assert_int_equal(pids[0], 1);
	assert_int_equal(pids[1], 4194304);
	assert_int_equal(pids[2], 77);
	assert_int_equal(pids[3], 9);
	assert_string_equal(err, "");
}

static void pid_list_bad(const char *text, size_t max, const char *want)
{
	pid_t pids[4];
	size_t count = 99;
	char err[256] = "";

	assert_int_equal(td_parse_pid_list(text, pids, max, &count, err, sizeof(err)), -EINVAL);
	assert_int_equal(count, 0);
	assert_non_null(strstr(err, want));
}

static void test_pid_list_errors(void **state)
{
	(void)state;
	const char *syntax = "use pids from 1 to 4194304 separated by commas, e.g. 123,456";

	pid_list_bad("", 4, syntax);
	pid_list_bad(NULL, 4, syntax);
	pid_list_bad("0", 4, syntax);
	pid_list_bad("-1", 4, syntax);
	pid_list_bad("4194305", 4, syntax);
	pid_list_bad("99999999999999999999999", 4, syntax);
	pid_list_bad("12a", 4, syntax);
	pid_list_bad("1.5", 4, syntax);
	pid_list_bad("1,", 4, syntax);
	pid_list_bad(",1", 4, syntax);
	pid_list_bad("1,,2", 4, syntax);
	pid_list_bad("1, 2", 4, syntax);
	pid_list_bad("firefox", 4, "bad pid list 'firefox'");
	pid_list_bad("5,6,5", 4, "pid 5 appears twice");
	pid_list_bad("1,2,3", 2, "more than 2 pids; name at most 2");
	pid_list_bad("1", 0, "more than 0 pids");
}

static void test_int_range(void **state)
{
	(void)state;
	long v = 0;
	char err[256] = "";

	assert_int_equal(td_parse_int_range("3", "--level", 1, 6, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 3);
	assert_int_equal(td_parse_int_range("1", "--level", 1, 6, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 1);
	assert_int_equal(td_parse_int_range("6", "--level", 1, 6, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 6);
	assert_int_equal(td_parse_int_range("-20", "--nice", -20, 19, &v, err, sizeof(err)), 0);
	assert_int_equal(v, -20);
	assert_string_equal(err, "");

	const char *bad[] = { "0", "7", "", "x", "3x", " 3", "+3", "3.0", "-", "0x3",
			      "99999999999999999999999", NULL };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 42;
		assert_int_equal(td_parse_int_range(bad[i], "--level", 1, 6, &v, err, sizeof(err)), -EINVAL);
		assert_int_equal(v, 42);
		assert_non_null(strstr(err, "for --level: use a whole number from 1 to 6"));
	}
	assert_int_equal(td_parse_int_range("7", "--level", 1, 6, &v, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "bad value '7' for --level: use a whole number from 1 to 6");

	/* The full range of long, at both ends. */
	char text[32];
	snprintf(text, sizeof(text), "%ld", LONG_MIN);
	assert_int_equal(td_parse_int_range(text, "--x", LONG_MIN, LONG_MAX, &v, err, sizeof(err)), 0);
	assert_true(v == LONG_MIN);
	snprintf(text, sizeof(text), "%ld", LONG_MAX);
	assert_int_equal(td_parse_int_range(text, "--x", LONG_MIN, LONG_MAX, &v, err, sizeof(err)), 0);
	assert_true(v == LONG_MAX);
}

static void test_number(void **state)
{
	char err[256];
	double v;

	(void)state;
	assert_int_equal(td_parse_number("2.5", "--sigma", 0.1, 100, &v, err, sizeof(err)), 0);
	assert_true(v == 2.5);
	assert_int_equal(td_parse_number("100", "--sigma", 0.1, 100, &v, err, sizeof(err)), 0);
	assert_int_equal(td_parse_number("100.5", "--sigma", 0.1, 100, &v, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--sigma takes a number from 0.1 to 100, not '100.5'");
	assert_int_equal(td_parse_number("-1", "--sigma", 0.1, 100, &v, err, sizeof(err)), -EINVAL);
	assert_int_equal(td_parse_number("1e3", "--sigma", 0.1, 100, &v, err, sizeof(err)), -EINVAL);
	assert_int_equal(td_parse_number(".", "--sigma", 0.1, 100, &v, err, sizeof(err)), -EINVAL);
	assert_int_equal(td_parse_number("", "--sigma", 0.1, 100, &v, err, sizeof(err)), -EINVAL);
}

static void test_trim_and_digits(void **state)
{
	char text[] = " \t cpu-clock \t", blank[] = " \t ", empty[] = "";

	(void)state;
	assert_string_equal(td_trim_blanks(text), "cpu-clock");
	assert_string_equal(td_trim_blanks(blank), "");
	assert_string_equal(td_trim_blanks(empty), "");
	assert_true(td_all_digits("0123"));
	assert_false(td_all_digits(""));
	assert_false(td_all_digits("12a"));
	assert_false(td_all_digits(" 12"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duration_units),
		cmocka_unit_test(test_duration_decimals),
		cmocka_unit_test(test_duration_errors),
		cmocka_unit_test(test_duration_error_truncates_long_input),
		cmocka_unit_test(test_time_minus),
		cmocka_unit_test(test_pid_list_ok),
		cmocka_unit_test(test_pid_list_errors),
		cmocka_unit_test(test_int_range),
		cmocka_unit_test(test_number),
		cmocka_unit_test(test_trim_and_digits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
