/* locals.h - the awaited locals of an async frame: which variables the suspension point saved
 * (async debug info for Continuation.State), where each lives in the continuation (flat layout:
 * at an offset of the object; array layout: Data/GCData by Offset/GCIndex), its type (method and
 * local signatures, instantiated) and name (PDB, Param table), and its value formatted like LLDB's
 * `frame variable`. */
#ifndef ADAC_LOCALS_H
#define ADAC_LOCALS_H

#include "error.h"

struct adac_runtime;
struct adac_async_frame;
struct adac_out;
struct json_t;

/* Prints one line per live local under a frame ("      (int) count = 42"), or one line saying why
 * there are none. `name` (may be NULL) restricts it to one variable. Problems with one variable
 * are shown on its line; only a failure for the whole frame returns -1. */
int adac_frame_locals_print(struct adac_runtime *rt, const struct adac_async_frame *f, const char *name,
                            const char *indent, struct adac_out *out, struct adac_error *err);

/* The same as a JSON array of {"name","type","value","address",...}. NULL with err on failure. */
struct json_t *adac_frame_locals_json(struct adac_runtime *rt, const struct adac_async_frame *f, struct adac_error *err);

#endif
