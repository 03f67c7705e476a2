/* target_lldb.c - the "lldb" data target: dac/'s backend contract (target.h) over LLDB's process,
 * live or a core, through the SB shim (shim.h); one per process, kept with the process's runtime
 * while the process stays stopped. */
#include "target_lldb.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "asyncdac.h"
#include "shim.h"
#include "shim_symbols.h"
#include "symbols_setting.h"

/* A thread's stack as asyncdac's frame provider got it from LLDB's unwinder (see
 * adac_lldb_target_keep_stack). */
struct kept {
	uint64_t tid;
	struct adac_frame *frames;   /* strings in `text` */
	size_t n;
	char *text;
	struct adac_regs regs;
	bool has_regs;
};

/* A module of a process in a container that LLDB was shown (or could not be). */
struct shown {
	uint64_t base;
	char *path;
};

/* A process's backend. */
struct backend {
	struct adac_lldb_process *p;
	struct kept *kept;           /* the stacks kept during stop kept_stop */
	size_t nkept, capkept;
	uint64_t kept_stop;
	uint64_t building;           /* the thread whose frames LLDB is building (the provider's): its
	                              * kept stack is the one, and LLDB must not be asked */
	uint64_t building_frames;    /* ... and the provider's input frames (an SBFrameList), 0 if none */
	char *symbols_loaded;        /* the symbol file loaded into this process's target, or NULL */
	int mem_fd;                  /* /proc/<pid>/mem of a live process on this machine; -1: read
	                              * through LLDB; -2: not opened yet */
	uint64_t stop;               /* the process's stop id, read when the plugin was entered: the
	                              * process cannot run while the plugin runs, and asking LLDB at
	                              * every read cost a third of `async symbols` */
	int mount_ns;                /* a live local process's file system: 0 not looked at yet, 1
	                              * this machine's, 2 its own (a container: lldb_modules) */
	int pid_ns;                  /* a live local process's pid namespace: 0 not looked at yet, 1
	                              * this machine's, 2 its own (a container: thread ids differ) */
	struct adac_local_tid *tids; /* pid_ns 2: its threads' ids here and in it, listed at stop tids_stop */
	size_t ntids;
	uint64_t tids_stop;
	struct adac_target *core;    /* a core file: asyncdac's own reader of it (core_of), NULL if none */
	int core_state;              /* 0: not looked at yet; 1: core is open; -1: not a core, or it did
	                              * not open */
	char *symbols_spec;          /* the symbol path last set (lldb_set_symbols), NULL: none */
	struct shown *shown;         /* a container's, a core's: the modules shown to LLDB
	                              * (adac_lldb_target_show_modules) */
	size_t nshown;
	uint64_t shown_stop, shown_symbols; /* ... at this stop, with the symbol path of this generation */
};

static void drop_kept(struct backend *b)
{
	for (size_t i = 0; i < b->nkept; i++) {
		free(b->kept[i].frames);
		free(b->kept[i].text);
	}
	b->nkept = 0;
}

/* The stack kept for thread tid during the current stop, or NULL. */
static struct kept *kept_stack(struct backend *b, uint64_t tid)
{
	if (b->kept_stop != b->stop)
		drop_kept(b);
	for (size_t i = 0; i < b->nkept; i++)
		if (b->kept[i].tid == tid)
			return &b->kept[i];
	return NULL;
}

/* The stack of thread tid as LLDB's unwinder found it, when LLDB shows asyncdac's frames instead
 * (the provider kept the unwinder's); NULL when LLDB shows the unwinder's own frames (no provider,
 * or it passed them through). */
static struct kept *unwound_stack(struct backend *b, uint64_t tid)
{
	if (tid != b->building && !adac_lldb_process_frames_replaced(b->p, tid))
		return NULL;
	return kept_stack(b, tid);
}

/* Reads all of [addr, addr+len) of a live local process from /proc/<pid>/mem: the same bytes
 * LLDB gives, without a round trip to lldb-server per read (at each stop LLDB's memory cache is
 * empty). Not where LLDB may have written a breakpoint's trap: LLDB hides those, the file does not.
 * false: read through LLDB. */
