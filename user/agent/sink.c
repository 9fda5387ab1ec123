// SPDX-License-Identifier: BSD-3-Clause
/*
 * The agent's run sink: the configured store while it answers, a local
 * SQLite spool while it does not.
 *
 * Decisions:
 * - The spool is an ordinary SQLite td_store, so a spooled run is stored
 *   and read back by the same code as every other run, whole or not at
 *   all. Its file is made 0600 before SQLite opens it: SQLite gives its
 *   WAL and shared-memory files the mode of the database file.
 * - Order: spooled runs are replayed oldest first by start time, then id
 *   (td_store_list_runs() with oldest_first), the order every listing and
 *   deletion uses. Windows of one target never overlap, so this is the
 *   order they were written in; no spool sequence is needed.
 * - A run leaves the spool (td_store_delete_runs() by id) only after the
 *   store has it. A store that already holds the run (-EEXIST) has it, so
 *   a replay cut short between the two steps stores each run once.
 * - What a failure means: -EINVAL from the store is a bad run, returned
 *   to the caller and never spooled (a spooled run the store refuses is
 *   dropped from the spool and counted, or it would block the rest
 *   forever). Every other failure (ECONNREFUSED, ECONNRESET, EIO from a
 *   lost connection or a server shutting down, EBUSY, ENOSPC, a missing
 *   SQLite directory...) means the store cannot take runs now: the
 *   connection is closed, the run waits in the spool, and the next
 *   attempt reopens the store. Spooling never loses a run, so even a
 *   lasting problem (EACCES) is better spooled than refused; the stats
 *   show it (store_reachable, last_error, spool_depth).
 * - Back-off: while the store is down, writes try it again only 1 s after
 *   the failure, then 2, 4, ... up to 30 s between attempts; td_sink_flush()
 *   tries at once. A PostgreSQL server that does not answer at all holds
 *   an attempt for up to libpq's connect_timeout (10 s).
 * - A write replays at most REPLAY_PER_WRITE runs before its own, so a
 *   long outage does not stall the agent's loop on the first write after
 *   it; when runs remain, the new run is spooled behind them.
 * - spool_depth is counted once at open and kept in step with every write
 *   to and deletion from the spool.
 * - A SQLite store's file is known by its device and inode, taken when it
 *   opens and compared with its path's before and after every write (two
 *   stat calls: nothing beside a transaction). A file deleted or replaced
 *   (renamed over) under an open connection keeps taking writes that no
 *   one will ever read, so then the store is closed and opened anew at
 *   the path, and a run that went into the old file is written again.
 *   Closing first matters: the old connection checkpoints its WAL into
 *   the old file and removes the -wal and -shm files, which SQLite would
 *   otherwise replay into the new file. A file copied over in place
 *   keeps its inode and is not noticed; that is a corruption no check
 *   here can see. What was in the old file goes with it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sink.h"
#include "storage.h"

#define NS_PER_S 1000000000LL
#define RETRY_FIRST_NS (1 * NS_PER_S)
#define RETRY_MAX_NS (30 * NS_PER_S)
#define REPLAY_PER_WRITE 64
#define REPLAY_BATCH 16 /* spooled runs listed at a time */
/*
 * SQLite's page cache of the store and the spool. The agent writes and
 * never reads back, and a full default cache (2 MiB a connection) was
 * what grew its RSS by 9% over its first thousand windows; with 256 KiB
 * the RSS stays flat (docs/BENCHMARKS.md, "steady-state RSS").
 */
#define CACHE_KIB 256

struct td_sink {
	struct td_store_flags flags; /* the configuration, copied for reopening */
	char *db;
	char *spool_path;
	struct td_store *spool;
	struct td_store *store;      /* NULL while unreachable */
	int64_t retry_at_ns;         /* CLOCK_MONOTONIC: no write tries the store before */
	int64_t backoff_ns;          /* the wait after the next failure */
	uint64_t reported_rejected;  /* stats.rejected at the last td_sink_flush() */
	bool store_is_file;          /* a SQLite store: its file is watched */
	dev_t store_dev;             /* the file the store opened */
	ino_t store_ino;
	struct td_sink_stats stats;
};

static int64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

static void note_error(struct td_sink *sink, const char *message)
{
	snprintf(sink->stats.last_error, sizeof(sink->stats.last_error), "%s", message);
}

