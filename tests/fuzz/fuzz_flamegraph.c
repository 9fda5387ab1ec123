// SPDX-License-Identifier: BSD-3-Clause
/*
 * Fuzzes the flame graph SVG (user/render/flamegraph.c): lines of
 * "COUNT BASE STACK", the first byte choosing the options. A drawn graph
 * must be valid UTF-8 free of the control characters XML forbids, and
 * end its document; a refusal must explain itself.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph.h"
#include "utf8.h"

#define MAX_STACKS 256

static void check_svg(const char *svg, size_t len)
{
	const unsigned char *p = (const unsigned char *)svg;

	if (strlen(svg) != len || !strstr(svg, "<svg ") || len < 7 || strcmp(svg + len - 7, "</svg>\n"))
		abort();
	while (*p) {
		size_t n = td_utf8_char_len(p);

		if (n == 0 || (*p < 0x20 && *p != '\n'))
			abort();
		p += n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct td_folded stacks[MAX_STACKS];
	struct td_flamegraph_opts opts = { .title = "fuzz", .unit = "samples" };
	char *text, *line, *svg = NULL, err[256] = "";
	size_t n = 0, len = 0;
	FILE *out;
	int ret;

	if (size < 1)
		return 0;
	opts.differential = data[0] & 1;
	opts.inverted = data[0] & 2;
	opts.min_width_px = (data[0] >> 2) % 8;
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	for (char *next = text; (line = strsep(&next, "\n")) && n < MAX_STACKS;) {
		char *end;

		stacks[n].count = strtoull(line, &end, 10);
		stacks[n].base_count = strtoull(end, &end, 10);
		stacks[n].stack = *end ? end + 1 : end;
		n++;
	}
	out = open_memstream(&svg, &len);
	if (!out) {
		free(text);
		return 0;
	}
	ret = td_flamegraph_svg(out, stacks, n, &opts, err, sizeof(err));
	fclose(out);
	if (ret == 0)
		check_svg(svg, len);
	else if (err[0] == '\0' || len != 0)
		abort();
	free(svg);
	free(text);
	return 0;
}
