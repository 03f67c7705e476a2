/* exception_view.c - see exception_view.h. */
#include "view/exception_view.h"

#include <jansson.h>
#include <string.h>

#include "async/task.h"
#include "async/thread_stack.h"
#include "base/cursor.h"
#include "base/json.h"
#include "base/limits.h"
#include "base/output.h"
#include "runtime/descriptor.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/fielddesc.h"
#include "types/methoddesc.h"
#include "types/names.h"
#include "types/vtype.h"
#include "view/value_format.h"
#include "view/value_path.h"

/* The message: Exception._message, a string reference (0: none). */
static int message_of(struct adac_runtime *rt, uint64_t obj, uint64_t *msg, struct adac_error *err)
{
	uint32_t off;
	if (adac_desc_field(rt->desc, "Exception", "_message", &off, err) || adac_read_ptr(rt->t, obj + off, msg, err))
		return -1;
	return 0;
}

/* The message as the value formatter prints a string ("text" with C escapes). */
static int format_message(struct adac_runtime *rt, uint64_t msg, struct adac_sig_text *text, json_t **json,
                          struct adac_error *err)
{
	struct adac_vtype st = {.kind = ADAC_VK_REF, .elem = ADAC_ELEM_STRING, .name = (char *)"string"};
	struct adac_value_opts vo;
	adac_value_opts_default(&vo);
	vo.max_string = ADAC_MAX_STRING_CHARS;
	return adac_value_format_ref(rt, &st, msg, &vo, text, json, err);
}

int adac_exception_summary(struct adac_runtime *rt, uint64_t obj, struct adac_sig_text *text, struct adac_error *err)
{
	struct adac_error e = {0};
	uint64_t mt = 0, msg = 0;
	const char *type = NULL;
	if (adac_sig_text_putf(text, err, "0x%016llx ", (unsigned long long)obj))
		return -1;
	if (adac_object_mt(rt, obj, &mt, &e) || !(type = adac_type_name(rt, mt, 0, &e)))
		return adac_sig_text_putf(text, err, "<error: %s>", e.msg);
	if (adac_sig_text_put(text, type, err))
		return -1;
	if (message_of(rt, obj, &msg, &e))
		return adac_sig_text_putf(text, err, ": <error: %s>", e.msg);
	if (!msg)
		return 0;
	return adac_sig_text_put(text, ": ", err) || format_message(rt, msg, text, NULL, err) ? -1 : 0;
}

json_t *adac_exception_summary_json(struct adac_runtime *rt, uint64_t obj)
{
	json_t *j = json_object();
	json_object_set_new(j, "address", adac_json_addr(obj));
	struct adac_error e = {0};
	uint64_t mt = 0, msg = 0;
	const char *type = NULL;
	if (adac_object_mt(rt, obj, &mt, &e) || !(type = adac_type_name(rt, mt, 0, &e)) || message_of(rt, obj, &msg, &e)) {
		json_object_set_new(j, "error", json_string(e.msg));
		return j;
	}
	json_object_set_new(j, "type", json_string(type));
	json_t *mj = NULL;
	struct adac_sig_text ignored = {0};
	if (msg && format_message(rt, msg, &ignored, &mj, &e) == 0 && mj)
		json_object_set_new(j, "message", mj);
	else
		json_object_set_new(j, "message", json_null());
	adac_sig_text_free(&ignored);
	return j;
}

/* ---- pe ---- */

/* Exception's reference fields, from the descriptor (object-relative offsets). */
static int exception_ref(struct adac_runtime *rt, uint64_t obj, const char *field, uint64_t *v, struct adac_error *err)
{
	uint32_t off;
	*v = 0;
	return adac_desc_field(rt->desc, "Exception", field, &off, err) || adac_read_ptr(rt->t, obj + off, v, err) ? -1 : 0;
}

/* _stackTrace: a byte array (or an object array whose first element is it) holding a count, the
 * thread, then per frame {ip, sp, MethodDesc, flags}, each slot pointer-sized. */
