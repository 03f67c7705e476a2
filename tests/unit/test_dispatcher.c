/* test_dispatcher.c - a thread's dispatcher records (dac/async/dispatcher.c) on the hand-laid runtime
 * of testasync.h: CoreLib 11.0.0's AsyncDispatcherInfo with its [ThreadStatic] t_current reached
 * through the thread's ThreadLocalData (a TLS index of the direct kind), records linked through Next,
 * a loop, and the caps. Needs the runtime pack of scripts/dotnet-setup. */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#define AREA_SIZE 0x1000000ull
#include "async/dispatcher.h"
#include "base/limits.h"
#include "runtime/threads.h"
#include "testasync.h"

#define TLD 0x5A00000ull    /* the thread's ThreadLocalData */
#define TLS_INDEX 0x100u    /* t_current's statics block: TLD + 0x100 (a direct TLS index) */
#define T_CURRENT 0x10u     /* t_current's offset in that block */
#define REC 0x5A10000ull    /* dispatcher records, 0x20 bytes apart */

static struct adac_managed_thread thread(uint64_t tld)
{
	return (struct adac_managed_thread){.thread = 0x5A20000, .managed_id = 3, .os_id = 4242, .thread_local_data = tld};
}

static void put_record(uint64_t at, uint64_t next, uint64_t next_continuation, uint64_t current_task)
{
	put64(at, next);
	put64(at + 8, next_continuation);
	put64(at + 16, current_task);
}

int main(int argc, char **argv)
{
	struct rts r;
	if (rts_open(argc, argv, "dispatcher", NULL, NULL, false, &r))
		return 1;
	struct adac_runtime *rt = r.rt;
	struct adac_error err = {0};
	struct adac_dispatcher d[ADAC_MAX_DISPATCHERS];
	size_t n = 99;
	struct adac_managed_thread th = thread(TLD);

	/* No dispatch loop has run: CoreLib has not loaded AsyncDispatcherInfo. */
	flush();
	CHECK(adac_thread_dispatchers(rt, &th, d, ADAC_MAX_DISPATCHERS, &n, &err) == 0 && n == 0);

	/* AsyncDispatcherInfo (explicit layout: Next 0, NextContinuation 8, CurrentTask 16) and its
	 * thread-static t_current, in the non-GC statics block of index TLS_INDEX. */
	uint32_t c_disp = typedef_rid(r.cmd, "System.Runtime.CompilerServices", "AsyncDispatcherInfo");
	struct fd fields[4] = {
		cl_field(&r, c_disp, "Next", 0, 0x0f),
		cl_field(&r, c_disp, "NextContinuation", 8, 0x12),
		cl_field(&r, c_disp, "CurrentTask", 16, 0x12),
		cl_field(&r, c_disp, "t_current", T_CURRENT, 0x0f),
	};
	fields[3].is_static = true;
	put_thread_static_struct(MT(M_DISPATCHER), c_disp, 16, fields, 4, TLS_INDEX);
	/* Two nested loops, innermost first: a running chain (its caller's continuation and task) and an
	 * outer loop between two continuations. */
	put64(TLD + TLS_INDEX + T_CURRENT, REC);
	put_record(REC, REC + 0x20, 0x5A30000, 0x5A31000);
	put_record(REC + 0x20, 0, 0, 0);
	flush();
	CHECK(adac_thread_dispatchers(rt, &th, d, ADAC_MAX_DISPATCHERS, &n, &err) == 0);
	if (adac_failed(&err))
		fprintf(stderr, "dispatchers: %s\n", err.msg);
	CHECK(n == 2);
	if (n == 2) {
		CHECK(d[0].addr == REC && d[0].next == REC + 0x20 && d[0].next_continuation == 0x5A30000 &&
		      d[0].current_task == 0x5A31000);
		CHECK(d[1].addr == REC + 0x20 && d[1].next == 0 && d[1].next_continuation == 0 && d[1].current_task == 0);
	}

	/* A thread that never ran runtime-async code (no thread-local data): none. */
	struct adac_managed_thread idle = thread(0);
	CHECK(adac_thread_dispatchers(rt, &idle, d, ADAC_MAX_DISPATCHERS, &n, &err) == 0 && n == 0);
	/* t_current null: none. */
	put64(TLD + TLS_INDEX + T_CURRENT, 0);
	flush();
	CHECK(adac_thread_dispatchers(rt, &th, d, ADAC_MAX_DISPATCHERS, &n, &err) == 0 && n == 0);

	/* Records that loop. */
	put64(TLD + TLS_INDEX + T_CURRENT, REC + 0x40);
	put_record(REC + 0x40, REC + 0x60, 0, 0);
	put_record(REC + 0x60, REC + 0x40, 0, 0);
	flush();
	int rc = adac_thread_dispatchers(rt, &th, d, ADAC_MAX_DISPATCHERS, &n, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "thread 4242: dispatcher records loop back to 0x5a10040");
	adac_error_clear(&err);
	/* An unreadable record. */
	put_record(REC + 0x60, 0x7000000000ull, 0, 0);
	flush();
	rc = adac_thread_dispatchers(rt, &th, d, ADAC_MAX_DISPATCHERS, &n, &err);
	CHECK_ERR(rc, &err, ADAC_E_READ, "thread 4242: dispatcher record: ");
	adac_error_clear(&err);

	/* The caps: the caller's, and ADAC_MAX_DISPATCHERS (65 nested loops). */
	put64(TLD + TLS_INDEX + T_CURRENT, REC + 0x100);
	for (uint64_t i = 0; i <= ADAC_MAX_DISPATCHERS; i++)
		put_record(REC + 0x100 + 0x20 * i, i < ADAC_MAX_DISPATCHERS ? REC + 0x100 + 0x20 * (i + 1) : 0, 0, 0);
	flush();
	rc = adac_thread_dispatchers(rt, &th, d, 2, &n, &err);
	CHECK_ERR(rc, &err, ADAC_E_LIMIT, "thread 4242 has more than 2 nested dispatch loops");
	adac_error_clear(&err);
	rc = adac_thread_dispatchers(rt, &th, d, ADAC_MAX_DISPATCHERS, &n, &err);
	CHECK_ERR(rc, &err, ADAC_E_LIMIT, "thread 4242 has more than 64 nested dispatch loops (ADAC_MAX_DISPATCHERS)");
	adac_error_clear(&err);
	put_record(REC + 0x100 + 0x20 * (ADAC_MAX_DISPATCHERS - 1), 0, 0, 0);
	flush();
	CHECK(adac_thread_dispatchers(rt, &th, d, ADAC_MAX_DISPATCHERS, &n, &err) == 0 && n == ADAC_MAX_DISPATCHERS);

	rts_close(&r);
	return check_report("dispatcher");
}
