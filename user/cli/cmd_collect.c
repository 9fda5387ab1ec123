// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown collect: count a target for a while, store one labeled run,
 * print its per-thread result.
 *
 * Everything the user typed is checked, and the database opened, before
 * the BPF programs load: a mistake costs nothing and stores nothing. A
 * --pid that is a kernel thread or a zombie is such a mistake.
 *
 * The window ends at --duration, at a stop signal (INT, TERM, HUP, QUIT:
 * the run is stored, marked partial), or when every target has exited
 * (a whole run, ending there; see td_collector_targets_running for what
 * every target is). A database that does not take the run sends it to
 * the agent's spool (save_run), from where the next collect or the agent
 * moves it; the table is printed either way, saying where the run went.
 *
 * Top-Down: unless --events names the counters, the CPU's model (or
 * --cpu-model) and --level choose them (user/collect/tma_events.h); after the
 * window the kb engine computes the tree of every thread, thread-name
 * group and process, stored with the run. Without a hardware PMU, or
 * without definitions for the CPU, the run has the scheduling figures and
 * the counters that do work, and one line says why there is no tree.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "collect_setup.h"
#include "collector.h"
#include "commands.h"
#include "engine.h"
#include "events.h"
#include "labels.h"
#include "parse.h"
#include "format.h"
#include "hot.h"
#include "query_render.h"
#include "locate.h"
#include "procmatch.h"
#include "run.h"
#include "sink.h"
#include "storage.h"
#include "store_open.h"
#include "tma_events.h"
#include "thread_table.h"
#include "tma_render.h"
#include "target_args.h"

#define HOT_ROWS 10 /* hot functions collect shows; topdown query --hot has them all */
#define TABLE_ROWS 30 /* the text table shows the busiest threads; --json has all */

struct collect_args {
	bool json, events_given, level_given, all_threads;
	struct td_target_args target;
	uint64_t duration_ns, interval_ns;
	long level;
	const char *cpu_model; /* --cpu-model: overrides detection */
	struct td_labels user_labels;
	struct td_event events[TD_MAX_EVENTS];
	size_t nr_events;
	const char *db;
	struct td_store_flags store_flags;
	const char *spool;         /* --spool: where the run waits when the store cannot take it */
	bool sample;               /* --sample: locate where the samples land */
	const char *sample_event;  /* --sample=EVENT; NULL: the default */
	const char *sample_for;    /* --sample-for NODE: the default is that node's event */
	uint64_t sample_freq_hz;
	uint64_t sample_period;    /* --sample-period: every this many events instead of a rate */
};

/* Locate's side of a collection; locate NULL without --sample. */
struct locate_run {
	struct td_sample_opts opts;
	struct td_locate *locate;
	struct td_locate_summary summary; /* of the run's profile, once taken */
};

static volatile sig_atomic_t stop_requested;

static void request_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* --events LIST: the counters instead of the Top-Down ones. */
static int parse_events(void *field, const struct td_opt *opt, const char *value, char *err, size_t errlen)
{
	struct collect_args *a = field;

	(void)opt;
	a->events_given = true;
	return td_event_list_parse(value, a->events, TD_MAX_EVENTS, &a->nr_events, err, errlen);
}

