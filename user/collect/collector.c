// SPDX-License-Identifier: BSD-3-Clause
/*
 * Userspace half of the BPF collector (see bpf/topdown.bpf.c).
 *
 * The kernel keeps cumulative totals per live thread and sends a final
 * record when a thread dies. Here each thread is a "track" keyed by
 * (tid, start time); a drain copies the kernel's totals into the tracks
 * and reports each track's change since the previous drain.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "collector.h"
#include "events_plan.h"
#include "fileio.h"
#include "pmu.h"
#include "procmatch.h"
#include "tma_events.h"
#include "topdown.h"
#include "topdown.skel.h"
#include "utf8.h"

#define DEFAULT_MAX_THREADS 16384
#define MIN_TRACKS 256
#define EXIT_RING_BYTES (4u << 20) /* ~14,000 exit records between polls */

struct track {
	struct td_thread_stats now;  /* latest totals from the kernel */
	struct td_thread_stats base; /* totals at the previous drain */
	struct td_thread_stats window_base; /* totals when the window began (zero: at start) */
	bool reported_exit;
	bool active; /* ran or exited in this window */
	__u64 counted_ns; /* the thread's counter time over the window's drains: what its counts scale to */
};

/*
 * One event of one track over the drains its group was active (the
 * kernel's slot totals mix the events that took turns in a slot): its
 * count, enabled and running time, and what the ruler counted beside it
 * in those drains (see struct td_collector's ruler).
 */
struct event_sum {
	__u64 count, enabled, running;
	__u64 ruler;
};

/*
 * Tracks live in one array; an open-addressing index finds them by key.
 * Beside each track, nr_events sums.
 */
struct track_table {
	struct track *items;
	struct event_sum *sums; /* items[i]'s are sums[i * nr_events ...] */
	size_t nr_events;
	size_t count, cap;
	uint32_t *index; /* item position + 1; 0 = empty */
	size_t index_cap; /* power of two, kept at most half full */
};

struct td_collector {
	struct topdown_bpf *skel;
	struct ring_buffer *exit_ring;
	struct td_pmu_counters *counters;
	struct td_sampler *sampler; /* locate; NULL when not sampling */
	char *sample_cpus;          /* the CPUs the sampling event covers (opts.pmu_cpus); NULL: all */
	struct td_counter_plan plan;
	__u8 *targets;          /* the targets map, mapped: a byte per tgid below nr_target_pids */
	size_t nr_target_pids;
	bool system_wide;
	pid_t running_target;   /* the target td_collector_targets_running last found running */
	uint32_t untimed_slots[TD_MAX_EVENTS]; /* per group: td_counter_group_untimed_slots */
	/*
	 * The ruler: an event every group counts in its kernel group (cycles,
	 * where the plan puts them beside each group's events), or -1. A
	 * window's count of an event is scaled by the ruler's total over what
	 * the ruler counted beside it, rather than by time, so that a formula's
	 * term over cycles (STALL_SLOT_FRONTEND / CPU_CYCLES) is the ratio
	 * counted within one group, and terms from different groups are per-
	 * cycle rates each counted whole: the formula is split into terms that
	 * each hold within one group, whatever the groups' turns missed.
	 */
	int ruler;
	size_t ruler_slot[TD_MAX_EVENTS]; /* per group: the ruler's slot */
	size_t active_group;
	const char *attach_kind;
	size_t nr_events;
	int nr_cpus;
	char **process_names;
	size_t nr_process_names;
	size_t *found; /* per name, at the last scan of /proc */
	int stats_fd;  /* holds the kernel's BPF run-time statistics on; -1: off */
	pid_t self;
	uint32_t max_threads;
	struct td_thread_stats *records; /* the records map, mapped: max_threads of them */
	__u32 *record_index;             /* the record index, mapped: a place + 1 per tid below nr_index_tids */
	size_t nr_index_tids;
	__u64 *places_used;              /* per CPU, read from the places_used map */
	struct track_table tracks;
};

static size_t track_hash(__u32 tid, __u64 start_ns, size_t mask)
{
	uint64_t h = ((uint64_t)tid << 32 ^ start_ns) * 0x9e3779b97f4a7c15ull;

	return (h >> 17) & mask;
}

/* (Re)builds the index with cap slots (a power of two) over the tracks. */
static int track_index_build(struct track_table *t, size_t cap)
{
	uint32_t *index = calloc(cap, sizeof(*index));

	if (!index)
		return -ENOMEM;
	for (size_t i = 0; i < t->count; i++) {
		size_t slot = track_hash(t->items[i].now.tid, t->items[i].now.start_ns, cap - 1);

		while (index[slot])
			slot = (slot + 1) & (cap - 1);
		index[slot] = i + 1;
	}
	free(t->index);
	t->index = index;
	t->index_cap = cap;
	return 0;
}

static int track_index_grow(struct track_table *t)
{
	return track_index_build(t, t->index_cap ? t->index_cap * 2 : 1024);
}

/* Room for cap tracks (never fewer than there are). */
static int track_table_resize(struct track_table *t, size_t cap)
{
	struct track *items = realloc(t->items, cap * sizeof(*items));
	struct event_sum *sums;

	if (!items)
		return -ENOMEM;
	t->items = items;
	sums = realloc(t->sums, (cap * t->nr_events + 1) * sizeof(*sums));
	if (!sums)
		return -ENOMEM;
	t->sums = sums;
	t->cap = cap;
	return 0;
}

/* The track of this thread, created zeroed when new; NULL when out of memory. */
static struct track *track_get(struct track_table *t, const struct td_thread_stats *stats)
{
	size_t slot;

