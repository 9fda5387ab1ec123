// SPDX-License-Identifier: BSD-3-Clause
/*
 * The PostgreSQL backend, for fleets: many agents write to one server and
 * anyone queries it. The tables mirror the SQLite backend's, with two
 * differences:
 *
 * - Labels are a JSONB column with a GIN index, so a label filter is one
 *   containment test (labels @> '{"k":"v"}'). JSONB reorders keys, so the
 *   same object is also kept as text in the run's order, for reading.
 * - Child rows have no foreign keys: PostgreSQL checks a foreign key with
 *   a query per inserted row, which made storing a large run several
 *   times slower. Rows only reach the tables through write_run, in the
 *   transaction that creates their run, and deleting runs deletes their
 *   rows in the same statement.
 *
 * A run is one transaction: the runs row, then every other table by COPY.
 * Migrations run under an advisory lock, so agents starting together on
 * a new database apply each one once.
 *
 * Needs PostgreSQL 12 or later (covering indexes, NOT MATERIALIZED).
 *
 * Every value reaches SQL as a parameter; COPY data is escaped for the
 * text format. NaN is stored as NULL, as in SQLite, and unsigned 64-bit
 * figures as their signed bit pattern.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#include "backend.h"
#include "storage.h"

#define WHOLE_RUN_SEQ -1
#define CONNECT_TIMEOUT_S "10"
#define MIGRATION_LOCK 0x746f70646f776eLL /* "topdown": the advisory lock key */
#define COPY_CHUNK (64 * 1024)            /* bytes of COPY data sent at a time */
#define MAX_PARAMS 24
#define MAX_SQL 4096 /* statements are built from fixed fragments only */

struct pg_store {
	struct td_store base;
	PGconn *conn;
	char location[512];
	long long timeout_ms; /* the statement_timeout we set; 0: the server's own */
};

static struct pg_store *to_pg(struct td_store *store)
{
	return (struct pg_store *)store;
}

/*
 * The schema, one migration per entry, applied in order; an entry is
 * never edited once released, changes go in a new entry. Columns mean
 * what they mean in the SQLite backend (storage/sqlite.c).
 */
static const char *const migrations[] = {
	/* 1: the first schema. */
	"CREATE TABLE runs ("
	"  pk bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
	"  id text COLLATE \"C\" NOT NULL UNIQUE," /* byte order: prefix ranges */
	"  started_ns bigint NOT NULL,"
	"  ended_ns bigint NOT NULL,"
	"  duration_ns bigint NOT NULL,"
	"  process text,"
	"  level integer NOT NULL,"
	"  collector text,"
	"  labels jsonb NOT NULL,"       /* for filters */
	"  labels_text text NOT NULL,"   /* the same, in the run's label order */
	"  dropped bigint NOT NULL,"
	"  partial boolean NOT NULL,"
	"  event_names text NOT NULL,"   /* JSON array; counters.event indexes it */
	"  nr_threads integer NOT NULL"
	");"
	"CREATE INDEX runs_by_start ON runs (started_ns);"
	"CREATE INDEX runs_by_process ON runs (process, started_ns);"
	"CREATE INDEX runs_by_labels ON runs USING gin (labels jsonb_path_ops);"
	"CREATE TABLE intervals ("
	"  run_pk bigint NOT NULL,"
	"  seq integer NOT NULL,"
	"  start_ns bigint NOT NULL,"
	"  end_ns bigint NOT NULL,"
	"  nr_threads integer NOT NULL,"
	"  PRIMARY KEY (run_pk, seq)"
	");"
	"CREATE TABLE threads ("
	"  run_pk bigint NOT NULL,"
	"  interval_seq integer NOT NULL,"
	"  tid bigint NOT NULL,"
	"  ordinal integer NOT NULL,"
	"  pid bigint NOT NULL,"
	"  comm text NOT NULL,"
	"  exited boolean NOT NULL,"
	"  oncpu_ns bigint NOT NULL,"
	"  voluntary_switches bigint NOT NULL,"
	"  involuntary_switches bigint NOT NULL,"
	"  migrations bigint NOT NULL,"
	"  runq_wait_ns bigint NOT NULL,"
	"  PRIMARY KEY (run_pk, interval_seq, tid)"
	");"
	"CREATE TABLE counters ("
	"  run_pk bigint NOT NULL,"
	"  interval_seq integer NOT NULL,"
	"  tid bigint NOT NULL,"
	"  event smallint NOT NULL,"
	"  value double precision,"
	"  running_fraction double precision,"
	"  PRIMARY KEY (run_pk, interval_seq, tid, event)"
	");"
	"CREATE TABLE metrics ("
	"  run_pk bigint NOT NULL,"
	"  ordinal integer NOT NULL,"
	"  scope text NOT NULL CHECK (scope IN ('thread', 'group', 'process')),"
	"  scope_key text NOT NULL,"
	"  interval_seq integer NOT NULL,"
	"  path text NOT NULL,"
	"  parent text,"
	"  level integer NOT NULL,"
	"  value double precision,"
	"  threshold_crossed boolean NOT NULL,"
	"  confidence double precision,"
	"  PRIMARY KEY (run_pk, ordinal)"
	");"
	/* Whole-run rows of processes and thread names: what queries over many
	 * runs read (see the same index in storage/sqlite.c). */
	"CREATE INDEX metrics_by_scope ON metrics (scope, run_pk)"
	"  WHERE interval_seq = -1 AND scope <> 'thread';",
	/* 2: locate's profile (storage/sqlite.c, migration 3, says what each column holds). */
	"CREATE TABLE profiles ("
	"  run_pk bigint PRIMARY KEY,"
	"  event text NOT NULL,"
	"  unit text NOT NULL,"
	"  period bigint NOT NULL,"
	"  frequency_hz bigint NOT NULL,"
	"  samples bigint NOT NULL,"
	"  lost_samples bigint NOT NULL"
	");"
	"CREATE TABLE profile_frames ("
	"  run_pk bigint NOT NULL,"
	"  idx integer NOT NULL,"
	"  function text,"
	"  module text,"
	"  module_offset bigint NOT NULL,"
	"  file text,"
	"  line integer NOT NULL,"
	"  kernel boolean NOT NULL,"
	"  PRIMARY KEY (run_pk, idx)"
	");"
	"CREATE TABLE profile_stacks ("
	"  run_pk bigint NOT NULL,"
	"  ordinal integer NOT NULL,"
	"  tid bigint NOT NULL,"
	"  pid bigint NOT NULL,"
	"  comm text NOT NULL,"
	"  count bigint NOT NULL,"
	"  truncated boolean NOT NULL,"
	"  frames text NOT NULL,"
	"  PRIMARY KEY (run_pk, ordinal)"
	");",
	/*
	 * 3: bottlenecks over many runs from indexes alone (an index-only
	 * scan reads no table page): which samples a run has, from the
	 * whole-run rows' scope key and level, which also serves every
	 * reader metrics_by_scope served; and the few crossing rows with
	 * what pg_sum_deepest_crossings() adds up of them.
	 */
	"CREATE INDEX metrics_samples ON metrics (scope, run_pk, scope_key, level)"
	"  WHERE interval_seq = -1 AND scope <> 'thread';"
	"CREATE INDEX metrics_crossing ON metrics (scope, run_pk)"
	"  INCLUDE (scope_key, ordinal, path, level, value, confidence)"
	"  WHERE interval_seq = -1 AND scope <> 'thread' AND threshold_crossed;"
	"DROP INDEX metrics_by_scope;",
	/* 4: each row's counted time (storage/sqlite.c, migration 4). */
	"ALTER TABLE metrics ADD COLUMN counted_ns bigint;",
};

#define NR_MIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))

/* ---- errors ---- */

/* What a failure means for the caller and how to get past it, by SQLSTATE
 * (five characters) or class (its first two). */
static const struct {
	const char *state;
	int errnum;
	const char *fix;
} failures[] = {
	{ "22021", EINVAL, "the run holds text that is not UTF-8; give names as UTF-8" },
	{ "23", EINVAL, "the run holds duplicate or inconsistent rows, a bug in the code that "
			"built it" },
	{ "08", ECONNRESET, "the connection to the server was lost; check the server and retry" },
	{ "40", EBUSY, "the server gave up on a conflicting transaction; retry" },
	{ "42501", EACCES, "grant the database user the rights to create and write tables, or "
			   "connect as another user" },
	{ "53", ENOSPC, "the server ran out of disk or memory; free some and retry" },
	{ "57", EIO, "the server cancelled the statement or is shutting down; retry later" },
};

/*
 * Fills err with "<what> at <location>: <server message>; <fix>" for the
 * failed result res (NULL: the connection's own error) and returns the
 * matching negative errno.
 */
static int fail(struct pg_store *s, const PGresult *res, const char *what,
		char *err, size_t errlen)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *reason = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	const char *fix = "check the server's log and retry";
	int errnum = EIO;

	if (!reason)
		reason = PQerrorMessage(s->conn);
	if (state && !strcmp(state, "57014") && s->base.deadline_ns) {
		/* cancelled by the statement_timeout bound_statement() set */
		s->base.timed_out = true;
		fix = TD_STORE_DEADLINE_FIX;
		errnum = ETIMEDOUT;
		state = NULL;
	}
	for (size_t i = 0; state && i < sizeof(failures) / sizeof(failures[0]); i++) {
		if (strncmp(state, failures[i].state, strlen(failures[i].state)) == 0) {
			fix = failures[i].fix;
			errnum = failures[i].errnum;
			break;
		}
	}
	/* A reader needs no rights to write: never tell it to get some. */
	if (s->base.mode == TD_STORE_READ_ONLY && errnum == EACCES)
		fix = "grant the database user SELECT on topdown's tables, or connect as another user";
	/* libpq ends its own messages with a newline; keep one line. */
	snprintf(err, errlen, "%s at %s: %.*s; %s", what, s->location,
		 (int)strcspn(reason, "\n"), reason, fix);
	return -errnum;
}

