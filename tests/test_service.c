// SPDX-License-Identifier: BSD-3-Clause
/*
 * The agent's systemd unit: how user/agent/service.c renders it and its
 * settings file, and `topdown install-service` / `uninstall-service` as a
 * user runs them, into a scratch directory (--unit-dir, --env-file,
 * --no-systemctl: no systemd needed). systemd-analyze, where installed,
 * verifies the written unit and scores its exposure.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli.h"
#include "labels.h"
#include "service.h"

/* exposure x 10, as systemd-analyze security --threshold takes it: 3.0 */
#define EXPOSURE_THRESHOLD "30"

static char scratch[64];   /* a fresh directory per test */
static char unit_dir[96];  /* --unit-dir */
static char env_file[128]; /* --env-file, in a directory install-service creates */
static char unit_path[160];

/* ---- rendering (user/agent/service.c) ---- */

static void test_capabilities_follow_the_kernel(void **state)
{
	(void)state;
	assert_null(strstr(td_service_capabilities("6.1.0-13-amd64", 2), "CAP_SYS_ADMIN"));
	assert_null(strstr(td_service_capabilities("5.8.0", -1), "CAP_SYS_ADMIN"));
	assert_non_null(strstr(td_service_capabilities("5.7.19", 2), "CAP_SYS_ADMIN"));
	assert_non_null(strstr(td_service_capabilities("4.18.0-553.el8", 2), "CAP_SYS_ADMIN"));
	assert_non_null(strstr(td_service_capabilities("not-a-release", 2), "CAP_SYS_ADMIN"));
	/* Debian's default 3 and Ubuntu's 4: perf events need CAP_SYS_ADMIN there
	 * (seen on Debian 12's 6.1 under its systemd, tests/vm/systemd.sh). */
	assert_non_null(strstr(td_service_capabilities("6.1.0-13-amd64", 3), "CAP_SYS_ADMIN"));
	assert_non_null(strstr(td_service_capabilities("6.8.0-40-generic", 4), "CAP_SYS_ADMIN"));
	assert_non_null(strstr(td_service_capabilities("6.1.0-13-amd64", TD_PARANOID_UNKNOWN),
			       "CAP_SYS_ADMIN"));
	for (const char *const *r = (const char *const[]){ "4.19.0", "6.6.1", NULL }; *r; r++) {
		const char *caps = td_service_capabilities(*r, 2);

		assert_non_null(strstr(caps, "CAP_BPF"));
		assert_non_null(strstr(caps, "CAP_PERFMON"));
		assert_non_null(strstr(caps, "CAP_SYS_RESOURCE"));
	}
}

/* The line of text starting with prefix, without its newline, in buf. */
static const char *line_starting(const char *text, const char *prefix, char *buf, size_t len)
{
	const char *line = text;

	while (strncmp(line, prefix, strlen(prefix)) != 0) {
		if (!(line = strchr(line, '\n')))
			return NULL;
		line++;
	}
	snprintf(buf, len, "%.*s", (int)strcspn(line, "\n"), line);
	return buf;
}

