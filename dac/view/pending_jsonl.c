/* pending_jsonl.c - `ps --jsonl`: stacks as JSON Lines, frames and type names described once. */
#include "view/pending_jsonl.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async/thread_stack.h"
#include "async/task.h"
#include "base/addr_map.h"
#include "base/json.h"
#include "base/line.h"
#include "base/output.h"
#include "types/names.h"
#include "view/lock_view.h"
#include "view/pending_list.h"
#include "view/pending_view.h"

/* ---- a line being written ---- */

/* "name": (with the comma before every member but an object's first: `first` says which). */
static void key(struct adac_line *b, bool *first, const char *name)
{
	if (!*first)
		adac_line_put_n(b, ",", 1);
	*first = false;
	adac_line_put_n(b, "\"", 1);
	adac_line_put(b, name);
	adac_line_put_n(b, "\":", 2);
}

/* "0x%016" PRIx64, quoted. */
static void put_addr(struct adac_line *b, uint64_t v)
{
	adac_line_put_n(b, "\"", 1);
	adac_line_addr(b, v);
	adac_line_put_n(b, "\"", 1);
}
static void put_addr_or_null(struct adac_line *b, uint64_t v)
{
	if (v)
		put_addr(b, v);
	else
		adac_line_put(b, "null");
}

static int flush_line(struct adac_line *b, struct adac_out *out, struct adac_error *err)
{
	if (b->nomem)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory formatting JSON Lines");
	adac_line_put_n(b, "\n", 1);
	if (b->nomem)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory formatting JSON Lines");
	out->write(out->ctx, b->p, b->len);
	b->len = 0;
	return 0;
}

/* ---- what is described once: frames and type names ---- */

enum desc_kind { DESC_ASYNC, DESC_CLASSIC, DESC_TASK };

/* Every member of a frame's description line; two frames with equal fields share one. */
struct desc {
	enum desc_kind kind;
	uint64_t mt, ip, diagnostic_ip, resume, method_desc, code_start, offset, resume_md, sm_mt;
	int32_t state;
	bool has_state, has_code, has_il, has_source;
	uint32_t token, il_offset, line;
	const char *method, *canonical, *module, *file, *note, *type;
};

struct slot {
	uint64_t hash;
	uint32_t id;
	bool used;
	struct desc d;   /* its strings owned by the table */
};

struct table {
	struct slot *slots;
	size_t cap, used;
};

static uint64_t hash_str(uint64_t h, const char *s)
{
	if (!s)
		return h * 0x100000001B3ull ^ 0xFF;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001B3ull;
	return h;
}

static uint64_t hash_desc(const struct desc *d)
{
	uint64_t h = 0xCBF29CE484222325ull ^ (uint64_t)d->kind;
	const uint64_t nums[] = {d->mt, d->ip, d->diagnostic_ip, d->resume, d->method_desc, d->code_start, d->offset,
	                         d->resume_md, d->sm_mt, (uint64_t)(uint32_t)d->state, d->token, d->il_offset, d->line,
	                         (uint64_t)d->has_state | (uint64_t)d->has_code << 1 | (uint64_t)d->has_il << 2 |
	                             (uint64_t)d->has_source << 3};
	for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
		h = (h ^ nums[i]) * 0x9E3779B97F4A7C15ull;
	/* The names follow from the addresses; hashed only when there are none (a million frames
	 * in the same few methods would hash the same names a million times). */
	if (!(d->mt | d->ip | d->diagnostic_ip | d->resume | d->method_desc | d->sm_mt)) {
		h = hash_str(h, d->method);
		h = hash_str(h, d->type);
	}
	return h ^ h >> 31;
}

