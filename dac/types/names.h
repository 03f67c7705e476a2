/* names.h - display names from metadata, formatted like .NET stack traces and SOS clrstack:
 * `Namespace.Outer+Nested.Method(Int32, System.String)`, generic instantiations as `List<Int32>`.
 *
 * The format, in full (see signature.h for the type rules):
 *   AsyncdacSamples.NestedApp.A(Int32)
 *   AsyncdacSamples.Holder<Int32>.B(Int32, System.Threading.Tasks.Task<Int32>)
 *   AsyncdacSamples.NestedApp.C<System.__Canon>(System.__Canon, System.Threading.Tasks.Task<Int32>)
 *   System.Collections.Generic.Dictionary<System.String, Int32[]>.TryGetValue(System.String, Int32[]&)
 *   Outer+Inner.M<T>(T)                (a generic method definition: its parameter names)
 * - The type is the MethodDesc's MethodTable: an exact instantiation (Holder<Int32>), or the
 *   canonical one for shared code (Holder<System.__Canon>), as the runtime has it.
 * - Method type arguments come from the InstantiatedMethodDesc (System.__Canon for shared code).
 * - Parameter types are the metadata signature's, generic variables resolved through those two
 *   instantiations.
 * - Async variants and their Task-returning thunks share the metadata token, so both show the
 *   user-facing name (callers hide thunks with adac_method_info.diagnostics_hidden).
 * - Dynamic methods (IL stubs, DynamicMethod) show their stored name ("IL_STUB_PInvoke"), with
 *   parameters from their stored signature when it decodes; array methods show the array type and
 *   Get/Set/Address/.ctor.
 * ADAC_NAME_DAC instead gives exactly what Microsoft's DAC (GetMethodDescName) prints, e.g.
 *   AsyncdacSamples.Holder`1[[System.Int32, System.Private.CoreLib]].B(Int32, System.Threading.Tasks.Task`1<Int32>)
 */
#ifndef ADAC_NAMES_H
#define ADAC_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/limits.h"
#include "metadata/signature.h"

struct adac_runtime;

enum {
	ADAC_NAME_PARAMS = 1,       /* append "(Int32, String)" */
	ADAC_NAME_NO_NAMESPACE = 2, /* omit namespaces */
	ADAC_NAME_DAC = 4,          /* Microsoft's DAC format (TypeString FullInst + SigFormat) */
};

/* Method display name; dynamic methods use their stored name. The result lives in the runtime's
 * name cache (valid until the runtime closes). NULL with err on failure. */
const char *adac_method_name(struct adac_runtime *rt, uint64_t method_desc, unsigned flags, struct adac_error *err);

/* The same for shared code running as one instantiation of its type: exact_mt is that type
 * (Holder<System.String> for Holder<System.__Canon>.B), used for the type part and the parameters. */
const char *adac_method_name_in(struct adac_runtime *rt, uint64_t method_desc, uint64_t exact_mt, unsigned flags,
                                struct adac_error *err);
/* Type display name of a MethodTable (or TypeHandle: TypeDescs for arrays/pointers/generic vars). */
const char *adac_type_name(struct adac_runtime *rt, uint64_t type_handle, unsigned flags, struct adac_error *err);

/* File path of the module's assembly (the PE image on disk), or "" when unknown (in-memory). */
const char *adac_module_path(struct adac_runtime *rt, uint64_t module, struct adac_error *err);
/* Simple name of the module ("MyApp.dll"). */
const char *adac_module_file_name(struct adac_runtime *rt, uint64_t module, struct adac_error *err);

/* Type names for a method's signatures (parameters, locals) in the context of one MethodDesc: its
 * module's metadata, its type's and its own instantiation. Pass .names to adac_sig_format_type.
 * Valid while the runtime lives; needs no freeing. */
struct adac_method_names {
	struct adac_sig_names names;
	struct adac_runtime *rt;
	const struct adac_ecma *md;
	uint64_t module;
	uint32_t type_token;      /* TypeDef of the method's type (for generic parameter names) */
	uint32_t method_token;    /* MethodDef (for generic parameter names), 0 when none */
	uint32_t nclass;          /* class instantiation (TypeHandles), from the MethodTable */
	uint64_t class_inst_addr; /* ... its address, or 0 with class_inst_one (arrays: the element type) */
	uint64_t class_inst_one;
	uint32_t nmethod;         /* method instantiation, from the InstantiatedMethodDesc */
	uint64_t method_inst_addr;
	unsigned depth;
};
int adac_names_for_method(struct adac_runtime *rt, uint64_t method_desc, unsigned flags, struct adac_method_names *out,
                          struct adac_error *err);

/* Appends the name of a TypeHandle (uncached) in the given style/flags. */
int adac_names_append_type(struct adac_runtime *rt, uint64_t type_handle, unsigned flags, struct adac_sig_text *out,
                           struct adac_error *err);

#endif
