/* classic_async.c - classic state-machine boxes, the m_continuationObject edges between tasks, boxes
 * and runtime-async chains, and the logical stacks they form. */
#include "async/classic_async.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async/async_scan.h"
#include "base/addr_map.h"
#include "base/grow.h"
#include "base/limits.h"
#include "base/sort.h"
#include "metadata/ecma_metadata.h"
#include "metadata/pdb.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/corelib.h"
#include "types/fielddesc.h"
#include "types/methoddesc.h"
#include "types/names.h"

#define ELEMENT_TYPE_VALUETYPE 0x11

/* ---- a map from a MethodTable to an index ------------------------------------------------------ */

struct map_rec {
	uint64_t key;
	uint32_t val;   /* UINT32_MAX: new */
};

/* The index slot of key: UINT32_MAX when just added; NULL when out of memory. */
static uint32_t *map_get(struct adac_addr_map *m, uint64_t key)
{
	bool added;
	struct map_rec *r = adac_addr_map_get(m, key, sizeof *r, &added);
	if (!r)
		return NULL;
	if (added)
		r->val = UINT32_MAX;
	return &r->val;
}

/* ---- awaiters: what m_continuationObject resolves to ------------------------------------------- */

/* Per MethodTable of a continuation object that is neither a continuation nor a kept task. */
struct wrapper_info {
	bool is_list;                 /* System.Collections.Generic.List<...> */
	bool is_continuation_wrapper; /* AsyncMethodBuilderCore+ContinuationWrapper */
	bool has_task, has_action, has_target, has_items, has_size, has_wrapped;
	uint32_t task_off, action_off, target_off, items_off, size_off, wrapped_off;  /* object-relative */
};

struct resolver {
	struct adac_runtime *rt;
	struct adac_async_scan *scan;
	const struct adac_task_layout *task; /* resolving again: where m_continuationObject is */
	struct adac_addr_map map;     /* MT -> index in infos */
	struct wrapper_info *infos;
	size_t ninfo, cap;
	unsigned ps;
};

static void field_off(struct adac_runtime *rt, uint64_t mt, const char *name, bool *has, uint32_t *off)
{
	*has = adac_mt_field_offset(rt, mt, name, off, NULL) == 0;
}

static const struct wrapper_info *wrapper_of(struct resolver *r, uint64_t mt)
{
	uint32_t *slot = map_get(&r->map, mt);
	if (!slot)
		return NULL;
	if (*slot != UINT32_MAX)
		return &r->infos[*slot];
	if (r->ninfo == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 32;
		struct wrapper_info *p = realloc(r->infos, cap * sizeof *p);
		if (!p)
			return NULL;
		r->infos = p;
		r->cap = cap;
	}
	struct wrapper_info *w = &r->infos[r->ninfo];
	memset(w, 0, sizeof *w);
	const char *name = adac_type_name(r->rt, mt, 0, NULL);
	if (name) {
		w->is_list = strncmp(name, "System.Collections.Generic.List<", 32) == 0;
		w->is_continuation_wrapper = strcmp(name, "System.Runtime.CompilerServices.AsyncMethodBuilderCore+ContinuationWrapper") == 0;
	}
	if (w->is_list) {
		field_off(r->rt, mt, "_items", &w->has_items, &w->items_off);
		field_off(r->rt, mt, "_size", &w->has_size, &w->size_off);
	} else {
		field_off(r->rt, mt, "m_task", &w->has_task, &w->task_off);
		field_off(r->rt, mt, "m_action", &w->has_action, &w->action_off);
		field_off(r->rt, mt, "_target", &w->has_target, &w->target_off);
		if (w->is_continuation_wrapper)
			field_off(r->rt, mt, "_continuation", &w->has_wrapped, &w->wrapped_off);
	}
	*slot = (uint32_t)r->ninfo++;
	return w;
}

static bool known(const struct adac_async_scan *s, uint64_t a)
{
	return adac_scan_find_cont(s, a) != ADAC_SCAN_NONE || adac_scan_find_task(s, a) != ADAC_SCAN_NONE;
}

static uint64_t read_field(struct resolver *r, uint64_t obj, uint32_t off)
{
	uint64_t v = 0;
	adac_read_ptr(r->rt->t, obj + off, &v, NULL);
	return v;
}

