/* report_view.c - see report_view.h. Each section is another command's view of the same data. */
#include "view/report_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async/lock_wait.h"
#include "async/pending.h"
#include "async/task.h"
#include "async/thread_pool.h"
#include "base/grow.h"
#include "base/limits.h"
#include "base/output.h"
#include "runtime/runtime.h"
#include "runtime/threads.h"
#include "target/target.h"
#include "types/locks.h"
#include "view/backtrace_view.h"
#include "view/lock_view.h"
#include "view/pending_list.h"
#include "view/pending_view.h"
#include "view/runtime_view.h"
#include "view/stack_groups.h"

/* Whether synchronous wait w is a step of a deadlock through tasks (async/wait_cycle.h). */
static bool in_wait_cycle(const struct adac_pending *p, const struct adac_sync_wait *w)
{
	size_t n;
	const struct adac_wait_step like = {.os_tid = w->os_tid, .task = w->task};
	return w->os_tid && adac_wait_cycle_with(&p->wait_cycles, &like, &n);
}

/* Deadlocks and starvation, and the stacks grouped into sg, from one pass over the stacks (the
 * listing l), then threads blocked on tasks and the objects many chains await; how many findings. */
static int findings(struct adac_pending_list *l, struct adac_stack_groups *sg, const struct adac_held_locks *locks,
                    const struct adac_lock_waits *waits, struct adac_out *out, size_t *n, struct adac_error *err)
{
	struct adac_pending *p = l->p;
	struct adac_pending_stack st;
	int more;
	while ((more = adac_pending_list_next(l, &st, err)) > 0) {
		struct adac_awaiting buf;
		uint64_t task = adac_pending_node_task(p, st.segs[0].node);
		if (st.stack->cycle) {
			char *cycle = adac_stack_groups_cycle_text(sg, &st);
			if (cycle)
				adac_print(out, "deadlock: %s\n", cycle);
			else
				adac_print(out, "deadlock: chain #%zu (task 0x%016llx) is part of an await cycle: see `ps`\n",
				           st.number, (unsigned long long)task);
			free(cycle);
			(*n)++;
		}
		const struct adac_awaiting *aw = adac_pending_stack_awaiting(l, &st, &buf);
		if (aw && aw->has_state_flags && (aw->state_flags & ADAC_TASK_COMPLETED_MASK)) {
			const struct adac_thread_pool *tp = adac_thread_pool(p->rt);
			char facts[160];
			adac_thread_pool_text(tp, facts, sizeof facts);
			if (adac_thread_pool_starved(tp))
				adac_print(out, "not resumed: chain #%zu awaits 0x%016llx, which is %s: the thread pool is starved "
				           "(%s)\n", st.number, (unsigned long long)aw->object, adac_task_status(aw->state_flags), facts);
			else
				adac_print(out, "not resumed: chain #%zu awaits 0x%016llx, which is %s: a starved thread pool?%s%s%s\n",
				           st.number, (unsigned long long)aw->object, adac_task_status(aw->state_flags),
				           facts[0] ? " (" : "", facts, facts[0] ? ")" : "");
			(*n)++;
		}
		if (adac_stack_groups_add(sg, &st, err))
			return -1;
	}
	if (adac_stack_groups_end(sg, more, err) || more < 0)
		return -1;
	/* Sync-over-async: threads blocked on tasks (one in a deadlock is in its line, below). */
	for (size_t k = 0; k < p->sync_waits.count; k++) {
		const struct adac_sync_wait *w = &p->sync_waits.waits[k];
		if (in_wait_cycle(p, w))
			continue;
		if (w->os_tid) {
			adac_print(out, "blocked: thread tid %llu (managed thread %u) waits synchronously for task 0x%016llx "
			           "(" ADAC_SYNC_WAYS ")", (unsigned long long)w->os_tid,
			           w->managed_id, (unsigned long long)w->task);
			/* A lock held across the wait: whoever waits for the lock waits for the task too. */
			const char *sep = " while it holds ";
			for (size_t i = 0; locks && i < locks->count; i++)
				if (locks->locks[i].owner == w->managed_id) {
					char what[200];
					adac_lock_describe(p->rt, &locks->locks[i], what, sizeof what);
					adac_print(out, "%s%s", sep, what);
					sep = ", ";
				}
			adac_print(out, ": see `bt --thread %llu`\n", (unsigned long long)w->os_tid);
		} else
			adac_print(out, "blocked: task 0x%016llx is waited for synchronously by no thread whose stack holds "
			           "its Task+SetOnInvokeMres 0x%016llx\n", (unsigned long long)w->task,
			           (unsigned long long)w->waiter);
		(*n)++;
	}
	/* Threads waiting for each other's locks, and the locks threads wait for. */
	bool *in_cycle = locks && locks->count ? calloc(locks->count, sizeof *in_cycle) : NULL;
	if (locks && waits) {
		size_t cycle[ADAC_MAX_WAIT_CYCLE], len, from = 0;
		char text[4096];
		while (adac_lock_cycle_next(locks, waits, &from, cycle, ADAC_MAX_WAIT_CYCLE, &len)) {
			adac_print(out, "deadlock: %s\n", adac_lock_deadlock_text(p->rt, locks, cycle, len, text, sizeof text));
			for (size_t k = 0; in_cycle && k < len; k++)
				in_cycle[cycle[k]] = true;
			(*n)++;
		}
	}
	/* Threads waiting for each other through tasks: sync-over-async under a lock. (Their lock
	 * steps index p's locks, which `locks` then are.) */
	const struct adac_wait_cycles *wc = &p->wait_cycles;
	for (size_t k = 0, at = 0; k < wc->count; at = wc->ends[k++]) {
		char text[4096];
		adac_print(out, "deadlock: %s\n", adac_wait_cycle_text(p->rt, &p->locks, wc->steps + at, wc->ends[k] - at, 0, text,
		                                                       sizeof text));
		for (size_t s = at; s < wc->ends[k]; s++)
			if (!wc->steps[s].task && in_cycle && locks == &p->locks)
				in_cycle[wc->steps[s].lock] = true;
		(*n)++;
	}
	for (size_t i = 0; locks && i < locks->count; i++) {
		const struct adac_held_lock *k = &locks->locks[i];
		if (!k->waiters || (in_cycle && in_cycle[i]))
			continue; /* (a deadlock's locks are in its line) */
		char what[200], who[96];
		adac_lock_describe(p->rt, k, what, sizeof what);
		adac_print(out, "lock: %s is held by %s, and %u thread%s wait%s for it: see `locks`\n", what,
		           adac_lock_holder(k, who, sizeof who), k->waiters, k->waiters == 1 ? "" : "s",
		           k->waiters == 1 ? "s" : "");
		(*n)++;
	}
	free(in_cycle);
	/* Convoys: many chains behind one lock or one promise. */
	return adac_stack_groups_shared(sg, n, err);
}

