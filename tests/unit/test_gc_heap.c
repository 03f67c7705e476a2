/* test_gc_heap.c - the GC heap walk over synthetic heaps in a memory target, laid out with the real
 * .NET 11.0.0 x64 layouts: argv[1] is the runtime's main descriptor (tests/fixtures), and the GC
 * sub-descriptors below are the ones a live 11.0.0 process carries for workstation regions (the
 * default), server regions (DOTNET_gcServer=1) and workstation segments (DOTNET_GCName=libclrgc.so),
 * copied verbatim. Covered: regions of every kind (frozen, gen2, gen1, gen0, LOH, POH) in address
 * order, free objects, strings and arrays, the minimum object size, a thread's allocation context,
 * the ephemeral region ending at AllocAllocated, a region larger than one read block, corrupt
 * objects (null MethodTable, absurd size, unreadable MethodTable) ending only their own region,
 * free-region lists, server heaps, the segments GC's ephemeral segment and generation starts, and
 * the failures: unknown GC flavour, missing layout, looping region list, no GC sub-descriptor. Also
 * the handle tables (a map, a bucket, a table of two segments: handles of several types in rings of
 * one and two blocks, a dependent handle's secondary, free slots, a looping segment list) and the
 * finalization queue's ready lists (runtime/gc_handles.c). */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "base/output.h"
#include "runtime/descriptor.h"
#include "runtime/gc_handles.h"
#include "runtime/gc_heap.h"
#include "runtime/runtime.h"
#include "testmem.h"
#include "view/heap_view.h"

/* ---- the GC sub-descriptors of a live .NET 11.0.0 linux-x64 process -------------------------- */
/* How they were read: `asyncdac runtime --pid <pid>` prints the GC sub-descriptor's address (the
 * DotNetRuntimeContractDescriptor struct); its JSON is descriptor_size bytes at its descriptor
 * pointer (offset 16), read from /proc/<pid>/mem. The fanout sample was run with no GC setting,
 * with DOTNET_gcServer=1, and with DOTNET_GCName=libclrgc.so (the pack's segments GC). Their
 * indirect globals are given one page each by load_descriptor(). */

static const char gc_wks_regions[] =
	"{\"version\":2,\"baseline\":\"empty\",\"types\":{\"Generation\":{\"!\":256,\"AllocationContext\":0,\"StartSegme"
	"nt\":56},\"CFinalize\":{\"FillPointers\":0},\"HeapSegment\":{\"Allocated\":0,\"Committed\":8,\"Reserved\":16,"
	"\"Used\":24,\"Mem\":32,\"Flags\":40,\"Next\":48,\"BackgroundAllocated\":56},\"OomHistory\":{\"Reason\":0,\"Allo"
	"cSize\":8,\"Reserved\":16,\"Allocated\":24,\"GcIndex\":32,\"Fgm\":40,\"Size\":48,\"AvailablePagefileMb\":56,\""
	"LohP\":64},\"HandleTableMap\":{\"BucketsPtr\":0,\"Next\":8},\"HandleTableBucket\":{\"Table\":0},\"HandleTabl"
	"e\":{\"SegmentList\":56},\"TableSegment\":{\"NextSegment\":1998,\"RgAllocation\":480,\"RgTail\":1920,\"RgVal"
	"ue\":4096,\"RgUserData\":1680},\"CardTableInfo\":{\"!\":24,\"Recount\":0,\"Size\":8,\"NextCardTable\":16},\"Re"
	"gionFreeList\":{\"!\":56,\"HeadFreeRegion\":40}},\"globals\":{\"TotalGenerationCount\":\"0x5\",\"CFinalizeFi"
	"llPointersLength\":\"0x7\",\"InterestingDataLength\":\"0x9\",\"CompactReasonsLength\":\"0xb\",\"ExpandMechan"
	"ismsLength\":\"0x6\",\"InterestingMechanismBitsLength\":\"0x2\",\"GlobalMechanismsLength\":\"0x6\",\"Initial"
	"HandleTableArraySize\":\"0xa\",\"DebugDestroyedHandleValue\":\"0x0\",\"HandleSegmentSize\":\"0x10000\",\"Han"
	"dleBlocksPerSegment\":\"0x78\",\"HandleMaxInternalTypes\":\"0xd\",\"HandlesPerBlock\":\"0x40\",\"BlockInvali"
	"d\":\"0xff\",\"CardTableInfoSize\":\"0x18\",\"CountFreeRegionKinds\":\"0x3\",\"GCHeapMarkArray\":[[1],\"pointe"
	"r\"],\"GCHeapNextSweepObj\":[[2],\"pointer\"],\"GCHeapBackgroundMinSavedAddr\":[[3],\"pointer\"],\"GCHeapB"
	"ackgroundMaxSavedAddr\":[[4],\"pointer\"],\"GCHeapAllocAllocated\":[[5],\"pointer\"],\"GCHeapEphemeralHe"
	"apSegment\":[[6],\"pointer\"],\"GCHeapCardTable\":[[7],\"pointer\"],\"GCHeapFinalizeQueue\":[[8],\"pointer"
	"\"],\"GCHeapGenerationTable\":[[9],\"pointer\"],\"GCHeapOomData\":[[10],\"pointer\"],\"GCHeapInternalRootA"
	"rray\":[[11],\"pointer\"],\"GCHeapInternalRootArrayIndex\":[[12],\"pointer\"],\"GCHeapHeapAnalyzeSuccess"
	"\":[[13],\"pointer\"],\"GCHeapInterestingData\":[[14],\"pointer\"],\"GCHeapCompactReasons\":[[15],\"pointe"
	"r\"],\"GCHeapExpandMechanisms\":[[16],\"pointer\"],\"GCHeapInterestingMechanismBits\":[[17],\"pointer\"],"
	"\"GCHeapFreeableSohSegment\":[[18],\"pointer\"],\"GCHeapFreeableUohSegment\":[[19],\"pointer\"],\"GCHeapF"
	"reeRegions\":[[20],\"pointer\"],\"HandleTableMap\":[[21],\"pointer\"],\"BookkeepingStart\":[[22],\"pointer"
	"\"],\"GlobalFreeHugeRegions\":[[23],\"pointer\"],\"GlobalRegionsToDecommit\":[[24],\"pointer\"],\"MaxGener"
	"ation\":[[25],\"pointer\"],\"StructureInvalidCount\":[[26],\"pointer\"],\"CurrentGCState\":[[27],\"pointer"
	"\"],\"GCGlobalMechanisms\":[[28],\"pointer\"],\"GCIdentifiers\":[\"workstation, regions, background,\",\"s"
	"tring\"]},\"subDescriptors\":{},\"contracts\":{\"GC\":\"c1\"}}";
