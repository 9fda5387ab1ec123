/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where the agent's runs go: the configured store (SQLite or PostgreSQL,
 * chosen by the same flags and environment as every command) while it is
 * reachable; a local SQLite spool while it is not. Spooled runs are
 * replayed into the store oldest first once it answers again.
 *
 * Nothing is lost and nothing is stored twice: a run goes into the spool
 * before anything else is tried when the store is down, leaves it only
 * after the store has it, and a run the store already holds (-EEXIST:
 * run ids are the key) counts as stored. A replay cut short by a crash
 * therefore stores each run exactly once when it resumes.
 *
 * A SQLite store's file is watched (device and inode, at every write and
 * replay): deleted or replaced under the sink, it is closed and opened
 * anew at its path, which creates it; a run written into the old file
 * after it went is written again into the new one (td_sink_stats says
 * when, for the caller to log).
 */
#ifndef TOPDOWN_SINK_H
#define TOPDOWN_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run.h"
#include "store_open.h"

struct td_sink_config {
	struct td_store_flags store; /* --backend and --dsn */
	const char *db;              /* --db (SQLite), or NULL */
	const char *spool_path;      /* the spool's SQLite file; created 0600 when missing */
};

/*
 * Where the runs of cfg's store wait unless --spool says otherwise, for
 * the agent and collect alike, so each replays what the other left. A
 * spool belongs to one store: it never replays into another. So a SQLite
 * store's spool sits beside its file (DB.spool: /var/lib/topdown/runs.db
 * has /var/lib/topdown/runs.db.spool); PostgreSQL's, one fleet store per
 * host, is $STATE_DIRECTORY/spool.db under systemd (the first of its
 * paths), else ~/.topdown/spool.db (~/.topdown made 0700 when missing).
 * 0, or -errno with err.
 */
int td_sink_default_spool_path(const struct td_sink_config *cfg, char *buf, size_t len, char *err,
			       size_t errlen);

struct td_sink_stats {
	uint64_t stored;      /* runs the store took directly */
	uint64_t spooled;     /* runs that went to the spool */
	uint64_t replayed;    /* spooled runs the store has since taken */
	uint64_t rejected;    /* spooled runs the store refused as invalid (-EINVAL),
			       * dropped from the spool */
	size_t spool_depth;   /* runs waiting in the spool now */
	bool store_reachable; /* at the last attempt */
	char last_error[512]; /* why the store last failed to take a run; "" if never */
	uint64_t store_file_changes; /* times the SQLite store's file was found deleted or
				      * replaced, and opened anew at its path */
	char store_file_note[512];   /* what happened the last time; "" if never */
};

/*
 * Opens the spool and tries the store. An unreachable store is not an
 * error here (runs wait in the spool; td_sink_stats() says why); a wrong
 * configuration (unknown backend, --db with PostgreSQL, a malformed
 * connection string, the spool being the SQLite store itself) or an
 * unusable spool is: NULL with err. One thread uses a sink at a time.
 */
struct td_sink *td_sink_open(const struct td_sink_config *cfg, char *err, size_t errlen);
void td_sink_close(struct td_sink *sink);

/*
 * Stores run: replays the spool first when the store is reachable (so the
 * order holds), else spools it. 0 when the run is in the store or the
 * spool; negative with err when it is in neither (the spool failed too,
 * or the run is invalid: -EINVAL). While the store is down it is tried
 * again only after a back-off (1 s, doubling up to 30 s); a write replays
 * at most 64 spooled runs, and spools run when more remain.
 */
int td_sink_write(struct td_sink *sink, const struct td_run *run, char *err, size_t errlen);

/*
 * Replays up to 64 spooled runs when the back-off allows a try: what an
 * idle agent calls when a window has no run to write, so the spool still
 * drains (and a deleted store file is still created anew). 0 when the
 * spool is empty afterwards; -EAGAIN while runs remain.
 */
int td_sink_replay(struct td_sink *sink, char *err, size_t errlen);

/*
 * Tries the store now, whatever the back-off, and replays the whole spool.
 * 0 when it is empty afterwards; -EAGAIN while the store is still
 * unreachable; -EINVAL when the store refused spooled runs since the last
 * flush (they left the spool; err names the last one).
 */
int td_sink_flush(struct td_sink *sink, char *err, size_t errlen);

void td_sink_stats(const struct td_sink *sink, struct td_sink_stats *out);

#endif
