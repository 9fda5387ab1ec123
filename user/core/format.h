/* SPDX-License-Identifier: BSD-3-Clause */
/* Small formatting helpers shared by the CLI renderers. */
#ifndef TOPDOWN_FORMAT_H
#define TOPDOWN_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* "1.25s", "340ms", "12.0us", "800ns": three significant figures. */
const char *td_format_duration(uint64_t ns, char *buf, size_t len);
/* "2026-11-21 09:49:03" in local time. */
const char *td_format_time(int64_t unix_ns, char *buf, size_t len);
/* Counter values: integers below 1e7, else "1.23e+09". NaN as "n/a". */
const char *td_format_count(double value, char *buf, size_t len);

/*
 * Text from outside (thread, process and function names, file names,
 * labels, paths) made safe for a terminal: a thread named "\x1b]0;x\x07"
 * must not retitle the operator's window. C0 controls, DEL, C1 controls
 * (U+0080..U+009F, which some terminals obey) and bytes that are not UTF-8
 * become \xNN, each byte as the C literal would spell it; valid UTF-8 text
 * and backslashes are kept as they are, so ordinary names read unchanged.
 * Every text renderer (tables, CSV, folded stacks, top, error lines) goes
 * through these two; JSON needs neither, jansson escapes on its own.
 */
/* Bytes that hold any n bytes escaped, with the NUL. */
#define TD_SAFE_LEN(n) (4 * (n) + 1)
/* text escaped into buf, cut before the escape or character that would not
 * fit; returns buf, for printf's arguments. NULL reads as "". */
const char *td_safe_text(const char *text, char *buf, size_t len);
/* text escaped to out, whatever its length, then spaces up to width
 * columns (characters, not bytes). 0, or EOF when a write failed. */
int td_fputs_safe(FILE *out, const char *text, int width);
/* "PREFIX: MESSAGE" and a newline on stderr in one write, the message
 * escaped (its first 2048 bytes): the one line a command fails with quotes
 * file names, process names, labels. */
void td_print_error(const char *prefix, const char *message);

#endif
