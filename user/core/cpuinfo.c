// SPDX-License-Identifier: BSD-3-Clause
/*
 * CPU facts from /proc/cpuinfo and sysfs. Everything is parsed from text,
 * so a recorded tree of any architecture can be read on any host.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuinfo.h"
#include "fileio.h"

/* What the cpuinfo text says; the first processor's values win. */
struct cpuinfo_text {
	char vendor_id[32];
	char model_name[128];
	int family, model, stepping;             /* -1: absent */
	int implementer, variant, part, revision; /* -1: absent */
	int siblings, cores;                     /* -1: absent */
	int processors;
};

/* Copies the value once: later processors repeat the first one's lines. */
static void set_text_once(char *dst, size_t len, const char *value)
{
	if (dst[0] == '\0')
		snprintf(dst, len, "%s", value);
}

static void set_int_once(int *dst, const char *value)
{
	char *end;
	long v;

	if (*dst >= 0)
		return;
	errno = 0;
	v = strtol(value, &end, 0); /* "0x41" and "6" alike */
	if (end != value && errno == 0 && v >= 0 && v <= INT_MAX)
		*dst = (int)v;
}

static void parse_cpuinfo_line(struct cpuinfo_text *t, char *line)
{
	char *colon = strchr(line, ':');
	char *key = line, *value, *end;

	if (!colon)
		return;
	/* "model name\t: Foo\n": trim the key's tabs and the value's spaces. */
	for (end = colon; end > key && isspace((unsigned char)end[-1]); end--)
		;
	*end = '\0';
	for (value = colon + 1; isspace((unsigned char)*value); value++)
		;
	value[strcspn(value, "\n")] = '\0';

	if (strcmp(key, "processor") == 0)
		t->processors++;
	else if (strcmp(key, "vendor_id") == 0)
		set_text_once(t->vendor_id, sizeof(t->vendor_id), value);
	else if (strcmp(key, "model name") == 0)
		set_text_once(t->model_name, sizeof(t->model_name), value);
	else if (strcmp(key, "cpu family") == 0)
		set_int_once(&t->family, value);
	else if (strcmp(key, "model") == 0)
		set_int_once(&t->model, value);
	else if (strcmp(key, "stepping") == 0)
		set_int_once(&t->stepping, value);
	else if (strcmp(key, "CPU implementer") == 0)
		set_int_once(&t->implementer, value);
	else if (strcmp(key, "CPU variant") == 0)
		set_int_once(&t->variant, value);
	else if (strcmp(key, "CPU part") == 0)
		set_int_once(&t->part, value);
	else if (strcmp(key, "CPU revision") == 0)
		set_int_once(&t->revision, value);
	else if (strcmp(key, "siblings") == 0)
		set_int_once(&t->siblings, value);
	else if (strcmp(key, "cpu cores") == 0)
		set_int_once(&t->cores, value);
}

static int read_cpuinfo_text(const char *path, struct cpuinfo_text *t, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;

	memset(t, 0, sizeof(*t));
	t->family = t->model = t->stepping = -1;
	t->implementer = t->variant = t->part = t->revision = -1;
	t->siblings = t->cores = -1;
	if (!f) {
		int rc = -errno;

		snprintf(err, errlen, "cannot read %s: %s; check that /proc is mounted", path, strerror(-rc));
		return rc;
	}
	while (getline(&line, &cap, f) >= 0)
		parse_cpuinfo_line(t, line);
	free(line);
	fclose(f);
	return 0;
}

static const struct {
	unsigned id;
	const char *name;
} arm_implementers[] = {
	{ 0x41, "ARM" },     { 0x42, "Broadcom" }, { 0x43, "Cavium" },
	{ 0x46, "Fujitsu" }, { 0x48, "HiSilicon" }, { 0x4e, "NVIDIA" },
	{ 0x50, "APM" },     { 0x51, "Qualcomm" }, { 0x61, "Apple" },
	{ 0x6d, "Microsoft" }, { 0xc0, "Ampere" },
};

/* Arm Ltd's Neoverse server cores, by MIDR part number. */
static const struct {
	unsigned part;
	const char *name;
} neoverse_parts[] = {
	{ 0xd0c, "Neoverse-N1" }, { 0xd40, "Neoverse-V1" }, { 0xd49, "Neoverse-N2" },
	{ 0xd4f, "Neoverse-V2" }, { 0xd84, "Neoverse-V3" }, { 0xd8e, "Neoverse-N3" },
};

