/* lock_view.c - `locks`. See lock_view.h. */
#include "view/lock_view.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "async/lock_wait.h"
#include "async/pending.h"
#include "async/sync_wait.h"
#include "async/wait_cycle.h"
#include "base/json.h"
#include "base/limits.h"
#include "base/output.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "types/locks.h"
#include "types/names.h"

const char *adac_lock_object_type(struct adac_runtime *rt, uint64_t object)
{
	uint64_t mt;
	return adac_object_mt(rt, object, &mt, NULL) == 0 ? adac_type_name(rt, mt, 0, NULL) : NULL;
}

static const char *type_of_object(struct adac_runtime *rt, uint64_t obj)
{
	const char *name = adac_lock_object_type(rt, obj);
	return name ? name : "?";
}

static const char *type_of(struct adac_runtime *rt, const struct adac_held_lock *l)
{
	return type_of_object(rt, l->object);
}

/* ", timeout <n> ms" for a finite wait, else "". */
static const char *timeout_text(int32_t ms, char *buf, size_t size)
{
	buf[0] = '\0';
	if (ms >= 0)
		snprintf(buf, size, ", timeout %d ms", ms);
	return buf;
}

const char *adac_lock_holder(const struct adac_held_lock *l, char *buf, size_t size)
{
	if (l->owner_tid)
		snprintf(buf, size, "thread tid %llu (managed thread %u)", (unsigned long long)l->owner_tid, l->owner);
	else
		snprintf(buf, size, "managed thread %u (no thread of the runtime's has that id)", l->owner);
	return buf;
}

void adac_lock_describe(struct adac_runtime *rt, const struct adac_held_lock *l, char *buf, size_t size)
{
	if (l->kind == ADAC_LOCK_LOCK)
		snprintf(buf, size, "System.Threading.Lock 0x%016llx", (unsigned long long)l->object);
	else
		snprintf(buf, size, "%s 0x%016llx (%s)", type_of(rt, l), (unsigned long long)l->object,
		         adac_lock_kind_name(l->kind));
}

char *adac_lock_deadlock_text(struct adac_runtime *rt, const struct adac_held_locks *h, const size_t *cycle, size_t n,
                              char *buf, size_t size)
{
	size_t w = 0;
	buf[0] = 0;
	for (size_t k = 0; k < n && w < size; k++) {
		const struct adac_held_lock *l = &h->locks[cycle[k]];
		char what[200], who[96], waiter[96];
		adac_lock_describe(rt, l, what, sizeof what);
		/* The thread waiting for l holds the lock waited for before it (the last one's, for the first). */
		const struct adac_held_lock *prev = &h->locks[cycle[k ? k - 1 : n - 1]];
		adac_lock_holder(prev, waiter, sizeof waiter);
		adac_lock_holder(l, who, sizeof who);
		int m = k == 0 ? snprintf(buf + w, size - w, "%s waits for %s held by %s", waiter, what, who)
		               : snprintf(buf + w, size - w, ", which waits for %s held by %s", what, who);
		if (m < 0)
			break;
		w += (size_t)m;
			}
	return buf;
}

char *adac_wait_cycle_text(struct adac_runtime *rt, const struct adac_held_locks *h, const struct adac_wait_step *steps,
                           size_t n, size_t first, char *buf, size_t size)
{
	size_t w = 0;
	buf[0] = 0;
	for (size_t k = 0; k < n && w < size; k++) {
		const struct adac_wait_step *s = &steps[(first + k) % n], *next = &steps[(first + k + 1) % n];
		char what[200];
		if (s->task)
			snprintf(what, sizeof what, "synchronously for task 0x%016llx (" ADAC_SYNC_WAYS "), whose stack runs on",
			         (unsigned long long)s->task);
		else {
			char lock[160];
			adac_lock_describe(rt, &h->locks[s->lock], lock, sizeof lock);
			snprintf(what, sizeof what, "for %s held by", lock);
		}
		int m = k == 0 ? snprintf(buf + w, size - w, "thread tid %llu (managed thread %u) waits %s",
		                          (unsigned long long)s->os_tid, s->managed_id, what)
		               : snprintf(buf + w, size - w, ", which waits %s", what);
		if (m < 0)
			break;
		w += (size_t)m;
		if (w < size && (m = snprintf(buf + w, size - w, " thread tid %llu (managed thread %u)",
		                              (unsigned long long)next->os_tid, next->managed_id)) > 0)
			w += (size_t)m;
	}
	return buf;
}

