/* thread_stack.h - a thread's stack as asyncdac shows it: its physical frames (the backend's
 * unwinder's, with the managed frames it skipped recovered from the runtime's own unwind info) and
 * the async chains it runs (its dispatcher records). */
#ifndef ADAC_THREAD_STACK_H
#define ADAC_THREAD_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "async/dispatcher.h"
#include "base/error.h"
#include "code/managed_unwind.h"

struct adac_runtime;
struct adac_managed_thread;

/* One physical frame. Its strings are valid during the visitor's call only. */
struct adac_stack_frame {
	uint64_t pc;
	uint64_t sp;                /* 0 when unknown */
	const char *module;         /* the module's file name, NULL when unknown */
	const char *symbol;         /* the backend's symbol, else the managed method's name; NULL if neither */
	uint64_t offset;            /* from the symbol's start (a managed method: from its code's start) */
	bool managed;               /* symbol is a managed method named from the runtime */
	const char *file;           /* the backend's source file, else a managed method's (the PDB's
	                             * path; a caller's line is its call instruction's); NULL when none */
	uint32_t line;
	bool recovered;             /* found by asyncdac's unwinder, not the backend's */
	bool caller;                /* not the innermost frame: pc is a return address */
	const struct adac_unwind_state *regs; /* a managed frame's registers (for its variables), else NULL */
};

/* Names sf->pc when it is managed code: symbol (the method), module, offset, managed, and the source
 * file and line (a caller's at its call instruction). Left as it was otherwise. */
void adac_stack_frame_name(struct adac_runtime *rt, struct adac_stack_frame *sf);

/* What receives a thread's frames, innermost first. frame returns non-zero to stop the walk before
 * that frame (which is then not part of the stack); error reports a problem unwinding past the last
 * frame given (the walk goes on with the backend's next frame). */
struct adac_stack_visitor {
	int (*frame)(void *ctx, const struct adac_stack_frame *f);
	void (*error)(void *ctx, const struct adac_error *err);
	void *ctx;
};

/* Walks the physical frames of OS thread `tid`. Every managed frame is unwound again from the
 * runtime's unwind info: when the caller that gives is not the backend's next frame (same PC and
 * SP), the frames it finds are inserted until one is the backend's again or the unwind leaves
 * managed code; backend frames below the SP reached are not on the stack and are left out.
 * -1 with err when the backend's unwinder failed (ADAC_E_UNSUPPORTED: it cannot unwind at all), after
 * the frames found before. */
int adac_thread_stack_walk(struct adac_runtime *rt, uint64_t tid, const struct adac_stack_visitor *v,
                           struct adac_error *err);

/* The words a thread blocked in a wait holds for it: its general registers (not its instruction and
 * stack pointers, nor its fs base), then each pointer-sized word of its stack from its stack pointer
 * up to `end` (the wait's caller's stack pointer; when that is not above the stack pointer, the
 * stack's base, else ADAC_MAX_STACK_SCAN_BYTES past it, which also caps the range), in that order.
 * word returns non-zero to stop. -1 with err when the thread's registers cannot be read. */
struct adac_managed_thread;
typedef int (*adac_thread_word_cb)(void *ctx, uint64_t value, uint64_t slot, bool in_register);
int adac_thread_wait_words(struct adac_runtime *rt, const struct adac_managed_thread *th, uint64_t end,
                           adac_thread_word_cb word, void *ctx, struct adac_error *err);

/* A chain a thread runs: the rest of it after the method running on the thread. */
struct adac_thread_chain {
	uint64_t head;              /* the running method's caller's continuation */
	uint64_t task;              /* the task being run, 0 when not recorded */
	uint64_t dispatcher;        /* the dispatch loop's record (AsyncDispatcherInfo) */
};

/* The chains managed thread th runs, innermost dispatch loop first: *n of them, out having room for
 * ADAC_MAX_DISPATCHERS. On failure, the chains of the records read before stay in out. */
int adac_thread_chains(struct adac_runtime *rt, const struct adac_managed_thread *th, struct adac_thread_chain *out,
                       size_t *n, struct adac_error *err);

/* A thread's frames' pcs and stack pointers (0: unknown), n of each, innermost first: what
 * adac_thread_chain_after reads. */
struct adac_frame_sps {
	uint64_t *pc, *sp;
	size_t n, cap;
};
/* -1 when out of memory. */
int adac_frame_sps_push(struct adac_frame_sps *l, uint64_t pc, uint64_t sp);
void adac_frame_sps_free(struct adac_frame_sps *l);

/* Where chain c goes among its thread's frames, as Visual Studio shows an async call stack: right
 * after the frame of the dispatch loop that resumed it, the frame holding the loop's record on its
 * stack (the last of the frames' stack pointers sp[0..n), innermost first, 0 when unknown, at or
 * below the record: stacks grow down). That frame's index; SIZE_MAX when no frame holds it. */
size_t adac_thread_chain_after(const struct adac_thread_chain *c, const uint64_t *sp, size_t n);

/* The method chain c resumed, running on OS thread tid: the innermost-first frame just inside the
 * frame of the dispatch loop (adac_thread_chain_after), past the frames debuggers hide (the resume
 * stub). *f is named as adac_stack_frame_name names it (its strings the runtime's, valid while rt
 * is; no registers). -1 with err when the thread cannot be unwound or none of its frames holds the
 * record or runs a method inside it. */
int adac_thread_chain_resumed(struct adac_runtime *rt, uint64_t tid, const struct adac_thread_chain *c,
                              struct adac_stack_frame *f, struct adac_error *err);

#endif
