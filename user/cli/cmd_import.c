// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown import: counts from a perf stat file become a stored, labeled
 * run with its Top-Down tree.  Reading and computing are user/import/import.c's
 * and the engine's; this file parses arguments, stores and prints.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cli_options.h"
#include "commands.h"
#include "format.h"
#include "progress.h"
#include "engine.h"
#include "import.h"
#include "labels.h"
#include "parse.h"
#include "storage.h"
#include "store_open.h"
#include "tma_render.h"

#define MAX_FILE_BYTES (1024L * 1024 * 1024)
#define NAME_COLUMN 44

struct import_args {
	const char *file;
	const char *model;
	const char *process;
	const char *db;
	struct td_store_flags store_flags; /* --backend, --dsn */
	struct td_labels labels;
	long level; /* 0: the deepest the counts define */
	int smt;    /* -1: inferred */
	bool json;
};

/* --smt on|off */
static int parse_smt(void *field, const struct td_opt *opt, const char *text, char *err, size_t errlen)
{
	int *out = field;

	(void)opt;
	if (strcmp(text, "on") == 0 || strcmp(text, "off") == 0) {
		*out = strcmp(text, "on") == 0;
		return 0;
	}
	snprintf(err, errlen, "--smt takes on or off, not '%s'", text);
	return -EINVAL;
}

static const struct td_opt import_options[] = {
	TD_OPTION("cpu-model", TD_OPT_TEXT, offsetof(struct import_args, model), "M",
		  "the CPU's Top-Down model the counts come from (skx, spr, neoverse-v2, zen4, ...)", .short_name = 'm'),
	TD_OPT_LABELS(struct import_args, labels, "stored with the run (repeatable)"),
	TD_OPTION("level", TD_OPT_INT, offsetof(struct import_args, level), "N",
		  "the tree's depth, 1 to 4 (default: the deepest the counts define)", .min = 1, .max = 4,
		  .short_name = 'l'),
	TD_OPTION("smt", TD_OPT_CALL, offsetof(struct import_args, smt), "on|off",
		  "whether SMT was on (default: inferred from the events)", .call = parse_smt, .short_name = 's'),
	TD_OPTION("process", TD_OPT_TEXT, offsetof(struct import_args, process), "NAME",
		  "the process the counts are of", .short_name = 'p'),
	TD_OPTION("json", TD_OPT_FLAG, offsetof(struct import_args, json), NULL, "the result as JSON",
		  .short_name = 'j'),
	TD_OPTS_STORE(struct import_args, db, store_flags),
	{ 0 }
};

static const struct td_cli import_command = {
	.command = "import",
	.synopsis = "usage: topdown import FILE --cpu-model M [--label key=value]... [--level 1..4]\n"
		    "                      [--smt on|off] [--process NAME] [--json]\n"
		    "                      [--db PATH | --backend postgresql --dsn DSN]\n"
		    "  FILE: the output of perf stat -x, (CSV) or perf stat -j (JSON)\n",
	.opts = import_options,
	.max_operands = -1, /* the file, said below */
};

/* 0 to run, -1 after --help, or TD_EXIT_USAGE. */
static int parse_args(int argc, char **argv, struct import_args *a)
{
	struct td_cli_seen seen;
	char err[512];
	int ret;

	a->smt = -1;
	if ((ret = td_cli_read(&import_command, argc, argv, a, &seen)))
		return ret;
	if (seen.nr_operands > 1) {
		snprintf(err, sizeof(err), "unexpected argument '%s'; import one file at a time", seen.operands[1]);
		return td_cli_usage_error(&import_command, err);
	}
	a->file = seen.nr_operands ? seen.operands[0] : NULL;
	if (!a->file || !a->model)
		return td_cli_usage_error(&import_command, "a FILE and --cpu-model are required");
	return 0;
}

