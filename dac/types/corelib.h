/* corelib.h - finding types of the runtime's own library (System.Private.CoreLib) by name: the
 * system module, its metadata, and the TypeDef -> MethodTable lookup map. */
#ifndef ADAC_CORELIB_H
#define ADAC_CORELIB_H

#include <stdint.h>

#include "base/error.h"

struct adac_runtime;

/* The Module of System.Private.CoreLib (SystemDomain -> SystemAssembly -> Module). */
int adac_corelib_module(struct adac_runtime *rt, uint64_t *module, struct adac_error *err);

/* The loaded MethodTable of a type in `module`, by namespace and name; nested types as
 * "Outer+Inner". *mt = 0 (success) when the type exists but the runtime has not loaded it yet;
 * ADAC_E_NOT_FOUND when the metadata has no such type. */
int adac_module_type(struct adac_runtime *rt, uint64_t module, const char *ns, const char *name, uint64_t *mt,
                     struct adac_error *err);

/* MethodTable of a TypeDef token through Module.TypeDefToMethodTableMap; 0 when not loaded. */
int adac_module_typedef_mt(struct adac_runtime *rt, uint64_t module, uint32_t typedef_token, uint64_t *mt,
                           struct adac_error *err);

/* One segment of a Module's lookup map: the entries of RIDs first .. first+count-1, pointers at
 * data, each with the flag bits in mask to strip. */
struct adac_lookup_segment {
	uint64_t data, mask;
	uint32_t first, count;
};

/* Calls each for every segment of one of a Module's lookup maps (e.g. "TypeDefToMethodTableMap"),
 * in RID order, until it returns nonzero: -1 is an error (returned), 1 stops the walk (0 returned). */
int adac_module_lookup_segments(struct adac_runtime *rt, uint64_t module, const char *map,
                                int (*each)(const struct adac_lookup_segment *seg, void *arg), void *arg,
                                struct adac_error *err);

/* An entry of one of a Module's lookup maps (e.g. "MethodDefToDescMap") by RID; 0 when absent. */
int adac_module_lookup(struct adac_runtime *rt, uint64_t module, const char *map, uint32_t rid, uint64_t *value,
                       struct adac_error *err);

#endif
