// SPDX-License-Identifier: BSD-3-Clause
/*
 * The questions of user/query/query.h, each asked of both backends with data
 * whose answers were worked out by hand (in the comments), or come from
 * R's t.test for the significance of a comparison.
 */
#include <errno.h>

#include "backends.h"
#include "engine.h"
#include "query.h"
#include "query_render.h"

static void assert_close(double got, double want)
{
	if (!(fabs(got - want) <= 1e-9))
		fail_msg("got %.12g, want %.12g", got, want);
}

/* ---- the tree: three runs of one test ---- */

/*
 *                   run 1      run 2      run 3
 * Frontend_Bound    0.20       0.10       0.30 crossed
 *   Fetch_Latency   0.15       0.05       NaN
 * Backend_Bound     0.50 cr.   0.60 cr.   0.40
 *   Memory_Bound    0.30 cr.   0.40 cr.   0.20 cr. (confidence 0.3)
 *   Core_Bound      0.20       0.20       0.20
 * Retiring          0.30       0.30       0.30
 *
 * Means: Frontend 0.2 (crossed 1 of 3), Fetch_Latency 0.1 over 2 values,
 * Backend 0.5 (2 of 3: crossed), Memory 0.3 (3 of 3, lowest confidence
 * 0.3), Core 0.2, Retiring 0.3. Useful 0.3, wasted 0.2 + 0.5 = 0.7.
 * Bottlenecks: Memory_Bound in all three runs (mean 0.3), Frontend_Bound
 * in run 3 (0.3).
 */
static void store_tree_runs(struct backend *b)
{
	static const double v[3][6] = {
		{ 0.20, 0.15, 0.50, 0.30, 0.20, 0.30 },
		{ 0.10, 0.05, 0.60, 0.40, 0.20, 0.30 },
		{ 0.30, NAN, 0.40, 0.20, 0.20, 0.30 },
	};
	static const bool crossed[3][6] = {
		{ 0, 0, 1, 1, 0, 0 }, { 0, 0, 1, 1, 0, 0 }, { 1, 0, 0, 1, 0, 0 },
	};
	static const char *const paths[] = {
		"Frontend_Bound", "Frontend_Bound.Fetch_Latency", "Backend_Bound",
		"Backend_Bound.Memory_Bound", "Backend_Bound.Core_Bound", "Retiring",
	};

	for (int r = 0; r < 3; r++) {
		struct td_run *run = new_run("app", 100 + r, "test=tree");

		for (int i = 0; i < 6; i++)
			add_row(run, TD_SCOPE_PROCESS, "100", paths[i], v[r][i], crossed[r][i],
				r == 2 && i == 3 ? 0.3 : 1.0);
		store_run(b, run, NULL);
	}
	/* Another test's run, which the label filter keeps out. */
	struct td_run *other = new_run("app", 200, "test=other");

	add_node(other, "Frontend_Bound", 0.9, true);
	store_run(b, other, NULL);
}

static struct td_labels tree_labels;

static struct td_query tree_query(void)
{
	td_labels_free(&tree_labels);
	td_labels_set(&tree_labels, "test", "tree");
	return (struct td_query){ .runs = { .labels = &tree_labels } };
}

static void test_tree(void **state)
{
	struct backend *b = backend_of(state);
	struct td_query q = tree_query();
	struct td_tree *t = NULL;
	static const char *const order[] = {
		"Frontend_Bound", "Frontend_Bound.Fetch_Latency", "Backend_Bound",
		"Backend_Bound.Memory_Bound", "Backend_Bound.Core_Bound", "Retiring",
	};

	store_tree_runs(b);
	assert_int_equal(td_query_tree(b->store, &q, &t, b->err, ERRLEN), 0);
	assert_int_equal(t->nr_runs, 3);
	assert_int_equal(t->nr_samples, 3);
	assert_int_equal(t->nr_nodes, 6);
	for (int i = 0; i < 6; i++)
		assert_string_equal(t->nodes[i].path, order[i]);
	assert_close(t->nodes[0].value, 0.2);
	assert_close(t->nodes[0].min, 0.1);
	assert_close(t->nodes[0].max, 0.3);
	assert_false(t->nodes[0].crossed);
	assert_int_equal(t->nodes[0].nr_crossed, 1);
	assert_close(t->nodes[1].value, 0.1);
	assert_int_equal(t->nodes[1].nr_values, 2);
	assert_string_equal(t->nodes[1].name, "Fetch_Latency");
	assert_int_equal(t->nodes[1].level, 2);
	assert_true(t->nodes[2].crossed);
	assert_close(t->nodes[2].value, 0.5);
	assert_true(t->nodes[3].crossed);
	assert_close(t->nodes[3].confidence, 0.3);
	assert_true(t->nodes[3].low_confidence);
	assert_false(t->nodes[2].low_confidence);
	assert_true(t->nodes[5].useful);
	assert_false(t->nodes[2].useful);
	assert_close(t->useful, 0.3);
	assert_close(t->wasted, 0.7);
	td_tree_free(t);

	/* Level 1 only; then the largest child of each node only. */
	q.max_level = 1;
	assert_int_equal(td_query_tree(b->store, &q, &t, b->err, ERRLEN), 0);
	assert_int_equal(t->nr_nodes, 3);
	assert_string_equal(t->nodes[1].path, "Backend_Bound");
	td_tree_free(t);
	q.max_level = 0;
	q.top_n = 1;
	assert_int_equal(td_query_tree(b->store, &q, &t, b->err, ERRLEN), 0);
	assert_int_equal(t->nr_nodes, 2);
	assert_string_equal(t->nodes[0].path, "Backend_Bound");
	assert_string_equal(t->nodes[1].path, "Backend_Bound.Memory_Bound");
	td_tree_free(t);
	td_labels_free(&tree_labels);
}

static void test_bottlenecks(void **state)
{
	struct backend *b = backend_of(state);
	struct td_query q = tree_query();
	struct td_bottlenecks *x = NULL;

	store_tree_runs(b);
	assert_int_equal(td_query_bottlenecks(b->store, &q, &x, b->err, ERRLEN), 0);
	assert_int_equal(x->nr_runs, 3);
	assert_int_equal(x->count, 2);
	assert_string_equal(x->items[0].path, "Backend_Bound.Memory_Bound");
	assert_string_equal(x->items[0].name, "Memory_Bound");
	assert_int_equal(x->items[0].nr_samples, 3);
	assert_close(x->items[0].value, 0.3);
	assert_true(x->items[0].low_confidence);
	assert_string_equal(x->items[1].path, "Frontend_Bound");
	assert_int_equal(x->items[1].nr_samples, 1);
	assert_close(x->items[1].value, 0.3);
	td_bottlenecks_free(x);
	q.top_n = 1;
	assert_int_equal(td_query_bottlenecks(b->store, &q, &x, b->err, ERRLEN), 0);
	assert_int_equal(x->count, 1);
	td_bottlenecks_free(x);
	td_labels_free(&tree_labels);
}

/* A grandchild crossing under a child that does not: the grandchild is
 * the bottleneck of that branch, unless the levels shown stop above it. */
