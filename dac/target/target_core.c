/* target_core.c - the "core" backend: an x86-64 ELF core file (kernel, gdb gcore or createdump).
 *
 * Memory comes from the PT_LOAD segments; bytes a segment does not hold (p_filesz < p_memsz, or
 * no segment at all, as for read-only file pages gcore and the kernel skip) come from the file
 * mapped there per the NT_FILE note: the file at its recorded path, else one found through the
 * symbol path with the same identity (symbols.h). Threads and registers come from the NT_PRSTATUS
 * notes, modules from NT_FILE, frames from libdwfl's unwinder over those registers and this memory
 * (native_symbols.h finds the modules' files).
 *
 * A core cut short (segments past the end of the file) opens best-effort: the missing bytes are
 * unreadable, and open says so in one line; with strict it is refused. */
#include "target/dwfl_frames.h"
#include "target/target.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cursor.h"
#include "base/limits.h"
#include "target/elf_image.h"
#include "target/native_symbols.h"
#include "target/pe_image.h"
#include "target/symbol_store.h"
#include "target/stop_reason.h"
#include "target/symbols.h"

/* struct elf_prstatus on x86-64 (linux/elfcore.h), read by offset so any host can parse it. */
#define PRSTATUS_CURSIG_OFF 12u  /* after struct elf_siginfo {si_signo, si_code, si_errno} */
#define PRSTATUS_PID_OFF 32u
#define PRSTATUS_REGS_OFF 112u
#define USER_REGS_COUNT 27u  /* struct user_regs_struct: 27 longs */
#define PRSTATUS_MIN_SIZE (PRSTATUS_REGS_OFF + USER_REGS_COUNT * 8u)

/* user_regs_struct slot of each enum adac_reg (r15, r14, r13, r12, rbp, rbx, r11, r10, r9, r8,
 * rax, rcx, rdx, rsi, rdi, orig_rax, rip, cs, eflags, rsp, ss, fs_base, ...). */
static const unsigned user_reg_slot[ADAC_REG_COUNT] = {
	[ADAC_REG_RAX] = 10, [ADAC_REG_RCX] = 11, [ADAC_REG_RDX] = 12, [ADAC_REG_RBX] = 5,
	[ADAC_REG_RSP] = 19, [ADAC_REG_RBP] = 4,  [ADAC_REG_RSI] = 13, [ADAC_REG_RDI] = 14,
	[ADAC_REG_R8] = 9,   [ADAC_REG_R9] = 8,   [ADAC_REG_R10] = 7,  [ADAC_REG_R11] = 6,
	[ADAC_REG_R12] = 3,  [ADAC_REG_R13] = 2,  [ADAC_REG_R14] = 1,  [ADAC_REG_R15] = 0,
	[ADAC_REG_RIP] = 16, [ADAC_REG_FS_BASE] = 21,
};

/* siginfo_t on x86-64 (NT_SIGINFO): si_signo, si_errno, si_code, then the fault address. */
#define NT_SIGINFO_TYPE 0x53494749u
#define SIGINFO_SIGNO_OFF 0u
#define SIGINFO_CODE_OFF 8u
#define SIGINFO_ADDR_OFF 16u
#define SIGINFO_MIN_SIZE 24u

#define PAGE_BYTES 4096u

struct core_seg {
	uint64_t vaddr, memsz;   /* [vaddr, vaddr + memsz) of target memory */
	uint64_t offset, filesz; /* the first filesz bytes are at offset in the core file */
	uint64_t cut;            /* bytes after those that the file was cut short of (truncated core) */
};

struct mapped_file {
	const char *path;   /* points into core->file_strings */
	uint64_t base, end; /* its module (adac_file_modules); base UINT64_MAX: none */
	int fd;             /* -1 until opened, and when unusable */
	bool tried;         /* open attempted */
	uint64_t size;
	char *origin;       /* when found through the symbol path: "name from path (route)" */
	char *found;        /* ... and the path of the file found */
	bool read;          /* bytes were read from it (origin says so only then) */
};

struct core_thread {
	uint64_t tid;
	struct adac_regs regs;
	int cursig;       /* NT_PRSTATUS pr_cursig (the kernel writes the fatal signal on every thread) */
	bool siginfo;     /* an NT_SIGINFO followed this thread's NT_PRSTATUS: it took the signal */
	int si_signo, si_code;
	uint64_t si_addr;
};

struct core {
	char *path;
	int fd;
	Elf *elf;
	uint64_t size;
	dev_t dev;              /* the file's identity, checked by reopen */
	ino_t ino;
	struct core_seg *segs;  /* sorted by vaddr, not overlapping */
	size_t nsegs;
	char *file_strings;     /* copy of the NT_FILE path strings */
	struct mapped_file *files;
	size_t nfiles;
	struct adac_file_map *maps;  /* sorted by start */
	size_t nmaps;
	bool have_files;        /* an NT_FILE note was parsed (later ones are ignored) */
	struct adac_module *mods;
	size_t nmods;
	struct core_thread *threads;
	size_t nthreads;
	Dwfl *dwfl;             /* made on the first frames() call */
	struct adac_symbols *symbols;  /* the target's (set_symbols); NULL: look nowhere else */
	struct adac_native_symbols native; /* what libdwfl's callbacks look through */
	bool strict;
	char warning[ADAC_ERROR_MSG_MAX]; /* what a best-effort open left out */
};

/* ---- memory ---- */

/* Number of segments starting at or below addr (so segs[i - 1] may contain it). */
static size_t seg_upper(const struct core *c, uint64_t addr)
{
	size_t lo = 0, hi = c->nsegs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->segs[mid].vaddr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct adac_file_map *map_at(const struct core *c, uint64_t addr)
{
	size_t lo = 0, hi = c->nmaps;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= c->maps[lo - 1].end)
		return NULL;
	return &c->maps[lo - 1];
}

