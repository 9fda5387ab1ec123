// SPDX-License-Identifier: BSD-3-Clause
/*
 * The SQLite backend: one database file, WAL journal so readers never
 * wait for the collector, a versioned schema migrated at open, and one
 * transaction per run.
 *
 * Every value reaches SQL through a bound parameter. NaN counters and
 * metric values are stored as NULL (SQLite has no NaN) and come back as
 * NaN. Unsigned 64-bit figures are stored as their signed bit pattern:
 * they round-trip exactly, though SQL sees values above INT64_MAX as
 * negative.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "backend.h"
#include "storage.h"

#define BUSY_TIMEOUT_MS 5000
#define WAL_RETRY_MS 10
#define PROGRESS_STEPS 1000 /* how often a statement looks at the deadline */
#define WHOLE_RUN_SEQ -1 /* interval_seq of whole-run rows, as in td_metric_row */

struct sqlite_store {
	struct td_store base;
	sqlite3 *db;
	char path[]; /* for messages */
};

static struct sqlite_store *to_sqlite(struct td_store *store)
{
	return (struct sqlite_store *)store;
}

/*
 * The schema, one migration per entry, applied in order; an entry is
 * never edited once released, changes go in a new entry. Runs own every
 * other row: deleting a run deletes the rest through ON DELETE CASCADE.
 * Child rows point at runs.pk, an integer, rather than the UUID: it
 * keeps the large tables a third smaller and their inserts faster.
 */
static const char *const migrations[] = {
	/* 1: the first schema. */
	/* One row per collection or import. */
	"CREATE TABLE runs ("
	"  pk INTEGER PRIMARY KEY,"        /* what child rows refer to */
	"  id TEXT NOT NULL UNIQUE,"       /* UUID v4 text, the run's public name */
	"  started_ns INTEGER NOT NULL,"   /* wall clock, ns since the Unix epoch */
	"  ended_ns INTEGER NOT NULL,"
	"  duration_ns INTEGER NOT NULL,"  /* ended_ns - started_ns, for SQL readers */
	"  process TEXT,"                  /* the target as the user named it */
	"  level INTEGER NOT NULL,"        /* requested TMA level, 0 when none */
	"  collector TEXT,"                /* 'bpf' or 'import' */
	"  labels TEXT NOT NULL,"          /* JSON object, in the run's label order */
	"  dropped INTEGER NOT NULL,"
	"  partial INTEGER NOT NULL,"      /* 1: the window was cut short */
	"  event_names TEXT NOT NULL,"     /* JSON array; counters.event indexes it */
	"  nr_threads INTEGER NOT NULL"    /* whole-run thread rows, for listings */
	");"
	/* Listings sort by start, optionally for one process. */
	"CREATE INDEX runs_by_start ON runs (started_ns);"
	"CREATE INDEX runs_by_process ON runs (process, started_ns);"
	/* The labels again, one row each, so label filters use an index. */
	"CREATE TABLE run_labels ("
	"  run_pk INTEGER NOT NULL REFERENCES runs (pk) ON DELETE CASCADE,"
	"  key TEXT NOT NULL,"
	"  value TEXT NOT NULL,"
	"  PRIMARY KEY (run_pk, key)"
	") WITHOUT ROWID;"
	"CREATE INDEX run_labels_by_pair ON run_labels (key, value);"
	/* The periodic samples inside a run. */
	"CREATE TABLE intervals ("
	"  run_pk INTEGER NOT NULL REFERENCES runs (pk) ON DELETE CASCADE,"
	"  seq INTEGER NOT NULL,"
	"  start_ns INTEGER NOT NULL,"
	"  end_ns INTEGER NOT NULL,"
	"  nr_threads INTEGER NOT NULL,"
	"  PRIMARY KEY (run_pk, seq)"
	") WITHOUT ROWID;"
	/* One thread over one span: the whole run (interval_seq -1) or one
	 * interval. A thread appears once per span. */
	"CREATE TABLE threads ("
	"  run_pk INTEGER NOT NULL REFERENCES runs (pk) ON DELETE CASCADE,"
	"  interval_seq INTEGER NOT NULL,"
	"  tid INTEGER NOT NULL,"
	"  ordinal INTEGER NOT NULL,"      /* position in its span, to read back in order */
	"  pid INTEGER NOT NULL,"
	"  comm TEXT NOT NULL,"
	"  exited INTEGER NOT NULL,"
	"  oncpu_ns INTEGER NOT NULL,"
	"  voluntary_switches INTEGER NOT NULL,"
	"  involuntary_switches INTEGER NOT NULL,"
	"  migrations INTEGER NOT NULL,"
	"  runq_wait_ns INTEGER NOT NULL,"
	"  PRIMARY KEY (run_pk, interval_seq, tid)"
	") WITHOUT ROWID;"
	/* One event of one thread row. */
	"CREATE TABLE counters ("
	"  run_pk INTEGER NOT NULL,"
	"  interval_seq INTEGER NOT NULL,"
	"  tid INTEGER NOT NULL,"
	"  event INTEGER NOT NULL,"        /* index into runs.event_names */
	"  value REAL,"                    /* scaled count; NULL: the event never ran */
	"  running_fraction REAL,"         /* 0..1 */
	"  PRIMARY KEY (run_pk, interval_seq, tid, event),"
	"  FOREIGN KEY (run_pk, interval_seq, tid) REFERENCES threads ON DELETE CASCADE"
	") WITHOUT ROWID;"
	/* One node of a TMA tree for one scope, for the run or one interval. */
	"CREATE TABLE metrics ("
	"  run_pk INTEGER NOT NULL REFERENCES runs (pk) ON DELETE CASCADE,"
	"  ordinal INTEGER NOT NULL,"      /* position in the run, to read back in order */
	/* OR, not IN (...): SQLite builds a temporary table for an IN list
	 * on every row checked, which made inserts twice as slow. */
	"  scope TEXT NOT NULL"
	"    CHECK (scope = 'thread' OR scope = 'group' OR scope = 'process'),"
	"  scope_key TEXT NOT NULL,"       /* tid, folded thread name, or pid */
	"  interval_seq INTEGER NOT NULL," /* -1: the whole run */
	"  path TEXT NOT NULL,"            /* dotted: Backend_Bound.Memory_Bound */
	"  parent TEXT,"                   /* NULL at the top */
	"  level INTEGER NOT NULL,"
	"  value REAL,"                    /* fraction 0..1; NULL: undefined */
	"  threshold_crossed INTEGER NOT NULL,"
	"  confidence REAL,"               /* fraction of the run its events were counted */
	"  PRIMARY KEY (run_pk, ordinal)"
	") WITHOUT ROWID;",
	/* 2: queries over many runs read the whole-run rows of processes or
	 * thread names of each run without walking its thread rows. Partial:
	 * thread and interval rows are most rows and are rarely asked for
	 * across runs, and leaving them out halves the cost of storing a
	 * large run. A query uses it when its WHERE repeats these terms. */
	"CREATE INDEX metrics_by_scope ON metrics (scope, run_pk)"
	"  WHERE interval_seq = -1 AND scope <> 'thread';",
	/* 3: locate's profile, for the runs that sampled stacks. Frames are
	 * deduplicated within a run, stacks within a thread of a run. */
	"CREATE TABLE profiles ("
	"  run_pk INTEGER PRIMARY KEY REFERENCES runs (pk) ON DELETE CASCADE,"
	"  event TEXT NOT NULL,"           /* what was sampled */
	"  unit TEXT NOT NULL,"            /* what a sample stands for */
	"  period INTEGER NOT NULL,"       /* events per sample; 0: by frequency */
	"  frequency_hz INTEGER NOT NULL," /* 0: by period */
	"  samples INTEGER NOT NULL,"
	"  lost_samples INTEGER NOT NULL"
	");"
	"CREATE TABLE profile_frames ("
	"  run_pk INTEGER NOT NULL REFERENCES runs (pk) ON DELETE CASCADE,"
	"  idx INTEGER NOT NULL,"          /* what profile_stacks.frames names */
	"  function TEXT,"                 /* NULL: unresolved */
	"  module TEXT,"
	"  module_offset INTEGER NOT NULL,"
	"  file TEXT,"
	"  line INTEGER NOT NULL,"
	"  kernel INTEGER NOT NULL,"
	"  PRIMARY KEY (run_pk, idx)"
	") WITHOUT ROWID;"
	"CREATE TABLE profile_stacks ("
	"  run_pk INTEGER NOT NULL REFERENCES runs (pk) ON DELETE CASCADE,"
	"  ordinal INTEGER NOT NULL,"
	"  tid INTEGER NOT NULL,"
	"  pid INTEGER NOT NULL,"
	"  comm TEXT NOT NULL,"
	"  count INTEGER NOT NULL,"
	"  truncated INTEGER NOT NULL,"
	"  frames TEXT NOT NULL,"          /* frame idx, outermost first: '0,4,17' */
	"  PRIMARY KEY (run_pk, ordinal)"
	") WITHOUT ROWID;",
	/* 4: each row's counted time (struct td_metric_row), so that a node's
	 * time adds up over windows; NULL in rows stored before. */
	"ALTER TABLE metrics ADD COLUMN counted_ns INTEGER;",
};

