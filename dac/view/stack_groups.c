/* stack_groups.c - `ps --coalesce` and `ps --stats`: each listed stack as text labels, innermost
 * first (what it awaits, then its frames without their addresses), grouped in a tree of common
 * prefixes or counted per label. */
#include "view/stack_groups.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async/awaited.h"
#include "async/task.h"
#include "async/thread_pool.h"
#include "base/addr_map.h"
#include "base/grow.h"
#include "base/json.h"
#include "base/labels.h"
#include "base/trie.h"
#include "base/output.h"
#include "view/pending_list.h"
#include "view/pending_view.h"

#define LABEL_MAX 1024u   /* one frame's text */

/* Per-label counts (--stats). */
struct counts {
	uint64_t *n;       /* indexed by label id */
	size_t cap;
};

static int count_add(struct counts *c, uint32_t label, uint64_t n)
{
	if (label >= c->cap) {
		size_t cap = c->cap ? c->cap : 64;
		while (cap <= label)
			cap *= 2;
		uint64_t *p = realloc(c->n, cap * sizeof *p);
		if (!p)
			return -1;
		memset(p + c->cap, 0, (cap - c->cap) * sizeof *p);
		c->n = p;
		c->cap = cap;
	}
	c->n[label] += n;
	return 0;
}

/* Label ids remembered by what the label is made of, so that a million stacks in the same few
 * methods format and hash each label once, not once per frame: numbers, the runtime's strings by
 * their address (its names stay put while it is open: no string is hashed on the way), and at most
 * one string of the caller's own, compared by content. */
#define MEMO_KEYS 5

/* What a label is (k[0]'s low byte). */
enum memo_kind {
	MEMO_AWAITING = 1, MEMO_FRAME, MEMO_TASK, MEMO_TASK_STAT, MEMO_WHAT, MEMO_DISTINCT,
	MEMO_IDENT_WHAT, /* not a label: an index into groups.whats */
	MEMO_KINDS
};

struct memo_slot {
	uint64_t k[MEMO_KEYS];
	char *s;              /* the compared string (a copy), NULL when none */
	uint32_t id;
	bool used;
};

struct memo {
	struct memo_slot *slots;
	size_t cap, used;
	struct memo_slot *last[MEMO_KINDS]; /* per kind: the slot found last (NULL: none), looked at
	                                     * first: stacks ask for the same few labels in long runs */
};

static uint64_t memo_hash(const uint64_t k[MEMO_KEYS], const char *s)
{
	uint64_t h = 0xCBF29CE484222325ull;
	for (int i = 0; i < MEMO_KEYS; i++)
		h = (h ^ k[i]) * 0x9E3779B97F4A7C15ull;
	if (s)
		h ^= adac_text_hash(s);
	return h ^ h >> 29;
}

static bool memo_same(const struct memo_slot *e, const uint64_t k[MEMO_KEYS], const char *s)
{
	return memcmp(e->k, k, sizeof e->k) == 0 && (e->s == s || (e->s && s && strcmp(e->s, s) == 0));
}

/* memo_slot through the table (the kind's last slot becomes the one found). */
static struct memo_slot *memo_probe(struct memo *m, const uint64_t k[MEMO_KEYS], const char *s)
{
	if ((m->used + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 256;
		struct memo_slot *t = calloc(cap, sizeof *t);
		if (!t)
			return NULL;
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->slots[i].used)
				continue;
			size_t j = memo_hash(m->slots[i].k, m->slots[i].s) & (cap - 1);
			while (t[j].used)
				j = (j + 1) & (cap - 1);
			t[j] = m->slots[i];
		}
		free(m->slots);
		m->slots = t;
		m->cap = cap;
		memset(m->last, 0, sizeof m->last);
	}
	size_t j = memo_hash(k, s) & (m->cap - 1);
	for (; m->slots[j].used; j = (j + 1) & (m->cap - 1)) {
		if (memo_same(&m->slots[j], k, s)) {
			m->last[k[0] & 0xff] = &m->slots[j];
			break;
		}
	}
	return &m->slots[j];
}

/* The slot of (k, s): its entry (used) or where it goes; NULL when the table cannot grow. The
 * kind's last slot is compared first, by address only (no hash for a run of one label; a string of
 * the caller's own goes through the table). */
static inline struct memo_slot *memo_slot(struct memo *m, const uint64_t k[MEMO_KEYS], const char *s)
{
	struct memo_slot *e = m->last[k[0] & 0xff];
	/* k[1] first: what tells a kind's labels apart most often (method, status, type). */
	if (e && e->k[1] == k[1] && e->k[0] == k[0] && e->k[2] == k[2] && e->k[3] == k[3] && e->k[4] == k[4] &&
	    e->s == s)
		return e;
	return memo_probe(m, k, s);
}

/* Remembers id in the empty slot e (from memo_slot) for (k, s); a failure only forgets. */
static void memo_put(struct memo *m, struct memo_slot *e, const uint64_t k[MEMO_KEYS], const char *s, uint32_t id)
{
	if (!e || id == UINT32_MAX || (s && !(e->s = strdup(s))))
		return;
	memcpy(e->k, k, sizeof e->k);
	e->id = id;
	e->used = true;
	m->used++;
}

static void memo_free(struct memo *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].s);
	free(m->slots);
	memset(m, 0, sizeof *m);
}

/* ---- what stacks await, by identity ---- */

/* An awaited object (or the SemaphoreSlim behind it) and the stacks awaiting it: one per awaited
 * object, a million of them at a million chains, hence small. Its key is its owner's address when
 * it has one, else its object's (ident_key). */
struct ident {
	uint64_t object;                       /* the awaited object (the first stack's) */
	const struct adac_awaited_owner *owner;
	uint32_t what;                         /* its type and kind: groups.whats[what] */
	uint32_t stacks;                       /* distinct innermost nodes awaiting it (stacks that
	                                        * share their innermost chain count once) */
};

/* An awaited object's type name and what it is (awaited.h; NULL: nothing more than its type). */
struct ident_what {
	const char *type, *kind;
};

static uint64_t ident_key(const struct ident *d) { return d->owner ? d->owner->addr : d->object; }

struct ident_rec {
	uint64_t key;
	uint32_t index;   /* 1 + the ident's index, 0: none yet */
};

/* What a group's first label (what its stacks await) stands for, per label id: one object (its
 * address), or `objects` distinct ones; the SemaphoreSlim behind them. */
struct first_meta {
	bool is_await;
	uint64_t object, objects;
	const struct adac_awaited_owner *owner;
};

#define IDENT_BIT 0x80000000u   /* a stack's first code: an ident index, else a label id */

/* ---- labels of a stack ---- */

struct groups {
	struct adac_pending_list *l;
	struct adac_out *out;
	struct adac_runtime *rt;               /* what task labels are read through: the listing's, or a
	                                        * helper's (a part: digest_stats, digest_coalesce) */
	bool stats, coalesce;                  /* what it groups: --stats, --coalesce, both (report), or
	                                        * neither (folded stacks and graphs: labels alone) */
	bool digested;                         /* --stats, --coalesce: the listing's threads count or
	                                        * record frames as they resolve them, each in its part */
	unsigned part;                         /* which: 0 the listing's thread's (this), k + 1 helper k's */
	struct adac_labels labels;
	struct memo memo;                      /* label ids by what they are made of */
	struct adac_trie trie;
	struct adac_trie frames;               /* --coalesce: the stacks' frame labels, without the
	                                        * first (what they await: final only at the end) */
	uint32_t cursor;                       /* the trie node of the last label added */
	struct counts frame_counts, await_counts, task_counts;
	struct ident *idents;                  /* --coalesce, --stats: awaited objects by identity */
	size_t ident_count, ident_cap;
	uint32_t *task_ident;                  /* per scan task: 1 + its ident's index, 0: none yet */
	struct adac_addr_map ident_index;      /* struct ident_rec by key, for keys that are no scan
	                                        * task */
	struct ident_what *whats;              /* the idents' types and kinds, each once */
	size_t what_count, what_cap;
	uint32_t *seq;                         /* per stack: its first code (--coalesce: and the node of
	                                        * its last frame label in `frames`; seq_stride entries) */
	size_t seq_len, seq_cap;
	uint32_t *first_label;                 /* per ident: its final label id */
	bool *first_seen;                      /* per graph node: counted as an innermost node */
	struct first_meta *meta;               /* per label id below meta_cap */
	size_t meta_cap;
	bool *counted;                         /* --stats: graph nodes already counted */
	uint64_t not_resumed;                  /* --stats: stacks awaiting a completed task */
	bool dot_open;                         /* --format dot: a box's label is being printed, */
	uint32_t dot_last;                     /* its last line's label */
	uint64_t dot_repeat;                   /* shown this many times in a row (a recursion) */
	struct adac_error fail;                /* out of memory while grouping */
};

