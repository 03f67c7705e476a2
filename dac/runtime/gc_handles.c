/* gc_handles.c - GC contract: handle tables and the finalization queue's ready lists. See gc_handles.h. */
#include "runtime/gc_handles.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/limits.h"
#include "runtime/descriptor.h"
#include "runtime/gc_heap.h"
#include "runtime/runtime.h"
#include "target/target.h"

#define HANDLE_FIELDS(X)                                            \
	X(MAP_BUCKETS, "HandleTableMap", "BucketsPtr", true)            \
	X(MAP_NEXT, "HandleTableMap", "Next", true)                     \
	X(BUCKET_TABLE, "HandleTableBucket", "Table", true)             \
	X(TABLE_SEGMENTS, "HandleTable", "SegmentList", true)           \
	X(SEG_ALLOCATION, "TableSegment", "RgAllocation", true)         \
	X(SEG_TAIL, "TableSegment", "RgTail", true)                     \
	X(SEG_USER_DATA, "TableSegment", "RgUserData", true)            \
	X(SEG_NEXT, "TableSegment", "NextSegment", true)                \
	X(SEG_VALUE, "TableSegment", "RgValue", true)                   \
	X(FIN_FILL, "CFinalize", "FillPointers", false)                 \
	X(HEAP_FINALIZE, "GCHeap", "FinalizeQueue", false)

enum {
#define X(id, type, field, req) H_##id,
	HANDLE_FIELDS(X)
#undef X
	H_COUNT
};

static const struct adac_field_spec handle_specs[H_COUNT] = {
#define X(id, type, field, req) {type, field, 0, req},
	HANDLE_FIELDS(X)
#undef X
};

#define MAX_SEGMENT_HEADER 65536u  /* bytes before RgValue read from one TableSegment */

struct handles_state {
	uint32_t off[H_COUNT];
	uint8_t has[H_COUNT];
	uint64_t map;               /* &g_HandleTableMap */
	uint64_t buckets;           /* InitialHandleTableArraySize */
	uint64_t per_block;         /* HandlesPerBlock */
	uint64_t blocks;            /* HandleBlocksPerSegment */
	uint64_t max_types;         /* HandleMaxInternalTypes */
	uint64_t block_invalid;     /* BlockInvalid */
	uint64_t destroyed;         /* DebugDestroyedHandleValue */
	uint64_t tables;            /* handle tables per bucket: 1, or TotalCpuCount on server GC */
};

static void free_state(void *p) { free(p); }

static int init_state(struct adac_runtime *rt, struct handles_state **out, struct adac_error *err)
{
	struct handles_state *s = adac_runtime_slot(rt, ADAC_SLOT_GC_HANDLES);
	if (s) {
		*out = s;
		return 0;
	}
	const struct adac_gc_info *gi = adac_gc_info(rt, err);
	if (!gi)
		return -1;
	s = calloc(1, sizeof *s);
	if (!s)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	s->tables = 1;
	if (adac_desc_resolve(rt->desc, handle_specs, H_COUNT, s->off, s->has, err) ||
	    adac_desc_global(rt->desc, "HandleTableMap", &s->map, err) ||
	    adac_desc_global(rt->desc, "InitialHandleTableArraySize", &s->buckets, err) ||
	    adac_desc_global(rt->desc, "HandlesPerBlock", &s->per_block, err) ||
	    adac_desc_global(rt->desc, "HandleBlocksPerSegment", &s->blocks, err) ||
	    adac_desc_global(rt->desc, "HandleMaxInternalTypes", &s->max_types, err) ||
	    adac_desc_global(rt->desc, "BlockInvalid", &s->block_invalid, err) ||
	    adac_desc_global(rt->desc, "DebugDestroyedHandleValue", &s->destroyed, err))
		goto fail;
	if (gi->server) {
		uint64_t where;
		uint32_t n;
		if (adac_desc_global(rt->desc, "TotalCpuCount", &where, err) || adac_read_u32(rt->t, where, &n, err))
			goto fail;
		s->tables = n;
	}
	if (!s->per_block || s->per_block > 4096 || !s->blocks || s->blocks > 255 || !s->max_types ||
	    s->max_types > 64 || s->buckets > 4096 || s->tables > 4096 || s->off[H_SEG_VALUE] > MAX_SEGMENT_HEADER) {
		adac_fail(err, ADAC_E_CORRUPT, 0,
		          "handle table constants out of range (HandlesPerBlock %llu, HandleBlocksPerSegment %llu, "
		          "HandleMaxInternalTypes %llu, InitialHandleTableArraySize %llu, tables %llu)",
		          (unsigned long long)s->per_block, (unsigned long long)s->blocks,
		          (unsigned long long)s->max_types, (unsigned long long)s->buckets, (unsigned long long)s->tables);
		goto fail;
	}
	/* A segment's header (what lies before RgValue) is read once: its per-block and per-type bytes
	 * must lie in it. */
	if (s->off[H_SEG_ALLOCATION] + s->blocks > s->off[H_SEG_VALUE] ||
	    s->off[H_SEG_USER_DATA] + s->blocks > s->off[H_SEG_VALUE] ||
	    s->off[H_SEG_TAIL] + s->max_types > s->off[H_SEG_VALUE]) {
		adac_fail(err, ADAC_E_CORRUPT, 0, "TableSegment's RgAllocation, RgUserData or RgTail (+0x%x, +0x%x, "
		          "+0x%x) not before its RgValue (+0x%x)", s->off[H_SEG_ALLOCATION], s->off[H_SEG_USER_DATA],
		          s->off[H_SEG_TAIL], s->off[H_SEG_VALUE]);
		goto fail;
	}
	adac_runtime_set_slot(rt, ADAC_SLOT_GC_HANDLES, s, free_state);
	*out = s;
	return 0;
fail:
	free(s);
	adac_error_wrap(err, "GC handle tables: ");
	return -1;
}

