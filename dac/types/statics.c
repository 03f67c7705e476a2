/* statics.c - which static field a slot of the runtime's GC statics is. See statics.h. */
#include "types/statics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "runtime/descriptor.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/corelib.h"
#include "types/fielddesc.h"
#include "types/methoddesc.h"

#define MTF2_DYNAMIC_STATICS 0x2u  /* MethodTable WFLAGS2 enum_flag_DynamicStatics */

struct base {
	uint64_t gc_statics;  /* DynamicStaticsInfo.GCStatics, masked */
	uint64_t mt;
};

struct statics_state {
	struct base *bases;   /* sorted by gc_statics */
	size_t count, cap;
	uint64_t types;       /* map entries read, all modules */
	uint32_t info_size, off_gc;
	uint64_t mask;
};

static void free_state(void *p)
{
	struct statics_state *s = p;
	free(s->bases);
	free(s);
}

static int add_type(struct adac_runtime *rt, struct statics_state *s, uint64_t mt, struct adac_error *err)
{
	/* A type that cannot be read is left out (its statics stay unnamed). */
	struct adac_mt_info mi;
	uint64_t gc;
	if (adac_mt_read(rt, mt, &mi, NULL) || !(mi.flags2 & MTF2_DYNAMIC_STATICS) || !mi.aux_data ||
	    adac_read_ptr(rt->t, mi.aux_data - s->info_size + s->off_gc, &gc, NULL))
		return 0;
	gc &= s->mask;
	if (!gc)
		return 0;
	if (s->count == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct base *b = realloc(s->bases, cap * sizeof *b);
		if (!b)
			return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		s->bases = b;
		s->cap = cap;
	}
	s->bases[s->count++] = (struct base){gc, mt};
	return 0;
}

struct module_walk {
	struct adac_runtime *rt;
	struct statics_state *s;
	struct adac_error *err;
};

static int add_segment(const struct adac_lookup_segment *seg, void *arg)
{
	struct module_walk *w = arg;
	if (seg->count > ADAC_MAX_LOADED_TYPES - w->s->types)
		return adac_fail(w->err, ADAC_E_LIMIT, seg->data, "more than ADAC_MAX_LOADED_TYPES (%u) entries in the "
		                 "modules' TypeDefToMethodTableMaps", ADAC_MAX_LOADED_TYPES);
	w->s->types += seg->count;
	unsigned ps = adac_target_ptr_size(w->rt->t);
	for (uint32_t i = 0; i < seg->count; i++) {
		uint64_t mt;
		if (adac_read_ptr(w->rt->t, seg->data + (uint64_t)i * ps, &mt, w->err))
			return -1;
		mt &= ~seg->mask;
		if (mt && add_type(w->rt, w->s, mt, w->err))
			return -1;
	}
	return 0;
}

/* Every loaded type of a module: the entries of its TypeDefToMethodTableMap. */
static int add_module(struct adac_runtime *rt, struct statics_state *s, uint64_t module, struct adac_error *err)
{
	struct module_walk w = {rt, s, err};
	return adac_module_lookup_segments(rt, module, "TypeDefToMethodTableMap", add_segment, &w, err);
}

/* The AppDomain's assemblies: an ArrayList (its first block inline) of Assembly pointers. */
static int add_assemblies(struct adac_runtime *rt, struct statics_state *s, struct adac_error *err)
{
	uint32_t off_list, off_count, off_first, off_next, off_size, off_start, off_module;
	uint64_t where, domain;
	if (adac_desc_field(rt->desc, "AppDomain", "AssemblyList", &off_list, err) ||
	    adac_desc_field(rt->desc, "ArrayListBase", "Count", &off_count, err) ||
	    adac_desc_field(rt->desc, "ArrayListBase", "FirstBlock", &off_first, err) ||
	    adac_desc_field(rt->desc, "ArrayListBlock", "Next", &off_next, err) ||
	    adac_desc_field(rt->desc, "ArrayListBlock", "Size", &off_size, err) ||
	    adac_desc_field(rt->desc, "ArrayListBlock", "ArrayStart", &off_start, err) ||
	    adac_desc_field(rt->desc, "Assembly", "Module", &off_module, err) ||
	    adac_desc_global(rt->desc, "AppDomain", &where, err) || adac_read_ptr(rt->t, where, &domain, err))
		return -1;
	unsigned ps = adac_target_ptr_size(rt->t);
	uint32_t count;
	uint64_t list = domain + off_list, block = list + off_first, seen = 0;
	if (adac_read_u32(rt->t, list + off_count, &count, err))
		return -1;
	if (count > ADAC_MAX_MODULES)
		return adac_fail(err, ADAC_E_LIMIT, list, "more than ADAC_MAX_MODULES (%u) assemblies", ADAC_MAX_MODULES);
	for (unsigned n = 0; block && seen < count; n++) {
		uint32_t size;
		uint64_t next;
		if (n >= ADAC_MAX_MODULES)
			return adac_fail(err, ADAC_E_LIMIT, block, "the AppDomain's assembly list has more than "
			                 "ADAC_MAX_MODULES (%u) blocks", ADAC_MAX_MODULES);
		if (adac_read_u32(rt->t, block + off_size, &size, err) || adac_read_ptr(rt->t, block + off_next, &next, err))
			return -1;
		for (uint32_t i = 0; i < size && seen < count; i++, seen++) {
			uint64_t assembly, module;
			if (adac_read_ptr(rt->t, block + off_start + (uint64_t)i * ps, &assembly, err))
				return -1;
			if (!assembly)
				continue;
			if (adac_read_ptr(rt->t, assembly + off_module, &module, err))
				return -1;
			if (module && add_module(rt, s, module, err))
				return -1;
		}
		block = next;
	}
	return 0;
}

