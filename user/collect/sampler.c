// SPDX-License-Identifier: BSD-3-Clause
/*
 * Locate's sampling events and the drain of what on_sample counted
 * (bpf/topdown.bpf.c). The kernel aggregates: a drain reads each
 * (thread, user stack, kernel stack) once with its count, however many
 * samples landed on it, and nothing runs in userspace between drains.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fileio.h"
#include "parse.h"
#include "pmu.h"
#include "sampler.h"
#include "topdown.h"

struct td_sampler {
	int nr_cpus;
	int *fds;               /* per CPU; -1: offline or not covered */
	struct bpf_link **links;
	struct td_sample_key *keys;     /* drain buffers, TD_SAMPLER_MAX_KEYS each */
	struct td_sample_value *values;
	struct td_raw_stack raw;
	__s32 *live_stacks;     /* stack ids the previous drain read, sorted */
	size_t nr_live_stacks;
};

/* Closes the events of fds/links (nr_cpus each) and the arrays. */
static void detach_events(int nr_cpus, int *fds, struct bpf_link **links)
{
	for (int cpu = 0; fds && links && cpu < nr_cpus; cpu++) {
		bpf_link__destroy(links[cpu]);
		if (fds[cpu] >= 0)
			close(fds[cpu]);
	}
	free(fds);
	free(links);
}

void td_sampler_close(struct td_sampler *s)
{
	if (!s)
		return;
	detach_events(s->nr_cpus, s->fds, s->links);
	free(s->keys);
	free(s->values);
	free(s->live_stacks);
	free(s);
}

/*
 * Opens opts' event on every CPU of cpus (NULL: all) and attaches prog to
 * each, into new arrays *fds and *links; nothing stays open on failure.
 */
static int attach_events(struct bpf_program *prog, const struct td_sample_opts *opts, const char *cpus, int nr_cpus,
			 int **fds_out, struct bpf_link ***links_out, char *err, size_t errlen)
{
	int *fds = malloc(nr_cpus * sizeof(*fds));
	struct bpf_link **links = calloc(nr_cpus, sizeof(*links));
	bool *covered = calloc(nr_cpus, sizeof(*covered));
	int ret = 0, opened = 0;

	if (!fds || !links || !covered) {
		snprintf(err, errlen, "out of memory opening the sampling events");
		ret = -ENOMEM;
	}
	for (int cpu = 0; !ret && cpu < nr_cpus; cpu++) {
		fds[cpu] = -1;
		covered[cpu] = !(cpus && *cpus);
	}
	if (!ret && cpus && *cpus)
		ret = td_cpulist_parse(cpus, covered, nr_cpus, err, errlen);
	for (int cpu = 0; cpu < nr_cpus && !ret; cpu++) {
		int fd;

		if (!covered[cpu])
			continue;
		fd = td_pmu_open_sampling(&opts->event, opts->frequency_hz, opts->period, opts->precise, cpu, err,
					  errlen);
		if (fd == -ENODEV)
			continue;
		if (fd < 0) {
			ret = fd;
			break;
		}
		fds[cpu] = fd;
		links[cpu] = bpf_program__attach_perf_event(prog, fd);
		if (!links[cpu]) {
			ret = -errno;
			snprintf(err, errlen, "cannot attach the sampling program to '%s' on CPU %d: %s",
				 opts->event.name, cpu, strerror(errno));
		}
		opened++;
	}
	if (!ret && opened == 0) {
		snprintf(err, errlen, "'%s' opened on no CPU: every CPU it covers is offline", opts->event.name);
		ret = -ENODEV;
	}
	free(covered);
	if (ret) {
		detach_events(fds ? nr_cpus : 0, fds, links);
		return ret;
	}
	*fds_out = fds;
	*links_out = links;
	return 0;
}

int td_sampler_open(struct bpf_program *prog, const struct td_sample_opts *opts, const char *cpus,
		    int nr_cpus, struct td_sampler **out, char *err, size_t errlen)
{
	struct td_sampler *s = calloc(1, sizeof(*s));
	int ret;

	*out = NULL;
	if (!s || !(s->keys = calloc(TD_SAMPLER_MAX_KEYS, sizeof(*s->keys))) ||
	    !(s->values = calloc(TD_SAMPLER_MAX_KEYS, sizeof(*s->values)))) {
		td_sampler_close(s);
		snprintf(err, errlen, "out of memory opening the sampling events");
		return -ENOMEM;
	}
	s->nr_cpus = nr_cpus;
	ret = attach_events(prog, opts, cpus, nr_cpus, &s->fds, &s->links, err, errlen);
	if (ret) {
		td_sampler_close(s);
		return ret;
	}
	*out = s;
	return 0;
}

int td_sampler_switch(struct td_sampler *s, struct bpf_program *prog, const struct td_sample_opts *opts,
		      const char *cpus, char *err, size_t errlen)
{
	struct bpf_link **links;
	int *fds, ret = attach_events(prog, opts, cpus, s->nr_cpus, &fds, &links, err, errlen);

	if (ret)
		return ret; /* the old event samples on */
	detach_events(s->nr_cpus, s->fds, s->links);
	s->fds = fds;
	s->links = links;
	return 0;
}

