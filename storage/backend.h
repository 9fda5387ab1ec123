/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a storage backend provides; private to storage/. storage.c checks
 * arguments and dispatches through these operations, so a backend only
 * sees valid pointers.
 */
#ifndef TOPDOWN_STORAGE_BACKEND_H
#define TOPDOWN_STORAGE_BACKEND_H

#include "storage.h"

struct td_store_ops {
	const char *name; /* as given in td_store_config.backend */
	struct td_store *(*open)(const struct td_store_config *cfg, char *err, size_t errlen);
	void (*close)(struct td_store *store);
	int (*write_run)(struct td_store *store, const struct td_run *run,
			 char *err, size_t errlen);
	int (*read_run)(struct td_store *store, const char *run_id, struct td_run **out,
			char *err, size_t errlen);
	int (*list_runs)(struct td_store *store, const struct td_run_filter *filter,
			 struct td_run_summary **out, size_t *count, char *err, size_t errlen);
};

/* The first member of every backend's state: a pointer to the state is a
 * pointer to this, and the backend casts it back. */
struct td_store {
	const struct td_store_ops *ops;
};

extern const struct td_store_ops td_sqlite_ops;

#endif