static const char gc_svr_regions[] =
	"{\"version\":2,\"baseline\":\"empty\",\"types\":{\"GCHeap\":{\"MarkArray\":5496,\"NextSweepObj\":344,\"Backgrou"
	"ndMinSavedAddr\":5560,\"BackgroundMaxSavedAddr\":5568,\"AllocAllocated\":5216,\"EphemeralHeapSegment\":"
	"5224,\"CardTable\":5472,\"FinalizeQueue\":5232,\"GenerationTable\":2384,\"OomData\":12760,\"InternalRootA"
	"rray\":13432,\"InternalRootArrayIndex\":13440,\"HeapAnalyzeSuccess\":13448,\"InterestingData\":13200,\"C"
	"ompactReasons\":13272,\"ExpandMechanisms\":13368,\"InterestingMechanismBits\":13416,\"FreeableSohSegme"
	"nt\":4200,\"FreeableUohSegment\":3688,\"FreeRegions\":5240},\"Generation\":{\"!\":256,\"AllocationContext\""
	":0,\"StartSegment\":56},\"CFinalize\":{\"FillPointers\":0},\"HeapSegment\":{\"Allocated\":0,\"Committed\":8,"
	"\"Reserved\":16,\"Used\":24,\"Mem\":32,\"Flags\":40,\"Next\":48,\"BackgroundAllocated\":56,\"Heap\":64},\"OomHi"
	"story\":{\"Reason\":0,\"AllocSize\":8,\"Reserved\":16,\"Allocated\":24,\"GcIndex\":32,\"Fgm\":40,\"Size\":48,\"A"
	"vailablePagefileMb\":56,\"LohP\":64},\"HandleTableMap\":{\"BucketsPtr\":0,\"Next\":8},\"HandleTableBucket\""
	":{\"Table\":0},\"HandleTable\":{\"SegmentList\":56},\"TableSegment\":{\"NextSegment\":1998,\"RgAllocation\":"
	"480,\"RgTail\":1920,\"RgValue\":4096,\"RgUserData\":1680},\"CardTableInfo\":{\"!\":24,\"Recount\":0,\"Size\":8"
	",\"NextCardTable\":16},\"RegionFreeList\":{\"!\":56,\"HeadFreeRegion\":40}},\"globals\":{\"TotalGenerationC"
	"ount\":\"0x5\",\"CFinalizeFillPointersLength\":\"0x7\",\"InterestingDataLength\":\"0x9\",\"CompactReasonsLen"
	"gth\":\"0xb\",\"ExpandMechanismsLength\":\"0x6\",\"InterestingMechanismBitsLength\":\"0x2\",\"GlobalMechanis"
	"msLength\":\"0x6\",\"InitialHandleTableArraySize\":\"0xa\",\"DebugDestroyedHandleValue\":\"0x0\",\"HandleSeg"
	"mentSize\":\"0x10000\",\"HandleBlocksPerSegment\":\"0x78\",\"HandleMaxInternalTypes\":\"0xd\",\"HandlesPerBl"
	"ock\":\"0x40\",\"BlockInvalid\":\"0xff\",\"CardTableInfoSize\":\"0x18\",\"CountFreeRegionKinds\":\"0x3\",\"Handl"
	"eTableMap\":[[1],\"pointer\"],\"BookkeepingStart\":[[2],\"pointer\"],\"GlobalFreeHugeRegions\":[[3],\"poin"
	"ter\"],\"GlobalRegionsToDecommit\":[[4],\"pointer\"],\"MaxGeneration\":[[5],\"pointer\"],\"StructureInvali"
	"dCount\":[[6],\"pointer\"],\"NumHeaps\":[[7],\"pointer\"],\"Heaps\":[[8],\"pointer\"],\"TotalCpuCount\":[[9],"
	"\"pointer\"],\"CurrentGCState\":[[10],\"pointer\"],\"DynamicAdaptationMode\":[[11],\"pointer\"],\"GCGlobalM"
	"echanisms\":[[12],\"pointer\"],\"GCIdentifiers\":[\"server, regions, background, dynamic_heap\",\"string"
	"\"]},\"subDescriptors\":{},\"contracts\":{\"GC\":\"c1\"}}";
static const char gc_wks_segments[] =
	"{\"version\":2,\"baseline\":\"empty\",\"types\":{\"Generation\":{\"!\":264,\"AllocationContext\":0,\"StartSegme"
	"nt\":56,\"AllocationStart\":64},\"CFinalize\":{\"FillPointers\":0},\"HeapSegment\":{\"Allocated\":0,\"Commit"
	"ted\":8,\"Reserved\":16,\"Used\":24,\"Mem\":32,\"Flags\":40,\"Next\":48,\"BackgroundAllocated\":56},\"OomHisto"
	"ry\":{\"Reason\":0,\"AllocSize\":8,\"Reserved\":16,\"Allocated\":24,\"GcIndex\":32,\"Fgm\":40,\"Size\":48,\"Avai"
	"lablePagefileMb\":56,\"LohP\":64},\"HandleTableMap\":{\"BucketsPtr\":0,\"Next\":8},\"HandleTableBucket\":{\""
	"Table\":0},\"HandleTable\":{\"SegmentList\":56},\"TableSegment\":{\"NextSegment\":1998,\"RgAllocation\":480"
	",\"RgTail\":1920,\"RgValue\":4096,\"RgUserData\":1680},\"CardTableInfo\":{\"!\":24,\"Recount\":0,\"Size\":8,\"N"
	"extCardTable\":16},\"RegionFreeList\":{\"!\":56,\"HeadFreeRegion\":40}},\"globals\":{\"TotalGenerationCoun"
	"t\":\"0x5\",\"CFinalizeFillPointersLength\":\"0x7\",\"InterestingDataLength\":\"0x9\",\"CompactReasonsLength"
	"\":\"0xb\",\"ExpandMechanismsLength\":\"0x6\",\"InterestingMechanismBitsLength\":\"0x2\",\"GlobalMechanismsL"
	"ength\":\"0x6\",\"InitialHandleTableArraySize\":\"0xa\",\"DebugDestroyedHandleValue\":\"0x0\",\"HandleSegmen"
	"tSize\":\"0x10000\",\"HandleBlocksPerSegment\":\"0x78\",\"HandleMaxInternalTypes\":\"0xd\",\"HandlesPerBlock"
	"\":\"0x40\",\"BlockInvalid\":\"0xff\",\"CardTableInfoSize\":\"0x18\",\"GCHeapMarkArray\":[[1],\"pointer\"],\"GCH"
	"eapNextSweepObj\":[[2],\"pointer\"],\"GCHeapBackgroundMinSavedAddr\":[[3],\"pointer\"],\"GCHeapBackgroun"
	"dMaxSavedAddr\":[[4],\"pointer\"],\"GCHeapAllocAllocated\":[[5],\"pointer\"],\"GCHeapEphemeralHeapSegmen"
	"t\":[[6],\"pointer\"],\"GCHeapCardTable\":[[7],\"pointer\"],\"GCHeapFinalizeQueue\":[[8],\"pointer\"],\"GCHe"
	"apGenerationTable\":[[9],\"pointer\"],\"GCHeapSavedSweepEphemeralSeg\":[[10],\"pointer\"],\"GCHeapSavedS"
	"weepEphemeralStart\":[[11],\"pointer\"],\"GCHeapOomData\":[[12],\"pointer\"],\"GCHeapInternalRootArray\":"
	"[[13],\"pointer\"],\"GCHeapInternalRootArrayIndex\":[[14],\"pointer\"],\"GCHeapHeapAnalyzeSuccess\":[[15"
	"],\"pointer\"],\"GCHeapInterestingData\":[[16],\"pointer\"],\"GCHeapCompactReasons\":[[17],\"pointer\"],\"G"
	"CHeapExpandMechanisms\":[[18],\"pointer\"],\"GCHeapInterestingMechanismBits\":[[19],\"pointer\"],\"GCHea"
	"pFreeableSohSegment\":[[20],\"pointer\"],\"GCHeapFreeableUohSegment\":[[21],\"pointer\"],\"HandleTableMa"
	"p\":[[22],\"pointer\"],\"BookkeepingStart\":[[23],\"pointer\"],\"MaxGeneration\":[[24],\"pointer\"],\"Struct"
	"ureInvalidCount\":[[25],\"pointer\"],\"CurrentGCState\":[[26],\"pointer\"],\"GCGlobalMechanisms\":[[27],\""
	"pointer\"],\"GCIdentifiers\":[\"workstation, segments, background,\",\"string\"]},\"subDescriptors\":{},\""
	"contracts\":{\"GC\":\"c1\"}}";

/* ---- descriptor: the main one from argv[1], then a GC sub-descriptor -------------------------- */

#define MAIN_GLOBALS 0x10000000ull  /* pointer_data[i] of the main descriptor: one page each */
#define GC_GLOBALS 0x11000000ull    /* pointer_data[i] of the GC sub-descriptor: one page each */
#define MISC 0x12000000ull          /* MethodTables, HeapSegments, threads, server heaps */
#define NPDATA 64u

/* Parses the main descriptor and gc_json into `layout`; every indirect global gets its own page. With
 * gc_json NULL, only the main descriptor. Also maps the global pages and the MISC area. */
static void load_descriptor(const char *gc_json)
{
	uint64_t main_pd[NPDATA], gc_pd[NPDATA];
	for (unsigned i = 0; i < NPDATA; i++) {
		main_pd[i] = i ? MAIN_GLOBALS + i * 0x1000ull : 0;
		gc_pd[i] = i ? GC_GLOBALS + i * 0x1000ull : 0;
	}
	layout = adac_desc_new();
	struct adac_error err = {0};
	size_t len;
	char *json = slurp(descriptor_path, &len);
	CHECK(json != NULL);
	int rc = adac_desc_parse_json(layout, json, len, main_pd, NPDATA, &err);
	free(json);
	if (rc == 0 && gc_json)
		rc = adac_desc_parse_json(layout, gc_json, strlen(gc_json), gc_pd, NPDATA, &err);
	if (rc)
		fprintf(stderr, "descriptor: %s\n", err.msg);
	CHECK(rc == 0);
	mem_region(MAIN_GLOBALS, NPDATA * 0x1000u);
	mem_region(GC_GLOBALS, NPDATA * 0x1000u);
	mem_region(MISC, 0x100000);
}

