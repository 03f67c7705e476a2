/* sym_types.c - DWARF types of managed types (see sym_types.h for how each kind is described). */
#include "view/sym_types.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/addr_map.h"
#include "base/limits.h"
#include "metadata/ecma_metadata.h"
#include "metadata/signature.h"
#include "runtime/runtime.h"
#include "symfile/symfile.h"
#include "target/target.h"
#include "types/fielddesc.h"
#include "types/methoddesc.h"
#include "types/typename.h"
#include "types/vtype.h"

/* Per MethodTable: what has been made for it. */
struct mt_types {
	uint64_t mt;            /* key */
	uint32_t handle;        /* reference types: the typedef (pointer to the struct) */
	uint32_t object;        /* the struct: of the object (reference types) or of the value; or the enum */
	uint32_t queued_depth;  /* 1 + the smallest depth it was queued at, 0 when not queued */
	bool defined;
};

/* The MethodTables waiting to be laid out at one depth. */
struct pending {
	uint64_t *mts;
	size_t n, cap;
};

/* Types made without a MethodTable (byrefs, unknown types, arrays of unloaded types), by key. */
struct named {
	char *key;
	uint32_t id;
};

struct adac_sym_typer {
	struct adac_runtime *rt;
	struct adac_symfile *sf;
	unsigned max_depth;
	struct adac_addr_map mts;
	uint32_t base[0x20];      /* per CorElementType */
	struct pending queue[ADAC_MAX_SYM_TYPE_DEPTH + 1];
	struct named *names;
	size_t nnames, names_cap;
	bool in_layout;           /* laying out a struct of depth `depth` (its class fields go one deeper) */
	unsigned depth;
};

static int nomem(struct adac_error *err) { return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory building types"); }

static bool fatal(const struct adac_error *e) { return e->code == ADAC_E_NOMEM || e->code == ADAC_E_LIMIT; }

struct adac_sym_typer *adac_sym_typer_new(struct adac_runtime *rt, struct adac_symfile *sf, unsigned depth,
                                          struct adac_error *err)
{
	struct adac_sym_typer *ty = calloc(1, sizeof *ty);
	if (!ty) {
		nomem(err);
		return NULL;
	}
	ty->rt = rt;
	ty->sf = sf;
	ty->max_depth = depth < ADAC_MAX_SYM_TYPE_DEPTH ? depth : ADAC_MAX_SYM_TYPE_DEPTH;
	return ty;
}

void adac_sym_typer_free(struct adac_sym_typer *ty)
{
	if (!ty)
		return;
	adac_addr_map_free(&ty->mts);
	for (size_t d = 0; d <= ADAC_MAX_SYM_TYPE_DEPTH; d++)
		free(ty->queue[d].mts);
	for (size_t i = 0; i < ty->nnames; i++)
		free(ty->names[i].key);
	free(ty->names);
	free(ty);
}

static struct mt_types *mt_record(struct adac_sym_typer *ty, uint64_t mt, struct adac_error *err)
{
	struct mt_types *r = adac_addr_map_get(&ty->mts, mt, sizeof *r, NULL);
	if (!r)
		nomem(err);
	return r;
}

/* ---- types known by a key ---- */

/* The id slot of `kind name` (0 in it: not made yet). */
static uint32_t *named_slot(struct adac_sym_typer *ty, const char *kind, const char *name, struct adac_error *err)
{
	char *key = NULL;
	if (asprintf(&key, "%s %s", kind, name) < 0) {
		nomem(err);
		return NULL;
	}
	for (size_t i = 0; i < ty->nnames; i++)
		if (strcmp(ty->names[i].key, key) == 0) {
			free(key);
			return &ty->names[i].id;
		}
	if (ty->nnames == ty->names_cap) {
		size_t cap = ty->names_cap ? ty->names_cap * 2 : 32;
		struct named *n = realloc(ty->names, cap * sizeof *n);
		if (!n) {
			free(key);
			nomem(err);
			return NULL;
		}
		ty->names = n;
		ty->names_cap = cap;
	}
	ty->names[ty->nnames] = (struct named){key, 0};
	return &ty->names[ty->nnames++].id;
}

/* A declared struct `name` (its layout unknown). */
static int declared(struct adac_sym_typer *ty, const char *name, uint32_t *id, struct adac_error *err)
{
	uint32_t *slot = named_slot(ty, "struct", name, err);
	if (!slot)
		return -1;
	if (!*slot && !(*slot = adac_symfile_struct_type(ty->sf, name, 0, true, err)))
		return -1;
	*id = *slot;
	return 0;
}

/* The struct of an object of type `name` (a reference type): "<name> object", apart from the
 * typedef `name` for references to it, so that a debugger looking a type up by name finds the
 * typedef (what a variable holds). */
static char *object_name(const char *name, struct adac_error *err)
{
	char *s = NULL;
	if (asprintf(&s, "%s object", name) < 0) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory building types");
		return NULL;
	}
	return s;
}

