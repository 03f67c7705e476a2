/* pdb.h - portable PDB reader: source file and line of an IL offset, local variable names. Reads
 * the PDB next to the assembly on disk, or the one embedded in it. */
#ifndef ADAC_PDB_H
#define ADAC_PDB_H

#include <stdint.h>

#include "error.h"

struct adac_runtime;

struct adac_source_line {
	const char *file;    /* document path as recorded in the PDB (owned by the PDB cache) */
	uint32_t line;
	uint32_t column;
};

/* Sequence point covering il_offset in method `token` of the assembly at assembly_path (the
 * nearest point at or before il_offset; hidden points skipped). ADAC_E_NOT_FOUND when there is no
 * PDB (the message says so: "no PDB for X.dll") or no sequence point. */
int adac_pdb_source_line(struct adac_runtime *rt, const char *assembly_path, uint32_t token, uint32_t il_offset,
                         struct adac_source_line *out, struct adac_error *err);

/* Name of local variable slot `index` of method `token` in scope at il_offset; NULL if unknown. */
const char *adac_pdb_local_name(struct adac_runtime *rt, const char *assembly_path, uint32_t token, uint32_t index,
                                uint32_t il_offset, struct adac_error *err);

#endif
