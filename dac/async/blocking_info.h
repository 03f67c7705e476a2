/* blocking_info.h - what a thread is blocked on, as the runtime records it for debuggers (Visual
 * Studio's "waiting on lock owned by thread" comes from it): CoreLib's [ThreadStatic]
 * ThreadBlockingInfo* ThreadBlockingInfo.t_first, a struct on the thread's stack for each blocking
 * wait in progress (nested waits linked through _next, innermost first). Its _objectPtr points at
 * a stack slot holding the object waited on: in CoreLib 11.0 a System.Threading.Lock being entered
 * (lock, Monitor.Enter, Lock.Enter) or a System.Threading.Condition being waited on (Monitor.Wait,
 * and ManualResetEventSlim.Wait under Task.Wait()). What the object is comes from its type, not
 * from _objectKind's number, which trimmed metadata does not name. (In async/ beside the other
 * waits, as dispatcher.h reads its thread-static.) */
#ifndef ADAC_BLOCKING_INFO_H
#define ADAC_BLOCKING_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;
struct adac_managed_thread;

enum adac_blocking_kind {
	ADAC_BLOCKING_LOCK,      /* entering a Lock (a Monitor's, or one used as such) */
	ADAC_BLOCKING_CONDITION, /* waiting on a Condition: for a pulse (Monitor.Wait) or a signal */
	ADAC_BLOCKING_OTHER,     /* an object of another type, or a native one (_objectKind's Monitor
	                          * kinds point at a runtime AwareLock, not at a stack slot) */
};

struct adac_blocking {
	uint64_t addr;           /* the ThreadBlockingInfo, on the thread's stack */
	enum adac_blocking_kind kind;
	uint32_t object_kind;    /* _objectKind as recorded */
	uint64_t object;         /* the Lock or Condition; OTHER: the object read from the slot, 0 if none */
	uint64_t lock;           /* the Lock entered or the Condition's (its _lock); 0 for OTHER */
	int32_t timeout_ms;      /* -1: none */
};

/* The blocking records of thread th, innermost first, at most max (ADAC_MAX_BLOCKING_INFOS; more is
 * ADAC_E_LIMIT). *n = 0 when it is blocked on nothing recorded, or CoreLib never loaded the type. */
int adac_thread_blocking(struct adac_runtime *rt, const struct adac_managed_thread *th, struct adac_blocking *out,
                         size_t max, size_t *n, struct adac_error *err);

/* The innermost of them (what the thread is blocked on now): false when it has none or they cannot be
 * read (*err; err may be NULL). */
bool adac_thread_innermost_blocking(struct adac_runtime *rt, const struct adac_managed_thread *th,
                                    struct adac_blocking *b, struct adac_error *err);

#endif