/* "crash: thread #N (tid T): <stop reason>" per thread that stopped for a reason; how many. */
static size_t crash_findings(struct adac_runtime *rt, struct adac_out *out)
{
	const struct adac_thread *threads;
	size_t n = 0, found = 0;
	if (adac_target_threads(rt->t, &threads, &n, NULL))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (threads[i].stop_reason[0]) {
			adac_print(out, "crash: thread #%u (tid %llu): %s\n", threads[i].index,
			           (unsigned long long)threads[i].tid, threads[i].stop_reason);
			found++;
		}
	return found;
}

/* The threads that stopped for a reason of their own (a crash), as `bt` shows them. */
static size_t crashed_threads(struct adac_runtime *rt, struct adac_out *out)
{
	const struct adac_thread *threads;
	size_t n = 0, shown = 0;
	struct adac_error e = {0};
	if (adac_target_threads(rt->t, &threads, &n, &e)) {
		adac_print(out, "error: %s\n", e.msg);
		return 0;
	}
	struct adac_bt_opts o = {.count = 0, .depth = ADAC_MAX_CHAIN_DEPTH};
	for (size_t i = 0; i < n; i++) {
		if (!threads[i].stop_reason[0])
			continue;
		if (shown++)
			adac_print(out, "\n");
		adac_bt_thread_print(rt, &threads[i], true, &o, out);
	}
	return shown;
}

