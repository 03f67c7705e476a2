/* target.h - the one interface every analysis reads through: memory, modules, symbols, threads.
 *
 * A backend (target_core.c, target_pid.c, target_mem.c, and the LLDB backend in plugin/lldb/)
 * fills a `struct adac_target_ops`; dac/target/target.c wraps it with a block cache and typed reads. */
#ifndef ADAC_TARGET_H
#define ADAC_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/limits.h"

struct adac_module {
	char *path;                       /* file path as the target names it ("" if unknown) */
	uint64_t base;                    /* address of the mapping at file offset 0 (ELF header) */
	uint64_t end;                     /* end of its mappings from base on (exclusive; target.h adac_file_modules) */
	uint8_t build_id[ADAC_BUILD_ID_MAX];
	size_t build_id_len;              /* 0 when the module has none or it could not be read */
};

/* Register numbers follow ICorDebugInfo::RegNum for AMD64 (what debug info uses), then extras. */
enum adac_reg {
	ADAC_REG_RAX, ADAC_REG_RCX, ADAC_REG_RDX, ADAC_REG_RBX, ADAC_REG_RSP, ADAC_REG_RBP,
	ADAC_REG_RSI, ADAC_REG_RDI, ADAC_REG_R8, ADAC_REG_R9, ADAC_REG_R10, ADAC_REG_R11,
	ADAC_REG_R12, ADAC_REG_R13, ADAC_REG_R14, ADAC_REG_R15, ADAC_REG_RIP, ADAC_REG_FS_BASE,
	ADAC_REG_COUNT
};

struct adac_regs {
	uint64_t r[ADAC_REG_COUNT];
};

struct adac_thread {
	uint64_t tid;      /* OS thread id (LWP) */
	uint32_t index;    /* 1-based index as the debugger numbers threads */
	char name[64];     /* thread name if known, else "" */
	/* Why the thread stopped, in LLDB's words ("signal SIGABRT"), when the backend knows and it is
	 * worth saying (a core's signalled thread, LLDB's stop description); else "". */
	char stop_reason[96];
	int signo;         /* the signal it stopped for (Linux x86-64 numbers), 0 when none or not a signal */
};

/* One physical frame, as the backend's unwinder sees it. */
struct adac_frame {
	uint64_t pc;
	uint64_t sp;
	uint64_t fp;
	const char *module;    /* module basename or NULL */
	const char *symbol;    /* symbol name or NULL */
	uint64_t sym_offset;   /* pc - symbol start, valid when symbol != NULL */
	const char *file;      /* source file or NULL */
	uint32_t line;         /* 0 if unknown */
};

struct adac_symbols;  /* target/symbols.h: where files the target lacks are looked for */

typedef int (*adac_module_cb)(void *ctx, const struct adac_module *m);
typedef int (*adac_thread_cb)(void *ctx, const struct adac_thread *th);
typedef int (*adac_frame_cb)(void *ctx, const struct adac_frame *f);

/* Bytes of the target lent in place (ops->view): bytes[0, len) are the target's from the address
 * asked for. map and map_len are the backend's. */
struct adac_target_view {
	const uint8_t *bytes;
	size_t len;
	void *map;
	size_t map_len;
};

/* Backend contract. Every member says whether it may be NULL, what it returns and how it fails.
 * Callbacks return non-zero to stop the enumeration early (that is not an error). */
struct adac_target_ops {
	const char *kind;  /* "core", "pid", "lldb", "memory" */

	/* Required. Reads up to len bytes at addr. Returns how many bytes were read from the start of
	 * the range (fewer than len: the byte after them is not readable), or -1 with err set when the
	 * backend itself failed. Reading nothing is 0, not an error. Readability must be uniform within
	 * each 4 KiB page (true of processes and cores): the cache remembers it per page. */
	int64_t (*read)(void *impl, uint64_t addr, void *buf, size_t len, struct adac_error *err);