/* Where the core file itself holds the bytes at addr: their file offset, and *len cut to how many
 * of them follow in the file. false when it holds none there (a file of the core's may). */
static bool file_span(const struct core *c, uint64_t addr, uint64_t *at, size_t *len)
{
	size_t idx = seg_upper(c, addr);
	if (idx == 0)
		return false;
	const struct core_seg *s = &c->segs[idx - 1];
	uint64_t off = addr - s->vaddr;
	if (off >= s->filesz)
		return false;
	if (*len > s->filesz - off)
		*len = (size_t)(s->filesz - off);
	*at = s->offset + off;
	return true;
}

/* Bytes at addr that the core file itself holds (no file fallback): how many, from the start. */
static size_t read_core_only(const struct core *c, uint64_t addr, uint8_t *buf, size_t len)
{
	uint64_t at;
	if (!file_span(c, addr, &at, &len))
		return 0;
	int64_t n = adac_pread_full(c->fd, buf, len, at);
	return n > 0 ? (size_t)n : 0;
}

/* A view's mapping starts at a file offset of this alignment: the page cache's large folios
 * (ext4, xfs) are then mapped whole, a fault each, where 4 KiB pages took one per 64 KiB. */
#define VIEW_ALIGN (2u << 20)

/* view: the core file's own bytes at addr, mapped. The file is checked to still hold them: a
 * mapping read past the file's end would kill the process (SIGBUS) where pread reads short. */
static int core_view(void *impl, uint64_t addr, size_t len, struct adac_target_view *v)
{
	const struct core *c = impl;
	uint64_t at;
	if (!file_span(c, addr, &at, &len))
		return -1;
	uint64_t start = at & ~(uint64_t)(VIEW_ALIGN - 1);
	size_t map_len = (size_t)(at - start) + len;
	struct stat st;
	if (fstat(c->fd, &st) || (uint64_t)st.st_size < start + map_len)
		return -1;
	void *map = mmap(NULL, map_len, PROT_READ, MAP_PRIVATE, c->fd, (off_t)start);
	if (map == MAP_FAILED)
		return -1;
	*v = (struct adac_target_view){(const uint8_t *)map + (at - start), len, map, map_len};
	return 0;
}

static void core_unview(void *impl, struct adac_target_view *v)
{
	(void)impl;
	munmap(v->map, v->map_len);
}

/* read_concurrent: the core file's own bytes (preads are safe on several threads); those only the
 * mapped files hold are left to core_read, which opens the files as it needs them. */
static size_t core_read_concurrent(void *impl, uint64_t addr, void *buf, size_t len)
{
	const struct core *c = impl;
	size_t done = 0;
	while (done < len && addr + done >= addr) {
		size_t n = read_core_only(c, addr + done, (uint8_t *)buf + done, len - done);
		if (n == 0)
			break;
		done += n;
	}
	return done;
}

/* The core's copy of the file's first page (its ELF or PE headers, which kernel, gcore and
 * createdump cores keep); 0 when the core lacks it. */
static size_t core_first_page(const struct core *c, const struct mapped_file *f, uint8_t page[PAGE_BYTES])
{
	return f->base == UINT64_MAX ? 0 : read_core_only(c, f->base, page, PAGE_BYTES);
}

/* A file rebuilt since the core was taken would give wrong bytes. When the core holds the file's
 * first page, the file must match it. */
static bool same_as_core(const struct core *c, const struct mapped_file *f, int fd, uint64_t size)
{
	uint8_t in_core[PAGE_BYTES], in_file[PAGE_BYTES];
	size_t len = core_first_page(c, f, in_core);
	if (len > size)
		len = (size_t)size;
	if (len == 0)
		return true; /* the core lacks that page: nothing to compare */
	return adac_pread_full(fd, in_file, len, 0) == (int64_t)len && memcmp(in_core, in_file, len) == 0;
}

/* A regular file at path, opened read-only, or -1. The path may come from the core: never open a
 * FIFO or a device (it could block, or act). */
static int open_regular(const char *path, uint64_t *size)
{
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	*size = (uint64_t)st.st_size;
	return fd;
}

/* Without the core's first page, a file found by name must at least be large enough for every
 * mapping of it the core records (a whole-file mapping, as of an IL assembly, says its size to
 * the page). The smallest size that fits, or 0 when none is needed. */
static uint64_t min_size_for_mappings(const struct core *c, const struct mapped_file *f)
{
	uint64_t need = 0;
	for (size_t i = 0; i < c->nmaps; i++) {
		const struct adac_file_map *m = &c->maps[i];
		if (&c->files[m->file] != f)
			continue;
		uint64_t end = m->offset + (m->end - m->start);
		if (end > PAGE_BYTES && end - PAGE_BYTES + 1 > need)
			need = end - PAGE_BYTES + 1;
	}
	return need;
}

struct substitute_check {
	const struct core *c;
	const struct mapped_file *f;
};