static bool str_eq(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

static bool desc_eq(const struct desc *a, const struct desc *b)
{
	return a->kind == b->kind && a->mt == b->mt && a->ip == b->ip && a->diagnostic_ip == b->diagnostic_ip &&
	       a->resume == b->resume && a->method_desc == b->method_desc && a->code_start == b->code_start &&
	       a->offset == b->offset && a->resume_md == b->resume_md && a->sm_mt == b->sm_mt && a->state == b->state &&
	       a->has_state == b->has_state && a->has_code == b->has_code && a->has_il == b->has_il &&
	       a->has_source == b->has_source && a->token == b->token && a->il_offset == b->il_offset &&
	       a->line == b->line && str_eq(a->method, b->method) && str_eq(a->canonical, b->canonical) &&
	       str_eq(a->module, b->module) && str_eq(a->file, b->file) && str_eq(a->note, b->note) &&
	       str_eq(a->type, b->type);
}

static void desc_free(struct desc *d)
{
	free((char *)d->method);
	free((char *)d->canonical);
	free((char *)d->module);
	free((char *)d->file);
	free((char *)d->note);
	free((char *)d->type);
}

static int own(const char **s)
{
	if (*s && !(*s = strdup(*s)))
		return -1;
	return 0;
}

static void table_free(struct table *t)
{
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i].used)
			desc_free(&t->slots[i].d);
	free(t->slots);
}

static int table_grow(struct table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 64;
	struct slot *s = calloc(cap, sizeof *s);
	if (!s)
		return -1;
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->slots[i].used)
			continue;
		size_t j = t->slots[i].hash & (cap - 1);
		while (s[j].used)
			j = (j + 1) & (cap - 1);
		s[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = s;
	t->cap = cap;
	return 0;
}

/* d's id in t: 1 when it is new (its strings then copied into the table), 0 when known, -1 when
 * out of memory. */
static int intern(struct table *t, const struct desc *d, uint32_t *id)
{
	if ((t->used + 1) * 2 > t->cap && table_grow(t))
		return -1;
	uint64_t h = hash_desc(d);
	size_t j = h & (t->cap - 1);
	for (; t->slots[j].used; j = (j + 1) & (t->cap - 1)) {
		if (t->slots[j].hash == h && desc_eq(&t->slots[j].d, d)) {
			*id = t->slots[j].id;
			return 0;
		}
	}
	struct slot *s = &t->slots[j];
	s->d = *d;
	if (own(&s->d.method) || own(&s->d.canonical) || own(&s->d.module) || own(&s->d.file) || own(&s->d.note) ||
	    own(&s->d.type)) {
		desc_free(&s->d);
		memset(s, 0, sizeof *s);
		return -1;
	}
	s->used = true;
	s->hash = h;
	s->id = (uint32_t)t->used++;
	*id = s->id;
	return 1;
}

/* A type's id by its name's address: the runtime's names stay put while it is open, and a million
 * lines name the same two or three types (not hashed by content again). */
struct type_at {
	uint64_t name;
	uint32_t id;
};

struct jsonl {
	struct adac_pending_list *l;
	struct adac_out *out;
	struct table frames, types;
	struct adac_addr_map type_ids;   /* struct type_at by the name's address, in front of types */
	struct adac_line pre;   /* type and frame lines the stack line needs, written before it */
	struct adac_line row;   /* the stack line */
};

/* ---- description lines ---- */

