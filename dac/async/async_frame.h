/* async_frame.h - one logical async frame: a continuation resolved to its method, code version,
 * debug info, suspension point, IL offset and source line; and what a chain is waiting on. */
#ifndef ADAC_ASYNC_FRAME_H
#define ADAC_ASYNC_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#include "async/continuation.h"
#include "base/error.h"
#include "code/execution_manager.h"

struct adac_runtime;
struct adac_debug_info;
struct adac_suspension_point;

#define ADAC_FRAME_NOTE_MAX 512
#define ADAC_STATE_WHY_MAX 128

/* Continuation.State against the suspension points its code's debug info lists. */
enum adac_state_verdict {
	ADAC_STATE_UNCHECKED,     /* no debug info with suspension points to check it against */
	ADAC_STATE_OK,            /* it names a suspension point (at DiagnosticIP, when that is known) */
	ADAC_STATE_MISMATCH,      /* it names a suspension point elsewhere than DiagnosticIP */
	ADAC_STATE_OUT_OF_RANGE,  /* it names no suspension point */
};

/* Checks `state` against di: the verdict, the point it names (*sp, NULL when none) and, in why
 * ("" when OK or UNCHECKED), the verdict in words. has_offset: DiagnosticIP's offset in the code is
 * known (flat layout) and the point must be there. */
enum adac_state_verdict adac_state_check(const struct adac_debug_info *di, int32_t state, bool has_offset,
                                         uint64_t offset, const struct adac_suspension_point **sp, char *why,
                                         size_t size);

/* The exact instantiation behind a frame of shared generic code (C<System.__Canon> running for
 * C<System.String>), from what the continuation saved: the generic-context variable, or `this`. */
enum adac_exact_from { ADAC_EXACT_METHOD_DESC, ADAC_EXACT_METHOD_TABLE, ADAC_EXACT_THIS };
struct adac_exact_inst {
	enum adac_exact_from from;
	uint64_t method_desc;   /* the exact InstantiatedMethodDesc (METHOD_DESC), else 0 */
	uint64_t method_table;  /* the exact type of the method */
};

struct adac_async_frame {
	/* What a listing reads of every frame, first, in one or two cache lines (with cont.state): a
	 * million-chain listing reads frames another thread resolved. */
	bool infrastructure;          /* no DiagnosticIP: a task/value-task continuation, not user code */
	bool hidden;                  /* a thunk or stub debuggers do not show */
	bool has_il;
	bool has_source;
	uint32_t il_offset;
	const char *method;           /* display name (runtime-owned or name_buf), NULL when unknown; the
	                               * exact instantiation when has_exact */
	const char *module;           /* module file name ("MyApp.dll"), NULL when unknown */
	const char *file;             /* as recorded in the PDB */
	uint32_t line;
	struct adac_continuation cont;

	/* Route 1: DiagnosticIP -> code map (flat layout): the code version that made the continuation,
	 * its debug info (runtime-owned, NULL when none: debug_info_err says why) and the suspension
	 * point State names in it. */
	bool has_code;
	struct adac_code_info code;
	const struct adac_debug_info *debug_info;
	enum adac_state_verdict state_verdict;
	const struct adac_suspension_point *sp; /* runtime-owned, NULL when State names none */
	/* Route 2: Resume -> resumption stub -> target. */
	uint64_t resume_md;           /* 0 when unknown */
	bool routes_disagree;         /* both routes answered with different methods */

	uint64_t method_desc;         /* route 1's, else route 2's; 0 when neither */
	bool shared_code;             /* the method is shared generic code (C<System.__Canon>) */
	bool has_exact;               /* ... and the continuation says which instantiation runs */
	struct adac_exact_inst exact;
	const char *canonical_method; /* then the MethodDesc's own name (C<System.__Canon>), else NULL */
	uint32_t token;

	/* Text, last: the fields above are what a listing reads of each frame, kept together. */
	struct adac_error debug_info_err;
	char state_why[ADAC_STATE_WHY_MAX]; /* the verdict in words, "" when OK or UNCHECKED */
	char name_buf[128];           /* a name known only as text (an ambiguous resume stub target) */
	/* Problems that did not stop the frame from being shown, "; "-separated (no PDB, state
	 * mismatch, route disagreement, ...). Last: a frame is copied up to its note's text. */
	char note[ADAC_FRAME_NOTE_MAX];
};

/* Resolves one continuation. Never fails: what could not be found is left unset and explained in
 * note. */
void adac_async_frame_resolve(struct adac_runtime *rt, const struct adac_continuation *c, struct adac_async_frame *f);

/* Sets the frame's debug info and checks its State against it (resolution does; tests give their
 * own). */
void adac_async_frame_use_debug_info(struct adac_async_frame *f, const struct adac_debug_info *di);

/* (Re)computes exact and the frame's names for its own continuation: after a frame is resolved, or
 * copied from a frame resolved for the same code and State. */
void adac_async_frame_instantiate(struct adac_runtime *rt, struct adac_async_frame *f);

/* Copies a frame (its note's text only), keeping a name held in the frame itself. */
void adac_async_frame_copy(struct adac_async_frame *dst, const struct adac_async_frame *src);

/* Is the frame one `bt` shows (user code, not a thunk or an infrastructure continuation)? */
bool adac_async_frame_shown(const struct adac_async_frame *f);

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
	const char *kind;             /* its kind, the same for all of that kind (awaited.h); NULL: none */
	char leaf[192];               /* what it is, when that says more than its type (awaited.h) */
};

int adac_awaiting_of(struct adac_runtime *rt, const struct adac_continuation *c, struct adac_awaiting *out,
                     struct adac_error *err);

#endif
