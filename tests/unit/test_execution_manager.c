/* test_execution_manager.c - ExecutionManager over synthetic runtime structures in a memory target:
 * nibble maps (linear and constant-time), the range section map, fragment lists, JIT code headers,
 * ReadyToRun RuntimeFunctions / hot-cold map / entry point map / debug-info NativeArray.
 * Layouts come from the real .NET 11.0.0 descriptor (argv[1]). */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "base/limits.h"
#include "code/execution_manager.h"
#include "runtime/descriptor.h"
#include "runtime/runtime.h"
#include "testmem.h"

/* ---- range section map -------------------------------------------------------------------- */

#define MAP 0x7f0000100000ull     /* RangeSectionMap (TopLevelData inline) */
#define LEVELS 0x7f0000200000ull  /* level tables, 2 KiB each */
#define OBJS 0x7f0000300000ull    /* fragments, range sections, heaps, headers */

static uint64_t next_level = LEVELS, next_obj = OBJS;

static uint64_t obj(size_t size)
{
	uint64_t a = next_obj;
	next_obj += (size + 15) & ~(size_t)15;
	return a;
}

static void map_reset(void)
{
	next_level = LEVELS;
	next_obj = OBJS;
	mem_region(MAP, 4096);
	mem_region(LEVELS, 256 * 2048);
	mem_region(OBJS, 1 << 20);
}

/* Points the map's leaf slot for the 128 KiB chunk holding addr at frag (interior pointers and the
 * leaf carry the collectible bit when `collectible`). */
static void map_set(uint64_t addr, uint64_t frag, int collectible)
{
	uint64_t used = addr >> 17, table = MAP + F("RangeSectionMap", "TopLevelData");
	for (int level = 5; level >= 1; level--) {
		uint64_t slot = table + ((used >> ((level - 1) * 8)) & 0xFF) * 8;
		if (level == 1) {
			w64(slot, frag | (collectible ? 1 : 0));
			return;
		}
		uint64_t v;
		memcpy(&v, at(slot, 8), 8);
		if (!v) {
			v = next_level;
			next_level += 2048;
			w64(slot, v | (collectible ? 1 : 0));
		}
		table = v & ~1ull;
	}
}

static uint64_t fragment(uint64_t begin, uint64_t end, uint64_t rs, uint64_t next)
{
	uint64_t f = obj(32);
	w64(f + F("RangeSectionFragment", "RangeBegin"), begin);
	w64(f + F("RangeSectionFragment", "RangeEndOpen"), end);
	w64(f + F("RangeSectionFragment", "RangeSection"), rs);
	w64(f + F("RangeSectionFragment", "Next"), next);
	return f;
}

static uint64_t range_section(uint64_t begin, uint64_t end, int32_t flags, uint64_t heap, uint64_t r2r_module)
{
	uint64_t rs = obj(80);
	w64(rs + F("RangeSection", "RangeBegin"), begin);
	w64(rs + F("RangeSection", "RangeEndOpen"), end);
	w32(rs + F("RangeSection", "Flags"), (uint32_t)flags);
	w64(rs + F("RangeSection", "HeapList"), heap);
	w64(rs + F("RangeSection", "R2RModule"), r2r_module);
	w64(rs + F("RangeSection", "JitManager"), 0x7f0000aa0000ull);
	return rs;
}

/* A range section with one fragment per 128 KiB chunk, as the runtime attaches them. */
static uint64_t add_range(uint64_t begin, uint64_t end, int32_t flags, uint64_t heap, uint64_t r2r_module)
{
	uint64_t rs = range_section(begin, end, flags, heap, r2r_module);
	for (uint64_t a = begin & ~0x1FFFFull; a < end; a += 0x20000)
		map_set(a, fragment(begin, end, rs, 0), 1);
	return rs;
}

/* ---- nibble map ---------------------------------------------------------------------------- */

#define MAPBASE 0x7f0010000000ull
#define HDRMAP 0x7f0000400000ull

/* Writer (EEJitManager::NibbleMapSet): the nibble of a code start, and for the constant-time
 * encoding a pointer in every unit the code block covers entirely after its start. */
static void nib_set(uint64_t start, uint64_t end, int constant)
{
	uint64_t rel = start - MAPBASE, idx = rel / 32;
	uint32_t nib = (uint32_t)((rel & 31) / 4) + 1, shift = 28 - (uint32_t)(idx % 8) * 4;
	uint64_t ua = HDRMAP + idx / 8 * 4;
	uint32_t u;
	memcpy(&u, at(ua, 4), 4);
	u = (u & ~(0xFu << shift)) | (nib << shift);
	w32(ua, u);
	if (!constant)
		return;
	uint32_t ptr = (uint32_t)((rel & ~0xFull) + ((rel & 0xF) >> 2) + 9);
	for (uint64_t unit = idx / 8 + 1; (unit + 1) * 256 <= end - MAPBASE; unit++)
		w32(HDRMAP + unit * 4, ptr);
}

