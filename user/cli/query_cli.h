/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What query, compare, flamegraph, report, export and gc share on the
 * command line: run filters, the output format and where the store is.
 * Each command puts TD_OPTS_RUN_FILTERS into its option table, then opens
 * the store and builds its run filter here.
 */
#ifndef TOPDOWN_QUERY_CLI_H
#define TOPDOWN_QUERY_CLI_H

#include <stdio.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli_options.h"
#include "labels.h"
#include "query_render.h"
#include "store_open.h"

struct td_query_cli {
	struct td_store_flags store_flags;
	const char *db;
	struct td_run_selection sel; /* --label, --process, --last, --run-id */
	enum td_format format;
};

/*
 * The run filters and the output format: --label, --process, --last,
 * --run-id, --json, --csv, and the store's options, into the struct
 * td_query_cli cli_field of type.
 */
#define TD_OPTS_RUN_FILTERS(type, cli_field) \
	TD_OPT_LABELS(type, cli_field.sel.labels, "runs with this label (repeatable: all must match)"), \
	TD_OPTION("process", TD_OPT_NAME, offsetof(type, cli_field.sel.process), "NAME", "runs of this process", \
	  .short_name = 'p'), \
	TD_OPTION("last", TD_OPT_DURATION, offsetof(type, cli_field.sel.last_ns), "D", \
	  "runs that started within D (24h, 7d, ...)", .short_name = 't'), \
	TD_OPTION("run-id", TD_OPT_TEXT, offsetof(type, cli_field.sel.run_id), "ID", \
	  "one run: its id or a unique prefix of at least 8 characters", .short_name = 'r'), \
	TD_OPTION("json", TD_OPT_SET, offsetof(type, cli_field.format), NULL, "the same data as JSON", \
	  .min = TD_FORMAT_JSON, .short_name = 'j'), \
	TD_OPTION("csv", TD_OPT_SET, offsetof(type, cli_field.format), NULL, "the same data as CSV", \
	  .min = TD_FORMAT_CSV, .short_name = 'c'), \
	TD_OPTS_STORE(type, cli_field.db, cli_field.store_flags)

void td_query_cli_init(struct td_query_cli *c);
void td_query_cli_release(struct td_query_cli *c);

struct td_store *td_query_cli_open(struct td_query_cli *c, enum td_store_mode mode, char *err,
				   size_t errlen);

/* The exit code of a failure: usage (2) for bad input, else 1; an empty
 * answer (TD_QUERY_NOTHING) is no failure: its hint on stderr, exit 0. */
int td_query_cli_fail(const char *command, int ret, const char *err);

/*
 * Opens the store in mode (gc writes, the other commands only read), runs
 * work(store, args) on it and closes it; the exit
 * code: 0, what work returned when positive (an exit code of its own), or
 * td_query_cli_fail's for a failure.
 */
int td_query_cli_run(struct td_query_cli *c, const char *command, enum td_store_mode mode,
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
