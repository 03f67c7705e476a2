/* test_lock_wait.c - the deadlock cycles of async/lock_wait.c (adac_lock_cycle_next) over made-up
 * holders and waits: a cycle of two, one of three, a thread waiting into a cycle it is not part of
 * (not a cycle of its own, the cycle reported once), waits that end at a thread waiting for
 * nothing, a cycle longer than the room given (not reported), and a thread waiting for a lock it
 * holds (a cycle of one). */
#include <string.h>

#include "../check.h"
#include "async/lock_wait.h"
#include "types/locks.h"

static struct adac_held_lock locks[16];
static struct adac_lock_wait waits[16];

/* Lock i is held by managed thread owner[i]; wait j: thread waiter[j] waits for lock wanted[j]. */
static void setup(struct adac_held_locks *h, struct adac_lock_waits *w, const uint32_t *owner, size_t nlocks,
                  const uint32_t *waiter, const size_t *wanted, size_t nwaits)
{
	memset(locks, 0, sizeof locks);
	memset(waits, 0, sizeof waits);
	for (size_t i = 0; i < nlocks; i++)
		locks[i] = (struct adac_held_lock){.object = 0x1000 * (i + 1), .owner = owner[i], .owner_tid = 100 + owner[i]};
	for (size_t j = 0; j < nwaits; j++)
		waits[j] = (struct adac_lock_wait){.lock = wanted[j], .os_tid = 100 + waiter[j], .managed_id = waiter[j]};
	*h = (struct adac_held_locks){.locks = locks, .count = nlocks};
	*w = (struct adac_lock_waits){.waits = waits, .count = nwaits};
}

/* The cycles found, each as its locks' indexes, into out ("0,1;2,3,4;"). */
static void cycles(const struct adac_held_locks *h, const struct adac_lock_waits *w, size_t room, char *out, size_t size)
{
	size_t from = 0, cycle[16], n, len = 0;
	out[0] = 0;
	while (adac_lock_cycle_next(h, w, &from, cycle, room, &n)) {
		for (size_t k = 0; k < n; k++)
			len += (size_t)snprintf(out + len, size - len, "%zu%s", cycle[k], k + 1 < n ? "," : ";");
	}
}

int main(void)
{
	struct adac_held_locks h;
	struct adac_lock_waits w;
	char got[256];

	/* Threads 1 and 2: 1 holds lock 0 and waits for lock 1, which 2 holds while it waits for lock 0. */
	setup(&h, &w, (uint32_t[]){1, 2}, 2, (uint32_t[]){1, 2}, (size_t[]){1, 0}, 2);
	cycles(&h, &w, 16, got, sizeof got);
	CHECK_EQ_STR(got, "1,0;");

	/* Three threads in a ring (lock i held by thread i + 1, thread i + 1 waits for lock (i + 1) % 3),
	 * and thread 4 waiting for lock 0 (it waits into the ring; it is not in it), thread 5 for lock 3,
	 * held by thread 6, who waits for nothing. */
	setup(&h, &w, (uint32_t[]){1, 2, 3, 6}, 4, (uint32_t[]){4, 1, 2, 3, 5}, (size_t[]){0, 1, 2, 0, 3}, 5);
	cycles(&h, &w, 16, got, sizeof got);
	CHECK_EQ_STR(got, "1,2,0;");

	/* The same ring with room for two threads: not reported. */
	cycles(&h, &w, 2, got, sizeof got);
	CHECK_EQ_STR(got, "");

	/* Two separate cycles, each reported once. */
	setup(&h, &w, (uint32_t[]){1, 2, 3, 4}, 4, (uint32_t[]){1, 2, 3, 4}, (size_t[]){1, 0, 3, 2}, 4);
	cycles(&h, &w, 16, got, sizeof got);
	CHECK_EQ_STR(got, "1,0;3,2;");

	/* No wait at all, and a wait for a lock whose holder waits for nothing. */
	setup(&h, &w, (uint32_t[]){1}, 1, NULL, NULL, 0);
	cycles(&h, &w, 16, got, sizeof got);
	CHECK_EQ_STR(got, "");
	setup(&h, &w, (uint32_t[]){1}, 1, (uint32_t[]){2}, (size_t[]){0}, 1);
	cycles(&h, &w, 16, got, sizeof got);
	CHECK_EQ_STR(got, "");

	/* A thread waiting for a lock it holds (made up: a Monitor lets its holder in again). */
	setup(&h, &w, (uint32_t[]){1}, 1, (uint32_t[]){1}, (size_t[]){0}, 1);
	cycles(&h, &w, 16, got, sizeof got);
	CHECK_EQ_STR(got, "0;");
	return check_report("test_lock_wait");
}
