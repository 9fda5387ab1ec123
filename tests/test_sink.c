// SPDX-License-Identifier: BSD-3-Clause
/*
 * The agent's run sink against real stores: a SQLite file and the test's
 * own PostgreSQL server, which the tests stop and start again (pg_pause,
 * pg_resume) as an outage or a restart would. Runs written while the store
 * is down wait in the spool and reach the store oldest first, each once;
 * bad runs and bad configurations are refused with a message.
 *
 * SQLite is "down" when its directory does not exist yet: the sink opens
 * it once the directory appears.
 */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "backends.h"
#include "sink.h"

struct fixture {
	struct backend *b;
	char dir[64];            /* the spool's (and a late SQLite store's) directory */
	char spool[PATH_MAX];
	char later[PATH_MAX];    /* a SQLite store in a directory that does not exist yet */
	struct td_sink_config cfg;
	char err[ERRLEN];
};

static int sink_setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	void *backend = *state;
	int ret;

	if (!f)
		return -1;
	*state = f;
	ret = backend_setup(&backend);
	f->b = backend;
	strcpy(f->dir, "/tmp/td-sink-XXXXXX");
	if (ret < 0 || !mkdtemp(f->dir))
		return -1;
	snprintf(f->spool, sizeof(f->spool), "%s/spool.db", f->dir);
	snprintf(f->later, sizeof(f->later), "%s/later/data.db", f->dir);
	f->cfg.store.backend = f->b->name;
	f->cfg.store.dsn = is_postgres(f->b) ? f->b->dsn : NULL;
	f->cfg.db = is_postgres(f->b) ? NULL : f->b->path;
	f->cfg.spool_path = f->spool;
	return 0;
}