static void test_unit_fills_every_field(void **state)
{
	const char *args[] = { "--process", "my app", "--process", "50%$off\"\\", "--every", "5m" };
	struct td_service_unit unit = {
		.exe = "/usr/bin/topdown", .agent_args = args, .nr_agent_args = 6,
		.kernel_release = "5.4.0", .env_file = "/etc/topdown/agent.env",
		.read_write_dir = "/srv/topdown",
	};
	char err[256], line[512], *text;
	regex_t field;

	(void)state;
	text = td_service_unit_render(&unit, err, sizeof(err));
	assert_non_null(text);
	assert_string_equal(line_starting(text, "ExecStart=", line, sizeof(line)),
			    "ExecStart=/usr/bin/topdown agent --process \"my app\" --process "
			    "\"50%%$$off\\\"\\\\\" --every 5m");
	assert_string_equal(line_starting(text, "EnvironmentFile=", line, sizeof(line)),
			    "EnvironmentFile=/etc/topdown/agent.env");
	assert_string_equal(line_starting(text, "ReadWritePaths=", line, sizeof(line)),
			    "ReadWritePaths=/srv/topdown");
	assert_non_null(strstr(line_starting(text, "CapabilityBoundingSet=", line, sizeof(line)),
			       "CAP_SYS_ADMIN"));
	assert_non_null(strstr(text, "SystemCallFilter=@system-service bpf perf_event_open\n"));
	assert_int_equal(regcomp(&field, "@[A-Z_]+@", REG_EXTENDED | REG_NOSUB), 0);
	if (regexec(&field, text, 0, NULL, 0) == 0)
		fail_msg("a field is left unfilled:\n%s", text);
	regfree(&field);
	free(text);

	/* Without --db the setting is left out, not left empty. */
	unit.read_write_dir = NULL;
	text = td_service_unit_render(&unit, err, sizeof(err));
	assert_non_null(text);
	assert_null(strstr(text, "ReadWritePaths"));
	free(text);

	args[5] = "5m\nExecStartPre=/bin/sh";
	assert_null(td_service_unit_render(&unit, err, sizeof(err)));
	assert_non_null(strstr(err, "control character"));
}

static void test_env_file_quotes_values(void **state)
{
	struct td_labels labels;
	struct td_service_env env = { .labels = &labels, .backend = "postgresql",
				      .dsn = "host=db password=a\"b$c`d\\e" };
	char err[256], *text;

	(void)state;
	td_labels_init(&labels);
	assert_int_equal(td_labels_set(&labels, "git_branch", "main"), 0);
	assert_int_equal(td_labels_set(&labels, "test_name", "get set"), 0);
	text = td_service_env_render(&env, err, sizeof(err));
	assert_non_null(text);
	assert_non_null(strstr(text, "\nTOPDOWN_LABELS=\"git_branch=main,test_name=get set\"\n"));
	assert_non_null(strstr(text, "\nTOPDOWN_BACKEND=\"postgresql\"\n"));
	assert_non_null(strstr(text, "\nTOPDOWN_DSN=\"host=db password=a\\\"b\\$c\\`d\\\\e\"\n"));
	assert_null(strstr(text, "TOPDOWN_DB_PATH"));
	free(text);

	assert_int_equal(td_labels_set(&labels, "team", "a,b"), 0);
	assert_null(td_service_env_render(&env, err, sizeof(err)));
	assert_non_null(strstr(err, "team=a,b"));

	assert_int_equal(td_labels_set(&labels, "team", "perf"), 0);
	env.dsn = "host=db\npassword=x";
	assert_null(td_service_env_render(&env, err, sizeof(err)));
	assert_non_null(strstr(err, "TOPDOWN_DSN"));
	td_labels_free(&labels);
}

/* ---- the commands ---- */

static int make_scratch(void **state)
{
	(void)state;
	snprintf(scratch, sizeof(scratch), "/tmp/td-service-XXXXXX");
	if (!mkdtemp(scratch))
		return -1;
	snprintf(unit_dir, sizeof(unit_dir), "%s/units", scratch);
	snprintf(env_file, sizeof(env_file), "%s/etc/agent.env", scratch);
	snprintf(unit_path, sizeof(unit_path), "%s/%s", unit_dir, TD_SERVICE_UNIT_NAME);
	return mkdir(unit_dir, 0755);
}

static int remove_scratch(void **state)
{
	char command[128];

	(void)state;
	snprintf(command, sizeof(command), "rm -rf '%s'", scratch);
	return system(command) == 0 ? 0 : -1;
}

