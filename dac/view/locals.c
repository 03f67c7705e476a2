/* locals.c - the awaited locals of an async frame, from the async debug info of its code version. */
#include "view/locals.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async/async_frame.h"
#include "base/cursor.h"
#include "base/limits.h"
#include "base/strf.h"
#include "base/output.h"
#include "code/debuginfo.h"
#include "code/execution_manager.h"
#include "metadata/ecma_metadata.h"
#include "metadata/pdb.h"
#include "metadata/signature.h"
#include "runtime/descriptor.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/corelib.h"
#include "types/fielddesc.h"
#include "types/methoddesc.h"
#include "types/names.h"
#include "view/method_vars.h"

#define NONE UINT32_MAX
#define FD_LITERAL 0x40u
#define FD_STATIC 0x10u

/* ---- ContinuationFlags, read from the target CoreLib's metadata ---- */

enum { SLOT_EXECUTION_CONTEXT, SLOT_CONTINUATION_CONTEXT, SLOT_EXCEPTION, SLOT_RESULT, SLOT_COUNT };

static const char *const slot_names[SLOT_COUNT] = {"ExecutionContext", "ContinuationContext", "Exception", "Result"};


struct locals_state {
	bool tried;
	struct adac_error why;         /* when the flags cannot be decoded: why not */
	uint32_t flags_offset;         /* Continuation.Flags, from the object address */
	uint32_t data_start;           /* first byte of the data area, from the object address */
	uint32_t first_bit[SLOT_COUNT], num_bits[SLOT_COUNT];
	unsigned nnames;
	const char *flag_name[ADAC_MAX_FLAG_NAMES];   /* single-bit members (ContinueOnThreadPool, ...) */
	uint32_t flag_value[ADAC_MAX_FLAG_NAMES];
};

static void state_free(void *p) { free(p); }

/* Literal fields of CoreLib's System.Runtime.CompilerServices.ContinuationFlags. */
static int read_flag_constants(struct adac_runtime *rt, struct locals_state *s, struct adac_error *err)
{
	uint64_t corelib;
	if (adac_corelib_module(rt, &corelib, err))
		return -1;
	const struct adac_ecma *md = adac_ecma_for_module(rt, corelib, err);
	uint32_t rid;
	struct adac_ecma_typedef td;
	if (!md || adac_ecma_find_typedef(md, "System.Runtime.CompilerServices", "ContinuationFlags", 0, &rid, err) ||
	    adac_ecma_typedef(md, rid, &td, err))
		return -1;
	bool have_first[SLOT_COUNT] = {0}, have_bits[SLOT_COUNT] = {0};
	for (uint32_t pos = td.field_first; pos < td.field_end; pos++) {
		uint32_t frid, crid;
		struct adac_ecma_field f;
		struct adac_ecma_constant c;
		if (adac_ecma_list_item(md, ADAC_ECMA_FIELD, pos, &frid, err) || adac_ecma_field(md, frid, &f, err))
			return -1;
		if ((f.flags & (FD_LITERAL | FD_STATIC)) != (FD_LITERAL | FD_STATIC))
			continue;
		if (adac_ecma_constant_of(md, ADAC_ECMA_TOKEN(ADAC_ECMA_FIELD, frid), &crid, err) ||
		    adac_ecma_constant(md, crid, &c, err))
			return -1;
		if (c.value_len != 4)
			return adac_fail(err, ADAC_E_CORRUPT, 0, "ContinuationFlags.%s: constant of %u bytes", f.name, c.value_len);
		uint32_t v;
		memcpy(&v, c.value, 4);
		bool matched = false;
		for (int i = 0; i < SLOT_COUNT; i++) {
			char want[64];
			snprintf(want, sizeof want, "%sIndexFirstBit", slot_names[i]);
			if (strcmp(f.name, want) == 0) {
				s->first_bit[i] = v;
				have_first[i] = matched = true;
			}
			snprintf(want, sizeof want, "%sIndexNumBits", slot_names[i]);
			if (strcmp(f.name, want) == 0) {
				s->num_bits[i] = v;
				have_bits[i] = matched = true;
			}
		}
		if (!matched && v && (v & (v - 1)) == 0 && s->nnames < ADAC_MAX_FLAG_NAMES) {
			s->flag_name[s->nnames] = f.name;
			s->flag_value[s->nnames++] = v;
		}
	}
	for (int i = 0; i < SLOT_COUNT; i++) {
		if (!have_first[i] || !have_bits[i])
			return adac_fail(err, ADAC_E_UNSUPPORTED, 0,
			                 "CoreLib's ContinuationFlags has no %sIndexFirstBit/%sIndexNumBits (an older flags layout)",
			                 slot_names[i], slot_names[i]);
		if (s->first_bit[i] >= 32 || s->num_bits[i] == 0 || s->num_bits[i] > 32 - s->first_bit[i])
			return adac_fail(err, ADAC_E_CORRUPT, 0, "ContinuationFlags: %s index at bit %u, %u bits", slot_names[i],
			                 s->first_bit[i], s->num_bits[i]);
	}
	return 0;
}

