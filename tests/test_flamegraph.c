// SPDX-License-Identifier: BSD-3-Clause
/*
 * The flame graph SVG (user/render/flamegraph.h): one frame per tree node
 * above the width limit, widths in proportion to counts, names escaped
 * and made valid, the same bytes for the same stacks in any order,
 * differential colours, and the errors. tests/browser runs the page's
 * script: with TD_FLAMEGRAPH_OUT set to a directory, test_samples writes
 * the graphs it opens there.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "flamegraph.h"

#define AREA_PX 1180.0 /* the default width less the margins */

#define assert_near(a, b, eps)                                                            \
	do {                                                                              \
		double a_ = (a), b_ = (b);                                                \
		if (!(fabs(a_ - b_) <= (eps)))                                            \
			fail_msg("%s is %g, not %g within %g", #a, a_, b_, (double)(eps)); \
	} while (0)

static const struct td_flamegraph_opts plain = { .title = "test", .unit = "samples" };

/* The SVG of stacks[0..n), asserting it drew. */
static char *render(const struct td_folded *stacks, size_t n, const struct td_flamegraph_opts *opts)
{
	char *text = NULL, err[256] = "";
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int ret;

	assert_non_null(out);
	ret = td_flamegraph_svg(out, stacks, n, opts, err, sizeof(err));
	fclose(out);
	if (ret)
		fail_msg("td_flamegraph_svg: %d: %s", ret, err);
	return text;
}

/* The error of drawing stacks[0..n), asserting nothing was written. */
static int render_error(const struct td_folded *stacks, size_t n, const struct td_flamegraph_opts *opts,
			char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int ret = td_flamegraph_svg(out, stacks, n, opts, err, errlen);

	fclose(out);
	assert_int_equal(len, 0);
	free(text);
	return ret;
}

static size_t count_of(const char *text, const char *needle)
{
	size_t n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The frame element whose tooltip starts with name (the whole name). */
static const char *frame(const char *svg, const char *name)
{
	char title[256];
	const char *p;

	snprintf(title, sizeof(title), "<title>%s\n", name);
	p = strstr(svg, title);
	if (!p)
		fail_msg("no frame named %s", name);
	assert_null(strstr(p + 1, title)); /* one frame of that name */
	return p;
}

/* A numeric attribute of the frame's rect (attr: "width=\""). */
static double rect_attr(const char *svg, const char *name, const char *attr)
{
	const char *rect = strstr(frame(svg, name), "<rect ");

	return strtod(strstr(rect, attr) + strlen(attr), NULL);
}

static void fill_of(const char *svg, const char *name, int rgb[3])
{
	const char *fill = strstr(strstr(frame(svg, name), "<rect "), "fill=\"rgb(");

	assert_non_null(fill);
	assert_int_equal(sscanf(fill, "fill=\"rgb(%d,%d,%d)", &rgb[0], &rgb[1], &rgb[2]), 3);
}

static void test_tree_and_widths(void **state)
{
	const struct td_folded stacks[] = {
		{ "main;run;hot_a", 70, 0 }, { "main;run;hot_b", 30, 0 }, { "main;run", 0, 0 }, /* weightless: skipped */
	};
	char *svg;

	(void)state;
	svg = render(stacks, 3, &plain);
	assert_int_equal(count_of(svg, "<g class=\"f\""), 5); /* all, main, run, hot_a, hot_b */
	assert_near(rect_attr(svg, "all", "width=\""), AREA_PX, 0.01);
	assert_near(rect_attr(svg, "run", "width=\""), AREA_PX, 0.01);
	assert_near(rect_attr(svg, "hot_a", "width=\"") / rect_attr(svg, "hot_b", "width=\""), 7.0 / 3,
			    0.001);
	/* siblings side by side, in name order, under their parent */
	assert_near(rect_attr(svg, "hot_a", "x=\""), 10, 0.01);
	assert_near(rect_attr(svg, "hot_b", "x=\""), 10 + 0.7 * AREA_PX, 0.01);
	/* a flame: the root at the bottom, children above their parents */
	assert_true(rect_attr(svg, "all", "y=\"") > rect_attr(svg, "main", "y=\""));
	assert_true(rect_attr(svg, "main", "y=\"") > rect_attr(svg, "hot_a", "y=\""));
	assert_non_null(strstr(svg, "<title>hot_a\n70 samples, 70.00%</title>"));
	assert_non_null(strstr(svg, "data-unit=\"samples\""));
	/* one file: the script and the style are inline, nothing is fetched */
	assert_non_null(strstr(svg, "<script><![CDATA["));
	assert_null(strstr(svg, "href"));
	assert_null(strstr(svg, "<script src"));
	assert_null(strstr(svg, "narrower than")); /* nothing hidden */
	free(svg);
}

static void test_inverted(void **state)
{
	const struct td_folded stacks[] = { { "main;run", 1, 0 } };
	struct td_flamegraph_opts opts = plain;
	char *svg;

	(void)state;
	opts.inverted = true;
	svg = render(stacks, 1, &opts);
	assert_true(rect_attr(svg, "all", "y=\"") < rect_attr(svg, "main", "y=\""));
	assert_true(rect_attr(svg, "main", "y=\"") < rect_attr(svg, "run", "y=\""));
	assert_non_null(strstr(svg, "data-inverted=\"1\""));
	free(svg);
}

/* 1 in 100001 is 0.012 px of 1180: not drawn, nor its child, and the footer says so. */
static void test_min_width(void **state)
{
	const struct td_folded stacks[] = {
		{ "main;big", 100000, 0 }, { "main;tiny;tinier", 1, 0 }, { "main;small", 100, 0 },
	};
	struct td_flamegraph_opts opts = plain;
	char *svg;

	(void)state;
	svg = render(stacks, 3, &plain);
	assert_int_equal(count_of(svg, "<g class=\"f\""), 4); /* all, main, big, small */
	assert_null(strstr(svg, "tiny"));
	assert_non_null(strstr(svg, "2 frames narrower than 0.1 px are not drawn"));
	free(svg);

	opts.min_width_px = 2; /* small is 1.18 px */
	svg = render(stacks, 3, &opts);
	assert_int_equal(count_of(svg, "<g class=\"f\""), 3);
	assert_non_null(strstr(svg, "3 frames narrower than 2 px are not drawn"));
	free(svg);
}

static void test_escaping_and_utf8(void **state)
{
	const struct td_folded stacks[] = {
		{ "main;a<b>&\"c'", 10, 0 },
		{ "main;na\xc3\xafve_\xe6\x97\xa5", 10, 0 },  /* naïve_日: valid, kept */
		{ "main;bad\xff\xfe;x\xc3", 10, 0 },          /* stray bytes, and a character cut short */
		{ "main;ctl\x01\ttab", 10, 0 },               /* controls are not XML */
		{ "main;bad\xfe\xff;x\xc3", 10, 0 },          /* the same frames once replaced: merged */
		{ "main;nc\xef\xbf\xbf", 10, 0 },             /* U+FFFF is not XML either */
	};
	struct td_flamegraph_opts opts = plain;
	char *svg;

	(void)state;
	opts.title = "<script>&\xff";
	opts.unit = "L3 \"misses\"";
	svg = render(stacks, 6, &opts);
	assert_non_null(frame(svg, "a&lt;b&gt;&amp;&quot;c&#39;"));
	assert_non_null(strstr(svg, ">a&lt;b&gt;&amp;&quot;c&#39;</text>")); /* the label too */
	assert_non_null(frame(svg, "na\xc3\xafve_\xe6\x97\xa5"));
	assert_non_null(frame(svg, "bad\xef\xbf\xbd\xef\xbf\xbd"));
	assert_non_null(strstr(frame(svg, "x\xef\xbf\xbd"), "20 L3 &quot;misses&quot;, 33.33%"));
	assert_non_null(frame(svg, "ctl\xef\xbf\xbd\xef\xbf\xbdtab"));
	assert_non_null(frame(svg, "nc\xef\xbf\xbd"));
	assert_non_null(strstr(svg, ">&lt;script&gt;&amp;\xef\xbf\xbd</text>"));
	assert_non_null(strstr(svg, "data-unit=\"L3 &quot;misses&quot;\""));
	assert_null(strchr(svg, '\xff'));
	assert_null(strchr(svg, '\x01'));
	assert_null(strstr(svg, "<b>"));
	free(svg);
}

static void test_empty_frames(void **state)
{
	const struct td_folded stacks[] = { { ";;leaf", 5, 0 }, { "", 1, 0 }, { NULL, 1, 0 }, { "main;", 2, 0 } };
	char *svg;

	(void)state;
	svg = render(stacks, 4, &plain);
	/* all, [unknown] (7), [unknown] under it (5), leaf, main, [unknown] under main */
	assert_int_equal(count_of(svg, "<g class=\"f\""), 6);
	assert_int_equal(count_of(svg, "<title>[unknown]\n"), 3);
	assert_non_null(strstr(svg, "<title>[unknown]\n7 samples, 77.78%"));
	assert_non_null(frame(svg, "leaf"));
	free(svg);
}

/* Stacks in any order draw the same bytes; siblings come in name order. */
static void test_deterministic(void **state)
{
	const struct td_folded one[] = {
		{ "main;zeta", 3, 0 }, { "main;alpha;x", 2, 0 }, { "main;alpha", 1, 0 }, { "main;zeta", 4, 0 }, { "mainx", 5, 0 },
	};
	const struct td_folded other[] = {
		{ "mainx", 5, 0 }, { "main;zeta", 4, 0 }, { "main;alpha", 1, 0 }, { "main;zeta", 3, 0 }, { "main;alpha;x", 2, 0 },
	};
	char *a, *b, *again;

	(void)state;
	a = render(one, 5, &plain);
	b = render(other, 5, &plain);
	again = render(one, 5, &plain);
	assert_string_equal(a, b);
	assert_string_equal(a, again);
	assert_true(strstr(a, "<title>alpha\n") < strstr(a, "<title>zeta\n"));
	assert_true(strstr(a, "<title>main\n") < strstr(a, "<title>mainx\n"));
	assert_non_null(strstr(a, "<title>zeta\n7 samples"));
	free(a);
	free(b);
	free(again);
}

static void test_differential(void **state)
{
	/* new: hot 80%, cool 10%, same 10%; base: 50%, 35%, 10%, and gone 5% */
	const struct td_folded stacks[] = {
		{ "main;hot", 80, 50 }, { "main;cool", 10, 35 }, { "main;same", 10, 10 }, { "main;gone", 0, 5 },
	};
	struct td_flamegraph_opts opts = plain;
	int hot[3], cool[3], same[3];
	char *svg;

	(void)state;
	opts.differential = true;
	svg = render(stacks, 4, &opts);
	fill_of(svg, "hot", hot);
	fill_of(svg, "cool", cool);
	fill_of(svg, "same", same);
	assert_true(hot[0] > hot[2] + 100);   /* red */
	assert_true(cool[2] > cool[0] + 50);  /* blue, paler: a smaller change */
	assert_true(cool[0] > hot[2]);
	assert_true(same[0] == same[1] && same[1] == same[2]); /* grey */
	assert_near(rect_attr(svg, "hot", "width=\"") / rect_attr(svg, "cool", "width=\""), 8, 0.001);
	/* gone has no width in the new set: written for the negated view, hidden */
	assert_non_null(strstr(svg, "data-b=\"5\" style=\"display:none\"><title>gone\n"));
	assert_non_null(strstr(svg, "<title>hot\nnew: 80 samples, 80.00%\nbase: 50 samples, 50.00%\n"
				    "change: +30.00 points of the total</title>"));
	assert_non_null(strstr(svg, "id=\"negate\""));
	free(svg);
}

static void test_errors(void **state)
{
	const struct td_folded zero[] = { { "main", 0, 3 } };
	const struct td_folded huge[] = { { "a", UINT64_MAX, 0 }, { "b", 1, 0 } };
	const struct td_folded huge_base[] = { { "a", 1, UINT64_MAX }, { "b", 1, 1 } };
	const struct td_folded no_base[] = { { "a", 1, 0 } };
	struct td_flamegraph_opts opts = plain;
	char err[256];

	(void)state;
	assert_int_equal(render_error(zero, 0, &plain, err, sizeof(err)), -ENODATA);
	assert_non_null(strstr(err, "no stacks to draw"));
	assert_int_equal(render_error(NULL, 3, &plain, err, sizeof(err)), -ENODATA);
	assert_int_equal(render_error(zero, 1, &plain, err, sizeof(err)), -ENODATA); /* base ignored */
	assert_string_equal(err, "no stacks to draw: every stack has a count of 0");
	assert_int_equal(render_error(huge, 2, &plain, err, sizeof(err)), -EOVERFLOW);
	assert_null(strchr(err, '\n'));
	assert_non_null(strstr(err, "scale them down"));
	free(render(huge_base, 2, &plain)); /* base ignored: draws */
	opts.differential = true;
	assert_int_equal(render_error(huge_base, 2, &opts, err, sizeof(err)), -EOVERFLOW);
	assert_int_equal(render_error(no_base, 1, &opts, err, sizeof(err)), -ENODATA);
	assert_non_null(strstr(err, "of the base set"));
	opts = plain;
	opts.width_px = 50;
	assert_int_equal(render_error(no_base, 1, &opts, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not 50"));
	opts = plain;
	opts.unit = NULL;
	assert_int_equal(render_error(no_base, 1, &opts, err, sizeof(err)), -EINVAL);
	assert_int_equal(render_error(no_base, 1, NULL, err, sizeof(err)), -EINVAL);
}

/* Deep and wide stacks: bounded output, and no crash on a long stack. */
static void test_large(void **state)
{
	enum { DEPTH = 5000, WIDE = 20000 };
	char *deep = malloc(DEPTH * 2 + 1), *svg;
	struct td_folded *stacks = calloc(WIDE + 1, sizeof(*stacks));
	char (*names)[16] = calloc(WIDE, sizeof(*names));

	(void)state;
	for (int i = 0; i < DEPTH; i++)
		memcpy(deep + 2 * i, "f;", 2);
	deep[DEPTH * 2 - 1] = '\0';
	stacks[0] = (struct td_folded){ deep, 1000000, 0 };
	for (int i = 0; i < WIDE; i++) {
		snprintf(names[i], sizeof(names[i]), "w;%d", i);
		stacks[i + 1] = (struct td_folded){ names[i], 1, 0 };
	}
	svg = render(stacks, WIDE + 1, &plain);
	/* the deep chain, root and w: each of the 20000 leaves is 0.001 px */
	assert_int_equal(count_of(svg, "<g class=\"f\""), DEPTH + 2);
	assert_non_null(strstr(svg, "20000 frames narrower than"));
	free(svg);
	free(deep);
	free(stacks);
	free(names);
}

/* The graphs tests/browser opens, written where TD_FLAMEGRAPH_OUT says (a
 * directory), else into a temporary one that is removed. */
static void write_sample(const char *dir, const char *file, const struct td_folded *stacks, size_t n,
			 const struct td_flamegraph_opts *opts)
{
	char path[4096], err[256];
	FILE *out;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	out = fopen(path, "w");
	if (!out)
		fail_msg("cannot write %s", path);
	assert_int_equal(td_flamegraph_svg(out, stacks, n, opts, err, sizeof(err)), 0);
	assert_int_equal(fclose(out), 0);
}

static void test_samples(void **state)
{
	/* hot_a's subtree is 70% of the total, one match nested in another */
	const struct td_folded profile[] = {
		{ "main;run;hot_a", 40, 0 }, { "main;run;hot_a;memcpy", 20, 0 }, { "main;run;hot_a;hot_a_helper", 10, 0 },
		{ "main;run;hot_b", 15, 0 }, { "main;run;hot_b;write;[kernel] ksys_write", 5, 0 },
		{ "main;init;parse<std::string> & \"co\"", 5, 0 }, { "main;init;na\xc3\xafve_\xff", 5, 0 },
	};
	const struct td_folded diff[] = {
		{ "main;run;hot_a", 60, 30 }, { "main;run;hot_b", 20, 40 }, { "main;run;same", 10, 10 },
		{ "main;init", 10, 10 }, { "main;init;removed", 0, 10 },
	};
	/* a name on which (A+)+B backtracks 2^30 times, and one holding it as text */
	const struct td_folded redos[] = {
		{ "main;AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 90, 0 }, { "main;parse_(A+)+B", 10, 0 },
	};
	const char *dir = getenv("TD_FLAMEGRAPH_OUT");
	struct td_flamegraph_opts opts = { .title = "topdown: cpu-clock, branch=main", .unit = "samples" };
	char tmp[] = "/tmp/td-flamegraph-XXXXXX";
	char path[sizeof(tmp) + 16];
	bool temporary = !dir || !*dir;

	(void)state;
	if (temporary)
		assert_non_null(dir = mkdtemp(tmp));
	write_sample(dir, "profile.svg", profile, sizeof(profile) / sizeof(profile[0]), &opts);
	opts.title = "topdown: L3 misses, main against feature";
	opts.unit = "L3 misses";
	opts.differential = true;
	write_sample(dir, "diff.svg", diff, sizeof(diff) / sizeof(diff[0]), &opts);
	opts.title = "topdown: cpu-clock, names a search could hang on";
	opts.differential = false;
	opts.unit = "samples";
	write_sample(dir, "redos.svg", redos, sizeof(redos) / sizeof(redos[0]), &opts);
	if (temporary) {
		snprintf(path, sizeof(path), "%s/profile.svg", dir);
		assert_int_equal(unlink(path), 0);
		snprintf(path, sizeof(path), "%s/diff.svg", dir);
		assert_int_equal(unlink(path), 0);
		snprintf(path, sizeof(path), "%s/redos.svg", dir);
		assert_int_equal(unlink(path), 0);
		assert_int_equal(rmdir(dir), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree_and_widths),
		cmocka_unit_test(test_inverted),
		cmocka_unit_test(test_min_width),
		cmocka_unit_test(test_escaping_and_utf8),
		cmocka_unit_test(test_empty_frames),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_differential),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_large),
		cmocka_unit_test(test_samples),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
