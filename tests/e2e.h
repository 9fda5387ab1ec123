/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers shared by the root-only end-to-end tests: the privilege check
 * that SKIPs visibly, and starting the bundled workload under control.
 */
#ifndef TOPDOWN_TESTS_E2E_H
#define TOPDOWN_TESTS_E2E_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collector.h"

/*
 * TD_TEST_FILTER=PATTERN runs only the tests whose names match (cmocka's
 * wildcards, * and ?): how `make test-repeat` runs one test many times.
 */
static inline void e2e_filter_tests(void)
{
	const char *pattern = getenv("TD_TEST_FILTER");

	if (pattern && *pattern)
		cmocka_set_test_filter(pattern);
}

/* Skips the calling test, saying why, unless BPF tracing can work here. */
static inline void e2e_require_bpf(void)
{
	if (geteuid() != 0) {
		print_message("SKIP: needs root (BPF programs and CPU-wide counters); run the suite as root\n");
		skip();
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		print_message("SKIP: this kernel has no BTF (/sys/kernel/btf/vmlinux)\n");
		skip();
	}
}

static inline const char *e2e_workload_path(void)
{
	const char *path = getenv("TD_WORKLOAD");

	return path ? path : "build/td-workload";
}

/*
 * Starts the workload at path (its comm is path's basename) held at
 * --wait-start; *go receives the pipe that releases it. ap: extra
 * arguments, ending with NULL.
 */
static inline pid_t e2e_spawn_workload_va(const char *path, int *go, const char *report, va_list ap)
{
	const char *argv[32] = { "td-workload", "--wait-start" };
	int argc = 2, fds[2];
	pid_t pid;

	if (report) {
		argv[argc++] = "--report";
		argv[argc++] = report;
	}
	while (argc < 31 && (argv[argc] = va_arg(ap, const char *)))
		argc++;
	argv[argc] = NULL;
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[0], STDIN_FILENO);
		close(fds[1]);
		execv(path, (char **)argv);
		_exit(127);
	}
	close(fds[0]);
	*go = fds[1];
	return pid;
}

/* td-workload, started as e2e_spawn_workload_va says. Extra arguments end with NULL. */
static inline pid_t e2e_spawn_workload(int *go, const char *report, ...)
{
	va_list ap;
	pid_t pid;

	va_start(ap, report);
	pid = e2e_spawn_workload_va(e2e_workload_path(), go, report, ap);
	va_end(ap);
	return pid;
}

/* The same, through a link to td-workload (e2e_workload_link). */
static inline pid_t e2e_spawn_workload_at(const char *path, int *go, const char *report, ...)
{
	va_list ap;
	pid_t pid;

	va_start(ap, report);
	pid = e2e_spawn_workload_va(path, go, report, ap);
	va_end(ap);
	return pid;
}

/*
 * A link to td-workload named name in a fresh directory, so that its
 * processes have a comm no other test's workload shares (colleagues may
 * run theirs at the same time). The directory is the caller's to remove
 * (e2e_workload_unlink). path receives the link (PATH_MAX bytes).
 */
static inline void e2e_workload_link(const char *name, char *path, size_t len)
{
	char dir[] = "/tmp/td-e2e-wl-XXXXXX", *target = realpath(e2e_workload_path(), NULL);

	assert_non_null(target);
	assert_non_null(mkdtemp(dir));
	snprintf(path, len, "%s/%s", dir, name);
	assert_int_equal(symlink(target, path), 0);
	free(target);
}

static inline void e2e_workload_unlink(const char *path)
{
	char dir[4096];

	unlink(path);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	rmdir(dir);
}

/*
 * Releases the workload and keeps the exit ring drained until it ends,
 * then a little longer: a reaped process's last threads may still be on
 * their way through their final context switch on another CPU.
 */
static inline void e2e_start_and_wait(struct td_collector *c, pid_t pid, int go)
{
	char err[256];
	int status;

	assert_int_equal(write(go, "g", 1), 1);
	close(go);
	while (waitpid(pid, &status, WNOHANG) == 0)
		assert_int_equal(td_collector_poll(c, 50, err, sizeof(err)), 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(td_collector_poll(c, 100, err, sizeof(err)), 0);
}

/* A pid that just existed and is now gone. */
static inline pid_t e2e_dead_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

#endif
