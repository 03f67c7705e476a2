/* statics.h - which static field a slot of the runtime's GC statics is.
 *
 * On .NET 11 a type's reference statics (and the boxes of its value-type statics) are slots of an
 * object[] on the pinned heap that a strong handle holds; the type's DynamicStaticsInfo (just before
 * its MethodTableAuxiliaryData, when MTFlags2 has DynamicStatics) points its GCStatics at the first
 * of them, and each static field's FieldDesc offset is its slot's offset from there. The index is
 * built once per runtime: the AppDomain's assemblies (AppDomain.AssemblyList), each module's loaded
 * types (Module.TypeDefToMethodTableMap), each one's GCStatics. Generic instantiations are not in
 * that map and are not found. */
#ifndef ADAC_STATICS_H
#define ADAC_STATICS_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;

/* The static field whose value lives at slot: its type (*mt) and name. ADAC_E_NOT_FOUND when no
 * loaded type's GC statics hold slot. */
int adac_gc_static_at(struct adac_runtime *rt, uint64_t slot, uint64_t *mt, char *name, size_t size,
                      struct adac_error *err);

/* The value of the reference (or boxed value-type) static field `name` of the type mt: the object its
 * GC statics slot holds (0 when the static is null). ADAC_E_NOT_FOUND when mt has no such GC static
 * field or the index has no GC statics for mt (its class constructor has not run). */
int adac_gc_static_value(struct adac_runtime *rt, uint64_t mt, const char *name, uint64_t *value,
                         struct adac_error *err);

#endif
