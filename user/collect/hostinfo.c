// SPDX-License-Identifier: BSD-3-Clause
/*
 * Run labels detected from the host and from the target process, so that
 * runs from different machines, kernels and containers can be told apart
 * without the user typing any of it.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cpuinfo.h"
#include "fileio.h"
#include "hostinfo.h"

#define CONTAINER_ID_LEN 64

static int set_label(struct td_labels *labels, const char *key, const char *value,
		     char *err, size_t errlen)
{
	if (td_labels_set(labels, key, value) < 0) {
		snprintf(err, errlen, "out of memory setting label '%s'; free memory and retry", key);
		return -ENOMEM;
	}
	return 0;
}

/* Whether a PMU directory names an arm64 core PMU: armv8_pmuv3_0, armv9_neoverse_n2... */
static bool is_arm_core_pmu(const char *name)
{
	return strncmp(name, "armv8_", 6) == 0 || strncmp(name, "armv9_", 6) == 0;
}

/*
 * The first arm64 core PMU in name order (big.LITTLE systems have one per
 * core type); false when devices holds none.
 */
static bool find_arm_pmu(const char *devices, char *out, size_t len)
{
	DIR *dir = opendir(devices);
	struct dirent *entry;
	bool found = false;

	if (!dir)
		return false;
	while ((entry = readdir(dir))) {
		if (!is_arm_core_pmu(entry->d_name) || (found && strcmp(entry->d_name, out) >= 0))
			continue;
		snprintf(out, len, "%s", entry->d_name);
		found = true;
	}
	closedir(dir);
	return found;
}

/* See td_hostinfo_labels for the order of the sources. */
static void detect_pmu_name(const char *root, char *out, size_t len)
{
	char devices[PATH_MAX], path[PATH_MAX + 32];

	snprintf(devices, sizeof(devices), "%s/sys/bus/event_source/devices", root);
	snprintf(path, sizeof(path), "%s/cpu/caps/pmu_name", devices);
	if (td_read_first_line(path, out, len) == 0 && out[0])
		return;
	snprintf(path, sizeof(path), "%s/cpu/type", devices);
	if (access(path, R_OK) == 0)
		snprintf(out, len, "cpu");
	else if (!find_arm_pmu(devices, out, len))
		snprintf(out, len, "none");
}

int td_hostinfo_labels(const char *root, struct td_labels *labels, char *err, size_t errlen)
{
	struct utsname uts;
	struct td_cpuinfo cpu;
	char pmu_name[NAME_MAX + 1];
	int rc;

	if (uname(&uts) < 0) {
		rc = -errno;
		snprintf(err, errlen, "uname failed: %s; label the run by hand with --label", strerror(-rc));
		return rc;
	}
	rc = td_cpuinfo_read(root, &cpu, err, errlen);
	if (rc < 0)
		return rc;
	detect_pmu_name(root, pmu_name, sizeof(pmu_name));

	if ((rc = set_label(labels, "arch", uts.machine, err, errlen)) < 0 ||
	    (rc = set_label(labels, "kernel_version", uts.release, err, errlen)) < 0 ||
	    (rc = set_label(labels, "node", uts.nodename, err, errlen)) < 0 ||
	    (cpu.model_name[0] && (rc = set_label(labels, "cpu", cpu.model_name, err, errlen)) < 0) ||
	    (rc = set_label(labels, "pmu_name", pmu_name, err, errlen)) < 0)
		return rc;
	return 0;
}

/*
 * The last run of exactly 64 lowercase hex digits in path that stands
 * alone (not part of a longer word): the container id in
 * ".../docker-<id>.scope", ".../cri-containerd-<id>.scope",
 * ".../crio-<id>.scope" and ".../docker/<id>". NULL when there is none.
 */
static const char *find_container_id(const char *path)
{
	const char *found = NULL;

	for (const char *p = path; *p;) {
		size_t run = strspn(p, "0123456789abcdef");
		bool alone = (p == path || !isalnum((unsigned char)p[-1])) && !isalnum((unsigned char)p[run]);

		if (run == CONTAINER_ID_LEN && alone)
			found = p;
		p += run ? run : 1;
	}
	return found;
}

int td_hostinfo_process_labels(const char *root, pid_t pid, struct td_labels *labels,
			       char *err, size_t errlen)
{
	char path[PATH_MAX];
	char *line = NULL;
	size_t cap = 0;
	FILE *f;
	int rc = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/proc/%d/cgroup", root, (int)pid) >= sizeof(path)) {
		snprintf(err, errlen, "root '%.64s...' is too long; use a shorter path", root);
		return -ENAMETOOLONG;
	}
	f = fopen(path, "re");
	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "cannot read %s: %s; check that process %d is still running",
			 path, strerror(-rc), (int)pid);
		return rc;
	}
	/* cgroup v2 is the "0::<path>" line; v1 lines name their controllers. */
	while (getline(&line, &cap, f) >= 0) {
		if (strncmp(line, "0::", 3) != 0)
			continue;
		char *cgroup = line + 3;
		char id[CONTAINER_ID_LEN + 1];
		const char *id_at;

		cgroup[strcspn(cgroup, "\n")] = '\0';
		rc = set_label(labels, "cgroup", cgroup, err, errlen);
		id_at = find_container_id(cgroup);
		if (rc == 0 && id_at) {
			memcpy(id, id_at, CONTAINER_ID_LEN);
			id[CONTAINER_ID_LEN] = '\0';
			rc = set_label(labels, "container", id, err, errlen);
		}
		break;
	}
	free(line);
	fclose(f);
	return rc;
}
