/* pending.c - the stacks of pending operations and the tasks they belong to. */
#include "async/pending.h"

#include <stdlib.h>
#include <string.h>

#include "async/awaited.h"
#include "async/task.h"
#include "base/clock.h"
#include "base/grow.h"
#include "base/output.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/methoddesc.h"
#include "types/names.h"

/* The tasks of the stacks that run on a thread (by task), and the threads waiting for each other through them
 * (wait_cycle.h), when a thread waits synchronously for a task at all. */
static int find_wait_cycles(struct adac_pending *p, struct adac_error *err)
{
	bool waited = false;
	for (size_t k = 0; k < p->sync_waits.count && !waited; k++)
		waited = p->sync_waits.waits[k].os_tid != 0;
	if (!waited)
		return 0;
	size_t cap = 0;
	for (size_t s = 0; s < p->graph.stack_count; s++) {
		const struct adac_async_stack *st = &p->graph.stacks[s];
		const struct adac_scan_running *r = adac_pending_running(p, st);
		for (uint32_t i = 0; r && i < st->count; i++) {
			uint64_t task = adac_pending_node_task(p, &p->graph.nodes[p->graph.stack_nodes[st->first + i]]);
			if (!task)
				continue;
			if (adac_grow((void **)&p->runners, &cap, p->runner_count + 1, sizeof *p->runners, 8))
				return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
			p->runners[p->runner_count++] = (struct adac_task_runner){task, r->os_tid, r->managed_id};
		}
	}
	adac_task_runners_sort(p->runners, p->runner_count);
	return adac_wait_cycles_find(p->has_locks ? &p->locks : NULL, p->has_locks ? &p->lock_waits : NULL,
	                             &p->sync_waits, p->runners, p->runner_count, &p->wait_cycles, err);
}

const struct adac_task_runner *adac_pending_task_runner(const struct adac_pending *p, uint64_t task)
{
	return adac_task_runner_of(p->runners, p->runner_count, task);
}

static int collect(struct adac_runtime *rt, struct adac_out *out, unsigned flags, struct adac_pending *p,
                   struct adac_error *err)
{
	if (adac_async_scan(rt, out, flags, &p->scan, err))
		return -1;
	double t0 = adac_seconds();
	if (adac_classic_resolve_awaiters(rt, &p->scan, err))
		return -1;
	double t1 = adac_seconds();
	p->scan.seconds_link += t1 - t0;
	if (adac_awaited_owners_build(rt, &p->scan, &p->owners, err) ||
	    adac_sync_waits_find(rt, &p->scan, &p->sync_waits, err))
		return -1;
	/* A running chain whose thread waits to enter a lock, is in Monitor.Wait or waits on another
	 * Condition (a ManualResetEventSlim's: not a Task.Wait()'s, which the synchronous waits name):
	 * which lock, held by whom, which event. */
	bool waits = false;
	for (size_t i = 0; i < p->scan.running_count && !waits; i++) {
		uint64_t tid = p->scan.running[i].os_tid;
		waits = adac_thread_blocked_on_lock(rt, tid) ||
		        (!adac_sync_wait_of_thread(&p->sync_waits, tid) && adac_thread_blocked(rt, tid));
	}
	if (waits) {
		const struct adac_gc_walk_progress progress = {out, "finding locks"};
		struct adac_error e = {0};
		if (adac_held_locks_find(rt, &progress, &p->locks, &e) == 0) {
			if (adac_lock_waits_find(rt, &p->locks, &p->lock_waits, NULL) == 0)
				p->has_locks = true;
			else
				adac_held_locks_free(&p->locks);
		} else if (e.code == ADAC_E_INTERRUPTED) { /* (else the listing goes on without them) */
			adac_error_copy(err, &e);
			return -1;
		}
	}
	/* The listings walk chains from their heads through the target, and the graph takes the
	 * awaiters' chains as found with the awaiters: the continuation records' work is done, and
	 * freeing them before the graph is built lowers the peak. */
	adac_async_scan_drop_conts(&p->scan);
	if (adac_async_graph_link(&p->scan, &p->graph, err))
		return -1;
	adac_async_scan_drop_awaiters(&p->scan); /* (the graph's edges were their last use) */
	if (adac_async_graph_stacks(&p->scan, &p->graph, err))
		return -1;
	p->collected_at = adac_seconds();
	p->seconds_stacks = p->collected_at - t1;
	p->fate = adac_array_zeroed(p->graph.node_count, sizeof *p->fate);
	if (!p->fate)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	return find_wait_cycles(p, err);
}

int adac_pending_collect(struct adac_runtime *rt, struct adac_out *out, unsigned flags, struct adac_pending *p,
                         struct adac_error *err)
{
	memset(p, 0, sizeof *p);
	p->rt = rt;
	if (collect(rt, out, flags, p, err) == 0)
		return 0;
	adac_pending_free(p);
	return -1;
}

void adac_pending_free(struct adac_pending *p)
{
	free(p->fate);
	adac_awaited_owners_free(&p->owners);
	adac_sync_waits_free(&p->sync_waits);
	adac_wait_cycles_free(&p->wait_cycles);
	free(p->runners);
	if (p->has_locks) {
		adac_lock_waits_free(&p->lock_waits);
		adac_held_locks_free(&p->locks);
	}
	adac_async_graph_free(&p->graph);
	adac_async_scan_free(&p->scan);
	memset(p, 0, sizeof *p);
}

