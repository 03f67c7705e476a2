/* testmem.h - synthetic targets and runtimes for the unit tests that lay runtime structures out by
 * hand (ExecutionManager, PrecodeStubs, GC heap): zero-filled regions at chosen addresses, written
 * with w8..w64 and wbytes, then opened as a memory target (one set of regions per test program); and
 * runtimes over the real .NET 11.0.0 descriptor (descriptor_path, the test's argv[1]). */
#ifndef ADAC_TESTMEM_H
#define ADAC_TESTMEM_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "runtime/descriptor.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "target/target_mem.h"
#include "testutil.h"

struct region {
	uint64_t base;
	size_t size;
	uint8_t *p;
};
static struct region regions[64];
static size_t nregions;

/* Frees every region (targets opened before keep their own copies). */
static inline void mem_reset(void)
{
	for (size_t i = 0; i < nregions; i++)
		free(regions[i].p);
	nregions = 0;
}

/* A zero-filled region of `size` bytes at `base`; returns base. */
static inline uint64_t mem_region(uint64_t base, size_t size)
{
	if (nregions == sizeof regions / sizeof regions[0]) {
		fprintf(stderr, "test bug: too many regions\n");
		abort();
	}
	regions[nregions].base = base;
	regions[nregions].size = size;
	regions[nregions].p = calloc(1, size);
	nregions++;
	return base;
}

/* The bytes at addr (n of them inside one region); a test bug otherwise. */
static inline uint8_t *at(uint64_t addr, size_t n)
{
	for (size_t i = 0; i < nregions; i++)
		if (addr >= regions[i].base && addr + n <= regions[i].base + regions[i].size)
			return regions[i].p + (addr - regions[i].base);
	fprintf(stderr, "test bug: no region at 0x%llx\n", (unsigned long long)addr);
	abort();
}

static inline void w8(uint64_t a, uint8_t v) { *at(a, 1) = v; }
static inline void w16(uint64_t a, uint16_t v) { memcpy(at(a, 2), &v, 2); }
static inline void w32(uint64_t a, uint32_t v) { memcpy(at(a, 4), &v, 4); }
static inline void w64(uint64_t a, uint64_t v) { memcpy(at(a, 8), &v, 8); }
static inline void wbytes(uint64_t a, const uint8_t *b, size_t n) { memcpy(at(a, n), b, n); }

/* Whether mem_target's target lends its bytes in place (adac_memimg_set_view): a test may run
 * again without. */
static bool mem_view = true;

/* A memory target holding a copy of every region as it is now. */
static inline struct adac_target *mem_target(void)
{
	struct adac_memimg *img = adac_memimg_new();
	adac_memimg_set_view(img, mem_view);
	for (size_t i = 0; i < nregions; i++)
		adac_memimg_add(img, regions[i].base, regions[i].p, regions[i].size);
	struct adac_error err = {0};
	struct adac_target *t = adac_target_open_memory(img, &err);
	CHECK(t != NULL);
	return t;
}

/* ---- runtimes over the real .NET 11.0.0 descriptor ----------------------------------------- */

static const char *descriptor_path;
static struct adac_descriptor *layout; /* for offsets in the test itself (F) */

/* Pointer-data slots of the descriptor's pointer globals the tests set. */
enum { P_CODE_RANGE_MAP = 36, P_PLATFORM_METADATA = 38, P_COUNT = 46 };

/* A descriptor parsed from json with pointer data pdata (np slots). */
static inline struct adac_descriptor *desc_parse(const char *json, size_t len, const uint64_t *pdata, size_t np)
{
	struct adac_descriptor *d = adac_desc_new();
	struct adac_error err = {0};
	int rc = adac_desc_parse_json(d, json, len, pdata, np, &err);
	if (rc)
		fprintf(stderr, "descriptor: %s\n", err.msg);
	CHECK(rc == 0);
	return d;
}

/* The real descriptor with pointer data pdata (P_COUNT slots), its text first patched: the first
 * `from` replaced with `to` (same length or shorter, padded with spaces) when from is not NULL. */
static inline struct adac_descriptor *real_descriptor(const uint64_t *pdata, const char *from, const char *to)
{
	size_t len = 0;
	char *json = slurp(descriptor_path, &len);
	CHECK(json != NULL);
	char *p = json && from ? strstr(json, from) : NULL;
	CHECK(!from || p != NULL);
	if (p) {
		size_t lf = strlen(from), lt = strlen(to);
		memcpy(p, to, lt);
		memset(p + lt, ' ', lf - lt);
	}
	struct adac_descriptor *d = desc_parse(json ? json : "", len, pdata, P_COUNT);
	free(json);
	return d;
}

/* A runtime over target t and descriptor d (the runtime frees d). */
static inline struct adac_runtime *runtime_with(struct adac_target *t, struct adac_descriptor *d)
{
	struct adac_runtime *rt = calloc(1, sizeof *rt);
	rt->t = t;
	rt->desc = d;
	return rt;
}

/* A runtime over t and the real descriptor (patched from -> to, see real_descriptor), whose
 * RangeSectionMap and PlatformMetadata pointer globals are map and platform. */
static inline struct adac_runtime *make_runtime(struct adac_target *t, uint64_t map, uint64_t platform, const char *from,
                                                const char *to)
{
	uint64_t pdata[P_COUNT] = {0};
	pdata[P_CODE_RANGE_MAP] = map;
	pdata[P_PLATFORM_METADATA] = platform;
	struct adac_runtime *rt = runtime_with(t, real_descriptor(pdata, from, to));
	uint64_t v = 0;
	CHECK(adac_desc_global(rt->desc, "ExecutionManagerCodeRangeMapAddress", &v, NULL) == 0 && v == map);
	CHECK(adac_desc_global(rt->desc, "PlatformMetadata", &v, NULL) == 0 && v == platform);
	return rt;
}

/* The start of main(): the real descriptor is argv[1] (without it: a usage line, and 2 to return),
 * read into `layout` with no pointer globals set. */
static inline int layout_from_args(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s <net11 descriptor json>\n", argv[0]);
		return 2;
	}
	descriptor_path = argv[1];
	uint64_t pdata[P_COUNT] = {0};
	layout = real_descriptor(pdata, NULL, NULL);
	return 0;
}

/* Offset of type.field, or the size of type (field NULL), in `layout`; a test bug when absent. */
static inline uint32_t F(const char *type, const char *field)
{
	uint32_t off = 0;
	struct adac_error err = {0};
	if (field ? adac_desc_field(layout, type, field, &off, &err) : adac_desc_type_size(layout, type, &off, &err)) {
		fprintf(stderr, "test bug: %s\n", err.msg);
		abort();
	}
	return off;
}

#endif
