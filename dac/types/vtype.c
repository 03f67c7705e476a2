/* vtype.c - static types of values resolved for reading them (vtype.h): kinds, sizes, layouts
 * from the runtime, the fields of a type and the references inside a value. */
#include "types/vtype.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "metadata/ecma_metadata.h"
#include "runtime/descriptor.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/corelib.h"
#include "types/fielddesc.h"
#include "types/methoddesc.h"

void adac_vtype_free(struct adac_vtype *t)
{
	free(t->name);
	free(t->why);
	memset(t, 0, sizeof *t);
}

static uint64_t global_mt(struct adac_runtime *rt, const char *name)
{
	uint64_t where = 0, mt = 0;
	if (adac_desc_global(rt->desc, name, &where, NULL) || adac_read_ptr(rt->t, where, &mt, NULL))
		return 0;
	return mt;
}

static bool is_prim(uint8_t e)
{
	return (e >= ADAC_ELEM_BOOLEAN && e <= ADAC_ELEM_R8) || e == ADAC_ELEM_I || e == ADAC_ELEM_U;
}

uint32_t adac_vtype_prim_size(uint8_t e, unsigned ps)
{
	switch (e) {
	case ADAC_ELEM_BOOLEAN: case ADAC_ELEM_I1: case ADAC_ELEM_U1: return 1;
	case ADAC_ELEM_CHAR: case ADAC_ELEM_I2: case ADAC_ELEM_U2: return 2;
	case ADAC_ELEM_I4: case ADAC_ELEM_U4: case ADAC_ELEM_R4: return 4;
	case ADAC_ELEM_I8: case ADAC_ELEM_U8: case ADAC_ELEM_R8: return 8;
	default: return ps;
	}
}

/* ---- Resolving types ---- */

/* The MethodTable of TypeRef `token` found by its name in CoreLib, where reference assemblies
 * forward most value types; 0 when it is not there or not loaded. */
static int corelib_type(const struct adac_type_ctx *ctx, uint32_t token, uint64_t *mt, struct adac_error *err)
{
	struct adac_sig_text full = {0}, name = {0};
	uint64_t corelib;
	int rc = adac_tn_token(ctx, token, ADAC_STYLE_SOS, 0, &full, err) ||
	         adac_tn_token(ctx, token, ADAC_STYLE_SOS, ADAC_TN_NO_NAMESPACE, &name, err);
	if (rc == 0 && full.s && adac_corelib_module(ctx->rt, &corelib, NULL) == 0) {
		/* full is "Ns.Outer+Inner", name "Outer+Inner". */
		full.s[full.len > name.len ? full.len - name.len - 1 : 0] = '\0';
		adac_module_type(ctx->rt, corelib, full.s, adac_sig_text_str(&name), mt, NULL);
	}
	adac_sig_text_free(&full);
	adac_sig_text_free(&name);
	return rc ? -1 : 0;
}

/* The loaded MethodTable of a TypeDef or TypeRef token of ctx's module; 0 when not loaded. */
static int token_mt(const struct adac_type_ctx *ctx, uint32_t token, uint64_t *mt, struct adac_error *err)
{
	*mt = 0;
	uint32_t rid = ADAC_ECMA_TOKEN_RID(token);
	switch (ADAC_ECMA_TOKEN_TABLE(token)) {
	case ADAC_ECMA_TYPEDEF:
		return adac_module_typedef_mt(ctx->rt, ctx->module, token, mt, err);
	case ADAC_ECMA_TYPEREF: {
		if (adac_module_lookup(ctx->rt, ctx->module, "TypeRefToMethodTableMap", rid, mt, err))
			return -1;
		return *mt ? 0 : corelib_type(ctx, token, mt, err);
	}
	default:
		return 0;
	}
}

/* Parent MethodTable's metadata name is System.Enum. */
static bool is_enum_mt(struct adac_runtime *rt, const struct adac_mt_info *mi)
{
	if (!mi->is_value_type || !mi->parent)
		return false;
	struct adac_mt_info pi;
	if (adac_mt_read(rt, mi->parent, &pi, NULL))
		return false;
	const struct adac_ecma *md = adac_ecma_for_module(rt, pi.module, NULL);
	struct adac_ecma_typedef td;
	return md && adac_ecma_typedef(md, ADAC_ECMA_TOKEN_RID(pi.typedef_token), &td, NULL) == 0 &&
	       strcmp(td.ns, "System") == 0 && strcmp(td.name, "Enum") == 0;
}

