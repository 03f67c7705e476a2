/* target_pid.c - the "pid" backend: a live x86-64 process, held stopped with ptrace while open (or,
 * with ADAC_PID_RELEASE, only while its readable memory, registers and modules are copied).
 *
 * Every thread is seized and interrupted (PTRACE_SEIZE makes the stops we cause distinguishable
 * from real signals, which are re-delivered on detach). Memory comes from process_vm_readv (or
 * /proc/pid/mem where that is unavailable), modules from /proc/pid/maps, threads from
 * /proc/pid/task, registers from PTRACE_GETREGS, frames from libdwfl. Closing detaches and leaves
 * the process as it was found: running, or stopped. */
#include "target/dwfl_frames.h"
#include "target/target.h"

#include <dirent.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/limits.h"
#include "target/native_symbols.h"
#include "target/proc_ns.h"

#define PAGE 4096u
#define STOP_TIMEOUT_MS 10000   /* how long a thread may take to reach its ptrace stop */
#define RESTOP_TIMEOUT_MS 200   /* how long a stopped process may take to re-enter its stop */

struct pid_thread {
	pid_t tid;
	uint64_t ns_tid; /* its id in the process's own pid namespace (proc_ns.h); 0 if unread */
	int resend_sig;  /* a real signal that arrived during the attach; delivered again on detach */
	bool gone;       /* exited while we held it */
	char name[64];
};

struct ptarget {
	pid_t pid;
	bool was_stopped;  /* in group stop (state T) before we attached */
	bool exited;
	struct pid_thread *threads;
	size_t nthreads;
	int mem_fd;        /* /proc/pid/mem, -1 until opened */
	bool mem_tried;
	bool vm_readv_ok;  /* false once process_vm_readv proved unavailable */
	struct adac_module *mods;
	size_t nmods;
	Dwfl *dwfl;
	struct adac_native_symbols native; /* what libdwfl's callbacks look through */
	/* ADAC_PID_RELEASE: the readable memory, registers and modules copied at attach, then the
	 * process released; reads come from the copy. */
	bool released;
	struct snap_region *snap;          /* by address */
	size_t nsnap;
	uint8_t *arena;                    /* pre-faulted room for the copy (MAP_FAILED: none), */
	size_t arena_size, arena_used;     /* mapped before the process is stopped */
	struct user_regs_struct *saved_regs; /* per thread (threads[i]) */
	bool *has_saved_regs;
	char *maps;                        /* /proc/pid/maps as copied: the modules libdwfl unwinds */
	size_t maps_len;                   /* the copy's threads through */
	bool borrowed;     /* reopened: the copy (or the held process's /proc/pid/mem), threads and
	                    * registers are the first target's */
	bool lent;         /* reopened from: the copy, or the process held, must stay as it is */
};

struct snap_region {
	uint64_t start, end;               /* end: as far as the copy got */
	uint8_t *data;                     /* in the arena, or malloc'd */
	bool in_arena;
};

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

/* ---- /proc ---- */

/* Reads a small /proc file as a NUL-terminated string; bytes read, or -1 with errno. */
static ssize_t read_proc(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	int saved = errno;
	close(fd);
	if (n < 0) {
		errno = saved;
		return -1;
	}
	buf[n] = '\0';
	return n;
}

/* The state letter of /proc/<pid>/task/<tid>/stat (R, S, D, T, t, Z, X...), or 0 when it is gone. */
static char thread_state(pid_t pid, pid_t tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	if (read_proc(path, buf, sizeof buf) <= 0)
		return 0;
	const char *paren = strrchr(buf, ')'); /* the name may contain ')' and spaces */
	return paren && paren[1] == ' ' ? paren[2] : 0;
}

/* A numeric field ("TracerPid:", "Tgid:") of /proc/<pid>/task/<tid>/status, or -1. */
static long status_field(pid_t pid, pid_t tid, const char *field)
{
	uint64_t v;
	return adac_proc_status_number((int)pid, (uint64_t)tid, field, false, &v) ? (long)v : -1;
}

static void read_comm(pid_t pid, pid_t tid, char *name, size_t size)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	name[0] = '\0';
	if (read_proc(path, name, size) > 0)
		name[strcspn(name, "\n")] = '\0';
}

/* ---- attach and detach ---- */

static struct pid_thread *find_thread(struct ptarget *p, pid_t tid)
{
	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i].tid == tid)
			return &p->threads[i];
	return NULL;
}

/* Waits until thread th is in a ptrace stop (or has exited). */
static int wait_stopped(struct ptarget *p, struct pid_thread *th, struct adac_error *err)
{
	long deadline = now_ms() + STOP_TIMEOUT_MS;
	for (;;) {
		int status;
		pid_t r = waitpid(th->tid, &status, __WALL | WNOHANG);
		if (r == th->tid && WIFSTOPPED(status)) {
			/* status >> 16 is PTRACE_EVENT_STOP for our interrupt or a group stop; 0 means a
			 * real signal arrived first: keep it for the detach. */
			if ((status >> 16) == 0)
				th->resend_sig = WSTOPSIG(status);
			return 0;
		}
		if ((r == th->tid && (WIFEXITED(status) || WIFSIGNALED(status))) || (r < 0 && errno == ECHILD)) {
			th->gone = true;
			return 0;
		}
		if (r < 0 && errno != EINTR)
			return adac_fail(err, ADAC_E_IO, 0, "process %d: waiting for thread %d failed: %s", (int)p->pid,
			                 (int)th->tid, strerror(errno));
		/* An exiting thread (a zombie leader, say) never reports a stop. */
		char st = thread_state(p->pid, th->tid);
		if (st == 0 || st == 'Z' || st == 'X') {
			th->gone = true;
			return 0;
		}
		if (now_ms() > deadline)
			return adac_fail(err, ADAC_E_IO, 0, "process %d: thread %d did not stop within %d ms (state %c)",
			                 (int)p->pid, (int)th->tid, STOP_TIMEOUT_MS, st);
		sleep_ms(1);
	}
}

