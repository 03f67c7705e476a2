/* debuginfo.c - DebugInfo contract: decodes the runtime's compressed per-method debug info.
 *
 * Encodings (nibble streams, see nibble.h), as the runtimes write them (vm/debuginfostore.cpp)
 * and the cDAC reads them (DebugInfo_1.cs, DebugInfo_2.cs, DebugInfoHelpers.cs, DebugInfo.md):
 *
 * .NET 11 (DebugInfo contract "c1"; "2" while in development):
 *   header  U32 first; 0 = fat: U32 cbBounds, cbVars, cbUninstrumentedBounds, cbPatchpointInfo,
 *           cbRichDebugInfo, cbAsyncInfo; else thin: first = cbBounds, then U32 cbVars.
 *           The chunks follow at the header's next byte index, in that order, each a separately
 *           flushed stream (so byte aligned).
 *   bounds  U32 count, U32 nativeDeltaBits-1, U32 ilBits-1, then from the next byte boundary a
 *           little-endian bit stream of count entries, low bits first:
 *           [3 source flag bits: CALL_INSTRUCTION 1, STACK_EMPTY 2, ASYNC 4][native offset delta]
 *           [ilOffset - MAX_MAPPING_VALUE (-3)].
 *   vars    U32 count; per var: U32 varNumber - MAX_ILNUM (-6), U32 start, then U32 end - start, or
 *           for CALL_RETURN_ILNUM (-5) U32 callReturnValueILOffset (end = start + 1); U32
 *           VarLocType; payload (table below).
 *   async   U32 NumSuspensionPoints, U32 total var count; per point I32 DiagnosticNativeOffset delta
 *           from the previous point (first from 0), U32 NumContinuationVars; then the flat var list
 *           in point order: U32 VarNumber - MAX_ILNUM, U32 Offset (absolute, from the object).
 *   uninstrumented bounds (same encoding as bounds), patchpoint info (raw struct) and rich debug
 *   info are size-checked and skipped.
 *
 * .NET 10 (no DebugInfo contract in the 10.0 descriptor; cDAC DebugInfo_1):
 *   [flag byte: 1 = PatchpointInfo follows (raw, size from its local count), 2 = u32 size + rich
 *   info follow] then U32 cbBounds (0xFFFFFFFF: U32 cbBounds, U32 cbUninstrumentedBounds), U32
 *   cbVars; chunks bounds, uninstrumented bounds, vars. Bounds as above with 2 enumerated source
 *   bits (0 none, 1 CALL_INSTRUCTION, 2 STACK_EMPTY, 3 both), which map onto the same flags.
 *   Vars: U32 start, U32 end - start, U32 varNumber - MAX_ILNUM (-4), U32 VarLocType, payload.
 *
 * Var payloads (registers U32, stack offsets I32, stored divided by 4 on x86):
 *   REG, REG_BYREF, REG_FP: reg | STK, STK_BYREF, STK2: baseReg, off | REG_REG: reg1, reg2 |
 *   REG_STK: reg, baseReg, off | STK_REG: off, baseReg, reg | FPSTK, FIXED_VA: U32 | COUNT,
 *   INVALID: nothing. */
#include "code/debuginfo.h"

#include <stdlib.h>
#include <string.h>

#include "base/addr_map.h"
#include "base/cursor.h"
#include "base/limits.h"
#include "code/execution_manager.h"
#include "code/nibble.h"
#include "runtime/descriptor.h"
#include "runtime/runtime.h"

#define FAT_MARKER 0u                      /* .NET 11: first header U32 of a fat header */
#define NET10_HAS_UNINSTRUMENTED 0xffffffffu /* .NET 10: first header U32 before the two sizes */
#define NET10_FLAG_PATCHPOINT 0x1u
#define NET10_FLAG_RICH 0x2u
#define IL_BIAS 0xfffffffdu                /* MAX_MAPPING_VALUE (-3) */

/* ------------------------------------------------------------------------------------------------
 * Decoding from host memory
 * ---------------------------------------------------------------------------------------------- */

