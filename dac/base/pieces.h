/* pieces.h - arrays of records made in parts (one per part of a split heap walk, each in address
 * order) put end to end into one, moving their pages rather than copying them. */
#ifndef ADAC_PIECES_H
#define ADAC_PIECES_H

#include <stddef.h>

/* One part's array: count records used of cap allocated (malloc'd, freed by the gather). */
struct adac_piece {
	void *arr;
	size_t count, cap;
};

/* Puts the n pieces' records (of `elem` bytes) end to end into *arr, *count: the first non-empty
 * piece's array grown to hold them all (once: a block the moves have cut up grows only by a
 * copy). Frees the pieces, also when memory runs out (-1). */
int adac_pieces_gather(void **arr, size_t *count, const struct adac_piece *pieces, unsigned n, size_t elem);

#endif
