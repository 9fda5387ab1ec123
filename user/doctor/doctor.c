// SPDX-License-Identifier: BSD-3-Clause
/*
 * doctor: the host's checks (doctor.h). Each probe does the smallest thing
 * that proves a feature: loading a two-instruction program, creating a
 * ring buffer, running a program on a CPU, opening a counter. Nothing is
 * left behind but the default store's directory, which collect would make.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collect_setup.h"
#include "collector.h"
#include "cpuinfo.h"
#include "doctor.h"
#include "events.h"
#include "fileio.h"
#include "kb.h"
#include "pmu.h"
#include "storage.h"
#include "tma_events.h"

#define VERIFY_LOOP_MS 300
#define VERIFY_TOLERANCE 0.02 /* the collector's end-to-end accuracy bound */

const char *td_check_status_name(enum td_check_status status)
{
	return status == TD_CHECK_OK ? "ok" : status == TD_CHECK_WARN ? "warn" : "fail";
}

static struct td_check *add(struct td_doctor_report *r, const char *name, enum td_check_status status,
			    const char *fix, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static struct td_check *add(struct td_doctor_report *r, const char *name, enum td_check_status status,
			    const char *fix, const char *fmt, ...)
{
	struct td_check *c = &r->checks[r->count < TD_DOCTOR_MAX_CHECKS ? r->count++ : TD_DOCTOR_MAX_CHECKS - 1];
	va_list ap;

	c->name = name;
	c->status = status;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
	snprintf(c->fix, sizeof(c->fix), "%s", status == TD_CHECK_OK || !fix ? "" : fix);
	if (status == TD_CHECK_FAIL)
		r->can_collect = false;
	return c;
}

/* A sysctl's first line, or "" when it cannot be read. */
static void read_sysctl(const char *path, char *buf, size_t len)
{
	if (td_read_first_line(path, buf, len))
		buf[0] = '\0';
}

/* ---- kernel and BPF ---- */

static void check_kernel(struct td_doctor_report *r)
{
	struct utsname u;
	char err[320];

	uname(&u);
	if (td_kernel_check(u.release, err, sizeof(err)))
		add(r, "kernel", TD_CHECK_FAIL, NULL, "%s", err);
	else
		add(r, "kernel", TD_CHECK_OK, NULL, "Linux %s on %s", u.release, u.machine);
}

static bool check_privileges(struct td_doctor_report *r)
{
	char err[320];

	if (td_collect_check_host(err, sizeof(err)) == -EPERM) {
		add(r, "privileges", TD_CHECK_FAIL, "run `topdown doctor` and `topdown collect` with sudo, or grant "
		    "CAP_BPF and CAP_PERFMON", "not root, and without CAP_BPF and CAP_PERFMON");
		return false;
	}
	add(r, "privileges", TD_CHECK_OK, NULL, geteuid() == 0 ? "root" : "CAP_BPF and CAP_PERFMON");
	return true;
}

static bool check_btf(struct td_doctor_report *r)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		add(r, "btf", TD_CHECK_FAIL, "use a kernel built with CONFIG_DEBUG_INFO_BTF=y (every major "
		    "distribution's since 2020)", "no kernel BTF (/sys/kernel/btf/vmlinux: %s)", strerror(errno));
		return false;
	}
	add(r, "btf", TD_CHECK_OK, NULL, "kernel BTF at /sys/kernel/btf/vmlinux");
	return true;
}

static const struct bpf_insn return_zero[] = {
	{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
	{ .code = BPF_JMP | BPF_EXIT },
};

static void check_flavour(struct td_doctor_report *r)
{
	if (td_collector_tp_btf_supported())
		add(r, "programs", TD_CHECK_OK, NULL, "tp_btf programs load on sched_switch (direct field reads)");
	else
		add(r, "programs", TD_CHECK_OK, NULL, "raw_tp programs (this kernel loads no tp_btf on "
		    "sched_switch; each field read goes through bpf_probe_read)");
}

static void check_ring_buffer(struct td_doctor_report *r)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "td_doctor", 0, 0, 4096, NULL);

	if (fd < 0) {
		add(r, "ring_buffer", TD_CHECK_FAIL, "use a kernel of 5.8 or later",
		    "cannot create a BPF ring buffer: %s", strerror(errno));
		return;
	}
	close(fd);
	add(r, "ring_buffer", TD_CHECK_OK, NULL, "BPF ring buffers (thread exit records)");
}

