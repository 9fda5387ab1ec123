// SPDX-License-Identifier: BSD-3-Clause
/*
 * The preparation `topdown collect` and `topdown agent` share: host
 * check, counter choice, engine, labels (see collect_setup.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "collect_setup.h"
#include "cpuinfo.h"
#include "events_plan.h"
#include "hostinfo.h"
#include "kb.h"
#include "pmu.h"
#include "procmatch.h"

void td_tma_choice_release(struct td_tma_choice *tma)
{
	td_engine_free(tma->engine);
	free(tma->setup);
	free(tma->events_plan);
	tma->engine = NULL;
	tma->setup = NULL;
	tma->events_plan = NULL;
}

const struct td_counter_plan *td_tma_choice_plan(const struct td_tma_choice *tma)
{
	return tma->setup ? &tma->setup->plan : tma->events_plan;
}

/* The groups of the events the user listed, for the PMU's free counters where it has some. */
static int plan_events(const struct td_event *events, size_t nr_events, bool hardware, struct td_tma_choice *tma,
		       char *err, size_t errlen)
{
	if (!(tma->events_plan = malloc(sizeof(*tma->events_plan)))) {
		snprintf(err, errlen, "out of memory planning the counters");
		return -ENOMEM;
	}
	if (!hardware)
		return td_events_plan_unprobed(events, nr_events, TD_MAX_SLOTS, tma->events_plan, err, errlen);
	return td_events_plan(events, nr_events, tma->events_plan, tma->counters_note, sizeof(tma->counters_note),
			      err, errlen);
}

static bool has_capability(int cap)
{
	struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };

	if (syscall(SYS_capget, &header, data))
		return false;
	return data[cap / 32].effective & (1u << (cap % 32));
}

int td_kernel_check(const char *release, char *err, size_t errlen)
{
	unsigned major = 0, minor = 0;

	if (sscanf(release, "%u.%u", &major, &minor) != 2) {
		snprintf(err, errlen, "cannot read the kernel version from '%.64s'", release);
		return -EINVAL;
	}
	if (major > TD_MIN_KERNEL_MAJOR || (major == TD_MIN_KERNEL_MAJOR && minor >= TD_MIN_KERNEL_MINOR))
		return 0;
	snprintf(err, errlen, "kernel %.64s is older than %d.%d: it cannot run a BPF program on a chosen CPU "
		 "(BPF_F_TEST_RUN_ON_CPU, 5.10)%s, which topdown needs to count threads that never switch; "
		 "use a kernel of %d.%d or later", release, TD_MIN_KERNEL_MAJOR, TD_MIN_KERNEL_MINOR,
		 major < 5 || (major == 5 && minor < 8) ? " nor has BPF ring buffers (5.8)" : "",
		 TD_MIN_KERNEL_MAJOR, TD_MIN_KERNEL_MINOR);
	return -ENOTSUP;
}

int td_collect_check_host(char *err, size_t errlen)
{
	struct utsname host;

	if (geteuid() != 0 && !(has_capability(CAP_BPF) && has_capability(CAP_PERFMON))) {
		snprintf(err, errlen, "collecting needs root, or CAP_BPF and CAP_PERFMON: run it with sudo, "
			 "or grant them with `setcap cap_bpf,cap_perfmon+ep $(command -v topdown)`");
		return -EPERM;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		snprintf(err, errlen, "this kernel exposes no BTF (/sys/kernel/btf/vmlinux: %s); topdown's CO-RE "
			 "programs need a kernel built with CONFIG_DEBUG_INFO_BTF=y", strerror(errno));
		return -ENOTSUP;
	}
	uname(&host);
	return td_kernel_check(host.release, err, errlen);
}

/*
 * The model and the counters of a Top-Down collection at level. A CPU
 * without definitions or a host without the model's PMU leaves TMA
 * unavailable (tma->unavailable says why); a level the model cannot do
 * is the user's mistake (an error).
 */
