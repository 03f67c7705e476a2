/* cmd_bt.c - `bt`: logical async stacks. For threads: the physical frames, then the async frames of
 * the chains the thread is running (from its dispatcher records). For an address: the chain of a
 * Continuation, or of a task whose state object is a Continuation. */
#include <jansson.h>
#include <string.h>

#include "async/continuation.h"
#include "async/lock_wait.h"
#include "async/pending.h"
#include "base/json.h"
#include "base/limits.h"
#include "commands/command.h"
#include "runtime/runtime.h"
#include "types/locks.h"
#include "view/backtrace_view.h"
#include "view/chain_view.h"
#include "view/lock_view.h"
#include "view/pending_list.h"
#include "view/pending_view.h"
#include "view/wait_chain.h"

#define DEFAULT_DEPTH 10000u   /* chain links walked unless --depth says otherwise */

const struct adac_command_info adac_cmd_bt_info = {
	.name = "bt",
	.summary = "Show async backtraces: a thread's frames followed by the async frames it is running, or the "
	           "chain of a continuation or task",
	.syntax = "[--all | --thread <id>] [--address <addr>]... [-c <count>] [--depth <n>] [--locals | --internals] [--json]",
	.details =
		"Async frames are the logical callers of the code a thread runs: suspended async\n"
		"methods (runtime-async Continuation objects linked callee -> caller). Each is\n"
		"shown as\n"
		"  async #N: <address> <module>`<method> + <offset> at <file>:<line> [state <n>]\n"
		"with the method and offset of its suspension point (ResumeInfo.DiagnosticIP),\n"
		"the source line of its await, and its suspension index. Task and ValueTask\n"
		"continuations are not frames: the first one is shown as what the chain is\n"
		"awaiting (with the awaited task's status). Shared generic code is named by the\n"
		"instantiation it runs for when the continuation saved it. Problems are shown on\n"
		"the frame they affect.\n"
		"\n"
		"Options:\n"
		"  -a, --all             Every thread (the CLI's default).\n"
		"  -t, --thread <id>     One thread: its LLDB index in LLDB, its OS thread id in\n"
		"                        the CLI.\n"
		"  -A, --address <addr>  The chain starting at a Continuation, or owned by a\n"
		"                        task (its m_stateObject); any other object `ps` prints\n"
		"                        (classic state machine box, awaited task or source)\n"
		"                        and a chain joined with classic code: the logical\n"
		"                        stacks holding it, as `ps --address` shows them; may\n"
		"                        be repeated.\n"
		"  -c, --count <n>       Show at most n frames per list (0: all).\n"
		"  -d, --depth <n>       Walk at most n links per chain (default 10000).\n"
		"  -v, --locals          Show the awaited locals under each async frame, and the\n"
		"                        parameters and locals of managed physical frames\n"
		"                        (like SOS clrstack -a): the source's variables; a\n"
		"                        last line counts the others.\n"
		"  -I, --internals       --locals with the compiler's temporaries (V_<n>) and\n"
		"                        the continuation's internals ([Flags], [result], ...).\n"
		"  -j, --json            Print JSON: per chain the raw IP array and the resolved\n"
		"                        frames.\n"
		"\n"
		"A thread blocked synchronously on a task (a frame of Task.SpinThenBlockingWait:\n"
		"Task.Wait(), .Result, GetAwaiter().GetResult()) is followed by \"blocked on:\n"
		"task <addr>\" and the stacks of that task, as `ps` prints them (the heap is\n"
		"scanned then; the waiter's address is found in this thread's stack). A thread\n"
		"waiting to enter a lock (lock, Monitor.Enter, Lock.Enter: its blocking record,\n"
		"which the runtime keeps for debuggers, says which) is followed by \"waiting for:\n"
		"<lock>, held by thread tid <T> (...)\" and, when threads wait for each other's\n"
		"locks, the \"deadlock:\" line `locks` prints, or when the holder waits\n"
		"synchronously for a task whose stack this thread runs, \"deadlock: thread tid\n"
		"<T> (...) waits for <lock> held by thread tid <H> (...), which waits\n"
		"synchronously for task <addr> (...), whose stack runs on thread tid <T>\" (the\n"
		"heap is scanned then); in no deadlock, by what the holder waits for in turn,\n"
		"down to the root cause, as `report` shows it: \"then: thread tid <H> (...):\n"
		"waits synchronously for task <addr> (...)\", \"then: task <addr> is suspended:\n"
		"chain #N, <frame> at <file>:<line>, awaiting ...\". A thread in Monitor.Wait is\n"
		"followed by \"in Monitor.Wait: waiting for a pulse on <object> (Monitor), ...\"\n"
		"(and, when a thread holds the Monitor, by what it waits for in turn), and one\n"
		"in ManualResetEventSlim.Wait by \"in ManualResetEventSlim.Wait on <address>\".\n"
		"\n"
		"Physical frames come from the debugger's (or libdw's) unwinder; managed frames\n"
		"it cannot unwind (no frame pointer, stopped in a prologue) are recovered from\n"
		"the runtime's own unwind info and inserted, so frame numbers can differ from a\n"
		"plain `bt` (JSON marks them with \"unwound_by\": \"asyncdac\").\n",
};

