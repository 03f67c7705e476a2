/* pdb_find.h - finding the portable PDB of an assembly by identity. The identity is the CodeView
 * entry of the assembly's debug directory (PDB file name, GUID and stamp), read from the image in
 * the target (which covers a core that holds it, or one whose backend found the assembly through
 * the symbol path), else from the file at the assembly's path. Candidates, in order: the PDB beside
 * the assembly, the one embedded in it, the symbol path and symbol servers (symbols.h). The first
 * whose #Pdb id equals the CodeView id is taken; the others are refused, and the message says why. */
#ifndef ADAC_PDB_FIND_H
#define ADAC_PDB_FIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/limits.h"

struct adac_runtime;
struct adac_symbols;

struct adac_pdb_bytes {
	uint8_t *data;     /* the PDB image (malloc'd) */
	size_t len;
	char origin[2 * ADAC_MAX_PATH_BYTES + 16]; /* "/path/x.pdb", "embedded in /path/x.dll", or
	                                        * "/cache/.../x.pdb (symbol server URL)" */
};

/* The PDB of the assembly the runtime loaded from assembly_path (rt->t may be NULL: files only).
 * ADAC_E_NOT_FOUND with "no PDB for x.dll: <why>". */
int adac_pdb_find(struct adac_runtime *rt, const char *assembly_path, struct adac_pdb_bytes *out,
                  struct adac_error *err);
/* The same from the assembly file alone, looking through symbols too (NULL: nowhere else). */
int adac_pdb_find_file(const char *assembly_path, struct adac_symbols *symbols, struct adac_pdb_bytes *out,
                       struct adac_error *err);
void adac_pdb_bytes_free(struct adac_pdb_bytes *b);

#endif
