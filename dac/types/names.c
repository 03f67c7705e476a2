/* names.c - method and type names through the type-name engine (typename.c), cached per runtime. */
#include "types/names.h"

#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "metadata/ecma_metadata.h"
#include "metadata/signature.h"
#include "runtime/loader.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/methoddesc.h"
#include "types/typename.h"

static enum adac_name_style style_of(unsigned flags)
{
	return (flags & ADAC_NAME_DAC) ? ADAC_STYLE_DAC : (flags & ADAC_NAME_CSHARP) ? ADAC_STYLE_CSHARP : ADAC_STYLE_SOS;
}

static unsigned tn_flags(unsigned flags) { return (flags & ADAC_NAME_NO_NAMESPACE) ? ADAC_TN_NO_NAMESPACE : 0; }

/* ---- Method names ---- */

static const char *const array_method_names[] = {"Get", "Set", "Address", ".ctor"};

/* Decodes a method signature blob and appends its parameter list. */
static int put_params(const struct adac_type_ctx *ctx, const uint8_t *sig, size_t len, enum adac_name_style style,
                      unsigned flags, struct adac_sig_text *out, struct adac_error *err)
{
	struct adac_sig *s;
	if (adac_sig_decode(sig, len, ADAC_SIG_METHOD, adac_target_ptr_size(ctx->rt->t), &s, err))
		return -1;
	int rc = adac_tn_params(ctx, &s->method, style, flags, out, err);
	adac_sig_free(s);
	return rc;
}

/* The parameters from the stored signature of a dynamic, array or EEImpl method. */
static int put_stored_params(const struct adac_type_ctx *ctx, const struct adac_method_info *mi,
                             enum adac_name_style style, unsigned flags, struct adac_sig_text *out,
                             struct adac_error *err)
{
	if (mi->stored_sig_len > ADAC_MAX_NAME_BYTES)
		return adac_fail(err, ADAC_E_LIMIT, mi->stored_sig, "MethodDesc 0x%llx: stored signature of %u bytes (limit %u)",
		                 (unsigned long long)mi->method_desc, mi->stored_sig_len, ADAC_MAX_NAME_BYTES);
	uint8_t *stored = malloc(mi->stored_sig_len);
	if (!stored)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	int rc = adac_read(ctx->rt->t, mi->stored_sig, stored, mi->stored_sig_len, err);
	if (rc == 0) {
		size_t mark = out->len;
		struct adac_error e2 = {0};
		rc = put_params(ctx, stored, mi->stored_sig_len, style, flags, out, &e2);
		if (rc && style == ADAC_STYLE_DAC) {
			/* The DAC falls back to the name alone when a stub's signature does not format. */
			out->len = mark;
			if (out->s)
				out->s[mark] = '\0';
			rc = 0;
		} else if (rc) {
			adac_error_copy(err, &e2);
		}
	}
	free(stored);
	return rc;
}

/* exact_mt: the method's type as this instantiation of it (0: the MethodDesc's own). */
static int format_method(struct adac_runtime *rt, uint64_t md_addr, uint64_t exact_mt, unsigned flags,
                         struct adac_sig_text *out, struct adac_error *err)
{
	struct adac_method_info mi;
	if (adac_md_read(rt, md_addr, &mi, err))
		return -1;
	if (exact_mt)
		mi.method_table = exact_mt;
	enum adac_name_style style = style_of(flags);
	bool dac = style == ADAC_STYLE_DAC;
	unsigned tf = tn_flags(flags);
	struct adac_type_ctx ctx;
	if (adac_type_ctx_for_method(rt, &mi, 0, &ctx, err))
		return -1;
	if (dac) {
		/* The DAC leaves the variables of a typical instantiation unresolved ("!0", "!!0"; checked
		 * with ClrMD on 11.0.0); the other styles name them (T). */
		struct adac_mt_info mt;
		if (adac_mt_read(rt, mi.method_table, &mt, err))
			return -1;
		if (mt.is_generic_definition)
			ctx.nclass = 0;
		if (mi.imd_kind == ADAC_IMD_GENERIC_METHOD_DEFINITION)
			ctx.nmethod = 0;
	}

