// SPDX-License-Identifier: BSD-3-Clause
/*
 * The agent's window loop (agent.h): windows, the duty cycle, the
 * overhead governor, one run per target process per window, stored
 * through the durable sink and published on /metrics.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "collect_setup.h"
#include "collector.h"
#include "exporter.h"
#include "format.h"
#include "locate.h"
#include "procmatch.h"
#include "rotation.h"
#include "run.h"
#include "sink.h"
#include "topdown.h"
#include "writer.h"

#define NS_PER_SEC 1000000000ll
#define MIN_COUNTED_NS (100 * 1000000ll) /* --max-overhead never counts less of a window */
#define POLL_MS 100                      /* how often exits are taken in and signals seen */
#define OVERHEAD_AIM 0.8                 /* --max-overhead: aim below the budget, not at it */
#define BPF_SAMPLE_SHARE 10              /* the programs are timed for a tenth of the counted time */
#define MIN_BPF_SAMPLE_NS (50 * 1000000ll)

/*
 * The BPF programs' time in a window. While the kernel times BPF programs
 * every program on the host pays two clock reads per run (~60 ns in a KVM
 * guest, docs/BENCHMARKS.md): more than topdown's filter path itself. So
 * unless kernel.bpf_stats_enabled has them timed anyway, the agent has the
 * kernel time them for a sample at the start of each window and scales the
 * sample's time by the host's context switches in the window against those
 * in the sample: the switch program runs at every switch, the others far
 * less often. The scale takes in the window's paused part too, whose
 * switches cost less than counted ones: the estimate errs high, on the
 * budget's safe side.
 */
struct bpf_timing {
	bool sampled;             /* a sample of each window; else timed all along */
	int64_t sample_end;       /* CLOCK_MONOTONIC ns; 0: no sample under way */
	uint64_t run_ns;          /* the programs' time where the next figure starts */
	uint64_t switches;        /* the host's context switches at the last window's end (sampled) */
	uint64_t sample_start_switches;
	uint64_t sample_run_ns, sample_switches; /* the last sample's time and switches */
};

/* What the agent keeps between windows. */
struct td_agent {
	const struct td_agent_config *args;
	struct td_collector *collector;
	struct td_tma_choice tma;
	struct td_event events[TD_MAX_EVENTS];
	size_t nr_events;
	struct td_labels base_labels; /* host, collector, Top-Down */
	struct td_writer *writer;     /* owns the sink: runs are stored off the window loop */
	struct td_exporter *exporter;
	FILE *log;
	bool *waiting;          /* per process name: none running, and said so */
	int64_t counted_ns;     /* this window's counting time: --duration, or less under --max-overhead */
	bool paused;
	unsigned rotation_offset; /* --rotation-offset, or the host name's hash (rotation.h) */
	int64_t window_start;   /* CLOCK_MONOTONIC: where the next window starts, the last one's end */
	int64_t window_start_real; /* the same instant, wall clock */
	bool store_reachable;   /* at the last write, as the log last said */
	uint64_t store_file_changes, lost_runs; /* the writer's counts, as the log last said */
	bool bpf_timed;         /* the kernel can time the BPF programs (td_collector_bpf_run_ns) */
	struct bpf_timing bpf;
	uint64_t lost_threads;  /* the collector's count at the last window's end */
	uint64_t lost_samples;  /* locate: the collector's count at the last window's end */
	uint64_t cpu_ns;        /* the agent's CPU time at the last window's end */
	struct td_agent_health health;
	struct td_sample_opts sample; /* locate: what --sample asked for */
	struct td_locate *locate;     /* NULL without --sample */
	struct td_profile *window_profile; /* the window's stacks, taken at its end */
	bool follow_bottleneck;       /* --sample alone with a tree: sample the last window's bottleneck */
	char sampled_node[128];       /* the node whose event is sampled; "" for the default */
};

/* --- the log --- */

static void agent_log(struct td_agent *agent, const char *fmt, ...)
{
	char stamp[32], line[2048];
	time_t now = time(NULL);
	struct tm tm;
	va_list ap;

	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* lines quote process names and errors: escaped for whoever reads the log on a terminal */
	fprintf(agent->log, "%s topdown agent: ", stamp);
	td_fputs_safe(agent->log, line, 0);
	fputc('\n', agent->log);
	fflush(agent->log);
}

static FILE *open_log(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "ae");

	if (!f)
		snprintf(err, errlen, "cannot open the log %s: %s; choose a writable --log path", path, strerror(errno));
	else
		setvbuf(f, NULL, _IOLBF, 0);
	return f;
}

/* SIGHUP: logrotate moved the file away; continue in a new one at the same path. */
static void reopen_log(struct td_agent *agent)
{
	char err[512];
	FILE *f;

	*agent->args->reopen_requested = 0;
	if (!agent->args->log_path)
		return;
	if (!(f = open_log(agent->args->log_path, err, sizeof(err)))) {
		agent_log(agent, "%s (still logging to the old file)", err);
		return;
	}
	fclose(agent->log);
	agent->log = f;
	agent_log(agent, "log reopened");
}