/* Seizes and stops every thread not yet held that /proc/pid/task lists; *added says how many. */
static int attach_round(struct ptarget *p, size_t *added, struct adac_error *err)
{
	*added = 0;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)p->pid);
	DIR *dir = opendir(path);
	if (!dir) {
		if (errno == ENOENT)
			return adac_fail(err, ADAC_E_NOT_FOUND, 0, "process %d: no such process", (int)p->pid);
		return adac_fail(err, ADAC_E_IO, 0, "process %d: cannot list threads: %s", (int)p->pid, strerror(errno));
	}
	size_t first_new = p->nthreads;
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(dir)) != NULL) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);
		if (*end || tid <= 0 || find_thread(p, (pid_t)tid))
			continue;
		if (p->nthreads >= ADAC_MAX_THREADS) {
			rc = adac_fail(err, ADAC_E_LIMIT, 0, "process %d: more than ADAC_MAX_THREADS (%u) threads", (int)p->pid,
			               ADAC_MAX_THREADS);
			break;
		}
		if (ptrace(PTRACE_SEIZE, (pid_t)tid, NULL, NULL) != 0) {
			int e = errno;
			/* An exiting thread refuses with EPERM (or ESRCH once gone); it needs no holding. */
			char st = thread_state(p->pid, (pid_t)tid);
			if (tid != p->pid && (e == ESRCH || st == 0 || st == 'Z' || st == 'X'))
				continue;
			long tracer = status_field(p->pid, (pid_t)tid, "TracerPid:");
			if (tracer == (long)getpid())
				tracer = 0;
			if (e == ESRCH)
				rc = adac_fail(err, ADAC_E_NOT_FOUND, 0, "process %d: no such process", (int)p->pid);
			else if (tracer > 0)
				rc = adac_fail(err, ADAC_E_IO, 0, "process %d: ptrace attach failed: %s (already traced by process %ld)",
				               (int)p->pid, strerror(e), tracer);
			else
				rc = adac_fail(err, ADAC_E_IO, 0, "process %d: ptrace attach failed: %s", (int)p->pid, strerror(e));
			break;
		}
		struct pid_thread *grown = realloc(p->threads, (p->nthreads + 1) * sizeof *grown);
		if (!grown) {
			ptrace(PTRACE_DETACH, (pid_t)tid, NULL, NULL);
			rc = adac_fail(err, ADAC_E_NOMEM, 0, "process %d: out of memory attaching", (int)p->pid);
			break;
		}
		p->threads = grown;
		struct pid_thread *th = &p->threads[p->nthreads++];
		*th = (struct pid_thread){.tid = (pid_t)tid};
		/* Fails only if the thread exited; wait_stopped notices that. */
		ptrace(PTRACE_INTERRUPT, (pid_t)tid, NULL, NULL);
		(*added)++;
	}
	closedir(dir);
	/* Wait even after a failure: every seized thread must be stopped before it can be detached. */
	for (size_t i = first_new; i < p->nthreads; i++) {
		if (wait_stopped(p, &p->threads[i], err))
			rc = -1;
		else if (!p->threads[i].gone) {
			read_comm(p->pid, p->threads[i].tid, p->threads[i].name, sizeof p->threads[i].name);
			if (!adac_proc_ns_tid(p->pid, (uint64_t)p->threads[i].tid, &p->threads[i].ns_tid))
				p->threads[i].ns_tid = 0;
		}
	}
	return rc;
}

/* True when a SIGCONT was sent while we held the process: it is queued (traced threads do not
 * dequeue it) and it ends the stop the process was in, so the process must not be stopped again. */
static bool sigcont_pending(struct ptarget *p)
{
	char path[64], buf[4096];
	unsigned long long bit = 1ull << (SIGCONT - 1);
	snprintf(path, sizeof path, "/proc/%d/status", (int)p->pid);
	if (read_proc(path, buf, sizeof buf) > 0) {
		const char *at = strstr(buf, "ShdPnd:");
		if (at && (strtoull(at + 7, NULL, 16) & bit))
			return true;
	}
	for (size_t i = 0; i < p->nthreads; i++) {
		snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)p->pid, (int)p->threads[i].tid);
		if (p->threads[i].gone || read_proc(path, buf, sizeof buf) <= 0)
			continue;
		const char *at = strstr(buf, "SigPnd:");
		if (at && (strtoull(at + 7, NULL, 16) & bit))
			return true;
	}
	return false;
}

static void detach_all(struct ptarget *p)
{
	bool restop = p->was_stopped && !p->exited && !sigcont_pending(p);
	for (size_t i = 0; i < p->nthreads; i++)
		if (!p->threads[i].gone)
			ptrace(PTRACE_DETACH, p->threads[i].tid, NULL, (void *)(long)p->threads[i].resend_sig);
	if (!restop)
		return;
	/* The kernel puts a group-stopped process back into its stop on detach; should a thread be
	 * resumed anyway, stop it again. A SIGSTOP left pending in a stopped process is harmless:
	 * the SIGCONT that ends the stop discards it. */
	long deadline = now_ms() + RESTOP_TIMEOUT_MS;
	for (;;) {
		bool all_stopped = true;
		for (size_t i = 0; i < p->nthreads && all_stopped; i++) {
			char st = p->threads[i].gone ? 'T' : thread_state(p->pid, p->threads[i].tid);
			all_stopped = st == 'T' || st == 0 || st == 'Z' || st == 'X';
		}
		if (all_stopped)
			return;
		if (now_ms() > deadline)
			break;
		sleep_ms(1);
	}
	kill(p->pid, SIGSTOP);
}

