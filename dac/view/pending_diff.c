/* pending_diff.c - `diff`: the stacks `ps` lists in two targets, compared (pending_diff.h).
 *
 * A stack is kept as little as a comparison needs: its key, its task's type and status, whether
 * it runs, and its frames' labels, each text interned once (a million stacks of three frames are
 * a few dozen distinct texts). Its fields are those `ps --json` gives (view/pending_view.c), so the
 * two agree on what a stack is. */
#include "view/pending_diff.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async/pending.h"
#include "base/grow.h"
#include "base/json.h"
#include "base/labels.h"
#include "base/output.h"
#include "view/chain_view.h"
#include "view/pending_list.h"

#define SHOWN_FRAMES 8u    /* text: frames shown of a stack that progressed, in A and in B */
#define NONE UINT32_MAX    /* a name that is null (no task, no type) */
#define ABSENT (NONE - 1)  /* a status the task does not have (its flags unread): no member at all */

/* ---- interned texts (base/labels.h) ---- */

struct names {
	struct adac_labels labels;
	bool nomem;
};

/* The id of text s (NONE for NULL); NONE with n->nomem set when memory runs out. */
static uint32_t name_id(struct names *n, const char *s)
{
	if (!s || n->nomem)
		return NONE;
	uint32_t id = adac_label_id(&n->labels, s);
	if (id >= ABSENT) {
		n->nomem = true;
		return NONE;
	}
	return id;
}

static const char *name_text(const struct names *n, uint32_t id, const char *otherwise)
{
	return id < n->labels.count ? n->labels.text[id] : otherwise;
}

static json_t *name_json(const struct names *n, uint32_t id)
{
	return id < n->labels.count ? adac_json_text(n->labels.text[id]) : json_null();
}

/* ---- the stacks of one target ---- */

/* A stack: keyed by its owning task's address, else its innermost Continuation's. */
struct entry {
	uint64_t key;
	uint32_t type, status;   /* names; status ABSENT when the task's flags were not read */
	uint32_t first, count;   /* its frame labels: side.frames[first .. first + count) */
	uint32_t order;          /* where the listing put it (the first of stacks with the same key) */
	bool running;
	bool dropped;            /* a later stack has the same key: that one stands for both */
};

struct side {
	struct entry *e;
	size_t n, cap;
	uint32_t *frames;
	size_t nframes, frames_cap;
	uint32_t *by_key;        /* the kept entries, by key */
	uint32_t *listed;        /* the kept entries, in the listing's order */
	size_t kept;
};

static void side_free(struct side *s)
{
	free(s->e);
	free(s->frames);
	free(s->by_key);
	free(s->listed);
	memset(s, 0, sizeof *s);
}

/* A frame's label: what progress means for it (its method, where it is, its await state). */
static uint32_t frame_label(struct names *n, const char *method, bool has_source, const char *file, uint32_t line,
                            bool has_il, uint32_t il_offset, const char *tag)
{
	char where[ADAC_FRAME_WHERE_MAX], buf[ADAC_FRAME_WHERE_MAX + 1024];
	adac_frame_where(has_source, file, line, has_il, il_offset, where, sizeof where);
	snprintf(buf, sizeof buf, "%s%s%s%s%s", method ? method : "<unknown method>", where, tag ? " [" : "",
	         tag ? tag : "", tag ? "]" : "");
	return name_id(n, buf);
}

static uint32_t task_label(struct names *n, const struct adac_task_desc *d)
{
	char buf[1024];
	snprintf(buf, sizeof buf, "task %s [%s]", d->type ? d->type : "?", d->has_flags ? adac_task_status(d->flags) : "?");
	return name_id(n, buf);
}

static bool push_frame(struct side *s, uint32_t label)
{
	if (adac_grow((void **)&s->frames, &s->frames_cap, s->nframes + 1, sizeof *s->frames, 1024))
		return false;
	s->frames[s->nframes++] = label;
	return true;
}

/* The labels of the async frames seen last, by where their texts are and what else the label
 * holds: a million stacks have a few distinct frames, and formatting and hashing each label again
 * took a third of the time. The texts are compared too, as a name's memory may be reused. */
#define LABEL_CACHE 256u

struct label_key {
	const char *method, *file;
	uint32_t line, il_offset;
	int32_t state;
	bool has_source, has_il;
};

