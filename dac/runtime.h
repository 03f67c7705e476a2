/* runtime.h - one .NET runtime found in a target: its module and its contract descriptor.
 * Contract files (object.c, ...) hang their resolved layouts and caches off this struct. */
#ifndef ADAC_RUNTIME_H
#define ADAC_RUNTIME_H

#include <stdint.h>

#include "descriptor.h"
#include "error.h"
#include "target.h"

#define ADAC_DESCRIPTOR_SYMBOL "DotNetRuntimeContractDescriptor"

struct adac_runtime {
	struct adac_target *t;
	struct adac_descriptor *desc;
	char *module_path;       /* module exporting the descriptor (libcoreclr.so normally) */
	uint64_t module_base;
	uint64_t desc_addr;
};

/* Finds the runtime: the descriptor exported by libcoreclr.so, else by any module (single-file
 * hosts, NativeAOT, synthetic targets). ADAC_E_NO_RUNTIME when there is none. */
struct adac_runtime *adac_runtime_open(struct adac_target *t, struct adac_error *err);
void adac_runtime_close(struct adac_runtime *rt);

#endif
