/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Facts about the CPU, parsed from the text of root/proc/cpuinfo and
 * root/sys (root is "" in production, a recorded tree in tests). The
 * parser does not depend on the architecture it runs on, so an x86 build
 * reads an arm64 snapshot as well as a native one.
 */
#ifndef TOPDOWN_CPUINFO_H
#define TOPDOWN_CPUINFO_H

#include <stdbool.h>
#include <stddef.h>

struct td_cpuinfo {
	char vendor[32];       /* GenuineIntel, AuthenticAMD, ARM, Ampere...; "unknown" */
	char model_name[128];  /* x86 "model name"; on arm64 a name from MIDR, e.g. "Neoverse-V2" */
	unsigned family, model, stepping;              /* x86 */
	unsigned implementer, part, variant, revision; /* arm64 MIDR fields */
	bool smt_on;           /* root/sys/devices/system/cpu/smt/active, else siblings vs cores */
	int online_cpus;       /* root/sys/devices/system/cpu/online, else processor entries */
};

/*
 * On arm64 the MIDR comes from cpu0's midr_el1 register file when present,
 * else from the "CPU implementer/variant/part/revision" lines. 0, or a
 * negative errno when cpuinfo cannot be read.
 */
int td_cpuinfo_read(const char *root, struct td_cpuinfo *out, char *err, size_t errlen);

#endif
