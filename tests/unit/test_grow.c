/* test_grow.c - dac/base/grow.h: adac_block_bytes leaves a small block alone and ends a large one
 * 32 bytes short of a multiple of 2 MB; adac_array_bytes does so from 2 MB on; adac_array_new /
 * adac_array_zeroed give room for one element at least and refuse a size that overflows;
 * adac_grow doubles, then rounds a large block up the same way, and leaves the array as it was
 * when it cannot grow. Where glibc's malloc and the kernel's transparent huge pages are there (this
 * project's machines), a large block, new or moved by realloc, starts 16 bytes (glibc's header)
 * past a 2 MB boundary: what the sizing is for. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "../check.h"
#include "base/grow.h"

#define MB ((size_t)1 << 20)

/* A malloc'd block's mapping on a 2 MB boundary: the kernel aligns an anonymous mapping of whole
 * 2 MB only where it may back it with huge pages; ASan has its own allocator. */
static bool expect_aligned(void)
{
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
	char mode[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (!f)
		return false;
	bool read = fgets(mode, sizeof mode, f) != NULL;
	fclose(f);
	return read && !strstr(mode, "[never]");
#else
	return false;
#endif
}

static bool on_boundary(const void *p) { return ((uintptr_t)p - 16) % (2 * MB) == 0; }

int main(void)
{
#ifdef __GLIBC__
	mallopt(M_MMAP_THRESHOLD, (int)ADAC_MMAP_THRESHOLD); /* as the CLI: large blocks mapped, whatever was freed */
#endif
	/* Sizes. */
	CHECK_EQ_U64(adac_block_bytes(0), 0);
	CHECK_EQ_U64(adac_block_bytes(4096), 4096);
	CHECK_EQ_U64(adac_block_bytes(2 * MB - 1), 2 * MB - 1);
	CHECK_EQ_U64(adac_block_bytes(2 * MB), 4 * MB - 32);
	CHECK_EQ_U64(adac_block_bytes(3 * MB), 4 * MB - 32);
	CHECK_EQ_U64(adac_block_bytes(4 * MB - 32), 4 * MB - 32);
	CHECK_EQ_U64(adac_block_bytes(4 * MB - 31), 6 * MB - 32);
	CHECK_EQ_U64(adac_block_bytes(SIZE_MAX), SIZE_MAX); /* (no room to round: as asked) */

	/* New arrays. */
	uint32_t *none = adac_array_new(0, sizeof *none);
	CHECK(none != NULL);
	free(none);
	CHECK(adac_array_new(SIZE_MAX / 4 + 1, 8) == NULL);
	CHECK(adac_array_zeroed(SIZE_MAX / 4 + 1, 8) == NULL);
	CHECK_EQ_U64(adac_array_bytes(0, 8), 8);
	CHECK_EQ_U64(adac_array_bytes(MB / 8, 8), MB);                  /* (below 2 MB: as asked) */
	CHECK_EQ_U64(adac_array_bytes(2 * MB / 8 - 1, 8), 2 * MB - 8);
	CHECK_EQ_U64(adac_array_bytes(2 * MB / 8, 8), 4 * MB - 32);
	CHECK_EQ_U64(adac_array_bytes(3 * MB / 8, 8), 4 * MB - 32);
	CHECK_EQ_U64(adac_array_bytes(9 * MB / 8, 8), 10 * MB - 32);
	CHECK_EQ_U64(adac_array_bytes(SIZE_MAX / 4 + 1, 8), 0);
	void *small = adac_array_new(3 * MB / 8, 8); /* (from 2 MB on: in huge pages too) */
	CHECK(small != NULL);
	if (small && expect_aligned())
		CHECK(on_boundary(small));
	free(small);
	size_t n = 9 * MB / sizeof(uint64_t);
	uint64_t *z = adac_array_zeroed(n, sizeof *z);
	CHECK(z != NULL);
	if (z) {
		size_t nonzero = 0;
		for (size_t i = 0; i < n; i++)
			nonzero += z[i] != 0;
		CHECK_EQ_U64(nonzero, 0);
		if (expect_aligned())
			CHECK(on_boundary(z));
		free(z);
	}

	/* Growing: doubling from `first`, a large block rounded up, the records kept. */
	uint64_t *a = NULL;
	size_t cap = 0;
	CHECK(adac_grow((void **)&a, &cap, 1, sizeof *a, 1024) == 0);
	CHECK_EQ_U64(cap, 1024);
	CHECK(adac_grow((void **)&a, &cap, 1000, sizeof *a, 1024) == 0);
	CHECK_EQ_U64(cap, 1024); /* (room enough: untouched) */
	size_t filled = 0;
	for (int round = 0; round < 40 && a && cap * sizeof *a < 16 * MB - 32; round++) {
		size_t need = cap + 1, was = cap * sizeof *a;
		CHECK(adac_grow((void **)&a, &cap, need, sizeof *a, 1024) == 0);
		CHECK(cap >= need);
		/* Past 2 MB a new block, whose mapping is in whole huge pages (realloc would carry the
		 * small block's 4 KB pages along). */
		if (was < 2 * MB && cap * sizeof *a >= 2 * MB && expect_aligned())
			CHECK(on_boundary(a));
		for (; filled < cap; filled++)
			a[filled] = filled * 7;
	}
	CHECK_EQ_U64(cap * sizeof *a, 16 * MB - 32); /* 8 KB, 16 KB ... 1 MB, then 2 MB rounded: 4, 8, 16 MB */
	size_t wrong = 0;
	for (size_t i = 0; i < filled; i++)
		wrong += a[i] != i * 7;
	CHECK_EQ_U64(wrong, 0);
	if (expect_aligned())
		CHECK(on_boundary(a));
	uint64_t *before = a;
	size_t cap_before = cap;
	CHECK(adac_grow((void **)&a, &cap, SIZE_MAX / 4, sizeof *a, 1024) == -1);
	CHECK(a == before);
	CHECK_EQ_U64(cap, cap_before);
	free(a);
	return check_report("grow");
}
