// SPDX-License-Identifier: BSD-3-Clause
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include <jansson.h>

#include "expr.h"

/*
 * Out-of-memory injection: outside ASan builds this malloc replaces libc's
 * for the whole test binary and fails once its countdown reaches zero (-1
 * never fails).  ASan and valgrind bring their own allocator, so under them
 * the test skips.
 */
#ifdef __SANITIZE_ADDRESS__
#define CAN_FAIL_MALLOC 0
#else
#define CAN_FAIL_MALLOC 1
extern void *__libc_malloc(size_t size);
static int malloc_fail_after = -1;

void *malloc(size_t size)
{
	if (malloc_fail_after == 0)
		return NULL;
	if (malloc_fail_after > 0)
		malloc_fail_after--;
	return __libc_malloc(size);
}
#endif

/* Names and their values for one evaluation: slot i holds values[i]. */
struct vars {
	const char *const *names;
	const double *values;
	size_t count;
};

static int slot_in_vars(void *ctx, const char *name)
{
	const struct vars *v = ctx;

	for (size_t i = 0; i < v->count; i++)
		if (strcmp(v->names[i], name) == 0)
			return (int)i;
	return -ENOENT;
}

static struct td_expr *parse_ok(const char *text)
{
	char err[256] = "";
	struct td_expr *e = td_expr_parse(text, err, sizeof(err));

	if (e == NULL)
		fail_msg("'%s' did not parse: %s", text, err);
	return e;
}

static double eval_vars(const char *text, const struct vars *v)
{
	char err[256] = "";
	struct td_expr *e = parse_ok(text);

	if (td_expr_bind(e, slot_in_vars, (void *)v, err, sizeof(err)) != 0)
		fail_msg("'%s' did not bind: %s", text, err);
	double result = td_expr_eval(e, v->values);
	td_expr_free(e);
	return result;
}

static double eval0(const char *text)
{
	struct vars none = {0};

	return eval_vars(text, &none);
}

/* x is NaN, y is 0, z is 2: enough to exercise the NaN and zero rules. */
static double eval_xyz(const char *text)
{
	static const char *const names[] = {"x", "y", "z"};
	static const double values[] = {NAN, 0, 2};
	struct vars v = {names, values, 3};

	return eval_vars(text, &v);
}

/* This cmocka has no assert_double_equal. */
#define assert_double_equal(got, want, tolerance) assert_near(got, want, tolerance, __LINE__)

static void assert_near(double got, double want, double tolerance, int line)
{
	if (!(fabs(got - want) <= tolerance))
		fail_msg("line %d: got %.17g, want %.17g", line, got, want);
}

#define assert_value(text, want) assert_double_equal(eval0(text), (want), 1e-12)
#define assert_nan(value) assert_true(isnan(value))

/* Parse text, expect failure, and check the message mentions each fragment. */
static void parse_fails(const char *text, const char *column, const char *problem)
{
	char err[256] = "";
	struct td_expr *e = td_expr_parse(text, err, sizeof(err));

	if (e != NULL) {
		td_expr_free(e);
		fail_msg("'%.60s' parsed but should not", text);
	}
	if (strstr(err, column) == NULL || strstr(err, problem) == NULL)
		fail_msg("error for '%.60s' lacks '%s' or '%s': %s", text, column, problem, err);
}

static void test_numbers(void **state)
{
	(void)state;
	assert_value("12", 12);
	assert_value("0.05", 0.05);
	assert_value(".5", 0.5);
	assert_value("5.", 5);
	assert_value("1e9", 1000000000.0);
	assert_value("100e3", 100000);
	assert_value("1.5E-3", 0.0015);
	assert_value("2e+2", 200);
	assert_value("0x1F", 31);
	assert_value("0x40432", 263218);
	assert_value("  7\t\n", 7);
}

static void test_arithmetic_precedence(void **state)
{
	(void)state;
	assert_value("2 + 3 * 4", 14);
	assert_value("(2 + 3) * 4", 20);
	assert_value("2 - 3 - 4", -5); /* left associative */
	assert_value("8 / 4 / 2", 1);
	assert_value("8 - 2 + 1", 7);
	assert_value("-2 * 3", -6);
	assert_value("2 * -3", -6);
	assert_value("- -3", 3);
	assert_value("-(1 + 2) * 2", -6);
	assert_value("1 - -1", 2);
}

static void test_comparisons(void **state)
{
	(void)state;
	assert_value("1 < 2", 1);
	assert_value("2 < 1", 0);
	assert_value("2 < 2", 0);
	assert_value("2 > 1", 1);
	assert_value("1 > 2", 0);
	assert_value("2 <= 2", 1);
	assert_value("3 <= 2", 0);
	assert_value("2 >= 2", 1);
	assert_value("1 >= 2", 0);
	assert_value("2 == 2", 1);
	assert_value("2 == 3", 0);
	assert_value("2 != 3", 1);
	assert_value("2 != 2", 0);
	assert_value("1 + 2 < 4", 1); /* + binds tighter: 3 < 4 */
	assert_value("1 + (2 < 4)", 2);
	assert_value("3 > 2 > 1", 0); /* (3 > 2) > 1 is 1 > 1 */
}