/* ---- blocked threads ---- */

#define MAX_BLOCKED_GROUPS 20u  /* lines of "== Blocked threads" (one per thing waited on) */
#define MAX_GROUP_TIDS 8u       /* thread ids on a line */

struct blocked {
	char *text;          /* what the thread waits on */
	uint64_t tid;
	uint32_t managed_id;
	size_t group_size;   /* (set on a group's first entry) */
	uint64_t task;       /* it waits synchronously for this task, or */
	size_t lock;         /* (task 0, lock_wait) for this held lock, or for neither */
	bool lock_wait;
	bool worker;         /* a thread-pool worker */
};

static int cmp_blocked(const void *a, const void *b)
{
	const struct blocked *x = a, *y = b;
	int c = strcmp(x->text, y->text);
	return c ? c : (x->tid > y->tid) - (x->tid < y->tid);
}

static int cmp_group(const void *a, const void *b)
{
	const struct blocked *x = *(const struct blocked *const *)a, *y = *(const struct blocked *const *)b;
	if (x->group_size != y->group_size)
		return x->group_size > y->group_size ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static bool add_blocked(struct blocked **v, size_t *n, size_t *cap, const char *text, const struct blocked *b)
{
	if (adac_grow((void **)v, cap, *n + 1, sizeof **v, 16))
		return false;
	char *copy = strdup(text);
	if (!copy)
		return false;
	(*v)[*n] = *b;
	(*v)[(*n)++].text = copy;
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
static void mark_workers(struct adac_runtime *rt, struct blocked *v, size_t n)
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

/* " (managed thread M[, thread-pool worker])" */
static const char *thread_suffix(uint32_t managed_id, bool worker, char *buf, size_t size)
{
	snprintf(buf, size, " (managed thread %u%s)", managed_id, worker ? ", thread-pool worker" : "");
	return buf;
}

/* ---- wait chains ---- */

struct chain_ctx {
	struct adac_pending *p;
	const struct adac_held_locks *h;
	const struct blocked *v;
	size_t n;
	const uint64_t *suspended;   /* the tasks waited for synchronously that no thread runs ... */
	char **where;                /* ... and where their stacks are suspended (NULL: not known) */
	size_t nsuspended;
	struct adac_out *out;
};

/* The tasks threads wait for synchronously that no thread runs, once each, and where their stacks are
 * suspended: one listing for all. -1 with err when the user interrupted it (a listing that fails
 * otherwise is a warning: the chains then stop at the task). */
static int find_suspended(struct chain_ctx *c, struct adac_error *err)
{
	uint64_t *tasks = c->p ? calloc(c->n ? c->n : 1, sizeof *tasks) : NULL;
	char **where = tasks ? calloc(c->n ? c->n : 1, sizeof *where) : NULL;
	if (!where) {
		free(tasks);
		return 0;
	}
	size_t n = 0;
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].task)
			tasks[n++] = c->v[i].task;
	qsort(tasks, n, sizeof *tasks, cmp_u64);
	size_t kept = 0;
	for (size_t i = 0; i < n; i++)
		if ((i == 0 || tasks[i] != tasks[i - 1]) && !adac_pending_task_runner(c->p, tasks[i]))
			tasks[kept++] = tasks[i];
	n = kept;
	c->suspended = tasks;
	c->where = where;
	c->nsuspended = n;
	struct adac_error e = {0};
	if (!n || adac_pending_tasks_where(c->p, tasks, n, where, c->out, &e) == 0)
		return 0;
	if (e.code == ADAC_E_INTERRUPTED)
		return adac_error_copy(err, &e);
	adac_print(c->out, "warning: where the stacks of tasks threads wait for are suspended: %s\n", e.msg);
	return 0;
}

