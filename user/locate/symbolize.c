// SPDX-License-Identifier: BSD-3-Clause
/*
 * The symbolizer (symbolize.h): per-process Dwfl sessions built from
 * /proc/PID/maps, perf JIT maps, and one sorted copy of kallsyms.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#include "symbolize.h"

/* One line of a process's maps, as lookups need it. */
struct sym_map {
	uint64_t start, end;
	uint64_t base; /* where the file's offset 0 is mapped: the load bias without an ELF */
	char *name;    /* basename, "[vdso]"-like, or NULL when anonymous */
	bool anon;     /* anonymous, or "[anon:...]": where JIT code lives */
};

struct jit_sym {
	uint64_t start, end;
	const char *name; /* into jit_table.text */
};

struct jit_table {
	char *text; /* the file, lines cut into NUL-terminated names */
	struct jit_sym *syms;
	size_t nr, cap;
	off_t size; /* of the file when read: reread only when it changed */
	struct timespec mtime;
};

struct sym_proc {
	pid_t pid;
	uint64_t maps_hash;
	size_t maps_len;
	Dwfl *dwfl;
	struct sym_map *maps; /* sorted by start, as the kernel lists them */
	size_t nr_maps;
	struct jit_table jit;
};

struct ksym {
	uint64_t addr;
	const char *name; /* into td_symbolizer.ktext */
	uint32_t module;  /* index into kmods; 0: the kernel */
	uint32_t seq;     /* line order: of aliases at one address, the first listed wins */
};

struct kmod {
	const char *name; /* "[kernel]" or "[mod]" */
	uint64_t base;
};

enum kallsyms_state { KALLSYMS_UNREAD, KALLSYMS_LOADED, KALLSYMS_UNUSABLE };

struct td_symbolizer {
	char *proc_root;
	char *perf_map_dir;
	Dwfl_Callbacks callbacks; /* the Dwfls point to it */
	struct sym_proc **procs;
	size_t nr_procs, cap_procs;

