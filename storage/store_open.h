/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Opening the store the same way in every command: --db, --backend and
 * --dsn on the command line (each command's option table has them, from
 * user/cli/cli_options.h's TD_OPTS_STORE), else the TOPDOWN_DB_PATH,
 * TOPDOWN_BACKEND and TOPDOWN_DSN environment.
 */
#ifndef TOPDOWN_STORE_OPEN_H
#define TOPDOWN_STORE_OPEN_H

#include <stddef.h>

#include "storage.h"

struct td_store_flags {
	const char *backend; /* --backend: "sqlite" or "postgresql" */
	const char *dsn;     /* --dsn: a PostgreSQL connection string */
	unsigned cache_kib;  /* td_store_config.cache_kib; no flag sets it */
};

/*
 * The backend a command uses: --backend, else $TOPDOWN_BACKEND, else
 * postgresql when --dsn was given, else sqlite when db_flag (--db) was,
 * else postgresql when $TOPDOWN_DSN is set, else sqlite; checked to be
 * known and to agree with --dsn and db_flag (--db, SQLite only). 0, or
 * -EINVAL with err, also when $TOPDOWN_DSN and $TOPDOWN_DB_PATH are both
 * set and nothing else chooses.
 */
int td_store_flags_backend(const struct td_store_flags *flags, const char *db_flag,
			   const char **backend, char *err, size_t errlen);

/*
 * Opens the store of td_store_flags_backend in mode: each command says
 * whether it writes (collect, agent, import, gc) or only reads, and a
 * reader never creates a store. SQLite opens db_flag (--db) or
 * td_store_default_path(); PostgreSQL connects to --dsn, else
 * $TOPDOWN_DSN. where (NULL: not wanted) receives td_store_location().
 * NULL with err and errno on failure, as td_store_open(); EINVAL also for
 * --db with PostgreSQL, --dsn with SQLite and --db "".
 */
struct td_store *td_store_open_flags(const struct td_store_flags *flags, const char *db_flag,
				     enum td_store_mode mode, char *where, size_t wherelen,
				     char *err, size_t errlen);

#endif
