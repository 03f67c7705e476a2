/* execution_manager.c - ExecutionManager contract: code address -> RangeSection -> JIT code heap
 * (nibble map, RealCodeHeader) or ReadyToRun image (RuntimeFunctions, hot/cold map, entry point
 * map, debug-info NativeArray) or stub range (precode).
 *
 * Algorithms follow the runtime (codeman.h/.cpp, readytoruninfo.cpp) and the cDAC
 * ExecutionManagerCore, with one deliberate difference: a stub code block is recognised by the
 * *value* of the code header slot (CodeHeader::IsStubCodeBlock compares pRealCodeHeader with
 * STUB_CODE_BLOCK_LAST); the cDAC's RangeSection.IsStubCodeBlock compares the slot's address. */
#include "code/execution_manager.h"

#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/limits.h"
#include "code/debuginfo_format.h"
#include "code/precode.h"
#include "runtime/descriptor.h"
#include "runtime/runtime.h"
#include "target/target.h"

#define W_PTR ADAC_WIDTH_PTR /* field width placeholder: the target pointer size */

/* Types read whole (the span of the fields below is read in one go). */
#define EM_TYPES(T)                                  \
	T(MAP, "RangeSectionMap")                        \
	T(FRAG, "RangeSectionFragment")                  \
	T(RS, "RangeSection")                            \
	T(RANGELIST, "CodeRangeMapRangeList")            \
	T(JITMGR, "EEJitManager")                        \
	T(HEAP, "CodeHeapListNode")                      \
	T(RCH, "RealCodeHeader")                         \
	T(IRCH, "InterpreterRealCodeHeader")             \
	T(PLATFORM, "PlatformMetadata")

/* id, type, field, width, required */
#define EM_FIELDS(X)                                                 \
	X(MAP_TOP, MAP, "TopLevelData", W_PTR, 1)                        \
	X(FRAG_BEGIN, FRAG, "RangeBegin", W_PTR, 1)                      \
	X(FRAG_END, FRAG, "RangeEndOpen", W_PTR, 1)                      \
	X(FRAG_RS, FRAG, "RangeSection", W_PTR, 1)                       \
	X(FRAG_NEXT, FRAG, "Next", W_PTR, 1)                             \
	X(RS_BEGIN, RS, "RangeBegin", W_PTR, 1)                          \
	X(RS_END, RS, "RangeEndOpen", W_PTR, 1)                          \
	X(RS_NEXT_DELETE, RS, "NextForDelete", W_PTR, 1)                 \
	X(RS_JITMGR, RS, "JitManager", W_PTR, 1)                         \
	X(RS_FLAGS, RS, "Flags", 4, 1)                                   \
	X(RS_HEAPLIST, RS, "HeapList", W_PTR, 1)                         \
	X(RS_R2R_MODULE, RS, "R2RModule", W_PTR, 1)                      \
	X(RS_RANGELIST, RS, "RangeList", W_PTR, 0)                       \
	X(RANGELIST_TYPE, RANGELIST, "RangeListType", 4, 0)              \
	X(JITMGR_RICH, JITMGR, "StoreRichDebugInfo", 1, 0)               \
	X(JITMGR_HEAPS, JITMGR, "AllCodeHeaps", W_PTR, 0)                \
	X(HEAP_NEXT, HEAP, "Next", W_PTR, 0)                             \
	X(HEAP_START, HEAP, "StartAddress", W_PTR, 1)                    \
	X(HEAP_END, HEAP, "EndAddress", W_PTR, 1)                        \
	X(HEAP_MAPBASE, HEAP, "MapBase", W_PTR, 1)                       \
	X(HEAP_HEADERMAP, HEAP, "HeaderMap", W_PTR, 1)                   \
	X(RCH_MD, RCH, "MethodDesc", W_PTR, 1)                           \
	X(RCH_DEBUG, RCH, "DebugInfo", W_PTR, 0) /* not in .NET 10 */     \
	X(IRCH_MD, IRCH, "MethodDesc", W_PTR, 0)                         \
	X(IRCH_DEBUG, IRCH, "DebugInfo", W_PTR, 0)                       \
	X(PLATFORM_CPFLAGS, PLATFORM, "CodePointerFlags", 1, 0)

/* ReadyToRun, resolved on first use (a runtime without R2R types still maps JIT code). */
#define R2R_TYPES(T)                               \
	T(MODULE, "Module")                            \
	T(R2RINFO, "ReadyToRunInfo")                   \
	T(R2RHDR, "ReadyToRunHeader")                  \
	T(IDD, "ImageDataDirectory")                   \
	T(RF, "RuntimeFunction")                       \
	T(UNWIND, "UnwindInfo")                        \
	T(HASHMAP, "HashMap")                          \
	T(BUCKET, "Bucket")

#define R2R_FIELDS(X)                                                  \
	X(MODULE_R2R, MODULE, "ReadyToRunInfo", W_PTR, 1)                  \
	X(INFO_HEADER, R2RINFO, "ReadyToRunHeader", W_PTR, 1)              \
	X(INFO_COMPOSITE, R2RINFO, "CompositeInfo", W_PTR, 1)              \
	X(INFO_NRF, R2RINFO, "NumRuntimeFunctions", 4, 1)                  \
	X(INFO_RF, R2RINFO, "RuntimeFunctions", W_PTR, 1)                  \
	X(INFO_NHOTCOLD, R2RINFO, "NumHotColdMap", 4, 1)                   \
	X(INFO_HOTCOLD, R2RINFO, "HotColdMap", W_PTR, 1)                   \
	X(INFO_DELAYLOAD, R2RINFO, "DelayLoadMethodCallThunks", W_PTR, 1)  \
	X(INFO_DEBUGINFO, R2RINFO, "DebugInfoSection", W_PTR, 0)           \
	X(INFO_EPMAP, R2RINFO, "EntryPointToMethodDescMap", 0, 1)          \
	X(HDR_MAJOR, R2RHDR, "MajorVersion", 2, 0)                         \
	X(IDD_VA, IDD, "VirtualAddress", 4, 1)                             \
	X(IDD_SIZE, IDD, "Size", 4, 1)                                     \
	X(RF_SIZE, RF, NULL, 0, 1)                                         \
	X(RF_BEGIN, RF, "BeginAddress", 4, 1)                              \
	X(RF_END, RF, "EndAddress", 4, 0)                                  \
	X(RF_UNWIND, RF, "UnwindData", 4, 1)                               \
	X(UNWIND_LENGTH, UNWIND, "FunctionLength", 4, 0)                   \
	X(HASHMAP_BUCKETS, HASHMAP, "Buckets", W_PTR, 1)                   \
	X(BUCKET_SIZE, BUCKET, NULL, 0, 1)                                 \
	X(BUCKET_KEYS, BUCKET, "Keys", W_PTR, 1)                           \
	X(BUCKET_VALUES, BUCKET, "Values", W_PTR, 1)

#define X_TYPE_ENUM(id, name) T_##id,
#define X_FIELD_ENUM(id, type, field, width, req) F_##id,
enum { EM_TYPES(X_TYPE_ENUM) EM_T_COUNT };
enum { EM_FIELDS(X_FIELD_ENUM) EM_F_COUNT };
enum { R2R_TYPES(X_TYPE_ENUM) R2R_T_COUNT };
enum { R2R_FIELDS(X_FIELD_ENUM) R2R_F_COUNT };

#define X_TYPE_NAME(id, name) name,
static const char *const em_type_names[] = {EM_TYPES(X_TYPE_NAME)};
static const char *const r2r_type_names[] = {R2R_TYPES(X_TYPE_NAME)};

