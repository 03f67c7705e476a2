/* test_classic_async.c - what a task's m_continuationObject resolves to (dac/async/classic_async.c,
 * as SOS dumpasync resolves it) on the hand-laid runtime of testasync.h: a continuation or a task of
 * the scan as they are, an object's m_task, an Action's _target through a ContinuationWrapper, each
 * item of a List<object>, a list longer than ADAC_MAX_LIST_ITEMS (followed to the cap, and said), and
 * anything else as itself. The scan is made by hand; the objects are CoreLib 11.0.0's types. Needs
 * the runtime pack of scripts/dotnet-setup. */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#define AREA_SIZE 0x1000000ull
#include "async/async_scan.h"
#include "async/classic_async.h"
#include "base/limits.h"
#include "testasync.h"

enum { M_LIST = M_ASYNC_FREE, M_ACTION, M_WRAPPER, M_AWAITER };

/* Continuations and tasks the scan found (the tasks in address order, as the scan sorts them). */
#define K0 0x5A00000ull
#define K1 0x5A00100ull
#define T_CONT 0x5A01000ull   /* -> K0 */
#define T_TASK 0x5A01100ull   /* -> T_LIST (a task of the scan) */
#define T_LIST 0x5A01200ull   /* -> LIST: K1, null, T_CONT, an Action -> wrapper -> Action -> T_TASK */
#define T_FIELD 0x5A01300ull  /* -> AWAITER (its m_task: T_LIST) */
#define T_OTHER 0x5A01400ull  /* -> STR */
#define T_LONG 0x5A01500ull   /* -> LONG_LIST (ADAC_MAX_LIST_ITEMS + 1 items) */
#define T_NONE 0x5A01600ull   /* no continuation */
#define LIST 0x5A02000ull
#define ITEMS 0x5A02100ull
#define ACTION 0x5A03000ull
#define WRAPPER 0x5A03100ull
#define ACTION2 0x5A03200ull
#define AWAITER 0x5A03300ull
#define STR 0x5A04000ull
#define LONG_LIST 0x5A05000ull
#define LONG_ITEMS 0x5B00000ull

static void lay_out(const struct rts *r)
{
	put_async_classes(r);
	const struct adac_ecma *cmd = r->cmd;
	/* List<object>: an instantiation of List`1 over Object (its dictionary after the MethodTable). */
	uint32_t c_list = typedef_rid(cmd, "System.Collections.Generic", "List`1");
	const struct fd list_f[] = {cl_field(r, c_list, "_items", 0, 0x1d), cl_field(r, c_list, "_size", 8, 0x08)};
	uint64_t inst = MT(M_LIST) + 0x900;
	put16(inst + off("GenericsDictInfo", "NumDicts"), 1);
	put16(inst + off("GenericsDictInfo", "NumTypeArgs"), 1);
	put64(inst + 8, inst + 16);
	put64(inst + 16, MT(M_OBJECT));
	put_mt(&(struct mt_spec){MT(M_LIST), 0x10, c_list, 32, MT(M_OBJECT), CL_MOD, inst + 8, 0x12, 0, 0, list_f, 2});
	/* System.Action with Delegate's _target; AsyncMethodBuilderCore+ContinuationWrapper; TaskAwaiter's
	 * m_task on a class of its own. */
	uint32_t c_action = typedef_rid(cmd, "System", "Action"), c_delegate = typedef_rid(cmd, "System", "Delegate");
	const struct fd action_f[] = {cl_field(r, c_delegate, "_target", 0, 0x1c)};
	put_cl_class(MT(M_ACTION), c_action, 24, MT(M_OBJECT), 0, action_f, 1);
	uint32_t c_wrapper = cl_nested(r, "System.Runtime.CompilerServices", "AsyncMethodBuilderCore", "ContinuationWrapper");
	const struct fd wrapper_f[] = {cl_field(r, c_wrapper, "_continuation", 0, 0x12)};
	put_cl_class(MT(M_WRAPPER), c_wrapper, 24, MT(M_OBJECT), 0, wrapper_f, 1);
	uint32_t c_awaiter = typedef_rid(cmd, "System.Runtime.CompilerServices", "TaskAwaiter");
	const struct fd awaiter_f[] = {cl_field(r, c_awaiter, "m_task", 0, 0x12)};
	put_cl_class(MT(M_AWAITER), c_awaiter, 24, MT(M_OBJECT), 0, awaiter_f, 1);

	put_task(T_CONT, MT(M_TASK), 0, K0, ADAC_TASK_WAITING_FOR_ACTIVATION);
	put_task(T_TASK, MT(M_TASK), 0, T_LIST, ADAC_TASK_WAITING_FOR_ACTIVATION);
	put_task(T_LIST, MT(M_TASK), 0, LIST, ADAC_TASK_WAITING_FOR_ACTIVATION);
	put_task(T_FIELD, MT(M_TASK), 0, AWAITER, ADAC_TASK_WAITING_FOR_ACTIVATION);
	put_task(T_OTHER, MT(M_TASK), 0, STR, ADAC_TASK_WAITING_FOR_ACTIVATION);
	put_task(T_LONG, MT(M_TASK), 0, LONG_LIST, ADAC_TASK_WAITING_FOR_ACTIVATION);
	put_task(T_NONE, MT(M_TASK), 0, 0, ADAC_TASK_WAITING_FOR_ACTIVATION);
	put64(LIST, MT(M_LIST));
	put64(LIST + 8, ITEMS);
	put32(LIST + 16, 4);
	put64(ITEMS, MT(M_OBJECT_ARR));
	put32(ITEMS + 8, 8);
	const uint64_t items[4] = {K1, 0, T_CONT, ACTION};
	mem_write(ITEMS + 16, items, sizeof items);
	put64(ACTION, MT(M_ACTION));
	put64(ACTION + 8, WRAPPER);
	put64(WRAPPER, MT(M_WRAPPER));
	put64(WRAPPER + 8, ACTION2);
	put64(ACTION2, MT(M_ACTION));
	put64(ACTION2 + 8, T_TASK);
	put64(AWAITER, MT(M_AWAITER));
	put64(AWAITER + 8, T_LIST);
	put_string(STR, MT(M_STRING), "not a continuation");
	/* A list of ADAC_MAX_LIST_ITEMS + 1 items: the strings STR + 16 i, so each resolves to itself. */
	put64(LONG_LIST, MT(M_LIST));
	put64(LONG_LIST + 8, LONG_ITEMS);
	put32(LONG_LIST + 16, ADAC_MAX_LIST_ITEMS + 1);
	put64(LONG_ITEMS, MT(M_OBJECT_ARR));
	put32(LONG_ITEMS + 8, ADAC_MAX_LIST_ITEMS + 1);
	for (uint64_t i = 0; i <= ADAC_MAX_LIST_ITEMS; i++)
		put64(LONG_ITEMS + 16 + 8 * i, STR);
	flush();
}