	enum kallsyms_state kstate;
	bool khidden;
	char *ktext;
	struct ksym *ksyms;
	size_t nr_ksyms;
	struct kmod *kmods;
	size_t nr_kmods;
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* The whole of a file whose size stat cannot tell (proc files say 0), NUL-terminated. */
static int read_all(const char *path, char **out, size_t *out_len)
{
	size_t cap = 0, len = 0;
	char *buf = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int rc = 0;

	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			char *grown = realloc(buf, cap ? cap * 2 : 65536);

			if (!grown) {
				rc = -ENOMEM;
				break;
			}
			buf = grown;
			cap = cap ? cap * 2 : 65536;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (rc < 0) {
		free(buf);
		return rc;
	}
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	return 0;
}

/* Calls fn on each line of text (without its newline); stops at fn's first non-zero. */
static int for_each_line(char *text, size_t len, int (*fn)(char *line, size_t len, size_t lineno, void *ctx),
			 void *ctx)
{
	char *p = text, *end = text + len;
	size_t lineno = 0;

	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		int rc = fn(p, n, ++lineno, ctx);

		if (rc)
			return rc;
		p += n + 1;
	}
	return 0;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* At least one hex digit, at most 16 (no overflow). */
static bool take_hex(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int digits = 0, d;

	while (s < end && (d = hex_digit(*s)) >= 0) {
		if (++digits > 16)
			return false;
		v = v << 4 | (uint64_t)d;
		s++;
	}
	if (!digits)
		return false;
	*p = s;
	*out = v;
	return true;
}

static bool take_char(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return false;
	(*p)++;
	return true;
}

static bool take_blanks(const char **p, const char *end)
{
	const char *s = *p;

	while (*p < end && (**p == ' ' || **p == '\t'))
		(*p)++;
	return *p > s;
}

int td_maps_parse_line(const char *line, size_t len, struct td_maps_entry *out)
{
	static const char deleted[] = " (deleted)";
	const char *p = line, *end = line + len;
	uint64_t major, minor;

	memset(out, 0, sizeof(*out));
	if (!take_hex(&p, end, &out->start) || !take_char(&p, end, '-') ||
	    !take_hex(&p, end, &out->end) || !take_char(&p, end, ' ') || out->start >= out->end)
		return -EINVAL;
	if (end - p < 5 || (p[0] != 'r' && p[0] != '-') || (p[1] != 'w' && p[1] != '-') ||
	    (p[2] != 'x' && p[2] != '-') || (p[3] != 'p' && p[3] != 's'))
		return -EINVAL;
	out->exec = p[2] == 'x';
	p += 4;
	if (!take_char(&p, end, ' ') || !take_hex(&p, end, &out->pgoff) || !take_char(&p, end, ' ') ||
	    !take_hex(&p, end, &major) || !take_char(&p, end, ':') || !take_hex(&p, end, &minor) ||
	    !take_char(&p, end, ' ') || p >= end || *p < '0' || *p > '9')
		return -EINVAL;
	while (p < end && *p >= '0' && *p <= '9') {
		if (out->inode > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		out->inode = out->inode * 10 + (uint64_t)(*p++ - '0');
	}
	if (p < end && !take_blanks(&p, end))
		return -EINVAL;
	out->path = p;
	out->path_len = (size_t)(end - p);
	if (out->path_len > sizeof(deleted) - 1 &&
	    memcmp(end - (sizeof(deleted) - 1), deleted, sizeof(deleted) - 1) == 0) {
		out->deleted = true;
		out->path_len -= sizeof(deleted) - 1;
	}
	return 0;
}

int td_kallsyms_parse_line(const char *line, size_t len, struct td_kallsyms_entry *out)
{
	const char *p = line, *end = line + len;

	memset(out, 0, sizeof(*out));
	if (!take_hex(&p, end, &out->addr) || !take_char(&p, end, ' ') || p >= end || *p == ' ' ||
	    *p == '\t')
		return -EINVAL;
	out->type = *p++;
	if (!take_char(&p, end, ' '))
		return -EINVAL;
	out->name = p;
	while (p < end && *p != ' ' && *p != '\t')
		p++;
	out->name_len = (size_t)(p - out->name);
	if (!out->name_len)
		return -EINVAL;
	take_blanks(&p, end);
	if (p == end)
		return 0;
	if (*p != '[' || end[-1] != ']' || end - p < 3)
		return -EINVAL;
	out->module = p + 1;
	out->module_len = (size_t)(end - p - 2);
	if (memchr(out->module, ']', out->module_len) || memchr(out->module, ' ', out->module_len))
		return -EINVAL;
	return 0;
}

int td_perf_map_parse_line(const char *line, size_t len, struct td_perf_map_entry *out)
{
	const char *p = line, *end = line + len;

	memset(out, 0, sizeof(*out));
	while (end > p && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	if (!take_hex(&p, end, &out->start) || !take_blanks(&p, end))
		return -EINVAL;
	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	if (!take_hex(&p, end, &out->size) || !take_blanks(&p, end) || p == end ||
	    out->size > UINT64_MAX - out->start)
		return -EINVAL;
	out->name = p;
	out->name_len = (size_t)(end - p);
	return 0;
}

/* JIT maps */

static int jit_line(char *line, size_t len, size_t lineno, void *ctx)
{
	struct jit_table *t = ctx;
	struct td_perf_map_entry e;
	struct jit_sym *grown;

	(void)lineno;
	/* A runtime may be writing the file as we read it: skip what does not parse. */
	if (td_perf_map_parse_line(line, len, &e) < 0 || !e.size)
		return 0;
	grown = td_grow(t->syms, &t->cap, t->nr, sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	t->syms = grown;
	((char *)e.name)[e.name_len] = '\0';
	t->syms[t->nr++] = (struct jit_sym){ .start = e.start, .end = e.start + e.size, .name = e.name };
	return 0;
}

static int cmp_jit(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void jit_clear(struct jit_table *t)
{
	free(t->text);
	free(t->syms);
	memset(t, 0, sizeof(*t));
}

/*
 * (Re)reads perf-PID.map when it exists and differs from what was read;
 * a file that vanished leaves the table as it was.
 */
static int jit_load(struct td_symbolizer *sym, struct jit_table *t, pid_t pid)
{
	struct jit_table fresh = { 0 };
	struct stat st;
	char path[4096];
	size_t len;
	int rc;

	snprintf(path, sizeof(path), "%s/perf-%d.map", sym->perf_map_dir, (int)pid);
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	if (t->text && st.st_size == t->size && st.st_mtim.tv_sec == t->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == t->mtime.tv_nsec)
		return 0;
	rc = read_all(path, &fresh.text, &len);
	if (rc == -ENOMEM)
		return rc;
	if (rc < 0)
		return 0;
	rc = for_each_line(fresh.text, len, jit_line, &fresh);
	if (rc < 0) {
		jit_clear(&fresh);
		return rc;
	}
	/* Newline bytes became NULs in place; the names stay valid. */
	if (fresh.nr)
		qsort(fresh.syms, fresh.nr, sizeof(*fresh.syms), cmp_jit);
	fresh.size = st.st_size;
	fresh.mtime = st.st_mtim;
	jit_clear(t);
	*t = fresh;
	return 0;
}

static const struct jit_sym *jit_find(const struct jit_table *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nr;

	/* The last entry starting at or below addr; overlaps resolve to it. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr < t->syms[lo - 1].end)
		return &t->syms[lo - 1];
	return NULL;
}

/* Processes */

static void proc_clear_maps(struct sym_proc *p)
{
	for (size_t i = 0; i < p->nr_maps; i++)
		free(p->maps[i].name);
	free(p->maps);
	p->maps = NULL;
	p->nr_maps = 0;
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = NULL;
}

static void proc_free(struct sym_proc *p)
{
	proc_clear_maps(p);
	jit_clear(&p->jit);
	free(p);
}

static struct sym_proc **proc_slot(struct td_symbolizer *sym, pid_t pid)
{
	for (size_t i = 0; i < sym->nr_procs; i++)
		if (sym->procs[i]->pid == pid)
			return &sym->procs[i];
	return NULL;
}

static uint64_t fnv1a(const char *s, size_t len)
{
	uint64_t h = 14695981039346656037ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

struct maps_build {
	struct td_symbolizer *sym;
	pid_t pid;
	Dwfl *dwfl;
	struct sym_map *maps;
	size_t nr, cap;
	/* The file whose offset-0 mapping came last, and whether it was reported. */
	const char *group_path;
	size_t group_len;
	uint64_t group_base;
	bool group_reported;
	size_t bad_line;
};

static char *path_basename(const char *path, size_t len)
{
	const char *slash = memrchr(path, '/', len);
	const char *name = slash ? slash + 1 : path;

	return strndup(name, len - (size_t)(name - path));
}

/* Reports the ELF file of an executable mapping; failing files just stay unresolved. */
static void report_elf(struct maps_build *b, const struct td_maps_entry *e, const char *name)
{
	char path[4096];
	struct stat st;
	int n;

	if (e->deleted)
		n = snprintf(path, sizeof(path), "%s/%d/map_files/%" PRIx64 "-%" PRIx64, b->sym->proc_root,
			     (int)b->pid, e->start, e->end);
	else
		n = snprintf(path, sizeof(path), "%s/%d/root%.*s", b->sym->proc_root, (int)b->pid,
			     (int)e->path_len, e->path);
	if (n < 0 || (size_t)n >= sizeof(path) || stat(path, &st) < 0) {
		/* Another user's process: its root link needs ptrace access; the path may do. */
		if (e->deleted || e->path_len >= sizeof(path))
			return;
		memcpy(path, e->path, e->path_len);
		path[e->path_len] = '\0';
		if (stat(path, &st) < 0)
			return;
	}
	/* Devices and FIFOs would block or mislead libelf. */
	if (!S_ISREG(st.st_mode))
		return;
	dwfl_report_elf(b->dwfl, name, path, -1, b->group_base, false);
}

static int maps_line(char *line, size_t len, size_t lineno, void *ctx)
{
	struct maps_build *b = ctx;
	struct td_maps_entry e;
	struct sym_map *m, *grown;
	bool file;

	if (td_maps_parse_line(line, len, &e) < 0) {
		b->bad_line = lineno;
		return -EINVAL;
	}
	grown = td_grow(b->maps, &b->cap, b->nr, sizeof(*b->maps));
	if (!grown)
		return -ENOMEM;
	b->maps = grown;
	m = &b->maps[b->nr];
	*m = (struct sym_map){ .start = e.start, .end = e.end, .base = e.start };
	file = e.path_len && e.path[0] == '/';
	m->anon = !e.path_len || (e.path_len > 6 && memcmp(e.path, "[anon:", 6) == 0);
	if (e.path_len && !m->anon) {
		m->name = file ? path_basename(e.path, e.path_len) : strndup(e.path, e.path_len);
		if (!m->name)
			return -ENOMEM;
	}
	b->nr++;
	if (!file)
		return 0;
	if (e.pgoff == 0 || b->group_len != e.path_len || memcmp(b->group_path, e.path, e.path_len)) {
		/* Without an offset-0 mapping, assume the file is mapped contiguously. */
		b->group_path = e.path;
		b->group_len = e.path_len;
		b->group_base = e.start - e.pgoff;
		b->group_reported = false;
	}
	m->base = b->group_base;
	if (e.exec && !b->group_reported) {
		b->group_reported = true;
		report_elf(b, &e, m->name);
	}
	return 0;
}

/* A fresh Dwfl and map list from maps text; the caller's proc is left alone on failure. */
static int build_maps(struct td_symbolizer *sym, pid_t pid, char *text, size_t len, const char *what,
		      struct sym_proc *into, char *err, size_t errlen)
{
	struct maps_build b = { .sym = sym, .pid = pid };
	int rc;

	b.dwfl = dwfl_begin(&sym->callbacks);
	if (!b.dwfl) {
		set_err(err, errlen, "cannot start a libdwfl session: %s", dwfl_errmsg(-1));
		return -ENOMEM;
	}
	dwfl_report_begin(b.dwfl);
	rc = for_each_line(text, len, maps_line, &b);
	if (rc == 0)
		dwfl_report_end(b.dwfl, NULL, NULL);
	if (rc < 0) {
		if (rc == -EINVAL)
			set_err(err, errlen, "line %zu of %s is not a maps line; point proc_root at a proc tree",
				b.bad_line, what);
		else
			set_err(err, errlen, "out of memory reading %s", what);
		for (size_t i = 0; i < b.nr; i++)
			free(b.maps[i].name);
		free(b.maps);
		dwfl_end(b.dwfl);
		return rc;
	}
	proc_clear_maps(into);
	into->dwfl = b.dwfl;
	into->maps = b.maps;
	into->nr_maps = b.nr;
	return 0;
}

int td_symbolizer_add_process(struct td_symbolizer *sym, pid_t pid, char *err, size_t errlen)
{
	struct sym_proc **slot = proc_slot(sym, pid), *p;
	char path[4096];
	char *text;
	size_t len;
	uint64_t hash;
	int rc;

	if (pid <= 0) {
		set_err(err, errlen, "pid %d is not a process id; pass a positive pid", (int)pid);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "%s/%d/maps", sym->proc_root, (int)pid);
	rc = read_all(path, &text, &len);
	if (rc == -ENOENT || rc == -ESRCH || (rc == 0 && len == 0)) {
		if (rc == 0)
			free(text);
		/* A zombie's maps read empty: its memory is gone as well. */
		set_err(err, errlen, "process %d is gone (%s is %s); add a process while it runs",
			(int)pid, path, rc == 0 ? "empty" : "missing");
		return -ESRCH;
	}
	if (rc == -EACCES || rc == -EPERM) {
		set_err(err, errlen, "cannot read %s: permission denied; run as root or as the owner of process %d",
			path, (int)pid);
		return -EACCES;
	}
	if (rc < 0) {
		set_err(err, errlen, "cannot read %s: %s", path, strerror(-rc));
		return rc;
	}
	hash = fnv1a(text, len);
	p = slot ? *slot : NULL;
	if (p && p->maps_hash == hash && p->maps_len == len) {
		free(text);
		return jit_load(sym, &p->jit, pid);
	}
	if (!p) {
		struct sym_proc **grown = td_grow(sym->procs, &sym->cap_procs, sym->nr_procs, sizeof(*grown));

		p = grown ? calloc(1, sizeof(*p)) : NULL;
		if (!p) {
			free(text);
			set_err(err, errlen, "out of memory adding process %d", (int)pid);
			return -ENOMEM;
		}
		sym->procs = grown;
		p->pid = pid;
	}
	rc = build_maps(sym, pid, text, len, path, p, err, errlen);
	free(text);
	if (rc == 0) {
		p->maps_hash = hash;
		p->maps_len = len;
		rc = jit_load(sym, &p->jit, pid);
		if (rc < 0)
			set_err(err, errlen, "out of memory reading the JIT map of process %d", (int)pid);
	}
	if (!slot) {
		if (rc < 0)
			proc_free(p);
		else
			sym->procs[sym->nr_procs++] = p;
	}
	return rc;
}

void td_symbolizer_forget(struct td_symbolizer *sym, pid_t pid)
{
	struct sym_proc **slot = proc_slot(sym, pid);

	if (!slot)
		return;
	proc_free(*slot);
	*slot = sym->procs[--sym->nr_procs];
}

/* User addresses */

static const struct sym_map *map_find(const struct sym_proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nr_maps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < p->nr_maps && p->maps[lo].start <= addr)
		return &p->maps[lo];
	return NULL;
}

/* Fills one frame, copying the strings; false when out of memory (the frame is then released). */
static bool fill_frame(struct td_frame *f, const char *function, const char *module, uint64_t offset,
		       const char *file, uint32_t line)
{
	*f = (struct td_frame){ .offset = offset, .line = line };
	f->function = function ? strdup(function) : NULL;
	f->module = module ? strdup(module) : NULL;
	f->file = file ? strdup(file) : NULL;
	if ((function && !f->function) || (module && !f->module) || (file && !f->file)) {
		td_frame_release(f);
		return false;
	}
	return true;
}

static const char *call_site(Dwarf_Die *inlined, uint32_t *line)
{
	Dwarf_Attribute attr;
	Dwarf_Word file_idx, line_no;
	Dwarf_Files *files;
	Dwarf_Die cu;

	*line = 0;
	if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attr), &line_no) == 0)
		*line = line_no > UINT32_MAX ? 0 : (uint32_t)line_no;
	if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attr), &file_idx) != 0 ||
	    !dwarf_diecu(inlined, &cu, NULL, NULL) || dwarf_getsrcfiles(&cu, &files, NULL) != 0)
		return NULL;
	return dwarf_filesrc(files, file_idx, NULL, NULL);
}

