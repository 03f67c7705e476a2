/* value_path.c - a part of a value named by a C#-style path (value_path.h): fields through the
 * runtime's FieldDescs (types/vtype.h), elements through the Array and String layouts the
 * descriptor gives (value_format.h). Every step reads the target; a step that cannot is an error
 * naming the path so far. */
#include "view/value_path.h"

#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "metadata/signature.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "types/methoddesc.h"
#include "view/value_format.h"

void adac_value_part_free(struct adac_value_part *p)
{
	adac_vtype_free(&p->type);
	free(p->bytes);
	memset(p, 0, sizeof *p);
}

static int copy_type(const struct adac_vtype *from, struct adac_vtype *to, struct adac_error *err)
{
	*to = *from;
	to->name = from->name ? strdup(from->name) : NULL;
	to->why = from->why ? strdup(from->why) : NULL;
	if ((from->name && !to->name) || (from->why && !to->why)) {
		adac_vtype_free(to);
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	}
	return 0;
}

/* The part becomes t's value at address, read from the target. */
static int load(struct adac_runtime *rt, struct adac_value_part *p, const struct adac_vtype *t, uint64_t address,
                struct adac_error *err)
{
	struct adac_vtype copy;
	if (copy_type(t, &copy, err))
		return -1;
	if (copy.size == 0 || copy.size > ADAC_MAX_VALUE_BYTES) {
		adac_vtype_free(&copy);
		return adac_fail(err, ADAC_E_UNSUPPORTED, address, "a value of type %s cannot be read (size %u)",
		                 t->name ? t->name : "?", t->size);
	}
	uint8_t *bytes = malloc(copy.size);
	if (!bytes || adac_read(rt->t, address, bytes, copy.size, err)) {
		free(bytes);
		adac_vtype_free(&copy);
		return bytes ? -1 : adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	}
	adac_value_part_free(p);
	p->type = copy;
	p->bytes = bytes;
	p->address = address;
	return 0;
}

/* ---- fields ---- */

struct find_field {
	const char *name;
	size_t len;
	struct adac_vtype type;
	uint32_t offset;
	bool found;
};

static int match_field(void *ctx, struct adac_vfield *f, struct adac_error *err)
{
	struct find_field *c = ctx;
	if (!f->name || strlen(f->name) != c->len || memcmp(f->name, c->name, c->len) != 0)
		return 0;
	if (copy_type(&f->type, &c->type, err))
		return -1;
	c->offset = f->offset;
	c->found = true;
	return 1;
}

/* Field name[len] of mt or of a base type: its type and its offset in the instance data. */
static int find_field(struct adac_runtime *rt, uint64_t mt, const char *name, size_t len, struct find_field *out,
                      struct adac_error *err)
{
	memset(out, 0, sizeof *out);
	out->name = name;
	out->len = len;
	for (unsigned depth = 0; mt; depth++) {
		if (depth == ADAC_MAX_PARENT_DEPTH)
			return adac_fail(err, ADAC_E_LIMIT, mt, "more than ADAC_MAX_PARENT_DEPTH (%u) base types",
			                 ADAC_MAX_PARENT_DEPTH);
		if (adac_vtype_fields(rt, mt, match_field, out, err) < 0)
			return -1;
		if (out->found)
			return 0;
		struct adac_mt_info mi;
		if (adac_mt_read(rt, mt, &mi, err))
			return -1;
		mt = mi.parent;
	}
	return adac_fail(err, ADAC_E_NOT_FOUND, 0, "no field named '%.*s'", (int)len, name);
}

static int step_field(struct adac_runtime *rt, struct adac_value_part *p, const char *name, size_t len,
                      struct adac_error *err)
{
	unsigned ps = adac_target_ptr_size(rt->t);
	uint64_t mt, data;
	if (p->type.kind == ADAC_VK_STRUCT) {
		mt = p->type.mt;
		data = p->address;  /* 0: not in the target, the field is a slice of the bytes in hand */
	} else if (p->type.kind == ADAC_VK_REF) {
		uint64_t obj = 0;
		memcpy(&obj, p->bytes, ps < sizeof obj ? ps : sizeof obj);
		if (!obj)
			return adac_fail(err, ADAC_E_BAD_ARG, 0, "it is null");
		if (adac_object_mt(rt, obj, &mt, err))
			return -1;
		data = obj + ps;
	} else {
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "a %s has no fields", p->type.name ? p->type.name : "value");
	}
	struct find_field f;
	if (find_field(rt, mt, name, len, &f, err))
		return -1;
	int rc;
	if (data) {
		rc = load(rt, p, &f.type, data + f.offset, err);
	} else if ((uint64_t)f.offset + f.type.size > p->type.size || f.type.size == 0) {
		rc = adac_fail(err, ADAC_E_CORRUPT, 0, "field '%.*s' lies outside its struct", (int)len, name);
	} else {
		/* A struct known only by its bytes: the field is a slice of them. */
		uint8_t *bytes = malloc(f.type.size);
		rc = bytes ? 0 : adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		if (bytes) {
			memcpy(bytes, p->bytes + f.offset, f.type.size);
			adac_value_part_free(p);
			p->type = f.type;
			f.type = (struct adac_vtype){0};
			p->bytes = bytes;
		}
	}
	adac_vtype_free(&f.type);
	return rc;
}

