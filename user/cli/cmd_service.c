// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown install-service / uninstall-service: run `topdown agent` under
 * systemd.
 *
 * install-service checks the agent's options the way the agent does (an
 * option the agent would refuse at start becomes a restart loop under
 * systemd),
 * writes the settings file (mode 0600, in a 0700 directory: it may hold
 * a PostgreSQL password) and the unit (user/agent/service.h renders both), then
 * has systemd reload and enable it. Each file is written whole beside its
 * final path and renamed into place, so a failure leaves the old file or
 * none, never half of one. --preview prints both and touches nothing.
 *
 * systemctl runs only where systemd is the running init, which is what
 * /run/systemd/system tells (sd_booted(3)); elsewhere, and with
 * --no-systemctl, the files are written and the command to run later is
 * printed.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_options.h"
#include "commands.h"
#include "fileio.h"
#include "labels.h"
#include "parse.h"
#include "procmatch.h"
#include "query_cli.h"
#include "service.h"
#include "store_open.h"
#include "streamable.h"

extern char **environ;

#define DEFAULT_UNIT_DIR "/etc/systemd/system"
#define DEFAULT_ENV_FILE "/etc/topdown/agent.env"
#define STATE_DIR "/var/lib/topdown" /* the unit's StateDirectory=topdown */
#define DEFAULT_SERVICE_DB STATE_DIR "/runs.db"
#define MAX_PROCESSES 32
#define NR_AGENT_VALUES 8 /* --every, --duration, --level, --max-overhead, --metrics-listen,
			     --mcp-listen, --mcp-token-file, --mcp-request-timeout */
#define EVERY_VALUE 0     /* their places in install_args.values */
#define DURATION_VALUE 1
#define MCP_LISTEN_VALUE 5
#define MCP_TOKEN_VALUE 6
#define MCP_TIMEOUT_VALUE 7
#define MAX_AGENT_ARGS (2 * MAX_PROCESSES + 1 + 2 * NR_AGENT_VALUES)
#define AGENT_VALUE_OPT 256 /* getopt codes of the agent's options with one value */
#define HELP_SHOWN 1        /* a parser's answer to --help: nothing else to do */
#define ENABLE_LATER "systemctl daemon-reload && systemctl enable --now " TD_SERVICE_UNIT_NAME

struct service_paths {
	const char *unit_dir; /* --unit-dir */
	const char *env_file; /* --env-file */
	bool no_systemctl;    /* --no-systemctl */
	char unit_path[PATH_MAX];
};

/* An agent option with one value, checked as the agent checks it. */
struct agent_value {
	const char *option;
	int (*check)(const char *option, const char *text, char *err, size_t errlen);
	const char *value; /* as typed; NULL when not given */
};

struct install_args {
	struct service_paths paths;
	bool preview, system_wide;
	const char *processes[MAX_PROCESSES];
	size_t nr_processes;
	struct agent_value values[NR_AGENT_VALUES];
	const char *agent_args[MAX_AGENT_ARGS]; /* what ExecStart passes after "agent" */
	size_t nr_agent_args;
	struct td_labels labels;
	struct td_store_flags store_flags; /* --backend, --dsn */
	const char *db;
	char db_dir[PATH_MAX]; /* --db's directory when the unit must open it for writing */
	const char *backend;   /* for TOPDOWN_BACKEND: only when --backend or --dsn chose it */
};

static const char install_usage[] =
	"usage: topdown install-service (--process NAME... | --system-wide) [--every D] [--duration D]\n"
	"                               [--level N] [--max-overhead PCT] [--metrics-listen ADDR]\n"
	"                               [--mcp-listen ADDR [--mcp-token-file FILE] [--mcp-request-timeout D]]\n"
	"                               [--label key=value]... [--db PATH | --backend NAME --dsn DSN]\n"
	"                               [--unit-dir DIR] [--env-file PATH] [--no-systemctl] [--preview]\n"
	"Writes the systemd unit " TD_SERVICE_UNIT_NAME " running `topdown agent` with these options\n"
	"(into --unit-dir, default " DEFAULT_UNIT_DIR ") and its settings file (--env-file, default\n"
	DEFAULT_ENV_FILE ", mode 0600: labels and the store), then runs systemctl daemon-reload and\n"
	"enable, unless --no-systemctl or systemd is not running. --preview prints both files and\n"
	"changes nothing.\n";