/* The collector flushes each CPU with a program run there (BPF_F_TEST_RUN_ON_CPU). */
static void check_test_run(struct td_doctor_report *r)
{
	int fd = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "td_doctor", "GPL", return_zero, 2, NULL);
	LIBBPF_OPTS(bpf_test_run_opts, run, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = 0);
	int ret;

	if (fd < 0) {
		add(r, "cpu_flush", TD_CHECK_FAIL, "use a kernel of 5.10 or later",
		    "cannot load a raw_tp program: %s", strerror(errno));
		return;
	}
	ret = bpf_prog_test_run_opts(fd, &run);
	close(fd);
	if (ret) {
		add(r, "cpu_flush", TD_CHECK_FAIL, "use a kernel of 5.10 or later (BPF_F_TEST_RUN_ON_CPU)",
		    "cannot run a program on CPU 0 (BPF_PROG_TEST_RUN): %s", strerror(-ret));
		return;
	}
	add(r, "cpu_flush", TD_CHECK_OK, NULL, "programs run on a chosen CPU (threads that never switch are counted)");
}

static void check_sysctls(struct td_doctor_report *r)
{
	char paranoid[16], stats[16];
	struct rlimit memlock;

	read_sysctl("/proc/sys/kernel/perf_event_paranoid", paranoid, sizeof(paranoid));
	if (geteuid() != 0 && atoi(paranoid) > 1)
		add(r, "perf_event_paranoid", TD_CHECK_WARN,
		    "without root, CPU-wide counters need CAP_PERFMON or `sysctl -w kernel.perf_event_paranoid=-1`",
		    "kernel.perf_event_paranoid = %s", paranoid[0] ? paranoid : "unknown");
	else
		add(r, "perf_event_paranoid", TD_CHECK_OK, NULL, "kernel.perf_event_paranoid = %s%s",
		    paranoid[0] ? paranoid : "unknown", geteuid() == 0 ? " (root is not bound by it)" : "");
	read_sysctl("/proc/sys/kernel/bpf_stats_enabled", stats, sizeof(stats));
	if (geteuid() != 0 && strcmp(stats, "1") != 0)
		add(r, "bpf_stats", TD_CHECK_WARN, "`sysctl -w kernel.bpf_stats_enabled=1` for the agent's agent.bpf_ms",
		    "kernel.bpf_stats_enabled = %s, and no CAP_SYS_ADMIN: the agent cannot time its programs",
		    stats[0] ? stats : "unknown");
	else
		add(r, "bpf_stats", TD_CHECK_OK, NULL, "the agent can time its BPF programs (kernel.bpf_stats_enabled = %s%s)",
		    stats[0] ? stats : "unknown", geteuid() == 0 ? ", or as root" : "");
	getrlimit(RLIMIT_MEMLOCK, &memlock);
	if (memlock.rlim_cur == RLIM_INFINITY)
		add(r, "memlock", TD_CHECK_OK, NULL, "RLIMIT_MEMLOCK unlimited");
	else
		add(r, "memlock", TD_CHECK_OK, NULL, "RLIMIT_MEMLOCK %llu KiB (kernels from 5.11 charge BPF maps "
		    "to the memory cgroup instead; libbpf raises it on older ones)",
		    (unsigned long long)memlock.rlim_cur / 1024);
}

/* ---- the PMU and Top-Down ---- */

static bool in_vm(void)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[4096];
	bool vm = false;

	while (f && !vm && fgets(line, sizeof(line), f))
		vm = !strncmp(line, "flags", 5) && strstr(line, " hypervisor");
	if (f)
		fclose(f);
	return vm;
}

/* Levels 1-3: one counter group, or how many that take turns. */
static void check_levels(struct td_doctor_report *r, const struct td_model *model, const struct td_cpuinfo *cpu)
{
	char detail[640] = "", err[256];
	size_t used = 0;

	for (int level = 1; level <= 3; level++) {
		struct td_tma_setup *setup = calloc(1, sizeof(*setup));

		if (!setup || td_tma_setup(model, level, "", cpu, setup, err, sizeof(err))) {
			used += snprintf(detail + used, sizeof(detail) - used, "%slevel %d: %s", level > 1 ? "; " : "",
					 level, setup ? err : "out of memory");
		} else {
			if (level == 1 && setup->model != model) /* a general-counter variant: name it, once */
				used += snprintf(detail + used, sizeof(detail) - used, "%s; ", setup->variant);
			used += snprintf(detail + used, sizeof(detail) - used, "%slevel %d: %zu events, %s", level > 1 ? "; " : "",
					 level, setup->nr_events, setup->plan.nr_groups <= 1 ? "one group" : "");
			if (setup->plan.nr_groups > 1)
				used += snprintf(detail + used, sizeof(detail) - used, "%zu groups in turn",
						 setup->plan.nr_groups);
		}
		free(setup);
		if (used >= sizeof(detail))
			break;
	}
	add(r, "tma_levels", TD_CHECK_OK, NULL, "%s", detail);
}

