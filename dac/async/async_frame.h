/* async_frame.h - one logical async frame: a continuation resolved to its method, native offset,
 * IL offset and source line, two independent ways (DiagnosticIP through the code map; Resume
 * through the resumption stub) and cross-checked; plus what a chain is waiting on. */
#ifndef ADAC_ASYNC_FRAME_H
#define ADAC_ASYNC_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#include "async/continuation.h"
#include "base/error.h"

struct adac_runtime;
struct adac_suspension_point;

#define ADAC_FRAME_NOTE_MAX 512

struct adac_async_frame {
	struct adac_continuation cont;
	bool infrastructure;          /* no DiagnosticIP: a task/value-task continuation, not user code */
	bool hidden;                  /* a thunk or stub debuggers do not show */

	/* Route 1: DiagnosticIP -> code map (flat layout). */
	bool has_code;
	uint64_t method_desc;
	uint64_t code_start;
	uint64_t offset;              /* DiagnosticIP - code_start */
	/* Route 2: Resume -> resumption stub -> target. */
	uint64_t resume_md;           /* 0 when unknown */
	bool routes_disagree;         /* both routes answered with different methods */

	const char *method;           /* display name (runtime-owned or name_buf), NULL when unknown; for
	                               * shared generic code the exact instantiation when the
	                               * continuation says it (adac_frame_exact_inst) */
	const char *canonical_method; /* then the MethodDesc's own name (C<System.__Canon>), else NULL */
	const struct adac_suspension_point *shared_sp; /* shared generic code: the suspension point
	                               * whose saved vars say the instantiation (runtime-owned) */
	char name_buf[128];           /* a name known only as text (an ambiguous resume stub target) */
	const char *module;           /* module file name ("MyApp.dll"), NULL when unknown */
	uint32_t token;

	bool has_il;
	uint32_t il_offset;
	bool has_source;
	const char *file;             /* as recorded in the PDB */
	uint32_t line;

	/* Problems that did not stop the frame from being shown, "; "-separated (no PDB, state
	 * mismatch, route disagreement, ...). */
	char note[ADAC_FRAME_NOTE_MAX];
};

/* Resolves one continuation. Never fails: what could not be found is left unset and explained in
 * note. */
void adac_async_frame_resolve(struct adac_runtime *rt, const struct adac_continuation *c, struct adac_async_frame *f);

/* The exact instantiation behind a frame of shared generic code (C<System.__Canon> running for
 * C<System.String>), from the variables sp saves (flat layout): the generic-context slot holds the
 * exact InstantiatedMethodDesc (generic methods) or MethodTable (static methods of generic types);
 * instance methods of generic types have `this`, whose type (or a base type) is the exact one.
 * false when the method is not shared code or nothing the continuation saved says. */
enum adac_exact_from { ADAC_EXACT_METHOD_DESC, ADAC_EXACT_METHOD_TABLE, ADAC_EXACT_THIS };
struct adac_exact_inst {
	enum adac_exact_from from;
	uint64_t method_desc;   /* the exact InstantiatedMethodDesc (METHOD_DESC), else 0 */
	uint64_t method_table;  /* the exact type of the method */
};
bool adac_frame_exact_inst(struct adac_runtime *rt, const struct adac_async_frame *f,
                           const struct adac_suspension_point *sp, struct adac_exact_inst *out);

/* Names the frame by its exact instantiation (f->method, f->canonical_method) when it runs shared
 * generic code and the continuation says which: per continuation, after a frame is resolved or
 * copied from a cache of frames resolved by code address and state. */
void adac_async_frame_instantiate(struct adac_runtime *rt, struct adac_async_frame *f);

/* What an infrastructure continuation (the head of a suspended chain) is waiting on. */
struct adac_awaiting {
	uint64_t object;              /* the awaited Task or IValueTaskSource; 0 if unknown */
	uint64_t mt;
	const char *type;             /* its type name, NULL when unknown */
	const char *via;              /* the continuation field it came from ("Task", "Source") */
	bool has_token;
	int16_t token;                /* ValueTask source token */
	bool has_state_flags;         /* the awaited object is a Task: ... */
	uint32_t state_flags;         /* its m_stateFlags (adac_task_status: a completed task whose
	                               * continuation has not run points at a starved scheduler) */
};

int adac_awaiting_of(struct adac_runtime *rt, const struct adac_continuation *c, struct adac_awaiting *out,
                     struct adac_error *err);

#endif
