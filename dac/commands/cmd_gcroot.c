/* cmd_gcroot.c - `gcroot <object>`: the roots keeping an object alive, and the reference path from each. */
#include "commands/command.h"
#include "runtime/runtime.h"
#include "view/gcroot_view.h"

const struct adac_command_info adac_cmd_gcroot_info = {
	.name = "gcroot",
	.summary = "Show the roots that keep an object alive, and the reference path from each to it",
	.syntax = "<object address> [--json]",
	.details =
		"Walks the GC heap once, then prints each root that reaches the object with its\n"
		"shortest path, as SOS gcroot does: the root, then one \"-> 0x... Type, via\n"
		"<field>\" line per object down to the given one, and \"Found N unique roots.\"\n"
		"Roots are GC handles that keep their object alive (strong, pinned, async\n"
		"pinned, sized ref), each managed thread's stack, registers and thread statics\n"
		"(the object[] its ThreadLocalData holds), and the finalization queue's ready\n"
		"lists; dependent handles link their primary object to their secondary one. The\n"
		"runtime keeps static fields in object[] arrays a strong handle holds, so a\n"
		"static shows as \"strong handle -> Object[] -> ..., via Type.field (static)\"\n"
		"(\"via [i]\" when its type is not in its module's type map, as a generic\n"
		"instantiation). Stacks are scanned conservatively, without GC info: every slot\n"
		"from the stack pointer to the stack's end holding an object's address counts,\n"
		"marked \"(conservative)\": a dead slot may keep an object listed. A thread\n"
		"holding the object in several slots is one root (its first slot).\n"
		"\n"
		"Options:\n"
		"  -j, --json   Print the same facts as one JSON object (docs/json.md).\n",
};

int adac_cmd_gcroot(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                    struct adac_error *err)
{
	(void)fe;
	uint64_t obj = 0;
	bool have = false, json = false;
	for (int i = 1; i < argc; i++) {
		if (adac_opt_is(argv[i], "-j", "--json")) {
			json = true;
		} else if (argv[i][0] != '-' && !have) {
			if (adac_opt_u64("gcroot", "<object address>", argv[i], &obj, err))
				return -1;
			have = true;
		} else {
			return adac_opt_unknown("gcroot", argv[i], err);
		}
	}
	if (!have)
		return adac_fail(err, ADAC_E_USAGE, 0, "'gcroot' needs an object address");
	struct adac_runtime *rt = adac_runtime_acquire(t, err);
	if (!rt)
		return -1;
	int rc = adac_gcroot_print(rt, obj, json, out, err);
	adac_runtime_release(rt);
	return rc;
}
