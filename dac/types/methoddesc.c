/* methoddesc.c - RuntimeTypeSystem contract: MethodDescs (chunk, token, classification, optional
 * slots, async data, dynamic and instantiated methods), MethodTables and TypeDescs. */
#include "types/methoddesc.h"
#include "metadata/ecma_metadata.h"

#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/limits.h"
#include "metadata/signature.h"
#include "runtime/descriptor.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "target/target.h"

/* Every descriptor field read here, width 'P' = target pointer, 0 = the type's size ("!"). */
#define RTS_FIELDS(X)                                                            \
	X(MD_SIZE, "MethodDesc", NULL, 0, true)                                      \
	X(MD_CHUNKINDEX, "MethodDesc", "ChunkIndex", 1, true)                        \
	X(MD_SLOT, "MethodDesc", "Slot", 2, true)                                    \
	X(MD_FLAGS, "MethodDesc", "Flags", 2, true)                                  \
	X(MD_FLAGS3, "MethodDesc", "Flags3AndTokenRemainder", 2, true)               \
	X(CHUNK_SIZE, "MethodDescChunk", NULL, 0, true)                              \
	X(CHUNK_MT, "MethodDescChunk", "MethodTable", 'P', true)                     \
	X(CHUNK_SIZEF, "MethodDescChunk", "Size", 1, true)                           \
	X(CHUNK_COUNT, "MethodDescChunk", "Count", 1, true)                          \
	X(CHUNK_FLAGS, "MethodDescChunk", "FlagsAndTokenRange", 2, true)             \
	X(NONVTABLE_SIZE, "NonVtableSlot", NULL, 0, true)                            \
	X(METHODIMPL_SIZE, "MethodImpl", NULL, 0, true)                              \
	X(NATIVECODE_SIZE, "NativeCodeSlot", NULL, 0, true)                          \
	X(ASYNC_SIZE, "AsyncMethodData", NULL, 0, false)                             \
	X(ASYNC_FLAGS, "AsyncMethodData", "Flags", 4, false)                         \
	X(ASYNC_SIG, "AsyncMethodData", "Signature", 'P', false)                     \
	X(FCALL_SIZE, "FCallMethodDesc", NULL, 0, true)                              \
	X(PINVOKE_SIZE, "PInvokeMethodDesc", NULL, 0, true)                          \
	X(EEIMPL_SIZE, "EEImplMethodDesc", NULL, 0, true)                            \
	X(ARRAY_SIZE, "ArrayMethodDesc", NULL, 0, true)                              \
	X(IMD_SIZE, "InstantiatedMethodDesc", NULL, 0, true)                         \
	X(COM_SIZE, "CLRToCOMCallMethodDesc", NULL, 0, false)                        \
	X(DYN_SIZE, "DynamicMethodDesc", NULL, 0, true)                              \
	X(IMD_PERINST, "InstantiatedMethodDesc", "PerInstInfo", 'P', true)           \
	X(IMD_FLAGS2, "InstantiatedMethodDesc", "Flags2", 2, true)                   \
	X(IMD_NGEN, "InstantiatedMethodDesc", "NumGenericArgs", 2, true)             \
	X(SSIG_SIG, "StoredSigMethodDesc", "Sig", 'P', true)                         \
	X(SSIG_CSIG, "StoredSigMethodDesc", "cSig", 4, true)                         \
	X(SSIG_EXT, "StoredSigMethodDesc", "ExtendedFlags", 4, true)                 \
	X(DYN_NAME, "DynamicMethodDesc", "MethodName", 'P', true)                    \
	X(MT_SIZE, "MethodTable", NULL, 0, true)                                     \
	X(MT_FLAGS, "MethodTable", "MTFlags", 4, true)                               \
	X(MT_BASESIZE, "MethodTable", "BaseSize", 4, true)                           \
	X(MT_FLAGS2, "MethodTable", "MTFlags2", 4, true)                             \
	X(MT_EECLASS, "MethodTable", "EEClassOrCanonMT", 'P', true)                  \
	X(MT_MODULE, "MethodTable", "Module", 'P', true)                             \
	X(MT_PARENT, "MethodTable", "ParentMethodTable", 'P', true)                  \
	X(MT_NUMVIRT, "MethodTable", "NumVirtuals", 2, true)                         \
	X(MT_PERINST, "MethodTable", "PerInstInfo", 'P', true)                       \
	X(MT_AUX, "MethodTable", "AuxiliaryData", 'P', true)                         \
	X(AUX_NONVIRT, "MethodTableAuxiliaryData", "OffsetToNonVirtualSlots", 2, false) \
	X(EEC_MT, "EEClass", "MethodTable", 'P', true)                               \
	X(EEC_ELEM, "EEClass", "InternalCorElementType", 1, false)                   \
	X(EEC_PADDING, "EEClass", "BaseSizePadding", 1, false)                       \
	X(GDI_NUMDICTS, "GenericsDictInfo", "NumDicts", 2, true)                     \
	X(GDI_NUMTYARGS, "GenericsDictInfo", "NumTypeArgs", 2, true)                 \
	X(TD_FLAGS, "TypeDesc", "TypeAndFlags", 4, true)                             \
	X(PTD_ARG, "ParamTypeDesc", "TypeArg", 'P', true)                            \
	X(TVD_MODULE, "TypeVarTypeDesc", "Module", 'P', true)                        \
	X(TVD_TOKEN, "TypeVarTypeDesc", "Token", 4, true)                            \
	X(TVD_INDEX, "TypeVarTypeDesc", "Index", 4, false)                           \
	X(FPT_NUMARGS, "FnPtrTypeDesc", "NumArgs", 4, true)                          \
	X(FPT_CALLCONV, "FnPtrTypeDesc", "CallConv", 1, true)                        \
	X(FPT_RETARGS, "FnPtrTypeDesc", "RetAndArgTypes", 'P', true)