#define X_FIELD_DEF(id, t, field, width, req) {T_##t, field, width, req},
static const struct adac_field_def em_fields[] = {EM_FIELDS(X_FIELD_DEF)};
static const struct adac_field_def r2r_fields[] = {R2R_FIELDS(X_FIELD_DEF)};
_Static_assert(sizeof em_fields / sizeof em_fields[0] == EM_F_COUNT, "EM field table");
_Static_assert(sizeof r2r_fields / sizeof r2r_fields[0] == R2R_F_COUNT, "R2R field table");

/* RangeSection::RangeSectionFlags */
enum { RS_CODEHEAP = 0x2, RS_RANGELIST = 0x4, RS_INTERPRETER = 0x8 };

/* One table's resolved layout: field offsets and, per type, how many bytes to read whole. */
struct layout {
	uint32_t off[32];
	uint8_t has[32];
	uint8_t width[32];
	uint32_t span[16];
};

struct em_state {
	struct layout em;
	struct layout r2r;
	int r2r_resolved;          /* 0: not yet, 1: ok */
	unsigned ptr;
	uint64_t map;              /* the RangeSectionMap (ExecutionManagerCodeRangeMapAddress) */
	uint64_t stub_last;        /* StubCodeBlockLast */
	enum adac_nibble_kind nibble;
	bool thumb;                /* PlatformMetadata.CodePointerFlags bit 0: clear bit 0 of code pointers */
	bool debuginfo_net10;      /* the .NET 10 debug-info format: JIT blobs may start with a flag byte */
	bool osr;                  /* FeatureOnStackReplacement */
	uint32_t slots;            /* HashMapSlotsPerBucket */
	uint64_t value_mask;       /* HashMapValueMask */
};

_Static_assert(EM_F_COUNT <= 32 && R2R_F_COUNT <= 32 && EM_T_COUNT <= 16 && R2R_T_COUNT <= 16, "layout sizes");

static int resolve(const struct adac_descriptor *d, unsigned ptr, const struct adac_field_def *defs, size_t n,
                   const char *const *type_names, size_t ntypes, struct layout *l, struct adac_error *err)
{
	if (adac_desc_resolve_defs(d, defs, n, type_names, ptr, l->off, l->has, l->width, err))
		return -1;
	memset(l->span, 0, sizeof l->span);
	for (size_t i = 0; i < n; i++) {
		if (!l->has[i] || !defs[i].field)
			continue;
		uint32_t end = l->off[i] + l->width[i];
		if (end > l->span[defs[i].type])
			l->span[defs[i].type] = end;
	}
	for (size_t i = 0; i < ntypes; i++)
		if (l->span[i] > ADAC_MAX_TYPE_SIZE)
			return adac_fail(err, ADAC_E_LAYOUT, 0, "the runtime's fields of %s span %u bytes (limit %u)", type_names[i],
			                 l->span[i], ADAC_MAX_TYPE_SIZE);
	return 0;
}

/* Reads the described part of one struct into buf (at least span bytes). */
static int read_obj(struct adac_target *t, const struct layout *l, const char *const *type_names, int type,
                    uint64_t addr, uint8_t *buf, struct adac_error *err)
{
	if (addr == 0)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "%s pointer is null", type_names[type]);
	if (adac_read(t, addr, buf, l->span[type], err)) {
		adac_error_wrap(err, "%s at 0x%llx: ", type_names[type], (unsigned long long)addr);
		return -1;
	}
	return 0;
}

static uint64_t get_field(const struct layout *l, const uint8_t *buf, int f)
{
	switch (l->width[f]) {
	case 1: return adac_get_u8(buf, l->off[f]);
	case 2: return adac_get_u16(buf, l->off[f]);
	case 4: return adac_get_u32(buf, l->off[f]);
	case 8: return adac_get_u64(buf, l->off[f]);
	default: return 0;
	}
}

#define EM_GET(st, buf, id) get_field(&(st)->em, (buf), F_##id)
#define R2R_GET(st, buf, id) get_field(&(st)->r2r, (buf), F_##id)

/* ---------------------------------------------------------------------------------------------- */
/* Contract version -> nibble map encoding. */

static int choose_nibble(const struct adac_descriptor *d, enum adac_nibble_kind *kind, struct adac_error *err)
{
	const char *tag = adac_desc_contract(d, "ExecutionManager");
	if (!tag)
		return adac_fail(err, ADAC_E_LAYOUT, 0, "the runtime does not describe the ExecutionManager contract");
	if (strcmp(tag, "1") == 0) {
		*kind = ADAC_NIBBLE_LINEAR;     /* .NET 9/10 ExecutionManager_1 (NibbleMapLinearLookup) */
		return 0;
	}
	if (strcmp(tag, "2") == 0 || strcmp(tag, "c1") == 0) {
		/* .NET 10 ExecutionManager_2, and .NET 11's frozen "c1" (PR #131790 removed the linear
		 * version; the runtime writes relative pointers into the map since .NET 10). */
		*kind = ADAC_NIBBLE_CONSTANT;
		return 0;
	}
	return adac_fail(err, ADAC_E_UNSUPPORTED, 0, "ExecutionManager contract version \"%s\" is not supported", tag);
}

static void free_state(void *p) { free(p); }

static struct em_state *em_state(struct adac_runtime *rt, struct adac_error *err)
{
	struct em_state *st = adac_runtime_slot(rt, ADAC_SLOT_EM);
	if (st)
		return st;
	st = calloc(1, sizeof *st);
	if (!st) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		return NULL;
	}
	const struct adac_descriptor *d = rt->desc;
	st->ptr = adac_target_ptr_size(rt->t);
	uint64_t v;
	if (resolve(d, st->ptr, em_fields, EM_F_COUNT, em_type_names, EM_T_COUNT, &st->em, err) ||
	    choose_nibble(d, &st->nibble, err) ||
	    adac_desc_global(d, "ExecutionManagerCodeRangeMapAddress", &st->map, err) ||
	    adac_desc_global(d, "StubCodeBlockLast", &st->stub_last, err))
		goto fail;
	if (st->map == 0) {
		adac_fail(err, ADAC_E_CORRUPT, 0, "the runtime's ExecutionManagerCodeRangeMapAddress is null");
		goto fail;
	}
	/* .NET 10 GA does not export FeatureOnStackReplacement: OSR is compiled in on its 64-bit
	 * targets. */
	if (adac_desc_global(d, "FeatureOnStackReplacement", &v, NULL) == 0)
		st->osr = v != 0;
	else
		st->osr = st->ptr == 8;
	enum adac_debuginfo_format format;
	st->debuginfo_net10 = adac_debuginfo_format_of(d, &format, NULL) == 0 && format == ADAC_DEBUGINFO_FORMAT_NET10;
	/* PlatformMetadata points directly at the struct (not at a pointer to it). */
	if (st->em.has[F_PLATFORM_CPFLAGS] && adac_desc_global(d, "PlatformMetadata", &v, NULL) == 0 && v) {
		uint8_t flags;
		if (adac_read_u8(rt->t, v + st->em.off[F_PLATFORM_CPFLAGS], &flags, err)) {
			adac_error_wrap(err, "PlatformMetadata at 0x%llx: ", (unsigned long long)v);
			goto fail;
		}
		st->thumb = flags & 1;
	}
	adac_runtime_set_slot(rt, ADAC_SLOT_EM, st, free_state);
	return st;
fail:
	free(st);
	return NULL;
}