/* SOS dumpasync's ResolveContinuation. */
static uint64_t resolve_one(struct resolver *r, uint64_t obj)
{
	if (!obj || known(r->scan, obj))
		return obj;
	uint64_t mt;
	if (adac_object_mt(r->rt, obj, &mt, NULL))
		return obj;
	const struct wrapper_info *w = wrapper_of(r, mt);
	if (!w)
		return obj;
	if (w->has_task) {
		uint64_t t = read_field(r, obj, w->task_off);
		if (t)
			return t;
	}
	if (w->has_action) {
		uint64_t a = read_field(r, obj, w->action_off);
		if (a) {
			obj = a;
			if (known(r->scan, obj) || adac_object_mt(r->rt, obj, &mt, NULL) || !(w = wrapper_of(r, mt)))
				return obj;
		}
	}
	if (w->has_target) {
		uint64_t t = read_field(r, obj, w->target_off);
		if (t) {
			obj = t;
			if (known(r->scan, obj) || adac_object_mt(r->rt, obj, &mt, NULL) || !(w = wrapper_of(r, mt)))
				return obj;
			if (w->is_continuation_wrapper && w->has_wrapped) {
				uint64_t c = read_field(r, obj, w->wrapped_off);
				if (c) {
					obj = c;
					if (known(r->scan, obj) || adac_object_mt(r->rt, obj, &mt, NULL) || !(w = wrapper_of(r, mt)))
						return obj;
					if (w->has_target) {
						uint64_t t2 = read_field(r, obj, w->target_off);
						if (t2)
							obj = t2;
					}
				}
			}
		}
	}
	return obj;
}

static int push_awaiter(struct adac_async_scan *s, uint64_t a, struct adac_error *err)
{
	if (s->awaiter_count >= ADAC_MAX_AWAITERS)
		return adac_fail(err, ADAC_E_LIMIT, a, "more than %u task continuations", ADAC_MAX_AWAITERS);
	if (adac_grow((void **)&s->awaiters, &s->awaiter_cap, s->awaiter_count + 1, sizeof *s->awaiters, 1024))
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory resolving task continuations");
	s->awaiters[s->awaiter_count++] = a;
	return 0;
}

static int resolve_task(struct resolver *r, size_t i, struct adac_error *err)
{
	const struct adac_scan_task *task = &r->scan->tasks[i];
	struct adac_scan_task_link *l = &r->scan->task_links[i];
	uint64_t obj = l->continuation_object;
	if (r->scan->awaiters_resolved && (!r->task || adac_read_ptr(r->rt->t, task->addr + r->task->continuation_object_off,
	                                                             &obj, NULL)))
		obj = 0; /* resolved before: the record holds the result, the object is read again */
	l->awaiters_first = (uint32_t)r->scan->awaiter_count;
	l->awaiters_count = 0;
	if (!obj)
		return 0;
	uint64_t mt;
	const struct wrapper_info *w;
	if (!known(r->scan, obj) && adac_object_mt(r->rt, obj, &mt, NULL) == 0 && (w = wrapper_of(r, mt)) && w->is_list) {
		/* Several continuations: each item of the list's array, up to _size. */
		if (!w->has_items || !w->has_size)
			return 0;
		uint64_t items = read_field(r, obj, w->items_off);
		uint32_t size = 0;
		if (!items || adac_read_u32(r->rt->t, obj + w->size_off, &size, NULL))
			return 0;
		if (size > ADAC_MAX_LIST_ITEMS) {
			if (!adac_failed(&r->scan->awaiters_cut))
				adac_fail(&r->scan->awaiters_cut, ADAC_E_LIMIT, task->addr,
				          "task 0x%llx: its List<object> of %u continuations is longer than ADAC_MAX_LIST_ITEMS (%u): "
				          "the rest are not followed",
				          (unsigned long long)task->addr, size, ADAC_MAX_LIST_ITEMS);
			size = ADAC_MAX_LIST_ITEMS;
		}
		/* Array data: after the MethodTable and the length (padded to a pointer on 64-bit). */
		uint64_t data = items + 2ull * r->ps;
		uint32_t len = 0;
		if (adac_read_u32(r->rt->t, items + r->ps, &len, NULL) || len < size)
			return 0;
		for (uint32_t k = 0; k < size; k++) {
			uint64_t item = 0;
			if (adac_read_ptr(r->rt->t, data + (uint64_t)k * r->ps, &item, NULL) || !item)
				continue;
			if (push_awaiter(r->scan, resolve_one(r, item), err))
				return -1;
			l->awaiters_count++;
		}
		return 0;
	}
	if (push_awaiter(r->scan, resolve_one(r, obj), err))
		return -1;
	l->awaiters_count = 1;
	return 0;
}