static uint64_t find(struct adac_target *t, enum adac_nibble_kind kind, uint64_t ip)
{
	uint64_t start = 0xdead;
	struct adac_error err = {0};
	int rc = adac_em_nibble_find(t, kind, MAPBASE, HDRMAP, ip, &start, &err);
	CHECK(rc == 0);
	return start;
}

static void test_nibble_linear(void)
{
	mem_reset();
	mem_region(HDRMAP, 4096);
	/* Code at +0x130 (bucket 9, nibble 5), +0x100 and +0x150 (same unit), +0x1000. */
	nib_set(MAPBASE + 0x130, MAPBASE + 0x140, 0);
	struct adac_target *t = mem_target();
	CHECK_EQ_U64(find(t, ADAC_NIBBLE_LINEAR, MAPBASE + 0x130), MAPBASE + 0x130);
	CHECK_EQ_U64(find(t, ADAC_NIBBLE_LINEAR, MAPBASE + 0x132), MAPBASE + 0x130);
	CHECK_EQ_U64(find(t, ADAC_NIBBLE_LINEAR, MAPBASE + 0x12E), 0);       /* before any code */
	CHECK_EQ_U64(find(t, ADAC_NIBBLE_LINEAR, MAPBASE + 0x10), 0);
	CHECK_EQ_U64(find(t, ADAC_NIBBLE_LINEAR, MAPBASE - 0x10), 0);        /* below the map */
	CHECK_EQ_U64(find(t, ADAC_NIBBLE_LINEAR, MAPBASE + 0x8F0), MAPBASE + 0x130); /* scans back 8 units */
	adac_target_close(t);

	mem_reset();
	mem_region(HDRMAP, 4096);
	nib_set(MAPBASE + 0x100, 0, 0);
	nib_set(MAPBASE + 0x154, 0, 0);
	nib_set(MAPBASE + 0x3FC, 0, 0); /* last slot of unit 3 */
	t = mem_target();
	uint32_t u;
	CHECK(adac_read_u32(t, HDRMAP + 4, &u, NULL) == 0 && u == 0x10600000);
	CHECK_EQ_U64(find(t, ADAC_NIBBLE_LINEAR, MAPBASE + 0x148), MAPBASE + 0x100); /* earlier nibble, same unit */
	CHECK_EQ_U64(find(t, ADAC_NIBBLE_LINEAR, MAPBASE + 0x150), MAPBASE + 0x100); /* nibble after ip's offset */
	CHECK_EQ_U64(find(t, ADAC_NIBBLE_LINEAR, MAPBASE + 0x154), MAPBASE + 0x154);
	CHECK_EQ_U64(find(t, ADAC_NIBBLE_LINEAR, MAPBASE + 0x3FB), MAPBASE + 0x154);
	CHECK_EQ_U64(find(t, ADAC_NIBBLE_LINEAR, MAPBASE + 0x3FF), MAPBASE + 0x3FC);
	CHECK_EQ_U64(find(t, ADAC_NIBBLE_LINEAR, MAPBASE + 0x400), MAPBASE + 0x3FC); /* previous unit's last nibble */
	adac_target_close(t);

	/* An unreadable map is an error naming it. */
	mem_reset();
	mem_region(HDRMAP, 4);
	t = mem_target();
	uint64_t start;
	struct adac_error err = {0};
	int rc = adac_em_nibble_find(t, ADAC_NIBBLE_LINEAR, MAPBASE, HDRMAP, MAPBASE + 0x1000, &start, &err);
	CHECK_ERR(rc, &err, ADAC_E_READ, "nibble map at 0x7f0000400000: cannot read 4 bytes at 0x7f0000400040");
	adac_target_close(t);
}

