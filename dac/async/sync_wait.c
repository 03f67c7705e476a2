/* sync_wait.c - see sync_wait.h. */
#include "async/sync_wait.h"

#include <stdlib.h>
#include <string.h>

#include "async/async_scan.h"
#include "async/blocking_info.h"
#include "async/thread_stack.h"
#include "base/addr_map.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "runtime/threads.h"
#include "types/corelib.h"
#include "types/fielddesc.h"

struct waiter_rec {
	uint64_t addr;     /* the key: a waiter */
	uint32_t index;    /* into waits */
};

struct finder {
	struct adac_runtime *rt;
	struct adac_sync_waits *w;
	struct adac_addr_map by_waiter;
	struct adac_addr_map by_lock;   /* struct waiter_rec keyed by the waiter's Lock (its m_lock) */
	size_t unmatched;
};

static void match(struct finder *f, uint64_t value, const struct adac_managed_thread *th, uint64_t slot, bool reg)
{
	struct waiter_rec *r = value ? adac_addr_map_find(&f->by_waiter, value) : NULL;
	if (!r || f->w->waits[r->index].os_tid)
		return;
	struct adac_sync_wait *w = &f->w->waits[r->index];
	w->os_tid = th->os_id;
	w->managed_id = th->managed_id;
	w->slot = slot;
	w->in_register = reg;
	f->unmatched--;
}

bool adac_sync_wait_frame(const struct adac_stack_frame *f)
{
	static const char name[] = "System.Threading.Tasks.Task.SpinThenBlockingWait(";
	return f->managed && f->symbol && strncmp(f->symbol, name, sizeof name - 1) == 0;
}

/* The frames of a thread up to the caller of its (innermost) synchronous wait. */
struct wait_frame {
	bool found;
	uint64_t caller_sp;   /* the wait's caller's stack pointer, 0 when unknown */
};

static int on_frame(void *ctx, const struct adac_stack_frame *sf)
{
	struct wait_frame *w = ctx;
	if (w->found) {
		w->caller_sp = sf->sp;
		return 1;
	}
	w->found = adac_sync_wait_frame(sf);
	return 0;
}

static void on_frame_error(void *ctx, const struct adac_error *err)
{
	(void)ctx;
	(void)err;
}

struct thread_words {
	struct finder *f;
	const struct adac_managed_thread *th;
};

static int on_word(void *ctx, uint64_t value, uint64_t slot, bool in_register)
{
	struct thread_words *w = ctx;
	match(w->f, value, w->th, slot, in_register);
	return !w->f->unmatched;
}

/* A thread blocked in the wait whose stack did not show it (frames that could not be unwound): its
 * innermost blocking record waits on the Condition of a waiter's Lock. */
static int on_thread_record(void *ctx, const struct adac_managed_thread *th)
{
	struct finder *f = ctx;
	struct adac_blocking b;
	if (!th->os_id || !f->unmatched || !adac_thread_innermost_blocking(f->rt, th, &b, NULL) ||
	    b.kind != ADAC_BLOCKING_CONDITION || !b.lock)
		return 0;
	const struct waiter_rec *r = adac_addr_map_find(&f->by_lock, b.lock);
	if (r && !f->w->waits[r->index].os_tid) {
		match(f, f->w->waits[r->index].waiter, th, 0, false);
		f->w->waits[r->index].by_record = true;
	}
	return 0;
}

/* A thread blocked in a synchronous wait: the waiters its registers, then its stack from the stack
 * pointer up to the wait's caller, hold. */
static int on_thread(void *ctx, const struct adac_managed_thread *th)
{
	struct finder *f = ctx;
	if (!th->os_id || !f->unmatched)
		return 0;
	struct wait_frame wf = {0};
	struct adac_stack_visitor v = {on_frame, on_frame_error, &wf};
	struct adac_error e = {0};
	adac_thread_stack_walk(f->rt, th->os_id, &v, &e);
	if (!wf.found)
		return 0;
	adac_error_clear(&e);
	struct thread_words w = {f, th};
	if (adac_thread_wait_words(f->rt, th, wf.caller_sp, on_word, &w, &e) && !adac_failed(&f->w->threads_err))
		adac_error_copy(&f->w->threads_err, &e);
	return 0;
}

