// SPDX-License-Identifier: BSD-3-Clause
/*
 * td-hold-counters: holds counters of CPU 0 as another monitor would, for
 * the kernel lab's checks of a partial PMU (tests/vm/init.sh): N pinned
 * system-wide events on general-purpose counters (INST_RETIRED, 0x08, on
 * the armv8 PMU) and, with "cycles", CPU_CYCLES (0x11) first, which the
 * driver puts on the dedicated cycle counter. Prints "holding" once every
 * event counts, then sleeps until killed.
 *
 * usage: td-hold-counters N [cycles]
 */
#include <dirent.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The armv8 PMU's dynamic type (armv8_pmuv3 or armv8_pmuv3_0). */
static int arm_pmu_type(void)
{
	const char *dir = "/sys/bus/event_source/devices";
	struct dirent *entry;
	DIR *devices = opendir(dir);
	int type = -1;

	while (devices && type < 0 && (entry = readdir(devices))) {
		char path[512];
		FILE *f;

		if (strncmp(entry->d_name, "armv8_pmuv3", 11))
			continue;
		snprintf(path, sizeof(path), "%s/%s/type", dir, entry->d_name);
		if ((f = fopen(path, "r"))) {
			if (fscanf(f, "%d", &type) != 1)
				type = -1;
			fclose(f);
		}
	}
	if (devices)
		closedir(devices);
	return type;
}

static int hold(int type, unsigned long config)
{
	struct perf_event_attr attr = { .size = sizeof(attr), .type = type, .config = config, .pinned = 1 };
	int fd = syscall(SYS_perf_event_open, &attr, -1, 0, -1, 0);

	if (fd < 0)
		perror("td-hold-counters: perf_event_open");
	return fd;
}

int main(int argc, char **argv)
{
	int type = arm_pmu_type(), n = argc > 1 ? atoi(argv[1]) : -1;
	int cycles = argc > 2 && !strcmp(argv[2], "cycles");

	if (n < 0 || argc > 3 || (argc == 3 && !cycles)) {
		fprintf(stderr, "usage: td-hold-counters N [cycles]\n");
		return 2;
	}
	if (type < 0) {
		fprintf(stderr, "td-hold-counters: no armv8_pmuv3 PMU in sysfs\n");
		return 1;
	}
	if (cycles && hold(type, 0x11) < 0)
		return 1;
	for (int i = 0; i < n; i++)
		if (hold(type, 0x08) < 0)
			return 1;
	printf("holding\n");
	fflush(stdout);
	for (;;)
		pause();
}
