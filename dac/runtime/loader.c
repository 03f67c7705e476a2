/* loader.c - Loader contract, module parts: image layout, names and dynamic metadata of a Module. */
#include "runtime/loader.h"

#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/limits.h"
#include "runtime/descriptor.h"
#include "runtime/runtime.h"
#include "target/target.h"

/* Fields read, width 'P' = target pointer. */
#define LOADER_FIELDS(X)                                           \
	X(MOD_ASSEMBLY, "Module", "Assembly", 'P', true)               \
	X(MOD_PEASSEMBLY, "Module", "PEAssembly", 'P', true)           \
	X(MOD_BASE, "Module", "Base", 'P', true)                       \
	X(MOD_FLAGS, "Module", "Flags", 4, true)                       \
	X(MOD_PATH, "Module", "Path", 'P', true)                       \
	X(MOD_FILENAME, "Module", "FileName", 'P', true)               \
	X(MOD_SIMPLENAME, "Module", "SimpleName", 'P', false)          \
	X(MOD_DYNMD, "Module", "DynamicMetadata", 'P', true)           \
	X(MOD_MDGEN, "Module", "MetadataGeneration", 4, false)         \
	X(PEA_IMAGE, "PEAssembly", "PEImage", 'P', true)               \
	X(PEI_LOADED, "PEImage", "LoadedImageLayout", 'P', true)       \
	X(PEI_FLAT, "PEImage", "FlatImageLayout", 'P', false)          \
	X(PEL_BASE, "PEImageLayout", "Base", 'P', true)                \
	X(PEL_SIZE, "PEImageLayout", "Size", 4, true)                  \
	X(PEL_FLAGS, "PEImageLayout", "Flags", 4, true)                \
	X(DM_SIZE, "DynamicMetadata", "Size", 4, true)                 \
	X(DM_DATA, "DynamicMetadata", "Data", 1, true)

enum {
#define X(id, type, field, width, req) L_##id,
	LOADER_FIELDS(X)
#undef X
	L_COUNT
};

struct mod_entry {
	struct adac_loader_module m;
	char *path, *file_name, *simple_name;
};

struct loader_state {
	uint32_t off[L_COUNT];
	uint8_t has[L_COUNT];
	uint8_t width[L_COUNT];
	unsigned ps;
	struct mod_entry **mods; /* each entry allocated once: pointers handed out stay valid */
	size_t n, cap;
};

static void free_state(void *p)
{
	struct loader_state *s = p;
	for (size_t i = 0; i < s->n; i++) {
		free(s->mods[i]->path);
		free(s->mods[i]->file_name);
		free(s->mods[i]->simple_name);
		free(s->mods[i]);
	}
	free(s->mods);
	free(s);
}

static struct loader_state *get_state(struct adac_runtime *rt, struct adac_error *err)
{
	struct loader_state *s = adac_runtime_slot(rt, ADAC_SLOT_LOADER);
	if (s)
		return s;
	s = calloc(1, sizeof *s);
	if (!s) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		return NULL;
	}
	s->ps = adac_desc_ptr_size(rt->desc);
	struct adac_field_spec specs[L_COUNT] = {
#define X(id, type, field, width, req) {type, field, (uint8_t)((width) == 'P' ? 0 : (width)), req},
		LOADER_FIELDS(X)
#undef X
	};
	static const uint8_t is_ptr[L_COUNT] = {
#define X(id, type, field, width, req) (width) == 'P',
		LOADER_FIELDS(X)
#undef X
	};
	for (int i = 0; i < L_COUNT; i++) {
		if (is_ptr[i])
			specs[i].width = (uint8_t)s->ps;
		s->width[i] = specs[i].width;
	}
	if (adac_desc_resolve(rt->desc, specs, L_COUNT, s->off, s->has, err)) {
		adac_error_wrap(err, "Loader contract: ");
		free(s);
		return NULL;
	}
	adac_runtime_set_slot(rt, ADAC_SLOT_LOADER, s, free_state);
	return s;
}

static int read_field(struct adac_runtime *rt, const struct loader_state *s, uint64_t obj, int f, uint64_t *out,
                      struct adac_error *err)
{
	uint8_t buf[8] = {0};
	if (adac_read(rt->t, obj + s->off[f], buf, s->width[f], err))
		return -1;
	*out = s->width[f] == 8 ? adac_get_u64(buf, 0) : s->width[f] == 4 ? adac_get_u32(buf, 0) : buf[0];
	return 0;
}

