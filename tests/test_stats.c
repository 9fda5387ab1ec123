// SPDX-License-Identifier: BSD-3-Clause
/*
 * The statistics against values published elsewhere: R's t.test output
 * for two worked examples, Student t table values, closed forms of the
 * t distribution and of the incomplete beta function, and sums done by
 * hand (shown in the comments).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "stats.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void assert_close(double got, double want, double tolerance)
{
	if (!(fabs(got - want) <= tolerance))
		fail_msg("got %.10g, want %.10g (+-%g)", got, want, tolerance);
}

/* R: ts1 = c(11,9,10,11,10,12,9,11,12,9); ts2 = c(11,13,10,13,12,9,11,12,12,11);
 * t.test(ts1, ts2) -> t = -1.8325, df = 17.9, p-value = 0.08356. */
static const double ts1[] = { 11, 9, 10, 11, 10, 12, 9, 11, 12, 9 };
static const double ts2[] = { 11, 13, 10, 13, 12, 9, 11, 12, 12, 11 };

static void test_welch_equal_sizes(void **state)
{
	struct td_sample_stats a, b;
	struct td_welch w;

	(void)state;
	td_sample_describe(ts1, N(ts1), &a);
	td_sample_describe(ts2, N(ts2), &b);
	/* R's t is x - y: ours is b - a, so x is our b. */
	td_welch_t_test(&b, &a, &w);
	assert_close(w.t, -1.8325, 0.00005);
	assert_close(w.df, 17.9, 0.05);
	assert_close(w.p, 0.08356, 0.000005);
	/* The other way round: the same test, the sign of t flipped. */
	td_welch_t_test(&a, &b, &w);
	assert_close(w.t, 1.8325, 0.00005);
	assert_close(w.p, 0.08356, 0.000005);
}

/* R: data_x = c(5.1, 2.0, 4.1, 6.2, 7.1, 8.3);
 * data_y = c(1.5, 6.4, 3.3, 5.8, 4.8, 7.2, 5.6, 4.5);
 * t.test(data_x, data_y) -> t = 0.51703, df = 9.48, p-value = 0.617. */
static void test_welch_unequal_sizes(void **state)
{
	static const double x[] = { 5.1, 2.0, 4.1, 6.2, 7.1, 8.3 };
	static const double y[] = { 1.5, 6.4, 3.3, 5.8, 4.8, 7.2, 5.6, 4.5 };
	struct td_sample_stats a, b;
	struct td_welch w;

	(void)state;
	td_sample_describe(y, N(y), &a);
	td_sample_describe(x, N(x), &b);
	td_welch_t_test(&a, &b, &w);
	assert_close(w.t, 0.51703, 0.000005);
	assert_close(w.df, 9.48, 0.005);
	assert_close(w.p, 0.617, 0.0005);
}

static void test_welch_degenerate(void **state)
{
	static const double one[] = { 0.5 };
	static const double flat_a[] = { 0.25, 0.25, 0.25 };
	static const double flat_b[] = { 0.5, 0.5 };
	struct td_sample_stats a, b, single;
	struct td_welch w;

	(void)state;
	td_sample_describe(one, 1, &single);
	td_sample_describe(ts1, N(ts1), &a);
	td_welch_t_test(&single, &a, &w);
	assert_true(isnan(w.t) && isnan(w.df) && isnan(w.p));
	/* No spread anywhere: a difference is certain, sameness too. */
	td_sample_describe(flat_a, N(flat_a), &a);
	td_sample_describe(flat_b, N(flat_b), &b);
	td_welch_t_test(&a, &b, &w);
	assert_true(isinf(w.t) && w.t > 0);
	assert_true(w.p == 0);
	td_welch_t_test(&a, &a, &w);
	assert_true(w.t == 0 && w.p == 1);
}

