/* value_format.c - managed values and type names, formatted like LLDB's `frame variable`. */
#include "view/value_format.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/limits.h"
#include "metadata/ecma_metadata.h"
#include "runtime/descriptor.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/corelib.h"
#include "types/fielddesc.h"
#include "types/methoddesc.h"
#include "types/names.h"

#define FD_LITERAL 0x40u
#define FD_STATIC 0x10u

void adac_value_opts_default(struct adac_value_opts *o)
{
	o->max_depth = ADAC_VALUE_DEFAULT_DEPTH;
	o->max_elements = ADAC_VALUE_DEFAULT_ELEMENTS;
	o->max_string = ADAC_VALUE_DEFAULT_STRING;
}

void adac_vtype_free(struct adac_vtype *t)
{
	free(t->name);
	free(t->why);
	memset(t, 0, sizeof *t);
}

/* ---- Runtime facts used while formatting ---- */

struct vf {
	struct adac_runtime *rt;
	const struct adac_value_opts *o;
	unsigned ps;
	uint64_t string_mt, object_mt, canon_mt;
	uint32_t str_len_off, str_chars_off;
	uint32_t arr_len_off;
};

static uint64_t global_mt(struct adac_runtime *rt, const char *name)
{
	uint64_t where = 0, mt = 0;
	if (adac_desc_global(rt->desc, name, &where, NULL) || adac_read_ptr(rt->t, where, &mt, NULL))
		return 0;
	return mt;
}

static int vf_init(struct adac_runtime *rt, const struct adac_value_opts *o, struct vf *v, struct adac_error *err)
{
	memset(v, 0, sizeof *v);
	v->rt = rt;
	v->o = o;
	v->ps = adac_target_ptr_size(rt->t);
	v->string_mt = global_mt(rt, "StringMethodTable");
	v->object_mt = global_mt(rt, "ObjectMethodTable");
	v->canon_mt = global_mt(rt, "CanonMethodTable");
	if (adac_desc_field(rt->desc, "String", "m_StringLength", &v->str_len_off, err) ||
	    adac_desc_field(rt->desc, "String", "m_FirstChar", &v->str_chars_off, err) ||
	    adac_desc_field(rt->desc, "Array", "m_NumComponents", &v->arr_len_off, err))
		return -1;
	return 0;
}

static bool is_prim(uint8_t e)
{
	return (e >= ADAC_ELEM_BOOLEAN && e <= ADAC_ELEM_R8) || e == ADAC_ELEM_I || e == ADAC_ELEM_U;
}

static uint32_t prim_size(uint8_t e, unsigned ps)
{
	switch (e) {
	case ADAC_ELEM_BOOLEAN: case ADAC_ELEM_I1: case ADAC_ELEM_U1: return 1;
	case ADAC_ELEM_CHAR: case ADAC_ELEM_I2: case ADAC_ELEM_U2: return 2;
	case ADAC_ELEM_I4: case ADAC_ELEM_U4: case ADAC_ELEM_R4: return 4;
	case ADAC_ELEM_I8: case ADAC_ELEM_U8: case ADAC_ELEM_R8: return 8;
	default: return ps;
	}
}

static const char *keyword(uint8_t e)
{
	switch (e) {
	case ADAC_ELEM_VOID: return "void";
	case ADAC_ELEM_BOOLEAN: return "bool";
	case ADAC_ELEM_CHAR: return "char";
	case ADAC_ELEM_I1: return "sbyte";
	case ADAC_ELEM_U1: return "byte";
	case ADAC_ELEM_I2: return "short";
	case ADAC_ELEM_U2: return "ushort";
	case ADAC_ELEM_I4: return "int";
	case ADAC_ELEM_U4: return "uint";
	case ADAC_ELEM_I8: return "long";
	case ADAC_ELEM_U8: return "ulong";
	case ADAC_ELEM_R4: return "float";
	case ADAC_ELEM_R8: return "double";
	case ADAC_ELEM_I: return "nint";
	case ADAC_ELEM_U: return "nuint";
	case ADAC_ELEM_STRING: return "string";
	case ADAC_ELEM_OBJECT: return "object";
	default: return NULL;
	}
}

static const char *full_prim(uint8_t e)
{
	switch (e) {
	case ADAC_ELEM_VOID: return "System.Void";
	case ADAC_ELEM_BOOLEAN: return "System.Boolean";
	case ADAC_ELEM_CHAR: return "System.Char";
	case ADAC_ELEM_I1: return "System.SByte";
	case ADAC_ELEM_U1: return "System.Byte";
	case ADAC_ELEM_I2: return "System.Int16";
	case ADAC_ELEM_U2: return "System.UInt16";
	case ADAC_ELEM_I4: return "System.Int32";
	case ADAC_ELEM_U4: return "System.UInt32";
	case ADAC_ELEM_I8: return "System.Int64";
	case ADAC_ELEM_U8: return "System.UInt64";
	case ADAC_ELEM_R4: return "System.Single";
	case ADAC_ELEM_R8: return "System.Double";
	case ADAC_ELEM_I: return "System.IntPtr";
	case ADAC_ELEM_U: return "System.UIntPtr";
	case ADAC_ELEM_STRING: return "System.String";
	case ADAC_ELEM_OBJECT: return "System.Object";
	default: return NULL;
	}
}

/* ---- Type contexts ---- */

int adac_type_ctx_for_mt(struct adac_runtime *rt, uint64_t mt, struct adac_type_ctx *ctx, struct adac_error *err)
{
	memset(ctx, 0, sizeof *ctx);
	struct adac_mt_info mi;
	if (adac_mt_read(rt, mt, &mi, err))
		return -1;
	ctx->rt = rt;
	ctx->module = mi.module;
	ctx->md = adac_ecma_for_module(rt, mi.module, err);
	if (!ctx->md)
		return -1;
	ctx->type_token = ADAC_ECMA_TOKEN_RID(mi.typedef_token) ? mi.typedef_token : 0;
	ctx->nclass = mi.num_generic_args;
	ctx->class_inst = mi.instantiation;
	if (mi.is_array) {
		ctx->nclass = 1;
		ctx->class_one = mi.element_type;
	}
	return 0;
}

/* The TypeHandle of generic variable `index` (0 when it has no instantiation). */
static int ctx_var(const struct adac_type_ctx *ctx, bool method_var, uint32_t index, uint64_t *th,
                   struct adac_error *err)
{
	*th = 0;
	uint32_t n = method_var ? ctx->nmethod : ctx->nclass;
	uint64_t at = method_var ? ctx->method_inst : ctx->class_inst;
	if (index >= n)
		return 0;
	if (!at) {
		if (!method_var)
			*th = ctx->class_one;
		return 0;
	}
	return adac_th_array(ctx->rt, at + (uint64_t)index * adac_target_ptr_size(ctx->rt->t), 1, th, err);
}

