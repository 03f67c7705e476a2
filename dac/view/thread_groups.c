/* thread_groups.c - `pstacks`. See thread_groups.h. Each thread's frames become label ids (each
 * distinct text once), put outermost first into a trie; the trie's single-child stretches print as
 * one group. */
#include "view/thread_groups.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async/resolved_chain.h"
#include "async/thread_stack.h"
#include "base/grow.h"
#include "base/json.h"
#include "base/labels.h"
#include "base/limits.h"
#include "base/output.h"
#include "base/trie.h"
#include "runtime/runtime.h"
#include "runtime/threads.h"
#include "target/target.h"
#include "view/wait_chain.h"

#define INDENT 4u        /* a group's callees, right of it */

/* A thread whose stack ends at a trie node. */
struct ending {
	uint32_t node;
	uint64_t tid;
};

/* One thread's walk: its frames' labels and stack pointers, innermost first. */
struct walk {
	struct groups *g;
	uint32_t *ids;
	uint64_t *sps;
	size_t n, cap;
	bool managed;          /* a managed frame was seen */
	struct adac_error err; /* the first problem unwinding */
	bool nomem;
};

struct groups {
	const struct adac_pstacks_opts *o;
	struct adac_labels labels;
	struct adac_trie trie;
	struct ending *ends;
	size_t nends, ends_cap;
	size_t threads, left_out;
	json_t *warnings;      /* the threads whose walk failed, as one-line texts */
	struct adac_frame_cache *cache; /* the async frames resolved */
	const struct adac_blocked_threads *blocked; /* what the threads wait on; NULL: not known */
};

static const struct adac_blocked *blocked(const struct groups *g, uint64_t tid)
{
	return g->blocked ? adac_blocked_thread(g->blocked, tid) : NULL;
}

/* A frame with label id, at stack pointer sp (0: unknown or an async frame). 1 when out of memory. */
static int push_id(struct walk *w, uint32_t id, uint64_t sp)
{
	size_t cap = w->cap;
	if (id == UINT32_MAX || adac_grow((void **)&w->ids, &cap, w->n + 1, sizeof *w->ids, 64) ||
	    adac_grow((void **)&w->sps, &w->cap, w->n + 1, sizeof *w->sps, 64)) {
		w->nomem = true;
		return 1;
	}
	w->ids[w->n] = id;
	w->sps[w->n++] = sp;
	return 0;
}

static int push(struct walk *w, const char *text, uint64_t sp)
{
	return push_id(w, adac_label_id(&w->g->labels, text), sp);
}

static int on_frame(void *ctx, const struct adac_stack_frame *f)
{
	struct walk *w = ctx;
	if (!f->managed && !w->g->o->all)
		return 0;
	w->managed |= f->managed;
	char text[1024];
	if (f->managed && f->symbol)
		snprintf(text, sizeof text, "%s", f->symbol);
	else if (f->symbol)
		snprintf(text, sizeof text, "%s`%s", f->module ? f->module : "?", f->symbol);
	else if (f->module)
		snprintf(text, sizeof text, "%s", f->module);
	else
		snprintf(text, sizeof text, "0x%016llx", (unsigned long long)f->pc);
	return push(w, text, f->sp) || w->n >= ADAC_MAX_UNWIND_FRAMES;
}

static void on_error(void *ctx, const struct adac_error *err)
{
	struct walk *w = ctx;
	if (!adac_failed(&w->err))
		adac_error_copy(&w->err, err);
}

static void warn(struct groups *g, uint64_t tid, const struct adac_error *e)
{
	char line[700];
	snprintf(line, sizeof line, "thread tid %llu: %s", (unsigned long long)tid, e->msg);
	json_array_append_new(g->warnings, adac_json_text(line));
}

/* The shown frames of the chain at head ("<method> [async]"), appended to w; 1 when out of memory. A
 * chain that cannot be walked is a warning. */
