// SPDX-License-Identifier: BSD-3-Clause
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "pmu.h"

struct td_pmu_counters {
	size_t nr_fds;
	int *fds; /* -1 for offline CPUs */
};

static int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void counting_attr(const struct td_event *event, struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = event->type;
	attr->config = event->config;
	attr->config1 = event->config1;
	attr->config2 = event->config2;
	attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
}

/* Turns a perf_event_open failure into the sentence a user can act on. */
static void describe_open_error(const struct td_event *event, int cpu, int error,
				char *err, size_t errlen)
{
	const char *fix;

	switch (error) {
	case ENOENT:
	case EOPNOTSUPP:
		fix = event->type == PERF_TYPE_SOFTWARE ?
			"this kernel does not provide it" :
			"this host has no such hardware counter (a VM without a virtual PMU has none); "
			"software events such as task-clock still work";
		break;
	case EACCES:
	case EPERM:
		fix = "run as root, or grant CAP_PERFMON, or lower kernel.perf_event_paranoid "
		      "(sysctl -w kernel.perf_event_paranoid=-1)";
		break;
	case EMFILE:
		fix = "raise the open-file limit (ulimit -n)";
		break;
	case EINVAL:
		fix = "the encoding is not valid for this CPU; check the name with `perf list`";
		break;
	default:
		fix = "check the event with `perf stat -e` on this host";
		break;
	}
	snprintf(err, errlen, "cannot open event '%s' on CPU %d: %s; %s",
		 event->name, cpu, strerror(error), fix);
}

void td_pmu_close(struct td_pmu_counters *counters)
{
	if (!counters)
		return;
	for (size_t i = 0; i < counters->nr_fds; i++)
		if (counters->fds[i] >= 0)
			close(counters->fds[i]);
	free(counters->fds);
	free(counters);
}

static int open_on_cpu(const struct td_event *event, int cpu, int *fd, char *err, size_t errlen)
{
	struct perf_event_attr attr;

	counting_attr(event, &attr);
	*fd = perf_event_open(&attr, -1, cpu);
	if (*fd >= 0 || errno == ENODEV) /* ENODEV: the CPU is offline */
		return 0;
	describe_open_error(event, cpu, errno, err, errlen);
	return -errno;
}

int td_pmu_open(const struct td_event *events, size_t count, int map_fd,
		int slots_per_cpu, struct td_pmu_counters **out,
		char *err, size_t errlen)
{
	int nr_cpus = libbpf_num_possible_cpus();
	struct td_pmu_counters *counters;

	if (nr_cpus <= 0) {
		snprintf(err, errlen, "cannot count the possible CPUs (%s); is /sys mounted?",
			 strerror(-nr_cpus));
		return nr_cpus ? nr_cpus : -EINVAL;
	}
	counters = calloc(1, sizeof(*counters));
	if (counters)
		counters->fds = calloc(nr_cpus * count + 1, sizeof(int)); /* +1: count may be 0 */
	if (!counters || !counters->fds) {
		td_pmu_close(counters);
		snprintf(err, errlen, "out of memory opening counters");
		return -ENOMEM;
	}
	for (int cpu = 0; cpu < nr_cpus; cpu++) {
		for (size_t slot = 0; slot < count; slot++) {
			int *fd = &counters->fds[counters->nr_fds++];
			__u32 key = cpu * slots_per_cpu + slot;
			int ret = open_on_cpu(&events[slot], cpu, fd, err, errlen);

			if (!ret && *fd >= 0 && bpf_map_update_elem(map_fd, &key, fd, BPF_ANY)) {
				ret = -errno;
				snprintf(err, errlen, "cannot hand event '%s' to the BPF program: %s",
					 events[slot].name, strerror(errno));
			}
			if (ret) {
				td_pmu_close(counters);
				return ret;
			}
		}
	}
	*out = counters;
	return 0;
}

bool td_pmu_hardware_available(char *why, size_t whylen)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.disabled = 1,
	};
	int fd = perf_event_open(&attr, -1, 0);

	if (fd >= 0) {
		close(fd);
		return true;
	}
	snprintf(why, whylen, "no hardware PMU on this host (opening the cycles counter failed: %s%s)",
		 strerror(errno),
		 errno == ENOENT || errno == EOPNOTSUPP ? "; a VM needs a virtual PMU" : "");
	return false;
}
