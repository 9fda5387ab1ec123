/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * import: counts from `perf stat` output turned into a run.
 *
 * Two steps, so each can be tested (and fuzzed) on its own:
 *
 *   td_perf_stat_parse()  reads `perf stat -x,` CSV or `perf stat -j` JSON
 *                         (one object per line) into counts, exactly as
 *                         written: no model involved.  It understands the
 *                         layouts perf prints with -I (interval timestamp),
 *                         -A (per CPU), --per-thread, --per-core,
 *                         --per-socket, --per-die, --per-node, --per-cache
 *                         and --per-cluster, and refuses -G (per cgroup).
 *   td_import_build()     maps the events onto a model of the kb, adds up
 *                         per-CPU or per-unit counts, computes the Top-Down
 *                         tree with the engine and returns the run.
 *
 * Counts.  perf prints counts already scaled by enabled/running time and
 * the percentage of the time the event was counted; the run keeps both
 * (value, running fraction).  "<not counted>" and "<not supported>" become
 * NaN with running fraction 0.  Summed counts (per CPU, per interval) take
 * the running fraction of the sum: total run time over total enabled time.
 *
 * Event names are matched to the model's events case-insensitively, as
 * Intel, AMD and Arm write them (INST_RETIRED.ANY, ls_not_halted_cyc,
 * STALL_SLOT_BACKEND), bare or in PMU form (cpu/.../, cpu_core/.../,
 * armv8_pmuv3_0/.../, with or without :u-style modifiers), as raw terms
 * (cpu/event=0xc2,umask=0x2/, r00c2, armv8_pmuv3_0/event=0x3a/), and by
 * perf's generic names where the model counts that event (cycles,
 * instructions, branches, branch-misses, ref-cycles, slots,
 * stalled-cycles-frontend/-backend on Arm).  Events of another PMU (the
 * cpu_atom half of a hybrid part when the model is the P-core) are left
 * out, as are events the model does not use; task-clock gives each
 * thread's on-CPU time.
 *
 * Errors name the line: "line 7: expected a count, '<not counted>' or
 * '<not supported>' in field 2, got 'abc'".  A count perf stat cannot
 * have written is refused, not read: negative, hexadecimal, inf or nan,
 * with an exponent or a sign, or above 2^64-1 ("line 12: count '-5' for
 * cycles is negative; perf stat counts are whole numbers from 0 to
 * 2^64-1").  So is a thread (or, without --per-thread, an interval)
 * that lacks the line of an event the file counts elsewhere: summed into
 * its group and process it would give ratios whose numerators and
 * divisors cover different threads.  Such a file is refused rather than
 * imported with the thread marked or left out, since either would store
 * a run that is not what perf counted; "<not counted>" keeps its meaning.
 */
#ifndef TOPDOWN_IMPORT_H
#define TOPDOWN_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kb.h"
#include "labels.h"
#include "run.h"

enum td_perf_format { TD_PERF_CSV, TD_PERF_JSON };

/* One count as the file gives it. */
struct td_perf_count {
	int line;                /* 1-based, for messages */
	double interval_s;       /* -I timestamp; NaN without -I */
	uint32_t tid;            /* --per-thread: the thread; 0 otherwise */
	char comm[TD_COMM_LEN];  /* --per-thread: its name */
	int unit;                /* index into td_perf_stat.units (CPU, core, ...); -1 when aggregated */
	size_t event;            /* index into td_perf_stat.events */
	double value;            /* NaN: not counted or not supported */
	double runtime_ns;       /* NaN when the file has no run time */
	double running_fraction; /* percentage / 100; 1 when the file has none */
};

/* A parsed perf stat file. */
struct td_perf_stat {
	enum td_perf_format format;
	bool per_thread;
	bool has_intervals;
	int64_t started_ns;      /* "# started on ..." (local time); 0 when absent */
	char **events;           /* distinct event names as written, first-seen order */
	char **event_units;      /* the unit perf printed with each ("msec", "") */
	size_t n_events;
	char **units;            /* distinct CPU or unit ids ("CPU3", "S0-D0-C1") */
	size_t n_units;
	struct td_perf_count *counts;
	size_t n_counts;
};

/*
 * Parses text[0..len) (need not be NUL-terminated).  -EINVAL with err
 * naming the line and the problem, -ENOMEM.  A file without any count is
 * an error too.
 */
int td_perf_stat_parse(const char *text, size_t len, struct td_perf_stat **out,
		       char *err, size_t errlen);
void td_perf_stat_free(struct td_perf_stat *ps);

/*
 * The model events a perf event name stands for on model m: their indexes
 * in m->events, at most max of them stored into out.  Returns how many
 * there are (0: none).  *other_pmu, when not NULL, says the name carries a
 * PMU the model's events do not belong to.
 */
size_t td_import_map_event(const struct td_model *m, const char *perf_name, int *out,
			   size_t max, bool *other_pmu);

struct td_import_opts {
	const struct td_model *model;
	int depth;              /* 1..4; 0: the deepest level the counts define */
	int smt;                /* 1 on, 0 off, -1: inferred from the events counted */
	const char *source;     /* file name, for the "source" label */
	const char *process;    /* run->process; NULL: the source's base name */
	const struct td_labels *labels; /* the user's; they override detected ones */
	int64_t file_time_ns;   /* when the file was written (mtime); the run's end
				 * when the file does not say when it started */
};

/* What an import produced. */
struct td_import {
	struct td_run *run;
	const struct td_model *model;
	int depth;
	bool smt_on;
	char **notes;           /* one sentence each: what was left out, inferred */
	size_t n_notes;
};

/*
 * Builds the run (collector "import") with its metric rows.  Labels:
 * cpu_model, collector=import, source, tma_level, smt, then the user's.
 * -EINVAL when the counts define no level-1 node of the model (err names
 * the missing events), -ENOMEM.
 */
int td_import_build(const struct td_perf_stat *ps, const struct td_import_opts *opts,
		    struct td_import **out, char *err, size_t errlen);
void td_import_free(struct td_import *imp);

#endif
