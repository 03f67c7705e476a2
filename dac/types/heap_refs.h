/* heap_refs.h - who references an object: one pass over the GC heap, comparing each object's
 * reference slots with the target. A slot counts only when the object's type says it holds a
 * reference there (a reference field from the FieldDescs, base types and embedded structs
 * included; an element of an array of references or of structs holding references), so a number
 * that happens to equal the address is not a reference. Roots (statics, handles, stacks) are not
 * objects of the heap and are not reported. */
#ifndef ADAC_HEAP_REFS_H
#define ADAC_HEAP_REFS_H

#include <stddef.h>
#include <stdint.h>

#include "base/addr_index.h"
#include "base/error.h"

struct adac_runtime;
struct adac_gc_walk_report;
struct adac_out;

struct adac_heap_ref {
	uint64_t obj;        /* the referencing object */
	uint64_t mt;         /* its MethodTable */
	uint32_t offset;     /* of the slot, from the object's start */
	char where[128];     /* the field's name ("m_continuationObject", "_pair (a struct)"), or "[i]" */
};

/* cb returns 0 to go on, non-zero to stop. rep as adac_gc_walk (NULL: a region failure fails).
 * progress: the sink the heap walk reports to ("walking the heap") and asks whether the user
 * interrupted it (ADAC_E_INTERRUPTED), or NULL. */
typedef int (*adac_heap_ref_cb)(void *ctx, const struct adac_heap_ref *r);
int adac_heap_refs(struct adac_runtime *rt, uint64_t target, adac_heap_ref_cb cb, void *ctx, struct adac_out *progress,
                   struct adac_gc_walk_report *rep, struct adac_error *err);

/* The first reference slot of the object at obj (as the heap pass orders them) holding value: its
 * offset from the object's start; 0, or -1 (none, or obj cannot be read). */
int adac_heap_slot_holding(struct adac_runtime *rt, uint64_t obj, uint64_t value, uint32_t *off);

/* The name of slot `off` (from an object's start) of an object of type mt, as adac_heap_ref.where;
 * -1 (where "at +0x<off>") when its fields do not name it. */
int adac_heap_slot_name(struct adac_runtime *rt, uint64_t mt, uint32_t off, char *where, size_t size);

/* The heap's objects that hold a reference, and the values of their reference slots, from one heap
 * pass (what `gcroot` searches). An object holding none leads nowhere, so it can be on a path to an
 * object only as its end: it is kept only when asked for (keep: sorted addresses, such as the object
 * searched for and dependent handles' primaries); at a byte[]- and string-heavy heap that is most of
 * the objects left out. Objects are in address order; object i's slots' values are edge_to[first[i]
 * .. first[i + 1]) (non-null values only, in slot order; a value need not be an object; which slot
 * held one: adac_heap_slot_holding). Caps: ADAC_MAX_GRAPH_OBJECTS, ADAC_MAX_GRAPH_EDGES. */
struct adac_heap_graph {
	size_t count;
	uint64_t *addr;
	uint32_t *first;      /* count + 1 entries */
	size_t edge_count;
	uint64_t *edge_to;
	struct adac_addr_index index; /* over addr (adac_heap_graph_find) */
	uint64_t walked;      /* objects the heap pass met, kept or not */
};

/* progress as adac_heap_refs's. */
int adac_heap_graph_build(struct adac_runtime *rt, const uint64_t *keep, size_t keep_count, struct adac_heap_graph *g,
                          struct adac_out *progress, struct adac_gc_walk_report *rep, struct adac_error *err);
/* The index of the object at addr, -1 when no object starts there. */
int64_t adac_heap_graph_find(const struct adac_heap_graph *g, uint64_t addr);
void adac_heap_graph_free(struct adac_heap_graph *g);

#endif
