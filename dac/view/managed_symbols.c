/* managed_symbols.c - the symbol-file model of a process's managed code: which code versions (stacks,
 * chains), and for each its range, line rows and variables. */
#include "view/managed_symbols.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async/async_scan.h"
#include "async/continuation.h"
#include "async/dispatcher.h"
#include "base/addr_map.h"
#include "base/grow.h"
#include "base/limits.h"
#include "code/debuginfo.h"
#include "code/execution_manager.h"
#include "code/managed_unwind.h"
#include "code/source_map.h"
#include "metadata/pdb.h"
#include "runtime/runtime.h"
#include "runtime/threads.h"
#include "symfile/symfile.h"
#include "target/target.h"
#include "types/names.h"
#include "code/method_vars.h"
#include "view/sym_types.h"

struct seen {
	uint64_t key;
};

/* What the file will describe, in the order found: collecting only finds these (cheap: unwinding,
 * looking up code), the file is made of them by adac_managed_symbols_finish, and they are what
 * adac_managed_symbols_digest sums up. */
struct request {
	bool types;                  /* the types a continuation saved; else a code version */
	uint64_t ip;                 /* code: an address in it; types: the continuation's DiagnosticIP */
	int32_t state;               /* types: its State */
	struct adac_code_info code;  /* code: as found */
};

struct adac_managed_symbols {
	struct adac_runtime *rt;
	struct adac_managed_symbols_opts o;
	struct adac_symfile *sf;
	struct adac_sym_typer *typer;
	struct adac_addr_map code;       /* code starts added (or tried) */
	struct request *requests;
	size_t nrequests, cap_requests;
	struct adac_managed_symbols_stats stats;
};

static bool fatal(const struct adac_error *e) { return e->code == ADAC_E_NOMEM || e->code == ADAC_E_LIMIT; }

struct adac_managed_symbols *adac_managed_symbols_new(struct adac_runtime *rt, const struct adac_managed_symbols_opts *o,
                                      struct adac_error *err)
{
	struct adac_managed_symbols *s = calloc(1, sizeof *s);
	if (!s) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		return NULL;
	}
	s->rt = rt;
	s->o = *o;
	if (!(s->sf = adac_symfile_new(err)) || !(s->typer = adac_sym_typer_new(rt, s->sf, o->type_depth, err))) {
		adac_managed_symbols_free(s);
		return NULL;
	}
	return s;
}

void adac_managed_symbols_free(struct adac_managed_symbols *s)
{
	if (!s)
		return;
	adac_sym_typer_free(s->typer);
	adac_symfile_free(s->sf);
	adac_addr_map_free(&s->code);
	free(s->requests);
	free(s);
}

static int add_request(struct adac_managed_symbols *s, const struct request *r, struct adac_error *err)
{
	if (adac_grow((void **)&s->requests, &s->cap_requests, s->nrequests + 1, sizeof *s->requests, 64))
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	s->requests[s->nrequests++] = *r;
	return 0;
}

/* A method left out: counted, and the first reasons kept. */
static void skip(struct adac_managed_symbols *s, uint64_t ip, const struct adac_error *e)
{
	s->stats.skipped++;
	adac_note_add(s->stats.problems, sizeof s->stats.problems, "0x%llx: %s", (unsigned long long)ip, e->msg);
}

/* ---- one code version ---- */

/* Growing arrays of rows, variables and frame parts, freed together. */
struct method_parts {
	struct adac_sym_row *rows;
	uint32_t nrows, rows_cap;
	struct adac_sym_var *vars;
	uint32_t nvars;
	struct adac_sym_loc *locs;       /* every variable's, in variable order */
	uint32_t nlocs;
	struct adac_sym_frame *frames;
	uint32_t nframes;
};

static void parts_free(struct method_parts *p)
{
	free(p->rows);
	for (uint32_t i = 0; i < p->nvars; i++)
		free((char *)p->vars[i].name);
	free(p->vars);
	free(p->locs);
	for (uint32_t i = 0; i < p->nframes; i++)
		free((void *)p->frames[i].rows);
	free(p->frames);
	memset(p, 0, sizeof *p);
}

