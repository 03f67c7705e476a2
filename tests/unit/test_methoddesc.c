/* test_methoddesc.c - RuntimeTypeSystem (dac/types/methoddesc.c), Loader (dac/runtime/loader.c) and names
 * (dac/types/names.c) on a runtime built in a memory target: the real .NET 11.0.0 descriptor gives the
 * layouts; Modules, PE images (the real nested.dll and CoreLib, laid out flat), MethodTables,
 * EEClasses, MethodDescChunks, MethodDescs and TypeDescs are written at made-up addresses the way
 * 11.0.0 lays them out. The expected names are what Microsoft's DAC prints for the same methods in
 * a real process (checked by tests/integration/test_dumpmd.py) and asyncdac's display format.
 * Then corrupt runtime data: every failure is an error naming the address, never a crash.
 * Fails when the .NET samples are not built. */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#define AREA_SIZE 0x2100000ull
#include "metadata/ecma_metadata.h"
#include "metadata/signature.h"
#include "runtime/descriptor.h"
#include "runtime/loader.h"
#include "runtime/runtime.h"
#include "testarea.h"
#include "testutil.h"
#include "types/fielddesc.h"
#include "types/methoddesc.h"
#include "types/names.h"
#include "types/typename.h"

/* A zeroed object of `size` bytes at addr, written to the target when done. */
struct obj {
	uint64_t addr;
	uint8_t b[2048];
	size_t size;
};

static void obj_init(struct obj *o, uint64_t addr, size_t size)
{
	memset(o, 0, sizeof *o);
	o->addr = addr;
	o->size = size;
}
static void set8(struct obj *o, uint32_t at, uint8_t v) { o->b[at] = v; }
static void set16(struct obj *o, uint32_t at, uint16_t v) { memcpy(o->b + at, &v, 2); }
static void set32(struct obj *o, uint32_t at, uint32_t v) { memcpy(o->b + at, &v, 4); }
static void set64(struct obj *o, uint32_t at, uint64_t v) { memcpy(o->b + at, &v, 8); }
static void obj_put(struct obj *o) { mem_write(o->addr, o->b, o->size); }

/* Module + PEAssembly + PEImage + PEImageLayout (flat) for a file loaded at image_base. */
static void put_module(uint64_t module, const char *path, const char *simple, uint64_t image_base, size_t image_size)
{
	uint64_t pea = module + 0x1000, peimage = module + 0x1100, layout = module + 0x1200, strs = module + 0x1300;
	struct obj m;
	obj_init(&m, module, 1024);
	set64(&m, off("Module", "PEAssembly"), pea);
	set64(&m, off("Module", "Assembly"), module + 0x1800);
	set64(&m, off("Module", "Base"), image_base);
	set32(&m, off("Module", "Flags"), 1);
	set64(&m, off("Module", "Path"), strs);
	const char *slash = strrchr(path, '/');
	set64(&m, off("Module", "FileName"), strs + 0x200);
	set64(&m, off("Module", "SimpleName"), strs + 0x300);
	obj_put(&m);
	put_utf16(strs, path);
	put_utf16(strs + 0x200, slash ? slash + 1 : path);
	mem_write(strs + 0x300, simple, strlen(simple) + 1);
	struct obj o;
	obj_init(&o, pea, 128);
	set64(&o, off("PEAssembly", "PEImage"), peimage);
	obj_put(&o);
	obj_init(&o, peimage, 256);
	set64(&o, off("PEImage", "LoadedImageLayout"), layout);
	set64(&o, off("PEImage", "FlatImageLayout"), layout);
	obj_put(&o);
	obj_init(&o, layout, 64);
	set64(&o, off("PEImageLayout", "Base"), image_base);
	set32(&o, off("PEImageLayout", "Size"), (uint32_t)image_size);
	set32(&o, off("PEImageLayout", "Flags"), 0x70); /* not FLAG_MAPPED: a flat file image */
	obj_put(&o);
}

/* MethodTable (+ EEClass pointing back unless eeclass_or_canon is given). */
struct mt_spec {
	uint64_t addr;
	uint32_t flags, flags2, base_size;
	uint16_t num_virtuals;
	uint64_t parent, module, perinst, eeclass_or_canon;
	uint8_t internal_elem;
};

static void put_mt(const struct mt_spec *s)
{
	struct obj o;
	obj_init(&o, s->addr, off("MethodTable", NULL));
	set32(&o, off("MethodTable", "MTFlags"), s->flags);
	set32(&o, off("MethodTable", "BaseSize"), s->base_size ? s->base_size : 24);
	set32(&o, off("MethodTable", "MTFlags2"), s->flags2);
	set16(&o, off("MethodTable", "NumVirtuals"), s->num_virtuals);
	set64(&o, off("MethodTable", "ParentMethodTable"), s->parent);
	set64(&o, off("MethodTable", "Module"), s->module);
	set64(&o, off("MethodTable", "AuxiliaryData"), s->addr + 0x400);
	set64(&o, off("MethodTable", "PerInstInfo"), s->perinst);
	uint64_t ee = s->eeclass_or_canon ? s->eeclass_or_canon : s->addr + 0x200;
	set64(&o, off("MethodTable", "EEClassOrCanonMT"), ee);
	obj_put(&o);
	if (!s->eeclass_or_canon) {
		struct obj e;
		obj_init(&e, ee, 96);
		set64(&e, off("EEClass", "MethodTable"), s->addr);
		set8(&e, off("EEClass", "InternalCorElementType"), s->internal_elem);
		obj_put(&e);
	}
}

