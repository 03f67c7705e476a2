/* report_view.c - see report_view.h. Each section is another command's view of the same data. */
#include "view/report_view.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async/lock_wait.h"
#include "async/pending.h"
#include "async/task.h"
#include "async/thread_pool.h"
#include "base/json.h"
#include "base/limits.h"
#include "base/output.h"
#include "base/strf.h"
#include "runtime/runtime.h"
#include "target/stop_reason.h"
#include "target/target.h"
#include "types/locks.h"
#include "view/backtrace_view.h"
#include "view/lock_view.h"
#include "view/pending_list.h"
#include "view/pending_view.h"
#include "view/runtime_view.h"
#include "view/stack_groups.h"
#include "view/thread_groups.h"
#include "view/threadpool_view.h"
#include "view/wait_chain.h"

/* Whether synchronous wait w is a step of a deadlock through tasks (async/wait_cycle.h). */
static bool in_wait_cycle(const struct adac_pending *p, const struct adac_sync_wait *w)
{
	size_t n;
	const struct adac_wait_step like = {.os_tid = w->os_tid, .task = w->task};
	return w->os_tid && adac_wait_cycle_with(&p->wait_cycles, &like, &n);
}

/* What the report is written to: its text to out, or (report --json) the members of one JSON object. */
struct report {
	struct adac_runtime *rt;
	struct adac_out *out;
	json_t *json;          /* NULL: text */
	json_t *findings;      /* (JSON) {"kind", "text"} */
	json_t *warnings;      /* (JSON) strings */
	size_t found;
	bool blocked_known;    /* blocked: the blocked threads (neither the heap nor the locks: unknown) */
	struct adac_blocked_threads blocked;
};

/* A finding: "<kind>: <text>", or {"kind", "text"}. */
static void add_finding(struct report *r, const char *kind, const char *text)
{
	r->found++;
	if (!r->json) {
		adac_print(r->out, "%s: %s\n", kind, text);
		return;
	}
	json_t *o = json_object();
	json_object_set_new(o, "kind", json_string(kind));
	json_object_set_new(o, "text", adac_json_text(text));
	json_array_append_new(r->findings, o);
}

__attribute__((format(printf, 3, 4))) static void finding(struct report *r, const char *kind, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = adac_vformat(fmt, ap);
	va_end(ap);
	if (text) /* (else out of memory: the finding is left out) */
		add_finding(r, kind, text);
	free(text);
}

/* A problem with a section: "<level>: <text>" where it is (text), or the text in "warnings" (JSON). */
__attribute__((format(printf, 3, 4))) static void problem(struct report *r, const char *level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = adac_vformat(fmt, ap);
	va_end(ap);
	if (!text)
		return;
	if (r->json)
		json_array_append_new(r->warnings, adac_json_text(text));
	else
		adac_print(r->out, "%s: %s\n", level, text);
	free(text);
}

static void shared_finding(void *ctx, const char *text)
{
	add_finding(ctx, "shared", text);
}

/* "== Thread stacks": `pstacks` (managed frames), its branches' waits from the blocked threads; as
 * JSON "thread_stacks" (null when they cannot be listed: warnings says why). -1 with err only when
 * interrupted. */
static int thread_stacks(struct report *r, struct adac_error *err)
{
	const struct adac_pstacks_opts o = {.tids = 4};
	json_t *j = NULL;
	struct adac_error e = {0};
	if (adac_pstacks_render(r->rt, &o, r->blocked_known ? &r->blocked : NULL, NULL, r->json ? &j : NULL, r->out, &e)) {
		if (e.code == ADAC_E_INTERRUPTED) {
			adac_error_copy(err, &e);
			return -1;
		}
		problem(r, "error", "the threads' stacks cannot be listed: %s", e.msg);
	}
	if (r->json)
		json_object_set_new(r->json, "thread_stacks", j ? j : json_null());
	return 0;
}