enum {
#define X(id, type, field, width, req) R_##id,
	RTS_FIELDS(X)
#undef X
	R_COUNT
};

/* MethodTable flags (methodtable.h, as the RuntimeTypeSystem contract reads them). */
#define MTF_CATEGORY_MASK 0x000f0000u
#define MTF_CATEGORY_ARRAY_MASK 0x000c0000u
#define MTF_CATEGORY_ARRAY 0x00080000u
#define MTF_CATEGORY_IFARRAY_SZARRAY 0x00020000u
#define MTF_CATEGORY_VALUETYPE_MASK 0x000c0000u
#define MTF_CATEGORY_VALUETYPE 0x00040000u
#define MTF_CATEGORY_NULLABLE 0x00050000u
#define MTF_CATEGORY_PRIMITIVE 0x00060000u
#define MTF_CATEGORY_TRUEPRIMITIVE 0x00070000u
#define MTF_CATEGORY_INTERFACE 0x000c0000u
#define MTF_HAS_COMPONENT_SIZE 0x80000000u
#define MTF_CONTAINS_GC_POINTERS 0x01000000u
#define MTF_GENERICS_MASK 0x00000030u
#define MTF_GENERICS_SHAREDINST 0x00000020u
#define MTF_GENERICS_TYPICALINST 0x00000030u
#define MTF2_TYPEDEF_RID_SHIFT 8

#define MD_CACHE 1024u
#define MT_CACHE 1024u

struct md_slot {
	uint64_t key;
	struct adac_method_info info;
};

struct mt_slot {
	uint64_t key;
	struct adac_mt_info info;
};

struct rts_state {
	uint32_t off[R_COUNT];
	uint8_t has[R_COUNT];
	uint8_t width[R_COUNT];
	unsigned ps;
	uint64_t md_align;
	unsigned token_rem_bits;
	uint64_t array_base_size;
	bool cont_known;
	uint64_t cont_mt, cont_eeclass;
	struct md_slot mds[MD_CACHE];
	struct mt_slot mts[MT_CACHE];
};

static int init_rts(struct adac_runtime *rt, struct rts_state **out, struct adac_error *err)
{
	struct rts_state *s = adac_runtime_slot(rt, ADAC_SLOT_RTS);
	if (s) {
		*out = s;
		return 0;
	}
	s = calloc(1, sizeof *s);
	if (!s)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	const struct adac_descriptor *d = rt->desc;
	s->ps = adac_desc_ptr_size(d);
	struct adac_field_spec specs[R_COUNT] = {
#define X(id, type, field, width, req) {type, field, (uint8_t)((width) == 'P' ? 0 : (width)), req},
		RTS_FIELDS(X)
#undef X
	};
	static const bool is_ptr[R_COUNT] = {
#define X(id, type, field, width, req) (width) == 'P',
		RTS_FIELDS(X)
#undef X
	};
	for (int i = 0; i < R_COUNT; i++) {
		if (is_ptr[i])
			specs[i].width = (uint8_t)s->ps;
		s->width[i] = specs[i].width;
	}
	uint64_t bits = 0;
	if (adac_desc_resolve(d, specs, R_COUNT, s->off, s->has, err) ||
	    adac_desc_global(d, "MethodDescAlignment", &s->md_align, err) ||
	    adac_desc_global(d, "MethodDescTokenRemainderBitCount", &bits, err))
		goto fail;
	if (s->md_align == 0 || s->md_align > 64 || (s->md_align & (s->md_align - 1)) || bits == 0 || bits > 24) {
		adac_fail(err, ADAC_E_LAYOUT, 0, "MethodDescAlignment %llu / MethodDescTokenRemainderBitCount %llu are invalid",
		          (unsigned long long)s->md_align, (unsigned long long)bits);
		goto fail;
	}
	s->token_rem_bits = (unsigned)bits;
	if (adac_desc_global(d, "ArrayBaseSize", &s->array_base_size, NULL))
		s->array_base_size = 3u * s->ps;
	/* GenericsDictInfo is unsized in the descriptor: the runtime keeps it in the pointer-sized slot
	 * just before PerInstInfo[0] (cDAC RuntimeTypeSystem_1.TypeInstantiation). */
	if (s->off[R_GDI_NUMDICTS] + 2 > s->ps || s->off[R_GDI_NUMTYARGS] + 2 > s->ps) {
		adac_fail(err, ADAC_E_LAYOUT, 0, "GenericsDictInfo fields (%u, %u) do not fit the %u-byte slot before PerInstInfo",
		          s->off[R_GDI_NUMDICTS], s->off[R_GDI_NUMTYARGS], s->ps);
		goto fail;
	}
	adac_runtime_set_slot(rt, ADAC_SLOT_RTS, s, free);
	*out = s;
	return 0;
fail:
	adac_error_wrap(err, "RuntimeTypeSystem contract: ");
	free(s);
	return -1;
}

/* A field out of a buffer read whole. */
static uint64_t get(const struct rts_state *s, const uint8_t *buf, int f)
{
	uint32_t off = s->off[f];
	switch (s->width[f]) {
	case 1:
		return buf[off];
	case 2:
		return adac_get_u16(buf, off);
	case 4:
		return adac_get_u32(buf, off);
	default:
		return adac_get_u64(buf, off);
	}
}

/* One field read from the target. */
static int read_field(struct adac_runtime *rt, const struct rts_state *s, uint64_t obj, int f, uint64_t *out,
                      struct adac_error *err)
{
	uint8_t buf[8] = {0};
	if (adac_read(rt->t, obj + s->off[f], buf, s->width[f], err))
		return -1;
	*out = s->width[f] == 8 ? adac_get_u64(buf, 0)
	     : s->width[f] == 4 ? adac_get_u32(buf, 0)
	     : s->width[f] == 2 ? adac_get_u16(buf, 0)
	                        : buf[0];
	return 0;
}