	if ((t->count + 1) * 2 > t->index_cap && track_index_grow(t))
		return NULL;
	slot = track_hash(stats->tid, stats->start_ns, t->index_cap - 1);
	for (; t->index[slot]; slot = (slot + 1) & (t->index_cap - 1)) {
		struct track *track = &t->items[t->index[slot] - 1];

		if (track->now.tid == stats->tid && track->now.start_ns == stats->start_ns)
			return track;
	}
	if (t->count == t->cap && track_table_resize(t, t->cap ? t->cap * 2 : MIN_TRACKS))
		return NULL;
	memset(&t->items[t->count], 0, sizeof(t->items[0]));
	memset(&t->sums[t->count * t->nr_events], 0, t->nr_events * sizeof(*t->sums));
	t->index[slot] = ++t->count;
	return &t->items[t->count - 1];
}

/* Newer totals for a thread; records of a dead thread are final. */
static int track_update(struct td_collector *c, const struct td_thread_stats *stats)
{
	struct track *track = track_get(&c->tracks, stats);

	if (!track)
		return -ENOMEM;
	if (!track->now.exited)
		track->now = *stats;
	return 0;
}

static int on_exit_record(void *ctx, void *data, size_t size)
{
	if (size < sizeof(struct td_thread_stats))
		return 0;
	return track_update(ctx, data);
}

/* The scheduling figures of a thread between two totals (base zero: since start). */
static void row_from_sched_delta(const struct td_thread_stats *now, const struct td_thread_stats *base,
				 struct td_thread_row *row)
{
	memset(row, 0, sizeof(*row));
	row->tid = now->tid;
	row->pid = now->tgid;
	memcpy(row->comm, now->comm, sizeof(row->comm));
	row->comm[sizeof(row->comm) - 1] = '\0';
	td_utf8_sanitize(row->comm); /* the kernel cuts names at 15 bytes, mid-character or not */
	row->exited = now->exited;
	row->oncpu_ns = now->oncpu_ns - base->oncpu_ns;
	row->voluntary_switches = now->voluntary_switches - base->voluntary_switches;
	row->involuntary_switches = now->involuntary_switches - base->involuntary_switches;
	row->migrations = now->migrations - base->migrations;
	row->runq_wait_ns = now->runq_wait_ns - base->runq_wait_ns;
}

/* A count seen running of enabled ns, scaled to the whole enabled time. */
static void scale_count(double count, double enabled, double running, struct td_counter_value *out)
{
	if (enabled == 0) { /* no time passed: nothing to scale */
		out->value = count;
		out->running_fraction = 1.0;
	} else if (running == 0) { /* not counted at all */
		out->value = NAN;
		out->running_fraction = 0.0;
	} else {
		out->value = count * enabled / running;
		out->running_fraction = running / enabled;
	}
}

/*
 * A slot's sums between two totals. The enabled time stands for the time
 * the thread ran: when some of its slices went unread (their switch-in
 * was not seen, bpf/topdown.bpf.c), it is scaled up by the on-CPU time
 * they took, on the scheduler's clock like the rest, so the count is
 * extrapolated over them and its running fraction falls by their share.
 */
static struct td_slot_sum slot_delta(const struct td_thread_stats *now, const struct td_thread_stats *base,
				     size_t slot)
{
	__u64 oncpu = now->oncpu_ns - base->oncpu_ns, unread = now->unread_oncpu_ns - base->unread_oncpu_ns;
	struct td_slot_sum d = {
		.count = now->slots[slot].count - base->slots[slot].count,
		.enabled = now->slots[slot].enabled - base->slots[slot].enabled,
		.running = now->slots[slot].running - base->slots[slot].running,
	};

	if (unread && unread >= oncpu) /* nothing read: ran, but not counted */
		d.enabled = oncpu;
	else if (unread)
		d.enabled = (__u64)((double)d.enabled * oncpu / (oncpu - unread) + 0.5);
	return d;
}

/*
 * A thread's row for the interval that ends now: the active group's
 * events from their slot deltas, NaN for the events not counted.
 */
static void interval_row(const struct td_collector *c, const struct track *t, struct td_thread_row *row)
{
	const struct td_counter_group *group = &c->plan.groups[c->active_group];

	row_from_sched_delta(&t->now, &t->base, row);
	for (size_t e = 0; e < c->nr_events; e++)
		row->counters[e] = (struct td_counter_value){ NAN, 0.0 };
	for (size_t slot = 0; slot < group->nr_events; slot++) {
		struct td_slot_sum d = slot_delta(&t->now, &t->base, slot);

		scale_count(d.count, d.enabled, d.running, &row->counters[group->events[slot]]);
	}
}

/* Adds the interval's slot deltas to the track's per-event sums. */
static void accumulate(struct td_collector *c, size_t track)
{
	const struct td_counter_group *group = &c->plan.groups[c->active_group];
	struct track *t = &c->tracks.items[track];
	struct event_sum *sums = &c->tracks.sums[track * c->nr_events];
	__u64 counted = 0, ruler = c->ruler < 0 ? 0 : slot_delta(&t->now, &t->base,
								     c->ruler_slot[c->active_group]).count;

	for (size_t slot = 0; slot < group->nr_events; slot++) {
		struct td_slot_sum d = slot_delta(&t->now, &t->base, slot);
		struct event_sum *sum = &sums[group->events[slot]];

		sum->count += d.count;
		sum->enabled += d.enabled;
		sum->running += d.running;
		if (slot < group->kernel_group) /* scheduled with the ruler: counted over its time */
			sum->ruler += ruler;
		if (d.enabled > counted)
			counted = d.enabled;
	}
	t->counted_ns += counted;
}

/*
 * The plan's ruler (struct td_collector): the first event of the first
 * group that every other group also has in its kernel group. With one
 * group there is nothing to rule: everything was counted together.
 */
static void find_ruler(struct td_collector *c)
{
	const struct td_counter_plan *plan = &c->plan;

	c->ruler = -1;
	for (size_t k = 0; plan->nr_groups > 1 && c->ruler < 0 && k < plan->groups[0].kernel_group; k++) {
		int event = plan->groups[0].events[k];
		size_t found = 0;

		for (size_t g = 0; g < plan->nr_groups; g++)
			for (size_t slot = 0; slot < plan->groups[g].kernel_group; slot++)
				if (plan->groups[g].events[slot] == event) {
					c->ruler_slot[g] = slot;
					found++;
					break;
				}
		if (found == plan->nr_groups)
			c->ruler = event;
	}
}