/* "<thread> waits synchronously for task 0x... (...)[ while it holds <locks>]: see `bt --thread T`" */
static char *blocked_text(struct adac_runtime *rt, const struct adac_sync_wait *w, const struct adac_held_locks *locks)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	fprintf(f, "thread tid %llu (managed thread %u) waits synchronously for task 0x%016llx (" ADAC_SYNC_WAYS ")",
	        (unsigned long long)w->os_tid, w->managed_id, (unsigned long long)w->task);
	/* A lock held across the wait: whoever waits for the lock waits for the task too. */
	const char *sep = " while it holds ";
	for (size_t i = 0; locks && i < locks->count; i++)
		if (locks->locks[i].owner == w->managed_id) {
			char what[200];
			adac_lock_describe(rt, &locks->locks[i], what, sizeof what);
			fprintf(f, "%s%s", sep, what);
			sep = ", ";
		}
	fprintf(f, ": see `bt --thread %llu`", (unsigned long long)w->os_tid);
	fclose(f);
	return text;
}

/* Deadlocks and starvation, and the stacks grouped into sg, from one pass over the stacks (the
 * listing l), then threads blocked on tasks and the objects many chains await. */
static int findings(struct report *r, struct adac_pending_list *l, struct adac_stack_groups *sg,
                    const struct adac_held_locks *locks, const struct adac_lock_waits *waits, struct adac_error *err)
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
				add_finding(r, "deadlock", cycle);
			else
				finding(r, "deadlock", "chain #%zu (task 0x%016llx) is part of an await cycle: see `ps`", st.number,
				        (unsigned long long)task);
			free(cycle);
		}
		const struct adac_awaiting *aw = adac_pending_stack_awaiting(l, &st, &buf);
		if (aw && aw->has_state_flags && (aw->state_flags & ADAC_TASK_COMPLETED_MASK)) {
			const struct adac_thread_pool *tp = adac_thread_pool(p->rt);
			char facts[160];
			adac_thread_pool_text(tp, facts, sizeof facts);
			/* Why: the workers blocked (in the section below). */
			size_t workers = r->blocked_known ? adac_blocked_workers(&r->blocked) : 0;
			char why[96] = "";
			if (workers)
				snprintf(why, sizeof why, "%s%zu worker%s blocked: see Blocked threads", facts[0] ? "; " : "", workers,
				         workers == 1 ? "" : "s");
			if (adac_thread_pool_starved(tp))
				finding(r, "not resumed", "chain #%zu awaits 0x%016llx, which is %s: the thread pool is starved (%s%s)",
				        st.number, (unsigned long long)aw->object, adac_task_status(aw->state_flags), facts, why);
			else
				finding(r, "not resumed", "chain #%zu awaits 0x%016llx, which is %s: a starved thread pool?%s%s%s%s",
				        st.number, (unsigned long long)aw->object, adac_task_status(aw->state_flags),
				        facts[0] || why[0] ? " (" : "", facts, why, facts[0] || why[0] ? ")" : "");
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
			char *text = blocked_text(p->rt, w, locks);
			if (text)
				add_finding(r, "blocked", text);
			free(text);
		} else
			finding(r, "blocked", "task 0x%016llx is waited for synchronously by no thread whose stack holds its "
			        "Task+SetOnInvokeMres 0x%016llx", (unsigned long long)w->task, (unsigned long long)w->waiter);
	}
	/* Threads waiting for each other's locks, and the locks threads wait for. */
	bool *in_cycle = locks && locks->count ? calloc(locks->count, sizeof *in_cycle) : NULL;
	if (locks && waits) {
		size_t cycle[ADAC_MAX_WAIT_CYCLE], len, from = 0;
		char text[4096];
		while (adac_lock_cycle_next(locks, waits, &from, cycle, ADAC_MAX_WAIT_CYCLE, &len)) {
			add_finding(r, "deadlock", adac_lock_deadlock_text(p->rt, locks, cycle, len, text, sizeof text));
			for (size_t k = 0; in_cycle && k < len; k++)
				in_cycle[cycle[k]] = true;
		}
	}
	/* Threads waiting for each other through tasks: sync-over-async under a lock. (Their lock
	 * steps index p's locks, which `locks` then are.) */
	const struct adac_wait_cycles *wc = &p->wait_cycles;
	for (size_t k = 0; k < wc->count; k++) {
		char text[4096];
		size_t len;
		const struct adac_wait_step *steps = adac_wait_cycle_at(wc, k, &len);
		add_finding(r, "deadlock", adac_wait_cycle_text(p->rt, &p->locks, steps, len, 0, text, sizeof text));
		for (size_t s = 0; s < len; s++)
			if (!steps[s].task && in_cycle && locks == &p->locks)
				in_cycle[steps[s].lock] = true;
	}
	for (size_t i = 0; locks && i < locks->count; i++) {
		const struct adac_held_lock *k = &locks->locks[i];
		if (!k->waiters || (in_cycle && in_cycle[i]))
			continue; /* (a deadlock's locks are in its line) */
		char what[200], who[96];
		adac_lock_describe(p->rt, k, what, sizeof what);
		finding(r, "lock", "%s is held by %s, and %u thread%s wait%s for it: see `locks`", what,
		        adac_lock_holder(k, who, sizeof who), k->waiters, k->waiters == 1 ? "" : "s",
		        k->waiters == 1 ? "s" : "");
	}
	free(in_cycle);
	/* Convoys: many chains behind one lock or one promise. */
	return adac_stack_groups_shared(sg, shared_finding, r, err);
}

