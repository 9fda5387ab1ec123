// SPDX-License-Identifier: BSD-3-Clause
/*
 * Process matching over a proc tree. Every read may fail because the
 * process just exited; such a process simply does not match.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "procmatch.h"

#define DELETED_SUFFIX " (deleted)"

int td_proc_name_check(const char *name, char *err, size_t errlen)
{
	if (!name[0] || strchr(name, '/')) {
		snprintf(err, errlen, "--process takes a process name (its comm or executable "
			 "basename), not a path");
		return -EINVAL;
	}
	return 0;
}

int td_proc_comm(const char *proc_root, pid_t pid, char *buf, size_t len)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%d/comm", proc_root, (int)pid) >= sizeof(path))
		return -ENAMETOOLONG;
	return td_read_first_line(path, buf, len);
}

/* PF_KTHREAD of the kernel's task flags, the stat file's ninth field. */
#define PF_KTHREAD 0x00200000u

/* Whether a process directory lists a thread besides its leader. */
static bool has_other_threads(const char *proc_root, pid_t pid)
{
	char path[PATH_MAX];
	struct dirent *entry;
	pid_t tid;
	bool other = false;
	DIR *dir;

	if ((size_t)snprintf(path, sizeof(path), "%s/%d/task", proc_root, (int)pid) >= sizeof(path) ||
	    !(dir = opendir(path)))
		return false;
	while (!other && (entry = readdir(dir)))
		other = sscanf(entry->d_name, "%d", &tid) == 1 && tid != pid;
	closedir(dir);
	return other;
}

enum td_proc_state td_proc_state(const char *proc_root, pid_t pid)
{
	char path[PATH_MAX], line[1024];
	unsigned flags = 0;
	const char *after_comm;
	char state = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/%d/stat", proc_root, (int)pid) >= sizeof(path) ||
	    td_read_first_line(path, line, sizeof(line)))
		return TD_PROC_GONE;
	/* "pid (comm) S ppid pgrp session tty_nr tpgid flags ...": the comm may hold ") " itself */
	after_comm = strrchr(line, ')');
	if (!after_comm || sscanf(after_comm + 1, " %c %*d %*d %*d %*d %*d %u", &state, &flags) != 2)
		return TD_PROC_GONE;
	if (flags & PF_KTHREAD)
		return TD_PROC_KERNEL_THREAD;
	if ((state == 'Z' || state == 'X') && !has_other_threads(proc_root, pid))
		return TD_PROC_ZOMBIE;
	return TD_PROC_RUNNING;
}

int td_proc_check_target(const char *proc_root, pid_t pid, char *err, size_t errlen)
{
	char comm[64] = "", named[80] = "";

	switch (td_proc_state(proc_root, pid)) {
	case TD_PROC_RUNNING:
		return 0;
	case TD_PROC_KERNEL_THREAD:
		if (td_proc_comm(proc_root, pid, comm, sizeof(comm)) == 0)
			snprintf(named, sizeof(named), " (%s)", comm);
		snprintf(err, errlen, "pid %d%s is a kernel thread, not a process --pid counts; name a user "
			 "process, or use --system-wide, which counts kernel threads too", (int)pid, named);
		return -EINVAL;
	case TD_PROC_ZOMBIE:
		snprintf(err, errlen, "pid %d has exited and waits for its parent to reap it (a zombie): nothing "
			 "of it runs any more; name a running process", (int)pid);
		return -EINVAL;
	default:
		snprintf(err, errlen, "no process with pid %d; check the pid with `ps -p %d`", (int)pid, (int)pid);
		return -ESRCH;
	}
}

/*
 * The basename of pid's executable, inside buf; NULL for kernel threads,
 * exited processes and those we may not inspect.
 */
static const char *exe_basename(const char *proc_root, pid_t pid, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;

	if ((size_t)snprintf(path, sizeof(path), "%s/%d/exe", proc_root, (int)pid) >= sizeof(path))
		return NULL;
	n = readlink(path, buf, len - 1);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';

	/* The kernel marks a replaced or removed binary this way. */
	size_t suffix = strlen(DELETED_SUFFIX);

	if ((size_t)n > suffix && strcmp(buf + n - suffix, DELETED_SUFFIX) == 0)
		buf[n - suffix] = '\0';

	const char *slash = strrchr(buf, '/');

	return slash ? slash + 1 : buf;
}

bool td_proc_matches(const char *proc_root, pid_t pid, const char *name)
{
	char comm[64], exe[PATH_MAX];
	const char *base;

	if (!name || !*name)
		return false;
	if (td_proc_comm(proc_root, pid, comm, sizeof(comm)) == 0 && strcmp(comm, name) == 0)
		return true;
	base = exe_basename(proc_root, pid, exe, sizeof(exe));
	return base && strcmp(base, name) == 0;
}

/* A process directory's name: decimal digits making a positive pid. */
static pid_t pid_of_entry(const char *entry)
{
	char *end;
	long v;

	if (*entry < '0' || *entry > '9')
		return 0;
	errno = 0;
	v = strtol(entry, &end, 10);
	if (*end != '\0' || errno || v <= 0 || v > INT_MAX)
		return 0;
	return (pid_t)v;
}

static int compare_pids(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* Appends pid to the growing array *pids. */
static int append_pid(pid_t **pids, size_t *count, size_t *cap, pid_t pid)
{
	if (*count == *cap) {
		size_t new_cap = *cap ? *cap * 2 : 16;
		pid_t *grown = realloc(*pids, new_cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		*pids = grown;
		*cap = new_cap;
	}
	(*pids)[(*count)++] = pid;
	return 0;
}

int td_proc_find(const char *proc_root, const char *name, pid_t exclude_pid,
		 pid_t **pids, size_t *count, char *err, size_t errlen)
{
	struct dirent *entry;
	size_t cap = 0;
	DIR *dir;

	*pids = NULL;
	*count = 0;
	if (!name || !*name) {
		snprintf(err, errlen, "empty process name: name a process as ps shows it, e.g. --process nginx");
		return -EINVAL;
	}
	dir = opendir(proc_root);
	if (!dir) {
		int rc = -errno;

		snprintf(err, errlen, "cannot list %s: %s; check that /proc is mounted", proc_root, strerror(-rc));
		return rc;
	}
	while ((entry = readdir(dir))) {
		pid_t pid = pid_of_entry(entry->d_name);

		if (pid == 0 || pid == exclude_pid || !td_proc_matches(proc_root, pid, name))
			continue;
		if (append_pid(pids, count, &cap, pid) < 0) {
			closedir(dir);
			free(*pids);
			*pids = NULL;
			*count = 0;
			snprintf(err, errlen, "out of memory listing processes named '%s'; free memory and retry", name);
			return -ENOMEM;
		}
	}
	closedir(dir);
	if (*count > 1)
		qsort(*pids, *count, sizeof(**pids), compare_pids);
	return 0;
}
