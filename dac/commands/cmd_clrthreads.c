/* cmd_clrthreads.c - `clrthreads`: the managed threads and what each is doing (SOS threads). */
#include "commands/command.h"
#include "view/threads_view.h"

const struct adac_command_info adac_cmd_clrthreads_info = {
	.name = "clrthreads",
	.summary = "List the managed threads (SOS clrthreads): ids, state, GC mode, locks held, name, kind, "
	           "last exception, and what each one is doing",
	.syntax = "[--json]",
	.details =
		"Reads the runtime's thread store: its counts, then one line per managed thread,\n"
		"as SOS clrthreads prints them (the debugger's thread index, the managed id, the\n"
		"OS thread id, the runtime's Thread, its state flags and GC mode), with the\n"
		"number of locks it holds (Locks: Monitors and Locks, as `locks` lists them; \"?\"\n"
		"when they cannot be read), the thread's name (Thread.Name), kind (Finalizer,\n"
		"Threadpool Worker, Background, Unstarted, Dead) and the exception it threw\n"
		"last. Under each live thread, what it is doing:\n"
		"  waiting for: <lock>, held by thread tid <T> (...)\n"
		"    then: ...                     (what that waits for in turn, as report)\n"
		"  running: it is in <CoreLib method>, called from <method> at <file>:<line>\n"
		"  idle: waiting for work          (a thread-pool worker)\n"
		"What a thread waits on is its blocking record, which the runtime keeps for\n"
		"debuggers; when one waits synchronously for a task, the heap's stacks are\n"
		"scanned (as `ps` does) to say where that task is suspended.\n"
		"\n"
		"Options:\n"
		"  -j, --json   One JSON document (docs/json.md)\n",
};

int adac_cmd_clrthreads(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                        struct adac_error *err)
{
	(void)fe;
	return adac_command_json_view("clrthreads", t, argc, argv, adac_clrthreads_print, out, err);
}