/* "crash: thread #N (tid T): <stop reason>" per thread that stopped for a reason. */
static void crash_findings(struct report *r)
{
	const struct adac_thread *threads;
	size_t n = 0;
	if (adac_target_threads(r->rt->t, &threads, &n, NULL))
		return;
	for (size_t i = 0; i < n; i++)
		if (adac_thread_crashed(&threads[i]))
			finding(r, "crash", "thread #%u (tid %llu): %s", threads[i].index, (unsigned long long)threads[i].tid,
			        threads[i].stop_reason);
}

/* The threads that stopped for a reason of their own (a crash), as `bt` shows them (JSON: as `bt
 * --json`'s threads, into the array crashed); how many. */
static size_t crashed_threads(struct report *r, json_t *crashed)
{
	const struct adac_thread *threads;
	size_t n = 0, shown = 0;
	struct adac_error e = {0};
	if (adac_target_threads(r->rt->t, &threads, &n, &e)) {
		problem(r, "error", "the threads cannot be read: %s", e.msg);
		return 0;
	}
	struct adac_bt_opts o = {.count = 0, .depth = ADAC_MAX_CHAIN_DEPTH};
	for (size_t i = 0; i < n; i++) {
		if (!adac_thread_crashed(&threads[i]))
			continue;
		if (crashed)
			json_array_append_new(crashed, adac_bt_thread_json(r->rt, &threads[i], &o));
		else {
			if (shown)
				adac_print(r->out, "\n");
			adac_bt_thread_print(r->rt, &threads[i], true, &o, r->out);
		}
		shown++;
	}
	return shown;
}

/* ---- blocked threads ---- */

#define MAX_BLOCKED_GROUPS 20u  /* lines of "== Blocked threads" (one per thing waited on) */
#define MAX_GROUP_TIDS 8u       /* thread ids on a line */

/* The threads waiting on one thing: a run of the blocked threads (by text). */
struct group {
	const struct adac_blocked *first;
	size_t size;
};

static int cmp_group(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return (x->first->tid > y->first->tid) - (x->first->tid < y->first->tid);
}

static void print_group(const struct group *g, struct adac_out *out)
{
	const struct adac_blocked *b = g->first;
	if (g->size == 1) {
		char suffix[64];
		adac_print(out, "thread tid %llu%s: %s\n", (unsigned long long)b->tid,
		           adac_blocked_suffix(b->managed_id, b->worker, suffix, sizeof suffix), b->text);
		return;
	}
	size_t workers = 0;
	adac_print(out, "%zu threads (tid", g->size);
	for (size_t k = 0; k < g->size; k++) {
		if (k < MAX_GROUP_TIDS)
			adac_print(out, "%s %llu", k ? "," : "", (unsigned long long)b[k].tid);
		workers += b[k].worker;
	}
	if (g->size > MAX_GROUP_TIDS)
		adac_print(out, " and %zu more", g->size - MAX_GROUP_TIDS);
	if (workers == g->size)
		adac_print(out, "; thread-pool workers");
	else if (workers)
		adac_print(out, "; %zu thread-pool worker%s", workers, workers == 1 ? "" : "s");
	adac_print(out, "): %s\n", b->text);
}

