/* fielddesc.h - RuntimeTypeSystem contract, the FieldDesc parts: a type's fields with their
 * offsets, element types and static kinds, named through the module's metadata. */
#ifndef ADAC_FIELDDESC_H
#define ADAC_FIELDDESC_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;

struct adac_field {
	uint64_t field_desc;
	uint64_t enclosing_mt;
	uint32_t token;          /* FieldDef token */
	uint32_t offset;         /* instance: from the start of the object's data (after the MethodTable
	                          * pointer); static: from the statics base */
	uint8_t elem_type;       /* CorElementType */
	bool is_static;
	bool is_thread_static;
	bool is_rva;
	const char *name;        /* from metadata; "" when the metadata is unavailable */
};

typedef int (*adac_field_cb)(void *ctx, const struct adac_field *f);

/* The fields a type introduces (its own instance fields, then its statics). */
int adac_mt_fields(struct adac_runtime *rt, uint64_t mt, adac_field_cb cb, void *ctx, struct adac_error *err);

/* Whether static field f lives in its type's GC statics (references and boxed value types). */
bool adac_field_is_gc_static(const struct adac_field *f);

/* A field by name, searched in mt and then its parents. ADAC_E_NOT_FOUND names the type and field;
 * more than ADAC_MAX_PARENT_DEPTH parent types is ADAC_E_LIMIT. */
int adac_mt_find_field(struct adac_runtime *rt, uint64_t mt, const char *name, struct adac_field *out,
                       struct adac_error *err);

/* Object-relative offset of an instance field by name (offset + the MethodTable pointer). */
int adac_mt_field_offset(struct adac_runtime *rt, uint64_t mt, const char *name, uint32_t *offset,
                         struct adac_error *err);

/* A reference (pointer-sized) or 4-byte instance field of the object at obj, by name, through
 * the object's own MethodTable. */
int adac_object_field_ptr(struct adac_runtime *rt, uint64_t obj, const char *name, uint64_t *v, struct adac_error *err);
int adac_object_field_u32(struct adac_runtime *rt, uint64_t obj, const char *name, uint32_t *v, struct adac_error *err);

/* Address of thread-static field f on thread th (runtime/threads.h); *addr = 0 when the thread has
 * not allocated that type's thread statics yet. ADAC_E_BAD_ARG when f is not thread-static. */
struct adac_managed_thread;
int adac_field_thread_static_addr(struct adac_runtime *rt, const struct adac_managed_thread *th,
                                  const struct adac_field *f, uint64_t *addr, struct adac_error *err);

#endif
