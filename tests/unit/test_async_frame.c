/* test_async_frame.c - async frames (dac/async/async_frame.c), resolved chains and the frame cache
 * (resolved_chain.c), what a chain awaits and task status (task.c), and the locals step taking what
 * resolution found, on the hand-laid runtime of testasync.h: a JIT code heap holding Worker.Work of
 * the real ArrayLayout.dll, whose debug info (bounds and two suspension points) the frames resolve
 * through, and the real PDB for source lines. Needs the runtime pack of scripts/dotnet-setup. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#define AREA_SIZE 0x1000000ull
#include "async/async_frame.h"
#include "async/locals.h"
#include "async/resolved_chain.h"
#include "async/task.h"
#include "base/output.h"
#include "code/debuginfo.h"
#include "testasync.h"
#include "view/chain_view.h"
#include "view/locals_view.h"

#define F0 0x5A00000ull   /* RuntimeAsyncTaskContinuation awaiting GATE: F0 -> F1 -> F2 -> F3 */
#define F1 0x5A00100ull   /* Worker.Work +0x40, State 0: suspension point 0 */
#define F2 0x5A00200ull   /* +0x40, State 1: suspension point 1 is at +0x44 */
#define F3 0x5A00300ull   /* +0x44, State 7: out of range */
#define F4 0x5A00400ull   /* DiagnosticIP in no code */
#define F5 0x5A00500ull   /* ValueTaskSourceContinuation: Source SOURCE, Token 7 */
#define F6 0x5A00600ull   /* code without debug info */
#define RI 0x5A01000ull   /* ResumeInfos, 16 bytes apart */
#define GATE 0x5A02000ull /* the task F0 awaits */
#define SOURCE 0x5A02100ull
#define STR 0x5A03000ull
#define NO_CODE 0x7f00dead0000ull
#define CODE2 (CODE_MAP + 0x1000) /* a second code block of Worker.Work: no debug info */

#define WORK "ArrayLayoutSamples.Worker.Work(Int32, System.String, ArrayLayoutSamples.Mode)"

static void lay_out(struct rts *r)
{
	put_async_classes(r);
	/* Bounds: prolog, IL 0 (line 74), the two awaits at IL 0x20 (line 80) and 0x143 (line 89). */
	static const struct bound bounds[] = {
		{0x00, 0xfffffffe, 0}, {0x10, 0x00, 2}, {0x40, 0x20, 4}, {0x44, 0x143, 5}, {0x1f0, 0xfffffffd, 0},
	};
	/* Suspension point 0 at +0x40 saves count (VarNumber 1) at 48, label (2) at 56, text (local 6:
	 * VarNumber 4 + 6) at 64; point 1 at +0x44 saves nothing. */
	static const struct var vars[] = {{1, 48}, {2, 56}, {10, 64}};
	put_di(WORK_DI, bounds, 5, 2, 0x40, vars, 3);
	put_code_heap(r->md_work, WORK_DI);
	const uint64_t rch2 = CODE_OBJS + 0x400;
	put64(rch2 + off("RealCodeHeader", "MethodDesc"), r->md_work);
	put64(CODE2 - 8, rch2);
	code_nibble_set(CODE2, CODE2 + 0x100);

	put_string(STR, MT(M_STRING), "work");
	put_task(GATE, MT(M_TASK), 0, F0, ADAC_TASK_WAITING_FOR_ACTIVATION | 0x400);
	put64(SOURCE, MT(M_OBJECT));
	put_cont(F0, MT(M_RATC), F1, RI, 0, 0, 0);
	put64(F0 + 32, GATE);
	put_cont(F1, MT(M_CONT_LAYOUT), F2, RI + 16, WORK_CODE + 0x40, 0x211, 0);
	put32(F1 + 48, 42);
	put64(F1 + 56, STR);
	put64(F1 + 64, STR);
	put64(F1 + 40, STR); /* [Exception], slot 2 */
	put_cont(F2, MT(M_CONT_LAYOUT), F3, RI + 32, WORK_CODE + 0x40, 0x10, 1);
	put_cont(F3, MT(M_CONT_LAYOUT), 0, RI + 48, WORK_CODE + 0x44, 0, 7);
	put_cont(F4, MT(M_CONT_LAYOUT), 0, RI + 64, NO_CODE, 0, 0);
	put_cont(F5, MT(M_VTSC), F1, RI + 80, 0, 0, 0);
	put64(F5 + 32, SOURCE);
	put16(F5 + 40, 7);
	put_cont(F6, MT(M_CONT_LAYOUT), 0, RI + 96, CODE2 + 0x20, 0, 0);
	flush();
}

