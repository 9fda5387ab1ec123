// SPDX-License-Identifier: BSD-3-Clause
/*
 * bench_probe [ROUNDS]: how long td_pmu_probe takes, the cost collect,
 * the agent and doctor add at start to find the counters a PMU gives.
 * A probe of a PMU with G general-purpose and F fixed counters opens
 * groups of 1 to G+1 events and F groups of G+1, each opened, enabled,
 * read and closed. This host may have no hardware PMU, so the groups are
 * of cpu-clock (a software event the kernel always schedules: every
 * size is tried, the most syscalls a probe makes), for G = 8 and F = 2,
 * Intel's largest case. Prints the median and the spread of ROUNDS
 * probes (default 101), in milliseconds.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pmu.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 101;
	struct td_event gp = { .name = "cpu-clock", .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK };
	struct td_event fixed[2] = { gp, gp };
	double *ms = calloc(rounds > 0 ? rounds : 1, sizeof(*ms));
	struct td_pmu_probe probe;
	char err[256];

	if (rounds < 1 || !ms) {
		fprintf(stderr, "usage: bench_probe [ROUNDS >= 1]\n");
		return 2;
	}
	for (int r = 0; r < rounds; r++) {
		struct timespec a, b;

		clock_gettime(CLOCK_MONOTONIC, &a);
		if (td_pmu_probe(&gp, 8, fixed, 2, 0, &probe, err, sizeof(err))) {
			fprintf(stderr, "bench_probe: %s\n", err);
			return 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		ms[r] = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
	}
	qsort(ms, rounds, sizeof(*ms), cmp);
	printf("| probe (G=8, F=2, cpu-clock) | rounds | median ms | min ms | max ms | gp_free | gp_more |\n");
	printf("| --- | ---: | ---: | ---: | ---: | ---: | --- |\n");
	printf("| td_pmu_probe | %d | %.3f | %.3f | %.3f | %u | %s |\n", rounds, ms[rounds / 2], ms[0],
	       ms[rounds - 1], probe.gp_free, probe.gp_more ? "yes" : "no");
	free(ms);
	return 0;
}
