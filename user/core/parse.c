// SPDX-License-Identifier: BSD-3-Clause
/*
 * Command-line value parsers. Numbers are read digit by digit rather than
 * with strtod/strtoul so that signs, spaces, hex, "inf" and exponents are
 * rejected instead of silently accepted.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parse.h"

#define NS_PER_S 1000000000ULL
#define PID_MAX_LIMIT 4194304 /* the kernel's ceiling for pid_max */
#define FRAC_DIGITS_MAX 18    /* 10^18 fits in 64 bits; finer digits are sub-ns */
#define QUOTE_MAX 64          /* how much of a bad value a message repeats */

#define DURATION_EXAMPLES "e.g. 500ms, 30s, 5m, 1h, 7d"

struct duration_unit {
	const char *suffix;
	uint64_t ns;
};

static const struct duration_unit duration_units[] = {
	{ "ms", 1000000ULL },
	{ "s", NS_PER_S },
	{ "m", 60 * NS_PER_S },
	{ "h", 3600 * NS_PER_S },
	{ "d", 86400 * NS_PER_S },
};

static const struct duration_unit *find_unit(const char *suffix)
{
	for (size_t i = 0; i < sizeof(duration_units) / sizeof(duration_units[0]); i++)
		if (strcmp(suffix, duration_units[i].suffix) == 0)
			return &duration_units[i];
	return NULL;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * Reads "digits[.digits]" at *p into whole and a fraction frac/10^frac_digits,
 * advancing *p. false when there is no number; *overflow when whole does
 * not fit in 64 bits.
 */
static bool read_decimal(const char **p, uint64_t *whole, uint64_t *frac,
			 unsigned *frac_digits, bool *overflow)
{
	const char *s = *p;

	*whole = 0;
	*frac = 0;
	*frac_digits = 0;
	*overflow = false;
	if (!is_digit(*s))
		return false;
	for (; is_digit(*s); s++)
		if (__builtin_mul_overflow(*whole, 10, whole) ||
		    __builtin_add_overflow(*whole, (uint64_t)(*s - '0'), whole))
			*overflow = true;
	if (*s == '.') {
		s++;
		if (!is_digit(*s))
			return false;
		for (; is_digit(*s); s++) {
			if (*frac_digits < FRAC_DIGITS_MAX) {
				*frac = *frac * 10 + (uint64_t)(*s - '0');
				(*frac_digits)++;
			}
		}
	}
	*p = s;
	return true;
}

int td_parse_duration_ns(const char *text, const char *what, uint64_t *out_ns, char *err, size_t errlen)
{
	const char *p = text ? text : "";
	uint64_t whole, frac;
	unsigned frac_digits;
	bool overflow;
	const struct duration_unit *unit = NULL;

	if (read_decimal(&p, &whole, &frac, &frac_digits, &overflow))
		unit = find_unit(p);
	if (!unit) {
		snprintf(err, errlen, "bad duration '%.*s' for %s: use a number and a unit, " DURATION_EXAMPLES,
			 QUOTE_MAX, text ? text : "", what);
		return -EINVAL;
	}

	uint64_t scale = 1, ns;

	for (unsigned i = 0; i < frac_digits; i++)
		scale *= 10;
	/* The fraction times the unit can exceed 64 bits before dividing. */
	uint64_t frac_ns = (uint64_t)((unsigned __int128)frac * unit->ns / scale);

	if (overflow || __builtin_mul_overflow(whole, unit->ns, &ns) ||
	    __builtin_add_overflow(ns, frac_ns, &ns) || ns > TD_DURATION_MAX_NS) {
		snprintf(err, errlen, "bad duration '%.*s' for %s: it is longer than 100 years; use at most 36500d",
			 QUOTE_MAX, text, what);
		return -EINVAL;
	}
	if (ns < TD_DURATION_MIN_NS) {
		snprintf(err, errlen, "bad duration '%.*s' for %s: it is shorter than 1ms; use at least 1ms, "
			 DURATION_EXAMPLES, QUOTE_MAX, text, what);
		return -EINVAL;
	}
	*out_ns = ns;
	return 0;
}

int64_t td_time_minus_ns(int64_t when_ns, uint64_t ago_ns)
{
	int64_t result;

	if (ago_ns > (uint64_t)INT64_MAX || __builtin_sub_overflow(when_ns, (int64_t)ago_ns, &result))
		return INT64_MIN;
	return result;
}

int64_t td_now_minus_ns(uint64_t ago_ns)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return td_time_minus_ns((int64_t)now.tv_sec * 1000000000 + now.tv_nsec, ago_ns);
}

