/* arena.c - blocks handed out in order, reset whole. */
#include "base/arena.h"

#include <stdint.h>
#include <stdlib.h>

#define ARENA_BLOCK (256u << 10) /* bytes of a block, unless one allocation needs more */
#define ARENA_ALIGN 64u          /* a cache line: what one thread writes and another reads (frames)
                                  * shares no line with what comes next */

struct adac_arena_block {
	struct adac_arena_block *next;
	size_t size, used;
	_Alignas(ARENA_ALIGN) unsigned char data[];
};

void *adac_arena_alloc(struct adac_arena *a, size_t len)
{
	if (len > SIZE_MAX / 2)
		return NULL;
	len = len ? (len + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1) : ARENA_ALIGN;
	/* The current block, else a kept one after it (a reset arena reuses them in order). */
	for (struct adac_arena_block *b = a->cur; b; b = b->next) {
		if (b->size - b->used >= len) {
			a->cur = b;
			void *p = b->data + b->used;
			b->used += len;
			return p;
		}
	}
	size_t size = len > ARENA_BLOCK ? len : ARENA_BLOCK;
	struct adac_arena_block *n = aligned_alloc(ARENA_ALIGN, sizeof *n + size);
	if (!n)
		return NULL;
	n->size = size;
	n->used = len;
	/* Right after the current block: every block before it stays in use until the reset. */
	if (a->cur) {
		n->next = a->cur->next;
		a->cur->next = n;
	} else {
		n->next = a->first;
		a->first = n;
	}
	a->cur = n;
	return n->data;
}

bool adac_arena_owns(const struct adac_arena *a, const void *p)
{
	const unsigned char *c = p;
	for (const struct adac_arena_block *b = a->first; b; b = b->next)
		if (c >= b->data && c < b->data + b->size)
			return true;
	return false;
}

void adac_arena_reset(struct adac_arena *a)
{
	for (struct adac_arena_block *b = a->first; b; b = b->next)
		b->used = 0;
	a->cur = a->first;
}

void adac_arena_free(struct adac_arena *a)
{
	for (struct adac_arena_block *b = a->first, *n; b; b = n) {
		n = b->next;
		free(b);
	}
	a->first = a->cur = NULL;
}