static void test_describe(void **state)
{
	static const double with_nan[] = { NAN, 11, 9, 10, 11, 10, 12, 9, 11, 12, 9, NAN };
	struct td_sample_stats s;

	(void)state;
	/* ts1: sum 104, mean 10.4; squared deviations add up to 12.4, so
	 * sd = sqrt(12.4 / 9) = 1.1737877... */
	td_sample_describe(with_nan, N(with_nan), &s);
	assert_int_equal(s.n, 10);
	assert_close(s.mean, 10.4, 1e-12);
	assert_close(s.sd, 1.1737877907, 1e-9);
	assert_close(s.min, 9, 0);
	assert_close(s.max, 12, 0);
	td_sample_describe(with_nan, 1, &s);
	assert_int_equal(s.n, 0);
	assert_true(isnan(s.mean) && isnan(s.sd) && isnan(s.min));
	td_sample_describe(with_nan + 1, 1, &s);
	assert_int_equal(s.n, 1);
	assert_close(s.mean, 11, 0);
	assert_true(isnan(s.sd));
}

/* ts1 against ts2: squared deviations 12.4 and 14.4 over 18 degrees of
 * freedom pool to 1.488889, sd 1.220200; the means differ by 1.0, so
 * d = 1.0 / 1.220200 = 0.81954. */
static void test_cohens_d(void **state)
{
	static const double flat[] = { 1, 1, 1 };
	struct td_sample_stats a, b, c;

	(void)state;
	td_sample_describe(ts1, N(ts1), &a);
	td_sample_describe(ts2, N(ts2), &b);
	assert_close(td_cohens_d(&a, &b), 0.81954, 0.00001);
	assert_close(td_cohens_d(&b, &a), -0.81954, 0.00001);
	td_sample_describe(flat, N(flat), &c);
	assert_close(td_cohens_d(&c, &c), 0, 0);
	td_sample_describe(flat, 1, &c);
	assert_true(isnan(td_cohens_d(&c, &a)));
}

static void test_student_t(void **state)
{
	(void)state;
	/* Table values (two-sided 5%, one-sided 5%, two-sided 1%). */
	assert_close(td_student_t_cdf(2.228, 10), 0.975, 0.0001);
	assert_close(td_student_t_cdf(6.314, 1), 0.95, 0.0001);
	assert_close(td_student_t_cdf(2.750, 30), 0.995, 0.0001);
	assert_close(td_student_t_cdf(-2.228, 10), 0.025, 0.0001);
	/* Closed forms: df 1 is Cauchy, 1/2 + atan(t)/pi; df 2 is
	 * 1/2 + t / (2 sqrt(2 + t^2)). */
	assert_close(td_student_t_cdf(1, 1), 0.75, 1e-12);
	assert_close(td_student_t_cdf(-3, 1), 0.5 + atan(-3) / M_PI, 1e-12);
	assert_close(td_student_t_cdf(2, 2), 0.5 + 2 / (2 * sqrt(6)), 1e-12);
	assert_close(td_student_t_cdf(0, 7), 0.5, 1e-15);
	/* R: 2 * pt(-2.6864, 55.074) = 0.009529008. */
	assert_close(2 * td_student_t_cdf(-2.6864, 55.074), 0.009529008, 1e-9);
	assert_close(td_student_t_cdf(INFINITY, 3), 1, 0);
	assert_true(isnan(td_student_t_cdf(1, 0)));
	assert_true(isnan(td_student_t_cdf(NAN, 3)));
}

static void test_incomplete_beta(void **state)
{
	(void)state;
	/* I_x(1, 1) = x; I_x(a, 1) = x^a; I_x(1, b) = 1 - (1-x)^b; I_1/2(a, a) = 1/2. */
	assert_close(td_incomplete_beta(0.3, 1, 1), 0.3, 1e-14);
	assert_close(td_incomplete_beta(0.7, 3, 1), pow(0.7, 3), 1e-14);
	assert_close(td_incomplete_beta(0.2, 1, 4), 1 - pow(0.8, 4), 1e-14);
	assert_close(td_incomplete_beta(0.5, 7.5, 7.5), 0.5, 1e-13);
	assert_close(td_incomplete_beta(0, 2, 3), 0, 0);
	assert_close(td_incomplete_beta(1, 2, 3), 1, 0);
	assert_true(isnan(td_incomplete_beta(1.5, 2, 3)));
	assert_true(isnan(td_incomplete_beta(0.5, 0, 3)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_welch_equal_sizes),
		cmocka_unit_test(test_welch_unequal_sizes),
		cmocka_unit_test(test_welch_degenerate),
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_cohens_d),
		cmocka_unit_test(test_student_t),
		cmocka_unit_test(test_incomplete_beta),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