static bool read_direct(struct backend *b, uint64_t addr, void *buf, size_t len)
{
	if (b->mem_fd == -2) {
		char path[64];
		uint64_t pid = adac_lldb_process_local_pid(b->p);
		snprintf(path, sizeof path, "/proc/%llu/mem", (unsigned long long)pid);
		b->mem_fd = pid ? open(path, O_RDONLY | O_CLOEXEC) : -1;  /* -1 too when not allowed */
	}
	if (b->mem_fd < 0 || len == 0)
		return false;
	/* Listed at each read: a breakpoint can be set without the process running. */
	uint64_t sites[64];
	size_t n = adac_lldb_process_breakpoint_sites(b->p, sites, sizeof sites / sizeof sites[0]);
	if (n > sizeof sites / sizeof sites[0])
		return false;
	for (size_t i = 0; i < n; i++)
		if (sites[i] < addr + len && sites[i] + 16 > addr)  /* a trap: 16 bytes at most (int3: 1) */
			return false;
	return adac_pread_full(b->mem_fd, buf, len, addr) == (int64_t)len;
}

/* The core's reader gets its own copy of the symbol path. */
static void core_symbols(struct backend *b)
{
	struct adac_error ignored = {0}; /* (the path was parsed once already: lldb_set_symbols) */
	adac_target_set_symbols(b->core, b->symbols_spec ? adac_symbols_new(b->symbols_spec, &ignored) : NULL);
}

/* LLDB reads a core as the core holds it, and the files of its modules that LLDB found on this
 * machine. A core read on another machine often has neither: gcore leaves out every page a file
 * backs, and the files are not at their recorded paths (LLDB then lists no module at all). So a
 * core file is also opened with asyncdac's own reader, the CLI's: its modules are the ones the
 * core records, its threads are matched to the runtime's records by stack too, and what the core
 * lacks comes from the symbol path, matched by identity. NULL for a live process, or a core that
 * reader does not open (LLDB's reads alone then). */
static struct adac_target *core_of(struct backend *b)
{
	if (b->core_state == 0) {
		char path[4096];
		struct adac_error ignored = {0};
		if (adac_lldb_process_core_file(b->p, path, sizeof path) == 0)
			b->core = adac_target_open_core(path, &ignored);
		b->core_state = b->core ? 1 : -1;
		if (b->core)
			core_symbols(b);
	}
	return b->core;
}

static void lldb_set_symbols(void *impl, struct adac_symbols *symbols)
{
	struct backend *b = impl;
	free(b->symbols_spec);
	b->symbols_spec = symbols ? strdup(adac_symbols_spec(symbols)) : NULL;
	if (b->core)
		core_symbols(b);
}

/* A core: its reader's bytes, LLDB's where that has fewer (a module's file LLDB found that the
 * symbol path does not give). */
static int64_t lldb_read(void *impl, uint64_t addr, void *buf, size_t len, struct adac_error *err)
{
	struct backend *b = impl;
	if (read_direct(b, addr, buf, len))
		return (int64_t)len;
	struct adac_target *core = core_of(b);
	size_t have = core ? adac_read_upto(core, addr, buf, len) : 0;
	if (have == len)
		return (int64_t)len;
	if (!have)
		return adac_lldb_process_read(b->p, addr, buf, len, err);
	uint8_t *more = malloc(len);
	int64_t got = more ? adac_lldb_process_read(b->p, addr, more, len, err) : -1;
	if (got > (int64_t)have)
		memcpy(buf, more, (size_t)got);
	free(more);
	return got > (int64_t)have ? got : (int64_t)have;
}

static const char *lldb_origin(void *impl, uint64_t addr)
{
	struct backend *b = impl;
	return b->core ? adac_target_origin(b->core, addr) : NULL;
}

/* A core's module: the file its reader reads the module from. */
static int lldb_module_file(void *impl, uint64_t base, char *buf, size_t size)
{
	struct backend *b = impl;
	const struct adac_module *m = b->core ? adac_target_module_at(b->core, base) : NULL;
	return m && m->base == base && adac_target_module_file(b->core, m, buf, size) == buf ? 0 : -1;
}

struct module_walk {
	adac_module_cb cb;
	void *ctx;
};

/* LLDB names a library as the dynamic linker was asked for it (/lib/x86_64-linux-gnu/libc.so.6);
 * the kernel, and so the core and pid backends, by its canonical path (/usr/lib/...). Use the
 * canonical path when the file is on this machine, so both front ends print the same. */