/* The runtime over the regions and the descriptor loaded (which it takes). */
static struct adac_runtime *heap_runtime(void)
{
	struct adac_runtime *rt = runtime_with(mem_target(), layout);
	layout = NULL;
	return rt;
}

static void close_runtime(struct adac_runtime *rt)
{
	struct adac_target *t = rt->t;
	adac_runtime_close(rt);
	adac_target_close(t);
	mem_reset();
}

static uint64_t G(const char *name)
{
	uint64_t v = 0;
	struct adac_error err = {0};
	if (adac_desc_global(layout, name, &v, &err)) {
		fprintf(stderr, "test bug: %s\n", err.msg);
		abort();
	}
	return v;
}

/* A copy of json with the first `from` replaced by `to` (caller frees). */
static char *replaced(const char *json, const char *from, const char *to)
{
	const char *p = strstr(json, from);
	if (!p) {
		fprintf(stderr, "test bug: no '%s'\n", from);
		abort();
	}
	size_t a = (size_t)(p - json), fl = strlen(from), tl = strlen(to), n = strlen(json);
	char *s = malloc(n - fl + tl + 1);
	memcpy(s, json, a);
	memcpy(s + a, to, tl);
	memcpy(s + a + tl, p + fl, n - a - fl + 1);
	return s;
}

/* ---- runtime structures, written through the descriptor's offsets ---------------------------- */

enum { MT_OBJECT, MT_STRING, MT_BYTES, MT_INTS, MT_BIG, MT_FREE, MT_COUNT };
#define MT(i) (MISC + 0x1000 + 0x40ull * (i))
#define SEG(i) (MISC + 0x8000 + 0x100ull * (i))
#define THREAD_STORE (MISC + 0x20000)
#define THREAD(i) (MISC + 0x21000 + 0x1000ull * (i))
#define LOCALS(i) (MISC + 0x28000 + 0x100ull * (i))
#define HEAP(i) (MISC + 0x40000 + 0x8000ull * (i))
#define BAD_MT 0x7777000ull  /* not mapped */

static void write_mt(unsigned i, uint32_t flags, uint32_t base_size)
{
	w32(MT(i) + F("MethodTable", "MTFlags"), flags);
	w32(MT(i) + F("MethodTable", "BaseSize"), base_size);
}

/* The real runtime's values: HasComponentSize (0x80000000) with the component size below, plus
 * other flag bits the walk must ignore (array category, IsString...). */
static void write_mts(void)
{
	write_mt(MT_OBJECT, 0x00000000, 24);
	write_mt(MT_STRING, 0x80000000 | 0x10000000 | 2, 22);
	write_mt(MT_BYTES, 0x80000000 | 0x000a0000 | 1, 24);
	write_mt(MT_INTS, 0x80000000 | 0x000a0000 | 4, 24);
	write_mt(MT_BIG, 0x00210000, 64);
	write_mt(MT_FREE, 0x80000000 | 0x000a0000 | 1, 24);
	w64(G("FreeObjectMethodTable"), MT(MT_FREE));
}

/* Expected objects, in walk order. */
struct obj {
	uint64_t addr, mt, size, extent;
	unsigned gen;
};
static struct obj *expected;
static size_t nexpected, cap_expected;

static void expect(uint64_t addr, uint64_t mt, uint64_t size, uint64_t extent, unsigned gen)
{
	if (nexpected == cap_expected) {
		cap_expected = cap_expected ? cap_expected * 2 : 256;
		expected = realloc(expected, cap_expected * sizeof *expected);
	}
	expected[nexpected++] = (struct obj){addr, mt, size, extent, gen};
}

/* Writes an object (array/string when count >= 0) and returns its extent; records it as expected
 * unless it is free or gen < 0. */
static uint64_t put(uint64_t addr, unsigned mt, int64_t count, int gen)
{
	static const uint32_t base[MT_COUNT] = {24, 22, 24, 24, 64, 24};
	static const uint32_t comp[MT_COUNT] = {0, 2, 1, 4, 0, 1};
	w64(addr, MT(mt));
	uint64_t size = base[mt];
	if (count >= 0) {
		w32(addr + F("Array", "m_NumComponents"), (uint32_t)count);
		size += (uint64_t)count * comp[mt];
	}
	if (size < 24)
		size = 24;
	uint64_t extent = (size + 7) & ~7ull;
	if (mt != MT_FREE && gen >= 0)
		expect(addr, MT(mt), size, extent, (unsigned)gen);
	return extent;
}

/* A HeapSegment: objects in [mem, allocated). */
static void write_seg(unsigned i, uint64_t mem, uint64_t allocated, uint64_t reserved, uint64_t flags, uint64_t next)
{
	uint64_t s = SEG(i);
	w64(s + F("HeapSegment", "Allocated"), allocated);
	w64(s + F("HeapSegment", "Committed"), allocated);
	w64(s + F("HeapSegment", "Reserved"), reserved);
	w64(s + F("HeapSegment", "Used"), allocated);
	w64(s + F("HeapSegment", "Mem"), mem);
	w64(s + F("HeapSegment", "Flags"), flags);
	w64(s + F("HeapSegment", "Next"), next);
}

static uint32_t gen_size(void)
{
	uint32_t n = 0;
	CHECK(adac_desc_type_size(layout, "Generation", &n, NULL) == 0);
	return n;
}

static void write_gen(uint64_t table, unsigned g, uint64_t start_segment)
{
	w64(table + g * gen_size() + F("Generation", "StartSegment"), start_segment);
}

/* Thread i in the ThreadStore list (the list holds Thread addresses; see gc_heap.c), with an
 * allocation context [ptr, limit) when ptr != 0. */
static void write_threads(unsigned n, const uint64_t *ptrs, const uint64_t *limits)
{
	w64(G("ThreadStore"), THREAD_STORE);
	w64(THREAD_STORE + F("ThreadStore", "FirstThreadLink"), n ? THREAD(0) : 0);
	for (unsigned i = 0; i < n; i++) {
		w64(THREAD(i) + F("Thread", "LinkNext"), i + 1 < n ? THREAD(i + 1) : 0);
		if (!ptrs[i])
			continue;
		w64(THREAD(i) + F("Thread", "RuntimeThreadLocals"), LOCALS(i));
		uint64_t ctx = LOCALS(i) + F("RuntimeThreadLocals", "AllocContext") + F("EEAllocContext", "GCAllocationContext");
		w64(ctx + F("GCAllocContext", "Pointer"), ptrs[i]);
		w64(ctx + F("GCAllocContext", "Limit"), limits[i]);
	}
}

/* ---- walking -------------------------------------------------------------------------------- */

static struct obj *seen;
static size_t nseen, cap_seen, stop_after;
static unsigned data_mismatches;

static int collect(void *ctx, const struct adac_gc_object *o)
{
	(void)ctx;
	if (nseen == cap_seen) {
		cap_seen = cap_seen ? cap_seen * 2 : 256;
		seen = realloc(seen, cap_seen * sizeof *seen);
	}
	seen[nseen++] = (struct obj){o->addr, o->mt, o->size, o->extent, o->generation};
	/* The bytes handed over are the target's. */
	size_t n = o->data_len < 16 ? o->data_len : 16;
	if (o->data_len < 16 || memcmp(o->data, at(o->addr, n), n) != 0)
		data_mismatches++;
	return stop_after && nseen >= stop_after;
}

/* A split walk's part: its objects, in the order it met them. */
struct part_seen {
	struct obj *v;
	size_t n, cap;
	unsigned data_mismatches;
};

static int collect_part(void *ctx, const struct adac_gc_object *o)
{
	struct part_seen *p = ctx;
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 256;
		p->v = realloc(p->v, p->cap * sizeof *p->v);
	}
	p->v[p->n++] = (struct obj){o->addr, o->mt, o->size, o->extent, o->generation};
	size_t n = o->data_len < 16 ? o->data_len : 16;
	if (o->data_len < 16 || memcmp(o->data, at(o->addr, n), n) != 0)
		p->data_mismatches++;
	return 0;
}

static void reset_walk(void)
{
	free(seen);
	seen = NULL;
	nseen = cap_seen = 0;
	stop_after = 0;
	data_mismatches = 0;
}