static const struct td_opt collect_options[] = {
	TD_OPTS_TARGET(struct collect_args, target),
	TD_OPTION("duration", TD_OPT_DURATION, offsetof(struct collect_args, duration_ns), "D",
		  "how long to count (default 10s)", .short_name = 'd'),
	TD_OPTION("interval", TD_OPT_DURATION, offsetof(struct collect_args, interval_ns), "D",
		  "one interval of counts every D (default 1s)", .short_name = 'i'),
	TD_OPTION("level", TD_OPT_INT, offsetof(struct collect_args, level), "N",
		  "depth of the Top-Down tree (4 where it needs no more counters than 3)", .min = 1, .max = 4,
		  .sets = true, .set_offset = offsetof(struct collect_args, level_given), .short_name = 'l'),
	TD_OPTION("cpu-model", TD_OPT_NAME, offsetof(struct collect_args, cpu_model), "NAME",
		  "the CPU's Top-Down model instead of the detected one (spr, neoverse-v2, zen4, ...)",
		  .short_name = 'm'),
	TD_OPT_LABELS(struct collect_args, user_labels, "stored with the run (repeatable; overrides a detected one)"),
	TD_OPTION("events", TD_OPT_CALL, 0, "LIST", "count these events instead of the Top-Down ones",
		  .call = parse_events, .short_name = 'e'),
	TD_OPTION("json", TD_OPT_FLAG, offsetof(struct collect_args, json), NULL, "the result as JSON",
		  .short_name = 'j'),
	TD_OPTION("all-threads", TD_OPT_FLAG, offsetof(struct collect_args, all_threads), NULL,
		  "list every thread in the text table, not only the busiest (--json has them all)",
		  .short_name = 'A'),
	TD_OPTS_SAMPLE(struct collect_args, sample, sample_event, sample_freq_hz, 0),
	TD_OPTION("sample-for", TD_OPT_NAME, offsetof(struct collect_args, sample_for), "NODE",
		  "sample the event that finds NODE's code on this CPU (DRAM_Bound, Branch_Mispredicts, ...; "
		  "topdown explain NODE names it), a parent's when it has none",
		  .sets = true, .set_offset = offsetof(struct collect_args, sample)),
	TD_OPTION("sample-period", TD_OPT_U64, offsetof(struct collect_args, sample_period), "N",
		  "a sample every N events instead (exact counts, e.g. under emulation)", .min = 1, .max = 1L << 40),
	TD_OPTS_STORE(struct collect_args, db, store_flags),
	TD_OPTION("spool", TD_OPT_NAME, offsetof(struct collect_args, spool), "PATH",
		  "where the run waits when the database cannot take it, as the agent's "
		  "(default: DB.spool beside a SQLite database; for PostgreSQL $STATE_DIRECTORY/spool.db, "
		  "else ~/.topdown/spool.db)"),
	{ 0 }
};

static const struct td_cli collect_command = {
	.command = "collect",
	.synopsis = "usage: topdown collect (--process NAME | --pid PID[,PID...] | --system-wide)\n"
		    "                       [--duration 10s] [--interval 1s] [--level 1..3] [--cpu-model NAME]\n"
		    "                       [--label key=value]... [--events LIST] [--db PATH] [--spool PATH]\n"
		    "                       [--json | --all-threads]\n"
		    "                       [--sample[=EVENT] | --sample-for NODE] [--sample-freq HZ | --sample-period N]\n",
	.opts = collect_options,
};

/* One line: what is wrong, and where the options are described. */
static int usage_error(const char *message)
{
	return td_cli_usage_error(&collect_command, message);
}

/* --cpu-model must name a model of the knowledge base this host can be. */
static int check_cpu_model(const char *name, char *err, size_t errlen)
{
	const struct td_kb *kb = td_kb_load(err, errlen);
	const struct td_model *model;
	struct td_cpuinfo cpu;
	bool cpu_known = td_cpuinfo_read("", &cpu, err, errlen) == 0;

	return kb ? td_tma_choose_model(kb, name, cpu_known ? &cpu : NULL, &model, err, errlen) : -EINVAL;
}

/* Parses and checks every option; returns 0 or an exit code. */
static int parse_args(int argc, char **argv, struct collect_args *a)
{
	struct td_cli_seen seen;
	char err[512] = "";
	int ret;

	a->duration_ns = 10ull * 1000000000;
	a->interval_ns = 1000000000;
	a->level = 1;
	if ((ret = td_cli_read(&collect_command, argc, argv, a, &seen)))
		return ret;
	if (td_target_args_check(&a->target, err, sizeof(err)))
		return usage_error(err);
	if (a->events_given && (a->level_given || a->cpu_model))
		return usage_error("--events replaces the Top-Down counters that --level and --cpu-model choose: give one or the other");
	if (a->cpu_model && check_cpu_model(a->cpu_model, err, sizeof(err)))
		return usage_error(err);
	if (td_sample_options_check(a->sample, a->sample_event, a->sample_for, a->sample_freq_hz, a->sample_period,
				    err, sizeof(err)))
		return usage_error(err);
	if (!a->sample_freq_hz)
		a->sample_freq_hz = TD_DEFAULT_SAMPLE_FREQ_HZ;
	return 0;
}

