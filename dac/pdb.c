/* pdb.c - portable PDB reader: the ECMA-335 metadata of a PDB file (#Pdb, #~, #Strings, #Blob,
 * #GUID), its debug tables Document, MethodDebugInformation, LocalScope and LocalVariable, the
 * sequence-points and document-name blobs; finding the PDB of an assembly (beside it or embedded)
 * and checking its id against the assembly's CodeView debug directory entry.
 *
 * Specs: ECMA-335 II.24 (metadata root, streams, #~), II.23.2 (compressed integers), and the
 * Portable PDB format (dotnet/runtime docs/design/specs/PortablePdb-Metadata.md). The table reader
 * here is private and small on purpose: the PDB is a file on disk, not target memory. */
#define _FILE_OFFSET_BITS 64
#include "pdb.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "cursor.h"
#include "limits.h"
#include "runtime.h"

#define METADATA_SIGNATURE 0x424a5342u /* "BSJB" */
#define MPDB_SIGNATURE 0x4244504du     /* "MPDB" */
#define RSDS_SIGNATURE 0x53445352u     /* "RSDS" */
#define DEBUG_TYPE_CODEVIEW 2u
#define DEBUG_TYPE_EMBEDDED_PDB 17u
#define PORTABLE_PDB_MINOR 0x504du     /* CodeView entry MinorVersion of a portable PDB ("PM") */

enum {
	T_MODULE = 0x00, T_TYPEREF = 0x01, T_TYPEDEF = 0x02, T_FIELD = 0x04, T_METHODDEF = 0x06, T_PARAM = 0x08,
	T_INTERFACEIMPL = 0x09, T_MEMBERREF = 0x0a, T_DECLSECURITY = 0x0e, T_STANDALONESIG = 0x11, T_EVENT = 0x14,
	T_PROPERTY = 0x17, T_MODULEREF = 0x1a, T_TYPESPEC = 0x1b, T_ASSEMBLY = 0x20, T_ASSEMBLYREF = 0x23, T_FILE = 0x26,
	T_EXPORTEDTYPE = 0x27, T_MANIFESTRESOURCE = 0x28, T_GENERICPARAM = 0x2a, T_METHODSPEC = 0x2b,
	T_GENERICPARAMCONSTRAINT = 0x2c,
	T_DOCUMENT = 0x30, T_METHODDEBUGINFO = 0x31, T_LOCALSCOPE = 0x32, T_LOCALVARIABLE = 0x33,
	T_LOCALCONSTANT = 0x34, T_IMPORTSCOPE = 0x35, T_STATEMACHINEMETHOD = 0x36, T_CUSTOMDEBUGINFO = 0x37,
	T_COUNT = 64
};

struct table {
	uint32_t rows;
	uint32_t row_size;
	const uint8_t *base;
};

struct adac_pdb {
	char *origin;
	uint8_t *data;
	size_t len;
	uint8_t id[20];
	const uint8_t *strings, *blob;
	uint32_t strings_len, blob_len;
	unsigned str_size, guid_size, blob_size; /* heap index widths: 2 or 4 */
	uint32_t rows[T_COUNT];                  /* row counts, type-system tables from #Pdb */
	struct table t[T_COUNT];
	char **doc_names;                        /* lazily joined document names, by row - 1 */
};

/* ------------------------------------------------------------------------------------------------
 * Metadata
 * ---------------------------------------------------------------------------------------------- */

static int corrupt(const struct adac_pdb *p, struct adac_error *err, const char *fmt, const char *what)
{
	return adac_fail(err, ADAC_E_CORRUPT, 0, "PDB %s: %s%s", p->origin, fmt, what ? what : "");
}

static unsigned idx_size(const struct adac_pdb *p, unsigned table) { return p->rows[table] < 0x10000 ? 2 : 4; }

static unsigned coded_size(const struct adac_pdb *p, const uint8_t *tables, size_t n, unsigned tag_bits)
{
	uint32_t max = 0;
	for (size_t i = 0; i < n; i++)
		if (p->rows[tables[i]] > max)
			max = p->rows[tables[i]];
	return max < (1u << (16 - tag_bits)) ? 2 : 4;
}

static uint32_t get_idx(const uint8_t *b, unsigned size) { return size == 2 ? adac_get_u16(b, 0) : adac_get_u32(b, 0); }

/* ECMA-335 II.23.2 compressed unsigned integer. */
static int read_cu(struct adac_cursor *c, uint32_t *out, unsigned *width)
{
	uint8_t b0, b1;
	if (adac_cursor_u8(c, &b0) != 0)
		return -1;
	if ((b0 & 0x80) == 0) {
		*out = b0;
		*width = 1;
		return 0;
	}
	if ((b0 & 0xc0) == 0x80) {
		if (adac_cursor_u8(c, &b1) != 0)
			return -1;
		*out = (uint32_t)(b0 & 0x3f) << 8 | b1;
		*width = 2;
		return 0;
	}
	if ((b0 & 0xe0) == 0xc0 && adac_cursor_need(c, 3)) {
		*out = (uint32_t)(b0 & 0x1f) << 24 | (uint32_t)c->p[0] << 16 | (uint32_t)c->p[1] << 8 | c->p[2];
		c->p += 3;
		*width = 4;
		return 0;
	}
	return -1;
}

