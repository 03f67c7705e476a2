/* pending_list.c - resolving, filtering and counting the stacks `ps` lists. */
#include "view/pending_list.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "async/task.h"
#include "async/thread_stack.h"
#include "base/cpus.h"
#include "base/grow.h"
#include "base/output.h"
#include "types/names.h"
#include "types/typename.h"

/* Stacks between two progress points, where the listing reports how far it is and looks whether
 * the user interrupted it. */
#define PROGRESS_EVERY 256u

int adac_pending_list_init(struct adac_pending_list *l, struct adac_pending *p, const struct adac_pending_filter *filter,
                           struct adac_out *out, struct adac_error *err)
{
	memset(l, 0, sizeof *l);
	l->p = p;
	l->filter = *filter;
	l->out = out;
	if (!(l->batches = adac_pending_batches_new(p)))
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	return adac_type_filter_init(&l->type, filter->type, err);
}

unsigned adac_pending_list_parallel(struct adac_pending_list *l)
{
	unsigned n;
	if (!adac_env_count("ASYNCDAC_LIST_HELPERS", 0, ADAC_LIST_MAX_HELPERS, &n))
		n = l->p->graph.stack_count < ADAC_LIST_HELPER_MIN_STACKS ? 0 : adac_cpus() - 1;
	return l->helpers = l->batches && !l->next ? adac_pending_batches_start(l->batches, n) : 0;
}

void adac_pending_list_free(struct adac_pending_list *l)
{
	adac_pending_batches_free(l->batches);
	adac_type_filter_free(&l->type);
	free(l->digest_filtered);
	memset(l, 0, sizeof *l);
}

void adac_pending_list_frame_stats(const struct adac_pending_list *l, uint64_t *resolved, uint64_t *hits)
{
	*resolved = *hits = 0;
	if (l->batches)
		adac_pending_batches_frame_stats(l->batches, resolved, hits);
}

/* A stack of continuations nothing owns, without a single user frame (a thread's sentinel, a chain
 * being built): not listed. */
static bool without_frames(const struct adac_pending *p, const struct adac_async_stack *st,
                           const struct adac_pending_seg *segs)
{
	for (uint32_t i = 0; i < st->count; i++) {
		const struct adac_pending_seg *s = &segs[i];
		if (s->node->kind != ADAC_NODE_CHAIN || p->scan.chains[s->node->index].root != ADAC_ROOT_UNOWNED ||
		    s->shown || s->view.chain.end == ADAC_CHAIN_BROKEN || s->view.chain.end == ADAC_CHAIN_CYCLE)
			return false;
	}
	return true;
}

static const struct adac_awaiting *awaiting(const struct adac_pending *p, struct adac_runtime *rt,
                                            const struct adac_async_stack *st, const struct adac_pending_seg *segs,
                                            struct adac_awaiting *buf)
{
	if (segs[0].node->kind == ADAC_NODE_CHAIN && segs[0].view.has_awaiting)
		return &segs[0].view.awaiting;
	return adac_pending_awaited_task_on(p, rt, st, buf) ? buf : NULL;
}

const struct adac_awaiting *adac_pending_stack_awaiting(const struct adac_pending_list *l,
                                                        const struct adac_pending_stack *st, struct adac_awaiting *buf)
{
	return awaiting(l->p, st->rt, st->stack, st->segs, buf);
}

bool adac_pending_stack_resumed(const struct adac_pending_stack *st, struct adac_stack_frame *f)
{
	const struct adac_scan_running *r = st->running;
	if (!r)
		return false;
	const struct adac_thread_chain c = {r->head, r->task, r->dispatcher};
	return adac_thread_chain_resumed(st->rt, r->os_tid, &c, f, NULL) == 0;
}

/* ---- filters ---- */

static bool addr_wanted(const struct adac_pending_filter *f, uint64_t a)
{
	for (size_t i = 0; i < f->naddresses; i++)
		if (f->addresses[i] == a)
			return true;
	return false;
}

static bool type_matches(const struct adac_pending_list *l, struct adac_runtime *rt, uint64_t mt)
{
	return mt && adac_type_filter_match(&l->type, adac_type_name(rt, mt, 0, NULL));
}

/* A filter not yet satisfied by the stack's objects seen so far. */
struct wants {
	bool m, t, a, status, mt;
};

static void see_task(const struct adac_pending_list *l, struct adac_runtime *rt, uint64_t task, struct wants *w)
{
	const struct adac_pending_filter *f = &l->filter;
	if (!task)
		return;
	if (w->a && addr_wanted(f, task))
		w->a = false;
	if (!w->t && !w->status && !w->mt)
		return;
	struct adac_task_desc d;
	adac_pending_task_on(l->p, rt, task, &d);
	if (w->t && d.type && adac_type_filter_match(&l->type, d.type))
		w->t = false;
	if (w->status && d.has_flags && strcasecmp(adac_task_status(d.flags), f->status) == 0)
		w->status = false;
	if (w->mt && d.mt == f->mt)
		w->mt = false;
}

static bool filtering(const struct adac_pending_filter *f)
{
	return f->method || f->type || f->naddresses || f->status || f->mt;
}

/* Whether the stack (resolved into segs) passes the filters, reading the target and naming types
 * through rt (the listing's, or a helper's: on whichever thread resolved it). */