static int read_ptr(struct adac_runtime *rt, uint64_t addr, uint64_t *out, struct adac_error *err)
{
	return adac_read_ptr(rt->t, addr, out, err);
}

/* The continuation globals: 0 until the runtime has created a continuation subtype. */
static void continuation_globals(struct adac_runtime *rt, struct rts_state *s)
{
	if (s->cont_known)
		return;
	uint64_t where = 0;
	if (adac_desc_global(rt->desc, "ContinuationMethodTable", &where, NULL) == 0 && where)
		read_ptr(rt, where, &s->cont_mt, NULL);
	if (adac_desc_global(rt->desc, "ContinuationSingletonEEClass", &where, NULL) == 0 && where)
		read_ptr(rt, where, &s->cont_eeclass, NULL);
	/* Remember them only once both exist (the runtime sets them lazily). */
	s->cont_known = s->cont_mt && s->cont_eeclass;
}

int adac_mt_continuation_class(struct adac_runtime *rt, uint64_t *mt, struct adac_error *err)
{
	struct rts_state *s;
	if (init_rts(rt, &s, err))
		return -1;
	continuation_globals(rt, s);
	*mt = s->cont_mt;
	return 0;
}

/* ---- MethodTables ---- */

static int mt_fail(struct adac_error *err, uint64_t mt, const char *why)
{
	return adac_fail(err, ADAC_E_CORRUPT, mt, "0x%llx is not a MethodTable (%s)", (unsigned long long)mt, why);
}

static uint32_t mt_size(const struct rts_state *s) { return s->off[R_MT_SIZE]; }

/* EEClass of a raw MethodTable (through its canonical MT when tagged). */
static int mt_class(struct adac_runtime *rt, const struct rts_state *s, uint64_t mt, const uint8_t *buf,
                    uint64_t *eeclass, uint64_t *canon, struct adac_error *err)
{
	uint64_t v = get(s, buf, R_MT_EECLASS);
	if ((v & 1) == 0) {
		*eeclass = v;
		*canon = mt;
		return 0;
	}
	*canon = v & ~(uint64_t)1;
	uint64_t cv = 0;
	if (*canon == 0 || *canon % s->ps)
		return mt_fail(err, mt, "bad canonical MethodTable");
	if (read_field(rt, s, *canon, R_MT_EECLASS, &cv, err))
		return -1;
	if (cv & 1)
		return mt_fail(err, mt, "its canonical MethodTable is not canonical");
	*eeclass = cv;
	return 0;
}

