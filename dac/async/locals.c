/* locals.c - collects the awaited locals of an async frame from the async debug info of its code
 * version. */
#include "async/locals.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async/async_frame.h"
#include "base/cursor.h"
#include "base/limits.h"
#include "base/strf.h"
#include "code/debuginfo.h"
#include "code/debuginfo_format.h"
#include "code/execution_manager.h"
#include "code/method_vars.h"
#include "metadata/ecma_metadata.h"
#include "metadata/pdb.h"
#include "metadata/signature.h"
#include "runtime/descriptor.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/corelib.h"
#include "types/fielddesc.h"
#include "types/methoddesc.h"
#include "types/names.h"
#include "types/typename.h"
#include "types/vtype.h"

#define NONE ADAC_LOCAL_NONE

/* ---- Building the list ---- */

/* A new zeroed local at the end of l, or NULL (err set). */
static struct adac_local *add_local(struct adac_locals *l, struct adac_error *err)
{
	if (l->n % 16 == 0) {
		struct adac_local *v = realloc(l->v, (l->n + 16) * sizeof *v);
		if (!v) {
			adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
			return NULL;
		}
		l->v = v;
	}
	struct adac_local *v = &l->v[l->n++];
	memset(v, 0, sizeof *v);
	v->offset = NONE;
	v->gc_index = NONE;
	return v;
}

void adac_locals_free(struct adac_locals *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].bytes);
		free(l->v[i].error);
		adac_vtype_free(&l->v[i].type);
	}
	free(l->v);
	free(l->warning);
	free(l->context);
	memset(l, 0, sizeof *l);
}

/* Reads `size` bytes of a flat-layout variable at continuation + offset. */
static int read_flat(struct adac_runtime *rt, const struct adac_async_frame *f, uint32_t obj_size, struct adac_local *v,
                     struct adac_error *err)
{
	v->address = f->cont.addr + v->offset;
	if ((uint64_t)v->offset + v->type.size > obj_size)
		return adac_strf(&v->error, err, "offset 0x%x + %u bytes is past the end of the %u-byte continuation", v->offset,
		               v->type.size, obj_size);
	v->bytes = malloc(v->type.size ? v->type.size : 1);
	if (!v->bytes)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	struct adac_error e = {0};
	if (adac_read(rt->t, v->address, v->bytes, v->type.size, &e)) {
		free(v->bytes);
		v->bytes = NULL;
		return adac_strf(&v->error, err, "%s", e.msg);
	}
	return 0;
}

/* An array object's element count and first element. */
struct array_view {
	uint64_t obj;
	uint32_t length;
	uint64_t data;
	uint32_t esize;
};

static int array_view(struct adac_runtime *rt, uint64_t obj, const char *what, struct array_view *a,
                      struct adac_error *err)
{
	memset(a, 0, sizeof *a);
	a->obj = obj;
	if (!obj)
		return 0;
	uint64_t mt;
	struct adac_mt_info mi;
	if (adac_object_mt(rt, obj, &mt, err) || adac_mt_read(rt, mt, &mi, err)) {
		adac_error_wrap(err, "%s 0x%llx: ", what, (unsigned long long)obj);
		return -1;
	}
	if (!mi.is_array || !mi.is_szarray || mi.component_size == 0)
		return adac_fail(err, ADAC_E_CORRUPT, obj, "%s 0x%llx is not a one-dimensional array", what,
		                 (unsigned long long)obj);
	if (adac_object_array_length(rt, obj, &a->length, err)) {
		adac_error_wrap(err, "%s 0x%llx: ", what, (unsigned long long)obj);
		return -1;
	}
	a->data = obj + mi.base_size - adac_target_ptr_size(rt->t);
	a->esize = mi.component_size;
	return 0;
}

/* The N references of an array-layout value, GCData[GCIndex .. GCIndex+N), into its reference
 * fields in b (offs: room for ADAC_MAX_REF_OFFSETS); -1 with why, a problem of this variable. */
