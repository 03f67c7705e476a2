/* threads_view.h - `clrthreads` (SOS threads/clrthreads, Visual Studio's Threads window): the runtime's
 * managed threads, one line each, and under it what the thread is doing:
 *
 *   ThreadCount:      7
 *   UnstartedThread:  0
 *   BackgroundThread: 5
 *   PendingThread:    0
 *   DeadThread:       0
 *
 *    DBG   ID     OSID ThreadOBJ          State      GC Mode     Locks Name / kind / exception
 *      1    1    32410 0x000055d1e2a3b2c0 0x00020020 Preemptive      1 "Main"
 *          running: it is in System.Threading.Thread.Sleep(Int32), called from ... at Sample.cs:30
 *      8    4    32418 0x000055d1e2a4c5a0 0x01021220 Preemptive      0 ".NET TP Worker" (Threadpool Worker)
 *          in ManualResetEventSlim.Wait on System.Threading.ManualResetEventSlim 0x...
 *            then: ...                 (its wait chain, as report's blocked threads)
 *
 * DBG is the thread's index as `bt` and the debugger number it; a thread that ended has none ("-").
 * Locks: the locks it holds, counted from the locks themselves (`locks`), "?" when they cannot be read.
 * What a thread does: what it waits on as the runtime records it (a lock, Monitor.Wait, an event, a
 * task waited for synchronously) and its wait chain, else where it runs the app's code, else what the
 * runtime's own threads do (idle thread-pool worker, the pool's gate thread). JSON: docs/json.md. */
#ifndef ADAC_THREADS_VIEW_H
#define ADAC_THREADS_VIEW_H

#include <stdbool.h>

#include "base/error.h"

struct adac_runtime;
struct adac_out;

/* -1 with err when the thread list cannot be read at all or the user interrupts a scan. */
int adac_clrthreads_print(struct adac_runtime *rt, bool json, struct adac_out *out, struct adac_error *err);

#endif