/* ---- memory ---- */

/* One process_vm_readv; no side effects, so the copy's threads may share it. */
static ssize_t read_vm(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len};
	struct iovec remote = {(void *)(uintptr_t)addr, len};
	return process_vm_readv(pid, &local, 1, &remote, 1, 0);
}

static void open_mem_file(struct ptarget *p)
{
	if (!p->mem_tried) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/mem", (int)p->pid);
		p->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
		p->mem_tried = true;
	}
}

static ssize_t read_mem_file(struct ptarget *p, uint64_t addr, void *buf, size_t len)
{
	open_mem_file(p);
	if (p->mem_fd < 0 || addr > (uint64_t)INT64_MAX) {
		errno = EIO;
		return -1;
	}
	return (ssize_t)adac_pread_full(p->mem_fd, buf, len, addr);
}

/* The first region of the copy that ends past addr (p->nsnap when none). */
static size_t snap_from(const struct ptarget *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nsnap;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->snap[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A read from the copy: the bytes of contiguous copied regions from addr on. */
static int64_t snap_read(const struct ptarget *p, uint64_t addr, uint8_t *out, size_t len)
{
	size_t done = 0;
	for (size_t i = snap_from(p, addr); i < p->nsnap && done < len; i++) {
		const struct snap_region *r = &p->snap[i];
		uint64_t a = addr + done;
		if (a < r->start || a >= r->end)
			break;
		size_t n = r->end - a < len - done ? (size_t)(r->end - a) : len - done;
		memcpy(out + done, r->data + (a - r->start), n);
		done += n;
	}
	return (int64_t)done;
}

/* view: the copy once released, where it lies (the walk parses it in place). */
static int pid_view(void *impl, uint64_t addr, size_t len, struct adac_target_view *v)
{
	const struct ptarget *p = impl;
	size_t lo = p->released ? snap_from(p, addr) : p->nsnap;
	if (lo == p->nsnap || addr < p->snap[lo].start)
		return -1;
	const struct snap_region *r = &p->snap[lo];
	v->bytes = r->data + (addr - r->start);
	v->len = r->end - addr < len ? (size_t)(r->end - addr) : len;
	return 0;
}

/* read_concurrent: the copy once released, else process_vm_readv (safe on several threads, and it
 * touches nothing of p); what it misses (where it is refused, unreadable pages) is left to pid_read. */
static size_t pid_read_concurrent(void *impl, uint64_t addr, void *buf, size_t len)
{
	const struct ptarget *p = impl;
	if (p->released)
		return (size_t)snap_read(p, addr, buf, len);
	ssize_t got = read_vm(p->pid, addr, buf, len);
	return got > 0 ? (size_t)got : 0;
}

static int64_t pid_read(void *impl, uint64_t addr, void *buf, size_t len, struct adac_error *err)
{
	struct ptarget *p = impl;
	if (p->released)
		return snap_read(p, addr, buf, len);
	uint8_t *out = buf;
	size_t done = 0;
	bool paged = false; /* after a failure, go page by page to find the first unreadable byte */
	while (done < len) {
		uint64_t a = addr + done;
		if (a < addr)
			break;
		size_t want = len - done;
		if (paged && want > PAGE - (a & (PAGE - 1)))
			want = PAGE - (a & (PAGE - 1));
		ssize_t n = -1;
		if (p->vm_readv_ok) {
			n = read_vm(p->pid, a, out + done, want);
			if (n < 0 && (errno == ENOSYS || errno == EPERM))
				p->vm_readv_ok = false;
			else if (n < 0 && errno == ESRCH)
				p->exited = true;
		}
		/* /proc/pid/mem only when process_vm_readv is unavailable: it also reads pages the
		 * process itself cannot (PROT_NONE), which would blur where readable memory ends. */
		if (!p->vm_readv_ok && !p->exited)
			n = read_mem_file(p, a, out + done, want);
		if (p->exited) {
			if (done)
				break;
			return adac_fail(err, ADAC_E_IO, a, "process %d has exited", (int)p->pid);
		}
		if (n <= 0) {
			if (paged)
				break;
			paged = true;
			continue;
		}
		done += (size_t)n;
		if ((size_t)n < want)
			paged = true;
	}
	return (int64_t)done;
}

/* ---- modules ---- */

static void free_mods(struct ptarget *p)
{
	adac_local_modules_free(p->mods, p->nmods);
	p->mods = NULL;
	p->nmods = 0;
}

/* One module per mapped file (adac_local_process_modules). */
static int pid_modules(void *impl, adac_module_cb cb, void *ctx, struct adac_error *err)
{
	struct ptarget *p = impl;
	if (p->released) {
		for (size_t i = 0; i < p->nmods; i++)
			if (cb(ctx, &p->mods[i]))
				break;
		return 0;
	}
	free_mods(p);
	if (adac_local_process_modules((int)p->pid, &p->mods, &p->nmods, err))
		return -1;
	if (p->nmods == 0) {
		/* A zombie has no mappings left; that is an exited process, not one without modules. */
		char st = thread_state(p->pid, p->pid);
		if (st == 0 || st == 'Z' || st == 'X') {
			p->exited = true;
			return adac_fail(err, ADAC_E_IO, 0, "process %d has exited", (int)p->pid);
		}
	}
	for (size_t i = 0; i < p->nmods; i++)
		if (cb(ctx, &p->mods[i]))
			break;
	return 0;
}

/* ---- threads and registers ---- */

static int pid_threads(void *impl, adac_thread_cb cb, void *ctx, struct adac_error *err)
{
	(void)err;
	struct ptarget *p = impl;
	uint32_t index = 0;
	for (size_t i = 0; i < p->nthreads; i++) {
		if (p->threads[i].gone)
			continue;
		struct adac_thread th = {.tid = (uint64_t)p->threads[i].tid, .index = ++index};
		memcpy(th.name, p->threads[i].name, sizeof th.name);
		if (cb(ctx, &th))
			break;
	}
	return 0;
}

static void regs_of(const struct user_regs_struct *u, struct adac_regs *regs)
{
	uint64_t *r = regs->r;
	memset(regs, 0, sizeof *regs);
	r[ADAC_REG_RAX] = u->rax, r[ADAC_REG_RCX] = u->rcx, r[ADAC_REG_RDX] = u->rdx, r[ADAC_REG_RBX] = u->rbx;
	r[ADAC_REG_RSP] = u->rsp, r[ADAC_REG_RBP] = u->rbp, r[ADAC_REG_RSI] = u->rsi, r[ADAC_REG_RDI] = u->rdi;
	r[ADAC_REG_R8] = u->r8, r[ADAC_REG_R9] = u->r9, r[ADAC_REG_R10] = u->r10, r[ADAC_REG_R11] = u->r11;
	r[ADAC_REG_R12] = u->r12, r[ADAC_REG_R13] = u->r13, r[ADAC_REG_R14] = u->r14, r[ADAC_REG_R15] = u->r15;
	r[ADAC_REG_RIP] = u->rip, r[ADAC_REG_FS_BASE] = u->fs_base;
}

static int pid_regs(void *impl, uint64_t tid, struct adac_regs *regs, struct adac_error *err)
{
	struct ptarget *p = impl;
	struct pid_thread *th = tid <= INT32_MAX ? find_thread(p, (pid_t)tid) : NULL;
	if (!th || th->gone)
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "process %d: no thread %llu", (int)p->pid, (unsigned long long)tid);
	struct user_regs_struct u;
	if (p->released || p->borrowed) { /* (only the thread holding the process may ask ptrace) */
		size_t i = (size_t)(th - p->threads);
		if (!p->has_saved_regs[i])
			return adac_fail(err, ADAC_E_IO, 0, "process %d: the registers of thread %d were not copied", (int)p->pid,
			                 (int)th->tid);
		u = p->saved_regs[i];
	} else if (ptrace(PTRACE_GETREGS, th->tid, NULL, &u) != 0) {
		if (errno == ESRCH)
			return adac_fail(err, ADAC_E_IO, 0, "process %d: thread %d has exited", (int)p->pid, (int)th->tid);
		return adac_fail(err, ADAC_E_IO, 0, "process %d: cannot read the registers of thread %d: %s", (int)p->pid,
		                 (int)th->tid, strerror(errno));
	}
	regs_of(&u, regs);
	return 0;
}

/* Takes the held threads' registers (on the thread holding them: ptrace answers no other), for
 * a copy or for targets that borrow the process. */
static int save_regs(struct ptarget *p, struct adac_error *err)
{
	if (p->saved_regs)
		return 0;
	p->saved_regs = calloc(p->nthreads ? p->nthreads : 1, sizeof *p->saved_regs);
	p->has_saved_regs = calloc(p->nthreads ? p->nthreads : 1, sizeof *p->has_saved_regs);
	if (!p->saved_regs || !p->has_saved_regs) {
		free(p->saved_regs);
		free(p->has_saved_regs);
		p->saved_regs = NULL;
		p->has_saved_regs = NULL;
		return adac_fail(err, ADAC_E_NOMEM, 0, "process %d: out of memory", (int)p->pid);
	}
	for (size_t i = 0; i < p->nthreads; i++)
		p->has_saved_regs[i] =
			!p->threads[i].gone && ptrace(PTRACE_GETREGS, p->threads[i].tid, NULL, &p->saved_regs[i]) == 0;
	return 0;
}

/* ---- frames (libdwfl over the threads we already hold, or over the copy) ---- */

/* A released process's copy: libdwfl unwinds its threads from the copied registers and memory
 * (thread_arg: the thread's saved registers), as the process was when it was held. */
static pid_t copy_next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	(void)dwfl;
	struct ptarget *p = dwfl_arg;
	size_t i = *thread_argp ? (size_t)((struct user_regs_struct *)*thread_argp - p->saved_regs) + 1 : 0;
	for (; i < p->nthreads; i++)
		if (!p->threads[i].gone && p->has_saved_regs[i]) {
			*thread_argp = &p->saved_regs[i];
			return p->threads[i].tid;
		}
	return 0;
}

