// SPDX-License-Identifier: BSD-3-Clause
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <sqlite3.h>

#include "backend.h"
#include "run.h"
#include "storage.h"

#define ERRLEN 512
#define NOBODY 65534

/* ---- fixture: a temporary directory with a store in it ---- */

struct fixture {
	char dir[64];        /* /tmp/td-storage-XXXXXX */
	char path[PATH_MAX]; /* dir/data.db */
	struct td_store *store;
	char err[ERRLEN];
};

static struct td_store *open_path(const char *path, char *err)
{
	struct td_store_config cfg = { .path = path };

	err[0] = '\0';
	return td_store_open(&cfg, err, ERRLEN);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	strcpy(f->dir, "/tmp/td-storage-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/data.db", f->dir);
	f->store = open_path(f->path, f->err);
	assert_non_null(f->store);
	*state = f;
	return 0;
}

/* SQLite connections must not cross a fork: tests that fork close the
 * fixture's store first (and valgrind would count it lost in the child). */
static void close_store(struct fixture *f)
{
	td_store_close(f->store);
	f->store = NULL;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	chmod(path, 0700); /* tests make directories read-only */
	return remove(path);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	td_store_close(f->store);
	chmod(f->dir, 0700);
	nftw(f->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

/* ---- independent access to the file, for checks the API cannot make ---- */

static sqlite3 *raw_open(const char *path)
{
	sqlite3 *db = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	return db;
}

static void raw_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
}

/* The single integer sql returns, with text bound to ?1 when given. */
static int64_t raw_int(sqlite3 *db, const char *sql, const char *text)
{
	sqlite3_stmt *st;
	int64_t value;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	if (text)
		sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	value = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return value;
}

/* Rows of every table that belong to run id: what a failed write must
 * not leave and a delete must remove. */
static int64_t raw_rows_of_run(sqlite3 *db, const char *id)
{
	static const char *const tables[] = { "run_labels", "intervals", "threads",
					      "counters", "metrics" };
	char sql[256];
	int64_t rows = raw_int(db, "SELECT count(*) FROM runs WHERE id = ?1", id);

	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s"
			 " WHERE run_pk IN (SELECT pk FROM runs WHERE id = ?1)", tables[i]);
		rows += raw_int(db, sql, id);
	}
	return rows;
}

static int64_t raw_total_rows(sqlite3 *db)
{
	return raw_int(db, "SELECT (SELECT count(*) FROM runs) + (SELECT count(*) FROM run_labels)"
		       " + (SELECT count(*) FROM intervals) + (SELECT count(*) FROM threads)"
		       " + (SELECT count(*) FROM counters) + (SELECT count(*) FROM metrics)",
		       NULL);
}

/* ---- a sample run with a bit of everything ---- */

static struct td_thread_row thread_row(uint32_t tid, const char *comm, double base)
{
	struct td_thread_row t = {
		.tid = tid, .pid = 100, .exited = tid % 2 == 0,
		.oncpu_ns = 1000000ull * tid, .voluntary_switches = tid + 1,
		.involuntary_switches = tid + 2, .migrations = tid + 3, .runq_wait_ns = tid * 7ull,
	};

	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	for (int e = 0; e < 3; e++) {
		t.counters[e].value = base * (e + 1) + 0.25;
		t.counters[e].running_fraction = 0.125 * (e + 1);
	}
	return t;
}

static void add_metric(struct td_run *run, enum td_metric_scope scope, const char *key,
		       int32_t seq, const char *path, const char *parent, int level,
		       double value, bool crossed, double confidence)
{
	struct td_metric_row m = { .scope = scope, .scope_key = (char *)key,
				   .interval_seq = seq, .path = (char *)path,
				   .parent = (char *)parent, .level = level, .value = value,
				   .threshold_crossed = crossed, .confidence = confidence };

	assert_int_equal(td_run_add_metric(run, &m), 0);
}

static struct td_run *sample_run(const char *process, int64_t started_ns)
{
	static const char *const events[] = { "cycles", "instructions", "topdown-be-bound" };
	struct td_run *run = td_run_new();

	assert_non_null(run);
	run->started_ns = started_ns;
	run->ended_ns = started_ns + 5000000000;
	run->process = strdup(process);
	run->level = 2;
	run->collector = strdup("bpf");
	assert_int_equal(td_labels_set(&run->labels, "host", "box-1"), 0);
	assert_int_equal(td_labels_set(&run->labels, "git_branch", "it's_50%;--"), 0);
	assert_int_equal(td_labels_set(&run->labels, "note", "a\"b\\c"), 0);
	run->dropped = UINT64_MAX - 5; /* above INT64_MAX: must survive the signed column */
	run->partial = true;
	run->nr_events = 3;
	for (int e = 0; e < 3; e++)
		run->event_names[e] = strdup(events[e]);

	run->nr_threads = 3;
	run->threads = calloc(3, sizeof(*run->threads));
	run->threads[0] = thread_row(103, "abcdefghijklmno", 3e9);
	run->threads[1] = thread_row(101, "main", 1e9);
	run->threads[2] = thread_row(102, "io_thd_0", 2e9);
	run->threads[2].counters[2].value = NAN; /* never ran */
	run->threads[2].counters[1].running_fraction = NAN;

	run->nr_intervals = 2;
	run->intervals = calloc(2, sizeof(*run->intervals));
	run->intervals[0] = (struct td_interval){ .seq = 0, .start_ns = started_ns,
						  .end_ns = started_ns + 2500000000,
						  .nr_threads = 2 };
	run->intervals[0].threads = calloc(2, sizeof(struct td_thread_row));
	run->intervals[0].threads[0] = thread_row(101, "main", 4e8);
	run->intervals[0].threads[1] = thread_row(102, "io_thd_0", 5e8);
	run->intervals[1] = (struct td_interval){ .seq = 1, .start_ns = started_ns + 2500000000,
						  .end_ns = run->ended_ns, .nr_threads = 1 };
	run->intervals[1].threads = calloc(1, sizeof(struct td_thread_row));
	run->intervals[1].threads[0] = thread_row(101, "main", 6e8);
	run->intervals[1].threads[0].counters[0].value = NAN;

	add_metric(run, TD_SCOPE_THREAD, "101", -1, "Backend_Bound", NULL, 1, 0.5, true, 1.0);
	add_metric(run, TD_SCOPE_THREAD, "101", -1, "Backend_Bound.Memory_Bound",
		   "Backend_Bound", 2, 0.3, false, 0.75);
	add_metric(run, TD_SCOPE_GROUP, "io_thd_*", -1, "Frontend_Bound", NULL, 1, NAN, false,
		   0.5);
	add_metric(run, TD_SCOPE_PROCESS, "100", 0, "Retiring", NULL, 1, 0.2, false, NAN);
	add_metric(run, TD_SCOPE_PROCESS, "100", 1, "Retiring", NULL, 1, 0.125, true, 0.25);
	run->metrics[1].counted_ns = 2250000; /* 0.75 of the thread's 3 ms */
	return run;
}