/* UTF-16LE (PAL WCHAR), NUL-terminated, at addr -> new UTF-8 string (at most ADAC_MAX_PATH_BYTES). */
static char *read_utf16(struct adac_target *t, uint64_t addr, struct adac_error *err)
{
	size_t cap = ADAC_MAX_PATH_BYTES + 4, len = 0;
	char *out = malloc(cap);
	if (!out) {
		adac_fail(err, ADAC_E_NOMEM, addr, "out of memory reading a string");
		return NULL;
	}
	uint8_t chunk[256];
	uint32_t pending_high = 0;
	for (uint64_t pos = 0;; pos += sizeof chunk) {
		size_t got = adac_read_upto(t, addr + pos, chunk, sizeof chunk) & ~(size_t)1;
		for (size_t i = 0; i < got; i += 2) {
			uint32_t c = adac_get_u16(chunk, i);
			if (c == 0) {
				out[len] = '\0';
				return out;
			}
			if (c >= 0xd800 && c < 0xdc00) {
				pending_high = c;
				continue;
			}
			if (c >= 0xdc00 && c < 0xe000 && pending_high) {
				c = 0x10000 + ((pending_high - 0xd800) << 10) + (c - 0xdc00);
			} else if (c >= 0xd800 && c < 0xe000) {
				c = 0xfffd;
			}
			pending_high = 0;
			if (len + 4 > ADAC_MAX_PATH_BYTES) {
				free(out);
				adac_fail(err, ADAC_E_LIMIT, addr, "UTF-16 string at 0x%llx is longer than %u bytes",
				          (unsigned long long)addr, ADAC_MAX_PATH_BYTES);
				return NULL;
			}
			if (c < 0x80) {
				out[len++] = (char)c;
			} else if (c < 0x800) {
				out[len++] = (char)(0xc0 | (c >> 6));
				out[len++] = (char)(0x80 | (c & 0x3f));
			} else if (c < 0x10000) {
				out[len++] = (char)(0xe0 | (c >> 12));
				out[len++] = (char)(0x80 | ((c >> 6) & 0x3f));
				out[len++] = (char)(0x80 | (c & 0x3f));
			} else {
				out[len++] = (char)(0xf0 | (c >> 18));
				out[len++] = (char)(0x80 | ((c >> 12) & 0x3f));
				out[len++] = (char)(0x80 | ((c >> 6) & 0x3f));
				out[len++] = (char)(0x80 | (c & 0x3f));
			}
		}
		if (got < sizeof chunk) {
			free(out);
			adac_fail(err, ADAC_E_READ, addr + pos + got, "cannot read the UTF-16 string at 0x%llx",
			          (unsigned long long)addr);
			return NULL;
		}
	}
}

static char *read_name(struct adac_runtime *rt, uint64_t ptr, bool utf16, struct adac_error *err)
{
	if (ptr == 0)
		return strdup("");
	return utf16 ? read_utf16(rt->t, ptr, err) : adac_read_cstring(rt->t, ptr, ADAC_MAX_PATH_BYTES, err);
}

const struct adac_loader_module *adac_loader_module(struct adac_runtime *rt, uint64_t module, struct adac_error *err)
{
	struct loader_state *s = get_state(rt, err);
	if (!s)
		return NULL;
	for (size_t i = 0; i < s->n; i++)
		if (s->mods[i]->m.module == module)
			return &s->mods[i]->m;
	if (module == 0 || module % s->ps) {
		adac_fail(err, ADAC_E_CORRUPT, module, "0x%llx is not a Module address", (unsigned long long)module);
		return NULL;
	}
	if (s->n >= ADAC_MAX_MODULES) {
		adac_fail(err, ADAC_E_LIMIT, module, "more than %u modules", ADAC_MAX_MODULES);
		return NULL;
	}
	struct mod_entry e = {0};
	e.m.module = module;
	uint64_t v, path = 0, file = 0, simple = 0, gen = 0;
	if (read_field(rt, s, module, L_MOD_ASSEMBLY, &e.m.assembly, err) ||
	    read_field(rt, s, module, L_MOD_PEASSEMBLY, &e.m.pe_assembly, err) ||
	    read_field(rt, s, module, L_MOD_BASE, &e.m.il_base, err) || read_field(rt, s, module, L_MOD_FLAGS, &v, err) ||
	    read_field(rt, s, module, L_MOD_DYNMD, &e.m.dynamic_metadata, err) ||
	    read_field(rt, s, module, L_MOD_PATH, &path, err) || read_field(rt, s, module, L_MOD_FILENAME, &file, err) ||
	    (s->has[L_MOD_SIMPLENAME] && read_field(rt, s, module, L_MOD_SIMPLENAME, &simple, err)) ||
	    (s->has[L_MOD_MDGEN] && read_field(rt, s, module, L_MOD_MDGEN, &gen, err)))
		goto fail;
	e.m.flags = (uint32_t)v;
	e.m.metadata_generation = (uint32_t)gen;
	e.path = read_name(rt, path, true, err);
	if (!e.path)
		goto fail;
	e.file_name = read_name(rt, file, true, err);
	if (!e.file_name)
		goto fail;
	e.simple_name = read_name(rt, simple, false, err);
	if (!e.simple_name)
		goto fail;
	struct mod_entry *heap = malloc(sizeof *heap);
	if (!heap) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		goto fail;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct mod_entry **m = realloc(s->mods, cap * sizeof *m);
		if (!m) {
			free(heap);
			adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
			goto fail;
		}
		s->mods = m;
		s->cap = cap;
	}
	e.m.path = e.path;
	e.m.file_name = e.file_name;
	e.m.simple_name = e.simple_name;
	*heap = e;
	s->mods[s->n++] = heap;
	return &heap->m;
