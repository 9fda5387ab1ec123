// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown top: the target's threads live, one refresh per interval, from
 * the collector collect uses (drained each interval: the rows are the
 * interval's deltas). On a terminal a curses screen with keys; with
 * --batch plain text frames for scripts. Nothing is stored.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect_setup.h"
#include "collector.h"
#include "commands.h"
#include "parse.h"
#include "procmatch.h"
#include "target_args.h"
#include "top_loop.h"

struct top_args {
	struct td_target_args target;
	uint64_t interval_ns;
	long level, iterations;
	bool batch;
};

static volatile sig_atomic_t stop_requested;

static void request_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static const char usage_text[] =
	"usage: topdown top (--process NAME | --pid PID[,PID...] | --system-wide)\n"
	"                   [--interval 1s] [--level 1..4] [--batch [--iterations N]]\n"
	"  --interval D     refresh every D (default 1s); the figures are each interval's\n"
	"  --level N        the Top-Down nodes down to level N as columns, where the CPU has a PMU (default 1)\n"
	"  --batch          plain text frames on stdout, one per interval, for scripts (no keys)\n"
	"  --iterations N   with --batch: N frames, then exit\n"
	"keys: c s w n sort by on-CPU, switches, run-queue wait, name; < > the column left or right;\n"
	"      / filter by name; p or space pause; g threads or thread-name groups; h or ? help; q quit\n";

static int usage_error(const char *message)
{
	fprintf(stderr, "topdown top: %s (topdown top --help lists the options)\n", message);
	return TD_EXIT_USAGE;
}

/* Parses and checks every option; returns 0, -1 after --help, or an exit code. */
static int parse_args(int argc, char **argv, struct top_args *a)
{
	static const struct option options[] = {
		{ "process", required_argument, NULL, 'p' },
		{ "pid", required_argument, NULL, 'P' },
		{ "system-wide", no_argument, NULL, 'a' },
		{ "interval", required_argument, NULL, 'i' },
		{ "level", required_argument, NULL, 'l' },
		{ "batch", no_argument, NULL, 'b' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	char err[512] = "";
	int opt, ret = 0;

	a->interval_ns = 1000000000;
	a->level = 1;
	optind = 1;
	opterr = 0; /* our one-line message instead of getopt's */
	while (!ret && (opt = getopt_long(argc, argv, "p:P:ai:l:bn:h", options, NULL)) != -1) {
		ret = td_target_args_take(&a->target, opt, optarg, err, sizeof(err));
		if (ret) { /* a target option: taken, or a bad value */
			ret = ret < 0 ? ret : 0;
			continue;
		}
		switch (opt) {
		case 'i': ret = td_parse_duration_ns(optarg, "--interval", &a->interval_ns, err, sizeof(err)); break;
		case 'l': ret = td_parse_int_range(optarg, "--level", 1, 4, &a->level, err, sizeof(err)); break;
		case 'b': a->batch = true; break;
		case 'n': ret = td_parse_int_range(optarg, "--iterations", 1, 1L << 40, &a->iterations, err,
						  sizeof(err));
			break;
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
	if (td_target_args_check(&a->target, err, sizeof(err)))
		return usage_error(err);
	if (a->interval_ns < 100000000)
		return usage_error("--interval must be 100ms or more: a screen refreshes no faster");
	if (a->iterations && !a->batch)
		return usage_error("--iterations counts --batch frames: give --batch too");
	if (!a->batch && !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "topdown top: stdout is not a terminal: use --batch for plain text frames\n");
		return TD_EXIT_USAGE;
	}
	return 0;
}

static void install_stop_handlers(void)
{
	/* no SA_RESTART: wake the poll or getch; installed before curses, which then leaves them alone */
	struct sigaction sa = { .sa_handler = request_stop };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* Whether pid is gone or a zombie: it runs no more either way. */
static bool process_exited(pid_t pid)
{
	char path[32], stat[256], *end;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return errno == ENOENT;
	n = fread(stat, 1, sizeof(stat) - 1, f);
	fclose(f);
	stat[n] = '\0';
	end = strrchr(stat, ')'); /* the comm may hold anything */
	return end && (end[2] == 'Z' || end[2] == 'X');
}

/* top's td_top_opts.targets_gone: every --pid exited, or no process of
 * the --process name runs any more; never for --system-wide. */
static bool targets_gone(const void *ctx)
{
	const struct td_target_args *t = ctx;
	char err[256];
	pid_t *pids;
	size_t n;

	if (t->process) {
		if (td_proc_find("/proc", t->process, getpid(), &pids, &n, err, sizeof(err)))
			return false; /* cannot tell: keep showing */
		free(pids);
		return n == 0;
	}
	for (size_t i = 0; i < t->nr_pids; i++)
		if (!process_exited(t->pids[i]))
			return false;
	return t->nr_pids > 0;
}

static void tma_status(const struct td_tma_choice *tma, char *buf, size_t len)
{
	if (tma->setup)
		snprintf(buf, len, "Top-Down level %d: %s, %s PMU, %zu counter group%s", tma->setup->depth,
			 tma->setup->model->long_name, tma->setup->pmu, tma->setup->plan.nr_groups,
			 tma->setup->plan.nr_groups == 1 ? "" : "s, one per interval in turn");
	else
		snprintf(buf, len, "Top-Down unavailable: %s", tma->unavailable);
}

static int run_top(const struct top_args *a, struct td_tma_choice *tma, const struct td_event *events,
		   size_t nr_events, char *err, size_t errlen)
{
	struct td_collector_opts opts = {
		.events = events, .nr_events = nr_events,
		.plan = tma->setup ? &tma->setup->plan : NULL,
		.pmu_cpus = tma->setup ? tma->setup->pmu_cpus : NULL,
	};
	const char *names[TD_MAX_EVENTS];
	char status[768];
	struct td_top_opts o = {
		.interval_ns = a->interval_ns, .batch = a->batch, .iterations = a->iterations,
		.tma_status = status, .event_names = names, .nr_events = nr_events, .stop = &stop_requested,
		.targets_gone = targets_gone, .targets = &a->target,
	};
	char *target = td_target_args_describe(&a->target);
	int ret = target ? 0 : -ENOMEM;

	for (size_t e = 0; e < nr_events; e++)
		names[e] = events[e].name;
	td_target_args_to_opts(&a->target, &opts);
	if (!ret)
		ret = td_collect_new_engine(tma, names, nr_events, err, errlen);
	if (!ret && !(o.collector = td_collector_new(&opts, err, errlen)))
		ret = -1;
	if (!ret) {
		tma_status(tma, status, sizeof(status));
		o.engine = tma->engine;
		o.target = target;
		install_stop_handlers();
		ret = td_top_run(&o, err, errlen);
	}
	td_collector_free(o.collector);
	free(target);
	return ret;
}

int td_cmd_top(int argc, char **argv)
{
	struct top_args a = { 0 };
	struct td_tma_choice tma = { 0 };
	struct td_event events[TD_MAX_EVENTS];
	size_t nr_events = 0;
	char err[768] = "";
	int ret = parse_args(argc, argv, &a);

	if (ret)
		return ret < 0 ? 0 : ret;
	ret = td_collect_check_host(err, sizeof(err));
	if (!ret)
		ret = td_collect_choose_events(NULL, a.level, false, events, &nr_events, &tma, err, sizeof(err));
	if (!ret)
		ret = run_top(&a, &tma, events, nr_events, err, sizeof(err));
	if (ret)
		fprintf(stderr, "topdown top: %s\n", err[0] ? err : strerror(-ret));
	td_tma_choice_release(&tma);
	return ret ? 1 : 0;
}