static int add_row(struct method_parts *p, const struct adac_sym_row *r, struct adac_error *err)
{
	if (p->nrows) {
		const struct adac_sym_row *last = &p->rows[p->nrows - 1];
		if (last->file == r->file && last->line == r->line && last->column == r->column)
			return 0;
	}
	if (p->nrows == p->rows_cap) {
		uint32_t cap = p->rows_cap ? p->rows_cap * 2 : 32;
		struct adac_sym_row *n = realloc(p->rows, cap * sizeof *n);
		if (!n)
			return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		p->rows = n;
		p->rows_cap = cap;
	}
	p->rows[p->nrows++] = *r;
	return 0;
}

/* Is off a suspension point's DiagnosticIP? A debugger looks a caller frame's line up at pc - 1 (the
 * call), and an async frame is a caller at its DiagnosticIP (LLDB 22 looks up a provider's frames
 * that way): the await's line row starts one byte early, so that both lookups find the await. */
static bool is_suspension_point(const struct adac_debug_info *di, uint32_t off)
{
	for (uint32_t i = 0; i < di->num_suspension_points; i++)
		if (di->suspension_points[i].diagnostic_native_offset == off)
			return true;
	return false;
}

/* A row for each native offset the bounds give, where source_map.h's rule puts it (an offset
 * without a line of its own keeps the row before it). */
static int method_rows(struct adac_managed_symbols *s, const struct adac_source_map *map, uint64_t size, struct method_parts *p,
                       struct adac_error *err)
{
	const struct adac_debug_info *di = map->di;
	for (uint32_t i = 0; di && i < di->num_bounds;) {
		uint32_t off = di->bounds[i].native_offset;
		while (i < di->num_bounds && di->bounds[i].native_offset == off)
			i++;
		if (off >= size)
			continue;
		struct adac_source_line sl = adac_source_map_own(map, off);
		if (!sl.line)
			continue;
		struct adac_sym_row r = {.offset = off, .line = sl.line, .column = sl.column};
		if (off > 0 && is_suspension_point(di, off) && (p->nrows == 0 || p->rows[p->nrows - 1].offset < off - 1))
			r.offset = off - 1;
		if (!(r.file = adac_symfile_file(s->sf, sl.file, err)) || add_row(p, &r, err))
			return -1;
	}
	return 0;
}

/* Runtime (AMD64 RegNum) to DWARF register numbers. */
static int dwarf_reg(int32_t reg, bool fp, uint16_t *out)
{
	static const uint16_t gpr[16] = {
		ADAC_SYM_REG_RAX, ADAC_SYM_REG_RCX, ADAC_SYM_REG_RDX, ADAC_SYM_REG_RBX, ADAC_SYM_REG_RSP, ADAC_SYM_REG_RBP,
		ADAC_SYM_REG_RSI, ADAC_SYM_REG_RDI, 8, 9, 10, 11, 12, 13, 14, 15,
	};
	if (fp) {
		/* The JIT numbers XMM registers after the 16 integer registers. */
		int32_t x = reg >= 16 ? reg - 16 : reg;
		if (x < 0 || x >= 16)
			return -1;
		*out = (uint16_t)(ADAC_SYM_REG_XMM0 + x);
		return 0;
	}
	if (reg < 0 || reg >= 16)
		return -1;
	*out = gpr[reg];
	return 0;
}

/* The location of one native variable record; -1 for kinds a location expression here does not
 * describe (values split over two places, x87 stack, varargs). */
static int var_loc(const struct adac_native_var *v, struct adac_sym_loc *l)
{
	l->start = v->start_offset;
	l->end = v->end_offset;
	l->offset = 0;
	switch (v->loc_type) {
	case ADAC_VLT_REG:
		l->kind = ADAC_SYM_LOC_REG;
		return dwarf_reg(v->loc[0], false, &l->reg);
	case ADAC_VLT_REG_FP:
		l->kind = ADAC_SYM_LOC_REG;
		return dwarf_reg(v->loc[0], true, &l->reg);
	case ADAC_VLT_REG_BYREF:           /* the register holds the value's address */
		l->kind = ADAC_SYM_LOC_MEM;
		return dwarf_reg(v->loc[0], false, &l->reg);
	case ADAC_VLT_STK:
	case ADAC_VLT_STK2:
		l->kind = ADAC_SYM_LOC_MEM;
		l->offset = v->loc[1];
		return dwarf_reg(v->loc[0], false, &l->reg);
	case ADAC_VLT_STK_BYREF:           /* the stack slot holds the value's address */
		l->kind = ADAC_SYM_LOC_MEM_REF;
		l->offset = v->loc[1];
		return dwarf_reg(v->loc[0], false, &l->reg);
	default:
		return -1;
	}
}

