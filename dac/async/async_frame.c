/* async_frame.c - resolves continuations into logical frames. */
#include "async/async_frame.h"

#include "async/awaited.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async/awaited.h"
#include "async/resume_stub.h"
#include "async/task.h"
#include "code/debuginfo.h"
#include "code/execution_manager.h"
#include "metadata/pdb.h"
#include "runtime/loader.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/fielddesc.h"
#include "types/methoddesc.h"
#include "types/names.h"

#define note(f, ...) adac_note_add((f)->note, sizeof (f)->note, __VA_ARGS__)

/* Method name, module and token of a MethodDesc into the frame. */
static void name_method(struct adac_runtime *rt, uint64_t md, const struct adac_method_info *mi,
                        struct adac_async_frame *f)
{
	struct adac_error err = {0};
	f->token = mi->token;
	f->hidden = mi->diagnostics_hidden;
	f->method = adac_method_name(rt, md, ADAC_NAME_PARAMS, &err);
	if (!f->method)
		note(f, "%s", err.msg);
	adac_error_clear(&err);
	f->module = adac_module_file_name(rt, mi->module, &err);
	/* Bytes the core lacked and the symbol path supplied: say from where. */
	const char *origin = adac_loader_image_origin(rt, mi->module);
	if (origin)
		note(f, "%s", origin);
}

enum adac_state_verdict adac_state_check(const struct adac_debug_info *di, int32_t state, bool has_offset,
                                         uint64_t offset, const struct adac_suspension_point **sp, char *why,
                                         size_t size)
{
	*sp = NULL;
	if (size)
		why[0] = '\0';
	if (!di || di->num_suspension_points == 0)
		return ADAC_STATE_UNCHECKED;
	uint32_t n = di->num_suspension_points;
	if (state < 0 || (uint32_t)state >= n) {
		snprintf(why, size, "State %d is out of range: the method's debug info has %u suspension point%s", state, n,
		         n == 1 ? "" : "s");
		return ADAC_STATE_OUT_OF_RANGE;
	}
	*sp = &di->suspension_points[state];
	if (has_offset && (*sp)->diagnostic_native_offset != offset) {
		snprintf(why, size, "State %d is the suspension point at +0x%x, but DiagnosticIP is at +0x%llx", state,
		         (*sp)->diagnostic_native_offset, (unsigned long long)offset);
		return ADAC_STATE_MISMATCH;
	}
	return ADAC_STATE_OK;
}

void adac_async_frame_use_debug_info(struct adac_async_frame *f, const struct adac_debug_info *di)
{
	f->debug_info = di;
	f->state_verdict = adac_state_check(di, f->cont.state, f->has_code, f->code.offset, &f->sp, f->state_why,
	                                    sizeof f->state_why);
	if (f->state_why[0])
		note(f, "%s", f->state_why);
}

/* The debug info of the frame's code version, the IL offset of the suspension, and the verdict on
 * State. */
static void locate(struct adac_runtime *rt, struct adac_async_frame *f)
{
	const struct adac_debug_info *di;
	if (adac_debuginfo_get(rt, &f->code, &di, &f->debug_info_err)) {
		note(f, "no debug info: %s", f->debug_info_err.msg);
		return;
	}
	uint32_t il = adac_debuginfo_il_offset(di, (uint32_t)f->code.offset, NULL);
	if (il != ADAC_IL_NO_MAPPING && il != ADAC_IL_PROLOG && il != ADAC_IL_EPILOG) {
		f->has_il = true;
		f->il_offset = il;
	}
	adac_async_frame_use_debug_info(f, di);
}

/* Is the method shared generic code (a __Canon instantiation of its type or of itself)? */
static bool is_shared_code(struct adac_runtime *rt, const struct adac_method_info *mi)
{
	struct adac_mt_info mt;
	if (adac_mt_read(rt, mi->method_table, &mt, NULL))
		return false;
	return (mi->classification == ADAC_MD_INSTANTIATED && mi->imd_kind == ADAC_IMD_SHARED) || mt.is_shared_instantiation;
}

/* The exact instantiation of a frame's shared code from the variables sp saves (flat layout): the
 * generic-context slot holds the exact InstantiatedMethodDesc (generic methods) or MethodTable
 * (static methods of generic types); `this` knows it otherwise. false when nothing says. */
