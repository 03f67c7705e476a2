/* loader.h - Loader contract, the module parts: Module -> PEAssembly -> PEImage -> image layout
 * (base, size, mapped or flat), the module's path, file name and simple name, and the saved
 * metadata of in-memory (Reflection.Emit) modules. */
#ifndef ADAC_LOADER_H
#define ADAC_LOADER_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;

/* PEImageLayout flags (Loader contract): the layout is mapped/hydrated, i.e. RVA = base + rva. */
#define ADAC_PE_LAYOUT_MAPPED 0x1u

/* Module.Flags bits (Loader contract). */
#define ADAC_MODULE_TENURED 0x1u
#define ADAC_MODULE_EDIT_AND_CONTINUE 0x8u
#define ADAC_MODULE_REFLECTION_EMIT 0x40u

struct adac_loader_image {
	uint64_t layout;   /* PEImageLayout* used (LoadedImageLayout, else FlatImageLayout) */
	uint64_t base;
	uint32_t size;
	uint32_t flags;
	bool mapped;       /* flags & ADAC_PE_LAYOUT_MAPPED */
};

struct adac_loader_module {
	uint64_t module;
	uint64_t assembly;
	uint64_t pe_assembly;
	uint64_t il_base;           /* Module.Base */
	uint32_t flags;             /* Module.Flags */
	uint64_t dynamic_metadata;  /* Module.DynamicMetadata (0 for modules loaded from a file) */
	uint32_t metadata_generation; /* EnC / hot reload generation, 0 when none or not described */
	const char *path;           /* UTF-8; "" when none (in-memory modules) */
	const char *file_name;      /* UTF-8; "" when none */
	const char *simple_name;    /* UTF-8 ("System.Private.CoreLib"); "" when none */
};

/* What the runtime knows of a module, read once and cached (ADAC_SLOT_LOADER) until the runtime
 * closes. NULL with err on failure. */
const struct adac_loader_module *adac_loader_module(struct adac_runtime *rt, uint64_t module, struct adac_error *err);

/* A module adac_loader_module has already read whose path is `path`, or NULL; reads nothing. */
const struct adac_loader_module *adac_loader_module_by_path(struct adac_runtime *rt, const char *path);

/* Where the module's image bytes come from when not from the target or the file at its path
 * ("nested.dll from /syms/nested.dll (symbol path)", adac_target_origin), else NULL. */
const char *adac_loader_image_origin(struct adac_runtime *rt, uint64_t module);

/* TryGetLoadedImageContents: the PE image of the module (LoadedImageLayout, else FlatImageLayout).
 * ADAC_E_NOT_FOUND when the module has none (Reflection.Emit). */
int adac_loader_image(struct adac_runtime *rt, uint64_t module, struct adac_loader_image *img, struct adac_error *err);

/* Module.DynamicMetadata: address and size of the saved metadata blob; *size is 0 when there is
 * none (the metadata is then in the PE image). */
int adac_loader_dynamic_metadata(struct adac_runtime *rt, uint64_t module, uint64_t *addr, uint32_t *size,
                                 struct adac_error *err);

#endif
