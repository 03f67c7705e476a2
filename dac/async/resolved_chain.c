/* resolved_chain.c - walks a chain and resolves its frames, once per suspension point. */
#include "async/resolved_chain.h"

#include <stdlib.h>
#include <string.h>

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
	size_t j = slot_hash(c->diagnostic_ip, c->resume, c->state, ri) & (fc->cap - 1);
	for (;;) {
		struct frame_slot *s = &fc->slots[j];
		if (!s->used)
			break;
		if (s->dip == c->diagnostic_ip && s->resume == c->resume && s->state == c->state && s->has_resume_info == ri) {
			fc->hits++;
			copy_frame(f, &s->frame, c);
			if (f->shared_code)
				adac_async_frame_instantiate(rt, f); /* the instantiation is per continuation */
			return;
		}
		j = (j + 1) & (fc->cap - 1);
	}
	adac_async_frame_resolve(rt, c, f);
	fc->resolved++;
	struct frame_slot *s = &fc->slots[j];
	s->used = true;
	s->dip = c->diagnostic_ip;
	s->resume = c->resume;
	s->state = c->state;
	s->has_resume_info = ri;
	copy_frame(&s->frame, f, c);
	fc->used++;
}

int adac_resolved_chain_build(struct adac_runtime *rt, uint64_t head, size_t max_depth, struct adac_frame_cache *cache,
                              struct adac_resolved_chain *v, struct adac_error *err)
{
	memset(v, 0, sizeof *v);
	if (adac_chain_walk(rt, head, max_depth, &v->chain, err))
		return -1;
	/* (Not zeroed: every frame is filled whole by its resolution or copy.) */
	v->frames = malloc((v->chain.count ? v->chain.count : 1) * sizeof *v->frames);
	if (!v->frames) {
		adac_chain_free(&v->chain);
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

void adac_resolved_chain_free(struct adac_resolved_chain *v)
{
	free(v->frames);
	adac_chain_free(&v->chain);
	memset(v, 0, sizeof *v);
}