struct bt_opts {
	bool all, json;
	bool has_thread;
	uint64_t thread;
	uint64_t addresses[ADAC_MAX_ADDRESS_ARGS];
	size_t naddresses;
	struct adac_bt_opts view;
};

static int parse(int argc, char **argv, struct bt_opts *o, struct adac_error *err)
{
	memset(o, 0, sizeof *o);
	uint64_t count = 0, depth = DEFAULT_DEPTH;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		if (adac_opt_is(a, "-a", "--all") || strcmp(a, "all") == 0) {
			o->all = true;
		} else if (adac_opt_is(a, "-v", "--locals")) {
			o->view.flags |= ADAC_VIEW_LOCALS;
		} else if (adac_opt_is(a, "-I", "--internals")) {
			o->view.flags |= ADAC_VIEW_LOCALS | ADAC_VIEW_INTERNALS;
		} else if (adac_opt_is(a, "-j", "--json")) {
			o->json = true;
		} else if (adac_opt_is(a, "-t", "--thread")) {
			if (adac_opt_value("bt", argc, argv, &i, &v, err) || adac_opt_u64("bt", a, v, &o->thread, err))
				return -1;
			o->has_thread = true;
		} else if (adac_opt_is(a, "-A", "--address")) {
			if (o->naddresses >= ADAC_MAX_ADDRESS_ARGS)
				return adac_fail(err, ADAC_E_USAGE, 0, "at most %u addresses", ADAC_MAX_ADDRESS_ARGS);
			if (adac_opt_value("bt", argc, argv, &i, &v, err) ||
			    adac_opt_u64("bt", a, v, &o->addresses[o->naddresses++], err))
				return -1;
		} else if (adac_opt_is(a, "-c", "--count")) {
			if (adac_opt_value("bt", argc, argv, &i, &v, err) || adac_opt_u64("bt", a, v, &count, err))
				return -1;
		} else if (adac_opt_is(a, "-d", "--depth")) {
			if (adac_opt_value("bt", argc, argv, &i, &v, err) || adac_opt_u64("bt", a, v, &depth, err))
				return -1;
			if (depth == 0 || depth > ADAC_MAX_CHAIN_DEPTH)
				return adac_fail(err, ADAC_E_USAGE, 0, "--depth must be between 1 and %u", ADAC_MAX_CHAIN_DEPTH);
		} else {
			return adac_opt_unknown("bt", a, err);
		}
	}
	if (o->all && o->has_thread)
		return adac_fail(err, ADAC_E_USAGE, 0, "give either --all or --thread, not both");
	o->view.count = (size_t)count;
	o->view.depth = (size_t)depth;
	return 0;
}

/* The heap's pending stacks, collected on the first address. */
struct stacks {
	bool collected;
	bool interrupted;      /* the user interrupted a scan a thread's lines asked for: bt fails */
	struct adac_pending p;
};

/* Scans the stacks once, for a thread's lines; false when it failed (interrupted, or e says why). */
static bool collect(struct adac_runtime *rt, struct stacks *s, struct adac_out *out, struct adac_error *e)
{
	if (!s->collected && adac_pending_collect(rt, out, 0, &s->p, e)) {
		s->interrupted |= e->code == ADAC_E_INTERRUPTED;
		return false;
	}
	s->collected = true;
	return true;
}

/* The logical stacks holding the object at addr, as `ps --address` lists them: printed when `print`,
 * else only counted; *listed of them, with *classic state machine frames between them. */
