// SPDX-License-Identifier: BSD-3-Clause
/* Reading the small text files of /proc and sysfs, writing output files (fileio.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "fileio.h"

int td_read_first_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int rc = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, len > INT_MAX ? INT_MAX : (int)len, f)) {
		buf[0] = '\0';
		if (ferror(f))
			rc = -EIO;
	} else {
		size_t n = strcspn(buf, "\n");
		int next;

		if (buf[n] == '\n') {
			buf[n] = '\0';
		} else if ((next = fgetc(f)) != EOF && next != '\n') {
			/* The line fills buf exactly when only its newline is left. */
			rc = -EOVERFLOW;
		}
	}
	fclose(f);
	return rc;
}

/*
 * An output file's descriptor behind a stdio stream that remembers why its
 * first write failed. stdio keeps only an error flag, and the errno of a
 * write that failed before the last flush is long gone by the time the
 * writer returns.
 */
struct sink {
	int fd;
	int error; /* errno of the first failed write, or 0 */
};

static ssize_t sink_write(void *cookie, const char *buf, size_t len)
{
	struct sink *s = cookie;
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(s->fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			s->error = s->error ? s->error : errno;
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* Standard output's sink closes its descriptor at the end, as fclose would. */
static int sink_close(void *cookie)
{
	return close(((struct sink *)cookie)->fd);
}

/* "'PATH'" or "standard output", for the messages below. */
static void name_output(const char *path, char *buf, size_t len)
{
	if (path)
		snprintf(buf, len, "'%s'", path);
	else
		snprintf(buf, len, "standard output");
}

/*
 * Flushes out after a writer filled it. A stream that failed any write
 * wins over ret, the writer's own verdict: a full disk is the reason, not
 * "cannot encode". Without a sink to tell (standard output), the errno of
 * a write that failed before this flush is lost: EIO then.
 */
static int check_stream(FILE *out, const struct sink *sink, const char *path, int ret, char *err,
			size_t errlen)
{
	char name[PATH_MAX + 8];
	int e = 0;

	errno = 0;
	if (fflush(out) != 0 || ferror(out))
		e = sink && sink->error ? sink->error : errno ? errno : EIO;
	if (!e)
		return ret;
	name_output(path, name, sizeof(name));
	snprintf(err, errlen, "cannot write to %s: %s", name, strerror(e));
	return -e;
}

/*
 * Standard output's own sink, once td_stdout_track put one behind it: the
 * one piece of state here, as global as stdout itself.
 */
static struct sink stdout_sink = { .fd = STDOUT_FILENO };
static bool stdout_tracked;

void td_stdout_track(void)
{
	FILE *f;

	/* A terminal keeps the real stream: curses and isatty(fileno(stdout))
	 * need its descriptor, and a terminal seldom fills up. */
	if (stdout_tracked || isatty(STDOUT_FILENO))
		return;
	f = fopencookie(&stdout_sink, "w", (cookie_io_functions_t){ .write = sink_write, .close = sink_close });
	if (!f)
		return; /* the plain stream then, its errors reported as EIO */
	fflush(stdout);
	stdout = f;
	stdout_tracked = true;
}

int td_stdout_check(bool close, char *err, size_t errlen)
{
	int ret = check_stream(stdout, stdout_tracked ? &stdout_sink : NULL, NULL, 0, err, errlen);

	clearerr(stdout);
	stdout_sink.error = 0;
	/* Nothing is pending after the flush: only a failing close of the
	 * descriptor is left, and EBADF means there was none to begin with. */
	if (ret == 0 && close && fclose(stdout) != 0 && errno != EBADF) {
		ret = -errno;
		snprintf(err, errlen, "cannot write to standard output: %s", strerror(errno));
	}
	return ret;
}

/*
 * Follows path through its symbolic links to the file they end at, which
 * may not exist yet (a dangling link is written through, as a shell's
 * redirection does). A relative link is relative to its own directory.
 */
static int follow_links(const char *path, char *target, size_t len)
{
	char link[PATH_MAX];

	if ((size_t)snprintf(target, len, "%s", path) >= len)
		return -ENAMETOOLONG;
	for (int hops = 0;; hops++) {
		struct stat st;
		ssize_t n;
		size_t dir;

		if (lstat(target, &st) != 0)
			return errno == ENOENT ? 0 : -errno;
		if (!S_ISLNK(st.st_mode))
			return 0;
		if (hops == 40) /* the kernel's own limit (MAXSYMLINKS) */
			return -ELOOP;
		n = readlink(target, link, sizeof(link));
		if (n < 0)
			return -errno;
		if ((size_t)n == sizeof(link))
			return -ENAMETOOLONG;
		link[n] = '\0';
		dir = link[0] == '/' || !strrchr(target, '/') ? 0 : (size_t)(strrchr(target, '/') - target) + 1;
		if (dir + (size_t)n >= len)
			return -ENAMETOOLONG;
		memcpy(target + dir, link, (size_t)n + 1);
	}
}

/*
 * Runs write on fd, which it takes over, and checks all of it: the writes,
 * the flush, with sync the flush to disk, and the close.
 */
static int write_fd(int fd, bool sync, const char *path, td_write_fn write, void *ctx, char *err,
		    size_t errlen)
{
	struct sink sink = { .fd = fd };
	FILE *out = fopencookie(&sink, "w", (cookie_io_functions_t){ .write = sink_write });
	int ret;

	if (!out) {
		ret = -errno;
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	ret = check_stream(out, &sink, path, write(out, ctx, err, errlen), err, errlen);
	fclose(out); /* only flushes, already checked: the descriptor is closed below */
	if (ret == 0 && sync && fsync(fd) != 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot write to '%s': %s", path, strerror(errno));
	}
	if (close(fd) != 0 && ret == 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot write to '%s': %s", path, strerror(errno));
	}
	return ret;
}

/* A device or FIFO: written where it is; replacing it would lose it. */
static int write_in_place(const char *path, const char *target, td_write_fn write, void *ctx,
			  char *err, size_t errlen)
{
	int fd = open(target, O_WRONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0) {
		int ret = -errno;

		snprintf(err, errlen, "cannot open '%s' for writing: %s; pass --output with a writable path",
			 path, strerror(errno));
		return ret;
	}
	return write_fd(fd, false, path, write, ctx, err, errlen);
}

/* A regular file or a new one: a temporary file beside it, renamed over it once complete. */
static int write_replacing(const char *path, const char *target, td_write_fn write, void *ctx,
			   char *err, size_t errlen)
{
	char tmp[PATH_MAX];
	mode_t mask;
	int fd, ret;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", target) >= sizeof(tmp)) {
		snprintf(err, errlen, "the --output path '%s' is too long", path);
		return -ENAMETOOLONG;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot write '%s': %s; pass --output with a writable path", path,
			 strerror(errno));
		return ret;
	}
	/* mkstemp's 0600 suits the temporary name; the file gets what a new file would. */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) != 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
		close(fd);
	} else {
		/* Flushed to disk before the rename: a crash leaves the old file or the new, whole. */
		ret = write_fd(fd, true, path, write, ctx, err, errlen);
	}
	if (ret == 0 && rename(tmp, target) != 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot replace '%s': %s", path, strerror(errno));
	}
	if (ret < 0)
		unlink(tmp);
	return ret;
}

int td_write_output(const char *path, td_write_fn write, void *ctx, char *err, size_t errlen)
{
	char target[PATH_MAX];
	struct stat st;
	int ret;

	if (!path || strcmp(path, "-") == 0) {
		ret = write(stdout, ctx, err, errlen);
		/* A failed write wins, as for a file; its flag is cleared once said. */
		if (ferror(stdout) || ret == 0) {
			int io = td_stdout_check(false, err, errlen);

			ret = io ? io : ret;
		}
		return ret;
	}
	ret = follow_links(path, target, sizeof(target));
	if (ret < 0) {
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(-ret));
		return ret;
	}
	if (stat(target, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "'%s' is a directory; pass --output with a file path", path);
		return -EISDIR;
	}
	if (stat(target, &st) == 0 && !S_ISREG(st.st_mode))
		return write_in_place(path, target, write, ctx, err, errlen);
	return write_replacing(path, target, write, ctx, err, errlen);
}
