/* locals_view.c - the awaited locals as text lines and JSON. */
#include "view/locals_view.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "async/async_frame.h"
#include "async/continuation.h"
#include "base/cursor.h"
#include "base/json.h"
#include "base/limits.h"
#include "base/output.h"
#include "types/methoddesc.h"
#include "types/names.h"

#define NONE ADAC_LOCAL_NONE

static json_t *json_hex(uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof buf, "0x%016llx", (unsigned long long)v);
	return adac_json_text(buf);
}

static bool matches(const struct adac_local *v, const char *name)
{
	return !name || (v->name && strcmp(v->name, name) == 0);
}

static bool bracketed(const struct adac_local *v)
{
	return v->kind == ADAC_LOCAL_SLOT || v->kind == ADAC_LOCAL_SPECIAL || v->kind == ADAC_LOCAL_GENERIC_CONTEXT;
}

static uint64_t raw_ptr(const struct adac_local *v)
{
	return v->type.size == 8 ? adac_get_u64(v->bytes, 0) : adac_get_u32(v->bytes, 0);
}

/* "0x00001010 { ContinueOnThreadPool, ExecutionContext = 1, Result = 2 }" */
static int flags_text(struct adac_runtime *rt, uint32_t flags, struct adac_sig_text *text, struct adac_error *err)
{
	const struct adac_cont_flags *fl;
	if (adac_sig_text_putf(text, err, "0x%08x", flags))
		return -1;
	if (adac_cont_flags(rt, &fl, NULL))
		return 0; /* (the collection said why on the line instead) */
	if (adac_sig_text_put(text, " {", err))
		return -1;
	unsigned parts = 0;
	for (unsigned i = 0; i < fl->nnames; i++)
		if ((flags & fl->value[i]) && adac_sig_text_putf(text, err, "%s %s", parts++ ? "," : "", fl->name[i]))
			return -1;
	for (int i = 0; i < ADAC_CONT_SLOT_COUNT; i++) {
		uint32_t index = adac_cont_flags_index(fl, flags, (enum adac_cont_slot)i);
		if (index && adac_sig_text_putf(text, err, "%s %s = %u", parts++ ? "," : "",
		                                adac_cont_slot_name((enum adac_cont_slot)i), index))
			return -1;
	}
	if (adac_sig_text_put(text, parts ? " }" : "}", err))
		return -1;
	if (fl->names_cut)
		return adac_sig_text_putf(text, err,
		                          " (ContinuationFlags has more single-bit members than ADAC_MAX_FLAG_NAMES (%u): only "
		                          "the first are named)",
		                          ADAC_MAX_FLAG_NAMES);
	return 0;
}

/* The generic context pointer, and what it names. */
static int context_text(struct adac_runtime *rt, uint64_t p, struct adac_sig_text *text, struct adac_error *err)
{
	const char *what = NULL;
	struct adac_mt_info mi;
	struct adac_method_info mdi;
	if (p && adac_mt_read(rt, p, &mi, NULL) == 0)
		what = adac_type_name(rt, p, 0, NULL);
	else if (p && adac_md_read(rt, p, &mdi, NULL) == 0)
		what = adac_method_name(rt, p, ADAC_NAME_PARAMS, NULL);
	return adac_sig_text_putf(text, err, "0x%016llx%s%s", (unsigned long long)p, what ? " " : "", what ? what : "");
}

/* The value part of a line, and its JSON. */
static int value_of(struct adac_runtime *rt, const struct adac_local *v, const struct adac_value_opts *o,
                    struct adac_sig_text *text, json_t **json, struct adac_error *err)
{
	if (json)
		*json = NULL;
	if (v->error || !v->bytes) {
		if (json)
			*json = json_null();
		return v->error ? adac_sig_text_putf(text, err, "<error: %s>", v->error) : adac_sig_text_put(text, "<not read>", err);
	}
	if (v->kind == ADAC_LOCAL_SLOT && v->slot == ADAC_LOCAL_FLAGS) {
		uint32_t flags = adac_get_u32(v->bytes, 0);
		if (json)
			*json = json_integer(flags);
		return flags_text(rt, flags, text, err);
	}
	if (v->kind == ADAC_LOCAL_SLOT && v->slot == ADAC_CONT_SLOT_RESULT) {
		/* its raw contents: the type is the awaited call's, which the continuation does not record */
		uint64_t p = raw_ptr(v);
		if (json)
			*json = json_hex(p);
		return adac_sig_text_putf(text, err, "0x%016llx (slot %u at 0x%016llx; written when the awaited call completes)",
		                          (unsigned long long)p, v->slot_index, (unsigned long long)v->address);
	}
	if (v->kind == ADAC_LOCAL_GENERIC_CONTEXT) {
		if (context_text(rt, raw_ptr(v), text, err))
			return -1;
		if (json)
			*json = adac_json_text(adac_sig_text_str(text));
		return 0;
	}
	return adac_value_format(rt, &v->type, v->bytes, o, text, json, err);
}

static const char *kind_name(enum adac_local_kind k)
{
	switch (k) {
	case ADAC_LOCAL_THIS: return "this";
	case ADAC_LOCAL_ARG: return "arg";
	case ADAC_LOCAL_LOCAL: return "local";
	case ADAC_LOCAL_GENERIC_CONTEXT: return "generic_context";
	case ADAC_LOCAL_SPECIAL: return "special";
	default: return "slot";
	}
}

