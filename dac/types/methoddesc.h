/* methoddesc.h - RuntimeTypeSystem contract, the parts about methods and method tables. */
#ifndef ADAC_METHODDESC_H
#define ADAC_METHODDESC_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/limits.h"

struct adac_runtime;

enum adac_md_classification {
	ADAC_MD_IL = 0, ADAC_MD_FCALL = 1, ADAC_MD_PINVOKE = 2, ADAC_MD_EEIMPL = 3, ADAC_MD_ARRAY = 4,
	ADAC_MD_INSTANTIATED = 5, ADAC_MD_COMINTEROP = 6, ADAC_MD_DYNAMIC = 7,
};

/* MethodDesc.Flags bits. */
#define ADAC_MDF_HAS_NONVTABLE_SLOT 0x0008u
#define ADAC_MDF_HAS_METHOD_IMPL 0x0010u
#define ADAC_MDF_HAS_NATIVE_CODE_SLOT 0x0020u
#define ADAC_MDF_HAS_ASYNC_METHOD_DATA 0x0040u
#define ADAC_MDF_STATIC 0x0080u
/* MethodDesc.Flags3AndTokenRemainder bits. */
#define ADAC_MDF3_HAS_STABLE_ENTRY_POINT 0x1000u
#define ADAC_MDF3_HAS_PRECODE 0x2000u
#define ADAC_MDF3_IS_UNBOXING_STUB 0x4000u
#define ADAC_MDF3_ELIGIBLE_FOR_TIERING 0x8000u

/* AsyncMethodData.Flags as .NET 11.0.0 defines them (enum class AsyncMethodFlags in method.hpp).
 * The notes disagree (cDAC doc table 1/2/4/8 vs impl 1/4/0x10/0x20). Established on the real 11.0.0
 * runtime: a runtime-async method's async variant (the MethodDesc that owns the user's code) has
 * 0x05 = AsyncCall|IsAsyncVariant, its Task-returning thunk has 0x12 = ReturnsTaskOrValueTask|Thunk
 * (the names are those of the runtime's design notes for dynamic runtime-async methods); the cDAC
 * implementation uses AsyncCall 0x1, IsAsyncVariant 0x4, Thunk 0x10, ReturnDroppingThunk 0x20. */
#define ADAC_ASYNC_CALL 0x01u                         /* uses the async calling convention */
#define ADAC_ASYNC_RETURNS_TASK_OR_VALUETASK 0x02u    /* the Task/ValueTask-returning form */
#define ADAC_ASYNC_IS_ASYNC_VARIANT 0x04u             /* the async variant of a Task-returning method */
#define ADAC_ASYNC_IS_ASYNC_VARIANT_FOR_VALUETASK 0x08u /* ... of a ValueTask-returning method */
#define ADAC_ASYNC_THUNK 0x10u                        /* synthetic body forwarding to the other variant */
#define ADAC_ASYNC_RETURN_DROPPING_THUNK 0x20u        /* void-returning thunk (covariant returns) */

/* StoredSigMethodDesc.ExtendedFlags (dynamic methods). */
#define ADAC_DYN_IS_LCG 0x4000u
#define ADAC_DYN_IS_IL_STUB 0x8000u
#define ADAC_DYN_IL_STUB_TYPE_MASK 0x07ffu

/* InstantiatedMethodDesc.Flags2 & 7. */
enum adac_imd_kind {
	ADAC_IMD_NONE = 0,
	ADAC_IMD_GENERIC_METHOD_DEFINITION = 1,
	ADAC_IMD_UNSHARED = 2,
	ADAC_IMD_SHARED = 3,
	ADAC_IMD_WRAPPER_STUB = 4,
};

struct adac_method_info {
	uint64_t method_desc;
	uint64_t method_table;     /* owning type's MethodTable (from the chunk) */
	uint64_t module;           /* Module* of the owning type */
	uint32_t token;            /* MethodDef token (0x06xxxxxx); 0 for dynamic methods */
	enum adac_md_classification classification;
	bool is_static;
	bool has_async_data;       /* AsyncMethodData present */
	uint32_t async_flags;      /* AsyncMethodData.Flags when present */
	bool is_async_variant;     /* the runtime-async variant of a Task-returning method */
	bool is_async_thunk;       /* a thunk between the async and Task-returning forms */
	bool diagnostics_hidden;   /* thunks and IL stubs: debuggers skip these frames */
	/* Dynamic methods (IL stubs, LCG). */
	bool is_il_stub;
	bool is_lcg;
	uint32_t il_stub_type;     /* StoredSigMethodDesc.ExtendedFlags & 0x7ff */
	/* Instantiated methods: generic method arguments (TypeHandles). */
	uint32_t num_generic_args;
	uint64_t generic_args_addr; /* address of the TypeHandle array, 0 if none */