static void desc_line(struct adac_line *b, const struct desc *d, uint32_t id)
{
	bool f = true;
	key(b, &f, "frame");
	adac_line_u64(b, id);
	key(b, &f, "kind");
	adac_line_put(b, d->kind == DESC_ASYNC ? "\"async\"" : d->kind == DESC_CLASSIC ? "\"classic\"" : "\"task\"");
	if (d->kind == DESC_TASK) {
		key(b, &f, "type");
		adac_line_json_str(b, d->type);
		adac_line_put(b, "}");
		return;
	}
	key(b, &f, "method_table");
	put_addr(b, d->mt);
	if (d->kind == DESC_ASYNC) {
		key(b, &f, "ip");
		put_addr(b, d->ip);
		key(b, &f, "diagnostic_ip");
		put_addr_or_null(b, d->diagnostic_ip);
		key(b, &f, "resume");
		put_addr_or_null(b, d->resume);
	} else {
		key(b, &f, "state_machine_type");
		adac_line_json_str(b, d->type);
	}
	key(b, &f, "state");
	if (d->has_state)
		adac_line_i64(b, d->state);
	else
		adac_line_put(b, "null");
	key(b, &f, "method_desc");
	put_addr_or_null(b, d->method_desc);
	key(b, &f, "method");
	adac_line_json_str(b, d->method);
	if (d->kind == DESC_ASYNC) {
		key(b, &f, "canonical_method");
		adac_line_json_str(b, d->canonical);
	}
	key(b, &f, "module");
	adac_line_json_str(b, d->module);
	key(b, &f, "token");
	if (d->token)
		adac_line_u64(b, d->token);
	else
		adac_line_put(b, "null");
	if (d->kind == DESC_ASYNC) {
		key(b, &f, "code_start");
		if (d->has_code)
			put_addr(b, d->code_start);
		else
			adac_line_put(b, "null");
		key(b, &f, "offset");
		if (d->has_code)
			adac_line_u64(b, d->offset);
		else
			adac_line_put(b, "null");
	}
	key(b, &f, "il_offset");
	if (d->has_il)
		adac_line_u64(b, d->il_offset);
	else
		adac_line_put(b, "null");
	key(b, &f, "file");
	adac_line_json_str(b, d->has_source ? d->file : NULL);
	key(b, &f, "line");
	if (d->has_source)
		adac_line_u64(b, d->line);
	else
		adac_line_put(b, "null");
	if (d->kind == DESC_ASYNC) {
		key(b, &f, "resume_method_desc");
		put_addr_or_null(b, d->resume_md);
	}
	key(b, &f, "note");
	adac_line_json_str(b, d->note && d->note[0] ? d->note : NULL);
	adac_line_put(b, "}");
}

/* The id of frame description d, writing its line first when it is new. */
static int frame_id(struct jsonl *j, const struct desc *d, uint32_t *id, struct adac_error *err)
{
	int rc = intern(&j->frames, d, id);
	if (rc < 0)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory describing frames");
	if (rc > 0) {
		adac_line_put(&j->pre, "{");
		desc_line(&j->pre, d, *id);
		adac_line_put(&j->pre, "\n");
	}
	return 0;
}

/* The id of a type name (NULL: none, *id unset and 0 returned with *known false). */
static int type_id(struct jsonl *j, const char *name, uint32_t *id, struct adac_error *err)
{
	const struct type_at *known = adac_addr_map_find(&j->type_ids, (uintptr_t)name);
	if (known) {
		*id = known->id;
		return 0;
	}
	struct desc d = {.kind = DESC_TASK, .type = name};
	int rc = intern(&j->types, &d, id);
	if (rc < 0)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory describing types");
	if (rc > 0) {
		bool f = true;
		adac_line_put(&j->pre, "{");
		key(&j->pre, &f, "type");
		adac_line_u64(&j->pre, *id);
		key(&j->pre, &f, "name");
		adac_line_json_str(&j->pre, name);
		adac_line_put(&j->pre, "}\n");
	}
	struct type_at *at = adac_addr_map_get(&j->type_ids, (uintptr_t)name, sizeof *at, NULL);
	if (at) /* (else out of memory: only not remembered) */
		at->id = *id;
	return 0;
}

static int put_type(struct jsonl *j, struct adac_line *b, const char *name, struct adac_error *err)
{
	uint32_t id;
	if (!name) {
		adac_line_put(b, "null");
		return 0;
	}
	if (type_id(j, name, &id, err))
		return -1;
	adac_line_u64(b, id);
	return 0;
}

/* ---- stack lines ---- */

/* The task of node n (adac_pending_node_task). */
static int put_task(struct jsonl *j, struct adac_line *b, const struct adac_async_node *n, struct adac_error *err)
{
	struct adac_task_desc d;
	adac_pending_node_task_desc(j->l->p, n, &d);
	if (!d.addr) {
		adac_line_put(b, "null");
		return 0;
	}
	bool f = true;
	adac_line_put(b, "{");
	key(b, &f, "address");
	put_addr(b, d.addr);
	key(b, &f, "type");
	if (put_type(j, b, d.type, err))
		return -1;
	if (d.id) {
		key(b, &f, "id");
		adac_line_u64(b, d.id);
	}
	if (d.has_flags) {
		key(b, &f, "status");
		adac_line_json_str(b, adac_task_status(d.flags));
		key(b, &f, "state_flags");
		adac_line_u64(b, d.flags);
	}
	adac_line_put(b, "}");
	return 0;
}

