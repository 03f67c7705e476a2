/* testasync.h - the async side of the hand-laid runtime (testrts.h): CoreLib's Task, the hand-rolled
 * continuation classes, flat continuations with their ResumeInfo, and a JIT code heap (range
 * section map, nibble map, RealCodeHeader) whose method is Worker.Work with a debug-info blob.
 * Layouts come from the real .NET 11.0.0 descriptor. */
#ifndef ADAC_TESTASYNC_H
#define ADAC_TESTASYNC_H

#include "testrts.h"

/* MethodTables of the async tests (after testrts.h's). */
enum {
	M_TASK = M_FIRST_FREE,   /* System.Threading.Tasks.Task */
	M_RATC,                  /* RuntimeAsyncTaskContinuation: Task at +32 */
	M_VTSC,                  /* AsyncHelpers+ValueTaskSourceContinuation: Source at +32, Token at +40 */
	M_DISPATCHER,            /* AsyncDispatcherInfo */
	M_ASYNC_FREE,
};

/* Task's fields, object-relative. */
#define TASK_STATE_OBJECT 16u
#define TASK_CONTINUATION_OBJECT 24u
#define TASK_STATE_FLAGS 36u

/* The code heap. */
#define CODE_MAP 0x5900000ull     /* MapBase: the heap's code */
#define CODE_HDRMAP 0x5910000ull  /* its nibble map */
#define CODE_LEVELS 0x5920000ull  /* range section map level tables, 2 KiB each */
#define CODE_OBJS 0x5930000ull    /* fragment, range section, heap list node, code header */
#define WORK_CODE (CODE_MAP + 0x100) /* Worker.Work's code, 0x200 bytes */
#define WORK_DI 0x5940000ull      /* its debug info */

static inline uint32_t get32(uint64_t a)
{
	uint32_t v;
	memcpy(&v, area + (a - AREA_BASE), 4);
	return v;
}

static inline uint64_t get64(uint64_t a)
{
	uint64_t v;
	if (a >= GLOBALS_BASE)
		memcpy(&v, globals_page + (a - GLOBALS_BASE), 8);
	else
		memcpy(&v, area + (a - AREA_BASE), 8);
	return v;
}

/* The FieldDesc of CoreLib TypeDef `type`'s field `name`, at `offset` in the instance data. */
static inline struct fd cl_field(const struct rts *r, uint32_t type, const char *name, uint32_t offset, uint8_t elem)
{
	return (struct fd){field_rid(r->cmd, type, name), offset, elem, false};
}

/* A CoreLib class at mt: TypeDef `type`, BaseSize base_size, its parent (with parent_fields instance
 * fields before its own) and its own fields. */
static inline void put_cl_class(uint64_t mt, uint32_t type, uint32_t base_size, uint64_t parent, uint16_t parent_fields,
                                const struct fd *fields, unsigned n)
{
	put_mt(&(struct mt_spec){mt, 0, type, base_size, parent, CL_MOD, 0, 0x12, 0, parent_fields, fields, n});
}

/* The rid of CoreLib's ns.outer+name. */
static inline uint32_t cl_nested(const struct rts *r, const char *ns, const char *outer, const char *name)
{
	uint32_t rid = 0;
	struct adac_error err = {0};
	if (adac_ecma_find_typedef(r->cmd, "", name, typedef_rid(r->cmd, ns, outer), &rid, &err))
		fprintf(stderr, "%s+%s: %s\n", outer, name, err.msg);
	return rid;
}