/* The order locals are shown in: this, arguments and the source's locals, then the compiler's
 * temporaries, then the continuation's internals (flags, saved contexts, result slot). */
static int rank(const struct adac_local *v)
{
	return bracketed(v) ? 2 : v->temporary ? 1 : 0;
}

int adac_locals_print(struct adac_runtime *rt, const struct adac_locals *l, const char *name, const char *indent,
                      const struct adac_value_opts *o, struct adac_out *out, struct adac_error *err)
{
	size_t shown = 0, hidden = 0;
	for (size_t k = 0; k < 3 * l->n; k++) {
		const struct adac_local *v = &l->v[k % l->n];
		if (rank(v) != (int)(k / l->n) || !matches(v, name))
			continue;
		/* A variable asked for by name is shown whatever it is. */
		if (!name && rank(v) && !o->internals) {
			hidden++;
			continue;
		}
		struct adac_sig_text text = {0};
		if (value_of(rt, v, o, &text, NULL, err)) {
			adac_sig_text_free(&text);
			return -1;
		}
		if (bracketed(v))
			adac_print(out, "%s[%s] = %s\n", indent, v->name, adac_sig_text_str(&text));
		else
			adac_print(out, "%s(%s) %s = %s\n", indent, v->type.name ? v->type.name : "?", v->name,
			           adac_sig_text_str(&text));
		adac_sig_text_free(&text);
		shown++;
	}
	if (name && !shown)
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "no variable named '%s' at this await", name);
	if (!name && !shown && !hidden)
		adac_print(out, "%s(no locals: the suspension point saves no variables)\n", indent);
	if (hidden)
		adac_print(out, "%s(%zu more: compiler temporaries and continuation internals; --internals shows them)\n",
		           indent, hidden);
	return 0;
}

json_t *adac_locals_json(struct adac_runtime *rt, const struct adac_locals *l, const char *name,
                         const struct adac_value_opts *o, struct adac_error *err)
{
	json_t *arr = json_array();
	size_t shown = 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct adac_local *v = &l->v[i];
		if (!matches(v, name))
			continue;
		struct adac_sig_text text = {0};
		json_t *val = NULL;
		if (value_of(rt, v, o, &text, &val, err)) {
			adac_sig_text_free(&text);
			json_decref(val);
			json_decref(arr);
			return NULL;
		}
		json_t *j = json_object();
		json_object_set_new(j, "name", adac_json_text(v->name ? v->name : ""));
		json_object_set_new(j, "kind", adac_json_text(kind_name(v->kind)));
		if (v->kind != ADAC_LOCAL_SLOT) {
			json_object_set_new(j, "var_number", json_integer(v->var_number));
			if (v->kind == ADAC_LOCAL_THIS || v->kind == ADAC_LOCAL_ARG || v->kind == ADAC_LOCAL_LOCAL)
				json_object_set_new(j, "index", json_integer(v->index));
			if (v->kind == ADAC_LOCAL_LOCAL)
				json_object_set_new(j, "temporary", json_boolean(v->temporary));
		}
		json_object_set_new(j, "type", v->type.name ? adac_json_text(v->type.name) : json_null());
		json_object_set_new(j, "offset", v->offset != NONE ? json_integer(v->offset) : json_null());
		if (l->layout == ADAC_CONT_ARRAY && v->kind != ADAC_LOCAL_SLOT)
			json_object_set_new(j, "gc_index", v->gc_index != NONE ? json_integer(v->gc_index) : json_null());
		json_object_set_new(j, "address", v->address ? json_hex(v->address) : json_null());
		json_object_set_new(j, "value", val ? val : json_null());
		json_object_set_new(j, "text", adac_json_text(adac_sig_text_str(&text)));
		if (v->error)
			json_object_set_new(j, "error", adac_json_text(v->error));
		adac_sig_text_free(&text);
		json_array_append_new(arr, j);
		shown++;
	}
	if (name && !shown) {
		json_decref(arr);
		adac_fail(err, ADAC_E_NOT_FOUND, 0, "no variable named '%s' at this await", name);
		return NULL;
	}
	return arr;
}

/* Failures that mean "nothing to show here" rather than "something is wrong". */
static bool no_info(const struct adac_error *e)
{
	return e->code == ADAC_E_NOT_FOUND || e->code == ADAC_E_UNSUPPORTED;
}

int adac_frame_locals_print(struct adac_runtime *rt, const struct adac_async_frame *f, const char *name,
                            const char *indent, bool internals, struct adac_out *out, struct adac_error *err)
{
	struct adac_locals l;
	struct adac_error e = {0};
	if (adac_frame_locals_collect(rt, f, &l, &e)) {
		if (no_info(&e) && !name) {
			adac_print(out, "%s(no locals: %s)\n", indent, e.msg);
			return 0;
		}
		if (err)
			adac_error_copy(err, &e);
		return -1;
	}
	struct adac_value_opts o;
	adac_value_opts_default(&o);
	o.internals = internals;
	int rc = adac_locals_print(rt, &l, name, indent, &o, out, err);
	adac_locals_free(&l);
	return rc;
}

json_t *adac_frame_locals_json(struct adac_runtime *rt, const struct adac_async_frame *f, struct adac_error *err)
{
	struct adac_locals l;
	if (adac_frame_locals_collect(rt, f, &l, err))
		return NULL;
	struct adac_value_opts o;
	adac_value_opts_default(&o);
	json_t *j = adac_locals_json(rt, &l, NULL, &o, err);
	adac_locals_free(&l);
	return j;
}