static const char uninstall_usage[] =
	"usage: topdown uninstall-service [--unit-dir DIR] [--env-file PATH] [--no-systemctl]\n"
	"Disables and stops " TD_SERVICE_UNIT_NAME ", removes the unit and its settings file, and\n"
	"reloads systemd (no systemctl with --no-systemctl or when systemd is not running).\n";

static int usage_error(const char *command, const char *message)
{
	fprintf(stderr, "topdown %s: %s (topdown %s --help lists the options)\n", command, message,
		command);
	return TD_EXIT_USAGE;
}

/* Paths that go into the unit unquoted: absolute, plain characters. */
static int check_unit_path(const char *what, const char *path, char *err, size_t errlen)
{
	if (path[0] != '/' || strspn(path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				     "0123456789/._-+,:") != strlen(path)) {
		snprintf(err, errlen, "%s '%.64s' must be an absolute path of letters, digits and ./_-+,: "
			 "for the unit to carry it; choose another", what, path);
		return -EINVAL;
	}
	return 0;
}

/* --unit-dir and --env-file, with their defaults; the unit's path. */
static int resolve_paths(struct service_paths *paths, char *err, size_t errlen)
{
	if (!paths->unit_dir)
		paths->unit_dir = DEFAULT_UNIT_DIR;
	if (!paths->env_file)
		paths->env_file = DEFAULT_ENV_FILE;
	if ((size_t)snprintf(paths->unit_path, sizeof(paths->unit_path), "%s/%s", paths->unit_dir,
			     TD_SERVICE_UNIT_NAME) >= sizeof(paths->unit_path)) {
		snprintf(err, errlen, "--unit-dir is too long; choose a shorter path");
		return -ENAMETOOLONG;
	}
	return 0;
}

/* ProtectHome=yes hides these from the service. */
static bool under_home(const char *path)
{
	return !strncmp(path, "/home/", 6) || !strncmp(path, "/root/", 6) ||
	       !strncmp(path, "/run/user/", 10);
}

/* A listen address as the agent reads it (HOST:PORT or [V6]:PORT), and
 * without quotes or spaces, which the unit's ExecStart would not carry. */
static int check_listen_address(const char *option, const char *addr, char host[TD_HTTPD_HOST_MAX],
				char *err, size_t errlen)
{
	long port;

	if (strpbrk(addr, " \t\"'\\")) {
		snprintf(err, errlen, "bad %s '%.64s': write it as HOST:PORT, e.g. 127.0.0.1:9464", option,
			 addr);
		return -EINVAL;
	}
	return td_httpd_parse_listen(addr, option, false, host, &port, err, errlen);
}

static int check_listen(const char *option, const char *addr, char *err, size_t errlen)
{
	char host[TD_HTTPD_HOST_MAX];

	return check_listen_address(option, addr, host, err, errlen);
}

/* The token file, read now as the agent will read it under the unit. */
static int check_token_file(const char *option, const char *path, char *err, size_t errlen)
{
	char *token = NULL;
	int ret;

	if (check_unit_path(option, path, err, errlen))
		return -EINVAL;
	if (under_home(path)) {
		snprintf(err, errlen, "%s %.64s is in a home directory, which the service "
			 "cannot reach (ProtectHome=yes); keep it under /etc, e.g. /etc/topdown/mcp.token",
			 option, path);
		return -EINVAL;
	}
	ret = td_mcp_http_read_token(path, option, &token, err, errlen);
	free(token);
	return ret;
}

/* --mcp-listen's companions, and its address: off loopback, a token (the
 * agent refuses to start without one, and the unit would restart it). */
static int check_mcp_options(const struct install_args *a, char *err, size_t errlen)
{
	const char *listen = a->values[MCP_LISTEN_VALUE].value;
	const char *token = a->values[MCP_TOKEN_VALUE].value;
	char host[TD_HTTPD_HOST_MAX];

	if (!listen && (token || a->values[MCP_TIMEOUT_VALUE].value)) {
		snprintf(err, errlen, "--%s goes with --mcp-listen: give both, or neither",
			 token ? "mcp-token-file" : "mcp-request-timeout");
		return -EINVAL;
	}
	if (!listen || token)
		return 0;
	if (check_listen_address("--mcp-listen", listen, host, err, errlen))
		return -EINVAL;
	if (!td_httpd_host_is_loopback(host)) {
		snprintf(err, errlen, "--mcp-listen %.64s is not loopback: give --mcp-token-file FILE so "
			 "that only clients with the token get in", listen);
		return -EINVAL;
	}
	return 0;
}