/* Frames up to the first zero: the kernel zero-fills the rest of the slot. */
static uint32_t read_stack(int stacks_fd, __s32 id, uint64_t *ips, bool *lost)
{
	uint32_t n = 0;

	if (id < 0)
		return 0;
	if (bpf_map_lookup_elem(stacks_fd, &id, ips)) {
		*lost = true; /* recycled between the sample and this drain */
		return 0;
	}
	while (n < TD_MAX_STACK_DEPTH && ips[n])
		n++;
	return n;
}

static int by_pid(const void *a, const void *b)
{
	const struct td_sample_key *x = a, *y = b;

	return x->pid != y->pid ? (x->pid < y->pid ? -1 : 1) : (x->tid > y->tid) - (x->tid < y->tid);
}

/* Pairs of key and value move together when sorted. */
struct keyed_value {
	struct td_sample_key key;
	struct td_sample_value value;
};

static int hand_over(struct td_sampler *s, const struct keyed_value *kv, int stacks_fd, td_raw_stack_fn fn,
		     void *ctx)
{
	struct td_raw_stack *raw = &s->raw;

	raw->tid = kv->key.tid;
	raw->pid = kv->key.pid;
	memcpy(raw->comm, kv->value.comm, sizeof(raw->comm));
	raw->comm[sizeof(raw->comm) - 1] = '\0';
	raw->count = kv->value.count;
	raw->stack_lost = (kv->key.user_stack < 0 && kv->key.user_stack != -EFAULT) ||
			  (kv->key.kernel_stack < 0 && kv->key.kernel_stack != -EFAULT);
	raw->nr_user = read_stack(stacks_fd, kv->key.user_stack, raw->user_ips, &raw->stack_lost);
	raw->nr_kernel = read_stack(stacks_fd, kv->key.kernel_stack, raw->kernel_ips, &raw->stack_lost);
	raw->truncated = raw->nr_user == TD_MAX_STACK_DEPTH || raw->nr_kernel == TD_MAX_STACK_DEPTH;
	return fn(ctx, raw);
}

static int by_id(const void *a, const void *b)
{
	__s32 x = *(const __s32 *)a, y = *(const __s32 *)b;

	return (x > y) - (x < y);
}

/*
 * Frees the stacks no longer in use, so the map does not fill up over a
 * long collection: those the previous drain read and this one did not. A
 * stack read now stays one more interval, because a sample landing
 * between this drain's read and a delete would count under an id about
 * to vanish; only a stack idle for a whole interval that comes back in
 * that instant is lost (and counted as lost).
 */
static int free_idle_stacks(struct td_sampler *s, int stacks_fd, size_t n)
{
	__s32 *ids = malloc((2 * n + 1) * sizeof(*ids));
	size_t nr = 0, j = 0;

	if (!ids)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (s->keys[i].user_stack >= 0)
			ids[nr++] = s->keys[i].user_stack;
		if (s->keys[i].kernel_stack >= 0)
			ids[nr++] = s->keys[i].kernel_stack;
	}
	qsort(ids, nr, sizeof(*ids), by_id);
	for (size_t i = 0; i < s->nr_live_stacks; i++) {
		while (j < nr && ids[j] < s->live_stacks[i])
			j++;
		if (j == nr || ids[j] != s->live_stacks[i])
			bpf_map_delete_elem(stacks_fd, &s->live_stacks[i]);
	}
	free(s->live_stacks);
	s->live_stacks = ids;
	s->nr_live_stacks = nr;
	return 0;
}

int td_sampler_drain(struct td_sampler *s, int counts_fd, int stacks_fd, td_raw_stack_fn fn, void *ctx,
		     char *err, size_t errlen)
{
	struct keyed_value *sorted;
	__u32 count = 0, token = 0;
	bool first = true;
	size_t n = 0;
	int ret;

	/* One pass takes and deletes every entry; samples landing meanwhile stay for the next drain. */
	do {
		count = TD_SAMPLER_MAX_KEYS - n;
		if (count == 0)
			break;
		ret = bpf_map_lookup_and_delete_batch(counts_fd, first ? NULL : &token, &token, s->keys + n,
						      s->values + n, &count, NULL);
		if (ret && errno != ENOENT) {
			snprintf(err, errlen, "draining the sample counts failed: %s", strerror(errno));
			return -errno;
		}
		n += count;
		first = false;
	} while (!ret);
	sorted = malloc((n ? n : 1) * sizeof(*sorted));
	if (!sorted) {
		snprintf(err, errlen, "out of memory draining the samples");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		sorted[i].key = s->keys[i];
		sorted[i].value = s->values[i];
	}
	qsort(sorted, n, sizeof(*sorted), by_pid);
	ret = 0;
	for (size_t i = 0; i < n && !ret; i++)
		ret = hand_over(s, &sorted[i], stacks_fd, fn, ctx);
	if (ret)
		snprintf(err, errlen, "turning samples into stacks failed: %s", strerror(-ret));
	if (!ret && (ret = free_idle_stacks(s, stacks_fd, n)))
		snprintf(err, errlen, "out of memory draining the samples");
	free(sorted);
	return ret;
}

uint64_t td_sampler_max_frequency(void)
{
	char line[64], err[128];
	long rate;

	if (td_read_first_line("/proc/sys/kernel/perf_event_max_sample_rate", line, sizeof(line)) < 0 ||
	    td_parse_int_range(line, "perf_event_max_sample_rate", 1, 1L << 30, &rate, err, sizeof(err)))
		return 0;
	return (uint64_t)rate;
}
