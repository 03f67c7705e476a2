/* typename.h - the one type-name engine: every type asyncdac prints is spelled here, from a
 * signature's type tree (metadata/signature.h) or from a runtime TypeHandle, in one of three styles:
 *
 *                   ADAC_STYLE_SOS          ADAC_STYLE_CSHARP      ADAC_STYLE_DAC
 *                   frames                  variables, values      oracle comparisons
 *   primitives      Int32 Boolean IntPtr    int bool nint          Int32 Boolean IntPtr
 *   string, object  System.String           string object          System.String System.Object
 *   named types     Ns.Outer+Inner          Ns.Outer+Inner         Ns.Inner [1], Ns.Outer+Inner [2]
 *   generic types   Ns.List<Int32>          Ns.List<int>           Ns.List`1<Int32> [1], [2]
 *   arrays          Int32[] Int32[,]        int[] int[,]           Int32[] [1], System.Int32[] [2]
 *   rank-1 array    Int32[*]                int[*]                 Int32[] [1], System.Int32[*] [2]
 *   byref, pointer  Int32& Int32*           int& int*              Int32 ByRef [1], Int32* [1]
 *   function ptr    Int32 (System.String)   int (string)           Int32 (System.String) [1]
 *   pinned local    Byte& pinned            byte&                  Byte ByRef
 *   [1] in a parameter list, as the DAC's SigFormat prints it; [2] a type's own name, as its
 *       TypeString (FormatNamespace | FormatFullInst) prints it (adac_tn_handle, adac_tn_inst):
 *       Ns.List`1[[System.Int32, System.Private.CoreLib]].
 *
 * - SOS: stack traces and SOS's clrstack. Method names and the types around frames (awaited tasks,
 *   state machines, heap types). Primitives by their CLR short name (Void Boolean Char SByte Byte
 *   Int16 UInt16 Int32 UInt32 Int64 UInt64 Single Double IntPtr UIntPtr TypedReference), every other
 *   type by its full name, nested types joined with '+', generic arguments in angle brackets, arity
 *   suffix dropped, ", " between them (all arguments of a nested generic type at the end:
 *   Outer+Inner<Int32, Int64>). ADAC_TN_NO_NAMESPACE drops namespaces (String).
 * - C#: LLDB's `frame variable`. The static type of a variable or field and the dynamic type shown
 *   after an object's address, in text and JSON alike: the SOS style with C# keywords for the
 *   built-in types (bool char sbyte byte short ushort int uint long ulong float double nint nuint
 *   string object void).
 * - DAC: exactly what Microsoft's DAC prints (ClrDataAccess::GetMethodDescName), to compare with
 *   SOS and ClrMD.
 * All styles: a generic variable is its instantiation's argument when the context has one (shared
 * code shows System.__Canon, as the runtime has it), else the GenericParam's name (T; the DAC
 * style: !0), else !0 / !!0. A null TypeHandle is "?"; custom modifiers are not shown. Without
 * metadata a type token shows as its number (0x01000001), without a runtime an
 * ELEMENT_TYPE_INTERNAL handle as its address. */
#ifndef ADAC_TYPENAME_H
#define ADAC_TYPENAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "metadata/signature.h"

struct adac_runtime;
struct adac_ecma;
struct adac_method_info;

enum adac_name_style { ADAC_STYLE_SOS, ADAC_STYLE_CSHARP, ADAC_STYLE_DAC };

/* Options of a name (0 or more). */
#define ADAC_TN_NO_NAMESPACE 1u  /* SOS and C# styles: no namespaces */
#define ADAC_TN_NO_ARITY 2u      /* adac_tn_token: drop the "`1" arity suffixes (its arguments follow) */

/* Where the types of a signature get their names: a module's metadata and the instantiations of a
 * type (nclass TypeHandles at class_inst, or the single class_one: an array type's element) and of
 * a method (nmethod at method_inst). type_token / method_token name the generic parameters that
 * have no instantiation. rt may be NULL (metadata alone), md too (tokens as numbers). */
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
/* The context of a method's signatures: its module, its type's instantiation (exact_mt: this
 * instantiation of it, for shared code; 0: the MethodDesc's own type) and its own. */
