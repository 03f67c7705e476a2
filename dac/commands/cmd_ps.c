/* cmd_ps.c - `ps`: every pending async operation of the process as logical stacks
 * (async/pending.h), listed one block per stack (view/pending_view.h), grouped or counted
 * (view/stack_groups.h). */
#include <string.h>
#include <strings.h>

#include "async/pending.h"
#include "base/limits.h"
#include "commands/command.h"
#include "runtime/runtime.h"
#include "view/chain_view.h"
#include "view/pending_jsonl.h"
#include "view/pending_list.h"
#include "view/pending_view.h"
#include "view/stack_groups.h"

const struct adac_command_info adac_cmd_ps_info = {
	.name = "ps",
	.summary = "List every pending async operation as a logical stack (runtime-async chains and classic "
	           "state machines, suspended or running)",
	.syntax = "[--coalesce | --format tree|folded|dot | --stats] [--method <text>] [--type <text>] [--status <status>] "
	          "[--mt <MethodTable>] [--address <addr>]... [--locals | --internals] [--completed] [--json | --jsonl [--timings]]",
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
		"not resumed points at a starved thread pool or scheduler: the awaiting line\n"
		"then gives the thread pool's busy, existing and maximum workers and the work\n"
		"items in its global queues where the runtime exposes them (\"the thread pool is\n"
		"starved\" when work waits and every worker it may have is busy; --stats: a\n"
		"\"Thread pool:\" section). A classic frame shows its state machine box and the\n"
		"line of the await it is suspended at (state N: the N-th await point of MoveNext\n"
		"in the PDB), a task between two frames shows as [task, <status>]. A running\n"
		"chain's innermost method, the one it resumed, runs on the thread: it comes\n"
		"first, from the thread's frames, as\n"
		"    running: <pc> <module>`<method> + <off> at <file>:<line> (...)\n"
		"(`bt` shows what it calls). Continuations nothing owns that lead into a listed\n"
		"chain (left behind after their chain resumed) and sentinels without frames are\n"
		"counted, not listed.\n"
		"\n"
		"A task whose Task.Id was ever read (m_taskId is set) shows it after its status:\n"
		"\"(Task.Id <id>)\"; --json: task.id.\n"
		"\n"
		"N numbers the stacks with frames in the order of the unfiltered listing: a\n"
		"filter (--method, --type, --status, --mt, --address, bt --address) shows the\n"
		"same number for a stack, never renumbers it.\n"
		"\n"
		"After the status, the awaiting line may say what the object is: a promise never\n"
		"completed (a TaskCompletionSource's task), a Task.Delay timer and its due time,\n"
		"Task.WhenAll progress (k of n done), Task.WhenAny, a SemaphoreSlim.WaitAsync\n"
		"waiter, a socket operation (\"socket receive: local <ip>:<port>, remote\n"
		"<ip>:<port>\"; also send, accept, connect; \"pipe receive: fd <n>\" for a pipe\n"
		"read through a socket over its descriptor), a System.IO.Pipelines Pipe read\n"
		"(\"pipe read (System.IO.Pipelines): <n> bytes unread\"), or a completed task\n"
		"whose continuation has not run (with the thread pool's busy, existing and\n"
		"maximum workers and its queued work items).\n"
		"\n"
		"A thread blocked synchronously on a task of a stack (Task.Wait(), .Result,\n"
		"GetAwaiter().GetResult(): sync-over-async) is named after the stack: \"blocked\n"
		"on: task <addr> is waited for synchronously ... by thread tid <T>\". Such a wait\n"
		"registers a Task+SetOnInvokeMres as the task's continuation; the thread is the\n"
		"one in Task.SpinThenBlockingWait whose registers or stack (up to that frame's\n"
		"caller) hold its address. A running chain whose thread waits to enter a lock\n"
		"(lock, Monitor.Enter, Lock.Enter) held by another thread says which: \"waiting\n"
		"for: <lock>, held by thread tid <T> (...)\" (`locks` lists them all); one whose\n"
		"thread waits synchronously for a task says which: \"waiting synchronously for:\n"
		"task <addr> (...)\", and one whose thread waits on a ManualResetEventSlim which:\n"
		"\"in ManualResetEventSlim.Wait on <addr>\".\n"
		"\n"
		"A stack on an await cycle (a deadlock: chain A awaits the task of B, which\n"
		"awaits the task of A, possibly through several) ends in one line naming the\n"
		"cycle: \"deadlock: <method> at <file>:<line> awaits task <address> of <method>\n"
		"at ..., which awaits task <address> of <the first method> at ...\". So does a\n"
		"stack whose task a thread waits for synchronously while the thread the stack\n"
		"runs on waits for that one (sync-over-async under a lock): \"deadlock: thread\n"
		"tid <A> (...) waits synchronously for task <address> (...), whose stack runs on\n"
		"thread tid <B> (...), which waits for <lock> held by thread tid <A> (...)\".\n"
		"\n"
		"Options:\n"
		"  -C, --coalesce        Group identical stacks into a tree, innermost frame\n"
		"                        first, each line with the number of stacks sharing it:\n"
		"                        \"[count] <frame>\" (the first level is what the stacks\n"
		"                        await, by identity: \"awaiting one SemaphoreSlim <addr>\n"
		"                        (current count 0, <n> waiters)\" for the waiters of one\n"
		"                        semaphore, \"awaiting one <type> <addr>\" for an object\n"
		"                        several stacks await, \"awaiting <n> distinct <type>\n"
		"                        (<kind>)\" for objects each awaited by one stack).\n"
		"                        Callers follow at the same indentation; where\n"
		"                        stacks part, each branch starts with \"+- \". A frame\n"
		"                        calling itself is one line ending in \"x <n>\". Frames\n"
		"                        are shown without module and namespaces (--json keeps\n"
		"                        them).\n"
		"  -F, --format <fmt>    tree: as --coalesce; folded: one line per distinct\n"
		"                        stack, outermost frame first, frames ';'-separated,\n"
		"                        the number of stacks last (flamegraph.pl, speedscope,\n"
		"                        inferno); dot: the await graph in Graphviz DOT, a box\n"
		"                        per run of frames the same stacks share, what they\n"
		"                        await on top (as Parallel Stacks draws it).\n"
		"      --svg <file>      CLI only: the graph of --format dot drawn into an SVG\n"
		"                        file by Graphviz's dot.\n"
		"  -s, --stats           Count frames per method and await state, stacks per\n"
		"                        awaited object (by identity, as --coalesce labels\n"
		"                        them) and tasks per type and status.\n"
		"  -m, --method <text>   Only stacks with a frame whose method name contains\n"
		"                        <text> (ignoring case).\n"
		"  -t, --type <text>     Only stacks with an object (task, state machine,\n"
		"                        continuation, awaited object) whose type name contains\n"
		"                        <text>, ignoring case, in any spelling: Task<int>,\n"
		"                        Task<Int32>, System.Threading.Tasks.Task`1 (any\n"
		"                        instantiation) or ...Task`1[[System.Int32, ...]].\n"
		"  -S, --status <status> Only stacks with a task whose Task.Status is <status>\n"
		"                        (WaitingForActivation, RanToCompletion, Faulted, ...).\n"
		"  -M, --mt <addr>       Only stacks with an object whose MethodTable is <addr>\n"
		"                        (task, state machine, continuation, awaited object).\n"
		"  -A, --address <addr>  Only stacks with an object at <addr> (task, state\n"
		"                        machine box or state machine, continuation, awaited\n"
		"                        object, the SemaphoreSlim whose waiter it awaits); may\n"
		"                        be repeated.\n"
		"  -v, --locals          Show the awaited locals under each async frame (the\n"
		"                        source's variables; a last line counts the others).\n"
		"  -I, --internals       --locals with the compiler's temporaries and the\n"
		"                        continuation's internals.\n"
		"      --completed       Also list the completed async tasks still on the heap\n"
		"                        (runtime-async tasks and classic state machine boxes\n"
		"                        that ran to completion, faulted or were canceled), as\n"
		"                        SOS dumpasync --completed does; one more heap pass.\n"
		"  -j, --json            Print JSON (docs/json.md).\n"
		"      --jsonl           Print JSON Lines (docs/json.md): a header line, then\n"
		"                        one line per stack as it is found, each distinct frame\n"
		"                        and type name described once on a line of its own\n"
		"                        before the first stack that refers to it, and a last\n"
		"                        line with the summary. For millions of stacks.\n"
		"      --timings         With --json or --jsonl: the scan's wall times in the\n"
		"                        summary.\n"
		"Filters match any frame or object of a stack (as SOS dumpasync's do) and\n"
		"combine with AND. In the CLI, a scan taking more than a second shows its\n"
		"progress on stderr when stderr is a terminal.\n",
	.values = "--format=tree|folded|dot --status=Created|WaitingForActivation|WaitingToRun|Running|"
	          "WaitingForChildrenToComplete|RanToCompletion|Canceled|Faulted",
};