static int set_why(struct adac_vtype *t, struct adac_error *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int set_why(struct adac_vtype *t, struct adac_error *err, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	t->kind = ADAC_VK_UNKNOWN;
	free(t->why);
	t->why = strdup(buf);
	if (!t->why)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	return 0;
}

/* Kind, size and element of an exact MethodTable (the name is set by the caller). */
static int kind_from_mt(struct adac_runtime *rt, uint64_t mt, struct adac_vtype *t, struct adac_error *err)
{
	struct adac_mt_info mi;
	if (adac_mt_read(rt, mt, &mi, err))
		return -1;
	unsigned ps = adac_target_ptr_size(rt->t);
	t->mt = mt;
	if (!mi.is_value_type) {
		t->kind = ADAC_VK_REF;
		t->elem = mi.is_string ? ADAC_ELEM_STRING : mi.is_array ? mi.signature_elem : ADAC_ELEM_CLASS;
		t->size = ps;
		return 0;
	}
	if (is_prim(mi.signature_elem)) {
		t->kind = ADAC_VK_PRIM;
		t->elem = mi.signature_elem;
		t->size = adac_vtype_prim_size(t->elem, ps);
		return 0;
	}
	if (adac_mt_instance_field_bytes(rt, mt, &t->size, err))
		return -1;
	t->kind = ADAC_VK_STRUCT;
	t->elem = ADAC_ELEM_VALUETYPE;
	if (is_enum_mt(rt, &mi)) {
		uint8_t e;
		if (adac_mt_internal_elem(rt, mt, &e, err))
			return -1;
		if (is_prim(e)) {
			t->is_enum = true;
			t->elem = e;
		}
	}
	return 0;
}

int adac_vtype_from_th(struct adac_runtime *rt, uint64_t th, struct adac_vtype *out, struct adac_error *err)
{
	memset(out, 0, sizeof *out);
	struct adac_sig_text name = {0};
	if (adac_tn_handle(rt, th, ADAC_STYLE_CSHARP, 0, &name, err))
		goto fail;
	out->name = adac_sig_text_take(&name);
	if (!out->name && !(out->name = strdup(""))) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		goto fail;
	}
	struct adac_th_info ti;
	if (adac_th_read(rt, th, &ti, err))
		goto fail;
	unsigned ps = adac_target_ptr_size(rt->t);
	switch (ti.kind) {
	case ADAC_TH_METHODTABLE:
		if (kind_from_mt(rt, ti.method_table, out, err))
			goto fail;
		return 0;
	case ADAC_TH_PARAM:
	case ADAC_TH_FNPTR:
		out->kind = ADAC_VK_POINTER;
		out->elem = ti.kind == ADAC_TH_FNPTR ? ADAC_ELEM_FNPTR : ti.elem;
		out->size = ps;
		return 0;
	default:
		if (set_why(out, err, "the generic parameter %s has no instantiation here", out->name))
			goto fail;
		return 0;
	}
fail:
	adac_sig_text_free(&name);
	adac_vtype_free(out);
	return -1;
}

static int sig_th(const struct adac_type_ctx *ctx, const struct adac_sig_type *ty, unsigned depth, uint64_t *th,
                  struct adac_error *err);

/* The loaded MethodTable of a GENERICINST (*th = 0 when not loaded). The runtime keeps an
 * instantiation in the constructed-type table of one module of its type or arguments (its loader
 * module): look in each. */
static int find_instantiation(const struct adac_type_ctx *ctx, uint64_t def, const uint64_t *args, uint32_t nargs,
                              uint64_t *mods, uint64_t *th, struct adac_error *err)
{
	struct adac_runtime *rt = ctx->rt;
	unsigned nm = 0;
	struct adac_mt_info mi;
	mods[nm++] = ctx->module;
	if (adac_mt_read(rt, def, &mi, err))
		return -1;
	mods[nm++] = mi.module;
	for (uint32_t i = 0; i < nargs; i++) {
		struct adac_th_info ti;
		if (adac_th_read(rt, args[i], &ti, NULL) == 0 && ti.kind == ADAC_TH_METHODTABLE &&
		    adac_mt_read(rt, ti.method_table, &mi, NULL) == 0)
			mods[nm++] = mi.module;
	}
	for (unsigned i = 0; i < nm && !*th; i++) {
		bool seen = false;
		for (unsigned k = 0; k < i; k++)
			seen |= mods[k] == mods[i];
		if (!seen && mods[i] && adac_module_find_instantiation(rt, mods[i], def, args, nargs, th, err))
			return -1;
	}
	return 0;
}

