/* frame_vars.c - the variables of a managed physical frame, read where the debug info puts them. */
#include "view/frame_vars.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/limits.h"
#include "base/output.h"
#include "code/debuginfo.h"
#include "code/execution_manager.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "code/method_vars.h"
#include "view/value_format.h"

/* A register of the frame, or why it cannot be had. */
static bool gpr(const struct adac_unwind_state *st, int32_t reg, uint64_t *v, char *why, size_t size)
{
	if (reg < 0 || reg >= 16) {
		snprintf(why, size, "<register %d does not exist>", reg);
		return false;
	}
	if (!(st->known & (1u << reg))) {
		snprintf(why, size, "<register %s is not available>", adac_reg_name((unsigned)reg));
		return false;
	}
	*v = st->gpr[reg];
	return true;
}

/* The bytes (size of them) of the variable at location v in the frame st, or why not. */
static bool read_var(struct adac_runtime *rt, const struct adac_unwind_state *st, const struct adac_native_var *v,
                     uint32_t size, uint8_t *bytes, char *why, size_t why_size)
{
	uint64_t base, addr;
	struct adac_error e = {0};
	switch (v->loc_type) {
	case ADAC_VLT_REG:
		if (size > 8) {
			snprintf(why, why_size, "<%u bytes in one register>", size);
			return false;
		}
		if (!gpr(st, v->loc[0], &base, why, why_size))
			return false;
		memcpy(bytes, &base, size); /* x86-64 is little-endian: the low bytes */
		return true;
	case ADAC_VLT_REG_FP: {
		int32_t x = v->loc[0] >= 16 ? v->loc[0] - 16 : v->loc[0];
		if (x < 0 || x >= 16 || !(st->xmm_known & (1u << x)) || size > 16) {
			snprintf(why, why_size, "<register xmm%d is not available>", x);
			return false;
		}
		memcpy(bytes, st->xmm[x], size);
		return true;
	}
	case ADAC_VLT_REG_BYREF:
		if (!gpr(st, v->loc[0], &addr, why, why_size))
			return false;
		break;
	case ADAC_VLT_STK:
	case ADAC_VLT_STK2:
		if (!gpr(st, v->loc[0], &base, why, why_size))
			return false;
		addr = base + (uint64_t)(int64_t)v->loc[1];
		break;
	case ADAC_VLT_STK_BYREF:
		if (!gpr(st, v->loc[0], &base, why, why_size))
			return false;
		if (adac_read_ptr(rt->t, base + (uint64_t)(int64_t)v->loc[1], &addr, &e)) {
			snprintf(why, why_size, "<error: %s>", e.msg);
			return false;
		}
		break;
	default:
		snprintf(why, why_size, "<variable not available>");
		return false;
	}
	if (adac_read(rt->t, addr, bytes, size, &e)) {
		snprintf(why, why_size, "<error: %s>", e.msg);
		return false;
	}
	return true;
}

static int cmp_var(const void *a, const void *b)
{
	int32_t x = (*(const struct adac_native_var *const *)a)->var_number;
	int32_t y = (*(const struct adac_native_var *const *)b)->var_number;
	return (x > y) - (x < y);
}

static const char *kind_name(enum adac_var_kind k)
{
	return k == ADAC_VAR_THIS ? "this" : k == ADAC_VAR_ARG ? "argument" : "local";
}

int adac_frame_vars_print(struct adac_runtime *rt, const struct adac_unwind_state *st, bool caller, const char *indent,
                          struct adac_out *out, json_t **json, struct adac_error *err)
{
	struct adac_code_info code;
	const struct adac_debug_info *di = NULL;
	struct adac_error e = {0};
	struct adac_method_vars mv;
	if (json)
		*json = NULL;
	if (adac_em_find_code(rt, st->rip, &code, &e) || !code.method_desc || !code.debug_info ||
	    adac_debuginfo_get(rt, &code, &di, &e) || adac_method_vars_init(rt, code.method_desc, &mv, &e)) {
		if (!e.msg[0])
			snprintf(e.msg, sizeof e.msg, "the code has no debug info");
		if (json) {
			*json = json_object();
			json_object_set_new(*json, "error", adac_json_text(e.msg));
		} else {
			adac_print(out, "%s(no locals: %s)\n", indent, e.msg);
		}
		return 0;
	}
	uint32_t off = (uint32_t)code.offset - (caller && code.offset ? 1u : 0u);
	uint32_t il = adac_debuginfo_il_offset(di, off, NULL);
	/* Each variable once: its record live at off, else any (then it is not live here). */
	const struct adac_native_var **order = calloc(di->num_vars + 1, sizeof *order);
	if (!order) {
		adac_method_vars_free(&mv);
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	}
	size_t n = 0;
	for (uint32_t i = 0; i < di->num_vars; i++)
		if (di->vars[i].var_number >= 0)
			order[n++] = &di->vars[i];
	qsort(order, n, sizeof *order, cmp_var);
	json_t *arr = json ? json_array() : NULL;
	struct adac_value_opts vo;
	adac_value_opts_default(&vo);
	for (size_t i = 0; i < n;) {
		int32_t vn = order[i]->var_number;
		const struct adac_native_var *live = NULL;
		for (; i < n && order[i]->var_number == vn; i++)
			if (order[i]->start_offset <= off && off < order[i]->end_offset && !live)
				live = order[i];
		struct adac_method_var v;
		adac_error_clear(&e);
		if (adac_method_var(rt, &mv, vn, il, &v, &e))
			continue; /* a number past the signatures: nothing to name it by */
		struct adac_sig_text text = {0};
		char why[ADAC_ERROR_MSG_MAX + 16] = "<variable not available>";
		uint8_t bytes[ADAC_MAX_VALUE_BYTES < 4096 ? ADAC_MAX_VALUE_BYTES : 4096];
		json_t *value = NULL;
		bool have = false;
		if (v.error) {
			snprintf(why, sizeof why, "<error: %s>", v.error);
		} else if (v.type.size == 0 || v.type.size > sizeof bytes) {
			snprintf(why, sizeof why, "<a value of %u bytes>", v.type.size);
		} else if (live && read_var(rt, st, live, v.type.size, bytes, why, sizeof why)) {
			have = adac_value_format(rt, &v.type, bytes, &vo, &text, json ? &value : NULL, &e) == 0;
			if (!have)
				snprintf(why, sizeof why, "<error: %s>", e.msg);
		}
		const char *shown = have ? adac_sig_text_str(&text) : why;
		if (json) {
			/* (Names from the PDB and metadata: not always UTF-8.) */
			json_t *j = json_object();
			json_object_set_new(j, "name", adac_json_text(v.name));
			json_object_set_new(j, "kind", json_string(kind_name(v.kind)));
			json_object_set_new(j, "type", adac_json_text(v.type.name ? v.type.name : "?"));
			json_object_set_new(j, "value", value ? value : adac_json_text(shown));
			json_array_append_new(arr, j);
		} else {
			adac_print(out, "%s(%s) %s = %s\n", indent, v.type.name ? v.type.name : "?", v.name, shown);
		}
		adac_sig_text_free(&text);
		adac_method_var_free(&v);
	}
	free(order);
	adac_method_vars_free(&mv);
	if (json)
		*json = arr;
	return 0;
}
