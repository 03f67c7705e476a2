/* gc_heap.h - the GC heap from the runtime's GC data (contract "GC", the GC sub-descriptor): heaps,
 * generation tables, regions or segments, allocation contexts, and a walk over every object.
 *
 * Supported flavours (GCIdentifiers): workstation and server, regions and segments. The layout of
 * each comes from the descriptor only: workstation heaps from the GCHeap* globals, server heaps from
 * NumHeaps/Heaps and the GCHeap type, generation tables of TotalGenerationCount Generation entries
 * (0, 1, 2, then LOH and POH), region/segment lists through HeapSegment.Next.
 *
 * What the walk yields is what ClrMD's ClrHeap.EnumerateObjects yields minus free objects:
 *   - each region/segment from Mem to Allocated (to the heap's AllocAllocated for its ephemeral
 *     region/segment), in address order;
 *   - object size = BaseSize + ComponentSize * count, count = the u32 at Array.m_NumComponents
 *     when MTFlags has HasComponentSize (0x80000000, low 16 bits the component size); the next
 *     object follows at the size aligned to the pointer size (8 bytes on LOH and POH). The size
 *     reported is the unaligned one, as SOS dumpheap and ClrMD's ClrObject.Size report it;
 *   - objects whose MethodTable is FreeObjectMethodTable are skipped (counted in the report);
 *   - allocation contexts (every thread's RuntimeThreadLocals.AllocContext and the global one) are
 *     skipped: at a context's Pointer the walk resumes at Limit + min object size, the gap the GC
 *     keeps after each context;
 *   - every object is checked: MethodTable non-null, readable and pointer-aligned, BaseSize at
 *     least 2 pointers (a smaller size is taken as the minimum object size, 3 pointers, as SOS and
 *     ClrMD do), and the object within the region. A bad object ends its region's walk with an error in
 *     the report; the other regions are still walked.
 * Region memory is parsed in place where the target holds it in memory (a released process's copy,
 * ADAC_GC_VIEW_BYTES at a time), else read in blocks of ADAC_GC_READ_BLOCK bytes (straight from the
 * backend, past the block cache; a core file) and parsed from that buffer; MethodTable facts are
 * cached per MT. */
#ifndef ADAC_GC_HEAP_H
#define ADAC_GC_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/limits.h"

struct adac_runtime;

/* Bytes of region memory read at once by the walk (>= 1 MiB; reads this large bypass the block
 * cache). 1 MiB rather than a whole 4 MiB region: the same throughput, fewer page faults. */
#define ADAC_GC_READ_BLOCK (1u << 20)
/* Bytes of region memory lent in place at once (adac_target_view of memory the target already
 * holds: a released process's copy), per thread of the walk. */
#define ADAC_GC_VIEW_BYTES (8u << 20)

enum adac_gc_region_kind {
	ADAC_GC_GEN0,       /* regions: a gen0 region */
	ADAC_GC_GEN1,       /* regions: a gen1 region */
	ADAC_GC_GEN2,       /* a gen2 region, or a segment holding only gen2 objects */
	ADAC_GC_LOH,        /* large object heap (generation table entry 3) */
	ADAC_GC_POH,        /* pinned object heap (entry 4) */
	ADAC_GC_FROZEN,     /* read-only (frozen/NonGC) segment: flag 0x1 */
	ADAC_GC_EPHEMERAL,  /* segments: the ephemeral segment (gen2 below gen1's start, then gen1, gen0) */
	ADAC_GC_FREE,       /* regions: on a free-region list; listed, never walked */
};

/* The name shown for a kind: "gen0", "gen1", "gen2", "loh", "poh", "frozen", "ephemeral", "free". */
const char *adac_gc_kind_name(enum adac_gc_region_kind kind);

/* One region (regions GC) or segment (segments GC): a HeapSegment. */
struct adac_gc_region {
	uint64_t addr;           /* the HeapSegment */
	uint64_t mem;            /* first object */
	uint64_t end;            /* end of objects: Allocated, or the heap's AllocAllocated for its ephemeral one */
	uint64_t allocated;      /* HeapSegment.Allocated as read */
	uint64_t committed;
	uint64_t reserved;
	uint64_t used;
	uint64_t flags;          /* HeapSegment.Flags (0x1 read-only, 0x8 LOH, 0x200 POH, ...) */
	uint64_t next;
	unsigned heap;           /* index of its heap (0 for workstation) */
	enum adac_gc_region_kind kind;
};

/* The bytes a region's objects span: end - mem, 0 when a bad region ends before it starts. */
static inline uint64_t adac_gc_region_bytes(const struct adac_gc_region *r)
{
	return r->end > r->mem ? r->end - r->mem : 0;
}

struct adac_gc_generation {
	uint64_t start_segment;      /* Generation.StartSegment */
	uint64_t allocation_start;   /* Generation.AllocationStart (segments GC only; 0 otherwise) */
	uint64_t alloc_ptr;          /* Generation.AllocationContext: Pointer, Limit */
	uint64_t alloc_limit;
};

