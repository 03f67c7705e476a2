/* thread_groups.h - `pstacks` (SOS parallelstacks, Visual Studio's Parallel Stacks for threads): the
 * threads' physical stacks merged from their outermost frame, each frame once per group with the
 * number of threads through it, innermost first as a stack reads; a group's callees above it,
 * indented, and at the top of each branch the threads that end there:
 *
 *   ________________________________________________
 *         ~~~~ tid 8132, 8133
 *           2 System.Threading.LowLevelLifoSemaphore.WaitAsWaiter(Int32)
 *         ~~~~ tid 8131
 *              waiting for: System.Object 0x... (Monitor), held by thread tid 8134 (managed thread 7)
 *           1 System.Threading.Monitor.Enter(System.Object)
 *           1 MyApp.Worker.Update()
 *       3 System.Threading.PortableThreadPool+WorkerThread.WorkerThreadStart()
 *       3 System.Threading.Thread.StartCallback(System.Threading.Thread*)
 *
 *   ==> 3 threads with 1 root; 5 threads with no managed frame left out (pstacks --all
 *   shows them)
 *
 * Under a branch's threads, what they wait on (wait_chain.h's blocking scan): once when all wait on
 * the same, else per thread. A thread running an async chain has the chain's frames ("Method [async]",
 * the resumed method's logical callers) right after the frame of the dispatch loop that resumed it
 * (adac_thread_chain_after, as the LLDB plugin's frames).
 * Managed frames only (as SOS), named without their offsets and lines; --all: every thread, with
 * its native frames too (`module`symbol`). JSON: docs/json.md. */
#ifndef ADAC_THREAD_GROUPS_H
#define ADAC_THREAD_GROUPS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

struct adac_runtime;
struct adac_out;

struct adac_pstacks_opts {
	bool all;          /* native frames too, and the threads with no managed frame */
	size_t tids;       /* thread ids shown per group in text, 0: all */
	bool json;
};

/* -1 with err when the target's threads cannot be listed or the user interrupts the walk. */
int adac_pstacks_print(struct adac_runtime *rt, const struct adac_pstacks_opts *o, struct adac_out *out,
                       struct adac_error *err);

/* The same for report: what the threads wait on from b (NULL: not known); warning (may be NULL)
 * first among the warnings; as text (json NULL; o->json is not looked at), or *json set to what
 * `pstacks --json` holds under "pstacks". */
struct adac_blocked_threads;
struct json_t;
int adac_pstacks_render(struct adac_runtime *rt, const struct adac_pstacks_opts *o,
                        const struct adac_blocked_threads *b, const char *warning, struct json_t **json,
                        struct adac_out *out, struct adac_error *err);

#endif
