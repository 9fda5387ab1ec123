// SPDX-License-Identifier: BSD-3-Clause
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "labels.h"

/*
 * Out-of-memory injection: this strdup replaces libc's for the whole test
 * binary and fails once its countdown reaches zero (-1 never fails).
 */
static int strdup_fail_after = -1;

char *strdup(const char *s)
{
	if (strdup_fail_after == 0)
		return NULL;
	if (strdup_fail_after > 0)
		strdup_fail_after--;

	size_t len = strlen(s) + 1;
	char *copy = malloc(len);

	return copy ? memcpy(copy, s, len) : NULL;
}

static void test_set_get_and_order(void **state)
{
	(void)state;
	struct td_labels labels;

	td_labels_init(&labels);
	assert_null(td_labels_get(&labels, "host"));
	assert_int_equal(td_labels_set(&labels, "host", "a"), 0);
	assert_int_equal(td_labels_set(&labels, "arch", "x86_64"), 0);
	assert_int_equal(td_labels_set(&labels, "host", "b"), 0);
	assert_int_equal(labels.count, 2);
	assert_string_equal(labels.items[0].key, "host");
	assert_string_equal(labels.items[0].value, "b");
	assert_string_equal(labels.items[1].key, "arch");
	assert_string_equal(td_labels_get(&labels, "arch"), "x86_64");
	assert_null(td_labels_get(&labels, "ARCH"));
	td_labels_free(&labels);
	assert_int_equal(labels.count, 0);
	assert_null(labels.items);
}

static void test_many_labels_grow(void **state)
{
	(void)state;
	struct td_labels labels;
	char key[16], value[16];

	td_labels_init(&labels);
	for (int i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		snprintf(value, sizeof(value), "v%d", i);
		assert_int_equal(td_labels_set(&labels, key, value), 0);
	}
	assert_int_equal(labels.count, 100);
	assert_string_equal(td_labels_get(&labels, "k0"), "v0");
	assert_string_equal(td_labels_get(&labels, "k99"), "v99");
	td_labels_free(&labels);
}

static void test_copy_overrides_in_dst(void **state)
{
	(void)state;
	struct td_labels auto_labels, user_labels;

	td_labels_init(&auto_labels);
	td_labels_init(&user_labels);
	assert_int_equal(td_labels_set(&auto_labels, "node", "box1"), 0);
	assert_int_equal(td_labels_set(&auto_labels, "arch", "x86_64"), 0);
	assert_int_equal(td_labels_set(&user_labels, "node", "renamed"), 0);
	assert_int_equal(td_labels_copy(&auto_labels, &user_labels), 0);
	assert_int_equal(auto_labels.count, 2);
	assert_string_equal(td_labels_get(&auto_labels, "node"), "renamed");
	/* The copy is deep: freeing the source leaves dst intact. */
	td_labels_free(&user_labels);
	assert_string_equal(td_labels_get(&auto_labels, "node"), "renamed");
	td_labels_free(&auto_labels);
}