fail:
	free(e.path);
	free(e.file_name);
	free(e.simple_name);
	adac_error_wrap(err, "Module 0x%llx: ", (unsigned long long)module);
	return NULL;
}

const struct adac_loader_module *adac_loader_module_by_path(struct adac_runtime *rt, const char *path)
{
	const struct loader_state *s = adac_runtime_slot(rt, ADAC_SLOT_LOADER);
	for (size_t i = 0; s && i < s->n; i++)
		if (strcmp(s->mods[i]->m.path, path) == 0)
			return &s->mods[i]->m;
	return NULL;
}

const char *adac_loader_image_origin(struct adac_runtime *rt, uint64_t module)
{
	struct adac_loader_image img;
	if (!rt->t || adac_loader_image(rt, module, &img, NULL) != 0)
		return NULL;
	return adac_target_origin(rt->t, img.base);
}

static int read_layout(struct adac_runtime *rt, const struct loader_state *s, uint64_t layout,
                       struct adac_loader_image *img, struct adac_error *err)
{
	uint64_t base = 0, size = 0, flags = 0;
	if (read_field(rt, s, layout, L_PEL_BASE, &base, err) || read_field(rt, s, layout, L_PEL_SIZE, &size, err) ||
	    read_field(rt, s, layout, L_PEL_FLAGS, &flags, err)) {
		adac_error_wrap(err, "PEImageLayout 0x%llx: ", (unsigned long long)layout);
		return -1;
	}
	img->layout = layout;
	img->base = base;
	img->size = (uint32_t)size;
	img->flags = (uint32_t)flags;
	img->mapped = (flags & ADAC_PE_LAYOUT_MAPPED) != 0;
	return 0;
}

int adac_loader_image(struct adac_runtime *rt, uint64_t module, struct adac_loader_image *img, struct adac_error *err)
{
	memset(img, 0, sizeof *img);
	struct loader_state *s = get_state(rt, err);
	const struct adac_loader_module *m = s ? adac_loader_module(rt, module, err) : NULL;
	if (!m)
		return -1;
	if (m->pe_assembly == 0)
		return adac_fail(err, ADAC_E_NOT_FOUND, module, "Module 0x%llx has no PEAssembly", (unsigned long long)module);
	uint64_t image, layout = 0;
	if (read_field(rt, s, m->pe_assembly, L_PEA_IMAGE, &image, err))
		goto fail;
	if (image == 0)
		return adac_fail(err, ADAC_E_NOT_FOUND, module, "Module 0x%llx has no PE image (in-memory module)",
		                 (unsigned long long)module);
	if (read_field(rt, s, image, L_PEI_LOADED, &layout, err))
		goto fail;
	if (layout == 0 && s->has[L_PEI_FLAT] && read_field(rt, s, image, L_PEI_FLAT, &layout, err))
		goto fail;
	if (layout == 0)
		return adac_fail(err, ADAC_E_NOT_FOUND, module, "Module 0x%llx: PEImage 0x%llx has no layout",
		                 (unsigned long long)module, (unsigned long long)image);
	if (read_layout(rt, s, layout, img, err))
		goto fail;
	if (img->base == 0 || img->size == 0)
		return adac_fail(err, ADAC_E_CORRUPT, layout, "Module 0x%llx: PEImageLayout 0x%llx has base 0x%llx, size %u",
		                 (unsigned long long)module, (unsigned long long)layout, (unsigned long long)img->base,
		                 img->size);
	return 0;
fail:
	adac_error_wrap(err, "Module 0x%llx: ", (unsigned long long)module);
	return -1;
}

int adac_loader_dynamic_metadata(struct adac_runtime *rt, uint64_t module, uint64_t *addr, uint32_t *size,
                                 struct adac_error *err)
{
	*addr = 0;
	*size = 0;
	struct loader_state *s = get_state(rt, err);
	const struct adac_loader_module *m = s ? adac_loader_module(rt, module, err) : NULL;
	if (!m)
		return -1;
	if (m->dynamic_metadata == 0)
		return 0;
	/* DynamicMetadata is {uint32 Size; bytes Data[Size]} with the bytes inline at the Data offset. */
	uint64_t n = 0;
	if (read_field(rt, s, m->dynamic_metadata, L_DM_SIZE, &n, err)) {
		adac_error_wrap(err, "Module 0x%llx: DynamicMetadata: ", (unsigned long long)module);
		return -1;
	}
	*addr = m->dynamic_metadata + s->off[L_DM_DATA];
	*size = (uint32_t)n;
	return 0;
}
