// SPDX-License-Identifier: BSD-3-Clause
/* topdown: per-thread Top-Down microarchitecture analysis with eBPF. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "format.h"
#include "fileio.h"

#include "version.h"

static int cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("topdown %s\n", TOPDOWN_VERSION);
	return 0;
}

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "doctor", td_cmd_doctor, "what works on this host for topdown, and what to do about the rest" },
	{ "collect", td_cmd_collect, "count per-thread scheduling figures and counters, store a labeled run" },
	{ "top", td_cmd_top, "the target's threads live in the terminal, refreshed every interval" },
	{ "agent", td_cmd_agent, "collect always-on, in windows: one run per target process per window" },
	{ "list", td_cmd_list, "list stored runs" },
	{ "query", td_cmd_query, "bottlenecks, funnel, tree, threads, trend over stored runs" },
	{ "compare", td_cmd_compare, "what changed between runs or labeled sets of runs, tested" },
	{ "flamegraph", td_cmd_flamegraph, "where the samples landed, as an interactive SVG flame graph" },
	{ "report", td_cmd_report, "the funnel, tree, threads, trends, comparison and flame graph as one HTML page" },
	{ "gc", td_cmd_gc, "delete runs older than a given age" },
	{ "export", td_cmd_export, "write runs with their trees as JSON or CSV" },
	{ "import", td_cmd_import, "read perf stat counts, compute the Top-Down tree, store a labeled run" },
	{ "explain", td_cmd_explain, "what a Top-Down metric means and what to do about it" },
	{ "mcp-serve", td_cmd_mcp_serve, "serve the stored runs to AI assistants over MCP (stdio)" },
	{ "install-service", td_cmd_install_service, "run `topdown agent` under systemd: write, enable its unit" },
	{ "uninstall-service", td_cmd_uninstall_service, "disable and remove the agent's systemd unit" },
	{ "version", cmd_version, "print the version" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: topdown COMMAND [OPTIONS]   (topdown COMMAND --help for its options)\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-17s %s\n", commands[i].name, commands[i].summary);
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

static int help(int argc, char **argv)
{
	const struct command *c = argc == 1 ? find_command(argv[0]) : NULL;
	char *help_argv[] = { argv[0], "--help", NULL };

	if (argc != 1 || !c) {
		fprintf(stderr, "topdown help: %s; run `topdown help COMMAND` with one of the commands "
			"`topdown --help` lists\n", argc != 1 ? "name one command" : "no such command");
		return TD_EXIT_USAGE;
	}
	return c->run(2, help_argv);
}

/*
 * The command's exit code, unless what it wrote to standard output did not
 * all get there (a full disk, an I/O error): then one line saying so and
 * exit 1, in every command, whatever its own writers checked.
 *
 * A reader that leaves early (`topdown list | head -1`) is not an error:
 * SIGPIPE keeps its default action and ends the command quietly at the
 * next write, as it does cat and ls. Only when the caller ignores SIGPIPE
 * does the write fail with EPIPE, and then it is reported as any other.
 */
static int finish(const char *command, int code)
{
	char err[256];

	if (td_stdout_check(true, err, sizeof(err)) == 0)
		return code;
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "topdown%s%s", *command ? " " : "", command);
	td_print_error(prefix, err);
	return code ? code : TD_EXIT_FAILURE;
}

static int dispatch(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return TD_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || (!strcmp(argv[1], "help") && argc == 2)) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "help")) /* topdown help COMMAND: as topdown COMMAND --help */
		return help(argc - 2, argv + 2);
	if (!strcmp(argv[1], "--version"))
		return cmd_version(argc - 1, argv + 1);
	if (find_command(argv[1]))
		return find_command(argv[1])->run(argc - 1, argv + 1);
	char safe[TD_SAFE_LEN(256)];

	fprintf(stderr, "topdown: unknown command '%s'; run `topdown --help` for the list\n",
		td_safe_text(argv[1], safe, sizeof(safe)));
	return TD_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	td_stdout_track();
	return finish(argc > 1 && find_command(argv[1]) ? argv[1] : "", dispatch(argc, argv));
}
