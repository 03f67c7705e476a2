/* test_precode.c - PrecodeStubs over synthetic precodes in a memory target: the byte templates of
 * the real .NET 11.0.0 x64 runtime (stub, PInvokeImport, ThisPtrRetBuf, UMEntry, fixup), ignored
 * bytes, interior addresses, the RangeList path of the ExecutionManager, entry point -> MethodDesc,
 * code pointer flags, and the older type-immediate descriptors. Layouts come from argv[1]. */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "code/execution_manager.h"
#include "code/precode.h"
#include "runtime/descriptor.h"
#include "runtime/runtime.h"
#include "testmem.h"

/* ---- the real x64 PrecodeMachineDescriptor (read from a live .NET 11.0.0 process) --------- */

#define PLATFORM 0x7f0000500000ull
#define CODE 0x7f0030000000ull  /* stub precode code page; data at +0x4000 */
#define FCODE 0x7f0030008000ull /* fixup precode code page */
#define CODE2 0x7f0030020000ull /* a stub precode page without its data page */
#define OBJS 0x7f0000300000ull
#define PAGE 0x4000u

static const uint8_t stub_bytes[24] = {0x4c, 0x8b, 0x15, 0xf9, 0x3f, 0x00, 0x00, 0xff, 0x25, 0xfb, 0x3f, 0x00, 0x00};
static const uint8_t fixup_bytes[24] = {0xff, 0x25, 0xfa, 0x3f, 0x00, 0x00, 0x4c, 0x8b, 0x15, 0xfb,
                                        0x3f, 0x00, 0x00, 0xff, 0x25, 0xfd, 0x3f, 0x00, 0x00};
enum { STUB_MEANINGFUL = 13, FIXUP_MEANINGFUL = 19 };
enum { T_STUB = 3, T_PINVOKE = 5, T_FIXUP = 2, T_THISPTR = 8, T_UMENTRY = 7 };

static void write_platform(uint8_t cpflags)
{
	uint64_t pmd = PLATFORM + F("PlatformMetadata", "PrecodeMachineDescriptor");
	const char *T = "PrecodeMachineDescriptor";
	w32(pmd + F(T, "StubCodePageSize"), PAGE);
	w8(pmd + F(T, "InvalidPrecodeType"), 0xff);
	w8(pmd + F(T, "PInvokeImportPrecodeType"), T_PINVOKE);
	w8(pmd + F(T, "FixupPrecodeType"), T_FIXUP);
	w8(pmd + F(T, "FixupCodeOffset"), 6);
	w8(pmd + F(T, "FixupStubPrecodeSize"), 24);
	wbytes(pmd + F(T, "FixupBytes"), fixup_bytes, 24);
	w8(pmd + F(T, "StubPrecodeSize"), 24);
	w8(pmd + F(T, "StubPrecodeType"), T_STUB);
	wbytes(pmd + F(T, "StubBytes"), stub_bytes, 24);
	w8(pmd + F(T, "ThisPointerRetBufPrecodeType"), T_THISPTR);
	w8(pmd + F(T, "UMEntryPrecodeType"), T_UMENTRY);
	for (unsigned i = 0; i < 24; i++) {
		w8(pmd + F(T, "StubIgnoredBytes") + i, i >= STUB_MEANINGFUL);
		w8(pmd + F(T, "FixupIgnoredBytes") + i, i >= FIXUP_MEANINGFUL);
	}
	w8(PLATFORM + F("PlatformMetadata", "CodePointerFlags"), cpflags);
}

static const uint8_t padding[11] = {0x90, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00};

static void stub_precode(unsigned slot, uint8_t type, uint64_t secret)
{
	uint64_t ip = CODE + slot * 24;
	wbytes(ip, stub_bytes, STUB_MEANINGFUL);
	wbytes(ip + STUB_MEANINGFUL, padding, sizeof padding); /* ignored bytes */
	w64(ip + PAGE + F("StubPrecodeData", "SecretParam"), secret);
	w8(ip + PAGE + F("StubPrecodeData", "Type"), type);
}

