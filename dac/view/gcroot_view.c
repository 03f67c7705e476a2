/* gcroot_view.c - see gcroot_view.h. */
#include "view/gcroot_view.h"

#include <jansson.h>
#include <stdio.h>

#include "base/json.h"
#include "base/output.h"
#include "runtime/gc_handles.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/gc_root.h"
#include "types/methoddesc.h"
#include "types/names.h"
#include "types/statics.h"
#include "view/object_view.h"

static const char *kind_name(enum adac_root_kind k)
{
	switch (k) {
	case ADAC_ROOT_STACK: return "stack";
	case ADAC_ROOT_REGISTER: return "register";
	case ADAC_ROOT_HANDLE: return "handle";
	case ADAC_ROOT_FINALIZER: return "finalizer";
	case ADAC_ROOT_THREAD_STATICS: return "thread_statics";
	}
	return "?";
}

static const char *type_of(struct adac_runtime *rt, uint64_t mt)
{
	const char *t = adac_type_name(rt, mt, 0, NULL);
	return t ? t : "?";
}

/* How hop i (> 0) is reached from hop i - 1: the field, "[i]", or the dependent handle. */
static void hop_via(struct adac_runtime *rt, const struct adac_gc_root *r, size_t i, char *buf, size_t size)
{
	const struct adac_root_hop *h = &r->path[i];
	struct adac_mt_info mi;
	uint64_t mt;
	char field[128];
	if (h->dependent)
		snprintf(buf, size, "dependent handle 0x%016llx", (unsigned long long)h->handle);
	else if (adac_mt_read(rt, r->path[i - 1].mt, &mi, NULL) == 0 && mi.is_array &&
	         adac_gc_static_at(rt, r->path[i - 1].obj + h->offset, &mt, field, sizeof field, NULL) == 0)
		snprintf(buf, size, "%s.%s (static)", type_of(rt, mt), field);  /* the statics' object[] */
	else
		adac_object_slot_name(rt, r->path[i - 1].obj, r->path[i - 1].mt, h->offset, buf, size);
}

static void print_text(struct adac_runtime *rt, const struct adac_gcroot *g, struct adac_out *out)
{
	adac_print(out, "0x%016llx %s\n", (unsigned long long)g->object, type_of(rt, g->mt));
	const struct adac_gc_root *prev = NULL;
	char tbuf[32], via[160];
	for (size_t i = 0; i < g->root_count; i++) {
		const struct adac_gc_root *r = &g->roots[i];
		bool thread = r->kind == ADAC_ROOT_STACK || r->kind == ADAC_ROOT_REGISTER;
		bool of_thread = thread || r->kind == ADAC_ROOT_THREAD_STATICS;
		bool prev_of_thread = prev && (prev->kind == ADAC_ROOT_STACK || prev->kind == ADAC_ROOT_REGISTER ||
		                               prev->kind == ADAC_ROOT_THREAD_STATICS);
		if (of_thread && (!prev_of_thread || prev->os_tid != r->os_tid))
			adac_print(out, "Thread %llu (managed %u):\n", (unsigned long long)r->os_tid, r->managed_id);
		else if (r->kind == ADAC_ROOT_HANDLE && (!prev || prev->kind != ADAC_ROOT_HANDLE))
			adac_print(out, "HandleTable:\n");
		else if (r->kind == ADAC_ROOT_FINALIZER && (!prev || prev->kind != ADAC_ROOT_FINALIZER))
			adac_print(out, "Finalizer queue:\n");
		prev = r;
		switch (r->kind) {
		case ADAC_ROOT_STACK:
			adac_print(out, "    stack slot 0x%016llx (conservative", (unsigned long long)r->where);
			break;
		case ADAC_ROOT_REGISTER:
			adac_print(out, "    register %s (conservative", adac_reg_name((unsigned)r->where));
			break;
		case ADAC_ROOT_HANDLE:
			adac_print(out, "    0x%016llx (%s handle)\n", (unsigned long long)r->where,
			           adac_handle_type_name(r->handle_type, tbuf, sizeof tbuf));
			break;
		case ADAC_ROOT_FINALIZER:
			adac_print(out, "    0x%016llx (ready for finalization)\n", (unsigned long long)r->where);
			break;
		case ADAC_ROOT_THREAD_STATICS:
			adac_print(out, "    thread statics (ThreadLocalData 0x%016llx)\n", (unsigned long long)r->where);
			break;
		}
		if (thread && r->more_slots)
			adac_print(out, "; %llu more slot%s of this thread hold%s it", (unsigned long long)r->more_slots,
			           r->more_slots == 1 ? "" : "s", r->more_slots == 1 ? "s" : "");
		if (thread)
			adac_print(out, ")\n");
		for (size_t k = 0; k < r->hop_count; k++) {
			adac_print(out, "        -> 0x%016llx %s", (unsigned long long)r->path[k].obj, type_of(rt, r->path[k].mt));
			if (k) {
				hop_via(rt, r, k, via, sizeof via);
				adac_print(out, ", via %s", via);
			}
			adac_print(out, "\n");
		}
	}
	adac_print(out, "\nFound %zu unique root%s.\n", g->root_count, g->root_count == 1 ? "" : "s");
	for (size_t i = 0; i < g->warning_count; i++)
		adac_print(out, "warning: incomplete search: %s\n", g->warnings[i]);
	for (size_t i = 0; i < g->rep.error_count; i++)
		adac_print(out, "warning: the heap walk stopped early in a region: %s\n", g->rep.errors[i].err.msg);
}