static void test_logic(void **state)
{
	(void)state;
	assert_value("1 & 0", 0);
	assert_value("1 & 2", 1);
	assert_value("1 and 1", 1);
	assert_value("0 | 0", 0);
	assert_value("0 | 3", 1);
	assert_value("0 or 1", 1);
	assert_value("not 0", 1);
	assert_value("not 5", 0);
	/* and binds tighter than or: 1 | (0 & 0), not (1 | 0) & 0 */
	assert_value("1 | 0 & 0", 1);
	assert_value("1 or 0 and 0", 1);
	/* not binds looser than comparisons, tighter than and */
	assert_value("not 1 > 2", 1);
	assert_value("not 0 & 0", 0);
	assert_value("not not 7", 1);
	/* a perf threshold shape */
	assert_value("0.3 > 0.2 & (0.2 > 0.1 & (0.3 > 0.2 & 0.25 > 0.2))", 1);
	assert_value("0.1 > 0.2 | 0.2 > 0.1", 1);
}

static void test_conditional(void **state)
{
	(void)state;
	assert_value("1 if 1 else 2", 1);
	assert_value("1 if 0 else 2", 2);
	assert_value("1 if -0.5 else 2", 1);
	/* right associative: 1 if 1 else (2 if 0 else 3) */
	assert_value("1 if 1 else 2 if 0 else 3", 1);
	assert_value("1 if 0 else 2 if 0 else 3", 3);
	/* loosest: (1 + 1) if 0 else (5 * 2) */
	assert_value("1 + 1 if 0 else 5 * 2", 10);
	assert_value("10 * 2 if 0 else 3", 3);
	/* the condition may itself be a conditional */
	assert_value("1 if 2 if 0 else 0 else 7", 7);
	assert_value("(4 if 1 < 2 else 5) * 2", 8);
	assert_value("1 if 0 | 1 else 2", 1);
}

static void test_functions(void **state)
{
	(void)state;
	assert_value("min(3, 4)", 3);
	assert_value("min(4, -3)", -3);
	assert_value("max(3, 4)", 4);
	assert_value("max(0, 1 - 3)", 0);
	assert_value("d_ratio(6, 3)", 2);
	assert_value("max(1, min(5, 2 * 2)) + 1", 5);
	assert_value("min(1 if 0 else 9, 8)", 8);
	assert_value("has_event(0)", 1);
	assert_value("has_event(3 - 3)", 1);
}

static void test_division_by_zero_is_nan(void **state)
{
	(void)state;
	assert_nan(eval0("1 / 0"));
	assert_nan(eval0("-1 / 0"));
	assert_nan(eval0("0 / 0"));
	assert_nan(eval0("1 / (0 * -1)")); /* negative zero too */
	assert_nan(eval_xyz("z / y"));
	/* perf returns 0 here; topdown does not invent a measured zero */
	assert_nan(eval0("d_ratio(1, 0)"));
	assert_nan(eval_xyz("d_ratio(z, y)"));
	assert_double_equal(eval_xyz("d_ratio(y, z)"), 0, 0);
}

static void test_nan_rules(void **state)
{
	(void)state;
	assert_nan(eval_xyz("x + 1"));
	assert_nan(eval_xyz("1 - x"));
	assert_nan(eval_xyz("x * 0"));
	assert_nan(eval_xyz("x / z"));
	assert_nan(eval_xyz("-x"));
	assert_nan(eval_xyz("min(x, 1)"));
	assert_nan(eval_xyz("min(1, x)"));
	assert_nan(eval_xyz("max(x, 1)"));
	assert_nan(eval_xyz("max(1, x)"));
	assert_nan(eval_xyz("x & 1"));
	assert_nan(eval_xyz("0 & x"));
	assert_nan(eval_xyz("x | 1"));
	assert_nan(eval_xyz("1 or x"));
	assert_nan(eval_xyz("not x"));
	/* comparisons on NaN are false, "!=" included */
	assert_double_equal(eval_xyz("x < 1"), 0, 0);
	assert_double_equal(eval_xyz("x > 1"), 0, 0);
	assert_double_equal(eval_xyz("x <= 1"), 0, 0);
	assert_double_equal(eval_xyz("x >= 1"), 0, 0);
	assert_double_equal(eval_xyz("x == x"), 0, 0);
	assert_double_equal(eval_xyz("x != 1"), 0, 0);
	assert_double_equal(eval_xyz("1 != x"), 0, 0);
	assert_double_equal(eval_xyz("x != x"), 0, 0);
	/* a NaN condition selects NaN; a NaN in the branch not taken does not matter */
	assert_nan(eval_xyz("1 if x else 2"));
	assert_nan(eval_xyz("x if 1 else 2"));
	assert_double_equal(eval_xyz("x if 0 else 2"), 2, 0);
	assert_double_equal(eval_xyz("1 if 1 else x"), 1, 0);
	/* has_event tells missing from zero, and guards a NaN branch */
	assert_double_equal(eval_xyz("has_event(x)"), 0, 0);
	assert_double_equal(eval_xyz("has_event(y)"), 1, 0);
	assert_double_equal(eval_xyz("(x / z if has_event(x) else 0)"), 0, 0);
	assert_double_equal(eval_xyz("(z / 4 if has_event(z) else 0)"), 0.5, 0);
}

