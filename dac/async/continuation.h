/* continuation.h - runtime-async Continuation objects: the Continuation class and its layout, the
 * ContinuationFlags, and the chains continuations form (callee -> caller through Next). The only
 * place that resolves them: everything else asks here. */
#ifndef ADAC_CONTINUATION_H
#define ADAC_CONTINUATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/limits.h"

struct adac_runtime;
struct adac_arena;

enum adac_cont_layout_kind {
	ADAC_CONT_FLAT,   /* .NET 11: Next, ResumeInfo* -> {Resume, DiagnosticIP}, Flags, State, data inline */
	ADAC_CONT_ARRAY,  /* .NET 10: Next, Resume, State, Flags, byte[] Data, object[] GCData */
};

/* The Continuation class as this runtime lays it out; offsets are from the object address. */
struct adac_cont_layout {
	enum adac_cont_layout_kind kind;
	uint64_t class_mt;        /* System.Runtime.CompilerServices.Continuation, 0 while the runtime
	                           * has none (then no object is a continuation) */
	uint32_t next;            /* Next */
	uint32_t state;           /* State */
	bool has_flags;           /* flat: Flags is optional (only the well-known slots need it) */
	uint32_t flags;           /* Flags */
	uint32_t resume_info;     /* flat: ResumeInfo* */
	uint32_t ri_resume;       /* flat: ResumeInfo.Resume, from the ResumeInfo */
	uint32_t ri_diagnostic_ip;/* flat: ResumeInfo.DiagnosticIP, from the ResumeInfo */
	uint32_t data_start;      /* flat: the first byte of the data area */
	uint32_t resume;          /* array: Resume */
	uint32_t data, gc_data;   /* array: Data, GCData */
	uint32_t header_size;     /* bytes read per continuation */
};

/* Resolved once per runtime. Flat when the descriptor describes ContinuationObject, else array
 * (the Continuation class's FieldDescs). The class is the runtime's ContinuationMethodTable when
 * set, else CoreLib's loaded Continuation class, else none. ADAC_E_LAYOUT when the runtime's
 * layout cannot be understood. */
int adac_cont_layout(struct adac_runtime *rt, const struct adac_cont_layout **out, struct adac_error *err);

/* One continuation as read from the target. */
struct adac_continuation {
	uint64_t addr;
	int32_t state;           /* suspension point index (early: listings read it of every frame) */
	enum adac_cont_layout_kind layout; /* the layout it was read with */
	uint64_t mt;             /* its MethodTable (a runtime-created layout subtype, or a hand-rolled class) */
	uint64_t next;           /* caller's continuation, 0 at the outermost frame */
	uint64_t resume_info;    /* flat: the ResumeInfo* (0 when absent) */
	uint64_t resume;         /* resume stub entry point: ResumeInfo.Resume or Continuation.Resume */
	uint64_t diagnostic_ip;  /* flat: ResumeInfo.DiagnosticIP; 0 for infrastructure continuations */
	bool has_flags;
	uint32_t flags;
	uint64_t data;           /* array layout: the byte[] Data; 0 otherwise */
	uint64_t gc_data;        /* array layout: the object[] GCData; 0 otherwise */
};

/* Is mt the Continuation class, a runtime-created continuation layout, or a hand-rolled subclass?
 * Walks the parent chain (bounded). */
int adac_cont_is_continuation_mt(struct adac_runtime *rt, uint64_t mt, bool *yes, struct adac_error *err);

/* Reads the continuation at addr; ADAC_E_CORRUPT if the object there is not a continuation. */
int adac_cont_read(struct adac_runtime *rt, uint64_t addr, struct adac_continuation *c, struct adac_error *err);

/* ---- ContinuationFlags (flat layout) ---- */

/* The well-known slots whose index (1-based, 0: absent) the flags encode. */
enum adac_cont_slot {
	ADAC_CONT_SLOT_EXECUTION_CONTEXT,
	ADAC_CONT_SLOT_CONTINUATION_CONTEXT,
	ADAC_CONT_SLOT_EXCEPTION,
	ADAC_CONT_SLOT_RESULT,
	ADAC_CONT_SLOT_COUNT
};

/* "ExecutionContext", "ContinuationContext", "Exception", "Result". */
const char *adac_cont_slot_name(enum adac_cont_slot slot);

/* ContinuationFlags as the target's CoreLib defines it (the enum's literal fields). */
struct adac_cont_flags {
	uint32_t first_bit[ADAC_CONT_SLOT_COUNT], num_bits[ADAC_CONT_SLOT_COUNT];
	unsigned nnames;                               /* single-bit members (ContinueOnThreadPool, ...) */
	const char *name[ADAC_MAX_FLAG_NAMES];
	uint32_t value[ADAC_MAX_FLAG_NAMES];
	bool names_cut;                                /* more than ADAC_MAX_FLAG_NAMES: the rest unnamed */
};

/* Read once per runtime. ADAC_E_UNSUPPORTED for a CoreLib whose flags have no slot indices (an
 * older layout); the first failure is kept and given again. */
int adac_cont_flags(struct adac_runtime *rt, const struct adac_cont_flags **out, struct adac_error *err);

/* The index of `slot` in a Flags value (0: the continuation has no such slot). */
uint32_t adac_cont_flags_index(const struct adac_cont_flags *f, uint32_t flags, enum adac_cont_slot slot);

/* ---- chains ---- */

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
	uint64_t end_addr;                /* BROKEN: the address that failed; CYCLE: the repeated one;
	                                   * TRUNCATED: the next one */
	struct adac_error end_err;
};

/* Walks from head through Next, at most max_depth links (0: ADAC_MAX_CHAIN_DEPTH). Everything read
 * before a failure stays in the chain; the failure is described by end/end_err. Returns -1 only
 * when nothing could be allocated or head itself is not usable (err set). */
int adac_chain_walk(struct adac_runtime *rt, uint64_t head, size_t max_depth, struct adac_chain *chain,
                    struct adac_error *err);
/* As adac_chain_walk, the links in arena when not NULL (valid until its reset; adac_chain_free
 * must not be called then). */
int adac_chain_walk_in(struct adac_runtime *rt, uint64_t head, size_t max_depth, struct adac_arena *arena,
                       struct adac_chain *chain, struct adac_error *err);
void adac_chain_free(struct adac_chain *chain);

#endif
