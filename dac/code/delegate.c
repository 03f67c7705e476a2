/* delegate.c - the method a delegate calls. See delegate.h. */
#include "code/delegate.h"

#include <string.h>

#include "code/execution_manager.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/corelib.h"
#include "types/fielddesc.h"
#include "types/methoddesc.h"

bool adac_is_delegate_mt(struct adac_runtime *rt, uint64_t mt)
{
	uint64_t corelib, delegate = 0;
	bool yes = false;
	return adac_corelib_module(rt, &corelib, NULL) == 0 &&
	       adac_module_type(rt, corelib, "System", "Delegate", &delegate, NULL) == 0 && delegate &&
	       adac_mt_derives_from(rt, mt, delegate, &yes, NULL) == 0 && yes;
}

/* A single-cast delegate's method and target. */
static int single(struct adac_runtime *rt, uint64_t obj, struct adac_delegate *d, struct adac_error *err)
{
	uint64_t ptr = 0, aux = 0;
	if (adac_object_field_ptr(rt, obj, "_target", &d->target, err) ||
	    adac_object_field_ptr(rt, obj, "_methodPtr", &ptr, err) ||
	    adac_object_field_ptr(rt, obj, "_methodPtrAux", &aux, err)) {
		adac_error_wrap(err, "delegate 0x%llx: ", (unsigned long long)obj);
		return -1;
	}
	uint64_t code = aux ? aux : ptr;
	if (!code)
		return adac_fail(err, ADAC_E_NOT_FOUND, obj, "delegate 0x%llx has no code pointer", (unsigned long long)obj);
	if (adac_entry_point_method_desc(rt, code, &d->method_desc, err)) {
		adac_error_wrap(err, "delegate 0x%llx: ", (unsigned long long)obj);
		return -1;
	}
	if (d->target == obj)
		d->target = 0; /* (a static method's delegate holds itself as its target) */
	return 0;
}

int adac_delegate_read(struct adac_runtime *rt, uint64_t obj, struct adac_delegate *d, struct adac_error *err)
{
	memset(d, 0, sizeof *d);
	uint64_t mt;
	if (adac_object_mt(rt, obj, &mt, err))
		return -1;
	if (!adac_is_delegate_mt(rt, mt))
		return adac_fail(err, ADAC_E_BAD_ARG, obj, "0x%llx is not a delegate", (unsigned long long)obj);
	d->count = 1;
	/* A multicast delegate lists the delegates it calls in _invocationList (an object[]), the first
	 * _invocationCount of them. */
	uint64_t list = 0, first;
	uint32_t n = 0, len, size;
	if (adac_object_field_ptr(rt, obj, "_invocationList", &list, NULL) == 0 && list &&
	    adac_object_field_u32(rt, obj, "_invocationCount", &n, NULL) == 0 && n &&
	    adac_array_elements(rt, list, &first, &len, &size, NULL) == 0 && n <= len &&
	    size == adac_target_ptr_size(rt->t)) {
		uint64_t inner;
		if (adac_read_ptr(rt->t, first, &inner, err) || single(rt, inner, d, err))
			return -1;
		d->count = n;
		return 0;
	}
	return single(rt, obj, d, err);
}
