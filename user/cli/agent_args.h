/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The agent's options, one group for `topdown agent` and `topdown
 * install-service`: the service is installed with exactly the options
 * the agent takes, checked the same way, so that a unit never holds
 * options its agent would refuse at every start (a restart loop under
 * systemd).
 */
#ifndef TOPDOWN_AGENT_ARGS_H
#define TOPDOWN_AGENT_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent.h"
#include "cli_options.h"
#include "target_args.h"

struct td_agent_args {
	struct td_agent_config config; /* what the windows get */
	bool level_given;
	const char *mcp_listen, *mcp_token_file; /* --mcp-listen and its companions */
	uint64_t mcp_request_timeout_ns;         /* 0: the MCP server's default */
};

/* --process NAME into a struct td_agent_config (a td_opt_call_fn). */
int td_agent_process_option(void *field, const struct td_opt *opt, const char *value, char *err, size_t errlen);

/* --events LIST into a struct td_agent_config (a td_opt_call_fn). */
int td_agent_events_option(void *field, const struct td_opt *opt, const char *value, char *err, size_t errlen);

/* --rotation-offset auto|N into a struct td_agent_config (a td_opt_call_fn). */
int td_agent_rotation_offset_option(void *field, const struct td_opt *opt, const char *value, char *err,
				    size_t errlen);

/*
 * The agent's targets, window, counters, budget, endpoints and sampling,
 * into the struct td_agent_args at path of type (its member's name with a
 * trailing dot, "agent.", or nothing when type is struct td_agent_args); each entry is of
 * TD_OPT_GROUP_AGENT, the options install-service passes to the agent it
 * installs. Labels and the store are not among them: the service keeps
 * those in its settings file.
 */
#define TD_OPTS_AGENT(type, path) \
	TD_OPTION("process", TD_OPT_CALL, offsetof(type, path config), "NAME", \
		  "the processes named NAME (their comm; repeatable)", .call = td_agent_process_option, \
		  .short_name = 'p', .group = TD_OPT_GROUP_AGENT), \
	TD_OPTION("system-wide", TD_OPT_FLAG, offsetof(type, path config.system_wide), NULL, \
		  "every process, one run each per window", .short_name = 'a', .group = TD_OPT_GROUP_AGENT), \
	TD_OPTION("every", TD_OPT_DURATION, offsetof(type, path config.every_ns), "D", \
		  "window length: one run per target process per window (default 60s)", .short_name = 'e', \
		  .group = TD_OPT_GROUP_AGENT), \
	TD_OPTION("duration", TD_OPT_DURATION, offsetof(type, path config.duration_ns), "D", \
		  "count for D of every window (default: all of it)", .short_name = 'd', \
		  .group = TD_OPT_GROUP_AGENT), \
	TD_OPTION("level", TD_OPT_INT, offsetof(type, path config.level), "N", \
		  "depth of the Top-Down tree, 1 to 4 (default 1)", .min = 1, .max = 4, .sets = true, \
		  .set_offset = offsetof(type, path level_given), .short_name = 'l', .group = TD_OPT_GROUP_AGENT), \
	TD_OPTION("events", TD_OPT_CALL, offsetof(type, path config), "LIST", \
		  "count these events instead of the Top-Down ones (groups of 8 take turns)", \
		  .call = td_agent_events_option, .short_name = 'E', .group = TD_OPT_GROUP_AGENT), \
	TD_OPTION("rotation-offset", TD_OPT_CALL, offsetof(type, path config), "auto|N", \
		  "where this host's counter groups start their turns in a window: give the hosts of one " \
		  "label set 0, 1, 2... and together they count every group in every window (default auto: " \
		  "a hash of the host name)", .call = td_agent_rotation_offset_option, .group = TD_OPT_GROUP_AGENT), \
	TD_OPTION("max-overhead", TD_OPT_NUMBER, offsetof(type, path config.max_overhead_pct), "PCT", \
		  "shorten the counted time while the agent costs more than PCT% of the CPUs", \
		  .low = 0.01, .high = 100, .short_name = 'o', .group = TD_OPT_GROUP_AGENT), \
	TD_OPTION("metrics-listen", TD_OPT_NAME, offsetof(type, path config.metrics_listen), "ADDR", \
		  "serve Prometheus /metrics on ADDR, e.g. 127.0.0.1:9464 (default off)", .short_name = 'M', \
		  .group = TD_OPT_GROUP_AGENT), \
	TD_OPTION("mcp-listen", TD_OPT_NAME, offsetof(type, path mcp_listen), "ADDR", \
		  "also answer MCP over HTTP at http://ADDR/mcp about the stored runs, as topdown " \
		  "mcp-serve --transport http does (without collect_topdown)", .group = TD_OPT_GROUP_AGENT), \
	TD_OPTION("mcp-token-file", TD_OPT_NAME, offsetof(type, path mcp_token_file), "FILE", \
		  "clients must send Authorization: Bearer <FILE's first line>; required when --mcp-listen " \
		  "is not a loopback address; FILE must be chmod 600", .group = TD_OPT_GROUP_AGENT), \
	TD_OPTION("mcp-request-timeout", TD_OPT_DURATION, offsetof(type, path mcp_request_timeout_ns), "D", \
		  "the longest an MCP request may read the store (default 30s); one that runs past it " \
		  "gets HTTP 504", .group = TD_OPT_GROUP_AGENT), \
	TD_OPTS_SAMPLE(type, path config.sample, path config.sample_event, path config.sample_freq_hz, \
		       TD_OPT_GROUP_AGENT)

/* The agent's defaults, before the options. */
void td_agent_args_init(struct td_agent_args *a);

/*
 * After the options: the combinations, the defaults that depend on
 * them, and the targets and window (td_agent_options_check). 0, or
 * -EINVAL with err.
 */
int td_agent_args_check(struct td_agent_args *a, char *err, size_t errlen);

#endif