static int stacks_of(struct adac_runtime *rt, uint64_t addr, struct stacks *s, bool print, const struct bt_opts *o,
                     struct adac_out *out, json_t *chains_json, size_t *listed, size_t *classic,
                     struct adac_error *err)
{
	*listed = *classic = 0;
	if (!s->collected) {
		if (adac_pending_collect(rt, out, 0, &s->p, err))
			return -1;
		s->collected = true;
	}
	struct adac_pending_list l = {0};
	struct adac_pending_filter filter = {.addresses = &addr, .naddresses = 1};
	int rc = adac_pending_list_init(&l, &s->p, &filter, out, err);
	if (rc == 0 && print) {
		rc = adac_pending_print_stacks(&l, o->view.flags & ADAC_VIEW_LOCALS, out, o->json ? chains_json : NULL, err);
	} else if (rc == 0) {
		struct adac_pending_stack st;
		while ((rc = adac_pending_list_next(&l, &st, err)) > 0)
			for (size_t i = 0; i < st.stack->count; i++)
				*classic += st.segs[i].node->kind == ADAC_NODE_BOX;
	}
	*listed = l.listed;
	adac_pending_list_free(&l);
	return rc < 0 ? -1 : 0;
}

/* The chain of a Continuation, or of the task owning one. Anything else `ps` prints (a classic state
 * machine box, an awaited task or source), and a chain `ps` joins with classic state machines, is
 * shown as `ps` shows the stacks holding it. (Runtime-async chains joined through the tasks they
 * await keep bt's own view: its awaiting line names the next task.) */
static int show_address(struct adac_runtime *rt, uint64_t addr, struct stacks *s, const struct bt_opts *o,
                        struct adac_out *out, json_t *chains_json, struct adac_error *err)
{
	uint64_t head = 0, task = 0;
	struct adac_error not_head = {0};
	bool chain = adac_chain_head_of(rt, addr, &head, &task, &not_head) == 0;
	if (!chain && not_head.code != ADAC_E_BAD_ARG)
		return adac_error_copy(err, &not_head);
	size_t listed, classic;
	struct adac_error no_stacks = {0};
	if (stacks_of(rt, addr, s, false, o, out, chains_json, &listed, &classic, &no_stacks)) {
		/* No heap to scan (a runtime without the GC contract): what the object itself says. */
		if (!chain)
			return adac_error_copy(err, &not_head);
		listed = classic = 0;
	}
	if (!chain && !listed)
		return adac_fail(err, ADAC_E_BAD_ARG, addr, "%s, and no pending async stack holds it (see `ps`)", not_head.msg);
	if (!chain || classic)
		return stacks_of(rt, addr, s, true, o, out, chains_json, &listed, &classic, err);
	struct adac_resolved_chain v;
	if (adac_resolved_chain_build(rt, head, o->view.depth, NULL, &v, err))
		return -1;
	v.task = task;
	if (o->json)
		json_array_append_new(chains_json, adac_chain_view_json(rt, &v, o->view.count, o->view.flags));
	else
		adac_bt_chain_print(rt, &v, head, &o->view, out);
	adac_resolved_chain_free(&v);
	return 0;
}

/* After the frames of a thread blocked in a synchronous wait: the task it waits for and that task's
 * stacks (the heap is scanned on the first such thread). */
struct blocked_ctx {
	struct adac_runtime *rt;
	struct stacks *s;
	unsigned flags;
};

static void blocked(void *ctx, const struct adac_thread *th, struct adac_out *out)
{
	struct blocked_ctx *b = ctx;
	struct adac_error e = {0};
	if (!collect(b->rt, b->s, out, &e)) {
		adac_print(out, "  blocked on: a task (a synchronous wait), not found: %s\n", e.msg);
		return;
	}
	if (adac_pending_print_thread_waits(&b->s->p, th->tid, b->flags, out, &e)) {
		b->s->interrupted |= e.code == ADAC_E_INTERRUPTED;
		adac_print(out, "  blocked on: error: %s\n", e.msg);
	}
}

/* After the frames of a thread waiting to enter a lock: which, held by whom (the locks are found on
 * the first such thread). */
struct lock_ctx {
	struct adac_runtime *rt;
	struct stacks *s;
	bool found, failed;
	struct adac_held_locks locks;
	struct adac_lock_waits waits;
	bool chained;                  /* the blocked threads, made on the first wait chain */
	struct adac_blocked_threads blocked;
};

/* The holder of the lock thread tid waits to enter, or of the Monitor it waits on for a pulse; 0 when
 * none. */
static uint64_t holder_of(const struct lock_ctx *c, uint64_t tid)
{
	const struct adac_lock_wait *w = adac_lock_wait_of(&c->waits, tid);
	const struct adac_monitor_wait *m = w ? NULL : adac_monitor_wait_of(&c->waits, tid);
	return w ? c->locks.locks[w->lock].owner_tid : m && m->held ? c->locks.locks[m->lock].owner_tid : 0;
}

