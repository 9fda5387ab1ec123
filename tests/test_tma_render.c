// SPDX-License-Identifier: BSD-3-Clause
/*
 * What collect prints of a Top-Down tree: the level-1 table by thread
 * group and the JSON trees, from a run whose counts are made up so that
 * the shares are round numbers (Sapphire Rapids level 1 with no dropped
 * uops: each node is its topdown-* count over their sum).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine.h"
#include "kb.h"
#include "tma_render.h"

/* The Sapphire Rapids level-1 events, and the counts of one thread in millions. */
static const char *const names[] = {
	"INT_MISC.UOP_DROPPING", "TOPDOWN.SLOTS", "topdown-bad-spec", "topdown-be-bound",
	"topdown-fe-bound", "topdown-heavy-ops", "topdown-retiring",
};
#define NR_EVENTS (sizeof(names) / sizeof(names[0]))

struct fixture {
	struct td_engine *engine;
	struct td_run *run;
};

/* fe, bad, be, ret in millions of slots; fraction the share of time counted (0: never). */
static void set_thread(struct td_thread_row *t, uint32_t tid, const char *comm, uint64_t oncpu_ns,
		       double fe, double bad, double be, double ret, double fraction)
{
	const double counts[NR_EVENTS] = { 0, fe + bad + be + ret, bad, be, fe, ret / 6, ret };

	t->tid = tid;
	t->pid = 10;
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	t->oncpu_ns = oncpu_ns;
	for (size_t e = 0; e < NR_EVENTS; e++)
		t->counters[e] = (struct td_counter_value){ fraction ? counts[e] * 1e6 : NAN, fraction };
}

static int setup(void **state)
{
	static struct fixture f;
	const struct td_kb *kb;
	char err[512];

	kb = td_kb_load(err, sizeof(err));
	assert_non_null(kb);
	f.engine = td_engine_new(td_kb_model(kb, "spr"), 1, names, NR_EVENTS, NULL, err, sizeof(err));
	if (!f.engine)
		fail_msg("engine: %s", err);
	f.run = td_run_new();
	f.run->nr_events = NR_EVENTS;
	for (size_t e = 0; e < NR_EVENTS; e++)
		f.run->event_names[e] = strdup(names[e]);
	f.run->threads = calloc(4, sizeof(*f.run->threads));
	f.run->nr_threads = 4;
	set_thread(&f.run->threads[0], 10, "main", 100000000, 50, 0, 25, 25, 0.3);
	set_thread(&f.run->threads[1], 11, "io_thd_1", 300000000, 20, 10, 40, 30, 1.0);
	set_thread(&f.run->threads[2], 12, "io_thd_2", 300000000, 40, 20, 80, 60, 1.0);
	set_thread(&f.run->threads[3], 13, "idle_1", 50000000, 0, 0, 0, 0, 0);
	if (td_engine_compute(f.engine, f.run, err, sizeof(err)))
		fail_msg("compute: %s", err);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	td_engine_free(f->engine);
	td_run_free(f->run);
	return 0;
}

static char *print_table(const struct fixture *f, size_t max_rows)
{
	FILE *out = tmpfile();
	char *text = calloc(1, 1 << 16);

	assert_non_null(out);
	td_print_group_level1(out, f->run, f->engine, max_rows);
	rewind(out);
	assert_true(fread(text, 1, (1 << 16) - 1, out) > 0);
	fclose(out);
	return text;
}

/* The line that starts with key, split into its words. */
static size_t line_words(const char *text, const char *key, char words[][32], size_t max)
{
	const char *line = text;
	size_t n = 0;

	while (line && strncmp(line, key, strlen(key)))
		line = (line = strchr(line, '\n')) ? line + 1 : NULL;
	if (!line)
		fail_msg("no line for %s in:\n%s", key, text);
	while (n < max && *line && *line != '\n') {
		int used = 0;

		if (sscanf(line, "%31s%n", words[n], &used) != 1)
			break;
		n++;
		line += used;
		line += strspn(line, " ");
	}
	return n;
}