/* Why the deadlocks through tasks were not looked for (a warning's start; the cause follows). */
#define TASKS_NOT_SCANNED "deadlocks through tasks were not looked for: the heap's stacks could not be scanned: "

static json_t *thread_json(uint64_t tid, uint32_t managed_id)
{
	json_t *t = json_object();
	json_object_set_new(t, "tid", tid ? json_integer((json_int_t)tid) : json_null());
	json_object_set_new(t, "managed_id", json_integer(managed_id));
	return t;
}

json_t *adac_lock_brief_json(struct adac_runtime *rt, const struct adac_held_lock *l)
{
	json_t *j = json_object();
	json_object_set_new(j, "object", adac_json_addr(l->object));
	json_object_set_new(j, "type", adac_json_text(type_of(rt, l)));
	json_object_set_new(j, "owner", thread_json(l->owner_tid, l->owner));
	return j;
}

const char *adac_lock_waiting_text(struct adac_runtime *rt, const struct adac_held_lock *l, char *buf, size_t size)
{
	char what[200], who[96];
	adac_lock_describe(rt, l, what, sizeof what);
	snprintf(buf, size, "waiting for: %s, held by %s", what, adac_lock_holder(l, who, sizeof who));
	return buf;
}

void adac_lock_waiting_print(struct adac_runtime *rt, const struct adac_held_lock *l, struct adac_out *out)
{
	char text[400];
	adac_print(out, "  %s\n", adac_lock_waiting_text(rt, l, text, sizeof text));
}

/* The SemaphoreSlim whose lock object `object` is, 0 when none. */
static uint64_t semaphore_of(const struct adac_held_locks *h, uint64_t object)
{
	const struct adac_lock_object_owner *o = adac_lock_object_owner(h, object);
	return o && o->kind == ADAC_OWNER_SEMAPHORE ? o->owner : 0;
}

/* "(Monitor)", or "(Monitor of System.Threading.SemaphoreSlim 0x...)" for a SemaphoreSlim's lock object. */
static const char *monitor_kind(const struct adac_held_locks *h, uint64_t object, char *buf, size_t size)
{
	uint64_t sem = semaphore_of(h, object);
	if (sem)
		snprintf(buf, size, "(Monitor of System.Threading.SemaphoreSlim 0x%016llx)", (unsigned long long)sem);
	else
		snprintf(buf, size, "(Monitor)");
	return buf;
}


const char *adac_lock_monitor_wait_text(struct adac_runtime *rt, const struct adac_held_locks *h,
                                       const struct adac_monitor_wait *m, char *buf, size_t size)
{
	char who[96], kind[96], held[128], timeout[48];
	if (m->held)
		snprintf(held, sizeof held, "held by %s", adac_lock_holder(&h->locks[m->lock], who, sizeof who));
	else
		snprintf(held, sizeof held, "which no thread holds");
	snprintf(buf, size, "in Monitor.Wait: waiting for a pulse on %s 0x%016llx %s, %s%s", type_of_object(rt, m->object),
	         (unsigned long long)m->object, monitor_kind(h, m->object, kind, sizeof kind), held,
	         timeout_text(m->timeout_ms, timeout, sizeof timeout));
	return buf;
}

void adac_lock_monitor_wait_print(struct adac_runtime *rt, const struct adac_held_locks *h,
                                  const struct adac_monitor_wait *m, struct adac_out *out)
{
	char text[600];
	adac_print(out, "  %s\n", adac_lock_monitor_wait_text(rt, h, m, text, sizeof text));
}