/*
 * A window's counter of one event: scaled by time (scale_count), or, where
 * the ruler counted beside it, by the ruler's window total over what the
 * ruler counted beside it; the running fraction is the time's either way.
 */
static void window_counter(const struct event_sum *sum, __u64 counted_ns, const struct td_counter_value *ruler,
			   struct td_counter_value *out)
{
	scale_count(sum->count, counted_ns, sum->running, out);
	if (ruler && sum->ruler && sum->running && isfinite(ruler->value))
		out->value = (double)sum->count * ruler->value / (double)sum->ruler;
}

static bool track_changed(const struct track *t)
{
	return (t->now.exited && !t->reported_exit) ||
	       memcmp(&t->now.slots, &t->base.slots, sizeof(t->now.slots)) ||
	       t->now.oncpu_ns != t->base.oncpu_ns ||
	       t->now.voluntary_switches != t->base.voluntary_switches ||
	       t->now.involuntary_switches != t->base.involuntary_switches;
}

bool td_collector_tp_btf_supported(void)
{
	const struct bpf_insn insns[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = 0 }, /* r0 = 0 */
		{ .code = 0x95 },                         /* exit */
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_RAW_TP);
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int id, fd;

	if (!vmlinux)
		return false;
	id = btf__find_by_name_kind(vmlinux, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
	btf__free(vmlinux);
	if (id <= 0)
		return false;
	opts.attach_btf_id = id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns, 2, &opts);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/*
 * TOPDOWN_FORCE_RAW_TP=1 loads the raw_tp flavour where tp_btf would load:
 * how the kernel lab and a user whose kernel misbehaves with tp_btf run
 * the fallback path.
 */
static void choose_attach_kind(struct td_collector *c, bool force_raw_tp)
{
	struct topdown_bpf *s = c->skel;
	const char *forced = getenv("TOPDOWN_FORCE_RAW_TP");
	bool btf = !force_raw_tp && !(forced && !strcmp(forced, "1")) && td_collector_tp_btf_supported();
	struct bpf_program *btf_progs[] = { s->progs.switch_btf, s->progs.wakeup_new_btf,
		s->progs.exec_btf, s->progs.fork_btf };
	struct bpf_program *raw_progs[] = { s->progs.switch_raw, s->progs.wakeup_new_raw,
		s->progs.exec_raw, s->progs.fork_raw };

	for (size_t i = 0; i < sizeof(btf_progs) / sizeof(btf_progs[0]); i++) {
		bpf_program__set_autoload(btf_progs[i], btf);
		bpf_program__set_autoload(raw_progs[i], !btf);
	}
	c->attach_kind = btf ? "tp_btf" : "raw_tp";
}

/*
 * The pids the targets array and the record index cover: the kernel's
 * pid_max now (and every pid given). A thread or process with a pid above
 * it, once pid_max has been raised, is not followed.
 */
static unsigned long covered_pids(const struct td_collector_opts *opts)
{
	char line[32];
	unsigned long pids = 4194304; /* PID_MAX_LIMIT on 64-bit, if pid_max cannot be read */

	if (!td_read_first_line("/proc/sys/kernel/pid_max", line, sizeof(line)))
		pids = strtoul(line, NULL, 10);
	for (size_t i = 0; i < opts->nr_pids; i++)
		if (opts->pids[i] > 0 && (unsigned long)opts->pids[i] >= pids)
			pids = opts->pids[i] + 1UL;
	return pids ? pids : 1;
}

static size_t blocks_of(unsigned long pids, size_t per_block)
{
	return (pids + per_block - 1) / per_block;
}

/* A mapping of a BPF_F_MMAPABLE array map's whole value area, or NULL (errno set). */
static void *map_array(const struct bpf_map *map, size_t *bytes)
{
	void *mem;

	*bytes = (size_t)bpf_map__max_entries(map) * bpf_map__value_size(map);
	mem = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(map), 0);
	return mem == MAP_FAILED ? NULL : mem;
}

/*
 * Maps the targets array, where userspace sets and clears tgids in place,
 * and the thread records and their index, and puts every record's place
 * in the free stack: place 0 on top, so the records fill the array from
 * its start.
 */
static int map_arrays(struct td_collector *c)
{
	int free_fd = bpf_map__fd(c->skel->maps.free_places);
	size_t bytes;

	if (!(c->targets = map_array(c->skel->maps.targets, &c->nr_target_pids)) ||
	    !(c->records = map_array(c->skel->maps.records, &bytes)) ||
	    !(c->record_index = map_array(c->skel->maps.record_index, &bytes)))
		return -errno;
	c->nr_index_tids = bytes / sizeof(*c->record_index);
	for (__u32 place = c->max_threads; place-- > 0;)
		if (bpf_map_update_elem(free_fd, NULL, &place, 0))
			return -errno;
	return 0;
}

/* Follows pid from the next switch on; one above the array's pids (see target_blocks) is not. */
static void add_target(struct td_collector *c, pid_t pid)
{
	if (pid > 0 && (size_t)pid < c->nr_target_pids)
		__atomic_store_n(&c->targets[pid], 1, __ATOMIC_RELAXED);
}

/*
 * Adds every running process with one of the names, counting them per
 * name (the kernel adds new ones at exec; this finds names longer than a
 * comm, which it cannot match).
 */
static int add_named_targets(struct td_collector *c, char *err, size_t errlen)
{
	int ret = 0;

	for (size_t n = 0; !ret && n < c->nr_process_names; n++) {
		pid_t *pids = NULL;
		size_t count = 0;

		ret = td_proc_find("/proc", c->process_names[n], c->self, &pids, &count, err, errlen);
		for (size_t i = 0; i < count; i++)
			add_target(c, pids[i]);
		free(pids);
		c->found[n] = count;
	}
	return ret;
}

