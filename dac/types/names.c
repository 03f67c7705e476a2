/* names.c - method and type display names (stack-trace/SOS style, or exactly the DAC's), cached. */
#include "types/names.h"

#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "metadata/ecma_metadata.h"
#include "runtime/loader.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/methoddesc.h"

/* TypeString format flags (typestring.h) for the DAC style. */
#define TS_NAMESPACE 0x1u
#define TS_FULLINST 0x2u
#define TS_ASSEMBLY 0x4u

static int fmt_display(struct adac_runtime *rt, uint64_t th, unsigned flags, unsigned depth, struct adac_sig_text *out,
                       struct adac_error *err);
static int fmt_typestring(struct adac_runtime *rt, uint64_t th, unsigned ts, unsigned depth, struct adac_sig_text *out,
                          struct adac_error *err);
static int fmt_sigformat(struct adac_runtime *rt, uint64_t th, unsigned depth, struct adac_sig_text *out,
                         struct adac_error *err);

static int depth_check(unsigned depth, uint64_t th, struct adac_error *err)
{
	if (depth >= ADAC_MAX_TYPE_DEPTH)
		return adac_fail(err, ADAC_E_LIMIT, th, "type 0x%llx nests types deeper than %u", (unsigned long long)th,
		                 ADAC_MAX_TYPE_DEPTH);
	return 0;
}

/* ---- Metadata pieces ---- */

static const struct adac_ecma *module_md(struct adac_runtime *rt, uint64_t module, struct adac_error *err)
{
	return adac_ecma_for_module(rt, module, err);
}

/* The generic parameter name of a TypeVarTypeDesc (GenericParam token in its module). */
static int typevar_name(struct adac_runtime *rt, const struct adac_th_info *ti, struct adac_sig_text *out,
                        struct adac_error *err)
{
	const struct adac_ecma *md = module_md(rt, ti->module, err);
	struct adac_ecma_genericparam gp;
	if (!md || ADAC_ECMA_TOKEN_TABLE(ti->token) != ADAC_ECMA_GENERICPARAM ||
	    adac_ecma_genericparam(md, ADAC_ECMA_TOKEN_RID(ti->token), &gp, err)) {
		if (md && ADAC_ECMA_TOKEN_TABLE(ti->token) != ADAC_ECMA_GENERICPARAM)
			adac_fail(err, ADAC_E_CORRUPT, ti->type_handle, "TypeVarTypeDesc 0x%llx has token 0x%08x",
			          (unsigned long long)ti->type_handle, ti->token);
		return -1;
	}
	return adac_sig_text_put(out, gp.name, err);
}

/* ---- Display style ---- */

static bool is_prim_elem(uint8_t e)
{
	return (e >= ADAC_ELEM_VOID && e <= ADAC_ELEM_R8) || e == ADAC_ELEM_I || e == ADAC_ELEM_U;
}

static int put_array_suffix(struct adac_sig_text *out, const struct adac_mt_info *mt, bool dac, struct adac_error *err)
{
	if (mt->is_szarray)
		return adac_sig_text_put(out, "[]", err);
	if (adac_sig_text_put(out, "[", err))
		return -1;
	if (mt->rank == 1 && !dac && adac_sig_text_put(out, "*", err))
		return -1;
	for (uint32_t i = 1; i < mt->rank; i++)
		if (adac_sig_text_put(out, ",", err))
			return -1;
	return adac_sig_text_put(out, "]", err);
}

/* The i-th of an array of TypeHandles (an instantiation, a function pointer's return and
 * parameters), read one at a time: the block cache makes that cheap, and deep nesting costs no stack. */
static int th_at(struct adac_runtime *rt, uint64_t addr, uint32_t i, uint64_t *th, struct adac_error *err)
{
	return adac_read_ptr(rt->t, addr + (uint64_t)i * adac_target_ptr_size(rt->t), th, err);
}

/* A formatter of TypeHandles: the display style (with its ADAC_NAME_ flags), the DAC's TypeString
 * (with its TS_ flags) or the DAC's SigFormat. */
enum th_style { STYLE_DISPLAY, STYLE_TYPESTRING, STYLE_SIGFORMAT };
struct th_fmt {
	enum th_style style;
	unsigned flags;
};