struct adac_gc_heap_info {
	uint64_t addr;               /* the gc_heap (server), 0 for the workstation heap */
	uint64_t alloc_allocated;    /* AllocAllocated: end of objects in the ephemeral region/segment */
	uint64_t ephemeral_segment;  /* EphemeralHeapSegment */
	unsigned generation_count;
	struct adac_gc_generation gen[ADAC_MAX_GC_GENERATIONS];
};

/* An allocation context: [ptr, limit) is unused, and so are the min object size bytes after limit. */
struct adac_gc_alloc_context {
	uint64_t ptr;
	uint64_t limit;
	uint64_t thread;             /* the Thread, 0 for the global allocation context */
};

struct adac_gc_info {
	const char *identifiers;     /* GCIdentifiers as the runtime spells it */
	bool server, use_regions, background;  /* GCIdentifiers: server (else workstation), regions (else segments) */
	bool structures_valid;       /* StructureInvalidCount == 0 (false: stopped inside a GC) */
	uint32_t max_generation;     /* MaxGeneration (2) */
	unsigned ptr_size;
	uint32_t min_object_size;    /* 3 pointers */
	uint64_t free_mt;            /* FreeObjectMethodTable's value */
	unsigned heap_count;
	const struct adac_gc_heap_info *heaps;
	size_t region_count;         /* regions and segments that hold objects, sorted by mem */
	const struct adac_gc_region *regions;
	size_t free_region_count;    /* regions on the free lists (GCHeapFreeRegions / GCHeap.FreeRegions) */
	const struct adac_gc_region *free_regions;
	size_t context_count;        /* allocation contexts with ptr != 0 and ptr <= limit, sorted by ptr */
	const struct adac_gc_alloc_context *contexts;
	size_t threads_unreadable;   /* threads whose allocation context could not be read (skipped) */
};

/* The bytes all regions' objects span (adac_gc_region_bytes summed). */
uint64_t adac_gc_heap_bytes(const struct adac_gc_info *info);

/* The GC's heaps, generations, regions and allocation contexts, read once per runtime (the result
 * lives until the runtime closes). NULL with err: ADAC_E_UNSUPPORTED naming the GC flavour when
 * GCIdentifiers names neither workstation nor server, or neither regions nor segments; ADAC_E_LAYOUT
 * when a field or global the flavour needs is missing; ADAC_E_CORRUPT/READ/LIMIT for bad data. */
const struct adac_gc_info *adac_gc_info(struct adac_runtime *rt, struct adac_error *err);

/* One object, as the walk hands it to its callback. */
struct adac_gc_object {
	uint64_t addr;
	uint64_t mt;                 /* MethodTable (ObjectToMethodTableUnmask bits cleared) */
	uint64_t size;               /* BaseSize + ComponentSize * count, at least the minimum object size:
	                              * what SOS and ClrMD call its size */
	uint64_t extent;             /* size aligned: the bytes it occupies, up to the next object */
	unsigned generation;         /* 0, 1, 2, 3 (LOH), 4 (POH); frozen objects report max_generation */
	const struct adac_gc_region *region;
	const uint8_t *data;         /* the object's bytes from addr, as read by the walk ... */
	size_t data_len;             /* ... min(extent, what the read block holds), at least 2 pointers */
	size_t before;               /* bytes of the read block before data (its header, when at least the
	                              * header's offset: adac_header_offset) */
};

/* A walk's progress, for a front end's sink: `phase` ("walking the heap"), in heap bytes of
 * adac_gc_heap_bytes, reported on the thread that called the walk (its parts report for all) at
 * each region's start and every ADAC_GC_WALK_PROGRESS_EVERY objects in one; there it also asks
 * whether the user interrupted the command, and then the walk stops every part and fails with
 * ADAC_E_INTERRUPTED. The report ends when the walk returns. */
struct adac_out;
struct adac_gc_walk_progress {
	struct adac_out *out;
	const char *phase;
};
#define ADAC_GC_WALK_PROGRESS_EVERY 65536u

/* Returns non-zero to stop the walk early (that is not an error). */
typedef int (*adac_gc_object_cb)(void *ctx, const struct adac_gc_object *obj);

/* A region whose walk ended early. */
struct adac_gc_region_error {
	const struct adac_gc_region *region;
	uint64_t objects_before;     /* objects walked in that region before the failure */
	struct adac_error err;       /* names the bad address and why */
};

/* What a walk did. Free it with adac_gc_walk_report_free. */
struct adac_gc_walk_report {
	uint64_t objects;            /* objects handed to the callback */
	uint64_t object_bytes;       /* their total size (unaligned, as SOS counts) */
	uint64_t free_objects;       /* free objects skipped */
	uint64_t free_bytes;         /* their total size */
	uint64_t contexts_skipped;   /* allocation contexts stepped over */
	uint64_t objects_allocating; /* objects a thread was allocating (no MethodTable yet), stepped over */
	uint64_t regions_walked;     /* regions walked (to the end or to an error) */
	uint64_t bytes_scanned;      /* sum of region extents walked (end - mem) */
	uint64_t bytes_read;         /* bytes of region memory read from the target */
	uint64_t method_tables;      /* distinct MethodTables seen */
	bool stopped;                /* the callback stopped the walk */
	unsigned reruns;             /* times the process was let run before it (adac_target_runs) */
	struct adac_gc_region_error *errors;
	size_t error_count;
};

