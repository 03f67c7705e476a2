/* resume_stub.c - resolves a continuation's Resume pointer to the async method it resumes. */
#include "async/resume_stub.h"

#include <stdio.h>
#include <string.h>

#include "code/execution_manager.h"
#include "code/precode.h"
#include "metadata/ecma_metadata.h"
#include "runtime/descriptor.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/corelib.h"
#include "types/methoddesc.h"
#include "types/names.h"

/* The ILStubType numbers differ between runtime versions (StubAsyncResume is 18 in 11.0.0, 19 in
 * some development builds) and are not in the descriptor; the stub's stored name is stable:
 * "IL_STUB_AsyncResume" (11.0), "IL_STUB_AsyncResume_<method>_<tier>" (10.0). */
#define RESUME_STUB_PREFIX "IL_STUB_AsyncResume"

/* The resolver of a DynamicMethodDesc and the ILStubResolver fields are not in the contract
 * descriptor. DynamicMethodDesc ends {m_pszMethodName, m_pResolver} (the descriptor gives
 * MethodName and the type size), and ILStubResolver is {vtable, m_pCompileTimeState, m_pStubMD,
 * m_pStubTargetMD, ...} (ilstubresolver.h). Both are checked before use: the resolver's m_pStubMD
 * must point back at the stub itself, and the target must be a valid MethodDesc. */
enum { RESOLVER_STUB_MD = 2, RESOLVER_TARGET_MD = 3 };

/* The method named in "IL_STUB_AsyncResume_<method>_<tier>", looked up in the stub's module (IL
 * stubs live in their target's module); it must be the only method of that name there. */
static int target_by_name(struct adac_runtime *rt, const struct adac_method_info *stub, const char *stub_name,
                          uint64_t *target, struct adac_resume_target *out, struct adac_error *err)
{
	size_t plen = strlen(RESUME_STUB_PREFIX);
	const char *method = stub_name + plen;
	const char *tier = strrchr(method, '_');
	if (*method != '_' || !tier || tier == method)
		return adac_fail(err, ADAC_E_NOT_FOUND, stub->method_desc,
		                 "resumption stub 0x%llx records no target and its name (%s) does not name one",
		                 (unsigned long long)stub->method_desc, stub_name);
	method++;
	size_t mlen = (size_t)(tier - method);
	snprintf(out->target_name, sizeof out->target_name, "%.*s", (int)mlen, method);
	out->stub_module = stub->module;
	const struct adac_ecma *md = adac_ecma_for_module(rt, stub->module, err);
	if (!md)
		return -1;
	uint32_t rows = adac_ecma_rows(md, ADAC_ECMA_METHODDEF), found = 0, count = 0;
	for (uint32_t rid = 1; rid <= rows; rid++) {
		struct adac_ecma_methoddef row;
		if (adac_ecma_methoddef(md, rid, &row, err))
			return -1;
		if (strlen(row.name) == mlen && memcmp(row.name, method, mlen) == 0) {
			found = rid;
			count++;
		}
	}
	if (count != 1)
		return adac_fail(err, ADAC_E_NOT_FOUND, stub->method_desc,
		                 "resumption stub %s records no target, and its module has %u methods named %.*s", stub_name,
		                 count, (int)mlen, method);
	if (adac_module_lookup(rt, stub->module, "MethodDefToDescMap", found, target, err))
		return -1;
	if (!*target)
		return adac_fail(err, ADAC_E_NOT_FOUND, stub->method_desc, "method %.*s (token 0x%x) of %s has no MethodDesc",
		                 (int)mlen, method, 0x06000000u | found, stub_name);
	return 0;
}

int adac_resume_target(struct adac_runtime *rt, uint64_t resume_entry, struct adac_resume_target *out,
                       struct adac_error *err)
{
	memset(out, 0, sizeof *out);
	out->stub_name = "";
	if (!resume_entry)
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "no Resume pointer");
	if (adac_entry_point_method_desc(rt, resume_entry, &out->stub_md, err)) {
		adac_error_wrap(err, "Resume 0x%llx: ", (unsigned long long)resume_entry);
		return -1;
	}
	struct adac_method_info mi;
	if (adac_md_read(rt, out->stub_md, &mi, err))
		return -1;
	const char *name = mi.is_il_stub ? adac_method_name(rt, out->stub_md, 0, NULL) : NULL;
	if (!name || strncmp(name, RESUME_STUB_PREFIX, strlen(RESUME_STUB_PREFIX)) != 0)
		return adac_fail(err, ADAC_E_CORRUPT, resume_entry,
		                 "Resume 0x%llx is MethodDesc 0x%llx (%s), not an async resumption stub",
		                 (unsigned long long)resume_entry, (unsigned long long)out->stub_md, name ? name : "not an IL stub");
	out->stub_name = name;

	uint32_t name_off, dmd_size;
	if (adac_desc_field(rt->desc, "DynamicMethodDesc", "MethodName", &name_off, err) ||
	    adac_desc_type_size(rt->desc, "DynamicMethodDesc", &dmd_size, err))
		return -1;
	unsigned ps = adac_target_ptr_size(rt->t);
	uint32_t resolver_off = name_off + ps;
	if (resolver_off + ps > dmd_size)
		return adac_fail(err, ADAC_E_LAYOUT, out->stub_md,
		                 "DynamicMethodDesc (%u bytes) has no room for a resolver after MethodName at %u", dmd_size,
		                 name_off);
	uint64_t resolver, fields[4];
	if (adac_read_ptr(rt->t, out->stub_md + resolver_off, &resolver, err) ||
	    adac_read(rt->t, resolver, fields, sizeof fields, err)) {
		adac_error_wrap(err, "resumption stub 0x%llx: resolver: ", (unsigned long long)out->stub_md);
		return -1;
	}
	if (fields[RESOLVER_STUB_MD] != out->stub_md)
		return adac_fail(err, ADAC_E_LAYOUT, resolver,
		                 "resumption stub 0x%llx: its resolver 0x%llx names stub 0x%llx, not itself (ILStubResolver layout changed?)",
		                 (unsigned long long)out->stub_md, (unsigned long long)resolver,
		                 (unsigned long long)fields[RESOLVER_STUB_MD]);
	uint64_t target = fields[RESOLVER_TARGET_MD];
	if (!target) {
		if (target_by_name(rt, &mi, name, &target, out, err))
			return -1;
		out->by_name = true;
	}
	if (adac_md_validate(rt, target, err)) {
		adac_error_wrap(err, "resumption stub 0x%llx: target: ", (unsigned long long)out->stub_md);
		return -1;
	}
	out->target_md = target;
	return 0;
}
