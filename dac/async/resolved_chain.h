/* resolved_chain.h - a continuation chain walked and each of its links resolved into a frame
 * (async_frame.h), with what the chain waits on; and a cache of resolved frames for many chains. */
#ifndef ADAC_RESOLVED_CHAIN_H
#define ADAC_RESOLVED_CHAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "async/async_frame.h"
#include "async/continuation.h"
#include "base/error.h"

struct adac_runtime;

/* Frames resolved once per (DiagnosticIP, Resume, State, has ResumeInfo): everything a frame's
 * resolution derives from its continuation, so chains parked in the same methods share it. */
struct adac_frame_cache;
struct adac_frame_cache *adac_frame_cache_new(void);
void adac_frame_cache_free(struct adac_frame_cache *c);
/* Frames resolved, and frames served from the cache, so far. */
void adac_frame_cache_stats(const struct adac_frame_cache *c, uint64_t *resolved, uint64_t *hits);
/* The same over n caches that served one listing on several threads, as one cache would have
 * counted them: a suspension point resolved in several counts once, its other resolutions as hits. */
void adac_frame_caches_stats(struct adac_frame_cache *const *c, size_t n, uint64_t *resolved, uint64_t *hits);

struct adac_resolved_chain {
	struct adac_chain chain;           /* first (adac_resolved_chain_build_in) */
	struct adac_async_frame *frames;   /* one per chain link, in chain order */
	bool has_awaiting;
	struct adac_awaiting awaiting;     /* what the head infrastructure continuation awaits */
	uint64_t task;                     /* the task owning the chain, when the caller knows it */
	bool in_arena;                     /* chain.links and frames are an arena's: not freed here */
};

/* Walks the chain from head (adac_chain_walk: max_depth 0 is ADAC_MAX_CHAIN_DEPTH) and resolves its
 * frames, through `cache` when not NULL. -1 only when adac_chain_walk fails or memory runs out. */
int adac_resolved_chain_build(struct adac_runtime *rt, uint64_t head, size_t max_depth, struct adac_frame_cache *cache,
                              struct adac_resolved_chain *v, struct adac_error *err);
/* The same with the chain's links and frames in arena (NULL: malloc'd): many chains resolved
 * together, taken back at once. */
struct adac_arena;
int adac_resolved_chain_build_in(struct adac_runtime *rt, uint64_t head, size_t max_depth,
                                 struct adac_frame_cache *cache, struct adac_arena *arena,
                                 struct adac_resolved_chain *v, struct adac_error *err);
void adac_resolved_chain_free(struct adac_resolved_chain *v);

#endif
