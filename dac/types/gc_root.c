/* gc_root.c - see gc_root.h. */
#include "types/gc_root.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/grow.h"
#include "base/limits.h"
#include "base/strf.h"
#include "runtime/gc_handles.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "runtime/threads.h"
#include "target/target.h"
#include "types/heap_refs.h"

#define NONE UINT32_MAX
#define STACK_CHUNK 65536u

/* The graph, searched backwards from the object. */
struct search {
	struct adac_runtime *rt;
	struct adac_heap_graph g;
	uint32_t *next;      /* the object one hop closer (through which slot: hop_slot); the object's
	                      * own is itself; NONE: does not reach it. (Its hops are counted along
	                      * these for the few objects roots hold: 4 bytes an object less.) */
	uint32_t target;     /* the object's index */
	/* dependent handles: primary -> secondary edges (read before the graph is built: their
	 * addresses in dep_addr, then the graph's indexes in dep) */
	size_t dep_count, dep_cap;
	uint64_t (*dep_addr)[2];
	uint32_t (*dep)[2];
	uint64_t *dep_h;
	struct adac_gcroot *out;
	size_t root_cap;
	uint32_t (*seen)[2];     /* the current thread's roots: {object index, root index}, NONE: empty */
	size_t seen_cap, seen_n;
	uint64_t seen_tid;
	struct adac_error err;   /* a fatal failure inside a callback (memory, caps) */
};

static int warn(struct search *s, const char *what, const struct adac_error *e)
{
	char **w = realloc(s->out->warnings, (s->out->warning_count + 1) * sizeof *w);
	if (!w)
		return adac_fail(&s->err, ADAC_E_NOMEM, 0, "out of memory");
	s->out->warnings = w;
	w[s->out->warning_count] = NULL;
	if (adac_strf(&w[s->out->warning_count], &s->err, "%s: %s", what, e->msg))
		return -1;
	s->out->warning_count++;
	return 0;
}

/* Reverse edges, then a breadth-first search from the object at index t. What the search keeps per
 * object and per reference is most of gcroot's memory, and on a virtual machine each new page of it
 * costs more than the work done in it: the slots' targets go once the reverse lists are built
 * (hop_slot reads the few it needs again), the reverse lists are filled from their ends (no cursor
 * per object), and the queue grows with the objects that reach the object (usually a few). */
