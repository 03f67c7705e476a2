/* async_scan.c - finds every async chain: one heap pass, the threads' dispatcher records, and the
 * chains built from them in memory. */
#include "async/async_scan.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async/continuation.h"
#include "async/dispatcher.h"
#include "base/addr_map.h"
#include "base/clock.h"
#include "base/cursor.h"
#include "base/grow.h"
#include "base/pieces.h"
#include "base/limits.h"
#include "base/sort.h"
#include "runtime/runtime.h"
#include "runtime/threads.h"
#include "target/target.h"
#include "types/corelib.h"
#include "types/names.h"

const char *adac_chain_root_name(enum adac_chain_root r)
{
	switch (r) {
	case ADAC_ROOT_RUNNING: return "running";
	case ADAC_ROOT_TASK: return "task";
	case ADAC_ROOT_UNOWNED: return "unowned";
	case ADAC_ROOT_STALE: return "stale";
	}
	return "?";
}

/* ---- MethodTable verdicts ---------------------------------------------------------------------- */

enum mt_kind { MT_UNKNOWN = 0, MT_OTHER, MT_CONT, MT_TASK, MT_BOX, MT_SEMAPHORE, MT_NOMEM };

struct mt_verdict {
	uint64_t mt;       /* the key */
	uint8_t kind;      /* enum mt_kind */
	uint32_t type;     /* MT_TASK, MT_BOX: its index in adac_async_scan.task_types */
};

_Static_assert(offsetof(struct mt_verdict, mt) == 0, "the MethodTable is the record's key");
_Static_assert(sizeof(struct adac_scan_cont) == 16, "a continuation's record stays 16 bytes (4 M at a million chains)");
_Static_assert(sizeof(struct adac_scan_task) == 16, "a task's record stays 16 bytes (2 M at a million chains)");
_Static_assert(sizeof(struct adac_scan_task_link) == 8, "a task's links stay 8 bytes");
_Static_assert(sizeof(struct adac_scan_chain) == 24, "a chain's record stays 24 bytes (1 M at a million chains)");

static struct mt_verdict *verdict_slot(struct adac_addr_map *t, uint64_t mt)
{
	return adac_addr_map_get(t, mt, sizeof(struct mt_verdict), NULL);
}

struct scan_ctx {
	struct adac_runtime *rt;
	struct adac_async_scan *scan;
	struct adac_addr_map verdicts; /* struct mt_verdict by MethodTable */
	unsigned ps;
	uint32_t next_off;          /* Continuation.Next, from the object */
	uint64_t sem_mt;            /* System.Threading.SemaphoreSlim, 0 when not loaded or not found */
	const struct adac_task_layout *task;
	size_t task_type_cap;
	const struct adac_gc_info *info;
	unsigned parts;             /* of the heap walk */
	struct scan_part *part;     /* the parts */
	/* What all parts kept so far: the ADAC_MAX_KEPT_OBJECTS cap is on these, so that a heap over
	 * the cap stops every part at once. */
	atomic_size_t kept_conts, kept_tasks, kept_semaphores;
};

/* What one part of the heap walk (a thread's run of regions) found, in address order: the parts'
 * finds put end to end are the whole heap's. */
struct scan_part {
	struct scan_ctx *c;
	struct adac_addr_map verdicts;   /* the verdicts this part met, copied from c->verdicts */
	uint64_t last_mt;                /* the last object's MethodTable (0: none yet) and its verdict: */
	uint32_t last_type;              /* runs of one type (byte[] ballast) skip the map */
	uint8_t last_kind;
	struct adac_scan_cont *conts;
	size_t cont_count, cont_cap;
	struct adac_scan_task *tasks;
	struct adac_scan_task_link *links; /* at the tasks' indexes */
	uint64_t *states;                /* ... and their m_stateObject */
	size_t task_count, task_cap, link_cap, state_cap;
	struct adac_scan_semaphore *semaphores;
	size_t semaphore_count, sem_cap;
	uint64_t objects, tasks_seen, tasks_completed, boxes_seen;
	struct adac_error fail;          /* out of memory or a cap (ends the walk) */
};

static int grow(void **p, size_t *cap, size_t need, size_t elem) { return adac_grow(p, cap, need, elem, 1024); }

/* A task type for mt: 0, or -1 when memory runs out. */
static int add_task_type(struct scan_ctx *c, uint64_t mt, bool is_box, uint32_t *type)
{
	struct adac_async_scan *s = c->scan;
	if (grow((void **)&s->task_types, &c->task_type_cap, s->task_type_count + 1, sizeof *s->task_types))
		return -1;
	s->task_types[s->task_type_count] = (struct adac_scan_task_type){mt, is_box};
	*type = (uint32_t)s->task_type_count++;
	return 0;
}

/* The verdict on mt (kind, and type for a task), found once for all parts (under the walk's lock).
 * MT_NOMEM when memory runs out. */
