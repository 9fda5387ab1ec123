/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Storage of runs. Callers see one interface; the backend (SQLite or
 * PostgreSQL) is chosen by name when the store is opened, and both answer
 * every call the same way. Storage keeps what it is given: it knows the
 * shape of a run, not what the numbers mean.
 *
 * Every function returns 0 or a negative errno and, on failure, writes one
 * sentence naming the problem and its fix into err.
 */
#ifndef TOPDOWN_STORAGE_H
#define TOPDOWN_STORAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "labels.h"
#include "run.h"

struct td_store;

/*
 * What a command does with the store. A writer (collect, agent, import,
 * gc) creates the SQLite file or the PostgreSQL tables when missing and
 * migrates an older schema. A reader (list, query, export, MCP, ...) opens
 * what exists and never changes it: SQLite opens the file read-only and
 * PostgreSQL's transactions are read-only, so a user who may only read
 * the store can still query it, and a mistyped path is an error rather
 * than a new, empty database.
 */
enum td_store_mode {
	TD_STORE_READ_WRITE, /* create and migrate when needed; writes allowed */
	TD_STORE_READ_ONLY,  /* open what exists; writes fail with -EROFS */
};

struct td_store_config {
	const char *backend; /* NULL or "sqlite" (default), or "postgresql" */
	const char *path;    /* SQLite file; NULL: td_store_default_path(NULL, ...) */
	const char *dsn;     /* PostgreSQL connection string, as libpq takes it:
			      * "postgresql://user@host:5432/db" or "host=... dbname=..." */
	/*
	 * SQLite's page cache for this connection in KiB; 0: SQLite's own
	 * default (2 MiB). A cache fills as the file grows and then stays
	 * full, so a long-lived writer that never reads back (the agent)
	 * keeps it small to keep its memory flat. PostgreSQL ignores it.
	 */
	unsigned cache_kib;
	enum td_store_mode mode; /* 0: TD_STORE_READ_WRITE */
};

/*
 * The SQLite path: flag_path (--db) if set, else $TOPDOWN_DB_PATH, else
 * $HOME/.topdown/data.db (for a writer, the directory is created 0700
 * when missing). -EINVAL when flag_path is empty: --db "" names no file.
 */
int td_store_default_path(const char *flag_path, enum td_store_mode mode, char *buf, size_t len,
			  char *err, size_t errlen);

/*
 * Opens the store, for cfg->mode (a writer creates and migrates it when
 * needed); cfg may be NULL for all defaults. NULL on failure, with errno
 * saying why: EINVAL for a configuration that cannot work (an unknown
 * backend, a missing or malformed connection string), ECONNREFUSED when
 * the PostgreSQL server does not accept the connection, ENOENT when a
 * reader finds no store (no SQLite file, no topdown tables), else the
 * error of the step that failed (EACCES for a SQLite file, EIO, EPROTO
 * for a newer schema, or an older one a reader cannot migrate).
 */
struct td_store *td_store_open(const struct td_store_config *cfg, char *err, size_t errlen);

/* 0 when name is a backend td_store_open knows, else -EINVAL with err
 * listing the known ones. */
int td_store_backend_check(const char *name, char *err, size_t errlen);
void td_store_close(struct td_store *store);

/*
 * Where the store is, for messages: the SQLite file, or the PostgreSQL
 * user, host, port and database (never the password).
 */
const char *td_store_location(const struct td_store *store);

/* The schema version the store is at: it was migrated to it when opened. */
int td_store_schema_version(const struct td_store *store);

/* The mode the store was opened in. */
enum td_store_mode td_store_mode(const struct td_store *store);

/*
 * A time limit on what the store does next: a read or write still running
 * at deadline_ns (CLOCK_MONOTONIC) stops, undoes its transaction and fails
 * with -ETIMEDOUT; 0 lifts the limit. Setting it clears the flag
 * td_store_timed_out() reads, which says whether an operation stopped so
 * since. A server answering many clients bounds each request with it.
 */
void td_store_set_deadline(struct td_store *store, int64_t deadline_ns);
bool td_store_timed_out(const struct td_store *store);

