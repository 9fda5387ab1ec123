// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown export: the matching runs, whole (threads, intervals and metric
 * rows), as one JSON array or as CSV with one line per metric row. Runs
 * are read and written one at a time, so memory stays flat however many
 * there are. Or their sampled stacks, for other tools: a pprof profile
 * (user/render/pprof.c) or folded text (query --folded's). With --output
 * the file appears only once complete.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "fileio.h"
#include "progress.h"
#include "hot.h"
#include "pprof.h"
#include "query_cli.h"
#include "query_render.h"

/* What is exported: the runs (as cli.format says: JSON or CSV), or their stacks. */
enum export_what { EXPORT_RUNS, EXPORT_PPROF, EXPORT_FOLDED };

struct export_args {
	struct td_query_cli cli;
	enum export_what what;
	const char *output;
	const char *thread;
};

/* --format: the runs as JSON or CSV, or their stacks. */
static int parse_format(void *field, const struct td_opt *opt, const char *text, char *err, size_t errlen)
{
	struct export_args *a = field;

	(void)opt;
	a->what = EXPORT_RUNS;
	if (strcmp(text, "json") == 0)
		a->cli.format = TD_FORMAT_JSON;
	else if (strcmp(text, "csv") == 0)
		a->cli.format = TD_FORMAT_CSV;
	else if (strcmp(text, "pprof") == 0)
		a->what = EXPORT_PPROF;
	else if (strcmp(text, "folded") == 0)
		a->what = EXPORT_FOLDED;
	else {
		snprintf(err, errlen, "--format takes json, csv, pprof or folded, not '%.32s'", text);
		return -EINVAL;
	}
	return 0;
}

static const struct td_opt export_options[] = {
	TD_OPTION("format", TD_OPT_CALL, 0, "FORMAT", "json or csv (the runs), pprof or folded (their stacks)",
	  .call = parse_format),
	TD_OPTION("output", TD_OPT_TEXT, offsetof(struct export_args, output), "FILE",
	  "write here, the file appearing only once complete (- : stdout)"),
	TD_OPTION("thread", TD_OPT_TEXT, offsetof(struct export_args, thread), "NAME|TID",
	  "one thread's stacks (pprof, folded)"),
	TD_OPTS_RUN_FILTERS(struct export_args, cli),
	{ 0 }
};

static const struct td_cli export_command = {
	.command = "export",
	.synopsis = "usage: topdown export [--format json|csv|pprof|folded] [--label key=value]... [--process NAME]\n"
		    "                      [--last 24h] [--run-id ID] [--thread NAME|TID] [--output FILE]\n"
		    "                      [--db PATH | --backend postgresql --dsn DSN]\n",
	.notes = "json and csv: the runs whole. pprof: their sampled stacks as a gzipped pprof profile\n"
		 "(go tool pprof, Pyroscope, Parca); folded: as \"thread;frame;frame COUNT\" lines\n"
		 "(flamegraph.pl, speedscope). --thread keeps one thread's stacks (pprof, folded).\n",
	.opts = export_options,
};

static int usage_error(const char *message)
{
	return td_cli_usage_error(&export_command, message);
}

static int parse_args(int argc, char **argv, struct export_args *a)
{
	struct td_cli_seen seen;
	int ret;

	a->cli.format = TD_FORMAT_JSON;
	if ((ret = td_cli_read(&export_command, argc, argv, a, &seen)))
		return ret;
	if (a->thread && a->what == EXPORT_RUNS)
		return usage_error("--thread applies to the stacks: add --format pprof or --format folded");
	if (a->what != EXPORT_RUNS && a->cli.format == TD_FORMAT_CSV)
		return usage_error("--csv exports runs: leave it out with --format pprof or folded");
	/* A terminal would show the compressed bytes as garbage, and may take them as control codes. */
	if (a->what == EXPORT_PPROF && (!a->output || strcmp(a->output, "-") == 0) && isatty(STDOUT_FILENO))
		return usage_error("pprof is binary: give --output FILE");
	return 0;
}

/* Every matching run, oldest last as listed, one read at a time. */
static int write_runs(struct td_store *store, const struct td_run_summary *runs, size_t count,
		      enum td_format format, FILE *out, char *err, size_t errlen)
{
	struct td_progress progress;
	int ret = 0;

	td_progress_begin(&progress, "exporting", "runs", count);
	progress.on &= !(out == stdout && isatty(STDOUT_FILENO)); /* not through the runs on the same screen */
	if (format == TD_FORMAT_CSV)
		td_export_csv_header(out);
	else
		fputs("[", out);
	for (size_t i = 0; ret == 0 && i < count; i++) {
		td_progress_step(&progress, i);
		if (format == TD_FORMAT_JSON)
			fputs(i ? ",\n" : "\n", out);
		ret = td_export_run(store, runs[i].id, format, out, err, errlen);
	}
	td_progress_end(&progress);
	if (format == TD_FORMAT_JSON)
		fputs(count ? "\n]\n" : "]\n", out);
	return ret;
}

/* What td_write_output writes: the runs listed. */
struct export_job {
	struct td_store *store;
	const struct td_run_summary *runs;
	size_t count;
	enum td_format format;
};

static int write_job(FILE *out, void *ctx, char *err, size_t errlen)
{
	const struct export_job *job = ctx;

	return write_runs(job->store, job->runs, job->count, job->format, out, err, errlen);
}

/* What td_write_output writes for --format pprof: the runs' profiles. */
struct pprof_job {
	const struct td_profile_list *profiles;
	const char *thread;
};

static int write_pprof(FILE *out, void *ctx, char *err, size_t errlen)
{
	const struct pprof_job *job = ctx;

	return td_pprof_write(out, (const struct td_run *const *)job->profiles->runs, job->profiles->count,
			      job->thread, err, errlen);
}

static int export_pprof(struct td_store *store, const struct export_args *a, const struct td_run_filter *filter,
			char *err, size_t errlen)
{
	struct td_profile_list l;
	int ret = td_read_profiles(store, filter, &l, err, errlen);

	if (ret)
		return ret;
	ret = td_write_output(a->output, write_pprof, &(struct pprof_job){ &l, a->thread }, err, errlen);
	td_profile_list_release(&l);
	return ret;
}

/* Write errors show when td_write_output closes the file. */
static int write_folded(FILE *out, void *ctx, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	td_render_folded(out, ctx);
	return 0;
}

static int export_folded(struct td_store *store, const struct export_args *a, const struct td_run_filter *filter,
			 char *err, size_t errlen)
{
	struct td_query q = { .runs = *filter, .thread = a->thread };
	struct td_folded_set *set = NULL;
	int ret = td_query_folded(store, &q, NULL, &set, err, errlen);

	if (ret == 0)
		ret = td_write_output(a->output, write_folded, set, err, errlen);
	td_folded_set_free(set);
	return ret;
}

static int export_runs(struct td_store *store, void *args, char *err, size_t errlen)
{
	struct export_args *a = args;
	struct td_run_summary *runs = NULL;
	struct td_run_filter filter;
	size_t count = 0;
	int ret = td_run_selection_filter(&a->cli.sel, store, &filter, err, errlen);

	if (ret == 0 && a->what == EXPORT_PPROF)
		return export_pprof(store, a, &filter, err, errlen);
	if (ret == 0 && a->what == EXPORT_FOLDED)
		return export_folded(store, a, &filter, err, errlen);
	if (ret == 0)
		ret = td_store_list_runs(store, &filter, &runs, &count, err, errlen);
	if (ret == 0)
		ret = td_write_output(a->output, write_job,
						&(struct export_job){ store, runs, count, a->cli.format }, err, errlen);
	td_run_summaries_free(runs, count);
	return ret;
}

int td_cmd_export(int argc, char **argv)
{
	struct export_args a = { 0 };
	int ret;

	td_query_cli_init(&a.cli);
	ret = parse_args(argc, argv, &a);
	if (ret == 0)
		ret = td_query_cli_run(&a.cli, "export", TD_STORE_READ_ONLY, export_runs, &a);
	td_query_cli_release(&a.cli);
	return ret < 0 ? 0 : ret;
}
