/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Runs a cmocka test once per storage backend: against a new SQLite file
 * in a temporary directory, and against a new database on the binary's
 * private PostgreSQL server (tests/pg.h). ON_BOTH(test) makes the two
 * table entries; run_on_backends() starts and stops the server around the
 * group. Where PostgreSQL is not installed its half is skipped, visibly.
 *
 * Also: small builders for runs with Top-Down rows.
 */
#ifndef TOPDOWN_TESTS_BACKENDS_H
#define TOPDOWN_TESTS_BACKENDS_H

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
#include <cmocka.h>

#include "pg.h"
#include "run.h"
#include "storage.h"

#define ERRLEN 1024

struct backend {
	const char *name;        /* "sqlite" or "postgresql" */
	char dir[64];            /* SQLite: the temporary directory */
	char path[PATH_MAX];     /* SQLite: the file */
	char dsn[1024];          /* PostgreSQL: the test's database */
	struct td_store_config cfg;
	struct td_store *store;  /* NULL: PostgreSQL unavailable */
	char err[ERRLEN];
};

static inline bool is_postgres(const struct backend *b)
{
	return strcmp(b->name, "postgresql") == 0;
}

static inline int backend_setup(void **state)
{
	struct backend *b = calloc(1, sizeof(*b));

	if (!b)
		return -1;
	b->name = *state;
	b->cfg.backend = b->name;
	*state = b;
	if (!is_postgres(b)) {
		strcpy(b->dir, "/tmp/td-backend-XXXXXX");
		if (!mkdtemp(b->dir))
			return -1;
		snprintf(b->path, sizeof(b->path), "%s/data.db", b->dir);
		b->cfg.path = b->path;
	} else if (!pg_server.ready) {
		return 0; /* each test skips or fails, saying why */
	} else if (!pg_new_database(b->dsn, sizeof(b->dsn), b->err, ERRLEN)) {
		print_error("cannot create a test database: %s\n", b->err);
		return -1;
	} else {
		b->cfg.dsn = b->dsn;
	}
	b->store = td_store_open(&b->cfg, b->err, ERRLEN);
	if (!b->store)
		print_error("cannot open the %s store: %s\n", b->name, b->err);
	return b->store ? 0 : -1;
}

