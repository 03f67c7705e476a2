/* testrts.h - a .NET 11.0.0 runtime laid out by hand in a memory target (testarea.h) around the
 * real ArrayLayout.dll (+ PDB) of targets/synthetic/array_layout and the runtime pack's
 * System.Private.CoreLib.dll (scripts/dotnet-setup): modules, MethodTables with EEClasses and
 * FieldDescs, MethodDescs, strings, and .NET 11 debug-info blobs. Shared by test_locals and the
 * async core's tests (testasync.h). */
#ifndef ADAC_TESTRTS_H
#define ADAC_TESTRTS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "code/debuginfo.h"
#include "metadata/ecma_metadata.h"
#include "runtime/descriptor.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "testarea.h"
#include "testutil.h"

/* Module + PEAssembly + PEImage + flat PEImageLayout; TypeDefToMethodTableMap of `nmap` entries
 * whose TableData is at module + 0x2000. */
static inline void put_module(uint64_t module, const char *path, const char *simple, uint64_t image_base,
                              size_t image_size, uint32_t nmap)
{
	uint64_t pea = module + 0x1000, peimage = module + 0x1100, layout = module + 0x1200, strs = module + 0x1300;
	put64(module + off("Module", "PEAssembly"), pea);
	put64(module + off("Module", "Assembly"), module + 0x1800);
	put64(module + off("Module", "Base"), image_base);
	put32(module + off("Module", "Flags"), 1);
	put64(module + off("Module", "Path"), strs);
	put64(module + off("Module", "FileName"), strs + 0x400);
	put64(module + off("Module", "SimpleName"), strs + 0x600);
	const char *slash = strrchr(path, '/');
	put_utf16(strs, path);
	put_utf16(strs + 0x400, slash ? slash + 1 : path);
	mem_write(strs + 0x600, simple, strlen(simple) + 1);
	put64(pea + off("PEAssembly", "PEImage"), peimage);
	put64(peimage + off("PEImage", "LoadedImageLayout"), layout);
	put64(peimage + off("PEImage", "FlatImageLayout"), layout);
	put64(layout + off("PEImageLayout", "Base"), image_base);
	put32(layout + off("PEImageLayout", "Size"), (uint32_t)image_size);
	put32(layout + off("PEImageLayout", "Flags"), 0x70);
	uint64_t map = module + off("Module", "TypeDefToMethodTableMap");
	put64(map + off("ModuleLookupMap", "TableData"), module + 0x2000);
	put32(map + off("ModuleLookupMap", "Count"), nmap);
}

static inline void map_typedef(uint64_t module, uint32_t rid, uint64_t mt) { put64(module + 0x2000 + 8ull * rid, mt); }

/* One FieldDesc: token rid, offset from the instance data, element type. */
struct fd {
	uint32_t rid;
	uint32_t offset;
	uint8_t elem;
	bool is_static;
};

/* MethodTable at addr, its EEClass at addr + 0x200 and FieldDescs at addr + 0x400. */
struct mt_spec {
	uint64_t addr;
	uint32_t flags;
	uint32_t typedef_rid;
	uint32_t base_size;
	uint64_t parent, module, perinst;
	uint8_t internal_elem;
	uint8_t padding;          /* EEClass.BaseSizePadding */
	uint16_t parent_fields;   /* instance fields of the parents (EEClass counts include them) */
	const struct fd *fields;
	unsigned nfields;
};

