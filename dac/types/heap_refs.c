/* heap_refs.c - see heap_refs.h. The slots come from the GCDesc when the type has the positive form;
 * otherwise (arrays of structs) every pointer-aligned slot is checked against the type's fields. */
#include "types/heap_refs.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/addr_map.h"
#include "base/cursor.h"
#include "base/grow.h"
#include "base/limits.h"
#include "base/pieces.h"
#include "runtime/gc_heap.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/methoddesc.h"
#include "types/vtype.h"

#define CHUNK 4096u  /* bytes of a large object read at a time */

/* Whether byte `at` of a value of type t starts one of its references. */
static bool ref_inside(struct adac_runtime *rt, const struct adac_vtype *t, uint32_t at)
{
	uint32_t offs[64], n = 0;
	if (adac_vtype_ref_offsets(rt, t, offs, 64, &n, NULL))
		return false;
	for (uint32_t i = 0; i < n && i < 64; i++)
		if (offs[i] == at)
			return true;
	return false;
}

struct field_find {
	struct adac_runtime *rt;
	uint32_t at;        /* the slot, from the start of the instance data */
	char *where;
	size_t size;
	bool found;
};

static int field_at(void *ctx, struct adac_vfield *f, struct adac_error *err)
{
	(void)err;
	struct field_find *c = ctx;
	if (f->type.kind == ADAC_VK_REF && f->offset == c->at) {
		snprintf(c->where, c->size, "%s", f->name);
		c->found = true;
	} else if (f->type.kind == ADAC_VK_STRUCT && c->at >= f->offset && c->at - f->offset < f->type.size &&
	           ref_inside(c->rt, &f->type, c->at - f->offset)) {
		snprintf(c->where, c->size, "%s (a struct, at +%u)", f->name, c->at - f->offset);
		c->found = true;
	}
	return c->found ? 1 : 0;
}

/* Is `off` (from the object's start) a reference slot of an object of type mt? Names it. */
static bool ref_slot(struct adac_runtime *rt, uint64_t mt, uint32_t off, char *where, size_t size)
{
	unsigned ps = adac_target_ptr_size(rt->t);
	struct adac_mt_info mi;
	if (adac_mt_read(rt, mt, &mi, NULL) || mi.is_string)
		return false;
	if (mi.is_array) {
		/* One-dimensional arrays: the elements start one pointer before the base size ends. */
		uint32_t start = mi.base_size - ps;
		struct adac_vtype et = {0};
		if (!mi.is_szarray || off < start || !mi.component_size || adac_vtype_from_th(rt, mi.element_type, &et, NULL))
			return false;
		uint32_t index = (off - start) / mi.component_size, at = (off - start) % mi.component_size;
		bool yes = et.kind == ADAC_VK_REF ? at == 0 : et.kind == ADAC_VK_STRUCT && ref_inside(rt, &et, at);
		adac_vtype_free(&et);
		if (yes)
			snprintf(where, size, at ? "[%u] (at +%u)" : "[%u]", index, at);
		return yes;
	}
	struct field_find c = {rt, off - ps, where, size, false};
	for (uint64_t cur = mt; cur && off >= ps;) {
		struct adac_mt_info pi;
		if (adac_vtype_fields(rt, cur, field_at, &c, NULL) < 0 || c.found || adac_mt_read(rt, cur, &pi, NULL))
			break;
		cur = pi.parent;
	}
	return c.found;
}

/* Every reference slot of an object, from its type: fn(ctx, o, off, value, checked) for each; checked
 * says the type's fields already named it a reference (the scan), else only the GCDesc did. fn returns
 * non-zero to stop. */
typedef int (*slot_fn)(void *ctx, const struct adac_gc_object *o, uint64_t off, uint64_t value, bool checked);

/* The bytes of a large object past what the walk read, read a chunk at a time (under the walk's
 * lock: one lock and one read for 512 slots of an array of references). */
struct past_walk {
	uint64_t off;     /* of buf[0], from the object's start */
	size_t len;       /* bytes read there; 0: none yet */
	uint8_t buf[CHUNK];
};

