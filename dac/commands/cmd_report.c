/* cmd_report.c - `report`: one page for an incident ticket (view/report_view.h). */
#include "commands/command.h"
#include "view/report_view.h"

const struct adac_command_info adac_cmd_report_info = {
	.name = "report",
	.summary = "One page for an incident ticket: findings first (deadlocks, tasks whose awaiters did not resume, "
	           "objects many chains await, locks threads wait for, crashes), then the runtime, crashed threads, blocked threads, "
	           "the thread pool, the threads' stacks merged, async stacks grouped and top frames",
	.syntax = "[--json]",
	.details =
		"Sections, each what another command shows of the same process:\n"
		"  == Findings        crashed threads; await cycles (\"deadlock: A at F:L awaits\n"
		"                     task <addr> of B at ..., which awaits task <addr> of A\");\n"
		"                     completed tasks whose awaiting frames have not resumed\n"
		"                     (a starved thread pool?, with its busy workers, queued\n"
		"                     work items and how many of its workers are blocked:\n"
		"                     see Blocked threads); objects several chains await\n"
		"                     (\"shared: 7000 chains await one SemaphoreSlim <addr>\n"
		"                     (current count 0, 7000 waiters)\"); threads blocked\n"
		"                     synchronously on a task (\"blocked: thread tid T ...\n"
		"                     waits synchronously for task <addr>\", and \"while it\n"
		"                     holds <lock>\" when it holds one); threads waiting for\n"
		"                     each other's locks (\"deadlock: thread tid A ... waits\n"
		"                     for <lock> held by thread tid B ...\"), or through tasks\n"
		"                     (\"deadlock: thread tid A ... waits synchronously for task\n"
		"                     <addr> (...), whose stack runs on thread tid B ..., which\n"
		"                     waits for <lock> held by thread tid A ...\": such\n"
		"                     threads are in no \"blocked:\" line); locks threads wait\n"
		"                     for (\"lock: System.Object <addr> (Monitor) is held by\n"
		"                     thread tid T ..., and 2 threads wait for it\": `locks`)\n"
		"  == Runtime         as `runtime`\n"
		"  == Threads that stopped for a reason\n"
		"                     a crash core's signalled thread, as `bt` shows it (stop\n"
		"                     reason, the exception the runtime recorded, frames)\n"
		"  == Blocked threads each thing threads wait on, the most waited-on first, as\n"
		"                     `bt` names it under their frames (\"3 threads (tid A, B, C;\n"
		"                     thread-pool workers): waiting for: <lock>, held by ...\",\n"
		"                     \"in Monitor.Wait: ...\", \"in ManualResetEventSlim.Wait on\n"
		"                     ...\", \"waits synchronously for task <addr> ...\"), each\n"
		"                     followed by what that waits for in turn (\"  then: ...\"): a\n"
		"                     lock's holder (or a held Monitor's, for a Monitor.Wait)\n"
		"                     and what blocks it, a task's stack: the thread it runs\n"
		"                     on and what blocks that, or where it is suspended and\n"
		"                     what it awaits (\"  then: task <addr> is suspended:\n"
		"                     chain #N, <frame> at <file>:<line>, awaiting <addr>\n"
		"                     ...\"); for a thread that waits on nothing the\n"
		"                     runtime records, where it is (\"no wait recorded: it is in\n"
		"                     System.Threading.Thread.Sleep(Int32), called from <method>\n"
		"                     at <file>:<line>\")\n"
		"  == Thread pool     its workers busy, and the work items queued, counted by\n"
		"                     what they run (a delegate's method, or \"resumes <method>\n"
		"                     at <file>:<line>\": an awaiter the pool has not run), as\n"
		"                     `threadpool`\n"
		"  == Thread stacks, merged where they share frames\n"
		"                     as `pstacks`: the threads' managed frames, and what each\n"
		"                     branch's threads wait on\n"
		"  == Async stacks, grouped by what they await   as `ps --coalesce`\n"
		"  == Top frames      as `ps --stats`\n"
		"\n"
		"Options:\n"
		"  -j, --json   One JSON document with the same sections (docs/json.md):\n"
		"               findings ({\"kind\": \"deadlock\", \"text\": ...}), runtime,\n"
		"               crashed threads (as `bt --json`), blocked threads (each with\n"
		"               its wait chain), thread pool (as `threadpool --json`), thread\n"
		"               stacks (as `pstacks --json`), stacks (as `ps --coalesce\n"
		"               --json` and `ps --stats --json`), warnings\n",
};

int adac_cmd_report(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                    struct adac_error *err)
{
	(void)fe;
	return adac_command_json_view("report", t, argc, argv, adac_report_print, out, err);
}