struct ps_opts {
	bool coalesce, stats, locals, internals, json, jsonl, timings, completed;
	int format;                          /* -1: listing, or an adac_stack_grouping */
	const char *method, *type, *status;
	uint64_t mt;
	uint64_t addresses[ADAC_MAX_ADDRESS_ARGS];
	size_t naddresses;
};

#define STATUSES "Created, WaitingForActivation, WaitingToRun, Running, WaitingForChildrenToComplete, " \
                 "RanToCompletion, Canceled, Faulted"

/* One of Task.Status's names (ignoring case), as adac_task_status spells them. */
static bool known_status(const char *s)
{
	static const char *const names[] = {"Created", "WaitingForActivation", "WaitingToRun", "Running",
	                                    "WaitingForChildrenToComplete", "RanToCompletion", "Canceled", "Faulted"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcasecmp(s, names[i]) == 0)
			return true;
	return false;
}

static int parse(int argc, char **argv, struct ps_opts *o, struct adac_error *err)
{
	memset(o, 0, sizeof *o);
	o->format = -1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		if (adac_opt_is(a, "-C", "--coalesce")) {
			o->coalesce = true;
		} else if (adac_opt_is(a, "-s", "--stats")) {
			o->stats = true;
		} else if (adac_opt_is(a, "-v", "--locals")) {
			o->locals = true;
		} else if (adac_opt_is(a, "-I", "--internals")) {
			o->locals = o->internals = true;
		} else if (adac_opt_is(a, "-j", "--json")) {
			o->json = true;
		} else if (adac_opt_is(a, NULL, "--jsonl")) {
			o->jsonl = true;
		} else if (adac_opt_is(a, "-F", "--format")) {
			if (adac_opt_value("ps", argc, argv, &i, &v, err))
				return -1;
			if (strcmp(v, "tree") == 0)
				o->format = ADAC_GROUP_COALESCE;
			else if (strcmp(v, "folded") == 0)
				o->format = ADAC_GROUP_FOLDED;
			else if (strcmp(v, "dot") == 0)
				o->format = ADAC_GROUP_DOT;
			else
				return adac_fail(err, ADAC_E_USAGE, 0, "invalid value '%s' for option --format of 'ps' (tree, folded or dot)", v);
		} else if (adac_opt_is(a, NULL, "--timings")) {
			o->timings = true;
		} else if (adac_opt_is(a, NULL, "--completed")) {
			o->completed = true;
		} else if (adac_opt_is(a, "-m", "--method")) {
			if (adac_opt_value("ps", argc, argv, &i, &o->method, err))
				return -1;
		} else if (adac_opt_is(a, "-t", "--type")) {
			if (adac_opt_value("ps", argc, argv, &i, &o->type, err))
				return -1;
		} else if (adac_opt_is(a, "-S", "--status")) {
			if (adac_opt_value("ps", argc, argv, &i, &o->status, err))
				return -1;
			if (!known_status(o->status))
				return adac_fail(err, ADAC_E_BAD_ARG, 0, "unknown task status '%s' (want one of %s)", o->status,
				                 STATUSES);
		} else if (adac_opt_is(a, "-M", "--mt")) {
			if (adac_opt_value("ps", argc, argv, &i, &v, err) || adac_opt_u64("ps", a, v, &o->mt, err))
				return -1;
		} else if (adac_opt_is(a, "-A", "--address")) {
			if (o->naddresses >= ADAC_MAX_ADDRESS_ARGS)
				return adac_fail(err, ADAC_E_USAGE, 0, "at most %u addresses", ADAC_MAX_ADDRESS_ARGS);
			if (adac_opt_value("ps", argc, argv, &i, &v, err) ||
			    adac_opt_u64("ps", a, v, &o->addresses[o->naddresses++], err))
				return -1;
		} else {
			return adac_opt_unknown("ps", a, err);
		}
	}
	if (o->coalesce && o->format < 0)
		o->format = ADAC_GROUP_COALESCE;
	if (o->stats && o->format >= 0)
		return adac_fail(err, ADAC_E_USAGE, 0, "give either %s or --stats, not both", o->coalesce ? "--coalesce" : "--format");
	if (o->format > ADAC_GROUP_COALESCE && (o->json || o->locals))
		return adac_fail(err, ADAC_E_USAGE, 0, "--format %s cannot be combined with %s",
		                 o->format == ADAC_GROUP_FOLDED ? "folded" : "dot", o->json ? "--json" : "--locals");
	o->coalesce = o->format == ADAC_GROUP_COALESCE;
	if (o->jsonl && (o->json || o->format >= 0 || o->stats || o->locals))
		return adac_fail(err, ADAC_E_USAGE, 0, "--jsonl lists stacks one per line: it cannot be combined with %s",
		                 o->json ? "--json" : o->coalesce ? "--coalesce" : o->format >= 0 ? "--format" :
		                 o->stats ? "--stats" : "--locals");
	if (o->timings && (!(o->json || o->jsonl) || o->coalesce || o->stats))
		return adac_fail(err, ADAC_E_USAGE, 0, "--timings of 'ps' applies to the JSON listings (--json, --jsonl)");
	if (o->coalesce && o->stats)
		return adac_fail(err, ADAC_E_USAGE, 0, "give either --coalesce or --stats, not both");
	if (o->completed && (o->format >= 0 || o->stats || o->jsonl))
		return adac_fail(err, ADAC_E_USAGE, 0, "--completed applies to the listing, not to %s",
		                 o->stats ? "--stats" : o->coalesce ? "--coalesce" : o->jsonl ? "--jsonl" : "--format");
	if (o->locals && (o->coalesce || o->stats))
		return adac_fail(err, ADAC_E_USAGE, 0, "--locals shows frames one by one: it cannot be combined with %s",
		                 o->coalesce ? "--coalesce" : "--stats");
	return 0;
}