/*
 * The function DIEs around pc, innermost first, up to the first real
 * (not inlined) function: dwarf_getscopes finds the innermost scope,
 * dwarf_getscopes_die walks out from it through the concrete
 * instances, where the call sites are.
 */
static int function_scopes(Dwfl_Module *mod, uint64_t addr, Dwarf_Die **out)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cudie = dwfl_module_addrdie(mod, addr, &bias);
	Dwarf_Die *scopes = NULL, inner;
	int n, kept = 0;

	*out = NULL;
	if (!cudie || dwarf_getscopes(cudie, addr - bias, &scopes) <= 0) {
		free(scopes);
		return 0;
	}
	inner = scopes[0];
	free(scopes);
	scopes = NULL;
	n = dwarf_getscopes_die(&inner, &scopes);
	for (int i = 0; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
			continue;
		scopes[kept++] = scopes[i];
		if (tag == DW_TAG_subprogram)
			break;
	}
	if (!kept) {
		free(scopes);
		return 0;
	}
	*out = scopes;
	return kept;
}

static int resolve_module(Dwfl_Module *mod, uint64_t addr, struct td_frame *frames, size_t max)
{
	const char *modname = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	const char *symname, *file = NULL;
	Dwarf_Addr elf_bias = 0;
	Dwfl_Line *src;
	Dwarf_Die *scopes;
	GElf_Off symoff;
	GElf_Sym elfsym;
	uint64_t offset;
	uint32_t line = 0;
	int nf, written = 0;

	dwfl_module_getelf(mod, &elf_bias);
	offset = addr - elf_bias;
	symname = dwfl_module_addrinfo(mod, addr, &symoff, &elfsym, NULL, NULL, NULL);
	src = dwfl_module_getsrc(mod, addr);
	if (src) {
		int lineno = 0;

		file = dwfl_lineinfo(src, NULL, &lineno, NULL, NULL, NULL);
		line = lineno > 0 ? (uint32_t)lineno : 0;
	}
	nf = function_scopes(mod, addr, &scopes);
	if (nf == 0)
		return fill_frame(&frames[0], symname, modname, offset, file, line) ? 1 : -ENOMEM;

	/* Outermost first; frame k's line is its call of frame k + 1, the innermost's the pc's. */
	for (int k = nf - 1; k >= 0 && (size_t)written < max; k--) {
		Dwarf_Die *die = &scopes[k];
		const char *name = dwarf_diename(die);
		const char *where = file;
		uint32_t at = line;

		if (k == nf - 1 && symname && dwarf_tag(die) == DW_TAG_subprogram)
			name = symname;
		if (k > 0)
			where = call_site(&scopes[k - 1], &at);
		if (!fill_frame(&frames[written], name ? name : symname, modname, offset, where, at)) {
			while (written > 0)
				td_frame_release(&frames[--written]);
			free(scopes);
			return -ENOMEM;
		}
		written++;
	}
	free(scopes);
	return written;
}