	/* Optional (0: none), with read_concurrent. Pages worth reading past a cache miss, for a
	 * backend that reads in bulk for little more than a page (a core file: one pread for the blocks
	 * a walk of nearby objects needs next, not one per page; a live process: one process_vm_readv).
	 * They are read through read_concurrent: only the backend's own bytes, never a file or a
	 * server it would go to. */
	unsigned read_ahead;

	/* Optional. As read, but safe on several threads at once, beside calls in progress (the heap
	 * walk's parts read through it). It may get fewer bytes than read would (bytes only a core's
	 * mapped files hold, a live process where process_vm_readv is refused): the caller then reads
	 * the range through read. */
	size_t (*read_concurrent)(void *impl, uint64_t addr, void *buf, size_t len);

	/* Optional, with unview. Lends the backend's own bytes from addr in place, read-only (a core
	 * file's pages, mapped): up to len of them, in v. 0, or -1 when it has none there (read them).
	 * Safe on several threads at once, beside calls in progress. */
	int (*view)(void *impl, uint64_t addr, size_t len, struct adac_target_view *v);
	void (*unview)(void *impl, struct adac_target_view *v);
	/* With view: whether a view is a new mapping (a core file's pages), not bytes already in this
	 * process's memory (a released process's copy). Each page of a new mapping costs a fault the
	 * first time it is read, on a virtual machine more than reading it into a buffer would: a walk
	 * that reads every byte once (the heap's) reads such a backend instead. */
	bool view_maps;

	/* Required. Calls cb once per loaded module. 0, or -1 with err set. build_id may be left empty:
	 * target.c fills it from the ELF notes in memory. */
	int (*modules)(void *impl, adac_module_cb cb, void *ctx, struct adac_error *err);

	/* Optional (NULL: the generic .dynsym lookup of elf_symbols.c over adac_read is used).
	 * 0 with *addr set, or -1 with ADAC_E_NOT_FOUND or another code. */
	int (*find_symbol)(void *impl, const struct adac_module *m, const char *name, uint64_t *addr,
	                   struct adac_error *err);

	/* Required. Calls cb once per thread, in the debugger's order. 0, or -1 with err set. */
	int (*threads)(void *impl, adac_thread_cb cb, void *ctx, struct adac_error *err);

	/* Required. Registers of thread tid (innermost frame). 0, or -1 with err set. */
	int (*regs)(void *impl, uint64_t tid, struct adac_regs *regs, struct adac_error *err);

	/* Optional. Physical frames of thread tid, innermost first. 0, or -1 with err set. */
	int (*frames)(void *impl, uint64_t tid, adac_frame_cb cb, void *ctx, struct adac_error *err);

	/* Optional. A value that changes whenever the target ran since it was last asked (LLDB's stop
	 * id). When it changes, every cache of target data is dropped. NULL: the target never runs. */
	uint64_t (*stop_id)(void *impl);

	/* Optional. The thread the user has selected (LLDB's selected thread; a core's: the thread that
	 * got the fatal signal), or 0 when there is no such notion; commands default to it. */
	uint64_t (*selected_thread)(void *impl);

	/* Optional. Tells the backend where to look for files its target lacks (NULL: nowhere); the
	 * symbols stay valid until the next call or close. */
	void (*set_symbols)(void *impl, struct adac_symbols *symbols);

	/* Optional. Where the bytes at addr come from when the backend took them from somewhere other
	 * than the target or the file at its recorded path ("nested.dll: /syms/nested.dll from the
	 * symbol path"); NULL otherwise. Valid until close. */
	const char *(*origin)(void *impl, uint64_t addr);

	/* Optional. Where this machine opens the file the target names path, when that is another
	 * path: a live process in a mount namespace of its own (a container) sees its files under
	 * /proc/<pid>/root (proc_ns.h). 0 with buf (size bytes) set; -1: path as it is. */
	int (*local_path)(void *impl, const char *path, char *buf, size_t size);