#define NR_MIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))

/* ---- errors ---- */

#define WRITABLE_FIX "pass --db with a writable path or set TOPDOWN_DB_PATH"
#define READABLE_FIX "let this user read the file, or pass --db with a readable database"
#define BUSY_FIX "another process held the database for over 5 s; retry when it is done"

/* What each SQLite failure means for the caller and how to get past it. */
static const struct {
	int code; /* primary result code */
	int errnum;
	const char *fix;
} failures[] = {
	{ SQLITE_CANTOPEN, EACCES, WRITABLE_FIX },
	{ SQLITE_READONLY, EROFS, WRITABLE_FIX },
	{ SQLITE_PERM, EACCES, WRITABLE_FIX },
	{ SQLITE_NOTADB, EINVAL,
	  "pass --db with the path of a topdown database, or move this file away" },
	{ SQLITE_CORRUPT, EIO, "restore the file from a backup or pass --db with another path" },
	{ SQLITE_BUSY, EBUSY, BUSY_FIX },
	{ SQLITE_LOCKED, EBUSY, BUSY_FIX },
	{ SQLITE_FULL, ENOSPC, "free disk space or pass --db with a path on another filesystem" },
	{ SQLITE_IOERR, EIO, "check the disk holding the file and retry" },
	{ SQLITE_NOMEM, ENOMEM, "free memory and retry" },
	{ SQLITE_CONSTRAINT, EINVAL,
	  "the run holds duplicate or inconsistent rows, a bug in the code that built it" },
	{ SQLITE_INTERRUPT, ETIMEDOUT, TD_STORE_DEADLINE_FIX }, /* only on_progress interrupts */
};

/*
 * Fills err with "<what> '<path>': <reason>; <fix>" for SQLite result rc
 * and returns the matching negative errno. Call it before anything else
 * touches the connection, which would replace the message.
 */
static int fail(struct sqlite_store *s, int rc, const char *what, char *err, size_t errlen)
{
	int sys_errno = s->db ? sqlite3_system_errno(s->db) : 0;
	const char *reason = s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc);
	const char *fix = "check the database file and retry";
	int errnum = EIO;

	/* "unable to open database file" says less than the system error. */
	if ((rc & 0xff) == SQLITE_CANTOPEN && sys_errno)
		reason = strerror(sys_errno);
	for (size_t i = 0; i < sizeof(failures) / sizeof(failures[0]); i++) {
		if (failures[i].code == (rc & 0xff)) {
			fix = failures[i].fix;
			errnum = failures[i].errnum;
			break;
		}
	}
	/* A reader needs no write access: never tell it to find some. */
	if (s->base.mode == TD_STORE_READ_ONLY && (errnum == EACCES || errnum == EROFS))
		fix = READABLE_FIX;
	snprintf(err, errlen, "%s '%s': %s; %s", what, s->path, reason, fix);
	return -errnum;
}

/* Errors found in what a query returned rather than by SQLite. */
static int row_fail(struct sqlite_store *s, int errnum, char *err, size_t errlen)
{
	if (errnum == -ENOMEM)
		snprintf(err, errlen, "out of memory reading database '%s'; free memory and retry",
			 s->path);
	else
		snprintf(err, errlen, "database '%s' holds a malformed run; "
			 "restore it from a backup or pass --db with another path", s->path);
	return errnum;
}

/* ---- values in and out of statements ---- */

/* One bound parameter. */
struct sql_value {
	enum { SQL_INT, SQL_REAL, SQL_TEXT } type;
	union {
		sqlite3_int64 i;
		double r;
		const char *t;
	};
};

#define SQL_INT(x) ((struct sql_value){ .type = SQL_INT, .i = (sqlite3_int64)(x) })
#define SQL_REAL(x) ((struct sql_value){ .type = SQL_REAL, .r = (x) })
#define SQL_TEXT(x) ((struct sql_value){ .type = SQL_TEXT, .t = (x) })
#define NR_VALUES(a) (sizeof(a) / sizeof((a)[0]))

/* Binds values to ?1..?n. NaN and NULL text become SQL NULL. Texts are
 * bound without a copy: they must outlive the statement's next step. */
static int bind_values(sqlite3_stmt *st, const struct sql_value *values, size_t n)
{
	int rc = SQLITE_OK;

	for (size_t i = 0; i < n && rc == SQLITE_OK; i++) {
		const struct sql_value *v = &values[i];
		int idx = (int)i + 1;

		if (v->type == SQL_INT)
			rc = sqlite3_bind_int64(st, idx, v->i);
		else if (v->type == SQL_REAL && !isnan(v->r))
			rc = sqlite3_bind_double(st, idx, v->r);
		else if (v->type == SQL_TEXT && v->t)
			rc = sqlite3_bind_text(st, idx, v->t, -1, SQLITE_STATIC);
		else
			rc = sqlite3_bind_null(st, idx);
	}
	return rc;
}

/* Binds, runs to completion and resets a statement that returns no rows. */
static int exec_values(sqlite3_stmt *st, const struct sql_value *values, size_t n)
{
	int rc = bind_values(st, values, n);

	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static double column_real(sqlite3_stmt *st, int col)
{
	return sqlite3_column_type(st, col) == SQLITE_NULL ? NAN : sqlite3_column_double(st, col);
}

/* A copy of a text column, NULL for SQL NULL; -ENOMEM when out of memory.
 * (The type is read first: it is undefined after a conversion.) */
static int column_dup(sqlite3_stmt *st, int col, char **out)
{
	const char *text;

	*out = NULL;
	if (sqlite3_column_type(st, col) == SQLITE_NULL)
		return 0;
	text = (const char *)sqlite3_column_text(st, col);
	if (text)
		*out = strdup(text);
	return *out ? 0 : -ENOMEM;
}

/*
 * Runs sql with params and calls row (when not NULL) for each result row.
 * row returns 0, -ENOMEM or -EIO (malformed data); the first failure stops
 * the query and is reported in err.
 */
typedef int (*row_fn)(sqlite3_stmt *st, void *ctx);

static int query_rows(struct sqlite_store *s, const char *sql, const struct sql_value *params,
		      size_t nr_params, row_fn row, void *ctx, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	int ret = 0;

	if (rc == SQLITE_OK)
		rc = bind_values(st, params, nr_params);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		ret = row ? row(st, ctx) : 0;
		if (ret < 0)
			break;
		rc = SQLITE_OK;
	}
	if (ret < 0)
		row_fail(s, ret, err, errlen);
	else if (rc != SQLITE_DONE)
		ret = fail(s, rc, "cannot read database", err, errlen);
	sqlite3_finalize(st);
	return ret;
}

static int exec_sql(struct sqlite_store *s, const char *sql)
{
	return sqlite3_exec(s->db, sql, NULL, NULL, NULL);
}

/* ---- the database path ---- */

static int path_too_long(const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "the database path from %s is too long; "
		 "pass --db with a shorter path", what);
	return -ENAMETOOLONG;
}

static int copy_path(const char *path, const char *from, char *buf, size_t len,
		     char *err, size_t errlen)
{
	if ((size_t)snprintf(buf, len, "%s", path) >= len)
		return path_too_long(from, err, errlen);
	return 0;
}

/* Creates ~/.topdown (0700) for the default store; buf holds its data.db path. */
static int make_default_dir(char *buf, char *err, size_t errlen)
{
	char *slash = strrchr(buf, '/');
	int ret = 0;

	*slash = '\0';
	if (mkdir(buf, 0700) < 0 && errno != EEXIST) {
		ret = -errno;
		snprintf(err, errlen, "cannot create directory '%s': %s; " WRITABLE_FIX,
			 buf, strerror(-ret));
	}
	*slash = '/';
	return ret;
}

/*
 * The default store is ~/.topdown/data.db, and its directory is ours to
 * create for a writer, whichever way the path came: unset, or given as
 * that very path by --db or TOPDOWN_DB_PATH (as the README's demo does).
 * Any other path is the user's: a missing directory there stays an error
 * at open. A reader creates nothing; it finds no database instead.
 */