static int loaded_instantiation(const struct adac_type_ctx *ctx, const struct adac_sig_type *ty, unsigned depth,
                                uint64_t *th, struct adac_error *err)
{
	uint64_t def;
	if (!ty->inner || ty->nargs == 0)
		return 0;
	if (ty->nargs > ADAC_MAX_GENERIC_ARGS)
		return adac_fail(err, ADAC_E_LIMIT, 0, "a generic instantiation with %u type arguments (limit %u)", ty->nargs,
		                 ADAC_MAX_GENERIC_ARGS);
	if (token_mt(ctx, ty->inner->token, &def, err))
		return -1;
	if (!def)
		return 0;
	/* The arguments, then the modules to look in: 2 + nargs. */
	uint64_t *args = malloc((2 * (size_t)ty->nargs + 2) * sizeof *args);
	if (!args)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	int rc = 0;
	bool all = true;
	for (uint32_t i = 0; rc == 0 && all && i < ty->nargs; i++) {
		rc = sig_th(ctx, ty->args[i], depth + 1, &args[i], err);
		all = args[i] != 0;
	}
	if (rc == 0 && all)
		rc = find_instantiation(ctx, def, args, ty->nargs, args + ty->nargs, th, err);
	free(args);
	return rc;
}

/* The exact TypeHandle of a signature type, when the runtime has loaded it (*th = 0 otherwise):
 * primitives, string and object, TypeDef/TypeRef tokens, generic variables, and instantiations of
 * those found among the constructed types of the modules involved. */
static int sig_th(const struct adac_type_ctx *ctx, const struct adac_sig_type *ty, unsigned depth, uint64_t *th,
                  struct adac_error *err)
{
	*th = 0;
	if (depth > ADAC_MAX_SIG_DEPTH)
		return adac_fail(err, ADAC_E_LIMIT, 0, "signature types nest deeper than %u", ADAC_MAX_SIG_DEPTH);
	struct adac_runtime *rt = ctx->rt;
	switch (ty->elem) {
	case ADAC_ELEM_STRING:
		*th = global_mt(rt, "StringMethodTable");
		return 0;
	case ADAC_ELEM_OBJECT:
		*th = global_mt(rt, "ObjectMethodTable");
		return 0;
	case ADAC_ELEM_CLASS:
	case ADAC_ELEM_VALUETYPE: {
		if (ADAC_ECMA_TOKEN_TABLE(ty->token) != ADAC_ECMA_TYPESPEC)
			return token_mt(ctx, ty->token, th, err);
		const uint8_t *blob;
		uint32_t len = 0;
		struct adac_sig *s;
		if (adac_ecma_typespec(ctx->md, ADAC_ECMA_TOKEN_RID(ty->token), &blob, &len, err) ||
		    adac_sig_decode(blob, len, ADAC_SIG_TYPESPEC, adac_target_ptr_size(rt->t), &s, err))
			return -1;
		int rc = sig_th(ctx, s->type, depth + 1, th, err);
		adac_sig_free(s);
		return rc;
	}
	case ADAC_ELEM_VAR:
	case ADAC_ELEM_MVAR:
		return adac_type_ctx_arg(ctx, ty->elem == ADAC_ELEM_MVAR, ty->number, th, err);
	case ADAC_ELEM_INTERNAL:
		*th = ty->handle;
		return 0;
	case ADAC_ELEM_GENERICINST:
		return loaded_instantiation(ctx, ty, depth, th, err);
	default:
		if (is_prim(ty->elem)) {
			uint64_t corelib;
			if (adac_corelib_module(rt, &corelib, err) ||
			    adac_module_type(rt, corelib, "System", adac_tn_prim(ty->elem, ADAC_STYLE_SOS), th, err))
				return -1;
		}
		return 0;
	}
}

