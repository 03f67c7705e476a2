/* gc_handles.h - the GC's handle tables and its finalization queue (contract "GC"): the roots the GC
 * keeps outside the heap's objects.
 *
 * Handle tables (GC.md, GetHandles): g_HandleTableMap (global HandleTableMap) is a list of maps
 * (HandleTableMap.Next), each with InitialHandleTableArraySize buckets (HandleTableMap.BucketsPtr);
 * a bucket's Table holds one HandleTable per GC heap (1 on workstation GC, TotalCpuCount on server);
 * a HandleTable's SegmentList is a list of TableSegments (NextSegment). A segment has
 * HandleBlocksPerSegment blocks of HandlesPerBlock handles in RgValue; the blocks of one handle type
 * form a ring through RgAllocation, entered at RgAllocation[RgTail[type]] (BlockInvalid: none). A
 * handle is a slot of RgValue holding an object (null or DebugDestroyedHandleValue: free). Handles
 * with a secondary value (dependent, weak interior pointer) keep it in the same slot of the block
 * RgUserData names.
 *
 * Finalization queue: the workstation heap's GCHeapFinalizeQueue (server: GCHeap.FinalizeQueue of each
 * heap) is a CFinalize whose FillPointers are CFinalizeFillPointersLength ends of consecutive
 * segments of one array of object pointers: one per generation (TotalGenerationCount), then the
 * critical and the ordinary ready-to-finalize ("f-reachable") lists. Only the last two are roots: the
 * generation segments list objects registered for finalization, which are not kept alive by that. */
#ifndef ADAC_GC_HANDLES_H
#define ADAC_GC_HANDLES_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;

/* Handle types as the handle table numbers them (HNDTYPE_*). */
enum {
	ADAC_HANDLE_WEAK_SHORT = 0,
	ADAC_HANDLE_WEAK_LONG = 1,
	ADAC_HANDLE_STRONG = 2,
	ADAC_HANDLE_PINNED = 3,
	ADAC_HANDLE_VARIABLE = 4,
	ADAC_HANDLE_REFCOUNTED = 5,
	ADAC_HANDLE_DEPENDENT = 6,
	ADAC_HANDLE_ASYNC_PINNED = 7,
	ADAC_HANDLE_SIZED_REF = 8,
	ADAC_HANDLE_WEAK_NATIVE_COM = 9,
	ADAC_HANDLE_WEAK_INTERIOR = 10,
	ADAC_HANDLE_CROSS_REFERENCE = 11,
};

/* "strong", "pinned", "async pinned", "sized ref", "dependent", "weak short", ...; "type <n>" past them. */
const char *adac_handle_type_name(uint32_t type, char *buf, size_t size);
/* Whether a handle of that type keeps its object alive by itself (strong, pinned, async pinned,
 * sized ref). Ref-counted handles are strong only while a COM reference count holds them, which is
 * not read: they are not counted. */
bool adac_handle_type_is_root(uint32_t type);

struct adac_gc_handle {
	uint64_t handle;      /* the slot (what GCHandle.ToIntPtr gives) */
	uint64_t object;      /* what it holds */
	uint64_t secondary;   /* dependent handles: the object the primary keeps alive; else 0 */
	uint32_t type;
};

/* Every allocated handle of every type, in table order. cb returns non-zero to stop. Caps:
 * ADAC_MAX_HANDLE_MAPS, ADAC_MAX_HANDLE_SEGMENTS, ADAC_MAX_GC_HANDLES. ADAC_E_LAYOUT when the runtime
 * does not describe its handle tables. */
typedef int (*adac_gc_handle_cb)(void *ctx, const struct adac_gc_handle *h);
int adac_gc_handles(struct adac_runtime *rt, adac_gc_handle_cb cb, void *ctx, struct adac_error *err);

/* Every object on the finalization queue's ready lists (critical, then ordinary): slot is where the
 * queue keeps it. */
typedef int (*adac_finalizer_cb)(void *ctx, uint64_t slot, uint64_t object);
int adac_gc_finalizer_ready(struct adac_runtime *rt, adac_finalizer_cb cb, void *ctx, struct adac_error *err);

#endif
