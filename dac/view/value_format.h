/* value_format.h - managed values read from the target and shown like LLDB's `frame variable`
 * (text) or as JSON. Values have the static types of types/vtype.h; every type is named in the C#
 * style of types/typename.h (int, string, System.Threading.Tasks.Task<int>), in text and JSON.
 *
 * Values (text):
 *   bool            true / false
 *   char            'A', 'é' (UTF-8), escapes '\n' '\'' '\\' and '\uXXXX' for control characters
 *                   and lone surrogates
 *   integers        decimal; nint/nuint decimal; pointers and byrefs 0x%016llx
 *   float, double   the shortest text that reads back to the same value (3.25, 1e+100), NaN,
 *                   Infinity, -Infinity
 *   enum            the constant's name (Green); flags combinations "A | B"; else the number
 *   null            null
 *   string          "alpha" with C escapes; longer than the string limit: "alph"... (and the length)
 *   array           int[3] { 1, 2, 3 }; more elements than the element limit: int[100] { 0, 1, ... }
 *   struct          { Id = 11, Tag = (object) 0x00007f... string "tag-a", Count = 12 }
 *   class instance  0x00007f... { Value = 1, Name = "p-a" }
 *   boxed value     0x00007f... int 99
 * A reference whose static type is string or an array type prints only the summary ("alpha",
 * int[3] {...}); any other reference prints its address first, then its dynamic type when that
 * differs from the static type, then the summary. Inside braces, a field whose value prints with an
 * address is prefixed with its declared type, as in `Tag = (object) 0x... string "t"`.
 * Expansion stops at the depth limit ("{...}"); arrays and fields stop at the element limit ("...").
 * A part that cannot be read says so in place: <error: ...>.
 *
 * Values (JSON): numbers, true/false, null, strings as JSON strings; char {"char","code"}; enum
 * {"enum","name","value"}; struct {"struct","fields":{...}}; class {"class","address","fields"};
 * boxed {"boxed","address","value"}; array {"array" (element type),"address","length","values"};
 * a truncated string {"string","length","truncated":true}; an unreadable part {"error"}. */
#ifndef ADAC_VALUE_FORMAT_H
#define ADAC_VALUE_FORMAT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "metadata/signature.h"
#include "types/vtype.h"

struct adac_runtime;
struct json_t;

/* Display limits (what the user asked to see, stated with an ellipsis when reached). */
#define ADAC_VALUE_DEFAULT_DEPTH 1u       /* levels of objects and structs expanded */
#define ADAC_VALUE_DEFAULT_ELEMENTS 16u   /* array elements and fields shown per object */
#define ADAC_VALUE_DEFAULT_STRING 256u    /* characters shown per string */

struct adac_value_opts {
	unsigned max_depth;
	unsigned max_elements;
	unsigned max_string;
	bool internals;   /* locals: compiler temporaries and continuation internals too (text) */
};
void adac_value_opts_default(struct adac_value_opts *o);

/* Where a string keeps its length and characters and an array its length, from the object (the
 * descriptor's String.m_StringLength, String.m_FirstChar and Array.m_NumComponents). An array's
 * elements start at the object + its MethodTable's base size - one pointer. */
struct adac_value_layout {
	uint32_t str_len_off, str_chars_off, arr_len_off;
};
int adac_value_layout(struct adac_runtime *rt, struct adac_value_layout *out, struct adac_error *err);

/* Formats a value whose bytes (t->size of them) are in host memory: appends the text to `text`
 * and, when json is not NULL, stores a new JSON value in *json. Parts that cannot be read are shown
 * as errors in place; -1 only when the text itself cannot be built (memory, ADAC_MAX_NAME_BYTES). */
int adac_value_format(struct adac_runtime *rt, const struct adac_vtype *t, const uint8_t *bytes,
                      const struct adac_value_opts *o, struct adac_sig_text *text, struct json_t **json,
                      struct adac_error *err);

/* Reads and formats an object reference (what a REF slot holds) with the given static type
 * (NULL: object). */
int adac_value_format_ref(struct adac_runtime *rt, const struct adac_vtype *t, uint64_t obj,
                          const struct adac_value_opts *o, struct adac_sig_text *text, struct json_t **json,
                          struct adac_error *err);
/* The System.String at str as the formatter prints a string ("text" with C escapes, at most
 * ADAC_MAX_STRING_CHARS characters): an exception's message, a thread's name. */
int adac_value_format_string(struct adac_runtime *rt, uint64_t str, struct adac_sig_text *text, struct json_t **json,
                             struct adac_error *err);

#endif