/* ---- comparing runs field by field ---- */

static void assert_same_double(double a, double b)
{
	if (isnan(a) || isnan(b))
		assert_true(isnan(a) && isnan(b));
	else
		assert_true(a == b);
}

static void assert_same_string(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

static void assert_same_labels(const struct td_labels *a, const struct td_labels *b)
{
	assert_int_equal(a->count, b->count);
	for (size_t i = 0; i < a->count; i++) {
		assert_string_equal(a->items[i].key, b->items[i].key);
		assert_string_equal(a->items[i].value, b->items[i].value);
	}
}

static void assert_same_threads(const struct td_thread_row *a, const struct td_thread_row *b,
				size_t n, size_t nr_events)
{
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(a[i].tid, b[i].tid);
		assert_int_equal(a[i].pid, b[i].pid);
		assert_string_equal(a[i].comm, b[i].comm);
		assert_int_equal(a[i].exited, b[i].exited);
		assert_int_equal(a[i].oncpu_ns, b[i].oncpu_ns);
		assert_int_equal(a[i].voluntary_switches, b[i].voluntary_switches);
		assert_int_equal(a[i].involuntary_switches, b[i].involuntary_switches);
		assert_int_equal(a[i].migrations, b[i].migrations);
		assert_int_equal(a[i].runq_wait_ns, b[i].runq_wait_ns);
		for (size_t e = 0; e < nr_events; e++) {
			assert_same_double(a[i].counters[e].value, b[i].counters[e].value);
			assert_same_double(a[i].counters[e].running_fraction,
					   b[i].counters[e].running_fraction);
		}
	}
}

static void assert_same_run(const struct td_run *a, const struct td_run *b)
{
	assert_string_equal(a->id, b->id);
	assert_int_equal(a->started_ns, b->started_ns);
	assert_int_equal(a->ended_ns, b->ended_ns);
	assert_same_string(a->process, b->process);
	assert_int_equal(a->level, b->level);
	assert_same_string(a->collector, b->collector);
	assert_same_labels(&a->labels, &b->labels);
	assert_int_equal(a->dropped, b->dropped);
	assert_int_equal(a->partial, b->partial);
	assert_int_equal(a->nr_events, b->nr_events);
	for (size_t e = 0; e < a->nr_events; e++)
		assert_string_equal(a->event_names[e], b->event_names[e]);
	assert_int_equal(a->nr_threads, b->nr_threads);
	assert_same_threads(a->threads, b->threads, a->nr_threads, a->nr_events);
	assert_int_equal(a->nr_intervals, b->nr_intervals);
	for (size_t i = 0; i < a->nr_intervals; i++) {
		const struct td_interval *x = &a->intervals[i], *y = &b->intervals[i];

		assert_int_equal(x->seq, y->seq);
		assert_int_equal(x->start_ns, y->start_ns);
		assert_int_equal(x->end_ns, y->end_ns);
		assert_int_equal(x->nr_threads, y->nr_threads);
		assert_same_threads(x->threads, y->threads, x->nr_threads, a->nr_events);
	}
	assert_int_equal(a->nr_metrics, b->nr_metrics);
	for (size_t i = 0; i < a->nr_metrics; i++) {
		const struct td_metric_row *x = &a->metrics[i], *y = &b->metrics[i];

		assert_int_equal(x->scope, y->scope);
		assert_string_equal(x->scope_key, y->scope_key);
		assert_int_equal(x->interval_seq, y->interval_seq);
		assert_string_equal(x->path, y->path);
		assert_same_string(x->parent, y->parent);
		assert_int_equal(x->level, y->level);
		assert_same_double(x->value, y->value);
		assert_int_equal(x->threshold_crossed, y->threshold_crossed);
		assert_same_double(x->confidence, y->confidence);
		assert_int_equal(x->counted_ns, y->counted_ns);
	}
}

static void write_ok(struct fixture *f, const struct td_run *run)
{
	if (td_store_write_run(f->store, run, f->err, ERRLEN) != 0)
		fail_msg("write failed: %s", f->err);
}

/* ---- round trip and atomicity ---- */

static void test_round_trip(void **state)
{
	struct fixture *f = *state;
	struct td_run *run = sample_run("app", 1700000000000000000);
	struct td_run *back = NULL;

	write_ok(f, run);
	assert_int_equal(td_store_read_run(f->store, run->id, &back, f->err, ERRLEN), 0);
	assert_same_run(run, back);
	td_run_free(back);

	/* A run with nothing but its header also comes back whole. */
	struct td_run *bare = td_run_new();

	write_ok(f, bare);
	assert_int_equal(td_store_read_run(f->store, bare->id, &back, f->err, ERRLEN), 0);
	assert_same_run(bare, back);
	td_run_free(back);
	td_run_free(bare);
	td_run_free(run);
}

static void test_nan_is_stored_as_null(void **state)
{
	struct fixture *f = *state;
	struct td_run *run = sample_run("app", 1);
	sqlite3 *db;

	write_ok(f, run);
	db = raw_open(f->path);
	/* sample_run holds two NaN counter values, one NaN fraction, one NaN
	 * metric value and one NaN confidence. */
	assert_int_equal(raw_int(db, "SELECT count(*) FROM counters WHERE value IS NULL", NULL), 2);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM counters"
				 " WHERE running_fraction IS NULL", NULL), 1);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM metrics WHERE value IS NULL", NULL), 1);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM metrics WHERE confidence IS NULL",
				 NULL), 1);
	sqlite3_close(db);
	td_run_free(run);
}

static void test_read_missing_run(void **state)
{
	struct fixture *f = *state;
	struct td_run *back = (struct td_run *)&back; /* must be reset to NULL */

	assert_int_equal(td_store_read_run(f->store, "00000000-0000-4000-8000-000000000000",
					   &back, f->err, ERRLEN), -ENOENT);
	assert_null(back);
	assert_non_null(strstr(f->err, "00000000-0000-4000-8000-000000000000"));
	assert_non_null(strstr(f->err, "topdown list"));
}

static void test_second_write_of_same_id_changes_nothing(void **state)
{
	struct fixture *f = *state;
	struct td_run *run = sample_run("app", 10);
	struct td_run *changed = sample_run("other", 20);
	struct td_run *back = NULL;
	sqlite3 *db;
	int64_t rows;

	write_ok(f, run);
	db = raw_open(f->path);
	rows = raw_total_rows(db);
	memcpy(changed->id, run->id, sizeof(run->id));
	add_metric(changed, TD_SCOPE_THREAD, "1", -1, "Extra", NULL, 1, 0.1, false, 1.0);
	assert_int_equal(td_store_write_run(f->store, changed, f->err, ERRLEN), -EEXIST);
	assert_non_null(strstr(f->err, "already stored"));
	assert_int_equal(raw_total_rows(db), rows);
	assert_int_equal(td_store_read_run(f->store, run->id, &back, f->err, ERRLEN), 0);
	assert_same_run(run, back);
	sqlite3_close(db);
	td_run_free(back);
	td_run_free(changed);
	td_run_free(run);
}