/* The names' comms, NUL-padded, for the kernel to match at exec and fork. */
static int set_target_comms(struct td_collector *c, char *err, size_t errlen)
{
	int fd = bpf_map__fd(c->skel->maps.target_comms);
	__u8 yes = 1;

	for (size_t n = 0; n < c->nr_process_names; n++) {
		char comm[TD_TASK_COMM_LEN] = { 0 };

		strncpy(comm, c->process_names[n], TD_TASK_COMM_LEN - 1);
		if (bpf_map_update_elem(fd, comm, &yes, BPF_ANY)) {
			snprintf(err, errlen, "cannot add process name '%s' to the targets: %s",
				 c->process_names[n], strerror(errno));
			return -errno;
		}
	}
	return 0;
}

static int set_targets(struct td_collector *c, const struct td_collector_opts *opts,
		       char *err, size_t errlen)
{
	int ret;

	c->system_wide = opts->system_wide;

	for (size_t i = 0; i < opts->nr_pids; i++) {
		if (kill(opts->pids[i], 0) && errno == ESRCH) {
			snprintf(err, errlen, "no process with pid %d; check the pid with `ps -p %d`",
				 opts->pids[i], opts->pids[i]);
			return -ESRCH;
		}
		add_target(c, opts->pids[i]);
	}
	if (!c->nr_process_names)
		return 0;
	if ((ret = set_target_comms(c, err, errlen)) || (ret = add_named_targets(c, err, errlen)))
		return ret;
	for (size_t n = 0; n < c->nr_process_names && !opts->wait_for_targets; n++) {
		if (!c->found[n]) {
			snprintf(err, errlen, "no running process is named '%s'; start it first, or check the name with `pgrep -l %s`",
				 c->process_names[n], c->process_names[n]);
			return -ESRCH;
		}
	}
	return 0;
}

static int configure_skeleton(struct td_collector *c, const struct td_collector_opts *opts)
{
	struct topdown_bpf *s = c->skel;
	unsigned long pids = covered_pids(opts);
	int ret;

	s->rodata->system_wide = opts->system_wide;
	s->rodata->nr_slots = 0;
	for (size_t g = 0; g < c->plan.nr_groups; g++)
		if (c->plan.groups[g].nr_events > s->rodata->nr_slots)
			s->rodata->nr_slots = c->plan.groups[g].nr_events;
	s->rodata->match_comm = opts->nr_process_names > 0;
	choose_attach_kind(c, opts->force_raw_tp);
	if ((ret = bpf_map__set_max_entries(s->maps.counters, c->nr_cpus * TD_MAX_SLOTS)) ||
	    (ret = bpf_map__set_max_entries(s->maps.records, c->max_threads)) ||
	    (ret = bpf_map__set_max_entries(s->maps.free_places, c->max_threads)) ||
	    (ret = bpf_map__set_max_entries(s->maps.record_index, blocks_of(pids, TD_INDEX_BLOCK))) ||
	    (ret = bpf_map__set_max_entries(s->maps.exits, EXIT_RING_BYTES)) ||
	    /* one block with --system-wide, which follows everything without looking */
	    (ret = bpf_map__set_max_entries(s->maps.targets, opts->system_wide ? 1 :
					    blocks_of(pids, TD_TARGET_BLOCK))))
		return ret;
	/* Without sampling, locate's maps stay at one entry: a stack slot is 1 KiB. */
	if ((ret = bpf_map__set_max_entries(s->maps.stack_traces, !opts->sample ? 1 :
					    opts->sample->max_stacks ? opts->sample->max_stacks :
					    TD_SAMPLER_DEFAULT_STACKS)) ||
	    (ret = bpf_map__set_max_entries(s->maps.sample_counts, opts->sample ? TD_SAMPLER_MAX_KEYS : 1)))
		return ret;
	return 0;
}

static int load_and_attach(struct td_collector *c, const struct td_collector_opts *opts,
			   char *err, size_t errlen)
{
	int ret;

	c->skel = topdown_bpf__open();
	if (!c->skel) {
		snprintf(err, errlen, "cannot open the BPF object: %s", strerror(errno));
		return -errno;
	}
	if ((ret = configure_skeleton(c, opts))) {
		snprintf(err, errlen, "cannot size the BPF maps: %s", strerror(-ret));
		return ret;
	}
	if ((ret = topdown_bpf__load(c->skel))) {
		/* out of memory or of descriptors says nothing about the kernel */
		if (ret == -ENOMEM || ret == -EMFILE || ret == -ENFILE)
			snprintf(err, errlen, "cannot load the BPF programs: %s; free memory, or raise "
				 "the limits on open files and locked memory (ulimit -n, ulimit -l)",
				 strerror(-ret));
		else
			snprintf(err, errlen, "the kernel refused the BPF programs (%s); a kernel with BTF "
				 "(CONFIG_DEBUG_INFO_BTF=y), 5.8 or newer, is needed; libbpf's log above "
				 "says more", strerror(-ret));
		return ret;
	}
	if ((ret = map_arrays(c))) {
		snprintf(err, errlen, "cannot map the targets and thread records: %s", strerror(-ret));
		return ret;
	}
	/* flush_cpu has no attach point: the skeleton leaves it alone. */
	if ((ret = topdown_bpf__attach(c->skel))) {
		snprintf(err, errlen, "cannot attach to sched_switch: %s", strerror(-ret));
		return ret;
	}
	return 0;
}