/* An IL offset inside [start, end) of the code with a real mapping, for naming locals by scope. */
static uint32_t il_within(const struct adac_debug_info *di, uint32_t start, uint32_t end)
{
	for (uint32_t i = 0; i < di->num_bounds; i++) {
		const struct adac_bound *b = &di->bounds[i];
		if (b->native_offset >= start && b->native_offset < end && b->il_offset < ADAC_IL_EPILOG)
			return b->il_offset;
	}
	return 0;
}

static int cmp_native_var(const void *a, const void *b)
{
	const struct adac_native_var *x = *(const struct adac_native_var *const *)a;
	const struct adac_native_var *y = *(const struct adac_native_var *const *)b;
	if (x->var_number != y->var_number)
		return x->var_number < y->var_number ? -1 : 1;
	return x->start_offset < y->start_offset ? -1 : x->start_offset > y->start_offset;
}

static int method_vars(struct adac_managed_symbols *s, const struct adac_debug_info *di, uint64_t md, uint64_t size,
                       struct method_parts *p, struct adac_error *err)
{
	struct adac_method_vars mv;
	struct adac_error e = {0};
	if (!di->num_vars)
		return 0;
	if (adac_method_vars_init(s->rt, md, &mv, &e))
		return fatal(&e) ? adac_error_copy(err, &e) : 0; /* no signatures: no variables */
	const struct adac_native_var **order = calloc(di->num_vars, sizeof *order);
	p->vars = calloc(di->num_vars, sizeof *p->vars);
	p->locs = calloc(di->num_vars, sizeof *p->locs);
	int rc = -1;
	if (!order || !p->vars || !p->locs) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < di->num_vars; i++)
		order[i] = &di->vars[i];
	qsort(order, di->num_vars, sizeof *order, cmp_native_var);
	for (uint32_t i = 0; i < di->num_vars;) {
		int32_t vn = order[i]->var_number;
		uint32_t first_loc = p->nlocs;
		for (; i < di->num_vars && order[i]->var_number == vn; i++) {
			struct adac_sym_loc l;
			if (var_loc(order[i], &l) == 0 && l.start < l.end && l.start < size) {
				if (l.end > size)
					l.end = (uint32_t)size;
				p->locs[p->nlocs++] = l;
			}
		}
		if (vn < 0)
			continue; /* the runtime's own (generic context, return buffer...) */
		uint32_t il = p->nlocs > first_loc ? il_within(di, p->locs[first_loc].start, p->locs[first_loc].end) : 0;
		struct adac_method_var v;
		adac_error_clear(&e);
		if (adac_method_var(s->rt, &mv, vn, il, &v, &e)) {
			if (fatal(&e)) {
				adac_error_copy(err, &e);
				goto out;
			}
			continue;
		}
		uint32_t type;
		if (adac_sym_type_of(s->typer, &mv.tctx, v.sig, &v.type, &type, err)) {
			adac_method_var_free(&v);
			goto out;
		}
		struct adac_sym_var *sv = &p->vars[p->nvars++];
		sv->name = v.name;
		v.name = NULL;
		sv->type = type;
		sv->is_param = v.kind != ADAC_VAR_LOCAL;
		sv->artificial = v.kind == ADAC_VAR_THIS;
		sv->nlocs = p->nlocs - first_loc;
		sv->locs = sv->nlocs ? p->locs + first_loc : NULL; /* locs has room for every record: it never moves */
		adac_method_var_free(&v);
	}
	rc = 0;
out:
	free(order);
	adac_method_vars_free(&mv);
	return rc;
}

static const char *dir_of(const char *path, char *buf, size_t size)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;
	if (n >= size)
		n = size - 1;
	memcpy(buf, path, n);
	buf[n] = '\0';
	return buf;
}