/* A classic frame without its box address: "<module>`<method> at <file>:<line> [classic, state <n>]"
 * (as an async frame's, adac_async_frame_label). */
static const char *classic_label(const struct adac_classic_frame *c, char *buf, size_t size)
{
	char tag[48] = "classic";
	if (c->has_state)
		snprintf(tag, sizeof tag, "classic, state %d", c->state);
	return adac_frame_label(c->module, c->method ? c->method : "<unknown method>", c->has_source, c->file, c->line,
	                        c->has_il, c->il_offset, tag, buf, size);
}

/* The id of the label text in buf (interned), remembered for (k, str) in e (from memo_slot). */
static uint32_t text_id(struct groups *g, struct memo_slot *e, const uint64_t k[MEMO_KEYS], const char *str,
                        const char *buf)
{
	uint32_t id = adac_label_id(&g->labels, buf);
	memo_put(&g->memo, e, k, str, id);
	return id;
}

/* A task between two frames: "task <type> [<status>]" (the status is one of adac_task_status's
 * strings or "?"). */
static uint32_t task_id(struct groups *g, uint64_t addr)
{
	char buf[LABEL_MAX];
	struct adac_task_desc d;
	adac_pending_task_on(g->l->p, g->rt, addr, &d);
	const char *status = d.has_flags ? adac_task_status(d.flags) : "?";
	const uint64_t k[MEMO_KEYS] = {MEMO_TASK, (uintptr_t)status, (uintptr_t)d.type, 0, 0};
	struct memo_slot *e = memo_slot(&g->memo, k, NULL);
	if (e && e->used)
		return e->id;
	snprintf(buf, sizeof buf, "task %s [%s]", d.type ? d.type : "?", status);
	return text_id(g, e, k, NULL, buf);
}

/* An async frame's label (adac_async_frame_label) from the strings and numbers it is made of; the
 * strings are the runtime's (names, modules, PDB paths) unless the method's name is the frame's own
 * text, which is compared by content. */
static uint32_t async_frame_id(struct groups *g, const struct adac_async_frame *f)
{
	char buf[LABEL_MAX];
	bool own_name = f->method == f->name_buf;
	const uint64_t k[MEMO_KEYS] = {
		MEMO_FRAME | (uint64_t)f->has_source << 8 | (uint64_t)f->has_il << 9 | (uint64_t)(uint32_t)f->cont.state << 32,
		(uintptr_t)(own_name ? NULL : f->method) ^ (uint64_t)(f->method != NULL) << 63,
		(uintptr_t)f->module,
		f->has_source ? (uintptr_t)f->file : 0,
		(f->has_source ? f->line : 0) | (uint64_t)(f->has_il ? f->il_offset : 0) << 32,
	};
	struct memo_slot *e = memo_slot(&g->memo, k, own_name ? f->method : NULL);
	if (e && e->used)
		return e->id;
	return text_id(g, e, k, own_name ? f->method : NULL, adac_async_frame_label(f, buf, sizeof buf));
}

static int seq_push(struct groups *g, uint32_t v)
{
	if (adac_grow((void **)&g->seq, &g->seq_cap, g->seq_len + 1, sizeof *g->seq, 4096))
		return adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory grouping stacks");
	g->seq[g->seq_len++] = v;
	return 0;
}

/* What a stack awaits as a label id ("awaiting X"), without identity: folded stacks, graphs, and
 * stacks whose awaited object is unknown. has: the stack (not running) awaits something of type
 * `type` (NULL: unknown). */
static uint32_t await_id(struct groups *g, bool running, bool has, const char *type)
{
	if (running)
		return adac_label_id(&g->labels, "running on a thread");
	if (!has)
		return adac_label_id(&g->labels, "awaiting (not recorded)");
	char buf[LABEL_MAX];
	const uint64_t k[MEMO_KEYS] = {MEMO_AWAITING, (uintptr_t)type, 0, 0, 0};
	struct memo_slot *e = memo_slot(&g->memo, k, NULL);
	if (e && e->used)
		return e->id;
	snprintf(buf, sizeof buf, "awaiting %s", type ? type : "an object of unknown type");
	return text_id(g, e, k, NULL, buf);
}

/* The index in g->whats of (type, kind), added when new; UINT32_MAX when out of memory. */
static uint32_t ident_what(struct groups *g, const char *type, const char *kind)
{
	const uint64_t k[MEMO_KEYS] = {MEMO_IDENT_WHAT, (uintptr_t)type, (uintptr_t)kind, 0, 0};
	struct memo_slot *e = memo_slot(&g->memo, k, NULL);
	if (e && e->used)
		return e->id;
	if (g->what_count == g->what_cap) {
		size_t cap = g->what_cap ? g->what_cap * 2 : 16;
		struct ident_what *p = cap < UINT32_MAX ? realloc(g->whats, cap * sizeof *p) : NULL;
		if (!p)
			return UINT32_MAX;
		g->whats = p;
		g->what_cap = cap;
	}
	g->whats[g->what_count] = (struct ident_what){type, kind};
	memo_put(&g->memo, e, k, NULL, (uint32_t)g->what_count); /* (forgotten: only added again) */
	return (uint32_t)g->what_count++;
}

/* Where the ident of an awaited object (or owner) is kept: a task of the scan's by its index (a
 * million awaited tasks take 4 MB, where a map took 32), anything else in the map. NULL when out
 * of memory. */
static uint32_t *ident_slot(struct groups *g, uint64_t key)
{
	const struct adac_async_scan *s = &g->l->p->scan;
	uint32_t t = adac_scan_find_task(s, key);
	if (t != ADAC_SCAN_NONE) {
		if (!g->task_ident && !(g->task_ident = adac_array_zeroed(s->task_count, sizeof *g->task_ident)))
			return NULL;
		return &g->task_ident[t];
	}
	bool added;
	struct ident_rec *r = adac_addr_map_get(&g->ident_index, key, sizeof *r, &added);
	return r ? &r->index : NULL;
}

/* What found the idents (ident_slot) and counted their stacks (first_code): 10 MB at a million
 * tasks, freed once every stack has its first code, before the labels are made (the listing's
 * peak of memory). */
static void drop_ident_lookup(struct groups *g)
{
	free(g->task_ident);
	g->task_ident = NULL;
	adac_addr_map_free(&g->ident_index);
	free(g->first_seen);
	g->first_seen = NULL;
}

/* What a stack awaits (described in buf), NULL when it runs or its awaiting is not recorded. */
static const struct adac_awaiting *awaits_of(const struct groups *g, const struct adac_pending_stack *st,
                                             struct adac_awaiting *buf)
{
	return st->running ? NULL : adac_pending_stack_awaiting(g->l, st, buf);
}

