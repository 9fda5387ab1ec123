/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Running the topdown binary from a test, as a user would, with its exit
 * status, stdout and stderr captured. TD_TOPDOWN names the binary (the
 * ASan pass points it at build/asan/topdown).
 */
#ifndef TOPDOWN_TESTS_CLI_H
#define TOPDOWN_TESTS_CLI_H

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

struct cli_result {
	int status; /* exit code, or 128 + signal */
	char out[1 << 17];
	char err[4096];
};

static inline const char *cli_topdown_path(void)
{
	const char *path = getenv("TD_TOPDOWN");

	return path ? path : "build/topdown";
}

/*
 * The topdown program itself, as it finds its own path: TD_TOPDOWN unless
 * that is a wrapper (the arm64 tests run it through qemu), in which case
 * TD_TOPDOWN_BINARY names the program.
 */
static inline const char *cli_topdown_binary(void)
{
	const char *path = getenv("TD_TOPDOWN_BINARY");

	return path ? path : cli_topdown_path();
}

/* Reads the whole of fd (from its start) into buf, NUL-terminated, and closes it. */
static inline void cli_slurp(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	close(fd);
}

/* Runs the binary with argv (argv[0] included, NULL-terminated) into r. */
static inline void cli_run(const char *const *argv, struct cli_result *r)
{
	char out_name[] = "/tmp/td-cli-out-XXXXXX", err_name[] = "/tmp/td-cli-err-XXXXXX";
	int out = mkstemp(out_name), err = mkstemp(err_name), status;
	pid_t pid = fork();

	if (pid == 0) {
		dup2(out, STDOUT_FILENO);
		dup2(err, STDERR_FILENO);
		execv(cli_topdown_path(), (char **)argv);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	cli_slurp(out, r->out, sizeof(r->out));
	cli_slurp(err, r->err, sizeof(r->err));
	unlink(out_name);
	unlink(err_name);
}

#endif