static int resolve_sig(const struct adac_type_ctx *ctx, const struct adac_sig_type *ty, unsigned depth,
                       struct adac_vtype *t, struct adac_error *err)
{
	unsigned ps = adac_target_ptr_size(ctx->rt->t);
	if (depth > ADAC_MAX_SIG_DEPTH)
		return adac_fail(err, ADAC_E_LIMIT, 0, "signature types nest deeper than %u", ADAC_MAX_SIG_DEPTH);
	if (is_prim(ty->elem)) {
		t->kind = ADAC_VK_PRIM;
		t->elem = ty->elem;
		t->size = adac_vtype_prim_size(ty->elem, ps);
		return 0;
	}
	switch (ty->elem) {
	case ADAC_ELEM_STRING:
	case ADAC_ELEM_OBJECT:
	case ADAC_ELEM_CLASS:
	case ADAC_ELEM_SZARRAY:
	case ADAC_ELEM_ARRAY:
		if (ty->elem == ADAC_ELEM_CLASS && ADAC_ECMA_TOKEN_TABLE(ty->token) == ADAC_ECMA_TYPESPEC)
			break; /* decoded below */
		t->kind = ADAC_VK_REF;
		t->elem = ty->elem;
		t->size = ps;
		return 0;
	case ADAC_ELEM_PTR:
	case ADAC_ELEM_FNPTR:
	case ADAC_ELEM_BYREF:
		t->kind = ADAC_VK_POINTER;
		t->elem = ty->elem;
		t->size = ps;
		return 0;
	case ADAC_ELEM_VALUETYPE:
		if (ADAC_ECMA_TOKEN_TABLE(ty->token) == ADAC_ECMA_TYPESPEC)
			break;
		{
			uint64_t mt;
			if (token_mt(ctx, ty->token, &mt, err))
				return -1;
			if (!mt)
				return set_why(t, err, "the runtime has not loaded the value type %s", t->name);
			return kind_from_mt(ctx->rt, mt, t, err);
		}
	case ADAC_ELEM_GENERICINST: {
		if (ty->inner && ty->inner->elem == ADAC_ELEM_CLASS) {
			t->kind = ADAC_VK_REF;
			t->elem = ADAC_ELEM_CLASS;
			t->size = ps;
			return 0;
		}
		uint64_t mt;
		if (sig_th(ctx, ty, depth, &mt, err))
			return -1;
		if (!mt)
			return set_why(t, err, "the runtime has not loaded the generic value type %s", t->name);
		return kind_from_mt(ctx->rt, mt, t, err);
	}
	case ADAC_ELEM_VAR:
	case ADAC_ELEM_MVAR: {
		uint64_t th;
		if (adac_type_ctx_arg(ctx, ty->elem == ADAC_ELEM_MVAR, ty->number, &th, err))
			return -1;
		if (!th)
			return set_why(t, err, "the generic parameter %s has no instantiation here", t->name);
		struct adac_vtype r;
		if (adac_vtype_from_th(ctx->rt, th, &r, err))
			return -1;
		free(r.name);
		r.name = t->name;
		t->name = NULL;
		*t = r;
		return 0;
	}
	case ADAC_ELEM_INTERNAL: {
		struct adac_vtype r;
		if (adac_vtype_from_th(ctx->rt, ty->handle, &r, err))
			return -1;
		free(r.name);
		r.name = t->name;
		*t = r;
		return 0;
	}
	case ADAC_ELEM_TYPEDBYREF:
		return set_why(t, err, "a TypedReference is never saved in a continuation");
	default:
		return set_why(t, err, "element type 0x%02x", ty->elem);
	}
	/* A TypeSpec token in a CLASS or VALUETYPE position. */
	const uint8_t *blob;
	uint32_t len = 0;
	struct adac_sig *s;
	if (adac_ecma_typespec(ctx->md, ADAC_ECMA_TOKEN_RID(ty->token), &blob, &len, err) ||
	    adac_sig_decode(blob, len, ADAC_SIG_TYPESPEC, ps, &s, err))
		return -1;
	int rc = resolve_sig(ctx, s->type, depth + 1, t, err);
	adac_sig_free(s);
	return rc;
}

int adac_vtype_sig_handle(const struct adac_type_ctx *ctx, const struct adac_sig_type *ty, uint64_t *th,
                          struct adac_error *err)
{
	return sig_th(ctx, ty, 0, th, err);
}

int adac_vtype_from_sig(const struct adac_type_ctx *ctx, const struct adac_sig_type *ty, struct adac_vtype *out,
                        struct adac_error *err)
{
	memset(out, 0, sizeof *out);
	struct adac_sig_text name = {0};
	if (adac_tn_sig(ctx, ty, ADAC_STYLE_CSHARP, 0, &name, err)) {
		adac_sig_text_free(&name);
		return -1;
	}
	out->name = adac_sig_text_take(&name);
	if (!out->name && !(out->name = strdup("")))
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	if (resolve_sig(ctx, ty, 0, out, err)) {
		adac_vtype_free(out);
		return -1;
	}
	return 0;
}

