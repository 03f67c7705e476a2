/* pieces.c - see pieces.h. */
#include "base/pieces.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/grow.h"

/* Moves n bytes from src (a block of `room` bytes, freed next) to dst (which nothing has written
 * yet). The whole pages between move by remapping them, not by copying into fresh pages (at a
 * million chains `ps`'s parts' records are 70 MB: a tenth of a second of page faults and copying on
 * one thread), and the records are not held twice: src is first shifted inside its own block so
 * that its pages line up with dst's, and its moved pages are left as empty memory
 * (MREMAP_DONTUNMAP). They line up to 2 MB where the block has room for that shift: the blocks are
 * then moved in huge pages whole, where a move cut at 4 KB splits them into small mappings, each
 * as costly on first touch as a page fault on a virtual machine (the CLI's tables are in huge
 * pages: 1 M chains, 48 MB of tasks read once 60 ms after a 4 KB move, 2 ms after a 2 MB one).
 * Small moves, a block without room for the shift, or a kernel that refuses: a copy. */
static void move_records(char *dst, char *src, size_t n, size_t room)
{
	const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), huge = (uintptr_t)2 << 20;
	uintptr_t grain = page;
	if (n >= 2 * huge && (((uintptr_t)dst - (uintptr_t)src) & (huge - 1)) <= room - n)
		grain = huge;
	size_t shift = ((uintptr_t)dst - (uintptr_t)src) & (grain - 1);
	char *lo = (char *)(((uintptr_t)dst + grain - 1) & ~(grain - 1)), *hi = (char *)(((uintptr_t)dst + n) & ~(grain - 1));
	if (n < 16 * page || shift > room - n) {
		memcpy(dst, src, n);
		return;
	}
	memmove(src + shift, src, n);
	const char *from = src + shift;   /* (from - dst is a multiple of the grain) */
	memcpy(dst, from, (size_t)(lo - dst));
	memcpy(hi, from + (hi - dst), (size_t)(dst + n - hi));
	void *old = (void *)(from + (lo - dst));
	if (mremap(old, (size_t)(hi - lo), (size_t)(hi - lo), MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, lo) ==
	    MAP_FAILED)
		memcpy(lo, old, (size_t)(hi - lo));
}

int adac_pieces_gather(void **arr, size_t *count, const struct adac_piece *pieces, unsigned n, size_t elem)
{
	size_t total = 0;
	unsigned first = n;
	for (unsigned k = 0; k < n; k++) {
		total += pieces[k].count;
		if (first == n && pieces[k].count)
			first = k;
	}
	char *p = first < n ? realloc(pieces[first].arr, adac_block_bytes(total * elem)) : NULL;
	size_t at = first < n ? pieces[first].count : 0;
	for (unsigned k = 0; k < n; k++) {
		if (k == first)
			continue;
		if (p && k > first && pieces[k].count) {
			move_records(p + at * elem, pieces[k].arr, pieces[k].count * elem, pieces[k].cap * elem);
			at += pieces[k].count;
		}
		free(pieces[k].arr);
	}
	if (first < n && !p) {
		free(pieces[first].arr);
		return -1;
	}
	*arr = p;
	*count = total;
	return 0;
}
