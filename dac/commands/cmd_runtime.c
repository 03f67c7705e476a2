/* cmd_runtime.c - `runtime`: which .NET runtime the target runs and what its descriptor offers. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "commands/command.h"
#include "runtime/runtime.h"

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

static json_t *hex(uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof buf, "0x%016llx", (unsigned long long)v);
	return json_string(buf);
}

/* "2" becomes the number 2; other version strings stay strings. */
static json_t *version_json(const char *v)
{
	char *end;
	long n = strtol(v, &end, 10);
	return (*v && !*end) ? json_integer(n) : json_string(v);
}

static int print_json(const struct adac_runtime *rt, struct adac_out *out, struct adac_error *err)
{
	const struct adac_descriptor *d = rt->desc;
	json_t *r = json_object();
	json_object_set_new(r, "module", json_string(rt->module_path));
	json_object_set_new(r, "base", hex(rt->module_base));
	json_object_set_new(r, "descriptor", hex(rt->desc_addr));
	json_object_set_new(r, "version", version_json(adac_desc_version(d)));
	json_object_set_new(r, "baseline", json_string(adac_desc_baseline(d)));
	json_object_set_new(r, "pointer_size", json_integer(adac_desc_ptr_size(d)));
	const char *pv = adac_desc_global_string(d, "RuntimeProductVersionString");
	const char *arch = adac_desc_global_string(d, "Architecture");
	json_object_set_new(r, "product_version", pv ? json_string(pv) : json_null());
	json_object_set_new(r, "architecture", arch ? json_string(arch) : json_null());
	json_t *contracts = json_object();
	for (size_t i = 0; i < adac_desc_contract_count(d); i++) {
		const char *ver;
		const char *name = adac_desc_contract_at(d, i, &ver);
		if (name)
			json_object_set_new(contracts, name, json_string(ver));
	}
	json_object_set_new(r, "contracts", contracts);
	json_object_set_new(r, "types", json_integer((json_int_t)adac_desc_type_count(d)));
	json_object_set_new(r, "globals", json_integer((json_int_t)adac_desc_global_count(d)));
	json_t *subs = json_array();
	for (size_t i = 1; i < adac_desc_blob_count(d); i++)
		json_array_append_new(subs, json_string(adac_desc_blob(d, i)->name));
	json_object_set_new(r, "sub_descriptors", subs);
	json_t *root = json_object();
	json_object_set_new(root, "runtime", r);
	return adac_print_json(out, root, err);
}

static void print_text(const struct adac_runtime *rt, struct adac_out *out)
{
	const struct adac_descriptor *d = rt->desc;
	const char *pv = adac_desc_global_string(d, "RuntimeProductVersionString");
	const char *arch = adac_desc_global_string(d, "Architecture");
	adac_print(out, ".NET runtime %s (%s)\n", pv ? pv : "of unknown version", arch ? arch : "unknown architecture");
	adac_print(out, "  module:     %s\n", rt->module_path);
	adac_print(out, "  base:       0x%016llx\n", (unsigned long long)rt->module_base);
	adac_print(out, "  descriptor: 0x%016llx (version %s, baseline \"%s\", %u-bit)\n", (unsigned long long)rt->desc_addr,
	           adac_desc_version(d), adac_desc_baseline(d), adac_desc_ptr_size(d) * 8);
	for (size_t i = 1; i < adac_desc_blob_count(d); i++) {
		const struct adac_desc_blob *b = adac_desc_blob(d, i);
		adac_print(out, "  sub-descriptor %s: 0x%016llx\n", b->name, (unsigned long long)b->addr);
	}
	adac_print(out, "  types:      %zu\n", adac_desc_type_count(d));
	adac_print(out, "  globals:    %zu\n", adac_desc_global_count(d));
	adac_print(out, "  contracts:  %zu\n", adac_desc_contract_count(d));
	for (size_t i = 0; i < adac_desc_contract_count(d); i++) {
		const char *ver;
		const char *name = adac_desc_contract_at(d, i, &ver);
		if (name)
			adac_print(out, "    %-24s %s\n", name, ver);
	}
}

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
	struct adac_runtime *rt = adac_runtime_open(t, err);
	if (!rt)
		return -1;
	int rc = 0;
	if (json)
		rc = print_json(rt, out, err);
	else
		print_text(rt, out);
	if (verbose && !json)
		adac_desc_dump(rt->desc, out);
	adac_runtime_close(rt);
	return rc;
}
