/* fuzz_pe_image.c - PE headers and the debug directory (target/pe_image.c) on arbitrary bytes, read
 * as a file and as a mapped image: the identity asyncdac takes from a core's copy of an assembly. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "target/pe_image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct bytes {
	const uint8_t *data;
	size_t size;
};

static int read_bytes(void *ctx, uint64_t off, void *buf, size_t len, struct adac_error *err)
{
	const struct bytes *b = ctx;
	if (off > b->size || len > b->size - off)
		return adac_fail(err, ADAC_E_READ, off, "past the end");
	memcpy(buf, b->data + off, len);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bytes b = {data, size};
	for (int mapped = 0; mapped < 2; mapped++) {
		struct adac_pe_reader r = {read_bytes, &b, mapped != 0, "fuzz"};
		struct adac_pe_headers h;
		struct adac_pe_debug d;
		struct adac_error err = {0};
		if (adac_pe_read_headers(&r, &h, &err) != 0) {
			if (err.code == 0)
				__builtin_trap();
			continue;
		}
		if (h.nsections > sizeof h.sections / sizeof h.sections[0])
			__builtin_trap();
		if (adac_pe_debug_info(&r, &h, &d, &err) != 0 && err.code == 0)
			__builtin_trap();
		if (d.has_codeview && strlen(d.pdb_name) >= sizeof d.pdb_name)
			__builtin_trap();
		uint64_t off;
		(void)adac_pe_rva_to_offset(&h, mapped != 0, h.debug_rva, h.debug_size, &off);
	}
	return 0;
}
