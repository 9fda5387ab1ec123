// SPDX-License-Identifier: BSD-3-Clause
/*
 * CPU facts from the recorded hosts in tests/data/hosts (see its README
 * for what each one is), from small trees built in a temporary directory
 * for the corner cases, and from this host against sysconf(3).
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cpuinfo.h"
#include "fileio.h"

static struct td_cpuinfo read_ok(const char *root)
{
	struct td_cpuinfo ci;
	char err[256] = "";
	int rc = td_cpuinfo_read(root, &ci, err, sizeof(err));

	if (rc != 0)
		fail_msg("%s: %d %s", root, rc, err);
	return ci;
}

static void test_intel_sapphire_rapids(void **state)
{
	(void)state;
	struct td_cpuinfo ci = read_ok("tests/data/hosts/intel-spr");

	assert_string_equal(ci.vendor, "GenuineIntel");
	assert_string_equal(ci.model_name, "Intel(R) Xeon(R) Platinum 8488C");
	assert_int_equal(ci.family, 6);
	assert_int_equal(ci.model, 0x8f);
	assert_int_equal(ci.stepping, 8);
	assert_int_equal(ci.implementer, 0);
	assert_int_equal(ci.part, 0);
	assert_true(ci.smt_on);           /* smt/active */
	assert_int_equal(ci.online_cpus, 8); /* online: 0-7 */
}

static void test_amd_zen4(void **state)
{
	(void)state;
	struct td_cpuinfo ci = read_ok("tests/data/hosts/amd-zen4");

	assert_string_equal(ci.vendor, "AuthenticAMD");
	assert_string_equal(ci.model_name, "AMD EPYC 9654 96-Core Processor");
	assert_int_equal(ci.family, 0x19);
	assert_int_equal(ci.model, 0x11);
	assert_int_equal(ci.stepping, 1);
	assert_true(ci.smt_on);              /* no smt/: 4 siblings on 2 cores */
	assert_int_equal(ci.online_cpus, 4); /* no online file: 4 processors */
}

static void test_neoverse_n1_from_cpuinfo_text(void **state)
{
	(void)state;
	struct td_cpuinfo ci = read_ok("tests/data/hosts/neoverse-n1");

	assert_string_equal(ci.vendor, "ARM");
	assert_string_equal(ci.model_name, "Neoverse-N1");
	assert_int_equal(ci.implementer, 0x41);
	assert_int_equal(ci.variant, 3);
	assert_int_equal(ci.part, 0xd0c);
	assert_int_equal(ci.revision, 1);
	assert_int_equal(ci.family, 0);
	assert_false(ci.smt_on);
	assert_int_equal(ci.online_cpus, 4);
}

static void test_neoverse_v2_from_midr(void **state)
{
	(void)state;
	struct td_cpuinfo ci = read_ok("tests/data/hosts/neoverse-v2");

	assert_string_equal(ci.vendor, "ARM");
	assert_string_equal(ci.model_name, "Neoverse-V2");
	assert_int_equal(ci.implementer, 0x41);
	assert_int_equal(ci.variant, 0);
	assert_int_equal(ci.part, 0xd4f);
	assert_int_equal(ci.revision, 0);
	assert_false(ci.smt_on); /* no smt/, no siblings lines */
	assert_int_equal(ci.online_cpus, 4);
}

static void test_kvm_guest(void **state)
{
	(void)state;
	struct td_cpuinfo ci = read_ok("tests/data/hosts/kvm-nopmu");

	assert_string_equal(ci.vendor, "AuthenticAMD");
	assert_string_equal(ci.model_name, "AMD EPYC");
	assert_int_equal(ci.family, 26);
	assert_int_equal(ci.model, 2);
	assert_false(ci.smt_on);
	assert_int_equal(ci.online_cpus, 2);
}

/* ---- corner cases on trees built in a temporary directory ---- */