/* A declared object struct of type `name`. */
static int declared_object(struct adac_sym_typer *ty, const char *name, uint32_t *id, struct adac_error *err)
{
	char *obj = object_name(name, err);
	int rc = obj ? declared(ty, obj, id, err) : -1;
	free(obj);
	return rc;
}

/* A typedef `name` for a pointer to target (0: void). */
static int pointer_typedef(struct adac_sym_typer *ty, const char *name, uint32_t target, uint32_t *id,
                           struct adac_error *err)
{
	uint32_t ptr = adac_symfile_pointer_type(ty->sf, target, err);
	if (!ptr || !(*id = adac_symfile_typedef(ty->sf, name, ptr, err)))
		return -1;
	return 0;
}

/* ---- primitives ---- */

/* A primitive: named by its C# keyword; where C names the type otherwise, a typedef of the C type
 * (so that debuggers, which know C's types, print its values rightly: a char as UTF-16). */
static int base_type(struct adac_sym_typer *ty, uint8_t elem, uint32_t *id, struct adac_error *err)
{
	static const struct {
		const char *keyword, *c;
		uint8_t size;
		enum adac_sym_encoding enc;
	} prims[0x20] = {
		[ADAC_ELEM_BOOLEAN] = {"bool", "bool", 1, ADAC_SYM_ENC_BOOLEAN},
		[ADAC_ELEM_CHAR] = {"char", "char16_t", 2, ADAC_SYM_ENC_UTF},
		[ADAC_ELEM_I1] = {"sbyte", "signed char", 1, ADAC_SYM_ENC_SIGNED},
		[ADAC_ELEM_U1] = {"byte", "unsigned char", 1, ADAC_SYM_ENC_UNSIGNED},
		[ADAC_ELEM_I2] = {"short", "short", 2, ADAC_SYM_ENC_SIGNED},
		[ADAC_ELEM_U2] = {"ushort", "unsigned short", 2, ADAC_SYM_ENC_UNSIGNED},
		[ADAC_ELEM_I4] = {"int", "int", 4, ADAC_SYM_ENC_SIGNED},
		[ADAC_ELEM_U4] = {"uint", "unsigned int", 4, ADAC_SYM_ENC_UNSIGNED},
		[ADAC_ELEM_I8] = {"long", "long", 8, ADAC_SYM_ENC_SIGNED},
		[ADAC_ELEM_U8] = {"ulong", "unsigned long", 8, ADAC_SYM_ENC_UNSIGNED},
		[ADAC_ELEM_R4] = {"float", "float", 4, ADAC_SYM_ENC_FLOAT},
		[ADAC_ELEM_R8] = {"double", "double", 8, ADAC_SYM_ENC_FLOAT},
		[ADAC_ELEM_I] = {"nint", "long", 8, ADAC_SYM_ENC_SIGNED},
		[ADAC_ELEM_U] = {"nuint", "unsigned long", 8, ADAC_SYM_ENC_UNSIGNED},
	};
	if (elem >= 0x20 || !prims[elem].keyword)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "element type 0x%x is not a primitive", elem);
	if (!ty->base[elem]) {
		uint32_t *c = named_slot(ty, "base", prims[elem].c, err);
		if (!c || (!*c && !(*c = adac_symfile_base_type(ty->sf, prims[elem].c, prims[elem].size, prims[elem].enc, err))))
			return -1;
		uint32_t c_id = *c;
		if (strcmp(prims[elem].keyword, prims[elem].c) == 0)
			ty->base[elem] = c_id;
		else if (!(ty->base[elem] = adac_symfile_typedef(ty->sf, prims[elem].keyword, c_id, err)))
			return -1;
	}
	*id = ty->base[elem];
	return 0;
}

