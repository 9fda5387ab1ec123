// SPDX-License-Identifier: BSD-3-Clause
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include "run.h"

/*
 * Failure injection. These definitions replace libc's for the whole test
 * binary; each fails once its countdown reaches zero (-1: never).
 */
static int strdup_fail_after = -1;
static int realloc_fail_after = -1;

static bool countdown_expired(int *countdown)
{
	if (*countdown == 0)
		return true;
	if (*countdown > 0)
		(*countdown)--;
	return false;
}

char *strdup(const char *s)
{
	size_t len = strlen(s) + 1;
	char *copy;

	if (countdown_expired(&strdup_fail_after))
		return NULL;
	copy = malloc(len);
	return copy ? memcpy(copy, s, len) : NULL;
}

void *reallocarray(void *ptr, size_t nmemb, size_t size)
{
	if (countdown_expired(&realloc_fail_after) || (size && nmemb > SIZE_MAX / size))
		return NULL;
	return realloc(ptr, nmemb * size);
}

/* getrandom: a script of results for the next calls; when it runs out,
 * the real system call. */
static struct {
	ssize_t results[4]; /* >0: bytes delivered, <0: -errno */
	size_t count, next;
} getrandom_script;

ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
	if (getrandom_script.next < getrandom_script.count) {
		ssize_t r = getrandom_script.results[getrandom_script.next++];

		if (r < 0) {
			errno = (int)-r;
			return -1;
		}
		memset(buf, 0xa5, (size_t)r);
		return r;
	}
	return syscall(SYS_getrandom, buf, len, flags);
}

static void script_getrandom(size_t count, const ssize_t *results)
{
	for (size_t i = 0; i < count; i++)
		getrandom_script.results[i] = results[i];
	getrandom_script.count = count;
	getrandom_script.next = 0;
}

static int reset_injection(void **state)
{
	(void)state;
	strdup_fail_after = -1;
	realloc_fail_after = -1;
	script_getrandom(0, NULL);
	return 0;
}

/* RFC 4122 text form of a version 4 UUID, checked character by character. */
static void assert_uuid_v4(const char *id)
{
	assert_int_equal(strlen(id), 36);
	for (size_t i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23)
			assert_int_equal(id[i], '-');
		else
			assert_non_null(strchr("0123456789abcdef", id[i]));
	}
	assert_int_equal(id[14], '4');
	assert_non_null(strchr("89ab", id[19]));
}

static void test_uuid_format_and_uniqueness(void **state)
{
	enum { N = 200 };
	static char ids[N][TD_RUN_ID_LEN];

	(void)state;
	for (size_t i = 0; i < N; i++) {
		assert_int_equal(td_uuid_v4(ids[i]), 0);
		assert_uuid_v4(ids[i]);
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(ids[i], ids[j]);
	}
}

static void test_uuid_retries_short_and_interrupted_reads(void **state)
{
	const ssize_t script[] = { 5, -EINTR, 11 };
	char id[TD_RUN_ID_LEN];

	(void)state;
	script_getrandom(3, script);
	assert_int_equal(td_uuid_v4(id), 0);
	assert_int_equal(getrandom_script.next, 3); /* all three calls made */
	/* 0xa5 bytes with the version and variant bits set over them. */
	assert_string_equal(id, "a5a5a5a5-a5a5-45a5-a5a5-a5a5a5a5a5a5");
}

static void test_uuid_reports_getrandom_failure(void **state)
{
	const ssize_t script[] = { -ENOSYS };
	char id[TD_RUN_ID_LEN];

	(void)state;
	script_getrandom(1, script);
	assert_int_equal(td_uuid_v4(id), -ENOSYS);
}

static void test_new_run_is_empty_with_fresh_id(void **state)
{
	struct td_run *a = td_run_new();
	struct td_run *b = td_run_new();

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_uuid_v4(a->id);
	assert_string_not_equal(a->id, b->id);
	assert_int_equal(a->started_ns, 0);
	assert_null(a->process);
	assert_null(a->collector);
	assert_int_equal(a->labels.count, 0);
	assert_int_equal(a->nr_events, 0);
	assert_int_equal(a->nr_threads, 0);
	assert_null(a->threads);
	assert_int_equal(a->nr_intervals, 0);
	assert_int_equal(a->nr_metrics, 0);
	assert_null(a->metrics);
	td_run_free(a);
	td_run_free(b);
}

static void test_new_run_fails_without_randomness(void **state)
{
	const ssize_t script[] = { -EIO };

	(void)state;
	script_getrandom(1, script);
	assert_null(td_run_new());
}

