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

#include "agent_args.h"
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
#define MAX_AGENT_ARGS (TD_MAX_TARGET_COMMS + 32) /* every --process, and each other agent option once */
#define ENABLE_LATER "systemctl daemon-reload && systemctl enable --now " TD_SERVICE_UNIT_NAME

struct service_paths {
	const char *unit_dir; /* --unit-dir */
	const char *env_file; /* --env-file */
	bool no_systemctl;    /* --no-systemctl */
	char unit_path[PATH_MAX];
};

/* One option of the agent's for ExecStart: "--name" and its value, or "--name=VALUE". */
struct agent_arg {
	const struct td_opt *opt;
	char *option;      /* malloc'd */
	const char *value; /* as typed, or NULL */
};

struct install_args {
	struct service_paths paths;
	bool preview;
	struct td_agent_args agent;  /* the agent's options, checked as the agent checks them;
				      * its labels and store go to the settings file */
	struct agent_arg agent_args[MAX_AGENT_ARGS]; /* what ExecStart passes after "agent" */
	size_t nr_agent_args;
	char db_dir[PATH_MAX]; /* --db's directory when the unit must open it for writing */
	const char *backend;   /* for TOPDOWN_BACKEND: only when --backend or --dsn chose it */
};

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
	const char *listen = a->agent.mcp_listen, *token = a->agent.mcp_token_file;
	char host[TD_HTTPD_HOST_MAX];

	if (listen && check_listen_address("--mcp-listen", listen, host, err, errlen))
		return -EINVAL;
	if (token && check_token_file("--mcp-token-file", token, err, errlen))
		return -EINVAL;
	if (!listen || token)
		return 0;
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

/* Everything after the options are read: the agent's checks, then what
 * the unit must carry: addresses, token file, labels, store, paths. */
static int check_install_args(struct install_args *a, char *err, size_t errlen)
{
	const struct td_agent_config *c = &a->agent.config;
	char host[TD_HTTPD_HOST_MAX];
	int ret;

	if ((ret = td_agent_args_check(&a->agent, err, errlen)))
		return ret;
	if (c->metrics_listen && (ret = check_listen_address("--metrics-listen", c->metrics_listen, host, err, errlen)))
		return ret;
	if ((ret = check_mcp_options(a, err, errlen)))
		return ret;
	for (size_t i = 0; i < c->user_labels.count; i++)
		if ((ret = td_service_label_check(&c->user_labels.items[i], err, errlen)))
			return ret;
	if ((ret = td_store_flags_backend(&c->store_flags, c->db, &a->backend, err, errlen)))
		return ret;
	if (!c->store_flags.backend && !c->store_flags.dsn)
		a->backend = NULL; /* not chosen on this command line: the agent's default decides */
	/*
	 * A SQLite store named nowhere goes to the state directory: the
	 * agent's own default, ~/.topdown/data.db, fails under the unit, where
	 * systemd sets no HOME (no User=) and ProtectHome=yes hides /root.
	 */
	if (!c->db && (!a->backend || strcmp(a->backend, "sqlite") == 0))
		a->agent.config.db = DEFAULT_SERVICE_DB;
	if (c->db && (ret = check_db(c->db, a->db_dir, sizeof(a->db_dir), err, errlen)))
		return ret;
	if ((ret = resolve_paths(&a->paths, err, errlen)))
		return ret;
	return check_unit_path("--env-file", a->paths.env_file, err, errlen);
}

/*
 * Each agent option as it is read (a td_cli_each_fn), for ExecStart, in
 * the order given: --process as often as given, any other once, its last
 * value winning as it does in the agent.
 */
