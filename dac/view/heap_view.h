/* heap_view.h - the GC heap as `dumpheap` shows it (SOS dumpheap style): every object or counts
 * per type, and the heaps, regions/segments and allocation contexts. */
#ifndef ADAC_HEAP_VIEW_H
#define ADAC_HEAP_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;
struct adac_gc_info;
struct adac_out;

struct adac_heap_opts {
	bool stat;          /* only the statistics */
	bool short_list;    /* only the objects' addresses */
	bool json;
	bool timings;       /* JSON: the walk's wall time (runs differ: off unless asked) */
	bool has_mt;
	uint64_t mt;        /* only objects of this MethodTable */
	const char *type;   /* only objects whose type name contains this, in any spelling, ignoring case
	                     * (adac_type_filter); NULL: all */
};

/* Walks the heap, printing each object as it is found ("<address> <MT> <size>"), then per
 * MethodTable the count and total size, smallest total first, the totals and the free objects;
 * regions whose walk failed are reported last, and the first one fails the command. A command of
 * its own: a held process stopped where its heap cannot be walked is let run first
 * (adac_gc_rerun: the runtime forgets what it read). */
int adac_heap_print(struct adac_runtime *rt, const struct adac_heap_opts *opt, struct adac_out *out,
                    struct adac_error *err);

/* The GC's heaps, generations, regions/segments and allocation contexts; or as {"schema": 1, "dumpheap": {...}}. */
void adac_gc_info_print(const struct adac_gc_info *info, struct adac_out *out);
int adac_gc_info_print_json(const struct adac_gc_info *info, struct adac_out *out, struct adac_error *err);

#endif