/* Parse text and check its names, in first-use order. */
static void names_are(const char *text, const char *const *want, size_t count)
{
	struct td_expr *e = parse_ok(text);

	assert_int_equal(td_expr_name_count(e), count);
	for (size_t i = 0; i < count; i++)
		assert_string_equal(td_expr_name(e, i), want[i]);
	assert_null(td_expr_name(e, count));
	td_expr_free(e);
}

#define NAMES_ARE(text, ...)                                              \
	do {                                                              \
		static const char *const want_[] = {__VA_ARGS__};         \
		names_are(text, want_, sizeof(want_) / sizeof(want_[0])); \
	} while (0)

static void test_canonical_names(void **state)
{
	(void)state;
	NAMES_ARE("INST_RETIRED.ANY / CPU_CLK_UNHALTED.THREAD + INST_RETIRED.ANY * 2",
		  "INST_RETIRED.ANY", "CPU_CLK_UNHALTED.THREAD");
	NAMES_ARE("ls_not_halted_cyc * de_src_op_disp.all", "ls_not_halted_cyc",
		  "de_src_op_disp.all");
	NAMES_ARE("STALL_SLOT_BACKEND / tma_info_thread_slots", "STALL_SLOT_BACKEND",
		  "tma_info_thread_slots");
	NAMES_ARE("topdown\\-fe\\-bound", "topdown-fe-bound");
	NAMES_ARE("cycles\\-t - cycles\\-ct", "cycles-t", "cycles-ct");
	NAMES_ARE("cpu@INT_MISC.RECOVERY_CYCLES\\,cmask\\=1\\,edge@",
		  "INT_MISC.RECOVERY_CYCLES,cmask=1,edge");
	NAMES_ARE("cpu_core@topdown\\-fe\\-bound@ + cpu_atom@TOPDOWN_FE_BOUND.ALL@",
		  "cpu_core/topdown-fe-bound/", "cpu_atom/TOPDOWN_FE_BOUND.ALL/");
	NAMES_ARE("cstate_core@c1\\-residency@ / msr@tsc@", "cstate_core/c1-residency/",
		  "msr/tsc/");
	NAMES_ARE("msr@tsc\\,cpu=cpu_core@", "msr/tsc,cpu=cpu_core/");
	NAMES_ARE("cha@UNC_CHA_TOR_INSERTS.IA_MISS\\,config1\\=0x40432@",
		  "cha/UNC_CHA_TOR_INSERTS.IA_MISS,config1=0x40432/");
	NAMES_ARE("CPU_CLK_UNHALTED.THREAD_P:k + FRONTEND_RETIRED.L1I_MISS:R",
		  "CPU_CLK_UNHALTED.THREAD_P:k", "FRONTEND_RETIRED.L1I_MISS:R");
	NAMES_ARE("cpu_core@INST_RETIRED.ANY@:u - cpu@INST_RETIRED.ANY@:k",
		  "cpu_core/INST_RETIRED.ANY/u", "INST_RETIRED.ANY:k");
	NAMES_ARE("cpu_atom@CPU_CLK_UNHALTED.CORE_P@k / cpu_core@FRONTEND_RETIRED.L2_MISS@R",
		  "cpu_atom/CPU_CLK_UNHALTED.CORE_P/k", "cpu_core/FRONTEND_RETIRED.L2_MISS/R");
	NAMES_ARE("cpu@INST_RETIRED.ANY@u*2", "INST_RETIRED.ANY:u");
	NAMES_ARE("#SMT_on + #core_wide * #num_cpus_online / duration_time", "#SMT_on",
		  "#core_wide", "#num_cpus_online", "duration_time");
	NAMES_ARE("X / (source_count( cpu@X\\,cmask\\=1@ ) * #num_packages)", "X",
		  "source_count(X,cmask=1)", "#num_packages");
	NAMES_ARE("1 if strcmp_cpuid_str(0x410fd0c0) else 0", "strcmp_cpuid_str(0x410fd0c0)");
	/* two spellings of the same event are one name */
	NAMES_ARE("cpu@A\\,cmask\\=1@ + A\\,cmask\\=1 + A", "A,cmask=1", "A");
	/* a number has no names */
	names_are("1 + 2", NULL, 0);
}

