/* backtrace_view.h - threads and chains as `bt` shows them, LLDB's backtrace style: a thread's
 * physical frames then the async frames of the chains it runs; a chain with its owner. */
#ifndef ADAC_BACKTRACE_VIEW_H
#define ADAC_BACKTRACE_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;
struct adac_thread;
struct adac_resolved_chain;
struct adac_async_frame;
struct adac_out;
struct json_t;

struct adac_bt_opts {
	size_t count;       /* frames shown per list, 0: all */
	size_t depth;       /* links walked per chain */
	unsigned flags;     /* ADAC_VIEW_* (chain_view.h) */
	/* Text: called after the physical frames of a thread that blocks in a synchronous wait for a
	 * task (a frame of Task.SpinThenBlockingWait: Task.Wait(), .Result, GetAwaiter().GetResult()),
	 * to say what it waits for; NULL: nothing is said. */
	void (*blocked)(void *ctx, const struct adac_thread *th, struct adac_out *out);
	void *blocked_ctx;
	/* Text: called after the physical frames of a thread that waits to enter a lock (a frame of
	 * Lock.TryEnterSlow: Monitor.Enter, Lock.Enter), to say which; NULL: nothing is said. */
	void (*waits_lock)(void *ctx, const struct adac_thread *th, struct adac_out *out);
	void *waits_lock_ctx;
};

/* "<*| > thread #N[, name = '<name>'], tid = <tid>[, stop reason = <why>]" (selected: marked '*' as
 * LLDB marks its selected thread), "  exception: ..." when it crashed with one, its frames
 * ("  frame #N: <pc> <module>`<symbol> + <offset>[ at <file>:<line>]", managed offsets in hex; a
 * problem unwinding past a frame on its own line after it), then the async frames of each chain it
 * runs, numbered on from one chain to the next. Returns how many chains it runs. */
size_t adac_bt_thread_print(struct adac_runtime *rt, const struct adac_thread *th, bool selected,
                            const struct adac_bt_opts *o, struct adac_out *out);
/* The same as {"index", "tid", "name", "frames", "chains", "error"?}; frames recovered by
 * asyncdac carry "unwound_by": "asyncdac", and a problem unwinding past one "unwind_error". */
struct json_t *adac_bt_thread_json(struct adac_runtime *rt, const struct adac_thread *th, const struct adac_bt_opts *o);

/* "async chain of [task <address> (<type>), ]Continuation <head>", then the chain's frames. */
void adac_bt_chain_print(struct adac_runtime *rt, const struct adac_resolved_chain *v, uint64_t head,
                         const struct adac_bt_opts *o, struct adac_out *out);

/* Async frame number n as the listings above number them: of the chain at head, or across the
 * chains OS thread tid runs (*head: the chain it is in). ADAC_E_BAD_ARG saying how many there are
 * when there is no frame n. */
int adac_bt_chain_frame(struct adac_runtime *rt, uint64_t head, uint64_t n, struct adac_async_frame *f,
                        struct adac_error *err);
int adac_bt_thread_frame(struct adac_runtime *rt, uint64_t tid, uint64_t n, struct adac_async_frame *f, uint64_t *head,
                         struct adac_error *err);

#endif
