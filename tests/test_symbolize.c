// SPDX-License-Identifier: BSD-3-Clause
/*
 * The symbolizer (user/locate/symbolize.h) against real processes: this
 * test's own functions (lines, inlines, return addresses), libc, children
 * that exit, JIT maps, a stripped and a deleted program compiled here,
 * the running kernel's kallsyms, and fake proc trees for the error paths.
 */
#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "symbolize.h"

#define MAX_FRAMES 8

/* Functions to find. The line numbers are taken where they are written. */

static const int target_first_line = __LINE__ + 1;
__attribute__((noinline, noclone)) int td_test_target(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3 + 1;
}
static const int target_last_line = __LINE__ - 1;

static void *inline_ra;

__attribute__((noinline, noclone)) static void record_ra(void)
{
	inline_ra = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

static const int inlined_call_line = __LINE__ + 3;
static inline __attribute__((always_inline)) int td_test_inlined(int x)
{
	record_ra();
	return x + 7;
}

static const int outer_call_line = __LINE__ + 3;
__attribute__((noinline, noclone)) int td_test_outer(int x)
{
	return td_test_inlined(x) * 2;
}

/* A call that is its function's last instruction: its return address is past the end. */
static jmp_buf jump_back;
static void *end_ra;

__attribute__((noinline, noclone, noreturn)) static void record_and_jump(void)
{
	end_ra = __builtin_return_address(0);
	longjmp(jump_back, 1);
}

__attribute__((noinline, noclone)) void td_test_ends_in_call(void)
{
	record_and_jump();
}

/* A program compiled at test time, stripped and unstripped copies. */
static const char prog_source[] =
	"#include <stdio.h>\n"
	"#include <unistd.h>\n"
	"__attribute__((noinline)) int visible_fn(int x) { return x * 5 + 2; }\n"
	"__attribute__((noinline)) static int hidden_fn(int x) { return x * 7 + 1; }\n"
	"int main(void)\n"
	"{\n"
	"\tprintf(\"%p %p\\n\", (void *)visible_fn, (void *)hidden_fn);\n"
	"\tfflush(stdout);\n"
	"\tpause();\n"
	"\treturn visible_fn(1) + hidden_fn(2);\n"
	"}\n";

static char tmpdir[] = "/tmp/td-sym-test-XXXXXX";
static bool have_prog;

static void path_in_tmp(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static int group_setup(void **state)
{
	char cmd[1024], src[256];

	(void)state;
	if (!mkdtemp(tmpdir))
		return -1;
	path_in_tmp(src, sizeof(src), "prog.c");
	write_file(src, prog_source);
	snprintf(cmd, sizeof(cmd),
		 "cc -O1 -g -rdynamic -o %1$s/prog %1$s/prog.c && "
		 "objcopy --strip-all %1$s/prog %1$s/prog-stripped", tmpdir);
	have_prog = system(cmd) == 0;
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[256];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static struct td_symbolizer *new_sym(const char *proc_root)
{
	struct td_symbolizer_opts opts = { .proc_root = proc_root, .perf_map_dir = "/tmp" };
	char err[256] = "";
	struct td_symbolizer *sym = td_symbolizer_new(&opts, err, sizeof(err));

	if (!sym)
		fail_msg("td_symbolizer_new: %s", err);
	return sym;
}

static void release(struct td_frame *frames, int n)
{
	for (int i = 0; i < n; i++)
		td_frame_release(&frames[i]);
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = s ? strlen(s) : 0, m = strlen(tail);

	return s && n >= m && strcmp(s + n - m, tail) == 0;
}

static uint64_t addr_of(void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static void test_own_function(void **state)
{
	struct td_symbolizer *sym = new_sym(NULL);
	struct td_frame frames[MAX_FRAMES];
	char err[256] = "";
	char name[128];
	int n;

	(void)state;
	assert_int_equal(td_test_target(1), 4);
	assert_int_equal(td_symbolizer_add_process(sym, getpid(), err, sizeof(err)), 0);
	/* Again with the same maps: cached, still fine. */
	assert_int_equal(td_symbolizer_add_process(sym, getpid(), err, sizeof(err)), 0);
	n = td_symbolize_user(sym, getpid(), addr_of((void *)td_test_target) + 4, false, frames, MAX_FRAMES);
	assert_int_equal(n, 1);
	assert_string_equal(frames[0].function, "td_test_target");
	assert_true(ends_with(frames[0].file, "tests/test_symbolize.c"));
	assert_in_range(frames[0].line, target_first_line, target_last_line);
	assert_non_null(strstr(frames[0].module, "test_symbolize"));
	assert_false(frames[0].kernel);
	td_frame_name(&frames[0], name, sizeof(name));
	assert_string_equal(name, "td_test_target");
	release(frames, n);
	td_symbolizer_free(sym);
}

static void test_inline_and_return_address(void **state)
{
	struct td_symbolizer *sym = new_sym(NULL);
	struct td_frame frames[MAX_FRAMES], leaf[MAX_FRAMES];
	int n, m;

	(void)state;
	assert_int_equal(td_test_outer(1), 16);
	n = td_symbolize_user(sym, getpid(), addr_of(inline_ra), true, frames, MAX_FRAMES);
	assert_int_equal(n, 2);
	assert_string_equal(frames[0].function, "td_test_outer");
	assert_true(ends_with(frames[0].file, "tests/test_symbolize.c"));
	assert_int_equal(frames[0].line, outer_call_line);
	assert_string_equal(frames[1].function, "td_test_inlined");
	assert_true(ends_with(frames[1].file, "tests/test_symbolize.c"));
	assert_int_equal(frames[1].line, inlined_call_line);
	assert_int_equal(frames[0].offset, frames[1].offset);
	/* The same address as a leaf is looked up one byte further. */
	m = td_symbolize_user(sym, getpid(), addr_of(inline_ra), false, leaf, MAX_FRAMES);
	assert_true(m >= 1);
	assert_int_equal(leaf[0].offset, frames[0].offset + 1);
	release(leaf, m);
	/* max 1 keeps the outermost, the real function. */
	m = td_symbolize_user(sym, getpid(), addr_of(inline_ra), true, leaf, 1);
	assert_int_equal(m, 1);
	assert_string_equal(leaf[0].function, "td_test_outer");
	release(leaf, m);
	release(frames, n);
	assert_int_equal(td_symbolize_user(sym, getpid(), addr_of(inline_ra), true, frames, 0), -EINVAL);

	/* A call ending its function: only addr - 1 is still inside it. */
	if (!setjmp(jump_back))
		td_test_ends_in_call();
	n = td_symbolize_user(sym, getpid(), addr_of(end_ra), true, frames, MAX_FRAMES);
	assert_int_equal(n, 1);
	assert_string_equal(frames[0].function, "td_test_ends_in_call");
	release(frames, n);
	n = td_symbolize_user(sym, getpid(), addr_of(end_ra), false, frames, MAX_FRAMES);
	assert_true(n >= 1);
	assert_true(!frames[0].function || strcmp(frames[0].function, "td_test_ends_in_call") != 0);
	release(frames, n);
	td_symbolizer_free(sym);
}

static void test_libc(void **state)
{
	struct td_symbolizer *sym = new_sym(NULL);
	struct td_frame frames[MAX_FRAMES];
	int n;

	(void)state;
	n = td_symbolize_user(sym, getpid(), addr_of((void *)getpid), false, frames, MAX_FRAMES);
	assert_true(n >= 1);
	assert_non_null(frames[0].function);
	assert_non_null(strstr(frames[0].function, "getpid"));
	assert_non_null(frames[0].module);
	assert_memory_equal(frames[0].module, "libc", 4);
	release(frames, n);
	td_symbolizer_free(sym);
}

static void test_no_mapping_and_anonymous(void **state)
{
	struct td_symbolizer *sym = new_sym(NULL);
	struct td_frame frames[MAX_FRAMES];
	char err[256] = "";
	void *anon;
	int n;

	(void)state;
	n = td_symbolize_user(sym, getpid(), 0x10, false, frames, MAX_FRAMES);
	assert_int_equal(n, 1);
	assert_null(frames[0].function);
	assert_null(frames[0].module);
	release(frames, n);

	anon = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(anon != MAP_FAILED);
	/* The maps changed since the process was added: read again. */
	assert_int_equal(td_symbolizer_add_process(sym, getpid(), err, sizeof(err)), 0);
	n = td_symbolize_user(sym, getpid(), addr_of(anon) + 100, false, frames, MAX_FRAMES);
	assert_int_equal(n, 1);
	assert_null(frames[0].function);
	assert_null(frames[0].module);
	release(frames, n);
	munmap(anon, 65536);
	td_symbolizer_free(sym);
}

static pid_t spawn_pauser(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

/*
 * Under an emulator that runs this test as a user-mode process
 * (qemu-aarch64 in the arm64 pass), only the test's own /proc/self is
 * the emulated program's: a child's /proc/PID shows the emulator, whose
 * maps no symbolizer can read as the program's. Its exe then differs
 * from what /proc/self/exe names.
 */
static bool child_proc_is_emulator(pid_t child)
{
	char self[PATH_MAX] = "", other[PATH_MAX] = "", path[64];

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)child);
	if (readlink("/proc/self/exe", self, sizeof(self) - 1) < 0 || readlink(path, other, sizeof(other) - 1) < 0)
		return false;
	return strcmp(self, other) != 0;
}

static void reap(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
}

static void test_child_exits(void **state)
{
	struct td_symbolizer *sym = new_sym(NULL);
	struct td_frame frames[MAX_FRAMES];
	char err[256] = "", pidtext[32];
	pid_t child = spawn_pauser();
	int n;

	(void)state;
	if (child_proc_is_emulator(child)) {
		reap(child);
		td_symbolizer_free(sym);
		print_message("SKIP: a child's /proc shows the emulator running this test (qemu-user), not the test\n");
		skip();
	}
	assert_int_equal(td_symbolizer_add_process(sym, child, err, sizeof(err)), 0);
	reap(child);
	n = td_symbolize_user(sym, child, addr_of((void *)td_test_target) + 4, false, frames, MAX_FRAMES);
	assert_int_equal(n, 1);
	assert_string_equal(frames[0].function, "td_test_target");
	release(frames, n);
	/* Gone now: refused, and the cache stays. */
	assert_int_equal(td_symbolizer_add_process(sym, child, err, sizeof(err)), -ESRCH);
	n = td_symbolize_user(sym, child, addr_of((void *)td_test_target) + 4, false, frames, MAX_FRAMES);
	assert_string_equal(frames[0].function, "td_test_target");
	release(frames, n);

	td_symbolizer_forget(sym, child);
	td_symbolizer_forget(sym, child);
	err[0] = '\0';
	assert_int_equal(td_symbolizer_add_process(sym, child, err, sizeof(err)), -ESRCH);
	snprintf(pidtext, sizeof(pidtext), "%d", (int)child);
	assert_non_null(strstr(err, pidtext));
	n = td_symbolize_user(sym, child, addr_of((void *)td_test_target) + 4, false, frames, MAX_FRAMES);
	assert_int_equal(n, 1);
	assert_null(frames[0].function);
	assert_null(frames[0].module);
	release(frames, n);
	assert_int_equal(td_symbolizer_add_process(sym, 0, err, sizeof(err)), -EINVAL);
	td_symbolizer_free(sym);
}

static void test_jit_map(void **state)
{
	struct td_symbolizer *sym = new_sym(NULL);
	struct td_frame frames[MAX_FRAMES];
	char err[256] = "", path[64], text[512];
	uint8_t *code = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pid_t child;
	FILE *f;
	int n;

	(void)state;
	assert_true(code != MAP_FAILED);
	child = spawn_pauser();
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)child);
	snprintf(text, sizeof(text), "%" PRIx64 " 100 jit_alpha\nnot a perf map line\n0x%" PRIx64 " 0x40 jit beta [with] spaces\r\n",
		 addr_of(code), addr_of(code) + 0x100);
	write_file(path, text);
	assert_int_equal(td_symbolizer_add_process(sym, child, err, sizeof(err)), 0);

	n = td_symbolize_user(sym, child, addr_of(code) + 0x10, false, frames, MAX_FRAMES);
	assert_int_equal(n, 1);
	assert_string_equal(frames[0].function, "jit_alpha");
	assert_string_equal(frames[0].module, "[jit]");
	assert_int_equal(frames[0].offset, 0x10);
	release(frames, n);
	n = td_symbolize_user(sym, child, addr_of(code) + 0x120, false, frames, MAX_FRAMES);
	assert_string_equal(frames[0].function, "jit beta [with] spaces");
	release(frames, n);
	n = td_symbolize_user(sym, child, addr_of(code) + 0x1008, false, frames, MAX_FRAMES);
	assert_null(frames[0].function);
	release(frames, n);

	/* Code compiled later: the map is read again for an address it lacked. */
	f = fopen(path, "a");
	assert_non_null(f);
	fprintf(f, "%" PRIx64 " 20 jit_gamma\n", addr_of(code) + 0x1000);
	fclose(f);
	n = td_symbolize_user(sym, child, addr_of(code) + 0x1008, false, frames, MAX_FRAMES);
	assert_string_equal(frames[0].function, "jit_gamma");
	release(frames, n);

	/* The file goes with the runtime; what was read stays. */
	unlink(path);
	reap(child);
	n = td_symbolize_user(sym, child, addr_of(code) + 0x10, false, frames, MAX_FRAMES);
	assert_string_equal(frames[0].function, "jit_alpha");
	release(frames, n);
	munmap(code, 65536);
	td_symbolizer_free(sym);
}

/* Runs a program printing the addresses of visible_fn and hidden_fn, then pausing. */
static pid_t spawn_prog(const char *path, uint64_t *visible, uint64_t *hidden)
{
	int fds[2];
	pid_t pid;
	FILE *f;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%" SCNx64 " %" SCNx64, visible, hidden), 2);
	fclose(f);
	return pid;
}

static void test_stripped(void **state)
{
	struct td_symbolizer *sym = new_sym(NULL);
	struct td_frame frames[MAX_FRAMES];
	char err[256] = "", path[256];
	uint64_t visible, hidden;
	pid_t child;
	int n;

	(void)state;
	if (!have_prog)
		skip();
	path_in_tmp(path, sizeof(path), "prog-stripped");
	child = spawn_prog(path, &visible, &hidden);
	assert_int_equal(td_symbolizer_add_process(sym, child, err, sizeof(err)), 0);
	/* Exported (-rdynamic): .dynsym still has it. */
	n = td_symbolize_user(sym, child, visible + 1, false, frames, MAX_FRAMES);
	assert_int_equal(n, 1);
	assert_string_equal(frames[0].function, "visible_fn");
	assert_string_equal(frames[0].module, "prog-stripped");
	assert_null(frames[0].file);
	release(frames, n);
	/* Static: no symbol left for it anywhere. */
	n = td_symbolize_user(sym, child, hidden + 1, false, frames, MAX_FRAMES);
	assert_int_equal(n, 1);
	assert_true(!frames[0].function || strcmp(frames[0].function, "hidden_fn") != 0);
	assert_string_equal(frames[0].module, "prog-stripped");
	release(frames, n);
	reap(child);
	td_symbolizer_free(sym);
}

static void test_deleted(void **state)
{
	struct td_symbolizer *sym = new_sym(NULL);
	struct td_frame frames[MAX_FRAMES];
	char err[256] = "", path[256], cmd[600];
	uint64_t visible, hidden;
	pid_t child;
	int n;

	(void)state;
	if (!have_prog)
		skip();
	path_in_tmp(path, sizeof(path), "prog-deleted");
	snprintf(cmd, sizeof(cmd), "cp %s/prog %s", tmpdir, path);
	assert_int_equal(system(cmd), 0);
	child = spawn_prog(path, &visible, &hidden);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(td_symbolizer_add_process(sym, child, err, sizeof(err)), 0);
	reap(child);
	n = td_symbolize_user(sym, child, hidden + 1, false, frames, MAX_FRAMES);
	assert_int_equal(n, 1);
	assert_string_equal(frames[0].module, "prog-deleted");
	if (geteuid() == 0) {
		/* Through map_files, from the file that no longer has a name. */
		assert_string_equal(frames[0].function, "hidden_fn");
		assert_true(ends_with(frames[0].file, "prog.c"));
		assert_int_equal(frames[0].line, 4);
	} else {
		assert_null(frames[0].function);
	}
	release(frames, n);
	td_symbolizer_free(sym);
}

/* The address of name in /proc/kallsyms, with its module ("" for the kernel); 0 when absent. */
static uint64_t kallsyms_find(const char *want, bool module_wanted, char *name, size_t namelen,
			      char *module, size_t modlen)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512];
	uint64_t found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char type, sym[256], mod[256] = "";
		uint64_t addr;

		if (sscanf(line, "%" SCNx64 " %c %255s %255s", &addr, &type, sym, mod) < 3)
			continue;
		if (type != 't' && type != 'T')
			continue;
		if ((want && strcmp(sym, want) == 0) || (!want && module_wanted && mod[0])) {
			found = addr;
			snprintf(name, namelen, "%s", sym);
			snprintf(module, modlen, "%s", mod[0] ? mod : "[kernel]");
		}
	}
	fclose(f);
	return found;
}