/* Continuation.Flags' offset from the Continuation class's FieldDesc; the data area's start. */
static int read_layout(struct adac_runtime *rt, struct locals_state *s, struct adac_error *err)
{
	uint64_t where, mt = 0;
	if (adac_desc_global(rt->desc, "ContinuationMethodTable", &where, NULL) == 0)
		adac_read_ptr(rt->t, where, &mt, NULL);
	if (!mt) {
		uint64_t corelib;
		if (adac_corelib_module(rt, &corelib, err) ||
		    adac_module_type(rt, corelib, "System.Runtime.CompilerServices", "Continuation", &mt, err))
			return -1;
		if (!mt)
			return adac_fail(err, ADAC_E_NOT_FOUND, 0, "the runtime has not loaded the Continuation class");
	}
	if (adac_mt_field_offset(rt, mt, "Flags", &s->flags_offset, err))
		return -1;
	uint32_t size = 0;
	if (adac_desc_type_size(rt->desc, "ContinuationObject", &size, NULL) == 0 && size) {
		s->data_start = size;
	} else {
		struct adac_mt_info mi;
		if (adac_mt_read(rt, mt, &mi, err))
			return -1;
		s->data_start = mi.base_size - adac_target_ptr_size(rt->t);
	}
	return 0;
}

static struct locals_state *get_state(struct adac_runtime *rt, struct adac_error *err)
{
	struct locals_state *s = adac_runtime_slot(rt, ADAC_SLOT_LOCALS);
	if (!s) {
		s = calloc(1, sizeof *s);
		if (!s) {
			adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
			return NULL;
		}
		adac_runtime_set_slot(rt, ADAC_SLOT_LOCALS, s, state_free);
	}
	if (!s->tried) {
		s->tried = true;
		if (read_layout(rt, s, &s->why) == 0 && read_flag_constants(rt, s, &s->why) != 0)
			adac_error_wrap(&s->why, "ContinuationFlags: ");
	}
	return s;
}

/* ---- Building the list ---- */

static int add_local(struct adac_locals *l, struct adac_local **out, struct adac_error *err)
{
	if (l->n % 16 == 0) {
		struct adac_local *v = realloc(l->v, (l->n + 16) * sizeof *v);
		if (!v)
			return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		l->v = v;
	}
	*out = &l->v[l->n++];
	memset(*out, 0, sizeof **out);
	(*out)->offset = NONE;
	(*out)->gc_index = NONE;
	return 0;
}

void adac_locals_free(struct adac_locals *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].bytes);
		free(l->v[i].text);
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
	uint32_t len_off;
	if (adac_object_mt(rt, obj, &mt, err) || adac_mt_read(rt, mt, &mi, err) ||
	    adac_desc_field(rt->desc, "Array", "m_NumComponents", &len_off, err)) {
		adac_error_wrap(err, "%s 0x%llx: ", what, (unsigned long long)obj);
		return -1;
	}
	if (!mi.is_array || !mi.is_szarray || mi.component_size == 0)
		return adac_fail(err, ADAC_E_CORRUPT, obj, "%s 0x%llx is not a one-dimensional array", what,
		                 (unsigned long long)obj);
	if (adac_read_u32(rt->t, obj + len_off, &a->length, err))
		return -1;
	a->data = obj + mi.base_size - adac_target_ptr_size(rt->t);
	a->esize = mi.component_size;
	return 0;
}