/* The value in slot `off` of o: 0, or -1 when it cannot be read. */
static int slot_value(struct adac_runtime *rt, const struct adac_gc_object *o, uint64_t off, struct past_walk *c,
                      uint64_t *v)
{
	unsigned ps = adac_target_ptr_size(rt->t);
	const uint8_t *at;
	if (off + ps <= o->data_len) {
		at = o->data + off;
	} else {
		if (!(c->len && off >= c->off && off + ps <= c->off + c->len)) {
			size_t want = o->size - off < CHUNK ? (size_t)(o->size - off) : CHUNK;
			adac_gc_walk_lock(rt);
			c->len = adac_read_upto(rt->t, o->addr + off, c->buf, want);
			adac_gc_walk_unlock(rt);
			c->off = off;
			if (c->len < ps)
				return c->len = 0, -1;
		}
		at = c->buf + (off - c->off);
	}
	*v = ps == 8 ? adac_get_u64(at, 0) : adac_get_u32(at, 0);
	return 0;
}

#define MAX_VAL_SERIES 64u  /* items of one value-class array GCDesc read (more: the slots are scanned) */

/* A MethodTable's GCDesc (what the GC itself follows), read once per type: NumSeries at mt - ptr.
 * Positive: series downwards, the highest first, each {SeriesSize, StartOffset}; a series covers
 * (SeriesSize + object size) / ptr slots from StartOffset. Negative (arrays of structs): StartOffset at
 * mt - 2 ptr, then -NumSeries items {nptrs, skip} (half a pointer each) downwards from mt - 3 ptr,
 * repeated per element up to the object's end less its header. */
enum gcdesc_kind {
	GCDESC_SCAN,      /* none usable (unreadable, or a form not understood): the slots are scanned */
	GCDESC_NONE,      /* the type holds no references */
	GCDESC_SERIES,    /* positive: series[i] = {SeriesSize, StartOffset} */
	GCDESC_VALUES,    /* negative: start, then items[i] = {nptrs, skip} */
};
struct gcdesc {
	uint64_t mt;      /* (the cache's key) */
	enum gcdesc_kind kind;
	uint32_t n;       /* series or items */
	uint64_t start;   /* GCDESC_VALUES: the first slot's offset */
	uint64_t *series; /* GCDESC_SERIES: 2 n values; GCDESC_VALUES: n items, nptrs low, skip high */
};

/* The GCDescs of the types a heap pass met (a few hundred: 13 M objects read ~3 of each one's
 * GCDesc words through the target's cache before), and the last one found: objects of a type come
 * in runs. */
struct gcdesc_cache {
	struct adac_addr_map map;   /* struct gcdesc by MethodTable */
	const struct gcdesc *last;
};

static void gcdesc_cache_free(struct gcdesc_cache *c)
{
	for (size_t i = 0; i < c->map.cap; i++) {
		struct gcdesc *d = adac_addr_map_slot(&c->map, i);
		if (d)
			free(d->series);
	}
	adac_addr_map_free(&c->map);
	c->last = NULL;
}

static void gcdesc_read(struct adac_runtime *rt, uint64_t mt, struct gcdesc *d)
{
	unsigned ps = adac_target_ptr_size(rt->t);
	struct adac_mt_info mi;
	uint64_t raw;
	d->kind = GCDESC_SCAN;
	if (adac_mt_read(rt, mt, &mi, NULL))
		return;
	if (!mi.contains_gc_pointers) {
		d->kind = GCDESC_NONE;
		return;
	}
	if (adac_read_ptr(rt->t, mt - ps, &raw, NULL))
		return;
	int64_t series = ps == 8 ? (int64_t)raw : (int32_t)raw;
	bool values = series < 0;
	uint64_t n = values ? (uint64_t)-series : (uint64_t)series;
	if (series == 0 || (!values && n > ADAC_MAX_GC_SERIES) || (values && n > MAX_VAL_SERIES))
		return;
	uint64_t *v = malloc((values ? n : 2 * n) * sizeof *v);
	if (!v)
		return;
	for (uint64_t i = 0; i < n; i++) {
		if (values) {
			if (adac_read_ptr(rt->t, mt - 3 * ps - i * ps, &raw, NULL))
				goto unusable;
			uint64_t nptrs = ps == 8 ? (uint32_t)raw : (raw & 0xffff), skip = ps == 8 ? raw >> 32 : (raw >> 16) & 0xffff;
			v[i] = nptrs | skip << 32;
		} else {
			uint64_t at = mt - 3 * ps - i * 2 * ps;
			if (adac_read_ptr(rt->t, at, &v[2 * i], NULL) || adac_read_ptr(rt->t, at + ps, &v[2 * i + 1], NULL))
				goto unusable;
		}
	}
	if (values && adac_read_ptr(rt->t, mt - 2 * ps, &d->start, NULL))
		goto unusable;
	d->kind = values ? GCDESC_VALUES : GCDESC_SERIES;
	d->n = (uint32_t)n;
	d->series = v;
	return;
unusable:
	free(v);
}