const char *adac_handle_type_name(uint32_t type, char *buf, size_t size)
{
	static const char *const names[] = {
		"weak short", "weak long", "strong", "pinned", "variable", "ref counted", "dependent",
		"async pinned", "sized ref", "weak native COM", "weak interior pointer", "cross reference",
	};
	if (type < sizeof names / sizeof names[0])
		return names[type];
	snprintf(buf, size, "type %u", type);
	return buf;
}

bool adac_handle_type_is_root(uint32_t type)
{
	return type == ADAC_HANDLE_STRONG || type == ADAC_HANDLE_PINNED || type == ADAC_HANDLE_ASYNC_PINNED ||
	       type == ADAC_HANDLE_SIZED_REF;
}

struct seg_walk {
	struct adac_runtime *rt;
	const struct handles_state *s;
	adac_gc_handle_cb cb;
	void *ctx;
	uint64_t count;
};

/* The handles of one segment, type by type. 1: cb stopped. */
static int walk_segment(struct seg_walk *w, uint64_t seg, const uint8_t *hdr, struct adac_error *err)
{
	const struct handles_state *s = w->s;
	unsigned ps = adac_target_ptr_size(w->rt->t);
	const uint8_t *alloc = hdr + s->off[H_SEG_ALLOCATION], *tail = hdr + s->off[H_SEG_TAIL];
	const uint8_t *user = hdr + s->off[H_SEG_USER_DATA];
	uint64_t values = seg + s->off[H_SEG_VALUE];
	for (uint32_t type = 0; type < s->max_types; type++) {
		if (tail[type] == s->block_invalid || tail[type] >= s->blocks)
			continue;
		uint8_t head = alloc[tail[type]], block = head;
		for (uint64_t n = 0; n < s->blocks; n++) {
			if (block >= s->blocks)
				return adac_fail(err, ADAC_E_CORRUPT, seg, "handle segment 0x%llx: block %u out of range",
				                 (unsigned long long)seg, block);
			uint8_t buf[4096 * 8];
			size_t len = (size_t)(s->per_block * ps);
			uint64_t first = values + (uint64_t)block * s->per_block * ps;
			if (adac_read(w->rt->t, first, buf, len, err)) {
				adac_error_wrap(err, "handle segment 0x%llx, block %u: ", (unsigned long long)seg, block);
				return -1;
			}
			for (uint64_t k = 0; k < s->per_block; k++) {
				uint64_t v = ps == 8 ? adac_get_u64(buf, k * ps) : adac_get_u32(buf, k * ps);
				if (!v || v == s->destroyed)
					continue;
				if (++w->count > ADAC_MAX_GC_HANDLES)
					return adac_fail(err, ADAC_E_LIMIT, seg, "more than ADAC_MAX_GC_HANDLES (%u) GC handles",
					                 ADAC_MAX_GC_HANDLES);
				struct adac_gc_handle h = {.handle = first + k * ps, .object = v, .type = type};
				if ((type == ADAC_HANDLE_DEPENDENT || type == ADAC_HANDLE_WEAK_INTERIOR) &&
				    user[block] != s->block_invalid && user[block] < s->blocks &&
				    adac_read_ptr(w->rt->t, values + ((uint64_t)user[block] * s->per_block + k) * ps, &h.secondary,
				                  NULL))
					h.secondary = 0;
				if (w->cb(w->ctx, &h))
					return 1;
			}
			block = alloc[block];
			if (block == head)
				break;
		}
	}
	return 0;
}