/* A stack's first code, aw being what it awaits (awaits_of): the identity of what it awaits (the
 * object, or the SemaphoreSlim whose waiter it is) with IDENT_BIT, else its await_id. UINT32_MAX
 * when out of memory. */
static uint32_t first_code(struct groups *g, const struct adac_pending_stack *st, const struct adac_awaiting *aw)
{
	if (aw && aw->object && aw->type) {
		const struct adac_awaited_owner *owner = adac_awaited_owner_of(&g->l->p->owners, aw->object);
		uint32_t *slot = ident_slot(g, owner ? owner->addr : aw->object);
		if (!slot)
			return UINT32_MAX;
		if (!*slot) {
			uint32_t what = ident_what(g, aw->type, aw->kind);
			if (what == UINT32_MAX)
				return UINT32_MAX;
			if (g->ident_count >= IDENT_BIT ||
			    adac_grow((void **)&g->idents, &g->ident_cap, g->ident_count + 1, sizeof *g->idents, 256))
				return UINT32_MAX;
			g->idents[g->ident_count++] = (struct ident){aw->object, owner, what, 0};
			*slot = (uint32_t)g->ident_count;
		}
		uint32_t index = *slot - 1;
		if (!g->first_seen) {
			size_t n = g->l->p->graph.node_count;
			g->first_seen = adac_array_zeroed(n, sizeof *g->first_seen);
			if (!g->first_seen)
				return UINT32_MAX;
		}
		uint32_t node = (uint32_t)(st->segs[0].node - g->l->p->graph.nodes);
		if (!g->first_seen[node])
			g->idents[index].stacks++;
		g->first_seen[node] = true;
		return index | IDENT_BIT;
	}
	return await_id(g, st->running, aw != NULL, aw ? aw->type : NULL);
}

/* Records the meta of label id. */
static int set_meta(struct groups *g, uint32_t id, const struct first_meta *m)
{
	size_t *cap = &g->meta_cap;
	if (id >= *cap) {
		size_t n = *cap ? *cap * 2 : 256;
		while (n <= id)
			n *= 2;
		struct first_meta *p = realloc(g->meta, n * sizeof *p);
		if (!p)
			return adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory grouping stacks");
		memset(p + *cap, 0, (n - *cap) * sizeof *p);
		g->meta = p;
		*cap = n;
	}
	g->meta[id] = *m;
	return 0;
}

/* What objects of one type and kind are, as a label id: "<type> (<kind>)" (the kinds are
 * awaited.h's, the same string for all of a kind). */
static uint32_t what_id(struct groups *g, const char *type, const char *kind)
{
	char buf[LABEL_MAX / 2];
	const uint64_t k[MEMO_KEYS] = {MEMO_WHAT, (uintptr_t)type, (uintptr_t)kind, 0, 0};
	struct memo_slot *e = memo_slot(&g->memo, k, NULL);
	if (e && e->used)
		return e->id;
	snprintf(buf, sizeof buf, "%s%s%s%s", type, kind ? " (" : "", kind ? kind : "", kind ? ")" : "");
	return text_id(g, e, k, NULL, buf);
}

/* "awaiting <n> distinct <what>", what being what_id's label t. */
static uint32_t distinct_id(struct groups *g, uint32_t t, uint64_t n)
{
	char buf[LABEL_MAX];
	const uint64_t k[MEMO_KEYS] = {MEMO_DISTINCT, t, n, 0, 0};
	struct memo_slot *e = memo_slot(&g->memo, k, NULL);
	if (e && e->used)
		return e->id;
	snprintf(buf, sizeof buf, "awaiting %llu distinct %s", (unsigned long long)n, g->labels.text[t]);
	return text_id(g, e, k, NULL, buf);
}

/* The first label of each ident: "awaiting one SemaphoreSlim 0x... (current count 0, 7000 waiters)"
 * for a semaphore's waiters, "awaiting one <type> 0x..." for an object several stacks await, else
 * "awaiting <n> distinct <type> (<kind>)" for the objects of one type and kind each awaited by one
 * stack ("awaiting <type>" when there is one). */
static int ident_labels(struct groups *g)
{
	char buf[LABEL_MAX];
	struct counts singles = {0};     /* per "<type>" label id: objects awaited by one stack */
	g->first_label = adac_array_new(g->ident_count, sizeof *g->first_label);
	if (!g->first_label)
		return adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory grouping stacks");
	for (size_t pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < g->ident_count; i++) {
			const struct ident *d = &g->idents[i];
			const struct ident_what *w = &g->whats[d->what];
			struct first_meta m = {.is_await = true, .object = d->object, .objects = 1, .owner = d->owner};
			uint32_t id;
			if (d->owner) {
				if (pass)
					continue;
				const struct adac_awaited_owner *o = d->owner;
				int w = snprintf(buf, sizeof buf, "awaiting one %s 0x%016llx (", "System.Threading.SemaphoreSlim",
				                 (unsigned long long)o->addr);
				if (o->has_count)
					w += snprintf(buf + w, sizeof buf - (size_t)w, "current count %d, ", o->current_count);
				snprintf(buf + w, sizeof buf - (size_t)w, "%s%llu waiter%s)", o->waiters_capped ? "at least " : "",
				         (unsigned long long)o->waiters, o->waiters == 1 ? "" : "s");
				m.object = o->addr;
				id = adac_label_id(&g->labels, buf);
			} else if (d->stacks > 1) {
				if (pass)
					continue;
				snprintf(buf, sizeof buf, "awaiting one %s 0x%016llx%s%s%s", w->type, (unsigned long long)d->object,
				         w->kind ? " (" : "", w->kind ? w->kind : "", w->kind ? ")" : "");
				id = adac_label_id(&g->labels, buf);
			} else {
				/* Objects of one type and kind count together (pass 0 keeps their what_id in
				 * first_label[i] for pass 1). */
				uint32_t t = pass ? g->first_label[i] : what_id(g, w->type, w->kind);
				if (pass == 0) {
					if (t == UINT32_MAX || count_add(&singles, t, 1))
						goto nomem;
					g->first_label[i] = t;
					continue;
				}
				m.objects = singles.n[t];
				if (m.objects > 1) {
					m.object = 0;
					id = distinct_id(g, t, m.objects);
				} else {
					id = await_id(g, false, true, w->type); /* "awaiting <type>" */
				}
			}
			if (id == UINT32_MAX || set_meta(g, id, &m))
				goto nomem;
			g->first_label[i] = id;
		}
	free(singles.n);
	return 0;
nomem:
	free(singles.n);
	return adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory grouping stacks");
}

/* JSON members of a first label that stands for awaited objects: "object" (when one), "objects",
 * "semaphore" {"address", "current_count", "waiters"}. */
static void first_json(const struct groups *g, uint32_t label, json_t *j)
{
	const struct first_meta *m = label < g->meta_cap ? &g->meta[label] : NULL;
	if (!m || !m->is_await)
		return;
	if (m->object)
		json_object_set_new(j, "object", adac_json_addr(m->object));
	json_object_set_new(j, "objects", json_integer((json_int_t)m->objects));
	if (m->owner) {
		json_t *o = json_object();
		json_object_set_new(o, "address", adac_json_addr(m->owner->addr));
		if (m->owner->has_count)
			json_object_set_new(o, "current_count", json_integer(m->owner->current_count));
		json_object_set_new(o, "waiters", json_integer((json_int_t)m->owner->waiters));
		json_object_set_new(o, "waiters_capped", json_boolean(m->owner->waiters_capped));
		json_object_set_new(j, "semaphore", o);
	}
}

static uint32_t final_first(const struct groups *g, uint32_t code)
{
	return code & IDENT_BIT ? g->first_label[code & ~IDENT_BIT] : code;
}

