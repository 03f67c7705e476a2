/* pending_batches.c - see pending_batches.h. A batch is claimed, in order, by whichever thread is
 * free: a helper ahead of the listing, or the listing's thread when it gets to a batch nobody has
 * claimed, and while it waits for a helper's (as long as the ring has room). */
#include "view/pending_batches.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "async/pending.h"
#include "async/resolved_chain.h"
#include "base/arena.h"
#include "base/grow.h"
#include "base/output.h"
#include "runtime/runtime.h"
#include "target/symbols.h"
#include "target/target.h"

#define BATCH_STACKS 128u   /* stacks of a batch at most, with helpers (without: one) */
#define BATCH_LINKS 1024u   /* ... and continuations, about: a batch's frames are kept until listed */
#define RING_PER_THREAD 2u  /* batches resolved ahead, per thread */

/* What a thread resolves with: nothing in it is shared with another thread. */
struct resolver {
	struct adac_runtime *rt;
	struct adac_frame_cache *frames;
	struct adac_classic_cache *classic;
	struct adac_arena scratch;         /* with a digest: the chains of the batch at hand */
};

struct batch {
	size_t first, end;                 /* its stacks: [first, end) of p->graph.stacks */
	struct adac_pending_seg *segs;     /* their segments, one stack after the other */
	size_t nsegs, cap;
	struct adac_arena arena;           /* their chains' links and frames */
	size_t resolved;                   /* stacks resolved from first on: end, unless one failed */
	struct adac_error err;             /* why stack `resolved` failed */
	bool done;
	/* With a digest: what it wrote, stack after stack; text_end[k]: where stack first + k's ends. */
	char *text;
	size_t text_len, text_cap;
	size_t *text_end;
	size_t text_ends;                  /* text_end's capacity */
	bool text_lost;                    /* out of memory writing it */
};

struct helper {
	struct adac_pending_batches *b;
	struct adac_target *t;
	struct resolver r;
	pthread_t thread;
};

struct adac_pending_batches {
	struct adac_pending *p;
	struct resolver own;               /* the listing's thread's: p->rt */
	bool threaded;                     /* helpers were started: the fields below under lock */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct batch *ring;
	size_t nring;
	size_t max_stacks;
	size_t claimed;                    /* batches claimed so far */
	size_t next_first;                 /* the first stack of the next batch claimed */
	size_t current;                    /* the batch the listing is in (slots before it are free) */
	bool holding;                      /* ... which it holds (resolved) */
	size_t seg_at;                     /* in it: the next stack's first segment */
	bool stop;                         /* helpers: stop claiming */
	bool joined;                       /* the helpers have ended */
	bool go;                           /* the listing asked for its first stack: helpers may claim */
	adac_batch_digest digest;
	void *digest_ctx[1 + ADAC_LIST_MAX_HELPERS];
	unsigned nhelpers;
	struct helper helper[ADAC_LIST_MAX_HELPERS];
};

static void lock(struct adac_pending_batches *b)
{
	if (b->threaded)
		pthread_mutex_lock(&b->lock);
}

static void unlock(struct adac_pending_batches *b)
{
	if (b->threaded)
		pthread_mutex_unlock(&b->lock);
}

static void free_segs(struct adac_pending_seg *segs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (segs[i].has_view && !segs[i].view.in_arena) /* (an arena's are taken back with it) */
			adac_resolved_chain_free(&segs[i].view);
}

/* Resolves the nodes of a stack into segs (st->count of them). A chain that cannot be walked at all
 * gets an empty view ending in its error (shown in its place). */
