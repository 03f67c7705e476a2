/* pending_list.h - the stacks `ps` lists, one at a time: each stack of pending operations
 * (async/pending.h) resolved into the frames the views show, without the stacks nothing owns that
 * have no user frame, and only those matching the filters (any frame or object of a stack, as SOS
 * dumpasync's filters match).
 * (A listing over resolved chains, view/chain_view.h: it joins async/ when they do.) */
#ifndef ADAC_PENDING_LIST_H
#define ADAC_PENDING_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "async/pending.h"
#include "types/typename.h"
#include "view/chain_view.h"
#include "view/pending_batches.h"

struct adac_out;

struct adac_pending_filter {
	const char *method;         /* a frame's method name contains it (ignoring case); NULL: any */
	const char *type;           /* the type name of an object of the stack (task, state machine,
	                             * continuation, awaited object) contains it, in any spelling
	                             * (adac_type_filter); NULL: any */
	const uint64_t *addresses;  /* an object of the stack is at one of them; none: any */
	size_t naddresses;
	const char *status;         /* a task of the stack has this Task.Status (adac_task_status); NULL: any */
	uint64_t mt;                /* an object of the stack has this MethodTable; 0: any */
};

/* A listed stack, valid until the next call of adac_pending_list_next. */
struct adac_pending_stack {
	size_t index;                         /* among the listed stacks */
	size_t number;                        /* its number among every stack with frames, filtered or
	                                       * not: `chain #N`, the same whatever the filters */
	const struct adac_async_stack *stack;
	struct adac_pending_seg *segs;        /* stack->count of them, innermost first */
	const struct adac_scan_running *running; /* the thread running the chain it starts with */
	struct adac_runtime *rt;              /* what to read the target and name types through: the
	                                       * listing's, or in a digest the resolving thread's */
	const char *text;                     /* the bytes the digest wrote for it (adac_pending_list_digest: */
	size_t text_len;                      /* text, or --coalesce's node), else NULL */
};

/* What adac_pending_list_digest does with each listed stack (its index and number are unset), on
 * whichever thread resolved it: ctx is that thread's; it reads the target through st->rt alone.
 * What it writes to out is the stack's text (adac_pending_stack.text). */
typedef void (*adac_pending_stack_digest)(void *ctx, const struct adac_pending_stack *st, struct adac_out *out);
struct adac_pending_digest {
	struct adac_pending_list *l;
	adac_pending_stack_digest fn;
	void *ctx;
};

struct adac_pending_list {
	struct adac_pending *p;
	struct adac_pending_filter filter;
	struct adac_type_filter type;         /* filter.type in every spelling */
	struct adac_out *out;                 /* progress */
	struct adac_pending_batches *batches; /* the stacks resolved (here, or ahead by helper threads) */
	struct adac_pending_seg *segs;        /* the current stack's */
	size_t next;                          /* the next stack of p->graph */
	unsigned helpers;                     /* helper threads started (adac_pending_list_parallel) */
	bool timings;                         /* JSON: the scan's wall times (ps --timings) */
	bool completed;                       /* also the completed async tasks still on the heap
	                                       * (ps --completed; the listing's text and JSON) */
	/* So far: */
	size_t listed, without_frames, filtered_out, frames_listed, running;
	size_t numbered;                      /* stacks with frames so far, filtered or not */
	struct adac_pending_digest digests[1 + ADAC_LIST_MAX_HELPERS];
	uint8_t *digest_filtered;             /* with a digest and filters: per stack, 1 when the thread
	                                       * that resolved it found it filtered out (the frames are
	                                       * gone by the listing's turn) */
};

int adac_pending_list_init(struct adac_pending_list *l, struct adac_pending *p, const struct adac_pending_filter *filter,
                           struct adac_out *out, struct adac_error *err);
/* The next listed stack: 1 and *st, 0 after the last one (its progress then ends), or -1 with err
 * (out of memory, or a layout the frames need is not understood). Marks each stack's fate. */
int adac_pending_list_next(struct adac_pending_list *l, struct adac_pending_stack *st, struct adac_error *err);
void adac_pending_list_free(struct adac_pending_list *l);

/* Resolves the stacks ahead of the listing on helper threads too (pending_batches.h): the listing
 * is the same, in the same order. One helper per CPU but one, for listings of at least
 * ADAC_LIST_HELPER_MIN_STACKS stacks (ASYNCDAC_LIST_HELPERS=N asks for N, 0 to
 * ADAC_LIST_MAX_HELPERS, whatever the listing). Call before the first adac_pending_list_next, and
 * only for views that do not read locals: a helper's frames point into its own runtime. The helpers
 * started: 0 when the target cannot be opened twice (a process held) or none is wanted. */
#define ADAC_LIST_HELPER_MIN_STACKS 20000u
unsigned adac_pending_list_parallel(struct adac_pending_list *l);
/* Has fn see each stack the listing lists, once, on the thread that resolved it, right after (its
 * frames are in that thread's cache: pending_batches.h), besides adac_pending_list_next's: ctxs[0]
 * for the listing's thread, ctxs[1 + k] for helper k (1 + ADAC_LIST_MAX_HELPERS of them). Before
 * the first adac_pending_list_next (false, and nothing set, after it). With filters, that thread
 * applies them too (through its runtime), and fn sees the stacks that pass. */
bool adac_pending_list_digest(struct adac_pending_list *l, adac_pending_stack_digest fn, void *const *ctxs);
/* No digest runs after this (the helpers are stopped): the ctxs may go. The listing is over. */
void adac_pending_list_digest_end(struct adac_pending_list *l);
/* adac_frame_cache_stats over every thread's cache, as one cache would have counted. */
void adac_pending_list_frame_stats(const struct adac_pending_list *l, uint64_t *resolved, uint64_t *hits);

/* What a stack's innermost frame waits for: its head continuation's awaited object, or the task a
 * classic frame's box or task awaits (through m_continuationObject), described in buf; NULL when
 * not recorded. (A pointer: a listing asks for each of a million stacks, resolved on another
 * thread.) */
const struct adac_awaiting *adac_pending_stack_awaiting(const struct adac_pending_list *l,
                                                        const struct adac_pending_stack *st, struct adac_awaiting *buf);

/* The method a running stack's chain resumed, running on its thread (adac_thread_chain_resumed:
 * named, its strings st->rt's); false when the stack is not running or its thread's frames do not
 * say (a memory image has no unwinder). */
struct adac_stack_frame;
bool adac_pending_stack_resumed(const struct adac_pending_stack *st, struct adac_stack_frame *f);

#endif