static int read_cu32(struct adac_cursor *c, uint32_t *out)
{
	unsigned w;
	return read_cu(c, out, &w);
}

/* Compressed signed integer: rotated, sign in bit 0, sign-extended from 6, 13 or 28 bits. */
static int read_cs32(struct adac_cursor *c, int32_t *out)
{
	uint32_t u;
	unsigned w;
	if (read_cu(c, &u, &w) != 0)
		return -1;
	int32_t v = (int32_t)(u >> 1);
	if (u & 1)
		v = (int32_t)((uint32_t)v | (w == 1 ? 0xffffffc0u : w == 2 ? 0xffffe000u : 0xf0000000u));
	*out = v;
	return 0;
}

/* A #Blob entry. */
static int get_blob(const struct adac_pdb *p, uint32_t index, struct adac_cursor *out)
{
	if (index >= p->blob_len)
		return -1;
	struct adac_cursor c = adac_cursor_make(p->blob + index, p->blob_len - index);
	uint32_t n;
	if (read_cu32(&c, &n) != 0 || !adac_cursor_need(&c, n))
		return -1;
	*out = adac_cursor_make(c.p, n);
	return 0;
}

/* A #Strings entry (NUL-terminated inside the heap). */
static const char *get_string(const struct adac_pdb *p, uint32_t index)
{
	if (index >= p->strings_len || !memchr(p->strings + index, 0, p->strings_len - index))
		return NULL;
	return (const char *)p->strings + index;
}

static int parse_streams(struct adac_pdb *p, struct adac_cursor *pdbs, struct adac_cursor *tabs, struct adac_error *err)
{
	struct adac_cursor c = adac_cursor_make(p->data, p->len);
	uint32_t sig, reserved, verlen;
	uint16_t major, minor, flags, nstreams;
	if (adac_cursor_u32(&c, &sig) != 0 || sig != METADATA_SIGNATURE)
		return corrupt(p, err, "no metadata signature (BSJB)", NULL);
	if (adac_cursor_u16(&c, &major) || adac_cursor_u16(&c, &minor) || adac_cursor_u32(&c, &reserved) ||
	    adac_cursor_u32(&c, &verlen) || verlen > 255 || adac_cursor_skip(&c, verlen) || adac_cursor_u16(&c, &flags) ||
	    adac_cursor_u16(&c, &nstreams))
		return corrupt(p, err, "truncated metadata root", NULL);
	bool have_pdb = false, have_tabs = false;
	for (unsigned i = 0; i < nstreams; i++) {
		uint32_t off, size;
		if (adac_cursor_u32(&c, &off) || adac_cursor_u32(&c, &size))
			return corrupt(p, err, "truncated stream headers", NULL);
		const char *name = (const char *)c.p;
		const uint8_t *nul = memchr(c.p, 0, adac_cursor_left(&c) < 32 ? adac_cursor_left(&c) : 32);
		if (!nul)
			return corrupt(p, err, "bad stream name", NULL);
		size_t nlen = (size_t)(nul - c.p) + 1;
		if (adac_cursor_skip(&c, (nlen + 3) & ~(size_t)3) != 0)
			return corrupt(p, err, "truncated stream headers", NULL);
		if ((uint64_t)off + size > p->len)
			return corrupt(p, err, "stream outside the file: ", name);
		struct adac_cursor s = adac_cursor_make(p->data + off, size);
		if (strcmp(name, "#Pdb") == 0) {
			*pdbs = s;
			have_pdb = true;
		} else if (strcmp(name, "#~") == 0 || strcmp(name, "#-") == 0) {
			*tabs = s;
			have_tabs = true;
		} else if (strcmp(name, "#Strings") == 0) {
			p->strings = s.p;
			p->strings_len = size;
		} else if (strcmp(name, "#Blob") == 0) {
			p->blob = s.p;
			p->blob_len = size;
		}
	}
	if (!have_pdb)
		return corrupt(p, err, "no #Pdb stream (not a portable PDB)", NULL);
	if (!have_tabs)
		return corrupt(p, err, "no #~ stream", NULL);
	return 0;
}