	/* Type part and method name. */
	if (mi.classification == ADAC_MD_DYNAMIC) {
		char *dyn = NULL;
		if (mi.dynamic_name) {
			dyn = adac_read_cstring(rt->t, mi.dynamic_name, ADAC_MAX_STRING_CHARS, err);
			if (!dyn)
				return -1;
		}
		int rc = 0;
		if (dac)
			rc = adac_sig_text_put(out, mi.is_lcg ? "DynamicClass." : mi.is_il_stub ? "ILStubClass." : ".", err);
		if (rc == 0)
			rc = adac_sig_text_put(out, dyn ? dyn : "", err);
		free(dyn);
		if (rc)
			return -1;
	} else {
		const char *name;
		struct adac_ecma_methoddef row;
		if (adac_tn_handle(rt, mi.method_table, style, tf, out, err) ||
		    adac_sig_text_put(out, ".", err))
			return -1;
		if (mi.classification == ADAC_MD_ARRAY) {
			name = array_method_names[mi.array_function < 0 ? 0 : mi.array_function > 3 ? 3 : mi.array_function];
		} else if (mi.token == 0) {
			return adac_fail(err, ADAC_E_CORRUPT, md_addr, "MethodDesc 0x%llx has no metadata token",
			                 (unsigned long long)md_addr);
		} else {
			if (adac_ecma_methoddef(ctx.md, ADAC_ECMA_TOKEN_RID(mi.token), &row, err))
				return -1;
			name = row.name;
		}
		if (adac_sig_text_put(out, name, err))
			return -1;
	}

	/* Method instantiation (the DAC shows none for a generic method definition). */
	bool has_inst = mi.classification == ADAC_MD_INSTANTIATED &&
	                (mi.imd_kind == ADAC_IMD_GENERIC_METHOD_DEFINITION || mi.generic_args_addr != 0);
	if (has_inst && mi.num_generic_args && !(dac && mi.imd_kind == ADAC_IMD_GENERIC_METHOD_DEFINITION) &&
	    adac_tn_inst(rt, mi.generic_args_addr, mi.num_generic_args, style, tf, out, err))
		return -1;

	if (!(flags & ADAC_NAME_PARAMS))
		return 0;
	if (mi.stored_sig && mi.stored_sig_len)
		return put_stored_params(&ctx, &mi, style, tf, out, err);
	if (mi.classification == ADAC_MD_DYNAMIC || mi.classification == ADAC_MD_ARRAY)
		return adac_sig_text_put(out, "()", err);
	struct adac_ecma_methoddef row;
	if (adac_ecma_methoddef(ctx.md, ADAC_ECMA_TOKEN_RID(mi.token), &row, err))
		return -1;
	return put_params(&ctx, row.sig, row.sig_len, style, tf, out, err);
}

/* ---- Cache ---- */

struct name_entry {
	uint64_t key, key2; /* MethodDesc and exact MethodTable (0), or TypeHandle (and 0) */
	unsigned flags; /* ADAC_NAME_* | 0x100 for type names */
	char *name;
};

struct name_cache {
	struct name_entry *e;
	size_t cap, n;
};

static void cache_clear(struct name_cache *c)
{
	for (size_t i = 0; i < c->cap; i++)
		free(c->e[i].name);
	free(c->e);
	c->e = NULL;
	c->cap = c->n = 0;
}

static void cache_free(void *p)
{
	cache_clear(p);
	free(p);
}

static size_t cache_hash(uint64_t key, uint64_t key2, unsigned flags)
{
	uint64_t h = (key ^ ((uint64_t)flags << 56) ^ key2 * 0xc2b2ae3d27d4eb4full) * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 20);
}