static void test_names_bind_and_evaluate(void **state)
{
	(void)state;
	static const char *const names[] = {"cycles-ct", "cycles-t", "cpu_core/topdown-fe-bound/",
					    "#SMT_on"};
	static const double values[] = {3, 10, 0.25, 1};
	struct vars v = {names, values, 4};

	assert_double_equal(eval_vars("cycles\\-t - cycles\\-ct", &v), 7, 0);
	assert_double_equal(eval_vars("cpu_core@topdown\\-fe\\-bound@ * 4", &v), 1, 0);
	assert_double_equal(eval_vars("cycles\\-t / 2 if #SMT_on else cycles\\-t", &v), 5, 0);
}

static void test_syntax_errors(void **state)
{
	(void)state;
	/* unbalanced parentheses */
	parse_fails("min(a, b", "column 9 in 'min(a, b'",
		    "expected ')' to close the '(' at column 4");
	parse_fails("(a + b", "column 7", "expected ')' to close the '(' at column 1");
	parse_fails("((a + b)", "column 9", "to close the '(' at column 1");
	parse_fails("a + b)", "column 6", "')' has no matching '('");
	/* trailing junk */
	parse_fails("a b", "column 3", "unexpected 'b' after a complete expression");
	parse_fails("(a) (b)", "column 5", "unexpected '(' after a complete expression");
	parse_fails("1 else 2", "column 3", "unexpected 'else'");
	/* unknown function and arity */
	parse_fails("foo(a)", "column 1", "unknown function 'foo'");
	parse_fails("1 + bar  (2)", "column 5", "unknown function 'bar'");
	parse_fails("min(a)", "column 6", "min() takes 2 arguments separated by ','");
	parse_fails("max(a, b, c)", "column 9", "max() takes 2 arguments; remove the extra ones");
	parse_fails("has_event(a, b)", "column 12", "has_event() takes 1 argument;");
	parse_fails("source_count()", "column 14", "source_count() takes one event name");
	parse_fails("source_count(a b)", "column 16", "close it with ')'");
	/* empty input */
	parse_fails("", "column 1", "the expression is empty");
	parse_fails("   ", "column 4", "the expression is empty");
	/* a value is missing */
	parse_fails("a +", "column 4", "ends where a number, name or '(' is expected");
	parse_fails("a + * b", "column 5", "expected a number, name or '(' but found '*'");
	parse_fails("()", "column 2", "but found ')'");
	parse_fails("min(,1)", "column 5", "but found ','");
	parse_fails("-not 1", "column 2", "but found 'not'");
	/* conditionals */
	parse_fails("a if b", "column 7", "expected 'else' to complete the 'if' at column 3");
	parse_fails("a if b c", "column 8", "expected 'else'");
	/* bad numbers */
	parse_fails("1e", "column 1", "malformed number '1e'");
	parse_fails("2 * 1e+", "column 5", "malformed number '1e'");
	parse_fails("0x", "column 1", "malformed number '0x'");
	parse_fails("0xfg", "column 1", "malformed number '0xfg'");
	parse_fails("1.2.3", "column 1", "malformed number '1.2.3'");
	parse_fails("a + 3x", "column 5", "malformed number '3x'");
	/* characters and names */
	parse_fails("a $ b", "column 3", "unexpected character '$'");
	parse_fails("a = b", "column 3", "compare with '=='");
	parse_fails("!a", "column 1", "negate with 'not'");
	parse_fails("a \x01 b", "column 3", "unexpected byte 0x01");
	parse_fails("a \xc3\xa9", "column 3", "unexpected byte 0xc3");
	parse_fails("abc\\", "column 4", "escapes nothing");
	parse_fails("1 + cpu@FOO", "column 8", "no closing '@'");
	parse_fails("cpu@FOO\\@", "column 4", "no closing '@'");
	parse_fails("cpu@@", "column 4", "between '@' and '@' is empty");
}

static void test_nesting_limit(void **state)
{
	(void)state;
	char text[4 * TD_EXPR_MAX_NESTING + 16];
	int n = TD_EXPR_MAX_NESTING - 1; /* the whole expression is one level */

	memset(text, '(', (size_t)n);
	strcpy(text + n, "1");
	memset(text + n + 1, ')', (size_t)n);
	text[2 * n + 1] = '\0';
	assert_value(text, 1);

	n = TD_EXPR_MAX_NESTING;
	memset(text, '(', (size_t)n);
	strcpy(text + n, "1");
	memset(text + n + 1, ')', (size_t)n);
	text[2 * n + 1] = '\0';
	parse_fails(text, "column 65", "nests deeper than 64 levels");
}

