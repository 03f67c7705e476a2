/* gc_heap.c - GC contract: heaps, generation tables, regions/segments, allocation contexts, and
 * the object walk over them (block reads, cached MethodTable sizes). See gc_heap.h. */
#include "runtime/gc_heap.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/addr_map.h"
#include "base/cpus.h"
#include "base/cursor.h"
#include "base/grow.h"
#include "base/limits.h"
#include "base/output.h"
#include "runtime/descriptor.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "runtime/threads.h"
#include "target/target.h"

/* Every field the GC walk reads. Width 8 on pointer fields is patched to the target's pointer
 * size at resolution. Flavour-specific fields are optional here and demanded by need() once the
 * flavour (GCIdentifiers) is known. */
#define GC_FIELDS(X)                                                                   \
	X(GEN_SIZE, "Generation", NULL, 0, true)                                           \
	X(GEN_ALLOC_CONTEXT, "Generation", "AllocationContext", 0, true)                   \
	X(GEN_START_SEGMENT, "Generation", "StartSegment", 8, true)                        \
	X(GEN_ALLOCATION_START, "Generation", "AllocationStart", 8, false)                 \
	X(AC_POINTER, "GCAllocContext", "Pointer", 8, true)                                \
	X(AC_LIMIT, "GCAllocContext", "Limit", 8, true)                                    \
	X(SEG_ALLOCATED, "HeapSegment", "Allocated", 8, true)                              \
	X(SEG_COMMITTED, "HeapSegment", "Committed", 8, true)                              \
	X(SEG_RESERVED, "HeapSegment", "Reserved", 8, true)                                \
	X(SEG_USED, "HeapSegment", "Used", 8, true)                                        \
	X(SEG_MEM, "HeapSegment", "Mem", 8, true)                                          \
	X(SEG_FLAGS, "HeapSegment", "Flags", 8, true)                                      \
	X(SEG_NEXT, "HeapSegment", "Next", 8, true)                                        \
	X(HEAP_GENERATION_TABLE, "GCHeap", "GenerationTable", 0, false)                    \
	X(HEAP_ALLOC_ALLOCATED, "GCHeap", "AllocAllocated", 8, false)                      \
	X(HEAP_EPHEMERAL_SEGMENT, "GCHeap", "EphemeralHeapSegment", 8, false)              \
	X(HEAP_FREE_REGIONS, "GCHeap", "FreeRegions", 0, false)                            \
	X(FREE_LIST_SIZE, "RegionFreeList", NULL, 0, false)                                \
	X(FREE_LIST_HEAD, "RegionFreeList", "HeadFreeRegion", 8, false)                    \
	X(EE_AC_GC_CONTEXT, "EEAllocContext", "GCAllocationContext", 0, true)              \
	X(TS_FIRST_THREAD, "ThreadStore", "FirstThreadLink", 8, true)                      \
	X(TH_LINK_NEXT, "Thread", "LinkNext", 8, true)                                     \
	X(TH_RUNTIME_LOCALS, "Thread", "RuntimeThreadLocals", 8, true)                     \
	X(RTL_ALLOC_CONTEXT, "RuntimeThreadLocals", "AllocContext", 0, true)               \
	X(MT_FLAGS, "MethodTable", "MTFlags", 4, true)                                     \
	X(MT_BASE_SIZE, "MethodTable", "BaseSize", 4, true)

enum {
#define X(id, type, field, width, req) F_##id,
	GC_FIELDS(X)
#undef X
	F_COUNT
};

static const struct adac_field_spec gc_specs[F_COUNT] = {
#define X(id, type, field, width, req) {type, field, width, req},
	GC_FIELDS(X)
#undef X
};

#define MT_HAS_COMPONENT_SIZE 0x80000000u  /* MTFlags: the low 16 bits are the component size */
#define SEG_FLAG_READONLY 0x1u             /* heap_segment_flags_readonly: a frozen segment */
#define LARGE_OBJECT_SIZE 85000u           /* from this size objects go to the LOH, never in an
                                           * allocation context */
#define GEN_LOH 3u                         /* generation table entries after max_generation */
#define GEN_POH 4u

/* What the walk keeps per MethodTable. */
struct mt_entry {
	uint64_t mt;       /* the key */
	uint32_t base_size;
	uint16_t component_size;
	bool has_components;
};

struct gc_state {
	uint32_t off[F_COUNT];
	uint8_t has[F_COUNT];
	const struct adac_object_layout *object; /* where an object keeps its MethodTable */
	uint32_t mt_span;          /* bytes read per MethodTable (MTFlags and BaseSize) */
	struct adac_gc_info info;  /* filled once */
	bool info_ready;
	char *identifiers;
	struct adac_gc_heap_info *heaps;
	struct adac_gc_region *regions;
	size_t nregions, cap_regions;
	struct adac_gc_region *free_regions;
	size_t nfree, cap_free;
	struct adac_gc_alloc_context *contexts;
	size_t ncontexts, cap_contexts;
	struct adac_addr_map mts;  /* struct mt_entry by MethodTable */
	pthread_mutex_t lock;      /* a split walk's shared state: mts, the target, the runtime */
};