/* The labels of a stack, innermost first, through cb as label ids; the first (level 0) says what it
 * awaits, without identity, and is given only when `first` (folded stacks and graphs; --coalesce
 * and --stats label it by identity, first_code); the frames start at level 1. */
typedef int (*label_cb)(struct groups *g, uint32_t label, size_t level, const struct adac_pending_seg *s);

/* The labels of segment s through cb, from *level on (advanced past them). */
static int seg_labels(struct groups *g, const struct adac_pending_seg *s, size_t *level, label_cb cb)
{
	char buf[LABEL_MAX];
	uint32_t id;
	if (s->node->kind == ADAC_NODE_CHAIN) {
		for (size_t k = 0; k < s->view.chain.count; k++) {
			if (!adac_async_frame_shown(&s->view.frames[k]))
				continue;
			if ((id = async_frame_id(g, &s->view.frames[k])) == UINT32_MAX)
				return adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory grouping stacks");
			if (cb(g, id, (*level)++, s))
				return -1;
		}
		if (s->view.chain.end != ADAC_CHAIN_BROKEN && s->view.chain.end != ADAC_CHAIN_CYCLE)
			return 0;
		snprintf(buf, sizeof buf, "error: %s", s->view.chain.end_err.msg);
		id = adac_label_id(&g->labels, buf);
	} else if (s->node->kind == ADAC_NODE_BOX) {
		id = adac_label_id(&g->labels, classic_label(&s->classic, buf, sizeof buf));
	} else {
		id = task_id(g, g->l->p->scan.tasks[s->node->index].addr);
	}
	if (id == UINT32_MAX)
		return adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory grouping stacks");
	return cb(g, id, (*level)++, s);
}

static int stack_labels(struct groups *g, const struct adac_pending_stack *st, bool first, label_cb cb)
{
	size_t level = 0;
	if (first) {
		struct adac_awaiting buf;
		const struct adac_awaiting *aw = awaits_of(g, st, &buf);
		uint32_t id = await_id(g, st->running, aw != NULL, aw ? aw->type : NULL);
		if (id == UINT32_MAX)
			return adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory grouping stacks");
		if (cb(g, id, level, NULL))
			return -1;
	}
	level++;
	for (uint32_t i = 0; i < st->stack->count; i++)
		if (seg_labels(g, &st->segs[i], &level, cb))
			return -1;
	return 0;
}

static int coalesce_cb(struct groups *g, uint32_t id, size_t level, const struct adac_pending_seg *s)
{
	(void)s;
	if (level == 0)
		g->cursor = 0;
	uint32_t c = adac_trie_child(&g->trie, g->cursor, id);
	if (!c)
		return adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory grouping stacks");
	g->trie.n[c].count++;
	g->cursor = c;
	return 0;
}

/* --coalesce: a stack's frame labels into g->frames (each distinct run of frames is kept once). */
static int record_cb(struct groups *g, uint32_t id, size_t level, const struct adac_pending_seg *s)
{
	(void)level;
	(void)s;
	uint32_t c = adac_trie_child(&g->frames, g->cursor, id);
	if (!c)
		return adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory grouping stacks");
	g->cursor = c;
	return 0;
}

/* --coalesce: the recorded stacks into the trie, each under its final first label, then its frame
 * labels (read back from its last one up). */
static int build_trie(struct groups *g)
{
	size_t cap = 64;
	uint32_t *path = malloc(cap * sizeof *path);
	if (!path)
		return adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory grouping stacks");
	int rc = 0;
	for (size_t i = 0; i + 1 < g->seq_len && rc == 0; i += 2) {
		size_t depth = 0;
		for (uint32_t f = g->seq[i + 1]; f; f = g->frames.n[f].parent) {
			if (depth == cap) {
				uint32_t *p = realloc(path, cap * 2 * sizeof *p);
				if (!p) {
					rc = -1;
					break;
				}
				path = p;
				cap *= 2;
			}
			path[depth++] = g->frames.n[f].label;
		}
		uint32_t c = rc ? 0 : adac_trie_child(&g->trie, 0, final_first(g, g->seq[i]));
		for (size_t level = 0; c; level++) {
			g->trie.n[c].count++;
			if (level == depth)
				break;
			c = adac_trie_child(&g->trie, c, path[depth - 1 - level]);
		}
		if (!c)
			rc = -1;
	}
	free(path);
	return rc ? adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory grouping stacks") : 0;
}

/* --stats: a frame's label, counted. */
static int stats_cb(struct groups *g, uint32_t id, size_t level, const struct adac_pending_seg *s)
{
	(void)level;
	(void)s;
	if (count_add(&g->frame_counts, id, 1))
		return adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory counting frames");
	return 0;
}

/* --stats: the frames and the task of each node of the stack that no stack counted before: each
 * continuation, box and task once, however many stacks share it. The listing's threads claim the
 * nodes in g->counted, which they share. */
static int count_nodes(struct groups *g, const struct adac_pending_stack *st)
{
	char buf[LABEL_MAX];
	size_t level = 1;
	for (uint32_t i = 0; i < st->stack->count; i++) {
		const struct adac_pending_seg *s = &st->segs[i];
		uint32_t node = (uint32_t)(s->node - g->l->p->graph.nodes);
		if (__atomic_exchange_n(&g->counted[node], true, __ATOMIC_RELAXED))
			continue;
		if (seg_labels(g, s, &level, stats_cb))
			return -1;
		struct adac_task_desc d;
		adac_pending_node_task_desc_on(g->l->p, g->rt, s->node, &d);
		if (!d.addr)
			continue;
		const char *status = d.has_flags ? adac_task_status(d.flags) : "?";
		const uint64_t k[MEMO_KEYS] = {MEMO_TASK_STAT, (uintptr_t)status, (uintptr_t)d.type, 0, 0};
		struct memo_slot *e = memo_slot(&g->memo, k, NULL);
		uint32_t id;
		if (e && e->used) {
			id = e->id;
		} else {
			snprintf(buf, sizeof buf, "%-28s %s", status, d.type ? d.type : "?");
			id = text_id(g, e, k, NULL, buf);
		}
		if (id == UINT32_MAX || count_add(&g->task_counts, id, 1))
			return adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory counting tasks");
	}
	return 0;
}

/* --stats on the thread that resolved the stack (adac_pending_list_digest): its frames and tasks,
 * into that thread's part. */
static void digest_stats(void *ctx, const struct adac_pending_stack *st, struct adac_out *out)
{
	(void)out;
	struct groups *part = ctx;
	part->rt = st->rt;
	if (!adac_failed(&part->fail))
		count_nodes(part, st);
}

/* --coalesce's digest writes where the stack's frames end in its part's trie: the node, with the
 * part in the top bits. */
#define PART_SHIFT 30
#define PART_NODE ((1u << PART_SHIFT) - 1)

/* --coalesce on the thread that resolved the stack: its frame labels into that thread's part's
 * trie; *v where they end there. false when it failed (the part says why). */
static bool coalesce_node(struct groups *part, const struct adac_pending_stack *st, uint32_t *v)
{
	part->rt = st->rt;
	part->cursor = 0;
	if (adac_failed(&part->fail) || stack_labels(part, st, false, record_cb))
		return false;
	if (part->cursor > PART_NODE) {
		adac_fail(&part->fail, ADAC_E_LIMIT, 0, "more than %u distinct stacks", PART_NODE);
		return false;
	}
	*v = part->cursor | part->part << PART_SHIFT;
	return true;
}

/* --coalesce's digest (adac_pending_list_digest): the node; the listing's thread puts it after the
 * stack's first code. */
static void digest_coalesce(void *ctx, const struct adac_pending_stack *st, struct adac_out *out)
{
	uint32_t v;
	if (coalesce_node(ctx, st, &v))
		out->write(out->ctx, (const char *)&v, sizeof v);
}

