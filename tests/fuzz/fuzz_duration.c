// SPDX-License-Identifier: BSD-3-Clause
/*
 * Fuzzes the command-line number parsers of user/core/parse.c, which share one
 * digit reader: durations, pid lists and bounded integers. Accepted
 * values must obey their contracts; rejections must explain themselves.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

#define PIDS_MAX 8

static void check_error(const char *err)
{
	if (err[0] == '\0')
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	char err[256] = "";
	uint64_t ns;
	pid_t pids[PIDS_MAX];
	size_t count;
	long value;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	if (td_parse_duration_ns(text, "--every", &ns, err, sizeof(err)) == 0) {
		if (ns == 0)
			abort();
	} else {
		check_error(err);
	}

	err[0] = '\0';
	if (td_parse_pid_list(text, pids, PIDS_MAX, &count, err, sizeof(err)) == 0) {
		if (count == 0 || count > PIDS_MAX)
			abort();
		for (size_t i = 0; i < count; i++)
			for (size_t j = 0; j < i; j++)
				if (pids[i] <= 0 || pids[i] == pids[j])
					abort();
	} else {
		check_error(err);
	}

	err[0] = '\0';
	if (td_parse_int_range(text, "--level", -5, 5, &value, err, sizeof(err)) == 0) {
		if (value < -5 || value > 5)
			abort();
	} else {
		check_error(err);
	}

	free(text);
	return 0;
}