/* The unit of a module's code: its assembly's file name, in the assembly's directory. */
static uint32_t module_unit(struct adac_managed_symbols *s, uint64_t module, struct adac_error *err)
{
	const char *name = adac_module_file_name(s->rt, module, NULL);
	const char *path = adac_module_path(s->rt, module, NULL);
	char dir[ADAC_MAX_PATH_BYTES];
	return adac_symfile_unit(s->sf, name && *name ? name : "?", path ? dir_of(path, dir, sizeof dir) : "", err);
}

/* The call-frame rows of each function of the code (body, funclets) from the runtime's unwind
 * info. A function whose unwind info cannot be read gets none: debuggers then fall back to their
 * own guesses there. */
static int method_frames(struct adac_managed_symbols *s, const struct adac_runtime_function *fns, size_t nfns, uint64_t start,
                         struct method_parts *p, struct adac_error *err)
{
	struct adac_cfi_row *cfi = malloc(ADAC_MAX_CFI_ROWS * sizeof *cfi);
	p->frames = calloc(nfns, sizeof *p->frames);
	if (!cfi || !p->frames) {
		free(cfi);
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	}
	for (size_t i = 0; i < nfns; i++) {
		size_t n;
		struct adac_error e = {0};
		if (adac_unwind_cfi(s->rt->t, &fns[i], cfi, ADAC_MAX_CFI_ROWS, &n, &e))
			continue;
		struct adac_sym_cfa_row *rows = calloc(n, sizeof *rows);
		if (!rows) {
			free(cfi);
			return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		}
		uint32_t len = fns[i].end - fns[i].begin, nrows = 0;
		bool ok = true;
		for (size_t k = 0; k < n && ok; k++) {
			if (cfi[k].offset >= len)
				continue;
			struct adac_sym_cfa_row *r = &rows[nrows++];
			r->offset = cfi[k].offset;
			r->cfa_offset = cfi[k].cfa_offset;
			ok = cfi[k].cfa_offset >= 0 && dwarf_reg(cfi[k].cfa_reg, false, &r->cfa_reg) == 0;
			for (unsigned g = 0; g < 16 && ok; g++)
				if (cfi[k].gpr_saved & (1u << g)) {
					r->saved[r->nsaved].at = cfi[k].gpr_at[g];
					ok = dwarf_reg((int32_t)g, false, &r->saved[r->nsaved++].reg) == 0 && cfi[k].gpr_at[g] % 8 == 0;
				}
			for (unsigned x = 0; x < 16 && ok; x++)
				if (cfi[k].xmm_saved & (1u << x)) {
					r->saved[r->nsaved].at = cfi[k].xmm_at[x];
					ok = dwarf_reg((int32_t)x, true, &r->saved[r->nsaved++].reg) == 0 && cfi[k].xmm_at[x] % 8 == 0;
				}
		}
		if (!ok || !nrows) {
			free(rows);
			continue;
		}
		uint64_t begin = fns[i].image_base + fns[i].begin;
		p->frames[p->nframes++] = (struct adac_sym_frame){(uint32_t)(begin - start), (uint32_t)(begin - start) + len,
		                                                   nrows, rows};
	}
	free(cfi);
	return 0;
}