static int fmt_th(struct adac_runtime *rt, uint64_t th, struct th_fmt f, unsigned depth, struct adac_sig_text *out,
                  struct adac_error *err)
{
	switch (f.style) {
	case STYLE_DISPLAY:
		return fmt_display(rt, th, f.flags, depth, out, err);
	case STYLE_TYPESTRING:
		return fmt_typestring(rt, th, f.flags, depth, out, err);
	default:
		return fmt_sigformat(rt, th, depth, out, err);
	}
}

/* Appends `count` TypeHandles of the array at arr from index `first`, each formatted by f one level
 * deeper, with sep between them. */
static int put_th_list(struct adac_runtime *rt, uint64_t arr, uint32_t first, uint32_t count, const char *sep,
                       struct th_fmt f, unsigned depth, struct adac_sig_text *out, struct adac_error *err)
{
	for (uint32_t k = 0; k < count; k++) {
		uint64_t a;
		if ((k && adac_sig_text_put(out, sep, err)) || th_at(rt, arr, first + k, &a, err) ||
		    fmt_th(rt, a, f, depth + 1, out, err))
			return -1;
	}
	return 0;
}

/* A function pointer type: its return type, `open`, its parameter types ", "-separated (then ", ..."
 * for a vararg signature when `vararg`), ")". */
static int put_fnptr(struct adac_runtime *rt, const struct adac_th_info *ti, const char *open, bool vararg,
                     struct th_fmt f, unsigned depth, struct adac_sig_text *out, struct adac_error *err)
{
	if (put_th_list(rt, ti->ret_and_args, 0, 1, "", f, depth, out, err) || adac_sig_text_put(out, open, err) ||
	    put_th_list(rt, ti->ret_and_args, 1, ti->num_args, ", ", f, depth, out, err))
		return -1;
	if (vararg && (ti->callconv & ADAC_SIG_CC_MASK) == ADAC_SIG_CC_VARARG && adac_sig_text_put(out, ", ...", err))
		return -1;
	return adac_sig_text_put(out, ")", err);
}

static int fmt_display_mt(struct adac_runtime *rt, const struct adac_mt_info *mt, unsigned flags, unsigned depth,
                          struct adac_sig_text *out, struct adac_error *err)
{
	if (mt->is_array)
		return fmt_display(rt, mt->element_type, flags, depth + 1, out, err) || put_array_suffix(out, mt, false, err);
	if (is_prim_elem(mt->signature_elem))
		return adac_sig_text_put(out, adac_sig_prim_name(mt->signature_elem), err);
	if (mt->is_continuation_without_metadata)
		return fmt_display(rt, mt->parent, flags, depth + 1, out, err);
	uint32_t rid = ADAC_ECMA_TOKEN_RID(mt->typedef_token);
	if (rid == 0)
		return adac_sig_text_put(out, "(dynamicClass)", err);
	const struct adac_ecma *md = module_md(rt, mt->module, err);
	if (!md || adac_sig_append_type_token(md, mt->typedef_token, ADAC_STYLE_DISPLAY,
	                                      (flags & ADAC_NAME_NO_NAMESPACE) ? ADAC_SIG_NO_NAMESPACE : 0,
	                                      mt->num_generic_args != 0, out, err))
		return -1;
	if (mt->num_generic_args == 0)
		return 0;
	struct th_fmt f = {STYLE_DISPLAY, flags};
	if (adac_sig_text_put(out, "<", err) ||
	    put_th_list(rt, mt->instantiation, 0, mt->num_generic_args, ", ", f, depth, out, err))
		return -1;
	return adac_sig_text_put(out, ">", err);
}

static int fmt_display(struct adac_runtime *rt, uint64_t th, unsigned flags, unsigned depth, struct adac_sig_text *out,
                       struct adac_error *err)
{
	struct adac_th_info ti;
	if (depth_check(depth, th, err) || adac_th_read(rt, th, &ti, err))
		return -1;
	switch (ti.kind) {
	case ADAC_TH_METHODTABLE: {
		struct adac_mt_info mt;
		if (adac_mt_read(rt, th, &mt, err))
			return -1;
		return fmt_display_mt(rt, &mt, flags, depth, out, err);
	}
	case ADAC_TH_PARAM:
		if (fmt_display(rt, ti.type_arg, flags, depth + 1, out, err))
			return -1;
		return ti.elem == ADAC_ELEM_BYREF ? adac_sig_text_put(out, "&", err)
		     : ti.elem == ADAC_ELEM_PTR   ? adac_sig_text_put(out, "*", err)
		                                  : 0;
	case ADAC_TH_TYPEVAR:
		return typevar_name(rt, &ti, out, err);
	case ADAC_TH_FNPTR:
		return put_fnptr(rt, &ti, " (", false, (struct th_fmt){STYLE_DISPLAY, flags}, depth, out, err);
	}
	return 0;
}

