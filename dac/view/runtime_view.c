/* runtime_view.c - `runtime`'s text and JSON. */
#include "view/runtime_view.h"

#include <jansson.h>
#include <stdlib.h>

#include "base/json.h"
#include "base/output.h"
#include "runtime/descriptor.h"
#include "runtime/runtime.h"

/* "2" becomes the number 2; other version strings stay strings. */
static json_t *version_json(const char *v)
{
	char *end;
	long n = strtol(v, &end, 10);
	return (*v && !*end) ? json_integer(n) : adac_json_text(v);
}

json_t *adac_runtime_json(const struct adac_runtime *rt)
{
	const struct adac_descriptor *d = rt->desc;
	json_t *r = json_object();
	json_object_set_new(r, "module", adac_json_text(rt->module_path));
	json_object_set_new(r, "base", adac_json_addr(rt->module_base));
	json_object_set_new(r, "descriptor", adac_json_addr(rt->desc_addr));
	json_object_set_new(r, "version", version_json(adac_desc_version(d)));
	json_object_set_new(r, "baseline", adac_json_text(adac_desc_baseline(d)));
	json_object_set_new(r, "pointer_size", json_integer(adac_desc_ptr_size(d)));
	const char *pv = adac_desc_global_string(d, "RuntimeProductVersionString");
	const char *arch = adac_desc_global_string(d, "Architecture");
	json_object_set_new(r, "product_version", pv ? adac_json_text(pv) : json_null());
	json_object_set_new(r, "architecture", arch ? adac_json_text(arch) : json_null());
	json_t *contracts = json_object();
	for (size_t i = 0; i < adac_desc_contract_count(d); i++) {
		const char *ver;
		const char *name = adac_desc_contract_at(d, i, &ver);
		if (name)
			json_object_set_new(contracts, name, adac_json_text(ver));
	}
	json_object_set_new(r, "contracts", contracts);
	json_object_set_new(r, "types", json_integer((json_int_t)adac_desc_type_count(d)));
	json_object_set_new(r, "globals", json_integer((json_int_t)adac_desc_global_count(d)));
	json_t *subs = json_array();
	for (size_t i = 1; i < adac_desc_blob_count(d); i++)
		json_array_append_new(subs, adac_json_text(adac_desc_blob(d, i)->name));
	json_object_set_new(r, "sub_descriptors", subs);
	return r;
}

int adac_runtime_print_json(const struct adac_runtime *rt, struct adac_out *out, struct adac_error *err)
{
	return adac_json_print_document(out, "runtime", adac_runtime_json(rt), err);
}

void adac_runtime_print(const struct adac_runtime *rt, struct adac_out *out)
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

void adac_desc_dump(const struct adac_descriptor *d, struct adac_out *out)
{
	adac_print(out, "version %s\n", adac_desc_version(d));
	const char *baseline = adac_desc_baseline(d);
	adac_print(out, "baseline %s\n", baseline[0] ? baseline : "(none)");
	size_t nt;
	const char **types = adac_desc_names(d, ADAC_DESC_TYPES, &nt);
	for (size_t i = 0; types && i < nt; i++) {
		uint32_t size;
		if (adac_desc_type_size(d, types[i], &size, NULL) == 0)
			adac_print(out, "type %s size %u\n", types[i], size);
		else
			adac_print(out, "type %s size ?\n", types[i]);
		size_t nf;
		struct adac_desc_field *fields = adac_desc_fields(d, types[i], &nf);
		for (size_t j = 0; fields && j < nf; j++)
			adac_print(out, "  field %s.%s %llu\n", types[i], fields[j].name, (unsigned long long)fields[j].offset);
		free(fields);
	}
	free(types);
	size_t ng;
	const char **globals = adac_desc_names(d, ADAC_DESC_GLOBALS, &ng);
	for (size_t i = 0; globals && i < ng; i++) {
		uint64_t value;
		const char *str = adac_desc_global_string(d, globals[i]);
		adac_print(out, "global %s", globals[i]);
		if (adac_desc_global(d, globals[i], &value, NULL) == 0)
			adac_print(out, " = 0x%llx", (unsigned long long)value);
		if (str)
			adac_print(out, " \"%s\"", str);
		adac_print(out, "\n");
	}
	free(globals);
	size_t nc;
	const char **contracts = adac_desc_names(d, ADAC_DESC_CONTRACTS, &nc);
	for (size_t i = 0; contracts && i < nc; i++)
		adac_print(out, "contract %s %s\n", contracts[i], adac_desc_contract(d, contracts[i]));
	free(contracts);
	for (size_t i = 0; i < adac_desc_pending_count(d); i++) {
		uint64_t addr = 0;
		const char *name = adac_desc_pending_sub(d, i, &addr);
		adac_print(out, "sub-descriptor %s at 0x%llx\n", name, (unsigned long long)addr);
	}
}