static int add_code(struct adac_managed_symbols *s, uint64_t ip, const struct adac_code_info *code, struct adac_error *err)
{
	struct adac_error e = {0};
	uint64_t start, end;
	struct adac_method_info mi;
	const char *name;
	const struct adac_debug_info *di = NULL;
	if (code->debug_info && adac_debuginfo_get(s->rt, code, &di, &e) != 0) {
		if (fatal(&e))
			return adac_error_copy(err, &e);
		di = NULL; /* no lines or variables */
		adac_error_clear(&e);
	}
	uint32_t last = 0; /* past the last native offset the debug info maps: funclets end there */
	for (uint32_t i = 0; di && i < di->num_bounds; i++)
		if (di->bounds[i].native_offset + 1 > last)
			last = di->bounds[i].native_offset + 1;
	struct adac_runtime_function fns[ADAC_MAX_SYM_FUNCTIONS];
	size_t nfns = 0;
	if (adac_managed_code_functions(s->rt, ip, last, fns, ADAC_MAX_SYM_FUNCTIONS, &nfns, &e) ||
	    adac_md_read(s->rt, code->method_desc, &mi, &e) ||
	    !(name = adac_method_name(s->rt, code->method_desc, ADAC_NAME_PARAMS, &e))) {
		if (fatal(&e))
			return adac_error_copy(err, &e);
		skip(s, ip, &e);
		return 0;
	}
	if (nfns == 0) {
		adac_fail(&e, ADAC_E_CORRUPT, ip, "the code at 0x%llx has no RUNTIME_FUNCTION", (unsigned long long)ip);
		skip(s, ip, &e);
		return 0;
	}
	start = UINT64_MAX;
	end = 0;
	for (size_t i = 0; i < nfns; i++) {
		if (fns[i].image_base + fns[i].begin < start)
			start = fns[i].image_base + fns[i].begin;
		if (fns[i].image_base + fns[i].end > end)
			end = fns[i].image_base + fns[i].end;
	}
	uint32_t unit = module_unit(s, mi.module, err);
	if (!unit)
		return -1;
	struct adac_sym_method m = {.name = name, .unit = unit, .start = start, .size = end - start};
	struct method_parts p = {0};
	int rc = -1;
	struct adac_source_map map;
	adac_source_map_init(&map, s->rt, code->method_desc, di);
	if (map.first.line && !(m.decl_file = adac_symfile_file(s->sf, map.first.file, err)))
		goto out;
	m.decl_line = map.first.line;
	if (method_rows(s, &map, m.size, &p, err))
		goto out;
	if (di && mi.token && method_vars(s, di, code->method_desc, m.size, &p, err))
		goto out;
	if (method_frames(s, fns, nfns, start, &p, err))
		goto out;
	m.frames = p.frames;
	m.nframes = p.nframes;
	m.rows = p.rows;
	m.nrows = p.nrows;
	m.vars = p.vars;
	m.nvars = p.nvars;
	if (adac_symfile_add_method(s->sf, &m, &e)) {
		if (fatal(&e)) {
			adac_error_copy(err, &e);
			goto out;
		}
		skip(s, ip, &e);
	} else {
		s->stats.methods++;
		s->stats.rows += p.nrows;
		s->stats.vars += p.nvars;
	}
	rc = 0;
out:
	parts_free(&p);
	return rc;
}

int adac_managed_symbols_add_ip(struct adac_managed_symbols *s, uint64_t ip, struct adac_error *err)
{
	struct adac_code_info code;
	if (!ip || adac_em_find_code(s->rt, ip, &code, NULL) != 0 || (code.kind != ADAC_CODE_JIT && code.kind != ADAC_CODE_R2R) ||
	    !code.method_desc || !code.code_start)
		return 0;
	bool added;
	if (!adac_addr_map_get(&s->code, code.code_start, sizeof(struct seen), &added))
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	return added ? add_request(s, &(struct request){.ip = ip, .code = code}, err) : 0;
}

/* ---- what is in view ---- */

struct stack_walk {
	struct adac_managed_symbols *s;
	struct adac_addr_map sps;        /* managed frames unwound (by stack pointer) */
	bool have_regs;
	struct adac_regs regs;
	bool first;
	struct adac_error *err;
	int rc;
};

static bool is_managed(struct adac_runtime *rt, uint64_t pc)
{
	struct adac_code_info code;
	return pc && adac_em_find_code(rt, pc, &code, NULL) == 0 && (code.kind == ADAC_CODE_JIT || code.kind == ADAC_CODE_R2R);
}

/* Each backend frame, and the managed callers the backend's unwinder may skip (it has no unwind
 * info for managed code): unwound here from the runtime's, until native code or a frame seen. */
static int stack_frame(void *ctx, const struct adac_frame *f)
{
	struct stack_walk *w = ctx;
	bool first = w->first;
	w->first = false;
	if (!is_managed(w->s->rt, f->pc))
		return 0;
	struct adac_unwind_state st;
	if (first && w->have_regs && w->regs.r[ADAC_REG_RIP] == f->pc)
		adac_unwind_state_from_regs(&st, &w->regs);
	else
		adac_unwind_state_from_frame(&st, f->pc, f->sp, f->fp);
	for (unsigned n = 0; n < ADAC_MAX_UNWIND_FRAMES; n++) {
		if ((w->rc = adac_managed_symbols_add_ip(w->s, st.rip, w->err)) != 0)
			return 1;
		bool added = true;
		if (st.gpr[ADAC_REG_RSP] && !adac_addr_map_get(&w->sps, st.gpr[ADAC_REG_RSP], sizeof(struct seen), &added)) {
			w->rc = adac_fail(w->err, ADAC_E_NOMEM, 0, "out of memory");
			return 1;
		}
		if (!added || adac_managed_unwind(w->s->rt, &st, NULL) != 0 || !is_managed(w->s->rt, st.rip))
			break;
	}
	return 0;
}

