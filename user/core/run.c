// SPDX-License-Identifier: BSD-3-Clause
/*
 * The run: allocation, identity and release. A run owns every string and
 * array it points to, so td_run_free() is the one place that knows them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "run.h"

int td_uuid_v4(char *buf)
{
	unsigned char b[16];
	size_t got = 0;

	/* getrandom() may return short or be interrupted before the pool is
	 * ready; loop until the 16 bytes are there. */
	while (got < sizeof(b)) {
		ssize_t n = getrandom(b + got, sizeof(b) - got, 0);

		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0)
			got += (size_t)n;
	}
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	snprintf(buf, TD_RUN_ID_LEN,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
		 b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
	return 0;
}

struct td_run *td_run_new(void)
{
	struct td_run *run = calloc(1, sizeof(*run));

	if (!run)
		return NULL;
	if (td_uuid_v4(run->id) < 0) {
		free(run);
		return NULL;
	}
	td_labels_init(&run->labels);
	return run;
}

void td_run_free(struct td_run *run)
{
	if (!run)
		return;
	free(run->process);
	free(run->collector);
	td_labels_free(&run->labels);
	/* All slots, not only nr_events: unused ones are NULL. */
	for (size_t i = 0; i < TD_MAX_EVENTS; i++)
		free(run->event_names[i]);
	free(run->threads);
	for (size_t i = 0; i < run->nr_intervals; i++)
		free(run->intervals[i].threads);
	free(run->intervals);
	free(run->metrics);
	td_name_index_free(&run->strings);
	td_profile_free(run->profile);
	free(run);
}

const char *td_run_intern(struct td_run *run, const char *s)
{
	bool added;
	int64_t at = td_name_index_get(&run->strings, s, &added);

	return at < 0 ? NULL : run->strings.keys[at];
}

/* td_run_intern() that keeps NULL as NULL; false only when a string was
 * needed and could not be stored. */
static bool intern_optional(struct td_run *run, const char *s, const char **out)
{
	*out = s ? td_run_intern(run, s) : NULL;
	return !s || *out;
}

int td_run_add_metric(struct td_run *run, const struct td_metric_row *row)
{
	struct td_metric_row copy = *row;

	/* A string interned before a later one fails stays in the run's set
	 * unused, freed with the run like the others. */
	if (!intern_optional(run, row->scope_key, &copy.scope_key) ||
	    !intern_optional(run, row->path, &copy.path) ||
	    !intern_optional(run, row->parent, &copy.parent))
		return -ENOMEM;
	return td_run_append_metric(run, &copy);
}

int td_run_append_metric(struct td_run *run, const struct td_metric_row *row)
{
	if (run->nr_metrics == run->cap_metrics) {
		size_t cap = run->cap_metrics ? run->cap_metrics * 2 : 64;
		struct td_metric_row *grown = reallocarray(run->metrics, cap, sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		run->metrics = grown;
		run->cap_metrics = cap;
	}
	run->metrics[run->nr_metrics++] = *row;
	return 0;
}