static int put_awaiting(struct jsonl *j, struct adac_line *b, const struct adac_awaiting *a, struct adac_error *err)
{
	bool f = true;
	adac_line_put(b, "{");
	key(b, &f, "object");
	put_addr(b, a->object);
	key(b, &f, "type");
	if (put_type(j, b, a->type, err))
		return -1;
	key(b, &f, "field");
	adac_line_json_str(b, a->via);
	if (a->has_token) {
		key(b, &f, "token");
		adac_line_i64(b, a->token);
	}
	if (a->has_state_flags) {
		key(b, &f, "status");
		adac_line_json_str(b, adac_task_status(a->state_flags));
		key(b, &f, "state_flags");
		adac_line_u64(b, a->state_flags);
	}
	if (a->leaf[0]) {
		key(b, &f, "what");
		adac_line_json_str(b, a->leaf);
	}
	adac_line_put(b, "}");
	return 0;
}

/* [id, addr] (classic frames: [id, box, state machine]). */
static int put_ref(struct jsonl *j, struct adac_line *b, bool *first, const struct desc *d, uint64_t addr,
                   uint64_t state_machine, struct adac_error *err)
{
	uint32_t id;
	if (frame_id(j, d, &id, err))
		return -1;
	if (!*first)
		adac_line_put(b, ",");
	*first = false;
	adac_line_put_n(b, "[", 1);
	adac_line_u64(b, id);
	adac_line_put_n(b, ",", 1);
	put_addr(b, addr);
	if (d->kind == DESC_CLASSIC) {
		adac_line_put(b, ",");
		put_addr_or_null(b, state_machine);
	}
	adac_line_put(b, "]");
	return 0;
}

/* A member's value as compact JSON; v NULL (its builder ran out of memory) fails. */
static int put_json(struct adac_line *b, json_t *v, struct adac_error *err)
{
	char *text = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	json_decref(v);
	if (!text)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory formatting JSON Lines");
	adac_line_put(b, text);
	free(text);
	return 0;
}

/* A lock's JSON (lock_view.h) as member `name`, its "type" by number, as every type of these lines. */
static int put_lock_member(struct jsonl *j, struct adac_line *b, bool *f, const char *name, json_t *w, uint64_t object,
                           struct adac_error *err)
{
	const char *type = adac_lock_object_type(j->l->p->rt, object);
	uint32_t id = 0;
	if (type && type_id(j, type, &id, err)) {
		json_decref(w);
		return -1;
	}
	json_object_set_new(w, "type", type ? json_integer(id) : json_null());
	key(b, f, name);
	return put_json(b, w, err);
}

/* What blocks the stack besides what it awaits, as `ps --json` has it: "sync_waits",
 * "waiting_for_lock", "monitor_wait", "thread_sync_wait", "event_wait" and "deadlock". */