static int out_of_memory(struct pg_store *s, char *err, size_t errlen)
{
	snprintf(err, errlen, "out of memory reading from %s; free memory and retry",
		 s->location);
	return -ENOMEM;
}

static int malformed(struct pg_store *s, int errnum, char *err, size_t errlen)
{
	if (errnum == -ENOMEM)
		return out_of_memory(s, err, errlen);
	snprintf(err, errlen, "%s holds a malformed run; restore the database from a backup "
		 "or pass --dsn with another database", s->location);
	return errnum;
}

/* ---- statements ---- */

/* A statement built from fixed fragments, with its parameters as text. */
struct query {
	char sql[MAX_SQL];
	size_t len;
	int nr_params;
	const char *values[MAX_PARAMS];
	char numbers[MAX_PARAMS][32];
	bool overflow; /* a bug: the fragments did not fit */
};

static void query_init(struct query *q, const char *head)
{
	q->len = 0;
	q->nr_params = 0;
	q->overflow = false;
	q->sql[0] = '\0';
	if (head) {
		size_t n = strlen(head);

		q->overflow = n >= MAX_SQL;
		if (!q->overflow) {
			memcpy(q->sql, head, n + 1);
			q->len = n;
		}
	}
}

static void query_text(struct query *q, const char *fragment)
{
	size_t n = strlen(fragment);

	if (q->len + n >= MAX_SQL) {
		q->overflow = true;
		return;
	}
	memcpy(q->sql + q->len, fragment, n + 1);
	q->len += n;
}

/* Appends fragment, which ends with '$', and the number of the parameter
 * whose value (NULL: SQL NULL) it takes. */
static void query_param(struct query *q, const char *fragment, const char *value)
{
	char number[16];

	if (q->nr_params == MAX_PARAMS) {
		q->overflow = true;
		return;
	}
	q->values[q->nr_params++] = value;
	snprintf(number, sizeof(number), "%d", q->nr_params);
	query_text(q, fragment);
	query_text(q, number);
}

static void query_int(struct query *q, const char *fragment, long long value)
{
	snprintf(q->numbers[q->nr_params % MAX_PARAMS], sizeof(q->numbers[0]), "%lld", value);
	query_param(q, fragment, q->numbers[q->nr_params % MAX_PARAMS]);
}

/* Exact: %.17g round-trips every double. NaN becomes NULL. */
static void query_real(struct query *q, const char *fragment, double value)
{
	snprintf(q->numbers[q->nr_params % MAX_PARAMS], sizeof(q->numbers[0]), "%.17g", value);
	query_param(q, fragment, isnan(value) ? NULL : q->numbers[q->nr_params % MAX_PARAMS]);
}

/*
 * Bounds the next statement by the store's deadline (td_store_set_deadline):
 * the server cancels it when it runs past. A round trip per statement
 * while a deadline is set, and one more once it is lifted.
 */
static int bound_statement(struct pg_store *s, const char *what, char *err, size_t errlen)
{
	int64_t left = td_store_time_left_ns(&s->base);
	long long ms = left == INT64_MAX ? 0 : (left + 999999) / 1000000;
	char sql[64];
	PGresult *res;
	int ret = 0;

	if (left == 0) {
		snprintf(err, errlen, "%s at %s: the deadline had passed; %s", what, s->location,
			 TD_STORE_DEADLINE_FIX);
		return -ETIMEDOUT;
	}
	if (!ms && !s->timeout_ms)
		return 0;
	if (ms)
		snprintf(sql, sizeof(sql), "SET statement_timeout = %lld", ms);
	else
		snprintf(sql, sizeof(sql), "RESET statement_timeout");
	res = PQexec(s->conn, sql);
	if (PQresultStatus(res) == PGRES_COMMAND_OK)
		s->timeout_ms = ms;
	else
		ret = fail(s, res, what, err, errlen);
	PQclear(res);
	return ret;
}

/*
 * Runs q and returns its result in *res when it has the status want
 * (PGRES_TUPLES_OK or PGRES_COMMAND_OK); otherwise fills err.
 */
static int query_exec(struct pg_store *s, const struct query *q, ExecStatusType want,
		      PGresult **res, const char *what, char *err, size_t errlen)
{
	int ret = 0;

	*res = NULL;
	if (q->overflow) {
		snprintf(err, errlen, "a statement for %s grew past %d bytes; this is a bug in "
			 "topdown", s->location, MAX_SQL);
		return -EINVAL;
	}
	if ((ret = bound_statement(s, what, err, errlen)) < 0)
		return ret;
	*res = PQexecParams(s->conn, q->sql, q->nr_params, NULL, q->values, NULL, NULL, 0);
	if (PQresultStatus(*res) != want) {
		ret = fail(s, *res, what, err, errlen);
		PQclear(*res);
		*res = NULL;
	}
	return ret;
}

/* A statement without parameters or rows. */
static int exec_sql(struct pg_store *s, const char *sql, const char *what,
		    char *err, size_t errlen)
{
	PGresult *res;
	int ret = bound_statement(s, what, err, errlen);

	if (ret < 0)
		return ret;
	res = PQexec(s->conn, sql);
	ret = PQresultStatus(res) == PGRES_COMMAND_OK ? 0 : fail(s, res, what, err, errlen);
	PQclear(res);
	return ret;
}

/* Ends a transaction that failed; the error already reported wins. */
static void rollback(struct pg_store *s)
{
	PQclear(PQexec(s->conn, "ROLLBACK"));
}

/* ---- values out of results ---- */

static bool is_null(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col);
}

static const char *get_text(const PGresult *res, int row, int col)
{
	return is_null(res, row, col) ? NULL : PQgetvalue(res, row, col);
}

static long long get_int(const PGresult *res, int row, int col)
{
	return strtoll(PQgetvalue(res, row, col), NULL, 10);
}

static double get_real(const PGresult *res, int row, int col)
{
	return is_null(res, row, col) ? NAN : strtod(PQgetvalue(res, row, col), NULL);
}

static bool get_bool(const PGresult *res, int row, int col)
{
	return PQgetvalue(res, row, col)[0] == 't';
}

static int dup_text(const PGresult *res, int row, int col, char **out)
{
	const char *text = get_text(res, row, col);

	*out = text ? strdup(text) : NULL;
	return !text || *out ? 0 : -ENOMEM;
}

/* ---- open, migrate, close ---- */

