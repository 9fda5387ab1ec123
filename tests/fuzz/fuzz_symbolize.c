// SPDX-License-Identifier: BSD-3-Clause
/*
 * Fuzzes the symbolizer (user/locate/symbolize.h) through a fake proc
 * tree: the first byte picks what the rest is (an ELF file mapped by the
 * fake process, its maps text, kallsyms, or its perf JIT map), and a few
 * addresses taken from the input are looked up. Every line also goes
 * through the three pure parsers. Lookups must return 1..max frames,
 * refusals must explain themselves, nothing may crash or leak.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize.h"

#define MAX_FRAMES 4
#define ELF_BASE 0x400000ULL

static char root[] = "/tmp/td-fuzz-sym-XXXXXX";

static void put(const char *rel, const void *data, size_t size)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	if (!f)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	if (fclose(f))
		abort();
}

static void parse_lines(const char *text, size_t size)
{
	const char *p = text, *end = text + size;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct td_maps_entry m;
		struct td_kallsyms_entry k;
		struct td_perf_map_entry j;

		if (td_maps_parse_line(p, n, &m) == 0 &&
		    (m.start >= m.end || m.path + m.path_len > p + n))
			abort();
		if (td_kallsyms_parse_line(p, n, &k) == 0 && (!k.name_len || k.name + k.name_len > p + n))
			abort();
		if (td_perf_map_parse_line(p, n, &j) == 0 && (!j.name_len || j.name + j.name_len > p + n))
			abort();
		p += n + 1;
	}
}

/* Addresses from the input's last bytes, near base. */
static uint64_t pick(const uint8_t *data, size_t size, int i, uint64_t base)
{
	uint32_t v = 0;

	for (int b = 0; b < 4; b++)
		v = v << 8 | (size > (size_t)(i * 4 + b) ? data[size - 1 - (size_t)(i * 4 + b)] : 0);
	return base + (v & 0xfffff);
}

static void lookups(struct td_symbolizer *sym, const uint8_t *data, size_t size, uint64_t base)
{
	struct td_frame frames[MAX_FRAMES];

	for (int i = 0; i < 4; i++) {
		int n = td_symbolize_user(sym, 1, pick(data, size, i, base), i & 1, frames, MAX_FRAMES);

		if (n < 1 || n > MAX_FRAMES)
			abort();
		for (int f = 0; f < n; f++)
			td_frame_release(&frames[f]);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct td_symbolizer_opts opts = { .proc_root = root, .perf_map_dir = root };
	struct td_symbolizer *sym;
	char err[512] = "", maps[512];
	struct td_frame frame;

	if (!ready) {
		char dir[64];

		if (!mkdtemp(root))
			abort();
		snprintf(dir, sizeof(dir), "%s/1", root);
		if (mkdir(dir, 0700))
			abort();
		ready = true;
	}
	if (!size)
		return 0;
	parse_lines((const char *)data + 1, size - 1);
	sym = td_symbolizer_new(&opts, err, sizeof(err));
	if (!sym)
		abort();
	switch (data[0] % 4) {
	case 0: /* an ELF file, mapped executable at ELF_BASE */
		put("elf", data + 1, size - 1);
		snprintf(maps, sizeof(maps), "%llx-%llx r-xp 00000000 00:01 7 %s/elf\n", ELF_BASE,
			 ELF_BASE + 0x1000000, root);
		put("1/maps", maps, strlen(maps));
		put("perf-1.map", "", 0);
		if (td_symbolizer_add_process(sym, 1, err, sizeof(err)) != 0)
			abort();
		lookups(sym, data, size, ELF_BASE);
		break;
	case 1: /* maps text */
		put("1/maps", data + 1, size - 1);
		put("perf-1.map", "", 0);
		if (td_symbolizer_add_process(sym, 1, err, sizeof(err)) != 0 && !err[0])
			abort();
		lookups(sym, data, size, 0x7f0000000000ULL);
		break;
	case 2: /* kallsyms */
		put("kallsyms", data + 1, size - 1);
		for (int i = 0; i < 4; i++) {
			if (td_symbolize_kernel(sym, pick(data, size, i, 0xffffffff81000000ULL), &frame) != 0)
				abort();
			if (!frame.kernel || !frame.module)
				abort();
			td_frame_release(&frame);
		}
		td_symbolizer_kernel_hidden(sym);
		break;
	default: /* a JIT map over one anonymous mapping */
		snprintf(maps, sizeof(maps), "0-ffffffffffff rw-p 00000000 00:00 0\n");
		put("1/maps", maps, strlen(maps));
		put("perf-1.map", data + 1, size - 1);
		lookups(sym, data, size, 0);
		break;
	}
	td_symbolizer_free(sym);
	return 0;
}