/* ---- Fields of a type ---- */

typedef int (*field_cb)(void *ctx, struct adac_vfield *f, struct adac_error *err);

struct fields_ctx {
	struct adac_runtime *rt;
	struct adac_type_ctx tctx;
	bool have_ctx;
	field_cb cb;
	void *cb_ctx;
	struct adac_error *err;
	int rc;
	unsigned count;
};

/* The declared type of a field: its metadata signature in the declaring type's context, else the
 * FieldDesc's element type. */
static int field_type(struct fields_ctx *c, const struct adac_field *f, struct adac_vtype *t, struct adac_error *err)
{
	memset(t, 0, sizeof *t);
	unsigned ps = adac_target_ptr_size(c->rt->t);
	if (c->have_ctx) {
		struct adac_ecma_field row;
		struct adac_sig *s;
		if (adac_ecma_field(c->tctx.md, ADAC_ECMA_TOKEN_RID(f->token), &row, NULL) == 0 &&
		    adac_sig_decode(row.sig, row.sig_len, ADAC_SIG_FIELD, ps, &s, NULL) == 0) {
			int rc = adac_vtype_from_sig(&c->tctx, s->type, t, err);
			adac_sig_free(s);
			return rc;
		}
	}
	/* No usable metadata: what the FieldDesc says. */
	const char *k = adac_tn_prim(f->elem_type, ADAC_STYLE_CSHARP);
	t->name = strdup(k ? k : "?");
	if (!t->name)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	if (is_prim(f->elem_type)) {
		t->kind = ADAC_VK_PRIM;
		t->elem = f->elem_type;
		t->size = adac_vtype_prim_size(t->elem, ps);
	} else if (f->elem_type == ADAC_ELEM_PTR || f->elem_type == ADAC_ELEM_FNPTR) {
		t->kind = ADAC_VK_POINTER;
		t->elem = f->elem_type;
		t->size = ps;
	} else if (f->elem_type == ADAC_ELEM_VALUETYPE) {
		return set_why(t, err, "the field's value type is not known (no metadata)");
	} else {
		t->kind = ADAC_VK_REF;
		t->elem = ADAC_ELEM_CLASS;
		t->size = ps;
	}
	return 0;
}

static int field_visit(void *ctx, const struct adac_field *f)
{
	struct fields_ctx *c = ctx;
	if (f->is_static)
		return 0;
	struct adac_vfield v = {.name = f->name, .offset = f->offset};
	if (field_type(c, f, &v.type, c->err)) {
		c->rc = -1;
		return 1;
	}
	c->count++;
	int rc = c->cb(c->cb_ctx, &v, c->err);
	adac_vtype_free(&v.type);
	if (rc) {
		c->rc = rc < 0 ? -1 : 0;
		return 1;
	}
	return 0;
}

int adac_vtype_fields(struct adac_runtime *rt, uint64_t mt, field_cb cb, void *cb_ctx, struct adac_error *err)
{
	struct fields_ctx c = {.rt = rt, .cb = cb, .cb_ctx = cb_ctx, .err = err};
	c.have_ctx = adac_type_ctx_for_mt(rt, mt, &c.tctx, NULL) == 0;
	if (adac_mt_fields(rt, mt, field_visit, &c, err))
		return -1;
	return c.rc;
}

/* ---- References inside a value ---- */

struct refs_ctx {
	struct adac_runtime *rt;
	uint32_t base;
	uint32_t *offs;
	uint32_t max;
	uint32_t n;
	unsigned depth;
	uint32_t visits;   /* fields visited, nested structs included (ADAC_MAX_REF_VISITS) */
};

static int collect_refs(struct refs_ctx *c, const struct adac_vtype *t, uint32_t base, struct adac_error *err);

static int refs_field(void *ctx, struct adac_vfield *f, struct adac_error *err)
{
	struct refs_ctx *c = ctx;
	if (++c->visits > ADAC_MAX_REF_VISITS)
		return adac_fail(err, ADAC_E_LIMIT, f->type.mt, "a value type with more than %u fields, nested ones included",
		                 ADAC_MAX_REF_VISITS);
	return collect_refs(c, &f->type, c->base + f->offset, err);
}