static void test_kernel(void **state)
{
	struct td_symbolizer *sym = new_sym(NULL);
	struct td_frame frame;
	char name[256], module[256];
	uint64_t addr = kallsyms_find("schedule", false, name, sizeof(name), module, sizeof(module));

	(void)state;
	assert_int_equal(td_symbolize_kernel(sym, addr + 1, &frame), 0);
	assert_true(frame.kernel);
	assert_string_equal(frame.module, "[kernel]");
	if (!addr) {
		/* Not root (or kptr_restrict=2): every address reads as 0. */
		assert_true(td_symbolizer_kernel_hidden(sym));
		assert_null(frame.function);
		td_frame_release(&frame);
		td_symbolizer_free(sym);
		skip();
	}
	assert_false(td_symbolizer_kernel_hidden(sym));
	assert_string_equal(frame.function, "schedule");
	td_frame_release(&frame);

	addr = kallsyms_find(NULL, true, name, sizeof(name), module, sizeof(module));
	if (addr) {
		assert_int_equal(td_symbolize_kernel(sym, addr, &frame), 0);
		assert_string_equal(frame.module, module);
		assert_non_null(frame.function);
		td_frame_release(&frame);
	}
	td_symbolizer_free(sym);
}

static void make_fake_file(const char *rel, const char *text)
{
	char path[512];

	path_in_tmp(path, sizeof(path), rel);
	write_file(path, text);
}

