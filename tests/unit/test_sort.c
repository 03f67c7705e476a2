/* test_sort.c - adac_sort_if_needed (dac/base/sort.c): elements in strictly increasing order are
 * left alone (true), equal neighbours in order are left in place (false: not distinct), elements out
 * of order are sorted (false): long ordered runs merged stably, short ones by qsort; and no element
 * or one is in order. */
#include <stdlib.h>

#include "../check.h"
#include "base/sort.h"

struct rec {
	uint64_t addr;
	uint32_t seen;     /* the position it came in: whether a sort moved it */
};

static int cmp_addr(const void *a, const void *b)
{
	uint64_t x = ((const struct rec *)a)->addr, y = ((const struct rec *)b)->addr;
	return x < y ? -1 : x > y;
}

static bool in_order(const struct rec *r, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (r[i - 1].addr > r[i].addr)
			return false;
	return true;
}

int main(void)
{
	CHECK(adac_sort_if_needed(NULL, 0, sizeof(struct rec), cmp_addr));
	struct rec one = {0x10, 0};
	CHECK(adac_sort_if_needed(&one, 1, sizeof one, cmp_addr));

	enum { N = 1000 };
	struct rec *r = malloc(N * sizeof *r);
	CHECK(r != NULL);
	if (!r)
		return check_report("sort");
	for (uint32_t i = 0; i < N; i++)
		r[i] = (struct rec){0x1000 + (uint64_t)i * 24, i};
	CHECK(adac_sort_if_needed(r, N, sizeof *r, cmp_addr));
	bool kept = true;
	for (uint32_t i = 0; i < N; i++)
		kept = kept && r[i].seen == i;
	CHECK(kept);

	/* Equal neighbours: in order, so not moved, but not distinct. */
	r[501].addr = r[500].addr;
	CHECK(!adac_sort_if_needed(r, N, sizeof *r, cmp_addr));
	CHECK(r[500].seen == 500 && r[501].seen == 501);

	/* Out of order (reversed halves): sorted. */
	for (uint32_t i = 0; i < N; i++)
		r[i] = (struct rec){0x1000 + (uint64_t)((i + N / 2) % N) * 24, i};
	CHECK(!adac_sort_if_needed(r, N, sizeof *r, cmp_addr));
	CHECK(in_order(r, N) && r[0].addr == 0x1000 && r[0].seen == N / 2);

	/* Three ordered runs end to end (the chains of a scan, then its unowned ones, then its boxes),
	 * with keys repeated across them: merged, equal keys in the order they came. */
	for (uint32_t i = 0; i < N; i++)
		r[i] = (struct rec){0x1000 + (uint64_t)(i % 400) * 8, i};
	CHECK(!adac_sort_if_needed(r, N, sizeof *r, cmp_addr));
	bool stable = in_order(r, N);
	for (uint32_t i = 1; i < N; i++)
		stable = stable && (r[i - 1].addr != r[i].addr || r[i - 1].seen < r[i].seen);
	CHECK(stable && r[0].seen == 0 && r[1].seen == 400 && r[2].seen == 800 && r[N - 1].seen == 799);

	/* Nearly in order (the chains of a scan by their task's address, listed by their head's):
	 * every 10th element of the second half takes the key of the one 100 places before, 51 runs;
	 * merged stably. */
	for (uint32_t i = 0; i < N; i++)
		r[i] = (struct rec){0x1000 + (uint64_t)(i >= N / 2 && i % 10 == 0 ? i - 100 : i) * 8, i};
	CHECK(!adac_sort_if_needed(r, N, sizeof *r, cmp_addr));
	stable = in_order(r, N);
	for (uint32_t i = 1; i < N; i++)
		stable = stable && (r[i - 1].addr != r[i].addr || r[i - 1].seen < r[i].seen);
	CHECK(stable && r[400].seen == 400 && r[401].seen == 500 && r[N - 1].seen == N - 1);

	/* More runs than it merges (descending: a run per element): qsort. */
	for (uint32_t i = 0; i < N; i++)
		r[i] = (struct rec){0x1000 + (uint64_t)(N - i) * 8, i};
	CHECK(!adac_sort_if_needed(r, N, sizeof *r, cmp_addr));
	CHECK(in_order(r, N) && r[0].seen == N - 1 && r[N - 1].seen == 0);
	free(r);
	return check_report("sort");
}
