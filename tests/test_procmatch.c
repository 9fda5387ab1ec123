// SPDX-License-Identifier: BSD-3-Clause
/*
 * Process matching against a fake proc tree built in a temporary
 * directory (comm files and exe symlinks), plus this test's own entry in
 * the real /proc.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "procmatch.h"

static char root[] = "/tmp/td-procmatch-XXXXXX";

static void make_dir(const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(mkdir(path, 0755), 0);
}

static void write_file(const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A fake process: comm (NULL: none) and exe link target (NULL: none). */
static void fake_process(const char *pid, const char *comm, const char *exe)
{
	char rel[64], path[PATH_MAX];

	make_dir(pid);
	if (comm) {
		snprintf(rel, sizeof(rel), "%s/comm", pid);
		write_file(rel, comm);
	}
	if (exe) {
		snprintf(path, sizeof(path), "%s/%s/exe", root, pid);
		assert_int_equal(symlink(exe, path), 0);
	}
}

/* A fake process with only a stat file and a task directory: itself, and other_tid (NULL: none). */
static void fake_stat(const char *pid, const char *stat, const char *other_tid)
{
	char rel[64];

	make_dir(pid);
	snprintf(rel, sizeof(rel), "%s/stat", pid);
	write_file(rel, stat);
	snprintf(rel, sizeof(rel), "%s/task", pid);
	make_dir(rel);
	snprintf(rel, sizeof(rel), "%s/task/%s", pid, pid);
	make_dir(rel);
	if (other_tid) {
		snprintf(rel, sizeof(rel), "%s/task/%s", pid, other_tid);
		make_dir(rel);
	}
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(root))
		return -1;
	fake_process("108", "nginx\n", "/usr/sbin/nginx");
	fake_process("100", "nginx\n", "/usr/sbin/nginx");
	fake_process("101", "nginx\n", "/usr/sbin/nginx (deleted)");
	fake_process("102", "kworker/0:1\n", NULL);             /* kernel thread */
	fake_process("103", "python3\n", "/usr/bin/python3.11");
	fake_process("104", "java\n", "/opt/jdk/bin/java");
	fake_process("105", "very_long_progr\n", "/usr/bin/very_long_program_name");
	fake_process("106", NULL, NULL);                        /* exited mid-scan */
	fake_process("109", "sh\n", "renamed-server");          /* relative link */
	fake_process("110", "worker\n", "/srv/app/server (deleted)");
	/* Not processes, though they look like them. */
	fake_process("12abc", "nginx\n", "/usr/sbin/nginx");
	fake_process("0", "nginx\n", "/usr/sbin/nginx");
	fake_process("99999999999", "nginx\n", "/usr/sbin/nginx");
	write_file("107", "a plain file, not a process\n");
	/* States, from stat files (flags, the ninth field: 0x200000 is PF_KTHREAD). */
	fake_stat("120", "120 (app) S 1 120 120 0 -1 4194560 0 0\n", NULL);
	fake_stat("121", "121 (kworker/1:2) I 2 0 0 0 -1 69238880 0 0\n", NULL);
	write_file("121/comm", "kworker/1:2\n");
	fake_stat("128", "128 (kthreadd) S 0 0 0 0 -1 2129984 0 0\n", NULL); /* no comm file */
	fake_stat("122", "122 (defunct) Z 1 122 122 0 -1 4227084 0 0\n", NULL);
	fake_stat("123", "123 (leader) Z 1 123 123 0 -1 4227084 0 0\n", "124");   /* a thread lives on */
	fake_stat("125", "125 (a) Z (b) S 1 125 125 0 -1 4194560 0 0\n", NULL); /* ") Z (" in the comm */
	fake_stat("126", "126 (cut\n", NULL);
	fake_stat("127", "127 (odd) S 1 2 3\n", NULL);
	char self[PATH_MAX];

	snprintf(self, sizeof(self), "%s/self", root);
	return symlink("104", self);
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int teardown(void **state)
{
	(void)state;
	return nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Finds name and checks the result against want (ascending, n entries). */
static void expect_found(const char *name, pid_t exclude, const pid_t *want, size_t n)
{
	pid_t *pids = (pid_t *)1;
	size_t count = 99;
	char err[256] = "";

	assert_int_equal(td_proc_find(root, name, exclude, &pids, &count, err, sizeof(err)), 0);
	assert_int_equal(count, n);
	if (n == 0)
		assert_null(pids);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(pids[i], want[i]);
	free(pids);
}

static void test_find_by_comm_and_exe(void **state)
{
	(void)state;
	/* 101's binary was deleted; 108 was listed first but sorts last. */
	expect_found("nginx", 0, (pid_t[]){ 100, 101, 108 }, 3);
	expect_found("python3", 0, (pid_t[]){ 103 }, 1);
	expect_found("python3.11", 0, (pid_t[]){ 103 }, 1);
	/* comm is cut at 15 bytes; the executable carries the full name. */
	expect_found("very_long_program_name", 0, (pid_t[]){ 105 }, 1);
	expect_found("very_long_progr", 0, (pid_t[]){ 105 }, 1);
	expect_found("kworker/0:1", 0, (pid_t[]){ 102 }, 1);
	expect_found("renamed-server", 0, (pid_t[]){ 109 }, 1);
	expect_found("server", 0, (pid_t[]){ 110 }, 1);
}

static void test_find_exact_and_exclusions(void **state)
{
	(void)state;
	expect_found("java", 104, NULL, 0);
	expect_found("nginx", 101, (pid_t[]){ 100, 108 }, 2);
	expect_found("ngin", 0, NULL, 0);
	expect_found("nginx ", 0, NULL, 0);
	expect_found("NGINX", 0, NULL, 0);
	expect_found("nginx (deleted)", 0, NULL, 0);
	expect_found("usr", 0, NULL, 0);
	expect_found("/usr/sbin/nginx", 0, NULL, 0);
	expect_found("nosuch", 0, NULL, 0);
}

static void test_matches(void **state)
{
	(void)state;
	assert_true(td_proc_matches(root, 100, "nginx"));
	assert_true(td_proc_matches(root, 101, "nginx"));
	assert_true(td_proc_matches(root, 103, "python3.11"));
	assert_false(td_proc_matches(root, 103, "python"));
	assert_false(td_proc_matches(root, 106, "nginx"));  /* no files */
	assert_false(td_proc_matches(root, 4242, "nginx")); /* no such pid */
	assert_false(td_proc_matches(root, 100, ""));
	assert_false(td_proc_matches(root, 100, NULL));
}

static void test_comm(void **state)
{
	(void)state;
	char buf[16];

	assert_int_equal(td_proc_comm(root, 102, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "kworker/0:1");
	assert_int_equal(td_proc_comm(root, 105, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "very_long_progr");
	assert_int_equal(td_proc_comm(root, 4242, buf, sizeof(buf)), -ENOENT);
	assert_int_equal(td_proc_comm(root, 106, buf, sizeof(buf)), -ENOENT);
	assert_int_equal(td_proc_comm(root, 102, buf, 6), -EOVERFLOW);
}

static void test_errors(void **state)
{
	(void)state;
	pid_t *pids = (pid_t *)1;
	size_t count = 99;
	char err[256] = "";

	assert_int_equal(td_proc_find("/nonexistent/proc", "nginx", 0, &pids, &count, err, sizeof(err)), -ENOENT);
	assert_null(pids);
	assert_int_equal(count, 0);
	assert_non_null(strstr(err, "cannot list /nonexistent/proc"));
	assert_non_null(strstr(err, "check that /proc is mounted"));

	assert_int_equal(td_proc_find(root, "", 0, &pids, &count, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "empty process name"));
	assert_int_equal(td_proc_find(root, NULL, 0, &pids, &count, err, sizeof(err)), -EINVAL);

	char long_root[PATH_MAX + 16];

	memset(long_root, 'a', sizeof(long_root) - 1);
	long_root[sizeof(long_root) - 1] = '\0';
	assert_int_equal(td_proc_comm(long_root, 1, err, sizeof(err)), -ENAMETOOLONG);
	assert_false(td_proc_matches(long_root, 1, "init"));
}

/* The real /proc: this process finds itself by the name the kernel gave it. */
static void test_real_proc_self(void **state)
{
	(void)state;
	char kernel_comm[17] = "", comm[32];
	pid_t *pids;
	size_t count;
	char err[256];
	bool found = false;

	assert_int_equal(prctl(PR_GET_NAME, kernel_comm, 0, 0, 0), 0);
	assert_int_equal(td_proc_comm("/proc", getpid(), comm, sizeof(comm)), 0);
	assert_string_equal(comm, kernel_comm);
	assert_true(td_proc_matches("/proc", getpid(), kernel_comm));
	/* argv[0]'s basename names the executable, even if comm were cut. */
	assert_true(td_proc_matches("/proc", getpid(), program_invocation_short_name));

	assert_int_equal(td_proc_find("/proc", kernel_comm, 0, &pids, &count, err, sizeof(err)), 0);
	for (size_t i = 0; i < count; i++)
		found |= pids[i] == getpid();
	free(pids);
	assert_true(found);

	assert_int_equal(td_proc_find("/proc", kernel_comm, getpid(), &pids, &count, err, sizeof(err)), 0);
	for (size_t i = 0; i < count; i++)
		assert_int_not_equal(pids[i], getpid());
	free(pids);
}

static void test_state(void **state)
{
	char err[256] = "";

	(void)state;
	assert_int_equal(td_proc_state(root, 120), TD_PROC_RUNNING);
	assert_int_equal(td_proc_state(root, 121), TD_PROC_KERNEL_THREAD);
	assert_int_equal(td_proc_state(root, 122), TD_PROC_ZOMBIE);
	assert_int_equal(td_proc_state(root, 123), TD_PROC_RUNNING);
	assert_int_equal(td_proc_state(root, 125), TD_PROC_RUNNING);
	assert_int_equal(td_proc_state(root, 126), TD_PROC_GONE); /* malformed: nothing to go by */
	assert_int_equal(td_proc_state(root, 127), TD_PROC_GONE);
	assert_int_equal(td_proc_state(root, 100), TD_PROC_GONE); /* no stat file */
	assert_int_equal(td_proc_state(root, 4242), TD_PROC_GONE);

	assert_int_equal(td_proc_check_target(root, 120, err, sizeof(err)), 0);
	assert_int_equal(td_proc_check_target(root, 121, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "pid 121 (kworker/1:2) is a kernel thread"));
	assert_int_equal(td_proc_check_target(root, 128, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "pid 128 is a kernel thread"));
	assert_int_equal(td_proc_check_target(root, 122, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "pid 122 has exited and waits for its parent to reap it (a zombie)"));
	assert_int_equal(td_proc_check_target(root, 4242, err, sizeof(err)), -ESRCH);
	assert_non_null(strstr(err, "no process with pid 4242"));
}

/* The real /proc: kthreadd, this process, and a child that exited and is not reaped yet. */
static void test_real_proc_states(void **state)
{
	pid_t child;

	(void)state;
	assert_int_equal(td_proc_state("/proc", getpid()), TD_PROC_RUNNING);
	if (td_proc_state("/proc", 2) != TD_PROC_GONE) /* kthreadd, unless in a pid namespace */
		assert_int_equal(td_proc_state("/proc", 2), TD_PROC_KERNEL_THREAD);
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	for (int i = 0; i < 500 && td_proc_state("/proc", child) == TD_PROC_RUNNING; i++)
		usleep(2000);
	assert_int_equal(td_proc_state("/proc", child), TD_PROC_ZOMBIE);
	assert_int_equal(waitpid(child, NULL, 0), child);
	assert_int_equal(td_proc_state("/proc", child), TD_PROC_GONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find_by_comm_and_exe),
		cmocka_unit_test(test_find_exact_and_exclusions),
		cmocka_unit_test(test_matches),
		cmocka_unit_test(test_comm),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_real_proc_self),
		cmocka_unit_test(test_state),
		cmocka_unit_test(test_real_proc_states),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