static void test_nibble_constant(void)
{
	mem_reset();
	mem_region(HDRMAP, 4096);
	/* Four long methods whose starts have low nibbles 0, 4, 8, C: pointer units 9, 10, 11, 12. */
	uint64_t starts[4] = {MAPBASE + 0x130, MAPBASE + 0x1034, MAPBASE + 0x2078, MAPBASE + 0x30BC};
	for (int i = 0; i < 4; i++)
		nib_set(starts[i], starts[i] + 0x900, 1);
	struct adac_target *t = mem_target();
	for (int i = 0; i < 4; i++) {
		uint64_t unit = (starts[i] - MAPBASE) / 256 + 2, u;
		uint32_t u32;
		CHECK(adac_read_u32(t, HDRMAP + unit * 4, &u32, NULL) == 0);
		u = u32;
		CHECK_EQ_U64(u & 0xF, 9 + i);
		/* In the start's own unit, in the next (pointer) unit, deep inside, at the last byte. */
		CHECK_EQ_U64(find(t, ADAC_NIBBLE_CONSTANT, starts[i]), starts[i]);
		CHECK_EQ_U64(find(t, ADAC_NIBBLE_CONSTANT, starts[i] + 0x10), starts[i]);
		CHECK_EQ_U64(find(t, ADAC_NIBBLE_CONSTANT, starts[i] + 0x200), starts[i]);
		CHECK_EQ_U64(find(t, ADAC_NIBBLE_CONSTANT, starts[i] + 0x8FF), starts[i]);
		/* The linear reader must not be used on this encoding: it reads pointers as nibbles. */
		CHECK(find(t, ADAC_NIBBLE_LINEAR, starts[i] + 0x400) != starts[i]);
	}
	CHECK_EQ_U64(find(t, ADAC_NIBBLE_CONSTANT, MAPBASE + 0x12C), 0); /* before any code */
	CHECK_EQ_U64(find(t, ADAC_NIBBLE_CONSTANT, MAPBASE), 0);
	adac_target_close(t);

	/* The one-previous-unit rule: a start two or more units back is not found without pointers. */
	mem_reset();
	mem_region(HDRMAP, 4096);
	nib_set(MAPBASE + 0x130, 0, 0);   /* a nibble only, as for a short method */
	t = mem_target();
	CHECK_EQ_U64(find(t, ADAC_NIBBLE_CONSTANT, MAPBASE + 0x1F0), MAPBASE + 0x130); /* same unit */
	CHECK_EQ_U64(find(t, ADAC_NIBBLE_CONSTANT, MAPBASE + 0x230), MAPBASE + 0x130); /* one unit back */
	CHECK_EQ_U64(find(t, ADAC_NIBBLE_CONSTANT, MAPBASE + 0x330), 0);               /* two units back */
	CHECK_EQ_U64(find(t, ADAC_NIBBLE_LINEAR, MAPBASE + 0x330), MAPBASE + 0x130);
	adac_target_close(t);

	/* A pointer in the previous unit (ip in an empty unit after a long method's last full unit). */
	mem_reset();
	mem_region(HDRMAP, 4096);
	w32(HDRMAP + 3 * 4, 0x139);
	t = mem_target();
	CHECK_EQ_U64(find(t, ADAC_NIBBLE_CONSTANT, MAPBASE + 0x420), MAPBASE + 0x130);
	adac_target_close(t);
}

/* ---- contract version -> encoding ------------------------------------------------------------ */

