/* test_continuation.c - the Continuation class, its layout, ContinuationFlags, reading continuations
 * and walking their chains (dac/async/continuation.c), on the hand-laid runtime of testrts.h:
 *
 *   test_continuation <ArrayLayout dir>           the flat layout of the real 11.0.0 descriptor and
 *                                                 CoreLib: layout, verdicts, reads, flags, a complete
 *                                                 chain, a cycle, broken links, the depth caps, heads
 *                                                 of tasks;
 *   test_continuation <ArrayLayout dir> array     the array layout: the descriptor without
 *                                                 ContinuationObject and the SDK's .NET 10 CoreLib,
 *                                                 whose Continuation class has Resume, Data, GCData.
 * Needs the runtime packs of scripts/dotnet-setup. */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#define AREA_SIZE 0x1000000ull
#include "async/continuation.h"
#include "base/limits.h"
#include "testasync.h"

#define C0 0x5A00000ull   /* RuntimeAsyncTaskContinuation, head of the chain C0 -> C1 -> C2 -> C3 */
#define C1 0x5A00100ull
#define C2 0x5A00200ull
#define C3 0x5A00300ull
#define RI 0x5A01000ull   /* ResumeInfos, 16 bytes apart */
#define TASK 0x5A02000ull /* a task owning the chain (m_stateObject = C0) */
#define GATE 0x5A02100ull /* the task C0 awaits */
#define STR 0x5A03000ull  /* a string */
#define CY0 0x5A04000ull  /* CY0 -> CY1 -> CY0 */
#define CY1 0x5A04100ull
#define BR0 0x5A05000ull  /* BR0 -> STR (not a continuation) */
#define BR1 0x5A05100ull  /* BR1 -> UNMAPPED */
#define BR2 0x5A05200ull  /* BR2 -> STR + 4 (misaligned) */
#define UNMAPPED 0x70000000ull
#define LONG 0x5B00000ull /* ADAC_MAX_CHAIN_DEPTH + 1 continuations, 32 bytes apart */
#define LC 0x5F00000ull   /* 20 continuations, the last one's Next the 4th: a cycle found through the
                           * table of links a long chain starts (the first 16 are looked through) */
#define LD 0x5F01000ull   /* 40 continuations, the last one's Next the 31st */

