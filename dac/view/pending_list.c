/* pending_list.c - resolving, filtering and counting the stacks `ps` lists. */
#include "view/pending_list.h"

#include <ctype.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "async/task.h"
#include "base/output.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/names.h"
#include "types/typename.h"

int adac_pending_list_init(struct adac_pending_list *l, struct adac_pending *p, const struct adac_pending_filter *filter,
                           struct adac_out *out, struct adac_error *err)
{
	memset(l, 0, sizeof *l);
	l->p = p;
	l->filter = *filter;
	l->out = out;
	l->frames = adac_frame_cache_new();
	l->classic = adac_classic_cache_new();
	if (!l->frames || !l->classic)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	return adac_type_filter_init(&l->type, filter->type, err);
}

static void free_views(struct adac_pending_seg *segs, size_t n);
static void ahead_free(struct adac_pending_ahead *a);
static void ahead_give_back(struct adac_pending_ahead *a);

/* Done with the stack taken last. */
static void drop_stack(struct adac_pending_list *l)
{
	if (l->ahead && l->held)
		ahead_give_back(l->ahead);
	else if (!l->ahead)
		free_views(l->segs, l->segs_live);
	l->held = false;
	l->segs_live = 0;
}

void adac_pending_list_free(struct adac_pending_list *l)
{
	drop_stack(l);
	if (l->ahead)
		ahead_free(l->ahead);
	else
		free(l->segs);
	adac_frame_cache_free(l->frames);
	adac_classic_cache_free(l->classic);
	adac_type_filter_free(&l->type);
	memset(l, 0, sizeof *l);
}

static void free_views(struct adac_pending_seg *segs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (segs[i].has_view)
			adac_resolved_chain_free(&segs[i].view);
}

/* What resolving a stack takes: the runtime and the caches of one thread. */
struct resolver {
	const struct adac_pending *p;
	struct adac_runtime *rt;
	struct adac_frame_cache *frames;
	struct adac_classic_cache *classic;
};

/* Resolves the nodes of a stack into *segs (grown to *cap). A chain that cannot be walked at all
 * gets an empty view ending in its error (shown in its place). */
static int resolve_stack(const struct resolver *r, const struct adac_async_stack *st, struct adac_pending_seg **segs,
                         size_t *cap, struct adac_error *err)
{
	const struct adac_pending *p = r->p;
	if (st->count > *cap) {
		size_t n = *cap ? *cap : 16;
		while (n < st->count)
			n *= 2;
		struct adac_pending_seg *s = realloc(*segs, n * sizeof *s);
		if (!s)
			return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		*segs = s;
		*cap = n;
	}
	for (uint32_t i = 0; i < st->count; i++) {
		struct adac_pending_seg *s = &(*segs)[i];
		memset(s, 0, sizeof *s);
		s->node = &p->graph.nodes[p->graph.stack_nodes[st->first + i]];
		if (s->node->kind == ADAC_NODE_CHAIN) {
			const struct adac_scan_chain *ch = &p->scan.chains[s->node->index];
			struct adac_error e = {0};
			if (adac_resolved_chain_build(r->rt, ch->head, 0, r->frames, &s->view, &e) == 0) {
				s->has_view = true;
				s->view.task = ch->task;
			} else if (e.code == ADAC_E_NOMEM || e.code == ADAC_E_LAYOUT) {
				free_views(*segs, i);
				adac_error_copy(err, &e);
				return -1;
			} else {
				/* Keep the failure as a broken, empty chain. */
				s->has_view = true;
				s->view.task = ch->task;
				s->view.chain.end = ADAC_CHAIN_BROKEN;
				s->view.chain.end_addr = ch->head;
				s->view.chain.end_err = e;
			}
		} else if (s->node->kind == ADAC_NODE_BOX) {
			const struct adac_scan_task *t = &p->scan.tasks[s->node->index];
			adac_classic_frame_read(r->rt, r->classic, t->addr, t->mt, &s->classic);
		}
	}
	return 0;
}

/* ---- resolving ahead, on a second thread ---- */

/* Stacks resolved and not yet taken: enough that neither thread waits for the other's every
 * stack, few enough to stay small (a slot holds one stack's frames). The threads tell each other
 * how far they are every AHEAD_SYNC stacks and before they wait, and one that waits is woken when
 * a quarter of the slots can go on: a lock or a wake-up per stack costs as much as the stack. (Both
 * wait on one condition, so each wake-up is a broadcast.) */
#define AHEAD_SLOTS 256u
#define AHEAD_BATCH (AHEAD_SLOTS / 4)
#define AHEAD_SYNC 16u