int adac_cmd_ps(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                struct adac_error *err)
{
	(void)fe;
	struct ps_opts o;
	if (parse(argc, argv, &o, err))
		return -1;
	struct adac_runtime *rt = adac_runtime_acquire(t, err);
	if (!rt)
		return -1;
	struct adac_pending p;
	struct adac_pending_list l = {0};
	struct adac_pending_filter filter = {o.method, o.type, o.addresses, o.naddresses, o.status, o.mt};
	unsigned flags = (o.locals ? ADAC_VIEW_LOCALS : 0) | (o.internals ? ADAC_VIEW_INTERNALS : 0);
	int rc = adac_pending_collect(rt, out, ADAC_SCAN_MAY_RUN, &p, err);
	if (rc == 0)
		rc = adac_pending_list_init(&l, &p, &filter, out, err);
	l.timings = o.timings;
	l.completed = o.completed;
	/* Locals read through the listing's runtime: the frames must come from it. */
	if (rc == 0 && !o.locals && !o.internals)
		adac_pending_list_parallel(&l);
	if (rc == 0) {
		if (o.format >= 0 || o.stats)
			rc = adac_stack_groups_print(&l, o.stats ? ADAC_GROUP_STATS : (enum adac_stack_grouping)o.format, o.json,
			                             out, err);
		else if (o.jsonl)
			rc = adac_pending_print_jsonl(&l, out, err);
		else if (o.json)
			rc = adac_pending_print_json(&l, flags, out, err);
		else
			rc = adac_pending_print(&l, flags, out, err);
	}
	if (rc == 0)
		rc = adac_pending_heap_complete(&p, err);
	adac_pending_list_free(&l);
	adac_pending_free(&p);
	adac_runtime_release(rt);
	return rc;
}
