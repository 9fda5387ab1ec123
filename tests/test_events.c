// SPDX-License-Identifier: BSD-3-Clause
/*
 * Event resolution. Expected encodings come from sources outside
 * user/collect/events.c: the perf_event_open(2) ABI numbers, hand-computed bit
 * placements for the fake sysfs in tests/data/sysfs, the vendors' published
 * encodings cross-checked between sysfs aliases and libpfm4 (forced to
 * one CPU below), and this host's own /sys.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "events.h"

#define FAKE_SYSFS "tests/data/sysfs"
#define SPR_SYSFS "tests/data/hosts/intel-spr/sys"
#define N1_SYSFS "tests/data/hosts/neoverse-n1/sys"

/*
 * A libpfm4 build knows the CPUs of its own architecture only, so the
 * libpfm4 cases are forced to Sapphire Rapids in an x86 build and to
 * Neoverse V2 in an arm64 one, with a branch-miss event of that CPU.
 */
#if defined(__aarch64__)
#define LIBPFM_PMU "arm_v2"
/* Arm ARM, common PMU event numbers: BR_MIS_PRED_RETIRED is 0x22. */
#define BRANCH_MISSES "BR_MIS_PRED_RETIRED"
#define BRANCH_MISSES_CONFIG 0x22
#else
#define LIBPFM_PMU "spr"
/* Intel SDM: BR_MISP_RETIRED.ALL_BRANCHES is event 0xc5, umask 0x00. */
#define BRANCH_MISSES "BR_MISP_RETIRED.ALL_BRANCHES"
#define BRANCH_MISSES_CONFIG 0xc5
#endif

/* perf_event_open(2) ABI values, written out rather than taken from a header. */
enum { TYPE_HARDWARE = 0, TYPE_SOFTWARE = 1, TYPE_RAW = 4 };

static struct td_event resolve_ok(const char *sysfs_root, const char *name)
{
	struct td_event ev;
	char err[512] = "";
	int rc = td_event_resolve_at(sysfs_root, name, &ev, err, sizeof(err));

	if (rc != 0)
		fail_msg("'%s' failed: %d %s", name, rc, err);
	assert_string_equal(ev.name, name);
	return ev;
}

static void expect_event(const char *sysfs_root, const char *name, uint32_t type,
			 uint64_t config, uint64_t config1, uint64_t config2)
{
	struct td_event ev = resolve_ok(sysfs_root, name);

	assert_int_equal(ev.type, type);
	assert_int_equal(ev.config, config);
	assert_int_equal(ev.config1, config1);
	assert_int_equal(ev.config2, config2);
}

static void expect_error(const char *sysfs_root, const char *name, int want_rc, const char *want)
{
	struct td_event ev;
	char err[512] = "";

	assert_int_equal(td_event_resolve_at(sysfs_root, name, &ev, err, sizeof(err)), want_rc);
	if (!strstr(err, want))
		fail_msg("'%s': message '%s' lacks '%s'", name, err, want);
}

/* libpfm4 starts on first use; several threads racing to it must all succeed. */
static void *resolve_in_thread(void *arg)
{
	struct td_event *ev = arg;
	char err[512];

	return (void *)(intptr_t)td_event_resolve(BRANCH_MISSES, ev, err, sizeof(err));
}

static void test_libpfm_first_use_from_threads(void **state)
{
	(void)state;
	pthread_t threads[4];
	struct td_event evs[4];

	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&threads[i], NULL, resolve_in_thread, &evs[i]), 0);
	for (int i = 0; i < 4; i++) {
		void *rc;

		assert_int_equal(pthread_join(threads[i], &rc), 0);
		assert_int_equal((intptr_t)rc, 0);
		assert_int_equal(evs[i].type, TYPE_RAW);
		assert_int_equal(evs[i].config, BRANCH_MISSES_CONFIG);
	}
}