int adac_classic_resolve_awaiters(struct adac_runtime *rt, struct adac_async_scan *scan, struct adac_error *err)
{
	if ((!scan->conts && scan->cont_count) || (!scan->task_links && scan->task_count))
		return adac_fail(err, ADAC_E_UNSUPPORTED, 0,
		                 "the continuation records or the task links were dropped: the awaiters cannot be resolved again");
	struct resolver r = {.rt = rt, .scan = scan, .ps = adac_target_ptr_size(rt->t)};
	if (scan->awaiters_resolved)
		adac_task_layout(rt, &r.task, NULL);
	scan->awaiter_count = 0;
	adac_error_clear(&scan->awaiters_cut);
	int rc = 0;
	for (size_t i = 0; i < scan->task_count && rc == 0; i++)
		rc = resolve_task(&r, i, err);
	scan->awaiters_resolved = true;
	adac_addr_map_free(&r.map);
	free(r.infos);
	return rc ? rc : adac_async_scan_awaiter_chains(scan, err);
}

/* ---- boxes ------------------------------------------------------------------------------------- */

struct box_type {           /* per box MethodTable */
	bool has_sm;
	bool sm_inline;         /* the state machine is a struct inside the box */
	uint32_t sm_off;        /* object-relative offset of StateMachine */
	uint32_t sm_type;       /* inline: index of its sm_type, UINT32_MAX when unknown */
	char note[384];
};

struct sm_type {            /* per state machine MethodTable */
	uint64_t mt;
	bool has_state;
	uint32_t state_off;     /* offset of <>1__state from the start of the state machine's data */
	uint64_t method_desc;
	const char *method;
	const char *module;
	uint32_t token;
	const char *path;       /* the assembly, for its PDB */
	uint32_t move_next;     /* MoveNext MethodDef token, 0 when unknown */
	uint32_t *yields;       /* IL offsets of its await points, by state (malloc'd) */
	uint32_t nyields;
	char note[384];
};

struct adac_classic_cache {
	struct adac_addr_map boxes, sms;   /* MT -> index in box / sm */
	struct box_type *box;
	size_t nbox, capbox;
	struct sm_type *sm;
	size_t nsm, capsm;
};

struct adac_classic_cache *adac_classic_cache_new(void) { return calloc(1, sizeof(struct adac_classic_cache)); }

void adac_classic_cache_free(struct adac_classic_cache *c)
{
	if (!c)
		return;
	adac_addr_map_free(&c->boxes);
	adac_addr_map_free(&c->sms);
	for (size_t i = 0; i < c->nsm; i++)
		free(c->sm[i].yields);
	free(c->box);
	free(c->sm);
	free(c);
}

/* "<Method>d__3" -> "Method"; "<<Main>b__0_0>d" -> "<Main>b__0_0" (the text inside the outer <>). */
static bool kickoff_name(const char *type_name, char *out, size_t size)
{
	if (!type_name || type_name[0] != '<')
		return false;
	int depth = 0;
	for (size_t i = 0; type_name[i]; i++) {
		if (type_name[i] == '<')
			depth++;
		else if (type_name[i] == '>' && --depth == 0) {
			size_t n = i - 1;
			if (n == 0 || n >= size)
				return false;
			memcpy(out, type_name + 1, n);
			out[n] = '\0';
			return true;
		}
	}
	return false;
}

/* The await points of the state machine's MoveNext (TypeDef row rid), from the PDB. */
static void find_yields(struct adac_runtime *rt, const struct adac_ecma *md, uint32_t rid, uint64_t module,
                        struct sm_type *t)
{
	struct adac_error err = {0};
	uint32_t mrid = 0, n = 0;
	t->path = adac_module_path(rt, module, &err);
	if (!t->path || !*t->path) {
		adac_note_add(t->note, sizeof t->note, "no PDB: the module has no file path");
		return;
	}
	if (adac_ecma_find_method(md, rid, "MoveNext", &mrid, &err)) {
		adac_note_add(t->note, sizeof t->note, "%s", err.msg);
		return;
	}
	t->move_next = ADAC_ECMA_TOKEN(ADAC_ECMA_METHODDEF, mrid);
	/* How many await points, then the await points. */
	if (adac_pdb_async_yield_offsets(rt, t->path, t->move_next, NULL, 0, &n, &err) == 0 && n) {
		if (!(t->yields = malloc(n * sizeof *t->yields)))
			adac_fail(&err, ADAC_E_NOMEM, 0, "out of memory for the await points of MoveNext 0x%08x", t->move_next);
		else
			adac_pdb_async_yield_offsets(rt, t->path, t->move_next, t->yields, n, &t->nyields, &err);
	}
	if (err.code)
		adac_note_add(t->note, sizeof t->note, "%s", err.msg);
}