/* ---- DAC style: TypeString (TypeNameBuilder) ---- */

/* Nested TypeDef names "Ns.Outer+Inner" as TypeString::AppendNestedTypeDef, escaped. */
static int typestring_typedef(const struct adac_ecma *md, uint32_t rid, unsigned ts, struct adac_sig_text *out,
                              struct adac_error *err)
{
	uint32_t chain[ADAC_MAX_TYPE_NESTING];
	unsigned n = 0;
	uint32_t cur = rid;
	while (cur) {
		if (n == ADAC_MAX_TYPE_NESTING)
			return adac_fail(err, ADAC_E_LIMIT, 0, "TypeDef row %u is nested more than %u deep", rid,
			                 ADAC_MAX_TYPE_NESTING);
		chain[n++] = cur;
		struct adac_ecma_typedef td;
		if (adac_ecma_typedef(md, cur, &td, err))
			return -1;
		if (!(ts & TS_NAMESPACE) || (td.flags & 7) < 2) /* not nested (tdNestedPublic..) */
			break;
		if (adac_ecma_enclosing_type(md, cur, &cur, err))
			return -1;
	}
	for (unsigned i = n; i-- > 0;) {
		struct adac_ecma_typedef td;
		if (adac_ecma_typedef(md, chain[i], &td, err))
			return -1;
		if (i != n - 1 && adac_sig_text_put(out, "+", err))
			return -1;
		if ((ts & TS_NAMESPACE) && td.ns[0] &&
		    (adac_sig_text_put_escaped(out, td.ns, err) || adac_sig_text_put(out, ".", err)))
			return -1;
		if (adac_sig_text_put_escaped(out, td.name, err))
			return -1;
	}
	return 0;
}

/* Module of a TypeHandle, for its assembly name (TypeHandle::GetAssembly). */
static int th_module(struct adac_runtime *rt, uint64_t th, unsigned depth, uint64_t *module, struct adac_error *err)
{
	struct adac_th_info ti;
	if (depth_check(depth, th, err) || adac_th_read(rt, th, &ti, err))
		return -1;
	switch (ti.kind) {
	case ADAC_TH_METHODTABLE: {
		struct adac_mt_info mt;
		if (adac_mt_read(rt, th, &mt, err))
			return -1;
		*module = mt.module;
		return 0;
	}
	case ADAC_TH_PARAM:
		return th_module(rt, ti.type_arg, depth + 1, module, err);
	case ADAC_TH_TYPEVAR:
		*module = ti.module;
		return 0;
	default:
		*module = 0;
		return 0;
	}
}

static int put_assembly(struct adac_runtime *rt, uint64_t th, unsigned depth, struct adac_sig_text *out,
                        struct adac_error *err)
{
	uint64_t module = 0;
	if (th_module(rt, th, depth, &module, err))
		return -1;
	if (module == 0)
		return 0;
	const struct adac_loader_module *m = adac_loader_module(rt, module, err);
	if (!m)
		return -1;
	if (!m->simple_name[0])
		return 0;
	if (adac_sig_text_put(out, ", ", err))
		return -1;
	for (const char *p = m->simple_name; *p; p++)
		if ((*p == ']' && adac_sig_text_put(out, "\\", err)) || adac_sig_text_putn(out, p, 1, err))
			return -1;
	return 0;
}

static bool th_is_typevar(struct adac_runtime *rt, uint64_t th)
{
	struct adac_th_info ti;
	return adac_th_read(rt, th, &ti, NULL) == 0 && ti.kind == ADAC_TH_TYPEVAR;
}

/* TypeString::AppendInst: "[" then per argument "[Type, Assembly]" (or "Type" for a generic
 * variable or without FormatFullInst), "," between, then "]". */
static int typestring_inst(struct adac_runtime *rt, uint64_t args, uint32_t n, unsigned ts, unsigned depth,
                           struct adac_sig_text *out, struct adac_error *err)
{
	if (adac_sig_text_put(out, "[", err))
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t a;
		if ((i && adac_sig_text_put(out, ",", err)) || th_at(rt, args, i, &a, err))
			return -1;
		if ((ts & TS_FULLINST) && !th_is_typevar(rt, a)) {
			if (adac_sig_text_put(out, "[", err) ||
			    fmt_typestring(rt, a, ts | TS_NAMESPACE | TS_ASSEMBLY, depth + 1, out, err) ||
			    adac_sig_text_put(out, "]", err))
				return -1;
		} else if (fmt_typestring(rt, a, ts & TS_NAMESPACE, depth + 1, out, err)) {
			return -1;
		}
	}
	return adac_sig_text_put(out, "]", err);
}

