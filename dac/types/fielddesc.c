/* fielddesc.c - enumerates a type's FieldDescs (EEClass.FieldDescList) and names them. */
#include "types/fielddesc.h"

#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "metadata/ecma_metadata.h"
#include "runtime/descriptor.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "runtime/threads.h"
#include "target/target.h"
#include "types/methoddesc.h"


/* FieldDesc bit fields (RuntimeTypeSystem.md, FieldDesc). */
#define FD1_TOKEN_MASK 0xffffffu
#define FD1_IS_STATIC 0x1000000u
#define FD1_IS_THREAD_STATIC 0x2000000u
#define FD1_IS_RVA 0x4000000u
#define FD2_OFFSET_MASK 0x07ffffffu
#define FD2_TYPE_SHIFT 27

#define FD_FIELDS(X)                                        \
	X(FD_SIZE, "FieldDesc", NULL, 0)                        \
	X(FD_MT, "FieldDesc", "MTOfEnclosingClass", 8)         \
	X(FD_DWORD1, "FieldDesc", "DWord1", 4)                 \
	X(FD_DWORD2, "FieldDesc", "DWord2", 4)                 \
	X(EEC_FIELDS, "EEClass", "FieldDescList", 8)           \
	X(EEC_NUM_INSTANCE, "EEClass", "NumInstanceFields", 2) \
	X(EEC_NUM_STATIC, "EEClass", "NumStaticFields", 2)

enum {
#define X(id, type, field, width) id,
	FD_FIELDS(X)
#undef X
	FD_COUNT,
	FD_EEC_FIRST = EEC_FIELDS  /* the EEClass entries follow the FieldDesc ones */
};

static const struct adac_field_spec fd_specs[FD_COUNT] = {
#define X(id, type, field, width) {type, field, width, true},
	FD_FIELDS(X)
#undef X
};

/* FieldDesc as field.h lays it out: {MTOfEnclosingClass, DWord1, DWord2}. Used only when the
 * descriptor does not describe FieldDesc (.NET 10); every FieldDesc read that way must then name
 * its enclosing type correctly, which catches a layout that differs. */
static const uint32_t fallback_fd[FD_EEC_FIRST] = {16, 0, 8, 12};

static int resolve_layout(struct adac_runtime *rt, uint32_t *off, bool *checked, struct adac_error *err)
{
	uint8_t has[FD_COUNT];
	*checked = false;
	if (adac_desc_has_type(rt->desc, "FieldDesc"))
		return adac_desc_resolve(rt->desc, fd_specs, FD_COUNT, off, has, err);
	if (adac_desc_resolve(rt->desc, fd_specs + FD_EEC_FIRST, FD_COUNT - FD_EEC_FIRST, off + FD_EEC_FIRST,
	                      has + FD_EEC_FIRST, err))
		return -1;
	memcpy(off, fallback_fd, sizeof fallback_fd);
	*checked = true;
	return 0;
}

/* A field looked up by name in a type (and its parents): found, or found in none. */
struct found_field {
	uint64_t mt;
	char *name;
	bool found;
	struct adac_field f;
};

/* The runtime's state: the layout, resolved once, and every lookup by name so far (awaited
 * objects, tasks and boxes ask the same few types for the same few fields once per chain). */
struct fd_state {
	uint32_t off[FD_COUNT];
	bool checked;
	struct found_field *found;
	size_t cap, used;
};

static void state_free(void *p)
{
	struct fd_state *s = p;
	for (size_t i = 0; i < s->cap; i++)
		free(s->found[i].name);
	free(s->found);
	free(s);
}

static struct fd_state *state(struct adac_runtime *rt, struct adac_error *err)
{
	struct fd_state *s = adac_runtime_slot(rt, ADAC_SLOT_FIELDDESC);
	if (s)
		return s;
	if (!(s = calloc(1, sizeof *s))) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		return NULL;
	}
	if (resolve_layout(rt, s->off, &s->checked, err)) {
		free(s);
		return NULL;
	}
	adac_runtime_set_slot(rt, ADAC_SLOT_FIELDDESC, s, state_free);
	return s;
}

