/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The statistics behind compare and trend: sample summaries, Welch's
 * unequal-variances t-test (two-sided), Cohen's d, and the Student t
 * distribution they need. Plain functions of numbers; no allocation.
 */
#ifndef TOPDOWN_STATS_H
#define TOPDOWN_STATS_H

#include <stddef.h>

/* What a sample of values looks like; NaN values are left out. */
struct td_sample_stats {
	size_t n;       /* values that are numbers */
	double mean;    /* NaN when n == 0 */
	double sd;      /* sample standard deviation (n - 1); NaN when n < 2 */
	double min, max;
};

void td_sample_describe(const double *values, size_t count, struct td_sample_stats *out);

/* Welch's t-test of the difference b - a. */
struct td_welch {
	double t;  /* (mean_b - mean_a) / standard error; +-inf when both spreads are 0 */
	double df; /* Welch-Satterthwaite degrees of freedom */
	double p;  /* two-sided p-value; NaN when a side has fewer than 2 values */
};

void td_welch_t_test(const struct td_sample_stats *a, const struct td_sample_stats *b,
		     struct td_welch *out);

/*
 * Cohen's d of b against a: (mean_b - mean_a) over the pooled standard
 * deviation. NaN when a side has fewer than 2 values; +-inf when the
 * pooled spread is 0 and the means differ, 0 when they do not.
 */
double td_cohens_d(const struct td_sample_stats *a, const struct td_sample_stats *b);

/* P(T <= t) for Student's t with df > 0 degrees of freedom. */
double td_student_t_cdf(double t, double df);

/* The regularized incomplete beta function I_x(a, b), 0 <= x <= 1, a, b > 0. */
double td_incomplete_beta(double x, double a, double b);

#endif