struct chunk {
	const char *name;
	const uint8_t *p;
	uint32_t len;
};

static int nib_fail(struct adac_nibble_reader *r, const struct chunk *c, const char *what, struct adac_error *err)
{
	return adac_fail(err, ADAC_E_CORRUPT, 0, "debug info %s chunk: %s: %s (%u bytes)", c->name, what,
	                 adac_nibble_why(r), c->len);
}

#define READ_U32(r, c, v, what)                                  \
	do {                                                         \
		if (adac_nibble_u32((r), (v)) != 0)                      \
			return nib_fail((r), (c), (what), err);              \
	} while (0)
#define READ_I32(r, c, v, what)                                  \
	do {                                                         \
		if (adac_nibble_i32((r), (v)) != 0)                      \
			return nib_fail((r), (c), (what), err);              \
	} while (0)

/* A count read from a chunk: it must fit in what is left of the chunk (each item needs at least
 * `min_nibbles` nibbles), then under the cap. */
static int check_count(struct adac_nibble_reader *r, const struct chunk *c, uint32_t count, size_t min_nibbles,
                       const char *what, struct adac_error *err)
{
	if ((uint64_t)count * min_nibbles > adac_nibble_left(r))
		return adac_fail(err, ADAC_E_CORRUPT, 0,
		                 "debug info %s chunk: %s %u does not fit in its %u bytes", c->name, what, count, c->len);
	if (count > ADAC_MAX_NIBBLE_ENTRIES)
		return adac_fail(err, ADAC_E_LIMIT, 0, "debug info %s chunk: %s %u exceeds ADAC_MAX_NIBBLE_ENTRIES (%u)",
		                 c->name, what, count, ADAC_MAX_NIBBLE_ENTRIES);
	return 0;
}

static void *alloc_array(size_t n, size_t size, struct adac_error *err)
{
	void *p = calloc(n ? n : 1, size);
	if (!p)
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for %zu debug-info entries", n);
	return p;
}

static int decode_bounds(const struct chunk *c, unsigned src_bits, struct adac_debug_info *di, struct adac_error *err)
{
	struct adac_nibble_reader r;
	adac_nibble_init(&r, adac_cursor_make(c->p, c->len));
	uint32_t count, nbits, ibits;
	READ_U32(&r, c, &count, "entry count");
	READ_U32(&r, c, &nbits, "native delta bit count");
	READ_U32(&r, c, &ibits, "IL offset bit count");
	if (nbits >= 32 || ibits >= 32)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "debug info %s chunk: %u native delta bits and %u IL offset bits "
		                 "(at most 32 each)", c->name, nbits + 1, ibits + 1);
	nbits++;
	ibits++;
	unsigned bpe = src_bits + nbits + ibits;
	if (bpe > 64)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "debug info %s chunk: %u bits per entry (more than 64)", c->name,
		                 bpe);
	size_t start = adac_nibble_byte_index(&r);
	uint64_t avail_bits = (uint64_t)(c->len - start) * 8;
	if ((uint64_t)count * bpe > avail_bits)
		return adac_fail(err, ADAC_E_CORRUPT, 0,
		                 "debug info %s chunk: %u entries of %u bits do not fit in its %u bytes", c->name, count, bpe,
		                 c->len);
	if (count > ADAC_MAX_NIBBLE_ENTRIES)
		return adac_fail(err, ADAC_E_LIMIT, 0, "debug info %s chunk: %u entries exceed ADAC_MAX_NIBBLE_ENTRIES (%u)",
		                 c->name, count, ADAC_MAX_NIBBLE_ENTRIES);
	struct adac_bound *b = alloc_array(count, sizeof *b, err);
	if (!b)
		return -1;
	const uint8_t *bits = c->p + start;
	uint64_t bit = 0;
	uint64_t native = 0;
	for (uint32_t i = 0; i < count; i++) {
		uint64_t v = 0;
		unsigned got = 0;
		while (got < bpe) {
			unsigned off = (unsigned)(bit & 7);
			unsigned take = 8 - off < bpe - got ? 8 - off : bpe - got;
			uint64_t part = ((uint64_t)bits[bit >> 3] >> off) & ((1u << take) - 1);
			v |= part << got;
			got += take;
			bit += take;
		}
		/* Both encodings map onto bit0 CALL_INSTRUCTION, bit1 STACK_EMPTY, bit2 ASYNC: the 2-bit
		 * enumeration (1, 2, 3 = both) happens to coincide with the flags. */
		b[i].source = (uint32_t)(v & ((1u << src_bits) - 1));
		v >>= src_bits;
		native += v & ((1ull << nbits) - 1);
		v >>= nbits;
		if (native > UINT32_MAX) {
			free(b);
			return adac_fail(err, ADAC_E_CORRUPT, 0, "debug info %s chunk: entry %u: native offset overflows 32 bits",
			                 c->name, i);
		}
		b[i].native_offset = (uint32_t)native;
		b[i].il_offset = (uint32_t)v + IL_BIAS;
	}
	di->bounds = b;
	di->num_bounds = count;
	return 0;
}