static int layout(struct adac_runtime *rt, uint32_t *off, bool *checked, struct adac_error *err)
{
	struct fd_state *s = state(rt, err);
	if (!s)
		return -1;
	memcpy(off, s->off, sizeof s->off);
	*checked = s->checked;
	return 0;
}

static size_t found_hash(uint64_t mt, const char *name)
{
	uint64_t h = mt * 0x9E3779B97F4A7C15ull;
	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 0x100000001B3ull;
	return (size_t)(h ^ h >> 29);
}

/* The slot of (mt, name): its entry, or the empty slot where it goes; NULL if the table cannot grow. */
static struct found_field *found_slot(struct fd_state *s, uint64_t mt, const char *name)
{
	if ((s->used + 1) * 2 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct found_field *t = calloc(cap, sizeof *t);
		if (!t)
			return NULL;
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->found[i].name)
				continue;
			size_t j = found_hash(s->found[i].mt, s->found[i].name) & (cap - 1);
			while (t[j].name)
				j = (j + 1) & (cap - 1);
			t[j] = s->found[i];
		}
		free(s->found);
		s->found = t;
		s->cap = cap;
	}
	size_t j = found_hash(mt, name) & (s->cap - 1);
	while (s->found[j].name && !(s->found[j].mt == mt && strcmp(s->found[j].name, name) == 0))
		j = (j + 1) & (s->cap - 1);
	return &s->found[j];
}

/* Instance fields of the type itself: the EEClass counts include the parent's. */
static int own_counts(struct adac_runtime *rt, const uint32_t *off, const struct adac_mt_info *mi, uint64_t *list,
                      uint32_t *n_instance, uint32_t *n_static, struct adac_error *err)
{
	uint16_t ni = 0, ns = 0, parent_ni = 0;
	if (adac_read_ptr(rt->t, mi->eeclass + off[EEC_FIELDS], list, err) ||
	    adac_read_u16(rt->t, mi->eeclass + off[EEC_NUM_INSTANCE], &ni, err) ||
	    adac_read_u16(rt->t, mi->eeclass + off[EEC_NUM_STATIC], &ns, err))
		return -1;
	if (mi->parent) {
		struct adac_mt_info pi;
		if (adac_mt_read(rt, mi->parent, &pi, err) ||
		    adac_read_u16(rt->t, pi.eeclass + off[EEC_NUM_INSTANCE], &parent_ni, err))
			return -1;
	}
	if (parent_ni > ni)
		return adac_fail(err, ADAC_E_CORRUPT, mi->eeclass, "EEClass 0x%llx has %u instance fields, fewer than its parent's %u",
		                 (unsigned long long)mi->eeclass, ni, parent_ni);
	*n_instance = (uint32_t)(ni - parent_ni);
	*n_static = ns;
	return 0;
}