static int fmt_typestring(struct adac_runtime *rt, uint64_t th, unsigned ts, unsigned depth, struct adac_sig_text *out,
                          struct adac_error *err)
{
	struct adac_th_info ti;
	if (depth_check(depth, th, err) || adac_th_read(rt, th, &ti, err))
		return -1;
	struct adac_mt_info mt;
	if (ti.kind == ADAC_TH_METHODTABLE && adac_mt_read(rt, th, &mt, err))
		return -1;
	if (ti.kind == ADAC_TH_METHODTABLE && mt.is_array) {
		if (fmt_typestring(rt, mt.element_type, ts & ~TS_ASSEMBLY, depth + 1, out, err) ||
		    put_array_suffix(out, &mt, false, err))
			return -1;
	} else if (ti.kind == ADAC_TH_PARAM) {
		if (ti.elem == ADAC_ELEM_VALUETYPE && adac_sig_text_put(out, "VALUETYPE", err))
			return -1;
		if (fmt_typestring(rt, ti.type_arg, ts & ~TS_ASSEMBLY, depth + 1, out, err))
			return -1;
		if (ti.elem == ADAC_ELEM_BYREF && adac_sig_text_put(out, "&", err))
			return -1;
		if (ti.elem == ADAC_ELEM_PTR && adac_sig_text_put(out, "*", err))
			return -1;
	} else if (ti.kind == ADAC_TH_TYPEVAR) {
		return typevar_name(rt, &ti, out, err); /* no assembly for generic variables */
	} else if (ti.kind == ADAC_TH_FNPTR) {
		if ((ts & TS_NAMESPACE) &&
		    put_fnptr(rt, &ti, "(", false, (struct th_fmt){STYLE_TYPESTRING, ts}, depth, out, err))
			return -1;
	} else {
		uint32_t rid = ADAC_ECMA_TOKEN_RID(mt.typedef_token);
		if (mt.is_continuation_without_metadata || rid == 0) {
			if (adac_sig_text_put(out, "(dynamicClass)", err))
				return -1;
		} else {
			const struct adac_ecma *md = module_md(rt, mt.module, err);
			if (!md || typestring_typedef(md, rid, ts, out, err))
				return -1;
		}
		if ((ts & (TS_NAMESPACE | TS_ASSEMBLY)) && mt.num_generic_args && !mt.is_generic_definition) {
			if (typestring_inst(rt, mt.instantiation, mt.num_generic_args, ts, depth, out, err))
				return -1;
		}
	}
	if (ts & TS_ASSEMBLY)
		return put_assembly(rt, th, depth, out, err);
	return 0;
}

/* ---- DAC style: SigFormat::AddType (runtime TypeHandles in parameter lists) ---- */

static int fmt_sigformat(struct adac_runtime *rt, uint64_t th, unsigned depth, struct adac_sig_text *out,
                         struct adac_error *err)
{
	struct adac_th_info ti;
	if (depth_check(depth, th, err) || adac_th_read(rt, th, &ti, err))
		return -1;
	switch (ti.kind) {
	case ADAC_TH_METHODTABLE: {
		struct adac_mt_info mt;
		if (adac_mt_read(rt, th, &mt, err))
			return -1;
		if (mt.is_array)
			return fmt_sigformat(rt, mt.element_type, depth + 1, out, err) || put_array_suffix(out, &mt, true, err);
		if (is_prim_elem(mt.signature_elem))
			return adac_sig_text_put(out, adac_sig_prim_name(mt.signature_elem), err);
		uint32_t rid = ADAC_ECMA_TOKEN_RID(mt.typedef_token);
		const struct adac_ecma *md = module_md(rt, mt.module, err);
		struct adac_ecma_typedef td;
		if (!md)
			return -1;
		if (rid == 0 || mt.is_continuation_without_metadata || adac_ecma_typedef(md, rid, &td, NULL)) {
			if (adac_sig_text_put(out, "Invalid TypeDef record", err))
				return -1;
		} else if ((td.ns[0] && (adac_sig_text_put(out, td.ns, err) || adac_sig_text_put(out, ".", err))) ||
		           adac_sig_text_put(out, td.name, err)) {
			return -1;
		}
		if (mt.num_generic_args) {
			struct th_fmt f = {STYLE_SIGFORMAT, 0};
			if (adac_sig_text_put(out, "<", err) ||
			    put_th_list(rt, mt.instantiation, 0, mt.num_generic_args, ",", f, depth, out, err))
				return -1;
			return adac_sig_text_put(out, ">", err);
		}
		return 0;
	}
	case ADAC_TH_PARAM:
		if (ti.elem == ADAC_ELEM_VALUETYPE)
			return fmt_sigformat(rt, ti.type_arg, depth + 1, out, err);
		return fmt_sigformat(rt, ti.type_arg, depth + 1, out, err) ||
		       adac_sig_text_put(out, ti.elem == ADAC_ELEM_BYREF ? " ByRef" : "*", err);
	case ADAC_TH_TYPEVAR:
		return typevar_name(rt, &ti, out, err);
	case ADAC_TH_FNPTR:
		return put_fnptr(rt, &ti, " (", true, (struct th_fmt){STYLE_SIGFORMAT, 0}, depth, out, err);
	}
	return 0;
}

