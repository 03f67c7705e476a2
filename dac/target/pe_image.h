/* pe_image.h - the identity of a PE image (an assembly), read through a reader: COFF TimeDateStamp
 * and SizeOfImage (what symbol servers key PE files by), the sections, and the debug directory
 * (the CodeView entry naming the PDB and its id, an embedded portable PDB). The image may be a file,
 * a flat copy of one in memory, or mapped (loaded) with sections at their RVAs. */
#ifndef ADAC_PE_IMAGE_H
#define ADAC_PE_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/limits.h"

/* Where the image's bytes come from: read fills len bytes at offset off from the image start (a file
 * offset, or an RVA when mapped) or fails with err set. */
struct adac_pe_reader {
	int (*read)(void *ctx, uint64_t off, void *buf, size_t len, struct adac_error *err);
	void *ctx;
	bool mapped;       /* sections at their RVAs (a loaded layout), else at their file offsets */
	const char *what;  /* for messages: "nested.dll", "/path/nested.dll" */
};

struct adac_pe_section {
	uint32_t va, vsize, raw, rawsize;
};

struct adac_pe_headers {
	uint16_t machine;
	uint32_t timestamp;        /* COFF TimeDateStamp */
	uint32_t size_of_image;
	uint32_t debug_rva, debug_size;  /* data directory 6; 0 when absent */
	uint32_t cor_rva, cor_size;      /* data directory 14 (CLI header); 0 for native images */
	unsigned nsections;
	struct adac_pe_section sections[ADAC_MAX_PE_HEADER_BYTES / 40];
};

/* Parses the headers from the image's first bytes (the MZ header onwards). ADAC_E_NOT_FOUND when
 * they are not a PE header ("not a PE image"), ADAC_E_CORRUPT when they are cut or malformed. */
int adac_pe_parse_headers(const uint8_t *buf, size_t len, const char *what, struct adac_pe_headers *h,
                          struct adac_error *err);
/* Reads the first ADAC_MAX_PE_HEADER_BYTES (fewer when the reader has fewer) and parses them. */
int adac_pe_read_headers(const struct adac_pe_reader *r, struct adac_pe_headers *h, struct adac_error *err);

/* Offset in the reader's addressing of [rva, rva + len): the RVA itself when mapped, else through
 * the section holding it. -1 when no section holds it all. */
int adac_pe_rva_to_offset(const struct adac_pe_headers *h, bool mapped, uint32_t rva, uint32_t len, uint64_t *off);

#define ADAC_PE_PDB_NAME_MAX 256

struct adac_pe_debug {
	bool has_codeview;         /* an RSDS CodeView entry */
	bool portable;             /* ... for a portable PDB (MinorVersion "PM") */
	uint8_t pdb_id[20];        /* its GUID then the entry's TimeDateStamp: the #Pdb id of a portable PDB */
	uint32_t age;
	char pdb_name[ADAC_PE_PDB_NAME_MAX]; /* the PDB's file name, without directories ("" when none) */
	bool has_embedded;         /* an embedded portable PDB entry (type 17) */
	uint64_t embedded_off;     /* its data, in the reader's addressing */
	uint32_t embedded_size;
};

/* The debug directory's CodeView and embedded-PDB entries. No debug directory is not an error (both
 * flags false); unreadable or malformed entries are. */
int adac_pe_debug_info(const struct adac_pe_reader *r, const struct adac_pe_headers *h, struct adac_pe_debug *d,
                       struct adac_error *err);

#endif
