/* pending_view.c - `ps`'s text and JSON of stacks, its warnings and its summary. */
#include "view/pending_view.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async/continuation.h"
#include "async/thread_stack.h"
#include "async/task.h"
#include "base/clock.h"
#include "base/arena.h"
#include "base/json.h"
#include "base/line.h"
#include "base/output.h"
#include "runtime/gc_heap.h"
#include "types/names.h"
#include "view/lock_view.h"
#include "view/pending_list.h"

/* ---- text ---- */

/* "chain #N:", the start of a stack's header (after a blank line but for the first): its number is
 * known on the listing's thread alone. */
static void print_number(const struct adac_pending_stack *st, struct adac_out *out)
{
	char buf[32];
	struct adac_line b = adac_line_on(buf, sizeof buf);
	adac_line_put(&b, st->index ? "\nchain #" : "chain #");
	adac_line_u64(&b, st->number);
	adac_line_put(&b, ":");
	adac_line_write(&b, out);
	adac_line_free(&b);
}

/* The rest of the header line. (Built without printf, written at once: a million chains make this
 * line a million times.) */
static void print_header(const struct adac_pending *p, const struct adac_pending_stack *st, struct adac_out *out)
{
	const struct adac_async_node *last = st->segs[st->stack->count - 1].node;
	char buf[512];
	struct adac_line b = adac_line_on(buf, sizeof buf);
	if (st->running) {
		adac_line_put(&b, " running on thread ");
		adac_line_u64(&b, st->running->os_tid);
		adac_line_put(&b, " (managed thread ");
		adac_line_u64(&b, st->running->managed_id);
		adac_line_put(&b, "),");
	}
	struct adac_task_desc d;
	adac_pending_node_task_desc_on(p, st->rt, last, &d);
	if (d.addr) {
		adac_line_put(&b, " task ");
		adac_line_addr(&b, d.addr);
		adac_line_put(&b, " ");
		adac_line_put(&b, d.type ? d.type : "?");
		if (d.has_flags) {
			adac_line_put(&b, " [");
			adac_line_put(&b, adac_task_status(d.flags));
			adac_line_put(&b, "]");
		}
		if (d.id) {
			adac_line_put(&b, " (Task.Id ");
			adac_line_u64(&b, d.id);
			adac_line_put(&b, ")");
		}
	} else if (last->kind == ADAC_NODE_CHAIN && p->scan.chains[last->index].root == ADAC_ROOT_UNOWNED) {
		adac_line_put(&b, " no owning task (Continuation ");
		adac_line_addr(&b, p->scan.chains[last->index].head);
		adac_line_put(&b, " is held by no task or thread)");
	} else {
		adac_line_put(&b, " task unknown");
	}
	adac_line_put(&b, "\n");
	adac_line_write(&b, out);
	adac_line_free(&b);
}

/* ---- await cycles ---- */

/* A node of a cycle as the deadlock line names it: its innermost frame (where it waits) and where,
 * or a task's type. */
static void cycle_node(const struct adac_pending *p, struct adac_runtime *rt, const struct adac_pending_seg *s, FILE *f)
{
	char where[ADAC_FRAME_WHERE_MAX];
	if (s->node->kind == ADAC_NODE_CHAIN) {
		for (size_t k = 0; k < s->view.chain.count; k++) {
			const struct adac_async_frame *fr = &s->view.frames[k];
			if (!adac_async_frame_shown(fr))
				continue;
			fprintf(f, "%s%s", fr->method ? fr->method : "<unknown method>",
			        adac_frame_where(fr->has_source, fr->file, fr->line, fr->has_il, fr->il_offset, where, sizeof where));
			return;
		}
		fprintf(f, "chain 0x%016llx", (unsigned long long)p->scan.chains[s->node->index].head);
	} else if (s->node->kind == ADAC_NODE_BOX) {
		const struct adac_classic_frame *c = &s->classic;
		fprintf(f, "%s%s", c->method ? c->method : "<unknown method>",
		        adac_frame_where(c->has_source, c->file, c->line, c->has_il, c->il_offset, where, sizeof where));
	} else {
		struct adac_task_desc d;
		adac_pending_node_task_desc_on(p, rt, s->node, &d);
		fprintf(f, "%s 0x%016llx", d.type ? d.type : "task", (unsigned long long)d.addr);
	}
}

/* "... awaits task 0x... of <node>" for the edge into node s (what the previous node awaits). */
static void cycle_edge(const struct adac_pending *p, struct adac_runtime *rt, const struct adac_pending_seg *s, bool first,
                       FILE *f)
{
	fprintf(f, "%s", first ? " awaits " : ", which awaits ");
	if (s->node->kind != ADAC_NODE_TASK)
		fprintf(f, "task 0x%016llx of ", (unsigned long long)adac_pending_node_task(p, s->node));
	cycle_node(p, rt, s, f);
}

/* "chain #N, <innermost frame> at <file>:<line>, awaiting ..." of a listed stack (a heap string). */
static char *stack_where(const struct adac_pending_list *l, const struct adac_pending_stack *st)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	fprintf(f, "chain #%zu, ", st->number);
	cycle_node(l->p, st->rt, &st->segs[0], f);
	struct adac_awaiting buf;
	const struct adac_awaiting *aw = adac_pending_stack_awaiting(l, st, &buf);
	if (aw) {
		fprintf(f, ", awaiting ");
		adac_awaiting_fprint(aw, f);
	}
	fclose(f);
	return text;
}

