/* bytebuf.h - a growing little-endian byte buffer for the symbol-file writer: fixed-width
 * integers, LEB128, strings, and patching. A failed allocation or growth past
 * ADAC_MAX_SYMFILE_BYTES marks the buffer failed; the writer checks once, at the end. */
#ifndef ADAC_BYTEBUF_H
#define ADAC_BYTEBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"

struct adac_bytebuf {
	uint8_t *p;
	size_t len, cap;
	bool failed;
};

static inline bool adac_bytebuf_reserve(struct adac_bytebuf *b, size_t n)
{
	if (b->failed)
		return false;
	if (n > ADAC_MAX_SYMFILE_BYTES || b->len > ADAC_MAX_SYMFILE_BYTES - n) {
		b->failed = true;
		return false;
	}
	if (b->len + n <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + n)
		cap *= 2;
	uint8_t *p = realloc(b->p, cap);
	if (!p) {
		b->failed = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

static inline void adac_bytebuf_put(struct adac_bytebuf *b, const void *data, size_t n)
{
	if (n && adac_bytebuf_reserve(b, n)) {
		memcpy(b->p + b->len, data, n);
		b->len += n;
	}
}

static inline void adac_bytebuf_zeros(struct adac_bytebuf *b, size_t n)
{
	if (n && adac_bytebuf_reserve(b, n)) {
		memset(b->p + b->len, 0, n);
		b->len += n;
	}
}

/* Little-endian integer of `width` bytes (1..8). */
static inline void adac_bytebuf_uint(struct adac_bytebuf *b, uint64_t v, unsigned width)
{
	uint8_t t[8];
	for (unsigned i = 0; i < width; i++)
		t[i] = (uint8_t)(v >> (8 * i));
	adac_bytebuf_put(b, t, width);
}

static inline void adac_bytebuf_u8(struct adac_bytebuf *b, uint8_t v) { adac_bytebuf_uint(b, v, 1); }
static inline void adac_bytebuf_u16(struct adac_bytebuf *b, uint16_t v) { adac_bytebuf_uint(b, v, 2); }
static inline void adac_bytebuf_u32(struct adac_bytebuf *b, uint32_t v) { adac_bytebuf_uint(b, v, 4); }
static inline void adac_bytebuf_u64(struct adac_bytebuf *b, uint64_t v) { adac_bytebuf_uint(b, v, 8); }

static inline void adac_bytebuf_uleb(struct adac_bytebuf *b, uint64_t v)
{
	do {
		uint8_t byte = v & 0x7f;
		v >>= 7;
		adac_bytebuf_u8(b, (uint8_t)(byte | (v ? 0x80 : 0)));
	} while (v);
}

static inline void adac_bytebuf_sleb(struct adac_bytebuf *b, int64_t v)
{
	for (;;) {
		uint8_t byte = (uint8_t)(v & 0x7f);
		v >>= 7; /* arithmetic shift (gcc and clang) */
		bool done = (v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40));
		adac_bytebuf_u8(b, (uint8_t)(byte | (done ? 0 : 0x80)));
		if (done)
			return;
	}
}

/* A NUL-terminated string, NUL included. */
static inline void adac_bytebuf_str(struct adac_bytebuf *b, const char *s) { adac_bytebuf_put(b, s, strlen(s) + 1); }

static inline void adac_bytebuf_align(struct adac_bytebuf *b, size_t align)
{
	adac_bytebuf_zeros(b, (align - b->len % align) % align);
}

/* Overwrites `width` bytes at pos (already written) with v. */
static inline void adac_bytebuf_patch(struct adac_bytebuf *b, size_t pos, uint64_t v, unsigned width)
{
	if (b->failed || pos + width > b->len)
		return;
	for (unsigned i = 0; i < width; i++)
		b->p[pos + i] = (uint8_t)(v >> (8 * i));
}

static inline void adac_bytebuf_free(struct adac_bytebuf *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

#endif