static void reset_expected(void)
{
	free(expected);
	expected = NULL;
	nexpected = cap_expected = 0;
}

static void check_objects(const char *what)
{
	CHECK_EQ_U64(nseen, nexpected);
	size_t n = nseen < nexpected ? nseen : nexpected;
	unsigned bad = 0;
	for (size_t i = 0; i < n && bad < 5; i++) {
		const struct obj *a = &seen[i], *e = &expected[i];
		if (a->addr != e->addr || a->mt != e->mt || a->size != e->size || a->extent != e->extent || a->gen != e->gen) {
			fprintf(stderr, "%s: object %zu: got 0x%llx mt 0x%llx size %llu/%llu gen %u, want 0x%llx mt 0x%llx size %llu/%llu gen %u\n",
			        what, i, (unsigned long long)a->addr, (unsigned long long)a->mt, (unsigned long long)a->size,
			        (unsigned long long)a->extent, a->gen, (unsigned long long)e->addr, (unsigned long long)e->mt,
			        (unsigned long long)e->size, (unsigned long long)e->extent, e->gen);
			bad++;
			check_failures++;
		}
	}
	CHECK(data_mismatches == 0);
}

/* ---- workstation regions: every kind of region, good and bad ---------------------------------- */

#define R_FROZEN 0x20000000ull
#define R_GEN2 0x20100000ull
#define R_NULLMT 0x20200000ull
#define R_HUGE 0x20300000ull
#define R_BADMT 0x20400000ull
#define R_GEN1 0x20500000ull
#define R_GEN0 0x20600000ull
#define R_EPH 0x20700000ull
#define R_LOH 0x21000000ull
#define R_POH 0x21100000ull
#define R_BIG 0x22000000ull
#define R_FREE 0x23000000ull
#define BIG_OBJECTS 131072u  /* 40-byte objects: 5 MiB, more than one ADAC_GC_READ_BLOCK */
#define REGION_HEADER 0x28u  /* as in the real runtime: objects start 0x28 into a region */

struct wks_heap {
	uint64_t ctx_ptr, ctx_limit;
	uint64_t nullmt_at, huge_at, badmt_at;
	uint64_t eph_end;
	uint64_t big_free, big_free_bytes;
};

/* Builds the heap of test_wks_regions; with loop, gen2's list runs back into itself instead. */
static void build_wks_heap(struct wks_heap *h, bool loop)
{
	write_mts();
	w32(G("MaxGeneration"), 2);
	w32(G("StructureInvalidCount"), 0);
	uint64_t table = G("GCHeapGenerationTable");
	uint64_t a, m;

	/* Frozen segment (String.Empty and a literal), first in gen2's list as the runtime has it. */
	mem_region(R_FROZEN, 0x1000);
	m = a = R_FROZEN + 8;
	a += put(a, MT_STRING, 0, 2);   /* 22 bytes: reported as the minimum, 24 */
	a += put(a, MT_STRING, 5, 2);   /* 32 */
	write_seg(0, m, a, R_FROZEN + 0x1000, 0x1, SEG(1));

	/* gen2: object, free object, int[3] (36 bytes, 40 with alignment), a 64-byte object. */
	mem_region(R_GEN2, 0x1000);
	m = a = R_GEN2 + REGION_HEADER;
	a += put(a, MT_OBJECT, -1, 2);
	a += put(a, MT_FREE, 16, 2);
	a += put(a, MT_INTS, 3, 2);
	a += put(a, MT_BIG, -1, 2);
	write_seg(1, m, a, R_GEN2 + 0x1000, 0, loop ? SEG(0) : SEG(2));

	/* gen2, corrupt: a null MethodTable after one good object; objects after it are not seen. */
	mem_region(R_NULLMT, 0x1000);
	m = a = R_NULLMT + REGION_HEADER;
	a += put(a, MT_OBJECT, -1, 2);
	h->nullmt_at = a;
	a += 24;
	a += put(a, MT_OBJECT, -1, -1);
	write_seg(2, m, a, R_NULLMT + 0x1000, 0, SEG(3));

	/* gen2, corrupt: an int[] of 0x40000000 elements in a 4 KiB region. */
	mem_region(R_HUGE, 0x1000);
	m = a = R_HUGE + REGION_HEADER;
	h->huge_at = a;
	put(a, MT_INTS, 0x40000000, -1);
	a += 0x100;
	write_seg(3, m, a, R_HUGE + 0x1000, 0, SEG(4));

	/* gen2, corrupt: a MethodTable that cannot be read. */
	mem_region(R_BADMT, 0x1000);
	m = a = R_BADMT + REGION_HEADER;
	h->badmt_at = a;
	w64(a, BAD_MT);
	a += 0x40;
	write_seg(4, m, a, R_BADMT + 0x1000, 0, SEG(10));

	/* gen1: empty. */
	mem_region(R_GEN1, 0x1000);
	write_seg(5, R_GEN1 + REGION_HEADER, R_GEN1 + REGION_HEADER, R_GEN1 + 0x1000, 0, 0);

	/* gen0: an object, one the thread is allocating (its context's pointer is past it, its
	 * MethodTable not yet written: stepped over), the thread's allocation context (garbage inside
	 * and in the 24-byte gap the GC keeps after its limit), then a one-char string and an object. */
	mem_region(R_GEN0, 0x1000);
	m = a = R_GEN0 + REGION_HEADER;
	a += put(a, MT_OBJECT, -1, 0);
	uint64_t allocating = a;
	a += put(a, MT_OBJECT, -1, -1);
	w64(allocating, 0);
	h->ctx_ptr = a;
	h->ctx_limit = a + 0x100;
	memset(at(a, 0x100 + 24), 0xab, 0x100 + 24);
	a = h->ctx_limit + 24;
	a += put(a, MT_STRING, 1, 0);
	a += put(a, MT_OBJECT, -1, 0);
	write_seg(6, m, a, R_GEN0 + 0x1000, 0, SEG(7));

	/* gen0, ephemeral: Allocated says 4 KiB, AllocAllocated (the truth) 48 bytes. */
	mem_region(R_EPH, 0x2000);
	m = a = R_EPH + REGION_HEADER;
	a += put(a, MT_OBJECT, -1, 0);
	a += put(a, MT_OBJECT, -1, 0);
	h->eph_end = a;
	memset(at(a, 0x100), 0xcd, 0x100);
	write_seg(7, m, R_EPH + 0x1000, R_EPH + 0x2000, 0, 0);
	w64(G("GCHeapAllocAllocated"), h->eph_end);
	w64(G("GCHeapEphemeralHeapSegment"), SEG(7));

	/* LOH: byte[100000] (100024 bytes) and byte[3] (27, 32 with alignment). */
	mem_region(R_LOH, 0x40000);
	m = a = R_LOH + REGION_HEADER;
	a += put(a, MT_BYTES, 100000, 3);
	a += put(a, MT_BYTES, 3, 3);
	write_seg(8, m, a, R_LOH + 0x40000, 0x8, 0);

	/* POH: one object. */
	mem_region(R_POH, 0x1000);
	m = a = R_POH + REGION_HEADER;
	a += put(a, MT_OBJECT, -1, 4);
	write_seg(9, m, a, R_POH + 0x1000, 0x200, 0);

	/* gen2: 5 MiB of byte[13] (37 bytes, 40 aligned), every 1000th a free object; objects straddle
	 * the read blocks' boundaries. */
	mem_region(R_BIG, BIG_OBJECTS * 40ull + 0x1000);
	m = a = R_BIG + REGION_HEADER;
	h->big_free = h->big_free_bytes = 0;
	for (unsigned i = 0; i < BIG_OBJECTS; i++) {
		if (i % 1000 == 999) {
			a += put(a, MT_FREE, 16, 2);
			h->big_free++;
			h->big_free_bytes += 40;
		} else {
			a += put(a, MT_BYTES, 13, 2);
		}
	}
	write_seg(10, m, a, R_BIG + BIG_OBJECTS * 40ull + 0x1000, 0, 0);

	/* A free region (on free list kind 1): listed, never walked. */
	mem_region(R_FREE, 0x1000);
	w64(R_FREE + REGION_HEADER, 0x4141414141414141ull);
	write_seg(11, R_FREE + REGION_HEADER, R_FREE + 0x800, R_FREE + 0x1000, 0, 0);
	uint32_t list = 0;
	CHECK(adac_desc_type_size(layout, "RegionFreeList", &list, NULL) == 0);
	w64(G("GCHeapFreeRegions") + 1 * list + F("RegionFreeList", "HeadFreeRegion"), SEG(11));

	write_gen(table, 0, SEG(6));
	write_gen(table, 1, SEG(5));
	write_gen(table, 2, SEG(0));
	write_gen(table, 3, SEG(8));
	write_gen(table, 4, SEG(9));

	/* Two threads: the first allocates in R_GEN0, the second has no locals. The global allocation
	 * context is empty (as in every real core seen). */
	uint64_t ptrs[2] = {h->ctx_ptr, 0}, limits[2] = {h->ctx_limit, 0};
	write_threads(2, ptrs, limits);
}