int td_store_default_path(const char *flag_path, enum td_store_mode mode, char *buf, size_t len,
			  char *err, size_t errlen)
{
	const char *env = getenv("TOPDOWN_DB_PATH");
	const char *home = getenv("HOME");
	char home_path[PATH_MAX];
	bool home_known = home && *home &&
			  (size_t)snprintf(home_path, sizeof(home_path), "%s/.topdown/data.db", home) < sizeof(home_path);
	int ret;

	if (flag_path && !*flag_path) { /* --db "": an unset variable, most likely */
		snprintf(err, errlen, "--db was given an empty path; pass --db with the database "
			 "file, or leave --db out for TOPDOWN_DB_PATH or ~/.topdown/data.db");
		return -EINVAL;
	}
	if (flag_path)
		ret = copy_path(flag_path, "--db", buf, len, err, errlen);
	else if (env && *env)
		ret = copy_path(env, "TOPDOWN_DB_PATH", buf, len, err, errlen);
	else if (!home || !*home) {
		snprintf(err, errlen, "cannot place the database: HOME is not set; "
			 "pass --db with a path or set TOPDOWN_DB_PATH");
		return -ENOENT;
	} else if (!home_known) {
		return path_too_long("HOME", err, errlen);
	} else {
		ret = copy_path(home_path, "HOME", buf, len, err, errlen);
	}
	if (ret == 0 && mode == TD_STORE_READ_WRITE && home_known && strcmp(buf, home_path) == 0)
		ret = make_default_dir(buf, err, errlen);
	return ret;
}

/* ---- open, migrate, close ---- */

/*
 * Opens (creating) the file once with open(2) first: when SQLite cannot
 * create a file it retries read-only and reports that retry's error, so
 * an unwritable directory would read "No such file or directory". An
 * empty file is a valid new database to SQLite.
 */
static int check_writable(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	int errnum = errno;

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	snprintf(err, errlen, "cannot open database '%s': %s; " WRITABLE_FIX, path,
		 strerror(errnum));
	return -errnum;
}

/*
 * Switching a new file to WAL takes an exclusive lock, and SQLite answers
 * SQLITE_BUSY at once rather than calling the busy handler. Processes
 * creating the file together retry for as long as the handler would wait.
 */
static int enable_wal(struct sqlite_store *s)
{
	int rc;

	for (int waited_ms = 0;; waited_ms += WAL_RETRY_MS) {
		rc = exec_sql(s, "PRAGMA journal_mode = WAL");
		if ((rc & 0xff) != SQLITE_BUSY || waited_ms >= BUSY_TIMEOUT_MS)
			return rc;
		sqlite3_sleep(WAL_RETRY_MS);
	}
}

/* Every PROGRESS_STEPS virtual machine steps: a non-zero return stops the
 * statement with SQLITE_INTERRUPT once the store's deadline has come. */
static int on_progress(void *ctx)
{
	return td_store_time_left_ns(ctx) == 0;
}

/*
 * A writer keeps the WAL and its index (-wal, -shm) beside the file when
 * it closes. A reader without write access to the directory cannot create
 * them, and SQLite cannot read a WAL database without them; with them
 * there and readable (the index read-only), it can. The limit empties the
 * WAL file at the last close, so what stays is an empty file and a 32 KiB
 * index. SQLite gives them the database's permissions when it creates
 * them; a writer that owns them gives them the database's permissions
 * again, so a database made readable to others (chmod 644) is readable
 * whole once a writer has opened it. That is best effort: a reader that
 * still cannot read them says so.
 */
static int keep_wal(struct sqlite_store *s)
{
	static const char *const suffixes[] = { "-wal", "-shm" };
	char name[PATH_MAX];
	struct stat db, file;
	int persist = 1;
	int rc = sqlite3_file_control(s->db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);

	for (size_t i = 0; rc == SQLITE_OK && i < 2 && stat(s->path, &db) == 0; i++) {
		if ((size_t)snprintf(name, sizeof(name), "%s%s", s->path, suffixes[i]) < sizeof(name) &&
		    stat(name, &file) == 0 && file.st_uid == geteuid() &&
		    (file.st_mode & 0777) != (db.st_mode & 0777))
			(void)chmod(name, db.st_mode & 0777);
	}
	return rc == SQLITE_OK ? exec_sql(s, "PRAGMA journal_size_limit = 67108864") : rc;
}

/* A reader's file must be there: SQLite would create it. */
static int check_exists(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (stat(path, &st) == 0)
		return 0;
	if (errno == ENOENT || errno == ENOTDIR)
		snprintf(err, errlen, "no database at %s; run `topdown collect` first or pass "
			 "--db with an existing file", path);
	else
		snprintf(err, errlen, "cannot open database '%s': %s; " READABLE_FIX, path,
			 strerror(errno));
	return errno == ENOTDIR ? -ENOENT : -errno;
}

static int open_connection(struct sqlite_store *s, unsigned cache_kib, char *err, size_t errlen)
{
	char cache[64];
	/* synchronous=NORMAL: in WAL mode a power loss may lose the last
	 * runs but never corrupts the file, and commits skip an fsync. */
	static const char setup[] = "PRAGMA foreign_keys = ON;"
				    "PRAGMA synchronous = NORMAL;";
	bool writer = s->base.mode == TD_STORE_READ_WRITE;
	int rc = writer ? check_writable(s->path, err, errlen) : check_exists(s->path, err, errlen);

	if (rc < 0)
		return rc;
	rc = sqlite3_open_v2(s->path, &s->db, writer ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE :
			     SQLITE_OPEN_READONLY, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_extended_result_codes(s->db, 1);
		sqlite3_progress_handler(s->db, PROGRESS_STEPS, on_progress, &s->base);
		rc = sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
	}
	if (rc == SQLITE_OK && writer)
		rc = enable_wal(s);
	if (rc == SQLITE_OK && writer)
		rc = keep_wal(s);
	if (rc == SQLITE_OK && writer) /* a reader's first read is check_schema()'s */
		rc = exec_sql(s, setup);
	if (rc == SQLITE_OK && cache_kib) { /* a negative cache_size is in KiB */
		snprintf(cache, sizeof(cache), "PRAGMA cache_size = -%u", cache_kib);
		rc = exec_sql(s, cache);
	}
	return rc == SQLITE_OK ? 0 : fail(s, rc, "cannot open database", err, errlen);
}

static int read_int(sqlite3_stmt *st, void *ctx)
{
	*(int64_t *)ctx = sqlite3_column_int64(st, 0);
	return 0;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Applies the migrations the file lacks. BEGIN IMMEDIATE takes the write
 * lock before the version is read, so two processes opening a new file
 * at once apply each migration exactly once. */
static int apply_migrations(struct sqlite_store *s, int64_t version)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(s->db, "INSERT INTO schema_migrations (version, applied_ns)"
				    " VALUES (?1, ?2)", -1, &st, NULL);

	for (; rc == SQLITE_OK && version < NR_MIGRATIONS; version++) {
		struct sql_value row[] = { SQL_INT(version + 1), SQL_INT(now_ns()) };

		rc = exec_sql(s, migrations[version]);
		if (rc == SQLITE_OK)
			rc = exec_values(st, row, NR_VALUES(row));
	}
	sqlite3_finalize(st);
	return rc;
}

/*
 * The version of a file migrated before, read without the write lock, so
 * a reader opening the store never waits for a collector's write; false
 * when the locked path is needed (a new file, or one behind).
 */
static bool schema_is_current(struct sqlite_store *s, int64_t *version)
{
	sqlite3_stmt *st = NULL;
	bool known = sqlite3_prepare_v2(s->db, "SELECT coalesce(max(version), 0)"
					" FROM schema_migrations", -1, &st, NULL) == SQLITE_OK &&
		     sqlite3_step(st) == SQLITE_ROW;

	*version = known ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return known && *version >= NR_MIGRATIONS;
}

static int newer_schema(struct sqlite_store *s, int64_t version, char *err, size_t errlen)
{
	snprintf(err, errlen, "database '%s' has schema version %lld, newer than the %d "
		 "this topdown knows; upgrade topdown or pass --db with another path",
		 s->path, (long long)version, NR_MIGRATIONS);
	return -EPROTO;
}

/*
 * A reader's check of the schema, which it cannot change: the file holds
 * the schema this topdown reads. A file without it (empty, or created by
 * something else) is no database to a reader, as a missing file is.
 */