/* mt's GCDesc, read the first time it is asked for (under the walk's lock: a part's cache is its
 * own, the target is not); NULL when memory runs out (the slots are then scanned). */
static const struct gcdesc *gcdesc_of(struct adac_runtime *rt, struct gcdesc_cache *c, uint64_t mt)
{
	if (c->last && c->last->mt == mt)
		return c->last;
	bool added;
	struct gcdesc *d = adac_addr_map_get(&c->map, mt, sizeof *d, &added);
	if (d && added) {
		adac_gc_walk_lock(rt);
		gcdesc_read(rt, mt, d);
		adac_gc_walk_unlock(rt);
	}
	return c->last = d;
}

/* o's slots as its type's GCDesc gives them. Returns 1 when the slots were visited (*stop: fn
 * stopped), 0 when the caller must scan. */
static int gcdesc_slots(struct adac_runtime *rt, const struct gcdesc *d, const struct adac_gc_object *o, slot_fn fn,
                        void *ctx, int *stop)
{
	unsigned ps = adac_target_ptr_size(rt->t);
	uint64_t v;
	struct past_walk past;
	past.len = 0;
	*stop = 0;
	if (!d || d->kind == GCDESC_SCAN)
		return 0;
	if (d->kind == GCDESC_NONE)
		return 1;
	if (d->kind == GCDESC_SERIES) {
		for (uint32_t i = 0; i < d->n; i++) {
			uint64_t size = d->series[2 * i], start = d->series[2 * i + 1];
			uint64_t slots = (size + o->size) / ps;
			for (uint64_t k = 0; k < slots && start + (k + 1) * ps <= o->size; k++) {
				uint64_t off = start + k * ps;
				if (slot_value(rt, o, off, &past, &v))
					return 1;
				if ((*stop = fn(ctx, o, off, v, false) != 0))
					return 1;
			}
		}
		return 1;
	}
	if (o->size < 2 * ps)
		return 0;
	uint64_t end = o->size - ps, off = d->start;
	while (off < end) {
		uint64_t before = off;
		for (uint32_t i = 0; i < d->n && off < end; i++) {
			uint32_t nptrs = (uint32_t)d->series[i], skip = (uint32_t)(d->series[i] >> 32);
			for (uint32_t k = 0; k < nptrs && off + ps <= end; k++, off += ps) {
				if (slot_value(rt, o, off, &past, &v))
					return 1;
				if ((*stop = fn(ctx, o, off, v, false) != 0))
					return 1;
			}
			off += skip;
		}
		if (off == before)
			return 1;  /* a GCDesc that does not advance: nothing more to read */
	}
	return 1;
}

/* No usable GCDesc: every pointer-aligned slot holding `want` (0: any non-zero value) that the type's
 * fields name a reference. What the walk read, then the rest of a large object a chunk at a time. */
static int scan_slots(struct adac_runtime *rt, const struct adac_gc_object *o, uint64_t want, slot_fn fn, void *ctx)
{
	unsigned ps = adac_target_ptr_size(rt->t);
	char where[8];
	struct past_walk past;
	past.len = 0;
	for (uint64_t off = ps; off + ps <= o->size; off += ps) {
		uint64_t v;
		if (slot_value(rt, o, off, &past, &v))
			break;
		if (want ? v != want : v == 0)
			continue;
		adac_gc_walk_lock(rt);
		bool named = ref_slot(rt, o->mt, (uint32_t)off, where, sizeof where);
		adac_gc_walk_unlock(rt);
		if (named && fn(ctx, o, off, v, true))
			return 1;
	}
	return 0;
}

/* Every reference slot of o (fn stops with non-zero: returns 1). want as scan_slots. In a split
 * walk the parts run at once: what one asks of the target or the runtime beyond its objects' bytes
 * (a GCDesc, a slot past what the walk read, the fields of a type without a usable GCDesc) it asks
 * under the walk's lock, with a GCDesc cache of its own. */
