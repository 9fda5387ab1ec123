// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown list: the stored runs, newest first, filtered by labels, process
 * and age; with --labels, the label keys of those runs and their values.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli_options.h"
#include "commands.h"
#include "labels.h"
#include "parse.h"
#include "query.h"
#include "query_cli.h"
#include "query_render.h"
#include "format.h"
#include "storage.h"
#include "store_open.h"

struct list_args {
	struct td_labels labels;
	const char *process;
	uint64_t last_ns;
	long limit;          /* runs, or with --labels values per key; 0: the default */
	bool json;
	bool labels_mode;    /* --labels */
	const char *key;     /* --labels KEY: that key only */
	const char *db;
	struct td_store_flags store_flags;
};

#define DEFAULT_RUNS 20
#define DEFAULT_VALUES_PER_KEY 10

static const struct td_opt list_options[] = {
	TD_OPTION("labels", TD_OPT_FLAG, offsetof(struct list_args, labels_mode), NULL,
		  "instead of the runs: the label keys of the matching runs (or KEY's alone) with their "
		  "values, most frequent first", .short_name = 'l'),
	TD_OPT_LABELS(struct list_args, labels, "runs with this label (repeatable: all must match)"),
	TD_OPTION("process", TD_OPT_TEXT, offsetof(struct list_args, process), "NAME", "runs of this process",
		  .short_name = 'p'),
	TD_OPTION("last", TD_OPT_DURATION, offsetof(struct list_args, last_ns), "D",
		  "runs that started within D (24h, 7d, ...)", .short_name = 't'),
	TD_OPTION("limit", TD_OPT_INT, offsetof(struct list_args, limit), "N",
		  "at most N runs, newest first (default 20); with --labels, N values per key (default 10)",
		  .min = 1, .max = 1000000, .short_name = 'n'),
	TD_OPTION("json", TD_OPT_FLAG, offsetof(struct list_args, json), NULL, "the same data as JSON",
		  .short_name = 'j'),
	TD_OPTS_STORE(struct list_args, db, store_flags),
	{ 0 }
};

static const struct td_cli list_command = {
	.command = "list",
	.synopsis = "usage: topdown list [--label key=value]... [--process NAME] [--last 24h] [--limit N] [--db PATH]\n"
		    "                    [--json]\n"
		    "       topdown list --labels [KEY] [--label key=value]... [--process NAME] [--last 24h] [--limit N]\n"
		    "                    [--json]\n",
	.opts = list_options,
	.max_operands = -1, /* the key of --labels KEY */
};

/*
 * Labels every collect adds by itself; the table shows the others (the
 * user's, such as git_branch) so that runs can be told apart. --json has all.
 */
static const char *const detected_keys[] = {
	"arch", "kernel_version", "cpu", "pmu_name", "collector", "tma_level", "comm", "pid",
	"cgroup", "container",
};

static bool is_detected_key(const char *key)
{
	for (size_t i = 0; i < sizeof(detected_keys) / sizeof(detected_keys[0]); i++)
		if (!strcmp(key, detected_keys[i]))
			return true;
	return false;
}

static int parse_args(int argc, char **argv, struct list_args *a)
{
	struct td_cli_seen seen;
	char err[512];
	int ret = td_cli_read(&list_command, argc, argv, a, &seen);

	if (ret)
		return ret;
	/* the one argument there is: the key of --labels KEY */
	if (a->labels_mode && seen.nr_operands)
		a->key = seen.operands[0];
	if (seen.nr_operands > (a->labels_mode ? 1 : 0)) {
		snprintf(err, sizeof(err), "unexpected argument '%s'%s", seen.operands[a->labels_mode ? 1 : 0],
			 a->labels_mode ? " after the key of --labels" : "");
		return td_cli_usage_error(&list_command, err);
	}
	if (!a->limit)
		a->limit = a->labels_mode ? DEFAULT_VALUES_PER_KEY : DEFAULT_RUNS;
	return 0;
}