int adac_mt_read(struct adac_runtime *rt, uint64_t method_table, struct adac_mt_info *info, struct adac_error *err)
{
	struct rts_state *s;
	if (init_rts(rt, &s, err))
		return -1;
	struct mt_slot *slot = &s->mts[(method_table >> 3) % MT_CACHE];
	if (slot->key == method_table && method_table) {
		*info = slot->info;
		return 0;
	}
	memset(info, 0, sizeof *info);
	info->method_table = method_table;
	uint8_t buf[ADAC_MAX_TYPE_SIZE];
	uint64_t mt = method_table;
	if (mt == 0 || mt % s->ps)
		return mt_fail(err, mt, mt ? "misaligned" : "null");
	if (adac_read(rt->t, mt, buf, mt_size(s), err))
		return -1;
	uint32_t flags = (uint32_t)get(s, buf, R_MT_FLAGS);
	info->flags = flags;
	info->flags2 = (uint32_t)get(s, buf, R_MT_FLAGS2);
	info->base_size = (uint32_t)get(s, buf, R_MT_BASESIZE);
	info->module = get(s, buf, R_MT_MODULE);
	info->parent = get(s, buf, R_MT_PARENT);
	info->aux_data = get(s, buf, R_MT_AUX);
	info->num_virtuals = (uint16_t)get(s, buf, R_MT_NUMVIRT);
	info->typedef_token = 0x02000000u | (info->flags2 >> MTF2_TYPEDEF_RID_SHIFT);
	uint32_t cat = flags & MTF_CATEGORY_MASK;
	bool has_component = (flags & MTF_HAS_COMPONENT_SIZE) != 0;
	info->component_size = has_component ? (flags & 0xffff) : 0;
	info->contains_gc_pointers = (flags & MTF_CONTAINS_GC_POINTERS) != 0;
	info->is_array = (flags & MTF_CATEGORY_ARRAY_MASK) == MTF_CATEGORY_ARRAY;
	info->is_string = has_component && !info->is_array && info->component_size == 2;
	info->is_interface = cat == MTF_CATEGORY_INTERFACE;
	info->is_value_type = (flags & MTF_CATEGORY_VALUETYPE_MASK) == MTF_CATEGORY_VALUETYPE;
	uint32_t generics = has_component ? 0 : (flags & MTF_GENERICS_MASK);
	info->is_generic_definition = generics == MTF_GENERICS_TYPICALINST;
	info->is_shared_instantiation = generics == MTF_GENERICS_SHAREDINST;

	/* Validation: MT -> EEClass -> MT (cDAC TypeValidation), or a continuation layout subtype. */
	uint64_t eeclass = 0, canon = 0, back = 0;
	if (mt_class(rt, s, mt, buf, &eeclass, &canon, err))
		return -1;
	if (eeclass == 0 || eeclass % s->ps)
		return mt_fail(err, mt, "bad EEClass pointer");
	if (read_field(rt, s, eeclass, R_EEC_MT, &back, err)) {
		adac_error_wrap(err, "MethodTable 0x%llx: EEClass: ", (unsigned long long)mt);
		return -1;
	}
	info->eeclass = eeclass;
	info->canonical_mt = canon;
	bool valid = back == mt;
	if (!valid && back && back % s->ps == 0 && (generics || info->is_array || canon != mt)) {
		uint64_t ee2 = 0, canon2 = 0;
		uint8_t b2[ADAC_MAX_TYPE_SIZE];
		if (adac_read(rt->t, back, b2, mt_size(s), NULL) == 0 && mt_class(rt, s, back, b2, &ee2, &canon2, NULL) == 0)
			valid = ee2 == eeclass;
	}
	if (!valid) {
		continuation_globals(rt, s);
		if (s->cont_eeclass && eeclass == s->cont_eeclass && info->parent == s->cont_mt) {
			info->is_continuation_without_metadata = true;
			valid = true;
		}
	}
	if (!valid)
		return mt_fail(err, mt, "its EEClass does not point back to it");
	if (!info->is_interface && !info->is_string && (info->base_size == 0 || info->base_size % s->ps))
		return mt_fail(err, mt, "bad BaseSize");

	/* Signature element type. */
	switch (cat) {
	case MTF_CATEGORY_ARRAY:
		info->signature_elem = ADAC_ELEM_ARRAY;
		break;
	case MTF_CATEGORY_ARRAY | MTF_CATEGORY_IFARRAY_SZARRAY:
		info->signature_elem = ADAC_ELEM_SZARRAY;
		break;
	case MTF_CATEGORY_VALUETYPE:
	case MTF_CATEGORY_NULLABLE:
	case MTF_CATEGORY_PRIMITIVE:
		info->signature_elem = ADAC_ELEM_VALUETYPE;
		break;
	case MTF_CATEGORY_TRUEPRIMITIVE: {
		uint64_t e = ADAC_ELEM_VALUETYPE;
		if (s->has[R_EEC_ELEM] && read_field(rt, s, eeclass, R_EEC_ELEM, &e, err))
			return -1;
		info->signature_elem = (uint8_t)e;
		break;
	}
	default:
		info->signature_elem = ADAC_ELEM_CLASS;
		break;
	}

	uint64_t perinst = get(s, buf, R_MT_PERINST);
	if (info->is_array) {
		info->is_szarray = cat == (MTF_CATEGORY_ARRAY | MTF_CATEGORY_IFARRAY_SZARRAY);
		info->element_type = perinst;
		if (info->is_szarray)
			info->rank = 1;
		else if (info->base_size >= s->array_base_size)
			info->rank = (uint32_t)((info->base_size - s->array_base_size) / 8);
		if (info->rank == 0)
			return mt_fail(err, mt, "array of rank 0");
	} else if (generics && perinst) {
		uint8_t gdi[8] = {0};
		if (adac_read(rt->t, perinst - s->ps, gdi, s->ps, err)) {
			adac_error_wrap(err, "MethodTable 0x%llx: GenericsDictInfo: ", (unsigned long long)mt);
			return -1;
		}
		uint32_t ndicts = adac_get_u16(gdi, s->off[R_GDI_NUMDICTS]);
		uint32_t nargs = adac_get_u16(gdi, s->off[R_GDI_NUMTYARGS]);
		if (ndicts == 0 || nargs == 0)
			return mt_fail(err, mt, "generic type without dictionaries");
		if (nargs > ADAC_MAX_GENERIC_ARGS || ndicts > ADAC_MAX_GENERIC_ARGS)
			return adac_fail(err, ADAC_E_LIMIT, mt, "MethodTable 0x%llx has %u dictionaries, %u type arguments (limit %u)",
			                 (unsigned long long)mt, ndicts, nargs, ADAC_MAX_GENERIC_ARGS);
		/* The last dictionary is the type's own; the earlier ones belong to its generic parents. */
		uint64_t dict = 0;
		if (read_ptr(rt, perinst + (uint64_t)(ndicts - 1) * s->ps, &dict, err)) {
			adac_error_wrap(err, "MethodTable 0x%llx: dictionary: ", (unsigned long long)mt);
			return -1;
		}
		if (dict == 0)
			return mt_fail(err, mt, "null instantiation dictionary");
		info->num_generic_args = nargs;
		info->instantiation = dict;
	}
	slot->key = method_table;
	slot->info = *info;
	return 0;
}

int adac_array_elements(struct adac_runtime *rt, uint64_t arr, uint64_t *first, uint32_t *count,
                        uint32_t *element_size, struct adac_error *err)
{
	uint64_t mt;
	struct adac_mt_info mi;
	if (adac_object_mt(rt, arr, &mt, err) || adac_mt_read(rt, mt, &mi, err))
		return -1;
	if (!mi.is_array || mi.rank > 1)
		return adac_fail(err, ADAC_E_BAD_ARG, arr, "0x%llx is not a one-dimensional array", (unsigned long long)arr);
	if (adac_object_array_length(rt, arr, count, err))
		return -1;
	/* The elements start where the fixed part (header, MethodTable, length) ends. */
	*first = arr + mi.base_size - adac_target_ptr_size(rt->t);
	*element_size = mi.component_size;
	return 0;
}

int adac_mt_derives_from(struct adac_runtime *rt, uint64_t mt, uint64_t base, bool *yes, struct adac_error *err)
{
	*yes = false;
	uint64_t cur = mt;
	for (unsigned walked = 0; cur && base; walked++) {
		if (cur == base) {
			*yes = true;
			return 0;
		}
		struct adac_mt_info info;
		if (adac_mt_read(rt, cur, &info, err))
			return -1;
		cur = info.parent;
		if (cur && walked == ADAC_MAX_PARENT_DEPTH)
			return adac_fail(err, ADAC_E_LIMIT, mt,
			                 "MethodTable 0x%llx: 0x%llx is neither it nor one of its first %u parent types, and it has "
			                 "more (limit %u)",
			                 (unsigned long long)mt, (unsigned long long)base, ADAC_MAX_PARENT_DEPTH, ADAC_MAX_PARENT_DEPTH);
	}
	return 0;
}

/* ---- TypeHandles ---- */

