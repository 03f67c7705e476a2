/* pending.h - every pending async operation of a process as logical stacks: the heap scan's
 * runtime-async chains and tasks (async_scan.h) stitched with classic state machines
 * (classic_async.h), the tasks they belong to, and what a listing made of each stack. */
#ifndef ADAC_PENDING_H
#define ADAC_PENDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "async/async_frame.h"
#include "async/async_scan.h"
#include "async/awaited.h"
#include "async/sync_wait.h"
#include "async/classic_async.h"
#include "async/lock_wait.h"
#include "async/wait_cycle.h"
#include "base/error.h"
#include "types/locks.h"

struct adac_runtime;
struct adac_out;

/* What became of a node: the best of its stacks' verdicts (ordered). */
enum adac_pending_fate {
	ADAC_PENDING_NOT_REACHED,
	ADAC_PENDING_FILTERED,        /* its stacks do not match the listing's filters */
	ADAC_PENDING_WITHOUT_FRAMES,  /* a stack nothing owns without a user frame (a sentinel) */
	ADAC_PENDING_LISTED,
};

struct adac_pending {
	struct adac_runtime *rt;
	struct adac_async_scan scan;
	struct adac_async_graph graph;
	uint8_t *fate;                /* per graph node: enum adac_pending_fate */
	struct adac_awaited_owners owners; /* the SemaphoreSlims behind awaited waiters */
	struct adac_sync_waits sync_waits; /* threads blocked synchronously on the tasks */
	/* When a running chain's thread waits to enter a lock, is in Monitor.Wait or waits on a
	 * ManualResetEventSlim: the locks held and who waits for them, and the Conditions waited on
	 * (has_locks; found only then: a heap pass of their own). */
	bool has_locks;
	struct adac_held_locks locks;
	struct adac_lock_waits lock_waits;
	/* When a thread waits synchronously for a task: the tasks of the stacks that run on threads, and
	 * the threads waiting for each other through them (and locks). */
	struct adac_task_runner *runners;  /* by task */
	size_t runner_count;
	struct adac_wait_cycles wait_cycles;
	double seconds_stacks;        /* wall time of building the stacks from the scan */
	double collected_at;          /* adac_seconds() when adac_pending_collect ended */
};

/* Scans the heap and the threads (flags: adac_async_scan's), resolves the tasks' awaiters and builds
 * the stacks, reporting progress to out's sink. -1 with err when the heap cannot be walked at all, a
 * layout is not understood or the user interrupted it (region failures are kept in p->scan.walk);
 * p is then empty. Free with adac_pending_free. */
int adac_pending_collect(struct adac_runtime *rt, struct adac_out *out, unsigned flags, struct adac_pending *p,
                         struct adac_error *err);
void adac_pending_free(struct adac_pending *p);

/* A task as listings show it: its MethodTable, type name and m_stateFlags (the scan's when it kept
 * the task, else read). Parts that cannot be read stay 0 / NULL / !has_flags. */
struct adac_task_desc {
	uint64_t addr, mt;
	const char *type;
	bool has_flags;
	uint32_t flags;
	uint32_t id;          /* m_taskId (Task.Id), 0 when never assigned or unreadable */
};
void adac_pending_task(const struct adac_pending *p, uint64_t addr, struct adac_task_desc *d);
/* The task of node n (adac_pending_node_task) described as adac_pending_task does, without looking
 * it up; d->addr is 0 when the node has no task. */
void adac_pending_node_task_desc(const struct adac_pending *p, const struct adac_async_node *n, struct adac_task_desc *d);
/* Both, reading the target and naming types through rt (a listing's helper's runtime,
 * view/pending_batches.h) instead of p's. */
void adac_pending_task_on(const struct adac_pending *p, struct adac_runtime *rt, uint64_t addr, struct adac_task_desc *d);
void adac_pending_node_task_desc_on(const struct adac_pending *p, struct adac_runtime *rt, const struct adac_async_node *n,
                                    struct adac_task_desc *d);

/* The task of a node: a chain's owner, a box, a task; 0 when unknown. */
uint64_t adac_pending_node_task(const struct adac_pending *p, const struct adac_async_node *n);
/* The thread running a stack that holds `task`, NULL when none does or no thread waits synchronously
 * for a task (runners are found only then). */
const struct adac_task_runner *adac_pending_task_runner(const struct adac_pending *p, uint64_t task);
/* The thread running the chain a stack starts with, else NULL. */
const struct adac_scan_running *adac_pending_running(const struct adac_pending *p, const struct adac_async_stack *st);
/* The task a stack's first node awaits through m_continuationObject, when the graph knows one, read
 * and named through rt (p's, or a listing helper's: adac_pending_task_on). */
bool adac_pending_awaited_task_on(const struct adac_pending *p, struct adac_runtime *rt, const struct adac_async_stack *st,
                                  struct adac_awaiting *a);

/* Records a listing's verdict on a stack's nodes. */
void adac_pending_set_fate(struct adac_pending *p, const struct adac_async_stack *st, enum adac_pending_fate f);
/* Why scan chain i is in no listed stack: "stale" (left behind after its chain resumed), "without
 * frames", "filtered" or "not reached"; NULL when it is listed. */
const char *adac_pending_unlisted(const struct adac_pending *p, size_t chain);

/* 0, or -1 with err when the heap walk stopped early in some region (the listing is incomplete). */
int adac_pending_heap_complete(const struct adac_pending *p, struct adac_error *err);

#endif
