/* heap_refs.c - see heap_refs.h. The slots come from the GCDesc when the type has the positive form;
 * otherwise (arrays of structs) every pointer-aligned slot is checked against the type's fields. */
#include "types/heap_refs.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/cursor.h"
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

struct walk {
	struct adac_runtime *rt;
	uint64_t target;
	adac_heap_ref_cb cb;
	void *ctx;
	bool stopped;
};

static int hit(struct walk *w, const struct adac_gc_object *o, uint64_t off)
{
	struct adac_heap_ref r = {.obj = o->addr, .mt = o->mt, .offset = (uint32_t)off};
	if (!ref_slot(w->rt, o->mt, (uint32_t)off, r.where, sizeof r.where))
		return 0;
	w->stopped = w->cb(w->ctx, &r) != 0;
	return w->stopped;
}

/* The GCDesc before a MethodTable (what the GC itself follows): NumSeries at mt - ptr, then series
 * downwards, the highest first, each {SeriesSize, StartOffset}; a series covers
 * (SeriesSize + object size) / ptr slots from StartOffset. Only the positive form (objects and arrays
 * of references) is read: 1 when the slots were checked, 0 when the caller must scan. */
static int visit_series(struct walk *w, const struct adac_gc_object *o, int *stop)
{
	unsigned ps = adac_target_ptr_size(w->rt->t);
	struct adac_mt_info mi;
	int64_t series;
	uint64_t raw;
	*stop = 0;
	if (adac_mt_read(w->rt, o->mt, &mi, NULL) || !mi.contains_gc_pointers ||
	    adac_read_ptr(w->rt->t, o->mt - ps, &raw, NULL))
		return 0;
	series = ps == 8 ? (int64_t)raw : (int32_t)raw;
	if (series <= 0 || (uint64_t)series > ADAC_MAX_GC_SERIES)
		return 0;
	for (int64_t i = 0; i < series; i++) {
		uint64_t at = o->mt - 3 * ps - (uint64_t)i * 2 * ps, size, start;
		if (adac_read_ptr(w->rt->t, at, &size, NULL) || adac_read_ptr(w->rt->t, at + ps, &start, NULL))
			return 0;
		uint64_t slots = (size + o->size) / ps;
		for (uint64_t k = 0; k < slots && start + (k + 1) * ps <= o->size; k++) {
			uint64_t off = start + k * ps, v;
			if (off + ps <= o->data_len)
				v = ps == 8 ? adac_get_u64(o->data, off) : adac_get_u32(o->data, off);
			else if (adac_read_ptr(w->rt->t, o->addr + off, &v, NULL))
				return 1;
			if (v == w->target) {
				struct adac_heap_ref r = {.obj = o->addr, .mt = o->mt, .offset = (uint32_t)off};
				if (!ref_slot(w->rt, o->mt, (uint32_t)off, r.where, sizeof r.where))
					snprintf(r.where, sizeof r.where, "at +0x%llx", (unsigned long long)off);
				if ((*stop = w->cb(w->ctx, &r) != 0))
					return 1;
			}
		}
	}
	return 1;
}

static int visit(void *ctx, const struct adac_gc_object *o)
{
	struct walk *w = ctx;
	unsigned ps = adac_target_ptr_size(w->rt->t);
	int stop;
	if (visit_series(w, o, &stop))
		return stop;
	uint64_t end = o->size;
	/* What the walk read, then the rest of a large object a chunk at a time. */
	uint64_t off = ps;
	for (; off + ps <= end && off + ps <= o->data_len; off += ps) {
		uint64_t v = ps == 8 ? adac_get_u64(o->data, off) : adac_get_u32(o->data, off);
		if (v == w->target && hit(w, o, off))
			return 1;
	}
	uint8_t buf[CHUNK];
	while (off + ps <= end) {
		size_t want = end - off < CHUNK ? (size_t)(end - off) : CHUNK;
		size_t got = adac_read_upto(w->rt->t, o->addr + off, buf, want);
		if (got < ps)
			break;
		for (size_t i = 0; i + ps <= got; i += ps) {
			uint64_t v = ps == 8 ? adac_get_u64(buf, i) : adac_get_u32(buf, i);
			if (v == w->target && hit(w, o, off + i))
				return 1;
		}
		off += got - got % ps;
	}
	return 0;
}

int adac_heap_refs(struct adac_runtime *rt, uint64_t target, adac_heap_ref_cb cb, void *ctx,
                   struct adac_gc_walk_report *rep, struct adac_error *err)
{
	struct walk w = {rt, target, cb, ctx, false};
	return adac_gc_walk(rt, visit, &w, rep, err);
}