static bool copy_get_thread(Dwfl *dwfl, pid_t tid, void *dwfl_arg, void **thread_argp)
{
	(void)dwfl;
	struct ptarget *p = dwfl_arg;
	struct pid_thread *th = find_thread(p, tid);
	if (!th || th->gone || !p->has_saved_regs[th - p->threads])
		return false;
	*thread_argp = &p->saved_regs[th - p->threads];
	return true;
}

static bool copy_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg)
{
	(void)dwfl;
	uint64_t word;
	if (snap_read(dwfl_arg, addr, (uint8_t *)&word, sizeof word) != (int64_t)sizeof word)
		return false;
	*result = word;
	return true;
}

static bool copy_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct adac_regs regs;
	regs_of(thread_arg, &regs);
	return adac_dwfl_thread_registers(thread, &regs);
}

static const Dwfl_Thread_Callbacks copy_thread_callbacks = {
	.next_thread = copy_next_thread,
	.get_thread = copy_get_thread,
	.memory_read = copy_memory_read,
	.set_initial_registers = copy_initial_registers,
};

/* The modules of the copy's mappings. 0, or a libdwfl error (> 0: errno). */
static int report_copy(Dwfl *d, const struct ptarget *p)
{
	FILE *f = p->maps ? fmemopen(p->maps, p->maps_len, "r") : NULL;
	if (!f)
		return ENOENT;
	int rc = dwfl_linux_proc_maps_report(d, f);
	fclose(f);
	return rc;
}