static void test_software_events(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		uint64_t config;
	} sw[] = {
		{ "cpu-clock", 0 },        { "task-clock", 1 },      { "page-faults", 2 },
		{ "faults", 2 },           { "context-switches", 3 }, { "cs", 3 },
		{ "cpu-migrations", 4 },   { "migrations", 4 },      { "minor-faults", 5 },
		{ "major-faults", 6 },     { "alignment-faults", 7 }, { "emulation-faults", 8 },
	};

	for (size_t i = 0; i < sizeof(sw) / sizeof(sw[0]); i++)
		expect_event(FAKE_SYSFS, sw[i].name, TYPE_SOFTWARE, sw[i].config, 0, 0);
}

static void test_hardware_events(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		uint64_t config;
	} hw[] = {
		{ "cycles", 0 },           { "cpu-cycles", 0 },        { "instructions", 1 },
		{ "cache-references", 2 }, { "cache-misses", 3 },      { "branches", 4 },
		{ "branch-instructions", 4 }, { "branch-misses", 5 },  { "bus-cycles", 6 },
		{ "stalled-cycles-frontend", 7 }, { "stalled-cycles-backend", 8 }, { "ref-cycles", 9 },
	};

	for (size_t i = 0; i < sizeof(hw) / sizeof(hw[0]); i++)
		expect_event(FAKE_SYSFS, hw[i].name, TYPE_HARDWARE, hw[i].config, 0, 0);
}

static void test_raw_events(void **state)
{
	(void)state;
	expect_event(FAKE_SYSFS, "r1a8", TYPE_RAW, 0x1a8, 0, 0);
	expect_event(FAKE_SYSFS, "rC0", TYPE_RAW, 0xc0, 0, 0);
	expect_event(FAKE_SYSFS, "r0", TYPE_RAW, 0, 0, 0);
	expect_event(FAKE_SYSFS, "rffffffffffffffff", TYPE_RAW, UINT64_MAX, 0, 0);
	/* Not raw codes, and not known to anyone else either. */
	expect_error(FAKE_SYSFS, "r", -ENOENT, "unknown event 'r'");
	expect_error(FAKE_SYSFS, "r1ffffffffffffffff", -ENOENT, "unknown event");
	expect_error(FAKE_SYSFS, "rxyz", -ENOENT, "unknown event");
}

/* ":u" counts user space only on any form; the name keeps it, the encoding does not change. */
static void test_user_only_modifier(void **state)
{
	(void)state;
	struct td_event ev = resolve_ok(FAKE_SYSFS, "instructions:u"), out[4];
	size_t count = 0;
	char err[512] = "";

	assert_int_equal(ev.type, TYPE_HARDWARE);
	assert_int_equal(ev.config, 1);
	assert_true(ev.user_only);
	ev = resolve_ok(FAKE_SYSFS, "r1a8:u");
	assert_int_equal(ev.type, TYPE_RAW);
	assert_int_equal(ev.config, 0x1a8);
	assert_true(ev.user_only);
	ev = resolve_ok(FAKE_SYSFS, "cpu/event=0x3c/:u");
	assert_int_equal(ev.type, 4);
	assert_int_equal(ev.config, 0x3c);
	assert_true(ev.user_only);
	ev = resolve_ok(FAKE_SYSFS, BRANCH_MISSES ":u");
	assert_int_equal(ev.config, BRANCH_MISSES_CONFIG);
	assert_true(ev.user_only);
	assert_false(resolve_ok(FAKE_SYSFS, "instructions").user_only);
	/* both in one run: not the same event */
	assert_int_equal(td_event_list_parse_at(FAKE_SYSFS, "instructions,instructions:u", out, 4, &count, err,
						sizeof(err)), 0);
	assert_int_equal(count, 2);
	assert_false(out[0].user_only);
	assert_true(out[1].user_only);
	expect_error(FAKE_SYSFS, "bogus:u", -ENOENT, "unknown event 'bogus'");
	expect_error(FAKE_SYSFS, ":u", -ENOENT, "unknown event ':u'");
}