/* The task at addr, record i of the scan (ADAC_SCAN_NONE: not a pending task the heap walk kept,
 * so read from the target). */
static void task_desc(const struct adac_pending *p, struct adac_runtime *rt, uint64_t addr, uint32_t i,
                      struct adac_task_desc *d)
{
	memset(d, 0, sizeof *d);
	d->addr = addr;
	if (!addr)
		return;
	const struct adac_task_layout *layout;
	bool known = adac_task_layout(rt, &layout, NULL) == 0;
	if (i != ADAC_SCAN_NONE) {
		d->mt = adac_scan_task_mt(&p->scan, i);
		d->flags = p->scan.tasks[i].state_flags;
		d->has_flags = true;
	} else if (known && adac_object_mt(rt, addr, &d->mt, NULL) == 0) {
		d->has_flags = adac_read_u32(rt->t, addr + layout->state_flags_off, &d->flags, NULL) == 0;
	} else {
		known = false;
	}
	/* (The scan does not keep it: it is shown only.) */
	if (known && layout->has_task_id && adac_read_u32(rt->t, addr + layout->task_id_off, &d->id, NULL))
		d->id = 0;
	if (d->mt)
		d->type = adac_type_name(rt, d->mt, 0, NULL);
}

void adac_pending_task(const struct adac_pending *p, uint64_t addr, struct adac_task_desc *d)
{
	adac_pending_task_on(p, p->rt, addr, d);
}

void adac_pending_task_on(const struct adac_pending *p, struct adac_runtime *rt, uint64_t addr, struct adac_task_desc *d)
{
	task_desc(p, rt, addr, addr ? adac_scan_find_task(&p->scan, addr) : ADAC_SCAN_NONE, d);
}

void adac_pending_node_task_desc(const struct adac_pending *p, const struct adac_async_node *n, struct adac_task_desc *d)
{
	adac_pending_node_task_desc_on(p, p->rt, n, d);
}

void adac_pending_node_task_desc_on(const struct adac_pending *p, struct adac_runtime *rt, const struct adac_async_node *n,
                                    struct adac_task_desc *d)
{
	if (n->kind == ADAC_NODE_CHAIN) {
		const struct adac_scan_chain *ch = &p->scan.chains[n->index];
		task_desc(p, rt, adac_scan_chain_task(&p->scan, n->index), ch->task_index, d);
	} else {
		task_desc(p, rt, p->scan.tasks[n->index].addr, n->index, d);
	}
}

uint64_t adac_pending_node_task(const struct adac_pending *p, const struct adac_async_node *n)
{
	if (n->kind == ADAC_NODE_CHAIN)
		return adac_scan_chain_task(&p->scan, n->index);
	return p->scan.tasks[n->index].addr;
}

const struct adac_scan_running *adac_pending_running(const struct adac_pending *p, const struct adac_async_stack *st)
{
	const struct adac_async_node *first = &p->graph.nodes[p->graph.stack_nodes[st->first]];
	if (first->kind != ADAC_NODE_CHAIN || p->scan.chains[first->index].root != ADAC_ROOT_RUNNING ||
	    first->index >= p->scan.running_count)
		return NULL;
	return &p->scan.running[first->index];
}

bool adac_pending_awaited_task_on(const struct adac_pending *p, struct adac_runtime *rt, const struct adac_async_stack *st,
                                  struct adac_awaiting *a)
{
	const struct adac_async_node *first = &p->graph.nodes[p->graph.stack_nodes[st->first]];
	memset(a, 0, sizeof *a);
	uint64_t awaits = adac_async_node_awaits(&p->scan, first);
	if (!awaits)
		return false;
	struct adac_task_desc d;
	adac_pending_task_on(p, rt, awaits, &d);
	a->object = d.addr;
	a->mt = d.mt;
	a->type = d.type;
	a->via = "m_continuationObject";
	a->has_state_flags = d.has_flags;
	a->state_flags = d.flags;
	a->kind = adac_awaited_describe(rt, a->object, a->mt, a->type, a->has_state_flags, a->state_flags, a->leaf,
	                                sizeof a->leaf);
	return true;
}

void adac_pending_set_fate(struct adac_pending *p, const struct adac_async_stack *st, enum adac_pending_fate f)
{
	for (uint32_t i = 0; i < st->count; i++) {
		uint32_t n = p->graph.stack_nodes[st->first + i];
		if (p->fate[n] < f)
			p->fate[n] = (uint8_t)f;
	}
}

const char *adac_pending_unlisted(const struct adac_pending *p, size_t chain)
{
	uint32_t node = p->graph.chain_node[chain];
	enum adac_pending_fate f = node == ADAC_SCAN_NONE ? ADAC_PENDING_NOT_REACHED : (enum adac_pending_fate)p->fate[node];
	if (f == ADAC_PENDING_LISTED)
		return NULL;
	return p->scan.chains[chain].root == ADAC_ROOT_STALE ? "stale"
	       : f == ADAC_PENDING_WITHOUT_FRAMES          ? "without frames"
	       : f == ADAC_PENDING_FILTERED                ? "filtered"
	                                                   : "not reached";
}

int adac_pending_heap_complete(const struct adac_pending *p, struct adac_error *err)
{
	return adac_gc_walk_report_complete(&p->scan.walk, p->scan.structures_valid, err);
}
