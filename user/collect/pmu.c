// SPDX-License-Identifier: BSD-3-Clause
#include <ctype.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "pmu.h"

/*
 * fds holds every group's events on every CPU, group by group:
 * fds[first_fd[g] + cpu * groups[g].nr_events + n] is event n of group g
 * on that CPU; -1 where the CPU is offline or outside the PMU's CPUs.
 */
struct td_pmu_counters {
	struct td_counter_plan plan;
	size_t first_fd[TD_MAX_EVENTS];
	size_t nr_fds;
	int *fds;
	int nr_cpus;
	int map_fd, slots_per_cpu;
	long active; /* -1 until the first activation */
};

static int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
}

static void counting_attr(const struct td_event *event, struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = event->type;
	attr->config = event->config;
	attr->config1 = event->config1;
	attr->config2 = event->config2;
	attr->exclude_kernel = event->user_only;
	attr->exclude_hv = event->user_only;
	attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
}

void td_pmu_group_attrs(const struct td_event *events, const struct td_counter_group *group,
			struct perf_event_attr *attrs)
{
	for (size_t n = 0; n < group->nr_events; n++) {
		counting_attr(&events[group->events[n]], &attrs[n]);
		attrs[n].disabled = 1; /* td_pmu_activate starts it */
	}
}

uint32_t td_counter_group_untimed_slots(const struct td_event *events, const struct td_counter_group *group)
{
	bool kernel_group_software = true; /* a hardware member moves the whole group to its PMU */
	uint32_t mask = 0;

	for (size_t n = 0; n < group->kernel_group && n < group->nr_events; n++)
		kernel_group_software &= events[group->events[n]].type == PERF_TYPE_SOFTWARE;
	for (size_t n = 0; n < group->nr_events; n++) {
		bool grouped = n < group->kernel_group;

		if (events[group->events[n]].type == PERF_TYPE_SOFTWARE && (!grouped || kernel_group_software))
			mask |= 1u << n;
	}
	return mask;
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
		fix = "run as root, or grant CAP_PERFMON (CAP_SYS_ADMIN where kernel.perf_event_paranoid "
		      "is above 2, as Debian and Ubuntu set it), or lower kernel.perf_event_paranoid "
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

/* Every group's events on every CPU is many fds: allow as many as the hard limit does. */
static bool raise_open_file_limit(void)
{
	struct rlimit limit;

	if (getrlimit(RLIMIT_NOFILE, &limit) || limit.rlim_cur >= limit.rlim_max)
		return false;
	limit.rlim_cur = limit.rlim_max;
	return setrlimit(RLIMIT_NOFILE, &limit) == 0;
}

static int open_event(struct perf_event_attr *attr, int cpu, int group_fd)
{
	int fd = perf_event_open(attr, -1, cpu, group_fd);

	if (fd < 0 && errno == EMFILE && raise_open_file_limit())
		fd = perf_event_open(attr, -1, cpu, group_fd);
	return fd;
}

int td_pmu_open_sampling(const struct td_event *event, uint64_t frequency_hz, uint64_t period, bool precise,
			 int cpu, char *err, size_t errlen)
{
	struct perf_event_attr attr;
	int fd;

	counting_attr(event, &attr);
	attr.read_format = 0;
	attr.freq = period == 0;
	if (attr.freq)
		attr.sample_freq = frequency_hz;
	else
		attr.sample_period = period;
	/*
	 * No sample_type: the BPF program takes the stacks itself, nothing goes
	 * to a perf buffer. Except that the kernel lets a program take stacks
	 * of a precise event only when the event asks for the callchain.
	 */
	attr.precise_ip = precise;
	if (precise)
		attr.sample_type = PERF_SAMPLE_CALLCHAIN;
	fd = open_event(&attr, cpu, -1);
	if (fd >= 0)
		return fd;
	if (errno == ENODEV) /* the CPU is offline */
		return -ENODEV;
	describe_open_error(event, cpu, errno, err, errlen);
	return -errno;
}

/*
 * Opens group g on one CPU into fds[0..nr_events). An offline CPU
 * (ENODEV) leaves them all -1.
 */
static int open_group_on_cpu(const struct td_event *events, const struct td_counter_group *group,
			     int cpu, int *fds, char *err, size_t errlen)
{
	struct perf_event_attr attrs[TD_MAX_SLOTS];

	td_pmu_group_attrs(events, group, attrs);
	for (size_t n = 0; n < group->nr_events; n++) {
		int leader = n > 0 && n < group->kernel_group ? fds[0] : -1, error;

		fds[n] = open_event(&attrs[n], cpu, leader);
		if (fds[n] >= 0)
			continue;
		error = errno;
		if (error == ENODEV && n == 0) /* the CPU is offline */
			return 0;
		describe_open_error(&events[group->events[n]], cpu, error, err, errlen);
		return -error;
	}
	return 0;
}

/* A decimal CPU number at *p; false unless it starts with a digit. */
static bool parse_cpu_number(const char **p, unsigned long *out)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return false;
	*out = strtoul(*p, &end, 10);
	*p = end;
	return true;
}

