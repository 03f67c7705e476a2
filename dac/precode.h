/* precode.h - PrecodeStubs contract: the MethodDesc behind a precode (stub or fixup) entry point. */
#ifndef ADAC_PRECODE_H
#define ADAC_PRECODE_H

#include <stdint.h>

#include "error.h"

struct adac_runtime;

/* MethodDesc of the precode at entry (an address inside a RangeList range section). Fails with
 * ADAC_E_NOT_FOUND when the bytes are not a known precode, or the precode carries no MethodDesc. */
int adac_precode_method_desc(struct adac_runtime *rt, uint64_t entry, uint64_t *method_desc, struct adac_error *err);

/* Entry point -> MethodDesc the way the runtime does it: code map first (a jitted/R2R entry or an
 * IL stub), then the precode. */
int adac_entry_point_method_desc(struct adac_runtime *rt, uint64_t entry, uint64_t *method_desc,
                                 struct adac_error *err);

#endif
