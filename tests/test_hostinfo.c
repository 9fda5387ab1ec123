// SPDX-License-Identifier: BSD-3-Clause
/*
 * Host and process labels from the recorded hosts in tests/data/hosts.
 * The uname labels are checked against /proc/sys/kernel and the compiler's
 * target, which do not go through uname(2).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "hostinfo.h"

#define HOSTS "tests/data/hosts/"

static void read_proc_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	assert_non_null(fgets(buf, (int)len, f));
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static void expect_host(const char *root, const char *cpu, const char *pmu_name)
{
	struct td_labels labels;
	char err[256] = "", release[256], hostname[256];

	td_labels_init(&labels);
	assert_int_equal(td_hostinfo_labels(root, &labels, err, sizeof(err)), 0);

	read_proc_line("/proc/sys/kernel/osrelease", release, sizeof(release));
	read_proc_line("/proc/sys/kernel/hostname", hostname, sizeof(hostname));
#if defined(__x86_64__)
	assert_string_equal(td_labels_get(&labels, "arch"), "x86_64");
#elif defined(__aarch64__)
	assert_string_equal(td_labels_get(&labels, "arch"), "aarch64");
#endif
	assert_string_equal(td_labels_get(&labels, "kernel_version"), release);
	assert_string_equal(td_labels_get(&labels, "node"), hostname);
	if (cpu)
		assert_string_equal(td_labels_get(&labels, "cpu"), cpu);
	else
		assert_null(td_labels_get(&labels, "cpu"));
	assert_string_equal(td_labels_get(&labels, "pmu_name"), pmu_name);
	assert_int_equal(labels.count, cpu ? 5 : 4);
	td_labels_free(&labels);
}

static void test_host_labels(void **state)
{
	(void)state;
	expect_host(HOSTS "intel-spr", "Intel(R) Xeon(R) Platinum 8488C", "sapphire_rapids");
	expect_host(HOSTS "amd-zen4", "AMD EPYC 9654 96-Core Processor", "cpu");
	expect_host(HOSTS "neoverse-n1", "Neoverse-N1", "armv8_pmuv3_0");
	expect_host(HOSTS "neoverse-v2", "Neoverse-V2", "armv8_pmuv3_0");
	/* big.LITTLE: the first core PMU by name, whatever readdir's order. */
	expect_host(HOSTS "arm-rk3399", "ARM part 0xd03", "armv8_cortex_a53");
	expect_host(HOSTS "kvm-nopmu", "AMD EPYC", "none");
}

static void test_host_labels_keep_order_and_others(void **state)
{
	(void)state;
	struct td_labels labels;
	char err[256];

	td_labels_init(&labels);
	assert_int_equal(td_labels_set(&labels, "git_branch", "unstable"), 0);
	assert_int_equal(td_labels_set(&labels, "node", "old"), 0);
	assert_int_equal(td_hostinfo_labels(HOSTS "intel-spr", &labels, err, sizeof(err)), 0);
	assert_int_equal(labels.count, 6);
	assert_string_equal(labels.items[0].key, "git_branch");
	assert_string_equal(labels.items[1].key, "node");
	assert_string_not_equal(labels.items[1].value, "old");
	assert_string_equal(labels.items[2].key, "arch");
	assert_string_equal(labels.items[3].key, "kernel_version");
	assert_string_equal(labels.items[4].key, "cpu");
	assert_string_equal(labels.items[5].key, "pmu_name");
	td_labels_free(&labels);
}

static void test_host_labels_errors(void **state)
{
	(void)state;
	struct td_labels labels;
	char err[256] = "";

	td_labels_init(&labels);
	assert_int_equal(td_hostinfo_labels("/nonexistent", &labels, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "cannot read /nonexistent/proc/cpuinfo"));
	assert_int_equal(labels.count, 0);
	td_labels_free(&labels);
}

static void expect_process(const char *root, pid_t pid, const char *cgroup, const char *container)
{
	struct td_labels labels;
	char err[256] = "";

	td_labels_init(&labels);
	assert_int_equal(td_hostinfo_process_labels(root, pid, &labels, err, sizeof(err)), 0);
	if (cgroup)
		assert_string_equal(td_labels_get(&labels, "cgroup"), cgroup);
	else
		assert_null(td_labels_get(&labels, "cgroup"));
	if (container)
		assert_string_equal(td_labels_get(&labels, "container"), container);
	else
		assert_null(td_labels_get(&labels, "container"));
	td_labels_free(&labels);
}

