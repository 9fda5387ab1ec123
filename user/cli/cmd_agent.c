// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown agent: the options into a td_agent_config, the signals, and the
 * window loop of user/agent/agent.h until a stop or --windows; with
 * --mcp-listen, the same process also answers MCP over HTTP about the
 * runs it stores (mcp/streamable.h), so one service serves both /metrics
 * and /mcp.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
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

static const char usage_text[] =
	"usage: topdown agent (--process NAME [--process NAME]... | --system-wide)\n"
	"                     [--every 60s] [--duration D] [--level 1..3 | --events LIST] [--label key=value]...\n"
	"                     [--max-overhead PCT] [--metrics-listen 127.0.0.1:9464] [--spool PATH]\n"
	"                     [--log PATH] [--windows N] [--db PATH | --backend postgresql --dsn DSN]\n"
	"                     [--sample[=EVENT]] [--sample-freq HZ]\n"
	"                     [--mcp-listen ADDR:PORT [--mcp-token-file FILE] [--mcp-request-timeout 30s]]\n"
	"  --every D          window length: one run per target process per window (default 60s)\n"
	"  --duration D       count for D of every window (default: all of it)\n"
	"  --max-overhead PCT shorten the counted time while the agent costs more than PCT% of the CPUs\n"
	"  --metrics-listen A serve Prometheus /metrics on A (a loopback address; default off)\n"
	"  --spool PATH       where runs wait while the database is unreachable\n"
	"                     (default $STATE_DIRECTORY/spool.db, else ~/.topdown/spool.db)\n"
	"  --log PATH         log here instead of stderr (reopened on SIGHUP)\n"
	"  --windows N        stop after N windows\n"
	"  --events LIST      count these events instead of the Top-Down ones (groups of 8 take turns)\n"
	"  --sample[=EVENT]   also sample the targets' stacks (locate), as topdown collect --sample does\n"
	"  --sample-freq HZ   samples per second per CPU (default 99)\n"
	"  --mcp-listen A     also answer MCP over HTTP at http://A/mcp about the stored runs, as\n"
	"                     topdown mcp-serve --transport http does (without collect_topdown)\n"
	"  --mcp-token-file F clients must send Authorization: Bearer <F's first line>; required\n"
	"                     when --mcp-listen is not a loopback address; F must be chmod 600\n"
	"  --mcp-request-timeout D  the longest an MCP request may read the store (default 30s);\n"
	"                     one that runs past it gets HTTP 504\n"
	"  TOPDOWN_LABELS     key=value,key2=value2 labels for every run; --label wins\n";

/* --mcp-listen: the MCP server beside the windows, and what it needs. */
struct agent_mcp {
	const char *listen, *token_file;
	uint64_t request_timeout_ns; /* 0: the MCP server's default */
	char *token;
	struct td_mcp_http *sessions;
	struct td_httpd *server;
};

static int usage_error(const char *message)
{
	fprintf(stderr, "topdown agent: %s (topdown agent --help lists the options)\n", message);
	return TD_EXIT_USAGE;
}

/* --- arguments --- */

static int add_process_name(struct td_agent_config *a, const char *name, char *err, size_t errlen)
{
	if (td_proc_name_check(name, err, errlen))
		return -EINVAL;
	if (a->nr_process_names == TD_MAX_TARGET_COMMS) {
		snprintf(err, errlen, "more than %d --process names; follow fewer, or use --system-wide",
			 TD_MAX_TARGET_COMMS);
		return -EINVAL;
	}
	a->process_names[a->nr_process_names++] = name;
	return 0;
}

