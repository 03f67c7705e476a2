/* addr_map.h - an open-addressing hash table of fixed-size records keyed by a nonzero 64-bit value
 * (a target address) kept in each record's first 8 bytes: the per-address facts gathered while
 * reading the target (MethodTables met on the heap, regions visited, debug info decoded, ...). */
#ifndef ADAC_ADDR_MAP_H
#define ADAC_ADDR_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Zero-initialise; the first adac_addr_map_get sets the record size. */
struct adac_addr_map {
	unsigned char *slots;   /* cap records; a record whose key is 0 is an empty slot */
	size_t size;            /* bytes per record */
	size_t cap, used;       /* cap: 0 or a power of two, at least twice used */
};

/* The record of `key` (nonzero): the one in the map, or a new one, zero-filled but for its key
 * (*added tells which; added may be NULL). record_size (at least 8, the key first) is the same on
 * every call. NULL when key is 0 or memory runs out. Adding a record may move every record. */
void *adac_addr_map_get(struct adac_addr_map *m, uint64_t key, size_t record_size, bool *added);
/* Room for n records without growing (a map about to take many: growing moves every record):
 * 0, or -1 when memory runs out (the map is unchanged). */
int adac_addr_map_reserve(struct adac_addr_map *m, size_t n, size_t record_size);
/* The record of `key`, NULL when there is none. */
void *adac_addr_map_find(const struct adac_addr_map *m, uint64_t key);
/* Slot i (0 <= i < m->cap): its record, NULL when the slot is empty; for visiting every record. */
void *adac_addr_map_slot(const struct adac_addr_map *m, size_t i);
void adac_addr_map_free(struct adac_addr_map *m);

#endif