static int open_dwfl(struct ptarget *p, struct adac_error *err)
{
	if (p->dwfl)
		return 0;
	Dwfl *d = dwfl_begin(&adac_native_proc_callbacks);
	if (!d)
		return adac_fail(err, ADAC_E_NOMEM, 0, "process %d: cannot start libdwfl: %s", (int)p->pid, dwfl_errmsg(-1));
	dwfl_report_begin(d);
	int rc = p->released ? report_copy(d, p) : dwfl_linux_proc_report(d, p->pid);
	if (rc == 0)
		rc = dwfl_report_end(d, NULL, NULL);
	/* assume_ptrace_stopped: the threads are ours and stopped; libdwfl must not attach again. */
	if (rc == 0 && p->released)
		rc = dwfl_attach_state(d, NULL, p->pid, &copy_thread_callbacks, p) ? 0 : -1;
	else if (rc == 0)
		rc = dwfl_linux_proc_attach(d, p->pid, true);
	if (rc != 0) {
		adac_fail(err, ADAC_E_IO, 0, "process %d: libdwfl cannot read the process: %s", (int)p->pid,
		          rc > 0 ? strerror(rc) : dwfl_errmsg(-1));
		dwfl_end(d);
		return -1;
	}
	adac_native_symbols_attach(d, &p->native);
	p->dwfl = d;
	return 0;
}

static void pid_set_symbols(void *impl, struct adac_symbols *symbols)
{
	struct ptarget *p = impl;
	p->native.symbols = symbols;
	if (p->dwfl) { /* modules whose debug file was not found get another chance */
		dwfl_end(p->dwfl);
		p->dwfl = NULL;
	}
}


static int pid_frames(void *impl, uint64_t tid, adac_frame_cb cb, void *ctx, struct adac_error *err)
{
	struct ptarget *p = impl;
	struct pid_thread *th = tid <= INT32_MAX ? find_thread(p, (pid_t)tid) : NULL;
	if (!th || th->gone)
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "process %d: no thread %llu", (int)p->pid, (unsigned long long)tid);
	if (p->borrowed && !p->released)
		return adac_fail(err, ADAC_E_UNSUPPORTED, 0, "process %d: its native frames are unwound by the thread holding it",
		                 (int)p->pid);
	if (open_dwfl(p, err))
		return -1;
	struct adac_dwfl_walk w = {.dwfl = p->dwfl, .cb = cb, .ctx = ctx};
	int rc = dwfl_getthread_frames(p->dwfl, th->tid, adac_dwfl_walk_frame, &w);
	if (w.limit_hit)
		return adac_fail(err, ADAC_E_LIMIT, 0, "thread %d has more than ADAC_MAX_UNWIND_FRAMES (%u) frames",
		                 (int)th->tid, ADAC_MAX_UNWIND_FRAMES);
	/* Ending with an error after some frames is the outermost frame libdwfl can explain. */
	if (w.count == 0 && !w.stopped)
		return adac_fail(err, ADAC_E_UNSUPPORTED, 0, "process %d: cannot unwind thread %d: %s", (int)p->pid,
		                 (int)th->tid, rc < 0 ? dwfl_errmsg(-1) : "no frame");
	return 0;
}

/* ---- running it ---- */

/* Seizes every thread /proc lists, in rounds until one finds no new thread (held threads cannot
 * start others, so the set is then complete; each round adds a thread, and the total is capped by
 * ADAC_MAX_THREADS); fails when the leader is gone. */
static int hold_all(struct ptarget *p, const char *when, struct adac_error *err)
{
	for (size_t added = 1; added > 0;)
		if (attach_round(p, &added, err))
			return -1;
	struct pid_thread *leader = find_thread(p, p->pid);
	if (!leader || leader->gone) {
		p->exited = true;
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "process %d: exited %s", (int)p->pid, when);
	}
	return 0;
}

static void drop_copy(struct ptarget *p);
static void map_arena(struct ptarget *p);
static int copy_and_release(struct ptarget *p, struct adac_error *err);

/* A released process runs already: after ms, its copy is taken again, as at the start. */
static int copy_again(struct ptarget *p, unsigned ms, struct adac_error *err)
{
	sleep_ms((long)ms);
	if (p->dwfl) { /* (it unwinds the threads of the copy dropped) */
		dwfl_end(p->dwfl);
		p->dwfl = NULL;
	}
	drop_copy(p);
	p->nthreads = 0;
	p->released = false;
	map_arena(p);
	if (hold_all(p, "while it ran", err))
		return -1;
	return copy_and_release(p, err);
}

/* Lets every held thread run for about ms milliseconds, then stops them again, and seizes the
 * threads started meanwhile. A signal a thread got while held is delivered now. */