int adac_sync_waits_find(struct adac_runtime *rt, const struct adac_async_scan *scan, struct adac_sync_waits *out,
                         struct adac_error *err)
{
	memset(out, 0, sizeof *out);
	uint64_t corelib, mres_mt = 0;
	if (adac_corelib_module(rt, &corelib, NULL) ||
	    adac_module_type(rt, corelib, "System.Threading.Tasks", "Task+SetOnInvokeMres", &mres_mt, NULL) || !mres_mt)
		return 0; /* never loaded: nobody ever blocked on a task */
	struct finder f = {.rt = rt, .w = out};
	size_t cap = 0;
	for (size_t i = 0; scan->task_links && i < scan->task_count; i++) {
		const struct adac_scan_task_link *t = &scan->task_links[i];
		for (uint32_t k = 0; k < t->awaiters_count; k++) {
			uint64_t a = scan->awaiters[t->awaiters_first + k], mt = 0;
			if (adac_scan_find_task(scan, a) != ADAC_SCAN_NONE || adac_scan_find_cont(scan, a) != ADAC_SCAN_NONE ||
			    adac_object_mt(rt, a, &mt, NULL) || mt != mres_mt)
				continue;
			bool added = false;
			struct waiter_rec *r = adac_addr_map_get(&f.by_waiter, a, sizeof *r, &added);
			if (!r)
				goto nomem;
			if (!added)
				continue;
			if (out->count == cap) {
				cap = cap ? cap * 2 : 16;
				struct adac_sync_wait *p = realloc(out->waits, cap * sizeof *p);
				if (!p)
					goto nomem;
				out->waits = p;
			}
			r->index = (uint32_t)out->count;
			out->waits[out->count++] = (struct adac_sync_wait){.task = scan->tasks[i].addr, .waiter = a};
		}
	}
	f.unmatched = out->count;
	if (f.unmatched) {
		struct adac_error e = {0};
		if (adac_managed_threads(rt, on_thread, &f, &e) && !adac_failed(&out->threads_err))
			adac_error_copy(&out->threads_err, &e);
	}
	/* Waits no stack showed: each waiter's Lock, whose Condition a thread blocked in the wait waits on. */
	for (size_t i = 0; f.unmatched && i < out->count; i++) {
		uint64_t lock = 0;
		if (out->waits[i].os_tid || adac_object_field_ptr(rt, out->waits[i].waiter, "m_lock", &lock, NULL) || !lock)
			continue;
		bool added = false;
		struct waiter_rec *r = adac_addr_map_get(&f.by_lock, lock, sizeof *r, &added);
		if (!r)
			goto nomem;
		if (added)
			r->index = (uint32_t)i;
	}
	if (f.unmatched && f.by_lock.used)
		adac_managed_threads(rt, on_thread_record, &f, NULL); /* (a failure: the stack pass said it) */
	adac_addr_map_free(&f.by_waiter);
	adac_addr_map_free(&f.by_lock);
	return 0;
nomem:
	adac_addr_map_free(&f.by_waiter);
	adac_addr_map_free(&f.by_lock);
	adac_sync_waits_free(out);
	return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory finding synchronous waiters");
}

const struct adac_sync_wait *adac_sync_wait_of_thread(const struct adac_sync_waits *w, uint64_t tid)
{
	for (size_t k = 0; tid && k < w->count; k++)
		if (w->waits[k].os_tid == tid)
			return &w->waits[k];
	return NULL;
}

void adac_sync_waits_free(struct adac_sync_waits *w)
{
	free(w->waits);
	memset(w, 0, sizeof *w);
}
