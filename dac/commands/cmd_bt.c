/* cmd_bt.c - `bt`: logical async stacks. For threads: the physical frames, then the async frames of
 * the chains the thread is running (from its dispatcher records). For an address: the chain of a
 * Continuation, or of a task whose state object is a Continuation. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "async/continuation.h"
#include "async/dispatcher.h"
#include "base/limits.h"
#include "code/execution_manager.h"
#include "code/debuginfo.h"
#include "code/managed_unwind.h"
#include "code/source_map.h"
#include "commands/command.h"
#include "runtime/runtime.h"
#include "runtime/threads.h"
#include "types/fielddesc.h"
#include "types/methoddesc.h"
#include "types/names.h"
#include "view/chain_view.h"
#include "view/frame_vars.h"

#define DEFAULT_DEPTH 10000u   /* chain links walked unless --depth says otherwise */

const struct adac_command_info adac_cmd_bt_info = {
	.name = "bt",
	.summary = "Show async backtraces: a thread's frames followed by the async frames it is running, or the "
	           "chain of a continuation or task",
	.syntax = "[--all | --thread <id>] [--address <addr>]... [-c <count>] [--depth <n>] [--locals] [--json]",
	.details =
		"Async frames are the logical callers of the code a thread runs: suspended async\n"
		"methods (runtime-async Continuation objects linked callee -> caller). Each is\n"
		"shown as\n"
		"  async #N: <address> <module>`<method> + <offset> at <file>:<line> [state <n>]\n"
		"with the method and offset of its suspension point (ResumeInfo.DiagnosticIP),\n"
		"the source line of its await, and its suspension index. Task and ValueTask\n"
		"continuations are not frames: the first one is shown as what the chain is\n"
		"awaiting (with the awaited task's status). Shared generic code is named by the\n"
		"instantiation it runs for when the continuation saved it. Problems are shown on\n"
		"the frame they affect.\n"
		"\n"
		"Options:\n"
		"  -a, --all             Every thread (the CLI's default).\n"
		"  -t, --thread <id>     One thread: its LLDB index in LLDB, its OS thread id in\n"
		"                        the CLI.\n"
		"  -A, --address <addr>  The chain starting at a Continuation, or owned by a\n"
		"                        task (its m_stateObject); may be repeated.\n"
		"  -c, --count <n>       Show at most n frames per list (0: all).\n"
		"  -d, --depth <n>       Walk at most n links per chain (default 10000).\n"
		"  -v, --locals          Show the awaited locals under each async frame, and the\n"
		"                        parameters and locals of managed physical frames\n"
		"                        (like SOS clrstack -a).\n"
		"  -j, --json            Print JSON: per chain the raw IP array and the resolved\n"
		"                        frames.\n"
		"\n"
		"Physical frames come from the debugger's (or libdw's) unwinder; managed frames\n"
		"it cannot unwind (no frame pointer, stopped in a prologue) are recovered from\n"
		"the runtime's own unwind info and inserted, so frame numbers can differ from a\n"
		"plain `bt` (JSON marks them with \"unwound_by\": \"asyncdac\").\n",
};

struct bt_opts {
	bool all, json, locals;
	bool has_thread;
	uint64_t thread;
	uint64_t addresses[ADAC_MAX_ADDRESS_ARGS];
	size_t naddresses;
	uint64_t count;
	uint64_t depth;
};

static int parse(int argc, char **argv, struct bt_opts *o, struct adac_error *err)
{
	memset(o, 0, sizeof *o);
	o->depth = DEFAULT_DEPTH;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		if (adac_opt_is(a, "-a", "--all") || strcmp(a, "all") == 0) {
			o->all = true;
		} else if (adac_opt_is(a, "-v", "--locals")) {
			o->locals = true;
		} else if (adac_opt_is(a, "-j", "--json")) {
			o->json = true;
		} else if (adac_opt_is(a, "-t", "--thread")) {
			if (adac_opt_value("bt", argc, argv, &i, &v, err) || adac_opt_u64("bt", a, v, &o->thread, err))
				return -1;
			o->has_thread = true;
		} else if (adac_opt_is(a, "-A", "--address")) {
			if (o->naddresses >= ADAC_MAX_ADDRESS_ARGS)
				return adac_fail(err, ADAC_E_BAD_ARG, 0, "at most %u addresses", ADAC_MAX_ADDRESS_ARGS);
			if (adac_opt_value("bt", argc, argv, &i, &v, err) ||
			    adac_opt_u64("bt", a, v, &o->addresses[o->naddresses++], err))
				return -1;
		} else if (adac_opt_is(a, "-c", "--count")) {
			if (adac_opt_value("bt", argc, argv, &i, &v, err) || adac_opt_u64("bt", a, v, &o->count, err))
				return -1;
		} else if (adac_opt_is(a, "-d", "--depth")) {
			if (adac_opt_value("bt", argc, argv, &i, &v, err) || adac_opt_u64("bt", a, v, &o->depth, err))
				return -1;
			if (o->depth == 0 || o->depth > ADAC_MAX_CHAIN_DEPTH)
				return adac_fail(err, ADAC_E_BAD_ARG, 0, "--depth must be between 1 and %u", ADAC_MAX_CHAIN_DEPTH);
		} else {
			return adac_opt_unknown("bt", a, err);
		}
	}
	if (o->all && o->has_thread)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "give either --all or --thread, not both");
	return 0;
}