/* Runs `topdown COMMAND --unit-dir … --env-file … ARGS…`. */
static void run_service_args(struct cli_result *r, const char *command, const char *const *args)
{
	const char *argv[40] = { "topdown", command, "--unit-dir", unit_dir, "--env-file", env_file };
	size_t n = 6;

	for (size_t i = 0; args[i] && n < 39; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	cli_run(argv, r);
}

/* The same with --no-systemctl: the test host's systemd is left alone. */
static void run_service(struct cli_result *r, const char *command, const char *const *args)
{
	const char *argv[40] = { "--no-systemctl" };
	size_t n = 1;

	for (size_t i = 0; args[i] && n < 39; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	run_service_args(r, command, argv);
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_mode & 07777;
}

static char *slurp_file(const char *path)
{
	static char buf[1 << 16];
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		fail_msg("cannot open %s", path);
	cli_slurp(fd, buf, sizeof(buf));
	return buf;
}

/* The binary's absolute path, as ExecStart names it. */
static const char *topdown_realpath(void)
{
	static char path[PATH_MAX];

	if (!realpath(cli_topdown_binary(), path))
		fail_msg("cannot resolve %s", cli_topdown_binary());
	return path;
}

static size_t count_entries(const char *dir_path)
{
	DIR *dir = opendir(dir_path);
	struct dirent *entry;
	size_t n = 0;

	if (!dir)
		fail_msg("cannot list %s", dir_path);
	while ((entry = readdir(dir)))
		n += strcmp(entry->d_name, ".") && strcmp(entry->d_name, "..");
	closedir(dir);
	return n;
}

static void test_preview_shows_both_files_and_writes_nothing(void **state)
{
	const char *args[] = { "--process", "redis-server", "--every", "10m", "--duration", "30s",
			       "--level", "2", "--label", "git_branch=unstable", "--dsn",
			       "postgresql://td@db/td", "--preview", NULL };
	char exec_start[PATH_MAX + 128], header[256];
	struct cli_result r;

	(void)state;
	run_service(&r, "install-service", args);
	assert_int_equal(r.status, 0);
	snprintf(exec_start, sizeof(exec_start), "\nExecStart=%s agent --process redis-server "
		 "--every 10m --duration 30s --level 2\n", topdown_realpath());
	if (!strstr(r.out, exec_start))
		fail_msg("no '%s' in:\n%s", exec_start, r.out);
	snprintf(header, sizeof(header), "# %s\n", unit_path);
	assert_non_null(strstr(r.out, header));
	snprintf(header, sizeof(header), "\nEnvironmentFile=%s\n", env_file);
	assert_non_null(strstr(r.out, header));
	assert_non_null(strstr(r.out, "\nTOPDOWN_LABELS=\"git_branch=unstable\"\n"));
	assert_non_null(strstr(r.out, "\nTOPDOWN_BACKEND=\"postgresql\"\n"));
	assert_non_null(strstr(r.out, "\nTOPDOWN_DSN=\"postgresql://td@db/td\"\n"));
	assert_int_equal(access(unit_path, F_OK), -1);
	assert_int_equal(access(env_file, F_OK), -1);
}

/* A database in the state directory needs no ReadWritePaths=, nor the
 * directory to exist yet: systemd makes it. */
static void test_db_in_state_directory(void **state)
{
	const char *args[] = { "--system-wide", "--db", "/var/lib/topdown/runs.db", "--preview", NULL };
	struct cli_result r;

	(void)state;
	run_service(&r, "install-service", args);
	if (r.status)
		fail_msg("install-service failed: %s", r.err);
	assert_null(strstr(r.out, "ReadWritePaths"));
	assert_non_null(strstr(r.out, "\nTOPDOWN_DB_PATH=\"/var/lib/topdown/runs.db\"\n"));
}

/*
 * No store given: the runs go to the state directory, since the agent's
 * own default (~/.topdown/data.db) fails under the unit, where systemd
 * sets no HOME and ProtectHome=yes hides /root (seen on Debian 12's
 * systemd 252, tests/vm/systemd.sh). A PostgreSQL store takes no path.
 */
static void test_default_store_in_state_directory(void **state)
{
	const char *sqlite[] = { "--process", "nginx", "--preview", NULL };
	const char *postgres[] = { "--process", "nginx", "--dsn", "postgresql://td@db/td", "--preview",
				   NULL };
	struct cli_result r;

	(void)state;
	run_service(&r, "install-service", sqlite);
	if (r.status)
		fail_msg("install-service failed: %s", r.err);
	assert_non_null(strstr(r.out, "\nTOPDOWN_DB_PATH=\"/var/lib/topdown/runs.db\"\n"));
	assert_null(strstr(r.out, "ReadWritePaths"));
	run_service(&r, "install-service", postgres);
	if (r.status)
		fail_msg("install-service failed: %s", r.err);
	assert_null(strstr(r.out, "\nTOPDOWN_DB_PATH="));
}

static void test_install_writes_files_with_modes(void **state)
{
	const char *install[] = { "--system-wide", "--level", "1", "--label", "team=perf",
				  "--db", "/var/tmp/topdown-runs.db", NULL };
	const char *preview[] = { "--system-wide", "--level", "1", "--label", "team=perf",
				  "--db", "/var/tmp/topdown-runs.db", "--preview", NULL };
	static struct cli_result shown; /* large: not on the stack */
	char env_dir[sizeof(env_file)];
	struct cli_result r;

	(void)state;
	run_service(&shown, "install-service", preview);
	assert_int_equal(shown.status, 0);

	run_service(&r, "install-service", install);
	if (r.status)
		fail_msg("install-service failed: %s", r.err);
	assert_int_equal(mode_of(unit_path), 0644);
	assert_int_equal(mode_of(env_file), 0600);
	snprintf(env_dir, sizeof(env_dir), "%s", env_file);
	*strrchr(env_dir, '/') = '\0';
	assert_int_equal(mode_of(env_dir), 0700);

	/* What --preview showed is what was written. */
	assert_non_null(strstr(shown.out, slurp_file(unit_path)));
	assert_non_null(strstr(shown.out, slurp_file(env_file)));
	assert_non_null(strstr(slurp_file(unit_path), "\nReadWritePaths=/var/tmp\n"));
	assert_non_null(strstr(slurp_file(env_file), "\nTOPDOWN_DB_PATH=\"/var/tmp/topdown-runs.db\"\n"));
	assert_non_null(strstr(r.out, "systemctl daemon-reload && systemctl enable --now"));

	/* No temporary file is left beside them. */
	assert_int_equal(count_entries(unit_dir), 1);
	assert_int_equal(count_entries(env_dir), 1);
}

/* A refused install: exit 2, one line naming `expect`, no file written. */
static void expect_refusal(const char *const *args, const char *expect)
{
	struct cli_result r;
	char env_dir[sizeof(env_file)];

	run_service(&r, "install-service", args);
	print_message("  %s", r.err);
	assert_int_equal(r.status, 2);
	assert_non_null(strchr(r.err, '\n'));
	assert_string_equal(strchr(r.err, '\n') + 1, "");
	if (!strstr(r.err, expect))
		fail_msg("stderr lacks '%s': %s", expect, r.err);
	assert_int_equal(access(unit_path, F_OK), -1);
	snprintf(env_dir, sizeof(env_dir), "%s", env_file);
	*strrchr(env_dir, '/') = '\0';
	assert_int_equal(access(env_dir, F_OK), -1);
}

static void test_refuses_bad_input(void **state)
{
	(void)state;
	expect_refusal((const char *[]){ "--every", "5m", NULL }, "--process NAME");
	expect_refusal((const char *[]){ "--process", "x", "--system-wide", NULL }, "not both");
	expect_refusal((const char *[]){ "--system-wide", "--every", "5ms", NULL }, "shorter than 10ms");
	expect_refusal((const char *[]){ "--system-wide", "--every", "1m", "--duration", "2m", NULL },
		       "longer than the --every");
	expect_refusal((const char *[]){ "--system-wide", "--duration", "2m", NULL }, /* the agent's 60 s */
		       "longer than the --every");
	expect_refusal((const char *[]){ "--process", "/usr/bin/x", NULL }, "not a path");
	expect_refusal((const char *[]){ "--system-wide", "--label", "nokey", NULL }, "nokey");
	expect_refusal((const char *[]){ "--system-wide", "--label", "team=a,b", NULL }, "comma");
	expect_refusal((const char *[]){ "--system-wide", "--label", "team=it's", NULL }, "quote");
	expect_refusal((const char *[]){ "--system-wide", "--every", "5", NULL }, "'5' for --every");
	expect_refusal((const char *[]){ "--system-wide", "--duration", "-1s", NULL }, "'-1s' for --duration");
	expect_refusal((const char *[]){ "--system-wide", "--level", "9", NULL }, "--level");
	expect_refusal((const char *[]){ "--system-wide", "--max-overhead", "0", NULL }, "--max-overhead");
	expect_refusal((const char *[]){ "--system-wide", "--metrics-listen", "9464", NULL }, "HOST:PORT");
	expect_refusal((const char *[]){ "--system-wide", "--metrics-listen", "127.0.0.1:99999", NULL },
		       "the --metrics-listen port");
	/* the agent would refuse it at every start: no host */
	expect_refusal((const char *[]){ "--system-wide", "--metrics-listen", ":9464", NULL },
		       "name the host to listen on");
	expect_refusal((const char *[]){ "--system-wide", "--db", "/var/tmp/x.db", "--dsn", "host=db", NULL },
		       "--db names a SQLite file");
	expect_refusal((const char *[]){ "--system-wide", "--backend", "sqlite", "--dsn", "host=db", NULL },
		       "--dsn names a PostgreSQL server");
	expect_refusal((const char *[]){ "--system-wide", "--backend", "postgresql", "--db", "/var/tmp/x.db",
					 NULL }, "--db names a SQLite file");
	expect_refusal((const char *[]){ "--system-wide", "--backend", "mysql", NULL }, "unknown storage backend");
	expect_refusal((const char *[]){ "--system-wide", "--db", "runs.db", NULL }, "absolute path");
	expect_refusal((const char *[]){ "--system-wide", "--db", "/home/me/runs.db", NULL }, "ProtectHome");
	expect_refusal((const char *[]){ "--system-wide", "--db", "/nonexistent/dir/runs.db", NULL },
		       "does not exist");
	expect_refusal((const char *[]){ "--system-wide", "--db", "/runs.db", NULL }, "writable");
	expect_refusal((const char *[]){ "--system-wide", "--frobnicate", NULL }, "--frobnicate");
	expect_refusal((const char *[]){ "--system-wide", "extra", NULL }, "unexpected argument 'extra'");
}

/* The agent's own option table: a sampling agent, one with --events, options
 * in the order given, a repeated one once with its last value. */
static void test_sampling_agent(void **state)
{
	const char *args[] = { "--process", "redis-server", "--sample=cycles", "--every", "1m",
			       "--sample-freq", "49", "--every", "2m", "--process", "memtier", "--preview", NULL };
	const char *events[] = { "--system-wide", "--events", "task-clock,context-switches", "--sample", "--preview",
				 NULL };
	char exec_start[PATH_MAX + 256];
	struct cli_result r;

	(void)state;
	run_service(&r, "install-service", args);
	assert_int_equal(r.status, 0);
	snprintf(exec_start, sizeof(exec_start), "\nExecStart=%s agent --process redis-server --sample=cycles "
		 "--every 2m --sample-freq 49 --process memtier\n", topdown_realpath());
	if (!strstr(r.out, exec_start))
		fail_msg("no '%s' in:\n%s", exec_start, r.out);
	run_service(&r, "install-service", events);
	assert_int_equal(r.status, 0);
	snprintf(exec_start, sizeof(exec_start), "\nExecStart=%s agent --system-wide --events "
		 "task-clock,context-switches --sample\n", topdown_realpath());
	if (!strstr(r.out, exec_start))
		fail_msg("no '%s' in:\n%s", exec_start, r.out);

	/* what the agent refuses, refused here */
	expect_refusal((const char *[]){ "--system-wide", "--sample-freq", "49", NULL },
		       "--sample-freq sets the rate of --sample: give --sample too");
	expect_refusal((const char *[]){ "--system-wide", "--sample=", NULL }, "--sample= names no event");
	expect_refusal((const char *[]){ "--system-wide", "--events", "task-clock", "--level", "2", NULL },
		       "give one or the other");
	expect_refusal((const char *[]){ "--system-wide", "--every", "213503d", NULL },
		       "bad duration '213503d' for --every: it is longer than 100 years");
	expect_refusal((const char *[]){ "--system-wide", "--label", "k=\xff", NULL }, "not UTF-8");
	/* the agent's options for a terminal run are not a service's */
	expect_refusal((const char *[]){ "--system-wide", "--windows", "3", NULL }, "'--windows'");
}

/* --mcp-listen and its companions reach ExecStart, checked as the agent
 * checks them at start (where a refusal would be a restart loop). */
static void test_mcp_options(void **state)
{
	char token[sizeof(scratch) + 16], loose[sizeof(scratch) + 16], exec_start[PATH_MAX + 256];
	const char *args[] = { "--system-wide", "--mcp-listen", "0.0.0.0:8000", "--mcp-token-file", token,
			       "--mcp-request-timeout", "10s", "--preview", NULL };
	struct cli_result r;
	FILE *f;

	(void)state;
	snprintf(token, sizeof(token), "%s/mcp.token", scratch);
	snprintf(loose, sizeof(loose), "%s/loose.token", scratch);
	for (int i = 0; i < 2; i++) {
		assert_non_null(f = fopen(i ? loose : token, "w"));
		fputs("0123456789abcdef0123456789abcdef\n", f);
		fclose(f);
		assert_int_equal(chmod(i ? loose : token, i ? 0644 : 0600), 0);
	}
	run_service(&r, "install-service", args);
	assert_int_equal(r.status, 0);
	snprintf(exec_start, sizeof(exec_start), "\nExecStart=%s agent --system-wide --mcp-listen "
		 "0.0.0.0:8000 --mcp-token-file %s --mcp-request-timeout 10s\n", topdown_realpath(), token);
	if (!strstr(r.out, exec_start))
		fail_msg("no '%s' in:\n%s", exec_start, r.out);

	expect_refusal((const char *[]){ "--system-wide", "--mcp-listen", "0.0.0.0:8000", NULL },
		       "--mcp-listen 0.0.0.0:8000 is not loopback: give --mcp-token-file FILE");
	expect_refusal((const char *[]){ "--system-wide", "--mcp-token-file", token, NULL },
		       "--mcp-token-file goes with --mcp-listen");
	expect_refusal((const char *[]){ "--system-wide", "--mcp-request-timeout", "5s", NULL },
		       "--mcp-request-timeout goes with --mcp-listen");
	expect_refusal((const char *[]){ "--system-wide", "--mcp-listen", "127.0.0.1", NULL },
		       "no port in --mcp-listen '127.0.0.1'");
	expect_refusal((const char *[]){ "--system-wide", "--mcp-listen", "127.0.0.1:8000",
					 "--mcp-token-file", loose, NULL }, "chmod 600");
	expect_refusal((const char *[]){ "--system-wide", "--mcp-listen", "127.0.0.1:8000",
					 "--mcp-token-file", "/root/mcp.token", NULL }, "ProtectHome");
	expect_refusal((const char *[]){ "--system-wide", "--mcp-listen", "127.0.0.1:8000",
					 "--mcp-request-timeout", "0s", NULL }, "shorter than 1ms");
}

static void test_uninstall_removes_everything(void **state)
{
	const char *install[] = { "--process", "nginx", NULL }, *none[] = { NULL };
	char env_dir[sizeof(env_file)];
	struct cli_result r;

	(void)state;
	run_service(&r, "install-service", install);
	assert_int_equal(r.status, 0);
	assert_int_equal(access(unit_path, F_OK), 0);

	run_service(&r, "uninstall-service", none);
	if (r.status)
		fail_msg("uninstall-service failed: %s", r.err);
	assert_int_equal(access(unit_path, F_OK), -1);
	assert_int_equal(access(env_file, F_OK), -1);
	snprintf(env_dir, sizeof(env_dir), "%s", env_file);
	*strrchr(env_dir, '/') = '\0';
	assert_int_equal(access(env_dir, F_OK), -1);

	/* Again: nothing to do, and it says so. */
	run_service(&r, "uninstall-service", none);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "nothing to remove"));
}