static void test_contract_versions(void)
{
	mem_reset();
	struct adac_target *t = mem_target();
	static const struct {
		const char *tag;
		int ok;
		enum adac_nibble_kind kind;
	} cases[] = {
		{"\"ExecutionManager\":\"c1\"", 1, ADAC_NIBBLE_CONSTANT}, {"\"ExecutionManager\":\"2\" ", 1, ADAC_NIBBLE_CONSTANT},
		{"\"ExecutionManager\":\"1\" ", 1, ADAC_NIBBLE_LINEAR},   {"\"ExecutionManager\":\"c7\"", 0, 0},
		{"\"ExecutionMgr____\":\"c1\"", 0, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct adac_runtime *rt = make_runtime(t, MAP, 0, "\"ExecutionManager\":\"c1\"", cases[i].tag);
		enum adac_nibble_kind kind = 99;
		struct adac_error err = {0};
		int rc = adac_em_nibble_kind(rt, &kind, &err);
		if (cases[i].ok) {
			CHECK(rc == 0 && kind == cases[i].kind);
		} else if (i == 3) {
			CHECK_ERR(rc, &err, ADAC_E_UNSUPPORTED, "ExecutionManager contract version \"c7\" is not supported");
		} else {
			CHECK_ERR(rc, &err, ADAC_E_LAYOUT, "does not describe the ExecutionManager contract");
		}
		adac_runtime_close(rt);
	}
	adac_target_close(t);
}

/* ---- JIT code through the whole map --------------------------------------------------------- */

#define MD1 0x7f00000e0010ull
#define MD2 0x7f00000e0020ull

struct jit_fixture {
	uint64_t heap, rs, rch1, rch2, start1, start2, stub_start;
};

/* One code heap [MAPBASE+0x100, MAPBASE+0x10000): method 1 at +0x130 (0x900 bytes), a stub block
 * at +0xA40, method 2 at +0x1000 (0x40 bytes). */
static void build_jit(struct jit_fixture *fx, int constant)
{
	mem_region(HDRMAP, 4096);
	mem_region(MAPBASE, 0x10000);
	fx->heap = obj(80);
	w64(fx->heap + F("CodeHeapListNode", "StartAddress"), MAPBASE + 0x100);
	w64(fx->heap + F("CodeHeapListNode", "EndAddress"), MAPBASE + 0xFFFF);
	w64(fx->heap + F("CodeHeapListNode", "MapBase"), MAPBASE);
	w64(fx->heap + F("CodeHeapListNode", "HeaderMap"), HDRMAP);
	fx->rs = add_range(MAPBASE, MAPBASE + 0x10000, 0x2 | 0x1 /* CodeHeap | Collectible */, fx->heap, 0);
	fx->start1 = MAPBASE + 0x130;
	fx->start2 = MAPBASE + 0x1000;
	fx->stub_start = MAPBASE + 0xA40;
	fx->rch1 = obj(64);
	fx->rch2 = obj(64);
	w64(fx->rch1 + F("RealCodeHeader", "MethodDesc"), MD1);
	w64(fx->rch1 + F("RealCodeHeader", "DebugInfo"), 0x7f00000d0000ull);
	w64(fx->rch2 + F("RealCodeHeader", "MethodDesc"), MD2);
	w64(fx->start1 - 8, fx->rch1);
	w64(fx->start2 - 8, fx->rch2);
	w64(fx->stub_start - 8, 5); /* a stub code block: the header slot holds its kind */
	nib_set(fx->start1, fx->start1 + 0x900, constant);
	nib_set(fx->stub_start, fx->stub_start + 0x40, constant);
	nib_set(fx->start2, fx->start2 + 0x40, constant);
}

static void test_jit(void)
{
	mem_reset();
	map_reset();
	struct jit_fixture fx;
	build_jit(&fx, 1);
	struct adac_target *t = mem_target();
	struct adac_runtime *rt = make_runtime(t, MAP, 0, NULL, NULL);
	struct adac_code_info ci;
	struct adac_error err = {0};
	int rc = adac_em_find_code(rt, fx.start1 + 0x4cb, &ci, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	CHECK(rc == 0);
	CHECK(ci.kind == ADAC_CODE_JIT);
	CHECK_EQ_U64(ci.method_desc, MD1);
	CHECK_EQ_U64(ci.code_start, fx.start1);
	CHECK_EQ_U64(ci.offset, 0x4cb);
	CHECK_EQ_U64(ci.code_header, fx.rch1);
	CHECK_EQ_U64(ci.debug_info, 0x7f00000d0000ull);
	CHECK(!ci.debug_info_flag_byte);
	CHECK_EQ_U64(ci.range_section, fx.rs);
	CHECK(adac_em_find_code(rt, fx.start2 + 0x3f, &ci, &err) == 0 && ci.method_desc == MD2 && ci.code_start == fx.start2);
	/* A stub code block: the code header slot holds a kind <= StubCodeBlockLast. */
	CHECK(adac_em_find_code(rt, fx.stub_start + 4, &ci, &err) == 0);
	CHECK(ci.kind == ADAC_CODE_STUB && ci.stub_kind == 5 && ci.method_desc == 0 && ci.code_start == fx.stub_start);
	CHECK_EQ_STR(adac_em_stub_kind_name(ci.stub_kind), "FixupPrecode");
	/* In the heap's range but before the used part, or after every code block's reach. */
	rc = adac_em_find_code(rt, MAPBASE + 0x80, &ci, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "0x7f0010000080 is outside the used part [0x7f0010000100, 0x7f001000ffff] of code heap");
	adac_error_clear(&err);
	rc = adac_em_find_code(rt, MAPBASE + 0x120, &ci, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "0x7f0010000120 is in code heap 0x7f0000300");
	adac_error_clear(&err);
	/* Not mapped at all: the next 128 KiB chunk (level 1), and an address differing in bit 49
	 * (the top level's index). */
	rc = adac_em_find_code(rt, MAPBASE + 0x20000, &ci, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "0x7f0010020000 is not in any code range the runtime knows");
	adac_error_clear(&err);
	rc = adac_em_find_code(rt, (MAPBASE + 0x200) ^ (1ull << 49), &ci, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "is not in any code range the runtime knows");
	adac_error_clear(&err);
	/* Address bits 57..63 are not part of the map: the same leaf, but outside the fragment. */
	rc = adac_em_find_code(rt, (fx.start1 + 8) | (1ull << 60), &ci, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "0x10007f0010000138 is not in any code range");
	adac_error_clear(&err);
	/* A range section being deleted is not searched. */
	w64(fx.rs + F("RangeSection", "NextForDelete"), 0x7f0000377770ull);
	adac_runtime_close(rt);
	adac_target_close(t);
	t = mem_target();
	rt = make_runtime(t, MAP, 0, NULL, NULL);
	rc = adac_em_find_code(rt, fx.start1, &ci, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "which is being deleted");
	adac_error_clear(&err);
	w64(fx.rs + F("RangeSection", "NextForDelete"), 0);
	/* A corrupt code header: no MethodDesc. */
	w64(fx.rch2 + F("RealCodeHeader", "MethodDesc"), 0);
	adac_runtime_close(rt);
	adac_target_close(t);
	t = mem_target();
	rt = make_runtime(t, MAP, 0, NULL, NULL);
	rc = adac_em_find_code(rt, fx.start2, &ci, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "RealCodeHeader at 0x7f0000300");
	adac_error_clear(&err);
	adac_runtime_close(rt);
	adac_target_close(t);

	/* The same heap under ExecutionManager "1" (linear map written without pointers): found deep in
	 * the method; the constant-time reader would stop after one unit. */
	mem_reset();
	map_reset();
	build_jit(&fx, 0);
	t = mem_target();
	rt = make_runtime(t, MAP, 0, "\"ExecutionManager\":\"c1\"", "\"ExecutionManager\":\"1\" ");
	CHECK(adac_em_find_code(rt, fx.start1 + 0x800, &ci, &err) == 0 && ci.method_desc == MD1 && ci.code_start == fx.start1);
	adac_runtime_close(rt);
	rt = make_runtime(t, MAP, 0, NULL, NULL);
	rc = adac_em_find_code(rt, fx.start1 + 0x800, &ci, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "but in no code block");
	adac_runtime_close(rt);
	adac_target_close(t);
}

static void test_fragments(void)
{
	mem_reset();
	map_reset();
	mem_region(MAPBASE, 0x1000);
	/* Two sections in one 128 KiB chunk: the list holds both fragments; the second matches. */
	uint64_t heap = obj(80);
	w64(heap + F("CodeHeapListNode", "StartAddress"), MAPBASE + 0x800);
	w64(heap + F("CodeHeapListNode", "EndAddress"), MAPBASE + 0xFFF);
	w64(heap + F("CodeHeapListNode", "MapBase"), MAPBASE);
	w64(heap + F("CodeHeapListNode", "HeaderMap"), HDRMAP);
	mem_region(HDRMAP, 64);
	uint64_t rs_a = range_section(MAPBASE, MAPBASE + 0x800, 0x2, heap, 0);
	uint64_t rs_b = range_section(MAPBASE + 0x800, MAPBASE + 0x1000, 0x2, heap, 0);
	uint64_t fb = fragment(MAPBASE + 0x800, MAPBASE + 0x1000, rs_b, 0);
	uint64_t fa = fragment(MAPBASE, MAPBASE + 0x800, rs_a, fb | 1 /* collectible flag */);
	map_set(MAPBASE, fa, 0);
	nib_set(MAPBASE + 0x900, MAPBASE + 0x940, 1);
	/* The code header slot before +0x900 holds 0: a stub block of unknown kind. */
	struct adac_target *t = mem_target();
	struct adac_runtime *rt = make_runtime(t, MAP, 0, NULL, NULL);
	struct adac_code_info ci;
	struct adac_error err = {0};
	CHECK(adac_em_find_code(rt, MAPBASE + 0x910, &ci, &err) == 0);
	CHECK(ci.range_section == rs_b && ci.kind == ADAC_CODE_STUB && ci.stub_kind == 0);
	adac_runtime_close(rt);
	adac_target_close(t);

	/* A cycle: fa -> fb -> fa, neither containing the address. */
	w64(fa + F("RangeSectionFragment", "RangeEndOpen"), MAPBASE + 0x100);
	w64(fb + F("RangeSectionFragment", "RangeBegin"), MAPBASE + 0xF00);
	w64(fb + F("RangeSectionFragment", "Next"), fa);
	t = mem_target();
	rt = make_runtime(t, MAP, 0, NULL, NULL);
	int rc = adac_em_find_code(rt, MAPBASE + 0x910, &ci, &err);
	CHECK_ERR(rc, &err, ADAC_E_LIMIT, "RangeSectionFragment list at 0x7f0000300");
	CHECK(strstr(err.msg, "ADAC_MAX_RANGE_FRAGMENTS (4096)") != NULL);
	adac_error_clear(&err);
	adac_runtime_close(rt);
	adac_target_close(t);

	/* An overlong list without a cycle. */
	uint64_t next = 0;
	for (unsigned i = 0; i <= ADAC_MAX_RANGE_FRAGMENTS; i++)
		next = fragment(MAPBASE + 0xF00, MAPBASE + 0xF10, rs_b, next);
	map_set(MAPBASE, next, 1);
	t = mem_target();
	rt = make_runtime(t, MAP, 0, NULL, NULL);
	rc = adac_em_find_code(rt, MAPBASE + 0x910, &ci, &err);
	CHECK_ERR(rc, &err, ADAC_E_LIMIT, "is longer than ADAC_MAX_RANGE_FRAGMENTS");
	adac_error_clear(&err);
	/* A fragment pointer to unreadable memory is a read error naming the structure. */
	map_set(MAPBASE, 0x7f00deadbe00ull, 0);
	adac_runtime_close(rt);
	adac_target_close(t);
	t = mem_target();
	rt = make_runtime(t, MAP, 0, NULL, NULL);
	rc = adac_em_find_code(rt, MAPBASE + 0x910, &ci, &err);
	CHECK_ERR(rc, &err, ADAC_E_READ, "RangeSectionFragment at 0x7f00deadbe00: cannot read");
	adac_runtime_close(rt);
	adac_target_close(t);
}

/* ---- ReadyToRun ------------------------------------------------------------------------------ */

#define IMAGE 0x7f0020000000ull
#define IMAGE_SIZE 0x100000u
#define R2R_MODULE 0x7f00000f0000ull
#define NRF 40u
#define RF_RVA 0x80000u
#define DEBUG_RVA 0x90000u
#define MDS 0x7f00000e1000ull /* MethodDesc of function i: MDS + 0x40 * i */

static uint32_t rf_begin(unsigned i) { return 0x1000 + i * 0x100; }

/* Functions 0..34 are hot, 35..39 cold: 35 (and its funclet 36) belong to 31, 37 (and 38, 39)
 * to 33. 7 is a funclet of 6 (no entry in the map). */
static int has_entry(unsigned i) { return i != 7 && i < 35; }

static uint64_t hm_buckets;
static uint32_t hm_size;

/* HashMap::InsertValue for a PtrHashMap (values stored >> 1; a full bucket gets the collision bit). */
static void hm_insert(uint64_t key, uint64_t value)
{
	uint32_t seed = (uint32_t)(key >> 2), incr = 1 + ((uint32_t)(key >> 5) + 1) % (hm_size - 1);
	for (uint32_t i = 0; i < hm_size; i++, seed += incr) {
		uint64_t b = hm_buckets + 64 + 64ull * (seed % hm_size);
		for (unsigned k = 0; k < 4; k++) {
			uint64_t kv;
			memcpy(&kv, at(b + k * 8, 8), 8);
			if (kv == 0) {
				w64(b + k * 8, key);
				uint64_t v0;
				memcpy(&v0, at(b + 32 + k * 8, 8), 8);
				w64(b + 32 + k * 8, (v0 & 0x8000000000000000ull) | (value >> 1));
				return;
			}
		}
		uint64_t v0;
		memcpy(&v0, at(b + 32, 8), 8);
		w64(b + 32, v0 | 0x8000000000000000ull);
	}
	abort();
}

/* NativeFormat writer, 5-byte unsigned form only (0x0F + u32) so offsets are easy to compute. */
static uint32_t nf_pos;
static void nf_u5(uint32_t v)
{
	w8(IMAGE + nf_pos, 0x0F);
	w32(IMAGE + nf_pos + 1, v);
	nf_pos += 5;
}

static uint32_t blob_rva[NRF];

/* Element data: the lookback (0: the blob follows) then the blob. */
static void nf_element(unsigned i)
{
	if (i == 2) { /* shares function 1's blob */
		uint32_t here = nf_pos;
		w8(IMAGE + nf_pos, (uint8_t)((here - blob_rva[1]) << 1)); /* 1-byte form: value << 1 */
		nf_pos++;
		blob_rva[2] = blob_rva[1];
		return;
	}
	w8(IMAGE + nf_pos++, 0);
	blob_rva[i] = nf_pos;
	w8(IMAGE + nf_pos++, (uint8_t)i);
	w8(IMAGE + nf_pos++, 0xEE);
}

/* Methods with debug info: all but 9, and in block 2 (32..39) only 33 (a special leaf). */
static int nf_present(unsigned i) { return i < NRF && has_entry(i) && i != 9 && (i < 32 || i == 33); }

/* The subtree over indices [lo, lo + span) at nf_pos (span 16 for a block: one level per bit 8, 4,
 * 2, 1); returns whether anything was written. */
static int nf_tree(unsigned lo, unsigned span)
{
	int any = 0;
	for (unsigned i = lo; i < lo + span; i++)
		any |= nf_present(i);
	if (!any)
		return 0;
	if (span == 1) {
		nf_element(lo);
		return 1;
	}
	uint32_t node = nf_pos;
	nf_u5(0);
	int left = nf_tree(lo, span / 2);
	uint32_t right_at = nf_pos;
	int right = nf_tree(lo + span / 2, span / 2);
	w32(IMAGE + node + 1, (left ? 1u : 0u) | (right ? 2u | ((right_at - node) << 2) : 0u));
	return 1;
}

static void build_debug_info(void)
{
	/* Header: count << 2 | entry size 2 (u32 block offsets); then one offset per 16 elements. */
	nf_pos = DEBUG_RVA;
	nf_u5(NRF << 2 | 2);
	uint32_t base = nf_pos, nblocks = (NRF + 15) / 16;
	nf_pos += 4 * nblocks;
	for (uint32_t b = 0; b < nblocks; b++) {
		w32(IMAGE + base + 4 * b, nf_pos - base);
		if (b == 2) {
			/* Block 2 (32..39) has only element 33: a special leaf at the block root. */
			w8(IMAGE + nf_pos++, (uint8_t)(((33 & 15) << 2) << 1)); /* 1-byte form of (1 << 2) */
			nf_element(33);
			continue;
		}
		nf_tree(b * 16, 16);
	}
}

static struct adac_runtime *build_r2r(struct adac_target **tp, uint32_t nhotcold)
{
	mem_reset();
	map_reset();
	mem_region(IMAGE, IMAGE_SIZE);
	mem_region(R2R_MODULE, 4096);
	uint64_t info = obj(1024), header = obj(32), delay = obj(16), dbg = obj(16), hotcold = obj(64);
	hm_size = 11;
	hm_buckets = obj(64 * (hm_size + 1));
	w32(hm_buckets, hm_size);
	add_range(IMAGE, IMAGE + IMAGE_SIZE, 0, 0, R2R_MODULE);
	w64(R2R_MODULE + F("Module", "ReadyToRunInfo"), info);
	w64(info + F("ReadyToRunInfo", "ReadyToRunHeader"), header);
	w16(header + F("ReadyToRunHeader", "MajorVersion"), 26);
	w64(info + F("ReadyToRunInfo", "CompositeInfo"), info);
	w32(info + F("ReadyToRunInfo", "NumRuntimeFunctions"), NRF);
	w64(info + F("ReadyToRunInfo", "RuntimeFunctions"), IMAGE + RF_RVA);
	w32(info + F("ReadyToRunInfo", "NumHotColdMap"), nhotcold);
	w64(info + F("ReadyToRunInfo", "HotColdMap"), hotcold);
	w64(info + F("ReadyToRunInfo", "DelayLoadMethodCallThunks"), delay);
	w64(info + F("ReadyToRunInfo", "DebugInfoSection"), dbg);
	w64(info + F("ReadyToRunInfo", "EntryPointToMethodDescMap") + F("HashMap", "Buckets"), hm_buckets);
	w32(delay + F("ImageDataDirectory", "VirtualAddress"), 0x800);
	w32(delay + F("ImageDataDirectory", "Size"), 0x100);
	w32(dbg + F("ImageDataDirectory", "VirtualAddress"), DEBUG_RVA);
	w32(dbg + F("ImageDataDirectory", "Size"), 0x1000);
	uint32_t pairs[] = {35, 31, 37, 33};
	for (unsigned i = 0; i < 4; i++)
		w32(hotcold + 4 * i, pairs[i]);
	uint32_t rfsize = F("RuntimeFunction", NULL);
	for (unsigned i = 0; i < NRF; i++) {
		uint64_t rf = IMAGE + RF_RVA + i * rfsize;
		w32(rf + F("RuntimeFunction", "BeginAddress"), rf_begin(i));
		w32(rf + F("RuntimeFunction", "EndAddress"), rf_begin(i) + 0x80);
		if (has_entry(i))
			hm_insert(IMAGE + rf_begin(i), MDS + 0x40 * i);
	}
	build_debug_info();
	*tp = mem_target();
	return make_runtime(*tp, MAP, 0, NULL, NULL);
}

static void check_r2r(struct adac_runtime *rt, uint64_t ip, unsigned method, uint64_t offset)
{
	struct adac_code_info ci;
	struct adac_error err = {0};
	int rc = adac_em_find_code(rt, ip, &ci, &err);
	if (rc)
		fprintf(stderr, "ip 0x%llx: %s\n", (unsigned long long)ip, err.msg);
	CHECK(rc == 0);
	CHECK(ci.kind == ADAC_CODE_R2R);
	CHECK_EQ_U64(ci.method_desc, MDS + 0x40 * method);
	CHECK_EQ_U64(ci.code_start, IMAGE + rf_begin(method));
	CHECK_EQ_U64(ci.offset, offset);
	CHECK_EQ_U64(ci.r2r_module, R2R_MODULE);
	CHECK_EQ_U64(ci.r2r_major, 26);
	CHECK(!ci.debug_info_flag_byte);
	CHECK_EQ_U64(ci.debug_info, nf_present(method) ? IMAGE + blob_rva[method] : 0);
}

static void test_r2r(void)
{
	struct adac_target *t;
	struct adac_runtime *rt = build_r2r(&t, 4);
	/* Binary search edges: the first function, a function's last byte and the next one's first,
	 * the middle, the last function and beyond its end (the runtime does not check EndAddress). */
	check_r2r(rt, IMAGE + rf_begin(0), 0, 0);
	check_r2r(rt, IMAGE + rf_begin(1) - 1, 0, 0xFF);
	check_r2r(rt, IMAGE + rf_begin(1), 1, 0);
	check_r2r(rt, IMAGE + rf_begin(2) + 0x10, 2, 0x10); /* debug info through a lookback */
	check_r2r(rt, IMAGE + rf_begin(20) + 0x7F, 20, 0x7F);
	check_r2r(rt, IMAGE + rf_begin(34) + 0x10, 34, 0x10);
	check_r2r(rt, IMAGE + rf_begin(9) + 4, 9, 4);        /* no debug info element */
	/* A funclet (7) belongs to the method before it. */
	check_r2r(rt, IMAGE + rf_begin(7) + 8, 6, 0x108);
	/* Cold parts: 35 and its funclet 36 belong to 31; 37..39 to 33 (39 beyond its end). The
	 * offset counts the hot part (0x80 bytes) first. */
	check_r2r(rt, IMAGE + rf_begin(35) + 0x10, 31, 0x80 + 0x10);
	check_r2r(rt, IMAGE + rf_begin(36) + 0x10, 31, 0x80 + 0x110);
	check_r2r(rt, IMAGE + rf_begin(37), 33, 0x80);
	check_r2r(rt, IMAGE + rf_begin(39) + 0x200, 33, 0x80 + 0x400);
	check_r2r(rt, IMAGE + rf_begin(33) + 0x20, 33, 0x20); /* the hot part itself */
	struct adac_code_info ci;
	struct adac_error err = {0};
	/* Before the first function. */
	int rc = adac_em_find_code(rt, IMAGE + 0x900 + 0x100, &ci, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "0x7f0020000a00 precedes the first RuntimeFunction of ReadyToRun image 0x7f0020000000");
	adac_error_clear(&err);
	/* In the delay-load method call thunks. */
	CHECK(adac_em_find_code(rt, IMAGE + 0x850, &ci, &err) == 0);
	CHECK(ci.kind == ADAC_CODE_STUB && ci.stub_kind == ADAC_STUB_METHOD_CALL_THUNK && ci.method_desc == 0);
	adac_runtime_close(rt);
	adac_target_close(t);

	/* Without a hot/cold map, a cold part is just a funclet of the function before it. */
	rt = build_r2r(&t, 0);
	check_r2r(rt, IMAGE + rf_begin(36) + 0x10, 34, 0x210);
	adac_runtime_close(rt);
	adac_target_close(t);

	/* A hot/cold map that names a function out of range is corrupt. */
	rt = build_r2r(&t, 4);
	adac_runtime_close(rt);
	adac_target_close(t);
	uint64_t info;
	memcpy(&info, at(R2R_MODULE + F("Module", "ReadyToRunInfo"), 8), 8);
	uint64_t hotcold;
	memcpy(&hotcold, at(info + F("ReadyToRunInfo", "HotColdMap"), 8), 8);
	w32(hotcold + 4, 4000);
	t = mem_target();
	rt = make_runtime(t, MAP, 0, NULL, NULL);
	rc = adac_em_find_code(rt, IMAGE + rf_begin(35), &ci, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "names RuntimeFunction 4000 of 40");
	adac_error_clear(&err);
	adac_runtime_close(rt);
	adac_target_close(t);
	mem_reset();
}

int main(int argc, char **argv)
{
	if (layout_from_args(argc, argv))
		return 2;
	test_nibble_linear();
	test_nibble_constant();
	test_contract_versions();
	test_jit();
	test_fragments();
	test_r2r();
	adac_desc_free(layout);
	mem_reset();
	return check_report("test_execution_manager");
}