static void free_state(void *p)
{
	struct gc_state *s = p;
	if (!s)
		return;
	free(s->identifiers);
	free(s->heaps);
	free(s->regions);
	free(s->free_regions);
	free(s->contexts);
	adac_addr_map_free(&s->mts);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* A required field of the running flavour: the descriptor's own "no field" error when absent. */
static int need(const struct adac_runtime *rt, const struct gc_state *s, int id, struct adac_error *err)
{
	if (s->has[id])
		return 0;
	uint32_t ignored;
	if (gc_specs[id].field)
		return adac_desc_field(rt->desc, gc_specs[id].type, gc_specs[id].field, &ignored, err);
	return adac_desc_type_size(rt->desc, gc_specs[id].type, &ignored, err);
}

static int init_state(struct adac_runtime *rt, struct gc_state **out, struct adac_error *err)
{
	struct gc_state *s = adac_runtime_slot(rt, ADAC_SLOT_GC);
	if (s) {
		*out = s;
		return 0;
	}
	const struct adac_descriptor *d = rt->desc;
	if (!adac_desc_contract(d, "GC") && !adac_desc_has_type(d, "HeapSegment"))
		return adac_fail(err, ADAC_E_LAYOUT, 0,
		                 "the runtime (%s) has no GC sub-descriptor (no GC contract, no HeapSegment type)",
		                 adac_desc_global_string(d, "RuntimeProductVersionString")
		                     ? adac_desc_global_string(d, "RuntimeProductVersionString")
		                     : "of unknown version");
	s = calloc(1, sizeof *s);
	if (!s || pthread_mutex_init(&s->lock, NULL) != 0) {
		free(s);
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	}
	struct adac_field_spec specs[F_COUNT];
	unsigned ps = adac_desc_ptr_size(d);
	for (int i = 0; i < F_COUNT; i++) {
		specs[i] = gc_specs[i];
		if (specs[i].width == 8)
			specs[i].width = (uint8_t)ps;
	}
	if (adac_desc_resolve(d, specs, F_COUNT, s->off, s->has, err)) {
		free_state(s);
		return -1;
	}
	if (adac_object_layout(rt, &s->object, err)) {
		free_state(s);
		return -1;
	}
	if (!s->object->has_array) {
		free_state(s);
		return adac_fail(err, ADAC_E_LAYOUT, 0, "GC heap: the runtime's descriptor does not describe Array.m_NumComponents");
	}
	uint32_t a = s->off[F_MT_FLAGS] + 4, b = s->off[F_MT_BASE_SIZE] + 4;
	s->mt_span = a > b ? a : b;
	if (s->mt_span > ADAC_MAX_TYPE_SIZE) {
		adac_fail(err, ADAC_E_LAYOUT, 0, "MethodTable.MTFlags/BaseSize end at %u (limit %u)", s->mt_span,
		          ADAC_MAX_TYPE_SIZE);
		free_state(s);
		return -1;
	}
	adac_runtime_set_slot(rt, ADAC_SLOT_GC, s, free_state);
	*out = s;
	return 0;
}

/* ---- small helpers ---------------------------------------------------------------------------- */

static uint64_t get_ptr(const uint8_t *buf, uint32_t off, unsigned ps)
{
	return ps == 8 ? adac_get_u64(buf, off) : adac_get_u32(buf, off);
}

static int read_global_ptr(struct adac_runtime *rt, const char *name, uint64_t *out, struct adac_error *err)
{
	uint64_t where;
	if (adac_desc_global(rt->desc, name, &where, err))
		return -1;
	if (adac_read_ptr(rt->t, where, out, err)) {
		adac_error_wrap(err, "%s: ", name);
		return -1;
	}
	return 0;
}

static int grow(void **arr, size_t *cap, size_t want, size_t elem, struct adac_error *err)
{
	return adac_grow(arr, cap, want, elem, 64) ? adac_fail(err, ADAC_E_NOMEM, 0, "out of memory") : 0;
}

/* Region addresses, each tagged with the list it was found in. */
struct seen_rec {
	uint64_t region;
	unsigned tag;
};

/* *tag_out = the tag already recorded (and returns 1), or records tag (returns 0); -1 on ENOMEM. */
static int seen_insert(struct adac_addr_map *set, uint64_t key, unsigned tag, unsigned *tag_out, struct adac_error *err)
{
	bool added;
	struct seen_rec *r = adac_addr_map_get(set, key, sizeof *r, &added);
	if (!r)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	if (!added) {
		*tag_out = r->tag;
		return 1;
	}
	r->tag = tag;
	return 0;
}

const char *adac_gc_kind_name(enum adac_gc_region_kind kind)
{
	switch (kind) {
	case ADAC_GC_GEN0: return "gen0";
	case ADAC_GC_GEN1: return "gen1";
	case ADAC_GC_GEN2: return "gen2";
	case ADAC_GC_LOH: return "loh";
	case ADAC_GC_POH: return "poh";
	case ADAC_GC_FROZEN: return "frozen";
	case ADAC_GC_EPHEMERAL: return "ephemeral";
	case ADAC_GC_FREE: return "free";
	}
	return "?";
}

/* ---- GC info ---------------------------------------------------------------------------------- */

/* GCIdentifiers is a comma-separated list ("workstation, regions, background,"). */
static bool has_identifier(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; *p;) {
		while (*p == ',' || *p == ' ')
			p++;
		const char *e = p;
		while (*e && *e != ',')
			e++;
		const char *t = e;
		while (t > p && t[-1] == ' ')
			t--;
		if ((size_t)(t - p) == n && strncmp(p, word, n) == 0)
			return true;
		p = e;
	}
	return false;
}

static int read_generations(struct adac_runtime *rt, struct gc_state *s, uint64_t table, unsigned count,
                            struct adac_gc_heap_info *h, struct adac_error *err)
{
	unsigned ps = s->info.ptr_size;
	uint32_t gsize = s->off[F_GEN_SIZE];
	size_t len = (size_t)gsize * count;
	uint8_t *buf = malloc(len ? len : 1);
	if (!buf)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	if (adac_read(rt->t, table, buf, len, err)) {
		free(buf);
		adac_error_wrap(err, "generation table at 0x%llx: ", (unsigned long long)table);
		return -1;
	}
	uint32_t ac = s->off[F_GEN_ALLOC_CONTEXT];
	if (ac + s->off[F_AC_LIMIT] + ps > gsize || ac + s->off[F_AC_POINTER] + ps > gsize) {
		free(buf);
		return adac_fail(err, ADAC_E_LAYOUT, 0, "Generation.AllocationContext does not fit the %u-byte Generation", gsize);
	}
	h->generation_count = count;
	for (unsigned g = 0; g < count; g++) {
		const uint8_t *e = buf + (size_t)g * gsize;
		struct adac_gc_generation *gen = &h->gen[g];
		gen->start_segment = get_ptr(e, s->off[F_GEN_START_SEGMENT], ps);
		gen->allocation_start = s->has[F_GEN_ALLOCATION_START] ? get_ptr(e, s->off[F_GEN_ALLOCATION_START], ps) : 0;
		gen->alloc_ptr = get_ptr(e, ac + s->off[F_AC_POINTER], ps);
		gen->alloc_limit = get_ptr(e, ac + s->off[F_AC_LIMIT], ps);
	}
	free(buf);
	return 0;
}

static int read_heaps(struct adac_runtime *rt, struct gc_state *s, unsigned ngen, struct adac_error *err)
{
	struct adac_gc_info *info = &s->info;
	unsigned ps = info->ptr_size;
	if (!info->server) {
		s->heaps = calloc(1, sizeof *s->heaps);
		if (!s->heaps)
			return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		info->heap_count = 1;
		uint64_t table;
		if (adac_desc_global(rt->desc, "GCHeapGenerationTable", &table, err) ||
		    read_global_ptr(rt, "GCHeapAllocAllocated", &s->heaps[0].alloc_allocated, err) ||
		    read_global_ptr(rt, "GCHeapEphemeralHeapSegment", &s->heaps[0].ephemeral_segment, err) ||
		    read_generations(rt, s, table, ngen, &s->heaps[0], err))
			return -1;
		return 0;
	}
	if (need(rt, s, F_HEAP_GENERATION_TABLE, err) || need(rt, s, F_HEAP_ALLOC_ALLOCATED, err) ||
	    need(rt, s, F_HEAP_EPHEMERAL_SEGMENT, err))
		return -1;
	uint64_t where, table;
	uint32_t n;
	if (adac_desc_global(rt->desc, "NumHeaps", &where, err) || adac_read_u32(rt->t, where, &n, err)) {
		adac_error_wrap(err, "NumHeaps: ");
		return -1;
	}
	if ((int32_t)n < 1)
		return adac_fail(err, ADAC_E_CORRUPT, where, "the server GC has %d heaps", (int32_t)n);
	if (n > ADAC_MAX_GC_HEAPS)
		return adac_fail(err, ADAC_E_LIMIT, where, "the server GC has %u heaps, more than ADAC_MAX_GC_HEAPS (%u)", n,
		                 ADAC_MAX_GC_HEAPS);
	if (read_global_ptr(rt, "Heaps", &table, err))
		return -1;
	uint8_t *ptrs = malloc((size_t)n * ps);
	s->heaps = calloc(n, sizeof *s->heaps);
	if (!ptrs || !s->heaps) {
		free(ptrs);
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	}
	info->heap_count = n;
	if (adac_read(rt->t, table, ptrs, (size_t)n * ps, err)) {
		free(ptrs);
		adac_error_wrap(err, "heap table: ");
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		struct adac_gc_heap_info *h = &s->heaps[i];
		h->addr = get_ptr(ptrs, i * ps, ps);
		if (!h->addr) {
			free(ptrs);
			return adac_fail(err, ADAC_E_CORRUPT, table, "server GC heap %u of %u is null", i, n);
		}
		if (adac_read_ptr(rt->t, h->addr + s->off[F_HEAP_ALLOC_ALLOCATED], &h->alloc_allocated, err) ||
		    adac_read_ptr(rt->t, h->addr + s->off[F_HEAP_EPHEMERAL_SEGMENT], &h->ephemeral_segment, err) ||
		    read_generations(rt, s, h->addr + s->off[F_HEAP_GENERATION_TABLE], ngen, h, err)) {
			free(ptrs);
			adac_error_wrap(err, "heap %u (0x%llx): ", i, (unsigned long long)h->addr);
			return -1;
		}
	}
	free(ptrs);
	return 0;
}

