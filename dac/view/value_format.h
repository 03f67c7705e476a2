/* value_format.h - managed values read from the target and shown like LLDB's `frame variable`
 * (text) or as JSON, and the type names they are shown with.
 *
 * Types. A value's static type comes from a signature (method, local or field signature) resolved
 * in a context: the module's metadata and the type's and method's instantiations. It is resolved to
 * what reading it needs (struct adac_vtype): a primitive, a reference, or a value type with its
 * MethodTable (struct layouts always come from the runtime's FieldDescs, never from guesses).
 *
 * Type names, one style everywhere (documented here, tested by tests/unit/test_locals.c):
 *   - The parenthesised static type of a variable or field uses C# keywords for the built-in types:
 *     bool char sbyte byte short ushort int uint long ulong float double nint nuint string object;
 *     every other type by its full name, namespace included, nested types joined with '+'
 *     (Outer+Inner), generic arguments in angle brackets in the same style
 *     (System.Threading.Tasks.Task<int>, AsyncdacSamples.Holder<int>), arrays int[] / int[,],
 *     pointers int*, byrefs int&. Generic parameters are resolved through the instantiation; shared
 *     code whose exact instantiation is unknown shows the canonical System.__Canon.
 *   - The dynamic type of an object (what its MethodTable says, shown after its address when it
 *     differs from the static type) uses full names and no keywords: System.String, System.Int32,
 *     AsyncdacSamples.Holder<System.Int32>.
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
 *   struct          { Id = 11, Tag = (object) 0x00007f... System.String "tag-a", Count = 12 }
 *   class instance  0x00007f... { Value = 1, Name = "p-a" }
 *   boxed value     0x00007f... System.Int32 99
 * A reference whose static type is string or an array type prints only the summary ("alpha",
 * int[3] {...}); any other reference prints its address first, then its dynamic type when that
 * differs from the static type, then the summary. Inside braces, a field whose value prints with an
 * address is prefixed with its declared type, as in `Tag = (object) 0x... System.String "t"`.
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
#include "types/typename.h"
#include "types/vtype.h"

struct adac_runtime;
struct adac_ecma;
struct json_t;

/* Display limits (what the user asked to see, stated with an ellipsis when reached). */
#define ADAC_VALUE_DEFAULT_DEPTH 1u       /* levels of objects and structs expanded */
#define ADAC_VALUE_DEFAULT_ELEMENTS 16u   /* array elements and fields shown per object */
#define ADAC_VALUE_DEFAULT_STRING 256u    /* characters shown per string */

struct adac_value_opts {
	unsigned max_depth;
	unsigned max_elements;
	unsigned max_string;
};
void adac_value_opts_default(struct adac_value_opts *o);

/* Type names (see the style above). */
enum adac_tn_style { ADAC_TN_KEYWORDS, ADAC_TN_FULL };
int adac_type_name_th(struct adac_runtime *rt, uint64_t th, enum adac_tn_style style, struct adac_sig_text *out,
                      struct adac_error *err);
int adac_type_name_sig(const struct adac_type_ctx *ctx, const struct adac_sig_type *ty, struct adac_sig_text *out,
                       struct adac_error *err);

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

#endif
