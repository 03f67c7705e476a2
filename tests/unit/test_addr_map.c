/* test_addr_map.c - the address-keyed hash table (dac/base/addr_map.c): records added zero-filled but
 * for their key and found again across many growths, keys that collide in the low bits, key 0,
 * every record visited once through the slots, room reserved up front, and freeing. */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "base/addr_map.h"

struct rec {
	uint64_t key;
	uint32_t value;
	uint8_t pad[20];
};

int main(void)
{
	struct adac_addr_map m = {0};
	bool added = true;
	CHECK(adac_addr_map_find(&m, 0x1000) == NULL);
	CHECK(adac_addr_map_get(&m, 0, sizeof(struct rec), &added) == NULL && !added);

	/* 5,000 keys 4 KiB apart (equal low bits), plus their neighbours 8 bytes on. */
	enum { N = 5000 };
	for (uint32_t i = 0; i < N; i++) {
		for (uint64_t d = 0; d <= 8; d += 8) {
			uint64_t key = 0x7f0000000000ull + (uint64_t)i * 4096 + d;
			struct rec *r = adac_addr_map_get(&m, key, sizeof *r, &added);
			CHECK(r != NULL && added && r->key == key && r->value == 0);
			static const uint8_t zero[20];
			CHECK(r != NULL && memcmp(r->pad, zero, sizeof zero) == 0);
			if (r)
				r->value = i * 2 + (uint32_t)(d / 8);
		}
	}
	CHECK(m.used == 2 * N && m.cap >= 4 * N && (m.cap & (m.cap - 1)) == 0);
	for (uint32_t i = 0; i < N; i++) {
		uint64_t key = 0x7f0000000000ull + (uint64_t)i * 4096;
		struct rec *r = adac_addr_map_find(&m, key);
		CHECK(r != NULL && r->key == key && r->value == i * 2);
		struct rec *again = adac_addr_map_get(&m, key + 8, sizeof *again, &added);
		CHECK(again != NULL && !added && again->value == i * 2 + 1);
	}
	CHECK(adac_addr_map_find(&m, 0x7f0000000000ull + 4) == NULL);
	CHECK(adac_addr_map_find(&m, 0) == NULL);

	/* Every record once through the slots. */
	size_t seen = 0;
	uint64_t sum = 0;
	for (size_t i = 0; i < m.cap; i++) {
		struct rec *r = adac_addr_map_slot(&m, i);
		if (r) {
			seen++;
			sum += r->value;
		}
	}
	CHECK(seen == 2 * N && sum == (uint64_t)(2 * N - 1) * (2 * N) / 2);

	/* Reserving room keeps the records, and the map then takes that many without moving them. */
	CHECK(adac_addr_map_reserve(&m, 3 * N, sizeof(struct rec)) == 0);
	unsigned char *slots = m.slots;
	size_t cap = m.cap;
	CHECK(cap >= 2 * (3 * N + 1) && (cap & (cap - 1)) == 0);
	for (uint32_t i = 0; i < N; i++) {
		struct rec *r = adac_addr_map_find(&m, 0x7f0000000000ull + (uint64_t)i * 4096 + 8);
		CHECK(r != NULL && r->value == i * 2 + 1);
		r = adac_addr_map_get(&m, 0x7f0000000000ull + (uint64_t)i * 4096 + 16, sizeof *r, &added);
		CHECK(r != NULL && added);
	}
	CHECK(m.slots == slots && m.cap == cap && m.used == 3 * N);
	CHECK(adac_addr_map_reserve(&m, N, sizeof(struct rec)) == 0 && m.slots == slots && m.cap == cap);

	adac_addr_map_free(&m);
	CHECK(m.slots == NULL && m.cap == 0 && m.used == 0);
	CHECK(adac_addr_map_find(&m, 0x7f0000000000ull) == NULL);

	/* Reserved while empty: the first records go in without growing. */
	CHECK(adac_addr_map_reserve(&m, 100, sizeof(struct rec)) == 0 && m.cap == 256 && m.used == 0);
	for (uint64_t k = 1; k <= 100; k++)
		CHECK(adac_addr_map_get(&m, k * 8, sizeof(struct rec), NULL) != NULL);
	CHECK(m.cap == 256 && m.used == 100);
	adac_addr_map_free(&m);
	return check_report("addr_map");
}
