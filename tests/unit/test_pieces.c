/* test_pieces.c - arrays made in parts put end to end (dac/base/pieces.c): every record in part
 * order, whatever the parts' sizes: empty parts first, between and last; small parts (copied);
 * parts of several huge pages (their pages moved), of a block with and without room to line them
 * up; one part; none. A count shared by parts under a cap (adac_piece_under_cap): never refused
 * before more than the cap were kept, at most a step per part past it. */
#include <stdint.h>
#include <stdlib.h>

#include "../check.h"
#include "base/grow.h"
#include "base/pieces.h"

#define MAX_PARTS 8

/* n parts of counts[k] records each, record i of part k holding (k << 40 | i); room: each part's
 * block holds that many more records than it uses. Gathers them and checks the whole. */
static void check_gather(const size_t *counts, unsigned n, size_t room)
{
	struct adac_piece pieces[MAX_PARTS];
	size_t total = 0;
	for (unsigned k = 0; k < n; k++) {
		size_t cap = counts[k] + room;
		uint64_t *a = counts[k] || room ? malloc(adac_array_bytes(cap, sizeof *a)) : NULL;
		CHECK(a != NULL || (!counts[k] && !room));
		for (size_t i = 0; a && i < counts[k]; i++)
			a[i] = (uint64_t)k << 40 | i;
		pieces[k] = (struct adac_piece){a, counts[k], cap};
		total += counts[k];
	}
	uint64_t *all = NULL;
	size_t count = 99;
	CHECK(adac_pieces_gather((void **)&all, &count, pieces, n, sizeof *all) == 0);
	CHECK(count == total);
	CHECK(total == 0 || all != NULL);
	size_t at = 0, bad = 0;
	for (unsigned k = 0; k < n; k++)
		for (size_t i = 0; i < counts[k]; i++, at++)
			bad += all[at] != ((uint64_t)k << 40 | i);
	CHECK(bad == 0);
	free(all);
}

/* Parts taking turns keeping records until one is refused under `cap`: how many all kept. */
static size_t keep_until_refused(unsigned parts, uint64_t cap)
{
	atomic_size_t all;
	atomic_init(&all, 0);
	size_t count[MAX_PARTS] = {0}, kept = 0;
	for (;;)
		for (unsigned k = 0; k < parts; k++) {
			if (!adac_piece_under_cap(&all, count[k], cap))
				return kept;
			count[k]++;
			kept++;
		}
}

int main(void)
{
	const size_t huge = (2u << 20) / sizeof(uint64_t);  /* records in a huge page */
	size_t small[] = {0, 3, 0, 1000, 7, 0};
	check_gather(small, 6, 0);
	check_gather(small, 6, 5);
	/* Several huge pages each, at odd offsets from each other: moved where the block has room. */
	size_t large[] = {3 * huge + 17, 0, 5 * huge + 3, 2 * huge + 1, 11};
	check_gather(large, 5, 0);
	check_gather(large, 5, huge);
	check_gather(large, 5, 2 * huge);
	size_t one[] = {4 * huge + 5};
	check_gather(one, 1, 0);
	size_t first_empty[] = {0, 0, 3 * huge, 4 * huge + 9};
	check_gather(first_empty, 4, huge + 1);
	size_t none[] = {0, 0, 0};
	check_gather(none, 3, 0);
	check_gather(none, 3, 4);
	/* One part: steps claimed at 1024, 2048 ... records; the one that makes the claims 5120 > 5000
	 * is refused (5119 kept). */
	CHECK(keep_until_refused(1, 5000) == 5119);
	CHECK(keep_until_refused(1, 1024) == 2047);
	for (unsigned parts = 2; parts <= MAX_PARTS; parts++) {
		size_t kept = keep_until_refused(parts, 100000);
		CHECK(kept > 100000 && kept <= 100000 + parts * ADAC_PIECE_STEP);
	}
	return check_report("pieces");
}