int adac_mt_fields(struct adac_runtime *rt, uint64_t mt, adac_field_cb cb, void *ctx, struct adac_error *err)
{
	uint32_t off[FD_COUNT];
	bool check_enclosing;
	if (layout(rt, off, &check_enclosing, err))
		return -1;
	struct adac_mt_info mi;
	if (adac_mt_read(rt, mt, &mi, err))
		return -1;
	uint64_t list = 0;
	uint32_t ni = 0, ns = 0;
	if (own_counts(rt, off, &mi, &list, &ni, &ns, err))
		return -1;
	uint32_t total = ni + ns;
	if (total == 0)
		return 0;
	if (!list)
		return adac_fail(err, ADAC_E_CORRUPT, mi.eeclass, "EEClass 0x%llx lists %u fields at 0x0",
		                 (unsigned long long)mi.eeclass, total);
	if (total > ADAC_MAX_TYPE_FIELDS)
		return adac_fail(err, ADAC_E_LIMIT, mi.eeclass, "EEClass 0x%llx lists %u fields (limit %u)",
		                 (unsigned long long)mi.eeclass, total, ADAC_MAX_TYPE_FIELDS);
	struct adac_error md_err = {0};
	const struct adac_ecma *md = adac_ecma_for_module(rt, mi.module, &md_err);
	uint32_t fd_size = off[FD_SIZE];
	for (uint32_t i = 0; i < total; i++) {
		uint64_t fd = list + (uint64_t)i * fd_size;
		uint8_t buf[64];
		if (fd_size > sizeof buf)
			return adac_fail(err, ADAC_E_LAYOUT, fd, "FieldDesc is %u bytes", fd_size);
		if (adac_read(rt->t, fd, buf, fd_size, err))
			return -1;
		uint32_t d1, d2;
		uint64_t enclosing;
		memcpy(&d1, buf + off[FD_DWORD1], 4);
		memcpy(&d2, buf + off[FD_DWORD2], 4);
		memcpy(&enclosing, buf + off[FD_MT], 8);
		if (check_enclosing && enclosing != mi.canonical_mt && enclosing != mt)
			return adac_fail(err, ADAC_E_LAYOUT, fd,
			                 "FieldDesc 0x%llx of MethodTable 0x%llx names 0x%llx as its type: the runtime describes no "
			                 "FieldDesc and its layout is not the expected one",
			                 (unsigned long long)fd, (unsigned long long)mt, (unsigned long long)enclosing);
		struct adac_field f = {
			.field_desc = fd,
			.enclosing_mt = enclosing,
			.token = 0x04000000u | (d1 & FD1_TOKEN_MASK),
			.offset = d2 & FD2_OFFSET_MASK,
			.elem_type = (uint8_t)(d2 >> FD2_TYPE_SHIFT),
			.is_static = (d1 & FD1_IS_STATIC) != 0,
			.is_thread_static = (d1 & FD1_IS_THREAD_STATIC) != 0,
			.is_rva = (d1 & FD1_IS_RVA) != 0,
			.name = "",
		};
		struct adac_ecma_field row;
		if (md && adac_ecma_field(md, d1 & FD1_TOKEN_MASK, &row, NULL) == 0)
			f.name = row.name;
		if (cb(ctx, &f))
			break;
	}
	return 0;
}

struct find_ctx {
	const char *name;
	struct adac_field *out;
	bool found;
};

static int match_field(void *ctx, const struct adac_field *f)
{
	struct find_ctx *c = ctx;
	if (strcmp(f->name, c->name) != 0)
		return 0;
	*c->out = *f;
	c->found = true;
	return 1;
}

static int find_field(struct adac_runtime *rt, uint64_t mt, const char *name, struct adac_field *out,
                      struct adac_error *err);

int adac_mt_find_field(struct adac_runtime *rt, uint64_t mt, const char *name, struct adac_field *out,
                       struct adac_error *err)
{
	struct fd_state *s = state(rt, err);
	if (!s)
		return -1;
	struct found_field *ff = found_slot(s, mt, name);
	if (ff && ff->name) {
		if (!ff->found)
			return adac_fail(err, ADAC_E_NOT_FOUND, mt, "type with MethodTable 0x%llx has no field %s",
			                 (unsigned long long)mt, name);
		*out = ff->f;
		return 0;
	}
	struct adac_error e = {0};
	int rc = find_field(rt, mt, name, out, &e);
	/* Remember what the type says (the field, or that it has none), not a read that failed. */
	if (ff && (rc == 0 || e.code == ADAC_E_NOT_FOUND) && (ff->name = strdup(name))) {
		ff->mt = mt;
		ff->found = rc == 0;
		if (rc == 0)
			ff->f = *out;
		s->used++;
	}
	if (rc)
		adac_error_copy(err, &e);
	return rc;
}