/* The model named by --cpu-model, or NULL with err listing the known ones. */
static const struct td_model *find_model(const char *name, char *err, size_t errlen)
{
	const struct td_kb *kb = td_kb_load(err, errlen);
	const struct td_model *m = kb ? td_kb_model(kb, name) : NULL;
	char names[1024] = "";

	if (m || !kb)
		return m;
	for (size_t i = 0; i < td_kb_model_count(kb); i++) {
		size_t used = strlen(names);

		snprintf(names + used, sizeof(names) - used, "%s%s", i ? ", " : "",
			 td_kb_model_at(kb, i)->name);
	}
	snprintf(err, errlen, "unknown --cpu-model '%s'; known models: %s", name, names);
	return NULL;
}

/* The whole file in a malloc'd buffer. */
static int read_file(const char *path, char **text, size_t *len, int64_t *mtime_ns, char *err,
		     size_t errlen)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	int rc = 0;

	*text = NULL;
	if (!f || fstat(fileno(f), &st) != 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
	} else if (!S_ISREG(st.st_mode) || st.st_size > MAX_FILE_BYTES) {
		rc = -EINVAL;
		snprintf(err, errlen, "%s is not a regular file of at most 1 GiB", path);
	} else if (!(*text = malloc((size_t)st.st_size + 1))) {
		rc = -ENOMEM;
		snprintf(err, errlen, "out of memory reading %s", path);
	} else {
		*len = fread(*text, 1, (size_t)st.st_size, f);
		*mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		if (ferror(f)) {
			rc = -EIO;
			snprintf(err, errlen, "cannot read %s: I/O error", path);
		}
	}
	if (f)
		fclose(f);
	if (rc) {
		free(*text);
		*text = NULL;
	}
	return rc;
}

static int store_run(const struct import_args *a, const struct td_run *run, char *where,
		     size_t wherelen, char *err, size_t errlen)
{
	struct td_store *store = td_store_open_flags(&a->store_flags, a->db, TD_STORE_READ_WRITE, where, wherelen, err,
						     errlen);
	int rc = store ? td_store_write_run(store, run, err, errlen) : -EIO;

	td_store_close(store);
	return rc;
}

/* ---- output -------------------------------------------------------------- */

/* Whole-run rows of the process: what the import prints. */
static bool printed(const struct td_metric_row *row)
{
	return row->scope == TD_SCOPE_PROCESS && row->interval_seq == -1;
}

static void print_text(const struct td_import *imp, const char *source, const char *where)
{
	const struct td_run *run = imp->run;
	bool info_header = false, marks = false;
	char value[32];

	fputs("imported ", stdout);
	td_fputs_safe(stdout, source, 0); /* a file name, and notes quoting the file, escaped */
	printf(" as run %s\n", run->id);
	printf("model %s (%s), level %d, SMT %s, %zu thread(s), %zu interval(s); stored in %s\n\n",
	       imp->model->name, imp->model->long_name, imp->depth, imp->smt_on ? "on" : "off",
	       run->nr_threads, run->nr_intervals, where);
	for (size_t i = 0; i < run->nr_metrics; i++) {
		const struct td_metric_row *row = &run->metrics[i];
		const char *name = row->level ? strrchr(row->path, '.') : NULL;
		int indent = row->level ? 2 * (row->level - 1) : 2;
		bool low = td_metric_low_confidence(row->confidence);

		if (!printed(row))
			continue;
		if (!row->level && !info_header) {
			printf("\nInfo\n");
			info_header = true;
		}
		name = name ? name + 1 : row->path;
		printf("%*s%-*s %9s %s%s\n", indent, "", NAME_COLUMN - indent, name,
		       td_format_metric(imp->model, row, value, sizeof(value)),
		       row->threshold_crossed ? "*" : " ", low ? TD_MARK_LOW_CONFIDENCE : "");
		marks |= row->threshold_crossed || low;
	}
	if (marks)
		printf("\n* above its threshold   %s\n", TD_LEGEND_LOW_CONFIDENCE);
	for (size_t i = 0; i < imp->n_notes; i++) {
		fputs("note: ", stdout);
		td_fputs_safe(stdout, imp->notes[i], 0);
		putchar('\n');
	}
}

