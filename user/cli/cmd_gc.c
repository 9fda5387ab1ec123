// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown gc: deletes runs that started longer ago than --older-than, in
 * batches of their own transaction, so a collector writing to the same
 * store meanwhile waits for one batch at most.
 */
#include <errno.h>
#include <getopt.h>
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

static const char usage_text[] =
	"usage: topdown gc --older-than 30d [--label key=value]... [--process NAME] [--dry-run]\n"
	"                  [--batch N] [--db PATH | --backend postgresql --dsn DSN]\n";

static int usage_error(const char *message)
{
	fprintf(stderr, "topdown gc: %s (topdown gc --help lists the options)\n", message);
	return TD_EXIT_USAGE;
}

static int own_option(void *args, int opt, const char *arg, char *err, size_t errlen)
{
	struct gc_args *a = args;

	switch (opt) {
	case 'o': return td_parse_duration_ns(arg, "--older-than", &a->older_than_ns, err, errlen);
	case 'b': return td_parse_int_range(arg, "--batch", 1, 100000, &a->batch, err, errlen);
	default: a->dry_run = true; return 0; /* 'n' */
	}
}

static int parse_args(int argc, char **argv, struct gc_args *a)
{
	static const struct option options[] = {
		TD_QUERY_CLI_OPTIONS,
		{ "older-than", required_argument, NULL, 'o' },
		{ "batch", required_argument, NULL, 'b' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, TD_QUERY_CLI_HELP },
		{ 0 }
	};
	char err[512] = "";
	int ret;

	a->batch = DEFAULT_BATCH;
	ret = td_query_cli_parse(&a->cli, argc, argv, options, usage_text, own_option, a, false, err, sizeof(err));
	if (ret == TD_QUERY_CLI_HELP_SHOWN)
		return -1;
	if (ret)
		return usage_error(err);
	if (!a->older_than_ns)
		return usage_error("say which runs to delete with --older-than, e.g. --older-than 30d");
	if (a->cli.sel.last_ns || a->cli.sel.run_id || a->cli.format != TD_FORMAT_TABLE)
		return usage_error("gc takes --older-than, --label and --process to choose runs; "
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
	struct timespec now;
	struct td_progress progress;
	char when[32];
	size_t count = 0;
	int ret = td_run_selection_filter(&a->cli.sel, store, &filter, err, errlen);

	if (ret < 0)
		return ret;
	clock_gettime(CLOCK_REALTIME, &now);
	filter.before_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec - (int64_t)a->older_than_ns;
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

	td_query_cli_init(&a.cli, &argc, argv);
	ret = parse_args(argc, argv, &a);
	if (ret == 0)
		ret = td_query_cli_run(&a.cli, "gc", TD_STORE_READ_WRITE, collect_garbage, &a);
	td_query_cli_release(&a.cli);
	return ret < 0 ? 0 : ret;
}