/* ---- physical frames ----
 *
 * The backend's unwinder (libdwfl, LLDB) has no unwind info for managed code and falls back to
 * frame pointers there, which skips frames without one or stopped in a prologue. So every managed
 * frame is unwound again from the runtime's unwind info (managed_unwind.c): when the caller that
 * gives is not the backend's next frame (same PC and SP), the frames it finds are inserted until
 * one is the backend's again, or the unwind leaves managed code. Backend frames below the SP
 * reached are not on the stack and are left out; native frames are the backend's. */

struct phys_ctx {
	struct adac_runtime *rt;
	struct adac_out *out;
	json_t *json;      /* array, or NULL for text */
	bool locals;       /* --locals: the variables of managed frames */
	uint64_t count;    /* limit, 0 = all */
	unsigned n;
	bool truncated;
	bool have_regs;               /* regs: the thread's registers, the state of frame 0 */
	struct adac_regs regs;
	bool seen_first;
	bool pending;                 /* next: the caller of the last managed frame, not listed yet */
	struct adac_unwind_state next;
	json_t *last;                 /* JSON of the last frame printed */
};

/* JIT-compiled or ReadyToRun code, which has unwind info. */
static bool is_managed_code(struct adac_runtime *rt, uint64_t pc)
{
	struct adac_code_info code;
	return pc && adac_em_find_code(rt, pc, &code, NULL) == 0 && (code.kind == ADAC_CODE_JIT || code.kind == ADAC_CODE_R2R);
}

/* Prints one frame (inserted: found by our unwinder, not the backend's; st: its registers, for
 * --locals, NULL when it is not managed). 1 when --count stops the list. */
static int emit_frame(struct phys_ctx *c, const struct adac_frame *f, bool inserted, const struct adac_unwind_state *st)
{
	if (c->count && c->n >= c->count) {
		c->truncated = true;
		return 1;
	}
	const char *module = f->module, *symbol = f->symbol, *file = f->file;
	uint64_t offset = f->sym_offset;
	uint32_t line = f->line;
	bool managed = false;
	struct adac_code_info code;
	if (!symbol && adac_em_find_code(c->rt, f->pc, &code, NULL) == 0 && code.method_desc) {
		struct adac_method_info mi;
		symbol = adac_method_name(c->rt, code.method_desc, ADAC_NAME_PARAMS, NULL);
		if (symbol && adac_md_read(c->rt, code.method_desc, &mi, NULL) == 0)
			module = adac_module_file_name(c->rt, mi.module, NULL);
		offset = code.offset;
		managed = symbol != NULL;
		/* The source line, as the symbol files give it: a caller's at its call instruction. */
		const struct adac_debug_info *di = NULL;
		struct adac_source_map map;
		if (managed && code.debug_info && adac_debuginfo_get(c->rt, &code, &di, NULL) != 0)
			di = NULL;
		adac_source_map_init(&map, c->rt, code.method_desc, di);
		struct adac_source_line sl = adac_source_map_at(&map, (uint32_t)(c->n && offset ? offset - 1 : offset));
		file = sl.line ? sl.file : NULL;
		line = sl.line;
	}
	if (c->json) {
		json_t *j = json_object();
		json_object_set_new(j, "index", json_integer(c->n));
		json_object_set_new(j, "pc", adac_json_addr(f->pc));
		json_object_set_new(j, "sp", f->sp ? adac_json_addr(f->sp) : json_null());
		json_object_set_new(j, "module", module ? json_string(module) : json_null());
		json_object_set_new(j, "symbol", symbol ? json_string(symbol) : json_null());
		json_object_set_new(j, "offset", symbol ? json_integer((json_int_t)offset) : json_null());
		json_object_set_new(j, "managed", json_boolean(managed));
		json_object_set_new(j, "file", file ? json_string(file) : json_null());
		json_object_set_new(j, "line", file ? json_integer(line) : json_null());
		if (inserted)
			json_object_set_new(j, "unwound_by", json_string("asyncdac"));
		json_t *vars = NULL;
		if (c->locals && managed && st && adac_frame_vars_print(c->rt, st, c->n > 0, "", NULL, &vars, NULL) == 0 && vars)
			json_object_set_new(j, "locals", vars);
		json_array_append_new(c->json, j);
		c->last = j;
	} else {
		adac_print(c->out, "  frame #%u: 0x%016llx", c->n, (unsigned long long)f->pc);
		if (symbol)
			adac_print(c->out, managed ? " %s`%s + 0x%llx" : " %s`%s + %llu", module ? module : "?", symbol,
			           (unsigned long long)offset);
		else if (module)
			adac_print(c->out, " %s", module);
		if (file && managed) {
			const char *base = strrchr(file, '/');
			adac_print(c->out, " at %s:%u", base ? base + 1 : file, line); /* as async frames show it */
		} else if (file) {
			adac_print(c->out, " at %s:%u", file, line);
		}
		adac_print(c->out, "\n");
		if (c->locals && managed && st)
			adac_frame_vars_print(c->rt, st, c->n > 0, "      ", c->out, NULL, NULL);
	}
	c->n++;
	return 0;
}

