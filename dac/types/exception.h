/* exception.h - the Exception contract: which types are exceptions (ExceptionMethodTable), the
 * fields an Exception object keeps (the runtime's descriptor names them), and the frames recorded
 * in its _stackTrace. Used by `pe` and by the exception line of a crashed thread. */
#ifndef ADAC_EXCEPTION_H
#define ADAC_EXCEPTION_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;

/* An Exception object's fields; references are 0 when null. */
struct adac_exception {
	uint64_t message;            /* _message (string) */
	uint64_t inner;              /* _innerException */
	uint64_t stack_trace;        /* _stackTrace (byte[], or object[] whose first element is it) */
	uint64_t stack_trace_string; /* _stackTraceString (string) */
	uint32_t hresult;            /* _HResult */
};

/* Is mt System.Exception or derived from it? *yes stays false when the runtime does not say
 * which MethodTable is Exception's (ExceptionMethodTable). */
int adac_exception_is(struct adac_runtime *rt, uint64_t mt, bool *yes, struct adac_error *err);

/* Only _message (what a one-line summary needs). */
int adac_exception_message(struct adac_runtime *rt, uint64_t obj, uint64_t *message, struct adac_error *err);

/* Every field above. ADAC_E_LAYOUT when the descriptor does not describe one of them. */
int adac_exception_read(struct adac_runtime *rt, uint64_t obj, struct adac_exception *out, struct adac_error *err);

/* One frame of _stackTrace: the instruction pointer (a return address, or the throw site's
 * instruction after the call that threw) and the stack pointer. */
struct adac_exception_frame {
	uint64_t ip, sp;
};

/* The frames _stackTrace holds: {count, thread, then per frame ip, sp, MethodDesc, flags}, every
 * slot pointer-sized. Up to max of them into frames; *total is how many the array records (bounded
 * by what fits in it). trace 0 gives none. */
int adac_exception_stack_trace(struct adac_runtime *rt, uint64_t trace, struct adac_exception_frame *frames,
                               unsigned max, unsigned *n, uint64_t *total, struct adac_error *err);

#endif