static int push_chain(struct walk *w, struct adac_runtime *rt, uint64_t tid, uint64_t head)
{
	struct adac_resolved_chain v;
	struct adac_error e = {0};
	if (adac_resolved_chain_build(rt, head, ADAC_MAX_CHAIN_DEPTH, w->g->cache, &v, &e)) {
		if (e.code == ADAC_E_NOMEM) {
			w->nomem = true;
			return 1;
		}
		adac_error_wrap(&e, "async frames: ");
		warn(w->g, tid, &e);
		return 0;
	}
	int rc = 0;
	for (size_t i = 0; i < v.chain.count && !rc; i++) {
		const struct adac_async_frame *f = &v.frames[i];
		char text[1024];
		if (!adac_async_frame_shown(f))
			continue;
		snprintf(text, sizeof text, "%s [async]", f->method ? f->method : "<unknown method>");
		rc = push(w, text, 0);
	}
	adac_resolved_chain_free(&v);
	return rc;
}

/* w's frames with the async frames of the chains th runs, each right after the frame of the dispatch
 * loop that resumed it (adac_thread_chain_after: as LLDB shows them with the plugin). */
static void add_chains(struct walk *w, struct adac_runtime *rt, const struct adac_thread *th)
{
	struct adac_managed_thread mth;
	struct adac_thread_chain chains[ADAC_MAX_DISPATCHERS];
	size_t nchains = 0, after[ADAC_MAX_DISPATCHERS];
	struct adac_error e = {0};
	if (adac_managed_thread_of(rt, th->tid, &mth, NULL))
		return;
	if (adac_thread_chains(rt, &mth, chains, &nchains, &e)) {
		adac_error_wrap(&e, "async frames: ");
		warn(w->g, th->tid, &e);
	}
	for (size_t d = 0; d < nchains; d++)
		if ((after[d] = adac_thread_chain_after(&chains[d], w->sps, w->n)) == SIZE_MAX) {
			adac_fail(&e, ADAC_E_NOT_FOUND, chains[d].dispatcher,
			          "async frames: no frame holds the dispatch loop's record 0x%016llx: its chain is left out",
			          (unsigned long long)chains[d].dispatcher);
			warn(w->g, th->tid, &e);
		}
	if (!nchains)
		return;
	struct walk all = {.g = w->g};
	int rc = 0;
	for (size_t i = 0; i < w->n && !rc; i++) {
		rc = push_id(&all, w->ids[i], w->sps[i]);
		for (size_t d = 0; d < nchains && !rc; d++)
			if (after[d] == i)
				rc = push_chain(&all, rt, th->tid, chains[d].head);
	}
	free(w->ids);
	free(w->sps);
	w->ids = all.ids;
	w->sps = all.sps;
	w->n = all.n;
	w->cap = all.cap;
	w->nomem |= all.nomem;
}

/* Thread th's stack into the trie. -1 when out of memory. */
static int add_thread(struct groups *g, struct adac_runtime *rt, const struct adac_thread *th)
{
	struct walk w = {.g = g};
	struct adac_stack_visitor v = {on_frame, on_error, &w};
	struct adac_error e = {0};
	if (adac_thread_stack_walk(rt, th->tid, &v, &e) && e.code != ADAC_E_UNSUPPORTED && !adac_failed(&w.err))
		adac_error_copy(&w.err, &e);
	if (adac_failed(&w.err))
		warn(g, th->tid, &w.err);
	if (!w.nomem && w.managed)
		add_chains(&w, rt, th);
	int rc = w.nomem ? -1 : 0;
	if (!rc && (!w.n || (!w.managed && !g->o->all))) {
		g->left_out++;
	} else if (!rc) {
		uint32_t node = 0;
		for (size_t i = w.n; i-- > 0 && node != UINT32_MAX;) {
			uint32_t c = adac_trie_child(&g->trie, node, w.ids[i]);
			node = c ? c : UINT32_MAX;
			if (c)
				g->trie.n[c].count++;
		}
		if (node == UINT32_MAX || adac_grow((void **)&g->ends, &g->ends_cap, g->nends + 1, sizeof *g->ends, 64))
			rc = -1;
		else
			g->ends[g->nends++] = (struct ending){node, th->tid};
		g->threads++;
	}
	free(w.ids);
	free(w.sps);
	return rc;
}