int td_symbolize_user(struct td_symbolizer *sym, pid_t pid, uint64_t addr, bool return_address,
		      struct td_frame *frames, size_t max)
{
	struct sym_proc **slot = proc_slot(sym, pid);
	const struct sym_map *m = NULL;
	const struct jit_sym *js;
	struct sym_proc *p;
	Dwfl_Module *mod;
	uint64_t a = return_address && addr ? addr - 1 : addr;

	if (!max)
		return -EINVAL;
	if (!slot && td_symbolizer_add_process(sym, pid, NULL, 0) == 0)
		slot = proc_slot(sym, pid);
	if (!slot)
		return fill_frame(&frames[0], NULL, NULL, a, NULL, 0) ? 1 : -ENOMEM;
	p = *slot;
	mod = dwfl_addrmodule(p->dwfl, a);
	if (mod)
		return resolve_module(mod, a, frames, max);
	m = map_find(p, a);
	if (m && !m->anon)
		return fill_frame(&frames[0], NULL, m->name, a - m->base, NULL, 0) ? 1 : -ENOMEM;
	js = jit_find(&p->jit, a);
	if (!js) {
		if (jit_load(sym, &p->jit, pid) < 0)
			return -ENOMEM;
		js = jit_find(&p->jit, a);
	}
	if (js)
		return fill_frame(&frames[0], js->name, "[jit]", a - js->start, NULL, 0) ? 1 : -ENOMEM;
	return fill_frame(&frames[0], NULL, NULL, m ? a - m->start : a, NULL, 0) ? 1 : -ENOMEM;
}

