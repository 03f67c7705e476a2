/* object_view.h - an object as `dumpobj` shows it (SOS dumpobj's facts, LLDB's value style): its
 * type, MethodTable, size and module, then its value (strings, arrays) or one line per instance
 * field, base class first: "  (<type>) <name> = <value>". */
#ifndef ADAC_OBJECT_VIEW_H
#define ADAC_OBJECT_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;
struct adac_out;

/* depth: levels of referenced objects expanded in field values (0: their address and type). -1
 * prints nothing when obj is not an object (no readable MethodTable); a field that cannot be read
 * shows its error in place. */
int adac_object_print(struct adac_runtime *rt, uint64_t obj, unsigned depth, struct adac_out *out,
                      struct adac_error *err);

/* The name of the reference slot at `off` of object obj (type mt): its field ("_task", "_pair (a
 * struct, at +8)") or element ("[3]"); in a continuation, the awaited local saved there ("gate (saved
 * local)") or the well-known slot ("Result (continuation slot)"); else "at +0x<off>". */
void adac_object_slot_name(struct adac_runtime *rt, uint64_t obj, uint64_t mt, uint32_t off, char *buf, size_t size);

/* `refs`: "0x<obj> <Type> is referenced by:", one line per referencing slot, then how many,
 * "  0x<referrer> <Type>, <field or [i]>", in heap order (one heap pass, types/heap_refs.h); roots
 * are not objects and are not listed. */
int adac_refs_print(struct adac_runtime *rt, uint64_t obj, struct adac_out *out, struct adac_error *err);

#endif