/* The store failed: close it and wait before the next try. */
static void store_down(struct td_sink *sink, const char *why)
{
	td_store_close(sink->store);
	sink->store = NULL;
	sink->stats.store_reachable = false;
	note_error(sink, why);
	sink->retry_at_ns = monotonic_ns() + sink->backoff_ns;
	sink->backoff_ns = sink->backoff_ns * 2 < RETRY_MAX_NS ? sink->backoff_ns * 2
							      : RETRY_MAX_NS;
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* The file the store just opened, to notice when it goes; PostgreSQL has none. */
static void remember_store_file(struct td_sink *sink)
{
	struct stat st;

	sink->store_is_file = stat(td_store_location(sink->store), &st) == 0;
	sink->store_dev = sink->store_is_file ? st.st_dev : 0;
	sink->store_ino = sink->store_is_file ? st.st_ino : 0;
}

/*
 * Whether the open store's file has left its path (deleted, or another
 * file put there): then the store is closed, the stats say so, and the
 * next open_store() opens whatever is at the path now, at once.
 */
static bool store_file_gone(struct td_sink *sink)
{
	const char *path;
	struct stat st;
	bool deleted;

	if (!sink->store || !sink->store_is_file)
		return false;
	path = td_store_location(sink->store);
	if (stat(path, &st) == 0) {
		if (st.st_dev == sink->store_dev && st.st_ino == sink->store_ino)
			return false;
		deleted = false;
	} else if (errno == ENOENT) {
		deleted = true;
	} else { /* cannot look (EACCES...): the next write says what is wrong */
		return false;
	}
	snprintf(sink->stats.store_file_note, sizeof(sink->stats.store_file_note),
		 "the database file %s was %s while the agent had it open; runs go to the file "
		 "at that path from now on (created anew when missing)", path,
		 deleted ? "deleted" : "replaced by another file");
	sink->stats.store_file_changes++;
	td_store_close(sink->store);
	sink->store = NULL;
	sink->retry_at_ns = 0;
	return true;
}

/*
 * Opens the store unless it is open, or it failed less than the back-off
 * ago and force is false (-EAGAIN, err untouched). -EINVAL with err when
 * the configuration cannot work; any failure leaves the store down. An
 * open store whose file has gone is opened anew.
 */
static int open_store(struct td_sink *sink, bool force, char *err, size_t errlen)
{
	int ret;

	if (sink->store && !store_file_gone(sink))
		return 0;
	if (!force && monotonic_ns() < sink->retry_at_ns)
		return -EAGAIN;
	sink->store = td_store_open_flags(&sink->flags, sink->db, TD_STORE_READ_WRITE, NULL, 0, err, errlen);
	ret = sink->store ? 0 : -errno;
	/* A SQLite store's location is its file; a PostgreSQL one is no path. */
	if (ret == 0 && same_file(td_store_location(sink->store), sink->spool_path)) {
		snprintf(err, errlen, "the spool '%s' is the database itself; give the spool a "
			 "file of its own", sink->spool_path);
		ret = -EINVAL;
	}
	if (ret < 0) {
		store_down(sink, err);
		return ret;
	}
	remember_store_file(sink);
	sink->stats.store_reachable = true;
	sink->backoff_ns = RETRY_FIRST_NS;
	return 0;
}

/*
 * 0 when the store has run (also when it had it before), -EINVAL when it
 * refuses the run, -EAGAIN when it cannot take runs now (it is closed).
 * A run written into a file that went meanwhile went with it: it is
 * written again into the file at the path now.
 */
static int write_to_store(struct td_sink *sink, const struct td_run *run,
			  char *err, size_t errlen)
{
	for (;;) {
		int ret = td_store_write_run(sink->store, run, err, errlen);

		if (ret != 0 && ret != -EEXIST && ret != -EINVAL) {
			store_down(sink, err);
			return -EAGAIN;
		}
		if (ret == -EINVAL || !store_file_gone(sink))
			return ret == -EEXIST ? 0 : ret;
		if (open_store(sink, true, err, errlen) < 0)
			return -EAGAIN;
	}
}

static int spool_run(struct td_sink *sink, const struct td_run *run, char *err, size_t errlen)
{
	int ret = td_store_write_run(sink->spool, run, err, errlen);

	if (ret == -EEXIST) /* written twice while the store was down: it waits already */
		return 0;
	if (ret == 0) {
		sink->stats.spooled++;
		sink->stats.spool_depth++;
	}
	return ret;
}

static int unspool(struct td_sink *sink, const char *id, char *err, size_t errlen)
{
	struct td_run_filter one = { .run_id = id };
	size_t deleted = 0;
	int ret = td_store_delete_runs(sink->spool, &one, 1, &deleted, err, errlen);

	if (deleted && sink->stats.spool_depth)
		sink->stats.spool_depth--;
	return ret;
}

/* The store refused a spooled run, which has left the spool: count it
 * and keep its reason. */
static void count_rejected(struct td_sink *sink, const char *id, const char *why)
{
	char message[sizeof(sink->stats.last_error)];

	snprintf(message, sizeof(message), "the store refused spooled run %s, which was dropped "
		 "from the spool: %s", id, why);
	note_error(sink, message);
	sink->stats.rejected++;
}

/* Moves one spooled run into the store: 0 when it left the spool,
 * -EAGAIN when the store went away, another error when the spool failed. */
static int replay_one(struct td_sink *sink, const char *id, char *err, size_t errlen)
{
	char why[sizeof(sink->stats.last_error)] = "";
	struct td_run *run = NULL;
	int ret = td_store_read_run(sink->spool, id, &run, err, errlen), stored;

	if (ret < 0)
		return ret;
	stored = write_to_store(sink, run, err, errlen);
	td_run_free(run);
	if (stored == -EAGAIN)
		return stored;
	if (stored == -EINVAL)
		snprintf(why, sizeof(why), "%s", err);
	ret = unspool(sink, id, err, errlen);
	if (ret == 0 && stored == 0)
		sink->stats.replayed++;
	else if (ret == 0)
		count_rejected(sink, id, why);
	return ret;
}

/*
 * Replays up to max spooled runs, oldest first: 0 when the spool is empty
 * afterwards, -EAGAIN when runs remain (the store went away, or max was
 * reached), another negative errno when the spool failed.
 */
static int replay(struct td_sink *sink, size_t max, char *err, size_t errlen)
{
	struct td_run_filter oldest = { .oldest_first = true };
	struct td_run_summary *runs;
	size_t count;
	int ret = 0;

	while (ret == 0 && sink->stats.spool_depth) {
		if (!max)
			return -EAGAIN;
		oldest.limit = max < REPLAY_BATCH ? max : REPLAY_BATCH;
		ret = td_store_list_runs(sink->spool, &oldest, &runs, &count, err, errlen);
		if (ret < 0)
			return ret;
		if (!count) /* the spool is the truth */
			sink->stats.spool_depth = 0;
		for (size_t i = 0; i < count && ret == 0; i++, max--)
			ret = replay_one(sink, runs[i].id, err, errlen);
		td_run_summaries_free(runs, count);
	}
	return ret;
}

int td_sink_write(struct td_sink *sink, const struct td_run *run, char *err, size_t errlen)
{
	int ret;

	if (!sink || !run) {
		snprintf(err, errlen, "cannot store a run without a sink and a run; this is a bug "
			 "in the caller");
		return -EINVAL;
	}
	if (open_store(sink, false, err, errlen) == 0 &&
	    replay(sink, REPLAY_PER_WRITE, err, errlen) == 0) {
		ret = write_to_store(sink, run, err, errlen);
		if (ret == 0)
			sink->stats.stored++;
		if (ret != -EAGAIN)
			return ret;
	}
	return spool_run(sink, run, err, errlen);
}

int td_sink_replay(struct td_sink *sink, char *err, size_t errlen)
{
	/* also when the spool is empty: a store file that went is created anew */
	if (open_store(sink, false, err, errlen) < 0)
		return sink->stats.spool_depth ? -EAGAIN : 0;
	return replay(sink, REPLAY_PER_WRITE, err, errlen);
}

int td_sink_flush(struct td_sink *sink, char *err, size_t errlen)
{
	int ret;

	if (!sink) {
		snprintf(err, errlen, "cannot flush without a sink; this is a bug in the caller");
		return -EINVAL;
	}
	ret = open_store(sink, true, err, errlen);
	if (ret < 0)
		return sink->stats.spool_depth ? -EAGAIN : 0;
	ret = replay(sink, SIZE_MAX, err, errlen);
	if (ret == 0 && sink->stats.rejected > sink->reported_rejected) {
		snprintf(err, errlen, "%s", sink->stats.last_error);
		ret = -EINVAL;
	}
	sink->reported_rejected = sink->stats.rejected;
	return ret;
}

void td_sink_stats(const struct td_sink *sink, struct td_sink_stats *out)
{
	static const struct td_sink_stats none;

	*out = sink ? sink->stats : none;
}

/* ---- opening and closing ---- */

int td_sink_default_spool_path(const struct td_sink_config *cfg, char *buf, size_t len, char *err,
			       size_t errlen)
{
	const char *state = getenv("STATE_DIRECTORY"), *home = getenv("HOME"), *backend;
	size_t used;

	if (td_store_flags_backend(&cfg->store, cfg->db, &backend, err, errlen))
		return -EINVAL;
	if (!strcmp(backend, "sqlite")) { /* beside the database: its runs and no other's */
		int ret = td_store_default_path(cfg->db, TD_STORE_READ_WRITE, buf, len, err, errlen);

		if (ret)
			return ret;
		if (strlen(buf) + sizeof(".spool") > len) {
			snprintf(err, errlen, "the database's path is too long for its spool beside it: give the "
				 "spool a place with --spool PATH");
			return -ENAMETOOLONG;
		}
		strcat(buf, ".spool");
		return 0;
	}

	if (state && state[0]) {
		snprintf(buf, len, "%.*s/spool.db", (int)strcspn(state, ":"), state);
		return 0;
	}
	if (!home || !home[0]) {
		snprintf(err, errlen, "neither STATE_DIRECTORY nor HOME is set: give the spool a place with --spool PATH");
		return -EINVAL;
	}
	used = snprintf(buf, len, "%s/.topdown", home);
	if (used + sizeof("/spool.db") > len) {
		snprintf(err, errlen, "HOME is too long a path for the spool: give it a place with --spool PATH");
		return -ENAMETOOLONG;
	}
	if (mkdir(buf, 0700) && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %.300s: %s; give the spool a place with --spool PATH", buf, strerror(errno));
		return -errno;
	}
	strcat(buf, "/spool.db");
	return 0;
}


/* Creates the spool file 0600, or makes an existing one 0600, before
 * SQLite opens it and its WAL files take its mode. */
static int make_private(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	int ret = fd >= 0 && fchmod(fd, 0600) == 0 ? 0 : -errno;

	if (ret < 0)
		snprintf(err, errlen, "cannot use '%s' as the spool: %s; give the agent a spool "
			 "file in a directory it can write", path, strerror(-ret));
	if (fd >= 0)
		close(fd);
	return ret;
}

/* How many runs wait in the spool, once at open. */
static int count_spooled(struct td_sink *sink, char *err, size_t errlen)
{
	struct td_run_summary *runs = NULL;
	int ret = td_store_list_runs(sink->spool, NULL, &runs, &sink->stats.spool_depth,
				     err, errlen);

	td_run_summaries_free(runs, sink->stats.spool_depth);
	return ret;
}

static int open_spool(struct td_sink *sink, char *err, size_t errlen)
{
	struct td_store_config cfg = { .backend = "sqlite", .path = sink->spool_path, .cache_kib = CACHE_KIB };
	char why[512];
	int ret = make_private(sink->spool_path, err, errlen);

	if (ret < 0)
		return ret;
	sink->spool = td_store_open(&cfg, why, sizeof(why));
	ret = sink->spool ? count_spooled(sink, why, sizeof(why)) : -errno;
	if (ret < 0)
		snprintf(err, errlen, "cannot use the spool: %s", why);
	return ret;
}

static char *copy_or_null(const char *text, bool *failed)
{
	char *copy = text ? strdup(text) : NULL;

	*failed |= text && !copy;
	return copy;
}

static int copy_config(struct td_sink *sink, const struct td_sink_config *cfg,
		       char *err, size_t errlen)
{
	bool failed = false;

	sink->flags.backend = copy_or_null(cfg->store.backend, &failed);
	sink->flags.dsn = copy_or_null(cfg->store.dsn, &failed);
	sink->flags.cache_kib = CACHE_KIB;
	sink->db = copy_or_null(cfg->db, &failed);
	sink->spool_path = copy_or_null(cfg->spool_path, &failed);
	if (!failed)
		return 0;
	snprintf(err, errlen, "out of memory opening the run sink; free memory and retry");
	return -ENOMEM;
}

struct td_sink *td_sink_open(const struct td_sink_config *cfg, char *err, size_t errlen)
{
	struct td_sink *sink;
	int ret;

	if (!cfg || !cfg->spool_path || !*cfg->spool_path) {
		snprintf(err, errlen, "the run sink needs a spool file for runs the store cannot "
			 "take; give the agent a spool path");
		return NULL;
	}
	sink = calloc(1, sizeof(*sink));
	if (!sink) {
		snprintf(err, errlen, "out of memory opening the run sink; free memory and retry");
		return NULL;
	}
	sink->backoff_ns = RETRY_FIRST_NS;
	ret = copy_config(sink, cfg, err, errlen);
	if (ret == 0)
		ret = open_spool(sink, err, errlen);
	/* Only a configuration that cannot work fails here: a store that is
	 * down now is tried again later. */
	if (ret == 0 && open_store(sink, true, err, errlen) == -EINVAL)
		ret = -EINVAL;
	if (ret < 0) {
		td_sink_close(sink);
		return NULL;
	}
	return sink;
}

void td_sink_close(struct td_sink *sink)
{
	if (!sink)
		return;
	td_store_close(sink->store);
	td_store_close(sink->spool);
	free((char *)sink->flags.backend);
	free((char *)sink->flags.dsn);
	free(sink->db);
	free(sink->spool_path);
	free(sink);
}