/* Where systemd is not the init (CI containers), install and uninstall
 * write and remove the files, say so, and succeed. */
static void test_without_running_systemd(void **state)
{
	const char *install[] = { "--process", "nginx", NULL }, *none[] = { NULL };
	struct cli_result r;

	(void)state;
	if (access("/run/systemd/system", F_OK) == 0) {
		print_message("SKIP: systemd runs on this host, and this test must not touch it\n");
		skip();
	}
	run_service_args(&r, "install-service", install);
	if (r.status)
		fail_msg("install-service failed: %s", r.err);
	assert_non_null(strstr(r.out, "systemd is not running"));
	assert_int_equal(access(unit_path, F_OK), 0);
	run_service_args(&r, "uninstall-service", none);
	if (r.status)
		fail_msg("uninstall-service failed: %s", r.err);
	assert_non_null(strstr(r.out, "systemd is not running"));
	assert_int_equal(access(unit_path, F_OK), -1);
}

/* Runs a shell command; its output goes to the test's log on failure. */
static int run_shell(const char *command)
{
	char line[PATH_MAX + 256];
	int status;

	snprintf(line, sizeof(line), "%s > %s/analyze.log 2>&1", command, scratch);
	status = system(line);
	if (status) {
		snprintf(line, sizeof(line), "%s/analyze.log", scratch);
		print_message("%s\n%s", command, slurp_file(line));
	}
	return status;
}