static int each_slot(struct adac_runtime *rt, struct gcdesc_cache *c, const struct adac_gc_object *o, uint64_t want,
                     slot_fn fn, void *ctx)
{
	int stop;
	if (gcdesc_slots(rt, gcdesc_of(rt, c, o->mt), o, fn, ctx, &stop))
		return stop;
	return scan_slots(rt, o, want, fn, ctx);
}

int adac_heap_slot_name(struct adac_runtime *rt, uint64_t mt, uint32_t off, char *where, size_t size)
{
	if (ref_slot(rt, mt, off, where, size))
		return 0;
	snprintf(where, size, "at +0x%x", off);
	return -1;
}

struct slot_holding {
	uint64_t value;
	uint32_t off;
	bool found;
};

static int holding(void *ctx, const struct adac_gc_object *o, uint64_t off, uint64_t v, bool checked)
{
	(void)o;
	(void)checked;
	struct slot_holding *h = ctx;
	if (v != h->value)
		return 0;
	h->off = (uint32_t)off;
	h->found = true;
	return 1;
}

int adac_heap_slot_holding(struct adac_runtime *rt, uint64_t obj, uint64_t value, uint32_t *off)
{
	/* No bytes from a walk: the slots are read from the target, a chunk at a time. */
	struct adac_gc_object o = {.addr = obj};
	if (adac_gc_object_size(rt, obj, &o.mt, &o.size, NULL))
		return -1;
	struct gcdesc_cache c = {0};
	struct slot_holding h = {.value = value};
	each_slot(rt, &c, &o, value, holding, &h);
	gcdesc_cache_free(&c);
	if (!h.found)
		return -1;
	*off = h.off;
	return 0;
}

/* ---- the referrers of one object ------------------------------------------------------------------ */

/* A slot holding the target, named once the walk is over (the names ask the runtime). */
struct hit {
	uint64_t obj, mt;
	uint32_t offset;
	bool checked;
};

/* One part of the walk: the hits in its objects, in address order. */
struct refs_part {
	struct adac_runtime *rt;
	uint64_t target;
	struct gcdesc_cache gcdescs;
	struct hit *hits;
	size_t count, cap;
	bool failed;      /* out of memory */
};

static int ref_hit(void *ctx, const struct adac_gc_object *o, uint64_t off, uint64_t v, bool checked)
{
	struct refs_part *p = ctx;
	if (v != p->target)
		return 0;
	if (adac_grow((void **)&p->hits, &p->cap, p->count + 1, sizeof *p->hits, 64))
		return p->failed = true, 1;
	p->hits[p->count++] = (struct hit){o->addr, o->mt, (uint32_t)off, checked};
	return 0;
}

static int visit(void *ctx, const struct adac_gc_object *o)
{
	struct refs_part *p = ctx;
	return each_slot(p->rt, &p->gcdescs, o, p->target, ref_hit, p);
}

int adac_heap_refs(struct adac_runtime *rt, uint64_t target, adac_heap_ref_cb cb, void *ctx, struct adac_out *progress,
                   struct adac_gc_walk_report *rep, struct adac_error *err)
{
	struct refs_part parts[ADAC_GC_WALK_MAX_PARTS];
	void *ctxs[ADAC_GC_WALK_MAX_PARTS];
	unsigned n = adac_gc_walk_parts(rt);
	memset(parts, 0, sizeof parts);
	for (unsigned k = 0; k < n; k++) {
		parts[k] = (struct refs_part){.rt = rt, .target = target};
		ctxs[k] = &parts[k];
	}
	const struct adac_gc_walk_progress walk_progress = {progress, "walking the heap"};
	int rc = adac_gc_walk_split(rt, n, visit, ctxs, &walk_progress, rep, err);
	for (unsigned k = 0; k < n && rc == 0; k++)
		if (parts[k].failed)
			rc = adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for the references to 0x%llx",
			               (unsigned long long)target);
	/* The parts put end to end are the heap in address order. */
	for (unsigned k = 0; k < n && rc == 0; k++) {
		for (size_t i = 0; i < parts[k].count; i++) {
			const struct hit *h = &parts[k].hits[i];
			struct adac_heap_ref r = {.obj = h->obj, .mt = h->mt, .offset = h->offset};
			if (!ref_slot(rt, h->mt, h->offset, r.where, sizeof r.where)) {
				if (h->checked)
					continue;
				snprintf(r.where, sizeof r.where, "at +0x%x", h->offset);
			}
			if (cb(ctx, &r))
				break;
		}
	}
	for (unsigned k = 0; k < n; k++) {
		gcdesc_cache_free(&parts[k].gcdescs);
		free(parts[k].hits);
	}
	return rc;
}

