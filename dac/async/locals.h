/* locals.h - the awaited locals of an async frame: which variables the suspension point
 * Continuation.State names saved (async debug info), where each lives in the continuation, its
 * type, name and bytes; and the runtime's own slots the Flags locate. Printing is view/locals_view.h. */
#ifndef ADAC_LOCALS_H
#define ADAC_LOCALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "async/continuation.h"
#include "base/error.h"
#include "types/vtype.h"

struct adac_runtime;
struct adac_async_frame;

#define ADAC_LOCAL_NONE UINT32_MAX   /* no offset / no GCData index */
#define ADAC_LOCAL_FLAGS (-1)        /* adac_local.slot of Continuation.Flags itself */

enum adac_local_kind {
	ADAC_LOCAL_THIS,
	ADAC_LOCAL_ARG,
	ADAC_LOCAL_LOCAL,
	ADAC_LOCAL_GENERIC_CONTEXT,   /* TYPECTXT_ILNUM: the exact MethodTable or InstantiatedMethodDesc */
	ADAC_LOCAL_SPECIAL,           /* another negative ILNUM (varargs handle, return buffer, ...) */
	ADAC_LOCAL_SLOT,              /* Flags, or a well-known slot it locates (bytes: the raw value) */
};

struct adac_local {
	enum adac_local_kind kind;
	int32_t var_number;        /* as the debug info gives it */
	uint32_t index;            /* ARG/THIS: IL argument number; LOCAL: local slot */
	char *name;                /* the PDB's or the Param table's; else V_<n> / arg<n>; owned */
	struct adac_vtype type;
	uint8_t *bytes;            /* the value's bytes (type.size), NULL when it could not be read */
	uint64_t address;          /* flat: where the value lives; array: its place in Data (0: none) */
	uint32_t offset;           /* flat: from the continuation; array: in Data (ADAC_LOCAL_NONE: none) */
	uint32_t gc_index;         /* array: first GCData element (ADAC_LOCAL_NONE: none) */
	int slot;                  /* SLOT: enum adac_cont_slot, or ADAC_LOCAL_FLAGS (the Flags field) */
	uint32_t slot_index;       /* SLOT other than Flags: its index in the Flags (1-based) */
	char *error;               /* why the value cannot be read or decoded; owned */
	bool temporary;            /* LOCAL: the compiler's, not the source's (code/method_vars.h) */
};

struct adac_locals {
	struct adac_local *v;          /* this, arguments, locals (IL order), then the slots */
	size_t n;
	enum adac_cont_layout_kind layout;
	uint32_t state;
	uint32_t il_offset;            /* of the await, ADAC_IL_NO_MAPPING when unknown */
	uint32_t native_offset;        /* the suspension point's DiagnosticNativeOffset */
	char *warning;                 /* e.g. DiagnosticIP is not at the suspension point; owned */
	char *context;                 /* where the generic instantiation came from; owned, may be NULL */
	bool has_flags;
	uint32_t flags;
};

/* Collects the locals of a resolved frame from the debug info it carries (array-layout frames
 * carry none: the method's current code's). A problem with one variable is its `error`. Returns
 * -1 when the frame as a whole has no usable information (err says why: ADAC_E_NOT_FOUND /
 * ADAC_E_UNSUPPORTED when the runtime or the code recorded none, ADAC_E_CORRUPT for debug info or
 * a State that does not make sense). */
int adac_frame_locals_collect(struct adac_runtime *rt, const struct adac_async_frame *f, struct adac_locals *out,
                              struct adac_error *err);

void adac_locals_free(struct adac_locals *l);

#endif