/* The source line of the await a frame in state N >= 0 is suspended at. */
static void find_source(struct adac_runtime *rt, const struct sm_type *t, struct adac_classic_frame *out)
{
	if (!out->has_state || out->state < 0 || !t->move_next || !t->nyields)
		return;
	if ((uint32_t)out->state >= t->nyields) {
		adac_note_add(out->note, sizeof out->note, "state %d is out of range: MoveNext 0x%08x has %u await point%s",
		              out->state, t->move_next, t->nyields, t->nyields == 1 ? "" : "s");
		return;
	}
	out->has_il = true;
	out->il_offset = t->yields[out->state];
	struct adac_source_line src;
	struct adac_error err = {0};
	if (adac_pdb_source_line(rt, t->path, t->move_next, out->il_offset, &src, &err)) {
		adac_note_add(out->note, sizeof out->note, "%s", err.msg);
		return;
	}
	out->has_source = true;
	out->file = src.file;
	out->line = src.line;
}

static void describe_sm(struct adac_runtime *rt, struct sm_type *t)
{
	struct adac_field f;
	if (adac_mt_find_field(rt, t->mt, "<>1__state", &f, NULL) == 0 && !f.is_static) {
		t->has_state = true;
		t->state_off = f.offset;
	} else {
		snprintf(t->note, sizeof t->note, "state machine has no <>1__state field");
	}
	struct adac_mt_info mi;
	struct adac_error err = {0};
	if (adac_mt_read(rt, t->mt, &mi, &err)) {
		snprintf(t->note, sizeof t->note, "%s", err.msg);
		return;
	}
	t->module = adac_module_file_name(rt, mi.module, NULL);
	const struct adac_ecma *md = adac_ecma_for_module(rt, mi.module, &err);
	uint32_t rid = mi.typedef_token & 0xffffff, enclosing = 0, mrid = 0;
	struct adac_ecma_typedef td;
	char name[256];
	if (!md || !rid || adac_ecma_typedef(md, rid, &td, &err) || !kickoff_name(td.name, name, sizeof name) ||
	    adac_ecma_enclosing_type(md, rid, &enclosing, &err) || !enclosing ||
	    adac_ecma_find_method(md, enclosing, name, &mrid, &err)) {
		if (!t->note[0])
			snprintf(t->note, sizeof t->note, "kickoff method not found%s%s", err.msg[0] ? ": " : "", err.msg);
	} else {
		t->token = 0x06000000u | mrid;
		uint64_t mdesc = 0;
		if (adac_module_lookup(rt, mi.module, "MethodDefToDescMap", mrid, &mdesc, &err) == 0 && mdesc) {
			t->method_desc = mdesc;
			t->method = adac_method_name(rt, mdesc, ADAC_NAME_PARAMS, &err);
		}
		if (!t->method && !t->note[0])
			snprintf(t->note, sizeof t->note, "kickoff method %s has no MethodDesc", name);
	}
	if (!t->method)
		t->method = adac_type_name(rt, t->mt, 0, NULL);
	if (md && rid)
		find_yields(rt, md, rid, mi.module, t);
}

static struct sm_type *sm_of(struct adac_runtime *rt, struct adac_classic_cache *c, uint64_t mt, uint32_t *index)
{
	uint32_t *slot = map_get(&c->sms, mt);
	if (!slot)
		return NULL;
	if (*slot == UINT32_MAX) {
		if (c->nsm == c->capsm) {
			size_t cap = c->capsm ? c->capsm * 2 : 16;
			struct sm_type *p = realloc(c->sm, cap * sizeof *p);
			if (!p)
				return NULL;
			c->sm = p;
			c->capsm = cap;
		}
		struct sm_type *t = &c->sm[c->nsm];
		memset(t, 0, sizeof *t);
		t->mt = mt;
		describe_sm(rt, t);
		*slot = (uint32_t)c->nsm++;
	}
	if (index)
		*index = *slot;
	return &c->sm[*slot];
}

