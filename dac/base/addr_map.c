/* addr_map.c - open-addressing hash table of records keyed by a target address (linear probing,
 * grown to keep it at most half full). */
#include "base/addr_map.h"

#include <stdlib.h>
#include <string.h>

static size_t mix(uint64_t v) { return (size_t)((v >> 3) * 0x9E3779B97F4A7C15ull); }

static uint64_t key_of(const unsigned char *rec)
{
	uint64_t k;
	memcpy(&k, rec, sizeof k);
	return k;
}

/* The slot of key, or the empty slot where it would go. */
static unsigned char *probe(unsigned char *slots, size_t cap, size_t size, uint64_t key)
{
	size_t j = mix(key) & (cap - 1);
	for (;;) {
		unsigned char *rec = slots + j * size;
		uint64_t k = key_of(rec);
		if (k == key || k == 0)
			return rec;
		j = (j + 1) & (cap - 1);
	}
}

/* Moves every record into a table of cap slots (a power of two, more than used). */
static int rehash(struct adac_addr_map *m, size_t cap)
{
	unsigned char *slots = calloc(cap, m->size);
	if (!slots)
		return -1;
	for (size_t i = 0; i < m->cap; i++) {
		const unsigned char *rec = m->slots + i * m->size;
		uint64_t k = key_of(rec);
		if (k)
			memcpy(probe(slots, cap, m->size, k), rec, m->size);
	}
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return 0;
}

static int grow(struct adac_addr_map *m) { return rehash(m, m->cap ? m->cap * 2 : 64); }

int adac_addr_map_reserve(struct adac_addr_map *m, size_t n, size_t record_size)
{
	size_t cap = m->cap ? m->cap : 64;
	while (cap / 2 < n + 1) {
		if (cap > SIZE_MAX / 2 / record_size)
			return -1;
		cap *= 2;
	}
	m->size = record_size;
	return cap == m->cap ? 0 : rehash(m, cap);
}

void *adac_addr_map_get(struct adac_addr_map *m, uint64_t key, size_t record_size, bool *added)
{
	if (added)
		*added = false;
	if (key == 0)
		return NULL;
	m->size = record_size;
	if ((m->used + 1) * 2 > m->cap && grow(m) != 0)
		return NULL;
	unsigned char *rec = probe(m->slots, m->cap, m->size, key);
	if (key_of(rec) == 0) {
		memcpy(rec, &key, sizeof key);
		m->used++;
		if (added)
			*added = true;
	}
	return rec;
}

void *adac_addr_map_find(const struct adac_addr_map *m, uint64_t key)
{
	if (key == 0 || m->cap == 0)
		return NULL;
	unsigned char *rec = probe(m->slots, m->cap, m->size, key);
	return key_of(rec) ? rec : NULL;
}

void *adac_addr_map_slot(const struct adac_addr_map *m, size_t i)
{
	unsigned char *rec = m->slots + i * m->size;
	return key_of(rec) ? rec : NULL;
}

void adac_addr_map_free(struct adac_addr_map *m)
{
	free(m->slots);
	memset(m, 0, sizeof *m);
}