static int pid_run_briefly(void *impl, unsigned ms, struct adac_error *err)
{
	struct ptarget *p = impl;
	if (p->borrowed)
		return adac_fail(err, ADAC_E_UNSUPPORTED, 0, "process %d: borrowed: only the thread holding it lets it run",
		                 (int)p->pid);
	if (p->lent) /* (held as it is, or its copy kept, until the borrower is closed) */
		return adac_fail(err, ADAC_E_UNSUPPORTED, 0, "process %d: being read by another thread", (int)p->pid);
	if (p->was_stopped)
		return adac_fail(err, ADAC_E_UNSUPPORTED, 0, "process %d: was stopped before attaching; it stays stopped",
		                 (int)p->pid);
	if (p->released)
		return copy_again(p, ms, err);
	if (p->dwfl) { /* its thread states are the last stop's */
		dwfl_end(p->dwfl);
		p->dwfl = NULL;
	}
	for (size_t i = 0; i < p->nthreads; i++) {
		struct pid_thread *th = &p->threads[i];
		if (!th->gone && ptrace(PTRACE_CONT, th->tid, NULL, (void *)(long)th->resend_sig) == 0)
			th->resend_sig = 0;
	}
	sleep_ms((long)ms);
	for (size_t i = 0; i < p->nthreads; i++)
		if (!p->threads[i].gone)
			ptrace(PTRACE_INTERRUPT, p->threads[i].tid, NULL, NULL); /* (fails only if it exited) */
	int rc = 0;
	size_t kept = 0;
	for (size_t i = 0; i < p->nthreads; i++) {
		if (!p->threads[i].gone && wait_stopped(p, &p->threads[i], err))
			rc = -1;
		/* Threads that exited are forgotten (their ids may be reused by new ones); the leader's
		 * entry stays to tell that the process exited. */
		if (!p->threads[i].gone || p->threads[i].tid == p->pid)
			p->threads[kept++] = p->threads[i];
	}
	p->nthreads = kept;
	return rc ? rc : hold_all(p, "while it ran", err);
}

/* ---- open and close ---- */

/* reopen: the copy, or the process held, read by another thread through a target of its own,
 * which borrows the first one's copy, threads and registers (and must be closed before it). A
 * process cannot be attached twice (one tracer), but process_vm_readv and pread of /proc/pid/mem
 * read it from any thread; its registers are taken here, on the thread holding it. The process
 * then stays held as it is until the first target is closed (no run_briefly). */
static void *pid_reopen(void *impl, struct adac_error *err)
{
	struct ptarget *p = impl;
	if (p->borrowed) {
		adac_fail(err, ADAC_E_UNSUPPORTED, 0, "process %d: a target borrowing it cannot lend it", (int)p->pid);
		return NULL;
	}
	if (!p->released) {
		if (p->exited) {
			adac_fail(err, ADAC_E_IO, 0, "process %d has exited", (int)p->pid);
			return NULL;
		}
		if (save_regs(p, err))
			return NULL;
		open_mem_file(p); /* the borrower's fallback, shared: pread needs no lock */
	}
	struct ptarget *q = malloc(sizeof *q);
	if (!q) {
		adac_fail(err, ADAC_E_NOMEM, 0, "process %d: out of memory", (int)p->pid);
		return NULL;
	}
	*q = *p;
	p->lent = true;
	q->borrowed = true;
	q->dwfl = NULL;
	if (p->released) {
		q->mem_fd = -1;
		q->mem_tried = true;
	} else { /* its own module list (pid_modules reads it again), the same /proc/pid/mem */
		q->mods = NULL;
		q->nmods = 0;
	}
	q->native.symbols = NULL;
	return q;
}

static void pid_close(void *impl)
{
	struct ptarget *p = impl;
	if (!p)
		return;
	if (p->borrowed) {
		if (p->dwfl)
			dwfl_end(p->dwfl);
		if (!p->released)
			free_mods(p);
		free(p);
		return;
	}
	if (p->dwfl)
		dwfl_end(p->dwfl); /* before detaching: it may still hold thread state */
	if (!p->released)
		detach_all(p);
	if (p->mem_fd >= 0)
		close(p->mem_fd);
	drop_copy(p);
	free_mods(p);
	free(p->threads);
	free(p);
}

/* ---- copy and release ---- */

/* Frees the copy: its regions, their arena and the threads' registers. */
static void drop_copy(struct ptarget *p)
{
	for (size_t i = 0; i < p->nsnap; i++)
		if (!p->snap[i].in_arena)
			free(p->snap[i].data);
	free(p->snap);
	p->snap = NULL;
	p->nsnap = 0;
	if (p->arena != MAP_FAILED)
		munmap(p->arena, p->arena_size);
	p->arena = MAP_FAILED;
	p->arena_size = p->arena_used = 0;
	free(p->saved_regs);
	free(p->has_saved_regs);
	p->saved_regs = NULL;
	p->has_saved_regs = NULL;
	free(p->maps);
	p->maps = NULL;
	p->maps_len = 0;
}

/* Keeps /proc/pid/maps as it is: the mappings the copy takes and the modules its threads are
 * unwound through, from one read. */
static int copy_maps(struct ptarget *p, struct adac_error *err)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)p->pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return adac_fail(err, ADAC_E_IO, 0, "process %d: cannot read its mappings: %s", (int)p->pid, strerror(errno));
	size_t cap = 0;
	char buf[8192];
	for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) {
		if (adac_grow((void **)&p->maps, &cap, p->maps_len + n, 1, sizeof buf)) {
			fclose(f);
			return adac_fail(err, ADAC_E_NOMEM, 0, "process %d: out of memory", (int)p->pid);
		}
		memcpy(p->maps + p->maps_len, buf, n);
		p->maps_len += n;
	}
	fclose(f);
	return 0;
}

static int count_module(void *ctx, const struct adac_module *m)
{
	(void)m;
	(*(size_t *)ctx)++;
	return 0;
}

/* Calls cb(ctx, start, end) for each mapping of /proc/pid/maps the copy takes: readable, not the
 * kernel's [vvar] and [vsyscall]. The maps kept for the copy (copy_maps) once there are some. */
