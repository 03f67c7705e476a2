/* fuzz_nibble.c - the nibble stream reader: any bytes, any mix of reads, never past the end. */
#include <stddef.h>
#include <stdint.h>

#include "code/nibble.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	/* The first byte chooses the reads (2 bits each, cycling). */
	uint8_t ops = data[0];
	struct adac_nibble_reader r;
	adac_nibble_init(&r, adac_cursor_make(data + 1, size - 1));
	for (unsigned i = 0; i < 4 * size + 8; i++) {
		int rc;
		uint32_t u;
		int32_t s;
		uint8_t n;
		switch ((ops >> (2 * (i & 3))) & 3) {
		case 0: rc = adac_nibble_u32(&r, &u); break;
		case 1: rc = adac_nibble_i32(&r, &s); break;
		case 2: rc = adac_nibble_unencoded_u32(&r, &u); break;
		default: rc = adac_nibble_read(&r, &n); break;
		}
		if (adac_nibble_byte_index(&r) > size - 1 || adac_nibble_left(&r) > 2 * (size - 1))
			__builtin_trap();
		if (rc != 0 && r.status == ADAC_NIBBLE_END && adac_nibble_left(&r) == 0)
			break;
	}
	return 0;
}