	/* Optional. The file on this machine the backend reads the bytes of the ELF module whose
	 * offset-0 mapping starts at base from, when the target lacks them: a core's, at the module's
	 * recorded path or, read on another machine, the one the symbol path gave (matched by
	 * identity). 0 with buf (size bytes) set; -1: none, or not an ELF module. */
	int (*module_file)(void *impl, uint64_t base, char *buf, size_t size);

	/* Optional. The id (as threads gives it) of the thread the process itself knows as process_tid,
	 * the id the runtime records (Thread.OSId), with the bounds of its stack the runtime records
	 * (stack_limit < stack_base; 0 when not known): another for a process in a pid namespace of its
	 * own (a container) read from the host, live (proc_ns.h) or in a core made there. 0 when no
	 * thread of the target has it. NULL: the ids are the same. */
	uint64_t (*thread_of_process_tid)(void *impl, uint64_t process_tid, uint64_t stack_limit, uint64_t stack_base);

	/* Optional, with load_symbols. A path for the next symbol file, new on each call (debuggers
	 * cache modules by path) into buf (size bytes). 0, or -1 with err set. */
	int (*symbols_path)(void *impl, char *buf, size_t size, struct adac_error *err);

	/* Optional. Loads the symbol file at path (an ELF whose addresses are the code's own,
	 * view/managed_symbols.h) into the debugger at those addresses, replacing (and deleting) the one it
	 * loaded before. When that one has the same bytes, it stays loaded (the debugger keeps what it
	 * read and the frames it unwound), path's file is deleted and path (size bytes) is set to the
	 * kept one. 0, or -1 with err set. NULL: the front end has no debugger to load it into. */
	int (*load_symbols)(void *impl, char *path, size_t size, struct adac_error *err);

	/* Optional. Another impl over the same core or process, with state of its own, for a thread of
	 * its own (the listing's helpers, view/pending_list.h). NULL with err when it cannot be opened
	 * again (it changed, it is gone). NULL op: the target cannot be opened twice (a live process:
	 * one tracer at a time; a debugger's process). */
	void *(*reopen)(void *impl, struct adac_error *err);

	/* Optional. Lets the target run about ms milliseconds and stops it again (a live process the
	 * backend holds, with any threads it started meanwhile; a released process's copy is taken
	 * again). 0, or -1 with err (ADAC_E_UNSUPPORTED when this target must not run: a process its
	 * user had stopped, a copy another thread reads). */
	int (*run_briefly)(void *impl, unsigned ms, struct adac_error *err);

	/* Optional. Frees impl. */
	void (*close)(void *impl);
};

struct adac_target;

/* Wraps a backend. Takes ownership of impl (ops->close frees it). NULL with err on failure. */
struct adac_target *adac_target_new(const struct adac_target_ops *ops, void *impl, struct adac_error *err);
void adac_target_close(struct adac_target *t);
/* A second target over t's core or copy of a process (ops->reopen), with the same symbols but
 * caches of its own (a block cache of 1 MiB, not 8): what a thread other than t's reads through.
 * Close it before t (a process's copy is t's). NULL with err (ADAC_E_UNSUPPORTED when t's backend cannot). */
struct adac_target *adac_target_reopen(struct adac_target *t, struct adac_error *err);

/* The path to open the file the target names path by (ops->local_path): buf, or path itself. */
const char *adac_target_local_path(struct adac_target *t, const char *path, char *buf, size_t size);

/* Where this machine has the file of module m: the one the backend reads its bytes from
 * (ops->module_file: a core's ELF modules), else adac_target_local_path's (a container's files:
 * m->path when the process sees this machine's). */
const char *adac_target_module_file(struct adac_target *t, const struct adac_module *m, char *buf, size_t size);
/* The target's id of the thread the process knows as process_tid, whose stack the runtime records
 * at [stack_limit, stack_base) (0, 0: not known) (ops->thread_of_process_tid): process_tid itself
 * when the backend does not tell them apart; 0 when no thread has it. */
uint64_t adac_target_thread_of_process_tid(struct adac_target *t, uint64_t process_tid, uint64_t stack_limit,
                                           uint64_t stack_base);

