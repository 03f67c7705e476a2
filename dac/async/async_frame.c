/* async_frame.c - resolves continuations into logical frames. */
#include "async/async_frame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async/resume_stub.h"
#include "async/task.h"
#include "code/debuginfo.h"
#include "code/execution_manager.h"
#include "metadata/pdb.h"
#include "runtime/loader.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/fielddesc.h"
#include "types/methoddesc.h"
#include "types/names.h"

#define note(f, ...) adac_note_add((f)->note, sizeof (f)->note, __VA_ARGS__)

/* Method name, module and token of a MethodDesc into the frame. */
static void name_method(struct adac_runtime *rt, uint64_t md, struct adac_async_frame *f)
{
	struct adac_error err = {0};
	struct adac_method_info mi;
	if (adac_md_read(rt, md, &mi, &err)) {
		note(f, "%s", err.msg);
		return;
	}
	f->token = mi.token;
	f->hidden = mi.diagnostics_hidden;
	f->method = adac_method_name(rt, md, ADAC_NAME_PARAMS, &err);
	if (!f->method)
		note(f, "%s", err.msg);
	adac_error_clear(&err);
	f->module = adac_module_file_name(rt, mi.module, &err);
	/* Bytes the core lacked and the symbol path supplied: say from where. */
	const char *origin = adac_loader_image_origin(rt, mi.module);
	if (origin)
		note(f, "%s", origin);
}

/* IL offset of the suspension, and the check that State names this suspension point; that point
 * (NULL when State names none). */
static const struct adac_suspension_point *locate(struct adac_runtime *rt, const struct adac_code_info *code,
                                                  struct adac_async_frame *f)
{
	struct adac_error err = {0};
	const struct adac_debug_info *di;
	if (adac_debuginfo_get(rt, code, &di, &err)) {
		note(f, "no debug info: %s", err.msg);
		return NULL;
	}
	uint32_t source = 0;
	uint32_t il = adac_debuginfo_il_offset(di, (uint32_t)f->offset, &source);
	if (il != ADAC_IL_NO_MAPPING && il != ADAC_IL_PROLOG && il != ADAC_IL_EPILOG) {
		f->has_il = true;
		f->il_offset = il;
	}
	if (di->num_suspension_points) {
		int32_t state = f->cont.state;
		if (state < 0 || (uint32_t)state >= di->num_suspension_points) {
			note(f, "State %d is out of range: the method has %u suspension point%s", state, di->num_suspension_points,
			     di->num_suspension_points == 1 ? "" : "s");
			return NULL;
		}
		if (di->suspension_points[state].diagnostic_native_offset != f->offset)
			note(f, "State %d is suspension point at +0x%x, but DiagnosticIP is at +0x%llx", state,
			     di->suspension_points[state].diagnostic_native_offset, (unsigned long long)f->offset);
		return &di->suspension_points[state];
	}
	return NULL;
}

/* Is the MethodDesc shared generic code (a __Canon instantiation of its type or of itself)? */
static bool is_shared_code(struct adac_runtime *rt, uint64_t md)
{
	struct adac_method_info mi;
	struct adac_mt_info mt;
	if (adac_md_read(rt, md, &mi, NULL) || adac_mt_read(rt, mi.method_table, &mt, NULL))
		return false;
	return (mi.classification == ADAC_MD_INSTANTIATED && mi.imd_kind == ADAC_IMD_SHARED) || mt.is_shared_instantiation;
}

bool adac_frame_exact_inst(struct adac_runtime *rt, const struct adac_async_frame *f,
                           const struct adac_suspension_point *sp, struct adac_exact_inst *out)
{
	memset(out, 0, sizeof *out);
	enum adac_cont_layout_kind layout;
	struct adac_method_info mi;
	struct adac_mt_info cls;
	if (!f->method_desc || !sp || adac_cont_layout(rt, &layout, NULL) || layout != ADAC_CONT_FLAT ||
	    adac_md_read(rt, f->method_desc, &mi, NULL) || adac_mt_read(rt, mi.method_table, &cls, NULL))
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
	struct adac_exact_inst x;
	if (!f->shared_sp || !f->method || !adac_frame_exact_inst(rt, f, f->shared_sp, &x))
		return;
	const char *exact = x.from == ADAC_EXACT_METHOD_DESC
	                        ? adac_method_name(rt, x.method_desc, ADAC_NAME_PARAMS, NULL)
	                        : adac_method_name_in(rt, f->method_desc, x.method_table, ADAC_NAME_PARAMS, NULL);
	if (exact && strcmp(exact, f->method) != 0) {
		f->canonical_method = f->method;
		f->method = exact;
	}
}

static void find_source(struct adac_runtime *rt, struct adac_async_frame *f)
{
	if (!f->has_il || !f->token)
		return;
	struct adac_error err = {0};
	struct adac_method_info mi;
	if (adac_md_read(rt, f->method_desc, &mi, &err))
		return;
	const char *path = adac_module_path(rt, mi.module, &err);
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
	const struct adac_suspension_point *sp = NULL;
	if (c->diagnostic_ip) {
		struct adac_code_info code;
		if (adac_em_find_code(rt, c->diagnostic_ip, &code, &err) == 0 && code.method_desc) {
			f->has_code = true;
			md = f->method_desc = code.method_desc;
			f->code_start = code.code_start;
			f->offset = code.offset;
			sp = locate(rt, &code, f);
		} else {
			note(f, "DiagnosticIP 0x%llx: %s", (unsigned long long)c->diagnostic_ip,
			     err.msg[0] ? err.msg : "no MethodDesc");
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
	name_method(rt, md, f);
	find_source(rt, f);
	if (sp && f->method && is_shared_code(rt, md)) {
		f->shared_sp = sp;
		adac_async_frame_instantiate(rt, f);
	}
}

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
	unsigned ps = adac_target_ptr_size(rt->t);
	for (size_t i = 0; i < sizeof object_fields / sizeof object_fields[0]; i++) {
		struct adac_field fld;
		if (adac_mt_find_field(rt, mt, object_fields[i], &fld, NULL) == 0 && !fld.is_static) {
			e->via = (int)i;
			e->obj_off = fld.offset + ps;
			break;
		}
	}
	struct adac_field tok;
	if (adac_mt_find_field(rt, mt, "Token", &tok, NULL) == 0 && !tok.is_static) {
		e->has_token = true;
		e->token_off = tok.offset + ps;
	}
	return e;
}

int adac_awaiting_of(struct adac_runtime *rt, const struct adac_continuation *c, struct adac_awaiting *out,
                     struct adac_error *err)
{
	memset(out, 0, sizeof *out);
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
	}
	return 0;
}