static int canonical_module(void *ctx, const struct adac_module *m)
{
	struct module_walk *w = ctx;
	if (adac_lldb_is_symbols_file(m->path))
		return 0; /* ours, not the process's: it covers managed code that no module maps */
	struct adac_module copy = *m;
	char *real = m->path[0] == '/' ? realpath(m->path, NULL) : NULL;
	if (real)
		copy.path = real;
	int stop = w->cb(w->ctx, &copy);
	free(real);
	return stop;
}

/* The pid of a live process on this machine that sees another file system (a container: another
 * mount namespace or root), else 0. */
static int container_pid(struct backend *b)
{
	uint64_t pid = adac_lldb_process_local_pid(b->p);
	if (!pid)
		return 0;
	if (!b->mount_ns) { /* (a process keeps its namespace: asked once) */
		char root[64];
		b->mount_ns = adac_local_process_path((int)pid, "/", root, sizeof root) == 0 ? 2 : 1;
	}
	return b->mount_ns == 2 ? (int)pid : 0;
}

/* LLDB looks for a process's modules on this machine. A process in a container names them by the
 * container's paths, which lead nowhere here (or to other files): LLDB lists none of them (or other
 * files) unless it was attached as README's "Processes in containers" says. Such a process's
 * modules are what its /proc/<pid>/maps names, as the pid backend lists them; their files are
 * opened through /proc/<pid>/root (lldb_local_path). */
static int lldb_modules(void *impl, adac_module_cb cb, void *ctx, struct adac_error *err)
{
	struct backend *b = impl;
	int pid = container_pid(b);
	if (pid) {
		struct adac_module *mods;
		size_t n;
		if (adac_local_process_modules(pid, &mods, &n, err))
			return -1;
		for (size_t i = 0; i < n; i++)
			if (cb(ctx, &mods[i]))
				break;
		adac_local_modules_free(mods, n);
		return 0;
	}
	struct adac_target *core = core_of(b);
	const struct adac_module *mods;
	size_t n;
	if (core && adac_target_modules(core, &mods, &n, NULL) == 0) {
		for (size_t i = 0; i < n; i++)
			if (cb(ctx, &mods[i]))
				break;
		return 0;
	}
	struct module_walk w = {cb, ctx};
	return adac_lldb_process_modules(b->p, canonical_module, &w, err);
}

static int lldb_threads(void *impl, adac_thread_cb cb, void *ctx, struct adac_error *err)
{
	struct backend *b = impl;
	return adac_lldb_process_threads(b->p, cb, ctx, err);
}

static int lldb_regs(void *impl, uint64_t tid, struct adac_regs *regs, struct adac_error *err)
{
	struct backend *b = impl;
	struct kept *k = unwound_stack(b, tid);
	if (k && k->has_regs) {
		*regs = k->regs;
		return 0;
	}
	if (tid == b->building) {
		/* From the provider's input frames, kept for the rest of the stop: once the provider
		 * replaced the thread's frames, LLDB's innermost frame is asyncdac's. */
		if (!b->building_frames || adac_lldb_frame_list_regs(b->building_frames, regs, err))
			return adac_fail(err, ADAC_E_NOT_FOUND, 0, "the registers of thread %llu were not given",
			                 (unsigned long long)tid);
		if (k) {
			k->regs = *regs;
			k->has_regs = true;
		}
		return 0;
	}
	/* LLDB's innermost frame: the unwinder's unless the provider replaced the thread's frames, and
	 * then a frame the unwinder found too, unless the thread is stopped in managed code (when the
	 * provider read the registers, kept above). */
	return adac_lldb_process_regs(b->p, tid, regs, err);
}

/* A core's thread: LLDB's frames, then the core reader's past the last of them. LLDB takes a return
 * address into code the core lacks (gcore's and the kernel's cores leave out mapped files: the
 * ReadyToRun code of assemblies) for the end of the stack; the core reader reads those pages from
 * the files, as the CLI does. (Once the symbol file covers that code, LLDB unwinds it too.) */
struct past_lldb {
	adac_frame_cb cb;
	void *ctx;
	uint64_t sp;       /* LLDB's last frame's (its inlined frames have their caller's) */
	bool given;        /* LLDB gave a frame */
	bool stopped;      /* cb asked to stop */
	bool past;         /* the core reader's frames are past LLDB's last one */
};