/* Task (in CoreLib's TypeDef map, so the Task layout is found) and the hand-rolled continuations. */
static inline void put_async_classes(const struct rts *r)
{
	uint32_t c_task = typedef_rid(r->cmd, "System.Threading.Tasks", "Task");
	const struct fd task_f[] = {
		cl_field(r, c_task, "m_stateObject", TASK_STATE_OBJECT - 8, 0x1c),
		cl_field(r, c_task, "m_continuationObject", TASK_CONTINUATION_OBJECT - 8, 0x1c),
		cl_field(r, c_task, "m_stateFlags", TASK_STATE_FLAGS - 8, 0x08),
	};
	put_cl_class(MT(M_TASK), c_task, 48, MT(M_OBJECT), 0, task_f, 3);
	cl_map_typedef(c_task, MT(M_TASK));

	uint32_t c_ratc = typedef_rid(r->cmd, "System.Runtime.CompilerServices", "RuntimeAsyncTaskContinuation");
	const struct fd ratc_f[] = {cl_field(r, c_ratc, "Task", 24, 0x12)};
	put_cl_class(MT(M_RATC), c_ratc, 48, MT(M_CONT), 4, ratc_f, 1);

	uint32_t c_vtsc = cl_nested(r, "System.Runtime.CompilerServices", "AsyncHelpers", "ValueTaskSourceContinuation");
	const struct fd vtsc_f[] = {cl_field(r, c_vtsc, "Source", 24, 0x1c), cl_field(r, c_vtsc, "Token", 32, 0x06)};
	put_cl_class(MT(M_VTSC), c_vtsc, 56, MT(M_CONT), 4, vtsc_f, 2);
}

/* A CoreLib struct at mt (TypeDef `type`, instance size inst_size) whose last field (is_static set) is a
 * [ThreadStatic] in the non-GC statics block of the direct TLS index tls_index, mapped in CoreLib's
 * TypeDef map: AsyncDispatcherInfo.t_current, ThreadBlockingInfo.t_first. */
static inline void put_thread_static_struct(uint64_t mt, uint32_t type, uint16_t inst_size, const struct fd *fields,
                                            unsigned n, uint32_t tls_index)
{
	put_mt(&(struct mt_spec){mt, 0x00040000u, type, 48, MT(M_VALUETYPE), CL_MOD, 0, 0x11, inst_size, 0, fields, n});
	uint64_t fd = mt + 0x400 + (n - 1ull) * off("FieldDesc", NULL) + off("FieldDesc", "DWord1");
	put32(fd, get32(fd) | 0x2000000u); /* thread-static */
	uint64_t tsi = mt + 0x800 - off("ThreadStaticsInfo", NULL);
	put32(tsi + off("ThreadStaticsInfo", "NonGCTlsIndex"), 0x02000000u | tls_index);
	put32(tsi + off("ThreadStaticsInfo", "GCTlsIndex"), 0xffffffffu);
	cl_map_typedef(type, mt);
}

/* A task object: MethodTable mt, its m_stateObject, m_continuationObject and m_stateFlags. */
static inline void put_task(uint64_t at, uint64_t mt, uint64_t state_object, uint64_t continuation_object, uint32_t flags)
{
	put64(at, mt);
	put64(at + TASK_STATE_OBJECT, state_object);
	put64(at + TASK_CONTINUATION_OBJECT, continuation_object);
	put32(at + TASK_STATE_FLAGS, flags);
}

/* A flat continuation of the 88-byte layout (or of mt) and its ResumeInfo {Resume 0, DiagnosticIP}
 * at ri (no ResumeInfo when ri is 0). */
static inline void put_cont(uint64_t at, uint64_t mt, uint64_t next, uint64_t ri, uint64_t dip, uint32_t flags,
                            int32_t state)
{
	put64(at, mt);
	put64(at + off("ContinuationObject", "Next"), next);
	put64(at + off("ContinuationObject", "ResumeInfo"), ri);
	put32(at + 24, flags); /* Continuation.Flags (its FieldDesc, testrts.h) */
	put32(at + off("ContinuationObject", "State"), (uint32_t)state);
	if (ri) {
		put64(ri, 0);
		put64(ri + off("AsyncResumeInfo", "DiagnosticIP"), dip);
	}
}

/* ---- the code heap -------------------------------------------------------------------------- */

/* Points the range section map's leaf slot for the 128 KiB chunk holding addr at frag. The map is
 * ExecutionManagerCodeRangeMapAddress itself (pointer global 36: PDATA(36)). */