static void resolve(struct adac_runtime *rt, uint64_t addr, struct adac_async_frame *f)
{
	struct adac_continuation c;
	struct adac_error err = {0};
	memset(f, 0, sizeof *f);
	if (adac_cont_read(rt, addr, &c, &err)) {
		fprintf(stderr, "0x%llx: %s\n", (unsigned long long)addr, err.msg);
		CHECK(!"continuation readable");
		return;
	}
	adac_async_frame_resolve(rt, &c, f);
}

static void test_state_check(const struct rts *r)
{
	(void)r;
	static const struct var vars[] = {{1, 48}};
	struct adac_debug_info *di = make_di(2, 0x40, vars, 1);
	const struct adac_suspension_point *sp = (void *)1;
	char why[ADAC_STATE_WHY_MAX];
	CHECK(adac_state_check(NULL, 0, false, 0, &sp, why, sizeof why) == ADAC_STATE_UNCHECKED && !sp && !why[0]);
	CHECK(adac_state_check(di, 0, true, 0x40, &sp, why, sizeof why) == ADAC_STATE_OK && sp == &di->suspension_points[0]);
	CHECK_EQ_STR(why, "");
	CHECK(adac_state_check(di, 1, false, 0x40, &sp, why, sizeof why) == ADAC_STATE_OK && sp == &di->suspension_points[1]);
	CHECK(adac_state_check(di, 1, true, 0x40, &sp, why, sizeof why) == ADAC_STATE_MISMATCH && sp == &di->suspension_points[1]);
	CHECK_EQ_STR(why, "State 1 is the suspension point at +0x44, but DiagnosticIP is at +0x40");
	CHECK(adac_state_check(di, 2, true, 0x40, &sp, why, sizeof why) == ADAC_STATE_OUT_OF_RANGE && !sp);
	CHECK_EQ_STR(why, "State 2 is out of range: the method's debug info has 2 suspension points");
	CHECK(adac_state_check(di, -1, true, 0x40, &sp, why, sizeof why) == ADAC_STATE_OUT_OF_RANGE && !sp);
	CHECK_EQ_STR(why, "State -1 is out of range: the method's debug info has 2 suspension points");
	adac_debuginfo_free(di);
	di = make_di(1, 0x40, vars, 1);
	CHECK(adac_state_check(di, 3, false, 0, &sp, why, sizeof why) == ADAC_STATE_OUT_OF_RANGE);
	CHECK_EQ_STR(why, "State 3 is out of range: the method's debug info has 1 suspension point");
	adac_debuginfo_free(di);
	di = make_di(0, 0, NULL, 0);
	CHECK(adac_state_check(di, 0, true, 0x40, &sp, why, sizeof why) == ADAC_STATE_UNCHECKED && !sp);
	adac_debuginfo_free(di);
}