int main(int argc, char **argv)
{
	struct rts r;
	if (rts_open(argc, argv, "classic_async", NULL, NULL, false, &r))
		return 1;
	lay_out(&r);
	struct adac_error err = {0};

	struct adac_async_scan s;
	memset(&s, 0, sizeof s);
	s.cont_count = 2;
	s.conts = calloc(2, sizeof *s.conts);
	s.conts[0] = (struct adac_scan_cont){.addr = K0};
	s.conts[1] = (struct adac_scan_cont){.addr = K1};
	static const uint64_t tasks[] = {T_CONT, T_TASK, T_LIST, T_FIELD, T_OTHER, T_LONG, T_NONE};
	s.task_count = sizeof tasks / sizeof tasks[0];
	s.tasks = calloc(s.task_count, sizeof *s.tasks);
	s.task_links = calloc(s.task_count, sizeof *s.task_links);
	s.state_objects = calloc(s.task_count, sizeof *s.state_objects); /* (no task owns a chain) */
	s.task_types = calloc(1, sizeof *s.task_types);
	s.task_types[0] = (struct adac_scan_task_type){MT(M_TASK), false};
	s.task_type_count = 1;
	for (size_t i = 0; i < s.task_count; i++) {
		uint64_t cont = get64(tasks[i] + TASK_CONTINUATION_OBJECT);
		s.tasks[i] = (struct adac_scan_task){.addr = tasks[i], .type = 0,
		                                     .state_flags = ADAC_TASK_WAITING_FOR_ACTIVATION};
		s.task_links[i] = (struct adac_scan_task_link){.continuation_object = cont};
	}
	CHECK(adac_async_scan_chains(&s, &err) == 0);
	CHECK(adac_classic_resolve_awaiters(r.rt, &s, &err) == 0);
	if (adac_failed(&err))
		fprintf(stderr, "awaiters: %s\n", err.msg);

	/* What each task's continuation object resolves to. */
	static const struct {
		uint64_t task;
		uint32_t count;
		uint64_t first[3];
	} want[] = {
		{T_CONT, 1, {K0}},                  /* a continuation of the scan */
		{T_TASK, 1, {T_LIST}},              /* a task of the scan */
		{T_LIST, 3, {K1, T_CONT, T_TASK}},  /* the list's items; null skipped; Action -> wrapper -> Action */
		{T_FIELD, 1, {T_LIST}},             /* an object's m_task */
		{T_OTHER, 1, {STR}},                /* anything else: itself */
		{T_NONE, 0, {0}},
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		uint32_t t = adac_scan_find_task(&s, want[i].task);
		CHECK(t != ADAC_SCAN_NONE);
		if (t == ADAC_SCAN_NONE)
			continue;
		const struct adac_scan_task_link *st = &s.task_links[t];
		if (st->awaiters_count != want[i].count)
			fprintf(stderr, "task 0x%llx: %u awaiters, want %u\n", (unsigned long long)want[i].task,
			        st->awaiters_count, want[i].count);
		CHECK(st->awaiters_count == want[i].count);
		for (uint32_t k = 0; k < want[i].count && k < st->awaiters_count && k < 3; k++)
			CHECK_EQ_U64(s.awaiters[st->awaiters_first + k], want[i].first[k]);
	}
	/* The list past ADAC_MAX_LIST_ITEMS: followed to the cap, and the scan says so. */
	uint32_t t = adac_scan_find_task(&s, T_LONG);
	CHECK(t != ADAC_SCAN_NONE && s.task_links[t].awaiters_count == ADAC_MAX_LIST_ITEMS);
	CHECK_ERR(-1, &s.awaiters_cut, ADAC_E_LIMIT,
	          "task 0x5a01500: its List<object> of 65537 continuations is longer than ADAC_MAX_LIST_ITEMS (65536): the "
	          "rest are not followed");
	CHECK_EQ_U64(s.awaiter_count, 1 + 1 + 3 + 1 + 1 + ADAC_MAX_LIST_ITEMS);

	/* Resolving again starts afresh. */
	put32(LONG_LIST + 16, 2);
	flush();
	CHECK(adac_classic_resolve_awaiters(r.rt, &s, &err) == 0);
	CHECK(!adac_failed(&s.awaiters_cut) && s.awaiter_count == 1 + 1 + 3 + 1 + 1 + 2);

	adac_async_scan_free(&s);
	rts_close(&r);
	return check_report("classic_async");
}
