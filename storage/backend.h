/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a storage backend provides; private to storage/. storage.c checks
 * arguments and dispatches through these operations, so a backend only
 * sees valid pointers, non-NULL filters and zeroed results.
 */
#ifndef TOPDOWN_STORAGE_BACKEND_H
#define TOPDOWN_STORAGE_BACKEND_H

#include "array.h"
#include "storage.h"

struct td_store_ops {
	const char *name; /* as given in td_store_config.backend */
	struct td_store *(*open)(const struct td_store_config *cfg, char *err, size_t errlen);
	void (*close)(struct td_store *store);
	int (*write_run)(struct td_store *store, const struct td_run *run,
			 char *err, size_t errlen);
	int (*read_run)(struct td_store *store, const char *run_id, struct td_run **out,
			char *err, size_t errlen);
	int (*walk_run)(struct td_store *store, const char *run_id, const struct td_run_visitor *v,
			char *err, size_t errlen);
	int (*list_runs)(struct td_store *store, const struct td_run_filter *filter,
			 struct td_run_summary **out, size_t *count, char *err, size_t errlen);
	/* Up to max ids in [low, high) (byte order), ascending, into ids. */
	int (*find_run_ids)(struct td_store *store, const char *low, const char *high,
			    char (*ids)[TD_RUN_ID_LEN], size_t max, size_t *count,
			    char *err, size_t errlen);
	int (*read_metrics)(struct td_store *store, const struct td_run_filter *runs,
			    const struct td_metric_filter *metrics, struct td_run_metrics **out,
			    size_t *count, char *err, size_t errlen);
	/* NULL: td_store_sum_deepest_crossings() says -EOPNOTSUPP. */
	int (*sum_deepest_crossings)(struct td_store *store, const struct td_run_filter *runs,
				     const struct td_metric_filter *metrics,
				     struct td_crossing_sums *out, char *err, size_t errlen);
	/* One transaction: the oldest up to batch runs matching filter. */
	int (*delete_batch)(struct td_store *store, const struct td_run_filter *filter,
			    size_t batch, size_t *deleted, char *err, size_t errlen);
};

/* The first member of every backend's state: a pointer to the state is a
 * pointer to this, and the backend casts it back. */
struct td_store {
	const struct td_store_ops *ops;
	const char *location; /* set by the backend: see td_store_location() */
	int schema_version;   /* set by the backend once migrated: its number of migrations */
	enum td_store_mode mode; /* set by td_store_open() */
	int64_t deadline_ns;  /* td_store_set_deadline(); 0: none */
	bool timed_out;       /* an operation stopped at the deadline since it was set */
};

extern const struct td_store_ops td_sqlite_ops;
extern const struct td_store_ops td_postgres_ops;

/* ---- helpers both backends share (storage.c) ---- */

/* The time left before the store's deadline: INT64_MAX when there is
 * none, 0 once it has come (and then store->timed_out is set). What a
 * failure it caused tells the caller: */
int64_t td_store_time_left_ns(struct td_store *store);
#define TD_STORE_DEADLINE_FIX "the request's time limit ran out; narrow the request (labels, " \
			      "a process, a shorter time window) or raise the limit"

/* What a failed open returns: NULL, with errno set to -ret as
 * td_store_open() promises. */
struct td_store *td_store_open_failed(int ret);

/* A scope's name back to the scope (-1: unknown). */
int td_scope_parse(const char *name);

/* Labels as a JSON object and event names as a JSON array, in order; NULL
 * when a string is not UTF-8 (JSON cannot hold it) or memory ran out. */
char *td_labels_to_json(const struct td_labels *labels);
char *td_event_names_to_json(const struct td_run *run);
/* -ENOMEM or -EINVAL, and err, for a run whose labels or event names did
 * not become JSON; errno set to 0 before the two calls tells which. */
int td_run_json_failed(const struct td_run *run, char *err, size_t errlen);
/* Their way back; -EIO when the text is not what *_to_json writes. */
int td_labels_from_json(const char *text, struct td_labels *labels);
int td_event_names_from_json(const char *text, struct td_run *run);

