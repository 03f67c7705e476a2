/* debuginfo.h - DebugInfo contract: the compressed per-method debug info (bounds, vars, async
 * suspension points) of one code version, in every encoding the supported runtimes use. */
#ifndef ADAC_DEBUGINFO_H
#define ADAC_DEBUGINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/limits.h"
#include "code/debuginfo_format.h"

struct adac_runtime;
struct adac_code_info;

/* IL offsets use the runtime's specials. */
#define ADAC_IL_NO_MAPPING 0xffffffffu  /* -1 */
#define ADAC_IL_PROLOG 0xfffffffeu      /* -2 */
#define ADAC_IL_EPILOG 0xfffffffdu      /* -3 */

/* Bounds source flags, normalised across encodings. */
#define ADAC_SRC_CALL_INSTRUCTION 0x1u
#define ADAC_SRC_STACK_EMPTY 0x2u
#define ADAC_SRC_ASYNC 0x4u

struct adac_bound {
	uint32_t native_offset;
	uint32_t il_offset;
	uint32_t source;   /* ADAC_SRC_* */
};

/* Special var numbers (ILNUM); args first (this = 0), then locals. */
#define ADAC_ILNUM_VARARGS_HND (-1)
#define ADAC_ILNUM_RETBUF (-2)
#define ADAC_ILNUM_TYPECTXT (-3)
#define ADAC_ILNUM_UNKNOWN (-4)
#define ADAC_ILNUM_CALL_RETURN (-5)

/* The bias of the adjusted var-number encoding (ICorDebugInfo::MAX_ILNUM): -6 in .NET 11 (which
 * added CALL_RETURN_ILNUM = -5), -4 before. */
#define ADAC_MAX_ILNUM_NET11 (-6)
#define ADAC_MAX_ILNUM_NET10 (-4)

/* VarLocType (cordebuginfo.h). */
enum adac_varloc {
	ADAC_VLT_REG, ADAC_VLT_REG_BYREF, ADAC_VLT_REG_FP, ADAC_VLT_STK, ADAC_VLT_STK_BYREF, ADAC_VLT_REG_REG,
	ADAC_VLT_REG_STK, ADAC_VLT_STK_REG, ADAC_VLT_STK2, ADAC_VLT_FPSTK, ADAC_VLT_FIXED_VA, ADAC_VLT_COUNT,
	ADAC_VLT_INVALID,
};

struct adac_async_var {
	int32_t var_number;   /* IL var number or a special */
	uint32_t offset;      /* byte offset from the continuation object address */
};

struct adac_suspension_point {
	uint32_t diagnostic_native_offset;
	uint32_t num_vars;
	const struct adac_async_var *vars;  /* into adac_debug_info.async_vars */
};

struct adac_native_var {
	int32_t var_number;
	uint32_t start_offset, end_offset;
	uint32_t loc_type;   /* VarLocType (enum adac_varloc) */
	int32_t loc[3];      /* payload in encoding order (registers, base reg, stack offset; see the
	                      * table in debuginfo.c); stack offsets already scaled on x86 */
	uint32_t call_il_offset; /* var_number == CALL_RETURN (.NET 11): IL offset of the call */
};

/* What the blob's header said (for dumps and diagnostics). */
struct adac_debuginfo_header {
	bool fat;                /* .NET 11: fat header (first U32 was 0) */
	bool has_flag_byte;      /* .NET 10: blob started with the EXTRA_DEBUG_INFO flag byte */
	uint8_t flag_byte;
	uint32_t header_bytes;   /* bytes before the bounds chunk */
	uint32_t cb_bounds, cb_vars, cb_uninstrumented_bounds, cb_patchpoint, cb_rich, cb_async;
	uint32_t total_bytes;    /* bytes the blob occupies */
};

struct adac_debug_info {
	struct adac_debuginfo_header hdr;
	uint32_t num_bounds;
	struct adac_bound *bounds;
	uint32_t num_vars;
	struct adac_native_var *vars;
	uint32_t num_suspension_points;
	struct adac_suspension_point *suspension_points;
	uint32_t num_async_vars;
	struct adac_async_var *async_vars;
};

/* Decodes the debug info of a code version found by adac_em_find_code. The result is cached by
 * the runtime per blob address (do not free). A blob the runtime's DebugInfo contract version does
 * not describe is ADAC_E_UNSUPPORTED; malformed bytes are ADAC_E_CORRUPT naming the chunk; no
 * debug info for the code (debug_info == 0) is ADAC_E_NOT_FOUND. */
int adac_debuginfo_get(struct adac_runtime *rt, const struct adac_code_info *code, const struct adac_debug_info **out,
                       struct adac_error *err);

/* Decodes a blob from host memory (used by the above and by unit/fuzz tests) in `format`
 * (code/debuginfo_format.h). */
int adac_debuginfo_decode(const uint8_t *blob, size_t len, enum adac_debuginfo_format format, bool flag_byte,
                          struct adac_debug_info **out, struct adac_error *err);
void adac_debuginfo_free(struct adac_debug_info *di);

/* Everything that selects an encoding. The .NET 10 flag byte may be followed by an uncompressed
 * PatchpointInfo whose size is patchpoint_size + 4 * (u32 at patchpoint_count_offset); the
 * runtime's descriptor type PatchpointInfo ("!" and LocalCount) gives both where it exists. */
struct adac_debuginfo_opts {
	enum adac_debuginfo_format format;
	bool flag_byte;
	bool x86;                          /* stack offsets are stored divided by 4 */
	uint32_t patchpoint_size;          /* default ADAC_PATCHPOINT_SIZE_NET10 */
	uint32_t patchpoint_count_offset;  /* default ADAC_PATCHPOINT_COUNT_OFFSET_NET10 */
};
/* PatchpointInfo of .NET 10 on 64-bit targets: {u64 callee saves; PCODE tier0; u32 locals; 5 x i32} */
#define ADAC_PATCHPOINT_SIZE_NET10 40u
#define ADAC_PATCHPOINT_COUNT_OFFSET_NET10 16u

void adac_debuginfo_opts_init(struct adac_debuginfo_opts *o, enum adac_debuginfo_format format, bool flag_byte);
int adac_debuginfo_decode_ex(const uint8_t *blob, size_t len, const struct adac_debuginfo_opts *o,
                             struct adac_debug_info **out, struct adac_error *err);

/* How long the blob starting with `avail` bytes at `blob` is. Returns 0 with *total set; 1 with
 * *need set when more than `avail` bytes must be seen first (read at least that many and call
 * again); -1 with ADAC_E_CORRUPT. The header is at most a few dozen bytes, except that a .NET 10
 * flag byte puts the patchpoint and rich info before it. */
int adac_debuginfo_measure(const uint8_t *blob, size_t avail, const struct adac_debuginfo_opts *o, size_t *total,
                           size_t *need, struct adac_error *err);

/* IL offset of a native offset: an entry at exactly that offset flagged ASYNC if there is one,
 * else the entry with the greatest native offset at or before it (among entries at that same
 * offset the first with a real IL offset, else the first). ADAC_IL_NO_MAPPING if nothing maps.
 * *source (may be NULL) receives the chosen entry's ADAC_SRC_* flags (0 if none). */
uint32_t adac_debuginfo_il_offset(const struct adac_debug_info *di, uint32_t native_offset, uint32_t *source);

/* The suspension point of Continuation.State `state`, or NULL when the method has fewer. */
const struct adac_suspension_point *adac_debuginfo_suspension_point(const struct adac_debug_info *di, uint32_t state);

#endif