struct label_memo {
	struct label_key key;
	char *method, *file;   /* copies of the texts */
	uint32_t id;
	bool used;
};

static bool key_eq(const struct label_key *a, const struct label_key *b)
{
	return a->method == b->method && a->file == b->file && a->line == b->line && a->il_offset == b->il_offset &&
	       a->state == b->state && a->has_source == b->has_source && a->has_il == b->has_il;
}

static bool text_eq(const char *a, const char *b) { return a ? b && strcmp(a, b) == 0 : !b; }

static void memo_free(struct label_memo *m)
{
	for (size_t i = 0; i < LABEL_CACHE; i++) {
		free(m[i].method);
		free(m[i].file);
	}
	memset(m, 0, LABEL_CACHE * sizeof *m);
}

/* An async frame's label, through the memo. */
static uint32_t async_label(struct names *n, struct label_memo *memo, const struct adac_async_frame *f)
{
	struct label_key k = {f->method, f->has_source ? f->file : NULL, f->has_source ? f->line : 0,
	                      f->has_il ? f->il_offset : 0, f->cont.state, f->has_source, f->has_il};
	uint64_t h = ((uint64_t)(uintptr_t)k.method ^ (uint64_t)(uintptr_t)k.file * 31 ^ (uint64_t)k.line << 20 ^
	              (uint64_t)k.il_offset << 40 ^ (uint64_t)(uint32_t)k.state) * 0x9E3779B97F4A7C15ull;
	struct label_memo *m = &memo[h >> 56 & (LABEL_CACHE - 1)];
	if (m->used && key_eq(&m->key, &k) && text_eq(m->method, k.method) && text_eq(m->file, k.file))
		return m->id;
	char tag[32];
	snprintf(tag, sizeof tag, "state %d", f->cont.state);
	uint32_t id = frame_label(n, f->method, f->has_source, f->file, f->line, f->has_il, f->il_offset, tag);
	free(m->method);
	free(m->file);
	*m = (struct label_memo){.key = k, .id = id};
	m->method = k.method ? strdup(k.method) : NULL;
	m->file = k.file ? strdup(k.file) : NULL;
	m->used = (!k.method || m->method) && (!k.file || m->file);
	return id;
}

/* The frames of stack st, as `ps --json` lists them, into s->frames. */
static bool add_frames(const struct adac_pending *p, const struct adac_pending_stack *st, struct names *n,
                       struct label_memo *memo, struct side *s)
{
	char tag[48];
	for (uint32_t i = 0; i < st->stack->count; i++) {
		const struct adac_pending_seg *seg = &st->segs[i];
		if (seg->node->kind == ADAC_NODE_CHAIN) {
			for (size_t k = 0; k < seg->view.chain.count; k++) {
				const struct adac_async_frame *f = &seg->view.frames[k];
				if (!adac_async_frame_shown(f))
					continue;
				if (!push_frame(s, async_label(n, memo, f)))
					return false;
			}
		} else if (seg->node->kind == ADAC_NODE_BOX) {
			const struct adac_classic_frame *c = &seg->classic;
			if (c->has_state)
				snprintf(tag, sizeof tag, "classic, state %d", c->state);
			else
				snprintf(tag, sizeof tag, "classic");
			if (!push_frame(s, frame_label(n, c->method, c->has_source, c->file, c->line, c->has_il, c->il_offset,
			                               tag)))
				return false;
		} else {
			struct adac_task_desc d;
			adac_pending_task(p, p->scan.tasks[seg->node->index].addr, &d);
			if (!push_frame(s, task_label(n, &d)))
				return false;
		}
	}
	return true;
}

/* Stack st as an entry of s: false when memory runs out. A stack with no key (no task, and a
 * classic frame or a task first) is not kept. */
static bool add_stack(const struct adac_pending *p, const struct adac_pending_stack *st, struct names *n,
                      struct label_memo *memo, struct side *s)
{
	struct entry e = {.type = NONE, .status = NONE, .running = st->running != NULL};
	uint64_t task = adac_pending_node_task(p, st->segs[st->stack->count - 1].node);
	const struct adac_pending_seg *first = &st->segs[0];
	if (task) {
		struct adac_task_desc d;
		adac_pending_task(p, task, &d);
		e.key = task;
		e.type = name_id(n, d.type);
		e.status = d.has_flags ? name_id(n, adac_task_status(d.flags)) : ABSENT;
	} else if (first->node->kind == ADAC_NODE_CHAIN) {
		const struct adac_chain *c = &first->view.chain;
		e.key = c->count ? c->links[0].addr : c->end_addr;
	} else {
		return true;
	}
	if (adac_grow((void **)&s->e, &s->cap, s->n + 1, sizeof *s->e, 1024))
		return false;
	e.first = (uint32_t)s->nframes;
	if (!add_frames(p, st, n, memo, s) || n->nomem)
		return false;
	e.count = (uint32_t)(s->nframes - e.first);
	e.order = (uint32_t)s->n;
	s->e[s->n++] = e;
	return true;
}