const char *adac_lock_condition_wait_text(const struct adac_held_locks *h, const struct adac_condition_wait *c,
                                         char *buf, size_t size)
{
	char timeout[48];
	const struct adac_lock_object_owner *o = adac_lock_object_owner(h, c->lock);
	if (o && o->kind == ADAC_OWNER_TASK_WAIT)
		return NULL;
	if (o && o->kind == ADAC_OWNER_MRES)
		snprintf(buf, size, "in ManualResetEventSlim.Wait on System.Threading.ManualResetEventSlim 0x%016llx%s",
		         (unsigned long long)o->owner, timeout_text(c->timeout_ms, timeout, sizeof timeout));
	else
		snprintf(buf, size, "waiting on System.Threading.Condition 0x%016llx (of System.Threading.Lock 0x%016llx)%s",
		         (unsigned long long)c->condition, (unsigned long long)c->lock,
		         timeout_text(c->timeout_ms, timeout, sizeof timeout));
	return buf;
}

const char *adac_lock_thread_wait_text(struct adac_runtime *rt, const struct adac_held_locks *h,
                                       const struct adac_lock_waits *waits, uint64_t tid, char *buf, size_t size)
{
	const struct adac_lock_wait *w = adac_lock_wait_of(waits, tid);
	if (w)
		return adac_lock_waiting_text(rt, &h->locks[w->lock], buf, size);
	const struct adac_monitor_wait *m = adac_monitor_wait_of(waits, tid);
	if (m)
		return adac_lock_monitor_wait_text(rt, h, m, buf, size);
	const struct adac_condition_wait *c = adac_condition_wait_of(waits, tid);
	return c ? adac_lock_condition_wait_text(h, c, buf, size) : NULL;
}

json_t *adac_lock_monitor_wait_json(struct adac_runtime *rt, const struct adac_held_locks *h,
                                    const struct adac_monitor_wait *m)
{
	json_t *j = json_object();
	const struct adac_held_lock *l = m->held ? &h->locks[m->lock] : NULL;
	json_object_set_new(j, "object", adac_json_addr(m->object));
	json_object_set_new(j, "type", adac_json_text(type_of_object(rt, m->object)));
	json_object_set_new(j, "condition", adac_json_addr(m->condition));
	uint64_t sem = semaphore_of(h, m->object);
	json_object_set_new(j, "semaphore", sem ? adac_json_addr(sem) : json_null());
	json_object_set_new(j, "owner", l ? thread_json(l->owner_tid, l->owner) : json_null());
	json_object_set_new(j, "timeout_ms", m->timeout_ms >= 0 ? json_integer(m->timeout_ms) : json_null());
	return j;
}

bool adac_lock_wait_print(struct adac_runtime *rt, const struct adac_held_locks *h, const struct adac_lock_waits *waits,
                          uint64_t tid, struct adac_out *out)
{
	char line[600];
	const struct adac_lock_wait *w = adac_lock_wait_of(waits, tid);
	if (!adac_lock_thread_wait_text(rt, h, waits, tid, line, sizeof line)) {
		if (!adac_condition_wait_of(waits, tid)) /* (a Task.Wait()'s: `blocked on:` says it) */
			adac_print(out, "  waiting for: a lock (its blocking record enters one), not found among the locks held\n");
		return false;
	}
	adac_print(out, "  %s\n", line);
	if (!w)
		return false;
	size_t cycle[ADAC_MAX_WAIT_CYCLE], n, from = 0;
	char text[4096];
	while (adac_lock_cycle_next(h, waits, &from, cycle, ADAC_MAX_WAIT_CYCLE, &n))
		for (size_t k = 0; k < n; k++)
			if (cycle[k] == w->lock) {
				adac_print(out, "  deadlock: %s\n", adac_lock_deadlock_text(rt, h, cycle, n, text, sizeof text));
				return true;
			}
	return false;
}

/* How many of the monitor waits from `at` on are on `object` (monitor waits are by object). */
static size_t monitor_waits_on(const struct adac_lock_waits *lw, size_t at, uint64_t object)
{
	size_t n = 0;
	while (at + n < lw->monitor_wait_count && lw->monitor_waits[at + n].object == object)
		n++;
	return n;
}

/* "; <n> thread(s) in Monitor.Wait" after a lock's line. */
static void print_monitor_count(size_t n, struct adac_out *out)
{
	if (n)
		adac_print(out, "; %zu thread%s in Monitor.Wait", n, n == 1 ? "" : "s");
}

