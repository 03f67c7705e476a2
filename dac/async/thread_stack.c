/* thread_stack.c - a thread's physical frames, merged with the managed frames only the runtime's
 * unwind info finds, and the chains its dispatcher records run.
 *
 * The backend's unwinder (libdwfl, LLDB) has no unwind info for managed code and falls back to
 * frame pointers there, which skips frames without one or stopped in a prologue. */
#include "async/thread_stack.h"

#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/grow.h"
#include "base/limits.h"
#include "code/debuginfo.h"
#include "code/execution_manager.h"
#include "code/managed_unwind.h"
#include "code/source_map.h"
#include "runtime/runtime.h"
#include "runtime/threads.h"
#include "target/target.h"
#include "types/methoddesc.h"
#include "types/names.h"

struct walk {
	struct adac_runtime *rt;
	const struct adac_stack_visitor *v;
	unsigned n;                   /* frames given */
	bool stopped;                 /* the visitor stopped the walk */
	bool have_regs;               /* regs: the thread's registers, the state of frame 0 */
	struct adac_regs regs;
	bool seen_first;
	bool pending;                 /* next: the caller of the last managed frame, not given yet */
	struct adac_unwind_state next;
};

/* JIT-compiled or ReadyToRun code, which has unwind info. */
static bool is_managed_code(struct adac_runtime *rt, uint64_t pc)
{
	struct adac_code_info code;
	return pc && adac_em_find_code(rt, pc, &code, NULL) == 0 && (code.kind == ADAC_CODE_JIT || code.kind == ADAC_CODE_R2R);
}

void adac_stack_frame_name(struct adac_runtime *rt, struct adac_stack_frame *sf)
{
	struct adac_code_info code;
	if (adac_em_find_code(rt, sf->pc, &code, NULL) || !code.method_desc)
		return;
	struct adac_method_info mi;
	sf->symbol = adac_method_name(rt, code.method_desc, ADAC_NAME_PARAMS, NULL);
	if (sf->symbol && adac_md_read(rt, code.method_desc, &mi, NULL) == 0)
		sf->module = adac_module_file_name(rt, mi.module, NULL);
	sf->offset = code.offset;
	sf->managed = sf->symbol != NULL;
	/* The source line, as the symbol files give it: a caller's at its call instruction. */
	const struct adac_debug_info *di = NULL;
	struct adac_source_map map;
	if (sf->managed && code.debug_info && adac_debuginfo_get(rt, &code, &di, NULL) != 0)
		di = NULL;
	adac_source_map_init(&map, rt, code.method_desc, di);
	struct adac_source_line sl = adac_source_map_at(&map, (uint32_t)(sf->caller && sf->offset ? sf->offset - 1 : sf->offset));
	sf->file = sl.line ? sl.file : NULL;
	sf->line = sl.line;
}

/* Gives one frame, naming managed code the backend could not name (st: its registers when it is
 * managed, else NULL). 1 when the visitor stops. */
static int give_frame(struct walk *w, const struct adac_frame *f, bool recovered, const struct adac_unwind_state *st)
{
	struct adac_stack_frame sf = {.pc = f->pc, .sp = f->sp, .module = f->module, .symbol = f->symbol,
	                              .offset = f->sym_offset, .file = f->file, .line = f->line, .recovered = recovered,
	                              .caller = w->n > 0, .regs = st};
	if (!sf.symbol)
		adac_stack_frame_name(w->rt, &sf);
	if (!sf.managed)
		sf.regs = NULL;
	if (w->v->frame(w->v->ctx, &sf)) {
		w->stopped = true;
		return 1;
	}
	w->n++;
	return 0;
}

/* Unwinds the managed frame just given; its caller becomes w->next. */
static void unwind_managed(struct walk *w, const struct adac_unwind_state *st)
{
	struct adac_error err = {0};
	w->next = *st;
	w->pending = adac_managed_unwind(w->rt, &w->next, &err) == 0;
	if (!w->pending)
		w->v->error(w->v->ctx, &err);
}