/* ---- elements ---- */

int adac_value_elements(struct adac_runtime *rt, uint64_t obj, uint64_t *first, uint32_t *count,
                        struct adac_vtype *element, struct adac_error *err)
{
	memset(element, 0, sizeof *element);
	struct adac_value_layout l;
	uint64_t mt;
	struct adac_mt_info mi;
	if (adac_value_layout(rt, &l, err) || adac_object_mt(rt, obj, &mt, err) || adac_mt_read(rt, mt, &mi, err))
		return -1;
	if (mi.is_string) {
		if (adac_read_u32(rt->t, obj + l.str_len_off, count, err))
			return -1;
		*first = obj + l.str_chars_off;
		element->kind = ADAC_VK_PRIM;
		element->elem = ADAC_ELEM_CHAR;
		element->size = 2;
		element->name = strdup("char");
		return element->name ? 0 : adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	}
	if (!mi.is_array || mi.rank > 1)
		return adac_fail(err, ADAC_E_BAD_ARG, obj, "not a string or a one-dimensional array");
	if (adac_read_u32(rt->t, obj + l.arr_len_off, count, err) || adac_vtype_from_th(rt, mi.element_type, element, err))
		return -1;
	if (element->size != mi.component_size) {
		adac_vtype_free(element);
		return adac_fail(err, ADAC_E_CORRUPT, obj, "array elements of %u bytes, but their type has %u",
		                 mi.component_size, element->size);
	}
	*first = obj + mi.base_size - adac_target_ptr_size(rt->t);
	return 0;
}

static int step_index(struct adac_runtime *rt, struct adac_value_part *p, uint64_t index, struct adac_error *err)
{
	unsigned ps = adac_target_ptr_size(rt->t);
	if (p->type.kind != ADAC_VK_REF)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "a %s has no elements", p->type.name ? p->type.name : "value");
	uint64_t obj = 0;
	memcpy(&obj, p->bytes, ps < sizeof obj ? ps : sizeof obj);
	if (!obj)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "it is null");
	uint64_t first;
	uint32_t count;
	struct adac_vtype et;
	if (adac_value_elements(rt, obj, &first, &count, &et, err))
		return -1;
	int rc = index < count ? load(rt, p, &et, first + index * et.size, err)
	                       : adac_fail(err, ADAC_E_BAD_ARG, obj, "index %llu is past its end (length %u)",
	                                   (unsigned long long)index, count);
	adac_vtype_free(&et);
	return rc;
}

/* ---- the path ---- */

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '<' ||
	       c == '>' || (unsigned char)c >= 0x80;
}

int adac_value_path(struct adac_runtime *rt, const char *name, const struct adac_vtype *t, const uint8_t *bytes,
                    uint64_t address, const char *path, struct adac_value_part *out, struct adac_error *err)
{
	memset(out, 0, sizeof *out);
	if (copy_type(t, &out->type, err))
		return -1;
	out->bytes = malloc(t->size ? t->size : 1);
	if (!out->bytes) {
		adac_value_part_free(out);
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	}
	memcpy(out->bytes, bytes, t->size);
	out->address = address;
	for (const char *s = path; *s;) {
		const char *step = s;
		int rc;
		if (*s == '.') {
			const char *name = ++s;
			while (is_name_char(*s))
				s++;
			rc = s == name ? adac_fail(err, ADAC_E_BAD_ARG, 0, "a field name must follow '.'")
			               : step_field(rt, out, name, (size_t)(s - name), err);
		} else if (*s == '[') {
			char *end;
			unsigned long long index = strtoull(s + 1, &end, 0);
			rc = end == s + 1 || *end != ']' ? adac_fail(err, ADAC_E_BAD_ARG, 0, "an index must be a number in []")
			                                 : step_index(rt, out, index, err);
			s = *end == ']' ? end + 1 : end;
		} else {
			rc = adac_fail(err, ADAC_E_BAD_ARG, 0, "'%c' cannot start a member or element", *s);
		}
		if (rc) {
			adac_error_wrap(err, "%s%.*s: ", name, (int)(step - path), path);
			adac_value_part_free(out);
			return -1;
		}
		if (out->type.kind == ADAC_VK_UNKNOWN) {
			adac_fail(err, ADAC_E_UNSUPPORTED, 0, "%s%.*s: %s", name, (int)(s - path), path,
			          out->type.why ? out->type.why : "a value of unknown layout");
			adac_value_part_free(out);
			return -1;
		}
	}
	return 0;
}
