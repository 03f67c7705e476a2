/* methoddesc.h - RuntimeTypeSystem contract, the parts about methods and method tables. */
#ifndef ADAC_METHODDESC_H
#define ADAC_METHODDESC_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

struct adac_runtime;

enum adac_md_classification {
	ADAC_MD_IL = 0, ADAC_MD_FCALL = 1, ADAC_MD_PINVOKE = 2, ADAC_MD_EEIMPL = 3, ADAC_MD_ARRAY = 4,
	ADAC_MD_INSTANTIATED = 5, ADAC_MD_COMINTEROP = 6, ADAC_MD_DYNAMIC = 7,
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
};

int adac_md_read(struct adac_runtime *rt, uint64_t method_desc, struct adac_method_info *info, struct adac_error *err);

/* Validates that md looks like a MethodDesc (its chunk's MethodTable points back to a valid MT).
 * Cheap; used before trusting an address from a corrupt chain. */
int adac_md_validate(struct adac_runtime *rt, uint64_t method_desc, struct adac_error *err);

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
	uint32_t num_generic_args; /* instantiation arity, 0 if not generic */
	uint64_t instantiation;    /* address of the TypeHandle array of the instantiation, 0 if none */
};

int adac_mt_read(struct adac_runtime *rt, uint64_t method_table, struct adac_mt_info *info, struct adac_error *err);

/* The MethodTable of the object at addr (Object.m_pMethTab with ObjectToMethodTableUnmask). */
int adac_object_mt(struct adac_runtime *rt, uint64_t obj, uint64_t *mt, struct adac_error *err);

#endif
