/* continuation.h - runtime-async Continuation objects and the chains they form (callee -> caller
 * through Next), in both layouts the runtime has used:
 *   flat  (.NET 11): Next, ResumeInfo* -> {Resume, DiagnosticIP}, Flags, State, data inline;
 *   array (.NET 10 with DOTNET_RuntimeAsync=1): Next, Resume, State, Flags, byte[] Data, object[] GCData.
 * The layout is chosen from what the runtime describes (descriptor types, else the Continuation
 * class's own fields), never from a version number. */
#ifndef ADAC_CONTINUATION_H
#define ADAC_CONTINUATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;

enum adac_cont_layout_kind { ADAC_CONT_FLAT, ADAC_CONT_ARRAY };

/* One continuation as read from the target. */
struct adac_continuation {
	uint64_t addr;
	uint64_t mt;             /* its MethodTable (a runtime-created layout subtype, or a hand-rolled class) */
	uint64_t next;           /* caller's continuation, 0 at the outermost frame */
	uint64_t resume_info;    /* flat: the ResumeInfo* (0 when absent) */
	uint64_t resume;         /* resume stub entry point: ResumeInfo.Resume or Continuation.Resume */
	uint64_t diagnostic_ip;  /* flat: ResumeInfo.DiagnosticIP; 0 for infrastructure continuations */
	int32_t state;           /* suspension point index */
	bool has_flags;
	uint32_t flags;
	uint64_t data;           /* array layout: the byte[] Data; 0 otherwise */
	uint64_t gc_data;        /* array layout: the object[] GCData; 0 otherwise */
};

int adac_cont_layout(struct adac_runtime *rt, enum adac_cont_layout_kind *kind, struct adac_error *err);

/* Is mt the Continuation class, a runtime-created continuation layout, or a hand-rolled subclass?
 * Walks the parent chain (bounded). */
int adac_cont_is_continuation_mt(struct adac_runtime *rt, uint64_t mt, bool *yes, struct adac_error *err);

/* Reads the continuation at addr; ADAC_E_CORRUPT if the object there is not a continuation. */
int adac_cont_read(struct adac_runtime *rt, uint64_t addr, struct adac_continuation *c, struct adac_error *err);

/* The head Continuation of the object at addr: the object itself when it is a continuation, or the
 * m_stateObject of a task that owns a chain (*task = addr then, else 0). ADAC_E_BAD_ARG naming the
 * object's type when it is neither. */
int adac_chain_head_of(struct adac_runtime *rt, uint64_t addr, uint64_t *head, uint64_t *task, struct adac_error *err);

/* How a walk ended. */
enum adac_chain_end {
	ADAC_CHAIN_COMPLETE,   /* reached Next == null */
	ADAC_CHAIN_TRUNCATED,  /* stopped at the depth the caller asked for */
	ADAC_CHAIN_BROKEN,     /* a link could not be read or is not a continuation (end_err says why) */
	ADAC_CHAIN_CYCLE,      /* Next led back to a continuation already in the chain */
};

struct adac_chain {
	struct adac_continuation *links;  /* head (innermost) first */
	size_t count;
	enum adac_chain_end end;
	uint64_t end_addr;                /* BROKEN: the address that failed; CYCLE: the repeated one */
	struct adac_error end_err;
};

/* Walks from head through Next, at most max_depth links (0: ADAC_MAX_CHAIN_DEPTH). Everything read
 * before a failure stays in the chain; the failure is described by end/end_err. Returns -1 only
 * when nothing could be allocated or head itself is not usable (err set). */
int adac_chain_walk(struct adac_runtime *rt, uint64_t head, size_t max_depth, struct adac_chain *chain,
                    struct adac_error *err);
void adac_chain_free(struct adac_chain *chain);

#endif