static enum mt_kind classify(struct scan_ctx *c, uint64_t mt, uint32_t *type)
{
	struct mt_verdict *v = verdict_slot(&c->verdicts, mt);
	if (!v)
		return MT_NOMEM;
	if (v->kind != MT_UNKNOWN) {
		*type = v->type;
		return (enum mt_kind)v->kind;
	}
	enum mt_kind kind = MT_OTHER;
	bool yes = false;
	if (c->scan->cont_mt && adac_cont_is_continuation_mt(c->rt, mt, &yes, NULL) == 0 && yes) {
		kind = MT_CONT;
	} else if (adac_task_is_task_mt(c->rt, mt, &yes, NULL) == 0 && yes) {
		kind = MT_TASK;
		if (adac_task_is_state_machine_box(c->rt, mt))
			kind = MT_BOX;
	} else if (c->sem_mt && mt == c->sem_mt) {
		kind = MT_SEMAPHORE;
	}
	*type = 0;
	if ((kind == MT_TASK || kind == MT_BOX) && add_task_type(c, mt, kind == MT_BOX, type))
		return MT_NOMEM;
	v = verdict_slot(&c->verdicts, mt); /* the table may have grown */
	if (!v)
		return MT_NOMEM;
	v->kind = (uint8_t)kind;
	v->type = *type;
	return kind;
}

/* The verdict on mt for a part of the walk: its own copy, else the shared one (under the walk's
 * lock: the other parts run at once). */
static enum mt_kind part_classify(struct scan_part *part, uint64_t mt, uint32_t *type)
{
	if (mt == part->last_mt) {
		*type = part->last_type;
		return (enum mt_kind)part->last_kind;
	}
	struct mt_verdict *v = adac_addr_map_find(&part->verdicts, mt);
	enum mt_kind kind;
	if (v) {
		*type = v->type;
		kind = (enum mt_kind)v->kind;
	} else {
		adac_gc_walk_lock(part->c->rt);
		kind = classify(part->c, mt, type);
		adac_gc_walk_unlock(part->c->rt);
		if (kind == MT_NOMEM)
			return kind;
		if ((v = verdict_slot(&part->verdicts, mt))) {
			v->kind = (uint8_t)kind;
			v->type = *type;
		}
	}
	part->last_mt = mt;
	part->last_type = *type;
	part->last_kind = (uint8_t)kind;
	return kind;
}

/* A pointer field of the object: from the walk's bytes, else from the target (under the walk's
 * lock). */
static uint64_t obj_ptr(struct scan_ctx *c, const struct adac_gc_object *o, uint32_t off)
{
	if ((size_t)off + c->ps <= o->data_len)
		return c->ps == 8 ? adac_get_u64(o->data, off) : adac_get_u32(o->data, off);
	uint64_t v = 0;
	adac_gc_walk_lock(c->rt);
	adac_read_ptr(c->rt->t, o->addr + off, &v, NULL);
	adac_gc_walk_unlock(c->rt);
	return v;
}

static uint32_t obj_u32(struct scan_ctx *c, const struct adac_gc_object *o, uint32_t off)
{
	if ((size_t)off + 4 <= o->data_len)
		return adac_get_u32(o->data, off);
	uint32_t v = 0;
	adac_gc_walk_lock(c->rt);
	adac_read_u32(c->rt->t, o->addr + off, &v, NULL);
	adac_gc_walk_unlock(c->rt);
	return v;
}

/* Room for one more kept object in *arr (count kept so far by this part, *kept by all, counted in
 * steps: never more than were kept): 0, or 1 with part->fail set (the ADAC_MAX_KEPT_OBJECTS cap,
 * naming `what`, or out of memory): the walk ends, at most a step per part past the cap. */
static int keep(struct scan_part *part, atomic_size_t *kept, void **arr, size_t count, size_t *cap, size_t elem,
                uint64_t addr, const char *what)
{
	if (!adac_piece_under_cap(kept, count, ADAC_MAX_KEPT_OBJECTS)) {
		adac_fail(&part->fail, ADAC_E_LIMIT, addr, "more than %llu %s on the heap",
		          (unsigned long long)ADAC_MAX_KEPT_OBJECTS, what);
		return 1;
	}
	if (grow(arr, cap, count + 1, elem)) {
		adac_fail(&part->fail, ADAC_E_NOMEM, 0, "out of memory collecting %s", what);
		return 1;
	}
	return 0;
}

