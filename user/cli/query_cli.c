// SPDX-License-Identifier: BSD-3-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include <limits.h>
#include <string.h>

#include "commands.h"
#include "format.h"
#include "parse.h"
#include "query_cli.h"

void td_query_cli_init(struct td_query_cli *c)
{
	memset(c, 0, sizeof(*c));
	td_run_selection_init(&c->sel);
}

void td_query_cli_release(struct td_query_cli *c)
{
	td_run_selection_release(&c->sel);
}

struct td_store *td_query_cli_open(struct td_query_cli *c, enum td_store_mode mode, char *err,
				   size_t errlen)
{
	return td_store_open_flags(&c->store_flags, c->db, mode, NULL, 0, err, errlen);
}

int td_query_cli_fail(const char *command, int ret, const char *err)
{
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "topdown %s", command);
	if (ret == TD_QUERY_NOTHING) { /* an empty answer: said, nothing printed, no failure */
		td_print_error(prefix, err);
		return 0;
	}
	td_print_error(prefix, err[0] ? err : strerror(-ret));
	return ret == -EINVAL ? TD_EXIT_USAGE : TD_EXIT_FAILURE;
}

int td_query_cli_run(struct td_query_cli *c, const char *command, enum td_store_mode mode,
		     int (*work)(struct td_store *store, void *args, char *err, size_t errlen), void *args)
{
	char err[1024] = "";
	struct td_store *store = td_query_cli_open(c, mode, err, sizeof(err));
	int ret = store ? work(store, args, err, sizeof(err)) : errno ? -errno : -EIO;

	td_store_close(store);
	return ret < 0 ? td_query_cli_fail(command, ret, err) : ret;
}

/* One side's filter: a run id, or the shared filters plus its labels. */
int td_query_cli_side_filter(struct td_store *store, const struct td_run_filter *shared,
			     const char *run_text, char id[TD_RUN_ID_LEN], struct td_labels *labels,
			     struct td_run_filter *side, char *err, size_t errlen)
{
	*side = *shared;
	if (run_text) {
		side->run_id = id;
		return td_store_resolve_run_id(store, run_text, id, err, errlen);
	}
	if (td_labels_copy(labels, shared->labels) < 0) {
		snprintf(err, errlen, "out of memory; free memory and retry");
		return -ENOMEM;
	}
	side->labels = labels;
	return 0;
}

const char *td_query_cli_sides_problem(const struct td_labels *labels_a, const struct td_labels *labels_b,
				       int nr_args)
{
	bool by_labels = labels_a->count || labels_b->count;

	if (by_labels && nr_args)
		return "name the sides either by two run ids or by --label-a and --label-b, not both";
	if (by_labels && (!labels_a->count || !labels_b->count))
		return "give both --label-a and --label-b";
	return NULL;
}