/* --- self-accounting --- */

static int64_t clock_now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

static uint64_t agent_cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * NS_PER_SEC +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

/* One window's cost, as the runs' labels and the health report give it. */
struct window_cost {
	double cpu_ms, bpf_ms, overhead_pct, duty;
	bool bpf_timed; /* else bpf_ms is 0, unknown */
	bool duty_limited;
};

/* The host's context switches since boot (/proc/stat's ctxt); 0 if unreadable. */
static uint64_t host_switches(void)
{
	FILE *f = fopen("/proc/stat", "re");
	unsigned long long n = 0;
	char line[256];

	while (f && fgets(line, sizeof(line), f) && sscanf(line, "ctxt %llu", &n) != 1)
		;
	if (f)
		fclose(f);
	return n;
}

/*
 * At a window's start: the kernel starts timing the programs for the
 * sample. Where it will not (no CAP_SYS_ADMIN), the agent goes on without
 * agent.bpf_ms, and says so once: its counting matters more than its
 * self-accounting.
 */
static int start_bpf_sample(struct td_agent *agent, int64_t start, char *err, size_t errlen)
{
	int64_t sample = agent->counted_ns / BPF_SAMPLE_SHARE;
	int ret;

	if (!agent->bpf_timed || !agent->bpf.sampled)
		return 0;
	if (td_collector_time_bpf(agent->collector, true, err, errlen)) {
		agent_log(agent, "%s; runs of this agent carry no agent.bpf_ms", err);
		err[0] = '\0';
		agent->bpf_timed = false;
		return 0;
	}
	if ((ret = td_collector_bpf_run_ns(agent->collector, &agent->bpf.run_ns, err, errlen)))
		return ret;
	agent->bpf.sample_start_switches = host_switches();
	agent->bpf.sample_end = start + (sample > MIN_BPF_SAMPLE_NS ? sample : MIN_BPF_SAMPLE_NS);
	return 0;
}

/* The sample's time and switches taken, the kernel stops timing. */
static int end_bpf_sample(struct td_agent *agent, char *err, size_t errlen)
{
	uint64_t run_ns;
	int ret = td_collector_bpf_run_ns(agent->collector, &run_ns, err, errlen);

	if (ret)
		return ret;
	agent->bpf.sample_run_ns = run_ns - agent->bpf.run_ns;
	agent->bpf.sample_switches = host_switches() - agent->bpf.sample_start_switches;
	agent->bpf.sample_end = 0;
	return td_collector_time_bpf(agent->collector, false, err, errlen);
}

/* The programs' time since the last window's end: measured, or the sample's scaled (struct bpf_timing). */
static int bpf_window_ns(struct td_agent *agent, uint64_t *ns, char *err, size_t errlen)
{
	uint64_t switches, window_switches, now;
	int ret;

	if (!agent->bpf.sampled) {
		if ((ret = td_collector_bpf_run_ns(agent->collector, &now, err, errlen)))
			return ret;
		*ns = now - agent->bpf.run_ns;
		agent->bpf.run_ns = now;
		return 0;
	}
	if (agent->bpf.sample_end && (ret = end_bpf_sample(agent, err, errlen))) /* a window shorter than it */
		return ret;
	switches = host_switches();
	window_switches = switches - agent->bpf.switches;
	agent->bpf.switches = switches;
	*ns = agent->bpf.sample_switches
		      ? (uint64_t)((double)agent->bpf.sample_run_ns * window_switches / agent->bpf.sample_switches)
		      : agent->bpf.sample_run_ns;
	return 0;
}

static int measure_cost(struct td_agent *agent, int64_t wall_ns, int64_t counted_ns, struct window_cost *cost,
			char *err, size_t errlen)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t cpu = agent_cpu_ns(), bpf = 0;
	int ret = agent->bpf_timed ? bpf_window_ns(agent, &bpf, err, errlen) : 0;

	if (ret)
		return ret;
	cost->bpf_timed = agent->bpf_timed;
	cost->cpu_ms = (cpu - agent->cpu_ns) / 1e6;
	cost->bpf_ms = bpf / 1e6;
	cost->overhead_pct = wall_ns > 0 ? 100.0 * (cost->cpu_ms + cost->bpf_ms) * 1e6 / ((double)wall_ns * (cpus > 0 ? cpus : 1)) : 0;
	cost->duty = wall_ns > 0 ? (double)counted_ns / wall_ns : 0;
	if (cost->duty > 1)
		cost->duty = 1;
	cost->duty_limited = agent->counted_ns < (int64_t)agent->args->duration_ns;
	agent->cpu_ns = cpu;
	agent->health.agent_cpu_seconds += cost->cpu_ms / 1e3;
	agent->health.bpf_seconds += cost->bpf_ms / 1e3;
	agent->health.overhead_percent = cost->overhead_pct;
	agent->health.duty = cost->duty;
	return 0;
}

/*
 * --max-overhead: the next window counts for what would have cost
 * OVERHEAD_AIM of the budget, between a floor (a tenth of a second, or
 * the window when shorter) and --duration.
 */