static void test_wks_regions(void)
{
	struct wks_heap h;
	load_descriptor(gc_wks_regions);
	build_wks_heap(&h, false);
	struct adac_runtime *rt = heap_runtime();
	struct adac_error err = {0};

	const struct adac_gc_info *info = adac_gc_info(rt, &err);
	CHECK(info != NULL);
	if (!info) {
		fprintf(stderr, "gc info: %s\n", err.msg);
		close_runtime(rt);
		return;
	}
	CHECK_EQ_STR(info->identifiers, "workstation, regions, background,");
	CHECK(!info->server && info->use_regions && info->background && info->structures_valid);
	CHECK_EQ_U64(info->max_generation, 2);
	CHECK_EQ_U64(info->ptr_size, 8);
	CHECK_EQ_U64(info->min_object_size, 24);
	CHECK_EQ_U64(info->free_mt, MT(MT_FREE));
	CHECK_EQ_U64(info->heap_count, 1);
	CHECK_EQ_U64(info->heaps[0].addr, 0);
	CHECK_EQ_U64(info->heaps[0].alloc_allocated, h.eph_end);
	CHECK_EQ_U64(info->heaps[0].ephemeral_segment, SEG(7));
	CHECK_EQ_U64(info->heaps[0].generation_count, 5);
	CHECK_EQ_U64(info->heaps[0].gen[3].start_segment, SEG(8));
	static const uint64_t want_seg[] = {SEG(0), SEG(1), SEG(2), SEG(3), SEG(4), SEG(5),
	                                    SEG(6), SEG(7), SEG(8), SEG(9), SEG(10)};
	static const enum adac_gc_region_kind want_kind[] = {ADAC_GC_FROZEN, ADAC_GC_GEN2, ADAC_GC_GEN2, ADAC_GC_GEN2,
	                                                     ADAC_GC_GEN2,   ADAC_GC_GEN1, ADAC_GC_GEN0, ADAC_GC_GEN0,
	                                                     ADAC_GC_LOH,    ADAC_GC_POH,  ADAC_GC_GEN2};
	CHECK_EQ_U64(info->region_count, 11);
	for (size_t i = 0; i < info->region_count && i < 11; i++) {
		CHECK_EQ_U64(info->regions[i].addr, want_seg[i]);
		CHECK_EQ_U64(info->regions[i].kind, want_kind[i]);
		CHECK_EQ_U64(info->regions[i].heap, 0);
	}
	CHECK_EQ_U64(info->regions[7].end, h.eph_end);           /* AllocAllocated, not Allocated */
	CHECK_EQ_U64(info->regions[7].allocated, R_EPH + 0x1000);
	CHECK_EQ_U64(info->regions[0].flags, 1);
	CHECK_EQ_U64(info->free_region_count, 1);
	CHECK_EQ_U64(info->free_regions[0].addr, SEG(11));
	CHECK_EQ_U64(info->free_regions[0].kind, ADAC_GC_FREE);
	CHECK_EQ_U64(info->context_count, 1);
	CHECK_EQ_U64(info->contexts[0].ptr, h.ctx_ptr);
	CHECK_EQ_U64(info->contexts[0].limit, h.ctx_limit);
	CHECK_EQ_U64(info->contexts[0].thread, THREAD(0));
	CHECK_EQ_U64(info->threads_unreadable, 0);
	CHECK_EQ_STR(adac_gc_kind_name(ADAC_GC_EPHEMERAL), "ephemeral");

	/* The walk: every good object in order; each bad region reported once, the rest walked. */
	struct adac_gc_walk_report rep;
	reset_walk();
	int rc = adac_gc_walk(rt, collect, NULL, &rep, &err);
	CHECK(rc == 0);
	check_objects("wks regions");
	CHECK_EQ_U64(rep.objects, nexpected);
	CHECK_EQ_U64(rep.free_objects, 1 + h.big_free);
	CHECK_EQ_U64(rep.free_bytes, 40 + h.big_free_bytes);
	CHECK_EQ_U64(rep.contexts_skipped, 1);
	CHECK_EQ_U64(rep.objects_allocating, 1);
	CHECK_EQ_U64(rep.regions_walked, 11);
	CHECK_EQ_U64(rep.method_tables, 6); /* the free object's MT too */
	CHECK(!rep.stopped);
	uint64_t scanned = 0;
	for (size_t i = 0; i < info->region_count; i++)
		scanned += info->regions[i].end - info->regions[i].mem;
	CHECK_EQ_U64(rep.bytes_scanned, scanned);
	CHECK(rep.bytes_read >= BIG_OBJECTS * 40ull);
	CHECK_EQ_U64(rep.error_count, 3);
	if (rep.error_count == 3) {
		CHECK(rep.errors[0].region->addr == SEG(2) && rep.errors[0].objects_before == 1);
		CHECK_EQ_U64(rep.errors[0].err.addr, h.nullmt_at);
		CHECK_ERR(-1, &rep.errors[0].err, ADAC_E_CORRUPT, "heap 0 gen2 region 0x12008200: object 0x");
		CHECK_ERR(-1, &rep.errors[0].err, ADAC_E_CORRUPT, "has a null MethodTable");
		CHECK(rep.errors[1].region->addr == SEG(3) && rep.errors[1].objects_before == 0);
		CHECK_EQ_U64(rep.errors[1].err.addr, h.huge_at);
		CHECK_ERR(-1, &rep.errors[1].err, ADAC_E_CORRUPT, "of 4294967320 bytes runs past the end 0x20300128");
		CHECK(rep.errors[2].region->addr == SEG(4) && rep.errors[2].objects_before == 0);
		CHECK_ERR(-1, &rep.errors[2].err, ADAC_E_READ, "object 0x20400028: cannot read");
		CHECK_ERR(-1, &rep.errors[2].err, ADAC_E_READ, "0x7777000");
	}
	adac_gc_walk_report_free(&rep);
	CHECK(rep.errors == NULL && rep.error_count == 0);

	/* Without a report, the region failures fail the walk: the first one, and how many. */
	reset_walk();
	struct adac_error err2 = {0};
	rc = adac_gc_walk(rt, collect, NULL, NULL, &err2);
	CHECK_ERR(rc, &err2, ADAC_E_CORRUPT, "3 regions could not be walked; first: heap 0 gen2 region 0x12008200");
	CHECK_EQ_U64(nseen, nexpected);

	/* The callback can stop the walk. */
	reset_walk();
	stop_after = 5;
	rc = adac_gc_walk(rt, collect, NULL, &rep, &err);
	CHECK(rc == 0 && rep.stopped);
	CHECK_EQ_U64(rep.objects, 5);
	CHECK_EQ_U64(nseen, 5);
	adac_gc_walk_report_free(&rep);

	/* No callback: counting only. */
	rc = adac_gc_walk(rt, NULL, NULL, &rep, &err);
	CHECK(rc == 0);
	CHECK_EQ_U64(rep.objects, nexpected);
	adac_gc_walk_report_free(&rep);

	/* Split in parts walked at once: the parts' objects end to end are the walk's, the report is
	 * the same, region errors in region order. */
	CHECK(adac_gc_walk_parts(rt) >= 1);
	for (unsigned parts = 2; parts <= ADAC_GC_WALK_MAX_PARTS; parts++) {
		struct part_seen got[ADAC_GC_WALK_MAX_PARTS];
		void *ctxs[ADAC_GC_WALK_MAX_PARTS];
		memset(got, 0, sizeof got);
		for (unsigned k = 0; k < parts; k++)
			ctxs[k] = &got[k];
		rc = adac_gc_walk_split(rt, parts, collect_part, ctxs, NULL, &rep, &err);
		CHECK(rc == 0);
		reset_walk();
		unsigned nonempty = 0;
		for (unsigned k = 0; k < parts; k++) {
			nonempty += got[k].n > 0;
			data_mismatches += got[k].data_mismatches;
			for (size_t i = 0; i < got[k].n; i++) {
				if (nseen == cap_seen) {
					cap_seen = cap_seen ? cap_seen * 2 : 256;
					seen = realloc(seen, cap_seen * sizeof *seen);
				}
				seen[nseen++] = got[k].v[i];
			}
			free(got[k].v);
		}
		check_objects("split walk");
		CHECK(nonempty >= 2); /* most bytes are in the last region: at most two parts get some */
		CHECK_EQ_U64(rep.objects, nexpected);
		CHECK_EQ_U64(rep.free_objects, 1 + h.big_free);
		CHECK_EQ_U64(rep.contexts_skipped, 1);
		CHECK_EQ_U64(rep.regions_walked, 11);
		CHECK_EQ_U64(rep.bytes_scanned, scanned);
		CHECK_EQ_U64(rep.error_count, 3);
		if (rep.error_count == 3) {
			CHECK(rep.errors[0].region->addr == SEG(2) && rep.errors[0].objects_before == 1);
			CHECK(rep.errors[1].region->addr == SEG(3) && rep.errors[2].region->addr == SEG(4));
			CHECK_ERR(-1, &rep.errors[0].err, ADAC_E_CORRUPT, "has a null MethodTable");
		}
		adac_gc_walk_report_free(&rep);
	}

	reset_walk();
	reset_expected();
	close_runtime(rt);
}