/* ---- output ---- */

/* The children of node, most threads first (then by text: the same order on every run). */
struct child {
	uint32_t node;
	const struct groups *g;
};

static int cmp_child(const void *a, const void *b)
{
	const struct child *x = a, *y = b;
	const struct adac_trie_node *p = &x->g->trie.n[x->node], *q = &x->g->trie.n[y->node];
	if (p->count != q->count)
		return p->count > q->count ? -1 : 1;
	return strcmp(x->g->labels.text[p->label], x->g->labels.text[q->label]);
}

static struct child *children(const struct groups *g, uint32_t node, size_t *n)
{
	*n = 0;
	for (uint32_t c = g->trie.n[node].first_child; c; c = g->trie.n[c].next_sibling)
		(*n)++;
	struct child *v = malloc((*n ? *n : 1) * sizeof *v);
	if (!v)
		return NULL;
	size_t i = 0;
	for (uint32_t c = g->trie.n[node].first_child; c; c = g->trie.n[c].next_sibling)
		v[i++] = (struct child){c, g};
	qsort(v, *n, sizeof *v, cmp_child);
	return v;
}

/* The threads ending at node: ends[*first .. *first + *n) (ends is sorted by node, then tid). */
static void ending_at(const struct groups *g, uint32_t node, size_t *first, size_t *n)
{
	size_t lo = 0, hi = g->nends;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (g->ends[mid].node < node)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo;
	for (*n = 0; lo + *n < g->nends && g->ends[lo + *n].node == node; (*n)++)
		;
}