/*
 * --db for the service: in a directory it may reach, which exists unless
 * it is the state directory (systemd creates that). db_dir receives the
 * directory the unit must make writable, or "" for the state directory.
 */
static int check_db(const char *db, char *db_dir, size_t len, char *err, size_t errlen)
{
	struct stat st;

	if (check_unit_path("--db", db, err, errlen))
		return -EINVAL;
	if (under_home(db)) {
		snprintf(err, errlen, "--db %.64s is in a home directory, which the service cannot reach "
			 "(ProtectHome=yes); choose a path under /var/lib or /srv", db);
		return -EINVAL;
	}
	snprintf(db_dir, len, "%s", db);
	*strrchr(db_dir, '/') = '\0';
	if (!db_dir[0]) {
		snprintf(err, errlen, "--db %.64s would make / writable for the service; choose a file "
			 "in a directory of its own, e.g. " DEFAULT_SERVICE_DB, db);
		return -EINVAL;
	}
	if (strcmp(db_dir, STATE_DIR) == 0) {
		db_dir[0] = '\0';
		return 0;
	}
	if (stat(db_dir, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "--db %.64s: its directory %.64s does not exist; create it first",
			 db, db_dir);
		return -EINVAL;
	}
	return 0;
}

static int check_duration(const char *option, const char *text, char *err, size_t errlen)
{
	uint64_t ns;

	return td_parse_duration_ns(text, option, &ns, err, errlen);
}

static int check_level(const char *option, const char *text, char *err, size_t errlen)
{
	long level;

	return td_parse_int_range(text, option, 1, 4, &level, err, errlen);
}

static int check_overhead(const char *option, const char *text, char *err, size_t errlen)
{
	double pct;

	return td_parse_number(text, option, 0.01, 100, &pct, err, errlen);
}

static void add_agent_arg(struct install_args *a, const char *option, const char *value)
{
	a->agent_args[a->nr_agent_args++] = option;
	if (value)
		a->agent_args[a->nr_agent_args++] = value;
}

/* The agent's command line after "agent": targets, then the values given. */
static void build_agent_args(struct install_args *a)
{
	for (size_t i = 0; i < a->nr_processes; i++)
		add_agent_arg(a, "--process", a->processes[i]);
	if (a->system_wide)
		add_agent_arg(a, "--system-wide", NULL);
	for (size_t i = 0; i < NR_AGENT_VALUES; i++)
		if (a->values[i].value)
			add_agent_arg(a, a->values[i].option, a->values[i].value);
}

/* Targets and window as the agent checks them, with its defaults where not given. */
static int check_targets_and_window(const struct install_args *a, char *err, size_t errlen)
{
	const char *every = a->values[EVERY_VALUE].value, *duration = a->values[DURATION_VALUE].value;
	uint64_t every_ns = TD_AGENT_DEFAULT_EVERY_NS, duration_ns = 0;

	if (every && td_parse_duration_ns(every, a->values[EVERY_VALUE].option, &every_ns, err, errlen))
		return -EINVAL;
	if (duration && td_parse_duration_ns(duration, a->values[DURATION_VALUE].option, &duration_ns, err, errlen))
		return -EINVAL;
	return td_agent_options_check(a->nr_processes, a->system_wide, every_ns, duration_ns, err, errlen);
}