/* For a backend over a live process on this machine (its thread_of_process_tid): each thread of
 * process pid, by this machine's id, with the id the process knows it by (proc_ns.h), in *ids
 * (malloc'd; *count of them, at most ADAC_MAX_THREADS). 0, or -1 when its threads cannot be listed
 * or memory runs out. */
struct adac_local_tid {
	uint64_t tid, process_tid;
};
int adac_local_process_tids(int pid, struct adac_local_tid **ids, size_t *count);
/* Whether process pid is in another pid namespace than this process (its threads' ids there are
 * not this machine's); false when it cannot be told. */
bool adac_local_other_pid_ns(int pid);

/* For a backend over a live process on this machine (its local_path): where this machine opens
 * the file process pid names path, when the process sees another file system (a container:
 * /proc/<pid>/root<path>, target/proc_ns.h). 0 with buf set; -1: path as it is. */
int adac_local_process_path(int pid, const char *path, char *buf, size_t size);

/* For a backend listing modules from file mappings (a core's NT_FILE, /proc/<pid>/maps): a mapping
 * of bytes offset.. of the file at path at [start, end), file its number (adac_file_maps_number). */
struct adac_file_map {
	uint64_t start, end, offset;
	const char *path;
	size_t file;
};
/* Numbers the files of n mappings: equal paths, equal numbers, 0.. in the order of the paths. The
 * number of files, or -1 when memory runs out. */
int64_t adac_file_maps_number(struct adac_file_map *maps, size_t n);
/* The module of each of nfiles files from their mappings (n of them, sorted by start): based at the
 * file's lowest offset-0 mapping (base[f] UINT64_MAX when it has none: no module), ending with the
 * last of the file's mappings that follow it before another file's. The runtime maps an assembly
 * twice (as an image and flat), often far apart: its module is not the span between them, which
 * holds other modules. */
void adac_file_modules(const struct adac_file_map *maps, size_t n, size_t nfiles, uint64_t *base, uint64_t *end);

/* For a backend over a live process on this machine: the modules of process pid from
 * /proc/<pid>/maps (target/proc_maps.c), one per mapped file (adac_file_modules) in no order
 * (adac_target_modules sorts), paths as the process names them, build ids unread.
 * 0 with *mods (free with adac_local_modules_free; none: NULL and 0), or -1 with err (the process
 * has exited, more than ADAC_MAX_MAPPINGS mappings, out of memory). */
int adac_local_process_modules(int pid, struct adac_module **mods, size_t *count, struct adac_error *err);
void adac_local_modules_free(struct adac_module *mods, size_t count);

/* For backends reading a local file or process (a core, a mapped file, /proc/<pid>/mem): len
 * bytes at offset off of fd, interrupted and short reads retried. The bytes read from off on
 * (fewer than len: the end of the file, or the next byte could not be read), or -1 with errno when
 * not even the first could. */
int64_t adac_pread_full(int fd, void *buf, size_t len, uint64_t off);

/* Backends shipped in dac/. */
struct adac_target *adac_target_open_core(const char *core_path, struct adac_error *err);
struct adac_target *adac_target_open_pid(int pid, struct adac_error *err);
/* ADAC_PID_RELEASE: copy the process's readable memory, its threads' registers and its modules
 * while it is held, then release it: the analysis reads the copy (threads unwound from it too),
 * and the process is stopped only for the copy. */
#define ADAC_PID_RELEASE 1u
struct adac_target *adac_target_open_pid_ex(int pid, unsigned flags, struct adac_error *err);

struct adac_core_options {
	bool strict;   /* refuse a damaged core (truncated: segments past the end of the file) */
	/* Out: when the core opened best-effort, one line saying what is missing; else "". */
	char warning[ADAC_ERROR_MSG_MAX];
};
/* adac_target_open_core with options (NULL: the defaults, best-effort). */
struct adac_target *adac_target_open_core_ex(const char *core_path, struct adac_core_options *opt,
                                             struct adac_error *err);

