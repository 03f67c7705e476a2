/* runtime.c - locates the runtime's contract descriptor in a target and loads it. */
#include "runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static struct adac_runtime *load_from(struct adac_target *t, const struct adac_module *m, uint64_t addr,
                                      struct adac_error *err)
{
	struct adac_runtime *rt = calloc(1, sizeof *rt);
	if (rt) {
		rt->desc = adac_desc_new();
		rt->module_path = strdup(m->path);
	}
	if (!rt || !rt->desc || !rt->module_path) {
		adac_runtime_close(rt);
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory loading the runtime");
		return NULL;
	}
	rt->t = t;
	rt->module_base = m->base;
	rt->desc_addr = addr;
	if (adac_desc_load(t, addr, rt->desc, err)) {
		adac_error_wrap(err, "%s: ", base_name(m->path));
		adac_runtime_close(rt);
		return NULL;
	}
	return rt;
}

struct adac_runtime *adac_runtime_open(struct adac_target *t, struct adac_error *err)
{
	const struct adac_module *mods;
	size_t n;
	if (adac_target_modules(t, &mods, &n, err))
		return NULL;
	if (n == 0) {
		adac_fail(err, ADAC_E_NO_RUNTIME, 0, "the target has no modules (is it a process or a core file?)");
		return NULL;
	}
	uint64_t addr;
	const struct adac_module *coreclr = NULL;
	for (size_t i = 0; i < n; i++)
		if (strcmp(base_name(mods[i].path), "libcoreclr.so") == 0)
			coreclr = &mods[i];
	if (coreclr) {
		struct adac_error sym_err = {0};
		if (adac_target_find_symbol(t, coreclr, ADAC_DESCRIPTOR_SYMBOL, &addr, &sym_err) == 0)
			return load_from(t, coreclr, addr, err);
		if (sym_err.code != ADAC_E_NOT_FOUND) {
			adac_error_copy(err, &sym_err);
			adac_error_wrap(err, "%s: ", coreclr->path);
			return NULL;
		}
		adac_fail(err, ADAC_E_NO_RUNTIME, coreclr->base,
		          "%s at 0x%llx exports no %s (a .NET runtime older than 9, or a build without data contracts)",
		          coreclr->path, (unsigned long long)coreclr->base, ADAC_DESCRIPTOR_SYMBOL);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		if (adac_target_find_symbol(t, &mods[i], ADAC_DESCRIPTOR_SYMBOL, &addr, NULL) == 0)
			return load_from(t, &mods[i], addr, err);
	}
	adac_fail(err, ADAC_E_NO_RUNTIME, 0, "no .NET runtime in the target: no libcoreclr.so and no module exports %s",
	          ADAC_DESCRIPTOR_SYMBOL);
	return NULL;
}

static void free_slots(struct adac_runtime *rt, bool keeping)
{
	for (int s = ADAC_SLOT_COUNT; s-- > 0;) {
		if (!rt->slots[s] || (keeping && rt->slot_keep[s] && rt->slot_keep[s](rt->slots[s])))
			continue;
		if (rt->slot_free[s])
			rt->slot_free[s](rt->slots[s]);
		rt->slots[s] = NULL;
	}
}

bool adac_runtime_refresh(struct adac_runtime *rt)
{
	if (!adac_desc_unchanged(rt->t, rt->desc))
		return false;
	free_slots(rt, true);
	rt->generation++;
	return true;
}

void adac_runtime_close(struct adac_runtime *rt)
{
	if (!rt)
		return;
	free_slots(rt, false);
	adac_desc_free(rt->desc);
	free(rt->module_path);
	free(rt);
}

struct adac_runtime *adac_runtime_acquire(struct adac_target *t, struct adac_error *err)
{
	adac_runtime_source kept = adac_target_runtime_source(t);
	if (kept)
		return kept(t, err);
	struct adac_runtime *rt = adac_runtime_open(t, err);
	if (rt)
		rt->transient = true;
	return rt;
}

void adac_runtime_release(struct adac_runtime *rt)
{
	if (rt && rt->transient)
		adac_runtime_close(rt);
}