static int resolve_stack(const struct adac_pending *p, const struct resolver *r, const struct adac_async_stack *st,
                         struct adac_arena *arena, struct adac_pending_seg *segs, struct adac_error *err)
{
	for (uint32_t i = 0; i < st->count; i++) {
		struct adac_pending_seg *s = &segs[i];
		s->node = &p->graph.nodes[p->graph.stack_nodes[st->first + i]];
		s->has_view = false;
		/* (A chain's view is set whole by its resolution, a box's frame by its read: what a
		 * million stacks need not clear twice.) */
		if (s->node->kind != ADAC_NODE_CHAIN)
			memset(&s->view, 0, sizeof s->view);
		if (s->node->kind == ADAC_NODE_CHAIN) {
			const struct adac_scan_chain *ch = &p->scan.chains[s->node->index];
			struct adac_error e = {0};
			if (adac_resolved_chain_build_in(r->rt, ch->head, 0, r->frames, arena, &s->view, &e) == 0) {
				s->has_view = true;
				s->view.task = adac_scan_chain_task(&p->scan, s->node->index);
			} else if (e.code == ADAC_E_NOMEM || e.code == ADAC_E_LAYOUT) {
				free_segs(segs, i);
				adac_error_copy(err, &e);
				return -1;
			} else {
				/* Keep the failure as a broken, empty chain. */
				s->has_view = true;
				s->view.task = adac_scan_chain_task(&p->scan, s->node->index);
				s->view.chain.end = ADAC_CHAIN_BROKEN;
				s->view.chain.end_addr = ch->head;
				s->view.chain.end_err = e;
			}
		} else if (s->node->kind == ADAC_NODE_BOX) {
			const struct adac_scan_task *t = &p->scan.tasks[s->node->index];
			adac_classic_frame_read(r->rt, r->classic, t->addr, adac_scan_task_mt(&p->scan, s->node->index),
			                        &s->classic);
		}
		s->shown = 1;
		if (s->node->kind == ADAC_NODE_CHAIN) {
			s->shown = 0;
			for (size_t k = 0; k < s->view.chain.count; k++)
				s->shown += adac_async_frame_shown(&s->view.frames[k]);
		}
	}
	return 0;
}

/* The digest's output: appended to its batch's text. */
static void text_write(void *ctx, const char *text, size_t len)
{
	struct batch *x = ctx;
	if (x->text_lost || !len)
		return;
	if (x->text_len + len < len || adac_grow((void **)&x->text, &x->text_cap, x->text_len + len, 1, 4096)) {
		x->text_lost = true;
		return;
	}
	memcpy(x->text + x->text_len, text, len);
	x->text_len += len;
}

/* Resolves the stacks of batch x on this thread, in the batch's arena; with a digest, digests each
 * stack right after its resolution, in the thread's own arena, reused by the next stack while it is
 * in this core's cache: the listing's thread reads the segments and the text the digest wrote
 * (their links and frames are forgotten). */
static void resolve_batch(const struct adac_pending_batches *b, struct resolver *r, void *ctx, struct batch *x)
{
	const struct adac_pending *p = b->p;
	const struct adac_async_graph *g = &p->graph;
	size_t need = 0;
	for (size_t i = x->first; i < x->end; i++)
		need += g->stacks[i].count;
	x->resolved = x->first;
	x->nsegs = 0;
	x->text_len = 0;
	x->text_lost = false;
	adac_arena_reset(&x->arena);
	if (adac_grow((void **)&x->segs, &x->cap, need, sizeof *x->segs, 1) ||
	    (b->digest &&
	     adac_grow((void **)&x->text_end, &x->text_ends, x->end - x->first, sizeof *x->text_end, BATCH_STACKS))) {
		adac_fail(&x->err, ADAC_E_NOMEM, 0, "out of memory resolving stacks");
		return;
	}
	struct adac_out out = {.write = text_write, .ctx = x};
	for (; x->resolved < x->end; x->resolved++) {
		const struct adac_async_stack *st = &g->stacks[x->resolved];
		struct adac_pending_seg *segs = x->segs + x->nsegs;
		if (resolve_stack(p, r, st, b->digest ? &r->scratch : &x->arena, segs, &x->err))
			return;
		x->nsegs += st->count;
		if (!b->digest)
			continue;
		b->digest(ctx, r->rt, x->resolved, segs, &out);
		for (uint32_t k = 0; k < st->count; k++) {
			segs[k].view.frames = NULL;
			segs[k].view.chain.links = NULL;
		}
		adac_arena_reset(&r->scratch);
		if (x->text_lost) {
			adac_fail(&x->err, ADAC_E_NOMEM, 0, "out of memory listing stacks");
			return;
		}
		x->text_end[x->resolved - x->first] = x->text_len;
	}
}

/* The continuations of a stack, as the scan found them: what its frames will take. */
static size_t stack_links(const struct adac_pending *p, const struct adac_async_stack *st)
{
	size_t n = 0;
	for (uint32_t i = 0; i < st->count; i++) {
		const struct adac_async_node *node = &p->graph.nodes[p->graph.stack_nodes[st->first + i]];
		n += node->kind == ADAC_NODE_CHAIN && p->scan.chains[node->index].links ? p->scan.chains[node->index].links : 1;
	}
	return n;
}

