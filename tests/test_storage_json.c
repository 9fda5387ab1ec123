// SPDX-License-Identifier: BSD-3-Clause
/*
 * storage/storage.c's JSON columns (a run's labels and event names) when
 * memory runs out: jansson's allocator fails at its 1st, 2nd, ... call,
 * and each text is either NULL with errno ENOMEM or exactly the JSON of
 * what was given. jansson 2.14 ignores some failed allocations while it
 * writes strings and returned malformed text as if all went well, which
 * the store then kept as a run nobody could read back.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "backend.h"
#include "labels.h"
#include "run.h"

static int allocations_left; /* the allocation that fails: when it reaches 0 */

/* As malloc does, a failure sets errno. */
static void *failing_malloc(size_t size)
{
	if (allocations_left-- == 0) {
		errno = ENOMEM;
		return NULL;
	}
	return malloc(size);
}

/* Calls to_json with allocation n failing, for n = 0, 1, ... until one
 * call completes without reaching its failure; checks each text. */
static void check_every_failure(char *(*to_json)(const void *), const void *what, const char *expected)
{
	int failed = 0;

	for (int n = 0;; n++) {
		char *text;

		allocations_left = n;
		errno = 0;
		text = to_json(what);
		if (text) {
			assert_string_equal(text, expected);
			free(text);
		} else {
			assert_int_equal(errno, ENOMEM);
			failed++;
		}
		if (allocations_left >= 0) /* the failure was never reached */
			break;
	}
	allocations_left = -1;
	assert_true(failed > 0);
}

static char *labels_json(const void *labels)
{
	return td_labels_to_json(labels);
}

static char *event_names_json(const void *run)
{
	return td_event_names_to_json(run);
}

static void test_labels_when_memory_runs_out(void **state)
{
	struct td_labels labels;

	(void)state;
	td_labels_init(&labels);
	allocations_left = -1;
	assert_int_equal(td_labels_set(&labels, "arch", "x86_64"), 0);
	assert_int_equal(td_labels_set(&labels, "kernel_version", "6.18.44"), 0);
	assert_int_equal(td_labels_set(&labels, "collector", "bpf"), 0);
	assert_int_equal(td_labels_set(&labels, "comm", "td-workload"), 0);
	check_every_failure(labels_json, &labels,
			    "{\"arch\":\"x86_64\",\"kernel_version\":\"6.18.44\",\"collector\":\"bpf\","
			    "\"comm\":\"td-workload\"}");
	td_labels_free(&labels);
}

static void test_event_names_when_memory_runs_out(void **state)
{
	struct td_run *run = td_run_new();

	(void)state;
	assert_non_null(run);
	run->event_names[0] = strdup("task-clock");
	run->event_names[1] = strdup("de_no_dispatch_per_slot.backend_stalls");
	run->nr_events = 2;
	check_every_failure(event_names_json, run, "[\"task-clock\",\"de_no_dispatch_per_slot.backend_stalls\"]");
	td_run_free(run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_labels_when_memory_runs_out),
		cmocka_unit_test(test_event_names_when_memory_runs_out),
	};

	json_set_alloc_funcs(failing_malloc, free);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