	/* Raw layout facts. */
	uint64_t chunk;            /* MethodDescChunk */
	uint16_t slot;
	uint16_t flags;            /* MethodDesc.Flags */
	uint16_t flags3;           /* MethodDesc.Flags3AndTokenRemainder */
	uint16_t chunk_flags;      /* MethodDescChunk.FlagsAndTokenRange */
	uint32_t size;             /* classification size plus the optional slots present */
	bool size_known;           /* false when a slot the runtime does not describe is present */
	uint64_t native_code_slot; /* address of the NativeCodeSlot, 0 when absent */
	uint64_t async_signature;  /* AsyncMethodData.Signature: the async variant's own signature blob */
	uint32_t async_signature_len; /* ... and its length (0 when absent) */
	enum adac_imd_kind imd_kind; /* Instantiated: InstantiatedMethodDesc.Flags2 & 7 */
	bool is_unboxing_stub;
	/* Stored signature (Dynamic, Array and EEImpl methods): address and length, 0 when none. */
	uint64_t stored_sig;
	uint32_t stored_sig_len;
	uint64_t dynamic_name;     /* DynamicMethodDesc.MethodName (UTF-8), 0 when none */
	int32_t array_function;    /* Array methods: 0 Get, 1 Set, 2 Address, 3+ .ctor; -1 otherwise */
};

int adac_md_read(struct adac_runtime *rt, uint64_t method_desc, struct adac_method_info *info, struct adac_error *err);

/* Validates that md looks like a MethodDesc (its chunk's MethodTable points back to a valid MT).
 * Cheap; used before trusting an address from a corrupt chain. */
int adac_md_validate(struct adac_runtime *rt, uint64_t method_desc, struct adac_error *err);

/* The native code of a MethodDesc, as the runtime's GetNativeCode: the NativeCodeSlot, else the
 * stable entry point when it is not a precode. *code is 0 when the method has none (not jitted, or
 * reachable only through a precode). This is the *current* code: never use it to identify the
 * code version behind an IP. */
int adac_md_native_code(struct adac_runtime *rt, uint64_t method_desc, uint64_t *code, struct adac_error *err);

/* The MethodDescs of a chunk, in order (at most max; *n is how many were stored). */
int adac_md_chunk_methods(struct adac_runtime *rt, uint64_t chunk, uint64_t *mds, uint32_t max, uint32_t *n,
                          struct adac_error *err);

struct adac_mt_info {
	uint64_t method_table;
	uint64_t parent;           /* ParentMethodTable, 0 for System.Object / interfaces */
	uint64_t module;
	uint64_t eeclass;          /* resolved through a canonical MT when tagged */
	uint64_t canonical_mt;     /* itself unless it is a non-canonical generic instantiation */
	uint32_t base_size;
	uint32_t component_size;   /* 0 unless HasComponentSize (arrays, strings) */
	uint32_t typedef_token;    /* 0x02xxxxxx, or 0x02000000 when none */
	uint32_t flags;            /* MTFlags */
	uint32_t flags2;           /* MTFlags2 */
	bool is_array;
	bool is_string;
	bool is_value_type;
	bool is_interface;
	bool contains_gc_pointers; /* its instances hold references: a GCDesc precedes the MethodTable */
	uint32_t num_generic_args; /* instantiation arity, 0 if not generic */
	uint64_t instantiation;    /* address of the TypeHandle array of the instantiation, 0 if none */

	bool is_generic_definition;  /* the type at its formal parameters (List<T>) */
	bool is_shared_instantiation; /* canonical shared code (List<__Canon>) */
	bool is_continuation_without_metadata; /* runtime-made Continuation layout subtype */
	uint32_t rank;             /* arrays: 1 for T[], the rank for T[,]...; 0 otherwise */
	bool is_szarray;
	uint64_t element_type;     /* arrays: TypeHandle of the element type */
	uint8_t signature_elem;    /* CorElementType as in a signature (CLASS, VALUETYPE, I4, SZARRAY...) */
	uint64_t aux_data;         /* MethodTableAuxiliaryData */
	uint16_t num_virtuals;
};

