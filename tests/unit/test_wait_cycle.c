/* test_wait_cycle.c - the deadlocks through tasks of async/wait_cycle.c over made-up waits: a thread
 * waiting synchronously for a task whose stack runs on a thread waiting for a lock it holds (the
 * usual sync-over-async deadlock), a thread waiting for a task it runs itself, two threads each
 * waiting for the other's task (reported once, from the first wait), a cycle through a third
 * thread's lock, waits that end (no runner, a runner waiting for nothing, a wait by no thread), a
 * wait into a cycle it is not part of, a cycle longer than ADAC_MAX_WAIT_CYCLE (not reported), a thread
 * with a lock wait and an old synchronous wait (the lock's counts), and a line of 50,000 threads into
 * a cycle (each thread walked once: O(n log n), not the O(n^2) of a walk from every wait). */
#include <stdio.h>
#include <string.h>

#include "../check.h"
#include "async/lock_wait.h"
#include "async/sync_wait.h"
#include "async/wait_cycle.h"
#include "base/limits.h"
#include "types/locks.h"

#define MAX 50010
static struct adac_held_lock locks[MAX];
static struct adac_lock_wait lwaits[MAX];
static struct adac_sync_wait swaits[MAX];
static struct adac_task_runner runners[MAX];
static struct adac_held_locks h;
static struct adac_lock_waits lw;
static struct adac_sync_waits sw;
static size_t nrunners;

static void reset(void)
{
	memset(&h, 0, sizeof h);
	memset(&lw, 0, sizeof lw);
	memset(&sw, 0, sizeof sw);
	h.locks = locks;
	lw.waits = lwaits;
	sw.waits = swaits;
	nrunners = 0;
}

/* Lock `lock` (0x1000 * (lock + 1)) held by managed thread `owner`, waited for by thread `waiter`. */
static void lock_wait(size_t lock, uint32_t owner, uint32_t waiter)
{
	locks[lock] = (struct adac_held_lock){.object = 0x1000 * (lock + 1), .owner = owner, .owner_tid = 100 + owner};
	if (lock >= h.count)
		h.count = lock + 1;
	lwaits[lw.count++] = (struct adac_lock_wait){.lock = lock, .os_tid = 100 + waiter, .managed_id = waiter};
}

/* Thread `waiter` (0: no thread found) waits synchronously for task `task`. */
static void sync_wait(uint64_t task, uint32_t waiter)
{
	swaits[sw.count++] = (struct adac_sync_wait){.task = task, .waiter = task + 8, .os_tid = waiter ? 100 + waiter : 0,
	                                             .managed_id = waiter};
}

/* Task `task`'s stack runs on thread `thread`. */
static void runs(uint64_t task, uint32_t thread)
{
	runners[nrunners++] = (struct adac_task_runner){task, 100 + thread, thread};
}

/* Threads 1 and 2 each wait for the task the other runs (0xa00 on 2, 0xb00 on 1). */
static void crossed_tasks(void)
{
	sync_wait(0xa00, 1);
	sync_wait(0xb00, 2);
	runs(0xa00, 2);
	runs(0xb00, 1);
}

/* The cycles found, each as its steps "<thread>:t<task>" or "<thread>:l<lock>" ("7:t900,4:l0;"). */
static void cycles(bool with_locks, char *out, size_t size)
{
	struct adac_wait_cycles c;
	struct adac_error err = {0};
	size_t len = 0;
	out[0] = 0;
	adac_task_runners_sort(runners, nrunners);
	if (adac_wait_cycles_find(with_locks ? &h : NULL, with_locks ? &lw : NULL, &sw, runners, nrunners, &c, &err)) {
		snprintf(out, size, "error: %s", err.msg);
		return;
	}
	for (size_t k = 0, at = 0; k < c.count; at = c.ends[k++])
		for (size_t s = at; s < c.ends[k] && len < size; s++) {
			const struct adac_wait_step *st = &c.steps[s];
			CHECK(st->os_tid == 100 + st->managed_id);
			len += (size_t)snprintf(out + len, size - len, st->task ? "%u:t%llx%s" : "%u:l%llx%s", st->managed_id,
			                        (unsigned long long)(st->task ? st->task : st->lock), s + 1 < c.ends[k] ? "," : ";");
		}
	adac_wait_cycles_free(&c);
}