/* SigFormat's ELEMENT_TYPE_INTERNAL: the TypeDef name of the handle's MethodTable, no instantiation. */
static int sigformat_internal(struct adac_runtime *rt, uint64_t th, struct adac_sig_text *out, struct adac_error *err)
{
	struct adac_mt_info mt;
	struct adac_ecma_typedef td;
	if (adac_mt_read(rt, th, &mt, err))
		return -1;
	const struct adac_ecma *md = module_md(rt, mt.module, err);
	if (!md || adac_ecma_typedef(md, ADAC_ECMA_TOKEN_RID(mt.typedef_token), &td, err))
		return -1;
	if (td.ns[0] && (adac_sig_text_put(out, td.ns, err) || adac_sig_text_put(out, ".", err)))
		return -1;
	return adac_sig_text_put(out, td.name, err);
}

/* ---- Signature names bound to a method ---- */

static int mn_token(void *ctx, uint32_t token, bool generic_base, struct adac_sig_text *out, struct adac_error *err)
{
	struct adac_method_names *n = ctx;
	if (!n->md)
		return adac_sig_text_putf(out, err, "0x%08x", token);
	return adac_sig_append_type_token(n->md, token, n->names.style, n->names.flags, generic_base, out, err);
}

static int mn_var(void *ctx, bool method_var, uint32_t index, struct adac_sig_text *out, struct adac_error *err)
{
	struct adac_method_names *n = ctx;
	uint32_t count = method_var ? n->nmethod : n->nclass;
	uint64_t addr = method_var ? n->method_inst_addr : n->class_inst_addr;
	bool dac = n->names.style == ADAC_STYLE_DAC;
	if (index < count && (addr || (!method_var && n->class_inst_one))) {
		uint64_t th = n->class_inst_one;
		if (addr && th_at(n->rt, addr, index, &th, err))
			return -1;
		unsigned flags = (n->names.flags & ADAC_SIG_NO_NAMESPACE) ? ADAC_NAME_NO_NAMESPACE : 0;
		return dac ? fmt_sigformat(n->rt, th, n->depth + 1, out, err) : fmt_display(n->rt, th, flags, n->depth + 1, out, err);
	}
	uint32_t owner = method_var ? n->method_token : n->type_token;
	if (!dac && n->md && owner) {
		uint32_t rid = 0;
		struct adac_ecma_genericparam gp;
		if (adac_ecma_generic_param(n->md, owner, index, &rid, NULL) == 0 && adac_ecma_genericparam(n->md, rid, &gp, NULL) == 0)
			return adac_sig_text_put(out, gp.name, err);
	}
	return adac_sig_text_putf(out, err, "%s%u", method_var ? "!!" : "!", index);
}

static int mn_handle(void *ctx, uint64_t th, struct adac_sig_text *out, struct adac_error *err)
{
	struct adac_method_names *n = ctx;
	if (n->names.style == ADAC_STYLE_DAC)
		return sigformat_internal(n->rt, th, out, err);
	unsigned flags = (n->names.flags & ADAC_SIG_NO_NAMESPACE) ? ADAC_NAME_NO_NAMESPACE : 0;
	return fmt_display(n->rt, th, flags, n->depth + 1, out, err);
}