static int from_lldb(void *ctx, const struct adac_frame *f)
{
	struct past_lldb *x = ctx;
	x->sp = f->sp;
	x->given = true;
	return x->stopped = x->cb(x->ctx, f) != 0;
}

static int from_core(void *ctx, const struct adac_frame *f)
{
	struct past_lldb *x = ctx;
	if (!x->past) {
		x->past = f->sp == x->sp;
		return 0;
	}
	return x->stopped = x->cb(x->ctx, f) != 0;
}

static int lldb_frames(void *impl, uint64_t tid, adac_frame_cb cb, void *ctx, struct adac_error *err)
{
	struct backend *b = impl;
	const struct kept *k = unwound_stack(b, tid);
	if (!k && (tid == b->building || adac_lldb_process_frames_replaced(b->p, tid)))
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "LLDB's own frames of thread %llu are not known",
		                 (unsigned long long)tid);
	if (!k && !b->core)
		return adac_lldb_process_frames(b->p, tid, cb, ctx, err);
	if (!k) {
		struct past_lldb x = {.cb = cb, .ctx = ctx};
		if (adac_lldb_process_frames(b->p, tid, from_lldb, &x, err))
			return -1;
		/* (The core reader's errors stay unsaid: LLDB's frames are the stack.) */
		if (x.given && !x.stopped)
			adac_target_frames(b->core, tid, from_core, &x, NULL);
		return 0;
	}
	for (size_t i = 0; i < k->n; i++)
		if (cb(ctx, &k->frames[i]))
			break;
	return 0;
}

/* Symbol files are numbered across the session: debuggers cache modules by path. */
static unsigned generation;

static int lldb_symbols_path(void *impl, char *buf, size_t size, struct adac_error *err)
{
	(void)impl;
	return adac_lldb_symbols_file(++generation, buf, size, err);
}