static int decode_stack_offset(struct adac_nibble_reader *r, const struct chunk *c, bool x86, int32_t *out,
                               struct adac_error *err)
{
	int32_t v;
	READ_I32(r, c, &v, "stack offset");
	if (x86) {
		if (v > INT32_MAX / 4 || v < INT32_MIN / 4)
			return adac_fail(err, ADAC_E_CORRUPT, 0, "debug info %s chunk: stack offset %d overflows", c->name, v);
		v *= 4;
	}
	*out = v;
	return 0;
}

static int decode_varloc(struct adac_nibble_reader *r, const struct chunk *c, bool x86, struct adac_native_var *v,
                         struct adac_error *err)
{
	uint32_t u[3];
	switch (v->loc_type) {
	case ADAC_VLT_REG:
	case ADAC_VLT_REG_FP:
	case ADAC_VLT_REG_BYREF:
	case ADAC_VLT_FPSTK:
	case ADAC_VLT_FIXED_VA:
		READ_U32(r, c, &u[0], "var location");
		v->loc[0] = (int32_t)u[0];
		return 0;
	case ADAC_VLT_STK:
	case ADAC_VLT_STK_BYREF:
	case ADAC_VLT_STK2:
		READ_U32(r, c, &u[0], "var base register");
		v->loc[0] = (int32_t)u[0];
		return decode_stack_offset(r, c, x86, &v->loc[1], err);
	case ADAC_VLT_REG_REG:
		READ_U32(r, c, &u[0], "var register");
		READ_U32(r, c, &u[1], "var register");
		v->loc[0] = (int32_t)u[0];
		v->loc[1] = (int32_t)u[1];
		return 0;
	case ADAC_VLT_REG_STK:
		READ_U32(r, c, &u[0], "var register");
		READ_U32(r, c, &u[1], "var base register");
		v->loc[0] = (int32_t)u[0];
		v->loc[1] = (int32_t)u[1];
		return decode_stack_offset(r, c, x86, &v->loc[2], err);
	case ADAC_VLT_STK_REG:
		if (decode_stack_offset(r, c, x86, &v->loc[0], err) != 0)
			return -1;
		READ_U32(r, c, &u[1], "var base register");
		READ_U32(r, c, &u[2], "var register");
		v->loc[1] = (int32_t)u[1];
		v->loc[2] = (int32_t)u[2];
		return 0;
	case ADAC_VLT_COUNT:
	case ADAC_VLT_INVALID:
		return 0; /* no payload (the cDAC skips such entries; they are kept here) */
	default:
		return adac_fail(err, ADAC_E_CORRUPT, 0, "debug info %s chunk: unknown VarLocType %u", c->name, v->loc_type);
	}
}

