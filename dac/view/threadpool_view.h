/* threadpool_view.h - `threadpool` (SOS threadpool -wi, dotnet-dump threadpoolqueue): the managed
 * thread pool's workers, what each one is doing, and the work items waiting for them:
 *
 *   Using the portable thread pool.
 *
 *   CPU utilization:  0%
 *   Workers Total:    2
 *   Workers Running:  2
 *   ...
 *
 *   Worker threads:
 *   thread tid <T> (managed thread <M>): in ManualResetEventSlim.Wait on System.Threading.ManualResetEventSlim 0x...
 *     then: ...                                  (the wait chain, as report's "== Blocked threads")
 *   thread tid <T> (managed thread <M>): running: it is in <CoreLib method>, called from <method> at <file>:<line>
 *   thread tid <T> (managed thread <M>): idle: waiting for work
 *
 *   Queued work items: 4 (4 global, 0 local)
 *        Count  Work item
 *            3  AsyncdacSamples.StarvedApp.Noop(System.Object)
 *            1  resumes AsyncdacSamples.StarvedApp.Waiter() at Program.cs:35
 *
 * and with --items each item (SOS's table: queue, object, type, then "=> what it runs"). What a work
 * item runs: a delegate's method (a Task's action, a QueueUserWorkItem callback), or the async method
 * a task queued to resume its chain (a runtime-async task's, or a classic state machine box's) goes
 * on at. JSON: docs/json.md. */
#ifndef ADAC_THREADPOOL_VIEW_H
#define ADAC_THREADPOOL_VIEW_H

#include <stdbool.h>

#include "base/error.h"

struct adac_runtime;
struct adac_out;

/* items: list each work item too. -1 with err when the pool's queues cannot be read at all or the
 * user interrupts a heap scan (which runs only when a worker waits synchronously for a task). */
int adac_threadpool_print(struct adac_runtime *rt, bool items, bool json, struct adac_out *out, struct adac_error *err);

/* report's "== Thread pool": the figures on one line, then the queued work items counted by what they
 * run (the first ADAC_REPORT_POOL_ROWS rows):
 *   2 of 2 workers busy (at most 2), CPU 0%; 5 work items queued (4 global, 1 local), by what they run:
 *            3  AsyncdacSamples.StarvedApp.Noop(System.Object)
 * or, root not NULL, its member "thread_pool" (`threadpool --json`'s started, cpu_utilization, workers,
 * queued, summary; null when the queues cannot be read), warnings to the array warnings. */
#define ADAC_REPORT_POOL_ROWS 10u
struct json_t;
void adac_threadpool_report(struct adac_runtime *rt, struct json_t *root, struct json_t *warnings,
                            struct adac_out *out);

#endif