static void print_json(const struct td_import *imp, const char *source, const char *where)
{
	const struct td_run *run = imp->run;
	json_t *labels = json_object(), *notes = json_array(), *tree = json_array(),
	       *info = json_array();

	for (size_t i = 0; i < run->labels.count; i++)
		json_object_set_new(labels, run->labels.items[i].key, json_string(run->labels.items[i].value));
	for (size_t i = 0; i < imp->n_notes; i++)
		json_array_append_new(notes, json_string(imp->notes[i]));
	for (size_t i = 0; i < run->nr_metrics; i++)
		if (printed(&run->metrics[i]))
			json_array_append_new(run->metrics[i].level ? tree : info,
					      td_metric_row_json(&run->metrics[i]));
	json_t *doc = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:b, s:I, s:I, s:o, s:o, s:o, s:o}",
				"run_id", run->id, "source", source, "stored_in", where,
				"model", imp->model->name, "model_name", imp->model->long_name,
				"level", imp->depth, "smt", imp->smt_on,
				"threads", (json_int_t)run->nr_threads,
				"intervals", (json_int_t)run->nr_intervals, "labels", labels,
				"notes", notes, "tree", tree, "info", info);

	json_dumpf(doc, stdout, JSON_INDENT(2));
	printf("\n");
	json_decref(doc);
}

/* ---- command ----------------------------------------------------------------- */

/*
 * The exit code: 0; TD_EXIT_USAGE when the file's content is refused (a
 * malformed line, an impossible count, a thread without an event): like
 * a bad argument, nothing was done and the input must change; else
 * TD_EXIT_FAILURE.  Nothing is stored unless everything was read.
 */
static int import_file(const struct import_args *a, char *err, size_t errlen)
{
	struct td_perf_stat *ps = NULL;
	struct td_import *imp = NULL;
	struct td_progress progress;
	char *text = NULL, where[4200] = "", why[768], stage[4200];
	size_t len = 0;
	int64_t mtime_ns = 0;
	const struct td_model *model = find_model(a->model, err, errlen);
	bool refused = false;
	int rc;

	/* Stages, not a count: a big file's time goes to reading, parsing and storing it. */
	td_progress_begin(&progress, "importing", "", 0);
	snprintf(stage, sizeof(stage), "reading %s", a->file);
	td_progress_stage(&progress, stage);
	rc = model ? read_file(a->file, &text, &len, &mtime_ns, err, errlen) : -EINVAL;
	snprintf(stage, sizeof(stage), "parsing %s (%.1f MB)", a->file, (double)len / 1e6);
	if (!rc)
		td_progress_stage(&progress, stage);
	if (!rc && (rc = td_perf_stat_parse(text, len, &ps, why, sizeof(why)))) {
		snprintf(err, errlen, "%s: %s", a->file, why);
		refused = rc == -EINVAL;
	}
	if (!rc)
		td_progress_stage(&progress, "computing the Top-Down trees");
	if (!rc) {
		struct td_import_opts opts = {
			.model = model, .depth = (int)a->level, .smt = a->smt, .source = a->file,
			.process = a->process, .labels = &a->labels, .file_time_ns = mtime_ns,
		};

		if ((rc = td_import_build(ps, &opts, &imp, why, sizeof(why)))) {
			snprintf(err, errlen, "%s: %s", a->file, why);
			refused = rc == -EINVAL;
		}
	}
	if (!rc)
		td_progress_stage(&progress, "storing the run");
	if (!rc)
		rc = store_run(a, imp->run, where, sizeof(where), err, errlen);
	td_progress_end(&progress);
	if (!rc && a->json)
		print_json(imp, a->file, where);
	else if (!rc)
		print_text(imp, a->file, where);
	td_import_free(imp);
	td_perf_stat_free(ps);
	free(text);
	return !rc ? 0 : refused ? TD_EXIT_USAGE : TD_EXIT_FAILURE;
}

int td_cmd_import(int argc, char **argv)
{
	struct import_args a = { 0 };
	char err[1024] = "";
	int rc;

	td_labels_init(&a.labels);
	rc = parse_args(argc, argv, &a);
	if (!rc && (rc = import_file(&a, err, sizeof(err))) != 0)
		td_print_error("topdown import", err);
	td_labels_free(&a.labels);
	return rc < 0 ? 0 : rc;
}