static int decode_vars(const struct chunk *c, const struct adac_debuginfo_opts *o, struct adac_debug_info *di,
                       struct adac_error *err)
{
	struct adac_nibble_reader r;
	adac_nibble_init(&r, adac_cursor_make(c->p, c->len));
	uint32_t count;
	READ_U32(&r, c, &count, "var count");
	if (check_count(&r, c, count, 4, "var count", err) != 0) /* >= 4 U32s per var */
		return -1;
	struct adac_native_var *vars = alloc_array(count, sizeof *vars, err);
	if (!vars)
		return -1;
	di->vars = vars;
	di->num_vars = count;
	bool net11 = o->format == ADAC_DEBUGINFO_FORMAT_NET11;
	uint32_t bias = (uint32_t)(net11 ? ADAC_MAX_ILNUM_NET11 : ADAC_MAX_ILNUM_NET10);
	for (uint32_t i = 0; i < count; i++) {
		struct adac_native_var *v = &vars[i];
		uint32_t num, start, span;
		if (net11) {
			READ_U32(&r, c, &num, "var number");
			READ_U32(&r, c, &start, "var start offset");
			v->var_number = (int32_t)(num + bias);
			if (v->var_number == ADAC_ILNUM_CALL_RETURN) {
				READ_U32(&r, c, &v->call_il_offset, "call IL offset");
				span = 1;
			} else {
				READ_U32(&r, c, &span, "var end offset");
			}
		} else {
			READ_U32(&r, c, &start, "var start offset");
			READ_U32(&r, c, &span, "var end offset");
			READ_U32(&r, c, &num, "var number");
			v->var_number = (int32_t)(num + bias);
		}
		if (span > UINT32_MAX - start)
			return adac_fail(err, ADAC_E_CORRUPT, 0, "debug info %s chunk: var %u: end offset overflows", c->name, i);
		v->start_offset = start;
		v->end_offset = start + span;
		READ_U32(&r, c, &v->loc_type, "var location type");
		if (decode_varloc(&r, c, o->x86, v, err) != 0)
			return -1;
	}
	return 0;
}

static int decode_async(const struct chunk *c, struct adac_debug_info *di, struct adac_error *err)
{
	struct adac_nibble_reader r;
	adac_nibble_init(&r, adac_cursor_make(c->p, c->len));
	uint32_t nsp, nvars;
	READ_U32(&r, c, &nsp, "suspension point count");
	READ_U32(&r, c, &nvars, "var count");
	if (check_count(&r, c, nsp, 2, "suspension point count", err) != 0)
		return -1;
	if (check_count(&r, c, nvars, 2, "var count", err) != 0)
		return -1;
	struct adac_suspension_point *sp = alloc_array(nsp, sizeof *sp, err);
	if (!sp)
		return -1;
	di->suspension_points = sp;
	di->num_suspension_points = nsp;
	int64_t native = 0;
	uint64_t sum = 0;
	for (uint32_t i = 0; i < nsp; i++) {
		int32_t delta;
		READ_I32(&r, c, &delta, "suspension point native offset");
		native += delta;
		if (native < 0 || native > UINT32_MAX)
			return adac_fail(err, ADAC_E_CORRUPT, 0,
			                 "debug info %s chunk: suspension point %u: native offset %lld out of range", c->name, i,
			                 (long long)native);
		sp[i].diagnostic_native_offset = (uint32_t)native;
		READ_U32(&r, c, &sp[i].num_vars, "suspension point var count");
		sum += sp[i].num_vars;
	}
	/* The total is "informational" for the cDAC; the writer emits the length of the array the
	 * per-point counts partition, so a mismatch means the chunk is not what we think it is. */
	if (sum != nvars)
		return adac_fail(err, ADAC_E_CORRUPT, 0,
		                 "debug info %s chunk: suspension points hold %llu vars, the chunk header says %u", c->name,
		                 (unsigned long long)sum, nvars);
	struct adac_async_var *av = alloc_array(nvars, sizeof *av, err);
	if (!av)
		return -1;
	di->async_vars = av;
	di->num_async_vars = nvars;
	for (uint32_t i = 0; i < nvars; i++) {
		uint32_t num;
		READ_U32(&r, c, &num, "continuation var number");
		av[i].var_number = (int32_t)(num + (uint32_t)ADAC_MAX_ILNUM_NET11);
		READ_U32(&r, c, &av[i].offset, "continuation var offset");
	}
	uint32_t at = 0;
	for (uint32_t i = 0; i < nsp; i++) {
		sp[i].vars = av + at;
		at += sp[i].num_vars;
	}
	return 0;
}

