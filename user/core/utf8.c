// SPDX-License-Identifier: BSD-3-Clause
#include "utf8.h"

size_t td_utf8_char_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf; /* the range of the second byte */
	size_t len;

	if (s[0] < 0x80)
		return 1;
	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	len = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++) /* a NUL fails here too: never read past it */
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

size_t td_utf8_sanitize(char *text)
{
	unsigned char *p = (unsigned char *)text;
	size_t replaced = 0;

	while (*p) {
		size_t n = td_utf8_char_len(p);

		if (n == 0) {
			*p = '?';
			replaced++;
			n = 1;
		}
		p += n;
	}
	return replaced;
}
