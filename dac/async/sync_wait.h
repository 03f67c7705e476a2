/* sync_wait.h - threads blocked synchronously on a task (sync-over-async: Task.Wait(), .Result,
 * GetAwaiter().GetResult()). Such a wait (Task.SpinThenBlockingWait, CoreLib 11.0) registers a
 * Task+SetOnInvokeMres as a continuation of the task (its m_continuationObject, or an item of the
 * List<object> there) and blocks in it. The waiting thread is a managed thread with a frame of
 * Task.SpinThenBlockingWait whose registers, or whose stack memory from its stack pointer up to that
 * frame's caller (the wait's own frames), hold the waiter's address (a thread without that frame
 * may hold a stale copy: it is not counted); or, for a wait no stack shows (frames that cannot be
 * unwound), the thread whose innermost blocking record waits on the Condition of the waiter's Lock
 * (blocked in the wait, not spinning before it). */
#ifndef ADAC_SYNC_WAIT_H
#define ADAC_SYNC_WAIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;
struct adac_async_scan;
struct adac_stack_frame;

/* The ways to wait synchronously for a task, as the views name them. */
#define ADAC_SYNC_WAYS "Task.Wait(), .Result or GetAwaiter().GetResult()"

/* Is f a frame of Task.SpinThenBlockingWait (CoreLib 11.0), where Task.Wait(), .Result and
 * GetAwaiter().GetResult() block? */
bool adac_sync_wait_frame(const struct adac_stack_frame *f);

struct adac_sync_wait {
	uint64_t task;          /* the task waited for */
	uint64_t waiter;        /* its Task+SetOnInvokeMres */
	uint64_t os_tid;        /* the thread holding the waiter, 0 when no thread's stack does */
	uint32_t managed_id;    /* its managed thread id */
	uint64_t slot;          /* the stack address holding it; 0 when a register does (in_register) ... */
	bool in_register;
	bool by_record;         /* ... or when no frame showed it: the thread's blocking record waits on the
	                         * Condition of the waiter's Lock */
};

struct adac_sync_waits {
	struct adac_sync_wait *waits;   /* in the scan's task order */
	size_t count;
	struct adac_error threads_err;  /* a thread whose stack could not be searched (first cause) */
};

/* Finds the synchronous waiters among the awaiters of the scan's tasks (adac_classic_resolve_awaiters
 * has run) and the threads holding them. -1 only when memory runs out; a runtime whose CoreLib has
 * not loaded Task+SetOnInvokeMres has none. Free with adac_sync_waits_free. */
int adac_sync_waits_find(struct adac_runtime *rt, const struct adac_async_scan *scan, struct adac_sync_waits *out,
                         struct adac_error *err);
void adac_sync_waits_free(struct adac_sync_waits *w);
/* The synchronous wait OS thread tid is in, NULL when none (or tid 0). */
const struct adac_sync_wait *adac_sync_wait_of_thread(const struct adac_sync_waits *w, uint64_t tid);

#endif