static int check_substitute(void *ctx, const char *path, char *why, size_t why_size)
{
	const struct substitute_check *k = ctx;
	uint64_t size = 0;
	int fd = open_regular(path, &size);
	if (fd < 0) {
		snprintf(why, why_size, "cannot be opened");
		return -1;
	}
	uint8_t page[PAGE_BYTES];
	bool have_page = core_first_page(k->c, k->f, page) > 0;
	bool same = same_as_core(k->c, k->f, fd, size);
	close(fd);
	uint64_t need = min_size_for_mappings(k->c, k->f);
	if (!same)
		snprintf(why, why_size, "differs from the core's copy of its first page");
	else if (!have_page && size < need)
		snprintf(why, why_size, "is too small for its mappings (%llu bytes, %llu at least)", (unsigned long long)size,
		         (unsigned long long)need);
	else
		return 0;
	return -1;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static int core_page_read(void *ctx, uint64_t addr, void *buf, size_t len, struct adac_error *err)
{
	const struct core *c = ctx;
	if (read_core_only(c, addr, buf, len) == len)
		return 0;
	return adac_fail(err, ADAC_E_READ, addr, "not in the core");
}

/* The file's symbol store key from the core's copy of its headers: an ELF build-id or a PE
 * timestamp and size. false when the core lacks them (the file is then looked for by name). */
static bool identity_key(const struct core *c, const struct mapped_file *f, char *key, size_t size,
                         uint8_t *build_id, size_t *build_id_len)
{
	uint8_t page[PAGE_BYTES];
	size_t len = core_first_page(c, f, page);
	*build_id_len = 0;
	if (len >= 4 && memcmp(page, "\177ELF", 4) == 0) {
		struct adac_elf_mem mem = {core_page_read, (void *)c};
		adac_elf_build_id(&mem, f->base, build_id, build_id_len);
		return *build_id_len && adac_ssqp_key_elf(base_name(f->path), build_id, *build_id_len, key, size, NULL) == 0;
	}
	struct adac_pe_headers h;
	return adac_pe_parse_headers(page, len, f->path, &h, NULL) == 0 &&
	       adac_ssqp_key_pe(base_name(f->path), h.timestamp, h.size_of_image, key, size, NULL) == 0;
}

/* The file is not at its recorded path, or another file took its place: look for it by identity. */
static void find_substitute(struct core *c, struct mapped_file *f)
{
	char key[ADAC_MAX_PATH_BYTES];
	uint8_t build_id[ADAC_BUILD_ID_MAX];
	size_t build_id_len;
	bool keyed = identity_key(c, f, key, sizeof key, build_id, &build_id_len);
	struct substitute_check k = {c, f};
	struct adac_symbol_want w = {.name = base_name(f->path), .key = keyed ? key : NULL,
	                             .build_id = build_id_len ? build_id : NULL, .build_id_len = build_id_len,
	                             .kind = ADAC_SYMBOL_BINARY, .check = check_substitute, .ctx = &k};
	struct adac_symbol_found found;
	if (adac_symbols_find(c->symbols, &w, &found, NULL) != 0)
		return;
	uint64_t size;
	int fd = open_regular(found.path, &size);
	if (fd < 0)
		return;
	size_t n = strlen(w.name) + strlen(found.path) + strlen(found.route) + 80;
	if ((f->origin = malloc(n)) == NULL) {
		close(fd);
		return;
	}
	uint8_t page[PAGE_BYTES];
	snprintf(f->origin, n, "%s from %s (%s)%s", w.name, found.path, found.route,
	         core_first_page(c, f, page) ? "" : "; matched by name and size only: the core lacks its headers");
	f->found = strdup(found.path);
	f->fd = fd;
	f->size = size;
}

static void open_mapped_file(struct core *c, struct mapped_file *f)
{
	f->tried = true;
	uint64_t size;
	int fd = open_regular(f->path, &size);
	if (fd >= 0 && same_as_core(c, f, fd, size)) {
		f->fd = fd;
		f->size = size;
		return;
	}
	if (fd >= 0)
		close(fd);
	if (c->symbols)
		find_substitute(c, f);
}

/* Reads from the file mapped at addr (the fallback for bytes the core lacks); bytes read, 0 when
 * there is no such file, it differs from the one the core saw, or it is too short. */
static size_t read_mapped_file(struct core *c, uint64_t addr, uint8_t *buf, size_t len)
{
	const struct adac_file_map *m = map_at(c, addr);
	if (!m)
		return 0;
	struct mapped_file *f = &c->files[m->file];
	if (!f->tried)
		open_mapped_file(c, f);
	if (f->fd < 0)
		return 0;
	uint64_t in_map = addr - m->start;
	if (m->offset > UINT64_MAX - in_map)
		return 0;
	uint64_t off = m->offset + in_map;
	if (off >= f->size)
		return 0;
	if (len > m->end - addr)
		len = (size_t)(m->end - addr);
	if (len > f->size - off)
		len = (size_t)(f->size - off);
	int64_t n = adac_pread_full(f->fd, buf, len, off);
	if (n > 0)
		f->read = true;
	return n > 0 ? (size_t)n : 0;
}

static int64_t core_read(void *impl, uint64_t addr, void *buf, size_t len, struct adac_error *err)
{
	struct core *c = impl;
	uint8_t *out = buf;
	size_t done = 0;
	while (done < len) {
		uint64_t a = addr + done;
		if (a < addr)
			break; /* wrapped past the top of the address space */
		size_t want = len - done;
		size_t idx = seg_upper(c, a);
		const struct core_seg *s = idx ? &c->segs[idx - 1] : NULL;
		if (s && a - s->vaddr >= s->memsz)
			s = NULL;
		size_t n;
		if (s && a - s->vaddr < s->filesz) {
			uint64_t off = a - s->vaddr;
			if (want > s->filesz - off)
				want = (size_t)(s->filesz - off);
			int64_t got = adac_pread_full(c->fd, out + done, want, s->offset + off);
			if (got < 0 && done == 0)
				return adac_fail(err, ADAC_E_IO, a, "%s: cannot read the core file: %s", c->path, strerror(errno));
			if (got < 0)
				break;
			n = (size_t)got; /* short only if the file shrank since it was opened */
		} else {
			/* Not in the core: stop where core data starts again, so it takes precedence. */
			uint64_t limit = s ? s->vaddr + s->memsz : (idx < c->nsegs ? c->segs[idx].vaddr : UINT64_MAX);
			if (want > limit - a)
				want = (size_t)(limit - a);
			n = read_mapped_file(c, a, out + done, want);
		}
		done += n;
		if (n < want || n == 0)
			break;
	}
	return (int64_t)done;
}

/* ---- modules, threads, registers ---- */

static int core_modules(void *impl, adac_module_cb cb, void *ctx, struct adac_error *err)
{
	(void)err;
	struct core *c = impl;
	for (size_t i = 0; i < c->nmods; i++)
		if (cb(ctx, &c->mods[i]))
			break;
	return 0;
}

/* The thread that got the fatal signal: the one the core's NT_SIGINFO belongs to (kernel cores write
 * one, right after the dumping thread's NT_PRSTATUS), else the first with a signal in its status. */
static const struct core_thread *signalled_thread(const struct core *c)
{
	for (size_t i = 0; i < c->nthreads; i++)
		if (c->threads[i].siginfo && c->threads[i].si_signo > 0)
			return &c->threads[i];
	for (size_t i = 0; i < c->nthreads; i++)
		if (c->threads[i].cursig > 0)
			return &c->threads[i];
	return NULL;
}

static uint64_t core_selected_thread(void *impl)
{
	const struct core_thread *th = signalled_thread(impl);
	return th ? th->tid : 0;
}

static int core_threads(void *impl, adac_thread_cb cb, void *ctx, struct adac_error *err)
{
	(void)err;
	struct core *c = impl;
	for (size_t i = 0; i < c->nthreads; i++) {
		/* NT_PRPSINFO names only the process, so threads stay unnamed. */
		const struct core_thread *ct = &c->threads[i];
		struct adac_thread th = {.tid = ct->tid, .index = (uint32_t)i + 1};
		if (ct == signalled_thread(c)) {
			th.signo = ct->siginfo ? ct->si_signo : ct->cursig;
			adac_stop_reason_signal(th.stop_reason, sizeof th.stop_reason, th.signo, ct->siginfo ? ct->si_code : 0,
			                        ct->si_addr);
		}
		if (cb(ctx, &th))
			break;
	}
	return 0;
}

static const struct core_thread *find_thread(const struct core *c, uint64_t tid)
{
	for (size_t i = 0; i < c->nthreads; i++)
		if (c->threads[i].tid == tid)
			return &c->threads[i];
	return NULL;
}

/* thread_of_process_tid: a core made on the host of a process in a container (gcore) numbers its
 * threads by this machine's ids, and the runtime recorded the process's own. The thread is then
 * the one whose stack pointer is inside the stack the runtime recorded (none, or two: not found). */
static uint64_t core_thread_of_process_tid(void *impl, uint64_t process_tid, uint64_t stack_limit, uint64_t stack_base)
{
	const struct core *c = impl;
	if (find_thread(c, process_tid) || !stack_limit || stack_base <= stack_limit)
		return process_tid;
	uint64_t found = 0;
	for (size_t i = 0; i < c->nthreads; i++) {
		uint64_t sp = c->threads[i].regs.r[ADAC_REG_RSP];
		if (sp < stack_limit || sp >= stack_base)
			continue;
		if (found)
			return process_tid;
		found = c->threads[i].tid;
	}
	return found ? found : process_tid;
}

static int core_regs(void *impl, uint64_t tid, struct adac_regs *regs, struct adac_error *err)
{
	struct core *c = impl;
	const struct core_thread *th = find_thread(c, tid);
	if (!th)
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "%s: no thread %llu in the core", c->path, (unsigned long long)tid);
	*regs = th->regs;
	return 0;
}

