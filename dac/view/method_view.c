/* method_view.c - `dumpmd`'s text and JSON. */
#include "view/method_view.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "base/output.h"
#include "types/methoddesc.h"
#include "types/names.h"

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

static json_t *hex32(uint32_t v)
{
	char buf[16];
	snprintf(buf, sizeof buf, "0x%08x", v);
	return adac_json_text(buf);
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

/* Everything shown of a MethodDesc, read before anything is printed. */
struct facts {
	struct adac_method_info mi;
	struct adac_mt_info mt;
	const char *name, *dac_name, *path;
	const char *dyn_name;         /* DYNAMIC: the stub's own name; "" otherwise */
	bool code_known;
	uint64_t code;
	struct adac_error code_err;   /* why the code is not known */
};

static int read_facts(struct adac_runtime *rt, uint64_t md, struct facts *f, struct adac_error *err)
{
	memset(f, 0, sizeof *f);
	if (adac_md_read(rt, md, &f->mi, err) || adac_mt_read(rt, f->mi.method_table, &f->mt, err))
		return -1;
	if (!(f->name = adac_method_name(rt, md, ADAC_NAME_PARAMS, err)) ||
	    !(f->dac_name = adac_method_name(rt, md, ADAC_NAME_PARAMS | ADAC_NAME_DAC, err)) ||
	    !(f->path = adac_module_path(rt, f->mi.module, err)))
		return -1;
	f->code_known = adac_md_native_code(rt, md, &f->code, &f->code_err) == 0;
	f->dyn_name = "";
	if (f->mi.classification == ADAC_MD_DYNAMIC && !(f->dyn_name = adac_method_name(rt, md, 0, err)))
		return -1;
	return 0;
}

json_t *adac_method_desc_json(struct adac_runtime *rt, uint64_t md, struct adac_error *err)
{
	struct facts f;
	if (read_facts(rt, md, &f, err))
		return NULL;
	const struct adac_method_info *mi = &f.mi;
	json_t *o = json_object();
	json_object_set_new(o, "method_desc", adac_json_addr(md));
	json_object_set_new(o, "name", adac_json_text(f.name));
	json_object_set_new(o, "sos_name", adac_json_text(f.dac_name));
	json_object_set_new(o, "eeclass", adac_json_addr(f.mt.eeclass));
	json_object_set_new(o, "method_table", adac_json_addr(mi->method_table));
	json_object_set_new(o, "token", mi->token ? hex32(mi->token) : json_null());
	json_object_set_new(o, "module", adac_json_addr(mi->module));
	json_object_set_new(o, "module_path", adac_json_text(f.path));
	json_object_set_new(o, "classification", adac_json_text(classification_names[mi->classification & 7]));
	json_object_set_new(o, "chunk", adac_json_addr(mi->chunk));
	json_object_set_new(o, "slot", json_integer(mi->slot));
	json_object_set_new(o, "static", json_boolean(mi->is_static));
	json_object_set_new(o, "hidden", json_boolean(mi->diagnostics_hidden));
	if (mi->has_async_data) {
		json_t *a = json_object();
		json_object_set_new(a, "flags", hex32(mi->async_flags));
		json_t *names = json_array();
		for (size_t i = 0; i < sizeof async_bits / sizeof async_bits[0]; i++)
			if (mi->async_flags & async_bits[i].bit)
				json_array_append_new(names, adac_json_text(async_bits[i].name));
		json_object_set_new(a, "names", names);
		json_object_set_new(a, "variant", json_boolean(mi->is_async_variant));
		json_object_set_new(a, "thunk", json_boolean(mi->is_async_thunk));
		json_object_set_new(o, "async", a);
	} else {
		json_object_set_new(o, "async", json_null());
	}
	if (mi->classification == ADAC_MD_INSTANTIATED) {
		json_object_set_new(o, "instantiation", adac_json_text(imd_names[mi->imd_kind & 7]));
		json_object_set_new(o, "generic_args", json_integer(mi->num_generic_args));
	}
	if (mi->classification == ADAC_MD_DYNAMIC) {
		json_t *d = json_object();
		json_object_set_new(d, "name", adac_json_text(f.dyn_name));
		json_object_set_new(d, "lcg", json_boolean(mi->is_lcg));
		json_object_set_new(d, "il_stub", json_boolean(mi->is_il_stub));
		json_object_set_new(d, "il_stub_type", json_integer(mi->il_stub_type));
		json_object_set_new(o, "dynamic", d);
	}
	json_object_set_new(o, "jitted", f.code_known ? json_boolean(f.code != 0) : json_null());
	json_object_set_new(o, "code", f.code_known && f.code ? adac_json_addr(f.code) : json_null());
	return o;
}

int adac_method_desc_print(struct adac_runtime *rt, uint64_t md, struct adac_out *out, struct adac_error *err)
{
	struct facts f;
	if (read_facts(rt, md, &f, err))
		return -1;
	const struct adac_method_info *mi = &f.mi;
	const char *kind = classification_names[mi->classification & 7];
	adac_print(out, "Method Name:      %s\n", f.name);
	adac_print(out, "SOS Name:         %s\n", f.dac_name);
	adac_print(out, "MethodDesc:       0x%016llx\n", (unsigned long long)md);
	adac_print(out, "Class:            0x%016llx\n", (unsigned long long)f.mt.eeclass);
	adac_print(out, "MethodTable:      0x%016llx\n", (unsigned long long)mi->method_table);
	if (mi->token)
		adac_print(out, "mdToken:          0x%08x\n", mi->token);
	else
		adac_print(out, "mdToken:          none\n");
	adac_print(out, "Module:           0x%016llx%s%s%s\n", (unsigned long long)mi->module, f.path[0] ? " (" : "", f.path,
	           f.path[0] ? ")" : "");
	if (mi->classification == ADAC_MD_INSTANTIATED)
		adac_print(out, "Kind:             %s, %s, %u type argument%s\n", kind, imd_names[mi->imd_kind & 7],
		           mi->num_generic_args, mi->num_generic_args == 1 ? "" : "s");
	else if (mi->classification == ADAC_MD_DYNAMIC)
		adac_print(out, "Kind:             %s, %s (stub type %u)\n", kind,
		           mi->is_lcg ? "DynamicMethod" : mi->is_il_stub ? "IL stub" : "no metadata", mi->il_stub_type);
	else
		adac_print(out, "Kind:             %s%s\n", kind, mi->is_static ? ", static" : "");
	if (mi->has_async_data) {
		char flag_names[160];
		async_flag_names(mi->async_flags, flag_names, sizeof flag_names);
		adac_print(out, "Async:            0x%x (%s): %s\n", mi->async_flags, flag_names, async_role(mi));
	}
	if (mi->diagnostics_hidden)
		adac_print(out, "Hidden:           yes (%s)\n", mi->is_il_stub ? "IL stub" : "async thunk");
	if (!f.code_known)
		adac_print(out, "IsJitted:         unknown (%s)\n", f.code_err.msg);
	else if (f.code)
		adac_print(out, "IsJitted:         yes\nCurrent CodeAddr: 0x%016llx\n", (unsigned long long)f.code);
	else
		adac_print(out, "IsJitted:         no\n");
	return 0;
}

void adac_method_desc_print_error(uint64_t md, const struct adac_error *e, struct adac_out *out)
{
	adac_print(out, "MethodDesc 0x%016llx: error: %s\n", (unsigned long long)md, e->msg);
}

json_t *adac_method_desc_error_json(uint64_t md, const struct adac_error *e)
{
	json_t *o = json_object();
	json_object_set_new(o, "method_desc", adac_json_addr(md));
	json_object_set_new(o, "error", adac_json_text(e->msg));
	return o;
}
