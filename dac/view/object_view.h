/* object_view.h - an object as `dumpobj` shows it (SOS dumpobj's facts, LLDB's value style): its
 * type, MethodTable, size and module, then its value (strings, arrays) or one line per instance
 * field, base class first: "  (<type>) <name> = <value>". */
#ifndef ADAC_OBJECT_VIEW_H
#define ADAC_OBJECT_VIEW_H

#include <stdint.h>

#include "base/error.h"

struct adac_runtime;
struct adac_out;

/* depth: levels of referenced objects expanded in field values (0: their address and type). -1
 * prints nothing when obj is not an object (no readable MethodTable); a field that cannot be read
 * shows its error in place. */
int adac_object_print(struct adac_runtime *rt, uint64_t obj, unsigned depth, struct adac_out *out,
                      struct adac_error *err);

/* `refs`: "0x<obj> <Type> is referenced by:", one line per referencing slot, then how many,
 * "  0x<referrer> <Type>, <field or [i]>", in heap order (one heap pass, types/heap_refs.h); roots
 * are not objects and are not listed. */
int adac_refs_print(struct adac_runtime *rt, uint64_t obj, struct adac_out *out, struct adac_error *err);

#endif