static int check_schema(struct sqlite_store *s, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int64_t version = 0;
	int rc = sqlite3_prepare_v2(s->db, "SELECT name FROM sqlite_master WHERE type = 'table'"
				    " AND name = 'schema_migrations'", -1, &st, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_finalize(st);
	/* A WAL database needs its -wal and -shm beside it: see keep_wal(). */
	if (rc == SQLITE_READONLY_DIRECTORY) {
		snprintf(err, errlen, "cannot read database '%s': its files %s-wal and %s-shm are "
			 "missing and this user cannot create them; open it once with a topdown "
			 "command that writes (import, gc or collect) as its owner, which leaves "
			 "them for readers", s->path, s->path, s->path);
		return -EACCES;
	}
	if ((rc & 0xff) == SQLITE_CANTOPEN && sqlite3_system_errno(s->db) == EACCES) {
		snprintf(err, errlen, "cannot read database '%s': this user may not read its files "
			 "%s-wal and %s-shm; give them the database's permissions (chmod "
			 "--reference=%s FILE)", s->path, s->path, s->path, s->path);
		return -EACCES;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return fail(s, rc, "cannot read database", err, errlen);
	if (rc == SQLITE_DONE) {
		snprintf(err, errlen, "no database at %s: the file holds no topdown data; run "
			 "`topdown collect` first or pass --db with an existing database", s->path);
		return -ENOENT;
	}
	if (schema_is_current(s, &version))
		return version > NR_MIGRATIONS ? newer_schema(s, version, err, errlen) : 0;
	snprintf(err, errlen, "database '%s' has schema version %lld, older than the %d this "
		 "topdown reads; run a topdown command that writes (import, gc or collect) on it "
		 "once to upgrade it", s->path, (long long)version, NR_MIGRATIONS);
	return -EPROTO;
}

static int migrate(struct sqlite_store *s, char *err, size_t errlen)
{
	int64_t version = 0;
	int rc, ret = 0;

	if (schema_is_current(s, &version))
		return version > NR_MIGRATIONS ? newer_schema(s, version, err, errlen) : 0;
	rc = exec_sql(s, "BEGIN IMMEDIATE;"
			  "CREATE TABLE IF NOT EXISTS schema_migrations ("
			  "  version INTEGER PRIMARY KEY,"
			  "  applied_ns INTEGER NOT NULL"
			  ");");
	if (rc == SQLITE_OK)
		ret = query_rows(s, "SELECT coalesce(max(version), 0) FROM schema_migrations",
				 NULL, 0, read_int, &version, err, errlen);
	if (rc == SQLITE_OK && ret == 0 && version > NR_MIGRATIONS)
		ret = newer_schema(s, version, err, errlen);
	if (rc == SQLITE_OK && ret == 0) {
		rc = apply_migrations(s, version);
		if (rc == SQLITE_OK)
			rc = exec_sql(s, "COMMIT");
	}
	if (rc != SQLITE_OK)
		ret = fail(s, rc, "cannot migrate database", err, errlen);
	if (ret < 0)
		exec_sql(s, "ROLLBACK");
	return ret;
}

static void sqlite_close(struct td_store *store)
{
	struct sqlite_store *s = to_sqlite(store);
	int moved = 0;

	/*
	 * A file deleted or renamed over while open keeps its -wal and -shm
	 * at the path (SQLite removes them at close only while the file is
	 * there), and a database created there next would replay that WAL as
	 * its own. Emptied into the old file first, it is harmless.
	 */
	if (s->db && sqlite3_file_control(s->db, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK && moved)
		exec_sql(s, "PRAGMA wal_checkpoint(TRUNCATE)");
	sqlite3_close(s->db);
	free(s);
}

static struct td_store *sqlite_open(const struct td_store_config *cfg, char *err, size_t errlen)
{
	char resolved[PATH_MAX];
	const char *path = cfg->path;
	struct sqlite_store *s;
	int ret;

	if (!path) {
		ret = td_store_default_path(NULL, cfg->mode, resolved, sizeof(resolved), err, errlen);
		if (ret < 0)
			return td_store_open_failed(ret);
		path = resolved;
	}
	s = calloc(1, sizeof(*s) + strlen(path) + 1);
	if (!s) {
		snprintf(err, errlen, "out of memory opening database '%s'; free memory and retry",
			 path);
		return td_store_open_failed(-ENOMEM);
	}
	s->base.ops = &td_sqlite_ops;
	s->base.mode = cfg->mode;
	strcpy(s->path, path);
	s->base.location = s->path;
	ret = open_connection(s, cfg->cache_kib, err, errlen);
	if (ret == 0)
		ret = cfg->mode == TD_STORE_READ_ONLY ? check_schema(s, err, errlen) :
							migrate(s, err, errlen);
	s->base.schema_version = NR_MIGRATIONS;
	if (ret < 0) {
		sqlite_close(&s->base);
		return td_store_open_failed(ret);
	}
	return &s->base;
}

/* ---- writing a run ---- */

enum insert {
	INSERT_RUN,
	INSERT_LABEL,
	INSERT_INTERVAL,
	INSERT_THREAD,
	INSERT_COUNTER,
	INSERT_METRIC,
	INSERT_PROFILE,
	INSERT_FRAME,
	INSERT_STACK,
	NR_INSERTS,
};

static const char *const insert_sql[NR_INSERTS] = {
	[INSERT_RUN] = "INSERT INTO runs (id, started_ns, ended_ns, duration_ns, process, level,"
		       " collector, labels, dropped, partial, event_names, nr_threads)"
		       " VALUES (?1, ?2, ?3, ?3 - ?2, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
	[INSERT_LABEL] = "INSERT INTO run_labels (run_pk, key, value) VALUES (?1, ?2, ?3)",
	[INSERT_INTERVAL] = "INSERT INTO intervals (run_pk, seq, start_ns, end_ns, nr_threads)"
			    " VALUES (?1, ?2, ?3, ?4, ?5)",
	[INSERT_THREAD] = "INSERT INTO threads (run_pk, interval_seq, tid, ordinal, pid, comm,"
			  " exited, oncpu_ns, voluntary_switches, involuntary_switches,"
			  " migrations, runq_wait_ns)"
			  " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
	[INSERT_COUNTER] = "INSERT INTO counters (run_pk, interval_seq, tid, event, value,"
			   " running_fraction) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	[INSERT_METRIC] = "INSERT INTO metrics (run_pk, ordinal, scope, scope_key, interval_seq,"
			  " path, parent, level, value, threshold_crossed, confidence, counted_ns)"
			  " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
	[INSERT_PROFILE] = "INSERT INTO profiles (run_pk, event, unit, period, frequency_hz, samples,"
			   " lost_samples) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[INSERT_FRAME] = "INSERT INTO profile_frames (run_pk, idx, function, module, module_offset,"
			 " file, line, kernel) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[INSERT_STACK] = "INSERT INTO profile_stacks (run_pk, ordinal, tid, pid, comm, count,"
			 " truncated, frames) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
};

/* The statements of one write, prepared once and reused for every row. */
struct writer {
	const struct td_run *run;
	sqlite3_int64 run_pk; /* of the runs row, once inserted */
	sqlite3_stmt *stmt[NR_INSERTS];
};

static int insert_run_row(struct writer *w, const char *labels, const char *events)
{
	const struct td_run *run = w->run;
	struct sql_value row[] = {
		SQL_TEXT(run->id), SQL_INT(run->started_ns), SQL_INT(run->ended_ns),
		SQL_TEXT(run->process), SQL_INT(run->level), SQL_TEXT(run->collector),
		SQL_TEXT(labels), SQL_INT(run->dropped), SQL_INT(run->partial),
		SQL_TEXT(events), SQL_INT(run->nr_threads),
	};
	int rc = exec_values(w->stmt[INSERT_RUN], row, NR_VALUES(row));

	w->run_pk = sqlite3_last_insert_rowid(sqlite3_db_handle(w->stmt[INSERT_RUN]));
	return rc;
}

static int insert_labels(struct writer *w)
{
	const struct td_labels *labels = &w->run->labels;
	int rc = SQLITE_OK;

	for (size_t i = 0; i < labels->count && rc == SQLITE_OK; i++) {
		struct sql_value row[] = {
			SQL_INT(w->run_pk), SQL_TEXT(labels->items[i].key),
			SQL_TEXT(labels->items[i].value),
		};

		rc = exec_values(w->stmt[INSERT_LABEL], row, NR_VALUES(row));
	}
	return rc;
}

/* One thread row and its counters, in the span interval_seq. */
static int insert_thread(struct writer *w, int64_t interval_seq, size_t ordinal,
			 const struct td_thread_row *t)
{
	char comm[TD_COMM_LEN];
	int rc;

	/* comm need not be NUL-terminated when it fills the array. */
	snprintf(comm, sizeof(comm), "%.*s", (int)sizeof(t->comm), t->comm);
	struct sql_value row[] = {
		SQL_INT(w->run_pk), SQL_INT(interval_seq), SQL_INT(t->tid), SQL_INT(ordinal),
		SQL_INT(t->pid), SQL_TEXT(comm), SQL_INT(t->exited), SQL_INT(t->oncpu_ns),
		SQL_INT(t->voluntary_switches), SQL_INT(t->involuntary_switches),
		SQL_INT(t->migrations), SQL_INT(t->runq_wait_ns),
	};

	rc = exec_values(w->stmt[INSERT_THREAD], row, NR_VALUES(row));
	for (size_t e = 0; e < w->run->nr_events && rc == SQLITE_OK; e++) {
		struct sql_value counter[] = {
			SQL_INT(w->run_pk), SQL_INT(interval_seq), SQL_INT(t->tid), SQL_INT(e),
			SQL_REAL(t->counters[e].value), SQL_REAL(t->counters[e].running_fraction),
		};

		rc = exec_values(w->stmt[INSERT_COUNTER], counter, NR_VALUES(counter));
	}
	return rc;
}

static int insert_threads(struct writer *w, int64_t interval_seq,
			  const struct td_thread_row *threads, size_t nr_threads)
{
	int rc = SQLITE_OK;

	for (size_t i = 0; i < nr_threads && rc == SQLITE_OK; i++)
		rc = insert_thread(w, interval_seq, i, &threads[i]);
	return rc;
}

static int insert_intervals(struct writer *w)
{
	int rc = SQLITE_OK;

	for (size_t i = 0; i < w->run->nr_intervals && rc == SQLITE_OK; i++) {
		const struct td_interval *iv = &w->run->intervals[i];
		struct sql_value row[] = {
			SQL_INT(w->run_pk), SQL_INT(iv->seq), SQL_INT(iv->start_ns),
			SQL_INT(iv->end_ns), SQL_INT(iv->nr_threads),
		};

		rc = exec_values(w->stmt[INSERT_INTERVAL], row, NR_VALUES(row));
		if (rc == SQLITE_OK)
			rc = insert_threads(w, iv->seq, iv->threads, iv->nr_threads);
	}
	return rc;
}

static int insert_metrics(struct writer *w)
{
	int rc = SQLITE_OK;

	for (size_t i = 0; i < w->run->nr_metrics && rc == SQLITE_OK; i++) {
		const struct td_metric_row *m = &w->run->metrics[i];
		struct sql_value row[] = {
			SQL_INT(w->run_pk), SQL_INT(i), SQL_TEXT(td_scope_name(m->scope)),
			SQL_TEXT(m->scope_key), SQL_INT(m->interval_seq), SQL_TEXT(m->path),
			SQL_TEXT(m->parent), SQL_INT(m->level), SQL_REAL(m->value),
			SQL_INT(m->threshold_crossed), SQL_REAL(m->confidence), SQL_INT(m->counted_ns),
		};

		rc = exec_values(w->stmt[INSERT_METRIC], row, NR_VALUES(row));
	}
	return rc;
}

static int insert_profile(struct writer *w)
{
	const struct td_profile *p = w->run->profile;
	struct sql_value row[] = {
		SQL_INT(w->run_pk), SQL_TEXT(p->event), SQL_TEXT(p->unit), SQL_INT(p->period),
		SQL_INT(p->frequency_hz), SQL_INT(p->samples), SQL_INT(p->lost_samples),
	};
	int rc = exec_values(w->stmt[INSERT_PROFILE], row, NR_VALUES(row));

	for (size_t i = 0; i < p->nr_frames && rc == SQLITE_OK; i++) {
		const struct td_frame *f = &p->frames[i];
		struct sql_value frame[] = {
			SQL_INT(w->run_pk), SQL_INT(i), SQL_TEXT(f->function), SQL_TEXT(f->module),
			SQL_INT(f->offset), SQL_TEXT(f->file), SQL_INT(f->line), SQL_INT(f->kernel),
		};

		rc = exec_values(w->stmt[INSERT_FRAME], frame, NR_VALUES(frame));
	}
	for (size_t i = 0; i < p->nr_stacks && rc == SQLITE_OK; i++) {
		const struct td_profile_stack *st = &p->stacks[i];
		char *frames = td_frame_list_to_text(st->frames, st->nr_frames);
		char comm[TD_PROFILE_COMM_LEN];

		if (!frames)
			return SQLITE_NOMEM;
		snprintf(comm, sizeof(comm), "%.*s", (int)sizeof(comm) - 1, st->comm);
		struct sql_value stack[] = {
			SQL_INT(w->run_pk), SQL_INT(i), SQL_INT(st->tid), SQL_INT(st->pid), SQL_TEXT(comm),
			SQL_INT(st->count), SQL_INT(st->truncated), SQL_TEXT(frames),
		};

		rc = exec_values(w->stmt[INSERT_STACK], stack, NR_VALUES(stack));
		free(frames);
	}
	return rc;
}

/* Everything after the runs row; SQLITE_OK or the first failure. */
static int insert_contents(struct writer *w)
{
	int rc = insert_labels(w);

	if (rc == SQLITE_OK)
		rc = insert_threads(w, WHOLE_RUN_SEQ, w->run->threads, w->run->nr_threads);
	if (rc == SQLITE_OK)
		rc = insert_intervals(w);
	if (rc == SQLITE_OK)
		rc = insert_metrics(w);
	if (rc == SQLITE_OK && w->run->profile)
		rc = insert_profile(w);
	return rc;
}

static int prepare_inserts(struct sqlite_store *s, struct writer *w)
{
	int rc = SQLITE_OK;

	for (int i = 0; i < NR_INSERTS && rc == SQLITE_OK; i++)
		rc = sqlite3_prepare_v2(s->db, insert_sql[i], -1, &w->stmt[i], NULL);
	return rc;
}

/* Runs the inserts inside BEGIN IMMEDIATE ... COMMIT; on failure fills
 * err and rolls back, so nothing of the run stays behind. */
static int write_transaction(struct sqlite_store *s, struct writer *w, const char *labels,
			     const char *events, char *err, size_t errlen)
{
	int rc = exec_sql(s, "BEGIN IMMEDIATE");
	bool duplicate = false;
	int ret = 0;

	if (rc == SQLITE_OK)
		rc = prepare_inserts(s, w);
	if (rc == SQLITE_OK) {
		rc = insert_run_row(w, labels, events);
		duplicate = rc == SQLITE_CONSTRAINT_UNIQUE;
	}
	if (rc == SQLITE_OK)
		rc = insert_contents(w);
	if (rc == SQLITE_OK)
		rc = exec_sql(s, "COMMIT");
	if (duplicate) {
		snprintf(err, errlen, "run %s is already stored in '%s'; a run is written once, "
			 "so give a new run a new id", w->run->id, s->path);
		ret = -EEXIST;
	} else if (rc != SQLITE_OK) {
		ret = fail(s, rc, "cannot store the run in database", err, errlen);
	}
	if (ret < 0)
		exec_sql(s, "ROLLBACK");
	return ret;
}

static int sqlite_write_run(struct td_store *store, const struct td_run *run,
			    char *err, size_t errlen)
{
	struct sqlite_store *s = to_sqlite(store);
	struct writer w = { .run = run };
	char *labels, *events;
	int ret;

	errno = 0;
	labels = td_labels_to_json(&run->labels);
	events = td_event_names_to_json(run);
	if (labels && events)
		ret = write_transaction(s, &w, labels, events, err, errlen);
	else
		ret = td_run_json_failed(run, err, errlen);
	for (int i = 0; i < NR_INSERTS; i++)
		sqlite3_finalize(w.stmt[i]);
	free(labels);
	free(events);
	return ret;
}

/* ---- reading runs ---- */

/* The runs columns a summary or a whole run starts from, in order. */
#define RUN_COLUMNS "r.id, r.started_ns, r.ended_ns, r.process, r.level, r.collector," \
		    " r.labels, r.dropped, r.partial, r.nr_threads, r.event_names, r.pk"
#define RUN_PK_COLUMN 11
/* The metrics columns decode_metric() reads, in order, after RUN_COLUMNS
 * when both are selected. */
#define METRIC_COLUMNS "m.scope, m.scope_key, m.interval_seq, m.path, m.parent, m.level," \
		       " m.value, m.threshold_crossed, m.confidence, m.counted_ns"

/* Decodes a RUN_COLUMNS row; on failure sum holds nothing to free. */
static int decode_summary(sqlite3_stmt *st, struct td_run_summary *sum)
{
	const char *id = (const char *)sqlite3_column_text(st, 0);
	int64_t nr_threads = sqlite3_column_int64(st, 9);
	int ret;

	memset(sum, 0, sizeof(*sum));
	td_labels_init(&sum->labels);
	if (!id || strlen(id) >= sizeof(sum->id) || nr_threads < 0)
		return -EIO;
	strcpy(sum->id, id);
	sum->started_ns = sqlite3_column_int64(st, 1);
	sum->ended_ns = sqlite3_column_int64(st, 2);
	sum->level = sqlite3_column_int(st, 4);
	sum->dropped = (uint64_t)sqlite3_column_int64(st, 7);
	sum->partial = sqlite3_column_int(st, 8) != 0;
	sum->nr_threads = (size_t)nr_threads;
	ret = column_dup(st, 3, &sum->process);
	if (ret == 0)
		ret = column_dup(st, 5, &sum->collector);
	if (ret == 0)
		ret = td_labels_from_json((const char *)sqlite3_column_text(st, 6), &sum->labels);
	if (ret < 0)
		td_run_summary_release(sum);
	return ret;
}

struct header_reader {
	struct td_run *run;
	bool found;
	sqlite3_int64 run_pk;
};

/* The runs row into run; the whole-run thread array is sized from it. */
static int read_run_header(sqlite3_stmt *st, void *ctx)
{
	struct header_reader *r = ctx;
	struct td_run *run = r->run;
	struct td_run_summary sum;
	int ret = decode_summary(st, &sum);

	if (ret < 0)
		return ret;
	r->found = true;
	r->run_pk = sqlite3_column_int64(st, RUN_PK_COLUMN);
	ret = td_run_take_summary(run, &sum);
	if (ret == 0)
		ret = td_event_names_from_json((const char *)sqlite3_column_text(st, 10), run);
	return ret;
}

struct interval_reader {
	struct td_run *run;
	size_t cap;
};

static int read_interval(sqlite3_stmt *st, void *ctx)
{
	struct interval_reader *r = ctx;

	return td_run_append_interval(r->run, &r->cap, sqlite3_column_int64(st, 0),
				      sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
				      sqlite3_column_int64(st, 3));
}

/* One thread row joined with one of its counters (NULLs when it has none).
 * Rows are placed by ordinal and event, so their order does not matter. */
static int read_thread(sqlite3_stmt *st, void *ctx)
{
	struct td_run *run = ctx;
	struct td_thread_row *t = td_run_thread_slot(run, sqlite3_column_int64(st, 0),
						     sqlite3_column_int64(st, 1));
	const char *comm = (const char *)sqlite3_column_text(st, 4);
	bool has_counter = sqlite3_column_type(st, 11) != SQLITE_NULL;
	int64_t event = sqlite3_column_int64(st, 11);

	if (!t || !comm)
		return -EIO;
	t->tid = (uint32_t)sqlite3_column_int64(st, 2);
	t->pid = (uint32_t)sqlite3_column_int64(st, 3);
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	t->exited = sqlite3_column_int(st, 5) != 0;
	t->oncpu_ns = (uint64_t)sqlite3_column_int64(st, 6);
	t->voluntary_switches = (uint64_t)sqlite3_column_int64(st, 7);
	t->involuntary_switches = (uint64_t)sqlite3_column_int64(st, 8);
	t->migrations = (uint64_t)sqlite3_column_int64(st, 9);
	t->runq_wait_ns = (uint64_t)sqlite3_column_int64(st, 10);
	if (!has_counter)
		return 0;
	if (event < 0 || (uint64_t)event >= run->nr_events)
		return -EIO;
	t->counters[event].value = column_real(st, 12);
	t->counters[event].running_fraction = column_real(st, 13);
	return 0;
}

/* The METRIC_COLUMNS starting at column col; the strings point into the
 * statement's row and last until its next step. */
static int decode_metric(sqlite3_stmt *st, int col, struct td_metric_row *m)
{
	int scope = td_scope_parse((const char *)sqlite3_column_text(st, col));

	*m = (struct td_metric_row){
		.scope_key = (char *)sqlite3_column_text(st, col + 1),
		.interval_seq = sqlite3_column_int(st, col + 2),
		.path = (char *)sqlite3_column_text(st, col + 3),
		.parent = (char *)sqlite3_column_text(st, col + 4),
		.level = sqlite3_column_int(st, col + 5),
		.value = column_real(st, col + 6),
		.threshold_crossed = sqlite3_column_int(st, col + 7) != 0,
		.confidence = column_real(st, col + 8),
		.counted_ns = (uint64_t)sqlite3_column_int64(st, col + 9), /* NULL: 0 */
	};
	if (scope < 0 || !m->scope_key || !m->path)
		return -EIO;
	m->scope = (enum td_metric_scope)scope;
	return 0;
}

static int read_metric(sqlite3_stmt *st, void *ctx)
{
	struct td_metric_row m;
	int ret = decode_metric(st, 0, &m);

	return ret < 0 ? ret : td_run_add_metric(ctx, &m);
}

/* The profiles row: the run sampled stacks. */
static int read_profile_header(sqlite3_stmt *st, void *ctx)
{
	struct td_run *run = ctx;
	struct td_profile *p = td_profile_new();

	if (!p)
		return -ENOMEM;
	run->profile = p;
	if (column_dup(st, 0, &p->event) || column_dup(st, 1, &p->unit))
		return -ENOMEM;
	p->period = (uint64_t)sqlite3_column_int64(st, 2);
	p->frequency_hz = (uint64_t)sqlite3_column_int64(st, 3);
	p->samples = (uint64_t)sqlite3_column_int64(st, 4);
	p->lost_samples = (uint64_t)sqlite3_column_int64(st, 5);
	return p->event && p->unit ? 0 : -EIO;
}

/* Frames in idx order: each one's index is its idx, as the stacks name them. */
static int read_profile_frame(sqlite3_stmt *st, void *ctx)
{
	struct td_profile *p = ctx;
	struct td_frame f = {
		.function = (char *)sqlite3_column_text(st, 0),
		.module = (char *)sqlite3_column_text(st, 1),
		.offset = (uint64_t)sqlite3_column_int64(st, 2),
		.file = (char *)sqlite3_column_text(st, 3),
		.line = (uint32_t)sqlite3_column_int64(st, 4),
		.kernel = sqlite3_column_int(st, 5) != 0,
	};
	int64_t index = td_profile_intern_frame(p, &f);

	if (index < 0)
		return (int)index;
	return (size_t)index + 1 == p->nr_frames ? 0 : -EIO; /* a duplicate frame: not what we wrote */
}

static int read_profile_stack(sqlite3_stmt *st, void *ctx)
{
	struct td_profile *p = ctx;
	struct td_profile_stack stack = {
		.tid = (uint32_t)sqlite3_column_int64(st, 0),
		.pid = (uint32_t)sqlite3_column_int64(st, 1),
		.count = (uint64_t)sqlite3_column_int64(st, 3),
		.truncated = sqlite3_column_int(st, 4) != 0,
	};
	const char *comm = (const char *)sqlite3_column_text(st, 2);
	int ret;

	if (!comm)
		return -EIO;
	snprintf(stack.comm, sizeof(stack.comm), "%s", comm);
	ret = td_frame_list_from_text((const char *)sqlite3_column_text(st, 5), p->nr_frames, &stack.frames,
				      &stack.nr_frames);
	if (ret == 0)
		ret = td_profile_add_stack(p, &stack);
	free(stack.frames);
	return ret;
}

static int read_profile(struct sqlite_store *s, struct td_run *run, const struct sql_value *id, char *err,
			size_t errlen)
{
	int ret = query_rows(s, "SELECT event, unit, period, frequency_hz, samples, lost_samples"
			     " FROM profiles WHERE run_pk = ?1", id, 1, read_profile_header, run, err, errlen);

	if (ret == 0 && run->profile)
		ret = query_rows(s, "SELECT function, module, module_offset, file, line, kernel"
				 " FROM profile_frames WHERE run_pk = ?1 ORDER BY idx", id, 1,
				 read_profile_frame, run->profile, err, errlen);
	if (ret == 0 && run->profile)
		ret = query_rows(s, "SELECT tid, pid, comm, count, truncated, frames"
				 " FROM profile_stacks WHERE run_pk = ?1 ORDER BY ordinal", id, 1,
				 read_profile_stack, run->profile, err, errlen);
	return ret;
}

/* What read_thread() reads from its column 1 on, and where from. */
#define THREAD_COLUMNS "t.ordinal, t.tid, t.pid, t.comm, t.exited, t.oncpu_ns," \
		       " t.voluntary_switches, t.involuntary_switches, t.migrations," \
		       " t.runq_wait_ns, c.event, c.value, c.running_fraction"
#define COUNTERS_JOIN " LEFT JOIN counters c ON c.run_pk = t.run_pk" \
		      " AND c.interval_seq = t.interval_seq AND c.tid = t.tid"

/* The queries that rebuild a run, in the order they must run: the header
 * sizes the thread arrays, intervals come before their threads. */
static int read_run_parts(struct sqlite_store *s, struct td_run *run, sqlite3_int64 run_pk,
			  char *err, size_t errlen)
{
	const struct sql_value id[] = { SQL_INT(run_pk) };
	struct interval_reader intervals = { .run = run };
	int ret;

	ret = query_rows(s, "SELECT seq, start_ns, end_ns, nr_threads FROM intervals"
			 " WHERE run_pk = ?1 ORDER BY seq", id, 1, read_interval, &intervals,
			 err, errlen);
	if (ret == 0)
		ret = query_rows(s, "SELECT t.interval_seq, " THREAD_COLUMNS " FROM threads t"
				 COUNTERS_JOIN " WHERE t.run_pk = ?1", id, 1, read_thread, run, err, errlen);
	if (ret == 0)
		ret = query_rows(s, "SELECT " METRIC_COLUMNS " FROM metrics m"
				 " WHERE m.run_pk = ?1 ORDER BY m.ordinal", id, 1, read_metric, run,
				 err, errlen);
	if (ret == 0)
		ret = read_profile(s, run, id, err, errlen);
	return ret;
}

/* One read transaction: every query in it sees the same snapshot. */
static int begin_read(struct sqlite_store *s, char *err, size_t errlen)
{
	int rc = exec_sql(s, "BEGIN");

	return rc == SQLITE_OK ? 0 : fail(s, rc, "cannot read database", err, errlen);
}

/* Opens a read transaction and reads run_id's header: -ENOENT with err when there is no such run. */
static int begin_read_header(struct sqlite_store *s, const char *run_id, struct header_reader *header,
			     char *err, size_t errlen)
{
	const struct sql_value id[] = { SQL_TEXT(run_id) };
	int ret = begin_read(s, err, errlen);

	if (ret == 0)
		ret = query_rows(s, "SELECT " RUN_COLUMNS " FROM runs r WHERE r.id = ?1", id, 1,
				 read_run_header, header, err, errlen);
	if (ret == 0 && !header->found) {
		snprintf(err, errlen, "no run '%s' in database '%s'; "
			 "list the stored runs with 'topdown list'", run_id, s->path);
		ret = -ENOENT;
	}
	return ret;
}

static int sqlite_read_run(struct td_store *store, const char *run_id, struct td_run **out,
			   char *err, size_t errlen)
{
	struct sqlite_store *s = to_sqlite(store);
	struct td_run *run = td_run_new();
	struct header_reader header = { .run = run };
	int ret;

	if (!run)
		return row_fail(s, -ENOMEM, err, errlen);
	ret = begin_read_header(s, run_id, &header, err, errlen);
	if (ret == 0)
		ret = read_run_parts(s, run, header.run_pk, err, errlen);
	exec_sql(s, "ROLLBACK"); /* the transaction only read */
	if (ret < 0) {
		td_run_free(run);
		return ret;
	}
	*out = run;
	return 0;
}

/* ---- walking a run (export) ---- */

/* A row of the intervals joined with their thread rows and counters, in
 * seq order: interval columns 0 and 14-16, read_thread()'s 0-13. */
static int walk_interval_row(sqlite3_stmt *st, void *ctx)
{
	struct td_interval_walk *w = ctx;
	int ret = td_interval_walk_at(w, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 14),
				      sqlite3_column_int64(st, 15), sqlite3_column_int64(st, 16));

	if (ret < 0 || sqlite3_column_type(st, 1) == SQLITE_NULL) /* an interval without threads */
		return ret;
	return read_thread(st, &w->window);
}

static int walk_metric_row(sqlite3_stmt *st, void *ctx)
{
	struct td_interval_walk *w = ctx;
	struct td_metric_row m;
	int ret = decode_metric(st, 0, &m);

	if (ret == 0)
		ret = w->ret = w->v->metric(w->v->ctx, w->run, &m, w->err, sizeof(w->err));
	return ret;
}

/*
 * The header and whole-run threads, then the intervals and the metric
 * rows each as one statement stepped row by row: SQLite hands them over
 * in primary key order (runs.pk, seq or ordinal) without sorting, so
 * nothing but one interval is held.
 */
static int sqlite_walk_run(struct td_store *store, const char *run_id, const struct td_run_visitor *v,
			   char *err, size_t errlen)
{
	struct sqlite_store *s = to_sqlite(store);
	struct td_run *run = td_run_new();
	struct header_reader header = { .run = run };
	struct td_interval_walk w;
	int ret;

	if (!run)
		return row_fail(s, -ENOMEM, err, errlen);
	ret = begin_read_header(s, run_id, &header, err, errlen);
	const struct sql_value pk[] = { SQL_INT(header.run_pk) };

	if (ret == 0)
		ret = query_rows(s, "SELECT t.interval_seq, " THREAD_COLUMNS " FROM threads t" COUNTERS_JOIN
				 " WHERE t.run_pk = ?1 AND t.interval_seq = -1", pk, 1, read_thread, run,
				 err, errlen);
	td_interval_walk_init(&w, run, v);
	if (ret == 0)
		ret = v->run(v->ctx, run, err, errlen);
	if (ret == 0 && v->interval)
		ret = query_rows(s, "SELECT i.seq, " THREAD_COLUMNS ", i.start_ns, i.end_ns, i.nr_threads"
				 " FROM intervals i LEFT JOIN threads t ON t.run_pk = i.run_pk"
				 " AND t.interval_seq = i.seq" COUNTERS_JOIN
				 " WHERE i.run_pk = ?1 ORDER BY i.seq", pk, 1, walk_interval_row, &w, err, errlen);
	if (ret == 0 && v->interval)
		ret = td_interval_walk_finish(&w);
	if (ret == 0 && v->metric)
		ret = query_rows(s, "SELECT " METRIC_COLUMNS " FROM metrics m"
				 " WHERE m.run_pk = ?1 ORDER BY m.ordinal", pk, 1, walk_metric_row, &w,
				 err, errlen);
	if (w.ret < 0) { /* the visitor's own failure, not the store's */
		snprintf(err, errlen, "%s", w.err);
		ret = w.ret;
	}
	exec_sql(s, "ROLLBACK"); /* the transaction only read */
	td_interval_walk_release(&w);
	td_run_free(run);
	return ret;
}

struct summary_reader {
	struct td_run_summary *items;
	size_t count, cap;
};

static int read_summary(sqlite3_stmt *st, void *ctx)
{
	struct summary_reader *r = ctx;
	struct td_run_summary *grown = td_grow(r->items, &r->cap, r->count, sizeof(*grown));
	int ret;

	if (!grown)
		return -ENOMEM;
	r->items = grown;
	ret = decode_summary(st, &r->items[r->count]);
	if (ret == 0)
		r->count++;
	return ret;
}

/* ---- filters ---- */

/*
 * A statement under construction: SQL text and its parameters, added
 * together so that each '?' meets its value. The texts of parameters
 * must outlive the statement.
 */
struct query {
	sqlite3_str *sql;
	struct sql_value *params;
	size_t nr_params, cap;
	bool failed; /* out of memory */
};

static void query_init(struct query *q, const char *head)
{
	*q = (struct query){ .sql = sqlite3_str_new(NULL) };
	sqlite3_str_appendall(q->sql, head);
}

static void query_text(struct query *q, const char *fragment)
{
	sqlite3_str_appendall(q->sql, fragment);
}

/* Appends fragment, whose one '?' takes value. */
static void query_add(struct query *q, const char *fragment, struct sql_value value)
{
	struct sql_value *grown;

	query_text(q, fragment);
	grown = td_grow(q->params, &q->cap, q->nr_params, sizeof(*grown));
	if (!grown) {
		q->failed = true;
		return;
	}
	q->params = grown;
	q->params[q->nr_params++] = value;
}

/* Runs sql as built, calling row per result row; frees the query. */
static int query_run(struct sqlite_store *s, struct query *q, row_fn row, void *ctx,
		     char *err, size_t errlen)
{
	char *sql = sqlite3_str_finish(q->sql);
	int ret;

	if (!sql || q->failed)
		ret = row_fail(s, -ENOMEM, err, errlen);
	else
		ret = query_rows(s, sql, q->params, q->nr_params, row, ctx, err, errlen);
	sqlite3_free(sql);
	free(q->params);
	return ret;
}

/* The conditions of filter on runs r, each starting with " AND". Label
 * filters use run_labels_by_pair. */
static void where_runs(struct query *q, const struct td_run_filter *filter)
{
	size_t nr_labels = filter->labels ? filter->labels->count : 0;

	if (filter->process)
		query_add(q, " AND r.process = ?", SQL_TEXT(filter->process));
	if (filter->run_id)
		query_add(q, " AND r.id = ?", SQL_TEXT(filter->run_id));
	if (filter->since_ns)
		query_add(q, " AND r.started_ns >= ?", SQL_INT(filter->since_ns));
	if (filter->before_ns)
		query_add(q, " AND r.started_ns < ?", SQL_INT(filter->before_ns));
	for (size_t i = 0; i < nr_labels; i++) {
		query_add(q, " AND r.pk IN (SELECT run_pk FROM run_labels WHERE key = ?",
			  SQL_TEXT(filter->labels->items[i].key));
		query_add(q, " AND value = ?)", SQL_TEXT(filter->labels->items[i].value));
	}
}

/* " LIMIT n" with n = limit, or no limit for 0 (negative in SQLite). */
static void limit_runs(struct query *q, size_t limit)
{
	query_add(q, " LIMIT ?", SQL_INT(limit ? (sqlite3_int64)limit : -1));
}

/* ---- listing and finding runs ---- */

static int sqlite_list_runs(struct td_store *store, const struct td_run_filter *filter,
			    struct td_run_summary **out, size_t *count, char *err, size_t errlen)
{
	struct sqlite_store *s = to_sqlite(store);
	struct summary_reader r = { 0 };
	struct query q;
	int ret;

	query_init(&q, "SELECT " RUN_COLUMNS " FROM runs r WHERE 1");
	where_runs(&q, filter);
	query_text(&q, filter->oldest_first ? " ORDER BY r.started_ns, r.id"
					    : " ORDER BY r.started_ns DESC, r.id DESC");
	limit_runs(&q, filter->limit);
	ret = query_run(s, &q, read_summary, &r, err, errlen);
	if (ret < 0) {
		td_run_summaries_free(r.items, r.count);
		return ret;
	}
	*out = r.items;
	*count = r.count;
	return 0;
}

struct id_reader {
	char (*ids)[TD_RUN_ID_LEN];
	size_t count;
};

static int read_id(sqlite3_stmt *st, void *ctx)
{
	struct id_reader *r = ctx;
	const char *id = (const char *)sqlite3_column_text(st, 0);

	if (!id || strlen(id) >= TD_RUN_ID_LEN)
		return -EIO;
	strcpy(r->ids[r->count++], id);
	return 0;
}

static int sqlite_find_run_ids(struct td_store *store, const char *low, const char *high,
			       char (*ids)[TD_RUN_ID_LEN], size_t max, size_t *count,
			       char *err, size_t errlen)
{
	const struct sql_value range[] = { SQL_TEXT(low), SQL_TEXT(high), SQL_INT(max) };
	struct id_reader r = { .ids = ids };
	int ret = query_rows(to_sqlite(store), "SELECT id FROM runs WHERE id >= ?1 AND id < ?2"
			     " ORDER BY id LIMIT ?3", range, NR_VALUES(range), read_id, &r,
			     err, errlen);

	*count = r.count;
	return ret;
}

/* ---- metric rows of many runs ---- */

/* The conditions of filter on metrics m (whole-run rows only). */
static void where_metrics(struct query *q, const struct td_metric_filter *filter,
			  const char *node_pattern)
{
	query_add(q, " AND m.scope = ?", SQL_TEXT(td_scope_name(filter->scope)));
	/* The terms of metrics_by_scope's WHERE, spelled the same. */
	query_text(q, " AND m.interval_seq = -1");
	if (filter->scope != TD_SCOPE_THREAD)
		query_text(q, " AND m.scope <> 'thread'");
	if (filter->scope_key)
		query_add(q, " AND m.scope_key = ?", SQL_TEXT(filter->scope_key));
	if (filter->node) {
		query_add(q, " AND (m.path = ?", SQL_TEXT(filter->node));
		query_add(q, " OR m.path LIKE ? ESCAPE '\\')", SQL_TEXT(node_pattern));
	}
	if (filter->min_level)
		query_add(q, " AND m.level >= ?", SQL_INT(filter->min_level));
	if (filter->max_level)
		query_add(q, " AND m.level <= ?", SQL_INT(filter->max_level));
	if (!isnan(filter->min_value))
		query_add(q, " AND m.value >= ?", SQL_REAL(filter->min_value));
}

/*
 * The metrics table as the queries of read_metrics name it. Without
 * statistics SQLite would probe a run's rows by its primary key, walking
 * past every thread row; the partial index goes straight to the rows of
 * processes and thread names, so it is named for those.
 */
static const char *metrics_table(const struct td_metric_filter *filter)
{
	return filter->scope == TD_SCOPE_THREAD ? " metrics m"
						: " metrics m INDEXED BY metrics_by_scope";
}

/* " AND EXISTS (...)": the run r has rows the filter matches. */
static void has_metrics(struct query *q, const struct td_metric_filter *metrics,
			const char *pattern)
{
	query_text(q, " AND EXISTS (SELECT 1 FROM");
	query_text(q, metrics_table(metrics));
	query_text(q, " WHERE m.run_pk = r.pk");
	where_metrics(q, metrics, pattern);
	query_text(q, ")");
}

/*
 * The rows query of read_metrics: the rows the metric filter matches of
 * the runs the runs filter matches (the newest that have such rows, for a
 * limit). The runs are a list first, so the rows are found run by run
 * whichever index narrows the runs.
 */
static void metrics_of_runs(struct query *q, const struct td_run_filter *runs,
			    const struct td_metric_filter *metrics, const char *pattern)
{
	query_text(q, "SELECT m.run_pk, " METRIC_COLUMNS " FROM");
	query_text(q, metrics_table(metrics));
	query_text(q, " WHERE m.run_pk IN (SELECT r.pk FROM runs r WHERE 1");
	where_runs(q, runs);
	if (runs->limit) {
		has_metrics(q, metrics, pattern);
		query_text(q, " ORDER BY r.started_ns DESC, r.id DESC");
		limit_runs(q, runs->limit);
	}
	query_text(q, ")");
	where_metrics(q, metrics, pattern);
	query_text(q, " ORDER BY m.run_pk, m.ordinal");
}

static int read_metrics_run(sqlite3_stmt *st, void *ctx)
{
	struct td_run_summary sum;
	int ret = decode_summary(st, &sum);

	return ret < 0 ? ret : td_metrics_result_add_run(ctx, sqlite3_column_int64(st,
									RUN_PK_COLUMN), &sum);
}

static int read_metrics_row(sqlite3_stmt *st, void *ctx)
{
	struct td_metric_row m;
	int ret = decode_metric(st, 1, &m);

	return ret < 0 ? ret : td_metrics_result_add_row(ctx, sqlite3_column_int64(st, 0), &m);
}

/*
 * Two queries in one snapshot: the runs that have matching rows, in
 * order, then the rows grouped by run. One join would carry every run's
 * columns on each of its rows through the sort.
 */
static int sqlite_read_metrics(struct td_store *store, const struct td_run_filter *runs,
			       const struct td_metric_filter *metrics, struct td_run_metrics **out,
			       size_t *count, char *err, size_t errlen)
{
	struct sqlite_store *s = to_sqlite(store);
	struct td_metrics_result result = { 0 };
	char *pattern = metrics->node ? td_like_suffix_pattern(metrics->node) : NULL;
	struct query q;
	int ret = metrics->node && !pattern ? row_fail(s, -ENOMEM, err, errlen)
					    : begin_read(s, err, errlen);

	if (ret == 0) {
		query_init(&q, "SELECT " RUN_COLUMNS " FROM runs r WHERE 1");
		where_runs(&q, runs);
		has_metrics(&q, metrics, pattern);
		query_text(&q, " ORDER BY r.started_ns DESC, r.id DESC");
		limit_runs(&q, runs->limit);
		ret = query_run(s, &q, read_metrics_run, &result, err, errlen);
	}
	if (ret == 0 && result.count) {
		query_init(&q, "");
		metrics_of_runs(&q, runs, metrics, pattern);
		ret = query_run(s, &q, read_metrics_row, &result, err, errlen);
	}
	exec_sql(s, "ROLLBACK"); /* the transaction only read */
	free(pattern);
	return td_metrics_result_finish(&result, ret, out, count);
}

/* ---- deleting ---- */

static int sqlite_delete_batch(struct td_store *store, const struct td_run_filter *filter,
			       size_t batch, size_t *deleted, char *err, size_t errlen)
{
	struct sqlite_store *s = to_sqlite(store);
	struct query q;
	int rc = exec_sql(s, "BEGIN IMMEDIATE"), ret;

	if (rc != SQLITE_OK)
		return fail(s, rc, "cannot delete runs from database", err, errlen);
	/* The oldest first; ON DELETE CASCADE takes everything they hold. */
	query_init(&q, "DELETE FROM runs WHERE pk IN (SELECT r.pk FROM runs r WHERE 1");
	where_runs(&q, filter);
	query_text(&q, " ORDER BY r.started_ns, r.id");
	limit_runs(&q, batch);
	query_text(&q, ")");
	ret = query_run(s, &q, NULL, NULL, err, errlen);
	if (ret == 0) {
		*deleted = (size_t)sqlite3_changes(s->db);
		rc = exec_sql(s, "COMMIT");
		if (rc != SQLITE_OK)
			ret = fail(s, rc, "cannot delete runs from database", err, errlen);
	}
	if (ret < 0) {
		*deleted = 0;
		exec_sql(s, "ROLLBACK");
	}
	return ret;
}

const struct td_store_ops td_sqlite_ops = {
	.name = "sqlite",
	.open = sqlite_open,
	.close = sqlite_close,
	.write_run = sqlite_write_run,
	.read_run = sqlite_read_run,
	.walk_run = sqlite_walk_run,
	.list_runs = sqlite_list_runs,
	.find_run_ids = sqlite_find_run_ids,
	.read_metrics = sqlite_read_metrics,
	.delete_batch = sqlite_delete_batch,
};