static int sink_teardown(void **state)
{
	struct fixture *f = *state;
	void *backend = f->b;

	pg_resume(); /* after a test that failed during an outage */
	if (f->dir[0])
		nftw(f->dir, backend_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	if (backend)
		backend_teardown(&backend);
	free(f);
	return 0;
}

#define SINK_TEST(test, backend)                                                    \
	{ .name = #test " [" backend "]", .test_func = test, .setup_func = sink_setup, \
	  .teardown_func = sink_teardown, .initial_state = (void *)backend }
#define SINK_ON_BOTH(test) SINK_TEST(test, "sqlite"), SINK_TEST(test, "postgresql")

static struct fixture *fixture_of(void **state)
{
	struct fixture *f = *state;

	backend_of((void **)&f->b);
	return f;
}

/* ---- the store going away and coming back ---- */

/* Before the sink opens: PostgreSQL stops; SQLite is given a path whose
 * directory does not exist. */
static void go_down(struct fixture *f)
{
	if (is_postgres(f->b) && !pg_pause())
		fail_msg("cannot stop the server: %s", pg_server.why);
	if (!is_postgres(f->b))
		f->cfg.db = f->later;
}

static void come_back(struct fixture *f)
{
	char dir[PATH_MAX];

	if (is_postgres(f->b) && !pg_resume())
		fail_msg("cannot start the server again: %s", pg_server.why);
	if (!is_postgres(f->b)) {
		snprintf(dir, sizeof(dir), "%s/later", f->dir);
		assert_int_equal(mkdir(dir, 0700), 0);
	}
}

/* A new connection to the store the sink writes (the fixture's own does
 * not survive a server restart). */
static struct td_store *open_primary(struct fixture *f)
{
	struct td_store_config cfg = f->b->cfg;
	struct td_store *store;

	if (!is_postgres(f->b))
		cfg.path = f->cfg.db;
	store = td_store_open(&cfg, f->err, ERRLEN);
	if (!store)
		fail_msg("cannot open the store: %s", f->err);
	return store;
}

static struct td_store *open_spool(struct fixture *f)
{
	struct td_store_config cfg = { .backend = "sqlite", .path = f->spool };
	struct td_store *spool = td_store_open(&cfg, f->err, ERRLEN);

	if (!spool)
		fail_msg("cannot open the spool: %s", f->err);
	return spool;
}

/* ---- runs and what became of them ---- */

/*
 * The window of test run n: it starts at n seconds, and its id sorts
 * before those of earlier windows, so an order by id is caught.
 */
static struct td_run *window(unsigned n)
{
	struct td_run *run = new_run("app", (int64_t)n * 1000000000, "test_name=sink");

	snprintf(run->id, sizeof(run->id), "%08x-0000-4000-8000-000000000000", 0xffffu - n);
	add_thread(run, 100 + n, "app", 1000 * n);
	add_node(run, "Backend_Bound", 0.25, true);
	return run;
}

static struct td_sink *open_sink(struct fixture *f)
{
	struct td_sink *sink = td_sink_open(&f->cfg, f->err, ERRLEN);

	if (!sink)
		fail_msg("td_sink_open failed: %s", f->err);
	return sink;
}

/* Writes window n through the sink, expecting 0. */
static void write_window(struct fixture *f, struct td_sink *sink, unsigned n)
{
	struct td_run *run = window(n);

	if (td_sink_write(sink, run, f->err, ERRLEN) != 0)
		fail_msg("td_sink_write failed: %s", f->err);
	td_run_free(run);
}

struct counts {
	uint64_t stored, spooled, replayed, rejected;
	size_t depth;
	bool reachable;
};

static void assert_stats(struct td_sink *sink, struct counts want)
{
	struct td_sink_stats got;

	td_sink_stats(sink, &got);
	assert_int_equal(got.stored, want.stored);
	assert_int_equal(got.spooled, want.spooled);
	assert_int_equal(got.replayed, want.replayed);
	assert_int_equal(got.rejected, want.rejected);
	assert_int_equal(got.spool_depth, want.depth);
	assert_int_equal(got.store_reachable, want.reachable);
	if (!want.reachable && !got.last_error[0])
		fail_msg("the store is down and last_error does not say why");
}

/* Asserts that store holds windows first..last, each once, oldest first. */
static void assert_windows(struct td_store *store, unsigned first, unsigned last, char *err)
{
	struct td_run_filter all = { .oldest_first = true };
	struct td_run_summary *runs = NULL;
	size_t count = 0;

	if (td_store_list_runs(store, &all, &runs, &count, err, ERRLEN) != 0)
		fail_msg("list failed: %s", err);
	assert_int_equal(count, last >= first ? last - first + 1 : 0);
	for (size_t i = 0; i < count; i++) {
		struct td_run *want = window(first + (unsigned)i);

		assert_string_equal(runs[i].id, want->id);
		td_run_free(want);
	}
	td_run_summaries_free(runs, count);
}

static void assert_primary_holds(struct fixture *f, unsigned first, unsigned last)
{
	struct td_store *store = open_primary(f);

	assert_windows(store, first, last, f->err);
	td_store_close(store);
}

static void assert_spool_holds(struct fixture *f, unsigned first, unsigned last)
{
	struct td_store *spool = open_spool(f);

	assert_windows(spool, first, last, f->err);
	td_store_close(spool);
}

#define INVERSIONS_SQL "SELECT count(*) FROM runs a JOIN runs b" \
		       " ON a.started_ns < b.started_ns AND a.pk > b.pk"

/* Runs the store took after a run that started later: the row keys
 * count up in the order rows were inserted. */
static long long insertion_inversions(struct fixture *f)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	long long n = -1;

	if (is_postgres(f->b))
		return pg_int(f->b->dsn, INVERSIONS_SQL);
	if (sqlite3_open_v2(f->cfg.db, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, INVERSIONS_SQL, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

/* Puts windows first..last in the spool, as a sink would have. */
static void spool_windows(struct fixture *f, unsigned first, unsigned last)
{
	struct td_store *spool = open_spool(f);

	for (unsigned n = first; n <= last; n++) {
		struct td_run *run = window(n);

		assert_int_equal(td_store_write_run(spool, run, f->err, ERRLEN), 0);
		td_run_free(run);
	}
	td_store_close(spool);
}

/* ---- the tests ---- */

static void test_reachable_stores_directly(void **state)
{
	struct fixture *f = fixture_of(state);
	struct td_sink *sink = open_sink(f);

	for (unsigned n = 1; n <= 3; n++)
		write_window(f, sink, n);
	assert_stats(sink, (struct counts){ .stored = 3, .reachable = true });
	assert_int_equal(td_sink_flush(sink, f->err, ERRLEN), 0);
	td_sink_close(sink);
	assert_primary_holds(f, 1, 3);
	assert_spool_holds(f, 1, 0);
}

/*
 * The store is down from the start: windows wait in the spool, also across
 * a restart of the agent, and reach the store oldest first when it is back.
 */
static void test_outage_spools_then_replays_in_order(void **state)
{
	struct fixture *f = fixture_of(state);
	struct td_sink *sink;

	go_down(f);
	sink = open_sink(f);
	assert_stats(sink, (struct counts){ .reachable = false });
	write_window(f, sink, 1);
	write_window(f, sink, 2);
	write_window(f, sink, 2); /* written again: it waits once */
	assert_stats(sink, (struct counts){ .spooled = 2, .depth = 2 });
	td_sink_close(sink); /* the agent restarts */
	sink = open_sink(f);
	assert_stats(sink, (struct counts){ .depth = 2 });
	write_window(f, sink, 3);
	write_window(f, sink, 4);
	assert_stats(sink, (struct counts){ .spooled = 2, .depth = 4 });
	assert_int_equal(td_sink_flush(sink, f->err, ERRLEN), -EAGAIN);
	assert_non_null(strstr(f->err, is_postgres(f->b) ? "PostgreSQL" : "later"));
	assert_spool_holds(f, 1, 4);

	come_back(f);
	assert_int_equal(td_sink_flush(sink, f->err, ERRLEN), 0);
	assert_stats(sink, (struct counts){ .spooled = 2, .replayed = 4, .reachable = true });
	write_window(f, sink, 5);
	assert_stats(sink, (struct counts){ .stored = 1, .spooled = 2, .replayed = 4,
					    .reachable = true });
	td_sink_close(sink);
	assert_primary_holds(f, 1, 5);
	assert_int_equal(insertion_inversions(f), 0);
	assert_spool_holds(f, 1, 0);
}

/* A replay cut short after the store took some runs and before they left
 * the spool: the next one stores each run once and empties the spool. */
static void test_crash_mid_replay(void **state)
{
	struct fixture *f = fixture_of(state);
	struct td_sink *sink;

	spool_windows(f, 1, 3);
	for (unsigned n = 1; n <= 2; n++)
		store_run(f->b, window(n), NULL);
	sink = open_sink(f);
	assert_stats(sink, (struct counts){ .depth = 3, .reachable = true });
	assert_int_equal(td_sink_flush(sink, f->err, ERRLEN), 0);
	assert_stats(sink, (struct counts){ .replayed = 3, .reachable = true });
	td_sink_close(sink);
	assert_primary_holds(f, 1, 3);
	assert_spool_holds(f, 1, 0);
}

/* A run that points at threads it does not have. */
static struct td_run *broken_window(void)
{
	struct td_run *run = window(9);

	free(run->threads);
	run->threads = NULL;
	return run;
}

/* A bad run is refused whether the store is up or down, and never spooled. */
static void test_invalid_run_is_refused(void **state)
{
	struct fixture *f = fixture_of(state);
	struct td_run *run = broken_window();
	struct td_sink *sink = open_sink(f);

	assert_int_equal(td_sink_write(sink, run, f->err, ERRLEN), -EINVAL);
	assert_non_null(strstr(f->err, "array is missing"));
	assert_stats(sink, (struct counts){ .reachable = true });
	td_sink_close(sink);

	go_down(f);
	sink = open_sink(f);
	assert_int_equal(td_sink_write(sink, run, f->err, ERRLEN), -EINVAL);
	assert_non_null(strstr(f->err, "array is missing"));
	assert_stats(sink, (struct counts){ .reachable = false });
	assert_int_equal(td_sink_flush(sink, f->err, ERRLEN), 0); /* nothing waits */
	assert_int_equal(td_sink_write(sink, NULL, f->err, ERRLEN), -EINVAL);
	assert_int_equal(td_sink_write(NULL, run, f->err, ERRLEN), -EINVAL);
	assert_int_equal(td_sink_flush(NULL, f->err, ERRLEN), -EINVAL);
	td_sink_close(sink);
	td_run_free(run);
	assert_spool_holds(f, 1, 0);
	come_back(f);
	assert_primary_holds(f, 1, 0);
}

/* PostgreSQL stops under an open sink and starts again: the broken
 * session is closed, the next attempt reconnects, and every window is
 * stored once, in order. */
static void test_pg_restart_mid_session(void **state)
{
	struct fixture *f = fixture_of(state);
	struct td_sink *sink = open_sink(f);
	struct td_sink_stats stats;

	write_window(f, sink, 1);
	go_down(f);
	write_window(f, sink, 2); /* finds the session broken */
	td_sink_stats(sink, &stats);
	assert_false(stats.store_reachable);
	assert_non_null(strstr(stats.last_error, "cannot store the run at postgresql://"));
	write_window(f, sink, 3);
	assert_stats(sink, (struct counts){ .stored = 1, .spooled = 2, .depth = 2 });

	come_back(f);
	assert_int_equal(td_sink_flush(sink, f->err, ERRLEN), 0);
	write_window(f, sink, 4);
	assert_stats(sink, (struct counts){ .stored = 2, .spooled = 2, .replayed = 2,
					    .reachable = true });
	/* A second outage, found by a write after a reconnection. */
	go_down(f);
	write_window(f, sink, 5);
	come_back(f);
	assert_int_equal(td_sink_flush(sink, f->err, ERRLEN), 0);
	td_sink_close(sink);
	assert_primary_holds(f, 1, 5);
	assert_int_equal(insertion_inversions(f), 0);
	assert_spool_holds(f, 1, 0);
}

/* A spooled run PostgreSQL refuses (a thread name that is not UTF-8, which
 * SQLite keeps) leaves the spool, is counted and reported once. */
static void test_pg_refused_spooled_run(void **state)
{
	struct fixture *f = fixture_of(state);
	struct td_run *bad = window(1);
	struct td_sink *sink;

	snprintf(bad->threads[0].comm, sizeof(bad->threads[0].comm), "thr\xc3");
	go_down(f);
	sink = open_sink(f);
	assert_int_equal(td_sink_write(sink, bad, f->err, ERRLEN), 0);
	write_window(f, sink, 2);
	come_back(f);
	assert_int_equal(td_sink_flush(sink, f->err, ERRLEN), -EINVAL);
	assert_non_null(strstr(f->err, bad->id));
	assert_non_null(strstr(f->err, "UTF-8"));
	assert_stats(sink, (struct counts){ .spooled = 2, .replayed = 1, .rejected = 1,
					    .reachable = true });
	assert_int_equal(td_sink_flush(sink, f->err, ERRLEN), 0);
	td_sink_close(sink);
	td_run_free(bad);
	assert_primary_holds(f, 2, 2);
	assert_spool_holds(f, 1, 0);
}

/* While SQLite's directory is missing, writes try it again only after the
 * back-off; a flush tries at once. */
static void test_sqlite_back_off(void **state)
{
	struct fixture *f = fixture_of(state);
	struct td_sink *sink;

	go_down(f);
	sink = open_sink(f); /* its attempt failed just now */
	come_back(f);
	write_window(f, sink, 1);
	assert_int_equal(access(f->later, F_OK), -1); /* not tried */
	assert_stats(sink, (struct counts){ .spooled = 1, .depth = 1 });
	assert_int_equal(td_sink_flush(sink, f->err, ERRLEN), 0);
	assert_stats(sink, (struct counts){ .spooled = 1, .replayed = 1, .reachable = true });
	td_sink_close(sink);
	assert_primary_holds(f, 1, 1);
}

/* An idle agent's replay: nothing before the back-off has passed, the
 * spool after. */
static void test_replay_without_a_write(void **state)
{
	struct fixture *f = fixture_of(state);
	struct td_sink *sink;

	go_down(f);
	sink = open_sink(f);
	write_window(f, sink, 1);
	write_window(f, sink, 2);
	come_back(f);
	assert_int_equal(td_sink_replay(sink, f->err, ERRLEN), -EAGAIN); /* backing off */
	assert_stats(sink, (struct counts){ .spooled = 2, .depth = 2 });
	usleep(1100 * 1000); /* the first back-off is 1 s */
	assert_int_equal(td_sink_replay(sink, f->err, ERRLEN), 0);
	assert_stats(sink, (struct counts){ .spooled = 2, .replayed = 2, .reachable = true });
	assert_int_equal(td_sink_replay(sink, f->err, ERRLEN), 0); /* an empty spool: nothing to do */
	td_sink_close(sink);
	assert_primary_holds(f, 1, 2);
	assert_spool_holds(f, 1, 0);
}

/* After a long outage a write replays a bounded part of the spool and
 * queues its own run behind the rest. */
static void test_write_replays_a_bounded_part(void **state)
{
	enum { SPOOLED = 70, PER_WRITE = 64 }; /* PER_WRITE: as sink.h says */
	struct fixture *f = fixture_of(state);
	struct td_sink *sink;

	spool_windows(f, 1, SPOOLED);
	sink = open_sink(f);
	write_window(f, sink, SPOOLED + 1);
	assert_stats(sink, (struct counts){ .spooled = 1, .replayed = PER_WRITE,
					    .depth = SPOOLED + 1 - PER_WRITE, .reachable = true });
	assert_int_equal(td_sink_flush(sink, f->err, ERRLEN), 0);
	assert_stats(sink, (struct counts){ .spooled = 1, .replayed = SPOOLED + 1,
					    .reachable = true });
	td_sink_close(sink);
	assert_primary_holds(f, 1, SPOOLED + 1);
	assert_int_equal(insertion_inversions(f), 0);
}

/* Another process holding the spool's write lock (for longer than the
 * 5 s busy timeout) makes writing to the spool fail. */
static sqlite3 *lock_spool(struct fixture *f)
{
	sqlite3 *other = NULL;

	assert_int_equal(sqlite3_open(f->spool, &other), SQLITE_OK);
	assert_int_equal(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
	return other;
}

static void unlock_spool(sqlite3 *other)
{
	sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(other);
}

/* A run neither the store nor the spool takes: the write says so. */
static void test_spool_busy(void **state)
{
	struct fixture *f = fixture_of(state);
	struct td_run *run = window(1);
	struct td_sink *sink;
	sqlite3 *other;

	go_down(f);
	sink = open_sink(f);
	other = lock_spool(f);
	assert_int_equal(td_sink_write(sink, run, f->err, ERRLEN), -EBUSY);
	assert_non_null(strstr(f->err, f->spool));
	assert_stats(sink, (struct counts){ .reachable = false });
	unlock_spool(other);
	assert_int_equal(td_sink_write(sink, run, f->err, ERRLEN), 0);
	td_sink_close(sink);
	td_run_free(run);
	assert_spool_holds(f, 1, 1);
}

/* The store took a run but the spool could not let it go: the next
 * replay finds it stored and stores nothing twice. */
static void test_spool_busy_during_replay(void **state)
{
	struct fixture *f = fixture_of(state);
	struct td_sink *sink;
	sqlite3 *other;

	go_down(f);
	sink = open_sink(f);
	write_window(f, sink, 1);
	write_window(f, sink, 2);
	come_back(f);
	other = lock_spool(f);
	assert_int_equal(td_sink_flush(sink, f->err, ERRLEN), -EBUSY);
	assert_non_null(strstr(f->err, f->spool));
	unlock_spool(other);
	assert_primary_holds(f, 1, 1);
	assert_spool_holds(f, 1, 2);
	assert_int_equal(td_sink_flush(sink, f->err, ERRLEN), 0);
	assert_stats(sink, (struct counts){ .spooled = 2, .replayed = 2, .reachable = true });
	td_sink_close(sink);
	assert_primary_holds(f, 1, 2);
	assert_spool_holds(f, 1, 0);
}

/* ---- the SQLite store's file deleted or replaced under the sink ---- */

/* A store of the sink's own in the fixture's directory (no other connection
 * holds it, as none holds an agent's database in production). */
static void own_store(struct fixture *f, char *path, size_t len)
{
	snprintf(path, len, "%s/store.db", f->dir);
	f->cfg.db = path;
}

static void assert_file_changes(struct td_sink *sink, uint64_t want, const char *words)
{
	struct td_sink_stats stats;

	td_sink_stats(sink, &stats);
	assert_int_equal(stats.store_file_changes, want);
	if (!strstr(stats.store_file_note, words))
		fail_msg("'%s' not in the note: '%s'", words, stats.store_file_note);
}

/*
 * rm of the database: the next write notices, creates the file anew and
 * writes there. The deleted file's WAL is not replayed into the new file,
 * which holds window 2 alone.
 */
static void test_store_file_deleted(void **state)
{
	struct fixture *f = fixture_of(state);
	char path[PATH_MAX];
	struct td_sink *sink;

	own_store(f, path, sizeof(path));
	sink = open_sink(f);
	write_window(f, sink, 1);
	assert_int_equal(unlink(path), 0);
	write_window(f, sink, 2);
	assert_file_changes(sink, 1, "was deleted");
	assert_stats(sink, (struct counts){ .stored = 2, .reachable = true });
	write_window(f, sink, 3);
	assert_file_changes(sink, 1, path); /* once */
	td_sink_close(sink);
	assert_primary_holds(f, 2, 3);
}

/* Runs waiting in the spool when the file goes reach the new file, in order. */
static void test_store_file_deleted_spool_kept(void **state)
{
	struct fixture *f = fixture_of(state);
	char path[PATH_MAX];
	struct td_sink *sink;

	own_store(f, path, sizeof(path));
	spool_windows(f, 1, 2);
	sink = open_sink(f); /* creates the file; the spool waits for a write */
	assert_int_equal(unlink(path), 0);
	write_window(f, sink, 3);
	assert_file_changes(sink, 1, "was deleted");
	assert_stats(sink, (struct counts){ .stored = 1, .replayed = 2, .reachable = true });
	td_sink_close(sink);
	assert_primary_holds(f, 1, 3);
	assert_spool_holds(f, 1, 0);
}

/* An idle sink (a window without runs) still creates a deleted file anew. */
static void test_store_file_deleted_while_idle(void **state)
{
	struct fixture *f = fixture_of(state);
	char path[PATH_MAX];
	struct td_sink *sink;

	own_store(f, path, sizeof(path));
	sink = open_sink(f);
	write_window(f, sink, 1);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(td_sink_replay(sink, f->err, ERRLEN), 0);
	assert_int_equal(access(path, F_OK), 0);
	assert_file_changes(sink, 1, "was deleted");
	td_sink_close(sink);
	assert_primary_holds(f, 1, 0);
}

/*
 * Another database renamed over the sink's: the sink writes into it from
 * then on, and it keeps what it held; the replaced file (still linked
 * elsewhere) keeps window 1.
 */
static void test_store_file_replaced(void **state)
{
	struct fixture *f = fixture_of(state);
	char path[PATH_MAX], other_path[PATH_MAX], kept[PATH_MAX];
	struct td_store_config other_cfg = { .backend = "sqlite" };
	struct td_run *seven = window(7);
	struct td_store *other;
	struct td_sink *sink;

	own_store(f, path, sizeof(path));
	snprintf(other_path, sizeof(other_path), "%s/other.db", f->dir);
	snprintf(kept, sizeof(kept), "%s/kept.db", f->dir);
	other_cfg.path = other_path;
	other = td_store_open(&other_cfg, f->err, ERRLEN);
	assert_non_null(other);
	assert_int_equal(td_store_write_run(other, seven, f->err, ERRLEN), 0);
	td_store_close(other);
	td_run_free(seven);

	sink = open_sink(f);
	write_window(f, sink, 1);
	assert_int_equal(link(path, kept), 0);
	assert_int_equal(rename(other_path, path), 0);
	write_window(f, sink, 2);
	assert_file_changes(sink, 1, "was replaced by another file");
	td_sink_close(sink);

	other = open_primary(f);
	{
		struct td_run_filter all = { .oldest_first = true };
		struct td_run_summary *runs = NULL;
		size_t count = 0;
		struct td_run *two = window(2);

		assert_int_equal(td_store_list_runs(other, &all, &runs, &count, f->err, ERRLEN), 0);
		assert_int_equal(count, 2);
		assert_string_equal(runs[0].id, two->id);
		seven = window(7);
		assert_string_equal(runs[1].id, seven->id);
		td_run_free(seven);
		td_run_free(two);
		td_run_summaries_free(runs, count);
	}
	td_store_close(other);
	f->cfg.db = kept;
	assert_primary_holds(f, 1, 1);
}

static void assert_open_fails(struct fixture *f, const char *words)
{
	assert_null(td_sink_open(&f->cfg, f->err, ERRLEN));
	if (!strstr(f->err, words))
		fail_msg("'%s' not in: %s", words, f->err);
}

static void test_bad_configuration(void **state)
{
	struct fixture *f = fixture_of(state);
	struct td_sink_config good = f->cfg;

	f->cfg.store.backend = "mongo";
	f->cfg.db = NULL;
	assert_open_fails(f, "unknown storage backend 'mongo'");
	f->cfg = good;
	f->cfg.store.backend = "postgresql";
	assert_open_fails(f, "--db names a SQLite file");
	f->cfg = good;
	f->cfg.store.dsn = "host=x";
	assert_open_fails(f, "--dsn names a PostgreSQL server");
	f->cfg = (struct td_sink_config){ .store = { .backend = "postgresql",
						     .dsn = "host=x password" },
					  .spool_path = f->spool };
	assert_open_fails(f, "malformed");
	f->cfg = good;
	f->cfg.db = f->spool;
	assert_open_fails(f, "is the database itself");
	f->cfg = good;
	f->cfg.spool_path = NULL;
	assert_open_fails(f, "spool path");
	assert_null(td_sink_open(NULL, f->err, ERRLEN));
	f->cfg = good;
	td_sink_close(open_sink(f));
}

static void test_unusable_spool(void **state)
{
	struct fixture *f = fixture_of(state);
	char path[PATH_MAX + 16];
	FILE *text;

	snprintf(path, sizeof(path), "%s/missing/spool.db", f->dir);
	f->cfg.spool_path = path;
	assert_open_fails(f, "No such file or directory");
	assert_non_null(strstr(f->err, path));
	f->cfg.spool_path = f->dir;
	assert_open_fails(f, "Is a directory");
	snprintf(path, sizeof(path), "%s/notes.txt", f->dir);
	text = fopen(path, "w");
	assert_non_null(text);
	fputs("not a database, but long enough for SQLite to read a header from it\n", text);
	fclose(text);
	f->cfg.spool_path = path;
	assert_open_fails(f, "cannot use the spool");
}

static void assert_mode(const char *path, mode_t mode)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, mode);
}

/* The spool holds what the agent saw: only its owner reads it. */
static void test_spool_is_private(void **state)
{
	struct fixture *f = fixture_of(state);
	mode_t old = umask(0);
	char wal[PATH_MAX + 8];
	struct td_sink *sink = td_sink_open(&f->cfg, f->err, ERRLEN);

	umask(old);
	assert_non_null(sink);
	assert_mode(f->spool, 0600);
	snprintf(wal, sizeof(wal), "%s-wal", f->spool);
	assert_mode(wal, 0600);
	td_sink_close(sink);

	assert_int_equal(chmod(f->spool, 0644), 0);
	sink = open_sink(f);
	assert_mode(f->spool, 0600);
	td_sink_close(sink);
}

/* A spool belongs to one store: beside a SQLite file, else the host's. */
static void test_default_spool_path(void **state)
{
	struct td_sink_config sqlite_at = { .db = "/var/lib/topdown/runs.db" };
	struct td_sink_config postgres = { .store = { .backend = "postgresql", .dsn = "host=db" } };
	struct td_sink_config neither = { .store = { .backend = "mysql" } };
	char path[4096], err[512] = "", home[] = "/tmp/td-sink-home-XXXXXX";

	(void)state;
	unsetenv("TOPDOWN_DB_PATH");
	unsetenv("TOPDOWN_BACKEND");
	unsetenv("TOPDOWN_DSN");
	assert_int_equal(td_sink_default_spool_path(&sqlite_at, path, sizeof(path), err, sizeof(err)), 0);
	assert_string_equal(path, "/var/lib/topdown/runs.db.spool");
	/* two databases never share one: each run goes back where it was meant to go */
	sqlite_at.db = "/tmp/other.db";
	assert_int_equal(td_sink_default_spool_path(&sqlite_at, path, sizeof(path), err, sizeof(err)), 0);
	assert_string_equal(path, "/tmp/other.db.spool");
	setenv("STATE_DIRECTORY", "/var/lib/topdown:/var/lib/other", 1);
	assert_int_equal(td_sink_default_spool_path(&postgres, path, sizeof(path), err, sizeof(err)), 0);
	assert_string_equal(path, "/var/lib/topdown/spool.db");
	unsetenv("STATE_DIRECTORY");
	assert_non_null(mkdtemp(home));
	setenv("HOME", home, 1);
	assert_int_equal(td_sink_default_spool_path(&postgres, path, sizeof(path), err, sizeof(err)), 0);
	assert_true(strncmp(path, home, strlen(home)) == 0 && !strcmp(path + strlen(home), "/.topdown/spool.db"));
	assert_int_equal(td_sink_default_spool_path(&neither, path, sizeof(path), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "mysql"));
	rmdir(strcat(strcpy(path, home), "/.topdown"));
	rmdir(home);
}

static void test_stats_of_no_sink(void **state)
{
	struct td_sink_stats stats;

	(void)state;
	memset(&stats, 0xff, sizeof(stats));
	td_sink_stats(NULL, &stats);
	assert_int_equal(stats.stored + stats.spooled + stats.spool_depth, 0);
	assert_false(stats.store_reachable);
	td_sink_close(NULL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		SINK_ON_BOTH(test_reachable_stores_directly),
		SINK_ON_BOTH(test_outage_spools_then_replays_in_order),
		SINK_ON_BOTH(test_crash_mid_replay),
		SINK_ON_BOTH(test_invalid_run_is_refused),
		SINK_TEST(test_pg_restart_mid_session, "postgresql"),
		SINK_TEST(test_pg_refused_spooled_run, "postgresql"),
		SINK_TEST(test_sqlite_back_off, "sqlite"),
		SINK_TEST(test_replay_without_a_write, "sqlite"),
		SINK_TEST(test_write_replays_a_bounded_part, "sqlite"),
		SINK_TEST(test_spool_busy, "sqlite"),
		SINK_TEST(test_spool_busy_during_replay, "sqlite"),
		SINK_TEST(test_bad_configuration, "sqlite"),
		SINK_TEST(test_unusable_spool, "sqlite"),
		SINK_TEST(test_spool_is_private, "sqlite"),
		SINK_TEST(test_store_file_deleted, "sqlite"),
		SINK_TEST(test_store_file_deleted_spool_kept, "sqlite"),
		SINK_TEST(test_store_file_deleted_while_idle, "sqlite"),
		SINK_TEST(test_store_file_replaced, "sqlite"),
		cmocka_unit_test(test_stats_of_no_sink),
		cmocka_unit_test(test_default_spool_path),
	};

	(void)argc;
	return run_on_backends("run sink", tests, sizeof(tests) / sizeof(tests[0]), argv[0]);
}