/* Claims the next batch (under the lock): its slot, with its stacks. */
static struct batch *claim(struct adac_pending_batches *b)
{
	const struct adac_async_graph *g = &b->p->graph;
	struct batch *x = &b->ring[b->claimed++ % b->nring];
	size_t end = b->next_first, links = 0;
	while (end < g->stack_count && end - b->next_first < b->max_stacks && (end == b->next_first || links < BATCH_LINKS))
		links += stack_links(b->p, &g->stacks[end++]);
	x->first = b->next_first;
	x->end = b->next_first = end;
	x->done = false;
	return x;
}

static void *helper_main(void *arg)
{
	struct helper *h = arg;
	struct adac_pending_batches *b = h->b;
	size_t stacks = b->p->graph.stack_count;
	struct adac_error e = {0};
	h->r.rt = adac_runtime_open(h->t, &e);
	h->r.frames = adac_frame_cache_new();
	h->r.classic = adac_classic_cache_new();
	if (!h->r.rt || !h->r.frames || !h->r.classic)
		return NULL; /* the listing's thread resolves the batches this helper does not claim */
	pthread_mutex_lock(&b->lock);
	for (;;) {
		while (!b->stop && (!b->go || (b->next_first < stacks && b->claimed >= b->current + b->nring)))
			pthread_cond_wait(&b->cond, &b->lock);
		if (b->stop || b->next_first >= stacks)
			break;
		struct batch *x = claim(b);
		void *ctx = b->digest_ctx[1 + (h - b->helper)]; /* (set before go) */
		pthread_mutex_unlock(&b->lock);
		resolve_batch(b, &h->r, ctx, x);
		pthread_mutex_lock(&b->lock);
		x->done = true;
		pthread_cond_broadcast(&b->cond);
	}
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

struct adac_pending_batches *adac_pending_batches_new(struct adac_pending *p)
{
	struct adac_pending_batches *b = calloc(1, sizeof *b);
	if (!b)
		return NULL;
	b->p = p;
	b->own = (struct resolver){.rt = p->rt, .frames = adac_frame_cache_new(), .classic = adac_classic_cache_new()};
	b->ring = calloc(1, sizeof *b->ring);
	b->nring = 1;
	b->max_stacks = 1;
	if (!b->own.frames || !b->own.classic || !b->ring) {
		adac_pending_batches_free(b);
		return NULL;
	}
	return b;
}

unsigned adac_pending_batches_start(struct adac_pending_batches *b, unsigned n)
{
	if (n > ADAC_LIST_MAX_HELPERS)
		n = ADAC_LIST_MAX_HELPERS;
	if (!n || b->threaded || b->claimed)
		return 0;
	struct batch *ring = calloc(RING_PER_THREAD * (n + 1), sizeof *ring);
	if (!ring || pthread_mutex_init(&b->lock, NULL)) {
		free(ring);
		return 0;
	}
	if (pthread_cond_init(&b->cond, NULL)) {
		pthread_mutex_destroy(&b->lock);
		free(ring);
		return 0;
	}
	free(b->ring);
	b->ring = ring;
	b->nring = RING_PER_THREAD * (n + 1);
	b->max_stacks = BATCH_STACKS;
	b->threaded = true;
	for (unsigned k = 0; k < n; k++) {
		struct helper *h = &b->helper[b->nhelpers];
		struct adac_error e = {0};
		*h = (struct helper){.b = b, .t = adac_target_reopen(b->p->rt->t, &e)};
		if (!h->t)
			break;
		if (pthread_create(&h->thread, NULL, helper_main, h)) {
			adac_target_close(h->t);
			break;
		}
		b->nhelpers++;
	}
	return b->nhelpers;
}

void adac_pending_batches_digest(struct adac_pending_batches *b, adac_batch_digest fn, void *const *ctxs)
{
	lock(b);
	b->digest = fn;
	for (unsigned k = 0; k < 1 + ADAC_LIST_MAX_HELPERS; k++)
		b->digest_ctx[k] = ctxs[k];
	unlock(b);
}

void adac_pending_batches_release(struct adac_pending_batches *b)
{
	if (!b->holding)
		return;
	struct batch *x = &b->ring[b->current % b->nring];
	free_segs(x->segs, x->nsegs);
	x->nsegs = 0;
	b->holding = false;
	lock(b);
	b->current++;
	if (b->threaded)
		pthread_cond_broadcast(&b->cond);
	unlock(b);
}

/* The batch of stack i, the listing's next, resolved. While a helper resolves it, this thread
 * resolves batches ahead too, as long as the ring has room. */
static struct batch *batch_of(struct adac_pending_batches *b, size_t i)
{
	struct batch *x = &b->ring[b->current % b->nring];
	if (b->holding && i < x->end)
		return x;
	adac_pending_batches_release(b);
	x = &b->ring[b->current % b->nring];
	lock(b);
	if (!b->go) {
		b->go = true;
		if (b->threaded)
			pthread_cond_broadcast(&b->cond);
	}
	while (!(b->current < b->claimed && x->done)) {
		if (b->claimed < b->current + b->nring && b->next_first < b->p->graph.stack_count) {
			struct batch *y = claim(b);
			unlock(b);
			resolve_batch(b, &b->own, b->digest_ctx[0], y);
			lock(b);
			y->done = true;
		} else {
			pthread_cond_wait(&b->cond, &b->lock); /* (only with helpers: else the claim comes first) */
		}
	}
	unlock(b);
	b->holding = true;
	b->seg_at = 0;
	return x;
}

struct adac_pending_seg *adac_pending_batches_stack(struct adac_pending_batches *b, size_t i, struct adac_error *err)
{
	struct batch *x = batch_of(b, i);
	if (i >= x->resolved) { /* the stack whose resolution failed */
		adac_error_copy(err, &x->err);
		return NULL;
	}
	struct adac_pending_seg *segs = x->segs + b->seg_at;
	b->seg_at += b->p->graph.stacks[i].count;
	return segs;
}

const char *adac_pending_batches_text(const struct adac_pending_batches *b, size_t i, size_t *len)
{
	const struct batch *x = &b->ring[b->current % b->nring];
	*len = 0;
	if (!b->digest || !b->holding || i < x->first || i >= x->resolved)
		return NULL;
	size_t start = i == x->first ? 0 : x->text_end[i - 1 - x->first];
	*len = x->text_end[i - x->first] - start;
	return x->text + start;
}

void adac_pending_batches_frame_stats(const struct adac_pending_batches *b, uint64_t *resolved, uint64_t *hits)
{
	struct adac_frame_cache *c[1 + ADAC_LIST_MAX_HELPERS] = {b->own.frames};
	size_t n = 1;
	for (unsigned k = 0; k < b->nhelpers; k++)
		c[n++] = b->helper[k].r.frames;
	adac_frame_caches_stats(c, n, resolved, hits);
}

void adac_pending_batches_stop(struct adac_pending_batches *b)
{
	if (!b->threaded || b->joined)
		return;
	pthread_mutex_lock(&b->lock);
	b->stop = true;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
	for (unsigned k = 0; k < b->nhelpers; k++)
		pthread_join(b->helper[k].thread, NULL);
	b->joined = true;
}

void adac_pending_batches_free(struct adac_pending_batches *b)
{
	if (!b)
		return;
	adac_pending_batches_stop(b);
	/* Frames first: a helper's point into its runtime. */
	for (size_t k = 0; b->ring && k < b->nring; k++) {
		free_segs(b->ring[k].segs, b->ring[k].nsegs);
		free(b->ring[k].segs);
		free(b->ring[k].text);
		free(b->ring[k].text_end);
		adac_arena_free(&b->ring[k].arena);
	}
	free(b->ring);
	for (unsigned k = 0; k < b->nhelpers; k++) {
		struct helper *h = &b->helper[k];
		/* What it found through the symbol path is the listing's too (the front end says it). */
		adac_symbols_adopt_found(adac_target_symbols(b->p->rt->t), adac_target_symbols(h->t));
		adac_frame_cache_free(h->r.frames);
		adac_classic_cache_free(h->r.classic);
		adac_arena_free(&h->r.scratch);
		if (h->r.rt)
			adac_runtime_close(h->r.rt);
		adac_target_close(h->t);
	}
	if (b->threaded) {
		pthread_cond_destroy(&b->cond);
		pthread_mutex_destroy(&b->lock);
	}
	adac_frame_cache_free(b->own.frames);
	adac_classic_cache_free(b->own.classic);
	adac_arena_free(&b->own.scratch);
	free(b);
}