/* The header of either format: fills hdr (sizes, header_bytes, total_bytes). Returns 1 with *need
 * when `avail` bytes do not hold all of it. */
static int parse_header(const uint8_t *blob, size_t avail, const struct adac_debuginfo_opts *o,
                        struct adac_debuginfo_header *h, size_t *need, struct adac_error *err)
{
	memset(h, 0, sizeof *h);
	size_t pos = 0;
	if (o->format == ADAC_DEBUGINFO_FORMAT_NET10 && o->flag_byte) {
		if (avail < 1) {
			*need = 1;
			return 1;
		}
		h->has_flag_byte = true;
		h->flag_byte = blob[0];
		pos = 1;
		if (h->flag_byte & ~(NET10_FLAG_PATCHPOINT | NET10_FLAG_RICH))
			return adac_fail(err, ADAC_E_CORRUPT, 0, "debug info header: unknown flag byte 0x%02x", h->flag_byte);
		if (h->flag_byte & NET10_FLAG_PATCHPOINT) {
			if (avail < pos + o->patchpoint_count_offset + 4) {
				*need = pos + o->patchpoint_count_offset + 4;
				return 1;
			}
			uint32_t n = adac_get_u32(blob, pos + o->patchpoint_count_offset);
			uint64_t size = (uint64_t)o->patchpoint_size + 4ull * n;
			if (size > ADAC_MAX_DEBUGINFO_BYTES)
				return adac_fail(err, ADAC_E_CORRUPT, 0, "debug info patchpoint chunk: %u locals is absurd", n);
			h->cb_patchpoint = (uint32_t)size;
			pos += size;
		}
		if (h->flag_byte & NET10_FLAG_RICH) {
			if (avail < pos + 4) {
				*need = pos + 4;
				return 1;
			}
			uint32_t n = adac_get_u32(blob, pos);
			if (n > ADAC_MAX_DEBUGINFO_BYTES)
				return adac_fail(err, ADAC_E_CORRUPT, 0, "debug info rich chunk: size %u is absurd", n);
			h->cb_rich = n;
			pos += 4 + (size_t)n;
		}
	}
	if (avail < pos) {
		*need = pos;
		return 1;
	}
	/* At most 7 U32s of 11 nibbles: 39 bytes. */
	size_t hmax = avail - pos < 40 ? avail - pos : 40;
	struct adac_nibble_reader r;
	adac_nibble_init(&r, adac_cursor_make(blob + pos, hmax));
	uint32_t first, v[6] = {0};
	unsigned n = 0;
	int rc = adac_nibble_u32(&r, &first);
	if (rc == 0) {
		if (o->format == ADAC_DEBUGINFO_FORMAT_NET11)
			n = first == FAT_MARKER ? 6 : 1;
		else
			n = first == NET10_HAS_UNINSTRUMENTED ? 3 : 1;
		for (unsigned i = 0; i < n && rc == 0; i++)
			rc = adac_nibble_u32(&r, &v[i]);
	}
	if (rc != 0) {
		if (r.status == ADAC_NIBBLE_END && hmax < 40) {
			*need = pos + 40;
			return 1;
		}
		return adac_fail(err, ADAC_E_CORRUPT, 0, "debug info header: %s", adac_nibble_why(&r));
	}
	if (o->format == ADAC_DEBUGINFO_FORMAT_NET11) {
		if (first == FAT_MARKER) {
			h->fat = true;
			h->cb_bounds = v[0];
			h->cb_vars = v[1];
			h->cb_uninstrumented_bounds = v[2];
			h->cb_patchpoint = v[3];
			h->cb_rich = v[4];
			h->cb_async = v[5];
		} else {
			h->cb_bounds = first;
			h->cb_vars = v[0];
		}
	} else if (first == NET10_HAS_UNINSTRUMENTED) {
		h->cb_bounds = v[0];
		h->cb_uninstrumented_bounds = v[1];
		h->cb_vars = v[2];
	} else {
		h->cb_bounds = first;
		h->cb_vars = v[0];
	}
	/* (.NET 10: the patchpoint and rich chunks precede the nibble header, inside `pos`.) */
	uint64_t hb = pos + adac_nibble_byte_index(&r);
	uint64_t total = hb + (uint64_t)h->cb_bounds + h->cb_vars + h->cb_uninstrumented_bounds;
	if (o->format == ADAC_DEBUGINFO_FORMAT_NET11)
		total += (uint64_t)h->cb_patchpoint + h->cb_rich + h->cb_async;
	if (total > ADAC_MAX_DEBUGINFO_BYTES)
		return adac_fail(err, ADAC_E_LIMIT, 0,
		                 "debug info header: chunks add up to %llu bytes, more than ADAC_MAX_DEBUGINFO_BYTES (%u)",
		                 (unsigned long long)total, ADAC_MAX_DEBUGINFO_BYTES);
	h->header_bytes = (uint32_t)hb;
	h->total_bytes = (uint32_t)total;
	return 0;
}