static int parse_tables(struct adac_pdb *p, struct adac_cursor pdbs, struct adac_cursor c, struct adac_error *err)
{
	uint32_t entry;
	uint64_t referenced;
	if (adac_cursor_need(&pdbs, 20) == 0)
		return corrupt(p, err, "truncated #Pdb stream", NULL);
	memcpy(p->id, pdbs.p, 20);
	pdbs.p += 20;
	if (adac_cursor_u32(&pdbs, &entry) || adac_cursor_u64(&pdbs, &referenced))
		return corrupt(p, err, "truncated #Pdb stream", NULL);
	for (unsigned i = 0; i < T_COUNT; i++) {
		if (!(referenced >> i & 1))
			continue;
		if (i >= T_DOCUMENT || adac_cursor_u32(&pdbs, &p->rows[i]) != 0)
			return corrupt(p, err, "bad #Pdb type-system row counts", NULL);
	}

	uint32_t reserved;
	uint8_t tmaj, tmin, heaps, r2;
	uint64_t valid, sorted;
	if (adac_cursor_u32(&c, &reserved) || adac_cursor_u8(&c, &tmaj) || adac_cursor_u8(&c, &tmin) ||
	    adac_cursor_u8(&c, &heaps) || adac_cursor_u8(&c, &r2) || adac_cursor_u64(&c, &valid) ||
	    adac_cursor_u64(&c, &sorted))
		return corrupt(p, err, "truncated #~ header", NULL);
	p->str_size = heaps & 1 ? 4 : 2;
	p->guid_size = heaps & 2 ? 4 : 2;
	p->blob_size = heaps & 4 ? 4 : 2;
	for (unsigned i = 0; i < T_COUNT; i++) {
		if (!(valid >> i & 1))
			continue;
		if (i < T_DOCUMENT || i > T_CUSTOMDEBUGINFO)
			return adac_fail(err, ADAC_E_UNSUPPORTED, 0, "PDB %s: metadata table 0x%02x in a PDB is not supported",
			                 p->origin, i);
		if (adac_cursor_u32(&c, &p->rows[i]) != 0)
			return corrupt(p, err, "truncated #~ row counts", NULL);
		if (p->rows[i] > ADAC_MAX_METADATA_ROWS)
			return adac_fail(err, ADAC_E_LIMIT, 0, "PDB %s: table 0x%02x has %u rows, over ADAC_MAX_METADATA_ROWS (%u)",
			                 p->origin, i, p->rows[i], ADAC_MAX_METADATA_ROWS);
	}
	static const uint8_t has_cdi[] = {T_METHODDEF, T_FIELD, T_TYPEREF, T_TYPEDEF, T_PARAM, T_INTERFACEIMPL,
	                                  T_MEMBERREF, T_MODULE, T_DECLSECURITY, T_PROPERTY, T_EVENT, T_STANDALONESIG,
	                                  T_MODULEREF, T_TYPESPEC, T_ASSEMBLY, T_ASSEMBLYREF, T_FILE, T_EXPORTEDTYPE,
	                                  T_MANIFESTRESOURCE, T_GENERICPARAM, T_GENERICPARAMCONSTRAINT, T_METHODSPEC,
	                                  T_DOCUMENT, T_LOCALSCOPE, T_LOCALVARIABLE, T_LOCALCONSTANT, T_IMPORTSCOPE};
	unsigned b = p->blob_size, g = p->guid_size, s = p->str_size;
	p->t[T_DOCUMENT].row_size = b + g + b + g;
	p->t[T_METHODDEBUGINFO].row_size = idx_size(p, T_DOCUMENT) + b;
	p->t[T_LOCALSCOPE].row_size = idx_size(p, T_METHODDEF) + idx_size(p, T_IMPORTSCOPE) +
	                              idx_size(p, T_LOCALVARIABLE) + idx_size(p, T_LOCALCONSTANT) + 8;
	p->t[T_LOCALVARIABLE].row_size = 4 + s;
	p->t[T_LOCALCONSTANT].row_size = s + b;
	p->t[T_IMPORTSCOPE].row_size = idx_size(p, T_IMPORTSCOPE) + b;
	p->t[T_STATEMACHINEMETHOD].row_size = 2 * idx_size(p, T_METHODDEF);
	p->t[T_CUSTOMDEBUGINFO].row_size = coded_size(p, has_cdi, sizeof has_cdi, 5) + g + b;
	for (unsigned i = T_DOCUMENT; i <= T_CUSTOMDEBUGINFO; i++) {
		struct table *t = &p->t[i];
		t->rows = p->rows[i];
		uint64_t bytes = (uint64_t)t->rows * t->row_size;
		if (bytes > adac_cursor_left(&c))
			return corrupt(p, err, "tables run past the #~ stream", NULL);
		t->base = c.p;
		c.p += bytes;
	}
	return 0;
}

struct adac_pdb *adac_pdb_open_image(const uint8_t *data, size_t len, const char *origin, struct adac_error *err)
{
	struct adac_pdb *p = calloc(1, sizeof *p);
	if (!p) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for a PDB");
		return NULL;
	}
	p->origin = strdup(origin ? origin : "(memory)");
	p->data = malloc(len ? len : 1);
	if (!p->origin || !p->data) {
		adac_pdb_close(p);
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for a PDB");
		return NULL;
	}
	memcpy(p->data, data, len);
	p->len = len;
	struct adac_cursor pdbs = {0}, tabs = {0};
	if (parse_streams(p, &pdbs, &tabs, err) != 0 || parse_tables(p, pdbs, tabs, err) != 0) {
		adac_pdb_close(p);
		return NULL;
	}
	return p;
}

void adac_pdb_close(struct adac_pdb *p)
{
	if (!p)
		return;
	if (p->doc_names)
		for (uint32_t i = 0; i < p->t[T_DOCUMENT].rows; i++)
			free(p->doc_names[i]);
	free(p->doc_names);
	free(p->data);
	free(p->origin);
	free(p);
}