/* A generic instantiation: PerInstInfo -> [dict], GenericsDictInfo in the slot before it. */
static uint64_t put_inst(uint64_t at, const uint64_t *args, uint16_t n)
{
	uint8_t gdi[8] = {0};
	uint16_t one = 1;
	memcpy(gdi + off("GenericsDictInfo", "NumDicts"), &one, 2);
	memcpy(gdi + off("GenericsDictInfo", "NumTypeArgs"), &n, 2);
	mem_write(at, gdi, 8);
	put64(at + 8, at + 16);                 /* PerInstInfo[0]: the type's own dictionary */
	mem_write(at + 16, args, n * 8u);       /* dictionary: the type arguments */
	return at + 8;
}

/* A chunk holding one MethodDesc at index 0; returns the MethodDesc. */
struct md_spec {
	uint64_t chunk;
	uint64_t mt;
	uint16_t flags;     /* classification and optional-slot bits */
	uint32_t token;     /* 0x06xxxxxx */
	uint32_t size;      /* classification size */
	uint64_t native_code;
	uint32_t async_flags;
	uint16_t slot;
};

static uint64_t put_md(const struct md_spec *s, struct obj *md_out)
{
	uint32_t chunk_size = off("MethodDescChunk", NULL);
	uint64_t md = s->chunk + chunk_size;
	unsigned rem = 12;
	struct obj c;
	obj_init(&c, s->chunk, chunk_size);
	set64(&c, off("MethodDescChunk", "MethodTable"), s->mt);
	set8(&c, off("MethodDescChunk", "Size"), 20); /* (20 + 1) * 8 bytes of MethodDescs */
	set8(&c, off("MethodDescChunk", "Count"), 0);
	set16(&c, off("MethodDescChunk", "FlagsAndTokenRange"), (uint16_t)(((s->token & 0xffffff) >> rem) | 0x4000));
	obj_put(&c);
	obj_init(md_out, md, 160);
	set8(md_out, off("MethodDesc", "ChunkIndex"), 0);
	set16(md_out, off("MethodDesc", "Slot"), s->slot);
	set16(md_out, off("MethodDesc", "Flags"), s->flags);
	set16(md_out, off("MethodDesc", "Flags3AndTokenRemainder"), (uint16_t)((s->token & 0xfff) | 0x3000));
	uint32_t at = s->size;
	if (s->flags & ADAC_MDF_HAS_NATIVE_CODE_SLOT) {
		set64(md_out, at, s->native_code);
		at += off("NativeCodeSlot", NULL);
	}
	if (s->flags & ADAC_MDF_HAS_ASYNC_METHOD_DATA)
		set32(md_out, at + off("AsyncMethodData", "Flags"), s->async_flags);
	return md;
}

static const char *name_of(struct adac_runtime *rt, uint64_t md, unsigned flags)
{
	struct adac_error err = {0};
	const char *n = adac_method_name(rt, md, flags, &err);
	if (!n)
		fprintf(stderr, "name of 0x%llx: %s %s\n", (unsigned long long)md, adac_errstr(err.code), err.msg);
	return n;
}