static void test_region_loop(void)
{
	struct wks_heap h;
	load_descriptor(gc_wks_regions);
	build_wks_heap(&h, true);
	struct adac_runtime *rt = heap_runtime();
	struct adac_error err = {0};
	CHECK(adac_gc_info(rt, &err) == NULL);
	CHECK_ERR(-1, &err, ADAC_E_CORRUPT, "GC heap: heap 0: the generation list loops back to region 0x12008000");
	/* The walk fails the same way. */
	struct adac_error err2 = {0};
	CHECK_ERR(adac_gc_walk(rt, NULL, NULL, NULL, &err2), &err2, ADAC_E_CORRUPT, "loops back");
	reset_expected();
	close_runtime(rt);
}

/* ---- server regions: two heaps, the global allocation context -------------------------------- */

static void test_server_regions(void)
{
	load_descriptor(gc_svr_regions);
	write_mts();
	w32(G("MaxGeneration"), 2);
	w32(G("StructureInvalidCount"), 0);
	w32(G("NumHeaps"), 2);
	uint64_t table = MISC + 0x3f000;
	w64(G("Heaps"), table);
	w64(table, HEAP(0));
	w64(table + 8, HEAP(1));
	uint64_t ctx = 0, limit = 0;
	for (unsigned hi = 0; hi < 2; hi++) {
		uint64_t r = 0x30000000ull + hi * 0x400000ull, m, a;
		mem_region(r, 0x1000);
		m = a = r + REGION_HEADER;
		a += put(a, MT_OBJECT, -1, 0);
		if (hi == 1) { /* the global allocation context, then one more object */
			ctx = a;
			limit = a + 0x40;
			a = limit + 24;
		}
		a += put(a, MT_STRING, 3, 0);
		write_seg(hi, m, a, r + 0x1000, 0, 0);
		w64(SEG(hi) + F("HeapSegment", "Heap"), HEAP(hi));
		uint64_t gt = HEAP(hi) + F("GCHeap", "GenerationTable");
		write_gen(gt, 0, SEG(hi));
		w64(HEAP(hi) + F("GCHeap", "AllocAllocated"), a);
		w64(HEAP(hi) + F("GCHeap", "EphemeralHeapSegment"), SEG(hi));
	}
	uint64_t gac = G("GlobalAllocContext") + F("EEAllocContext", "GCAllocationContext");
	w64(gac + F("GCAllocContext", "Pointer"), ctx);
	w64(gac + F("GCAllocContext", "Limit"), limit);
	w64(G("ThreadStore"), 0); /* no managed thread yet */
	struct adac_runtime *rt = heap_runtime();
	struct adac_error err = {0};
	const struct adac_gc_info *info = adac_gc_info(rt, &err);
	CHECK(info != NULL);
	if (info) {
		CHECK(info->server && info->use_regions);
		CHECK_EQ_U64(info->heap_count, 2);
		CHECK_EQ_U64(info->heaps[1].addr, HEAP(1));
		CHECK_EQ_U64(info->region_count, 2);
		CHECK_EQ_U64(info->regions[1].heap, 1);
		CHECK_EQ_U64(info->context_count, 1);
		CHECK_EQ_U64(info->contexts[0].thread, 0);
		CHECK_EQ_U64(info->free_region_count, 0);
		reset_walk();
		struct adac_gc_walk_report rep;
		CHECK(adac_gc_walk(rt, collect, NULL, &rep, &err) == 0);
		check_objects("server regions");
		CHECK_EQ_U64(rep.contexts_skipped, 1);
		CHECK_EQ_U64(rep.error_count, 0);
		adac_gc_walk_report_free(&rep);
	} else {
		fprintf(stderr, "gc info: %s\n", err.msg);
	}
	reset_walk();
	reset_expected();
	close_runtime(rt);
}

/* ---- workstation segments: the ephemeral segment and the generation starts -------------------- */

/* The segments heap below, stopped inside a GC (StructureInvalidCount 1); its gen1 start and its
 * gen0 array's address go to *gen1_start and *gen0_ints. */
static void build_wks_segments(uint64_t *gen1_start, uint64_t *gen0_ints)
{
	load_descriptor(gc_wks_segments);
	write_mts();
	w32(G("MaxGeneration"), 2);
	w32(G("StructureInvalidCount"), 1);
	uint64_t table = G("GCHeapGenerationTable");
	uint64_t m, a;
	/* An old gen2 segment, then the ephemeral one: gen2 objects, gen1 from its allocation start,
	 * gen0 from its own; each generation starts with a free gap object. */
	mem_region(0x40000000, 0x1000);
	m = a = 0x40000000 + 0x1000 - 0x800;
	a += put(a, MT_OBJECT, -1, 2);
	a += put(a, MT_BIG, -1, 2);
	write_seg(0, m, a, 0x40001000, 0, SEG(1));
	mem_region(0x41000000, 0x2000);
	m = a = 0x41000000 + 0x1000;
	a += put(a, MT_OBJECT, -1, 2);
	uint64_t gen1 = *gen1_start = a;
	a += put(a, MT_FREE, 0, 1);
	a += put(a, MT_STRING, 4, 1);
	uint64_t gen0 = a;
	a += put(a, MT_FREE, 0, 0);
	*gen0_ints = a;
	a += put(a, MT_INTS, 2, 0);
	write_seg(1, m, a + 0x100, 0x41002000, 0, 0);
	w64(G("GCHeapAllocAllocated"), a);
	w64(G("GCHeapEphemeralHeapSegment"), SEG(1));
	mem_region(0x42000000, 0x1000);
	m = a = 0x42000000 + 0x1000 - 0x800;
	a += put(a, MT_BYTES, 100, 3);
	write_seg(2, m, a, 0x42001000, 0x8, 0);
	uint32_t gs = gen_size();
	uint32_t start = F("Generation", "AllocationStart");
	write_gen(table, 0, SEG(1));
	w64(table + 0 * gs + start, gen0);
	write_gen(table, 1, SEG(1));
	w64(table + 1 * gs + start, gen1);
	write_gen(table, 2, SEG(0));
	write_gen(table, 3, SEG(2));
	write_gen(table, 4, 0);
	uint64_t none = 0;
	write_threads(1, &none, &none);
}

static void test_wks_segments(void)
{
	uint64_t gen1, ints;
	build_wks_segments(&gen1, &ints); /* stopped inside a GC: reported, walked anyway */
	struct adac_runtime *rt = heap_runtime();
	struct adac_error err = {0};
	const struct adac_gc_info *info = adac_gc_info_walkable(rt, &err); /* (a core is not run) */
	CHECK(info != NULL);
	CHECK_EQ_U64(adac_target_runs(rt->t), 0);
	if (info) {
		CHECK(!info->server && !info->use_regions && !info->structures_valid);
		CHECK_EQ_U64(info->region_count, 3);
		CHECK_EQ_U64(info->regions[0].kind, ADAC_GC_GEN2);
		CHECK_EQ_U64(info->regions[1].kind, ADAC_GC_EPHEMERAL);
		CHECK_EQ_U64(info->regions[2].kind, ADAC_GC_LOH);
		CHECK_EQ_U64(info->heaps[0].gen[1].allocation_start, gen1);
		CHECK_EQ_U64(info->context_count, 0);
		reset_walk();
		struct adac_gc_walk_report rep;
		CHECK(adac_gc_walk(rt, collect, NULL, &rep, &err) == 0);
		check_objects("wks segments");
		CHECK_EQ_U64(rep.free_objects, 2);
		CHECK_EQ_U64(rep.error_count, 0);
		adac_gc_walk_report_free(&rep);
	} else {
		fprintf(stderr, "gc info: %s\n", err.msg);
	}
	reset_walk();
	reset_expected();
	close_runtime(rt);
}