/* Where to look for files the target lacks: assemblies, PDBs, native binaries and debug files. The
 * target takes s over (and frees the previous one); NULL: nowhere but their recorded paths. */
void adac_target_set_symbols(struct adac_target *t, struct adac_symbols *s);
struct adac_symbols *adac_target_symbols(const struct adac_target *t);
/* How many times the symbols were set: what was looked for through them (a kept runtime's PDBs)
 * is looked for again when this changed. */
uint64_t adac_target_symbols_generation(const struct adac_target *t);
/* ops->origin, or NULL. */
const char *adac_target_origin(struct adac_target *t, uint64_t addr);

const char *adac_target_kind(const struct adac_target *t);

/* Pointer size of the target (8 until a descriptor says otherwise). */
unsigned adac_target_ptr_size(const struct adac_target *t);
void adac_target_set_ptr_size(struct adac_target *t, unsigned ptr_size);

/* All-or-nothing read through the block cache: fills all len bytes or fails with ADAC_E_READ
 * naming the address, the length and how many bytes were obtained. */
int adac_read(struct adac_target *t, uint64_t addr, void *buf, size_t len, struct adac_error *err);

/* Short-read variant for scanners and string readers: returns the bytes read from the start. */
size_t adac_read_upto(struct adac_target *t, uint64_t addr, void *buf, size_t len);

int adac_read_u8(struct adac_target *t, uint64_t addr, uint8_t *out, struct adac_error *err);
int adac_read_u16(struct adac_target *t, uint64_t addr, uint16_t *out, struct adac_error *err);
int adac_read_u32(struct adac_target *t, uint64_t addr, uint32_t *out, struct adac_error *err);
int adac_read_u64(struct adac_target *t, uint64_t addr, uint64_t *out, struct adac_error *err);
/* A target pointer (4 or 8 bytes per adac_target_ptr_size), zero-extended. */
int adac_read_ptr(struct adac_target *t, uint64_t addr, uint64_t *out, struct adac_error *err);

/* ops->read_concurrent: whether the target has it, and a read through it (safe on several
 * threads; no cache, no stop check): the bytes read from the start, 0 without it. */
bool adac_target_concurrent_reads(const struct adac_target *t);
size_t adac_read_concurrent(struct adac_target *t, uint64_t addr, void *buf, size_t len);
/* ops->view: the target's bytes from addr in place (up to len; safe on several threads; no stop
 * check): true with v set, false when the backend cannot lend them (read them). Each view is
 * given back with adac_target_unview (a cleared view may be given back too). */
bool adac_target_view(struct adac_target *t, uint64_t addr, size_t len, struct adac_target_view *v);
void adac_target_unview(struct adac_target *t, struct adac_target_view *v);
/* ops->view_maps: a view is a new mapping, not memory the backend holds already. */
bool adac_target_view_maps(const struct adac_target *t);

/* Reads a NUL-terminated string of at most max bytes into a new heap buffer (caller frees). */
char *adac_read_cstring(struct adac_target *t, uint64_t addr, size_t max, struct adac_error *err);

/* Modules, snapshot per stop (the array stays valid until the target runs or closes). */
int adac_target_modules(struct adac_target *t, const struct adac_module **mods, size_t *count,
                        struct adac_error *err);
/* The module whose path's basename equals name, or NULL. */
const struct adac_module *adac_target_find_module(struct adac_target *t, const char *basename,
                                                  struct adac_error *err);
/* The module containing addr, or NULL. */
const struct adac_module *adac_target_module_at(struct adac_target *t, uint64_t addr);

/* Exported (dynamic) symbol of a module. */
int adac_target_find_symbol(struct adac_target *t, const struct adac_module *m, const char *name,
                            uint64_t *addr, struct adac_error *err);

/* Threads, snapshot per stop. */
int adac_target_threads(struct adac_target *t, const struct adac_thread **threads, size_t *count,
                        struct adac_error *err);
