/* SPDX-License-Identifier: BSD-3-Clause */
/* Reading the small text files of /proc and sysfs. */
#ifndef TOPDOWN_FILEIO_H
#define TOPDOWN_FILEIO_H

#include <stddef.h>

/*
 * Reads the first line of a small text file (a sysfs attribute, a proc
 * file such as comm) into buf without its newline. 0, -errno from open
 * or read, or -EOVERFLOW when the line does not fit in buf.
 */
int td_read_first_line(const char *path, char *buf, size_t len);

#endif
