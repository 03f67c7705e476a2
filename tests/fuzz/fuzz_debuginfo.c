/* fuzz_debuginfo.c - the DebugInfo decoder on arbitrary blobs. The first byte selects the encoding
 * (bit 0: .NET 10, bit 1: flag byte, bit 2: x86); the rest is the blob. A decoded blob is dumped
 * and queried in full; measuring must agree with decoding. */
#include <stddef.h>
#include <stdint.h>

#include "asyncdac.h"
#include "code/debuginfo.h"
#include "view/debuginfo_view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void sink(void *ctx, const char *text, size_t len)
{
	(void)ctx;
	(void)text;
	(void)len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	struct adac_debuginfo_opts o;
	adac_debuginfo_opts_init(&o, data[0] & 1 ? ADAC_DEBUGINFO_FORMAT_NET10 : ADAC_DEBUGINFO_FORMAT_NET11,
	                         (data[0] & 2) != 0);
	o.x86 = (data[0] & 4) != 0;
	const uint8_t *blob = data + 1;
	size_t len = size - 1;
	struct adac_debug_info *di = NULL;
	struct adac_error err = {0};
	size_t total = 0, need = 0;
	struct adac_error merr = {0};
	int mrc = adac_debuginfo_measure(blob, len, &o, &total, &need, &merr);
	if (adac_debuginfo_decode_ex(blob, len, &o, &di, &err) == 0) {
		if (mrc != 0 || total != di->hdr.total_bytes || total > len)
			__builtin_trap();
		struct adac_out out = {.write = sink, .ctx = NULL};
		adac_debuginfo_dump(di, &out);
		for (uint32_t i = 0; i < di->num_bounds && i < 64; i++)
			(void)adac_debuginfo_il_offset(di, di->bounds[i].native_offset + (i & 1), NULL);
		for (uint32_t s = 0; s <= di->num_suspension_points && s < 64; s++) {
			const struct adac_suspension_point *sp = adac_debuginfo_suspension_point(di, s);
			if (sp)
				for (uint32_t v = 0; v < sp->num_vars; v++)
					(void)sp->vars[v].offset;
		}
		adac_debuginfo_free(di);
	} else if (err.code == 0 || err.msg[0] == '\0') {
		__builtin_trap(); /* a failure always says why */
	}
	return 0;
}