static int names_for(struct adac_runtime *rt, const struct adac_method_info *mi, unsigned flags,
                     struct adac_method_names *n, struct adac_error *err)
{
	memset(n, 0, sizeof *n);
	n->names.ctx = n;
	n->names.style = (flags & ADAC_NAME_DAC) ? ADAC_STYLE_DAC : ADAC_STYLE_DISPLAY;
	n->names.flags = (flags & ADAC_NAME_NO_NAMESPACE) ? ADAC_SIG_NO_NAMESPACE : 0;
	n->names.token = mn_token;
	n->names.var = mn_var;
	n->names.handle = mn_handle;
	n->rt = rt;
	n->module = mi->module;
	n->method_token = mi->token;
	struct adac_mt_info mt;
	if (adac_mt_read(rt, mi->method_table, &mt, err))
		return -1;
	n->type_token = ADAC_ECMA_TOKEN_RID(mt.typedef_token) ? mt.typedef_token : 0;
	n->nclass = mt.num_generic_args;
	n->class_inst_addr = mt.instantiation;
	if (mt.is_array) {
		/* An array type's class instantiation is its element type (SigTypeContext for arrays). */
		n->nclass = 1;
		n->class_inst_one = mt.element_type;
	}
	n->nmethod = mi->num_generic_args;
	n->method_inst_addr = mi->generic_args_addr;
	if (flags & ADAC_NAME_DAC) {
		/* The DAC leaves the variables of a typical instantiation unresolved ("!0", "!!0"; checked
		 * with ClrMD on 11.0.0); the display style names them (T) instead. */
		if (mt.is_generic_definition)
			n->nclass = 0;
		if (mi->imd_kind == ADAC_IMD_GENERIC_METHOD_DEFINITION)
			n->nmethod = 0;
	}
	n->md = module_md(rt, mi->module, err);
	return n->md ? 0 : -1;
}

int adac_names_for_method(struct adac_runtime *rt, uint64_t method_desc, unsigned flags, struct adac_method_names *out,
                          struct adac_error *err)
{
	struct adac_method_info mi;
	if (adac_md_read(rt, method_desc, &mi, err))
		return -1;
	return names_for(rt, &mi, flags, out, err);
}

int adac_names_append_type(struct adac_runtime *rt, uint64_t type_handle, unsigned flags, struct adac_sig_text *out,
                           struct adac_error *err)
{
	if (flags & ADAC_NAME_DAC)
		return fmt_typestring(rt, type_handle, TS_NAMESPACE | TS_FULLINST, 0, out, err);
	return fmt_display(rt, type_handle, flags, 0, out, err);
}

/* ---- Method names ---- */

static const char *const array_method_names[] = {"Get", "Set", "Address", ".ctor"};

/* Decodes and formats the parameters of a method signature blob. */
static int put_params(const uint8_t *sig, size_t len, unsigned ps, const struct adac_sig_names *names,
                      struct adac_sig_text *out, struct adac_error *err)
{
	struct adac_sig *s;
	if (adac_sig_decode(sig, len, ADAC_SIG_METHOD, ps, &s, err))
		return -1;
	int rc = adac_sig_format_params(&s->method, names, out, err);
	adac_sig_free(s);
	return rc;
}

/* exact_mt: the method's type as this instantiation of it (0: the MethodDesc's own). */
static int format_method(struct adac_runtime *rt, uint64_t md_addr, uint64_t exact_mt, unsigned flags,
                         struct adac_sig_text *out, struct adac_error *err)
{
	struct adac_method_info mi;
	if (adac_md_read(rt, md_addr, &mi, err))
		return -1;
	if (exact_mt)
		mi.method_table = exact_mt;
	bool dac = (flags & ADAC_NAME_DAC) != 0;
	unsigned ps = adac_target_ptr_size(rt->t);
	struct adac_method_names n;
	if (names_for(rt, &mi, flags, &n, err))
		return -1;

