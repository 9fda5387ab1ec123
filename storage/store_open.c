// SPDX-License-Identifier: BSD-3-Clause
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_open.h"

static const char *env(const char *name)
{
	const char *value = getenv(name);

	return value && *value ? value : NULL;
}

/* NULL with errno set, as td_store_open() fails. */
static struct td_store *failed(int ret)
{
	errno = -ret;
	return NULL;
}

int td_store_flags_backend(const struct td_store_flags *flags, const char *db_flag,
			   const char **backend, char *err, size_t errlen)
{
	const char *name = flags->backend;

	if (!name)
		name = env("TOPDOWN_BACKEND");
	/* Without a backend named, the flags decide before the environment,
	 * and an environment naming both stores is refused, not guessed. */
	if (!name && !flags->dsn && !db_flag && env("TOPDOWN_DSN") && env("TOPDOWN_DB_PATH")) {
		snprintf(err, errlen, "TOPDOWN_DSN and TOPDOWN_DB_PATH are both set; set "
			 "TOPDOWN_BACKEND to postgresql or sqlite, or unset one of them");
		return -EINVAL;
	}
	if (!name)
		name = flags->dsn ? "postgresql" : db_flag ? "sqlite" :
		       env("TOPDOWN_DSN") ? "postgresql" : "sqlite";
	if (td_store_backend_check(name, err, errlen))
		return -EINVAL;
	if (strcmp(name, "sqlite") == 0 && flags->dsn) {
		snprintf(err, errlen, "--dsn names a PostgreSQL server; pass --backend "
			 "postgresql with it, or --db PATH for a SQLite file");
		return -EINVAL;
	}
	if (strcmp(name, "sqlite") != 0 && db_flag) {
		snprintf(err, errlen, "--db names a SQLite file but the backend is %s; pass --dsn "
			 "for a PostgreSQL server, or --backend sqlite", name);
		return -EINVAL;
	}
	*backend = name;
	return 0;
}

struct td_store *td_store_open_flags(const struct td_store_flags *flags, const char *db_flag,
				     enum td_store_mode mode, char *where, size_t wherelen,
				     char *err, size_t errlen)
{
	struct td_store_config cfg = { .cache_kib = flags->cache_kib, .mode = mode };
	char path[PATH_MAX];
	struct td_store *store;
	int ret;

	if (td_store_flags_backend(flags, db_flag, &cfg.backend, err, errlen))
		return failed(-EINVAL);
	if (strcmp(cfg.backend, "sqlite") == 0) {
		ret = td_store_default_path(db_flag, mode, path, sizeof(path), err, errlen);
		if (ret < 0)
			return failed(ret);
		cfg.path = path;
	} else {
		cfg.dsn = flags->dsn ? flags->dsn : env("TOPDOWN_DSN");
	}
	store = td_store_open(&cfg, err, errlen);
	if (store && where)
		snprintf(where, wherelen, "%s", td_store_location(store));
	return store;
}