static inline void put_mt(const struct mt_spec *s)
{
	uint64_t ee = s->addr + 0x200, fds = s->addr + 0x400;
	put32(s->addr + off("MethodTable", "MTFlags"), s->flags);
	put32(s->addr + off("MethodTable", "BaseSize"), s->base_size);
	put32(s->addr + off("MethodTable", "MTFlags2"), s->typedef_rid << 8);
	put16(s->addr + off("MethodTable", "NumVirtuals"), 4);
	put64(s->addr + off("MethodTable", "ParentMethodTable"), s->parent);
	put64(s->addr + off("MethodTable", "Module"), s->module);
	put64(s->addr + off("MethodTable", "AuxiliaryData"), s->addr + 0x800);
	put64(s->addr + off("MethodTable", "PerInstInfo"), s->perinst);
	put64(s->addr + off("MethodTable", "EEClassOrCanonMT"), ee);
	put64(ee + off("EEClass", "MethodTable"), s->addr);
	put8(ee + off("EEClass", "InternalCorElementType"), s->internal_elem);
	put8(ee + off("EEClass", "BaseSizePadding"), s->padding);
	uint16_t ni = s->parent_fields, ns = 0;
	uint32_t fd_size = off("FieldDesc", NULL);
	for (unsigned i = 0; i < s->nfields; i++) {
		const struct fd *f = &s->fields[i];
		uint64_t at = fds + (uint64_t)i * fd_size;
		put64(at + off("FieldDesc", "MTOfEnclosingClass"), s->addr);
		put32(at + off("FieldDesc", "DWord1"), f->rid | (f->is_static ? 0x1000000u : 0));
		put32(at + off("FieldDesc", "DWord2"), f->offset | ((uint32_t)f->elem << 27));
		if (f->is_static)
			ns++;
		else
			ni++;
	}
	put64(ee + off("EEClass", "FieldDescList"), s->nfields ? fds : 0);
	put16(ee + off("EEClass", "NumInstanceFields"), ni);
	put16(ee + off("EEClass", "NumStaticFields"), ns);
}

/* A chunk holding one MethodDesc at index 0 (as 11.0.0 lays them out); returns the MethodDesc. */
static inline uint64_t put_md(uint64_t chunk, uint64_t mt, uint16_t flags, uint32_t token)
{
	uint32_t chunk_size = off("MethodDescChunk", NULL);
	uint64_t md = chunk + chunk_size;
	put64(chunk + off("MethodDescChunk", "MethodTable"), mt);
	put8(chunk + off("MethodDescChunk", "Size"), 20);
	put8(chunk + off("MethodDescChunk", "Count"), 0);
	put16(chunk + off("MethodDescChunk", "FlagsAndTokenRange"), (uint16_t)(((token & 0xffffff) >> 12) | 0x4000));
	put8(md + off("MethodDesc", "ChunkIndex"), 0);
	put16(md + off("MethodDesc", "Slot"), 5);
	put16(md + off("MethodDesc", "Flags"), flags);
	put16(md + off("MethodDesc", "Flags3AndTokenRemainder"), (uint16_t)((token & 0xfff) | 0x3000));
	return md;
}

static inline void put_string(uint64_t at, uint64_t mt, const char *s)
{
	put64(at, mt);
	put32(at + off("String", "m_StringLength"), (uint32_t)strlen(s));
	size_t n = strlen(s);
	for (size_t i = 0; i < n; i++)
		put16(at + off("String", "m_FirstChar") + 2 * i, (uint16_t)(unsigned char)s[i]);
}

/* ---- Debug info: the .NET 11 encoding (nibble streams), async chunk only ---- */

struct nib {
	uint8_t b[4096];
	size_t n; /* nibbles */
};

static inline void nib_put(struct nib *w, unsigned v)
{
	if (w->n % 2 == 0)
		w->b[w->n / 2] = (uint8_t)v;
	else
		w->b[w->n / 2] |= (uint8_t)(v << 4);
	w->n++;
}

static inline void nib_u32(struct nib *w, uint32_t v)
{
	unsigned groups[11], n = 0;
	do {
		groups[n++] = v & 7;
		v >>= 3;
	} while (v);
	while (n-- > 1)
		nib_put(w, groups[n] | 8);
	nib_put(w, groups[0]);
}

static inline void nib_i32(struct nib *w, int32_t v)
{
	nib_u32(w, v < 0 ? (((uint32_t)-v) << 1) | 1 : (uint32_t)v << 1);
}

static inline size_t nib_bytes(const struct nib *w) { return (w->n + 1) / 2; }

/* A var list entry as the JIT writes it: VarNumber and Offset (array layout: pairs). */
struct var {
	int32_t number;
	uint32_t offset;
};

#define NONE 0xffffffffu

/* A bounds entry: native offset, IL offset, ADAC_SRC_* flags. */
struct bound {
	uint32_t native, il, source;
};