static void fixup_precode(unsigned slot, uint64_t md)
{
	uint64_t ip = FCODE + slot * 24;
	wbytes(ip, fixup_bytes, FIXUP_MEANINGFUL);
	wbytes(ip + FIXUP_MEANINGFUL, padding, 5);
	w64(ip + PAGE, ip + 6); /* Target: the fixup entry, not yet patched */
	w64(ip + PAGE + F("FixupPrecodeData", "MethodDesc"), md);
}

#define MD(n) (0x7f00000e0000ull + 0x40 * (n))
#define THISPTR_DATA (OBJS + 0x800)

static void build_precodes(uint8_t cpflags)
{
	mem_region(PLATFORM, 4096);
	mem_region(CODE, 2 * PAGE);
	mem_region(FCODE, 2 * PAGE);
	mem_region(OBJS, 1 << 16);
	write_platform(cpflags);
	stub_precode(0, T_STUB, MD(0));
	stub_precode(1, T_PINVOKE, MD(1));
	stub_precode(2, T_THISPTR, THISPTR_DATA);
	w64(THISPTR_DATA + F("ThisPtrRetBufPrecodeData", "MethodDesc"), MD(2));
	stub_precode(3, T_UMENTRY, 0x7f00000f0000ull);
	stub_precode(4, 0, MD(4));
	stub_precode(5, T_STUB, 0);
	stub_precode(6, T_STUB, MD(6));
	wbytes(CODE + 6 * 24 + STUB_MEANINGFUL, (const uint8_t *)"\xcc\xcc\xcc\xcc\xcc\xcc\xcc\xcc\xcc\xcc\xcc", 11);
	stub_precode(7, T_STUB, MD(7));
	w8(CODE + 7 * 24 + 3, 0xf8); /* a meaningful byte differs */
	fixup_precode(0, MD(10));
	fixup_precode(1, MD(11));
	mem_region(CODE2, PAGE);
	wbytes(CODE2, stub_bytes, STUB_MEANINGFUL);
}

static void check_md(struct adac_runtime *rt, uint64_t entry, uint64_t want)
{
	uint64_t md = 0;
	struct adac_error err = {0};
	int rc = adac_precode_method_desc(rt, entry, &md, &err);
	if (rc)
		fprintf(stderr, "0x%llx: %s\n", (unsigned long long)entry, err.msg);
	CHECK(rc == 0);
	CHECK_EQ_U64(md, want);
}

static void check_no_md(struct adac_runtime *rt, uint64_t entry, const char *msg)
{
	uint64_t md = 1;
	struct adac_error err = {0};
	int rc = adac_precode_method_desc(rt, entry, &md, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, msg);
	CHECK_EQ_U64(md, 0);
}

