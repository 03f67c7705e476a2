/* awaited.h - what an awaited object is, for a human triaging a hang: a promise (a
 * TaskCompletionSource's task) never completed, a Task.Delay timer and its due time, a SemaphoreSlim
 * waiter, Task.WhenAll progress, Task.WhenAny, or a completed task whose continuation has not run.
 * Read from the object's own fields (by name, through the runtime's FieldDescs); the CoreLib type
 * says which fields to read. */
#ifndef ADAC_AWAITED_H
#define ADAC_AWAITED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct adac_runtime;

/* Writes the description of the object at obj (MethodTable mt, type name `type`, m_stateFlags when
 * has_flags) into buf; "" when there is nothing to add to its type. Never fails: unreadable parts
 * are left out. */
void adac_awaited_describe(struct adac_runtime *rt, uint64_t obj, uint64_t mt, const char *type, bool has_flags,
                           uint32_t flags, char *buf, size_t size);

#endif