/* Each unit of "1|1&1<1+1*(" leaves five operands waiting for one nesting
 * level, so the operand stack fills before the nesting limit. */
static char *stacked(int units)
{
	static const char unit[] = "1|1&1<1+1*(";
	size_t len = (sizeof(unit) - 1 + 1) * (size_t)units + 2;
	char *text = malloc(len), *s = text;

	assert_non_null(text);
	for (int i = 0; i < units; i++)
		s += sprintf(s, "%s", unit);
	s += sprintf(s, "%s", "1");
	memset(s, ')', (size_t)units);
	s[units] = '\0';
	return text;
}

static void test_operand_stack_limit(void **state)
{
	(void)state;
	/* 50 units: 250 operands waiting + 1, within the evaluator's stack */
	char *text = stacked(50);
	assert_value(text, 1);
	free(text);

	text = stacked(60);
	parse_fails(text, "column", "holds more than 256 pending values");
	free(text);
}

/* Chains far deeper than the limit fail cleanly instead of exhausting the C stack. */
static void test_deep_chains_fail_cleanly(void **state)
{
	(void)state;
	enum { N = TD_EXPR_MAX_TEXT - 1 };
	static char text[N + 1];

	memset(text, '(', N);
	text[N] = '\0';
	parse_fails(text, "column 65", "nests deeper");

	memset(text, '-', N);
	parse_fails(text, "column 64", "nests deeper");

	for (int i = 0; i < N / 4; i++)
		memcpy(text + 4 * i, "not ", 4);
	text[4 * (N / 4)] = '\0';
	parse_fails(text, "column 253", "nests deeper");

	for (int i = 0; i < N / 12; i++)
		memcpy(text + 12 * i, "1 if 1 else ", 12);
	text[12 * (N / 12)] = '\0';
	/* unit i's branch nests at level i + 1 and its condition at i + 2, so
	 * the condition of unit 63, at byte 12 * 63 + 5, is the first too deep */
	parse_fails(text, "column 762", "nests deeper");
}

static void test_long_text_errors(void **state)
{
	(void)state;
	char text[TD_EXPR_MAX_TEXT + 2];
	char err[160] = "";

	/* the window around the column keeps the reason inside a small buffer */
	memset(text, 'a', 200);
	strcpy(text + 200, " + (");
	assert_null(td_expr_parse(text, err, sizeof(err)));
	assert_non_null(strstr(err, "column 205 in '..."));
	assert_non_null(strstr(err, "the expression ends where"));

	memset(text, '1', TD_EXPR_MAX_TEXT + 1);
	text[TD_EXPR_MAX_TEXT + 1] = '\0';
	assert_null(td_expr_parse(text, err, sizeof(err)));
	assert_non_null(strstr(err, "65536 bytes long"));

	assert_null(td_expr_parse(NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "no expression text"));

	/* a tiny buffer is truncated, not overrun */
	char tiny[8];
	memset(tiny, 'x', sizeof(tiny));
	assert_null(td_expr_parse("(", tiny, sizeof(tiny)));
	assert_int_equal(strlen(tiny), sizeof(tiny) - 1);
}

static void test_out_of_memory(void **state)
{
	(void)state;
#if CAN_FAIL_MALLOC
	char err[256];
	struct td_expr *e;
	void *(*volatile alloc)(size_t) = malloc; /* a call the compiler cannot elide */
	void *probe;

	malloc_fail_after = 0;
	probe = alloc(1);
	malloc_fail_after = -1;
	if (probe != NULL) { /* another allocator took over malloc (valgrind) */
		free(probe);
		skip();
	}
	/* a parse allocates twice: a scratch block, then the result */
	for (int n = 0; n < 2; n++) {
		malloc_fail_after = n;
		e = td_expr_parse("a + b", err, sizeof(err));
		malloc_fail_after = -1;
		assert_null(e);
		assert_non_null(strstr(err, "out of memory compiling an expression of 5 bytes"));
	}
	malloc_fail_after = 2;
	e = td_expr_parse("a + b", err, sizeof(err));
	malloc_fail_after = -1;
	assert_non_null(e);
	td_expr_free(e);
#else
	skip();
#endif
}

static int refuse_b(void *ctx, const char *name)
{
	(void)ctx;
	return strcmp(name, "B") == 0 ? -ENOENT : 0;
}

