/* precode.h - PrecodeStubs contract: the MethodDesc behind a precode (stub or fixup) entry point. */
#ifndef ADAC_PRECODE_H
#define ADAC_PRECODE_H

#include <stdint.h>

#include "base/error.h"

struct adac_runtime;

/* Precode kinds (the runtime's PrecodeType, as PrecodeMachineDescriptor describes them). */
enum adac_precode_kind {
	ADAC_PRECODE_NONE,
	ADAC_PRECODE_STUB,
	ADAC_PRECODE_PINVOKE_IMPORT,
	ADAC_PRECODE_FIXUP,
	ADAC_PRECODE_THISPTR_RETBUF,
	ADAC_PRECODE_UMENTRY,
	ADAC_PRECODE_INTERPRETER,
	ADAC_PRECODE_DYNAMIC_HELPER,
};

/* MethodDesc of the precode at entry (an address inside a RangeList range section). Fails with
 * ADAC_E_NOT_FOUND when the bytes are not a known precode, or the precode carries no MethodDesc. */
int adac_precode_method_desc(struct adac_runtime *rt, uint64_t entry, uint64_t *method_desc, struct adac_error *err);

/* Like adac_precode_method_desc, for any address inside a precode (a return address, the fixup
 * precode's second entry): tries addr itself, then the stub and fixup precode slots of its
 * interleaved code page. On failure m->kind still says what was found (ADAC_PRECODE_NONE: nothing). */
struct adac_precode_match {
	uint64_t entry;        /* the precode's entry point */
	uint64_t method_desc;  /* 0 for kinds that carry none (the call then fails with ADAC_E_NOT_FOUND) */
	int kind;              /* enum adac_precode_kind */
};
int adac_precode_find(struct adac_runtime *rt, uint64_t addr, struct adac_precode_match *m, struct adac_error *err);

/* "fixup", "stub", ... for an enum adac_precode_kind. */
const char *adac_precode_kind_name(int kind);

/* Classifies the precode at entry (exact entry point). ADAC_PRECODE_NONE (and 0) when the bytes
 * match no precode template. */
int adac_precode_kind(struct adac_runtime *rt, uint64_t entry, enum adac_precode_kind *kind, struct adac_error *err);

#endif