/* Whether a thread down the holders from thread tid on waits synchronously for a task (Task.Wait()
 * under a lock): what it waits for in turn needs the stacks. */
static bool holders_wait_on_task(const struct lock_ctx *c, uint64_t tid)
{
	for (size_t k = 0; k < ADAC_MAX_WAIT_CYCLE; k++) {
		uint64_t holder = holder_of(c, tid);
		if (!holder)
			return k > 0 && adac_condition_wait_on_task(&c->locks, adac_condition_wait_of(&c->waits, tid));
		tid = holder;
	}
	return false;
}

/* "  deadlock: ..." when the holder of the lock thread tid waits for waits synchronously for a task
 * (Task.Wait() under a lock), whose stack may run on this thread: the stacks are scanned then.
 * Whether it printed one. */
static bool wait_cycle(struct lock_ctx *c, uint64_t tid, struct adac_out *out)
{
	const struct adac_lock_wait *w = adac_lock_wait_of(&c->waits, tid);
	const struct adac_condition_wait *holder =
		w ? adac_condition_wait_of(&c->waits, c->locks.locks[w->lock].owner_tid) : NULL;
	if (!adac_condition_wait_on_task(&c->locks, holder))
		return false;
	struct adac_error e = {0};
	return collect(c->rt, c->s, out, &e) && adac_pending_print_thread_wait_cycle(&c->s->p, tid, out);
}

/* After the line of a thread waiting for a lock (or in Monitor.Wait on a held Monitor), what the
 * holder waits for in turn, down to the root cause (as report's "== Blocked threads"): "  then:
 * thread tid <H> (...): waits synchronously for task ...", "  then: task 0x... is suspended: chain
 * #N, ...". */
static void wait_chain(struct lock_ctx *c, uint64_t tid, struct adac_out *out)
{
	if (!holder_of(c, tid))
		return;
	struct adac_error e = {0};
	bool tasks = holders_wait_on_task(c, tid);
	if (tasks && !collect(c->rt, c->s, out, &e))
		return;
	if (c->chained && tasks && !c->blocked.p) { /* (made without the stacks' synchronous waits) */
		adac_blocked_threads_free(&c->blocked);
		c->chained = false;
	}
	if (!c->chained) {
		struct adac_pending *p = c->s->collected ? &c->s->p : NULL;
		if (adac_blocked_threads_find(c->rt, p, &c->locks, &c->waits, out, &c->blocked, &e))
			return;
		c->chained = true;
		if (adac_blocked_threads_where(&c->blocked, &e)) {
			c->s->interrupted |= e.code == ADAC_E_INTERRUPTED;
			return;
		}
		if (adac_failed(&c->blocked.where_err))
			adac_print(out, "  warning: " ADAC_WHERE_UNKNOWN "%s\n", c->blocked.where_err.msg);
	}
	const struct adac_blocked *b = adac_blocked_thread(&c->blocked, tid);
	if (b)
		adac_wait_chain_print(&c->blocked, b, 1);
}

static void waits_lock(void *ctx, const struct adac_thread *th, struct adac_out *out)
{
	struct lock_ctx *c = ctx;
	struct adac_error e = {0};
	if (!adac_thread_blocked(c->rt, th->tid))
		return; /* (no wait recorded: spinning before it) */
	if (!c->found && !c->failed) {
		const struct adac_gc_walk_progress progress = {out, "finding locks"};
		if (adac_held_locks_find(c->rt, &progress, &c->locks, &e)) {
			c->failed = true;
		} else if (adac_lock_waits_find(c->rt, &c->locks, &c->waits, &e)) {
			adac_held_locks_free(&c->locks);
			c->failed = true;
		} else {
			c->found = true;
		}
		if (c->failed) {
			c->s->interrupted |= e.code == ADAC_E_INTERRUPTED;
			adac_print(out, "  waiting for: a lock, not found: %s\n", e.msg);
			return;
		}
	}
	if (c->found) {
		/* (A deadlock's line says where the wait chain goes: it comes round.) */
		bool deadlock = adac_lock_wait_print(c->rt, &c->locks, &c->waits, th->tid, out);
		if (!deadlock && !wait_cycle(c, th->tid, out))
			wait_chain(c, th->tid, out);
	}
}

/* "note: ..." after threads that run no chain: how many stacks `ps` lists, nothing when none or
 * when the heap cannot be scanned. */