static struct box_type *box_of(struct adac_runtime *rt, struct adac_classic_cache *c, uint64_t mt)
{
	uint32_t *slot = map_get(&c->boxes, mt);
	if (!slot)
		return NULL;
	if (*slot != UINT32_MAX)
		return &c->box[*slot];
	if (c->nbox == c->capbox) {
		size_t cap = c->capbox ? c->capbox * 2 : 16;
		struct box_type *p = realloc(c->box, cap * sizeof *p);
		if (!p)
			return NULL;
		c->box = p;
		c->capbox = cap;
	}
	uint32_t idx = (uint32_t)c->nbox++;
	*slot = idx;
	struct box_type *b = &c->box[idx];
	memset(b, 0, sizeof *b);
	b->sm_type = UINT32_MAX;
	struct adac_field f;
	struct adac_error err = {0};
	if (adac_mt_find_field(rt, mt, "StateMachine", &f, &err) || f.is_static) {
		snprintf(b->note, sizeof b->note, "no StateMachine field");
		return b;
	}
	b->has_sm = true;
	b->sm_off = f.offset + adac_target_ptr_size(rt->t);
	b->sm_inline = f.elem_type == ELEMENT_TYPE_VALUETYPE;
	if (b->sm_inline) {
		/* AsyncTaskMethodBuilder<TResult>+AsyncStateMachineBox<TStateMachine>: the last type
		 * argument of the box's instantiation is the state machine struct. */
		struct adac_mt_info mi;
		uint64_t args[ADAC_MAX_GENERIC_ARGS];
		struct adac_th_info th;
		if (adac_mt_read(rt, mt, &mi, &err) || !mi.num_generic_args || mi.num_generic_args > ADAC_MAX_GENERIC_ARGS ||
		    adac_th_array(rt, mi.instantiation, mi.num_generic_args, args, &err) ||
		    adac_th_read(rt, args[mi.num_generic_args - 1], &th, &err) || th.kind != ADAC_TH_METHODTABLE) {
			snprintf(b->note, sizeof b->note, "state machine type not found%s%s", err.msg[0] ? ": " : "", err.msg);
			return b;
		}
		uint32_t si;
		if (sm_of(rt, c, th.method_table, &si))
			b = &c->box[idx], b->sm_type = si;
	}
	return b;
}

void adac_classic_frame_read(struct adac_runtime *rt, struct adac_classic_cache *c, uint64_t box, uint64_t mt,
                             struct adac_classic_frame *out)
{
	memset(out, 0, sizeof *out);
	out->box = box;
	out->mt = mt;
	struct box_type *b = c ? box_of(rt, c, mt) : NULL;
	if (!b) {
		snprintf(out->note, sizeof out->note, "out of memory");
		return;
	}
	if (!b->has_sm) {
		snprintf(out->note, sizeof out->note, "%s", b->note);
		out->method = adac_type_name(rt, mt, 0, NULL);
		return;
	}
	struct sm_type *t = NULL;
	uint64_t data;      /* where the state machine's fields start */
	uint64_t sm_addr;   /* the state machine: the object, or the struct's address in the box */
	if (b->sm_inline) {
		if (b->sm_type != UINT32_MAX)
			t = &c->sm[b->sm_type];
		data = sm_addr = box + b->sm_off;
	} else {
		uint64_t obj = 0, smt = 0;
		if (adac_read_ptr(rt->t, box + b->sm_off, &obj, NULL) || !obj || adac_object_mt(rt, obj, &smt, NULL)) {
			snprintf(out->note, sizeof out->note, "StateMachine of box 0x%llx is unreadable or null",
			         (unsigned long long)box);
			out->method = adac_type_name(rt, mt, 0, NULL);
			return;
		}
		t = sm_of(rt, c, smt, NULL);
		sm_addr = obj;
		data = obj + adac_target_ptr_size(rt->t);
	}
	if (!t) {
		snprintf(out->note, sizeof out->note, "%s", b->note[0] ? b->note : "state machine type not found");
		out->method = adac_type_name(rt, mt, 0, NULL);
		return;
	}
	out->state_machine_mt = t->mt;
	out->state_machine = sm_addr;
	out->state_machine_inline = b->sm_inline;
	out->method_desc = t->method_desc;
	out->method = t->method;
	out->module = t->module;
	out->token = t->token;
	snprintf(out->note, sizeof out->note, "%s", t->note);
	uint32_t state;
	if (t->has_state && adac_read_u32(rt->t, data + t->state_off, &state, NULL) == 0) {
		out->has_state = true;
		out->state = (int32_t)state;
	}
	find_source(rt, t, out);
}

/* ---- the graph --------------------------------------------------------------------------------- */

_Static_assert(sizeof(struct adac_async_node) == 12, "a node stays 12 bytes (2 M at a million chains)");
_Static_assert(sizeof(struct adac_async_stack) == 12, "a stack stays 12 bytes (a million of them)");

uint64_t adac_async_node_addr(const struct adac_async_scan *s, const struct adac_async_node *n)
{
	return n->kind == ADAC_NODE_CHAIN ? s->chains[n->index].head : s->tasks[n->index].addr;
}

uint64_t adac_async_node_awaits(const struct adac_async_scan *s, const struct adac_async_node *n)
{
	return n->awaits ? s->tasks[n->awaits - 1].addr : 0;
}

static int add_node(struct adac_async_graph *g, size_t *cap, enum adac_node_kind kind, uint32_t index,
                    struct adac_error *err)
{
	if (adac_grow((void **)&g->nodes, cap, g->node_count + 1, sizeof *g->nodes, 1024))
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory building async stacks");
	g->nodes[g->node_count++] = (struct adac_async_node){.kind = kind, .index = index};
	return 0;
}

