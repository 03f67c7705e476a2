/* thread_pool.h - the managed thread pool's state, where the runtime exposes it: the work items
 * waiting in its global queues and its worker threads (busy, existing, the cap). A completed task
 * whose continuation has not run, while every worker allowed is busy and work waits, is a starved
 * thread pool.
 *
 * CoreLib 11.0 names: ThreadPool.s_workQueue (a ThreadPoolWorkQueue: workItems,
 * highPriorityWorkItems, lowPriorityWorkItems, _assignableWorkItemQueues, each a
 * ConcurrentQueue<object>: _head -> ConcurrentQueueSegment<object> (_headAndTail.Head/Tail,
 * _slotsMask, _frozenForEnqueues, _nextSegment, _slots: Slot<object>[] of {Item, SequenceNumber}));
 * PortableThreadPool.ThreadPoolInstance (_minThreads, _maxThreads, _cpuUtilization,
 * _separated.counts._data: ThreadCounts, NumProcessingWork in bits 0-15, NumExistingThreads in bits
 * 16-31, the layout SOS's threadpool command reads too). The worker threads' local queues
 * (ThreadPoolWorkQueue+WorkStealingQueue: m_array, m_mask, m_headIndex, m_tailIndex; all of them in
 * WorkStealingQueueList.s_queues, each thread's in its [ThreadStatic]
 * ThreadPoolWorkQueueThreadLocals.threadLocals.workStealingQueue) are listed, not counted. */
#ifndef ADAC_THREAD_POOL_H
#define ADAC_THREAD_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;

struct adac_thread_pool {
	bool state_known;      /* whether it was started is known (CoreLib's statics were read) */
	bool started;          /* PortableThreadPool.ThreadPoolInstance exists: work was queued to the pool */
	bool has_queue;        /* the global queues were read */
	uint64_t queued;       /* work items in them */
	bool has_workers;      /* the worker counts were read */
	uint32_t working;      /* NumProcessingWork: workers running a work item */
	uint32_t existing;     /* NumExistingThreads */
	int32_t min, max;      /* _minThreads, _maxThreads */
	bool has_cpu;
	int32_t cpu;           /* _cpuUtilization: the pool's last CPU sample, in percent */
};

/* The thread pool's state, read once per runtime (parts the runtime does not expose, or that
 * cannot be read, are left out: has_queue/has_workers false). Never fails. */
const struct adac_thread_pool *adac_thread_pool(struct adac_runtime *rt);

/* The queues of work items, in the order a worker takes from them: its own local queue first, then
 * the global ones. */
enum adac_tp_queue {
	ADAC_TP_LOCAL,       /* a worker's WorkStealingQueue (a task queued by code running on a worker) */
	ADAC_TP_HIGH,        /* ThreadPoolWorkQueue.highPriorityWorkItems */
	ADAC_TP_ASSIGNABLE,  /* _assignableWorkItemQueues (one per group of processors, on large machines) */
	ADAC_TP_GLOBAL,      /* workItems */
	ADAC_TP_LOW,         /* lowPriorityWorkItems */
};

/* "Global", "Global high-pri", ... as SOS names the queues ("Local" for a local queue). */
const char *adac_tp_queue_name(enum adac_tp_queue q);

struct adac_tp_item {
	uint64_t obj;              /* the work item: a Task, an IThreadPoolWorkItem, a delegate's holder */
	enum adac_tp_queue queue;
	uint64_t owner_tid;        /* ADAC_TP_LOCAL: the OS thread whose queue it is, 0 when not known */
	uint32_t owner_managed_id;
};

/* Calls cb with every work item queued, queue by queue as enum adac_tp_queue orders them (local queues
 * in WorkStealingQueueList's order), each queue oldest first. cb returns non-zero to stop. -1 with
 * err (the first failure) when a queue cannot be read: the other queues are read, and every item
 * passed is valid; each queue is bounded (ADAC_MAX_QUEUE_SEGMENTS, ADAC_MAX_QUEUE_ITEMS). */
typedef int (*adac_tp_item_cb)(void *ctx, const struct adac_tp_item *item);
int adac_thread_pool_items(struct adac_runtime *rt, adac_tp_item_cb cb, void *ctx, struct adac_error *err);

/* What a thread the runtime marks as the pool's does, from the CoreLib methods on its stack (display
 * names, innermost first) when none of the app's code is on it: a worker waiting for work (on the
 * pool's LowLevelLifoSemaphore), the gate thread (PortableThreadPool+GateThread: it adds workers when
 * the pool starves), or something else. */
enum adac_tp_role { ADAC_TP_ROLE_OTHER, ADAC_TP_ROLE_IDLE, ADAC_TP_ROLE_GATE };
enum adac_tp_role adac_thread_pool_role(const char (*methods)[200], size_t n);

/* Whether tp shows a starved pool: work waits in the global queue while every worker the pool may
 * have is busy. */
bool adac_thread_pool_starved(const struct adac_thread_pool *tp);

/* "2 worker threads busy, 2 exist, at most 2; 4 work items in the global queues" (the workers' local
 * queues are `threadpool`'s), or the part that was read; "" when nothing was. */
void adac_thread_pool_text(const struct adac_thread_pool *tp, char *buf, size_t size);

#endif