static void free_suspended(struct chain_ctx *c)
{
	for (size_t k = 0; k < c->nsuspended; k++)
		free(c->where[k]);
	free(c->where);
	free((void *)c->suspended);
}

/* "  then: <who> thread tid T (managed thread M): <what it waits on>", or that it waits for nothing
 * recorded; its entry, NULL when none. */
static const struct blocked *then_thread(const struct chain_ctx *c, const char *who, uint64_t tid, uint32_t managed_id)
{
	const struct blocked *b = NULL;
	for (size_t i = 0; i < c->n && !b; i++)
		if (c->v[i].tid == tid)
			b = &c->v[i];
	char suffix[64];
	adac_print(c->out, "  then: %sthread tid %llu%s: ", who, (unsigned long long)tid,
	           thread_suffix(managed_id, b && b->worker, suffix, sizeof suffix));
	if (b)
		adac_print(c->out, "%s\n", b->text);
	else
		adac_print(c->out, "no wait recorded: see `bt --thread %llu`\n", (unsigned long long)tid);
	return b;
}

/* After a group's line, what the thing its threads wait on waits for in turn ("  then: ..."): a
 * lock's holder and what blocks it; for a task waited for synchronously, the thread its stack runs
 * on and what blocks that one, or where the stack is suspended and what it awaits. Up to a thread
 * seen already (a deadlock: the findings name it), a wait that names no thread (Monitor.Wait, a
 * ManualResetEventSlim) or ADAC_MAX_WAIT_CYCLE steps. */