static void test_pmu_events(void **state)
{
	(void)state;
	/* Bit positions from tests/data/sysfs/bus/event_source/devices/cpu/format. */
	expect_event(FAKE_SYSFS, "cpu/event=0x3c/", 4, 0x3c, 0, 0);
	expect_event(FAKE_SYSFS, "cpu/event=60/", 4, 0x3c, 0, 0);
	expect_event(FAKE_SYSFS, "cpu/event=0xd1,umask=0x2,cmask=1,inv,edge/", 4,
		     0xd1 | 0x2ULL << 8 | 1ULL << 24 | 1ULL << 23 | 1ULL << 18, 0, 0);
	/* umask is config:8-15,40-47: the ninth bit lands on bit 40. */
	expect_event(FAKE_SYSFS, "cpu/umask=0x1ff/", 4, 0xffULL << 8 | 1ULL << 40, 0, 0);
	expect_event(FAKE_SYSFS, "cpu/umask=0xffff/", 4, 0xffULL << 8 | 0xffULL << 40, 0, 0);
	expect_event(FAKE_SYSFS, "cpu/offcore_rsp=0x10003c0091,event=0xb7,umask=1/", 4,
		     0xb7 | 1ULL << 8, 0x10003c0091ULL, 0);
	expect_event(FAKE_SYSFS, "cpu/ldlat=3,event=0xcd,umask=1/", 4, 0x1cd, 3, 0);
	expect_event(FAKE_SYSFS, "cpu/extra=0xffffffffffffffff/", 4, 0, 0, UINT64_MAX);
	expect_event(FAKE_SYSFS, "cpu/config=0x1234,config1=5,config2=6/", 4, 0x1234, 5, 6);
	/* A later value of the same term replaces the earlier one. */
	expect_event(FAKE_SYSFS, "cpu/event=0xff,event=0x3c/", 4, 0x3c, 0, 0);
	/* Aliases from events/. */
	expect_event(FAKE_SYSFS, "cpu/slots/", 4, 0x400, 0, 0);
	expect_event(FAKE_SYSFS, "cpu/topdown-retiring/", 4, 0x8000, 0, 0);
	expect_event(FAKE_SYSFS, "broken_pmu/inner/", 23, 3, 0, 0);
	/* A dynamic PMU type. */
	expect_event(FAKE_SYSFS, "uncore_imc_0/event=0x4,umask=0x3/", 17, 0x304, 0, 0);
}

static void test_pmu_event_errors(void **state)
{
	(void)state;
	const char *syntax = "write a PMU event as pmu/term=value,.../";

	expect_error(FAKE_SYSFS, "nosuch/event=1/", -ENOENT, "unknown PMU 'nosuch'");
	expect_error(FAKE_SYSFS, "no_type/event=1/", -ENOENT, "unknown PMU 'no_type'");
	expect_error(FAKE_SYSFS, "cpu/event=1", -EINVAL, syntax);
	expect_error(FAKE_SYSFS, "cpu//", -EINVAL, syntax);
	expect_error(FAKE_SYSFS, "/event=1/", -EINVAL, syntax);
	expect_error(FAKE_SYSFS, "cpu/event=1/u", -EINVAL, syntax);
	expect_error(FAKE_SYSFS, "cpu/event=1/u/", -EINVAL, syntax);
	expect_error(FAKE_SYSFS, "../cpu/event=1/", -EINVAL, syntax);
	expect_error(FAKE_SYSFS, "..//", -EINVAL, syntax);
	expect_error(FAKE_SYSFS, "c pu/event=1/", -EINVAL, syntax);
	expect_error(FAKE_SYSFS, "cpu/.hidden=1/", -EINVAL, "'.hidden' is not a term name");
	expect_error(FAKE_SYSFS, "cpu/=1/", -EINVAL, "'' is not a term name");
	expect_error(FAKE_SYSFS, "cpu/event=zz/", -EINVAL, "term 'event' has value 'zz'");
	expect_error(FAKE_SYSFS, "cpu/event=/", -EINVAL, "has value ''");
	expect_error(FAKE_SYSFS, "cpu/event=0x/", -EINVAL, "has value '0x'");
	expect_error(FAKE_SYSFS, "cpu/event=-1/", -EINVAL, "has value '-1'");
	expect_error(FAKE_SYSFS, "cpu/event=1x/", -EINVAL, "has value '1x'");
	expect_error(FAKE_SYSFS, "cpu/event=99999999999999999999/", -EINVAL, "use a decimal or 0x-prefixed hex");
	expect_error(FAKE_SYSFS, "cpu/nosuch=1/", -EINVAL, "PMU 'cpu' has no term 'nosuch'");
	expect_error(FAKE_SYSFS, "cpu/nosuch/", -EINVAL, "PMU 'cpu' has no term or event 'nosuch'");
	expect_error(FAKE_SYSFS, "cpu/event=1,,umask=1/", -EINVAL, "empty term");
	expect_error(FAKE_SYSFS, "cpu/event=1,/", -EINVAL, "empty term");
	expect_error(FAKE_SYSFS, "cpu/event=0x100/", -EINVAL, "value 0x100 of term 'event' does not fit its 8 bits");
	expect_error(FAKE_SYSFS, "cpu/umask=0x10000/", -EINVAL, "does not fit its 16 bits");
	expect_error(FAKE_SYSFS, "broken_pmu/bad_field=1/", -EINVAL, "format/bad_field reads 'bogus:0-3'");
	expect_error(FAKE_SYSFS, "broken_pmu/bad_range=1/", -EINVAL, "format/bad_range reads");
	expect_error(FAKE_SYSFS, "broken_pmu/bad_bit=1/", -EINVAL, "format/bad_bit reads");
	expect_error(FAKE_SYSFS, "broken_pmu/bad_junk=1/", -EINVAL, "format/bad_junk reads");
	expect_error(FAKE_SYSFS, "broken_pmu/bad_alias/", -EINVAL, "has no term 'nosuch'");
	/* Aliases do not nest: "nested" names itself inside its own alias. */
	expect_error(FAKE_SYSFS, "broken_pmu/nested/", -EINVAL, "has no term 'nested'");
}