/* ---- Type names ---- */

static int th_name(struct adac_runtime *rt, uint64_t th, enum adac_tn_style style, unsigned depth,
                   struct adac_sig_text *out, struct adac_error *err);

static int put_typedef_name(struct adac_runtime *rt, uint64_t module, uint32_t token, bool strip,
                            struct adac_sig_text *out, struct adac_error *err)
{
	const struct adac_ecma *md = adac_ecma_for_module(rt, module, err);
	if (!md)
		return -1;
	return adac_sig_append_type_token(md, token, ADAC_STYLE_DISPLAY, 0, strip, out, err);
}

static int mt_name(struct adac_runtime *rt, uint64_t mt, enum adac_tn_style style, unsigned depth,
                   struct adac_sig_text *out, struct adac_error *err)
{
	struct adac_mt_info mi;
	if (adac_mt_read(rt, mt, &mi, err))
		return -1;
	if (mi.is_array) {
		if (th_name(rt, mi.element_type, style, depth + 1, out, err) || adac_sig_text_put(out, "[", err))
			return -1;
		for (uint32_t i = 1; i < mi.rank; i++)
			if (adac_sig_text_put(out, ",", err))
				return -1;
		return adac_sig_text_put(out, "]", err);
	}
	if (mi.is_string)
		return adac_sig_text_put(out, style == ADAC_TN_KEYWORDS ? "string" : "System.String", err);
	if (is_prim(mi.signature_elem))
		return adac_sig_text_put(out, style == ADAC_TN_KEYWORDS ? keyword(mi.signature_elem) : full_prim(mi.signature_elem),
		                         err);
	if (mi.parent == 0 && !mi.is_interface && !mi.is_value_type && global_mt(rt, "ObjectMethodTable") == mt)
		return adac_sig_text_put(out, style == ADAC_TN_KEYWORDS ? "object" : "System.Object", err);
	if (ADAC_ECMA_TOKEN_RID(mi.typedef_token) == 0) {
		/* Runtime-made types without metadata (continuation layouts): the runtime's own name. */
		return adac_names_append_type(rt, mt, 0, out, err);
	}
	if (put_typedef_name(rt, mi.module, mi.typedef_token, mi.num_generic_args > 0, out, err))
		return -1;
	if (mi.num_generic_args && mi.instantiation) {
		if (adac_sig_text_put(out, "<", err))
			return -1;
		for (uint32_t i = 0; i < mi.num_generic_args; i++) {
			uint64_t a;
			if ((i && adac_sig_text_put(out, ", ", err)) ||
			    adac_th_array(rt, mi.instantiation + (uint64_t)i * adac_target_ptr_size(rt->t), 1, &a, err) ||
			    th_name(rt, a, style, depth + 1, out, err))
				return -1;
		}
		return adac_sig_text_put(out, ">", err);
	}
	return 0;
}

static int th_name(struct adac_runtime *rt, uint64_t th, enum adac_tn_style style, unsigned depth,
                   struct adac_sig_text *out, struct adac_error *err)
{
	if (depth > ADAC_MAX_TYPE_DEPTH)
		return adac_fail(err, ADAC_E_LIMIT, th, "type 0x%llx nests deeper than %u", (unsigned long long)th,
		                 ADAC_MAX_TYPE_DEPTH);
	if (th == 0)
		return adac_sig_text_put(out, "?", err);
	struct adac_th_info ti;
	if (adac_th_read(rt, th, &ti, err))
		return -1;
	switch (ti.kind) {
	case ADAC_TH_METHODTABLE:
		return mt_name(rt, ti.method_table, style, depth, out, err);
	case ADAC_TH_PARAM:
		if (th_name(rt, ti.type_arg, style, depth + 1, out, err))
			return -1;
		return adac_sig_text_put(out, ti.elem == ADAC_ELEM_BYREF ? "&" : ti.elem == ADAC_ELEM_PTR ? "*" : "", err);
	case ADAC_TH_FNPTR:
		return adac_sig_text_put(out, "fnptr", err);
	case ADAC_TH_TYPEVAR:
	default:
		/* The generic parameter's own name. */
		return adac_names_append_type(rt, th, 0, out, err);
	}
}

int adac_type_name_th(struct adac_runtime *rt, uint64_t th, enum adac_tn_style style, struct adac_sig_text *out,
                      struct adac_error *err)
{
	return th_name(rt, th, style, 0, out, err);
}

static int sig_name(const struct adac_type_ctx *ctx, const struct adac_sig_type *ty, unsigned depth,
                    struct adac_sig_text *out, struct adac_error *err);

static int typespec_name(const struct adac_type_ctx *ctx, uint32_t token, unsigned depth, struct adac_sig_text *out,
                         struct adac_error *err)
{
	const uint8_t *blob;
	uint32_t len = 0;
	struct adac_sig *s;
	if (adac_ecma_typespec(ctx->md, ADAC_ECMA_TOKEN_RID(token), &blob, &len, err) ||
	    adac_sig_decode(blob, len, ADAC_SIG_TYPESPEC, adac_target_ptr_size(ctx->rt->t), &s, err))
		return -1;
	int rc = sig_name(ctx, s->type, depth + 1, out, err);
	adac_sig_free(s);
	return rc;
}

