// SPDX-License-Identifier: BSD-3-Clause
/*
 * Locate's questions (user/query/hot.c) over profiles made by hand, so
 * every number is known: self and total shares (a recursive function
 * counted once per stack), the source line with most self samples, the
 * thread scope, folded stacks led by the thread group, the differential
 * counts and the comparison; and the empty answers.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "hot.h"
#include "storage.h"

static char dir[] = "/tmp/td-hot-XXXXXX";
static char db[128];

/*
 * One process, two threads:
 *   worker_1: main;loop;hot_a (line 10) x60, main;loop;hot_a (line 11) x20,
 *             main;rec;rec;rec x10 (recursion), main;loop x10
 *   io_2:     main;hot_b x50 (scale multiplies every count)
 */
static struct td_profile *sample_profile(uint64_t scale, uint64_t b_count)
{
	struct td_profile *p = td_profile_new();
	struct td_frame frames[] = {
		{ .function = "main", .module = "app", .file = "app.c", .line = 1 },
		{ .function = "loop", .module = "app", .file = "app.c", .line = 5 },
		{ .function = "hot_a", .module = "app", .file = "app.c", .line = 10 },
		{ .function = "hot_a", .module = "app", .file = "app.c", .line = 11, .offset = 4 },
		{ .function = "rec", .module = "app", .file = "app.c", .line = 20 },
		{ .function = "hot_b", .module = "libb.so", .file = "b.c", .line = 7 },
	};
	uint32_t a10[] = { 0, 1, 2 }, a11[] = { 0, 1, 3 }, rec[] = { 0, 4, 4, 4 }, loop[] = { 0, 1 }, b[] = { 0, 5 };
	struct td_profile_stack stacks[] = {
		{ .tid = 11, .pid = 10, .comm = "worker_1", .count = 60 * scale, .nr_frames = 3, .frames = a10 },
		{ .tid = 11, .pid = 10, .comm = "worker_1", .count = 20 * scale, .nr_frames = 3, .frames = a11 },
		{ .tid = 11, .pid = 10, .comm = "worker_1", .count = 10 * scale, .nr_frames = 4, .frames = rec },
		{ .tid = 11, .pid = 10, .comm = "worker_1", .count = 10 * scale, .nr_frames = 2, .frames = loop },
		{ .tid = 12, .pid = 10, .comm = "io_2", .count = b_count, .nr_frames = 2, .frames = b },
	};

	p->event = strdup("cpu-clock");
	p->unit = strdup("cpu-clock samples");
	p->frequency_hz = 99;
	for (size_t i = 0; i < sizeof(frames) / sizeof(frames[0]); i++)
		td_profile_intern_frame(p, &frames[i]);
	for (size_t i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++)
		if (stacks[i].count)
			td_profile_add_stack(p, &stacks[i]);
	return p;
}

static struct td_store *open_store(void)
{
	struct td_store_config config = { .path = db };
	char err[256];
	struct td_store *store = td_store_open(&config, err, sizeof(err));

	if (!store)
		fail_msg("%s", err);
	return store;
}

/* A run labelled build=NAME holding profile (NULL: none). */
static void store_run(const char *build, struct td_profile *profile)
{
	struct td_store *store = open_store();
	struct td_run *run = td_run_new();
	char err[256], label[64];

	snprintf(label, sizeof(label), "build=%s", build);
	run->process = strdup("app");
	run->started_ns = 1000;
	run->ended_ns = 2000;
	assert_int_equal(td_labels_parse_arg(&run->labels, label, err, sizeof(err)), 0);
	run->profile = profile;
	assert_int_equal(td_store_write_run(store, run, err, sizeof(err)), 0);
	td_run_free(run);
	td_store_close(store);
}

static struct td_query query_of(const char *build, struct td_labels *labels)
{
	char label[64], err[128];

