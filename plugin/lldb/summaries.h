/* summaries.h - the text of LLDB summaries for managed values. */
#ifndef ADAC_LLDB_SUMMARIES_H
#define ADAC_LLDB_SUMMARIES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A managed string's UTF-16 code units (n of them, maybe fewer than its length) as a quoted UTF-8
 * literal with C escapes (\" \\ \n \t \r, \uXXXX for other control characters and lone
 * surrogates), "..." appended when truncated. A heap string (caller frees), NULL when out of
 * memory. */
char *adac_lldb_utf16_literal(const uint16_t *units, size_t n, int truncated);

#ifdef __cplusplus
}
#endif

#endif