static int sig_name(const struct adac_type_ctx *ctx, const struct adac_sig_type *ty, unsigned depth,
                    struct adac_sig_text *out, struct adac_error *err)
{
	if (depth > ADAC_MAX_SIG_DEPTH)
		return adac_fail(err, ADAC_E_LIMIT, 0, "signature types nest deeper than %u", ADAC_MAX_SIG_DEPTH);
	const char *k = keyword(ty->elem);
	if (k)
		return adac_sig_text_put(out, k, err);
	switch (ty->elem) {
	case ADAC_ELEM_TYPEDBYREF:
		return adac_sig_text_put(out, "System.TypedReference", err);
	case ADAC_ELEM_CLASS:
	case ADAC_ELEM_VALUETYPE:
		if (ADAC_ECMA_TOKEN_TABLE(ty->token) == ADAC_ECMA_TYPESPEC)
			return typespec_name(ctx, ty->token, depth, out, err);
		return adac_sig_append_type_token(ctx->md, ty->token, ADAC_STYLE_DISPLAY, 0, false, out, err);
	case ADAC_ELEM_GENERICINST: {
		const struct adac_sig_type *base = ty->inner;
		if (!base)
			return adac_fail(err, ADAC_E_CORRUPT, 0, "generic instantiation without a type");
		if (ADAC_ECMA_TOKEN_TABLE(base->token) == ADAC_ECMA_TYPESPEC) {
			if (typespec_name(ctx, base->token, depth, out, err))
				return -1;
		} else if (adac_sig_append_type_token(ctx->md, base->token, ADAC_STYLE_DISPLAY, 0, true, out, err)) {
			return -1;
		}
		if (adac_sig_text_put(out, "<", err))
			return -1;
		for (uint32_t i = 0; i < ty->nargs; i++)
			if ((i && adac_sig_text_put(out, ", ", err)) || sig_name(ctx, ty->args[i], depth + 1, out, err))
				return -1;
		return adac_sig_text_put(out, ">", err);
	}
	case ADAC_ELEM_VAR:
	case ADAC_ELEM_MVAR: {
		bool mvar = ty->elem == ADAC_ELEM_MVAR;
		uint64_t th;
		if (ctx_var(ctx, mvar, ty->number, &th, err))
			return -1;
		if (th)
			return th_name(ctx->rt, th, ADAC_TN_KEYWORDS, depth + 1, out, err);
		uint32_t owner = mvar ? ctx->method_token : ctx->type_token;
		uint32_t rid = 0;
		struct adac_ecma_genericparam gp;
		if (owner && adac_ecma_generic_param(ctx->md, owner, ty->number, &rid, NULL) == 0 &&
		    adac_ecma_genericparam(ctx->md, rid, &gp, NULL) == 0)
			return adac_sig_text_put(out, gp.name, err);
		return adac_sig_text_putf(out, err, "%s%u", mvar ? "!!" : "!", ty->number);
	}
	case ADAC_ELEM_SZARRAY:
		if (sig_name(ctx, ty->inner, depth + 1, out, err))
			return -1;
		return adac_sig_text_put(out, "[]", err);
	case ADAC_ELEM_ARRAY:
		if (sig_name(ctx, ty->inner, depth + 1, out, err) || adac_sig_text_put(out, "[", err))
			return -1;
		for (uint32_t i = 1; i < ty->number; i++)
			if (adac_sig_text_put(out, ",", err))
				return -1;
		return adac_sig_text_put(out, "]", err);
	case ADAC_ELEM_PTR:
		if (sig_name(ctx, ty->inner, depth + 1, out, err))
			return -1;
		return adac_sig_text_put(out, "*", err);
	case ADAC_ELEM_BYREF:
		if (sig_name(ctx, ty->inner, depth + 1, out, err))
			return -1;
		return adac_sig_text_put(out, "&", err);
	case ADAC_ELEM_FNPTR:
		return adac_sig_text_put(out, "fnptr", err);
	case ADAC_ELEM_INTERNAL:
		return th_name(ctx->rt, ty->handle, ADAC_TN_KEYWORDS, depth + 1, out, err);
	default:
		return adac_sig_text_putf(out, err, "<element type 0x%02x>", ty->elem);
	}
}

int adac_type_name_sig(const struct adac_type_ctx *ctx, const struct adac_sig_type *ty, struct adac_sig_text *out,
                       struct adac_error *err)
{
	return sig_name(ctx, ty, 0, out, err);
}

/* ---- Resolving types ---- */