static void test_bottleneck_is_deepest(void **state)
{
	struct backend *b = backend_of(state);
	struct td_run *run = new_run("app", 1, NULL);
	struct td_query q = { .max_level = 0 };
	struct td_bottlenecks *x = NULL;
	char id[TD_RUN_ID_LEN];

	add_node(run, "Backend_Bound", 0.6, true);
	add_node(run, "Backend_Bound.Memory_Bound", 0.2, false);
	add_node(run, "Backend_Bound.Memory_Bound.DRAM_Bound", 0.15, true);
	add_node(run, "Retiring", 0.2, false);
	store_run(b, run, id);
	q.runs.run_id = id;
	assert_int_equal(td_query_bottlenecks(b->store, &q, &x, b->err, ERRLEN), 0);
	assert_int_equal(x->count, 1);
	assert_string_equal(x->items[0].path, "Backend_Bound.Memory_Bound.DRAM_Bound");
	td_bottlenecks_free(x);
	q.max_level = 2;
	assert_int_equal(td_query_bottlenecks(b->store, &q, &x, b->err, ERRLEN), 0);
	assert_int_equal(x->count, 1);
	assert_string_equal(x->items[0].path, "Backend_Bound");
	td_bottlenecks_free(x);
}

/* More bottlenecks than one run has of anything else. */
static void test_many_bottlenecks(void **state)
{
	struct backend *b = backend_of(state);
	struct td_run *run = new_run("app", 1, NULL);
	struct td_bottlenecks *x = NULL;
	struct td_query q = { 0 };

	add_node(run, "Backend_Bound", 0.9, true);
	for (int i = 0; i < 40; i++) {
		char path[64];

		snprintf(path, sizeof(path), "Backend_Bound.Node_%02d", i);
		add_node(run, path, 0.01 * i, true);
	}
	store_run(b, run, NULL);
	assert_int_equal(td_query_bottlenecks(b->store, &q, &x, b->err, ERRLEN), 0);
	assert_int_equal(x->count, 40);
	assert_string_equal(x->items[0].path, "Backend_Bound.Node_39"); /* the largest */
	td_bottlenecks_free(x);
}

/*
 * PostgreSQL adds the deepest crossing rows up on the server, SQLite's
 * are added up here from the rows: the same runs in both must give the
 * same bits. Random rows with what could set them apart: NaN values and
 * confidences, -0, several pids (byte order is not numeric order), runs
 * that start at the same time, paths that share a start without being
 * under each other ("A.B" and "A.BC"), LIKE's metacharacters, a crossing
 * row under one that does not cross.
 */
static uint64_t parity_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double parity_uniform(uint64_t *state)
{
	return (double)(parity_random(state) >> 11) / 9007199254740992.0;
}

static void assert_same_bits(double a, double b)
{
	if (isnan(a) || isnan(b))
		assert_true(isnan(a) && isnan(b));
	else if (a != b || signbit(a) != signbit(b))
		fail_msg("%.17g differs from %.17g", a, b);
}

static void assert_same_bottlenecks(const struct td_bottlenecks *x, const struct td_bottlenecks *y)
{
	assert_int_equal(x->nr_runs, y->nr_runs);
	assert_int_equal(x->nr_samples, y->nr_samples);
	assert_int_equal(x->count, y->count);
	for (size_t i = 0; i < x->count; i++) {
		assert_string_equal(x->items[i].path, y->items[i].path);
		assert_int_equal(x->items[i].level, y->items[i].level);
		assert_int_equal(x->items[i].nr_samples, y->items[i].nr_samples);
		assert_same_bits(x->items[i].value, y->items[i].value);
		assert_same_bits(x->items[i].confidence, y->items[i].confidence);
		assert_int_equal(x->items[i].low_confidence, y->items[i].low_confidence);
	}
}