/* Parses and checks every option; returns 0, an exit code, or -1 after --help. */
static int parse_args(int argc, char **argv, struct td_agent_config *a, struct agent_mcp *mcp)
{
	static const struct option options[] = {
		{ "process", required_argument, NULL, 'p' },
		{ "system-wide", no_argument, NULL, 'a' },
		{ "every", required_argument, NULL, 'e' },
		{ "duration", required_argument, NULL, 'd' },
		{ "level", required_argument, NULL, 'l' },
		{ "label", required_argument, NULL, 'L' },
		{ "max-overhead", required_argument, NULL, 'o' },
		{ "metrics-listen", required_argument, NULL, 'M' },
		{ "spool", required_argument, NULL, 's' },
		{ "log", required_argument, NULL, 'g' },
		{ "windows", required_argument, NULL, 'w' },
		{ "events", required_argument, NULL, 'E' },
		{ "sample", optional_argument, NULL, 'S' },
		{ "sample-freq", required_argument, NULL, 'F' },
		{ "db", required_argument, NULL, 'D' },
		{ "mcp-listen", required_argument, NULL, 'P' },
		{ "mcp-token-file", required_argument, NULL, 'T' },
		{ "mcp-request-timeout", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	char err[512] = "";
	bool level_given = false;
	long freq = 0;
	int opt, ret;

	a->every_ns = TD_AGENT_DEFAULT_EVERY_NS;
	a->sample_freq_hz = TD_DEFAULT_SAMPLE_FREQ_HZ;
	a->level = 1;
	optind = 1;
	opterr = 0;
	/* the environment's labels first: --label replaces them key by key */
	ret = td_labels_parse_list(&a->user_labels, getenv("TOPDOWN_LABELS"), "TOPDOWN_LABELS", err, sizeof(err));
	while (!ret && (opt = getopt_long(argc, argv, "p:ae:d:l:L:o:M:s:g:w:D:E:F:h", options, NULL)) != -1) {
		switch (opt) {
		case 'p': ret = add_process_name(a, optarg, err, sizeof(err)); break;
		case 'a': a->system_wide = true; break;
		case 'e': ret = td_parse_duration_ns(optarg, "--every", &a->every_ns, err, sizeof(err)); break;
		case 'd': ret = td_parse_duration_ns(optarg, "--duration", &a->duration_ns, err, sizeof(err)); break;
		case 'l': level_given = true;
			ret = td_parse_int_range(optarg, "--level", 1, 4, &a->level, err, sizeof(err));
			break;
		case 'E': a->events_given = true;
			ret = td_event_list_parse(optarg, a->events, TD_MAX_EVENTS, &a->nr_events, err, sizeof(err));
			break;
		case 'L': ret = td_labels_parse_arg(&a->user_labels, optarg, err, sizeof(err)); break;
		case 'o': ret = td_parse_number(optarg, "--max-overhead", 0.01, 100, &a->max_overhead_pct, err, sizeof(err)); break;
		case 'M': a->metrics_listen = optarg; break;
		case 's': a->spool = optarg; break;
		case 'g': a->log_path = optarg; break;
		case 'w': ret = td_parse_int_range(optarg, "--windows", 1, 1000000000, &a->windows, err, sizeof(err)); break;
		case 'D': a->db = optarg; break;
		case 'S': a->sample = true; a->sample_event = optarg; break;
		case 'F': ret = td_parse_int_range(optarg, "--sample-freq", 1, 1000000, &freq, err, sizeof(err));
			a->sample_freq_hz = (uint64_t)freq;
			break;
		case 'P': mcp->listen = optarg; break;
		case 'T': mcp->token_file = optarg; break;
		case 'R': ret = td_parse_duration_ns(optarg, "--mcp-request-timeout", &mcp->request_timeout_ns, err, sizeof(err)); break;
		case 'h': fputs(usage_text, stdout); return -1;
		default:
			snprintf(err, sizeof(err), "unknown option, or one missing its value: '%s'", argv[optind - 1]);
			ret = -EINVAL;
		}
	}
	if (!ret && optind < argc) {
		snprintf(err, sizeof(err), "unexpected argument '%s'", argv[optind]);
		ret = -EINVAL;
	}
	if (!ret && a->events_given && level_given) {
		snprintf(err, sizeof(err), "--events replaces the Top-Down counters that --level chooses: give one or the other");
		ret = -EINVAL;
	}
	if (!ret && freq && !a->sample) {
		snprintf(err, sizeof(err), "--sample-freq sets the rate of --sample: give --sample too");
		ret = -EINVAL;
	}
	if (!ret && a->sample_event && !*a->sample_event) {
		snprintf(err, sizeof(err), "--sample= names no event: give --sample alone for the default, or --sample=EVENT");
		ret = -EINVAL;
	}
	if (!ret && (mcp->token_file || mcp->request_timeout_ns) && !mcp->listen) {
		snprintf(err, sizeof(err), "--%s goes with --mcp-listen: give both, or neither",
			 mcp->token_file ? "mcp-token-file" : "mcp-request-timeout");
		ret = -EINVAL;
	}
	if (!ret && !a->duration_ns)
		a->duration_ns = a->every_ns;
	if (!ret)
		ret = td_agent_options_check(a->nr_process_names, a->system_wide, a->every_ns, a->duration_ns,
					     err, sizeof(err));
	return ret ? usage_error(err) : 0;
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
static int mcp_start(struct agent_mcp *mcp, const struct td_agent_config *a, char *err, size_t errlen)
{
	struct td_mcp_http_options o = {
		.mcp = { .db = a->db, .store_flags = a->store_flags,
			 .request_timeout_ns = mcp->request_timeout_ns },
		.listen = mcp->listen,
		.option_prefix = "mcp-",
	};
	struct td_httpd_options http = { .option = "--mcp-listen" };

	if (mcp->token_file && td_mcp_http_read_token(mcp->token_file, "--mcp-token-file", &mcp->token,
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
	struct td_agent_config a = { .stop_requested = &stop_requested, .reopen_requested = &reopen_requested };
	struct agent_mcp mcp = { 0 };
	struct td_agent *agent = NULL;
	char err[768] = "";
	int ret;

	td_labels_init(&a.user_labels);
	td_store_flags_take(&argc, argv, &a.store_flags);
	ret = parse_args(argc, argv, &a, &mcp);
	if (ret) {
		td_labels_free(&a.user_labels);
		return ret < 0 ? 0 : ret;
	}
	if (mcp.listen && (ret = mcp_start(&mcp, &a, err, sizeof(err)))) {
		;
	} else if (!(agent = td_agent_new(&a, err, sizeof(err)))) {
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
	td_labels_free(&a.user_labels);
	return ret ? TD_EXIT_FAILURE : 0;
}