/* Report's, on the thread that resolved the stack: --stats' and --coalesce's digests from one
 * listing, and an await cycle's text (its frames are not read again on the listing's thread): the
 * stack's text is the node (0 when its digest failed: its part says why), then the cycle's text. */
static void digest_report(void *ctx, const struct adac_pending_stack *st, struct adac_out *out)
{
	struct groups *part = ctx;
	digest_stats(ctx, st, out);
	uint32_t v = 0;
	coalesce_node(part, st, &v);
	out->write(out->ctx, (const char *)&v, sizeof v);
	char *cycle = st->stack->cycle ? adac_pending_cycle_text(part->l, st) : NULL;
	if (cycle)
		out->write(out->ctx, cycle, strlen(cycle));
	free(cycle);
}

/* A helper's part (helper k's) added to g: its counts under g's labels (--stats), its recorded
 * stacks into g's trie of frames (--coalesce). */
static int merge_part(struct groups *g, const struct groups *part)
{
	if (adac_failed(&part->fail)) {
		adac_error_copy(&g->fail, &part->fail);
		return -1;
	}
	if (part->frames.count > 1) {
		/* A node's parent comes before it: each is put under its parent's place in g's trie. */
		uint32_t *to = malloc(part->frames.count * sizeof *to);
		if (!to)
			return adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory grouping stacks");
		to[0] = 0;
		for (size_t n = 1; n < part->frames.count; n++) {
			const struct adac_trie_node *x = &part->frames.n[n];
			uint32_t label = adac_label_id(&g->labels, part->labels.text[x->label]);
			if (label == UINT32_MAX || !(to[n] = adac_trie_child(&g->frames, to[x->parent], label))) {
				free(to);
				return adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory grouping stacks");
			}
		}
		for (size_t i = 1; i < g->seq_len; i += 2)
			if (g->seq[i] >> PART_SHIFT == part->part)
				g->seq[i] = to[g->seq[i] & PART_NODE];
		free(to);
	}
	const struct counts *from[] = {&part->frame_counts, &part->task_counts};
	struct counts *to[] = {&g->frame_counts, &g->task_counts};
	for (size_t k = 0; k < 2; k++)
		for (size_t label = 0; label < from[k]->cap; label++) {
			if (!from[k]->n[label])
				continue;
			uint32_t id = adac_label_id(&g->labels, part->labels.text[label]);
			if (id == UINT32_MAX || count_add(to[k], id, from[k]->n[label]))
				return adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory counting frames");
		}
	return 0;
}

struct ranked {
	uint32_t label;
	uint64_t count;
	const char *text;
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->text, y->text);
}

/* The labels with a count, most frequent first. */
static struct ranked *rank(struct groups *g, const struct counts *c, size_t *n)
{
	*n = 0;
	struct ranked *r = malloc((c->cap ? c->cap : 1) * sizeof *r);
	if (!r)
		return NULL;
	for (size_t i = 0; i < c->cap; i++)
		if (c->n[i])
			r[(*n)++] = (struct ranked){(uint32_t)i, c->n[i], g->labels.text[i]};
	qsort(r, *n, sizeof *r, cmp_ranked);
	return r;
}

/* Children of a trie node, most frequent first. */
static struct ranked *children(struct groups *g, uint32_t node, size_t *n)
{
	*n = 0;
	for (uint32_t c = g->trie.n[node].first_child; c; c = g->trie.n[c].next_sibling)
		(*n)++;
	struct ranked *r = malloc((*n ? *n : 1) * sizeof *r);
	if (!r)
		return NULL;
	size_t i = 0;
	for (uint32_t c = g->trie.n[node].first_child; c; c = g->trie.n[c].next_sibling)
		r[i++] = (struct ranked){c, g->trie.n[c].count, g->labels.text[g->trie.n[c].label]};
	qsort(r, *n, sizeof *r, cmp_ranked);
	return r;
}

/* ---- the text tree ---- */

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
	       c == '+' || c == '`';
}

/* Appends text[0, len) to buf at *w with each dotted name cut to its last part inside (), <> and
 * [] ("System.Threading.Tasks.Task<Int32>" -> "Task<Int32>"), and at nesting depth 0 too when
 * `outer` (a name after a closing bracket keeps its dot: "Outer<T>.Inner"). */
static void append_short(char *buf, size_t size, size_t *w, const char *text, size_t len, bool outer)
{
	unsigned depth = 0;
	for (size_t i = 0; i < len && *w + 1 < size;) {
		char c = text[i];
		if (!name_char(c) || c == '`') {
			depth += c == '(' || c == '<' || c == '[';
			depth -= depth && (c == ')' || c == '>' || c == ']');
			buf[(*w)++] = c;
			i++;
			continue;
		}
		size_t j = i;
		while (j < len && name_char(text[j]) && text[j] != '`')
			j++;
		size_t from = i;
		if (depth || outer)
			for (size_t k = j; k > i; k--)
				if (text[k - 1] == '.') {
					from = k - 1 == i ? i : k;
					break;
				}
		for (size_t k = from; k < j && *w + 1 < size; k++)
			buf[(*w)++] = text[k];
		i = j;
	}
	buf[*w] = '\0';
}

/* A label as the text tree shows it, short enough for 100 columns: a frame without its module
 * and namespaces ("Type.Method(Int32, Task<Int32>) at File.cs:12 [state 1]"), awaited objects and
 * tasks by their type's name; errors and the rest unchanged. */
static const char *short_label(const char *label, char *buf, size_t size)
{
	size_t w = 0;
	buf[0] = '\0';
	if (strncmp(label, "awaiting ", 9) == 0 || strncmp(label, "task ", 5) == 0) {
		append_short(buf, size, &w, label, strlen(label), true);
		return buf;
	}
	const char *open = strchr(label, '(');
	const char *tick = strchr(label, '`');
	if (!open || strncmp(label, "error: ", 7) == 0 || strncmp(label, "running ", 8) == 0)
		return label;
	const char *name = tick && tick < open ? tick + 1 : label;
	/* The method keeps its type: from the second dot before the parenthesis, outside brackets. */
	unsigned dots = 0, depth = 0;
	for (const char *c = open; c > name; c--) {
		depth += c[-1] == '>' || c[-1] == ']';
		depth -= depth && (c[-1] == '<' || c[-1] == '[');
		if (!depth && c[-1] == '.' && ++dots == 2) {
			name = c;
			break;
		}
	}
	/* The signature ends at the parenthesis that closes the first one; the rest (" at File.cs:12
	 * [state 1]") is kept as it is. */
	const char *end = open;
	for (depth = 0; *end; end++) {
		depth += *end == '(';
		if (*end == ')' && --depth == 0) {
			end++;
			break;
		}
	}
	append_short(buf, size, &w, name, (size_t)(end - name), false);
	snprintf(buf + w, size - w, "%s", end);
	return buf;
}

/* The text tree: a line per node, "[count] label", innermost first; a node's callers follow it
 * at the same indentation while there is one, and each branch where stacks part starts with "+- "
 * (its later lines under "|  " while a sibling follows). A run of one frame calling itself is one
 * line ending in " x <n>" (recursion). */
struct text_tree {
	char *prefix;           /* the columns before the lines of the current branch */
	size_t cap;
};

static int prefix_set(struct groups *g, struct text_tree *tt, size_t at, const char *what)
{
	if (at + 4 > tt->cap) {
		size_t cap = tt->cap ? tt->cap * 2 : 64;
		while (cap < at + 4)
			cap *= 2;
		char *p = realloc(tt->prefix, cap);
		if (!p)
			return adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory");
		tt->prefix = p;
		tt->cap = cap;
	}
	memcpy(tt->prefix + at, what, 3);
	return 0;
}

