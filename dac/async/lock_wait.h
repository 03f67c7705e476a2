/* lock_wait.h - threads blocked entering a lock: a Monitor (lock (obj), Monitor.Enter) or a
 * System.Threading.Lock, both of which wait in System.Threading.Lock.TryEnterSlow (CoreLib 11.0). The
 * waiting thread is a managed thread with such a frame whose registers, or whose stack memory from
 * its stack pointer up to the caller of its Lock and Monitor frames (the wait's own frames), hold the
 * address of the Lock or object of a held lock whose state counts waiters (the first found, from the
 * registers on); a thread without that frame may hold a stale copy and is not counted. With the holders (types/locks.h), the threads waiting for each other: lock deadlocks.
 * (In async/ for the thread stacks it walks, as sync_wait.h.) */
#ifndef ADAC_LOCK_WAIT_H
#define ADAC_LOCK_WAIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;
struct adac_held_locks;
struct adac_stack_frame;

/* Is f a frame of System.Threading.Lock.TryEnterSlow, where Monitor.Enter and Lock.Enter wait? */
bool adac_lock_wait_frame(const struct adac_stack_frame *f);
/* Whether OS thread tid has such a frame (its stack is walked). */
bool adac_thread_waits_lock(struct adac_runtime *rt, uint64_t tid);

/* A thread waiting for a held lock. */
struct adac_lock_wait {
	size_t lock;            /* index into the held locks' array */
	uint64_t os_tid;
	uint32_t managed_id;
};

struct adac_lock_waits {
	struct adac_lock_wait *waits;   /* by lock, then thread */
	size_t count;
	struct adac_error threads_err;  /* a thread whose stack could not be searched (first cause) */
};

/* Finds the threads blocked on the held locks. -1 only when memory runs out. Free with
 * adac_lock_waits_free. */
int adac_lock_waits_find(struct adac_runtime *rt, const struct adac_held_locks *locks, struct adac_lock_waits *out,
                         struct adac_error *err);
void adac_lock_waits_free(struct adac_lock_waits *w);
/* The wait of OS thread tid, NULL when it waits for no held lock. */
const struct adac_lock_wait *adac_lock_wait_of(const struct adac_lock_waits *w, uint64_t tid);

/* A cycle of threads each waiting for a lock the next holds (a deadlock), as the lock indexes waited
 * for, in order from the thread waiting for the first: *n of them in cycle (room for `room`). The
 * first cycle found from lock `from` on (from: where the search goes on; it returns the next
 * `from`), false when none is left. Each cycle is reported once; one of more than `room` threads is
 * not reported (the views give room for 64). */
bool adac_lock_cycle_next(const struct adac_held_locks *locks, const struct adac_lock_waits *waits, size_t *from,
                          size_t *cycle, size_t room, size_t *n);

#endif