/* ---- frames (libdwfl) ---- */

/* libdwfl unwinds the core's threads from the registers and memory this file reads, not through
 * its own core thread walk (dwfl_core_file_attach): that walk reparses the notes for every thread
 * asked for, ends at the first thread whose pid is 0 or negative, and (0.188) leaks its cursor
 * when a corrupt note cuts it short. Here a thread is found by its tid, each is unwound alone, and
 * memory comes from the core or, where the core left it out, the mapped files. */
static pid_t dwfl_next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	(void)dwfl;
	struct core *c = dwfl_arg;
	size_t i = *thread_argp ? (size_t)((const struct core_thread *)*thread_argp - c->threads) + 1 : 0;
	for (; i < c->nthreads; i++)
		if ((int32_t)c->threads[i].tid > 0) {
			*thread_argp = &c->threads[i];
			return (pid_t)c->threads[i].tid;
		}
	return 0;
}

static bool dwfl_get_thread(Dwfl *dwfl, pid_t tid, void *dwfl_arg, void **thread_argp)
{
	(void)dwfl;
	const struct core_thread *th = tid > 0 ? find_thread(dwfl_arg, (uint64_t)tid) : NULL;
	*thread_argp = (void *)th;
	return th != NULL;
}

static bool dwfl_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg)
{
	(void)dwfl;
	struct adac_error ignored;
	uint64_t word;
	if (core_read(dwfl_arg, addr, &word, sizeof word, &ignored) != (int64_t)sizeof word)
		return false;
	*result = word;
	return true;
}

static bool dwfl_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	const struct core_thread *th = thread_arg;
	return adac_dwfl_thread_registers(thread, &th->regs);
}

static const Dwfl_Thread_Callbacks core_thread_callbacks = {
	.next_thread = dwfl_next_thread,
	.get_thread = dwfl_get_thread,
	.memory_read = dwfl_memory_read,
	.set_initial_registers = dwfl_initial_registers,
};