/* Renders the tree depth first without recursion (stacks can be 100,000 frames deep). */
static int render_tree(struct groups *g, json_t *json_root)
{
	struct level {
		struct ranked *items;
		size_t n, next;
		json_t *array;
		size_t prefix;          /* text: columns of prefix before this level's lines */
	};
	struct text_tree tt = {0};
	size_t cap = 64, depth = 0;
	struct level *lv = malloc(cap * sizeof *lv);
	if (!lv)
		return adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory");
	lv[0].items = children(g, 0, &lv[0].n);
	lv[0].next = 0;
	lv[0].array = json_root;
	lv[0].prefix = 0;
	if (!lv[0].items) {
		free(lv);
		return adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory");
	}
	depth = 1;
	size_t group = 0;
	int rc = 0;
	char buf[LABEL_MAX];
	while (depth && rc == 0) {
		struct level *l = &lv[depth - 1];
		if (l->next == l->n) {
			free(l->items);
			depth--;
			continue;
		}
		const struct ranked *it = &l->items[l->next++];
		uint32_t node = it->label; /* children() ranks trie nodes: label is the node id */
		const char *text = g->labels.text[g->trie.n[node].label];
		json_t *kids = NULL;
		size_t prefix = l->prefix;
		if (l->array) {
			json_t *j = json_object();
			json_object_set_new(j, "frame", adac_json_text(text));
			json_object_set_new(j, "count", json_integer((json_int_t)it->count));
			if (depth == 1)
				first_json(g, g->trie.n[node].label, j);
			kids = json_array();
			json_object_set_new(j, "callers", kids);
			json_array_append_new(l->array, j);
		} else {
			if (depth == 1) {
				adac_print(g->out, "%sSTACKS %zu: %llu chain%s\n", group ? "\n" : "", group + 1,
				           (unsigned long long)it->count, it->count == 1 ? "" : "s");
				group++;
			}
			/* Recursion: the only caller is the same frame, for the same stacks. */
			uint64_t repeat = 1;
			for (uint32_t c; (c = g->trie.n[node].first_child) && !g->trie.n[c].next_sibling &&
			                 g->trie.n[c].label == g->trie.n[node].label && g->trie.n[c].count == it->count;
			     node = c)
				repeat++;
			bool branch = l->n > 1 && depth > 1;
			if (branch) {
				if (prefix_set(g, &tt, prefix, "+- ")) {
					rc = -1;
					break;
				}
				prefix += 3;
			}
			adac_print(g->out, "%.*s[%llu] %s", (int)prefix, tt.prefix ? tt.prefix : "",
			           (unsigned long long)it->count, short_label(text, buf, sizeof buf));
			if (repeat > 1)
				adac_print(g->out, " x %llu", (unsigned long long)repeat);
			adac_print(g->out, "\n");
			if (branch && prefix_set(g, &tt, prefix - 3, l->next < l->n ? "|  " : "   ")) {
				rc = -1;
				break;
			}
		}
		if (!g->trie.n[node].first_child)
			continue;
		if (depth == cap) {
			size_t c = cap * 2;
			struct level *q = realloc(lv, c * sizeof *q);
			if (!q) {
				rc = adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory");
				break;
			}
			lv = q;
			cap = c;
		}
		struct level *nl = &lv[depth];
		nl->items = children(g, node, &nl->n);
		nl->next = 0;
		nl->array = kids;
		nl->prefix = prefix;
		if (!nl->items) {
			rc = adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory");
			break;
		}
		depth++;
	}
	while (depth)
		free(lv[--depth].items);
	free(lv);
	free(tt.prefix);
	return rc;
}

/* ---- folded stacks and the await graph ---- */

/* Every stack of the trie, depth first without recursion: cb(g, path, depth, ends) for each node,
 * path[0..depth) the trie nodes from the root's child to it, ends the stacks that end there. */
typedef int (*trie_visit)(struct groups *g, const uint32_t *path, size_t depth, uint64_t ends);

static int walk_trie(struct groups *g, trie_visit cb)
{
	size_t cap = 64, depth = 0;
	uint32_t *path = malloc(cap * sizeof *path);
	if (!path)
		return adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory");
	/* Go down first children, then to the next sibling of the deepest node that has one. */
	uint32_t node = g->trie.n[0].first_child;
	int rc = 0;
	while (node && rc == 0) {
		if (depth == cap) {
			uint32_t *p = realloc(path, cap * 2 * sizeof *p);
			if (!p) {
				rc = adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory");
				break;
			}
			path = p;
			cap *= 2;
		}
		path[depth++] = node;
		uint64_t ends = g->trie.n[node].count;
		for (uint32_t c = g->trie.n[node].first_child; c; c = g->trie.n[c].next_sibling)
			ends -= g->trie.n[c].count;
		rc = cb(g, path, depth, ends);
		if (g->trie.n[node].first_child) {
			node = g->trie.n[node].first_child;
			continue;
		}
		node = 0;
		while (depth && !(node = g->trie.n[path[depth - 1]].next_sibling))
			depth--;
		if (depth)
			depth--;
	}
	free(path);
	return rc;
}

/* A label for a folded line or a graph: short, without ';' (the folded format's separator), with
 * '"' and '\' escaped for DOT when `dot`. */
static const char *tool_label(const char *label, bool dot, char *buf, size_t size)
{
	char tmp[LABEL_MAX];
	const char *text = short_label(label, tmp, sizeof tmp);
	size_t w = 0;
	for (; *text && w + 3 < size; text++) {
		if (*text == ';' && !dot) {
			buf[w++] = ',';
			continue;
		}
		if (dot && (*text == '"' || *text == '\\'))
			buf[w++] = '\\';
		buf[w++] = *text;
	}
	buf[w] = '\0';
	return buf;
}

/* Folded stacks (flamegraph.pl, speedscope, inferno): "outermost;...;innermost;awaiting X <count>"
 * per distinct stack. */
static int folded_line(struct groups *g, const uint32_t *path, size_t depth, uint64_t ends)
{
	if (!ends)
		return 0;
	char buf[LABEL_MAX];
	for (size_t i = depth; i-- > 0;)
		adac_print(g->out, "%s%s", tool_label(g->labels.text[g->trie.n[path[i]].label], false, buf, sizeof buf),
		           i ? ";" : "");
	adac_print(g->out, " %llu\n", (unsigned long long)ends);
	return 0;
}

/* The await graph in DOT, as Parallel Stacks draws it: a box per run of frames the same stacks
 * share (innermost at the top, with the number of stacks), an edge from each box to the box of the
 * frames it awaits, and what the stacks await as leaves on top. A trie node (path[depth - 1])
 * starts a box when it is what stacks await or the innermost frame, when its callee has other
 * callers, or when fewer stacks pass through it. */
static bool box_start(const struct groups *g, const uint32_t *path, size_t depth)
{
	if (depth < 3)
		return true;
	uint32_t node = path[depth - 1], callee = path[depth - 2];
	return g->trie.n[callee].first_child != node || g->trie.n[node].next_sibling ||
	       g->trie.n[node].count != g->trie.n[callee].count;
}

/* Ends the open box's last line: " x <n>" for a recursion, then the line's end. */
static void dot_line_end(struct groups *g)
{
	if (g->dot_repeat > 1)
		adac_print(g->out, " x %llu", (unsigned long long)g->dot_repeat);
	adac_print(g->out, "\\l");
}

