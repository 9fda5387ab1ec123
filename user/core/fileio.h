/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reading the small text files of /proc and sysfs, and writing output
 * files and standard output with every error checked.
 */
#ifndef TOPDOWN_FILEIO_H
#define TOPDOWN_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Reads the first line of a small text file (a sysfs attribute, a proc
 * file such as comm) into buf without its newline. 0, -errno from open
 * or read, or -EOVERFLOW when the line does not fit in buf.
 */
int td_read_first_line(const char *path, char *buf, size_t len);

/* Fills out; 0 or a negative errno with err filled. */
typedef int (*td_write_fn)(FILE *out, void *ctx, char *err, size_t errlen);

/*
 * Writes what write produces to path, or to standard output when path is
 * NULL or "-". Nothing is left half-written:
 * - a regular file, or a path that does not exist yet, is replaced
 *   atomically: written to a temporary file beside it, flushed to disk,
 *   then renamed over it, with the mode a new file gets under the umask;
 * - a symbolic link is followed: its final target is replaced that way in
 *   its own directory and the link stays;
 * - a character or block device, or a FIFO, is opened and written in
 *   place, never replaced (--output /dev/null stays /dev/null).
 * Every write, flush and close is checked. A failed write to the stream
 * (ENOSPC, EIO, EPIPE) wins over what write returned: err then names the
 * file or standard output and the system's reason. 0 or a negative errno.
 */
int td_write_output(const char *path, td_write_fn write, void *ctx, char *err, size_t errlen);

/*
 * Puts a stream that remembers why a write failed behind stdout, when it is
 * not a terminal: stdio keeps only an error flag, and td_stdout_check could
 * otherwise say no more than EIO about a write that failed before its
 * flush. main calls it first; stdout stays a FILE * like any other.
 */
void td_stdout_track(void);

/*
 * Flushes standard output and reports whether everything written to it
 * reached its destination, as gnulib's close_stdout does: 0, or a negative
 * errno with err saying "cannot write to standard output: REASON". The
 * error flag is cleared, so one failure is reported once. With close (at
 * the end of main) stdout is closed too, for errors only a close reports.
 */
int td_stdout_check(bool close, char *err, size_t errlen);

#endif