/* What the PMU gives now against what the model documents (td_tma_probe on level 1's events). */
static void check_counters(struct td_doctor_report *r, const struct td_model *model, const struct td_cpuinfo *cpu)
{
	struct td_tma_setup *setup = calloc(1, sizeof(*setup));
	struct td_doctor_counters *c = &r->counters;
	char err[320] = "";
	int ret = setup ? td_tma_setup(model, 1, "", cpu, setup, err, sizeof(err)) : -ENOMEM;

	if (!ret) /* the numbers are the report; the plan's note would say them again */
		ret = td_tma_probe(setup, NULL, 0, err, sizeof(err));
	if (setup && setup->probe.done) {
		c->probed = true;
		c->gp_free = setup->probe.gp_free;
		c->gp_documented = cpu->smt_on ? setup->model->gp_counters : setup->model->gp_counters_smt_off;
		c->fixed_free = __builtin_popcount(setup->probe.fixed_free);
		c->fixed_documented = setup->probe.nr_fixed;
	}
	if (ret)
		add(r, "pmu_counters", TD_CHECK_WARN, "stop the other monitor holding them, then run topdown again",
		    "%s", setup ? err : "out of memory");
	else if (!c->probed)
		add(r, "pmu_counters", TD_CHECK_WARN, NULL, "not probed: no event of %s opened on PMU %s",
		    setup->model->long_name, setup->pmu);
	else
		add(r, "pmu_counters", c->gp_free < c->gp_documented ? TD_CHECK_WARN : TD_CHECK_OK,
		    c->gp_free < c->gp_documented ? "fewer counters mean more counter groups taking turns: "
		    "a larger or metal instance, or stopping other monitors, gives more" : NULL,
		    "%u of %u general-purpose counters free%s; %s", c->gp_free, c->gp_documented,
		    setup->probe.gp_more ? " (the PMU has more than the model documents: the model's count is used)" : "",
		    !c->fixed_documented ? "no fixed counter in level 1" :
		    c->fixed_free == c->fixed_documented ? "the fixed counters level 1 uses are free" :
		    model->vendor == TD_VENDOR_INTEL ? "a fixed counter is taken" : "the cycle counter is taken");
	free(setup);
}

static void check_pmu_and_model(struct td_doctor_report *r)
{
	const struct td_kb *kb;
	const struct td_model *model;
	struct td_cpuinfo cpu;
	char why[320], err[320], watchdog[8];
	bool hardware = td_pmu_hardware_available(why, sizeof(why));
	bool denied = !hardware && (errno == EACCES || errno == EPERM);

	if (hardware)
		add(r, "pmu", TD_CHECK_OK, NULL, "hardware counters open");
	else if (denied)
		add(r, "pmu", TD_CHECK_WARN, "run `topdown doctor` with sudo, or grant CAP_PERFMON", "%s: whether this host has a PMU is unknown", why);
	else
		add(r, "pmu", TD_CHECK_WARN, in_vm() ? "enable the virtual PMU of this VM (KVM/QEMU: -cpu host,pmu=on; "
		    "clouds: an instance type with PMU access, e.g. a metal or full-socket one)" :
		    "check `perf stat -e cycles true`; without counters only scheduling figures and software events are collected",
		    "%s: Top-Down is unavailable, collection keeps the scheduling figures and software counters", why);
	if (td_cpuinfo_read("", &cpu, err, sizeof(err)) || !(kb = td_kb_load(err, sizeof(err)))) {
		add(r, "tma_model", TD_CHECK_WARN, NULL, "%s", err);
		return;
	}
	if (td_tma_choose_model(kb, NULL, &cpu, &model, err, sizeof(err))) {
		add(r, "tma_model", TD_CHECK_WARN, "pass --cpu-model NAME if this CPU is one of the known models "
		    "(topdown explain --list --model NAME shows one)", "%s (%s)", err, cpu.model_name);
		return;
	}
	add(r, "tma_model", TD_CHECK_OK, NULL, "%s (%s); its datasheet gives %u general-purpose counters per thread "
	    "with SMT, %u without",
	    model->name, model->long_name, model->gp_counters, model->gp_counters_smt_off);
	read_sysctl("/proc/sys/kernel/nmi_watchdog", watchdog, sizeof(watchdog));
	if (model->vendor == TD_VENDOR_INTEL && strcmp(watchdog, "1") == 0)
		add(r, "nmi_watchdog", TD_CHECK_WARN, "`sysctl -w kernel.nmi_watchdog=0` frees it",
		    "the NMI watchdog holds one general-purpose counter");
	else
		add(r, "nmi_watchdog", TD_CHECK_OK, NULL, "holds no counter (kernel.nmi_watchdog = %s)",
		    watchdog[0] ? watchdog : "absent");
	if (hardware) {
		check_counters(r, model, &cpu);
		check_levels(r, model, &cpu);
	} else {
		add(r, "tma_levels", TD_CHECK_WARN, NULL, denied ?
		    "levels 1-3: cannot be checked without access to the counters" :
		    "levels 1-3: no counters to place without a PMU");
	}
}