/* "Ns" and "Outer+Inner" of a TypeRef (nested through TypeRef resolution scopes). */
static int typeref_path(const struct adac_ecma *md, uint32_t rid, const char **ns, char *name, size_t cap,
                        struct adac_error *err)
{
	uint32_t chain[ADAC_MAX_TYPE_NESTING];
	unsigned n = 0;
	uint32_t cur = rid;
	struct adac_ecma_typeref tr;
	for (;;) {
		if (n >= ADAC_MAX_TYPE_NESTING)
			return adac_fail(err, ADAC_E_LIMIT, 0, "TypeRef 0x%06x nests deeper than %u", rid, ADAC_MAX_TYPE_NESTING);
		chain[n++] = cur;
		if (adac_ecma_typeref(md, cur, &tr, err))
			return -1;
		if (ADAC_ECMA_TOKEN_TABLE(tr.scope) != ADAC_ECMA_TYPEREF)
			break;
		cur = ADAC_ECMA_TOKEN_RID(tr.scope);
	}
	*ns = tr.ns;
	size_t used = 0;
	name[0] = '\0';
	for (unsigned i = n; i-- > 0;) {
		if (adac_ecma_typeref(md, chain[i], &tr, err))
			return -1;
		int w = snprintf(name + used, cap - used, "%s%s", i == n - 1 ? "" : "+", tr.name);
		if (w < 0 || (size_t)w >= cap - used)
			return adac_fail(err, ADAC_E_LIMIT, 0, "TypeRef 0x%06x: name too long", rid);
		used += (size_t)w;
	}
	return 0;
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
		if (*mt)
			return 0;
		/* Not cached by the runtime: by name in CoreLib (where reference assemblies forward most
		 * value types). */
		const char *ns = "";
		char name[512];
		uint64_t corelib;
		if (typeref_path(ctx->md, rid, &ns, name, sizeof name, err))
			return -1;
		if (adac_corelib_module(ctx->rt, &corelib, NULL) == 0)
			adac_module_type(ctx->rt, corelib, ns, name, mt, NULL);
		return 0;
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
		t->size = prim_size(t->elem, ps);
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
	if (th_name(rt, th, ADAC_TN_KEYWORDS, 0, &name, err))
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
		return ctx_var(ctx, ty->elem == ADAC_ELEM_MVAR, ty->number, th, err);
	case ADAC_ELEM_INTERNAL:
		*th = ty->handle;
		return 0;
	case ADAC_ELEM_GENERICINST: {
		uint64_t def, args[64];
		if (!ty->inner || ty->nargs == 0 || ty->nargs > 64)
			return 0;
		if (token_mt(ctx, ty->inner->token, &def, err))
			return -1;
		if (!def)
			return 0;
		for (uint32_t i = 0; i < ty->nargs; i++) {
			if (sig_th(ctx, ty->args[i], depth + 1, &args[i], err))
				return -1;
			if (!args[i])
				return 0;
		}
		/* The runtime keeps an instantiation in the constructed-type table of one module of its
		 * type or arguments (its loader module): look in each. */
		uint64_t mods[66];
		unsigned nm = 0;
		struct adac_mt_info mi;
		mods[nm++] = ctx->module;
		if (adac_mt_read(rt, def, &mi, err))
			return -1;
		mods[nm++] = mi.module;
		for (uint32_t i = 0; i < ty->nargs; i++) {
			struct adac_th_info ti;
			if (adac_th_read(rt, args[i], &ti, NULL) == 0 && ti.kind == ADAC_TH_METHODTABLE &&
			    adac_mt_read(rt, ti.method_table, &mi, NULL) == 0)
				mods[nm++] = mi.module;
		}
		for (unsigned i = 0; i < nm; i++) {
			bool seen = false;
			for (unsigned k = 0; k < i; k++)
				seen |= mods[k] == mods[i];
			if (seen || !mods[i])
				continue;
			if (adac_module_find_instantiation(rt, mods[i], def, args, ty->nargs, th, err))
				return -1;
			if (*th)
				return 0;
		}
		return 0;
	}
	default:
		if (is_prim(ty->elem)) {
			uint64_t corelib;
			const char *full = full_prim(ty->elem);
			if (adac_corelib_module(rt, &corelib, err) ||
			    adac_module_type(rt, corelib, "System", full + strlen("System."), th, err))
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
		t->size = prim_size(ty->elem, ps);
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
		if (ctx_var(ctx, ty->elem == ADAC_ELEM_MVAR, ty->number, &th, err))
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

int adac_vtype_from_sig(const struct adac_type_ctx *ctx, const struct adac_sig_type *ty, struct adac_vtype *out,
                        struct adac_error *err)
{
	memset(out, 0, sizeof *out);
	struct adac_sig_text name = {0};
	if (sig_name(ctx, ty, 0, &name, err)) {
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

struct field_view {
	const char *name;
	uint32_t offset;          /* from the start of the instance data (after the MethodTable pointer) */
	struct adac_vtype type;
};

typedef int (*field_view_cb)(void *ctx, struct field_view *f, struct adac_error *err);

struct fields_ctx {
	struct adac_runtime *rt;
	struct adac_type_ctx tctx;
	bool have_ctx;
	field_view_cb cb;
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
	const char *k = keyword(f->elem_type);
	t->name = strdup(k ? k : "?");
	if (!t->name)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	if (is_prim(f->elem_type)) {
		t->kind = ADAC_VK_PRIM;
		t->elem = f->elem_type;
		t->size = prim_size(t->elem, ps);
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
	struct field_view v = {.name = f->name, .offset = f->offset};
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

/* Calls cb for each instance field of mt itself (not its parents), in FieldDesc order. cb returns
 * 0 to go on, 1 to stop, -1 on failure. */
static int for_each_field(struct adac_runtime *rt, uint64_t mt, field_view_cb cb, void *cb_ctx, struct adac_error *err)
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

static int refs_field(void *ctx, struct field_view *f, struct adac_error *err)
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
		int rc = for_each_field(c->rt, t->mt, refs_field, c, err);
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

/* ---- Formatting ---- */

struct out {
	struct adac_sig_text *text;
	json_t **json;   /* NULL: no JSON wanted */
};

static int put(struct out *o, struct adac_error *err, const char *s) { return adac_sig_text_put(o->text, s, err); }

static void set_json(struct out *o, json_t *v)
{
	if (o->json)
		*o->json = v;
	else
		json_decref(v);
}

static json_t *json_addr(uint64_t a)
{
	char buf[24];
	snprintf(buf, sizeof buf, "0x%016llx", (unsigned long long)a);
	return json_string(buf);
}

/* "<error: ...>" in place of a part that could not be read. */
static int put_error(struct out *o, const struct adac_error *e, struct adac_error *err)
{
	if (adac_sig_text_putf(o->text, err, "<error: %s>", e->msg))
		return -1;
	if (o->json) {
		json_t *j = json_object();
		json_object_set_new(j, "error", json_string(e->msg));
		*o->json = j;
	}
	return 0;
}

static void fmt_real(double d, bool single, char *buf, size_t n)
{
	if (isnan(d)) {
		snprintf(buf, n, "NaN");
		return;
	}
	if (isinf(d)) {
		snprintf(buf, n, d > 0 ? "Infinity" : "-Infinity");
		return;
	}
	for (int p = 1; p <= 17; p++) {
		snprintf(buf, n, "%.*g", p, d);
		if (single ? strtof(buf, NULL) == (float)d : strtod(buf, NULL) == d)
			return;
	}
}

static int utf8_put(char *b, uint32_t cp)
{
	if (cp < 0x80) {
		b[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		b[0] = (char)(0xc0 | (cp >> 6));
		b[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		b[0] = (char)(0xe0 | (cp >> 12));
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	b[0] = (char)(0xf0 | (cp >> 18));
	b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	b[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* UTF-16 to UTF-8: `escaped` with C escapes for quote (q) and control characters and \uXXXX for
 * lone surrogates; `raw` plain (lone surrogates as U+FFFD), for JSON. Either may be NULL. */
static int utf16_convert(const uint16_t *w, size_t n, char q, struct adac_sig_text *escaped, struct adac_sig_text *raw,
                         struct adac_error *err)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t cp = w[i];
		bool lone = false;
		if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < n && w[i + 1] >= 0xdc00 && w[i + 1] <= 0xdfff) {
			cp = 0x10000 + ((cp - 0xd800) << 10) + (w[i + 1] - 0xdc00);
			i++;
		} else if (cp >= 0xd800 && cp <= 0xdfff) {
			lone = true;
		}
		char b[8];
		int len = utf8_put(b, lone ? 0xfffd : cp);
		if (raw && adac_sig_text_putn(raw, b, (size_t)len, err))
			return -1;
		if (!escaped)
			continue;
		int rc;
		if (cp == (uint32_t)q || cp == '\\')
			rc = adac_sig_text_putf(escaped, err, "\\%c", (char)cp);
		else if (cp == '\n')
			rc = adac_sig_text_put(escaped, "\\n", err);
		else if (cp == '\r')
			rc = adac_sig_text_put(escaped, "\\r", err);
		else if (cp == '\t')
			rc = adac_sig_text_put(escaped, "\\t", err);
		else if (cp == 0)
			rc = adac_sig_text_put(escaped, "\\0", err);
		else if (lone || cp < 0x20 || cp == 0x7f)
			rc = adac_sig_text_putf(escaped, err, "\\u%04x", cp);
		else
			rc = adac_sig_text_putn(escaped, b, (size_t)len, err);
		if (rc)
			return -1;
	}
	return 0;
}

/* The little-endian integer of w bytes (1, 2, 4 or 8) at b, sign-extended when is_signed (else its
 * bits, zero-extended). */
static int64_t get_int(const uint8_t *b, uint32_t w, bool is_signed)
{
	switch (w) {
	case 1: return is_signed ? (int8_t)b[0] : (int64_t)b[0];
	case 2: return is_signed ? (int16_t)adac_get_u16(b, 0) : (int64_t)adac_get_u16(b, 0);
	case 4: return is_signed ? (int32_t)adac_get_u32(b, 0) : (int64_t)adac_get_u32(b, 0);
	default: return (int64_t)adac_get_u64(b, 0);
	}
}

static int fmt_prim(struct out *o, uint8_t elem, uint32_t size, const uint8_t *b, struct adac_error *err)
{
	char buf[64];
	json_t *j = NULL;
	switch (elem) {
	case ADAC_ELEM_BOOLEAN:
		snprintf(buf, sizeof buf, "%s", b[0] ? "true" : "false");
		if (b[0] > 1)
			snprintf(buf, sizeof buf, "true (0x%02x)", b[0]);
		j = json_boolean(b[0]);
		break;
	case ADAC_ELEM_CHAR: {
		uint16_t c = adac_get_u16(b, 0);
		struct adac_sig_text esc = {0}, raw = {0};
		if (utf16_convert(&c, 1, '\'', &esc, &raw, err)) {
			adac_sig_text_free(&esc);
			adac_sig_text_free(&raw);
			return -1;
		}
		int rc = adac_sig_text_putf(o->text, err, "'%s'", adac_sig_text_str(&esc));
		if (o->json) {
			j = json_object();
			json_object_set_new(j, "char", json_string(adac_sig_text_str(&raw)));
			json_object_set_new(j, "code", json_integer(c));
			*o->json = j;
		}
		adac_sig_text_free(&esc);
		adac_sig_text_free(&raw);
		return rc;
	}
	case ADAC_ELEM_I1:
	case ADAC_ELEM_I2:
	case ADAC_ELEM_I4:
	case ADAC_ELEM_I8:
	case ADAC_ELEM_I: {
		int64_t v = get_int(b, prim_size(elem, size == 4 ? 4 : 8), true);
		snprintf(buf, sizeof buf, "%lld", (long long)v);
		j = json_integer(v);
		break;
	}
	case ADAC_ELEM_U1:
	case ADAC_ELEM_U2:
	case ADAC_ELEM_U4:
	case ADAC_ELEM_U8:
	case ADAC_ELEM_U: {
		uint64_t v = (uint64_t)get_int(b, prim_size(elem, size == 4 ? 4 : 8), false);
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
		j = v <= INT64_MAX ? json_integer((json_int_t)v) : json_string(buf);
		break;
	}
	case ADAC_ELEM_R4: {
		float f;
		memcpy(&f, b, 4);
		fmt_real(f, true, buf, sizeof buf);
		j = isfinite(f) ? json_real(f) : json_string(buf);
		break;
	}
	case ADAC_ELEM_R8: {
		double d;
		memcpy(&d, b, 8);
		fmt_real(d, false, buf, sizeof buf);
		j = isfinite(d) ? json_real(d) : json_string(buf);
		break;
	}
	default:
		snprintf(buf, sizeof buf, "<element type 0x%02x>", elem);
		j = json_null();
		break;
	}
	set_json(o, j);
	return put(o, err, buf);
}

/* An enum's or a constant's integer of type elem (native-sized ones read as 8 bytes). */
static int64_t int_value(uint8_t elem, const uint8_t *b, bool *is_unsigned)
{
	switch (elem) {
	case ADAC_ELEM_BOOLEAN: case ADAC_ELEM_U1: case ADAC_ELEM_CHAR: case ADAC_ELEM_U2: case ADAC_ELEM_U4:
	case ADAC_ELEM_U8: case ADAC_ELEM_U:
		*is_unsigned = true;
		break;
	default:
		*is_unsigned = false;
	}
	return get_int(b, prim_size(elem, 8), !*is_unsigned);
}

/* The literal fields of an enum with their values, for naming a value. */
static int fmt_enum(struct vf *v, struct out *o, const struct adac_vtype *t, const uint8_t *b, struct adac_error *err)
{
	bool uns;
	int64_t val = int_value(t->elem, b, &uns);
	uint64_t uval = (uint64_t)val & (t->size >= 8 ? ~0ull : ((1ull << (t->size * 8)) - 1));
	struct adac_mt_info mi;
	const struct adac_ecma *md = NULL;
	struct adac_ecma_typedef td;
	bool have = adac_mt_read(v->rt, t->mt, &mi, NULL) == 0 &&
	            (md = adac_ecma_for_module(v->rt, mi.module, NULL)) != NULL &&
	            adac_ecma_typedef(md, ADAC_ECMA_TOKEN_RID(mi.typedef_token), &td, NULL) == 0;
	struct adac_sig_text names = {0};
	const char *exact = NULL;
	uint64_t covered = 0;
	unsigned parts = 0;
	for (uint32_t pos = have ? td.field_first : 0; have && pos < td.field_end; pos++) {
		uint32_t rid, crid;
		struct adac_ecma_field f;
		struct adac_ecma_constant c;
		if (adac_ecma_list_item(md, ADAC_ECMA_FIELD, pos, &rid, NULL) || adac_ecma_field(md, rid, &f, NULL) ||
		    (f.flags & (FD_LITERAL | FD_STATIC)) != (FD_LITERAL | FD_STATIC) ||
		    adac_ecma_constant_of(md, ADAC_ECMA_TOKEN(ADAC_ECMA_FIELD, rid), &crid, NULL) ||
		    adac_ecma_constant(md, crid, &c, NULL) || c.value_len == 0 || c.value_len > 8)
			continue;
		uint8_t cb[8] = {0};
		memcpy(cb, c.value, c.value_len);
		bool cu;
		uint64_t cv = (uint64_t)int_value(c.type, cb, &cu) & (t->size >= 8 ? ~0ull : ((1ull << (t->size * 8)) - 1));
		if (cv == uval) {
			exact = f.name;
			break;
		}
		if (cv && (cv & uval) == cv) {
			if ((parts++ && adac_sig_text_put(&names, " | ", err)) || adac_sig_text_put(&names, f.name, err)) {
				adac_sig_text_free(&names);
				return -1;
			}
			covered |= cv;
		}
	}
	char num[32];
	if (uns)
		snprintf(num, sizeof num, "%llu", (unsigned long long)uval);
	else
		snprintf(num, sizeof num, "%lld", (long long)val);
	const char *shown = exact ? exact : (parts > 1 && covered == uval) ? adac_sig_text_str(&names) : num;
	int rc = put(o, err, shown);
	if (o->json) {
		json_t *j = json_object();
		struct adac_sig_text full = {0};
		if (adac_type_name_th(v->rt, t->mt, ADAC_TN_FULL, &full, NULL) == 0)
			json_object_set_new(j, "enum", json_string(adac_sig_text_str(&full)));
		adac_sig_text_free(&full);
		json_object_set_new(j, "name", shown == num ? json_null() : json_string(shown));
		json_object_set_new(j, "value", uns && val < 0 ? json_string(num) : json_integer(val));
		*o->json = j;
	}
	adac_sig_text_free(&names);
	return rc;
}

static int fmt_value(struct vf *v, const struct adac_vtype *t, const uint8_t *b, unsigned depth, struct out *o,
                     struct adac_error *err);
static int fmt_ref(struct vf *v, const struct adac_vtype *st, uint64_t obj, unsigned depth, bool in_braces,
                   struct out *o, struct adac_error *err);

/* A field list "{ A = 1, B = ... }" of mt's instance fields (and its parents' when `inherit`),
 * the field bytes coming from host memory (bytes, struct) or from the object at obj (class). */
struct fmt_fields_ctx {
	struct vf *v;
	struct out *o;
	json_t *fields;
	const uint8_t *bytes;   /* struct: the value's bytes (size bytes) */
	uint32_t size;
	uint64_t obj;           /* class: the object (fields at obj + ps + offset) */
	unsigned depth;
	unsigned shown;
	bool truncated;
};

static int fmt_field(void *ctx, struct field_view *f, struct adac_error *err)
{
	struct fmt_fields_ctx *c = ctx;
	struct vf *v = c->v;
	if (c->shown >= v->o->max_elements) {
		c->truncated = true;
		return 1;
	}
	if ((c->shown++ && put(c->o, err, ", ")) || adac_sig_text_putf(c->o->text, err, "%s = ", f->name[0] ? f->name : "?"))
		return -1;
	json_t *fj = NULL;
	struct out fo = {c->o->text, c->fields ? &fj : NULL};
	int rc;
	if (f->type.kind == ADAC_VK_UNKNOWN) {
		struct adac_error e = {0};
		adac_fail(&e, ADAC_E_UNSUPPORTED, 0, "%s", f->type.why ? f->type.why : "unknown type");
		rc = put_error(&fo, &e, err);
	} else if (c->bytes) {
		if ((uint64_t)f->offset + f->type.size > c->size) {
			struct adac_error e = {0};
			adac_fail(&e, ADAC_E_CORRUPT, 0, "field at %u + %u bytes is outside the %u-byte value", f->offset,
			          f->type.size, c->size);
			rc = put_error(&fo, &e, err);
		} else if (f->type.kind == ADAC_VK_REF) {
			uint64_t ref = v->ps == 8 ? adac_get_u64(c->bytes, f->offset) : adac_get_u32(c->bytes, f->offset);
			rc = fmt_ref(v, &f->type, ref, c->depth, true, &fo, err);
		} else {
			rc = fmt_value(v, &f->type, c->bytes + f->offset, c->depth, &fo, err);
		}
	} else {
		uint8_t small[64];
		uint8_t *buf = f->type.size <= sizeof small ? small : malloc(f->type.size ? f->type.size : 1);
		struct adac_error e = {0};
		if (!buf)
			return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		if (f->type.size > ADAC_MAX_VALUE_BYTES) {
			adac_fail(&e, ADAC_E_LIMIT, c->obj, "field of %u bytes (limit %u)", f->type.size, ADAC_MAX_VALUE_BYTES);
			rc = put_error(&fo, &e, err);
		} else if (adac_read(v->rt->t, c->obj + v->ps + f->offset, buf, f->type.size, &e)) {
			rc = put_error(&fo, &e, err);
		} else if (f->type.kind == ADAC_VK_REF) {
			uint64_t ref = v->ps == 8 ? adac_get_u64(buf, 0) : adac_get_u32(buf, 0);
			rc = fmt_ref(v, &f->type, ref, c->depth, true, &fo, err);
		} else {
			rc = fmt_value(v, &f->type, buf, c->depth, &fo, err);
		}
		if (buf != small)
			free(buf);
	}
	if (c->fields)
		json_object_set_new(c->fields, f->name[0] ? f->name : "?", fj ? fj : json_null());
	else
		json_decref(fj);
	return rc ? -1 : 0;
}

/* Instance fields of mt and, for classes, of its parents (base class first). */
static int fmt_fields(struct vf *v, uint64_t mt, bool inherit, struct fmt_fields_ctx *c, struct adac_error *err)
{
	uint64_t chain[ADAC_MAX_TYPE_DEPTH];
	unsigned n = 0;
	for (uint64_t cur = mt; cur;) {
		if (n >= ADAC_MAX_TYPE_DEPTH)
			return adac_fail(err, ADAC_E_LIMIT, mt, "MethodTable 0x%llx has more than %u base types",
			                 (unsigned long long)mt, ADAC_MAX_TYPE_DEPTH);
		chain[n++] = cur;
		if (!inherit)
			break;
		struct adac_mt_info mi;
		if (adac_mt_read(v->rt, cur, &mi, err))
			return -1;
		cur = mi.parent;
	}
	if (put(c->o, err, "{ "))
		return -1;
	for (unsigned i = n; i-- > 0;) {
		struct adac_error e = {0};
		int rc = for_each_field(v->rt, chain[i], fmt_field, c, &e);
		if (rc < 0) {
			if (e.code == ADAC_E_NOMEM || e.code == ADAC_E_LIMIT) {
				adac_error_copy(err, &e);
				return -1;
			}
			if ((c->shown++ && put(c->o, err, ", ")) || adac_sig_text_putf(c->o->text, err, "<error: %s>", e.msg))
				return -1;
		}
		if (c->truncated)
			break;
	}
	if (c->truncated && put(c->o, err, ", ..."))
		return -1;
	return put(c->o, err, c->shown ? " }" : "}");
}

static int fmt_struct(struct vf *v, const struct adac_vtype *t, const uint8_t *b, unsigned depth, struct out *o,
                      struct adac_error *err)
{
	if (t->is_enum)
		return fmt_enum(v, o, t, b, err);
	json_t *j = NULL;
	if (o->json) {
		j = json_object();
		struct adac_sig_text full = {0};
		if (adac_type_name_th(v->rt, t->mt, ADAC_TN_FULL, &full, NULL) == 0)
			json_object_set_new(j, "struct", json_string(adac_sig_text_str(&full)));
		adac_sig_text_free(&full);
		*o->json = j;
	}
	if (depth >= v->o->max_depth) {
		if (j)
			json_object_set_new(j, "truncated", json_true());
		return put(o, err, "{...}");
	}
	struct fmt_fields_ctx c = {.v = v, .o = o, .bytes = b, .size = t->size, .depth = depth + 1};
	if (j) {
		c.fields = json_object();
		json_object_set_new(j, "fields", c.fields);
	}
	if (fmt_fields(v, t->mt, false, &c, err))
		return -1;
	if (j && c.truncated)
		json_object_set_new(j, "truncated", json_true());
	return 0;
}

static int fmt_value(struct vf *v, const struct adac_vtype *t, const uint8_t *b, unsigned depth, struct out *o,
                     struct adac_error *err)
{
	switch (t->kind) {
	case ADAC_VK_PRIM:
		return fmt_prim(o, t->elem, t->size, b, err);
	case ADAC_VK_POINTER: {
		uint64_t p = v->ps == 8 ? adac_get_u64(b, 0) : adac_get_u32(b, 0);
		set_json(o, json_addr(p));
		return adac_sig_text_putf(o->text, err, "0x%016llx", (unsigned long long)p);
	}
	case ADAC_VK_REF: {
		uint64_t p = v->ps == 8 ? adac_get_u64(b, 0) : adac_get_u32(b, 0);
		return fmt_ref(v, t, p, depth, false, o, err);
	}
	case ADAC_VK_STRUCT:
		return fmt_struct(v, t, b, depth, o, err);
	default: {
		struct adac_error e = {0};
		adac_fail(&e, ADAC_E_UNSUPPORTED, 0, "%s", t->why ? t->why : "unknown type");
		return put_error(o, &e, err);
	}
	}
}

static int fmt_string(struct vf *v, uint64_t obj, bool with_addr, struct out *o, struct adac_error *err)
{
	uint32_t len;
	struct adac_error e = {0};
	if (adac_read_u32(v->rt->t, obj + v->str_len_off, &len, &e))
		return put_error(o, &e, err);
	uint32_t shown = len < v->o->max_string ? len : v->o->max_string;
	if (shown > ADAC_MAX_STRING_CHARS)
		shown = ADAC_MAX_STRING_CHARS;
	uint16_t *w = malloc((size_t)shown * 2 + 2);
	if (!w)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	if (shown && adac_read(v->rt->t, obj + v->str_chars_off, w, (size_t)shown * 2, &e)) {
		free(w);
		return put_error(o, &e, err);
	}
	struct adac_sig_text esc = {0}, raw = {0};
	int rc = utf16_convert(w, shown, '"', &esc, o->json ? &raw : NULL, err);
	free(w);
	if (rc == 0 && with_addr)
		rc = adac_sig_text_putf(o->text, err, "0x%016llx System.String ", (unsigned long long)obj);
	if (rc == 0)
		rc = adac_sig_text_putf(o->text, err, "\"%s\"", adac_sig_text_str(&esc));
	if (rc == 0 && shown < len)
		rc = adac_sig_text_putf(o->text, err, "... (length %u)", len);
	if (rc == 0 && o->json) {
		if (shown < len) {
			json_t *j = json_object();
			json_object_set_new(j, "string", json_string(adac_sig_text_str(&raw)));
			json_object_set_new(j, "length", json_integer(len));
			json_object_set_new(j, "truncated", json_true());
			*o->json = j;
		} else {
			*o->json = json_string(adac_sig_text_str(&raw));
		}
	}
	adac_sig_text_free(&esc);
	adac_sig_text_free(&raw);
	return rc;
}

static int fmt_array(struct vf *v, uint64_t obj, const struct adac_mt_info *mi, bool with_addr, unsigned depth,
                     struct out *o, struct adac_error *err)
{
	struct adac_error e = {0};
	uint32_t len;
	if (adac_read_u32(v->rt->t, obj + v->arr_len_off, &len, &e))
		return put_error(o, &e, err);
	struct adac_vtype et;
	if (adac_vtype_from_th(v->rt, mi->element_type, &et, &e))
		return put_error(o, &e, err);
	int rc = 0;
	if (with_addr)
		rc = adac_sig_text_putf(o->text, err, "0x%016llx ", (unsigned long long)obj);
	/* element type, then the dimensions: int[3], int[2,3] */
	if (rc == 0)
		rc = adac_sig_text_putf(o->text, err, "%s[", et.name);
	uint32_t rank = mi->rank ? mi->rank : 1;
	if (rc == 0 && rank == 1) {
		rc = adac_sig_text_putf(o->text, err, "%u", len);
	} else if (rc == 0) {
		for (uint32_t i = 0; i < rank && rc == 0; i++) {
			uint32_t dim = 0;
			if (adac_read_u32(v->rt->t, obj + 2ull * v->ps + 4ull * i, &dim, NULL))
				rc = adac_sig_text_put(o->text, i ? ",?" : "?", err);
			else
				rc = adac_sig_text_putf(o->text, err, i ? ",%u" : "%u", dim);
		}
	}
	if (rc == 0)
		rc = put(o, err, "] ");
	json_t *j = NULL, *vals = NULL;
	if (o->json) {
		j = json_object();
		struct adac_sig_text full = {0};
		if (adac_type_name_th(v->rt, mi->element_type, ADAC_TN_FULL, &full, NULL) == 0)
			json_object_set_new(j, "array", json_string(adac_sig_text_str(&full)));
		adac_sig_text_free(&full);
		json_object_set_new(j, "address", json_addr(obj));
		json_object_set_new(j, "length", json_integer(len));
		vals = json_array();
		json_object_set_new(j, "values", vals);
		*o->json = j;
	}
	if (rc)
		goto out;
	if (depth >= v->o->max_depth && len) {
		rc = put(o, err, "{...}");
		if (j)
			json_object_set_new(j, "truncated", json_true());
		goto out;
	}
	uint32_t shown = len < v->o->max_elements ? len : v->o->max_elements;
	uint32_t esize = mi->component_size;
	if (et.kind == ADAC_VK_UNKNOWN || esize == 0 || (uint64_t)shown * esize > ADAC_MAX_VALUE_BYTES) {
		adac_fail(&e, ADAC_E_UNSUPPORTED, obj, "elements of %s: %s", et.name,
		          et.kind == ADAC_VK_UNKNOWN && et.why ? et.why : "unknown size");
		rc = adac_sig_text_putf(o->text, err, "{ <error: %s> }", e.msg);
		if (j)
			json_object_set_new(j, "error", json_string(e.msg));
		goto out;
	}
	uint8_t *buf = malloc((size_t)shown * esize + 1);
	if (!buf) {
		rc = adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		goto out;
	}
	uint64_t data = obj + mi->base_size - v->ps;
	if (shown && adac_read(v->rt->t, data, buf, (size_t)shown * esize, &e)) {
		free(buf);
		rc = adac_sig_text_putf(o->text, err, "{ <error: %s> }", e.msg);
		if (j)
			json_object_set_new(j, "error", json_string(e.msg));
		goto out;
	}
	rc = put(o, err, shown ? "{ " : "{ }");
	for (uint32_t i = 0; i < shown && rc == 0; i++) {
		json_t *ej = NULL;
		struct out eo = {o->text, vals ? &ej : NULL};
		if (i)
			rc = put(o, err, ", ");
		if (rc == 0)
			rc = fmt_value(v, &et, buf + (size_t)i * esize, depth + 1, &eo, err);
		if (vals)
			json_array_append_new(vals, ej ? ej : json_null());
	}
	free(buf);
	if (rc == 0 && shown < len) {
		rc = put(o, err, shown ? ", ..." : "...");
		if (j)
			json_object_set_new(j, "truncated", json_true());
	}
	if (rc == 0 && shown)
		rc = put(o, err, " }");
out:
	adac_vtype_free(&et);
	return rc;
}

static int fmt_ref(struct vf *v, const struct adac_vtype *st, uint64_t obj, unsigned depth, bool in_braces,
                   struct out *o, struct adac_error *err)
{
	bool static_summary = st && (st->elem == ADAC_ELEM_STRING || st->elem == ADAC_ELEM_SZARRAY ||
	                             st->elem == ADAC_ELEM_ARRAY);
	if (in_braces && !static_summary && adac_sig_text_putf(o->text, err, "(%s) ", st ? st->name : "object"))
		return -1;
	if (obj == 0) {
		set_json(o, json_null());
		return put(o, err, "null");
	}
	struct adac_error e = {0};
	uint64_t mt;
	struct adac_mt_info mi;
	if (adac_object_mt(v->rt, obj, &mt, &e) || adac_mt_read(v->rt, mt, &mi, &e)) {
		if (adac_sig_text_putf(o->text, err, "0x%016llx ", (unsigned long long)obj))
			return -1;
		return put_error(o, &e, err);
	}
	if (mi.is_string)
		return fmt_string(v, obj, !(st && st->elem == ADAC_ELEM_STRING), o, err);
	if (mi.is_array)
		return fmt_array(v, obj, &mi, !(st && (st->elem == ADAC_ELEM_SZARRAY || st->elem == ADAC_ELEM_ARRAY)), depth, o,
		                 err);
	/* Address, then the dynamic type when it is not the static one. */
	struct adac_sig_text dyn = {0}, dyn_kw = {0};
	if (adac_type_name_th(v->rt, mt, ADAC_TN_FULL, &dyn, &e) ||
	    adac_type_name_th(v->rt, mt, ADAC_TN_KEYWORDS, &dyn_kw, &e)) {
		adac_sig_text_free(&dyn);
		adac_sig_text_free(&dyn_kw);
		if (adac_sig_text_putf(o->text, err, "0x%016llx ", (unsigned long long)obj))
			return -1;
		return put_error(o, &e, err);
	}
	bool same = st && st->name && strcmp(st->name, adac_sig_text_str(&dyn_kw)) == 0;
	int rc = adac_sig_text_putf(o->text, err, "0x%016llx ", (unsigned long long)obj);
	if (rc == 0 && (!same || mi.is_value_type))
		rc = adac_sig_text_putf(o->text, err, "%s ", adac_sig_text_str(&dyn));
	json_t *j = NULL;
	if (rc == 0 && o->json) {
		j = json_object();
		json_object_set_new(j, mi.is_value_type ? "boxed" : "class", json_string(adac_sig_text_str(&dyn)));
		json_object_set_new(j, "address", json_addr(obj));
		*o->json = j;
	}
	adac_sig_text_free(&dyn);
	adac_sig_text_free(&dyn_kw);
	if (rc)
		return -1;
	if (mi.is_value_type) {
		/* A boxed value: the value follows the MethodTable pointer. */
		struct adac_vtype bt;
		if (adac_vtype_from_th(v->rt, mt, &bt, &e))
			return put_error(o, &e, err);
		uint8_t small[64];
		uint8_t *buf = bt.size <= sizeof small ? small : malloc(bt.size ? bt.size : 1);
		if (!buf) {
			adac_vtype_free(&bt);
			return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		}
		json_t *vj = NULL;
		struct out vo = {o->text, j ? &vj : NULL};
		if (bt.size > ADAC_MAX_VALUE_BYTES)
			adac_fail(&e, ADAC_E_LIMIT, obj, "boxed value of %u bytes (limit %u)", bt.size, ADAC_MAX_VALUE_BYTES);
		if (e.code || adac_read(v->rt->t, obj + v->ps, buf, bt.size, &e))
			rc = put_error(&vo, &e, err);
		else
			rc = fmt_value(v, &bt, buf, depth, &vo, err);
		if (j)
			json_object_set_new(j, "value", vj ? vj : json_null());
		if (buf != small)
			free(buf);
		adac_vtype_free(&bt);
		return rc;
	}
	if (depth >= v->o->max_depth) {
		if (j)
			json_object_set_new(j, "truncated", json_true());
		return put(o, err, "{...}");
	}
	struct fmt_fields_ctx c = {.v = v, .o = o, .obj = obj, .depth = depth + 1};
	if (j) {
		c.fields = json_object();
		json_object_set_new(j, "fields", c.fields);
	}
	/* The JSON of the fields goes into c.fields; keep *o->json pointing at the object. */
	struct out fo = {o->text, NULL};
	c.o = &fo;
	if (fmt_fields(v, mt, true, &c, err))
		return -1;
	if (j && c.truncated)
		json_object_set_new(j, "truncated", json_true());
	return 0;
}

int adac_value_format(struct adac_runtime *rt, const struct adac_vtype *t, const uint8_t *bytes,
                      const struct adac_value_opts *o, struct adac_sig_text *text, json_t **json,
                      struct adac_error *err)
{
	struct vf v;
	if (json)
		*json = NULL;
	if (vf_init(rt, o, &v, err))
		return -1;
	struct out out = {text, json};
	return fmt_value(&v, t, bytes, 0, &out, err);
}

int adac_value_format_ref(struct adac_runtime *rt, const struct adac_vtype *t, uint64_t obj,
                          const struct adac_value_opts *o, struct adac_sig_text *text, json_t **json,
                          struct adac_error *err)
{
	struct vf v;
	if (json)
		*json = NULL;
	if (vf_init(rt, o, &v, err))
		return -1;
	struct out out = {text, json};
	return fmt_ref(&v, t, obj, 0, false, &out, err);
}