static int read_refs(struct adac_runtime *rt, const struct adac_local *v, const struct array_view *gcdata,
                     uint32_t *offs, uint8_t *b, struct adac_error *why)
{
	unsigned ps = adac_target_ptr_size(rt->t);
	uint32_t n = 0, size = v->type.size;
	if (adac_vtype_ref_offsets(rt, &v->type, offs, ADAC_MAX_REF_OFFSETS, &n, why))
		return -1;
	if (n > ADAC_MAX_REF_OFFSETS)
		return adac_fail(why, ADAC_E_LIMIT, 0, "%u references in one value: more than ADAC_MAX_REF_OFFSETS (%u)", n,
		                 ADAC_MAX_REF_OFFSETS);
	if (!gcdata->obj || (uint64_t)v->gc_index + n > gcdata->length || gcdata->esize != ps)
		return adac_fail(why, ADAC_E_CORRUPT, 0, "GCData[%u..%llu) is outside the %u-element GCData array", v->gc_index,
		                 (unsigned long long)v->gc_index + n, gcdata->obj ? gcdata->length : 0);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t ref;
		if (offs[i] + ps > size)
			return adac_fail(why, ADAC_E_CORRUPT, 0, "reference at %u is outside the %u-byte value", offs[i], size);
		if (adac_read_ptr(rt->t, gcdata->data + (uint64_t)(v->gc_index + i) * ps, &ref, why))
			return -1;
		if (ps == 8) {
			memcpy(b + offs[i], &ref, 8);
		} else {
			uint32_t r32 = (uint32_t)ref;
			memcpy(b + offs[i], &r32, 4);
		}
	}
	return 0;
}

/* Array layout: S bytes from Data at Offset, then the N references from GCData[GCIndex..] into the
 * value's reference fields in ascending offset order. */
static int read_array(struct adac_runtime *rt, const struct array_view *data, const struct array_view *gcdata,
                      struct adac_local *v, struct adac_error *err)
{
	if (v->offset == NONE && v->gc_index == NONE)
		return adac_strf(&v->error, err, "the debug info gives neither a Data offset nor a GCData index");
	uint32_t size = v->type.size;
	uint8_t *b = calloc(1, size ? size : 1);
	if (!b)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	struct adac_error e = {0};
	if (v->offset != NONE) {
		if (!data->obj || (uint64_t)v->offset + size > data->length) {
			free(b);
			return adac_strf(&v->error, err, "Data[%u..%llu) is outside the %u-byte Data array", v->offset,
			               (unsigned long long)v->offset + size, data->obj ? data->length : 0);
		}
		v->address = data->data + v->offset;
		if (adac_read(rt->t, v->address, b, size, &e)) {
			free(b);
			return adac_strf(&v->error, err, "%s", e.msg);
		}
	}
	if (v->gc_index != NONE) {
		uint32_t *offs = malloc(ADAC_MAX_REF_OFFSETS * sizeof *offs);
		if (!offs) {
			free(b);
			return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		}
		int rc = read_refs(rt, v, gcdata, offs, b, &e);
		free(offs);
		if (rc) {
			free(b);
			return adac_strf(&v->error, err, "%s", e.msg);
		}
	}
	v->bytes = b;
	return 0;
}

