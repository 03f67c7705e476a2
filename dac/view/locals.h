/* locals.h - the awaited locals of an async frame: which variables the suspension point saved
 * (async debug info for Continuation.State), where each lives in the continuation (flat layout:
 * at an offset of the object; array layout: Data/GCData by Offset/GCIndex), its type (method and
 * local signatures, instantiated) and name (PDB, Param table), and its value formatted like LLDB's
 * `frame variable`.
 *
 * Text, one line per variable, in IL order (this, arguments, locals), then the runtime's own slots:
 *       (int) aInt = 42
 *       (string) aString = "alpha"
 *       (AsyncdacSamples.Pair) aPair = { Id = 11, Tag = (object) 0x00007f... System.String "tag-a", Count = 12 }
 *       (int[]) aArray = int[3] { 1, 2, 3 }
 *       [generic context] = 0x00007f... AsyncdacSamples.NestedApp.C<System.String>(System.String, ...)
 *       [Flags] = 0x00001010 { ExecutionContext = 1, Result = 2 }
 *       [ExecutionContext] = null
 *       [result] = 0x0000000000000000 (slot 2 at 0x00007f...; written when the awaited call completes)
 * (see value_format.h for the value and type-name style). Names: the portable PDB's local scopes at
 * the await's IL offset for locals, the Param table for arguments; V_<n> (local n) and arg<n> (IL
 * argument n) when there is none. A problem with one variable is shown on its line:
 *       (int) x = <error: ...>
 * and a frame without usable information gets one line saying why:
 *       (no locals: <reason>)
 * Only the variables the debug info lists for the suspension point Continuation.State are shown:
 * slots of other suspension points may hold stale values.
 *
 * Array layout (the original design, no shipped runtime emits its debug info): the async debug
 * info lists each variable twice in a row with the same VarNumber: the first entry's Offset is the
 * byte offset of the value in Data (0xFFFFFFFF: none), the second's is its GCIndex (0xFFFFFFFF:
 * none). A value of S bytes is taken from Data[Offset .. Offset+S); its N object references (the
 * reference fields in ascending offset order, nested structs included; N = 1 for a reference) are
 * GCData[GCIndex .. GCIndex+N). */
#ifndef ADAC_LOCALS_H
#define ADAC_LOCALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "async/continuation.h"
#include "base/error.h"
#include "view/value_format.h"

struct adac_runtime;
struct adac_async_frame;
struct adac_debug_info;
struct adac_out;
struct json_t;

enum adac_local_kind {
	ADAC_LOCAL_THIS,
	ADAC_LOCAL_ARG,
	ADAC_LOCAL_LOCAL,
	ADAC_LOCAL_GENERIC_CONTEXT,   /* TYPECTXT_ILNUM: the exact MethodTable or InstantiatedMethodDesc */
	ADAC_LOCAL_SPECIAL,           /* another negative ILNUM (varargs handle, return buffer, ...) */
	ADAC_LOCAL_SLOT,              /* a well-known slot located through Flags, or Flags itself */
};

struct adac_local {
	enum adac_local_kind kind;
	int32_t var_number;        /* as the debug info gives it */
	uint32_t index;            /* ARG/THIS: IL argument number; LOCAL: local slot */
	char *name;                /* owned */
	struct adac_vtype type;
	uint8_t *bytes;            /* the value's bytes (type.size), NULL when it could not be read */
	uint64_t address;          /* flat: where the value lives; array: its place in Data (0: none) */
	uint32_t offset;           /* flat: from the continuation; array: in Data (UINT32_MAX: none) */
	uint32_t gc_index;         /* array: first GCData element (UINT32_MAX: none) */
	char *text;                /* SLOT/SPECIAL/GENERIC_CONTEXT: what is shown instead of a value */
	char *error;               /* why the value cannot be shown; owned */
};

struct adac_locals {
	struct adac_local *v;
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

/* Collects the locals of a resolved frame: the variables the suspension point Continuation.State
 * names saved, in the frame's debug info (the array layout's frames carry none: the method's
 * current code's). Returns -1 when the frame as a whole has no usable information (err says why:
 * ADAC_E_NOT_FOUND / ADAC_E_UNSUPPORTED when the runtime or the code recorded none,
 * ADAC_E_CORRUPT for debug info or a State that does not make sense). */
int adac_frame_locals_collect(struct adac_runtime *rt, const struct adac_async_frame *f, struct adac_locals *out,
                              struct adac_error *err);

void adac_locals_free(struct adac_locals *l);

/* Prints the lines described above, each starting with indent. `name` (may be NULL) restricts
 * them to the variables of that name; none is ADAC_E_NOT_FOUND. */
int adac_locals_print(struct adac_runtime *rt, const struct adac_locals *l, const char *name, const char *indent,
                      const struct adac_value_opts *o, struct adac_out *out, struct adac_error *err);

/* A JSON array of {"name","kind","var_number","type","offset","address","value","text",...}. */
struct json_t *adac_locals_json(struct adac_runtime *rt, const struct adac_locals *l, const char *name,
                                const struct adac_value_opts *o, struct adac_error *err);

/* For `bt --locals`: collect + print with the default limits; a frame without usable information
 * prints "(no locals: <reason>)" and returns 0 unless the debug info or State is corrupt. `name`
 * (may be NULL) restricts the output to one variable. Only a failure for the whole frame returns
 * -1. */
int adac_frame_locals_print(struct adac_runtime *rt, const struct adac_async_frame *f, const char *name,
                            const char *indent, struct adac_out *out, struct adac_error *err);

/* The same as a JSON array; NULL with err when the frame has no usable information. */
struct json_t *adac_frame_locals_json(struct adac_runtime *rt, const struct adac_async_frame *f, struct adac_error *err);

#endif