static int put_blockers(struct jsonl *j, struct adac_line *b, bool *f, const struct adac_pending_stack *st,
                        struct adac_error *err)
{
	const struct adac_pending *p = j->l->p;
	json_t *waits = adac_pending_stack_sync_waits_json(p, st);
	if (waits) {
		key(b, f, "sync_waits");
		if (put_json(b, waits, err))
			return -1;
	}
	const struct adac_held_lock *lock = adac_pending_stack_lock_wait(p, st);
	if (lock && put_lock_member(j, b, f, "waiting_for_lock", adac_lock_brief_json(p->rt, lock), lock->object, err))
		return -1;
	const struct adac_monitor_wait *mw = adac_pending_stack_monitor_wait(p, st);
	if (mw && put_lock_member(j, b, f, "monitor_wait", adac_lock_monitor_wait_json(p->rt, &p->locks, mw), mw->object,
	                          err))
		return -1;
	const struct adac_sync_wait *sw = adac_pending_stack_thread_sync_wait(p, st);
	if (sw) {
		key(b, f, "thread_sync_wait");
		if (put_json(b, adac_pending_thread_sync_wait_json(sw), err))
			return -1;
	}
	char event[200];
	const struct adac_condition_wait *ew = adac_pending_stack_event_wait(p, st, event, sizeof event);
	if (ew) {
		key(b, f, "event_wait");
		if (put_json(b, adac_pending_event_wait_json(p, ew), err))
			return -1;
	}
	char *cycle = st->stack->cycle ? adac_pending_cycle_text(j->l, st) : NULL, text[4096];
	const char *threads = cycle ? cycle : adac_pending_stack_wait_cycle(p, st, text, sizeof text);
	if (threads) {
		key(b, f, "deadlock");
		adac_line_json_str(b, threads);
	}
	free(cycle);
	return 0;
}

static int stack_line(struct jsonl *j, const struct adac_pending_stack *st, struct adac_error *err)
{
	const struct adac_pending *p = j->l->p;
	struct adac_line *b = &j->row;
	bool f = true;
	adac_line_put(b, "{");
	key(b, &f, "chain");
	adac_line_u64(b, st->index);
	key(b, &f, "task");
	if (put_task(j, b, st->segs[st->stack->count - 1].node, err))
		return -1;
	if (st->running) {
		key(b, &f, "running");
		adac_line_fmt(b, "{\"tid\":%llu,\"managed_id\":%u,\"dispatcher\":", (unsigned long long)st->running->os_tid,
		        st->running->managed_id);
		put_addr(b, st->running->dispatcher);
		adac_line_put(b, ",\"resumed\":");
		struct adac_stack_frame r;
		if (adac_pending_stack_resumed(st, &r)) {
			adac_line_put(b, "{\"pc\":");
			put_addr(b, r.pc);
			adac_line_put(b, ",\"method\":");
			adac_line_json_str(b, r.symbol);
			adac_line_put(b, ",\"module\":");
			adac_line_json_str(b, r.module);
			adac_line_fmt(b, ",\"offset\":%llu,\"file\":", (unsigned long long)r.offset);
			adac_line_json_str(b, r.file);
			adac_line_put(b, ",\"line\":");
			if (r.file)
				adac_line_u64(b, r.line);
			else
				adac_line_put(b, "null");
			adac_line_put(b, "}");
		} else {
			adac_line_put(b, "null");
		}
		adac_line_put(b, "}");
	}
	struct adac_awaiting buf;
	const struct adac_awaiting *aw = adac_pending_stack_awaiting(j->l, st, &buf);
	key(b, &f, "awaiting");
	if (!aw)
		adac_line_put(b, "null");
	else if (put_awaiting(j, b, aw, err))
		return -1;
	key(b, &f, "frames");
	adac_line_put(b, "[");
	bool first = true;
	const char *error = NULL;
	for (uint32_t i = 0; i < st->stack->count; i++) {
		const struct adac_pending_seg *s = &st->segs[i];
		if (s->node->kind == ADAC_NODE_CHAIN) {
			const struct adac_resolved_chain *v = &s->view;
			for (size_t k = 0; k < v->chain.count; k++) {
				const struct adac_async_frame *fr = &v->frames[k];
				if (!adac_async_frame_shown(fr))
					continue;
				struct desc d = {
					.kind = DESC_ASYNC,
					.mt = fr->cont.mt,
					.ip = fr->cont.diagnostic_ip ? fr->cont.diagnostic_ip : fr->cont.resume,
					.diagnostic_ip = fr->cont.diagnostic_ip,
					.resume = fr->cont.resume,
					.state = fr->cont.state,
					.has_state = true,
					.method_desc = fr->method_desc,
					.method = fr->method,
					.canonical = fr->canonical_method,
					.module = fr->module,
					.token = fr->token,
					.has_code = fr->has_code,
					.code_start = fr->has_code ? fr->code.code_start : 0,
					.offset = fr->has_code ? fr->code.offset : 0,
					.has_il = fr->has_il,
					.il_offset = fr->has_il ? fr->il_offset : 0,
					.has_source = fr->has_source,
					.file = fr->has_source ? fr->file : NULL,
					.line = fr->has_source ? fr->line : 0,
					.resume_md = fr->resume_md,
					.note = fr->note[0] ? fr->note : NULL,
				};
				if (put_ref(j, b, &first, &d, fr->cont.addr, 0, err))
					return -1;
			}
			if (!error && v->chain.end_err.code)
				error = v->chain.end_err.msg;
		} else if (s->node->kind == ADAC_NODE_BOX) {
			const struct adac_classic_frame *c = &s->classic;
			struct desc d = {
				.kind = DESC_CLASSIC,
				.mt = c->mt,
				.sm_mt = c->state_machine_mt,
				.type = c->state_machine_mt ? adac_type_name(p->rt, c->state_machine_mt, 0, NULL) : NULL,
				.has_state = c->has_state,
				.state = c->has_state ? c->state : 0,
				.method_desc = c->method_desc,
				.method = c->method,
				.module = c->module,
				.token = c->token,
				.has_il = c->has_il,
				.il_offset = c->has_il ? c->il_offset : 0,
				.has_source = c->has_source,
				.file = c->has_source ? c->file : NULL,
				.line = c->has_source ? c->line : 0,
				.note = c->note[0] ? c->note : NULL,
			};
			if (put_ref(j, b, &first, &d, c->box, c->state_machine, err))
				return -1;
		} else {
			struct adac_task_desc t;
			adac_pending_node_task_desc(p, s->node, &t);
			struct desc d = {.kind = DESC_TASK, .mt = t.mt, .type = t.type};
			if (put_ref(j, b, &first, &d, t.addr, 0, err))
				return -1;
		}
	}
	adac_line_put(b, "]");
	if (error) {
		key(b, &f, "error");
		adac_line_json_str(b, error);
	}
	if (st->stack->cycle) {
		key(b, &f, "cycle");
		adac_line_put(b, "true");
	}
	if (put_blockers(j, b, &f, st, err))
		return -1;
	if (st->stack->truncated) {
		key(b, &f, "truncated");
		adac_line_put(b, "true");
	}
	adac_line_put(b, "}");
	return 0;
}