static json_t *group_json(const struct group *g, const struct adac_blocked_threads *b)
{
	json_t *j = json_object(), *threads = json_array(), *then = json_array();
	for (size_t k = 0; k < g->size; k++) {
		const struct adac_blocked *t = &g->first[k];
		json_t *o = json_object();
		json_object_set_new(o, "tid", json_integer((json_int_t)t->tid));
		json_object_set_new(o, "managed_id", json_integer(t->managed_id));
		json_object_set_new(o, "threadpool_worker", json_boolean(t->worker));
		json_array_append_new(threads, o);
	}
	json_object_set_new(j, "threads", threads);
	json_object_set_new(j, "waits_on", adac_json_text(g->first->text));
	adac_wait_chain(b, g->first, g->size, then);
	json_object_set_new(j, "then", then);
	return j;
}

/* "== Blocked threads": every managed thread blocked in a wait the runtime records (a lock, Monitor.Wait,
 * ManualResetEventSlim.Wait) or waiting synchronously for a task, one line per thing waited on, the
 * most waited-on first, each followed by its wait chain (view/wait_chain.h); JSON: every group into
 * the array groups_json. How many groups; -1 with err when memory runs out or the user interrupted it. */
static long blocked_threads(struct report *r, json_t *groups_json, struct adac_error *err)
{
	struct adac_blocked_threads *b = &r->blocked;
	if (adac_blocked_threads_where(b, err))
		return -1;
	if (adac_failed(&b->where_err))
		problem(r, "warning", ADAC_WHERE_UNKNOWN "%s", b->where_err.msg);
	struct group *groups = malloc((b->n ? b->n : 1) * sizeof *groups);
	if (!groups)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory listing the blocked threads");
	size_t ng = 0;
	for (size_t i = 0; i < b->n; i++) {
		if (i == 0 || strcmp(b->v[i].text, b->v[i - 1].text) != 0)
			groups[ng++] = (struct group){&b->v[i], 0};
		groups[ng - 1].size++;
	}
	if (ng > 1)
		qsort(groups, ng, sizeof *groups, cmp_group);
	for (size_t g = 0; g < ng && (groups_json || g < MAX_BLOCKED_GROUPS); g++) {
		if (groups_json) {
			json_array_append_new(groups_json, group_json(&groups[g], b));
			continue;
		}
		print_group(&groups[g], r->out);
		adac_wait_chain_print(b, groups[g].first, groups[g].size);
	}
	if (!groups_json && ng > MAX_BLOCKED_GROUPS)
		adac_print(r->out, "... and %zu more things threads wait on: see `locks` and `bt`\n", ng - MAX_BLOCKED_GROUPS);
	free(groups);
	return (long)ng;
}

