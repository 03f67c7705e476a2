/* pe_image.c - PE headers and debug directory of an image read through a reader (PE/COFF spec:
 * MS-DOS stub, COFF file header, optional header, section table, debug directory). */
#include "target/pe_image.h"

#include <string.h>

#include "base/cursor.h"

#define RSDS_SIGNATURE 0x53445352u     /* "RSDS": CodeView with a GUID */
#define DEBUG_TYPE_CODEVIEW 2u
#define DEBUG_TYPE_EMBEDDED_PDB 17u
#define PORTABLE_PDB_MINOR 0x504du     /* CodeView MinorVersion of a portable PDB ("PM") */
#define DEBUG_ENTRY_BYTES 28u
#define DEBUG_DIR_ENTRY 6u
#define CLI_DIR_ENTRY 14u
#define SECTION_BYTES 40u

int adac_pe_parse_headers(const uint8_t *b, size_t len, const char *what, struct adac_pe_headers *h,
                          struct adac_error *err)
{
	memset(h, 0, sizeof *h);
	if (len < 0x40 || b[0] != 'M' || b[1] != 'Z')
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "%s is not a PE image", what);
	uint32_t pe = adac_get_u32(b, 0x3c);
	if (pe > len || len - pe < 24 || memcmp(b + pe, "PE\0\0", 4) != 0)
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "%s is not a PE image", what);
	h->machine = adac_get_u16(b, pe + 4);
	unsigned nsec = adac_get_u16(b, pe + 6);
	h->timestamp = adac_get_u32(b, pe + 8);
	size_t optsize = adac_get_u16(b, pe + 20), opt = pe + 24;
	if (optsize < 60 || opt + optsize > len)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "%s: the PE optional header is cut", what);
	uint16_t magic = adac_get_u16(b, opt);
	if (magic != 0x10b && magic != 0x20b)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "%s: PE optional header magic 0x%x", what, magic);
	h->size_of_image = adac_get_u32(b, opt + 56);
	size_t ndirs_at = opt + (magic == 0x20b ? 108 : 92), dirs = ndirs_at + 4;
	uint32_t ndirs = ndirs_at + 4 <= opt + optsize ? adac_get_u32(b, ndirs_at) : 0;
	if (ndirs > DEBUG_DIR_ENTRY && dirs + (DEBUG_DIR_ENTRY + 1) * 8 <= opt + optsize) {
		h->debug_rva = adac_get_u32(b, dirs + DEBUG_DIR_ENTRY * 8);
		h->debug_size = adac_get_u32(b, dirs + DEBUG_DIR_ENTRY * 8 + 4);
	}
	if (ndirs > CLI_DIR_ENTRY && dirs + (CLI_DIR_ENTRY + 1) * 8 <= opt + optsize) {
		h->cor_rva = adac_get_u32(b, dirs + CLI_DIR_ENTRY * 8);
		h->cor_size = adac_get_u32(b, dirs + CLI_DIR_ENTRY * 8 + 4);
	}
	size_t sec = opt + optsize;
	if (nsec > sizeof h->sections / sizeof h->sections[0] || sec + (size_t)nsec * SECTION_BYTES > len)
		return adac_fail(err, nsec > sizeof h->sections / sizeof h->sections[0] ? ADAC_E_LIMIT : ADAC_E_CORRUPT, 0,
		                 "%s: %u PE sections do not fit in the first ADAC_MAX_PE_HEADER_BYTES (%u) bytes", what, nsec,
		                 ADAC_MAX_PE_HEADER_BYTES);
	for (unsigned i = 0; i < nsec; i++) {
		const uint8_t *s = b + sec + (size_t)i * SECTION_BYTES;
		h->sections[i] = (struct adac_pe_section){adac_get_u32(s, 12), adac_get_u32(s, 8), adac_get_u32(s, 20),
		                                          adac_get_u32(s, 16)};
	}
	h->nsections = nsec;
	return 0;
}

int adac_pe_read_headers(const struct adac_pe_reader *r, struct adac_pe_headers *h, struct adac_error *err)
{
	uint8_t b[ADAC_MAX_PE_HEADER_BYTES];
	/* The headers may be shorter than the buffer (a tiny file): take the longest prefix there is. */
	size_t len = sizeof b;
	while (r->read(r->ctx, 0, b, len, NULL) != 0) {
		if (len <= 0x200) {
			struct adac_error rerr = {0};
			if (r->read(r->ctx, 0, b, 0x40, &rerr) != 0) {
				adac_error_copy(err, &rerr);
				adac_error_wrap(err, "%s: ", r->what);
				return -1;
			}
			len = 0x40;
			break;
		}
		len /= 2;
	}
	return adac_pe_parse_headers(b, len, r->what, h, err);
}

