// SPDX-License-Identifier: BSD-3-Clause
/* The one option parser and usage printer of every command (cli_options.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli_options.h"
#include "format.h"
#include "commands.h"
#include "labels.h"
#include "parse.h"

#define OPT_BASE 0x100 /* getopt_long's code of entry i: OPT_BASE + i, above any short option */
#define HELP_CODE (OPT_BASE + TD_CLI_MAX_OPTIONS)
#define USAGE_COLUMN 22 /* where the help of an option line starts */
#define USAGE_WIDTH 100 /* the longest line, as the synopses are written */

/* Stores value (NULL without one) as entry o says, into the command's struct args. */
static int store_value(const struct td_opt *o, void *args, const char *value, char *err, size_t errlen)
{
	void *field = (char *)args + o->offset;
	char what[64];
	long n;
	int ret;

	snprintf(what, sizeof(what), "--%s", o->name);
	switch (o->type) {
	case TD_OPT_FLAG:
		*(bool *)field = true;
		return 0;
	case TD_OPT_SET:
		*(int *)field = (int)o->min;
		return 0;
	case TD_OPT_NAME:
		if (!*value) {
			snprintf(err, errlen, "%s takes a %s, not an empty value", what, o->value);
			return -EINVAL;
		}
		/* fall through */
	case TD_OPT_TEXT:
		*(const char **)field = value;
		return 0;
	case TD_OPT_DURATION:
		return td_parse_duration_ns(value, what, field, err, errlen);
	case TD_OPT_INT:
		return td_parse_int_range(value, what, o->min, o->max, field, err, errlen);
	case TD_OPT_U64:
	case TD_OPT_SIZE:
	case TD_OPT_UNSIGNED:
		if ((ret = td_parse_int_range(value, what, o->min, o->max, &n, err, errlen)))
			return ret;
		if (o->type == TD_OPT_U64)
			*(uint64_t *)field = (uint64_t)n;
		else if (o->type == TD_OPT_SIZE)
			*(size_t *)field = (size_t)n;
		else
			*(unsigned *)field = (unsigned)n;
		return 0;
	case TD_OPT_NUMBER:
		return td_parse_number(value, what, o->low, o->high, field, err, errlen);
	case TD_OPT_LABEL:
		return td_labels_parse_arg(field, value, err, errlen);
	case TD_OPT_CALL:
		return o->call(field, o, value, err, errlen);
	case TD_OPT_HEADING:
		break;
	}
	return 0;
}

static bool takes_value(const struct td_opt *o)
{
	return o->type != TD_OPT_FLAG && o->type != TD_OPT_SET && (o->type != TD_OPT_CALL || o->value);
}

int td_cli_parse(const struct td_cli *cli, int argc, char **argv, void *args, struct td_cli_seen *seen,
		 char *err, size_t errlen)
{
	return td_cli_parse_each(cli, argc, argv, args, seen, NULL, NULL, err, errlen);
}

