/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Storage of runs. Callers see one interface; the backend (SQLite today)
 * is chosen by name when the store is opened. Storage keeps what it is
 * given: it knows the shape of a run, not what the numbers mean.
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

struct td_store_config {
	const char *backend; /* NULL or "sqlite" (default) */
	const char *path;    /* SQLite file; NULL: td_store_default_path(NULL, ...) */
};

/*
 * The SQLite path: flag_path (--db) if set, else $TOPDOWN_DB_PATH, else
 * $HOME/.topdown/data.db (the directory is created 0700 when missing).
 */
int td_store_default_path(const char *flag_path, char *buf, size_t len,
			  char *err, size_t errlen);

/* Opens (creating and migrating when needed) the store; NULL on failure.
 * cfg may be NULL for all defaults. */
struct td_store *td_store_open(const struct td_store_config *cfg, char *err, size_t errlen);
void td_store_close(struct td_store *store);

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

struct td_run_filter {
	const struct td_labels *labels; /* all must match (AND); NULL or empty: any */
	const char *process;            /* exact; NULL: any */
	int64_t since_ns;               /* runs started at or after (Unix epoch ns); 0: any */
	size_t limit;                   /* 0: no limit */
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
 * The runs matching filter (NULL: all), newest first, in a new array of
 * *count entries (NULL when none). Free with td_run_summaries_free().
 */
int td_store_list_runs(struct td_store *store, const struct td_run_filter *filter,
		       struct td_run_summary **out, size_t *count, char *err, size_t errlen);
void td_run_summaries_free(struct td_run_summary *summaries, size_t count);

#endif
