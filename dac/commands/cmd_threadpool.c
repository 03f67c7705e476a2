/* cmd_threadpool.c - `threadpool`: the thread pool's workers and queued work items (SOS threadpool). */
#include "commands/command.h"
#include "runtime/runtime.h"
#include "view/threadpool_view.h"

const struct adac_command_info adac_cmd_threadpool_info = {
	.name = "threadpool",
	.summary = "Show the thread pool: its workers, what each one is doing, and the work items queued "
	           "for them",
	.syntax = "[--items] [--json]",
	.details =
		"Reads the managed thread pool (SOS threadpool and threadpoolqueue): its worker\n"
		"counts and limits, each worker thread with what it is doing, and the work items\n"
		"waiting in its queues, counted by what they run:\n"
		"  thread tid <T> (managed thread <M>): in ManualResetEventSlim.Wait on ...\n"
		"    then: ...                       (what that waits for in turn, as report)\n"
		"  thread tid <T> (...): running: it is in <method> at <file>:<line>\n"
		"  thread tid <T> (...): idle: waiting for work\n"
		"       Count  Work item\n"
		"           3  MyApp.Worker.Process(System.Object)\n"
		"           1  resumes MyApp.Service.HandleAsync() at Service.cs:42\n"
		"A work item runs a delegate (a Task's action, a QueueUserWorkItem callback), or\n"
		"resumes an async method whose awaited task completed: the line it goes on at.\n"
		"Every worker busy and work queued is a starved pool (see `report`). What a\n"
		"worker waits for is its blocking record, which the runtime keeps for debuggers;\n"
		"when one waits synchronously for a task, the heap's stacks are scanned (as `ps`\n"
		"does) to say where that task is suspended.\n"
		"\n"
		"Options:\n"
		"      --items  Also list each work item: its queue (Global, or a worker's Local\n"
		"               queue), object, type and what it runs (SOS threadpool -wi)\n"
		"  -j, --json   One JSON document (docs/json.md)\n",
};

int adac_cmd_threadpool(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                        struct adac_error *err)
{
	(void)fe;
	bool json = false, items = false;
	for (int i = 1; i < argc; i++) {
		if (adac_opt_is(argv[i], "-j", "--json"))
			json = true;
		else if (adac_opt_is(argv[i], NULL, "--items"))
			items = true;
		else
			return adac_opt_unknown("threadpool", argv[i], err);
	}
	struct adac_runtime *rt = adac_runtime_acquire(t, err);
	if (!rt)
		return -1;
	int rc = adac_threadpool_print(rt, items, json, out, err);
	adac_runtime_release(rt);
	return rc;
}