/* ---- types of MethodTables ---- */

/* Queues r's type to be laid out at `depth`, unless it is or will be at that depth or less. */
static int enqueue(struct adac_sym_typer *ty, struct mt_types *r, uint32_t depth, struct adac_error *err)
{
	if (r->defined || (r->queued_depth && r->queued_depth <= depth + 1))
		return 0;
	struct pending *q = &ty->queue[depth];
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 64;
		uint64_t *m = realloc(q->mts, cap * sizeof *m);
		if (!m)
			return nomem(err);
		q->mts = m;
		q->cap = cap;
	}
	q->mts[q->n++] = r->mt;
	r->queued_depth = depth + 1;
	return 0;
}

static int enum_visit(void *ctx, const char *name, int64_t value, uint64_t bits, struct adac_error *err)
{
	void **c = ctx;
	(void)bits;
	return adac_symfile_add_enumerator(c[0], *(uint32_t *)c[1], name, value, err);
}

/* A value type: its struct (laid out whatever the depth: its bytes are part of what holds it), or
 * its enum. */
static int value_type(struct adac_sym_typer *ty, const struct adac_vtype *t, const char *name, uint32_t *id,
                      struct adac_error *err)
{
	struct mt_types *r = mt_record(ty, t->mt, err);
	if (!r)
		return -1;
	if (!r->object && t->is_enum) {
		uint32_t under, e;
		if (base_type(ty, t->elem, &under, err) || !(e = adac_symfile_enum_type(ty->sf, name, under, err)))
			return -1;
		void *c[2] = {ty->sf, &e};
		struct adac_error ee = {0};
		if (adac_vtype_enum_values(ty->rt, t, enum_visit, c, &ee) && fatal(&ee))
			return adac_error_copy(err, &ee);
		r = adac_addr_map_find(&ty->mts, t->mt);
		r->object = e;
		r->defined = true;
	} else if (!r->object && !(r->object = adac_symfile_struct_type(ty->sf, name, 0, true, err))) {
		return -1;
	}
	*id = r->object;
	return t->is_enum ? 0 : enqueue(ty, r, ty->in_layout ? ty->depth : 0, err);
}

/* An object of class mt: typedef `name` for a pointer to the object's struct (full type name). */
static int class_type(struct adac_sym_typer *ty, uint64_t mt, const char *name, uint32_t *id, struct adac_error *err)
{
	struct mt_types *r = mt_record(ty, mt, err);
	if (!r)
		return -1;
	if (!r->object) {
		struct adac_sig_text full = {0};
		char fallback[40];
		snprintf(fallback, sizeof fallback, "MethodTable 0x%llx", (unsigned long long)mt);
		bool named = adac_tn_handle(ty->rt, mt, ADAC_STYLE_SOS, 0, &full, NULL) == 0 && adac_sig_text_str(&full)[0];
		char *oname = object_name(named ? adac_sig_text_str(&full) : fallback, err);
		uint32_t obj = oname ? adac_symfile_struct_type(ty->sf, oname, 0, true, err) : 0;
		free(oname);
		adac_sig_text_free(&full);
		if (!obj || !(r = adac_addr_map_find(&ty->mts, mt)))
			return -1;
		r->object = obj;
	}
	if (!r->handle) {
		uint32_t obj = r->object, handle;
		if (pointer_typedef(ty, name, obj, &handle, err))
			return -1;
		r = adac_addr_map_find(&ty->mts, mt);
		r->handle = handle;
	}
	*id = r->handle;
	uint32_t depth = ty->in_layout ? ty->depth + 1 : 0;
	return depth <= ty->max_depth ? enqueue(ty, r, depth, err) : 0; /* deeper: a declared struct */
}

