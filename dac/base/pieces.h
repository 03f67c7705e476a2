/* pieces.h - arrays of records made in parts (one per part of a split heap walk, each in address
 * order) put end to end into one, moving their pages rather than copying them. */
#ifndef ADAC_PIECES_H
#define ADAC_PIECES_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One part's array: count records used of cap allocated (malloc'd, freed by the gather). */
struct adac_piece {
	void *arr;
	size_t count, cap;
};

/* Puts the n pieces' records (of `elem` bytes) end to end into *arr, *count: the first non-empty
 * piece's array grown to hold them all (once: a block the moves have cut up grows only by a
 * copy). Frees the pieces, also when memory runs out (-1). */
int adac_pieces_gather(void **arr, size_t *count, const struct adac_piece *pieces, unsigned n, size_t elem);

/* The parts add what they keep to a count they share (for a cap) in steps of this many: an atomic
 * add for each record would move the count's cache line between the parts' CPUs at every one. */
#define ADAC_PIECE_STEP 1024u

/* Whether a part that kept `count` records may keep one more under `cap` records for all parts,
 * *all counting them in steps (never more than were kept): the walk ends at most a step per part
 * past the cap. */
static inline bool adac_piece_under_cap(atomic_size_t *all, size_t count, uint64_t cap)
{
	return (count + 1) % ADAC_PIECE_STEP ||
	       atomic_fetch_add_explicit(all, ADAC_PIECE_STEP, memory_order_relaxed) + ADAC_PIECE_STEP <= cap;
}

#endif
