// SPDX-License-Identifier: BSD-3-Clause
/* Reading the small text files of /proc and sysfs (fileio.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

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