int adac_type_ctx_for_method(struct adac_runtime *rt, const struct adac_method_info *mi, uint64_t exact_mt,
                             struct adac_type_ctx *ctx, struct adac_error *err);
/* Metadata alone: tokens of md, generic parameters named after type_token's and method_token's. */
void adac_type_ctx_for_metadata(struct adac_type_ctx *ctx, const struct adac_ecma *md, uint32_t type_token,
                                uint32_t method_token);
/* The TypeHandle of generic variable `index` (of the method when method_var, else of the type);
 * *th = 0 when the context has no instantiation for it. */
int adac_type_ctx_arg(const struct adac_type_ctx *ctx, bool method_var, uint32_t index, uint64_t *th,
                      struct adac_error *err);

/* Each appends to out; -1 with err (ADAC_E_LIMIT at ADAC_MAX_NAME_BYTES, ADAC_MAX_SIG_DEPTH,
 * ADAC_MAX_TYPE_DEPTH; the first failed read or bad metadata otherwise). */
/* A signature type. */
int adac_tn_sig(const struct adac_type_ctx *ctx, const struct adac_sig_type *ty, enum adac_name_style style,
                unsigned flags, struct adac_sig_text *out, struct adac_error *err);
/* A parameter list "(A, B)", vararg ", ..." (at a call site's sentinel "..., "). */
int adac_tn_params(const struct adac_type_ctx *ctx, const struct adac_sig_method *m, enum adac_name_style style,
                   unsigned flags, struct adac_sig_text *out, struct adac_error *err);
/* A TypeDef, TypeRef or TypeSpec token of ctx's metadata. */
int adac_tn_token(const struct adac_type_ctx *ctx, uint32_t token, enum adac_name_style style, unsigned flags,
                  struct adac_sig_text *out, struct adac_error *err);
/* A runtime TypeHandle: a MethodTable, or a TypeDesc (byref, pointer, generic variable, function pointer). */
int adac_tn_handle(struct adac_runtime *rt, uint64_t type_handle, enum adac_name_style style, unsigned flags,
                   struct adac_sig_text *out, struct adac_error *err);
/* A method instantiation of n TypeHandles at inst: SOS and C# "<A, B>", DAC "[[A, Assembly],[B, Assembly]]". */
int adac_tn_inst(struct adac_runtime *rt, uint64_t inst, uint32_t n, enum adac_name_style style, unsigned flags,
                 struct adac_sig_text *out, struct adac_error *err);

/* The name of a primitive element type (and of string, object, TypedReference), NULL for others. */
const char *adac_tn_prim(uint8_t elem, enum adac_name_style style);
/* The length of name without a trailing "`<digits>" arity suffix. */
size_t adac_tn_strip_arity(const char *name);

/* A type name as a user may type it, in any of the spellings above or reflection's, rewritten in the
 * SOS style (for filters that compare with SOS-style names): C# keywords and the primitives' full
 * names become their SOS names (int, System.Int32 -> Int32; string -> System.String), a reflection
 * instantiation becomes angle brackets (Ns.List`1[[System.Int32, System.Private.CoreLib]] ->
 * Ns.List<Int32>), and an arity without arguments opens them (Task`1 -> Task<, which every
 * instantiation starts with). Everything else is kept. Writes at most size bytes (NUL included) into
 * out; false when it did not fit. */
bool adac_tn_normalize(const char *in, char *out, size_t size);

/* A type filter as users give one (`ps --type`, `dumpheap --type`): a name matches when it contains
 * the text, or the text as adac_tn_normalize spells it, ignoring ASCII case ("task<int>",
 * "Task<Int32>" and "System.Threading.Tasks.Task`1" all find System.Threading.Tasks.Task<Int32>). */
struct adac_type_filter {
	const char *text;      /* NULL: every name matches */
	char *norm;            /* its SOS spelling, NULL when it is the text's own or did not fit */
};
/* Keeps text (which must outlive the filter). -1 only when memory runs out. */
int adac_type_filter_init(struct adac_type_filter *f, const char *text, struct adac_error *err);
bool adac_type_filter_match(const struct adac_type_filter *f, const char *name);
void adac_type_filter_free(struct adac_type_filter *f);
/* Does s contain text, ignoring ASCII case? (NULL s: no; "" text: any s.) */
bool adac_contains_nocase(const char *s, const char *text);

#endif