/* The node awaiter a stands for: a continuation's chain, or a task's node. (A scan put together
 * by hand may have no awaiter_chains: the records give them.) */
static uint32_t target_node(const struct adac_async_scan *s, const struct adac_async_graph *g, uint32_t a)
{
	uint32_t i = s->awaiter_chains ? s->awaiter_chains[a] : adac_scan_chain_of(s, s->awaiters[a]);
	if (i != ADAC_SCAN_NONE)
		return g->chain_node[i];
	i = adac_scan_find_task(s, s->awaiters[a]);
	return i != ADAC_SCAN_NONE ? g->task_node[i] : ADAC_SCAN_NONE;
}

/* How many awaiters task i has (none once the links are dropped). */
static uint32_t awaiters_of(const struct adac_async_scan *s, size_t i)
{
	return s->task_links ? s->task_links[i].awaiters_count : 0;
}

static bool is_frame(const struct adac_async_node *n) { return n->kind != ADAC_NODE_TASK; }

/* Stack start order: running chains first, then by address. (16 bytes: a million of them.) */
struct start {
	uint64_t addr;
	uint32_t node;
	bool running;
};
_Static_assert(sizeof(struct start) == 16, "a stack start stays 16 bytes");

/* adac_async_graph.marks */
#define MARK_FED 1u       /* reached from a frame node (then not a stack start) */
#define MARK_VISITED 2u   /* part of some stack */

static uint32_t callers_count(const struct adac_async_graph *g, uint32_t n)
{
	return g->callers_at[n + 1] - g->callers_at[n];
}

/* Round 0 starts from each frame node nothing feeds, round 1 from frame nodes left on cycles. */
static bool is_start(const struct adac_async_graph *g, size_t n, int round)
{
	return is_frame(&g->nodes[n]) && !(g->marks[n] & (round == 0 ? MARK_FED : MARK_VISITED));
}