/* The last interval repeats a tid, which its primary key forbids. By then
 * the run row, labels, whole-run threads and the first interval are in:
 * all of it must be gone, and the store must still work. */
static void test_failed_write_leaves_nothing(void **state)
{
	struct fixture *f = *state;
	struct td_run *bad = sample_run("app", 30);
	struct td_run *good = sample_run("app", 40);
	struct td_interval *last = &bad->intervals[1];
	struct td_run *back = (struct td_run *)&back;
	sqlite3 *db;

	last->threads = realloc(last->threads, 2 * sizeof(*last->threads));
	last->threads[1] = last->threads[0];
	last->nr_threads = 2;
	assert_int_equal(td_store_write_run(f->store, bad, f->err, ERRLEN), -EINVAL);
	assert_non_null(strstr(f->err, "UNIQUE constraint failed"));
	assert_non_null(strstr(f->err, "bug"));

	db = raw_open(f->path);
	assert_int_equal(raw_total_rows(db), 0);
	assert_int_equal(td_store_read_run(f->store, bad->id, &back, f->err, ERRLEN), -ENOENT);

	write_ok(f, good);
	assert_int_equal(raw_rows_of_run(db, bad->id), 0);
	assert_true(raw_rows_of_run(db, good->id) > 0);
	sqlite3_close(db);
	td_run_free(bad);
	td_run_free(good);
}

static void test_delete_cascades(void **state)
{
	struct fixture *f = *state;
	struct td_run *kept = sample_run("app", 1);
	struct td_run *deleted = sample_run("app", 2);
	sqlite3 *db;
	sqlite3_stmt *st;
	int64_t kept_rows;

	write_ok(f, kept);
	write_ok(f, deleted);
	db = raw_open(f->path);
	raw_exec(db, "PRAGMA foreign_keys = ON");
	kept_rows = raw_rows_of_run(db, kept->id);
	assert_true(raw_rows_of_run(db, deleted->id) > 0);
	assert_int_equal(sqlite3_prepare_v2(db, "DELETE FROM runs WHERE id = ?1", -1, &st, NULL),
			 SQLITE_OK);
	sqlite3_bind_text(st, 1, deleted->id, -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	/* Nothing of the deleted run remains anywhere, the other is whole. */
	assert_int_equal(raw_total_rows(db), kept_rows);
	assert_int_equal(raw_rows_of_run(db, kept->id), kept_rows);
	sqlite3_close(db);
	td_run_free(kept);
	td_run_free(deleted);
}

/* ---- schema and concurrency ---- */

static void test_migrations_are_idempotent(void **state)
{
	struct fixture *f = *state;
	struct td_run *run = sample_run("app", 1);
	struct td_run *back = NULL;
	sqlite3 *db = raw_open(f->path);
	int64_t versions = raw_int(db, "SELECT count(*) FROM schema_migrations", NULL);

	assert_true(versions >= 1);
	/* Versions 1..n, each applied once. */
	assert_int_equal(raw_int(db, "SELECT max(version) FROM schema_migrations", NULL), versions);
	assert_int_equal(raw_int(db, "SELECT count(DISTINCT version) FROM schema_migrations",
				 NULL), versions);
	write_ok(f, run);
	for (int i = 0; i < 2; i++) {
		td_store_close(f->store);
		f->store = open_path(f->path, f->err);
		assert_non_null(f->store);
	}
	assert_int_equal(raw_int(db, "SELECT count(*) FROM schema_migrations", NULL), versions);
	assert_int_equal(td_store_read_run(f->store, run->id, &back, f->err, ERRLEN), 0);
	assert_same_run(run, back);
	/* The journal mode is kept in the file. */
	assert_int_equal(raw_int(db, "SELECT count(*) FROM pragma_journal_mode"
				 " WHERE journal_mode = 'wal'", NULL), 1);
	sqlite3_close(db);
	td_run_free(back);
	td_run_free(run);
}

/* A database of the schema before metric rows kept their counted time:
 * opening it adds the column, its rows read back with 0 (unknown), and
 * new rows keep theirs. */
static void test_rows_stored_before_counted_time(void **state)
{
	struct fixture *f = *state;
	struct td_run *old = sample_run("app", 1), *fresh = sample_run("app", 2), *back = NULL;
	sqlite3 *db;

	write_ok(f, old);
	td_store_close(f->store);
	f->store = NULL;
	db = raw_open(f->path);
	raw_exec(db, "ALTER TABLE metrics DROP COLUMN counted_ns");
	raw_exec(db, "DELETE FROM schema_migrations WHERE version = 4");
	sqlite3_close(db);
	f->store = open_path(f->path, f->err);
	assert_non_null(f->store);
	assert_int_equal(td_store_read_run(f->store, old->id, &back, f->err, ERRLEN), 0);
	for (size_t i = 0; i < old->nr_metrics; i++)
		old->metrics[i].counted_ns = 0;
	assert_same_run(old, back);
	td_run_free(back);
	write_ok(f, fresh);
	assert_int_equal(td_store_read_run(f->store, fresh->id, &back, f->err, ERRLEN), 0);
	assert_same_run(fresh, back);
	assert_true(back->metrics[1].counted_ns > 0);
	td_run_free(back);
	td_run_free(old);
	td_run_free(fresh);
}

static void test_newer_schema_is_refused(void **state)
{
	struct fixture *f = *state;
	sqlite3 *db = raw_open(f->path);

	td_store_close(f->store);
	raw_exec(db, "INSERT INTO schema_migrations (version, applied_ns) VALUES (1000000, 0)");
	sqlite3_close(db);
	f->store = open_path(f->path, f->err);
	assert_null(f->store);
	assert_non_null(strstr(f->err, "1000000"));
	assert_non_null(strstr(f->err, "upgrade topdown"));
}

/* Starts NR_CHILDREN processes that each open path and write one run,
 * released together through a pipe; true when all of them succeeded. */
enum { NR_CHILDREN = 6 };

static void child_open_and_write(const char *path, int gate, int64_t started_ns)
{
	char err[ERRLEN], byte;
	struct td_store *store;
	struct td_run *run;
	int rc;

	if (read(gate, &byte, 1) != 0) /* EOF: the gate opened */
		_exit(3);
	store = open_path(path, err);
	if (!store) {
		fprintf(stderr, "child open: %s\n", err);
		_exit(1);
	}
	run = sample_run("app", started_ns);
	rc = td_store_write_run(store, run, err, ERRLEN);
	if (rc)
		fprintf(stderr, "child write: %s\n", err);
	td_run_free(run);
	td_store_close(store);
	_exit(rc ? 2 : 0);
}

static bool race_children(const char *path)
{
	pid_t pids[NR_CHILDREN];
	bool all_ok = true;
	int gate[2];

	assert_int_equal(pipe(gate), 0);
	for (int i = 0; i < NR_CHILDREN; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			close(gate[1]);
			child_open_and_write(path, gate[0], i + 1);
		}
	}
	close(gate[0]);
	close(gate[1]);
	for (int i = 0; i < NR_CHILDREN; i++) {
		int status;

		assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
		all_ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
	}
	return all_ok;
}