/*
 * A stack's frame indexes as stored: decimal, comma-separated, outermost
 * first ("0,4,17"). The text is malloc'd (NULL when out of memory); the
 * way back gives -EIO for text it did not write or an index at or above
 * nr_frames, and *frames is malloc'd.
 */
char *td_frame_list_to_text(const uint32_t *frames, uint32_t nr);
int td_frame_list_from_text(const char *text, size_t nr_frames, uint32_t **frames, uint32_t *nr);

/*
 * Rebuilding a run from its rows, in this order: td_run_take_summary()
 * moves the summary's fields into run and sizes the whole-run thread
 * array; td_run_append_interval() adds the intervals in seq order with
 * their thread arrays; td_run_thread_slot() is where the thread row of
 * a span at an ordinal goes (NULL when there is no such place).
 */
int td_run_take_summary(struct td_run *run, struct td_run_summary *summary);
int td_run_append_interval(struct td_run *run, size_t *cap, int64_t seq, int64_t start_ns,
			   int64_t end_ns, int64_t nr_threads);
struct td_thread_row *td_run_thread_slot(struct td_run *run, int64_t interval_seq,
					 int64_t ordinal);

/*
 * td_store_walk_run()'s intervals, one at a time: a backend reads the
 * intervals joined with their thread rows in seq order and, for each row,
 * calls td_interval_walk_at() with its interval (which hands the previous
 * interval to the visitor when seq is a new one), then puts the thread
 * row, if any, into td_run_thread_slot(&w->window, seq, ordinal) as
 * read_run does. td_interval_walk_finish() hands the last one over.
 * A visitor's failure is kept in w->ret and w->err (the backend's row
 * loop must stop and return it, whatever it reports for its own errors).
 */
struct td_interval_walk {
	const struct td_run *run;        /* the run as the visitor saw it */
	const struct td_run_visitor *v;
	struct td_run window;            /* run, with the interval being read as its only one */
	struct td_interval iv;
	size_t cap;                      /* of iv.threads */
	int ret;                         /* the visitor's failure */
	char err[512];
};

void td_interval_walk_init(struct td_interval_walk *w, const struct td_run *run,
			   const struct td_run_visitor *v);
/* 0, -EIO for an interval out of order, -ENOMEM, or the visitor's failure (w->ret). */
int td_interval_walk_at(struct td_interval_walk *w, int64_t seq, int64_t start_ns, int64_t end_ns,
			int64_t nr_threads);
int td_interval_walk_finish(struct td_interval_walk *w);
void td_interval_walk_release(struct td_interval_walk *w);

/* The LIKE pattern "%.node" (escape character backslash) that matches
 * paths ending in ".node"; NULL when out of memory. */
char *td_like_suffix_pattern(const char *node);


/*
 * Collects td_store_read_metrics() results from two queries: first the
 * runs in their final order, each with its key (the result takes the
 * summary over, also on failure), then the metric rows grouped by run key
 * (copied). td_metrics_result_finish() hands the runs that got rows to the
 * caller, or frees everything when ret is an error, and returns ret.
 */
struct td_metrics_result {
	struct td_run_metrics *items;
	long long *keys;       /* keys[i]: the run of items[i] */
	size_t count, cap, key_cap;
	size_t *by_key;        /* indexes of items sorted by key, from the first row on */
	size_t current;        /* the item rows go to; count: none yet */
	struct td_run rows;    /* its rows so far, grown by td_run_add_metric() */
};

int td_metrics_result_add_run(struct td_metrics_result *r, long long key,
			      struct td_run_summary *summary);
/* -EIO for a key no run has. */
int td_metrics_result_add_row(struct td_metrics_result *r, long long key,
			      const struct td_metric_row *row);
int td_metrics_result_finish(struct td_metrics_result *r, int ret,
			     struct td_run_metrics **out, size_t *count);

#endif
