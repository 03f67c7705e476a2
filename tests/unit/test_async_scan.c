/* test_async_scan.c - the parts of `ps` that read nothing from a target, over hand-made heaps:
 * chains from continuations and tasks (heads held by tasks, running chains, continuations nothing
 * points to, stale ones leading into an owned chain, cycles, a Next that is not on the heap), and
 * the stacks stitched through m_continuationObject (classic boxes between runtime-async chains in
 * both directions, a task fed by nothing as what a stack awaits, fan-in, a Task.WhenAll-like
 * promise, a deadlock cycle, the order of stacks); Task.Status and SOS's flag text; the address
 * index over records bunched far apart. */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "async/async_scan.h"
#include "async/classic_async.h"

#define MAX_OBJ 64

struct heap {
	struct adac_scan_cont conts[MAX_OBJ];
	size_t nc;
	struct adac_scan_task tasks[MAX_OBJ];
	struct adac_scan_task_link links[MAX_OBJ];
	uint64_t states[MAX_OBJ];
	size_t nt;
	struct adac_scan_running running[8];
	size_t nr;
	uint64_t awaiters[MAX_OBJ][4];   /* per task, resolved m_continuationObject targets */
	size_t naw[MAX_OBJ];
};

static void cont(struct heap *h, uint64_t addr, uint64_t next)
{
	h->conts[h->nc++] = (struct adac_scan_cont){.addr = addr, .next = next};
}

/* A pending task; is_box for a classic state-machine box. Returns its slot for awaiters. */
static size_t task(struct heap *h, uint64_t addr, uint64_t state_object, bool is_box)
{
	h->tasks[h->nt] = (struct adac_scan_task){.addr = addr, .type = is_box ? 1 : 0,
	                                         .state_flags = ADAC_TASK_WAITING_FOR_ACTIVATION};
	h->links[h->nt] = (struct adac_scan_task_link){0};
	h->states[h->nt] = state_object;
	return h->nt++;
}

static void awaited_by(struct heap *h, size_t t, uint64_t awaiter)
{
	h->awaiters[t][h->naw[t]++] = awaiter;
	h->links[t].continuation_object = awaiter;
}

static void running(struct heap *h, uint64_t head, uint64_t task_addr, uint64_t tid)
{
	h->running[h->nr++] = (struct adac_scan_running){.head = head, .task = task_addr, .os_tid = tid, .managed_id = 7,
	                                                 .dispatcher = 0x7ff000 + tid};
}

/* The graph as `ps` builds it: the awaiters' chains found, the continuation records dropped, the
 * awaiters and task links dropped once the edges are found. */
static int graph_as_ps(struct adac_async_scan *s, struct adac_async_graph *g, struct adac_error *err)
{
	if (adac_async_scan_awaiter_chains(s, err))
		return -1;
	adac_async_scan_drop_conts(s);
	if (adac_async_graph_link(s, g, err))
		return -1;
	adac_async_scan_drop_awaiters(s);
	return adac_async_graph_stacks(s, g, err);
}

/* The task that owns chain c. */
static uint64_t owner(const struct adac_async_scan *s, const struct adac_scan_chain *c)
{
	return adac_scan_chain_task(s, (uint32_t)(c - s->chains));
}

/* Builds the scan the way adac_async_scan does after its heap pass: chains, then awaiters (in
 * task address order, as the scan sorts tasks). */
static struct adac_async_scan make_scan(struct heap *h)
{
	struct adac_async_scan s;
	memset(&s, 0, sizeof s);
	s.conts = malloc(sizeof h->conts);
	s.tasks = malloc(sizeof h->tasks);
	s.task_links = malloc(sizeof h->links);
	s.state_objects = malloc(sizeof h->states);
	s.running = malloc(sizeof h->running);
	memcpy(s.conts, h->conts, sizeof h->conts);
	memcpy(s.tasks, h->tasks, sizeof h->tasks);
	memcpy(s.task_links, h->links, sizeof h->links);
	memcpy(s.state_objects, h->states, sizeof h->states);
	s.task_types = malloc(2 * sizeof *s.task_types);
	s.task_types[0] = (struct adac_scan_task_type){0x6000, false};
	s.task_types[1] = (struct adac_scan_task_type){0x6100, true};
	s.task_type_count = 2;
	memcpy(s.running, h->running, sizeof h->running);
	s.cont_count = h->nc;
	s.task_count = h->nt;
	s.running_count = h->nr;
	struct adac_error err = {0};
	CHECK(adac_async_scan_chains(&s, &err) == 0);
	s.awaiters = malloc(sizeof h->awaiters);
	for (size_t i = 0; i < s.task_count; i++) {
		size_t orig = 0;
		while (orig < h->nt && h->tasks[orig].addr != s.tasks[i].addr)
			orig++;
		/* (The links and state objects came with their tasks through the sort.) */
		CHECK_EQ_U64(s.state_conts[i], h->states[orig] ? adac_scan_find_cont(&s, h->states[orig]) : ADAC_SCAN_NONE);
		CHECK_EQ_U64(s.task_links[i].continuation_object, h->links[orig].continuation_object);
		s.task_links[i].awaiters_first = (uint32_t)s.awaiter_count;
		s.task_links[i].awaiters_count = (uint32_t)h->naw[orig];
		for (size_t k = 0; k < h->naw[orig]; k++)
			s.awaiters[s.awaiter_count++] = h->awaiters[orig][k];
	}
	return s;
}