/* Under it, "  in Monitor.Wait: thread tid <T> (...)" for monitor waits at .. at + n. */
static void print_monitor_lines(const struct adac_lock_waits *lw, size_t at, size_t n, struct adac_out *out)
{
	for (size_t k = at; k < at + n; k++) {
		const struct adac_monitor_wait *m = &lw->monitor_waits[k];
		char timeout[48];
		adac_print(out, "  in Monitor.Wait: thread tid %llu (managed thread %u)%s\n", (unsigned long long)m->os_tid,
		           m->managed_id, timeout_text(m->timeout_ms, timeout, sizeof timeout));
	}
}

/* The deadlocks through tasks, with the locks their steps' indexes are into (the views take NULL
 * when they were not looked for: no thread waits on a task). */
struct task_cycles {
	const struct adac_wait_cycles *cycles;
	const struct adac_held_locks *locks;
};

static void print_text(struct adac_runtime *rt, const struct adac_held_locks *h, const struct adac_lock_waits *lw,
                       const struct task_cycles *tc, const struct adac_error *tc_err, struct adac_out *out)
{
	size_t at = 0, mat = 0; /* (the waits and monitor waits, like the locks, go by object) */
	for (size_t i = 0; i < h->count; i++) {
		const struct adac_held_lock *l = &h->locks[i];
		if (l->kind == ADAC_LOCK_LOCK)
			adac_print(out, "lock 0x%016llx System.Threading.Lock: held by ", (unsigned long long)l->object);
		else
			adac_print(out, "lock 0x%016llx %s (%s): held by ", (unsigned long long)l->object, type_of(rt, l),
			           adac_lock_kind_name(l->kind));
		char who[96];
		adac_print(out, "%s", adac_lock_holder(l, who, sizeof who));
		if (l->entered == 1)
			adac_print(out, ", entered once");
		else
			adac_print(out, ", entered %u times", l->entered);
		if (l->has_waiters && l->waiters)
			adac_print(out, "; %u thread%s waiting", l->waiters, l->waiters == 1 ? "" : "s");
		while (mat < lw->monitor_wait_count && lw->monitor_waits[mat].object < l->object)
			mat++;
		size_t mn = l->kind == ADAC_LOCK_LOCK ? 0 : monitor_waits_on(lw, mat, l->object);
		print_monitor_count(mn, out);
		adac_print(out, "\n");
		for (; at < lw->count && lw->waits[at].lock == i; at++)
			adac_print(out, "  waiting: thread tid %llu (managed thread %u)\n", (unsigned long long)lw->waits[at].os_tid,
			           lw->waits[at].managed_id);
		print_monitor_lines(lw, mat, mn, out);
	}
	/* Monitors nobody holds with threads in Monitor.Wait (waiting for a pulse that has not come). */
	size_t idle = 0;
	for (size_t k = 0; k < lw->monitor_wait_count;) {
		const struct adac_monitor_wait *m = &lw->monitor_waits[k];
		size_t n = monitor_waits_on(lw, k, m->object);
		if (!m->held) {
			char kind[96];
			adac_print(out, "lock 0x%016llx %s %s: not held", (unsigned long long)m->object, type_of_object(rt, m->object),
			           monitor_kind(h, m->object, kind, sizeof kind));
			print_monitor_count(n, out);
			adac_print(out, "\n");
			print_monitor_lines(lw, k, n, out);
			idle++;
		}
		k += n;
	}
	size_t cycle[ADAC_MAX_WAIT_CYCLE], n, from = 0;
	char text[4096];
	while (adac_lock_cycle_next(h, lw, &from, cycle, ADAC_MAX_WAIT_CYCLE, &n))
		adac_print(out, "deadlock: %s\n", adac_lock_deadlock_text(rt, h, cycle, n, text, sizeof text));
	for (size_t k = 0; tc && k < tc->cycles->count; k++) {
		const struct adac_wait_step *steps = adac_wait_cycle_at(tc->cycles, k, &n);
		adac_print(out, "deadlock: %s\n", adac_wait_cycle_text(rt, tc->locks, steps, n, 0, text, sizeof text));
	}
	if (h->count || idle)
		adac_print(out, "\n");
	adac_print(out, "%zu lock%s held", h->count, h->count == 1 ? "" : "s");
	if (lw->monitor_wait_count)
		adac_print(out, "; %zu thread%s in Monitor.Wait", lw->monitor_wait_count, lw->monitor_wait_count == 1 ? "" : "s");
	adac_print(out, "; sync table: %u entr%s in use.\n", h->sync_entries, h->sync_entries == 1 ? "y" : "ies");
	for (size_t i = 0; i < h->walk.error_count; i++)
		adac_print(out, "warning: the heap walk stopped early in a region (thin locks there are not listed): %s\n",
		           h->walk.errors[i].err.msg);
	if (adac_failed(&lw->threads_err))
		adac_print(out, "warning: a thread's blocking records could not be read (the lock it waits for is not "
		           "known): %s\n", lw->threads_err.msg);
	if (adac_failed(tc_err))
		adac_print(out, "warning: " TASKS_NOT_SCANNED "%s\n", tc_err->msg);
}

