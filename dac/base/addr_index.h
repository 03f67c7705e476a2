/* addr_index.h - finding a record by its address among records sorted by address (the address
 * their first member): the heap pass's continuations and tasks, the objects of `gcroot`'s graph.
 * Bucket b holds the records whose (address - lo) >> shift is b, from start[b] to start[b + 1];
 * about one bucket per four records: 1 byte per record where a hash table took 8, and a search
 * of a few neighbouring records where a binary search over millions missed the cache at each of its
 * ~24 steps. No worse than a binary search when the addresses bunch up. */
#ifndef ADAC_ADDR_INDEX_H
#define ADAC_ADDR_INDEX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define ADAC_ADDR_NONE UINT32_MAX   /* no record at the address */

struct adac_addr_index {
	uint64_t lo;
	unsigned shift;
	size_t buckets;
	uint32_t *start;   /* buckets + 1 entries; NULL: not built (a binary search of every record) */
};

/* Indexes the n records at base, `stride` bytes apart, sorted by address (n < ADAC_ADDR_NONE):
 * 0, or -1 when memory runs out (x is then empty: finds search every record). */
int adac_addr_index_build(struct adac_addr_index *x, const void *base, size_t n, size_t stride);
void adac_addr_index_free(struct adac_addr_index *x);

static inline uint64_t adac_addr_index_key(const void *base, size_t i, size_t stride)
{
	uint64_t a;
	memcpy(&a, (const char *)base + i * stride, sizeof a);
	return a;
}

/* The index of the (first) record whose address is addr, ADAC_ADDR_NONE if none. Inline: `gcroot`
 * asks once per reference of the heap. */
static inline uint32_t adac_addr_index_find(const struct adac_addr_index *x, const void *base, size_t n,
                                            size_t stride, uint64_t addr)
{
	size_t lo = 0, hi = n;
	if (x->start) {
		if (addr < x->lo || (addr - x->lo) >> x->shift >= x->buckets)
			return ADAC_ADDR_NONE;
		size_t b = (size_t)((addr - x->lo) >> x->shift);
		lo = x->start[b];
		hi = x->start[b + 1];
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (adac_addr_index_key(base, mid, stride) < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && adac_addr_index_key(base, lo, stride) == addr ? (uint32_t)lo : ADAC_ADDR_NONE;
}

#endif
