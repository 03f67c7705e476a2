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
		"one: its address, its type and the field (or array element) that holds it; in a\n"
		"continuation, the awaited local saved there (\"gate (saved local)\"). Only the\n"
		"slots its type declares as references count. Roots (static fields, GC handles,\n"
		"thread stacks) are not heap objects and are not listed.\n",
};

int adac_cmd_refs(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                  struct adac_error *err)
{
	(void)fe;
	uint64_t obj = 0;
	if (adac_opt_only_address("refs", "<object address>", "an object address", argc, argv, &obj, err))
		return -1;
	struct adac_runtime *rt = adac_runtime_acquire(t, err);
	if (!rt)
		return -1;
	int rc = adac_refs_print(rt, obj, out, err);
	adac_runtime_release(rt);
	return rc;
}
