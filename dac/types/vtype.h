/* vtype.h - the static type of a value, resolved to what reading it needs: a primitive, a pointer,
 * an object reference, or a value type with its MethodTable (struct layouts always come from the
 * runtime's FieldDescs, never from guesses); its fields; the object references inside it. */
#ifndef ADAC_VTYPE_H
#define ADAC_VTYPE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "metadata/signature.h"
#include "types/typename.h"

struct adac_runtime;

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
	char *name;          /* static type name (ADAC_STYLE_CSHARP); owned */
	char *why;           /* UNKNOWN: why it cannot be read; owned */
};
void adac_vtype_free(struct adac_vtype *t);

/* Bytes of a primitive element type (native-sized ones: ptr_size). */
uint32_t adac_vtype_prim_size(uint8_t elem, unsigned ptr_size);

/* Resolves a signature type in ctx. Never fails for types it cannot read (those are
 * ADAC_VK_UNKNOWN with `why`); -1 only for broken metadata or target reads it depends on. */
int adac_vtype_from_sig(const struct adac_type_ctx *ctx, const struct adac_sig_type *ty, struct adac_vtype *out,
                        struct adac_error *err);
/* The same for a runtime TypeHandle (an exact type). */
int adac_vtype_from_th(struct adac_runtime *rt, uint64_t th, struct adac_vtype *out, struct adac_error *err);

/* One instance field: offset from the start of the instance data (after the MethodTable pointer). */
struct adac_vfield {
	const char *name;
	uint32_t offset;
	struct adac_vtype type;
};
/* Calls cb for each instance field of mt itself (not its parents), in FieldDesc order, its type
 * resolved in mt's context (its metadata signature, else the FieldDesc's element type). cb returns
 * 0 to go on, 1 to stop, -1 on failure (the return value then). */
int adac_vtype_fields(struct adac_runtime *rt, uint64_t mt, int (*cb)(void *ctx, struct adac_vfield *f,
                                                                       struct adac_error *err),
                      void *ctx, struct adac_error *err);

/* The exact TypeHandle of a signature type in ctx when the runtime has loaded it (*th = 0
 * otherwise): primitives, string, object, TypeDef/TypeRef tokens, generic variables and loaded
 * instantiations (not arrays). */
int adac_vtype_sig_handle(const struct adac_type_ctx *ctx, const struct adac_sig_type *ty, uint64_t *th,
                          struct adac_error *err);

/* The named constants of enum type t (t->is_enum), from its metadata: each constant's name, its
 * value as declared and as the enum's bits (masked to t->size). cb returns 0 to go on, 1 to stop,
 * -1 with err set. A type without readable metadata has none. */
typedef int (*adac_enum_value_cb)(void *ctx, const char *name, int64_t value, uint64_t bits, struct adac_error *err);
int adac_vtype_enum_values(struct adac_runtime *rt, const struct adac_vtype *t, adac_enum_value_cb cb, void *ctx,
                           struct adac_error *err);

/* Offsets of the object references inside a value of type t (the value's own bytes, as stored),
 * ascending: {0} for a reference, the reference fields of a struct and of its nested structs. At
 * most max are stored; *n is the total found. */
int adac_vtype_ref_offsets(struct adac_runtime *rt, const struct adac_vtype *t, uint32_t *offs, uint32_t max,
                           uint32_t *n, struct adac_error *err);

#endif