void adac_debuginfo_opts_init(struct adac_debuginfo_opts *o, enum adac_debuginfo_format format, bool flag_byte)
{
	memset(o, 0, sizeof *o);
	o->format = format;
	o->flag_byte = flag_byte;
	o->patchpoint_size = ADAC_PATCHPOINT_SIZE_NET10;
	o->patchpoint_count_offset = ADAC_PATCHPOINT_COUNT_OFFSET_NET10;
}

int adac_debuginfo_measure(const uint8_t *blob, size_t avail, const struct adac_debuginfo_opts *o, size_t *total,
                           size_t *need, struct adac_error *err)
{
	struct adac_debuginfo_header h;
	int rc = parse_header(blob, avail, o, &h, need, err);
	if (rc == 0)
		*total = h.total_bytes;
	return rc;
}

int adac_debuginfo_decode_ex(const uint8_t *blob, size_t len, const struct adac_debuginfo_opts *o,
                             struct adac_debug_info **out, struct adac_error *err)
{
	*out = NULL;
	struct adac_debug_info *di = calloc(1, sizeof *di);
	if (!di)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for debug info");
	size_t need = 0;
	int rc = parse_header(blob, len, o, &di->hdr, &need, err);
	if (rc == 1)
		rc = adac_fail(err, ADAC_E_CORRUPT, 0, "debug info header: truncated (%zu bytes, need %zu)", len, need);
	if (rc == 0 && di->hdr.total_bytes > len)
		rc = adac_fail(err, ADAC_E_CORRUPT, 0, "debug info: header and chunks need %u bytes, the blob has %zu",
		               di->hdr.total_bytes, len);
	if (rc != 0) {
		adac_debuginfo_free(di);
		return -1;
	}
	const struct adac_debuginfo_header *h = &di->hdr;
	const uint8_t *p = blob + h->header_bytes;
	struct chunk bounds = {"bounds", p, h->cb_bounds};
	struct chunk uninstr, vars;
	if (o->format == ADAC_DEBUGINFO_FORMAT_NET11) {
		vars = (struct chunk){"vars", bounds.p + bounds.len, h->cb_vars};
		uninstr = (struct chunk){"uninstrumented bounds", vars.p + vars.len, h->cb_uninstrumented_bounds};
	} else {
		uninstr = (struct chunk){"uninstrumented bounds", bounds.p + bounds.len, h->cb_uninstrumented_bounds};
		vars = (struct chunk){"vars", uninstr.p + uninstr.len, h->cb_vars};
	}
	const uint8_t *after = o->format == ADAC_DEBUGINFO_FORMAT_NET11 ? uninstr.p + uninstr.len : vars.p + vars.len;
	struct chunk patch = {"patchpoint", after, h->cb_patchpoint};
	struct chunk rich = {"rich", patch.p + patch.len, h->cb_rich};
	struct chunk async = {"async", rich.p + rich.len, h->cb_async};
	unsigned src_bits = o->format == ADAC_DEBUGINFO_FORMAT_NET11 ? 3 : 2;