int adac_pending_tasks_where(struct adac_pending *p, const uint64_t *tasks, size_t n, char **where, struct adac_out *out,
                             struct adac_error *err)
{
	memset(where, 0, n * sizeof *where);
	if (!n)
		return 0;
	struct adac_pending_list l = {0};
	struct adac_pending_filter filter = {.addresses = tasks, .naddresses = n};
	if (adac_pending_list_init(&l, p, &filter, out, err))
		return -1;
	struct adac_pending_stack st;
	int more;
	while ((more = adac_pending_list_next(&l, &st, err)) > 0)
		for (uint32_t i = 0; i < st.stack->count; i++) {
			uint64_t task = adac_pending_node_task(p, st.segs[i].node);
			for (size_t k = 0; task && k < n; k++)
				if (tasks[k] == task && !where[k] && !(where[k] = stack_where(&l, &st))) {
					adac_pending_list_free(&l);
					return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
				}
		}
	adac_pending_list_free(&l);
	return more < 0 ? -1 : 0;
}

char *adac_pending_cycle_text(const struct adac_pending_list *l, const struct adac_pending_stack *st)
{
	const struct adac_pending *p = l->p;
	const struct adac_async_stack *a = st->stack;
	if (!a->cycle || !a->count)
		return NULL;
	/* Innermost first, each node's caller follows it: node i + 1 awaits node i's task. The last
	 * node's caller is on the stack already, at k: the cycle is nodes k .. last, and node k awaits
	 * the last one's task. */
	uint32_t k = (uint32_t)a->cycle - 1;
	if (k >= a->count)
		return NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	cycle_node(p, st->rt, &st->segs[k], f);
	for (uint32_t i = a->count; i-- > k;)
		cycle_edge(p, st->rt, &st->segs[i], i == a->count - 1, f);
	fclose(f);
	return text;
}

/* ---- synchronous waits ---- */


/* Where the waiter was found: " at 0x... in its stack" / " in a register of it" / that the thread's
 * blocking record waits on its Lock's Condition. */
static void print_holder(const struct adac_sync_wait *w, const char *whose, struct adac_out *out)
{
	if (w->by_record)
		adac_print(out, " waited on through its Lock's Condition (%s blocking record)", whose);
	else if (w->in_register)
		adac_print(out, " in a register of %s", whose);
	else
		adac_print(out, " at 0x%016llx in %s stack", (unsigned long long)w->slot, whose);
}

/* cb for each synchronous wait on a task of the stack. */
static void each_wait(const struct adac_pending *p, const struct adac_pending_stack *st,
                      void (*cb)(void *ctx, const struct adac_sync_wait *w), void *ctx)
{
	for (uint32_t i = 0; i < st->stack->count; i++) {
		uint64_t task = adac_pending_node_task(p, st->segs[i].node);
		for (size_t k = 0; task && k < p->sync_waits.count; k++)
			if (p->sync_waits.waits[k].task == task)
				cb(ctx, &p->sync_waits.waits[k]);
	}
}

/* "  blocked on: task 0x... is waited for synchronously (...) by thread tid T (managed thread M): ..." */
static void print_wait(void *ctx, const struct adac_sync_wait *w)
{
	struct adac_out *out = ctx;
	adac_print(out, "  blocked on: task 0x%016llx is waited for synchronously (%s) ", (unsigned long long)w->task,
	           ADAC_SYNC_WAYS);
	if (!w->os_tid) {
		adac_print(out, "through Task+SetOnInvokeMres 0x%016llx, by no thread whose stack holds it\n",
		           (unsigned long long)w->waiter);
		return;
	}
	adac_print(out, "by thread tid %llu (managed thread %u): its Task+SetOnInvokeMres 0x%016llx is",
	           (unsigned long long)w->os_tid, w->managed_id, (unsigned long long)w->waiter);
	print_holder(w, w->in_register ? "that thread" : "that thread's", out);
	adac_print(out, "\n");
}

static void wait_json(void *ctx, const struct adac_sync_wait *w)
{
	json_t **a = ctx;
	json_t *j = json_object();
	json_object_set_new(j, "task", adac_json_addr(w->task));
	json_object_set_new(j, "waiter", adac_json_addr(w->waiter));
	json_object_set_new(j, "tid", w->os_tid ? json_integer((json_int_t)w->os_tid) : json_null());
	json_object_set_new(j, "managed_id", w->os_tid ? json_integer(w->managed_id) : json_null());
	json_object_set_new(j, "slot", w->os_tid && !w->in_register && !w->by_record ? adac_json_addr(w->slot) : json_null());
	json_object_set_new(j, "in_register", json_boolean(w->in_register));
	json_object_set_new(j, "by_record", json_boolean(w->by_record));
	if (!*a)
		*a = json_array();
	json_array_append_new(*a, j);
}

json_t *adac_pending_stack_sync_waits_json(const struct adac_pending *p, const struct adac_pending_stack *st)
{
	json_t *waits = NULL;
	each_wait(p, st, wait_json, &waits);
	return waits;
}

