/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * doctor: what works on this host for topdown, and what to do about the
 * rest (`topdown doctor`). Each check says what it found and, when that
 * stands in the way, the fix. The checks print nothing: the command
 * renders the report as text or JSON.
 */
#ifndef TOPDOWN_DOCTOR_H
#define TOPDOWN_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "store_open.h"

enum td_check_status {
	TD_CHECK_OK,
	TD_CHECK_WARN, /* collection works without it, with less (no Top-Down, no BPF timing) */
	TD_CHECK_FAIL, /* collection cannot work until it is fixed */
};

struct td_check {
	const char *name;     /* stable key for --json: "kernel", "btf", "pmu", ... */
	enum td_check_status status;
	char detail[320];     /* what was found */
	char fix[320];        /* what to do; "" when nothing is */
};

#define TD_DOCTOR_MAX_CHECKS 24

/* What the PMU gives now (the pmu_counters check), as numbers for --json. */
struct td_doctor_counters {
	bool probed;              /* false: no PMU, or the probe could not open an event */
	unsigned gp_free, gp_documented;
	unsigned fixed_free, fixed_documented; /* of the level-1 events' fixed counters */
};

struct td_doctor_report {
	struct td_check checks[TD_DOCTOR_MAX_CHECKS];
	size_t count;
	bool can_collect; /* no check failed */
	struct td_doctor_counters counters;
};

struct td_doctor_opts {
	const struct td_store_flags *store; /* --backend, --dsn */
	const char *db;                     /* --db, or NULL */
	bool verify;                        /* count a loop through BPF and through perf_event_open */
};

/* Runs every check on this host. */
void td_doctor_run(const struct td_doctor_opts *opts, struct td_doctor_report *report);

const char *td_check_status_name(enum td_check_status status);

#endif
