/* cmd_ip2md.c - `ip2md <address>`: the method whose code contains an address (like SOS ip2md). */
#include "code/execution_manager.h"
#include "commands/command.h"
#include "runtime/runtime.h"
#include "view/code_view.h"

const struct adac_command_info adac_cmd_ip2md_info = {
	.name = "ip2md",
	.summary = "Show the managed method whose code contains an address",
	.syntax = "<address> [--json]",
	.details =
		"Looks the address up in the runtime's code map (ExecutionManager): the range\n"
		"section that contains it, then the JIT code heap's nibble map and code header,\n"
		"the ReadyToRun image's RuntimeFunctions and entry point map, or the stub\n"
		"range's precode. Prints the MethodDesc, where the code starts and the offset of\n"
		"the address in it, the kind of code, its code header and debug info, and the\n"
		"range section.\n"
		"\n"
		"Options:\n"
		"  -j, --json       Print the same facts as one JSON object.\n",
};

int adac_cmd_ip2md(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                   struct adac_error *err)
{
	(void)fe;
	bool json = false, have_ip = false;
	uint64_t ip = 0;
	for (int i = 1; i < argc; i++) {
		if (adac_opt_is(argv[i], "-j", "--json"))
			json = true;
		else if (argv[i][0] != '-' && !have_ip) {
			if (adac_opt_u64("ip2md", "<address>", argv[i], &ip, err))
				return -1;
			have_ip = true;
		} else
			return adac_opt_unknown("ip2md", argv[i], err);
	}
	if (!have_ip)
		return adac_fail(err, ADAC_E_USAGE, 0, "'ip2md' needs an address");
	struct adac_runtime *rt = adac_runtime_acquire(t, err);
	if (!rt)
		return -1;
	struct adac_code_info ci;
	int rc = adac_em_find_code(rt, ip, &ci, err);
	if (rc == 0) {
		if (json)
			rc = adac_code_info_print_json(rt, ip, &ci, out, err);
		else
			adac_code_info_print(rt, ip, &ci, out);
	}
	adac_runtime_release(rt);
	return rc;
}
