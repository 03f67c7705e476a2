/* labels.h - texts interned to ids: each distinct text kept once, as a listing of a million stacks
 * names a few dozen frames. */
#ifndef ADAC_LABELS_H
#define ADAC_LABELS_H

#include <stddef.h>
#include <stdint.h>

struct adac_labels {
	char **text;           /* by id */
	size_t count, cap;
	uint32_t *slots;       /* hash table of ids + 1 (0: empty) */
	size_t nslots;
};

/* The id of text s (a copy is added when it is new); UINT32_MAX when memory runs out. */
uint32_t adac_label_id(struct adac_labels *l, const char *s);
void adac_labels_free(struct adac_labels *l);

/* FNV-1a of a text, what the table hashes with. */
uint64_t adac_text_hash(const char *s);

#endif