static void test_process_labels(void **state)
{
	(void)state;
	/* docker, systemd cgroup driver */
	expect_process(HOSTS "intel-spr", 4242,
		       "/system.slice/docker-3f4e8a9b2c1d0e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f.scope",
		       "3f4e8a9b2c1d0e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f");
	/* docker, cgroupfs driver */
	expect_process(HOSTS "intel-spr", 4243,
		       "/docker/9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b",
		       "9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b");
	/* cgroup v1 only: nothing to say */
	expect_process(HOSTS "intel-spr", 4244, NULL, NULL);
	/* hex runs of 65 and 63 digits */
	expect_process(HOSTS "intel-spr", 4245,
		       "/system.slice/app-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.scope/"
		       "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
		       NULL);
	/* containerd under kubepods, systemd driver */
	expect_process(HOSTS "amd-zen4", 4242,
		       "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod6b1c2d3e_4f5a_6b7c_8d9e_0f1a2b3c4d5e.slice/"
		       "cri-containerd-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope",
		       "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	/* kubepods, cgroupfs driver */
	expect_process(HOSTS "amd-zen4", 4243,
		       "/kubepods/besteffort/pod6b1c2d3e-4f5a-6b7c-8d9e-0f1a2b3c4d5e/"
		       "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210",
		       "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210");
	/* cri-o */
	expect_process(HOSTS "neoverse-n1", 4242,
		       "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod0a1b2c3d_4e5f_6a7b_8c9d_0e1f2a3b4c5d.slice/"
		       "crio-aabbccddeeff00112233445566778899aabbccddeeff00112233445566778899.scope",
		       "aabbccddeeff00112233445566778899aabbccddeeff00112233445566778899");
	/* hybrid v1 + v2, no container */
	expect_process(HOSTS "neoverse-v2", 4242, "/user.slice/user-1000.slice/session-4.scope", NULL);
	expect_process(HOSTS "kvm-nopmu", 4242, "/", NULL);
}

static void test_process_labels_errors(void **state)
{
	(void)state;
	struct td_labels labels;
	char err[256] = "";
	char long_root[5000];

	td_labels_init(&labels);
	assert_int_equal(td_hostinfo_process_labels(HOSTS "intel-spr", 99999, &labels, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "check that process 99999 is still running"));

	memset(long_root, 'a', sizeof(long_root) - 1);
	long_root[sizeof(long_root) - 1] = '\0';
	assert_int_equal(td_hostinfo_process_labels(long_root, 1, &labels, err, sizeof(err)), -ENAMETOOLONG);
	assert_non_null(strstr(err, "is too long"));
	assert_int_equal(labels.count, 0);
	td_labels_free(&labels);
}

/* This process on this host: the cgroup label is the kernel's 0:: line. */
static void test_this_process(void **state)
{
	(void)state;
	struct td_labels labels;
	char err[256], line[4096];
	const char *want = NULL;
	FILE *f = fopen("/proc/self/cgroup", "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			want = line + 3;
			break;
		}
	}
	fclose(f);

	td_labels_init(&labels);
	assert_int_equal(td_hostinfo_process_labels("", getpid(), &labels, err, sizeof(err)), 0);
	if (want)
		assert_string_equal(td_labels_get(&labels, "cgroup"), want);
	else
		assert_null(td_labels_get(&labels, "cgroup"));
	td_labels_free(&labels);

	td_labels_init(&labels);
	assert_int_equal(td_hostinfo_labels("", &labels, err, sizeof(err)), 0);
	assert_non_null(td_labels_get(&labels, "pmu_name"));
	td_labels_free(&labels);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_labels),
		cmocka_unit_test(test_host_labels_keep_order_and_others),
		cmocka_unit_test(test_host_labels_errors),
		cmocka_unit_test(test_process_labels),
		cmocka_unit_test(test_process_labels_errors),
		cmocka_unit_test(test_this_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
