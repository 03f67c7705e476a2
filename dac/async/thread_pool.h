/* thread_pool.h - the managed thread pool's state, where the runtime exposes it: the work items
 * waiting in its global queues and its worker threads (busy, existing, the cap). A completed task
 * whose continuation has not run, while every worker allowed is busy and work waits, is a starved
 * thread pool.
 *
 * CoreLib 11.0 names: ThreadPool.s_workQueue (a ThreadPoolWorkQueue: workItems,
 * highPriorityWorkItems, lowPriorityWorkItems, _assignableWorkItemQueues, each a
 * ConcurrentQueue<object>: _head -> ConcurrentQueueSegment<object> (_headAndTail.Head/Tail,
 * _slotsMask, _frozenForEnqueues, _nextSegment)); PortableThreadPool.ThreadPoolInstance (_minThreads,
 * _maxThreads, _separated.counts._data: ThreadCounts, NumProcessingWork in bits 0-15,
 * NumExistingThreads in bits 16-31, the layout SOS's threadpool command reads too). The worker
 * threads' own local queues are not counted. */
#ifndef ADAC_THREAD_POOL_H
#define ADAC_THREAD_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;

struct adac_thread_pool {
	bool has_queue;        /* the global queues were read */
	uint64_t queued;       /* work items in them */
	bool has_workers;      /* the worker counts were read */
	uint32_t working;      /* NumProcessingWork: workers running a work item */
	uint32_t existing;     /* NumExistingThreads */
	int32_t min, max;      /* _minThreads, _maxThreads */
};

/* The thread pool's state, read once per runtime (parts the runtime does not expose, or that
 * cannot be read, are left out: has_queue/has_workers false). Never fails. */
const struct adac_thread_pool *adac_thread_pool(struct adac_runtime *rt);

/* Whether tp shows a starved pool: work waits in the global queue while every worker the pool may
 * have is busy. */
bool adac_thread_pool_starved(const struct adac_thread_pool *tp);

/* "2 worker threads busy, 2 exist, at most 2; 4 work items queued", or the part that was read; "" when
 * nothing was. */
void adac_thread_pool_text(const struct adac_thread_pool *tp, char *buf, size_t size);

#endif
