/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Parsers for command-line values. Each returns 0 or -EINVAL and, on
 * error, writes one sentence into err naming the bad value and a fix.
 */
#ifndef TOPDOWN_PARSE_H
#define TOPDOWN_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Every duration a user gives, on the command line or as an MCP argument,
 * lies between these: 1ms and 100 years (of 365 days). The ceiling keeps
 * any sum or difference with a wall-clock time inside int64 nanoseconds
 * (which end in 2262), so that "older than" or "the last" never wraps.
 */
#define TD_DURATION_MIN_NS 1000000ULL
#define TD_DURATION_MAX_NS (36500ULL * 86400 * 1000000000ULL)

/*
 * A duration with a required unit: "30s", "500ms", "1.5m", "2h", "7d".
 * Units are ms, s, m, h and d; decimals are exact down to the nanosecond
 * (finer digits are dropped). No sign, spaces or exponent; from
 * TD_DURATION_MIN_NS to TD_DURATION_MAX_NS. what names the option, e.g.
 * "--every", or the MCP argument.
 */
int td_parse_duration_ns(const char *text, const char *what, uint64_t *out_ns, char *err, size_t errlen);

/* when_ns - ago_ns, or INT64_MIN (before any run) when that would not fit:
 * times in the past never wrap into the future. */
int64_t td_time_minus_ns(int64_t when_ns, uint64_t ago_ns);

/* td_time_minus_ns of the wall clock now: the start of "the last ago_ns". */
int64_t td_now_minus_ns(uint64_t ago_ns);

/*
 * "123" or "123,456": decimal pids in 1..4194304 (the kernel's limit),
 * no duplicates, at most max. *count is 0 on error.
 */
int td_parse_pid_list(const char *text, pid_t *out, size_t max, size_t *count,
		      char *err, size_t errlen);

/* A decimal integer in [min, max]; what names the option, e.g. "--level". */
int td_parse_int_range(const char *text, const char *what, long min, long max,
		       long *out, char *err, size_t errlen);

/* A number in [min, max] for option what ("--min-pct"): decimal, with an
 * optional fraction; no sign, exponent or spaces. */
int td_parse_number(const char *text, const char *what, double min, double max, double *out,
		    char *err, size_t errlen);

/* s without its leading and trailing blanks (spaces, tabs), cut in place. */
char *td_trim_blanks(char *s);

/* True when s is one or more decimal digits and nothing else. */
bool td_all_digits(const char *s);

#endif