/* One open per CPU slot array the programs read: the counters. */
static int open_counters(struct td_collector *c, const struct td_collector_opts *opts,
			 char *err, size_t errlen)
{
	for (size_t g = 0; g < c->plan.nr_groups; g++)
		c->untimed_slots[g] = td_counter_group_untimed_slots(opts->events, &c->plan.groups[g]);
	c->skel->bss->untimed_slots = c->untimed_slots[0]; /* group 0 is activated first */
	return td_pmu_open_plan(opts->events, &c->plan, opts->pmu_cpus, bpf_map__fd(c->skel->maps.counters),
				TD_MAX_SLOTS, &c->counters, err, errlen);
}

/* Without a plan: the events in order, max_group_events to a group. */
static int default_plan(const struct td_collector_opts *opts, struct td_counter_plan *plan,
			char *err, size_t errlen)
{
	return td_events_plan_unprobed(opts->events, opts->nr_events,
				       opts->max_group_events ? opts->max_group_events : TD_MAX_SLOTS, plan, err, errlen);
}

/* A plan from the caller must name only the events given and fit the slots. */
static int check_plan(const struct td_counter_plan *plan, size_t nr_events, char *err, size_t errlen)
{
	for (size_t g = 0; g < plan->nr_groups; g++) {
		const struct td_counter_group *group = &plan->groups[g];
		bool ok = group->nr_events > 0 && group->nr_events <= TD_MAX_SLOTS &&
			  group->kernel_group <= group->nr_events;

		for (size_t n = 0; ok && n < group->nr_events; n++)
			ok = group->events[n] >= 0 && (size_t)group->events[n] < nr_events;
		if (!ok) {
			snprintf(err, errlen, "counter group %zu is malformed: 1 to %d events, each one of the %zu given",
				 g, TD_MAX_SLOTS, nr_events);
			return -EINVAL;
		}
	}
	return 0;
}

static int set_plan(struct td_collector *c, const struct td_collector_opts *opts, char *err, size_t errlen)
{
	if (!opts->plan)
		return default_plan(opts, &c->plan, err, errlen);
	if (opts->plan->nr_groups > TD_MAX_EVENTS || check_plan(opts->plan, opts->nr_events, err, errlen)) {
		if (opts->plan->nr_groups > TD_MAX_EVENTS)
			snprintf(err, errlen, "a plan of %zu counter groups is more than %d", opts->plan->nr_groups,
				 TD_MAX_EVENTS);
		return -EINVAL;
	}
	c->plan = *opts->plan;
	return 0;
}

static int copy_process_names(struct td_collector *c, const struct td_collector_opts *opts)
{
	c->process_names = calloc(opts->nr_process_names + 1, sizeof(*c->process_names));
	c->found = calloc(opts->nr_process_names + 1, sizeof(*c->found));
	if (!c->process_names || !c->found)
		return -ENOMEM;
	for (size_t n = 0; n < opts->nr_process_names; n++)
		if (!(c->process_names[c->nr_process_names++] = strdup(opts->process_names[n])))
			return -ENOMEM;
	return 0;
}

static int alloc_buffers(struct td_collector *c, const struct td_collector_opts *opts)
{
	c->stats_fd = -1;
	c->nr_events = opts->nr_events;
	c->tracks.nr_events = opts->nr_events;
	c->self = getpid();
	c->max_threads = opts->max_threads ? opts->max_threads : DEFAULT_MAX_THREADS;
	c->nr_cpus = libbpf_num_possible_cpus();
	if (c->nr_cpus <= 0)
		return -EINVAL;
	if (copy_process_names(c, opts))
		return -ENOMEM;
	c->places_used = calloc(c->nr_cpus, sizeof(*c->places_used));
	return c->places_used ? 0 : -ENOMEM;
}

/* Runs flush_cpu on every CPU so in-flight slices are charged up to now. */
static int flush_cpus(struct td_collector *c)
{
	int prog_fd = bpf_program__fd(c->skel->progs.flush_cpu);

	for (int cpu = 0; cpu < c->nr_cpus; cpu++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = cpu);

		if (bpf_prog_test_run_opts(prog_fd, &opts) && errno != ENXIO) /* ENXIO: offline */
			return -errno;
	}
	return 0;
}

/* What can be refused before anything loads. */
static int check_opts(const struct td_collector_opts *opts, char *err, size_t errlen)
{
	if (opts->nr_process_names > TD_MAX_TARGET_COMMS) {
		snprintf(err, errlen, "%zu process names are more than the %d a collector follows; name fewer",
			 opts->nr_process_names, TD_MAX_TARGET_COMMS);
		return -EINVAL;
	}
	return 0;
}

struct td_collector *td_collector_new(const struct td_collector_opts *opts,
				      char *err, size_t errlen)
{
	struct td_collector *c = calloc(1, sizeof(*c));
	int ret;

	if (!c || alloc_buffers(c, opts)) {
		snprintf(err, errlen, "out of memory setting up the collector");
		td_collector_free(c);
		return NULL;
	}
	ret = check_opts(opts, err, errlen);
	if (!ret)
		ret = set_plan(c, opts, err, errlen);
	if (!ret)
		find_ruler(c);
	if (!ret)
		ret = load_and_attach(c, opts, err, errlen);
	if (!ret)
		ret = open_counters(c, opts, err, errlen);
	if (!ret)
		ret = set_targets(c, opts, err, errlen);
	if (!ret) {
		c->exit_ring = ring_buffer__new(bpf_map__fd(c->skel->maps.exits), on_exit_record, c, NULL);
		if (!c->exit_ring) {
			ret = -errno;
			snprintf(err, errlen, "cannot map the exit ring buffer: %s", strerror(errno));
		}
	}
	if (!ret && opts->sample && opts->pmu_cpus && !(c->sample_cpus = strdup(opts->pmu_cpus))) {
		snprintf(err, errlen, "out of memory setting up the collector");
		ret = -ENOMEM;
	}
	if (!ret && opts->sample)
		ret = td_sampler_open(c->skel->progs.on_sample, opts->sample, c->sample_cpus, c->nr_cpus,
				      &c->sampler, err, errlen);
	if (!ret && (ret = flush_cpus(c))) /* open slices of targets already running */
		snprintf(err, errlen, "cannot start counting on every CPU: %s", strerror(-ret));
	if (ret) {
		td_collector_free(c);
		return NULL;
	}
	return c;
}