	/* Type part and method name. */
	const char *name = NULL;
	uint8_t *stored = NULL;
	if (mi.classification == ADAC_MD_DYNAMIC) {
		char *dyn = NULL;
		if (mi.dynamic_name) {
			dyn = adac_read_cstring(rt->t, mi.dynamic_name, ADAC_MAX_STRING_CHARS, err);
			if (!dyn)
				return -1;
		}
		int rc = 0;
		if (dac)
			rc = adac_sig_text_put(out, mi.is_lcg ? "DynamicClass." : mi.is_il_stub ? "ILStubClass." : ".", err);
		if (rc == 0)
			rc = adac_sig_text_put(out, dyn ? dyn : "", err);
		free(dyn);
		if (rc)
			return -1;
	} else {
		if (dac ? fmt_typestring(rt, mi.method_table, TS_NAMESPACE | TS_FULLINST, 0, out, err)
		        : fmt_display(rt, mi.method_table, flags, 0, out, err))
			return -1;
		if (adac_sig_text_put(out, ".", err))
			return -1;
		struct adac_ecma_methoddef row;
		if (mi.classification == ADAC_MD_ARRAY) {
			name = array_method_names[mi.array_function < 0 ? 0 : mi.array_function > 3 ? 3 : mi.array_function];
		} else if (mi.token == 0) {
			return adac_fail(err, ADAC_E_CORRUPT, md_addr, "MethodDesc 0x%llx has no metadata token",
			                 (unsigned long long)md_addr);
		} else {
			if (adac_ecma_methoddef(n.md, ADAC_ECMA_TOKEN_RID(mi.token), &row, err))
				return -1;
			name = row.name;
		}
		if (adac_sig_text_put(out, name, err))
			return -1;
	}

	/* Method instantiation. */
	bool has_inst = mi.classification == ADAC_MD_INSTANTIATED &&
	                (mi.imd_kind == ADAC_IMD_GENERIC_METHOD_DEFINITION || mi.generic_args_addr != 0);
	if (has_inst && mi.num_generic_args) {
		if (dac) {
			if (mi.imd_kind != ADAC_IMD_GENERIC_METHOD_DEFINITION &&
			    typestring_inst(rt, mi.generic_args_addr, mi.num_generic_args, TS_NAMESPACE | TS_FULLINST, 0, out, err))
				return -1;
		} else {
			if (adac_sig_text_put(out, "<", err))
				return -1;
			for (uint32_t i = 0; i < mi.num_generic_args; i++) {
				uint64_t a;
				if ((i && adac_sig_text_put(out, ", ", err)) || th_at(rt, mi.generic_args_addr, i, &a, err) ||
				    fmt_display(rt, a, flags, 1, out, err))
					return -1;
			}
			if (adac_sig_text_put(out, ">", err))
				return -1;
		}
	}

	if (!(flags & ADAC_NAME_PARAMS))
		return 0;
	/* Parameters: the stored signature of dynamic/array/EEImpl methods, else the metadata's. */
	if (mi.stored_sig && mi.stored_sig_len) {
		if (mi.stored_sig_len > ADAC_MAX_NAME_BYTES)
			return adac_fail(err, ADAC_E_LIMIT, mi.stored_sig, "MethodDesc 0x%llx: stored signature of %u bytes (limit %u)",
			                 (unsigned long long)md_addr, mi.stored_sig_len, ADAC_MAX_NAME_BYTES);
		stored = malloc(mi.stored_sig_len);
		if (!stored)
			return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		int rc = adac_read(rt->t, mi.stored_sig, stored, mi.stored_sig_len, err);
		if (rc == 0) {
			size_t mark = out->len;
			struct adac_error e2 = {0};
			rc = put_params(stored, mi.stored_sig_len, ps, &n.names, out, &e2);
			if (rc && dac) {
				/* The DAC falls back to the name alone when a stub's signature does not format. */
				out->len = mark;
				if (out->s)
					out->s[mark] = '\0';
				rc = 0;
			} else if (rc && err) {
				adac_error_copy(err, &e2);
			}
		}
		free(stored);
		return rc;
	}
	if (mi.classification == ADAC_MD_DYNAMIC || mi.classification == ADAC_MD_ARRAY)
		return adac_sig_text_put(out, "()", err);
	struct adac_ecma_methoddef row;
	if (adac_ecma_methoddef(n.md, ADAC_ECMA_TOKEN_RID(mi.token), &row, err))
		return -1;
	return put_params(row.sig, row.sig_len, ps, &n.names, out, err);
}

/* ---- Cache ---- */

struct name_entry {
	uint64_t key, key2; /* MethodDesc and exact MethodTable (0), or TypeHandle (and 0) */
	unsigned flags; /* ADAC_NAME_* | 0x100 for type names */
	char *name;
};

struct name_cache {
	struct name_entry *e;
	size_t cap, n;
};

static void cache_clear(struct name_cache *c)
{
	for (size_t i = 0; i < c->cap; i++)
		free(c->e[i].name);
	free(c->e);
	c->e = NULL;
	c->cap = c->n = 0;
}

