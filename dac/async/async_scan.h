/* async_scan.h - every async chain of a process or core, for `ps`: one pass over the GC heap keeps
 * the continuations and the pending tasks (and classic state-machine boxes, and the SemaphoreSlims
 * whose waiters chains may await), the threads'
 * dispatcher records give the running chains, and the chains are built from them in memory
 * (docs/architecture.md, "All chains"). */
#ifndef ADAC_ASYNC_SCAN_H
#define ADAC_ASYNC_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "async/task.h"
#include "base/addr_index.h"
#include "base/error.h"
#include "runtime/gc_heap.h"

struct adac_runtime;

#define ADAC_SCAN_NONE ADAC_ADDR_NONE /* "no index" in the uint32_t index fields below (UINT32_MAX) */
#define ADAC_SCAN_STRAY (UINT32_MAX - 1) /* next_index: Next is no continuation of the heap's */

/* 16 bytes (4 M of them at a million chains): Next as the heap pass read it becomes, once
 * adac_async_scan_chains has linked the records, the index of its record (adac_scan_cont_next
 * gives the address). */
struct adac_scan_cont {
	uint64_t addr;
	union {
		uint64_t next;           /* the heap pass's, until the records are linked */
		struct {
			uint32_t chain;      /* the chain it belongs to, ADAC_SCAN_NONE if none */
			uint32_t next_index; /* the record of Next; ADAC_SCAN_NONE: null, ADAC_SCAN_STRAY: see
			                      * adac_async_scan.strays */
		};
	};
};

/* A Next that is no continuation found on the heap (an object the walk missed, a corrupt
 * pointer): few, kept apart, by continuation index. */
struct adac_scan_stray {
	uint64_t next;
	uint32_t cont;
};

/* 16 bytes (2 M of them at a million chains). What links a task to chains and awaiters is beside
 * it, in adac_async_scan.task_links, state_objects and task_chains; its MethodTable in task_types.
 * (Its m_taskId, shown only, is read from the target when shown.) */
struct adac_scan_task {
	uint64_t addr;
	uint32_t type;                  /* adac_async_scan.task_types[type] */
	uint32_t state_flags;           /* m_stateFlags */
};
/* The MethodTable of tasks (a handful, for millions of tasks). */
struct adac_scan_task_type {
	uint64_t mt;
	bool is_box;                    /* a classic state-machine box */
};
/* 8 bytes per task, at the task's index: needed until the stacks' graph has its edges
 * (adac_async_scan_drop_awaiters frees them). */
struct adac_scan_task_link {
	union {
		uint64_t continuation_object; /* m_continuationObject as the heap pass read it, until
		                               * classic_async.c resolves it (adac_async_scan.awaiters_resolved) */
		/* ... into what it resolves to (indices into adac_async_scan.awaiters): the awaiting
		 * continuations, boxes and tasks. */
		struct {
			uint32_t awaiters_first, awaiters_count;
		};
	};
};

enum adac_chain_root {
	ADAC_ROOT_RUNNING,   /* a thread's dispatcher record */
	ADAC_ROOT_TASK,      /* a task's m_stateObject */
	ADAC_ROOT_UNOWNED,   /* a continuation nothing points to, reaching no owned chain */
	ADAC_ROOT_STALE,     /* a continuation nothing points to, whose Next leads into an owned chain */
};

const char *adac_chain_root_name(enum adac_chain_root r);

enum adac_scan_end {
	ADAC_SCAN_END_COMPLETE,    /* Next == null */
	ADAC_SCAN_END_MERGED,      /* Next is a continuation of an earlier chain */
	ADAC_SCAN_END_MISSING,     /* Next is not a continuation found on the heap */
	ADAC_SCAN_END_CYCLE,       /* Next leads back into this chain */
	ADAC_SCAN_END_TRUNCATED,   /* ADAC_MAX_CHAIN_DEPTH links */
};

/* (24 bytes: a million chains. A running chain's thread is in adac_async_scan.running, at the
 * chain's own index; its owning task is adac_scan_chain_task.) */