/* The exact instantiation of shared code, as resolution found it. */
static void use_exact_context(struct adac_runtime *rt, const struct adac_async_frame *f, struct adac_method_vars *m,
                              struct adac_locals *out)
{
	if (!f->has_exact)
		return;
	const struct adac_exact_inst *x = &f->exact;
	struct adac_type_ctx exact;
	if (adac_type_ctx_for_mt(rt, x->method_table, &exact, NULL))
		return;
	m->tctx.class_inst = exact.class_inst;
	m->tctx.nclass = exact.nclass;
	m->this_mt = x->method_table;
	switch (x->from) {
	case ADAC_EXACT_METHOD_DESC: {
		struct adac_method_info cm;
		if (adac_md_read(rt, x->method_desc, &cm, NULL) == 0)
			m->tctx.method_inst = cm.generic_args_addr;
		adac_strf(&out->context, NULL, "generic context: InstantiatedMethodDesc 0x%llx", (unsigned long long)x->method_desc);
		break;
	}
	case ADAC_EXACT_METHOD_TABLE:
		adac_strf(&out->context, NULL, "generic context: MethodTable 0x%llx", (unsigned long long)x->method_table);
		break;
	case ADAC_EXACT_THIS:
		adac_strf(&out->context, NULL, "generic context: the type of this (MethodTable 0x%llx)",
		        (unsigned long long)x->method_table);
		break;
	}
}

/* Type and name of IL variable `vn` (code/method_vars.h); a number past the method's variables is
 * that variable's error. */
static int describe_var(struct adac_runtime *rt, const struct adac_method_vars *m, uint32_t il_offset,
                        struct adac_local *v, struct adac_error *err)
{
	struct adac_method_var mv;
	struct adac_error e = {0};
	if (adac_method_var(rt, m, v->var_number, il_offset, &mv, &e)) {
		if (e.code != ADAC_E_NOT_FOUND)
			return adac_error_copy(err, &e);
		v->kind = ADAC_LOCAL_LOCAL;
		v->index = (uint32_t)v->var_number - m->nargs;
		if (adac_strf(&v->name, err, "V_%u", v->index) || adac_strf(&v->type.name, err, "?"))
			return -1;
		return adac_strf(&v->error, err, "%s", e.msg);
	}
	v->kind = mv.kind == ADAC_VAR_THIS ? ADAC_LOCAL_THIS : mv.kind == ADAC_VAR_ARG ? ADAC_LOCAL_ARG : ADAC_LOCAL_LOCAL;
	v->index = mv.index;
	v->temporary = mv.temporary;
	v->name = mv.name;
	v->type = mv.type;
	v->error = mv.error;
	return 0; /* mv's strings now belong to v */
}

static const char *special_name(int32_t vn)
{
	switch (vn) {
	case ADAC_ILNUM_VARARGS_HND: return "varargs handle";
	case ADAC_ILNUM_RETBUF: return "return buffer";
	case ADAC_ILNUM_TYPECTXT: return "generic context";
	case ADAC_ILNUM_UNKNOWN: return "unknown variable";
	case ADAC_ILNUM_CALL_RETURN: return "call return";
	default: return NULL;
	}
}

/* A negative VarNumber: shown as the pointer it holds. */
static int describe_special(struct adac_runtime *rt, struct adac_local *v, struct adac_error *err)
{
	unsigned ps = adac_target_ptr_size(rt->t);
	const char *name = special_name(v->var_number);
	v->kind = v->var_number == ADAC_ILNUM_TYPECTXT ? ADAC_LOCAL_GENERIC_CONTEXT : ADAC_LOCAL_SPECIAL;
	if (name ? adac_strf(&v->name, err, "%s", name) : adac_strf(&v->name, err, "var %d", v->var_number))
		return -1;
	v->type.kind = ADAC_VK_POINTER;
	v->type.elem = ADAC_ELEM_I;
	v->type.size = ps;
	return adac_strf(&v->type.name, err, "nint");
}

static int kind_rank(enum adac_local_kind k)
{
	switch (k) {
	case ADAC_LOCAL_THIS: return 0;
	case ADAC_LOCAL_ARG: return 1;
	case ADAC_LOCAL_LOCAL: return 2;
	case ADAC_LOCAL_GENERIC_CONTEXT: return 3;
	case ADAC_LOCAL_SPECIAL: return 4;
	default: return 5;
	}
}

