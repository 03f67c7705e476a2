/* addr_index.c - see addr_index.h. */
#include "base/addr_index.h"

#include <stdlib.h>

#include "base/grow.h"

int adac_addr_index_build(struct adac_addr_index *x, const void *base, size_t n, size_t stride)
{
	adac_addr_index_free(x);
	if (!n)
		return 0;
	uint64_t lo = adac_addr_index_key(base, 0, stride), span = adac_addr_index_key(base, n - 1, stride) - lo;
	size_t want = n / 4 + 1;
	unsigned shift = 0;
	while (shift < 63 && (span >> shift) >= want)
		shift++;
	size_t buckets = (size_t)(span >> shift) + 1;
	uint32_t *start = adac_array_new(buckets + 1, sizeof *start);
	if (!start)
		return -1;
	size_t i = 0;
	for (size_t b = 0; b < buckets; b++) {
		while (i < n && (adac_addr_index_key(base, i, stride) - lo) >> shift < b)
			i++;
		start[b] = (uint32_t)i;
	}
	start[buckets] = (uint32_t)n;
	*x = (struct adac_addr_index){lo, shift, buckets, start};
	return 0;
}

void adac_addr_index_free(struct adac_addr_index *x)
{
	free(x->start);
	memset(x, 0, sizeof *x);
}
