/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Finding processes by name. proc_root is "/proc" in production and a
 * fake tree in tests. A process matches a name when its comm or the
 * basename of its executable equals it exactly; " (deleted)" after the
 * executable's path is ignored, and kernel threads (no executable) match
 * by comm only. Processes that exit during a scan are skipped.
 */
#ifndef TOPDOWN_PROCMATCH_H
#define TOPDOWN_PROCMATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * A --process value: a name as ps shows it (a comm or an executable's
 * basename), neither empty nor a path. 0, or -EINVAL with err.
 */
int td_proc_name_check(const char *name, char *err, size_t errlen);

/*
 * The pids (numeric entries of proc_root) matching name, ascending,
 * except exclude_pid (topdown itself; 0 excludes nothing). *pids is
 * malloc'd for the caller to free, NULL when *count is 0. 0, -EINVAL for
 * an empty name, -errno when proc_root cannot be listed, -ENOMEM.
 */
int td_proc_find(const char *proc_root, const char *name, pid_t exclude_pid,
		 pid_t **pids, size_t *count, char *err, size_t errlen);

/* Whether pid matches name now; false when it has exited. */
bool td_proc_matches(const char *proc_root, pid_t pid, const char *name);

/* pid's comm, without the newline, into buf. 0 or -errno (-ENOENT: gone). */
int td_proc_comm(const char *proc_root, pid_t pid, char *buf, size_t len);

/*
 * What pid is now, from its stat file: a process that runs user code, a
 * kernel thread (it runs no user code), a zombie (every thread has
 * exited; it waits for its parent to reap it), or gone. A thread-group leader that has exited while other threads of
 * its process run shows as a zombie in its stat file but is running.
 */
enum td_proc_state { TD_PROC_RUNNING, TD_PROC_KERNEL_THREAD, TD_PROC_ZOMBIE, TD_PROC_GONE };
enum td_proc_state td_proc_state(const char *proc_root, pid_t pid);

/*
 * A --pid value collect can count: 0 for a running process; else -ESRCH
 * (gone) or -EINVAL (a kernel thread or a zombie) with err naming the pid
 * and what to do.
 */
int td_proc_check_target(const char *proc_root, pid_t pid, char *err, size_t errlen);

#endif
