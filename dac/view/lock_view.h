/* lock_view.h - `locks`: every lock held in the process (types/locks.h), one line each:
 *
 *   lock 0x<object> <Type> (Monitor): held by thread tid <T> (managed thread <M>), entered once; 2 threads waiting
 *   lock 0x<object> <Type> (Monitor, thin lock): held by thread tid <T> (managed thread <M>), entered 2 times
 *   lock 0x<lock> System.Threading.Lock: held by thread tid <T> (managed thread <M>), entered once; 1 thread waiting
 *
 *     waiting: thread tid <T> (managed thread <M>)     (each thread found waiting for it)
 *   deadlock: thread tid <A> (...) waits for <lock> held by thread tid <B> (...), which waits for ...
 *   deadlock: thread tid <A> (...) waits synchronously for task 0x<T> (...), whose stack runs on ...
 *
 *   3 locks held; sync table: N entries in use.
 *
 * "thread tid <T>" is the thread's OS id (`bt --thread T`); a holder the runtime has no thread for is
 * named by its managed id alone. JSON: docs/json.md. */
#ifndef ADAC_LOCK_VIEW_H
#define ADAC_LOCK_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;
struct adac_out;
struct adac_held_lock;

/* The second kind of deadlock needs the heap's stacks (async/pending.h): they are scanned only when a
 * thread waits for a task (Task.Wait(), .Result). -1 with err when the locks cannot be found or the
 * user interrupts a scan. */
int adac_locks_print(struct adac_runtime *rt, bool json, struct adac_out *out, struct adac_error *err);

/* "thread tid <T> (managed thread <M>)": who holds a lock, for other views' lines too. */
const char *adac_lock_holder(const struct adac_held_lock *l, char *buf, size_t size);
/* "System.Object 0x<object> (Monitor)": what a lock is, for other views' lines. */
void adac_lock_describe(struct adac_runtime *rt, const struct adac_held_lock *l, char *buf, size_t size);

/* "thread tid <A> (managed thread <a>) waits for <lock 1> held by thread tid <B> (...), which waits for
 * <lock 2> held by thread tid <A> (...)": a cycle of adac_lock_cycle_next's (async/lock_wait.h), in
 * buf. */
struct adac_held_locks;
char *adac_lock_deadlock_text(struct adac_runtime *rt, const struct adac_held_locks *h, const size_t *cycle, size_t n,
                              char *buf, size_t size);

/* "thread tid <A> (managed thread <a>) waits synchronously for task 0x<T> (Task.Wait(), ...), whose stack
 * runs on thread tid <B> (...), which waits for <lock> held by thread tid <A> (...)": a cycle of
 * async/wait_cycle.h's from its step `first`, in buf. */
struct adac_wait_step;
char *adac_wait_cycle_text(struct adac_runtime *rt, const struct adac_held_locks *h, const struct adac_wait_step *steps,
                           size_t n, size_t first, char *buf, size_t size);

/* "  waiting for: <lock>, held by thread tid <T> (...)": the line `bt` and `ps` print under a thread
 * waiting to enter l. */
void adac_lock_waiting_print(struct adac_runtime *rt, const struct adac_held_lock *l, struct adac_out *out);
/* The type of an object (a held lock's, a Monitor.Wait's, a thread's exception), as the runtime names it (its string,
 * which stays put while the runtime is open); NULL when unknown. */
const char *adac_lock_object_type(struct adac_runtime *rt, uint64_t object);
/* {"object", "type", "owner": {"tid", "managed_id"}}: a lock as `ps --json` names the one a running
 * chain's thread waits for. */
struct json_t;
struct json_t *adac_lock_brief_json(struct adac_runtime *rt, const struct adac_held_lock *l);

/* "  in Monitor.Wait: ..." (adac_lock_monitor_wait_text): the line `bt` and `ps` print under a thread in
 * Monitor.Wait; as JSON
 * {"object", "type", "condition", "owner": {"tid", "managed_id"} or null, "timeout_ms"}. */
struct adac_monitor_wait;
void adac_lock_monitor_wait_print(struct adac_runtime *rt, const struct adac_held_locks *h,
                                  const struct adac_monitor_wait *m, struct adac_out *out);
struct json_t *adac_lock_monitor_wait_json(struct adac_runtime *rt, const struct adac_held_locks *h,
                                           const struct adac_monitor_wait *m);

/* What a thread is blocked on, as a line's text without indent or newline, in buf: "waiting for:
 * <lock>, held by <holder>"; "in Monitor.Wait: waiting for a pulse on <object> (Monitor[ of
 * System.Threading.SemaphoreSlim 0x...]), held by ... | which no thread holds[, timeout <n> ms]"; "in
 * ManualResetEventSlim.Wait on System.Threading.ManualResetEventSlim 0x...[, timeout]", or for a
 * Condition of no known owner "waiting on System.Threading.Condition 0x... (of System.Threading.Lock
 * 0x...)[, timeout]" (NULL for a Task.Wait()'s: the task's synchronous wait says it). By the thread's
 * OS id: the one of these that is its (NULL when none). */
struct adac_lock_waits;
struct adac_monitor_wait;
struct adac_condition_wait;
const char *adac_lock_waiting_text(struct adac_runtime *rt, const struct adac_held_lock *l, char *buf, size_t size);
const char *adac_lock_monitor_wait_text(struct adac_runtime *rt, const struct adac_held_locks *h,
                                       const struct adac_monitor_wait *m, char *buf, size_t size);
const char *adac_lock_condition_wait_text(const struct adac_held_locks *h, const struct adac_condition_wait *c,
                                         char *buf, size_t size);
const char *adac_lock_thread_wait_text(struct adac_runtime *rt, const struct adac_held_locks *h,
                                       const struct adac_lock_waits *waits, uint64_t tid, char *buf, size_t size);

/* For `bt`: what thread tid is blocked on (adac_lock_thread_wait_text, indented) and, when it waits to
 * enter a lock, the deadlock it is in ("  deadlock: ..."); "  waiting for: a lock ..., not found among
 * the locks held" when none of waits is the thread's. Whether it printed a deadlock. */
struct adac_lock_waits;
struct adac_out;
bool adac_lock_wait_print(struct adac_runtime *rt, const struct adac_held_locks *h, const struct adac_lock_waits *waits,
                          uint64_t tid, struct adac_out *out);

#endif
