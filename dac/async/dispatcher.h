/* dispatcher.h - chains running on a thread: the runtime's per-thread dispatcher records
 * (CoreLib's [ThreadStatic] AsyncDispatcherInfo* AsyncDispatcherInfo.t_current, a stack-allocated
 * struct per dispatch loop, nested loops linked through Next). While a resumed async method runs,
 * its record's NextContinuation is the *caller's* continuation: the running method itself is an
 * ordinary stack frame. */
#ifndef ADAC_DISPATCHER_H
#define ADAC_DISPATCHER_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/limits.h"

struct adac_runtime;
struct adac_managed_thread;

struct adac_dispatcher {
	uint64_t addr;               /* the AsyncDispatcherInfo (on the thread's stack) */
	uint64_t next;               /* the enclosing dispatch loop's record */
	uint64_t next_continuation;  /* head of the rest of the running chain */
	uint64_t current_task;       /* the task being run, when recorded */
};

/* The dispatcher records of a thread, innermost first, at most max (ADAC_MAX_DISPATCHERS; more is
 * ADAC_E_LIMIT). *n = 0 when none is active. */
int adac_thread_dispatchers(struct adac_runtime *rt, const struct adac_managed_thread *th, struct adac_dispatcher *out,
                            size_t max, size_t *n, struct adac_error *err);

#endif