/* The types of the variables a continuation saved (its suspension point's), written in its
 * method's unit: a debugger showing async frames types their values by these names (sym_types.h),
 * also where the code keeps no such variable in a frame. */
static int saved_types(struct adac_managed_symbols *s, uint64_t diagnostic_ip, int32_t state, struct adac_error *err)
{
	struct adac_code_info code;
	const struct adac_debug_info *di;
	const struct adac_suspension_point *sp;
	struct adac_method_vars mv;
	struct adac_error e = {0};
	if (adac_em_find_code(s->rt, diagnostic_ip, &code, NULL) != 0 ||
	    !code.method_desc || !code.debug_info || adac_debuginfo_get(s->rt, &code, &di, NULL) != 0 ||
	    !(sp = adac_debuginfo_suspension_point(di, (uint32_t)state)) ||
	    adac_method_vars_init(s->rt, code.method_desc, &mv, &e) != 0)
		return fatal(&e) ? adac_error_copy(err, &e) : 0;
	int rc = 0;
	uint32_t unit = module_unit(s, mv.mi.module, err);
	if (!unit)
		rc = -1;
	for (uint32_t i = 0; i < sp->num_vars && rc == 0; i++) {
		struct adac_method_var v;
		uint32_t type;
		adac_error_clear(&e);
		if (sp->vars[i].var_number < 0 || adac_method_var(s->rt, &mv, sp->vars[i].var_number, ADAC_IL_NO_MAPPING, &v, &e)) {
			if (fatal(&e))
				rc = adac_error_copy(err, &e);
			continue;
		}
		if (adac_sym_type_of(s->typer, &mv.tctx, v.sig, &v.type, &type, err) ||
		    adac_symfile_unit_type(s->sf, unit, type, err))
			rc = -1;
		adac_method_var_free(&v);
	}
	adac_method_vars_free(&mv);
	return rc;
}

static int add_saved_types(struct adac_managed_symbols *s, const struct adac_continuation *c, struct adac_error *err)
{
	if (!c->diagnostic_ip || c->state < 0)
		return 0;
	return add_request(s, &(struct request){.types = true, .ip = c->diagnostic_ip, .state = c->state}, err);
}

/* A continuation's method, and the types of what it saved. */
static int add_continuation(struct adac_managed_symbols *s, const struct adac_continuation *c, struct adac_error *err)
{
	return adac_managed_symbols_add_ip(s, c->diagnostic_ip, err) || add_saved_types(s, c, err) ? -1 : 0;
}

static int add_chain(struct adac_managed_symbols *s, uint64_t head, struct adac_error *err)
{
	struct adac_chain chain;
	if (adac_chain_walk(s->rt, head, 0, &chain, NULL) != 0)
		return 0;
	int rc = 0;
	for (size_t i = 0; i < chain.count && rc == 0; i++)
		rc = add_continuation(s, &chain.links[i], err);
	adac_chain_free(&chain);
	return rc;
}

static int add_threads(struct adac_managed_symbols *s, struct adac_error *err)
{
	const struct adac_thread *threads;
	size_t n;
	if (adac_target_threads(s->rt->t, &threads, &n, err))
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct stack_walk w = {.s = s, .first = true, .err = err};
		w.have_regs = adac_target_regs(s->rt->t, threads[i].tid, &w.regs, NULL) == 0;
		adac_target_frames(s->rt->t, threads[i].tid, stack_frame, &w, NULL);
		adac_addr_map_free(&w.sps);
		if (w.rc)
			return -1;
		/* The chains it runs: the callers of its running async method. */
		struct adac_managed_thread mth;
		struct adac_dispatcher disp[ADAC_MAX_DISPATCHERS];
		size_t ndisp = 0;
		if (adac_managed_thread_of(s->rt, threads[i].tid, &mth, NULL) != 0 ||
		    adac_thread_dispatchers(s->rt, &mth, disp, ADAC_MAX_DISPATCHERS, &ndisp, NULL) != 0)
			continue;
		for (size_t d = 0; d < ndisp; d++)
			if (disp[d].next_continuation && add_chain(s, disp[d].next_continuation, err))
				return -1;
	}
	return 0;
}