static void test_frames(struct rts *r)
{
	struct adac_runtime *rt = r->rt;
	struct adac_async_frame f;
	char buf[ADAC_FRAME_WHERE_MAX + 512];

	/* DiagnosticIP -> code map -> Worker.Work, its debug info, IL offset, PDB line; State 0 names the
	 * suspension point at DiagnosticIP. */
	resolve(rt, F1, &f);
	CHECK(!f.infrastructure && !f.hidden && adac_async_frame_shown(&f));
	CHECK(f.has_code && f.code.kind == ADAC_CODE_JIT);
	CHECK_EQ_U64(f.code.code_start, WORK_CODE);
	CHECK_EQ_U64(f.code.offset, 0x40);
	CHECK_EQ_U64(f.code.debug_info, WORK_DI);
	CHECK_EQ_U64(f.method_desc, r->md_work);
	CHECK(f.debug_info != NULL && !adac_failed(&f.debug_info_err));
	CHECK(f.state_verdict == ADAC_STATE_OK && f.sp && f.sp->diagnostic_native_offset == 0x40 && f.sp->num_vars == 3);
	CHECK_EQ_STR(f.state_why, "");
	CHECK_EQ_STR(f.method, WORK);
	CHECK(f.canonical_method == NULL && !f.shared_code && !f.has_exact);
	CHECK_EQ_STR(f.module, "ArrayLayout.dll");
	CHECK_EQ_U64(f.token, 0x06000002);
	CHECK(f.has_il && f.il_offset == 0x20);
	CHECK(f.has_source && f.line == 80);
	CHECK_EQ_STR(f.file, "/synthetic/array_layout/ArrayLayout.cs");
	CHECK(f.resume_md == 0 && !f.routes_disagree);
	CHECK_EQ_STR(f.note, "");
	CHECK_EQ_STR(adac_async_frame_label(&f, buf, sizeof buf), "ArrayLayout.dll`" WORK " at ArrayLayout.cs:80 [state 0]");

	/* State 1 names the point at +0x44: shown, with the verdict in a note. */
	resolve(rt, F2, &f);
	CHECK(f.state_verdict == ADAC_STATE_MISMATCH && f.sp && f.sp->diagnostic_native_offset == 0x44);
	CHECK_EQ_STR(f.state_why, "State 1 is the suspension point at +0x44, but DiagnosticIP is at +0x40");
	CHECK_EQ_STR(f.note, "State 1 is the suspension point at +0x44, but DiagnosticIP is at +0x40");
	CHECK(f.has_source && f.line == 80);

	/* State 7 of 2: out of range; the frame is still named and placed. */
	resolve(rt, F3, &f);
	CHECK(f.state_verdict == ADAC_STATE_OUT_OF_RANGE && f.sp == NULL);
	CHECK_EQ_STR(f.note, "State 7 is out of range: the method's debug info has 2 suspension points");
	CHECK(f.has_il && f.il_offset == 0x143 && f.has_source && f.line == 89);
	CHECK_EQ_STR(f.method, WORK);

	/* A DiagnosticIP in no code: unnamed, and why. */
	resolve(rt, F4, &f);
	CHECK(!f.has_code && f.method == NULL && f.method_desc == 0 && f.debug_info == NULL);
	CHECK_ERR(-1, &f.debug_info_err, ADAC_E_NOT_FOUND,
	          "DiagnosticIP 0x7f00dead0000: 0x7f00dead0000 is not in any code range the runtime knows");
	CHECK_EQ_STR(f.note, f.debug_info_err.msg);
	CHECK_EQ_STR(adac_async_frame_label(&f, buf, sizeof buf), "<unknown method> [state 0]");

	/* Code without debug info: named, not placed. */
	resolve(rt, F6, &f);
	CHECK(f.has_code && f.code.code_start == CODE2 && f.code.offset == 0x20 && f.debug_info == NULL);
	CHECK(f.state_verdict == ADAC_STATE_UNCHECKED && !f.has_il && !f.has_source);
	CHECK_ERR(-1, &f.debug_info_err, ADAC_E_NOT_FOUND, "no debug info for the code at 0x5901000");
	CHECK_EQ_STR(f.note, "no debug info: no debug info for the code at 0x5901000");
	CHECK_EQ_STR(f.method, WORK);

	/* Hand-rolled continuations: infrastructure, and what they await. */
	resolve(rt, F0, &f);
	CHECK(f.infrastructure && !adac_async_frame_shown(&f) && f.method == NULL && !f.has_code);
	struct adac_awaiting a;
	struct adac_error err = {0};
	CHECK(adac_awaiting_of(rt, &f.cont, &a, &err) == 0);
	CHECK_EQ_U64(a.object, GATE);
	CHECK_EQ_U64(a.mt, MT(M_TASK));
	CHECK_EQ_STR(a.type, "System.Threading.Tasks.Task");
	CHECK_EQ_STR(a.via, "Task");
	CHECK(!a.has_token && a.has_state_flags && a.state_flags == (ADAC_TASK_WAITING_FOR_ACTIVATION | 0x400));
	CHECK_EQ_STR(adac_task_status(a.state_flags), "WaitingForActivation");
	resolve(rt, F5, &f);
	CHECK(f.infrastructure);
	CHECK(adac_awaiting_of(rt, &f.cont, &a, &err) == 0);
	CHECK(a.object == SOURCE && a.has_token && a.token == 7 && !a.has_state_flags);
	CHECK_EQ_STR(a.via, "Source");
	CHECK_EQ_STR(a.type, "System.Object");
	/* A continuation class with neither field. */
	resolve(rt, F1, &f);
	int rc = adac_awaiting_of(rt, &f.cont, &a, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "continuation 0x5a00100 has no Task or Source field");
}