int td_cpulist_parse(const char *list, bool *cpus, int nr_cpus, char *err, size_t errlen)
{
	const char *p = list;

	memset(cpus, 0, nr_cpus * sizeof(*cpus));
	for (;;) {
		unsigned long first, last;

		if (!parse_cpu_number(&p, &first))
			goto bad;
		last = first;
		if (*p == '-' && (++p, !parse_cpu_number(&p, &last) || last < first))
			goto bad;
		for (unsigned long cpu = first; cpu <= last && cpu < (unsigned long)nr_cpus; cpu++)
			cpus[cpu] = true;
		if (*p != ',')
			break;
		p++;
	}
	if (*p == '\n')
		p++;
	if (!*p)
		return 0;
bad:
	snprintf(err, errlen, "cannot read the CPU list '%s' (expected e.g. 0-3,8); check the PMU's cpus file in sysfs",
		 list);
	return -EINVAL;
}

static int new_counters(const struct td_counter_plan *plan, int map_fd, int slots_per_cpu,
			struct td_pmu_counters **out, char *err, size_t errlen)
{
	int nr_cpus = libbpf_num_possible_cpus();
	struct td_pmu_counters *c;
	size_t total = 0;

	if (nr_cpus <= 0) {
		snprintf(err, errlen, "cannot count the possible CPUs (%s); is /sys mounted?",
			 strerror(-nr_cpus));
		return nr_cpus ? nr_cpus : -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		goto oom;
	c->plan = *plan;
	c->nr_cpus = nr_cpus;
	c->map_fd = map_fd;
	c->slots_per_cpu = slots_per_cpu;
	c->active = -1;
	for (size_t g = 0; g < plan->nr_groups; g++) {
		c->first_fd[g] = total;
		total += (size_t)nr_cpus * plan->groups[g].nr_events;
	}
	c->fds = malloc((total + 1) * sizeof(int));
	if (!c->fds)
		goto oom;
	for (size_t i = 0; i < total; i++)
		c->fds[i] = -1;
	c->nr_fds = total;
	*out = c;
	return 0;
oom:
	td_pmu_close(c);
	snprintf(err, errlen, "out of memory opening counters");
	return -ENOMEM;
}

static int *group_fds(struct td_pmu_counters *c, size_t g, int cpu)
{
	return &c->fds[c->first_fd[g] + (size_t)cpu * c->plan.groups[g].nr_events];
}

int td_pmu_open_plan(const struct td_event *events, const struct td_counter_plan *plan,
		     const char *cpus, int map_fd, int slots_per_cpu, struct td_pmu_counters **out,
		     char *err, size_t errlen)
{
	struct td_pmu_counters *c;
	bool *covered = NULL;
	int ret = new_counters(plan, map_fd, slots_per_cpu, &c, err, errlen);

	if (ret)
		return ret;
	if (cpus && cpus[0]) {
		covered = calloc(c->nr_cpus, sizeof(*covered));
		ret = covered ? td_cpulist_parse(cpus, covered, c->nr_cpus, err, errlen) : -ENOMEM;
	}
	for (size_t g = 0; !ret && g < plan->nr_groups; g++)
		for (int cpu = 0; !ret && cpu < c->nr_cpus; cpu++)
			if (!covered || covered[cpu])
				ret = open_group_on_cpu(events, &plan->groups[g], cpu, group_fds(c, g, cpu),
							err, errlen);
	if (!ret && plan->nr_groups)
		ret = td_pmu_activate(c, 0, err, errlen);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory opening counters");
	free(covered);
	if (ret) {
		td_pmu_close(c);
		return ret;
	}
	*out = c;
	return 0;
}

int td_pmu_open(const struct td_event *events, size_t count, int map_fd,
		int slots_per_cpu, struct td_pmu_counters **out,
		char *err, size_t errlen)
{
	struct td_counter_plan plan = { .nr_groups = 1, .groups[0].nr_events = count };

	if (count > TD_MAX_SLOTS) {
		snprintf(err, errlen, "%zu events do not fit the %d counter slots; name fewer events", count,
			 TD_MAX_SLOTS);
		return -E2BIG;
	}
	for (size_t n = 0; n < count; n++)
		plan.groups[0].events[n] = n;
	return td_pmu_open_plan(events, &plan, NULL, map_fd, slots_per_cpu, out, err, errlen);
}

/*
 * Starts or stops group g on one CPU. A perf group is switched through
 * its leader (PERF_IOC_FLAG_GROUP takes the members along); standalone
 * events one by one.
 */
static int switch_group(struct td_pmu_counters *c, size_t g, int cpu, bool on)
{
	const struct td_counter_group *group = &c->plan.groups[g];
	int *fds = group_fds(c, g, cpu);

	for (size_t n = 0; n < group->nr_events; n++) {
		bool leader = n == 0 && group->kernel_group > 0;

		if (fds[n] < 0 || (n > 0 && n < group->kernel_group))
			continue;
		if (ioctl(fds[n], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE,
			  leader ? PERF_IOC_FLAG_GROUP : 0))
			return -errno;
	}
	return 0;
}

/* Points the slots of one CPU at group g; slots past its events are emptied. */
static int point_slots(struct td_pmu_counters *c, size_t g, int cpu)
{
	const struct td_counter_group *group = &c->plan.groups[g];
	int *fds = group_fds(c, g, cpu);

	for (int slot = 0; slot < c->slots_per_cpu && slot < TD_MAX_SLOTS; slot++) {
		__u32 key = cpu * c->slots_per_cpu + slot;

		if ((size_t)slot < group->nr_events && fds[slot] >= 0) {
			if (bpf_map_update_elem(c->map_fd, &key, &fds[slot], BPF_ANY))
				return -errno;
		} else if (bpf_map_delete_elem(c->map_fd, &key) && errno != ENOENT) {
			return -errno;
		}
	}
	return 0;
}

int td_pmu_activate(struct td_pmu_counters *c, size_t group, char *err, size_t errlen)
{
	int ret = 0;

	if (group >= c->plan.nr_groups) {
		snprintf(err, errlen, "counter group %zu does not exist (the plan has %zu)", group,
			 c->plan.nr_groups);
		return -EINVAL;
	}
	/* Stop the old group first, so the two never compete for counters. */
	for (int cpu = 0; !ret && c->active >= 0 && cpu < c->nr_cpus; cpu++)
		ret = switch_group(c, c->active, cpu, false);
	for (int cpu = 0; !ret && cpu < c->nr_cpus; cpu++)
		ret = switch_group(c, group, cpu, true) ?: point_slots(c, group, cpu);
	if (ret) {
		snprintf(err, errlen, "cannot switch the counters to group %zu: %s", group, strerror(-ret));
		return ret;
	}
	c->active = group;
	return 0;
}

/*
 * Whether events[0..n) as one perf group, led by events[0], counts on cpu
 * right after it is enabled: 1 when it does, 0 when the kernel could not
 * schedule it (its running time stays 0), negative errno when an event
 * does not open.
 */
#define PROBE_MAX 32 /* counters a probe tries at most */

static int group_counts(const struct td_event *const *events, size_t n, int cpu)
{
	struct perf_event_attr attr;
	struct { __u64 nr, enabled, running, values[PROBE_MAX + 1]; } reading;
	int fds[PROBE_MAX + 1], ret = 0;
	size_t opened = 0;

	for (; opened < n; opened++) {
		counting_attr(events[opened], &attr);
		attr.disabled = opened == 0;
		attr.read_format |= PERF_FORMAT_GROUP;
		fds[opened] = open_event(&attr, cpu, opened ? fds[0] : -1);
		if (fds[opened] < 0) {
			ret = -errno;
			break;
		}
	}
	if (!ret && ioctl(fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP))
		ret = -errno;
	if (!ret)
		ret = read(fds[0], &reading, sizeof(reading)) < (ssize_t)(3 * sizeof(__u64)) ? -EIO :
		      reading.running > 0;
	while (opened > 0)
		close(fds[--opened]);
	return ret;
}

int td_pmu_probe(const struct td_event *gp_event, unsigned max_gp, const struct td_event *fixed,
		 size_t nr_fixed, int cpu, struct td_pmu_probe *out, char *err, size_t errlen)
{
	const struct td_event *group[PROBE_MAX + 1];
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (max_gp >= PROBE_MAX || nr_fixed > 32) {
		snprintf(err, errlen, "a probe takes up to %d general-purpose counters and 32 fixed events",
			 PROBE_MAX - 1);
		return -EINVAL;
	}
	for (unsigned k = 1; k <= max_gp + 1; k++) {
		group[k - 1] = gp_event;
		if ((ret = group_counts(group, k, cpu)) <= 0)
			break;
		if (k <= max_gp)
			out->gp_free = k;
		else
			out->gp_more = true;
	}
	if (ret < 0 && out->gp_free == 0) { /* not even one opens: the PMU or the rights are missing */
		describe_open_error(gp_event, cpu, -ret, err, errlen);
		return ret;
	}
	out->nr_fixed = nr_fixed;
	for (size_t f = 0; f < nr_fixed; f++) {
		for (unsigned k = 0; k < out->gp_free; k++)
			group[k] = gp_event;
		group[out->gp_free] = &fixed[f];
		if (group_counts(group, out->gp_free + 1, cpu) > 0)
			out->fixed_free |= 1u << f;
	}
	out->done = true;
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
	int fd = perf_event_open(&attr, -1, 0, -1), error;

	if (fd >= 0) {
		close(fd);
		return true;
	}
	error = errno;
	if (error == EACCES || error == EPERM)
		snprintf(why, whylen, "permission denied: run as root or grant CAP_PERFMON "
			 "(opening the cycles counter failed: %s)", strerror(error));
	else
		snprintf(why, whylen, "no hardware PMU on this host (opening the cycles counter failed: %s%s)",
			 strerror(error),
			 error == ENOENT || error == EOPNOTSUPP ? "; a VM needs a virtual PMU" : "");
	errno = error;
	return false;
}
