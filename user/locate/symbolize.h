/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The symbolizer: sampled addresses into frames (profile.h), user side
 * with elfutils' libdwfl (ELF symbols, DWARF inlines and lines), kernel
 * side from kallsyms, JIT code from perf's /tmp/perf-PID.map.
 *
 * Decisions:
 * - One Dwfl per process, built from /proc/PID/maps read by us: every
 *   file with an executable mapping is reported with dwfl_report_elf at
 *   the start of its offset-0 mapping. libdwfl opens the files at once
 *   and keeps them open, so a process that exits, or a binary replaced
 *   on disk, still resolves until td_symbolizer_forget(). The cost is
 *   one descriptor per mapped object per cached process.
 * - Files are opened as PROC/PID/root/PATH (the process's own mount
 *   namespace), else PATH; a deleted one as PROC/PID/map_files/START-END,
 *   which needs root: without it its frames stay module+0xoffset.
 * - Separate debug info: build-id lookups under /usr/lib/debug; with
 *   use_debuginfod, libdwfl's standard search, which adds .gnu_debuglink
 *   and, when DEBUGINFOD_URLS is set, debuginfod.
 * - Names: the outermost frame takes the ELF symbol (.symtab, else
 *   .dynsym), inlined frames DWARF's DW_AT_name. C++ names stay mangled:
 *   demangling needs libstdc++, which nothing else here links; the
 *   renderers may demangle.
 * - offset is the looked-up address (addr - 1 for return addresses)
 *   minus the module's load bias, so frames of one instruction compare
 *   equal and module+0xoffset matches the file's own addresses.
 * - Modules are basenames; an anonymous mapping has none (NULL), a
 *   pseudo-file keeps its bracketed name ("[vdso]", "[heap]").
 *
 * Not thread-safe: one symbolizer per thread, or a lock around it.
 */
#ifndef TOPDOWN_SYMBOLIZE_H
#define TOPDOWN_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile.h"

struct td_symbolizer_opts {
	const char *proc_root;    /* NULL: "/proc"; tests point it at a fake tree */
	const char *perf_map_dir; /* NULL: "/tmp", where JIT runtimes write perf-PID.map */
	bool use_debuginfod;      /* also .gnu_debuglink and debuginfod (DEBUGINFOD_URLS); never required */
};

struct td_symbolizer;

/* NULL with err when proc_root is not a readable directory, or out of memory. */
struct td_symbolizer *td_symbolizer_new(const struct td_symbolizer_opts *opts, char *err, size_t errlen);
void td_symbolizer_free(struct td_symbolizer *sym);

/*
 * Reads PROC/PID/maps now, while the process lives, and reports its
 * modules; reads perf-PID.map too when there is one. Again for the same
 * pid it rebuilds only when the maps text changed. -ESRCH when the
 * process is gone (a cached one stays cached), -EACCES, -EINVAL for a
 * maps line that does not parse, -ENOMEM; err says which and what to do.
 */
int td_symbolizer_add_process(struct td_symbolizer *sym, pid_t pid, char *err, size_t errlen);
void td_symbolizer_forget(struct td_symbolizer *sym, pid_t pid);

/*
 * One user address of pid into frames, outermost first: the function,
 * then each inlined function down to the innermost, with source file
 * and line where DWARF has them (an outer frame's line is its call site
 * of the next). Deeper inline chains than max keep their outermost max.
 * return_address: a caller's frame, looked up at addr - 1 (the call).
 * A pid not added yet is added now, if it still lives. Unresolved: one
 * frame, function NULL, module the mapping's basename (NULL when no
 * mapping covers addr, or an anonymous one) and offset from its load
 * bias. JIT code resolves from perf-PID.map (module "[jit]", offset
 * from the symbol), reread when an address is not found there. Returns
 * the frames written (>= 1), -ENOMEM, or -EINVAL when max is 0; the
 * strings are the caller's (td_frame_release).
 */
int td_symbolize_user(struct td_symbolizer *sym, pid_t pid, uint64_t addr, bool return_address,
		      struct td_frame *frames, size_t max);

/*
 * A kernel address from PROC/kallsyms, read once at first use: the
 * nearest text symbol at or below addr, module "[kernel]" or "[mod]",
 * offset from the start of the kernel (_text) or of the module (its
 * lowest symbol). Hidden addresses (kptr_restrict, not root) or an
 * unreadable kallsyms give function NULL, "[kernel]", offset 0.
 * 0 or -ENOMEM.
 */
int td_symbolize_kernel(struct td_symbolizer *sym, uint64_t addr, struct td_frame *frame);

/* True once kallsyms was read and showed only zero addresses. */
bool td_symbolizer_kernel_hidden(const struct td_symbolizer *sym);

/* Pure parsers, for the tests and the fuzzer. */

/* One line of /proc/PID/maps. */
struct td_maps_entry {
	uint64_t start, end, pgoff;
	uint64_t inode;
	bool exec;
	bool deleted;     /* the path ended in " (deleted)", cut from path */
	const char *path; /* into the parsed line; "" for an anonymous mapping */
	size_t path_len;
};

/* 0, or -EINVAL when line (no newline) is not a maps line. */
int td_maps_parse_line(const char *line, size_t len, struct td_maps_entry *out);

/* One line of kallsyms: "ADDR TYPE NAME[\t[MODULE]]". module is NULL for the kernel. */
struct td_kallsyms_entry {
	uint64_t addr;
	char type;
	const char *name;
	size_t name_len;
	const char *module;
	size_t module_len;
};

int td_kallsyms_parse_line(const char *line, size_t len, struct td_kallsyms_entry *out);

/* One line of a perf map: "START SIZE NAME", hexadecimal, 0x optional. */
struct td_perf_map_entry {
	uint64_t start, size;
	const char *name;
	size_t name_len;
};

int td_perf_map_parse_line(const char *line, size_t len, struct td_perf_map_entry *out);

#endif