struct adac_scan_chain {
	uint64_t head;
	uint32_t task_index;       /* in tasks, ADAC_SCAN_NONE if it is not there */
	uint32_t links;            /* continuations from the head, as found on the heap */
	uint32_t end_record;       /* MERGED, CYCLE, TRUNCATED: the continuation's record the walk
	                            * stopped at (MISSING: the last link's Next is a stray);
	                            * ADAC_SCAN_NONE otherwise */
	uint8_t root;              /* enum adac_chain_root */
	uint8_t end;               /* enum adac_scan_end */
};

/* A thread's running chain, as the dispatcher records give it (input of adac_async_scan_chains). */
struct adac_scan_running {
	uint64_t head;             /* NextContinuation */
	uint64_t task;             /* CurrentTask, 0 when not recorded */
	uint64_t os_tid;
	uint32_t managed_id;
	uint64_t dispatcher;
};

/* A SemaphoreSlim on the heap: what the chains of a convoy await (its waiters, awaited.h). */
struct adac_scan_semaphore {
	uint64_t addr;
	uint64_t mt;
};

struct adac_async_scan {
	struct adac_scan_cont *conts;   /* sorted by address; NULL once dropped */
	size_t cont_count;
	struct adac_scan_task *tasks;   /* sorted by address */
	size_t task_count;
	struct adac_scan_task_type *task_types;
	size_t task_type_count;
	struct adac_scan_task_link *task_links; /* by task; NULL once dropped */
	uint64_t *state_objects;        /* by task: m_stateObject, which the chains start from, as the heap
	                                 * pass read it; adac_async_scan_chains turns it into ... */
	uint32_t *state_conts;          /* ... by task: the record of the continuation m_stateObject is,
	                                 * ADAC_SCAN_NONE if none (4 bytes a task, not 8); adac_async_scan
	                                 * frees them once the chains are built */
	uint32_t *task_chains;          /* by task: the chain it owns (m_stateObject head, or a running
	                                 * chain's CurrentTask), ADAC_SCAN_NONE if none; set by
	                                 * adac_async_scan_chains, freed with the task links */
	struct adac_scan_chain *chains; /* RUNNING (chain i runs as running[i]), then TASK (by head
	                                 * address), then UNOWNED and STALE */
	size_t chain_count;
	struct adac_scan_running *running;
	size_t running_count;
	struct adac_addr_index cont_index, task_index; /* over conts and tasks, built by
	                                 * adac_async_scan_chains */
	bool linked;                    /* conts hold next_index, not next */
	struct adac_scan_stray *strays; /* by cont */
	size_t stray_count;
	struct adac_scan_semaphore *semaphores; /* every System.Threading.SemaphoreSlim, by address */
	size_t semaphore_count;
	uint64_t *awaiters;             /* classic_async.c: resolved m_continuationObject targets */
	size_t awaiter_count, awaiter_cap;
	uint32_t *awaiter_chains;       /* ... and per awaiter, the chain of the continuation it is
	                                 * (ADAC_SCAN_NONE: no continuation of the heap's), found while
	                                 * the continuation records are there: the stacks' graph needs
	                                 * no record after that */
	bool awaiters_resolved;         /* the tasks hold awaiters_first/count, not continuation_object */

	/* What the heap pass saw. */
	uint64_t objects;               /* objects walked */
	uint64_t tasks_seen;            /* Task-derived objects (kept or not) */
	uint64_t tasks_completed;       /* ... of which completed (not kept) */
	uint64_t boxes_seen;            /* state-machine boxes (kept or not) */
	uint64_t cont_mt;               /* the Continuation class, 0 when not loaded */
	bool structures_valid;          /* GC StructureInvalidCount == 0 */
	struct adac_gc_walk_report walk;
	struct adac_error threads_err;  /* dispatcher records that could not be read (first cause) */
	struct adac_error awaiters_cut; /* classic_async.c: a cap that cut what a task's continuation
	                                 * object was resolved to (first cause, ADAC_E_LIMIT) */
	double seconds_heap, seconds_link;
};

