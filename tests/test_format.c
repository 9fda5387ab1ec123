// SPDX-License-Identifier: BSD-3-Clause
/* Terminal-safe text: what is escaped, what is kept, and that no control
 * byte survives any input (random bytes checked against a plain oracle). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "format.h"

static void expect_safe(const char *in, const char *want)
{
	char buf[256], *mem = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);

	assert_string_equal(td_safe_text(in, buf, sizeof(buf)), want);
	assert_non_null(f);
	assert_int_equal(td_fputs_safe(f, in, 0), 0);
	fclose(f);
	assert_string_equal(mem, want);
	free(mem);
}

static void test_controls_are_escaped(void **state)
{
	(void)state;
	expect_safe("\x1b[31m\x07", "\\x1b[31m\\x07");           /* a thread renamed with prctl */
	expect_safe("\x1b]0;pwn\x07", "\\x1b]0;pwn\\x07");       /* a window title */
	expect_safe("a\tb\nc\rd", "a\\x09b\\x0ac\\x0dd");
	expect_safe("\x7f", "\\x7f");                              /* DEL */
	expect_safe("\x01\x1f", "\\x01\\x1f");
	expect_safe("\xc2\x9b" "2J", "\\xc2\\x9b2J");              /* U+009B, the 8-bit CSI */
	expect_safe("\xc2\x80", "\\xc2\\x80");                     /* U+0080, the first C1 */
}

static void test_invalid_utf8_is_escaped_bytewise(void **state)
{
	(void)state;
	expect_safe("io_thd_\xc3", "io_thd_\\xc3");                /* a comm cut mid-character */
	expect_safe("\xff\xfe", "\\xff\\xfe");
	expect_safe("\xc0\xaf", "\\xc0\\xaf");                     /* overlong '/' */
	expect_safe("\xed\xa0\x80", "\\xed\\xa0\\x80");            /* a surrogate */
}

static void test_text_is_kept(void **state)
{
	(void)state;
	expect_safe("redis-server", "redis-server");
	expect_safe("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	expect_safe("\xc2\xa0", "\xc2\xa0");                       /* U+00A0, past the C1 range */
	expect_safe("C:\\path\\x1b", "C:\\path\\x1b");             /* backslashes as they are */
	expect_safe("std::vector<int>::at(unsigned long)", "std::vector<int>::at(unsigned long)");
	expect_safe("", "");
	expect_safe(NULL, "");
}

static void test_buffer_is_cut_at_a_boundary(void **state)
{
	char buf[8];

	(void)state;
	/* "ab" then an escape of 4 that would end past the 7 bytes left for text */
	assert_string_equal(td_safe_text("ab\x1b\x1b", buf, sizeof(buf)), "ab\\x1b");
	/* a 3-byte character is never split */
	assert_string_equal(td_safe_text("abcde\xe2\x82\xac", buf, sizeof(buf)), "abcde");
	assert_string_equal(td_safe_text("abcdefghij", buf, sizeof(buf)), "abcdefg");
	assert_string_equal(td_safe_text("x", buf, 1), "");
}

static void test_padding_counts_characters(void **state)
{
	char *mem = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);

	(void)state;
	assert_int_equal(td_fputs_safe(f, "caf\xc3\xa9", 6), 0);   /* 4 characters, 2 spaces */
	fputc('|', f);
	assert_int_equal(td_fputs_safe(f, "\x1b", 6), 0);          /* \x1b is 4 columns */
	fputc('|', f);
	assert_int_equal(td_fputs_safe(f, "longer than", 3), 0);   /* never cut */
	fclose(f);
	assert_string_equal(mem, "caf\xc3\xa9  |\\x1b  |longer than");
	free(mem);
}

static void test_write_failure_is_reported(void **state)
{
	FILE *f = fopen("/dev/full", "w");

	(void)state;
	if (!f)
		skip();
	setvbuf(f, NULL, _IONBF, 0);
	assert_int_equal(td_fputs_safe(f, "lost", 0), EOF);
	fclose(f);
}

/* Random bytes: the result has no C0, DEL or C1 control, is valid UTF-8,
 * and decodes back to the input (each \xNN the byte it names). */
static void test_random_bytes_come_out_safe(void **state)
{
	(void)state;
	srand(7);
	for (int round = 0; round < 20000; round++) {
		unsigned char in[24];
		char out[TD_SAFE_LEN(sizeof(in))], back[sizeof(in) + 1];
		size_t n = (size_t)(rand() % (int)sizeof(in)), b = 0;

		for (size_t i = 0; i < n; i++)
			in[i] = (unsigned char)(1 + rand() % 255);
		in[n] = '\0';
		td_safe_text((const char *)in, out, sizeof(out));
		for (const unsigned char *p = (const unsigned char *)out; *p; p++) {
			assert_true(*p >= 0x20 && *p != 0x7f);
			assert_false(p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0);
		}
		for (const char *p = out; *p;) {
			unsigned v;

			/* an escape is \x and two hex digits; a backslash of the input stands alone */
			if (p[0] == '\\' && p[1] == 'x' && sscanf(p + 2, "%2x", &v) == 1 && p[2] && p[3] &&
			    strchr("0123456789abcdef", p[2]) && strchr("0123456789abcdef", p[3]) &&
			    (v < 0x20 || v >= 0x7f)) {
				back[b++] = (char)v;
				p += 4;
			} else {
				back[b++] = *p++;
			}
		}
		back[b] = '\0';
		assert_int_equal(b, n);
		assert_memory_equal(back, in, n);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_controls_are_escaped),
		cmocka_unit_test(test_invalid_utf8_is_escaped_bytewise),
		cmocka_unit_test(test_text_is_kept),
		cmocka_unit_test(test_buffer_is_cut_at_a_boundary),
		cmocka_unit_test(test_padding_counts_characters),
		cmocka_unit_test(test_write_failure_is_reported),
		cmocka_unit_test(test_random_bytes_come_out_safe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
