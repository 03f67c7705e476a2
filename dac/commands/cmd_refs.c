/* cmd_refs.c - `refs <object>`: which heap objects reference an object (one heap pass). */
#include "commands/command.h"
#include "runtime/runtime.h"
#include "view/object_view.h"

const struct adac_command_info adac_cmd_refs_info = {
	.name = "refs",
	.summary = "List the heap objects that reference an object, and through which field",
	.syntax = "<object address>",
	.details =
		"Walks the GC heap once and lists every object holding a reference to the given\n"
		"one: its address, its type and the field (or array element) that holds it. Only\n"
		"the slots its type declares as references count. Roots (static fields, GC\n"
		"handles, thread stacks) are not heap objects and are not listed.\n",
};

int adac_cmd_refs(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                  struct adac_error *err)
{
	(void)fe;
	uint64_t obj = 0;
	bool have = false;
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] != '-' && !have) {
			if (adac_opt_u64("refs", "<object address>", argv[i], &obj, err))
				return -1;
			have = true;
		} else {
			return adac_opt_unknown("refs", argv[i], err);
		}
	}
	if (!have)
		return adac_fail(err, ADAC_E_USAGE, 0, "'refs' needs an object address");
	struct adac_runtime *rt = adac_runtime_open(t, err);
	if (!rt)
		return -1;
	int rc = adac_refs_print(rt, obj, out, err);
	adac_runtime_close(rt);
	return rc;
}