static int by_base(const void *a, const void *b)
{
	const struct base *x = a, *y = b;
	return x->gc_statics < y->gc_statics ? -1 : x->gc_statics > y->gc_statics;
}

static int init_state(struct adac_runtime *rt, struct statics_state **out, struct adac_error *err)
{
	struct statics_state *s = adac_runtime_slot(rt, ADAC_SLOT_STATICS);
	if (s) {
		*out = s;
		return 0;
	}
	s = calloc(1, sizeof *s);
	if (!s)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	if (adac_desc_type_size(rt->desc, "DynamicStaticsInfo", &s->info_size, err) ||
	    adac_desc_field(rt->desc, "DynamicStaticsInfo", "GCStatics", &s->off_gc, err) ||
	    adac_desc_global(rt->desc, "StaticsPointerMask", &s->mask, err) || add_assemblies(rt, s, err)) {
		free_state(s);
		adac_error_wrap(err, "GC statics: ");
		return -1;
	}
	qsort(s->bases, s->count, sizeof *s->bases, by_base);
	adac_runtime_set_slot(rt, ADAC_SLOT_STATICS, s, free_state);
	*out = s;
	return 0;
}

struct find {
	uint64_t offset;
	char *name;
	size_t size;
	bool found;
};

static int on_field(void *ctx, const struct adac_field *f)
{
	struct find *w = ctx;
	if (!adac_field_is_gc_static(f) || f->offset != w->offset)
		return 0;
	snprintf(w->name, w->size, "%s", f->name);
	w->found = true;
	return 1;
}

int adac_gc_static_at(struct adac_runtime *rt, uint64_t slot, uint64_t *mt, char *name, size_t size,
                      struct adac_error *err)
{
	struct statics_state *s = NULL;
	if (init_state(rt, &s, err))
		return -1;
	/* The last base at or below slot, then a few before it (a type's statics end where the next
	 * type's begin; the few cover bases a type without reference statics may share). */
	size_t lo = 0, hi = s->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->bases[mid].gc_statics <= slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, n = 0; i-- > 0 && n < 16 && slot - s->bases[i].gc_statics < (1u << 16); n++) {
		struct find w = {slot - s->bases[i].gc_statics, name, size, false};
		struct adac_error e = {0};
		if (adac_mt_fields(rt, s->bases[i].mt, on_field, &w, &e) < 0)
			continue;
		if (w.found) {
			*mt = s->bases[i].mt;
			return 0;
		}
	}
	return adac_fail(err, ADAC_E_NOT_FOUND, slot, "no static field of a loaded type lives at 0x%llx",
	                 (unsigned long long)slot);
}

int adac_gc_static_value(struct adac_runtime *rt, uint64_t mt, const char *name, uint64_t *value,
                         struct adac_error *err)
{
	struct statics_state *s = NULL;
	struct adac_field f;
	if (init_state(rt, &s, err) || adac_mt_find_field(rt, mt, name, &f, err))
		return -1;
	if (!adac_field_is_gc_static(&f) || f.enclosing_mt != mt)
		return adac_fail(err, ADAC_E_NOT_FOUND, mt, "%s of MethodTable 0x%llx is not a GC static of that type", name,
		                 (unsigned long long)mt);
	/* The index is sorted by base, not by type: one pass. */
	for (size_t i = 0; i < s->count; i++)
		if (s->bases[i].mt == mt)
			return adac_read_ptr(rt->t, s->bases[i].gc_statics + f.offset, value, err);
	return adac_fail(err, ADAC_E_NOT_FOUND, mt, "MethodTable 0x%llx has no GC statics yet (its static %s is unset)",
	                 (unsigned long long)mt, name);
}