int adac_th_read(struct adac_runtime *rt, uint64_t type_handle, struct adac_th_info *info, struct adac_error *err)
{
	struct rts_state *s;
	if (init_rts(rt, &s, err))
		return -1;
	memset(info, 0, sizeof *info);
	info->type_handle = type_handle;
	uint64_t low = type_handle & (s->ps - 1);
	if (type_handle == 0 || (low != 0 && low != 2))
		return adac_fail(err, ADAC_E_CORRUPT, type_handle, "0x%llx is not a TypeHandle",
		                 (unsigned long long)type_handle);
	if (low == 0) {
		info->kind = ADAC_TH_METHODTABLE;
		info->method_table = type_handle;
		return 0;
	}
	uint64_t td = type_handle & ~(uint64_t)3, v;
	if (read_field(rt, s, td, R_TD_FLAGS, &v, err))
		goto fail;
	info->elem = (uint8_t)(v & 0xff);
	switch (info->elem) {
	case ADAC_ELEM_BYREF:
	case ADAC_ELEM_PTR:
	case ADAC_ELEM_VALUETYPE:
		info->kind = ADAC_TH_PARAM;
		if (read_field(rt, s, td, R_PTD_ARG, &info->type_arg, err))
			goto fail;
		return 0;
	case ADAC_ELEM_VAR:
	case ADAC_ELEM_MVAR:
		info->kind = ADAC_TH_TYPEVAR;
		if (read_field(rt, s, td, R_TVD_MODULE, &info->module, err) ||
		    read_field(rt, s, td, R_TVD_TOKEN, &v, err))
			goto fail;
		info->token = (uint32_t)v;
		if (s->has[R_TVD_INDEX]) {
			if (read_field(rt, s, td, R_TVD_INDEX, &v, err))
				goto fail;
			info->index = (uint32_t)v;
		} else {
			/* .NET 10 describes no Index: the GenericParam row of the token has its number. */
			struct adac_ecma_genericparam gp;
			const struct adac_ecma *md = adac_ecma_for_module(rt, info->module, err);
			if (!md || adac_ecma_genericparam(md, ADAC_ECMA_TOKEN_RID(info->token), &gp, err))
				goto fail;
			info->index = gp.number;
		}
		return 0;
	case ADAC_ELEM_FNPTR:
		info->kind = ADAC_TH_FNPTR;
		if (read_field(rt, s, td, R_FPT_NUMARGS, &v, err))
			goto fail;
		info->num_args = (uint32_t)v;
		if (read_field(rt, s, td, R_FPT_CALLCONV, &v, err))
			goto fail;
		info->callconv = (uint8_t)v;
		/* RetAndArgTypes is the inline array TypeHandle m_RetAndArgTypes[NumArgs + 1]. */
		info->ret_and_args = td + s->off[R_FPT_RETARGS];
		if (info->num_args >= ADAC_MAX_GENERIC_ARGS)
			return adac_fail(err, ADAC_E_LIMIT, type_handle, "function pointer type 0x%llx has %u parameters (limit %u)",
			                 (unsigned long long)type_handle, info->num_args, ADAC_MAX_GENERIC_ARGS);
		return 0;
	default:
		return adac_fail(err, ADAC_E_CORRUPT, type_handle, "TypeDesc 0x%llx has element type 0x%02x",
		                 (unsigned long long)td, info->elem);
	}
fail:
	adac_error_wrap(err, "TypeDesc 0x%llx: ", (unsigned long long)td);
	return -1;
}

int adac_th_array(struct adac_runtime *rt, uint64_t addr, uint32_t count, uint64_t *out, struct adac_error *err)
{
	struct rts_state *s;
	if (init_rts(rt, &s, err))
		return -1;
	if (count > ADAC_MAX_GENERIC_ARGS)
		return adac_fail(err, ADAC_E_LIMIT, addr, "%u type arguments at 0x%llx (limit %u)", count,
		                 (unsigned long long)addr, ADAC_MAX_GENERIC_ARGS);
	uint8_t buf[ADAC_MAX_GENERIC_ARGS * 8];
	if (count == 0)
		return 0;
	if (adac_read(rt->t, addr, buf, (size_t)count * s->ps, err))
		return -1;
	for (uint32_t i = 0; i < count; i++)
		out[i] = s->ps == 8 ? adac_get_u64(buf, (size_t)i * 8) : adac_get_u32(buf, (size_t)i * 4);
	return 0;
}

/* ---- MethodDescs ---- */

static uint32_t classification_size(const struct rts_state *s, unsigned c, bool *known)
{
	static const int field[8] = {R_MD_SIZE, R_FCALL_SIZE, R_PINVOKE_SIZE, R_EEIMPL_SIZE,
	                             R_ARRAY_SIZE, R_IMD_SIZE, R_COM_SIZE, R_DYN_SIZE};
	*known = s->has[field[c & 7]] != 0;
	return s->off[field[c & 7]];
}

static int md_fail(struct adac_error *err, uint64_t md, const char *why)
{
	return adac_fail(err, ADAC_E_CORRUPT, md, "0x%llx is not a MethodDesc (%s)", (unsigned long long)md, why);
}

