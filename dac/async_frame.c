/* async_frame.c - resolves continuations into logical frames. */
#include "async_frame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debuginfo.h"
#include "execution_manager.h"
#include "fielddesc.h"
#include "methoddesc.h"
#include "names.h"
#include "pdb.h"
#include "resume_stub.h"
#include "runtime.h"
#include "target.h"

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
}

/* IL offset of the suspension, and the check that State names this suspension point. */
static void locate(struct adac_runtime *rt, const struct adac_code_info *code, struct adac_async_frame *f)
{
	struct adac_error err = {0};
	const struct adac_debug_info *di;
	if (adac_debuginfo_get(rt, code, &di, &err)) {
		note(f, "no debug info: %s", err.msg);
		return;
	}
	uint32_t source = 0;
	uint32_t il = adac_debuginfo_il_offset(di, (uint32_t)f->offset, &source);
	if (il != ADAC_IL_NO_MAPPING && il != ADAC_IL_PROLOG && il != ADAC_IL_EPILOG) {
		f->has_il = true;
		f->il_offset = il;
	}
	if (di->num_suspension_points) {
		int32_t state = f->cont.state;
		if (state < 0 || (uint32_t)state >= di->num_suspension_points)
			note(f, "State %d is out of range: the method has %u suspension point%s", state, di->num_suspension_points,
			     di->num_suspension_points == 1 ? "" : "s");
		else if (di->suspension_points[state].diagnostic_native_offset != f->offset)
			note(f, "State %d is suspension point at +0x%x, but DiagnosticIP is at +0x%llx", state,
			     di->suspension_points[state].diagnostic_native_offset, (unsigned long long)f->offset);
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
	if (c->diagnostic_ip) {
		struct adac_code_info code;
		if (adac_em_find_code(rt, c->diagnostic_ip, &code, &err) == 0 && code.method_desc) {
			f->has_code = true;
			md = f->method_desc = code.method_desc;
			f->code_start = code.code_start;
			f->offset = code.offset;
			locate(rt, &code, f);
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
	if (out->object && adac_object_mt(rt, out->object, &out->mt, NULL) == 0)
		out->type = adac_type_name(rt, out->mt, 0, NULL);
	return 0;
}