struct ahead_slot {
	struct adac_pending_seg *segs;
	size_t cap;
	int rc;
	struct adac_error err;
};

struct adac_pending_ahead {
	struct resolver r;              /* the second thread's: its own target, runtime and caches */
	struct adac_target *t;
	size_t count;                   /* stacks to resolve */
	pthread_t thread;
	struct ahead_slot slots[AHEAD_SLOTS]; /* stack i is in slots[i % AHEAD_SLOTS] */
	/* The lister's own: */
	size_t taken_here, resolved_seen;
	/* Under mu: */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t resolved, taken;         /* stacks so far, as last told */
	size_t resolver_at;             /* while the resolver waits: the stack it waits to resolve */
	size_t lister_wants;            /* while the lister waits: the resolved count that wakes it */
	bool stop, finished, resolver_waits, lister_waits;
};

/* The frames stack i left in its slot, once done with. */
static void ahead_clear(struct adac_pending_ahead *a, size_t i)
{
	struct ahead_slot *s = &a->slots[i % AHEAD_SLOTS];
	if (s->rc == 0)
		free_views(s->segs, a->r.p->graph.stacks[i].count);
}

static void *ahead_run(void *arg)
{
	struct adac_pending_ahead *a = arg;
	size_t i = 0, taken = 0;
	bool stop = false;
	for (; i < a->count && !stop; i++) {
		if (i - taken == AHEAD_SLOTS) {
			pthread_mutex_lock(&a->mu);
			a->resolved = i; /* (all it has, before it waits) */
			if (a->lister_waits)
				pthread_cond_broadcast(&a->cv);
			if (i - a->taken == AHEAD_SLOTS) {
				a->resolver_waits = true;
				a->resolver_at = i;
				while (i - a->taken > AHEAD_SLOTS - AHEAD_BATCH && !a->stop)
					pthread_cond_wait(&a->cv, &a->mu);
				a->resolver_waits = false;
			}
			taken = a->taken;
			stop = a->stop;
			pthread_mutex_unlock(&a->mu);
			if (stop)
				break;
		}
		struct ahead_slot *s = &a->slots[i % AHEAD_SLOTS];
		if (i >= AHEAD_SLOTS)
			ahead_clear(a, i - AHEAD_SLOTS);
		s->err = (struct adac_error){0};
		s->rc = resolve_stack(&a->r, &a->r.p->graph.stacks[i], &s->segs, &s->cap, &s->err);
		if (s->rc)
			stop = true;
		if ((i + 1) % AHEAD_SYNC == 0 || i + 1 == a->count || stop) {
			pthread_mutex_lock(&a->mu);
			a->resolved = i + 1;
			taken = a->taken;
			stop = stop || a->stop;
			if (a->lister_waits && a->resolved >= a->lister_wants)
				pthread_cond_broadcast(&a->cv);
			pthread_mutex_unlock(&a->mu);
		}
	}
	pthread_mutex_lock(&a->mu);
	a->resolved = i;
	a->finished = true;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

/* The slot of stack i (the next one to take), once it is resolved; NULL when the resolver stopped
 * before it (only after an error the lister took before). */
static struct ahead_slot *ahead_take(struct adac_pending_ahead *a, size_t i)
{
	if (i < a->resolved_seen)
		return &a->slots[i % AHEAD_SLOTS];
	pthread_mutex_lock(&a->mu);
	a->taken = a->taken_here;
	if (a->resolver_waits)
		pthread_cond_broadcast(&a->cv);
	if (a->resolved <= i) {
		a->lister_waits = true;
		a->lister_wants = i + AHEAD_BATCH < a->count ? i + AHEAD_BATCH : a->count;
		while (a->resolved <= i && !a->finished)
			pthread_cond_wait(&a->cv, &a->mu);
		a->lister_waits = false;
	}
	a->resolved_seen = a->resolved;
	pthread_mutex_unlock(&a->mu);
	return i < a->resolved_seen ? &a->slots[i % AHEAD_SLOTS] : NULL;
}

/* The stack taken last is done with: its slot is free again (its frames are freed by the
 * resolver before it reuses the slot: memory is freed by the thread that allocated it, which
 * keeps the two threads off each other's malloc arena). */
static void ahead_give_back(struct adac_pending_ahead *a)
{
	if (++a->taken_here % AHEAD_SYNC)
		return;
	pthread_mutex_lock(&a->mu);
	a->taken = a->taken_here;
	if (a->resolver_waits && a->resolver_at - a->taken <= AHEAD_SLOTS - AHEAD_BATCH)
		pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
}

static void ahead_free(struct adac_pending_ahead *a)
{
	pthread_mutex_lock(&a->mu);
	a->stop = true;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->thread, NULL);
	/* The last slots resolved still hold their frames. */
	for (size_t i = a->resolved > AHEAD_SLOTS ? a->resolved - AHEAD_SLOTS : 0; i < a->resolved; i++)
		ahead_clear(a, i);
	for (size_t i = 0; i < AHEAD_SLOTS; i++)
		free(a->slots[i].segs);
	pthread_cond_destroy(&a->cv);
	pthread_mutex_destroy(&a->mu);
	adac_runtime_close(a->r.rt);
	adac_target_close(a->t);
	free(a);
}