static void test_kernel_fake(void **state)
{
	struct td_symbolizer *sym;
	struct td_frame frame;
	char root[256];

	(void)state;
	path_in_tmp(root, sizeof(root), "hidden");
	assert_int_equal(mkdir(root, 0700), 0);
	make_fake_file("hidden/kallsyms",
		       "0000000000000000 T _text\n0000000000000000 T schedule\n0000000000000000 t foo\t[mod]\n");
	sym = new_sym(root);
	assert_false(td_symbolizer_kernel_hidden(sym)); /* not read yet */
	assert_int_equal(td_symbolize_kernel(sym, 0xffffffff81000123, &frame), 0);
	assert_true(td_symbolizer_kernel_hidden(sym));
	assert_null(frame.function);
	assert_string_equal(frame.module, "[kernel]");
	assert_int_equal(frame.offset, 0);
	assert_true(frame.kernel);
	td_frame_release(&frame);
	td_symbolizer_free(sym);

	path_in_tmp(root, sizeof(root), "odd");
	assert_int_equal(mkdir(root, 0700), 0);
	make_fake_file("odd/kallsyms",
		       "garbage\n"
		       "ffffffff81000000 T _text\n"
		       "zz T x\n"
		       "ffffffff81000100 T alpha\n"
		       "ffffffff81000100 T alpha_alias\n"
		       "ffffffffc0001000 t beta\t[modx]\n"
		       "ffffffffc0000800 t beta0\t[modx]\n"
		       "ffffffff81000300 D data_sym\n"
		       " ffff t lead\n"
		       "ffffffff81000400 T\n"
		       "ffffffff81000500 t gamma [broken\n"
		       "ffffffffffffffffff T too_long\n"
		       "ffffffff81000600 T last");
	sym = new_sym(root);
	assert_int_equal(td_symbolize_kernel(sym, 0xffffffff81000105, &frame), 0);
	assert_string_equal(frame.function, "alpha");
	assert_string_equal(frame.module, "[kernel]");
	assert_int_equal(frame.offset, 0x105);
	td_frame_release(&frame);
	assert_int_equal(td_symbolize_kernel(sym, 0xffffffffc0001001, &frame), 0);
	assert_string_equal(frame.function, "beta");
	assert_string_equal(frame.module, "[modx]");
	assert_int_equal(frame.offset, 0x801);
	td_frame_release(&frame);
	/* Data symbols are not where code runs: the text symbol below wins. */
	assert_int_equal(td_symbolize_kernel(sym, 0xffffffff81000301, &frame), 0);
	assert_string_equal(frame.function, "alpha");
	td_frame_release(&frame);
	assert_int_equal(td_symbolize_kernel(sym, 0xffffffff81000601, &frame), 0);
	assert_string_equal(frame.function, "last");
	td_frame_release(&frame);
	assert_int_equal(td_symbolize_kernel(sym, 0xffffffff80000000, &frame), 0);
	assert_null(frame.function);
	assert_string_equal(frame.module, "[kernel]");
	td_frame_release(&frame);
	assert_false(td_symbolizer_kernel_hidden(sym));
	td_symbolizer_free(sym);

	/* No kallsyms at all: unresolved, not hidden. */
	path_in_tmp(root, sizeof(root), "nokallsyms");
	assert_int_equal(mkdir(root, 0700), 0);
	sym = new_sym(root);
	assert_int_equal(td_symbolize_kernel(sym, 0xffffffff81000105, &frame), 0);
	assert_null(frame.function);
	assert_string_equal(frame.module, "[kernel]");
	td_frame_release(&frame);
	assert_false(td_symbolizer_kernel_hidden(sym));
	td_symbolizer_free(sym);
}

