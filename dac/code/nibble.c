/* nibble.c - nibble stream reader (NibbleReader of inc/nibblestream.h) over a bounded cursor. */
#include "code/nibble.h"

void adac_nibble_init(struct adac_nibble_reader *r, struct adac_cursor c)
{
	r->base = c.p;
	r->len = adac_cursor_left(&c);
	r->pos = 0;
	r->status = ADAC_NIBBLE_OK;
}

int adac_nibble_read(struct adac_nibble_reader *r, uint8_t *nibble)
{
	if (r->pos / 2 >= r->len) {
		r->status = ADAC_NIBBLE_END;
		return -1;
	}
	uint8_t b = r->base[r->pos / 2];
	*nibble = (r->pos & 1) ? (uint8_t)(b >> 4) : (uint8_t)(b & 0xf);
	r->pos++;
	return 0;
}

int adac_nibble_u32(struct adac_nibble_reader *r, uint32_t *out)
{
	size_t start = r->pos;
	uint64_t v = 0;
	uint8_t n;
	unsigned count = 0;
	do {
		if (count == ADAC_NIBBLE_MAX_U32_NIBBLES) {
			r->status = ADAC_NIBBLE_OVERLONG;
			r->pos = start;
			return -1;
		}
		if (adac_nibble_read(r, &n) != 0) {
			r->pos = start;
			return -1;
		}
		v = (v << 3) | (n & 7u);
		count++;
	} while (n & 8u);
	if (v > UINT32_MAX) {
		r->status = ADAC_NIBBLE_OVERLONG;
		r->pos = start;
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

int adac_nibble_i32(struct adac_nibble_reader *r, int32_t *out)
{
	uint32_t u;
	if (adac_nibble_u32(r, &u) != 0)
		return -1;
	/* (|x| << 1) | sign; the writer's `-x` of INT32_MIN is not representable and never written. */
	int32_t x = (int32_t)(u >> 1);
	*out = (u & 1) ? -x : x;
	return 0;
}

int adac_nibble_unencoded_u32(struct adac_nibble_reader *r, uint32_t *out)
{
	if (adac_nibble_left(r) < 8) {
		r->status = ADAC_NIBBLE_END;
		return -1;
	}
	uint32_t v = 0;
	for (unsigned i = 0; i < 8; i++) {
		uint8_t n = 0;
		(void)adac_nibble_read(r, &n);
		v |= (uint32_t)n << (4 * i);
	}
	*out = v;
	return 0;
}

const char *adac_nibble_why(const struct adac_nibble_reader *r)
{
	return r->status == ADAC_NIBBLE_OVERLONG ? "value wider than 32 bits" : "truncated";
}
