/* SPDX-License-Identifier: BSD-3-Clause */
/* Small formatting helpers shared by the CLI renderers. */
#ifndef TOPDOWN_FORMAT_H
#define TOPDOWN_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* "1.25s", "340ms", "12.0us", "800ns": three significant figures. */
const char *td_format_duration(uint64_t ns, char *buf, size_t len);
/* "2026-11-21 09:49:03" in local time. */
const char *td_format_time(int64_t unix_ns, char *buf, size_t len);
/* Counter values: integers below 1e7, else "1.23e+09". NaN as "n/a". */
const char *td_format_count(double value, char *buf, size_t len);

#endif