/* A problem found while unwinding, after the frame it concerns. */
static void phys_error(struct phys_ctx *c, const struct adac_error *err)
{
	if (c->json && c->last)
		json_object_set_new(c->last, "unwind_error", json_string(err->msg));
	else if (!c->json)
		adac_print(c->out, "  frame #%u: error: %s\n", c->n, err->msg);
}

/* Unwinds the managed frame just printed; its caller becomes c->next. */
static void unwind_managed(struct phys_ctx *c, const struct adac_unwind_state *st)
{
	struct adac_error err = {0};
	c->next = *st;
	c->pending = adac_managed_unwind(c->rt, &c->next, &err) == 0;
	if (!c->pending)
		phys_error(c, &err);
}

/* Prints c->next, a frame the backend did not list, and goes on to its caller. 1: stop. */
static int emit_next(struct phys_ctx *c)
{
	struct adac_frame f = {.pc = c->next.rip, .sp = c->next.gpr[ADAC_REG_RSP], .fp = c->next.gpr[ADAC_REG_RBP]};
	bool managed = is_managed_code(c->rt, f.pc);
	if (!managed) {
		/* The unwind left managed code for a native caller the backend skipped. */
		c->pending = false;
		const struct adac_module *m = adac_target_module_at(c->rt->t, f.pc);
		if (!m) {
			struct adac_error err = {0};
			adac_fail(&err, ADAC_E_CORRUPT, f.pc, "the managed frame above returns to 0x%llx (rsp 0x%llx), which is in no module",
			          (unsigned long long)f.pc, (unsigned long long)f.sp);
			phys_error(c, &err);
			return 0;
		}
		const char *slash = strrchr(m->path, '/');
		f.module = slash ? slash + 1 : m->path;
	}
	if (c->n >= ADAC_MAX_UNWIND_FRAMES) {
		struct adac_error err = {0};
		adac_fail(&err, ADAC_E_LIMIT, f.sp, "more than ADAC_MAX_UNWIND_FRAMES (%u) frames", ADAC_MAX_UNWIND_FRAMES);
		phys_error(c, &err);
		c->pending = false;
		return 1;
	}
	struct adac_unwind_state here = c->next;
	if (emit_frame(c, &f, true, managed ? &here : NULL))
		return 1;
	if (managed) {
		struct adac_unwind_state st = c->next;
		unwind_managed(c, &st);
	}
	return 0;
}

