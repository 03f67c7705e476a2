/* object.c - Object contract: Object.m_pMethTab and ObjectToMethodTableUnmask; String and Array
 * headers. */
#include "runtime/object.h"

#include <stdlib.h>

#include "runtime/descriptor.h"
#include "runtime/runtime.h"
#include "target/target.h"

static void free_state(void *p) { free(p); }

int adac_object_layout(struct adac_runtime *rt, const struct adac_object_layout **out, struct adac_error *err)
{
	struct adac_object_layout *l = adac_runtime_slot(rt, ADAC_SLOT_OBJECT);
	if (l) {
		*out = l;
		return 0;
	}
	l = calloc(1, sizeof *l);
	if (!l)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	const struct adac_descriptor *d = rt->desc;
	if (adac_desc_field(d, "Object", "m_pMethTab", &l->mt_offset, err))
		goto fail;
	/* Older descriptors do not export the unmask: the GC's mark bits are the low pointer-alignment
	 * bits. One that exports it but cannot be read is an error, not a guess. */
	if (adac_desc_has_global(d, "ObjectToMethodTableUnmask")) {
		if (adac_desc_global(d, "ObjectToMethodTableUnmask", &l->mt_unmask, err))
			goto fail;
	} else {
		l->mt_unmask = adac_desc_ptr_size(d) == 8 ? 7 : 3;
	}
	/* String and Array are optional here: what needs them says so when they are missing. */
	l->has_string = adac_desc_has_field(d, "String", "m_StringLength") && adac_desc_has_field(d, "String", "m_FirstChar");
	if (l->has_string && (adac_desc_field(d, "String", "m_StringLength", &l->str_len_off, err) ||
	                      adac_desc_field(d, "String", "m_FirstChar", &l->str_chars_off, err)))
		goto fail;
	l->has_array = adac_desc_has_field(d, "Array", "m_NumComponents");
	if (l->has_array && adac_desc_field(d, "Array", "m_NumComponents", &l->arr_len_off, err))
		goto fail;
	adac_runtime_set_slot(rt, ADAC_SLOT_OBJECT, l, free_state);
	*out = l;
	return 0;
fail:
	adac_error_wrap(err, "Object contract: ");
	free(l);
	return -1;
}

int adac_object_mt(struct adac_runtime *rt, uint64_t obj, uint64_t *mt, struct adac_error *err)
{
	const struct adac_object_layout *l;
	if (adac_object_layout(rt, &l, err))
		return -1;
	if (obj == 0 || obj % adac_target_ptr_size(rt->t))
		return adac_fail(err, ADAC_E_CORRUPT, obj, "0x%llx is not an object address", (unsigned long long)obj);
	uint64_t v;
	if (adac_read_ptr(rt->t, obj + l->mt_offset, &v, err))
		return -1;
	*mt = adac_object_mt_of(l, v);
	return 0;
}

int adac_object_array_length(struct adac_runtime *rt, uint64_t arr, uint32_t *n, struct adac_error *err)
{
	const struct adac_object_layout *l;
	if (adac_object_layout(rt, &l, err))
		return -1;
	if (!l->has_array)
		return adac_fail(err, ADAC_E_LAYOUT, arr, "the runtime's descriptor does not describe Array.m_NumComponents");
	return adac_read_u32(rt->t, arr + l->arr_len_off, n, err);
}
