/* locals_view.h - the awaited locals of a frame as LLDB's `frame variable` shows variables, one
 * line each, and as JSON:
 *       (int) aInt = 42
 *       [Flags] = 0x00001010 { ExecutionContext = 1, Result = 2 }
 *       (int) x = <error: ...>
 * (value_format.h gives the values and type names). */
#ifndef ADAC_LOCALS_VIEW_H
#define ADAC_LOCALS_VIEW_H

#include "async/locals.h"
#include "base/error.h"
#include "view/value_format.h"

struct adac_runtime;
struct adac_async_frame;
struct adac_out;
struct json_t;

/* Prints the lines, each starting with indent: "(<type>) <name> = <value>", the runtime's slots as
 * "[<name>] = <text>". `name` (may be NULL) restricts them to the variables of that name; none is
 * ADAC_E_NOT_FOUND. Without any: "(no locals: the suspension point saves no variables)". */
int adac_locals_print(struct adac_runtime *rt, const struct adac_locals *l, const char *name, const char *indent,
                      const struct adac_value_opts *o, struct adac_out *out, struct adac_error *err);

/* A JSON array of {"name","kind","var_number","type","offset","address","value","text",...}. */
struct json_t *adac_locals_json(struct adac_runtime *rt, const struct adac_locals *l, const char *name,
                                const struct adac_value_opts *o, struct adac_error *err);

/* For `bt --locals`: collect + print with the default limits; a frame without usable information
 * prints "(no locals: <reason>)" and returns 0 unless the debug info or State is corrupt. `name`
 * (may be NULL) restricts the output to one variable; `internals` shows the compiler temporaries
 * and continuation internals too. Only a failure for the whole frame returns -1. */
int adac_frame_locals_print(struct adac_runtime *rt, const struct adac_async_frame *f, const char *name,
                            const char *indent, bool internals, struct adac_out *out, struct adac_error *err);

/* The same as a JSON array; NULL with err when the frame has no usable information. */
struct json_t *adac_frame_locals_json(struct adac_runtime *rt, const struct adac_async_frame *f, struct adac_error *err);

#endif
