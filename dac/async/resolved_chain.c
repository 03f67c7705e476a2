/* resolved_chain.c - walks a chain and resolves its frames, once per suspension point. */
#include "async/resolved_chain.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"

struct frame_slot {
	bool used;
	uint64_t dip, resume;
	int32_t state;
	bool has_resume_info;
	struct adac_async_frame frame;
};

struct adac_frame_cache {
	struct frame_slot *slots;
	size_t cap, used;
	uint64_t resolved, hits;
};

struct adac_frame_cache *adac_frame_cache_new(void) { return calloc(1, sizeof(struct adac_frame_cache)); }

void adac_frame_cache_free(struct adac_frame_cache *c)
{
	if (!c)
		return;
	free(c->slots);
	free(c);
}

void adac_frame_cache_stats(const struct adac_frame_cache *c, uint64_t *resolved, uint64_t *hits)
{
	*resolved = c ? c->resolved : 0;
	*hits = c ? c->hits : 0;
}

static size_t slot_hash(uint64_t dip, uint64_t resume, int32_t state, bool ri)
{
	uint64_t h = dip * 0x9E3779B97F4A7C15ull ^ (resume + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
	h ^= ((uint64_t)(uint32_t)state << 1 | (ri ? 1u : 0u)) * 0x165667B19E3779F9ull;
	return (size_t)(h ^ h >> 29);
}

/* The slot holding (dip, resume, state, ri) in c, else the empty one where it would go (NULL: c has
 * no table). */
static struct frame_slot *find_slot(const struct adac_frame_cache *c, uint64_t dip, uint64_t resume, int32_t state,
                                    bool ri)
{
	if (!c->cap)
		return NULL;
	size_t j = slot_hash(dip, resume, state, ri) & (c->cap - 1);
	for (;; j = (j + 1) & (c->cap - 1)) {
		struct frame_slot *s = &c->slots[j];
		if (!s->used || (s->dip == dip && s->resume == resume && s->state == state && s->has_resume_info == ri))
			return s;
	}
}

void adac_frame_caches_stats(struct adac_frame_cache *const *c, size_t n, uint64_t *resolved, uint64_t *hits)
{
	uint64_t looked_up = 0, distinct = 0;
	for (size_t i = 0; i < n; i++) {
		if (!c[i])
			continue;
		looked_up += c[i]->resolved + c[i]->hits;
		for (size_t k = 0; k < c[i]->cap; k++) {
			const struct frame_slot *s = &c[i]->slots[k];
			bool seen = false;
			for (size_t e = 0; s->used && e < i && !seen; e++) {
				const struct frame_slot *o =
					c[e] ? find_slot(c[e], s->dip, s->resume, s->state, s->has_resume_info) : NULL;
				seen = o && o->used;
			}
			distinct += s->used && !seen;
		}
	}
	*resolved = distinct;
	*hits = looked_up - distinct;
}

/* A cached frame for continuation c. */
static void copy_frame(struct adac_async_frame *dst, const struct adac_async_frame *src,
                       const struct adac_continuation *c)
{
	adac_async_frame_copy(dst, src);
	dst->cont = *c;
}

static int cache_grow(struct adac_frame_cache *fc)
{
	size_t cap = fc->cap ? fc->cap * 2 : 64;
	struct frame_slot *s = calloc(cap, sizeof *s);
	if (!s)
		return -1;
	for (size_t i = 0; i < fc->cap; i++) {
		struct frame_slot *o = &fc->slots[i];
		if (!o->used)
			continue;
		size_t j = slot_hash(o->dip, o->resume, o->state, o->has_resume_info) & (cap - 1);
		while (s[j].used)
			j = (j + 1) & (cap - 1);
		s[j] = *o;
		copy_frame(&s[j].frame, &o->frame, &o->frame.cont);
	}
	free(fc->slots);
	fc->slots = s;
	fc->cap = cap;
	return 0;
}

static void resolve_cached(struct adac_runtime *rt, struct adac_frame_cache *fc, const struct adac_continuation *c,
                           struct adac_async_frame *f)
{
	if (!fc || ((fc->used + 1) * 2 > fc->cap && cache_grow(fc))) {
		adac_async_frame_resolve(rt, c, f);
		return;
	}
	bool ri = c->resume_info != 0;
	struct frame_slot *s = find_slot(fc, c->diagnostic_ip, c->resume, c->state, ri);
	if (s->used) {
		fc->hits++;
		copy_frame(f, &s->frame, c);
		if (f->shared_code)
			adac_async_frame_instantiate(rt, f); /* the instantiation is per continuation */
		return;
	}
	adac_async_frame_resolve(rt, c, f);
	fc->resolved++;
	s->used = true;
	s->dip = c->diagnostic_ip;
	s->resume = c->resume;
	s->state = c->state;
	s->has_resume_info = ri;
	copy_frame(&s->frame, f, c);
	fc->used++;
}

int adac_resolved_chain_build_in(struct adac_runtime *rt, uint64_t head, size_t max_depth,
                                 struct adac_frame_cache *cache, struct adac_arena *arena,
                                 struct adac_resolved_chain *v, struct adac_error *err)
{
	/* All but the chain, which the walk sets, and what it awaits, which has_awaiting says is unset
	 * (a listing writes a million of them on one thread and reads them on another). */
	v->frames = NULL;
	v->has_awaiting = false;
	v->task = 0;
	/* (Before the walk: links it leaves in the arena when it fails are not to be freed either.) */
	v->in_arena = arena != NULL;
	if (adac_chain_walk_in(rt, head, max_depth, arena, &v->chain, err))
		return -1;
	size_t n = v->chain.count ? v->chain.count : 1;
	/* (Not zeroed: every frame is filled whole by its resolution or copy.) */
	v->frames = arena ? adac_arena_alloc(arena, n * sizeof *v->frames) : malloc(n * sizeof *v->frames);
	if (!v->frames) {
		adac_resolved_chain_free(v);
		return adac_fail(err, ADAC_E_NOMEM, head, "out of memory resolving a chain");
	}
	for (size_t i = 0; i < v->chain.count; i++) {
		resolve_cached(rt, cache, &v->chain.links[i], &v->frames[i]);
		/* The head's infrastructure continuation says what the chain waits on. */
		if (i == 0 && v->frames[i].infrastructure)
			v->has_awaiting = adac_awaiting_of(rt, &v->chain.links[i], &v->awaiting, NULL) == 0;
	}
	return 0;
}

int adac_resolved_chain_build(struct adac_runtime *rt, uint64_t head, size_t max_depth, struct adac_frame_cache *cache,
                              struct adac_resolved_chain *v, struct adac_error *err)
{
	return adac_resolved_chain_build_in(rt, head, max_depth, cache, NULL, v, err);
}

void adac_resolved_chain_free(struct adac_resolved_chain *v)
{
	if (!v->in_arena) {
		free(v->frames);
		adac_chain_free(&v->chain);
	}
	memset(v, 0, sizeof *v);
}
