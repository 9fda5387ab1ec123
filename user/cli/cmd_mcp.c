// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown mcp-serve: the stored runs, the queries and the knowledge base
 * as an MCP server for AI assistants: on stdin/stdout (mcp/server.h), or
 * over Streamable HTTP (mcp/streamable.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "parse.h"
#include "server.h"
#include "store_open.h"
#include "streamable.h"

static const char usage_text[] =
	"usage: topdown mcp-serve [--allow-collect] [--max-duration 60s] [--page-size N]\n"
	"                         [--request-timeout 30s]\n"
	"                         [--db PATH | --backend postgresql --dsn DSN]\n"
	"                         [--transport stdio|http] [--listen ADDR:PORT | --port N]\n"
	"                         [--token-file FILE] [--tls-cert FILE --tls-key FILE]\n"
	"                         [--max-sessions N] [--session-idle 30m]\n"
	"Serves MCP (JSON-RPC 2.0): on stdin and stdout, one message per line (the default), or\n"
	"over Streamable HTTP at http://ADDR:PORT/mcp; logs go to stderr.\n"
	"  --allow-collect      let collect_topdown run collections (needs root or CAP_BPF+CAP_PERFMON)\n"
	"  --max-duration D     the longest collection collect_topdown may run (default 60s)\n"
	"  --page-size N        items per page of tools/list and other lists (default 100)\n"
	"  --request-timeout D  the longest a request may read the store (default 30s); one that\n"
	"                       runs past it gets error -32001 (HTTP: status 504); collections\n"
	"                       are bounded by --max-duration instead\n"
	"  --transport T        stdio (default) or http\n"
	"  --listen ADDR:PORT   where HTTP listens (default 127.0.0.1:8000; [::1]:PORT for IPv6)\n"
	"  --port N             the same on 127.0.0.1 (0: any free port, told on stderr)\n"
	"  --token-file FILE    clients must send Authorization: Bearer <the file's first line>;\n"
	"                       required off loopback; the file must be chmod 600\n"
	"  --tls-cert FILE, --tls-key FILE  serve HTTPS with this PEM certificate and key\n"
	"  --max-sessions N     sessions at once (default 64); a new one over it ends the longest idle\n"
	"  --session-idle D     a session unused this long ends (default 30m)\n";

struct cli {
	struct td_mcp_http_options http;
	struct td_httpd_options server;
	const char *transport;
	const char *token_file;
	char listen[32];
};

static int usage_error(const char *message)
{
	fprintf(stderr, "topdown mcp-serve: %s (topdown mcp-serve --help lists the options)\n",
		message);
	return TD_EXIT_USAGE;
}

/* 0, -1 after --help, or the exit code of a usage error. */
static int parse_args(int argc, char **argv, struct cli *c)
{
	static const struct option options[] = {
		{ "allow-collect", no_argument, NULL, 'a' },
		{ "max-duration", required_argument, NULL, 'm' },
		{ "page-size", required_argument, NULL, 'n' },
		{ "request-timeout", required_argument, NULL, 'r' },
		{ "db", required_argument, NULL, 'D' },
		{ "transport", required_argument, NULL, 'T' },
		{ "listen", required_argument, NULL, 'l' },
		{ "port", required_argument, NULL, 'p' },
		{ "token-file", required_argument, NULL, 't' },
		{ "tls-cert", required_argument, NULL, 'C' },
		{ "tls-key", required_argument, NULL, 'K' },
		{ "max-sessions", required_argument, NULL, 'S' },
		{ "session-idle", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct td_mcp_options *o = &c->http.mcp;
	bool http_only = false;
	char err[512] = "";
	long number;
	int opt, ret = 0;

	optind = 1;
	opterr = 0;
	while (!ret && (opt = getopt_long(argc, argv, "am:n:r:D:h", options, NULL)) != -1) {
		http_only |= strchr("lptCKSI", opt) != NULL;
		switch (opt) {
		case 'a': o->allow_collect = true; break;
		case 'm': ret = td_parse_duration_ns(optarg, "--max-duration", &o->max_duration_ns, err, sizeof(err)); break;
		case 'n':
			ret = td_parse_int_range(optarg, "--page-size", 1, 10000, &number, err,
						 sizeof(err));
			o->page_size = (size_t)number;
			break;
		case 'r':
			ret = td_parse_duration_ns(optarg, "--request-timeout", &o->request_timeout_ns, err, sizeof(err));
			break;
		case 'D': o->db = optarg; break;
		case 'T': c->transport = optarg; break;
		case 'l': c->http.listen = optarg; break;
		case 'p':
			ret = td_parse_int_range(optarg, "--port", 0, 65535, &number, err, sizeof(err));
			snprintf(c->listen, sizeof(c->listen), "127.0.0.1:%ld", number);
			c->http.listen = c->listen;
			break;
		case 't': c->token_file = optarg; break;
		case 'C': c->server.tls_cert = optarg; break;
		case 'K': c->server.tls_key = optarg; break;
		case 'S':
			ret = td_parse_int_range(optarg, "--max-sessions", 1, 100000, &number, err,
						 sizeof(err));
			c->http.max_sessions = (unsigned)number;
			break;
		case 'I': ret = td_parse_duration_ns(optarg, "--session-idle", &c->http.session_idle_ns, err, sizeof(err)); break;
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
	if (strcmp(c->transport, "stdio") && strcmp(c->transport, "http")) {
		snprintf(err, sizeof(err), "unknown --transport '%s': use stdio or http", c->transport);
		return usage_error(err);
	}
	if (http_only && strcmp(c->transport, "http"))
		return usage_error("--listen, --port, --token-file, --tls-*, --max-sessions and "
				   "--session-idle go with --transport http");
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
		fprintf(stderr, "topdown mcp-serve: %s\n", err);
	td_mcp_http_free(h);
	free(token);
	return ret;
}

int td_cmd_mcp_serve(int argc, char **argv)
{
	struct cli c = { .transport = "stdio", .http.listen = TD_MCP_HTTP_DEFAULT_LISTEN };
	int ret;

	td_store_flags_take(&argc, argv, &c.http.mcp.store_flags);
	ret = parse_args(argc, argv, &c);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (!strcmp(c.transport, "http"))
		return serve_http(&c);
	return serve_stdio(&c.http.mcp);
}
