/* debuginfo_view.c - decoded debug info, one item per line. */
#include "view/debuginfo_view.h"

#include <stdio.h>

#include "base/output.h"
#include "code/debuginfo.h"

static const char *il_name(uint32_t il, char *buf, size_t n)
{
	switch (il) {
	case ADAC_IL_NO_MAPPING: return "NO_MAPPING";
	case ADAC_IL_PROLOG: return "PROLOG";
	case ADAC_IL_EPILOG: return "EPILOG";
	default: snprintf(buf, n, "0x%04x", il); return buf;
	}
}

static const char *var_name(int32_t v, char *buf, size_t n)
{
	switch (v) {
	case ADAC_ILNUM_VARARGS_HND: return "VARARGS_HND";
	case ADAC_ILNUM_RETBUF: return "RETBUF";
	case ADAC_ILNUM_TYPECTXT: return "TYPECTXT";
	case ADAC_ILNUM_UNKNOWN: return "UNKNOWN";
	case ADAC_ILNUM_CALL_RETURN: return "CALL_RETURN";
	default: snprintf(buf, n, "%d", v); return buf;
	}
}

static void print_source(struct adac_out *out, uint32_t s)
{
	if (!s) {
		adac_print(out, "-");
		return;
	}
	const char *sep = "";
	if (s & ADAC_SRC_CALL_INSTRUCTION) {
		adac_print(out, "%sCALL_INSTRUCTION", sep);
		sep = "|";
	}
	if (s & ADAC_SRC_STACK_EMPTY) {
		adac_print(out, "%sSTACK_EMPTY", sep);
		sep = "|";
	}
	if (s & ADAC_SRC_ASYNC)
		adac_print(out, "%sASYNC", sep);
}

static void print_varloc(struct adac_out *out, const struct adac_native_var *v)
{
	static const char *const names[] = {"REG", "REG_BYREF", "REG_FP", "STK", "STK_BYREF", "REG_REG", "REG_STK",
	                                    "STK_REG", "STK2", "FPSTK", "FIXED_VA", "COUNT", "INVALID"};
	adac_print(out, "%s", v->loc_type < 13 ? names[v->loc_type] : "?");
	switch (v->loc_type) {
	case ADAC_VLT_REG:
	case ADAC_VLT_REG_FP:
	case ADAC_VLT_REG_BYREF: adac_print(out, " reg=%d", v->loc[0]); break;
	case ADAC_VLT_STK:
	case ADAC_VLT_STK_BYREF:
	case ADAC_VLT_STK2: adac_print(out, " base=%d off=%d", v->loc[0], v->loc[1]); break;
	case ADAC_VLT_REG_REG: adac_print(out, " reg1=%d reg2=%d", v->loc[0], v->loc[1]); break;
	case ADAC_VLT_REG_STK: adac_print(out, " reg=%d base=%d off=%d", v->loc[0], v->loc[1], v->loc[2]); break;
	case ADAC_VLT_STK_REG: adac_print(out, " off=%d base=%d reg=%d", v->loc[0], v->loc[1], v->loc[2]); break;
	case ADAC_VLT_FPSTK: adac_print(out, " fpreg=%u", (uint32_t)v->loc[0]); break;
	case ADAC_VLT_FIXED_VA: adac_print(out, " offset=%u", (uint32_t)v->loc[0]); break;
	default: break;
	}
}

void adac_debuginfo_dump(const struct adac_debug_info *di, struct adac_out *out)
{
	const struct adac_debuginfo_header *h = &di->hdr;
	char b1[32];
	if (h->has_flag_byte)
		adac_print(out, "header flag_byte=0x%02x patchpoint=%u rich=%u bounds=%u uninstrumented=%u vars=%u",
		           h->flag_byte, h->cb_patchpoint, h->cb_rich, h->cb_bounds, h->cb_uninstrumented_bounds, h->cb_vars);
	else
		adac_print(out, "header %s bounds=%u vars=%u uninstrumented=%u patchpoint=%u rich=%u async=%u",
		           h->fat ? "fat" : "thin", h->cb_bounds, h->cb_vars, h->cb_uninstrumented_bounds, h->cb_patchpoint,
		           h->cb_rich, h->cb_async);
	adac_print(out, " header_bytes=%u total=%u\n", h->header_bytes, h->total_bytes);
	adac_print(out, "bounds %u\n", di->num_bounds);
	for (uint32_t i = 0; i < di->num_bounds; i++) {
		const struct adac_bound *b = &di->bounds[i];
		adac_print(out, "  native=0x%04x il=%s source=", b->native_offset, il_name(b->il_offset, b1, sizeof b1));
		print_source(out, b->source);
		adac_print(out, "\n");
	}
	adac_print(out, "vars %u\n", di->num_vars);
	for (uint32_t i = 0; i < di->num_vars; i++) {
		const struct adac_native_var *v = &di->vars[i];
		adac_print(out, "  var=%s [0x%04x,0x%04x) ", var_name(v->var_number, b1, sizeof b1), v->start_offset,
		           v->end_offset);
		if (v->var_number == ADAC_ILNUM_CALL_RETURN)
			adac_print(out, "call_il=0x%04x ", v->call_il_offset);
		print_varloc(out, v);
		adac_print(out, "\n");
	}
	adac_print(out, "async points=%u vars=%u\n", di->num_suspension_points, di->num_async_vars);
	for (uint32_t i = 0; i < di->num_suspension_points; i++) {
		const struct adac_suspension_point *sp = &di->suspension_points[i];
		adac_print(out, "  sp %u native=0x%04x vars=%u\n", i, sp->diagnostic_native_offset, sp->num_vars);
		for (uint32_t j = 0; j < sp->num_vars; j++)
			adac_print(out, "    var=%s offset=0x%x\n", var_name(sp->vars[j].var_number, b1, sizeof b1),
			           sp->vars[j].offset);
	}
}