static void print_stack_trace(struct adac_runtime *rt, uint64_t trace, struct adac_out *out)
{
	unsigned ps = adac_target_ptr_size(rt->t);
	uint64_t first = 0;
	uint32_t count = 0;
	struct adac_vtype et = {0};
	struct adac_error e = {0};
	if (trace && adac_value_elements(rt, trace, &first, &count, &et, &e) == 0 && et.kind == ADAC_VK_REF && count) {
		adac_vtype_free(&et);
		if (adac_read_ptr(rt->t, first, &trace, &e) || adac_value_elements(rt, trace, &first, &count, &et, &e))
			trace = 0;
	}
	adac_vtype_free(&et);
	uint64_t frames = 0;
	if (trace && !adac_failed(&e) && adac_read_ptr(rt->t, first, &frames, &e) == 0) {
		uint64_t fit = count >= 2 * ps ? (count - 2 * ps) / (4 * ps) : 0;
		if (frames > fit)
			frames = fit;
	}
	adac_print(out, "StackTrace (generated):\n");
	if (adac_failed(&e)) {
		adac_print(out, "    <error: %s>\n", e.msg);
		return;
	}
	if (!frames) {
		adac_print(out, "    <none>\n");
		return;
	}
	for (uint64_t i = 0; i < frames && i < ADAC_MAX_STACK_TRACE_FRAMES; i++) {
		uint64_t at = first + 2 * ps + i * 4 * ps, ip = 0, sp = 0;
		if (adac_read_ptr(rt->t, at, &ip, &e) || adac_read_ptr(rt->t, at + ps, &sp, &e)) {
			adac_print(out, "    <error: %s>\n", e.msg);
			return;
		}
		/* Every element but the throw site is a return address; the throw site's ip is the
		 * instruction after the call that threw too. */
		struct adac_stack_frame f = {.pc = ip, .sp = sp, .caller = true};
		adac_stack_frame_name(rt, &f);
		adac_print(out, "    0x%016llx", (unsigned long long)ip);
		if (f.symbol)
			adac_print(out, " %s`%s + 0x%llx", f.module ? f.module : "?", f.symbol, (unsigned long long)f.offset);
		if (f.file) {
			const char *base = strrchr(f.file, '/');
			adac_print(out, " at %s:%u", base ? base + 1 : f.file, f.line);
		}
		adac_print(out, "\n");
	}
	if (frames > ADAC_MAX_STACK_TRACE_FRAMES)
		adac_print(out, "    (%llu more frames: ADAC_MAX_STACK_TRACE_FRAMES)\n",
		           (unsigned long long)(frames - ADAC_MAX_STACK_TRACE_FRAMES));
}

static void print_string_field(struct adac_runtime *rt, const char *label, uint64_t str, struct adac_out *out)
{
	struct adac_sig_text text = {0};
	struct adac_error e = {0};
	if (!str)
		adac_print(out, "%s<none>\n", label);
	else if (format_message(rt, str, &text, NULL, &e) == 0)
		adac_print(out, "%s%s\n", label, adac_sig_text_str(&text));
	else
		adac_print(out, "%s<error: %s>\n", label, e.msg);
	adac_sig_text_free(&text);
}

/* One exception; *inner = its InnerException (0: none). */
static int print_one(struct adac_runtime *rt, uint64_t obj, uint64_t *inner, struct adac_out *out, struct adac_error *err)
{
	uint64_t mt, msg, trace, trace_string;
	const char *type;
	uint32_t hr_off;
	uint32_t hr = 0;
	bool is_exc = false;
	struct adac_error e = {0};
	if (adac_object_mt(rt, obj, &mt, err) || !(type = adac_type_name(rt, mt, 0, err)))
		return -1;
	uint64_t exception_mt = 0;
	if (adac_desc_global(rt->desc, "ExceptionMethodTable", &exception_mt, NULL) == 0 &&
	    adac_read_ptr(rt->t, exception_mt, &exception_mt, NULL) == 0 && exception_mt)
		adac_mt_derives_from(rt, mt, exception_mt, &is_exc, NULL);
	if (!is_exc)
		return adac_fail(err, ADAC_E_BAD_ARG, obj, "0x%llx (%s) is not an exception", (unsigned long long)obj, type);
	if (exception_ref(rt, obj, "_message", &msg, err) || exception_ref(rt, obj, "_innerException", inner, err) ||
	    exception_ref(rt, obj, "_stackTrace", &trace, err) ||
	    exception_ref(rt, obj, "_stackTraceString", &trace_string, err) ||
	    adac_desc_field(rt->desc, "Exception", "_HResult", &hr_off, err) || adac_read_u32(rt->t, obj + hr_off, &hr, err))
		return -1;
	adac_print(out, "Exception object: 0x%016llx\n", (unsigned long long)obj);
	adac_print(out, "Exception type:   %s\n", type);
	print_string_field(rt, "Message:          ", msg, out);
	if (*inner) {
		uint64_t imt = 0;
		const char *itype = adac_object_mt(rt, *inner, &imt, &e) == 0 ? adac_type_name(rt, imt, 0, &e) : NULL;
		adac_print(out, "InnerException:   %s, use pe 0x%016llx to see more (below)\n", itype ? itype : "?",
		           (unsigned long long)*inner);
	} else {
		adac_print(out, "InnerException:   <none>\n");
	}
	print_stack_trace(rt, trace, out);
	print_string_field(rt, "StackTraceString: ", trace_string, out);
	adac_print(out, "HResult: %x\n", hr);
	return 0;
}