/* Walks every object in every region (adac_gc_info's regions, in order), skipping free objects and
 * allocation contexts, calling cb for each. Returns 0 when every region was tried (region failures
 * are in rep->errors); -1 with err when the GC data cannot be read at all, or when rep is NULL and
 * a region failed (err then holds the first region's failure). rep may be NULL. */
int adac_gc_walk(struct adac_runtime *rt, adac_gc_object_cb cb, void *ctx, struct adac_gc_walk_report *rep,
                 struct adac_error *err);

/* The walk split in parts, runs of regions of about equal bytes, walked by as many threads as
 * there are CPUs (at most one a part), each claiming the next part when it is done with one; part
 * k calls cb with ctxs[k], for its objects in address order, so the parts' results put in part
 * order are the whole walk's. The report is the whole walk's. Callbacks run at once:
 * whatever one does beyond its own part's context (reading the target, asking the runtime) it
 * does between adac_gc_walk_lock and adac_gc_walk_unlock. One part when parts < 2, the heap has
 * a single region, or the target cannot be read from several threads (then part 0 has it all).
 * When a callback stops the walk, the other parts stop at their next object. */
#define ADAC_GC_WALK_MAX_PARTS 16u
int adac_gc_walk_split(struct adac_runtime *rt, unsigned parts, adac_gc_object_cb cb, void *const ctxs[],
                       const struct adac_gc_walk_progress *progress,
                       struct adac_gc_walk_report *rep, struct adac_error *err);
/* The parts a split walk of this target takes: ADAC_GC_WALK_PARTS_PER_CPU for each CPU this
 * process may run on, when more than one (at most ADAC_GC_WALK_MAX_PARTS), and no more than one
 * per ADAC_GC_WALK_PART_BYTES of heap (a smaller part does not pay for its merge); 1 when the heap
 * has a single region or the target cannot be read from several threads. ASYNCDAC_HEAP_PARTS=N in the environment asks for
 * N parts (1 to ADAC_GC_WALK_MAX_PARTS) whatever the CPUs and the heap's size: the tests compare
 * a small heap walked in parts with the whole walk. */
#define ADAC_GC_WALK_PART_BYTES (64ull << 20)
#define ADAC_GC_WALK_PARTS_PER_CPU 4u
unsigned adac_gc_walk_parts(struct adac_runtime *rt);
void adac_gc_walk_lock(struct adac_runtime *rt);
void adac_gc_walk_unlock(struct adac_runtime *rt);

void adac_gc_walk_report_free(struct adac_gc_walk_report *rep);

/* The MethodTable and size (as a walk gives them) of the object at addr, read from the target: for
 * the few objects a command shows after its walk. 0, or -1 with err. */
int adac_gc_object_size(struct adac_runtime *rt, uint64_t addr, uint64_t *mt, uint64_t *size, struct adac_error *err);

/* A live process the backend holds and may run (adac_target_run_briefly), stopped where its heap
 * cannot be walked: during a garbage collection (StructureInvalidCount != 0) or in an allocation the
 * walk cannot step over. Lets it run a moment (1, 2, 4... ms) and stops it again (a released one:
 * copies it again), then forgets what the runtime read in the last stop, as a debugger lets a GC
 * end before it walks the heap. 1 when it did; 0 when it cannot (a core, a process its user
 * stopped, a debugger's process, or the target ran ADAC_MAX_GC_RERUNS times already: the tries of
 * one command); -1 with err when the process exited or its runtime changed. */
int adac_gc_rerun(struct adac_runtime *rt, struct adac_error *err);

/* Lets a held process stopped inside a garbage collection run until it is out of it (adac_gc_rerun,
 * while it can). 0, also when it cannot or when the GC's data cannot be read (a walk says why); -1
 * with err when the process exited or its runtime changed. */
int adac_gc_settle(struct adac_runtime *rt, struct adac_error *err);

/* adac_gc_info after adac_gc_settle: what a heap walk starts from. */
const struct adac_gc_info *adac_gc_info_walkable(struct adac_runtime *rt, struct adac_error *err);

/* 0 when the walk went through every region; else -1 with err naming how many regions it left
 * early and the first one's error, and that the process was stopped during a garbage collection
 * when structures_valid is false (the likely cause then), and how many times the process was let
 * run before (rep->reruns), before that error. */
int adac_gc_walk_report_complete(const struct adac_gc_walk_report *rep, bool structures_valid, struct adac_error *err);

/* The generation of an address inside region r: the region's own, or for an ephemeral segment,
 * 0/1/2 by the generation starts of its heap. */
unsigned adac_gc_generation_of(const struct adac_gc_info *info, const struct adac_gc_region *r, uint64_t addr);

#endif