static int walk_table(struct seg_walk *w, uint64_t table, struct adac_error *err)
{
	const struct handles_state *s = w->s;
	uint64_t seg;
	if (adac_read_ptr(w->rt->t, table + s->off[H_TABLE_SEGMENTS], &seg, err)) {
		adac_error_wrap(err, "HandleTable 0x%llx: ", (unsigned long long)table);
		return -1;
	}
	uint8_t *hdr = malloc(s->off[H_SEG_VALUE]);
	if (!hdr)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	int rc = 0;
	uint64_t first = seg;
	for (unsigned n = 0; seg && !rc; n++) {
		if (n >= ADAC_MAX_HANDLE_SEGMENTS) {
			rc = adac_fail(err, ADAC_E_LIMIT, seg, "more than ADAC_MAX_HANDLE_SEGMENTS (%u) segments in handle "
			               "table 0x%llx", ADAC_MAX_HANDLE_SEGMENTS, (unsigned long long)table);
			break;
		}
		uint64_t next = 0;
		if (adac_read(w->rt->t, seg, hdr, s->off[H_SEG_VALUE], err) ||
		    adac_read_ptr(w->rt->t, seg + s->off[H_SEG_NEXT], &next, err)) {
			adac_error_wrap(err, "handle segment 0x%llx: ", (unsigned long long)seg);
			rc = -1;
			break;
		}
		rc = walk_segment(w, seg, hdr, err);
		if (!rc && next == first) {
			rc = adac_fail(err, ADAC_E_CORRUPT, seg, "the segment list of handle table 0x%llx loops back to its start",
			               (unsigned long long)table);
			break;
		}
		seg = next;
	}
	free(hdr);
	return rc;
}

int adac_gc_handles(struct adac_runtime *rt, adac_gc_handle_cb cb, void *ctx, struct adac_error *err)
{
	struct handles_state *s;
	if (init_state(rt, &s, err))
		return -1;
	unsigned ps = adac_target_ptr_size(rt->t);
	struct seg_walk w = {rt, s, cb, ctx, 0};
	uint64_t map = s->map;
	for (unsigned m = 0; map; m++) {
		if (m >= ADAC_MAX_HANDLE_MAPS)
			return adac_fail(err, ADAC_E_LIMIT, map, "more than ADAC_MAX_HANDLE_MAPS (%u) handle table maps",
			                 ADAC_MAX_HANDLE_MAPS);
		uint64_t buckets, next;
		if (adac_read_ptr(rt->t, map + s->off[H_MAP_BUCKETS], &buckets, err) ||
		    adac_read_ptr(rt->t, map + s->off[H_MAP_NEXT], &next, err)) {
			adac_error_wrap(err, "HandleTableMap 0x%llx: ", (unsigned long long)map);
			return -1;
		}
		for (uint64_t i = 0; buckets && i < s->buckets; i++) {
			uint64_t bucket, tables;
			if (adac_read_ptr(rt->t, buckets + i * ps, &bucket, err)) {
				adac_error_wrap(err, "HandleTableMap 0x%llx, bucket %llu: ", (unsigned long long)map,
				                (unsigned long long)i);
				return -1;
			}
			if (!bucket)
				continue;
			if (adac_read_ptr(rt->t, bucket + s->off[H_BUCKET_TABLE], &tables, err)) {
				adac_error_wrap(err, "HandleTableBucket 0x%llx: ", (unsigned long long)bucket);
				return -1;
			}
			for (uint64_t j = 0; tables && j < s->tables; j++) {
				uint64_t table;
				if (adac_read_ptr(rt->t, tables + j * ps, &table, err)) {
					adac_error_wrap(err, "HandleTableBucket 0x%llx, table %llu: ", (unsigned long long)bucket,
					                (unsigned long long)j);
					return -1;
				}
				int rc = table ? walk_table(&w, table, err) : 0;
				if (rc)
					return rc < 0 ? -1 : 0;
			}
		}
		map = next;
	}
	return 0;
}

