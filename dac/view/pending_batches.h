/* pending_batches.h - the stacks of a listing (pending_list.h) resolved in order, in batches: by
 * the listing's thread as it gets to them, and ahead of it by helper threads. A helper resolves
 * through a target and a runtime of its own (adac_target_reopen): the runtime's caches are written
 * as they fill, so threads do not share them. The frames of a batch stay until the listing is past
 * it; helpers stay at most a few batches ahead, so that those stay bounded. */
#ifndef ADAC_PENDING_BATCHES_H
#define ADAC_PENDING_BATCHES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "async/classic_async.h"
#include "async/resolved_chain.h"
#include "base/error.h"

struct adac_pending;

/* One node of a stack, resolved. */
struct adac_pending_seg {
	const struct adac_async_node *node;
	bool has_view;
	struct adac_resolved_chain view;          /* CHAIN: its frames (a chain that cannot be walked at
	                                       * all: none, ending in its error) */
	struct adac_classic_frame classic;    /* BOX */
	uint32_t shown;                       /* the frames it shows (1 for a box or a task) */
};

#define ADAC_LIST_MAX_HELPERS 3u

struct adac_pending_batches;
/* Stack after stack, on this thread alone until helpers are started. NULL when memory runs out. */
struct adac_pending_batches *adac_pending_batches_new(struct adac_pending *p);
/* Starts up to n (at most ADAC_LIST_MAX_HELPERS) helpers, before the first stack is asked for:
 * those started (0 when the target cannot be opened twice). Their frames point into their own
 * runtimes: for listings that do not read values through the listing's runtime. */
unsigned adac_pending_batches_start(struct adac_pending_batches *b, unsigned n);
/* What a listing does with each stack on the thread that resolved it, right after (while its frames
 * are in that thread's cache, not the listing's): ctx is the thread's (ctxs[0] the listing's thread's,
 * ctxs[1 + k] helper k's), rt the runtime its frames were resolved with; what it writes to out is the
 * stack's text (adac_pending_batches_text). Stacks come in order on each thread, in no order across
 * them. Set before the first stack is asked for; helpers wait for that. The listing's thread then
 * sees a stack's segments without their links and frames. */
struct adac_runtime;
struct adac_out;
typedef void (*adac_batch_digest)(void *ctx, struct adac_runtime *rt, size_t stack, const struct adac_pending_seg *segs,
                                  struct adac_out *out);
void adac_pending_batches_digest(struct adac_pending_batches *b, adac_batch_digest fn, void *const *ctxs);
/* The segments of stack i (p->graph.stacks[i].count of them), asked for in order: valid until a
 * stack of another batch is asked for, or the release. NULL with err when its resolution failed (out
 * of memory, a layout not understood). */
struct adac_pending_seg *adac_pending_batches_stack(struct adac_pending_batches *b, size_t i, struct adac_error *err);
/* What the digest wrote for stack i, the stack asked for last: *len bytes (NULL without a digest). */
const char *adac_pending_batches_text(const struct adac_pending_batches *b, size_t i, size_t *len);
/* The listing is done with the stacks asked for so far. */
void adac_pending_batches_release(struct adac_pending_batches *b);
/* adac_frame_cache_stats over every thread's cache, as one cache would have counted. */
void adac_pending_batches_frame_stats(const struct adac_pending_batches *b, uint64_t *resolved, uint64_t *hits);
/* Stops the helpers: they finish the batch they are at (and its digest), and claim no other. */
void adac_pending_batches_stop(struct adac_pending_batches *b);
/* Stops the helpers and frees every frame and runtime of theirs. */
void adac_pending_batches_free(struct adac_pending_batches *b);

#endif
