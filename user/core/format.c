// SPDX-License-Identifier: BSD-3-Clause
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "format.h"
#include "utf8.h"

const char *td_format_duration(uint64_t ns, char *buf, size_t len)
{
	static const struct { double scale; const char *unit; } units[] = {
		{ 1e9, "s" }, { 1e6, "ms" }, { 1e3, "us" },
	};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		double v = ns / units[i].scale;

		if (v >= 1.0) {
			snprintf(buf, len, "%.*f%s", v >= 100 ? 0 : v >= 10 ? 1 : 2, v, units[i].unit);
			return buf;
		}
	}
	snprintf(buf, len, "%lluns", (unsigned long long)ns);
	return buf;
}

const char *td_format_time(int64_t unix_ns, char *buf, size_t len)
{
	time_t secs = unix_ns / 1000000000;
	struct tm tm;

	if (!localtime_r(&secs, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "?");
	return buf;
}

const char *td_format_count(double value, char *buf, size_t len)
{
	if (isnan(value))
		snprintf(buf, len, "n/a");
	else if (fabs(value) < 1e7)
		snprintf(buf, len, "%.0f", value);
	else
		snprintf(buf, len, "%.3g", value);
	return buf;
}

/*
 * The character at s as it may reach a terminal, in piece (not terminated):
 * its own bytes, or \xNN for each byte that must not pass. Sets *used to
 * the bytes of s it stands for; returns the length of piece.
 */
static size_t safe_piece(const unsigned char *s, char piece[8], size_t *used)
{
	size_t n = td_utf8_char_len(s);
	bool control = n == 0 || (n == 1 && (s[0] < 0x20 || s[0] == 0x7f)) ||
		       (n == 2 && s[0] == 0xc2 && s[1] < 0xa0);
	size_t len = 0;

	*used = n ? n : 1; /* a byte that starts no character is escaped alone */
	if (!control) {
		memcpy(piece, s, n);
		return n;
	}
	for (size_t i = 0; i < *used; i++) {
		static const char hex[] = "0123456789abcdef";

		piece[len++] = '\\';
		piece[len++] = 'x';
		piece[len++] = hex[s[i] >> 4];
		piece[len++] = hex[s[i] & 15];
	}
	return len;
}

const char *td_safe_text(const char *text, char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)(text ? text : "");
	size_t at = 0;

	if (!len)
		return buf;
	while (*s) {
		char piece[8];
		size_t used, n = safe_piece(s, piece, &used);

		if (at + n >= len)
			break;
		memcpy(buf + at, piece, n);
		at += n;
		s += used;
	}
	buf[at] = '\0';
	return buf;
}

int td_fputs_safe(FILE *out, const char *text, int width)
{
	const unsigned char *s = (const unsigned char *)(text ? text : "");
	int columns = 0;

	while (*s) {
		char piece[8];
		size_t used, n = safe_piece(s, piece, &used);

		if (fwrite(piece, 1, n, out) != n)
			return EOF;
		/* an escape is as many columns as characters; a UTF-8 character one */
		columns += used == n ? 1 : (int)n;
		s += used;
	}
	return fprintf(out, "%*s", width > columns ? width - columns : 0, "") < 0 ? EOF : 0;
}

void td_print_error(const char *prefix, const char *message)
{
	char safe[TD_SAFE_LEN(2048)];

	/* one write: a reader of the pipe gets the whole line at once */
	fprintf(stderr, "%s: %s\n", prefix, td_safe_text(message, safe, sizeof(safe)));
}