/*
 * Writes the whole run in one transaction: on any failure nothing of it
 * remains. -EEXIST when a run with the same id is already stored; -EINVAL
 * when the run is inconsistent (a count without its array, a repeated tid
 * in one span, a label that is not UTF-8); -EBUSY when another process
 * held the database longer than the 5 s busy timeout.
 */
int td_store_write_run(struct td_store *store, const struct td_run *run,
		       char *err, size_t errlen);

/*
 * Reads the full run back into *out (free it with td_run_free): threads
 * and metrics in the order they were written, intervals by seq.
 * -ENOENT when no run has that id.
 */
int td_store_read_run(struct td_store *store, const char *run_id, struct td_run **out,
		      char *err, size_t errlen);

/*
 * What td_store_walk_run() hands over, part by part, so that a run of any
 * length is read in little memory (export):
 *   run       the run without its intervals and metric rows: the summary,
 *             event names and whole-run thread rows (no profile);
 *   interval  each interval with its thread rows, by seq (NULL: intervals
 *             are not read at all);
 *   metric    each metric row, in written order (NULL: not read).
 * What they get lives until they return. A callback returns 0 to go on,
 * or a negative errno with err filled to stop the walk, which returns it.
 */
struct td_run_visitor {
	int (*run)(void *ctx, const struct td_run *run, char *err, size_t errlen);
	int (*interval)(void *ctx, const struct td_run *run, const struct td_interval *iv,
			char *err, size_t errlen);
	int (*metric)(void *ctx, const struct td_run *run, const struct td_metric_row *row,
		      char *err, size_t errlen);
	void *ctx;
};

/*
 * Reads the run as td_store_read_run() would, in one read transaction,
 * handing each part to v as it comes instead of keeping it: memory stays
 * the size of one interval whatever the run's length. The values are
 * those td_store_read_run() gives. -ENOENT when no run has that id.
 */
int td_store_walk_run(struct td_store *store, const char *run_id, const struct td_run_visitor *v,
		      char *err, size_t errlen);

struct td_run_filter {
	const struct td_labels *labels; /* all must match (AND); NULL or empty: any */
	const char *process;            /* exact; NULL: any */
	const char *run_id;             /* exact (see td_store_resolve_run_id); NULL: any */
	int64_t since_ns;               /* runs started at or after (Unix epoch ns); 0: any */
	int64_t before_ns;              /* runs started before (Unix epoch ns); 0: any */
	size_t limit;                   /* the newest this many; 0: no limit */
	bool oldest_first;              /* td_store_list_runs(): the oldest this many,
					 * oldest first */
};

/* What a listing shows of a run, without its threads and metrics. */
struct td_run_summary {
	char id[TD_RUN_ID_LEN];
	int64_t started_ns, ended_ns;
	char *process;
	int level;
	char *collector;
	struct td_labels labels;
	uint64_t dropped;
	bool partial;
	size_t nr_threads;
};

/*
 * The runs matching filter (NULL: all), newest first (oldest first with
 * filter->oldest_first), in a new array of *count entries (NULL when
 * none). Free with td_run_summaries_free().
 */
int td_store_list_runs(struct td_store *store, const struct td_run_filter *filter,
		       struct td_run_summary **out, size_t *count, char *err, size_t errlen);
void td_run_summaries_free(struct td_run_summary *summaries, size_t count);
/* One summary: a deep copy (-ENOMEM, dst then holds nothing), and freeing
 * what it points to. */
int td_run_summary_copy(struct td_run_summary *dst, const struct td_run_summary *src);
void td_run_summary_release(struct td_run_summary *summary);

/* How a scope is spelled in the database and in exports: "thread",
 * "group" or "process". */
const char *td_scope_name(enum td_metric_scope scope);

/* Run ids as users type them: the whole id, or a prefix of at least this
 * many characters that only one stored run starts with. */
#define TD_RUN_ID_MIN_PREFIX 8

/*
 * The stored run text names, copied into id. -EINVAL when text cannot be
 * a run id or is a prefix shorter than TD_RUN_ID_MIN_PREFIX; -ENOENT when
 * no run matches; -ENOTUNIQ when several do (err lists some of them).
 */