const char *adac_pdb_origin(const struct adac_pdb *p) { return p->origin; }
const uint8_t *adac_pdb_id(const struct adac_pdb *p) { return p->id; }
uint32_t adac_pdb_method_count(const struct adac_pdb *p) { return p->t[T_METHODDEBUGINFO].rows; }
uint32_t adac_pdb_document_count(const struct adac_pdb *p) { return p->t[T_DOCUMENT].rows; }

static const uint8_t *row(const struct adac_pdb *p, unsigned table, uint32_t rid)
{
	return p->t[table].base + (size_t)(rid - 1) * p->t[table].row_size;
}

/* Document name blob: a separator byte, then parts, each a compressed #Blob index of UTF-8 text. */
const char *adac_pdb_document_name(struct adac_pdb *p, uint32_t doc, struct adac_error *err)
{
	uint32_t n = p->t[T_DOCUMENT].rows;
	if (doc == 0 || doc > n) {
		adac_fail(err, ADAC_E_CORRUPT, 0, "PDB %s: document %u does not exist (%u documents)", p->origin, doc, n);
		return NULL;
	}
	if (!p->doc_names && !(p->doc_names = calloc(n, sizeof *p->doc_names))) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for PDB document names");
		return NULL;
	}
	if (p->doc_names[doc - 1])
		return p->doc_names[doc - 1];
	struct adac_cursor c;
	uint8_t sep;
	if (get_blob(p, get_idx(row(p, T_DOCUMENT, doc), p->blob_size), &c) != 0 || adac_cursor_u8(&c, &sep) != 0) {
		corrupt(p, err, "bad document name blob", NULL);
		return NULL;
	}
	size_t cap = 64, len = 0;
	char *name = malloc(cap);
	bool first = true;
	while (name && adac_cursor_left(&c) > 0) {
		uint32_t part;
		struct adac_cursor pc = adac_cursor_make("", 0);
		if (read_cu32(&c, &part) != 0 || (part != 0 && get_blob(p, part, &pc) != 0)) {
			free(name);
			corrupt(p, err, "bad document name part", NULL);
			return NULL;
		}
		size_t need = len + adac_cursor_left(&pc) + 2;
		if (need > ADAC_MAX_PATH_BYTES) {
			free(name);
			adac_fail(err, ADAC_E_LIMIT, 0, "PDB %s: document %u name is longer than ADAC_MAX_PATH_BYTES (%u)",
			          p->origin, doc, ADAC_MAX_PATH_BYTES);
			return NULL;
		}
		if (need > cap) {
			char *nn = realloc(name, cap = need * 2);
			if (!nn) {
				free(name);
				name = NULL;
				break;
			}
			name = nn;
		}
		if (!first && sep)
			name[len++] = (char)sep;
		memcpy(name + len, pc.p, adac_cursor_left(&pc));
		len += adac_cursor_left(&pc);
		first = false;
	}
	if (!name) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for a PDB document name");
		return NULL;
	}
	name[len] = '\0';
	p->doc_names[doc - 1] = name;
	return name;
}

static int method_rid(const struct adac_pdb *p, uint32_t token, uint32_t *rid, struct adac_error *err)
{
	*rid = token & 0xffffff;
	if ((token >> 24) != T_METHODDEF || *rid == 0)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "0x%08x is not a MethodDef token", token);
	if (*rid > p->t[T_METHODDEBUGINFO].rows)
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "PDB %s has no method 0x%08x (%u methods)", p->origin, token,
		                 p->t[T_METHODDEBUGINFO].rows);
	return 0;
}

/* Sequence points blob (Portable PDB spec): header LocalSignature, [InitialDocument when the row's
 * Document is nil]; records: first a sequence-point record whose δILOffset is the IL offset; then
 * document records (δILOffset 0, Document) and sequence-point records (δILOffset > 0, ΔLines,
 * ΔColumns signed when ΔLines != 0; a hidden point has ΔLines = ΔColumns = 0; else StartLine and
 * StartColumn, unsigned for the first non-hidden point and signed deltas from the previous one). */