static int prepare_tma(const char *cpu_model, long level, struct td_tma_choice *tma, char *err, size_t errlen)
{
	const struct td_kb *kb = td_kb_load(err, errlen);
	const struct td_model *model;
	struct td_cpuinfo cpu;
	int ret;

	if (!kb)
		return -EINVAL;
	if ((ret = td_cpuinfo_read("", &cpu, err, errlen)))
		return ret;
	ret = td_tma_choose_model(kb, cpu_model, &cpu, &model, tma->unavailable, sizeof(tma->unavailable));
	if (ret == -EINVAL) { /* a --cpu-model this host cannot be */
		snprintf(err, errlen, "%s", tma->unavailable);
		tma->unavailable[0] = '\0';
		return ret;
	}
	if (ret)
		return 0;
	if (!(tma->setup = malloc(sizeof(*tma->setup)))) {
		snprintf(err, errlen, "out of memory choosing the Top-Down counters");
		return -ENOMEM;
	}
	ret = td_tma_setup(model, level, "", &cpu, tma->setup, err, errlen);
	if (!ret) /* plan for the counters the PMU gives now, not the datasheet's */
		ret = td_tma_probe(tma->setup, tma->counters_note, sizeof(tma->counters_note), err, errlen);
	if (ret == -ENODEV || ret == -ENOSPC) { /* the host lacks the model's PMU, or others hold its counters */
		snprintf(tma->unavailable, sizeof(tma->unavailable), "%s", err);
		err[0] = '\0';
		ret = 0;
	}
	if (ret || tma->unavailable[0]) {
		free(tma->setup);
		tma->setup = NULL;
	}
	return ret;
}

int td_collect_choose_events(const char *cpu_model, long level, bool events_given,
			     struct td_event *events, size_t *nr_events, struct td_tma_choice *tma,
			     char *err, size_t errlen)
{
	char why[256];
	bool hardware = td_pmu_hardware_available(why, sizeof(why));
	int ret;

	tma->wanted = !events_given;
	if (events_given)
		return plan_events(events, *nr_events, hardware, tma, err, errlen);
	if (!hardware)
		snprintf(tma->unavailable, sizeof(tma->unavailable), "%s", why);
	else if ((ret = prepare_tma(cpu_model, level, tma, err, errlen)))
		return ret;
	if (tma->setup) {
		*nr_events = tma->setup->nr_events;
		memcpy(events, tma->setup->events, *nr_events * sizeof(events[0]));
		return 0;
	}
	return td_event_list_parse(hardware ? "task-clock,cycles,instructions" : "task-clock",
				   events, TD_MAX_EVENTS, nr_events, err, errlen);
}

int td_collect_new_engine(struct td_tma_choice *tma, const char *const *event_names, size_t nr_events,
			  char *err, size_t errlen)
{
	if (!tma->setup)
		return 0;
	tma->engine = td_engine_new(tma->setup->model, tma->setup->depth, event_names, nr_events,
				    &tma->setup->facts, err, errlen);
	return tma->engine ? 0 : -EINVAL;
}

int td_collect_base_labels(const struct td_tma_choice *tma, long level, struct td_labels *labels,
			   char *err, size_t errlen)
{
	char value[32];
	int ret = td_hostinfo_labels("", labels, err, errlen);

	if (ret)
		return ret;
	snprintf(value, sizeof(value), "%ld", level);
	ret = td_labels_set(labels, "collector", "bpf");
	if (!ret && tma->wanted)
		ret = td_labels_set(labels, "tma_level", value);
	if (!ret && tma->setup)
		ret = td_labels_set(labels, "tma_model", tma->setup->model->name);
	/* what the formulas took from the host, so that a query can evaluate them again
	 * over pooled counts (query.h, "Pooled") */
	if (!ret && tma->setup)
		ret = td_labels_set(labels, "smt", tma->setup->facts.smt_on ? "on" : "off");
	if (!ret && tma->setup && tma->setup->facts.slots_per_cycle) {
		snprintf(value, sizeof(value), "%u", tma->setup->facts.slots_per_cycle);
		ret = td_labels_set(labels, "pmu_slots", value);
	}
	if (!ret && tma->setup && tma->setup->probe.done) { /* what the PMU gave: runs of VM sizes differ */
		snprintf(value, sizeof(value), "%u", tma->setup->budget.gp_counters);
		ret = td_labels_set(labels, "pmu_gp_free", value);
		snprintf(value, sizeof(value), "%d/%u", __builtin_popcount(tma->setup->probe.fixed_free),
			 tma->setup->probe.nr_fixed);
		if (!ret)
			ret = td_labels_set(labels, "pmu_fixed_free", value);
	}
	if (ret)
		snprintf(err, errlen, "out of memory building labels");
	return ret;
}

