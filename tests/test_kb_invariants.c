// SPDX-License-Identifier: BSD-3-Clause
/*
 * Invariants of every model's tree on plausible counter values
 * (test_kb_vectors.h):
 *   - the level-1 nodes add up to 100% where the model says so;
 *   - children add up to their parent where the model says so;
 *   - no metric is NaN.
 * A vector counts when its level-1 nodes lie within 0..100%; at least
 * half of the generated vectors must, or the generator (and so the test)
 * would not be saying much.
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

#include "kb.h"
#include "test_kb_vectors.h"

#define WANTED 1000
#define TOLERANCE 1e-3 /* 0.1 percentage point */

static struct td_kb *kb;

static int load_kb(void **state)
{
	(void)state;
	char err[512];
	kb = td_kb_new(err, sizeof(err));
	if (!kb)
		print_message("td_kb_new: %s\n", err);
	return kb ? 0 : -1;
}

static int free_kb(void **state)
{
	(void)state;
	td_kb_free(kb);
	return 0;
}

static double shown(const struct td_metric_def *d, const double *values)
{
	return values[d->slot] * d->scale;
}

static bool level1_plausible(const struct td_model *m, const double *values)
{
	for (size_t i = 0; i < m->n_metrics; i++) {
		const struct td_metric_def *d = &m->metrics[i];
		double v = shown(d, values);
		if (d->kind == TD_METRIC_TREE && d->level == 1 && !(v >= -1e-9 && v <= 1 + 1e-9))
			return false;
	}
	return true;
}

static double children_sum(const struct td_model *m, const char *parent, const double *values)
{
	double sum = 0;
	for (size_t i = 0; i < m->n_metrics; i++) {
		const struct td_metric_def *d = &m->metrics[i];
		if (d->kind == TD_METRIC_TREE && (parent ? d->parent && !strcmp(d->parent, parent)
							 : d->level == 1))
			sum += shown(d, values);
	}
	return sum;
}

static void check_vector(const struct td_model *m, const double *values)
{
	if (m->level1_sums && fabs(children_sum(m, NULL, values) - 1) > TOLERANCE)
		fail_msg("%s: level 1 adds up to %.6f", m->name, children_sum(m, NULL, values));
	for (size_t i = 0; i < m->n_metrics; i++) {
		const struct td_metric_def *d = &m->metrics[i];
		if (isnan(values[d->slot]))
			fail_msg("%s: %s is NaN", m->name, d->name);
		double sum = children_sum(m, d->name, values);
		if (d->children_sum && fabs(sum - shown(d, values)) > TOLERANCE)
			fail_msg("%s: children of %s add up to %.6f, not %.6f", m->name, d->name, sum,
				 shown(d, values));
	}
}

static void test_invariants(void **state)
{
	(void)state;
	struct kbv_rng rng = { 0x9e3779b97f4a7c15ull };
	for (size_t i = 0; i < td_kb_model_count(kb); i++) {
		const struct td_model *m = td_kb_model_at(kb, i);
		double *values = calloc(m->n_slots, sizeof(*values));
		size_t tried = 0, kept = 0, sums = m->level1_sums;
		for (size_t k = 0; k < m->n_metrics; k++)
			sums += m->metrics[k].children_sum;
		assert_non_null(values);
		while (kept < WANTED && tried < 4 * WANTED) {
			kbv_fill(m, &rng, 0, values);
			tried++;
			if (!level1_plausible(m, values))
				continue;
			check_vector(m, values);
			kept++;
		}
		print_message("%-17s %4zu of %4zu vectors plausible; %zu sum rules checked\n",
			      m->name, kept, tried, sums);
		if (kept < WANTED || kept * 2 < tried)
			fail_msg("%s: only %zu of %zu vectors were plausible", m->name, kept, tried);
		free(values);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_invariants),
	};
	return cmocka_run_group_tests(tests, load_kb, free_kb);
}