static void test_add_metric_copies_strings(void **state)
{
	struct td_run *run = td_run_new();
	char key[] = "1234";
	char path[] = "Backend_Bound.Memory_Bound";
	struct td_metric_row row = {
		.scope = TD_SCOPE_THREAD, .scope_key = key, .interval_seq = 3, .path = path,
		.parent = "Backend_Bound", .level = 2, .value = 0.25, .threshold_crossed = true,
		.confidence = NAN,
	};

	(void)state;
	assert_int_equal(td_run_add_metric(run, &row), 0);
	/* The caller's buffers change; the run's copies must not. */
	key[0] = 'X';
	path[0] = 'X';
	assert_int_equal(run->nr_metrics, 1);
	assert_string_equal(run->metrics[0].scope_key, "1234");
	assert_string_equal(run->metrics[0].path, "Backend_Bound.Memory_Bound");
	assert_string_equal(run->metrics[0].parent, "Backend_Bound");
	assert_ptr_not_equal(run->metrics[0].parent, row.parent);
	assert_int_equal(run->metrics[0].scope, TD_SCOPE_THREAD);
	assert_int_equal(run->metrics[0].interval_seq, 3);
	assert_int_equal(run->metrics[0].level, 2);
	assert_true(run->metrics[0].value == 0.25);
	assert_true(run->metrics[0].threshold_crossed);
	assert_true(isnan(run->metrics[0].confidence));
	td_run_free(run);
}

static void test_add_metric_grows_and_keeps_order(void **state)
{
	enum { N = 1000 };
	struct td_run *run = td_run_new();

	(void)state;
	for (int i = 0; i < N; i++) {
		char path[32];
		struct td_metric_row row = { .scope = TD_SCOPE_PROCESS, .scope_key = "42",
					     .interval_seq = -1, .path = path, .level = 1,
					     .value = i };

		snprintf(path, sizeof(path), "Node%d", i);
		assert_int_equal(td_run_add_metric(run, &row), 0);
	}
	assert_int_equal(run->nr_metrics, N);
	assert_true(run->cap_metrics >= N);
	for (int i = 0; i < N; i++) {
		char path[32];

		snprintf(path, sizeof(path), "Node%d", i);
		assert_string_equal(run->metrics[i].path, path);
		assert_null(run->metrics[i].parent);
		assert_true(run->metrics[i].value == i);
	}
	td_run_free(run);
}

/*
 * Rows with equal strings share one copy, the run's, however the caller
 * held them; distinct strings stay distinct.  The copies outlive the
 * caller's buffers (ASan and valgrind see a read of freed memory).
 */
static void test_add_metric_interns_strings(void **state)
{
	struct td_run *run = td_run_new();
	char *path_a = strdup("Backend_Bound.Memory_Bound"), *path_b = strdup(path_a);
	char *key_a = strdup("1234"), *key_b = strdup("1234");
	struct td_metric_row a = { .scope = TD_SCOPE_THREAD, .scope_key = key_a, .path = path_a,
				   .parent = "Backend_Bound", .level = 2 };
	struct td_metric_row b = { .scope = TD_SCOPE_THREAD, .scope_key = key_b, .path = path_b,
				   .parent = "Backend_Bound", .level = 2 };
	struct td_metric_row other = { .scope = TD_SCOPE_PROCESS, .scope_key = "1234",
				       .path = "Backend_Bound", .level = 1 };

	(void)state;
	assert_int_equal(td_run_add_metric(run, &a), 0);
	assert_int_equal(td_run_add_metric(run, &b), 0);
	assert_int_equal(td_run_add_metric(run, &other), 0);
	free(path_a);
	free(path_b);
	free(key_a);
	free(key_b);
	assert_ptr_equal(run->metrics[0].path, run->metrics[1].path);
	assert_ptr_equal(run->metrics[0].scope_key, run->metrics[1].scope_key);
	assert_ptr_equal(run->metrics[0].scope_key, run->metrics[2].scope_key);
	/* A parent and a path of equal text are one string too. */
	assert_ptr_equal(run->metrics[0].parent, run->metrics[2].path);
	assert_ptr_not_equal(run->metrics[0].path, run->metrics[2].path);
	assert_string_equal(run->metrics[1].path, "Backend_Bound.Memory_Bound");
	assert_string_equal(run->metrics[1].scope_key, "1234");
	assert_null(run->metrics[2].parent);
	/* Three distinct strings, each stored once. */
	assert_int_equal(run->strings.count, 3);
	assert_ptr_equal(td_run_intern(run, "1234"), run->metrics[2].scope_key);
	assert_int_equal(run->strings.count, 3);
	td_run_free(run);
}