static bool exact_inst(struct adac_runtime *rt, const struct adac_async_frame *f, const struct adac_suspension_point *sp,
                       struct adac_exact_inst *out)
{
	memset(out, 0, sizeof *out);
	struct adac_method_info mi;
	struct adac_mt_info cls;
	if (!f->method_desc || !sp || f->cont.layout != ADAC_CONT_FLAT || adac_md_read(rt, f->method_desc, &mi, NULL) ||
	    adac_mt_read(rt, mi.method_table, &cls, NULL))
		return false;
	uint64_t ctx = 0, self = 0;
	for (uint32_t i = 0; i < sp->num_vars; i++) {
		const struct adac_async_var *av = &sp->vars[i];
		if (av->var_number == ADAC_ILNUM_TYPECTXT)
			adac_read_ptr(rt->t, f->cont.addr + av->offset, &ctx, NULL);
		else if (av->var_number == 0 && !mi.is_static)
			adac_read_ptr(rt->t, f->cont.addr + av->offset, &self, NULL);
	}
	if (ctx && mi.num_generic_args) {
		/* A generic method's context is its exact InstantiatedMethodDesc: the same method. */
		struct adac_method_info cm;
		if (adac_md_read(rt, ctx, &cm, NULL) == 0 && cm.token == mi.token && cm.module == mi.module &&
		    cm.num_generic_args == mi.num_generic_args) {
			*out = (struct adac_exact_inst){ADAC_EXACT_METHOD_DESC, ctx, cm.method_table};
			return true;
		}
	} else if (ctx) {
		struct adac_mt_info ct;
		if (adac_mt_read(rt, ctx, &ct, NULL) == 0 && ct.canonical_mt == cls.canonical_mt) {
			*out = (struct adac_exact_inst){ADAC_EXACT_METHOD_TABLE, 0, ctx};
			return true;
		}
	}
	if (!self || !cls.is_shared_instantiation)
		return false;
	/* `this` knows the exact type, maybe as a base type of its own. */
	uint64_t mt;
	if (adac_object_mt(rt, self, &mt, NULL))
		return false;
	for (unsigned depth = 0; mt && depth < ADAC_MAX_TYPE_DEPTH; depth++) {
		struct adac_mt_info ti;
		if (adac_mt_read(rt, mt, &ti, NULL))
			return false;
		if (ti.canonical_mt == cls.canonical_mt || mt == cls.method_table) {
			*out = (struct adac_exact_inst){ADAC_EXACT_THIS, 0, mt};
			return true;
		}
		mt = ti.parent;
	}
	return false;
}

void adac_async_frame_instantiate(struct adac_runtime *rt, struct adac_async_frame *f)
{
	if (f->canonical_method) {
		f->method = f->canonical_method;
		f->canonical_method = NULL;
	}
	f->has_exact = f->shared_code && exact_inst(rt, f, f->sp, &f->exact);
	if (!f->has_exact || !f->method)
		return;
	const struct adac_exact_inst *x = &f->exact;
	const char *exact = x->from == ADAC_EXACT_METHOD_DESC
	                        ? adac_method_name(rt, x->method_desc, ADAC_NAME_PARAMS, NULL)
	                        : adac_method_name_in(rt, f->method_desc, x->method_table, ADAC_NAME_PARAMS, NULL);
	if (exact && strcmp(exact, f->method) != 0) {
		f->canonical_method = f->method;
		f->method = exact;
	}
}

static void find_source(struct adac_runtime *rt, const struct adac_method_info *mi, struct adac_async_frame *f)
{
	if (!f->has_il || !f->token)
		return;
	struct adac_error err = {0};
	const char *path = adac_module_path(rt, mi->module, &err);
	if (!path || !*path) {
		note(f, "no PDB: the module has no file path");
		return;
	}
	struct adac_source_line src;
	if (adac_pdb_source_line(rt, path, f->token, f->il_offset, &src, &err)) {
		note(f, "%s", err.msg);
		return;
	}
	f->has_source = true;
	f->file = src.file;
	f->line = src.line;
}