/* The ready lists of one CFinalize. 1: cb stopped. */
static int finalize_queue(struct adac_runtime *rt, const struct handles_state *s, uint64_t cf, uint64_t fills,
                          uint64_t gens, adac_finalizer_cb cb, void *ctx, struct adac_error *err)
{
	unsigned ps = adac_target_ptr_size(rt->t);
	uint64_t lo, hi, at = cf + s->off[H_FIN_FILL];
	if (fills < gens + 2 || !gens)
		return adac_fail(err, ADAC_E_CORRUPT, cf, "CFinalizeFillPointersLength %llu is less than the %llu "
		                 "generations plus 2", (unsigned long long)fills, (unsigned long long)gens);
	if (adac_read_ptr(rt->t, at + (gens - 1) * ps, &lo, err) || adac_read_ptr(rt->t, at + (gens + 1) * ps, &hi, err)) {
		adac_error_wrap(err, "CFinalize 0x%llx: ", (unsigned long long)cf);
		return -1;
	}
	if (hi < lo || (hi - lo) / ps > ADAC_MAX_GC_ROOTS)
		return adac_fail(err, ADAC_E_CORRUPT, cf, "CFinalize 0x%llx: ready lists 0x%llx..0x%llx out of order or "
		                 "longer than ADAC_MAX_GC_ROOTS", (unsigned long long)cf, (unsigned long long)lo,
		                 (unsigned long long)hi);
	for (uint64_t slot = lo; slot + ps <= hi; slot += ps) {
		uint64_t obj;
		if (adac_read_ptr(rt->t, slot, &obj, err)) {
			adac_error_wrap(err, "finalization queue: ");
			return -1;
		}
		if (obj && cb(ctx, slot, obj))
			return 1;
	}
	return 0;
}

int adac_gc_finalizer_ready(struct adac_runtime *rt, adac_finalizer_cb cb, void *ctx, struct adac_error *err)
{
	struct handles_state *s;
	if (init_state(rt, &s, err))
		return -1;
	const struct adac_gc_info *gi = adac_gc_info(rt, err);
	uint64_t fills, gens;
	if (!gi)
		return -1;
	if (!s->has[H_FIN_FILL] || adac_desc_global(rt->desc, "CFinalizeFillPointersLength", &fills, err) ||
	    adac_desc_global(rt->desc, "TotalGenerationCount", &gens, err)) {
		if (!adac_failed(err))
			adac_fail(err, ADAC_E_LAYOUT, 0, "the runtime does not describe CFinalize.FillPointers");
		adac_error_wrap(err, "finalization queue: ");
		return -1;
	}
	int rc = 0;
	if (!gi->server) {
		uint64_t where, cf;
		if (adac_desc_global(rt->desc, "GCHeapFinalizeQueue", &where, err) || adac_read_ptr(rt->t, where, &cf, err)) {
			adac_error_wrap(err, "finalization queue: ");
			return -1;
		}
		rc = cf ? finalize_queue(rt, s, cf, fills, gens, cb, ctx, err) : 0;
	} else {
		if (!s->has[H_HEAP_FINALIZE]) {
			return adac_fail(err, ADAC_E_LAYOUT, 0, "finalization queue: the runtime does not describe "
			                 "GCHeap.FinalizeQueue");
		}
		for (unsigned i = 0; i < gi->heap_count && !rc; i++) {
			uint64_t cf;
			if (adac_read_ptr(rt->t, gi->heaps[i].addr + s->off[H_HEAP_FINALIZE], &cf, err)) {
				adac_error_wrap(err, "finalization queue of heap %u: ", i);
				return -1;
			}
			rc = cf ? finalize_queue(rt, s, cf, fills, gens, cb, ctx, err) : 0;
		}
	}
	return rc < 0 ? -1 : 0;
}