static uint32_t seg_span(const struct gc_state *s, unsigned ps)
{
	uint32_t span = 0;
	for (int i = F_SEG_ALLOCATED; i <= F_SEG_NEXT; i++)
		if (s->off[i] + ps > span)
			span = s->off[i] + ps;
	return span;
}

static int read_segment(struct adac_runtime *rt, struct gc_state *s, uint64_t addr, struct adac_gc_region *r,
                        struct adac_error *err)
{
	unsigned ps = s->info.ptr_size;
	uint8_t buf[ADAC_MAX_TYPE_SIZE];
	uint32_t span = seg_span(s, ps);
	if (span > sizeof buf)
		return adac_fail(err, ADAC_E_LAYOUT, 0, "HeapSegment fields end at %u (limit %zu)", span, sizeof buf);
	if (adac_read(rt->t, addr, buf, span, err)) {
		adac_error_wrap(err, "HeapSegment 0x%llx: ", (unsigned long long)addr);
		return -1;
	}
	memset(r, 0, sizeof *r);
	r->addr = addr;
	r->allocated = get_ptr(buf, s->off[F_SEG_ALLOCATED], ps);
	r->committed = get_ptr(buf, s->off[F_SEG_COMMITTED], ps);
	r->reserved = get_ptr(buf, s->off[F_SEG_RESERVED], ps);
	r->used = get_ptr(buf, s->off[F_SEG_USED], ps);
	r->mem = get_ptr(buf, s->off[F_SEG_MEM], ps);
	r->flags = get_ptr(buf, s->off[F_SEG_FLAGS], ps);
	r->next = get_ptr(buf, s->off[F_SEG_NEXT], ps);
	r->end = r->allocated;
	return 0;
}

static enum adac_gc_region_kind classify(const struct gc_state *s, const struct adac_gc_heap_info *h,
                                         const struct adac_gc_region *r, unsigned gen)
{
	if (r->flags & SEG_FLAG_READONLY)
		return ADAC_GC_FROZEN;
	if (gen == GEN_LOH)
		return ADAC_GC_LOH;
	if (gen == GEN_POH)
		return ADAC_GC_POH;
	if (s->info.use_regions)
		return gen == 0 ? ADAC_GC_GEN0 : gen == 1 ? ADAC_GC_GEN1 : ADAC_GC_GEN2;
	return r->addr == h->ephemeral_segment ? ADAC_GC_EPHEMERAL : ADAC_GC_GEN2;
}

/* Walks one region list (Generation.StartSegment or a free list) through HeapSegment.Next. A region
 * already found through another list ends this one (segments GC: gen0's and gen1's start segment is
 * the ephemeral segment, which gen2's list also reaches); one met twice in the same list is a cycle. */
static int collect_list(struct adac_runtime *rt, struct gc_state *s, struct adac_addr_map *seen, unsigned list_id,
                        uint64_t head, unsigned heap, unsigned gen, bool free_list, struct adac_error *err)
{
	const struct adac_gc_heap_info *h = &s->heaps[heap];
	for (uint64_t seg = head; seg;) {
		unsigned tag = 0;
		int r = seen_insert(seen, seg, list_id, &tag, err);
		if (r < 0)
			return -1;
		if (r == 1) {
			if (tag == list_id)
				return adac_fail(err, ADAC_E_CORRUPT, seg, "heap %u: the %s list loops back to region 0x%llx", heap,
				                 free_list ? "free region" : "generation", (unsigned long long)seg);
			return 0;
		}
		if (s->nregions + s->nfree >= ADAC_MAX_GC_REGIONS)
			return adac_fail(err, ADAC_E_LIMIT, seg, "more than ADAC_MAX_GC_REGIONS (%u) GC regions",
			                 ADAC_MAX_GC_REGIONS);
		struct adac_gc_region reg;
		if (read_segment(rt, s, seg, &reg, err)) {
			adac_error_wrap(err, "heap %u: ", heap);
			return -1;
		}
		reg.heap = heap;
		if (free_list) {
			reg.kind = ADAC_GC_FREE;
			if (grow((void **)&s->free_regions, &s->cap_free, s->nfree + 1, sizeof reg, err))
				return -1;
			s->free_regions[s->nfree++] = reg;
		} else {
			reg.kind = classify(s, h, &reg, gen);
			if (seg == h->ephemeral_segment)
				reg.end = h->alloc_allocated;
			if (grow((void **)&s->regions, &s->cap_regions, s->nregions + 1, sizeof reg, err))
				return -1;
			s->regions[s->nregions++] = reg;
		}
		seg = reg.next;
	}
	return 0;
}

static int collect_regions(struct adac_runtime *rt, struct gc_state *s, struct adac_error *err)
{
	const struct adac_gc_info *info = &s->info;
	struct adac_addr_map seen = {0};
	unsigned list_id = 0;
	int rc = 0;
	/* Free-region lists: GCHeapFreeRegions (workstation) or GCHeap.FreeRegions (server), each an
	 * array of CountFreeRegionKinds RegionFreeList. Listed for --segments only. */
	bool free_lists = info->use_regions && s->has[F_FREE_LIST_SIZE] && s->has[F_FREE_LIST_HEAD] &&
	                  adac_desc_has_global(rt->desc, "CountFreeRegionKinds") &&
	                  (info->server ? s->has[F_HEAP_FREE_REGIONS] : adac_desc_has_global(rt->desc, "GCHeapFreeRegions"));
	uint64_t kinds = 0;
	if (free_lists && adac_desc_global(rt->desc, "CountFreeRegionKinds", &kinds, err))
		return -1;
	if (kinds > 16)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "CountFreeRegionKinds is %llu", (unsigned long long)kinds);
	for (unsigned hi = 0; hi < info->heap_count && rc == 0; hi++) {
		const struct adac_gc_heap_info *h = &s->heaps[hi];
		/* gen2 first, then LOH, POH, then gen0 and gen1 (which, with segments, start in the
		 * ephemeral segment already found through gen2). */
		unsigned order[ADAC_MAX_GC_GENERATIONS], n = 0;
		for (unsigned g = info->max_generation; g < h->generation_count; g++)
			order[n++] = g;
		for (unsigned g = 0; g < info->max_generation && g < h->generation_count; g++)
			order[n++] = g;
		for (unsigned i = 0; i < n && rc == 0; i++)
			rc = collect_list(rt, s, &seen, ++list_id, h->gen[order[i]].start_segment, hi, order[i], false, err);
		if (rc || !free_lists)
			continue;
		uint64_t base = h->addr + s->off[F_HEAP_FREE_REGIONS];
		if (!info->server)
			rc = adac_desc_global(rt->desc, "GCHeapFreeRegions", &base, err);
		for (unsigned k = 0; k < kinds && rc == 0; k++) {
			uint64_t head;
			rc = adac_read_ptr(rt->t, base + (uint64_t)k * s->off[F_FREE_LIST_SIZE] + s->off[F_FREE_LIST_HEAD], &head, err);
			if (rc == 0)
				rc = collect_list(rt, s, &seen, ++list_id, head, hi, 0, true, err);
		}
	}
	adac_addr_map_free(&seen);
	return rc;
}

static int cmp_region(const void *a, const void *b)
{
	const struct adac_gc_region *x = a, *y = b;
	return x->mem < y->mem ? -1 : x->mem > y->mem ? 1 : 0;
}

static int cmp_context(const void *a, const void *b)
{
	const struct adac_gc_alloc_context *x = a, *y = b;
	return x->ptr < y->ptr ? -1 : x->ptr > y->ptr ? 1 : 0;
}

static int add_context(struct gc_state *s, uint64_t ptr, uint64_t limit, uint64_t thread, struct adac_error *err)
{
	if (ptr == 0 || ptr > limit)
		return 0;
	if (grow((void **)&s->contexts, &s->cap_contexts, s->ncontexts + 1, sizeof *s->contexts, err))
		return -1;
	s->contexts[s->ncontexts++] = (struct adac_gc_alloc_context){ptr, limit, thread};
	return 0;
}

