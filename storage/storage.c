// SPDX-License-Identifier: BSD-3-Clause
/*
 * The storage front: resolves the backend by name, checks what callers
 * pass, and dispatches. Checks that hold for every backend live here so
 * each backend can trust the shape of the run it is given.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "storage.h"

static const struct td_store_ops *const backends[] = {
	&td_sqlite_ops,
};

#define NR_BACKENDS (sizeof(backends) / sizeof(backends[0]))

static const struct td_store_ops *find_backend(const char *name, char *err, size_t errlen)
{
	char known[128] = "";
	size_t used = 0;

	if (!name)
		return backends[0];
	for (size_t i = 0; i < NR_BACKENDS; i++)
		if (strcmp(backends[i]->name, name) == 0)
			return backends[i];
	for (size_t i = 0; i < NR_BACKENDS && used < sizeof(known); i++)
		used += (size_t)snprintf(known + used, sizeof(known) - used, "%s%s",
					 i ? ", " : "", backends[i]->name);
	snprintf(err, errlen, "unknown storage backend '%s'; use one of: %s", name, known);
	return NULL;
}

struct td_store *td_store_open(const struct td_store_config *cfg, char *err, size_t errlen)
{
	static const struct td_store_config defaults;
	const struct td_store_ops *ops;

	if (!cfg)
		cfg = &defaults;
	ops = find_backend(cfg->backend, err, errlen);
	return ops ? ops->open(cfg, err, errlen) : NULL;
}

void td_store_close(struct td_store *store)
{
	if (store)
		store->ops->close(store);
}

static int invalid_run(char *err, size_t errlen, const char *why)
{
	snprintf(err, errlen, "cannot store the run: %s; this is a bug in the code that built it",
		 why);
	return -EINVAL;
}

/* Pointers a count promises must be there; everything else a backend may
 * reject through its own constraints. */
static int check_run(const struct td_run *run, char *err, size_t errlen)
{
	if (!run->id[0] || !memchr(run->id, '\0', sizeof(run->id)))
		return invalid_run(err, errlen, "it has no id");
	if (run->nr_events > TD_MAX_EVENTS)
		return invalid_run(err, errlen, "it names more events than TD_MAX_EVENTS");
	for (size_t i = 0; i < run->nr_events; i++)
		if (!run->event_names[i])
			return invalid_run(err, errlen, "an event has no name");
	if ((run->nr_threads && !run->threads) || (run->nr_intervals && !run->intervals) ||
	    (run->nr_metrics && !run->metrics))
		return invalid_run(err, errlen, "a count is set but its array is missing");
	for (size_t i = 0; i < run->nr_intervals; i++)
		if (run->intervals[i].nr_threads && !run->intervals[i].threads)
			return invalid_run(err, errlen,
					   "an interval counts threads it does not hold");
	for (size_t i = 0; i < run->nr_metrics; i++) {
		const struct td_metric_row *m = &run->metrics[i];

		if (!m->path || !m->scope_key)
			return invalid_run(err, errlen, "a metric row has no path or scope key");
		if (m->scope != TD_SCOPE_THREAD && m->scope != TD_SCOPE_GROUP &&
		    m->scope != TD_SCOPE_PROCESS)
			return invalid_run(err, errlen, "a metric row has an unknown scope");
	}
	return 0;
}

int td_store_write_run(struct td_store *store, const struct td_run *run,
		       char *err, size_t errlen)
{
	int rc;

	if (!store || !run)
		return invalid_run(err, errlen, "no store or no run was given");
	rc = check_run(run, err, errlen);
	return rc < 0 ? rc : store->ops->write_run(store, run, err, errlen);
}

int td_store_read_run(struct td_store *store, const char *run_id, struct td_run **out,
		      char *err, size_t errlen)
{
	if (!store || !run_id || !out) {
		snprintf(err, errlen, "cannot read a run without a store, a run id and a result; "
			 "this is a bug in the caller");
		return -EINVAL;
	}
	*out = NULL;
	return store->ops->read_run(store, run_id, out, err, errlen);
}

int td_store_list_runs(struct td_store *store, const struct td_run_filter *filter,
		       struct td_run_summary **out, size_t *count, char *err, size_t errlen)
{
	static const struct td_run_filter any;

	if (!store || !out || !count) {
		snprintf(err, errlen, "cannot list runs without a store and a result; "
			 "this is a bug in the caller");
		return -EINVAL;
	}
	*out = NULL;
	*count = 0;
	return store->ops->list_runs(store, filter ? filter : &any, out, count, err, errlen);
}

void td_run_summaries_free(struct td_run_summary *summaries, size_t count)
{
	for (size_t i = 0; summaries && i < count; i++) {
		free(summaries[i].process);
		free(summaries[i].collector);
		td_labels_free(&summaries[i].labels);
	}
	free(summaries);
}
