/* lock_wait.c - see lock_wait.h. */
#include "async/lock_wait.h"

#include <stdlib.h>
#include <string.h>

#include "async/blocking_info.h"
#include "async/thread_stack.h"
#include "base/addr_map.h"
#include "base/grow.h"
#include "base/limits.h"
#include "runtime/runtime.h"
#include "runtime/sync_block.h"
#include "runtime/threads.h"
#include "types/locks.h"

struct lock_rec {
	uint64_t addr;     /* the key: the Lock of a held lock (a Monitor's sync block Lock, or the Lock) */
	uint32_t index;    /* into the held locks */
};

struct finder {
	struct adac_runtime *rt;
	const struct adac_held_locks *locks;
	struct adac_lock_waits *w;
	size_t cap, monitor_cap, condition_cap;
	struct adac_addr_map by_lock;
	bool nomem;
};

bool adac_lock_wait_frame(const struct adac_stack_frame *f)
{
	static const char *const names[] = {"System.Threading.Lock.TryEnterSlow(", "System.Threading.Condition.Wait("};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (f->managed && f->symbol && strncmp(f->symbol, names[i], strlen(names[i])) == 0)
			return true;
	return false;
}

struct lock_search {
	uint64_t lock;
	bool found;
};

static int find_lock(void *ctx, const struct adac_sync_entry *e)
{
	struct lock_search *s = ctx;
	return s->found = e->lock == s->lock;
}

bool adac_thread_blocked(struct adac_runtime *rt, uint64_t tid)
{
	struct adac_managed_thread th;
	struct adac_blocking b;
	return adac_managed_thread_of(rt, tid, &th, NULL) == 0 && adac_thread_innermost_blocking(rt, &th, &b, NULL) &&
	       b.kind != ADAC_BLOCKING_OTHER;
}

bool adac_thread_blocked_on_lock(struct adac_runtime *rt, uint64_t tid)
{
	struct adac_managed_thread th;
	struct adac_blocking b;
	if (adac_managed_thread_of(rt, tid, &th, NULL) || !adac_thread_innermost_blocking(rt, &th, &b, NULL))
		return false;
	if (b.kind == ADAC_BLOCKING_LOCK)
		return true;
	/* (A Condition is a Monitor's when a sync block uses its Lock.) */
	struct lock_search search = {b.lock, false};
	return b.kind == ADAC_BLOCKING_CONDITION && b.lock && adac_sync_blocks(rt, find_lock, &search, NULL) == 0 &&
	       search.found;
}

const struct adac_lock_wait *adac_lock_wait_of(const struct adac_lock_waits *w, uint64_t tid)
{
	for (size_t i = 0; i < w->count; i++)
		if (w->waits[i].os_tid == tid)
			return &w->waits[i];
	return NULL;
}

const struct adac_monitor_wait *adac_monitor_wait_of(const struct adac_lock_waits *w, uint64_t tid)
{
	for (size_t i = 0; i < w->monitor_wait_count; i++)
		if (w->monitor_waits[i].os_tid == tid)
			return &w->monitor_waits[i];
	return NULL;
}

const struct adac_condition_wait *adac_condition_wait_of(const struct adac_lock_waits *w, uint64_t tid)
{
	for (size_t i = 0; i < w->condition_wait_count; i++)
		if (w->condition_waits[i].os_tid == tid)
			return &w->condition_waits[i];
	return NULL;
}

bool adac_condition_wait_on_task(const struct adac_held_locks *locks, const struct adac_condition_wait *w)
{
	const struct adac_lock_object_owner *o = w ? adac_lock_object_owner(locks, w->lock) : NULL;
	return o && o->kind == ADAC_OWNER_TASK_WAIT;
}

/* The held lock whose Lock is `lock` (its index), or -1. */
static long held_of(struct finder *f, uint64_t lock)
{
	struct lock_rec *r = lock ? adac_addr_map_find(&f->by_lock, lock) : NULL;
	return r ? (long)r->index : -1;
}

static int add_wait(struct finder *f, size_t lock, const struct adac_managed_thread *th)
{
	if (adac_grow((void **)&f->w->waits, &f->cap, f->w->count + 1, sizeof *f->w->waits, 16))
		return -1;
	f->w->waits[f->w->count++] = (struct adac_lock_wait){lock, th->os_id, th->managed_id};
	return 0;
}

static int add_monitor_wait(struct finder *f, uint64_t object, const struct adac_blocking *b,
                            const struct adac_managed_thread *th)
{
	if (adac_grow((void **)&f->w->monitor_waits, &f->monitor_cap, f->w->monitor_wait_count + 1,
	               sizeof *f->w->monitor_waits, 16))
		return -1;
	long held = held_of(f, b->lock);
	f->w->monitor_waits[f->w->monitor_wait_count++] = (struct adac_monitor_wait){
		.object = object, .condition = b->object, .held = held >= 0, .lock = held >= 0 ? (size_t)held : 0,
		.os_tid = th->os_id, .managed_id = th->managed_id, .timeout_ms = b->timeout_ms};
	return 0;
}

static int add_condition_wait(struct finder *f, const struct adac_blocking *b, const struct adac_managed_thread *th)
{
	if (adac_grow((void **)&f->w->condition_waits, &f->condition_cap, f->w->condition_wait_count + 1,
	               sizeof *f->w->condition_waits, 16))
		return -1;
	f->w->condition_waits[f->w->condition_wait_count++] = (struct adac_condition_wait){
		b->object, b->lock, th->os_id, th->managed_id, b->timeout_ms};
	return 0;
}

