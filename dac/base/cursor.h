/* cursor.h - a bounded byte cursor: every decoder of untrusted bytes reads through one. */
#ifndef ADAC_CURSOR_H
#define ADAC_CURSOR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct adac_cursor {
	const uint8_t *p;
	const uint8_t *end;
};

static inline struct adac_cursor adac_cursor_make(const void *buf, size_t len)
{
	struct adac_cursor c = {(const uint8_t *)buf, (const uint8_t *)buf + len};
	return c;
}

static inline size_t adac_cursor_left(const struct adac_cursor *c) { return (size_t)(c->end - c->p); }

static inline int adac_cursor_need(const struct adac_cursor *c, size_t n) { return adac_cursor_left(c) >= n; }

/* Little-endian fixed-width reads; return 0 on success, -1 when the cursor is too short. */
#define ADAC_CURSOR_READER(name, type)                                      \
	static inline int adac_cursor_##name(struct adac_cursor *c, type *out) \
	{                                                                      \
		if (!adac_cursor_need(c, sizeof(type)))                            \
			return -1;                                                     \
		memcpy(out, c->p, sizeof(type));                                   \
		c->p += sizeof(type);                                              \
		return 0;                                                          \
	}
ADAC_CURSOR_READER(u8, uint8_t)
ADAC_CURSOR_READER(u16, uint16_t)
ADAC_CURSOR_READER(u32, uint32_t)
ADAC_CURSOR_READER(u64, uint64_t)
#undef ADAC_CURSOR_READER

static inline int adac_cursor_skip(struct adac_cursor *c, size_t n)
{
	if (!adac_cursor_need(c, n))
		return -1;
	c->p += n;
	return 0;
}

/* Field extraction from a buffer read whole (never cast target bytes to C structs). */
static inline uint8_t adac_get_u8(const uint8_t *b, size_t off) { return b[off]; }
static inline uint16_t adac_get_u16(const uint8_t *b, size_t off) { uint16_t v; memcpy(&v, b + off, 2); return v; }
static inline uint32_t adac_get_u32(const uint8_t *b, size_t off) { uint32_t v; memcpy(&v, b + off, 4); return v; }
static inline uint64_t adac_get_u64(const uint8_t *b, size_t off) { uint64_t v; memcpy(&v, b + off, 8); return v; }

#endif
