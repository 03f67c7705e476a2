/* cmd_ps.c - `ps`: every pending async operation of the process, as logical stacks: runtime-async
 * chains found on the GC heap (async_scan.h), stitched with classic state machines
 * (classic_async.h), one block per stack, grouped (--coalesce) or counted (--stats). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "async/async_scan.h"
#include "async/classic_async.h"
#include "async/continuation.h"
#include "base/json.h"
#include "base/limits.h"
#include "commands/command.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/methoddesc.h"
#include "types/names.h"
#include "view/chain_view.h"

#define LABEL_MAX 1024u            /* one frame's text in --coalesce and --stats */
#define PROGRESS_DELAY 1.0         /* seconds before the progress line appears (the environment
                                    * variable ASYNCDAC_PROGRESS_DELAY overrides it, for tests) */
#define PROGRESS_INTERVAL 0.1      /* seconds between two updates of it */

const struct adac_command_info adac_cmd_ps_info = {
	.name = "ps",
	.summary = "List every pending async operation as a logical stack (runtime-async chains and classic "
	           "state machines, suspended or running)",
	.syntax = "[--coalesce | --stats] [--method <text>] [--type <text>] [--address <addr>]... [--locals] [--json]",
	.details =
		"Walks the GC heap once and collects every runtime-async Continuation, every\n"
		"pending task and every classic async state machine (AsyncStateMachineBox). A\n"
		"chain starts at the continuation a task holds (m_stateObject), at a thread's\n"
		"dispatcher record (a running chain), or at a continuation nothing points to.\n"
		"Chains and state machines are joined through the tasks' m_continuationObject\n"
		"into logical stacks, in both directions: classic code awaiting runtime-async\n"
		"code and the reverse form one stack.\n"
		"\n"
		"Each stack is printed as\n"
		"  chain #N: [running on thread <tid>, ]task <address> <type> [<status>]\n"
		"    awaiting: <address> <type> [<status>] what the innermost frame waits for\n"
		"    async #0: <address> <module>`<method> + <off> at <file>:<line> [state <n>]\n"
		"    async #1: <box> <module>`<method> at <file>:<line> [classic, state <n>]\n"
		"innermost frame first, as `bt` prints async frames. <status> is the owning\n"
		"(outermost) task's Task.Status from m_stateFlags; on the awaiting line, it is\n"
		"the awaited task's: a task that has completed while the frames awaiting it have\n"
		"not resumed points at a starved thread pool or scheduler. A classic frame shows\n"
		"its state machine box and the line of the await it is suspended at (state N:\n"
		"the N-th await point of MoveNext in the PDB), a task between two frames shows\n"
		"as [task, <status>]. A running chain's innermost method is on the thread's\n"
		"stack (see `bt`). Continuations nothing owns that lead into a listed chain\n"
		"(left behind after their chain resumed) and sentinels without frames are\n"
		"counted, not listed.\n"
		"\n"
		"Options:\n"
		"  -C, --coalesce        Group identical stacks into a tree, innermost frame\n"
		"                        first, each line with the number of stacks sharing it:\n"
		"                        \"[count] <frame>\" (the first level is what the stacks\n"
		"                        await).\n"
		"  -s, --stats           Count frames per method and await state, stacks per\n"
		"                        awaited type and tasks per type and status.\n"
		"  -m, --method <text>   Only stacks with a frame whose method name contains\n"
		"                        <text>.\n"
		"  -t, --type <text>     Only stacks with an object (task, state machine,\n"
		"                        continuation, awaited object) whose type name contains\n"
		"                        <text>.\n"
		"  -A, --address <addr>  Only stacks with an object at <addr> (task, state\n"
		"                        machine box or state machine, continuation, awaited\n"
		"                        object); may be repeated.\n"
		"  -v, --locals          Show the awaited locals under each async frame.\n"
		"  -j, --json            Print JSON.\n"
		"Filters match any frame or object of a stack (as SOS dumpasync's do) and\n"
		"combine with AND. A scan taking more than a second shows its progress on stderr\n"
		"when stderr is a terminal.\n",
};

struct ps_opts {
	bool coalesce, stats, locals, json;
	const char *method, *type;
	uint64_t addresses[ADAC_MAX_ADDRESS_ARGS];
	size_t naddresses;
};

static int parse(int argc, char **argv, struct ps_opts *o, struct adac_error *err)
{
	memset(o, 0, sizeof *o);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		if (adac_opt_is(a, "-C", "--coalesce")) {
			o->coalesce = true;
		} else if (adac_opt_is(a, "-s", "--stats")) {
			o->stats = true;
		} else if (adac_opt_is(a, "-v", "--locals")) {
			o->locals = true;
		} else if (adac_opt_is(a, "-j", "--json")) {
			o->json = true;
		} else if (adac_opt_is(a, "-m", "--method")) {
			if (adac_opt_value("ps", argc, argv, &i, &o->method, err))
				return -1;
		} else if (adac_opt_is(a, "-t", "--type")) {
			if (adac_opt_value("ps", argc, argv, &i, &o->type, err))
				return -1;
		} else if (adac_opt_is(a, "-A", "--address")) {
			if (o->naddresses >= ADAC_MAX_ADDRESS_ARGS)
				return adac_fail(err, ADAC_E_BAD_ARG, 0, "at most %u addresses", ADAC_MAX_ADDRESS_ARGS);
			if (adac_opt_value("ps", argc, argv, &i, &v, err) ||
			    adac_opt_u64("ps", a, v, &o->addresses[o->naddresses++], err))
				return -1;
		} else {
			return adac_opt_unknown("ps", a, err);
		}
	}
	if (o->coalesce && o->stats)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "give either --coalesce or --stats, not both");
	if (o->locals && (o->coalesce || o->stats))
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "--locals shows frames one by one: it cannot be combined with %s",
		                 o->coalesce ? "--coalesce" : "--stats");
	return 0;
}

/* ---- progress on stderr ------------------------------------------------------------------------ */