static void test_bottlenecks_same_on_both(void **state)
{
	static const char *const paths[] = {
		"A", "A.B", "A.B.C", "A.BC", "A.B.C.D", "A_B", "A_B.x%y", "Z", "Z.Y",
	};
	static const char *const pids[] = { "100", "20", "3" };
	static const char *const groups[] = { "io_thd_*", "main" };
	struct backend *b = backend_of(state);
	struct td_store_config cfg = { .path = NULL };
	char dir[] = "/tmp/td-parity-XXXXXX", path[64];
	struct td_labels labels;
	struct td_query queries[] = {
		{ .max_level = 0 }, { .max_level = 1 }, { .max_level = 2 }, { .thread = "io_thd_7" },
		{ .thread = "main" }, { .runs = { .labels = &labels } }, { .runs = { .limit = 7 } },
		{ .runs = { .labels = &labels, .limit = 3 }, .max_level = 3 }, { .top_n = 2 },
	};
	struct td_store *sqlite;
	uint64_t rng = 7;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/data.db", dir);
	cfg.path = path;
	sqlite = td_store_open(&cfg, b->err, ERRLEN);
	assert_non_null(sqlite);
	for (int r = 0; r < 80; r++) {
		struct td_run *run = new_run("app", r / 3, r % 2 ? "k=odd" : "k=even");

		for (size_t k = 0; k < 5; k++) {
			enum td_metric_scope scope = k < 3 ? TD_SCOPE_PROCESS : TD_SCOPE_GROUP;
			const char *key = k < 3 ? pids[k] : groups[k - 3];

			for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
				double v = parity_uniform(&rng), value = v < 0.05 ? NAN
					  : v < 0.08 ? -0.0 : parity_uniform(&rng);
				double c = parity_uniform(&rng), confidence = c < 0.05 ? NAN
					  : c < 0.3 ? 0.3 : 1.0;

				if (parity_uniform(&rng) < 0.2)
					continue; /* not every sample has every node */
				add_row(run, scope, key, paths[i], value,
					parity_uniform(&rng) < 0.45, confidence);
			}
		}
		/* Written to SQLite first: the run gets its id there. */
		if (td_store_write_run(sqlite, run, b->err, ERRLEN) != 0)
			fail_msg("SQLite write failed: %s", b->err);
		store_run(b, run, NULL);
	}
	td_labels_init(&labels);
	td_labels_set(&labels, "k", "odd");
	for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) {
		struct td_bottlenecks *x = NULL, *y = NULL;

		assert_int_equal(td_query_bottlenecks(b->store, &queries[i], &x, b->err, ERRLEN), 0);
		assert_int_equal(td_query_bottlenecks(sqlite, &queries[i], &y, b->err, ERRLEN), 0);
		assert_true(x->count > 0);
		assert_same_bottlenecks(x, y);
		td_bottlenecks_free(x);
		td_bottlenecks_free(y);
	}
	td_labels_free(&labels);
	td_store_close(sqlite);
	nftw(dir, backend_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The server going away mid-session: one line saying so, no answer. */
static void test_bottlenecks_server_gone(void **state)
{
	struct backend *b = backend_of(state);
	struct td_run *run = new_run("app", 1, NULL);
	struct td_bottlenecks *x = NULL;
	struct td_query q = { 0 };
	int ret;

	add_node(run, "Backend_Bound", 0.6, true);
	store_run(b, run, NULL);
	assert_true(pg_pause());
	ret = td_query_bottlenecks(b->store, &q, &x, b->err, ERRLEN);
	assert_true(pg_resume());
	assert_true(ret < 0 && ret != TD_QUERY_NOTHING);
	assert_null(x);
	assert_non_null(strstr(b->err, "cannot read the database at postgresql://"));
	assert_null(strchr(b->err, '\n'));
}

/* ---- scopes: a thread name, a thread ---- */

static void test_thread_scopes(void **state)
{
	struct backend *b = backend_of(state);
	struct td_run *run = new_run("app", 1, NULL);
	struct td_query q = { .thread = "io_thd_12" };
	struct td_tree *t = NULL;

	add_node(run, "Backend_Bound", 0.1, false);
	add_row(run, TD_SCOPE_GROUP, "io_thd_*", "Backend_Bound", 0.7, true, 1);
	add_row(run, TD_SCOPE_GROUP, "it's \"main\"", "Backend_Bound", 0.4, true, 1);
	add_row(run, TD_SCOPE_THREAD, "4242", "Backend_Bound", 0.9, true, 1);
	store_run(b, run, NULL);

	/* A thread name means its group: digits fold to '*'. */
	assert_int_equal(td_query_tree(b->store, &q, &t, b->err, ERRLEN), 0);
	assert_close(t->nodes[0].value, 0.7);
	td_tree_free(t);
	q.thread = "io_thd_*";
	assert_int_equal(td_query_tree(b->store, &q, &t, b->err, ERRLEN), 0);
	assert_close(t->nodes[0].value, 0.7);
	td_tree_free(t);
	q.thread = "it's \"main\"";
	assert_int_equal(td_query_tree(b->store, &q, &t, b->err, ERRLEN), 0);
	assert_close(t->nodes[0].value, 0.4);
	td_tree_free(t);
	q.thread = "4242";
	assert_int_equal(td_query_tree(b->store, &q, &t, b->err, ERRLEN), 0);
	assert_close(t->nodes[0].value, 0.9);
	td_tree_free(t);
	q.thread = "4243";
	assert_int_equal(td_query_tree(b->store, &q, &t, b->err, ERRLEN), TD_QUERY_NOTHING);
	assert_null(t);
	assert_non_null(strstr(b->err, "no Top-Down metrics for thread 4243"));
}

/* ---- nothing to answer with ---- */

static void test_nothing_found(void **state)
{
	struct backend *b = backend_of(state);
	struct td_labels labels;
	struct td_query q = { .runs = { .labels = &labels } };
	struct td_bottlenecks *x = NULL;

	td_labels_init(&labels);
	td_labels_set(&labels, "k", "v");
	assert_int_equal(td_query_bottlenecks(b->store, &q, &x, b->err, ERRLEN), TD_QUERY_NOTHING);
	assert_non_null(strstr(b->err, "no stored run matches"));
	store_run(b, new_run("app", 1, "k=v"), NULL); /* a run without a PMU */
	assert_int_equal(td_query_bottlenecks(b->store, &q, &x, b->err, ERRLEN), TD_QUERY_NOTHING);
	assert_non_null(strstr(b->err, "have no Top-Down metrics"));
	assert_null(x);
	td_labels_free(&labels);
}

/* ---- runs where a node reaches a value ---- */

static void test_runs_above(void **state)
{
	static const double dram[] = { 0.10, 0.30, NAN, 0.20 };
	struct backend *b = backend_of(state);
	struct td_query q = { 0 };
	struct td_run_matches *m = NULL;
	char ids[4][TD_RUN_ID_LEN];

	for (int i = 0; i < 4; i++) {
		struct td_run *run = new_run("app", i + 1, "k=v");

		add_node(run, "Backend_Bound.Memory_Bound.DRAM_Bound", dram[i], dram[i] > 0.15);
		/* Not DRAM_Bound: only whole parts of a path match. */
		add_node(run, "Backend_Bound.XDRAM_Bound", 0.9, true);
		store_run(b, run, ids[i]);
	}
	assert_int_equal(td_query_runs_above(b->store, &q, "DRAM_Bound", 0.15, &m, b->err, ERRLEN),
			 0);
	assert_int_equal(m->count, 2);
	assert_string_equal(m->items[0].run.id, ids[1]);
	assert_close(m->items[0].value, 0.30);
	assert_true(m->items[0].crossed);
	assert_string_equal(m->items[0].run.labels.items[0].key, "k");
	assert_string_equal(m->items[0].scope_key, "100");
	assert_string_equal(m->items[1].run.id, ids[3]);
	td_run_matches_free(m);
	/* Every run with a value, largest first; then the top one. */
	assert_int_equal(td_query_runs_above(b->store, &q, "Memory_Bound.DRAM_Bound", 0, &m,
					     b->err, ERRLEN), 0);
	assert_int_equal(m->count, 3);
	assert_string_equal(m->items[2].run.id, ids[0]);
	td_run_matches_free(m);
	q.top_n = 1;
	assert_int_equal(td_query_runs_above(b->store, &q, "DRAM_Bound", 0.15, &m, b->err, ERRLEN),
			 0);
	assert_int_equal(m->count, 1);
	td_run_matches_free(m);
	/* None reaching it is an answer, not an error. */
	assert_int_equal(td_query_runs_above(b->store, &q, "DRAM_Bound", 0.5, &m, b->err, ERRLEN),
			 0);
	assert_int_equal(m->count, 0);
	td_run_matches_free(m);
	/* A node no model knows is an error with a suggestion, not an empty
	 * answer; so is any part of a dotted path. */
	assert_int_equal(td_query_runs_above(b->store, &q, "Frontend_Bond", 0, &m, b->err, ERRLEN),
			 -EINVAL);
	assert_null(m);
	assert_non_null(strstr(b->err, "unknown metric 'Frontend_Bond'; did you mean "
				"Frontend_Bound?"));
	assert_non_null(strstr(b->err, "topdown explain --list"));
	assert_int_equal(td_query_runs_above(b->store, &q, "Memory_Bond.DRAM_Bound", 0, &m, b->err,
					     ERRLEN), -EINVAL);
	assert_non_null(strstr(b->err, "'Memory_Bond'"));
	assert_int_equal(td_query_runs_above(b->store, &q, "DRAM_Bound.", 0, &m, b->err, ERRLEN),
			 -EINVAL);
	assert_null(m);
}

/* ---- threads of one run ---- */

/*
 * tid  name      on-CPU  Backend_Bound  Retiring
 * 11   io_thd_1  100ms   0.5            0.3
 * 12   io_thd_2  300ms   0.2            0.6
 * 13   main       50ms   0.9 (conf 0.1) 0.1
 * groups: io_thd_* 400ms over 2 threads, Backend 0.3; main 50ms, Backend 0.9.
 */
static void store_thread_run(struct backend *b, char *id)
{
	struct td_run *run = new_run("app", 10, NULL);

	add_thread(run, 11, "io_thd_1", 100000000);
	add_thread(run, 12, "io_thd_2", 300000000);
	add_thread(run, 13, "main", 50000000);
	add_row(run, TD_SCOPE_THREAD, "11", "Backend_Bound", 0.5, true, 1);
	add_row(run, TD_SCOPE_THREAD, "11", "Backend_Bound.Memory_Bound", 0.4, true, 1);
	add_row(run, TD_SCOPE_THREAD, "11", "Retiring", 0.3, false, 1);
	add_row(run, TD_SCOPE_THREAD, "12", "Backend_Bound", 0.2, false, 1);
	add_row(run, TD_SCOPE_THREAD, "12", "Retiring", 0.6, false, 1);
	add_row(run, TD_SCOPE_THREAD, "13", "Backend_Bound", 0.9, true, 0.1);
	add_row(run, TD_SCOPE_THREAD, "13", "Retiring", 0.1, false, 1);
	add_row(run, TD_SCOPE_GROUP, "io_thd_*", "Backend_Bound", 0.3, true, 1);
	add_row(run, TD_SCOPE_GROUP, "main", "Backend_Bound", 0.9, true, 0.1);
	add_node(run, "Backend_Bound", 0.4, true);
	store_run(b, run, id);
}

static void test_threads(void **state)
{
	struct backend *b = backend_of(state);
	struct td_thread_breakdown *t = NULL;
	struct td_query q = { 0 };
	char id[TD_RUN_ID_LEN], bare[TD_RUN_ID_LEN];
	struct td_run *newer = new_run("app", 20, NULL);

	store_thread_run(b, id);
	add_node(newer, "Backend_Bound", 0.1, false); /* no thread rows: not chosen */
	store_run(b, newer, bare);

	assert_int_equal(td_query_threads(b->store, &q, NULL, &t, b->err, ERRLEN), 0);
	assert_string_equal(t->run.id, id);
	assert_int_equal(t->nr_columns, 2);
	assert_string_equal(t->columns[0], "Backend_Bound");
	assert_string_equal(t->columns[1], "Retiring");
	assert_int_equal(t->nr_threads, 3);
	assert_string_equal(t->threads[0].key, "12"); /* by on-CPU time */
	assert_string_equal(t->threads[0].comm, "io_thd_2");
	assert_string_equal(t->threads[2].key, "13");
	assert_close(t->threads[0].values[1], 0.6);
	assert_true(t->threads[2].low_confidence[0]);
	assert_false(t->threads[2].low_confidence[1]);
	assert_int_equal(t->nr_groups, 2);
	assert_string_equal(t->groups[0].key, "io_thd_*");
	assert_int_equal(t->groups[0].oncpu_ns, 400000000);
	assert_int_equal(t->groups[0].nr_threads, 2);
	assert_close(t->groups[0].values[0], 0.3);
	assert_true(isnan(t->groups[0].values[1])); /* no group row for it */
	td_thread_breakdown_free(t);

	/* Sorted by a node, deeper columns, one thread name, top n. */
	q.max_level = 2;
	assert_int_equal(td_query_threads(b->store, &q, "Backend_Bound", &t, b->err, ERRLEN), 0);
	assert_int_equal(t->nr_columns, 3);
	assert_string_equal(t->threads[0].key, "13");
	assert_string_equal(t->threads[1].key, "11");
	assert_string_equal(t->groups[0].key, "main");
	td_thread_breakdown_free(t);
	q.thread = "io_thd_7";
	q.top_n = 1;
	assert_int_equal(td_query_threads(b->store, &q, "Memory_Bound", &t, b->err, ERRLEN), 0);
	assert_int_equal(t->nr_threads, 1);
	assert_string_equal(t->threads[0].key, "11");
	assert_int_equal(t->nr_groups, 1);
	assert_string_equal(t->groups[0].key, "io_thd_*");
	td_thread_breakdown_free(t);

	q = (struct td_query){ 0 };
	/* A node, but not a column: the columns are named. */
	assert_int_equal(td_query_threads(b->store, &q, "DRAM_Bound", &t, b->err, ERRLEN), -EINVAL);
	assert_non_null(strstr(b->err, "Backend_Bound, Retiring"));
	/* No node at all: a suggestion, before the store is asked. */
	assert_int_equal(td_query_threads(b->store, &q, "Memory_Bond", &t, b->err, ERRLEN), -EINVAL);
	assert_non_null(strstr(b->err, "unknown metric 'Memory_Bond'; did you mean Memory_Bound?"));
	assert_null(t);
	q.runs.run_id = bare;
	assert_int_equal(td_query_threads(b->store, &q, NULL, &t, b->err, ERRLEN), TD_QUERY_NOTHING);
	assert_non_null(strstr(b->err, "no per-thread"));
	assert_null(t);
}

/* ---- trend ---- */

/*
 * Window 4, sigma 3. Point 6 (0.45) against points 2-5 (0.29, 0.30, 0.31,
 * 0.29): mean 0.2975, squared deviations add up to 2.75e-4, sd =
 * sqrt(2.75e-4 / 3) = 0.00957427, deviation 15.93: an anomaly. Point 7
 * (0.30) against 3-6: mean 0.3375, sd sqrt(0.017075 / 3) = 0.0754430,
 * deviation -0.497. Point 3 has three earlier values (mean 0.30, sd 0.01,
 * deviation 0); points 0-2 too few.
 */
static void test_trend(void **state)
{
	static const double v[] = { 0.30, 0.31, 0.29, 0.30, 0.31, 0.29, 0.45, 0.30 };
	struct backend *b = backend_of(state);
	struct td_query q = { 0 };
	struct td_trend *t = NULL;
	char ids[8][TD_RUN_ID_LEN];

	for (int i = 0; i < 8; i++) {
		struct td_run *run = new_run("app", 1000 - 100 * (7 - i), "test=t");

		add_node(run, "Backend_Bound.Memory_Bound", v[i], false);
		store_run(b, run, ids[i]);
	}
	assert_int_equal(td_query_trend(b->store, &q, "Memory_Bound", 4, 3.0, &t, b->err, ERRLEN),
			 0);
	assert_string_equal(t->path, "Backend_Bound.Memory_Bound");
	assert_int_equal(t->count, 8);
	assert_string_equal(t->points[0].run.id, ids[0]); /* oldest first */
	for (int i = 0; i < 3; i++) {
		assert_true(isnan(t->points[i].deviation));
		assert_false(t->points[i].anomaly);
	}
	assert_close(t->points[3].mean, 0.30);
	assert_close(t->points[3].sd, 0.01);
	assert_close(t->points[3].deviation, 0);
	assert_close(t->points[6].mean, 0.2975);
	assert_true(fabs(t->points[6].sd - 0.00957427) < 1e-8);
	assert_true(fabs(t->points[6].deviation - 15.93) < 0.01);
	assert_true(t->points[6].anomaly);
	assert_true(fabs(t->points[7].deviation + 0.497) < 0.001);
	assert_false(t->points[7].anomaly);
	assert_int_equal(t->nr_anomalies, 1);
	td_trend_free(t);
	/* The newest three, judged against all the history. */
	q.top_n = 3;
	assert_int_equal(td_query_trend(b->store, &q, "Memory_Bound", 4, 3.0, &t, b->err, ERRLEN),
			 0);
	assert_int_equal(t->count, 3);
	assert_string_equal(t->points[0].run.id, ids[5]);
	assert_true(t->points[1].anomaly);
	assert_int_equal(t->nr_anomalies, 1);
	td_trend_free(t);
	assert_int_equal(td_query_trend(b->store, &q, "Nope", 4, 3.0, &t, b->err, ERRLEN), -EINVAL);
	assert_non_null(strstr(b->err, "'Nope'"));
	assert_null(t);
}

/* Enough runs for every array the answer grows to be reallocated. */
static void test_many_runs(void **state)
{
	enum { RUNS = 70 };
	struct backend *b = backend_of(state);
	struct td_query q = { 0 };
	struct td_trend *t = NULL;
	struct td_tree *tree = NULL;

	for (int i = 0; i < RUNS; i++) {
		struct td_run *run = new_run("app", i, NULL);

		add_node(run, "Retiring", i / 100.0, false);
		add_row(run, TD_SCOPE_PROCESS, "200", "Retiring", 0.5, false, 1);
		store_run(b, run, NULL);
	}
	assert_int_equal(td_query_trend(b->store, &q, "Retiring", 10, 3.0, &t, b->err, ERRLEN), 0);
	assert_int_equal(t->count, 2 * RUNS);
	assert_close(t->points[2 * RUNS - 2].value, (RUNS - 1) / 100.0); /* pid 100 before 200 */
	td_trend_free(t);
	/* (0 + 0.01 + ... + 0.69) / 70 = 0.345, and 70 times 0.5: 0.4225 */
	assert_int_equal(td_query_tree(b->store, &q, &tree, b->err, ERRLEN), 0);
	assert_int_equal(tree->nr_samples, 2 * RUNS);
	assert_close(tree->nodes[0].value, 0.4225);
	td_tree_free(tree);
}

/* ---- compare ---- */

/* R's example: t.test(ts1, ts2) gives p = 0.08356 (test_stats.c). */
static const double ts1[] = { 11, 9, 10, 11, 10, 12, 9, 11, 12, 9 };
static const double ts2[] = { 11, 13, 10, 13, 12, 9, 11, 12, 12, 11 };

/*
 * Side A: Retiring ts2/100 (mean 0.114), Backend_Bound 0.40 +- 0.01,
 * Frontend_Bound 0.30 +- 0.01, Bad_Speculation. Side B: Retiring ts1/100
 * (0.104: -1 pp, p = 0.08356, d = -0.81954), Backend_Bound 0.50 +- 0.01
 * (worse), Frontend_Bound 0.20 +- 0.01 (better), Backend_Bound.Core_Bound.
 */
static void store_sides(struct backend *b, char (*first)[TD_RUN_ID_LEN])
{
	for (int i = 0; i < 10; i++) {
		double wiggle = (i % 3 - 1) * 0.01;
		struct td_run *a = new_run("app", 100 + i, "side=a,both=x");
		struct td_run *bb = new_run("app", 200 + i, i == 0 ? "side=b,both=x" : "side=b");

		add_node(a, "Retiring", ts2[i] / 100, false);
		add_node(a, "Backend_Bound", 0.40 + wiggle, true);
		add_node(a, "Frontend_Bound", 0.30 + wiggle, true);
		add_node(a, "Bad_Speculation", 0.05, false);
		add_row(a, TD_SCOPE_GROUP, "io_thd_*", "Backend_Bound", 0.30 + wiggle, true, 1);
		add_row(a, TD_SCOPE_GROUP, "main", "Backend_Bound", 0.20 + wiggle, true, 1);
		add_node(bb, "Retiring", ts1[i] / 100, false);
		add_node(bb, "Backend_Bound", 0.50 + wiggle, true);
		add_node(bb, "Frontend_Bound", 0.20 + wiggle, true);
		add_node(bb, "Backend_Bound.Core_Bound", 0.1, false);
		add_row(bb, TD_SCOPE_GROUP, "io_thd_*", "Backend_Bound", 0.50 + wiggle, true, 0.2);
		add_row(bb, TD_SCOPE_GROUP, "main", "Backend_Bound", 0.20 + wiggle, true, 1);
		store_run(b, a, first && i == 0 ? first[0] : NULL);
		store_run(b, bb, first && i == 0 ? first[1] : NULL);
	}
}

struct sides {
	struct td_labels a, b;
	struct td_compare_args args;
};

static void sides_init(struct sides *s, const char *a, const char *b)
{
	td_labels_init(&s->a);
	td_labels_init(&s->b);
	td_labels_set(&s->a, "side", a);
	td_labels_set(&s->b, "side", b);
	s->args = (struct td_compare_args){ .a.labels = &s->a, .b.labels = &s->b,
					    .threshold = 0.005, .alpha = 0.05 };
}

static void sides_free(struct sides *s)
{
	td_labels_free(&s->a);
	td_labels_free(&s->b);
}

static const struct td_metric_change *find_change(const struct td_comparison *c,
						  const char *group, const char *path)
{
	for (size_t i = 0; i < c->count; i++)
		if (strcmp(c->items[i].path, path) == 0 &&
		    (!group || (c->items[i].group && strcmp(c->items[i].group, group) == 0)))
			return &c->items[i];
	fail_msg("no change for %s", path);
	return NULL;
}

static void test_compare_sides(void **state)
{
	struct backend *b = backend_of(state);
	const struct td_metric_change *x;
	struct td_comparison *c = NULL;
	struct sides s;

	store_sides(b, NULL);
	sides_init(&s, "a", "b");
	assert_int_equal(td_compare(b->store, &s.args, &c, b->err, ERRLEN), 0);
	assert_int_equal(c->nr_runs_a, 10);
	assert_int_equal(c->nr_runs_b, 10);
	assert_int_equal(c->count, 5);
	/* Ranked: regressions, improvements, unchanged, A only, B only. */
	assert_string_equal(c->items[0].path, "Backend_Bound");
	assert_int_equal(c->items[0].change, TD_CHANGE_REGRESSION);
	assert_false(c->items[0].higher_is_better);
	assert_string_equal(c->items[1].path, "Frontend_Bound");
	assert_int_equal(c->items[1].change, TD_CHANGE_IMPROVEMENT);
	assert_close(c->items[1].delta, -0.10);
	assert_string_equal(c->items[2].path, "Retiring");
	assert_int_equal(c->items[2].change, TD_CHANGE_NONE); /* p 0.084 > 0.05 */
	assert_string_equal(c->items[3].path, "Bad_Speculation");
	assert_int_equal(c->items[3].change, TD_CHANGE_ONLY_A);
	assert_int_equal(c->items[3].b.n, 0);
	assert_string_equal(c->items[4].path, "Backend_Bound.Core_Bound");
	assert_int_equal(c->items[4].change, TD_CHANGE_ONLY_B);
	assert_int_equal(c->nr_regressions, 1);
	assert_int_equal(c->nr_improvements, 1);
	x = &c->items[2];
	assert_true(x->higher_is_better);
	assert_close(x->a.mean, 0.114);
	assert_close(x->b.mean, 0.104);
	assert_close(x->delta, -0.01);
	assert_true(fabs(x->p_value - 0.08356) < 0.000005);
	assert_true(fabs(x->effect_size + 0.81954) < 0.00001);
	td_comparison_free(c);

	/* A looser alpha makes the Retiring drop a regression, ranked by
	 * effect size behind Backend_Bound's; top_n keeps the counts. */
	s.args.alpha = 0.1;
	s.args.top_n = 1;
	assert_int_equal(td_compare(b->store, &s.args, &c, b->err, ERRLEN), 0);
	assert_int_equal(c->nr_regressions, 2);
	assert_int_equal(c->count, 1);
	assert_string_equal(c->items[0].path, "Backend_Bound");
	td_comparison_free(c);
	/* A threshold above 1 pp leaves it unchanged again. */
	s.args.top_n = 0;
	s.args.threshold = 0.02;
	assert_int_equal(td_compare(b->store, &s.args, &c, b->err, ERRLEN), 0);
	assert_int_equal(find_change(c, NULL, "Retiring")->change, TD_CHANGE_NONE);
	assert_int_equal(c->nr_regressions, 1);
	td_comparison_free(c);
	sides_free(&s);
}

static void test_compare_threads_and_single_runs(void **state)
{
	struct backend *b = backend_of(state);
	char first[2][TD_RUN_ID_LEN];
	struct td_comparison *c = NULL;
	const struct td_metric_change *x;
	struct sides s;

	store_sides(b, first);
	sides_init(&s, "a", "b");
	s.args.by_thread_name = true;
	assert_int_equal(td_compare(b->store, &s.args, &c, b->err, ERRLEN), 0);
	assert_int_equal(c->count, 2);
	x = find_change(c, "io_thd_*", "Backend_Bound");
	assert_int_equal(x->change, TD_CHANGE_REGRESSION);
	assert_true(x->low_confidence);
	assert_close(x->delta, 0.2);
	x = find_change(c, "main", "Backend_Bound");
	assert_int_equal(x->change, TD_CHANGE_NONE);
	assert_close(x->delta, 0);
	td_comparison_free(c);
	sides_free(&s);

	/* One run a side: no test, the threshold decides. */
	s.args = (struct td_compare_args){ .a.run_id = first[0], .b.run_id = first[1],
					   .threshold = 0.005 };
	assert_int_equal(td_compare(b->store, &s.args, &c, b->err, ERRLEN), 0);
	x = find_change(c, NULL, "Retiring");
	assert_int_equal(x->a.n, 1);
	assert_true(isnan(x->p_value));
	assert_true(isnan(x->effect_size));
	assert_int_equal(x->change, TD_CHANGE_NONE); /* ts2[0] == ts1[0] == 11 */
	assert_int_equal(find_change(c, NULL, "Backend_Bound")->change, TD_CHANGE_REGRESSION);
	td_comparison_free(c);
}

static void test_compare_bad_sides(void **state)
{
	struct backend *b = backend_of(state);
	struct td_comparison *c = NULL;
	struct sides s;

	store_sides(b, NULL);
	store_run(b, new_run("app", 5, "side=bare"), NULL);
	/* A run with both=x is on each side. */
	sides_init(&s, "a", "b");
	td_labels_free(&s.b);
	td_labels_set(&s.b, "both", "x");
	assert_int_equal(td_compare(b->store, &s.args, &c, b->err, ERRLEN), -EINVAL);
	assert_non_null(strstr(b->err, "matches both sides"));
	sides_free(&s);
	sides_init(&s, "a", "nothing");
	assert_int_equal(td_compare(b->store, &s.args, &c, b->err, ERRLEN), TD_QUERY_NOTHING);
	assert_non_null(strstr(b->err, "no stored run matches side B"));
	sides_free(&s);
	sides_init(&s, "bare", "b");
	assert_int_equal(td_compare(b->store, &s.args, &c, b->err, ERRLEN), TD_QUERY_NOTHING);
	assert_non_null(strstr(b->err, "side A have no Top-Down metrics"));
	assert_null(c);
	sides_free(&s);
}

/* ---- labels ---- */

/*
 * Five runs, oldest first:
 *   1 app    branch=main,test=get
 *   2 app    branch=main,test=set
 *   3 app    branch=dev,test=get
 *   4 other  branch=main,host=x
 *   5 app    branch=feature,test=get
 * and 6, a run of "bare" without labels. Over 1-5: branch in 5 runs with
 * 3 values, main 3, then dev 1 and feature 1 (ties by value); host in 1
 * run; test in 4 runs, get 3, set 1.
 */
static void store_labeled_runs(struct backend *b)
{
	static const char *const labels[] = {
		"branch=main,test=get", "branch=main,test=set", "branch=dev,test=get",
		"branch=main,host=x", "branch=feature,test=get",
	};

	for (int i = 0; i < 5; i++)
		store_run(b, new_run(i == 3 ? "other" : "app", 100 + i, labels[i]), NULL);
	store_run(b, new_run("bare", 50, NULL), NULL);
}

static void assert_label_value(const struct td_label_key *k, size_t i, const char *value,
			       size_t runs)
{
	assert_true(i < k->count);
	assert_string_equal(k->values[i].value, value);
	assert_int_equal(k->values[i].nr_runs, runs);
}

static void test_labels(void **state)
{
	struct backend *b = backend_of(state);
	struct td_run_filter f = { .process = "app" };
	struct td_label_set *set = NULL;
	struct td_labels get;

	store_labeled_runs(b);
	assert_int_equal(td_query_labels(b->store, NULL, NULL, 0, &set, b->err, ERRLEN), 0);
	assert_int_equal(set->nr_runs, 6);
	assert_int_equal(set->count, 3);
	assert_string_equal(set->keys[0].key, "branch");
	assert_int_equal(set->keys[0].nr_runs, 5);
	assert_int_equal(set->keys[0].nr_values, 3);
	assert_int_equal(set->keys[0].count, 3);
	assert_label_value(&set->keys[0], 0, "main", 3);
	assert_label_value(&set->keys[0], 1, "dev", 1);
	assert_label_value(&set->keys[0], 2, "feature", 1);
	assert_string_equal(set->keys[1].key, "host");
	assert_int_equal(set->keys[1].nr_runs, 1);
	assert_string_equal(set->keys[2].key, "test");
	assert_int_equal(set->keys[2].nr_runs, 4);
	assert_label_value(&set->keys[2], 0, "get", 3);
	assert_label_value(&set->keys[2], 1, "set", 1);
	td_label_set_free(set);

	/* The most frequent value of each key; the count of them all stays. */
	assert_int_equal(td_query_labels(b->store, NULL, NULL, 1, &set, b->err, ERRLEN), 0);
	assert_int_equal(set->keys[0].count, 1);
	assert_int_equal(set->keys[0].nr_values, 3);
	assert_label_value(&set->keys[0], 0, "main", 3);
	td_label_set_free(set);

	/* One key, of one process's runs */
	assert_int_equal(td_query_labels(b->store, &f, "branch", 0, &set, b->err, ERRLEN), 0);
	assert_int_equal(set->nr_runs, 4);
	assert_int_equal(set->count, 1);
	assert_label_value(&set->keys[0], 0, "main", 2);
	assert_int_equal(set->keys[0].nr_values, 3);
	td_label_set_free(set);

	/* Filtered by a label: all runs tie, so by value */
	td_labels_init(&get);
	td_labels_set(&get, "test", "get");
	f = (struct td_run_filter){ .labels = &get };
	assert_int_equal(td_query_labels(b->store, &f, "branch", 0, &set, b->err, ERRLEN), 0);
	assert_int_equal(set->nr_runs, 3);
	assert_label_value(&set->keys[0], 0, "dev", 1);
	assert_label_value(&set->keys[0], 1, "feature", 1);
	assert_label_value(&set->keys[0], 2, "main", 1);
	td_label_set_free(set);
	td_labels_free(&get);

	/* The newest two runs: 5 and 4 */
	f = (struct td_run_filter){ .limit = 2 };
	assert_int_equal(td_query_labels(b->store, &f, "branch", 0, &set, b->err, ERRLEN), 0);
	assert_int_equal(set->nr_runs, 2);
	assert_label_value(&set->keys[0], 0, "feature", 1);
	assert_label_value(&set->keys[0], 1, "main", 1);
	td_label_set_free(set);

	/* Runs without labels: no keys, which is an answer */
	f = (struct td_run_filter){ .process = "bare" };
	assert_int_equal(td_query_labels(b->store, &f, NULL, 0, &set, b->err, ERRLEN), 0);
	assert_int_equal(set->nr_runs, 1);
	assert_int_equal(set->count, 0);
	td_label_set_free(set);
}

static void test_labels_not_found(void **state)
{
	struct backend *b = backend_of(state);
	struct td_run_filter f = { .process = "bare" };
	struct td_label_set *set = (struct td_label_set *)1;
	struct td_labels none;

	assert_int_equal(td_query_labels(b->store, NULL, NULL, 0, &set, b->err, ERRLEN), TD_QUERY_NOTHING);
	assert_null(set);
	assert_non_null(strstr(b->err, "no run is stored yet"));
	store_labeled_runs(b);
	assert_int_equal(td_query_labels(b->store, NULL, "nope", 0, &set, b->err, ERRLEN), -ENOENT);
	assert_null(set);
	assert_non_null(strstr(b->err, "no run carries the label 'nope'; the keys there are "
				       "branch, host, test"));
	assert_int_equal(td_query_labels(b->store, &f, "branch", 0, &set, b->err, ERRLEN), -ENOENT);
	assert_non_null(strstr(b->err, "no run matching the filters carries the label 'branch'; "
				       "those runs have no labels"));
	assert_int_equal(td_query_labels(b->store, NULL, "bad key", 0, &set, b->err, ERRLEN),
			 -EINVAL);
	assert_non_null(strstr(b->err, "bad label key 'bad key'"));
	assert_int_equal(td_query_labels(b->store, NULL, "", 0, &set, b->err, ERRLEN), -EINVAL);
	assert_non_null(strstr(b->err, "bad label key '': it is empty"));
	td_labels_init(&none);
	td_labels_set(&none, "branch", "none");
	f = (struct td_run_filter){ .labels = &none };
	assert_int_equal(td_query_labels(b->store, &f, NULL, 0, &set, b->err, ERRLEN), TD_QUERY_NOTHING);
	assert_non_null(strstr(b->err, "no stored run matches the filters"));
	assert_null(set);
	td_labels_free(&none);
}

/* The table and JSON of a set built by hand: one key cut to 2 of 3 values. */
static void test_labels_render(void **state)
{
	struct td_label_count branch_values[] = { { "main", 3 }, { "dev", 1 } };
	struct td_label_count host_values[] = { { "x", 1 } };
	struct td_label_key keys[] = {
		{ "branch", 5, 3, 2, branch_values },
		{ "host", 1, 1, 1, host_values },
	};
	struct td_label_set set = { .nr_runs = 5, .count = 2, .keys = keys };
	char *text = NULL;
	size_t len = 0;
	struct td_render r = { .format = TD_FORMAT_TABLE };
	json_t *root, *branch;

	(void)state;
	r.out = open_memstream(&text, &len);
	td_render_labels(&r, &set);
	fclose(r.out);
	assert_string_equal(text,
		"Labels of 5 runs\n"
		"KEY                        RUNS  VALUES  VALUE (RUNS)\n"
		"branch                        5       3  main (3)\n"
		"                                         dev (1)\n"
		"                                         (1 more)\n"
		"host                          1       1  x (1)\n");
	free(text);

	root = td_label_set_json(&set);
	assert_int_equal(json_integer_value(json_object_get(root, "runs")), 5);
	assert_int_equal(json_array_size(json_object_get(root, "keys")), 2);
	branch = json_array_get(json_object_get(root, "keys"), 0);
	assert_string_equal(json_string_value(json_object_get(branch, "key")), "branch");
	assert_int_equal(json_integer_value(json_object_get(branch, "runs")), 5);
	assert_int_equal(json_integer_value(json_object_get(branch, "distinct_values")), 3);
	assert_int_equal(json_array_size(json_object_get(branch, "values")), 2);
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(json_object_get(branch, "values"), 1), "value")), "dev");
	assert_int_equal(json_integer_value(json_object_get(
		json_array_get(json_object_get(branch, "values"), 1), "runs")), 1);
	json_decref(root);

	/* no keys at all */
	set.count = 0;
	r.out = open_memstream(&text, &len);
	td_render_labels(&r, &set);
	fclose(r.out);
	assert_non_null(strstr(text, "(no labels)"));
	free(text);
}

