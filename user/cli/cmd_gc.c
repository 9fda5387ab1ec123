// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown gc: deletes runs that started longer ago than --older-than, in
 * batches of their own transaction, so a collector writing to the same
 * store meanwhile waits for one batch at most.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "progress.h"
#include "parse.h"
#include "query_cli.h"
#include "format.h"

#define DEFAULT_BATCH 100

struct gc_args {
	struct td_query_cli cli; /* --label, --process narrow what is deleted */
	uint64_t older_than_ns;
	long batch;
	bool dry_run;
};

static const struct td_opt gc_options[] = {
	TD_OPTION("older-than", TD_OPT_DURATION, offsetof(struct gc_args, older_than_ns), "D",
	  "delete the runs that started longer ago than D (30d, 12h, ...)"),
	TD_OPTION("dry-run", TD_OPT_FLAG, offsetof(struct gc_args, dry_run), NULL, "count them, delete nothing"),
	TD_OPTION("batch", TD_OPT_INT, offsetof(struct gc_args, batch), "N", "runs per transaction (default 100)",
	  .min = 1, .max = 100000),
	TD_OPTS_RUN_FILTERS(struct gc_args, cli),
	{ 0 }
};

static const struct td_cli gc_command = {
	.command = "gc",
	.synopsis = "usage: topdown gc --older-than 30d [--label key=value]... [--process NAME] [--dry-run]\n"
		    "                  [--batch N] [--db PATH | --backend postgresql --dsn DSN]\n",
	.opts = gc_options,
};

static int parse_args(int argc, char **argv, struct gc_args *a)
{
	struct td_cli_seen seen;
	int ret;

	a->batch = DEFAULT_BATCH;
	if ((ret = td_cli_read(&gc_command, argc, argv, a, &seen)))
		return ret;
	if (!a->older_than_ns)
		return td_cli_usage_error(&gc_command, "say which runs to delete with --older-than, e.g. --older-than 30d");
	if (a->cli.sel.last_ns || a->cli.sel.run_id || a->cli.format != TD_FORMAT_TABLE)
		return td_cli_usage_error(&gc_command, "gc takes --older-than, --label and --process to choose runs; "
					  "--last, --run-id, --json and --csv do not apply");
	return 0;
}

static void show_deleted(void *ctx, size_t deleted)
{
	td_progress_step(ctx, deleted);
}

static int collect_garbage(struct td_store *store, void *args, char *err, size_t errlen)
{
	struct gc_args *a = args;
	struct td_run_summary *runs = NULL;
	struct td_run_filter filter;
	struct td_progress progress;
	char when[32];
	size_t count = 0;
	int ret = td_run_selection_filter(&a->cli.sel, store, &filter, err, errlen);

	if (ret < 0)
		return ret;
	filter.before_ns = td_now_minus_ns(a->older_than_ns);
	td_format_time(filter.before_ns, when, sizeof(when));
	if (a->dry_run) {
		ret = td_store_list_runs(store, &filter, &runs, &count, err, errlen);
		td_run_summaries_free(runs, count);
		if (ret == 0)
			printf("would delete %zu run%s started before %s from %s\n", count,
			       count == 1 ? "" : "s", when, td_store_location(store));
		return ret;
	}
	td_progress_begin(&progress, "deleting", "runs", 0);
	ret = td_store_delete_runs_with(store, &filter, (size_t)a->batch, show_deleted, &progress, &count, err, errlen);
	td_progress_end(&progress);
	/* Batches already deleted stay deleted: say so either way. */
	printf("deleted %zu run%s started before %s from %s\n", count, count == 1 ? "" : "s",
	       when, td_store_location(store));
	return ret;
}

int td_cmd_gc(int argc, char **argv)
{
	struct gc_args a = { 0 };
	int ret;

	td_query_cli_init(&a.cli);
	ret = parse_args(argc, argv, &a);
	if (ret == 0)
		ret = td_query_cli_run(&a.cli, "gc", TD_STORE_READ_WRITE, collect_garbage, &a);
	td_query_cli_release(&a.cli);
	return ret < 0 ? 0 : ret;
}