int td_store_resolve_run_id(struct td_store *store, const char *text, char id[TD_RUN_ID_LEN],
			    char *err, size_t errlen);

/*
 * Which whole-run metric rows td_store_read_metrics() returns (interval
 * rows are never returned): those of one scope, narrowed by the rest.
 */
struct td_metric_filter {
	enum td_metric_scope scope;
	const char *scope_key; /* exact; NULL: every key of that scope */
	const char *node;      /* a dotted path, or its end after a dot
				* ("DRAM_Bound"); NULL: every node */
	int min_level;         /* rows with level >= min_level (1: tree nodes only) */
	int max_level;         /* rows with level <= max_level; 0: no bound */
	double min_value;      /* rows with value >= min_value; NaN or 0: no bound */
};

/* A run and the metric rows of it a filter asked for, in written order. */
struct td_run_metrics {
	struct td_run_summary run;
	size_t nr_rows;
	struct td_metric_row *rows;
	struct td_name_index strings; /* the rows' strings, each distinct one once */
};

/*
 * The runs matching runs (NULL: all), newest first, each with its rows
 * matching metrics (NULL: every process row); runs without such rows are
 * left out (runs->limit counts the runs returned). A new array of *count entries (NULL when
 * none); free it with td_run_metrics_free().
 */
int td_store_read_metrics(struct td_store *store, const struct td_run_filter *runs,
			  const struct td_metric_filter *metrics,
			  struct td_run_metrics **out, size_t *count, char *err, size_t errlen);
void td_run_metrics_free(struct td_run_metrics *items, size_t count);

/*
 * The deepest crossing rows of many runs, added up where they are stored.
 * A sample is the rows of one run for one scope key (td_store_read_metrics
 * with the same filters, split by scope key); a row of a sample is a
 * deepest crossing one when its threshold is crossed and no crossing row
 * of the sample lies under it (its path starts with the row's path and a
 * dot). For each path that is one somewhere, the sums below.
 *
 * Values are added one at a time in the order the samples come in: the
 * runs as td_store_read_metrics gives them (newest first), a run's samples
 * by scope key in byte order. A caller adding the same rows in that order
 * gets the same bits, whichever backend answered.
 */
struct td_crossing_sum {
	char *path;
	int level;              /* of the first of its rows */
	size_t nr_rows;         /* samples where it is the deepest crossing row */
	size_t nr_values;       /* those of them with a value (not NaN) */
	double sum;             /* of those values, +0 when none */
	double min_confidence;  /* the lowest that is a number; NaN: none */
	bool nan_confidence;    /* a row had no confidence (NaN) */
};

struct td_crossing_sums {
	size_t nr_runs, nr_samples; /* that have rows matching the filters */
	size_t count;
	struct td_crossing_sum *items; /* by path, in byte order */
};

/*
 * The sums over the runs matching runs (NULL: all) and their rows matching
 * metrics; free with td_crossing_sums_free(). -EOPNOTSUPP when the backend
 * does not add up where the rows are (SQLite, whose rows are read
 * in-process anyway): the caller then reads the rows itself.
 */
int td_store_sum_deepest_crossings(struct td_store *store, const struct td_run_filter *runs,
				   const struct td_metric_filter *metrics,
				   struct td_crossing_sums **out, char *err, size_t errlen);
void td_crossing_sums_free(struct td_crossing_sums *sums);

/*
 * Deletes the runs matching filter (NULL or empty: every run) with
 * everything they hold, oldest first, batch runs per transaction, so a
 * collector writing at the same time never waits long. *deleted counts
 * the runs gone, also when a later batch fails. filter->limit is ignored.
 */
int td_store_delete_runs(struct td_store *store, const struct td_run_filter *filter,
			 size_t batch, size_t *deleted, char *err, size_t errlen);

/* The same, telling progress(ctx, deleted so far) after each batch (gc's progress line). */
typedef void (*td_delete_progress_fn)(void *ctx, size_t deleted);
int td_store_delete_runs_with(struct td_store *store, const struct td_run_filter *filter, size_t batch,
			      td_delete_progress_fn progress, void *ctx, size_t *deleted, char *err, size_t errlen);

#endif