static void test_group_table(void **state)
{
	struct fixture *f = *state;
	char *text = print_table(f, 30), words[8][32];
	ptrdiff_t io, main_line, idle;

	print_message("%s", text);
	assert_non_null(strstr(text, "GROUP"));
	/* pipeline order: frontend, bad speculation, backend, retiring */
	assert_int_equal(line_words(text, "GROUP", words, 8), 5);
	assert_string_equal(words[1], "Frontend_Bound");
	assert_string_equal(words[2], "Bad_Speculation");
	assert_string_equal(words[3], "Backend_Bound");
	assert_string_equal(words[4], "Retiring");
	/* io_thd_1 and io_thd_2 summed: 60/30/120/90 of 300 */
	assert_int_equal(line_words(text, "io_thd_*", words, 8), 5);
	assert_string_equal(words[1], "20.0%");
	assert_string_equal(words[2], "10.0%");
	assert_string_equal(words[3], "40.0%");
	assert_string_equal(words[4], "30.0%");
	/* main was counted 30% of the time: marked */
	assert_int_equal(line_words(text, "main", words, 8), 5);
	assert_string_equal(words[1], "50.0%~");
	assert_string_equal(words[2], "0.0%~");
	assert_string_equal(words[4], "25.0%~");
	/* idle_* was never counted: n/a, marked */
	assert_int_equal(line_words(text, "idle_*", words, 8), 5);
	for (int c = 1; c <= 4; c++)
		assert_string_equal(words[c], "n/a~");
	/* busiest first: io (600 ms), main (100 ms), idle (50 ms) */
	io = strstr(text, "io_thd_*") - text;
	main_line = strstr(text, "\nmain") - text;
	idle = strstr(text, "idle_*") - text;
	assert_true(io < main_line && main_line < idle);
	assert_non_null(strstr(text, TD_LEGEND_LOW_CONFIDENCE));
	free(text);

	text = print_table(f, 1);
	assert_non_null(strstr(text, "... 2 more groups (--json lists all)"));
	assert_null(strstr(text, "idle_*"));
	free(text);
}

static void test_trees_json(void **state)
{
	struct fixture *f = *state;
	json_t *threads = td_metric_trees_json(f->run, TD_SCOPE_THREAD);
	json_t *groups = td_metric_trees_json(f->run, TD_SCOPE_GROUP);
	json_t *tree, *node;

	assert_int_equal(json_object_size(threads), 4);
	assert_int_equal(json_object_size(groups), 3);
	tree = json_object_get(threads, "11");
	assert_true(json_array_size(tree) >= 4);
	node = json_array_get(tree, 2);
	assert_string_equal(json_string_value(json_object_get(node, "path")), "Backend_Bound");
	assert_string_equal(json_string_value(json_object_get(node, "node")), "Backend_Bound");
	assert_true(json_is_null(json_object_get(node, "parent")));
	assert_int_equal(json_integer_value(json_object_get(node, "level")), 1);
	assert_true(fabs(json_real_value(json_object_get(node, "value")) - 0.4) < 1e-12);
	assert_true(json_is_false(json_object_get(node, "low_confidence")));
	assert_true(json_is_true(json_object_get(node, "threshold_crossed"))); /* 40% > 20% */
	node = json_array_get(json_object_get(threads, "13"), 0);
	assert_true(json_is_null(json_object_get(node, "value")));
	assert_true(json_is_true(json_object_get(node, "low_confidence")));
	node = json_array_get(json_object_get(groups, "main"), 0);
	assert_true(json_is_true(json_object_get(node, "low_confidence")));
	assert_true(fabs(json_real_value(json_object_get(node, "confidence")) - 0.3) < 1e-12);
	json_decref(threads);
	json_decref(groups);
}

static void test_format_metric(void **state)
{
	struct fixture *f = *state;
	const struct td_model *spr = td_engine_model(f->engine);
	struct td_metric_row node = { .path = "Backend_Bound", .level = 1, .value = 0.4567 };
	struct td_metric_row ipc = { .path = "tma_info_thread_ipc", .level = 0, .value = 1.23456 };
	struct td_metric_row slots = { .path = "tma_info_thread_slots", .level = 0, .value = 123456789.0 };
	struct td_metric_row undefined = { .path = "Retiring", .level = 1, .value = NAN };
	char buf[32];
	json_t *json;

	(void)state;
	assert_string_equal(td_format_metric(spr, &node, buf, sizeof(buf)), "45.7%");
	assert_string_equal(td_format_metric(spr, &ipc, buf, sizeof(buf)), "1.235");
	assert_string_equal(td_format_metric(spr, &slots, buf, sizeof(buf)), "1.235e+08");
	assert_string_equal(td_format_metric(spr, &undefined, buf, sizeof(buf)), "n/a");
	json = td_metric_row_json(&ipc);
	assert_string_equal(json_string_value(json_object_get(json, "name")), "tma_info_thread_ipc");
	assert_null(json_object_get(json, "path"));
	json_decref(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_group_table),
		cmocka_unit_test(test_trees_json),
		cmocka_unit_test(test_format_metric),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
