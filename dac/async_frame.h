/* async_frame.h - one logical async frame: a continuation resolved to its method, native offset,
 * IL offset and source line, two independent ways (DiagnosticIP through the code map; Resume
 * through the resumption stub) and cross-checked; plus what a chain is waiting on. */
#ifndef ADAC_ASYNC_FRAME_H
#define ADAC_ASYNC_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#include "continuation.h"
#include "error.h"

struct adac_runtime;

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

	const char *method;           /* display name (runtime-owned or name_buf), NULL when unknown */
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

/* What an infrastructure continuation (the head of a suspended chain) is waiting on. */
struct adac_awaiting {
	uint64_t object;              /* the awaited Task or IValueTaskSource; 0 if unknown */
	uint64_t mt;
	const char *type;             /* its type name, NULL when unknown */
	const char *via;              /* the continuation field it came from ("Task", "Source") */
	bool has_token;
	int16_t token;                /* ValueTask source token */
};

int adac_awaiting_of(struct adac_runtime *rt, const struct adac_continuation *c, struct adac_awaiting *out,
                     struct adac_error *err);

#endif
