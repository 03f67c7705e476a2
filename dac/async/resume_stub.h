/* resume_stub.h - the second route from a continuation to its method: Resume (the resumption IL
 * stub's entry point) -> the stub's DynamicMethodDesc -> its ILStubResolver -> the target async
 * MethodDesc. The only route on the array layout, a cross-check on the flat one. */
#ifndef ADAC_RESUME_STUB_H
#define ADAC_RESUME_STUB_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;

struct adac_resume_target {
	uint64_t stub_md;     /* the resumption stub's MethodDesc */
	const char *stub_name;/* its stored name (e.g. "IL_STUB_AsyncResume_FetchAsync_Tier0"), "" if none */
	uint64_t target_md;   /* the async method it resumes; 0 when the resolver could not be read */
	char target_name[128];/* by name: the method name the stub's name gives, even when it is ambiguous */
	uint64_t stub_module; /* the stub's module (its target's) */
	bool by_name;         /* target_md was found from the stub's name: the runtime recorded no target
	                       * (.NET 10), so the name "IL_STUB_AsyncResume_<method>_<tier>" and the stub's
	                       * module are all there is */
};

int adac_resume_target(struct adac_runtime *rt, uint64_t resume_entry, struct adac_resume_target *out,
                       struct adac_error *err);

#endif