static int open_dwfl(struct core *c, struct adac_error *err)
{
	if (c->dwfl)
		return 0;
	Dwfl *d = dwfl_begin(&adac_native_core_callbacks);
	if (!d)
		return adac_fail(err, ADAC_E_NOMEM, 0, "%s: cannot start libdwfl: %s", c->path, dwfl_errmsg(-1));
	dwfl_report_begin(d);
	if (dwfl_core_file_report(d, c->elf, NULL) < 0 || dwfl_report_end(d, NULL, NULL) != 0) {
		adac_fail(err, ADAC_E_CORRUPT, 0, "%s: libdwfl cannot read the core: %s", c->path, dwfl_errmsg(-1));
		dwfl_end(d);
		return -1;
	}
	/* (The pid only names the process to libdwfl.) */
	pid_t pid = c->nthreads && (int32_t)c->threads[0].tid > 0 ? (pid_t)c->threads[0].tid : 1;
	if (!dwfl_attach_state(d, c->elf, pid, &core_thread_callbacks, c)) {
		adac_fail(err, ADAC_E_UNSUPPORTED, 0, "%s: libdwfl cannot unwind the core's threads: %s", c->path,
		          dwfl_errmsg(-1));
		dwfl_end(d);
		return -1;
	}
	adac_native_symbols_attach(d, &c->native);
	c->dwfl = d;
	return 0;
}

static void core_set_symbols(void *impl, struct adac_symbols *symbols)
{
	struct core *c = impl;
	c->symbols = c->native.symbols = symbols;
	/* Files not found so far, and libdwfl's view of the modules, get another chance. */
	for (size_t i = 0; i < c->nfiles; i++)
		if (c->files[i].fd < 0)
			c->files[i].tried = false;
	if (c->dwfl) {
		dwfl_end(c->dwfl);
		c->dwfl = NULL;
	}
}

static const char *core_origin(void *impl, uint64_t addr)
{
	struct core *c = impl;
	const struct adac_file_map *m = map_at(c, addr);
	return m && c->files[m->file].read ? c->files[m->file].origin : NULL;
}

static int core_module_file(void *impl, uint64_t base, char *buf, size_t size)
{
	struct core *c = impl;
	const struct adac_file_map *m = map_at(c, base);
	if (!m)
		return -1;
	struct mapped_file *f = &c->files[m->file];
	/* ELF files only, known by the header the core keeps (a core keeps ELF headers, gcore's too):
	 * a debugger is shown those, and nothing is looked for through the symbol path (a symbol
	 * server) for the others. */
	uint8_t page[PAGE_BYTES];
	if (f->base != base || core_first_page(c, f, page) < 4 || memcmp(page, "\177ELF", 4) != 0)
		return -1;
	if (!f->tried)
		open_mapped_file(c, f);
	if (f->fd < 0)
		return -1;
	int n = snprintf(buf, size, "%s", f->found ? f->found : f->path);
	return n > 0 && (size_t)n < size ? 0 : -1;
}

static int core_frames(void *impl, uint64_t tid, adac_frame_cb cb, void *ctx, struct adac_error *err)
{
	struct core *c = impl;
	if (!find_thread(c, tid))
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "%s: no thread %llu in the core", c->path, (unsigned long long)tid);
	if ((int32_t)tid <= 0 || tid > INT32_MAX) /* (a corrupt note's: libdwfl takes a pid) */
		return adac_fail(err, ADAC_E_CORRUPT, 0, "%s: cannot unwind thread %llu: its NT_PRSTATUS pid is no thread id",
		                 c->path, (unsigned long long)tid);
	if (open_dwfl(c, err))
		return -1;
	struct adac_dwfl_walk w = {.dwfl = c->dwfl, .cb = cb, .ctx = ctx};
	const char *errmsg = NULL;
	if (dwfl_getthread_frames(c->dwfl, (pid_t)tid, adac_dwfl_walk_frame, &w) < 0)
		errmsg = dwfl_errmsg(-1);
	if (w.limit_hit)
		return adac_fail(err, ADAC_E_LIMIT, 0, "thread %llu has more than ADAC_MAX_UNWIND_FRAMES (%u) frames",
		                 (unsigned long long)tid, ADAC_MAX_UNWIND_FRAMES);
	/* An unwind that stops with an error after some frames has reached the outermost frame it
	 * can explain, as eu-stack shows; with no frame at all it is a failure. When the stack
	 * pointer is where a truncated core was cut, say so after the frames shown. */
	const struct core_thread *th = find_thread(c, tid);
	uint64_t sp = th->regs.r[ADAC_REG_RSP];
	size_t idx = seg_upper(c, sp);
	const struct core_seg *s = idx ? &c->segs[idx - 1] : NULL;
	if (!w.stopped && s && s->cut && sp - s->vaddr >= s->filesz && sp - s->vaddr - s->filesz < s->cut)
		return adac_fail(err, ADAC_E_READ, sp, "%s: the core was cut short of thread %llu's stack (0x%llx-0x%llx)",
		                 c->path, (unsigned long long)tid, (unsigned long long)(s->vaddr + s->filesz),
		                 (unsigned long long)(s->vaddr + s->filesz + s->cut));
	if (w.count == 0 && !w.stopped)
		return adac_fail(err, ADAC_E_UNSUPPORTED, 0, "%s: cannot unwind thread %llu: %s", c->path,
		                 (unsigned long long)tid, errmsg ? errmsg : "no frame");
	return 0;
}

/* ---- open ---- */

static void core_close(void *impl)
{
	struct core *c = impl;
	if (!c)
		return;
	if (c->dwfl)
		dwfl_end(c->dwfl);
	if (c->elf)
		elf_end(c->elf);
	if (c->fd >= 0)
		close(c->fd);
	for (size_t i = 0; i < c->nfiles; i++) {
		if (c->files[i].fd >= 0)
			close(c->files[i].fd);
		free(c->files[i].origin);
		free(c->files[i].found);
	}
	free(c->files);
	free(c->file_strings);
	free(c->maps);
	free(c->mods);
	free(c->segs);
	free(c->threads);
	free(c->path);
	free(c);
}

