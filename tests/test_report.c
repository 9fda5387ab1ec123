// SPDX-License-Identifier: BSD-3-Clause
/*
 * The report page (user/render/report.h): each part's JSON block is the
 * *_json builder's answer, readable back whatever its strings hold (no
 * "</script" or "<!--" leaks into the page), a part left NULL has no
 * section, block or contents entry, the flame graph is framed only when
 * it draws, and the errors: nothing to report, a failed write.
 * tests/browser/report.test.mjs runs the page's script.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "query_render.h"
#include "report.h"

/* A string no page may carry outside its escapes: it would end a script block. */
#define HOSTILE "</script><!--<script>alert(1)</script>"

static struct td_tree_node nodes[] = {
	{ .path = "Frontend_Bound", .name = "Frontend_Bound", .level = 1, .value = 0.363, .min = 0.363,
	  .max = 0.363, .nr_values = 1, .nr_crossed = 1, .crossed = true, .confidence = 1 },
	{ .path = "Retiring", .name = "Retiring", .level = 1, .value = 0.454, .min = 0.454, .max = 0.454,
	  .nr_values = 1, .confidence = 0.4, .low_confidence = true, .useful = true },
};
static const struct td_tree tree = { .nr_runs = 1, .nr_samples = 1, .nr_nodes = 2, .nodes = nodes,
				     .useful = 0.454, .wasted = 0.363 };

static struct td_hot_function functions[] = {
	{ .name = HOSTILE, .module = "app", .self_count = 3, .total_count = 4, .self_share = 0.75, .total_share = 1 },
};
static const struct td_hot hot = { .nr_runs = 1, .event = "cpu-clock", .unit = "samples", .samples = 4,
				   .nr_functions = 1, .functions = functions };

static struct td_folded stacks[] = {
	{ .stack = "main;run;hot_a", .count = 3 },
	{ .stack = "main;run;hot_b", .count = 1 },
};
static const struct td_folded_set folded = { .nr_runs = 1, .event = "cpu-clock", .unit = "samples", .samples = 4,
					     .nr_stacks = 2, .stacks = stacks };

static struct td_folded zero_stacks[] = { { .stack = "main", .count = 0 } };
static const struct td_folded_set folded_empty = { .nr_runs = 1, .event = "cpu-clock", .unit = "samples",
						   .nr_stacks = 1, .stacks = zero_stacks };

static struct td_trend_point points[] = {
	{ .run = { .id = "11111111-0000-0000-0000-000000000000", .started_ns = 1000 }, .scope_key = "42",
	  .value = 0.3, .mean = 0.3, .sd = 0, .deviation = 0 },
	{ .run = { .id = "22222222-0000-0000-0000-000000000000", .started_ns = 2000 }, .scope_key = "42",
	  .value = 0.9, .mean = 0.3, .sd = 0.01, .deviation = 60, .anomaly = true },
};
static struct td_trend trend = { .path = "Frontend_Bound", .window = 10, .sigma = 3, .count = 2,
				 .nr_anomalies = 1, .points = points };

/* The page of r, asserting it was written. */
static char *page(const struct td_report *r)
{
	char *text = NULL, err[256] = "";
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int ret;

	assert_non_null(out);
	ret = td_report_html(out, r, err, sizeof(err));
	fclose(out);
	if (ret)
		fail_msg("td_report_html: %d: %s", ret, err);
	return text;
}

/* The JSON in the block with id, parsed back; NULL when there is none. */
static json_t *block(const char *html, const char *id)
{
	char open[64], *text;
	const char *start, *end;
	json_t *json;

	snprintf(open, sizeof(open), "<script type=\"application/json\" id=\"%s\"", id);
	start = strstr(html, open);
	if (!start)
		return NULL;
	start = strchr(start, '>') + 1;
	end = strstr(start, "</script>");
	assert_non_null(end);
	text = strndup(start, (size_t)(end - start));
	json = json_loads(text, 0, NULL);
	assert_non_null(json);
	free(text);
	return json;
}

/* The block holds what the builder returns, so the page shows what --json prints. */
static void assert_block_is(const char *html, const char *id, json_t *expected)
{
	json_t *got = block(html, id);

	assert_non_null(got);
	assert_true(json_equal(got, expected));
	json_decref(got);
	json_decref(expected);
}

