/* delegate.h - the method a delegate calls (System.Delegate: _target, _methodPtr, _methodPtrAux;
 * MulticastDelegate: _invocationList, _invocationCount), as ClrMD's GetDelegateTarget and SOS's
 * threadpool -wi name a work item's callback. */
#ifndef ADAC_DELEGATE_H
#define ADAC_DELEGATE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;

struct adac_delegate {
	uint64_t method_desc;      /* the method it calls (the first one of a multicast delegate) */
	uint64_t target;           /* the object it calls it on (_target), 0 for a static method */
	uint32_t count;            /* methods it calls: 1, or a multicast delegate's invocation count */
};

/* Whether the object of MethodTable mt is a delegate (derives from System.Delegate). */
bool adac_is_delegate_mt(struct adac_runtime *rt, uint64_t mt);

/* The delegate at obj: ADAC_E_BAD_ARG when it is no delegate, ADAC_E_NOT_FOUND when its code pointer
 * is no managed code or stub the runtime knows (an unmanaged function pointer). A static method's
 * delegate calls it through a shuffle thunk in _methodPtr: its method is at _methodPtrAux. */
int adac_delegate_read(struct adac_runtime *rt, uint64_t obj, struct adac_delegate *d, struct adac_error *err);

#endif