static int cmp_start(const void *a, const void *b)
{
	const struct start *x = a, *y = b;
	if (x->running != y->running)
		return x->running ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

struct dfs_item {
	uint32_t node;
	uint32_t next_caller;   /* index of the next caller to try */
};

struct builder {
	const struct adac_async_scan *s;
	struct adac_async_graph *g;
	size_t cap_stacks, cap_nodes;
	struct dfs_item *path;
	size_t path_cap;
	uint32_t *on_path;      /* per node: 1 + its position on the path, 0: not on it */
};

/* A path that ends in a cycle: 1 + the first position on it of a caller of its last node. */
static uint32_t cycle_start(const struct builder *b, size_t depth)
{
	const struct adac_async_graph *g = b->g;
	uint32_t last = b->path[depth - 1].node;
	uint32_t first = 0;
	for (uint32_t c = g->callers_at[last]; c < g->callers_at[last + 1]; c++) {
		uint32_t at = b->on_path[g->callers[c]];
		if (at && (!first || at < first))
			first = at;
	}
	return first;
}

static int emit(struct builder *b, size_t depth, bool cycle, bool truncated, struct adac_error *err)
{
	struct adac_async_graph *g = b->g;
	if (g->stack_count >= ADAC_MAX_CHAINS || g->stack_node_count + depth > ADAC_MAX_STACK_NODES) {
		g->stacks_capped = true;
		return 1;
	}
	if (adac_grow((void **)&g->stacks, &b->cap_stacks, g->stack_count + 1, sizeof *g->stacks, 1024) ||
	    adac_grow((void **)&g->stack_nodes, &b->cap_nodes, g->stack_node_count + depth, sizeof *g->stack_nodes, 4096))
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory building async stacks");
	struct adac_async_stack *st = &g->stacks[g->stack_count++];
	st->first = (uint32_t)g->stack_node_count;
	st->count = (uint32_t)depth;
	st->cycle = cycle ? cycle_start(b, depth) : 0;
	st->truncated = truncated;
	for (size_t i = 0; i < depth; i++) {
		g->stack_node_count++;
		g->stack_nodes[st->first + i] = b->path[i].node;
		g->marks[b->path[i].node] |= MARK_VISITED;
	}
	return 0;
}

/* Every path from `start` through callers (iterative DFS; a caller already on the path ends the
 * path as a cycle). Returns 1 when the stack cap was reached. */
static int paths_from(struct builder *b, uint32_t start, struct adac_error *err)
{
	struct adac_async_graph *g = b->g;
	size_t depth = 0;
	b->path[depth++] = (struct dfs_item){start, 0};
	b->on_path[start] = 1;
	int rc = 0;
	while (depth && rc == 0) {
		struct dfs_item *top = &b->path[depth - 1];
		uint32_t callers = callers_count(g, top->node);
		if (callers == 0 || depth >= ADAC_MAX_CHAIN_DEPTH) {
			rc = emit(b, depth, false, callers != 0, err);
			b->on_path[top->node] = 0;
			depth--;
			continue;
		}
		if (top->next_caller == callers) {
			b->on_path[top->node] = 0;
			depth--;
			continue;
		}
		uint32_t caller = g->callers[g->callers_at[top->node] + top->next_caller++];
		if (b->on_path[caller]) {
			rc = emit(b, depth, true, false, err);
			continue;
		}
		if (depth == b->path_cap) {
			size_t c = b->path_cap * 2;
			struct dfs_item *p = realloc(b->path, c * sizeof *p);
			if (!p) {
				rc = adac_fail(err, ADAC_E_NOMEM, 0, "out of memory building async stacks");
				break;
			}
			b->path = p;
			b->path_cap = c;
		}
		b->path[depth++] = (struct dfs_item){caller, 0};
		b->on_path[caller] = (uint32_t)depth;
	}
	while (depth)
		b->on_path[b->path[--depth].node] = 0;
	return rc;
}

int adac_async_graph_link(const struct adac_async_scan *s, struct adac_async_graph *g, struct adac_error *err)
{
	memset(g, 0, sizeof *g);
	size_t ncap = 0;
	g->chain_node = adac_array_new(s->chain_count, sizeof *g->chain_node);
	g->task_node = adac_array_new(s->task_count, sizeof *g->task_node);
	if (!g->chain_node || !g->task_node)
		goto nomem;
	/* Nodes: chains (not stale), boxes, and tasks that others await. */
	for (size_t i = 0; i < s->chain_count; i++) {
		g->chain_node[i] = ADAC_SCAN_NONE;
		if (s->chains[i].root == ADAC_ROOT_STALE)
			continue;
		if (add_node(g, &ncap, ADAC_NODE_CHAIN, (uint32_t)i, err))
			goto fail;
		g->chain_node[i] = (uint32_t)(g->node_count - 1);
	}
	for (size_t i = 0; i < s->task_count; i++) {
		uint32_t chain = s->task_chains[i];
		g->task_node[i] = ADAC_SCAN_NONE;
		if (chain != ADAC_SCAN_NONE && g->chain_node[chain] != ADAC_SCAN_NONE) {
			g->task_node[i] = g->chain_node[chain];
			continue;
		}
		bool is_box = adac_scan_task_is_box(s, (uint32_t)i);
		if (!is_box && !awaiters_of(s, i))
			continue;
		if (add_node(g, &ncap, is_box ? ADAC_NODE_BOX : ADAC_NODE_TASK, (uint32_t)i, err))
			goto fail;
		g->task_node[i] = (uint32_t)(g->node_count - 1);
	}
	/* (The nodes are kept for the listing: no spare capacity.) */
	struct adac_async_node *fit = realloc(g->nodes, (g->node_count ? g->node_count : 1) * sizeof *fit);
	if (fit)
		g->nodes = fit;
	g->marks = adac_array_zeroed(g->node_count, sizeof *g->marks);
	g->callers_at = adac_array_zeroed(g->node_count + 1, sizeof *g->callers_at);
	if (!g->marks || !g->callers_at)
		goto nomem;
	/* Edges: task -> what its m_continuationObject resolves to, compressed per node: pass 0 counts
	 * each node's callers into callers_at[n + 1], pass 1 puts them in place, callers_at[n] moving
	 * along as the cursor of node n (and ending where node n + 1 starts). */
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			for (size_t n = 0; n < g->node_count; n++)
				g->callers_at[n + 1] += g->callers_at[n];
			size_t total = g->callers_at[g->node_count];
			g->callers = adac_array_new(total, sizeof *g->callers);
			if (!g->callers)
				goto nomem;
			g->caller_count = total;
			memmove(g->callers_at + 1, g->callers_at, g->node_count * sizeof *g->callers_at);
			g->callers_at[0] = 0;
		}
		for (size_t i = 0; i < s->task_count; i++) {
			uint32_t from = g->task_node[i];
			if (from == ADAC_SCAN_NONE)
				continue;
			for (uint32_t k = 0, n = awaiters_of(s, i); k < n; k++) {
				uint32_t to = target_node(s, g, s->task_links[i].awaiters_first + k);
				if (to == ADAC_SCAN_NONE || to == from)
					continue;
				if (pass == 0)
					g->callers_at[from + 1]++;
				else
					g->callers[g->callers_at[from + 1]++] = to;
			}
		}
	}

	/* Which nodes are fed from a frame (directly, or through tasks)? */
	uint32_t *queue = adac_array_new(g->node_count, sizeof *queue);
	if (!queue)
		goto nomem;
	size_t qh = 0, qt = 0;
	for (size_t n = 0; n < g->node_count; n++)
		if (is_frame(&g->nodes[n]))
			queue[qt++] = (uint32_t)n;
	while (qh < qt) {
		uint32_t m = queue[qh++];
		for (uint32_t k = g->callers_at[m]; k < g->callers_at[m + 1]; k++) {
			uint32_t c = g->callers[k];
			if (g->marks[c] & MARK_FED)
				continue;
			g->marks[c] |= MARK_FED;
			if (!is_frame(&g->nodes[c]))
				queue[qt++] = c;
		}
	}
	free(queue);
	/* What a stack start awaits: a task node fed by nothing with an edge into it. */
	for (size_t n = 0; n < g->node_count; n++) {
		const struct adac_async_node *m = &g->nodes[n];
		if (is_frame(m) || (g->marks[n] & MARK_FED))
			continue;
		for (uint32_t k = g->callers_at[n]; k < g->callers_at[n + 1]; k++) {
			struct adac_async_node *c = &g->nodes[g->callers[k]];
			if (!c->awaits)
				c->awaits = m->index + 1;
		}
	}
	/* (Only the edges needed it.) */
	free(g->task_node);
	g->task_node = NULL;
	return 0;