/* Reads one pid: digits only, 1..PID_MAX_LIMIT; advances *p past them. */
static bool read_pid(const char **p, pid_t *pid)
{
	uint64_t whole, frac;
	unsigned frac_digits;
	bool overflow;
	const char *s = *p;

	if (!read_decimal(&s, &whole, &frac, &frac_digits, &overflow) || frac_digits ||
	    overflow || whole < 1 || whole > PID_MAX_LIMIT)
		return false;
	*pid = (pid_t)whole;
	*p = s;
	return true;
}

static bool pid_seen(const pid_t *pids, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

int td_parse_pid_list(const char *text, pid_t *out, size_t max, size_t *count,
		      char *err, size_t errlen)
{
	const char *p = text ? text : "";
	size_t n = 0;

	*count = 0;
	for (;;) {
		pid_t pid;

		if (!read_pid(&p, &pid) || (*p != ',' && *p != '\0')) {
			snprintf(err, errlen, "bad pid list '%.*s': use pids from 1 to %d separated by commas, e.g. 123,456",
				 QUOTE_MAX, text ? text : "", PID_MAX_LIMIT);
			return -EINVAL;
		}
		if (pid_seen(out, n, pid)) {
			snprintf(err, errlen, "bad pid list '%.*s': pid %d appears twice; name each pid once",
				 QUOTE_MAX, text, (int)pid);
			return -EINVAL;
		}
		if (n == max) {
			snprintf(err, errlen, "bad pid list '%.*s': it names more than %zu pids; name at most %zu",
				 QUOTE_MAX, text, max, max);
			return -EINVAL;
		}
		out[n++] = pid;
		if (*p == '\0')
			break;
		p++; /* the comma */
	}
	*count = n;
	return 0;
}

int td_parse_int_range(const char *text, const char *what, long min, long max,
		       long *out, char *err, size_t errlen)
{
	const char *s = text ? text : "";
	char *end;
	long value;

	/* strtol would skip leading spaces and accept '+'; we do not. */
	bool looks_numeric = is_digit(s[0]) || (s[0] == '-' && is_digit(s[1]));

	errno = 0;
	value = looks_numeric ? strtol(s, &end, 10) : 0;
	if (!looks_numeric || *end != '\0' || errno == ERANGE || value < min || value > max) {
		snprintf(err, errlen, "bad value '%.*s' for %s: use a whole number from %ld to %ld",
			 QUOTE_MAX, s, what, min, max);
		return -EINVAL;
	}
	*out = value;
	return 0;
}

int td_parse_number(const char *text, const char *what, double min, double max, double *out,
		    char *err, size_t errlen)
{
	size_t digits = strspn(text, "0123456789"), fraction = 0;

	if (text[digits] == '.')
		fraction = strspn(text + digits + 1, "0123456789");
	if (digits + fraction == 0 || text[digits + (text[digits] == '.' ? fraction + 1 : 0)] ||
	    digits > 15 || sscanf(text, "%lf", out) != 1 || *out < min || *out > max) {
		snprintf(err, errlen, "%s takes a number from %g to %g, not '%.32s'", what, min, max,
			 text);
		return -EINVAL;
	}
	return 0;
}

char *td_trim_blanks(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	return s;
}

bool td_all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}
