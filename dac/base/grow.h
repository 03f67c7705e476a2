/* grow.h - arrays of records: new ones, and room for one more in one grown by doubling, sized so
 * that a large one lies in whole huge pages (adac_block_bytes). */
#ifndef ADAC_GROW_H
#define ADAC_GROW_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The bytes to ask malloc for, for a block of at least `bytes`: from 2 MB on, 32 bytes short of a
 * multiple of 2 MB. glibc's malloc maps such a block, with its header, in whole 2 MB, which the
 * kernel places on a 2 MB boundary, and realloc's mremap moves it to one: its huge pages and page
 * tables then move whole. A block whose mapping ends elsewhere lands anywhere and is cut into
 * 4 KB mappings as it moves, each as costly on first touch as a page fault on a virtual machine
 * (16 MB read once after a move: 24 ms, against 0.1 ms). */
#define ADAC_BLOCK_HUGE ((size_t)2 << 20)
#define ADAC_BLOCK_HEADER ((size_t)32)
/* An M_MMAP_THRESHOLD for a program that fixes glibc's (the CLI): the largest under which a block
 * of adac_block_bytes (a chunk of a multiple of 2 MB less 16 bytes) is still mapped, so that it
 * lies in whole huge pages and goes back to the kernel when freed. */
#define ADAC_MMAP_THRESHOLD (ADAC_BLOCK_HUGE - 2 * ADAC_BLOCK_HEADER)

static inline size_t adac_block_bytes(size_t bytes)
{
	if (bytes < ADAC_BLOCK_HUGE || bytes > SIZE_MAX - 2 * ADAC_BLOCK_HUGE)
		return bytes;
	return ((bytes + ADAC_BLOCK_HEADER + ADAC_BLOCK_HUGE - 1) & ~(ADAC_BLOCK_HUGE - 1)) - ADAC_BLOCK_HEADER;
}

/* A new array's block: from 2 MB on, sized by adac_block_bytes, so that it lies in whole huge
 * pages. Its last huge page, partly used, is resident whole (at most 2 MB more); a block that ends
 * elsewhere is cut into 4 KB pages, and on a virtual machine each costs a fault of ~10 us the first
 * time it is written: the 1-8 MB arrays `ps` makes and frees after the heap pass (indexes, the
 * graph's, the listing's) took 5,000 of them at a million chains (50 ms). */
static inline size_t adac_array_bytes(size_t n, size_t elem)
{
	if (!n)
		n = 1;
	if (n > SIZE_MAX / elem)
		return 0;
	return adac_block_bytes(n * elem);
}

/* A new array of n elements of `elem` bytes (room for one at least), its block sized by
 * adac_array_bytes; NULL when memory runs out or the size overflows. Free it with free(). */
static inline void *adac_array_new(size_t n, size_t elem)
{
	size_t bytes = adac_array_bytes(n, elem);
	return bytes ? malloc(bytes) : NULL;
}
/* ... zeroed. */
static inline void *adac_array_zeroed(size_t n, size_t elem)
{
	size_t bytes = adac_array_bytes(n, elem);
	return bytes ? calloc(1, bytes) : NULL;
}

/* Makes *arr (elements of `elem` bytes, *cap of them) hold at least `need`: doubling from `first`
 * (a large block then up to what adac_block_bytes gives). 0, or -1 when memory runs out (or the
 * size overflows); *arr and *cap are then unchanged. */
static inline int adac_grow(void **arr, size_t *cap, size_t need, size_t elem, size_t first)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : first;
	while (n < need && n <= SIZE_MAX / 2)
		n *= 2;
	if (n < need || n > SIZE_MAX / elem)
		return -1;
	n = adac_block_bytes(n * elem) / elem;
	void *p;
	if (*cap * elem < ADAC_BLOCK_HUGE && n * elem >= ADAC_BLOCK_HUGE) {
		/* Into huge pages: a new block, not realloc's, which would move the small one's 4 KB pages
		 * along (each costs a fault as it was written, and a TLB entry as it is read). */
		if (!(p = malloc(n * elem)))
			return -1;
		if (*cap)
			memcpy(p, *arr, *cap * elem);
		free(*arr);
	} else if (!(p = realloc(*arr, n * elem)))
		return -1;
	*arr = p;
	*cap = n;
	return 0;
}

#endif