static void jsonl_free(struct jsonl *j)
{
	table_free(&j->frames);
	table_free(&j->types);
	adac_addr_map_free(&j->type_ids);
	adac_line_free(&j->pre);
	adac_line_free(&j->row);
}

int adac_pending_print_jsonl(struct adac_pending_list *l, struct adac_out *out, struct adac_error *err)
{
	struct jsonl j = {.l = l, .out = out};
	adac_print(out, "{\"schema\":%d,\"command\":\"ps\",\"format\":\"jsonl\"}\n", ADAC_JSON_SCHEMA);
	struct adac_pending_stack st;
	int more;
	while ((more = adac_pending_list_next(l, &st, err)) > 0) {
		if (stack_line(&j, &st, err)) {
			more = -1;
			break;
		}
		if (j.pre.len) {
			if (j.pre.nomem) {
				more = adac_fail(err, ADAC_E_NOMEM, 0, "out of memory formatting JSON Lines");
				break;
			}
			out->write(out->ctx, j.pre.p, j.pre.len);
			j.pre.len = 0;
		}
		if (flush_line(&j.row, out, err)) {
			more = -1;
			break;
		}
	}
	if (more < 0) {
		jsonl_free(&j);
		return -1;
	}
	/* The last line: the members that follow the listing in `ps --json`. */
	json_t *rest = json_object();
	adac_pending_json_members(l, rest);
	char *text = json_dumps(rest, JSON_COMPACT);
	json_decref(rest);
	jsonl_free(&j);
	if (!text)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory formatting JSON");
	out->write(out->ctx, text, strlen(text));
	out->write(out->ctx, "\n", 1);
	free(text);
	return 0;
}