/* Everything after the options are read: targets, labels, store, paths. */
static int check_install_args(struct install_args *a, char *err, size_t errlen)
{
	int ret;

	for (size_t i = 0; i < NR_AGENT_VALUES; i++)
		if (a->values[i].value && (ret = a->values[i].check(a->values[i].option, a->values[i].value, err, errlen)))
			return ret;
	if ((ret = check_targets_and_window(a, err, errlen)) || (ret = check_mcp_options(a, err, errlen)))
		return ret;
	for (size_t i = 0; i < a->labels.count; i++)
		if ((ret = td_service_label_check(&a->labels.items[i], err, errlen)))
			return ret;
	if ((ret = td_store_flags_backend(&a->store_flags, a->db, &a->backend, err, errlen)))
		return ret;
	if (!a->store_flags.backend && !a->store_flags.dsn)
		a->backend = NULL; /* not chosen on this command line: the agent's default decides */
	/*
	 * A SQLite store named nowhere goes to the state directory: the
	 * agent's own default, ~/.topdown/data.db, fails under the unit, where
	 * systemd sets no HOME (no User=) and ProtectHome=yes hides /root.
	 */
	if (!a->db && (!a->backend || strcmp(a->backend, "sqlite") == 0))
		a->db = DEFAULT_SERVICE_DB;
	if (a->db && (ret = check_db(a->db, a->db_dir, sizeof(a->db_dir), err, errlen)))
		return ret;
	if ((ret = resolve_paths(&a->paths, err, errlen)))
		return ret;
	return check_unit_path("--env-file", a->paths.env_file, err, errlen);
}