/* Vendor and model name from the MIDR fields already in out. */
static void name_arm_cpu(struct td_cpuinfo *out)
{
	snprintf(out->vendor, sizeof(out->vendor), "implementer 0x%02x", out->implementer);
	for (size_t i = 0; i < sizeof(arm_implementers) / sizeof(arm_implementers[0]); i++)
		if (arm_implementers[i].id == out->implementer)
			snprintf(out->vendor, sizeof(out->vendor), "%s", arm_implementers[i].name);

	snprintf(out->model_name, sizeof(out->model_name), "%s part 0x%03x", out->vendor, out->part);
	if (out->implementer != 0x41)
		return;
	for (size_t i = 0; i < sizeof(neoverse_parts) / sizeof(neoverse_parts[0]); i++)
		if (neoverse_parts[i].part == out->part)
			snprintf(out->model_name, sizeof(out->model_name), "%s", neoverse_parts[i].name);
}

/* MIDR_EL1 as the kernel shows it: "0x00000000410fd4f0". */
static bool read_midr(const char *root, struct td_cpuinfo *out)
{
	char path[PATH_MAX], text[64], *end;
	unsigned long long midr;

	if ((size_t)snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu0/regs/identification/midr_el1",
			     root) >= sizeof(path) ||
	    td_read_first_line(path, text, sizeof(text)) < 0)
		return false;
	errno = 0;
	midr = strtoull(text, &end, 16);
	if (end == text || *end != '\0' || errno)
		return false;
	out->implementer = (midr >> 24) & 0xff;
	out->variant = (midr >> 20) & 0xf;
	out->part = (midr >> 4) & 0xfff;
	out->revision = midr & 0xf;
	return true;
}

/* Counts a cpu list such as "0-3,8,10-11"; -1 when it is not one. */
static int count_cpu_list(const char *list)
{
	const char *p = list;
	int count = 0;

	while (*p) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p || lo < 0)
			return -1;
		p = end;
		if (*p == '-') {
			hi = strtol(p + 1, &end, 10);
			if (end == p + 1 || hi < lo)
				return -1;
			p = end;
		}
		if (hi - lo >= INT_MAX - count)
			return -1;
		count += (int)(hi - lo + 1);
		if (*p == ',')
			p++;
		else if (*p)
			return -1;
	}
	return count > 0 ? count : -1;
}

/* Reads root/sys/devices/system/cpu/<name> into buf; false when absent. */
static bool read_cpu_sysfs(const char *root, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];

	return (size_t)snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/%s", root, name) < sizeof(path) &&
	       td_read_first_line(path, buf, len) == 0;
}

static void fill_topology(const char *root, const struct cpuinfo_text *t, struct td_cpuinfo *out)
{
	char text[4096];
	int online = read_cpu_sysfs(root, "online", text, sizeof(text)) ? count_cpu_list(text) : -1;

	out->online_cpus = online > 0 ? online : t->processors;
	if (read_cpu_sysfs(root, "smt/active", text, sizeof(text)))
		out->smt_on = strcmp(text, "1") == 0;
	else
		out->smt_on = t->siblings > 0 && t->cores > 0 && t->siblings > t->cores;
}

int td_cpuinfo_read(const char *root, struct td_cpuinfo *out, char *err, size_t errlen)
{
	struct cpuinfo_text t;
	char path[PATH_MAX];
	int rc;

	if ((size_t)snprintf(path, sizeof(path), "%s/proc/cpuinfo", root) >= sizeof(path)) {
		snprintf(err, errlen, "root '%.64s...' is too long; use a shorter path", root);
		return -ENAMETOOLONG;
	}
	rc = read_cpuinfo_text(path, &t, err, errlen);
	if (rc < 0)
		return rc;

	memset(out, 0, sizeof(*out));
	fill_topology(root, &t, out);
	/* arm64: the register file is authoritative, the text is the fallback. */
	bool have_midr = read_midr(root, out);

	if (!have_midr && t.implementer >= 0) {
		out->implementer = (unsigned)t.implementer;
		out->variant = t.variant >= 0 ? (unsigned)t.variant : 0;
		out->part = t.part >= 0 ? (unsigned)t.part : 0;
		out->revision = t.revision >= 0 ? (unsigned)t.revision : 0;
		have_midr = true;
	}
	if (have_midr) {
		name_arm_cpu(out);
		return 0;
	}
	snprintf(out->vendor, sizeof(out->vendor), "%s", t.vendor_id[0] ? t.vendor_id : "unknown");
	snprintf(out->model_name, sizeof(out->model_name), "%s", t.model_name);
	out->family = t.family >= 0 ? (unsigned)t.family : 0;
	out->model = t.model >= 0 ? (unsigned)t.model : 0;
	out->stepping = t.stepping >= 0 ? (unsigned)t.stepping : 0;
	return 0;
}