static void test_templates(void)
{
	mem_reset();
	build_precodes(0);
	struct adac_target *t = mem_target();
	struct adac_runtime *rt = make_runtime(t, 0, PLATFORM, NULL, NULL);
	check_md(rt, CODE, MD(0));
	check_md(rt, CODE + 24, MD(1));          /* PInvokeImport: the MethodDesc is the secret param */
	check_md(rt, CODE + 48, MD(2));          /* ThisPtrRetBuf: through ThisPtrRetBufPrecodeData */
	check_no_md(rt, CODE + 72, "0x7f0030000048 is a UMEntry precode, which carries no MethodDesc");
	check_no_md(rt, CODE + 96, "0x7f0030000060 is not a precode the runtime describes"); /* Type 0 */
	check_no_md(rt, CODE + 120, "stub precode at 0x7f0030000078 has a null MethodDesc");
	check_md(rt, CODE + 144, MD(6));         /* different bytes where the template says ignore */
	check_no_md(rt, CODE + 168, "0x7f00300000a8 is not a precode");
	check_no_md(rt, CODE + 4, "0x7f0030000004 is not a precode"); /* not pointer-aligned */
	check_md(rt, FCODE, MD(10));
	check_md(rt, FCODE + 24, MD(11));
	check_no_md(rt, FCODE + 30, "not a precode");                /* the fixup's second entry is interior */
	enum adac_precode_kind kind;
	struct adac_error err = {0};
	CHECK(adac_precode_kind(rt, CODE + 24, &kind, &err) == 0 && kind == ADAC_PRECODE_PINVOKE_IMPORT);
	CHECK(adac_precode_kind(rt, FCODE, &kind, &err) == 0 && kind == ADAC_PRECODE_FIXUP);
	CHECK(adac_precode_kind(rt, CODE + 168, &kind, &err) == 0 && kind == ADAC_PRECODE_NONE);
	/* Interior addresses find their precode from the code page's slot grid. */
	struct adac_precode_match m;
	CHECK(adac_precode_find(rt, CODE + 24 + 10, &m, &err) == 0);
	CHECK(m.entry == CODE + 24 && m.method_desc == MD(1) && m.kind == ADAC_PRECODE_PINVOKE_IMPORT);
	CHECK(adac_precode_find(rt, FCODE + 24 + 6, &m, &err) == 0);
	CHECK(m.entry == FCODE + 24 && m.method_desc == MD(11) && m.kind == ADAC_PRECODE_FIXUP);
	int rc = adac_precode_find(rt, CODE + 72 + 3, &m, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "UMEntry precode, which carries no MethodDesc");
	CHECK(m.kind == ADAC_PRECODE_UMENTRY && m.entry == CODE + 72);
	adac_error_clear(&err);
	rc = adac_precode_find(rt, CODE + 0x1000, &m, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "0x7f0030001000 is not inside a precode the runtime describes");
	adac_error_clear(&err);
	/* A stub precode whose data page is not in the target: a read error naming it. */
	rc = adac_precode_find(rt, CODE2 + 8, &m, &err);
	CHECK_ERR(rc, &err, ADAC_E_READ, "StubPrecodeData of 0x7f0030020000 at 0x7f0030024000: cannot read 1 bytes");
	CHECK(m.kind == ADAC_PRECODE_NONE);
	adac_error_clear(&err);
	adac_runtime_close(rt);
	adac_target_close(t);

	/* arm32: bit 0 of a code pointer is the Thumb bit. */
	mem_reset();
	build_precodes(1);
	t = mem_target();
	rt = make_runtime(t, 0, PLATFORM, NULL, NULL);
	check_md(rt, CODE | 1, MD(0));
	adac_runtime_close(rt);
	adac_target_close(t);
	/* arm64e pointer authentication is not supported: said, not guessed. */
	mem_reset();
	build_precodes(2);
	t = mem_target();
	rt = make_runtime(t, 0, PLATFORM, NULL, NULL);
	uint64_t md;
	rc = adac_precode_method_desc(rt, CODE, &md, &err);
	CHECK_ERR(rc, &err, ADAC_E_UNSUPPORTED, "pointer authentication");
	adac_runtime_close(rt);
	adac_target_close(t);
	mem_reset();
}

/* ---- RangeList sections in the code map, and entry point -> MethodDesc --------------------- */

#define MAP 0x7f0000100000ull
#define LEVELS 0x7f0000200000ull
#define MAPBASE 0x7f0010000000ull
#define HDRMAP 0x7f0000400000ull

static uint64_t next_level, next_obj;

static uint64_t obj(size_t size)
{
	uint64_t a = next_obj;
	next_obj += (size + 15) & ~(size_t)15;
	return a;
}

static void map_set(uint64_t addr, uint64_t frag)
{
	uint64_t used = addr >> 17, table = MAP + F("RangeSectionMap", "TopLevelData");
	for (int level = 5; level >= 1; level--) {
		uint64_t slot = table + ((used >> ((level - 1) * 8)) & 0xFF) * 8;
		if (level == 1) {
			w64(slot, frag);
			return;
		}
		uint64_t v;
		memcpy(&v, at(slot, 8), 8);
		if (!v) {
			v = next_level;
			next_level += 2048;
			w64(slot, v);
		}
		table = v;
	}
}

static uint64_t add_range(uint64_t begin, uint64_t end, int32_t flags, uint64_t heap, uint64_t range_list)
{
	uint64_t rs = obj(80);
	w64(rs + F("RangeSection", "RangeBegin"), begin);
	w64(rs + F("RangeSection", "RangeEndOpen"), end);
	w32(rs + F("RangeSection", "Flags"), (uint32_t)flags);
	w64(rs + F("RangeSection", "HeapList"), heap);
	w64(rs + F("RangeSection", "RangeList"), range_list);
	for (uint64_t a = begin & ~0x1FFFFull; a < end; a += 0x20000) {
		uint64_t f = obj(32);
		w64(f + F("RangeSectionFragment", "RangeBegin"), begin);
		w64(f + F("RangeSectionFragment", "RangeEndOpen"), end);
		w64(f + F("RangeSectionFragment", "RangeSection"), rs);
		map_set(a, f);
	}
	return rs;
}

