/* corelib.c - CoreLib's module and name -> MethodTable lookups. */
#include "types/corelib.h"

#include <string.h>

#include "base/limits.h"
#include "metadata/ecma_metadata.h"
#include "runtime/descriptor.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/methoddesc.h"


/* Runtimes whose SystemDomain has no SystemAssembly field (.NET 10): System.Object's module. */
static int module_of_object_class(struct adac_runtime *rt, uint64_t *module, struct adac_error *err)
{
	uint64_t where, mt;
	struct adac_mt_info mi;
	if (adac_desc_global(rt->desc, "ObjectMethodTable", &where, err) || adac_read_ptr(rt->t, where, &mt, err) ||
	    adac_mt_read(rt, mt, &mi, err)) {
		adac_error_wrap(err, "CoreLib: ");
		return -1;
	}
	*module = mi.module;
	return 0;
}

int adac_corelib_module(struct adac_runtime *rt, uint64_t *module, struct adac_error *err)
{
	if (!adac_desc_has_field(rt->desc, "SystemDomain", "SystemAssembly"))
		return module_of_object_class(rt, module, err);
	uint64_t where, domain, assembly;
	uint32_t off_assembly, off_module;
	if (adac_desc_global(rt->desc, "SystemDomain", &where, err) ||
	    adac_desc_field(rt->desc, "SystemDomain", "SystemAssembly", &off_assembly, err) ||
	    adac_desc_field(rt->desc, "Assembly", "Module", &off_module, err))
		return -1;
	if (adac_read_ptr(rt->t, where, &domain, err) || !domain ||
	    adac_read_ptr(rt->t, domain + off_assembly, &assembly, err) || !assembly ||
	    adac_read_ptr(rt->t, assembly + off_module, module, err) || !*module) {
		if (!adac_failed(err))
			adac_fail(err, ADAC_E_NOT_FOUND, where, "the runtime has not loaded System.Private.CoreLib yet");
		adac_error_wrap(err, "CoreLib: ");
		return -1;
	}
	return 0;
}

int adac_module_typedef_mt(struct adac_runtime *rt, uint64_t module, uint32_t typedef_token, uint64_t *mt,
                           struct adac_error *err)
{
	return adac_module_lookup(rt, module, "TypeDefToMethodTableMap", typedef_token & 0xffffffu, mt, err);
}

int adac_module_lookup_segments(struct adac_runtime *rt, uint64_t module, const char *map,
                                int (*each)(const struct adac_lookup_segment *seg, void *arg), void *arg,
                                struct adac_error *err)
{
	uint32_t map_off, f_next, f_data, f_count, f_mask;
	if (adac_desc_field(rt->desc, "Module", map, &map_off, err) ||
	    adac_desc_field(rt->desc, "ModuleLookupMap", "Next", &f_next, err) ||
	    adac_desc_field(rt->desc, "ModuleLookupMap", "TableData", &f_data, err) ||
	    adac_desc_field(rt->desc, "ModuleLookupMap", "Count", &f_count, err) ||
	    adac_desc_field(rt->desc, "ModuleLookupMap", "SupportedFlagsMask", &f_mask, err))
		return -1;
	/* The map is a list of segments; RIDs past one segment's Count continue in the next. The flag
	 * bits to strip are those of the first segment. */
	struct adac_lookup_segment seg = {0};
	uint64_t at = module + map_off;
	for (unsigned n = 0; at; n++) {
		if (n >= ADAC_MAX_LOOKUP_SEGMENTS)
			return adac_fail(err, ADAC_E_LIMIT, at, "Module 0x%llx: %s has more than %u segments",
			                 (unsigned long long)module, map, ADAC_MAX_LOOKUP_SEGMENTS);
		uint64_t next;
		if (adac_read_ptr(rt->t, at + f_next, &next, err) || adac_read_ptr(rt->t, at + f_data, &seg.data, err) ||
		    adac_read_u32(rt->t, at + f_count, &seg.count, err) ||
		    (n == 0 && adac_read_ptr(rt->t, at + f_mask, &seg.mask, err)))
			return -1;
		int rc = each(&seg, arg);
		if (rc)
			return rc < 0 ? -1 : 0;
		seg.first += seg.count;
		at = next;
	}
	return 0;
}

struct one_entry {
	struct adac_runtime *rt;
	uint32_t rid;
	uint64_t *value;
	struct adac_error *err;
};

static int read_entry(const struct adac_lookup_segment *seg, void *arg)
{
	struct one_entry *e = arg;
	if (e->rid - seg->first >= seg->count)
		return 0;
	uint64_t v;
	if (adac_read_ptr(e->rt->t, seg->data + (uint64_t)(e->rid - seg->first) * adac_target_ptr_size(e->rt->t), &v,
	                  e->err))
		return -1;
	*e->value = v & ~seg->mask;
	return 1;
}

int adac_module_lookup(struct adac_runtime *rt, uint64_t module, const char *map, uint32_t rid, uint64_t *value,
                       struct adac_error *err)
{
	*value = 0;
	struct one_entry e = {rt, rid, value, err};
	return adac_module_lookup_segments(rt, module, map, read_entry, &e, err);
}

int adac_module_type(struct adac_runtime *rt, uint64_t module, const char *ns, const char *name, uint64_t *mt,
                     struct adac_error *err)
{
	const struct adac_ecma *md = adac_ecma_for_module(rt, module, err);
	if (!md)
		return -1;
	/* Walk "Outer+Inner" one level at a time. */
	char part[256];
	const char *p = name;
	uint32_t rid = 0;
	bool first = true;
	while (*p) {
		const char *plus = strchr(p, '+');
		size_t len = plus ? (size_t)(plus - p) : strlen(p);
		if (len >= sizeof part)
			return adac_fail(err, ADAC_E_BAD_ARG, 0, "type name %s is too long", name);
		memcpy(part, p, len);
		part[len] = '\0';
		if (adac_ecma_find_typedef(md, first ? ns : "", part, rid, &rid, err)) {
			adac_error_wrap(err, "%s%s%s: ", ns, *ns ? "." : "", name);
			return -1;
		}
		first = false;
		p += len + (plus ? 1 : 0);
	}
	return adac_module_typedef_mt(rt, module, 0x02000000u | rid, mt, err);
}
