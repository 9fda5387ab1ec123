/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Auto-detected run labels. root is "" in production and a recorded tree
 * (tests/data/hosts/<name>) in tests. User labels set afterwards replace
 * these, key by key.
 */
#ifndef TOPDOWN_HOSTINFO_H
#define TOPDOWN_HOSTINFO_H

#include <stddef.h>
#include <sys/types.h>

#include "labels.h"

/*
 * Sets arch (uname machine), kernel_version (uname release), node
 * (hostname), cpu (the model name from td_cpuinfo_read, when known) and
 * pmu_name: root/sys/bus/event_source/devices/cpu/caps/pmu_name on Intel,
 * "cpu" for an x86 core PMU without that file (AMD), the armv8_* or
 * armv9_* PMU's directory name on arm64, "none" without a hardware PMU.
 * The uname values come from uname(2) whatever root is.
 */
int td_hostinfo_labels(const char *root, struct td_labels *labels, char *err, size_t errlen);

/*
 * Sets cgroup (pid's cgroup v2 path, from root/proc/<pid>/cgroup) and,
 * when that path holds a 64-hex-digit container id (docker, containerd,
 * cri-o and kubepods layouts), container. Nothing is set for a process
 * without a cgroup v2 entry. -ENOENT when the process is gone.
 */
int td_hostinfo_process_labels(const char *root, pid_t pid, struct td_labels *labels,
			       char *err, size_t errlen);

#endif
