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

#include "base/error.h"

struct adac_runtime;
struct adac_target;

enum adac_code_kind {
	ADAC_CODE_JIT,          /* EE JIT code heap */
	ADAC_CODE_R2R,          /* ReadyToRun (precompiled) image */
	ADAC_CODE_STUB,         /* stub/precode range (RangeList) or a stub code block */
	ADAC_CODE_INTERPRETER,
};

/* Stub kinds (the runtime's StubCodeBlockKind, codeman.h). Values up to StubCodeBlockLast are what a
 * stub block's code header or a RangeList's RangeListType holds; ADAC_STUB_METHOD_CALL_THUNK is
 * what the runtime reports for ReadyToRun DelayLoadMethodCallThunks. */
enum {
	ADAC_STUB_UNKNOWN = 0,
	ADAC_STUB_JUMPSTUB = 1,
	ADAC_STUB_DYNAMICHELPER = 3,
	ADAC_STUB_STUBPRECODE = 4,
	ADAC_STUB_FIXUPPRECODE = 5,
	ADAC_STUB_VSD_DISPATCH = 6,
	ADAC_STUB_VSD_RESOLVE = 7,
	ADAC_STUB_VSD_LOOKUP = 8,
	ADAC_STUB_VSD_VTABLE = 9,
	ADAC_STUB_CALLCOUNTING = 10,
	ADAC_STUB_METHOD_CALL_THUNK = 0x13,
};

struct adac_code_info {
	enum adac_code_kind kind;
	uint64_t method_desc;   /* MethodDesc owning the code; 0 for stubs without one */
	uint64_t code_start;    /* start of the method body (the hot part for split R2R code); for stubs
	                         * the precode entry or stub block start, 0 when unknown */
	uint64_t offset;        /* ip - code_start (for cold R2R code: offset in the whole method) */
	uint64_t code_header;   /* JIT: RealCodeHeader address; 0 otherwise */
	uint64_t debug_info;    /* address of the debug-info blob for this code version; 0 if none */
	bool debug_info_flag_byte; /* the blob starts with the .NET 10 "extra info" flag byte. Only for
	                         * JIT code in the .NET 10 debug-info format (debuginfo_format.h) with
	                         * OSR or rich debug info on. ReadyToRun blobs never have one (cDAC
	                         * ReadyToRunJitManager.GetDebugInfo: "ReadyToRun does not contain
	                         * PatchpointInfo"); R2R images older than major 17 use the older thin,
	                         * non-fat layout instead (see r2r_major). */
	uint16_t r2r_major;     /* R2R: the image's READYTORUN_HEADER.MajorVersion (>= 17: fat headers) */
	uint64_t r2r_module;    /* R2R: the Module; 0 otherwise */
	uint64_t range_section; /* the RangeSection that matched */
	uint32_t stub_kind;     /* STUB: the stub code block kind (<= StubCodeBlockLast), if known: the
	                         * code header's value, or a RangeList section's RangeListType */
	int precode_kind;       /* STUB in a RangeList section: enum adac_precode_kind of the precode
	                         * containing ip (ADAC_PRECODE_NONE: not a precode) */
};

/* Looks ip up. ADAC_E_NOT_FOUND (with a message naming ip) when no managed code contains it. */
int adac_em_find_code(struct adac_runtime *rt, uint64_t ip, struct adac_code_info *info, struct adac_error *err);

/* Entry point -> MethodDesc the way the runtime does it (ExecutionManager::NonVirtualEntry2MethodDesc):
 * the code map first (a jitted/R2R entry or an IL stub); in a RangeList (stub) range, the precode.
 * ADAC_E_NOT_FOUND when neither knows the address. */
int adac_entry_point_method_desc(struct adac_runtime *rt, uint64_t entry, uint64_t *method_desc,
                                 struct adac_error *err);

/* Name of a stub kind ("FixupPrecode"), or "Unknown". */
const char *adac_em_stub_kind_name(uint32_t kind);

/* The nibble map of one code heap, exposed for tests and tools.
 * LINEAR: nibbles only; scan back unit by unit (ExecutionManager 1 of .NET 9/10).
 * CONSTANT: a unit whose low nibble is 9..12 is a pointer to the method start, and at most one
 * previous unit is examined (ExecutionManager 2 of .NET 10, and "c1" of .NET 11). */
enum adac_nibble_kind { ADAC_NIBBLE_LINEAR, ADAC_NIBBLE_CONSTANT };

/* Start of the code block containing ip, from the map at header_map describing code at map_base.
 * *code_start = 0 when ip is in no code block (not an error). -1 on a failed read or
 * ADAC_MAX_NIBBLE_UNITS. */
int adac_em_nibble_find(struct adac_target *t, enum adac_nibble_kind kind, uint64_t map_base, uint64_t header_map,
                        uint64_t ip, uint64_t *code_start, struct adac_error *err);

/* Calls cb(ctx, start) for every code block the map records for code in [map_base, end), in
 * address order; cb returns 0 to go on, 1 to stop, -1 with err set. ADAC_E_LIMIT past
 * ADAC_MAX_NIBBLE_UNITS units. */
typedef int (*adac_code_start_cb)(void *ctx, uint64_t start, struct adac_error *err);
int adac_em_nibble_starts(struct adac_target *t, enum adac_nibble_kind kind, uint64_t map_base, uint64_t header_map,
                          uint64_t end, adac_code_start_cb cb, void *ctx, struct adac_error *err);

/* Calls cb for the start of every code block (a method's code, a stub block) of every EE JIT code
 * heap (EEJitManager.AllCodeHeaps: CodeHeapListNodes, each a range with its nibble map), heap by
 * heap. ADAC_E_LAYOUT when the runtime does not describe its code heaps, ADAC_E_LIMIT past
 * ADAC_MAX_CODE_HEAPS heaps. */
int adac_em_code_starts(struct adac_runtime *rt, adac_code_start_cb cb, void *ctx, struct adac_error *err);

/* Which encoding the runtime's EE JIT heaps use (from the ExecutionManager contract version). */
int adac_em_nibble_kind(struct adac_runtime *rt, enum adac_nibble_kind *kind, struct adac_error *err);

#endif
