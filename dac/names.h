/* names.h - display names from metadata, formatted like .NET stack traces and SOS clrstack:
 * `Namespace.Outer+Nested.Method(Int32, System.String)`, generic instantiations as `List<Int32>`. */
#ifndef ADAC_NAMES_H
#define ADAC_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct adac_runtime;

enum {
	ADAC_NAME_PARAMS = 1,       /* append "(Int32, String)" */
	ADAC_NAME_NO_NAMESPACE = 2, /* omit namespaces */
};

/* Method display name; dynamic methods use their stored name. The result lives in the runtime's
 * name cache (valid until the runtime closes). NULL with err on failure. */
const char *adac_method_name(struct adac_runtime *rt, uint64_t method_desc, unsigned flags, struct adac_error *err);

/* Type display name of a MethodTable (or TypeHandle: TypeDescs for arrays/pointers/generic vars). */
const char *adac_type_name(struct adac_runtime *rt, uint64_t type_handle, unsigned flags, struct adac_error *err);

/* File path of the module's assembly (the PE image on disk), or "" when unknown (in-memory). */
const char *adac_module_path(struct adac_runtime *rt, uint64_t module, struct adac_error *err);
/* Simple name of the module ("MyApp.dll"). */
const char *adac_module_file_name(struct adac_runtime *rt, uint64_t module, struct adac_error *err);

#endif