/* Array layout: S bytes from Data at Offset, then the N references from GCData[GCIndex..] into the
 * value's reference fields in ascending offset order. */
static int read_array(struct adac_runtime *rt, const struct array_view *data, const struct array_view *gcdata,
                      struct adac_local *v, struct adac_error *err)
{
	unsigned ps = adac_target_ptr_size(rt->t);
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
		uint32_t offs[256], n = 0;
		if (adac_vtype_ref_offsets(rt, &v->type, offs, 256, &n, &e) || n > 256) {
			free(b);
			if (n > 256)
				adac_fail(&e, ADAC_E_LIMIT, 0, "%u references in one value (limit 256)", n);
			return adac_strf(&v->error, err, "%s", e.msg);
		}
		if (!gcdata->obj || (uint64_t)v->gc_index + n > gcdata->length || gcdata->esize != ps) {
			free(b);
			return adac_strf(&v->error, err, "GCData[%u..%llu) is outside the %u-element GCData array", v->gc_index,
			               (unsigned long long)v->gc_index + n, gcdata->obj ? gcdata->length : 0);
		}
		for (uint32_t i = 0; i < n; i++) {
			uint64_t ref;
			if (offs[i] + ps > size) {
				free(b);
				return adac_strf(&v->error, err, "reference at %u is outside the %u-byte value", offs[i], size);
			}
			if (adac_read_ptr(rt->t, gcdata->data + (uint64_t)(v->gc_index + i) * ps, &ref, &e)) {
				free(b);
				return adac_strf(&v->error, err, "%s", e.msg);
			}
			if (ps == 8)
				memcpy(b + offs[i], &ref, 8);
			else {
				uint32_t r32 = (uint32_t)ref;
				memcpy(b + offs[i], &r32, 4);
			}
		}
	}
	v->bytes = b;
	return 0;
}

/* The exact instantiation of shared code, from the generic context variable or `this`. */
static void find_exact_context(struct adac_runtime *rt, const struct adac_async_frame *f, struct adac_method_vars *m,
                               const struct adac_suspension_point *sp, struct adac_locals *out)
{
	struct adac_exact_inst x;
	if (!adac_frame_exact_inst(rt, f, sp, &x))
		return;
	struct adac_type_ctx exact;
	if (adac_type_ctx_for_mt(rt, x.method_table, &exact, NULL))
		return;
	m->tctx.class_inst = exact.class_inst;
	m->tctx.nclass = exact.nclass;
	m->this_mt = x.method_table;
	switch (x.from) {
	case ADAC_EXACT_METHOD_DESC: {
		struct adac_method_info cm;
		if (adac_md_read(rt, x.method_desc, &cm, NULL) == 0)
			m->tctx.method_inst = cm.generic_args_addr;
		adac_strf(&out->context, NULL, "generic context: InstantiatedMethodDesc 0x%llx", (unsigned long long)x.method_desc);
		break;
	}
	case ADAC_EXACT_METHOD_TABLE:
		adac_strf(&out->context, NULL, "generic context: MethodTable 0x%llx", (unsigned long long)x.method_table);
		break;
	case ADAC_EXACT_THIS:
		adac_strf(&out->context, NULL, "generic context: the type of this (MethodTable 0x%llx)",
		        (unsigned long long)x.method_table);
		break;
	}
}

/* Type and name of IL variable `vn` (method_vars.h); a number past the method's variables is that
 * variable's error. */
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

