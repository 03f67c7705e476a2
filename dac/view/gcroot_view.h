/* gcroot_view.h - `gcroot`: the roots that keep an object alive, each with its shortest reference
 * path, SOS gcroot's layout:
 *
 *   0x<obj> <Type>
 *   Thread <os id> (managed <id>):
 *       stack slot 0x<slot> (conservative)          or   register rbx (conservative)
 *           -> 0x<obj> <Type>
 *           -> 0x<obj> <Type>, via <field of the previous object, [i], a continuation's saved local
 *                                     ("gate (saved local)"), or "dependent handle 0x...">
 *       thread statics (ThreadLocalData 0x<tld>)
 *           -> 0x<obj> System.Object[]
 *   HandleTable:
 *       0x<handle> (<strong|pinned|async pinned|sized ref> handle)
 *           -> ...
 *   Finalizer queue:
 *       0x<slot> (ready for finalization)
 *           -> ...
 *
 *   Found N unique roots.
 *
 * then a "warning: incomplete search: ..." line for each part that could not be searched (what was
 * read before its failure still counts). JSON: docs/json.md. */
#ifndef ADAC_GCROOT_VIEW_H
#define ADAC_GCROOT_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;
struct adac_out;

int adac_gcroot_print(struct adac_runtime *rt, uint64_t obj, bool json, struct adac_out *out, struct adac_error *err);

#endif