static int walk_phys(void *ctx, const struct adac_frame *f)
{
	struct phys_ctx *c = ctx;
	bool first = !c->seen_first;
	c->seen_first = true;
	struct adac_unwind_state st;
	bool have_state = false;
	while (c->pending) {
		bool sp_known = f->sp != 0;
		if (f->pc == c->next.rip && (!sp_known || f->sp == c->next.gpr[ADAC_REG_RSP])) {
			/* The backend's frame again; our state knows more registers. */
			st = c->next;
			if (!(st.known & (1u << ADAC_REG_RBP)) && f->fp) {
				st.gpr[ADAC_REG_RBP] = f->fp;
				st.known |= 1u << ADAC_REG_RBP;
			}
			have_state = true;
			c->pending = false;
			break;
		}
		if (sp_known && f->sp < c->next.gpr[ADAC_REG_RSP])
			return 0; /* inside the frames unwound: the backend's guess, not on the stack */
		if (sp_known && f->sp == c->next.gpr[ADAC_REG_RSP] && !is_managed_code(c->rt, c->next.rip)) {
			c->pending = false; /* the same native frame, seen differently: the backend's */
			break;
		}
		if (emit_next(c))
			return 1;
	}
	bool managed = is_managed_code(c->rt, f->pc);
	if (managed && !have_state) {
		if (first && c->have_regs && c->regs.r[ADAC_REG_RIP] == f->pc)
			adac_unwind_state_from_regs(&st, &c->regs);
		else
			adac_unwind_state_from_frame(&st, f->pc, f->sp, f->fp);
	}
	if (emit_frame(c, f, false, managed ? &st : NULL))
		return 1;
	if (!managed)
		return 0;
	unwind_managed(c, &st);
	return 0;
}

/* After the backend's last frame: the managed frames it did not reach. */
static void finish_phys(struct phys_ctx *c)
{
	while (c->pending && !c->truncated)
		if (emit_next(c))
			break;
}

/* ---- one thread ---- */

/* selected: marked "*" as LLDB marks the selected thread; the others are indented alike. */
static int show_thread(struct adac_runtime *rt, const struct adac_thread *th, bool selected, const struct bt_opts *o,
                       struct adac_out *out, json_t *threads_json)
{
	json_t *tj = NULL, *frames_json = NULL, *chains_json = NULL;
	if (o->json) {
		tj = json_object();
		frames_json = json_array();
		chains_json = json_array();
		json_object_set_new(tj, "index", json_integer(th->index));
		json_object_set_new(tj, "tid", json_integer((json_int_t)th->tid));
		json_object_set_new(tj, "name", json_string(th->name));
	} else {
		adac_print(out, "%c thread #%u", selected ? '*' : ' ', th->index);
		if (th->name[0])
			adac_print(out, ", name = '%s'", th->name);
		adac_print(out, ", tid = %llu\n", (unsigned long long)th->tid);
	}
	struct phys_ctx pc = {.rt = rt, .out = out, .json = frames_json, .count = o->count, .locals = o->locals};
	struct adac_error err = {0};
	pc.have_regs = adac_target_regs(rt->t, th->tid, &pc.regs, NULL) == 0;
	int frames_rc = adac_target_frames(rt->t, th->tid, walk_phys, &pc, &err);
	finish_phys(&pc);
	if (frames_rc && err.code != ADAC_E_UNSUPPORTED) {
		if (!o->json)
			adac_print(out, "  frame #%u: error: %s\n", pc.n, err.msg);
	}
	if (pc.truncated && !o->json)
		adac_print(out, "  (shown max number of frames (%llu), use -c 0 for all)\n", (unsigned long long)o->count);

	/* The chains this thread runs, innermost dispatch loop first. */
	struct adac_managed_thread mth;
	struct adac_dispatcher disp[ADAC_MAX_DISPATCHERS];
	size_t ndisp = 0;
	adac_error_clear(&err);
	if (adac_managed_thread_of(rt, th->tid, &mth, &err) == 0 &&
	    adac_thread_dispatchers(rt, &mth, disp, ADAC_MAX_DISPATCHERS, &ndisp, &err)) {
		if (!o->json)
			adac_print(out, "  async: error: %s\n", err.msg);
		else
			json_object_set_new(tj, "error", json_string(err.msg));
	}
	size_t index = 0;
	for (size_t i = 0; i < ndisp; i++) {
		if (!disp[i].next_continuation)
			continue; /* the running method is the last of its chain */
		struct adac_chain_view v;
		adac_error_clear(&err);
		if (adac_chain_view_build(rt, disp[i].next_continuation, o->depth, &v, &err)) {
			if (!o->json)
				adac_print(out, "  async #%zu: error: %s\n", index, err.msg);
			continue;
		}
		v.task = disp[i].current_task;
		if (o->json) {
			json_t *cj = adac_chain_view_json(rt, &v, o->count, o->locals ? ADAC_VIEW_LOCALS : 0);
			json_object_set_new(cj, "dispatcher", adac_json_addr(disp[i].addr));
			json_array_append_new(chains_json, cj);
		} else {
			index += adac_chain_view_print(rt, &v, out, index, o->count, o->locals ? ADAC_VIEW_LOCALS : 0);
		}
		adac_chain_view_free(&v);
	}
	if (o->json) {
		json_object_set_new(tj, "frames", frames_json);
		json_object_set_new(tj, "chains", chains_json);
		json_array_append_new(threads_json, tj);
	}
	return 0;
}

