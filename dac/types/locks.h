/* locks.h - the locks held in a process, as SOS `syncblk` and `dumpheap -thinlock` show them together:
 * every Monitor held (lock (obj): thin-lock bits in the object's header while nobody contended for it,
 * else its sync block's System.Threading.Lock) and every System.Threading.Lock held (lock (l) on a
 * Lock, Lock.Enter, EnterScope), with the managed thread holding it, how many times it entered, and
 * how many threads wait for it. One pass over the sync table, one over the GC heap. */
#ifndef ADAC_LOCKS_H
#define ADAC_LOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "runtime/gc_heap.h"

struct adac_runtime;

enum adac_lock_kind {
	ADAC_LOCK_MONITOR,  /* a Monitor whose sync block has a Lock (once contended) */
	ADAC_LOCK_THIN,     /* a Monitor held as thin-lock bits (header, or a sync block without a Lock) */
	ADAC_LOCK_LOCK,     /* a System.Threading.Lock object, used as such */
};

/* "Monitor", "Monitor, thin lock", "System.Threading.Lock". */
const char *adac_lock_kind_name(enum adac_lock_kind k);

struct adac_held_lock {
	uint64_t object;          /* what is locked: the object (a Monitor's), or the Lock */
	uint64_t lock;            /* ADAC_LOCK_MONITOR: the Lock behind it (in its sync block), else 0 */
	uint32_t sync_index;      /* its sync table entry, 0 when it has none */
	enum adac_lock_kind kind;
	uint32_t owner;           /* the managed thread id (Thread.Id) holding it */
	uint64_t owner_tid;       /* that thread's OS id, 0 when the runtime has no thread of that id */
	uint32_t entered;         /* times the owner entered it */
	bool has_waiters;         /* a Lock's state counts its waiting threads (a thin lock has none:
	                           * a thread that waits makes the runtime give it a Lock) */
	uint32_t waiters;
};

/* A sync block's Lock and the object whose Monitor it is (held or not). */
struct adac_sync_lock {
	uint64_t lock, object;
};

/* What a lock or lock object belongs to, for naming a thread's wait on it. */
enum adac_lock_owner_kind {
	ADAC_OWNER_SEMAPHORE,  /* a SemaphoreSlim's lock object: its Wait() is a Monitor.Wait on it */
	ADAC_OWNER_MRES,       /* a ManualResetEventSlim's Lock: its Wait() waits on the Lock's Condition */
	ADAC_OWNER_TASK_WAIT,  /* ... a Task+SetOnInvokeMres's: Task.Wait(), .Result, GetResult() */
};

struct adac_lock_object_owner {
	uint64_t object, owner;
	enum adac_lock_owner_kind kind;
};

struct adac_held_locks {
	struct adac_held_lock *locks;  /* by object address */
	size_t count;
	struct adac_sync_lock *sync_locks; /* every sync block's Lock, by Lock address */
	size_t sync_lock_count;
	struct adac_lock_object_owner *lock_owners; /* by object: the SemaphoreSlims of sync blocks' objects,
	                                             * the ManualResetEventSlims of Locks */
	size_t lock_owner_count;
	uint32_t sync_entries;         /* sync table entries in use */
	struct adac_gc_walk_report walk;
};

/* Finds every held lock (progress to `progress`, may be NULL). Regions the heap walk could not read
 * are in out->walk (thin locks there are missed); -1 with err when the sync table or the heap cannot
 * be read at all, or the runtime does not describe them. Free with adac_held_locks_free. */
int adac_held_locks_find(struct adac_runtime *rt, const struct adac_gc_walk_progress *progress,
                         struct adac_held_locks *out, struct adac_error *err);
void adac_held_locks_free(struct adac_held_locks *l);
/* What `object` belongs to: the SemaphoreSlim whose lock object it is (of those with a sync block), the
 * ManualResetEventSlim whose Lock it is; NULL when neither. */
const struct adac_lock_object_owner *adac_lock_object_owner(const struct adac_held_locks *h, uint64_t object);
/* The object whose Monitor uses `lock` (a sync block's Lock), 0 when none does. */
uint64_t adac_sync_lock_object(const struct adac_held_locks *h, uint64_t lock);

#endif
