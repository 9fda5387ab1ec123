// SPDX-License-Identifier: BSD-3-Clause
/* The agent's option group (agent_args.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent_args.h"
#include "agent_options.h"
#include "collect_setup.h"
#include "parse.h"
#include "rotation.h"

int td_agent_process_option(void *field, const struct td_opt *opt, const char *value, char *err, size_t errlen)
{
	struct td_agent_config *c = field;

	(void)opt;
	if (td_proc_name_check(value, err, errlen))
		return -EINVAL;
	if (c->nr_process_names == TD_MAX_TARGET_COMMS) {
		snprintf(err, errlen, "more than %d --process names; follow fewer, or use --system-wide",
			 TD_MAX_TARGET_COMMS);
		return -EINVAL;
	}
	c->process_names[c->nr_process_names++] = value;
	return 0;
}

int td_agent_events_option(void *field, const struct td_opt *opt, const char *value, char *err, size_t errlen)
{
	struct td_agent_config *c = field;

	(void)opt;
	c->events_given = true;
	return td_event_list_parse(value, c->events, TD_MAX_EVENTS, &c->nr_events, err, errlen);
}

int td_agent_rotation_offset_option(void *field, const struct td_opt *opt, const char *value, char *err,
				    size_t errlen)
{
	struct td_agent_config *c = field;
	long n;

	(void)opt;
	if (strcmp(value, "auto") == 0) {
		c->rotation_offset_given = false;
		return 0;
	}
	if (td_parse_int_range(value, "--rotation-offset", 0, TD_ROTATION_MAX_OFFSET, &n, err, errlen)) {
		snprintf(err, errlen, "bad value '%.32s' for --rotation-offset: use auto, or this host's index "
			 "among the hosts of its label set, a whole number from 0 to %d", value, TD_ROTATION_MAX_OFFSET);
		return -EINVAL;
	}
	c->rotation_offset_given = true;
	c->rotation_offset = (unsigned)n;
	return 0;
}

void td_agent_args_init(struct td_agent_args *a)
{
	a->config.every_ns = TD_AGENT_DEFAULT_EVERY_NS;
	a->config.level = 1;
}

int td_agent_args_check(struct td_agent_args *a, char *err, size_t errlen)
{
	struct td_agent_config *c = &a->config;

	if (c->events_given && a->level_given) {
		snprintf(err, errlen, "--events replaces the Top-Down counters that --level chooses: give one or the other");
		return -EINVAL;
	}
	if (td_sample_options_check(c->sample, c->sample_event, NULL, c->sample_freq_hz, 0, err, errlen))
		return -EINVAL;
	if (!c->sample_freq_hz)
		c->sample_freq_hz = TD_DEFAULT_SAMPLE_FREQ_HZ;
	if ((a->mcp_token_file || a->mcp_request_timeout_ns) && !a->mcp_listen) {
		snprintf(err, errlen, "--%s goes with --mcp-listen: give both, or neither",
			 a->mcp_token_file ? "mcp-token-file" : "mcp-request-timeout");
		return -EINVAL;
	}
	if (!c->duration_ns)
		c->duration_ns = c->every_ns;
	return td_agent_options_check(c->nr_process_names, c->system_wide, c->every_ns, c->duration_ns,
				      err, errlen);
}