static void test_blocks_are_the_builders_answers(void **state)
{
	const struct td_trend *trends[] = { &trend };
	struct td_report r = { .title = "git_branch=main", .tree = &tree, .trends = trends, .nr_trends = 1,
			       .hot = &hot };
	char *html = page(&r);

	(void)state;
	assert_block_is(html, "td-tree", td_tree_json(&tree));
	assert_block_is(html, "td-trend-0", td_trend_json(&trend));
	assert_block_is(html, "td-hot", td_hot_json(&hot));
	free(html);
}

static void test_hostile_strings_stay_escaped(void **state)
{
	struct td_report r = { .title = "<b>\"a&b\"</b>", .hot = &hot };
	char *html = page(&r);
	json_t *got = block(html, "td-hot");

	(void)state;
	assert_null(strstr(html, HOSTILE));
	assert_null(strstr(html, "<!--"));
	assert_null(strstr(html, "<b>"));
	assert_non_null(strstr(html, "&lt;b&gt;&quot;a&amp;b&quot;&lt;/b&gt;"));
	/* one script block closes where it should: the hot one holds one function */
	assert_non_null(got);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(got, "functions"), 0),
								"function")), HOSTILE);
	json_decref(got);
	free(html);
}

static void test_absent_parts_have_no_section(void **state)
{
	const struct td_trend *trends[] = { NULL, &trend, NULL };
	struct td_report r = { .tree = &tree, .trends = trends, .nr_trends = 3 };
	char *html = page(&r);
	json_t *meta = block(html, "td-meta");

	(void)state;
	assert_non_null(strstr(html, "<section id=\"funnel\""));
	assert_non_null(strstr(html, "<section id=\"tree\""));
	assert_non_null(strstr(html, "<section id=\"trends\""));
	assert_non_null(strstr(html, "href=\"#trends\""));
	assert_non_null(strstr(html, "id=\"td-trend-1\""));
	assert_null(strstr(html, "id=\"td-trend-0\""));
	assert_null(strstr(html, "id=\"td-trend-2\""));
	for (const char *const *id = (const char *const[]){ "threads", "compare", "hot", "flamegraph", NULL }; *id; id++) {
		char section[64], link[64];

		snprintf(section, sizeof(section), "<section id=\"%s\"", *id);
		snprintf(link, sizeof(link), "href=\"#%s\"", *id);
		assert_null(strstr(html, section));
		assert_null(strstr(html, link));
	}
	assert_null(block(html, "td-threads"));
	assert_null(block(html, "td-compare"));
	assert_null(block(html, "td-hot"));
	assert_string_equal(json_string_value(json_object_get(meta, "title")), "all runs");
	json_decref(meta);
	free(html);
}

static void test_flame_graph_framed_when_it_draws(void **state)
{
	struct td_report r = { .tree = &tree, .folded = &folded };
	char *html = page(&r);

	(void)state;
	assert_non_null(strstr(html, "<section id=\"flamegraph\""));
	assert_non_null(strstr(html, "src=\"data:image/svg+xml;base64,PD94bWwg")); /* "<?xml " */
	free(html);

	r.folded = &folded_empty; /* every count 0: nothing to draw, the section goes */
	html = page(&r);
	assert_null(strstr(html, "<section id=\"flamegraph\""));
	assert_null(strstr(html, "data:image/svg+xml"));
	free(html);
}

static void test_nothing_to_report(void **state)
{
	const struct td_trend *trends[] = { NULL };
	struct td_report r = { .trends = trends, .nr_trends = 1, .folded = &folded_empty };
	char *text = NULL, err[256] = "";
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	(void)state;
	assert_int_equal(td_report_html(out, &r, err, sizeof(err)), -ENODATA);
	fclose(out);
	assert_int_equal(len, 0);
	assert_non_null(strstr(err, "nothing to report"));
	free(text);
}

static void test_write_failure(void **state)
{
	struct td_report r = { .tree = &tree };
	FILE *out = fopen("/dev/full", "w");
	char err[256] = "";

	(void)state;
	if (!out)
		skip();
	assert_int_equal(td_report_html(out, &r, err, sizeof(err)), -EIO);
	assert_non_null(strstr(err, "cannot write"));
	fclose(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blocks_are_the_builders_answers),
		cmocka_unit_test(test_hostile_strings_stay_escaped),
		cmocka_unit_test(test_absent_parts_have_no_section),
		cmocka_unit_test(test_flame_graph_framed_when_it_draws),
		cmocka_unit_test(test_nothing_to_report),
		cmocka_unit_test(test_write_failure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