/* Kernel addresses */

struct kallsyms_build {
	struct td_symbolizer *sym;
	size_t cap_ksyms, cap_kmods;
	bool nonzero;
	uint64_t text_addr; /* "_text", the kernel's base, when listed */
	bool has_text;
};

static int kallsyms_line(char *line, size_t len, size_t lineno, void *ctx)
{
	struct kallsyms_build *b = ctx;
	struct td_symbolizer *sym = b->sym;
	struct td_kallsyms_entry e;
	struct ksym *ks;
	uint32_t mod = 0;
	char t;

	(void)lineno;
	if (td_kallsyms_parse_line(line, len, &e) < 0)
		return 0; /* one odd line does not hide the rest */
	if (e.addr)
		b->nonzero = true;
	((char *)e.name)[e.name_len] = '\0';
	if (!e.module && strcmp(e.name, "_text") == 0) {
		b->text_addr = e.addr;
		b->has_text = true;
	}
	t = e.type;
	if (t != 't' && t != 'T' && t != 'w' && t != 'W')
		return 0;
	if (e.module) {
		/* Brackets included: the frame's module is "[mod]" as listed. */
		char *name = (char *)e.module - 1;

		name[e.module_len + 2] = '\0';
		/* A module's symbols come together: search from the last one added. */
		for (mod = (uint32_t)sym->nr_kmods - 1; mod > 0; mod--)
			if (strcmp(sym->kmods[mod].name, name) == 0)
				break;
		if (!mod) {
			struct kmod *grown = td_grow(sym->kmods, &b->cap_kmods, sym->nr_kmods, sizeof(*grown));

			if (!grown)
				return -ENOMEM;
			sym->kmods = grown;
			mod = (uint32_t)sym->nr_kmods++;
			sym->kmods[mod] = (struct kmod){ .name = name, .base = e.addr };
		}
		if (e.addr < sym->kmods[mod].base)
			sym->kmods[mod].base = e.addr;
	} else if (e.addr < sym->kmods[0].base) {
		sym->kmods[0].base = e.addr;
	}
	ks = td_grow(sym->ksyms, &b->cap_ksyms, sym->nr_ksyms, sizeof(*ks));
	if (!ks)
		return -ENOMEM;
	sym->ksyms = ks;
	sym->ksyms[sym->nr_ksyms] = (struct ksym){ .addr = e.addr, .name = e.name, .module = mod,
						    .seq = (uint32_t)sym->nr_ksyms };
	sym->nr_ksyms++;
	return 0;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A missing or unreadable kallsyms leaves kernel frames unresolved; only memory fails. */
static int kallsyms_load(struct td_symbolizer *sym)
{
	struct kallsyms_build b = { .sym = sym, .cap_kmods = 1 };
	char path[4096];
	size_t len;
	int rc;

	sym->kstate = KALLSYMS_UNUSABLE;
	snprintf(path, sizeof(path), "%s/kallsyms", sym->proc_root);
	rc = read_all(path, &sym->ktext, &len);
	if (rc == -ENOMEM)
		return rc;
	if (rc < 0)
		return 0;
	sym->kmods = malloc(sizeof(*sym->kmods));
	if (!sym->kmods)
		return -ENOMEM;
	sym->kmods[0] = (struct kmod){ .name = "[kernel]", .base = UINT64_MAX };
	sym->nr_kmods = 1;
	rc = for_each_line(sym->ktext, len, kallsyms_line, &b);
	if (rc < 0)
		return rc;
	if (b.has_text)
		sym->kmods[0].base = b.text_addr;
	sym->khidden = sym->nr_ksyms && !b.nonzero;
	if (sym->nr_ksyms && b.nonzero) {
		qsort(sym->ksyms, sym->nr_ksyms, sizeof(*sym->ksyms), cmp_ksym);
		sym->kstate = KALLSYMS_LOADED;
	}
	return 0;
}

int td_symbolize_kernel(struct td_symbolizer *sym, uint64_t addr, struct td_frame *frame)
{
	const struct ksym *ks;
	size_t lo = 0, hi;
	int rc;

	if (sym->kstate == KALLSYMS_UNREAD && (rc = kallsyms_load(sym)) < 0)
		return rc;
	hi = sym->kstate == KALLSYMS_LOADED ? sym->nr_ksyms : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sym->ksyms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo) {
		if (!fill_frame(frame, NULL, "[kernel]", 0, NULL, 0))
			return -ENOMEM;
	} else {
		const struct kmod *km;

		ks = &sym->ksyms[lo - 1];
		while (ks > sym->ksyms && ks[-1].addr == ks->addr)
			ks--;
		km = &sym->kmods[ks->module];
		if (!fill_frame(frame, ks->name, km->name, addr >= km->base ? addr - km->base : 0, NULL, 0))
			return -ENOMEM;
	}
	frame->kernel = true;
	return 0;
}

