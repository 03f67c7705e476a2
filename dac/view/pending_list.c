/* pending_list.c - resolving, filtering and counting the stacks `ps` lists. */
#include "view/pending_list.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "async/task.h"
#include "base/arena.h"
#include "base/cpus.h"
#include "base/output.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/names.h"
#include "types/typename.h"

/* ---- resolving stacks in batches, here and on helper threads ----
 *
 * The listing takes its stacks in order, batch after batch. A batch is claimed (in order) by the
 * listing's thread when it gets to it, or earlier by a helper, which resolves it through its own
 * target and runtime; the listing then only waits for it. Helpers stay at most a ring's worth of
 * batches ahead, so that the frames kept for the listing stay bounded. */

#define BATCH_STACKS 128u   /* stacks of a batch at most, with helpers (without: one) */
#define BATCH_LINKS 1024u   /* ... and continuations, about: a batch's frames are kept until listed */
#define RING_PER_THREAD 2u  /* batches resolved ahead, per thread */

/* What a thread resolves with: nothing in it is shared with another thread. */
struct resolver {
	struct adac_runtime *rt;
	struct adac_frame_cache *frames;
	struct adac_classic_cache *classic;
};

struct batch {
	size_t first, end;                 /* its stacks: [first, end) of p->graph.stacks */
	struct adac_pending_seg *segs;     /* their segments, one stack after the other */
	size_t nsegs, cap;
	struct adac_arena arena;           /* their chains' links and frames */
	size_t resolved;                   /* stacks resolved from first on: end, unless one failed */
	struct adac_error err;             /* why stack `resolved` failed */
	bool done;
};

struct helper {
	struct adac_pending_list *l;
	struct adac_target *t;
	struct resolver r;
	pthread_t thread;
};

struct adac_list_batches {
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
	unsigned nhelpers;
	struct helper helper[ADAC_LIST_MAX_HELPERS];
};

static void lock(struct adac_list_batches *b)
{
	if (b->threaded)
		pthread_mutex_lock(&b->lock);
}

static void unlock(struct adac_list_batches *b)
{
	if (b->threaded)
		pthread_mutex_unlock(&b->lock);
}

static void free_segs(struct adac_pending_seg *segs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (segs[i].has_view)
			adac_resolved_chain_free(&segs[i].view);
}

/* Resolves the nodes of a stack into segs (st->count of them). A chain that cannot be walked at all
 * gets an empty view ending in its error (shown in its place). */
static int resolve_stack(const struct adac_pending *p, const struct resolver *r, const struct adac_async_stack *st,
                         struct adac_arena *arena, struct adac_pending_seg *segs, struct adac_error *err)
{
	for (uint32_t i = 0; i < st->count; i++) {
		struct adac_pending_seg *s = &segs[i];
		memset(s, 0, sizeof *s);
		s->node = &p->graph.nodes[p->graph.stack_nodes[st->first + i]];
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
	}
	return 0;
}