static int cmp_seg(const void *a, const void *b)
{
	const struct core_seg *x = a, *y = b;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static int cmp_map(const void *a, const void *b)
{
	const struct adac_file_map *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static const char *type_name(unsigned type)
{
	switch (type) {
	case ET_NONE: return "ET_NONE";
	case ET_REL: return "ET_REL";
	case ET_EXEC: return "ET_EXEC";
	case ET_DYN: return "ET_DYN";
	default: return NULL;
	}
}

/* One module per mapped file (adac_file_modules). A file never mapped at offset 0 has no header in
 * memory and is not a module. */
static int build_modules(struct core *c, struct adac_error *err)
{
	c->mods = calloc(c->nfiles ? c->nfiles : 1, sizeof *c->mods);
	uint64_t *base = calloc(c->nfiles ? c->nfiles : 1, 2 * sizeof *base);
	if (!c->mods || !base) {
		free(base);
		return adac_fail(err, ADAC_E_NOMEM, 0, "%s: out of memory reading the file mappings", c->path);
	}
	uint64_t *end = base + c->nfiles;
	adac_file_modules(c->maps, c->nmaps, c->nfiles, base, end);
	for (size_t f = 0; f < c->nfiles; f++) {
		c->files[f].base = base[f];
		c->files[f].end = end[f];
	}
	free(base);
	for (size_t f = 0; f < c->nfiles; f++) {
		if (c->files[f].base == UINT64_MAX)
			continue;
		struct adac_module *m = &c->mods[c->nmods++];
		m->path = (char *)c->files[f].path;
		m->base = c->files[f].base;
		m->end = c->files[f].end;
	}
	return 0; /* (adac_target_modules sorts them) */
}

/* NT_FILE: count, page size, count x {start, end, file offset in pages}, then count paths. */
static int parse_nt_file(struct core *c, const uint8_t *desc, size_t size, struct adac_error *err)
{
	struct adac_cursor cur = adac_cursor_make(desc, size);
	uint64_t count, page;
	if (adac_cursor_u64(&cur, &count) || adac_cursor_u64(&cur, &page))
		return adac_fail(err, ADAC_E_CORRUPT, 0, "%s: NT_FILE note is too short", c->path);
	if (count > ADAC_MAX_MAPPINGS)
		return adac_fail(err, ADAC_E_LIMIT, 0, "%s: NT_FILE lists %llu mappings, more than ADAC_MAX_MAPPINGS (%u)",
		                 c->path, (unsigned long long)count, ADAC_MAX_MAPPINGS);
	const uint8_t *entries = cur.p;
	if (adac_cursor_skip(&cur, (size_t)count * 24))
		return adac_fail(err, ADAC_E_CORRUPT, 0, "%s: NT_FILE note is too short for %llu mappings", c->path,
		                 (unsigned long long)count);
	size_t strings_len = adac_cursor_left(&cur);
	c->file_strings = malloc(strings_len + 1);
	c->maps = calloc(count ? count : 1, sizeof *c->maps);
	c->files = calloc(count ? count : 1, sizeof *c->files);
	if (!c->file_strings || !c->maps || !c->files)
		return adac_fail(err, ADAC_E_NOMEM, 0, "%s: out of memory reading the file mappings", c->path);
	memcpy(c->file_strings, cur.p, strings_len);
	c->file_strings[strings_len] = '\0';
	size_t at = 0;
	for (uint64_t i = 0; i < count; i++) {
		const char *path = c->file_strings + at;
		const char *nul = memchr(path, '\0', strings_len - at + 1);
		if (!nul || (size_t)(nul - c->file_strings) >= strings_len)
			return adac_fail(err, ADAC_E_CORRUPT, 0, "%s: NT_FILE note lacks the path of mapping %llu", c->path,
			                 (unsigned long long)i);
		at = (size_t)(nul - c->file_strings) + 1;
		uint64_t start = adac_get_u64(entries, (size_t)i * 24);
		uint64_t end = adac_get_u64(entries, (size_t)i * 24 + 8);
		uint64_t pgoff = adac_get_u64(entries, (size_t)i * 24 + 16);
		if (end <= start || (page && pgoff > UINT64_MAX / page))
			return adac_fail(err, ADAC_E_CORRUPT, 0, "%s: NT_FILE mapping %llu (%s) is malformed", c->path,
			                 (unsigned long long)i, path);
		c->maps[i] = (struct adac_file_map){start, end, pgoff * page, path, 0};
	}
	c->nmaps = (size_t)count;
	qsort(c->maps, c->nmaps, sizeof *c->maps, cmp_map);
	for (size_t i = 1; i < c->nmaps; i++)
		if (c->maps[i].start < c->maps[i - 1].end)
			return adac_fail(err, ADAC_E_CORRUPT, 0, "%s: NT_FILE mappings overlap at 0x%llx", c->path,
			                 (unsigned long long)c->maps[i].start);
	/* Equal paths are one file (one fd for the fallback, one module). */
	int64_t nfiles = adac_file_maps_number(c->maps, c->nmaps);
	if (nfiles < 0)
		return adac_fail(err, ADAC_E_NOMEM, 0, "%s: out of memory reading the file mappings", c->path);
	c->nfiles = (size_t)nfiles;
	for (size_t i = 0; i < c->nfiles; i++)
		c->files[i] = (struct mapped_file){.base = UINT64_MAX, .fd = -1};
	for (size_t i = 0; i < c->nmaps; i++)
		c->files[c->maps[i].file].path = c->maps[i].path;
	return build_modules(c, err);
}

static int parse_prstatus(struct core *c, const uint8_t *desc, size_t size, struct adac_error *err)
{
	if (size < PRSTATUS_MIN_SIZE)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "%s: NT_PRSTATUS note has %zu bytes, want at least %u", c->path, size,
		                 PRSTATUS_MIN_SIZE);
	if (c->nthreads >= ADAC_MAX_THREADS)
		return adac_fail(err, ADAC_E_LIMIT, 0, "%s: more than ADAC_MAX_THREADS (%u) threads", c->path,
		                 ADAC_MAX_THREADS);
	struct core_thread *grown = realloc(c->threads, (c->nthreads + 1) * sizeof *grown);
	if (!grown)
		return adac_fail(err, ADAC_E_NOMEM, 0, "%s: out of memory reading threads", c->path);
	c->threads = grown;
	struct core_thread *th = &c->threads[c->nthreads++];
	memset(th, 0, sizeof *th);
	th->tid = (uint32_t)adac_get_u32(desc, PRSTATUS_PID_OFF);
	th->cursig = (int16_t)adac_get_u16(desc, PRSTATUS_CURSIG_OFF);
	for (unsigned r = 0; r < ADAC_REG_COUNT; r++)
		th->regs.r[r] = adac_get_u64(desc, PRSTATUS_REGS_OFF + user_reg_slot[r] * 8u);
	return 0;
}

static int parse_notes(struct core *c, const GElf_Phdr *ph, uint64_t *note_bytes, struct adac_error *err)
{
	if (ph->p_filesz > ADAC_MAX_CORE_NOTE_BYTES - *note_bytes)
		return adac_fail(err, ADAC_E_LIMIT, 0, "%s: notes exceed ADAC_MAX_CORE_NOTE_BYTES (%u)", c->path,
		                 ADAC_MAX_CORE_NOTE_BYTES);
	*note_bytes += ph->p_filesz;
	Elf_Data *data = elf_getdata_rawchunk(c->elf, (int64_t)ph->p_offset, (size_t)ph->p_filesz, ELF_T_NHDR);
	if (!data)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "%s: cannot read the notes: %s", c->path, elf_errmsg(-1));
	size_t off = 0;
	GElf_Nhdr nh;
	size_t name_at, desc_at;
	/* gelf_getnote checks each note against the data size and advances by at least a header. */
	while (off < data->d_size && (off = gelf_getnote(data, off, &nh, &name_at, &desc_at)) > 0) {
		const uint8_t *base = data->d_buf;
		if (nh.n_namesz != 5 || memcmp(base + name_at, "CORE", 5) != 0)
			continue;
		if (nh.n_type == NT_PRSTATUS) {
			if (parse_prstatus(c, base + desc_at, nh.n_descsz, err))
				return -1;
		} else if (nh.n_type == NT_SIGINFO_TYPE && c->nthreads && nh.n_descsz >= SIGINFO_MIN_SIZE) {
			/* It describes the thread whose NT_PRSTATUS came last. */
			struct core_thread *th = &c->threads[c->nthreads - 1];
			const uint8_t *d = base + desc_at;
			th->siginfo = true;
			th->si_signo = (int32_t)adac_get_u32(d, SIGINFO_SIGNO_OFF);
			th->si_code = (int32_t)adac_get_u32(d, SIGINFO_CODE_OFF);
			th->si_addr = adac_get_u64(d, SIGINFO_ADDR_OFF);
		} else if (nh.n_type == NT_FILE && !c->have_files) {
			c->have_files = true;
			if (parse_nt_file(c, base + desc_at, nh.n_descsz, err))
				return -1;
		}
	}
	return 0;
}