static void test_direction(void **state)
{
	(void)state;
	assert_true(td_metric_higher_is_better("Retiring"));
	assert_true(td_metric_higher_is_better("Retiring.Light_Operations.FP_Arith"));
	assert_false(td_metric_higher_is_better("Retiring_Like"));
	assert_false(td_metric_higher_is_better("Backend_Bound.Memory_Bound"));
	assert_false(td_metric_higher_is_better("Frontend_Bound"));
	assert_string_equal(td_change_name(TD_CHANGE_REGRESSION), "regression");
	assert_string_equal(td_change_name(TD_CHANGE_ONLY_B), "only-b");
}

/* ---- pooled trees: windows of a two-counter host ---- */

/*
 * A thread counts neoverse-v1's level 1 on a host with two free counters:
 * five groups of two events (CPU_CYCLES in four of them), and each window
 * gives two groups half of its time each, so no window counts every
 * event and Frontend_Bound, Retiring and Bad_Speculation are n/a in each
 * one. The workload runs at one rate of each event throughout (the
 * pooling's assumption), so the truth is rate x on-CPU time, and the
 * pooled tree must be the engine's tree of the true totals, each node
 * counted for the time its least-counted event's groups had their turns.
 */
#define POOL_WINDOWS 5
#define POOL_EVENTS 8
static const char *const pool_events[POOL_EVENTS] = {
	"CPU_CYCLES", "STALL_SLOT_FRONTEND", "STALL_SLOT_BACKEND", "STALL_SLOT",
	"OP_RETIRED", "OP_SPEC", "BR_MIS_PRED", "task-clock",
};
static const int pool_groups[POOL_WINDOWS][2] = { { 0, 1 }, { 0, 2 }, { 0, 3 }, { 4, 5 }, { 0, 6 } };
static const double worker_rate[POOL_EVENTS] = { 2.0, 3.1, 6.4, 9.9, 1.5, 2.5, 0.004, 1.0 }; /* per ns */
static const double other_rate[POOL_EVENTS] = { 2.5, 1.0, 12.0, 14.0, 3.5, 3.6, 0.001, 1.0 };

