/* nibble.h - the runtime's nibble stream (inc/nibblestream.h) read over a bounded cursor.
 *
 * Each byte holds two nibbles, the low one first. An encoded U32 is a run of nibbles carrying 3
 * value bits each, most-significant group first; bit 3 set means another nibble follows. An I32
 * is a U32 holding (|x| << 1) | sign. Every read fails cleanly (-1, nothing consumed past the end)
 * when the data runs out or a value does not fit in 32 bits; callers turn that into ADAC_E_CORRUPT
 * naming what they were reading. */
#ifndef ADAC_NIBBLE_H
#define ADAC_NIBBLE_H

#include <stddef.h>
#include <stdint.h>

#include "base/cursor.h"

/* An encoded U32 never needs more than 11 nibbles (33 bits). */
#define ADAC_NIBBLE_MAX_U32_NIBBLES 11u

enum adac_nibble_status {
	ADAC_NIBBLE_OK = 0,
	ADAC_NIBBLE_END,      /* ran past the end of the data */
	ADAC_NIBBLE_OVERLONG, /* more than 11 nibbles, or a value wider than 32 bits */
};

struct adac_nibble_reader {
	const uint8_t *base;
	size_t len;                     /* bytes */
	size_t pos;                     /* nibbles consumed */
	enum adac_nibble_status status; /* why the last failed read failed */
};

/* Reads the bytes between c.p and c.end (the cursor itself is not advanced). */
void adac_nibble_init(struct adac_nibble_reader *r, struct adac_cursor c);

int adac_nibble_read(struct adac_nibble_reader *r, uint8_t *nibble);
int adac_nibble_u32(struct adac_nibble_reader *r, uint32_t *out);
int adac_nibble_i32(struct adac_nibble_reader *r, int32_t *out);
/* WriteUnencodedU32: 8 nibbles, least-significant first. */
int adac_nibble_unencoded_u32(struct adac_nibble_reader *r, uint32_t *out);

/* Index of the first byte not touched by the nibbles read so far ((nibbles + 1) / 2): where
 * byte-aligned data embedded after the nibbles starts. */
static inline size_t adac_nibble_byte_index(const struct adac_nibble_reader *r) { return (r->pos + 1) / 2; }

/* Nibbles left before the end of the data. */
static inline size_t adac_nibble_left(const struct adac_nibble_reader *r) { return r->len * 2 - r->pos; }

/* "truncated" or "value wider than 32 bits": the reason of the last failure, for messages. */
const char *adac_nibble_why(const struct adac_nibble_reader *r);

#endif