static int on_object(void *ctx, const struct adac_gc_object *o)
{
	struct scan_part *part = ctx;
	struct scan_ctx *c = part->c;
	part->objects++;
	uint32_t type;
	enum mt_kind kind = part_classify(part, o->mt, &type);
	if (kind == MT_NOMEM) {
		adac_fail(&part->fail, ADAC_E_NOMEM, 0, "out of memory classifying the heap's objects");
		return 1;
	}
	if (kind == MT_CONT) {
		if (keep(part, &c->kept_conts, (void **)&part->conts, part->cont_count, &part->cont_cap,
		         sizeof *part->conts, o->addr, "continuations"))
			return 1;
		part->conts[part->cont_count++] = (struct adac_scan_cont){
			.addr = o->addr, .next = obj_ptr(c, o, c->next_off)};
		return 0;
	}
	if (kind == MT_SEMAPHORE) {
		if (keep(part, &c->kept_semaphores, (void **)&part->semaphores, part->semaphore_count, &part->sem_cap,
		         sizeof *part->semaphores, o->addr, "SemaphoreSlims"))
			return 1;
		part->semaphores[part->semaphore_count++] = (struct adac_scan_semaphore){o->addr, o->mt};
		return 0;
	}
	if (kind != MT_TASK && kind != MT_BOX)
		return 0;
	part->tasks_seen++;
	if (kind == MT_BOX)
		part->boxes_seen++;
	uint32_t flags = obj_u32(c, o, c->task->state_flags_off);
	if (flags & ADAC_TASK_COMPLETED_MASK) {
		part->tasks_completed++;
		return 0;
	}
	uint64_t state = obj_ptr(c, o, c->task->state_object_off), cont = obj_ptr(c, o, c->task->continuation_object_off);
	if (kind == MT_TASK && !state && !cont)
		return 0;
	if (keep(part, &c->kept_tasks, (void **)&part->tasks, part->task_count, &part->task_cap, sizeof *part->tasks,
	         o->addr, "pending tasks"))
		return 1;
	if (grow((void **)&part->links, &part->link_cap, part->task_count + 1, sizeof *part->links) ||
	    grow((void **)&part->states, &part->state_cap, part->task_count + 1, sizeof *part->states)) {
		adac_fail(&part->fail, ADAC_E_NOMEM, 0, "out of memory collecting pending tasks");
		return 1;
	}
	part->links[part->task_count] = (struct adac_scan_task_link){.continuation_object = cont};
	part->states[part->task_count] = state;
	part->tasks[part->task_count++] = (struct adac_scan_task){
		.addr = o->addr,
		.type = type,
		.state_flags = flags,
	};
	return 0;
}

/* The parts' finds, end to end, into the scan: 0, or -1 with err (the first part's failure, out of
 * memory). Frees the parts. */
static int merge_parts(struct scan_ctx *c, struct scan_part *parts, unsigned n, struct adac_error *err)
{
	struct adac_async_scan *s = c->scan;
	int rc = 0;
	struct adac_piece conts[ADAC_GC_WALK_MAX_PARTS], tasks[ADAC_GC_WALK_MAX_PARTS], links[ADAC_GC_WALK_MAX_PARTS],
		states[ADAC_GC_WALK_MAX_PARTS], semaphores[ADAC_GC_WALK_MAX_PARTS];
	for (unsigned k = 0; k < n; k++) {
		struct scan_part *p = &parts[k];
		if (rc == 0 && adac_failed(&p->fail)) {
			adac_error_copy(err, &p->fail);
			rc = -1;
		}
		conts[k] = (struct adac_piece){p->conts, p->cont_count, p->cont_cap};
		tasks[k] = (struct adac_piece){p->tasks, p->task_count, p->task_cap};
		links[k] = (struct adac_piece){p->links, p->task_count, p->link_cap};
		states[k] = (struct adac_piece){p->states, p->task_count, p->state_cap};
		semaphores[k] = (struct adac_piece){p->semaphores, p->semaphore_count, p->sem_cap};
		s->objects += p->objects;
		s->tasks_seen += p->tasks_seen;
		s->tasks_completed += p->tasks_completed;
		s->boxes_seen += p->boxes_seen;
		adac_addr_map_free(&p->verdicts);
	}
	if (rc) { /* (nothing is kept) */
		for (unsigned k = 0; k < n; k++) {
			free(conts[k].arr);
			free(tasks[k].arr);
			free(links[k].arr);
			free(states[k].arr);
			free(semaphores[k].arr);
		}
		return rc;
	}
	size_t link_count, state_count;
	int gathered = adac_pieces_gather((void **)&s->conts, &s->cont_count, conts, n, sizeof *s->conts);
	gathered |= adac_pieces_gather((void **)&s->tasks, &s->task_count, tasks, n, sizeof *s->tasks);
	gathered |= adac_pieces_gather((void **)&s->task_links, &link_count, links, n, sizeof *s->task_links);
	gathered |= adac_pieces_gather((void **)&s->state_objects, &state_count, states, n, sizeof *s->state_objects);
	gathered |= adac_pieces_gather((void **)&s->semaphores, &s->semaphore_count, semaphores, n, sizeof *s->semaphores);
	return gathered ? adac_fail(err, ADAC_E_NOMEM, 0, "out of memory collecting continuations") : 0;
}

