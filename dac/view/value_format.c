/* value_format.c - managed values formatted like LLDB's `frame variable`, and as JSON. */
#include "view/value_format.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async/task.h"
#include "base/cursor.h"
#include "base/json.h"
#include "base/limits.h"
#include "metadata/ecma_metadata.h"
#include "runtime/descriptor.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/methoddesc.h"
#include "types/names.h"
#include "types/typename.h"


void adac_value_opts_default(struct adac_value_opts *o)
{
	o->max_depth = ADAC_VALUE_DEFAULT_DEPTH;
	o->max_elements = ADAC_VALUE_DEFAULT_ELEMENTS;
	o->max_string = ADAC_VALUE_DEFAULT_STRING;
	o->internals = false;
}

/* ---- Runtime facts used while formatting ---- */

struct vf {
	struct adac_runtime *rt;
	const struct adac_value_opts *o;
	unsigned ps;
	uint32_t str_len_off, str_chars_off;
	uint32_t arr_len_off;
};

int adac_value_layout(struct adac_runtime *rt, struct adac_value_layout *out, struct adac_error *err)
{
	const struct adac_object_layout *l;
	if (adac_object_layout(rt, &l, err))
		return -1;
	if (!l->has_string || !l->has_array)
		return adac_fail(err, ADAC_E_LAYOUT, 0, "the runtime's descriptor does not describe %s",
		                 l->has_string ? "Array.m_NumComponents" : "String.m_StringLength/m_FirstChar");
	out->str_len_off = l->str_len_off;
	out->str_chars_off = l->str_chars_off;
	out->arr_len_off = l->arr_len_off;
	return 0;
}

static int vf_init(struct adac_runtime *rt, const struct adac_value_opts *o, struct vf *v, struct adac_error *err)
{
	memset(v, 0, sizeof *v);
	v->rt = rt;
	v->o = o;
	v->ps = adac_target_ptr_size(rt->t);
	struct adac_value_layout l;
	if (adac_value_layout(rt, &l, err))
		return -1;
	v->str_len_off = l.str_len_off;
	v->str_chars_off = l.str_chars_off;
	v->arr_len_off = l.arr_len_off;
	return 0;
}

/* A type's name as variables show it (C# style); NULL with err when it cannot be named. */
static const char *type_name(struct vf *v, uint64_t th, struct adac_error *err)
{
	return adac_type_name(v->rt, th, ADAC_NAME_CSHARP, err);
}

/* ---- Formatting ---- */

struct out {
	struct adac_sig_text *text;
	json_t **json;   /* NULL: no JSON wanted */
};

static int put(struct out *o, struct adac_error *err, const char *s) { return adac_sig_text_put(o->text, s, err); }

static void set_json(struct out *o, json_t *v)
{
	if (o->json)
		*o->json = v;
	else
		json_decref(v);
}

/* "<error: ...>" in place of a part that could not be read. */
static int put_error(struct out *o, const struct adac_error *e, struct adac_error *err)
{
	if (adac_sig_text_putf(o->text, err, "<error: %s>", e->msg))
		return -1;
	if (o->json) {
		json_t *j = json_object();
		json_object_set_new(j, "error", adac_json_text(e->msg));
		*o->json = j;
	}
	return 0;
}

static void fmt_real(double d, bool single, char *buf, size_t n)
{
	if (isnan(d)) {
		snprintf(buf, n, "NaN");
		return;
	}
	if (isinf(d)) {
		snprintf(buf, n, d > 0 ? "Infinity" : "-Infinity");
		return;
	}
	for (int p = 1; p <= 17; p++) {
		snprintf(buf, n, "%.*g", p, d);
		if (single ? strtof(buf, NULL) == (float)d : strtod(buf, NULL) == d)
			return;
	}
}