int adac_pending_print_thread_waits(struct adac_pending *p, uint64_t tid, unsigned flags, struct adac_out *out,
                                    struct adac_error *err)
{
	for (size_t k = 0; k < p->sync_waits.count; k++) {
		const struct adac_sync_wait *w = &p->sync_waits.waits[k];
		if (w->os_tid != tid)
			continue;
		adac_print(out, "  blocked on: task 0x%016llx, waited for synchronously (%s): its Task+SetOnInvokeMres "
		           "0x%016llx is", (unsigned long long)w->task, ADAC_SYNC_WAYS, (unsigned long long)w->waiter);
		print_holder(w, w->in_register ? "this thread" : "this thread's", out);
		adac_print(out, "; the task's stacks:\n");
		struct adac_pending_list l = {0};
		struct adac_pending_filter filter = {.addresses = &w->task, .naddresses = 1};
		int rc = adac_pending_list_init(&l, p, &filter, out, err);
		if (rc == 0)
			rc = adac_pending_print_stacks(&l, flags, out, NULL, err);
		if (rc == 0 && !l.listed)
			adac_print(out, "  (no pending stack holds it)\n");
		adac_pending_list_free(&l);
		if (rc)
			return -1;
	}
	return 0;
}

const struct adac_held_lock *adac_pending_stack_lock_wait(const struct adac_pending *p,
                                                          const struct adac_pending_stack *st)
{
	const struct adac_lock_wait *w =
		st->running && p->has_locks ? adac_lock_wait_of(&p->lock_waits, st->running->os_tid) : NULL;
	return w ? &p->locks.locks[w->lock] : NULL;
}

const struct adac_monitor_wait *adac_pending_stack_monitor_wait(const struct adac_pending *p,
                                                                const struct adac_pending_stack *st)
{
	return st->running && p->has_locks ? adac_monitor_wait_of(&p->lock_waits, st->running->os_tid) : NULL;
}

const struct adac_condition_wait *adac_pending_stack_event_wait(const struct adac_pending *p,
                                                                const struct adac_pending_stack *st, char *buf,
                                                                size_t size)
{
	const struct adac_condition_wait *c =
		st->running && p->has_locks ? adac_condition_wait_of(&p->lock_waits, st->running->os_tid) : NULL;
	const struct adac_lock_object_owner *o = c ? adac_lock_object_owner(&p->locks, c->lock) : NULL;
	if (!o || o->kind != ADAC_OWNER_MRES)
		return NULL; /* (a Task.Wait()'s: thread_sync_wait; another Condition's: none of CoreLib's waits) */
	adac_lock_condition_wait_text(&p->locks, c, buf, size);
	return c;
}

json_t *adac_pending_event_wait_json(const struct adac_pending *p, const struct adac_condition_wait *c)
{
	json_t *j = json_object();
	const struct adac_lock_object_owner *o = adac_lock_object_owner(&p->locks, c->lock);
	json_object_set_new(j, "event", adac_json_addr(o ? o->owner : 0));
	json_object_set_new(j, "condition", adac_json_addr(c->condition));
	json_object_set_new(j, "timeout_ms", c->timeout_ms >= 0 ? json_integer(c->timeout_ms) : json_null());
	return j;
}

const struct adac_sync_wait *adac_pending_stack_thread_sync_wait(const struct adac_pending *p,
                                                                 const struct adac_pending_stack *st)
{
	return st->running ? adac_sync_wait_of_thread(&p->sync_waits, st->running->os_tid) : NULL;
}

json_t *adac_pending_thread_sync_wait_json(const struct adac_sync_wait *w)
{
	json_t *j = json_object();
	json_object_set_new(j, "task", adac_json_addr(w->task));
	json_object_set_new(j, "waiter", adac_json_addr(w->waiter));
	return j;
}

const char *adac_pending_stack_wait_cycle(const struct adac_pending *p, const struct adac_pending_stack *st, char *buf,
                                          size_t size)
{
	for (uint32_t i = 0; p->wait_cycles.count && i < st->stack->count; i++) {
		size_t n;
		const struct adac_wait_step like = {.task = adac_pending_node_task(p, st->segs[i].node)};
		const struct adac_wait_step *c = adac_wait_cycle_with(&p->wait_cycles, &like, &n);
		if (c)
			return adac_wait_cycle_text(st->rt, &p->locks, c, n, 0, buf, size);
	}
	return NULL;
}

bool adac_pending_print_thread_wait_cycle(const struct adac_pending *p, uint64_t tid, struct adac_out *out)
{
	size_t n;
	const struct adac_wait_step like = {.os_tid = tid};
	const struct adac_wait_step *c = adac_wait_cycle_with(&p->wait_cycles, &like, &n);
	size_t first = 0;
	while (c && c[first].os_tid != tid)
		first++;
	char text[4096];
	if (c)
		adac_print(out, "  deadlock: %s\n", adac_wait_cycle_text(p->rt, &p->locks, c, n, first, text, sizeof text));
	return c != NULL;
}

