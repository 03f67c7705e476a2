/* cmd_dumpmd.c - `dumpmd <MethodDesc>`: what the runtime knows of a method (like SOS dumpmd). */
#include <jansson.h>

#include "base/json.h"
#include "commands/command.h"
#include "runtime/runtime.h"
#include "view/method_view.h"

const struct adac_command_info adac_cmd_dumpmd_info = {
	.name = "dumpmd",
	.summary = "Show a MethodDesc: its method, type, module and flags",
	.syntax = "<MethodDesc address>... [--json]",
	.details =
		"Reads the MethodDesc through the runtime's RuntimeTypeSystem contract and names\n"
		"it from the module's metadata. 'Method Name' is asyncdac's format\n"
		"(Namespace.Type<Args>.Method(Params)); 'SOS Name' is exactly what SOS\n"
		"(Microsoft's DAC) prints for the same MethodDesc. Async variants and their\n"
		"Task-returning thunks share a token and a name; thunks are marked hidden\n"
		"(debuggers skip them). The code address is the method's current code, if any.\n"
		"Several addresses may be given: each is shown (or its error), and the command\n"
		"fails if any of them did. JSON output is {\"dumpmd\": [one object per address]}.\n"
		"\n"
		"Options:\n"
		"  -j, --json       Print the same facts as one JSON object.\n",
};

int adac_cmd_dumpmd(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                    struct adac_error *err)
{
	(void)fe;
	bool json = false;
	int first = 0, count = 0;
	for (int i = 1; i < argc; i++) {
		if (adac_opt_is(argv[i], "-j", "--json")) {
			json = true;
		} else if (argv[i][0] != '-') {
			uint64_t v;
			if (adac_opt_u64("dumpmd", "<MethodDesc address>", argv[i], &v, err))
				return -1;
			if (!first)
				first = i;
			count++;
		} else {
			return adac_opt_unknown("dumpmd", argv[i], err);
		}
	}
	if (!count)
		return adac_fail(err, ADAC_E_USAGE, 0, "'dumpmd' needs a MethodDesc address");
	struct adac_runtime *rt = adac_runtime_acquire(t, err);
	if (!rt)
		return -1;
	json_t *arr = json ? json_array() : NULL;
	int rc = 0, printed = 0;
	/* Several addresses: each is shown or gets its error, and the first error fails the command. */
	for (int i = first; i < argc; i++) {
		if (argv[i][0] == '-')
			continue;
		uint64_t md = 0;
		adac_opt_u64("dumpmd", "<MethodDesc address>", argv[i], &md, NULL);
		if (!json && printed++)
			adac_print(out, "\n");
		struct adac_error one = {0};
		json_t *o = arr ? adac_method_desc_json(rt, md, &one) : NULL;
		if (o) {
			json_array_append_new(arr, o);
			continue;
		}
		if (!arr && adac_method_desc_print(rt, md, out, &one) == 0)
			continue;
		if (count == 1) {
			adac_error_copy(err, &one);
			rc = -1;
			break;
		}
		if (arr)
			json_array_append_new(arr, adac_method_desc_error_json(md, &one));
		else
			adac_method_desc_print_error(md, &one, out);
		if (rc == 0) {
			adac_fail(err, one.code, one.addr, "%s", one.msg);
			rc = -1;
		}
	}
	if (arr) {
		if (adac_json_print_document(out, "dumpmd", arr, rc ? NULL : err))
			rc = -1;
	}
	adac_runtime_release(rt);
	return rc;
}
