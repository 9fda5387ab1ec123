// SPDX-License-Identifier: BSD-3-Clause
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "format.h"

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
