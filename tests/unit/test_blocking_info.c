/* test_blocking_info.c - a thread's blocking records (dac/async/blocking_info.c) on the hand-laid
 * runtime of testasync.h: CoreLib 11.0.0's ThreadBlockingInfo with its [ThreadStatic] t_first (a
 * direct TLS index, as test_dispatcher.c's t_current), records linked through _next whose _objectPtr
 * slots hold a Lock (being entered) or a Condition (waited on; its Lock is its _lock), and what is
 * not one: a null slot, an unreadable slot, an object of another type. A loop, an unreadable record,
 * and the caps. Needs the runtime pack of scripts/dotnet-setup. */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#define AREA_SIZE 0x1000000ull
#include "async/blocking_info.h"
#include "base/limits.h"
#include "runtime/threads.h"
#include "testasync.h"

#define TLD 0x5A00000ull    /* the thread's ThreadLocalData */
#define TLS_INDEX 0x100u    /* t_first's statics block: TLD + 0x100 (a direct TLS index) */
#define T_FIRST 0x10u       /* t_first's offset in that block */
#define REC 0x5A10000ull    /* blocking records, 0x20 bytes apart */
#define SLOTS 0x5A30000ull  /* the stack slots the records point at */
#define LOCK_OBJ 0x5A40000ull
#define COND_OBJ 0x5A40100ull
#define TASK_OBJ 0x5A40200ull

enum { M_BLOCKING = M_ASYNC_FREE, M_LOCK, M_CONDITION };

static struct adac_managed_thread thread(uint64_t tld)
{
	return (struct adac_managed_thread){.thread = 0x5A20000, .managed_id = 3, .os_id = 4242, .thread_local_data = tld};
}

/* A record: its _objectPtr, _objectKind, _timeoutMs and _next. */
static void put_record(uint64_t at, uint64_t object_ptr, uint32_t kind, int32_t timeout, uint64_t next)
{
	put64(at, object_ptr);
	put32(at + 8, kind);
	put32(at + 12, (uint32_t)timeout);
	put64(at + 16, next);
}