/* What the generic context pointer names. */
static int context_text(struct adac_runtime *rt, struct adac_local *v, struct adac_error *err)
{
	if (!v->bytes)
		return 0;
	uint64_t p = adac_target_ptr_size(rt->t) == 8 ? adac_get_u64(v->bytes, 0) : adac_get_u32(v->bytes, 0);
	const char *what = NULL;
	struct adac_mt_info mi;
	struct adac_method_info mdi;
	if (p && adac_mt_read(rt, p, &mi, NULL) == 0)
		what = adac_type_name(rt, p, 0, NULL);
	else if (p && adac_md_read(rt, p, &mdi, NULL) == 0)
		what = adac_method_name(rt, p, ADAC_NAME_PARAMS, NULL);
	return adac_strf(&v->text, err, "0x%016llx%s%s", (unsigned long long)p, what ? " " : "", what ? what : "");
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

/* The well-known slots the Flags locate (flat layout). */
static int add_slots(struct adac_runtime *rt, const struct adac_async_frame *f, uint32_t obj_size,
                     struct adac_locals *out, struct adac_error *err)
{
	struct locals_state *s = get_state(rt, err);
	if (!s)
		return -1;
	struct adac_local *v;
	if (s->why.code && s->flags_offset == 0) {
		if (add_local(out, &v, err) || adac_strf(&v->name, err, "Flags"))
			return -1;
		v->kind = ADAC_LOCAL_SLOT;
		return adac_strf(&v->error, err, "%s", s->why.msg);
	}
	unsigned ps = adac_target_ptr_size(rt->t);
	uint32_t flags;
	struct adac_error e = {0};
	if (add_local(out, &v, err) || adac_strf(&v->name, err, "Flags"))
		return -1;
	v->kind = ADAC_LOCAL_SLOT;
	v->offset = s->flags_offset;
	v->address = f->cont.addr + s->flags_offset;
	if (adac_read_u32(rt->t, v->address, &flags, &e))
		return adac_strf(&v->error, err, "%s", e.msg);
	out->has_flags = true;
	out->flags = flags;
	if (s->why.code)
		return adac_strf(&v->error, err, "0x%08x: %s", flags, s->why.msg);
	/* "0x00001010 { ContinueOnThreadPool, ExecutionContext = 1, Result = 2 }" */
	char buf[512];
	size_t used = (size_t)snprintf(buf, sizeof buf, "0x%08x {", flags);
	unsigned parts = 0;
	for (unsigned i = 0; i < s->nnames && used < sizeof buf; i++)
		if (flags & s->flag_value[i])
			used += (size_t)snprintf(buf + used, sizeof buf - used, "%s %s", parts++ ? "," : "", s->flag_name[i]);
	uint32_t index[SLOT_COUNT];
	for (int i = 0; i < SLOT_COUNT; i++) {
		uint32_t mask = s->num_bits[i] >= 32 ? UINT32_MAX : (1u << s->num_bits[i]) - 1;
		index[i] = (flags >> s->first_bit[i]) & mask;
		if (index[i] && used < sizeof buf)
			used += (size_t)snprintf(buf + used, sizeof buf - used, "%s %s = %u", parts++ ? "," : "", slot_names[i],
			                         index[i]);
	}
	if (used < sizeof buf)
		snprintf(buf + used, sizeof buf - used, "%s}", parts ? " " : "");
	if (adac_strf(&v->text, err, "%s", buf))
		return -1;
	for (int i = 0; i < SLOT_COUNT; i++) {
		if (!index[i])
			continue;
		if (add_local(out, &v, err))
			return -1;
		v->kind = ADAC_LOCAL_SLOT;
		v->offset = s->data_start + (index[i] - 1) * ps;
		v->address = f->cont.addr + v->offset;
		const char *static_type = i == SLOT_EXECUTION_CONTEXT ? "System.Threading.ExecutionContext"
		                        : i == SLOT_EXCEPTION         ? "System.Exception"
		                        : "object";
		if (adac_strf(&v->name, err, "%s", i == SLOT_RESULT ? "result" : slot_names[i]) ||
		    (i != SLOT_RESULT && adac_strf(&v->type.name, err, "%s", static_type)))
			return -1;
		v->type.kind = ADAC_VK_REF;
		v->type.elem = ADAC_ELEM_CLASS;
		v->type.size = ps;
		if (i == SLOT_RESULT) {
			/* Its type is the awaited call's return type, which the continuation does not record. */
			v->type.kind = ADAC_VK_POINTER;
			v->type.elem = ADAC_ELEM_I;
		}
		if (read_flat(rt, f, obj_size, v, err))
			return -1;
		if (i == SLOT_RESULT && v->bytes) {
			uint64_t raw = ps == 8 ? adac_get_u64(v->bytes, 0) : adac_get_u32(v->bytes, 0);
			if (adac_strf(&v->text, err, "0x%016llx (slot %u at 0x%016llx; written when the awaited call completes)",
			            (unsigned long long)raw, index[i], (unsigned long long)v->address))
				return -1;
		}
	}
	return 0;
}

int adac_frame_locals_collect_with(struct adac_runtime *rt, const struct adac_async_frame *f,
                                   enum adac_cont_layout_kind layout, const struct adac_debug_info *di,
                                   struct adac_locals *out, struct adac_error *err)
{
	memset(out, 0, sizeof *out);
	out->layout = layout;
	out->il_offset = ADAC_IL_NO_MAPPING;
	if (!f->method_desc)
		return adac_fail(err, ADAC_E_NOT_FOUND, f->cont.addr, "the frame's method is not known");
	if (di->num_suspension_points == 0)
		return adac_fail(err, ADAC_E_NOT_FOUND, f->cont.addr, "the debug info lists no async suspension points");
	int32_t state = f->cont.state;
	if (state < 0 || (uint32_t)state >= di->num_suspension_points)
		return adac_fail(err, ADAC_E_CORRUPT, f->cont.addr,
		                 "State %d is out of range: the method's debug info has %u suspension point%s", state,
		                 di->num_suspension_points, di->num_suspension_points == 1 ? "" : "s");
	const struct adac_suspension_point *sp = &di->suspension_points[state];
	out->state = (uint32_t)state;
	out->native_offset = sp->diagnostic_native_offset;
	if (layout == ADAC_CONT_FLAT && f->has_code && sp->diagnostic_native_offset != f->offset &&
	    adac_strf(&out->warning, err, "State %d is the suspension point at +0x%x, but DiagnosticIP is at +0x%llx",
	            state, sp->diagnostic_native_offset, (unsigned long long)f->offset))
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
	find_exact_context(rt, f, &m, sp, out);

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
		struct adac_local *v;
		if (add_local(out, &v, err))
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
		if (v->kind == ADAC_LOCAL_GENERIC_CONTEXT && context_text(rt, v, err))
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

/* The debug info of the frame's code version. */
static int frame_debug_info(struct adac_runtime *rt, const struct adac_async_frame *f, enum adac_cont_layout_kind layout,
                            const struct adac_debug_info **di, struct adac_error *err)
{
	struct adac_code_info code;
	if (layout == ADAC_CONT_FLAT) {
		if (!f->cont.diagnostic_ip)
			return adac_fail(err, ADAC_E_NOT_FOUND, f->cont.addr, "the continuation has no DiagnosticIP");
		if (adac_em_find_code(rt, f->cont.diagnostic_ip, &code, err))
			return -1;
	} else {
		/* Only runtimes whose debug info has an async chunk (DebugInfo contract c1 and later) can
		 * say where a local lives; .NET 10 (no contract, or "1") records none. */
		const char *tag = adac_desc_contract(rt->desc, "DebugInfo");
		if (!tag || strcmp(tag, "1") == 0)
			return adac_fail(err, ADAC_E_UNSUPPORTED, f->cont.addr,
			                 "the runtime records no async debug info (DebugInfo contract %s): where an array-layout "
			                 "continuation keeps each local is not known",
			                 tag ? tag : "absent");
		/* The continuation does not say which code version made it: the method's current code. */
		uint64_t native = 0;
		if (adac_md_native_code(rt, f->method_desc, &native, err))
			return -1;
		if (!native)
			return adac_fail(err, ADAC_E_NOT_FOUND, f->method_desc, "the method has no native code");
		if (adac_em_find_code(rt, native, &code, err))
			return -1;
	}
	if (adac_debuginfo_get(rt, &code, di, err))
		return -1;
	if ((*di)->hdr.cb_async == 0) {
		if (layout == ADAC_CONT_ARRAY)
			return adac_fail(err, ADAC_E_UNSUPPORTED, f->cont.addr,
			                 "the runtime records no async debug info for array-layout continuations");
		if (code.kind == ADAC_CODE_R2R)
			return adac_fail(err, ADAC_E_NOT_FOUND, f->cont.addr,
			                 "precompiled (ReadyToRun) code: its debug info has no async chunk");
		return adac_fail(err, ADAC_E_NOT_FOUND, f->cont.addr, "the code's debug info has no async chunk");
	}
	return 0;
}

int adac_frame_locals_collect(struct adac_runtime *rt, const struct adac_async_frame *f, struct adac_locals *out,
                              struct adac_error *err)
{
	memset(out, 0, sizeof *out);
	if (f->infrastructure)
		return adac_fail(err, ADAC_E_NOT_FOUND, f->cont.addr, "an infrastructure continuation has no locals");
	if (!f->method_desc)
		return adac_fail(err, ADAC_E_NOT_FOUND, f->cont.addr, "the frame's method is not known");
	enum adac_cont_layout_kind layout;
	const struct adac_debug_info *di;
	if (adac_cont_layout(rt, &layout, err) || frame_debug_info(rt, f, layout, &di, err))
		return -1;
	return adac_frame_locals_collect_with(rt, f, layout, di, out, err);
}

/* ---- Output ---- */

static bool matches(const struct adac_local *v, const char *name)
{
	return !name || (v->name && strcmp(v->name, name) == 0);
}

static bool bracketed(const struct adac_local *v)
{
	return v->kind == ADAC_LOCAL_SLOT || v->kind == ADAC_LOCAL_SPECIAL || v->kind == ADAC_LOCAL_GENERIC_CONTEXT;
}

/* The value part of a line, and its JSON. */
static int value_of(struct adac_runtime *rt, const struct adac_local *v, const uint32_t *l_flags,
                    const struct adac_value_opts *o, struct adac_sig_text *text, json_t **json, struct adac_error *err)
{
	if (json)
		*json = NULL;
	if (v->error) {
		if (json)
			*json = json_null();
		return adac_sig_text_putf(text, err, "<error: %s>", v->error);
	}
	if (v->text) {
		if (json && v->kind == ADAC_LOCAL_SLOT && v->offset != NONE && strcmp(v->name, "Flags") == 0 && l_flags) {
			*json = json_integer(*l_flags);
		} else if (json && v->kind == ADAC_LOCAL_SLOT && v->bytes && v->type.kind == ADAC_VK_POINTER) {
			/* the result slot: its raw contents */
			char raw[24];
			uint64_t p = v->type.size == 8 ? adac_get_u64(v->bytes, 0) : adac_get_u32(v->bytes, 0);
			snprintf(raw, sizeof raw, "0x%016llx", (unsigned long long)p);
			*json = json_string(raw);
		} else if (json)
			*json = json_string(v->text);
		return adac_sig_text_put(text, v->text, err);
	}
	if (!v->bytes) {
		if (json)
			*json = json_null();
		return adac_sig_text_put(text, "<not read>", err);
	}
	return adac_value_format(rt, &v->type, v->bytes, o, text, json, err);
}

static const char *kind_name(enum adac_local_kind k)
{
	switch (k) {
	case ADAC_LOCAL_THIS: return "this";
	case ADAC_LOCAL_ARG: return "arg";
	case ADAC_LOCAL_LOCAL: return "local";
	case ADAC_LOCAL_GENERIC_CONTEXT: return "generic_context";
	case ADAC_LOCAL_SPECIAL: return "special";
	default: return "slot";
	}
}

int adac_locals_print(struct adac_runtime *rt, const struct adac_locals *l, const char *name, const char *indent,
                      const struct adac_value_opts *o, struct adac_out *out, struct adac_error *err)
{
	size_t shown = 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct adac_local *v = &l->v[i];
		if (!matches(v, name))
			continue;
		struct adac_sig_text text = {0};
		if (value_of(rt, v, l->has_flags ? &l->flags : NULL, o, &text, NULL, err)) {
			adac_sig_text_free(&text);
			return -1;
		}
		if (bracketed(v))
			adac_print(out, "%s[%s] = %s\n", indent, v->name, adac_sig_text_str(&text));
		else
			adac_print(out, "%s(%s) %s = %s\n", indent, v->type.name ? v->type.name : "?", v->name,
			           adac_sig_text_str(&text));
		adac_sig_text_free(&text);
		shown++;
	}
	if (name && !shown)
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "no variable named '%s' at this await", name);
	if (!name && !shown)
		adac_print(out, "%s(no locals: the suspension point saves no variables)\n", indent);
	return 0;
}

