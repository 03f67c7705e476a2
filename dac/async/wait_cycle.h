/* wait_cycle.h - deadlocks through tasks: threads each waiting for the next, at least one of them
 * synchronously (Task.Wait(), ...: sync_wait.h) for a task whose stack runs on the next one (a
 * running chain), the others to enter a lock the next one holds (lock_wait.h) - sync-over-async
 * under a lock, the usual way a service hangs. Cycles of lock waits alone are adac_lock_cycle_next's. */
#ifndef ADAC_WAIT_CYCLE_H
#define ADAC_WAIT_CYCLE_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct adac_held_locks;
struct adac_lock_waits;
struct adac_sync_waits;

/* A task on a stack that runs on a thread: it cannot complete while that thread is blocked. */
struct adac_task_runner {
	uint64_t task;
	uint64_t os_tid;
	uint32_t managed_id;
};

/* Sorts runners by task, for adac_task_runner_of (n may be 0 with runners NULL). */
void adac_task_runners_sort(struct adac_task_runner *runners, size_t n);
/* The runner of `task` among runners sorted by task (any of equal ones), NULL when none. */
const struct adac_task_runner *adac_task_runner_of(const struct adac_task_runner *runners, size_t n, uint64_t task);

/* A step of a cycle: a thread and what it waits for, which the next step's thread (the first's, for
 * the last) runs or holds. */
struct adac_wait_step {
	uint64_t os_tid;
	uint32_t managed_id;
	uint64_t task;          /* a task waited for synchronously, whose stack the next thread runs; 0: */
	size_t lock;            /* the index of the held lock waited for, which the next thread holds */
};

struct adac_wait_cycles {
	struct adac_wait_step *steps;   /* the cycles' steps, one cycle after another */
	size_t *ends;                   /* cycle k: steps [k ? ends[k - 1] : 0, ends[k]) */
	size_t count;
};

/* Finds the cycles with a synchronous wait among the threads blocked synchronously on tasks (sw),
 * on locks (locks and lw; both NULL when not known) and the threads running the tasks (runners,
 * sorted by task: adac_task_runners_sort).
 * Each cycle is reported once, from its first synchronous wait; one of more than
 * ADAC_MAX_WAIT_CYCLE threads is not. -1 only when memory runs out. Free with adac_wait_cycles_free. */
int adac_wait_cycles_find(const struct adac_held_locks *locks, const struct adac_lock_waits *lw,
                          const struct adac_sync_waits *sw, const struct adac_task_runner *runners, size_t nrunners,
                          struct adac_wait_cycles *out, struct adac_error *err);
void adac_wait_cycles_free(struct adac_wait_cycles *c);
/* Cycle k (< c->count): its first step and step count. */
const struct adac_wait_step *adac_wait_cycle_at(const struct adac_wait_cycles *c, size_t k, size_t *n);
/* The cycle with a step like `like` (its task, when not 0, and its thread, when os_tid is not 0), as
 * its first step and step count; NULL when none. */
const struct adac_wait_step *adac_wait_cycle_with(const struct adac_wait_cycles *c, const struct adac_wait_step *like,
                                                  size_t *n);

#endif