static int show_address(struct adac_runtime *rt, uint64_t addr, const struct bt_opts *o, struct adac_out *out,
                        json_t *chains_json, struct adac_error *err)
{
	uint64_t head = 0, task = 0;
	if (adac_chain_head_of(rt, addr, &head, &task, err))
		return -1;
	struct adac_chain_view v;
	if (adac_chain_view_build(rt, head, o->depth, &v, err))
		return -1;
	v.task = task;
	if (o->json) {
		json_array_append_new(chains_json, adac_chain_view_json(rt, &v, o->count, o->locals ? ADAC_VIEW_LOCALS : 0));
	} else {
		adac_print(out, "async chain of ");
		if (task) {
			uint64_t mt;
			const char *type = adac_object_mt(rt, task, &mt, NULL) == 0 ? adac_type_name(rt, mt, 0, NULL) : NULL;
			adac_print(out, "task 0x%016llx (%s), ", (unsigned long long)task, type ? type : "?");
		}
		adac_print(out, "Continuation 0x%016llx\n", (unsigned long long)head);
		adac_chain_view_print(rt, &v, out, 0, o->count, o->locals ? ADAC_VIEW_LOCALS : 0);
	}
	adac_chain_view_free(&v);
	return 0;
}

int adac_cmd_bt(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                struct adac_error *err)
{
	struct bt_opts o;
	if (parse(argc, argv, &o, err))
		return -1;
	struct adac_runtime *rt = adac_runtime_open(t, err);
	if (!rt)
		return -1;
	int rc = 0;
	json_t *root = o.json ? json_object() : NULL;
	json_t *threads_json = o.json ? json_array() : NULL, *chains_json = o.json ? json_array() : NULL;

	for (size_t i = 0; i < o.naddresses && rc == 0; i++) {
		if (i && !o.json)
			adac_print(out, "\n");
		rc = show_address(rt, o.addresses[i], &o, out, chains_json, err);
	}
	/* Threads: the ones asked for; by default the selected one (LLDB) or all (CLI). */
	bool want_threads = o.all || o.has_thread || o.naddresses == 0;
	const struct adac_thread *threads;
	size_t n = 0;
	if (rc == 0 && want_threads && adac_target_threads(t, &threads, &n, err))
		rc = -1;
	/* LLDB's selected thread; without LLDB, the first one (a core's: the thread that got the signal,
	 * which LLDB and gdb select too). */
	uint64_t selected = fe == ADAC_FRONTEND_LLDB ? adac_target_selected_thread(t) : 0;
	uint64_t marked = selected ? selected : n ? threads[0].tid : 0;
	bool any = false;
	for (size_t i = 0; rc == 0 && want_threads && i < n; i++) {
		const struct adac_thread *th = &threads[i];
		if (o.has_thread) {
			uint64_t id = fe == ADAC_FRONTEND_LLDB ? th->index : th->tid;
			if (id != o.thread)
				continue;
		} else if (!o.all && selected && th->tid != selected) {
			continue;
		}
		if (any && !o.json)
			adac_print(out, "\n");
		any = true;
		show_thread(rt, th, th->tid == marked, &o, out, threads_json);
	}
	if (rc == 0 && o.has_thread && !any)
		rc = adac_fail(err, ADAC_E_BAD_ARG, 0, "no thread %llu in the target%s", (unsigned long long)o.thread,
		               fe == ADAC_FRONTEND_LLDB ? " (give its index, as 'thread list' shows)" : "");
	if (o.json) {
		json_object_set_new(root, "threads", threads_json);
		json_object_set_new(root, "chains", chains_json);
		if (rc == 0)
			rc = adac_print_json(out, root, err);
		else
			json_decref(root);
	}
	adac_runtime_close(rt);
	return rc;
}