static void pending_hint(struct adac_runtime *rt, struct stacks *s, bool any_thread, struct adac_out *out)
{
	struct adac_error e = {0};
	if (!collect(rt, s, out, &e))
		return;
	struct adac_pending_list l = {0};
	struct adac_pending_filter all = {0};
	struct adac_pending_stack st;
	if (adac_pending_list_init(&l, &s->p, &all, out, &e) == 0) {
		int more;
		while ((more = adac_pending_list_next(&l, &st, &e)) > 0)
			;
		s->interrupted |= more < 0 && e.code == ADAC_E_INTERRUPTED;
		if (more == 0 && l.listed)
			adac_print(out, "\nnote: no async chain is running on %s; %zu async %s suspended: `ps` lists %s, "
			           "`bt --address <task>` shows one\n", any_thread ? "any thread" : "this thread", l.listed,
			           l.listed == 1 ? "stack is" : "stacks are", l.listed == 1 ? "it" : "them");
	}
	adac_pending_list_free(&l);
}

int adac_cmd_bt(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                struct adac_error *err)
{
	struct bt_opts o;
	if (parse(argc, argv, &o, err))
		return -1;
	struct adac_runtime *rt = adac_runtime_acquire(t, err);
	if (!rt)
		return -1;
	int rc = 0;
	json_t *root = o.json ? json_object() : NULL;
	json_t *threads_json = o.json ? json_array() : NULL, *chains_json = o.json ? json_array() : NULL;

	struct stacks stacks = {0};
	for (size_t i = 0; i < o.naddresses && rc == 0; i++) {
		if (i && !o.json)
			adac_print(out, "\n");
		rc = show_address(rt, o.addresses[i], &stacks, &o, out, chains_json, err);
	}
	/* Threads: the ones asked for; by default the selected one (LLDB) or all (CLI). */
	bool want_threads = o.all || o.has_thread || o.naddresses == 0;
	const struct adac_thread *threads;
	size_t n = 0;
	if (rc == 0 && want_threads && adac_target_threads(t, &threads, &n, err))
		rc = -1;
	/* LLDB's selected thread, which alone is shown by default; without LLDB every thread is shown
	 * and the marked one is the core's signalled thread, else the first. */
	uint64_t selected = fe == ADAC_FRONTEND_LLDB ? adac_target_selected_thread(t) : 0;
	uint64_t marked = selected ? selected : adac_target_selected_thread(t);
	if (!marked && n)
		marked = threads[0].tid;
	bool any = false;
	size_t running = 0;
	struct blocked_ctx bc = {rt, &stacks, o.view.flags & ADAC_VIEW_LOCALS};
	o.view.blocked = blocked;
	o.view.blocked_ctx = &bc;
	struct lock_ctx lc = {.rt = rt, .s = &stacks};
	o.view.waits_lock = waits_lock;
	o.view.waits_lock_ctx = &lc;
	for (size_t i = 0; rc == 0 && want_threads && i < n; i++) {
		const struct adac_thread *th = &threads[i];
		bool wanted = o.has_thread ? adac_opt_thread_id(fe, th) == o.thread : o.all || !selected || th->tid == selected;
		if (!wanted)
			continue;
		if (any && !o.json)
			adac_print(out, "\n");
		any = true;
		if (o.json)
			json_array_append_new(threads_json, adac_bt_thread_json(rt, th, &o.view));
		else
			running += adac_bt_thread_print(rt, th, th->tid == marked, &o.view, out);
	}
	if (rc == 0 && o.has_thread && !any)
		rc = adac_opt_no_thread(fe, o.thread, err);
	/* A hung process: every chain suspended, none on the threads shown. Say where they are. */
	if (rc == 0 && any && !running && !o.json && !o.naddresses)
		pending_hint(rt, &stacks, o.all || (!o.has_thread && !selected), out);
	if (rc == 0 && stacks.interrupted)
		rc = adac_fail(err, ADAC_E_INTERRUPTED, 0, "interrupted");
	if (o.json) {
		json_object_set_new(root, "threads", threads_json);
		json_object_set_new(root, "chains", chains_json);
		if (rc == 0)
			rc = adac_json_print_document(out, "bt", root, err);
		else
			json_decref(root);
	}
	if (stacks.collected)
		adac_pending_free(&stacks.p);
	if (lc.chained)
		adac_blocked_threads_free(&lc.blocked);
	if (lc.found) {
		adac_lock_waits_free(&lc.waits);
		adac_held_locks_free(&lc.locks);
	}
	adac_runtime_release(rt);
	return rc;
}