static void test_bind(void **state)
{
	(void)state;
	char err[256] = "";
	struct td_expr *e = parse_ok("A / B + C");
	static const char *const names[] = {"C", "A", "B"};
	static const char *const swapped[] = {"C", "B", "A"};
	static const double values[] = {1, 8, 2};
	struct vars v = {names, values, 3};

	/* not bound yet: NaN */
	assert_nan(td_expr_eval(e, values));
	assert_int_equal(td_expr_bind(e, refuse_b, NULL, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "'B'"));
	assert_nan(td_expr_eval(e, values));

	assert_int_equal(td_expr_bind(e, slot_in_vars, &v, err, sizeof(err)), 0);
	assert_double_equal(td_expr_eval(e, values), 8.0 / 2 + 1, 0);
	/* binding again replaces the previous binding */
	v.names = swapped;
	assert_int_equal(td_expr_bind(e, slot_in_vars, &v, err, sizeof(err)), 0);
	assert_double_equal(td_expr_eval(e, values), 2.0 / 8 + 1, 0);
	td_expr_free(e);
	td_expr_free(NULL);
}

/* ---------------------------------------------------------- reference data */

static const char *reference_dir(void)
{
	const char *dir = getenv("TOPDOWN_REFERENCE_DIR");

	return dir && *dir ? dir : "../shared/reference";
}

/*
 * Load a reference JSON file.  Some checkouts store a symbolic link as a
 * one-line file naming its target in the same directory; follow it.
 */
static json_t *load_reference(const char *path)
{
	json_error_t jerr;
	json_t *root = json_load_file(path, 0, &jerr);
	char target[512], line[256];
	FILE *f;

	if (root)
		return root;
	f = fopen(path, "r");
	if (f == NULL || fgets(line, sizeof(line), f) == NULL || strchr(line, '{') != NULL) {
		if (f)
			fclose(f);
		fail_msg("%s: %s", path, jerr.text);
	}
	fclose(f);
	line[strcspn(line, "\r\n")] = '\0';
	snprintf(target, sizeof(target), "%.*s/%s", (int)(strrchr(path, '/') - path), path, line);
	root = json_load_file(target, 0, &jerr);
	if (root == NULL)
		fail_msg("%s links to %s: %s", path, target, jerr.text);
	return root;
}

struct census {
	int parsed;
	int failed;
};

static void check_parses(struct census *c, const char *file, const char *metric, const char *text)
{
	char err[256] = "";
	struct td_expr *e = td_expr_parse(text, err, sizeof(err));

	if (e == NULL) {
		print_error("%s %s: %s\n", file, metric, err);
		c->failed++;
		return;
	}
	c->parsed++;
	td_expr_free(e);
}

/* Intel *-metrics.json and AMD pipeline/recommended.json: perf pmu-events arrays. */
static void census_perf_file(struct census *c, const char *path)
{
	static const char *const fields[] = {"MetricExpr", "MetricThreshold"};
	json_t *root = load_reference(path), *m;
	size_t i;

	assert_true(json_is_array(root));
	json_array_foreach(root, i, m)
	{
		const char *metric = json_string_value(json_object_get(m, "MetricName"));
		for (size_t f = 0; f < 2; f++) {
			const char *text = json_string_value(json_object_get(m, fields[f]));
			if (text)
				check_parses(c, path, metric, text);
		}
	}
	json_decref(root);
}

/*
 * Arm telemetry files: every formula parses, and its names are exactly
 * the events the file lists for that metric (an independent oracle for the
 * names the parser extracts).
 */
static void census_arm_file(struct census *c, const char *path)
{
	json_t *root = load_reference(path), *m;
	const char *metric;

	json_object_foreach(json_object_get(root, "metrics"), metric, m)
	{
		const char *text = json_string_value(json_object_get(m, "formula"));
		json_t *events = json_object_get(m, "events");
		char err[256] = "";
		struct td_expr *e;

		if (text == NULL)
			continue;
		e = td_expr_parse(text, err, sizeof(err));
		if (e == NULL) {
			print_error("%s %s: %s\n", path, metric, err);
			c->failed++;
			continue;
		}
		c->parsed++;
		assert_int_equal(td_expr_name_count(e), json_array_size(events));
		for (size_t i = 0; i < td_expr_name_count(e); i++) {
			size_t k, found = 0;
			json_t *ev;

			json_array_foreach(events, k, ev)
			{
				found += strcmp(json_string_value(ev), td_expr_name(e, i)) == 0;
			}
			if (found != 1)
				fail_msg("%s %s: name '%s' is not among the metric's events", path,
					 metric, td_expr_name(e, i));
		}
		td_expr_free(e);
	}
	json_decref(root);
}

static int census_glob(struct census *c, const char *pattern,
		       void (*census_file)(struct census *, const char *))
{
	char full[1024];
	glob_t g;

	snprintf(full, sizeof(full), "%s/%s", reference_dir(), pattern);
	if (glob(full, 0, NULL, &g) != 0)
		fail_msg("no reference files match %s; set TOPDOWN_REFERENCE_DIR", full);
	for (size_t i = 0; i < g.gl_pathc; i++)
		census_file(c, g.gl_pathv[i]);
	globfree(&g);
	return (int)g.gl_pathc;
}