/* Rows of strings td_run_intern gave are appended as they are. */
static void test_append_metric_takes_run_strings(void **state)
{
	struct td_run *run = td_run_new();
	const char *key = td_run_intern(run, "42"), *path = td_run_intern(run, "Retiring");
	struct td_metric_row row = { .scope = TD_SCOPE_PROCESS, .scope_key = key, .path = path,
				     .interval_seq = -1, .level = 1, .value = 0.5 };

	(void)state;
	assert_non_null(key);
	assert_non_null(path);
	assert_int_equal(td_run_append_metric(run, &row), 0);
	assert_int_equal(td_run_append_metric(run, &row), 0);
	assert_int_equal(run->nr_metrics, 2);
	assert_ptr_equal(run->metrics[1].scope_key, key);
	assert_ptr_equal(run->metrics[1].path, path);
	assert_int_equal(run->strings.count, 2);
	td_run_free(run);
}

/* Each strdup in turn fails, then the array cannot grow: the run keeps
 * what it had and owns no half-made row; the strings stored before the
 * failure stay in the run's set, and the leak checkers see they are freed
 * with it. */
static void test_add_metric_out_of_memory(void **state)
{
	struct td_run *run = td_run_new();
	struct td_metric_row row = { .scope = TD_SCOPE_GROUP, .scope_key = "io_thd_*",
				     .path = "Frontend_Bound", .parent = "Top" };

	(void)state;
	/* Each of the three strings cannot be stored, in a run of its own. */
	for (int fail_at = 0; fail_at < 3; fail_at++) {
		struct td_run *fresh = td_run_new();

		strdup_fail_after = fail_at;
		assert_int_equal(td_run_add_metric(fresh, &row), -ENOMEM);
		strdup_fail_after = -1;
		assert_int_equal(fresh->nr_metrics, 0);
		assert_int_equal(fresh->strings.count, (size_t)fail_at);
		td_run_free(fresh);
	}
	/* Then the strings are stored (the set's key array grows once) but
	 * the row array cannot grow. */
	realloc_fail_after = 1;
	assert_int_equal(td_run_add_metric(run, &row), -ENOMEM);
	assert_int_equal(run->nr_metrics, 0);
	assert_null(run->metrics);
	assert_int_equal(run->strings.count, 3);
	realloc_fail_after = -1;
	assert_int_equal(td_run_add_metric(run, &row), 0);
	assert_int_equal(run->nr_metrics, 1);
	assert_string_equal(run->metrics[0].parent, "Top");
	td_run_free(run);
}

/* A run with every kind of owned memory; the leak checkers (ASan,
 * valgrind) fail the test if td_run_free misses any of it. */
static void test_free_releases_everything(void **state)
{
	struct td_run *run = td_run_new();
	struct td_metric_row row = { .scope = TD_SCOPE_THREAD, .scope_key = "7",
				     .path = "Retiring", .parent = NULL };

	(void)state;
	run->process = strdup("app");
	run->collector = strdup("bpf");
	assert_int_equal(td_labels_set(&run->labels, "host", "a"), 0);
	run->nr_events = 2;
	run->event_names[0] = strdup("cycles");
	run->event_names[1] = strdup("instructions");
	run->nr_threads = 3;
	run->threads = calloc(3, sizeof(*run->threads));
	run->nr_intervals = 2;
	run->intervals = calloc(2, sizeof(*run->intervals));
	run->intervals[0].nr_threads = 1;
	run->intervals[0].threads = calloc(1, sizeof(struct td_thread_row));
	assert_int_equal(td_run_add_metric(run, &row), 0);
	td_run_free(run);
	td_run_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_uuid_format_and_uniqueness, reset_injection),
		cmocka_unit_test_setup(test_uuid_retries_short_and_interrupted_reads,
				       reset_injection),
		cmocka_unit_test_setup(test_uuid_reports_getrandom_failure, reset_injection),
		cmocka_unit_test_setup(test_new_run_is_empty_with_fresh_id, reset_injection),
		cmocka_unit_test_setup(test_new_run_fails_without_randomness, reset_injection),
		cmocka_unit_test_setup(test_add_metric_copies_strings, reset_injection),
		cmocka_unit_test_setup(test_add_metric_grows_and_keeps_order, reset_injection),
		cmocka_unit_test_setup(test_add_metric_interns_strings, reset_injection),
		cmocka_unit_test_setup(test_append_metric_takes_run_strings, reset_injection),
		cmocka_unit_test_setup(test_add_metric_out_of_memory, reset_injection),
		cmocka_unit_test_setup(test_free_releases_everything, reset_injection),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
