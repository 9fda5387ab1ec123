// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown mcp-serve: the stored runs, the queries and the knowledge base
 * as an MCP server on stdin/stdout, for AI assistants (mcp/server.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "parse.h"
#include "server.h"
#include "store_open.h"

static const char usage_text[] =
	"usage: topdown mcp-serve [--allow-collect] [--max-duration 60s] [--page-size N]\n"
	"                         [--db PATH | --backend postgresql --dsn DSN]\n"
	"Serves MCP (JSON-RPC 2.0, one message per line) on stdin and stdout; logs go to stderr.\n"
	"  --allow-collect      let collect_topdown run collections (needs root or CAP_BPF+CAP_PERFMON)\n"
	"  --max-duration D     the longest collection collect_topdown may run (default 60s)\n"
	"  --page-size N        items per page of tools/list and other lists (default 100)\n";

static int usage_error(const char *message)
{
	fprintf(stderr, "topdown mcp-serve: %s (topdown mcp-serve --help lists the options)\n",
		message);
	return TD_EXIT_USAGE;
}

/* 0, -1 after --help, or the exit code of a usage error. */
static int parse_args(int argc, char **argv, struct td_mcp_options *o)
{
	static const struct option options[] = {
		{ "allow-collect", no_argument, NULL, 'a' },
		{ "max-duration", required_argument, NULL, 'm' },
		{ "page-size", required_argument, NULL, 'n' },
		{ "db", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	char err[512] = "";
	long page_size;
	int opt, ret = 0;

	optind = 1;
	opterr = 0;
	while (!ret && (opt = getopt_long(argc, argv, "am:n:D:h", options, NULL)) != -1) {
		switch (opt) {
		case 'a': o->allow_collect = true; break;
		case 'm': ret = td_parse_duration_ns(optarg, &o->max_duration_ns, err, sizeof(err)); break;
		case 'n':
			ret = td_parse_int_range(optarg, "--page-size", 1, 10000, &page_size, err,
						 sizeof(err));
			o->page_size = (size_t)page_size;
			break;
		case 'D': o->db = optarg; break;
		case 'h': fputs(usage_text, stdout); return -1;
		default:
			snprintf(err, sizeof(err), "unknown option, or one missing its value: '%s'",
				 argv[optind - 1]);
			ret = -EINVAL;
		}
	}
	if (ret)
		return usage_error(err);
	if (optind < argc) {
		snprintf(err, sizeof(err), "unexpected argument '%s'", argv[optind]);
		return usage_error(err);
	}
	return 0;
}

/* One message a line on stdout, flushed at once: the client is waiting. */
static int write_stdout(void *ctx, const char *text, size_t len)
{
	(void)ctx;
	if (fwrite(text, 1, len, stdout) != len || fputc('\n', stdout) == EOF || fflush(stdout))
		return -EPIPE;
	return 0;
}

int td_cmd_mcp_serve(int argc, char **argv)
{
	struct td_mcp_options opts = { 0 };
	struct td_mcp_server *server;
	int ret;

	td_store_flags_take(&argc, argv, &opts.store_flags);
	ret = parse_args(argc, argv, &opts);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (!(server = td_mcp_server_new(&opts, write_stdout, NULL))) {
		fprintf(stderr, "topdown mcp-serve: out of memory starting the server\n");
		return 1;
	}
	ret = td_mcp_serve(server, STDIN_FILENO);
	td_mcp_server_free(server);
	return ret ? 1 : 0;
}
