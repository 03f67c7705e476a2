/* testarea.h - a runtime laid out by hand in a memory target (test_methoddesc, test_locals): the
 * real .NET 11.0.0 descriptor gives the layouts, its pointer globals' variables are at GLOBALS_BASE
 * + 16 i, and the made-up runtime structures live in one zero-backed area of AREA_SIZE bytes (the
 * includer defines it) at AREA_BASE: readability is per 4 KiB page in real targets, and the block
 * cache relies on it. Bytes written elsewhere go to the image as they are; flush() publishes the
 * area and the globals to the target. */
#ifndef ADAC_TESTAREA_H
#define ADAC_TESTAREA_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metadata/ecma_metadata.h"
#include "runtime/descriptor.h"
#include "target/target.h"
#include "target/target_mem.h"

#ifndef AREA_SIZE
#error "define AREA_SIZE before including testarea.h"
#endif
#define AREA_BASE 0x5000000ull
#define GLOBALS_BASE 0x7f0000000000ull /* the pointer globals' variables */
#define PDATA(i) (GLOBALS_BASE + 16u * (i)) /* the variable of pointer global slot i */

static struct adac_descriptor *desc;
static struct adac_memimg *img;
static struct adac_target *tgt;
static uint8_t *area;
static uint8_t globals_page[4096];

/* Where the inputs are: the real .NET 11.0.0 descriptor (tests/fixtures under $ADAC_SOURCE_DIR)
 * and the runtime pack's CoreLib (under $ADAC_DOTNET_DIR, from scripts/dotnet-setup). */
static inline void area_inputs(char *descriptor, size_t dsize, char *corelib, size_t csize)
{
	const char *src = getenv("ADAC_SOURCE_DIR");
	const char *dn = getenv("ADAC_DOTNET_DIR");
	snprintf(descriptor, dsize, "%s/tests/fixtures/net11.0.0-linux-x64-descriptor.json", src && *src ? src : ".");
	snprintf(corelib, csize, "%s/runtime/11/System.Private.CoreLib.dll", dn && *dn ? dn : "build/dotnet");
}

/* Parses the descriptor (pointer global i's variable at GLOBALS_BASE + 16 i) into desc and creates
 * the image and the area; -1 with a message on stderr when the descriptor does not parse. */
static inline int area_setup(const uint8_t *json, size_t len)
{
	uint64_t pdata[64];
	for (unsigned i = 0; i < 64; i++)
		pdata[i] = PDATA(i);
	desc = adac_desc_new();
	struct adac_error err = {0};
	if (adac_desc_parse_json(desc, (const char *)json, len, pdata, 64, &err)) {
		fprintf(stderr, "descriptor: %s\n", err.msg);
		return -1;
	}
	img = adac_memimg_new();
	area = calloc(1, AREA_SIZE);
	return 0;
}

static inline void mem_write(uint64_t addr, const void *data, size_t len)
{
	if (addr >= AREA_BASE && addr + len <= AREA_BASE + AREA_SIZE)
		memcpy(area + (addr - AREA_BASE), data, len);
	else if (addr >= GLOBALS_BASE && addr + len <= GLOBALS_BASE + sizeof globals_page)
		memcpy(globals_page + (addr - GLOBALS_BASE), data, len);
	else
		adac_memimg_add(img, addr, data, len);
}

static inline void flush(void)
{
	adac_memimg_add(img, AREA_BASE, area, AREA_SIZE);
	adac_memimg_add(img, GLOBALS_BASE, globals_page, sizeof globals_page);
	if (tgt)
		adac_target_invalidate(tgt);
}

/* Offset of type.field, or the size of type (field NULL); exits when the descriptor lacks it. */
static inline uint32_t off(const char *type, const char *field)
{
	uint32_t v = 0;
	struct adac_error err = {0};
	if (field ? adac_desc_field(desc, type, field, &v, &err) : adac_desc_type_size(desc, type, &v, &err)) {
		fprintf(stderr, "descriptor: %s\n", err.msg);
		exit(1);
	}
	return v;
}

/* The variable a pointer global names (where the runtime keeps the pointer). */
static inline uint64_t global_var(const char *name)
{
	uint64_t v = 0;
	struct adac_error err = {0};
	if (adac_desc_global(desc, name, &v, &err)) {
		fprintf(stderr, "descriptor: %s\n", err.msg);
		exit(1);
	}
	return v;
}

static inline void put8(uint64_t at, uint8_t v) { mem_write(at, &v, 1); }
static inline void put16(uint64_t at, uint16_t v) { mem_write(at, &v, 2); }
static inline void put32(uint64_t at, uint32_t v) { mem_write(at, &v, 4); }
static inline void put64(uint64_t at, uint64_t v) { mem_write(at, &v, 8); }

/* The top-level TypeDef ns.name of the metadata (0, with a message, when absent). */
static inline uint32_t typedef_rid(const struct adac_ecma *md, const char *ns, const char *name)
{
	uint32_t rid = 0;
	struct adac_error err = {0};
	if (adac_ecma_find_typedef(md, ns, name, 0, &rid, &err))
		fprintf(stderr, "%s.%s: %s\n", ns, name, err.msg);
	return rid;
}

/* A NUL-terminated UTF-16 copy of an ASCII string (at most 511 characters). */
static inline void put_utf16(uint64_t at, const char *s)
{
	uint16_t w[512];
	size_t n = strlen(s);
	for (size_t i = 0; i <= n; i++)
		w[i] = (uint16_t)(unsigned char)s[i];
	mem_write(at, w, (n + 1) * 2);
}

#endif