/* A .NET 11 debug-info blob: fat header, a bounds chunk (nb entries, in native order), and an async
 * chunk of nsp suspension points, the first at `native` holding vars, each next one 4 bytes further
 * with none. Returns its length in blob (8 KiB). */
static inline size_t di_blob(uint8_t *blob, const struct bound *b, uint32_t nb, uint32_t nsp, uint32_t native,
                             const struct var *vars, uint32_t nvars)
{
	struct nib bounds = {0};
	if (nb) {
		nib_u32(&bounds, nb);
		nib_u32(&bounds, 16 - 1);   /* native delta bits */
		nib_u32(&bounds, 16 - 1);   /* IL offset bits */
		uint8_t *bits = bounds.b + nib_bytes(&bounds);
		uint32_t prev = 0;
		for (uint32_t i = 0; i < nb; i++) {
			uint64_t v = b[i].source | (uint64_t)(b[i].native - prev) << 3 | (uint64_t)((b[i].il + 3) & 0xffff) << 19;
			prev = b[i].native;
			for (unsigned k = 0; k < 35; k++)
				if (v >> k & 1)
					bits[(i * 35 + k) / 8] |= (uint8_t)(1u << ((i * 35 + k) % 8));
		}
		bounds.n = 2 * (nib_bytes(&bounds) + (nb * 35 + 7) / 8);
	}
	struct nib chunk = {0};
	nib_u32(&chunk, nsp);
	nib_u32(&chunk, nvars);
	for (uint32_t i = 0; i < nsp; i++) {
		nib_i32(&chunk, i ? 4 : (int32_t)native);
		nib_u32(&chunk, i ? 0 : nvars);
	}
	for (uint32_t i = 0; i < nvars; i++) {
		nib_u32(&chunk, (uint32_t)(vars[i].number + 6));
		nib_u32(&chunk, vars[i].offset);
	}
	struct nib hdr = {0};
	nib_u32(&hdr, 0);
	nib_u32(&hdr, (uint32_t)nib_bytes(&bounds));
	for (int i = 0; i < 4; i++)
		nib_u32(&hdr, 0);
	nib_u32(&hdr, (uint32_t)nib_bytes(&chunk));
	size_t len = 0;
	memcpy(blob + len, hdr.b, nib_bytes(&hdr));
	len += nib_bytes(&hdr);
	memcpy(blob + len, bounds.b, nib_bytes(&bounds));
	len += nib_bytes(&bounds);
	memcpy(blob + len, chunk.b, nib_bytes(&chunk));
	return len + nib_bytes(&chunk);
}

/* Fat header + async chunk with one suspension point at `native` holding vars, decoded. */
static inline struct adac_debug_info *make_di(uint32_t nsp, uint32_t native, const struct var *vars, uint32_t nvars)
{
	uint8_t blob[8192];
	size_t len = di_blob(blob, NULL, 0, nsp, native, vars, nvars);
	struct adac_debug_info *di = NULL;
	struct adac_error err = {0};
	if (adac_debuginfo_decode(blob, len, ADAC_DEBUGINFO_FORMAT_NET11, false, &di, &err)) {
		fprintf(stderr, "debug info: %s\n", err.msg);
		exit(1);
	}
	return di;
}

/* ---- Addresses ---- */

#define AL_BASE 0x10000000ull
#define CL_BASE 0x20000000ull
#define AL_MOD 0x5000000ull
#define CL_MOD 0x5010000ull
#define SYSDOMAIN 0x5020000ull
#define MT(n) (0x5100000ull + 0x1000ull * (n))
#define MD_CHUNK 0x5200000ull
#define CL_MAP 0x5800000ull          /* CoreLib's TypeDefToMethodTableMap.TableData */
#define CL_MAP_ENTRIES 0x8000u

static inline void cl_map_typedef(uint32_t rid, uint64_t mt) { put64(CL_MAP + 8ull * rid, mt); }

enum {
	M_OBJECT, M_STRING, M_INT32, M_BYTE, M_VALUETYPE, M_ENUM, M_BYTE_ARR, M_OBJECT_ARR, M_INT32_ARR, M_MODE, M_PLAIN,
	M_MIXED, M_MANY, M_OUTER, M_NODE, M_WORKER, M_CONT, M_CONT_LAYOUT, M_PAIR_DEF, M_PAIR_STRING,
	M_FIRST_FREE  /* the tests' own MethodTables from here */
};