/* Whether two files hold the same bytes (false when either cannot be read). */
static bool same_bytes(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	bool same = fa && fb;
	char ba[16384], bb[16384];
	while (same) {
		size_t na = fread(ba, 1, sizeof ba, fa), nb = fread(bb, 1, sizeof bb, fb);
		same = na == nb && memcmp(ba, bb, na) == 0;
		if (na < sizeof ba)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

static int lldb_load_symbols(void *impl, char *path, size_t size, struct adac_error *err)
{
	struct backend *b = impl;
	/* The same code on the stacks as at the last stop: replacing the module would only make LLDB
	 * read it and unwind every thread again. */
	if (b->symbols_loaded && strcmp(b->symbols_loaded, path) != 0 && strlen(b->symbols_loaded) < size &&
	    same_bytes(b->symbols_loaded, path)) {
		adac_lldb_remove_symbols_file(path);
		strcpy(path, b->symbols_loaded);
		return 0;
	}
	char *copy = strdup(path);
	if (!copy)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	if (adac_lldb_process_replace_module(b->p, b->symbols_loaded, path, err)) {
		adac_lldb_remove_symbols_file(path);
		free(copy);
		return -1;
	}
	if (b->symbols_loaded && strcmp(b->symbols_loaded, path) != 0)
		adac_lldb_remove_symbols_file(b->symbols_loaded);
	free(b->symbols_loaded);
	b->symbols_loaded = copy;
	return 0;
}

static uint64_t lldb_stop_id(void *impl)
{
	struct backend *b = impl;
	return b->stop;
}

static uint64_t lldb_selected_thread(void *impl)
{
	struct backend *b = impl;
	return adac_lldb_process_selected_thread(b->p);
}

static void lldb_close(void *impl)
{
	struct backend *b = impl;
	drop_kept(b);
	free(b->kept);
	if (b->symbols_loaded)
		adac_lldb_remove_symbols_file(b->symbols_loaded);
	free(b->symbols_loaded);
	if (b->mem_fd >= 0)
		close(b->mem_fd);
	free(b->tids);
	adac_target_close(b->core);
	free(b->symbols_spec);
	for (size_t i = 0; i < b->nshown; i++)
		free(b->shown[i].path);
	free(b->shown);
	adac_lldb_process_close(b->p);
	free(b);
}

/* local_path: a live process on this machine in a container names the container's files; a
 * core's or a remote process's are named as they are. */
static int lldb_local_path(void *impl, const char *path, char *buf, size_t size)
{
	struct backend *b = impl;
	uint64_t pid = adac_lldb_process_local_pid(b->p);
	return pid ? adac_local_process_path((int)pid, path, buf, size) : -1;
}

/* thread_of_process_tid: LLDB numbers a local process's threads as this machine does; one in a
 * container knows them by its own pid namespace's ids. A core numbers them as the machine that
 * made it did (gcore of a container's process: the host's ids): its reader matches them by stack. */
static uint64_t lldb_thread_of_process_tid(void *impl, uint64_t process_tid, uint64_t stack_limit, uint64_t stack_base)
{
	struct backend *b = impl;
	struct adac_target *core = core_of(b);
	if (core)
		return adac_target_thread_of_process_tid(core, process_tid, stack_limit, stack_base);
	uint64_t pid = adac_lldb_process_local_pid(b->p);
	if (!pid)
		return process_tid;
	if (!b->pid_ns) /* (a process keeps its namespace: asked once) */
		b->pid_ns = adac_local_other_pid_ns((int)pid) ? 2 : 1;
	if (b->pid_ns == 1)
		return process_tid;
	if (!b->tids || b->tids_stop != b->stop) { /* its threads change only while it runs */
		free(b->tids);
		if (adac_local_process_tids((int)pid, &b->tids, &b->ntids))
			return 0;
		b->tids_stop = b->stop;
	}
	for (size_t i = 0; i < b->ntids; i++)
		if (b->tids[i].process_tid == process_tid)
			return b->tids[i].tid;
	return 0;
}

/* find_symbol is left NULL: the generic .dynsym lookup reads through lldb_read, the same path the
 * CLI takes, so both front ends find the descriptor the same way. */
static const struct adac_target_ops lldb_ops = {
	.kind = "lldb",
	.read = lldb_read,
	.modules = lldb_modules,
	.threads = lldb_threads,
	.regs = lldb_regs,
	.frames = lldb_frames,
	.stop_id = lldb_stop_id,
	.selected_thread = lldb_selected_thread,
	.symbols_path = lldb_symbols_path,
	.load_symbols = lldb_load_symbols,
	.local_path = lldb_local_path,
	.thread_of_process_tid = lldb_thread_of_process_tid,
	.set_symbols = lldb_set_symbols,
	.origin = lldb_origin,
	.module_file = lldb_module_file,
	.close = lldb_close,
};

/* ---- sessions: the targets of the processes last used ----
 *
 * Keyed by LLDB's process unique id (never reused within one lldb session). Commands run on LLDB's
 * command thread; the frame provider and OS plugin may run on others, but only while they hold the
 * target's API lock, and LLDB runs Python code one thread at a time: no lock is needed here. */

#define SESSIONS 8u

struct session {
	uint64_t process_id;         /* 0: free */
	struct adac_target *t;
	struct backend *b;
	struct adac_runtime *rt;     /* opened on demand, valid for rt_stop_id */
	uint64_t rt_stop_id;
	bool rt_failed;              /* no runtime at rt_stop_id: why, in rt_err (not looked for again
	                              * for every thread of a process that is not .NET) */
	struct adac_error rt_err;
	uint64_t last_use;
};

static struct session sessions[SESSIONS];
static uint64_t use_clock;

static void session_end(struct session *s)
{
	adac_runtime_close(s->rt);
	adac_target_close(s->t);
	memset(s, 0, sizeof *s);
}

/* The session of process p (taking ownership of p), made anew when there is none. */
static struct session *session_for(struct adac_lldb_process *p, uint64_t process_id, struct adac_error *err)
{
	struct session *s = NULL;
	for (size_t i = 0; i < SESSIONS && !s; i++)
		if (sessions[i].process_id == process_id)
			s = &sessions[i];
	if (s) {
		adac_lldb_process_close(p);
		s->last_use = ++use_clock;
		s->b->stop = adac_lldb_process_stop_id(s->b->p);
		return s;
	}
	s = &sessions[0];
	for (size_t i = 1; i < SESSIONS; i++)
		if (sessions[i].last_use < s->last_use)
			s = &sessions[i];
	session_end(s);
	struct backend *b = calloc(1, sizeof *b);
	if (!b) {
		adac_lldb_process_close(p);
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		return NULL;
	}
	b->p = p;
	b->mem_fd = -2;
	b->stop = adac_lldb_process_stop_id(p);
	s->t = adac_target_new(&lldb_ops, b, err);
	if (!s->t)
		return NULL;
	adac_target_set_runtime_source(s->t, adac_lldb_runtime);  /* commands share the provider's */
	s->b = b;
	s->process_id = process_id;
	s->last_use = ++use_clock;
	return s;
}

static struct session *session_of(const struct adac_target *t)
{
	for (size_t i = 0; i < SESSIONS; i++)
		if (sessions[i].t == t)
			return &sessions[i];
	return NULL;
}

/* Drops the sessions of processes LLDB no longer has (exited, detached, a target deleted). */
static void sessions_prune(void)
{
	for (size_t i = 0; i < SESSIONS; i++)
		if (sessions[i].process_id && !adac_lldb_process_alive(sessions[i].b->p))
			session_end(&sessions[i]);
}

struct adac_target *adac_lldb_target(struct adac_lldb_cmd *cmd, struct adac_error *err)
{
	uint64_t id = 0;
	switch (adac_lldb_cmd_process_state(cmd, &id)) {
	case ADAC_LLDB_NO_PROCESS:
		adac_fail(err, ADAC_E_BAD_ARG, 0,
		          "no process (use 'process attach', 'process launch' or 'target create --core')");
		return NULL;
	case ADAC_LLDB_RUNNING:
		adac_fail(err, ADAC_E_BAD_ARG, 0, "the process is running (use 'process interrupt' to stop it)");
		return NULL;
	case ADAC_LLDB_STOPPED:
		break;
	}
	sessions_prune();
	struct adac_lldb_process *p = adac_lldb_process_open(cmd, err);
	if (!p)
		return NULL;
	struct session *s = session_for(p, id, err);
	/* The symbol path follows LLDB's settings, read again for each command (the runtime's PDBs
	 * follow it: adac_target_symbols_generation). */
	return s && adac_lldb_update_symbols(cmd, s->t, err) == 0 ? s->t : NULL;
}

struct adac_target *adac_lldb_target_find(uint64_t debugger_id, uint64_t target_id, struct adac_error *err)
{
	sessions_prune();
	struct adac_lldb_process *p = adac_lldb_process_find(debugger_id, target_id, err);
	if (!p)
		return NULL;
	if (!adac_lldb_process_stopped(p)) {
		adac_lldb_process_close(p);
		adac_fail(err, ADAC_E_BAD_ARG, 0, "the process is not stopped");
		return NULL;
	}
	struct session *s = session_for(p, adac_lldb_process_unique_id(p), err);
	return s ? s->t : NULL;
}

struct adac_runtime *adac_lldb_runtime(struct adac_target *t, struct adac_error *err)
{
	struct session *s = session_of(t);
	if (!s) {
		adac_fail(err, ADAC_E_BAD_ARG, 0, "not a target of the plugin");
		return NULL;
	}
	uint64_t stop = s->b->stop;
	if (s->rt_stop_id != stop) {
		if (s->rt && !adac_runtime_refresh(s->rt)) {
			adac_runtime_close(s->rt);  /* its descriptor changed: opened again below */
			s->rt = NULL;
		}
		s->rt_stop_id = stop;
		s->rt_failed = false;  /* looked for again: the process may have loaded it since */
	}
	if (s->rt_failed) {
		adac_error_copy(err, &s->rt_err);
		return NULL;
	}
	if (!s->rt) {
		struct adac_error e = {0};
		s->rt = adac_runtime_open(t, &e);
		s->rt_stop_id = stop;
		s->rt_failed = !s->rt;
		s->rt_err = e;
		if (!s->rt)
			adac_error_copy(err, &e);
	}
	return s->rt;
}

/* Copies the frames' strings into one buffer the copy owns. */
static int copy_stack(struct kept *k, const struct adac_frame *frames, size_t n)
{
	size_t len = 0;
	for (size_t i = 0; i < n; i++) {
		const char *strs[3] = {frames[i].module, frames[i].symbol, frames[i].file};
		for (int j = 0; j < 3; j++)
			len += strs[j] ? strlen(strs[j]) + 1 : 0;
	}
	k->frames = malloc((n ? n : 1) * sizeof *k->frames);
	k->text = malloc(len ? len : 1);
	if (!k->frames || !k->text)
		return -1;
	char *at = k->text;
	for (size_t i = 0; i < n; i++) {
		k->frames[i] = frames[i];
		const char **strs[3] = {&k->frames[i].module, &k->frames[i].symbol, &k->frames[i].file};
		for (int j = 0; j < 3; j++) {
			if (!*strs[j])
				continue;
			size_t l = strlen(*strs[j]) + 1;
			memcpy(at, *strs[j], l);
			*strs[j] = at;
			at += l;
		}
	}
	k->n = n;
	return 0;
}

int adac_lldb_target_keep_stack(struct adac_target *t, uint64_t tid, const struct adac_frame *frames, size_t n,
                                struct adac_error *err)
{
	struct session *s = session_of(t);
	if (!s)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "not a target of the plugin");
	struct backend *b = s->b;
	uint64_t stop = b->stop;
	if (b->kept_stop != stop) {
		drop_kept(b);
		b->kept_stop = stop;
	}
	struct kept *k = NULL;
	for (size_t i = 0; i < b->nkept && !k; i++)
		if (b->kept[i].tid == tid)
			k = &b->kept[i];
	if (k) {
		free(k->frames);
		free(k->text);
	} else {
		if (b->nkept == b->capkept) {
			size_t cap = b->capkept ? 2 * b->capkept : 16;
			struct kept *v = realloc(b->kept, cap * sizeof *v);
			if (!v)
				return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
			b->kept = v;
			b->capkept = cap;
		}
		k = &b->kept[b->nkept++];
	}
	memset(k, 0, sizeof *k);
	k->tid = tid;
	if (copy_stack(k, frames, n)) {
		free(k->frames);
		free(k->text);
		*k = b->kept[--b->nkept];
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	}
	return 0;
}

static bool was_shown(const struct backend *b, const struct adac_module *m)
{
	for (size_t i = 0; i < b->nshown; i++)
		if (b->shown[i].base == m->base && strcmp(b->shown[i].path, m->path) == 0)
			return true;
	return false;
}

/* Whether the file at path is an ELF file (LLDB is not shown the process's other files, its
 * assemblies among them: their code is in the symbol file). */
static bool is_elf(const char *path)
{
	unsigned char magic[4] = {0};
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool elf = fd >= 0 && read(fd, magic, sizeof magic) == (ssize_t)sizeof magic && memcmp(magic, "\177ELF", 4) == 0;
	if (fd >= 0)
		close(fd);
	return elf;
}

void adac_lldb_target_show_modules(struct adac_target *t, bool reading_threads)
{
	struct session *s = session_of(t);
	struct backend *b = s ? s->b : NULL;
	if (!b || (!container_pid(b) && (reading_threads || !core_of(b))))
		return;
	/* (A core's files are looked for through the symbol path, which the command set: again when
	 * it changed.) */
	uint64_t symbols = adac_target_symbols_generation(t);
	if (b->shown_stop == b->stop && b->shown_symbols == symbols)
		return;
	b->shown_stop = b->stop;
	b->shown_symbols = symbols;
	/* The target's modules are the container's, the core's (lldb_modules), listed once a stop. */
	const struct adac_module *mods;
	size_t n;
	struct adac_error err = {0};
	if (adac_target_modules(t, &mods, &n, &err))
		return;
	for (size_t i = 0; i < n; i++) {
		char buf[ADAC_MAX_PATH_BYTES];
		const char *local = adac_target_module_file(t, &mods[i], buf, sizeof buf);
		if (local == mods[i].path || was_shown(b, &mods[i]))
			continue;
		struct shown *grown = realloc(b->shown, (b->nshown + 1) * sizeof *grown);
		char *copy = strdup(mods[i].path);
		if (grown)
			b->shown = grown;
		if (!grown || !copy) {
			free(copy);
			break;
		}
		b->shown[b->nshown++] = (struct shown){mods[i].base, copy};
		/* (A module LLDB cannot add stays without names in its frames, as before.) */
		if (is_elf(local))
			adac_lldb_process_show_module(b->p, local, mods[i].base, &err);
	}
}

const char *adac_lldb_target_symbols_file(struct adac_target *t)
{
	struct session *s = session_of(t);
	return s ? s->b->symbols_loaded : NULL;
}

void adac_lldb_target_building(struct adac_target *t, uint64_t tid, uint64_t frames)
{
	struct session *s = session_of(t);
	if (s) {
		s->b->building = tid;
		s->b->building_frames = frames;
	}
}
