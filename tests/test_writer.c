// SPDX-License-Identifier: BSD-3-Clause
/*
 * The agent's writer thread against a SQLite store: queueing a window's
 * runs never waits for the store, even while another process holds the
 * database; the runs arrive once it lets go, each marked with its delay;
 * nothing queued is lost when the writer stops; a window without runs
 * gives the spool its turn; a run neither store nor spool takes is
 * counted lost, with its reason.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "backends.h"
#include "writer.h"

#define MS 1000000ll

struct fixture {
	char dir[64];
	char store[PATH_MAX], spool[PATH_MAX];
	struct td_sink_config cfg;
	char err[ERRLEN];
};

static int writer_setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/td-writer-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->store, sizeof(f->store), "%s/store.db", f->dir);
	snprintf(f->spool, sizeof(f->spool), "%s/spool.db", f->dir);
	f->cfg.store.backend = "sqlite";
	f->cfg.db = f->store;
	f->cfg.spool_path = f->spool;
	*state = f;
	return 0;
}

static int writer_teardown(void **state)
{
	struct fixture *f = *state;

	nftw(f->dir, backend_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

static int64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* A window's runs as the agent queues them: n runs of a window that just ended. */
static struct td_run **window_runs(size_t n)
{
	struct td_run **runs = calloc(n, sizeof(*runs));
	int64_t end = now_ns(CLOCK_REALTIME);

	assert_non_null(runs);
	for (size_t i = 0; i < n; i++) {
		runs[i] = new_run("app", end - 1000 * MS, "test_name=writer");
		runs[i]->ended_ns = end;
		add_thread(runs[i], 100 + (uint32_t)i, "app", 1000);
	}
	return runs;
}

static struct td_writer *start(struct fixture *f, int64_t late_after_ns)
{
	struct td_sink *sink = td_sink_open(&f->cfg, f->err, ERRLEN);
	struct td_writer *w;

	if (!sink)
		fail_msg("td_sink_open failed: %s", f->err);
	w = td_writer_start(sink, late_after_ns, f->err, ERRLEN);
	if (!w)
		fail_msg("td_writer_start failed: %s", f->err);
	return w;
}

/* The runs in the SQLite file at path, oldest first. */
static struct td_run_summary *runs_in(struct fixture *f, const char *path, size_t *count)
{
	struct td_store_config cfg = { .backend = "sqlite", .path = path };
	struct td_run_filter all = { .oldest_first = true };
	struct td_run_summary *runs = NULL;
	struct td_store *store = td_store_open(&cfg, f->err, ERRLEN);

	if (!store)
		fail_msg("cannot open %s: %s", path, f->err);
	if (td_store_list_runs(store, &all, &runs, count, f->err, ERRLEN))
		fail_msg("list failed: %s", f->err);
	td_store_close(store);
	return runs;
}

/*
 * Another process holds the database (BEGIN EXCLUSIVE) for 1.5 s: three
 * windows queued meanwhile each return at once and wait in memory; once
 * it lets go all three are stored. The first went to the store at once
 * (and waited there for the lock); the two behind it waited in memory
 * for over a second, which their label says.
 */