/* Gives w->next, a frame the backend did not list, and goes on to its caller. 1: stop. */
static int give_next(struct walk *w)
{
	struct adac_frame f = {.pc = w->next.rip, .sp = w->next.gpr[ADAC_REG_RSP], .fp = w->next.gpr[ADAC_REG_RBP]};
	bool managed = is_managed_code(w->rt, f.pc);
	if (!managed) {
		/* The unwind left managed code for a native caller the backend skipped. */
		w->pending = false;
		const struct adac_module *m = adac_target_module_at(w->rt->t, f.pc);
		if (!m) {
			struct adac_error err = {0};
			adac_fail(&err, ADAC_E_CORRUPT, f.pc, "the managed frame above returns to 0x%llx (rsp 0x%llx), which is in no module",
			          (unsigned long long)f.pc, (unsigned long long)f.sp);
			w->v->error(w->v->ctx, &err);
			return 0;
		}
		const char *slash = strrchr(m->path, '/');
		f.module = slash ? slash + 1 : m->path;
	}
	if (w->n >= ADAC_MAX_UNWIND_FRAMES) {
		struct adac_error err = {0};
		adac_fail(&err, ADAC_E_LIMIT, f.sp, "more than ADAC_MAX_UNWIND_FRAMES (%u) frames", ADAC_MAX_UNWIND_FRAMES);
		w->v->error(w->v->ctx, &err);
		w->pending = false;
		return 1;
	}
	struct adac_unwind_state here = w->next;
	if (give_frame(w, &f, true, managed ? &here : NULL))
		return 1;
	if (managed) {
		struct adac_unwind_state st = w->next;
		unwind_managed(w, &st);
	}
	return 0;
}

static int on_backend_frame(void *ctx, const struct adac_frame *f)
{
	struct walk *w = ctx;
	bool first = !w->seen_first;
	w->seen_first = true;
	struct adac_unwind_state st;
	bool have_state = false;
	while (w->pending) {
		bool sp_known = f->sp != 0;
		if (f->pc == w->next.rip && (!sp_known || f->sp == w->next.gpr[ADAC_REG_RSP])) {
			/* The backend's frame again; our state knows more registers. */
			st = w->next;
			if (!(st.known & (1u << ADAC_REG_RBP)) && f->fp) {
				st.gpr[ADAC_REG_RBP] = f->fp;
				st.known |= 1u << ADAC_REG_RBP;
			}
			have_state = true;
			w->pending = false;
			break;
		}
		if (sp_known && f->sp < w->next.gpr[ADAC_REG_RSP])
			return 0; /* inside the frames unwound: the backend's guess, not on the stack */
		if (sp_known && f->sp == w->next.gpr[ADAC_REG_RSP] && !is_managed_code(w->rt, w->next.rip)) {
			w->pending = false; /* the same native frame, seen differently: the backend's */
			break;
		}
		if (give_next(w))
			return 1;
	}
	bool managed = is_managed_code(w->rt, f->pc);
	if (managed && !have_state) {
		if (first && w->have_regs && w->regs.r[ADAC_REG_RIP] == f->pc)
			adac_unwind_state_from_regs(&st, &w->regs);
		else
			adac_unwind_state_from_frame(&st, f->pc, f->sp, f->fp);
	}
	if (give_frame(w, f, false, managed ? &st : NULL))
		return 1;
	if (!managed)
		return 0;
	unwind_managed(w, &st);
	return 0;
}

int adac_thread_stack_walk(struct adac_runtime *rt, uint64_t tid, const struct adac_stack_visitor *v,
                           struct adac_error *err)
{
	struct walk w = {.rt = rt, .v = v};
	w.have_regs = adac_target_regs(rt->t, tid, &w.regs, NULL) == 0;
	struct adac_error e = {0};
	int rc = adac_target_frames(rt->t, tid, on_backend_frame, &w, &e);
	/* After the backend's last frame: the managed frames it did not reach. */
	while (w.pending && !w.stopped)
		if (give_next(&w))
			break;
	if (rc)
		adac_error_copy(err, &e);
	return rc ? -1 : 0;
}

int adac_thread_chains(struct adac_runtime *rt, const struct adac_managed_thread *th, struct adac_thread_chain *out,
                       size_t *n, struct adac_error *err)
{
	struct adac_dispatcher disp[ADAC_MAX_DISPATCHERS];
	size_t ndisp = 0;
	*n = 0;
	int rc = adac_thread_dispatchers(rt, th, disp, ADAC_MAX_DISPATCHERS, &ndisp, err);
	for (size_t i = 0; i < ndisp; i++)
		if (disp[i].next_continuation) /* else the running method is the last of its chain */
			out[(*n)++] = (struct adac_thread_chain){disp[i].next_continuation, disp[i].current_task, disp[i].addr};
	return rc;
}

size_t adac_thread_chain_after(const struct adac_thread_chain *c, const uint64_t *sp, size_t n)
{
	size_t k = SIZE_MAX;
	for (size_t i = 0; i < n; i++)
		if (sp[i] && sp[i] <= c->dispatcher)
			k = i;
	return k;
}