/* A stack's text but its number (print_number). */
static void print_stack(const struct adac_pending_list *l, const struct adac_pending_stack *st, unsigned flags,
                        struct adac_out *out, struct adac_frame_texts *texts)
{
	const struct adac_pending *p = l->p;
	print_header(p, st, out);
	struct adac_stack_frame resumed;
	bool has_resumed = adac_pending_stack_resumed(st, &resumed);
	if (has_resumed) {
		char where[ADAC_FRAME_WHERE_MAX];
		adac_print(out, "  running: 0x%016llx %s`%s + 0x%llx%s (the method this chain resumed; bt shows what it calls)\n",
		           (unsigned long long)resumed.pc, resumed.module ? resumed.module : "?", resumed.symbol,
		           (unsigned long long)resumed.offset,
		           adac_frame_where(resumed.file != NULL, resumed.file, resumed.line, false, 0, where, sizeof where));
	}
	size_t frame = 0;
	for (uint32_t i = 0; i < st->stack->count; i++) {
		const struct adac_pending_seg *s = &st->segs[i];
		struct adac_awaiting buf;
		const struct adac_awaiting *aw =
			i == 0 && s->node->kind != ADAC_NODE_CHAIN ? adac_pending_stack_awaiting(l, st, &buf) : NULL;
		if (aw)
			adac_awaiting_print(aw, out);
		if (s->node->kind == ADAC_NODE_CHAIN) {
			struct adac_resolved_chain v = s->view;
			if (i > 0)
				v.has_awaiting = false; /* it awaits the frame printed before it */
			frame += adac_chain_view_print_ex(st->rt, &v, out, frame, 0, flags, texts);
		} else if (s->node->kind == ADAC_NODE_BOX) {
			const struct adac_classic_frame *c = &s->classic;
			char where[ADAC_FRAME_WHERE_MAX];
			adac_print(out, "  async #%zu: 0x%016llx %s`%s%s [classic", frame++, (unsigned long long)c->box,
			           c->module ? c->module : "?", c->method ? c->method : "<unknown method>",
			           adac_frame_where(c->has_source, c->file, c->line, c->has_il, c->il_offset, where, sizeof where));
			if (c->has_state)
				adac_print(out, ", state %d", c->state);
			adac_print(out, "]\n");
			if (c->note[0])
				adac_print(out, "      note: %s\n", c->note);
			if ((flags & ADAC_VIEW_LOCALS) && c->state_machine)
				adac_print(out, "      (its locals are fields of its state machine %s, at 0x%016llx%s)\n",
				           c->state_machine_mt ? adac_type_name(st->rt, c->state_machine_mt, 0, NULL) : "?",
				           (unsigned long long)c->state_machine, c->state_machine_inline ? " inside the box" : "");
		} else {
			struct adac_task_desc d;
			adac_pending_node_task_desc_on(p, st->rt, s->node, &d);
			adac_print(out, "  async #%zu: 0x%016llx %s [task%s%s]\n", frame++, (unsigned long long)d.addr,
			           d.type ? d.type : "?", d.has_flags ? ", " : "", d.has_flags ? adac_task_status(d.flags) : "");
		}
	}
	if (st->running && !has_resumed)
		adac_print(out, "  (the method this chain resumed runs on the thread: see its physical frames with bt)\n");
	const struct adac_held_lock *lock = adac_pending_stack_lock_wait(p, st);
	if (lock)
		adac_lock_waiting_print(st->rt, lock, out);
	const struct adac_monitor_wait *mw = adac_pending_stack_monitor_wait(p, st);
	if (mw)
		adac_lock_monitor_wait_print(st->rt, &p->locks, mw, out);
	const struct adac_sync_wait *sw = adac_pending_stack_thread_sync_wait(p, st);
	if (sw)
		adac_print(out, "  waiting synchronously for: task 0x%016llx (%s)\n", (unsigned long long)sw->task,
		           ADAC_SYNC_WAYS);
	char event[200];
	if (adac_pending_stack_event_wait(p, st, event, sizeof event))
		adac_print(out, "  %s\n", event);
	if (st->stack->cycle) {
		char *cycle = adac_pending_cycle_text(l, st);
		adac_print(out, "  deadlock: %s\n", cycle ? cycle : "the last frame's task is awaited by a frame above it");
		free(cycle);
	}
	if (st->stack->truncated)
		adac_print(out, "  (stopped after %u stitched segments, ADAC_MAX_CHAIN_DEPTH)\n", st->stack->count);
	each_wait(p, st, print_wait, out);
	char text[4096];
	const char *threads = adac_pending_stack_wait_cycle(p, st, text, sizeof text);
	if (threads)
		adac_print(out, "  deadlock: %s\n", threads);
}

void adac_pending_print_warnings(const struct adac_pending *p, struct adac_out *out)
{
	if (!p->scan.structures_valid)
		adac_print(out, "Warning: the GC heap was stopped during a garbage collection "
		                "(StructureInvalidCount != 0); objects may be missed or misread.\n");
	for (size_t i = 0; i < p->scan.walk.error_count; i++)
		adac_print(out, "Warning: heap walk: %s (after %llu objects of that region); its objects are missing.\n",
		           p->scan.walk.errors[i].err.msg, (unsigned long long)p->scan.walk.errors[i].objects_before);
	if (adac_failed(&p->scan.threads_err))
		adac_print(out, "Warning: running chains: %s\n", p->scan.threads_err.msg);
	if (adac_failed(&p->scan.awaiters_cut))
		adac_print(out, "Warning: %s\n", p->scan.awaiters_cut.msg);
	if (p->graph.stacks_capped)
		adac_print(out, "Warning: stopped after %zu stacks (at most %u stacks, 2^25 frames in all); the others are "
		                "not listed\n", p->graph.stack_count, ADAC_MAX_CHAINS);
}

void adac_pending_print_summary(const struct adac_pending_list *l, struct adac_out *out)
{
	const struct adac_async_scan *s = &l->p->scan;
	size_t roots[4] = {0}, boxes = 0;
	for (size_t i = 0; i < s->chain_count; i++)
		roots[s->chains[i].root]++;
	for (size_t i = 0; i < s->task_count; i++)
		boxes += adac_scan_task_is_box(s, (uint32_t)i);
	adac_print(out, "%zu chain%s listed", l->listed, l->listed == 1 ? "" : "s");
	if (l->filtered_out)
		adac_print(out, " (%zu more do not match the filters)", l->filtered_out);
	adac_print(out, "; %zu running. Heap: %zu continuations, %zu pending tasks, %zu classic state machines",
	           l->running, s->cont_count, s->task_count, boxes);
	if (roots[ADAC_ROOT_STALE] || l->without_frames)
		adac_print(out, "; not listed: %zu stale continuation chain%s, %zu without frames", roots[ADAC_ROOT_STALE],
		           roots[ADAC_ROOT_STALE] == 1 ? "" : "s", l->without_frames);
	adac_print(out, ".\n");
}

