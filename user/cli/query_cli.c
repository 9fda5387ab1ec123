// SPDX-License-Identifier: BSD-3-Clause
#include <errno.h>
#include <getopt.h>
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

void td_query_cli_init(struct td_query_cli *c, int *argc, char **argv)
{
	memset(c, 0, sizeof(*c));
	td_run_selection_init(&c->sel);
	td_store_flags_take(argc, argv, &c->store_flags);
}

void td_query_cli_release(struct td_query_cli *c)
{
	td_run_selection_release(&c->sel);
}

int td_query_cli_option(struct td_query_cli *c, int opt, const char *arg, char *err,
			size_t errlen)
{
	int ret = 0;

	switch (opt) {
	case 'L': ret = td_labels_parse_arg(&c->sel.labels, arg, err, errlen); break;
	case 'p':
		if (!*arg) {
			snprintf(err, errlen, "--process takes a process name");
			ret = -EINVAL;
		}
		c->sel.process = arg;
		break;
	case 't': ret = td_parse_duration_ns(arg, "--last", &c->sel.last_ns, err, errlen); break;
	case 'r': c->sel.run_id = arg; break;
	case 'D': c->db = arg; break;
	case 'j': c->format = TD_FORMAT_JSON; break;
	case 'c': c->format = TD_FORMAT_CSV; break;
	default: return 0;
	}
	return ret < 0 ? ret : 1;
}

struct td_store *td_query_cli_open(struct td_query_cli *c, char *err, size_t errlen)
{
	return td_store_open_flags(&c->store_flags, c->db, NULL, 0, err, errlen);
}

int td_query_cli_parse(struct td_query_cli *c, int argc, char **argv, const struct option *options,
		       const char *usage, td_query_cli_own_fn own, void *args, bool operands,
		       char *err, size_t errlen)
{
	int opt, ret = 0;

	optind = 1;
	opterr = 0; /* our one-line message instead of getopt's */
	while (!ret && (opt = getopt_long(argc, argv, TD_QUERY_CLI_SHORT, options, NULL)) != -1) {
		if (opt == TD_QUERY_CLI_HELP) {
			fputs(usage, stdout);
			return TD_QUERY_CLI_HELP_SHOWN;
		}
		if (opt == '?') {
			snprintf(err, errlen, "unknown option, or one missing its value: '%s'", argv[optind - 1]);
			return -EINVAL;
		}
		ret = td_query_cli_option(c, opt, optarg, err, errlen);
		ret = ret == 0 ? own(args, opt, optarg, err, errlen) : ret < 0 ? ret : 0;
	}
	if (!ret && !operands && optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
		ret = -EINVAL;
	}
	return ret;
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

int td_query_cli_run(struct td_query_cli *c, const char *command,
		     int (*work)(struct td_store *store, void *args, char *err, size_t errlen), void *args)
{
	char err[1024] = "";
	struct td_store *store = td_query_cli_open(c, err, sizeof(err));
	int ret = store ? work(store, args, err, sizeof(err)) : -EIO;

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