static const struct adac_scan_chain *chain_at(const struct adac_async_scan *s, uint64_t head)
{
	for (size_t i = 0; i < s->chain_count; i++)
		if (s->chains[i].head == head)
			return &s->chains[i];
	return NULL;
}

/* Stack i as node addresses, "a,b,c" into buf. */
static const char *stack_text(const struct adac_async_scan *s, const struct adac_async_graph *g, size_t i, char *buf,
                              size_t size)
{
	size_t used = 0;
	buf[0] = '\0';
	const struct adac_async_stack *st = &g->stacks[i];
	for (uint32_t k = 0; k < st->count; k++) {
		const struct adac_async_node *n = &g->nodes[g->stack_nodes[st->first + k]];
		const char *kind = n->kind == ADAC_NODE_CHAIN ? "c" : n->kind == ADAC_NODE_BOX ? "b" : "t";
		int w = snprintf(buf + used, size - used, "%s%s%llx", k ? "," : "", kind,
		                 (unsigned long long)adac_async_node_addr(s, n));
		if (w > 0)
			used += (size_t)w;
	}
	if (st->cycle)
		snprintf(buf + used, size - used, " cycle at %u", (unsigned)st->cycle - 1);
	return buf;
}

static uint64_t stack_awaits(const struct adac_async_scan *s, const struct adac_async_graph *g, size_t i)
{
	return adac_async_node_awaits(s, &g->nodes[g->stack_nodes[g->stacks[i].first]]);
}

/* Where a chain's walk stopped: the record it merged into, cycled back to or was cut at; for a
 * Next that is no continuation, that Next (the last link's, or the head). */
static uint64_t end_addr(const struct adac_async_scan *s, const struct adac_scan_chain *c)
{
	if (c->end == ADAC_SCAN_END_MISSING)
		return c->end_record == ADAC_SCAN_NONE ? c->head : adac_scan_cont_next(s, c->end_record);
	return c->end_record == ADAC_SCAN_NONE ? 0 : s->conts[c->end_record].addr;
}