static int sig_type(struct adac_sym_typer *ty, const struct adac_type_ctx *ctx, const struct adac_sig_type *sig,
                    const struct adac_vtype *t, uint32_t *id, struct adac_error *err);

/* An array object without a MethodTable at hand: Length, (multi-dimensional) the bounds, then the
 * elements, counted by Length. The layout is the runtime's ArrayBase on 64-bit targets. */
static int array_object(struct adac_sym_typer *ty, uint32_t object, uint32_t elem_id, uint32_t rank,
                        struct adac_error *err)
{
	uint32_t u4, i4, items_off = 16 + (rank > 1 ? 8 * rank : 0);
	if (base_type(ty, ADAC_ELEM_U4, &u4, err) || adac_symfile_define_struct(ty->sf, object, items_off, err) ||
	    adac_symfile_add_member(ty->sf, object, "Length", u4, 8, err))
		return -1;
	if (rank > 1) {
		uint32_t bounds;
		if (base_type(ty, ADAC_ELEM_I4, &i4, err) || !(bounds = adac_symfile_array_type(ty->sf, i4, rank, err)) ||
		    adac_symfile_add_member(ty->sf, object, "Lengths", bounds, 16, err) ||
		    adac_symfile_add_member(ty->sf, object, "LowerBounds", bounds, 16 + 4 * rank, err))
			return -1;
	}
	uint32_t items = adac_symfile_dynamic_array_type(ty->sf, elem_id, 8 - (int32_t)items_off, 4, err);
	return items ? adac_symfile_add_member(ty->sf, object, "Items", items, items_off, err) : -1;
}

/* typedef `name` = pointer to the struct of an array of sig's elements. */
static int array_type(struct adac_sym_typer *ty, const struct adac_type_ctx *ctx, const struct adac_sig_type *sig,
                      const char *name, uint32_t *id, struct adac_error *err)
{
	uint32_t *slot = named_slot(ty, "array", name, err);
	if (!slot)
		return -1;
	if (*slot) {
		*id = *slot;
		return 0;
	}
	uint32_t rank = sig->elem == ADAC_ELEM_ARRAY ? sig->number : 1;
	struct adac_vtype et;
	struct adac_error e = {0};
	uint32_t elem_id, object;
	if (adac_vtype_from_sig(ctx, sig->inner, &et, &e)) {
		if (fatal(&e))
			return adac_error_copy(err, &e);
		return declared_object(ty, name, id, err) || pointer_typedef(ty, name, *id, id, err) ? -1 : 0;
	}
	int rc = sig_type(ty, ctx, sig->inner, &et, &elem_id, err);
	adac_vtype_free(&et);
	char *oname = rc ? NULL : object_name(name, err);
	object = oname ? adac_symfile_struct_type(ty->sf, oname, 0, true, err) : 0;
	free(oname);
	if (!object ||
	    array_object(ty, object, elem_id, rank, err) || pointer_typedef(ty, name, object, id, err))
		return -1;
	slot = named_slot(ty, "array", name, err); /* the table may have moved */
	if (!slot)
		return -1;
	*slot = *id;
	return 0;
}

