/* frame_vars.h - the parameters and locals of a managed physical frame, as SOS `clrstack -a` and
 * LLDB's `frame variable` show them: the variables the debug info's native variable locations
 * place at the frame's offset (a caller's at its call instruction), read from the frame's registers
 * (those the unwind recovered) and stack, named and typed as method_vars.h says, in IL order
 * (this, arguments, locals), one line each:
 *       (int) leafLocal = 808
 *       (string) name = <register rbx is not available>
 *       (long) V_3 = <variable not available>       (not live at this offset)
 * The symbol files describe the same variables at the same places (view/managed_symbols.h). */
#ifndef ADAC_FRAME_VARS_H
#define ADAC_FRAME_VARS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "code/managed_unwind.h"

struct adac_runtime;
struct adac_out;
struct json_t;

/* Prints the lines (each after indent) for the frame whose state is st (st->rip in JIT-compiled or
 * ReadyToRun code); caller: st->rip is a return address. A frame without debug info or signatures
 * prints one line saying so. -1 only when the output cannot be built (memory). With json non-NULL,
 * stores a JSON array of {"name","kind","type","value"} there instead of printing. */
int adac_frame_vars_print(struct adac_runtime *rt, const struct adac_unwind_state *st, bool caller, const char *indent,
                          struct adac_out *out, struct json_t **json, struct adac_error *err);

#endif