static json_t *json_hex(uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof buf, "0x%016llx", (unsigned long long)v);
	return json_string(buf);
}

json_t *adac_locals_json(struct adac_runtime *rt, const struct adac_locals *l, const char *name,
                         const struct adac_value_opts *o, struct adac_error *err)
{
	json_t *arr = json_array();
	size_t shown = 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct adac_local *v = &l->v[i];
		if (!matches(v, name))
			continue;
		struct adac_sig_text text = {0};
		json_t *val = NULL;
		if (value_of(rt, v, l->has_flags ? &l->flags : NULL, o, &text, &val, err)) {
			adac_sig_text_free(&text);
			json_decref(val);
			json_decref(arr);
			return NULL;
		}
		json_t *j = json_object();
		json_object_set_new(j, "name", json_string(v->name ? v->name : ""));
		json_object_set_new(j, "kind", json_string(kind_name(v->kind)));
		if (v->kind != ADAC_LOCAL_SLOT) {
			json_object_set_new(j, "var_number", json_integer(v->var_number));
			if (v->kind == ADAC_LOCAL_THIS || v->kind == ADAC_LOCAL_ARG || v->kind == ADAC_LOCAL_LOCAL)
				json_object_set_new(j, "index", json_integer(v->index));
		}
		json_object_set_new(j, "type", v->type.name ? json_string(v->type.name) : json_null());
		json_object_set_new(j, "offset", v->offset != NONE ? json_integer(v->offset) : json_null());
		if (l->layout == ADAC_CONT_ARRAY && v->kind != ADAC_LOCAL_SLOT)
			json_object_set_new(j, "gc_index", v->gc_index != NONE ? json_integer(v->gc_index) : json_null());
		json_object_set_new(j, "address", v->address ? json_hex(v->address) : json_null());
		json_object_set_new(j, "value", val ? val : json_null());
		json_object_set_new(j, "text", json_string(adac_sig_text_str(&text)));
		if (v->error)
			json_object_set_new(j, "error", json_string(v->error));
		adac_sig_text_free(&text);
		json_array_append_new(arr, j);
		shown++;
	}
	if (name && !shown) {
		json_decref(arr);
		adac_fail(err, ADAC_E_NOT_FOUND, 0, "no variable named '%s' at this await", name);
		return NULL;
	}
	return arr;
}