static void print_wait_chain(const struct chain_ctx *c, const struct blocked *b)
{
	uint64_t seen[ADAC_MAX_WAIT_CYCLE];
	size_t nseen = 0;
	for (size_t k = 0; k < b->group_size && nseen < ADAC_MAX_WAIT_CYCLE; k++)
		seen[nseen++] = b[k].tid;
	while (b && nseen < ADAC_MAX_WAIT_CYCLE) {
		uint64_t tid;
		uint32_t managed_id;
		const char *who = "";
		if (b->lock_wait) {
			tid = c->h->locks[b->lock].owner_tid;
			managed_id = c->h->locks[b->lock].owner;
		} else if (b->task) {
			const struct adac_task_runner *r = c->p ? adac_pending_task_runner(c->p, b->task) : NULL;
			if (!r) {
				for (size_t k = 0; k < c->nsuspended; k++)
					if (c->suspended[k] == b->task && c->where[k])
						adac_print(c->out, "  then: task 0x%016llx is suspended: %s\n", (unsigned long long)b->task,
						           c->where[k]);
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
				bool worker = false;
				for (size_t k = 0; k < c->n; k++)
					worker |= c->v[k].tid == tid && c->v[k].worker;
				char suffix[64];
				adac_print(c->out, "  then: %sthread tid %llu%s again: a deadlock\n", who, (unsigned long long)tid,
				           thread_suffix(managed_id, worker, suffix, sizeof suffix));
				return;
			}
		seen[nseen++] = tid;
		b = then_thread(c, who, tid, managed_id);
	}
}

/* "== Blocked threads": every managed thread blocked in a wait the runtime records (a lock, Monitor.Wait,
 * ManualResetEventSlim.Wait) or waiting synchronously for a task, one line per thing waited on, the
 * most waited-on first, each followed by its wait chain. How many lines; -1 with err when memory runs
 * out or the user interrupted it. */
static long blocked_threads(struct adac_runtime *rt, struct adac_pending *p, const struct adac_held_locks *h,
                            const struct adac_lock_waits *w, struct adac_out *out, struct adac_error *err)
{
	struct blocked *v = NULL;
	size_t n = 0, cap = 0;
	char text[700];
	bool ok = true;
	for (size_t i = 0; p && ok && i < p->sync_waits.count; i++) {
		const struct adac_sync_wait *s = &p->sync_waits.waits[i];
		if (!s->os_tid)
			continue;
		snprintf(text, sizeof text, "waits synchronously for task 0x%016llx (" ADAC_SYNC_WAYS ")",
		         (unsigned long long)s->task);
		ok = add_blocked(&v, &n, &cap, text, &(struct blocked){.tid = s->os_tid, .managed_id = s->managed_id,
		                                                      .task = s->task});
	}
	for (size_t i = 0; w && ok && i < w->count; i++) {
		const struct adac_lock_wait *l = &w->waits[i];
		ok = add_blocked(&v, &n, &cap, adac_lock_waiting_text(rt, &h->locks[l->lock], text, sizeof text),
		                 &(struct blocked){.tid = l->os_tid, .managed_id = l->managed_id, .lock = l->lock,
		                                   .lock_wait = true});
	}
	for (size_t i = 0; w && ok && i < w->monitor_wait_count; i++) {
		const struct adac_monitor_wait *m = &w->monitor_waits[i];
		ok = add_blocked(&v, &n, &cap, adac_lock_monitor_wait_text(rt, h, m, text, sizeof text),
		                 &(struct blocked){.tid = m->os_tid, .managed_id = m->managed_id});
	}
	for (size_t i = 0; w && ok && i < w->condition_wait_count; i++) {
		const struct adac_condition_wait *c = &w->condition_waits[i];
		if (adac_lock_condition_wait_text(h, c, text, sizeof text)) /* (NULL: a Task.Wait()'s, above) */
			ok = add_blocked(&v, &n, &cap, text, &(struct blocked){.tid = c->os_tid, .managed_id = c->managed_id});
	}
	long lines = -1;
	struct blocked **groups = ok ? malloc((n ? n : 1) * sizeof *groups) : NULL;
	if (groups) {
		mark_workers(rt, v, n);
		if (n > 1)
			qsort(v, n, sizeof *v, cmp_blocked);
		size_t ng = 0;
		for (size_t i = 0; i < n; i++) {
			if (i == 0 || strcmp(v[i].text, v[i - 1].text) != 0)
				groups[ng++] = &v[i];
			groups[ng - 1]->group_size++;
		}
		if (ng > 1)
			qsort(groups, ng, sizeof *groups, cmp_group);
		struct chain_ctx cc = {p, h, v, n, NULL, NULL, 0, out};
		if (find_suspended(&cc, err)) {
			free(groups);
			groups = NULL;
			ng = 0;
		}
		for (size_t g = 0; g < ng && g < MAX_BLOCKED_GROUPS; g++) {
			const struct blocked *b = groups[g];
			if (b->group_size == 1) {
				char suffix[64];
				adac_print(out, "thread tid %llu%s: %s\n", (unsigned long long)b->tid,
				           thread_suffix(b->managed_id, b->worker, suffix, sizeof suffix), b->text);
			} else {
				size_t workers = 0;
				adac_print(out, "%zu threads (tid", b->group_size);
				for (size_t k = 0; k < b->group_size; k++) {
					if (k < MAX_GROUP_TIDS)
						adac_print(out, "%s %llu", k ? "," : "", (unsigned long long)b[k].tid);
					workers += b[k].worker;
				}
				if (b->group_size > MAX_GROUP_TIDS)
					adac_print(out, " and %zu more", b->group_size - MAX_GROUP_TIDS);
				if (workers == b->group_size)
					adac_print(out, "; thread-pool workers");
				else if (workers)
					adac_print(out, "; %zu thread-pool worker%s", workers, workers == 1 ? "" : "s");
				adac_print(out, "): %s\n", b->text);
			}
			print_wait_chain(&cc, b);
		}
		if (ng > MAX_BLOCKED_GROUPS)
			adac_print(out, "... and %zu more things threads wait on: see `locks` and `bt`\n", ng - MAX_BLOCKED_GROUPS);
		lines = groups ? (long)ng : -1;
		free_suspended(&cc);
	} else
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory listing the blocked threads");
	free(groups);
	for (size_t i = 0; i < n; i++)
		free(v[i].text);
	free(v);
	return lines;
}

int adac_report_print(struct adac_runtime *rt, struct adac_out *out, struct adac_error *err)
{
	struct adac_pending p;
	struct adac_held_locks locks = {0};
	struct adac_lock_waits waits = {0};
	bool have_locks = false, have_waits = false;
	struct adac_error scan = {0};
	bool have = adac_pending_collect(rt, out, ADAC_SCAN_MAY_RUN, &p, &scan) == 0; /* (first) */
	if (scan.code == ADAC_E_INTERRUPTED)
		return adac_error_copy(err, &scan);
	/* One listing of every stack gives the findings and both groupings (no locals: the frames may
	 * come from a helper). */
	struct adac_pending_list l = {0};
	struct adac_pending_filter all = {0};
	struct adac_stack_groups *sg = NULL;
	if (have) {
		if (adac_pending_list_init(&l, &p, &all, out, err)) {
			adac_pending_free(&p);
			return -1;
		}
		adac_pending_list_parallel(&l);
		if (!(sg = adac_stack_groups_begin(&l, out, err)))
			goto fail;
	}
	/* The locks held (a heap pass of their own: thin locks are in the objects' headers); the report
	 * goes on without them. */
	struct adac_error lock_err = {0};
	const struct adac_gc_walk_progress lock_progress = {out, "finding locks"};
	const struct adac_held_locks *held = NULL;
	const struct adac_lock_waits *waiting = NULL;
	if (have && p.has_locks) { /* (the scan found them already: a running chain waits for one) */
		held = &p.locks;
		waiting = &p.lock_waits;
	} else {
		have_locks = adac_held_locks_find(rt, &lock_progress, &locks, &lock_err) == 0;
		if (lock_err.code == ADAC_E_INTERRUPTED) {
			adac_error_copy(err, &lock_err);
			goto fail;
		}
		have_waits = have_locks && adac_lock_waits_find(rt, &locks, &waits, NULL) == 0;
		held = have_locks ? &locks : NULL;
		waiting = have_waits ? &waits : NULL;
	}
	size_t found = 0;
	adac_print(out, "== Findings\n");
	found += crash_findings(rt, out);
	if (!have)
		adac_print(out, "error: the heap cannot be scanned: %s\n", scan.msg);
	else if (findings(&l, sg, held, waiting, out, &found, err))
		goto fail;
	if (!held && lock_err.code != ADAC_E_LAYOUT)
		adac_print(out, "warning: the locks cannot be read: %s\n", lock_err.msg);
	if (have && !found)
		adac_print(out, "none: no crash, no await cycle, no completed task whose awaiter has not resumed, no object "
		                "several chains await, no lock threads wait for\n");

	adac_print(out, "\n== Runtime\n");
	adac_runtime_print(rt, out);

	adac_print(out, "\n== Threads that stopped for a reason\n");
	size_t crashed = crashed_threads(rt, out);
	if (!crashed)
		adac_print(out, "none (see `bt` for every thread)\n");

	adac_print(out, "\n== Blocked threads\n");
	long blocked = have || waiting ? blocked_threads(rt, have ? &p : NULL, held, waiting, out, err) : 0;
	if (blocked < 0)
		goto fail;
	if (!have && !waiting)
		adac_print(out, "not known: neither the heap (synchronous waits for tasks) nor the locks can be read\n");
	else if (!blocked)
		adac_print(out, "none\n");

	if (have) {
		adac_print(out, "\n== Async stacks, grouped by what they await\n");
		if (adac_stack_groups_render(sg, ADAC_GROUP_COALESCE, err))
			goto fail;
		adac_print(out, "\n== Top frames\n");
		if (adac_stack_groups_render(sg, ADAC_GROUP_STATS, err))
			goto fail;
		adac_stack_groups_free(sg);
		adac_pending_list_free(&l);
		adac_pending_free(&p);
	}
	if (have_waits)
		adac_lock_waits_free(&waits);
	if (have_locks)
		adac_held_locks_free(&locks);
	return 0;
fail:
	if (have_waits)
		adac_lock_waits_free(&waits);
	if (have_locks)
		adac_held_locks_free(&locks);
	adac_stack_groups_free(sg);
	adac_pending_list_free(&l);
	adac_pending_free(&p);
	return -1;
}