static int by_key(const void *a, const void *b, void *ctx)
{
	const struct entry *e = ctx;
	const struct entry *x = &e[*(const uint32_t *)a], *y = &e[*(const uint32_t *)b];
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int by_order(const void *a, const void *b, void *ctx)
{
	const struct entry *e = ctx;
	uint32_t x = e[*(const uint32_t *)a].order, y = e[*(const uint32_t *)b].order;
	return x < y ? -1 : x > y;
}

/* The indexes: stacks of one key are one, the last of them in the place of the first (as a JSON
 * object keeps a member set again where it was). */
static bool index_side(struct side *s)
{
	s->by_key = adac_array_new(s->n, sizeof *s->by_key);
	s->listed = adac_array_new(s->n, sizeof *s->listed);
	if (!s->by_key || !s->listed)
		return false;
	for (size_t i = 0; i < s->n; i++)
		s->by_key[i] = (uint32_t)i;
	qsort_r(s->by_key, s->n, sizeof *s->by_key, by_key, s->e);
	size_t w = 0;
	for (size_t i = 0; i < s->n; i++) {
		struct entry *e = &s->e[s->by_key[i]];
		if (i + 1 < s->n && s->e[s->by_key[i + 1]].key == e->key) {
			s->e[s->by_key[i + 1]].order = e->order;
			e->dropped = true;
			continue;
		}
		s->by_key[w++] = s->by_key[i];
	}
	s->kept = w;
	memcpy(s->listed, s->by_key, w * sizeof *s->listed);
	qsort_r(s->listed, w, sizeof *s->listed, by_order, s->e);
	return true;
}

static const struct entry *find(const struct side *s, uint64_t key)
{
	size_t lo = 0, hi = s->kept;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->e[s->by_key[mid]].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->kept && s->e[s->by_key[lo]].key == key ? &s->e[s->by_key[lo]] : NULL;
}

/* The stacks of a target, into s. */
static int collect(struct adac_runtime *rt, struct adac_out *out, struct names *n, struct side *s,
                   struct adac_error *err)
{
	struct adac_pending p;
	struct adac_pending_list l = {0};
	struct adac_pending_filter all = {0};
	if (adac_pending_collect(rt, out, ADAC_SCAN_MAY_RUN, &p, err)) /* (the first use of rt) */
		return -1;
	int rc = adac_pending_list_init(&l, &p, &all, out, err), more = 0;
	if (rc == 0)
		adac_pending_list_parallel(&l); /* (no locals: the frames may come from a helper) */
	struct adac_pending_stack st;
	struct label_memo *memo = calloc(LABEL_CACHE, sizeof *memo);
	if (!memo)
		rc = adac_fail(err, ADAC_E_NOMEM, 0, "out of memory comparing stacks");
	while (rc == 0 && (more = adac_pending_list_next(&l, &st, err)) > 0)
		if (!add_stack(&p, &st, n, memo, s) || s->n >= NONE)
			rc = adac_fail(err, ADAC_E_NOMEM, 0, "out of memory comparing stacks");
	if (memo)
		memo_free(memo);
	free(memo);
	if (rc == 0 && more < 0)
		rc = -1;
	if (rc == 0)
		rc = adac_pending_heap_complete(&p, err);
	adac_pending_list_free(&l);
	adac_pending_free(&p);
	if (rc == 0 && !index_side(s))
		rc = adac_fail(err, ADAC_E_NOMEM, 0, "out of memory comparing stacks");
	return rc;
}

/* ---- the comparison ---- */

struct diff {
	struct names names;
	struct side a, b;
	/* Entries of a (progressed, finished, unchanged) and of b (new), in the listings' order. */
	uint32_t *progressed, *fresh, *finished, *unchanged;
	size_t n_progressed, n_fresh, n_finished, n_unchanged;
};

static bool same_frames(const struct side *a, const struct entry *x, const struct side *b, const struct entry *y)
{
	return x->count == y->count && memcmp(&a->frames[x->first], &b->frames[y->first], x->count * sizeof *a->frames) == 0;
}

static bool compare(struct diff *d)
{
	size_t na = d->a.kept ? d->a.kept : 1, nb = d->b.kept ? d->b.kept : 1;
	d->progressed = adac_array_new(na, sizeof *d->progressed);
	d->finished = adac_array_new(na, sizeof *d->finished);
	d->unchanged = adac_array_new(na, sizeof *d->unchanged);
	d->fresh = adac_array_new(nb, sizeof *d->fresh);
	if (!d->progressed || !d->finished || !d->unchanged || !d->fresh)
		return false;
	for (size_t i = 0; i < d->a.kept; i++) {
		uint32_t k = d->a.listed[i];
		const struct entry *x = &d->a.e[k], *y = find(&d->b, x->key);
		if (!y)
			d->finished[d->n_finished++] = k;
		else if (same_frames(&d->a, x, &d->b, y))
			d->unchanged[d->n_unchanged++] = (uint32_t)(y - d->b.e);
		else
			d->progressed[d->n_progressed++] = k;
	}
	for (size_t i = 0; i < d->b.kept; i++)
		if (!find(&d->a, d->b.e[d->b.listed[i]].key))
			d->fresh[d->n_fresh++] = d->b.listed[i];
	return true;
}

static void diff_free(struct diff *d)
{
	adac_labels_free(&d->names.labels);
	side_free(&d->a);
	side_free(&d->b);
	free(d->progressed);
	free(d->fresh);
	free(d->finished);
	free(d->unchanged);
}

/* ---- text ---- */

static void print_frames(struct adac_out *out, const struct names *n, const char *tag, const struct side *s,
                         const struct entry *e)
{
	for (uint32_t i = 0; i < e->count && i < SHOWN_FRAMES; i++)
		adac_print(out, "    %s %s\n", i ? " " : tag, name_text(n, s->frames[e->first + i], "?"));
	if (e->count > SHOWN_FRAMES)
		adac_print(out, "       ... %u more frame%s\n", e->count - SHOWN_FRAMES, e->count - SHOWN_FRAMES == 1 ? "" : "s");
	if (!e->count)
		adac_print(out, "    %s (no frames)\n", tag);
}

static void print_stack_head(struct adac_out *out, const struct names *n, const struct entry *e, const struct entry *before,
                             bool running)
{
	const char *status = name_text(n, e->status, NULL), *was = before ? name_text(n, before->status, NULL) : NULL;
	adac_print(out, "  %s 0x%016llx %s", e->type != NONE ? "task" : "chain", (unsigned long long)e->key,
	           name_text(n, e->type, "(no task)"));
	if (was && status && strcmp(was, status) != 0)
		adac_print(out, " [%s -> %s]", was, status);
	else if (status)
		adac_print(out, " [%s]", status);
	adac_print(out, "%s\n", running ? " (running)" : "");
}

static void print_list(struct adac_out *out, const struct diff *d, const char *title, const struct side *s,
                       const uint32_t *list, size_t count)
{
	if (!count)
		return;
	adac_print(out, "\n%s:\n", title);
	for (size_t i = 0; i < count; i++) {
		const struct entry *e = &s->e[list[i]];
		print_stack_head(out, &d->names, e, NULL, e->running);
		adac_print(out, "    %s\n", e->count ? name_text(&d->names, s->frames[e->first], "?") : "(no frames)");
	}
}

static void print_text(const struct diff *d, bool all, struct adac_out *out)
{
	adac_print(out, "A has %zu pending stack%s, B %zu: %zu progressed, %zu new, %zu finished, %zu unchanged.\n",
	           d->a.kept, d->a.kept == 1 ? "" : "s", d->b.kept, d->n_progressed, d->n_fresh, d->n_finished,
	           d->n_unchanged);
	if (d->n_progressed) {
		adac_print(out, "\nProgressed (a frame or its await state changed):\n");
		for (size_t i = 0; i < d->n_progressed; i++) {
			const struct entry *x = &d->a.e[d->progressed[i]], *y = find(&d->b, x->key);
			print_stack_head(out, &d->names, y, x, false);
			print_frames(out, &d->names, "A:", &d->a, x);
			print_frames(out, &d->names, "B:", &d->b, y);
		}
	}
	print_list(out, d, "New (in B only)", &d->b, d->fresh, d->n_fresh);
	print_list(out, d, "Finished (in A only)", &d->a, d->finished, d->n_finished);
	if (all)
		print_list(out, d, "Unchanged", &d->b, d->unchanged, d->n_unchanged);
}

/* ---- JSON (docs/json.md, "diff"), one stack at a time ---- */

static json_t *frames_json(const struct names *n, const struct side *s, const struct entry *e)
{
	json_t *a = json_array();
	for (uint32_t i = 0; i < e->count; i++)
		json_array_append_new(a, name_json(n, s->frames[e->first + i]));
	return a;
}

static void set_status(json_t *j, const char *member, const struct names *n, uint32_t status)
{
	if (status != ABSENT)
		json_object_set_new(j, member, name_json(n, status));
}

static json_t *entry_json(const struct names *n, const struct side *s, const struct entry *e)
{
	json_t *j = json_object();
	json_object_set_new(j, "key", adac_json_addr(e->key));
	json_object_set_new(j, "type", name_json(n, e->type));
	set_status(j, "status", n, e->status);
	json_object_set_new(j, "running", json_boolean(e->running));
	json_object_set_new(j, "frames", frames_json(n, s, e));
	return j;
}

static json_t *progressed_json(const struct diff *d, const struct entry *x)
{
	const struct entry *y = find(&d->b, x->key);
	json_t *j = json_object();
	json_object_set_new(j, "key", adac_json_addr(y->key));
	json_object_set_new(j, "type", name_json(&d->names, y->type));
	set_status(j, "status_a", &d->names, x->status);
	set_status(j, "status_b", &d->names, y->status);
	json_object_set_new(j, "frames_a", frames_json(&d->names, &d->a, x));
	json_object_set_new(j, "frames_b", frames_json(&d->names, &d->b, y));
	return j;
}

/* "name": [ ...the entries... ] at the diff object's indentation, after a comma. */
static int print_json_list(const struct diff *d, struct adac_out *out, const char *name, const struct side *s,
                           const uint32_t *list, size_t count, bool progressed, struct adac_error *err)
{
	adac_print(out, ",\n    \"%s\": [", name);
	for (size_t i = 0; i < count; i++) {
		const struct entry *e = &s->e[list[i]];
		json_t *j = progressed ? progressed_json(d, e) : entry_json(&d->names, s, e);
		int rc = j ? adac_json_print_indented(out, i ? ",\n" : "\n", j, 6, "", err)
		           : adac_fail(err, ADAC_E_NOMEM, 0, "out of memory formatting JSON");
		json_decref(j);
		if (rc)
			return -1;
	}
	adac_print(out, count ? "\n    ]" : "]");
	return 0;
}

static int print_json(const struct diff *d, struct adac_out *out, struct adac_error *err)
{
	adac_json_document_open(out, "diff");
	adac_print(out, "{\n    \"stacks_a\": %zu,\n    \"stacks_b\": %zu", d->a.kept, d->b.kept);
	if (print_json_list(d, out, "progressed", &d->a, d->progressed, d->n_progressed, true, err) ||
	    print_json_list(d, out, "new", &d->b, d->fresh, d->n_fresh, false, err) ||
	    print_json_list(d, out, "finished", &d->a, d->finished, d->n_finished, false, err) ||
	    print_json_list(d, out, "unchanged", &d->b, d->unchanged, d->n_unchanged, false, err))
		return -1;
	return adac_json_document_close(out, NULL, err);
}

int adac_pending_diff_print(struct adac_runtime *a, struct adac_runtime *b, bool all, bool json, struct adac_out *out,
                            struct adac_error *err)
{
	struct diff d = {0};
	int rc = -1;
	if (collect(a, out, &d.names, &d.a, err)) {
		adac_error_wrap(err, "A: ");
		goto done;
	}
	if (collect(b, out, &d.names, &d.b, err)) {
		adac_error_wrap(err, "B: ");
		goto done;
	}
	if (!compare(&d)) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory comparing stacks");
		goto done;
	}
	if (json) {
		rc = print_json(&d, out, err);
	} else {
		print_text(&d, all, out);
		rc = 0;
	}
done:
	diff_free(&d);
	return rc;
}
