// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown doctor: what works on this host, and what to do about the rest
 * (user/doctor/doctor.h), one line per check or --json. Exit 0 when
 * collection can work, 1 when it cannot, 2 on bad usage.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli_options.h"
#include "commands.h"
#include "doctor.h"
#include "store_open.h"

struct doctor_args {
	struct td_store_flags store;
	struct td_doctor_opts opts;
	bool json;
};

static const struct td_opt doctor_options[] = {
	TD_OPTION("verify", TD_OPT_FLAG, offsetof(struct doctor_args, opts.verify), NULL,
		  "count a built-in loop through topdown's BPF path and through a plain per-thread "
		  "perf_event_open, and compare (instructions and cycles where the host has hardware "
		  "counters, else task-clock)", .short_name = 'v'),
	TD_OPTION("json", TD_OPT_FLAG, offsetof(struct doctor_args, json), NULL, "the checks as JSON",
		  .short_name = 'j'),
	TD_OPTS_STORE(struct doctor_args, opts.db, store),
	{ 0 }
};

static const struct td_cli doctor_command = {
	.command = "doctor",
	.synopsis = "usage: topdown doctor [--verify] [--json] [--db PATH | --backend postgresql --dsn DSN]\n"
		    "Checks the kernel, BPF, privileges, the PMU and its Top-Down model, and the store.\n",
	.opts = doctor_options,
};

static void print_text(const struct td_doctor_report *r)
{
	static const char *const mark[] = { [TD_CHECK_OK] = "✓", [TD_CHECK_WARN] = "!", [TD_CHECK_FAIL] = "✗" };

	for (size_t i = 0; i < r->count; i++) {
		const struct td_check *c = &r->checks[i];

		printf("%s %-19s %s", mark[c->status], c->name, c->detail);
		if (c->fix[0])
			printf(" -- %s", c->fix);
		putchar('\n');
	}
	printf("%s\n", r->can_collect ? "collection can work on this host" :
		       "collection cannot work on this host until the checks marked ✗ are fixed");
}

static void print_json(const struct td_doctor_report *r)
{
	json_t *checks = json_array(), *doc;

	for (size_t i = 0; i < r->count; i++) {
		const struct td_check *c = &r->checks[i];

		json_array_append_new(checks, json_pack("{s:s, s:s, s:s, s:s?}", "name", c->name, "status",
							td_check_status_name(c->status), "detail", c->detail,
							"fix", c->fix[0] ? c->fix : NULL));
	}
	doc = json_pack("{s:b, s:o, s:o}", "can_collect", r->can_collect, "checks", checks, "pmu_counters",
			!r->counters.probed ? json_null() :
			json_pack("{s:i, s:i, s:i, s:i}", "gp_free", r->counters.gp_free, "gp_documented",
				  r->counters.gp_documented, "fixed_free", r->counters.fixed_free,
				  "fixed_documented", r->counters.fixed_documented));
	json_dumpf(doc, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(doc);
}

int td_cmd_doctor(int argc, char **argv)
{
	struct doctor_args a = { 0 };
	struct td_doctor_report report;
	struct td_cli_seen seen;
	int ret = td_cli_read(&doctor_command, argc, argv, &a, &seen);

	if (ret)
		return ret < 0 ? 0 : ret;
	a.opts.store = &a.store;
	td_doctor_run(&a.opts, &report);
	if (a.json)
		print_json(&report);
	else
		print_text(&report);
	return report.can_collect ? 0 : TD_EXIT_FAILURE;
}