/* Reads the GCAllocContext (Pointer, Limit) at addr. */
static int read_alloc_context(struct adac_runtime *rt, const struct gc_state *s, uint64_t addr, uint64_t *ptr,
                              uint64_t *limit, struct adac_error *err)
{
	return adac_read_ptr(rt->t, addr + s->off[F_AC_POINTER], ptr, err) ||
	               adac_read_ptr(rt->t, addr + s->off[F_AC_LIMIT], limit, err)
	           ? -1
	           : 0;
}

struct thread_contexts {
	struct adac_runtime *rt;
	struct gc_state *s;
	uint32_t gc_ctx;   /* EEAllocContext.GCAllocationContext */
};

/* One thread's allocation context. A thread without locals (not started, or exited) has no
 * context; one whose context cannot be read is counted, and if it had one, its region's walk fails
 * at the context. */
static int thread_context(void *ctx, uint64_t thread, struct adac_error *err)
{
	struct thread_contexts *w = ctx;
	struct gc_state *s = w->s;
	uint64_t locals, ptr, limit;
	struct adac_error ignored = {0};
	if (adac_read_ptr(w->rt->t, thread + s->off[F_TH_RUNTIME_LOCALS], &locals, &ignored) ||
	    (locals &&
	     read_alloc_context(w->rt, s, locals + s->off[F_RTL_ALLOC_CONTEXT] + w->gc_ctx, &ptr, &limit, &ignored)))
		s->info.threads_unreadable++;
	else if (locals && add_context(s, ptr, limit, thread, err))
		return -1;
	return 0;
}

/* The allocation contexts the walk must step over: the global one and every thread's. The thread
 * list is walked with threads.c's adac_thread_list_walk alone, not through its state, which also
 * resolves the thread-static layouts (ThreadLocalData, ...) that a heap walk has no use for.
 *
 * The list, as the real runtimes keep it: on .NET 11.0.0 the pointer at ThreadStore.FirstThreadLink
 * is the first Thread itself, and the pointer at Thread.LinkNext is the next Thread itself (checked
 * on live processes: each has its Id, OSId and RuntimeThreadLocals at the described offsets); on
 * .NET 10.0 they are SLink addresses, as the field names and the cDAC's Thread_1.cs at eae9047 read
 * them (Thread = link - LinkNext). adac_thread_list_walk tells them apart by ThreadStore.ThreadCount. */
static int collect_contexts(struct adac_runtime *rt, struct gc_state *s, struct adac_error *err)
{
	uint64_t ptr, limit, where;
	uint32_t gc_ctx = s->off[F_EE_AC_GC_CONTEXT];
	if (adac_desc_has_global(rt->desc, "GlobalAllocContext")) {
		if (adac_desc_global(rt->desc, "GlobalAllocContext", &where, err) ||
		    read_alloc_context(rt, s, where + gc_ctx, &ptr, &limit, err) || add_context(s, ptr, limit, 0, err)) {
			adac_error_wrap(err, "global allocation context: ");
			return -1;
		}
	}
	uint64_t store;
	if (read_global_ptr(rt, "ThreadStore", &store, err))
		return -1;
	if (store == 0)
		return 0; /* no managed thread yet */
	struct thread_contexts w = {rt, s, gc_ctx};
	return adac_thread_list_walk(rt, store, s->off[F_TS_FIRST_THREAD], s->off[F_TH_LINK_NEXT], thread_context, &w,
	                             err);
}

static int build_info(struct adac_runtime *rt, struct gc_state *s, struct adac_error *err)
{
	struct adac_gc_info *info = &s->info;
	const struct adac_descriptor *d = rt->desc;
	const char *ids = adac_desc_global_string(d, "GCIdentifiers");
	if (!ids)
		return adac_fail(err, ADAC_E_LAYOUT, 0, "the runtime's GC describes no GCIdentifiers");
	s->identifiers = strdup(ids);
	if (!s->identifiers)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	info->identifiers = s->identifiers;
	info->server = has_identifier(ids, "server");
	info->use_regions = has_identifier(ids, "regions");
	info->background = has_identifier(ids, "background");
	bool wks = has_identifier(ids, "workstation"), segments = has_identifier(ids, "segments");
	if (info->server == wks || info->use_regions == segments)
		return adac_fail(err, ADAC_E_UNSUPPORTED, 0,
		                 "unsupported GC flavour \"%s\" (want workstation or server, and regions or segments)", ids);
	info->ptr_size = adac_desc_ptr_size(d);
	info->min_object_size = 3 * info->ptr_size;
	uint64_t where, ngen;
	if (adac_desc_global(d, "MaxGeneration", &where, err) || adac_read_u32(rt->t, where, &info->max_generation, err)) {
		adac_error_wrap(err, "MaxGeneration: ");
		return -1;
	}
	if (adac_desc_global(d, "TotalGenerationCount", &ngen, err))
		return -1;
	if (ngen > ADAC_MAX_GC_GENERATIONS)
		return adac_fail(err, ADAC_E_LIMIT, 0, "TotalGenerationCount is %llu, more than ADAC_MAX_GC_GENERATIONS (%u)",
		                 (unsigned long long)ngen, ADAC_MAX_GC_GENERATIONS);
	if (info->max_generation < 1 || info->max_generation >= ngen)
		return adac_fail(err, ADAC_E_CORRUPT, where, "MaxGeneration %u does not fit %llu generation table entries",
		                 info->max_generation, (unsigned long long)ngen);
	if (!info->use_regions && need(rt, s, F_GEN_ALLOCATION_START, err))
		return -1;
	if (read_global_ptr(rt, "FreeObjectMethodTable", &info->free_mt, err))
		return -1;
	info->structures_valid = true;
	if (adac_desc_has_global(d, "StructureInvalidCount")) {
		uint32_t invalid;
		if (adac_desc_global(d, "StructureInvalidCount", &where, err) || adac_read_u32(rt->t, where, &invalid, err)) {
			adac_error_wrap(err, "StructureInvalidCount: ");
			return -1;
		}
		info->structures_valid = invalid == 0;
	}
	if (read_heaps(rt, s, (unsigned)ngen, err) || collect_regions(rt, s, err) || collect_contexts(rt, s, err))
		return -1;
	if (s->nregions)
		qsort(s->regions, s->nregions, sizeof *s->regions, cmp_region);
	if (s->ncontexts)
		qsort(s->contexts, s->ncontexts, sizeof *s->contexts, cmp_context);
	info->heaps = s->heaps;
	info->regions = s->regions;
	info->region_count = s->nregions;
	info->free_regions = s->free_regions;
	info->free_region_count = s->nfree;
	info->contexts = s->contexts;
	info->context_count = s->ncontexts;
	return 0;
}

const struct adac_gc_info *adac_gc_info(struct adac_runtime *rt, struct adac_error *err)
{
	struct gc_state *s;
	if (init_state(rt, &s, err))
		return NULL;
	if (s->info_ready)
		return &s->info;
	if (build_info(rt, s, err)) {
		/* Start over next time: drop what was collected. */
		free(s->identifiers);
		free(s->heaps);
		free(s->regions);
		free(s->free_regions);
		free(s->contexts);
		s->identifiers = NULL;
		s->heaps = NULL;
		s->regions = s->free_regions = NULL;
		s->contexts = NULL;
		s->nregions = s->cap_regions = s->nfree = s->cap_free = s->ncontexts = s->cap_contexts = 0;
		memset(&s->info, 0, sizeof s->info);
		adac_error_wrap(err, "GC heap: ");
		return NULL;
	}
	s->info_ready = true;
	return &s->info;
}