/*
 * The same event written two ways must agree: a sysfs alias, a term list
 * or a raw code from a recorded host, and libpfm4's own tables.
 */
static void expect_same(const char *sysfs_root, const char *a, const char *b)
{
	struct td_event ea = resolve_ok(sysfs_root, a), eb = resolve_ok(sysfs_root, b);

	assert_int_equal(ea.type, eb.type);
	assert_int_equal(ea.config, eb.config);
	assert_int_equal(ea.config1, eb.config1);
	assert_int_equal(ea.config2, eb.config2);
}

#if defined(__aarch64__)
/*
 * libpfm4 encodes Arm events as raw codes (type 4), which the kernel's
 * armv8_pmuv3 PMU takes as its own; its sysfs aliases carry the PMU's
 * dynamic type instead, so against them only the encoding must agree.
 */
static void expect_same_config(const char *sysfs_root, const char *a, const char *b)
{
	struct td_event ea = resolve_ok(sysfs_root, a), eb = resolve_ok(sysfs_root, b);

	assert_int_equal(ea.config, eb.config);
	assert_int_equal(ea.config1, eb.config1);
	assert_int_equal(ea.config2, eb.config2);
}

static void test_libpfm_agrees_with_sysfs(void **state)
{
	(void)state;
	/* Arm ARM, common PMU event numbers. */
	expect_same(N1_SYSFS, "INST_RETIRED", "r8");
	expect_same(N1_SYSFS, "CPU_CYCLES", "r11");
	expect_same(N1_SYSFS, "STALL_FRONTEND", "r23");
	expect_same(N1_SYSFS, "arm_v2::BR_MIS_PRED_RETIRED:k", "r22");
	/* The aliases of the Neoverse N1 snapshot. */
	expect_same_config(N1_SYSFS, "INST_RETIRED", "armv8_pmuv3_0/inst_retired/");
	expect_same_config(N1_SYSFS, "CPU_CYCLES", "armv8_pmuv3_0/cpu_cycles/");
}
#else
static void test_libpfm_agrees_with_sysfs(void **state)
{
	(void)state;
	expect_same(SPR_SYSFS, "TOPDOWN.SLOTS", "cpu/slots/");
	expect_same(SPR_SYSFS, "INST_RETIRED.ANY_P", "cpu/event=0xc0,umask=0x00/");
	expect_same(SPR_SYSFS, "MEM_TRANS_RETIRED.LOAD_LATENCY:ldlat=3", "cpu/event=0xcd,umask=0x1,ldlat=3/");
	expect_same(SPR_SYSFS, "spr::BR_MISP_RETIRED.ALL_BRANCHES", "rc5");
}
#endif

