/* heap_refs.h - who references an object: one pass over the GC heap, comparing each object's
 * reference slots with the target. A slot counts only when the object's type says it holds a
 * reference there (a reference field from the FieldDescs, base types and embedded structs
 * included; an element of an array of references or of structs holding references), so a number
 * that happens to equal the address is not a reference. Roots (statics, handles, stacks) are not
 * objects of the heap and are not reported. */
#ifndef ADAC_HEAP_REFS_H
#define ADAC_HEAP_REFS_H

#include <stdint.h>

#include "base/error.h"

struct adac_runtime;
struct adac_gc_walk_report;

struct adac_heap_ref {
	uint64_t obj;        /* the referencing object */
	uint64_t mt;         /* its MethodTable */
	uint32_t offset;     /* of the slot, from the object's start */
	char where[128];     /* the field's name ("m_continuationObject", "_pair (a struct)"), or "[i]" */
};

/* cb returns 0 to go on, non-zero to stop. rep as adac_gc_walk (NULL: a region failure fails). */
typedef int (*adac_heap_ref_cb)(void *ctx, const struct adac_heap_ref *r);
int adac_heap_refs(struct adac_runtime *rt, uint64_t target, adac_heap_ref_cb cb, void *ctx,
                   struct adac_gc_walk_report *rep, struct adac_error *err);

#endif