unsigned adac_gc_generation_of(const struct adac_gc_info *info, const struct adac_gc_region *r, uint64_t addr)
{
	switch (r->kind) {
	case ADAC_GC_GEN0: return 0;
	case ADAC_GC_GEN1: return 1;
	case ADAC_GC_LOH: return GEN_LOH;
	case ADAC_GC_POH: return GEN_POH;
	case ADAC_GC_EPHEMERAL: {
		const struct adac_gc_heap_info *h = &info->heaps[r->heap];
		if (h->generation_count > 1 && addr >= h->gen[0].allocation_start)
			return 0;
		if (h->generation_count > 1 && addr >= h->gen[1].allocation_start)
			return 1;
		return info->max_generation;
	}
	default: return info->max_generation;
	}
}

/* ---- the walk --------------------------------------------------------------------------------- */

/* MethodTable facts, read once per MT. The two fields are read here rather than through
 * methoddesc.c's RuntimeTypeSystem reader: the walk needs only MTFlags and BaseSize, for every
 * distinct MT of the heap, and must not depend on (or pay for) the rest of that contract. */
static int read_mt(struct adac_runtime *rt, const struct gc_state *s, uint64_t mt, struct mt_entry *e, struct adac_error *err)
{
	uint8_t buf[ADAC_MAX_TYPE_SIZE];
	if (mt % s->info.ptr_size)
		return adac_fail(err, ADAC_E_CORRUPT, mt, "MethodTable 0x%llx is not pointer-aligned", (unsigned long long)mt);
	if (adac_read(rt->t, mt, buf, s->mt_span, err))
		return -1;
	uint32_t flags = adac_get_u32(buf, s->off[F_MT_FLAGS]);
	e->mt = mt;
	e->base_size = adac_get_u32(buf, s->off[F_MT_BASE_SIZE]);
	e->has_components = (flags & MT_HAS_COMPONENT_SIZE) != 0;
	e->component_size = e->has_components ? (uint16_t)(flags & 0xffff) : 0;
	/* Smallest real base size: a string's (header, MT, length, terminator). */
	if (e->base_size < 2 * s->info.ptr_size || e->base_size > (1u << 30))
		return adac_fail(err, ADAC_E_CORRUPT, mt, "MethodTable 0x%llx has an absurd BaseSize %u",
		                 (unsigned long long)mt, e->base_size);
	return 0;
}

static int mt_lookup(struct adac_runtime *rt, struct gc_state *s, uint64_t mt, const struct mt_entry **out,
                     struct adac_error *err)
{
	if ((*out = adac_addr_map_find(&s->mts, mt)))
		return 0;
	struct mt_entry e, *slot;
	if (read_mt(rt, s, mt, &e, err))
		return -1;
	if (s->mts.used >= ADAC_MAX_GC_METHOD_TABLES)
		return adac_fail(err, ADAC_E_LIMIT, mt, "more than ADAC_MAX_GC_METHOD_TABLES (%u) distinct MethodTables",
		                 ADAC_MAX_GC_METHOD_TABLES);
	if (!(slot = adac_addr_map_get(&s->mts, mt, sizeof e, NULL)))
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	*slot = e;
	*out = slot;
	return 0;
}

/* A walk, split in parts: runs of regions, each walked by a thread of its own. */
struct walk {
	struct adac_runtime *rt;
	struct gc_state *s;
	const struct adac_gc_info *info;
	adac_gc_object_cb cb;
	uint32_t header;     /* bytes needed to size an object: MT and the component count */
	bool split;          /* parts run at once: the shared state (s->mts, the target) under s->lock */
	atomic_bool stop;    /* a callback stopped the walk, or a part failed for good */
	struct walk_part *parts;
	unsigned nparts;
	atomic_uint next;    /* the next part a thread claims */
	const struct adac_gc_walk_progress *progress; /* NULL: none */
	uint64_t total;      /* the regions' bytes, the progress's total */
};

/* A thread of the walk: it claims parts in order until none is left, with its read buffer. */
struct walk_thread {
	struct walk *w;
	uint8_t *window;     /* ADAC_GC_READ_BLOCK bytes */
	bool caller;         /* the thread that called the walk: it reports progress */
};

struct walk_part {
	struct walk *w;
	void *ctx;                      /* the callback's context for this part */
	size_t first, end;              /* its regions: [first, end) */
	uint8_t *window;                /* ADAC_GC_READ_BLOCK bytes */
	const uint8_t *bytes;           /* the window's: in window, or the target's lent in view */
	uint64_t win_base;              /* target address of bytes[0] */
	size_t win_len;                 /* bytes valid there */
	struct adac_target_view view;
	uint64_t prefetched;            /* in a view: the lines before this address are asked for */
	struct adac_addr_map mts;       /* split: the MT entries this part met, copied from s->mts */
	struct adac_gc_walk_report rep; /* this part's counts and region errors */
	size_t cap_errors;
	int rc;                         /* -1: the walk cannot go on (err: out of memory, a cap,
	                                 * interrupted) */
	struct adac_error err;
	bool caller;                    /* walked by the thread that called the walk */
	uint64_t walked;                /* region bytes before the region it walks, from its first */
	atomic_uint_least64_t done;     /* region bytes it walked, as of its last progress point */
};

/* The lock of a split walk's shared state (adac_gc_walk_lock for the callbacks). */
static void state_lock(struct gc_state *s) { pthread_mutex_lock(&s->lock); }
static void state_unlock(struct gc_state *s) { pthread_mutex_unlock(&s->lock); }

/* The entry of mt: from the shared cache, or in a split walk this part's copy of it. */
static int part_mt(struct walk_part *p, uint64_t mt, const struct mt_entry **out, struct adac_error *err)
{
	struct walk *w = p->w;
	if (!w->split)
		return mt_lookup(w->rt, w->s, mt, out, err);
	if ((*out = adac_addr_map_find(&p->mts, mt)))
		return 0;
	const struct mt_entry *shared;
	state_lock(w->s);
	int rc = mt_lookup(w->rt, w->s, mt, &shared, err);
	struct mt_entry e = rc ? (struct mt_entry){0} : *shared;
	state_unlock(w->s);
	if (rc)
		return -1;
	struct mt_entry *slot = adac_addr_map_get(&p->mts, mt, sizeof e, NULL);
	if (!slot)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	*slot = e;
	*out = slot;
	return 0;
}

/* Up to len bytes at addr into the part's window: in a split walk through the target's concurrent
 * read, and what that misses through the ordinary one, under the lock. */
static size_t part_read(struct walk_part *p, uint64_t addr, size_t len)
{
	struct walk *w = p->w;
	if (!w->split)
		return adac_read_upto(w->rt->t, addr, p->window, len);
	size_t got = adac_read_concurrent(w->rt->t, addr, p->window, len);
	if (got < len) {
		state_lock(w->s);
		got = adac_read_upto(w->rt->t, addr, p->window, len);
		state_unlock(w->s);
	}
	return got;
}

/* Makes [addr, addr + need) available in the window, reading up to ADAC_GC_READ_BLOCK bytes (not
 * past end) from addr. */
static int window_at(struct walk_part *p, uint64_t addr, uint64_t end, size_t need, struct adac_error *err)
{
	if (addr >= p->win_base && addr + need <= p->win_base + p->win_len)
		return 0;
	uint64_t want = end - addr;
	/* The target's bytes in place where it holds them in memory (a released process's copy): no
	 * copy. A core file's pages are read into the window: mapping them cost more (the read
	 * copies a page the cache has; a new mapping's page costs a fault, on a virtual machine
	 * several microseconds, the first time it is read). */
	struct adac_target *t = p->w->rt->t;
	adac_target_unview(t, &p->view);
	size_t lend = (size_t)(want < ADAC_GC_VIEW_BYTES ? want : ADAC_GC_VIEW_BYTES);
	if (!adac_target_view_maps(t) && adac_target_view(t, addr, lend, &p->view) && p->view.len >= need) {
		p->rep.bytes_read += p->view.len;
		p->bytes = p->view.bytes;
		p->win_base = addr;
		p->win_len = p->view.len;
		p->prefetched = addr;
		return 0;
	}
	adac_target_unview(t, &p->view);
	if (want > ADAC_GC_READ_BLOCK)
		want = ADAC_GC_READ_BLOCK;
	if (want < need)
		want = need;
	size_t got = part_read(p, addr, (size_t)want);
	p->rep.bytes_read += got;
	p->bytes = p->window;
	p->win_base = addr;
	p->win_len = got;
	if (got < need)
		return adac_fail(err, ADAC_E_READ, addr + got, "cannot read the object at 0x%llx (got %zu of %zu bytes)",
		                 (unsigned long long)addr, got, need);
	return 0;
}

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

