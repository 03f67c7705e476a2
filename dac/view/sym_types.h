/* sym_types.h - the DWARF types (symfile/symfile.h) of managed types, for symbol files.
 *
 * How a .NET type is described, from its static type (types/vtype.h's adac_vtype) and the
 * runtime's own layouts (FieldDescs, MethodTables; never guessed):
 *   - primitives: base types named by their C# keywords (int, bool, char: UTF-16, nint, double...);
 *   - enums: enumeration types with the constants of their metadata;
 *   - value types: structs of the value's bytes, fields at the runtime's offsets;
 *   - reference types: a typedef named like the variable's type in `frame variable` (string,
 *     AsyncdacSamples.Holder<int>, int[]) for a pointer to a struct of the object, named by the
 *     full type name and "object" (System.String object, AsyncdacSamples.Holder<System.Int32>
 *     object, System.Int32[] object; never the typedef's name) whose members are the
 *     instance fields of the type and its parents at their offsets from the object's address;
 *     a string's _firstChar is an array of char counted by _stringLength, an array's Items are
 *     counted by its Length (DWARF's DW_OP_push_object_address: debuggers that evaluate it, such
 *     as gdb, show the characters and elements);
 *   - byrefs and pointers: a typedef named like the type (int&) for void *;
 *   - types whose layout is unknown (an unresolved generic parameter): a declared struct.
 * A variable whose static type is named N in asyncdac's locals (adac_vtype.name: `frame variable`'s
 * style) has the DWARF type named N (a base type, typedef, struct or enum), so a debugger finds the
 * type of a value by that name (SBTarget::FindFirstType).
 * Objects reached from a variable are laid out to a depth (the variable's own class is depth 0,
 * the classes of its fields depth 1, ...); deeper classes are declared structs. Value types are
 * always laid out (their bytes are part of the enclosing value). */
#ifndef ADAC_SYM_TYPES_H
#define ADAC_SYM_TYPES_H

#include <stdint.h>

#include "base/error.h"

struct adac_runtime;
struct adac_symfile;
struct adac_vtype;
struct adac_type_ctx;
struct adac_sig_type;

#define ADAC_SYM_DEFAULT_TYPE_DEPTH 2u

struct adac_sym_typer;

struct adac_sym_typer *adac_sym_typer_new(struct adac_runtime *rt, struct adac_symfile *sf, unsigned depth,
                                          struct adac_error *err);
void adac_sym_typer_free(struct adac_sym_typer *ty);

/* The type of a variable whose static type is the signature type sig in ctx (arguments, locals,
 * fields), or (sig NULL) the resolved type t alone (`this`: an exact type). Never fails for types
 * it cannot describe (they become declared structs); -1 only for failed allocations and limits of
 * the symbol file. */
int adac_sym_type_of(struct adac_sym_typer *ty, const struct adac_type_ctx *ctx, const struct adac_sig_type *sig,
                     const struct adac_vtype *t, uint32_t *id, struct adac_error *err);

/* Lays out the structs asked for so far (and those their fields need). */
int adac_sym_typer_finish(struct adac_sym_typer *ty, struct adac_error *err);

#endif