/* Every suspended chain on the heap: the method of each continuation found and the types of what
 * it saved, or (types_only) those types alone. */
static int add_heap_chains(struct adac_managed_symbols *s, bool types_only, struct adac_error *err)
{
	struct adac_async_scan scan;
	if (adac_async_scan(s->rt, NULL, 0, &scan, err)) /* (after the threads: this stop's) */
		return -1;
	int rc = 0;
	struct adac_addr_map infos = {0};   /* ResumeInfos seen: one per method and suspension point */
	for (size_t i = 0; i < scan.cont_count && rc == 0; i++) {
		struct adac_continuation c;
		if (adac_cont_read(s->rt, scan.conts[i].addr, &c, NULL) != 0 || !c.diagnostic_ip)
			continue;
		bool added = true;
		if (c.resume_info && !adac_addr_map_get(&infos, c.resume_info, sizeof(struct seen), &added))
			rc = adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		else if (added)
			rc = types_only ? add_saved_types(s, &c, err) : add_continuation(s, &c, err);
	}
	adac_addr_map_free(&infos);
	adac_async_scan_free(&scan);
	return rc;
}

static int add_jit_code(void *ctx, uint64_t start, struct adac_error *err)
{
	return adac_managed_symbols_add_ip(ctx, start, err);
}

int adac_managed_symbols_collect(struct adac_managed_symbols *s, struct adac_error *err)
{
	if (add_threads(s, err))
		return -1;
	if ((s->o.scope >= ADAC_MANAGED_SYMBOLS_CHAINS || s->o.chain_types) &&
	    add_heap_chains(s, s->o.scope < ADAC_MANAGED_SYMBOLS_CHAINS, err))
		return -1;
	if (s->o.scope == ADAC_MANAGED_SYMBOLS_ALL && adac_em_code_starts(s->rt, add_jit_code, s, err))
		return -1;
	return 0;
}

/* Two 64-bit sums of different mixes: equal digests of different inputs are not a concern. */
static void mix(uint64_t d[2], uint64_t v)
{
	d[0] = (d[0] ^ v) * 0x100000001B3ull;
	d[0] ^= d[0] >> 29;
	d[1] = (d[1] + v) * 0xFF51AFD7ED558CCDull;
	d[1] ^= d[1] >> 33;
}

void adac_managed_symbols_digest(const struct adac_managed_symbols *s, uint64_t digest[2])
{
	digest[0] = 0x9E3779B97F4A7C15ull;
	digest[1] = 0xC2B2AE3D27D4EB4Full;
	mix(digest, (uint64_t)s->o.scope);
	mix(digest, s->o.type_depth);
	mix(digest, s->o.chain_types);
	mix(digest, adac_target_symbols_generation(s->rt->t));
	mix(digest, s->nrequests);
	for (size_t i = 0; i < s->nrequests; i++) {
		const struct request *r = &s->requests[i];
		mix(digest, r->types ? r->ip | 1ull << 63 : r->code.code_start);
		mix(digest, r->types ? (uint64_t)(uint32_t)r->state : r->code.method_desc);
	}
}

struct adac_symfile *adac_managed_symbols_finish(struct adac_managed_symbols *s, struct adac_managed_symbols_stats *stats,
                                         struct adac_error *err)
{
	for (size_t i = 0; i < s->nrequests; i++) {
		const struct request *r = &s->requests[i];
		if (r->types ? saved_types(s, r->ip, r->state, err) : add_code(s, r->ip, &r->code, err))
			return NULL;
	}
	s->nrequests = 0;
	if (adac_sym_typer_finish(s->typer, err))
		return NULL;
	s->stats.types = adac_symfile_type_count(s->sf);
	if (stats)
		*stats = s->stats;
	struct adac_symfile *sf = s->sf;
	s->sf = NULL;
	return sf;
}
