/* dwarf_write.h - the DWARF sections of a symbol file, for the ELF writer (elf_write.c). */
#ifndef ADAC_DWARF_WRITE_H
#define ADAC_DWARF_WRITE_H

#include "symfile/bytebuf.h"
#include "symfile/symfile.h"

/* The sections the DWARF writer makes; the ELF writer adds them under these names. */
enum adac_dwarf_section {
	ADAC_DW_ABBREV, ADAC_DW_INFO, ADAC_DW_STR, ADAC_DW_LINE, ADAC_DW_LOC, ADAC_DW_RANGES, ADAC_DW_ARANGES, ADAC_DW_FRAME,
	ADAC_DW_COUNT,
};

struct adac_dwarf_out {
	struct adac_bytebuf sec[ADAC_DW_COUNT];
	const char *name[ADAC_DW_COUNT];   /* ".debug_info", ... (by DWARF version) */
};

/* Builds the DWARF sections of sf. Frees nothing on failure: call adac_dwarf_out_free. */
int adac_dwarf_write(const struct adac_symfile *sf, const struct adac_symfile_opts *o, struct adac_dwarf_out *out,
                     struct adac_error *err);
void adac_dwarf_out_free(struct adac_dwarf_out *out);

#endif