static void test_chains(void)
{
	struct heap h = {0};
	/* Task 0xa000 holds 0x100 -> 0x110 -> 0x120. */
	cont(&h, 0x100, 0x110);
	cont(&h, 0x110, 0x120);
	cont(&h, 0x120, 0);
	task(&h, 0xa000, 0x100, false);
	/* Nothing holds 0x200 -> 0x210: unowned. */
	cont(&h, 0x200, 0x210);
	cont(&h, 0x210, 0);
	/* 0x300 nothing holds leads into the task's chain: stale. */
	cont(&h, 0x300, 0x110);
	/* A cycle no head reaches: 0x400 -> 0x410 -> 0x400. */
	cont(&h, 0x400, 0x410);
	cont(&h, 0x410, 0x400);
	/* Task 0xa100 holds 0x500 whose Next is not on the heap. */
	cont(&h, 0x500, 0xdead0);
	task(&h, 0xa100, 0x500, false);
	/* Task 0xa200 holds 0x600 -> 0x610 -> 0x600 (a cycle through its head). */
	cont(&h, 0x600, 0x610);
	cont(&h, 0x610, 0x600);
	task(&h, 0xa200, 0x600, false);
	/* A task whose state object is not a continuation. */
	task(&h, 0xa300, 0x999, false);
	struct adac_async_scan s = make_scan(&h);
	CHECK_EQ_U64(s.chain_count, 6);
	const struct adac_scan_chain *c = chain_at(&s, 0x100);
	CHECK(c && c->root == ADAC_ROOT_TASK && owner(&s, c) == 0xa000 && c->links == 3 && c->end == ADAC_SCAN_END_COMPLETE);
	c = chain_at(&s, 0x200);
	CHECK(c && c->root == ADAC_ROOT_UNOWNED && owner(&s, c) == 0 && c->links == 2 && c->end == ADAC_SCAN_END_COMPLETE);
	c = chain_at(&s, 0x300);
	CHECK(c && c->root == ADAC_ROOT_STALE && c->links == 1 && c->end == ADAC_SCAN_END_MERGED && end_addr(&s, c) == 0x110);
	c = chain_at(&s, 0x400);
	CHECK(c && c->root == ADAC_ROOT_UNOWNED && c->links == 2 && c->end == ADAC_SCAN_END_CYCLE && end_addr(&s, c) == 0x400);
	c = chain_at(&s, 0x500);
	CHECK(c && c->root == ADAC_ROOT_TASK && c->links == 1 && c->end == ADAC_SCAN_END_MISSING && end_addr(&s, c) == 0xdead0);
	c = chain_at(&s, 0x600);
	CHECK(c && c->root == ADAC_ROOT_TASK && c->links == 2 && c->end == ADAC_SCAN_END_CYCLE);
	CHECK(s.chains[0].root == ADAC_ROOT_TASK); /* task chains before the others */
	/* Every continuation belongs to exactly one chain; each Next is linked to its record. */
	uint32_t head = adac_scan_find_cont(&s, 0x100), linked = adac_scan_find_cont(&s, 0x110);
	for (size_t i = 0; i < s.cont_count; i++) {
		CHECK(s.conts[i].chain != ADAC_SCAN_NONE);
		CHECK(s.conts[i].next_index != head); /* nothing points to a head */
	}
	CHECK(head != ADAC_SCAN_NONE && linked != ADAC_SCAN_NONE && s.conts[head].next_index == linked);
	/* Each Next as it was read: a record's address, null, or kept apart (stray). */
	CHECK_EQ_U64(adac_scan_cont_next(&s, head), 0x110);
	CHECK_EQ_U64(adac_scan_cont_next(&s, adac_scan_find_cont(&s, 0x210)), 0);
	uint32_t stray = adac_scan_find_cont(&s, 0x500);
	CHECK(stray != ADAC_SCAN_NONE && s.conts[stray].next_index == ADAC_SCAN_STRAY);
	CHECK_EQ_U64(adac_scan_cont_next(&s, stray), 0xdead0);
	CHECK_EQ_U64(s.stray_count, 1);
	/* Built again (as a caller may): the same chains from the linked records. */
	struct adac_error again = {0};
	CHECK(adac_async_scan_chains(&s, &again) == 0);
	CHECK_EQ_U64(s.chain_count, 6);
	c = chain_at(&s, 0x500);
	CHECK(c && c->end == ADAC_SCAN_END_MISSING && end_addr(&s, c) == 0xdead0);
	CHECK_EQ_U64(adac_scan_find_cont(&s, 0x105), ADAC_SCAN_NONE);
	CHECK_EQ_U64(s.task_chains[adac_scan_find_task(&s, 0xa300)], ADAC_SCAN_NONE);

	/* The graph as `ps` builds it: the awaiters' chains found, the continuation records dropped. */
	struct adac_async_graph g;
	struct adac_error err = {0};
	size_t conts = s.cont_count;
	CHECK(adac_async_scan_awaiter_chains(&s, &err) == 0);
	adac_async_scan_drop_conts(&s);
	CHECK(s.conts == NULL && s.strays == NULL && s.cont_count == conts);
	CHECK_EQ_U64(adac_scan_find_cont(&s, 0x100), ADAC_SCAN_NONE);
	CHECK(adac_async_scan_chains(&s, &again) == -1 && again.code == ADAC_E_UNSUPPORTED);
	CHECK_EQ_U64(s.chain_count, 6); /* (the chains stay) */
	CHECK(adac_async_graph_link(&s, &g, &err) == 0);
	CHECK(g.task_node == NULL);
	adac_async_scan_drop_awaiters(&s); /* (what `ps` does next: the stacks need them no more) */
	CHECK(s.awaiters == NULL && s.awaiter_chains == NULL && s.task_links == NULL && s.awaiter_count == 0);
	CHECK(adac_async_graph_stacks(&s, &g, &err) == 0);
	/* Stale chains are no nodes; every other chain starts a stack, by head address. */
	char buf[256];
	CHECK_EQ_U64(g.stack_count, 5);
	if (g.stack_count == 5) {
		CHECK_EQ_STR(stack_text(&s, &g, 0, buf, sizeof buf), "c100");
		CHECK_EQ_STR(stack_text(&s, &g, 1, buf, sizeof buf), "c200");
		CHECK_EQ_STR(stack_text(&s, &g, 2, buf, sizeof buf), "c400");
		CHECK_EQ_STR(stack_text(&s, &g, 3, buf, sizeof buf), "c500");
		CHECK_EQ_STR(stack_text(&s, &g, 4, buf, sizeof buf), "c600");
	}
	CHECK_EQ_U64(g.chain_node[chain_at(&s, 0x300) - s.chains], ADAC_SCAN_NONE);
	/* The edges went with the stacks: finding them again is refused, and the stacks stay. */
	CHECK(g.callers == NULL && g.callers_at == NULL && g.marks == NULL);
	CHECK(adac_async_graph_stacks(&s, &g, &again) == -1 && again.code == ADAC_E_UNSUPPORTED);
	CHECK_EQ_U64(g.stack_count, 5);
	adac_async_graph_free(&g);
	adac_async_scan_free(&s);
}

