// SPDX-License-Identifier: BSD-3-Clause
/* The one writer of output files: what it does to each kind of path, and
 * that no failed write, flush or close goes unreported. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cmocka.h>

#include "fileio.h"

static char dir[] = "/tmp/td-fileio-XXXXXX";

/* What the writers under test write: the text in ctx, or a failure. */
static int write_text(FILE *out, void *ctx, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	fputs(ctx, out);
	return 0;
}

static int write_half_then_fail(FILE *out, void *ctx, char *err, size_t errlen)
{
	fputs(ctx, out);
	snprintf(err, errlen, "the store went away");
	return -EIO;
}

/* As jansson does when its writes fail: it says -1 and the caller guesses. */
static int write_lots_then_guess(FILE *out, void *ctx, char *err, size_t errlen)
{
	(void)ctx;
	for (int i = 0; i < 100000; i++)
		if (fputs("0123456789abcdef", out) == EOF) {
			snprintf(err, errlen, "cannot encode the run as JSON");
			return -EIO;
		}
	return 0;
}

static void path_in(char *buf, const char *name)
{
	snprintf(buf, PATH_MAX, "%s/%s", dir, name);
}

static void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* Nothing but the names given is left in the scratch directory: no temporary file. */
static void assert_only(const char *const *names, size_t count)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	assert_non_null(d);
	while ((e = readdir(d))) {
		bool known = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");

		for (size_t i = 0; i < count; i++)
			known |= !strcmp(e->d_name, names[i]);
		if (!known)
			fail_msg("'%s' was left behind", e->d_name);
	}
	closedir(d);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

/* Each test starts from an empty directory. */
static int empty_dir(void **state)
{
	char cmd[PATH_MAX + 32];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'/* '%s'/.[!.]*", dir, dir);
	return system(cmd);
}

static void test_new_file_gets_the_umask_mode(void **state)
{
	char path[PATH_MAX], err[256] = "", got[64];
	mode_t old = umask(027);
	struct stat st;

	(void)state;
	path_in(path, "new.json");
	assert_int_equal(td_write_output(path, write_text, "fresh\n", err, sizeof(err)), 0);
	umask(old);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0640);
	slurp(path, got, sizeof(got));
	assert_string_equal(got, "fresh\n");
	assert_only((const char *const[]){ "new.json" }, 1);
}

static void test_regular_file_is_replaced_atomically(void **state)
{
	char path[PATH_MAX], err[256] = "", got[64];
	struct stat before, after;
	mode_t old = umask(022);

	(void)state;
	path_in(path, "out.txt");
	assert_int_equal(td_write_output(path, write_text, "old\n", err, sizeof(err)), 0);
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(stat(path, &before), 0);
	assert_int_equal(td_write_output(path, write_text, "new\n", err, sizeof(err)), 0);
	umask(old);
	assert_int_equal(stat(path, &after), 0);
	/* a new inode renamed over the name, not the old one rewritten */
	assert_int_not_equal(before.st_ino, after.st_ino);
	assert_int_equal(after.st_mode & 07777, 0644);
	slurp(path, got, sizeof(got));
	assert_string_equal(got, "new\n");
	assert_only((const char *const[]){ "out.txt" }, 1);
}

static void test_failed_writer_keeps_the_old_file(void **state)
{
	char path[PATH_MAX], err[256] = "", got[64];

	(void)state;
	path_in(path, "keep.txt");
	assert_int_equal(td_write_output(path, write_text, "whole\n", err, sizeof(err)), 0);
	assert_int_equal(td_write_output(path, write_half_then_fail, "half", err, sizeof(err)), -EIO);
	assert_string_equal(err, "the store went away");
	slurp(path, got, sizeof(got));
	assert_string_equal(got, "whole\n");
	assert_only((const char *const[]){ "keep.txt" }, 1);
}

