/* code_heaps.h - the EE JIT's code heaps (EEJitManager.AllCodeHeaps: a list of CodeHeapListNode,
 * each a range of code with its nibble map): every JIT-compiled code block of the process. */
#ifndef ADAC_CODE_HEAPS_H
#define ADAC_CODE_HEAPS_H

#include <stdint.h>

#include "base/error.h"
#include "code/execution_manager.h"

struct adac_runtime;

/* Calls cb(ctx, start) for the start of every code block (a method's code, a stub block) of every
 * heap, heap by heap. ADAC_E_LAYOUT when the runtime does not describe its code heaps,
 * ADAC_E_LIMIT past ADAC_MAX_CODE_HEAPS heaps. */
int adac_code_heaps_each(struct adac_runtime *rt, adac_code_start_cb cb, void *ctx, struct adac_error *err);

#endif
