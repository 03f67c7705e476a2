/* arena.h - memory handed out in order and taken back all at once: the arrays of many chains
 * resolved together (a batch of stacks, view/pending_list.c) without a malloc and a free each, on
 * whichever thread resolves them. */
#ifndef ADAC_ARENA_H
#define ADAC_ARENA_H

#include <stdbool.h>
#include <stddef.h>

struct adac_arena_block;

struct adac_arena {
	struct adac_arena_block *first, *cur;
};

/* len bytes, 64-byte aligned (a cache line), valid until the next reset; NULL when memory runs out. */
void *adac_arena_alloc(struct adac_arena *a, size_t len);
/* Whether p is in one of a's blocks. */
bool adac_arena_owns(const struct adac_arena *a, const void *p);
/* Takes back everything handed out; the blocks are kept for what comes next. */
void adac_arena_reset(struct adac_arena *a);
void adac_arena_free(struct adac_arena *a);

#endif