/* ---- the store ---- */

static void check_store(struct td_doctor_report *r, const struct td_doctor_opts *opts)
{
	char path[4096], err[512], where[512];
	const char *backend = NULL;
	struct td_store *store;

	if (td_store_flags_backend(opts->store, opts->db, &backend, err, sizeof(err))) {
		add(r, "store", TD_CHECK_FAIL, NULL, "%s", err);
		return;
	}
	if (!strcmp(backend, "sqlite")) {
		if (td_store_default_path(opts->db, TD_STORE_READ_WRITE, path, sizeof(path), err, sizeof(err))) {
			add(r, "store", TD_CHECK_FAIL, NULL, "%s", err);
			return;
		}
		if (access(path, F_OK)) { /* not there yet: collect creates it, if it may */
			char *slash = strrchr(path, '/');
			const char *dir = slash == path ? "/" : slash ? (*slash = '\0', path) : ".";

			if (access(dir, W_OK))
				add(r, "store", TD_CHECK_FAIL, "pass --db with a writable path or set TOPDOWN_DB_PATH",
				    "SQLite: cannot create a database in %s: %s", dir, strerror(errno));
			else
				add(r, "store", TD_CHECK_OK, NULL, "SQLite: %s/%s will be created by the first run", dir,
				    slash ? slash + 1 : path);
			return;
		}
	}
	store = td_store_open_flags(opts->store, opts->db, TD_STORE_READ_WRITE, where, sizeof(where), err, sizeof(err));
	if (!store) {
		add(r, "store", TD_CHECK_FAIL, NULL, "%s", err);
		return;
	}
	add(r, "store", TD_CHECK_OK, NULL, "%s at %s, schema version %d", backend, where,
	    td_store_schema_version(store));
	td_store_close(store);
}

/* ---- --verify ---- */

static atomic_bool loop_stop;
static atomic_int loop_tid;

static void *spin(void *arg)
{
	volatile unsigned long x = 0;

	(void)arg;
	atomic_store(&loop_tid, gettid());
	while (!atomic_load_explicit(&loop_stop, memory_order_relaxed))
		x++;
	return NULL;
}