static int cmp_ending(const void *a, const void *b)
{
	const struct ending *x = a, *y = b;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The group starting at node: the nodes to the last one with a single child and no thread ending
 * at it (path[0..*len), outermost first). */
static size_t group_of(const struct groups *g, uint32_t node, uint32_t **path, size_t *cap)
{
	size_t len = 0;
	for (;;) {
		if (adac_grow((void **)path, cap, len + 1, sizeof **path, 64))
			return 0;
		(*path)[len++] = node;
		uint32_t c = g->trie.n[node].first_child;
		if (!c || g->trie.n[c].next_sibling || g->trie.n[c].count != g->trie.n[node].count)
			return len; /* (a thread ends here when its callees hold fewer threads) */
		node = c;
	}
}

/* "~~~~ tid A, B and N more", then what they wait on: "  waiting for: <lock>" when each waits on the
 * same, else a line per thread that waits ("  tid A: waiting for: ..."). */
static void tids_text(const struct groups *g, size_t first, size_t n, unsigned indent, struct adac_out *out)
{
	size_t shown = g->o->tids && n > g->o->tids ? g->o->tids : n;
	adac_print(out, "%*s~~~~ tid", (int)indent, "");
	for (size_t i = 0; i < shown; i++)
		adac_print(out, "%s %llu", i ? "," : "", (unsigned long long)g->ends[first + i].tid);
	if (shown < n)
		adac_print(out, " and %zu more", n - shown);
	adac_print(out, "\n");
	const struct adac_blocked *one = blocked(g, g->ends[first].tid);
	bool same = one != NULL;
	for (size_t i = 1; i < n && same; i++) {
		const struct adac_blocked *b = blocked(g, g->ends[first + i].tid);
		same = b && strcmp(b->text, one->text) == 0;
	}
	if (same) {
		adac_print(out, "%*s%s\n", (int)indent + 5, "", one->text);
		return;
	}
	for (size_t i = 0, listed = 0; i < n; i++) {
		const struct adac_blocked *b = blocked(g, g->ends[first + i].tid);
		if (b && listed++ < shown)
			adac_print(out, "%*stid %llu: %s\n", (int)indent + 5, "", (unsigned long long)b->tid, b->text);
	}
}

/* A group and what it calls, as text, depth groups in (they nest at most once per thread, and
 * ADAC_MAX_GROUP_NESTING deep). -1 when out of memory or interrupted (err says which). */
static int render_text(const struct groups *g, uint32_t node, unsigned depth, struct adac_out *out,
                       struct adac_error *err)
{
	unsigned indent = depth * INDENT;
	if (adac_interrupted(out))
		return adac_fail(err, ADAC_E_INTERRUPTED, 0, "interrupted");
	uint32_t *path = NULL;
	size_t cap = 0, len = group_of(g, node, &path, &cap), nc = 0, first, nend;
	struct child *kids = len ? children(g, path[len - 1], &nc) : NULL;
	if (!kids) {
		free(path);
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory grouping the stacks");
	}
	int rc = 0;
	uint64_t deeper = 0;
	for (size_t i = 0; i < nc && !rc; i++) {
		if (depth + 1 < ADAC_MAX_GROUP_NESTING)
			rc = render_text(g, kids[i].node, depth + 1, out, err);
		else
			deeper += g->trie.n[kids[i].node].count;
	}
	if (deeper)
		adac_print(out, "%*s(%llu threads in groups nested deeper than %u left out)\n", (int)(indent + INDENT), "",
		           (unsigned long long)deeper, ADAC_MAX_GROUP_NESTING);
	ending_at(g, path[len - 1], &first, &nend);
	if (!rc && nend)
		tids_text(g, first, nend, nc ? indent + INDENT + 2 : indent + 2, out);
	for (size_t i = len; i-- > 0 && !rc;)
		adac_print(out, "%*s%5llu %s\n", (int)indent, "", (unsigned long long)g->trie.n[path[i]].count,
		           g->labels.text[g->trie.n[path[i]].label]);
	free(kids);
	free(path);
	return rc;
}

/* {"threads", "frames": [innermost first], "tids": [{"tid", "waits_on"} of those ending here],
 * "callees": [...]}; NULL when out of memory. */
static json_t *render_json(const struct groups *g, uint32_t node, unsigned depth)
{
	uint32_t *path = NULL;
	size_t cap = 0, len = group_of(g, node, &path, &cap), nc = 0, first, nend;
	struct child *kids = len ? children(g, path[len - 1], &nc) : NULL;
	json_t *j = json_object(), *frames = json_array(), *tids = json_array(), *callees = json_array();
	bool ok = kids && j && frames && tids && callees;
	for (size_t i = len; ok && i-- > 0;)
		ok = !json_array_append_new(frames, adac_json_text(g->labels.text[g->trie.n[path[i]].label]));
	if (ok) {
		ending_at(g, path[len - 1], &first, &nend);
		for (size_t i = 0; ok && i < nend; i++) {
			const struct adac_blocked *b = blocked(g, g->ends[first + i].tid);
			json_t *t = json_pack("{s:I, s:o}", "tid", (json_int_t)g->ends[first + i].tid, "waits_on",
			                      b ? adac_json_text(b->text) : json_null());
			ok = t && !json_array_append_new(tids, t);
		}
	}
	for (size_t i = 0; ok && i < nc && depth + 1 < ADAC_MAX_GROUP_NESTING; i++) {
		json_t *c = render_json(g, kids[i].node, depth + 1);
		ok = c && !json_array_append_new(callees, c);
	}
	if (ok)
		ok = !json_object_set_new(j, "threads", json_integer((json_int_t)g->trie.n[node].count)) &&
		     !json_object_set_new(j, "frames", frames) && !json_object_set_new(j, "tids", tids) &&
		     !json_object_set_new(j, "callees", callees);
	else {
		json_decref(frames);
		json_decref(tids);
		json_decref(callees);
	}
	free(kids);
	free(path);
	if (!ok) {
		json_decref(j);
		return NULL;
	}
	return j;
}

static int print(struct groups *g, json_t **json, struct adac_out *out, struct adac_error *err)
{
	size_t nroots;
	struct child *roots = children(g, 0, &nroots);
	if (!roots)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory grouping the stacks");
	int rc = 0;
	if (json) {
		json_t *j = json_object(), *groups = json_array();
		for (size_t i = 0; i < nroots && !rc; i++) {
			json_t *r = render_json(g, roots[i].node, 0);
			if (!r || json_array_append_new(groups, r))
				rc = adac_fail(err, ADAC_E_NOMEM, 0, "out of memory grouping the stacks");
		}
		if (!rc) {
			json_object_set_new(j, "threads", json_integer((json_int_t)g->threads));
			json_object_set_new(j, "left_out", json_integer((json_int_t)g->left_out));
			json_object_set_new(j, "roots", groups);
			json_object_set_new(j, "warnings", json_incref(g->warnings));
			*json = j;
		} else {
			json_decref(j);
			json_decref(groups);
		}
	} else {
		for (size_t i = 0; i < json_array_size(g->warnings); i++)
			adac_print(out, "warning: %s\n", json_string_value(json_array_get(g->warnings, i)));
		for (size_t i = 0; i < nroots && !rc; i++) {
			adac_print(out, "________________________________________________\n");
			rc = render_text(g, roots[i].node, 0, out, err);
			adac_print(out, "\n");
		}
		if (!rc) {
			adac_print(out, "==> %zu thread%s with %zu root%s", g->threads, g->threads == 1 ? "" : "s", nroots,
			           nroots == 1 ? "" : "s");
			if (g->left_out)
				adac_print(out, "; %zu thread%s with no %sframe left out%s", g->left_out, g->left_out == 1 ? "" : "s",
				           g->o->all ? "" : "managed ", g->o->all ? "" : " (pstacks --all shows them)");
			adac_print(out, "\n");
		}
	}
	free(roots);
	return rc;
}

int adac_pstacks_render(struct adac_runtime *rt, const struct adac_pstacks_opts *o,
                        const struct adac_blocked_threads *b, const char *warning, json_t **json, struct adac_out *out,
                        struct adac_error *err)
{
	const struct adac_thread *threads;
	size_t count;
	if (adac_target_threads(rt->t, &threads, &count, err))
		return -1;
	struct groups g = {.o = o, .warnings = json_array(), .blocked = b, .cache = adac_frame_cache_new()};
	int rc = 0;
	if (!g.warnings || !g.cache || adac_trie_init(&g.trie))
		rc = adac_fail(err, ADAC_E_NOMEM, 0, "out of memory grouping the stacks");
	if (!rc && warning)
		json_array_append_new(g.warnings, adac_json_text(warning));
	for (size_t i = 0; i < count && !rc; i++) {
		if (adac_interrupted(out))
			rc = adac_fail(err, ADAC_E_INTERRUPTED, 0, "interrupted");
		else if (add_thread(&g, rt, &threads[i]))
			rc = adac_fail(err, ADAC_E_NOMEM, 0, "out of memory grouping the stacks");
	}
	if (!rc) {
		if (g.nends) /* (qsort takes no null array, even empty) */
			qsort(g.ends, g.nends, sizeof *g.ends, cmp_ending);
		rc = print(&g, json, out, err);
	}
	adac_labels_free(&g.labels);
	adac_trie_free(&g.trie);
	adac_frame_cache_free(g.cache);
	free(g.ends);
	json_decref(g.warnings);
	return rc;
}

int adac_pstacks_print(struct adac_runtime *rt, const struct adac_pstacks_opts *o, struct adac_out *out,
                       struct adac_error *err)
{
	struct adac_blocking_scan k;
	char warning[700];
	int rc = adac_blocking_scan_find(rt, out, &k, err);
	json_t *j = NULL;
	if (!rc)
		rc = adac_pstacks_render(rt, o, k.have_blocked ? &k.b : NULL,
		                         adac_blocking_scan_warning(&k, warning, sizeof warning), o->json ? &j : NULL, out, err);
	adac_blocking_scan_free(&k);
	if (!rc && j)
		rc = adac_json_print_document(out, "pstacks", j, err);
	return rc;
}