static int dot_node(struct groups *g, const uint32_t *path, size_t depth, uint64_t ends)
{
	(void)ends;
	uint32_t node = path[depth - 1], label = g->trie.n[node].label;
	unsigned long long n = (unsigned long long)g->trie.n[node].count;
	char buf[LABEL_MAX];
	if (!box_start(g, path, depth)) {
		if (label == g->dot_last) {
			g->dot_repeat++;
			return 0;
		}
		dot_line_end(g);
		adac_print(g->out, "%s", tool_label(g->labels.text[label], true, buf, sizeof buf));
		g->dot_last = label;
		g->dot_repeat = 1;
		return 0;
	}
	const char *text = tool_label(g->labels.text[label], true, buf, sizeof buf);
	if (g->dot_open) {
		dot_line_end(g);
		adac_print(g->out, "\"];\n");
	}
	g->dot_open = false;
	if (depth == 1) {
		adac_print(g->out, "  n%u [shape=ellipse, style=filled, fillcolor=\"#fff3c4\", label=\"%s\\n%llu stack%s\"];\n",
		           node, text, n, n == 1 ? "" : "s");
		return 0;
	}
	size_t k = depth - 2;
	while (!box_start(g, path, k + 1))
		k--;
	adac_print(g->out, "  n%u -> n%u;\n  n%u [label=\"%llu stack%s\\n%s", node, path[k], node, n, n == 1 ? "" : "s", text);
	g->dot_open = true;
	g->dot_last = label;
	g->dot_repeat = 1;
	return 0;
}

static int render_graph(struct groups *g, enum adac_stack_grouping how)
{
	if (how == ADAC_GROUP_FOLDED)
		return walk_trie(g, folded_line);
	adac_print(g->out, "digraph asyncdac {\n"
	                   "  rankdir=BT;\n"
	                   "  node [shape=box, fontname=\"monospace\", fontsize=10];\n"
	                   "  edge [arrowsize=0.6];\n");
	int rc = walk_trie(g, dot_node);
	if (g->dot_open) {
		dot_line_end(g);
		adac_print(g->out, "\"];\n");
	}
	adac_print(g->out, "}\n");
	return rc;
}

static void print_table(struct groups *g, const char *title, const char *column, const struct counts *c, json_t *json,
                        const char *key)
{
	size_t n;
	struct ranked *r = rank(g, c, &n);
	if (!r) {
		adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory");
		return;
	}
	if (json) {
		json_t *a = json_array();
		for (size_t i = 0; i < n; i++) {
			json_t *j = json_object();
			json_object_set_new(j, key, adac_json_text(r[i].text));
			json_object_set_new(j, "count", json_integer((json_int_t)r[i].count));
			if (c == &g->await_counts)
				first_json(g, r[i].label, j);
			json_array_append_new(a, j);
		}
		json_object_set_new(json, title, a);
	} else {
		adac_print(g->out, "%s:\n%10s  %s\n", title, "Count", column);
		for (size_t i = 0; i < n; i++)
			adac_print(g->out, "%10llu  %s\n", (unsigned long long)r[i].count, r[i].text);
	}
	free(r);
}

/* ---- the listing ---- */

static void groups_free(struct groups *g)
{
	free(g->counted);
	adac_trie_free(&g->trie);
	adac_trie_free(&g->frames);
	free(g->frame_counts.n);
	free(g->await_counts.n);
	free(g->task_counts.n);
	free(g->idents);
	free(g->whats);
	drop_ident_lookup(g);
	free(g->seq);
	free(g->first_label);
	free(g->meta);
	adac_labels_free(&g->labels);
	memo_free(&g->memo);
}

/* Entries of seq per stack: its first code, and with --coalesce where its frames end. */
static size_t seq_stride(const struct groups *g) { return g->coalesce ? 2 : 1; }

/* Sets g (and its helpers' parts) up for a listing not started yet: the stacks are digested as
 * they resolve where what g groups allows it. */
static int groups_begin(struct groups *g, struct groups *parts, struct adac_pending_list *l, struct adac_out *out,
                        bool stats, bool coalesce, struct adac_error *err)
{
	*g = (struct groups){.l = l, .out = out, .rt = l->p->rt, .stats = stats, .coalesce = coalesce};
	memset(parts, 0, ADAC_LIST_MAX_HELPERS * sizeof *parts);
	g->counted = adac_array_zeroed(l->p->graph.node_count, sizeof *g->counted);
	if (!g->counted || adac_trie_init(&g->trie) || (coalesce && adac_trie_init(&g->frames)))
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	if (!stats && !coalesce)
		return 0;
	void *ctxs[1 + ADAC_LIST_MAX_HELPERS] = {g};
	for (unsigned k = 0; k < ADAC_LIST_MAX_HELPERS; k++) {
		parts[k] = (struct groups){.l = l, .out = out, .counted = g->counted, .part = k + 1, .stats = stats,
		                           .coalesce = coalesce};
		ctxs[1 + k] = &parts[k];
		if (coalesce && adac_trie_init(&parts[k].frames))
			return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	}
	g->digested = adac_pending_list_digest(l, stats && coalesce ? digest_report : stats ? digest_stats : digest_coalesce,
	                                       ctxs);
	return 0;
}

/* One listed stack into g: what it awaits (its first code, labelled once the identities are known)
 * and, unless digested, --stats' counts and --coalesce's frames; folded stacks and graphs: its
 * labels. -1 when out of memory (g->fail). */
static int add_stack(struct groups *g, const struct adac_pending_stack *st)
{
	if (!g->stats && !g->coalesce) {
		stack_labels(g, st, true, coalesce_cb);
		return adac_failed(&g->fail) ? -1 : 0;
	}
	struct adac_awaiting buf;
	const struct adac_awaiting *aw = awaits_of(g, st, &buf);
	uint32_t code = first_code(g, st, aw);
	if (code == UINT32_MAX)
		return adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory grouping stacks");
	if (seq_push(g, code))
		return -1;
	if (g->stats) {
		/* (whether the stack awaits a completed task: on the listing's thread, as identities) */
		if (aw && aw->has_state_flags && (aw->state_flags & ADAC_TASK_COMPLETED_MASK))
			g->not_resumed++;
		if (!g->digested)
			count_nodes(g, st);
	}
	if (g->coalesce) {
		uint32_t end = 0; /* (a digest that failed wrote nothing or 0: its part says why) */
		if (g->digested && st->text_len >= sizeof end)
			memcpy(&end, st->text, sizeof end);
		g->cursor = 0;
		if (g->digested || stack_labels(g, st, false, record_cb) == 0)
			seq_push(g, g->digested ? end : g->cursor);
	}
	return adac_failed(&g->fail) ? -1 : 0;
}

/* After the listing's last stack (more: what adac_pending_list_next returned last): the helpers'
 * parts added, the identities labelled, --coalesce's tree built, --stats' stacks counted per what
 * they await. */
static int groups_end(struct groups *g, struct groups *parts, int more)
{
	if (more == 0 && g->digested) {
		adac_pending_list_digest_end(g->l); /* (the helpers are done with the parts) */
		for (unsigned k = 0; k < ADAC_LIST_MAX_HELPERS && more == 0; k++)
			more = merge_part(g, &parts[k]);
	}
	if (more < 0 || (!g->stats && !g->coalesce))
		return more;
	drop_ident_lookup(g);
	if (ident_labels(g))
		return -1;
	if (g->coalesce && build_trie(g))
		return -1;
	if (g->stats)
		for (size_t i = 0; i < g->seq_len; i += seq_stride(g))
			if (count_add(&g->await_counts, final_first(g, g->seq[i]), 1))
				return adac_fail(&g->fail, ADAC_E_NOMEM, 0, "out of memory counting frames");
	return 0;
}

/* g and its parts freed, the helpers stopped first (whatever stopped the listing). */
static void groups_done(struct groups *g, struct groups *parts)
{
	if (g->digested)
		adac_pending_list_digest_end(g->l); /* (before the parts go) */
	for (unsigned k = 0; k < ADAC_LIST_MAX_HELPERS; k++) {
		parts[k].counted = NULL; /* (g's) */
		groups_free(&parts[k]);
	}
	groups_free(g);
}