/* The running fraction of event e in window w: half per active group that has it. */
static double pool_share(int w, int e)
{
	double share = e == POOL_EVENTS - 1; /* task-clock: a software event, always counted */

	for (int k = 0; k < 2; k++) {
		int g = (w + k) % POOL_WINDOWS;

		share += 0.5 * (pool_groups[g][0] == e || pool_groups[g][1] == e);
	}
	return share;
}

static uint64_t pool_oncpu(int w, int thread)
{
	return (uint64_t)(w + 1) * 100000000u * (thread ? 3 : 1) / 2;
}

static void pool_thread(struct td_thread_row *t, uint32_t tid, const char *comm, const double *rate,
			int w, int thread)
{
	t->tid = tid;
	t->pid = 10;
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	t->oncpu_ns = pool_oncpu(w, thread);
	for (int e = 0; e < POOL_EVENTS; e++) {
		double share = pool_share(w, e);

		/* stored as the collector stores it: scaled to all the time, with its share */
		t->counters[e] = share > 0 ? (struct td_counter_value){ rate[e] * (double)t->oncpu_ns, share }
					   : (struct td_counter_value){ NAN, 0 };
	}
}

/* The windows, labeled test=TEST and the model under key (collect's
 * tma_model, or import's cpu_model). */
static void store_pool_windows(struct backend *b, const char *test, const char *key, const char *model)
{
	for (int w = 0; w < POOL_WINDOWS; w++) {
		char labels[128];
		struct td_run *run;

		snprintf(labels, sizeof(labels), "test=%s,%s=%s,tma_level=1,node=host-%c", test, key, model,
			 w % 2 ? 'b' : 'a');
		run = new_run("app", 1000 + w, labels);
		run->nr_events = POOL_EVENTS;
		for (int e = 0; e < POOL_EVENTS; e++)
			run->event_names[e] = strdup(pool_events[e]);
		run->nr_threads = 2;
		run->threads = calloc(2, sizeof(*run->threads));
		assert_non_null(run->threads);
		pool_thread(&run->threads[0], 11, "worker", worker_rate, w, 0);
		pool_thread(&run->threads[1], 12, "other", other_rate, w, 1);
		store_run(b, run, NULL);
	}
}