static double seconds_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_every_reference_formula_parses(void **state)
{
	(void)state;
	struct census intel = {0}, amd = {0}, arm = {0};
	int files = 0;
	double start = seconds_now();

	files += census_glob(&intel, "intel/*/*-metrics.json", census_perf_file);
	files += census_glob(&amd, "amd/*/pipeline.json", census_perf_file);
	files += census_glob(&amd, "amd/*/recommended.json", census_perf_file);
	files += census_glob(&arm, "arm/neoverse-*.json", census_arm_file);
	printf("reference formulas parsed from %d files in %.1f ms (JSON loading included): "
	       "intel %d, amd %d, arm %d; failed %d\n",
	       files, (seconds_now() - start) * 1e3, intel.parsed, amd.parsed, arm.parsed,
	       intel.failed + amd.failed + arm.failed);
	assert_int_equal(intel.failed + amd.failed + arm.failed, 0);
	assert_true(intel.parsed > 0 && amd.parsed > 0 && arm.parsed > 0);
}

/* ------------------------------------------- real formulas, independent oracle */

/* The metric named metric: an element of a perf array or a member of Arm's "metrics". */
static json_t *find_metric(json_t *root, const char *metric)
{
	json_t *m;
	size_t i;

	if (!json_is_array(root))
		return json_object_get(json_object_get(root, "metrics"), metric);
	json_array_foreach(root, i, m)
	{
		const char *name = json_string_value(json_object_get(m, "MetricName"));
		if (name && strcmp(name, metric) == 0)
			return m;
	}
	return NULL;
}

/* The text of field in the metric named metric, from a reference file. */
static char *reference_formula(const char *file, const char *metric, const char *field)
{
	char path[1024];
	json_t *root, *text;
	char *copy;

	snprintf(path, sizeof(path), "%s/%s", reference_dir(), file);
	root = load_reference(path);
	text = json_object_get(find_metric(root, metric), field);
	if (!json_is_string(text))
		fail_msg("%s has no %s for %s", path, field, metric);
	copy = strdup(json_string_value(text));
	json_decref(root);
	return copy;
}

static double eval_reference(const char *file, const char *metric, const char *field,
			     const struct vars *v)
{
	char *text = reference_formula(file, metric, field);
	double result = eval_vars(text, v);

	free(text);
	return result;
}

static void test_zen4_formulas(void **state)
{
	(void)state;
	static const char *const names[] = {
		"de_no_dispatch_per_slot.no_ops_from_frontend", "total_dispatch_slots",
		"de_no_dispatch_per_slot.no_ops_from_frontend,cmask=0x6", "ls_not_halted_cyc"};
	double values[] = {1234, 0, 97, 1000};
	struct vars v = {names, values, 4};
	double fe = values[0], fe_cmask6 = values[2], cycles = values[3];

	values[1] = eval_reference("amd/amdzen4/pipeline.json", "total_dispatch_slots",
				   "MetricExpr", &v);
	assert_double_equal(values[1], 6 * cycles, 0);
	double slots = values[1];

	/* frontend_bound = d_ratio(fe, total_dispatch_slots) */
	assert_double_equal(
		eval_reference("amd/amdzen4/pipeline.json", "frontend_bound", "MetricExpr", &v),
		fe / slots, 1e-15);
	/* frontend_bound_bandwidth = d_ratio(fe - 6 * fe{cmask=6}, slots) */
	assert_double_equal(eval_reference("amd/amdzen4/pipeline.json", "frontend_bound_bandwidth",
					   "MetricExpr", &v),
			    (fe - 6 * fe_cmask6) / slots, 1e-15);
	/* no cycles counted: NaN, not a measured zero */
	values[1] = 0;
	assert_nan(eval_reference("amd/amdzen4/pipeline.json", "frontend_bound", "MetricExpr", &v));
}

static void test_arm_formulas(void **state)
{
	(void)state;
	static const char *const names[] = {"STALL_BACKEND", "CPU_CYCLES", "OP_RETIRED",
					    "OP_SPEC",	     "STALL_SLOT", "BR_MIS_PRED"};
	static const double values[] = {300, 1000, 1700, 2000, 3600, 12};
	struct vars v = {names, values, 6};
	double stall_backend = 300, cycles = 1000, op_retired = 1700, op_spec = 2000,
	       stall_slot = 3600, br_mis_pred = 12;

	assert_double_equal(
		eval_reference("arm/neoverse-n1.json", "backend_stalled_cycles", "formula", &v),
		stall_backend / cycles * 100, 1e-12);
	assert_double_equal(
		eval_reference("arm/neoverse-v1.json", "bad_speculation", "formula", &v),
		100 * ((1 - op_retired / op_spec) * (1 - stall_slot / (cycles * 8)) +
		       br_mis_pred * 4 / cycles),
		1e-12);
}