int td_collect_target_labels(const char *process_name, const char *pids, pid_t first_pid,
			     struct td_labels *labels, char *err, size_t errlen)
{
	char comm[TD_COMM_LEN];
	int ret = 0;

	if (process_name)
		ret = td_labels_set(labels, "comm", process_name);
	if (!ret && first_pid && td_proc_comm("/proc", first_pid, comm, sizeof(comm)) == 0)
		ret = td_labels_set(labels, "comm", comm);
	if (!ret && pids)
		ret = td_labels_set(labels, "pid", pids);
	if (ret) {
		snprintf(err, errlen, "out of memory building labels");
		return ret;
	}
	if (first_pid && (ret = td_hostinfo_process_labels("", first_pid, labels, err, errlen)) == -ENOENT) {
		err[0] = '\0'; /* it has exited since: no cgroup to tell */
		ret = 0;
	}
	return ret;
}

int td_collect_sample_for_node(const struct td_tma_setup *setup, const char *node, struct td_event *out,
			       bool *precise, char *err, size_t errlen)
{
	const char *name = td_model_sample_event(setup->model, node, precise);
	const struct td_event_def *def;

	if (!name) {
		snprintf(err, errlen, "%s has no Top-Down node '%s'; `topdown explain --list --model %s` shows its tree",
			 setup->model->long_name, node, setup->model->name);
		return -ENOENT;
	}
	def = td_model_event(setup->model, name);
	if (def) /* with the kb's encoding, on the PMU the counters use */
		return td_tma_bind_event(def, setup->pmu_type, out, err, errlen);
	return td_event_resolve(name, out, err, errlen); /* TD_SAMPLE_CYCLES */
}

/* Appends one sentence to the notice, after a "; " when it says something already. */
static void add_notice(char *notice, size_t len, const char *fmt, ...)
{
	size_t used = strlen(notice);
	va_list ap;

	if (used && used + 2 < len) {
		strcpy(notice + used, "; ");
		used += 2;
	}
	va_start(ap, fmt);
	if (used < len)
		vsnprintf(notice + used, len - used, fmt, ap);
	va_end(ap);
}

int td_collect_choose_sample(const char *requested, const char *node, const struct td_tma_choice *tma,
			     uint64_t frequency_hz, struct td_sample_opts *out, char *notice, size_t noticelen,
			     char *err, size_t errlen)
{
	uint64_t cap = td_sampler_max_frequency();
	char why[256] = "";
	int ret;

	memset(out, 0, sizeof(*out));
	notice[0] = '\0';
	if (requested) {
		ret = td_event_resolve(requested, &out->event, err, errlen);
		if (ret) {
			snprintf(err, errlen, "unknown sampling event '%s'; `perf list` shows this host's events, "
				 "and cpu-clock works everywhere", requested);
			return ret;
		}
	} else if (!td_pmu_hardware_available(why, sizeof(why))) {
		ret = td_event_resolve("cpu-clock", &out->event, err, errlen);
		if (ret)
			return ret;
		add_notice(notice, noticelen, "sampling cpu-clock (time on CPU): %s", why);
	} else if (node && tma->setup) {
		ret = td_collect_sample_for_node(tma->setup, node, &out->event, &out->precise, err, errlen);
		if (ret)
			return ret;
	} else {
		ret = td_event_resolve(TD_SAMPLE_CYCLES, &out->event, err, errlen);
		if (ret)
			return ret;
		if (node)
			add_notice(notice, noticelen, "sampling cycles, not %s's own event: %s", node,
				   tma->wanted ? tma->unavailable : "--events leaves the Top-Down tree out");
	}
	out->frequency_hz = frequency_hz;
	if (cap && frequency_hz > cap) {
		out->frequency_hz = cap;
		add_notice(notice, noticelen, "%llu Hz is above this kernel's cap (kernel.perf_event_max_sample_rate): "
			   "sampling at %llu Hz", (unsigned long long)frequency_hz, (unsigned long long)cap);
	}
	return 0;
}