int adac_pdb_sequence_points(struct adac_pdb *p, uint32_t token, struct adac_seq_point **points, size_t *n,
                             struct adac_error *err)
{
	*points = NULL;
	*n = 0;
	uint32_t rid;
	if (method_rid(p, token, &rid, err) != 0)
		return -1;
	const uint8_t *r = row(p, T_METHODDEBUGINFO, rid);
	unsigned dsize = idx_size(p, T_DOCUMENT);
	uint32_t doc = get_idx(r, dsize), bi = get_idx(r + dsize, p->blob_size);
	if (bi == 0)
		return 0;
	struct adac_cursor c;
	if (get_blob(p, bi, &c) != 0)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "PDB %s: method 0x%08x: bad sequence points blob index", p->origin,
		                 token);
	uint32_t localsig;
	if (read_cu32(&c, &localsig) != 0 || (doc == 0 && read_cu32(&c, &doc) != 0))
		return adac_fail(err, ADAC_E_CORRUPT, 0, "PDB %s: method 0x%08x: truncated sequence points header",
		                 p->origin, token);
	/* Each record takes at least 2 bytes: an upper bound for the array. */
	size_t cap = adac_cursor_left(&c) / 2 + 1;
	struct adac_seq_point *sp = calloc(cap, sizeof *sp);
	if (!sp)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for sequence points");
	size_t count = 0;
	uint64_t il = 0;
	int64_t prev_line = -1, prev_col = -1;
	const char *bad = NULL;
	while (adac_cursor_left(&c) > 0) {
		uint32_t delta;
		if (read_cu32(&c, &delta) != 0) {
			bad = "truncated record";
			break;
		}
		if (count > 0 && delta == 0) {
			if (read_cu32(&c, &doc) != 0) {
				bad = "truncated document record";
				break;
			}
			continue;
		}
		il = count == 0 ? delta : il + delta;
		uint32_t dlines;
		int32_t dcols;
		uint32_t ucols;
		if (read_cu32(&c, &dlines) != 0) {
			bad = "truncated record";
			break;
		}
		if (dlines == 0) {
			if (read_cu32(&c, &ucols) != 0) {
				bad = "truncated record";
				break;
			}
			dcols = (int32_t)ucols;
		} else if (read_cs32(&c, &dcols) != 0) {
			bad = "truncated record";
			break;
		}
		if (il > UINT32_MAX || count == cap) {
			bad = "IL offset overflows";
			break;
		}
		struct adac_seq_point *s = &sp[count];
		s->il_offset = (uint32_t)il;
		s->document = doc;
		if (dlines == 0 && dcols == 0) {
			s->start_line = s->end_line = ADAC_PDB_HIDDEN_LINE;
			count++;
			continue;
		}
		int64_t line, col;
		if (prev_line < 0) {
			uint32_t l, cc;
			if (read_cu32(&c, &l) != 0 || read_cu32(&c, &cc) != 0) {
				bad = "truncated record";
				break;
			}
			line = l;
			col = cc;
		} else {
			int32_t dl, dc;
			if (read_cs32(&c, &dl) != 0 || read_cs32(&c, &dc) != 0) {
				bad = "truncated record";
				break;
			}
			line = prev_line + dl;
			col = prev_col + dc;
		}
		int64_t eline = line + dlines, ecol = col + dcols;
		if (line < 0 || line >= 0x20000000 || eline >= 0x20000000 || col < 0 || col >= 0x10000 || ecol < 0 ||
		    ecol >= 0x10000) {
			bad = "line or column out of range";
			break;
		}
		prev_line = line;
		prev_col = col;
		s->start_line = (uint32_t)line;
		s->start_column = (uint32_t)col;
		s->end_line = (uint32_t)eline;
		s->end_column = (uint32_t)ecol;
		count++;
	}
	if (bad) {
		free(sp);
		return adac_fail(err, ADAC_E_CORRUPT, 0, "PDB %s: method 0x%08x: sequence point %zu: %s", p->origin, token,
		                 count, bad);
	}
	*points = sp;
	*n = count;
	return 0;
}

int adac_pdb_find_line(struct adac_pdb *p, uint32_t token, uint32_t il_offset, struct adac_source_line *out,
                       struct adac_error *err)
{
	struct adac_seq_point *sp;
	size_t n;
	if (adac_pdb_sequence_points(p, token, &sp, &n, err) != 0)
		return -1;
	const struct adac_seq_point *best = NULL;
	for (size_t i = 0; i < n; i++)
		if (sp[i].start_line != ADAC_PDB_HIDDEN_LINE && sp[i].il_offset <= il_offset &&
		    (!best || sp[i].il_offset >= best->il_offset))
			best = &sp[i];
	int rc = 0;
	if (!best) {
		rc = adac_fail(err, ADAC_E_NOT_FOUND, 0, "PDB %s has no sequence point for method 0x%08x at IL 0x%x",
		               p->origin, token, il_offset);
	} else {
		out->file = adac_pdb_document_name(p, best->document, err);
		out->line = best->start_line;
		out->column = best->start_column;
		if (!out->file)
			rc = -1;
	}
	free(sp);
	return rc;
}