/* The bytes from an object's start that give its size: its MethodTable and its component count. */
static uint32_t header_bytes(const struct gc_state *s, const struct adac_gc_info *info)
{
	uint32_t n = s->object->arr_len_off + 4;
	if (n < 2 * info->ptr_size)
		n = 2 * info->ptr_size;
	if (n < s->object->mt_offset + info->ptr_size)
		n = s->object->mt_offset + info->ptr_size;
	return n;
}

/* BaseSize + ComponentSize * count, from the object's first header_bytes. Nothing is smaller than
 * the minimum object: an empty string (22 bytes on x64) takes 24, and SOS and ClrMD report it so. */
static uint64_t object_size(const struct gc_state *s, const struct adac_gc_info *info, const struct mt_entry *e,
                            const uint8_t *p)
{
	uint64_t size = e->base_size;
	if (e->has_components)
		size += (uint64_t)adac_get_u32(p, s->object->arr_len_off) * e->component_size;
	return size < info->min_object_size ? info->min_object_size : size;
}

/* The largest object the walk reads whole when a window cuts it (the objects scans read fields of,
 * continuations and tasks, are a few hundred bytes). */
#define WHOLE_OBJECT_MAX (64u << 10)

/* In a view, every cache line up to PREFETCH_AHEAD bytes past obj is asked for as the walk goes:
 * the next object's header is where its predecessor's size says, a cache miss each (13 M objects
 * of a few hundred bytes took twice as long as pread's copy), but the lines in between are cheap
 * to stream. */
#define PREFETCH_AHEAD 2048u
#define CACHE_LINE 64u

static void prefetch_ahead(struct walk_part *p, uint64_t obj)
{
	uint64_t until = obj + PREFETCH_AHEAD, end = p->win_base + p->win_len;
	if (until > end)
		until = end;
	if (p->prefetched < obj)
		p->prefetched = obj;
	for (; p->prefetched < until; p->prefetched += CACHE_LINE)
		__builtin_prefetch(p->bytes + (p->prefetched - p->win_base));
}

/* Whether the object at obj, without a MethodTable, is one a thread is allocating: the next
 * allocation context's pointer (ptr) is already past it, by less than a large object, and its bytes
 * up to there are still the context's zeros (a live process stopped in the allocator between the
 * two, or a core made then). Anything else there is corruption. */
static bool being_allocated(struct walk_part *part, uint64_t obj, uint64_t ptr, uint64_t end)
{
	if (ptr <= obj || ptr > end || ptr - obj >= LARGE_OBJECT_SIZE)
		return false;
	struct adac_error ignored = {0};
	if (window_at(part, obj, end, (size_t)(ptr - obj), &ignored))
		return false;
	const uint8_t *p = part->bytes + (obj - part->win_base);
	for (size_t i = 0; i < ptr - obj; i++)
		if (p[i])
			return false;
	return true;
}

/* A progress point of a part at `at` bytes into the region it walks: the calling thread's parts
 * report for all and ask whether the user interrupted the command. 1 when it did: the part has
 * failed (ADAC_E_INTERRUPTED) and every part stops. */
static int progress_point(struct walk_part *p, uint64_t at)
{
	struct walk *w = p->w;
	atomic_store_explicit(&p->done, p->walked + at, memory_order_relaxed);
	if (!p->caller)
		return 0;
	uint64_t done = 0;
	for (unsigned k = 0; k < w->nparts; k++)
		done += atomic_load_explicit(&w->parts[k].done, memory_order_relaxed);
	adac_progress(w->progress->out, w->progress->phase, done < w->total ? done : w->total, w->total);
	if (!adac_interrupted(w->progress->out))
		return 0;
	adac_fail(&p->err, ADAC_E_INTERRUPTED, 0, "interrupted");
	p->rc = -1;
	atomic_store(&w->stop, true);
	return 1;
}

/* Walks one region; 1 when the walk stopped, 0 at the region's end, -1 with err at a bad object
 * (*objects says how many came before it). */
static int walk_region(struct walk_part *part, const struct adac_gc_region *r, uint64_t *objects,
                       struct adac_error *err)
{
	struct walk *w = part->w;
	const struct adac_gc_info *info = w->info;
	struct adac_gc_walk_report *rep = &part->rep;
	unsigned ps = info->ptr_size;
	*objects = 0;
	if (r->mem % ps)
		return adac_fail(err, ADAC_E_CORRUPT, r->mem, "first object 0x%llx is not pointer-aligned",
		                 (unsigned long long)r->mem);
	if (r->end < r->mem)
		return adac_fail(err, ADAC_E_CORRUPT, r->end, "objects end at 0x%llx, before they start at 0x%llx",
		                 (unsigned long long)r->end, (unsigned long long)r->mem);
	if (r->reserved > r->mem && r->end > r->reserved)
		return adac_fail(err, ADAC_E_CORRUPT, r->end, "objects end at 0x%llx, past the reserved end 0x%llx",
		                 (unsigned long long)r->end, (unsigned long long)r->reserved);
	rep->regions_walked++;
	rep->bytes_scanned += r->end - r->mem;
	/* LOH and POH objects are 8-byte aligned on every target (AlignQword). */
	uint64_t align = (r->kind == ADAC_GC_LOH || r->kind == ADAC_GC_POH) ? 8 : ps;
	uint64_t ctx_skip = align_up(info->min_object_size, align);
	bool contexts = r->kind != ADAC_GC_FROZEN;
	size_t ci = 0, nctx = info->context_count;
	const struct adac_gc_alloc_context *ctxs = info->contexts;
	while (ci < nctx && ctxs[ci].ptr < r->mem)
		ci++;
	uint64_t last_mt = 0;
	const struct mt_entry *e = NULL;
	uint64_t obj = r->mem;
	while (obj < r->end) {
		if (contexts) {
			while (ci < nctx && ctxs[ci].ptr < obj)
				ci++;
			if (ci < nctx && ctxs[ci].ptr == obj) {
				/* The unused part of an allocation context, and the gap the GC keeps after it. */
				uint64_t next = ctxs[ci].limit + ctx_skip;
				if (next <= obj)
					return adac_fail(err, ADAC_E_CORRUPT, obj, "allocation context at 0x%llx has a bad limit 0x%llx",
					                 (unsigned long long)obj, (unsigned long long)ctxs[ci].limit);
				obj = next;
				ci++;
				rep->contexts_skipped++;
				continue;
			}
		}
		if (r->end - obj < w->header)
			return adac_fail(err, ADAC_E_CORRUPT, obj, "object 0x%llx: only %llu bytes left before the end 0x%llx",
			                 (unsigned long long)obj, (unsigned long long)(r->end - obj), (unsigned long long)r->end);
		if (window_at(part, obj, r->end, w->header, err))
			return -1;
		const uint8_t *p = part->bytes + (obj - part->win_base);
		if (part->bytes == part->view.bytes)
			prefetch_ahead(part, obj);
		uint64_t mt = adac_object_mt_of(w->s->object, get_ptr(p, w->s->object->mt_offset, ps));
		if (mt == 0) {
			if (contexts && ci < nctx && being_allocated(part, obj, ctxs[ci].ptr, r->end)) {
				rep->objects_allocating++;
				obj = ctxs[ci].ptr;
				continue;
			}
			return adac_fail(err, ADAC_E_CORRUPT, obj, "object 0x%llx has a null MethodTable", (unsigned long long)obj);
		}
		if (mt != last_mt) {
			if (part_mt(part, mt, &e, err)) {
				adac_error_wrap(err, "object 0x%llx: ", (unsigned long long)obj);
				return -1;
			}
			last_mt = mt;
		}
		uint64_t size = object_size(w->s, info, e, p);
		uint64_t extent = align_up(size, align);
		if (extent > r->end - obj)
			return adac_fail(err, ADAC_E_CORRUPT, obj,
			                 "object 0x%llx (MethodTable 0x%llx) of %llu bytes runs past the end 0x%llx",
			                 (unsigned long long)obj, (unsigned long long)mt, (unsigned long long)size,
			                 (unsigned long long)r->end);
		if (mt == info->free_mt) {
			rep->free_objects++;
			rep->free_bytes += size;
		} else {
			size_t avail = part->win_len - (size_t)(obj - part->win_base);
			/* A small object the window cuts is read again whole, from its start, and the walk
			 * goes on in that window: its fields then come from the window, not one by one
			 * through the target's cache (which they would fill, 8 MB, at a window's end each). */
			if (avail < extent && extent <= WHOLE_OBJECT_MAX) {
				struct adac_error cut = {0}; /* (its tail unreadable: as much as can be read, as before) */
				if (window_at(part, obj, r->end, (size_t)extent, &cut) &&
				    window_at(part, obj, r->end, w->header, err))
					return -1;
				p = part->bytes + (obj - part->win_base);
				avail = part->win_len - (size_t)(obj - part->win_base);
			}
			struct adac_gc_object o = {
				.addr = obj,
				.mt = mt,
				.size = size,
				.extent = extent,
				.generation = adac_gc_generation_of(info, r, obj),
				.region = r,
				.data = p,
				.data_len = avail < extent ? avail : (size_t)extent,
				.before = (size_t)(obj - part->win_base),
			};
			rep->objects++;
			rep->object_bytes += size;
			(*objects)++;
			if (w->split && atomic_load_explicit(&w->stop, memory_order_relaxed))
				return 1;
			if (w->cb && w->cb(part->ctx, &o)) {
				atomic_store(&w->stop, true);
				return 1;
			}
			if (*objects % ADAC_GC_WALK_PROGRESS_EVERY == 0 && w->progress && progress_point(part, obj - r->mem))
				return 1;
		}
		obj += extent;
	}
	return 0;
}