int td_cli_parse_each(const struct td_cli *cli, int argc, char **argv, void *args, struct td_cli_seen *seen,
		      td_cli_each_fn each, void *ctx, char *err, size_t errlen)
{
	struct option longopts[TD_CLI_MAX_OPTIONS + 2];
	char shorts[3 * TD_CLI_MAX_OPTIONS + 4] = ":h"; /* ':': a missing value is told apart */
	size_t n = 0, s = strlen(shorts);
	int opt, ret = 0;

	memset(seen, 0, sizeof(*seen));
	for (size_t i = 0; cli->opts[i].name; i++) {
		const struct td_opt *o = &cli->opts[i];

		if (i >= TD_CLI_MAX_OPTIONS) { /* a table too long to track: a bug, said loudly */
			snprintf(err, errlen, "internal error: %s has more than %d options", cli->command,
				 TD_CLI_MAX_OPTIONS);
			return -EINVAL;
		}
		if (o->type == TD_OPT_HEADING)
			continue;
		longopts[n++] = (struct option){ o->name, !takes_value(o) ? no_argument :
						 o->optional ? optional_argument : required_argument,
						 NULL, OPT_BASE + (int)i };
		if (o->short_name) {
			shorts[s] = '\0';
			if (strchr(shorts, o->short_name)) { /* two options, one letter: a bug */
				snprintf(err, errlen, "internal error: %s gives -%c to two options", cli->command,
					 o->short_name);
				return -EINVAL;
			}
			shorts[s++] = o->short_name;
			if (takes_value(o))
				shorts[s++] = ':';
			if (takes_value(o) && o->optional)
				shorts[s++] = ':';
		}
	}
	longopts[n++] = (struct option){ "help", no_argument, NULL, HELP_CODE };
	longopts[n] = (struct option){ 0 };
	shorts[s] = '\0';

	optind = 0; /* 0 has glibc start afresh: main or a test may have scanned before */
	opterr = 0; /* our one-line messages instead of getopt's */
	while (!ret && (opt = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
		const struct td_opt *o = NULL;

		if (opt == 'h' || opt == HELP_CODE) {
			td_cli_usage(cli, stdout);
			return TD_CLI_HELP_SHOWN;
		}
		if (opt >= OPT_BASE && opt < HELP_CODE) {
			o = &cli->opts[opt - OPT_BASE];
		} else if (opt != '?' && opt != ':') {
			for (size_t i = 0; cli->opts[i].name && !o; i++)
				if (cli->opts[i].short_name == opt && cli->opts[i].type != TD_OPT_HEADING)
					o = &cli->opts[i];
		}
		if (opt == ':' && optopt >= OPT_BASE && optopt < HELP_CODE) {
			const struct td_opt *m = &cli->opts[optopt - OPT_BASE];

			snprintf(err, errlen, "--%s needs a value: --%s %s", m->name, m->name, m->value);
			return -EINVAL;
		}
		if (!o) {
			snprintf(err, errlen, "unknown option, or one missing its value: '%s'", argv[optind - 1]);
			return -EINVAL;
		}
		ret = store_value(o, args, optarg, err, errlen);
		if (!ret && o->sets)
			*(bool *)((char *)args + o->set_offset) = true;
		if (!ret && each)
			ret = each(ctx, o, optarg, err, errlen);
		seen->given |= 1ull << (o - cli->opts);
	}
	if (ret)
		return ret;
	seen->operands = argv + optind;
	seen->nr_operands = argc - optind;
	if (cli->max_operands >= 0 && seen->nr_operands > cli->max_operands) {
		snprintf(err, errlen, "unexpected argument '%s'", argv[optind + cli->max_operands]);
		return -EINVAL;
	}
	return 0;
}

bool td_cli_given(const struct td_cli *cli, const struct td_cli_seen *seen, const char *name)
{
	for (size_t i = 0; cli->opts[i].name; i++)
		if (cli->opts[i].type != TD_OPT_HEADING && strcmp(cli->opts[i].name, name) == 0)
			return seen->given & (1ull << i);
	return false;
}

/* left, then help from column, wrapped at word ends into lines of at most
 * USAGE_WIDTH, the following ones starting at USAGE_COLUMN. */
static void print_help(FILE *out, const char *left, int column, const char *help)
{
	int width = USAGE_WIDTH - column;

	fprintf(out, "%-*s", column, left);
	for (;;) {
		int n = (int)strlen(help);

		if (n > width) { /* the last space that fits, or the first one after */
			for (n = width; n > 0 && help[n] != ' '; n--)
				;
			if (n == 0)
				n = (int)strcspn(help, " ");
		}
		fprintf(out, "%.*s\n", n, help);
		help += n;
		if (!*help++)
			return;
		column = USAGE_COLUMN;
		width = USAGE_WIDTH - column;
		fprintf(out, "%*s", column, "");
	}
}

void td_cli_usage(const struct td_cli *cli, FILE *out)
{
	fputs(cli->synopsis, out);
	for (size_t i = 0; cli->opts[i].name; i++) {
		const struct td_opt *o = &cli->opts[i];
		char left[128];
		int len;

		if (o->type == TD_OPT_HEADING) {
			fprintf(out, "%s\n", o->name);
			continue;
		}
		if (!o->value)
			len = snprintf(left, sizeof(left), "  --%s", o->name);
		else if (o->optional)
			len = snprintf(left, sizeof(left), "  --%s[=%s]", o->name, o->value);
		else
			len = snprintf(left, sizeof(left), "  --%s %s", o->name, o->value);
		if (!o->help)
			fprintf(out, "%s\n", left);
		else if (len < USAGE_COLUMN)
			print_help(out, left, USAGE_COLUMN, o->help);
		else
			print_help(out, left, len + 2, o->help);
	}
	if (cli->notes)
		fputs(cli->notes, out);
}

int td_cli_usage_error(const struct td_cli *cli, const char *message)
{
	char safe[TD_SAFE_LEN(1024)];

	/* it quotes what was typed, which may hold anything; one write, so a reader gets the whole line */
	fprintf(stderr, "topdown %s: %s (topdown %s --help lists the options)\n", cli->command,
		td_safe_text(message, safe, sizeof(safe)), cli->command);
	return TD_EXIT_USAGE;
}

int td_cli_read(const struct td_cli *cli, int argc, char **argv, void *args, struct td_cli_seen *seen)
{
	char err[512] = "";
	int ret = td_cli_parse(cli, argc, argv, args, seen, err, sizeof(err));

	if (ret == TD_CLI_HELP_SHOWN)
		return -1;
	return ret ? td_cli_usage_error(cli, err) : 0;
}