static int parse_install_args(int argc, char **argv, struct install_args *a, char *err,
			      size_t errlen)
{
	/* named after the command: tests/check_cli_docs.sh tells the two tables apart */
	static const struct option install_service_options[] = {
		/* the agent's own; those with one value in the order of install_args.values */
		{ "process", required_argument, NULL, 'p' },
		{ "system-wide", no_argument, NULL, 'a' },
		{ "every", required_argument, NULL, AGENT_VALUE_OPT + 0 },
		{ "duration", required_argument, NULL, AGENT_VALUE_OPT + 1 },
		{ "level", required_argument, NULL, AGENT_VALUE_OPT + 2 },
		{ "max-overhead", required_argument, NULL, AGENT_VALUE_OPT + 3 },
		{ "metrics-listen", required_argument, NULL, AGENT_VALUE_OPT + 4 },
		{ "mcp-listen", required_argument, NULL, AGENT_VALUE_OPT + MCP_LISTEN_VALUE },
		{ "mcp-token-file", required_argument, NULL, AGENT_VALUE_OPT + MCP_TOKEN_VALUE },
		{ "mcp-request-timeout", required_argument, NULL, AGENT_VALUE_OPT + MCP_TIMEOUT_VALUE },
		{ "label", required_argument, NULL, 'L' },
		{ "db", required_argument, NULL, 'D' },
		/* where to install */
		{ "unit-dir", required_argument, NULL, 'U' },
		{ "env-file", required_argument, NULL, 'E' },
		{ "no-systemctl", no_argument, NULL, 'N' },
		{ "preview", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int opt, ret = 0;

	optind = 1;
	opterr = 0; /* our one-line message instead of getopt's */
	while (!ret && (opt = getopt_long(argc, argv, ":", install_service_options, NULL)) != -1) {
		if (opt >= AGENT_VALUE_OPT && opt < AGENT_VALUE_OPT + NR_AGENT_VALUES) {
			a->values[opt - AGENT_VALUE_OPT].value = optarg; /* the last one counts */
			continue;
		}
		switch (opt) {
		case 'p':
			if (a->nr_processes == MAX_PROCESSES) {
				snprintf(err, errlen, "more than %d --process names; install the agent "
					 "with --system-wide instead", MAX_PROCESSES);
				ret = -EINVAL;
			} else if (!(ret = td_proc_name_check(optarg, err, errlen))) {
				a->processes[a->nr_processes++] = optarg;
			}
			break;
		case 'a': a->system_wide = true; break;
		case 'L': ret = td_labels_parse_arg(&a->labels, optarg, err, errlen); break;
		case 'D': a->db = optarg; break;
		case 'U': a->paths.unit_dir = optarg; break;
		case 'E': a->paths.env_file = optarg; break;
		case 'N': a->paths.no_systemctl = true; break;
		case 'P': a->preview = true; break;
		case 'h': fputs(install_usage, stdout); return HELP_SHOWN;
		default:
			snprintf(err, errlen, "unknown option, or one missing its value: '%s'", argv[optind - 1]);
			ret = -EINVAL;
		}
	}
	if (!ret && optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
		ret = -EINVAL;
	}
	return ret ? ret : check_install_args(a, err, errlen);
}

/* The absolute path of this binary, for ExecStart. */
static int own_path(char *buf, size_t len, char *err, size_t errlen)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	int errnum = errno;

	if (n <= 0) {
		snprintf(err, errlen, "cannot find this binary's path (/proc/self/exe: %s); is /proc "
			 "mounted?", strerror(errnum));
		return -errnum;
	}
	buf[n] = '\0';
	return 0;
}

/* This host's kernel.perf_event_paranoid, or TD_PARANOID_UNKNOWN. */
static int perf_event_paranoid(void)
{
	char text[16], *end;
	long value;

	if (td_read_first_line("/proc/sys/kernel/perf_event_paranoid", text, sizeof(text)))
		return TD_PARANOID_UNKNOWN;
	value = strtol(text, &end, 10);
	return end == text ? TD_PARANOID_UNKNOWN : (int)value;
}

/* The unit and settings texts for a (malloc'd, both), or an error. */
static int render(const struct install_args *a, char **unit_text, char **env_text, char *err,
		  size_t errlen)
{
	char exe[PATH_MAX];
	struct utsname host;
	int ret;

	if ((ret = own_path(exe, sizeof(exe), err, errlen)))
		return ret;
	if (under_home(exe))
		fprintf(stderr, "topdown install-service: warning: %s is in a home directory, which the "
			"service cannot reach (ProtectHome=yes); `make install` puts topdown in "
			"/usr/local/bin\n", exe);
	uname(&host);

	struct td_service_unit unit = {
		.exe = exe, .agent_args = a->agent_args, .nr_agent_args = a->nr_agent_args,
		.kernel_release = host.release, .perf_event_paranoid = perf_event_paranoid(),
		.env_file = a->paths.env_file, .read_write_dir = a->db_dir[0] ? a->db_dir : NULL,
	};
	if (unit.perf_event_paranoid > 2)
		fprintf(stderr, "topdown install-service: note: kernel.perf_event_paranoid is %d, at which "
			"this kernel opens perf events for CAP_SYS_ADMIN alone, so the unit keeps it; "
			"set it to 2 (/etc/sysctl.d) and install again to drop it\n",
			unit.perf_event_paranoid);
	struct td_service_env env = {
		.labels = &a->labels, .backend = a->backend, .dsn = a->store_flags.dsn,
		.db_path = a->db,
	};

	if (!(*unit_text = td_service_unit_render(&unit, err, errlen)))
		return -EINVAL;
	if (!(*env_text = td_service_env_render(&env, err, errlen))) {
		free(*unit_text);
		return -EINVAL;
	}
	return 0;
}

static int write_all(int fd, const char *text)
{
	size_t len = strlen(text);

	while (len) {
		ssize_t n = write(fd, text, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		text += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Writes text into path with mode: whole, through a temporary file renamed into place. */
static int write_file(const char *path, const char *text, mode_t mode, char *err, size_t errlen)
{
	char tmp[PATH_MAX];
	int fd, ok;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= sizeof(tmp)) {
		snprintf(err, errlen, "the path %.64s... is too long; choose a shorter one", path);
		return -ENAMETOOLONG;
	}
	if ((fd = mkstemp(tmp)) < 0) {
		int errnum = errno;

		snprintf(err, errlen, "cannot write %s: %s; check that its directory exists and that "
			 "you may write there (installing needs root)", path, strerror(errnum));
		return -errnum;
	}
	ok = !write_all(fd, text) && !fchmod(fd, mode) && !fsync(fd);
	ok = !close(fd) && ok && !rename(tmp, path);
	if (!ok) {
		snprintf(err, errlen, "cannot write %s: %s; check the free space and retry", path,
			 strerror(errno));
		unlink(tmp);
		return -EIO;
	}
	return 0;
}

/* dir of path, created with mode 0700 if missing; *created says whether it was. */
static int make_env_dir(const char *path, bool *created, char *err, size_t errlen)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	*created = false;
	if (!dir[0] || mkdir(dir, 0700) == 0) {
		*created = dir[0] != '\0';
		return 0;
	}
	int errnum = errno;

	if (errnum == EEXIST)
		return 0;
	snprintf(err, errlen, "cannot create %.200s: %s; installing needs root, or pass --env-file "
		 "in a directory you may write", dir, strerror(errnum));
	return -errnum;
}

/* Removes the directory of path if empty; it may well hold other files. */
static void remove_env_dir(const char *path)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	if (dir[0])
		rmdir(dir);
}

/* The settings file, then the unit; on failure neither is left behind
 * (a settings file that existed before is replaced, though). */
static int write_files(const struct service_paths *paths, const char *unit_text,
		       const char *env_text, char *err, size_t errlen)
{
	bool created_dir, env_existed = access(paths->env_file, F_OK) == 0;
	int ret;

	if ((ret = make_env_dir(paths->env_file, &created_dir, err, errlen)))
		return ret;
	if ((ret = write_file(paths->env_file, env_text, 0600, err, errlen)) ||
	    (ret = write_file(paths->unit_path, unit_text, 0644, err, errlen))) {
		if (!env_existed)
			unlink(paths->env_file);
		if (created_dir)
			remove_env_dir(paths->env_file);
	}
	return ret;
}

/* Runs `systemctl ARGS...`; 0, or -1 with err naming the command. */
static int systemctl(const char *const *args, char *err, size_t errlen)
{
	const char *argv[8] = { "systemctl" };
	char command[256] = "systemctl";
	size_t used = strlen(command);
	int status, rc;
	pid_t pid;

	for (size_t i = 0; args[i] && i + 2 < sizeof(argv) / sizeof(argv[0]); i++) {
		argv[i + 1] = args[i];
		used += (size_t)snprintf(command + used, sizeof(command) - used, " %s", args[i]);
	}
	if ((rc = posix_spawnp(&pid, "systemctl", NULL, NULL, (char *const *)argv, environ))) {
		snprintf(err, errlen, "cannot run `%s`: %s; install systemd, or pass --no-systemctl",
			 command, strerror(rc));
		return -1;
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(err, errlen, "`%s` failed (see its message above)", command);
		return -1;
	}
	return 0;
}

/* Whether to talk to systemd: not when told not to, nor when it is not running. */
static bool use_systemctl(const struct service_paths *paths, const char *command)
{
	if (paths->no_systemctl)
		return false;
	if (access("/run/systemd/system", F_OK) == 0)
		return true;
	printf("systemd is not running on this host (no /run/systemd/system), so %s leaves it "
	       "alone\n", command);
	return false;
}

static int install(const struct install_args *a, const char *unit_text, const char *env_text)
{
	static const char *const reload[] = { "daemon-reload", NULL };
	static const char *const enable[] = { "enable", TD_SERVICE_UNIT_NAME, NULL };
	char err[512];

	if (write_files(&a->paths, unit_text, env_text, err, sizeof(err))) {
		fprintf(stderr, "topdown install-service: %s\n", err);
		return 1;
	}
	printf("wrote %s and %s (mode 0600)\n", a->paths.unit_path, a->paths.env_file);
	if (a->db)
		printf("the agent's runs go to %s (topdown list --db %s)\n", a->db, a->db);
	if (!use_systemctl(&a->paths, "install-service")) {
		printf("to start the agent where systemd runs: %s\n", ENABLE_LATER);
		return 0;
	}
	if (systemctl(reload, err, sizeof(err)) || systemctl(enable, err, sizeof(err))) {
		fprintf(stderr, "topdown install-service: the unit is written, but %s; once systemd "
			"works, run: %s\n", err, ENABLE_LATER);
		return 1;
	}
	/* restart: a unit written over a running agent takes effect too */
	printf("enabled %s; start it now with: systemctl restart %s\n", TD_SERVICE_UNIT_NAME,
	       TD_SERVICE_UNIT_NAME);
	return 0;
}

int td_cmd_install_service(int argc, char **argv)
{
	struct install_args a = {
		.values = {
			{ "--every", check_duration, NULL },
			{ "--duration", check_duration, NULL },
			{ "--level", check_level, NULL },
			{ "--max-overhead", check_overhead, NULL },
			{ "--metrics-listen", check_listen, NULL },
			{ "--mcp-listen", check_listen, NULL },
			{ "--mcp-token-file", check_token_file, NULL },
			{ "--mcp-request-timeout", check_duration, NULL },
		},
	};
	char err[512] = "", *unit_text = NULL, *env_text = NULL;
	int ret;

	td_labels_init(&a.labels);
	td_store_flags_take(&argc, argv, &a.store_flags);
	ret = parse_install_args(argc, argv, &a, err, sizeof(err));
	if (ret == HELP_SHOWN) {
		ret = 0;
		goto out;
	}
	if (ret) {
		ret = usage_error("install-service", err);
		goto out;
	}
	build_agent_args(&a);
	if (render(&a, &unit_text, &env_text, err, sizeof(err))) {
		ret = usage_error("install-service", err);
		goto out;
	}
	if (a.preview)
		printf("# %s\n%s\n# %s\n%s", a.paths.unit_path, unit_text, a.paths.env_file, env_text);
	else
		ret = install(&a, unit_text, env_text);
out:
	free(unit_text);
	free(env_text);
	td_labels_free(&a.labels);
	return ret;
}

/* Removes path; true if it was there. Failing to remove it is an error. */
static int remove_file(const char *path, bool *existed, char *err, size_t errlen)
{
	*existed = access(path, F_OK) == 0;
	if (*existed && unlink(path)) {
		int errnum = errno;

		snprintf(err, errlen, "cannot remove %s: %s; removing needs root", path, strerror(errnum));
		return -errnum;
	}
	return 0;
}

static int parse_uninstall_args(int argc, char **argv, struct service_paths *paths)
{
	static const struct option uninstall_service_options[] = {
		{ "unit-dir", required_argument, NULL, 'U' },
		{ "env-file", required_argument, NULL, 'E' },
		{ "no-systemctl", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	char err[256];
	int opt;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":", uninstall_service_options, NULL)) != -1) {
		switch (opt) {
		case 'U': paths->unit_dir = optarg; break;
		case 'E': paths->env_file = optarg; break;
		case 'N': paths->no_systemctl = true; break;
		case 'h': fputs(uninstall_usage, stdout); return HELP_SHOWN;
		default:
			snprintf(err, sizeof(err), "unknown option, or one missing its value: '%s'",
				 argv[optind - 1]);
			return usage_error("uninstall-service", err);
		}
	}
	if (optind < argc) {
		snprintf(err, sizeof(err), "unexpected argument '%s'", argv[optind]);
		return usage_error("uninstall-service", err);
	}
	if (resolve_paths(paths, err, sizeof(err)))
		return usage_error("uninstall-service", err);
	return 0;
}