int adac_mt_read(struct adac_runtime *rt, uint64_t method_table, struct adac_mt_info *info, struct adac_error *err);

/* The elements of the one-dimensional array at arr: the address of the first, how many
 * (Array.m_NumComponents) and each one's size. ADAC_E_BAD_ARG when arr is not such an array. */
int adac_array_elements(struct adac_runtime *rt, uint64_t arr, uint64_t *first, uint32_t *count,
                        uint32_t *element_size, struct adac_error *err);

/* The Continuation class as the runtime records it (global ContinuationMethodTable, which also
 * validates its layout subtypes): 0 until the runtime has created the first subtype.
 * async/continuation.h owns the Continuation class and its fallbacks. */
int adac_mt_continuation_class(struct adac_runtime *rt, uint64_t *mt, struct adac_error *err);

/* Is mt `base` or a type derived from it? Walks ParentMethodTable; more than ADAC_MAX_PARENT_DEPTH
 * parent types is ADAC_E_LIMIT. */
int adac_mt_derives_from(struct adac_runtime *rt, uint64_t mt, uint64_t base, bool *yes, struct adac_error *err);

/* EEClass.InternalCorElementType of a type: the underlying primitive of an enum (I4 for an int
 * enum) or of a primitive type, VALUETYPE or CLASS otherwise. */
int adac_mt_internal_elem(struct adac_runtime *rt, uint64_t method_table, uint8_t *elem, struct adac_error *err);

/* Bytes of the type's instance fields (MethodTable::GetNumInstanceFieldBytes: BaseSize minus
 * EEClass.BaseSizePadding): for a value type, the size of its unboxed value. */
int adac_mt_instance_field_bytes(struct adac_runtime *rt, uint64_t method_table, uint32_t *bytes,
                                 struct adac_error *err);

/* The loaded generic instantiation def<args> (def_mt: the generic type's MethodTable; args: exact
 * TypeHandles) among the constructed types of `module` (Module.AvailableTypeParams, an
 * EETypeHashTable). *mt = 0 when that module has not loaded it (the runtime keeps an instantiation
 * in one "loader module" of its type and arguments: try each). */
int adac_module_find_instantiation(struct adac_runtime *rt, uint64_t module, uint64_t def_mt, const uint64_t *args,
                                   uint32_t nargs, uint64_t *mt, struct adac_error *err);

/* TypeHandles: a MethodTable, or (low bits 2) a TypeDesc. */
enum adac_th_kind {
	ADAC_TH_METHODTABLE,
	ADAC_TH_PARAM,     /* ParamTypeDesc: byref, pointer (and the native value type view) */
	ADAC_TH_TYPEVAR,   /* TypeVarTypeDesc: generic variable of a shared/open type (VAR, MVAR) */
	ADAC_TH_FNPTR,     /* FnPtrTypeDesc */
};

struct adac_th_info {
	uint64_t type_handle;
	enum adac_th_kind kind;
	uint64_t method_table;     /* METHODTABLE: the MT */
	uint8_t elem;              /* TypeDescs: TypeAndFlags & 0xff */
	uint64_t type_arg;         /* PARAM: the element TypeHandle */
	uint64_t module;           /* TYPEVAR: module of the GenericParam */
	uint32_t token;            /* TYPEVAR: GenericParam token (0x2Axxxxxx) */
	uint32_t index;            /* TYPEVAR: parameter number */
	uint32_t num_args;         /* FNPTR: parameter count */
	uint8_t callconv;          /* FNPTR: calling convention byte */
	uint64_t ret_and_args;     /* FNPTR: address of num_args + 1 TypeHandles (return first) */
};

int adac_th_read(struct adac_runtime *rt, uint64_t type_handle, struct adac_th_info *info, struct adac_error *err);

/* Reads count TypeHandles (pointers) at addr into out; count <= ADAC_MAX_GENERIC_ARGS. */
int adac_th_array(struct adac_runtime *rt, uint64_t addr, uint32_t count, uint64_t *out, struct adac_error *err);

#endif