static int each_readable_mapping(struct ptarget *p, int (*cb)(void *ctx, uint64_t start, uint64_t end), void *ctx,
                                 struct adac_error *err)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)p->pid);
	FILE *f = p->maps ? fmemopen(p->maps, p->maps_len, "r") : fopen(path, "re");
	if (!f)
		return adac_fail(err, ADAC_E_IO, 0, "process %d: cannot read its mappings: %s", (int)p->pid, strerror(errno));
	char *line = NULL;
	size_t line_cap = 0, lines = 0;
	int rc = 0;
	while (rc == 0 && getline(&line, &line_cap, f) > 0) {
		if (++lines > ADAC_MAX_MAPPINGS) {
			rc = adac_fail(err, ADAC_E_LIMIT, 0, "process %d: more than ADAC_MAX_MAPPINGS (%u) mappings",
			               (int)p->pid, ADAC_MAX_MAPPINGS);
			break;
		}
		unsigned long long start, end;
		char perms[8];
		if (sscanf(line, "%llx-%llx %7s", &start, &end, perms) != 3 || perms[0] != 'r' || end <= start ||
		    strstr(line, "[vvar") || strstr(line, "[vsyscall]"))
			continue;
		rc = cb(ctx, start, end);
	}
	free(line);
	fclose(f);
	return rc;
}

static int add_size(void *ctx, uint64_t start, uint64_t end)
{
	*(uint64_t *)ctx += end - start;
	return 0;
}

/* Maps room for the copy, its pages touched now, while the process still runs: a copy into fresh
 * memory spends most of its time faulting the pages in (measured: 5.1 s instead of 1.3 s for
 * 2.9 GB), and that time would be spent with the process stopped. A sixteenth more than the
 * mappings have now leaves room for a heap that grows before the stop; without the arena (too
 * big, or no memory) each region is malloc'd as it is copied. */
static void map_arena(struct ptarget *p)
{
	uint64_t total = 0;
	p->arena = MAP_FAILED;
	if (each_readable_mapping(p, add_size, &total, NULL) || total > ADAC_MAX_SNAPSHOT_BYTES)
		return;
	size_t size = (size_t)(total + total / 16 + PAGE - 1) & ~(size_t)(PAGE - 1);
	if (!size)
		return;
	p->arena = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p->arena == MAP_FAILED)
		return;
	/* In 2 MB pages where the kernel has them: copying into 4 KB pages, and walking them after, missed
	 * the TLB all the time (1 M chains, 2.8 GB on a VM: stopped 2.2 s, not 0.14 s; ps 7-12 s, not
	 * 2.4 s). Their touch then, without MAP_POPULATE, which would take 4 KB pages before the advice. */
	(void)madvise(p->arena, size, MADV_HUGEPAGE);
	if (madvise(p->arena, size, MADV_POPULATE_WRITE))
		for (size_t off = 0; off < size; off += PAGE)
			p->arena[off] = 0;
	p->arena_size = size;
}

/* Room for n bytes of a region: from the arena while it lasts, else malloc'd. */
static uint8_t *copy_room(struct ptarget *p, size_t n, bool *in_arena)
{
	*in_arena = p->arena != MAP_FAILED && n <= p->arena_size - p->arena_used;
	if (!*in_arena)
		return malloc(n);
	uint8_t *d = p->arena + p->arena_used;
	p->arena_used += (n + 15) & ~(size_t)15;
	if (p->arena_used > p->arena_size)
		p->arena_used = p->arena_size;
	return d;
}

struct plan_ctx {
	struct ptarget *p;
	size_t cap;
	uint64_t total;
	struct adac_error *err;
};

/* A region of the copy for the mapping [start, end), with its room; nothing read yet (end = start). */
static int plan_mapping(void *ctx, uint64_t start, uint64_t end)
{
	struct plan_ctx *c = ctx;
	struct ptarget *p = c->p;
	if (c->total + (end - start) > ADAC_MAX_SNAPSHOT_BYTES)
		return adac_fail(c->err, ADAC_E_LIMIT, start,
		                 "process %d: its readable memory is more than ADAC_MAX_SNAPSHOT_BYTES (%llu)", (int)p->pid,
		                 (unsigned long long)ADAC_MAX_SNAPSHOT_BYTES);
	if (p->nsnap == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 256;
		struct snap_region *g = realloc(p->snap, ncap * sizeof *g);
		if (!g)
			return adac_fail(c->err, ADAC_E_NOMEM, 0, "process %d: out of memory copying it", (int)p->pid);
		p->snap = g;
		c->cap = ncap;
	}
	struct snap_region *r = &p->snap[p->nsnap];
	r->start = r->end = start;
	r->data = copy_room(p, end - start, &r->in_arena);
	if (!r->data)
		return adac_fail(c->err, ADAC_E_NOMEM, start, "process %d: out of memory copying %llu bytes", (int)p->pid,
		                 (unsigned long long)(end - start));
	r->end = end; /* for now: the size to read */
	c->total += end - start;
	p->nsnap++;
	return 0;
}

struct copy_work {
	struct ptarget *p;
	atomic_size_t next;    /* the next region to take */
	bool *whole;           /* per region: read whole by process_vm_readv */
};

/* Takes regions until none is left: each read in one process_vm_readv (what does not read whole is
 * read again alone, by pid_read, which finds where its readable part ends). */
static void *copy_regions(void *arg)
{
	struct copy_work *w = arg;
	size_t i;
	while ((i = atomic_fetch_add(&w->next, 1)) < w->p->nsnap) {
		struct snap_region *r = &w->p->snap[i];
		size_t len = (size_t)(r->end - r->start);
		w->whole[i] = read_vm(w->p->pid, r->start, r->data, len) == (ssize_t)len;
	}
	return NULL;
}

/* Reads the planned regions on two threads (the copy is most of the time the process is stopped,
 * and one thread reads about half as fast as two: 0.80 s against 0.40 s for 2.9 GB here), then
 * the rest as before, and drops what did not read. */