static inline uint32_t field_rid(const struct adac_ecma *md, uint32_t type_rid, const char *name)
{
	uint32_t rid = 0;
	struct adac_error err = {0};
	if (adac_ecma_find_field(md, type_rid, name, &rid, &err))
		fprintf(stderr, "field %s: %s\n", name, err.msg);
	return rid;
}

/* ---- The runtime ---- */

struct rts {
	struct adac_runtime *rt;
	struct adac_ecma *amd, *cmd;     /* ArrayLayout.dll's and CoreLib's metadata */
	uint8_t *json, *al, *corelib;
	char al_path[2048];
	uint32_t r_worker, r_work;       /* ArrayLayoutSamples.Worker and Worker.Work (TypeDef, MethodDef rids) */
	uint32_t c_cont;                 /* CoreLib's Continuation TypeDef rid */
	uint64_t md_work;                /* Worker.Work's MethodDesc */
};

/* Lays out what every test shares (argv[1]: the directory of ArrayLayout.dll): both modules, CoreLib
 * as the system assembly, CoreLib's primitive and array types, ArrayLayout.dll's types (Pair<string>
 * among the constructed ones), the Continuation class (global ContinuationMethodTable) and an
 * 88-byte flat layout subtype, and Worker.Work's MethodDesc. The descriptor's text is patched first
 * (patch_from -> patch_to, same length) when patch_from is not NULL; net10_corelib: the SDK's .NET 10
 * CoreLib instead of 11.0.0's (whose Continuation class has other fields). -1 with a message when
 * an input is missing. The caller writes its own objects, then flush(). */