static int r2r_layout(struct adac_runtime *rt, struct em_state *st, struct adac_error *err)
{
	if (st->r2r_resolved)
		return 0;
	const struct adac_descriptor *d = rt->desc;
	uint64_t slots;
	if (resolve(d, st->ptr, r2r_fields, R2R_F_COUNT, r2r_type_names, R2R_T_COUNT, &st->r2r, err) ||
	    adac_desc_global(d, "HashMapSlotsPerBucket", &slots, err) ||
	    adac_desc_global(d, "HashMapValueMask", &st->value_mask, err)) {
		adac_error_wrap(err, "ReadyToRun code: ");
		return -1;
	}
	if (slots == 0 || slots > ADAC_MAX_HASHMAP_SLOTS)
		return adac_fail(err, ADAC_E_LIMIT, 0, "the runtime's HashMapSlotsPerBucket is %llu (ADAC_MAX_HASHMAP_SLOTS %u)",
		                 (unsigned long long)slots, ADAC_MAX_HASHMAP_SLOTS);
	st->slots = (uint32_t)slots;
	uint32_t bucket = st->r2r.off[F_BUCKET_SIZE];
	if ((uint64_t)st->r2r.off[F_BUCKET_KEYS] + (uint64_t)slots * st->ptr > bucket ||
	    (uint64_t)st->r2r.off[F_BUCKET_VALUES] + (uint64_t)slots * st->ptr > bucket)
		return adac_fail(err, ADAC_E_LAYOUT, 0, "the runtime's Bucket (%u bytes) cannot hold %llu keys and values", bucket,
		                 (unsigned long long)slots);
	if (st->r2r.off[F_RF_SIZE] < 4)
		return adac_fail(err, ADAC_E_LAYOUT, 0, "the runtime's RuntimeFunction is %u bytes", st->r2r.off[F_RF_SIZE]);
	st->r2r_resolved = 1;
	return 0;
}

int adac_em_nibble_kind(struct adac_runtime *rt, enum adac_nibble_kind *kind, struct adac_error *err)
{
	struct em_state *st = em_state(rt, err);
	if (!st)
		return -1;
	*kind = st->nibble;
	return 0;
}

int adac_em_code_starts(struct adac_runtime *rt, adac_code_start_cb cb, void *ctx, struct adac_error *err)
{
	struct em_state *st = em_state(rt, err);
	if (!st)
		return -1;
	if (!st->em.has[F_JITMGR_HEAPS] || !st->em.has[F_HEAP_NEXT])
		return adac_fail(err, ADAC_E_LAYOUT, 0,
		                 "the runtime does not describe its code heaps (EEJitManager.AllCodeHeaps, CodeHeapListNode.Next)");
	uint64_t global, jit, node;
	/* The global is where the runtime keeps its pointer to the EEJitManager. */
	if (adac_desc_global(rt->desc, "EEJitManagerAddress", &global, err))
		return -1;
	if (adac_read_ptr(rt->t, global, &jit, err)) {
		adac_error_wrap(err, "EEJitManagerAddress: ");
		return -1;
	}
	if (adac_read_ptr(rt->t, jit + st->em.off[F_JITMGR_HEAPS], &node, err)) {
		adac_error_wrap(err, "EEJitManager at 0x%llx: ", (unsigned long long)jit);
		return -1;
	}
	uint8_t buf[ADAC_MAX_TYPE_SIZE];
	for (unsigned n = 0; node; n++) {
		if (n >= ADAC_MAX_CODE_HEAPS)
			return adac_fail(err, ADAC_E_LIMIT, node, "more than ADAC_MAX_CODE_HEAPS (%u) code heaps", ADAC_MAX_CODE_HEAPS);
		if (read_obj(rt->t, &st->em, em_type_names, T_HEAP, node, buf, err))
			return -1;
		uint64_t end = EM_GET(st, buf, HEAP_END), map_base = EM_GET(st, buf, HEAP_MAPBASE);
		uint64_t header_map = EM_GET(st, buf, HEAP_HEADERMAP);
		if (header_map && end > map_base) {
			int rc = adac_em_nibble_starts(rt->t, st->nibble, map_base, header_map, end, cb, ctx, err);
			if (rc)
				return rc;
		}
		node = EM_GET(st, buf, HEAP_NEXT);
	}
	return 0;
}

const char *adac_em_stub_kind_name(uint32_t kind)
{
	switch (kind) {
	case ADAC_STUB_JUMPSTUB: return "JumpStub";
	case ADAC_STUB_DYNAMICHELPER: return "DynamicHelper";
	case ADAC_STUB_STUBPRECODE: return "StubPrecode";
	case ADAC_STUB_FIXUPPRECODE: return "FixupPrecode";
	case ADAC_STUB_VSD_DISPATCH: return "VSD_DispatchStub";
	case ADAC_STUB_VSD_RESOLVE: return "VSD_ResolveStub";
	case ADAC_STUB_VSD_LOOKUP: return "VSD_LookupStub";
	case ADAC_STUB_VSD_VTABLE: return "VSD_VTableStub";
	case ADAC_STUB_CALLCOUNTING: return "CallCountingStub";
	case ADAC_STUB_METHOD_CALL_THUNK: return "MethodCallThunk";
	default: return "Unknown";
	}
}

/* ---------------------------------------------------------------------------------------------- */
/* Nibble map (codeman.cpp EEJitManager::FindMethodCode; cDAC NibbleMap*Lookup). Buckets of 32
 * bytes, 8 per 32-bit unit, the first bucket in the most significant nibble; nibble n (1..8) means
 * code starts at bucket + (n-1)*4. */

#define NIB_BUCKET 32u
#define NIB_PER_UNIT 8u

static int read_unit(struct adac_target *t, uint64_t header_map, uint64_t idx, uint32_t *unit, struct adac_error *err)
{
	uint64_t addr = header_map + (idx / NIB_PER_UNIT) * 4;
	if (adac_read_u32(t, addr, unit, err)) {
		adac_error_wrap(err, "nibble map at 0x%llx: ", (unsigned long long)header_map);
		return -1;
	}
	return 0;
}

static bool unit_is_pointer(uint32_t unit) { return (unit & 0xF) > 8; }

/* Constant-time encoding: the unit holds (start - map_base) with its low 4 bits re-encoded as
 * 9 + ((offset & 0xF) >> 2). */
static uint64_t unit_pointer(uint64_t map_base, uint32_t unit)
{
	return map_base + (unit & ~0xFu) + (((unit & 0xF) - 9) << 2);
}

static uint64_t nibble_addr(uint64_t map_base, uint64_t idx, uint32_t nib)
{
	return map_base + idx * NIB_BUCKET + (uint64_t)(nib - 1) * 4;
}

int adac_em_nibble_find(struct adac_target *t, enum adac_nibble_kind kind, uint64_t map_base, uint64_t header_map,
                        uint64_t ip, uint64_t *code_start, struct adac_error *err)
{
	*code_start = 0;
	if (ip < map_base)
		return 0;
	uint64_t rel = ip - map_base;
	uint64_t idx = rel / NIB_BUCKET;
	uint32_t byte_index = (uint32_t)((rel & (NIB_BUCKET - 1)) / 4) + 1;
	uint32_t unit;
	if (read_unit(t, header_map, idx, &unit, err))
		return -1;
	if (kind == ADAC_NIBBLE_CONSTANT && unit_is_pointer(unit)) {
		*code_start = unit_pointer(map_base, unit);
		return 0;
	}
	/* Focus on this bucket's nibble; earlier buckets of the unit are in the higher nibbles. */
	uint32_t tt = unit >> (28 - (idx % NIB_PER_UNIT) * 4);
	if ((tt & 0xF) != 0 && (tt & 0xF) <= byte_index) {
		*code_start = nibble_addr(map_base, idx, tt & 0xF);
		return 0;
	}
	tt >>= 4;
	if (tt != 0) {
		idx--;
		while ((tt & 0xF) == 0) {
			tt >>= 4;
			idx--;
		}
		*code_start = nibble_addr(map_base, idx, tt & 0xF);
		return 0;
	}
	if (idx < NIB_PER_UNIT)
		return 0; /* first unit: nothing before ip */
	idx = (idx & ~(uint64_t)(NIB_PER_UNIT - 1)) - 1; /* last nibble of the previous unit */
	if (read_unit(t, header_map, idx, &unit, err))
		return -1;
	if (kind == ADAC_NIBBLE_CONSTANT) {
		/* The writer puts a pointer in every unit a code block covers completely, so only one
		 * previous unit can hold the start: if it is empty, ip is in no code block. */
		if (unit == 0)
			return 0;
		if (unit_is_pointer(unit)) {
			*code_start = unit_pointer(map_base, unit);
			return 0;
		}
	} else {
		for (uint32_t scanned = 0; unit == 0; scanned++) {
			if (idx < NIB_PER_UNIT)
				return 0;
			if (scanned >= ADAC_MAX_NIBBLE_UNITS)
				return adac_fail(err, ADAC_E_LIMIT, ip,
				                 "nibble map at 0x%llx: no code start within ADAC_MAX_NIBBLE_UNITS (%u) units before 0x%llx",
				                 (unsigned long long)header_map, ADAC_MAX_NIBBLE_UNITS, (unsigned long long)ip);
			idx -= NIB_PER_UNIT;
			if (read_unit(t, header_map, idx, &unit, err))
				return -1;
		}
	}
	tt = unit;
	while (idx != 0 && (tt & 0xF) == 0) {
		tt >>= 4;
		idx--;
	}
	if ((tt & 0xF) == 0)
		return 0;
	*code_start = nibble_addr(map_base, idx, tt & 0xF);
	return 0;
}