/* ---- layouts ----------------------------------------------------------------------------------- */

static int init_layout(struct scan_ctx *c, struct adac_error *err)
{
	const struct adac_cont_layout *cl;
	if (adac_task_layout(c->rt, &c->task, err) || adac_cont_layout(c->rt, &cl, err))
		return -1;
	c->scan->cont_mt = cl->class_mt;
	c->next_off = cl->next;
	/* Without it, waiters are grouped by their own identity: not an error. */
	uint64_t corelib;
	if (adac_corelib_module(c->rt, &corelib, NULL) ||
	    adac_module_type(c->rt, corelib, "System.Threading", "SemaphoreSlim", &c->sem_mt, NULL))
		c->sem_mt = 0;
	return 0;
}

/* ---- completed async tasks --------------------------------------------------------------------- */

struct completed_ctx {
	struct scan_ctx c;
	adac_completed_cb cb;
	void *ctx;
	struct adac_error fail;
};

static int on_completed(void *ctx, const struct adac_gc_object *o)
{
	struct completed_ctx *cc = ctx;
	uint32_t type;
	enum mt_kind kind = classify(&cc->c, o->mt, &type);
	if (kind == MT_NOMEM)
		return adac_fail(&cc->fail, ADAC_E_NOMEM, 0, "out of memory classifying the heap's objects");
	if (kind != MT_TASK && kind != MT_BOX)
		return 0;
	uint32_t flags = obj_u32(&cc->c, o, cc->c.task->state_flags_off);
	if (!(flags & ADAC_TASK_COMPLETED_MASK))
		return 0;
	if (kind == MT_TASK) {
		static const char ra[] = "System.Runtime.CompilerServices.AsyncHelpers+RuntimeAsyncTask";
		const char *name = adac_type_name(cc->c.rt, o->mt, 0, NULL);
		if (!name || strncmp(name, ra, sizeof ra - 1) != 0)
			return 0;
	}
	return cc->cb(cc->ctx, o->addr, o->mt, flags);
}

int adac_async_scan_completed(struct adac_runtime *rt, adac_completed_cb cb, void *ctx, struct adac_out *out,
                              struct adac_gc_walk_report *rep, struct adac_error *err)
{
	struct adac_async_scan s = {0};
	struct completed_ctx cc = {.c = {.rt = rt, .scan = &s, .ps = adac_target_ptr_size(rt->t)}, .cb = cb, .ctx = ctx};
	if (init_layout(&cc.c, err))
		return -1;
	void *ctxs[1] = {&cc};
	const struct adac_gc_walk_progress progress = {out, "finding completed tasks"};
	int rc = adac_gc_walk_split(rt, 1, on_completed, ctxs, &progress, rep, err);
	adac_addr_map_free(&cc.c.verdicts);
	free(s.task_types);
	if (rc == 0 && adac_failed(&cc.fail)) {
		adac_error_copy(err, &cc.fail);
		rc = -1;
	}
	return rc;
}

/* ---- running chains ---------------------------------------------------------------------------- */

struct threads_ctx {
	struct adac_runtime *rt;
	struct adac_async_scan *scan;
	size_t cap;
	struct adac_error fail;
};

static int on_thread(void *ctx, const struct adac_managed_thread *th)
{
	struct threads_ctx *c = ctx;
	struct adac_async_scan *s = c->scan;
	if (!th->os_id)
		return 0; /* not started, or dead: no stack */
	struct adac_dispatcher disp[ADAC_MAX_DISPATCHERS];
	size_t n = 0;
	struct adac_error err = {0};
	if (adac_thread_dispatchers(c->rt, th, disp, ADAC_MAX_DISPATCHERS, &n, &err)) {
		if (!adac_failed(&s->threads_err))
			s->threads_err = err;
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (!disp[i].next_continuation)
			continue; /* the running method is the last of its chain */
		if (grow((void **)&s->running, &c->cap, s->running_count + 1, sizeof *s->running)) {
			adac_fail(&c->fail, ADAC_E_NOMEM, 0, "out of memory");
			return 1;
		}
		s->running[s->running_count++] = (struct adac_scan_running){
			.head = disp[i].next_continuation,
			.task = disp[i].current_task,
			.os_tid = th->os_id,
			.managed_id = th->managed_id,
			.dispatcher = disp[i].addr,
		};
	}
	return 0;
}

/* ---- chains (no target reads) ------------------------------------------------------------------ */

static int cmp_cont(const void *a, const void *b)
{
	uint64_t x = ((const struct adac_scan_cont *)a)->addr, y = ((const struct adac_scan_cont *)b)->addr;
	return x < y ? -1 : x > y;
}

static int cmp_task_index(const void *a, const void *b, void *tasks)
{
	const struct adac_scan_task *t = tasks;
	uint64_t x = t[*(const uint32_t *)a].addr, y = t[*(const uint32_t *)b].addr;
	return x < y ? -1 : x > y;
}