static void adjust_duty(struct td_agent *agent, const struct window_cost *cost)
{
	double budget = agent->args->max_overhead_pct;
	int64_t wanted = agent->args->duration_ns, floor_ns = MIN_COUNTED_NS < wanted ? MIN_COUNTED_NS : wanted;
	int64_t next = wanted;
	char counted[32];

	if (budget <= 0)
		return;
	if (cost->overhead_pct > 0)
		next = (int64_t)(agent->counted_ns * OVERHEAD_AIM * budget / cost->overhead_pct);
	next = next < floor_ns ? floor_ns : next > wanted ? wanted : next;
	if (cost->overhead_pct <= budget && next < agent->counted_ns)
		next = agent->counted_ns; /* within budget: never shorten */
	/* said when the limit starts and when it ends, not at every step between */
	if (agent->counted_ns == wanted && next < wanted)
		agent_log(agent, "overhead %.3f%% is over --max-overhead %g%%: counting %s of each window", cost->overhead_pct,
			  budget, td_format_duration(next, counted, sizeof(counted)));
	else if (agent->counted_ns < wanted && next == wanted)
		agent_log(agent, "overhead back under --max-overhead %g%%: counting %s of each window again", budget,
			  td_format_duration(next, counted, sizeof(counted)));
	agent->counted_ns = next;
}

/* --- targets --- */

/* One line when a name starts being absent, one when a process of it appears. */
static void report_targets(struct td_agent *agent)
{
	for (size_t n = 0; n < agent->args->nr_process_names; n++) {
		const char *name = agent->args->process_names[n];
		size_t found = td_collector_processes_named(agent->collector, n);

		if (!found && !agent->waiting[n])
			agent_log(agent, "no process named '%s' is running; waiting for one", name);
		else if (found && agent->waiting[n])
			agent_log(agent, "following '%s': %zu process%s", name, found, found == 1 ? "" : "es");
		agent->waiting[n] = !found;
	}
}

/*
 * The --process name a pid was followed for: the one it matches while it
 * runs; once gone, the one its main thread's comm (the first 15 bytes of
 * a name) matches; else the only name there is.
 */
static const char *process_name_of(const struct td_agent *agent, pid_t pid, const struct td_thread_row *rows,
				   size_t n)
{
	const struct td_agent_config *a = agent->args;
	const char *comm = NULL;

	for (size_t i = 0; i < a->nr_process_names; i++)
		if (td_proc_matches("/proc", pid, a->process_names[i]))
			return a->process_names[i];
	for (size_t i = 0; i < n; i++)
		if ((pid_t)rows[i].tid == pid)
			comm = rows[i].comm;
	for (size_t i = 0; comm && i < a->nr_process_names; i++)
		if (!strncmp(a->process_names[i], comm, TD_TASK_COMM_LEN - 1))
			return a->process_names[i];
	return a->nr_process_names == 1 || !comm ? a->process_names[0] : comm;
}

/* --- runs --- */