/* Walks the part's regions, keeping each region's failure in its report. */
static void walk_part(struct walk_part *p)
{
	struct walk *w = p->w;
	for (size_t i = p->first; i < p->end; i++) {
		const struct adac_gc_region *reg = &w->info->regions[i];
		if (i > p->first)
			p->walked += adac_gc_region_bytes(&w->info->regions[i - 1]);
		if (w->progress && progress_point(p, 0)) {
			p->rep.stopped = true;
			break;
		}
		struct adac_error rerr = {0};
		uint64_t objects;
		int wr = walk_region(p, reg, &objects, &rerr);
		adac_target_unview(w->rt->t, &p->view);
		p->win_base = p->win_len = 0;
		if (wr > 0) {
			p->rep.stopped = true;
			break;
		}
		if (wr == 0)
			continue;
		if (rerr.code == ADAC_E_NOMEM || rerr.code == ADAC_E_LIMIT) {
			adac_error_copy(&p->err, &rerr);
			p->rc = -1;
			atomic_store(&w->stop, true);
			break;
		}
		adac_error_wrap(&rerr, "heap %u %s region 0x%llx: ", reg->heap, adac_gc_kind_name(reg->kind),
		                (unsigned long long)reg->addr);
		if (grow((void **)&p->rep.errors, &p->cap_errors, p->rep.error_count + 1, sizeof *p->rep.errors, &p->err)) {
			p->rc = -1;
			atomic_store(&w->stop, true);
			break;
		}
		p->rep.errors[p->rep.error_count++] = (struct adac_gc_region_error){reg, objects, rerr};
	}
}

/* Parts are more than threads, and claimed as threads get free: a part with more of what the
 * callback keeps (the continuations of a scan) takes longer than its bytes say. */
static void *walk_thread(void *arg)
{
	struct walk_thread *t = arg;
	struct walk *w = t->w;
	for (unsigned k; !atomic_load(&w->stop) && (k = atomic_fetch_add(&w->next, 1)) < w->nparts;) {
		w->parts[k].window = t->window;
		w->parts[k].caller = t->caller;
		walk_part(&w->parts[k]);
	}
	return NULL;
}

/* Cuts the regions into `parts` runs of about equal bytes: part k ends at the region whose middle
 * is past k + 1 parts' share. */
static void split_regions(const struct adac_gc_info *info, struct walk_part *part, unsigned parts)
{
	uint64_t total = adac_gc_heap_bytes(info), done = 0;
	size_t i = 0;
	for (unsigned k = 0; k < parts; k++) {
		part[k].first = i;
		uint64_t upto = total / parts * (k + 1);
		const struct adac_gc_region *r = info->regions;
		while (i < info->region_count && (k + 1 == parts || done + adac_gc_region_bytes(&r[i]) / 2 <= upto))
			done += adac_gc_region_bytes(&r[i++]);
		part[k].end = i;
	}
}

/* Adds part's report to r: counts, then its region errors (parts come in region order). */
static int merge_report(struct adac_gc_walk_report *r, size_t *cap_errors, struct walk_part *part,
                        struct adac_error *err)
{
	const struct adac_gc_walk_report *p = &part->rep;
	r->objects += p->objects;
	r->object_bytes += p->object_bytes;
	r->free_objects += p->free_objects;
	r->free_bytes += p->free_bytes;
	r->contexts_skipped += p->contexts_skipped;
	r->objects_allocating += p->objects_allocating;
	r->regions_walked += p->regions_walked;
	r->bytes_scanned += p->bytes_scanned;
	r->bytes_read += p->bytes_read;
	r->stopped |= p->stopped;
	if (!p->error_count)
		return 0;
	if (grow((void **)&r->errors, cap_errors, r->error_count + p->error_count, sizeof *r->errors, err))
		return -1;
	memcpy(r->errors + r->error_count, p->errors, p->error_count * sizeof *p->errors);
	r->error_count += p->error_count;
	return 0;
}

uint64_t adac_gc_heap_bytes(const struct adac_gc_info *info)
{
	uint64_t bytes = 0;
	for (size_t i = 0; i < info->region_count; i++)
		bytes += adac_gc_region_bytes(&info->regions[i]);
	return bytes;
}

unsigned adac_gc_walk_parts(struct adac_runtime *rt)
{
	const struct adac_gc_info *info = adac_gc_info(rt, NULL);
	if (!info || info->region_count < 2 || !adac_target_concurrent_reads(rt->t))
		return 1;
	unsigned asked;
	if (adac_env_count("ASYNCDAC_HEAP_PARTS", 1, ADAC_GC_WALK_MAX_PARTS, &asked))
		return asked;
	uint64_t parts = adac_cpus() < 2 ? 1 : (uint64_t)adac_cpus() * ADAC_GC_WALK_PARTS_PER_CPU;
	uint64_t bytes = adac_gc_heap_bytes(info);
	if (parts > bytes / ADAC_GC_WALK_PART_BYTES)
		parts = bytes / ADAC_GC_WALK_PART_BYTES;
	return parts < 1 ? 1u : parts > ADAC_GC_WALK_MAX_PARTS ? ADAC_GC_WALK_MAX_PARTS : (unsigned)parts;
}

