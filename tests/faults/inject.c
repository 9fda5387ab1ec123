/*
 * Fault injection for the fault tests (tests/faults/): a preload library
 * that drives libfiu's POSIX wrappers (fiu_posix_preload.so, loaded after
 * it) through an external callback, so that a test chooses which call
 * fails:
 *
 *   TD_FAULT_POINTS  libfiu point names, comma-separated
 *                    (posix/io/rw/pwrite,posix/io/sync/fdatasync,...)
 *   TD_FAULT_NTH     fail the Nth call to any of them (1-based) ...
 *   TD_FAULT_PERSIST ... and, when 1, every call after it too (a disk
 *                    that stays broken, not a single lost write)
 *   TD_FAULT_PROB    or fail each call with this probability,
 *   TD_FAULT_SEED    from this seed: the same seed on the same calls
 *                    fails the same ones
 *   TD_FAULT_LOG     append "point call-number" for every failed call,
 *                    and "calls N" at exit, so a run can be replayed
 *   TD_FAULT_KILL    when 1, the chosen call does not fail: the process
 *                    dies there by SIGKILL, a crash in the middle of a
 *                    write at a point the test picks
 *
 * libfiu's own enable_random draws from a generator it seeds from the
 * clock; the callback here makes a failing run reproducible and lets a
 * test walk through the calls one at a time, as SQLite's I/O-error tests
 * do. Errno is left to libfiu, which picks one that the call documents.
 *
 * write(2) on descriptors 0-2 is never failed: the line that reports a
 * fault must be able to reach the test, and a broken stderr is no fault
 * of the store. The log is written with raw system calls for the same
 * reason: they pass around the wrappers.
 */
#define _GNU_SOURCE
#define FIU_ENABLE 1
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fiu.h>
#include <fiu-control.h>

static unsigned long nth;
static int persist, kill_instead;
static double probability;
static uint64_t seed;
static unsigned long calls; /* atomically counted: the store and the collector run in threads */
static int log_fd = -1;

static void log_line(const char *line)
{
	if (log_fd >= 0)
		syscall(SYS_write, log_fd, line, strlen(line));
}

/* splitmix64: a small generator with no state beyond the call number. */
static double draw(unsigned long call)
{
	uint64_t z = seed + call * 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return (double)(z >> 11) / (double)(1ULL << 53);
}

static int decide(const char *name, int *failnum, void **failinfo, unsigned int *flags)
{
	unsigned long call = __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	int fail;
	char line[256];

	(void)failnum, (void)failinfo, (void)flags;
	if (nth)
		fail = call == nth || (persist && call > nth);
	else
		fail = draw(call) < probability;
	if (fail) {
		snprintf(line, sizeof(line), "%s %lu\n", name, call);
		log_line(line);
		if (kill_instead)
			syscall(SYS_kill, getpid(), SIGKILL);
	}
	return fail;
}

ssize_t write(int fd, const void *buf, size_t count)
{
	static ssize_t (*next)(int, const void *, size_t);

	if (fd <= STDERR_FILENO)
		return syscall(SYS_write, fd, buf, count);
	if (!next)
		next = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	return next(fd, buf, count);
}

__attribute__((constructor)) static void inject_init(void)
{
	const char *points = getenv("TD_FAULT_POINTS"), *env;
	char *list, *save = NULL;

	if ((env = getenv("TD_FAULT_LOG")))
		log_fd = (int)syscall(SYS_openat, AT_FDCWD, env, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	nth = (env = getenv("TD_FAULT_NTH")) ? strtoul(env, NULL, 10) : 0;
	persist = (env = getenv("TD_FAULT_PERSIST")) && strcmp(env, "1") == 0;
	kill_instead = (env = getenv("TD_FAULT_KILL")) && strcmp(env, "1") == 0;
	probability = (env = getenv("TD_FAULT_PROB")) ? strtod(env, NULL) : 0;
	seed = (env = getenv("TD_FAULT_SEED")) ? strtoull(env, NULL, 10) : 0;
	if (!points || fiu_init(0) != 0)
		return;
	list = strdup(points);
	for (char *p = strtok_r(list, ",", &save); p; p = strtok_r(NULL, ",", &save))
		fiu_enable_external(p, 1, NULL, 0, decide);
	free(list);
}

__attribute__((destructor)) static void inject_fini(void)
{
	char line[64];

	snprintf(line, sizeof(line), "calls %lu\n", __atomic_load_n(&calls, __ATOMIC_RELAXED));
	log_line(line);
}