/* Puts the n records of `elem` bytes in *arr in the order `order` gives (old indexes). */
static int permute(void **arr, const uint32_t *order, size_t n, size_t elem)
{
	char *to = adac_array_new(n, elem);
	if (!to)
		return -1;
	for (size_t i = 0; i < n; i++)
		memcpy(to + i * elem, (const char *)*arr + (size_t)order[i] * elem, elem);
	free(*arr);
	*arr = to;
	return 0;
}

/* Sorts the tasks by address, and their links with them. (A heap walk finds them in address
 * order when its regions come in address order: most often nothing moves.) */
static int sort_tasks(struct adac_async_scan *s)
{
	size_t i = 1;
	while (i < s->task_count && s->tasks[i - 1].addr <= s->tasks[i].addr)
		i++;
	if (i >= s->task_count)
		return 0;
	uint32_t *order = adac_array_new(s->task_count, sizeof *order);
	if (!order)
		return -1;
	for (i = 0; i < s->task_count; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, s->task_count, sizeof *order, cmp_task_index, s->tasks);
	int rc = permute((void **)&s->tasks, order, s->task_count, sizeof *s->tasks) ||
	                 (s->task_links && permute((void **)&s->task_links, order, s->task_count, sizeof *s->task_links)) ||
	                 (s->state_objects &&
	                  permute((void **)&s->state_objects, order, s->task_count, sizeof *s->state_objects))
	             ? -1
	             : 0;
	free(order);
	return rc;
}

_Static_assert(offsetof(struct adac_scan_cont, addr) == 0 && offsetof(struct adac_scan_task, addr) == 0,
               "the index reads the address at the start of each element");

uint32_t adac_scan_find_cont(const struct adac_async_scan *s, uint64_t addr)
{
	if (!s->conts)
		return ADAC_SCAN_NONE; /* (dropped) */
	return adac_addr_index_find(&s->cont_index, s->conts, s->cont_count, sizeof *s->conts, addr);
}

void adac_async_scan_drop_conts(struct adac_async_scan *s)
{
	free(s->conts);
	adac_addr_index_free(&s->cont_index);
	free(s->strays);
	s->conts = NULL;
	s->strays = NULL;
	s->stray_count = 0;
}

uint32_t adac_scan_chain_of(const struct adac_async_scan *s, uint64_t addr)
{
	uint32_t i = adac_scan_find_cont(s, addr);
	return i != ADAC_SCAN_NONE ? s->conts[i].chain : ADAC_SCAN_NONE;
}

int adac_async_scan_awaiter_chains(struct adac_async_scan *s, struct adac_error *err)
{
	free(s->awaiter_chains);
	s->awaiter_chains = adac_array_new(s->awaiter_count, sizeof *s->awaiter_chains);
	if (!s->awaiter_chains)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory resolving task continuations");
	for (size_t i = 0; i < s->awaiter_count; i++)
		s->awaiter_chains[i] = adac_scan_chain_of(s, s->awaiters[i]);
	return 0;
}

void adac_async_scan_drop_awaiters(struct adac_async_scan *s)
{
	free(s->awaiters);
	free(s->awaiter_chains);
	free(s->task_links);
	free(s->task_chains);
	s->awaiters = NULL;
	s->awaiter_chains = NULL;
	s->task_links = NULL;
	s->task_chains = NULL;
	s->awaiter_count = s->awaiter_cap = 0;
}

uint64_t adac_scan_chain_task(const struct adac_async_scan *s, uint32_t i)
{
	const struct adac_scan_chain *ch = &s->chains[i];
	if (ch->root == ADAC_ROOT_RUNNING)
		return i < s->running_count ? s->running[i].task : 0;
	return ch->task_index != ADAC_SCAN_NONE ? s->tasks[ch->task_index].addr : 0;
}

uint32_t adac_scan_find_task(const struct adac_async_scan *s, uint64_t addr)
{
	return adac_addr_index_find(&s->task_index, s->tasks, s->task_count, sizeof *s->tasks, addr);
}

uint64_t adac_scan_cont_next(const struct adac_async_scan *s, uint32_t i)
{
	uint32_t j = s->conts[i].next_index;
	if (j == ADAC_SCAN_NONE)
		return 0;
	if (j != ADAC_SCAN_STRAY)
		return s->conts[j].addr;
	size_t lo = 0, hi = s->stray_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->strays[mid].cont < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->stray_count && s->strays[lo].cont == i ? s->strays[lo].next : 0;
}

/* The record of the continuation at addr (ADAC_SCAN_NONE: none), trying the few records from
 * `near` on before the index: what was allocated together lies together (a caller's continuation
 * right after its callee's, a task's state object after the task), and the index costs a cache
 * miss at millions of records. */
