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

/* Where a signature's types are resolved: the metadata of `module` and the instantiations of the
 * type (nclass TypeHandles at class_inst, or the single class_one for an array type's element)
 * and of the method (nmethod at method_inst). type_token/method_token name generic parameters
 * that have no instantiation. */
struct adac_type_ctx {
	struct adac_runtime *rt;
	uint64_t module;
	const struct adac_ecma *md;
	uint32_t nclass;
	uint64_t class_inst;
	uint64_t class_one;
	uint32_t nmethod;
	uint64_t method_inst;
	uint32_t type_token;
	uint32_t method_token;
};

/* The context of a type's own fields: its module and instantiation. */
int adac_type_ctx_for_mt(struct adac_runtime *rt, uint64_t mt, struct adac_type_ctx *ctx, struct adac_error *err);

/* A resolved static type. */
enum adac_vkind {
	ADAC_VK_PRIM,     /* elem: BOOLEAN, CHAR, I1..U8, R4, R8, I, U */
	ADAC_VK_POINTER,  /* PTR, FNPTR, BYREF: an address */
	ADAC_VK_REF,      /* an object reference (class, interface, string, array, object) */
	ADAC_VK_STRUCT,   /* a value type with its MethodTable (mt); enums have is_enum */
	ADAC_VK_UNKNOWN,  /* cannot be read: a value type whose layout is unknown, TypedReference */
};

struct adac_vtype {
	enum adac_vkind kind;
	uint8_t elem;        /* PRIM: the element type; enums: the underlying one; REF: STRING, SZARRAY,
	                      * ARRAY, OBJECT or CLASS as the signature says */
	uint64_t mt;         /* STRUCT: the value type's MethodTable; REF: the static type's when known */
	bool is_enum;
	uint32_t size;       /* bytes the value occupies (0 when unknown) */
	char *name;          /* static type name (keyword style); owned */
	char *why;           /* UNKNOWN: why it cannot be read; owned */
};
void adac_vtype_free(struct adac_vtype *t);

/* Resolves a signature type in ctx. Never fails for types it cannot read (those are
 * ADAC_VK_UNKNOWN with `why`); -1 only for broken metadata or target reads it depends on. */
int adac_vtype_from_sig(const struct adac_type_ctx *ctx, const struct adac_sig_type *ty, struct adac_vtype *out,
                        struct adac_error *err);
/* The same for a runtime TypeHandle (an exact type). */
int adac_vtype_from_th(struct adac_runtime *rt, uint64_t th, struct adac_vtype *out, struct adac_error *err);

/* Type names (see the style above). */
enum adac_tn_style { ADAC_TN_KEYWORDS, ADAC_TN_FULL };
int adac_type_name_th(struct adac_runtime *rt, uint64_t th, enum adac_tn_style style, struct adac_sig_text *out,
                      struct adac_error *err);
int adac_type_name_sig(const struct adac_type_ctx *ctx, const struct adac_sig_type *ty, struct adac_sig_text *out,
                       struct adac_error *err);

/* Offsets of the object references inside a value of type t (the value's own bytes, as stored),
 * ascending: {0} for a reference, the reference fields of a struct and of its nested structs. At
 * most max are stored; *n is the total found. */
int adac_vtype_ref_offsets(struct adac_runtime *rt, const struct adac_vtype *t, uint32_t *offs, uint32_t max,
                           uint32_t *n, struct adac_error *err);

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
