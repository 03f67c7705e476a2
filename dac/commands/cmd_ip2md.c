/* cmd_ip2md.c - `ip2md <address>`: the method whose code contains an address (like SOS ip2md). */
#include <jansson.h>
#include <stdio.h>

#include "code/execution_manager.h"
#include "code/precode.h"
#include "commands/command.h"
#include "runtime/runtime.h"
#include "types/names.h"

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

static const char *kind_name(enum adac_code_kind k)
{
	switch (k) {
	case ADAC_CODE_JIT: return "jit";
	case ADAC_CODE_R2R: return "r2r";
	case ADAC_CODE_STUB: return "stub";
	case ADAC_CODE_INTERPRETER: return "interpreter";
	}
	return "unknown";
}

static json_t *hex(uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof buf, "0x%016llx", (unsigned long long)v);
	return json_string(buf);
}

static int print_json(struct adac_runtime *rt, uint64_t ip, const struct adac_code_info *ci, struct adac_out *out,
                      struct adac_error *err)
{
	json_t *r = json_object();
	json_object_set_new(r, "ip", hex(ip));
	json_object_set_new(r, "method_desc", hex(ci->method_desc));
	json_object_set_new(r, "kind", json_string(kind_name(ci->kind)));
	json_object_set_new(r, "code_start", hex(ci->code_start));
	json_object_set_new(r, "offset", json_integer((json_int_t)ci->offset));
	json_object_set_new(r, "code_header", hex(ci->code_header));
	json_object_set_new(r, "debug_info", hex(ci->debug_info));
	json_object_set_new(r, "debug_info_flag_byte", json_boolean(ci->debug_info_flag_byte));
	json_object_set_new(r, "range_section", hex(ci->range_section));
	if (ci->kind == ADAC_CODE_R2R) {
		json_object_set_new(r, "r2r_module", hex(ci->r2r_module));
		json_object_set_new(r, "r2r_major", json_integer(ci->r2r_major));
	}
	if (ci->kind == ADAC_CODE_STUB) {
		json_object_set_new(r, "stub_kind", json_integer(ci->stub_kind));
		json_object_set_new(r, "stub_kind_name", json_string(adac_em_stub_kind_name(ci->stub_kind)));
		json_object_set_new(r, "precode", ci->precode_kind ? json_string(adac_precode_kind_name(ci->precode_kind)) : json_null());
	}
	const char *name = ci->method_desc ? adac_method_name(rt, ci->method_desc, ADAC_NAME_PARAMS, NULL) : NULL;
	json_object_set_new(r, "method_name", name ? json_string(name) : json_null());
	json_t *root = json_object();
	json_object_set_new(root, "ip2md", r);
	return adac_print_json(out, root, err);
}

static void print_text(struct adac_runtime *rt, uint64_t ip, const struct adac_code_info *ci, struct adac_out *out)
{
	adac_print(out, "MethodDesc:       0x%016llx\n", (unsigned long long)ci->method_desc);
	if (ci->method_desc) {
		struct adac_error name_err = {0};
		const char *name = adac_method_name(rt, ci->method_desc, ADAC_NAME_PARAMS, &name_err);
		if (name)
			adac_print(out, "Method Name:      %s\n", name);
		else
			adac_print(out, "Method Name:      <unknown: %s>\n", name_err.msg);
	}
	adac_print(out, "Code kind:        %s", kind_name(ci->kind));
	if (ci->kind == ADAC_CODE_STUB)
		adac_print(out, " (%s, %u)", adac_em_stub_kind_name(ci->stub_kind), ci->stub_kind);
	adac_print(out, "\n");
	if (ci->kind == ADAC_CODE_STUB && ci->precode_kind)
		adac_print(out, "Precode:          %s\n", adac_precode_kind_name(ci->precode_kind));
	if (ci->code_start)
		adac_print(out, "Code start:       0x%016llx\n", (unsigned long long)ci->code_start);
	else
		adac_print(out, "Code start:       unknown\n");
	adac_print(out, "IP:               0x%016llx (+0x%llx)\n", (unsigned long long)ip, (unsigned long long)ci->offset);
	if (ci->kind == ADAC_CODE_JIT || ci->kind == ADAC_CODE_INTERPRETER)
		adac_print(out, "Code header:      0x%016llx\n", (unsigned long long)ci->code_header);
	if (ci->kind != ADAC_CODE_STUB) {
		if (ci->debug_info)
			adac_print(out, "Debug info:       0x%016llx%s\n", (unsigned long long)ci->debug_info,
			           ci->debug_info_flag_byte ? " (starts with a flag byte)" : "");
		else
			adac_print(out, "Debug info:       none\n");
	}
	if (ci->kind == ADAC_CODE_R2R)
		adac_print(out, "R2R module:       0x%016llx (R2R format %u)\n", (unsigned long long)ci->r2r_module, ci->r2r_major);
	adac_print(out, "Range section:    0x%016llx\n", (unsigned long long)ci->range_section);
}

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
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "'ip2md' needs an address");
	struct adac_runtime *rt = adac_runtime_open(t, err);
	if (!rt)
		return -1;
	struct adac_code_info ci;
	int rc = adac_em_find_code(rt, ip, &ci, err);
	if (rc == 0) {
		if (json)
			rc = print_json(rt, ip, &ci, out, err);
		else
			print_text(rt, ip, &ci, out);
	}
	adac_runtime_close(rt);
	return rc;
}