int adac_target_regs(struct adac_target *t, uint64_t tid, struct adac_regs *regs, struct adac_error *err);
/* A register's name ("rax" .. "r15", "rip", "fs_base"), "?" past ADAC_REG_COUNT. */
const char *adac_reg_name(unsigned reg);
/* Physical frames; ADAC_E_UNSUPPORTED when the backend cannot unwind. */
int adac_target_frames(struct adac_target *t, uint64_t tid, adac_frame_cb cb, void *ctx,
                       struct adac_error *err);

/* The selected thread's tid, or 0 (see ops->selected_thread). */
uint64_t adac_target_selected_thread(struct adac_target *t);

/* Whether the front end can load symbol files; where to write the next one, and loading it
 * (ops->symbols_path and ops->load_symbols; ADAC_E_UNSUPPORTED when it cannot). */
bool adac_target_can_load_symbols(const struct adac_target *t);
int adac_target_symbols_path(struct adac_target *t, char *buf, size_t size, struct adac_error *err);
int adac_target_load_symbols(struct adac_target *t, char *path, size_t size, struct adac_error *err);
/* Whether the front end has loaded one: its debugger then names managed code by itself. */
bool adac_target_symbol_file_loaded(const struct adac_target *t);
/* What the file loaded last was made of (a digest, view/managed_symbols.h) and what making it said
 * (copied): a maker that would make the same file keeps it and says that again. The text of the
 * file loaded last for that digest, else NULL (none noted, another digest, or loaded since). */
void adac_target_note_symbol_file(struct adac_target *t, const uint64_t digest[2], const char *said);
const char *adac_target_symbol_file_noted(const struct adac_target *t, const uint64_t digest[2]);

/* What the user selected with `async frame select`, kept per target between commands and dropped
 * when the target runs (the chain may be gone). */
struct adac_selection {
	bool valid;
	uint64_t chain_head;   /* head Continuation of the chain the frame belongs to */
	uint64_t continuation; /* the selected frame's Continuation */
	uint32_t frame;        /* its async frame number, as `bt` printed it */
};
struct adac_selection *adac_target_selection(struct adac_target *t);

/* A front end that keeps the target's runtime (runtime/runtime.h) across commands gives it
 * through a source: opened on first use, refreshed when the target ran since it was last given,
 * closed by the front end before the target. NULL with err when the target has no runtime. */
struct adac_runtime;
typedef struct adac_runtime *(*adac_runtime_source)(struct adac_target *t, struct adac_error *err);
/* Commands run on t then take source's runtime (adac_runtime_acquire) rather than open one each;
 * NULL (the default): each opens its own. */
void adac_target_set_runtime_source(struct adac_target *t, adac_runtime_source source);
adac_runtime_source adac_target_runtime_source(const struct adac_target *t);

/* ops->run_briefly, then drops every cache of target data (the target ran). -1 with err
 * (ADAC_E_UNSUPPORTED: the backend cannot, or this target must not run). */
int adac_target_run_briefly(struct adac_target *t, unsigned ms, struct adac_error *err);
/* Whether the backend has run_briefly (it may still refuse), and how many times it ran the target. */
bool adac_target_can_run(const struct adac_target *t);
unsigned adac_target_runs(const struct adac_target *t);

/* Drops every cache of target data (call when the target resumed). Also done automatically when
 * ops->stop_id changes. */
void adac_target_invalidate(struct adac_target *t);

/* Counters for scripts/bench. */
struct adac_read_stats {
	uint64_t backend_reads;    /* calls into ops->read */
	uint64_t backend_bytes;    /* bytes asked of ops->read */
	uint64_t blocks_fetched;   /* distinct cache blocks loaded (pages touched) */
	uint64_t cache_hits;       /* block lookups served from the cache */
	uint64_t reads;            /* adac_read/adac_read_upto calls */
};
void adac_target_stats(const struct adac_target *t, struct adac_read_stats *out);
void adac_target_reset_stats(struct adac_target *t);

#endif
