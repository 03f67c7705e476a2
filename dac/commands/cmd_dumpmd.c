/* cmd_dumpmd.c - `dumpmd <MethodDesc>`: what the runtime knows of a method (like SOS dumpmd). */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "commands/command.h"
#include "runtime/runtime.h"
#include "types/methoddesc.h"
#include "types/names.h"

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

static const char *const classification_names[8] = {"IL", "FCall", "PInvoke", "EEImpl",
                                                     "Array", "Instantiated", "ComInterop", "Dynamic"};
static const char *const imd_names[8] = {"", "generic method definition", "unshared", "shared",
                                         "wrapper stub", "?", "?", "?"};

static const struct {
	uint32_t bit;
	const char *name;
} async_bits[] = {
	{ADAC_ASYNC_CALL, "AsyncCall"},
	{ADAC_ASYNC_RETURNS_TASK_OR_VALUETASK, "ReturnsTaskOrValueTask"},
	{ADAC_ASYNC_IS_ASYNC_VARIANT, "IsAsyncVariant"},
	{ADAC_ASYNC_IS_ASYNC_VARIANT_FOR_VALUETASK, "IsAsyncVariantForValueTask"},
	{ADAC_ASYNC_THUNK, "Thunk"},
	{ADAC_ASYNC_RETURN_DROPPING_THUNK, "ReturnDroppingThunk"},
};

static json_t *hex(uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof buf, "0x%016llx", (unsigned long long)v);
	return json_string(buf);
}

static json_t *hex32(uint32_t v)
{
	char buf[16];
	snprintf(buf, sizeof buf, "0x%08x", v);
	return json_string(buf);
}

/* "AsyncCall, IsAsyncVariant" */
static void async_flag_names(uint32_t flags, char *buf, size_t len)
{
	buf[0] = '\0';
	size_t used = 0;
	for (size_t i = 0; i < sizeof async_bits / sizeof async_bits[0]; i++) {
		if (!(flags & async_bits[i].bit))
			continue;
		int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", async_bits[i].name);
		if (n < 0 || (size_t)n >= len - used)
			return;
		used += (size_t)n;
	}
	uint32_t known = 0;
	for (size_t i = 0; i < sizeof async_bits / sizeof async_bits[0]; i++)
		known |= async_bits[i].bit;
	if (flags & ~known)
		snprintf(buf + used, len - used, "%s0x%x", used ? ", " : "", flags & ~known);
}

static const char *async_role(const struct adac_method_info *mi)
{
	if (!mi->has_async_data)
		return "";
	if (mi->async_flags & ADAC_ASYNC_RETURN_DROPPING_THUNK)
		return "return-dropping thunk";
	if (mi->is_async_thunk)
		return mi->is_async_variant ? "async thunk" : "Task-returning thunk";
	if (mi->is_async_variant)
		return "async variant (runs the method's code)";
	if (mi->async_flags & ADAC_ASYNC_CALL)
		return "async method";
	return "";
}