static int find_field(struct adac_runtime *rt, uint64_t mt, const char *name, struct adac_field *out,
                      struct adac_error *err)
{
	uint64_t cur = mt;
	for (unsigned walked = 0; cur; walked++) {
		struct find_ctx c = {name, out, false};
		if (adac_mt_fields(rt, cur, match_field, &c, err))
			return -1;
		if (c.found)
			return 0;
		struct adac_mt_info mi;
		if (adac_mt_read(rt, cur, &mi, err))
			return -1;
		cur = mi.parent;
		if (cur && walked == ADAC_MAX_PARENT_DEPTH)
			return adac_fail(err, ADAC_E_LIMIT, mt,
			                 "type with MethodTable 0x%llx: no field %s in it or its first %u parent types, and it has more "
			                 "(limit %u)",
			                 (unsigned long long)mt, name, ADAC_MAX_PARENT_DEPTH, ADAC_MAX_PARENT_DEPTH);
	}
	return adac_fail(err, ADAC_E_NOT_FOUND, mt, "type with MethodTable 0x%llx has no field %s", (unsigned long long)mt,
	                 name);
}

int adac_mt_field_offset(struct adac_runtime *rt, uint64_t mt, const char *name, uint32_t *offset,
                         struct adac_error *err)
{
	struct adac_field f;
	if (adac_mt_find_field(rt, mt, name, &f, err))
		return -1;
	if (f.is_static)
		return adac_fail(err, ADAC_E_LAYOUT, mt, "field %s of MethodTable 0x%llx is static", name, (unsigned long long)mt);
	*offset = f.offset + adac_target_ptr_size(rt->t);
	return 0;
}

static int object_field_offset(struct adac_runtime *rt, uint64_t obj, const char *name, uint32_t *off,
                               struct adac_error *err)
{
	uint64_t mt;
	return adac_object_mt(rt, obj, &mt, err) || adac_mt_field_offset(rt, mt, name, off, err) ? -1 : 0;
}

int adac_object_field_ptr(struct adac_runtime *rt, uint64_t obj, const char *name, uint64_t *v, struct adac_error *err)
{
	uint32_t off;
	*v = 0;
	return object_field_offset(rt, obj, name, &off, err) || adac_read_ptr(rt->t, obj + off, v, err) ? -1 : 0;
}

int adac_object_field_u32(struct adac_runtime *rt, uint64_t obj, const char *name, uint32_t *v, struct adac_error *err)
{
	uint32_t off;
	*v = 0;
	return object_field_offset(rt, obj, name, &off, err) || adac_read_u32(rt->t, obj + off, v, err) ? -1 : 0;
}

/* Element types whose thread statics live in the GC statics block. */
static bool is_gc_static(uint8_t elem)
{
	switch (elem) {
	case 0x0e: /* STRING */
	case 0x11: /* VALUETYPE (boxed) */
	case 0x12: /* CLASS */
	case 0x14: /* ARRAY */
	case 0x15: /* GENERICINST */
	case 0x1c: /* OBJECT */
	case 0x1d: /* SZARRAY */
		return true;
	default:
		return false;
	}
}

bool adac_field_is_gc_static(const struct adac_field *f)
{
	return f->is_static && !f->is_thread_static && !f->is_rva && is_gc_static(f->elem_type);
}

int adac_field_thread_static_addr(struct adac_runtime *rt, const struct adac_managed_thread *th,
                                  const struct adac_field *f, uint64_t *addr, struct adac_error *err)
{
	*addr = 0;
	if (!f->is_thread_static)
		return adac_fail(err, ADAC_E_BAD_ARG, f->field_desc, "field %s is not thread-static", f->name);
	return adac_thread_static_addr(rt, th, f->enclosing_mt, is_gc_static(f->elem_type), f->offset, addr, err);
}
