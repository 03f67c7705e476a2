/* test_addr_index.c - the index over records sorted by address (dac/base/addr_index.c): every
 * record found at its address (the first of equal ones), nothing found between, before or after
 * them, records bunched in two far-apart runs (most buckets empty), one record, none, records
 * larger than their address, and an index not built (every record searched). */
#include <stdlib.h>

#include "../check.h"
#include "base/addr_index.h"

struct rec {
	uint64_t addr;
	uint32_t value;
};

static void check_all(const struct adac_addr_index *x, const struct rec *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t k = adac_addr_index_find(x, r, n, sizeof *r, r[i].addr);
		CHECK(k != ADAC_ADDR_NONE && r[k].addr == r[i].addr && (k == 0 || r[k - 1].addr != r[i].addr));
		/* between this record and the next: none */
		if (i + 1 < n && r[i + 1].addr > r[i].addr + 1)
			CHECK(adac_addr_index_find(x, r, n, sizeof *r, r[i].addr + 1) == ADAC_ADDR_NONE);
	}
	if (n) {
		CHECK(adac_addr_index_find(x, r, n, sizeof *r, r[0].addr - 8) == ADAC_ADDR_NONE);
		CHECK(adac_addr_index_find(x, r, n, sizeof *r, r[n - 1].addr + 8) == ADAC_ADDR_NONE);
		CHECK(adac_addr_index_find(x, r, n, sizeof *r, UINT64_MAX) == ADAC_ADDR_NONE);
	}
	CHECK(adac_addr_index_find(x, r, n, sizeof *r, 0) == ADAC_ADDR_NONE);
}

int main(void)
{
	enum { N = 20000 };
	struct rec *r = calloc(N, sizeof *r);
	CHECK(r != NULL);
	if (!r)
		return check_report("addr_index");
	/* Two runs 1 TiB apart, objects 24 to 88 bytes apart, a pair at the same address (the first
	 * is found). */
	uint64_t a = 0x7f0000001000ull;
	for (size_t i = 0; i < N; i++) {
		if (i == N / 2)
			a += 1ull << 40;
		r[i].addr = a;
		r[i].value = (uint32_t)i;
		a += 24 + (i * 7919 % 9) * 8;
	}
	r[101].addr = r[100].addr;
	struct adac_addr_index x = {0};
	CHECK(adac_addr_index_build(&x, r, N, sizeof *r) == 0 && x.start != NULL);
	CHECK(x.buckets >= 2 && x.start[0] == 0 && x.start[x.buckets] == N);
	check_all(&x, r, N);
	CHECK(adac_addr_index_find(&x, r, N, sizeof *r, r[101].addr) == 100);

	/* Built again over fewer records: the old buckets go. */
	CHECK(adac_addr_index_build(&x, r, 1, sizeof *r) == 0 && x.start != NULL);
	check_all(&x, r, 1);
	CHECK(adac_addr_index_find(&x, r, 1, sizeof *r, r[2].addr) == ADAC_ADDR_NONE);

	/* No records: nothing is found, nothing is allocated. */
	CHECK(adac_addr_index_build(&x, r, 0, sizeof *r) == 0 && x.start == NULL);
	CHECK(adac_addr_index_find(&x, r, 0, sizeof *r, r[0].addr) == ADAC_ADDR_NONE);

	/* Not built (as after running out of memory): a binary search of every record. */
	adac_addr_index_free(&x);
	CHECK(x.start == NULL && x.buckets == 0);
	check_all(&x, r, N);
	free(r);
	return check_report("addr_index");
}