static int search_back(struct search *s, uint32_t t, struct adac_error *err)
{
	struct adac_heap_graph *g = &s->g;
	size_t n = g->count, m = g->edge_count;
	/* Each edge's target as an object index, written over the addresses (4 bytes where 8 were, a
	 * slot read before it is written). */
	unsigned char *bytes = (unsigned char *)g->edge_to;
	for (size_t i = 0; i < m; i++) {
		uint64_t addr;
		memcpy(&addr, bytes + i * sizeof addr, sizeof addr);
		int64_t k = adac_heap_graph_find(g, addr);
		uint32_t idx = k < 0 ? NONE : (uint32_t)k;
		memcpy(bytes + i * sizeof idx, &idx, sizeof idx);
	}
	g->edge_to = NULL;
	uint32_t *to = (uint32_t *)(void *)bytes;
	uint32_t *smaller = m ? realloc(to, m * sizeof *to) : NULL;
	if (smaller)
		to = smaller;
	uint32_t *rfirst = adac_array_zeroed(n + 1, sizeof *rfirst);
	uint32_t *rsrc = adac_array_new(m + s->dep_count + 1, sizeof *rsrc);
	uint32_t *queue = NULL;
	size_t queue_cap = 0;
	int rc = 0;
	if ((m && !to) || !rfirst || !rsrc) {
		rc = adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for the heap's reverse references");
		goto out;
	}
	/* rfirst[k]: where object k's list of referrers ends, then (filled backwards) where it starts. */
	for (size_t i = 0; i < m; i++)
		if (to[i] != NONE)
			rfirst[to[i]]++;
	for (size_t d = 0; d < s->dep_count; d++)
		rfirst[s->dep[d][1]]++;
	for (size_t i = 1; i <= n; i++)
		rfirst[i] += rfirst[i - 1];
	/* Each list in order: the referrers by index, each once per slot, then the dependent handles. */
	for (size_t d = s->dep_count; d-- > 0;)
		rsrc[--rfirst[s->dep[d][1]]] = s->dep[d][0];
	for (size_t src = n; src-- > 0;)
		for (uint32_t e = g->first[src + 1]; e-- > g->first[src];)
			if (to[e] != NONE)
				rsrc[--rfirst[to[e]]] = (uint32_t)src;
	free(to);
	to = NULL;
	s->next = malloc((n ? n : 1) * sizeof *s->next);
	if (!s->next || adac_grow((void **)&queue, &queue_cap, 1, sizeof *queue, 1024)) {
		rc = adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for the heap's reverse references");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		s->next[i] = NONE;
	size_t head = 0, tail = 0;
	s->target = t;
	s->next[t] = t;
	queue[tail++] = t;
	while (head < tail) {
		uint32_t cur = queue[head++];
		for (uint32_t r = rfirst[cur]; r < rfirst[cur + 1]; r++) {
			uint32_t src = rsrc[r];
			if (s->next[src] != NONE)
				continue;
			if (adac_grow((void **)&queue, &queue_cap, tail + 1, sizeof *queue, 1024)) {
				rc = adac_fail(err, ADAC_E_NOMEM, 0, "out of memory searching the heap's references");
				goto out;
			}
			s->next[src] = cur;
			queue[tail++] = src;
		}
	}
out:
	free(to);
	free(rfirst);
	free(rsrc);
	free(queue);
	return rc;
}

/* An object's MethodTable, read again for the few objects a path shows (the heap's graph keeps
 * none: 8 bytes an object); 0 when it cannot be read. */
static uint64_t mt_of(struct adac_runtime *rt, uint64_t obj)
{
	uint64_t mt;
	return adac_object_mt(rt, obj, &mt, NULL) ? 0 : mt;
}

/* How object `from` references the next object of its path: its first slot holding it (a reverse
 * list holds an object's slots in order, then the dependent handles), found again by reading the
 * object's slots (the graph keeps their values, not where they were: 4 bytes a reference), or else
 * the dependent handle. */
static void hop_slot(const struct search *s, uint32_t from, struct adac_root_hop *hop)
{
	uint32_t to = s->next[from], off;
	if (adac_heap_slot_holding(s->rt, s->g.addr[from], s->g.addr[to], &off) == 0) {
		hop->offset = off;
		return;
	}
	for (size_t d = 0; d < s->dep_count; d++)
		if (s->dep[d][0] == from && s->dep[d][1] == to) {
			hop->dependent = true;
			hop->handle = s->dep_h[d];
			return;
		}
}

/* Hops from object index k (which reaches the object) to the object, counted up to
 * ADAC_MAX_ROOT_PATH + 1: the breadth-first search's distance, since each next is one level closer. */
static uint32_t hops(const struct search *s, uint32_t k)
{
	uint32_t d = 0;
	for (; k != s->target && d <= ADAC_MAX_ROOT_PATH; k = s->next[k])
		d++;
	return d;
}

/* Adds a root holding object index k when it reaches the object. */
static int add_root(struct search *s, struct adac_gc_root *r, uint64_t value)
{
	int64_t k = adac_heap_graph_find(&s->g, value);
	if (k < 0 || !s->next || s->next[k] == NONE)
		return 0;
	struct adac_gcroot *o = s->out;
	/* A thread holding the object in several slots is one root: the first slot, and how many more
	 * (the thread's roots by object: a hash of object index -> root index, emptied per thread). */
	bool of_thread = r->kind == ADAC_ROOT_STACK || r->kind == ADAC_ROOT_REGISTER;
	size_t slot = 0;
	if (of_thread) {
		if (s->seen_tid != r->os_tid || !s->seen_cap) {
			if (!s->seen_cap && !(s->seen = malloc((s->seen_cap = 1024) * sizeof *s->seen)))
				return s->seen_cap = 0, adac_fail(&s->err, ADAC_E_NOMEM, 0, "out of memory");
			memset(s->seen, 0xff, s->seen_cap * sizeof *s->seen);
			s->seen_n = 0;
			s->seen_tid = r->os_tid;
		}
		if ((s->seen_n + 1) * 2 > s->seen_cap) {
			size_t cap = s->seen_cap * 2;
			uint32_t(*p)[2] = malloc(cap * sizeof *p);
			if (!p)
				return adac_fail(&s->err, ADAC_E_NOMEM, 0, "out of memory");
			memset(p, 0xff, cap * sizeof *p);
			for (size_t i = 0; i < s->seen_cap; i++)
				if (s->seen[i][0] != NONE) {
					size_t j = (s->seen[i][0] * 2654435761u) & (cap - 1);
					while (p[j][0] != NONE)
						j = (j + 1) & (cap - 1);
					p[j][0] = s->seen[i][0];
					p[j][1] = s->seen[i][1];
				}
			free(s->seen);
			s->seen = p;
			s->seen_cap = cap;
		}
		slot = ((uint32_t)k * 2654435761u) & (s->seen_cap - 1);
		while (s->seen[slot][0] != NONE) {
			if (s->seen[slot][0] == (uint32_t)k) {
				o->roots[s->seen[slot][1]].more_slots++;
				return 0;
			}
			slot = (slot + 1) & (s->seen_cap - 1);
		}
	}
	if (o->root_count >= ADAC_MAX_GC_ROOTS)
		return adac_fail(&s->err, ADAC_E_LIMIT, value, "more than ADAC_MAX_GC_ROOTS (%u) roots reach the object",
		                 ADAC_MAX_GC_ROOTS);
	uint32_t dist = hops(s, (uint32_t)k);
	if (dist + 1u > ADAC_MAX_ROOT_PATH)
		return adac_fail(&s->err, ADAC_E_LIMIT, value, "a path longer than ADAC_MAX_ROOT_PATH (%u) hops",
		                 ADAC_MAX_ROOT_PATH);
	if (o->root_count == s->root_cap) {
		size_t cap = s->root_cap ? s->root_cap * 2 : 16;
		struct adac_gc_root *p = realloc(o->roots, cap * sizeof *p);
		if (!p)
			return adac_fail(&s->err, ADAC_E_NOMEM, 0, "out of memory");
		o->roots = p;
		s->root_cap = cap;
	}
	r->hop_count = dist + 1u;
	r->path = calloc(r->hop_count, sizeof *r->path);
	if (!r->path)
		return adac_fail(&s->err, ADAC_E_NOMEM, 0, "out of memory");
	uint32_t cur = (uint32_t)k;
	for (size_t i = 0; i < r->hop_count; i++) {
		r->path[i].obj = s->g.addr[cur];
		r->path[i].mt = mt_of(s->rt, s->g.addr[cur]);
		if (i + 1 < r->hop_count) {
			hop_slot(s, cur, &r->path[i + 1]);
			cur = s->next[cur];
		}
	}
	if (of_thread) {
		s->seen[slot][0] = (uint32_t)k;
		s->seen[slot][1] = (uint32_t)o->root_count;
		s->seen_n++;
	}
	o->roots[o->root_count++] = *r;
	return 0;
}

/* ---- handles ---- */

struct handle_pass {
	struct search *s;
	bool collect_dependent;   /* first pass: dependent handles become edges; second: roots */
};

static int on_handle(void *ctx, const struct adac_gc_handle *h)
{
	struct handle_pass *p = ctx;
	struct search *s = p->s;
	if (p->collect_dependent) {
		s->out->handles++;
		if (h->type != ADAC_HANDLE_DEPENDENT || !h->secondary || !h->object)
			return 0;
		if (s->dep_count == s->dep_cap) {
			size_t cap = s->dep_cap ? s->dep_cap * 2 : 64;
			void *q1 = realloc(s->dep_addr, cap * sizeof *s->dep_addr);
			void *q2 = q1 ? realloc(s->dep_h, cap * sizeof *s->dep_h) : NULL;
			if (q1)
				s->dep_addr = q1;
			if (!q2)
				return adac_fail(&s->err, ADAC_E_NOMEM, 0, "out of memory"), 1;
			s->dep_h = q2;
			s->dep_cap = cap;
		}
		s->dep_addr[s->dep_count][0] = h->object;
		s->dep_addr[s->dep_count][1] = h->secondary;
		s->dep_h[s->dep_count++] = h->handle;
		return 0;
	}
	if (!adac_handle_type_is_root(h->type))
		return 0;
	struct adac_gc_root r = {.kind = ADAC_ROOT_HANDLE, .where = h->handle, .handle_type = h->type};
	return add_root(s, &r, h->object) ? 1 : 0;
}

/* ---- threads ---- */

static int scan_thread(void *ctx, const struct adac_managed_thread *th)
{
	struct search *s = ctx;
	struct adac_runtime *rt = s->rt;
	unsigned ps = adac_target_ptr_size(rt->t);
	struct adac_regs regs;
	struct adac_error e = {0};
	char what[96];
	if (!th->os_id)
		return 0;
	snprintf(what, sizeof what, "thread %llu (managed %u)", (unsigned long long)th->os_id, th->managed_id);
	if (adac_target_regs(rt->t, th->os_id, &regs, &e))
		return warn(s, what, &e) ? 1 : 0;
	s->out->threads++;
	uint64_t sp = regs.r[ADAC_REG_RSP] & ~(uint64_t)(ps - 1);
	uint64_t end = th->stack_base > sp && th->stack_base - sp <= ADAC_MAX_STACK_SCAN_BYTES
	                   ? th->stack_base : sp + ADAC_MAX_STACK_SCAN_BYTES;
	if (th->stack_base <= sp || th->stack_base - sp > ADAC_MAX_STACK_SCAN_BYTES) {
		if (th->stack_base > sp)
			adac_fail(&e, ADAC_E_LIMIT, sp, "its stack is longer than ADAC_MAX_STACK_SCAN_BYTES (%u): scanned that "
			          "much from the stack pointer", ADAC_MAX_STACK_SCAN_BYTES);
		else
			adac_fail(&e, ADAC_E_LIMIT, sp, "its stack's end is not known (Thread.CachedStackBase %s): scanned to "
			          "the end of readable memory, at most ADAC_MAX_STACK_SCAN_BYTES (%u)",
			          th->stack_base ? "is below the stack pointer" : "is 0", ADAC_MAX_STACK_SCAN_BYTES);
		if (warn(s, what, &e))
			return 1;
	}
	uint8_t *buf = malloc(STACK_CHUNK);
	if (!buf)
		return adac_fail(&s->err, ADAC_E_NOMEM, 0, "out of memory"), 1;
	for (uint64_t at = sp; at < end;) {
		size_t want = end - at < STACK_CHUNK ? (size_t)(end - at) : STACK_CHUNK;
		size_t got = adac_read_upto(rt->t, at, buf, want);
		for (size_t i = 0; i + ps <= got; i += ps) {
			uint64_t v = ps == 8 ? adac_get_u64(buf, i) : adac_get_u32(buf, i);
			struct adac_gc_root r = {.kind = ADAC_ROOT_STACK, .where = at + i, .os_tid = th->os_id,
			                         .managed_id = th->managed_id};
			if (v && add_root(s, &r, v)) {
				free(buf);
				return 1;
			}
		}
		if (got < want)
			break;  /* the end of the stack's memory */
		at += got;
	}
	free(buf);
	uint64_t tls = 0;
	memset(&e, 0, sizeof e);
	if (adac_thread_statics_array(rt, th, &tls, &e)) {
		if (warn(s, what, &e))
			return 1;
	} else if (tls) {
		struct adac_gc_root r = {.kind = ADAC_ROOT_THREAD_STATICS, .where = th->thread_local_data,
		                         .os_tid = th->os_id, .managed_id = th->managed_id};
		if (add_root(s, &r, tls))
			return 1;
	}
	for (unsigned reg = 0; reg < ADAC_REG_COUNT; reg++) {
		if (reg == ADAC_REG_RSP || reg == ADAC_REG_RIP || reg == ADAC_REG_FS_BASE || !regs.r[reg])
			continue;
		struct adac_gc_root r = {.kind = ADAC_ROOT_REGISTER, .where = reg, .os_tid = th->os_id,
		                         .managed_id = th->managed_id};
		if (add_root(s, &r, regs.r[reg]))
			return 1;
	}
	return 0;
}

static int on_finalizable(void *ctx, uint64_t slot, uint64_t obj)
{
	struct search *s = ctx;
	struct adac_gc_root r = {.kind = ADAC_ROOT_FINALIZER, .where = slot};
	return add_root(s, &r, obj) ? 1 : 0;
}

static int cmp_addr(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* What the graph keeps though it may hold no reference: the object, and dependent handles' primaries
 * (their edge is the handle's, not a slot's). Sorted; NULL when memory runs out. */
static uint64_t *kept_objects(const struct search *s, uint64_t obj, size_t *count)
{
	uint64_t *keep = malloc((s->dep_count + 1) * sizeof *keep);
	if (!keep)
		return NULL;
	keep[0] = obj;
	for (size_t d = 0; d < s->dep_count; d++)
		keep[d + 1] = s->dep_addr[d][0];
	qsort(keep, s->dep_count + 1, sizeof *keep, cmp_addr);
	*count = s->dep_count + 1;
	return keep;
}

/* The dependent handles' edges between objects of the graph, as indexes (in the handles' order; a
 * secondary the graph left out holds no reference, so it leads nowhere). */
static int dependent_edges(struct search *s)
{
	if (s->dep_count && !(s->dep = malloc(s->dep_count * sizeof *s->dep)))
		return adac_fail(&s->err, ADAC_E_NOMEM, 0, "out of memory");
	size_t n = 0;
	for (size_t d = 0; d < s->dep_count; d++) {
		int64_t a = adac_heap_graph_find(&s->g, s->dep_addr[d][0]), b = adac_heap_graph_find(&s->g, s->dep_addr[d][1]);
		if (a < 0 || b < 0)
			continue;
		s->dep[n][0] = (uint32_t)a;
		s->dep[n][1] = (uint32_t)b;
		s->dep_h[n++] = s->dep_h[d];
	}
	s->dep_count = n;
	return 0;
}

int adac_gcroot(struct adac_runtime *rt, uint64_t obj, struct adac_out *progress, struct adac_gcroot *out,
                struct adac_error *err)
{
	memset(out, 0, sizeof *out);
	out->object = obj;
	struct search s = {.rt = rt, .out = out};
	struct adac_error e = {0};
	int rc = -1;
	/* Dependent handles first: their primaries are kept by the graph. */
	struct handle_pass hp = {&s, true};
	bool handles_ok = adac_gc_handles(rt, on_handle, &hp, &e) == 0 && !adac_failed(&s.err);
	if (adac_failed(&s.err))
		goto fatal;
	size_t keep_count = 0;
	uint64_t *keep = kept_objects(&s, obj, &keep_count);
	if (!keep) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		goto done;
	}
	int built = adac_heap_graph_build(rt, keep, keep_count, &s.g, progress, &out->rep, err);
	free(keep);
	if (built)
		goto done;
	out->objects = s.g.walked;
	int64_t t = adac_heap_graph_find(&s.g, obj);
	if (t < 0) {
		adac_fail(err, ADAC_E_NOT_FOUND, obj, "0x%llx is not the start of a heap object", (unsigned long long)obj);
		goto done;
	}
	out->mt = mt_of(rt, obj);
	if (dependent_edges(&s))
		goto fatal;
	if (!handles_ok && warn(&s, "GC handles", &e))
		goto fatal;
	if (search_back(&s, (uint32_t)t, err))
		goto done;
	memset(&e, 0, sizeof e);
	if (adac_managed_threads(rt, scan_thread, &s, &e) && warn(&s, "managed threads", &e))
		goto fatal;
	if (adac_failed(&s.err))
		goto fatal;
	hp.collect_dependent = false;
	memset(&e, 0, sizeof e);
	/* After a failure the handles read before it still count (the failure was said once). */
	if (adac_gc_handles(rt, on_handle, &hp, &e) && handles_ok && !adac_failed(&s.err) && warn(&s, "GC handles", &e))
		goto fatal;
	if (adac_failed(&s.err))
		goto fatal;
	memset(&e, 0, sizeof e);
	if (adac_gc_finalizer_ready(rt, on_finalizable, &s, &e) && !adac_failed(&s.err) &&
	    warn(&s, "finalization queue", &e))
		goto fatal;
	if (adac_failed(&s.err))
		goto fatal;
	rc = 0;
	goto done;
fatal:
	adac_error_copy(err, &s.err);
done:
	adac_heap_graph_free(&s.g);
	free(s.next);
	free(s.dep_addr);
	free(s.dep);
	free(s.dep_h);
	free(s.seen);
	if (rc)
		adac_gcroot_free(out);
	return rc;
}

void adac_gcroot_free(struct adac_gcroot *g)
{
	for (size_t i = 0; i < g->root_count; i++)
		free(g->roots[i].path);
	free(g->roots);
	for (size_t i = 0; i < g->warning_count; i++)
		free(g->warnings[i]);
	free(g->warnings);
	adac_gc_walk_report_free(&g->rep);
	memset(g, 0, sizeof *g);
}