static void resolve_batch(const struct adac_pending *p, const struct resolver *r, struct batch *x)
{
	const struct adac_async_graph *g = &p->graph;
	size_t need = 0;
	for (size_t i = x->first; i < x->end; i++)
		need += g->stacks[i].count;
	x->resolved = x->first;
	x->nsegs = 0;
	adac_arena_reset(&x->arena);
	if (need > x->cap) {
		struct adac_pending_seg *segs = realloc(x->segs, need * sizeof *segs);
		if (!segs) {
			adac_fail(&x->err, ADAC_E_NOMEM, 0, "out of memory resolving stacks");
			return;
		}
		x->segs = segs;
		x->cap = need;
	}
	for (; x->resolved < x->end; x->resolved++) {
		const struct adac_async_stack *st = &g->stacks[x->resolved];
		if (resolve_stack(p, r, st, &x->arena, x->segs + x->nsegs, &x->err))
			return;
		x->nsegs += st->count;
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
static struct batch *claim(struct adac_pending_list *l)
{
	struct adac_list_batches *b = l->batches;
	const struct adac_async_graph *g = &l->p->graph;
	struct batch *x = &b->ring[b->claimed++ % b->nring];
	size_t end = b->next_first, links = 0;
	while (end < g->stack_count && end - b->next_first < b->max_stacks && (end == b->next_first || links < BATCH_LINKS))
		links += stack_links(l->p, &g->stacks[end++]);
	x->first = b->next_first;
	x->end = b->next_first = end;
	x->done = false;
	return x;
}

static void *helper_main(void *arg)
{
	struct helper *h = arg;
	struct adac_pending_list *l = h->l;
	struct adac_list_batches *b = l->batches;
	struct adac_error e = {0};
	h->r.rt = adac_runtime_open(h->t, &e);
	h->r.frames = adac_frame_cache_new();
	h->r.classic = adac_classic_cache_new();
	if (!h->r.rt || !h->r.frames || !h->r.classic)
		return NULL; /* the listing resolves the batches this helper does not claim */
	pthread_mutex_lock(&b->lock);
	for (;;) {
		while (!b->stop && b->next_first < l->p->graph.stack_count && b->claimed >= b->current + b->nring)
			pthread_cond_wait(&b->cond, &b->lock);
		if (b->stop || b->next_first >= l->p->graph.stack_count)
			break;
		struct batch *x = claim(l);
		pthread_mutex_unlock(&b->lock);
		resolve_batch(l->p, &h->r, x);
		pthread_mutex_lock(&b->lock);
		x->done = true;
		pthread_cond_broadcast(&b->cond);
	}
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

int adac_pending_list_init(struct adac_pending_list *l, struct adac_pending *p, const struct adac_pending_filter *filter,
                           struct adac_out *out, struct adac_error *err)
{
	memset(l, 0, sizeof *l);
	l->p = p;
	l->filter = *filter;
	l->out = out;
	l->frames = adac_frame_cache_new();
	l->classic = adac_classic_cache_new();
	l->batches = calloc(1, sizeof *l->batches);
	if (l->batches)
		l->batches->ring = calloc(1, sizeof *l->batches->ring);
	if (!l->frames || !l->classic || !l->batches || !l->batches->ring)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	l->batches->nring = 1;
	l->batches->max_stacks = 1;
	return adac_type_filter_init(&l->type, filter->type, err);
}

unsigned adac_pending_list_parallel(struct adac_pending_list *l)
{
	struct adac_list_batches *b = l->batches;
	unsigned n;
	if (!adac_env_count("ASYNCDAC_LIST_HELPERS", 0, ADAC_LIST_MAX_HELPERS, &n)) {
		n = adac_cpus() - 1;
		if (n > ADAC_LIST_MAX_HELPERS)
			n = ADAC_LIST_MAX_HELPERS;
		if (l->p->graph.stack_count < ADAC_LIST_HELPER_MIN_STACKS)
			n = 0;
	}
	if (!b || b->threaded || l->next || !n)
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
		*h = (struct helper){.l = l, .t = adac_target_reopen(l->p->rt->t, &e)};
		if (!h->t)
			break;
		if (pthread_create(&h->thread, NULL, helper_main, h)) {
			adac_target_close(h->t);
			break;
		}
		b->nhelpers++;
	}
	return l->helpers = b->nhelpers;
}

/* Gives up the batch the listing is in: its frames, and its slot to the next batch. */
static void release_current(struct adac_list_batches *b)
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
static struct batch *batch_of(struct adac_pending_list *l, size_t i)
{
	struct adac_list_batches *b = l->batches;
	struct batch *x = &b->ring[b->current % b->nring];
	if (b->holding && i < x->end)
		return x;
	release_current(b);
	x = &b->ring[b->current % b->nring];
	struct resolver r = {l->p->rt, l->frames, l->classic};
	lock(b);
	while (!(b->current < b->claimed && x->done)) {
		if (b->claimed < b->current + b->nring && b->next_first < l->p->graph.stack_count) {
			struct batch *y = claim(l);
			unlock(b);
			resolve_batch(l->p, &r, y);
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

void adac_pending_list_free(struct adac_pending_list *l)
{
	struct adac_list_batches *b = l->batches;
	if (b && b->threaded) {
		pthread_mutex_lock(&b->lock);
		b->stop = true;
		pthread_cond_broadcast(&b->cond);
		pthread_mutex_unlock(&b->lock);
		for (unsigned k = 0; k < b->nhelpers; k++)
			pthread_join(b->helper[k].thread, NULL);
	}
	if (b) {
		/* Frames first: a helper's point into its runtime. */
		for (size_t k = 0; k < b->nring; k++) {
			free_segs(b->ring[k].segs, b->ring[k].nsegs);
			free(b->ring[k].segs);
			adac_arena_free(&b->ring[k].arena);
		}
		free(b->ring);
		for (unsigned k = 0; k < b->nhelpers; k++) {
			struct helper *h = &b->helper[k];
			adac_frame_cache_free(h->r.frames);
			adac_classic_cache_free(h->r.classic);
			if (h->r.rt)
				adac_runtime_close(h->r.rt);
			adac_target_close(h->t);
		}
		if (b->threaded) {
			pthread_cond_destroy(&b->cond);
			pthread_mutex_destroy(&b->lock);
		}
		free(b);
	}
	adac_frame_cache_free(l->frames);
	adac_classic_cache_free(l->classic);
	adac_type_filter_free(&l->type);
	memset(l, 0, sizeof *l);
}

void adac_pending_list_frame_stats(const struct adac_pending_list *l, uint64_t *resolved, uint64_t *hits)
{
	struct adac_frame_cache *c[1 + ADAC_LIST_MAX_HELPERS] = {l->frames};
	size_t n = 1;
	for (unsigned k = 0; l->batches && k < l->batches->nhelpers; k++)
		c[n++] = l->batches->helper[k].r.frames;
	adac_frame_caches_stats(c, n, resolved, hits);
}

size_t adac_pending_seg_frames(const struct adac_pending_seg *s)
{
	if (s->node->kind == ADAC_NODE_BOX || s->node->kind == ADAC_NODE_TASK)
		return 1;
	size_t n = 0;
	for (size_t i = 0; i < s->view.chain.count; i++)
		n += adac_async_frame_shown(&s->view.frames[i]);
	return n;
}

/* A stack of continuations nothing owns, without a single user frame (a thread's sentinel, a chain
 * being built): not listed. */
static bool without_frames(const struct adac_pending_list *l, const struct adac_async_stack *st)
{
	for (uint32_t i = 0; i < st->count; i++) {
		const struct adac_pending_seg *s = &l->segs[i];
		if (s->node->kind != ADAC_NODE_CHAIN || l->p->scan.chains[s->node->index].root != ADAC_ROOT_UNOWNED ||
		    adac_pending_seg_frames(s) || s->view.chain.end == ADAC_CHAIN_BROKEN ||
		    s->view.chain.end == ADAC_CHAIN_CYCLE)
			return false;
	}
	return true;
}

static bool awaiting(const struct adac_pending_list *l, const struct adac_async_stack *st, struct adac_awaiting *a)
{
	const struct adac_pending_seg *s = &l->segs[0];
	if (s->node->kind == ADAC_NODE_CHAIN && s->view.has_awaiting) {
		*a = s->view.awaiting;
		return true;
	}
	return adac_pending_awaited_task(l->p, st, a);
}

bool adac_pending_stack_awaiting(const struct adac_pending_list *l, const struct adac_pending_stack *st,
                                 struct adac_awaiting *a)
{
	return awaiting(l, st->stack, a);
}

/* ---- filters ---- */

static bool addr_wanted(const struct adac_pending_filter *f, uint64_t a)
{
	for (size_t i = 0; i < f->naddresses; i++)
		if (f->addresses[i] == a)
			return true;
	return false;
}

static bool type_matches(const struct adac_pending_list *l, uint64_t mt)
{
	return mt && adac_type_filter_match(&l->type, adac_type_name(l->p->rt, mt, 0, NULL));
}

/* A filter not yet satisfied by the stack's objects seen so far. */
struct wants {
	bool m, t, a, status, mt;
};

static void see_task(const struct adac_pending_list *l, uint64_t task, struct wants *w)
{
	const struct adac_pending_filter *f = &l->filter;
	if (!task)
		return;
	if (w->a && addr_wanted(f, task))
		w->a = false;
	if (!w->t && !w->status && !w->mt)
		return;
	struct adac_task_desc d;
	adac_pending_task(l->p, task, &d);
	if (w->t && d.type && adac_type_filter_match(&l->type, d.type))
		w->t = false;
	if (w->status && d.has_flags && strcasecmp(adac_task_status(d.flags), f->status) == 0)
		w->status = false;
	if (w->mt && d.mt == f->mt)
		w->mt = false;
}

static bool matches(const struct adac_pending_list *l, const struct adac_async_stack *st)
{
	const struct adac_pending_filter *f = &l->filter;
	struct wants w = {f->method != NULL, f->type != NULL, f->naddresses > 0, f->status != NULL, f->mt != 0};
	struct adac_awaiting aw;
	if (awaiting(l, st, &aw)) {
		const struct adac_awaited_owner *owner = adac_awaited_owner_of(&l->p->owners, aw.object);
		if (w.a && (addr_wanted(f, aw.object) || (owner && addr_wanted(f, owner->addr))))
			w.a = false;
		if (w.t && aw.type && adac_type_filter_match(&l->type, aw.type))
			w.t = false;
		if (w.mt && aw.mt == f->mt)
			w.mt = false;
		if (w.status && aw.has_state_flags && strcasecmp(adac_task_status(aw.state_flags), f->status) == 0)
			w.status = false;
	}
	for (uint32_t i = 0; i < st->count && (w.m || w.t || w.a || w.status || w.mt); i++) {
		const struct adac_pending_seg *s = &l->segs[i];
		see_task(l, adac_pending_node_task(l->p, s->node), &w);
		if (s->node->kind == ADAC_NODE_BOX) {
			if (w.a && s->classic.state_machine && addr_wanted(f, s->classic.state_machine))
				w.a = false;
			if (w.m && adac_contains_nocase(s->classic.method, f->method))
				w.m = false;
			if (w.t && type_matches(l, s->classic.state_machine_mt))
				w.t = false;
			if (w.mt && s->classic.state_machine_mt == f->mt)
				w.mt = false;
			continue;
		}
		if (s->node->kind != ADAC_NODE_CHAIN)
			continue;
		for (size_t k = 0; k < s->view.chain.count; k++) {
			const struct adac_async_frame *fr = &s->view.frames[k];
			if (w.a && addr_wanted(f, fr->cont.addr))
				w.a = false;
			if (w.t && type_matches(l, fr->cont.mt))
				w.t = false;
			if (w.mt && fr->cont.mt == f->mt)
				w.mt = false;
			if (w.m && adac_async_frame_shown(fr) && adac_contains_nocase(fr->method, f->method))
				w.m = false;
		}
	}
	return !w.m && !w.t && !w.a && !w.status && !w.mt;
}

/* ---- the listing ---- */

int adac_pending_list_next(struct adac_pending_list *l, struct adac_pending_stack *out, struct adac_error *err)
{
	struct adac_pending *p = l->p;
	const struct adac_pending_filter *f = &l->filter;
	while (l->next < p->graph.stack_count) {
		size_t i = l->next++;
		const struct adac_async_stack *st = &p->graph.stacks[i];
		adac_progress(l->out, "resolving frames", i, p->graph.stack_count);
		struct batch *x = batch_of(l, i);
		if (i >= x->resolved) { /* the stack whose resolution failed */
			adac_error_copy(err, &x->err);
			return -1;
		}
		l->segs = x->segs + l->batches->seg_at;
		l->batches->seg_at += st->count;
		bool filtered = false;
		if (without_frames(l, st)) {
			l->without_frames++;
			adac_pending_set_fate(p, st, ADAC_PENDING_WITHOUT_FRAMES);
			filtered = true;
		}
		size_t number = filtered ? 0 : l->numbered++;
		if (!filtered && (f->method || f->type || f->naddresses || f->status || f->mt) && !matches(l, st)) {
			l->filtered_out++;
			adac_pending_set_fate(p, st, ADAC_PENDING_FILTERED);
			filtered = true;
		}
		if (!filtered) {
			adac_pending_set_fate(p, st, ADAC_PENDING_LISTED);
			*out = (struct adac_pending_stack){.index = l->listed++, .number = number, .stack = st,
			                                   .segs = l->segs, .running = adac_pending_running(p, st)};
			if (out->running)
				l->running++;
			for (uint32_t k = 0; k < st->count; k++)
				l->frames_listed += adac_pending_seg_frames(&l->segs[k]);
			return 1;
		}
	}
	release_current(l->batches);
	adac_progress(l->out, NULL, 0, 0);
	return 0;
}