/* One MethodDesc: text lines, or a JSON object appended to arr. */
static int dump_one(struct adac_runtime *rt, uint64_t md, json_t *arr, struct adac_out *out, struct adac_error *err)
{
	struct adac_method_info mi;
	struct adac_mt_info mt;
	if (adac_md_read(rt, md, &mi, err) || adac_mt_read(rt, mi.method_table, &mt, err))
		return -1;
	const char *name = adac_method_name(rt, md, ADAC_NAME_PARAMS, err);
	if (!name)
		return -1;
	const char *dac_name = adac_method_name(rt, md, ADAC_NAME_PARAMS | ADAC_NAME_DAC, err);
	if (!dac_name)
		return -1;
	const char *path = adac_module_path(rt, mi.module, err);
	if (!path)
		return -1;
	uint64_t code = 0;
	struct adac_error code_err = {0};
	bool code_known = adac_md_native_code(rt, md, &code, &code_err) == 0;
	char flag_names[160] = "";
	async_flag_names(mi.async_flags, flag_names, sizeof flag_names);
	const char *dyn_name = "";
	if (mi.classification == ADAC_MD_DYNAMIC) {
		dyn_name = adac_method_name(rt, md, 0, err);
		if (!dyn_name)
			return -1;
	}

	if (arr) {
		json_t *o = json_object();
		json_object_set_new(o, "method_desc", hex(md));
		json_object_set_new(o, "name", json_string(name));
		json_object_set_new(o, "sos_name", json_string(dac_name));
		json_object_set_new(o, "eeclass", hex(mt.eeclass));
		json_object_set_new(o, "method_table", hex(mi.method_table));
		json_object_set_new(o, "token", mi.token ? hex32(mi.token) : json_null());
		json_object_set_new(o, "module", hex(mi.module));
		json_object_set_new(o, "module_path", json_string(path));
		json_object_set_new(o, "classification", json_string(classification_names[mi.classification & 7]));
		json_object_set_new(o, "chunk", hex(mi.chunk));
		json_object_set_new(o, "slot", json_integer(mi.slot));
		json_object_set_new(o, "static", json_boolean(mi.is_static));
		json_object_set_new(o, "hidden", json_boolean(mi.diagnostics_hidden));
		if (mi.has_async_data) {
			json_t *a = json_object();
			json_object_set_new(a, "flags", hex32(mi.async_flags));
			json_t *names = json_array();
			for (size_t i = 0; i < sizeof async_bits / sizeof async_bits[0]; i++)
				if (mi.async_flags & async_bits[i].bit)
					json_array_append_new(names, json_string(async_bits[i].name));
			json_object_set_new(a, "names", names);
			json_object_set_new(a, "variant", json_boolean(mi.is_async_variant));
			json_object_set_new(a, "thunk", json_boolean(mi.is_async_thunk));
			json_object_set_new(o, "async", a);
		} else {
			json_object_set_new(o, "async", json_null());
		}
		if (mi.classification == ADAC_MD_INSTANTIATED) {
			json_object_set_new(o, "instantiation", json_string(imd_names[mi.imd_kind & 7]));
			json_object_set_new(o, "generic_args", json_integer(mi.num_generic_args));
		}
		if (mi.classification == ADAC_MD_DYNAMIC) {
			json_t *d = json_object();
			json_object_set_new(d, "name", json_string(dyn_name));
			json_object_set_new(d, "lcg", json_boolean(mi.is_lcg));
			json_object_set_new(d, "il_stub", json_boolean(mi.is_il_stub));
			json_object_set_new(d, "il_stub_type", json_integer(mi.il_stub_type));
			json_object_set_new(o, "dynamic", d);
		}
		json_object_set_new(o, "jitted", code_known ? json_boolean(code != 0) : json_null());
		json_object_set_new(o, "code", code_known && code ? hex(code) : json_null());
		json_array_append_new(arr, o);
		return 0;
	}

	adac_print(out, "Method Name:      %s\n", name);
	adac_print(out, "SOS Name:         %s\n", dac_name);
	adac_print(out, "MethodDesc:       0x%016llx\n", (unsigned long long)md);
	adac_print(out, "Class:            0x%016llx\n", (unsigned long long)mt.eeclass);
	adac_print(out, "MethodTable:      0x%016llx\n", (unsigned long long)mi.method_table);
	if (mi.token)
		adac_print(out, "mdToken:          0x%08x\n", mi.token);
	else
		adac_print(out, "mdToken:          none\n");
	adac_print(out, "Module:           0x%016llx%s%s%s\n", (unsigned long long)mi.module, path[0] ? " (" : "", path,
	           path[0] ? ")" : "");
	if (mi.classification == ADAC_MD_INSTANTIATED)
		adac_print(out, "Kind:             %s, %s, %u type argument%s\n", classification_names[mi.classification & 7],
		           imd_names[mi.imd_kind & 7], mi.num_generic_args, mi.num_generic_args == 1 ? "" : "s");
	else if (mi.classification == ADAC_MD_DYNAMIC)
		adac_print(out, "Kind:             %s, %s (stub type %u)\n", classification_names[mi.classification & 7],
		           mi.is_lcg ? "DynamicMethod" : mi.is_il_stub ? "IL stub" : "no metadata", mi.il_stub_type);
	else
		adac_print(out, "Kind:             %s%s\n", classification_names[mi.classification & 7],
		           mi.is_static ? ", static" : "");
	if (mi.has_async_data)
		adac_print(out, "Async:            0x%x (%s): %s\n", mi.async_flags, flag_names, async_role(&mi));
	if (mi.diagnostics_hidden)
		adac_print(out, "Hidden:           yes (%s)\n", mi.is_il_stub ? "IL stub" : "async thunk");
	if (!code_known)
		adac_print(out, "IsJitted:         unknown (%s)\n", code_err.msg);
	else if (code)
		adac_print(out, "IsJitted:         yes\nCurrent CodeAddr: 0x%016llx\n", (unsigned long long)code);
	else
		adac_print(out, "IsJitted:         no\n");
	return 0;
}

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
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "'dumpmd' needs a MethodDesc address");
	struct adac_runtime *rt = adac_runtime_open(t, err);
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
		if (dump_one(rt, md, arr, out, &one) == 0)
			continue;
		if (count == 1) {
			adac_error_copy(err, &one);
			rc = -1;
			break;
		}
		if (arr) {
			json_t *o = json_object();
			json_object_set_new(o, "method_desc", hex(md));
			json_object_set_new(o, "error", json_string(one.msg));
			json_array_append_new(arr, o);
		} else {
			adac_print(out, "MethodDesc 0x%016llx: error: %s\n", (unsigned long long)md, one.msg);
		}
		if (rc == 0) {
			adac_fail(err, one.code, one.addr, "%s", one.msg);
			rc = -1;
		}
	}
	if (arr) {
		json_t *root = json_object();
		json_object_set_new(root, "dumpmd", arr);
		if (adac_print_json(out, root, rc ? NULL : err))
			rc = -1;
	}
	adac_runtime_close(rt);
	return rc;
}
