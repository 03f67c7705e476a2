/* lock_wait.h - threads blocked on locks: entering a Monitor (lock (obj), Monitor.Enter) or a
 * System.Threading.Lock, both of which wait in System.Threading.Lock.TryEnterSlow (CoreLib 11.0), and
 * waiting in Monitor.Wait for a pulse on an object's Monitor. Each comes from the thread's innermost
 * blocking record (blocking_info.h: the Lock it enters, the Condition it waits on), which the runtime
 * keeps for debuggers; a Condition is a Monitor's when its Lock is a sync block's (else it is
 * another waiter's: ManualResetEventSlim, under Task.Wait()). With the holders (types/locks.h), the
 * threads waiting for each other: lock deadlocks. (In async/ beside the other waits.) */
#ifndef ADAC_LOCK_WAIT_H
#define ADAC_LOCK_WAIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;
struct adac_held_locks;
struct adac_stack_frame;

/* Is f a frame of System.Threading.Lock.TryEnterSlow, where Monitor.Enter and Lock.Enter wait, or of
 * System.Threading.Condition.Wait, where Monitor.Wait (inlined or not) and ManualResetEventSlim wait?
 * (What makes `bt` ask adac_thread_blocked_on_lock.) */
bool adac_lock_wait_frame(const struct adac_stack_frame *f);
/* Whether OS thread tid is blocked (its innermost blocking record) entering a lock or in Monitor.Wait
 * (a Condition whose Lock a sync block uses: the sync table is read, not the heap). */
bool adac_thread_blocked_on_lock(struct adac_runtime *rt, uint64_t tid);
/* ... entering a lock or waiting on any Condition (Monitor.Wait, ManualResetEventSlim.Wait). */
bool adac_thread_blocked(struct adac_runtime *rt, uint64_t tid);

/* A thread waiting for a held lock. */
struct adac_lock_wait {
	size_t lock;            /* index into the held locks' array */
	uint64_t os_tid;
	uint32_t managed_id;
};

/* A thread in Monitor.Wait: waiting for a pulse on an object's Monitor. */
struct adac_monitor_wait {
	uint64_t object;        /* the object Monitor.Wait was called on */
	uint64_t condition;     /* the System.Threading.Condition it waits on */
	bool held;              /* the Monitor is held (by another thread: this one released it) ... */
	size_t lock;            /* ... index into the held locks' array */
	uint64_t os_tid;
	uint32_t managed_id;
	int32_t timeout_ms;     /* -1: none */
};

/* A thread waiting on another Condition: a ManualResetEventSlim's (Task.Wait() too), by its Lock. */
struct adac_condition_wait {
	uint64_t condition;
	uint64_t lock;          /* the Condition's Lock */
	uint64_t os_tid;
	uint32_t managed_id;
	int32_t timeout_ms;     /* -1: none */
};

struct adac_lock_waits {
	struct adac_lock_wait *waits;   /* by lock, then thread */
	size_t count;
	struct adac_monitor_wait *monitor_waits; /* by object, then thread */
	size_t monitor_wait_count;
	struct adac_condition_wait *condition_waits; /* by thread */
	size_t condition_wait_count;
	struct adac_error threads_err;  /* a thread whose blocking records could not be read (first cause) */
};

/* Finds the threads blocked on the held locks, the threads in Monitor.Wait, and the threads waiting on
 * other Conditions. -1 only when memory runs out. Free with adac_lock_waits_free. */
int adac_lock_waits_find(struct adac_runtime *rt, const struct adac_held_locks *locks, struct adac_lock_waits *out,
                         struct adac_error *err);
void adac_lock_waits_free(struct adac_lock_waits *w);
/* The wait of OS thread tid, NULL when it waits for no held lock. */
const struct adac_lock_wait *adac_lock_wait_of(const struct adac_lock_waits *w, uint64_t tid);
/* The Monitor.Wait of OS thread tid, NULL when it is in none. */
const struct adac_monitor_wait *adac_monitor_wait_of(const struct adac_lock_waits *w, uint64_t tid);
/* The other Condition OS thread tid waits on, NULL when none. */
const struct adac_condition_wait *adac_condition_wait_of(const struct adac_lock_waits *w, uint64_t tid);

/* Whether thread w waits in Task.Wait(), .Result or GetAwaiter().GetResult(): on a Condition whose
 * Lock is a Task+SetOnInvokeMres's (types/locks.h). Such a wait may close a deadlock through tasks
 * (wait_cycle.h), which only the heap's stacks show. */
bool adac_condition_wait_on_task(const struct adac_held_locks *locks, const struct adac_condition_wait *w);

/* A cycle of threads each waiting for a lock the next holds (a deadlock), as the lock indexes waited
 * for, in order from the thread waiting for the first: *n of them in cycle (room for `room`). The
 * first cycle found from lock `from` on (from: where the search goes on; it returns the next
 * `from`), false when none is left. Each cycle is reported once; one of more than `room` threads is
 * not reported (the views give room for ADAC_MAX_WAIT_CYCLE). */
bool adac_lock_cycle_next(const struct adac_held_locks *locks, const struct adac_lock_waits *waits, size_t *from,
                          size_t *cycle, size_t room, size_t *n);

#endif