static void test_bad_proc_root(void **state)
{
	struct td_symbolizer_opts opts = { .proc_root = "/nonexistent/proc" };
	char err[256] = "";

	(void)state;
	assert_null(td_symbolizer_new(&opts, err, sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/proc"));
	opts.proc_root = "/etc/passwd";
	err[0] = '\0';
	assert_null(td_symbolizer_new(&opts, err, sizeof(err)));
	assert_non_null(strstr(err, "not a directory"));
}

static void test_fake_maps(void **state)
{
	struct td_symbolizer *sym;
	struct td_frame frames[MAX_FRAMES];
	char root[256], err[256] = "";
	int n;

	(void)state;
	path_in_tmp(root, sizeof(root), "fakeproc");
	assert_int_equal(mkdir(root, 0700), 0);
	path_in_tmp(root, sizeof(root), "fakeproc/4242");
	assert_int_equal(mkdir(root, 0700), 0);
	make_fake_file("fakeproc/4242/maps",
		       "555555554000-555555556000 r--p 00000000 08:01 1234 /bin/true\n"
		       "this is not a maps line\n");
	path_in_tmp(root, sizeof(root), "fakeproc");
	sym = new_sym(root);
	assert_int_equal(td_symbolizer_add_process(sym, 4242, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line 2"));

	/* /bin/true is stripped and exports nothing: module+offset. */
	make_fake_file("fakeproc/4242/maps",
		       "555555554000-555555556000 r--p 00000000 08:01 1234 /bin/true\n"
		       "555555556000-55555555a000 r-xp 00002000 08:01 1234 /bin/true\n"
		       "55555555a000-55555555c000 r--p 00006000 08:01 1234 /bin/true\n"
		       "7ffff7fc1000-7ffff7fc3000 r-xp 00000000 00:00 0                          [vdso]\n"
		       "7ffff7fc3000-7ffff7fc5000 rw-p 00000000 00:00 0 \n"
		       "7ffff7fc5000-7ffff7fc7000 r-xp 00000000 08:01 99 /nonexistent/lib.so\n");
	err[0] = '\0';
	assert_int_equal(td_symbolizer_add_process(sym, 4242, err, sizeof(err)), 0);
	n = td_symbolize_user(sym, 4242, 0x555555556100, false, frames, MAX_FRAMES);
	assert_int_equal(n, 1);
	assert_null(frames[0].function);
	assert_string_equal(frames[0].module, "true");
	assert_int_equal(frames[0].offset, 0x2100);
	release(frames, n);
	n = td_symbolize_user(sym, 4242, 0x7ffff7fc1010, false, frames, MAX_FRAMES);
	assert_null(frames[0].function);
	assert_string_equal(frames[0].module, "[vdso]");
	assert_int_equal(frames[0].offset, 0x10);
	release(frames, n);
	n = td_symbolize_user(sym, 4242, 0x7ffff7fc3010, false, frames, MAX_FRAMES);
	assert_null(frames[0].function);
	assert_null(frames[0].module);
	release(frames, n);
	n = td_symbolize_user(sym, 4242, 0x7ffff7fc5020, true, frames, MAX_FRAMES);
	assert_null(frames[0].function);
	assert_string_equal(frames[0].module, "lib.so");
	assert_int_equal(frames[0].offset, 0x1f);
	release(frames, n);

	/* A zombie's maps are empty. */
	path_in_tmp(root, sizeof(root), "fakeproc/4243");
	assert_int_equal(mkdir(root, 0700), 0);
	make_fake_file("fakeproc/4243/maps", "");
	assert_int_equal(td_symbolizer_add_process(sym, 4243, err, sizeof(err)), -ESRCH);
	assert_non_null(strstr(err, "4243"));
	td_symbolizer_free(sym);
}

static void test_parse_maps(void **state)
{
	static const char *const bad[] = {
		"", "xyz", "7f10-7f00 r-xp 00000000 fd:01 12 /x", "7f00-7f10 rwxq 00000000 fd:01 12 /x",
		"7f00-7f10 r-xp 00000000 fd:01", "7f00-7f10 r-xp 00000000 fd:01 12a /x",
		"10000000000000000-10000000000000001 r-xp 0 0:0 0", "7f00-7f10 r-x", "7f00 r-xp 0 0:0 0",
		"7f00-7f10 r-xp 0 001 0", "7f00-7f10 r-xp 0 0:0 99999999999999999999999",
	};
	struct td_maps_entry e;
	const char *line = "7f00-7f10 r-xp 00001000 fd:01 123   /usr/lib/x y.so (deleted)";

	(void)state;
	assert_int_equal(td_maps_parse_line(line, strlen(line), &e), 0);
	assert_int_equal(e.start, 0x7f00);
	assert_int_equal(e.end, 0x7f10);
	assert_int_equal(e.pgoff, 0x1000);
	assert_int_equal(e.inode, 123);
	assert_true(e.exec);
	assert_true(e.deleted);
	assert_int_equal(e.path_len, strlen("/usr/lib/x y.so"));
	assert_memory_equal(e.path, "/usr/lib/x y.so", e.path_len);
	line = "7f00-7f10 rw-p 00000000 00:00 0";
	assert_int_equal(td_maps_parse_line(line, strlen(line), &e), 0);
	assert_false(e.exec);
	assert_int_equal(e.path_len, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (td_maps_parse_line(bad[i], strlen(bad[i]), &e) != -EINVAL)
			fail_msg("accepted \"%s\"", bad[i]);
}

static void test_parse_kallsyms_and_perf_map(void **state)
{
	static const char *const bad_ksyms[] = {
		"", "ffff", "ffff T", "ffff TT x", "ffff t foo [mod", "ffff t foo\t[]", "ffff t foo [a]b]",
		"zz T x", " ffff T x",
	};
	static const char *const bad_perf[] = {
		"", "7f", "7f 10", "zz 10 a", "ffffffffffffffff 2 x", "7f zz a", "0x 10 a",
	};
	struct td_kallsyms_entry k;
	struct td_perf_map_entry p;
	const char *line = "ffffffffc0001000 t beta_fn\t[modx]";

	(void)state;
	assert_int_equal(td_kallsyms_parse_line(line, strlen(line), &k), 0);
	assert_int_equal(k.addr, 0xffffffffc0001000);
	assert_int_equal(k.type, 't');
	assert_memory_equal(k.name, "beta_fn", k.name_len);
	assert_int_equal(k.module_len, 4);
	assert_memory_equal(k.module, "modx", 4);
	line = "ffffffff81000000 T _text";
	assert_int_equal(td_kallsyms_parse_line(line, strlen(line), &k), 0);
	assert_null(k.module);
	for (size_t i = 0; i < sizeof(bad_ksyms) / sizeof(bad_ksyms[0]); i++)
		if (td_kallsyms_parse_line(bad_ksyms[i], strlen(bad_ksyms[i]), &k) != -EINVAL)
			fail_msg("accepted \"%s\"", bad_ksyms[i]);

	line = "0x7f0000 0x10 LazyCompile:*foo bar.js:1 ";
	assert_int_equal(td_perf_map_parse_line(line, strlen(line), &p), 0);
	assert_int_equal(p.start, 0x7f0000);
	assert_int_equal(p.size, 0x10);
	assert_int_equal(p.name_len, strlen("LazyCompile:*foo bar.js:1"));
	for (size_t i = 0; i < sizeof(bad_perf) / sizeof(bad_perf[0]); i++)
		if (td_perf_map_parse_line(bad_perf[i], strlen(bad_perf[i]), &p) != -EINVAL)
			fail_msg("accepted \"%s\"", bad_perf[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_function),
		cmocka_unit_test(test_inline_and_return_address),
		cmocka_unit_test(test_libc),
		cmocka_unit_test(test_no_mapping_and_anonymous),
		cmocka_unit_test(test_child_exits),
		cmocka_unit_test(test_jit_map),
		cmocka_unit_test(test_stripped),
		cmocka_unit_test(test_deleted),
		cmocka_unit_test(test_kernel),
		cmocka_unit_test(test_kernel_fake),
		cmocka_unit_test(test_bad_proc_root),
		cmocka_unit_test(test_fake_maps),
		cmocka_unit_test(test_parse_maps),
		cmocka_unit_test(test_parse_kallsyms_and_perf_map),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
