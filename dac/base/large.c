/* large.c - huge pages for large arrays. At a million chains the listing takes ~100 k page faults
 * filling its arrays (4 KiB each, every one a zeroed page and a TLB update); asking for huge pages
 * takes that to ~45 k and the kernel's share of `ps --stats` down by a third. glibc does the same
 * for every block only when GLIBC_TUNABLES=glibc.malloc.hugetlb=1 is set. */
#include "base/large.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define LARGE_BYTES ((size_t)2 << 20) /* a huge page on x86-64 and arm64 (4 KiB base pages) */

static void *advise(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
	if (p && bytes >= LARGE_BYTES) {
		long page = sysconf(_SC_PAGESIZE);
		uintptr_t start = (uintptr_t)p & ~(uintptr_t)(page > 0 ? page - 1 : 4095);
		/* (A hint: where the kernel has no huge pages it fails, and nothing changes.) */
		(void)madvise((void *)start, (uintptr_t)p + bytes - start, MADV_HUGEPAGE);
	}
#endif
	return p;
}

void *adac_large_malloc(size_t bytes) { return advise(malloc(bytes), bytes); }

void *adac_large_calloc(size_t n, size_t elem)
{
	if (!n || elem > SIZE_MAX / n || n * elem < LARGE_BYTES)
		return calloc(n, elem);
	/* Zeroed by writing: a table read before it is written (a slot tested, then set) would map
	 * the shared zero page first, and a write to that page is served 4 KiB at a time. */
	void *p = adac_large_malloc(n * elem);
	return p ? memset(p, 0, n * elem) : NULL;
}

void *adac_large_realloc(void *p, size_t bytes) { return advise(realloc(p, bytes), bytes); }
