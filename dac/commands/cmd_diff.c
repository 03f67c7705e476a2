/* cmd_diff.c - `diff`: what changed between two targets' pending async stacks (view/pending_diff.h).
 * It takes two targets, so it is run through adac_command_run_diff, not adac_command_run. */
#include <string.h>

#include "commands/command.h"
#include "runtime/runtime.h"
#include "view/pending_diff.h"

const struct adac_command_info adac_cmd_diff_info = {
	.name = "diff",
	.summary = "Compare the pending async stacks of two dumps of a process (or a dump and the live "
	           "process): which progressed, which are new, finished or unchanged",
	.syntax = "[--all] [--json]",
	.details =
		"Lists the stacks `ps` lists in A and in B and matches them by their owning task\n"
		"(else their innermost Continuation). A stack progressed when one of its frames\n"
		"or its await state (State) changed: it is shown with its frames in A and in B.\n"
		"A stack only in B is new, one only in A finished; one whose frames are the same\n"
		"in both is unchanged: a hang shows as everything unchanged. The first line\n"
		"counts each kind.\n"
		"\n"
		"Options:\n"
		"  -a, --all        List the unchanged stacks too.\n"
		"  -j, --json       Print JSON (docs/json.md).\n"
		"\n"
		"In the CLI the two targets come first: asyncdac diff <core-A> <core-B>, or\n"
		"asyncdac diff <core-A> --pid <pid> (B is the live process). Not available in\n"
		"LLDB, which has one target.\n",
};

int adac_cmd_diff(struct adac_target *a, struct adac_target *b, int argc, char **argv, struct adac_out *out,
                  struct adac_error *err)
{
	bool all = false, json = false;
	for (int i = 1; i < argc; i++) {
		if (adac_opt_is(argv[i], "-a", "--all"))
			all = true;
		else if (adac_opt_is(argv[i], "-j", "--json"))
			json = true;
		else
			return adac_opt_unknown("diff", argv[i], err);
	}
	struct adac_runtime *ra = adac_runtime_acquire(a, err);
	if (!ra) {
		adac_error_wrap(err, "A: ");
		return -1;
	}
	struct adac_runtime *rb = adac_runtime_acquire(b, err);
	if (!rb) {
		adac_error_wrap(err, "B: ");
		adac_runtime_release(ra);
		return -1;
	}
	int rc = adac_pending_diff_print(ra, rb, all, json, out, err);
	adac_runtime_release(rb);
	adac_runtime_release(ra);
	return rc;
}