void adac_async_frame_resolve(struct adac_runtime *rt, const struct adac_continuation *c, struct adac_async_frame *f)
{
	memset(f, 0, sizeof *f);
	f->cont = *c;
	/* User frames have a DiagnosticIP (flat layout) or, on the array layout, a Resume stub; the
	 * hand-rolled continuations have a ResumeInfo without DiagnosticIP, or nothing to resume. */
	if (!c->diagnostic_ip && (c->resume_info || !c->resume)) {
		f->infrastructure = true;
		return;
	}
	struct adac_error err = {0};
	struct adac_resume_target rs = {0};
	if (c->resume) {
		if (adac_resume_target(rt, c->resume, &rs, &err) == 0) {
			f->resume_md = rs.target_md;
			if (rs.by_name)
				note(f, "found by its resume stub's name %s: the runtime records no target", rs.stub_name);
		} else {
			note(f, "Resume route: %s", err.msg);
		}
		adac_error_clear(&err);
	}
	uint64_t md = 0;
	if (c->diagnostic_ip) {
		if (adac_em_find_code(rt, c->diagnostic_ip, &f->code, &f->debug_info_err) == 0 && f->code.method_desc) {
			f->has_code = true;
			md = f->method_desc = f->code.method_desc;
			locate(rt, f);
		} else {
			if (!adac_failed(&f->debug_info_err))
				adac_fail(&f->debug_info_err, ADAC_E_NOT_FOUND, c->diagnostic_ip, "no MethodDesc");
			adac_error_wrap(&f->debug_info_err, "DiagnosticIP 0x%llx: ", (unsigned long long)c->diagnostic_ip);
			note(f, "%s", f->debug_info_err.msg);
			memset(&f->code, 0, sizeof f->code);
		}
	}
	if (md && f->resume_md && md != f->resume_md) {
		/* Two MethodDescs can stand for one method (e.g. an instantiation and its canonical form):
		 * only a different name is a disagreement. */
		const char *a = adac_method_name(rt, md, ADAC_NAME_PARAMS, NULL);
		const char *b = adac_method_name(rt, f->resume_md, ADAC_NAME_PARAMS, NULL);
		if (!a || !b || strcmp(a, b) != 0) {
			f->routes_disagree = true;
			note(f, "routes disagree: DiagnosticIP is in %s (MethodDesc 0x%llx), Resume resumes %s (MethodDesc 0x%llx)",
			     a ? a : "?", (unsigned long long)md, b ? b : "?", (unsigned long long)f->resume_md);
		}
	}
	if (!md)
		md = f->method_desc = f->resume_md;
	if (!md) {
		/* Still say which method the resume stub names, when it does. */
		if (rs.target_name[0]) {
			snprintf(f->name_buf, sizeof f->name_buf, "%s", rs.target_name);
			f->method = f->name_buf;
			f->module = adac_module_file_name(rt, rs.stub_module, NULL);
		}
		return;
	}
	struct adac_method_info mi;
	if (adac_md_read(rt, md, &mi, &err)) {
		note(f, "%s", err.msg);
		return;
	}
	name_method(rt, md, &mi, f);
	find_source(rt, &mi, f);
	if (f->sp && is_shared_code(rt, &mi)) {
		f->shared_code = true;
		adac_async_frame_instantiate(rt, f);
	}
}

/* adac_async_frame_copy copies the fields before the texts whole, then each text: the texts must
 * stay last, in this order, and an error's message last in it. */
#define FRAME_END(m) (offsetof(struct adac_async_frame, m) + sizeof ((struct adac_async_frame *)0)->m)
_Static_assert(FRAME_END(debug_info_err) == offsetof(struct adac_async_frame, state_why) &&
                   FRAME_END(state_why) == offsetof(struct adac_async_frame, name_buf) &&
                   FRAME_END(name_buf) == offsetof(struct adac_async_frame, note) &&
                   FRAME_END(note) + 8 > sizeof(struct adac_async_frame),
               "a frame's texts must be its last members: debug_info_err, state_why, name_buf, note");
_Static_assert(offsetof(struct adac_error, msg) + ADAC_ERROR_MSG_MAX == sizeof(struct adac_error),
               "an error's message must be its last member");
#undef FRAME_END

/* Most of a frame's texts are empty: no call for them (a million-chain listing copies millions). */
static void copy_text(char *dst, const char *src)
{
	if (src[0])
		strcpy(dst, src);
	else if (dst[0])
		dst[0] = '\0';
}

