/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sampled stacks as a pprof profile: the gzip-compressed protobuf
 * perftools.profiles.Profile (user/render/profile.proto) that go tool
 * pprof, Pyroscope and Parca read.
 *
 * What goes where:
 *  - sample_type: one value per sample, {profile unit ("samples", "L3
 *    misses"), "count"}; period_type and period: {event, "count"} and the
 *    events per sample when sampled by period, {event, "nanoseconds"} and
 *    1e9 / Hz when sampled at a frequency (a sample per that much CPU time,
 *    what Go's own CPU profiles say). The newest run's, should runs differ.
 *  - one Sample per stack in scope: its locations leaf first (ours are kept
 *    outermost first), labels "thread" (comm), "tid" and "pid", and
 *    "truncated" = "true" where the outermost frames are missing.
 *  - one Location per distinct frame, with one Line. pprof would put the
 *    functions inlined at one address as several Lines of one Location;
 *    our symbolizer already made each of them a frame of its own (one
 *    address, several frames), and a Location per frame keeps every
 *    stack exactly as stored, so viewers show the inlined calls as calls.
 *  - Functions by (name, source file); Mappings by module name, each as
 *    if loaded at 0: a frame's offset is its address. A frame the
 *    symbolizer could not name keeps that address and its mapping and has
 *    no Line, so a viewer holding the binary can still resolve it; a frame
 *    with no module either gets a Function named "[unknown]".
 *  - time_nanos: the earliest run's start; duration_nanos: the runs'
 *    windows added up. A comment names topdown and each run.
 */
#ifndef TOPDOWN_PPROF_H
#define TOPDOWN_PPROF_H

#include <stddef.h>
#include <stdio.h>

#include "run.h"

/*
 * Writes the profiles of runs (each with one; newest first, as
 * td_read_profiles lists them) for thread (NULL: every thread; a tid or
 * a thread name, as td_profile_stack_in_scope reads it) to out. The runs,
 * not only their profiles, since the window and the id are the run's.
 * Nothing is written on a failure but -EIO:
 * -EINVAL when the runs sampled different events, TD_QUERY_NOTHING
 * (-ENODATA) when no stack is in scope, -ENOMEM, -EIO when out fails.
 */
int td_pprof_write(FILE *out, const struct td_run *const *runs, size_t n, const char *thread,
		   char *err, size_t errlen);

#endif