/* adac_async_scan's flags. MAY_RUN: the caller holds nothing the runtime owns and has shown nothing
 * of this stop, so a held process stopped where its heap cannot be walked may be let run and walked
 * again (adac_gc_rerun: it forgets what the runtime read). */
#define ADAC_SCAN_MAY_RUN 1u

/* Walks the heap and the threads' dispatcher records, then builds the chains (and, through
 * classic_async.c, resolves the tasks' awaiters). Region failures of the heap walk are kept in
 * scan->walk (the rest is still scanned). -1 with err when the heap cannot be walked at all, the
 * runtime's layout is not understood, or out (the walk's progress, "scanning the heap"; may be
 * NULL) says the user interrupted it. Free with adac_async_scan_free. */
struct adac_out;
int adac_async_scan(struct adac_runtime *rt, struct adac_out *out, unsigned flags,
                    struct adac_async_scan *scan, struct adac_error *err);

/* Every completed async task still on the heap, for `ps --completed` (SOS dumpasync --completed): a
 * classic state-machine box or a runtime-async task (AsyncHelpers+RuntimeAsyncTask<T>) whose
 * m_stateFlags say it ran to completion, faulted or was canceled. One more heap pass (region
 * failures in *rep, as adac_gc_walk; its progress to out, "finding completed tasks", which may be
 * NULL); cb returns non-zero to stop. */
typedef int (*adac_completed_cb)(void *ctx, uint64_t addr, uint64_t mt, uint32_t state_flags);
int adac_async_scan_completed(struct adac_runtime *rt, adac_completed_cb cb, void *ctx, struct adac_out *out,
                              struct adac_gc_walk_report *rep, struct adac_error *err);

/* Builds scan->chains from conts, tasks and running (the first time, sorting conts and tasks and
 * linking each continuation to the record of its Next; setting each continuation's and each
 * task's chain). Reads nothing from the target. */
int adac_async_scan_chains(struct adac_async_scan *scan, struct adac_error *err);

void adac_async_scan_free(struct adac_async_scan *scan);

/* Sets awaiter_chains from the awaiters and the continuation records (classic_async.c, once the
 * awaiters are resolved). */
int adac_async_scan_awaiter_chains(struct adac_async_scan *scan, struct adac_error *err);

/* Frees the continuation records (and their index) once nothing needs them: at a million chains
 * they are 64 MB that `ps` needs no more once the awaiters are resolved. cont_count still says how
 * many there were; adac_scan_find_cont finds none, and the chains cannot be built again. */
void adac_async_scan_drop_conts(struct adac_async_scan *scan);

/* Frees the awaiters, their chains and the task links once the stacks' graph holds its edges
 * (28 MB at a million chains). */
void adac_async_scan_drop_awaiters(struct adac_async_scan *scan);

/* Index of the continuation / task at addr, ADAC_SCAN_NONE if it was not found. */
uint32_t adac_scan_find_cont(const struct adac_async_scan *scan, uint64_t addr);
uint32_t adac_scan_find_task(const struct adac_async_scan *scan, uint64_t addr);
/* The chain of the continuation at addr, ADAC_SCAN_NONE if it is none of the heap's. */
uint32_t adac_scan_chain_of(const struct adac_async_scan *scan, uint64_t addr);
/* The Next of linked continuation i (0: null). */
uint64_t adac_scan_cont_next(const struct adac_async_scan *scan, uint32_t i);
/* The task that owns chain i: a running chain's CurrentTask, the task whose m_stateObject is its
 * head; 0 when none is known. */
uint64_t adac_scan_chain_task(const struct adac_async_scan *scan, uint32_t i);
/* Task i's MethodTable, and whether it is a classic state-machine box. */
static inline uint64_t adac_scan_task_mt(const struct adac_async_scan *scan, uint32_t i)
{
	return scan->task_types[scan->tasks[i].type].mt;
}
static inline bool adac_scan_task_is_box(const struct adac_async_scan *scan, uint32_t i)
{
	return scan->task_types[scan->tasks[i].type].is_box;
}

#endif
