/* test_arena.c - adac_arena (dac/base/arena.c): allocations are 16-byte aligned, do not overlap and
 * keep their bytes until the reset; one larger than a block gets a block of its own; a reset arena
 * hands out the same blocks again in the same order (no new memory for the same sizes); what the
 * arena handed out is its own, and nothing else is. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../check.h"
#include "base/arena.h"

enum { N = 3000 };

int main(void)
{
	struct adac_arena a = {0};
	static unsigned char *p[N];
	static size_t len[N];
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < N; i++) {
			len[i] = i == 1000 ? (1u << 20) : 1 + (i * 7919) % 1500; /* one past a block's 256 KiB */
			p[i] = adac_arena_alloc(&a, len[i]);
			CHECK(p[i] != NULL);
			if (!p[i])
				return check_report("arena");
			CHECK(((uintptr_t)p[i] & 15) == 0);
			memset(p[i], (int)(i & 0xff), len[i]);
		}
		bool kept = true;
		for (size_t i = 0; i < N; i++)
			for (size_t k = 0; k < len[i]; k += 97)
				kept = kept && p[i][k] == (unsigned char)(i & 0xff);
		CHECK(kept); /* nothing handed out twice */
		bool owned = true;
		for (size_t i = 0; i < N; i++)
			owned = owned && adac_arena_owns(&a, p[i]) && adac_arena_owns(&a, p[i] + len[i] - 1);
		CHECK(owned);
		CHECK(!adac_arena_owns(&a, len));
		static unsigned char *first[N];
		if (round == 0) {
			memcpy(first, p, sizeof p);
		} else {
			bool same = true;
			for (size_t i = 0; i < N; i++)
				same = same && first[i] == p[i];
			CHECK(same); /* the reset arena reused its blocks in order */
		}
		adac_arena_reset(&a);
	}
	CHECK(adac_arena_alloc(&a, SIZE_MAX - 8) == NULL);
	CHECK(adac_arena_alloc(&a, 0) != NULL);
	unsigned char *last = adac_arena_alloc(&a, 8);
	adac_arena_free(&a);
	CHECK(a.first == NULL);
	CHECK(!adac_arena_owns(&a, last));
	return check_report("arena");
}