static void test_libpfm_errors(void **state)
{
	(void)state;
	expect_error(FAKE_SYSFS, "bogus_event", -ENOENT,
		     "unknown event 'bogus_event': ");
	expect_error(FAKE_SYSFS, "bogus_event", -ENOENT,
		     "(software events such as task-clock work on any host; `perf list` shows this host's events)");
	expect_error(FAKE_SYSFS, "INST_RETIRED.NOSUCH", -EINVAL, "bad event 'INST_RETIRED.NOSUCH': libpfm4 says");
#if defined(__aarch64__)
	/* Arm events take no counter mask, and :u is a flag. */
	expect_error(FAKE_SYSFS, "INST_RETIRED:c=999", -EINVAL, "check its unit masks and modifiers");
	expect_error(FAKE_SYSFS, "INST_RETIRED:u=2", -EINVAL, "libpfm4 says");
#else
	expect_error(FAKE_SYSFS, "INST_RETIRED.ANY_P:c=999", -EINVAL, "check its unit masks and modifiers");
	expect_error(FAKE_SYSFS, "OFFCORE_RESPONSE_0", -EINVAL, "libpfm4 says");
#endif
}

static void test_name_errors(void **state)
{
	(void)state;
	char name[TD_EVENT_NAME_MAX + 1];

	expect_error(FAKE_SYSFS, "", -EINVAL, "empty event name");
	expect_error(FAKE_SYSFS, NULL, -EINVAL, "empty event name");
	memset(name, 'a', TD_EVENT_NAME_MAX);
	name[TD_EVENT_NAME_MAX] = '\0';
	expect_error(FAKE_SYSFS, name, -ENAMETOOLONG, "is too long: use at most 63 bytes");
	/* 63 bytes fit (and reach libpfm4, which does not know them). */
	name[TD_EVENT_NAME_MAX - 1] = '\0';
	expect_error(FAKE_SYSFS, name, -ENOENT, "unknown event");
}

/* The production entry points, against this host's real /sys. */
static void test_real_sysfs(void **state)
{
	(void)state;
	struct td_event ev;
	char err[512] = "", type[32];
	FILE *f;

	assert_int_equal(td_event_resolve("task-clock", &ev, err, sizeof(err)), 0);
	assert_int_equal(ev.type, TYPE_SOFTWARE);
	assert_int_equal(ev.config, 1);

	f = fopen("/sys/bus/event_source/devices/software/type", "r");
	if (!f)
		skip();
	assert_non_null(fgets(type, sizeof(type), f));
	fclose(f);
	/* software/config=1/ is task-clock spelled through sysfs. */
	assert_int_equal(td_event_resolve("software/config=1/", &ev, err, sizeof(err)), 0);
	assert_int_equal(ev.type, strtoul(type, NULL, 10));
	assert_int_equal(ev.config, 1);
}

static size_t list_ok(const char *sysfs_root, const char *list, struct td_event *out, size_t max)
{
	size_t count = 99;
	char err[512] = "";
	int rc = td_event_list_parse_at(sysfs_root, list, out, max, &count, err, sizeof(err));

	if (rc != 0)
		fail_msg("'%s' failed: %d %s", list, rc, err);
	return count;
}

static void list_bad(const char *list, size_t max, int want_rc, const char *want)
{
	struct td_event out[8];
	size_t count = 99;
	char err[512] = "";

	assert_int_equal(td_event_list_parse_at(FAKE_SYSFS, list, out, max, &count, err, sizeof(err)), want_rc);
	assert_int_equal(count, 0);
	if (!strstr(err, want))
		fail_msg("'%s': message '%s' lacks '%s'", list ? list : "(null)", err, want);
}