/* --stats, when stacks await completed tasks: the thread pool's state, where the runtime exposes
 * it (a starved pool leaves continuations queued). */
static void thread_pool_stats(struct groups *g, json_t *st)
{
	const struct adac_thread_pool *tp = adac_thread_pool(g->l->p->rt);
	bool starved = adac_thread_pool_starved(tp);
	char facts[160];
	adac_thread_pool_text(tp, facts, sizeof facts);
	if (st) {
		json_t *j = json_object();
		json_object_set_new(j, "not_resumed", json_integer((json_int_t)g->not_resumed));
		if (tp->has_workers || tp->has_queue)
			json_object_set_new(j, "starved", json_boolean(starved));
		if (tp->has_workers) {
			json_object_set_new(j, "busy", json_integer(tp->working));
			json_object_set_new(j, "existing", json_integer(tp->existing));
			json_object_set_new(j, "max", json_integer(tp->max));
		}
		if (tp->has_queue)
			json_object_set_new(j, "queued", json_integer((json_int_t)tp->queued));
		json_object_set_new(st, "thread_pool", j);
		return;
	}
	adac_print(g->out, "Thread pool:\n  %llu stack%s await%s a completed task whose continuation has not run: %s%s%s%s\n\n",
	           (unsigned long long)g->not_resumed, g->not_resumed == 1 ? "" : "s", g->not_resumed == 1 ? "s" : "",
	           starved ? "the thread pool is starved" : "a starved thread pool?", facts[0] ? " (" : "", facts,
	           facts[0] ? ")" : "");
}

static void render(struct groups *g, enum adac_stack_grouping how, json_t *root)
{
	if (how == ADAC_GROUP_FOLDED || how == ADAC_GROUP_DOT) {
		render_graph(g, how);
		return;
	}
	if (how == ADAC_GROUP_COALESCE) {
		if (root) {
			json_t *tree = json_array();
			json_object_set_new(root, "coalesce", tree);
			render_tree(g, tree);
		} else {
			render_tree(g, NULL);
			if (g->l->listed)
				adac_print(g->out, "\n");
		}
		return;
	}
	json_t *st = root ? json_object() : NULL;
	print_table(g, "Frames", "Frame (each continuation or state machine once)", &g->frame_counts, st, "frame");
	if (!root)
		adac_print(g->out, "\n");
	print_table(g, "Awaiting", "What the stacks' innermost frames wait for", &g->await_counts, st, "awaiting");
	if (!root)
		adac_print(g->out, "\n");
	print_table(g, "Tasks", "Status                       Type", &g->task_counts, st, "task");
	if (!root)
		adac_print(g->out, "\n");
	if (g->not_resumed)
		thread_pool_stats(g, st);
	if (root)
		json_object_set_new(root, "stats", st);
}

int adac_stack_groups_print(struct adac_pending_list *l, enum adac_stack_grouping how, bool json, struct adac_out *out,
                            struct adac_error *err)
{
	struct groups g;
	struct groups parts[ADAC_LIST_MAX_HELPERS];
	int rc = groups_begin(&g, parts, l, out, how == ADAC_GROUP_STATS, how == ADAC_GROUP_COALESCE, err);
	if (rc)
		goto done;
	/* Folded stacks and graphs are read by tools: nothing but the stacks. */
	bool text = !json && (g.stats || g.coalesce);
	if (text)
		adac_pending_print_warnings(l->p, out);
	struct adac_pending_stack st;
	int more;
	while ((more = adac_pending_list_next(l, &st, err)) > 0 && add_stack(&g, &st) == 0)
		;
	if (groups_end(&g, parts, adac_failed(&g.fail) ? -1 : more)) {
		adac_error_copy(err, &g.fail);
		rc = -1;
		goto done;
	}
	json_t *root = json ? json_object() : NULL;
	render(&g, how, root);
	if (adac_failed(&g.fail)) {
		json_decref(root);
		adac_error_copy(err, &g.fail);
		rc = -1;
		goto done;
	}
	if (root) {
		adac_pending_json_members(l, root);
		rc = adac_json_print_document(out, "ps", root, err);
	} else if (text) {
		adac_pending_print_summary(l, out);
	}
done:
	groups_done(&g, parts);
	return rc;
}

/* ---- report: both groupings and the shared objects, from one listing ---- */

struct adac_stack_groups {
	struct groups g;
	struct groups parts[ADAC_LIST_MAX_HELPERS];
};

struct adac_stack_groups *adac_stack_groups_begin(struct adac_pending_list *l, struct adac_out *out,
                                                  struct adac_error *err)
{
	struct adac_stack_groups *sg = calloc(1, sizeof *sg);
	if (!sg) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		return NULL;
	}
	if (groups_begin(&sg->g, sg->parts, l, out, true, true, err)) {
		adac_stack_groups_free(sg);
		return NULL;
	}
	return sg;
}

int adac_stack_groups_add(struct adac_stack_groups *sg, const struct adac_pending_stack *st, struct adac_error *err)
{
	return add_stack(&sg->g, st) ? adac_error_copy(err, &sg->g.fail) : 0;
}

int adac_stack_groups_end(struct adac_stack_groups *sg, int more, struct adac_error *err)
{
	return groups_end(&sg->g, sg->parts, more) ? adac_error_copy(err, &sg->g.fail) : 0;
}

int adac_stack_groups_render(struct adac_stack_groups *sg, enum adac_stack_grouping how, json_t *root,
                             struct adac_error *err)
{
	struct groups *g = &sg->g;
	if (how != ADAC_GROUP_COALESCE && how != ADAC_GROUP_STATS)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "only --coalesce and --stats are rendered from report's groups");
	if (!root)
		adac_pending_print_warnings(g->l->p, g->out);
	render(g, how, root);
	if (adac_failed(&g->fail))
		return adac_error_copy(err, &g->fail);
	if (!root)
		adac_pending_print_summary(g->l, g->out);
	return 0;
}

char *adac_stack_groups_cycle_text(const struct adac_stack_groups *sg, const struct adac_pending_stack *st)
{
	if (!st->stack->cycle)
		return NULL;
	if (!sg->g.digested)
		return adac_pending_cycle_text(sg->g.l, st);
	if (st->text_len <= sizeof(uint32_t))
		return NULL;
	return strndup(st->text + sizeof(uint32_t), st->text_len - sizeof(uint32_t));
}

static int cmp_ident_stacks(const void *a, const void *b)
{
	const struct ident *x = *(const struct ident *const *)a, *y = *(const struct ident *const *)b;
	if (x->stacks != y->stacks)
		return x->stacks > y->stacks ? -1 : 1;
	return ident_key(x) < ident_key(y) ? -1 : ident_key(x) > ident_key(y);
}

int adac_stack_groups_shared(struct adac_stack_groups *sg, void (*add)(void *ctx, const char *text), void *ctx,
                             struct adac_error *err)
{
	const struct groups *g = &sg->g;
	const struct ident **shared = adac_array_new(g->ident_count, sizeof *shared);
	if (!shared)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	size_t n = 0;
	for (size_t i = 0; i < g->ident_count; i++)
		if (g->idents[i].stacks > 1)
			shared[n++] = &g->idents[i];
	qsort(shared, n, sizeof *shared, cmp_ident_stacks);
	for (size_t i = 0; i < n; i++) {
		const char *label = g->labels.text[g->first_label[shared[i] - g->idents]];
		char *text;
		if (asprintf(&text, "%llu chains await %s", (unsigned long long)shared[i]->stacks,
		             label + strlen("awaiting ")) < 0)
			continue; /* (out of memory: the finding is left out) */
		add(ctx, text);
		free(text);
	}
	free(shared);
	return 0;
}

void adac_stack_groups_free(struct adac_stack_groups *sg)
{
	if (!sg)
		return;
	groups_done(&sg->g, sg->parts);
	free(sg);
}
