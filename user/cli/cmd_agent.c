// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown agent: the options into a td_agent_config, the signals, and the
 * window loop of user/agent/agent.h until a stop or --windows; with
 * --mcp-listen, the same process also answers MCP over HTTP about the
 * runs it stores (mcp/streamable.h), so one service serves both /metrics
 * and /mcp.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "agent_args.h"
#include "agent_options.h"
#include "collect_setup.h"
#include "commands.h"
#include "format.h"
#include "labels.h"
#include "parse.h"
#include "store_open.h"
#include "streamable.h"

static volatile sig_atomic_t stop_requested, reopen_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void on_hangup(int sig)
{
	(void)sig;
	reopen_requested = 1;
}

/* --mcp-listen: the MCP server beside the windows, and what it needs. */
struct agent_mcp {
	char *token;
	struct td_mcp_http *sessions;
	struct td_httpd *server;
};

static const struct td_opt agent_options[] = {
	TD_OPTS_AGENT(struct td_agent_args, ),
	TD_OPT_LABELS(struct td_agent_args, config.user_labels,
		      "stored with every run (repeatable; over TOPDOWN_LABELS, key by key)"),
	TD_OPTION("spool", TD_OPT_NAME, offsetof(struct td_agent_args, config.spool), "PATH",
		  "where runs wait while the database is unreachable (default: DB.spool beside a SQLite "
		  "database; for PostgreSQL $STATE_DIRECTORY/spool.db, else ~/.topdown/spool.db)", .short_name = 's'),
	TD_OPTION("log", TD_OPT_NAME, offsetof(struct td_agent_args, config.log_path), "PATH",
		  "log here instead of stderr (reopened on SIGHUP)", .short_name = 'g'),
	TD_OPTION("windows", TD_OPT_INT, offsetof(struct td_agent_args, config.windows), "N",
		  "stop after N windows", .min = 1, .max = 1000000000, .short_name = 'w'),
	TD_OPTS_STORE(struct td_agent_args, config.db, config.store_flags),
	{ 0 }
};

static const struct td_cli agent_command = {
	.command = "agent",
	.synopsis = "usage: topdown agent (--process NAME [--process NAME]... | --system-wide)\n"
		    "                     [--every 60s] [--duration D] [--level 1..3 | --events LIST] [--label key=value]...\n"
		    "                     [--max-overhead PCT] [--metrics-listen 127.0.0.1:9464] [--spool PATH]\n"
		    "                     [--log PATH] [--windows N] [--db PATH | --backend postgresql --dsn DSN]\n"
		    "                     [--sample[=EVENT]] [--sample-freq HZ] [--rotation-offset auto|N]\n"
		    "                     [--mcp-listen ADDR:PORT [--mcp-token-file FILE] [--mcp-request-timeout 30s]]\n",
	.notes = "TOPDOWN_LABELS=key=value,key2=value2: labels for every run; --label wins\n",
	.opts = agent_options,
};

/* Parses and checks every option; returns 0, an exit code, or -1 after --help. */
static int parse_args(int argc, char **argv, struct td_agent_args *a)
{
	struct td_cli_seen seen;
	char err[512] = "";
	int ret;

	td_agent_args_init(a);
	/* the environment's labels first: --label replaces them key by key */
	if (td_labels_parse_list(&a->config.user_labels, getenv("TOPDOWN_LABELS"), "TOPDOWN_LABELS", err, sizeof(err)))
		return td_cli_usage_error(&agent_command, err);
	if ((ret = td_cli_read(&agent_command, argc, argv, a, &seen)))
		return ret;
	if (td_agent_args_check(a, err, sizeof(err)))
		return td_cli_usage_error(&agent_command, err);
	return 0;
}

static void install_signal_handlers(void)
{
	struct sigaction stop = { .sa_handler = on_stop }, hup = { .sa_handler = on_hangup };

	/* no SA_RESTART: a signal wakes the poll */
	sigaction(SIGINT, &stop, NULL);
	sigaction(SIGTERM, &stop, NULL);
	sigaction(SIGHUP, &hup, NULL);
}

/*
 * Starts the MCP server of --mcp-listen on the agent's own store, before
 * the agent itself so that a bad address or token file is the only line
 * printed. It reads what the windows write (SQLite's WAL lets it read
 * while they do), and it never collects: the agent already is.
 */
static int mcp_start(struct agent_mcp *mcp, const struct td_agent_args *args, char *err, size_t errlen)
{
	const struct td_agent_config *a = &args->config;
	struct td_mcp_http_options o = {
		.mcp = { .db = a->db, .store_flags = a->store_flags,
			 .request_timeout_ns = args->mcp_request_timeout_ns },
		.listen = args->mcp_listen,
		.option_prefix = "mcp-",
	};
	struct td_httpd_options http = { .option = "--mcp-listen" };

	if (args->mcp_token_file && td_mcp_http_read_token(args->mcp_token_file, "--mcp-token-file", &mcp->token,
							err, errlen) < 0)
		return -EINVAL;
	o.token = mcp->token;
	if (!(mcp->sessions = td_mcp_http_new(&o, err, errlen)) ||
	    !(mcp->server = td_mcp_http_listen(mcp->sessions, &http, err, errlen)))
		return -EINVAL;
	return 0;
}

static void mcp_stop(struct agent_mcp *mcp)
{
	if (mcp->sessions)
		td_mcp_http_close(mcp->sessions, mcp->server, "topdown agent");
	td_mcp_http_free(mcp->sessions);
	free(mcp->token);
}

int td_cmd_agent(int argc, char **argv)
{
	struct td_agent_args args = { .config = { .stop_requested = &stop_requested,
						  .reopen_requested = &reopen_requested } };
	struct td_agent_config *a = &args.config;
	struct agent_mcp mcp = { 0 };
	struct td_agent *agent = NULL;
	char err[768] = "";
	int ret;

	td_labels_init(&a->user_labels);
	ret = parse_args(argc, argv, &args);
	if (ret) {
		td_labels_free(&a->user_labels);
		return ret < 0 ? 0 : ret;
	}
	if (args.mcp_listen && (ret = mcp_start(&mcp, &args, err, sizeof(err)))) {
		;
	} else if (!(agent = td_agent_new(a, err, sizeof(err)))) {
		ret = -EINVAL;
	} else {
		if (mcp.server)
			td_mcp_http_announce(mcp.sessions, mcp.server, "topdown agent");
		install_signal_handlers();
		ret = td_agent_run(agent, err, sizeof(err));
	}
	if (ret)
		td_print_error("topdown agent", err[0] ? err : strerror(-ret));
	mcp_stop(&mcp);
	td_agent_free(agent);
	td_labels_free(&a->user_labels);
	return ret ? TD_EXIT_FAILURE : 0;
}