/* How many threads resolve the stacks: ASYNCDAC_LIST_THREADS=1 or 2 when set (*asked), else 2 for
 * a listing large enough to pay for opening the target again, on a process that may use two CPUs. */
static unsigned list_threads(size_t stacks, bool *asked)
{
	const char *env = getenv("ASYNCDAC_LIST_THREADS");
	*asked = env && (strcmp(env, "1") == 0 || strcmp(env, "2") == 0);
	if (*asked)
		return (unsigned)(env[0] - '0');
	cpu_set_t set;
	bool cpus = sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) >= 2;
	return cpus && stacks >= ADAC_LIST_AHEAD_MIN_STACKS ? 2 : 1;
}

int adac_pending_list_resolve_ahead(struct adac_pending_list *l, struct adac_error *err)
{
	struct adac_pending *p = l->p;
	bool asked;
	if (l->ahead || l->next || list_threads(p->graph.stack_count, &asked) < 2)
		return 0;
	struct adac_pending_ahead *a = calloc(1, sizeof *a);
	if (!a)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	struct adac_error e = {0};
	a->t = adac_target_reopen(p->rt->t, &e);
	a->r.rt = a->t ? adac_runtime_open(a->t, &e) : NULL;
	if (!a->r.rt) {
		adac_target_close(a->t);
		free(a);
		if (e.code == ADAC_E_UNSUPPORTED || (!asked && e.code != ADAC_E_NOMEM))
			return 0; /* one thread lists the same */
		adac_error_copy(err, &e);
		if (asked)
			adac_error_wrap(err, "ASYNCDAC_LIST_THREADS=2: ");
		return -1;
	}
	a->r.p = p;
	a->r.frames = l->frames;
	a->r.classic = l->classic;
	a->count = p->graph.stack_count;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	int rc = pthread_create(&a->thread, NULL, ahead_run, a);
	if (rc != 0) {
		pthread_cond_destroy(&a->cv);
		pthread_mutex_destroy(&a->mu);
		adac_runtime_close(a->r.rt);
		adac_target_close(a->t);
		free(a);
		return asked ? adac_fail(err, ADAC_E_NOMEM, 0, "ASYNCDAC_LIST_THREADS=2: cannot start a thread: %s",
		                         strerror(rc))
		             : 0;
	}
	l->ahead = a;
	return 0;
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

/* Stack i resolved into l->segs: here, or taken from the second thread. */
static int take_stack(struct adac_pending_list *l, size_t i, struct adac_error *err)
{
	const struct adac_async_stack *st = &l->p->graph.stacks[i];
	if (!l->ahead) {
		struct resolver r = {l->p, l->p->rt, l->frames, l->classic};
		if (resolve_stack(&r, st, &l->segs, &l->segs_cap, err))
			return -1;
		l->segs_live = st->count;
		return 0;
	}
	struct ahead_slot *s = ahead_take(l->ahead, i);
	if (!s)
		return adac_fail(err, ADAC_E_LIMIT, 0, "the frames of stack %zu were not resolved", i);
	l->held = true;
	if (s->rc) {
		adac_error_copy(err, &s->err);
		return -1;
	}
	l->segs = s->segs;
	l->segs_live = st->count;
	return 0;
}

int adac_pending_list_next(struct adac_pending_list *l, struct adac_pending_stack *out, struct adac_error *err)
{
	struct adac_pending *p = l->p;
	const struct adac_pending_filter *f = &l->filter;
	drop_stack(l);
	while (l->next < p->graph.stack_count) {
		size_t i = l->next++;
		const struct adac_async_stack *st = &p->graph.stacks[i];
		adac_progress(l->out, "resolving frames", i, p->graph.stack_count);
		if (take_stack(l, i, err))
			return -1;
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
		drop_stack(l);
	}
	adac_progress(l->out, NULL, 0, 0);
	return 0;
}
