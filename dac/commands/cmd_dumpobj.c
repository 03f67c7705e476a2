/* cmd_dumpobj.c - `dumpobj <object>`: an object's type, size and fields (like SOS dumpobj). */
#include "commands/command.h"
#include "runtime/runtime.h"
#include "view/object_view.h"

const struct adac_command_info adac_cmd_dumpobj_info = {
	.name = "dumpobj",
	.summary = "Show a managed object: its type, MethodTable, size and fields",
	.syntax = "<object address> [--depth <n>]",
	.details =
		"Prints the object's type name, MethodTable, size in bytes and module, then its\n"
		"value (strings and arrays) or one line per instance field, base class first, as\n"
		"LLDB shows variables:\n"
		"  (<type>) <name> = <value>\n"
		"Any object address asyncdac prints can be given (tasks, continuations, state\n"
		"machine boxes, awaited objects, exceptions).\n"
		"\n"
		"Options:\n"
		"  -d, --depth <n>   Expand referenced objects n levels deep in the field\n"
		"                    values (default 0: their address and type).\n",
};

#define MAX_DEPTH 8u   /* levels a user may ask for; each multiplies the output */

int adac_cmd_dumpobj(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                     struct adac_error *err)
{
	(void)fe;
	uint64_t obj = 0, depth = 0;
	bool have = false;
	for (int i = 1; i < argc; i++) {
		const char *v;
		if (adac_opt_is(argv[i], "-d", "--depth")) {
			if (adac_opt_value("dumpobj", argc, argv, &i, &v, err) || adac_opt_u64("dumpobj", argv[i - 1], v, &depth, err))
				return -1;
			if (depth > MAX_DEPTH)
				return adac_fail(err, ADAC_E_USAGE, 0, "--depth must be at most %u", MAX_DEPTH);
		} else if (argv[i][0] != '-' && !have) {
			if (adac_opt_u64("dumpobj", "<object address>", argv[i], &obj, err))
				return -1;
			have = true;
		} else {
			return adac_opt_unknown("dumpobj", argv[i], err);
		}
	}
	if (!have)
		return adac_fail(err, ADAC_E_USAGE, 0, "'dumpobj' needs an object address");
	struct adac_runtime *rt = adac_runtime_acquire(t, err);
	if (!rt)
		return -1;
	int rc = adac_object_print(rt, obj, (unsigned)depth, out, err);
	adac_runtime_release(rt);
	return rc;
}
