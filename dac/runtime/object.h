/* object.h - Object contract: where an object keeps its MethodTable; and the String and Array
 * headers (a string's length and characters, an array's element count). */
#ifndef ADAC_OBJECT_H
#define ADAC_OBJECT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;

struct adac_object_layout {
	uint32_t mt_offset;   /* Object.m_pMethTab, from the object address */
	uint64_t mt_unmask;   /* ObjectToMethodTableUnmask: low bits of m_pMethTab that are not the
	                       * MethodTable's (GC marks); the runtime's value, else 7 (64-bit) or 3 */
	bool has_string;      /* String.m_StringLength and m_FirstChar are described */
	uint32_t str_len_off;
	uint32_t str_chars_off;
	bool has_array;       /* Array.m_NumComponents is described */
	uint32_t arr_len_off;
};

/* Resolved once per runtime. ADAC_E_LAYOUT when Object.m_pMethTab is not described or
 * ObjectToMethodTableUnmask is there but unreadable. */
int adac_object_layout(struct adac_runtime *rt, const struct adac_object_layout **out, struct adac_error *err);

/* The MethodTable an m_pMethTab value names. */
static inline uint64_t adac_object_mt_of(const struct adac_object_layout *l, uint64_t m_pmethtab)
{
	return m_pmethtab & ~l->mt_unmask;
}

/* The element count of the array at arr (Array.m_NumComponents). ADAC_E_LAYOUT when the
 * descriptor does not describe Array. */
int adac_object_array_length(struct adac_runtime *rt, uint64_t arr, uint32_t *n, struct adac_error *err);

/* The MethodTable of the object at obj. ADAC_E_CORRUPT when obj is null or not pointer-aligned. */
int adac_object_mt(struct adac_runtime *rt, uint64_t obj, uint64_t *mt, struct adac_error *err);

#endif