static const char *kind_key(enum adac_lock_kind k)
{
	switch (k) {
	case ADAC_LOCK_MONITOR: return "monitor";
	case ADAC_LOCK_THIN: return "thin";
	case ADAC_LOCK_LOCK: return "lock";
	}
	return "?";
}


static json_t *step_json(uint64_t tid, uint32_t managed_id, const char *kind, uint64_t waits_for)
{
	json_t *step = thread_json(tid, managed_id);
	json_object_set_new(step, "waits_for", adac_json_addr(waits_for));
	json_object_set_new(step, "kind", json_string(kind));
	return step;
}

static int print_json(struct adac_runtime *rt, const struct adac_held_locks *h, const struct adac_lock_waits *lw,
                      const struct task_cycles *tc, const struct adac_error *tc_err, struct adac_out *out,
                      struct adac_error *err)
{
	json_t *j = json_object(), *locks = json_array(), *deadlocks = json_array(), *warnings = json_array();
	size_t at = 0;
	for (size_t i = 0; i < h->count; i++) {
		const struct adac_held_lock *l = &h->locks[i];
		json_t *o = json_object(), *waiting = json_array();
		json_object_set_new(o, "object", adac_json_addr(l->object));
		json_object_set_new(o, "type", adac_json_text(type_of(rt, l)));
		json_object_set_new(o, "kind", json_string(kind_key(l->kind)));
		json_object_set_new(o, "lock", l->lock ? adac_json_addr(l->lock) : json_null());
		json_object_set_new(o, "sync_index", l->sync_index ? json_integer(l->sync_index) : json_null());
		json_object_set_new(o, "owner", thread_json(l->owner_tid, l->owner));
		json_object_set_new(o, "entered", json_integer(l->entered));
		json_object_set_new(o, "waiters", l->has_waiters ? json_integer(l->waiters) : json_null());
		for (; at < lw->count && lw->waits[at].lock == i; at++)
			json_array_append_new(waiting, thread_json(lw->waits[at].os_tid, lw->waits[at].managed_id));
		json_object_set_new(o, "waiting", waiting);
		json_array_append_new(locks, o);
	}
	size_t cycle[ADAC_MAX_WAIT_CYCLE], n, from = 0;
	while (adac_lock_cycle_next(h, lw, &from, cycle, ADAC_MAX_WAIT_CYCLE, &n)) {
		json_t *c = json_array();
		for (size_t k = 0; k < n; k++) {
			const struct adac_held_lock *prev = &h->locks[cycle[k ? k - 1 : n - 1]];
			json_array_append_new(c, step_json(prev->owner_tid, prev->owner, "lock", h->locks[cycle[k]].object));
		}
		json_array_append_new(deadlocks, c);
	}
	for (size_t k = 0; tc && k < tc->cycles->count; k++) {
		const struct adac_wait_step *steps = adac_wait_cycle_at(tc->cycles, k, &n);
		json_t *c = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(c, steps[i].task ? step_json(steps[i].os_tid, steps[i].managed_id, "task", steps[i].task)
			                                       : step_json(steps[i].os_tid, steps[i].managed_id, "lock",
			                                                   tc->locks->locks[steps[i].lock].object));
		json_array_append_new(deadlocks, c);
	}
	json_t *monitor_waits = json_array();
	for (size_t k = 0; k < lw->monitor_wait_count; k++) {
		const struct adac_monitor_wait *m = &lw->monitor_waits[k];
		json_t *o = thread_json(m->os_tid, m->managed_id);
		json_object_set_new(o, "object", adac_json_addr(m->object));
		json_object_set_new(o, "type", adac_json_text(type_of_object(rt, m->object)));
		json_object_set_new(o, "condition", adac_json_addr(m->condition));
		uint64_t sem = semaphore_of(h, m->object);
		json_object_set_new(o, "semaphore", sem ? adac_json_addr(sem) : json_null());
		json_object_set_new(o, "held", json_boolean(m->held));
		json_object_set_new(o, "timeout_ms", m->timeout_ms >= 0 ? json_integer(m->timeout_ms) : json_null());
		json_array_append_new(monitor_waits, o);
	}
	json_object_set_new(j, "locks", locks);
	json_object_set_new(j, "monitor_waits", monitor_waits);
	json_object_set_new(j, "deadlocks", deadlocks);
	json_object_set_new(j, "sync_entries", json_integer(h->sync_entries));
	for (size_t i = 0; i < h->walk.error_count; i++) {
		char line[600];
		snprintf(line, sizeof line, "the heap walk stopped early in a region (thin locks there are not listed): %s",
		         h->walk.errors[i].err.msg);
		json_array_append_new(warnings, adac_json_text(line));
	}
	if (adac_failed(&lw->threads_err)) {
		char line[600];
		snprintf(line, sizeof line, "a thread's blocking records could not be read (the lock it waits for is not "
		         "known): %s", lw->threads_err.msg);
		json_array_append_new(warnings, adac_json_text(line));
	}
	if (adac_failed(tc_err)) {
		char line[600];
		snprintf(line, sizeof line, TASKS_NOT_SCANNED "%s", tc_err->msg);
		json_array_append_new(warnings, adac_json_text(line));
	}
	json_object_set_new(j, "warnings", warnings);
	return adac_json_print_document(out, "locks", j, err);
}