static int compare_pid(const void *x, const void *y)
{
	const struct td_thread_row *a = x, *b = y;

	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static int compare_tid(const void *x, const void *y)
{
	const struct td_thread_row *a = x, *b = y;

	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/* b's figures added to a's: a counter's running fraction weighted by on-CPU time. */
static void merge_row(struct td_thread_row *a, const struct td_thread_row *b, size_t nr_events)
{
	double on_a = a->oncpu_ns, on_b = b->oncpu_ns;

	for (size_t e = 0; e < nr_events; e++) {
		struct td_counter_value *x = &a->counters[e];
		const struct td_counter_value *y = &b->counters[e];

		x->running_fraction = on_a + on_b > 0 ? (x->running_fraction * on_a + y->running_fraction * on_b) / (on_a + on_b)
						      : (x->running_fraction > y->running_fraction ? x->running_fraction : y->running_fraction);
		x->value = isnan(x->value) ? y->value : isnan(y->value) ? x->value : x->value + y->value;
	}
	a->oncpu_ns += b->oncpu_ns;
	a->voluntary_switches += b->voluntary_switches;
	a->involuntary_switches += b->involuntary_switches;
	a->migrations += b->migrations;
	a->runq_wait_ns += b->runq_wait_ns;
	a->exited = a->exited && b->exited;
}

size_t td_agent_merge_reused_tids(struct td_thread_row *rows, size_t n, size_t nr_events)
{
	size_t kept = 0;

	if (!n) /* rows may be NULL then, which qsort must not get */
		return 0;
	qsort(rows, n, sizeof(*rows), compare_tid);
	for (size_t i = 0; i < n; i++) {
		if (kept && rows[kept - 1].tid == rows[i].tid)
			merge_row(&rows[kept - 1], &rows[i], nr_events);
		else if (kept++ != i)
			rows[kept - 1] = rows[i];
	}
	return kept;
}

static int set_label_number(struct td_labels *labels, const char *key, const char *fmt, double value)
{
	char text[32];

	snprintf(text, sizeof(text), fmt, value);
	return td_labels_set(labels, key, text);
}

static int cost_labels(const struct window_cost *cost, struct td_labels *labels)
{
	int ret = set_label_number(labels, "agent.cpu_ms", "%.3f", cost->cpu_ms);

	if (!ret && cost->bpf_timed)
		ret = set_label_number(labels, "agent.bpf_ms", "%.3f", cost->bpf_ms);
	if (!ret)
		ret = set_label_number(labels, "agent.overhead_pct", "%.4f", cost->overhead_pct);
	if (!ret)
		ret = set_label_number(labels, "agent.duty", "%.3f", cost->duty);
	if (!ret && cost->duty_limited)
		ret = td_labels_set(labels, "agent.duty_limit", "max-overhead");
	return ret;
}

/* How many threads the run's rows stand for, and how many of them exited. */
static int thread_count_labels(const struct td_thread_row *rows, size_t n, struct td_labels *labels)
{
	size_t exited = 0;
	int ret;

	for (size_t i = 0; i < n; i++)
		exited += rows[i].exited;
	ret = set_label_number(labels, "agent.threads", "%.0f", n);
	return ret ? ret : set_label_number(labels, "agent.threads_exited", "%.0f", exited);
}

/* The window of the run, and what the run is of. */
struct window {
	int64_t start_ns, end_ns; /* wall clock */
	bool partial;
	uint64_t lost_threads;
	struct window_cost cost;
};

/*
 * One run of rows (a process's threads, or all of them), with its labels.
 * The rows are sorted and merged in place (td_agent_merge_reused_tids).
 */
static int make_run(struct td_agent *agent, const struct window *w, const char *process, pid_t pid,
		    struct td_thread_row *rows, size_t n, struct td_run **out, char *err, size_t errlen)
{
	struct td_run *run = td_run_new();
	char pid_text[16];
	int ret = run ? 0 : -ENOMEM;

	snprintf(pid_text, sizeof(pid_text), "%d", pid);
	if (!ret) {
		run->started_ns = w->start_ns;
		run->ended_ns = w->end_ns;
		run->partial = w->partial;
		run->dropped = w->lost_threads;
		run->level = agent->tma.wanted ? agent->args->level : 0;
		run->process = strdup(process);
		run->collector = strdup("bpf");
		run->threads = malloc((n + 1) * sizeof(*rows));
		run->nr_events = agent->nr_events;
		ret = run->process && run->collector && run->threads ? 0 : -ENOMEM;
	}
	for (size_t e = 0; !ret && e < agent->nr_events; e++)
		if (!(run->event_names[e] = strdup(agent->events[e].name)))
			ret = -ENOMEM;
	if (!ret)
		ret = td_labels_copy(&run->labels, &agent->base_labels);
	if (!ret)
		ret = thread_count_labels(rows, n, &run->labels);
	if (!ret) {
		run->nr_threads = td_agent_merge_reused_tids(rows, n, agent->nr_events);
		memcpy(run->threads, rows, run->nr_threads * sizeof(*rows));
	}
	if (!ret && pid)
		ret = td_collect_target_labels(process, pid_text, pid, &run->labels, err, errlen);
	if (!ret)
		ret = cost_labels(&w->cost, &run->labels);
	if (!ret) /* the user's labels win */
		ret = td_labels_copy(&run->labels, &agent->args->user_labels);
	if (!ret && agent->tma.engine)
		ret = td_engine_compute(agent->tma.engine, run, err, errlen);
	if (!ret && agent->window_profile && !(run->profile = td_profile_subset(agent->window_profile, (uint32_t)pid)))
		ret = -ENOMEM;
	if (ret && !err[0])
		snprintf(err, errlen, "out of memory building the window's runs");
	if (ret) {
		td_run_free(run);
		return ret;
	}
	*out = run;
	return 0;
}

/*
 * The window's runs: one per process (rows sorted by pid), or one for the
 * whole system. *runs is malloc'd, each run too.
 */
static int make_runs(struct td_agent *agent, const struct window *w, struct td_thread_row *rows, size_t n,
		     struct td_run ***runs, size_t *nr_runs, char *err, size_t errlen)
{
	int ret = 0;

	*nr_runs = 0;
	if (!(*runs = calloc(n + 1, sizeof(**runs)))) {
		snprintf(err, errlen, "out of memory building the window's runs");
		return -ENOMEM;
	}
	if (agent->args->system_wide) {
		if (n && !(ret = make_run(agent, w, "system-wide", 0, rows, n, *runs, err, errlen)))
			*nr_runs = 1;
		return ret;
	}
	qsort(rows, n, sizeof(*rows), compare_pid);
	for (size_t first = 0, end; !ret && first < n; first = end) {
		pid_t pid = rows[first].pid;

		for (end = first; end < n && (pid_t)rows[end].pid == pid; end++)
			;
		ret = make_run(agent, w, process_name_of(agent, pid, rows + first, end - first), pid, rows + first,
			       end - first, &(*runs)[*nr_runs], err, errlen);
		*nr_runs += !ret;
	}
	return ret;
}

static void free_runs(struct td_run **runs, size_t nr_runs)
{
	for (size_t i = 0; i < nr_runs; i++)
		td_run_free(runs[i]);
	free(runs);
}

/*
 * The writer's state into the health report; said once when the store
 * stops or starts answering, when its file went, when runs are lost.
 */
static void report_sink(struct td_agent *agent)
{
	struct td_writer_state state;
	const struct td_sink_stats *stats = &state.sink;

	td_writer_state(agent->writer, &state);
	if (agent->store_reachable && !stats->store_reachable)
		agent_log(agent, "the database does not take runs (%s): they wait in the spool", stats->last_error);
	else if (!agent->store_reachable && stats->store_reachable)
		agent_log(agent, "the database takes runs again; %zu still in the spool", stats->spool_depth);
	if (stats->store_file_changes > agent->store_file_changes)
		agent_log(agent, "%s", stats->store_file_note);
	if (state.lost > agent->lost_runs)
		agent_log(agent, "%llu run%s lost since the last window; the last: %s",
			  (unsigned long long)(state.lost - agent->lost_runs), state.lost - agent->lost_runs == 1 ? "" : "s",
			  state.last_lost);
	agent->store_reachable = stats->store_reachable;
	agent->store_file_changes = stats->store_file_changes;
	agent->lost_runs = state.lost;
	agent->health.spool_depth = stats->spool_depth;
	agent->health.runs_spooled = stats->spooled;
	agent->health.runs_replayed = stats->replayed;
	agent->health.store_queue = state.queued;
	agent->health.runs_stored_late = state.late;
	agent->health.runs_lost = state.lost;
}

static void publish(struct td_agent *agent, struct td_run **runs, size_t nr_runs)
{
	if (agent->exporter && td_exporter_publish(agent->exporter, (const struct td_run *const *)runs, nr_runs,
						   &agent->args->user_labels, &agent->health))
		agent_log(agent, "out of memory publishing /metrics; the endpoint keeps the previous window");
}

/* The window's stacks, with what the kernel lost of them in the window. */
static int take_window_profile(struct td_agent *agent, char *err, size_t errlen)
{
	struct td_sample_tally tally;

	td_collector_sample_tally(agent->collector, &tally);
	agent->window_profile = td_locate_take_profile(agent->locate, agent->sample.event.name,
						       agent->sample.frequency_hz, agent->sample.period,
						       tally.lost_samples - agent->lost_samples);
	agent->lost_samples = tally.lost_samples;
	if (!agent->window_profile) {
		snprintf(err, errlen, "out of memory keeping the window's stacks");
		return -ENOMEM;
	}
	return 0;
}

const char *td_agent_deepest_crossing(struct td_run *const *runs, size_t n)
{
	const struct td_metric_row *best = NULL;

	for (size_t r = 0; r < n; r++) {
		for (size_t i = 0; i < runs[r]->nr_metrics; i++) {
			const struct td_metric_row *m = &runs[r]->metrics[i];

			if (m->scope != TD_SCOPE_PROCESS || m->interval_seq != -1 || !m->threshold_crossed ||
			    m->level < 1 || isnan(m->value))
				continue;
			if (!best || m->level > best->level || (m->level == best->level && m->value > best->value))
				best = m;
		}
	}
	return best ? best->path : NULL;
}

/* The next window samples the event of the deepest node this one crossed; said when it changes. */
static void follow_bottleneck(struct td_agent *agent, struct td_run *const *runs, size_t nr_runs)
{
	const char *node = agent->follow_bottleneck ? td_agent_deepest_crossing(runs, nr_runs) : NULL;
	struct td_sample_opts opts = agent->sample;
	char err[512];

	if (!node || strcmp(node, agent->sampled_node) == 0)
		return;
	if (td_collect_sample_for_node(agent->tma.setup, node, &opts.event, &opts.precise, err, sizeof(err)) ||
	    td_collector_resample(agent->collector, &opts, err, sizeof(err))) {
		agent_log(agent, "cannot sample the event of %s (%s); sampling %s on", node, err,
			  agent->sample.event.name);
		return;
	}
	agent->sample = opts;
	snprintf(agent->sampled_node, sizeof(agent->sampled_node), "%s", node);
	agent_log(agent, "the last window's bottleneck is %s: sampling %s%s from now on", node, opts.event.name,
		  opts.precise ? " (precise)" : "");
}

/*
 * Ends window w: its counts read, which is the next window's start; its
 * runs published and queued for the writer; the next duty decided.
 */
static int finish_window(struct td_agent *agent, struct window *w, int64_t counted_ns, char *err, size_t errlen)
{
	struct td_thread_row *rows = NULL;
	struct td_run **runs = NULL;
	size_t n = 0, nr_runs = 0;
	uint64_t lost = td_collector_lost_threads(agent->collector);
	int64_t start = agent->window_start, wall_ns;
	int ret = td_collector_end_window(agent->collector, &rows, &n, err, errlen);

	/* the instant the counts were read ends this window and starts the next: no time falls between */
	agent->window_start = clock_now_ns(CLOCK_MONOTONIC);
	agent->window_start_real = clock_now_ns(CLOCK_REALTIME);
	w->end_ns = agent->window_start_real;
	wall_ns = agent->window_start - start;
	if (counted_ns < 0) /* never paused: all of it was counted */
		counted_ns = wall_ns;
	w->lost_threads = lost - agent->lost_threads;
	agent->lost_threads = lost;
	if (!ret)
		ret = measure_cost(agent, wall_ns, counted_ns, &w->cost, err, errlen);
	if (!ret && agent->locate)
		ret = take_window_profile(agent, err, errlen);
	if (!ret)
		ret = make_runs(agent, w, rows, n, &runs, &nr_runs, err, errlen);
	free(rows);
	td_profile_free(agent->window_profile);
	agent->window_profile = NULL;
	if (!ret) {
		agent->health.windows++;
		agent->health.partial_windows += w->partial;
		agent->health.dropped += w->lost_threads;
		report_sink(agent);
		publish(agent, runs, nr_runs);
		follow_bottleneck(agent, runs, nr_runs);
		adjust_duty(agent, &w->cost);
		td_writer_submit(agent->writer, runs, nr_runs); /* the writer's now */
		return 0;
	}
	free_runs(runs, nr_runs);
	return ret;
}

/* --- the window loop --- */

/* Takes in exits (and signals) until the monotonic time until. */
static int wait_until(struct td_agent *agent, int64_t until, char *err, size_t errlen)
{
	int64_t now;
	int ret;

	while (!*agent->args->stop_requested && (now = clock_now_ns(CLOCK_MONOTONIC)) < until) {
		int64_t wake, wait_ms;

		/* first, so that a wake-up is never in the past (a negative poll waits for ever) */
		if (agent->bpf.sample_end && now >= agent->bpf.sample_end && (ret = end_bpf_sample(agent, err, errlen)))
			return ret;
		wake = agent->bpf.sample_end && agent->bpf.sample_end < until ? agent->bpf.sample_end : until;
		wait_ms = (wake - now + 999999) / 1000000;
		if ((ret = td_collector_poll(agent->collector, wait_ms < POLL_MS ? wait_ms : POLL_MS, err, errlen)))
			return ret;
		if (*agent->args->reopen_requested)
			reopen_log(agent);
	}
	return 0;
}

static size_t counter_groups(const struct td_agent *agent)
{
	return td_collector_group_count(agent->collector);
}

/*
 * The counted part of a window, from start to end: sub-intervals, the
 * counter groups in turn (td_rotation_turns of them when nothing cuts the
 * window short).
 */
static int count(struct td_agent *agent, int64_t start, int64_t end, char *err, size_t errlen)
{
	int64_t sub = td_rotation_sub_interval_ns(agent->counted_ns, counter_groups(agent));
	int ret = 0;

	for (int64_t sub_end = start + sub; !ret; sub_end += sub) {
		ret = wait_until(agent, sub_end < end ? sub_end : end, err, errlen);
		if (!ret)
			ret = td_collector_drain(agent->collector, NULL, err, errlen);
		if (!ret && agent->locate) /* while the sampled processes live */
			ret = td_collector_drain_samples(agent->collector, td_locate_raw_stack, agent->locate, err, errlen);
		if (!ret)
			report_targets(agent);
		if (ret || *agent->args->stop_requested || sub_end >= end)
			break;
		ret = td_collector_rotate(agent->collector, err, errlen);
	}
	return ret;
}

/*
 * The group a window's counting starts with: decided by the window's
 * wall-clock start and the host's offset (td_rotation_first_group), so
 * that the hosts of a fleet split the groups among them in every window,
 * and one host goes through them all over consecutive windows, whatever
 * the last window counted. Between windows the counts were just read: the
 * switch loses no more than a turn's does (td_collector_activate_group).
 */
static int first_turn(struct td_agent *agent, char *err, size_t errlen)
{
	size_t groups = counter_groups(agent);
	uint64_t window = td_rotation_window_index(agent->window_start_real, agent->args->every_ns);
	uint64_t turns = td_rotation_turns(agent->counted_ns, groups);

	return td_collector_activate_group(agent->collector,
					   td_rotation_first_group(window, turns, agent->rotation_offset, groups),
					   err, errlen);
}

/*
 * A window from the last one's end (agent->window_start) to --every
 * after it. The collector, paused for the rest of the last window when
 * the duty cycle asked, counts from its resume for the counted time.
 */
static int run_window(struct td_agent *agent, char *err, size_t errlen)
{
	struct window w = { .start_ns = agent->window_start_real };
	int64_t end = agent->window_start + (int64_t)agent->args->every_ns, counted = -1, count_start;
	int ret;

	/* before the resume: a switch while paused discards nothing */
	if ((ret = first_turn(agent, err, errlen)))
		return ret;
	if (agent->paused) {
		if ((ret = td_collector_resume(agent->collector, err, errlen)))
			return ret;
		agent->paused = false;
	}
	count_start = clock_now_ns(CLOCK_MONOTONIC);
	if ((ret = start_bpf_sample(agent, count_start, err, errlen)))
		return ret;
	ret = count(agent, count_start, count_start + agent->counted_ns < end ? count_start + agent->counted_ns : end,
		    err, errlen);
	if (!ret && !*agent->args->stop_requested && clock_now_ns(CLOCK_MONOTONIC) < end) {
		td_collector_pause(agent->collector);
		agent->paused = true;
		counted = clock_now_ns(CLOCK_MONOTONIC) - count_start;
		ret = wait_until(agent, end, err, errlen);
	}
	w.partial = *agent->args->stop_requested;
	if (!ret)
		ret = finish_window(agent, &w, counted, err, errlen);
	return ret;
}

static void announce(struct td_agent *agent)
{
	const struct td_agent_config *a = agent->args;
	char every[32], counted[32], targets[TD_MAX_TARGET_COMMS * 20] = "", slots[256];
	size_t used = 0;

	for (size_t n = 0; n < a->nr_process_names; n++)
		used += snprintf(targets + used, sizeof(targets) - used, "%s'%s'", n ? ", " : "",
				 a->process_names[n]);
	agent_log(agent, "following %s; windows of %s, counting %s of each, %zu counter group%s",
		  a->system_wide ? "the whole system" : targets, td_format_duration(a->every_ns, every, sizeof(every)),
		  td_format_duration(agent->counted_ns, counted, sizeof(counted)), counter_groups(agent),
		  counter_groups(agent) == 1 ? "" : "s, in turn");
	if (counter_groups(agent) > 1)
		agent_log(agent, "rotation offset %u (%s): hosts of other offsets start their windows on other groups",
			  agent->rotation_offset, a->rotation_offset_given ? "--rotation-offset" : "the host name's hash");
	if (agent->tma.wanted && !agent->tma.setup)
		agent_log(agent, "TMA unavailable: %s; runs keep the scheduling figures and the counters that work here",
			  agent->tma.unavailable);
	if (agent->tma.setup && agent->tma.setup->variant[0])
		agent_log(agent, "%s", agent->tma.setup->variant);
	if (agent->tma.counters_note[0])
		agent_log(agent, "%s", agent->tma.counters_note);
	if (agent->tma.setup && td_tma_describe_slots(agent->tma.setup, slots, sizeof(slots)))
		agent_log(agent, "%s", slots);
}

static int new_engine(struct td_agent *agent, char *err, size_t errlen)
{
	const char *names[TD_MAX_EVENTS];

	for (size_t e = 0; e < agent->nr_events; e++)
		names[e] = agent->events[e].name;
	return td_collect_new_engine(&agent->tma, names, agent->nr_events, err, errlen);
}

/* --sample: the event (said once in the log when it had to change) and the locate side. */
static int prepare_sampling(struct td_agent *agent, struct td_collector_opts *opts, char *err, size_t errlen)
{
	char notice[768];
	int ret = td_collect_choose_sample(agent->args->sample_event, NULL, &agent->tma, agent->args->sample_freq_hz,
					   &agent->sample, notice, sizeof(notice), err, errlen);

	if (ret)
		return ret;
	if (notice[0])
		agent_log(agent, "%s", notice);
	if (!(agent->locate = td_locate_new(NULL, err, errlen)))
		return -ENOMEM;
	opts->sample = &agent->sample;
	agent->follow_bottleneck = !agent->args->sample_event && agent->tma.setup && agent->tma.engine;
	return 0;
}

/* --rotation-offset auto: the hash of the host's name, as uname gives it (the runs' node label). */
static unsigned host_rotation_offset(void)
{
	struct utsname host = { 0 };

	uname(&host);
	return td_rotation_host_offset(host.nodename);
}

/*
 * The host's rotation offset, and with groups that take turns, labels on
 * every run that say so: pmu_groups and rotation_offset tell which groups
 * each window counted (rotation.h), so that the runs of several hosts can
 * be pooled.
 */
static int rotation_labels(struct td_agent *agent, char *err, size_t errlen)
{
	const struct td_agent_config *a = agent->args;
	int ret;

	agent->rotation_offset = a->rotation_offset_given ? a->rotation_offset : host_rotation_offset();
	if (counter_groups(agent) < 2)
		return 0;
	ret = set_label_number(&agent->base_labels, "pmu_groups", "%.0f", counter_groups(agent));
	if (!ret)
		ret = set_label_number(&agent->base_labels, "rotation_offset", "%.0f", agent->rotation_offset);
	if (ret)
		snprintf(err, errlen, "out of memory building labels");
	return ret;
}

/* Everything that can fail before the first window, cheapest first. */
static int prepare(struct td_agent *agent, const struct td_agent_config *a, char *err, size_t errlen)
{
	struct td_collector_opts opts = {
		.system_wide = a->system_wide, .process_names = a->process_names,
		.nr_process_names = a->nr_process_names, .wait_for_targets = true,
	};
	char spool[4096];
	struct td_sink_config sink_config = { .store = a->store_flags, .db = a->db, .spool_path = a->spool };
	struct td_sink *sink = NULL;
	int ret = td_collect_check_host(err, errlen);

	if (!ret && a->events_given) {
		memcpy(agent->events, a->events, a->nr_events * sizeof(a->events[0]));
		agent->nr_events = a->nr_events;
	}
	if (!ret)
		ret = td_collect_choose_events(NULL, a->level, a->events_given, agent->events, &agent->nr_events,
					       &agent->tma, err, errlen);
	if (!ret)
		ret = new_engine(agent, err, errlen);
	if (!ret && !a->spool && !(ret = td_sink_default_spool_path(&sink_config, spool, sizeof(spool), err, errlen)))
		sink_config.spool_path = spool;
	if (!ret && !(sink = td_sink_open(&sink_config, err, errlen)))
		ret = -EINVAL;
	/* late: stored more than a window after its end, when the next window is already in */
	if (!ret && !(agent->writer = td_writer_start(sink, (int64_t)a->every_ns, err, errlen))) {
		td_sink_close(sink);
		ret = -EAGAIN;
	}
	if (!ret && a->metrics_listen && !(agent->exporter = td_exporter_start(a->metrics_listen, err, errlen)))
		ret = -EINVAL;
	if (!ret && !(agent->waiting = calloc(a->nr_process_names + 1, sizeof(*agent->waiting))))
		ret = -ENOMEM;
	if (!ret)
		ret = td_collect_base_labels(&agent->tma, a->level, &agent->base_labels, err, errlen);
	if (!ret && a->sample)
		ret = prepare_sampling(agent, &opts, err, errlen);
	if (ret)
		return ret;
	opts.events = agent->events;
	opts.nr_events = agent->nr_events;
	opts.plan = td_tma_choice_plan(&agent->tma);
	opts.pmu_cpus = agent->tma.setup ? agent->tma.setup->pmu_cpus : NULL;
	if (!(agent->collector = td_collector_new(&opts, err, errlen)))
		return -EINVAL;
	if ((ret = rotation_labels(agent, err, errlen)))
		return ret;
	/* counting starts with the collector: so does the first window */
	agent->window_start = clock_now_ns(CLOCK_MONOTONIC);
	agent->window_start_real = clock_now_ns(CLOCK_REALTIME);
	agent->cpu_ns = agent_cpu_ns();
	agent->bpf.switches = host_switches();
	agent->bpf_timed = true; /* until the kernel refuses (start_bpf_sample) */
	/* timed in samples, the first at the first window's start, unless timed anyway */
	agent->bpf.sampled = !td_collector_bpf_always_timed();
	return agent->bpf.sampled ? 0 : td_collector_bpf_run_ns(agent->collector, &agent->bpf.run_ns, err, errlen);
}

void td_agent_free(struct td_agent *agent)
{
	if (!agent)
		return;
	td_collector_free(agent->collector);
	td_locate_free(agent->locate);
	td_profile_free(agent->window_profile);
	td_exporter_stop(agent->exporter);
	td_writer_free(agent->writer);
	td_tma_choice_release(&agent->tma);
	td_labels_free(&agent->base_labels);
	free(agent->waiting);
	if (agent->log && agent->log != stderr)
		fclose(agent->log);
	free(agent);
}


struct td_agent *td_agent_new(const struct td_agent_config *config, char *err, size_t errlen)
{
	struct td_agent *agent = calloc(1, sizeof(*agent));
	int ret = 0;

	if (!agent) {
		snprintf(err, errlen, "out of memory starting the agent");
		return NULL;
	}
	*agent = (struct td_agent){ .args = config, .log = stderr, .store_reachable = true,
				    .counted_ns = config->duration_ns };
	td_labels_init(&agent->base_labels);
	if (config->log_path && !(agent->log = open_log(config->log_path, err, errlen))) {
		agent->log = stderr;
		ret = -EINVAL;
	}
	if (!ret)
		ret = prepare(agent, config, err, errlen);
	if (ret) {
		if (agent->log != stderr)
			agent_log(agent, "%s", err[0] ? err : strerror(-ret));
		td_agent_free(agent);
		return NULL;
	}
	announce(agent);
	report_sink(agent);
	report_targets(agent);
	return agent;
}

int td_agent_run(struct td_agent *agent, char *err, size_t errlen)
{
	const struct td_agent_config *a = agent->args;
	char why[512];
	int ret = 0;

	for (long window = 0; !ret && !*a->stop_requested && (!a->windows || window < a->windows); window++)
		ret = run_window(agent, err, errlen);
	/* every window's runs into the store, or the spool; the spool tried once more */
	if (td_writer_finish(agent->writer, why, sizeof(why)) == -EINVAL)
		agent_log(agent, "%s", why);
	report_sink(agent);
	if (ret && agent->log != stderr)
		agent_log(agent, "%s", err[0] ? err : strerror(-ret));
	else if (!ret)
		agent_log(agent, "stopped after %llu windows", (unsigned long long)agent->health.windows);
	return ret;
}