void td_collector_free(struct td_collector *c)
{
	if (!c)
		return;
	ring_buffer__free(c->exit_ring);
	td_sampler_close(c->sampler); /* its links before the programs */
	free(c->sample_cpus);
	if (c->targets)
		munmap(c->targets, c->nr_target_pids);
	if (c->records)
		munmap(c->records, (size_t)c->max_threads * sizeof(*c->records));
	if (c->record_index)
		munmap(c->record_index, c->nr_index_tids * sizeof(*c->record_index));
	topdown_bpf__destroy(c->skel); /* detach before the counters go */
	td_pmu_close(c->counters);
	if (c->stats_fd >= 0)
		close(c->stats_fd);
	for (size_t n = 0; n < c->nr_process_names; n++)
		free(c->process_names[n]);
	free(c->process_names);
	free(c->found);
	free(c->places_used);
	free(c->tracks.items);
	free(c->tracks.sums);
	free(c->tracks.index);
	free(c);
}

const char *td_collector_attach_kind(const struct td_collector *c)
{
	return c->attach_kind;
}

int td_collector_poll(struct td_collector *c, int timeout_ms, char *err, size_t errlen)
{
	int ret = ring_buffer__poll(c->exit_ring, timeout_ms);

	if (ret < 0 && ret != -EINTR) {
		snprintf(err, errlen, "reading thread exit records failed: %s", strerror(-ret));
		return ret;
	}
	return 0;
}

int td_collector_drain_samples(struct td_collector *c, td_raw_stack_fn fn, void *ctx, char *err, size_t errlen)
{
	if (!c->sampler)
		return 0;
	return td_sampler_drain(c->sampler, bpf_map__fd(c->skel->maps.sample_counts),
				bpf_map__fd(c->skel->maps.stack_traces), fn, ctx, err, errlen);
}

int td_collector_resample(struct td_collector *c, const struct td_sample_opts *opts, char *err, size_t errlen)
{
	if (!c->sampler) {
		snprintf(err, errlen, "this collector does not sample; start it with a sampling event");
		return -EINVAL;
	}
	return td_sampler_switch(c->sampler, c->skel->progs.on_sample, opts, c->sample_cpus, err, errlen);
}

void td_collector_sample_tally(const struct td_collector *c, struct td_sample_tally *tally)
{
	tally->samples = c->skel->bss->drops.samples;
	tally->lost_samples = c->skel->bss->drops.samples_lost;
	tally->lost_stacks = c->skel->bss->drops.stacks_lost;
}

/* Gives a record's place back to the programs; its thread is gone and no program holds it. */
static void free_place(struct td_collector *c, __u32 place)
{
	__atomic_store_n(&c->records[place].tid, 0, __ATOMIC_RELEASE);
	/* cannot fail: the stack holds every place, and this one was out of it */
	bpf_map_update_elem(bpf_map__fd(c->skel->maps.free_places), NULL, &place, 0);
}

/* One above the highest place any CPU gave out. */
static int places_used(struct td_collector *c, __u32 *used)
{
	__u32 zero = 0;

	*used = 0;
	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.places_used), &zero, c->places_used))
		return -errno;
	for (int cpu = 0; cpu < c->nr_cpus; cpu++)
		if (c->places_used[cpu] > *used)
			*used = c->places_used[cpu];
	return 0;
}

/*
 * Reads the records in place. The programs set a record's tid last, so
 * one with its tid set is whole; a tid that changed during the copy (the
 * thread died, its place went to another) is read at the next drain.
 * Threads whose exit record did not fit the ring are reaped here.
 */
static int read_records(struct td_collector *c)
{
	struct td_thread_stats copy;
	__u32 used;
	int ret;

	if ((ret = places_used(c, &used)))
		return ret;
	for (__u32 place = 0; place < used && place < c->max_threads; place++) {
		const struct td_thread_stats *record = &c->records[place];
		__u32 tid = __atomic_load_n(&record->tid, __ATOMIC_ACQUIRE);

		if (!tid)
			continue;
		memcpy(&copy, record, sizeof(copy));
		if (__atomic_load_n(&record->tid, __ATOMIC_ACQUIRE) != tid || copy.tid != tid)
			continue;
		if (track_update(c, &copy))
			return -ENOMEM;
		if (copy.exited == TD_EXIT_IN_MAP)
			free_place(c, place);
	}
	return 0;
}

/* Moves the changed tracks' deltas into the sums, and into interval's rows (when given). */
static int collect_changes(struct td_collector *c, struct td_interval *interval)
{
	size_t n = 0;

	for (size_t i = 0; interval && i < c->tracks.count; i++)
		n += track_changed(&c->tracks.items[i]);
	if (interval) {
		interval->threads = calloc(n + 1, sizeof(*interval->threads));
		if (!interval->threads)
			return -ENOMEM;
		interval->nr_threads = 0;
	}
	for (size_t i = 0; i < c->tracks.count; i++) {
		struct track *t = &c->tracks.items[i];

		if (!track_changed(t))
			continue;
		if (interval)
			interval_row(c, t, &interval->threads[interval->nr_threads++]);
		accumulate(c, i);
		t->base = t->now;
		t->reported_exit = t->now.exited;
		t->active = true;
	}
	return 0;
}

/* Charges every CPU's slice in flight and brings the tracks up to the kernel's totals. */
static int refresh_tracks(struct td_collector *c, char *err, size_t errlen)
{
	int ret;

	if ((ret = flush_cpus(c))) {
		snprintf(err, errlen, "cannot flush the CPUs' running slices: %s", strerror(-ret));
		return ret;
	}
	/* Exits first, then the live threads, then exits that raced the read. */
	ret = ring_buffer__consume(c->exit_ring);
	if (ret >= 0)
		ret = read_records(c);
	if (ret >= 0)
		ret = ring_buffer__consume(c->exit_ring);
	if (ret < 0) {
		snprintf(err, errlen, "draining the thread totals failed: %s", strerror(-ret));
		return ret;
	}
	return 0;
}