/* Reads the MethodDesc and its chunk without validating the MethodTable. */
static int md_read_raw(struct adac_runtime *rt, struct rts_state *s, uint64_t md, struct adac_method_info *info,
                       struct adac_error *err)
{
	memset(info, 0, sizeof *info);
	info->method_desc = md;
	info->array_function = -1;
	if (md == 0 || md % s->md_align)
		return md_fail(err, md, md ? "misaligned" : "null");
	uint8_t buf[ADAC_MAX_TYPE_SIZE];
	if (adac_read(rt->t, md, buf, s->off[R_MD_SIZE], err))
		return -1;
	unsigned chunk_index = (unsigned)get(s, buf, R_MD_CHUNKINDEX);
	info->slot = (uint16_t)get(s, buf, R_MD_SLOT);
	info->flags = (uint16_t)get(s, buf, R_MD_FLAGS);
	info->flags3 = (uint16_t)get(s, buf, R_MD_FLAGS3);
	uint64_t chunk_hdr = s->off[R_CHUNK_SIZE];
	uint64_t back = chunk_hdr + (uint64_t)chunk_index * s->md_align;
	if (back > md)
		return md_fail(err, md, "chunk before address 0");
	info->chunk = md - back;
	uint8_t cb[ADAC_MAX_TYPE_SIZE];
	if (adac_read(rt->t, info->chunk, cb, (size_t)chunk_hdr, err)) {
		adac_error_wrap(err, "MethodDesc 0x%llx: chunk: ", (unsigned long long)md);
		return -1;
	}
	info->method_table = get(s, cb, R_CHUNK_MT);
	info->chunk_flags = (uint16_t)get(s, cb, R_CHUNK_FLAGS);
	uint64_t chunk_bytes = ((uint64_t)get(s, cb, R_CHUNK_SIZEF) + 1) * s->md_align;
	if (info->method_table == 0 || info->method_table % s->ps)
		return md_fail(err, md, "its chunk has no MethodTable");
	if ((uint64_t)chunk_index * s->md_align >= chunk_bytes)
		return md_fail(err, md, "ChunkIndex past the end of its chunk");

	info->classification = (enum adac_md_classification)(info->flags & 7);
	info->is_static = (info->flags & ADAC_MDF_STATIC) != 0;
	info->is_unboxing_stub = (info->flags3 & ADAC_MDF3_IS_UNBOXING_STUB) != 0;
	unsigned rem = s->token_rem_bits;
	uint32_t rid = ((uint32_t)(info->chunk_flags & (0xffffffu >> rem)) << rem) |
	               (info->flags3 & (0xffffffu >> (24 - rem)));
	rid &= 0xffffffu;

	/* Optional slots: [NonVtableSlot][MethodImpl][NativeCodeSlot][AsyncMethodData]. */
	bool known;
	uint32_t off = classification_size(s, info->classification, &known);
	if (!known)
		return adac_fail(err, ADAC_E_LAYOUT, md, "MethodDesc 0x%llx has classification %u, which the runtime does not describe",
		                 (unsigned long long)md, info->classification);
	uint32_t base = off;
	if (info->flags & ADAC_MDF_HAS_NONVTABLE_SLOT)
		off += s->off[R_NONVTABLE_SIZE];
	if (info->flags & ADAC_MDF_HAS_METHOD_IMPL)
		off += s->off[R_METHODIMPL_SIZE];
	if (info->flags & ADAC_MDF_HAS_NATIVE_CODE_SLOT) {
		info->native_code_slot = md + off;
		off += s->off[R_NATIVECODE_SIZE];
	}
	uint32_t async_off = off;
	/* .NET 10 sets the flag but describes no AsyncMethodData: the method is still named and
	 * validated; only its async flags and its exact size stay unknown. */
	bool async_described = s->has[R_ASYNC_SIZE] && s->has[R_ASYNC_FLAGS];
	if ((info->flags & ADAC_MDF_HAS_ASYNC_METHOD_DATA) && async_described)
		off += s->off[R_ASYNC_SIZE];
	info->size_known = !(info->flags & ADAC_MDF_HAS_ASYNC_METHOD_DATA) || async_described;
	info->size = off;
	if (chunk_index * s->md_align + (uint64_t)off > chunk_bytes)
		return md_fail(err, md, "it runs past the end of its chunk");
	if (off > sizeof buf)
		return adac_fail(err, ADAC_E_LIMIT, md, "MethodDesc 0x%llx is %u bytes (limit %zu)", (unsigned long long)md, off,
		                 sizeof buf);
	if (off > s->off[R_MD_SIZE] && adac_read(rt->t, md, buf, off, err))
		return -1;

	if ((info->flags & ADAC_MDF_HAS_ASYNC_METHOD_DATA) && async_described) {
		info->has_async_data = true;
		info->async_flags = adac_get_u32(buf, async_off + s->off[R_ASYNC_FLAGS]);
		if (s->has[R_ASYNC_SIG]) {
			uint32_t so = async_off + s->off[R_ASYNC_SIG];
			info->async_signature = s->ps == 8 ? adac_get_u64(buf, so) : adac_get_u32(buf, so);
			/* Signature is {PCCOR_SIGNATURE, DWORD length} (cDAC Data.Signature). */
			if (so + s->ps + 4 <= async_off + s->off[R_ASYNC_SIZE])
				info->async_signature_len = adac_get_u32(buf, so + s->ps);
		}
		info->is_async_variant = (info->async_flags & ADAC_ASYNC_IS_ASYNC_VARIANT) != 0;
		info->is_async_thunk = (info->async_flags & (ADAC_ASYNC_THUNK | ADAC_ASYNC_RETURN_DROPPING_THUNK)) != 0;
	}