static uint32_t find_cont_near(const struct adac_async_scan *s, uint64_t addr, size_t near)
{
	for (size_t k = near; k < s->cont_count && k < near + 4 && s->conts[k].addr <= addr; k++)
		if (s->conts[k].addr == addr)
			return (uint32_t)k;
	return adac_scan_find_cont(s, addr);
}

/* Turns each continuation's Next into the index of its record (a stray one kept apart): 0, or -1
 * when memory runs out. */
static int link_conts(struct adac_async_scan *s)
{
	size_t cap = 0;
	for (size_t i = 0; i < s->cont_count; i++) {
		uint64_t next = s->conts[i].next;
		uint32_t j = next ? find_cont_near(s, next, i + 1) : ADAC_SCAN_NONE;
		if (next && j == ADAC_SCAN_NONE) {
			if (grow((void **)&s->strays, &cap, s->stray_count + 1, sizeof *s->strays))
				return -1;
			s->strays[s->stray_count++] = (struct adac_scan_stray){next, (uint32_t)i};
			j = ADAC_SCAN_STRAY;
		}
		s->conts[i].chain = ADAC_SCAN_NONE;
		s->conts[i].next_index = j;
	}
	s->linked = true;
	return 0;
}

/* Walks a chain in memory from head (record i: ADAC_SCAN_NONE when unknown, then looked up),
 * claiming unclaimed continuations for chain `idx`. */
static void walk_chain(struct adac_async_scan *s, uint32_t idx, uint32_t i)
{
	struct adac_scan_chain *ch = &s->chains[idx];
	uint64_t cur = ch->head;
	uint32_t last = ADAC_SCAN_NONE; /* the last link's record */
	ch->end = ADAC_SCAN_END_COMPLETE;
	ch->end_record = ADAC_SCAN_NONE;
	if (i == ADAC_SCAN_NONE && cur)
		i = adac_scan_find_cont(s, cur);
	while (cur) {
		if (i == ADAC_SCAN_NONE) {
			ch->end = ADAC_SCAN_END_MISSING;
			ch->end_record = last;
			return;
		}
		struct adac_scan_cont *c = &s->conts[i];
		enum adac_scan_end end = c->chain == idx                ? ADAC_SCAN_END_CYCLE
		                         : c->chain != ADAC_SCAN_NONE   ? ADAC_SCAN_END_MERGED
		                         : ch->links >= ADAC_MAX_CHAIN_DEPTH ? ADAC_SCAN_END_TRUNCATED
		                                                        : ADAC_SCAN_END_COMPLETE;
		if (end != ADAC_SCAN_END_COMPLETE) {
			ch->end = (uint8_t)end;
			ch->end_record = i;
			return;
		}
		c->chain = idx;
		ch->links++;
		last = i;
		cur = adac_scan_cont_next(s, i);
		i = c->next_index == ADAC_SCAN_STRAY ? ADAC_SCAN_NONE : c->next_index;
	}
}

/* Turns each task's m_stateObject into the record of the continuation it is: 0, or -1 when memory
 * runs out. */
static int link_states(struct adac_async_scan *s)
{
	uint32_t *conts = adac_array_new(s->task_count, sizeof *conts);
	if (!conts)
		return -1;
	/* (The tasks come in address order, and so, mostly, do their state objects.) */
	size_t at = 0;
	for (size_t i = 0; i < s->task_count; i++) {
		uint64_t obj = s->state_objects ? s->state_objects[i] : 0;
		conts[i] = obj ? find_cont_near(s, obj, at) : ADAC_SCAN_NONE;
		if (conts[i] != ADAC_SCAN_NONE)
			at = conts[i];
	}
	free(s->state_objects);
	s->state_objects = NULL;
	s->state_conts = conts;
	return 0;
}

static int add_chain(struct adac_async_scan *s, size_t *cap, const struct adac_scan_chain *ch, struct adac_error *err)
{
	if (s->chain_count >= ADAC_MAX_CHAINS)
		return adac_fail(err, ADAC_E_LIMIT, ch->head, "more than ADAC_MAX_CHAINS (%u) chains", ADAC_MAX_CHAINS);
	if (grow((void **)&s->chains, cap, s->chain_count + 1, sizeof *s->chains))
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory building chains");
	s->chains[s->chain_count++] = *ch;
	return 0;
}

static int find_chains(struct adac_async_scan *s, const uint8_t *referenced, struct adac_error *err);