int adac_frame_sps_push(struct adac_frame_sps *l, uint64_t pc, uint64_t sp)
{
	size_t cap = l->cap; /* (both arrays grow alike) */
	if (adac_grow((void **)&l->pc, &cap, l->n + 1, sizeof *l->pc, 64) ||
	    adac_grow((void **)&l->sp, &l->cap, l->n + 1, sizeof *l->sp, 64))
		return -1;
	l->pc[l->n] = pc;
	l->sp[l->n++] = sp;
	return 0;
}

void adac_frame_sps_free(struct adac_frame_sps *l)
{
	free(l->pc);
	free(l->sp);
	memset(l, 0, sizeof *l);
}

struct pc_sp {
	struct adac_frame_sps f;
	bool nomem;
};

static int collect_pc_sp(void *ctx, const struct adac_stack_frame *f)
{
	struct pc_sp *l = ctx;
	if (adac_frame_sps_push(&l->f, f->pc, f->sp)) {
		l->nomem = true;
		return 1;
	}
	return l->f.n >= ADAC_MAX_UNWIND_FRAMES;
}

static void ignore_error(void *ctx, const struct adac_error *err)
{
	(void)ctx;
	(void)err;
}

/* Whether pc is in a managed method debuggers show (not a stub or thunk). */
static bool shown_method(struct adac_runtime *rt, uint64_t pc)
{
	struct adac_code_info code;
	struct adac_method_info mi;
	return adac_em_find_code(rt, pc, &code, NULL) == 0 && code.method_desc &&
	       adac_md_read(rt, code.method_desc, &mi, NULL) == 0 && !mi.diagnostics_hidden;
}

int adac_thread_chain_resumed(struct adac_runtime *rt, uint64_t tid, const struct adac_thread_chain *c,
                              struct adac_stack_frame *f, struct adac_error *err)
{
	struct pc_sp l = {0};
	struct adac_stack_visitor v = {collect_pc_sp, ignore_error, &l};
	/* (A walk that fails past the loop's frame has found what is needed.) */
	int walked = adac_thread_stack_walk(rt, tid, &v, err), rc = 0;
	size_t k = adac_thread_chain_after(c, l.f.sp, l.f.n), i = k;
	if (l.nomem)
		rc = adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	else if (k == SIZE_MAX && walked)
		rc = -1;
	else if (k == SIZE_MAX)
		rc = adac_fail(err, ADAC_E_CORRUPT, 0, "no frame of thread %llu holds its dispatch loop's record 0x%016llx",
		               (unsigned long long)tid, (unsigned long long)c->dispatcher);
	else
		adac_error_clear(err);
	while (!rc && i-- > 0 && !shown_method(rt, l.f.pc[i]))
		;
	if (!rc && i == SIZE_MAX)
		rc = adac_fail(err, ADAC_E_NOT_FOUND, 0, "thread %llu runs no method inside its dispatch loop",
		               (unsigned long long)tid);
	if (!rc) {
		*f = (struct adac_stack_frame){.pc = l.f.pc[i], .sp = l.f.sp[i], .caller = i > 0};
		adac_stack_frame_name(rt, f);
	}
	adac_frame_sps_free(&l.f);
	return rc;
}

#define WORDS_CHUNK 8192u   /* stack bytes read at a time */

int adac_thread_wait_words(struct adac_runtime *rt, const struct adac_managed_thread *th, uint64_t end,
                           adac_thread_word_cb word, void *ctx, struct adac_error *err)
{
	struct adac_regs regs;
	if (adac_target_regs(rt->t, th->os_id, &regs, err))
		return -1;
	for (size_t i = 0; i < ADAC_REG_COUNT; i++)
		if (i != ADAC_REG_RIP && i != ADAC_REG_RSP && i != ADAC_REG_FS_BASE && word(ctx, regs.r[i], 0, true))
			return 0;
	const unsigned ps = adac_target_ptr_size(rt->t);
	uint64_t sp = regs.r[ADAC_REG_RSP] & ~(uint64_t)(ps - 1);
	if (end <= sp)
		end = th->stack_base > sp ? th->stack_base : sp + ADAC_MAX_STACK_SCAN_BYTES;
	if (end - sp > ADAC_MAX_STACK_SCAN_BYTES)
		end = sp + ADAC_MAX_STACK_SCAN_BYTES;
	uint8_t buf[WORDS_CHUNK];
	for (uint64_t at = sp; at < end;) {
		size_t want = end - at < WORDS_CHUNK ? (size_t)(end - at) : WORDS_CHUNK;
		size_t got = adac_read_upto(rt->t, at, buf, want);
		for (size_t off = 0; off + ps <= got; off += ps)
			if (word(ctx, ps == 8 ? adac_get_u64(buf, off) : adac_get_u32(buf, off), at + off, false))
				return 0;
		if (got < want)
			break; /* the end of what the target has of this stack */
		at += got;
	}
	return 0;
}
