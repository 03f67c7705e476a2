/* object_view.c - see object_view.h. */
#include "view/object_view.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/cursor.h"
#include "base/limits.h"
#include "base/output.h"
#include "async/async_frame.h"
#include "async/continuation.h"
#include "async/locals.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "runtime/gc_heap.h"
#include "types/heap_refs.h"
#include "types/methoddesc.h"
#include "types/names.h"
#include "types/vtype.h"
#include "view/value_format.h"
#include "view/value_path.h"

struct fields {
	struct adac_runtime *rt;
	uint64_t obj;
	struct adac_value_opts vo;
	struct adac_out *out;
};

/* One field: its bytes read from the object, formatted as locals are. */
static int field_line(void *ctx, struct adac_vfield *f, struct adac_error *err)
{
	struct fields *c = ctx;
	unsigned ps = adac_target_ptr_size(c->rt->t);
	struct adac_sig_text text = {0};
	struct adac_error e = {0};
	uint8_t buf[64];
	uint8_t *bytes = f->type.size <= sizeof buf ? buf : NULL;
	int rc = 0;
	if (f->type.kind == ADAC_VK_UNKNOWN)
		adac_fail(&e, ADAC_E_UNSUPPORTED, 0, "%s", f->type.why ? f->type.why : "unknown type");
	else if (f->type.size > ADAC_MAX_VALUE_BYTES)
		adac_fail(&e, ADAC_E_LIMIT, c->obj, "field of %u bytes (limit %u)", f->type.size, ADAC_MAX_VALUE_BYTES);
	else if (!bytes && !(bytes = malloc(f->type.size)))
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	if (!adac_failed(&e) && adac_read(c->rt->t, c->obj + ps + f->offset, bytes, f->type.size, &e) == 0) {
		if (f->type.kind == ADAC_VK_REF)
			rc = adac_value_format_ref(c->rt, &f->type, ps == 8 ? adac_get_u64(bytes, 0) : adac_get_u32(bytes, 0),
			                           &c->vo, &text, NULL, err);
		else
			rc = adac_value_format(c->rt, &f->type, bytes, &c->vo, &text, NULL, err);
	}
	if (rc == 0)
		adac_print(c->out, "  (%s) %s = %s%s%s\n", f->type.name ? f->type.name : "?", f->name[0] ? f->name : "?",
		           adac_failed(&e) ? "<error: " : adac_sig_text_str(&text), adac_failed(&e) ? e.msg : "",
		           adac_failed(&e) ? ">" : "");
	if (bytes != buf)
		free(bytes);
	adac_sig_text_free(&text);
	return rc;
}

int adac_object_print(struct adac_runtime *rt, uint64_t obj, unsigned depth, struct adac_out *out,
                      struct adac_error *err)
{
	uint64_t mt;
	struct adac_mt_info mi;
	const char *type;
	if (adac_object_mt(rt, obj, &mt, err) || adac_mt_read(rt, mt, &mi, err) || !(type = adac_type_name(rt, mt, 0, err))) {
		adac_error_wrap(err, "0x%llx is not an object: ", (unsigned long long)obj);
		return -1;
	}
	/* Strings and arrays: base size plus their elements. */
	uint64_t size = mi.base_size, first;
	uint32_t count = 0;
	struct adac_vtype element = {0};
	bool has_elements = mi.component_size && adac_value_elements(rt, obj, &first, &count, &element, NULL) == 0;
	adac_vtype_free(&element);
	if (has_elements)
		size += (uint64_t)count * mi.component_size;
	const char *module = adac_module_file_name(rt, mi.module, NULL);
	adac_print(out, "Name:        %s\n", type);
	adac_print(out, "MethodTable: 0x%016llx\n", (unsigned long long)mt);
	adac_print(out, "Size:        %llu (0x%llx) bytes\n", (unsigned long long)size, (unsigned long long)size);
	adac_print(out, "Module:      %s\n", module ? module : "?");
	struct fields c = {.rt = rt, .obj = obj, .out = out};
	adac_value_opts_default(&c.vo);
	c.vo.max_depth = depth;
	if (mi.component_size) {
		struct adac_sig_text text = {0};
		int rc = adac_value_format_ref(rt, NULL, obj, &c.vo, &text, NULL, err);
		if (rc == 0)
			adac_print(out, "Value:       %s\n", adac_sig_text_str(&text));
		adac_sig_text_free(&text);
		return rc;
	}
	/* Base class first, as SOS and LLDB list inherited fields. */
	uint64_t chain[ADAC_MAX_PARENT_DEPTH + 1];
	unsigned n = 0;
	for (uint64_t cur = mt; cur && n <= ADAC_MAX_PARENT_DEPTH;) {
		struct adac_mt_info pi;
		chain[n++] = cur;
		if (adac_mt_read(rt, cur, &pi, err))
			return -1;
		cur = pi.parent;
	}
	adac_print(out, "Fields:\n");
	for (unsigned i = n; i-- > 0;) {
		struct adac_error e = {0};
		if (adac_vtype_fields(rt, chain[i], field_line, &c, &e) < 0) {
			if (e.code == ADAC_E_NOMEM)
				return adac_error_copy(err, &e);
			adac_print(out, "  <error: %s>\n", e.msg);
		}
	}
	return 0;
}