/* Host, target and collection labels, then the user's, which win. */
static int build_labels(const struct collect_args *a, const struct td_tma_choice *tma, struct td_labels *labels,
			char *err, size_t errlen)
{
	const struct td_target_args *t = &a->target;
	char *pids = t->nr_pids ? td_target_args_describe(t) : NULL;
	int ret = t->nr_pids && !pids ? -ENOMEM : td_collect_base_labels(tma, a->level, labels, err, errlen);

	if (!ret)
		ret = td_collect_target_labels(t->process, pids, t->nr_pids ? t->pids[0] : 0, labels, err, errlen);
	if (!ret && td_labels_copy(labels, &a->user_labels))
		ret = -ENOMEM;
	if (ret && !err[0])
		snprintf(err, errlen, "out of memory building labels");
	free(pids);
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

/*
 * Polls exits until the interval ends, or every target has exited
 * (*targets_exited), then drains one interval into run. A poll returns
 * at the latest after 100 ms, and at once when a thread exits, so the
 * window ends within 100 ms of the last target's exit.
 */
static int collect_interval(struct td_collector *c, struct td_run *run, struct locate_run *lr, int64_t end_mono,
			    int64_t deadline_mono, bool progress, bool *targets_exited, char *err, size_t errlen)
{
	struct td_interval interval = { .seq = run->nr_intervals, .start_ns = clock_now_ns(CLOCK_REALTIME) };
	int64_t now;
	int ret;

	while (!stop_requested && (now = clock_now_ns(CLOCK_MONOTONIC)) < end_mono) {
		int64_t wait_ms = (end_mono - now + 999999) / 1000000;

		if ((ret = td_collector_poll(c, wait_ms < 100 ? wait_ms : 100, err, errlen)))
			return ret;
		if (!td_collector_targets_running(c)) {
			*targets_exited = true;
			break;
		}
		if (progress)
			show_progress(c, deadline_mono - clock_now_ns(CLOCK_MONOTONIC));
	}
	if ((ret = td_collector_drain(c, &interval, err, errlen)))
		return ret;
	/* While the sampled processes live: their maps are read now. */
	if (lr->locate && (ret = td_collector_drain_samples(c, td_locate_raw_stack, lr->locate, err, errlen))) {
		free(interval.threads);
		return ret;
	}
	interval.end_ns = clock_now_ns(CLOCK_REALTIME);
	if ((ret = add_interval(run, &interval))) {
		free(interval.threads);
		snprintf(err, errlen, "out of memory keeping intervals");
	}
	return ret;
}

/*
 * The window: until --duration has passed, a stop signal came (the run is
 * partial), or every target has exited (*targets_exited: a whole run,
 * whose window ends there).
 */
static int run_collection(struct td_collector *c, const struct collect_args *a, struct td_run *run,
			  struct locate_run *lr, bool *targets_exited, char *err, size_t errlen)
{
	bool progress = isatty(STDERR_FILENO);
	int64_t start = clock_now_ns(CLOCK_MONOTONIC), deadline = start + a->duration_ns;
	int ret = 0;

	run->started_ns = clock_now_ns(CLOCK_REALTIME);
	for (int64_t end = start + a->interval_ns; !ret && !stop_requested; end += a->interval_ns) {
		ret = collect_interval(c, run, lr, end < deadline ? end : deadline, deadline, progress,
				       targets_exited, err, errlen);
		if (end >= deadline || *targets_exited)
			break;
		if (!ret && !stop_requested) /* the next counter group's turn */
			ret = td_collector_rotate(c, err, errlen);
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

/* Where a run went: the store, or the spool that takes it there later. */
struct destination {
	const char *db_path;    /* the store's location */
	bool spooled;           /* the store did not take it: it waits in the spool */
	char spool_path[4096];  /* "" when no spool was needed and none could be named */
	bool targets_exited;    /* the window ended when the last target exited */
};

static void print_table(const struct td_run *run, const struct destination *dest, bool with_counters,
			bool all_threads)
{
	char a[32];
	size_t exited = 0;

	for (size_t i = 0; i < run->nr_threads; i++)
		exited += run->threads[i].exited;
	printf("run %s %s %s%s\n", run->id, dest->spooled ? "waits in the spool" : "stored in",
	       dest->spooled ? dest->spool_path : dest->db_path, run->partial ? " (partial: stopped early)" : "");
	fputs("target ", stdout);
	td_fputs_safe(stdout, run->process, 0); /* a process name: the program's own choice */
	printf(", %s%s, %zu threads (%zu exited), %llu slices dropped\n\n",
	       td_format_duration(run->ended_ns - run->started_ns, a, sizeof(a)),
	       dest->targets_exited ? " (until the last target exited)" : "", run->nr_threads, exited,
	       (unsigned long long)run->dropped);
	if (run->nr_threads)
		td_print_thread_table(stdout, run, with_counters, all_threads ? SIZE_MAX : TABLE_ROWS,
				      "--all-threads lists them, --json too");
}

/* Level 1 of the tree for each thread-name group, busiest first. */
static void print_tma_table(const struct td_run *run, const struct td_tma_choice *tma)
{
	const struct td_tma_setup *setup = tma->setup;

	printf("\nTop-Down level 1 by thread group: %s, %s PMU, SMT %s; level %d stored; %zu counter group%s\n",
	       setup->model->long_name, setup->pmu, setup->facts.smt_on ? "on" : "off", setup->depth,
	       setup->plan.nr_groups, setup->plan.nr_groups == 1 ? "" : "s, one per interval in turn");
	td_print_group_level1(stdout, run, tma->engine, TABLE_ROWS);
	if (setup->model->notes)
		printf("note: %s\n", setup->model->notes);
}

/* [{key_name: key, "tree": [...]}, ...] from an object of trees by key. */
static json_t *tree_list(json_t *trees, const char *key_name)
{
	json_t *list = json_array(), *tree;
	const char *key;

	json_object_foreach(trees, key, tree)
		json_array_append_new(list, json_pack("{s:s, s:O}", key_name, key, "tree", tree));
	return list;
}

/* The counter groups that take turns, as lists of the run's event names; null without a plan. */
static json_t *counter_plan_json(const struct td_counter_plan *plan, const struct td_run *run)
{
	json_t *groups = plan ? json_array() : json_null();

	for (size_t g = 0; plan && g < plan->nr_groups; g++) {
		json_t *group = json_array();

		for (size_t n = 0; n < plan->groups[g].nr_events; n++)
			json_array_append_new(group, json_string(run->event_names[plan->groups[g].events[n]]));
		json_array_append_new(groups, group);
	}
	return groups;
}

/* null without Top-Down; the reason when unavailable; else model, groups and processes. */
static json_t *tma_json(const struct td_run *run, const struct td_tma_choice *tma)
{
	json_t *groups, *processes, *root;
	const struct td_model *model;
	unsigned width;
	bool from_pmu;

	if (!tma->wanted)
		return json_null();
	if (!tma->engine)
		return json_pack("{s:s}", "unavailable", tma->unavailable);
	model = tma->setup->model;
	width = td_model_slot_width(model, &tma->setup->facts, &from_pmu);
	groups = td_metric_trees_json(run, TD_SCOPE_GROUP);
	processes = td_metric_trees_json(run, TD_SCOPE_PROCESS);
	/* slots_per_cycle: null when no formula takes a slot width */
	root = json_pack("{s:s, s:s, s:s?, s:s?, s:i, s:s, s:b, s:i, s:I, s:o, s:o, s:s?, s:o, s:o}", "model", model->name,
			 "model_name", model->long_name, "note", model->notes,
			 "variant", tma->setup->variant[0] ? tma->setup->variant : NULL, "level", tma->setup->depth,
			 "pmu", tma->setup->pmu, "smt_on", tma->setup->facts.smt_on,
			 "gp_counters", tma->setup->budget.gp_counters,
			 "counter_groups", (json_int_t)tma->setup->plan.nr_groups,
			 "counter_plan", counter_plan_json(&tma->setup->plan, run),
			 "slots_per_cycle", width ? json_integer(width) : json_null(),
			 "slots_from", !width ? NULL : from_pmu ? "pmu" : "model",
			 "groups", tree_list(groups, "group"), "processes", tree_list(processes, "pid"));
	json_decref(groups);
	json_decref(processes);
	return root;
}

/*
 * counters: each event's count, scaled to the thread's whole counted time
 * when it was counted part of it (groups taking turns, or the kernel
 * multiplexing more events than the PMU has counters); running_fraction:
 * the share it was really counted, the estimate's confidence.
 */
static json_t *thread_json(const struct td_run *run, const struct td_thread_row *t, json_t *thread_trees)
{
	json_t *counters = json_object(), *fractions = json_object(), *tree;
	char tid[16];

	for (size_t e = 0; e < run->nr_events; e++) {
		json_object_set_new(counters, run->event_names[e],
				    isnan(t->counters[e].value) ? json_null() : json_real(t->counters[e].value));
		json_object_set_new(fractions, run->event_names[e], json_real(t->counters[e].running_fraction));
	}
	snprintf(tid, sizeof(tid), "%u", t->tid);
	tree = thread_trees ? json_object_get(thread_trees, tid) : NULL;
	return json_pack("{s:I, s:I, s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:O?}",
			 "tid", (json_int_t)t->tid, "pid", (json_int_t)t->pid, "comm", t->comm,
			 "exited", t->exited, "oncpu_ns", (json_int_t)t->oncpu_ns,
			 "voluntary_switches", (json_int_t)t->voluntary_switches,
			 "involuntary_switches", (json_int_t)t->involuntary_switches,
			 "migrations", (json_int_t)t->migrations, "runq_wait_ns", (json_int_t)t->runq_wait_ns,
			 "counters", counters, "running_fraction", fractions, "tma", tree);
}

static void print_json(const struct td_run *run, const struct td_tma_choice *tma, const char *attach_kind,
		       const struct destination *dest)
{
	json_t *labels = json_object(), *threads = json_array(), *events = json_array(), *root;
	json_t *thread_trees = tma->engine ? td_metric_trees_json(run, TD_SCOPE_THREAD) : NULL;

	for (size_t i = 0; i < run->labels.count; i++)
		json_object_set_new(labels, run->labels.items[i].key, json_string(run->labels.items[i].value));
	for (size_t e = 0; e < run->nr_events; e++)
		json_array_append_new(events, json_string(run->event_names[e]));
	for (size_t i = 0; i < run->nr_threads; i++)
		json_array_append_new(threads, thread_json(run, &run->threads[i], thread_trees));
	/* stored_in or spooled_in is null: where the run is not */
	/* counter_plan: the groups of --events (a Top-Down run has its own in tma) */
	root = json_pack("{s:s, s:s, s:f, s:o, s:I, s:b, s:b, s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:o}",
			 "run_id", run->id, "process", run->process,
			 "duration_s", (run->ended_ns - run->started_ns) / 1e9, "labels", labels,
			 "dropped", (json_int_t)run->dropped, "partial", run->partial,
			 "targets_exited", dest->targets_exited,
			 "attach", attach_kind, "intervals", (json_int_t)run->nr_intervals,
			 "events", events, "counter_plan", counter_plan_json(tma->events_plan, run),
			 "threads", threads, "tma", tma_json(run, tma),
			 "stored_in", dest->spooled ? json_null() : json_string(dest->db_path),
			 "spooled_in", dest->spooled ? json_string(dest->spool_path) : json_null());
	json_decref(thread_trees);
	json_dumpf(root, stdout, JSON_INDENT(2));
	printf("\n");
	json_decref(root);
}

/*
 * --pid's PROCESS: the pids' comms, as ps and --process name them, so
 * `topdown list --process NAME` finds the run; several programs' comms
 * are joined by commas, each once, in the pids' order (the pid label
 * keeps the numbers). A pid that exited meanwhile keeps its number: the
 * collector refuses it next.
 */
static char *pid_comms(const struct td_target_args *t)
{
	char comms[TD_TARGET_MAX_PIDS][TD_TASK_COMM_LEN + 1], joined[TD_TARGET_MAX_PIDS * (TD_TASK_COMM_LEN + 1)] = "";
	size_t used = 0;

	for (size_t i = 0; i < t->nr_pids; i++) {
		bool again = false;

		if (td_proc_comm("/proc", t->pids[i], comms[i], sizeof(comms[i])))
			snprintf(comms[i], sizeof(comms[i]), "%d", (int)t->pids[i]);
		for (size_t j = 0; j < i && !again; j++)
			again = !strcmp(comms[j], comms[i]);
		if (!again)
			used += snprintf(joined + used, sizeof(joined) - used, "%s%s", used ? "," : "", comms[i]);
	}
	return strdup(joined);
}

static int fill_run(struct td_run *run, const struct collect_args *a, const struct td_tma_choice *tma)
{
	run->process = a->target.nr_pids ? pid_comms(&a->target) : td_target_args_describe(&a->target);
	run->collector = strdup("bpf");
	run->level = tma->wanted ? a->level : 0;
	run->nr_events = a->nr_events;
	for (size_t e = 0; e < a->nr_events; e++)
		if (!(run->event_names[e] = strdup(a->events[e].name)))
			return -ENOMEM;
	return run->process && run->collector ? 0 : -ENOMEM;
}

static void install_stop_handlers(void)
{
	struct sigaction sa = { .sa_handler = request_stop }; /* no SA_RESTART: wake the poll */

	/* a terminal that closes (SIGHUP) and Ctrl-backslash (SIGQUIT) stop the window as Ctrl-C does */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
}

/*
 * What the user should know before the window: no tree, too short a window
 * for every group, or a slot width the PMU did not give.
 */
static void announce_tma(const struct collect_args *a, const struct td_tma_choice *tma)
{
	uint64_t intervals = (a->duration_ns + a->interval_ns - 1) / a->interval_ns;
	char slots[256];

	if (tma->setup && tma->setup->variant[0])
		fprintf(stderr, "topdown: %s\n", tma->setup->variant);
	if (tma->counters_note[0])
		fprintf(stderr, "topdown: %s\n", tma->counters_note);
	if (tma->setup && td_tma_describe_slots(tma->setup, slots, sizeof(slots)))
		fprintf(stderr, "topdown: %s\n", slots);

	if (tma->wanted && !tma->setup)
		fprintf(stderr, "topdown: TMA unavailable: %s; the run keeps the scheduling figures and the counters that work here\n",
			tma->unavailable);
	else if (tma->setup && intervals < tma->setup->plan.nr_groups)
		fprintf(stderr, "topdown: level %d needs %zu counter groups, one per interval, and this window has %llu "
			"intervals: lengthen --duration or shorten --interval to count them all\n", tma->setup->depth,
			tma->setup->plan.nr_groups, (unsigned long long)intervals);
}

/* Locate's parts, before the collector opens the sampling event; says once what it had to change. */
static int start_locate(const struct collect_args *a, const struct td_tma_choice *tma, struct locate_run *lr,
			char *err, size_t errlen)
{
	char notice[768];
	int ret = td_collect_choose_sample(a->sample_event, a->sample_for, tma, a->sample_freq_hz, &lr->opts, notice,
					   sizeof(notice), err, errlen);

	if (ret)
		return ret;
	lr->opts.period = a->sample_period;
	if (notice[0])
		fprintf(stderr, "topdown: %s\n", notice);
	return (lr->locate = td_locate_new(NULL, err, errlen)) ? 0 : -ENOMEM;
}

/* The profile joins the run, with what the kernel counted and lost. */
static int finish_locate(const struct td_collector *c, struct locate_run *lr, struct td_run *run)
{
	struct td_sample_tally tally;

	td_collector_sample_tally(c, &tally);
	td_locate_summarize(lr->locate, &lr->summary);
	run->profile = td_locate_take_profile(lr->locate, lr->opts.event.name, lr->opts.frequency_hz, lr->opts.period,
					      tally.lost_samples);
	return run->profile ? 0 : -ENOMEM;
}

/* Where the samples landed: the hottest functions, and what to know about the stacks. */
static void print_hot(const struct td_run *run, const struct locate_run *lr)
{
	const struct td_profile *p = run->profile;
	struct td_hot *hot = NULL;
	char err[256];
	const char *hint;

	printf("\nlocate: %llu samples of %s %s %llu%s, %zu stacks", (unsigned long long)p->samples, p->event,
	       p->period ? "every" : "at", (unsigned long long)(p->period ? p->period : p->frequency_hz),
	       p->period ? " events" : " Hz", p->nr_stacks);
	if (p->lost_samples)
		printf(", %llu without a stack (the kernel's maps were full)", (unsigned long long)p->lost_samples);
	printf("\n");
	if (td_profiles_hot(&p, 1, NULL, HOT_ROWS, &hot, err, sizeof(err)) == 0) {
		td_render_hot(&(struct td_render){ .out = stdout, .format = TD_FORMAT_TABLE }, hot);
		if (hot->unresolved_share > 0.01)
			printf("%.0f%% of frames have no symbol (stripped, JIT or exited code): they show as module+0xoffset\n",
			       hot->unresolved_share * 100);
	}
	td_hot_free(hot);
	if ((hint = td_locate_frame_pointer_hint(&lr->summary)))
		printf("hint: %s\n", hint);
	printf("topdown query --hot --run %.8s and topdown flamegraph --run %.8s -o flame.svg show more\n", run->id,
	       run->id);
}

/* Says once which events had their group's turns but never a counter: someone took the PMU's counters. */
static void say_starved(const struct td_collector *c, const struct td_run *run)
{
	bool starved[TD_MAX_EVENTS];
	char names[512] = "";
	size_t used = 0, n = td_collector_starved_events(c, starved);

	for (size_t e = 0; n && e < run->nr_events && used < sizeof(names); e++)
		if (starved[e])
			used += snprintf(names + used, sizeof(names) - used, "%s%s", used ? ", " : "", run->event_names[e]);
	if (n)
		fprintf(stderr, "topdown: %s had %s counter group's turns but never got a counter: another user took the "
			"PMU's counters after topdown planned them (`topdown doctor` shows what is free); %s n/a\n",
			names, n == 1 ? "its" : "their", n == 1 ? "it is" : "they are");
}

/* Says once why nodes of the tree are n/a over the whole run, or rest on events that counted 0. */
static int explain_undefined(const struct td_engine *engine, const struct td_run *run, char *err, size_t errlen)
{
	char why[1024];
	int undefined = td_engine_explain_undefined(engine, run, why, sizeof(why));

	if (undefined < 0) {
		snprintf(err, errlen, "out of memory checking the tree's values");
		return undefined;
	}
	if (undefined && run->nr_threads)
		fprintf(stderr, "topdown: %s\n", why);
	return 0;
}

/*
 * Writes run through sink, the agent's: what waits in the spool goes to
 * the store first, and run joins the spool when the store does not take
 * it (dest->spooled; why says why).
 */
static int write_through_sink(struct td_sink *sink, const char *spool_path, const struct td_run *run,
			      struct destination *dest, char *why, size_t whylen, char *err, size_t errlen)
{
	struct td_sink_stats stats;
	uint64_t earlier;
	int ret = td_sink_write(sink, run, err, errlen);

	td_sink_stats(sink, &stats);
	/* a write replays 64 runs at most: run waits behind the rest while the store answers */
	if (!ret && !stats.stored && stats.store_reachable && td_sink_flush(sink, why, whylen) == -EINVAL)
		fprintf(stderr, "topdown collect: %s\n", why);
	td_sink_stats(sink, &stats);
	dest->spooled = !ret && !stats.stored && stats.spool_depth;
	if (dest->spooled)
		snprintf(why, whylen, "%s", stats.last_error);
	earlier = stats.replayed - (!ret && !stats.stored && !dest->spooled); /* less run, when replayed */
	if (earlier)
		fprintf(stderr, "topdown collect: %llu earlier run%s moved from the spool %s into the store\n",
			(unsigned long long)earlier, earlier == 1 ? "" : "s", spool_path);
	return ret;
}

/*
 * The run into the store: directly while no spool file exists, else
 * through the spool the agent uses (td_sink_default_spool_path, or
 * --spool), so that what waits there goes first. A store that does not
 * take the run directly (busy beyond SQLite's 5 s timeout, a full disk,
 * a lost server) gets a second try through the sink, then the run waits
 * in the spool: collect waits at most 10 s for a busy store. A run the
 * store refuses as invalid is an error, never spooled.
 */
static int save_run(const struct collect_args *a, const struct td_store_flags *flags, struct td_store *store,
		    const struct td_run *run, struct destination *dest, char *err, size_t errlen)
{
	struct td_sink_config cfg = { .store = *flags, .db = a->db, .spool_path = dest->spool_path };
	char store_error[512] = "", spool_error[512] = "";
	struct td_sink *sink = NULL;
	bool spool_named = true;
	struct stat st;
	int ret;

	if (a->spool)
		snprintf(dest->spool_path, sizeof(dest->spool_path), "%s", a->spool);
	else if (td_sink_default_spool_path(&cfg, dest->spool_path, sizeof(dest->spool_path), spool_error,
					    sizeof(spool_error)))
		spool_named = false;
	if (spool_named && !stat(dest->spool_path, &st) && !(sink = td_sink_open(&cfg, spool_error, sizeof(spool_error))))
		fprintf(stderr, "topdown collect: %s; what waits there stays\n", spool_error);
	if (!sink) {
		ret = td_store_write_run(store, run, err, errlen);
		if (!ret || ret == -EINVAL || ret == -EEXIST)
			return ret;
		snprintf(store_error, sizeof(store_error), "%s", err);
		if (spool_named)
			sink = td_sink_open(&cfg, spool_error, sizeof(spool_error));
		if (!sink) {
			snprintf(err, errlen, "%s; the run cannot wait in a spool either: %s", store_error, spool_error);
			return ret;
		}
	}
	ret = write_through_sink(sink, dest->spool_path, run, dest, store_error, sizeof(store_error), err, errlen);
	td_sink_close(sink);
	if (!ret && dest->spooled)
		fprintf(stderr, "topdown collect: the store did not take run %s (%s); it waits in the spool %s, and the "
			"next collect or agent start moves it there\n", run->id, store_error, dest->spool_path);
	return ret;
}

/* --spool: a file of its own, in a directory that exists, checked before the window. */
static int check_spool(const char *spool, const char *db_path, char *err, size_t errlen)
{
	char dir[4096];
	struct stat a, b;
	const char *slash = strrchr(spool, '/');

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - spool) + 1 : 1, slash ? spool : ".");
	if (!*spool || access(dir, W_OK | X_OK)) {
		snprintf(err, errlen, "--spool '%s' is not a file in a directory collect can write: give a writable path", spool);
		return -EINVAL;
	}
	if (!stat(spool, &a) && !stat(db_path, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		snprintf(err, errlen, "--spool '%s' is the database itself: give the spool a file of its own", spool);
		return -EINVAL;
	}
	return 0;
}

/* The collection proper, once the arguments, host and database are fine. */
static int collect_and_store(struct collect_args *a, struct td_tma_choice *tma, struct td_store *store,
			     const struct td_store_flags *store_flags, const char *db_path, char *err, size_t errlen)
{
	struct td_collector_opts opts = {
		.events = a->events, .nr_events = a->nr_events,
		.plan = td_tma_choice_plan(tma),
		.pmu_cpus = tma->setup ? tma->setup->pmu_cpus : NULL,
	};
	struct td_run *run = td_run_new();
	struct td_collector *c = NULL;
	struct locate_run lr = { 0 };
	struct destination dest = { .db_path = db_path };
	int ret = run ? fill_run(run, a, tma) : -ENOMEM;

	td_target_args_to_opts(&a->target, &opts);
	if (ret)
		snprintf(err, errlen, "out of memory preparing the run");
	if (!ret && a->sample && !(ret = start_locate(a, tma, &lr, err, errlen)))
		opts.sample = &lr.opts;
	if (!ret) /* before the window, so a failure costs nothing */
		ret = td_collect_new_engine(tma, (const char *const *)run->event_names, run->nr_events, err, errlen);
	if (!ret && !(c = td_collector_new(&opts, err, errlen)))
		ret = -1;
	if (!ret) /* after the targets are known to exist */
		ret = build_labels(a, tma, &run->labels, err, errlen);
	if (!ret) {
		announce_tma(a, tma);
		install_stop_handlers();
		ret = run_collection(c, a, run, &lr, &dest.targets_exited, err, errlen);
	}
	if (!ret && lr.locate && (ret = finish_locate(c, &lr, run)))
		snprintf(err, errlen, "out of memory keeping the profile");
	if (!ret && tma->engine)
		ret = td_engine_compute(tma->engine, run, err, errlen);
	if (!ret && tma->engine)
		say_starved(c, run);
	if (!ret && tma->engine)
		ret = explain_undefined(tma->engine, run, err, errlen);
	if (!ret)
		ret = save_run(a, store_flags, store, run, &dest, err, errlen);
	if (!ret && !run->nr_threads) { /* stored all the same: an idle target is an answer */
		char name[TD_SAFE_LEN(256)];

		fprintf(stderr, "topdown collect: no thread of %s ran during the window; the run holds no threads "
			"(was it asleep all along?)\n", td_safe_text(run->process, name, sizeof(name)));
	}
	if (!ret) {
		if (a->json) {
			print_json(run, tma, td_collector_attach_kind(c), &dest);
		} else {
			print_table(run, &dest, !tma->engine, a->all_threads);
			if (tma->engine)
				print_tma_table(run, tma);
			if (run->profile)
				print_hot(run, &lr);
		}
	}
	td_locate_free(lr.locate);
	td_collector_free(c);
	td_run_free(run);
	return ret;
}

int td_cmd_collect(int argc, char **argv)
{
	struct collect_args a = { 0 };
	struct td_tma_choice tma = { 0 };
	struct td_store *store = NULL;
	char err[768] = "", db_path[4096];
	int ret, failure = 1;

	td_labels_init(&a.user_labels);
	ret = parse_args(argc, argv, &a);
	if (ret) {
		td_labels_free(&a.user_labels);
		return ret < 0 ? 0 : ret;
	}
	/* a pid that cannot be counted costs no window */
	for (size_t i = 0; !ret && i < a.target.nr_pids; i++)
		ret = td_proc_check_target("/proc", a.target.pids[i], err, sizeof(err));
	if (ret)
		failure = TD_EXIT_USAGE;
	if (!ret)
		ret = td_collect_check_host(err, sizeof(err));
	if (!ret)
		ret = td_collect_choose_events(a.cpu_model, a.level, a.events_given, a.events, &a.nr_events, &tma,
					       err, sizeof(err));
	if (!ret && !(store = td_store_open_flags(&a.store_flags, a.db, TD_STORE_READ_WRITE, db_path, sizeof(db_path), err,
						  sizeof(err))))
		ret = -1;
	if (!ret && a.spool && (ret = check_spool(a.spool, db_path, err, sizeof(err))))
		failure = TD_EXIT_USAGE;
	if (!ret)
		ret = collect_and_store(&a, &tma, store, &a.store_flags, db_path, err, sizeof(err));
	if (ret)
		td_print_error("topdown collect", err[0] ? err : strerror(-ret));
	td_tma_choice_release(&tma);
	td_store_close(store);
	td_labels_free(&a.user_labels);
	return ret ? failure : 0;
}