static inline int rts_open(int argc, char **argv, const char *who, const char *patch_from, const char *patch_to,
                           bool net10_corelib, struct rts *r)
{
	memset(r, 0, sizeof *r);
	char path[2048], corelib_path[1024];
	area_inputs(path, sizeof path, corelib_path, sizeof corelib_path);
	char *v11 = strstr(corelib_path, "/runtime/11/");
	if (net10_corelib && v11)
		v11[10] = '0'; /* the SDK's .NET 10 CoreLib (runtime/10, scripts/dotnet-setup) */
	snprintf(r->al_path, sizeof r->al_path, "%s/ArrayLayout.dll", argc > 1 ? argv[1] : "tests/data/locals/array_layout");
	size_t json_len, al_len, corelib_len;
	r->json = (uint8_t *)slurp(path, &json_len);
	r->al = (uint8_t *)slurp(r->al_path, &al_len);
	r->corelib = (uint8_t *)slurp(corelib_path, &corelib_len);
	if (!r->json || !r->al) {
		fprintf(stderr, "%s: cannot read %s or %s\n", who, path, r->al_path);
		return -1;
	}
	if (!r->corelib) {
		fprintf(stderr, "%s: cannot read %s (scripts/dotnet-setup restores it)\n", who, corelib_path);
		return -1;
	}
	if (patch_from) {
		char *p = strstr((char *)r->json, patch_from);
		if (!p) {
			fprintf(stderr, "%s: the descriptor has no %s\n", who, patch_from);
			return -1;
		}
		memcpy(p, patch_to, strlen(patch_to));
	}
	if (area_setup(r->json, json_len))
		return -1;
	struct adac_error err = {0};
	const uint8_t *al = r->al, *corelib = r->corelib;
	const char *al_path = r->al_path;
	adac_memimg_add(img, AL_BASE, al, al_len);
	adac_memimg_add(img, CL_BASE, corelib, corelib_len);
	flush();
	tgt = adac_target_open_memory(img, &err);
	if (!tgt) {
		fprintf(stderr, "target: %s\n", err.msg);
		return -1;
	}
	CHECK(adac_ecma_open_image(tgt, AL_BASE, al_len, false, &r->amd, &err) == 0);
	CHECK(adac_ecma_open_image(tgt, CL_BASE, corelib_len, false, &r->cmd, &err) == 0);
	if (!r->amd || !r->cmd)
		return -1;
	const struct adac_ecma *amd = r->amd, *cmd = r->cmd;

	/* Tokens, from the real metadata. */
	uint32_t r_mode = typedef_rid(amd, "ArrayLayoutSamples", "Mode"), r_plain = typedef_rid(amd, "ArrayLayoutSamples", "Plain"),
	         r_mixed = typedef_rid(amd, "ArrayLayoutSamples", "Mixed"), r_many = typedef_rid(amd, "ArrayLayoutSamples", "Many"),
	         r_outer = typedef_rid(amd, "ArrayLayoutSamples", "Outer"), r_node = typedef_rid(amd, "ArrayLayoutSamples", "Node"),
	         r_worker = typedef_rid(amd, "ArrayLayoutSamples", "Worker"), r_pair = typedef_rid(amd, "ArrayLayoutSamples", "Pair`1");
	r->r_worker = r_worker;
	CHECK(adac_ecma_find_method(amd, r_worker, "Work", &r->r_work, &err) == 0);
	uint32_t c_object = typedef_rid(cmd, "System", "Object"), c_string = typedef_rid(cmd, "System", "String"),
	         c_int32 = typedef_rid(cmd, "System", "Int32"), c_byte = typedef_rid(cmd, "System", "Byte"),
	         c_valuetype = typedef_rid(cmd, "System", "ValueType"), c_enum = typedef_rid(cmd, "System", "Enum"),
	         c_cont = typedef_rid(cmd, "System.Runtime.CompilerServices", "Continuation");
	r->c_cont = c_cont;

	put_module(AL_MOD, al_path, "ArrayLayout", AL_BASE, al_len, 16);
	put_module(CL_MOD, "/runtime/11/System.Private.CoreLib.dll", "System.Private.CoreLib", CL_BASE, corelib_len, 0);
	/* CoreLib's TypeDefToMethodTableMap, which tests fill with cl_map_typedef. */
	put64(CL_MOD + off("Module", "TypeDefToMethodTableMap") + off("ModuleLookupMap", "TableData"), CL_MAP);
	put32(CL_MOD + off("Module", "TypeDefToMethodTableMap") + off("ModuleLookupMap", "Count"), CL_MAP_ENTRIES);
	/* SystemDomain -> SystemAssembly -> Module: CoreLib. */
	put64(global_var("SystemDomain"), SYSDOMAIN);
	put64(SYSDOMAIN + off("SystemDomain", "SystemAssembly"), SYSDOMAIN + 0x100);
	put64(SYSDOMAIN + 0x100 + off("Assembly", "Module"), CL_MOD);

	/* CoreLib types. */
	const uint32_t SZARRAY = 0x800a0000u, TRUEPRIM = 0x00070000u, VALUETYPE = 0x00040000u, PRIMITIVE = 0x00060000u;
	put_mt(&(struct mt_spec){MT(M_OBJECT), 0, c_object, 24, 0, CL_MOD, 0, 0x12, 0, 0, NULL, 0});
	put_mt(&(struct mt_spec){MT(M_STRING), 0x80000002u, c_string, 22, MT(M_OBJECT), CL_MOD, 0, 0x0e, 0, 0, NULL, 0});
	put_mt(&(struct mt_spec){MT(M_VALUETYPE), 0, c_valuetype, 24, MT(M_OBJECT), CL_MOD, 0, 0x12, 0, 0, NULL, 0});
	put_mt(&(struct mt_spec){MT(M_ENUM), 0, c_enum, 24, MT(M_VALUETYPE), CL_MOD, 0, 0x12, 0, 0, NULL, 0});
	put_mt(&(struct mt_spec){MT(M_INT32), TRUEPRIM, c_int32, 24, MT(M_VALUETYPE), CL_MOD, 0, 0x08, 20, 0, NULL, 0});
	put_mt(&(struct mt_spec){MT(M_BYTE), TRUEPRIM, c_byte, 24, MT(M_VALUETYPE), CL_MOD, 0, 0x05, 23, 0, NULL, 0});
	put_mt(&(struct mt_spec){MT(M_BYTE_ARR), SZARRAY | 1, 0, 24, MT(M_OBJECT), CL_MOD, MT(M_BYTE), 0x1d, 0, 0, NULL, 0});
	put_mt(&(struct mt_spec){MT(M_OBJECT_ARR), SZARRAY | 8, 0, 24, MT(M_OBJECT), CL_MOD, MT(M_OBJECT), 0x1d, 0, 0, NULL, 0});
	put_mt(&(struct mt_spec){MT(M_INT32_ARR), SZARRAY | 4, 0, 24, MT(M_OBJECT), CL_MOD, MT(M_INT32), 0x1d, 0, 0, NULL, 0});
	put64(global_var("ObjectMethodTable"), MT(M_OBJECT));
	put64(global_var("StringMethodTable"), MT(M_STRING));

	/* ArrayLayout.dll's types, laid out as CoreCLR's auto layout does (references first). Field
	 * rids: Mode.value__ 1; Plain X 5, Y 6; Mixed Id 7, Tag 8, Big 9; Many C 10, X 11, B 12, A 13,
	 * Y 14; Outer Inner 15, Name 16; Pair First 17, Count 18; Node Value 19, Label 20; Worker Id 21
	 * (checked below). */
	CHECK(field_rid(amd, r_many, "A") == 13 && field_rid(amd, r_worker, "Id") == 21 && field_rid(amd, r_mode, "value__") == 1 &&
	      field_rid(amd, r_pair, "Count") == 18);
	static const struct fd mode_f[] = {{1, 0, 0x06, false}};
	static const struct fd plain_f[] = {{5, 8, 0x08, false}, {6, 0, 0x0d, false}};
	static const struct fd mixed_f[] = {{7, 16, 0x08, false}, {8, 0, 0x12, false}, {9, 8, 0x0a, false}};
	static const struct fd many_f[] = {{10, 16, 0x12, false}, {11, 24, 0x08, false}, {12, 8, 0x12, false},
	                                   {13, 0, 0x12, false}, {14, 28, 0x05, false}};
	static const struct fd outer_f[] = {{15, 0, 0x11, false}, {16, 24, 0x12, false}};
	static const struct fd node_f[] = {{19, 8, 0x08, false}, {20, 0, 0x12, false}};
	static const struct fd worker_f[] = {{21, 0, 0x08, false}};
	static const struct fd pair_f[] = {{17, 0, 0x12, false}, {18, 8, 0x08, false}};
	put_mt(&(struct mt_spec){MT(M_MODE), PRIMITIVE, r_mode, 24, MT(M_ENUM), AL_MOD, 0, 0x06, 22, 0, mode_f, 1});
	put_mt(&(struct mt_spec){MT(M_PLAIN), VALUETYPE, r_plain, 32, MT(M_VALUETYPE), AL_MOD, 0, 0x11, 16, 0, plain_f, 2});
	put_mt(&(struct mt_spec){MT(M_MIXED), VALUETYPE, r_mixed, 40, MT(M_VALUETYPE), AL_MOD, 0, 0x11, 16, 0, mixed_f, 3});
	put_mt(&(struct mt_spec){MT(M_MANY), VALUETYPE, r_many, 48, MT(M_VALUETYPE), AL_MOD, 0, 0x11, 16, 0, many_f, 5});
	put_mt(&(struct mt_spec){MT(M_OUTER), VALUETYPE, r_outer, 48, MT(M_VALUETYPE), AL_MOD, 0, 0x11, 16, 0, outer_f, 2});
	put_mt(&(struct mt_spec){MT(M_NODE), 0, r_node, 32, MT(M_OBJECT), AL_MOD, 0, 0x12, 0, 0, node_f, 2});
	put_mt(&(struct mt_spec){MT(M_WORKER), 0, r_worker, 24, MT(M_OBJECT), AL_MOD, 0, 0x12, 0, 0, worker_f, 1});
	map_typedef(AL_MOD, r_mode, MT(M_MODE));
	map_typedef(AL_MOD, r_plain, MT(M_PLAIN));
	map_typedef(AL_MOD, r_mixed, MT(M_MIXED));
	map_typedef(AL_MOD, r_many, MT(M_MANY));
	map_typedef(AL_MOD, r_outer, MT(M_OUTER));
	map_typedef(AL_MOD, r_node, MT(M_NODE));
	map_typedef(AL_MOD, r_worker, MT(M_WORKER));
	/* Pair<T> (the typical instantiation, in the TypeDef map) and Pair<string>, found only among
	 * the module's constructed types: EETypeHashTable with 2 buckets, Pair<string> second in the
	 * first bucket's chain. */
	put_mt(&(struct mt_spec){MT(M_PAIR_DEF), VALUETYPE | 0x30, r_pair, 32, MT(M_VALUETYPE), AL_MOD, 0, 0x11, 16, 0, NULL, 0});
	map_typedef(AL_MOD, r_pair, MT(M_PAIR_DEF));
	uint64_t pair_inst = MT(M_PAIR_STRING) + 0x900;
	put16(pair_inst + off("GenericsDictInfo", "NumDicts"), 1);
	put16(pair_inst + off("GenericsDictInfo", "NumTypeArgs"), 1);
	put64(pair_inst + 8, pair_inst + 16);
	put64(pair_inst + 16, MT(M_STRING));
	put_mt(&(struct mt_spec){MT(M_PAIR_STRING), VALUETYPE | 0x10, r_pair, 32, MT(M_VALUETYPE), AL_MOD, pair_inst + 8, 0x11, 16,
	                         0, pair_f, 2});
	const uint64_t TYPES = AL_MOD + 0x3000;
	put64(AL_MOD + off("Module", "AvailableTypeParams"), TYPES);
	put64(TYPES + off("EETypeHashTable", "Buckets"), TYPES + 0x100);
	put32(TYPES + off("EETypeHashTable", "Count"), 2);
	put64(TYPES + 0x100, 2);                  /* bucket count */
	put64(TYPES + 0x100 + 8 * 3, TYPES + 0x200);
	put64(TYPES + 0x100 + 8 * 4, 0x9);        /* an empty bucket: end sentinel */
	put64(TYPES + 0x200 + off("EETypeHashTable", "VolatileEntryValue"), MT(M_NODE));
	put64(TYPES + 0x200 + off("EETypeHashTable", "VolatileEntryNextEntry"), TYPES + 0x240);
	put64(TYPES + 0x240 + off("EETypeHashTable", "VolatileEntryValue"), MT(M_PAIR_STRING));
	put64(TYPES + 0x240 + off("EETypeHashTable", "VolatileEntryNextEntry"), 0x7);

	/* The Continuation class (its FieldDescs name Flags' offset) and a flat layout subtype of 88
	 * bytes (48 bytes of data); .NET 10's class has other fields (its tests lay it out). */
	if (!net10_corelib) {
		static struct fd cont_f[4];
		cont_f[0] = (struct fd){field_rid(cmd, c_cont, "Next"), 0, 0x12, false};
		cont_f[1] = (struct fd){field_rid(cmd, c_cont, "ResumeInfo"), 8, 0x18, false};
		cont_f[2] = (struct fd){field_rid(cmd, c_cont, "Flags"), 16, 0x08, false};
		cont_f[3] = (struct fd){field_rid(cmd, c_cont, "State"), 20, 0x08, false};
		put_mt(&(struct mt_spec){MT(M_CONT), 0, c_cont, 40, MT(M_OBJECT), CL_MOD, 0, 0x12, 0, 0, cont_f, 4});
		put_mt(&(struct mt_spec){MT(M_CONT_LAYOUT), 0, c_cont, 88, MT(M_CONT), CL_MOD, 0, 0x12, 0, 4, NULL, 0});
		put64(global_var("ContinuationMethodTable"), MT(M_CONT));
	}

	r->md_work = put_md(MD_CHUNK, MT(M_WORKER), 0, 0x06000000u | r->r_work);
	r->rt = calloc(1, sizeof *r->rt);
	r->rt->t = tgt;
	r->rt->desc = desc;
	r->rt->module_path = strdup("libcoreclr.so");
	return 0;

}

static inline void rts_close(struct rts *r)
{
	adac_ecma_free(r->amd);
	adac_ecma_free(r->cmd);
	adac_runtime_close(r->rt); /* frees desc too */
	adac_target_close(tgt);
	free(r->json);
	free(r->al);
	free(r->corelib);
	free(area);
}

#endif
