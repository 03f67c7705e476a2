/* trie.h - a tree of label paths (labels: base/labels.h), each node counting the paths through it:
 * stacks grouped by their common frames (`ps --coalesce`, `pstacks`). */
#ifndef ADAC_TRIE_H
#define ADAC_TRIE_H

#include <stddef.h>
#include <stdint.h>

struct adac_trie_node {
	uint32_t label;
	uint32_t first_child, next_sibling;   /* 0: none (node 0 is the root) */
	uint32_t parent;
	uint64_t count;
};

struct adac_trie {
	struct adac_trie_node *n;
	size_t count, cap;
};

/* A trie with its root: 0, or -1 when out of memory. */
int adac_trie_init(struct adac_trie *t);
/* Child of `parent` with `label`, added when new; 0 when out of memory. */
uint32_t adac_trie_child(struct adac_trie *t, uint32_t parent, uint32_t label);
void adac_trie_free(struct adac_trie *t);

#endif