static int sig_type(struct adac_sym_typer *ty, const struct adac_type_ctx *ctx, const struct adac_sig_type *sig,
                    const struct adac_vtype *t, uint32_t *id, struct adac_error *err)
{
	const char *name = t->name && t->name[0] ? t->name : "?";
	switch (t->kind) {
	case ADAC_VK_PRIM:
		return base_type(ty, t->elem, id, err);
	case ADAC_VK_POINTER: {
		uint32_t *slot = named_slot(ty, "pointer", name, err);
		if (!slot || (!*slot && pointer_typedef(ty, name, 0, slot, err)))
			return -1;
		*id = *slot;
		return 0;
	}
	case ADAC_VK_UNKNOWN:
		return declared(ty, name, id, err);
	case ADAC_VK_STRUCT:
		return value_type(ty, t, name, id, err);
	case ADAC_VK_REF:
		break;
	}
	uint64_t mt = t->mt;
	if (!mt && sig && ctx) {
		if (sig->elem == ADAC_ELEM_SZARRAY || sig->elem == ADAC_ELEM_ARRAY)
			return array_type(ty, ctx, sig, name, id, err);
		struct adac_error e = {0};
		if (adac_vtype_sig_handle(ctx, sig, &mt, &e) && fatal(&e))
			return adac_error_copy(err, &e);
		struct adac_mt_info mi;
		if (mt && (adac_mt_read(ty->rt, mt, &mi, NULL) != 0 || mi.is_value_type))
			mt = 0; /* not a class after all (a TypeDesc, say): name only */
	}
	if (mt)
		return class_type(ty, mt, name, id, err);
	/* A class not loaded (or not found): known by name. */
	uint32_t *slot = named_slot(ty, "ref", name, err), target;
	if (!slot)
		return -1;
	if (*slot) {
		*id = *slot;
		return 0;
	}
	if (declared_object(ty, name, &target, err) || pointer_typedef(ty, name, target, id, err) ||
	    !(slot = named_slot(ty, "ref", name, err))) /* the table may have moved */
		return -1;
	*slot = *id;
	return 0;
}

int adac_sym_type_of(struct adac_sym_typer *ty, const struct adac_type_ctx *ctx, const struct adac_sig_type *sig,
                     const struct adac_vtype *t, uint32_t *id, struct adac_error *err)
{
	struct adac_error e = {0};
	if (sig_type(ty, ctx, sig, t, id, &e) == 0)
		return 0;
	if (fatal(&e))
		return adac_error_copy(err, &e);
	/* A type that cannot be described (an unreadable name or layout): known by name only. */
	return declared(ty, t->name && t->name[0] ? t->name : "?", id, err);
}

/* ---- laying out ---- */

struct layout {
	struct adac_sym_typer *ty;
	struct adac_type_ctx tctx;    /* of the type declaring the fields */
	bool have_ctx;
	uint32_t object;
	uint32_t base;                /* added to field offsets: 8 in objects (the MethodTable pointer) */
	bool is_string;
	struct adac_error *err;
	int rc;
};

/* The member type of field f: its metadata signature in the declaring type's context, else what
 * the FieldDesc says (a primitive, or a reference of unknown class). */
static int field_type(struct layout *l, const struct adac_field *f, uint32_t *id)
{
	struct adac_sym_typer *ty = l->ty;
	unsigned ps = adac_target_ptr_size(ty->rt->t);
	if (l->is_string && strcmp(f->name, "_firstChar") == 0) {
		/* The characters, counted by _stringLength just before them. */
		uint32_t ch;
		if (base_type(ty, ADAC_ELEM_CHAR, &ch, l->err) || !(*id = adac_symfile_dynamic_array_type(ty->sf, ch, -4, 4, l->err)))
			return -1;
		return 0;
	}
	struct adac_ecma_field row;
	struct adac_sig *s;
	if (l->have_ctx && adac_ecma_field(l->tctx.md, ADAC_ECMA_TOKEN_RID(f->token), &row, NULL) == 0 &&
	    adac_sig_decode(row.sig, row.sig_len, ADAC_SIG_FIELD, ps, &s, NULL) == 0) {
		struct adac_vtype t;
		struct adac_error e = {0};
		int rc;
		if (adac_vtype_from_sig(&l->tctx, s->type, &t, &e) == 0) {
			rc = adac_sym_type_of(ty, &l->tctx, s->type, &t, id, l->err);
			adac_vtype_free(&t);
		} else {
			rc = fatal(&e) ? adac_error_copy(l->err, &e) : declared(ty, "?", id, l->err);
		}
		adac_sig_free(s);
		return rc;
	}
	if (f->elem_type < 0x20 && f->elem_type != ADAC_ELEM_VALUETYPE && f->elem_type != ADAC_ELEM_CLASS &&
	    base_type(ty, f->elem_type, id, NULL) == 0)
		return 0;
	return declared(ty, "?", id, l->err);
}

