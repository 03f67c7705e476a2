/* value_path.h - a part of a value named by a path, C#-style: ".Field" (of a struct, or of the
 * object a reference points to, its base types included) and "[i]" (an element of an array, or a
 * character of a string), as in "aPair.Tag", "aArray[1]", "this.Label[0]". Where the part lives in
 * the target and its type, for debuggers that build values of their own (commands/debugger.c). */
#ifndef ADAC_VALUE_PATH_H
#define ADAC_VALUE_PATH_H

#include <stdint.h>

#include "base/error.h"
#include "types/vtype.h"

struct adac_runtime;

struct adac_value_part {
	struct adac_vtype type;   /* owned (adac_value_part_free) */
	uint8_t *bytes;           /* its type.size bytes, owned */
	uint64_t address;         /* where those bytes are in the target; 0 when only here (a value
	                           * the runtime keeps elsewhere, e.g. in an array-layout Continuation) */
};
void adac_value_part_free(struct adac_value_part *p);

/* Follows path (what comes after the variable `name`: "", ".Id", "[2].Name", ...) from a value of
 * type t whose bytes are `bytes` (t->size of them) at `address` (0: unknown). ADAC_E_BAD_ARG for a
 * malformed path, an index past the end or a null reference, ADAC_E_NOT_FOUND for a field a type
 * does not have; the message starts with the value it concerns ("aPair.Tag: it is null"). */
int adac_value_path(struct adac_runtime *rt, const char *name, const struct adac_vtype *t, const uint8_t *bytes,
                    uint64_t address, const char *path, struct adac_value_part *out, struct adac_error *err);

/* A string's characters (UTF-16) or an array's elements: where the first is, how many there are,
 * their type (owned by the caller: adac_vtype_free). 0 when `obj` is a string or a one-dimensional
 * array, else ADAC_E_BAD_ARG. */
int adac_value_elements(struct adac_runtime *rt, uint64_t obj, uint64_t *first, uint32_t *count,
                        struct adac_vtype *element, struct adac_error *err);

#endif