/* ---- a held live process, stopped where its heap cannot be walked ---------------------------- */

/* A backend over the regions as they are when read (a live process's memory), whose run_briefly
 * calls on_run: what the process did while it ran. */
static unsigned runs;
static void (*on_run)(void);

static int64_t live_read(void *impl, uint64_t addr, void *buf, size_t len, struct adac_error *err)
{
	(void)impl, (void)err;
	for (size_t i = 0; i < nregions; i++) {
		if (addr < regions[i].base || addr - regions[i].base >= regions[i].size)
			continue;
		size_t n = regions[i].size - (size_t)(addr - regions[i].base);
		n = n < len ? n : len;
		memcpy(buf, regions[i].p + (addr - regions[i].base), n);
		return (int64_t)n;
	}
	return 0;
}

static int live_modules(void *impl, adac_module_cb cb, void *ctx, struct adac_error *err)
{
	(void)impl, (void)cb, (void)ctx, (void)err;
	return 0;
}

static int live_threads(void *impl, adac_thread_cb cb, void *ctx, struct adac_error *err)
{
	(void)impl, (void)cb, (void)ctx, (void)err;
	return 0;
}

static int live_regs(void *impl, uint64_t tid, struct adac_regs *regs, struct adac_error *err)
{
	(void)impl, (void)regs;
	return adac_fail(err, ADAC_E_NOT_FOUND, 0, "no thread %llu", (unsigned long long)tid);
}

static int live_run(void *impl, unsigned ms, struct adac_error *err)
{
	(void)impl, (void)err;
	CHECK_EQ_U64(ms, 1u << runs); /* 1, 2, 4... ms */
	runs++;
	if (on_run)
		on_run();
	return 0;
}

static const struct adac_target_ops live_ops = {
	.kind = "live",
	.read = live_read,
	.modules = live_modules,
	.threads = live_threads,
	.regs = live_regs,
	.run_briefly = live_run,
};

static uint64_t broken_object, invalid_count; /* (the runtime took `layout`: addresses kept) */

static void gc_ends(void) { w32(invalid_count, 0); }
static void allocation_ends(void) { w64(broken_object, MT(MT_INTS)); }

/* dumpheap --stat --json over the live process; its output in *b, the command's rc. */
static int live_dumpheap(struct buf *b, struct adac_error *err)
{
	struct adac_error e = {0};
	struct adac_target *t = adac_target_new(&live_ops, NULL, &e);
	CHECK(t != NULL);
	struct adac_runtime *rt = runtime_with(t, layout);
	layout = NULL;
	struct adac_out out = {.write = buf_write, .ctx = b};
	struct adac_heap_opts opt = {.stat = true, .json = true};
	runs = 0;
	int rc = adac_heap_print(rt, &opt, &out, err);
	close_runtime(rt);
	return rc;
}

static void test_live_reruns(void)
{
	/* Stopped inside a GC: run until it ended (once here), then walked. */
	uint64_t gen1, ints;
	build_wks_segments(&gen1, &ints);
	invalid_count = G("StructureInvalidCount");
	on_run = gc_ends;
	struct buf b = {0};
	struct adac_error err = {0};
	CHECK(live_dumpheap(&b, &err) == 0);
	CHECK_EQ_U64(runs, 1);
	CHECK(b.p && strstr(b.p, "\"structures_valid\": true") && strstr(b.p, "\"reruns\": 1") &&
	      strstr(b.p, "\"errors\": []"));
	free(b.p);

	/* A GC that never ends: ADAC_MAX_GC_RERUNS tries (1 + 2 + ... + 128 ms), then walked as it is. */
	build_wks_segments(&gen1, &ints);
	on_run = NULL;
	b = (struct buf){0};
	CHECK(live_dumpheap(&b, &err) == 0);
	CHECK_EQ_U64(runs, ADAC_MAX_GC_RERUNS);
	CHECK(b.p && strstr(b.p, "\"structures_valid\": false") && strstr(b.p, "\"reruns\": 8"));
	free(b.p);

	/* Out of the GC, an object without a MethodTable the walk cannot step over (a thread in the
	 * middle of an allocation): run once, and the object is there. */
	build_wks_segments(&gen1, &ints);
	w32(G("StructureInvalidCount"), 0);
	broken_object = ints;
	w64(ints, 0);
	on_run = allocation_ends;
	b = (struct buf){0};
	CHECK(live_dumpheap(&b, &err) == 0);
	CHECK_EQ_U64(runs, 1);
	CHECK(b.p && strstr(b.p, "\"reruns\": 1") && strstr(b.p, "\"errors\": []"));
	free(b.p);

	/* ... and when it stays: the tries spent, the error says so. */
	build_wks_segments(&gen1, &ints);
	w32(G("StructureInvalidCount"), 0);
	w64(ints, 0);
	on_run = NULL;
	b = (struct buf){0};
	char want[256];
	snprintf(want, sizeof want, "the heap walk stopped early in 1 of 3 regions of a process let run and stopped again "
	         "8 times (first: heap 0 ephemeral region 0x%llx: object 0x%llx has a null MethodTable)",
	         (unsigned long long)SEG(1), (unsigned long long)ints);	int rc = live_dumpheap(&b, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, want);
	CHECK_EQ_U64(runs, ADAC_MAX_GC_RERUNS);
	free(b.p);
	reset_expected();
}

/* ---- failures before any walk ------------------------------------------------------------------ */

static void test_unsupported_flavour(void)
{
	char *json = replaced(gc_wks_regions, "workstation, regions, background,", "workstation, satori,");
	load_descriptor(json);
	free(json);
	struct adac_runtime *rt = heap_runtime();
	struct adac_error err = {0};
	CHECK(adac_gc_info(rt, &err) == NULL);
	CHECK_ERR(-1, &err, ADAC_E_UNSUPPORTED, "unsupported GC flavour \"workstation, satori,\"");
	close_runtime(rt);
}

static void test_server_without_layout(void)
{
	/* A server GC that does not describe its GCHeap type. */
	char *json = replaced(gc_wks_regions, "workstation, regions", "server, regions");
	load_descriptor(json);
	free(json);
	w32(G("MaxGeneration"), 2);
	struct adac_runtime *rt = heap_runtime();
	struct adac_error err = {0};
	CHECK(adac_gc_info(rt, &err) == NULL);
	CHECK_ERR(-1, &err, ADAC_E_LAYOUT, "describes no type GCHeap");
	close_runtime(rt);
}

static void test_no_gc_descriptor(void)
{
	load_descriptor(NULL);
	struct adac_runtime *rt = heap_runtime();
	struct adac_error err = {0};
	CHECK(adac_gc_info(rt, &err) == NULL);
	CHECK_ERR(-1, &err, ADAC_E_LAYOUT, "has no GC sub-descriptor");
	close_runtime(rt);
}

/* ---- handle tables and the finalization queue (runtime/gc_handles.c) ---- */

#define HMAP_BUCKETS (MISC + 0x30000)
#define HBUCKET (MISC + 0x30100)
#define HTABLES (MISC + 0x30200)
#define HTABLE (MISC + 0x30300)
#define HSEG(i) (0x30000000ull + 0x10000ull * (i))   /* TableSegments are HandleSegmentSize-aligned */
#define FQ_ARRAY (MISC + 0x31000)
#define FQ (MISC + 0x32000)

struct got_handle {
	uint64_t handle, object, secondary;
	uint32_t type;
};
static struct got_handle got_handles[16];
static size_t ngot_handles;

static int on_handle(void *ctx, const struct adac_gc_handle *h)
{
	(void)ctx;
	if (ngot_handles < 16)
		got_handles[ngot_handles] = (struct got_handle){h->handle, h->object, h->secondary, h->type};
	ngot_handles++;
	return 0;
}