static int field_visit(void *ctx, const struct adac_field *f)
{
	struct layout *l = ctx;
	if (f->is_static)
		return 0;
	uint32_t id;
	if (field_type(l, f, &id) ||
	    adac_symfile_add_member(l->ty->sf, l->object, f->name[0] ? f->name : "?", id, l->base + f->offset, l->err)) {
		l->rc = -1;
		return 1;
	}
	return 0;
}

static int layout_fields(struct adac_sym_typer *ty, uint64_t mt, uint32_t object, uint32_t base, bool is_string,
                         struct adac_error *err)
{
	struct layout l = {.ty = ty, .object = object, .base = base, .is_string = is_string, .err = err};
	l.have_ctx = adac_type_ctx_for_mt(ty->rt, mt, &l.tctx, NULL) == 0;
	struct adac_error e = {0};
	if (adac_mt_fields(ty->rt, mt, field_visit, &l, &e) && !l.rc)
		return fatal(&e) ? adac_error_copy(err, &e) : 0; /* unreadable fields: the ones read so far */
	return l.rc;
}

/* An array object from its MethodTable. */
static int layout_array(struct adac_sym_typer *ty, const struct adac_mt_info *mi, uint32_t object, struct adac_error *err)
{
	struct adac_vtype et;
	uint32_t elem_id;
	struct adac_error e = {0};
	if (adac_vtype_from_th(ty->rt, mi->element_type, &et, &e))
		return fatal(&e) ? adac_error_copy(err, &e) : 0;
	int rc = adac_sym_type_of(ty, NULL, NULL, &et, &elem_id, err);
	adac_vtype_free(&et);
	return rc ? -1 : array_object(ty, object, elem_id, mi->rank ? mi->rank : 1, err);
}

static int layout(struct adac_sym_typer *ty, uint64_t mt, struct adac_error *err)
{
	struct mt_types *r = adac_addr_map_find(&ty->mts, mt);
	if (!r || r->defined)
		return 0;
	r->defined = true;
	uint32_t object = r->object;
	struct adac_mt_info mi;
	struct adac_error e = {0};
	if (adac_mt_read(ty->rt, mt, &mi, &e))
		return fatal(&e) ? adac_error_copy(err, &e) : 0; /* stays declared */
	if (mi.is_value_type) {
		uint32_t size;
		if (adac_mt_instance_field_bytes(ty->rt, mt, &size, &e))
			return fatal(&e) ? adac_error_copy(err, &e) : 0;
		if (adac_symfile_define_struct(ty->sf, object, size, err))
			return -1;
		return layout_fields(ty, mt, object, 0, false, err);
	}
	if (mi.is_array)
		return layout_array(ty, &mi, object, err);
	/* An object, from its address: the MethodTable pointer, then the fields of the root type down. */
	if (mi.base_size < 8 + 8)
		return 0;
	if (adac_symfile_define_struct(ty->sf, object, mi.base_size - 8, err))
		return -1;
	uint64_t chain[ADAC_MAX_PARENT_DEPTH];
	size_t n = 0;
	for (uint64_t p = mt; p && n < ADAC_MAX_PARENT_DEPTH; n++) {
		struct adac_mt_info pi;
		if (adac_mt_read(ty->rt, p, &pi, NULL))
			break;
		chain[n] = p;
		p = pi.parent;
	}
	while (n--)
		if (layout_fields(ty, chain[n], object, 8, mi.is_string, err))
			return -1;
	return 0;
}

int adac_sym_typer_finish(struct adac_sym_typer *ty, struct adac_error *err)
{
	/* Shallowest first, so that a type is laid out at the depth it is first needed; laying one out
	 * queues types at its depth (values) or one deeper (objects). */
	int rc = 0;
	ty->in_layout = true;
	for (unsigned d = 0; d <= ty->max_depth && rc == 0; d++) {
		ty->depth = d;
		struct pending *q = &ty->queue[d];
		for (size_t i = 0; i < q->n && rc == 0; i++)
			rc = layout(ty, q->mts[i], err);
		q->n = 0;
	}
	ty->in_layout = false;
	ty->depth = 0;
	return rc;
}