/* adac_async_frame_copy: every field, each text up to its end (the rest of its buffer is not
 * copied), and a name kept in the frame itself pointing into the copy. */
static void test_frame_copy(struct rts *r)
{
	static struct adac_async_frame src, dst;
	const uint64_t conts[] = {F1, F2, F4, F6};
	for (size_t i = 0; i < sizeof conts / sizeof conts[0]; i++) {
		resolve(r->rt, conts[i], &src);
		memset(&dst, 0xAA, sizeof dst);
		adac_async_frame_copy(&dst, &src);
		CHECK(memcmp(&dst, &src, offsetof(struct adac_async_frame, debug_info_err)) == 0);
		CHECK(dst.debug_info_err.code == src.debug_info_err.code && dst.debug_info_err.addr == src.debug_info_err.addr);
		CHECK_EQ_STR(dst.debug_info_err.msg, src.debug_info_err.msg);
		CHECK_EQ_STR(dst.state_why, src.state_why);
		CHECK_EQ_STR(dst.name_buf, src.name_buf);
		CHECK_EQ_STR(dst.note, src.note);
	}
	/* F2's texts are not empty: its verdict; F4's: its debug info's error. */
	resolve(r->rt, F2, &src);
	CHECK(src.state_why[0] != '\0');
	snprintf(src.name_buf, sizeof src.name_buf, "%s", "Ns.C.M(Int32) or Ns.C.M(String)");
	src.method = src.name_buf;
	memset(&dst, 0xAA, sizeof dst);
	adac_async_frame_copy(&dst, &src);
	CHECK(dst.method == dst.name_buf);
	CHECK_EQ_STR(dst.method, "Ns.C.M(Int32) or Ns.C.M(String)");
	CHECK_EQ_STR(dst.state_why, src.state_why);
}

