/* exception.c - see exception.h. */
#include "types/exception.h"

#include <stdlib.h>

#include "base/limits.h"
#include "runtime/descriptor.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/methoddesc.h"

struct exception_state {
	uint64_t mt; /* System.Exception's MethodTable, 0 when the runtime does not say */
	uint32_t message_off, inner_off, stack_trace_off, stack_trace_string_off, hresult_off;
	bool has_fields;
	struct adac_error fields_err; /* why has_fields is false */
};

static int get_state(struct adac_runtime *rt, struct exception_state **out, struct adac_error *err)
{
	struct exception_state *s = adac_runtime_slot(rt, ADAC_SLOT_EXCEPTION);
	if (!s) {
		if (!(s = calloc(1, sizeof *s)))
			return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		uint64_t global = 0;
		if (adac_desc_global(rt->desc, "ExceptionMethodTable", &global, NULL) == 0 && global)
			adac_read_ptr(rt->t, global, &s->mt, NULL);
		const struct adac_descriptor *d = rt->desc;
		struct adac_error *fe = &s->fields_err;
		s->has_fields = !adac_desc_field(d, "Exception", "_message", &s->message_off, fe) &&
		                !adac_desc_field(d, "Exception", "_innerException", &s->inner_off, fe) &&
		                !adac_desc_field(d, "Exception", "_stackTrace", &s->stack_trace_off, fe) &&
		                !adac_desc_field(d, "Exception", "_stackTraceString", &s->stack_trace_string_off, fe) &&
		                !adac_desc_field(d, "Exception", "_HResult", &s->hresult_off, fe);
		adac_runtime_set_slot(rt, ADAC_SLOT_EXCEPTION, s, free);
	}
	*out = s;
	return 0;
}

static int fields(struct adac_runtime *rt, struct exception_state **out, struct adac_error *err)
{
	if (get_state(rt, out, err))
		return -1;
	return (*out)->has_fields ? 0 : adac_error_copy(err, &(*out)->fields_err);
}

int adac_exception_is(struct adac_runtime *rt, uint64_t mt, bool *yes, struct adac_error *err)
{
	struct exception_state *s;
	*yes = false;
	if (get_state(rt, &s, err))
		return -1;
	return s->mt && mt ? adac_mt_derives_from(rt, mt, s->mt, yes, err) : 0;
}

int adac_exception_message(struct adac_runtime *rt, uint64_t obj, uint64_t *message, struct adac_error *err)
{
	struct exception_state *s;
	*message = 0;
	return fields(rt, &s, err) || adac_read_ptr(rt->t, obj + s->message_off, message, err) ? -1 : 0;
}

int adac_exception_read(struct adac_runtime *rt, uint64_t obj, struct adac_exception *out, struct adac_error *err)
{
	struct exception_state *s;
	*out = (struct adac_exception){0};
	if (fields(rt, &s, err) || adac_read_ptr(rt->t, obj + s->message_off, &out->message, err) ||
	    adac_read_ptr(rt->t, obj + s->inner_off, &out->inner, err) ||
	    adac_read_ptr(rt->t, obj + s->stack_trace_off, &out->stack_trace, err) ||
	    adac_read_ptr(rt->t, obj + s->stack_trace_string_off, &out->stack_trace_string, err) ||
	    adac_read_u32(rt->t, obj + s->hresult_off, &out->hresult, err))
		return -1;
	return 0;
}

int adac_exception_stack_trace(struct adac_runtime *rt, uint64_t trace, struct adac_exception_frame *frames,
                               unsigned max, unsigned *n, uint64_t *total, struct adac_error *err)
{
	unsigned ps = adac_target_ptr_size(rt->t);
	uint64_t first = 0, recorded = 0;
	uint32_t count = 0, elem_size = 0;
	*n = 0;
	*total = 0;
	if (!trace)
		return 0;
	if (adac_array_elements(rt, trace, &first, &count, &elem_size, err))
		return -1;
	/* An object[] keeps the byte[] first (the rest keeps the frames' methods alive). */
	if (elem_size == ps && count) {
		if (adac_read_ptr(rt->t, first, &trace, err))
			return -1;
		if (!trace)
			return 0;
		if (adac_array_elements(rt, trace, &first, &count, &elem_size, err))
			return -1;
	}
	if (elem_size != 1)
		return adac_fail(err, ADAC_E_CORRUPT, trace, "_stackTrace 0x%llx is an array of %u-byte elements, not bytes",
		                 (unsigned long long)trace, elem_size);
	if (count < 2 * ps)
		return 0;
	if (adac_read_ptr(rt->t, first, &recorded, err))
		return -1;
	uint64_t fit = (count - 2 * ps) / (4 * ps);
	*total = recorded < fit ? recorded : fit;
	for (uint64_t i = 0; i < *total && i < max; i++) {
		uint64_t at = first + 2 * ps + i * 4 * ps;
		if (adac_read_ptr(rt->t, at, &frames[i].ip, err) || adac_read_ptr(rt->t, at + ps, &frames[i].sp, err))
			return -1;
		(*n)++;
	}
	return 0;
}