static struct name_cache *get_cache(struct adac_runtime *rt, struct adac_error *err)
{
	struct name_cache *c = adac_runtime_slot(rt, ADAC_SLOT_NAMES);
	if (c)
		return c;
	c = calloc(1, sizeof *c);
	if (!c) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		return NULL;
	}
	adac_runtime_set_slot(rt, ADAC_SLOT_NAMES, c, cache_free);
	return c;
}

static const char *cache_find(struct name_cache *c, uint64_t key, uint64_t key2, unsigned flags)
{
	if (!c->cap)
		return NULL;
	for (size_t i = cache_hash(key, key2, flags) & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
		if (!c->e[i].name)
			return NULL;
		if (c->e[i].key == key && c->e[i].key2 == key2 && c->e[i].flags == flags)
			return c->e[i].name;
	}
}

static const char *cache_put(struct name_cache *c, uint64_t key, uint64_t key2, unsigned flags, char *name,
                             struct adac_error *err)
{
	if (c->n >= ADAC_MAX_NAME_CACHE) {
		/* Names handed out stay valid until the runtime closes, so the cache cannot start over. */
		free(name);
		adac_fail(err, ADAC_E_LIMIT, key, "more than %u distinct method and type names (limit %u)",
		          ADAC_MAX_NAME_CACHE, ADAC_MAX_NAME_CACHE);
		return NULL;
	}
	if ((c->n + 1) * 2 > c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		struct name_entry *e = calloc(cap, sizeof *e);
		if (!e) {
			free(name);
			adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
			return NULL;
		}
		for (size_t i = 0; i < c->cap; i++) {
			if (!c->e[i].name)
				continue;
			size_t j = cache_hash(c->e[i].key, c->e[i].key2, c->e[i].flags) & (cap - 1);
			while (e[j].name)
				j = (j + 1) & (cap - 1);
			e[j] = c->e[i];
		}
		free(c->e);
		c->e = e;
		c->cap = cap;
	}
	size_t i = cache_hash(key, key2, flags) & (c->cap - 1);
	while (c->e[i].name)
		i = (i + 1) & (c->cap - 1);
	c->e[i] = (struct name_entry){key, key2, flags, name};
	c->n++;
	return name;
}

static const char *cached(struct adac_runtime *rt, uint64_t key, uint64_t key2, unsigned flags, bool type,
                          struct adac_error *err)
{
	struct name_cache *c = get_cache(rt, err);
	if (!c)
		return NULL;
	unsigned cflags = flags | (type ? 0x100u : 0);
	const char *hit = cache_find(c, key, key2, cflags);
	if (hit)
		return hit;
	struct adac_sig_text t = {0};
	int rc = type ? adac_tn_handle(rt, key, style_of(flags), tn_flags(flags), &t, err)
	              : format_method(rt, key, key2, flags, &t, err);
	if (rc) {
		adac_sig_text_free(&t);
		return NULL;
	}
	return cache_put(c, key, key2, cflags, adac_sig_text_take(&t), err);
}

const char *adac_method_name(struct adac_runtime *rt, uint64_t method_desc, unsigned flags, struct adac_error *err)
{
	return cached(rt, method_desc, 0, flags, false, err);
}

const char *adac_method_name_in(struct adac_runtime *rt, uint64_t method_desc, uint64_t exact_mt, unsigned flags,
                                struct adac_error *err)
{
	return cached(rt, method_desc, exact_mt, flags, false, err);
}

const char *adac_type_name(struct adac_runtime *rt, uint64_t type_handle, unsigned flags, struct adac_error *err)
{
	return cached(rt, type_handle, 0, flags, true, err);
}

const char *adac_module_path(struct adac_runtime *rt, uint64_t module, struct adac_error *err)
{
	const struct adac_loader_module *m = adac_loader_module(rt, module, err);
	return m ? m->path : NULL;
}

const char *adac_module_file_name(struct adac_runtime *rt, uint64_t module, struct adac_error *err)
{
	const struct adac_loader_module *m = adac_loader_module(rt, module, err);
	return m ? m->file_name : NULL;
}