static int load_segments(struct core *c, size_t phnum, struct adac_error *err)
{
	uint64_t nload = 0, note_bytes = 0, file_end = 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(c->elf, (int)i, &ph))
			return adac_fail(err, ADAC_E_CORRUPT, 0, "%s: cannot read program header %zu: %s", c->path, i,
			                 elf_errmsg(-1));
		if (ph.p_offset > UINT64_MAX - ph.p_filesz || (ph.p_type == PT_LOAD && ph.p_vaddr > UINT64_MAX - ph.p_memsz))
			return adac_fail(err, ADAC_E_CORRUPT, 0, "%s: program header %zu is out of range", c->path, i);
		if (ph.p_offset + ph.p_filesz > file_end)
			file_end = ph.p_offset + ph.p_filesz;
		if (ph.p_type == PT_LOAD)
			nload++;
	}
	/* Checked up front: a truncated core would otherwise fail later with a misleading read error. */
	if (file_end > c->size && c->strict)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "%s: core file is truncated (%llu of %llu bytes)", c->path,
		                 (unsigned long long)c->size, (unsigned long long)file_end);
	c->segs = calloc(nload ? nload : 1, sizeof *c->segs);
	if (!c->segs)
		return adac_fail(err, ADAC_E_NOMEM, 0, "%s: out of memory reading segments", c->path);
	/* Best effort: what lies past the end of the file is not in the core (reads of it fail, or come
	 * from the mapped file like any page the core lacks). */
	uint64_t lost = 0;
	unsigned cut = 0, notes_cut = 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		gelf_getphdr(c->elf, (int)i, &ph);
		uint64_t avail = ph.p_offset < c->size ? c->size - ph.p_offset : 0, seg_cut = 0;
		if (ph.p_filesz > avail && (ph.p_type == PT_LOAD || ph.p_type == PT_NOTE)) {
			seg_cut = ph.p_filesz - avail;
			lost += seg_cut;
			cut += ph.p_type == PT_LOAD;
			notes_cut += ph.p_type == PT_NOTE;
			ph.p_filesz = avail;
		}
		if (ph.p_type == PT_LOAD && ph.p_memsz > 0) {
			uint64_t filesz = ph.p_filesz < ph.p_memsz ? ph.p_filesz : ph.p_memsz;
			c->segs[c->nsegs++] = (struct core_seg){ph.p_vaddr, ph.p_memsz, ph.p_offset, filesz, seg_cut};
		} else if (ph.p_type == PT_NOTE && ph.p_filesz > 0) {
			if (parse_notes(c, &ph, &note_bytes, err))
				return -1;
		}
	}
	if (file_end > c->size)
		snprintf(c->warning, sizeof c->warning,
		         "%s: core file is truncated (%llu of %llu bytes): %u of %llu memory segments lack %llu bytes%s; "
		         "reads there fail", c->path, (unsigned long long)c->size, (unsigned long long)file_end, cut,
		         (unsigned long long)nload, (unsigned long long)lost, notes_cut ? ", the notes are cut" : "");
	qsort(c->segs, c->nsegs, sizeof *c->segs, cmp_seg);
	/* Overlaps would make the lookup ambiguous; the earlier segment yields to the later one. */
	for (size_t i = 1; i < c->nsegs; i++) {
		struct core_seg *prev = &c->segs[i - 1];
		if (prev->vaddr + prev->memsz > c->segs[i].vaddr) {
			prev->memsz = c->segs[i].vaddr - prev->vaddr;
			if (prev->filesz > prev->memsz)
				prev->filesz = prev->memsz;
		}
	}
	return 0;
}