int adac_locks_print(struct adac_runtime *rt, bool json, struct adac_out *out, struct adac_error *err)
{
	struct adac_held_locks h;
	struct adac_lock_waits lw;
	const struct adac_gc_walk_progress progress = {out, "finding locks"};
	if (adac_held_locks_find(rt, &progress, &h, err))
		return -1;
	if (adac_lock_waits_find(rt, &h, &lw, err)) {
		adac_held_locks_free(&h);
		return -1;
	}
	/* A thread in Task.Wait() may close a deadlock through a task, which runs on a thread only the
	 * heap's stacks say (SOS syncblk does not see it): they are scanned then. */
	bool on_task = false;
	for (size_t i = 0; i < lw.condition_wait_count && !on_task; i++)
		on_task = adac_condition_wait_on_task(&h, &lw.condition_waits[i]);
	struct adac_pending p = {0};
	struct adac_error tc_err = {0};
	struct task_cycles tc = {0};
	if (on_task && adac_pending_collect(rt, out, 0, &p, &tc_err) == 0) {
		tc.cycles = &p.wait_cycles;
		tc.locks = p.has_locks ? &p.locks : &h; /* (no step waits for a lock without them) */
	} else if (tc_err.code == ADAC_E_INTERRUPTED) {
		adac_error_copy(err, &tc_err);
		adac_lock_waits_free(&lw);
		adac_held_locks_free(&h);
		return -1;
	}
	int rc = 0;
	if (json)
		rc = print_json(rt, &h, &lw, tc.cycles ? &tc : NULL, &tc_err, out, err);
	else
		print_text(rt, &h, &lw, tc.cycles ? &tc : NULL, &tc_err, out);
	if (tc.cycles)
		adac_pending_free(&p);
	adac_lock_waits_free(&lw);
	adac_held_locks_free(&h);
	return rc;
}