int main(void)
{
	const char *dn = getenv("ADAC_DOTNET_DIR");
	char path[2048], nested_path[1024], corelib_path[1024];
	area_inputs(path, sizeof path, corelib_path, sizeof corelib_path);
	snprintf(nested_path, sizeof nested_path, "%s/apps/11/Debug/nested/nested.dll", dn && *dn ? dn : "build/dotnet");
	size_t json_len, nested_len, corelib_len;
	uint8_t *json = (uint8_t *)slurp(path, &json_len);
	uint8_t *nested = (uint8_t *)slurp(nested_path, &nested_len);
	uint8_t *corelib = (uint8_t *)slurp(corelib_path, &corelib_len);
	if (!json || !nested || !corelib) {
		fprintf(stderr, "methoddesc: cannot read %s, %s or %s (scripts/dotnet-setup makes them)\n", path, nested_path,
		        corelib_path);
		return 1;
	}
	/* Pointer globals: all zero in memory unless set below. */
	if (area_setup(json, json_len))
		return 1;
	struct adac_error err = {0};

	const uint64_t NESTED_BASE = 0x10000000, CORELIB_BASE = 0x20000000;
	const uint64_t NESTED_MOD = 0x5000000, CORELIB_MOD = 0x5100000;
	adac_memimg_add(img, NESTED_BASE, nested, nested_len);
	adac_memimg_add(img, CORELIB_BASE, corelib, corelib_len);
	put_module(NESTED_MOD, "/apps/nested/nested.dll", "nested", NESTED_BASE, nested_len);
	put_module(CORELIB_MOD, "/runtime/System.Private.CoreLib.dll", "System.Private.CoreLib", CORELIB_BASE, corelib_len);

	/* Token lookups in the real metadata (the runtime would have them in MTFlags2). */
	flush();
	struct adac_target *mt_tgt = adac_target_open_memory(img, &err);
	tgt = mt_tgt;
	struct adac_ecma *nmd = NULL, *cmd = NULL;
	CHECK(adac_ecma_open_image(mt_tgt, NESTED_BASE, nested_len, false, &nmd, &err) == 0);
	CHECK(adac_ecma_open_image(mt_tgt, CORELIB_BASE, corelib_len, false, &cmd, &err) == 0);
	if (!nmd || !cmd)
		return 1;
	uint32_t rid_app = typedef_rid(nmd, "AsyncdacSamples", "NestedApp");
	uint32_t rid_holder = typedef_rid(nmd, "AsyncdacSamples", "Holder`1");
	uint32_t rid_int32 = typedef_rid(cmd, "System", "Int32");
	uint32_t rid_canon = typedef_rid(cmd, "System", "__Canon");
	uint32_t rid_object = typedef_rid(cmd, "System", "Object");
	uint32_t rid_cont = typedef_rid(cmd, "System.Runtime.CompilerServices", "Continuation");
	uint32_t m_a = 0, m_b = 0, m_c = 0, gp_t = 0;
	CHECK(adac_ecma_find_method(nmd, rid_app, "A", &m_a, &err) == 0);
	CHECK(adac_ecma_find_method(nmd, rid_holder, "B", &m_b, &err) == 0);
	CHECK(adac_ecma_find_method(nmd, rid_app, "C", &m_c, &err) == 0);
	CHECK(adac_ecma_generic_param(nmd, ADAC_ECMA_TOKEN(ADAC_ECMA_TYPEDEF, rid_holder), 0, &gp_t, &err) == 0);
	adac_ecma_free(nmd);
	adac_ecma_free(cmd);
	/* The memory image is shared: the target above owns it, so keep building into it and use it. */

	/* MethodTables. */
	const uint64_t MT_OBJECT = 0x6000000, MT_INT32 = 0x6001000, MT_CANON = 0x6002000, MT_APP = 0x6003000,
	               MT_HOLDER_INT = 0x6004000, MT_HOLDER_T = 0x6005000, MT_INT_ARR = 0x6006000, MT_CONT = 0x6007000,
	               MT_CONT_LAYOUT = 0x6008000, MT_BAD = 0x6009000;
	put_mt(&(struct mt_spec){MT_OBJECT, 0, rid_object << 8, 24, 4, 0, CORELIB_MOD, 0, 0, 0});
	put_mt(&(struct mt_spec){MT_INT32, 0x00070000, rid_int32 << 8, 24, 4, MT_OBJECT, CORELIB_MOD, 0, 0, 0x08});
	put_mt(&(struct mt_spec){MT_CANON, 0, rid_canon << 8, 24, 4, MT_OBJECT, CORELIB_MOD, 0, 0, 0});
	put_mt(&(struct mt_spec){MT_APP, 0, rid_app << 8, 24, 4, MT_OBJECT, NESTED_MOD, 0, 0, 0});
	uint64_t int_arg = MT_INT32;
	put_mt(&(struct mt_spec){MT_HOLDER_INT, 0x10, rid_holder << 8, 32, 4, MT_OBJECT, NESTED_MOD,
	                         put_inst(MT_HOLDER_INT + 0x600, &int_arg, 1), 0, 0});
	/* Holder<T>: the typical instantiation, whose dictionary holds a TypeVarTypeDesc. */
	const uint64_t TD_T = 0x6100000;
	struct obj tv;
	obj_init(&tv, TD_T, 48);
	set32(&tv, off("TypeDesc", "TypeAndFlags"), 0x13);
	set64(&tv, off("TypeVarTypeDesc", "Module"), NESTED_MOD);
	set32(&tv, off("TypeVarTypeDesc", "Token"), ADAC_ECMA_TOKEN(ADAC_ECMA_GENERICPARAM, gp_t));
	set32(&tv, off("TypeVarTypeDesc", "Index"), 0);
	obj_put(&tv);
	uint64_t t_arg = TD_T | 2;
	put_mt(&(struct mt_spec){MT_HOLDER_T, 0x30, rid_holder << 8, 32, 4, MT_OBJECT, NESTED_MOD,
	                         put_inst(MT_HOLDER_T + 0x600, &t_arg, 1), 0, 0});
	/* Int32[]: component size 4, SZ array category, PerInstInfo = element type. */
	put_mt(&(struct mt_spec){MT_INT_ARR, 0x800a0004, 0, 24, 4, MT_OBJECT, CORELIB_MOD, MT_INT32, 0, 0});
	/* Continuation and one runtime-made layout subtype sharing the singleton EEClass. */
	put_mt(&(struct mt_spec){MT_CONT, 0, rid_cont << 8, 32, 4, MT_OBJECT, CORELIB_MOD, 0, 0, 0});
	put_mt(&(struct mt_spec){MT_CONT_LAYOUT, 0, 0, 64, 4, MT_CONT, CORELIB_MOD, 0, 0x6200000, 0});
	struct obj single;
	obj_init(&single, 0x6200000, 96);
	set64(&single, off("EEClass", "MethodTable"), MT_CONT); /* the singleton points elsewhere */
	obj_put(&single);
	put64(PDATA(16), MT_CONT);     /* ContinuationMethodTable */
	put64(PDATA(17), 0x6200000);   /* ContinuationSingletonEEClass */
	/* A MethodTable whose EEClass does not point back. */
	put_mt(&(struct mt_spec){MT_BAD, 0, rid_app << 8, 24, 4, MT_OBJECT, NESTED_MOD, 0, 0x6300000, 0});
	struct obj bad_ee;
	obj_init(&bad_ee, 0x6300000, 96);
	set64(&bad_ee, off("EEClass", "MethodTable"), MT_APP);
	obj_put(&bad_ee);

	/* MethodDescs. */
	uint32_t md_size = off("MethodDesc", NULL), imd_size = off("InstantiatedMethodDesc", NULL);
	struct obj o;
	const uint16_t IL_ASYNC = ADAC_MDF_HAS_NATIVE_CODE_SLOT | ADAC_MDF_HAS_ASYNC_METHOD_DATA;
	uint64_t md_a = put_md(&(struct md_spec){0x7000000, MT_APP, IL_ASYNC | ADAC_MDF_STATIC, 0x06000000 | m_a, md_size,
	                                         0x7ff00001000, 0x5, 8},
	                       &o);
	obj_put(&o);
	uint64_t md_a_thunk = put_md(&(struct md_spec){0x7001000, MT_APP, IL_ASYNC | ADAC_MDF_STATIC, 0x06000000 | m_a,
	                                               md_size, 0, 0x12, 7},
	                             &o);
	obj_put(&o);
	uint64_t md_b = put_md(&(struct md_spec){0x7002000, MT_HOLDER_INT, IL_ASYNC, 0x06000000 | m_b, md_size, 0x7ff00002000,
	                                         0x5, 6},
	                       &o);
	obj_put(&o);
	uint64_t md_b_open = put_md(&(struct md_spec){0x7003000, MT_HOLDER_T, IL_ASYNC, 0x06000000 | m_b, md_size, 0, 0x5, 6},
	                            &o);
	obj_put(&o);
	uint64_t canon_arg = MT_CANON;
	uint64_t md_c = put_md(&(struct md_spec){0x7004000, MT_APP, ADAC_MD_INSTANTIATED | IL_ASYNC | ADAC_MDF_STATIC,
	                                         0x06000000 | m_c, imd_size, 0x7ff00003000, 0x5, 6},
	                       &o);
	set64(&o, off("InstantiatedMethodDesc", "PerInstInfo"), 0x7004800);
	set16(&o, off("InstantiatedMethodDesc", "Flags2"), ADAC_IMD_SHARED);
	set16(&o, off("InstantiatedMethodDesc", "NumGenericArgs"), 1);
	obj_put(&o);
	put64(0x7004800, canon_arg);
	/* Array method Int32[].Set(Int32, !0) with its stored signature. */
	uint32_t arr_size = off("ArrayMethodDesc", NULL);
	uint64_t md_set = put_md(&(struct md_spec){0x7005000, MT_INT_ARR, ADAC_MD_ARRAY, 0, arr_size, 0, 0, 5}, &o);
	set64(&o, off("StoredSigMethodDesc", "Sig"), 0x7005800);
	set32(&o, off("StoredSigMethodDesc", "cSig"), 6);
	obj_put(&o);
	const uint8_t set_sig[] = {0x20, 0x02, 0x01, 0x08, 0x13, 0x00};
	mem_write(0x7005800, set_sig, sizeof set_sig);
	/* An IL stub: DynamicMethodDesc with a UTF-8 name and a stored signature with an INTERNAL type. */
	uint32_t dyn_size = off("DynamicMethodDesc", NULL);
	uint64_t md_stub = put_md(&(struct md_spec){0x7006000, MT_OBJECT, ADAC_MD_DYNAMIC, 0, dyn_size, 0, 0, 0}, &o);
	set64(&o, off("StoredSigMethodDesc", "Sig"), 0x7006800);
	set32(&o, off("StoredSigMethodDesc", "cSig"), 13);
	set32(&o, off("StoredSigMethodDesc", "ExtendedFlags"), 0x8000 | 19);
	set64(&o, off("DynamicMethodDesc", "MethodName"), 0x7006900);
	obj_put(&o);
	uint8_t stub_sig[13] = {0x00, 0x02, 0x08, 0x1c, 0x21};
	uint64_t h = MT_INT32;
	memcpy(stub_sig + 5, &h, 8);
	mem_write(0x7006800, stub_sig, sizeof stub_sig);
	mem_write(0x7006900, "IL_STUB_Test", 13);
	flush();

	/* The runtime, by hand. */
	struct adac_runtime *rt = calloc(1, sizeof *rt);
	rt->t = mt_tgt;
	rt->desc = desc;
	rt->module_path = strdup("libcoreclr.so");

	/* MethodDesc facts. */
	struct adac_method_info mi;
	CHECK(adac_md_read(rt, md_a, &mi, &err) == 0);
	CHECK_EQ_U64(mi.token, 0x06000000 | m_a);
	CHECK_EQ_U64(mi.method_table, MT_APP);
	CHECK_EQ_U64(mi.module, NESTED_MOD);
	CHECK_EQ_U64(mi.chunk, 0x7000000);
	CHECK(mi.classification == ADAC_MD_IL && mi.is_static && mi.has_async_data);
	CHECK(mi.is_async_variant && !mi.is_async_thunk && !mi.diagnostics_hidden);
	CHECK_EQ_U64(mi.async_flags, 5);
	CHECK_EQ_U64(mi.size, md_size + off("NativeCodeSlot", NULL) + off("AsyncMethodData", NULL));
	uint64_t code = 0;
	CHECK(adac_md_native_code(rt, md_a, &code, &err) == 0);
	CHECK_EQ_U64(code, 0x7ff00001000);
	CHECK(adac_md_read(rt, md_a_thunk, &mi, &err) == 0);
	CHECK(mi.is_async_thunk && mi.diagnostics_hidden && !mi.is_async_variant);
	CHECK(adac_md_read(rt, md_c, &mi, &err) == 0);
	CHECK(mi.classification == ADAC_MD_INSTANTIATED && mi.imd_kind == ADAC_IMD_SHARED && mi.num_generic_args == 1);
	CHECK_EQ_U64(mi.generic_args_addr, 0x7004800);
	CHECK(adac_md_read(rt, md_set, &mi, &err) == 0);
	CHECK(mi.classification == ADAC_MD_ARRAY && mi.token == 0 && mi.array_function == 1);
	CHECK(adac_md_read(rt, md_stub, &mi, &err) == 0);
	CHECK(mi.is_il_stub && !mi.is_lcg && mi.il_stub_type == 19 && mi.diagnostics_hidden && mi.dynamic_name == 0x7006900);
	uint64_t chunk_mds[4];
	uint32_t nmds = 0;
	CHECK(adac_md_chunk_methods(rt, 0x7000000, chunk_mds, 4, &nmds, &err) == 0);
	CHECK(nmds == 1 && chunk_mds[0] == md_a);

	/* MethodTable facts. */
	struct adac_mt_info mt;
	CHECK(adac_mt_read(rt, MT_HOLDER_INT, &mt, &err) == 0);
	CHECK(mt.num_generic_args == 1 && mt.instantiation == MT_HOLDER_INT + 0x610 && !mt.is_generic_definition);
	CHECK_EQ_U64(mt.typedef_token, 0x02000000 | rid_holder);
	CHECK(adac_mt_read(rt, MT_HOLDER_T, &mt, &err) == 0);
	CHECK(mt.is_generic_definition);
	CHECK(adac_mt_read(rt, MT_INT_ARR, &mt, &err) == 0);
	CHECK(mt.is_array && mt.is_szarray && mt.rank == 1 && mt.component_size == 4 && mt.element_type == MT_INT32);
	CHECK(mt.signature_elem == 0x1d);
	CHECK(adac_mt_read(rt, MT_INT32, &mt, &err) == 0);
	CHECK(mt.signature_elem == 0x08 && mt.is_value_type);
	CHECK(adac_mt_read(rt, MT_CONT_LAYOUT, &mt, &err) == 0);
	CHECK(mt.is_continuation_without_metadata);
	struct adac_th_info ti;
	CHECK(adac_th_read(rt, TD_T | 2, &ti, &err) == 0);
	CHECK(ti.kind == ADAC_TH_TYPEVAR && ti.module == NESTED_MOD && ti.index == 0);

	/* Loader. */
	const struct adac_loader_module *lm = adac_loader_module(rt, NESTED_MOD, &err);
	CHECK(lm != NULL);
	if (lm) {
		CHECK_EQ_STR(lm->path, "/apps/nested/nested.dll");
		CHECK_EQ_STR(lm->file_name, "nested.dll");
		CHECK_EQ_STR(lm->simple_name, "nested");
	}
	struct adac_loader_image li;
	CHECK(adac_loader_image(rt, NESTED_MOD, &li, &err) == 0);
	CHECK(li.base == NESTED_BASE && li.size == nested_len && !li.mapped);
	CHECK_EQ_STR(adac_module_file_name(rt, CORELIB_MOD, &err), "System.Private.CoreLib.dll");

	/* Names: display and exactly the DAC's. */
	CHECK_EQ_STR(name_of(rt, md_a, ADAC_NAME_PARAMS), "AsyncdacSamples.NestedApp.A(Int32)");
	CHECK_EQ_STR(name_of(rt, md_a_thunk, ADAC_NAME_PARAMS), "AsyncdacSamples.NestedApp.A(Int32)");
	CHECK_EQ_STR(name_of(rt, md_a, 0), "AsyncdacSamples.NestedApp.A");
	CHECK_EQ_STR(name_of(rt, md_a, ADAC_NAME_NO_NAMESPACE), "NestedApp.A");
	CHECK_EQ_STR(name_of(rt, md_b, ADAC_NAME_PARAMS),
	             "AsyncdacSamples.Holder<Int32>.B(Int32, System.Threading.Tasks.Task<Int32>)");
	CHECK_EQ_STR(name_of(rt, md_b, ADAC_NAME_PARAMS | ADAC_NAME_NO_NAMESPACE), "Holder<Int32>.B(Int32, Task<Int32>)");
	CHECK_EQ_STR(name_of(rt, md_b, ADAC_NAME_PARAMS | ADAC_NAME_DAC),
	             "AsyncdacSamples.Holder`1[[System.Int32, System.Private.CoreLib]].B(Int32, "
	             "System.Threading.Tasks.Task`1<Int32>)");
	CHECK_EQ_STR(name_of(rt, md_b_open, ADAC_NAME_PARAMS),
	             "AsyncdacSamples.Holder<T>.B(T, System.Threading.Tasks.Task<Int32>)");
	CHECK_EQ_STR(name_of(rt, md_b_open, ADAC_NAME_PARAMS | ADAC_NAME_DAC),
	             "AsyncdacSamples.Holder`1.B(!0, System.Threading.Tasks.Task`1<Int32>)");
	CHECK_EQ_STR(name_of(rt, md_c, ADAC_NAME_PARAMS),
	             "AsyncdacSamples.NestedApp.C<System.__Canon>(System.__Canon, System.Threading.Tasks.Task<Int32>)");
	CHECK_EQ_STR(name_of(rt, md_c, ADAC_NAME_PARAMS | ADAC_NAME_DAC),
	             "AsyncdacSamples.NestedApp.C[[System.__Canon, System.Private.CoreLib]](System.__Canon, "
	             "System.Threading.Tasks.Task`1<Int32>)");
	CHECK_EQ_STR(name_of(rt, md_set, ADAC_NAME_PARAMS), "Int32[].Set(Int32, Int32)");
	CHECK_EQ_STR(name_of(rt, md_set, ADAC_NAME_PARAMS | ADAC_NAME_DAC), "System.Int32[].Set(Int32, Int32)");
	CHECK_EQ_STR(name_of(rt, md_stub, ADAC_NAME_PARAMS), "IL_STUB_Test(System.Object, Int32)");
	CHECK_EQ_STR(name_of(rt, md_stub, ADAC_NAME_PARAMS | ADAC_NAME_DAC), "ILStubClass.IL_STUB_Test(System.Object, System.Int32)");
	const char *cached1 = name_of(rt, md_b, ADAC_NAME_PARAMS), *cached2 = name_of(rt, md_b, ADAC_NAME_PARAMS);
	CHECK(cached1 == cached2);
	CHECK_EQ_STR(adac_type_name(rt, MT_HOLDER_INT, 0, &err), "AsyncdacSamples.Holder<Int32>");
	CHECK_EQ_STR(adac_type_name(rt, MT_HOLDER_INT, ADAC_NAME_DAC, &err),
	             "AsyncdacSamples.Holder`1[[System.Int32, System.Private.CoreLib]]");
	CHECK_EQ_STR(adac_type_name(rt, MT_INT_ARR, 0, &err), "Int32[]");
	CHECK_EQ_STR(adac_type_name(rt, MT_INT_ARR, ADAC_NAME_DAC, &err), "System.Int32[]");
	CHECK_EQ_STR(adac_type_name(rt, MT_CONT_LAYOUT, 0, &err), "System.Runtime.CompilerServices.Continuation");
	CHECK_EQ_STR(adac_type_name(rt, TD_T | 2, 0, &err), "T");

	/* The C# style (variables) of the same names. */
	CHECK_EQ_STR(name_of(rt, md_b, ADAC_NAME_PARAMS | ADAC_NAME_CSHARP),
	             "AsyncdacSamples.Holder<int>.B(int, System.Threading.Tasks.Task<int>)");
	CHECK_EQ_STR(name_of(rt, md_c, ADAC_NAME_PARAMS | ADAC_NAME_CSHARP),
	             "AsyncdacSamples.NestedApp.C<System.__Canon>(System.__Canon, System.Threading.Tasks.Task<int>)");
	CHECK_EQ_STR(name_of(rt, md_stub, ADAC_NAME_PARAMS | ADAC_NAME_CSHARP), "IL_STUB_Test(object, int)");
	CHECK_EQ_STR(adac_type_name(rt, MT_HOLDER_INT, ADAC_NAME_CSHARP, &err), "AsyncdacSamples.Holder<int>");
	CHECK_EQ_STR(adac_type_name(rt, MT_INT_ARR, ADAC_NAME_CSHARP, &err), "int[]");

	/* A method's signature context resolves its type's generic variables, in each style. */
	struct adac_method_info bi;
	struct adac_type_ctx tc;
	if (adac_md_read(rt, md_b, &bi, &err) == 0 && adac_type_ctx_for_method(rt, &bi, 0, &tc, &err) == 0) {
		const struct adac_sig_type var0 = {.elem = ADAC_ELEM_VAR, .number = 0};
		static const char *const want[] = {"Int32", "int", "Int32"};
		for (unsigned k = 0; k < 3; k++) {
			struct adac_sig_text t = {0};
			CHECK(adac_tn_sig(&tc, &var0, (enum adac_name_style)k, 0, &t, &err) == 0);
			CHECK_EQ_STR(adac_sig_text_str(&t), want[k]);
			adac_sig_text_free(&t);
		}
	} else {
		CHECK(!"adac_type_ctx_for_method");
	}

	/* Corrupt runtime data: errors naming the address. */
	int rc;
	adac_error_clear(&err);
	rc = adac_md_read(rt, md_a + 4, &mi, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "is not a MethodDesc (misaligned)");
	adac_error_clear(&err);
	rc = adac_md_read(rt, 0, &mi, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "0x0 is not a MethodDesc (null)");
	adac_error_clear(&err);
	rc = adac_md_read(rt, 0x7fff0000, &mi, &err);
	CHECK_ERR(rc, &err, ADAC_E_READ, "cannot read 16 bytes at 0x7fff0000");
	adac_error_clear(&err);
	uint64_t md_bad_mt = put_md(&(struct md_spec){0x7010000, MT_BAD, 0, 0x06000001, md_size, 0, 0, 0}, &o);
	obj_put(&o);
	flush();
	rc = adac_md_read(rt, md_bad_mt, &mi, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "0x6009000 is not a MethodTable (its EEClass does not point back to it)");
	adac_error_clear(&err);
	uint64_t md_no_mt = put_md(&(struct md_spec){0x7011000, 0, 0, 0x06000001, md_size, 0, 0, 0}, &o);
	obj_put(&o);
	flush();
	rc = adac_md_read(rt, md_no_mt, &mi, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "is not a MethodDesc (its chunk has no MethodTable)");
	adac_error_clear(&err);
	uint64_t md_far = put_md(&(struct md_spec){0x7012000, MT_APP, 0, 0x06000001, md_size, 0, 0, 0}, &o);
	set8(&o, off("MethodDesc", "ChunkIndex"), 0);
	obj_put(&o);
	struct obj ch;
	obj_init(&ch, 0x7012000, off("MethodDescChunk", NULL));
	set64(&ch, off("MethodDescChunk", "MethodTable"), MT_APP);
	set8(&ch, off("MethodDescChunk", "Size"), 0); /* 8 bytes: the 16-byte MethodDesc overruns it */
	obj_put(&ch);
	flush();
	rc = adac_md_read(rt, md_far, &mi, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "it runs past the end of its chunk");
	adac_error_clear(&err);
	uint64_t md_notoken = put_md(&(struct md_spec){0x7013000, MT_APP, 0, 0x06000000, md_size, 0, 0, 0}, &o);
	obj_put(&o);
	flush();
	CHECK(adac_method_name(rt, md_notoken, 0, &err) == NULL);
	CHECK_ERR(-1, &err, ADAC_E_CORRUPT, "has no metadata token");
	adac_error_clear(&err);
	uint64_t md_badtoken = put_md(&(struct md_spec){0x7014000, MT_APP, 0, 0x06fff000, md_size, 0, 0, 0}, &o);
	obj_put(&o);
	flush();
	CHECK(adac_method_name(rt, md_badtoken, 0, &err) == NULL);
	CHECK_ERR(-1, &err, ADAC_E_CORRUPT, "MethodDef row 16773120 does not exist");
	adac_error_clear(&err);
	rc = adac_th_read(rt, 0x6000001, &ti, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "0x6000001 is not a TypeHandle");
	adac_error_clear(&err);
	rc = adac_mt_read(rt, 0x6000008, &mt, &err);
	CHECK(rc == -1 && (err.code == ADAC_E_CORRUPT || err.code == ADAC_E_READ));
	adac_error_clear(&err);
	/* A generic type claiming 60000 type arguments. */
	const uint64_t MT_HUGE = 0x600a000;
	uint64_t dummy = MT_INT32;
	uint64_t perinst = put_inst(MT_HUGE + 0x600, &dummy, 1);
	uint16_t many = 60000;
	mem_write(perinst - 8 + off("GenericsDictInfo", "NumTypeArgs"), &many, 2);
	put_mt(&(struct mt_spec){MT_HUGE, 0x10, rid_holder << 8, 32, 4, MT_OBJECT, NESTED_MOD, perinst, 0, 0});
	flush();
	rc = adac_mt_read(rt, MT_HUGE, &mt, &err);
	CHECK_ERR(rc, &err, ADAC_E_LIMIT, "has 1 dictionaries, 60000 type arguments (limit 1024)");
	adac_error_clear(&err);
	/* A hierarchy deeper than ADAC_MAX_PARENT_DEPTH: the walks up say so (ADAC_E_LIMIT), never "no". */
	const uint64_t MT_DEEP = 0x6400000;
	const unsigned ndeep = ADAC_MAX_PARENT_DEPTH + 6;
	for (unsigned i = 0; i < ndeep; i++)
		put_mt(&(struct mt_spec){MT_DEEP + i * 0x1000ull, 0, rid_app << 8, 24, 4,
		                         i + 1 < ndeep ? MT_DEEP + (i + 1) * 0x1000ull : MT_OBJECT, NESTED_MOD, 0, 0, 0});
	flush();
	bool yes = false;
	CHECK(adac_mt_derives_from(rt, MT_DEEP, MT_DEEP + 5 * 0x1000, &yes, &err) == 0 && yes);
	CHECK(adac_mt_derives_from(rt, MT_DEEP + 10 * 0x1000, MT_OBJECT, &yes, &err) == 0 && yes);
	CHECK(adac_mt_derives_from(rt, MT_APP, MT_CONT, &yes, &err) == 0 && !yes);
	rc = adac_mt_derives_from(rt, MT_DEEP, MT_OBJECT, &yes, &err);
	CHECK_ERR(rc, &err, ADAC_E_LIMIT, "is neither it nor one of its first 64 parent types, and it has more (limit 64)");
	adac_error_clear(&err);
	struct adac_field fld;
	rc = adac_mt_find_field(rt, MT_APP, "nope", &fld, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "type with MethodTable 0x6003000 has no field nope");
	adac_error_clear(&err);
	rc = adac_mt_find_field(rt, MT_DEEP, "nope", &fld, &err);
	CHECK_ERR(rc, &err, ADAC_E_LIMIT,
	          "type with MethodTable 0x6400000: no field nope in it or its first 64 parent types, and it has more (limit 64)");
	adac_error_clear(&err);
	/* A module without a PE image; a module whose path cannot be read. */
	const uint64_t MOD_DYN = 0x5200000, MOD_BADPATH = 0x5300000;
	struct obj mo;
	obj_init(&mo, MOD_DYN, 1024);
	obj_put(&mo);
	flush();
	rc = adac_loader_image(rt, MOD_DYN, &li, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "has no PEAssembly");
	adac_error_clear(&err);
	obj_init(&mo, MOD_BADPATH, 1024);
	set64(&mo, off("Module", "Path"), 0x7ffe0000);
	obj_put(&mo);
	flush();
	CHECK(adac_module_path(rt, MOD_BADPATH, &err) == NULL);
	CHECK_ERR(-1, &err, ADAC_E_READ, "Module 0x5300000: cannot read the UTF-16 string at 0x7ffe0000");
	adac_error_clear(&err);
	CHECK(adac_ecma_for_module(rt, MOD_DYN, &err) == NULL);
	CHECK_ERR(-1, &err, ADAC_E_NOT_FOUND, "Module 0x5200000 has no PEAssembly");

	/* Random MethodDesc addresses in and around the structures: errors, never a crash. */
	uint64_t seed = 12345;
	for (unsigned i = 0; i < 20000; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t a = 0x5000000 + ((seed >> 16) % 0x2100000);
		a &= ~(uint64_t)7;
		struct adac_error e = {0};
		const char *n = adac_method_name(rt, a, ADAC_NAME_PARAMS | ((seed >> 60) & 1 ? ADAC_NAME_DAC : 0), &e);
		CHECK(n != NULL || e.code != ADAC_E_OK);
		struct adac_th_info th;
		e = (struct adac_error){0};
		if (adac_th_read(rt, a | ((seed >> 8) & 2), &th, &e) == 0) {
			struct adac_sig_text tt = {0};
			e = (struct adac_error){0};
			adac_tn_handle(rt, a | ((seed >> 8) & 2), (enum adac_name_style)((seed >> 61) % 3), 0, &tt, &e);
			adac_sig_text_free(&tt);
		}
	}

	adac_runtime_close(rt); /* frees desc too */
	adac_target_close(mt_tgt);
	free(area);
	free(json);
	free(nested);
	free(corelib);
	return check_report("methoddesc");
}