/*
 * Several processes create the same new file at once, in a few rounds
 * since the race is not lost every time: each must succeed, and the
 * migrations must be applied once.
 */
static void test_concurrent_processes(void **state)
{
	enum { ROUNDS = 4 };
	struct fixture *f = *state;

	close_store(f);
	for (int round = 0; round < ROUNDS; round++) {
		char path[PATH_MAX + 32];
		struct td_run_summary *runs = NULL;
		struct td_store *store;
		size_t count = 0;
		sqlite3 *db;

		snprintf(path, sizeof(path), "%s/shared-%d.db", f->dir, round);
		assert_true(race_children(path));
		store = open_path(path, f->err);
		assert_non_null(store);
		assert_int_equal(td_store_list_runs(store, NULL, &runs, &count, f->err, ERRLEN), 0);
		assert_int_equal(count, NR_CHILDREN);
		db = raw_open(path);
		assert_int_equal(raw_int(db, "SELECT count(*) FROM schema_migrations", NULL),
				 raw_int(db, "SELECT max(version) FROM schema_migrations", NULL));
		sqlite3_close(db);
		td_run_summaries_free(runs, count);
		td_store_close(store);
	}
}

static double elapsed_s(const struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - since->tv_sec) + (now.tv_nsec - since->tv_nsec) / 1e9;
}

/*
 * Another process holds the write lock of a file still in rollback-journal
 * mode for a moment, as when processes create a database together. SQLite
 * refuses the switch to WAL at once then, without its busy handler: the
 * open must wait for the lock rather than fail.
 */
static void test_open_waits_for_wal_switch(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX + 16], byte = 0;
	struct td_store *store;
	struct timespec start;
	int locked[2], status;
	sqlite3 *db;
	pid_t pid;

	close_store(f);
	snprintf(path, sizeof(path), "%s/old.db", f->dir);
	db = raw_open(path);
	raw_exec(db, "CREATE TABLE unrelated (x)");
	sqlite3_close(db);
	assert_int_equal(pipe(locked), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		sqlite3 *writer = NULL;

		close(locked[0]);
		sqlite3_open(path, &writer);
		if (sqlite3_exec(writer, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK ||
		    write(locked[1], "x", 1) != 1)
			_exit(1);
		usleep(300 * 1000);
		sqlite3_exec(writer, "COMMIT", NULL, NULL, NULL);
		sqlite3_close(writer);
		_exit(0);
	}
	close(locked[1]);
	assert_int_equal(read(locked[0], &byte, 1), 1);
	close(locked[0]);
	clock_gettime(CLOCK_MONOTONIC, &start);
	store = open_path(path, f->err);
	if (!store)
		fail_msg("open failed: %s", f->err);
	assert_true(elapsed_s(&start) >= 0.2);
	td_store_close(store);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Another connection holds the write lock past the busy timeout (5 s). */
static void test_busy_database(void **state)
{
	struct fixture *f = *state;
	struct td_run *run = sample_run("app", 1);
	sqlite3 *db = raw_open(f->path);
	struct timespec start;

	raw_exec(db, "BEGIN IMMEDIATE");
	clock_gettime(CLOCK_MONOTONIC, &start);
	assert_int_equal(td_store_write_run(f->store, run, f->err, ERRLEN), -EBUSY);
	assert_true(elapsed_s(&start) >= 4.5);
	assert_non_null(strstr(f->err, "retry"));
	raw_exec(db, "ROLLBACK");
	write_ok(f, run);
	sqlite3_close(db);
	td_run_free(run);
}

/* ---- listing ---- */

/* The ids of a listing, in order, compared with the expected runs. */
static void assert_listed(struct fixture *f, const struct td_run_filter *filter,
			  struct td_run *const *expected, size_t nr_expected)
{
	struct td_run_summary *runs = (struct td_run_summary *)&runs;
	size_t count = 12345;

	if (td_store_list_runs(f->store, filter, &runs, &count, f->err, ERRLEN) != 0)
		fail_msg("list failed: %s", f->err);
	assert_int_equal(count, nr_expected);
	if (!count)
		assert_null(runs);
	for (size_t i = 0; i < count; i++)
		assert_string_equal(runs[i].id, expected[i]->id);
	td_run_summaries_free(runs, count);
}

static void test_list_filters_and_order(void **state)
{
	struct fixture *f = *state;
	struct td_run *r[5];
	struct td_labels want;
	struct td_run_filter filter = { 0 };

	/* Written out of order; started_ns decides the listing order. */
	r[0] = sample_run("db", 300);
	r[1] = sample_run("web", 100);
	r[2] = sample_run("db", 500);
	r[3] = sample_run("web", 400);
	r[4] = sample_run("db", 200);
	td_labels_set(&r[0]->labels, "env", "prod");
	td_labels_set(&r[2]->labels, "env", "prod");
	td_labels_set(&r[2]->labels, "zone", "eu");
	td_labels_set(&r[3]->labels, "zone", "eu");
	td_labels_set(&r[4]->labels, "env", "dev");
	for (int i = 0; i < 5; i++)
		write_ok(f, r[i]);

	assert_listed(f, NULL, (struct td_run *[]){ r[2], r[3], r[0], r[4], r[1] }, 5);
	filter.limit = 2;
	assert_listed(f, &filter, (struct td_run *[]){ r[2], r[3] }, 2);
	filter.limit = 0;
	filter.process = "db";
	assert_listed(f, &filter, (struct td_run *[]){ r[2], r[0], r[4] }, 3);
	filter.since_ns = 300; /* at or after */
	assert_listed(f, &filter, (struct td_run *[]){ r[2], r[0] }, 2);
	filter.process = NULL;
	assert_listed(f, &filter, (struct td_run *[]){ r[2], r[3], r[0] }, 3);

	td_labels_init(&want);
	filter = (struct td_run_filter){ .labels = &want };
	assert_listed(f, &filter, (struct td_run *[]){ r[2], r[3], r[0], r[4], r[1] }, 5);
	td_labels_set(&want, "env", "prod");
	assert_listed(f, &filter, (struct td_run *[]){ r[2], r[0] }, 2);
	td_labels_set(&want, "zone", "eu"); /* AND */
	assert_listed(f, &filter, (struct td_run *[]){ r[2] }, 1);
	filter.process = "web";
	assert_listed(f, &filter, NULL, 0);
	td_labels_free(&want);
	for (int i = 0; i < 5; i++)
		td_run_free(r[i]);
}

static void test_list_summary_fields(void **state)
{
	struct fixture *f = *state;
	struct td_run *run = sample_run("app", 77);
	struct td_run_summary *runs = NULL;
	size_t count = 0;

	write_ok(f, run);
	assert_int_equal(td_store_list_runs(f->store, NULL, &runs, &count, f->err, ERRLEN), 0);
	assert_int_equal(count, 1);
	assert_string_equal(runs[0].id, run->id);
	assert_int_equal(runs[0].started_ns, run->started_ns);
	assert_int_equal(runs[0].ended_ns, run->ended_ns);
	assert_string_equal(runs[0].process, run->process);
	assert_int_equal(runs[0].level, run->level);
	assert_string_equal(runs[0].collector, run->collector);
	assert_same_labels(&runs[0].labels, &run->labels);
	assert_int_equal(runs[0].dropped, run->dropped);
	assert_int_equal(runs[0].partial, run->partial);
	assert_int_equal(runs[0].nr_threads, run->nr_threads);
	td_run_summaries_free(runs, count);
	td_run_free(run);
}

/* Values that would change meaning if they reached SQL as text or as a
 * LIKE pattern must round-trip and match only themselves. */
static void test_sql_metacharacters(void **state)
{
	static const char *const nasty[] = { "it's", "50%", "a_b", "x'; DROP TABLE runs;--",
					     "\"q\"", "%", "_" };
	enum { N = sizeof(nasty) / sizeof(nasty[0]) };
	struct fixture *f = *state;
	struct td_run *runs[N], *decoy, *back = NULL;
	struct td_labels want;
	struct td_run_filter filter = { 0 };

	for (size_t i = 0; i < N; i++) {
		runs[i] = sample_run(nasty[i], (int64_t)i + 1);
		td_labels_set(&runs[i]->labels, "tag", nasty[i]);
		write_ok(f, runs[i]);
	}
	/* Would match "50%", "a_b", "%" or "_" under LIKE. */
	decoy = sample_run("50x", 100);
	td_labels_set(&decoy->labels, "tag", "axb");
	write_ok(f, decoy);

	td_labels_init(&want);
	for (size_t i = 0; i < N; i++) {
		assert_int_equal(td_store_read_run(f->store, runs[i]->id, &back, f->err, ERRLEN),
				 0);
		assert_same_run(runs[i], back);
		td_run_free(back);

		td_labels_set(&want, "tag", nasty[i]);
		filter = (struct td_run_filter){ .labels = &want };
		assert_listed(f, &filter, &runs[i], 1);
		filter = (struct td_run_filter){ .process = nasty[i] };
		assert_listed(f, &filter, &runs[i], 1);
		filter = (struct td_run_filter){ .labels = &want, .process = nasty[i] };
		assert_listed(f, &filter, &runs[i], 1);
	}
	td_labels_free(&want);
	td_run_free(decoy);
	for (size_t i = 0; i < N; i++)
		td_run_free(runs[i]);
}

/* ---- opening: errors and the default path ---- */

static void test_unknown_backend(void **state)
{
	struct fixture *f = *state;
	struct td_store_config cfg = { .backend = "mongo", .path = f->path };

	errno = 0;
	assert_null(td_store_open(&cfg, f->err, ERRLEN));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(f->err, "'mongo'"));
	assert_non_null(strstr(f->err, "sqlite"));

	cfg.backend = "sqlite";
	struct td_store *store = td_store_open(&cfg, f->err, ERRLEN);

	assert_non_null(store);
	td_store_close(store);
}