static void test_code_map(void)
{
	mem_reset();
	build_precodes(0);
	mem_region(MAP, 4096);
	mem_region(LEVELS, 16 * 2048);
	mem_region(MAPBASE, 0x1000);
	mem_region(HDRMAP, 64);
	next_level = LEVELS;
	next_obj = OBJS + 0x1000;
	/* The precode pages: one RangeList section (RangeListType 4, as the runtime registers them). */
	uint64_t range_list = obj(512);
	w32(range_list + F("CodeRangeMapRangeList", "RangeListType"), 4);
	uint64_t rs = add_range(CODE, CODE + 0x10000, 0x4, 0, range_list);
	/* A JIT heap with one method at +0x100 (code header before it, nibble 1 in bucket 8). */
	uint64_t heap = obj(80), rch = obj(64);
	w64(heap + F("CodeHeapListNode", "StartAddress"), MAPBASE);
	w64(heap + F("CodeHeapListNode", "EndAddress"), MAPBASE + 0xFFF);
	w64(heap + F("CodeHeapListNode", "MapBase"), MAPBASE);
	w64(heap + F("CodeHeapListNode", "HeaderMap"), HDRMAP);
	w32(HDRMAP + 4, 0x10000000);
	w64(MAPBASE + 0xF8, rch);
	w64(rch + F("RealCodeHeader", "MethodDesc"), MD(20));
	add_range(MAPBASE, MAPBASE + 0x1000, 0x2, heap, 0);
	struct adac_target *t = mem_target();
	struct adac_runtime *rt = make_runtime(t, MAP, PLATFORM, NULL, NULL);
	struct adac_code_info ci;
	struct adac_error err = {0};
	CHECK(adac_em_find_code(rt, CODE + 24 + 5, &ci, &err) == 0);
	CHECK(ci.kind == ADAC_CODE_STUB && ci.stub_kind == 4 && ci.range_section == rs);
	CHECK(ci.precode_kind == ADAC_PRECODE_PINVOKE_IMPORT && ci.method_desc == MD(1));
	CHECK(ci.code_start == CODE + 24 && ci.offset == 5);
	CHECK(adac_em_find_code(rt, FCODE + 30, &ci, &err) == 0);
	CHECK(ci.precode_kind == ADAC_PRECODE_FIXUP && ci.method_desc == MD(11) && ci.code_start == FCODE + 24);
	/* In the stub range but no precode: a stub without a MethodDesc. */
	CHECK(adac_em_find_code(rt, CODE + 0x1000, &ci, &err) == 0);
	CHECK(ci.kind == ADAC_CODE_STUB && ci.precode_kind == ADAC_PRECODE_NONE && ci.method_desc == 0 && ci.code_start == 0);
	CHECK(adac_em_find_code(rt, CODE + 72, &ci, &err) == 0);
	CHECK(ci.precode_kind == ADAC_PRECODE_UMENTRY && ci.method_desc == 0 && ci.code_start == CODE + 72);

	/* Entry point -> MethodDesc: the code map first, then the precode. */
	uint64_t md;
	CHECK(adac_entry_point_method_desc(rt, MAPBASE + 0x100, &md, &err) == 0 && md == MD(20));
	CHECK(adac_entry_point_method_desc(rt, CODE, &md, &err) == 0 && md == MD(0));
	CHECK(adac_entry_point_method_desc(rt, FCODE + 24, &md, &err) == 0 && md == MD(11));
	int rc = adac_entry_point_method_desc(rt, CODE + 72, &md, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "entry point 0x7f0030000048 is in a StubPrecode stub without a MethodDesc");
	adac_error_clear(&err);
	rc = adac_entry_point_method_desc(rt, 0x7f0055550000ull, &md, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "0x7f0055550000 is not in any code range the runtime knows");
	adac_runtime_close(rt);
	adac_target_close(t);
	mem_reset();
}