int td_collector_drain(struct td_collector *c, struct td_interval *interval,
		       char *err, size_t errlen)
{
	int ret = refresh_tracks(c, err, errlen);

	if (!ret)
		ret = add_named_targets(c, err, errlen);
	if (!ret && (ret = collect_changes(c, interval)))
		snprintf(err, errlen, "out of memory collecting the interval's threads");
	return ret;
}

int td_collector_activate_group(struct td_collector *c, size_t group, char *err, size_t errlen)
{
	int ret;

	if (group >= td_collector_group_count(c)) {
		snprintf(err, errlen, "counter group %zu does not exist (the plan has %zu)", group,
			 td_collector_group_count(c));
		return -EINVAL;
	}
	if (group == c->active_group)
		return 0;
	if ((ret = td_pmu_activate(c->counters, group, err, errlen)))
		return ret;
	c->active_group = group;
	c->skel->bss->untimed_slots = c->untimed_slots[group];
	/*
	 * A slice that began before the switch ends with a reading of another
	 * event (or of the same slot read with or without its times):
	 * flushing charges every such slice now (and starts the next ones on
	 * the new events); taking the totals as the new base discards what
	 * they charged.
	 */
	if ((ret = refresh_tracks(c, err, errlen)))
		return ret;
	for (size_t i = 0; i < c->tracks.count; i++) {
		struct track *t = &c->tracks.items[i];

		memcpy(t->base.slots, t->now.slots, sizeof(t->now.slots));
	}
	return 0;
}

int td_collector_rotate(struct td_collector *c, char *err, size_t errlen)
{
	return td_collector_activate_group(c, (c->active_group + 1) % td_collector_group_count(c), err, errlen);
}

/*
 * The rows of every track, or only of those active in the window: the
 * scheduling figures since the window began, each event's sum scaled to
 * the thread's counter time.
 */
static int window_rows(const struct td_collector *c, bool only_active, struct td_thread_row **rows,
		       size_t *count)
{
	size_t n = 0;

	*rows = calloc(c->tracks.count + 1, sizeof(**rows));
	if (!*rows)
		return -ENOMEM;
	for (size_t i = 0; i < c->tracks.count; i++) {
		const struct track *t = &c->tracks.items[i];
		const struct event_sum *sums = &c->tracks.sums[i * c->nr_events];
		struct td_thread_row *row = &(*rows)[n];
		struct td_counter_value ruler;

		if (only_active && !t->active)
			continue;
		row_from_sched_delta(&t->now, &t->window_base, row);
		if (c->ruler >= 0)
			scale_count(sums[c->ruler].count, t->counted_ns, sums[c->ruler].running, &ruler);
		for (size_t e = 0; e < c->nr_events; e++)
			window_counter(&sums[e], t->counted_ns, c->ruler >= 0 && (int)e != c->ruler ? &ruler : NULL,
				       &row->counters[e]);
		n++;
	}
	*count = n;
	return 0;
}

int td_collector_totals(const struct td_collector *c, struct td_thread_row **rows, size_t *count)
{
	return window_rows(c, false, rows, count);
}

size_t td_collector_starved_events(const struct td_collector *c, bool *starved)
{
	size_t marked = 0;

	for (size_t e = 0; e < c->nr_events; e++) {
		__u64 enabled = 0, running = 0;

		for (size_t i = 0; i < c->tracks.count; i++) {
			enabled += c->tracks.sums[i * c->nr_events + e].enabled;
			running += c->tracks.sums[i * c->nr_events + e].running;
		}
		starved[e] = enabled > 0 && running == 0;
		marked += starved[e];
	}
	return marked;
}

/* Gone without an exit record (its last switch unseen): nothing more will come. */
static bool track_vanished(const struct track *t)
{
	return !t->active && kill(t->now.tid, 0) && errno == ESRCH;
}

/* A vanished thread's record: out of the index, its place given back. */
static void forget_record(struct td_collector *c, __u32 tid)
{
	__u32 *entry = tid < c->nr_index_tids ? &c->record_index[tid] : NULL;
	__u32 place_plus_1 = entry ? __atomic_load_n(entry, __ATOMIC_ACQUIRE) : 0;

	/* no entry, or one the programs gave to a newer thread with this tid */
	if (!place_plus_1 || place_plus_1 > c->max_threads || c->records[place_plus_1 - 1].tid != tid)
		return;
	__atomic_store_n(entry, 0, __ATOMIC_RELEASE);
	free_place(c, place_plus_1 - 1);
}

/*
 * Keeps the tracks of live threads, each starting the next window; drops
 * exited and vanished ones (and the kernel's record of a vanished one).
 * The arrays shrink again after a burst of threads.
 */
static int forget_window(struct td_collector *c)
{
	struct track_table *t = &c->tracks;
	size_t kept = 0, cap, index_cap;

	for (size_t i = 0; i < t->count; i++) {
		struct track *track = &t->items[i];

		if (track->now.exited)
			continue;
		if (track_vanished(track)) {
			forget_record(c, track->now.tid);
			continue;
		}
		track->window_base = track->now;
		track->counted_ns = 0;
		track->active = false;
		if (kept != i)
			t->items[kept] = *track;
		memset(&t->sums[kept * t->nr_events], 0, t->nr_events * sizeof(*t->sums));
		kept++;
	}
	t->count = kept;
	for (cap = MIN_TRACKS; cap < 2 * kept; cap *= 2)
		;
	if (t->cap > 4 * cap && track_table_resize(t, cap))
		return -ENOMEM;
	for (index_cap = 1024; index_cap < 2 * (kept + 1); index_cap *= 2)
		;
	return t->index_cap ? track_index_build(t, index_cap) : 0;
}

