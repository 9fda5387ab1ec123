// SPDX-License-Identifier: BSD-3-Clause
/*
 * Statistics for comparing runs. Welch's t-test rather than Student's: the
 * two sides of a comparison (two branches, two builds) rarely have the same
 * spread. Its p-value comes from the Student t distribution, computed with
 * the regularized incomplete beta function:
 *
 *     P(|T| > t) = I_{df / (df + t^2)}(df / 2, 1 / 2)
 *
 * and I_x(a, b) from its continued fraction, evaluated with Lentz's method
 * on the side of x where the fraction converges quickly.
 */
#include <math.h>

#include "stats.h"

#define FRACTION_MAX_TERMS 500
#define FRACTION_EPSILON 1e-15
#define FRACTION_TINY 1e-300 /* stands in for a zero denominator */

void td_sample_describe(const double *values, size_t count, struct td_sample_stats *out)
{
	double sum = 0, squares = 0;

	*out = (struct td_sample_stats){ .mean = NAN, .sd = NAN, .min = NAN, .max = NAN };
	for (size_t i = 0; i < count; i++) {
		if (isnan(values[i]))
			continue;
		if (out->n == 0 || values[i] < out->min)
			out->min = values[i];
		if (out->n == 0 || values[i] > out->max)
			out->max = values[i];
		sum += values[i];
		out->n++;
	}
	if (out->n == 0)
		return;
	out->mean = sum / (double)out->n;
	/* Deviations from the mean, a second pass: no cancellation. */
	for (size_t i = 0; i < count; i++)
		if (!isnan(values[i]))
			squares += (values[i] - out->mean) * (values[i] - out->mean);
	if (out->n > 1)
		out->sd = sqrt(squares / (double)(out->n - 1));
}

static double not_tiny(double v)
{
	return fabs(v) < FRACTION_TINY ? FRACTION_TINY : v;
}

/*
 * The continued fraction 1 / (1 + d1 / (1 + d2 / (1 + ...))) of I_x(a, b),
 * with d(2m+1) = -(a+m)(a+b+m)x / ((a+2m)(a+2m+1)) and
 * d(2m) = m(b-m)x / ((a+2m-1)(a+2m)), by the modified Lentz method.
 */
static double beta_fraction(double x, double a, double b)
{
	double c = 1.0, d = 1.0 / not_tiny(1.0 - (a + b) * x / (a + 1.0));
	double result = d;

	for (int m = 1; m <= FRACTION_MAX_TERMS; m++) {
		double even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
		double odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
		double step;

		d = 1.0 / not_tiny(1.0 + even * d);
		c = not_tiny(1.0 + even / c);
		result *= d * c;
		d = 1.0 / not_tiny(1.0 + odd * d);
		c = not_tiny(1.0 + odd / c);
		step = d * c;
		result *= step;
		if (fabs(step - 1.0) < FRACTION_EPSILON)
			break;
	}
	return result;
}

double td_incomplete_beta(double x, double a, double b)
{
	int sign;
	double log_front;

	if (!(x >= 0 && x <= 1 && a > 0 && b > 0))
		return NAN;
	if (x == 0 || x == 1)
		return x;
	/* x^a (1-x)^b / B(a, b), through logarithms to stay in range. */
	log_front = a * log(x) + b * log1p(-x) + lgamma_r(a + b, &sign) - lgamma_r(a, &sign) -
		    lgamma_r(b, &sign);
	if (x < (a + 1.0) / (a + b + 2.0))
		return exp(log_front) * beta_fraction(x, a, b) / a;
	/* I_x(a, b) = 1 - I_(1-x)(b, a), where the fraction converges. */
	return 1.0 - exp(log_front) * beta_fraction(1.0 - x, b, a) / b;
}

double td_student_t_cdf(double t, double df)
{
	double tail;

	if (isnan(t) || !(df > 0))
		return NAN;
	/* Half of P(|T| > |t|). */
	tail = 0.5 * td_incomplete_beta(df / (df + t * t), df / 2.0, 0.5);
	return t > 0 ? 1.0 - tail : tail;
}

void td_welch_t_test(const struct td_sample_stats *a, const struct td_sample_stats *b,
		     struct td_welch *out)
{
	double va, vb, se2;

	*out = (struct td_welch){ .t = NAN, .df = NAN, .p = NAN };
	if (a->n < 2 || b->n < 2)
		return;
	va = a->sd * a->sd / (double)a->n;
	vb = b->sd * b->sd / (double)b->n;
	se2 = va + vb;
	if (se2 == 0) {
		/* No spread on either side: any difference is certain. */
		out->df = (double)(a->n + b->n - 2);
		out->t = b->mean == a->mean ? 0 : copysign(INFINITY, b->mean - a->mean);
		out->p = b->mean == a->mean ? 1 : 0;
		return;
	}
	out->t = (b->mean - a->mean) / sqrt(se2);
	out->df = se2 * se2 / (va * va / (double)(a->n - 1) + vb * vb / (double)(b->n - 1));
	out->p = td_incomplete_beta(out->df / (out->df + out->t * out->t), out->df / 2.0, 0.5);
}

double td_cohens_d(const struct td_sample_stats *a, const struct td_sample_stats *b)
{
	double pooled, diff;

	if (a->n < 2 || b->n < 2)
		return NAN;
	pooled = sqrt(((double)(a->n - 1) * a->sd * a->sd + (double)(b->n - 1) * b->sd * b->sd) /
		      (double)(a->n + b->n - 2));
	diff = b->mean - a->mean;
	if (pooled == 0)
		return diff == 0 ? 0 : copysign(INFINITY, diff);
	return diff / pooled;
}