int adac_gc_object_size(struct adac_runtime *rt, uint64_t addr, uint64_t *mt, uint64_t *size, struct adac_error *err)
{
	const struct adac_gc_info *info = adac_gc_info(rt, err);
	if (!info)
		return -1;
	const struct gc_state *s = adac_runtime_slot(rt, ADAC_SLOT_GC);
	uint8_t head[64];
	uint32_t n = header_bytes(s, info);
	if (n > sizeof head)
		return adac_fail(err, ADAC_E_LAYOUT, addr, "an object's header is %u bytes", n);
	if (adac_read(rt->t, addr, head, n, err))
		return -1;
	*mt = adac_object_mt_of(s->object, get_ptr(head, s->object->mt_offset, info->ptr_size));
	struct mt_entry e;
	if (!*mt)
		return adac_fail(err, ADAC_E_CORRUPT, addr, "object 0x%llx has a null MethodTable", (unsigned long long)addr);
	if (read_mt(rt, s, *mt, &e, err))
		return -1;
	*size = object_size(s, info, &e, head);
	return 0;
}

void adac_gc_walk_lock(struct adac_runtime *rt)
{
	struct gc_state *s = adac_runtime_slot(rt, ADAC_SLOT_GC);
	if (s)
		state_lock(s);
}

void adac_gc_walk_unlock(struct adac_runtime *rt)
{
	struct gc_state *s = adac_runtime_slot(rt, ADAC_SLOT_GC);
	if (s)
		state_unlock(s);
}

int adac_gc_walk_split(struct adac_runtime *rt, unsigned parts, adac_gc_object_cb cb, void *const ctxs[],
                       const struct adac_gc_walk_progress *progress, struct adac_gc_walk_report *rep,
                       struct adac_error *err)
{
	struct adac_gc_walk_report local;
	struct adac_gc_walk_report *r = rep ? rep : &local;
	memset(r, 0, sizeof *r);
	r->reruns = adac_target_runs(rt->t);
	const struct adac_gc_info *info = adac_gc_info(rt, err);
	if (!info)
		return -1;
	struct gc_state *s = adac_runtime_slot(rt, ADAC_SLOT_GC);
	if (parts < 1 || info->region_count < 2 || !adac_target_concurrent_reads(rt->t))
		parts = 1;
	if (parts > ADAC_GC_WALK_MAX_PARTS)
		parts = ADAC_GC_WALK_MAX_PARTS;
	struct walk_part part[ADAC_GC_WALK_MAX_PARTS];
	struct walk w = {.rt = rt, .s = s, .info = info, .cb = cb, .split = parts > 1, .parts = part, .nparts = parts,
	                 .progress = progress && progress->out ? progress : NULL, .total = adac_gc_heap_bytes(info)};
	atomic_init(&w.stop, false);
	atomic_init(&w.next, 0);
	w.header = header_bytes(s, info);
	memset(part, 0, sizeof part);
	split_regions(info, part, parts);
	for (unsigned k = 0; k < parts; k++) {
		part[k].w = &w;
		part[k].ctx = ctxs[k];
		atomic_init(&part[k].done, 0);
	}
	unsigned nthreads = parts < adac_cpus() ? parts : adac_cpus();
	struct walk_thread thread[ADAC_GC_WALK_MAX_PARTS];
	int rc = 0;
	/* (The windows go with the walk: a megabyte each that a held runtime would keep.) */
	for (unsigned k = 0; k < nthreads; k++) {
		thread[k] = (struct walk_thread){&w, malloc(ADAC_GC_READ_BLOCK), k == 0};
		if (!thread[k].window)
			nthreads = k; /* fewer threads, then */
	}
	if (nthreads == 0)
		rc = adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for the heap read buffer");
	/* Thread 0 is this one; the parts a thread that could not start would have claimed go to the
	 * others. */
	pthread_t tid[ADAC_GC_WALK_MAX_PARTS];
	bool started[ADAC_GC_WALK_MAX_PARTS] = {false};
	if (rc == 0) {
		for (unsigned k = 1; k < nthreads; k++)
			started[k] = pthread_create(&tid[k], NULL, walk_thread, &thread[k]) == 0;
		walk_thread(&thread[0]);
		for (unsigned k = 1; k < nthreads; k++)
			if (started[k])
				pthread_join(tid[k], NULL);
	}
	for (unsigned k = 0; k < nthreads; k++)
		free(thread[k].window);
	size_t cap_errors = 0;
	for (unsigned k = 0; k < parts; k++) {
		if (rc == 0 && part[k].rc) {
			adac_error_copy(err, &part[k].err);
			rc = -1;
		}
		if (rc == 0 && merge_report(r, &cap_errors, &part[k], err))
			rc = -1;
		adac_addr_map_free(&part[k].mts);
		free(part[k].rep.errors);
	}
	r->method_tables = s->mts.used;
	if (w.progress) { /* (the report ends with the walk: complete when nothing stopped it) */
		if (rc == 0)
			adac_progress(w.progress->out, w.progress->phase, w.total, w.total);
		adac_progress(w.progress->out, NULL, 0, 0);
	}
	if (rc == 0 && !rep && r->error_count) {
		adac_error_copy(err, &r->errors[0].err);
		if (r->error_count > 1)
			adac_error_wrap(err, "%zu regions could not be walked; first: ", r->error_count);
		rc = -1;
	}
	if (!rep || rc)
		adac_gc_walk_report_free(r);
	return rc;
}

int adac_gc_walk(struct adac_runtime *rt, adac_gc_object_cb cb, void *ctx, struct adac_gc_walk_report *rep,
                 struct adac_error *err)
{
	void *ctxs[1] = {ctx};
	return adac_gc_walk_split(rt, 1, cb, ctxs, NULL, rep, err);
}

int adac_gc_rerun(struct adac_runtime *rt, struct adac_error *err)
{
	unsigned runs = adac_target_runs(rt->t);
	if (!adac_target_can_run(rt->t) || runs >= ADAC_MAX_GC_RERUNS)
		return 0;
	struct adac_error e = {0};
	if (adac_target_run_briefly(rt->t, 1u << runs, &e)) {
		if (e.code == ADAC_E_UNSUPPORTED)
			return 0;
		adac_error_copy(err, &e);
		return -1;
	}
	if (!adac_runtime_refresh(rt))
		return adac_fail(err, ADAC_E_NO_RUNTIME, 0, "the runtime changed while the process ran");
	return 1;
}

int adac_gc_settle(struct adac_runtime *rt, struct adac_error *err)
{
	for (;;) {
		const struct adac_gc_info *info = adac_gc_info(rt, NULL);
		if (!info || info->structures_valid)
			return 0;
		int ran = adac_gc_rerun(rt, err);
		if (ran <= 0)
			return ran;
	}
}

const struct adac_gc_info *adac_gc_info_walkable(struct adac_runtime *rt, struct adac_error *err)
{
	return adac_gc_settle(rt, err) ? NULL : adac_gc_info(rt, err);
}

int adac_gc_walk_report_complete(const struct adac_gc_walk_report *rep, bool structures_valid, struct adac_error *err)
{
	if (!rep->error_count)
		return 0;
	/* What the process was doing comes before the first error, which can be long (the message is
	 * cut at ADAC_ERROR_MSG_MAX). */
	char why[128] = "";
	if (!rep->reruns && !structures_valid)
		snprintf(why, sizeof why, " of a process stopped during a garbage collection");
	else if (rep->reruns)
		snprintf(why, sizeof why, " of a process %slet run and stopped again %u time%s",
		         structures_valid ? "" : "stopped during a garbage collection, ", rep->reruns, rep->reruns == 1 ? "" : "s");
	return adac_fail(err, rep->errors[0].err.code, rep->errors[0].err.addr,
	                 "the heap walk stopped early in %zu of %llu regions%s (first: %s)", rep->error_count,
	                 (unsigned long long)rep->regions_walked, why, rep->errors[0].err.msg);
}

void adac_gc_walk_report_free(struct adac_gc_walk_report *rep)
{
	if (!rep)
		return;
	free(rep->errors);
	rep->errors = NULL;
	rep->error_count = 0;
}
