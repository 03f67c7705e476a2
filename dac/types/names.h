/* names.h - method and type names (types/typename.h spells them), cached per runtime, and module
 * names. A method is `Type.Name<MethodArgs>(ParamTypes)`:
 *   AsyncdacSamples.Holder<Int32>.B(Int32, System.Threading.Tasks.Task<Int32>)
 *   AsyncdacSamples.NestedApp.C<System.__Canon>(System.__Canon, System.Threading.Tasks.Task<Int32>)
 * - The type is the MethodDesc's MethodTable: an exact instantiation, or the canonical one for
 *   shared code, as the runtime has it; the method instantiation is the InstantiatedMethodDesc's.
 * - Async variants and their Task-returning thunks share the metadata token, so both show the
 *   user-facing name (callers hide thunks with adac_method_info.diagnostics_hidden).
 * - Dynamic methods (IL stubs, DynamicMethod) show their stored name ("IL_STUB_PInvoke"), with
 *   parameters from their stored signature when it decodes; array methods show the array type and
 *   Get/Set/Address/.ctor.
 * ADAC_NAME_DAC gives exactly what Microsoft's DAC (GetMethodDescName) prints:
 *   AsyncdacSamples.Holder`1[[System.Int32, System.Private.CoreLib]].B(Int32, System.Threading.Tasks.Task`1<Int32>) */
#ifndef ADAC_NAMES_H
#define ADAC_NAMES_H

#include <stdint.h>

#include "base/error.h"

struct adac_runtime;

/* Flags. The style is SOS unless ADAC_NAME_CSHARP or ADAC_NAME_DAC says otherwise. */
enum {
	ADAC_NAME_PARAMS = 1,       /* methods: append "(Int32, System.String)" */
	ADAC_NAME_NO_NAMESPACE = 2, /* omit namespaces (SOS and C# styles) */
	ADAC_NAME_DAC = 4,          /* the DAC's style */
	ADAC_NAME_CSHARP = 8,       /* the C# style (variables) */
};

/* Method name; dynamic methods use their stored name. The result lives in the runtime's name
 * cache (valid until the runtime closes). NULL with err on failure. */
const char *adac_method_name(struct adac_runtime *rt, uint64_t method_desc, unsigned flags, struct adac_error *err);

/* The same for shared code running as one instantiation of its type: exact_mt is that type
 * (Holder<System.String> for Holder<System.__Canon>.B), used for the type part and the parameters. */
const char *adac_method_name_in(struct adac_runtime *rt, uint64_t method_desc, uint64_t exact_mt, unsigned flags,
                                struct adac_error *err);
/* Type name of a MethodTable or TypeHandle (TypeDescs for byrefs, pointers, generic variables). */
const char *adac_type_name(struct adac_runtime *rt, uint64_t type_handle, unsigned flags, struct adac_error *err);

/* File path of the module's assembly (the PE image on disk), or "" when unknown (in-memory). */
const char *adac_module_path(struct adac_runtime *rt, uint64_t module, struct adac_error *err);
/* Simple name of the module ("MyApp.dll"). */
const char *adac_module_file_name(struct adac_runtime *rt, uint64_t module, struct adac_error *err);

#endif