static inline int backend_remove_entry(const char *path, const struct stat *st, int flag,
				       struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static inline int backend_teardown(void **state)
{
	struct backend *b = *state;

	td_store_close(b->store);
	if (b->dir[0])
		nftw(b->dir, backend_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(b);
	return 0;
}

/* The fixture of a test; skips (no PostgreSQL here) or fails (it would
 * not start) when the PostgreSQL half cannot run. */
static inline struct backend *backend_of(void **state)
{
	struct backend *b = *state;

	if (!b->store && strncmp(pg_server.why, "skip ", 5) == 0) {
		print_message("SKIP: %s\n", pg_server.why + 5);
		skip();
	}
	if (!b->store)
		fail_msg("the PostgreSQL server did not start: %s", pg_server.why);
	return b;
}

/* Another connection to the same store (closed by the caller). */
static inline struct td_store *backend_open(struct backend *b)
{
	struct td_store *store = td_store_open(&b->cfg, b->err, ERRLEN);

	if (!store)
		fail_msg("reopen failed: %s", b->err);
	return store;
}

#define BACKEND_TEST(test, backend)                                                     \
	{ .name = #test " [" backend "]", .test_func = test, .setup_func = backend_setup, \
	  .teardown_func = backend_teardown, .initial_state = (void *)backend }
#define ON_BOTH(test) BACKEND_TEST(test, "sqlite"), BACKEND_TEST(test, "postgresql")

/* Runs the group with the private server up; argv0 locates the build tree. */
static inline int run_on_backends(const char *group, const struct CMUnitTest *tests, size_t n,
				  const char *argv0)
{
	int failed;

	pg_start(argv0);
	failed = _cmocka_run_group_tests(group, tests, n, NULL, NULL);
	pg_stop();
	return failed;
}

/* ---- runs to store ---- */

/* A run of process started at started_ns with labels "k=v,k2=v2" (NULL: none). */
static inline struct td_run *new_run(const char *process, int64_t started_ns, const char *labels)
{
	struct td_run *run = td_run_new();
	char *copy = labels ? strdup(labels) : NULL, *save = NULL;

	assert_non_null(run);
	run->started_ns = started_ns;
	run->ended_ns = started_ns + 1000000000;
	run->process = process ? strdup(process) : NULL;
	run->collector = strdup("import");
	run->level = 2;
	for (char *pair = copy ? strtok_r(copy, ",", &save) : NULL; pair;
	     pair = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(pair, '=');

		assert_non_null(eq);
		*eq = '\0';
		assert_int_equal(td_labels_set(&run->labels, pair, eq + 1), 0);
	}
	free(copy);
	return run;
}

/* A whole-run tree row; parent and level follow from the dotted path. */
static inline void add_row(struct td_run *run, enum td_metric_scope scope, const char *key,
			   const char *path, double value, bool crossed, double confidence)
{
	char parent[256];
	const char *dot = strrchr(path, '.');
	struct td_metric_row row = {
		.scope = scope, .scope_key = (char *)key, .interval_seq = -1, .path = (char *)path,
		.parent = dot ? parent : NULL, .value = value, .threshold_crossed = crossed,
		.confidence = confidence, .level = 1,
	};

	for (const char *p = path; *p; p++)
		row.level += *p == '.';
	if (dot)
		snprintf(parent, sizeof(parent), "%.*s", (int)(dot - path), path);
	assert_int_equal(td_run_add_metric(run, &row), 0);
}

/* The same for the process scope of pid 100, fully confident. */
static inline void add_node(struct td_run *run, const char *path, double value, bool crossed)
{
	add_row(run, TD_SCOPE_PROCESS, "100", path, value, crossed, 1.0);
}

/* Stores n runs of app with 40 tree rows each: enough that reading all
 * their rows takes thousands of SQLite steps and several milliseconds. */
static inline void store_many_runs(struct backend *b, size_t n)
{
	char path[64];

	for (size_t i = 0; i < n; i++) {
		struct td_run *run = new_run("app", (int64_t)(i + 1) * 1000000000, "branch=main");

		for (int r = 0; r < 40; r++) {
			snprintf(path, sizeof(path), "Backend_Bound.Node_%02d", r);
			add_node(run, path, 0.01 * r, r == 7);
		}
		assert_int_equal(td_store_write_run(b->store, run, b->err, ERRLEN), 0);
		td_run_free(run);
	}
}

static inline void add_thread(struct td_run *run, uint32_t tid, const char *comm,
			      uint64_t oncpu_ns)
{
	struct td_thread_row *grown = realloc(run->threads, (run->nr_threads + 1) * sizeof(*grown));

	assert_non_null(grown);
	run->threads = grown;
	grown[run->nr_threads] = (struct td_thread_row){ .tid = tid, .pid = 100,
							 .oncpu_ns = oncpu_ns };
	snprintf(grown[run->nr_threads].comm, TD_COMM_LEN, "%s", comm);
	run->nr_threads++;
}

/* Writes run and frees it; its id into id when id is not NULL. */
static inline void store_run(struct backend *b, struct td_run *run, char *id)
{
	if (td_store_write_run(b->store, run, b->err, ERRLEN) != 0)
		fail_msg("write failed: %s", b->err);
	if (id)
		memcpy(id, run->id, TD_RUN_ID_LEN);
	td_run_free(run);
}

/*
 * Two windows (runs labeled test=pool, of hosts host-0 and host-1) with
 * room for two events each: the first counted CPU_CYCLES with
 * STALL_FRONTEND, the second CPU_CYCLES with STALL_BACKEND, 1 s on-CPU
 * each. Pooled: Frontend_Stalled_Cycles
 * 3e8 / 1e9 = 30.0% and Backend_Stalled_Cycles 4e8 / 1e9 = 40.0%, each
 * counted 1 s of the 2 s, so half confident: not marked low.
 */
static inline void store_two_counter_windows(struct backend *b, const char *model)
{
	static const char *const events[] = { "CPU_CYCLES", "STALL_FRONTEND", "STALL_BACKEND" };

	for (int w = 0; w < 2; w++) {
		char labels[128];
		struct td_run *run;

		snprintf(labels, sizeof(labels), "test=pool,tma_model=%s,tma_level=1,node=host-%d", model, w);
		run = new_run("app", 5000 + w, labels);
		for (int e = 0; e < 3; e++)
			run->event_names[run->nr_events++] = strdup(events[e]);
		add_thread(run, 7, "worker", 1000000000);
		run->threads[0].counters[0] = (struct td_counter_value){ 1e9, 1 };
		run->threads[0].counters[1] = w ? (struct td_counter_value){ NAN, 0 } : (struct td_counter_value){ 3e8, 1 };
		run->threads[0].counters[2] = w ? (struct td_counter_value){ 4e8, 1 } : (struct td_counter_value){ NAN, 0 };
		store_run(b, run, NULL);
	}
}

#endif