static void test_systemd_analyze_accepts_the_unit(void **state)
{
	const char *install[] = { "--process", "redis-server", "--process", "my app", "--every", "1m",
				  "--label", "team=perf", NULL };
	char command[PATH_MAX];
	struct cli_result r;

	(void)state;
	if (system("command -v systemd-analyze >/dev/null 2>&1")) {
		print_message("SKIP: systemd-analyze is not installed (`make deps` installs systemd)\n");
		skip();
	}
	run_service(&r, "install-service", install);
	assert_int_equal(r.status, 0);
	/* --man=no: topdown(1) is not installed where the tests run. */
	snprintf(command, sizeof(command), "systemd-analyze verify --man=no '%s'", unit_path);
	assert_int_equal(run_shell(command), 0);
	snprintf(command, sizeof(command), "systemd-analyze security --offline=yes --threshold="
		 EXPOSURE_THRESHOLD " '%s'", unit_path);
	assert_int_equal(run_shell(command), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capabilities_follow_the_kernel),
		cmocka_unit_test(test_unit_fills_every_field),
		cmocka_unit_test(test_env_file_quotes_values),
		cmocka_unit_test_setup_teardown(test_preview_shows_both_files_and_writes_nothing,
						make_scratch, remove_scratch),
		cmocka_unit_test_setup_teardown(test_db_in_state_directory, make_scratch, remove_scratch),
		cmocka_unit_test_setup_teardown(test_default_store_in_state_directory, make_scratch,
						remove_scratch),
		cmocka_unit_test_setup_teardown(test_install_writes_files_with_modes, make_scratch,
						remove_scratch),
		cmocka_unit_test_setup_teardown(test_refuses_bad_input, make_scratch, remove_scratch),
		cmocka_unit_test_setup_teardown(test_mcp_options, make_scratch, remove_scratch),
		cmocka_unit_test_setup_teardown(test_sampling_agent, make_scratch, remove_scratch),
		cmocka_unit_test_setup_teardown(test_uninstall_removes_everything, make_scratch,
						remove_scratch),
		cmocka_unit_test_setup_teardown(test_without_running_systemd, make_scratch,
						remove_scratch),
		cmocka_unit_test_setup_teardown(test_systemd_analyze_accepts_the_unit, make_scratch,
						remove_scratch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