/* LocalScope rows are sorted by Method, then StartOffset, then Length descending (outer first). */
int adac_pdb_locals(struct adac_pdb *p, uint32_t token, adac_pdb_local_cb cb, void *ctx, struct adac_error *err)
{
	uint32_t rid;
	if (method_rid(p, token, &rid, err) != 0)
		return -1;
	const struct table *ls = &p->t[T_LOCALSCOPE], *lv = &p->t[T_LOCALVARIABLE];
	unsigned msize = idx_size(p, T_METHODDEF), isize = idx_size(p, T_IMPORTSCOPE), vsize = idx_size(p, T_LOCALVARIABLE),
	         csize = idx_size(p, T_LOCALCONSTANT);
	uint32_t lo = 1, hi = ls->rows + 1;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (get_idx(row(p, T_LOCALSCOPE, mid), msize) < rid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (uint32_t s = lo; s <= ls->rows; s++) {
		const uint8_t *r = row(p, T_LOCALSCOPE, s);
		if (get_idx(r, msize) != rid)
			break;
		uint32_t first = get_idx(r + msize + isize, vsize);
		uint32_t end = s < ls->rows ? get_idx(row(p, T_LOCALSCOPE, s + 1) + msize + isize, vsize) : lv->rows + 1;
		uint32_t start = adac_get_u32(r, msize + isize + vsize + csize);
		uint32_t length = adac_get_u32(r, msize + isize + vsize + csize + 4);
		if (first == 0 || first > end || end > lv->rows + 1 || length > UINT32_MAX - start)
			return adac_fail(err, ADAC_E_CORRUPT, 0, "PDB %s: local scope %u has a bad variable list", p->origin, s);
		for (uint32_t v = first; v < end; v++) {
			const uint8_t *vr = row(p, T_LOCALVARIABLE, v);
			const char *name = get_string(p, get_idx(vr + 4, p->str_size));
			if (!name)
				return adac_fail(err, ADAC_E_CORRUPT, 0, "PDB %s: local variable %u has a bad name", p->origin, v);
			if (cb(ctx, start, start + length, adac_get_u16(vr, 2), adac_get_u16(vr, 0), name))
				return 0;
		}
	}
	return 0;
}

struct name_query {
	uint32_t index, il;
	const char *found;
};

static int find_name(void *ctx, uint32_t start, uint32_t end, uint16_t index, uint16_t attributes, const char *name)
{
	(void)attributes;
	struct name_query *q = ctx;
	if (index == q->index && q->il >= start && q->il < end)
		q->found = name; /* later scopes are inner: keep the last */
	return 0;
}

const char *adac_pdb_local_name_at(struct adac_pdb *p, uint32_t token, uint32_t index, uint32_t il_offset,
                                   struct adac_error *err)
{
	struct name_query q = {index, il_offset, NULL};
	if (adac_pdb_locals(p, token, find_name, &q, err) != 0)
		return NULL;
	return q.found;
}

/* ------------------------------------------------------------------------------------------------
 * Finding the PDB of an assembly
 * ---------------------------------------------------------------------------------------------- */

static int read_at(int fd, uint64_t off, void *buf, size_t len)
{
	ssize_t r = pread(fd, buf, len, (off_t)off);
	return r == (ssize_t)len ? 0 : -1;
}

struct pe_debug {
	bool have_codeview;
	uint8_t codeview_id[20];   /* GUID + TimeDateStamp of the portable CodeView entry */
	bool have_embedded;
	uint32_t embedded_off, embedded_size;
};

/* Reads the PE headers and the debug directory of the assembly. */
static int read_pe_debug(int fd, uint64_t fsize, const char *path, struct pe_debug *d, struct adac_error *err)
{
	memset(d, 0, sizeof *d);
	uint8_t h[4096];
	size_t hlen = fsize < sizeof h ? (size_t)fsize : sizeof h;
	if (read_at(fd, 0, h, hlen) != 0 || hlen < 0x40 || h[0] != 'M' || h[1] != 'Z')
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "%s is not a PE file", path);
	uint32_t pe = adac_get_u32(h, 0x3c);
	if ((uint64_t)pe + 24 > hlen || memcmp(h + pe, "PE\0\0", 4) != 0)
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "%s is not a PE file", path);
	uint16_t nsec = adac_get_u16(h, pe + 6), optsize = adac_get_u16(h, pe + 20);
	size_t opt = pe + 24;
	if (opt + optsize > hlen || optsize < 2)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "%s: truncated PE optional header", path);
	uint16_t magic = adac_get_u16(h, opt);
	size_t dirs = opt + (magic == 0x20b ? 112 : 96), ndirs_at = opt + (magic == 0x20b ? 108 : 92);
	if (ndirs_at + 4 > opt + optsize || adac_get_u32(h, ndirs_at) <= 6 || dirs + 7 * 8 > opt + optsize)
		return 0; /* no debug directory */
	uint32_t dbg_rva = adac_get_u32(h, dirs + 6 * 8), dbg_size = adac_get_u32(h, dirs + 6 * 8 + 4);
	if (!dbg_rva || !dbg_size)
		return 0;
	size_t sec = opt + optsize;
	uint64_t dbg_off = 0;
	bool found = false;
	for (unsigned i = 0; i < nsec && sec + 40 * (size_t)(i + 1) <= hlen; i++) {
		const uint8_t *s = h + sec + 40 * i;
		uint32_t vsize = adac_get_u32(s, 8), va = adac_get_u32(s, 12), rawsize = adac_get_u32(s, 16),
		         raw = adac_get_u32(s, 20);
		uint32_t span = vsize > rawsize ? vsize : rawsize;
		if (dbg_rva >= va && dbg_rva - va < span) {
			dbg_off = (uint64_t)raw + (dbg_rva - va);
			found = true;
			break;
		}
	}
	if (!found || dbg_size > 28 * 64 || dbg_off + dbg_size > fsize)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "%s: bad debug directory", path);
	uint8_t e[28 * 64];
	if (read_at(fd, dbg_off, e, dbg_size) != 0)
		return adac_fail(err, ADAC_E_IO, 0, "%s: cannot read the debug directory", path);
	for (uint32_t i = 0; i + 28 <= dbg_size; i += 28) {
		uint32_t stamp = adac_get_u32(e, i + 4), type = adac_get_u32(e, i + 12), size = adac_get_u32(e, i + 16),
		         raw = adac_get_u32(e, i + 24);
		uint16_t minor = adac_get_u16(e, i + 10);
		if (type == DEBUG_TYPE_CODEVIEW && minor == PORTABLE_PDB_MINOR && size >= 24 && raw + 24ull <= fsize) {
			uint8_t cv[24];
			if (read_at(fd, raw, cv, 24) == 0 && adac_get_u32(cv, 0) == RSDS_SIGNATURE) {
				memcpy(d->codeview_id, cv + 4, 16);
				memcpy(d->codeview_id + 16, &stamp, 4);
				d->have_codeview = true;
			}
		} else if (type == DEBUG_TYPE_EMBEDDED_PDB && size >= 8 && raw + (uint64_t)size <= fsize) {
			d->have_embedded = true;
			d->embedded_off = raw;
			d->embedded_size = size;
		}
	}
	return 0;
}

