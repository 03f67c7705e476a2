/* code_heaps.c - every JIT-compiled code block: the EE JIT manager's list of code heaps and their
 * nibble maps (the runtime's EEJitManager::m_pAllCodeHeaps). */
#include "code/code_heaps.h"

#include "base/limits.h"
#include "runtime/descriptor.h"
#include "runtime/runtime.h"
#include "target/target.h"

/* id, type, field, width, required */
#define HEAP_FIELDS(X)                                                   \
	X(JIT_HEAPS, "EEJitManager", "AllCodeHeaps", ADAC_WIDTH_PTR, 1)     \
	X(NODE_NEXT, "CodeHeapListNode", "Next", ADAC_WIDTH_PTR, 1)         \
	X(NODE_START, "CodeHeapListNode", "StartAddress", ADAC_WIDTH_PTR, 1) \
	X(NODE_END, "CodeHeapListNode", "EndAddress", ADAC_WIDTH_PTR, 1)    \
	X(NODE_MAP_BASE, "CodeHeapListNode", "MapBase", ADAC_WIDTH_PTR, 1)  \
	X(NODE_HEADER_MAP, "CodeHeapListNode", "HeaderMap", ADAC_WIDTH_PTR, 1)

#define X_ENUM(id, type, field, width, req) F_##id,
enum { HEAP_FIELDS(X_ENUM) HEAP_F_COUNT };
#define X_SPEC(id, type, field, width, req) {type, field, width, req},
static const struct adac_field_spec heap_specs[] = {HEAP_FIELDS(X_SPEC)};
_Static_assert(sizeof heap_specs / sizeof heap_specs[0] == HEAP_F_COUNT, "code heap field table");

int adac_code_heaps_each(struct adac_runtime *rt, adac_code_start_cb cb, void *ctx, struct adac_error *err)
{
	struct adac_field_spec specs[HEAP_F_COUNT];
	uint32_t off[HEAP_F_COUNT];
	uint8_t has[HEAP_F_COUNT];
	unsigned ps = adac_target_ptr_size(rt->t);
	for (size_t i = 0; i < HEAP_F_COUNT; i++) {
		specs[i] = heap_specs[i];
		if (specs[i].width == ADAC_WIDTH_PTR)
			specs[i].width = (uint8_t)ps;
	}
	enum adac_nibble_kind kind;
	uint64_t global, jit, node;
	/* The global is where the runtime keeps its pointer to the EEJitManager. */
	if (adac_desc_resolve(rt->desc, specs, HEAP_F_COUNT, off, has, err) || adac_em_nibble_kind(rt, &kind, err) ||
	    adac_desc_global(rt->desc, "EEJitManagerAddress", &global, err))
		return -1;
	if (adac_read_ptr(rt->t, global, &jit, err)) {
		adac_error_wrap(err, "EEJitManagerAddress: ");
		return -1;
	}
	if (adac_read_ptr(rt->t, jit + off[F_JIT_HEAPS], &node, err)) {
		adac_error_wrap(err, "EEJitManager at 0x%llx: ", (unsigned long long)jit);
		return -1;
	}
	for (unsigned n = 0; node; n++) {
		if (n >= ADAC_MAX_CODE_HEAPS)
			return adac_fail(err, ADAC_E_LIMIT, node, "more than ADAC_MAX_CODE_HEAPS (%u) code heaps", ADAC_MAX_CODE_HEAPS);
		uint64_t next, start, end, map_base, header_map;
		if (adac_read_ptr(rt->t, node + off[F_NODE_NEXT], &next, err) ||
		    adac_read_ptr(rt->t, node + off[F_NODE_START], &start, err) ||
		    adac_read_ptr(rt->t, node + off[F_NODE_END], &end, err) ||
		    adac_read_ptr(rt->t, node + off[F_NODE_MAP_BASE], &map_base, err) ||
		    adac_read_ptr(rt->t, node + off[F_NODE_HEADER_MAP], &header_map, err)) {
			adac_error_wrap(err, "CodeHeapListNode at 0x%llx: ", (unsigned long long)node);
			return -1;
		}
		if (header_map && end > map_base) {
			int rc = adac_em_nibble_starts(rt->t, kind, map_base, header_map, end, cb, ctx, err);
			if (rc)
				return rc;
		}
		node = next;
	}
	return 0;
}