static void test_directory_as_path(void **state)
{
	struct fixture *f = *state;

	errno = 0;
	assert_null(open_path(f->dir, f->err));
	assert_int_equal(errno, EISDIR);
	assert_non_null(strstr(f->err, "Is a directory"));
	assert_non_null(strstr(f->err, "pass --db"));
}

static void test_missing_parent_directory(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/missing/data.db", f->dir);
	errno = 0;
	assert_null(open_path(path, f->err));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(f->err, "No such file or directory"));
	assert_non_null(strstr(f->err, "pass --db"));
}

static void test_not_a_database(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX + 16];
	FILE *file;

	snprintf(path, sizeof(path), "%s/notes.txt", f->dir);
	file = fopen(path, "w");
	assert_non_null(file);
	for (int i = 0; i < 200; i++)
		fputs("this is not a database, just some text\n", file);
	fclose(file);
	assert_null(open_path(path, f->err));
	assert_non_null(strstr(f->err, "not a database"));
	assert_non_null(strstr(f->err, "pass --db"));
}

/*
 * Opens path as an unprivileged user in a child (root may write
 * anywhere) and reports whether the error names the permission problem
 * and the fix. Exit status: 0 as expected, 1 otherwise.
 */
static void assert_denied(const char *path)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		char err[ERRLEN];
		struct td_store *store;

		if (geteuid() == 0 && setresuid(NOBODY, NOBODY, NOBODY) != 0)
			_exit(1);
		store = open_path(path, err);
		if (store) {
			td_store_close(store);
			_exit(1);
		}
		if (!strstr(err, "Permission denied") ||
		    !strstr(err, "pass --db with a writable path or set TOPDOWN_DB_PATH")) {
			fprintf(stderr, "unexpected message: %s\n", err);
			_exit(1);
		}
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_unwritable_directory(void **state)
{
	struct fixture *f = *state;
	char dir[PATH_MAX + 16], path[PATH_MAX + 32];

	snprintf(dir, sizeof(dir), "%s/ro", f->dir);
	snprintf(path, sizeof(path), "%s/data.db", dir);
	assert_int_equal(mkdir(dir, 0555), 0);
	assert_int_equal(chmod(f->dir, 0755), 0);
	close_store(f);
	assert_denied(path);
}

static void test_unwritable_file(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(chmod(f->dir, 0755), 0);
	assert_int_equal(chmod(f->path, 0444), 0);
	close_store(f);
	assert_denied(f->path);
}

/* ---- a reader's store: read-only, never created ---- */

static struct td_store *open_reader(const char *path, char *err)
{
	struct td_store_config cfg = { .path = path, .mode = TD_STORE_READ_ONLY };

	err[0] = '\0';
	return td_store_open(&cfg, err, ERRLEN);
}

static void test_reader_creates_nothing(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX + 16];
	struct stat st;

	snprintf(path, sizeof(path), "%s/typo.db", f->dir);
	errno = 0;
	assert_null(open_reader(path, f->err));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(f->err, "no database at"));
	assert_non_null(strstr(f->err, "topdown collect"));
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(errno, ENOENT);

	/* A missing directory: no database either, and nothing made. */
	snprintf(path, sizeof(path), "%s/nodir/data.db", f->dir);
	assert_null(open_reader(path, f->err));
	assert_non_null(strstr(f->err, "no database at"));
	snprintf(path, sizeof(path), "%s/nodir", f->dir);
	assert_int_equal(stat(path, &st), -1);

	/* An empty file (touch, or an older topdown's reader) holds no store;
	 * the reader leaves it empty. */
	snprintf(path, sizeof(path), "%s/empty.db", f->dir);
	close(open(path, O_CREAT | O_WRONLY, 0600));
	errno = 0;
	assert_null(open_reader(path, f->err));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(f->err, "holds no topdown data"));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 0);
}