/* ---- completed async tasks (--completed) ---- */

struct completed {
	struct adac_runtime *rt;
	struct adac_out *out;
	json_t *json;           /* the array, or NULL for text */
	size_t n;
};

static int on_completed(void *ctx, uint64_t addr, uint64_t mt, uint32_t flags)
{
	struct completed *c = ctx;
	const char *type = adac_type_name(c->rt, mt, 0, NULL);
	c->n++;
	if (c->json) {
		json_t *j = json_object();
		json_object_set_new(j, "address", adac_json_addr(addr));
		json_object_set_new(j, "method_table", adac_json_addr(mt));
		json_object_set_new(j, "type", type ? adac_json_text(type) : json_null());
		json_object_set_new(j, "status", adac_json_text(adac_task_status(flags)));
		json_array_append_new(c->json, j);
	} else {
		if (c->n == 1)
			adac_print(c->out, "Completed async tasks still on the heap (--completed):\n");
		adac_print(c->out, "  task 0x%016llx %s [%s]\n", (unsigned long long)addr, type ? type : "?",
		           adac_task_status(flags));
	}
	return 0;
}

/* The completed async tasks, as text (then a blank line) or into json. */
static int print_completed(const struct adac_pending_list *l, struct adac_out *out, json_t *json, struct adac_error *err)
{
	struct completed c = {.rt = l->p->rt, .out = out, .json = json};
	struct adac_gc_walk_report rep;
	int rc = adac_async_scan_completed(l->p->rt, on_completed, &c, l->out, &rep, err);
	if (rc == 0)
		adac_gc_walk_report_free(&rep);
	if (rc == 0 && !json)
		adac_print(out, c.n ? "\n" : "No completed async task is on the heap (--completed).\n\n");
	return rc;
}

/* What each of the listing's threads prints stacks with (adac_pending_list_digest). */
struct text_digest {
	const struct adac_pending_list *l;
	unsigned flags;
	struct adac_frame_texts *texts;   /* NULL: each frame formatted */
};

/* A stack's text on the thread that resolved it; the listing's thread writes it after the stack's
 * number. */
static void digest_text(void *ctx, const struct adac_pending_stack *st, struct adac_out *out)
{
	const struct text_digest *d = ctx;
	print_stack(d->l, st, d->flags, out, d->texts);
}

int adac_pending_print(struct adac_pending_list *l, unsigned flags, struct adac_out *out, struct adac_error *err)
{
	adac_pending_print_warnings(l->p, out);
	struct adac_pending_stack st;
	struct text_digest d[1 + ADAC_LIST_MAX_HELPERS];
	void *ctxs[1 + ADAC_LIST_MAX_HELPERS];
	for (unsigned k = 0; k < 1 + ADAC_LIST_MAX_HELPERS; k++) {
		d[k] = (struct text_digest){l, flags, adac_frame_texts_new()};
		ctxs[k] = &d[k];
	}
	/* Locals are read through the listing's runtime: printed on its thread. */
	bool digested =
		!(flags & (ADAC_VIEW_LOCALS | ADAC_VIEW_INTERNALS)) && adac_pending_list_digest(l, digest_text, ctxs);
	int more;
	while ((more = adac_pending_list_next(l, &st, err)) > 0) {
		print_number(&st, out);
		if (digested && st.text_len)
			out->write(out->ctx, st.text, st.text_len);
		else
			print_stack(l, &st, flags, out, d[0].texts);
	}
	if (digested)
		adac_pending_list_digest_end(l);
	for (unsigned k = 0; k < 1 + ADAC_LIST_MAX_HELPERS; k++)
		adac_frame_texts_free(d[k].texts);
	if (more < 0)
		return -1;
	if (l->listed)
		adac_print(out, "\n");
	if (l->completed && print_completed(l, out, NULL, err))
		return -1;
	adac_pending_print_summary(l, out);
	return 0;
}

/* ---- JSON ---- */

static json_t *task_json(const struct adac_pending *p, struct adac_runtime *rt, uint64_t addr)
{
	if (!addr)
		return json_null();
	struct adac_task_desc d;
	adac_pending_task_on(p, rt, addr, &d);
	json_t *j = json_object();
	json_object_set_new(j, "address", adac_json_addr(addr));
	json_object_set_new(j, "method_table", d.mt ? adac_json_addr(d.mt) : json_null());
	json_object_set_new(j, "type", d.type ? adac_json_text(d.type) : json_null());
	if (d.id)
		json_object_set_new(j, "id", json_integer(d.id));
	if (d.has_flags) {
		char buf[256];
		json_object_set_new(j, "status", adac_json_text(adac_task_status(d.flags)));
		json_object_set_new(j, "state_flags", json_integer((json_int_t)d.flags));
		json_object_set_new(j, "flags", adac_json_text(adac_task_flags_text(d.flags, buf, sizeof buf)));
	}
	return j;
}

static json_t *links_json(const struct adac_chain *c)
{
	json_t *a = json_array();
	for (size_t i = 0; i < c->count; i++)
		json_array_append_new(a, adac_json_addr(c->links[i].addr));
	return a;
}