static json_t *root_json(struct adac_runtime *rt, const struct adac_gc_root *r)
{
	char tbuf[32], via[160];
	json_t *j = json_object(), *path = json_array();
	json_object_set_new(j, "kind", adac_json_text(kind_name(r->kind)));
	switch (r->kind) {
	case ADAC_ROOT_STACK:
	case ADAC_ROOT_FINALIZER:
	case ADAC_ROOT_HANDLE:
	case ADAC_ROOT_THREAD_STATICS:
		json_object_set_new(j, "address", adac_json_addr(r->where));
		break;
	case ADAC_ROOT_REGISTER:
		json_object_set_new(j, "register", adac_json_text(adac_reg_name((unsigned)r->where)));
		break;
	}
	if (r->kind == ADAC_ROOT_HANDLE)
		json_object_set_new(j, "handle_type", adac_json_text(adac_handle_type_name(r->handle_type, tbuf, sizeof tbuf)));
	if (r->kind == ADAC_ROOT_STACK || r->kind == ADAC_ROOT_REGISTER || r->kind == ADAC_ROOT_THREAD_STATICS) {
		json_object_set_new(j, "os_thread_id", json_integer((json_int_t)r->os_tid));
		json_object_set_new(j, "managed_thread_id", json_integer((json_int_t)r->managed_id));
	}
	if (r->kind == ADAC_ROOT_STACK || r->kind == ADAC_ROOT_REGISTER)
		json_object_set_new(j, "more_slots", json_integer((json_int_t)r->more_slots));
	json_object_set_new(j, "conservative", json_boolean(r->kind == ADAC_ROOT_STACK || r->kind == ADAC_ROOT_REGISTER));
	for (size_t k = 0; k < r->hop_count; k++) {
		json_t *h = json_object();
		json_object_set_new(h, "address", adac_json_addr(r->path[k].obj));
		json_object_set_new(h, "type", adac_json_text(type_of(rt, r->path[k].mt)));
		if (k) {
			hop_via(rt, r, k, via, sizeof via);
			json_object_set_new(h, "via", adac_json_text(via));
		} else {
			json_object_set_new(h, "via", json_null());
		}
		json_array_append_new(path, h);
	}
	json_object_set_new(j, "path", path);
	return j;
}

static int print_json(struct adac_runtime *rt, const struct adac_gcroot *g, struct adac_out *out, struct adac_error *err)
{
	json_t *j = json_object(), *roots = json_array(), *warnings = json_array();
	json_object_set_new(j, "object", adac_json_addr(g->object));
	json_object_set_new(j, "type", adac_json_text(type_of(rt, g->mt)));
	for (size_t i = 0; i < g->root_count; i++)
		json_array_append_new(roots, root_json(rt, &g->roots[i]));
	json_object_set_new(j, "roots", roots);
	json_object_set_new(j, "unique_roots", json_integer((json_int_t)g->root_count));
	json_object_set_new(j, "objects_searched", json_integer((json_int_t)g->objects));
	json_object_set_new(j, "handles", json_integer((json_int_t)g->handles));
	json_object_set_new(j, "threads_scanned", json_integer((json_int_t)g->threads));
	for (size_t i = 0; i < g->warning_count; i++)
		json_array_append_new(warnings, adac_json_text(g->warnings[i]));
	for (size_t i = 0; i < g->rep.error_count; i++) {
		char line[600];
		snprintf(line, sizeof line, "the heap walk stopped early in a region: %s", g->rep.errors[i].err.msg);
		json_array_append_new(warnings, adac_json_text(line));
	}
	json_object_set_new(j, "warnings", warnings);
	return adac_json_print_document(out, "gcroot", j, err);
}

int adac_gcroot_print(struct adac_runtime *rt, uint64_t obj, bool json, struct adac_out *out, struct adac_error *err)
{
	struct adac_gcroot g;
	if (adac_gcroot(rt, obj, out, &g, err))
		return -1;
	int rc = 0;
	if (json)
		rc = print_json(rt, &g, out, err);
	else
		print_text(rt, &g, out);
	adac_gcroot_free(&g);
	return rc;
}