static void test_symlink_stays_and_its_target_is_written(void **state)
{
	char path[PATH_MAX], sub[PATH_MAX], target[PATH_MAX], err[256] = "", got[64], link[PATH_MAX];
	struct stat st;
	ssize_t n;

	(void)state;
	path_in(sub, "sub");
	assert_int_equal(mkdir(sub, 0700), 0);
	path_in(target, "sub/target.svg");
	assert_int_equal(td_write_output(target, write_text, "old\n", err, sizeof(err)), 0);
	/* a relative link, relative to its own directory, through a second link */
	path_in(path, "hop");
	assert_int_equal(symlink("sub/target.svg", path), 0);
	path_in(path, "out.svg");
	assert_int_equal(symlink("hop", path), 0);
	assert_int_equal(td_write_output(path, write_text, "through\n", err, sizeof(err)), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	n = readlink(path, link, sizeof(link) - 1);
	assert_int_equal(n, 3);
	slurp(target, got, sizeof(got));
	assert_string_equal(got, "through\n");
	assert_only((const char *const[]){ "sub", "hop", "out.svg" }, 3);
}

static void test_dangling_symlink_creates_its_target(void **state)
{
	char path[PATH_MAX], target[PATH_MAX], err[256] = "", got[64];
	struct stat st;

	(void)state;
	path_in(path, "dangling");
	assert_int_equal(symlink("made.txt", path), 0);
	assert_int_equal(td_write_output(path, write_text, "made\n", err, sizeof(err)), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	path_in(target, "made.txt");
	slurp(target, got, sizeof(got));
	assert_string_equal(got, "made\n");
}

static void test_symlink_loop_is_refused(void **state)
{
	char path[PATH_MAX], err[256] = "";

	(void)state;
	path_in(path, "loop");
	assert_int_equal(symlink("loop", path), 0);
	assert_int_equal(td_write_output(path, write_text, "x", err, sizeof(err)), -ELOOP);
	assert_non_null(strstr(err, "loop"));
}

/* mknod twins of /dev/null and /dev/full: root only. */
static bool make_device(const char *path, unsigned minor)
{
	if (mknod(path, S_IFCHR | 0666, makedev(1, minor)) == 0)
		return true;
	assert_true(errno == EPERM || errno == EACCES);
	return false;
}

static void test_devices_are_written_in_place(void **state)
{
	char null_path[PATH_MAX], full_path[PATH_MAX], err[256] = "";
	struct stat st;

	(void)state;
	path_in(null_path, "null");
	path_in(full_path, "full");
	if (!make_device(null_path, 3) || !make_device(full_path, 7))
		skip();
	assert_int_equal(td_write_output(null_path, write_text, "gone\n", err, sizeof(err)), 0);
	assert_int_equal(lstat(null_path, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(st.st_rdev, makedev(1, 3));

	/* a full device: the system's reason, not the writer's guess */
	assert_int_equal(td_write_output(full_path, write_lots_then_guess, NULL, err, sizeof(err)), -ENOSPC);
	assert_non_null(strstr(err, "No space left on device"));
	assert_non_null(strstr(err, full_path));
	/* even a small write that only fails at the flush */
	assert_int_equal(td_write_output(full_path, write_text, "x\n", err, sizeof(err)), -ENOSPC);
	assert_int_equal(lstat(full_path, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_only((const char *const[]){ "null", "full" }, 2);
}

static void test_fifo_is_written_in_place(void **state)
{
	char path[PATH_MAX], err[256] = "", got[64];
	struct stat st;
	ssize_t n;
	int fd;

	(void)state;
	path_in(path, "fifo");
	assert_int_equal(mkfifo(path, 0600), 0);
	/* the reader first, so that opening for writing does not wait */
	fd = open(path, O_RDONLY | O_NONBLOCK);
	assert_true(fd >= 0);
	assert_int_equal(td_write_output(path, write_text, "piped\n", err, sizeof(err)), 0);
	n = read(fd, got, sizeof(got) - 1);
	close(fd);
	assert_int_equal(n, 6);
	got[n] = '\0';
	assert_string_equal(got, "piped\n");
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
}

static void test_directory_is_refused(void **state)
{
	char err[256] = "";

	(void)state;
	assert_int_equal(td_write_output(dir, write_text, "x", err, sizeof(err)), -EISDIR);
	assert_non_null(strstr(err, "is a directory"));
}

static void test_missing_directory_is_reported(void **state)
{
	char path[PATH_MAX], err[256] = "";

	(void)state;
	path_in(path, "no/such/dir/out.txt");
	assert_int_equal(td_write_output(path, write_text, "x", err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, path));
}

/* Standard output on a full device, at the writer and at the end of main. */
static void test_stdout_write_errors_are_reported(void **state)
{
	int saved, full = open("/dev/full", O_WRONLY);
	char err[256] = "";
	int ret, checked;

	(void)state;
	if (full < 0)
		skip();
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	dup2(full, STDOUT_FILENO);
	ret = td_write_output("-", write_text, "lost\n", err, sizeof(err));
	printf("also lost\n");
	checked = td_stdout_check(false, err + 128, sizeof(err) - 128);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(full);
	clearerr(stdout);
	assert_int_equal(ret, -ENOSPC);
	assert_string_equal(err, "cannot write to standard output: No space left on device");
	assert_int_equal(checked, -ENOSPC);
	assert_string_equal(err + 128, "cannot write to standard output: No space left on device");
	/* once said, cleared: a working stdout checks clean afterwards */
	assert_int_equal(td_stdout_check(false, err, sizeof(err)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_new_file_gets_the_umask_mode, empty_dir),
		cmocka_unit_test_setup(test_regular_file_is_replaced_atomically, empty_dir),
		cmocka_unit_test_setup(test_failed_writer_keeps_the_old_file, empty_dir),
		cmocka_unit_test_setup(test_symlink_stays_and_its_target_is_written, empty_dir),
		cmocka_unit_test_setup(test_dangling_symlink_creates_its_target, empty_dir),
		cmocka_unit_test_setup(test_symlink_loop_is_refused, empty_dir),
		cmocka_unit_test_setup(test_devices_are_written_in_place, empty_dir),
		cmocka_unit_test_setup(test_fifo_is_written_in_place, empty_dir),
		cmocka_unit_test_setup(test_directory_is_refused, empty_dir),
		cmocka_unit_test_setup(test_missing_directory_is_reported, empty_dir),
		cmocka_unit_test(test_stdout_write_errors_are_reported),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