static uint64_t got_fin[8];
static size_t ngot_fin;

static int on_fin(void *ctx, uint64_t slot, uint64_t obj)
{
	(void)ctx;
	if (ngot_fin < 8)
		got_fin[ngot_fin] = slot ^ obj;
	ngot_fin++;
	return 0;
}

/* A handle in block `block`, slot k of segment seg, of a type whose ring is that one block. */
static uint64_t put_handle(uint64_t seg, unsigned type, unsigned block, unsigned k, uint64_t obj)
{
	w8(seg + 1920 + type, (uint8_t)block);    /* RgTail[type] */
	w8(seg + 480 + block, (uint8_t)block);    /* RgAllocation: a ring of one */
	w64(seg + 4096 + (block * 64ull + k) * 8, obj);
	return seg + 4096 + (block * 64ull + k) * 8;
}

/* The handle table and finalization queue of test_handles_and_finalizer; loop: the second segment's
 * NextSegment leads back to the first. */
static void build_handles(bool loop)
{
	struct wks_heap h;
	load_descriptor(gc_wks_regions);
	build_wks_heap(&h, false);
	/* g_HandleTableMap -> buckets[10] -> bucket.Table -> tables[1] -> HandleTable.SegmentList */
	w64(G("HandleTableMap") + 0, HMAP_BUCKETS);
	w64(HMAP_BUCKETS + 3 * 8, HBUCKET);
	w64(HBUCKET, HTABLES);
	w64(HTABLES, HTABLE);
	w64(HTABLE + 56, HSEG(0));
	for (unsigned i = 0; i < 2; i++) {
		mem_region(HSEG(i), 0x10000);
		memset(at(HSEG(i) + 1920, 13), 0xff, 13);    /* RgTail: no block of any type */
		memset(at(HSEG(i) + 1680, 120), 0xff, 120);  /* RgUserData: none */
	}
	w64(HSEG(0) + 1998, HSEG(1));                   /* NextSegment (unaligned: the header is packed) */
	put_handle(HSEG(0), 2, 0, 3, 0xA000);
	put_handle(HSEG(0), 3, 1, 0, 0xB000);
	put_handle(HSEG(0), 0, 2, 7, 0xC000);           /* weak short */
	w64(HSEG(0) + 4096 + (1 * 64ull + 1) * 8, 0);   /* a free slot of the pinned block stays unlisted */
	put_handle(HSEG(0), 6, 3, 5, 0xD000);
	w8(HSEG(0) + 1680 + 3, 4);                      /* RgUserData[3] = block 4: the secondaries */
	w64(HSEG(0) + 4096 + (4 * 64ull + 5) * 8, 0xE000);
	/* a two-block ring of strong handles in the second segment: 5 -> 9 -> 5 */
	w8(HSEG(1) + 1920 + 2, 9);
	w8(HSEG(1) + 480 + 9, 5);
	w8(HSEG(1) + 480 + 5, 9);
	w64(HSEG(1) + 4096 + (5 * 64ull + 63) * 8, 0xF000);
	w64(HSEG(1) + 4096 + (9 * 64ull) * 8, 0xF100);
	/* the finalization queue: generation segments, then 1 critical and 2 ordinary ready objects */
	w64(G("GCHeapFinalizeQueue"), FQ);
	for (unsigned i = 0; i < 7; i++)
		w64(FQ + i * 8, FQ_ARRAY + (i < 4 ? 0 : i == 4 ? 16 : i == 5 ? 24 : 40));
	for (unsigned i = 0; i < 5; i++)
		w64(FQ_ARRAY + i * 8, 0x5000 + i);
	if (loop)
		w64(HSEG(1) + 1998, HSEG(0));
}

static void test_handles_and_finalizer(void)
{
	build_handles(false);
	uint64_t strong = HSEG(0) + 4096 + 3 * 8, pinned = HSEG(0) + 4096 + 64 * 8, dep = HSEG(0) + 4096 + (3 * 64ull + 5) * 8;
	uint64_t s5 = HSEG(1) + 4096 + (5 * 64ull + 63) * 8, s9 = HSEG(1) + 4096 + (9 * 64ull) * 8;
	struct adac_runtime *rt = heap_runtime();
	struct adac_error err = {0};
	ngot_handles = 0;
	CHECK(adac_gc_handles(rt, on_handle, NULL, &err) == 0);
	CHECK_EQ_U64(ngot_handles, 6);
	/* segment by segment, type by type, each ring from RgAllocation[RgTail] */
	CHECK_EQ_U64(got_handles[0].handle, 0 + (HSEG(0) + 4096 + (2 * 64ull + 7) * 8));
	CHECK_EQ_U64(got_handles[0].type, 0);
	CHECK_EQ_U64(got_handles[1].handle, strong);
	CHECK_EQ_U64(got_handles[1].object, 0xA000);
	CHECK_EQ_U64(got_handles[1].type, 2);
	CHECK_EQ_U64(got_handles[2].handle, pinned);
	CHECK_EQ_U64(got_handles[2].type, 3);
	CHECK_EQ_U64(got_handles[3].handle, dep);
	CHECK_EQ_U64(got_handles[3].object, 0xD000);
	CHECK_EQ_U64(got_handles[3].secondary, 0xE000);
	CHECK_EQ_U64(got_handles[3].type, 6);
	CHECK_EQ_U64(got_handles[4].handle, s5);
	CHECK_EQ_U64(got_handles[5].handle, s9);
	CHECK_EQ_U64(got_handles[5].object, 0xF100);
	CHECK(adac_handle_type_is_root(2) && adac_handle_type_is_root(3) && adac_handle_type_is_root(7) &&
	      adac_handle_type_is_root(8) && !adac_handle_type_is_root(0) && !adac_handle_type_is_root(6));
	ngot_fin = 0;
	CHECK(adac_gc_finalizer_ready(rt, on_fin, NULL, &err) == 0);
	CHECK_EQ_U64(ngot_fin, 3);
	CHECK_EQ_U64(got_fin[0], (FQ_ARRAY + 16) ^ 0x5002);
	CHECK_EQ_U64(got_fin[1], (FQ_ARRAY + 24) ^ 0x5003);
	CHECK_EQ_U64(got_fin[2], (FQ_ARRAY + 32) ^ 0x5004);
	close_runtime(rt);

	/* a segment list that loops back fails, naming it */
	build_handles(true);
	rt = heap_runtime();
	memset(&err, 0, sizeof err);
	ngot_handles = 0;
	CHECK(adac_gc_handles(rt, on_handle, NULL, &err) == -1);
	CHECK_EQ_U64(err.code, ADAC_E_CORRUPT);
	CHECK(strstr(err.msg, "loops back to its start") != NULL);
	CHECK_EQ_U64(ngot_handles, 6);
	close_runtime(rt);
}

/* A descriptor placing a TableSegment's per-block or per-type bytes past RgValue (the bytes read
 * before it) fails before any segment is read. */
static void test_handle_layout_out_of_range(void)
{
	char *json = replaced(gc_wks_regions, "\"RgTail\":1920", "\"RgTail\":4090");
	struct wks_heap h;
	load_descriptor(json);
	free(json);
	build_wks_heap(&h, false);
	struct adac_runtime *rt = heap_runtime();
	struct adac_error err = {0};
	ngot_handles = 0;
	CHECK_ERR(adac_gc_handles(rt, on_handle, NULL, &err), &err, ADAC_E_CORRUPT,
	          "RgAllocation, RgUserData or RgTail (+0x1e0, +0x690, +0xffa) not before its RgValue (+0x1000)");
	CHECK_EQ_U64(ngot_handles, 0);
	close_runtime(rt);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_gc_heap <net11.0.0-linux-x64-descriptor.json>\n");
		return 2;
	}
	descriptor_path = argv[1];
	test_wks_regions();
	test_region_loop();
	test_server_regions();
	test_wks_segments();
	test_live_reruns();
	test_unsupported_flavour();
	test_server_without_layout();
	test_no_gc_descriptor();
	test_handles_and_finalizer();
	test_handle_layout_out_of_range();
	/* The walks again over a target that only reads (as a live process): parsed from the read
	 * buffer, not in place. */
	mem_view = false;
	reset_expected(); /* (the tests above that do not walk leave theirs) */
	test_wks_regions();
	test_server_regions();
	test_wks_segments();
	return check_report("test_gc_heap");
}
