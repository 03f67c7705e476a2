/* cmd_runtime.c - `runtime`: which .NET runtime the target runs and what its descriptor offers. */
#include "commands/command.h"
#include "runtime/runtime.h"
#include "view/runtime_view.h"

const struct adac_command_info adac_cmd_runtime_info = {
	.name = "runtime",
	.summary = "Show the .NET runtime in the target and the data contracts it describes",
	.syntax = "[--json | --verbose]",
	.details =
		"Finds libcoreclr.so (or the module exporting DotNetRuntimeContractDescriptor),\n"
		"reads its contract descriptor and prints the runtime version, where it is\n"
		"loaded, the descriptor format version, and every contract with its version.\n"
		"\n"
		"Options:\n"
		"  -j, --json       Print the same facts as one JSON object.\n"
		"  -v, --verbose    Also print every type with its fields, and every global.\n",
};

int adac_cmd_runtime(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                     struct adac_error *err)
{
	(void)fe;
	bool json = false, verbose = false;
	for (int i = 1; i < argc; i++) {
		if (adac_opt_is(argv[i], "-j", "--json"))
			json = true;
		else if (adac_opt_is(argv[i], "-v", "--verbose"))
			verbose = true;
		else
			return adac_opt_unknown("runtime", argv[i], err);
	}
	struct adac_runtime *rt = adac_runtime_acquire(t, err);
	if (!rt)
		return -1;
	int rc = 0;
	if (json)
		rc = adac_runtime_print_json(rt, out, err);
	else
		adac_runtime_print(rt, out);
	if (verbose && !json)
		adac_desc_dump(rt->desc, out);
	adac_runtime_release(rt);
	return rc;
}