bool td_symbolizer_kernel_hidden(const struct td_symbolizer *sym)
{
	return sym->khidden;
}

/* The symbolizer */

struct td_symbolizer *td_symbolizer_new(const struct td_symbolizer_opts *opts, char *err, size_t errlen)
{
	const char *root = opts && opts->proc_root ? opts->proc_root : "/proc";
	const char *jit_dir = opts && opts->perf_map_dir ? opts->perf_map_dir : "/tmp";
	struct td_symbolizer *sym;
	struct stat st;

	if (stat(root, &st) < 0 || !S_ISDIR(st.st_mode)) {
		set_err(err, errlen, "proc_root %s is not a directory; point it at /proc or a copy of its layout",
			root);
		return NULL;
	}
	sym = calloc(1, sizeof(*sym));
	if (sym) {
		sym->proc_root = strdup(root);
		sym->perf_map_dir = strdup(jit_dir);
	}
	if (!sym || !sym->proc_root || !sym->perf_map_dir) {
		td_symbolizer_free(sym);
		set_err(err, errlen, "out of memory creating the symbolizer");
		return NULL;
	}
	sym->callbacks.find_elf = dwfl_build_id_find_elf;
	/* Only a relocatable file (never mapped by a real process) asks for it. */
	sym->callbacks.section_address = dwfl_offline_section_address;
	sym->callbacks.find_debuginfo = opts && opts->use_debuginfod ? dwfl_standard_find_debuginfo
								   : dwfl_build_id_find_debuginfo;
	return sym;
}

void td_symbolizer_free(struct td_symbolizer *sym)
{
	if (!sym)
		return;
	for (size_t i = 0; i < sym->nr_procs; i++)
		proc_free(sym->procs[i]);
	free(sym->procs);
	free(sym->ktext);
	free(sym->ksyms);
	free(sym->kmods);
	free(sym->proc_root);
	free(sym->perf_map_dir);
	free(sym);
}
