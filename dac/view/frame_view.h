/* frame_view.h - an async frame's variables as `frame variable` shows them (LLDB's
 * `frame variable` style): "(int) count = 42", one per line, or JSON. */
#ifndef ADAC_FRAME_VIEW_H
#define ADAC_FRAME_VIEW_H

#include <stddef.h>

#include "base/error.h"

struct adac_runtime;
struct adac_async_frame;
struct adac_value_opts;
struct adac_out;

/* The locals frame #index saved at its await (only those called `name` when it is not NULL),
 * after a "warning: ..." line when its debug info is doubtful. A frame without usable information
 * fails, as does a name it has no variable of; errors start with "async frame #<index>: ". */
int adac_frame_variables_print(struct adac_runtime *rt, const struct adac_async_frame *f, size_t index,
                               const char *name, const struct adac_value_opts *o, struct adac_out *out,
                               struct adac_error *err);

/* The same as {"frame", "state", "il_offset", "warning", "generic_context", "locals"}; a frame whose
 * runtime or code recorded no locals prints {"frame", "locals": null, "locals_error"}. */
int adac_frame_variables_print_json(struct adac_runtime *rt, const struct adac_async_frame *f, size_t index,
                                    const char *name, const struct adac_value_opts *o, struct adac_out *out,
                                    struct adac_error *err);

#endif