	td_labels_init(labels);
	snprintf(label, sizeof(label), "build=%s", build);
	assert_int_equal(td_labels_parse_arg(labels, label, err, sizeof(err)), 0);
	return (struct td_query){ .runs = { .labels = labels } };
}

static const struct td_hot_function *find(const struct td_hot *hot, const char *name)
{
	for (size_t i = 0; i < hot->nr_functions; i++)
		if (strcmp(hot->functions[i].name, name) == 0)
			return &hot->functions[i];
	return NULL;
}

static void test_shares_and_lines(void **state)
{
	struct td_store *store = open_store();
	struct td_labels labels;
	struct td_query q = query_of("one", &labels);
	struct td_hot *hot = NULL;
	const struct td_hot_function *f;
	char err[256];

	(void)state;
	assert_int_equal(td_query_hot(store, &q, &hot, err, sizeof(err)), 0);
	assert_int_equal(hot->samples, 150);
	assert_string_equal(hot->event, "cpu-clock");
	/* hottest first by self: hot_a 80, hot_b 50, rec 10, loop 10; main 0 */
	assert_string_equal(hot->functions[0].name, "hot_a");
	assert_string_equal(hot->functions[1].name, "hot_b");
	f = find(hot, "hot_a");
	assert_int_equal(f->self_count, 80);
	assert_int_equal(f->total_count, 80);
	assert_true(fabs(f->self_share - 80.0 / 150) < 1e-12);
	assert_int_equal(f->line, 10); /* the line with most self samples */
	f = find(hot, "rec");
	assert_int_equal(f->self_count, 10);
	assert_int_equal(f->total_count, 10); /* three frames deep, counted once */
	f = find(hot, "main");
	assert_int_equal(f->self_count, 0);
	assert_int_equal(f->total_count, 150);
	assert_string_equal(find(hot, "hot_b")->module, "libb.so");
	td_hot_free(hot);

	/* One thread, by its group's name; then by tid; then top_n. */
	q.thread = "worker_7";
	assert_int_equal(td_query_hot(store, &q, &hot, err, sizeof(err)), 0);
	assert_int_equal(hot->samples, 100);
	assert_null(find(hot, "hot_b"));
	td_hot_free(hot);
	q.thread = "12";
	q.top_n = 1;
	assert_int_equal(td_query_hot(store, &q, &hot, err, sizeof(err)), 0);
	assert_int_equal(hot->samples, 50);
	assert_int_equal(hot->nr_functions, 1);
	assert_string_equal(hot->functions[0].name, "hot_b");
	assert_true(hot->functions[0].self_share == 1.0);
	td_hot_free(hot);
	/* A thread that never ran: an empty answer. */
	q.thread = "nobody";
	assert_int_equal(td_query_hot(store, &q, &hot, err, sizeof(err)), TD_QUERY_NOTHING);
	assert_null(hot);
	assert_non_null(strstr(err, "--thread"));
	td_labels_free(&labels);
	td_store_close(store);
}

static void test_folded_and_differential(void **state)
{
	struct td_store *store = open_store();
	struct td_labels now_labels, base_labels;
	struct td_query now = query_of("two", &now_labels), base = query_of("one", &base_labels);
	struct td_folded_set *set = NULL;
	char err[256];
	bool seen_rec = false, seen_b = false;

	(void)state;
	assert_int_equal(td_query_folded(store, &now, &base, &set, err, sizeof(err)), 0);
	assert_int_equal(set->nr_runs, 1);
	assert_int_equal(set->nr_base_runs, 1);
	assert_int_equal(set->samples, 2 * 100 + 10);
	assert_int_equal(set->base_samples, 150);
	for (size_t i = 0; i < set->nr_stacks; i++) {
		const struct td_folded *f = &set->stacks[i];

		if (i)
			assert_true(strcmp(set->stacks[i - 1].stack, f->stack) < 0);
		if (strcmp(f->stack, "worker_*;main;rec;rec;rec") == 0) {
			assert_int_equal(f->count, 20);
			assert_int_equal(f->base_count, 10);
			seen_rec = true;
		}
		if (strcmp(f->stack, "io_*;main;hot_b") == 0) {
			assert_int_equal(f->count, 10);
			assert_int_equal(f->base_count, 50);
			seen_b = true;
		}
	}
	assert_true(seen_rec && seen_b);
	/* hot_a's two lines are one folded frame: one stack, not two */
	for (size_t i = 0; i < set->nr_stacks; i++)
		if (strcmp(set->stacks[i].stack, "worker_*;main;loop;hot_a") == 0)
			assert_int_equal(set->stacks[i].count, 160);
	td_folded_set_free(set);
	td_labels_free(&now_labels);
	td_labels_free(&base_labels);
	td_store_close(store);
}