/* ---- the type-immediate encoding (PrecodeStubs 1/2, .NET 9/10) ---------------------------- */

static void test_type_immediate(void)
{
	/* .NET 9 shape: a PrecodeMachineDescriptor global, StubPrecodeData.MethodDesc. */
	static const char json[] =
		"{\"version\":0,\"baseline\":\"empty\",\"contracts\":{\"PrecodeStubs\":1},"
		"\"types\":{\"PrecodeMachineDescriptor\":{\"StubCodePageSize\":0,\"OffsetOfPrecodeType\":4,"
		"\"ReadWidthOfPrecodeType\":5,\"ShiftOfPrecodeType\":6,\"StubPrecodeType\":7,\"FixupPrecodeType\":8,"
		"\"PInvokeImportPrecodeType\":9,\"InvalidPrecodeType\":10},"
		"\"StubPrecodeData\":{\"MethodDesc\":0,\"Type\":8},\"FixupPrecodeData\":{\"MethodDesc\":8}},"
		"\"globals\":{\"PrecodeMachineDescriptor\":[[1],\"pointer\"]}}";
	const uint64_t pmd = PLATFORM;
	uint64_t pdata[2] = {0, pmd};
	mem_reset();
	mem_region(PLATFORM, 4096);
	mem_region(CODE, 2 * PAGE);
	w32(pmd + 0, PAGE);
	w8(pmd + 4, 3);           /* the type is the 2-byte immediate at +3 ... */
	w8(pmd + 5, 2);
	w8(pmd + 6, 4);           /* ... shifted right by 4 */
	w8(pmd + 7, 0x4c);
	w8(pmd + 8, 0xff);
	w8(pmd + 9, 0x05);
	w8(pmd + 10, 0xcc);
	uint64_t a = CODE, b = CODE + 24, c = CODE + 48;
	w8(a + 3, 0xc0), w8(a + 4, 0x04);               /* 0x04c0 >> 4 = 0x4c: stub */
	w64(a + PAGE, MD(0)), w8(a + PAGE + 8, 0x4c);
	w8(b + 3, 0xc0), w8(b + 4, 0x04);
	w64(b + PAGE, MD(1)), w8(b + PAGE + 8, 0x05);   /* exact type from the data: PInvokeImport */
	w8(c + 3, 0xf0), w8(c + 4, 0x0f);               /* 0x0ff0 >> 4 = 0xff: fixup */
	w64(c + PAGE + 8, MD(2));
	struct adac_target *t = mem_target();
	struct adac_runtime *rt = runtime_with(t, desc_parse(json, sizeof json - 1, pdata, 2));
	check_md(rt, a, MD(0));
	check_md(rt, b, MD(1));
	check_md(rt, c, MD(2));
	check_no_md(rt, CODE + 72, "is not a precode the runtime describes");
	adac_runtime_close(rt);
	adac_target_close(t);

	/* Neither templates nor a type immediate: a layout error naming what is missing. */
	static const char bad[] =
		"{\"version\":0,\"baseline\":\"empty\",\"contracts\":{\"PrecodeStubs\":\"c9\"},"
		"\"types\":{\"PrecodeMachineDescriptor\":{\"StubCodePageSize\":0,\"StubPrecodeType\":7},"
		"\"StubPrecodeData\":{\"SecretParam\":0,\"Type\":8}},"
		"\"globals\":{\"PrecodeMachineDescriptor\":[[1],\"pointer\"]}}";
	t = mem_target();
	rt = runtime_with(t, desc_parse(bad, sizeof bad - 1, pdata, 2));
	uint64_t md;
	struct adac_error err = {0};
	int rc = adac_precode_method_desc(rt, a, &md, &err);
	CHECK_ERR(rc, &err, ADAC_E_LAYOUT, "has neither StubBytes nor OffsetOfPrecodeType (PrecodeStubs c9)");
	adac_runtime_close(rt);
	adac_target_close(t);
	mem_reset();
}

int main(int argc, char **argv)
{
	if (layout_from_args(argc, argv))
		return 2;
	test_templates();
	test_code_map();
	test_type_immediate();
	adac_desc_free(layout);
	return check_report("test_precode");
}
