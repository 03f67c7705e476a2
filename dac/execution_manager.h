/* execution_manager.h - ExecutionManager contract: which method's code contains an address.
 *
 * RangeSectionMap -> RangeSection -> (EE JIT code heap: nibble map, linear and constant-time
 * encodings -> RealCodeHeader) or (ReadyToRun: RuntimeFunctions binary search, hot/cold map,
 * EntryPointToMethodDescMap) or (stub range: precode). Input is a code address such as
 * ResumeInfo.DiagnosticIP; the answer describes the code version that contains it, never "the
 * current code of the method". */
#ifndef ADAC_EXECUTION_MANAGER_H
#define ADAC_EXECUTION_MANAGER_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

struct adac_runtime;

enum adac_code_kind {
	ADAC_CODE_JIT,          /* EE JIT code heap */
	ADAC_CODE_R2R,          /* ReadyToRun (precompiled) image */
	ADAC_CODE_STUB,         /* stub/precode range (RangeList) or a stub code block */
	ADAC_CODE_INTERPRETER,
};

struct adac_code_info {
	enum adac_code_kind kind;
	uint64_t method_desc;   /* MethodDesc owning the code; 0 for stubs without one */
	uint64_t code_start;    /* start of the method body (the hot part for split R2R code) */
	uint64_t offset;        /* ip - code_start (for cold R2R code: offset in the whole method) */
	uint64_t code_header;   /* JIT: RealCodeHeader address; 0 otherwise */
	uint64_t debug_info;    /* address of the debug-info blob for this code version; 0 if none */
	bool debug_info_flag_byte; /* R2R images older than major 17: blob starts with a flag byte */
	uint64_t r2r_module;    /* R2R: the Module; 0 otherwise */
	uint64_t range_section; /* the RangeSection that matched */
	uint32_t stub_kind;     /* STUB: the stub code block kind (<= StubCodeBlockLast), if known */
};

/* Looks ip up. ADAC_E_NOT_FOUND (with a message naming ip) when no managed code contains it. */
int adac_em_find_code(struct adac_runtime *rt, uint64_t ip, struct adac_code_info *info, struct adac_error *err);

#endif