	switch (info->classification) {
	case ADAC_MD_INSTANTIATED: {
		info->imd_kind = (enum adac_imd_kind)(get(s, buf, R_IMD_FLAGS2) & 7);
		uint64_t perinst = get(s, buf, R_IMD_PERINST);
		uint32_t n = (uint32_t)get(s, buf, R_IMD_NGEN);
		if (perinst && n) {
			if (n > ADAC_MAX_GENERIC_ARGS)
				return adac_fail(err, ADAC_E_LIMIT, md, "MethodDesc 0x%llx has %u generic arguments (limit %u)",
				                 (unsigned long long)md, n, ADAC_MAX_GENERIC_ARGS);
			info->num_generic_args = n;
			info->generic_args_addr = perinst;
		}
		break;
	}
	case ADAC_MD_DYNAMIC:
	case ADAC_MD_EEIMPL:
	case ADAC_MD_ARRAY:
		if (base >= s->off[R_SSIG_EXT] + 4) {
			info->stored_sig = get(s, buf, R_SSIG_SIG);
			info->stored_sig_len = (uint32_t)get(s, buf, R_SSIG_CSIG);
		}
		if (info->classification == ADAC_MD_DYNAMIC) {
			uint32_t ext = (uint32_t)get(s, buf, R_SSIG_EXT);
			info->is_lcg = (ext & ADAC_DYN_IS_LCG) != 0;
			info->is_il_stub = (ext & ADAC_DYN_IS_IL_STUB) != 0;
			info->il_stub_type = ext & ADAC_DYN_IL_STUB_TYPE_MASK;
			info->dynamic_name = get(s, buf, R_DYN_NAME);
		}
		break;
	default:
		break;
	}
	if (info->classification != ADAC_MD_DYNAMIC && info->classification != ADAC_MD_ARRAY && rid != 0)
		info->token = 0x06000000u | rid;
	info->diagnostics_hidden = info->is_async_thunk || info->is_il_stub;
	return 0;
}

int adac_md_read(struct adac_runtime *rt, uint64_t method_desc, struct adac_method_info *info, struct adac_error *err)
{
	struct rts_state *s;
	if (init_rts(rt, &s, err))
		return -1;
	struct md_slot *slot = &s->mds[(method_desc >> 3) % MD_CACHE];
	if (slot->key == method_desc && method_desc) {
		*info = slot->info;
		return 0;
	}
	if (md_read_raw(rt, s, method_desc, info, err))
		return -1;
	struct adac_mt_info mt;
	if (adac_mt_read(rt, info->method_table, &mt, err)) {
		adac_error_wrap(err, "MethodDesc 0x%llx: ", (unsigned long long)method_desc);
		return -1;
	}
	info->module = mt.module;
	if (info->classification == ADAC_MD_ARRAY)
		info->array_function = info->slot >= mt.num_virtuals ? (int32_t)(info->slot - mt.num_virtuals) : -1;
	slot->key = method_desc;
	slot->info = *info;
	return 0;
}

int adac_md_validate(struct adac_runtime *rt, uint64_t method_desc, struct adac_error *err)
{
	struct adac_method_info info;
	return adac_md_read(rt, method_desc, &info, err);
}

int adac_md_native_code(struct adac_runtime *rt, uint64_t method_desc, uint64_t *code, struct adac_error *err)
{
	*code = 0;
	struct rts_state *s;
	struct adac_method_info info;
	if (init_rts(rt, &s, err) || adac_md_read(rt, method_desc, &info, err))
		return -1;
	if (info.native_code_slot)
		return read_ptr(rt, info.native_code_slot, code, err);
	if (!(info.flags3 & ADAC_MDF3_HAS_STABLE_ENTRY_POINT) || (info.flags3 & ADAC_MDF3_HAS_PRECODE))
		return 0;
	bool known;
	uint32_t base = classification_size(s, info.classification, &known);
	if (info.flags & ADAC_MDF_HAS_NONVTABLE_SLOT)
		return read_ptr(rt, method_desc + base, code, err);
	struct adac_mt_info mt;
	if (adac_mt_read(rt, info.method_table, &mt, err))
		return -1;
	uint64_t slot_addr = 0;
	if (info.slot < mt.num_virtuals) {
		/* Virtual slots: chunks of 8 through the indirection array after the MethodTable. */
		uint64_t chunk = 0;
		if (read_ptr(rt, info.method_table + mt_size(s) + (uint64_t)(info.slot >> 3) * s->ps, &chunk, err))
			return -1;
		slot_addr = chunk + (uint64_t)(info.slot & 7) * s->ps;
	} else {
		/* Non-virtual slots grow backwards from AuxiliaryData + OffsetToNonVirtualSlots. */
		uint64_t rel = 0;
		if (!s->has[R_AUX_NONVIRT] || read_field(rt, s, mt.aux_data, R_AUX_NONVIRT, &rel, err))
			return s->has[R_AUX_NONVIRT] ? -1 : 0;
		int64_t offset = (int16_t)(uint16_t)rel;
		slot_addr = mt.aux_data + (uint64_t)offset - (uint64_t)(1 + info.slot - mt.num_virtuals) * s->ps;
	}
	return read_ptr(rt, slot_addr, code, err);
}

int adac_md_chunk_methods(struct adac_runtime *rt, uint64_t chunk, uint64_t *mds, uint32_t max, uint32_t *n,
                          struct adac_error *err)
{
	*n = 0;
	struct rts_state *s;
	if (init_rts(rt, &s, err))
		return -1;
	uint8_t cb[ADAC_MAX_TYPE_SIZE];
	if (adac_read(rt->t, chunk, cb, s->off[R_CHUNK_SIZE], err))
		return -1;
	uint32_t count = (uint32_t)get(s, cb, R_CHUNK_COUNT) + 1;
	uint64_t end = chunk + s->off[R_CHUNK_SIZE] + ((uint64_t)get(s, cb, R_CHUNK_SIZEF) + 1) * s->md_align;
	uint64_t md = chunk + s->off[R_CHUNK_SIZE];
	for (uint32_t i = 0; i < count && *n < max; i++) {
		struct adac_method_info info;
		if (md >= end)
			return adac_fail(err, ADAC_E_CORRUPT, chunk, "MethodDescChunk 0x%llx: MethodDesc %u lies past its end",
			                 (unsigned long long)chunk, i);
		if (md_read_raw(rt, s, md, &info, err))
			return -1;
		if (info.chunk != chunk)
			return adac_fail(err, ADAC_E_CORRUPT, md, "MethodDescChunk 0x%llx: MethodDesc 0x%llx has ChunkIndex for another chunk",
			                 (unsigned long long)chunk, (unsigned long long)md);
		mds[(*n)++] = md;
		if (!info.size_known && i + 1 < count)
			return adac_fail(err, ADAC_E_LAYOUT, md,
			                 "MethodDesc 0x%llx has AsyncMethodData, whose size the runtime does not describe: the rest of "
			                 "its chunk cannot be listed", (unsigned long long)md);
		md += info.size;
	}
	return 0;
}

