// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown top: the target's threads live, one refresh per interval, from
 * the collector collect uses (drained each interval: the rows are the
 * interval's deltas). On a terminal a curses screen with keys; with
 * --batch plain text frames for scripts. Nothing is stored.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect_setup.h"
#include "collector.h"
#include "commands.h"
#include "format.h"
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

static const struct td_opt top_options[] = {
	TD_OPTS_TARGET(struct top_args, target),
	TD_OPTION("interval", TD_OPT_DURATION, offsetof(struct top_args, interval_ns), "D",
		  "refresh every D (default 1s, at least 100ms); the figures are each interval's", .short_name = 'i'),
	TD_OPTION("level", TD_OPT_INT, offsetof(struct top_args, level), "N",
		  "the Top-Down nodes down to level N as columns, where the CPU has a PMU (default 1)",
		  .min = 1, .max = 4, .short_name = 'l'),
	TD_OPTION("batch", TD_OPT_FLAG, offsetof(struct top_args, batch), NULL,
		  "plain text frames on stdout, one per interval, for scripts (no keys)", .short_name = 'b'),
	TD_OPTION("iterations", TD_OPT_INT, offsetof(struct top_args, iterations), "N",
		  "with --batch: N frames, then exit", .min = 1, .max = 1L << 40, .short_name = 'n'),
	{ 0 }
};

static const struct td_cli top_command = {
	.command = "top",
	.synopsis = "usage: topdown top (--process NAME | --pid PID[,PID...] | --system-wide)\n"
		    "                   [--interval 1s] [--level 1..4] [--batch [--iterations N]]\n",
	.notes = "keys: c s w n sort by on-CPU, switches, run-queue wait, name; < > the column left or right;\n"
		 "      / filter by name; p or space pause; g threads or thread-name groups; h or ? help; q quit\n",
	.opts = top_options,
};

static int usage_error(const char *message)
{
	return td_cli_usage_error(&top_command, message);
}

/* Parses and checks every option; returns 0, -1 after --help, or an exit code. */
static int parse_args(int argc, char **argv, struct top_args *a)
{
	struct td_cli_seen seen;
	char err[512] = "";
	int ret;

	a->interval_ns = 1000000000;
	a->level = 1;
	if ((ret = td_cli_read(&top_command, argc, argv, a, &seen)))
		return ret;
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
		td_print_error("topdown top", err[0] ? err : strerror(-ret));
	td_tma_choice_release(&tma);
	return ret ? 1 : 0;
}
