/* wait_chain.c - see wait_chain.h. */
#include "view/wait_chain.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async/lock_wait.h"
#include "async/pending.h"
#include "async/thread_pool.h"
#include "async/thread_stack.h"
#include "base/grow.h"
#include "base/json.h"
#include "base/limits.h"
#include "base/output.h"
#include "base/strf.h"
#include "runtime/threads.h"
#include "types/locks.h"
#include "view/lock_view.h"
#include "view/pending_view.h"

static int cmp_blocked(const void *a, const void *b)
{
	const struct adac_blocked *x = a, *y = b;
	int c = strcmp(x->text, y->text);
	return c ? c : (x->tid > y->tid) - (x->tid < y->tid);
}

static int cmp_by_tid(const void *a, const void *b)
{
	const struct adac_blocked *x = *(const struct adac_blocked *const *)a, *y = *(const struct adac_blocked *const *)b;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static bool add_blocked(struct adac_blocked_threads *b, size_t *cap, const char *text, const struct adac_blocked *e)
{
	if (adac_grow((void **)&b->v, cap, b->n + 1, sizeof *b->v, 16))
		return false;
	char *copy = strdup(text);
	if (!copy)
		return false;
	b->v[b->n] = *e;
	b->v[b->n++].text = copy;
	return true;
}

/* The OS ids of the thread-pool workers, for marking blocked threads. */
struct workers {
	uint64_t *tids;
	size_t n, cap;
	bool nomem;
};

static int add_worker(void *ctx, const struct adac_managed_thread *th)
{
	struct workers *w = ctx;
	if (!th->os_id || !(th->state & ADAC_THREAD_STATE_TP_WORKER))
		return 0;
	if (adac_grow((void **)&w->tids, &w->cap, w->n + 1, sizeof *w->tids, 16)) {
		w->nomem = true;
		return 1;
	}
	w->tids[w->n++] = th->os_id;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Marks the blocked threads that are thread-pool workers (none when the threads cannot be read). */
static void mark_workers(struct adac_runtime *rt, struct adac_blocked *v, size_t n)
{
	struct workers w = {0};
	struct adac_error e = {0};
	if (n && adac_managed_threads(rt, add_worker, &w, &e) == 0 && !w.nomem && w.n) {
		qsort(w.tids, w.n, sizeof *w.tids, cmp_u64);
		for (size_t i = 0; i < n; i++)
			v[i].worker = bsearch(&v[i].tid, w.tids, w.n, sizeof *w.tids, cmp_u64) != NULL;
	}
	free(w.tids);
}

const char *adac_blocked_suffix(uint32_t managed_id, bool worker, char *buf, size_t size)
{
	snprintf(buf, size, " (managed thread %u%s)", managed_id, worker ? ", thread-pool worker" : "");
	return buf;
}

/* The tasks threads wait for synchronously that no thread runs, once each, and where their stacks are
 * suspended: one listing for all. -1 with err when the user interrupted it (a listing that fails
 * otherwise is a warning: the chains then stop at the task). */
static int find_suspended(struct adac_blocked_threads *b, struct adac_error *err)
{
	uint64_t *tasks = b->p ? calloc(b->n ? b->n : 1, sizeof *tasks) : NULL;
	char **where = tasks ? calloc(b->n ? b->n : 1, sizeof *where) : NULL;
	if (!where) {
		free(tasks);
		return 0;
	}
	size_t n = 0;
	for (size_t i = 0; i < b->n; i++)
		if (b->v[i].task)
			tasks[n++] = b->v[i].task;
	qsort(tasks, n, sizeof *tasks, cmp_u64);
	size_t kept = 0;
	for (size_t i = 0; i < n; i++)
		if ((i == 0 || tasks[i] != tasks[i - 1]) && !adac_pending_task_runner(b->p, tasks[i]))
			tasks[kept++] = tasks[i];
	b->suspended = tasks;
	b->where = where;
	b->nsuspended = kept;
	struct adac_error e = {0};
	if (!kept || adac_pending_tasks_where(b->p, tasks, kept, where, b->out, &e) == 0)
		return 0;
	if (e.code == ADAC_E_INTERRUPTED)
		return adac_error_copy(err, &e);
	adac_error_copy(&b->where_err, &e);
	return 0;
}

int adac_blocked_threads_find(struct adac_runtime *rt, struct adac_pending *p, const struct adac_held_locks *h,
                              const struct adac_lock_waits *w, struct adac_out *out, struct adac_blocked_threads *b,
                              struct adac_error *err)
{
	memset(b, 0, sizeof *b);
	b->rt = rt;
	b->p = p;
	b->h = h;
	b->out = out;
	size_t cap = 0;
	char text[700];
	bool ok = true;
	for (size_t i = 0; p && ok && i < p->sync_waits.count; i++) {
		const struct adac_sync_wait *s = &p->sync_waits.waits[i];
		if (!s->os_tid)
			continue;
		snprintf(text, sizeof text, "waits synchronously for task 0x%016llx (" ADAC_SYNC_WAYS ")",
		         (unsigned long long)s->task);
		ok = add_blocked(b, &cap, text, &(struct adac_blocked){.tid = s->os_tid, .managed_id = s->managed_id,
		                                                       .task = s->task});
	}
	for (size_t i = 0; w && ok && i < w->count; i++) {
		const struct adac_lock_wait *l = &w->waits[i];
		ok = add_blocked(b, &cap, adac_lock_waiting_text(rt, &h->locks[l->lock], text, sizeof text),
		                 &(struct adac_blocked){.tid = l->os_tid, .managed_id = l->managed_id, .lock = l->lock,
		                                        .on_holder = true});
	}
	for (size_t i = 0; w && ok && i < w->monitor_wait_count; i++) {
		const struct adac_monitor_wait *m = &w->monitor_waits[i];
		ok = add_blocked(b, &cap, adac_lock_monitor_wait_text(rt, h, m, text, sizeof text),
		                 &(struct adac_blocked){.tid = m->os_tid, .managed_id = m->managed_id, .lock = m->lock,
		                                        .on_holder = m->held});
	}
	for (size_t i = 0; w && ok && i < w->condition_wait_count; i++) {
		const struct adac_condition_wait *c = &w->condition_waits[i];
		if (adac_lock_condition_wait_text(h, c, text, sizeof text)) /* (NULL: a Task.Wait()'s, above) */
			ok = add_blocked(b, &cap, text, &(struct adac_blocked){.tid = c->os_tid, .managed_id = c->managed_id});
	}
	if (!ok) {
		adac_blocked_threads_free(b);
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory listing the blocked threads");
	}
	mark_workers(rt, b->v, b->n);
	if (b->n > 1)
		qsort(b->v, b->n, sizeof *b->v, cmp_blocked);
	b->by_tid = malloc((b->n ? b->n : 1) * sizeof *b->by_tid);
	if (!b->by_tid) {
		adac_blocked_threads_free(b);
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory listing the blocked threads");
	}
	for (size_t i = 0; i < b->n; i++)
		b->by_tid[i] = &b->v[i];
	if (b->n > 1)
		qsort(b->by_tid, b->n, sizeof *b->by_tid, cmp_by_tid);
	return 0;
}

int adac_blocked_threads_where(struct adac_blocked_threads *b, struct adac_error *err)
{
	return b->where ? 0 : find_suspended(b, err);
}

size_t adac_blocked_workers(const struct adac_blocked_threads *b)
{
	size_t n = 0;
	for (size_t i = 0; i < b->n; i++)
		n += b->v[i].worker;
	return n;
}

void adac_blocked_threads_free(struct adac_blocked_threads *b)
{
	for (size_t k = 0; k < b->nsuspended; k++)
		free(b->where[k]);
	free(b->where);
	free(b->suspended);
	for (size_t i = 0; i < b->n; i++)
		free(b->v[i].text);
	free(b->v);
	free(b->by_tid);
	memset(b, 0, sizeof *b);
}

const struct adac_blocked *adac_blocked_thread(const struct adac_blocked_threads *b, uint64_t tid)
{
	const struct adac_blocked key = {.tid = tid}, *k = &key;
	const struct adac_blocked *const *e = b->n ? bsearch(&k, b->by_tid, b->n, sizeof *b->by_tid, cmp_by_tid) : NULL;
	return e ? *e : NULL;
}

/* A step of a chain: "  then: <text>" printed, or <text> appended to then. */
__attribute__((format(printf, 3, 4))) static void then_line(const struct adac_blocked_threads *b, json_t *then,
                                                            const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = adac_vformat(fmt, ap);
	va_end(ap);
	if (!text)
		return; /* (out of memory: the step is left out) */
	if (then)
		json_array_append_new(then, adac_json_text(text));
	else
		adac_print(b->out, "  then: %s\n", text);
	free(text);
}

static void frame_where(const struct adac_stack_frame *f, char *buf, size_t size)
{
	const char *file = f->file ? strrchr(f->file, '/') : NULL;
	file = file ? file + 1 : f->file;
	if (file && f->line)
		snprintf(buf, size, "%s at %s:%u", f->symbol, file, f->line);
	else
		snprintf(buf, size, "%s", f->symbol);
}

static int where_frame(void *ctx, const struct adac_stack_frame *f)
{
	struct adac_whereabouts *w = ctx;
	if (!f->managed || !f->symbol)
		return 0;
	if (f->module && strcmp(f->module, "System.Private.CoreLib.dll") == 0) {
		frame_where(f, w->corelib, sizeof w->corelib);
		if (w->nmanaged < ADAC_WHERE_FRAMES)
			snprintf(w->managed[w->nmanaged++], sizeof *w->managed, "%s", f->symbol);
		return 0;
	}
	frame_where(f, w->app, sizeof w->app);
	return 1; /* (the app's code: where it is stuck) */
}

static void where_error(void *ctx, const struct adac_error *err)
{
	(void)ctx;
	(void)err; /* (what was found before is shown) */
}

void adac_thread_whereabouts(struct adac_runtime *rt, uint64_t tid, struct adac_whereabouts *w)
{
	memset(w, 0, sizeof *w);
	const struct adac_stack_visitor v = {where_frame, where_error, w};
	struct adac_error e = {0};
	if (rt)
		adac_thread_stack_walk(rt, tid, &v, &e);
}

const char *adac_whereabouts_text(const struct adac_whereabouts *w, char *buf, size_t size)
{
	if (!w->app[0])
		return NULL;
	if (!w->corelib[0])
		snprintf(buf, size, "it is in %s", w->app);
	else
		snprintf(buf, size, "it is in %s, called from %s", w->corelib, w->app);
	return buf;
}

void adac_thread_doing(struct adac_runtime *rt, uint64_t tid, bool finalizer, char *buf, size_t size)
{
	struct adac_whereabouts w;
	char where[900];
	adac_thread_whereabouts(rt, tid, &w);
	enum adac_tp_role role = adac_thread_pool_role((const char (*)[200])w.managed, w.nmanaged);
	if (adac_whereabouts_text(&w, where, sizeof where))
		snprintf(buf, size, "running: %s", where);
	else if (role == ADAC_TP_ROLE_IDLE)
		snprintf(buf, size, "idle: waiting for work");
	else if (role == ADAC_TP_ROLE_GATE)
		snprintf(buf, size, "gate thread: adds workers when the pool starves (not a worker)");
	else if (w.nmanaged)
		snprintf(buf, size, "running: it is in %s", w.managed[0]);
	else if (finalizer) /* (a finalizer runs managed code: with none, it waits for work) */
		snprintf(buf, size, "idle: waiting for objects to finalize");
	else
		snprintf(buf, size, "no managed frame: see `bt --thread %llu`", (unsigned long long)tid);
}

/* "no wait recorded: it is in <CoreLib method>, called from <app's method> at <file>:<line>: see `bt
 * --thread T`" ("it is in <app's method> at ..." when it runs the app's code), or without where it is
 * when its stack shows none of the app's code. */
static void no_wait_text(const struct adac_blocked_threads *b, uint64_t tid, char *buf, size_t size)
{
	struct adac_whereabouts w;
	char where[900];
	adac_thread_whereabouts(b->rt, tid, &w);
	if (adac_whereabouts_text(&w, where, sizeof where))
		snprintf(buf, size, "no wait recorded: %s: see `bt --thread %llu`", where, (unsigned long long)tid);
	else
		snprintf(buf, size, "no wait recorded: see `bt --thread %llu`", (unsigned long long)tid);
}

/* "<who> thread tid T (managed thread M): <what it waits on>", or that it waits for nothing recorded
 * and where it is; its entry, NULL when none. */
static const struct adac_blocked *then_thread(const struct adac_blocked_threads *b, json_t *then, const char *who,
                                              uint64_t tid, uint32_t managed_id)
{
	const struct adac_blocked *e = adac_blocked_thread(b, tid);
	char suffix[64];
	adac_blocked_suffix(managed_id, e && e->worker, suffix, sizeof suffix);
	if (e)
		then_line(b, then, "%sthread tid %llu%s: %s", who, (unsigned long long)tid, suffix, e->text);
	else {
		char text[1024];
		no_wait_text(b, tid, text, sizeof text);
		then_line(b, then, "%sthread tid %llu%s: %s", who, (unsigned long long)tid, suffix, text);
	}
	return e;
}

void adac_wait_chain_print(const struct adac_blocked_threads *b, const struct adac_blocked *first, size_t n)
{
	adac_wait_chain(b, first, n, NULL);
}

void adac_wait_chain(const struct adac_blocked_threads *b, const struct adac_blocked *first, size_t n, json_t *then)
{
	uint64_t seen[ADAC_MAX_WAIT_CYCLE];
	size_t nseen = 0;
	for (size_t k = 0; k < n && nseen < ADAC_MAX_WAIT_CYCLE; k++)
		seen[nseen++] = first[k].tid;
	const struct adac_blocked *e = first;
	while (e && nseen < ADAC_MAX_WAIT_CYCLE) {
		uint64_t tid;
		uint32_t managed_id;
		const char *who = "";
		if (e->on_holder) {
			tid = b->h->locks[e->lock].owner_tid;
			managed_id = b->h->locks[e->lock].owner;
		} else if (e->task) {
			const struct adac_task_runner *r = b->p ? adac_pending_task_runner(b->p, e->task) : NULL;
			if (!r) {
				const uint64_t *k = b->nsuspended ? bsearch(&e->task, b->suspended, b->nsuspended, sizeof *k, cmp_u64)
				                                  : NULL;
				if (k && b->where[k - b->suspended])
					then_line(b, then, "task 0x%016llx is suspended: %s", (unsigned long long)e->task,
					          b->where[k - b->suspended]);
				return;
			}
			tid = r->os_tid;
			managed_id = r->managed_id;
			who = "its stack runs on ";
		} else
			return;
		if (!tid)
			return;
		for (size_t i = 0; i < nseen; i++)
			if (seen[i] == tid) {
				const struct adac_blocked *again = adac_blocked_thread(b, tid);
				char suffix[64];
				then_line(b, then, "%sthread tid %llu%s again: a deadlock", who, (unsigned long long)tid,
				          adac_blocked_suffix(managed_id, again && again->worker, suffix, sizeof suffix));
				return;
			}
		seen[nseen++] = tid;
		e = then_thread(b, then, who, tid, managed_id);
	}
}

/* ---- a command's scan of what blocks threads --------------------------------------------------- */

int adac_blocking_scan_find(struct adac_runtime *rt, struct adac_out *out, struct adac_blocking_scan *k,
                            struct adac_error *err)
{
	memset(k, 0, sizeof *k);
	const struct adac_gc_walk_progress progress = {out, "finding locks"};
	k->have_locks = adac_held_locks_find(rt, &progress, &k->h, &k->err) == 0;
	if (k->err.code == ADAC_E_INTERRUPTED)
		return adac_error_copy(err, &k->err);
	k->have_waits = k->have_locks && adac_lock_waits_find(rt, &k->h, &k->lw, &k->err) == 0;
	bool on_task = false;
	for (size_t i = 0; k->have_waits && i < k->lw.condition_wait_count && !on_task; i++)
		on_task = adac_condition_wait_on_task(&k->h, &k->lw.condition_waits[i]);
	if (on_task) {
		struct adac_error e = {0};
		k->have_stacks = adac_pending_collect(rt, out, 0, &k->p, &e) == 0;
		if (e.code == ADAC_E_INTERRUPTED)
			return adac_error_copy(err, &e);
	}
	if (!k->have_waits)
		return 0;
	k->have_blocked = adac_blocked_threads_find(rt, k->have_stacks ? &k->p : NULL, &k->h, &k->lw, out, &k->b,
	                                            &k->err) == 0;
	return k->have_blocked ? adac_blocked_threads_where(&k->b, err) : 0;
}

void adac_blocking_scan_free(struct adac_blocking_scan *k)
{
	if (k->have_blocked)
		adac_blocked_threads_free(&k->b);
	if (k->have_stacks)
		adac_pending_free(&k->p);
	if (k->have_waits)
		adac_lock_waits_free(&k->lw);
	if (k->have_locks)
		adac_held_locks_free(&k->h);
	memset(k, 0, sizeof *k);
}

const struct adac_blocked *adac_blocking_scan_thread(const struct adac_blocking_scan *k, uint64_t tid)
{
	return k->have_blocked ? adac_blocked_thread(&k->b, tid) : NULL;
}

const char *adac_blocking_scan_warning(const struct adac_blocking_scan *k, char *buf, size_t size)
{
	if (adac_failed(&k->err))
		snprintf(buf, size, "what threads wait for is not known: %s", k->err.msg);
	else if (k->have_blocked && adac_failed(&k->b.where_err))
		snprintf(buf, size, ADAC_WHERE_UNKNOWN "%s", k->b.where_err.msg);
	else
		return NULL;
	return buf;
}
