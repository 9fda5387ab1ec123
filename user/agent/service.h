/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The agent's systemd unit and its settings file, as text. The unit is
 * packaging/topdown-agent.service.in with its fields filled in; the
 * settings file is what systemd's EnvironmentFile= reads. Writing them
 * and talking to systemctl is user/cli/cmd_service.c's business.
 */
#ifndef TOPDOWN_SERVICE_H
#define TOPDOWN_SERVICE_H

#include <limits.h>
#include <stddef.h>

#include "labels.h"

#define TD_SERVICE_UNIT_NAME "topdown-agent.service"
#define TD_PARANOID_UNKNOWN INT_MIN /* kernel.perf_event_paranoid could not be read */

struct td_service_unit {
	const char *exe;               /* absolute path of the topdown binary */
	const char *const *agent_args; /* the agent's options, after "agent" */
	size_t nr_agent_args;
	const char *kernel_release;    /* uname -r of the host: picks the capabilities */
	int perf_event_paranoid;       /* the host's kernel.perf_event_paranoid: so does it */
	const char *env_file;          /* absolute path of the settings file */
	const char *read_write_dir;    /* a directory the agent writes besides its
					* StateDirectory (--db's), or NULL */
};

struct td_service_env {
	const struct td_labels *labels; /* TOPDOWN_LABELS, "k=v,k2=v2" */
	const char *backend;            /* TOPDOWN_BACKEND, or NULL */
	const char *dsn;                /* TOPDOWN_DSN, or NULL */
	const char *db_path;            /* TOPDOWN_DB_PATH, or NULL */
};

/*
 * The capability bounding set for a kernel release ("6.1.0-13-amd64") and
 * its kernel.perf_event_paranoid: CAP_BPF, CAP_PERFMON, CAP_SYS_RESOURCE
 * and CAP_SYS_PTRACE, plus CAP_SYS_ADMIN before 5.8 (which split CAP_BPF
 * and CAP_PERFMON out of it), when perf_event_paranoid is above 2 (Debian's
 * and Ubuntu's kernels then open perf events for CAP_SYS_ADMIN alone, not
 * CAP_PERFMON), or when either cannot be read (TD_PARANOID_UNKNOWN).
 */
const char *td_service_capabilities(const char *kernel_release, int perf_event_paranoid);

/*
 * A label the agent can carry in TOPDOWN_LABELS: its value holds no comma
 * (the separator), quote or newline. 0, or -EINVAL with err.
 */
int td_service_label_check(const struct td_label *label, char *err, size_t errlen);

/* The unit's text (malloc'd), or NULL with err: an argument with a
 * control character, or out of memory. */
char *td_service_unit_render(const struct td_service_unit *unit, char *err, size_t errlen);

/* The settings file's text (malloc'd), or NULL with err: a value with a
 * control character, a label td_service_label_check refuses, or out of
 * memory. */
char *td_service_env_render(const struct td_service_env *env, char *err, size_t errlen);

#endif