int adac_em_nibble_starts(struct adac_target *t, enum adac_nibble_kind kind, uint64_t map_base, uint64_t header_map,
                          uint64_t end, adac_code_start_cb cb, void *ctx, struct adac_error *err)
{
	if (end <= map_base)
		return 0;
	uint64_t units = (end - map_base + NIB_BUCKET * NIB_PER_UNIT - 1) / (NIB_BUCKET * NIB_PER_UNIT);
	if (units > ADAC_MAX_NIBBLE_UNITS)
		return adac_fail(err, ADAC_E_LIMIT, header_map,
		                 "nibble map at 0x%llx: %llu units, more than ADAC_MAX_NIBBLE_UNITS (%u)",
		                 (unsigned long long)header_map, (unsigned long long)units, ADAC_MAX_NIBBLE_UNITS);
	uint32_t chunk[1024];
	for (uint64_t u = 0; u < units; u += 1024) {
		uint64_t want = units - u < 1024 ? units - u : 1024;
		/* The map is committed as far as the heap is used: what cannot be read records nothing. */
		uint64_t n = adac_read_upto(t, header_map + u * 4, chunk, (size_t)want * 4) / 4;
		for (uint64_t k = 0; k < n; k++) {
			uint32_t unit = chunk[k];
			if (unit == 0 || (kind == ADAC_NIBBLE_CONSTANT && unit_is_pointer(unit)))
				continue; /* no start, or inside a block that began earlier */
			for (uint32_t b = 0; b < NIB_PER_UNIT; b++) {
				uint32_t nib = (unit >> (28 - b * 4)) & 0xF;
				if (nib == 0)
					continue;
				int rc = cb(ctx, nibble_addr(map_base, (u + k) * NIB_PER_UNIT + b, nib), err);
				if (rc)
					return rc < 0 ? -1 : 0;
			}
		}
		if (n < want)
			break;
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* RangeSectionMap (codeman.h): 5 levels of 256 entries over address bits 56..17 on 64-bit targets,
 * 2 levels over bits 31..16 on 32-bit; interior entries and the leaf's fragment pointer carry a
 * collectible flag in bit 0. */

static int find_fragment_list(struct em_state *st, struct adac_target *t, uint64_t ip, uint64_t *frag,
                              struct adac_error *err)
{
	unsigned levels = st->ptr == 8 ? 5 : 2;
	unsigned max_bit = st->ptr == 8 ? 56 : 31;
	uint64_t used = ip >> (max_bit + 1 - levels * 8);
	uint64_t level_map = st->map + st->em.off[F_MAP_TOP]; /* TopLevelData is the inline array */
	*frag = 0;
	for (unsigned level = levels; level >= 1; level--) {
		uint64_t index = (used >> ((level - 1) * 8)) & 0xFF;
		uint64_t slot = level_map + index * st->ptr, v;
		if (adac_read_ptr(t, slot, &v, err)) {
			adac_error_wrap(err, "RangeSectionMap level %u at 0x%llx: ", level, (unsigned long long)level_map);
			return -1;
		}
		v &= ~(uint64_t)1;
		if (v == 0)
			return 0;
		if (level == 1)
			*frag = v;
		else
			level_map = v;
	}
	return 0;
}

struct range_section {
	uint64_t addr, begin, end, jit_manager, heap_list, r2r_module, range_list;
	uint32_t flags;
};

static int find_range_section(struct em_state *st, struct adac_target *t, uint64_t ip, struct range_section *rs,
                              struct adac_error *err)
{
	uint64_t frag;
	if (find_fragment_list(st, t, ip, &frag, err))
		return -1;
	uint64_t first = frag;
	uint8_t buf[ADAC_MAX_TYPE_SIZE];
	uint32_t n = 0;
	for (; frag; n++) {
		if (n >= ADAC_MAX_RANGE_FRAGMENTS)
			return adac_fail(err, ADAC_E_LIMIT, first,
			                 "RangeSectionFragment list at 0x%llx is longer than ADAC_MAX_RANGE_FRAGMENTS (%u) (a cycle?)",
			                 (unsigned long long)first, ADAC_MAX_RANGE_FRAGMENTS);
		if (read_obj(t, &st->em, em_type_names, T_FRAG, frag, buf, err))
			return -1;
		if (EM_GET(st, buf, FRAG_BEGIN) <= ip && ip < EM_GET(st, buf, FRAG_END))
			break;
		frag = EM_GET(st, buf, FRAG_NEXT) & ~(uint64_t)1;
	}
	if (!frag)
		return adac_fail(err, ADAC_E_NOT_FOUND, ip, "0x%llx is not in any code range the runtime knows",
		                 (unsigned long long)ip);
	rs->addr = EM_GET(st, buf, FRAG_RS);
	if (read_obj(t, &st->em, em_type_names, T_RS, rs->addr, buf, err)) {
		adac_error_wrap(err, "RangeSectionFragment at 0x%llx: ", (unsigned long long)frag);
		return -1;
	}
	if (EM_GET(st, buf, RS_NEXT_DELETE) != 0)
		return adac_fail(err, ADAC_E_NOT_FOUND, ip, "0x%llx is in RangeSection 0x%llx, which is being deleted",
		                 (unsigned long long)ip, (unsigned long long)rs->addr);
	rs->begin = EM_GET(st, buf, RS_BEGIN);
	rs->end = EM_GET(st, buf, RS_END);
	rs->jit_manager = EM_GET(st, buf, RS_JITMGR);
	rs->flags = (uint32_t)EM_GET(st, buf, RS_FLAGS);
	rs->heap_list = EM_GET(st, buf, RS_HEAPLIST);
	rs->r2r_module = EM_GET(st, buf, RS_R2R_MODULE);
	rs->range_list = st->em.has[F_RS_RANGELIST] ? EM_GET(st, buf, RS_RANGELIST) : 0;
	if (ip < rs->begin || ip >= rs->end)
		return adac_fail(err, ADAC_E_CORRUPT, rs->addr,
		                 "RangeSection 0x%llx [0x%llx, 0x%llx) does not contain 0x%llx although its fragment does",
		                 (unsigned long long)rs->addr, (unsigned long long)rs->begin, (unsigned long long)rs->end,
		                 (unsigned long long)ip);
	return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* EE JIT code heaps (EEJitManager::JitCodeToMethodInfo) and the interpreter's (same nibble map,
 * InterpreterRealCodeHeader). */

static int find_jit(struct adac_runtime *rt, struct em_state *st, const struct range_section *rs, uint64_t ip,
                    bool interpreter, struct adac_code_info *info, struct adac_error *err)
{
	struct adac_target *t = rt->t;
	uint8_t buf[ADAC_MAX_TYPE_SIZE];
	if (read_obj(t, &st->em, em_type_names, T_HEAP, rs->heap_list, buf, err)) {
		adac_error_wrap(err, "RangeSection 0x%llx: ", (unsigned long long)rs->addr);
		return -1;
	}
	uint64_t start = EM_GET(st, buf, HEAP_START), end = EM_GET(st, buf, HEAP_END);
	uint64_t map_base = EM_GET(st, buf, HEAP_MAPBASE), header_map = EM_GET(st, buf, HEAP_HEADERMAP);
	if (ip < start || ip > end)
		return adac_fail(err, ADAC_E_NOT_FOUND, ip, "0x%llx is outside the used part [0x%llx, 0x%llx] of code heap 0x%llx",
		                 (unsigned long long)ip, (unsigned long long)start, (unsigned long long)end,
		                 (unsigned long long)rs->heap_list);
	uint64_t code;
	if (adac_em_nibble_find(t, st->nibble, map_base, header_map, ip, &code, err)) {
		adac_error_wrap(err, "code heap 0x%llx: ", (unsigned long long)rs->heap_list);
		return -1;
	}
	if (code == 0)
		return adac_fail(err, ADAC_E_NOT_FOUND, ip, "0x%llx is in code heap 0x%llx but in no code block",
		                 (unsigned long long)ip, (unsigned long long)rs->heap_list);
	if (code > ip)
		return adac_fail(err, ADAC_E_CORRUPT, ip, "nibble map of code heap 0x%llx gives code start 0x%llx after 0x%llx",
		                 (unsigned long long)rs->heap_list, (unsigned long long)code, (unsigned long long)ip);
	uint64_t hdr;
	if (adac_read_ptr(t, code - st->ptr, &hdr, err)) {
		adac_error_wrap(err, "code header of 0x%llx: ", (unsigned long long)code);
		return -1;
	}
	info->code_start = code;
	info->offset = ip - code;
	if (!interpreter && hdr <= st->stub_last) {
		info->kind = ADAC_CODE_STUB;
		info->stub_kind = (uint32_t)hdr;
		return 0;
	}
	int type = interpreter ? T_IRCH : T_RCH;
	int f_md = interpreter ? F_IRCH_MD : F_RCH_MD, f_dbg = interpreter ? F_IRCH_DEBUG : F_RCH_DEBUG;
	if (interpreter && !(st->em.has[F_IRCH_MD] && st->em.has[F_IRCH_DEBUG]))
		return adac_fail(err, ADAC_E_LAYOUT, ip,
		                 "0x%llx is interpreter code, but the runtime does not describe InterpreterRealCodeHeader",
		                 (unsigned long long)ip);
	if (read_obj(t, &st->em, em_type_names, type, hdr, buf, err)) {
		adac_error_wrap(err, "code at 0x%llx: ", (unsigned long long)code);
		return -1;
	}
	info->kind = interpreter ? ADAC_CODE_INTERPRETER : ADAC_CODE_JIT;
	info->code_header = hdr;
	info->method_desc = get_field(&st->em, buf, f_md);
	info->debug_info = st->em.has[f_dbg] ? get_field(&st->em, buf, f_dbg) : 0;
	if (info->method_desc == 0)
		return adac_fail(err, ADAC_E_CORRUPT, hdr, "%s at 0x%llx (code at 0x%llx) has no MethodDesc", em_type_names[type],
		                 (unsigned long long)hdr, (unsigned long long)code);
	if (!interpreter && st->debuginfo_net10 && info->debug_info) {
		/* EEJitManager::GetBoundariesAndVars (.NET 10): the flag byte is written when OSR is
		 * compiled in or the manager stores rich debug info. */
		bool rich = false;
		if (st->em.has[F_JITMGR_RICH] && rs->jit_manager) {
			uint8_t b;
			if (adac_read_u8(t, rs->jit_manager + st->em.off[F_JITMGR_RICH], &b, err)) {
				adac_error_wrap(err, "EEJitManager at 0x%llx: ", (unsigned long long)rs->jit_manager);
				return -1;
			}
			rich = b != 0;
		}
		info->debug_info_flag_byte = st->osr || rich;
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* ReadyToRun (ReadyToRunJitManager::JitCodeToMethodInfo, ReadyToRunInfo::GetDebugInfo). */

struct r2r {
	uint64_t info, composite, header, rf, hotcold, delayload, debugsec, image_base, map;
	uint32_t nrf, nhotcold;
	uint32_t rf_size;
};

/* Binary search down to 10 entries, then linear (cDAC BinaryThenLinearSearch, which mirrors
 * NativeUnwindInfoLookupTable and HotColdMappingLookupTable). The callbacks return 1/0, -1 on error. */
typedef int (*search_fn)(void *ctx, uint32_t i, struct adac_error *err);

static int search(uint32_t start, uint32_t end, search_fn below, search_fn match, void *ctx, uint32_t *found,
                  struct adac_error *err)
{
	while (end - start > 10) {
		uint32_t mid = start + (end - start) / 2;
		int r = below(ctx, mid, err);
		if (r < 0)
			return -1;
		if (r)
			end = mid - 1;
		else
			start = mid;
	}
	for (uint32_t i = start; i <= end; i++) {
		int r = match(ctx, i, err);
		if (r < 0)
			return -1;
		if (r) {
			*found = i;
			return 1;
		}
	}
	return 0;
}

static int rf_field(struct em_state *st, struct adac_target *t, const struct r2r *r, uint32_t i, int f, uint32_t *v,
                    struct adac_error *err)
{
	uint64_t addr = r->rf + (uint64_t)i * r->rf_size + st->r2r.off[f];
	if (adac_read_u32(t, addr, v, err)) {
		adac_error_wrap(err, "RuntimeFunction %u of ReadyToRunInfo 0x%llx: ", i, (unsigned long long)r->info);
		return -1;
	}
	return 0;
}

struct rf_search {
	struct em_state *st;
	struct adac_target *t;
	const struct r2r *r;
	uint64_t rva;
};

static int rf_below(void *ctx, uint32_t i, struct adac_error *err)
{
	struct rf_search *s = ctx;
	uint32_t begin;
	if (rf_field(s->st, s->t, s->r, i, F_RF_BEGIN, &begin, err))
		return -1;
	return s->rva < begin;
}

static int rf_match(void *ctx, uint32_t i, struct adac_error *err)
{
	struct rf_search *s = ctx;
	uint32_t begin;
	if (i + 1 < s->r->nrf) {
		if (rf_field(s->st, s->t, s->r, i + 1, F_RF_BEGIN, &begin, err))
			return -1;
		if (s->rva >= begin)
			return 0;
	}
	if (rf_field(s->st, s->t, s->r, i, F_RF_BEGIN, &begin, err))
		return -1;
	return s->rva >= begin;
}

static int hotcold_entry(struct adac_target *t, const struct r2r *r, uint32_t i, uint32_t *v, struct adac_error *err)
{
	if (i >= r->nhotcold)
		return adac_fail(err, ADAC_E_CORRUPT, r->hotcold, "hot/cold map 0x%llx: entry %u of %u", (unsigned long long)r->hotcold,
		                 i, r->nhotcold);
	if (adac_read_u32(t, r->hotcold + (uint64_t)i * 4, v, err)) {
		adac_error_wrap(err, "hot/cold map of ReadyToRunInfo 0x%llx: ", (unsigned long long)r->info);
		return -1;
	}
	return 0;
}

struct hc_search {
	struct adac_target *t;
	const struct r2r *r;
	uint32_t index;      /* runtime function index looked up */
	uint32_t correction; /* 0: look at cold indexes (even entries), 1: hot (odd) */
	bool cold;
};

static int hc_below(void *ctx, uint32_t i, struct adac_error *err)
{
	struct hc_search *s = ctx;
	uint32_t v;
	if (hotcold_entry(s->t, s->r, i * 2 + s->correction, &v, err))
		return -1;
	return s->index < v;
}

static int hc_match(void *ctx, uint32_t i, struct adac_error *err)
{
	struct hc_search *s = ctx;
	uint32_t v;
	if (hotcold_entry(s->t, s->r, i * 2 + s->correction, &v, err))
		return -1;
	if (v == s->index)
		return 1;
	/* A cold funclet lies after its cold block's first function and before the next cold block. */
	if (s->cold) {
		uint32_t cold_start, next;
		if (hotcold_entry(s->t, s->r, i * 2, &cold_start, err))
			return -1;
		if (s->index > cold_start) {
			if (i * 2 + 2 >= s->r->nhotcold)
				return 1;
			if (hotcold_entry(s->t, s->r, i * 2 + 2, &next, err))
				return -1;
			return s->index < next;
		}
	}
	return 0;
}

/* HotColdMappingLookupTable::LookupMappingForMethod: *pair = the pair holding index, or -1. */
static int hotcold_lookup(struct adac_target *t, const struct r2r *r, uint32_t index, int64_t *pair, bool *is_cold,
                          struct adac_error *err)
{
	*pair = -1;
	*is_cold = false;
	if (r->nhotcold < 2)
		return 0;
	uint32_t first_cold;
	if (hotcold_entry(t, r, 0, &first_cold, err))
		return -1;
	struct hc_search s = {t, r, index, 1, false};
	if (index >= first_cold) {
		s.cold = true;
		s.correction = 0;
	}
	*is_cold = s.cold;
	uint32_t found;
	int rc = search(0, (r->nhotcold - 1) / 2, hc_below, hc_match, &s, &found, err);
	if (rc < 0)
		return -1;
	if (rc)
		*pair = found;
	return 0;
}

/* ReadyToRunInfo::GetMethodDescForEntryPointInNativeImage: PtrHashMap lookup (hash.h/hash.cpp). */
static int entry_point_method_desc(struct em_state *st, struct adac_target *t, const struct r2r *r, uint64_t entry,
                                   uint64_t *md, struct adac_error *err)
{
	*md = 0;
	uint64_t buckets;
	if (adac_read_ptr(t, r->map + st->r2r.off[F_HASHMAP_BUCKETS], &buckets, err)) {
		adac_error_wrap(err, "EntryPointToMethodDescMap at 0x%llx: ", (unsigned long long)r->map);
		return -1;
	}
	uint32_t size;
	if (buckets == 0 || adac_read_u32(t, buckets, &size, err)) {
		if (buckets == 0)
			return 0; /* an empty map */
		adac_error_wrap(err, "EntryPointToMethodDescMap at 0x%llx: ", (unsigned long long)r->map);
		return -1;
	}
	if (size > ADAC_MAX_HASHMAP_BUCKETS)
		return adac_fail(err, ADAC_E_LIMIT, r->map, "EntryPointToMethodDescMap at 0x%llx has %u buckets (ADAC_MAX_HASHMAP_BUCKETS %u)",
		                 (unsigned long long)r->map, size, ADAC_MAX_HASHMAP_BUCKETS);
	if (size < 2)
		return 0;
	uint64_t key = entry > 1 ? entry : entry + 100; /* PtrHashMap::SanitizeKey */
	uint32_t seed = (uint32_t)(key >> 2);
	uint32_t incr = 1 + ((uint32_t)(key >> 5) + 1) % (size - 1);
	uint32_t bsize = st->r2r.off[F_BUCKET_SIZE];
	uint8_t b[ADAC_MAX_TYPE_SIZE];
	if (bsize > sizeof b)
		return adac_fail(err, ADAC_E_LAYOUT, 0, "the runtime's Bucket is %u bytes", bsize);
	for (uint32_t i = 0; i < size; i++) {
		uint64_t baddr = buckets + bsize + (uint64_t)bsize * (seed % size); /* bucket 0 holds the count */
		if (adac_read(t, baddr, b, bsize, err)) {
			adac_error_wrap(err, "EntryPointToMethodDescMap bucket at 0x%llx: ", (unsigned long long)baddr);
			return -1;
		}
		for (uint32_t k = 0; k < st->slots; k++) {
			size_t ko = st->r2r.off[F_BUCKET_KEYS] + (size_t)k * st->ptr;
			size_t vo = st->r2r.off[F_BUCKET_VALUES] + (size_t)k * st->ptr;
			uint64_t kv = st->ptr == 8 ? adac_get_u64(b, ko) : adac_get_u32(b, ko);
			if (kv != key)
				continue;
			uint64_t v = (st->ptr == 8 ? adac_get_u64(b, vo) : adac_get_u32(b, vo)) & st->value_mask;
			*md = v << 1; /* PtrHashMap stores values shifted right by one */
			return 0;
		}
		uint64_t v0 = st->ptr == 8 ? adac_get_u64(b, st->r2r.off[F_BUCKET_VALUES]) : adac_get_u32(b, st->r2r.off[F_BUCKET_VALUES]);
		if ((v0 & ~st->value_mask) == 0)
			break; /* no collision recorded: the key is not in the map */
		seed += incr;
	}
	return 0;
}

/* Length of the hot part (RuntimeFunction.EndAddress on x64; unwind info elsewhere). */
static int function_length(struct em_state *st, struct adac_target *t, const struct r2r *r, uint32_t i,
                           uint32_t *len, struct adac_error *err)
{
	uint32_t begin;
	if (rf_field(st, t, r, i, F_RF_BEGIN, &begin, err))
		return -1;
	if (st->r2r.has[F_RF_END]) {
		uint32_t end;
		if (rf_field(st, t, r, i, F_RF_END, &end, err))
			return -1;
		*len = end - begin;
		return 0;
	}
	uint32_t unwind, v;
	if (rf_field(st, t, r, i, F_RF_UNWIND, &unwind, err))
		return -1;
	uint64_t addr = r->image_base + unwind + (st->r2r.has[F_UNWIND_LENGTH] ? st->r2r.off[F_UNWIND_LENGTH] : 0);
	if (adac_read_u32(t, addr, &v, err)) {
		adac_error_wrap(err, "unwind info of RuntimeFunction %u: ", i);
		return -1;
	}
	/* x86: UnwindInfo.FunctionLength; arm/arm64/... : the first 18 bits are length / (ptr/2). */
	*len = st->r2r.has[F_UNWIND_LENGTH] ? v : (v & ((1u << 18) - 1)) * (st->ptr / 2);
	return 0;
}

/* NativeFormat::NativeReader over the image: offsets below limit only. */
struct native_reader {
	struct adac_target *t;
	uint64_t base;
	uint32_t limit;
};

static int nr_read(const struct native_reader *nr, uint32_t off, void *buf, uint32_t len, struct adac_error *err)
{
	if (off > nr->limit || len > nr->limit - off)
		return adac_fail(err, ADAC_E_CORRUPT, nr->base + off,
		                 "debug-info index reads offset 0x%x, beyond its section (ends at 0x%x)", off, nr->limit);
	if (adac_read(nr->t, nr->base + off, buf, len, err)) {
		adac_error_wrap(err, "ReadyToRun debug-info index: ");
		return -1;
	}
	return 0;
}

/* NativeReader::DecodeUnsigned: returns the offset after the value. */
static int nr_decode(const struct native_reader *nr, uint32_t off, uint32_t *value, uint32_t *next,
                     struct adac_error *err)
{
	uint8_t b[5];
	if (nr_read(nr, off, b, 1, err))
		return -1;
	uint32_t val = b[0];
	if ((val & 1) == 0) {
		*value = val >> 1;
		*next = off + 1;
	} else if ((val & 2) == 0) {
		if (nr_read(nr, off, b, 2, err))
			return -1;
		*value = (val >> 2) | ((uint32_t)b[1] << 6);
		*next = off + 2;
	} else if ((val & 4) == 0) {
		if (nr_read(nr, off, b, 3, err))
			return -1;
		*value = (val >> 3) | ((uint32_t)b[1] << 5) | ((uint32_t)b[2] << 13);
		*next = off + 3;
	} else if ((val & 8) == 0) {
		if (nr_read(nr, off, b, 4, err))
			return -1;
		*value = (val >> 4) | ((uint32_t)b[1] << 4) | ((uint32_t)b[2] << 12) | ((uint32_t)b[3] << 20);
		*next = off + 4;
	} else if ((val & 16) == 0) {
		if (nr_read(nr, off, b, 5, err))
			return -1;
		*value = (uint32_t)b[1] | ((uint32_t)b[2] << 8) | ((uint32_t)b[3] << 16) | ((uint32_t)b[4] << 24);
		*next = off + 5;
	} else {
		return adac_fail(err, ADAC_E_CORRUPT, nr->base + off, "debug-info index: invalid unsigned encoding 0x%02x at 0x%llx",
		                 val, (unsigned long long)(nr->base + off));
	}
	return 0;
}

/* NativeFormat::NativeArray::TryGetAt. *found = false when the array has no element index. */
static int native_array_get(const struct native_reader *nr, uint32_t array_off, uint32_t index, uint32_t *value,
                            bool *found, struct adac_error *err)
{
	enum { BLOCK = 16 };
	*found = false;
	uint32_t val, base;
	if (nr_decode(nr, array_off, &val, &base, err))
		return -1;
	uint32_t count = val >> 2, entry_size = val & 3;
	if (index >= count)
		return 0;
	uint32_t off;
	uint8_t b[4];
	if (entry_size == 0) {
		if (nr_read(nr, base + index / BLOCK, b, 1, err))
			return -1;
		off = b[0];
	} else if (entry_size == 1) {
		if (nr_read(nr, base + 2 * (index / BLOCK), b, 2, err))
			return -1;
		off = (uint32_t)b[0] | ((uint32_t)b[1] << 8);
	} else {
		if (nr_read(nr, base + 4 * (index / BLOCK), b, 4, err))
			return -1;
		off = adac_get_u32(b, 0);
	}
	off += base;
	for (uint32_t bit = BLOCK >> 1; bit > 0; bit >>= 1) {
		uint32_t next;
		if (nr_decode(nr, off, &val, &next, err))
			return -1;
		if (index & bit) {
			if (val & 2) {
				off += val >> 2;
				continue;
			}
		} else if (val & 1) {
			off = next;
			continue;
		}
		if ((val & 3) == 0 && (val >> 2) == (index & (BLOCK - 1))) {
			off = next; /* a special leaf: the element itself */
			break;
		}
		return 0;
	}
	*value = off;
	*found = true;
	return 0;
}

/* ReadyToRunInfo::GetDebugInfo: the DebugInfo section is a NativeArray indexed by the method's
 * RuntimeFunction index; an element is either the blob or a "lookback" to an identical earlier one. */
static int r2r_debug_info(struct em_state *st, struct adac_target *t, const struct r2r *r, uint32_t index,
                          uint64_t *debug_info, struct adac_error *err)
{
	*debug_info = 0;
	if (r->debugsec == 0)
		return 0;
	uint8_t idd[ADAC_MAX_TYPE_SIZE];
	if (read_obj(t, &st->r2r, r2r_type_names, T_IDD, r->debugsec, idd, err)) {
		adac_error_wrap(err, "DebugInfo section of ReadyToRunInfo 0x%llx: ", (unsigned long long)r->info);
		return -1;
	}
	uint32_t va = (uint32_t)R2R_GET(st, idd, IDD_VA), size = (uint32_t)R2R_GET(st, idd, IDD_SIZE);
	if (va == 0)
		return 0;
	if ((uint64_t)va + size > UINT32_MAX)
		return adac_fail(err, ADAC_E_CORRUPT, r->debugsec, "ReadyToRun DebugInfo section [0x%x, +0x%x) overflows", va, size);
	struct native_reader nr = {t, r->image_base, va + size};
	uint32_t off, lookback, blob, next;
	bool found;
	if (native_array_get(&nr, va, index, &off, &found, err))
		return -1;
	if (!found)
		return 0;
	if (nr_decode(&nr, off, &lookback, &next, err))
		return -1;
	blob = next;
	if (lookback != 0) {
		if (lookback > off)
			return adac_fail(err, ADAC_E_CORRUPT, r->image_base + off, "ReadyToRun debug info of RuntimeFunction %u looks back 0x%x "
			                 "bytes from offset 0x%x", index, lookback, off);
		blob = off - lookback;
	}
	*debug_info = r->image_base + blob;
	return 0;
}

static int find_r2r(struct adac_runtime *rt, struct em_state *st, const struct range_section *rs, uint64_t ip,
                    struct adac_code_info *info, struct adac_error *err)
{
	struct adac_target *t = rt->t;
	if (r2r_layout(rt, st, err))
		return -1;
	struct r2r r = {0};
	uint8_t buf[ADAC_MAX_TYPE_SIZE];
	info->r2r_module = rs->r2r_module;
	if (adac_read_ptr(t, rs->r2r_module + st->r2r.off[F_MODULE_R2R], &r.info, err)) {
		adac_error_wrap(err, "Module at 0x%llx: ", (unsigned long long)rs->r2r_module);
		return -1;
	}
	if (r.info == 0)
		return adac_fail(err, ADAC_E_CORRUPT, rs->r2r_module, "Module 0x%llx of RangeSection 0x%llx has no ReadyToRunInfo",
		                 (unsigned long long)rs->r2r_module, (unsigned long long)rs->addr);
	if (read_obj(t, &st->r2r, r2r_type_names, T_R2RINFO, r.info, buf, err))
		return -1;
	r.header = R2R_GET(st, buf, INFO_HEADER);
	r.composite = R2R_GET(st, buf, INFO_COMPOSITE);
	r.nrf = (uint32_t)R2R_GET(st, buf, INFO_NRF);
	r.rf = R2R_GET(st, buf, INFO_RF);
	r.nhotcold = (uint32_t)R2R_GET(st, buf, INFO_NHOTCOLD);
	r.hotcold = r.nhotcold ? R2R_GET(st, buf, INFO_HOTCOLD) : 0;
	r.delayload = R2R_GET(st, buf, INFO_DELAYLOAD);
	r.debugsec = st->r2r.has[F_INFO_DEBUGINFO] ? R2R_GET(st, buf, INFO_DEBUGINFO) : 0;
	/* The entry point map lives in the composite image's info (itself for a plain image). */
	r.map = (r.composite ? r.composite : r.info) + st->r2r.off[F_INFO_EPMAP];
	r.image_base = rs->begin;
	r.rf_size = st->r2r.off[F_RF_SIZE];
	if (r.nrf > ADAC_MAX_RUNTIME_FUNCTIONS || r.nhotcold > ADAC_MAX_RUNTIME_FUNCTIONS)
		return adac_fail(err, ADAC_E_LIMIT, r.info,
		                 "ReadyToRunInfo 0x%llx has %u RuntimeFunctions and %u hot/cold entries (ADAC_MAX_RUNTIME_FUNCTIONS %u)",
		                 (unsigned long long)r.info, r.nrf, r.nhotcold, ADAC_MAX_RUNTIME_FUNCTIONS);
	if (r.header && st->r2r.has[F_HDR_MAJOR]) {
		uint16_t major;
		if (adac_read_u16(t, r.header + st->r2r.off[F_HDR_MAJOR], &major, err)) {
			adac_error_wrap(err, "READYTORUN_HEADER of ReadyToRunInfo 0x%llx: ", (unsigned long long)r.info);
			return -1;
		}
		info->r2r_major = major;
	}
	uint64_t rva = ip - r.image_base;
	if (r.delayload) {
		if (read_obj(t, &st->r2r, r2r_type_names, T_IDD, r.delayload, buf, err)) {
			adac_error_wrap(err, "DelayLoadMethodCallThunks of ReadyToRunInfo 0x%llx: ", (unsigned long long)r.info);
			return -1;
		}
		uint64_t va = R2R_GET(st, buf, IDD_VA), size = R2R_GET(st, buf, IDD_SIZE);
		if (va <= rva && rva < va + size) {
			info->kind = ADAC_CODE_STUB;
			info->stub_kind = ADAC_STUB_METHOD_CALL_THUNK;
			return 0;
		}
	}
	if (r.nrf == 0 || r.rf == 0)
		return adac_fail(err, ADAC_E_NOT_FOUND, ip, "0x%llx is in ReadyToRun image 0x%llx, which has no RuntimeFunctions",
		                 (unsigned long long)ip, (unsigned long long)r.image_base);
	struct rf_search s = {st, t, &r, rva | (st->thumb ? 1 : 0)};
	uint32_t index;
	int rc = search(0, r.nrf - 1, rf_below, rf_match, &s, &index, err);
	if (rc < 0)
		return -1;
	if (rc == 0)
		return adac_fail(err, ADAC_E_NOT_FOUND, ip, "0x%llx precedes the first RuntimeFunction of ReadyToRun image 0x%llx",
		                 (unsigned long long)ip, (unsigned long long)r.image_base);
	/* A cold part maps to its hot part. */
	int64_t pair;
	bool cold;
	if (hotcold_lookup(t, &r, index, &pair, &cold, err))
		return -1;
	if (cold && pair >= 0 && hotcold_entry(t, &r, (uint32_t)pair * 2 + 1, &index, err))
		return -1;
	if (index >= r.nrf)
		return adac_fail(err, ADAC_E_CORRUPT, r.hotcold, "hot/cold map of ReadyToRunInfo 0x%llx names RuntimeFunction %u of %u",
		                 (unsigned long long)r.info, index, r.nrf);
	/* Funclets have no entry in the entry point map: step back to the method's own function. */
	uint64_t md = 0;
	for (uint32_t steps = 0;; steps++) {
		uint32_t begin;
		if (rf_field(st, t, &r, index, F_RF_BEGIN, &begin, err))
			return -1;
		if (entry_point_method_desc(st, t, &r, r.image_base + begin, &md, err))
			return -1;
		if (md)
			break;
		if (index == 0)
			return adac_fail(err, ADAC_E_NOT_FOUND, ip, "no MethodDesc in ReadyToRun image 0x%llx for the code at 0x%llx",
			                 (unsigned long long)r.image_base, (unsigned long long)ip);
		if (steps >= ADAC_MAX_R2R_FUNCLETS)
			return adac_fail(err, ADAC_E_LIMIT, ip,
			                 "ReadyToRun image 0x%llx: no method entry within ADAC_MAX_R2R_FUNCLETS (%u) RuntimeFunctions before 0x%llx",
			                 (unsigned long long)r.image_base, ADAC_MAX_R2R_FUNCLETS, (unsigned long long)ip);
		index--;
	}
	uint32_t begin;
	if (rf_field(st, t, &r, index, F_RF_BEGIN, &begin, err))
		return -1;
	info->kind = ADAC_CODE_R2R;
	info->method_desc = md;
	info->code_start = r.image_base + begin;
	info->offset = ip - info->code_start;
	/* In the cold part, the offset counts the hot part's length first. */
	if (hotcold_lookup(t, &r, index, &pair, &cold, err))
		return -1;
	if (pair >= 0 && !cold) {
		uint32_t cold_index, cold_begin, hot_len;
		if (hotcold_entry(t, &r, (uint32_t)pair * 2, &cold_index, err))
			return -1;
		if (cold_index >= r.nrf)
			return adac_fail(err, ADAC_E_CORRUPT, r.hotcold, "hot/cold map of ReadyToRunInfo 0x%llx names RuntimeFunction %u of %u",
			                 (unsigned long long)r.info, cold_index, r.nrf);
		if (rf_field(st, t, &r, cold_index, F_RF_BEGIN, &cold_begin, err))
			return -1;
		uint64_t cold_start = r.image_base + cold_begin;
		if (ip >= cold_start) {
			if (function_length(st, t, &r, index, &hot_len, err))
				return -1;
			info->offset = hot_len + (ip - cold_start);
		}
	}
	return r2r_debug_info(st, t, &r, index, &info->debug_info, err);
}

/* ---------------------------------------------------------------------------------------------- */

static int find_stub_range(struct adac_runtime *rt, struct em_state *st, const struct range_section *rs, uint64_t ip,
                           struct adac_code_info *info, struct adac_error *err)
{
	info->kind = ADAC_CODE_STUB;
	if (rs->range_list && st->em.has[F_RANGELIST_TYPE]) {
		uint32_t type;
		if (adac_read_u32(rt->t, rs->range_list + st->em.off[F_RANGELIST_TYPE], &type, err)) {
			adac_error_wrap(err, "CodeRangeMapRangeList at 0x%llx: ", (unsigned long long)rs->range_list);
			return -1;
		}
		info->stub_kind = type;
	}
	struct adac_precode_match m;
	struct adac_error perr = {0};
	int rc = adac_precode_find(rt, ip, &m, &perr);
	info->precode_kind = m.kind;
	if (m.kind != ADAC_PRECODE_NONE) {
		info->code_start = m.entry;
		info->offset = ip - m.entry;
		info->method_desc = m.method_desc;
	}
	if (rc && perr.code != ADAC_E_NOT_FOUND) {
		adac_error_copy(err, &perr);
		return -1;
	}
	return 0; /* a stub, but not a precode with a MethodDesc */
}

int adac_em_find_code(struct adac_runtime *rt, uint64_t ip, struct adac_code_info *info, struct adac_error *err)
{
	memset(info, 0, sizeof *info);
	struct em_state *st = em_state(rt, err);
	if (!st)
		return -1;
	if (st->thumb)
		ip &= ~(uint64_t)1;
	struct range_section rs;
	if (find_range_section(st, rt->t, ip, &rs, err))
		return -1;
	info->range_section = rs.addr;
	if (rs.flags & RS_INTERPRETER)
		return find_jit(rt, st, &rs, ip, true, info, err);
	if (rs.r2r_module)
		return find_r2r(rt, st, &rs, ip, info, err);
	if (rs.flags & RS_RANGELIST)
		return find_stub_range(rt, st, &rs, ip, info, err);
	if (rs.flags & RS_CODEHEAP)
		return find_jit(rt, st, &rs, ip, false, info, err);
	return adac_fail(err, ADAC_E_NOT_FOUND, ip, "0x%llx is in RangeSection 0x%llx (flags 0x%x), which holds no code",
	                 (unsigned long long)ip, (unsigned long long)rs.addr, rs.flags);
}

int adac_entry_point_method_desc(struct adac_runtime *rt, uint64_t entry, uint64_t *method_desc,
                                 struct adac_error *err)
{
	*method_desc = 0;
	struct adac_code_info ci;
	if (adac_em_find_code(rt, entry, &ci, err))
		return -1;
	if (ci.method_desc == 0)
		return adac_fail(err, ADAC_E_NOT_FOUND, entry, "entry point 0x%llx is in a %s stub without a MethodDesc",
		                 (unsigned long long)entry, adac_em_stub_kind_name(ci.stub_kind));
	*method_desc = ci.method_desc;
	return 0;
}