/* The engine's level-1 tree of the true totals of the threads in use[]. */
static void pool_truth(const bool use[2], struct td_metric_value *out, size_t *n_out, const char ***paths)
{
	char err[256];
	const struct td_kb *kb = td_kb_load(err, sizeof(err));
	const struct td_model *m = td_kb_model(kb, "neoverse-v1");
	struct td_host_facts facts = { 0 };
	struct td_engine *e = td_engine_new(m, 1, pool_events, POOL_EVENTS, &facts, err, sizeof(err));
	struct td_counter_value truth[POOL_EVENTS];
	double values[4096];

	assert_non_null(e);
	assert_true(td_engine_scratch_size(e) <= 4096);
	for (int ev = 0; ev < POOL_EVENTS; ev++) {
		truth[ev] = (struct td_counter_value){ 0, 1 };
		for (int w = 0; w < POOL_WINDOWS; w++)
			for (int t = 0; t < 2; t++)
				if (use[t])
					truth[ev].value += (t ? other_rate : worker_rate)[ev] * (double)pool_oncpu(w, t);
	}
	td_engine_eval(e, truth, values, out);
	*n_out = 0;
	for (size_t i = 0; i < td_engine_output_count(e); i++) {
		if (td_engine_output(e, i)->kind != TD_METRIC_TREE)
			continue;
		(*paths)[*n_out] = td_engine_output(e, i)->path; /* the kb's: alive after the engine */
		out[(*n_out)++] = out[i];
	}
	td_engine_free(e);
}