/* Failures that mean "nothing to show here" rather than "something is wrong". */
static bool no_info(const struct adac_error *e)
{
	return e->code == ADAC_E_NOT_FOUND || e->code == ADAC_E_UNSUPPORTED;
}

int adac_frame_locals_print(struct adac_runtime *rt, const struct adac_async_frame *f, const char *name,
                            const char *indent, struct adac_out *out, struct adac_error *err)
{
	struct adac_locals l;
	struct adac_error e = {0};
	if (adac_frame_locals_collect(rt, f, &l, &e)) {
		if (no_info(&e) && !name) {
			adac_print(out, "%s(no locals: %s)\n", indent, e.msg);
			return 0;
		}
		if (err)
			adac_error_copy(err, &e);
		return -1;
	}
	struct adac_value_opts o;
	adac_value_opts_default(&o);
	int rc = adac_locals_print(rt, &l, name, indent, &o, out, err);
	adac_locals_free(&l);
	return rc;
}

json_t *adac_frame_locals_json(struct adac_runtime *rt, const struct adac_async_frame *f, struct adac_error *err)
{
	struct adac_locals l;
	if (adac_frame_locals_collect(rt, f, &l, err))
		return NULL;
	struct adac_value_opts o;
	adac_value_opts_default(&o);
	json_t *j = adac_locals_json(rt, &l, NULL, &o, err);
	adac_locals_free(&l);
	return j;
}