static int utf8_put(char *b, uint32_t cp)
{
	if (cp < 0x80) {
		b[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		b[0] = (char)(0xc0 | (cp >> 6));
		b[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		b[0] = (char)(0xe0 | (cp >> 12));
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	b[0] = (char)(0xf0 | (cp >> 18));
	b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	b[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* UTF-16 to UTF-8: `escaped` with C escapes for quote (q) and control characters and \uXXXX for
 * lone surrogates; `raw` plain (lone surrogates as U+FFFD), for JSON. Either may be NULL. */
static int utf16_convert(const uint16_t *w, size_t n, char q, struct adac_sig_text *escaped, struct adac_sig_text *raw,
                         struct adac_error *err)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t cp = w[i];
		bool lone = false;
		if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < n && w[i + 1] >= 0xdc00 && w[i + 1] <= 0xdfff) {
			cp = 0x10000 + ((cp - 0xd800) << 10) + (w[i + 1] - 0xdc00);
			i++;
		} else if (cp >= 0xd800 && cp <= 0xdfff) {
			lone = true;
		}
		char b[8];
		int len = utf8_put(b, lone ? 0xfffd : cp);
		if (raw && adac_sig_text_putn(raw, b, (size_t)len, err))
			return -1;
		if (!escaped)
			continue;
		int rc;
		if (cp == (uint32_t)q || cp == '\\')
			rc = adac_sig_text_putf(escaped, err, "\\%c", (char)cp);
		else if (cp == '\n')
			rc = adac_sig_text_put(escaped, "\\n", err);
		else if (cp == '\r')
			rc = adac_sig_text_put(escaped, "\\r", err);
		else if (cp == '\t')
			rc = adac_sig_text_put(escaped, "\\t", err);
		else if (cp == 0)
			rc = adac_sig_text_put(escaped, "\\0", err);
		else if (lone || cp < 0x20 || cp == 0x7f)
			rc = adac_sig_text_putf(escaped, err, "\\u%04x", cp);
		else
			rc = adac_sig_text_putn(escaped, b, (size_t)len, err);
		if (rc)
			return -1;
	}
	return 0;
}

/* The little-endian integer of w bytes (1, 2, 4 or 8) at b, sign-extended when is_signed (else its
 * bits, zero-extended). */
static int64_t get_int(const uint8_t *b, uint32_t w, bool is_signed)
{
	switch (w) {
	case 1: return is_signed ? (int8_t)b[0] : (int64_t)b[0];
	case 2: return is_signed ? (int16_t)adac_get_u16(b, 0) : (int64_t)adac_get_u16(b, 0);
	case 4: return is_signed ? (int32_t)adac_get_u32(b, 0) : (int64_t)adac_get_u32(b, 0);
	default: return (int64_t)adac_get_u64(b, 0);
	}
}

static int fmt_prim(struct out *o, uint8_t elem, uint32_t size, const uint8_t *b, struct adac_error *err)
{
	char buf[64];
	json_t *j = NULL;
	switch (elem) {
	case ADAC_ELEM_BOOLEAN:
		snprintf(buf, sizeof buf, "%s", b[0] ? "true" : "false");
		if (b[0] > 1)
			snprintf(buf, sizeof buf, "true (0x%02x)", b[0]);
		j = json_boolean(b[0]);
		break;
	case ADAC_ELEM_CHAR: {
		uint16_t c = adac_get_u16(b, 0);
		struct adac_sig_text esc = {0}, raw = {0};
		if (utf16_convert(&c, 1, '\'', &esc, &raw, err)) {
			adac_sig_text_free(&esc);
			adac_sig_text_free(&raw);
			return -1;
		}
		int rc = adac_sig_text_putf(o->text, err, "'%s'", adac_sig_text_str(&esc));
		if (o->json) {
			j = json_object();
			json_object_set_new(j, "char", adac_json_text(adac_sig_text_str(&raw)));
			json_object_set_new(j, "code", json_integer(c));
			*o->json = j;
		}
		adac_sig_text_free(&esc);
		adac_sig_text_free(&raw);
		return rc;
	}
	case ADAC_ELEM_I1:
	case ADAC_ELEM_I2:
	case ADAC_ELEM_I4:
	case ADAC_ELEM_I8:
	case ADAC_ELEM_I: {
		int64_t v = get_int(b, adac_vtype_prim_size(elem, size == 4 ? 4 : 8), true);
		snprintf(buf, sizeof buf, "%lld", (long long)v);
		j = json_integer(v);
		break;
	}
	case ADAC_ELEM_U1:
	case ADAC_ELEM_U2:
	case ADAC_ELEM_U4:
	case ADAC_ELEM_U8:
	case ADAC_ELEM_U: {
		uint64_t v = (uint64_t)get_int(b, adac_vtype_prim_size(elem, size == 4 ? 4 : 8), false);
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
		j = v <= INT64_MAX ? json_integer((json_int_t)v) : adac_json_text(buf);
		break;
	}
	case ADAC_ELEM_R4: {
		float f;
		memcpy(&f, b, 4);
		fmt_real(f, true, buf, sizeof buf);
		j = isfinite(f) ? json_real(f) : adac_json_text(buf);
		break;
	}
	case ADAC_ELEM_R8: {
		double d;
		memcpy(&d, b, 8);
		fmt_real(d, false, buf, sizeof buf);
		j = isfinite(d) ? json_real(d) : adac_json_text(buf);
		break;
	}
	default:
		snprintf(buf, sizeof buf, "<element type 0x%02x>", elem);
		j = json_null();
		break;
	}
	set_json(o, j);
	return put(o, err, buf);
}

/* An enum's or a constant's integer of type elem (native-sized ones read as 8 bytes). */
static int64_t int_value(uint8_t elem, const uint8_t *b, bool *is_unsigned)
{
	switch (elem) {
	case ADAC_ELEM_BOOLEAN: case ADAC_ELEM_U1: case ADAC_ELEM_CHAR: case ADAC_ELEM_U2: case ADAC_ELEM_U4:
	case ADAC_ELEM_U8: case ADAC_ELEM_U:
		*is_unsigned = true;
		break;
	default:
		*is_unsigned = false;
	}
	return get_int(b, adac_vtype_prim_size(elem, 8), !*is_unsigned);
}

struct enum_name {
	uint64_t bits;
	const char *exact;
	struct adac_sig_text names;
	uint64_t covered;
	unsigned parts;
};

static int enum_name_visit(void *ctx, const char *name, int64_t value, uint64_t bits, struct adac_error *err)
{
	struct enum_name *e = ctx;
	(void)value;
	if (bits == e->bits) {
		e->exact = name;
		return 1;
	}
	if (bits && (bits & e->bits) == bits) {
		if ((e->parts++ && adac_sig_text_put(&e->names, " | ", err)) || adac_sig_text_put(&e->names, name, err))
			return -1;
		e->covered |= bits;
	}
	return 0;
}

/* The literal fields of an enum with their values, for naming a value. */
static int fmt_enum(struct vf *v, struct out *o, const struct adac_vtype *t, const uint8_t *b, struct adac_error *err)
{
	bool uns;
	int64_t val = int_value(t->elem, b, &uns);
	struct enum_name e = {.bits = (uint64_t)val & (t->size >= 8 ? ~0ull : ((1ull << (t->size * 8)) - 1))};
	if (adac_vtype_enum_values(v->rt, t, enum_name_visit, &e, err)) {
		adac_sig_text_free(&e.names);
		return -1;
	}
	uint64_t uval = e.bits;
	char num[32];
	if (uns)
		snprintf(num, sizeof num, "%llu", (unsigned long long)uval);
	else
		snprintf(num, sizeof num, "%lld", (long long)val);
	const char *shown = e.exact ? e.exact : (e.parts > 1 && e.covered == uval) ? adac_sig_text_str(&e.names) : num;
	int rc = put(o, err, shown);
	if (o->json) {
		json_t *j = json_object();
		const char *tn = type_name(v, t->mt, NULL);
		if (tn)
			json_object_set_new(j, "enum", adac_json_text(tn));
		json_object_set_new(j, "name", shown == num ? json_null() : adac_json_text(shown));
		json_object_set_new(j, "value", uns && val < 0 ? adac_json_text(num) : json_integer(val));
		*o->json = j;
	}
	adac_sig_text_free(&e.names);
	return rc;
}

static int fmt_value(struct vf *v, const struct adac_vtype *t, const uint8_t *b, unsigned depth, struct out *o,
                     struct adac_error *err);
static int fmt_ref(struct vf *v, const struct adac_vtype *st, uint64_t obj, unsigned depth, bool in_braces,
                   struct out *o, struct adac_error *err);

/* A field list "{ A = 1, B = ... }" of mt's instance fields (and its parents' when `inherit`),
 * the field bytes coming from host memory (bytes, struct) or from the object at obj (class). */
struct fmt_fields_ctx {
	struct vf *v;
	struct out *o;
	json_t *fields;
	const uint8_t *bytes;   /* struct: the value's bytes (size bytes) */
	uint32_t size;
	uint64_t obj;           /* class: the object (fields at obj + ps + offset) */
	unsigned depth;
	unsigned shown;
	bool truncated;
};

/* Task.m_stateFlags, an int, read as the Task.Status it holds and its flags (SOS dumpasync's):
 * "33555456 (WaitingForActivation)". */
static int note_state_flags(struct out *o, const struct adac_vfield *f, const uint8_t *b, struct adac_error *err)
{
	if (strcmp(f->name, "m_stateFlags") != 0 || f->type.kind != ADAC_VK_PRIM || f->type.size != 4)
		return 0;
	uint32_t flags = adac_get_u32(b, 0);
	char buf[256];
	const char *more = adac_task_flags_text(flags, buf, sizeof buf);
	return adac_sig_text_putf(o->text, err, " (%s%s%s)", adac_task_status(flags), more[0] ? ", " : "", more);
}

static int fmt_field(void *ctx, struct adac_vfield *f, struct adac_error *err)
{
	struct fmt_fields_ctx *c = ctx;
	struct vf *v = c->v;
	if (c->shown >= v->o->max_elements) {
		c->truncated = true;
		return 1;
	}
	if ((c->shown++ && put(c->o, err, ", ")) || adac_sig_text_putf(c->o->text, err, "%s = ", f->name[0] ? f->name : "?"))
		return -1;
	json_t *fj = NULL;
	struct out fo = {c->o->text, c->fields ? &fj : NULL};
	int rc;
	if (f->type.kind == ADAC_VK_UNKNOWN) {
		struct adac_error e = {0};
		adac_fail(&e, ADAC_E_UNSUPPORTED, 0, "%s", f->type.why ? f->type.why : "unknown type");
		rc = put_error(&fo, &e, err);
	} else if (c->bytes) {
		if ((uint64_t)f->offset + f->type.size > c->size) {
			struct adac_error e = {0};
			adac_fail(&e, ADAC_E_CORRUPT, 0, "field at %u + %u bytes is outside the %u-byte value", f->offset,
			          f->type.size, c->size);
			rc = put_error(&fo, &e, err);
		} else if (f->type.kind == ADAC_VK_REF) {
			uint64_t ref = v->ps == 8 ? adac_get_u64(c->bytes, f->offset) : adac_get_u32(c->bytes, f->offset);
			rc = fmt_ref(v, &f->type, ref, c->depth, true, &fo, err);
		} else {
			rc = fmt_value(v, &f->type, c->bytes + f->offset, c->depth, &fo, err) ||
			     note_state_flags(&fo, f, c->bytes + f->offset, err);
		}
	} else {
		uint8_t small[64];
		uint8_t *buf = f->type.size <= sizeof small ? small : malloc(f->type.size ? f->type.size : 1);
		struct adac_error e = {0};
		if (!buf)
			return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		if (f->type.size > ADAC_MAX_VALUE_BYTES) {
			adac_fail(&e, ADAC_E_LIMIT, c->obj, "field of %u bytes (limit %u)", f->type.size, ADAC_MAX_VALUE_BYTES);
			rc = put_error(&fo, &e, err);
		} else if (adac_read(v->rt->t, c->obj + v->ps + f->offset, buf, f->type.size, &e)) {
			rc = put_error(&fo, &e, err);
		} else if (f->type.kind == ADAC_VK_REF) {
			uint64_t ref = v->ps == 8 ? adac_get_u64(buf, 0) : adac_get_u32(buf, 0);
			rc = fmt_ref(v, &f->type, ref, c->depth, true, &fo, err);
		} else {
			rc = fmt_value(v, &f->type, buf, c->depth, &fo, err) || note_state_flags(&fo, f, buf, err);
		}
		if (buf != small)
			free(buf);
	}
	if (c->fields)
		json_object_set_new(c->fields, f->name[0] ? f->name : "?", fj ? fj : json_null());
	else
		json_decref(fj);
	return rc ? -1 : 0;
}

/* Instance fields of mt and, for classes, of its parents (base class first). */
static int fmt_fields(struct vf *v, uint64_t mt, bool inherit, struct fmt_fields_ctx *c, struct adac_error *err)
{
	uint64_t chain[ADAC_MAX_PARENT_DEPTH + 1];
	unsigned n = 0;
	for (uint64_t cur = mt; cur;) {
		if (n > ADAC_MAX_PARENT_DEPTH)
			return adac_fail(err, ADAC_E_LIMIT, mt, "MethodTable 0x%llx has more than %u parent types",
			                 (unsigned long long)mt, ADAC_MAX_PARENT_DEPTH);
		chain[n++] = cur;
		if (!inherit)
			break;
		struct adac_mt_info mi;
		if (adac_mt_read(v->rt, cur, &mi, err))
			return -1;
		cur = mi.parent;
	}
	if (put(c->o, err, "{ "))
		return -1;
	for (unsigned i = n; i-- > 0;) {
		struct adac_error e = {0};
		int rc = adac_vtype_fields(v->rt, chain[i], fmt_field, c, &e);
		if (rc < 0) {
			if (e.code == ADAC_E_NOMEM || e.code == ADAC_E_LIMIT) {
				adac_error_copy(err, &e);
				return -1;
			}
			if ((c->shown++ && put(c->o, err, ", ")) || adac_sig_text_putf(c->o->text, err, "<error: %s>", e.msg))
				return -1;
		}
		if (c->truncated)
			break;
	}
	if (c->truncated && put(c->o, err, ", ..."))
		return -1;
	return put(c->o, err, c->shown ? " }" : "}");
}

static int fmt_struct(struct vf *v, const struct adac_vtype *t, const uint8_t *b, unsigned depth, struct out *o,
                      struct adac_error *err)
{
	if (t->is_enum)
		return fmt_enum(v, o, t, b, err);
	json_t *j = NULL;
	if (o->json) {
		j = json_object();
		const char *tn = type_name(v, t->mt, NULL);
		if (tn)
			json_object_set_new(j, "struct", adac_json_text(tn));
		*o->json = j;
	}
	if (depth >= v->o->max_depth) {
		if (j)
			json_object_set_new(j, "truncated", json_true());
		return put(o, err, "{...}");
	}
	struct fmt_fields_ctx c = {.v = v, .o = o, .bytes = b, .size = t->size, .depth = depth + 1};
	if (j) {
		c.fields = json_object();
		json_object_set_new(j, "fields", c.fields);
	}
	if (fmt_fields(v, t->mt, false, &c, err))
		return -1;
	if (j && c.truncated)
		json_object_set_new(j, "truncated", json_true());
	return 0;
}

static int fmt_value(struct vf *v, const struct adac_vtype *t, const uint8_t *b, unsigned depth, struct out *o,
                     struct adac_error *err)
{
	switch (t->kind) {
	case ADAC_VK_PRIM:
		return fmt_prim(o, t->elem, t->size, b, err);
	case ADAC_VK_POINTER: {
		uint64_t p = v->ps == 8 ? adac_get_u64(b, 0) : adac_get_u32(b, 0);
		set_json(o, adac_json_addr(p));
		return adac_sig_text_putf(o->text, err, "0x%016llx", (unsigned long long)p);
	}
	case ADAC_VK_REF: {
		uint64_t p = v->ps == 8 ? adac_get_u64(b, 0) : adac_get_u32(b, 0);
		return fmt_ref(v, t, p, depth, false, o, err);
	}
	case ADAC_VK_STRUCT:
		return fmt_struct(v, t, b, depth, o, err);
	default: {
		struct adac_error e = {0};
		adac_fail(&e, ADAC_E_UNSUPPORTED, 0, "%s", t->why ? t->why : "unknown type");
		return put_error(o, &e, err);
	}
	}
}

static int fmt_string(struct vf *v, uint64_t obj, bool with_addr, struct out *o, struct adac_error *err)
{
	uint32_t len;
	struct adac_error e = {0};
	if (adac_read_u32(v->rt->t, obj + v->str_len_off, &len, &e))
		return put_error(o, &e, err);
	uint32_t shown = len < v->o->max_string ? len : v->o->max_string;
	if (shown > ADAC_MAX_STRING_CHARS)
		shown = ADAC_MAX_STRING_CHARS;
	uint16_t *w = malloc((size_t)shown * 2 + 2);
	if (!w)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	if (shown && adac_read(v->rt->t, obj + v->str_chars_off, w, (size_t)shown * 2, &e)) {
		free(w);
		return put_error(o, &e, err);
	}
	struct adac_sig_text esc = {0}, raw = {0};
	int rc = utf16_convert(w, shown, '"', &esc, o->json ? &raw : NULL, err);
	free(w);
	if (rc == 0 && with_addr)
		rc = adac_sig_text_putf(o->text, err, "0x%016llx %s ", (unsigned long long)obj,
		                        adac_tn_prim(ADAC_ELEM_STRING, ADAC_STYLE_CSHARP));
	if (rc == 0)
		rc = adac_sig_text_putf(o->text, err, "\"%s\"", adac_sig_text_str(&esc));
	if (rc == 0 && shown < len)
		rc = adac_sig_text_putf(o->text, err, "... (length %u)", len);
	if (rc == 0 && o->json) {
		if (shown < len) {
			json_t *j = json_object();
			json_object_set_new(j, "string", adac_json_text(adac_sig_text_str(&raw)));
			json_object_set_new(j, "length", json_integer(len));
			json_object_set_new(j, "truncated", json_true());
			*o->json = j;
		} else {
			*o->json = adac_json_text(adac_sig_text_str(&raw));
		}
	}
	adac_sig_text_free(&esc);
	adac_sig_text_free(&raw);
	return rc;
}

static int fmt_array(struct vf *v, uint64_t obj, const struct adac_mt_info *mi, bool with_addr, unsigned depth,
                     struct out *o, struct adac_error *err)
{
	struct adac_error e = {0};
	uint32_t len;
	if (adac_read_u32(v->rt->t, obj + v->arr_len_off, &len, &e))
		return put_error(o, &e, err);
	struct adac_vtype et;
	if (adac_vtype_from_th(v->rt, mi->element_type, &et, &e))
		return put_error(o, &e, err);
	int rc = 0;
	if (with_addr)
		rc = adac_sig_text_putf(o->text, err, "0x%016llx ", (unsigned long long)obj);
	/* element type, then the dimensions: int[3], int[2,3] */
	if (rc == 0)
		rc = adac_sig_text_putf(o->text, err, "%s[", et.name);
	uint32_t rank = mi->rank ? mi->rank : 1;
	if (rc == 0 && rank == 1) {
		rc = adac_sig_text_putf(o->text, err, "%u", len);
	} else if (rc == 0) {
		for (uint32_t i = 0; i < rank && rc == 0; i++) {
			uint32_t dim = 0;
			if (adac_read_u32(v->rt->t, obj + 2ull * v->ps + 4ull * i, &dim, NULL))
				rc = adac_sig_text_put(o->text, i ? ",?" : "?", err);
			else
				rc = adac_sig_text_putf(o->text, err, i ? ",%u" : "%u", dim);
		}
	}
	if (rc == 0)
		rc = put(o, err, "] ");
	json_t *j = NULL, *vals = NULL;
	if (o->json) {
		j = json_object();
		json_object_set_new(j, "array", adac_json_text(et.name));
		json_object_set_new(j, "address", adac_json_addr(obj));
		json_object_set_new(j, "length", json_integer(len));
		vals = json_array();
		json_object_set_new(j, "values", vals);
		*o->json = j;
	}
	if (rc)
		goto out;
	if (depth >= v->o->max_depth && len) {
		rc = put(o, err, "{...}");
		if (j)
			json_object_set_new(j, "truncated", json_true());
		goto out;
	}
	uint32_t shown = len < v->o->max_elements ? len : v->o->max_elements;
	uint32_t esize = mi->component_size;
	if (et.kind == ADAC_VK_UNKNOWN || esize == 0 || (uint64_t)shown * esize > ADAC_MAX_VALUE_BYTES) {
		adac_fail(&e, ADAC_E_UNSUPPORTED, obj, "elements of %s: %s", et.name,
		          et.kind == ADAC_VK_UNKNOWN && et.why ? et.why : "unknown size");
		rc = adac_sig_text_putf(o->text, err, "{ <error: %s> }", e.msg);
		if (j)
			json_object_set_new(j, "error", adac_json_text(e.msg));
		goto out;
	}
	uint8_t *buf = malloc((size_t)shown * esize + 1);
	if (!buf) {
		rc = adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		goto out;
	}
	uint64_t data = obj + mi->base_size - v->ps;
	if (shown && adac_read(v->rt->t, data, buf, (size_t)shown * esize, &e)) {
		free(buf);
		rc = adac_sig_text_putf(o->text, err, "{ <error: %s> }", e.msg);
		if (j)
			json_object_set_new(j, "error", adac_json_text(e.msg));
		goto out;
	}
	rc = put(o, err, shown ? "{ " : "{ }");
	for (uint32_t i = 0; i < shown && rc == 0; i++) {
		json_t *ej = NULL;
		struct out eo = {o->text, vals ? &ej : NULL};
		if (i)
			rc = put(o, err, ", ");
		if (rc == 0)
			rc = fmt_value(v, &et, buf + (size_t)i * esize, depth + 1, &eo, err);
		if (vals)
			json_array_append_new(vals, ej ? ej : json_null());
	}
	free(buf);
	if (rc == 0 && shown < len) {
		rc = put(o, err, shown ? ", ..." : "...");
		if (j)
			json_object_set_new(j, "truncated", json_true());
	}
	if (rc == 0 && shown)
		rc = put(o, err, " }");
out:
	adac_vtype_free(&et);
	return rc;
}

static int fmt_ref(struct vf *v, const struct adac_vtype *st, uint64_t obj, unsigned depth, bool in_braces,
                   struct out *o, struct adac_error *err)
{
	bool static_summary = st && (st->elem == ADAC_ELEM_STRING || st->elem == ADAC_ELEM_SZARRAY ||
	                             st->elem == ADAC_ELEM_ARRAY);
	if (in_braces && !static_summary && adac_sig_text_putf(o->text, err, "(%s) ", st ? st->name : "object"))
		return -1;
	if (obj == 0) {
		set_json(o, json_null());
		return put(o, err, "null");
	}
	struct adac_error e = {0};
	uint64_t mt;
	struct adac_mt_info mi;
	if (adac_object_mt(v->rt, obj, &mt, &e) || adac_mt_read(v->rt, mt, &mi, &e)) {
		if (adac_sig_text_putf(o->text, err, "0x%016llx ", (unsigned long long)obj))
			return -1;
		return put_error(o, &e, err);
	}
	if (mi.is_string)
		return fmt_string(v, obj, !(st && st->elem == ADAC_ELEM_STRING), o, err);
	if (mi.is_array)
		return fmt_array(v, obj, &mi, !(st && (st->elem == ADAC_ELEM_SZARRAY || st->elem == ADAC_ELEM_ARRAY)), depth, o,
		                 err);
	/* Address, then the dynamic type when it is not the static one. */
	const char *dyn = type_name(v, mt, &e);
	if (!dyn) {
		if (adac_sig_text_putf(o->text, err, "0x%016llx ", (unsigned long long)obj))
			return -1;
		return put_error(o, &e, err);
	}
	bool same = st && st->name && strcmp(st->name, dyn) == 0;
	if (adac_sig_text_putf(o->text, err, "0x%016llx ", (unsigned long long)obj) ||
	    ((!same || mi.is_value_type) && adac_sig_text_putf(o->text, err, "%s ", dyn)))
		return -1;
	json_t *j = NULL;
	int rc = 0;
	if (o->json) {
		j = json_object();
		json_object_set_new(j, mi.is_value_type ? "boxed" : "class", adac_json_text(dyn));
		json_object_set_new(j, "address", adac_json_addr(obj));
		*o->json = j;
	}
	if (mi.is_value_type) {
		/* A boxed value: the value follows the MethodTable pointer. */
		struct adac_vtype bt;
		if (adac_vtype_from_th(v->rt, mt, &bt, &e))
			return put_error(o, &e, err);
		uint8_t small[64];
		uint8_t *buf = bt.size <= sizeof small ? small : malloc(bt.size ? bt.size : 1);
		if (!buf) {
			adac_vtype_free(&bt);
			return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		}
		json_t *vj = NULL;
		struct out vo = {o->text, j ? &vj : NULL};
		if (bt.size > ADAC_MAX_VALUE_BYTES)
			adac_fail(&e, ADAC_E_LIMIT, obj, "boxed value of %u bytes (limit %u)", bt.size, ADAC_MAX_VALUE_BYTES);
		if (e.code || adac_read(v->rt->t, obj + v->ps, buf, bt.size, &e))
			rc = put_error(&vo, &e, err);
		else
			rc = fmt_value(v, &bt, buf, depth, &vo, err);
		if (j)
			json_object_set_new(j, "value", vj ? vj : json_null());
		if (buf != small)
			free(buf);
		adac_vtype_free(&bt);
		return rc;
	}
	if (depth >= v->o->max_depth) {
		if (j)
			json_object_set_new(j, "truncated", json_true());
		return put(o, err, "{...}");
	}
	struct fmt_fields_ctx c = {.v = v, .o = o, .obj = obj, .depth = depth + 1};
	if (j) {
		c.fields = json_object();
		json_object_set_new(j, "fields", c.fields);
	}
	/* The JSON of the fields goes into c.fields; keep *o->json pointing at the object. */
	struct out fo = {o->text, NULL};
	c.o = &fo;
	if (fmt_fields(v, mt, true, &c, err))
		return -1;
	if (j && c.truncated)
		json_object_set_new(j, "truncated", json_true());
	return 0;
}

int adac_value_format(struct adac_runtime *rt, const struct adac_vtype *t, const uint8_t *bytes,
                      const struct adac_value_opts *o, struct adac_sig_text *text, json_t **json,
                      struct adac_error *err)
{
	struct vf v;
	if (json)
		*json = NULL;
	if (vf_init(rt, o, &v, err))
		return -1;
	struct out out = {text, json};
	return fmt_value(&v, t, bytes, 0, &out, err);
}

int adac_value_format_ref(struct adac_runtime *rt, const struct adac_vtype *t, uint64_t obj,
                          const struct adac_value_opts *o, struct adac_sig_text *text, json_t **json,
                          struct adac_error *err)
{
	struct vf v;
	if (json)
		*json = NULL;
	if (vf_init(rt, o, &v, err))
		return -1;
	struct out out = {text, json};
	return fmt_ref(&v, t, obj, 0, false, &out, err);
}

int adac_value_format_string(struct adac_runtime *rt, uint64_t str, struct adac_sig_text *text, json_t **json,
                             struct adac_error *err)
{
	struct adac_vtype st = {.kind = ADAC_VK_REF, .elem = ADAC_ELEM_STRING, .name = (char *)"string"};
	struct adac_value_opts vo;
	adac_value_opts_default(&vo);
	vo.max_string = ADAC_MAX_STRING_CHARS;
	return adac_value_format_ref(rt, &st, str, &vo, text, json, err);
}