static int print_chain(struct adac_runtime *rt, uint64_t obj, struct adac_out *out, struct adac_error *err)
{
	for (unsigned n = 0; obj; n++) {
		if (n == ADAC_MAX_INNER_EXCEPTIONS) {
			adac_print(out, "\n(more inner exceptions: ADAC_MAX_INNER_EXCEPTIONS is %u)\n", ADAC_MAX_INNER_EXCEPTIONS);
			return 0;
		}
		if (n)
			adac_print(out, "\nInner exception of the one above:\n");
		uint64_t inner = 0;
		if (print_one(rt, obj, &inner, out, err))
			return n ? 0 : -1;
		obj = inner;
	}
	return 0;
}

/* A value reached from obj through path (value_path.h), as a reference; 0 when a link is null. */
static int ref_at(struct adac_runtime *rt, uint64_t obj, const char *path, uint64_t *v, struct adac_error *err)
{
	*v = 0;
	struct adac_vtype t = {.kind = ADAC_VK_REF, .elem = ADAC_ELEM_OBJECT, .size = 8, .name = (char *)"object"};
	uint8_t bytes[8] = {0};
	memcpy(bytes, &obj, sizeof bytes);
	struct adac_value_part part = {0};
	struct adac_error e = {0};
	if (adac_value_path(rt, "task", &t, bytes, 0, path, &part, &e)) {
		adac_value_part_free(&part);
		/* A null link on the way: the task holds nothing there. */
		return e.code == ADAC_E_BAD_ARG && strstr(e.msg, "is null") ? 0 : adac_error_copy(err, &e);
	}
	if (part.type.size >= 4)
		*v = part.type.size == 8 ? adac_get_u64(part.bytes, 0) : adac_get_u32(part.bytes, 0);
	adac_value_part_free(&part);
	return 0;
}

int adac_exception_print(struct adac_runtime *rt, uint64_t obj, struct adac_out *out, struct adac_error *err)
{
	uint64_t mt;
	bool is_task = false;
	if (adac_object_mt(rt, obj, &mt, err) || adac_task_is_task_mt(rt, mt, &is_task, err))
		return -1;
	if (!is_task)
		return print_chain(rt, obj, out, err);
	const struct adac_task_layout *tl;
	uint32_t flags = 0;
	uint64_t list = 0, items = 0;
	uint32_t size = 0;
	if (adac_task_layout(rt, &tl, err) || adac_read_u32(rt->t, obj + tl->state_flags_off, &flags, err) ||
	    ref_at(rt, obj, ".m_contingentProperties.m_exceptionsHolder.m_faultExceptions", &list, err))
		return -1;
	if (!list)
		return adac_fail(err, ADAC_E_NOT_FOUND, obj, "task 0x%llx (%s) holds no exception", (unsigned long long)obj,
		                 adac_task_status(flags));
	uint32_t size_off;
	uint64_t list_mt;
	if (ref_at(rt, list, "._items", &items, err) || adac_object_mt(rt, list, &list_mt, err) ||
	    adac_mt_field_offset(rt, list_mt, "_size", &size_off, err) ||
	    adac_read_u32(rt->t, list + size_off, &size, err))
		return -1;
	const char *type = adac_type_name(rt, mt, 0, NULL);
	adac_print(out, "Task 0x%016llx %s [%s]: %u exception%s\n", (unsigned long long)obj, type ? type : "?",
	           adac_task_status(flags), size, size == 1 ? "" : "s");
	uint64_t first = 0;
	uint32_t count = 0;
	struct adac_vtype et = {0};
	if (items && adac_value_elements(rt, items, &first, &count, &et, err)) {
		adac_vtype_free(&et);
		return -1;
	}
	adac_vtype_free(&et);
	for (uint32_t i = 0; i < size && i < count && i < ADAC_MAX_INNER_EXCEPTIONS; i++) {
		uint64_t edi = 0, exc = 0;
		/* Each is an ExceptionDispatchInfo holding the exception in _exception. */
		if (adac_read_ptr(rt->t, first + (uint64_t)i * adac_target_ptr_size(rt->t), &edi, err) ||
		    ref_at(rt, edi, "._exception", &exc, err))
			return -1;
		adac_print(out, "\n");
		if (print_chain(rt, exc, out, err))
			return -1;
	}
	return 0;
}