/* ---- the reference graph ------------------------------------------------------------------------- */

/* One part of the walk: its objects and their slots' values, first[] counting from its first edge. */
struct graph_part {
	struct adac_runtime *rt;
	atomic_size_t *objects, *edges;   /* the parts' counts (the caps) */
	const uint64_t *keep;             /* kept even when they hold no reference (sorted) ... */
	size_t keep_count, keep_at;       /* ... and the first not below the walk's last object */
	uint64_t walked;
	struct gcdesc_cache gcdescs;
	uint64_t *addr;
	uint32_t *first;
	uint64_t *edge_to;
	size_t count, edge_count;
	size_t addr_cap, first_cap, to_cap; /* (each array its own: adac_grow rounds per element size) */
	struct adac_error err;
	bool failed;
};

static int add_edge(void *ctx, const struct adac_gc_object *o, uint64_t off, uint64_t v, bool checked)
{
	(void)off; /* (found again for the few slots a path shows: adac_heap_slot_holding) */
	(void)checked;
	struct graph_part *p = ctx;
	if (!v)
		return 0;
	if (!adac_piece_under_cap(p->edges, p->edge_count, ADAC_MAX_GRAPH_EDGES)) {
		adac_fail(&p->err, ADAC_E_LIMIT, o->addr, "more than ADAC_MAX_GRAPH_EDGES (%u) references on the heap",
		          ADAC_MAX_GRAPH_EDGES);
		return p->failed = true, 1;
	}
	if (adac_grow((void **)&p->edge_to, &p->to_cap, p->edge_count + 1, sizeof *p->edge_to, 4096)) {
		adac_fail(&p->err, ADAC_E_NOMEM, 0, "out of memory for the heap's references");
		return p->failed = true, 1;
	}
	p->edge_to[p->edge_count++] = v;
	return 0;
}

/* Whether the object at addr is one asked for (the part's objects come in address order). */
static bool asked_for(struct graph_part *p, uint64_t addr)
{
	while (p->keep_at < p->keep_count && p->keep[p->keep_at] < addr)
		p->keep_at++;
	return p->keep_at < p->keep_count && p->keep[p->keep_at] == addr;
}

static int add_object(void *ctx, const struct adac_gc_object *o)
{
	struct graph_part *p = ctx;
	size_t first = p->edge_count;
	p->walked++;
	each_slot(p->rt, &p->gcdescs, o, 0, add_edge, p);
	if (p->failed || (p->edge_count == first && !asked_for(p, o->addr)))
		return p->failed;
	if (!adac_piece_under_cap(p->objects, p->count, ADAC_MAX_GRAPH_OBJECTS)) {
		adac_fail(&p->err, ADAC_E_LIMIT, o->addr, "more than ADAC_MAX_GRAPH_OBJECTS (%u) objects holding references "
		          "on the heap", ADAC_MAX_GRAPH_OBJECTS);
		return p->failed = true, 1;
	}
	if (p->count && o->addr <= p->addr[p->count - 1]) {
		adac_fail(&p->err, ADAC_E_CORRUPT, o->addr, "the heap walk went back to 0x%llx",
		          (unsigned long long)o->addr);
		return p->failed = true, 1;
	}
	if (adac_grow((void **)&p->addr, &p->addr_cap, p->count + 1, sizeof *p->addr, 4096) ||
	    adac_grow((void **)&p->first, &p->first_cap, p->count + 1, sizeof *p->first, 4096)) {
		adac_fail(&p->err, ADAC_E_NOMEM, 0, "out of memory for the heap's objects");
		return p->failed = true, 1;
	}
	p->addr[p->count] = o->addr;
	p->first[p->count++] = (uint32_t)first;
	return 0;
}

/* The parts' objects and edges end to end into g (their pages moved, not copied), first[] counted
 * from the graph's first edge and closed by the edge count: 0, or -1 with err (a part's failure,
 * the walk gone back between two parts, out of memory). Frees the parts. */
