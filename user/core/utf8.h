/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UTF-8 checks for text that comes from the kernel or from files: thread
 * names are 15 bytes cut anywhere, possibly mid-character, and both
 * PostgreSQL and JSON accept only valid UTF-8.
 */
#ifndef TOPDOWN_UTF8_H
#define TOPDOWN_UTF8_H

#include <stddef.h>

/* Bytes of the UTF-8 character at s (1 to 4), or 0 when s does not start
 * one (stray continuation bytes, overlong forms, surrogates, code points
 * past U+10FFFF, or a character cut by the end of the string). */
size_t td_utf8_char_len(const unsigned char *s);

/* Replaces in place each byte that is not part of a valid character with
 * '?'; returns how many were replaced. */
size_t td_utf8_sanitize(char *text);

#endif