struct progress {
	double start, last;
	double delay;      /* PROGRESS_DELAY, or ASYNCDAC_PROGRESS_DELAY (tests) */
	bool tty, shown;
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress_report(void *ctx, const char *phase, uint64_t done, uint64_t total)
{
	struct progress *p = ctx;
	if (!p->tty)
		return;
	double t = now();
	if (t - p->start < p->delay || (p->shown && t - p->last < PROGRESS_INTERVAL && done < total))
		return;
	p->last = t;
	p->shown = true;
	if (total)
		fprintf(stderr, "\rasyncdac ps: %s: %3u%%\033[K", phase, (unsigned)(done * 100 / total));
	else
		fprintf(stderr, "\rasyncdac ps: %s: %llu\033[K", phase, (unsigned long long)done);
	fflush(stderr);
}

static void progress_end(struct progress *p)
{
	if (p->shown) {
		fprintf(stderr, "\r\033[K");
		fflush(stderr);
		p->shown = false;
	}
}

/* ---- interned labels, the --coalesce tree, the --stats tables ---------------------------------- */

struct labels {
	char **text;
	size_t count, cap;
	uint32_t *slots;       /* hash table of ids + 1 (0: empty) */
	size_t nslots;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* Id of a label (added when new); UINT32_MAX when out of memory. */
static uint32_t label_id(struct labels *l, const char *s)
{
	if ((l->count + 1) * 2 > l->nslots) {
		size_t n = l->nslots ? l->nslots * 2 : 256;
		uint32_t *slots = calloc(n, sizeof *slots);
		if (!slots)
			return UINT32_MAX;
		for (size_t i = 0; i < l->count; i++) {
			size_t j = hash_str(l->text[i]) & (n - 1);
			while (slots[j])
				j = (j + 1) & (n - 1);
			slots[j] = (uint32_t)i + 1;
		}
		free(l->slots);
		l->slots = slots;
		l->nslots = n;
	}
	size_t j = hash_str(s) & (l->nslots - 1);
	while (l->slots[j]) {
		if (strcmp(l->text[l->slots[j] - 1], s) == 0)
			return l->slots[j] - 1;
		j = (j + 1) & (l->nslots - 1);
	}
	if (l->count == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		char **p = realloc(l->text, cap * sizeof *p);
		if (!p)
			return UINT32_MAX;
		l->text = p;
		l->cap = cap;
	}
	char *copy = strdup(s);
	if (!copy)
		return UINT32_MAX;
	l->text[l->count] = copy;
	l->slots[j] = (uint32_t)++l->count;
	return (uint32_t)l->count - 1;
}

static void labels_free(struct labels *l)
{
	for (size_t i = 0; i < l->count; i++)
		free(l->text[i]);
	free(l->text);
	free(l->slots);
	memset(l, 0, sizeof *l);
}

struct tnode {
	uint32_t label;
	uint32_t first_child, next_sibling;   /* 0: none (node 0 is the root) */
	uint64_t count;
};

struct trie {
	struct tnode *n;
	size_t count, cap;
};

/* Child of `parent` with `label`, added when new; 0 when out of memory. */
static uint32_t trie_child(struct trie *t, uint32_t parent, uint32_t label)
{
	for (uint32_t c = t->n[parent].first_child; c; c = t->n[c].next_sibling)
		if (t->n[c].label == label)
			return c;
	if (t->count == t->cap) {
		size_t cap = t->cap * 2;
		struct tnode *p = realloc(t->n, cap * sizeof *p);
		if (!p)
			return 0;
		t->n = p;
		t->cap = cap;
	}
	uint32_t id = (uint32_t)t->count++;
	t->n[id] = (struct tnode){.label = label, .next_sibling = t->n[parent].first_child};
	t->n[parent].first_child = id;
	return id;
}

/* Per-label counts (--stats). */
struct counts {
	uint64_t *n;       /* indexed by label id */
	size_t cap;
};

static int count_add(struct counts *c, uint32_t label)
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
	c->n[label]++;
	return 0;
}

/* ---- the command's state ----------------------------------------------------------------------- */

/* One node of a stack, resolved. */
struct seg {
	const struct adac_async_node *node;
	bool has_view;
	struct adac_chain_view view;          /* CHAIN */
	struct adac_classic_frame classic;    /* BOX */
};

struct ps {
	struct adac_runtime *rt;
	const struct ps_opts *o;
	struct adac_out *out;
	struct adac_async_scan scan;
	struct adac_async_graph graph;
	struct adac_frame_cache *frames;
	struct adac_classic_cache *classic;
	struct progress progress;
	struct seg *segs;
	size_t segs_cap;
	/* results */
	size_t listed, empty, filtered_out, frames_listed, running;
	struct labels labels;
	struct trie trie;
	uint32_t cursor;                       /* --coalesce: the trie node of the last label added */
	struct counts frame_counts, await_counts, task_counts;
	bool *counted;                         /* --stats: graph nodes already counted */
	uint8_t *fate;                         /* per graph node: enum fate */
	struct adac_error fail;                /* out of memory while grouping */
};

/* What became of a graph node (the best of its stacks). */
enum fate { FATE_NONE, FATE_FILTERED, FATE_EMPTY, FATE_LISTED };

static void set_fate(struct ps *p, const struct adac_async_stack *st, enum fate f)
{
	for (uint32_t i = 0; i < st->count; i++) {
		uint32_t n = p->graph.stack_nodes[st->first + i];
		if (p->fate[n] < f)
			p->fate[n] = (uint8_t)f;
	}
}

struct task_desc {
	uint64_t addr, mt;
	const char *type;
	bool has_flags;
	uint32_t flags;
};

static void describe_task(struct ps *p, uint64_t addr, struct task_desc *d)
{
	memset(d, 0, sizeof *d);
	d->addr = addr;
	if (!addr)
		return;
	const struct adac_task_layout *layout;
	uint32_t i = adac_scan_find_task(&p->scan, addr);
	if (i != ADAC_SCAN_NONE) {
		d->mt = p->scan.tasks[i].mt;
		d->flags = p->scan.tasks[i].state_flags;
		d->has_flags = true;
	} else if (adac_object_mt(p->rt, addr, &d->mt, NULL) == 0 && adac_task_layout(p->rt, &layout, NULL) == 0) {
		d->has_flags = adac_read_u32(p->rt->t, addr + layout->state_flags_off, &d->flags, NULL) == 0;
	}
	if (d->mt)
		d->type = adac_type_name(p->rt, d->mt, 0, NULL);
}

/* The task of a node: a chain's owner, a box, a task. */
static uint64_t node_task(const struct ps *p, const struct adac_async_node *n)
{
	if (n->kind == ADAC_NODE_CHAIN)
		return p->scan.chains[n->index].task;
	return p->scan.tasks[n->index].addr;
}

static void free_segs(struct ps *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p->segs[i].has_view)
			adac_chain_view_free(&p->segs[i].view);
}

/* Resolves the nodes of a stack into p->segs. A chain that cannot be walked at all gets an empty
 * view ending in its error (shown in its place). */