void adac_object_slot_name(struct adac_runtime *rt, uint64_t obj, uint64_t mt, uint32_t off, char *buf, size_t size)
{
	if (adac_heap_slot_name(rt, mt, off, buf, size) == 0)
		return;
	struct adac_error e = {0};
	struct adac_continuation c;
	if (adac_cont_read(rt, obj, &c, &e) || c.layout != ADAC_CONT_FLAT)
		return;
	struct adac_async_frame f;
	struct adac_locals l;
	adac_async_frame_resolve(rt, &c, &f);
	if (adac_frame_locals_collect(rt, &f, &l, &e))
		return;
	for (size_t i = 0; i < l.n; i++) {
		const struct adac_local *v = &l.v[i];
		if (v->offset == ADAC_LOCAL_NONE || off < v->offset || off - v->offset >= (v->type.size ? v->type.size : 1))
			continue;
		if (v->kind == ADAC_LOCAL_SLOT && v->slot >= 0)
			snprintf(buf, size, "%s (continuation slot)", adac_cont_slot_name((enum adac_cont_slot)v->slot));
		else if (off == v->offset)
			snprintf(buf, size, "%s (saved local)", v->name ? v->name : "?");
		else
			snprintf(buf, size, "%s (saved local, at +%u)", v->name ? v->name : "?", off - v->offset);
		break;
	}
	adac_locals_free(&l);
}

struct refs {
	struct adac_runtime *rt;
	struct adac_out *out;
	uint64_t n;
};

static int ref_line(void *ctx, const struct adac_heap_ref *r)
{
	struct refs *c = ctx;
	const char *type = adac_type_name(c->rt, r->mt, 0, NULL);
	char where[sizeof r->where];
	adac_object_slot_name(c->rt, r->obj, r->mt, r->offset, where, sizeof where);
	adac_print(c->out, "  0x%016llx %s, %s\n", (unsigned long long)r->obj, type ? type : "?", where);
	c->n++;
	return 0;
}

int adac_refs_print(struct adac_runtime *rt, uint64_t obj, struct adac_out *out, struct adac_error *err)
{
	uint64_t mt;
	const char *type;
	if (adac_object_mt(rt, obj, &mt, err) || !(type = adac_type_name(rt, mt, 0, err))) {
		adac_error_wrap(err, "0x%llx is not an object: ", (unsigned long long)obj);
		return -1;
	}
	adac_print(out, "0x%016llx %s is referenced by:\n", (unsigned long long)obj, type);
	struct refs c = {rt, out, 0};
	struct adac_gc_walk_report rep = {0};
	int rc = adac_heap_refs(rt, obj, ref_line, &c, out, &rep, err);
	if (rc == 0) {
		adac_print(out, "%llu reference%s (heap objects only: statics, handles and stacks are roots, not listed)\n",
		           (unsigned long long)c.n, c.n == 1 ? "" : "s");
		for (size_t i = 0; i < rep.error_count; i++)
			adac_print(out, "warning: the heap walk stopped early in a region: %s\n", rep.errors[i].err.msg);
	}
	adac_gc_walk_report_free(&rep);
	return rc;
}