	if (bounds.len && decode_bounds(&bounds, src_bits, di, err) != 0)
		goto fail;
	if (vars.len && decode_vars(&vars, o, di, err) != 0)
		goto fail;
	if (o->format == ADAC_DEBUGINFO_FORMAT_NET11 && async.len && decode_async(&async, di, err) != 0)
		goto fail;
	*out = di;
	return 0;
fail:
	adac_debuginfo_free(di);
	return -1;
}

int adac_debuginfo_decode(const uint8_t *blob, size_t len, enum adac_debuginfo_format format, bool flag_byte,
                          struct adac_debug_info **out, struct adac_error *err)
{
	struct adac_debuginfo_opts o;
	adac_debuginfo_opts_init(&o, format, flag_byte);
	return adac_debuginfo_decode_ex(blob, len, &o, out, err);
}

void adac_debuginfo_free(struct adac_debug_info *di)
{
	if (!di)
		return;
	free(di->bounds);
	free(di->vars);
	free(di->suspension_points);
	free(di->async_vars);
	free(di);
}

uint32_t adac_debuginfo_il_offset(const struct adac_debug_info *di, uint32_t native_offset, uint32_t *source)
{
	const struct adac_bound *best = NULL;
	for (uint32_t i = 0; i < di->num_bounds; i++) {
		const struct adac_bound *b = &di->bounds[i];
		if (b->native_offset == native_offset && (b->source & ADAC_SRC_ASYNC)) {
			best = b;
			break;
		}
		if (b->native_offset > native_offset)
			continue;
		if (!best || b->native_offset > best->native_offset)
			best = b;
		else if (b->native_offset == best->native_offset && best->il_offset >= IL_BIAS && b->il_offset < IL_BIAS)
			best = b; /* a real IL offset beats PROLOG/EPILOG/NO_MAPPING at the same offset */
	}
	if (source)
		*source = best ? best->source : 0;
	return best ? best->il_offset : ADAC_IL_NO_MAPPING;
}

const struct adac_suspension_point *adac_debuginfo_suspension_point(const struct adac_debug_info *di, uint32_t state)
{
	return state < di->num_suspension_points ? &di->suspension_points[state] : NULL;
}


/* ------------------------------------------------------------------------------------------------
 * From the target: format selection, blob read, cache
 * ---------------------------------------------------------------------------------------------- */

struct cache_entry {
	uint64_t addr;                   /* of the blob in the target: the key */
	struct adac_debug_info *di;
};

struct debuginfo_state {
	bool resolved;
	enum adac_debuginfo_format format;
	struct adac_debuginfo_opts base; /* format, x86, patchpoint layout */
	struct adac_addr_map cache;      /* struct cache_entry by blob address */
};

static void state_free(void *p)
{
	struct debuginfo_state *s = p;
	if (!s)
		return;
	for (size_t i = 0; i < s->cache.cap; i++) {
		struct cache_entry *e = adac_addr_map_slot(&s->cache, i);
		if (e)
			adac_debuginfo_free(e->di);
	}
	adac_addr_map_free(&s->cache);
	free(s);
}

/* The runtime's encoding (debuginfo_format.h) and the facts of its target that every blob shares. */
static int resolve_format(struct adac_runtime *rt, struct debuginfo_state *s, struct adac_error *err)
{
	if (adac_debuginfo_format_of(rt->desc, &s->format, err))
		return -1;
	adac_debuginfo_opts_init(&s->base, s->format, false);
	const char *arch = adac_desc_global_string(rt->desc, "Architecture");
	s->base.x86 = arch && strcmp(arch, "x86") == 0;
	uint32_t size, off;
	struct adac_error ignored = {0};
	if (adac_desc_has_field(rt->desc, "PatchpointInfo", "LocalCount") &&
	    adac_desc_type_size(rt->desc, "PatchpointInfo", &size, &ignored) == 0 &&
	    adac_desc_field(rt->desc, "PatchpointInfo", "LocalCount", &off, &ignored) == 0 && size > 0 &&
	    off + 4 <= size) {
		s->base.patchpoint_size = size;
		s->base.patchpoint_count_offset = off;
	}
	s->resolved = true;
	return 0;
}

