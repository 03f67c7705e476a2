/* wait_cycle.c - see wait_cycle.h. The threads and what each waits for form a graph where each thread
 * has one edge at most (a thread blocks on one thing): walked from each synchronous wait in turn,
 * every thread once over all the walks (a walk that reaches a thread an earlier one reached can find
 * nothing new), so that a core of many blocked threads costs O(n log n). */
#include "async/wait_cycle.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "async/lock_wait.h"
#include "async/sync_wait.h"
#include "base/grow.h"
#include "base/limits.h"
#include "types/locks.h"

#define NO_SYNC ((size_t)-1)
#define NONE ((size_t)-1)

/* A thread waiting for something another thread holds or runs. */
struct node {
	uint32_t id;                 /* its managed id (the key) */
	uint32_t next;               /* the managed id of the thread that holds or runs what it waits for */
	size_t sync;                 /* its index in the synchronous waits; NO_SYNC: a lock wait */
	struct adac_wait_step step;
	size_t walk;                 /* 1 + the walk that reached it; 0: none yet */
	size_t at;                   /* its place on that walk's path */
};

/* By thread, a lock wait before a synchronous wait (a thread blocked on a lock waits for nothing
 * else: a synchronous wait of its is an old one), then by the synchronous waits' order. */
static int cmp_node(const void *a, const void *b)
{
	const struct node *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	if ((x->sync == NO_SYNC) != (y->sync == NO_SYNC))
		return x->sync == NO_SYNC ? -1 : 1;
	return (x->sync > y->sync) - (x->sync < y->sync);
}

static int cmp_runner(const void *a, const void *b)
{
	const struct adac_task_runner *x = a, *y = b;
	return (x->task > y->task) - (x->task < y->task);
}

void adac_task_runners_sort(struct adac_task_runner *runners, size_t n)
{
	if (n) /* (qsort takes no null array) */
		qsort(runners, n, sizeof *runners, cmp_runner);
}

const struct adac_task_runner *adac_task_runner_of(const struct adac_task_runner *runners, size_t n, uint64_t task)
{
	struct adac_task_runner key = {.task = task};
	return n ? bsearch(&key, runners, n, sizeof key, cmp_runner) : NULL;
}

/* The node of what thread `id` waits for (its first), NONE when it waits for nothing here. */
static size_t node_of(const struct node *nodes, size_t n, uint32_t id)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (nodes[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && nodes[lo].id == id ? lo : NONE;
}

/* Appends the cycle path[0 .. len) to out, from its first synchronous wait, when it has one and at
 * most ADAC_MAX_WAIT_CYCLE threads (a cycle of lock waits alone is adac_lock_cycle_next's). */
static int add_cycle(struct adac_wait_cycles *out, size_t *cap, size_t *ends_cap, const struct node *nodes,
                     const size_t *path, size_t len)
{
	size_t first = NONE;
	for (size_t k = 0; k < len; k++)
		if (nodes[path[k]].sync != NO_SYNC && (first == NONE || nodes[path[k]].sync < nodes[path[first]].sync))
			first = k;
	if (first == NONE || len > ADAC_MAX_WAIT_CYCLE)
		return 0;
	size_t used = out->count ? out->ends[out->count - 1] : 0;
	if (adac_grow((void **)&out->steps, cap, used + len, sizeof *out->steps, 16) ||
	    adac_grow((void **)&out->ends, ends_cap, out->count + 1, sizeof *out->ends, 4))
		return -1;
	for (size_t k = 0; k < len; k++)
		out->steps[used + k] = nodes[path[(first + k) % len]].step;
	out->ends[out->count++] = used + len;
	return 0;
}

int adac_wait_cycles_find(const struct adac_held_locks *locks, const struct adac_lock_waits *lw,
                          const struct adac_sync_waits *sw, const struct adac_task_runner *runners, size_t nrunners,
                          struct adac_wait_cycles *out, struct adac_error *err)
{
	memset(out, 0, sizeof *out);
	size_t nlocks = locks && lw ? lw->count : 0, n = 0, cap = 0, ends_cap = 0;
	struct node *nodes = adac_array_new(nlocks + sw->count, sizeof *nodes);
	size_t *path = adac_array_new(nlocks + sw->count, sizeof *path);
	if (!nodes || !path)
		goto nomem;
	for (size_t i = 0; i < nlocks; i++) {
		const struct adac_lock_wait *w = &lw->waits[i];
		nodes[n++] = (struct node){.id = w->managed_id, .next = locks->locks[w->lock].owner, .sync = NO_SYNC,
		                           .step = {w->os_tid, w->managed_id, 0, w->lock}};
	}
	for (size_t k = 0; k < sw->count; k++) {
		const struct adac_sync_wait *w = &sw->waits[k];
		const struct adac_task_runner *r = w->os_tid ? adac_task_runner_of(runners, nrunners, w->task) : NULL;
		if (r)
			nodes[n++] = (struct node){.id = w->managed_id, .next = r->managed_id, .sync = k,
			                           .step = {w->os_tid, w->managed_id, w->task, 0}};
	}
	qsort(nodes, n, sizeof *nodes, cmp_node);
	/* From each synchronous wait in turn (the thread's own step), the thread it waits for, what that
	 * one waits for, ...: up to a thread it reached already (a cycle), one an earlier walk reached
	 * (nothing new) or one that waits for nothing here. */
	for (size_t k = 0, walk = 1; k < sw->count; k++) {
		size_t at = node_of(nodes, n, sw->waits[k].managed_id), len = 0;
		if (at == NONE || nodes[at].sync != k)
			continue;
		while (at != NONE && !nodes[at].walk) {
			nodes[at].walk = walk;
			nodes[at].at = len;
			path[len++] = at;
			at = node_of(nodes, n, nodes[at].next);
		}
		if (at != NONE && nodes[at].walk == walk &&
		    add_cycle(out, &cap, &ends_cap, nodes, path + nodes[at].at, len - nodes[at].at))
			goto nomem;
		walk++;
	}
	free(nodes);
	free(path);
	return 0;
nomem:
	free(nodes);
	free(path);
	adac_wait_cycles_free(out);
	return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory finding deadlocks");
}

void adac_wait_cycles_free(struct adac_wait_cycles *c)
{
	free(c->steps);
	free(c->ends);
	memset(c, 0, sizeof *c);
}

const struct adac_wait_step *adac_wait_cycle_at(const struct adac_wait_cycles *c, size_t k, size_t *n)
{
	size_t at = k ? c->ends[k - 1] : 0;
	*n = c->ends[k] - at;
	return &c->steps[at];
}

const struct adac_wait_step *adac_wait_cycle_with(const struct adac_wait_cycles *c, const struct adac_wait_step *like,
                                                  size_t *n)
{
	for (size_t k = 0; (like->task || like->os_tid) && k < c->count; k++) {
		const struct adac_wait_step *steps = adac_wait_cycle_at(c, k, n);
		for (size_t s = 0; s < *n; s++)
			if ((!like->task || steps[s].task == like->task) && (!like->os_tid || steps[s].os_tid == like->os_tid))
				return steps;
	}
	return NULL;
}