/* A thread whose innermost blocking record enters a held lock, or waits on a Condition (a Monitor's,
 * or another's). */
static int on_thread(void *ctx, const struct adac_managed_thread *th)
{
	struct finder *f = ctx;
	if (!th->os_id)
		return 0;
	struct adac_blocking b;
	struct adac_error e = {0};
	if (!adac_thread_innermost_blocking(f->rt, th, &b, &e)) {
		if (adac_failed(&e) && !adac_failed(&f->w->threads_err))
			adac_error_copy(&f->w->threads_err, &e);
		return 0;
	}
	int rc = 0;
	if (b.kind == ADAC_BLOCKING_LOCK) {
		long held = held_of(f, b.lock);
		if (held >= 0)
			rc = add_wait(f, (size_t)held, th);
	} else if (b.kind == ADAC_BLOCKING_CONDITION) {
		uint64_t object = adac_sync_lock_object(f->locks, b.lock);
		rc = object ? add_monitor_wait(f, object, &b, th) : add_condition_wait(f, &b, th);
	}
	if (rc) {
		f->nomem = true;
		return 1;
	}
	return 0;
}

static int cmp_wait(const void *a, const void *b)
{
	const struct adac_lock_wait *x = a, *y = b;
	if (x->lock != y->lock)
		return x->lock < y->lock ? -1 : 1;
	return x->os_tid < y->os_tid ? -1 : x->os_tid > y->os_tid;
}

static int cmp_monitor_wait(const void *a, const void *b)
{
	const struct adac_monitor_wait *x = a, *y = b;
	if (x->object != y->object)
		return x->object < y->object ? -1 : 1;
	return x->os_tid < y->os_tid ? -1 : x->os_tid > y->os_tid;
}

static int cmp_condition_wait(const void *a, const void *b)
{
	const struct adac_condition_wait *x = a, *y = b;
	return x->os_tid < y->os_tid ? -1 : x->os_tid > y->os_tid;
}

int adac_lock_waits_find(struct adac_runtime *rt, const struct adac_held_locks *locks, struct adac_lock_waits *out,
                         struct adac_error *err)
{
	memset(out, 0, sizeof *out);
	struct finder f = {.rt = rt, .locks = locks, .w = out};
	for (size_t i = 0; i < locks->count; i++) {
		const struct adac_held_lock *l = &locks->locks[i];
		uint64_t key = l->kind == ADAC_LOCK_LOCK ? l->object : l->lock; /* (a thin lock has no Lock) */
		if (!key)
			continue;
		struct lock_rec *r = adac_addr_map_get(&f.by_lock, key, sizeof *r, NULL);
		if (!r)
			goto nomem;
		r->index = (uint32_t)i;
	}
	struct adac_error e = {0};
	if (adac_managed_threads(rt, on_thread, &f, &e) && !adac_failed(&out->threads_err))
		adac_error_copy(&out->threads_err, &e);
	if (f.nomem)
		goto nomem;
	if (out->count > 1)
		qsort(out->waits, out->count, sizeof *out->waits, cmp_wait);
	if (out->monitor_wait_count > 1)
		qsort(out->monitor_waits, out->monitor_wait_count, sizeof *out->monitor_waits, cmp_monitor_wait);
	if (out->condition_wait_count > 1)
		qsort(out->condition_waits, out->condition_wait_count, sizeof *out->condition_waits, cmp_condition_wait);
	adac_addr_map_free(&f.by_lock);
	return 0;
nomem:
	adac_addr_map_free(&f.by_lock);
	adac_lock_waits_free(out);
	return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory finding the threads waiting for locks");
}

void adac_lock_waits_free(struct adac_lock_waits *w)
{
	free(w->waits);
	free(w->monitor_waits);
	free(w->condition_waits);
	memset(w, 0, sizeof *w);
}

/* The wait of the thread with managed id `id`, or -1 when it waits for no lock. */
static long wait_of(const struct adac_lock_waits *w, uint32_t id)
{
	for (size_t i = 0; i < w->count; i++)
		if (w->waits[i].managed_id == id)
			return (long)i;
	return -1;
}

bool adac_lock_cycle_next(const struct adac_held_locks *locks, const struct adac_lock_waits *waits, size_t *from,
                          size_t *cycle, size_t room, size_t *n)
{
	for (size_t i = *from; i < waits->count; i++) {
		/* From wait i, the holder of what it waits for, that holder's wait, ...: a thread waits for
		 * one lock at most, so the walk either ends or comes round; a cycle is reported from its
		 * first wait only. */
		size_t len = 0, at = i;
		bool lowest = true;
		for (size_t steps = 0; steps <= waits->count; steps++) {
			if (len < room)
				cycle[len] = waits->waits[at].lock;
			len++;
			long next = wait_of(waits, locks->locks[waits->waits[at].lock].owner);
			if (next < 0)
				break;
			if ((size_t)next == i) {
				if (lowest && len <= room) {
					*n = len;
					*from = i + 1;
					return true;
				}
				break;
			}
			if ((size_t)next < i)
				lowest = false;
			at = (size_t)next;
		}
	}
	*from = waits->count;
	return false;
}