static int build_stack(struct ps *p, const struct adac_async_stack *st, struct adac_error *err)
{
	if (st->count > p->segs_cap) {
		size_t cap = p->segs_cap ? p->segs_cap : 16;
		while (cap < st->count)
			cap *= 2;
		struct seg *s = realloc(p->segs, cap * sizeof *s);
		if (!s)
			return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		p->segs = s;
		p->segs_cap = cap;
	}
	for (uint32_t i = 0; i < st->count; i++) {
		struct seg *s = &p->segs[i];
		memset(s, 0, sizeof *s);
		s->node = &p->graph.nodes[p->graph.stack_nodes[st->first + i]];
		if (s->node->kind == ADAC_NODE_CHAIN) {
			const struct adac_scan_chain *ch = &p->scan.chains[s->node->index];
			struct adac_error e = {0};
			if (adac_chain_view_build_cached(p->rt, ch->head, 0, p->frames, &s->view, &e) == 0) {
				s->has_view = true;
				s->view.task = ch->task;
			} else if (e.code == ADAC_E_NOMEM || e.code == ADAC_E_LAYOUT) {
				free_segs(p, i);
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
			adac_classic_frame_read(p->rt, p->classic, t->addr, t->mt, &s->classic);
		}
	}
	return 0;
}

static size_t shown_frames(const struct seg *s)
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
static bool empty_stack(const struct ps *p, const struct adac_async_stack *st)
{
	for (uint32_t i = 0; i < st->count; i++) {
		const struct seg *s = &p->segs[i];
		if (s->node->kind != ADAC_NODE_CHAIN || p->scan.chains[s->node->index].root != ADAC_ROOT_UNOWNED ||
		    shown_frames(s) || s->view.chain.end == ADAC_CHAIN_BROKEN || s->view.chain.end == ADAC_CHAIN_CYCLE)
			return false;
	}
	return true;
}

/* What the first frame awaits: the head continuation's Task/Source, or a task feeding the node. */
/* What a stack's innermost frame waits for: its head continuation's awaited object, or the task
 * a classic frame's box or task awaits (through m_continuationObject). */
static bool stack_awaiting(struct ps *p, struct adac_awaiting *a)
{
	const struct seg *s = &p->segs[0];
	memset(a, 0, sizeof *a);
	if (s->node->kind == ADAC_NODE_CHAIN && s->view.has_awaiting) {
		*a = s->view.awaiting;
		return true;
	}
	if (!s->node->awaits)
		return false;
	struct task_desc d;
	describe_task(p, s->node->awaits, &d);
	a->object = d.addr;
	a->mt = d.mt;
	a->type = d.type;
	a->via = "m_continuationObject";
	a->has_state_flags = d.has_flags;
	a->state_flags = d.flags;
	return true;
}

/* ---- filters ----------------------------------------------------------------------------------- */

static bool type_matches(struct ps *p, uint64_t mt, const char *text)
{
	if (!mt)
		return false;
	const char *name = adac_type_name(p->rt, mt, 0, NULL);
	return name && strstr(name, text);
}

static bool addr_wanted(const struct ps_opts *o, uint64_t a)
{
	for (size_t i = 0; i < o->naddresses; i++)
		if (o->addresses[i] == a)
			return true;
	return false;
}

static bool matches(struct ps *p, const struct adac_async_stack *st)
{
	const struct ps_opts *o = p->o;
	bool want_m = o->method != NULL, want_t = o->type != NULL, want_a = o->naddresses > 0;
	struct adac_awaiting aw;
	if (stack_awaiting(p, &aw)) {
		if (want_a && addr_wanted(o, aw.object))
			want_a = false;
		if (want_t && aw.type && strstr(aw.type, o->type))
			want_t = false;
	}
	for (uint32_t i = 0; i < st->count && (want_m || want_t || want_a); i++) {
		const struct seg *s = &p->segs[i];
		uint64_t task = node_task(p, s->node);
		if (want_a && task && addr_wanted(o, task))
			want_a = false;
		if (want_t && task) {
			struct task_desc d;
			describe_task(p, task, &d);
			if (d.type && strstr(d.type, o->type))
				want_t = false;
		}
		if (s->node->kind == ADAC_NODE_BOX) {
			if (want_a && s->classic.state_machine && addr_wanted(o, s->classic.state_machine))
				want_a = false;
			if (want_m && s->classic.method && strstr(s->classic.method, o->method))
				want_m = false;
			if (want_t && type_matches(p, s->classic.state_machine_mt, o->type))
				want_t = false;
			continue;
		}
		if (s->node->kind != ADAC_NODE_CHAIN)
			continue;
		for (size_t k = 0; k < s->view.chain.count; k++) {
			const struct adac_async_frame *f = &s->view.frames[k];
			if (want_a && addr_wanted(o, f->cont.addr))
				want_a = false;
			if (want_t && type_matches(p, f->cont.mt, o->type))
				want_t = false;
			if (want_m && adac_async_frame_shown(f) && f->method && strstr(f->method, o->method))
				want_m = false;
		}
	}
	return !want_m && !want_t && !want_a;
}

/* ---- text -------------------------------------------------------------------------------------- */

static void print_header(struct ps *p, size_t index, const struct adac_async_stack *st)
{
	const struct adac_async_node *first = p->segs[0].node, *last = p->segs[st->count - 1].node;
	adac_print(p->out, "chain #%zu:", index);
	if (first->kind == ADAC_NODE_CHAIN && p->scan.chains[first->index].root == ADAC_ROOT_RUNNING) {
		const struct adac_scan_chain *ch = &p->scan.chains[first->index];
		adac_print(p->out, " running on thread %llu (managed thread %u),", (unsigned long long)ch->os_tid,
		           ch->managed_id);
	}
	uint64_t task = node_task(p, last);
	if (task) {
		struct task_desc d;
		describe_task(p, task, &d);
		adac_print(p->out, " task 0x%016llx %s", (unsigned long long)task, d.type ? d.type : "?");
		if (d.has_flags)
			adac_print(p->out, " [%s]", adac_task_status(d.flags));
		adac_print(p->out, "\n");
	} else if (last->kind == ADAC_NODE_CHAIN && p->scan.chains[last->index].root == ADAC_ROOT_UNOWNED) {
		adac_print(p->out, " no owning task (Continuation 0x%016llx is held by no task or thread)\n",
		           (unsigned long long)p->scan.chains[last->index].head);
	} else {
		adac_print(p->out, " task unknown\n");
	}
}

static void print_stack(struct ps *p, size_t index, const struct adac_async_stack *st)
{
	unsigned flags = p->o->locals ? ADAC_VIEW_LOCALS : 0;
	print_header(p, index, st);
	size_t frame = 0;
	for (uint32_t i = 0; i < st->count; i++) {
		struct seg *s = &p->segs[i];
		struct adac_awaiting aw;
		if (i == 0 && s->node->kind != ADAC_NODE_CHAIN && stack_awaiting(p, &aw))
			adac_awaiting_print(&aw, p->out);
		if (s->node->kind == ADAC_NODE_CHAIN) {
			struct adac_chain_view v = s->view;
			if (i > 0)
				v.has_awaiting = false; /* it awaits the frame printed before it */
			frame += adac_chain_view_print(p->rt, &v, p->out, frame, 0, flags);
		} else if (s->node->kind == ADAC_NODE_BOX) {
			const struct adac_classic_frame *c = &s->classic;
			char where[ADAC_FRAME_WHERE_MAX];
			adac_print(p->out, "  async #%zu: 0x%016llx %s`%s%s [classic", frame++, (unsigned long long)c->box,
			           c->module ? c->module : "?", c->method ? c->method : "<unknown method>",
			           adac_frame_where(c->has_source, c->file, c->line, c->has_il, c->il_offset, where, sizeof where));
			if (c->has_state)
				adac_print(p->out, ", state %d", c->state);
			adac_print(p->out, "]\n");
			if (c->note[0])
				adac_print(p->out, "      note: %s\n", c->note);
			if (p->o->locals && c->state_machine)
				adac_print(p->out, "      (its locals are fields of its state machine %s, at 0x%016llx%s)\n",
				           c->state_machine_mt ? adac_type_name(p->rt, c->state_machine_mt, 0, NULL) : "?",
				           (unsigned long long)c->state_machine, c->state_machine_inline ? " inside the box" : "");
		} else {
			struct task_desc d;
			describe_task(p, p->scan.tasks[s->node->index].addr, &d);
			adac_print(p->out, "  async #%zu: 0x%016llx %s [task%s%s]\n", frame++, (unsigned long long)d.addr,
			           d.type ? d.type : "?", d.has_flags ? ", " : "", d.has_flags ? adac_task_status(d.flags) : "");
		}
	}
	const struct adac_async_node *first = p->segs[0].node;
	if (first->kind == ADAC_NODE_CHAIN && p->scan.chains[first->index].root == ADAC_ROOT_RUNNING)
		adac_print(p->out, "  (the method this chain resumed runs on the thread: see its physical frames with bt)\n");
	if (st->cycle)
		adac_print(p->out, "  (cycle: the last frame's task is awaited by a frame above it: this stack waits on itself)\n");
	if (st->truncated)
		adac_print(p->out, "  (stopped after %u stitched segments, ADAC_MAX_CHAIN_DEPTH)\n", st->count);
}

/* ---- JSON -------------------------------------------------------------------------------------- */

static json_t *task_json(struct ps *p, uint64_t addr)
{
	if (!addr)
		return json_null();
	struct task_desc d;
	describe_task(p, addr, &d);
	json_t *j = json_object();
	json_object_set_new(j, "address", adac_json_addr(addr));
	json_object_set_new(j, "method_table", d.mt ? adac_json_addr(d.mt) : json_null());
	json_object_set_new(j, "type", d.type ? json_string(d.type) : json_null());
	if (d.has_flags) {
		char buf[256];
		json_object_set_new(j, "status", json_string(adac_task_status(d.flags)));
		json_object_set_new(j, "state_flags", json_integer((json_int_t)d.flags));
		json_object_set_new(j, "flags", json_string(adac_task_flags_text(d.flags, buf, sizeof buf)));
	}
	return j;
}

static json_t *links_json(const struct adac_chain *c)
{
	json_t *a = json_array();
	for (size_t i = 0; i < c->count; i++)
		json_array_append_new(a, adac_json_addr(c->links[i].addr));
	return a;
}

static json_t *stack_json(struct ps *p, size_t index, const struct adac_async_stack *st)
{
	unsigned flags = p->o->locals ? ADAC_VIEW_LOCALS : 0;
	json_t *j = json_object(), *frames = json_array(), *segs = json_array();
	json_object_set_new(j, "index", json_integer((json_int_t)index));
	const struct adac_async_node *first = p->segs[0].node, *last = p->segs[st->count - 1].node;
	json_object_set_new(j, "task", task_json(p, node_task(p, last)));
	if (first->kind == ADAC_NODE_CHAIN && p->scan.chains[first->index].root == ADAC_ROOT_RUNNING) {
		const struct adac_scan_chain *ch = &p->scan.chains[first->index];
		json_t *r = json_object();
		json_object_set_new(r, "tid", json_integer((json_int_t)ch->os_tid));
		json_object_set_new(r, "managed_id", json_integer(ch->managed_id));
		json_object_set_new(r, "dispatcher", adac_json_addr(ch->dispatcher));
		json_object_set_new(j, "running", r);
	} else {
		json_object_set_new(j, "running", json_null());
	}
	struct adac_awaiting aw;
	json_object_set_new(j, "awaiting", stack_awaiting(p, &aw) ? adac_awaiting_json(&aw) : json_null());
	size_t frame = 0;
	for (uint32_t i = 0; i < st->count; i++) {
		struct seg *s = &p->segs[i];
		json_t *sj = json_object();
		if (s->node->kind == ADAC_NODE_CHAIN) {
			const struct adac_scan_chain *ch = &p->scan.chains[s->node->index];
			json_t *cj = adac_chain_view_json(p->rt, &s->view, 0, flags);
			json_t *fr = json_object_get(cj, "frames");
			size_t k;
			json_t *f;
			json_array_foreach(fr, k, f) {
				json_object_set_new(f, "index", json_integer((json_int_t)frame++));
				json_object_set_new(f, "kind", json_string("async"));
				json_array_append(frames, f);
			}
			json_object_set_new(sj, "kind", json_string("chain"));
			json_object_set_new(sj, "root", json_string(adac_chain_root_name(ch->root)));
			json_object_set(sj, "head", json_object_get(cj, "head"));
			json_object_set_new(sj, "task", task_json(p, ch->task));
			json_object_set_new(sj, "links", links_json(&s->view.chain));
			json_object_set(sj, "end", json_object_get(cj, "end"));
			json_object_set(sj, "error", json_object_get(cj, "error"));
			json_decref(cj);
		} else if (s->node->kind == ADAC_NODE_BOX) {
			const struct adac_classic_frame *c = &s->classic;
			json_t *f = json_object();
			json_object_set_new(f, "index", json_integer((json_int_t)frame++));
			json_object_set_new(f, "kind", json_string("classic"));
			json_object_set_new(f, "box", adac_json_addr(c->box));
			json_object_set_new(f, "method_table", adac_json_addr(c->mt));
			json_object_set_new(f, "state_machine_type",
			                    c->state_machine_mt ? json_string(adac_type_name(p->rt, c->state_machine_mt, 0, NULL))
			                                        : json_null());
			json_object_set_new(f, "state_machine", c->state_machine ? adac_json_addr(c->state_machine) : json_null());
			json_object_set_new(f, "state", c->has_state ? json_integer(c->state) : json_null());
			json_object_set_new(f, "method_desc", c->method_desc ? adac_json_addr(c->method_desc) : json_null());
			json_object_set_new(f, "method", c->method ? json_string(c->method) : json_null());
			json_object_set_new(f, "module", c->module ? json_string(c->module) : json_null());
			json_object_set_new(f, "token", c->token ? json_integer(c->token) : json_null());
			json_object_set_new(f, "il_offset", c->has_il ? json_integer(c->il_offset) : json_null());
			json_object_set_new(f, "file", c->has_source ? json_string(c->file) : json_null());
			json_object_set_new(f, "line", c->has_source ? json_integer(c->line) : json_null());
			json_object_set_new(f, "note", c->note[0] ? json_string(c->note) : json_null());
			json_array_append_new(frames, f);
			json_object_set_new(sj, "kind", json_string("box"));
			json_object_set_new(sj, "task", task_json(p, c->box));
		} else {
			uint64_t t = p->scan.tasks[s->node->index].addr;
			json_t *f = json_object();
			json_object_set_new(f, "index", json_integer((json_int_t)frame++));
			json_object_set_new(f, "kind", json_string("task"));
			json_object_set_new(f, "task", task_json(p, t));
			json_array_append_new(frames, f);
			json_object_set_new(sj, "kind", json_string("task"));
			json_object_set_new(sj, "task", task_json(p, t));
		}
		json_array_append_new(segs, sj);
	}
	json_object_set_new(j, "frames", frames);
	json_object_set_new(j, "segments", segs);
	json_object_set_new(j, "cycle", json_boolean(st->cycle));
	json_object_set_new(j, "truncated", json_boolean(st->truncated));
	return j;
}

/* ---- --coalesce and --stats -------------------------------------------------------------------- */

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


static const char *task_label(struct ps *p, uint64_t addr, char *buf, size_t size)
{
	struct task_desc d;
	describe_task(p, addr, &d);
	snprintf(buf, size, "task %s [%s]", d.type ? d.type : "?", d.has_flags ? adac_task_status(d.flags) : "?");
	return buf;
}

/* The labels of a stack, innermost first, through cb; the first says what it awaits. */
typedef int (*label_cb)(struct ps *p, const char *label, size_t level, const struct seg *s);

static int stack_labels(struct ps *p, const struct adac_async_stack *st, label_cb cb)
{
	char buf[LABEL_MAX];
	struct adac_awaiting aw;
	const struct seg *first = &p->segs[0];
	if (first->node->kind == ADAC_NODE_CHAIN && p->scan.chains[first->node->index].root == ADAC_ROOT_RUNNING)
		snprintf(buf, sizeof buf, "running on a thread");
	else if (stack_awaiting(p, &aw))
		snprintf(buf, sizeof buf, "awaiting %s", aw.type ? aw.type : "an object of unknown type");
	else
		snprintf(buf, sizeof buf, "awaiting (not recorded)");
	size_t level = 0;
	if (cb(p, buf, level++, NULL))
		return -1;
	for (uint32_t i = 0; i < st->count; i++) {
		const struct seg *s = &p->segs[i];
		if (s->node->kind == ADAC_NODE_CHAIN) {
			for (size_t k = 0; k < s->view.chain.count; k++) {
				if (!adac_async_frame_shown(&s->view.frames[k]))
					continue;
				if (cb(p, adac_async_frame_label(&s->view.frames[k], buf, sizeof buf), level++, s))
					return -1;
			}
			if (s->view.chain.end == ADAC_CHAIN_BROKEN || s->view.chain.end == ADAC_CHAIN_CYCLE) {
				snprintf(buf, sizeof buf, "error: %s", s->view.chain.end_err.msg);
				if (cb(p, buf, level++, s))
					return -1;
			}
		} else if (s->node->kind == ADAC_NODE_BOX) {
			if (cb(p, classic_label(&s->classic, buf, sizeof buf), level++, s))
				return -1;
		} else {
			if (cb(p, task_label(p, p->scan.tasks[s->node->index].addr, buf, sizeof buf), level++, s))
				return -1;
		}
	}
	return 0;
}

static int coalesce_cb(struct ps *p, const char *label, size_t level, const struct seg *s)
{
	(void)s;
	uint32_t id = label_id(&p->labels, label);
	if (id == UINT32_MAX)
		return adac_fail(&p->fail, ADAC_E_NOMEM, 0, "out of memory grouping stacks");
	if (level == 0)
		p->cursor = 0;
	uint32_t c = trie_child(&p->trie, p->cursor, id);
	if (!c)
		return adac_fail(&p->fail, ADAC_E_NOMEM, 0, "out of memory grouping stacks");
	p->trie.n[c].count++;
	p->cursor = c;
	return 0;
}

static int stats_cb(struct ps *p, const char *label, size_t level, const struct seg *s)
{
	if (level == 0) {
		/* "awaiting X" / "running ...": per stack */
		uint32_t id = label_id(&p->labels, label);
		if (id == UINT32_MAX || count_add(&p->await_counts, id))
			return adac_fail(&p->fail, ADAC_E_NOMEM, 0, "out of memory counting frames");
		return 0;
	}
	/* Frames: each continuation or box once, however many stacks share it. */
	uint32_t node = (uint32_t)(s->node - p->graph.nodes);
	if (p->counted[node])
		return 0;
	uint32_t id = label_id(&p->labels, label);
	if (id == UINT32_MAX || count_add(&p->frame_counts, id))
		return adac_fail(&p->fail, ADAC_E_NOMEM, 0, "out of memory counting frames");
	return 0;
}

static int add_stats(struct ps *p, const struct adac_async_stack *st)
{
	if (stack_labels(p, st, stats_cb))
		return -1;
	char buf[LABEL_MAX];
	for (uint32_t i = 0; i < st->count; i++) {
		const struct seg *s = &p->segs[i];
		uint32_t node = (uint32_t)(s->node - p->graph.nodes);
		if (p->counted[node])
			continue;
		p->counted[node] = true;
		uint64_t task = node_task(p, s->node);
		if (!task)
			continue;
		struct task_desc d;
		describe_task(p, task, &d);
		snprintf(buf, sizeof buf, "%-28s %s", d.has_flags ? adac_task_status(d.flags) : "?", d.type ? d.type : "?");
		uint32_t id = label_id(&p->labels, buf);
		if (id == UINT32_MAX || count_add(&p->task_counts, id))
			return adac_fail(&p->fail, ADAC_E_NOMEM, 0, "out of memory counting tasks");
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
static struct ranked *rank(struct ps *p, const struct counts *c, size_t *n)
{
	*n = 0;
	struct ranked *r = malloc((c->cap ? c->cap : 1) * sizeof *r);
	if (!r)
		return NULL;
	for (size_t i = 0; i < c->cap; i++)
		if (c->n[i])
			r[(*n)++] = (struct ranked){(uint32_t)i, c->n[i], p->labels.text[i]};
	qsort(r, *n, sizeof *r, cmp_ranked);
	return r;
}

/* Children of a trie node, most frequent first. */
static struct ranked *children(struct ps *p, uint32_t node, size_t *n)
{
	*n = 0;
	for (uint32_t c = p->trie.n[node].first_child; c; c = p->trie.n[c].next_sibling)
		(*n)++;
	struct ranked *r = malloc((*n ? *n : 1) * sizeof *r);
	if (!r)
		return NULL;
	size_t i = 0;
	for (uint32_t c = p->trie.n[node].first_child; c; c = p->trie.n[c].next_sibling)
		r[i++] = (struct ranked){c, p->trie.n[c].count, p->labels.text[p->trie.n[c].label]};
	qsort(r, *n, sizeof *r, cmp_ranked);
	return r;
}

/* Renders the tree depth first without recursion (stacks can be 100,000 frames deep). */
static int render_tree(struct ps *p, json_t *json_root)
{
	struct level {
		struct ranked *items;
		size_t n, next;
		json_t *array;
	};
	size_t cap = 64, depth = 0;
	struct level *lv = malloc(cap * sizeof *lv);
	if (!lv)
		return adac_fail(&p->fail, ADAC_E_NOMEM, 0, "out of memory");
	lv[0].items = children(p, 0, &lv[0].n);
	lv[0].next = 0;
	lv[0].array = json_root;
	if (!lv[0].items) {
		free(lv);
		return adac_fail(&p->fail, ADAC_E_NOMEM, 0, "out of memory");
	}
	depth = 1;
	size_t group = 0;
	int rc = 0;
	while (depth && rc == 0) {
		struct level *l = &lv[depth - 1];
		if (l->next == l->n) {
			free(l->items);
			depth--;
			continue;
		}
		const struct ranked *it = &l->items[l->next++];
		uint32_t node = it->label; /* children() ranks trie nodes: label is the node id */
		const char *text = p->labels.text[p->trie.n[node].label];
		json_t *kids = NULL;
		if (l->array) {
			json_t *j = json_object();
			json_object_set_new(j, "frame", json_string(text));
			json_object_set_new(j, "count", json_integer((json_int_t)it->count));
			kids = json_array();
			json_object_set_new(j, "callers", kids);
			json_array_append_new(l->array, j);
		} else {
			if (depth == 1) {
				adac_print(p->out, "%sSTACKS %zu: %llu chain%s\n", group ? "\n" : "", group + 1,
				           (unsigned long long)it->count, it->count == 1 ? "" : "s");
				group++;
			}
			adac_print(p->out, "%*s[%llu] %s\n", (int)(2 * (depth - 1)), "", (unsigned long long)it->count, text);
		}
		if (!p->trie.n[node].first_child)
			continue;
		if (depth == cap) {
			size_t c = cap * 2;
			struct level *q = realloc(lv, c * sizeof *q);
			if (!q) {
				rc = adac_fail(&p->fail, ADAC_E_NOMEM, 0, "out of memory");
				break;
			}
			lv = q;
			cap = c;
		}
		struct level *nl = &lv[depth];
		nl->items = children(p, node, &nl->n);
		nl->next = 0;
		nl->array = kids;
		if (!nl->items) {
			rc = adac_fail(&p->fail, ADAC_E_NOMEM, 0, "out of memory");
			break;
		}
		depth++;
	}
	while (depth)
		free(lv[--depth].items);
	free(lv);
	return rc;
}

static void print_table(struct ps *p, const char *title, const char *column, const struct counts *c, json_t *json,
                        const char *key)
{
	size_t n;
	struct ranked *r = rank(p, c, &n);
	if (!r) {
		adac_fail(&p->fail, ADAC_E_NOMEM, 0, "out of memory");
		return;
	}
	if (json) {
		json_t *a = json_array();
		for (size_t i = 0; i < n; i++) {
			json_t *j = json_object();
			json_object_set_new(j, key, json_string(r[i].text));
			json_object_set_new(j, "count", json_integer((json_int_t)r[i].count));
			json_array_append_new(a, j);
		}
		json_object_set_new(json, title, a);
	} else {
		adac_print(p->out, "%s:\n%10s  %s\n", title, "Count", column);
		for (size_t i = 0; i < n; i++)
			adac_print(p->out, "%10llu  %s\n", (unsigned long long)r[i].count, r[i].text);
	}
	free(r);
}

/* ---- the command ------------------------------------------------------------------------------- */

static json_t *summary_json(struct ps *p)
{
	const struct adac_async_scan *s = &p->scan;
	size_t roots[4] = {0};
	for (size_t i = 0; i < s->chain_count; i++)
		roots[s->chains[i].root]++;
	uint64_t resolved, hits;
	adac_frame_cache_stats(p->frames, &resolved, &hits);
	json_t *j = json_object();
	json_object_set_new(j, "listed", json_integer((json_int_t)p->listed));
	json_object_set_new(j, "frames_listed", json_integer((json_int_t)p->frames_listed));
	json_object_set_new(j, "stacks", json_integer((json_int_t)p->graph.stack_count));
	json_object_set_new(j, "filtered_out", json_integer((json_int_t)p->filtered_out));
	json_object_set_new(j, "without_frames", json_integer((json_int_t)p->empty));
	json_object_set_new(j, "continuations", json_integer((json_int_t)s->cont_count));
	json_object_set_new(j, "chains", json_integer((json_int_t)s->chain_count));
	json_object_set_new(j, "running_chains", json_integer((json_int_t)roots[ADAC_ROOT_RUNNING]));
	json_object_set_new(j, "task_chains", json_integer((json_int_t)roots[ADAC_ROOT_TASK]));
	json_object_set_new(j, "unowned_chains", json_integer((json_int_t)roots[ADAC_ROOT_UNOWNED]));
	json_object_set_new(j, "stale_chains", json_integer((json_int_t)roots[ADAC_ROOT_STALE]));
	size_t boxes = 0;
	for (size_t i = 0; i < s->task_count; i++)
		boxes += s->tasks[i].is_box;
	json_object_set_new(j, "pending_tasks", json_integer((json_int_t)s->task_count));
	json_object_set_new(j, "state_machines", json_integer((json_int_t)boxes));
	json_object_set_new(j, "completed_tasks", json_integer((json_int_t)s->tasks_completed));
	json_object_set_new(j, "heap_objects", json_integer((json_int_t)s->objects));
	json_object_set_new(j, "frames_resolved", json_integer((json_int_t)resolved));
	json_object_set_new(j, "frames_cached", json_integer((json_int_t)hits));
	json_object_set_new(j, "heap_seconds", json_real(s->seconds_heap));
	json_object_set_new(j, "link_seconds", json_real(s->seconds_link));
	return j;
}

/* Chains not in a listed stack, and why: "stale" (left behind after their chain resumed), "without
 * frames" (sentinels), "filtered"; with their heads and the continuations they hold. */
static json_t *unlisted_json(struct ps *p)
{
	json_t *a = json_array();
	const struct adac_async_scan *s = &p->scan;
	for (size_t i = 0; i < s->chain_count; i++) {
		const struct adac_scan_chain *ch = &s->chains[i];
		uint32_t node = p->graph.chain_node[i];
		enum fate f = node == ADAC_SCAN_NONE ? FATE_NONE : (enum fate)p->fate[node];
		if (f == FATE_LISTED)
			continue;
		const char *why = ch->root == ADAC_ROOT_STALE ? "stale"
		                  : f == FATE_EMPTY           ? "without frames"
		                  : f == FATE_FILTERED        ? "filtered"
		                                              : "not reached";
		json_t *j = json_object(), *links = json_array();
		json_object_set_new(j, "head", adac_json_addr(ch->head));
		json_object_set_new(j, "root", json_string(adac_chain_root_name(ch->root)));
		json_object_set_new(j, "reason", json_string(why));
		for (uint64_t cur = ch->head; cur;) {
			uint32_t k = adac_scan_find_cont(s, cur);
			if (k == ADAC_SCAN_NONE || s->conts[k].chain != i)
				break;
			json_array_append_new(links, adac_json_addr(cur));
			cur = s->conts[k].next;
		}
		json_object_set_new(j, "links", links);
		json_array_append_new(a, j);
	}
	return a;
}

static void print_summary(struct ps *p)
{
	const struct adac_async_scan *s = &p->scan;
	size_t roots[4] = {0}, boxes = 0;
	for (size_t i = 0; i < s->chain_count; i++)
		roots[s->chains[i].root]++;
	for (size_t i = 0; i < s->task_count; i++)
		boxes += s->tasks[i].is_box;
	adac_print(p->out, "%zu chain%s listed", p->listed, p->listed == 1 ? "" : "s");
	if (p->filtered_out)
		adac_print(p->out, " (%zu more do not match the filters)", p->filtered_out);
	adac_print(p->out, "; %zu running. Heap: %zu continuations, %zu pending tasks, %zu classic state machines",
	           p->running, s->cont_count, s->task_count, boxes);
	if (roots[ADAC_ROOT_STALE] || p->empty)
		adac_print(p->out, "; not listed: %zu stale continuation chain%s, %zu without frames", roots[ADAC_ROOT_STALE],
		           roots[ADAC_ROOT_STALE] == 1 ? "" : "s", p->empty);
	adac_print(p->out, ".\n");
}

static void print_warnings(struct ps *p)
{
	if (!p->scan.structures_valid)
		adac_print(p->out, "Warning: the GC heap was stopped during a garbage collection "
		                   "(StructureInvalidCount != 0); objects may be missed or misread.\n");
	for (size_t i = 0; i < p->scan.walk.error_count; i++)
		adac_print(p->out, "Warning: heap walk: %s (after %llu objects of that region); its objects are missing.\n",
		           p->scan.walk.errors[i].err.msg, (unsigned long long)p->scan.walk.errors[i].objects_before);
	if (adac_failed(&p->scan.threads_err))
		adac_print(p->out, "Warning: running chains: %s\n", p->scan.threads_err.msg);
	if (p->graph.stacks_capped)
		adac_print(p->out, "Warning: stopped after %zu stacks (at most %u stacks, 2^25 frames in all); the others are "
		                   "not listed\n", p->graph.stack_count, ADAC_MAX_CHAINS);
}

/* --json without grouping streams its chains: each is printed as soon as it is made (a tree of
 * 10,000 chains would be tens of megabytes of jansson nodes). Prints `before`, then value as
 * JSON_INDENT(2) text with every line indented by `indent` spaces, then `after`, in one write. */
static int write_json(struct adac_out *out, const char *before, json_t *value, unsigned indent, const char *after,
                      struct adac_error *err)
{
	char *text = json_dumps(value, JSON_INDENT(2));
	if (!text)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory formatting JSON");
	size_t len = strlen(text), lines = 1;
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	size_t nb = strlen(before), na = strlen(after);
	char *buf = malloc(nb + len + lines * indent + na + 1);
	if (!buf) {
		free(text);
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory formatting JSON");
	}
	char *w = buf;
	memcpy(w, before, nb);
	w += nb;
	memset(w, ' ', indent);
	w += indent;
	for (size_t i = 0; i < len; i++) {
		*w++ = text[i];
		if (text[i] == '\n') {
			memset(w, ' ', indent);
			w += indent;
		}
	}
	memcpy(w, after, na);
	w += na;
	out->write(out->ctx, buf, (size_t)(w - buf));
	free(buf);
	free(text);
	return 0;
}

/* The rest of the top-level object after a streamed "chains" array: its members, at 4 spaces. */
static int write_json_tail(struct adac_out *out, json_t *rest, struct adac_error *err)
{
	char *text = json_dumps(rest, JSON_INDENT(2));
	json_decref(rest);
	if (!text)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory formatting JSON");
	/* "{\n  a,\n  b\n}": keep the members, indented 2 more. */
	char *open = strchr(text, '\n'), *close = strrchr(text, '\n');
	int rc = 0;
	if (open && close && close > open) {
		*close = '\0';
		size_t len = strlen(open + 1), lines = 1;
		for (size_t i = 0; i < len; i++)
			lines += open[1 + i] == '\n';
		char *buf = malloc(len + lines * 2 + 16);
		if (!buf) {
			free(text);
			return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory formatting JSON");
		}
		char *w = buf;
		*w++ = ',';
		*w++ = '\n';
		*w++ = ' ';
		*w++ = ' ';
		for (size_t i = 0; i < len; i++) {
			*w++ = open[1 + i];
			if (open[1 + i] == '\n') {
				*w++ = ' ';
				*w++ = ' ';
			}
		}
		memcpy(w, "\n  }\n}\n", 7);
		w += 7;
		out->write(out->ctx, buf, (size_t)(w - buf));
		free(buf);
	} else {
		adac_print(out, "\n  }\n}\n");
	}
	free(text);
	return rc;
}

static int run(struct ps *p, struct adac_error *err)
{
	const struct ps_opts *o = p->o;
	struct adac_scan_progress prog = {progress_report, &p->progress};
	if (adac_async_scan(p->rt, &prog, &p->scan, err))
		return -1;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (adac_classic_resolve_awaiters(p->rt, &p->scan, err))
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	p->scan.seconds_link += (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (adac_async_graph_build(&p->scan, &p->graph, err))
		return -1;
	p->frames = adac_frame_cache_new();
	p->classic = adac_classic_cache_new();
	p->counted = calloc(p->graph.node_count ? p->graph.node_count : 1, sizeof *p->counted);
	p->fate = calloc(p->graph.node_count ? p->graph.node_count : 1, sizeof *p->fate);
	p->trie.cap = 64;
	p->trie.n = calloc(p->trie.cap, sizeof *p->trie.n);
	p->trie.count = 1;
	if (!p->frames || !p->classic || !p->counted || !p->fate || !p->trie.n)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	bool grouping = o->coalesce || o->stats;
	bool stream = o->json && !grouping;
	if (stream)
		adac_print(p->out, "{\n  \"ps\": {\n    \"chains\": [");
	if (!o->json)
		print_warnings(p);
	for (size_t i = 0; i < p->graph.stack_count; i++) {
		const struct adac_async_stack *st = &p->graph.stacks[i];
		progress_report(&p->progress, "resolving frames", i, p->graph.stack_count);
		if (build_stack(p, st, err))
			return -1;
		if (empty_stack(p, st)) {
			p->empty++;
			set_fate(p, st, FATE_EMPTY);
			free_segs(p, st->count);
			continue;
		}
		if ((o->method || o->type || o->naddresses) && !matches(p, st)) {
			p->filtered_out++;
			set_fate(p, st, FATE_FILTERED);
			free_segs(p, st->count);
			continue;
		}
		set_fate(p, st, FATE_LISTED);
		const struct adac_async_node *first = p->segs[0].node;
		if (first->kind == ADAC_NODE_CHAIN && p->scan.chains[first->index].root == ADAC_ROOT_RUNNING)
			p->running++;
		size_t index = p->listed++;
		for (uint32_t k = 0; k < st->count; k++)
			p->frames_listed += shown_frames(&p->segs[k]);
		if (o->coalesce) {
			stack_labels(p, st, coalesce_cb);
		} else if (o->stats) {
			add_stats(p, st);
		} else if (o->json) {
			json_t *j = stack_json(p, index, st);
			int wrc = write_json(p->out, index ? ",\n" : "\n", j, 6, "", err);
			json_decref(j);
			if (wrc) {
				free_segs(p, st->count);
				return -1;
			}
		} else {
			if (index)
				adac_print(p->out, "\n");
			print_stack(p, index, st);
		}
		free_segs(p, st->count);
		if (adac_failed(&p->fail)) {
			adac_error_copy(err, &p->fail);
			return -1;
		}
	}
	progress_end(&p->progress);

	json_t *root = o->json ? json_object() : NULL;
	if (o->coalesce) {
		if (root) {
			json_t *tree = json_array();
			json_object_set_new(root, "coalesce", tree);
			render_tree(p, tree);
		} else {
			render_tree(p, NULL);
			if (p->listed)
				adac_print(p->out, "\n");
		}
	} else if (o->stats) {
		json_t *st = root ? json_object() : NULL;
		print_table(p, "Frames", "Frame (each continuation or state machine once)", &p->frame_counts, st, "frame");
		if (!root)
			adac_print(p->out, "\n");
		print_table(p, "Awaiting", "What the stacks' innermost frames wait for", &p->await_counts, st, "awaiting");
		if (!root)
			adac_print(p->out, "\n");
		print_table(p, "Tasks", "Status                       Type", &p->task_counts, st, "task");
		if (root)
			json_object_set_new(root, "stats", st);
		else
			adac_print(p->out, "\n");
	} else if (stream) {
		adac_print(p->out, p->listed ? "\n    ]" : "]");
	} else if (p->listed) {
		adac_print(p->out, "\n");
	}
	if (adac_failed(&p->fail)) {
		json_decref(root);
		adac_error_copy(err, &p->fail);
		return -1;
	}
	int rc = 0;
	if (root) {
		json_object_set_new(root, "summary", summary_json(p));
		json_object_set_new(root, "unlisted", unlisted_json(p));
		json_t *errs = json_array();
		for (size_t i = 0; i < p->scan.walk.error_count; i++)
			json_array_append_new(errs, json_string(p->scan.walk.errors[i].err.msg));
		json_object_set_new(root, "heap_errors", errs);
		json_object_set_new(root, "structures_valid", json_boolean(p->scan.structures_valid));
		json_object_set_new(root, "threads_error",
		                    adac_failed(&p->scan.threads_err) ? json_string(p->scan.threads_err.msg) : json_null());
		if (stream) {
			rc = write_json_tail(p->out, root, err);
		} else {
			json_t *top = json_object();
			json_object_set_new(top, "ps", root);
			rc = adac_json_print(p->out, top, err);
		}
	} else {
		print_summary(p);
	}
	if (rc == 0 && p->scan.walk.error_count)
		rc = adac_fail(err, p->scan.walk.errors[0].err.code, p->scan.walk.errors[0].err.addr,
		               "the heap walk stopped early in %zu of %llu regions (first: %s)", p->scan.walk.error_count,
		               (unsigned long long)p->scan.walk.regions_walked, p->scan.walk.errors[0].err.msg);
	return rc;
}

int adac_cmd_ps(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                struct adac_error *err)
{
	(void)fe;
	struct ps_opts o;
	if (parse(argc, argv, &o, err))
		return -1;
	struct ps p = {.o = &o, .out = out};
	p.progress.start = now();
	p.progress.tty = isatty(STDERR_FILENO) == 1;
	const char *delay = getenv("ASYNCDAC_PROGRESS_DELAY");
	p.progress.delay = delay && *delay ? strtod(delay, NULL) : PROGRESS_DELAY;
	p.rt = adac_runtime_open(t, err);
	if (!p.rt)
		return -1;
	int rc = run(&p, err);
	progress_end(&p.progress);
	free(p.segs);
	free(p.counted);
	free(p.fate);
	free(p.trie.n);
	free(p.frame_counts.n);
	free(p.await_counts.n);
	free(p.task_counts.n);
	labels_free(&p.labels);
	adac_frame_cache_free(p.frames);
	adac_classic_cache_free(p.classic);
	adac_async_graph_free(&p.graph);
	adac_async_scan_free(&p.scan);
	adac_runtime_close(p.rt);
	return rc;
}