int adac_async_scan_chains(struct adac_async_scan *s, struct adac_error *err)
{
	if ((s->linked && !s->conts && s->cont_count) ||
	    ((!s->task_links || !(s->linked ? (void *)s->state_conts : (void *)s->state_objects)) && s->task_count))
		return adac_fail(err, ADAC_E_UNSUPPORTED, 0,
		                 "the continuation records, the task links or the state objects were dropped: the chains "
		                 "cannot be built again");
	free(s->chains);
	s->chains = NULL;
	s->chain_count = 0;
	free(s->awaiter_chains); /* (they name the chains found before) */
	s->awaiter_chains = NULL;
	if (!s->linked) {
		/* A heap walk lists the records in address order, each object once: duplicates would
		 * come only from bad input. */
		if (!adac_sort_if_needed(s->conts, s->cont_count, sizeof *s->conts, cmp_cont)) {
			size_t w = 0;
			for (size_t i = 0; i < s->cont_count; i++)
				if (w == 0 || s->conts[w - 1].addr != s->conts[i].addr)
					s->conts[w++] = s->conts[i];
			s->cont_count = w;
		}
		if (sort_tasks(s) || adac_addr_index_build(&s->cont_index, s->conts, s->cont_count, sizeof *s->conts) ||
		    adac_addr_index_build(&s->task_index, s->tasks, s->task_count, sizeof *s->tasks) || link_conts(s) ||
		    link_states(s))
			return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory indexing continuations");
	}
	/* Which continuations some continuation's Next points to: a bit each, only while the chains
	 * are found (a flag in every record cost 8 bytes of padding each: 32 MB at 4 M records). */
	uint8_t *referenced = adac_array_zeroed(s->cont_count / 8 + 1, 1);
	if (!referenced)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory indexing continuations");
	for (size_t i = 0; i < s->cont_count; i++) {
		uint32_t j = s->conts[i].next_index;
		s->conts[i].chain = ADAC_SCAN_NONE;
		if (j < s->cont_count)
			referenced[j / 8] |= (uint8_t)(1u << (j % 8));
	}
	free(s->task_chains);
	if (!(s->task_chains = adac_array_new(s->task_count, sizeof *s->task_chains))) {
		free(referenced);
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory building chains");
	}
	for (size_t i = 0; i < s->task_count; i++)
		s->task_chains[i] = ADAC_SCAN_NONE;
	int rc = find_chains(s, referenced, err);
	free(referenced);
	return rc;
}

/* The chains, from the linked records: running ones, those tasks hold, then the unowned. */
static int find_chains(struct adac_async_scan *s, const uint8_t *referenced, struct adac_error *err)
{
	size_t cap = 0;

	/* 1. Running chains, innermost dispatch loop of each thread first (as the records come). */
	for (size_t i = 0; i < s->running_count; i++) {
		const struct adac_scan_running *r = &s->running[i];
		struct adac_scan_chain ch = {
			.head = r->head,
			.root = ADAC_ROOT_RUNNING,
			.task_index = r->task ? adac_scan_find_task(s, r->task) : ADAC_SCAN_NONE,
		};
		if (add_chain(s, &cap, &ch, err))
			return -1;
		uint32_t idx = (uint32_t)(s->chain_count - 1);
		walk_chain(s, idx, ADAC_SCAN_NONE);
		if (ch.task_index != ADAC_SCAN_NONE && s->task_chains[ch.task_index] == ADAC_SCAN_NONE)
			s->task_chains[ch.task_index] = idx;
	}
	/* 2. Heads held by tasks (m_stateObject), by task address. */
	for (size_t i = 0; i < s->task_count; i++) {
		uint32_t h = s->state_conts[i];
		if (h == ADAC_SCAN_NONE || s->task_chains[i] != ADAC_SCAN_NONE)
			continue; /* (none, or a state object that is not a continuation) */
		uint64_t state_object = s->conts[h].addr;
		if (s->conts[h].chain != ADAC_SCAN_NONE && s->chains[s->conts[h].chain].head == state_object) {
			/* Two tasks holding one head (or a running chain's task): the first keeps it. */
			continue;
		}
		struct adac_scan_chain ch = {.head = state_object, .root = ADAC_ROOT_TASK,
		                             .task_index = (uint32_t)i};
		if (add_chain(s, &cap, &ch, err))
			return -1;
		s->task_chains[i] = (uint32_t)(s->chain_count - 1);
		walk_chain(s, s->task_chains[i], h);
	}
	/* 3. Continuations nothing points to and nothing owns yet. */
	for (size_t i = 0; i < s->cont_count; i++) {
		if (referenced[i / 8] >> (i % 8) & 1 || s->conts[i].chain != ADAC_SCAN_NONE)
			continue;
		struct adac_scan_chain ch = {.head = s->conts[i].addr, .root = ADAC_ROOT_UNOWNED, .task_index = ADAC_SCAN_NONE};
		if (add_chain(s, &cap, &ch, err))
			return -1;
		uint32_t idx = (uint32_t)(s->chain_count - 1);
		walk_chain(s, idx, (uint32_t)i);
		struct adac_scan_chain *c = &s->chains[idx];
		if (c->end == ADAC_SCAN_END_MERGED) {
			uint32_t other = s->conts[c->end_record].chain;
			if (other != ADAC_SCAN_NONE && s->chains[other].root != ADAC_ROOT_UNOWNED)
				c->root = ADAC_ROOT_STALE;
		}
	}
	/* 4. Continuations still unclaimed are on cycles that no head reaches: each cycle is a chain
	 * (headed by its lowest address). */
	for (size_t i = 0; i < s->cont_count; i++) {
		if (s->conts[i].chain != ADAC_SCAN_NONE)
			continue;
		struct adac_scan_chain ch = {.head = s->conts[i].addr, .root = ADAC_ROOT_UNOWNED, .task_index = ADAC_SCAN_NONE};
		if (add_chain(s, &cap, &ch, err))
			return -1;
		walk_chain(s, (uint32_t)(s->chain_count - 1), (uint32_t)i);
	}
	return 0;
}

