/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What query, compare, export and gc share on the command line: run
 * filters, the output format and where the store is. Each command adds
 * QUERY_CLI_OPTIONS to its getopt_long table, offers every option to
 * td_query_cli_option() first, then opens the store and builds its run
 * filter here.
 */
#ifndef TOPDOWN_QUERY_CLI_H
#define TOPDOWN_QUERY_CLI_H

#include <getopt.h>
#include <stdio.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "labels.h"
#include "query_render.h"
#include "store_open.h"

struct td_query_cli {
	struct td_store_flags store_flags;
	const char *db;
	struct td_run_selection sel; /* --label, --process, --last, --run-id */
	enum td_format format;
};

/* The options td_query_cli_option() handles, for a struct option table. */
#define TD_QUERY_CLI_OPTIONS \
	{ "label", required_argument, NULL, 'L' }, \
	{ "process", required_argument, NULL, 'p' }, \
	{ "last", required_argument, NULL, 't' }, \
	{ "run-id", required_argument, NULL, 'r' }, \
	{ "db", required_argument, NULL, 'D' }, \
	{ "json", no_argument, NULL, 'j' }, \
	{ "csv", no_argument, NULL, 'c' }
#define TD_QUERY_CLI_SHORT "L:p:t:r:D:jc"
#define TD_QUERY_CLI_HELP 0x100 /* the getopt code of a command's { "help", ... } entry */
#define TD_QUERY_CLI_HELP_SHOWN 1

/* A command's own option opt with its argument (NULL when it takes none):
 * 0, or -EINVAL with err. */
typedef int (*td_query_cli_own_fn)(void *args, int opt, const char *arg, char *err, size_t errlen);

/*
 * Reads argv against options (TD_QUERY_CLI_OPTIONS, the command's own, and
 * "help" as TD_QUERY_CLI_HELP): the shared ones into c, the others to own.
 * Operands are refused unless operands is set; then optind is the first.
 * 0; TD_QUERY_CLI_HELP_SHOWN after printing usage; -EINVAL with err.
 */
int td_query_cli_parse(struct td_query_cli *c, int argc, char **argv, const struct option *options,
		       const char *usage, td_query_cli_own_fn own, void *args, bool operands,
		       char *err, size_t errlen);

/* Takes --backend and --dsn out of argv (td_store_flags_take). */
void td_query_cli_init(struct td_query_cli *c, int *argc, char **argv);
void td_query_cli_release(struct td_query_cli *c);

/* 1 when opt was one of TD_QUERY_CLI_OPTIONS (0 or -EINVAL with err after
 * a bad value), 0 when it is the command's own. */
int td_query_cli_option(struct td_query_cli *c, int opt, const char *arg, char *err,
			size_t errlen);

struct td_store *td_query_cli_open(struct td_query_cli *c, char *err, size_t errlen);

/* The exit code of a failure: usage (2) for bad input, else 1; an empty
 * answer (TD_QUERY_NOTHING) is no failure: its hint on stderr, exit 0. */
int td_query_cli_fail(const char *command, int ret, const char *err);

/*
 * Opens the store, runs work(store, args) on it and closes it; the exit
 * code: 0, what work returned when positive (an exit code of its own), or
 * td_query_cli_fail's for a failure.
 */
int td_query_cli_run(struct td_query_cli *c, const char *command,
		     int (*work)(struct td_store *store, void *args, char *err, size_t errlen), void *args);

/*
 * How a comparison (compare, flamegraph, report) names its two sides: by
 * two run ids as operands or by --label-a and --label-b, one way and
 * whole. NULL when nothing is wrong with that; else what is. Each command
 * adds what it requires beyond (how many run ids, --run-id).
 */
const char *td_query_cli_sides_problem(const struct td_labels *labels_a, const struct td_labels *labels_b,
				       int nr_args);

/*
 * One side of a comparison (compare, flamegraph): the run run_text names
 * (resolved into id), or, without one, the shared filter plus its own
 * labels (copied into labels, which side then points at).
 */
int td_query_cli_side_filter(struct td_store *store, const struct td_run_filter *shared, const char *run_text,
			     char id[TD_RUN_ID_LEN], struct td_labels *labels, struct td_run_filter *side,
			     char *err, size_t errlen);

#endif