static json_t *classic_json(struct adac_runtime *rt, const struct adac_classic_frame *c, size_t index)
{
	json_t *f = json_object();
	json_object_set_new(f, "index", json_integer((json_int_t)index));
	json_object_set_new(f, "kind", json_string("classic"));
	json_object_set_new(f, "box", adac_json_addr(c->box));
	json_object_set_new(f, "method_table", adac_json_addr(c->mt));
	json_object_set_new(f, "state_machine_type",
	                    c->state_machine_mt ? adac_json_text(adac_type_name(rt, c->state_machine_mt, 0, NULL)) : json_null());
	json_object_set_new(f, "state_machine", c->state_machine ? adac_json_addr(c->state_machine) : json_null());
	json_object_set_new(f, "state", c->has_state ? json_integer(c->state) : json_null());
	json_object_set_new(f, "method_desc", c->method_desc ? adac_json_addr(c->method_desc) : json_null());
	json_object_set_new(f, "method", c->method ? adac_json_text(c->method) : json_null());
	json_object_set_new(f, "module", c->module ? adac_json_text(c->module) : json_null());
	json_object_set_new(f, "token", c->token ? json_integer(c->token) : json_null());
	json_object_set_new(f, "il_offset", c->has_il ? json_integer(c->il_offset) : json_null());
	json_object_set_new(f, "file", c->has_source ? adac_json_text(c->file) : json_null());
	json_object_set_new(f, "line", c->has_source ? json_integer(c->line) : json_null());
	json_object_set_new(f, "note", c->note[0] ? adac_json_text(c->note) : json_null());
	return f;
}

/* {"pc", "method", "module", "offset", "file", "line"} of the method a running chain resumed. */
static json_t *resumed_json(const struct adac_stack_frame *f)
{
	json_t *j = json_object();
	json_object_set_new(j, "pc", adac_json_addr(f->pc));
	json_object_set_new(j, "method", adac_json_text(f->symbol));
	json_object_set_new(j, "module", f->module ? adac_json_text(f->module) : json_null());
	json_object_set_new(j, "offset", json_integer((json_int_t)f->offset));
	json_object_set_new(j, "file", f->file ? adac_json_text(f->file) : json_null());
	json_object_set_new(j, "line", f->file ? json_integer(f->line) : json_null());
	return j;
}

/* A stack's JSON; numbered: with its "index" first (a digest leaves it to the listing's thread). */
static json_t *stack_json(const struct adac_pending_list *l, const struct adac_pending_stack *st, unsigned flags,
                          bool numbered)
{
	const struct adac_pending *p = l->p;
	json_t *j = json_object(), *frames = json_array(), *segs = json_array();
	if (numbered)
		json_object_set_new(j, "index", json_integer((json_int_t)st->number));
	json_object_set_new(j, "task", task_json(p, st->rt, adac_pending_node_task(p, st->segs[st->stack->count - 1].node)));
	if (st->running) {
		json_t *r = json_object();
		json_object_set_new(r, "tid", json_integer((json_int_t)st->running->os_tid));
		json_object_set_new(r, "managed_id", json_integer(st->running->managed_id));
		json_object_set_new(r, "dispatcher", adac_json_addr(st->running->dispatcher));
		struct adac_stack_frame f;
		json_object_set_new(r, "resumed", adac_pending_stack_resumed(st, &f) ? resumed_json(&f) : json_null());
		json_object_set_new(j, "running", r);
	} else {
		json_object_set_new(j, "running", json_null());
	}
	struct adac_awaiting buf;
	const struct adac_awaiting *aw = adac_pending_stack_awaiting(l, st, &buf);
	json_object_set_new(j, "awaiting", aw ? adac_awaiting_json(aw) : json_null());
	size_t frame = 0;
	for (uint32_t i = 0; i < st->stack->count; i++) {
		const struct adac_pending_seg *s = &st->segs[i];
		json_t *sj = json_object();
		if (s->node->kind == ADAC_NODE_CHAIN) {
			const struct adac_scan_chain *ch = &p->scan.chains[s->node->index];
			frame += adac_chain_frames_json(st->rt, &s->view, 0, flags, frame, frames, NULL);
			json_object_set_new(sj, "kind", json_string("chain"));
			json_object_set_new(sj, "root", adac_json_text(adac_chain_root_name(ch->root)));
			json_object_set_new(sj, "head", adac_json_addr(adac_chain_view_head(&s->view)));
			json_object_set_new(sj, "task", task_json(p, st->rt, adac_scan_chain_task(&p->scan, s->node->index)));
			json_object_set_new(sj, "links", links_json(&s->view.chain));
			adac_chain_end_json(&s->view, sj);
		} else if (s->node->kind == ADAC_NODE_BOX) {
			json_array_append_new(frames, classic_json(st->rt, &s->classic, frame++));
			json_object_set_new(sj, "kind", json_string("box"));
			json_object_set_new(sj, "task", task_json(p, st->rt, s->classic.box));
		} else {
			uint64_t t = p->scan.tasks[s->node->index].addr;
			json_t *f = json_object();
			json_object_set_new(f, "index", json_integer((json_int_t)frame++));
			json_object_set_new(f, "kind", json_string("task"));
			json_object_set_new(f, "task", task_json(p, st->rt, t));
			json_array_append_new(frames, f);
			json_object_set_new(sj, "kind", json_string("task"));
			json_object_set_new(sj, "task", task_json(p, st->rt, t));
		}
		json_array_append_new(segs, sj);
	}
	json_object_set_new(j, "frames", frames);
	json_object_set_new(j, "segments", segs);
	json_object_set_new(j, "cycle", json_boolean(st->stack->cycle));
	json_t *waits = adac_pending_stack_sync_waits_json(p, st);
	if (waits)
		json_object_set_new(j, "sync_waits", waits);
	const struct adac_held_lock *lock = adac_pending_stack_lock_wait(p, st);
	if (lock)
		json_object_set_new(j, "waiting_for_lock", adac_lock_brief_json(st->rt, lock));
	const struct adac_monitor_wait *mw = adac_pending_stack_monitor_wait(p, st);
	if (mw)
		json_object_set_new(j, "monitor_wait", adac_lock_monitor_wait_json(st->rt, &p->locks, mw));
	const struct adac_sync_wait *sw = adac_pending_stack_thread_sync_wait(p, st);
	if (sw)
		json_object_set_new(j, "thread_sync_wait", adac_pending_thread_sync_wait_json(sw));
	char event[200];
	const struct adac_condition_wait *ew = adac_pending_stack_event_wait(p, st, event, sizeof event);
	if (ew)
		json_object_set_new(j, "event_wait", adac_pending_event_wait_json(p, ew));
	char *cycle = st->stack->cycle ? adac_pending_cycle_text(l, st) : NULL, text[4096];
	const char *threads = cycle ? cycle : adac_pending_stack_wait_cycle(p, st, text, sizeof text);
	if (threads)
		json_object_set_new(j, "deadlock", adac_json_text(threads));
	free(cycle);
	json_object_set_new(j, "truncated", json_boolean(st->stack->truncated));
	return j;
}