int adac_pe_rva_to_offset(const struct adac_pe_headers *h, bool mapped, uint32_t rva, uint32_t len, uint64_t *off)
{
	if ((uint64_t)rva + len > UINT32_MAX)
		return -1;
	if (mapped) {
		if (h->size_of_image && (uint64_t)rva + len > h->size_of_image)
			return -1;
		*off = rva;
		return 0;
	}
	uint32_t first_va = UINT32_MAX;
	for (unsigned i = 0; i < h->nsections; i++) {
		const struct adac_pe_section *s = &h->sections[i];
		if (s->va < first_va)
			first_va = s->va;
		if (rva >= s->va && rva - s->va < s->rawsize && (uint64_t)(rva - s->va) + len <= s->rawsize) {
			*off = (uint64_t)s->raw + (rva - s->va);
			return 0;
		}
	}
	/* The headers come before the first section at the same offset in both layouts. */
	if ((uint64_t)rva + len <= first_va && first_va != UINT32_MAX) {
		*off = rva;
		return 0;
	}
	return -1;
}

/* The file name at the end of a PDB path recorded by the compiler (either slash). */
static void pdb_file_name(const uint8_t *path, size_t len, char *out)
{
	size_t start = 0, end = 0;
	while (end < len && path[end])
		end++;
	for (size_t i = 0; i < end; i++)
		if (path[i] == '/' || path[i] == '\\')
			start = i + 1;
	size_t n = end - start;
	if (n >= ADAC_PE_PDB_NAME_MAX)
		n = 0; /* a name this long is not one we can look up */
	memcpy(out, path + start, n);
	out[n] = '\0';
}

static int read_codeview(const struct adac_pe_reader *r, uint64_t off, uint32_t size, uint32_t stamp,
                         struct adac_pe_debug *d, struct adac_error *err)
{
	uint8_t cv[24 + ADAC_PE_PDB_NAME_MAX];
	if (size < 24)
		return 0;
	size_t want = size < sizeof cv ? size : sizeof cv;
	if (r->read(r->ctx, off, cv, want, err)) {
		adac_error_wrap(err, "%s: CodeView debug entry: ", r->what);
		return -1;
	}
	if (adac_get_u32(cv, 0) != RSDS_SIGNATURE)
		return 0;
	d->has_codeview = true;
	memcpy(d->pdb_id, cv + 4, 16);
	memcpy(d->pdb_id + 16, &stamp, 4);
	d->age = adac_get_u32(cv, 20);
	pdb_file_name(cv + 24, want - 24, d->pdb_name);
	return 0;
}

int adac_pe_debug_info(const struct adac_pe_reader *r, const struct adac_pe_headers *h, struct adac_pe_debug *d,
                       struct adac_error *err)
{
	memset(d, 0, sizeof *d);
	if (!h->debug_rva || !h->debug_size)
		return 0;
	uint64_t dir;
	if (h->debug_size > DEBUG_ENTRY_BYTES * 64 || adac_pe_rva_to_offset(h, r->mapped, h->debug_rva, h->debug_size, &dir))
		return adac_fail(err, ADAC_E_CORRUPT, 0, "%s: bad debug directory (RVA 0x%x, %u bytes)", r->what, h->debug_rva,
		                 h->debug_size);
	uint8_t e[DEBUG_ENTRY_BYTES * 64];
	if (r->read(r->ctx, dir, e, h->debug_size, err)) {
		adac_error_wrap(err, "%s: debug directory: ", r->what);
		return -1;
	}
	for (uint32_t i = 0; i + DEBUG_ENTRY_BYTES <= h->debug_size; i += DEBUG_ENTRY_BYTES) {
		uint32_t stamp = adac_get_u32(e, i + 4), type = adac_get_u32(e, i + 12), size = adac_get_u32(e, i + 16);
		uint32_t rva = adac_get_u32(e, i + 20), raw = adac_get_u32(e, i + 24);
		uint16_t minor = adac_get_u16(e, i + 10);
		/* Mapped images have the data at its RVA (0: not mapped); files and flat copies at raw. */
		uint64_t off = r->mapped ? rva : raw;
		if (type == DEBUG_TYPE_CODEVIEW && !d->has_codeview && off) {
			if (read_codeview(r, off, size, stamp, d, err))
				return -1;
			d->portable = d->has_codeview && minor == PORTABLE_PDB_MINOR;
		} else if (type == DEBUG_TYPE_EMBEDDED_PDB && size >= 8 && off) {
			d->has_embedded = true;
			d->embedded_off = off;
			d->embedded_size = size;
		}
	}
	return 0;
}