static void test_list_parse(void **state)
{
	(void)state;
	struct td_event out[8];

	assert_int_equal(list_ok(FAKE_SYSFS, "cycles,instructions", out, 8), 2);
	assert_string_equal(out[0].name, "cycles");
	assert_string_equal(out[1].name, "instructions");
	assert_int_equal(out[1].config, 1);

	assert_int_equal(list_ok(FAKE_SYSFS, "cpu/event=0x3c,umask=0/,instructions,cpu/slots/", out, 8), 3);
	assert_string_equal(out[0].name, "cpu/event=0x3c,umask=0/");
	assert_int_equal(out[0].config, 0x3c);
	assert_string_equal(out[2].name, "cpu/slots/");
	assert_int_equal(out[2].config, 0x400);

	assert_int_equal(list_ok(FAKE_SYSFS, " task-clock ,\tcs ", out, 8), 2);
	assert_string_equal(out[0].name, "task-clock");
	assert_string_equal(out[1].name, "cs");

	assert_int_equal(list_ok(FAKE_SYSFS, "r1,r2,r3,r4,r5,r6,r7,r8", out, 8), 8);
	assert_int_equal(out[7].config, 8);

	/* The production wrapper reads the real /sys; software events need none of it. */
	size_t count = 0;
	char err[512];

	assert_int_equal(td_event_list_parse("task-clock,page-faults", out, 8, &count, err, sizeof(err)), 0);
	assert_int_equal(count, 2);
	assert_int_equal(out[1].config, 2);
}

static void test_list_errors(void **state)
{
	(void)state;
	const char *empty = "separate event names with single commas";
	char long_list[200];

	list_bad("", 8, -EINVAL, empty);
	list_bad(NULL, 8, -EINVAL, empty);
	list_bad("cycles,,instructions", 8, -EINVAL, "empty event in list 'cycles,,instructions'");
	list_bad("cycles,", 8, -EINVAL, empty);
	list_bad(",cycles", 8, -EINVAL, empty);
	list_bad(" , ", 8, -EINVAL, empty);
	list_bad("r1,r2,r3,r4,r5,r6,r7,r8,r9", 8, -E2BIG, "too many events in 'r1,r2,r3,r4,r5,r6,r7,r8,r9': at most 8");
	list_bad("r1", 0, -E2BIG, "at most 0");
	list_bad("cycles,instructions,cycles", 8, -EINVAL, "event 'cycles' appears twice");
	list_bad("cycles,cpu-cycles", 8, -EINVAL, "events 'cycles' and 'cpu-cycles' in 'cycles,cpu-cycles' are the same event");
	list_bad("cs,context-switches", 8, -EINVAL, "are the same event");
	list_bad("instructions:u,instructions:u", 8, -EINVAL, "event 'instructions:u' appears twice");
	list_bad("cycles:u,cpu-cycles:u", 8, -EINVAL, "events 'cycles:u' and 'cpu-cycles:u' in");
	list_bad("cpu/slots/,cpu/event=0,umask=4/", 8, -EINVAL, "are the same event");
	list_bad("cycles,bogus_event", 8, -ENOENT, "unknown event 'bogus_event'");
	list_bad("cycles,cpu/event=1", 8, -EINVAL, "write a PMU event as");
	memset(long_list, 'x', sizeof(long_list) - 1);
	long_list[sizeof(long_list) - 1] = '\0';
	long_list[sizeof(long_list) - 3] = ',';
	list_bad(long_list, 8, -ENAMETOOLONG, "is too long");
}

int main(void)
{
	/* Encode libpfm4 events for one CPU whatever this host is. */
	setenv("LIBPFM_FORCE_PMU", LIBPFM_PMU, 1);

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_libpfm_first_use_from_threads),
		cmocka_unit_test(test_software_events),
		cmocka_unit_test(test_hardware_events),
		cmocka_unit_test(test_raw_events),
		cmocka_unit_test(test_user_only_modifier),
		cmocka_unit_test(test_pmu_events),
		cmocka_unit_test(test_pmu_event_errors),
		cmocka_unit_test(test_libpfm_agrees_with_sysfs),
		cmocka_unit_test(test_libpfm_errors),
		cmocka_unit_test(test_name_errors),
		cmocka_unit_test(test_real_sysfs),
		cmocka_unit_test(test_list_parse),
		cmocka_unit_test(test_list_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