static void test_reader_reads_and_refuses_writes(void **state)
{
	struct fixture *f = *state;
	struct td_run *run = sample_run("app", 5), *back = NULL;
	struct td_store *reader;
	size_t deleted = 1;

	assert_int_equal(td_store_write_run(f->store, run, f->err, ERRLEN), 0);
	reader = open_reader(f->path, f->err);
	assert_non_null(reader);
	assert_int_equal(td_store_mode(reader), TD_STORE_READ_ONLY);
	assert_int_equal(td_store_read_run(reader, run->id, &back, f->err, ERRLEN), 0);
	assert_string_equal(back->process, "app");
	td_run_free(back);

	assert_int_equal(td_store_write_run(reader, run, f->err, ERRLEN), -EROFS);
	assert_non_null(strstr(f->err, "read-only"));
	assert_int_equal(td_store_delete_runs(reader, NULL, 0, &deleted, f->err, ERRLEN), -EROFS);
	assert_int_equal(deleted, 0);
	td_store_close(reader);
	/* The run is still there for the writer. */
	assert_int_equal(td_store_read_run(f->store, run->id, &back, f->err, ERRLEN), 0);
	td_run_free(back);
	td_run_free(run);
}

/* A reader cannot migrate: an older schema is named, and left as it was. */
static void test_reader_refuses_older_schema(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX + 16];
	sqlite3 *db;

	snprintf(path, sizeof(path), "%s/old.db", f->dir);
	db = raw_open(path);
	raw_exec(db, "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY,"
		     " applied_ns INTEGER NOT NULL); INSERT INTO schema_migrations VALUES (1, 0)");
	sqlite3_close(db);
	errno = 0;
	assert_null(open_reader(path, f->err));
	assert_int_equal(errno, EPROTO);
	assert_non_null(strstr(f->err, "older than"));
	/* Not migrated: the runs table of migration 1 was not made. */
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_table_column_metadata(db, "main", "runs", NULL, NULL, NULL, NULL,
						       NULL, NULL), SQLITE_ERROR);
	sqlite3_close(db);
}

/*
 * The store of another user, readable but not writable (0644 file in a
 * 0755 directory, owned by root): a reader reads it as nobody, in a
 * child. Exit status: 0 when what it saw matches want_ok (and, on
 * failure, the message holds want_text), 1 otherwise.
 */
static int read_as_nobody(const char *path, bool want_ok, const char *want_text)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		char err[ERRLEN];
		struct td_run_summary *runs = NULL;
		size_t count = 0;
		struct td_store *store;
		int ret;

		if (setresgid(NOBODY, NOBODY, NOBODY) != 0 || setresuid(NOBODY, NOBODY, NOBODY) != 0)
			_exit(1);
		store = open_reader(path, err);
		ret = store ? td_store_list_runs(store, NULL, &runs, &count, err, ERRLEN) : -1;
		td_run_summaries_free(runs, count);
		td_store_close(store);
		if (want_ok && (ret != 0 || count != 1)) {
			fprintf(stderr, "reader failed: %s\n", err);
			_exit(1);
		}
		if (!want_ok && (ret == 0 || !strstr(err, want_text))) {
			fprintf(stderr, "unexpected: %d %s\n", ret, ret ? err : "(read)");
			_exit(1);
		}
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static void test_reader_of_another_users_store(void **state)
{
	struct fixture *f = *state;
	struct td_run *run = sample_run("app", 5);
	char name[PATH_MAX + 16];

	if (geteuid() != 0)
		skip(); /* needs another user to read as */
	assert_int_equal(td_store_write_run(f->store, run, f->err, ERRLEN), 0);
	td_run_free(run);
	close_store(f);
	assert_int_equal(chmod(f->dir, 0755), 0);
	assert_int_equal(chmod(f->path, 0644), 0);
	/* The writer made its -wal and -shm 0600, as the file was; the
	 * reader says which files it cannot read. */
	assert_int_equal(read_as_nobody(f->path, false, "-shm"), 0);
	/* The next writer gives them the file's permissions: readable. */
	f->store = open_path(f->path, f->err);
	assert_non_null(f->store);
	close_store(f);
	assert_int_equal(read_as_nobody(f->path, true, NULL), 0);
	/* Without them, in a directory it cannot write: named, with the fix. */
	snprintf(name, sizeof(name), "%s-wal", f->path);
	assert_int_equal(unlink(name), 0);
	snprintf(name, sizeof(name), "%s-shm", f->path);
	assert_int_equal(unlink(name), 0);
	assert_int_equal(read_as_nobody(f->path, false, "command that writes"), 0);
	assert_int_equal(access(name, F_OK), -1);
}

/* Environment variables the default path reads, restored after each test. */
struct saved_env {
	char *home, *db_path;
};

static char *dup_env(const char *name)
{
	const char *value = getenv(name);

	return value ? strdup(value) : NULL;
}

static void restore_env(const char *name, char *value)
{
	if (value)
		setenv(name, value, 1);
	else
		unsetenv(name);
	free(value);
}

