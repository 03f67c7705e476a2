/* wait_chain.h - the threads blocked in a wait the runtime records (a lock, Monitor.Wait,
 * ManualResetEventSlim.Wait) or waiting synchronously for a task, and for each what the thing it waits
 * on waits for in turn, down to the root cause:
 *
 *   then: thread tid <H> (managed thread <h>): waits synchronously for task 0x<T> (...)
 *   then: task 0x<T> is suspended: chain #0, <innermost frame> at <file>:<line>, awaiting ...
 *   then: its stack runs on thread tid <P> (...): waiting for <lock>, held by ...
 *   then: thread tid <A> (...) again: a deadlock
 *   then: thread tid <H> (...): no wait recorded: it is in <CoreLib method>, called from <method> at ...
 *
 * For report's "== Blocked threads" and `bt --thread`. */
#ifndef ADAC_WAIT_CHAIN_H
#define ADAC_WAIT_CHAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "async/lock_wait.h"
#include "async/pending.h"
#include "base/error.h"
#include "types/locks.h"

struct adac_runtime;
struct adac_pending;
struct adac_held_locks;
struct adac_lock_waits;
struct adac_out;

struct adac_blocked {
	char *text;          /* what the thread waits on, as a line of lock_view.h's (or a synchronous wait's) */
	uint64_t tid;
	uint32_t managed_id;
	uint64_t task;       /* it waits synchronously for this task, or */
	size_t lock;         /* (task 0, on_holder) for the holder of this held lock (to let it go, or to
	                      * pulse it in Monitor.Wait), or for neither */
	bool on_holder;
	bool worker;         /* a thread-pool worker */
};

/* The start of a warning when where_err below failed (its message follows). */
#define ADAC_WHERE_UNKNOWN "where the stacks of the tasks threads wait for are suspended is not known: "

struct adac_blocked_threads {
	struct adac_runtime *rt;
	struct adac_blocked *v;      /* by text, then thread */
	size_t n;
	struct adac_blocked **by_tid; /* v's entries by thread (adac_blocked_thread) */
	struct adac_pending *p;      /* the synchronous waits' and the tasks' runners; may be NULL */
	const struct adac_held_locks *h;
	uint64_t *suspended;         /* the tasks waited for synchronously that no thread runs (sorted) ... */
	char **where;                /* ... and where their stacks are suspended (NULL: not known) */
	size_t nsuspended;
	struct adac_error where_err; /* why where they are suspended is not known (the listing failed) */
	struct adac_out *out;
};

/* The blocked threads: p's synchronous waits (p may be NULL), h's and w's lock, Monitor and Condition
 * waits (both may be NULL), the thread-pool workers marked. -1 with err when memory runs out. Free
 * with adac_blocked_threads_free. */
int adac_blocked_threads_find(struct adac_runtime *rt, struct adac_pending *p, const struct adac_held_locks *h,
                              const struct adac_lock_waits *w, struct adac_out *out, struct adac_blocked_threads *b,
                              struct adac_error *err);
/* Then, before the chains are printed: where the stacks of the tasks they wait for are suspended, in
 * one listing of p's (where_err says why not, when it fails; no other listing of p may be under way).
 * -1 with err when the user interrupts it. */
int adac_blocked_threads_where(struct adac_blocked_threads *b, struct adac_error *err);
/* How many of them are thread-pool workers. */
size_t adac_blocked_workers(const struct adac_blocked_threads *b);
void adac_blocked_threads_free(struct adac_blocked_threads *b);
/* The entry of OS thread tid, NULL when it is not blocked. */
const struct adac_blocked *adac_blocked_thread(const struct adac_blocked_threads *b, uint64_t tid);

/* " (managed thread M[, thread-pool worker])" */
const char *adac_blocked_suffix(uint32_t managed_id, bool worker, char *buf, size_t size);

/* Everything that blocks threads, for a command that lists threads (threadpool, clrthreads): the locks
 * held and the threads' waits (a heap pass for the thin locks), and, only when a thread waits on a
 * task's Condition (Task.Wait()), the heap's stacks, for the synchronous waits; then the blocked
 * threads, and where the tasks they wait for are suspended. */
struct adac_blocking_scan {
	struct adac_held_locks h;
	struct adac_lock_waits lw;
	bool have_locks, have_waits, have_stacks;
	struct adac_pending p;
	struct adac_blocked_threads b;
	bool have_blocked;
	struct adac_error err;      /* why the blocked threads are not known (then none is) */
};
/* -1 with err only when the user interrupts it; k is to be freed either way. */
int adac_blocking_scan_find(struct adac_runtime *rt, struct adac_out *out, struct adac_blocking_scan *k,
                            struct adac_error *err);
void adac_blocking_scan_free(struct adac_blocking_scan *k);
/* The entry of OS thread tid, NULL when it is not blocked (or that is not known). */
const struct adac_blocked *adac_blocking_scan_thread(const struct adac_blocking_scan *k, uint64_t tid);
/* What the scan could not find, as a warning's text ("what threads wait for is not known: ...", or
 * ADAC_WHERE_UNKNOWN ...) in buf; NULL when it found all. */
const char *adac_blocking_scan_warning(const struct adac_blocking_scan *k, char *buf, size_t size);

/* Where a thread that waits on nothing recorded is: the innermost frame of the app's code (not
 * CoreLib's), and the CoreLib method it called (Thread.Sleep, a spin, I/O), if any. */
#define ADAC_WHERE_FRAMES 8
struct adac_whereabouts {
	char managed[ADAC_WHERE_FRAMES][200]; /* the innermost managed frames' methods, before the app's code */
	size_t nmanaged;
	char corelib[400];          /* "<method>[ at <file>:<line>]": the last CoreLib frame before ... */
	char app[400];              /* ... the first frame not in CoreLib; "" when none */
};
/* Walks thread tid's stack as `bt` does (what cannot be unwound leaves parts ""). */
void adac_thread_whereabouts(struct adac_runtime *rt, uint64_t tid, struct adac_whereabouts *w);
/* "it is in <CoreLib method>, called from <app's method> at <file>:<line>", "it is in <app's method>
 * at ...", in buf; NULL when the stack shows none of the app's code. */
const char *adac_whereabouts_text(const struct adac_whereabouts *w, char *buf, size_t size);

/* What thread tid does when it waits on nothing recorded, in buf: "running: it is in <method> at
 * <file>:<line>" (adac_whereabouts_text), or for a thread with none of the app's code on its stack
 * "idle: waiting for work" (a thread-pool worker), "gate thread: ..." (the pool's), "running: it is in
 * <CoreLib method>", for the finalizer thread (finalizer) with no managed frame "idle: waiting for
 * objects to finalize", else "no managed frame: see `bt --thread T`". */
void adac_thread_doing(struct adac_runtime *rt, uint64_t tid, bool finalizer, char *buf, size_t size);

/* The "  then: ..." lines after the n threads from `first` (all waiting on one thing): what that waits
 * for in turn (a lock's holder; a held Monitor's, for its pulse). Up to a thread seen already (a
 * deadlock), a wait that names no thread (Monitor.Wait on a Monitor nobody holds, a
 * ManualResetEventSlim) or ADAC_MAX_WAIT_CYCLE steps. */
void adac_wait_chain_print(const struct adac_blocked_threads *b, const struct adac_blocked *first, size_t n);
/* ... or their text without "  then: " appended to the JSON array then (report --json). */
struct json_t;
void adac_wait_chain(const struct adac_blocked_threads *b, const struct adac_blocked *first, size_t n,
                     struct json_t *then);

#endif