/* The on-CPU time event ev was counted over the windows, of the threads in use[]. */
static double pool_counting_ns(const bool use[2], int ev)
{
	double ns = 0;

	for (int w = 0; w < POOL_WINDOWS; w++)
		for (int t = 0; t < 2; t++)
			if (use[t])
				ns += pool_share(w, ev) * (double)pool_oncpu(w, t);
	return ns;
}

static void check_pooled(struct backend *b, const char *test, const char *thread, const bool use[2])
{
	struct td_labels labels = { 0 };
	struct td_query q = { .runs = { .labels = &labels }, .thread = thread, .pooled = true };
	struct td_metric_value want[64];
	const char *want_paths[64], **paths = want_paths;
	double oncpu = 0;
	struct td_tree *t = NULL;
	size_t n;

	td_labels_set(&labels, "test", test);
	pool_truth(use, want, &n, &paths);
	assert_int_equal(td_query_tree(b->store, &q, &t, b->err, ERRLEN), 0);
	td_labels_free(&labels);
	assert_true(t->pooled);
	assert_int_equal(t->nr_runs, POOL_WINDOWS);
	assert_int_equal(t->nr_hosts, 2);
	assert_string_equal(t->model, "neoverse-v1");
	for (int w = 0; w < POOL_WINDOWS; w++)
		for (int k = 0; k < 2; k++)
			oncpu += use[k] ? (double)pool_oncpu(w, k) : 0;
	assert_int_equal(t->oncpu_ns, (uint64_t)oncpu);
	assert_int_equal(t->nr_nodes, n);
	for (size_t i = 0; i < n; i++) {
		const struct td_tree_node *node = NULL;

		for (size_t j = 0; j < t->nr_nodes; j++)
			if (strcmp(t->nodes[j].path, want_paths[i]) == 0)
				node = &t->nodes[j];
		assert_non_null(node);
		assert_true(isfinite(want[i].value));
		if (!(fabs(node->value - want[i].value) <= 1e-9 * fabs(want[i].value)))
			fail_msg("%s: pooled %.12g, truth %.12g", want_paths[i], node->value, want[i].value);
	}
	/* Backend_Bound is STALL_SLOT_BACKEND over CPU_CYCLES: counted while the
	 * group of the first had its turns, the other being counted for longer. */
	for (size_t j = 0; j < t->nr_nodes; j++) {
		double slot_backend = pool_counting_ns(use, 2), cycles = pool_counting_ns(use, 0);

		if (strcmp(t->nodes[j].path, "Backend_Bound"))
			continue;
		assert_true(slot_backend < cycles);
		assert_close(t->nodes[j].confidence, slot_backend / oncpu);
		assert_true(llabs((long long)t->nodes[j].counted_ns - (long long)slot_backend) <= 1);
		assert_true(t->nodes[j].low_confidence); /* two windows of five, half of each */
	}
	td_tree_free(t);
}