static bool matches(const struct adac_pending_list *l, struct adac_runtime *rt, const struct adac_async_stack *st,
                    const struct adac_pending_seg *segs)
{
	const struct adac_pending_filter *f = &l->filter;
	struct wants w = {f->method != NULL, f->type != NULL, f->naddresses > 0, f->status != NULL, f->mt != 0};
	struct adac_awaiting buf;
	const struct adac_awaiting *aw = awaiting(l->p, rt, st, segs, &buf);
	if (aw) {
		const struct adac_awaited_owner *owner = adac_awaited_owner_of(&l->p->owners, aw->object);
		if (w.a && (addr_wanted(f, aw->object) || (owner && addr_wanted(f, owner->addr))))
			w.a = false;
		if (w.t && aw->type && adac_type_filter_match(&l->type, aw->type))
			w.t = false;
		if (w.mt && aw->mt == f->mt)
			w.mt = false;
		if (w.status && aw->has_state_flags && strcasecmp(adac_task_status(aw->state_flags), f->status) == 0)
			w.status = false;
	}
	for (uint32_t i = 0; i < st->count && (w.m || w.t || w.a || w.status || w.mt); i++) {
		const struct adac_pending_seg *s = &segs[i];
		see_task(l, rt, adac_pending_node_task(l->p, s->node), &w);
		if (s->node->kind == ADAC_NODE_BOX) {
			if (w.a && s->classic.state_machine && addr_wanted(f, s->classic.state_machine))
				w.a = false;
			if (w.m && adac_contains_nocase(s->classic.method, f->method))
				w.m = false;
			if (w.t && type_matches(l, rt, s->classic.state_machine_mt))
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
			if (w.t && type_matches(l, rt, fr->cont.mt))
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

static void digest_listed(void *ctx, struct adac_runtime *rt, size_t stack, const struct adac_pending_seg *segs,
                          struct adac_out *out)
{
	const struct adac_pending_digest *d = ctx;
	const struct adac_async_stack *st = &d->l->p->graph.stacks[stack];
	if (without_frames(d->l->p, st, segs))
		return;
	if (d->l->digest_filtered && !matches(d->l, rt, st, segs)) {
		d->l->digest_filtered[stack] = 1; /* (each thread its own stacks' bytes) */
		return;
	}
	struct adac_pending_stack s = {.stack = st, .segs = (struct adac_pending_seg *)segs,
	                               .running = adac_pending_running(d->l->p, st), .rt = rt};
	d->fn(d->ctx, &s, out);
}

bool adac_pending_list_digest(struct adac_pending_list *l, adac_pending_stack_digest fn, void *const *ctxs)
{
	if (l->next || !l->batches)
		return false;
	if (filtering(&l->filter) && !(l->digest_filtered = adac_array_zeroed(l->p->graph.stack_count + 1, 1)))
		return false; /* (out of memory: the listing's thread filters and formats alone) */
	void *d[1 + ADAC_LIST_MAX_HELPERS];
	for (unsigned k = 0; k < 1 + ADAC_LIST_MAX_HELPERS; k++) {
		l->digests[k] = (struct adac_pending_digest){l, fn, ctxs[k]};
		d[k] = &l->digests[k];
	}
	adac_pending_batches_digest(l->batches, digest_listed, d);
	return true;
}

void adac_pending_list_digest_end(struct adac_pending_list *l)
{
	if (l->batches)
		adac_pending_batches_stop(l->batches);
}

int adac_pending_list_next(struct adac_pending_list *l, struct adac_pending_stack *out, struct adac_error *err)
{
	struct adac_pending *p = l->p;
	const struct adac_pending_filter *f = &l->filter;
	while (l->next < p->graph.stack_count) {
		size_t i = l->next++;
		const struct adac_async_stack *st = &p->graph.stacks[i];
		if (i % PROGRESS_EVERY == 0) {
			adac_progress(l->out, "resolving frames", i, p->graph.stack_count);
			if (adac_interrupted(l->out))
				return adac_fail(err, ADAC_E_INTERRUPTED, 0, "interrupted");
		}
		if (!(l->segs = adac_pending_batches_stack(l->batches, i, err)))
			return -1;
		bool filtered = false;
		if (without_frames(p, st, l->segs)) {
			l->without_frames++;
			adac_pending_set_fate(p, st, ADAC_PENDING_WITHOUT_FRAMES);
			filtered = true;
		}
		size_t number = filtered ? 0 : l->numbered++;
		if (!filtered && filtering(f) &&
		    (l->digest_filtered ? l->digest_filtered[i] : !matches(l, p->rt, st, l->segs))) {
			l->filtered_out++;
			adac_pending_set_fate(p, st, ADAC_PENDING_FILTERED);
			filtered = true;
		}
		if (!filtered) {
			adac_pending_set_fate(p, st, ADAC_PENDING_LISTED);
			*out = (struct adac_pending_stack){.index = l->listed++, .number = number, .stack = st,
			                                   .segs = l->segs, .running = adac_pending_running(p, st), .rt = p->rt};
			out->text = adac_pending_batches_text(l->batches, i, &out->text_len);
			if (out->running)
				l->running++;
			for (uint32_t k = 0; k < st->count; k++)
				l->frames_listed += l->segs[k].shown;
			return 1;
		}
	}
	adac_pending_batches_release(l->batches);
	adac_progress(l->out, NULL, 0, 0);
	return 0;
}