static void test_running(void)
{
	struct heap h = {0};
	/* Thread 42 runs a method whose callers are 0x110 -> 0x120; the continuation it resumed, 0x100,
	 * is still on the heap (stale). Its task 0xa000 is the record's CurrentTask. */
	cont(&h, 0x100, 0x110);
	cont(&h, 0x110, 0x120);
	cont(&h, 0x120, 0);
	task(&h, 0xa000, 0, false);
	awaited_by(&h, 0, 0x900);  /* awaited by a box */
	task(&h, 0x900, 0, true);
	running(&h, 0x110, 0xa000, 42);
	/* A suspended chain at a lower address. */
	cont(&h, 0x050, 0);
	task(&h, 0x9000, 0x050, false);
	struct adac_async_scan s = make_scan(&h);
	const struct adac_scan_chain *c = chain_at(&s, 0x110);
	CHECK(c && c->root == ADAC_ROOT_RUNNING && owner(&s, c) == 0xa000 && c->links == 2);
	CHECK(c == &s.chains[0] && s.running[0].os_tid == 42 && s.running[0].dispatcher == 0x7ff000 + 42);
	CHECK(s.chains[0].root == ADAC_ROOT_RUNNING);
	c = chain_at(&s, 0x100);
	CHECK(c && c->root == ADAC_ROOT_STALE);
	CHECK_EQ_U64(s.task_chains[adac_scan_find_task(&s, 0xa000)], 0);
	struct adac_async_graph g;
	struct adac_error err = {0};
	CHECK(graph_as_ps(&s, &g, &err) == 0);
	char buf[256];
	CHECK_EQ_U64(g.stack_count, 2);
	if (g.stack_count == 2) {
		/* Running first, and its task's awaiter (the box) is its caller. */
		CHECK_EQ_STR(stack_text(&s, &g, 0, buf, sizeof buf), "c110,b900");
		CHECK_EQ_STR(stack_text(&s, &g, 1, buf, sizeof buf), "c50");
	}
	adac_async_graph_free(&g);
	adac_async_scan_free(&s);
}