static void test_pooled(void **state)
{
	struct backend *b = backend_of(state);
	struct td_labels labels = { 0 };
	struct td_query q = { .runs = { .labels = &labels }, .pooled = true };
	struct td_tree *t = NULL;

	store_pool_windows(b, "pool", "tma_model", "neoverse-v1");
	store_pool_windows(b, "imported", "cpu_model", "neoverse-v1");
	/* Each window alone leaves the nodes of the groups it missed n/a. */
	check_pooled(b, "pool", NULL, (const bool[2]){ true, true });
	check_pooled(b, "pool", "worker", (const bool[2]){ true, false });
	check_pooled(b, "pool", "12", (const bool[2]){ false, true });
	check_pooled(b, "imported", NULL, (const bool[2]){ true, true });

	/* A thread none of the runs has; then filters matching nothing. */
	td_labels_set(&labels, "test", "pool");
	q.thread = "nobody";
	assert_int_equal(td_query_tree(b->store, &q, &t, b->err, ERRLEN), TD_QUERY_NOTHING);
	assert_null(t);
	assert_non_null(strstr(b->err, "thread nobody"));
	q.thread = NULL;
	td_labels_set(&labels, "test", "none");
	assert_int_equal(td_query_tree(b->store, &q, &t, b->err, ERRLEN), TD_QUERY_NOTHING);

	/* Runs of another model under the same labels cannot be pooled with them. */
	td_labels_set(&labels, "test", "pool");
	store_pool_windows(b, "pool", "tma_model", "neoverse-n1");
	assert_int_equal(td_query_tree(b->store, &q, &t, b->err, ERRLEN), -EINVAL);
	assert_null(t);
	assert_non_null(strstr(b->err, "--label tma_model="));
	assert_non_null(strstr(b->err, "neoverse-n1"));
	td_labels_free(&labels);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		ON_BOTH(test_tree),
		ON_BOTH(test_pooled),
		ON_BOTH(test_bottlenecks),
		ON_BOTH(test_bottleneck_is_deepest),
		ON_BOTH(test_many_bottlenecks),
		BACKEND_TEST(test_bottlenecks_same_on_both, "postgresql"),
		BACKEND_TEST(test_bottlenecks_server_gone, "postgresql"),
		ON_BOTH(test_thread_scopes),
		ON_BOTH(test_nothing_found),
		ON_BOTH(test_runs_above),
		ON_BOTH(test_threads),
		ON_BOTH(test_trend),
		ON_BOTH(test_many_runs),
		ON_BOTH(test_compare_sides),
		ON_BOTH(test_compare_threads_and_single_runs),
		ON_BOTH(test_compare_bad_sides),
		ON_BOTH(test_labels),
		ON_BOTH(test_labels_not_found),
		cmocka_unit_test(test_labels_render),
		cmocka_unit_test(test_direction),
	};

	(void)argc;
	return run_on_backends("query", tests, sizeof(tests) / sizeof(tests[0]), argv[0]);
}
