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

static int slot_value(struct adac_runtime *rt, const struct adac_gc_object *o, uint64_t off, uint64_t *v)
{
	unsigned ps = adac_target_ptr_size(rt->t);
	if (off + ps <= o->data_len) {
		*v = ps == 8 ? adac_get_u64(o->data, off) : adac_get_u32(o->data, off);
		return 0;
	}
	return adac_read_ptr(rt->t, o->addr + off, v, NULL);
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

/* mt's GCDesc, read the first time it is asked for; NULL when memory runs out (the slots are then
 * scanned). */
static const struct gcdesc *gcdesc_of(struct adac_runtime *rt, struct gcdesc_cache *c, uint64_t mt)
{
	if (c->last && c->last->mt == mt)
		return c->last;
	bool added;
	struct gcdesc *d = adac_addr_map_get(&c->map, mt, sizeof *d, &added);
	if (d && added)
		gcdesc_read(rt, mt, d);
	return c->last = d;
}

/* o's slots as its type's GCDesc gives them. Returns 1 when the slots were visited (*stop: fn
 * stopped), 0 when the caller must scan. */
static int gcdesc_slots(struct adac_runtime *rt, const struct gcdesc *d, const struct adac_gc_object *o, slot_fn fn,
                        void *ctx, int *stop)
{
	unsigned ps = adac_target_ptr_size(rt->t);
	uint64_t v;
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
				if (slot_value(rt, o, off, &v))
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
				if (slot_value(rt, o, off, &v))
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
	uint64_t end = o->size, off = ps;
	for (; off + ps <= end && off + ps <= o->data_len; off += ps) {
		uint64_t v = ps == 8 ? adac_get_u64(o->data, off) : adac_get_u32(o->data, off);
		if ((want ? v == want : v != 0) && ref_slot(rt, o->mt, (uint32_t)off, where, sizeof where) &&
		    fn(ctx, o, off, v, true))
			return 1;
	}
	uint8_t buf[CHUNK];
	while (off + ps <= end) {
		size_t len = end - off < CHUNK ? (size_t)(end - off) : CHUNK;
		size_t got = adac_read_upto(rt->t, o->addr + off, buf, len);
		if (got < ps)
			break;
		for (size_t i = 0; i + ps <= got; i += ps) {
			uint64_t v = ps == 8 ? adac_get_u64(buf, i) : adac_get_u32(buf, i);
			if ((want ? v == want : v != 0) && ref_slot(rt, o->mt, (uint32_t)(off + i), where, sizeof where) &&
			    fn(ctx, o, off + i, v, true))
				return 1;
		}
		off += got - got % ps;
	}
	return 0;
}

/* Every reference slot of o (fn stops with non-zero: returns 1). want as scan_slots. */
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

struct walk {
	struct adac_runtime *rt;
	uint64_t target;
	adac_heap_ref_cb cb;
	void *ctx;
	struct gcdesc_cache gcdescs;
};

static int ref_hit(void *ctx, const struct adac_gc_object *o, uint64_t off, uint64_t v, bool checked)
{
	struct walk *w = ctx;
	if (v != w->target)
		return 0;
	struct adac_heap_ref r = {.obj = o->addr, .mt = o->mt, .offset = (uint32_t)off};
	if (!ref_slot(w->rt, o->mt, (uint32_t)off, r.where, sizeof r.where)) {
		if (checked)
			return 0;
		snprintf(r.where, sizeof r.where, "at +0x%llx", (unsigned long long)off);
	}
	return w->cb(w->ctx, &r) != 0;
}

static int visit(void *ctx, const struct adac_gc_object *o)
{
	struct walk *w = ctx;
	return each_slot(w->rt, &w->gcdescs, o, w->target, ref_hit, w);
}

int adac_heap_refs(struct adac_runtime *rt, uint64_t target, adac_heap_ref_cb cb, void *ctx,
                   struct adac_gc_walk_report *rep, struct adac_error *err)
{
	struct walk w = {.rt = rt, .target = target, .cb = cb, .ctx = ctx};
	int rc = adac_gc_walk(rt, visit, &w, rep, err);
	gcdesc_cache_free(&w.gcdescs);
	return rc;
}

/* ---- the reference graph ------------------------------------------------------------------------- */

struct build {
	struct adac_runtime *rt;
	struct adac_heap_graph *g;
	size_t addr_cap, first_cap, to_cap, off_cap; /* (each array its own: adac_grow rounds per element size) */
	struct gcdesc_cache gcdescs;
	struct adac_error err;
	bool failed;
};

static int add_edge(void *ctx, const struct adac_gc_object *o, uint64_t off, uint64_t v, bool checked)
{
	(void)o;
	(void)checked;
	struct build *b = ctx;
	struct adac_heap_graph *g = b->g;
	if (!v)
		return 0;
	if (g->edge_count >= ADAC_MAX_GRAPH_EDGES) {
		adac_fail(&b->err, ADAC_E_LIMIT, o->addr, "more than ADAC_MAX_GRAPH_EDGES (%u) references on the heap",
		          ADAC_MAX_GRAPH_EDGES);
		return b->failed = true, 1;
	}
	if (adac_grow((void **)&g->edge_to, &b->to_cap, g->edge_count + 1, sizeof *g->edge_to, 4096) ||
	    adac_grow((void **)&g->edge_off, &b->off_cap, g->edge_count + 1, sizeof *g->edge_off, 4096)) {
		adac_fail(&b->err, ADAC_E_NOMEM, 0, "out of memory for the heap's references");
		return b->failed = true, 1;
	}
	g->edge_to[g->edge_count] = v;
	g->edge_off[g->edge_count++] = (uint32_t)off;
	return 0;
}

static int add_object(void *ctx, const struct adac_gc_object *o)
{
	struct build *b = ctx;
	struct adac_heap_graph *g = b->g;
	if (g->count >= ADAC_MAX_GRAPH_OBJECTS) {
		adac_fail(&b->err, ADAC_E_LIMIT, o->addr, "more than ADAC_MAX_GRAPH_OBJECTS (%u) objects on the heap",
		          ADAC_MAX_GRAPH_OBJECTS);
		return b->failed = true, 1;
	}
	if (g->count && o->addr <= g->addr[g->count - 1]) {
		adac_fail(&b->err, ADAC_E_CORRUPT, o->addr, "the heap walk went back to 0x%llx",
		          (unsigned long long)o->addr);
		return b->failed = true, 1;
	}
	if (adac_grow((void **)&g->addr, &b->addr_cap, g->count + 2, sizeof *g->addr, 4096) ||
	    adac_grow((void **)&g->first, &b->first_cap, g->count + 2, sizeof *g->first, 4096)) {
		adac_fail(&b->err, ADAC_E_NOMEM, 0, "out of memory for the heap's objects");
		return b->failed = true, 1;
	}
	g->addr[g->count] = o->addr;
	g->first[g->count] = g->edge_count;
	g->count++;
	each_slot(b->rt, &b->gcdescs, o, 0, add_edge, b);
	g->first[g->count] = g->edge_count;
	return b->failed;
}

int adac_heap_graph_build(struct adac_runtime *rt, struct adac_heap_graph *g, struct adac_gc_walk_report *rep,
                          struct adac_error *err)
{
	memset(g, 0, sizeof *g);
	struct build b = {.rt = rt, .g = g};
	int rc = adac_gc_walk(rt, add_object, &b, rep, err);
	gcdesc_cache_free(&b.gcdescs);
	if (rc || b.failed) {
		if (b.failed)
			adac_error_copy(err, &b.err);
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
	free(g->edge_off);
	adac_addr_index_free(&g->index);
	memset(g, 0, sizeof *g);
}