static void test_parse_arg_ok(void **state)
{
	(void)state;
	struct td_labels labels;
	char err[256] = "";

	td_labels_init(&labels);
	assert_int_equal(td_labels_parse_arg(&labels, "git_branch=unstable", err, sizeof(err)), 0);
	assert_int_equal(td_labels_parse_arg(&labels, "_x.y-z9=a=b c", err, sizeof(err)), 0);
	assert_int_equal(td_labels_parse_arg(&labels, "git_branch=main", err, sizeof(err)), 0);
	assert_int_equal(td_labels_parse_arg(&labels, "city=Zürich", err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(labels.count, 3);
	assert_string_equal(td_labels_get(&labels, "git_branch"), "main");
	assert_string_equal(td_labels_get(&labels, "_x.y-z9"), "a=b c");
	assert_string_equal(td_labels_get(&labels, "city"), "Zürich");
	td_labels_free(&labels);
}

/* Expects arg to be rejected with a message containing want. */
static void expect_bad(const char *arg, const char *want)
{
	struct td_labels labels;
	char err[256] = "";

	td_labels_init(&labels);
	assert_int_equal(td_labels_parse_arg(&labels, arg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, want));
	assert_non_null(strstr(err, "e.g. --label git_branch=unstable"));
	assert_null(strchr(err, '\n'));
	assert_int_equal(labels.count, 0);
	td_labels_free(&labels);
}

static void test_parse_arg_syntax_errors(void **state)
{
	(void)state;
	expect_bad("foo", "bad label 'foo': use key=value");
	expect_bad("", "bad label '': use key=value");
	expect_bad(NULL, "bad label '': use key=value");
	expect_bad("=x", "key before '=' is empty");
	expect_bad("k=", "value after '=' is empty");
	expect_bad("9k=v", "starts with a letter or '_'");
	expect_bad("-k=v", "starts with a letter or '_'");
	expect_bad("a b=v", "only letters, digits");
	expect_bad("a/b=v", "only letters, digits");
	expect_bad("\xc3\xa9=v", "starts with a letter or '_'");
	expect_bad("k=a\tb", "control character");
	expect_bad("k=a\nb", "control character");
	expect_bad("k=\x7f", "control character");
	/* Text both stores accept: UTF-8 only, checked before any window is collected */
	expect_bad("k=\xff", "not UTF-8");
	expect_bad("k=ab\xc3", "not UTF-8");          /* a character cut short */
	expect_bad("k=\xc0\xaf", "not UTF-8");       /* an overlong '/' */
	expect_bad("k=\xed\xa0\x80", "not UTF-8");  /* a surrogate */
	expect_bad("k=a\xc2\x85" "b", "control character"); /* U+0085, NEXT LINE (C1) */
	expect_bad("k=\xc2\x9b", "control character");   /* U+009B, the C1 CSI */
}

/* The message quotes a value that is not UTF-8 as valid UTF-8 text, '?' for each bad byte. */
static void test_parse_arg_message_is_utf8(void **state)
{
	(void)state;
	struct td_labels labels;
	char err[256];

	td_labels_init(&labels);
	assert_int_equal(td_labels_parse_arg(&labels, "k=a\xff" "b", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad label 'k=a?b': the value is not UTF-8 text"));
	/* a valid character at the cut is kept whole or replaced, never cut */
	assert_int_equal(td_labels_parse_arg(&labels, "k=\xff\xc2\xa0\xc2\xa0", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'k=?\xc2\xa0\xc2\xa0'"));
	assert_int_equal(labels.count, 0);
	/* U+00A0 and beyond are text, not control characters */
	assert_int_equal(td_labels_parse_arg(&labels, "k=a\xc2\xa0" "b", err, sizeof(err)), 0);
	td_labels_free(&labels);
}

static void test_parse_arg_length_limits(void **state)
{
	(void)state;
	char arg[TD_LABEL_KEY_MAX + TD_LABEL_VALUE_MAX + 8];
	char err[256];
	struct td_labels labels;

	td_labels_init(&labels);
	/* Longest key and longest value are accepted. */
	memset(arg, 'k', TD_LABEL_KEY_MAX);
	arg[TD_LABEL_KEY_MAX] = '=';
	memset(arg + TD_LABEL_KEY_MAX + 1, 'v', TD_LABEL_VALUE_MAX);
	arg[TD_LABEL_KEY_MAX + 1 + TD_LABEL_VALUE_MAX] = '\0';
	assert_int_equal(td_labels_parse_arg(&labels, arg, err, sizeof(err)), 0);
	assert_int_equal(strlen(labels.items[0].value), TD_LABEL_VALUE_MAX);
	td_labels_free(&labels);

	/* One byte more in the value. */
	arg[TD_LABEL_KEY_MAX + 1 + TD_LABEL_VALUE_MAX] = 'v';
	arg[TD_LABEL_KEY_MAX + 2 + TD_LABEL_VALUE_MAX] = '\0';
	expect_bad(arg, "value is longer than 256 bytes");
	/* The message quotes a short excerpt, not the whole argument. */
	assert_true(td_labels_parse_arg(&labels, arg, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "kkkk...'"));

	/* One byte more in the key. */
	memset(arg, 'k', TD_LABEL_KEY_MAX + 1);
	strcpy(arg + TD_LABEL_KEY_MAX + 1, "=v");
	expect_bad(arg, "key is longer than 64 bytes");
}

static void test_parse_arg_message_is_printable(void **state)
{
	(void)state;
	struct td_labels labels;
	char err[256];

	td_labels_init(&labels);
	assert_int_equal(td_labels_parse_arg(&labels, "a b=x\ny", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'a b=x?y'"));
	/* A tiny buffer is truncated, never overrun. */
	char tiny[8];

	assert_int_equal(td_labels_parse_arg(&labels, "nope", tiny, sizeof(tiny)), -EINVAL);
	assert_string_equal(tiny, "bad lab");
	td_labels_free(&labels);
}

static void test_out_of_memory(void **state)
{
	(void)state;
	struct td_labels labels;
	char err[256];

	td_labels_init(&labels);
	assert_int_equal(td_labels_set(&labels, "a", "1"), 0);

	strdup_fail_after = 0; /* the value copy fails */
	assert_int_equal(td_labels_set(&labels, "b", "2"), -ENOMEM);
	assert_int_equal(td_labels_set(&labels, "a", "3"), -ENOMEM);
	strdup_fail_after = 1; /* the key copy fails */
	assert_int_equal(td_labels_set(&labels, "b", "2"), -ENOMEM);
	strdup_fail_after = 0;
	assert_int_equal(td_labels_parse_arg(&labels, "b=2", err, sizeof(err)), -ENOMEM);
	assert_non_null(strstr(err, "out of memory"));

	struct td_labels copy;

	td_labels_init(&copy);
	strdup_fail_after = 0;
	assert_int_equal(td_labels_copy(&copy, &labels), -ENOMEM);
	strdup_fail_after = -1;

	/* Nothing half-added, the old value intact. */
	assert_int_equal(labels.count, 1);
	assert_string_equal(td_labels_get(&labels, "a"), "1");
	td_labels_free(&copy);
	td_labels_free(&labels);
}

static void test_parse_list_ok(void **state)
{
	(void)state;
	struct td_labels labels;
	char err[512] = "";

	td_labels_init(&labels);
	assert_int_equal(td_labels_set(&labels, "team", "old"), 0);
	assert_int_equal(td_labels_parse_list(&labels, " team=db , tier=prod,url=a=b", "TOPDOWN_LABELS",
					      err, sizeof(err)), 0);
	assert_int_equal(labels.count, 3);
	assert_string_equal(td_labels_get(&labels, "team"), "db"); /* the list replaces a key */
	assert_string_equal(td_labels_get(&labels, "tier"), "prod");
	assert_string_equal(td_labels_get(&labels, "url"), "a=b"); /* the first '=' splits */
	assert_int_equal(td_labels_parse_list(&labels, NULL, "TOPDOWN_LABELS", err, sizeof(err)), 0);
	assert_int_equal(td_labels_parse_list(&labels, "", "TOPDOWN_LABELS", err, sizeof(err)), 0);
	assert_int_equal(td_labels_parse_list(&labels, "  ", "TOPDOWN_LABELS", err, sizeof(err)), 0);
	assert_int_equal(labels.count, 3);
	assert_string_equal(err, "");
	td_labels_free(&labels);
}

/* A bad item: -EINVAL, one line naming the variable and the item, nothing of the list kept. */
static void expect_bad_list(const char *list, const char *shown)
{
	struct td_labels labels;
	char err[512] = "";

	td_labels_init(&labels);
	assert_int_equal(td_labels_parse_list(&labels, list, "TOPDOWN_LABELS", err, sizeof(err)), -EINVAL);
	print_message("  %s\n", err);
	assert_non_null(strstr(err, "TOPDOWN_LABELS: "));
	assert_non_null(strstr(err, shown));
	assert_non_null(strstr(err, "key=value,key2=value2"));
	assert_null(strchr(err, '\n'));
	assert_int_equal(labels.count, 0);
	td_labels_free(&labels);
}

static void test_parse_list_errors(void **state)
{
	(void)state;
	expect_bad_list("team=db,tier", "bad label 'tier'");
	expect_bad_list("team=db,=prod", "bad label '=prod'");
	expect_bad_list("team=db,9x=1", "bad label '9x=1'");
	expect_bad_list("team=", "bad label 'team='");
	expect_bad_list("team=db,,tier=prod", "an empty label");
	expect_bad_list("team=db,", "an empty label");
	expect_bad_list(",team=db", "an empty label");
	expect_bad_list("team=d\tb", "bad label 'team=d?b'"); /* control characters shown as '?' */
	expect_bad_list("team=db,tier=\xff", "bad label 'tier=?'"); /* TOPDOWN_LABELS is checked as --label is */
}

static void test_parse_list_out_of_memory(void **state)
{
	(void)state;
	struct td_labels labels;
	char err[512] = "";

	td_labels_init(&labels);
	strdup_fail_after = 0; /* storing the first item fails */
	assert_int_equal(td_labels_parse_list(&labels, "a=1,b=2", "TOPDOWN_LABELS", err, sizeof(err)), -ENOMEM);
	assert_non_null(strstr(err, "out of memory"));
	strdup_fail_after = 4; /* both items parse (two copies each); copying them over fails */
	err[0] = '\0';
	assert_int_equal(td_labels_parse_list(&labels, "a=1,b=2", "TOPDOWN_LABELS", err, sizeof(err)), -ENOMEM);
	assert_non_null(strstr(err, "out of memory reading TOPDOWN_LABELS"));
	strdup_fail_after = -1;
	td_labels_free(&labels);
}

static void test_key_check(void **state)
{
	char err[256], key[TD_LABEL_KEY_MAX + 2];

	(void)state;
	assert_int_equal(td_label_key_check("git_branch", err, sizeof(err)), 0);
	assert_int_equal(td_label_key_check("_a.b-c9", err, sizeof(err)), 0);
	assert_int_equal(td_label_key_check("9lives", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad label key '9lives': a key starts with a letter or '_'"));
	assert_int_equal(td_label_key_check("a=b", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "only letters, digits"));
	assert_int_equal(td_label_key_check("", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "it is empty"));
	memset(key, 'k', TD_LABEL_KEY_MAX);
	key[TD_LABEL_KEY_MAX] = '\0';
	assert_int_equal(td_label_key_check(key, err, sizeof(err)), 0);
	strcat(key, "k");
	assert_int_equal(td_label_key_check(key, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "longer than 64 bytes"));
	assert_int_equal(td_label_key_check("a\nb", err, sizeof(err)), -EINVAL);
	assert_null(strchr(err, '\n')); /* one line */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_get_and_order),
		cmocka_unit_test(test_many_labels_grow),
		cmocka_unit_test(test_copy_overrides_in_dst),
		cmocka_unit_test(test_parse_arg_ok),
		cmocka_unit_test(test_parse_arg_syntax_errors),
		cmocka_unit_test(test_parse_arg_length_limits),
		cmocka_unit_test(test_parse_arg_message_is_printable),
		cmocka_unit_test(test_parse_arg_message_is_utf8),
		cmocka_unit_test(test_out_of_memory),
		cmocka_unit_test(test_parse_list_ok),
		cmocka_unit_test(test_parse_list_errors),
		cmocka_unit_test(test_parse_list_out_of_memory),
		cmocka_unit_test(test_key_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