int adac_mt_internal_elem(struct adac_runtime *rt, uint64_t method_table, uint8_t *elem, struct adac_error *err)
{
	struct rts_state *s;
	struct adac_mt_info mi;
	if (init_rts(rt, &s, err) || adac_mt_read(rt, method_table, &mi, err))
		return -1;
	if (!s->has[R_EEC_ELEM])
		return adac_fail(err, ADAC_E_LAYOUT, method_table, "the runtime does not describe EEClass.InternalCorElementType");
	uint64_t e;
	if (read_field(rt, s, mi.eeclass, R_EEC_ELEM, &e, err))
		return -1;
	*elem = (uint8_t)e;
	return 0;
}

int adac_mt_instance_field_bytes(struct adac_runtime *rt, uint64_t method_table, uint32_t *bytes,
                                 struct adac_error *err)
{
	struct rts_state *s;
	struct adac_mt_info mi;
	if (init_rts(rt, &s, err) || adac_mt_read(rt, method_table, &mi, err))
		return -1;
	if (!s->has[R_EEC_PADDING])
		return adac_fail(err, ADAC_E_LAYOUT, method_table, "the runtime does not describe EEClass.BaseSizePadding");
	uint64_t pad;
	if (read_field(rt, s, mi.eeclass, R_EEC_PADDING, &pad, err))
		return -1;
	if (pad > mi.base_size)
		return adac_fail(err, ADAC_E_CORRUPT, method_table,
		                 "MethodTable 0x%llx: BaseSize %u is smaller than its EEClass's BaseSizePadding %llu",
		                 (unsigned long long)method_table, mi.base_size, (unsigned long long)pad);
	*bytes = mi.base_size - (uint32_t)pad;
	return 0;
}

/* Constructed types of a module: Module.AvailableTypeParams -> EETypeHashTable, a DacEnumerableHash
 * (dacenumerablehash.h; the cDAC's DacEnumerableHash): Buckets[0] is the bucket count, buckets
 * start at index 3, chains of VolatileEntry {Value, NextEntry, ...} end at a pointer with bit 0 set. */
#define TYPE_HASH_SPECIAL_SLOTS 3u

int adac_module_find_instantiation(struct adac_runtime *rt, uint64_t module, uint64_t def_mt, const uint64_t *args,
                                   uint32_t nargs, uint64_t *mt, struct adac_error *err)
{
	*mt = 0;
	uint32_t f_table, f_buckets, f_value, f_next;
	if (adac_desc_field(rt->desc, "Module", "AvailableTypeParams", &f_table, err) ||
	    adac_desc_field(rt->desc, "EETypeHashTable", "Buckets", &f_buckets, err) ||
	    adac_desc_field(rt->desc, "EETypeHashTable", "VolatileEntryValue", &f_value, err) ||
	    adac_desc_field(rt->desc, "EETypeHashTable", "VolatileEntryNextEntry", &f_next, err))
		return -1;
	struct adac_mt_info def;
	if (adac_mt_read(rt, def_mt, &def, err))
		return -1;
	uint64_t have[64];
	if (nargs == 0 || nargs > sizeof have / sizeof have[0])
		return adac_fail(err, nargs ? ADAC_E_LIMIT : ADAC_E_BAD_ARG, def_mt, "%u type arguments (1 to %zu)", nargs,
		                 sizeof have / sizeof have[0]);
	unsigned ps = adac_target_ptr_size(rt->t);
	uint64_t table, buckets, length;
	if (read_ptr(rt, module + f_table, &table, err))
		return -1;
	if (!table)
		return 0;
	if (read_ptr(rt, table + f_buckets, &buckets, err) || !buckets || read_ptr(rt, buckets, &length, err))
		return -1;
	if (length > ADAC_MAX_TYPE_HASH_BUCKETS)
		return adac_fail(err, ADAC_E_LIMIT, table, "EETypeHashTable 0x%llx has %llu buckets (limit %u)",
		                 (unsigned long long)table, (unsigned long long)length, ADAC_MAX_TYPE_HASH_BUCKETS);
	uint64_t want_mod = def.module;
	uint32_t want_tok = def.typedef_token;
	uint64_t visited = 0;
	for (uint64_t b = 0; b < length; b++) {
		uint64_t e;
		if (read_ptr(rt, buckets + (b + TYPE_HASH_SPECIAL_SLOTS) * ps, &e, err))
			return -1;
		while (e && !(e & 1)) {
			if (++visited > ADAC_MAX_TYPE_HASH_ENTRIES)
				return adac_fail(err, ADAC_E_LIMIT, table, "EETypeHashTable 0x%llx: more than %u entries (or a cycle)",
				                 (unsigned long long)table, ADAC_MAX_TYPE_HASH_ENTRIES);
			uint64_t th, next;
			if (read_ptr(rt, e + f_value, &th, err) || read_ptr(rt, e + f_next, &next, err))
				return -1;
			struct adac_mt_info ci;
			if (th && !(th & 2) && adac_mt_read(rt, th, &ci, NULL) == 0 && !ci.is_array && ci.module == want_mod &&
			    ci.typedef_token == want_tok && ci.num_generic_args == nargs && ci.instantiation &&
			    adac_th_array(rt, ci.instantiation, nargs, have, NULL) == 0 &&
			    memcmp(have, args, nargs * sizeof *args) == 0) {
				*mt = th;
				return 0;
			}
			e = next;
		}
	}
	return 0;
}