static char tmp_root[] = "/tmp/td-cpuinfo-XXXXXX";

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Empties the temporary root so that each case starts from nothing. */
static int fresh_root(void **state)
{
	(void)state;
	nftw(tmp_root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	return mkdir(tmp_root, 0755);
}

static int remove_root(void **state)
{
	(void)state;
	return nftw(tmp_root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Writes tmp_root/rel, creating its directories. */
static void put(const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp_root, rel);
	for (char *p = path + strlen(tmp_root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void put_arm_cpuinfo(const char *implementer, const char *part)
{
	char text[256];

	snprintf(text, sizeof(text),
		 "processor\t: 0\nCPU implementer\t: %s\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: %s\nCPU revision\t: 2\n\n",
		 implementer, part);
	put("proc/cpuinfo", text);
}

static void test_neoverse_names(void **state)
{
	(void)state;
	static const struct {
		const char *part, *name;
	} parts[] = {
		{ "0xd0c", "Neoverse-N1" }, { "0xd40", "Neoverse-V1" }, { "0xd49", "Neoverse-N2" },
		{ "0xd4f", "Neoverse-V2" }, { "0xd84", "Neoverse-V3" }, { "0xd8e", "Neoverse-N3" },
		{ "0xd08", "ARM part 0xd08" },
	};

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		put_arm_cpuinfo("0x41", parts[i].part);
		struct td_cpuinfo ci = read_ok(tmp_root);

		assert_string_equal(ci.model_name, parts[i].name);
		assert_int_equal(ci.variant, 1);
		assert_int_equal(ci.revision, 2);
	}
}

static void test_other_arm_implementers(void **state)
{
	(void)state;
	struct td_cpuinfo ci;

	/* A Neoverse part number means nothing under another implementer. */
	put_arm_cpuinfo("0xc0", "0xd0c");
	ci = read_ok(tmp_root);
	assert_string_equal(ci.vendor, "Ampere");
	assert_string_equal(ci.model_name, "Ampere part 0xd0c");

	put_arm_cpuinfo("0x99", "0x001");
	ci = read_ok(tmp_root);
	assert_string_equal(ci.vendor, "implementer 0x99");
	assert_string_equal(ci.model_name, "implementer 0x99 part 0x001");
}

static void test_midr_file_wins_over_text(void **state)
{
	(void)state;
	struct td_cpuinfo ci;

	put_arm_cpuinfo("0x41", "0xd0c");
	/* HiSilicon TSV110: implementer 0x48, variant 1, part 0xd01, revision 0. */
	put("sys/devices/system/cpu/cpu0/regs/identification/midr_el1", "0x00000000481fd010\n");
	ci = read_ok(tmp_root);
	assert_string_equal(ci.vendor, "HiSilicon");
	assert_int_equal(ci.implementer, 0x48);
	assert_int_equal(ci.variant, 1);
	assert_int_equal(ci.part, 0xd01);
	assert_int_equal(ci.revision, 0);

	/* An unreadable register value falls back to the text. */
	put("sys/devices/system/cpu/cpu0/regs/identification/midr_el1", "garbage\n");
	ci = read_ok(tmp_root);
	assert_string_equal(ci.model_name, "Neoverse-N1");
	assert_int_equal(ci.variant, 1);
}

static void test_topology_sources(void **state)
{
	(void)state;
	struct td_cpuinfo ci;

	put("proc/cpuinfo", "processor\t: 0\nvendor_id\t: GenuineIntel\nsiblings\t: 2\ncpu cores\t: 1\n\n"
			    "processor\t: 1\nvendor_id\t: GenuineIntel\nsiblings\t: 2\ncpu cores\t: 1\n\n");
	ci = read_ok(tmp_root);
	assert_true(ci.smt_on);
	assert_int_equal(ci.online_cpus, 2);

	/* sysfs wins over the text, for both. */
	put("sys/devices/system/cpu/smt/active", "0\n");
	put("sys/devices/system/cpu/online", "0-3,8,10-11\n");
	ci = read_ok(tmp_root);
	assert_false(ci.smt_on);
	assert_int_equal(ci.online_cpus, 7);

	/* A list that is not one falls back to counting processors. */
	const char *bad_lists[] = { "garbage\n", "3-1\n", "0-\n", "1,,2\n", "\n", "-1\n" };

	for (size_t i = 0; i < sizeof(bad_lists) / sizeof(bad_lists[0]); i++) {
		put("sys/devices/system/cpu/online", bad_lists[i]);
		ci = read_ok(tmp_root);
		assert_int_equal(ci.online_cpus, 2);
	}
}

static void test_sparse_and_empty_cpuinfo(void **state)
{
	(void)state;
	struct td_cpuinfo ci;

	/* An architecture we do not know: nothing to report, no error. */
	put("proc/cpuinfo", "processor\t: 0\nhart\t\t: 0\nisa\t\t: rv64imafdc\n\nno colon here\n");
	ci = read_ok(tmp_root);
	assert_string_equal(ci.vendor, "unknown");
	assert_string_equal(ci.model_name, "");
	assert_int_equal(ci.online_cpus, 1);

	put("proc/cpuinfo", "");
	ci = read_ok(tmp_root);
	assert_string_equal(ci.vendor, "unknown");
	assert_int_equal(ci.online_cpus, 0);

	/* Numbers that are not numbers are left at zero. */
	put("proc/cpuinfo", "vendor_id\t: GenuineIntel\ncpu family\t: six\nmodel\t\t: -3\nstepping\t:\n");
	ci = read_ok(tmp_root);
	assert_int_equal(ci.family, 0);
	assert_int_equal(ci.model, 0);
	assert_int_equal(ci.stepping, 0);
}

static void test_errors(void **state)
{
	(void)state;
	struct td_cpuinfo ci;
	char err[256] = "";
	char long_root[PATH_MAX + 16];

	assert_int_equal(td_cpuinfo_read(tmp_root, &ci, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "cannot read /tmp/td-cpuinfo-"));
	assert_non_null(strstr(err, "/proc/cpuinfo: No such file or directory; check that /proc is mounted"));

	memset(long_root, 'a', sizeof(long_root) - 1);
	long_root[sizeof(long_root) - 1] = '\0';
	assert_int_equal(td_cpuinfo_read(long_root, &ci, err, sizeof(err)), -ENAMETOOLONG);
	assert_non_null(strstr(err, "is too long"));
}

static void test_read_first_line(void **state)
{
	(void)state;
	char path[PATH_MAX], buf[8];

	snprintf(path, sizeof(path), "%s/f", tmp_root);
	put("f", "1234567\nsecond\n");
	assert_int_equal(td_read_first_line(path, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "1234567"); /* exactly fills buf */
	put("f", "1234567");
	assert_int_equal(td_read_first_line(path, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "1234567");
	put("f", "12345678\n");
	assert_int_equal(td_read_first_line(path, buf, sizeof(buf)), -EOVERFLOW);
	put("f", "");
	assert_int_equal(td_read_first_line(path, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	assert_int_equal(td_read_first_line(tmp_root, buf, sizeof(buf)), -EIO); /* a directory */
	snprintf(path, sizeof(path), "%s/none", tmp_root);
	assert_int_equal(td_read_first_line(path, buf, sizeof(buf)), -ENOENT);
}

/* This host, against an independent count. */
static void test_this_host(void **state)
{
	(void)state;
	struct td_cpuinfo ci = read_ok("");

	assert_int_equal(ci.online_cpus, sysconf(_SC_NPROCESSORS_ONLN));
	assert_string_not_equal(ci.vendor, "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intel_sapphire_rapids),
		cmocka_unit_test(test_amd_zen4),
		cmocka_unit_test(test_neoverse_n1_from_cpuinfo_text),
		cmocka_unit_test(test_neoverse_v2_from_midr),
		cmocka_unit_test(test_kvm_guest),
		cmocka_unit_test_setup(test_neoverse_names, fresh_root),
		cmocka_unit_test_setup(test_other_arm_implementers, fresh_root),
		cmocka_unit_test_setup(test_midr_file_wins_over_text, fresh_root),
		cmocka_unit_test_setup(test_topology_sources, fresh_root),
		cmocka_unit_test_setup(test_sparse_and_empty_cpuinfo, fresh_root),
		cmocka_unit_test_setup(test_errors, fresh_root),
		cmocka_unit_test_setup(test_read_first_line, fresh_root),
		cmocka_unit_test(test_this_host),
	};

	if (!mkdtemp(tmp_root))
		return 1;
	return cmocka_run_group_tests(tests, NULL, remove_root);
}