void adac_async_frame_copy(struct adac_async_frame *dst, const struct adac_async_frame *src)
{
	/* Everything before the texts whole, then each text up to its end (most of its buffer is unused). */
	memcpy(dst, src, offsetof(struct adac_async_frame, debug_info_err));
	memcpy(&dst->debug_info_err, &src->debug_info_err, offsetof(struct adac_error, msg));
	copy_text(dst->debug_info_err.msg, src->debug_info_err.msg);
	copy_text(dst->state_why, src->state_why);
	copy_text(dst->name_buf, src->name_buf);
	copy_text(dst->note, src->note);
	if (src->method == src->name_buf)
		dst->method = dst->name_buf;
}

bool adac_async_frame_shown(const struct adac_async_frame *f) { return !f->infrastructure && !f->hidden; }

/* Where a hand-rolled continuation type keeps what it awaits, found once per MethodTable (ps sees
 * thousands of chains with a handful of head types). */
#define AWAIT_CACHE 64u

struct await_fields {
	uint64_t mt;
	int via;              /* index into object_fields, -1: none */
	uint32_t obj_off;     /* object-relative */
	bool has_token;
	uint32_t token_off;
};

/* Field names of the 11.0 CoreLib's hand-rolled continuations (RuntimeAsyncTaskContinuation.Task,
 * AsyncHelpers.ValueTaskSourceContinuation.Source/Token). */
static const char *const object_fields[] = {"Task", "Source", "_source", "m_task"};

static void free_cache(void *p) { free(p); }

static const struct await_fields *fields_of(struct adac_runtime *rt, uint64_t mt)
{
	struct await_fields *cache = adac_runtime_slot(rt, ADAC_SLOT_AWAITING);
	if (!cache) {
		cache = calloc(AWAIT_CACHE, sizeof *cache);
		if (!cache)
			return NULL;
		adac_runtime_set_slot(rt, ADAC_SLOT_AWAITING, cache, free_cache);
	}
	struct await_fields *e = &cache[(mt >> 3) % AWAIT_CACHE];
	if (e->mt == mt)
		return e;
	memset(e, 0, sizeof *e);
	e->mt = mt;
	e->via = -1;
	for (size_t i = 0; i < sizeof object_fields / sizeof object_fields[0]; i++) {
		if (adac_mt_field_offset(rt, mt, object_fields[i], &e->obj_off, NULL) == 0) {
			e->via = (int)i;
			break;
		}
	}
	e->has_token = adac_mt_field_offset(rt, mt, "Token", &e->token_off, NULL) == 0;
	return e;
}

int adac_awaiting_of(struct adac_runtime *rt, const struct adac_continuation *c, struct adac_awaiting *out,
                     struct adac_error *err)
{
	/* All but the leaf's text past its first byte (a listing asks for a million). */
	memset(out, 0, offsetof(struct adac_awaiting, leaf) + 1);
	const struct await_fields *e = fields_of(rt, c->mt);
	if (!e)
		return adac_fail(err, ADAC_E_NOMEM, c->addr, "out of memory");
	if (e->via < 0)
		return adac_fail(err, ADAC_E_NOT_FOUND, c->addr, "continuation 0x%llx has no Task or Source field",
		                 (unsigned long long)c->addr);
	if (adac_read_ptr(rt->t, c->addr + e->obj_off, &out->object, err))
		return -1;
	out->via = object_fields[e->via];
	uint16_t t;
	if (e->has_token && adac_read_u16(rt->t, c->addr + e->token_off, &t, NULL) == 0) {
		out->has_token = true;
		out->token = (int16_t)t;
	}
	if (out->object && adac_object_mt(rt, out->object, &out->mt, NULL) == 0) {
		out->type = adac_type_name(rt, out->mt, 0, NULL);
		const struct adac_task_layout *task;
		bool is_task;
		out->has_state_flags = adac_task_is_task_mt(rt, out->mt, &is_task, NULL) == 0 && is_task &&
		                       adac_task_layout(rt, &task, NULL) == 0 &&
		                       adac_read_u32(rt->t, out->object + task->state_flags_off, &out->state_flags, NULL) == 0;
		out->kind = adac_awaited_describe(rt, out->object, out->mt, out->type, out->has_state_flags, out->state_flags,
		                                  out->leaf, sizeof out->leaf);
	}
	return 0;
}