/* Appends one reason to `why`, "; "-separated. */
static void why_add(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void why_add(char *why, size_t size, const char *fmt, ...)
{
	size_t at = strlen(why);
	if (at && at + 2 < size) {
		memcpy(why + at, "; ", 3);
		at += 2;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why + at, size - at, fmt, ap);
	va_end(ap);
}

static void hex_id(const uint8_t *id, char *out)
{
	for (int i = 0; i < 20; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
}

static struct adac_pdb *open_embedded(int fd, const char *path, const struct pe_debug *d, struct adac_error *err)
{
	uint8_t *z = malloc(d->embedded_size);
	if (!z) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for the embedded PDB of %s", path);
		return NULL;
	}
	if (read_at(fd, d->embedded_off, z, d->embedded_size) != 0 || adac_get_u32(z, 0) != MPDB_SIGNATURE) {
		free(z);
		adac_fail(err, ADAC_E_CORRUPT, 0, "%s: bad embedded PDB entry (no MPDB signature)", path);
		return NULL;
	}
	uint32_t size = adac_get_u32(z, 4);
	if (size > ADAC_MAX_PDB_BYTES) {
		free(z);
		adac_fail(err, ADAC_E_LIMIT, 0, "%s: embedded PDB of %u bytes exceeds ADAC_MAX_PDB_BYTES (%u)", path, size,
		          ADAC_MAX_PDB_BYTES);
		return NULL;
	}
	uint8_t *pdb = malloc(size ? size : 1);
	z_stream zs;
	memset(&zs, 0, sizeof zs);
	int zrc = Z_MEM_ERROR;
	if (pdb && inflateInit2(&zs, -15) == Z_OK) {
		zs.next_in = z + 8;
		zs.avail_in = d->embedded_size - 8;
		zs.next_out = pdb;
		zs.avail_out = size;
		zrc = inflate(&zs, Z_FINISH);
		inflateEnd(&zs);
	}
	free(z);
	if (zrc != Z_STREAM_END || zs.total_out != size) {
		free(pdb);
		adac_fail(err, ADAC_E_CORRUPT, 0, "%s: the embedded PDB does not inflate to its %u bytes (zlib %d)", path, size,
		          zrc);
		return NULL;
	}
	char origin[ADAC_MAX_PATH_BYTES + 16];
	snprintf(origin, sizeof origin, "embedded in %s", path);
	struct adac_pdb *p = adac_pdb_open_image(pdb, size, origin, err);
	free(pdb);
	return p;
}

static struct adac_pdb *open_file_pdb(const char *path, struct adac_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	struct adac_pdb *p = NULL;
	if (fstat(fd, &st) != 0 || st.st_size < 0) {
		adac_fail(err, ADAC_E_IO, 0, "cannot stat %s: %s", path, strerror(errno));
	} else if ((uint64_t)st.st_size > ADAC_MAX_PDB_BYTES) {
		adac_fail(err, ADAC_E_LIMIT, 0, "%s: %lld bytes exceeds ADAC_MAX_PDB_BYTES (%u)", path,
		          (long long)st.st_size, ADAC_MAX_PDB_BYTES);
	} else {
		uint8_t *buf = malloc((size_t)st.st_size ? (size_t)st.st_size : 1);
		if (!buf)
			adac_fail(err, ADAC_E_NOMEM, 0, "out of memory reading %s", path);
		else if (read_at(fd, 0, buf, (size_t)st.st_size) != 0)
			adac_fail(err, ADAC_E_IO, 0, "cannot read %s", path);
		else
			p = adac_pdb_open_image(buf, (size_t)st.st_size, path, err);
		free(buf);
	}
	close(fd);
	return p;
}

struct adac_pdb *adac_pdb_open_for_assembly(const char *assembly_path, struct adac_error *err)
{
	const char *base = strrchr(assembly_path, '/');
	base = base ? base + 1 : assembly_path;
	int fd = open(assembly_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		adac_fail(err, ADAC_E_NOT_FOUND, 0, "no PDB for %s: cannot open %s: %s", base, assembly_path, strerror(errno));
		return NULL;
	}
	struct stat st;
	struct pe_debug d;
	struct adac_error perr = {0};
	if (fstat(fd, &st) != 0 || read_pe_debug(fd, (uint64_t)st.st_size, assembly_path, &d, &perr) != 0) {
		close(fd);
		adac_fail(err, perr.code ? perr.code : ADAC_E_IO, 0, "no PDB for %s: %s", base,
		          perr.code ? perr.msg : "cannot stat it");
		return NULL;
	}
	char idw[41], idg[41];
	hex_id(d.codeview_id, idw);
	char why[ADAC_ERROR_MSG_MAX] = "";

	/* 1. <dir>/<name>.pdb beside the assembly. */
	char pdb_path[ADAC_MAX_PATH_BYTES];
	const char *dot = strrchr(base, '.');
	size_t stem = dot ? (size_t)(dot - assembly_path) : strlen(assembly_path);
	if (stem + 5 <= sizeof pdb_path) {
		memcpy(pdb_path, assembly_path, stem);
		memcpy(pdb_path + stem, ".pdb", 5);
		struct adac_error ferr = {0};
		struct adac_pdb *p = open_file_pdb(pdb_path, &ferr);
		if (p && d.have_codeview && memcmp(p->id, d.codeview_id, 20) == 0) {
			close(fd);
			return p;
		}
		if (p) {
			hex_id(p->id, idg);
			if (d.have_codeview)
				why_add(why, sizeof why, "%s does not match it (PDB id %s, the assembly wants %s)", pdb_path, idg, idw);
			else
				why_add(why, sizeof why, "%s has no CodeView entry to check %s against", base, pdb_path);
			adac_pdb_close(p);
		} else if (ferr.code) {
			why_add(why, sizeof why, "%s", ferr.msg);
		}
	}
	/* 2. Embedded. */
	if (d.have_embedded) {
		struct adac_error eerr = {0};
		struct adac_pdb *p = open_embedded(fd, assembly_path, &d, &eerr);
		if (p && (!d.have_codeview || memcmp(p->id, d.codeview_id, 20) == 0)) {
			close(fd);
			return p;
		}
		if (p) {
			hex_id(p->id, idg);
			why_add(why, sizeof why, "the embedded PDB does not match it (PDB id %s)", idg);
			adac_pdb_close(p);
		} else {
			why_add(why, sizeof why, "%s", eerr.msg);
		}
	}
	close(fd);
	if (why[0])
		adac_fail(err, ADAC_E_NOT_FOUND, 0, "no PDB for %s: %s", base, why);
	else
		adac_fail(err, ADAC_E_NOT_FOUND, 0, "no PDB for %s (none beside it, none embedded)", base);
	return NULL;
}

/* ------------------------------------------------------------------------------------------------
 * Per-runtime cache
 * ---------------------------------------------------------------------------------------------- */

struct pdb_entry {
	char *assembly;
	struct adac_pdb *pdb;      /* NULL: none; error says why */
	struct adac_error error;
};

struct pdb_state {
	struct pdb_entry *e;
	size_t n, cap;
};

static void state_free(void *ptr)
{
	struct pdb_state *s = ptr;
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->e[i].assembly);
		adac_pdb_close(s->e[i].pdb);
	}
	free(s->e);
	free(s);
}