int main(int argc, char **argv)
{
	struct rts r;
	if (rts_open(argc, argv, "blocking_info", NULL, NULL, false, &r))
		return 1;
	put_async_classes(&r);
	struct adac_runtime *rt = r.rt;
	struct adac_error err = {0};
	struct adac_blocking b[ADAC_MAX_BLOCKING_INFOS];
	size_t n = 99;
	struct adac_managed_thread th = thread(TLD);

	/* Nothing has blocked in a way CoreLib records: ThreadBlockingInfo is not loaded. */
	flush();
	CHECK(adac_thread_blocking(rt, &th, b, ADAC_MAX_BLOCKING_INFOS, &n, &err) == 0 && n == 0);

	/* ThreadBlockingInfo (sequential: _objectPtr 0, _objectKind 8, _timeoutMs 12, _next 16) and its
	 * thread-static t_first; Lock, and Condition with its _lock. */
	uint32_t c_info = typedef_rid(r.cmd, "System.Threading", "ThreadBlockingInfo");
	struct fd fields[5] = {
		cl_field(&r, c_info, "_objectPtr", 0, 0x0f),
		cl_field(&r, c_info, "_objectKind", 8, 0x08),
		cl_field(&r, c_info, "_timeoutMs", 12, 0x08),
		cl_field(&r, c_info, "_next", 16, 0x0f),
		cl_field(&r, c_info, "t_first", T_FIRST, 0x0f),
	};
	fields[4].is_static = true;
	put_thread_static_struct(MT(M_BLOCKING), c_info, 24, fields, 5, TLS_INDEX);
	uint32_t c_lock = typedef_rid(r.cmd, "System.Threading", "Lock");
	put_cl_class(MT(M_LOCK), c_lock, 40, MT(M_OBJECT), 0, NULL, 0);
	cl_map_typedef(c_lock, MT(M_LOCK));
	uint32_t c_cond = typedef_rid(r.cmd, "System.Threading", "Condition");
	const struct fd cond_f[] = {cl_field(&r, c_cond, "_lock", 0, 0x12)};
	put_cl_class(MT(M_CONDITION), c_cond, 48, MT(M_OBJECT), 0, cond_f, 1);
	cl_map_typedef(c_cond, MT(M_CONDITION));
	put64(LOCK_OBJ, MT(M_LOCK));
	put64(COND_OBJ, MT(M_CONDITION));
	put64(COND_OBJ + 8, LOCK_OBJ);
	put_task(TASK_OBJ, MT(M_TASK), 0, 0, 0);
	put64(SLOTS, COND_OBJ);
	put64(SLOTS + 8, LOCK_OBJ);
	put64(SLOTS + 16, 0);
	put64(SLOTS + 24, 0x7000000000ull); /* an object nowhere */
	put64(SLOTS + 32, TASK_OBJ);

	/* Monitor.Wait (a Condition, 5000 ms) then, nested in it, entering a Lock. */
	put64(TLD + TLS_INDEX + T_FIRST, REC);
	put_record(REC, SLOTS + 8, 2, -1, REC + 0x20);
	put_record(REC + 0x20, SLOTS, 3, 5000, 0);
	flush();
	CHECK(adac_thread_blocking(rt, &th, b, ADAC_MAX_BLOCKING_INFOS, &n, &err) == 0);
	if (adac_failed(&err))
		fprintf(stderr, "blocking: %s\n", err.msg);
	CHECK(n == 2);
	if (n == 2) {
		CHECK(b[0].addr == REC && b[0].kind == ADAC_BLOCKING_LOCK && b[0].object_kind == 2 && b[0].object == LOCK_OBJ &&
		      b[0].lock == LOCK_OBJ && b[0].timeout_ms == -1);
		CHECK(b[1].addr == REC + 0x20 && b[1].kind == ADAC_BLOCKING_CONDITION && b[1].object_kind == 3 &&
		      b[1].object == COND_OBJ && b[1].lock == LOCK_OBJ && b[1].timeout_ms == 5000);
	}

	/* What is neither: a null slot, no slot, a slot holding nothing readable, another type's object. */
	put_record(REC, SLOTS + 16, 0, -1, REC + 0x20);
	put_record(REC + 0x20, 0, 1, -1, REC + 0x40);
	put_record(REC + 0x40, SLOTS + 24, 2, -1, REC + 0x60);
	put_record(REC + 0x60, SLOTS + 32, 3, -1, 0);
	flush();
	CHECK(adac_thread_blocking(rt, &th, b, ADAC_MAX_BLOCKING_INFOS, &n, &err) == 0 && n == 4);
	for (size_t i = 0; i < n && i < 4; i++)
		CHECK(b[i].kind == ADAC_BLOCKING_OTHER && b[i].lock == 0 && b[i].object == (i == 3 ? TASK_OBJ : 0));

	/* A thread without thread-local data, and t_first null: none. */
	struct adac_managed_thread idle = thread(0);
	CHECK(adac_thread_blocking(rt, &idle, b, ADAC_MAX_BLOCKING_INFOS, &n, &err) == 0 && n == 0);
	put64(TLD + TLS_INDEX + T_FIRST, 0);
	flush();
	CHECK(adac_thread_blocking(rt, &th, b, ADAC_MAX_BLOCKING_INFOS, &n, &err) == 0 && n == 0);

	/* Records that loop; an unreadable one. */
	put64(TLD + TLS_INDEX + T_FIRST, REC + 0x80);
	put_record(REC + 0x80, SLOTS + 8, 2, -1, REC + 0xa0);
	put_record(REC + 0xa0, SLOTS + 8, 2, -1, REC + 0x80);
	flush();
	int rc = adac_thread_blocking(rt, &th, b, ADAC_MAX_BLOCKING_INFOS, &n, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "thread 4242: blocking records loop back to 0x5a10080");
	adac_error_clear(&err);
	put_record(REC + 0xa0, SLOTS + 8, 2, -1, 0x7000000000ull);
	flush();
	rc = adac_thread_blocking(rt, &th, b, ADAC_MAX_BLOCKING_INFOS, &n, &err);
	CHECK_ERR(rc, &err, ADAC_E_READ, "thread 4242: blocking record: ");
	adac_error_clear(&err);

	/* The caps: the caller's, and ADAC_MAX_BLOCKING_INFOS (65 nested waits). */
	put64(TLD + TLS_INDEX + T_FIRST, REC + 0x100);
	for (uint64_t i = 0; i <= ADAC_MAX_BLOCKING_INFOS; i++)
		put_record(REC + 0x100 + 0x20 * i, SLOTS + 8, 2, -1, i < ADAC_MAX_BLOCKING_INFOS ? REC + 0x100 + 0x20 * (i + 1) : 0);
	flush();
	rc = adac_thread_blocking(rt, &th, b, 2, &n, &err);
	CHECK_ERR(rc, &err, ADAC_E_LIMIT, "thread 4242 has more than 2 nested blocking waits");
	adac_error_clear(&err);
	rc = adac_thread_blocking(rt, &th, b, ADAC_MAX_BLOCKING_INFOS, &n, &err);
	CHECK_ERR(rc, &err, ADAC_E_LIMIT, "thread 4242 has more than 64 nested blocking waits (ADAC_MAX_BLOCKING_INFOS)");
	adac_error_clear(&err);
	put_record(REC + 0x100 + 0x20 * (ADAC_MAX_BLOCKING_INFOS - 1), SLOTS + 8, 2, -1, 0);
	flush();
	CHECK(adac_thread_blocking(rt, &th, b, ADAC_MAX_BLOCKING_INFOS, &n, &err) == 0 && n == ADAC_MAX_BLOCKING_INFOS);

	rts_close(&r);
	return check_report("blocking_info");
}
