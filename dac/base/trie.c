/* trie.c - see trie.h. */
#include "base/trie.h"

#include <stdlib.h>

int adac_trie_init(struct adac_trie *t)
{
	t->cap = 64;
	t->n = calloc(t->cap, sizeof *t->n);
	t->count = 1;
	return t->n ? 0 : -1;
}

uint32_t adac_trie_child(struct adac_trie *t, uint32_t parent, uint32_t label)
{
	for (uint32_t c = t->n[parent].first_child; c; c = t->n[c].next_sibling)
		if (t->n[c].label == label)
			return c;
	if (t->count == t->cap) {
		size_t cap = t->cap * 2;
		struct adac_trie_node *p = realloc(t->n, cap * sizeof *p);
		if (!p)
			return 0;
		t->n = p;
		t->cap = cap;
	}
	uint32_t id = (uint32_t)t->count++;
	t->n[id] = (struct adac_trie_node){.label = label, .next_sibling = t->n[parent].first_child, .parent = parent};
	t->n[parent].first_child = id;
	return id;
}

void adac_trie_free(struct adac_trie *t)
{
	free(t->n);
	t->n = NULL;
	t->count = t->cap = 0;
}