/* ---- the scan ---------------------------------------------------------------------------------- */

/* The heap pass: the GC heap's continuations, tasks and the rest the scan keeps, into s. */
static int scan_heap(struct adac_runtime *rt, struct adac_out *out, unsigned flags,
                     struct adac_async_scan *s, struct adac_error *err)
{
	memset(s, 0, sizeof *s);
	const struct adac_gc_info *info = flags & ADAC_SCAN_MAY_RUN ? adac_gc_info_walkable(rt, err) : adac_gc_info(rt, err);
	if (!info)
		return -1;
	s->structures_valid = info->structures_valid;
	struct scan_ctx c = {.rt = rt, .scan = s, .ps = adac_target_ptr_size(rt->t), .info = info};
	if (init_layout(&c, err))
		return -1;
	/* The walk's parts run at once, each keeping what it finds; put end to end, their finds are in
	 * address order. */
	struct scan_part parts[ADAC_GC_WALK_MAX_PARTS];
	void *ctxs[ADAC_GC_WALK_MAX_PARTS];
	memset(parts, 0, sizeof parts);
	c.parts = adac_gc_walk_parts(rt);
	c.part = parts;
	atomic_init(&c.kept_conts, 0);
	atomic_init(&c.kept_tasks, 0);
	atomic_init(&c.kept_semaphores, 0);
	for (unsigned k = 0; k < c.parts; k++) {
		parts[k].c = &c;
		ctxs[k] = &parts[k];
	}
	const struct adac_gc_walk_progress progress = {out, "scanning the heap"};
	int rc = adac_gc_walk_split(rt, c.parts, on_object, ctxs, &progress, &s->walk, err);
	if (merge_parts(&c, parts, c.parts, err)) /* (a walk's failure came first and stays) */
		rc = -1;
	adac_addr_map_free(&c.verdicts);
	if (rc) {
		adac_async_scan_free(s);
		return -1;
	}
	return 0;
}

int adac_async_scan(struct adac_runtime *rt, struct adac_out *out, unsigned flags,
                    struct adac_async_scan *s, struct adac_error *err)
{
	double t0 = adac_seconds();
	for (;;) {
		if (scan_heap(rt, out, flags, s, err))
			return -1;
		if (!s->walk.error_count || !(flags & ADAC_SCAN_MAY_RUN))
			break;
		/* Nothing is shown yet: a held process stopped where its heap cannot be walked is let run
		 * and walked again. */
		int ran = adac_gc_rerun(rt, err);
		if (ran < 0) {
			adac_async_scan_free(s);
			return -1;
		}
		if (!ran)
			break;
		adac_async_scan_free(s);
	}
	s->seconds_heap = adac_seconds() - t0;

	double t1 = adac_seconds();
	struct threads_ctx tc = {.rt = rt, .scan = s};
	struct adac_error terr = {0};
	if (adac_managed_threads(rt, on_thread, &tc, &terr) && !adac_failed(&s->threads_err))
		s->threads_err = terr;
	if (adac_failed(&tc.fail)) {
		adac_error_copy(err, &tc.fail);
		adac_async_scan_free(s);
		return -1;
	}
	if (adac_async_scan_chains(s, err)) {
		adac_async_scan_free(s);
		return -1;
	}
	/* (Only the chains needed them: 8 MB at a million chains.) */
	free(s->state_conts);
	s->state_conts = NULL;
	s->seconds_link = adac_seconds() - t1;
	return 0;
}

void adac_async_scan_free(struct adac_async_scan *s)
{
	free(s->conts);
	free(s->tasks);
	free(s->task_types);
	free(s->task_links);
	free(s->task_chains);
	free(s->state_objects);
	free(s->state_conts);
	free(s->chains);
	free(s->running);
	free(s->semaphores);
	free(s->awaiters);
	free(s->awaiter_chains);
	adac_addr_index_free(&s->cont_index);
	adac_addr_index_free(&s->task_index);
	free(s->strays);
	adac_gc_walk_report_free(&s->walk);
	memset(s, 0, sizeof *s);
}
