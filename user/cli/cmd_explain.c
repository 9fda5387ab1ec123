// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown explain: prints what kb/explain.c finds, as text or JSON.
 * Everything shown comes from td_explain_lookup() and td_explain_list();
 * this file only parses arguments and formats.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli_options.h"
#include "commands.h"
#include "format.h"
#include "explain_render.h"

struct explain_args {
	const char *name;
	const char *model;
	bool list;
	bool json;
};

static const struct td_opt explain_options[] = {
	TD_OPTION("list", TD_OPT_FLAG, offsetof(struct explain_args, list), NULL,
		  "every metric of the model instead of one NAME", .short_name = 'l'),
	TD_OPTION("model", TD_OPT_TEXT, offsetof(struct explain_args, model), "M",
		  "the CPU's Top-Down model (default: this host's)", .short_name = 'm'),
	TD_OPTION("json", TD_OPT_FLAG, offsetof(struct explain_args, json), NULL, "the same as JSON",
		  .short_name = 'j'),
	{ 0 }
};

static const struct td_cli explain_command = {
	.command = "explain",
	.synopsis = "usage: topdown explain NAME [--model M] [--json] | topdown explain --list [--model M] [--json]\n",
	.opts = explain_options,
	.max_operands = 1,
};

/* 0 to run, or the exit code to return at once (help, bad usage). */
static int parse_args(int argc, char **argv, struct explain_args *a)
{
	struct td_cli_seen seen;
	int ret = td_cli_read(&explain_command, argc, argv, a, &seen);

	if (ret)
		return ret;
	a->name = seen.nr_operands ? seen.operands[0] : NULL;
	if (a->list == !!a->name)
		return td_cli_usage_error(&explain_command, a->list ? "--list lists them all: leave out NAME"
								    : "name one metric, e.g. DRAM_Bound, or give --list");
	return 0;
}

/* ---------------------------------------------------------------- command */

/* Prints root as JSON on stdout and releases it; 0 or 1. */
static int print_json(json_t *root)
{
	int ret = root ? json_dumpf(root, stdout, JSON_INDENT(2)) : -1;

	json_decref(root);
	if (ret < 0 && ferror(stdout))
		return 0; /* a failed write, which main reports with its reason */
	if (ret < 0) {
		fputs("topdown explain: out of memory while formatting JSON\n", stderr);
		return 1;
	}
	fputc('\n', stdout);
	return 0;
}

/* Exit code for a failed lookup: the user's mistake (2) or ours (1). */
static int lookup_failed(int ret, const char *err)
{
	td_fputs_safe(stderr, err, 0); /* it quotes the name asked for */
	fputc('\n', stderr);
	return ret == -ENOMEM ? 1 : TD_EXIT_USAGE;
}

static int explain_one(const struct td_kb *kb, const struct explain_args *a)
{
	struct td_explanation *e;
	char err[1024];
	int ret = td_explain_lookup(kb, a->name, a->model, &e, err, sizeof(err));

	if (ret < 0)
		return lookup_failed(ret, err);
	if (a->json) {
		ret = print_json(td_explain_json(e));
	} else {
		td_explain_print(stdout, e);
		ret = 0;
	}
	td_explanation_free(e);
	return ret;
}

static int explain_list(const struct td_kb *kb, const struct explain_args *a)
{
	struct td_explain_listing *l;
	char err[1024];
	int ret = td_explain_list(kb, a->model, &l, err, sizeof(err));

	if (ret < 0)
		return lookup_failed(ret, err);
	if (a->json) {
		ret = print_json(td_explain_listing_json(l));
	} else {
		td_explain_print_listing(stdout, l);
		ret = 0;
	}
	td_explain_listing_free(l);
	return ret;
}

int td_cmd_explain(int argc, char **argv)
{
	struct explain_args a = { 0 };
	const struct td_kb *kb;
	char err[512];
	int ret = parse_args(argc, argv, &a);

	if (ret)
		return ret < 0 ? 0 : ret;
	kb = td_kb_load(err, sizeof(err));
	if (!kb) {
		td_print_error("topdown explain", err);
		return 1;
	}
	return a.list ? explain_list(kb, &a) : explain_one(kb, &a);
}