/* targets/dotnet/mixed as the .NET 11.0.0 runtime lays it out (addresses shortened). */
static void test_stitching(void)
{
	struct heap h = {0};
	/* ra-classic-ra: gate 0x2868 -> RaLeaf chain (RTC 0x2b58 -> 0x2c10), task 0x2c60 -> box 0x3328
	 * (ClassicMiddle) -> RaTop chain (RTC 0x3378 -> thunk 0x33c0 -> 0x3408), task 0x3460. */
	cont(&h, 0x2b58, 0x2c10);
	cont(&h, 0x2c10, 0);
	cont(&h, 0x3378, 0x33c0);
	cont(&h, 0x33c0, 0x3408);
	cont(&h, 0x3408, 0);
	awaited_by(&h, task(&h, 0x2868, 0, false), 0x2b58);
	awaited_by(&h, task(&h, 0x2c60, 0x2b58, false), 0x3328);
	awaited_by(&h, task(&h, 0x3328, 0, true), 0x3378);
	task(&h, 0x3460, 0x3378, false);
	/* classic-ra-classic: gate 0x3530 -> box 0x3648 (ClassicLeaf) -> RaMiddle chain (RTC 0x3698 ->
	 * 0x36e0), task 0x3738 -> box 0x37b8 (ClassicTop). */
	cont(&h, 0x3698, 0x36e0);
	cont(&h, 0x36e0, 0);
	awaited_by(&h, task(&h, 0x3530, 0, false), 0x3648);
	awaited_by(&h, task(&h, 0x3648, 0, true), 0x3698);
	awaited_by(&h, task(&h, 0x3738, 0x3698, false), 0x37b8);
	task(&h, 0x37b8, 0, true);
	/* The thread's sentinel. */
	cont(&h, 0x2b30, 0);
	struct adac_async_scan s = make_scan(&h);
	struct adac_async_graph g;
	struct adac_error err = {0};
	CHECK(graph_as_ps(&s, &g, &err) == 0);
	char buf[256];
	CHECK_EQ_U64(g.stack_count, 3);
	if (g.stack_count == 3) {
		CHECK_EQ_STR(stack_text(&s, &g, 0, buf, sizeof buf), "c2b30");
		CHECK_EQ_STR(stack_text(&s, &g, 1, buf, sizeof buf), "c2b58,b3328,c3378");
		CHECK_EQ_U64(stack_awaits(&s, &g, 1), 0x2868);
		CHECK_EQ_STR(stack_text(&s, &g, 2, buf, sizeof buf), "b3648,c3698,b37b8");
		CHECK_EQ_U64(stack_awaits(&s, &g, 2), 0x3530);
	}
	adac_async_graph_free(&g);
	adac_async_scan_free(&s);
}

static void test_fan(void)
{
	struct heap h = {0};
	/* Fan-in: chain A's task is awaited by two boxes (a List<object> of continuations). */
	cont(&h, 0x100, 0);
	size_t ta = task(&h, 0xa000, 0x100, false);
	awaited_by(&h, ta, 0xb100);
	awaited_by(&h, ta, 0xb200);
	task(&h, 0xb100, 0, true);
	task(&h, 0xb200, 0, true);
	/* WhenAll: chains C and D are awaited by a promise P, which box E awaits. */
	cont(&h, 0x300, 0);
	cont(&h, 0x400, 0);
	awaited_by(&h, task(&h, 0xc000, 0x300, false), 0xd000);
	awaited_by(&h, task(&h, 0xc100, 0x400, false), 0xd000);
	awaited_by(&h, task(&h, 0xd000, 0, false), 0xe000);
	task(&h, 0xe000, 0, true);
	/* A deadlock: box F awaits box G, which awaits F. */
	awaited_by(&h, task(&h, 0xf000, 0, true), 0xf100);
	awaited_by(&h, task(&h, 0xf100, 0, true), 0xf000);
	/* An awaiter that is nothing we know (e.g. a custom ITaskCompletionAction). */
	cont(&h, 0x500, 0);
	awaited_by(&h, task(&h, 0xc500, 0x500, false), 0x77777);
	/* A chain awaited by box H, in a deadlock with box I: the cycle closes at H, not at the start. */
	cont(&h, 0x700, 0);
	awaited_by(&h, task(&h, 0xa700, 0x700, false), 0xf200);
	awaited_by(&h, task(&h, 0xf200, 0, true), 0xf300);
	awaited_by(&h, task(&h, 0xf300, 0, true), 0xf200);
	struct adac_async_scan s = make_scan(&h);
	struct adac_async_graph g;
	struct adac_error err = {0};
	CHECK(graph_as_ps(&s, &g, &err) == 0);
	char buf[256];
	CHECK_EQ_U64(g.stack_count, 7);
	if (g.stack_count == 7) {
		CHECK_EQ_STR(stack_text(&s, &g, 0, buf, sizeof buf), "c100,bb100");
		CHECK_EQ_STR(stack_text(&s, &g, 1, buf, sizeof buf), "c100,bb200");
		CHECK_EQ_STR(stack_text(&s, &g, 2, buf, sizeof buf), "c300,td000,be000");
		CHECK_EQ_STR(stack_text(&s, &g, 3, buf, sizeof buf), "c400,td000,be000");
		CHECK_EQ_STR(stack_text(&s, &g, 4, buf, sizeof buf), "c500");
		CHECK_EQ_STR(stack_text(&s, &g, 5, buf, sizeof buf), "c700,bf200,bf300 cycle at 1");
		CHECK_EQ_STR(stack_text(&s, &g, 6, buf, sizeof buf), "bf000,bf100 cycle at 0");
	}
	adac_async_graph_free(&g);
	adac_async_scan_free(&s);
}