json_t *adac_pending_stack_json(const struct adac_pending_list *l, const struct adac_pending_stack *st, unsigned flags)
{
	return stack_json(l, st, flags, true);
}

static json_t *summary_json(const struct adac_pending_list *l)
{
	const struct adac_async_scan *s = &l->p->scan;
	size_t roots[4] = {0};
	for (size_t i = 0; i < s->chain_count; i++)
		roots[s->chains[i].root]++;
	uint64_t resolved, hits;
	adac_pending_list_frame_stats(l, &resolved, &hits);
	json_t *j = json_object();
	json_object_set_new(j, "listed", json_integer((json_int_t)l->listed));
	json_object_set_new(j, "frames_listed", json_integer((json_int_t)l->frames_listed));
	json_object_set_new(j, "stacks", json_integer((json_int_t)l->p->graph.stack_count));
	json_object_set_new(j, "filtered_out", json_integer((json_int_t)l->filtered_out));
	json_object_set_new(j, "without_frames", json_integer((json_int_t)l->without_frames));
	json_object_set_new(j, "continuations", json_integer((json_int_t)s->cont_count));
	json_object_set_new(j, "chains", json_integer((json_int_t)s->chain_count));
	json_object_set_new(j, "running_chains", json_integer((json_int_t)roots[ADAC_ROOT_RUNNING]));
	json_object_set_new(j, "task_chains", json_integer((json_int_t)roots[ADAC_ROOT_TASK]));
	json_object_set_new(j, "unowned_chains", json_integer((json_int_t)roots[ADAC_ROOT_UNOWNED]));
	json_object_set_new(j, "stale_chains", json_integer((json_int_t)roots[ADAC_ROOT_STALE]));
	size_t boxes = 0;
	for (size_t i = 0; i < s->task_count; i++)
		boxes += adac_scan_task_is_box(s, (uint32_t)i);
	json_object_set_new(j, "pending_tasks", json_integer((json_int_t)s->task_count));
	json_object_set_new(j, "state_machines", json_integer((json_int_t)boxes));
	json_object_set_new(j, "completed_tasks", json_integer((json_int_t)s->tasks_completed));
	json_object_set_new(j, "heap_objects", json_integer((json_int_t)s->objects));
	json_object_set_new(j, "frames_resolved", json_integer((json_int_t)resolved));
	json_object_set_new(j, "frames_cached", json_integer((json_int_t)hits));
	if (l->timings) {
		/* Wall times differ between runs: only when asked, so that two documents of one dump diff. */
		json_object_set_new(j, "heap_seconds", json_real(s->seconds_heap));
		json_object_set_new(j, "link_seconds", json_real(s->seconds_link));
		json_object_set_new(j, "stacks_seconds", json_real(l->p->seconds_stacks));
		json_object_set_new(j, "list_seconds", json_real(adac_seconds() - l->p->collected_at));
		json_object_set_new(j, "list_threads", json_integer((json_int_t)(1 + l->helpers)));
	}
	return j;
}

/* Chains not in a listed stack, and why, with their heads and the continuations they hold. */
static json_t *unlisted_json(const struct adac_pending *p)
{
	json_t *a = json_array();
	const struct adac_async_scan *s = &p->scan;
	for (size_t i = 0; i < s->chain_count; i++) {
		const char *why = adac_pending_unlisted(p, i);
		if (!why)
			continue;
		const struct adac_scan_chain *ch = &s->chains[i];
		json_t *j = json_object(), *links = json_array();
		json_object_set_new(j, "head", adac_json_addr(ch->head));
		json_object_set_new(j, "root", adac_json_text(adac_chain_root_name(ch->root)));
		json_object_set_new(j, "reason", adac_json_text(why));
		/* Its continuations as the heap pass linked them: the first ch->links of the walk from
		 * its head (the records are gone; the target gives the same Nexts). */
		uint64_t cur = ch->head;
		for (uint32_t k = 0; k < ch->links && cur; k++) {
			json_array_append_new(links, adac_json_addr(cur));
			struct adac_continuation c;
			cur = adac_cont_read(p->rt, cur, &c, NULL) == 0 ? c.next : 0;
		}
		json_object_set_new(j, "links", links);
		json_array_append_new(a, j);
	}
	return a;
}