static inline void code_map_set(uint64_t addr, uint64_t frag, uint64_t *next_level)
{
	uint64_t used = addr >> 17, table = PDATA(36) + off("RangeSectionMap", "TopLevelData");
	for (int level = 5; level >= 1; level--) {
		uint64_t slot = table + ((used >> ((level - 1) * 8)) & 0xFF) * 8;
		if (level == 1) {
			put64(slot, frag | 1);
			return;
		}
		uint64_t v = get64(slot);
		if (!v) {
			v = *next_level;
			*next_level += 2048;
			put64(slot, v | 1);
		}
		table = v & ~1ull;
	}
}

/* The nibble map entry of a code block [start, end) (constant-time encoding: a pointer in every unit
 * the block covers after its start). */
static inline void code_nibble_set(uint64_t start, uint64_t end)
{
	uint64_t rel = start - CODE_MAP, idx = rel / 32;
	uint32_t nib = (uint32_t)((rel & 31) / 4) + 1, shift = 28 - (uint32_t)(idx % 8) * 4;
	uint64_t ua = CODE_HDRMAP + idx / 8 * 4;
	put32(ua, (get32(ua) & ~(0xFu << shift)) | (nib << shift));
	uint32_t ptr = (uint32_t)((rel & ~0xFull) + ((rel & 0xF) >> 2) + 9);
	for (uint64_t unit = idx / 8 + 1; (unit + 1) * 256 <= end - CODE_MAP; unit++)
		put32(CODE_HDRMAP + unit * 4, ptr);
}

/* One JIT code heap [CODE_MAP, CODE_MAP + 64 KiB) holding Worker.Work at WORK_CODE (0x200 bytes),
 * whose RealCodeHeader names md and the debug info at WORK_DI (0: none). */
static inline void put_code_heap(uint64_t md, uint64_t debug_info)
{
	uint64_t next_level = CODE_LEVELS, heap = CODE_OBJS, rs = CODE_OBJS + 0x100, frag = CODE_OBJS + 0x200,
	         rch = CODE_OBJS + 0x300;
	put64(heap + off("CodeHeapListNode", "StartAddress"), CODE_MAP + 0x100);
	put64(heap + off("CodeHeapListNode", "EndAddress"), CODE_MAP + 0xFFFF);
	put64(heap + off("CodeHeapListNode", "MapBase"), CODE_MAP);
	put64(heap + off("CodeHeapListNode", "HeaderMap"), CODE_HDRMAP);
	put64(rs + off("RangeSection", "RangeBegin"), CODE_MAP);
	put64(rs + off("RangeSection", "RangeEndOpen"), CODE_MAP + 0x10000);
	put32(rs + off("RangeSection", "Flags"), 0x2); /* CodeHeap */
	put64(rs + off("RangeSection", "HeapList"), heap);
	put64(frag + off("RangeSectionFragment", "RangeBegin"), CODE_MAP);
	put64(frag + off("RangeSectionFragment", "RangeEndOpen"), CODE_MAP + 0x10000);
	put64(frag + off("RangeSectionFragment", "RangeSection"), rs);
	code_map_set(CODE_MAP, frag, &next_level);
	put64(rch + off("RealCodeHeader", "MethodDesc"), md);
	put64(rch + off("RealCodeHeader", "DebugInfo"), debug_info);
	put64(WORK_CODE - 8, rch);
	code_nibble_set(WORK_CODE, WORK_CODE + 0x200);
}

/* Writes a debug-info blob (di_blob) at `at`. */
static inline void put_di(uint64_t at, const struct bound *b, uint32_t nb, uint32_t nsp, uint32_t native,
                          const struct var *vars, uint32_t nvars)
{
	uint8_t blob[8192] = {0};
	size_t len = di_blob(blob, b, nb, nsp, native, vars, nvars);
	mem_write(at, blob, len);
}

#endif
