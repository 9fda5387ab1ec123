// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown collect: count a target for a while, store one labeled run,
 * print its per-thread result.
 *
 * Everything the user typed is checked, and the database opened, before
 * the BPF programs load: a mistake costs nothing and stores nothing.
 */
#include <errno.h>
#include <getopt.h>
#include <linux/capability.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "collector.h"
#include "commands.h"
#include "events.h"
#include "hostinfo.h"
#include "labels.h"
#include "parse.h"
#include "pmu.h"
#include "procmatch.h"
#include "render.h"
#include "run.h"
#include "storage.h"

#define MAX_PIDS 64
#define TABLE_ROWS 30 /* the text table shows the busiest threads; --json has all */

struct collect_args {
	bool system_wide, json, events_given, level_given;
	pid_t pids[MAX_PIDS];
	size_t nr_pids;
	const char *process;
	uint64_t duration_ns, interval_ns;
	long level;
	struct td_labels user_labels;
	struct td_event events[TD_MAX_EVENTS];
	size_t nr_events;
	const char *db;
};

static volatile sig_atomic_t stop_requested;

static void request_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static const char usage_text[] =
	"usage: topdown collect (--process NAME | --pid PID[,PID...] | --system-wide)\n"
	"                       [--duration 10s] [--interval 1s] [--level 1..3] [--label key=value]...\n"
	"                       [--events LIST] [--db PATH] [--json]\n";

/* One line: what is wrong, and where the options are described. */
static int usage_error(const char *message)
{
	fprintf(stderr, "topdown collect: %s (topdown collect --help lists the options)\n", message);
	return TD_EXIT_USAGE;
}