int td_cmd_uninstall_service(int argc, char **argv)
{
	static const char *const disable[] = { "disable", "--now", TD_SERVICE_UNIT_NAME, NULL };
	static const char *const reload[] = { "daemon-reload", NULL };
	struct service_paths paths = { 0 };
	bool had_unit, had_env, systemd;
	char err[512];
	int ret = parse_uninstall_args(argc, argv, &paths);

	if (ret)
		return ret == HELP_SHOWN ? 0 : ret;
	systemd = access(paths.unit_path, F_OK) == 0 && use_systemctl(&paths, "uninstall-service");
	/* A unit systemd no longer knows cannot be disabled: say so, remove it anyway. */
	if (systemd && systemctl(disable, err, sizeof(err)))
		fprintf(stderr, "topdown uninstall-service: warning: %s; removing the files anyway\n", err);
	if (remove_file(paths.unit_path, &had_unit, err, sizeof(err)) ||
	    remove_file(paths.env_file, &had_env, err, sizeof(err))) {
		fprintf(stderr, "topdown uninstall-service: %s\n", err);
		return 1;
	}
	if (had_env)
		remove_env_dir(paths.env_file);
	if (!had_unit && !had_env) {
		printf("nothing to remove: neither %s nor %s exists\n", paths.unit_path, paths.env_file);
		return 0;
	}
	if (systemd && systemctl(reload, err, sizeof(err))) {
		fprintf(stderr, "topdown uninstall-service: the files are removed, but %s; run "
			"`systemctl daemon-reload` once it works\n", err);
		return 1;
	}
	printf("removed %s%s%s\n", had_unit ? paths.unit_path : "", had_unit && had_env ? " and " : "",
	       had_env ? paths.env_file : "");
	/* The runs are data, not configuration: removing them is the user's call. */
	if (access(STATE_DIR, F_OK) == 0)
		printf("kept %s, the agent's runs and spool; rm -r it to delete them\n", STATE_DIR);
	return 0;
}