static void test_flat(struct rts *r)
{
	struct adac_runtime *rt = r->rt;
	struct adac_error err = {0};
	put_async_classes(r);
	put_cont(C0, MT(M_RATC), C1, RI, 0, 0x11, 0);
	put64(C0 + 32, GATE); /* RuntimeAsyncTaskContinuation.Task */
	put_cont(C1, MT(M_CONT_LAYOUT), C2, RI + 16, WORK_CODE + 0x40, 0x1891, 0);
	put_cont(C2, MT(M_CONT_LAYOUT), C3, RI + 32, WORK_CODE + 0x44, 0x1010, 1);
	put_cont(C3, MT(M_CONT_LAYOUT), 0, RI + 48, WORK_CODE + 0x48, 0, 2);
	put_task(TASK, MT(M_TASK), C0, 0, 0x2000000);
	put_task(GATE, MT(M_TASK), 0, C0, 0x2000400);
	put_string(STR, MT(M_STRING), "not a continuation");
	put_cont(CY0, MT(M_CONT_LAYOUT), CY1, 0, 0, 0, 0);
	put_cont(CY1, MT(M_CONT_LAYOUT), CY0, 0, 0, 0, 0);
	put_cont(BR0, MT(M_CONT_LAYOUT), STR, 0, 0, 0, 0);
	put_cont(BR1, MT(M_CONT_LAYOUT), UNMAPPED, 0, 0, 0, 0);
	put_cont(BR2, MT(M_CONT_LAYOUT), STR + 4, 0, 0, 0, 0);
	/* A chain one longer than the cap: small continuations (of the Continuation class itself). */
	for (uint64_t i = 0; i <= ADAC_MAX_CHAIN_DEPTH; i++) {
		put64(LONG + 32 * i, MT(M_CONT));
		put64(LONG + 32 * i + 8, i < ADAC_MAX_CHAIN_DEPTH ? LONG + 32 * (i + 1) : 0);
	}
	for (uint64_t i = 0; i < 20; i++) {
		put64(LC + 32 * i, MT(M_CONT));
		put64(LC + 32 * i + 8, i < 19 ? LC + 32 * (i + 1) : LC + 32 * 3);
	}
	for (uint64_t i = 0; i < 40; i++) {
		put64(LD + 32 * i, MT(M_CONT));
		put64(LD + 32 * i + 8, i < 39 ? LD + 32 * (i + 1) : LD + 32 * 30);
	}
	flush();

	/* The layout: the descriptor's ContinuationObject and AsyncResumeInfo, Flags from the class's
	 * FieldDesc, the class from ContinuationMethodTable. */
	const struct adac_cont_layout *l;
	CHECK(adac_cont_layout(rt, &l, &err) == 0);
	CHECK(l->kind == ADAC_CONT_FLAT);
	CHECK_EQ_U64(l->class_mt, MT(M_CONT));
	CHECK_EQ_U64(l->next, 8);
	CHECK_EQ_U64(l->resume_info, 16);
	CHECK(l->has_flags);
	CHECK_EQ_U64(l->flags, 24);
	CHECK_EQ_U64(l->state, 28);
	CHECK_EQ_U64(l->ri_resume, 0);
	CHECK_EQ_U64(l->ri_diagnostic_ip, 8);
	CHECK_EQ_U64(l->data_start, 32);
	CHECK_EQ_U64(l->header_size, 32);

	/* Which MethodTables are continuations: the class, a layout subtype, a hand-rolled one. */
	bool yes = true;
	CHECK(adac_cont_is_continuation_mt(rt, MT(M_CONT), &yes, &err) == 0 && yes);
	CHECK(adac_cont_is_continuation_mt(rt, MT(M_CONT_LAYOUT), &yes, &err) == 0 && yes);
	CHECK(adac_cont_is_continuation_mt(rt, MT(M_RATC), &yes, &err) == 0 && yes);
	CHECK(adac_cont_is_continuation_mt(rt, MT(M_STRING), &yes, &err) == 0 && !yes);
	CHECK(adac_cont_is_continuation_mt(rt, MT(M_TASK), &yes, &err) == 0 && !yes);
	CHECK(adac_cont_is_continuation_mt(rt, 0, &yes, &err) == 0 && !yes);

	/* One continuation, every field. */
	struct adac_continuation c;
	CHECK(adac_cont_read(rt, C1, &c, &err) == 0);
	CHECK_EQ_U64(c.addr, C1);
	CHECK(c.layout == ADAC_CONT_FLAT);
	CHECK_EQ_U64(c.mt, MT(M_CONT_LAYOUT));
	CHECK_EQ_U64(c.next, C2);
	CHECK_EQ_U64(c.resume_info, RI + 16);
	CHECK_EQ_U64(c.resume, 0);
	CHECK_EQ_U64(c.diagnostic_ip, WORK_CODE + 0x40);
	CHECK(c.has_flags && c.flags == 0x1891 && c.state == 0);
	CHECK(c.data == 0 && c.gc_data == 0);
	CHECK(adac_cont_read(rt, C0, &c, &err) == 0 && c.mt == MT(M_RATC) && c.diagnostic_ip == 0 && c.resume_info == RI);
	int rc = adac_cont_read(rt, STR, &c, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "object 0x5a03000 (MethodTable 0x5101000) is not a Continuation");
	adac_error_clear(&err);
	rc = adac_cont_read(rt, C1 + 4, &c, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "0x5a00104 is not an object address");
	adac_error_clear(&err);
	rc = adac_cont_read(rt, UNMAPPED, &c, &err);
	CHECK_ERR(rc, &err, ADAC_E_READ, "0x70000000");
	adac_error_clear(&err);

	/* ContinuationFlags from CoreLib 11.0.0's constants. */
	const struct adac_cont_flags *fl;
	CHECK(adac_cont_flags(rt, &fl, &err) == 0);
	CHECK(fl->first_bit[ADAC_CONT_SLOT_EXECUTION_CONTEXT] == 4 && fl->num_bits[ADAC_CONT_SLOT_EXECUTION_CONTEXT] == 2);
	CHECK(fl->first_bit[ADAC_CONT_SLOT_CONTINUATION_CONTEXT] == 6 &&
	      fl->num_bits[ADAC_CONT_SLOT_CONTINUATION_CONTEXT] == 2);
	CHECK(fl->first_bit[ADAC_CONT_SLOT_EXCEPTION] == 8 && fl->num_bits[ADAC_CONT_SLOT_EXCEPTION] == 3);
	CHECK(fl->first_bit[ADAC_CONT_SLOT_RESULT] == 11 && fl->num_bits[ADAC_CONT_SLOT_RESULT] == 21);
	CHECK(fl->nnames == 4 && !fl->names_cut);
	CHECK_EQ_STR(fl->name[0], "ContinueOnThreadPool");
	CHECK_EQ_STR(fl->name[3], "ValueTaskAdaptedToTask");
	CHECK(fl->value[0] == 1 && fl->value[1] == 2 && fl->value[2] == 4 && fl->value[3] == 8);
	CHECK_EQ_U64(adac_cont_flags_index(fl, 0x1891, ADAC_CONT_SLOT_EXECUTION_CONTEXT), 1);
	CHECK_EQ_U64(adac_cont_flags_index(fl, 0x1891, ADAC_CONT_SLOT_CONTINUATION_CONTEXT), 2);
	CHECK_EQ_U64(adac_cont_flags_index(fl, 0x1891, ADAC_CONT_SLOT_EXCEPTION), 0);
	CHECK_EQ_U64(adac_cont_flags_index(fl, 0x1891, ADAC_CONT_SLOT_RESULT), 3);
	CHECK_EQ_STR(adac_cont_slot_name(ADAC_CONT_SLOT_CONTINUATION_CONTEXT), "ContinuationContext");

	/* A complete chain, callee first. */
	struct adac_chain ch;
	CHECK(adac_chain_walk(rt, C0, 0, &ch, &err) == 0);
	CHECK(ch.end == ADAC_CHAIN_COMPLETE && ch.count == 4 && !adac_failed(&ch.end_err));
	if (ch.count == 4) {
		CHECK(ch.links[0].addr == C0 && ch.links[1].addr == C1 && ch.links[2].addr == C2 && ch.links[3].addr == C3);
		CHECK(ch.links[2].state == 1 && ch.links[2].diagnostic_ip == WORK_CODE + 0x44 && ch.links[3].next == 0);
	}
	adac_chain_free(&ch);
	/* The depth the caller asked for. */
	CHECK(adac_chain_walk(rt, C0, 2, &ch, &err) == 0);
	CHECK(ch.end == ADAC_CHAIN_TRUNCATED && ch.count == 2 && ch.end_addr == C2);
	adac_chain_free(&ch);
	/* A cycle: the links before it are kept. */
	CHECK(adac_chain_walk(rt, CY0, 0, &ch, &err) == 0);
	CHECK(ch.end == ADAC_CHAIN_CYCLE && ch.count == 2 && ch.end_addr == CY0);
	CHECK_ERR(-1, &ch.end_err, ADAC_E_CORRUPT, "Next leads back to Continuation 0x5a04000: the chain is a cycle");
	adac_chain_free(&ch);
	/* Cycles in long chains: back to a link of the first 16, and to one after them. */
	CHECK(adac_chain_walk(rt, LC, 0, &ch, &err) == 0);
	CHECK(ch.end == ADAC_CHAIN_CYCLE && ch.count == 20 && ch.end_addr == LC + 32 * 3);
	adac_chain_free(&ch);
	CHECK(adac_chain_walk(rt, LD, 0, &ch, &err) == 0);
	CHECK(ch.end == ADAC_CHAIN_CYCLE && ch.count == 40 && ch.end_addr == LD + 32 * 30);
	adac_chain_free(&ch);
	/* Broken links: not a continuation, unreadable, misaligned. */
	CHECK(adac_chain_walk(rt, BR0, 0, &ch, &err) == 0);
	CHECK(ch.end == ADAC_CHAIN_BROKEN && ch.count == 1 && ch.end_addr == STR);
	CHECK_EQ_STR(ch.end_err.msg,
	             "Next of Continuation 0x5a05000: object 0x5a03000 (MethodTable 0x5101000) is not a Continuation");
	adac_chain_free(&ch);
	CHECK(adac_chain_walk(rt, BR1, 0, &ch, &err) == 0);
	CHECK(ch.end == ADAC_CHAIN_BROKEN && ch.count == 1 && ch.end_addr == UNMAPPED && ch.end_err.code == ADAC_E_READ);
	CHECK(strncmp(ch.end_err.msg, "Next of Continuation 0x5a05100: ", 32) == 0);
	adac_chain_free(&ch);
	CHECK(adac_chain_walk(rt, BR2, 0, &ch, &err) == 0);
	CHECK(ch.end == ADAC_CHAIN_BROKEN && ch.count == 1);
	CHECK_EQ_STR(ch.end_err.msg, "Next of Continuation 0x5a05200: 0x5a03004 is not an object address");
	adac_chain_free(&ch);
	/* A head that is not a continuation: nothing, and why. */
	CHECK(adac_chain_walk(rt, STR, 0, &ch, &err) == 0);
	CHECK(ch.end == ADAC_CHAIN_BROKEN && ch.count == 0 && ch.end_err.code == ADAC_E_CORRUPT);
	adac_chain_free(&ch);
	/* ADAC_MAX_CHAIN_DEPTH: the default, and the most a caller may ask for. */
	CHECK(adac_chain_walk(rt, LONG, 0, &ch, &err) == 0);
	CHECK(ch.end == ADAC_CHAIN_TRUNCATED && ch.count == ADAC_MAX_CHAIN_DEPTH);
	CHECK_EQ_U64(ch.end_addr, LONG + 32ull * ADAC_MAX_CHAIN_DEPTH);
	adac_chain_free(&ch);
	CHECK(adac_chain_walk(rt, LONG, ADAC_MAX_CHAIN_DEPTH + 5, &ch, &err) == 0);
	CHECK(ch.end == ADAC_CHAIN_TRUNCATED && ch.count == ADAC_MAX_CHAIN_DEPTH);
	adac_chain_free(&ch);
	CHECK(adac_chain_walk(rt, LONG + 32, 0, &ch, &err) == 0);
	CHECK(ch.end == ADAC_CHAIN_COMPLETE && ch.count == ADAC_MAX_CHAIN_DEPTH);
	adac_chain_free(&ch);

	/* The head of an address: a continuation itself, or the chain its task owns. */
	uint64_t head, task;
	CHECK(adac_chain_head_of(rt, C1, &head, &task, &err) == 0 && head == C1 && task == 0);
	CHECK(adac_chain_head_of(rt, TASK, &head, &task, &err) == 0 && head == C0 && task == TASK);
	rc = adac_chain_head_of(rt, GATE, &head, &task, &err);
	CHECK_ERR(rc, &err, ADAC_E_BAD_ARG,
	          "0x5a02100 (System.Threading.Tasks.Task) is neither a Continuation nor a task whose state object is a "
	          "Continuation");
	adac_error_clear(&err);
	rc = adac_chain_head_of(rt, STR, &head, &task, &err);
	CHECK_ERR(rc, &err, ADAC_E_BAD_ARG, "0x5a03000 (System.String) is neither");
	adac_error_clear(&err);
}

