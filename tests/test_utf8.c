// SPDX-License-Identifier: BSD-3-Clause
/* UTF-8 checks: the cases the standard names, and jansson's own validator
 * as an independent oracle on random bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "utf8.h"

static void expect_sanitized(const char *in, const char *want, size_t want_replaced)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%s", in);
	assert_int_equal(td_utf8_sanitize(buf), want_replaced);
	assert_string_equal(buf, want);
}

static void test_valid_text_is_kept(void **state)
{
	(void)state;
	expect_sanitized("redis-server", "redis-server", 0);
	expect_sanitized("caf\xc3\xa9", "caf\xc3\xa9", 0);                 /* é, 2 bytes */
	expect_sanitized("\xe2\x82\xac", "\xe2\x82\xac", 0);               /* €, 3 bytes */
	expect_sanitized("\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", 0);       /* U+1F600, 4 bytes */
	expect_sanitized("\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf", 0);       /* U+10FFFF, the last */
	expect_sanitized("", "", 0);
}

static void test_invalid_bytes_become_question_marks(void **state)
{
	(void)state;
	expect_sanitized("io_thd_\xc3", "io_thd_?", 1);          /* cut after the lead byte */
	expect_sanitized("ab\xe2\x82", "ab??", 2);                /* cut inside a 3-byte character */
	expect_sanitized("\x80x", "?x", 1);                       /* a stray continuation byte */
	expect_sanitized("\xc0\xaf", "??", 2);                    /* overlong '/' */
	expect_sanitized("\xe0\x80\xaf", "???", 3);               /* overlong, 3 bytes */
	expect_sanitized("\xed\xa0\x80", "???", 3);               /* a UTF-16 surrogate */
	expect_sanitized("\xf4\x90\x80\x80", "????", 4);          /* past U+10FFFF */
	expect_sanitized("\xff\xfe", "??", 2);
	expect_sanitized("caf\xc3\xa9\xff" "a", "caf\xc3\xa9?a", 1); /* only the bad byte goes */
}

static void test_char_len(void **state)
{
	(void)state;
	assert_int_equal(td_utf8_char_len((const unsigned char *)"a"), 1);
	assert_int_equal(td_utf8_char_len((const unsigned char *)"\xc3\xa9"), 2);
	assert_int_equal(td_utf8_char_len((const unsigned char *)"\xe2\x82\xac"), 3);
	assert_int_equal(td_utf8_char_len((const unsigned char *)"\xf0\x9f\x98\x80"), 4);
	assert_int_equal(td_utf8_char_len((const unsigned char *)"\xf0\x9f\x98"), 0);
}

/* Whatever the bytes, the result is text jansson (which validates UTF-8)
 * accepts, of the same length; text it already accepted is unchanged. */
static void test_random_bytes_agree_with_jansson(void **state)
{
	(void)state;
	srand(42);
	for (int round = 0; round < 20000; round++) {
		char text[16], before[16];
		size_t len = 1 + (size_t)rand() % 15, replaced;
		json_t *original;

		for (size_t i = 0; i < len; i++)
			text[i] = (char)(1 + rand() % 255);
		text[len] = '\0';
		memcpy(before, text, sizeof(text));
		original = json_string(before);
		replaced = td_utf8_sanitize(text);
		assert_int_equal(strlen(text), len);
		if (original)
			assert_int_equal(replaced, 0);
		else
			assert_true(replaced > 0);
		json_t *clean = json_string(text);
		assert_non_null(clean);
		json_decref(clean);
		json_decref(original);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_text_is_kept),
		cmocka_unit_test(test_invalid_bytes_become_question_marks),
		cmocka_unit_test(test_char_len),
		cmocka_unit_test(test_random_bytes_agree_with_jansson),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