static int collect_refs(struct refs_ctx *c, const struct adac_vtype *t, uint32_t base, struct adac_error *err)
{
	switch (t->kind) {
	case ADAC_VK_REF:
		if (c->n < c->max)
			c->offs[c->n] = base;
		c->n++;
		if (c->n > ADAC_MAX_REF_OFFSETS)
			return adac_fail(err, ADAC_E_LIMIT, t->mt, "value of type %s holds more than %u references", t->name,
			                 ADAC_MAX_REF_OFFSETS);
		return 0;
	case ADAC_VK_STRUCT: {
		if (t->is_enum)
			return 0;
		if (c->depth >= ADAC_MAX_TYPE_DEPTH)
			return adac_fail(err, ADAC_E_LIMIT, t->mt, "structs nest deeper than %u", ADAC_MAX_TYPE_DEPTH);
		uint32_t saved = c->base;
		c->base = base;
		c->depth++;
		int rc = adac_vtype_fields(c->rt, t->mt, refs_field, c, err);
		c->depth--;
		c->base = saved;
		return rc;
	}
	case ADAC_VK_UNKNOWN:
		return adac_fail(err, ADAC_E_UNSUPPORTED, 0, "%s: %s", t->name, t->why ? t->why : "unknown layout");
	default:
		return 0;
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

int adac_vtype_ref_offsets(struct adac_runtime *rt, const struct adac_vtype *t, uint32_t *offs, uint32_t max,
                           uint32_t *n, struct adac_error *err)
{
	struct refs_ctx c = {.rt = rt, .offs = offs, .max = max};
	if (collect_refs(&c, t, 0, err))
		return -1;
	*n = c.n;
	qsort(offs, c.n < max ? c.n : max, sizeof *offs, cmp_u32);
	return 0;
}

/* ---- Enum constants ---- */

#define FD_STATIC 0x10u
#define FD_LITERAL 0x40u

/* A constant's integer of element type elem, from its little-endian bytes (sign-extended when
 * the type is signed). */
static int64_t constant_value(uint8_t elem, const uint8_t *b, uint32_t len)
{
	uint64_t v = 0;
	for (uint32_t i = 0; i < len && i < 8; i++)
		v |= (uint64_t)b[i] << (8 * i);
	bool is_signed = elem == ADAC_ELEM_I1 || elem == ADAC_ELEM_I2 || elem == ADAC_ELEM_I4 || elem == ADAC_ELEM_I8 ||
	                 elem == ADAC_ELEM_I;
	if (is_signed && len < 8 && (v >> (8 * len - 1)) & 1)
		v |= ~0ull << (8 * len);
	return (int64_t)v;
}

int adac_vtype_enum_values(struct adac_runtime *rt, const struct adac_vtype *t, adac_enum_value_cb cb, void *ctx,
                           struct adac_error *err)
{
	uint64_t mask = t->size >= 8 ? ~0ull : ((1ull << (t->size * 8)) - 1);
	struct adac_mt_info mi;
	const struct adac_ecma *md = NULL;
	struct adac_ecma_typedef td;
	bool have = adac_mt_read(rt, t->mt, &mi, NULL) == 0 && (md = adac_ecma_for_module(rt, mi.module, NULL)) != NULL &&
	            adac_ecma_typedef(md, ADAC_ECMA_TOKEN_RID(mi.typedef_token), &td, NULL) == 0;
	for (uint32_t pos = have ? td.field_first : 0; have && pos < td.field_end; pos++) {
		uint32_t rid, crid;
		struct adac_ecma_field f;
		struct adac_ecma_constant c;
		if (adac_ecma_list_item(md, ADAC_ECMA_FIELD, pos, &rid, NULL) || adac_ecma_field(md, rid, &f, NULL) ||
		    (f.flags & (FD_LITERAL | FD_STATIC)) != (FD_LITERAL | FD_STATIC) ||
		    adac_ecma_constant_of(md, ADAC_ECMA_TOKEN(ADAC_ECMA_FIELD, rid), &crid, NULL) ||
		    adac_ecma_constant(md, crid, &c, NULL) || c.value_len == 0 || c.value_len > 8)
			continue;
		int64_t value = constant_value(c.type, c.value, c.value_len);
		int rc = cb(ctx, f.name, value, (uint64_t)value & mask, err);
		if (rc)
			return rc < 0 ? -1 : 0;
	}
	return 0;
}