static void test_skylake_formulas(void **state)
{
	(void)state;
	static const char *const names[] = {
		"CPU_CLK_UNHALTED.THREAD",
		"CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE",
		"CPU_CLK_UNHALTED.REF_XCLK",
		"#core_wide",
		"CPU_CLK_UNHALTED.THREAD_ANY",
		"#SMT_on",
		"tma_info_thread_clks",
		"tma_ports_utilized_0",
		"EXE_ACTIVITY.1_PORTS_UTIL",
		"tma_retiring",
		"EXE_ACTIVITY.2_PORTS_UTIL",
		"ARITH.DIVIDER_ACTIVE",
		"CYCLE_ACTIVITY.STALLS_TOTAL",
		"CYCLE_ACTIVITY.STALLS_MEM_ANY",
		"tma_mem_bandwidth",
		"tma_l3_miss_bound",
		"tma_memory_bound",
		"tma_backend_bound",
		"tma_heavy_operations",
	};
	double val[] = {1000, 300, 100, 0,   1800, 1,	 1000, 0.05, 120, 0.4,
			90,   10,  500, 200, 0.25, 0.15, 0.3,  0.35, 0.05};
	struct vars v = {names, val, sizeof(val) / sizeof(val[0])};
	const char *skl = "intel/skylake/skl-metrics.json";

	/* tma_info_core_core_clks, core_wide < 1: THREAD / 2 * (1 + ONE_THREAD / REF_XCLK) */
	assert_double_equal(eval_reference(skl, "tma_info_core_core_clks", "MetricExpr", &v),
			    1000.0 / 2 * (1 + 300.0 / 100), 1e-9);
	val[3] = 1; /* core wide, SMT on: THREAD_ANY / 2 */
	assert_double_equal(eval_reference(skl, "tma_info_core_core_clks", "MetricExpr", &v),
			    1800.0 / 2, 1e-9);
	val[5] = 0; /* core wide, SMT off: tma_info_thread_clks */
	assert_double_equal(eval_reference(skl, "tma_info_core_core_clks", "MetricExpr", &v), 1000,
			    1e-9);

	/* tma_ports_utilization: the branch depends on DIVIDER_ACTIVE < STALLS_TOTAL - STALLS_MEM_ANY */
	double ports = (120 + 0.4 * 90) / 1000.0;
	assert_double_equal(eval_reference(skl, "tma_ports_utilization", "MetricExpr", &v),
			    (0.05 * 1000 + (120 + 0.4 * 90)) / 1000.0, 1e-12);
	val[11] = 400; /* 400 < 500 - 200 is false */
	assert_double_equal(eval_reference(skl, "tma_ports_utilization", "MetricExpr", &v), ports,
			    1e-12);

	/* thresholds: x > 0.2 & (y > 0.1 & (z > 0.2 & w > 0.2)) */
	assert_double_equal(eval_reference(skl, "tma_mem_bandwidth", "MetricThreshold", &v),
			    0.25 > 0.2 && (0.15 > 0.1 && (0.3 > 0.2 && 0.35 > 0.2)), 0);
	val[15] = 0.05;
	assert_double_equal(eval_reference(skl, "tma_mem_bandwidth", "MetricThreshold", &v), 0, 0);
	/* tma_retiring > 0.7 | tma_heavy_operations > 0.1 */
	assert_double_equal(eval_reference(skl, "tma_retiring", "MetricThreshold", &v),
			    0.4 > 0.7 || 0.05 > 0.1, 0);
	val[18] = 0.2;
	assert_double_equal(eval_reference(skl, "tma_retiring", "MetricThreshold", &v), 1, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_arithmetic_precedence),
		cmocka_unit_test(test_comparisons),
		cmocka_unit_test(test_logic),
		cmocka_unit_test(test_conditional),
		cmocka_unit_test(test_functions),
		cmocka_unit_test(test_division_by_zero_is_nan),
		cmocka_unit_test(test_nan_rules),
		cmocka_unit_test(test_canonical_names),
		cmocka_unit_test(test_names_bind_and_evaluate),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_nesting_limit),
		cmocka_unit_test(test_operand_stack_limit),
		cmocka_unit_test(test_deep_chains_fail_cleanly),
		cmocka_unit_test(test_long_text_errors),
		cmocka_unit_test(test_out_of_memory),
		cmocka_unit_test(test_bind),
		cmocka_unit_test(test_every_reference_formula_parses),
		cmocka_unit_test(test_zen4_formulas),
		cmocka_unit_test(test_arm_formulas),
		cmocka_unit_test(test_skylake_formulas),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