static int check_header(struct core *c, size_t *phnum, struct adac_error *err)
{
	if (elf_kind(c->elf) != ELF_K_ELF)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "%s: not an ELF file", c->path);
	GElf_Ehdr eh;
	if (!gelf_getehdr(c->elf, &eh))
		return adac_fail(err, ADAC_E_CORRUPT, 0, "%s: not an ELF file (%s)", c->path, elf_errmsg(-1));
	if (eh.e_type != ET_CORE) {
		const char *t = type_name(eh.e_type);
		if (t)
			return adac_fail(err, ADAC_E_BAD_ARG, 0, "%s: not an ELF core file (%s)", c->path, t);
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "%s: not an ELF core file (type %u)", c->path, eh.e_type);
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_X86_64)
		return adac_fail(err, ADAC_E_UNSUPPORTED, 0, "%s: not an x86-64 core file (class %u, machine %u)", c->path,
		                 eh.e_ident[EI_CLASS], eh.e_machine);
	if (elf_getphdrnum(c->elf, phnum) != 0)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "%s: cannot read the program headers: %s", c->path, elf_errmsg(-1));
	if (*phnum > ADAC_MAX_CORE_SEGMENTS)
		return adac_fail(err, ADAC_E_LIMIT, 0, "%s: %zu program headers, more than ADAC_MAX_CORE_SEGMENTS (%u)", c->path,
		                 *phnum, ADAC_MAX_CORE_SEGMENTS);
	if (eh.e_phoff > c->size || *phnum > (c->size - eh.e_phoff) / sizeof(Elf64_Phdr))
		return adac_fail(err, ADAC_E_CORRUPT, 0, "%s: core file is truncated (%llu bytes, program headers past the end)",
		                 c->path, (unsigned long long)c->size);
	return 0;
}

/* The core at path, checked and its segments loaded; NULL with err. */
static struct core *core_open(const char *core_path, bool strict, struct adac_error *err)
{
	struct core *c = calloc(1, sizeof *c);
	if (!c || !(c->path = strdup(core_path))) {
		free(c);
		adac_fail(err, ADAC_E_NOMEM, 0, "%s: out of memory", core_path);
		return NULL;
	}
	c->strict = strict;
	c->fd = open(core_path, O_RDONLY | O_CLOEXEC);
	if (c->fd < 0) {
		adac_fail(err, ADAC_E_IO, 0, "%s: cannot open: %s", core_path, strerror(errno));
		goto fail;
	}
	struct stat st;
	if (fstat(c->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		adac_fail(err, ADAC_E_BAD_ARG, 0, "%s: not a regular file", core_path);
		goto fail;
	}
	c->size = (uint64_t)st.st_size;
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	elf_version(EV_CURRENT);
	c->elf = elf_begin(c->fd, ELF_C_READ_MMAP, NULL);
	if (!c->elf) {
		adac_fail(err, ADAC_E_BAD_ARG, 0, "%s: not an ELF file (%s)", core_path, elf_errmsg(-1));
		goto fail;
	}
	size_t phnum;
	if (check_header(c, &phnum, err) || load_segments(c, phnum, err))
		goto fail;
	return c;
fail:
	core_close(c);
	return NULL;
}

/* reopen: the same file, which must not have changed in between. */
static void *core_reopen(void *impl, struct adac_error *err)
{
	const struct core *c = impl;
	struct core *n = core_open(c->path, c->strict, err);
	if (n && (n->dev != c->dev || n->ino != c->ino || n->size != c->size)) {
		adac_fail(err, ADAC_E_IO, 0, "%s: the file changed since it was opened", c->path);
		core_close(n);
		return NULL;
	}
	return n;
}

static const struct adac_target_ops core_ops = {
	.kind = "core",
	.read = core_read,
	.read_ahead = 16,
	.read_concurrent = core_read_concurrent,
	.view = core_view,
	.view_maps = true,
	.unview = core_unview,
	.modules = core_modules,
	.threads = core_threads,
	.regs = core_regs,
	.thread_of_process_tid = core_thread_of_process_tid,
	.frames = core_frames,
	.selected_thread = core_selected_thread,
	.set_symbols = core_set_symbols,
	.origin = core_origin,
	.module_file = core_module_file,
	.reopen = core_reopen,
	.close = core_close,
};

struct adac_target *adac_target_open_core_ex(const char *core_path, struct adac_core_options *opt,
                                             struct adac_error *err)
{
	if (opt)
		opt->warning[0] = '\0';
	struct core *c = core_open(core_path, opt && opt->strict, err);
	if (!c)
		return NULL;
	if (opt)
		memcpy(opt->warning, c->warning, sizeof opt->warning);
	return adac_target_new(&core_ops, c, err);
}

struct adac_target *adac_target_open_core(const char *core_path, struct adac_error *err)
{
	return adac_target_open_core_ex(core_path, NULL, err);
}
