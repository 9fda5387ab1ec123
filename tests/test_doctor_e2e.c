// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown doctor as a user runs it (user/doctor/doctor.h): the checks
 * this host passes, what it says of the PMU measured independently here,
 * --verify's self-check, and the failures it must report: a store it
 * cannot write, a user without the privileges (whose refused counters are
 * not a missing PMU), bad usage.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <cmocka.h>

#include <jansson.h>

#include "cli.h"
#include "e2e.h"

/* doctor --json's checks, by name: the status, or NULL when absent. */
static const char *status_of(json_t *doc, const char *name)
{
	size_t i;
	json_t *check;

	json_array_foreach(json_object_get(doc, "checks"), i, check)
		if (!strcmp(json_string_value(json_object_get(check, "name")), name))
			return json_string_value(json_object_get(check, "status"));
	return NULL;
}

static json_t *doctor_json(const char *const *argv, struct cli_result *r)
{
	json_error_t error;
	json_t *doc;

	cli_run(argv, r);
	doc = json_loads(r->out, 0, &error);
	if (!doc)
		fail_msg("doctor --json printed no JSON (%s): %s %s", error.text, r->out, r->err);
	return doc;
}

/* The oracle for the PMU check: a cycles counter of this process. */
static bool cycles_open(void)
{
	struct perf_event_attr attr = { .size = sizeof(attr), .type = PERF_TYPE_HARDWARE,
					.config = PERF_COUNT_HW_CPU_CYCLES, .disabled = 1 };
	int fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);

	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

static void test_this_host(void **state)
{
	char db[] = "/tmp/td-doctor-XXXXXX", path[64];
	const char *argv[] = { "topdown", "doctor", "--json", "--verify", "--db", path, NULL };
	struct cli_result *r = malloc(sizeof(*r));
	json_t *doc;

	(void)state;
	e2e_require_bpf();
	assert_non_null(mkdtemp(db));
	snprintf(path, sizeof(path), "%s/runs.db", db);
	doc = doctor_json(argv, r);
	assert_int_equal(r->status, 0);
	assert_true(json_is_true(json_object_get(doc, "can_collect")));
	for (const char *const *name = (const char *const[]){ "kernel", "privileges", "btf", "programs", "ring_buffer",
								"cpu_flush", "store", "verify", NULL };
	     *name; name++) {
		print_message("  %-12s %s\n", *name, status_of(doc, *name));
		assert_string_equal(status_of(doc, *name), "ok");
	}
	assert_string_equal(status_of(doc, "pmu"), cycles_open() ? "ok" : "warn");
	assert_non_null(status_of(doc, "tma_model"));
	assert_non_null(status_of(doc, "tma_levels"));
	if (!cycles_open())
		assert_string_equal(status_of(doc, "verify_hardware"), "warn");
	/* the probe's numbers where a PMU opens, null where none does */
	if (cycles_open()) {
		json_t *counters = json_object_get(doc, "pmu_counters");

		assert_non_null(status_of(doc, "pmu_counters"));
		if (!json_is_null(counters))
			assert_true(json_integer_value(json_object_get(counters, "gp_free")) <=
				    json_integer_value(json_object_get(counters, "gp_documented")));
	} else {
		assert_true(json_is_null(json_object_get(doc, "pmu_counters")));
		assert_null(status_of(doc, "pmu_counters"));
	}
	assert_int_equal(access(path, F_OK), -1); /* doctor creates no store */
	json_decref(doc);
	rmdir(db);
	free(r);
}

static void test_text_output(void **state)
{
	const char *argv[] = { "topdown", "doctor", "--db", "/tmp/td-doctor-text.db", NULL };
	struct cli_result *r = malloc(sizeof(*r));

	(void)state;
	e2e_require_bpf();
	cli_run(argv, r);
	assert_int_equal(r->status, 0);
	assert_non_null(strstr(r->out, "✓ btf "));
	assert_non_null(strstr(r->out, "collection can work on this host\n"));
	if (!cycles_open())
		assert_non_null(strstr(r->out, "! pmu "));
	free(r);
}

/* A store it cannot create: a failed check with its fix, exit 1. */
static void test_unwritable_store(void **state)
{
	const char *argv[] = { "topdown", "doctor", "--json", "--db", "/nonexistent-dir/runs.db", NULL };
	struct cli_result *r = malloc(sizeof(*r));
	json_t *doc;

	(void)state;
	e2e_require_bpf();
	doc = doctor_json(argv, r);
	assert_int_equal(r->status, 1);
	assert_true(json_is_false(json_object_get(doc, "can_collect")));
	assert_string_equal(status_of(doc, "store"), "fail");
	assert_non_null(strstr(r->out, "pass --db with a writable path"));
	json_decref(doc);
	free(r);
}

/* Without root or the capabilities: the privileges check fails, exit 1. */
static void test_unprivileged(void **state)
{
	struct cli_result *r = malloc(sizeof(*r));
	const char *argv[] = { "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
			       "--inh-caps=-all", "--", NULL, "doctor", "--db", "/tmp/td-doctor-nobody.db", NULL };
	char binary[4096], out_name[] = "/tmp/td-doctor-out-XXXXXX";
	int status, out = mkstemp(out_name);
	pid_t pid;

	(void)state;
	e2e_require_bpf();
	if (access(argv[0], X_OK)) {
		print_message("SKIP: needs setpriv (util-linux) to drop root\n");
		skip();
	}
	assert_non_null(realpath(cli_topdown_binary(), binary));
	argv[6] = binary;
	assert_true(out >= 0);
	pid = fork();
	if (pid == 0) {
		dup2(out, STDOUT_FILENO);
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	cli_slurp(out, r->out, sizeof(r->out));
	unlink(out_name);
	assert_int_equal(WEXITSTATUS(status), 1);
	assert_non_null(strstr(r->out, "✗ privileges"));
	assert_non_null(strstr(r->out, "collection cannot work on this host"));
	/* the counters were refused to this user, which says nothing of the hardware */
	assert_non_null(strstr(r->out, "permission denied: run as root or grant CAP_PERFMON"));
	assert_null(strstr(r->out, "no hardware PMU"));
	free(r);
}

static void test_bad_usage(void **state)
{
	const char *argv[] = { "topdown", "doctor", "--frob", NULL };
	const char *extra[] = { "topdown", "doctor", "now", NULL };
	const char *help[] = { "topdown", "help", "doctor", NULL };
	struct cli_result *r = malloc(sizeof(*r));

	(void)state;
	cli_run(argv, r);
	assert_int_equal(r->status, 2);
	assert_string_equal(r->out, "");
	assert_non_null(strstr(r->err, "unknown option, or one missing its value: '--frob'"));
	cli_run(extra, r);
	assert_int_equal(r->status, 2);
	assert_non_null(strstr(r->err, "unexpected argument 'now'"));
	cli_run(help, r); /* topdown help COMMAND is COMMAND --help */
	assert_int_equal(r->status, 0);
	assert_non_null(strstr(r->out, "usage: topdown doctor"));
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_this_host),
		cmocka_unit_test(test_text_output),
		cmocka_unit_test(test_unwritable_store),
		cmocka_unit_test(test_unprivileged),
		cmocka_unit_test(test_bad_usage),
	};

	e2e_filter_tests();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