static int open_per_thread(const struct td_event *event, pid_t tid)
{
	struct perf_event_attr attr = { .size = sizeof(attr), .type = event->type, .config = event->config,
					.config1 = event->config1, .config2 = event->config2 };

	return syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/*
 * A spinning thread of this process counted for VERIFY_LOOP_MS twice at
 * once: by the BPF collector (per-CPU counters read at each switch) and
 * by a plain per-thread perf_event_open count. Both readings bracket the
 * collector's, so their difference is what the collector may be off.
 */
static bool read_count(int fd, uint64_t *out)
{
	return read(fd, out, sizeof(*out)) == sizeof(*out);
}

/* reference: the loop's per-thread count over at least, and at most, the collector's span */
static int verify_event(const char *name, double *collected, double reference[2], char *err, size_t errlen)
{
	struct td_event event;
	size_t n = 0;
	pid_t self = getpid();
	struct td_collector_opts copts = { .pids = &self, .nr_pids = 1, .events = &event, .nr_events = 1 };
	struct td_collector *c = NULL;
	struct td_interval interval = { 0 };
	uint64_t start[2] = { 0 }, end[2] = { 0 }; /* just before, just after the collector's reading */
	pthread_t thread;
	int fd = -1, ret;

	if ((ret = td_event_list_parse(name, &event, 1, &n, err, errlen)))
		return ret;
	atomic_store(&loop_stop, false);
	atomic_store(&loop_tid, 0);
	if ((ret = -pthread_create(&thread, NULL, spin, NULL))) {
		snprintf(err, errlen, "cannot start the loop thread: %s", strerror(-ret));
		return ret;
	}
	while (!atomic_load(&loop_tid))
		usleep(1000);
	if ((fd = open_per_thread(&event, atomic_load(&loop_tid))) < 0) {
		ret = -errno;
		snprintf(err, errlen, "perf_event_open of %s for the loop thread: %s", name, strerror(errno));
	}
	if (!ret && !read_count(fd, &start[0]))
		ret = -EIO;
	if (!ret && !(c = td_collector_new(&copts, err, errlen)))
		ret = -EINVAL;
	if (!ret && !read_count(fd, &start[1]))
		ret = -EIO;
	if (!ret) {
		usleep(VERIFY_LOOP_MS * 1000);
		ret = read_count(fd, &end[0]) ? td_collector_drain(c, &interval, err, errlen) : -EIO;
	}
	if (!ret && !read_count(fd, &end[1]))
		ret = -EIO;
	atomic_store(&loop_stop, true);
	pthread_join(thread, NULL);
	if (ret == -EIO)
		snprintf(err, errlen, "cannot read the per-thread %s count", name);
	*collected = NAN;
	for (size_t i = 0; !ret && i < interval.nr_threads; i++)
		if ((pid_t)interval.threads[i].tid == atomic_load(&loop_tid))
			*collected = interval.threads[i].counters[0].value;
	reference[0] = (double)(end[0] - start[1]);
	reference[1] = (double)(end[1] - start[0]);
	free(interval.threads);
	td_collector_free(c);
	if (fd >= 0)
		close(fd);
	return ret;
}

static void verify_one(struct td_doctor_report *r, const char *name)
{
	double collected = NAN, reference[2] = { 0 };
	char err[320] = "";
	int ret = verify_event(name, &collected, reference, err, sizeof(err));
	/* off: how far outside the reference's bracket, relative to it */
	double off = collected < reference[0] ? (reference[0] - collected) / reference[0] :
		     collected > reference[1] ? (collected - reference[1]) / reference[1] : 0;

	if (ret)
		add(r, "verify", TD_CHECK_FAIL, NULL, "%s: %s", name, err);
	else if (isnan(collected))
		add(r, "verify", TD_CHECK_FAIL, "report this host's `topdown doctor --json`", "%s: the collector saw "
		    "no count for the loop thread", name);
	else
		add(r, "verify", off <= VERIFY_TOLERANCE ? TD_CHECK_OK : TD_CHECK_FAIL,
		    "report this host's `topdown doctor --verify --json`",
		    "%s of a %d ms loop: BPF path %.0f, perf_event_open %.0f to %.0f, off by %.2f%% (bound %.0f%%)",
		    name, VERIFY_LOOP_MS, collected, reference[0], reference[1], 100 * off, 100 * VERIFY_TOLERANCE);
}

/*
 * With hardware counters: instructions and cycles. Without: the check
 * says so, and runs the same path with task-clock, which proves the
 * BPF counting path but not the PMU.
 */
static void check_verify(struct td_doctor_report *r)
{
	char why[320];

	if (td_pmu_hardware_available(why, sizeof(why))) {
		verify_one(r, "instructions");
		verify_one(r, "cycles");
		return;
	}
	add(r, "verify_hardware", TD_CHECK_WARN, NULL, "hardware counters cannot be verified here: %s", why);
	verify_one(r, "task-clock");
}

void td_doctor_run(const struct td_doctor_opts *opts, struct td_doctor_report *r)
{
	bool privileged, btf;

	memset(r, 0, sizeof(*r));
	r->can_collect = true;
	check_kernel(r);
	privileged = check_privileges(r);
	btf = check_btf(r);
	if (privileged && btf) {
		check_flavour(r);
		check_ring_buffer(r);
		check_test_run(r);
	}
	check_sysctls(r);
	check_pmu_and_model(r);
	check_store(r, opts);
	if (opts->verify && r->can_collect)
		check_verify(r);
	else if (opts->verify)
		add(r, "verify", TD_CHECK_FAIL, "fix the failed checks above first", "not run: collection cannot work here");
}
