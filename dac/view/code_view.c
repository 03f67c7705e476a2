/* code_view.c - `ip2md`'s text and JSON. */
#include "view/code_view.h"

#include <jansson.h>

#include "base/json.h"
#include "base/output.h"
#include "code/execution_manager.h"
#include "code/precode.h"
#include "types/names.h"

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

int adac_code_info_print_json(struct adac_runtime *rt, uint64_t ip, const struct adac_code_info *ci,
                              struct adac_out *out, struct adac_error *err)
{
	json_t *r = json_object();
	json_object_set_new(r, "ip", adac_json_addr(ip));
	json_object_set_new(r, "method_desc", adac_json_addr(ci->method_desc));
	json_object_set_new(r, "kind", adac_json_text(kind_name(ci->kind)));
	json_object_set_new(r, "code_start", adac_json_addr(ci->code_start));
	json_object_set_new(r, "offset", json_integer((json_int_t)ci->offset));
	json_object_set_new(r, "code_header", adac_json_addr(ci->code_header));
	json_object_set_new(r, "debug_info", adac_json_addr(ci->debug_info));
	json_object_set_new(r, "debug_info_flag_byte", json_boolean(ci->debug_info_flag_byte));
	json_object_set_new(r, "range_section", adac_json_addr(ci->range_section));
	if (ci->kind == ADAC_CODE_R2R) {
		json_object_set_new(r, "r2r_module", adac_json_addr(ci->r2r_module));
		json_object_set_new(r, "r2r_major", json_integer(ci->r2r_major));
	}
	if (ci->kind == ADAC_CODE_STUB) {
		json_object_set_new(r, "stub_kind", json_integer(ci->stub_kind));
		json_object_set_new(r, "stub_kind_name", adac_json_text(adac_em_stub_kind_name(ci->stub_kind)));
		json_object_set_new(r, "precode", ci->precode_kind ? adac_json_text(adac_precode_kind_name(ci->precode_kind)) : json_null());
	}
	const char *name = ci->method_desc ? adac_method_name(rt, ci->method_desc, ADAC_NAME_PARAMS, NULL) : NULL;
	json_object_set_new(r, "method_name", name ? adac_json_text(name) : json_null());
	return adac_json_print_document(out, "ip2md", r, err);
}

void adac_code_info_print(struct adac_runtime *rt, uint64_t ip, const struct adac_code_info *ci, struct adac_out *out)
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