static int add_agent_arg(void *ctx, const struct td_opt *opt, const char *value, char *err, size_t errlen)
{
	struct install_args *a = ctx;
	struct agent_arg *arg = NULL;
	char *option;

	if (opt->group != TD_OPT_GROUP_AGENT)
		return 0;
	for (size_t i = 0; i < a->nr_agent_args && strcmp(opt->name, "process"); i++)
		if (a->agent_args[i].opt == opt)
			arg = &a->agent_args[i];
	if (!arg && a->nr_agent_args == MAX_AGENT_ARGS) {
		snprintf(err, errlen, "too many agent options; install the agent with --system-wide instead");
		return -EINVAL;
	}
	if (opt->optional ? asprintf(&option, "--%s%s%s", opt->name, value ? "=" : "", value ? value : "") < 0
			  : asprintf(&option, "--%s", opt->name) < 0) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (!arg)
		arg = &a->agent_args[a->nr_agent_args++];
	free(arg->option);
	*arg = (struct agent_arg){ opt, option, opt->optional ? NULL : value };
	return 0;
}

static const struct td_opt install_service_options[] = {
	TD_OPTS_AGENT(struct install_args, agent.),
	TD_OPT_LABELS(struct install_args, agent.config.user_labels,
		      "stored with every run (repeatable; kept in the settings file)"),
	TD_OPTS_STORE_DB(struct install_args, agent.config.db, agent.config.store_flags,
			 "the agent's SQLite file (default " DEFAULT_SERVICE_DB ", in the service's state directory)"),
	TD_OPTION("unit-dir", TD_OPT_NAME, offsetof(struct install_args, paths.unit_dir), "DIR",
		  "where the unit goes (default " DEFAULT_UNIT_DIR ")"),
	TD_OPTION("env-file", TD_OPT_NAME, offsetof(struct install_args, paths.env_file), "PATH",
		  "the settings file: labels and the store (default " DEFAULT_ENV_FILE ", mode 0600)"),
	TD_OPTION("no-systemctl", TD_OPT_FLAG, offsetof(struct install_args, paths.no_systemctl), NULL,
		  "write the files only; print the systemctl commands to run"),
	TD_OPTION("preview", TD_OPT_FLAG, offsetof(struct install_args, preview), NULL,
		  "print both files and change nothing"),
	{ 0 }
};

static const struct td_cli install_service_command = {
	.command = "install-service",
	.synopsis = "usage: topdown install-service (--process NAME... | --system-wide) [AGENT OPTIONS]\n"
		    "                               [--label key=value]... [--db PATH | --backend NAME --dsn DSN]\n"
		    "                               [--unit-dir DIR] [--env-file PATH] [--no-systemctl] [--preview]\n"
		    "Writes the systemd unit " TD_SERVICE_UNIT_NAME " running `topdown agent` with the agent's\n"
		    "options (those of topdown agent but --spool, --log and --windows) and its settings file,\n"
		    "then runs systemctl daemon-reload and enable, unless --no-systemctl or systemd is not\n"
		    "running. --preview prints both files and changes nothing.\n",
	.opts = install_service_options,
};