static int join_parts(struct adac_heap_graph *g, struct graph_part *parts, unsigned n, struct adac_error *err)
{
	struct adac_piece addr[ADAC_GC_WALK_MAX_PARTS], first[ADAC_GC_WALK_MAX_PARTS], to[ADAC_GC_WALK_MAX_PARTS];
	struct graph_part *last = &parts[n - 1];
	int rc = 0;
	/* The last part's first[] gets the closing entry. */
	if (!last->failed && adac_grow((void **)&last->first, &last->first_cap, last->count + 1, sizeof *last->first, 4096))
		rc = adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for the heap's objects");
	else if (!last->failed)
		last->first[last->count] = (uint32_t)last->edge_count;
	size_t edges = 0;
	uint64_t end = 0;
	for (unsigned k = 0; k < n; k++) {
		struct graph_part *p = &parts[k];
		if (rc == 0 && p->failed)
			rc = adac_error_copy(err, &p->err);
		if (rc == 0 && p->count && p->addr[0] < end)
			rc = adac_fail(err, ADAC_E_CORRUPT, p->addr[0], "the heap walk went back to 0x%llx",
			               (unsigned long long)p->addr[0]);
		if (rc == 0) {
			for (size_t i = 0; i < p->count + (p == last); i++)
				p->first[i] += (uint32_t)edges;
			edges += p->edge_count;
			end = p->count ? p->addr[p->count - 1] + 1 : end;
		}
		addr[k] = (struct adac_piece){p->addr, p->count, p->addr_cap};
		first[k] = (struct adac_piece){p->first, p->count + (p == last && rc == 0), p->first_cap};
		to[k] = (struct adac_piece){p->edge_to, p->edge_count, p->to_cap};
		gcdesc_cache_free(&p->gcdescs);
	}
	size_t first_count;
	int gathered = adac_pieces_gather((void **)&g->addr, &g->count, addr, n, sizeof *g->addr);
	gathered |= adac_pieces_gather((void **)&g->first, &first_count, first, n, sizeof *g->first);
	gathered |= adac_pieces_gather((void **)&g->edge_to, &g->edge_count, to, n, sizeof *g->edge_to);
	if (rc == 0 && gathered)
		rc = adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for the heap's objects");
	return rc;
}

int adac_heap_graph_build(struct adac_runtime *rt, const uint64_t *keep, size_t keep_count, struct adac_heap_graph *g,
                          struct adac_out *progress, struct adac_gc_walk_report *rep, struct adac_error *err)
{
	memset(g, 0, sizeof *g);
	struct graph_part parts[ADAC_GC_WALK_MAX_PARTS];
	void *ctxs[ADAC_GC_WALK_MAX_PARTS];
	atomic_size_t objects, edges;
	atomic_init(&objects, 0);
	atomic_init(&edges, 0);
	unsigned n = adac_gc_walk_parts(rt);
	memset(parts, 0, sizeof parts);
	for (unsigned k = 0; k < n; k++) {
		parts[k].rt = rt;
		parts[k].objects = &objects;
		parts[k].edges = &edges;
		parts[k].keep = keep;
		parts[k].keep_count = keep_count;
		ctxs[k] = &parts[k];
	}
	const struct adac_gc_walk_progress walk_progress = {progress, "walking the heap"};
	int rc = adac_gc_walk_split(rt, n, add_object, ctxs, &walk_progress, rep, err);
	for (unsigned k = 0; k < n; k++)
		g->walked += parts[k].walked;
	struct adac_error join_err = {0};
	if (join_parts(g, parts, n, &join_err) && rc == 0) {
		adac_error_copy(err, &join_err);
		rc = -1;
	}
	if (rc) {
		adac_heap_graph_free(g);
		return -1;
	}
	if (adac_addr_index_build(&g->index, g->addr, g->count, sizeof *g->addr)) {
		adac_heap_graph_free(g);
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory indexing the heap's objects");
	}
	return 0;
}

int64_t adac_heap_graph_find(const struct adac_heap_graph *g, uint64_t addr)
{
	uint32_t i = adac_addr_index_find(&g->index, g->addr, g->count, sizeof *g->addr, addr);
	return i == ADAC_ADDR_NONE ? -1 : (int64_t)i;
}

void adac_heap_graph_free(struct adac_heap_graph *g)
{
	free(g->addr);
	free(g->first);
	free(g->edge_to);
	adac_addr_index_free(&g->index);
	memset(g, 0, sizeof *g);
}
