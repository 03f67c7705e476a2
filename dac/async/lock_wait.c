/* lock_wait.c - see lock_wait.h. */
#include "async/lock_wait.h"

#include <stdlib.h>
#include <string.h>

#include "async/thread_stack.h"
#include "base/addr_map.h"
#include "runtime/runtime.h"
#include "runtime/threads.h"
#include "types/locks.h"

struct lock_rec {
	uint64_t addr;     /* the key: a held lock's Lock or object */
	uint32_t index;    /* into the held locks */
};

struct finder {
	struct adac_runtime *rt;
	struct adac_lock_waits *w;
	size_t cap;
	struct adac_addr_map by_addr;
	bool nomem;
};

/* Where a lock's wait is: System.Threading.Lock's Enter and TryEnterSlow, and Monitor's Enter frames
 * above them (its ReliableEnter, Enter(Object), Enter(Object, Boolean&)). */
static bool lock_frame(const struct adac_stack_frame *f)
{
	static const char *const names[] = {"System.Threading.Lock.", "System.Threading.Monitor."};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (f->managed && f->symbol && strncmp(f->symbol, names[i], strlen(names[i])) == 0)
			return true;
	return false;
}

bool adac_lock_wait_frame(const struct adac_stack_frame *f)
{
	static const char name[] = "System.Threading.Lock.TryEnterSlow(";
	return f->managed && f->symbol && strncmp(f->symbol, name, sizeof name - 1) == 0;
}

struct wait_frames {
	bool found;           /* a TryEnterSlow frame */
	uint64_t caller_sp;   /* the stack pointer of the first frame after the lock frames, 0 when unknown */
};

static int on_frame(void *ctx, const struct adac_stack_frame *sf)
{
	struct wait_frames *w = ctx;
	if (w->found && !lock_frame(sf)) {
		w->caller_sp = sf->sp;
		return 1;
	}
	if (adac_lock_wait_frame(sf))
		w->found = true;
	return 0;
}

static int find_wait_frame(void *ctx, const struct adac_stack_frame *sf)
{
	return *(bool *)ctx = adac_lock_wait_frame(sf);
}

static void on_frame_error(void *ctx, const struct adac_error *err)
{
	(void)ctx;
	(void)err;
}

bool adac_thread_waits_lock(struct adac_runtime *rt, uint64_t tid)
{
	bool found = false;
	struct adac_stack_visitor v = {find_wait_frame, on_frame_error, &found};
	struct adac_error e = {0};
	adac_thread_stack_walk(rt, tid, &v, &e);
	return found;
}

const struct adac_lock_wait *adac_lock_wait_of(const struct adac_lock_waits *w, uint64_t tid)
{
	for (size_t i = 0; i < w->count; i++)
		if (w->waits[i].os_tid == tid)
			return &w->waits[i];
	return NULL;
}

/* The held lock whose Lock or object value is (its index), or -1. */
static long lock_of(struct finder *f, uint64_t value)
{
	struct lock_rec *r = value ? adac_addr_map_find(&f->by_addr, value) : NULL;
	return r ? (long)r->index : -1;
}

struct thread_words {
	struct finder *f;
	long found;
};

static int on_word(void *ctx, uint64_t value, uint64_t slot, bool in_register)
{
	(void)slot;
	(void)in_register;
	struct thread_words *w = ctx;
	return (w->found = lock_of(w->f, value)) >= 0;
}

/* A thread blocked in TryEnterSlow: the first held lock its registers, then its stack from the stack
 * pointer up to the lock frames' caller, hold. */
static int on_thread(void *ctx, const struct adac_managed_thread *th)
{
	struct finder *f = ctx;
	if (!th->os_id)
		return 0;
	struct wait_frames wf = {0};
	struct adac_stack_visitor v = {on_frame, on_frame_error, &wf};
	struct adac_error e = {0};
	adac_thread_stack_walk(f->rt, th->os_id, &v, &e);
	if (!wf.found)
		return 0;
	adac_error_clear(&e);
	struct thread_words w = {f, -1};
	if (adac_thread_wait_words(f->rt, th, wf.caller_sp, on_word, &w, &e)) {
		if (!adac_failed(&f->w->threads_err))
			adac_error_copy(&f->w->threads_err, &e);
		return 0;
	}
	if (w.found < 0)
		return 0;
	if (f->w->count == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 16;
		struct adac_lock_wait *p = realloc(f->w->waits, cap * sizeof *p);
		if (!p) {
			f->nomem = true;
			return 1;
		}
		f->w->waits = p;
		f->cap = cap;
	}
	f->w->waits[f->w->count++] = (struct adac_lock_wait){(size_t)w.found, th->os_id, th->managed_id};
	return 0;
}

static int cmp_wait(const void *a, const void *b)
{
	const struct adac_lock_wait *x = a, *y = b;
	if (x->lock != y->lock)
		return x->lock < y->lock ? -1 : 1;
	return x->os_tid < y->os_tid ? -1 : x->os_tid > y->os_tid;
}

int adac_lock_waits_find(struct adac_runtime *rt, const struct adac_held_locks *locks, struct adac_lock_waits *out,
                         struct adac_error *err)
{
	memset(out, 0, sizeof *out);
	struct finder f = {.rt = rt, .w = out};
	bool any_waiters = false;
	for (size_t i = 0; i < locks->count; i++) {
		const struct adac_held_lock *l = &locks->locks[i];
		uint64_t keys[2] = {l->object, l->lock};
		/* Only a lock whose state counts waiters can be waited for: a stale copy of another one's
		 * address in a waiting thread's stack is not taken for its wait. */
		if (!l->waiters)
			continue;
		any_waiters = true;
		for (size_t k = 0; k < 2; k++) {
			if (!keys[k])
				continue;
			struct lock_rec *r = adac_addr_map_get(&f.by_addr, keys[k], sizeof *r, NULL);
			if (!r)
				goto nomem;
			r->index = (uint32_t)i;
		}
	}
	/* (A lock whose state counts no waiter has none; a thin lock cannot have one.) */
	if (any_waiters) {
		struct adac_error e = {0};
		if (adac_managed_threads(rt, on_thread, &f, &e) && !adac_failed(&out->threads_err))
			adac_error_copy(&out->threads_err, &e);
		if (f.nomem)
			goto nomem;
	}
	if (out->count > 1)
		qsort(out->waits, out->count, sizeof *out->waits, cmp_wait);
	adac_addr_map_free(&f.by_addr);
	return 0;
nomem:
	adac_addr_map_free(&f.by_addr);
	adac_lock_waits_free(out);
	return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory finding the threads waiting for locks");
}

void adac_lock_waits_free(struct adac_lock_waits *w)
{
	free(w->waits);
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