/* 0, -1 after --help, or TD_EXIT_USAGE. */
static int parse_install_args(int argc, char **argv, struct install_args *a)
{
	struct td_cli_seen seen;
	char err[512] = "";
	int ret;

	td_agent_args_init(&a->agent);
	ret = td_cli_parse_each(&install_service_command, argc, argv, a, &seen, add_agent_arg, a, err, sizeof(err));
	if (ret == TD_CLI_HELP_SHOWN)
		return -1;
	if (!ret)
		ret = check_install_args(a, err, sizeof(err));
	return ret ? td_cli_usage_error(&install_service_command, err) : 0;
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
	const struct td_agent_config *c = &a->agent.config;
	const char *agent_argv[2 * MAX_AGENT_ARGS];
	size_t agent_argc = 0;
	char exe[PATH_MAX];
	struct utsname host;
	int ret;

	for (size_t i = 0; i < a->nr_agent_args; i++) {
		agent_argv[agent_argc++] = a->agent_args[i].option;
		if (a->agent_args[i].value)
			agent_argv[agent_argc++] = a->agent_args[i].value;
	}

	if ((ret = own_path(exe, sizeof(exe), err, errlen)))
		return ret;
	if (under_home(exe))
		fprintf(stderr, "topdown install-service: warning: %s is in a home directory, which the "
			"service cannot reach (ProtectHome=yes); `make install` puts topdown in "
			"/usr/local/bin\n", exe);
	uname(&host);

	struct td_service_unit unit = {
		.exe = exe, .agent_args = agent_argv, .nr_agent_args = agent_argc,
		.kernel_release = host.release, .perf_event_paranoid = perf_event_paranoid(),
		.env_file = a->paths.env_file, .read_write_dir = a->db_dir[0] ? a->db_dir : NULL,
	};
	if (unit.perf_event_paranoid > 2)
		fprintf(stderr, "topdown install-service: note: kernel.perf_event_paranoid is %d, at which "
			"this kernel opens perf events for CAP_SYS_ADMIN alone, so the unit keeps it; "
			"set it to 2 (/etc/sysctl.d) and install again to drop it\n",
			unit.perf_event_paranoid);
	struct td_service_env env = {
		.labels = &c->user_labels, .backend = a->backend, .dsn = c->store_flags.dsn,
		.db_path = c->db,
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
	if (a->agent.config.db)
		printf("the agent's runs go to %s (topdown list --db %s)\n", a->agent.config.db, a->agent.config.db);
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
	struct install_args a = { 0 };
	char err[512] = "", *unit_text = NULL, *env_text = NULL;
	int ret;

	td_labels_init(&a.agent.config.user_labels);
	ret = parse_install_args(argc, argv, &a);
	if (ret) {
		ret = ret < 0 ? 0 : ret;
		goto out;
	}
	if (render(&a, &unit_text, &env_text, err, sizeof(err))) {
		ret = td_cli_usage_error(&install_service_command, err);
		goto out;
	}
	if (a.preview)
		printf("# %s\n%s\n# %s\n%s", a.paths.unit_path, unit_text, a.paths.env_file, env_text);
	else
		ret = install(&a, unit_text, env_text);
out:
	free(unit_text);
	free(env_text);
	for (size_t i = 0; i < a.nr_agent_args; i++)
		free(a.agent_args[i].option);
	td_labels_free(&a.agent.config.user_labels);
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

static const struct td_opt uninstall_service_options[] = {
	TD_OPTION("unit-dir", TD_OPT_NAME, offsetof(struct service_paths, unit_dir), "DIR",
		  "where the unit is (default " DEFAULT_UNIT_DIR ")"),
	TD_OPTION("env-file", TD_OPT_NAME, offsetof(struct service_paths, env_file), "PATH",
		  "the settings file (default " DEFAULT_ENV_FILE ")"),
	TD_OPTION("no-systemctl", TD_OPT_FLAG, offsetof(struct service_paths, no_systemctl), NULL,
		  "remove the files only; leave systemd alone"),
	{ 0 }
};

static const struct td_cli uninstall_service_command = {
	.command = "uninstall-service",
	.synopsis = "usage: topdown uninstall-service [--unit-dir DIR] [--env-file PATH] [--no-systemctl]\n"
		    "Disables and stops " TD_SERVICE_UNIT_NAME ", removes the unit and its settings file, and\n"
		    "reloads systemd (no systemctl with --no-systemctl or when systemd is not running).\n",
	.opts = uninstall_service_options,
};

/* 0, -1 after --help, or TD_EXIT_USAGE. */
static int parse_uninstall_args(int argc, char **argv, struct service_paths *paths)
{
	struct td_cli_seen seen;
	char err[256];
	int ret = td_cli_read(&uninstall_service_command, argc, argv, paths, &seen);

	if (ret)
		return ret;
	if (resolve_paths(paths, err, sizeof(err)))
		return td_cli_usage_error(&uninstall_service_command, err);
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
		return ret < 0 ? 0 : ret;
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