static void test_queueing_never_waits_for_a_held_store(void **state)
{
	struct fixture *f = *state;
	struct td_writer *w = start(f, 100 * MS);
	struct td_writer_state st;
	struct td_run_summary *runs;
	sqlite3 *other = NULL;
	size_t count, labelled = 0, held = 0;

	assert_int_equal(sqlite3_open(f->store, &other), SQLITE_OK);
	assert_int_equal(sqlite3_exec(other, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
	for (int i = 0; i < 3; i++) {
		struct td_run **runs_of_window = window_runs(1);
		int64_t before = now_ns(CLOCK_MONOTONIC);

		/* far less than the store is held for (slack for valgrind) */
		td_writer_submit(w, runs_of_window, 1);
		assert_true(now_ns(CLOCK_MONOTONIC) - before < 300 * MS);
		usleep(100 * 1000);
	}
	td_writer_state(w, &st);
	assert_int_equal(st.queued, 3); /* the first is the one waiting for the lock */
	usleep(1200 * 1000);
	sqlite3_exec(other, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(other);

	assert_int_equal(td_writer_finish(w, f->err, ERRLEN), 0);
	td_writer_state(w, &st);
	assert_int_equal(st.queued, 0);
	assert_int_equal(st.lost, 0);
	/* the two behind the lock are late; the first too when its own write
	 * began more than a window after it came (valgrind runs one thread
	 * at a time) */
	assert_true(st.late == 2 || st.late == 3);
	td_writer_free(w);
	runs = runs_in(f, f->store, &count);
	assert_int_equal(count, 3);
	for (size_t i = 0; i < count; i++) {
		const char *delay = td_labels_get(&runs[i].labels, "agent.store_delay_ms");

		labelled += delay != NULL;
		held += delay && strtod(delay, NULL) > 1000;
	}
	assert_int_equal(labelled, st.late); /* each late run says so, and only those */
	assert_true(held >= 2);
	td_run_summaries_free(runs, count);
}

/* Runs written at once are not marked; what is queued when the writer
 * stops is written before it ends. */
static void test_free_writes_what_is_queued(void **state)
{
	struct fixture *f = *state;
	struct td_writer *w = start(f, 60000 * MS);
	struct td_run_summary *runs;
	size_t count;

	for (int i = 0; i < 5; i++)
		td_writer_submit(w, window_runs(2), 2);
	td_writer_free(w);
	runs = runs_in(f, f->store, &count);
	assert_int_equal(count, 10);
	for (size_t i = 0; i < count; i++)
		assert_null(td_labels_get(&runs[i].labels, "agent.store_delay_ms"));
	td_run_summaries_free(runs, count);
}

/* A window without runs drains the spool into the store. */
static void test_empty_window_replays_the_spool(void **state)
{
	struct fixture *f = *state;
	struct td_store_config cfg = { .backend = "sqlite", .path = f->spool };
	struct td_store *spool = td_store_open(&cfg, f->err, ERRLEN);
	struct td_run **spooled = window_runs(1);
	struct td_writer_state st = { 0 };
	struct td_run_summary *runs;
	struct td_writer *w;
	size_t count;

	assert_non_null(spool);
	assert_int_equal(td_store_write_run(spool, spooled[0], f->err, ERRLEN), 0);
	td_store_close(spool);
	td_run_free(spooled[0]);
	free(spooled);
	w = start(f, 60000 * MS);
	td_writer_submit(w, NULL, 0);
	for (int i = 0; i < 100 && !st.sink.replayed; i++) {
		usleep(20 * 1000);
		td_writer_state(w, &st);
	}
	assert_int_equal(st.sink.replayed, 1);
	assert_int_equal(st.sink.spool_depth, 0);
	td_writer_free(w);
	runs = runs_in(f, f->store, &count);
	assert_int_equal(count, 1);
	td_run_summaries_free(runs, count);
}

/* A store the sink cannot flush into: finish says why, the runs wait in the spool. */
static void test_finish_with_the_store_down(void **state)
{
	struct fixture *f = *state;
	char missing[PATH_MAX + 32];
	struct td_run_summary *runs;
	struct td_writer_state st;
	struct td_writer *w;
	size_t count;

	snprintf(missing, sizeof(missing), "%s/later/store.db", f->dir);
	f->cfg.db = missing;
	w = start(f, 60000 * MS);
	td_writer_submit(w, window_runs(2), 2);
	assert_int_equal(td_writer_finish(w, f->err, ERRLEN), -EAGAIN);
	td_writer_state(w, &st);
	assert_int_equal(st.sink.spool_depth, 2);
	assert_false(st.sink.store_reachable);
	assert_int_equal(st.lost, 0);
	td_writer_free(w);
	runs = runs_in(f, f->spool, &count);
	assert_int_equal(count, 2);
	td_run_summaries_free(runs, count);
}

/* Neither the store (missing) nor the spool (held by another process past
 * the busy timeout) takes the run: it is counted lost, with its reason. */
static void test_lost_runs_counted(void **state)
{
	struct fixture *f = *state;
	char missing[PATH_MAX + 32];
	struct td_writer_state st;
	struct td_writer *w;
	sqlite3 *other = NULL;

	snprintf(missing, sizeof(missing), "%s/later/store.db", f->dir);
	f->cfg.db = missing;
	w = start(f, 60000 * MS);
	assert_int_equal(sqlite3_open(f->spool, &other), SQLITE_OK);
	assert_int_equal(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
	td_writer_submit(w, window_runs(1), 1);
	assert_int_equal(td_writer_finish(w, f->err, ERRLEN), 0); /* nothing waits in the spool */
	sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(other);
	td_writer_state(w, &st);
	assert_int_equal(st.lost, 1);
	assert_int_equal(st.queued, 0);
	assert_non_null(strstr(st.last_lost, "of 'app' is lost"));
	assert_non_null(strstr(st.last_lost, f->spool));
	td_writer_free(w);
}

#define WRITER_TEST(test) cmocka_unit_test_setup_teardown(test, writer_setup, writer_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		WRITER_TEST(test_queueing_never_waits_for_a_held_store),
		WRITER_TEST(test_free_writes_what_is_queued),
		WRITER_TEST(test_empty_window_replays_the_spool),
		WRITER_TEST(test_finish_with_the_store_down),
		WRITER_TEST(test_lost_runs_counted),
	};

	return cmocka_run_group_tests_name("agent writer", tests, NULL, NULL);
}
