/* awaited.h - what an awaited object is, for a human triaging a hang: a promise (a
 * TaskCompletionSource's task) never completed, a Task.Delay timer and its due time, a SemaphoreSlim
 * waiter, Task.WhenAll progress, Task.WhenAny, a socket operation (receive, send, accept, connect) and
 * its connection's endpoints (a pipe's descriptor when the socket is made over a pipe, as
 * System.IO.Pipes reads on Unix), a System.IO.Pipelines Pipe read and the bytes it holds unread,
 * or a completed task whose continuation has not run
 * (with the thread pool's workers and queue where the runtime exposes them, thread_pool.h: "the
 * thread pool is starved" when work waits and every worker it may have is busy).
 * Read from the object's own fields (by name, through the runtime's FieldDescs); the CoreLib type
 * says which fields to read. */
#ifndef ADAC_AWAITED_H
#define ADAC_AWAITED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/addr_map.h"
#include "base/error.h"

struct adac_runtime;
struct adac_async_scan;

/* Writes the description of the object at obj (MethodTable mt, type name `type`, m_stateFlags when
 * has_flags) into buf; "" when there is nothing to add to its type. Returns its kind, the same for
 * every object of that kind (no address, no figures): "promise never completed", "Task.Delay timer",
 * "Task.WhenAll", "Task.WhenAny", "SemaphoreSlim waiter", "socket receive" (send, accept, connect,
 * disconnect), "pipe receive" (send), "pipe read", "completed, awaiter not resumed"; NULL
 * when there is none. Never fails: unreadable parts are left out. */
const char *adac_awaited_describe(struct adac_runtime *rt, uint64_t obj, uint64_t mt, const char *type, bool has_flags,
                           uint32_t flags, char *buf, size_t size);

/* The shared object behind an awaited object that is one of many it hands out: the SemaphoreSlim
 * whose async waiter (SemaphoreSlim+TaskNode, queued from m_asyncHead through TaskNode.Next) a chain
 * awaits. A convoy of chains waiting for one lock awaits as many TaskNodes, but one semaphore. */
struct adac_awaited_owner {
	uint64_t addr;             /* the SemaphoreSlim */
	uint64_t mt;
	bool has_count;
	int32_t current_count;     /* m_currentCount */
	uint64_t waiters;          /* TaskNodes in its async queue */
	bool waiters_capped;       /* the queue was followed for ADAC_MAX_QUEUE_WAITERS nodes only */
};

struct adac_awaited_owners {
	struct adac_awaited_owner *owners;   /* one per SemaphoreSlim with async waiters */
	size_t count;
	struct adac_addr_map by_waiter;      /* waiter address -> index into owners */
};

/* Reads the async queue of every SemaphoreSlim the scan kept (unreadable ones are left out). -1 only
 * when memory runs out. Free with adac_awaited_owners_free. */
int adac_awaited_owners_build(struct adac_runtime *rt, const struct adac_async_scan *scan,
                              struct adac_awaited_owners *o, struct adac_error *err);
/* The owner of the awaited object at obj, NULL when it has none. */
const struct adac_awaited_owner *adac_awaited_owner_of(const struct adac_awaited_owners *o, uint64_t obj);
void adac_awaited_owners_free(struct adac_awaited_owners *o);

#endif