void adac_pending_json_members(const struct adac_pending_list *l, json_t *ps)
{
	const struct adac_async_scan *s = &l->p->scan;
	json_object_set_new(ps, "summary", summary_json(l));
	json_object_set_new(ps, "unlisted", unlisted_json(l->p));
	json_t *errs = json_array();
	for (size_t i = 0; i < s->walk.error_count; i++)
		json_array_append_new(errs, adac_json_text(s->walk.errors[i].err.msg));
	json_object_set_new(ps, "heap_errors", errs);
	json_object_set_new(ps, "structures_valid", json_boolean(s->structures_valid));
	json_object_set_new(ps, "heap_reruns", json_integer(s->walk.reruns));
	json_object_set_new(ps, "threads_error", adac_failed(&s->threads_err) ? adac_json_text(s->threads_err.msg) : json_null());
	if (adac_failed(&s->awaiters_cut))
		json_object_set_new(ps, "awaiters_cut", adac_json_text(s->awaiters_cut.msg));
}

#define CHAIN_INDENT 6u   /* a stack's JSON in "chains" */

struct json_digest {
	const struct adac_pending_list *l;
	unsigned flags;
	/* The thread's values of a stack: alone on its cache line, as each allocation writes it (two
	 * threads' arenas on one line cost a third of the listing's time). */
	_Alignas(64) struct adac_arena scratch;
};

/* A stack's JSON on the thread that resolved it (formatting a million stacks was most of a listing's
 * time, on one thread): its members but "index" (which the listing's thread writes first), as
 * adac_json_print_indented prints them in "chains", and its closing brace. Nothing when memory runs
 * out: the listing's thread then formats it itself. */
static void digest_json(void *ctx, const struct adac_pending_stack *st, struct adac_out *out)
{
	struct json_digest *d = ctx;
	adac_json_scratch_begin(&d->scratch);
	json_t *j = stack_json(d->l, st, d->flags, false);
	struct adac_error ignored = {0};
	if (j && adac_json_print_members(out, j, CHAIN_INDENT, &ignored) == 0)
		adac_print(out, "\n%*s}", (int)CHAIN_INDENT, "");
	json_decref(j);
	adac_json_scratch_end();
}

int adac_pending_print_json(struct adac_pending_list *l, unsigned flags, struct adac_out *out, struct adac_error *err)
{
	adac_json_document_open(out, "ps");
	adac_print(out, "{\n    \"chains\": [");
	struct adac_pending_stack st;
	struct json_digest d[1 + ADAC_LIST_MAX_HELPERS];
	void *ctxs[1 + ADAC_LIST_MAX_HELPERS];
	for (unsigned k = 0; k < 1 + ADAC_LIST_MAX_HELPERS; k++) {
		d[k] = (struct json_digest){l, flags, {0}};
		ctxs[k] = &d[k];
	}
	adac_json_scratch_setup();
	/* Locals are read through the listing's runtime: formatted on its thread. (jansson seeds its
	 * hashes with the first object made: here, before helper threads make theirs.) */
	json_decref(json_object());
	bool digested =
		!(flags & (ADAC_VIEW_LOCALS | ADAC_VIEW_INTERNALS)) && adac_pending_list_digest(l, digest_json, ctxs);
	int more = 0, rc = 0;
	while (rc == 0 && (more = adac_pending_list_next(l, &st, err)) > 0) {
		const char *sep = st.index ? ",\n" : "\n";
		if (digested && st.text_len) {
			adac_print(out, "%s%*s{\n%*s\"index\": %zu,", sep, (int)CHAIN_INDENT, "", (int)CHAIN_INDENT + 2, "", st.number);
			out->write(out->ctx, st.text, st.text_len);
			continue;
		}
		adac_json_scratch_begin(&d[0].scratch); /* (the listing's thread's) */
		json_t *j = adac_pending_stack_json(l, &st, flags);
		rc = adac_json_print_indented(out, sep, j, CHAIN_INDENT, "", err);
		json_decref(j);
		adac_json_scratch_end();
	}
	if (digested)
		adac_pending_list_digest_end(l);
	for (unsigned k = 0; k < 1 + ADAC_LIST_MAX_HELPERS; k++)
		adac_arena_free(&d[k].scratch);
	if (rc || more < 0)
		return -1;
	adac_print(out, l->listed ? "\n    ]" : "]");
	json_t *rest = json_object();
	if (l->completed) {
		json_t *done = json_array();
		json_object_set_new(rest, "completed", done);
		if (print_completed(l, out, done, err)) {
			json_decref(rest);
			return -1;
		}
	}
	adac_pending_json_members(l, rest);
	return adac_json_document_close(out, rest, err);
}

int adac_pending_print_stacks(struct adac_pending_list *l, unsigned flags, struct adac_out *out, json_t *json,
                              struct adac_error *err)
{
	struct adac_pending_stack st;
	int more;
	while ((more = adac_pending_list_next(l, &st, err)) > 0) {
		if (json) {
			json_array_append_new(json, adac_pending_stack_json(l, &st, flags));
		} else {
			print_number(&st, out);
			print_stack(l, &st, flags, out, NULL);
		}
	}
	return more < 0 ? -1 : 0;
}
