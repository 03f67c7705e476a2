/* source_map.h - where a native offset of a code version is in the source: the debug info's bounds
 * give its IL offset (adac_debuginfo_il_offset: the entry at or before it), the portable PDB's
 * sequence points the file and line of that IL offset (the nearest point at or before it). Code
 * the bounds map to the prolog is at the method's first line; an epilog, unmapped code and hidden
 * sequence points are at the line before them (the previous bound that has one). The symbol files'
 * line rows and the physical frames of `bt` both follow this rule. */
#ifndef ADAC_SOURCE_MAP_H
#define ADAC_SOURCE_MAP_H

#include <stdint.h>

#include "base/error.h"
#include "metadata/pdb.h"

struct adac_runtime;
struct adac_debug_info;

/* What locating a method's source needs: its assembly's path and its MethodDef token. */
struct adac_source_map {
	struct adac_runtime *rt;
	const char *path;                 /* the assembly on disk (for its PDB); NULL: no source */
	uint32_t token;
	const struct adac_debug_info *di;
	struct adac_source_line first;    /* the method's first line (IL offset 0), line 0 when none */
};

/* Prepares the map of the code of method_desc with debug info di (may be NULL: no lines). */
void adac_source_map_init(struct adac_source_map *m, struct adac_runtime *rt, uint64_t method_desc,
                          const struct adac_debug_info *di);

/* The source position of native_offset; line 0 when it has none. */
struct adac_source_line adac_source_map_at(const struct adac_source_map *m, uint32_t native_offset);

/* The position the bound covering native_offset gives by itself (line 0 for an epilog, unmapped
 * code or a hidden sequence point, which keep the line before them): for walking the bounds in
 * order, where the line before is at hand. */
struct adac_source_line adac_source_map_own(const struct adac_source_map *m, uint32_t native_offset);

#endif