static void test_task_status(void)
{
	static const struct {
		uint32_t flags;
		const char *status, *text;
	} cases[] = {
		{0, "Created", ""},
		{ADAC_TASK_WAITING_FOR_ACTIVATION, "WaitingForActivation", ""},
		{ADAC_TASK_STARTED, "WaitingToRun", "Started"},
		{ADAC_TASK_STARTED | ADAC_TASK_DELEGATE_INVOKED, "Running", "Started|DelegateInvoked"},
		{ADAC_TASK_WAITING_ON_CHILDREN | ADAC_TASK_STARTED, "WaitingForChildrenToComplete", "Started|WaitingOnChildren"},
		{ADAC_TASK_RAN_TO_COMPLETION | ADAC_TASK_WAITING_FOR_ACTIVATION, "RanToCompletion", "RanToCompletion"},
		{ADAC_TASK_CANCELED | ADAC_TASK_RAN_TO_COMPLETION, "Canceled", "Canceled|RanToCompletion"},
		{ADAC_TASK_FAULTED | ADAC_TASK_CANCELED, "Faulted", "Faulted|Canceled"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char buf[128];
		CHECK_EQ_STR(adac_task_status(cases[i].flags), cases[i].status);
		CHECK_EQ_STR(adac_task_flags_text(cases[i].flags, buf, sizeof buf), cases[i].text);
	}
	char small[12];
	CHECK_EQ_STR(adac_task_flags_text(ADAC_TASK_STARTED | ADAC_TASK_DELEGATE_INVOKED, small, sizeof small), "Started");
}

static void test_chains(struct rts *r)
{
	struct adac_runtime *rt = r->rt;
	struct adac_error err = {0};
	struct adac_resolved_chain v;
	CHECK(adac_resolved_chain_build(rt, F0, 0, NULL, &v, &err) == 0);
	CHECK(v.chain.count == 4 && v.chain.end == ADAC_CHAIN_COMPLETE);
	CHECK(v.has_awaiting && v.awaiting.object == GATE && v.task == 0);
	if (v.chain.count == 4) {
		CHECK(v.frames[0].infrastructure && v.frames[1].sp && v.frames[2].state_verdict == ADAC_STATE_MISMATCH);
		CHECK(v.frames[3].line == 89);
	}
	adac_resolved_chain_free(&v);
	/* A chain from F1 waits on nothing the head says. */
	CHECK(adac_resolved_chain_build(rt, F1, 2, NULL, &v, &err) == 0);
	CHECK(v.chain.count == 2 && v.chain.end == ADAC_CHAIN_TRUNCATED && !v.has_awaiting);
	adac_resolved_chain_free(&v);

	/* Through the frame cache: once per (DiagnosticIP, State), the same frames. */
	struct adac_frame_cache *cache = adac_frame_cache_new();
	uint64_t resolved, hits;
	CHECK(adac_resolved_chain_build(rt, F0, 0, cache, &v, &err) == 0);
	adac_frame_cache_stats(cache, &resolved, &hits);
	CHECK(resolved == 4 && hits == 0);
	adac_resolved_chain_free(&v);
	/* F5 -> F1 -> F2 -> F3: F5 resolves as F0 did (no DiagnosticIP, no Resume, State 0). */
	CHECK(adac_resolved_chain_build(rt, F5, 0, cache, &v, &err) == 0);
	adac_frame_cache_stats(cache, &resolved, &hits);
	CHECK(resolved == 4 && hits == 4);
	CHECK(v.chain.count == 4 && v.has_awaiting && v.awaiting.object == SOURCE);
	if (v.chain.count == 4) {
		struct adac_async_frame fresh;
		resolve(rt, F2, &fresh);
		const struct adac_async_frame *c = &v.frames[2];
		CHECK(c->cont.addr == F2 && c->line == fresh.line && c->il_offset == fresh.il_offset && c->sp == fresh.sp);
		CHECK_EQ_STR(c->method, fresh.method);
		CHECK_EQ_STR(c->note, fresh.note);
	}
	adac_resolved_chain_free(&v);
	adac_frame_cache_free(cache);
}

/* Locals from what resolution found: with the code map gone, the frame's debug info still serves. */
static void test_locals_from_frame(struct rts *r)
{
	struct adac_runtime *rt = r->rt;
	struct adac_async_frame f1, f2, f3, f6;
	resolve(rt, F1, &f1);
	resolve(rt, F2, &f2);
	resolve(rt, F3, &f3);
	resolve(rt, F6, &f6);
	put64(PDATA(36) + off("RangeSectionMap", "TopLevelData"), 0);
	flush();
	struct adac_code_info ci;
	struct adac_error err = {0};
	int rc = adac_em_find_code(rt, WORK_CODE + 0x40, &ci, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "is not in any code range the runtime knows");
	adac_error_clear(&err);

	struct adac_locals l;
	CHECK(adac_frame_locals_collect(rt, &f1, &l, &err) == 0);
	if (l.n) {
		CHECK(l.layout == ADAC_CONT_FLAT && l.state == 0 && l.il_offset == 0x20 && l.native_offset == 0x40 &&
		      l.warning == NULL && l.has_flags && l.flags == 0x211);
		struct buf b = {0};
		struct adac_out out = {.write = buf_write, .ctx = &b};
		struct adac_value_opts o;
		adac_value_opts_default(&o);
		/* By default the source's variables, and how many others there are. */
		CHECK(adac_locals_print(rt, &l, NULL, "", &o, &out, &err) == 0);
		CHECK_EQ_STR(b.p, "(int) count = 42\n"
		                  "(string) label = \"work\"\n"
		                  "(string) text = \"work\"\n"
		                  "(3 more: compiler temporaries and continuation internals; --internals shows them)\n");
		free(b.p);
		b = (struct buf){0};
		/* A hidden one asked for by name is shown. */
		CHECK(adac_locals_print(rt, &l, "ExecutionContext", "", &o, &out, &err) == 0);
		CHECK_EQ_STR(b.p, "[ExecutionContext] = null\n");
		free(b.p);
		b = (struct buf){0};
		o.internals = true;
		CHECK(adac_locals_print(rt, &l, NULL, "", &o, &out, &err) == 0);
		CHECK_EQ_STR(b.p, "(int) count = 42\n"
		                  "(string) label = \"work\"\n"
		                  "(string) text = \"work\"\n"
		                  "[Flags] = 0x00000211 { ContinueOnThreadPool, ExecutionContext = 1, Exception = 2 }\n"
		                  "[ExecutionContext] = null\n"
		                  "[Exception] = 0x0000000005a03000 string \"work\"\n");
		free(b.p);
		CHECK(l.v[0].offset == 48 && l.v[0].address == F1 + 48 && l.v[0].kind == ADAC_LOCAL_ARG && l.v[0].index == 1);
		CHECK(l.v[2].kind == ADAC_LOCAL_LOCAL && l.v[2].index == 6 && l.v[2].var_number == 10);
		adac_locals_free(&l);
	}
	/* The mismatch is the warning, in the same words; point 1 saves no variables, only the slots. */
	CHECK(adac_frame_locals_collect(rt, &f2, &l, &err) == 0);
	CHECK_EQ_STR(l.warning, "State 1 is the suspension point at +0x44, but DiagnosticIP is at +0x40");
	CHECK(l.n == 2 && l.native_offset == 0x44 && l.v[0].kind == ADAC_LOCAL_SLOT);
	adac_locals_free(&l);
	/* Out of range: the whole frame, in the note's words. */
	rc = adac_frame_locals_collect(rt, &f3, &l, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "State 7 is out of range: the method's debug info has 2 suspension points");
	adac_error_clear(&err);
	/* No debug info: why resolution found none. */
	rc = adac_frame_locals_collect(rt, &f6, &l, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "no debug info for the code at 0x5901000");
	adac_error_clear(&err);
}

int main(int argc, char **argv)
{
	struct rts r;
	if (rts_open(argc, argv, "async_frame", NULL, NULL, false, &r))
		return 1;
	lay_out(&r);
	test_state_check(&r);
	test_task_status();
	test_frame_copy(&r);
	test_frames(&r);
	test_chains(&r);
	test_locals_from_frame(&r);
	rts_close(&r);
	return check_report("async_frame");
}