/* .NET 10's array layout: Next, Resume, State, Flags, Data and GCData from the class's FieldDescs. */
static void test_array(struct rts *r)
{
	struct adac_runtime *rt = r->rt;
	struct adac_error err = {0};
	static struct fd cont_f[6];
	static const char *const names[] = {"Next", "Resume", "State", "Flags", "Data", "GCData"};
	static const uint32_t offs[] = {0, 8, 16, 20, 24, 32};
	static const uint8_t elems[] = {0x12, 0x18, 0x09, 0x11, 0x1d, 0x1d};
	for (int i = 0; i < 6; i++)
		cont_f[i] = cl_field(r, r->c_cont, names[i], offs[i], elems[i]);
	put_mt(&(struct mt_spec){MT(M_CONT), 0, r->c_cont, 56, MT(M_OBJECT), CL_MOD, 0, 0x12, 0, 0, cont_f, 6});
	cl_map_typedef(r->c_cont, MT(M_CONT));
	/* A0 -> A1: Resume stubs, states 3 and 0, flags, Data and GCData arrays. */
	const uint64_t A0 = 0x5A00000, A1 = 0x5A00100;
	const uint64_t obj[2] = {A0, A1}, next[2] = {A1, 0}, resume[2] = {0x7f0000123450, 0x7f0000123460};
	const uint32_t state[2] = {3, 0}, flags[2] = {0x10, 0x2};
	for (int i = 0; i < 2; i++) {
		put64(obj[i], MT(M_CONT));
		put64(obj[i] + 8, next[i]);
		put64(obj[i] + 16, resume[i]);
		put32(obj[i] + 24, state[i]);
		put32(obj[i] + 28, flags[i]);
		put64(obj[i] + 32, 0x5A01000 + 0x100 * (uint64_t)i);
		put64(obj[i] + 40, 0x5A02000 + 0x100 * (uint64_t)i);
	}
	flush();

	const struct adac_cont_layout *l;
	CHECK(adac_cont_layout(rt, &l, &err) == 0);
	if (adac_failed(&err))
		fprintf(stderr, "array layout: %s\n", err.msg);
	CHECK(l && l->kind == ADAC_CONT_ARRAY);
	if (!l)
		return;
	CHECK_EQ_U64(l->class_mt, MT(M_CONT));
	CHECK(l->next == 8 && l->resume == 16 && l->state == 24 && l->has_flags && l->flags == 28 && l->data == 32 &&
	      l->gc_data == 40 && l->header_size == 48);
	struct adac_chain ch;
	CHECK(adac_chain_walk(rt, A0, 0, &ch, &err) == 0);
	CHECK(ch.end == ADAC_CHAIN_COMPLETE && ch.count == 2);
	if (ch.count == 2) {
		const struct adac_continuation *c = &ch.links[0];
		CHECK(c->layout == ADAC_CONT_ARRAY && c->addr == A0 && c->next == A1 && c->resume == resume[0] && c->state == 3);
		CHECK(c->has_flags && c->flags == 0x10 && c->data == 0x5A01000 && c->gc_data == 0x5A02000);
		CHECK(c->resume_info == 0 && c->diagnostic_ip == 0);
		c = &ch.links[1];
		CHECK(c->resume == resume[1] && c->state == 0 && c->flags == 0x2 && c->data == 0x5A01100);
	}
	adac_chain_free(&ch);
}

int main(int argc, char **argv)
{
	bool array = argc > 2 && strcmp(argv[2], "array") == 0;
	struct rts r;
	/* The array layout: a descriptor that describes no ContinuationObject. */
	if (rts_open(argc, argv, "continuation", array ? "\"ContinuationObject\"" : NULL, "\"ContinuationXbject\"", array,
	             &r))
		return 1;
	if (array)
		test_array(&r);
	else
		test_flat(&r);
	rts_close(&r);
	return check_report(array ? "continuation (array layout)" : "continuation");
}