nomem:
	adac_fail(err, ADAC_E_NOMEM, 0, "out of memory building async stacks");
fail:
	adac_async_graph_free(g);
	return -1;
}

/* The stacks from one round's starts: 0, 1 at the stack cap, -1 with err. */
static int stacks_round(struct builder *b, int round, struct adac_error *err)
{
	const struct adac_async_scan *s = b->s;
	struct adac_async_graph *g = b->g;
	/* (Counted first: the starts are sized to what the round has, not to every node.) */
	size_t ns = 0;
	for (size_t n = 0; n < g->node_count; n++)
		ns += is_start(g, n, round);
	struct start *starts = adac_array_new(ns, sizeof *starts);
	if (!starts)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory building async stacks");
	ns = 0;
	for (size_t n = 0; n < g->node_count; n++) {
		const struct adac_async_node *m = &g->nodes[n];
		if (is_start(g, n, round))
			starts[ns++] = (struct start){adac_async_node_addr(s, m), (uint32_t)n,
			                              m->kind == ADAC_NODE_CHAIN && s->chains[m->index].root == ADAC_ROOT_RUNNING};
	}
	adac_sort_if_needed(starts, ns, sizeof *starts, cmp_start); /* (chains come by address) */
	int rc = 0;
	for (size_t i = 0; i < ns && rc == 0; i++)
		if (round == 0 || !(g->marks[starts[i].node] & MARK_VISITED))
			rc = paths_from(b, starts[i].node, err);
	free(starts);
	return rc;
}

/* Stacks: from each frame node nothing feeds, then from frame nodes left on cycles. */
int adac_async_graph_stacks(const struct adac_async_scan *s, struct adac_async_graph *g, struct adac_error *err)
{
	if (!g->callers_at)
		return adac_fail(err, ADAC_E_UNSUPPORTED, 0, "the stacks were found already: the graph's edges are gone");
	struct builder b = {.s = s, .g = g, .path_cap = 64};
	b.path = malloc(b.path_cap * sizeof *b.path);
	b.on_path = adac_array_zeroed(g->node_count, sizeof *b.on_path);
	int rc = b.path && b.on_path ? 0 : adac_fail(err, ADAC_E_NOMEM, 0, "out of memory building async stacks");
	for (int round = 0; round < 2 && rc == 0; round++)
		rc = stacks_round(&b, round, err);
	free(b.path);
	free(b.on_path);
	if (rc < 0) {
		adac_async_graph_free(g);
		return -1;
	}
	/* (Only finding the stacks needed them: a cycle's stack says where it closes.) */
	free(g->marks);
	g->marks = NULL;
	free(g->callers_at);
	g->callers_at = NULL;
	free(g->callers);
	g->callers = NULL;
	g->caller_count = 0;
	return 0;
}

int adac_async_graph_build(const struct adac_async_scan *s, struct adac_async_graph *g, struct adac_error *err)
{
	return adac_async_graph_link(s, g, err) || adac_async_graph_stacks(s, g, err) ? -1 : 0;
}

void adac_async_graph_free(struct adac_async_graph *g)
{
	free(g->nodes);
	free(g->marks);
	free(g->callers_at);
	free(g->callers);
	free(g->chain_node);
	free(g->task_node);
	free(g->stack_nodes);
	free(g->stacks);
	memset(g, 0, sizeof *g);
}