static void test_compare(void **state)
{
	struct td_store *store = open_store();
	struct td_labels now_labels, base_labels;
	struct td_query now = query_of("two", &now_labels), base = query_of("one", &base_labels);
	struct td_hot_comparison *c = NULL;
	char err[256];

	(void)state;
	assert_int_equal(td_compare_hot(store, &base, &now, &c, err, sizeof(err)), 0);
	/* hot_a: 80/150 -> 160/210, the largest rise; hot_b: 50/150 -> 10/210, the largest fall */
	assert_string_equal(c->changes[0].name, "hot_a");
	assert_true(fabs(c->changes[0].delta - (160.0 / 210 - 80.0 / 150)) < 1e-12);
	assert_string_equal(c->changes[c->nr_changes - 1].name, "hot_b");
	assert_true(c->changes[c->nr_changes - 1].delta < 0);
	for (size_t i = 1; i < c->nr_changes; i++)
		assert_true(c->changes[i - 1].delta >= c->changes[i].delta);
	td_hot_comparison_free(c);
	td_labels_free(&now_labels);
	td_labels_free(&base_labels);
	td_store_close(store);
}

static void test_runs_without_profiles(void **state)
{
	struct td_store *store = open_store();
	struct td_labels labels, other_labels;
	struct td_query q = query_of("none", &labels), other = query_of("one", &other_labels);
	struct td_folded_set *set = (struct td_folded_set *)&set;
	struct td_hot_comparison *c = (struct td_hot_comparison *)&c;
	struct td_hot *hot = (struct td_hot *)&hot;
	char err[256];

	(void)state;
	assert_int_equal(td_query_hot(store, &q, &hot, err, sizeof(err)), TD_QUERY_NOTHING);
	assert_null(hot);
	assert_non_null(strstr(err, "1 run matched, none with a profile"));
	assert_int_equal(td_query_folded(store, &q, NULL, &set, err, sizeof(err)), TD_QUERY_NOTHING);
	assert_null(set);
	/* with a base that has profiles, the new side still has none */
	assert_int_equal(td_query_folded(store, &q, &other, &set, err, sizeof(err)), TD_QUERY_NOTHING);
	assert_null(set);
	assert_int_equal(td_compare_hot(store, &other, &q, &c, err, sizeof(err)), TD_QUERY_NOTHING);
	assert_null(c);
	td_labels_free(&labels);
	td_labels_free(&other_labels);
	td_store_close(store);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(db, sizeof(db), "%s/runs.db", dir);
	store_run("one", sample_profile(1, 50));
	store_run("two", sample_profile(2, 10));
	store_run("none", NULL);
	return 0;
}

static int teardown(void **state)
{
	char path[160];

	(void)state;
	for (const char *suffix = ""; suffix; suffix = *suffix ? (suffix[1] == 'w' ? "-shm" : NULL) : "-wal") {
		snprintf(path, sizeof(path), "%s%s", db, suffix);
		unlink(path);
	}
	rmdir(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shares_and_lines),
		cmocka_unit_test(test_folded_and_differential),
		cmocka_unit_test(test_compare),
		cmocka_unit_test(test_runs_without_profiles),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