static void test_empty(void)
{
	struct heap h = {0};
	struct adac_async_scan s = make_scan(&h);
	struct adac_async_graph g;
	struct adac_error err = {0};
	CHECK(graph_as_ps(&s, &g, &err) == 0);
	CHECK_EQ_U64(s.chain_count, 0);
	CHECK_EQ_U64(g.stack_count, 0);
	adac_async_graph_free(&g);
	adac_async_scan_free(&s);
}

static void test_status(void)
{
	CHECK_EQ_STR(adac_task_status(0), "Created");
	CHECK_EQ_STR(adac_task_status(0x2000c00), "WaitingForActivation");
	CHECK_EQ_STR(adac_task_status(ADAC_TASK_STARTED), "WaitingToRun");
	CHECK_EQ_STR(adac_task_status(ADAC_TASK_STARTED | ADAC_TASK_DELEGATE_INVOKED), "Running");
	CHECK_EQ_STR(adac_task_status(ADAC_TASK_WAITING_ON_CHILDREN | ADAC_TASK_DELEGATE_INVOKED),
	             "WaitingForChildrenToComplete");
	CHECK_EQ_STR(adac_task_status(ADAC_TASK_RAN_TO_COMPLETION | ADAC_TASK_STARTED), "RanToCompletion");
	CHECK_EQ_STR(adac_task_status(ADAC_TASK_CANCELED | ADAC_TASK_RAN_TO_COMPLETION), "Canceled");
	CHECK_EQ_STR(adac_task_status(ADAC_TASK_FAULTED | ADAC_TASK_CANCELED), "Faulted");
	char buf[256];
	CHECK_EQ_STR(adac_task_flags_text(0x2000c00, buf, sizeof buf), "");
	CHECK_EQ_STR(adac_task_flags_text(ADAC_TASK_STARTED | ADAC_TASK_DELEGATE_INVOKED | ADAC_TASK_COMPLETION_RESERVED, buf,
	                                  sizeof buf),
	             "Started|DelegateInvoked|CompletionReserved");
	char small[10];
	CHECK_EQ_STR(adac_task_flags_text(ADAC_TASK_STARTED | ADAC_TASK_FAULTED, small, sizeof small), "Started");
	CHECK_EQ_STR(adac_chain_root_name(ADAC_ROOT_STALE), "stale");
}

/* The address index (buckets over the sorted records): records bunched at two far-apart places
 * (regions), addresses below, between and above them, and one bucket holding most records. */
static void test_index(void)
{
	enum { N = 5000 };
	struct adac_async_scan s;
	memset(&s, 0, sizeof s);
	s.conts = calloc(N, sizeof *s.conts);
	CHECK(s.conts != NULL);
	if (!s.conts)
		return;
	for (size_t i = 0; i < N; i++) {
		/* 4,000 records 0x30 apart from 0x7f0000001000, then 1,000 at 0x7f8000000000 + 0x18 * i. */
		uint64_t a = i < 4000 ? 0x7f0000001000ull + 0x30 * i : 0x7f8000000000ull + 0x18 * (i - 4000);
		s.conts[i] = (struct adac_scan_cont){.addr = a};
	}
	s.cont_count = N;
	struct adac_error err = {0};
	CHECK(adac_async_scan_chains(&s, &err) == 0);
	bool all = true;
	for (size_t i = 0; i < N; i++)
		all = all && adac_scan_find_cont(&s, s.conts[i].addr) == i;
	CHECK(all);
	CHECK(adac_scan_find_cont(&s, 0x7f0000001000ull + 0x30 * 17 + 8) == ADAC_SCAN_NONE);  /* inside an object */
	CHECK(adac_scan_find_cont(&s, 0x7f0000000ff8ull) == ADAC_SCAN_NONE);             /* below them all */
	CHECK(adac_scan_find_cont(&s, 0x7f4000000000ull) == ADAC_SCAN_NONE);             /* between the two */
	CHECK(adac_scan_find_cont(&s, 0x7f8000000000ull + 0x18 * 1000) == ADAC_SCAN_NONE); /* above them all */
	CHECK(adac_scan_find_cont(&s, 0) == ADAC_SCAN_NONE);
	CHECK(s.chain_count == N);   /* each alone: nothing points to it */
	adac_async_scan_free(&s);
}

int main(void)
{
	test_index();
	test_chains();
	test_running();
	test_stitching();
	test_fan();
	test_empty();
	test_status();
	return check_report("test_async_scan");
}