int main(void)
{
	char got[4096];

	/* Thread 7 holds lock 0 and waits for task 0x900, which runs on thread 4, who waits for lock 0. */
	reset();
	lock_wait(0, 7, 4);
	sync_wait(0x900, 7);
	runs(0x900, 4);
	cycles(true, got, sizeof got);
	CHECK_EQ_STR(got, "7:t900,4:l0;");
	/* Without the locks (none known): no cycle. */
	cycles(false, got, sizeof got);
	CHECK_EQ_STR(got, "");
	/* No stack runs on a thread (no runners at all, as a core whose running chain is corrupt):
	 * none, and no null array handed to memcpy or qsort (UBSan; core_mutation found it). */
	{
		struct adac_wait_cycles none;
		struct adac_error err = {0};
		CHECK(adac_wait_cycles_find(&h, &lw, &sw, NULL, 0, &none, &err) == 0 && none.count == 0);
		adac_wait_cycles_free(&none);
	}
	/* Found through the task's place on the stack, not the runner's order. */
	reset();
	runs(0x800, 4);
	runs(0x900, 4);
	lock_wait(0, 7, 4);
	sync_wait(0x900, 7);
	cycles(true, got, sizeof got);
	CHECK_EQ_STR(got, "7:t900,4:l0;");

	/* A thread waiting for a task whose stack it runs itself. */
	reset();
	sync_wait(0x900, 3);
	runs(0x900, 3);
	cycles(false, got, sizeof got);
	CHECK_EQ_STR(got, "3:t900;");

	/* Threads 1 and 2 each wait for the task the other runs: one cycle, from the first wait. */
	reset();
	crossed_tasks();
	cycles(false, got, sizeof got);
	CHECK_EQ_STR(got, "1:ta00,2:tb00;");

	/* Through a third thread's lock: 1 waits for task 0xa00 on 2, 2 for lock 0 held by 3, 3 for lock
	 * 1 held by 1; and thread 5 waits for lock 0 too (into the cycle, not in it). */
	reset();
	sync_wait(0xa00, 1);
	runs(0xa00, 2);
	lock_wait(0, 3, 2);
	lock_wait(1, 1, 3);
	lock_wait(0, 3, 5);
	cycles(true, got, sizeof got);
	CHECK_EQ_STR(got, "1:ta00,2:l0,3:l1;");

	/* Waits that end: a task nobody runs, a runner who waits for nothing, a wait by no thread, and a
	 * lock cycle with no task (adac_lock_cycle_next's). */
	reset();
	sync_wait(0xa00, 1);
	sync_wait(0xb00, 2);
	runs(0xb00, 6);
	sync_wait(0xc00, 0);
	runs(0xc00, 1);
	lock_wait(0, 8, 9);
	lock_wait(1, 9, 8);
	cycles(true, got, sizeof got);
	CHECK_EQ_STR(got, "");

	/* A wait into a cycle it is not part of: thread 5 waits for task 0xc00, run by thread 1 of the
	 * cycle of 1 and 2; the cycle is reported once, from its first wait (listed after 5's). */
	reset();
	sync_wait(0xc00, 5);
	runs(0xc00, 1);
	crossed_tasks();
	cycles(false, got, sizeof got);
	CHECK_EQ_STR(got, "1:ta00,2:tb00;");

	/* Thread 1 waits for lock 0, held by 2, who waits for task 0xe00, which 1 runs: a cycle through the
	 * lock. Thread 1's synchronous wait for task 0xd00 (run by 3, who waits for 0xf00, run by 1) is an
	 * old one: 1 waits for the lock. */
	reset();
	lock_wait(0, 2, 1);
	sync_wait(0xd00, 1);
	runs(0xd00, 3);
	sync_wait(0xe00, 2);
	runs(0xe00, 1);
	sync_wait(0xf00, 3);
	runs(0xf00, 1);
	cycles(true, got, sizeof got);
	CHECK_EQ_STR(got, "2:te00,1:l0;");

	/* A line of 50,000 threads, each waiting for the task the next one runs, the last two for each
	 * other's: one cycle. */
	reset();
	for (uint32_t i = 1; i <= 50000; i++) {
		sync_wait(0x100000 + 0x10 * (uint64_t)i, i);
		runs(0x100000 + 0x10 * (uint64_t)i, i < 50000 ? i + 1 : 49999);
	}
	cycles(false, got, sizeof got);
	CHECK_EQ_STR(got, "49999:t1c34f0,50000:t1c3500;");

	/* A ring of ADAC_MAX_WAIT_CYCLE + 1 threads, each waiting for the next one's task: not
	 * reported; of ADAC_MAX_WAIT_CYCLE: reported, whole. */
	for (uint32_t n = ADAC_MAX_WAIT_CYCLE; n <= ADAC_MAX_WAIT_CYCLE + 1; n++) {
		reset();
		for (uint32_t i = 0; i < n; i++) {
			sync_wait(0x10000 + 0x100 * i, i + 1);
			runs(0x10000 + 0x100 * i, (i + 1) % n + 1);
		}
		cycles(false, got, sizeof got);
		size_t steps = 0;
		for (const char *c = got; *c; c++)
			steps += *c == ',' || *c == ';';
		CHECK_EQ_U64(steps, n == ADAC_MAX_WAIT_CYCLE ? n : 0);
	}
	return check_report("test_wait_cycle");
}