static int cmp_locals(const void *a, const void *b)
{
	const struct adac_local *x = a, *y = b;
	int rx = kind_rank(x->kind), ry = kind_rank(y->kind);
	if (rx != ry)
		return rx - ry;
	if (x->kind == ADAC_LOCAL_SLOT)
		return 0;
	if (x->kind == ADAC_LOCAL_SPECIAL || x->kind == ADAC_LOCAL_GENERIC_CONTEXT)
		return x->var_number < y->var_number ? 1 : x->var_number > y->var_number ? -1 : 0;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* The Flags and the well-known slots they locate (flat layout): their raw values. */
static int add_slots(struct adac_runtime *rt, const struct adac_async_frame *f, uint32_t obj_size,
                     struct adac_locals *out, struct adac_error *err)
{
	const struct adac_cont_layout *cl;
	if (adac_cont_layout(rt, &cl, err))
		return -1;
	struct adac_local *v = add_local(out, err);
	if (!v || adac_strf(&v->name, err, "Flags"))
		return -1;
	v->kind = ADAC_LOCAL_SLOT;
	v->slot = ADAC_LOCAL_FLAGS;
	if (!cl->has_flags)
		return adac_strf(&v->error, err, "%s",
		               cl->class_mt ? "the Continuation class has no instance field Flags"
		                            : "the runtime has not loaded the Continuation class");
	v->type.kind = ADAC_VK_PRIM;
	v->type.elem = ADAC_ELEM_U4;
	v->type.size = 4;
	v->offset = cl->flags;
	if (read_flat(rt, f, obj_size, v, err))
		return -1;
	if (!v->bytes)
		return 0;
	uint32_t flags = adac_get_u32(v->bytes, 0);
	out->has_flags = true;
	out->flags = flags;
	const struct adac_cont_flags *fl;
	struct adac_error e = {0};
	if (adac_cont_flags(rt, &fl, &e))
		return adac_strf(&v->error, err, "0x%08x: %s", flags, e.msg);
	unsigned ps = adac_target_ptr_size(rt->t);
	for (int i = 0; i < ADAC_CONT_SLOT_COUNT; i++) {
		uint32_t index = adac_cont_flags_index(fl, flags, (enum adac_cont_slot)i);
		if (!index)
			continue;
		if (!(v = add_local(out, err)))
			return -1;
		v->kind = ADAC_LOCAL_SLOT;
		v->slot = i;
		v->slot_index = index;
		v->offset = cl->data_start + (index - 1) * ps;
		bool result = i == ADAC_CONT_SLOT_RESULT;
		const char *static_type = i == ADAC_CONT_SLOT_EXECUTION_CONTEXT ? "System.Threading.ExecutionContext"
		                        : i == ADAC_CONT_SLOT_EXCEPTION         ? "System.Exception"
		                                                                : "object";
		if (adac_strf(&v->name, err, "%s", result ? "result" : adac_cont_slot_name((enum adac_cont_slot)i)) ||
		    (!result && adac_strf(&v->type.name, err, "%s", static_type)))
			return -1;
		/* The result's type is the awaited call's return type, which the continuation does not
		 * record: its raw pointer-sized contents. */
		v->type.kind = result ? ADAC_VK_POINTER : ADAC_VK_REF;
		v->type.elem = result ? ADAC_ELEM_I : ADAC_ELEM_CLASS;
		v->type.size = ps;
		if (read_flat(rt, f, obj_size, v, err))
			return -1;
	}
	return 0;
}

/* The array layout's debug info: its continuations do not say which code version made them, so
 * the method's current code's (resolution found none). */
static int current_code_debug_info(struct adac_runtime *rt, const struct adac_async_frame *f,
                                   const struct adac_debug_info **di, struct adac_error *err)
{
	/* Only the .NET 11 encoding has an async chunk to say where a local lives. */
	enum adac_debuginfo_format format;
	if (adac_debuginfo_format_of(rt->desc, &format, err))
		return -1;
	if (format != ADAC_DEBUGINFO_FORMAT_NET11) {
		const char *tag = adac_desc_contract(rt->desc, "DebugInfo");
		return adac_fail(err, ADAC_E_UNSUPPORTED, f->cont.addr,
		                 "the runtime records no async debug info (DebugInfo contract %s): where an array-layout "
		                 "continuation keeps each local is not known",
		                 tag ? tag : "absent");
	}
	uint64_t native = 0;
	struct adac_code_info code;
	if (adac_md_native_code(rt, f->method_desc, &native, err))
		return -1;
	if (!native)
		return adac_fail(err, ADAC_E_NOT_FOUND, f->method_desc, "the method has no native code");
	if (adac_em_find_code(rt, native, &code, err) || adac_debuginfo_get(rt, &code, di, err))
		return -1;
	if ((*di)->hdr.cb_async == 0)
		return adac_fail(err, ADAC_E_UNSUPPORTED, f->cont.addr,
		                 "the runtime records no async debug info for array-layout continuations");
	return 0;
}

/* The frame's debug info and the suspension point State names in it, with the verdict in words. */
static int frame_suspension_point(struct adac_runtime *rt, const struct adac_async_frame *f,
                                  const struct adac_debug_info **di, const struct adac_suspension_point **sp,
                                  enum adac_state_verdict *verdict, char *why, size_t size, struct adac_error *err)
{
	if (f->debug_info) {
		*di = f->debug_info;
		*sp = f->sp;
		*verdict = f->state_verdict;
		snprintf(why, size, "%s", f->state_why);
	} else if (f->cont.layout == ADAC_CONT_FLAT) {
		if (!f->cont.diagnostic_ip)
			return adac_fail(err, ADAC_E_NOT_FOUND, f->cont.addr, "the continuation has no DiagnosticIP");
		if (adac_failed(&f->debug_info_err)) {
			adac_error_copy(err, &f->debug_info_err);
			return -1;
		}
		return adac_fail(err, ADAC_E_NOT_FOUND, f->cont.addr, "the frame has no debug info");
	} else {
		if (current_code_debug_info(rt, f, di, err))
			return -1;
		*verdict = adac_state_check(*di, f->cont.state, false, 0, sp, why, size);
	}
	if ((*di)->hdr.cb_async == 0) {
		if (f->has_code && f->code.kind == ADAC_CODE_R2R)
			return adac_fail(err, ADAC_E_NOT_FOUND, f->cont.addr,
			                 "precompiled (ReadyToRun) code: its debug info has no async chunk");
		return adac_fail(err, ADAC_E_NOT_FOUND, f->cont.addr, "the code's debug info has no async chunk");
	}
	if (*verdict == ADAC_STATE_UNCHECKED)
		return adac_fail(err, ADAC_E_NOT_FOUND, f->cont.addr, "the debug info lists no async suspension points");
	if (*verdict == ADAC_STATE_OUT_OF_RANGE)
		return adac_fail(err, ADAC_E_CORRUPT, f->cont.addr, "%s", why);
	return 0;
}

int adac_frame_locals_collect(struct adac_runtime *rt, const struct adac_async_frame *f, struct adac_locals *out,
                              struct adac_error *err)
{
	memset(out, 0, sizeof *out);
	out->layout = f->cont.layout;
	out->il_offset = ADAC_IL_NO_MAPPING;
	if (f->infrastructure)
		return adac_fail(err, ADAC_E_NOT_FOUND, f->cont.addr, "an infrastructure continuation has no locals");
	if (!f->method_desc)
		return adac_fail(err, ADAC_E_NOT_FOUND, f->cont.addr, "the frame's method is not known");
	const struct adac_debug_info *di = NULL;
	const struct adac_suspension_point *sp = NULL;
	enum adac_state_verdict verdict = ADAC_STATE_UNCHECKED;
	char why[ADAC_STATE_WHY_MAX];
	if (frame_suspension_point(rt, f, &di, &sp, &verdict, why, sizeof why, err))
		return -1;
	enum adac_cont_layout_kind layout = f->cont.layout;
	int32_t state = f->cont.state;
	out->state = (uint32_t)state;
	out->native_offset = sp->diagnostic_native_offset;
	if (verdict == ADAC_STATE_MISMATCH && adac_strf(&out->warning, err, "%s", why))
		return -1;
	out->il_offset = f->has_il ? f->il_offset : adac_debuginfo_il_offset(di, sp->diagnostic_native_offset, NULL);
	if (layout == ADAC_CONT_ARRAY && sp->num_vars % 2) {
		adac_locals_free(out);
		return adac_fail(err, ADAC_E_CORRUPT, f->cont.addr,
		                 "array-layout debug info: suspension point %d lists %u entries, not (Offset, GCIndex) pairs", state,
		                 sp->num_vars);
	}

	struct adac_method_vars m;
	if (adac_method_vars_init(rt, f->method_desc, &m, err)) {
		adac_locals_free(out);
		adac_error_wrap(err, "method 0x%llx: ", (unsigned long long)f->method_desc);
		return -1;
	}
	use_exact_context(rt, f, &m, out);

	unsigned ps = adac_target_ptr_size(rt->t);
	uint32_t obj_size = 0;
	struct array_view data = {0}, gcdata = {0};
	int rc = 0;
	if (layout == ADAC_CONT_FLAT) {
		struct adac_mt_info cm;
		if (adac_mt_read(rt, f->cont.mt, &cm, err))
			goto fail;
		obj_size = cm.base_size > ps ? cm.base_size - ps : 0;
	} else if (array_view(rt, f->cont.data, "Data", &data, err) || array_view(rt, f->cont.gc_data, "GCData", &gcdata, err)) {
		goto fail;
	}
	uint32_t step = layout == ADAC_CONT_ARRAY ? 2 : 1;
	for (uint32_t i = 0; i < sp->num_vars; i += step) {
		const struct adac_async_var *av = &sp->vars[i];
		struct adac_local *v = add_local(out, err);
		if (!v)
			goto fail;
		v->var_number = av->var_number;
		if (layout == ADAC_CONT_ARRAY) {
			if (sp->vars[i + 1].var_number != av->var_number) {
				adac_fail(err, ADAC_E_CORRUPT, f->cont.addr,
				          "array-layout debug info: entries %u and %u name variables %d and %d, not one (Offset, GCIndex) pair",
				          i, i + 1, av->var_number, sp->vars[i + 1].var_number);
				goto fail;
			}
			v->offset = av->offset;
			v->gc_index = sp->vars[i + 1].offset;
		} else {
			v->offset = av->offset;
		}
		if (av->var_number < 0)
			rc = describe_special(rt, v, err);
		else
			rc = describe_var(rt, &m, out->il_offset, v, err);
		if (rc)
			goto fail;
		if (v->error)
			continue;
		if (v->type.kind == ADAC_VK_UNKNOWN || v->type.size == 0) {
			if (adac_strf(&v->error, err, "%s", v->type.why ? v->type.why : "the type's size is not known"))
				goto fail;
			continue;
		}
		rc = layout == ADAC_CONT_FLAT ? read_flat(rt, f, obj_size, v, err) : read_array(rt, &data, &gcdata, v, err);
		if (rc)
			goto fail;
	}
	if (out->n > 1)
		qsort(out->v, out->n, sizeof *out->v, cmp_locals);
	if (layout == ADAC_CONT_FLAT && add_slots(rt, f, obj_size, out, err))
		goto fail;
	adac_method_vars_free(&m);
	return 0;
fail:
	adac_method_vars_free(&m);
	adac_locals_free(out);
	return -1;
}