static int copy_planned(struct ptarget *p, struct adac_error *err)
{
	struct copy_work w = {.p = p, .whole = calloc(p->nsnap ? p->nsnap : 1, sizeof *w.whole)};
	if (!w.whole)
		return adac_fail(err, ADAC_E_NOMEM, 0, "process %d: out of memory copying it", (int)p->pid);
	atomic_init(&w.next, 0);
	pthread_t helper;
	bool helped = p->vm_readv_ok && p->nsnap > 1 && pthread_create(&helper, NULL, copy_regions, &w) == 0;
	if (p->vm_readv_ok)
		copy_regions(&w);
	if (helped)
		pthread_join(helper, NULL);
	size_t kept = 0;
	for (size_t i = 0; i < p->nsnap; i++) {
		struct snap_region r = p->snap[i];
		if (!w.whole[i]) {
			/* As far as it reads (a mapping of a file shorter than the mapping ends early). */
			struct adac_error e = {0};
			int64_t n = pid_read(p, r.start, r.data, (size_t)(r.end - r.start), &e);
			if (n <= 0) {
				if (!r.in_arena)
					free(r.data);
				continue;
			}
			r.end = r.start + (uint64_t)n;
		}
		p->snap[kept++] = r;
	}
	p->nsnap = kept;
	free(w.whole);
	return 0;
}

/* Copies every readable mapping (up to ADAC_MAX_SNAPSHOT_BYTES), the threads' registers and the
 * module list, then detaches: the process runs on while the copy is analysed. */
static int copy_and_release(struct ptarget *p, struct adac_error *err)
{
	size_t nmods = 0;
	if (pid_modules(p, count_module, &nmods, err))
		return -1;
	if (save_regs(p, err))
		return -1;
	struct plan_ctx c = {.p = p, .err = err};
	if (copy_maps(p, err) || each_readable_mapping(p, plan_mapping, &c, err) || copy_planned(p, err))
		return -1;
	detach_all(p);
	for (size_t i = 0; i < p->nthreads; i++)
		if (!p->threads[i].gone)
			p->threads[i].resend_sig = 0;
	p->released = true;
	/* The arena's unused end goes back. */
	size_t used = (p->arena_used + PAGE - 1) & ~(size_t)(PAGE - 1);
	if (p->arena != MAP_FAILED && used < p->arena_size) {
		munmap(p->arena + used, p->arena_size - used);
		p->arena_size = used;
		if (!used)
			p->arena = MAP_FAILED;
	}
	return 0;
}

/* local_path: a process in a container names the container's files (proc_ns.h). */
static int pid_local_path(void *impl, const char *path, char *buf, size_t size)
{
	struct ptarget *p = impl;
	return adac_proc_root_path(p->native.root, path, buf, size);
}

/* thread_of_process_tid: a process in a pid namespace of its own (a container) knows its threads
 * by other ids, read at attach. */
static uint64_t pid_thread_of_process_tid(void *impl, uint64_t process_tid, uint64_t stack_limit, uint64_t stack_base)
{
	(void)stack_limit;
	(void)stack_base;
	struct ptarget *p = impl;
	bool other_ns = false;
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct pid_thread *th = &p->threads[i];
		if (th->ns_tid == process_tid && !th->gone)
			return (uint64_t)th->tid;
		other_ns |= th->ns_tid && th->ns_tid != (uint64_t)th->tid;
	}
	return other_ns ? 0 : process_tid;
}

static const struct adac_target_ops pid_ops = {
	.kind = "pid",
	.read = pid_read,
	.read_concurrent = pid_read_concurrent,
	.read_ahead = 16, /* ps --pid --stats, 1 M chains: 53.5k reads to 5.1k, stopped 1.1-1.3 s, not 1.4-1.9 */
	.view = pid_view,
	.modules = pid_modules,
	.threads = pid_threads,
	.regs = pid_regs,
	.frames = pid_frames,
	.set_symbols = pid_set_symbols,
	.local_path = pid_local_path,
	.thread_of_process_tid = pid_thread_of_process_tid,
	.reopen = pid_reopen,
	.run_briefly = pid_run_briefly,
	.close = pid_close,
};

struct adac_target *adac_target_open_pid(int pid, struct adac_error *err)
{
	return adac_target_open_pid_ex(pid, 0, err);
}

struct adac_target *adac_target_open_pid_ex(int pid, unsigned flags, struct adac_error *err)
{
	if (pid <= 0) {
		adac_fail(err, ADAC_E_BAD_ARG, 0, "process %d: not a valid process id", pid);
		return NULL;
	}
	char st = thread_state(pid, pid);
	if (st == 0) {
		adac_fail(err, ADAC_E_NOT_FOUND, 0, "process %d: no such process", pid);
		return NULL;
	}
	long tgid = status_field(pid, pid, "Tgid:");
	if (tgid > 0 && tgid != pid) {
		adac_fail(err, ADAC_E_BAD_ARG, 0, "process %d: is a thread of process %ld; give the process id", pid, tgid);
		return NULL;
	}
	if (st == 'Z' || st == 'X') {
		adac_fail(err, ADAC_E_NOT_FOUND, 0, "process %d: has exited (zombie)", pid);
		return NULL;
	}
	if (pid == getpid()) {
		adac_fail(err, ADAC_E_BAD_ARG, 0, "process %d: cannot inspect asyncdac itself", pid);
		return NULL;
	}
	struct ptarget *p = calloc(1, sizeof *p);
	if (!p) {
		adac_fail(err, ADAC_E_NOMEM, 0, "process %d: out of memory", pid);
		return NULL;
	}
	p->pid = pid;
	p->mem_fd = -1;
	p->arena = MAP_FAILED;
	adac_proc_root(pid, p->native.root);
	if (flags & ADAC_PID_RELEASE)
		map_arena(p);
	p->vm_readv_ok = true;
	p->was_stopped = st == 'T';
	if (hold_all(p, "while attaching", err)) {
		pid_close(p);
		return NULL;
	}
	if ((flags & ADAC_PID_RELEASE) && copy_and_release(p, err)) {
		pid_close(p);
		return NULL;
	}
	return adac_target_new(&pid_ops, p, err);
}