/* Parses and checks every option; returns 0 or an exit code. */
static int parse_args(int argc, char **argv, struct collect_args *a)
{
	static const struct option options[] = {
		{ "process", required_argument, NULL, 'p' },
		{ "pid", required_argument, NULL, 'P' },
		{ "system-wide", no_argument, NULL, 'a' },
		{ "duration", required_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'i' },
		{ "level", required_argument, NULL, 'l' },
		{ "label", required_argument, NULL, 'L' },
		{ "events", required_argument, NULL, 'e' },
		{ "db", required_argument, NULL, 'D' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	char err[512] = "";
	int opt, ret = 0, targets = 0;

	a->duration_ns = 10ull * 1000000000;
	a->interval_ns = 1000000000;
	a->level = 1;
	optind = 1;
	opterr = 0; /* our one-line message instead of getopt's */
	while (!ret && (opt = getopt_long(argc, argv, "p:P:ad:i:l:L:e:D:jh", options, NULL)) != -1) {
		switch (opt) {
		case 'p': a->process = optarg; targets++; break;
		case 'P': targets++; ret = td_parse_pid_list(optarg, a->pids, MAX_PIDS, &a->nr_pids, err, sizeof(err)); break;
		case 'a': a->system_wide = true; targets++; break;
		case 'd': ret = td_parse_duration_ns(optarg, &a->duration_ns, err, sizeof(err)); break;
		case 'i': ret = td_parse_duration_ns(optarg, &a->interval_ns, err, sizeof(err)); break;
		case 'l': a->level_given = true; ret = td_parse_int_range(optarg, "--level", 1, 3, &a->level, err, sizeof(err)); break;
		case 'L': ret = td_labels_parse_arg(&a->user_labels, optarg, err, sizeof(err)); break;
		case 'e': a->events_given = true;
			ret = td_event_list_parse(optarg, a->events, TD_MAX_EVENTS, &a->nr_events, err, sizeof(err));
			break;
		case 'D': a->db = optarg; break;
		case 'j': a->json = true; break;
		case 'h': fputs(usage_text, stdout); return -1;
		default:
			snprintf(err, sizeof(err), "unknown option, or one missing its value: '%s'", argv[optind - 1]);
			ret = -EINVAL;
		}
	}
	if (ret)
		return usage_error(err);
	if (optind < argc) {
		snprintf(err, sizeof(err), "unexpected argument '%s'", argv[optind]);
		return usage_error(err);
	}
	if (targets != 1)
		return usage_error("name exactly one target: --process NAME, --pid PID or --system-wide");
	if (a->process && (!a->process[0] || strchr(a->process, '/')))
		return usage_error("--process takes a process name (its comm or executable basename), not a path");
	return 0;
}

static bool has_capability(int cap)
{
	struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };

	if (syscall(SYS_capget, &header, data))
		return false;
	return data[cap / 32].effective & (1u << (cap % 32));
}

/* BPF tracing needs root or CAP_BPF with CAP_PERFMON; CO-RE needs kernel BTF. */
static int check_host(char *err, size_t errlen)
{
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
	return 0;
}

/*
 * Without --events: the hardware counters TMA starts from where the host
 * has them, and always task-clock, which works everywhere.
 */
static int choose_events(struct collect_args *a, bool hardware, char *err, size_t errlen)
{
	if (a->events_given)
		return 0;
	return td_event_list_parse(hardware ? "task-clock,cycles,instructions" : "task-clock",
				   a->events, TD_MAX_EVENTS, &a->nr_events, err, errlen);
}

static char *describe_target(const struct collect_args *a)
{
	char buf[MAX_PIDS * 12] = "";
	size_t used = 0;

	if (a->system_wide)
		return strdup("system-wide");
	if (a->process)
		return strdup(a->process);
	for (size_t i = 0; i < a->nr_pids; i++)
		used += snprintf(buf + used, sizeof(buf) - used, "%s%d", i ? "," : "", a->pids[i]);
	return strdup(buf);
}

/* Host, target and collection labels, then the user's, which win. */
static int build_labels(const struct collect_args *a, struct td_labels *labels, char *err, size_t errlen)
{
	char value[64], comm[TD_COMM_LEN];
	pid_t first = a->nr_pids ? a->pids[0] : 0;
	int ret = td_hostinfo_labels("", labels, err, errlen);

	if (ret)
		return ret;
	snprintf(value, sizeof(value), "%ld", a->level);
	ret = td_labels_set(labels, "collector", "bpf") ?: td_labels_set(labels, "tma_level", value);
	if (!ret && a->process)
		ret = td_labels_set(labels, "comm", a->process);
	if (!ret && first && td_proc_comm("/proc", first, comm, sizeof(comm)) == 0)
		ret = td_labels_set(labels, "comm", comm);
	if (!ret && a->nr_pids) {
		char *pids = describe_target(a);

		ret = pids ? td_labels_set(labels, "pid", pids) : -ENOMEM;
		free(pids);
	}
	if (!ret && first)
		ret = td_hostinfo_process_labels("", first, labels, err, errlen);
	for (size_t i = 0; !ret && i < a->user_labels.count; i++)
		ret = td_labels_set(labels, a->user_labels.items[i].key, a->user_labels.items[i].value);
	if (ret && !err[0])
		snprintf(err, errlen, "out of memory building labels");
	return ret;
}

static int64_t clock_now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void show_progress(const struct td_collector *c, int64_t left_ns)
{
	char left[32];

	fprintf(stderr, "\rtopdown: collecting, %s left, %zu threads seen   ",
		td_format_duration(left_ns > 0 ? left_ns : 0, left, sizeof(left)),
		td_collector_thread_count(c));
}

static int add_interval(struct td_run *run, const struct td_interval *interval)
{
	struct td_interval *grown = realloc(run->intervals, (run->nr_intervals + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	run->intervals = grown;
	run->intervals[run->nr_intervals++] = *interval;
	return 0;
}

/* Polls exits until the interval ends, then drains one interval into run. */
static int collect_interval(struct td_collector *c, struct td_run *run, int64_t end_mono,
			    int64_t deadline_mono, bool progress, char *err, size_t errlen)
{
	struct td_interval interval = { .seq = run->nr_intervals, .start_ns = clock_now_ns(CLOCK_REALTIME) };
	int64_t now;
	int ret;

	while (!stop_requested && (now = clock_now_ns(CLOCK_MONOTONIC)) < end_mono) {
		int64_t wait_ms = (end_mono - now + 999999) / 1000000;

		if ((ret = td_collector_poll(c, wait_ms < 100 ? wait_ms : 100, err, errlen)))
			return ret;
		if (progress)
			show_progress(c, deadline_mono - clock_now_ns(CLOCK_MONOTONIC));
	}
	if ((ret = td_collector_drain(c, &interval, err, errlen)))
		return ret;
	interval.end_ns = clock_now_ns(CLOCK_REALTIME);
	if ((ret = add_interval(run, &interval))) {
		free(interval.threads);
		snprintf(err, errlen, "out of memory keeping intervals");
	}
	return ret;
}

static int run_collection(struct td_collector *c, const struct collect_args *a, struct td_run *run,
			  char *err, size_t errlen)
{
	bool progress = isatty(STDERR_FILENO);
	int64_t start = clock_now_ns(CLOCK_MONOTONIC), deadline = start + a->duration_ns;
	int ret = 0;

	run->started_ns = clock_now_ns(CLOCK_REALTIME);
	for (int64_t end = start + a->interval_ns; !ret && !stop_requested; end += a->interval_ns) {
		ret = collect_interval(c, run, end < deadline ? end : deadline, deadline, progress, err, errlen);
		if (end >= deadline)
			break;
	}
	if (progress)
		fprintf(stderr, "\r\033[K");
	run->ended_ns = clock_now_ns(CLOCK_REALTIME);
	run->partial = stop_requested;
	run->dropped = td_collector_dropped(c);
	if (!ret && td_collector_totals(c, &run->threads, &run->nr_threads)) {
		snprintf(err, errlen, "out of memory gathering thread totals");
		ret = -ENOMEM;
	}
	return ret;
}

static int compare_oncpu_desc(const void *a, const void *b)
{
	const struct td_thread_row *x = a, *y = b;

	return x->oncpu_ns < y->oncpu_ns ? 1 : x->oncpu_ns > y->oncpu_ns ? -1 : (int)x->tid - (int)y->tid;
}

static void print_table(const struct td_run *run, const char *db_path)
{
	double duration_ns = run->ended_ns - run->started_ns;
	char a[32], b[32];
	size_t exited = 0;

	for (size_t i = 0; i < run->nr_threads; i++)
		exited += run->threads[i].exited;
	printf("run %s stored in %s%s\n", run->id, db_path, run->partial ? " (partial: stopped early)" : "");
	printf("target %s, %s, %zu threads (%zu exited), %llu slices dropped\n\n", run->process,
	       td_format_duration(duration_ns, a, sizeof(a)), run->nr_threads, exited,
	       (unsigned long long)run->dropped);
	printf("%-16s %8s %7s %8s %8s %6s %10s", "THREAD", "TID", "ONCPU%", "VOL-SW", "INVOL-SW", "MIGR", "RUNQ-WAIT");
	for (size_t e = 0; e < run->nr_events; e++)
		printf(" %14s", run->event_names[e]);
	printf("\n");
	for (size_t i = 0; i < run->nr_threads && i < TABLE_ROWS; i++) {
		const struct td_thread_row *t = &run->threads[i];

		printf("%-16s %8u %6.1f%% %8llu %8llu %6llu %10s", t->comm, t->tid,
		       100.0 * t->oncpu_ns / duration_ns, (unsigned long long)t->voluntary_switches,
		       (unsigned long long)t->involuntary_switches, (unsigned long long)t->migrations,
		       td_format_duration(t->runq_wait_ns, a, sizeof(a)));
		for (size_t e = 0; e < run->nr_events; e++)
			printf(" %14s", td_format_count(t->counters[e].value, b, sizeof(b)));
		printf("%s\n", t->exited ? "  (exited)" : "");
	}
	if (run->nr_threads > TABLE_ROWS)
		printf("... %zu more threads (--json lists all)\n", run->nr_threads - TABLE_ROWS);
}

static json_t *thread_json(const struct td_run *run, const struct td_thread_row *t)
{
	json_t *counters = json_object();

	for (size_t e = 0; e < run->nr_events; e++)
		json_object_set_new(counters, run->event_names[e],
				    isnan(t->counters[e].value) ? json_null() : json_real(t->counters[e].value));
	return json_pack("{s:I, s:I, s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:o}",
			 "tid", (json_int_t)t->tid, "pid", (json_int_t)t->pid, "comm", t->comm,
			 "exited", t->exited, "oncpu_ns", (json_int_t)t->oncpu_ns,
			 "voluntary_switches", (json_int_t)t->voluntary_switches,
			 "involuntary_switches", (json_int_t)t->involuntary_switches,
			 "migrations", (json_int_t)t->migrations, "runq_wait_ns", (json_int_t)t->runq_wait_ns,
			 "counters", counters);
}

static void print_json(const struct td_run *run, const char *attach_kind)
{
	json_t *labels = json_object(), *threads = json_array(), *events = json_array(), *root;

	for (size_t i = 0; i < run->labels.count; i++)
		json_object_set_new(labels, run->labels.items[i].key, json_string(run->labels.items[i].value));
	for (size_t e = 0; e < run->nr_events; e++)
		json_array_append_new(events, json_string(run->event_names[e]));
	for (size_t i = 0; i < run->nr_threads; i++)
		json_array_append_new(threads, thread_json(run, &run->threads[i]));
	root = json_pack("{s:s, s:s, s:f, s:o, s:I, s:b, s:s, s:I, s:o, s:o}",
			 "run_id", run->id, "process", run->process,
			 "duration_s", (run->ended_ns - run->started_ns) / 1e9, "labels", labels,
			 "dropped", (json_int_t)run->dropped, "partial", run->partial,
			 "attach", attach_kind, "intervals", (json_int_t)run->nr_intervals,
			 "events", events, "threads", threads);
	json_dumpf(root, stdout, JSON_INDENT(2));
	printf("\n");
	json_decref(root);
}

static int fill_run(struct td_run *run, const struct collect_args *a)
{
	run->process = describe_target(a);
	run->collector = strdup("bpf");
	run->level = a->level;
	run->nr_events = a->nr_events;
	for (size_t e = 0; e < a->nr_events; e++)
		if (!(run->event_names[e] = strdup(a->events[e].name)))
			return -ENOMEM;
	return run->process && run->collector ? 0 : -ENOMEM;
}

static void install_stop_handlers(void)
{
	struct sigaction sa = { .sa_handler = request_stop }; /* no SA_RESTART: wake the poll */

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* The collection proper, once the arguments, host and database are fine. */
/* no_tma_reason: said once, when counting has started, if TMA cannot be had. */
static int collect_and_store(struct collect_args *a, struct td_store *store, const char *db_path,
			     const char *no_tma_reason, char *err, size_t errlen)
{
	struct td_collector_opts opts = {
		.system_wide = a->system_wide, .pids = a->pids, .nr_pids = a->nr_pids,
		.process_name = a->process, .events = a->events, .nr_events = a->nr_events,
	};
	struct td_run *run = td_run_new();
	struct td_collector *c = NULL;
	int ret = run ? fill_run(run, a) : -ENOMEM;

	if (ret)
		snprintf(err, errlen, "out of memory preparing the run");
	if (!ret && !(c = td_collector_new(&opts, err, errlen)))
		ret = -1;
	if (!ret) /* after the targets are known to exist */
		ret = build_labels(a, &run->labels, err, errlen);
	if (!ret && no_tma_reason)
		fprintf(stderr, "topdown: TMA unavailable: %s; collecting scheduling figures and software counters only\n",
			no_tma_reason);
	if (!ret) {
		install_stop_handlers();
		ret = run_collection(c, a, run, err, errlen);
	}
	if (!ret)
		ret = td_store_write_run(store, run, err, errlen);
	if (!ret) {
		if (a->json)
			print_json(run, td_collector_attach_kind(c));
		else {
			qsort(run->threads, run->nr_threads, sizeof(*run->threads), compare_oncpu_desc);
			print_table(run, db_path);
		}
	}
	td_collector_free(c);
	td_run_free(run);
	return ret;
}

int td_cmd_collect(int argc, char **argv)
{
	struct collect_args a = { 0 };
	struct td_store *store = NULL;
	char err[768] = "", db_path[4096], why[256];
	bool hardware;
	int ret;

	td_labels_init(&a.user_labels);
	ret = parse_args(argc, argv, &a);
	if (ret) {
		td_labels_free(&a.user_labels);
		return ret < 0 ? 0 : ret;
	}
	hardware = td_pmu_hardware_available(why, sizeof(why));
	ret = check_host(err, sizeof(err));
	if (!ret)
		ret = choose_events(&a, hardware, err, sizeof(err));
	if (!ret)
		ret = td_store_default_path(a.db, db_path, sizeof(db_path), err, sizeof(err));
	if (!ret && !(store = td_store_open(&(struct td_store_config){ .path = db_path }, err, sizeof(err))))
		ret = -1;
	if (!ret)
		ret = collect_and_store(&a, store, db_path, !hardware && (a.level_given || !a.events_given) ? why : NULL,
					err, sizeof(err));
	if (ret)
		fprintf(stderr, "topdown collect: %s\n", err[0] ? err : strerror(-ret));
	td_store_close(store);
	td_labels_free(&a.user_labels);
	return ret ? 1 : 0;
}
