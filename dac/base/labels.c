/* labels.c - see labels.h. */
#include "base/labels.h"

#include <stdlib.h>
#include <string.h>

uint64_t adac_text_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

uint32_t adac_label_id(struct adac_labels *l, const char *s)
{
	if ((l->count + 1) * 2 > l->nslots) {
		size_t n = l->nslots ? l->nslots * 2 : 256;
		uint32_t *slots = calloc(n, sizeof *slots);
		if (!slots)
			return UINT32_MAX;
		for (size_t i = 0; i < l->count; i++) {
			size_t j = adac_text_hash(l->text[i]) & (n - 1);
			while (slots[j])
				j = (j + 1) & (n - 1);
			slots[j] = (uint32_t)i + 1;
		}
		free(l->slots);
		l->slots = slots;
		l->nslots = n;
	}
	size_t j = adac_text_hash(s) & (l->nslots - 1);
	while (l->slots[j]) {
		if (strcmp(l->text[l->slots[j] - 1], s) == 0)
			return l->slots[j] - 1;
		j = (j + 1) & (l->nslots - 1);
	}
	if (l->count >= UINT32_MAX - 2)
		return UINT32_MAX;
	if (l->count == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		char **p = realloc(l->text, cap * sizeof *p);
		if (!p)
			return UINT32_MAX;
		l->text = p;
		l->cap = cap;
	}
	char *copy = strdup(s);
	if (!copy)
		return UINT32_MAX;
	l->text[l->count] = copy;
	l->slots[j] = (uint32_t)++l->count;
	return (uint32_t)l->count - 1;
}

void adac_labels_free(struct adac_labels *l)
{
	for (size_t i = 0; i < l->count; i++)
		free(l->text[i]);
	free(l->text);
	free(l->slots);
	memset(l, 0, sizeof *l);
}