static void ignore_notice(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* The value of keyword in a parsed connection string, or NULL. */
static const char *option(const PQconninfoOption *options, const char *keyword)
{
	for (; options && options->keyword; options++)
		if (strcmp(options->keyword, keyword) == 0 && options->val && *options->val)
			return options->val;
	return NULL;
}

/* "host H port P": where a connection string points, for messages. */
static void describe_target(const PQconninfoOption *options, char *buf, size_t len)
{
	const char *host = option(options, "host");
	const char *port = option(options, "port");

	if (!host)
		host = option(options, "hostaddr");
	if (!host)
		host = getenv("PGHOST");
	if (!port)
		port = getenv("PGPORT");
	snprintf(buf, len, "host %s port %s", host && *host ? host : "(the local socket)",
		 port && *port ? port : "5432");
}

/* Copies message into buf (its first line) with every copy of secret
 * replaced by "***": libpq quotes parts of the connection string. */
static void scrub(const char *message, const char *secret, char *buf, size_t len)
{
	size_t used = 0, secret_len = secret ? strlen(secret) : 0;

	for (const char *p = message; *p && *p != '\n' && used + 4 < len;) {
		if (secret_len && strncmp(p, secret, secret_len) == 0) {
			memcpy(buf + used, "***", 3);
			used += 3;
			p += secret_len;
		} else {
			buf[used++] = *p++;
		}
	}
	buf[used] = '\0';
}

static int connect_server(struct pg_store *s, const char *dsn, char *err, size_t errlen)
{
	/* connect_timeout first: expanding the connection string (dbname)
	 * then lets the string's own setting win. */
	static const char *const keywords[] = {
		"connect_timeout", "application_name", "dbname", NULL,
	};
	const char *values[] = { CONNECT_TIMEOUT_S, "topdown", dsn, NULL };
	PQconninfoOption *options = PQconninfoParse(dsn, NULL);
	char target[300], reason[300];
	int ret = 0;

	/* Never quote the string: it may hold a password. */
	if (!options) {
		snprintf(err, errlen, "the PostgreSQL connection string is malformed; give "
			 "postgresql://USER@HOST:PORT/DATABASE or 'host=HOST dbname=DATABASE' "
			 "with --dsn or TOPDOWN_DSN");
		return -EINVAL;
	}
	describe_target(options, target, sizeof(target));
	s->conn = PQconnectdbParams(keywords, values, 1);
	if (PQstatus(s->conn) != CONNECTION_OK) {
		scrub(s->conn ? PQerrorMessage(s->conn) : "out of memory",
		      option(options, "password"), reason, sizeof(reason));
		snprintf(err, errlen, "cannot connect to PostgreSQL at %s: %s; check that the "
			 "server runs and that --dsn or TOPDOWN_DSN names it", target, reason);
		ret = -ECONNREFUSED;
	} else {
		PQsetNoticeProcessor(s->conn, ignore_notice, NULL);
		snprintf(s->location, sizeof(s->location), "postgresql://%s@%s:%s/%s",
			 PQuser(s->conn), PQhost(s->conn), PQport(s->conn), PQdb(s->conn));
	}
	PQconninfoFree(options);
	return ret;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int schema_version(struct pg_store *s, long long *version, char *err, size_t errlen)
{
	struct query q;
	PGresult *res;
	int ret;

	query_init(&q, "SELECT coalesce(max(version), 0) FROM schema_migrations");
	ret = query_exec(s, &q, PGRES_TUPLES_OK, &res, "cannot migrate the database", err,
			 errlen);
	if (ret == 0)
		*version = get_int(res, 0, 0);
	PQclear(res);
	return ret;
}

static int apply_migrations(struct pg_store *s, long long version, char *err, size_t errlen)
{
	int ret = 0;

	for (; ret == 0 && version < NR_MIGRATIONS; version++) {
		struct query q;
		PGresult *res;

		ret = exec_sql(s, migrations[version], "cannot migrate the database", err, errlen);
		if (ret < 0)
			break;
		query_init(&q, "INSERT INTO schema_migrations (version, applied_ns)");
		query_int(&q, " VALUES ($", version + 1);
		query_int(&q, ", $", now_ns());
		query_text(&q, ")");
		ret = query_exec(s, &q, PGRES_COMMAND_OK, &res, "cannot migrate the database",
				 err, errlen);
		PQclear(res);
	}
	return ret;
}

static int newer_schema(struct pg_store *s, long long version, char *err, size_t errlen)
{
	snprintf(err, errlen, "database %s has schema version %lld, newer than the %d this "
		 "topdown knows; upgrade topdown or pass --dsn with another database",
		 s->location, version, NR_MIGRATIONS);
	return -EPROTO;
}

/*
 * The version of a database that was migrated before, in one statement;
 * false when it needs the locked path (no table yet, or behind). Agents
 * open the store for every run, often over a network.
 */
static bool schema_is_current(struct pg_store *s, long long *version)
{
	PGresult *res = PQexec(s->conn, "SELECT coalesce(max(version), 0) FROM schema_migrations");
	bool known = PQresultStatus(res) == PGRES_TUPLES_OK;

	*version = known ? get_int(res, 0, 0) : 0;
	PQclear(res);
	return known && *version >= NR_MIGRATIONS;
}

/* Applies the missing migrations under an advisory lock, in one
 * transaction: agents starting together apply each one once. */
static int migrate(struct pg_store *s, char *err, size_t errlen)
{
	long long version = 0;
	char lock[128];
	int ret;

	if (schema_is_current(s, &version))
		return version > NR_MIGRATIONS ? newer_schema(s, version, err, errlen) : 0;
	snprintf(lock, sizeof(lock), "SELECT pg_advisory_xact_lock(%lld)", MIGRATION_LOCK);
	ret = exec_sql(s, "BEGIN", "cannot migrate the database", err, errlen);
	if (ret == 0) {
		PGresult *res = PQexec(s->conn, lock);

		if (PQresultStatus(res) != PGRES_TUPLES_OK)
			ret = fail(s, res, "cannot migrate the database", err, errlen);
		PQclear(res);
	}
	if (ret == 0)
		ret = exec_sql(s, "CREATE TABLE IF NOT EXISTS schema_migrations ("
			       "  version integer PRIMARY KEY,"
			       "  applied_ns bigint NOT NULL"
			       ")", "cannot migrate the database", err, errlen);
	if (ret == 0)
		ret = schema_version(s, &version, err, errlen);
	if (ret == 0 && version > NR_MIGRATIONS)
		ret = newer_schema(s, version, err, errlen);
	if (ret == 0)
		ret = apply_migrations(s, version, err, errlen);
	if (ret == 0)
		ret = exec_sql(s, "COMMIT", "cannot migrate the database", err, errlen);
	if (ret < 0)
		rollback(s);
	return ret;
}

/*
 * A reader's check of the schema, which it cannot change: the database
 * holds the tables this topdown reads. One without them is no store to a
 * reader (a mistyped database name, or one no writer used yet).
 */
static int check_schema(struct pg_store *s, char *err, size_t errlen)
{
	PGresult *res = PQexec(s->conn, "SELECT coalesce(max(version), 0) FROM schema_migrations");
	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	long long version = 0;
	int ret = 0;

	if (PQresultStatus(res) == PGRES_TUPLES_OK)
		version = get_int(res, 0, 0);
	else if (state && !strcmp(state, "42P01")) { /* undefined_table */
		snprintf(err, errlen, "no topdown database at %s: it holds no topdown tables; run "
			 "`topdown collect` with this --dsn first, or pass --dsn with the database "
			 "topdown writes to", s->location);
		ret = -ENOENT;
	} else {
		ret = fail(s, res, "cannot read the database", err, errlen);
	}
	PQclear(res);
	if (ret == 0 && version > NR_MIGRATIONS)
		ret = newer_schema(s, version, err, errlen);
	if (ret == 0 && version < NR_MIGRATIONS) {
		snprintf(err, errlen, "database %s has schema version %lld, older than the %d this "
			 "topdown reads; run a topdown command that writes (import, gc or collect) "
			 "on it once to upgrade it", s->location, version, NR_MIGRATIONS);
		ret = -EPROTO;
	}
	return ret;
}

static void pg_close(struct td_store *store)
{
	struct pg_store *s = to_pg(store);

	PQfinish(s->conn);
	free(s);
}

static struct td_store *pg_open(const struct td_store_config *cfg, char *err, size_t errlen)
{
	struct pg_store *s;
	int ret;

	if (!cfg->dsn || !*cfg->dsn) {
		snprintf(err, errlen, "the PostgreSQL backend needs a connection string; pass "
			 "--dsn postgresql://USER@HOST/DATABASE or set TOPDOWN_DSN");
		return td_store_open_failed(-EINVAL);
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory opening PostgreSQL; free memory and retry");
		return td_store_open_failed(-ENOMEM);
	}
	s->base.ops = &td_postgres_ops;
	s->base.mode = cfg->mode;
	s->base.location = s->location;
	/*
	 * Every float comes back with all its digits (the default before
	 * PostgreSQL 12 rounds to 15). No JIT: compiling a statement took
	 * hundreds of milliseconds where running it takes tens (the planner's
	 * guesses for the bottlenecks statement passed jit_above_cost). A
	 * reader's session is read-only: the server refuses any write in it,
	 * whatever the user's rights.
	 */
	ret = connect_server(s, cfg->dsn, err, errlen);
	if (ret == 0)
		ret = exec_sql(s, "SET extra_float_digits = 3; SET jit = off",
			       "cannot set up the session", err, errlen);
	if (ret == 0 && cfg->mode == TD_STORE_READ_ONLY)
		ret = exec_sql(s, "SET default_transaction_read_only = on",
			       "cannot set up the session", err, errlen);
	if (ret == 0)
		ret = cfg->mode == TD_STORE_READ_ONLY ? check_schema(s, err, errlen) :
							migrate(s, err, errlen);
	s->base.schema_version = NR_MIGRATIONS;
	if (ret < 0) {
		pg_close(&s->base);
		return td_store_open_failed(ret);
	}
	return &s->base;
}

/* ---- writing a run: COPY ---- */

/* COPY text-format data for one table, sent in chunks. */
struct copy {
	struct pg_store *s;
	char *buf;
	size_t len, cap;
	bool failed; /* out of memory or the server refused data */
};

static void copy_bytes(struct copy *c, const char *bytes, size_t n)
{
	if (c->failed)
		return;
	if (c->len + n > c->cap) {
		size_t cap = c->cap ? c->cap : COPY_CHUNK * 2;
		char *grown;

		while (cap < c->len + n)
			cap *= 2;
		grown = realloc(c->buf, cap);
		if (!grown) {
			c->failed = true;
			return;
		}
		c->buf = grown;
		c->cap = cap;
	}
	memcpy(c->buf + c->len, bytes, n);
	c->len += n;
}

/* Sends what is buffered once it fills a chunk (always when force). */
static void copy_flush(struct copy *c, bool force)
{
	if (c->failed || (!force && c->len < COPY_CHUNK) || !c->len)
		return;
	if (PQputCopyData(c->s->conn, c->buf, (int)c->len) != 1)
		c->failed = true;
	c->len = 0;
}

/* A column separator before every column but a row's first. */
static void copy_sep(struct copy *c, bool first)
{
	if (!first)
		copy_bytes(c, "\t", 1);
}

/* Text with the format's escapes; NULL as \N. */
static void copy_text(struct copy *c, bool first, const char *text)
{
	copy_sep(c, first);
	if (!text) {
		copy_bytes(c, "\\N", 2);
		return;
	}
	for (const char *p = text; *p; p++) {
		const char *escaped = *p == '\\' ? "\\\\" : *p == '\t' ? "\\t" :
				      *p == '\n' ? "\\n" : *p == '\r' ? "\\r" : NULL;

		if (escaped)
			copy_bytes(c, escaped, 2);
		else
			copy_bytes(c, p, 1);
	}
}

static void copy_int(struct copy *c, bool first, long long value)
{
	char buf[32];

	copy_sep(c, first);
	copy_bytes(c, buf, (size_t)snprintf(buf, sizeof(buf), "%lld", value));
}

static void copy_real(struct copy *c, bool first, double value)
{
	char buf[40];

	copy_sep(c, first);
	if (isnan(value))
		copy_bytes(c, "\\N", 2);
	else
		copy_bytes(c, buf, (size_t)snprintf(buf, sizeof(buf), "%.17g", value));
}

static void copy_bool(struct copy *c, bool first, bool value)
{
	copy_sep(c, first);
	copy_bytes(c, value ? "t" : "f", 1);
}

static void copy_end_row(struct copy *c)
{
	copy_bytes(c, "\n", 1);
	copy_flush(c, false);
}

/* The rows of one table, written by fill into a COPY. */
typedef void (*copy_fill)(struct copy *c, const struct td_run *run, long long run_pk);

static int copy_table(struct pg_store *s, const char *sql, copy_fill fill,
		      const struct td_run *run, long long run_pk, char *err, size_t errlen)
{
	struct copy c = { .s = s };
	PGresult *res = PQexec(s->conn, sql);
	int ret = 0;

	if (PQresultStatus(res) != PGRES_COPY_IN) {
		ret = fail(s, res, "cannot store the run", err, errlen);
		PQclear(res);
		return ret;
	}
	PQclear(res);
	fill(&c, run, run_pk);
	copy_flush(&c, true);
	free(c.buf);
	/* Ending with an error message makes the server drop the COPY. */
	if (PQputCopyEnd(s->conn, c.failed ? "out of memory" : NULL) != 1)
		c.failed = true;
	while ((res = PQgetResult(s->conn))) {
		if (ret == 0 && PQresultStatus(res) != PGRES_COMMAND_OK)
			ret = fail(s, res, "cannot store the run", err, errlen);
		PQclear(res);
	}
	if (ret == 0 && c.failed) {
		snprintf(err, errlen, "cannot send the run to %s: out of memory or the "
			 "connection failed; retry", s->location);
		ret = -EIO;
	}
	return ret;
}

static void fill_intervals(struct copy *c, const struct td_run *run, long long run_pk)
{
	for (size_t i = 0; i < run->nr_intervals; i++) {
		const struct td_interval *iv = &run->intervals[i];

		copy_int(c, true, run_pk);
		copy_int(c, false, iv->seq);
		copy_int(c, false, iv->start_ns);
		copy_int(c, false, iv->end_ns);
		copy_int(c, false, (long long)iv->nr_threads);
		copy_end_row(c);
	}
}

/* The thread rows of one span, or their counters. */
static void fill_span(struct copy *c, const struct td_run *run, long long run_pk,
		      long long seq, const struct td_thread_row *threads, size_t nr_threads,
		      bool counters)
{
	for (size_t i = 0; i < nr_threads; i++) {
		const struct td_thread_row *t = &threads[i];
		char comm[TD_COMM_LEN];

		for (size_t e = 0; counters && e < run->nr_events; e++) {
			copy_int(c, true, run_pk);
			copy_int(c, false, seq);
			copy_int(c, false, t->tid);
			copy_int(c, false, (long long)e);
			copy_real(c, false, t->counters[e].value);
			copy_real(c, false, t->counters[e].running_fraction);
			copy_end_row(c);
		}
		if (counters)
			continue;
		/* comm need not be NUL-terminated when it fills the array. */
		snprintf(comm, sizeof(comm), "%.*s", (int)sizeof(comm) - 1, t->comm);
		copy_int(c, true, run_pk);
		copy_int(c, false, seq);
		copy_int(c, false, t->tid);
		copy_int(c, false, (long long)i);
		copy_int(c, false, t->pid);
		copy_text(c, false, comm);
		copy_bool(c, false, t->exited);
		copy_int(c, false, (long long)t->oncpu_ns);
		copy_int(c, false, (long long)t->voluntary_switches);
		copy_int(c, false, (long long)t->involuntary_switches);
		copy_int(c, false, (long long)t->migrations);
		copy_int(c, false, (long long)t->runq_wait_ns);
		copy_end_row(c);
	}
}

static void fill_spans(struct copy *c, const struct td_run *run, long long run_pk,
		       bool counters)
{
	fill_span(c, run, run_pk, WHOLE_RUN_SEQ, run->threads, run->nr_threads, counters);
	for (size_t i = 0; i < run->nr_intervals; i++)
		fill_span(c, run, run_pk, run->intervals[i].seq, run->intervals[i].threads,
			  run->intervals[i].nr_threads, counters);
}

static void fill_threads(struct copy *c, const struct td_run *run, long long run_pk)
{
	fill_spans(c, run, run_pk, false);
}

static void fill_counters(struct copy *c, const struct td_run *run, long long run_pk)
{
	fill_spans(c, run, run_pk, true);
}

static void fill_metrics(struct copy *c, const struct td_run *run, long long run_pk)
{
	for (size_t i = 0; i < run->nr_metrics; i++) {
		const struct td_metric_row *m = &run->metrics[i];

		copy_int(c, true, run_pk);
		copy_int(c, false, (long long)i);
		copy_text(c, false, td_scope_name(m->scope));
		copy_text(c, false, m->scope_key);
		copy_int(c, false, m->interval_seq);
		copy_text(c, false, m->path);
		copy_text(c, false, m->parent);
		copy_int(c, false, m->level);
		copy_real(c, false, m->value);
		copy_bool(c, false, m->threshold_crossed);
		copy_real(c, false, m->confidence);
		copy_int(c, false, (long long)m->counted_ns);
		copy_end_row(c);
	}
}

/* The profile's rows: none when the run did not sample. */
static void fill_profile(struct copy *c, const struct td_run *run, long long run_pk)
{
	const struct td_profile *p = run->profile;

	if (!p)
		return;
	copy_int(c, true, run_pk);
	copy_text(c, false, p->event);
	copy_text(c, false, p->unit);
	copy_int(c, false, (long long)p->period);
	copy_int(c, false, (long long)p->frequency_hz);
	copy_int(c, false, (long long)p->samples);
	copy_int(c, false, (long long)p->lost_samples);
	copy_end_row(c);
}

static void fill_profile_frames(struct copy *c, const struct td_run *run, long long run_pk)
{
	for (size_t i = 0; run->profile && i < run->profile->nr_frames; i++) {
		const struct td_frame *f = &run->profile->frames[i];

		copy_int(c, true, run_pk);
		copy_int(c, false, (long long)i);
		copy_text(c, false, f->function);
		copy_text(c, false, f->module);
		copy_int(c, false, (long long)f->offset);
		copy_text(c, false, f->file);
		copy_int(c, false, f->line);
		copy_bool(c, false, f->kernel);
		copy_end_row(c);
	}
}

static void fill_profile_stacks(struct copy *c, const struct td_run *run, long long run_pk)
{
	for (size_t i = 0; run->profile && i < run->profile->nr_stacks; i++) {
		const struct td_profile_stack *st = &run->profile->stacks[i];
		char *frames = td_frame_list_to_text(st->frames, st->nr_frames);
		char comm[TD_PROFILE_COMM_LEN];

		if (!frames) {
			c->failed = true;
			return;
		}
		snprintf(comm, sizeof(comm), "%.*s", (int)sizeof(comm) - 1, st->comm);
		copy_int(c, true, run_pk);
		copy_int(c, false, (long long)i);
		copy_int(c, false, st->tid);
		copy_int(c, false, st->pid);
		copy_text(c, false, comm);
		copy_int(c, false, (long long)st->count);
		copy_bool(c, false, st->truncated);
		copy_text(c, false, frames);
		copy_end_row(c);
		free(frames);
	}
}

static const struct {
	const char *sql;
	copy_fill fill;
} copies[] = {
	{ "COPY intervals (run_pk, seq, start_ns, end_ns, nr_threads) FROM STDIN",
	  fill_intervals },
	{ "COPY threads (run_pk, interval_seq, tid, ordinal, pid, comm, exited, oncpu_ns,"
	  " voluntary_switches, involuntary_switches, migrations, runq_wait_ns) FROM STDIN",
	  fill_threads },
	{ "COPY counters (run_pk, interval_seq, tid, event, value, running_fraction)"
	  " FROM STDIN", fill_counters },
	{ "COPY metrics (run_pk, ordinal, scope, scope_key, interval_seq, path, parent, level,"
	  " value, threshold_crossed, confidence, counted_ns) FROM STDIN", fill_metrics },
	{ "COPY profiles (run_pk, event, unit, period, frequency_hz, samples, lost_samples) FROM STDIN",
	  fill_profile },
	{ "COPY profile_frames (run_pk, idx, function, module, module_offset, file, line, kernel)"
	  " FROM STDIN", fill_profile_frames },
	{ "COPY profile_stacks (run_pk, ordinal, tid, pid, comm, count, truncated, frames) FROM STDIN",
	  fill_profile_stacks },
};

/* The runs row; its pk into *run_pk. */
static int insert_run_row(struct pg_store *s, const struct td_run *run, const char *labels,
			  const char *events, long long *run_pk, char *err, size_t errlen)
{
	struct query q;
	PGresult *res;
	int ret;

	query_init(&q, "INSERT INTO runs (id, started_ns, ended_ns, duration_ns, process, level,"
		   " collector, labels, labels_text, dropped, partial, event_names, nr_threads)");
	query_param(&q, " VALUES ($", run->id);
	query_int(&q, ", $", run->started_ns);
	query_int(&q, ", $", run->ended_ns);
	query_int(&q, ", $", run->ended_ns - run->started_ns);
	query_param(&q, ", $", run->process);
	query_int(&q, ", $", run->level);
	query_param(&q, ", $", run->collector);
	query_param(&q, ", $", labels);
	query_text(&q, "::jsonb");
	query_param(&q, ", $", labels);
	query_int(&q, ", $", (long long)run->dropped);
	query_param(&q, ", $", run->partial ? "t" : "f");
	query_param(&q, ", $", events);
	query_int(&q, ", $", (long long)run->nr_threads);
	/* A run with this id already there: no row comes back. */
	query_text(&q, ") ON CONFLICT (id) DO NOTHING RETURNING pk");
	ret = query_exec(s, &q, PGRES_TUPLES_OK, &res, "cannot store the run", err, errlen);
	if (ret == 0 && PQntuples(res) == 0) {
		snprintf(err, errlen, "run %s is already stored in %s; a run is written once, "
			 "so give a new run a new id", run->id, s->location);
		ret = -EEXIST;
	}
	if (ret == 0)
		*run_pk = get_int(res, 0, 0);
	PQclear(res);
	return ret;
}

static int pg_write_run(struct td_store *store, const struct td_run *run,
			char *err, size_t errlen)
{
	struct pg_store *s = to_pg(store);
	char *labels, *events;
	long long run_pk = 0;
	int ret;

	errno = 0;
	labels = td_labels_to_json(&run->labels);
	events = td_event_names_to_json(run);
	if (!labels || !events) {
		ret = td_run_json_failed(run, err, errlen);
	} else {
		ret = exec_sql(s, "BEGIN", "cannot store the run", err, errlen);
		if (ret == 0)
			ret = insert_run_row(s, run, labels, events, &run_pk, err, errlen);
		for (size_t i = 0; ret == 0 && i < sizeof(copies) / sizeof(copies[0]); i++)
			ret = copy_table(s, copies[i].sql, copies[i].fill, run, run_pk, err,
					 errlen);
		if (ret == 0)
			ret = exec_sql(s, "COMMIT", "cannot store the run", err, errlen);
		if (ret < 0)
			rollback(s);
	}
	free(labels);
	free(events);
	return ret;
}

/* ---- reading ---- */

/* The runs columns a summary starts from, in the order decode_summary()
 * reads them, and where the metric columns start when both are selected. */
#define RUN_COLUMNS "r.id, r.started_ns, r.ended_ns, r.process, r.level, r.collector," \
		    " r.labels_text, r.dropped, r.partial, r.nr_threads, r.event_names, r.pk"
#define RUN_PK_COLUMN 11
#define METRIC_COLUMNS "m.scope, m.scope_key, m.interval_seq, m.path, m.parent, m.level," \
		       " m.value, m.threshold_crossed, m.confidence, m.counted_ns"

/* Decodes a RUN_COLUMNS row; on failure sum holds nothing to free. */
static int decode_summary(const PGresult *res, int row, struct td_run_summary *sum)
{
	const char *id = get_text(res, row, 0);
	long long nr_threads = get_int(res, row, 9);
	int ret;

	memset(sum, 0, sizeof(*sum));
	td_labels_init(&sum->labels);
	if (!id || strlen(id) >= sizeof(sum->id) || nr_threads < 0)
		return -EIO;
	strcpy(sum->id, id);
	sum->started_ns = get_int(res, row, 1);
	sum->ended_ns = get_int(res, row, 2);
	sum->level = (int)get_int(res, row, 4);
	sum->dropped = (uint64_t)get_int(res, row, 7);
	sum->partial = get_bool(res, row, 8);
	sum->nr_threads = (size_t)nr_threads;
	ret = dup_text(res, row, 3, &sum->process);
	if (ret == 0)
		ret = dup_text(res, row, 5, &sum->collector);
	if (ret == 0)
		ret = td_labels_from_json(get_text(res, row, 6), &sum->labels);
	if (ret < 0)
		td_run_summary_release(sum);
	return ret;
}

/* The METRIC_COLUMNS starting at col; strings point into res. */
static int decode_metric(const PGresult *res, int row, int col, struct td_metric_row *m)
{
	int scope = td_scope_parse(get_text(res, row, col));

	*m = (struct td_metric_row){
		.scope_key = (char *)get_text(res, row, col + 1),
		.interval_seq = (int32_t)get_int(res, row, col + 2),
		.path = (char *)get_text(res, row, col + 3),
		.parent = (char *)get_text(res, row, col + 4),
		.level = (int)get_int(res, row, col + 5),
		.value = get_real(res, row, col + 6),
		.threshold_crossed = get_bool(res, row, col + 7),
		.confidence = get_real(res, row, col + 8),
		.counted_ns = (uint64_t)get_int(res, row, col + 9), /* NULL: 0 */
	};
	if (scope < 0 || !m->scope_key || !m->path)
		return -EIO;
	m->scope = (enum td_metric_scope)scope;
	return 0;
}

/* Every query of one read sees the same snapshot. */
static int begin_read(struct pg_store *s, char *err, size_t errlen)
{
	return exec_sql(s, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
			"cannot read the database", err, errlen);
}

/* head, which ends with '$' for the run's pk, then tail. */
static int query_run_rows(struct pg_store *s, const char *head, const char *tail,
			  long long run_pk, PGresult **res, char *err, size_t errlen)
{
	struct query q;

	query_init(&q, NULL);
	query_int(&q, head, run_pk);
	query_text(&q, tail);
	return query_exec(s, &q, PGRES_TUPLES_OK, res, "cannot read the database", err, errlen);
}

static int read_header(struct pg_store *s, const char *run_id, struct td_run *run,
		       long long *run_pk, char *err, size_t errlen)
{
	struct td_run_summary sum;
	struct query q;
	PGresult *res;
	int ret;

	query_init(&q, "SELECT " RUN_COLUMNS " FROM runs r");
	query_param(&q, " WHERE r.id = $", run_id);
	ret = query_exec(s, &q, PGRES_TUPLES_OK, &res, "cannot read the database", err, errlen);
	if (ret == 0 && PQntuples(res) == 0) {
		snprintf(err, errlen, "no run '%s' in %s; list the stored runs with 'topdown list'",
			 run_id, s->location);
		ret = -ENOENT;
	}
	if (ret == 0) {
		*run_pk = get_int(res, 0, RUN_PK_COLUMN);
		ret = decode_summary(res, 0, &sum);
		if (ret == 0)
			ret = td_run_take_summary(run, &sum);
		if (ret == 0)
			ret = td_event_names_from_json(get_text(res, 0, 10), run);
		if (ret < 0)
			ret = malformed(s, ret, err, errlen);
	}
	PQclear(res);
	return ret;
}

static int read_intervals(struct pg_store *s, struct td_run *run, long long run_pk,
			  char *err, size_t errlen)
{
	PGresult *res;
	size_t cap = 0;
	int ret = query_run_rows(s, "SELECT seq, start_ns, end_ns, nr_threads FROM intervals"
				 " WHERE run_pk = $", " ORDER BY seq", run_pk, &res, err, errlen);

	for (int i = 0; ret == 0 && i < PQntuples(res); i++)
		ret = td_run_append_interval(run, &cap, get_int(res, i, 0), get_int(res, i, 1),
					     get_int(res, i, 2), get_int(res, i, 3));
	PQclear(res);
	return ret;
}

/* One thread row joined with one of its counters (NULLs when it has none),
 * placed by span, ordinal and event. */
static int decode_thread(const PGresult *res, int row, struct td_run *run)
{
	struct td_thread_row *t = td_run_thread_slot(run, get_int(res, row, 0),
						     get_int(res, row, 1));
	const char *comm = get_text(res, row, 4);
	long long event = get_int(res, row, 11);

	if (!t || !comm)
		return -EIO;
	t->tid = (uint32_t)get_int(res, row, 2);
	t->pid = (uint32_t)get_int(res, row, 3);
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	t->exited = get_bool(res, row, 5);
	t->oncpu_ns = (uint64_t)get_int(res, row, 6);
	t->voluntary_switches = (uint64_t)get_int(res, row, 7);
	t->involuntary_switches = (uint64_t)get_int(res, row, 8);
	t->migrations = (uint64_t)get_int(res, row, 9);
	t->runq_wait_ns = (uint64_t)get_int(res, row, 10);
	if (is_null(res, row, 11))
		return 0;
	if (event < 0 || (uint64_t)event >= run->nr_events)
		return -EIO;
	t->counters[event].value = get_real(res, row, 12);
	t->counters[event].running_fraction = get_real(res, row, 13);
	return 0;
}

/* What decode_thread() reads from its column 1 on, and where from. */
#define THREAD_COLUMNS "t.ordinal, t.tid, t.pid, t.comm, t.exited, t.oncpu_ns," \
		       " t.voluntary_switches, t.involuntary_switches, t.migrations," \
		       " t.runq_wait_ns, c.event, c.value, c.running_fraction"
#define COUNTERS_JOIN " LEFT JOIN counters c ON c.run_pk = t.run_pk" \
		      " AND c.interval_seq = t.interval_seq AND c.tid = t.tid"

/* The thread rows of the run (tail: more conditions, or ""). */
static int read_thread_rows(struct pg_store *s, struct td_run *run, long long run_pk,
			    const char *tail, char *err, size_t errlen)
{
	PGresult *res;
	int ret = query_run_rows(s, "SELECT t.interval_seq, " THREAD_COLUMNS " FROM threads t"
				 COUNTERS_JOIN " WHERE t.run_pk = $", tail, run_pk, &res, err, errlen);

	for (int i = 0; ret == 0 && i < PQntuples(res); i++)
		ret = decode_thread(res, i, run);
	PQclear(res);
	return ret;
}

static int read_threads(struct pg_store *s, struct td_run *run, long long run_pk,
			char *err, size_t errlen)
{
	return read_thread_rows(s, run, run_pk, "", err, errlen);
}

static int read_metric_rows(struct pg_store *s, struct td_run *run, long long run_pk,
			    char *err, size_t errlen)
{
	PGresult *res;
	int ret = query_run_rows(s, "SELECT " METRIC_COLUMNS " FROM metrics m"
				 " WHERE m.run_pk = $", " ORDER BY m.ordinal", run_pk, &res,
				 err, errlen);

	for (int i = 0; ret == 0 && i < PQntuples(res); i++) {
		struct td_metric_row m;

		ret = decode_metric(res, i, 0, &m);
		if (ret == 0)
			ret = td_run_add_metric(run, &m);
	}
	PQclear(res);
	return ret;
}

static int read_profile(struct pg_store *s, struct td_run *run, long long run_pk, char *err, size_t errlen)
{
	struct td_profile *p;
	PGresult *res;
	int ret = query_run_rows(s, "SELECT event, unit, period, frequency_hz, samples, lost_samples"
				 " FROM profiles WHERE run_pk = $", "", run_pk, &res, err, errlen);

	if (ret || PQntuples(res) == 0) {
		PQclear(res);
		return ret;
	}
	p = run->profile = td_profile_new();
	if (!p || dup_text(res, 0, 0, &p->event) || dup_text(res, 0, 1, &p->unit))
		ret = -ENOMEM;
	if (ret == 0) {
		p->period = (uint64_t)get_int(res, 0, 2);
		p->frequency_hz = (uint64_t)get_int(res, 0, 3);
		p->samples = (uint64_t)get_int(res, 0, 4);
		p->lost_samples = (uint64_t)get_int(res, 0, 5);
		ret = p->event && p->unit ? 0 : -EIO;
	}
	PQclear(res);
	if (ret == 0)
		ret = query_run_rows(s, "SELECT function, module, module_offset, file, line, kernel"
				     " FROM profile_frames WHERE run_pk = $", " ORDER BY idx", run_pk, &res,
				     err, errlen);
	for (int i = 0; ret == 0 && i < PQntuples(res); i++) {
		struct td_frame f = {
			.function = is_null(res, i, 0) ? NULL : (char *)get_text(res, i, 0),
			.module = is_null(res, i, 1) ? NULL : (char *)get_text(res, i, 1),
			.offset = (uint64_t)get_int(res, i, 2),
			.file = is_null(res, i, 3) ? NULL : (char *)get_text(res, i, 3),
			.line = (uint32_t)get_int(res, i, 4),
			.kernel = get_bool(res, i, 5),
		};
		int64_t index = td_profile_intern_frame(p, &f);

		ret = index < 0 ? (int)index : (size_t)index + 1 == p->nr_frames ? 0 : -EIO;
	}
	if (ret == 0) {
		PQclear(res);
		ret = query_run_rows(s, "SELECT tid, pid, comm, count, truncated, frames"
				     " FROM profile_stacks WHERE run_pk = $", " ORDER BY ordinal", run_pk, &res,
				     err, errlen);
	}
	for (int i = 0; ret == 0 && i < PQntuples(res); i++) {
		struct td_profile_stack stack = {
			.tid = (uint32_t)get_int(res, i, 0),
			.pid = (uint32_t)get_int(res, i, 1),
			.count = (uint64_t)get_int(res, i, 3),
			.truncated = get_bool(res, i, 4),
		};

		snprintf(stack.comm, sizeof(stack.comm), "%s", get_text(res, i, 2));
		ret = td_frame_list_from_text(get_text(res, i, 5), p->nr_frames, &stack.frames, &stack.nr_frames);
		if (ret == 0)
			ret = td_profile_add_stack(p, &stack);
		free(stack.frames);
	}
	PQclear(res);
	return ret;
}

/* The parts after the header, each a query; a failure of the data itself
 * (not of a query) is reported here. */
static int read_run_parts(struct pg_store *s, struct td_run *run, long long run_pk,
			  char *err, size_t errlen)
{
	int (*const parts[])(struct pg_store *, struct td_run *, long long, char *, size_t) = {
		read_intervals, read_threads, read_metric_rows, read_profile,
	};
	int ret = 0;

	err[0] = '\0';
	for (size_t i = 0; ret == 0 && i < sizeof(parts) / sizeof(parts[0]); i++)
		ret = parts[i](s, run, run_pk, err, errlen);
	/* A query failure filled err; a decoding failure did not. */
	if (ret < 0 && !err[0])
		ret = malformed(s, ret, err, errlen);
	return ret;
}

static int pg_read_run(struct td_store *store, const char *run_id, struct td_run **out,
		       char *err, size_t errlen)
{
	struct pg_store *s = to_pg(store);
	struct td_run *run = td_run_new();
	long long run_pk = 0;
	int ret;

	if (!run)
		return out_of_memory(s, err, errlen);
	ret = begin_read(s, err, errlen);
	if (ret == 0) {
		ret = read_header(s, run_id, run, &run_pk, err, errlen);
		if (ret == 0)
			ret = read_run_parts(s, run, run_pk, err, errlen);
		rollback(s); /* the transaction only read */
	}
	if (ret < 0) {
		td_run_free(run);
		return ret;
	}
	*out = run;
	return 0;
}

/* ---- walking a run (export) ---- */

#define FETCH_ROWS 4096 /* rows a cursor hands over at a time */

/*
 * Runs sql (a SELECT; inside the read transaction) through a cursor and
 * calls row for each result row, FETCH_ROWS at a time: a result that
 * PQexec would hold whole in memory (libpq keeps every row it received)
 * is never more than one batch. row returns 0 or a negative errno, which
 * stops the reading; a decoding failure is reported as malformed data.
 */
static int cursor_rows(struct pg_store *s, const char *sql,
		       int (*row)(const PGresult *res, int i, void *ctx), void *ctx, char *err,
		       size_t errlen)
{
	char *declare = NULL, fetch[64];
	int ret, n = FETCH_ROWS;

	snprintf(fetch, sizeof(fetch), "FETCH FORWARD %d FROM td_walk", FETCH_ROWS);
	if (asprintf(&declare, "DECLARE td_walk NO SCROLL CURSOR FOR %s", sql) < 0)
		return out_of_memory(s, err, errlen);
	ret = exec_sql(s, declare, "cannot read the database", err, errlen);
	free(declare);
	while (ret == 0 && n == FETCH_ROWS) {
		PGresult *res = NULL;

		ret = bound_statement(s, "cannot read the database", err, errlen);
		if (ret == 0)
			res = PQexec(s->conn, fetch);
		if (ret == 0 && PQresultStatus(res) != PGRES_TUPLES_OK)
			ret = fail(s, res, "cannot read the database", err, errlen);
		n = ret == 0 ? PQntuples(res) : 0;
		for (int i = 0; ret == 0 && i < n; i++)
			if ((ret = row(res, i, ctx)) < 0)
				ret = malformed(s, ret, err, errlen);
		PQclear(res);
	}
	if (ret == 0)
		ret = exec_sql(s, "CLOSE td_walk", "cannot read the database", err, errlen);
	return ret;
}

/* A row of the intervals joined with their thread rows and counters, in
 * seq order: interval columns 0 and 14-16, decode_thread()'s 0-13. */
static int walk_interval_row(const PGresult *res, int i, void *ctx)
{
	struct td_interval_walk *w = ctx;
	int ret = td_interval_walk_at(w, get_int(res, i, 0), get_int(res, i, 14), get_int(res, i, 15),
				      get_int(res, i, 16));

	if (ret < 0 || is_null(res, i, 1)) /* an interval without threads */
		return ret;
	return decode_thread(res, i, &w->window);
}

static int walk_metric_row(const PGresult *res, int i, void *ctx)
{
	struct td_interval_walk *w = ctx;
	struct td_metric_row m;
	int ret = decode_metric(res, i, 0, &m);

	if (ret == 0)
		ret = w->ret = w->v->metric(w->v->ctx, w->run, &m, w->err, sizeof(w->err));
	return ret;
}

static int pg_walk_run(struct td_store *store, const char *run_id, const struct td_run_visitor *v,
		       char *err, size_t errlen)
{
	struct pg_store *s = to_pg(store);
	struct td_run *run = td_run_new();
	struct td_interval_walk w;
	long long run_pk = 0;
	char sql[1024];
	int ret;

	if (!run)
		return out_of_memory(s, err, errlen);
	ret = begin_read(s, err, errlen);
	if (ret < 0) {
		td_run_free(run);
		return ret;
	}
	ret = read_header(s, run_id, run, &run_pk, err, errlen);
	if (ret == 0) {
		err[0] = '\0';
		ret = read_thread_rows(s, run, run_pk, " AND t.interval_seq = -1", err, errlen);
		if (ret < 0 && !err[0]) /* a query failure filled err; a decoding failure did not */
			ret = malformed(s, ret, err, errlen);
	}
	td_interval_walk_init(&w, run, v);
	if (ret == 0)
		ret = v->run(v->ctx, run, err, errlen);
	/* run_pk is the store's own integer: written into the text, not a parameter */
	snprintf(sql, sizeof(sql), "SELECT i.seq, " THREAD_COLUMNS ", i.start_ns, i.end_ns, i.nr_threads"
		 " FROM intervals i LEFT JOIN threads t ON t.run_pk = i.run_pk AND t.interval_seq = i.seq"
		 COUNTERS_JOIN " WHERE i.run_pk = %lld ORDER BY i.seq", run_pk);
	if (ret == 0 && v->interval)
		ret = cursor_rows(s, sql, walk_interval_row, &w, err, errlen);
	if (ret == 0 && v->interval)
		ret = td_interval_walk_finish(&w);
	snprintf(sql, sizeof(sql), "SELECT " METRIC_COLUMNS " FROM metrics m WHERE m.run_pk = %lld"
		 " ORDER BY m.ordinal", run_pk);
	if (ret == 0 && v->metric)
		ret = cursor_rows(s, sql, walk_metric_row, &w, err, errlen);
	if (w.ret < 0) { /* the visitor's own failure, not the store's */
		snprintf(err, errlen, "%s", w.err);
		ret = w.ret;
	}
	rollback(s); /* the transaction only read */
	td_interval_walk_release(&w);
	td_run_free(run);
	return ret;
}

/* ---- filters ---- */

/* The conditions of filter on runs r, each starting with " AND"; labels is
 * the filter's labels as a JSON object (NULL without label filters). */
static void where_runs(struct query *q, const struct td_run_filter *filter,
		       const char *labels)
{
	if (filter->process)
		query_param(q, " AND r.process = $", filter->process);
	if (filter->run_id)
		query_param(q, " AND r.id = $", filter->run_id);
	if (filter->since_ns)
		query_int(q, " AND r.started_ns >= $", filter->since_ns);
	if (filter->before_ns)
		query_int(q, " AND r.started_ns < $", filter->before_ns);
	if (labels) {
		query_param(q, " AND r.labels @> $", labels);
		query_text(q, "::jsonb");
	}
}

/* The filter's labels as JSON for where_runs(): *json is NULL without
 * labels; -EINVAL when a label is not UTF-8, -ENOMEM. */
static int filter_labels(struct pg_store *s, const struct td_run_filter *filter, char **json,
			 char *err, size_t errlen)
{
	*json = NULL;
	if (!filter->labels || !filter->labels->count)
		return 0;
	*json = td_labels_to_json(filter->labels);
	if (*json)
		return 0;
	snprintf(err, errlen, "cannot search %s: a label filter is not UTF-8 text (or memory "
		 "ran out); give labels as UTF-8", s->location);
	return -EINVAL;
}

static void limit_runs(struct query *q, size_t limit)
{
	if (limit)
		query_int(q, " LIMIT $", (long long)limit);
}

/* ---- listing and finding runs ---- */

static int pg_list_runs(struct td_store *store, const struct td_run_filter *filter,
			struct td_run_summary **out, size_t *count, char *err, size_t errlen)
{
	struct pg_store *s = to_pg(store);
	struct td_run_summary *items = NULL;
	PGresult *res = NULL;
	struct query q;
	char *labels;
	int ret = filter_labels(s, filter, &labels, err, errlen), n = 0;

	if (ret == 0) {
		query_init(&q, "SELECT " RUN_COLUMNS " FROM runs r WHERE true");
		where_runs(&q, filter, labels);
		query_text(&q, filter->oldest_first ? " ORDER BY r.started_ns, r.id"
						    : " ORDER BY r.started_ns DESC, r.id DESC");
		limit_runs(&q, filter->limit);
		ret = query_exec(s, &q, PGRES_TUPLES_OK, &res, "cannot read the database", err,
				 errlen);
	}
	n = ret == 0 ? PQntuples(res) : 0;
	if (n && !(items = calloc((size_t)n, sizeof(*items))))
		ret = out_of_memory(s, err, errlen);
	for (int i = 0; ret == 0 && i < n; i++) {
		ret = decode_summary(res, i, &items[i]);
		if (ret < 0) {
			td_run_summaries_free(items, (size_t)i);
			items = NULL;
			ret = malformed(s, ret, err, errlen);
		}
	}
	PQclear(res);
	free(labels);
	if (ret < 0) {
		free(items);
		return ret;
	}
	*out = items;
	*count = (size_t)n;
	return 0;
}

static int pg_find_run_ids(struct td_store *store, const char *low, const char *high,
			   char (*ids)[TD_RUN_ID_LEN], size_t max, size_t *count,
			   char *err, size_t errlen)
{
	struct pg_store *s = to_pg(store);
	struct query q;
	PGresult *res;
	int ret;

	query_init(&q, "SELECT id FROM runs");
	query_param(&q, " WHERE id >= $", low);
	query_param(&q, " AND id < $", high);
	query_int(&q, " ORDER BY id LIMIT $", (long long)max);
	ret = query_exec(s, &q, PGRES_TUPLES_OK, &res, "cannot read the database", err, errlen);
	for (int i = 0; ret == 0 && i < PQntuples(res); i++) {
		const char *id = PQgetvalue(res, i, 0);

		if (strlen(id) >= TD_RUN_ID_LEN)
			ret = malformed(s, -EIO, err, errlen);
		else
			strcpy(ids[(*count)++], id);
	}
	PQclear(res);
	return ret;
}

/* ---- metric rows of many runs ---- */

static void where_metrics(struct query *q, const struct td_metric_filter *filter,
			  const char *node_pattern)
{
	query_param(q, " AND m.scope = $", td_scope_name(filter->scope));
	/* The terms of the partial indexes' WHERE (metrics_samples,
	 * metrics_crossing), spelled the same. */
	query_text(q, " AND m.interval_seq = -1");
	if (filter->scope != TD_SCOPE_THREAD)
		query_text(q, " AND m.scope <> 'thread'");
	if (filter->scope_key)
		query_param(q, " AND m.scope_key = $", filter->scope_key);
	if (filter->node) {
		query_param(q, " AND (m.path = $", filter->node);
		/* E'' reads the same whatever standard_conforming_strings says. */
		query_param(q, " OR m.path LIKE $", node_pattern);
		query_text(q, " ESCAPE E'\\\\')");
	}
	if (filter->min_level)
		query_int(q, " AND m.level >= $", filter->min_level);
	if (filter->max_level)
		query_int(q, " AND m.level <= $", filter->max_level);
	if (!isnan(filter->min_value))
		query_real(q, " AND m.value >= $", filter->min_value);
}

/* For a limit, the newest runs r that have matching rows. */
static void newest_runs(struct query *q, const struct td_run_filter *runs,
			const struct td_metric_filter *metrics, const char *labels,
			const char *pattern)
{
	if (!runs->limit)
		return;
	query_text(q, " AND r.pk IN (SELECT r.pk FROM runs r WHERE true");
	where_runs(q, runs, labels);
	query_text(q, " AND EXISTS (SELECT 1 FROM metrics m WHERE m.run_pk = r.pk");
	where_metrics(q, metrics, pattern);
	query_text(q, ") ORDER BY r.started_ns DESC, r.id DESC");
	limit_runs(q, runs->limit);
	query_text(q, ")");
}

/* Both queries of read_metrics start alike: the runs filter, the metric
 * rows' filter, and for a limit the newest runs that have such rows. */
static void metrics_where(struct query *q, const struct td_run_filter *runs,
			  const struct td_metric_filter *metrics, const char *labels,
			  const char *pattern)
{
	where_runs(q, runs, labels);
	where_metrics(q, metrics, pattern);
	newest_runs(q, runs, metrics, labels, pattern);
}

/* The runs that have matching rows, in their order. */
static int read_metrics_runs(struct pg_store *s, const struct td_run_filter *runs,
			     const struct td_metric_filter *metrics, const char *labels,
			     const char *pattern, struct td_metrics_result *result,
			     char *err, size_t errlen)
{
	struct query q;
	PGresult *res;
	int ret;

	query_init(&q, "SELECT " RUN_COLUMNS " FROM runs r WHERE true");
	where_runs(&q, runs, labels);
	query_text(&q, " AND EXISTS (SELECT 1 FROM metrics m WHERE m.run_pk = r.pk");
	where_metrics(&q, metrics, pattern);
	query_text(&q, ") ORDER BY r.started_ns DESC, r.id DESC");
	limit_runs(&q, runs->limit);
	ret = query_exec(s, &q, PGRES_TUPLES_OK, &res, "cannot read the database", err, errlen);
	for (int i = 0; ret == 0 && i < PQntuples(res); i++) {
		struct td_run_summary sum;

		ret = decode_summary(res, i, &sum);
		if (ret == 0)
			ret = td_metrics_result_add_run(result, get_int(res, i, RUN_PK_COLUMN), &sum);
		if (ret < 0)
			ret = malformed(s, ret, err, errlen);
	}
	PQclear(res);
	return ret;
}

/* Their rows, grouped by run. */
static int read_metrics_rows(struct pg_store *s, const struct td_run_filter *runs,
			     const struct td_metric_filter *metrics, const char *labels,
			     const char *pattern, struct td_metrics_result *result,
			     char *err, size_t errlen)
{
	struct query q;
	PGresult *res;
	int ret;

	query_init(&q, "SELECT m.run_pk, " METRIC_COLUMNS
		   " FROM runs r JOIN metrics m ON m.run_pk = r.pk WHERE true");
	metrics_where(&q, runs, metrics, labels, pattern);
	query_text(&q, " ORDER BY m.run_pk, m.ordinal");
	ret = query_exec(s, &q, PGRES_TUPLES_OK, &res, "cannot read the database", err, errlen);
	for (int i = 0; ret == 0 && i < PQntuples(res); i++) {
		struct td_metric_row m;

		ret = decode_metric(res, i, 1, &m);
		if (ret == 0)
			ret = td_metrics_result_add_row(result, get_int(res, i, 0), &m);
		if (ret < 0)
			ret = malformed(s, ret, err, errlen);
	}
	PQclear(res);
	return ret;
}

/*
 * Two queries in one snapshot: the runs, then their rows. One join would
 * send every run's columns again with each of its rows.
 */
static int pg_read_metrics(struct td_store *store, const struct td_run_filter *runs,
			   const struct td_metric_filter *metrics, struct td_run_metrics **out,
			   size_t *count, char *err, size_t errlen)
{
	struct pg_store *s = to_pg(store);
	struct td_metrics_result result = { 0 };
	char *pattern = metrics->node ? td_like_suffix_pattern(metrics->node) : NULL;
	char *labels;
	int ret = filter_labels(s, runs, &labels, err, errlen);

	if (ret == 0 && metrics->node && !pattern)
		ret = out_of_memory(s, err, errlen);
	if (ret == 0)
		ret = begin_read(s, err, errlen);
	if (ret == 0) {
		ret = read_metrics_runs(s, runs, metrics, labels, pattern, &result, err, errlen);
		if (ret == 0 && result.count)
			ret = read_metrics_rows(s, runs, metrics, labels, pattern, &result, err,
						errlen);
		rollback(s); /* the transaction only read */
	}
	free(pattern);
	free(labels);
	return td_metrics_result_finish(&result, ret, out, count);
}

/* ---- deepest crossing rows, added up on the server ---- */

/* How the rows of the deepest crossing ones are ordered: the samples as
 * td_store_sum_deepest_crossings() has them added (storage.h). */
#define SAMPLE_ORDER "started_ns DESC, id DESC, scope_key COLLATE \"C\", ordinal"

/*
 * One statement, so one snapshot, and only a row a path crosses the
 * network instead of every row of every run. The rows are read twice, not
 * kept: once for the samples (metrics_samples), once for the crossing
 * ones (metrics_crossing), each from its index alone. A crossing row is a
 * deepest one when no crossing row of its sample starts with its path and
 * a dot (a sample has a few). sum() of double precision adds one value at
 * a time, in the ORDER BY given, as the caller would in C; "0 +" makes a
 * sum of -0 the +0 a sum started at 0 gives.
 */
static int pg_sum_deepest_crossings(struct td_store *store, const struct td_run_filter *runs,
				    const struct td_metric_filter *metrics,
				    struct td_crossing_sums *out, char *err, size_t errlen)
{
	struct pg_store *s = to_pg(store);
	char *pattern = metrics->node ? td_like_suffix_pattern(metrics->node) : NULL;
	PGresult *res = NULL;
	struct query q;
	char *labels;
	int ret = filter_labels(s, runs, &labels, err, errlen), n = 0;

	if (ret == 0 && metrics->node && !pattern)
		ret = out_of_memory(s, err, errlen);
	if (ret == 0) {
		query_init(&q, "WITH sample_rows AS NOT MATERIALIZED (SELECT m.run_pk,"
			   " m.scope_key, m.ordinal, m.path, m.level, m.value, m.threshold_crossed,"
			   " m.confidence FROM metrics m WHERE true");
		where_metrics(&q, metrics, pattern);
		/* Without a run filter, every row's run is there to count. */
		if (runs->process || runs->run_id || runs->since_ns || runs->before_ns ||
		    labels || runs->limit) {
			query_text(&q, " AND m.run_pk IN (SELECT r.pk FROM runs r WHERE true");
			where_runs(&q, runs, labels);
			newest_runs(&q, runs, metrics, labels, pattern);
			query_text(&q, ")");
		}
		query_text(&q, "),"
			   " crossing AS (SELECT run_pk, scope_key, ordinal, path, level, value,"
			   "  confidence FROM sample_rows WHERE threshold_crossed),"
			   " deepest AS (SELECT c.*, r.started_ns, r.id FROM crossing c"
			   "  JOIN runs r ON r.pk = c.run_pk WHERE NOT EXISTS (SELECT 1 FROM crossing d"
			   "   WHERE d.run_pk = c.run_pk AND d.scope_key = c.scope_key"
			   "   AND starts_with(d.path, c.path || '.')))"
			   " SELECT t.nr_runs, t.nr_samples, d.path, d.level, d.nr_rows, d.nr_values,"
			   "  d.sum, d.min_confidence, d.nan_confidence"
			   " FROM (SELECT count(DISTINCT run_pk) AS nr_runs, count(*) AS nr_samples"
			   "  FROM (SELECT DISTINCT run_pk, scope_key FROM sample_rows) k) t"
			   " LEFT JOIN (SELECT path,"
			   "  (array_agg(level ORDER BY " SAMPLE_ORDER "))[1] AS level,"
			   "  count(*) AS nr_rows, count(value) AS nr_values,"
			   "  0 + coalesce(sum(value ORDER BY " SAMPLE_ORDER "), 0) AS sum,"
			   "  min(confidence) AS min_confidence,"
			   "  bool_or(confidence IS NULL) AS nan_confidence"
			   "  FROM deepest GROUP BY path) d ON true"
			   " ORDER BY d.path COLLATE \"C\"");
		ret = query_exec(s, &q, PGRES_TUPLES_OK, &res, "cannot read the database", err,
				 errlen);
	}
	n = ret == 0 ? PQntuples(res) : 0;
	if (n) {
		out->nr_runs = (size_t)get_int(res, 0, 0);
		out->nr_samples = (size_t)get_int(res, 0, 1);
	}
	/* Without a deepest crossing row the one row has NULL for the rest. */
	if (n && !is_null(res, 0, 2) && !(out->items = calloc((size_t)n, sizeof(*out->items))))
		ret = out_of_memory(s, err, errlen);
	for (int i = 0; ret == 0 && out->items && i < n; i++) {
		struct td_crossing_sum *sum = &out->items[i];

		*sum = (struct td_crossing_sum){
			.level = (int)get_int(res, i, 3), .nr_rows = (size_t)get_int(res, i, 4),
			.nr_values = (size_t)get_int(res, i, 5), .sum = get_real(res, i, 6),
			.min_confidence = get_real(res, i, 7), .nan_confidence = get_bool(res, i, 8),
		};
		ret = dup_text(res, i, 2, &sum->path);
		if (ret < 0)
			ret = out_of_memory(s, err, errlen);
		else
			out->count++;
	}
	PQclear(res);
	free(pattern);
	free(labels);
	return ret;
}

/* ---- deleting ---- */

/*
 * One statement, so one transaction: the oldest batch runs matching the
 * filter and every row they hold (there are no foreign keys to cascade).
 */
static int pg_delete_batch(struct td_store *store, const struct td_run_filter *filter,
			   size_t batch, size_t *deleted, char *err, size_t errlen)
{
	struct pg_store *s = to_pg(store);
	PGresult *res = NULL;
	struct query q;
	char *labels;
	int ret = filter_labels(s, filter, &labels, err, errlen);

	if (ret == 0) {
		query_init(&q, "WITH doomed AS (SELECT r.pk FROM runs r WHERE true");
		where_runs(&q, filter, labels);
		query_text(&q, " ORDER BY r.started_ns, r.id");
		limit_runs(&q, batch);
		query_text(&q, "),"
			   " m AS (DELETE FROM metrics WHERE run_pk IN (SELECT pk FROM doomed)),"
			   " c AS (DELETE FROM counters WHERE run_pk IN (SELECT pk FROM doomed)),"
			   " t AS (DELETE FROM threads WHERE run_pk IN (SELECT pk FROM doomed)),"
			   " i AS (DELETE FROM intervals WHERE run_pk IN (SELECT pk FROM doomed)),"
			   " p AS (DELETE FROM profiles WHERE run_pk IN (SELECT pk FROM doomed)),"
			   " pf AS (DELETE FROM profile_frames WHERE run_pk IN (SELECT pk FROM doomed)),"
			   " ps AS (DELETE FROM profile_stacks WHERE run_pk IN (SELECT pk FROM doomed))"
			   " DELETE FROM runs WHERE pk IN (SELECT pk FROM doomed)");
		ret = query_exec(s, &q, PGRES_COMMAND_OK, &res, "cannot delete runs", err,
				 errlen);
	}
	if (ret == 0)
		*deleted = (size_t)strtoull(PQcmdTuples(res), NULL, 10);
	PQclear(res);
	free(labels);
	return ret;
}

const struct td_store_ops td_postgres_ops = {
	.name = "postgresql",
	.open = pg_open,
	.close = pg_close,
	.write_run = pg_write_run,
	.read_run = pg_read_run,
	.walk_run = pg_walk_run,
	.list_runs = pg_list_runs,
	.find_run_ids = pg_find_run_ids,
	.read_metrics = pg_read_metrics,
	.sum_deepest_crossings = pg_sum_deepest_crossings,
	.delete_batch = pg_delete_batch,
};