static void print_table(const struct td_run_summary *runs, size_t count)
{
	char started[32], duration[32];

	printf("%-36s  %-19s  %8s  %-16s  %7s  %s\n", "RUN ID", "STARTED", "DURATION", "PROCESS", "THREADS", "LABELS");
	for (size_t i = 0; i < count; i++) {
		const struct td_run_summary *r = &runs[i];
		const char *sep = "";

		printf("%-36s  %-19s  %8s  ", r->id, td_format_time(r->started_ns, started, sizeof(started)),
		       td_format_duration(r->ended_ns - r->started_ns, duration, sizeof(duration)));
		/* the process names itself, and labels carry file names (source=): escaped */
		td_fputs_safe(stdout, r->process, 16);
		printf("  %7zu  ", r->nr_threads);
		for (size_t l = 0; l < r->labels.count; l++) {
			if (is_detected_key(r->labels.items[l].key))
				continue;
			printf("%s", sep);
			td_fputs_safe(stdout, r->labels.items[l].key, 0);
			putchar('=');
			td_fputs_safe(stdout, r->labels.items[l].value, 0);
			sep = ",";
		}
		printf("%s\n", r->partial ? " (partial)" : "");
	}
	if (!count)
		printf("(no runs match)\n");
}

static void print_json(const struct td_run_summary *runs, size_t count)
{
	json_t *array = json_array();

	for (size_t i = 0; i < count; i++) {
		const struct td_run_summary *r = &runs[i];
		json_t *labels = json_object();

		for (size_t l = 0; l < r->labels.count; l++)
			json_object_set_new(labels, r->labels.items[l].key, json_string(r->labels.items[l].value));
		json_array_append_new(array, json_pack("{s:s, s:I, s:I, s:f, s:s, s:i, s:s, s:o, s:I, s:b, s:I}",
			"run_id", r->id, "started_ns", (json_int_t)r->started_ns, "ended_ns", (json_int_t)r->ended_ns,
			"duration_s", (r->ended_ns - r->started_ns) / 1e9, "process", r->process, "level", r->level,
			"collector", r->collector, "labels", labels, "dropped", (json_int_t)r->dropped,
			"partial", r->partial, "threads", (json_int_t)r->nr_threads));
	}
	json_dumpf(array, stdout, JSON_INDENT(2));
	printf("\n");
	json_decref(array);
}

static int list_runs(struct td_store *store, const struct list_args *a,
		     struct td_run_filter *filter, char *err, size_t errlen)
{
	struct td_run_summary *runs = NULL;
	size_t count = 0;
	int ret;

	filter->limit = (size_t)a->limit;
	ret = td_store_list_runs(store, filter, &runs, &count, err, errlen);
	if (!ret && a->json)
		print_json(runs, count);
	else if (!ret)
		print_table(runs, count);
	td_run_summaries_free(runs, count);
	return ret;
}

/* Every matching run counts: --limit is about values here. */
static int list_labels(struct td_store *store, const struct list_args *a,
		       const struct td_run_filter *filter, char *err, size_t errlen)
{
	struct td_render r = { .out = stdout, .format = a->json ? TD_FORMAT_JSON : TD_FORMAT_TABLE,
			       .color = td_render_wants_color(stdout) };
	struct td_label_set *set = NULL;
	int ret = td_query_labels(store, filter, a->key, (size_t)a->limit, &set, err, errlen);

	if (!ret)
		td_render_labels(&r, set);
	td_label_set_free(set);
	return ret;
}

int td_cmd_list(int argc, char **argv)
{
	struct list_args a = { 0 };
	struct td_store *store = NULL;
	char err[768] = "";
	int ret;

	td_labels_init(&a.labels);
	ret = parse_args(argc, argv, &a);
	if (ret) {
		td_labels_free(&a.labels);
		return ret < 0 ? 0 : ret;
	}
	if (!(store = td_store_open_flags(&a.store_flags, a.db, TD_STORE_READ_ONLY, NULL, 0, err, sizeof(err))))
		ret = errno ? -errno : -EIO; /* EINVAL: a usage error (exit 2) */
	if (!ret) {
		struct td_run_filter filter = { .labels = &a.labels, .process = a.process };

		if (a.last_ns)
			filter.since_ns = td_now_minus_ns(a.last_ns);
		ret = a.labels_mode ? list_labels(store, &a, &filter, err, sizeof(err))
				    : list_runs(store, &a, &filter, err, sizeof(err));
	}
	if (ret)
		ret = td_query_cli_fail("list", ret, err);
	td_store_close(store);
	td_labels_free(&a.labels);
	return ret;
}
