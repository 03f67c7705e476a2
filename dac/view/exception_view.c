/* exception_view.c - see exception_view.h. */
#include "view/exception_view.h"

#include <jansson.h>
#include <string.h>

#include "async/task.h"
#include "async/thread_stack.h"
#include "base/json.h"
#include "base/limits.h"
#include "base/output.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/exception.h"
#include "types/names.h"
#include "types/vtype.h"
#include "view/value_format.h"

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
	if (adac_exception_message(rt, obj, &msg, &e))
		return adac_sig_text_putf(text, err, ": <error: %s>", e.msg);
	if (!msg)
		return 0;
	return adac_sig_text_put(text, ": ", err) || adac_value_format_string(rt, msg, text, NULL, err) ? -1 : 0;
}

json_t *adac_exception_summary_json(struct adac_runtime *rt, uint64_t obj)
{
	json_t *j = json_object();
	json_object_set_new(j, "address", adac_json_addr(obj));
	struct adac_error e = {0};
	uint64_t mt = 0, msg = 0;
	const char *type = NULL;
	if (adac_object_mt(rt, obj, &mt, &e) || !(type = adac_type_name(rt, mt, 0, &e)) || adac_exception_message(rt, obj, &msg, &e)) {
		json_object_set_new(j, "error", adac_json_text(e.msg));
		return j;
	}
	json_object_set_new(j, "type", adac_json_text(type));
	json_t *mj = NULL;
	struct adac_sig_text ignored = {0};
	if (msg && adac_value_format_string(rt, msg, &ignored, &mj, &e) == 0 && mj)
		json_object_set_new(j, "message", mj);
	else
		json_object_set_new(j, "message", json_null());
	adac_sig_text_free(&ignored);
	return j;
}

/* ---- pe ---- */

/* _stackTrace's frames, named as a backtrace names them. */
static void print_stack_trace(struct adac_runtime *rt, uint64_t trace, struct adac_out *out)
{
	struct adac_exception_frame frames[ADAC_MAX_STACK_TRACE_FRAMES];
	unsigned n = 0;
	uint64_t total = 0;
	struct adac_error e = {0};
	int rc = adac_exception_stack_trace(rt, trace, frames, ADAC_MAX_STACK_TRACE_FRAMES, &n, &total, &e);
	adac_print(out, "StackTrace (generated):\n");
	if (!n && !rc)
		adac_print(out, "    <none>\n");
	for (unsigned i = 0; i < n; i++) {
		/* Every element but the throw site is a return address; the throw site's ip is the
		 * instruction after the call that threw too. */
		struct adac_stack_frame f = {.pc = frames[i].ip, .sp = frames[i].sp, .caller = true};
		adac_stack_frame_name(rt, &f);
		adac_print(out, "    0x%016llx", (unsigned long long)frames[i].ip);
		if (f.symbol)
			adac_print(out, " %s`%s + 0x%llx", f.module ? f.module : "?", f.symbol, (unsigned long long)f.offset);
		if (f.file) {
			const char *base = strrchr(f.file, '/');
			adac_print(out, " at %s:%u", base ? base + 1 : f.file, f.line);
		}
		adac_print(out, "\n");
	}
	if (rc)
		adac_print(out, "    <error: %s>\n", e.msg);
	else if (total > n)
		adac_print(out, "    (%llu more frames: ADAC_MAX_STACK_TRACE_FRAMES)\n", (unsigned long long)(total - n));
}

static void print_string_field(struct adac_runtime *rt, const char *label, uint64_t str, struct adac_out *out)
{
	struct adac_sig_text text = {0};
	struct adac_error e = {0};
	if (!str)
		adac_print(out, "%s<none>\n", label);
	else if (adac_value_format_string(rt, str, &text, NULL, &e) == 0)
		adac_print(out, "%s%s\n", label, adac_sig_text_str(&text));
	else
		adac_print(out, "%s<error: %s>\n", label, e.msg);
	adac_sig_text_free(&text);
}

/* One exception; *inner = its InnerException (0: none). */
static int print_one(struct adac_runtime *rt, uint64_t obj, uint64_t *inner, struct adac_out *out, struct adac_error *err)
{
	uint64_t mt;
	const char *type;
	bool is_exc = false;
	struct adac_exception ex;
	struct adac_error e = {0};
	*inner = 0;
	if (adac_object_mt(rt, obj, &mt, err) || !(type = adac_type_name(rt, mt, 0, err)))
		return -1;
	adac_exception_is(rt, mt, &is_exc, NULL);
	if (!is_exc)
		return adac_fail(err, ADAC_E_BAD_ARG, obj, "0x%llx (%s) is not an exception", (unsigned long long)obj, type);
	if (adac_exception_read(rt, obj, &ex, err))
		return -1;
	*inner = ex.inner;
	adac_print(out, "Exception object: 0x%016llx\n", (unsigned long long)obj);
	adac_print(out, "Exception type:   %s\n", type);
	print_string_field(rt, "Message:          ", ex.message, out);
	if (ex.inner) {
		uint64_t imt = 0;
		const char *itype = adac_object_mt(rt, ex.inner, &imt, &e) == 0 ? adac_type_name(rt, imt, 0, &e) : NULL;
		adac_print(out, "InnerException:   %s, use pe 0x%016llx to see more (below)\n", itype ? itype : "?",
		           (unsigned long long)ex.inner);
	} else {
		adac_print(out, "InnerException:   <none>\n");
	}
	print_stack_trace(rt, ex.stack_trace, out);
	print_string_field(rt, "StackTraceString: ", ex.stack_trace_string, out);
	adac_print(out, "HResult: %x\n", ex.hresult);
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

int adac_exception_print(struct adac_runtime *rt, uint64_t obj, struct adac_out *out, struct adac_error *err)
{
	uint64_t mt;
	bool is_task = false;
	if (adac_object_mt(rt, obj, &mt, err) || adac_task_is_task_mt(rt, mt, &is_task, err))
		return -1;
	if (!is_task)
		return print_chain(rt, obj, out, err);
	const struct adac_task_layout *tl;
	uint32_t flags = 0, held = 0;
	uint64_t exc[ADAC_MAX_INNER_EXCEPTIONS];
	unsigned n = 0;
	if (adac_task_layout(rt, &tl, err) || adac_read_u32(rt->t, obj + tl->state_flags_off, &flags, err) ||
	    adac_task_exceptions(rt, obj, exc, ADAC_MAX_INNER_EXCEPTIONS, &n, &held, err))
		return -1;
	if (!held)
		return adac_fail(err, ADAC_E_NOT_FOUND, obj, "task 0x%llx (%s) holds no exception", (unsigned long long)obj,
		                 adac_task_status(flags));
	const char *type = adac_type_name(rt, mt, 0, NULL);
	adac_print(out, "Task 0x%016llx %s [%s]: %u exception%s\n", (unsigned long long)obj, type ? type : "?",
	           adac_task_status(flags), held, held == 1 ? "" : "s");
	for (unsigned i = 0; i < n; i++) {
		adac_print(out, "\n");
		if (print_chain(rt, exc[i], out, err))
			return -1;
	}
	return 0;
}
