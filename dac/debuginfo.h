/* debuginfo.h - DebugInfo contract: the compressed per-method debug info (bounds, vars, async
 * suspension points) of one code version, in every encoding the supported runtimes use. */
#ifndef ADAC_DEBUGINFO_H
#define ADAC_DEBUGINFO_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

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
	uint32_t loc_type;   /* VarLocType */
	int32_t loc[3];      /* payload as decoded (registers, base reg, stack offset) */
};

struct adac_debug_info {
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
 * the runtime (do not free). A blob the runtime's DebugInfo contract version does not describe is
 * ADAC_E_UNSUPPORTED; malformed bytes are ADAC_E_CORRUPT naming the chunk. */
int adac_debuginfo_get(struct adac_runtime *rt, const struct adac_code_info *code, const struct adac_debug_info **out,
                       struct adac_error *err);

/* Decodes a blob from host memory (used by the above and by unit/fuzz tests). `format` selects
 * the encoding: ADAC_DEBUGINFO_FORMAT_* (chosen from the DebugInfo contract tag). */
enum adac_debuginfo_format {
	ADAC_DEBUGINFO_FORMAT_NET11,  /* fat/thin header, 3 source bits, VarNumber-first vars, async chunk */
	ADAC_DEBUGINFO_FORMAT_NET10,  /* optional flag byte, 2 source bits, older vars */
};
int adac_debuginfo_decode(const uint8_t *blob, size_t len, enum adac_debuginfo_format format, bool flag_byte,
                          struct adac_debug_info **out, struct adac_error *err);
void adac_debuginfo_free(struct adac_debug_info *di);

/* IL offset of a native offset: the bounds entry at or before it, preferring one flagged ASYNC at
 * exactly that offset. ADAC_IL_NO_MAPPING if nothing maps. */
uint32_t adac_debuginfo_il_offset(const struct adac_debug_info *di, uint32_t native_offset, uint32_t *source);

#endif