/* Target processes that have exited leave the targets array (a pid can be reused). */
static void prune_targets(struct td_collector *c)
{
	const __u8 *end = c->targets + c->nr_target_pids;

	if (!c->nr_process_names) /* --pid targets are the user's to name */
		return;
	for (__u8 *p = c->targets; (p = memchr(p, 1, end - p)); p++) {
		pid_t tgid = p - c->targets;

		if (kill(tgid, 0) && errno == ESRCH)
			__atomic_store_n(p, 0, __ATOMIC_RELAXED);
	}
}

/* A kernel thread a name matched (--process kworker/0:1) never exits: it runs. */
static bool runs(pid_t pid)
{
	enum td_proc_state state = td_proc_state("/proc", pid);

	return state == TD_PROC_RUNNING || state == TD_PROC_KERNEL_THREAD;
}

bool td_collector_targets_running(struct td_collector *c)
{
	const __u8 *end = c->targets + c->nr_target_pids;
	pid_t last = c->running_target;

	if (c->system_wide)
		return true;
	/* Usually the one found last time runs on: one stat file read. */
	if (last && __atomic_load_n(&c->targets[last], __ATOMIC_RELAXED) && runs(last))
		return true;
	for (__u8 *p = c->targets; (p = memchr(p, 1, end - p)); p++) {
		pid_t tgid = p - c->targets;
		enum td_proc_state state = td_proc_state("/proc", tgid);

		if (state == TD_PROC_RUNNING || state == TD_PROC_KERNEL_THREAD) {
			c->running_target = tgid;
			return true;
		}
		/* A process followed by name that is gone leaves for good: its pid may be reused. */
		if (c->nr_process_names && state == TD_PROC_GONE)
			__atomic_store_n(p, 0, __ATOMIC_RELAXED);
	}
	c->running_target = 0;
	return false;
}

int td_collector_end_window(struct td_collector *c, struct td_thread_row **rows, size_t *count,
			    char *err, size_t errlen)
{
	int ret = window_rows(c, true, rows, count);

	if (!ret && (ret = forget_window(c))) {
		free(*rows);
		*rows = NULL;
	}
	if (ret) {
		snprintf(err, errlen, "out of memory ending the window");
		return ret;
	}
	prune_targets(c);
	return 0;
}

void td_collector_pause(struct td_collector *c)
{
	c->skel->bss->paused = 1;
}

int td_collector_resume(struct td_collector *c, char *err, size_t errlen)
{
	int ret;

	c->skel->bss->epoch++;
	c->skel->bss->paused = 0;
	/* Slices open on the threads running now; nothing before this counts. */
	if ((ret = refresh_tracks(c, err, errlen)))
		return ret;
	for (size_t i = 0; i < c->tracks.count; i++) {
		struct track *t = &c->tracks.items[i];

		t->base = t->now;
		t->window_base = t->now;
	}
	return 0;
}

uint64_t td_collector_unread_ns(const struct td_collector *c, uint32_t tid)
{
	uint64_t unread = 0;

	for (size_t i = 0; i < c->tracks.count; i++)
		if (c->tracks.items[i].now.tid == tid)
			unread += c->tracks.items[i].now.unread_oncpu_ns;
	return unread;
}

uint64_t td_collector_dropped(const struct td_collector *c)
{
	return c->skel->bss->drops.slices;
}

size_t td_collector_group_count(const struct td_collector *c)
{
	return c->plan.nr_groups ? c->plan.nr_groups : 1;
}

uint64_t td_collector_lost_threads(const struct td_collector *c)
{
	return c->skel->bss->drops.threads;
}

uint64_t td_collector_exits_kept(const struct td_collector *c)
{
	return c->skel->bss->drops.exits_in_map;
}

bool td_collector_bpf_always_timed(void)
{
	FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "re");
	int on = 0;

	if (f) {
		if (fscanf(f, "%d", &on) != 1)
			on = 0;
		fclose(f);
	}
	return on;
}

int td_collector_bpf_run_ns(const struct td_collector *c, uint64_t *run_ns, char *err, size_t errlen)
{
	struct bpf_program *prog;

	*run_ns = 0;
	if (c->stats_fd < 0 && !td_collector_bpf_always_timed()) {
		snprintf(err, errlen, "the kernel is not timing BPF programs: turning that on needs CAP_SYS_ADMIN "
			 "(or set kernel.bpf_stats_enabled=1)");
		return -EOPNOTSUPP;
	}
	bpf_object__for_each_program(prog, c->skel->obj) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0) /* the other tracepoint flavour, not loaded */
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
			snprintf(err, errlen, "cannot read the BPF programs' run time: %s", strerror(errno));
			return -errno;
		}
		*run_ns += info.run_time_ns;
	}
	return 0;
}

int td_collector_time_bpf(struct td_collector *c, bool on, char *err, size_t errlen)
{
	int fd;

	if (!on && c->stats_fd >= 0) {
		close(c->stats_fd); /* the kernel stops timing when the last holder lets go */
		c->stats_fd = -1;
	} else if (on && c->stats_fd < 0) {
		if ((fd = bpf_enable_stats(BPF_STATS_RUN_TIME)) < 0) { /* libbpf: -errno */
			snprintf(err, errlen, "cannot turn on the kernel's timing of BPF programs: %s%s", strerror(-fd),
				 fd == -EPERM ? "; that needs CAP_SYS_ADMIN (or set kernel.bpf_stats_enabled=1)" : "");
			return fd;
		}
		c->stats_fd = fd;
	}
	return 0;
}

size_t td_collector_processes_named(const struct td_collector *c, size_t name)
{
	return name < c->nr_process_names ? c->found[name] : 0;
}

size_t td_collector_thread_count(const struct td_collector *c)
{
	return c->tracks.count;
}