static struct adac_pdb *pdb_for(struct adac_runtime *rt, const char *assembly_path, struct adac_error *err)
{
	struct pdb_state *s = adac_runtime_slot(rt, ADAC_SLOT_PDB);
	if (!s) {
		if (!(s = calloc(1, sizeof *s))) {
			adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for the PDB cache");
			return NULL;
		}
		adac_runtime_set_slot(rt, ADAC_SLOT_PDB, s, state_free);
	}
	for (size_t i = 0; i < s->n; i++) {
		if (strcmp(s->e[i].assembly, assembly_path) != 0)
			continue;
		if (!s->e[i].pdb)
			adac_fail(err, s->e[i].error.code, 0, "%s", s->e[i].error.msg);
		return s->e[i].pdb;
	}
	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 16;
		struct pdb_entry *ne = realloc(s->e, ncap * sizeof *ne);
		if (!ne) {
			adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for the PDB cache");
			return NULL;
		}
		s->e = ne;
		s->cap = ncap;
	}
	struct pdb_entry *e = &s->e[s->n];
	memset(e, 0, sizeof *e);
	if (!(e->assembly = strdup(assembly_path))) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for the PDB cache");
		return NULL;
	}
	e->pdb = adac_pdb_open_for_assembly(assembly_path, &e->error);
	s->n++;
	if (!e->pdb)
		adac_fail(err, e->error.code, 0, "%s", e->error.msg);
	return e->pdb;
}

int adac_pdb_source_line(struct adac_runtime *rt, const char *assembly_path, uint32_t token, uint32_t il_offset,
                         struct adac_source_line *out, struct adac_error *err)
{
	struct adac_pdb *p = pdb_for(rt, assembly_path, err);
	if (!p)
		return -1;
	return adac_pdb_find_line(p, token, il_offset, out, err);
}

const char *adac_pdb_local_name(struct adac_runtime *rt, const char *assembly_path, uint32_t token, uint32_t index,
                                uint32_t il_offset, struct adac_error *err)
{
	struct adac_pdb *p = pdb_for(rt, assembly_path, err);
	if (!p)
		return NULL;
	return adac_pdb_local_name_at(p, token, index, il_offset, err);
}