static void cache_free(void *p)
{
	cache_clear(p);
	free(p);
}

static size_t cache_hash(uint64_t key, uint64_t key2, unsigned flags)
{
	uint64_t h = (key ^ ((uint64_t)flags << 56) ^ key2 * 0xc2b2ae3d27d4eb4full) * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 20);
}

static struct name_cache *get_cache(struct adac_runtime *rt, struct adac_error *err)
{
	struct name_cache *c = adac_runtime_slot(rt, ADAC_SLOT_NAMES);
	if (c)
		return c;
	c = calloc(1, sizeof *c);
	if (!c) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		return NULL;
	}
	adac_runtime_set_slot(rt, ADAC_SLOT_NAMES, c, cache_free);
	return c;
}

static const char *cache_find(struct name_cache *c, uint64_t key, uint64_t key2, unsigned flags)
{
	if (!c->cap)
		return NULL;
	for (size_t i = cache_hash(key, key2, flags) & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
		if (!c->e[i].name)
			return NULL;
		if (c->e[i].key == key && c->e[i].key2 == key2 && c->e[i].flags == flags)
			return c->e[i].name;
	}
}

static const char *cache_put(struct name_cache *c, uint64_t key, uint64_t key2, unsigned flags, char *name,
                             struct adac_error *err)
{
	if (c->n >= ADAC_MAX_NAME_CACHE) {
		/* Names handed out stay valid until the runtime closes, so the cache cannot start over. */
		free(name);
		adac_fail(err, ADAC_E_LIMIT, key, "more than %u distinct method and type names (limit %u)",
		          ADAC_MAX_NAME_CACHE, ADAC_MAX_NAME_CACHE);
		return NULL;
	}
	if ((c->n + 1) * 2 > c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		struct name_entry *e = calloc(cap, sizeof *e);
		if (!e) {
			free(name);
			adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
			return NULL;
		}
		for (size_t i = 0; i < c->cap; i++) {
			if (!c->e[i].name)
				continue;
			size_t j = cache_hash(c->e[i].key, c->e[i].key2, c->e[i].flags) & (cap - 1);
			while (e[j].name)
				j = (j + 1) & (cap - 1);
			e[j] = c->e[i];
		}
		free(c->e);
		c->e = e;
		c->cap = cap;
	}
	size_t i = cache_hash(key, key2, flags) & (c->cap - 1);
	while (c->e[i].name)
		i = (i + 1) & (c->cap - 1);
	c->e[i] = (struct name_entry){key, key2, flags, name};
	c->n++;
	return name;
}

static const char *cached(struct adac_runtime *rt, uint64_t key, uint64_t key2, unsigned flags, bool type,
                          struct adac_error *err)
{
	struct name_cache *c = get_cache(rt, err);
	if (!c)
		return NULL;
	unsigned cflags = flags | (type ? 0x100u : 0);
	const char *hit = cache_find(c, key, key2, cflags);
	if (hit)
		return hit;
	struct adac_sig_text t = {0};
	int rc = type ? adac_names_append_type(rt, key, flags, &t, err) : format_method(rt, key, key2, flags, &t, err);
	if (rc) {
		adac_sig_text_free(&t);
		return NULL;
	}
	return cache_put(c, key, key2, cflags, adac_sig_text_take(&t), err);
}

const char *adac_method_name(struct adac_runtime *rt, uint64_t method_desc, unsigned flags, struct adac_error *err)
{
	return cached(rt, method_desc, 0, flags, false, err);
}

const char *adac_method_name_in(struct adac_runtime *rt, uint64_t method_desc, uint64_t exact_mt, unsigned flags,
                                struct adac_error *err)
{
	return cached(rt, method_desc, exact_mt, flags, false, err);
}

const char *adac_type_name(struct adac_runtime *rt, uint64_t type_handle, unsigned flags, struct adac_error *err)
{
	return cached(rt, type_handle, 0, flags, true, err);
}

const char *adac_module_path(struct adac_runtime *rt, uint64_t module, struct adac_error *err)
{
	const struct adac_loader_module *m = adac_loader_module(rt, module, err);
	return m ? m->path : NULL;
}

const char *adac_module_file_name(struct adac_runtime *rt, uint64_t module, struct adac_error *err)
{
	const struct adac_loader_module *m = adac_loader_module(rt, module, err);
	return m ? m->file_name : NULL;
}
