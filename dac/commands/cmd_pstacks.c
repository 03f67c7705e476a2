/* cmd_pstacks.c - `pstacks`: the threads' stacks merged where they share frames (SOS parallelstacks). */
#include "commands/command.h"
#include "runtime/runtime.h"
#include "view/thread_groups.h"

const struct adac_command_info adac_cmd_pstacks_info = {
	.name = "pstacks",
	.summary = "Show the threads' stacks merged where they share frames (SOS pstacks, Visual Studio's "
	           "Parallel Stacks)",
	.syntax = "[--all] [--tids <n>] [--json]",
	.details =
		"Merges the threads' physical stacks from their outermost frame, as SOS\n"
		"parallelstacks and Visual Studio's Parallel Stacks do: each group of frames the\n"
		"same threads share is printed once, innermost first, each frame with the number\n"
		"of threads running it; what the group's threads call next is above it,\n"
		"indented, and each branch starts with the threads that end there:\n"
		"  ________________________________________________\n"
		"        ~~~~ tid 8132, 8133\n"
		"          2 System.Threading.LowLevelLifoSemaphore.WaitAsWaiter(Int32)\n"
		"        ~~~~ tid 8131\n"
		"             waiting for: System.Object 0x... (Monitor), held by ...\n"
		"          1 System.Threading.Monitor.Enter(System.Object)\n"
		"          1 MyApp.Worker.Update()\n"
		"      3 System.Threading.PortableThreadPool+WorkerThread.WorkerThreadStart()\n"
		"      3 System.Threading.Thread.StartCallback(System.Threading.Thread*)\n"
		"\n"
		"  ==> 3 threads with 1 root\n"
		"\n"
		"A thread running an async chain has the chain's frames, the logical callers of\n"
		"the method it resumed, right after the frame of the dispatch loop that resumed\n"
		"it, marked [async] (as LLDB shows them with this plugin, and Visual Studio an\n"
		"async call stack): threads serving the same request merge on them.\n"
		"\n"
		"Under a branch's threads, what they wait on, from the blocking records the\n"
		"runtime keeps for debuggers (as `clrthreads` and `report` say it: once when\n"
		"they all wait on the same, else per thread).\n"
		"\n"
		"Frames are named without offsets or lines, so that threads at different places\n"
		"of the same methods merge. The managed frames are asyncdac's own unwind, which\n"
		"finds the frames a native unwinder skips. `ps --coalesce` merges the async\n"
		"stacks the same way; `clrthreads` lists the threads one by one.\n"
		"\n"
		"Options:\n"
		"  -a, --all         Every thread, with its native frames too (module`symbol);\n"
		"                    by default only managed frames, as SOS\n"
		"      --tids <n>    Thread ids listed per branch (default 4, 0: all)\n"
		"  -j, --json        One JSON document (docs/json.md)\n",
};

int adac_cmd_pstacks(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                     struct adac_error *err)
{
	(void)fe;
	struct adac_pstacks_opts o = {.tids = 4};
	for (int i = 1; i < argc; i++) {
		const char *v;
		uint64_t n;
		if (adac_opt_is(argv[i], "-j", "--json")) {
			o.json = true;
		} else if (adac_opt_is(argv[i], "-a", "--all")) {
			o.all = true;
		} else if (adac_opt_is(argv[i], NULL, "--tids")) {
			if (adac_opt_value("pstacks", argc, argv, &i, &v, err) || adac_opt_u64("pstacks", "--tids", v, &n, err))
				return -1;
			o.tids = n > ADAC_MAX_THREADS ? ADAC_MAX_THREADS : (size_t)n;
		} else {
			return adac_opt_unknown("pstacks", argv[i], err);
		}
	}
	struct adac_runtime *rt = adac_runtime_acquire(t, err);
	if (!rt)
		return -1;
	int rc = adac_pstacks_print(rt, &o, out, err);
	adac_runtime_release(rt);
	return rc;
}