int adac_report_print(struct adac_runtime *rt, bool json, struct adac_out *out, struct adac_error *err)
{
	struct report r = {.rt = rt, .out = out};
	if (json) {
		r.json = json_object();
		r.findings = json_array();
		r.warnings = json_array();
	}
	struct adac_pending p;
	struct adac_held_locks locks = {0};
	struct adac_lock_waits waits = {0};
	bool have_locks = false, have_waits = false;
	struct adac_error scan = {0};
	bool have = adac_pending_collect(rt, out, ADAC_SCAN_MAY_RUN, &p, &scan) == 0; /* (first) */
	if (scan.code == ADAC_E_INTERRUPTED) {
		adac_error_copy(err, &scan);
		goto done;
	}
	/* One listing of every stack gives the findings and both groupings (no locals: the frames may
	 * come from a helper). */
	struct adac_pending_list l = {0};
	struct adac_pending_filter all = {0};
	struct adac_stack_groups *sg = NULL;
	if (have) {
		if (adac_pending_list_init(&l, &p, &all, out, err)) {
			adac_pending_free(&p);
			goto done;
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
	/* The blocked threads (the starved pool's finding counts its workers among them). */
	if (have || waiting) {
		if (adac_blocked_threads_find(rt, have ? &p : NULL, held, waiting, out, &r.blocked, err))
			goto fail;
		r.blocked_known = true;
	}
	if (!json)
		adac_print(out, "== Findings\n");
	crash_findings(&r);
	if (!have)
		problem(&r, "error", "the heap cannot be scanned: %s", scan.msg);
	else if (findings(&r, &l, sg, held, waiting, err))
		goto fail;
	if (!held && lock_err.code != ADAC_E_LAYOUT)
		problem(&r, "warning", "the locks cannot be read: %s", lock_err.msg);
	if (have && !r.found && !json)
		adac_print(out, "none: no crash, no await cycle, no completed task whose awaiter has not resumed, no object "
		                "several chains await, no lock threads wait for\n");

	if (json) {
		json_object_set_new(r.json, "findings", r.findings);
		json_object_set_new(r.json, "runtime", adac_runtime_json(rt));
	} else {
		adac_print(out, "\n== Runtime\n");
		adac_runtime_print(rt, out);
		adac_print(out, "\n== Threads that stopped for a reason\n");
	}
	json_t *crashed = json ? json_array() : NULL;
	size_t ncrashed = crashed_threads(&r, crashed);
	if (json)
		json_object_set_new(r.json, "crashed_threads", crashed);
	else if (!ncrashed)
		adac_print(out, "none (see `bt` for every thread)\n");

	if (!json)
		adac_print(out, "\n== Blocked threads\n");
	json_t *blocked_json = json && r.blocked_known ? json_array() : NULL;
	long blocked = r.blocked_known ? blocked_threads(&r, blocked_json, err) : 0;
	if (json) /* (null: not known) */
		json_object_set_new(r.json, "blocked_threads", blocked_json ? blocked_json : json_null());
	if (blocked < 0)
		goto fail;
	if (!have && !waiting && json)
		problem(&r, "warning", "the blocked threads are not known: neither the heap (synchronous waits for tasks) "
		        "nor the locks can be read");
	else if (!have && !waiting)
		adac_print(out, "not known: neither the heap (synchronous waits for tasks) nor the locks can be read\n");
	else if (!blocked && !json)
		adac_print(out, "none\n");

	if (!json)
		adac_print(out, "\n== Thread pool\n");
	adac_threadpool_report(rt, r.json, r.warnings, out);

	if (!json)
		adac_print(out, "\n== Thread stacks, merged where they share frames\n");
	if (thread_stacks(&r, err))
		goto fail;

	if (have) {
		json_t *stacks = json ? json_object() : NULL;
		if (json)
			json_object_set_new(r.json, "stacks", stacks);
		else
			adac_print(out, "\n== Async stacks, grouped by what they await\n");
		if (adac_stack_groups_render(sg, ADAC_GROUP_COALESCE, stacks, err))
			goto fail;
		if (!json)
			adac_print(out, "\n== Top frames\n");
		if (adac_stack_groups_render(sg, ADAC_GROUP_STATS, stacks, err))
			goto fail;
		if (stacks)
			adac_pending_json_members(&l, stacks);
		adac_stack_groups_free(sg);
		adac_pending_list_free(&l);
		adac_pending_free(&p);
	} else if (json) {
		json_object_set_new(r.json, "stacks", json_null());
	}
	adac_blocked_threads_free(&r.blocked);
	if (have_waits)
		adac_lock_waits_free(&waits);
	if (have_locks)
		adac_held_locks_free(&locks);
	if (!json)
		return 0;
	json_object_set_new(r.json, "warnings", r.warnings);
	return adac_json_print_document(out, "report", r.json, err);
fail:
	adac_blocked_threads_free(&r.blocked);
	if (have_waits)
		adac_lock_waits_free(&waits);
	if (have_locks)
		adac_held_locks_free(&locks);
	adac_stack_groups_free(sg);
	adac_pending_list_free(&l);
	adac_pending_free(&p);
done:
	if (json) {
		if (!json_object_get(r.json, "findings"))
			json_decref(r.findings);
		json_decref(r.warnings);
		json_decref(r.json);
	}
	return -1;
}
