// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown mcp-serve: the stored runs, the queries and the knowledge base
 * as an MCP server for AI assistants: on stdin/stdout (mcp/server.h), or
 * over Streamable HTTP (mcp/streamable.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_options.h"
#include "commands.h"
#include "format.h"
#include "parse.h"
#include "server.h"
#include "store_open.h"
#include "streamable.h"

struct cli {
	struct td_mcp_http_options http;
	struct td_httpd_options server;
	const char *transport;
	const char *token_file;
	char listen[32];
};

/* --port N: --listen 127.0.0.1:N. */
static int parse_port(void *field, const struct td_opt *opt, const char *value, char *err, size_t errlen)
{
	struct cli *c = field;
	long port;

	(void)opt;
	if (td_parse_int_range(value, "--port", 0, 65535, &port, err, errlen))
		return -EINVAL;
	snprintf(c->listen, sizeof(c->listen), "127.0.0.1:%ld", port);
	c->http.listen = c->listen;
	return 0;
}

static const struct td_opt mcp_serve_options[] = {
	TD_OPTION("allow-collect", TD_OPT_FLAG, offsetof(struct cli, http.mcp.allow_collect), NULL,
		  "let collect_topdown run collections (needs root or CAP_BPF+CAP_PERFMON)", .short_name = 'a'),
	TD_OPTION("max-duration", TD_OPT_DURATION, offsetof(struct cli, http.mcp.max_duration_ns), "D",
		  "the longest collection collect_topdown may run (default 60s)", .short_name = 'm'),
	TD_OPTION("page-size", TD_OPT_SIZE, offsetof(struct cli, http.mcp.page_size), "N",
		  "items per page of tools/list and other lists (default 100)", .min = 1, .max = 10000,
		  .short_name = 'n'),
	TD_OPTION("request-timeout", TD_OPT_DURATION, offsetof(struct cli, http.mcp.request_timeout_ns), "D",
		  "the longest a request may read the store (default 30s); one that runs past it gets error "
		  "-32001 (HTTP: status 504); collections are bounded by --max-duration instead", .short_name = 'r'),
	TD_OPTS_STORE(struct cli, http.mcp.db, http.mcp.store_flags),
	TD_OPTION("transport", TD_OPT_TEXT, offsetof(struct cli, transport), "T", "stdio (default) or http"),
	TD_OPTION("listen", TD_OPT_TEXT, offsetof(struct cli, http.listen), "ADDR:PORT",
		  "where HTTP listens (default 127.0.0.1:8000; [::1]:PORT for IPv6)"),
	TD_OPTION("port", TD_OPT_CALL, 0, "N", "the same on 127.0.0.1 (0: any free port, told on stderr)",
		  .call = parse_port),
	TD_OPTION("token-file", TD_OPT_TEXT, offsetof(struct cli, token_file), "FILE",
		  "clients must send Authorization: Bearer <the file's first line>; required off loopback; "
		  "the file must be chmod 600"),
	TD_OPTION("tls-cert", TD_OPT_TEXT, offsetof(struct cli, server.tls_cert), "FILE",
		  "serve HTTPS with this PEM certificate (and --tls-key)"),
	TD_OPTION("tls-key", TD_OPT_TEXT, offsetof(struct cli, server.tls_key), "FILE",
		  "the certificate's PEM key"),
	TD_OPTION("max-sessions", TD_OPT_UNSIGNED, offsetof(struct cli, http.max_sessions), "N",
		  "sessions at once (default 64); a new one over it ends the longest idle", .min = 1, .max = 100000),
	TD_OPTION("session-idle", TD_OPT_DURATION, offsetof(struct cli, http.session_idle_ns), "D",
		  "a session unused this long ends (default 30m)"),
	{ 0 }
};

static const struct td_cli mcp_serve_command = {
	.command = "mcp-serve",
	.synopsis = "usage: topdown mcp-serve [--allow-collect] [--max-duration 60s] [--page-size N]\n"
		    "                         [--request-timeout 30s]\n"
		    "                         [--db PATH | --backend postgresql --dsn DSN]\n"
		    "                         [--transport stdio|http] [--listen ADDR:PORT | --port N]\n"
		    "                         [--token-file FILE] [--tls-cert FILE --tls-key FILE]\n"
		    "                         [--max-sessions N] [--session-idle 30m]\n"
		    "Serves MCP (JSON-RPC 2.0): on stdin and stdout, one message per line (the default), or\n"
		    "over Streamable HTTP at http://ADDR:PORT/mcp; logs go to stderr.\n",
	.opts = mcp_serve_options,
};

/* The options only HTTP has. */
static const char *const http_options[] = {
	"listen", "port", "token-file", "tls-cert", "tls-key", "max-sessions", "session-idle",
};

/* 0, -1 after --help, or the exit code of a usage error. */
static int parse_args(int argc, char **argv, struct cli *c)
{
	struct td_cli_seen seen;
	bool http_only = false;
	char err[512] = "";
	int ret = td_cli_read(&mcp_serve_command, argc, argv, c, &seen);

	if (ret)
		return ret;
	for (size_t i = 0; i < sizeof(http_options) / sizeof(http_options[0]); i++)
		http_only |= td_cli_given(&mcp_serve_command, &seen, http_options[i]);
	if (strcmp(c->transport, "stdio") && strcmp(c->transport, "http")) {
		snprintf(err, sizeof(err), "unknown --transport '%s': use stdio or http", c->transport);
		return td_cli_usage_error(&mcp_serve_command, err);
	}
	if (http_only && strcmp(c->transport, "http"))
		return td_cli_usage_error(&mcp_serve_command, "--listen, --port, --token-file, --tls-*, "
					  "--max-sessions and --session-idle go with --transport http");
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

static int serve_stdio(const struct td_mcp_options *opts)
{
	struct td_mcp_server *server = td_mcp_server_new(opts, write_stdout, NULL);
	int ret;

	if (!server) {
		fprintf(stderr, "topdown mcp-serve: out of memory starting the server\n");
		return 1;
	}
	ret = td_mcp_serve(server, STDIN_FILENO);
	td_mcp_server_free(server);
	return ret ? 1 : 0;
}

static int serve_http(struct cli *c)
{
	char err[512] = "", *token = NULL;
	struct td_mcp_http *h = NULL;
	int ret = 1;

	if (c->token_file && td_mcp_http_read_token(c->token_file, "--token-file", &token, err, sizeof(err)) < 0)
		goto out;
	c->http.token = token;
	if (!(h = td_mcp_http_new(&c->http, err, sizeof(err))))
		goto out;
	c->server.option = "--listen";
	c->server.ephemeral_port = true;
	if (td_mcp_http_serve(h, &c->server, err, sizeof(err)) == 0)
		ret = 0;
out:
	if (ret)
		td_print_error("topdown mcp-serve", err);
	td_mcp_http_free(h);
	free(token);
	return ret;
}

int td_cmd_mcp_serve(int argc, char **argv)
{
	struct cli c = { .transport = "stdio", .http.listen = TD_MCP_HTTP_DEFAULT_LISTEN };
	int ret;

	ret = parse_args(argc, argv, &c);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (!strcmp(c.transport, "http"))
		return serve_http(&c);
	return serve_stdio(&c.http.mcp);
}