static void test_default_path_precedence(void **state)
{
	struct fixture *f = *state;
	struct saved_env saved = { dup_env("HOME"), dup_env("TOPDOWN_DB_PATH") };
	char buf[PATH_MAX], expected[PATH_MAX + 32];
	struct stat st;

	setenv("HOME", f->dir, 1);
	setenv("TOPDOWN_DB_PATH", "/env/data.db", 1);
	assert_int_equal(td_store_default_path("/flag/data.db", TD_STORE_READ_WRITE, buf, sizeof(buf), f->err, ERRLEN),
			 0);
	assert_string_equal(buf, "/flag/data.db");
	assert_int_equal(td_store_default_path(NULL, TD_STORE_READ_WRITE, buf, sizeof(buf), f->err, ERRLEN), 0);
	assert_string_equal(buf, "/env/data.db");
	/* --db "" names no file: refused, not read as "no --db". */
	assert_int_equal(td_store_default_path("", TD_STORE_READ_WRITE, buf, sizeof(buf), f->err, ERRLEN),
			 -EINVAL);
	assert_non_null(strstr(f->err, "--db was given an empty path"));

	unsetenv("TOPDOWN_DB_PATH");
	snprintf(expected, sizeof(expected), "%s/.topdown/data.db", f->dir);
	/* A reader makes no directory: it is told there is no database. */
	assert_int_equal(td_store_default_path(NULL, TD_STORE_READ_ONLY, buf, sizeof(buf), f->err, ERRLEN), 0);
	assert_string_equal(buf, expected);
	snprintf(expected, sizeof(expected), "%s/.topdown", f->dir);
	assert_int_equal(stat(expected, &st), -1);
	snprintf(expected, sizeof(expected), "%s/.topdown/data.db", f->dir);
	assert_int_equal(td_store_default_path(NULL, TD_STORE_READ_WRITE, buf, sizeof(buf), f->err, ERRLEN), 0);
	assert_string_equal(buf, expected);
	snprintf(expected, sizeof(expected), "%s/.topdown", f->dir);
	assert_int_equal(stat(expected, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	/* Again, with the directory already there. */
	assert_int_equal(td_store_default_path(NULL, TD_STORE_READ_WRITE, buf, sizeof(buf), f->err, ERRLEN), 0);

	/* The default path given by name (--db or TOPDOWN_DB_PATH) gets its directory too... */
	assert_int_equal(rmdir(expected), 0);
	snprintf(buf, sizeof(buf), "%s/.topdown/data.db", f->dir);
	setenv("TOPDOWN_DB_PATH", buf, 1);
	assert_int_equal(td_store_default_path(NULL, TD_STORE_READ_WRITE, buf, sizeof(buf), f->err, ERRLEN), 0);
	assert_int_equal(stat(expected, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(rmdir(expected), 0);
	unsetenv("TOPDOWN_DB_PATH");
	snprintf(buf, sizeof(buf), "%s/.topdown/data.db", f->dir);
	assert_int_equal(td_store_default_path(strdupa(buf), TD_STORE_READ_WRITE, buf, sizeof(buf), f->err, ERRLEN), 0);
	assert_int_equal(stat(expected, &st), 0);
	/* ...and no other path does: a missing directory there is the user's to make. */
	snprintf(buf, sizeof(buf), "%s/elsewhere/data.db", f->dir);
	assert_int_equal(td_store_default_path(strdupa(buf), TD_STORE_READ_WRITE, buf, sizeof(buf), f->err, ERRLEN), 0);
	snprintf(buf, sizeof(buf), "%s/elsewhere", f->dir);
	assert_int_equal(stat(buf, &st), -1);

	restore_env("HOME", saved.home);
	restore_env("TOPDOWN_DB_PATH", saved.db_path);
}

static void test_default_path_errors(void **state)
{
	struct fixture *f = *state;
	struct saved_env saved = { dup_env("HOME"), dup_env("TOPDOWN_DB_PATH") };
	char buf[PATH_MAX], small[8];

	unsetenv("TOPDOWN_DB_PATH");
	unsetenv("HOME");
	assert_int_equal(td_store_default_path(NULL, TD_STORE_READ_WRITE, buf, sizeof(buf), f->err, ERRLEN), -ENOENT);
	assert_non_null(strstr(f->err, "HOME"));
	assert_non_null(strstr(f->err, "TOPDOWN_DB_PATH"));

	/* HOME under a regular file: the directory cannot be made. */
	setenv("HOME", f->path, 1);
	assert_int_equal(td_store_default_path(NULL, TD_STORE_READ_WRITE, buf, sizeof(buf), f->err, ERRLEN), -ENOTDIR);
	assert_non_null(strstr(f->err, "cannot create directory"));
	assert_non_null(strstr(f->err, "pass --db"));

	assert_int_equal(td_store_default_path(NULL, TD_STORE_READ_WRITE, small, sizeof(small), f->err, ERRLEN),
			 -ENAMETOOLONG);
	assert_int_equal(td_store_default_path("/a/long/path.db", TD_STORE_READ_WRITE, small, sizeof(small), f->err,
					       ERRLEN), -ENAMETOOLONG);
	assert_non_null(strstr(f->err, "--db"));

	restore_env("HOME", saved.home);
	restore_env("TOPDOWN_DB_PATH", saved.db_path);
}

static void test_open_uses_default_path(void **state)
{
	struct fixture *f = *state;
	struct saved_env saved = { dup_env("HOME"), dup_env("TOPDOWN_DB_PATH") };
	char path[PATH_MAX + 16];
	struct td_store *store;
	struct stat st;

	snprintf(path, sizeof(path), "%s/from-env.db", f->dir);
	setenv("TOPDOWN_DB_PATH", path, 1);
	store = td_store_open(NULL, f->err, ERRLEN);
	assert_non_null(store);
	assert_int_equal(stat(path, &st), 0);
	td_store_close(store);

	/* A default path that cannot be resolved fails the open. */
	unsetenv("TOPDOWN_DB_PATH");
	unsetenv("HOME");
	assert_null(td_store_open(&(struct td_store_config){ 0 }, f->err, ERRLEN));
	assert_non_null(strstr(f->err, "HOME"));

	restore_env("HOME", saved.home);
	restore_env("TOPDOWN_DB_PATH", saved.db_path);
}

/* ---- bad input ---- */

static void assert_rejected(struct fixture *f, const struct td_run *run, const char *words)
{
	assert_int_equal(td_store_write_run(f->store, run, f->err, ERRLEN), -EINVAL);
	assert_non_null(strstr(f->err, words));
}

static void test_invalid_runs_are_rejected(void **state)
{
	struct fixture *f = *state;
	struct td_run *run = sample_run("app", 1);
	sqlite3 *db;

	assert_rejected(f, NULL, "no run");

	char id[TD_RUN_ID_LEN];

	memcpy(id, run->id, sizeof(id));
	memset(run->id, 'x', sizeof(run->id)); /* no NUL */
	assert_rejected(f, run, "no id");
	run->id[0] = '\0';
	assert_rejected(f, run, "no id");
	memcpy(run->id, id, sizeof(id));

	run->nr_events = TD_MAX_EVENTS + 1;
	assert_rejected(f, run, "TD_MAX_EVENTS");
	run->nr_events = 4; /* event_names[3] is NULL */
	assert_rejected(f, run, "no name");
	run->nr_events = 3;

	free(run->threads);
	run->threads = NULL;
	assert_rejected(f, run, "array is missing");
	run->nr_threads = 0;

	free(run->intervals[1].threads);
	run->intervals[1].threads = NULL;
	assert_rejected(f, run, "interval");
	run->intervals[1].nr_threads = 0;

	const char *path = run->metrics[0].path;

	run->metrics[0].path = NULL;
	assert_rejected(f, run, "no path");
	run->metrics[0].path = path;
	run->metrics[1].scope = (enum td_metric_scope)7;
	assert_rejected(f, run, "unknown scope");
	run->metrics[1].scope = TD_SCOPE_THREAD;

	/* JSON holds UTF-8 only. */
	td_labels_set(&run->labels, "bytes", "\xff\xfe");
	assert_rejected(f, run, "UTF-8");

	db = raw_open(f->path);
	assert_int_equal(raw_total_rows(db), 0);
	sqlite3_close(db);
	td_run_free(run);
}

static void test_null_arguments(void **state)
{
	struct fixture *f = *state;
	struct td_run *back;
	struct td_run_summary *runs;
	size_t count;

	assert_int_equal(td_store_read_run(NULL, "x", &back, f->err, ERRLEN), -EINVAL);
	assert_int_equal(td_store_read_run(f->store, NULL, &back, f->err, ERRLEN), -EINVAL);
	assert_int_equal(td_store_read_run(f->store, "x", NULL, f->err, ERRLEN), -EINVAL);
	assert_int_equal(td_store_list_runs(NULL, NULL, &runs, &count, f->err, ERRLEN), -EINVAL);
	assert_int_equal(td_store_list_runs(f->store, NULL, NULL, &count, f->err, ERRLEN),
			 -EINVAL);
	assert_int_equal(td_store_list_runs(f->store, NULL, &runs, NULL, f->err, ERRLEN),
			 -EINVAL);
	assert_non_null(strstr(f->err, "bug in the caller"));
	td_store_close(NULL);
	td_run_summaries_free(NULL, 0);
}

/* Damage written behind the store's back is reported, never trusted. */
static void test_malformed_rows(void **state)
{
	static const char *const damage[] = {
		"UPDATE runs SET labels = 'not json'",
		"UPDATE runs SET labels = '{\"k\": 1}'",
		"UPDATE runs SET event_names = '[1, 2]'",
		"UPDATE runs SET nr_threads = 1",                /* ordinals beyond the array */
		"UPDATE counters SET event = 6 WHERE event = 2", /* beyond nr_events */
		"UPDATE intervals SET seq = 9 WHERE seq = 1",    /* threads lose their interval */
		"UPDATE runs SET id = 'x' || id",                /* too long for an id */
	};
	struct fixture *f = *state;

	for (size_t i = 0; i < sizeof(damage) / sizeof(damage[0]); i++) {
		struct td_run *run = sample_run("app", 1);
		struct td_run *back = (struct td_run *)&back;
		struct td_run_summary *runs;
		size_t count;
		sqlite3 *db;
		char id[TD_RUN_ID_LEN + 1];

		write_ok(f, run);
		db = raw_open(f->path);
		raw_exec(db, "PRAGMA foreign_keys = OFF");
		raw_exec(db, damage[i]);
		snprintf(id, sizeof(id), "%s%s", strstr(damage[i], "'x'") ? "x" : "", run->id);
		assert_int_equal(td_store_read_run(f->store, id, &back, f->err, ERRLEN), -EIO);
		assert_null(back);
		assert_non_null(strstr(f->err, "malformed"));
		if (strstr(damage[i], "runs SET labels") || strstr(damage[i], "runs SET id")) {
			assert_int_equal(td_store_list_runs(f->store, NULL, &runs, &count, f->err,
							    ERRLEN), -EIO);
			assert_non_null(strstr(f->err, "malformed"));
		}
		raw_exec(db, "PRAGMA foreign_keys = ON; DELETE FROM runs");
		sqlite3_close(db);
		td_run_free(run);
	}
}

/* ---- gathering read_metrics results (backend.h) ---- */

static void result_with_two_runs(struct td_metrics_result *r)
{
	for (long long key = 10; key <= 20; key += 10) {
		struct td_run_summary summary = { .process = strdup("app"), .collector = strdup("bpf") };

		td_labels_init(&summary.labels);
		assert_int_equal(td_metrics_result_add_run(r, key, &summary), 0);
	}
}

static void add_result_row(struct td_metrics_result *r, long long key, const char *scope_key,
			   const char *path)
{
	struct td_metric_row row = { .scope = TD_SCOPE_PROCESS, .scope_key = scope_key,
				     .interval_seq = -1, .path = path, .level = 1 };

	assert_int_equal(td_metrics_result_add_row(r, key, &row), 0);
}

/* Each run's rows come with their strings, each stored once per run. */
static void test_metrics_result_rows_by_run(void **state)
{
	struct td_metrics_result r = { 0 };
	struct td_run_metrics *out = NULL;
	size_t count = 0;

	(void)state;
	result_with_two_runs(&r);
	add_result_row(&r, 20, "2", "Retiring");
	add_result_row(&r, 10, "1", "Retiring");
	add_result_row(&r, 10, "1", "Frontend_Bound");
	assert_int_equal(td_metrics_result_finish(&r, 0, &out, &count), 0);
	assert_int_equal(count, 2);
	assert_int_equal(out[0].nr_rows, 2);
	assert_int_equal(out[0].strings.count, 3);
	assert_ptr_equal(out[0].rows[0].scope_key, out[0].rows[1].scope_key);
	assert_string_equal(out[0].rows[1].path, "Frontend_Bound");
	assert_int_equal(out[1].nr_rows, 1);
	assert_int_equal(out[1].strings.count, 2);
	assert_string_equal(out[1].rows[0].scope_key, "2");
	td_run_metrics_free(out, count);
}

/* Rows of a run seen before fail the read; whatever was gathered is freed
 * (the leak checkers see it), the rows of the run before included. */
static void test_metrics_result_run_seen_twice(void **state)
{
	struct td_metrics_result r = { 0 };
	struct td_run_metrics *out = NULL;
	struct td_metric_row row = { .scope = TD_SCOPE_PROCESS, .scope_key = "1", .path = "Retiring" };
	size_t count = 0;

	(void)state;
	result_with_two_runs(&r);
	add_result_row(&r, 10, "1", "Retiring");
	add_result_row(&r, 20, "2", "Retiring");
	assert_int_equal(td_metrics_result_add_row(&r, 10, &row), -EIO);
	assert_int_equal(td_metrics_result_add_row(&r, 30, &row), -EIO);
	assert_int_equal(td_metrics_result_finish(&r, -EIO, &out, &count), -EIO);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_round_trip),
		T(test_nan_is_stored_as_null),
		T(test_read_missing_run),
		T(test_second_write_of_same_id_changes_nothing),
		T(test_failed_write_leaves_nothing),
		T(test_delete_cascades),
		T(test_migrations_are_idempotent),
		T(test_rows_stored_before_counted_time),
		T(test_newer_schema_is_refused),
		T(test_concurrent_processes),
		T(test_busy_database),
		T(test_open_waits_for_wal_switch),
		T(test_list_filters_and_order),
		T(test_list_summary_fields),
		T(test_sql_metacharacters),
		T(test_unknown_backend),
		T(test_directory_as_path),
		T(test_missing_parent_directory),
		T(test_not_a_database),
		T(test_unwritable_directory),
		T(test_unwritable_file),
		T(test_reader_creates_nothing),
		T(test_reader_reads_and_refuses_writes),
		T(test_reader_refuses_older_schema),
		T(test_reader_of_another_users_store),
		T(test_default_path_precedence),
		T(test_default_path_errors),
		T(test_open_uses_default_path),
		T(test_invalid_runs_are_rejected),
		T(test_null_arguments),
		T(test_malformed_rows),
		cmocka_unit_test(test_metrics_result_rows_by_run),
		cmocka_unit_test(test_metrics_result_run_seen_twice),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