static int read_blob(struct adac_target *t, uint64_t addr, const struct adac_debuginfo_opts *o, uint8_t **blob,
                     size_t *len, struct adac_error *err)
{
	size_t want = 64, total = 0;
	uint8_t *buf = NULL;
	for (int round = 0;; round++) {
		uint8_t *nb = realloc(buf, want);
		if (!nb) {
			free(buf);
			return adac_fail(err, ADAC_E_NOMEM, addr, "out of memory for debug info");
		}
		buf = nb;
		size_t got = adac_read_upto(t, addr, buf, want);
		size_t need = 0;
		int rc = adac_debuginfo_measure(buf, got, o, &total, &need, err);
		if (rc < 0) {
			free(buf);
			return -1;
		}
		if (rc == 0)
			break;
		if (got < want || need <= got || round == 4) {
			free(buf);
			return adac_fail(err, ADAC_E_READ, addr, "cannot read the debug info header at 0x%llx (%zu bytes readable)",
			                 (unsigned long long)addr, got);
		}
		want = need;
	}
	uint8_t *nb = realloc(buf, total ? total : 1);
	if (!nb) {
		free(buf);
		return adac_fail(err, ADAC_E_NOMEM, addr, "out of memory for debug info");
	}
	buf = nb;
	if (adac_read(t, addr, buf, total, err) != 0) {
		free(buf);
		return -1;
	}
	*blob = buf;
	*len = total;
	return 0;
}

int adac_debuginfo_get(struct adac_runtime *rt, const struct adac_code_info *code, const struct adac_debug_info **out,
                       struct adac_error *err)
{
	*out = NULL;
	struct debuginfo_state *s = adac_runtime_slot(rt, ADAC_SLOT_DEBUGINFO);
	if (!s) {
		s = calloc(1, sizeof *s);
		if (!s)
			return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for debug-info state");
		adac_runtime_set_slot(rt, ADAC_SLOT_DEBUGINFO, s, state_free);
	}
	if (!s->resolved && resolve_format(rt, s, err) != 0)
		return -1;
	if (!code->debug_info)
		return adac_fail(err, ADAC_E_NOT_FOUND, code->code_start, "no debug info for the code at 0x%llx",
		                 (unsigned long long)code->code_start);
	const struct cache_entry *hit = adac_addr_map_find(&s->cache, code->debug_info);
	if (hit) {
		*out = hit->di;
		return 0;
	}
	struct adac_debug_info *di;
	struct adac_debuginfo_opts o = s->base;
	if (s->format == ADAC_DEBUGINFO_FORMAT_NET10) {
		o.flag_byte = code->debug_info_flag_byte; /* the code map knows (execution_manager.h) */
	} else if (code->kind == ADAC_CODE_R2R && code->r2r_major < 17) {
		/* A ReadyToRun image older than major 17 under a .NET 11 runtime: the older encoding,
		 * without the flag byte. */
		o.format = ADAC_DEBUGINFO_FORMAT_NET10;
		o.flag_byte = false;
	}
	uint8_t *blob = NULL;
	size_t len = 0;
	if (read_blob(rt->t, code->debug_info, &o, &blob, &len, err) != 0 ||
	    adac_debuginfo_decode_ex(blob, len, &o, &di, err) != 0) {
		free(blob);
		if (err && err->addr == 0)
			err->addr = code->debug_info;
		adac_error_wrap(err, "debug info at 0x%llx: ", (unsigned long long)code->debug_info);
		return -1;
	}
	free(blob);
	struct cache_entry *e = adac_addr_map_get(&s->cache, code->debug_info, sizeof *e, NULL);
	if (!e) {
		adac_debuginfo_free(di);
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for the debug-info cache");
	}
	e->di = di;
	*out = di;
	return 0;
}
