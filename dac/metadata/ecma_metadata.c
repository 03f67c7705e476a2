/* ecma_metadata.c - EcmaMetadata: parses a module's ECMA-335 metadata (PE, CLI header, metadata
 * root, streams, tables) out of target memory, once, and answers row and heap queries on the copy. */
#include "metadata/ecma_metadata.h"

#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/limits.h"
#include "runtime/loader.h"
#include "runtime/runtime.h"
#include "target/target.h"

/* ---- Compressed integers (II.23.2) ---- */

int adac_ecma_uncompress(const uint8_t *blob, size_t len, size_t *pos, uint32_t *out)
{
	size_t p = *pos;
	if (p >= len)
		return -1;
	uint8_t b = blob[p];
	if ((b & 0x80) == 0) {
		*out = b;
		*pos = p + 1;
		return 0;
	}
	if ((b & 0xc0) == 0x80) {
		if (len - p < 2)
			return -1;
		*out = ((uint32_t)(b & 0x3f) << 8) | blob[p + 1];
		*pos = p + 2;
		return 0;
	}
	if ((b & 0xe0) == 0xc0) {
		if (len - p < 4)
			return -1;
		*out = ((uint32_t)(b & 0x1f) << 24) | ((uint32_t)blob[p + 1] << 16) | ((uint32_t)blob[p + 2] << 8) | blob[p + 3];
		*pos = p + 4;
		return 0;
	}
	return -1;
}

/* ---- Schema (II.22, portable PDB tables from the Portable PDB v1.0 spec) ---- */

enum col_kind { K_U16, K_U32, K_STR, K_GUID, K_BLOB, K_TAB, K_CODED };

enum coded_kind {
	CI_TYPEDEFORREF, CI_HASCONSTANT, CI_HASCUSTOMATTRIBUTE, CI_HASFIELDMARSHAL, CI_HASDECLSECURITY,
	CI_MEMBERREFPARENT, CI_HASSEMANTICS, CI_METHODDEFORREF, CI_MEMBERFORWARDED, CI_IMPLEMENTATION,
	CI_CUSTOMATTRIBUTETYPE, CI_RESOLUTIONSCOPE, CI_TYPEORMETHODDEF, CI_HASCUSTOMDEBUGINFORMATION, CI_COUNT
};

#define NONE 0xff /* an unused tag value of a coded index */

struct coded_def {
	uint8_t bits;
	uint8_t n;
	uint8_t tables[27];
};

static const struct coded_def coded_defs[CI_COUNT] = {
	[CI_TYPEDEFORREF] = {2, 3, {ADAC_ECMA_TYPEDEF, ADAC_ECMA_TYPEREF, ADAC_ECMA_TYPESPEC}},
	[CI_HASCONSTANT] = {2, 3, {ADAC_ECMA_FIELD, ADAC_ECMA_PARAM, ADAC_ECMA_PROPERTY}},
	[CI_HASCUSTOMATTRIBUTE] = {5, 22, {ADAC_ECMA_METHODDEF, ADAC_ECMA_FIELD, ADAC_ECMA_TYPEREF, ADAC_ECMA_TYPEDEF,
	                                   ADAC_ECMA_PARAM, ADAC_ECMA_INTERFACEIMPL, ADAC_ECMA_MEMBERREF, ADAC_ECMA_MODULE,
	                                   ADAC_ECMA_DECLSECURITY, ADAC_ECMA_PROPERTY, ADAC_ECMA_EVENT,
	                                   ADAC_ECMA_STANDALONESIG, ADAC_ECMA_MODULEREF, ADAC_ECMA_TYPESPEC,
	                                   ADAC_ECMA_ASSEMBLY, ADAC_ECMA_ASSEMBLYREF, ADAC_ECMA_FILE,
	                                   ADAC_ECMA_EXPORTEDTYPE, ADAC_ECMA_MANIFESTRESOURCE, ADAC_ECMA_GENERICPARAM,
	                                   ADAC_ECMA_GENERICPARAMCONSTRAINT, ADAC_ECMA_METHODSPEC}},
	[CI_HASFIELDMARSHAL] = {1, 2, {ADAC_ECMA_FIELD, ADAC_ECMA_PARAM}},
	[CI_HASDECLSECURITY] = {2, 3, {ADAC_ECMA_TYPEDEF, ADAC_ECMA_METHODDEF, ADAC_ECMA_ASSEMBLY}},
	[CI_MEMBERREFPARENT] = {3, 5, {ADAC_ECMA_TYPEDEF, ADAC_ECMA_TYPEREF, ADAC_ECMA_MODULEREF, ADAC_ECMA_METHODDEF,
	                               ADAC_ECMA_TYPESPEC}},
	[CI_HASSEMANTICS] = {1, 2, {ADAC_ECMA_EVENT, ADAC_ECMA_PROPERTY}},
	[CI_METHODDEFORREF] = {1, 2, {ADAC_ECMA_METHODDEF, ADAC_ECMA_MEMBERREF}},
	[CI_MEMBERFORWARDED] = {1, 2, {ADAC_ECMA_FIELD, ADAC_ECMA_METHODDEF}},
	[CI_IMPLEMENTATION] = {2, 3, {ADAC_ECMA_FILE, ADAC_ECMA_ASSEMBLYREF, ADAC_ECMA_EXPORTEDTYPE}},
	[CI_CUSTOMATTRIBUTETYPE] = {3, 5, {NONE, NONE, ADAC_ECMA_METHODDEF, ADAC_ECMA_MEMBERREF, NONE}},
	[CI_RESOLUTIONSCOPE] = {2, 4, {ADAC_ECMA_MODULE, ADAC_ECMA_MODULEREF, ADAC_ECMA_ASSEMBLYREF, ADAC_ECMA_TYPEREF}},
	[CI_TYPEORMETHODDEF] = {1, 2, {ADAC_ECMA_TYPEDEF, ADAC_ECMA_METHODDEF}},
	[CI_HASCUSTOMDEBUGINFORMATION] = {5, 27, {ADAC_ECMA_METHODDEF, ADAC_ECMA_FIELD, ADAC_ECMA_TYPEREF,
	                                          ADAC_ECMA_TYPEDEF, ADAC_ECMA_PARAM, ADAC_ECMA_INTERFACEIMPL,
	                                          ADAC_ECMA_MEMBERREF, ADAC_ECMA_MODULE, ADAC_ECMA_DECLSECURITY,
	                                          ADAC_ECMA_PROPERTY, ADAC_ECMA_EVENT, ADAC_ECMA_STANDALONESIG,
	                                          ADAC_ECMA_MODULEREF, ADAC_ECMA_TYPESPEC, ADAC_ECMA_ASSEMBLY,
	                                          ADAC_ECMA_ASSEMBLYREF, ADAC_ECMA_FILE, ADAC_ECMA_EXPORTEDTYPE,
	                                          ADAC_ECMA_MANIFESTRESOURCE, ADAC_ECMA_GENERICPARAM,
	                                          ADAC_ECMA_GENERICPARAMCONSTRAINT, ADAC_ECMA_METHODSPEC,
	                                          ADAC_ECMA_DOCUMENT, ADAC_ECMA_LOCALSCOPE, ADAC_ECMA_LOCALVARIABLE,
	                                          ADAC_ECMA_LOCALCONSTANT, ADAC_ECMA_IMPORTSCOPE}},
};

#define MAX_COLS 9

struct col_def {
	uint8_t kind;
	uint8_t arg; /* table (K_TAB) or coded kind (K_CODED) */
};

struct table_def {
	const char *name;
	uint8_t ncols;
	struct col_def cols[MAX_COLS];
};

#define U16 {K_U16, 0}
#define U32 {K_U32, 0}
#define STR {K_STR, 0}
#define GUID {K_GUID, 0}
#define BLOB {K_BLOB, 0}
#define TAB(t) {K_TAB, ADAC_ECMA_##t}
#define CODED(c) {K_CODED, CI_##c}

static const struct table_def table_defs[ADAC_ECMA_TABLE_COUNT] = {
	[ADAC_ECMA_MODULE] = {"Module", 5, {U16, STR, GUID, GUID, GUID}},
	[ADAC_ECMA_TYPEREF] = {"TypeRef", 3, {CODED(RESOLUTIONSCOPE), STR, STR}},
	[ADAC_ECMA_TYPEDEF] = {"TypeDef", 6, {U32, STR, STR, CODED(TYPEDEFORREF), TAB(FIELD), TAB(METHODDEF)}},
	[ADAC_ECMA_FIELDPTR] = {"FieldPtr", 1, {TAB(FIELD)}},
	[ADAC_ECMA_FIELD] = {"Field", 3, {U16, STR, BLOB}},
	[ADAC_ECMA_METHODPTR] = {"MethodPtr", 1, {TAB(METHODDEF)}},
	[ADAC_ECMA_METHODDEF] = {"MethodDef", 6, {U32, U16, U16, STR, BLOB, TAB(PARAM)}},
	[ADAC_ECMA_PARAMPTR] = {"ParamPtr", 1, {TAB(PARAM)}},
	[ADAC_ECMA_PARAM] = {"Param", 3, {U16, U16, STR}},
	[ADAC_ECMA_INTERFACEIMPL] = {"InterfaceImpl", 2, {TAB(TYPEDEF), CODED(TYPEDEFORREF)}},
	[ADAC_ECMA_MEMBERREF] = {"MemberRef", 3, {CODED(MEMBERREFPARENT), STR, BLOB}},
	[ADAC_ECMA_CONSTANT] = {"Constant", 3, {U16, CODED(HASCONSTANT), BLOB}},
	[ADAC_ECMA_CUSTOMATTRIBUTE] = {"CustomAttribute", 3, {CODED(HASCUSTOMATTRIBUTE), CODED(CUSTOMATTRIBUTETYPE), BLOB}},
	[ADAC_ECMA_FIELDMARSHAL] = {"FieldMarshal", 2, {CODED(HASFIELDMARSHAL), BLOB}},
	[ADAC_ECMA_DECLSECURITY] = {"DeclSecurity", 3, {U16, CODED(HASDECLSECURITY), BLOB}},
	[ADAC_ECMA_CLASSLAYOUT] = {"ClassLayout", 3, {U16, U32, TAB(TYPEDEF)}},
	[ADAC_ECMA_FIELDLAYOUT] = {"FieldLayout", 2, {U32, TAB(FIELD)}},
	[ADAC_ECMA_STANDALONESIG] = {"StandAloneSig", 1, {BLOB}},
	[ADAC_ECMA_EVENTMAP] = {"EventMap", 2, {TAB(TYPEDEF), TAB(EVENT)}},
	[ADAC_ECMA_EVENTPTR] = {"EventPtr", 1, {TAB(EVENT)}},
	[ADAC_ECMA_EVENT] = {"Event", 3, {U16, STR, CODED(TYPEDEFORREF)}},
	[ADAC_ECMA_PROPERTYMAP] = {"PropertyMap", 2, {TAB(TYPEDEF), TAB(PROPERTY)}},
	[ADAC_ECMA_PROPERTYPTR] = {"PropertyPtr", 1, {TAB(PROPERTY)}},
	[ADAC_ECMA_PROPERTY] = {"Property", 3, {U16, STR, BLOB}},
	[ADAC_ECMA_METHODSEMANTICS] = {"MethodSemantics", 3, {U16, TAB(METHODDEF), CODED(HASSEMANTICS)}},
	[ADAC_ECMA_METHODIMPL] = {"MethodImpl", 3, {TAB(TYPEDEF), CODED(METHODDEFORREF), CODED(METHODDEFORREF)}},
	[ADAC_ECMA_MODULEREF] = {"ModuleRef", 1, {STR}},
	[ADAC_ECMA_TYPESPEC] = {"TypeSpec", 1, {BLOB}},
	[ADAC_ECMA_IMPLMAP] = {"ImplMap", 4, {U16, CODED(MEMBERFORWARDED), STR, TAB(MODULEREF)}},
	[ADAC_ECMA_FIELDRVA] = {"FieldRVA", 2, {U32, TAB(FIELD)}},
	[ADAC_ECMA_ENCLOG] = {"EncLog", 2, {U32, U32}},
	[ADAC_ECMA_ENCMAP] = {"EncMap", 1, {U32}},
	[ADAC_ECMA_ASSEMBLY] = {"Assembly", 9, {U32, U16, U16, U16, U16, U32, BLOB, STR, STR}},
	[ADAC_ECMA_ASSEMBLYPROCESSOR] = {"AssemblyProcessor", 1, {U32}},
	[ADAC_ECMA_ASSEMBLYOS] = {"AssemblyOS", 3, {U32, U32, U32}},
	[ADAC_ECMA_ASSEMBLYREF] = {"AssemblyRef", 9, {U16, U16, U16, U16, U32, BLOB, STR, STR, BLOB}},
	[ADAC_ECMA_ASSEMBLYREFPROCESSOR] = {"AssemblyRefProcessor", 2, {U32, TAB(ASSEMBLYREF)}},
	[ADAC_ECMA_ASSEMBLYREFOS] = {"AssemblyRefOS", 4, {U32, U32, U32, TAB(ASSEMBLYREF)}},
	[ADAC_ECMA_FILE] = {"File", 3, {U32, STR, BLOB}},
	[ADAC_ECMA_EXPORTEDTYPE] = {"ExportedType", 5, {U32, U32, STR, STR, CODED(IMPLEMENTATION)}},
	[ADAC_ECMA_MANIFESTRESOURCE] = {"ManifestResource", 4, {U32, U32, STR, CODED(IMPLEMENTATION)}},
	[ADAC_ECMA_NESTEDCLASS] = {"NestedClass", 2, {TAB(TYPEDEF), TAB(TYPEDEF)}},
	[ADAC_ECMA_GENERICPARAM] = {"GenericParam", 4, {U16, U16, CODED(TYPEORMETHODDEF), STR}},
	[ADAC_ECMA_METHODSPEC] = {"MethodSpec", 2, {CODED(METHODDEFORREF), BLOB}},
	[ADAC_ECMA_GENERICPARAMCONSTRAINT] = {"GenericParamConstraint", 2, {TAB(GENERICPARAM), CODED(TYPEDEFORREF)}},
	[ADAC_ECMA_DOCUMENT] = {"Document", 4, {BLOB, GUID, BLOB, GUID}},
	[ADAC_ECMA_METHODDEBUGINFORMATION] = {"MethodDebugInformation", 2, {TAB(DOCUMENT), BLOB}},
	[ADAC_ECMA_LOCALSCOPE] = {"LocalScope", 6, {TAB(METHODDEF), TAB(IMPORTSCOPE), TAB(LOCALVARIABLE),
	                                            TAB(LOCALCONSTANT), U32, U32}},
	[ADAC_ECMA_LOCALVARIABLE] = {"LocalVariable", 3, {U16, U16, STR}},
	[ADAC_ECMA_LOCALCONSTANT] = {"LocalConstant", 2, {STR, BLOB}},
	[ADAC_ECMA_IMPORTSCOPE] = {"ImportScope", 2, {TAB(IMPORTSCOPE), BLOB}},
	[ADAC_ECMA_STATEMACHINEMETHOD] = {"StateMachineMethod", 2, {TAB(METHODDEF), TAB(METHODDEF)}},
	[ADAC_ECMA_CUSTOMDEBUGINFORMATION] = {"CustomDebugInformation", 3, {CODED(HASCUSTOMDEBUGINFORMATION), GUID, BLOB}},
};

#undef U16
#undef U32
#undef STR
#undef GUID
#undef BLOB
#undef TAB
#undef CODED

#define HEAP_STRINGS_WIDE 0x01
#define HEAP_GUID_WIDE 0x02
#define HEAP_BLOB_WIDE 0x04
#define HEAP_EXTRA_DATA 0x20

struct pe_section {
	uint32_t va;
	uint32_t vsize;
	uint32_t raw_size;
	uint32_t raw_ptr;
};

struct adac_ecma {
	const uint8_t *data;             /* the metadata blob: owned, or the target's lent bytes (view) */
	uint8_t *owned;                  /* data when owned */
	struct adac_target_view view;    /* data when lent (by t) */
	size_t len;
	char version[256];
	bool uncompressed;
	const uint8_t *strings, *blob, *guid, *us;
	uint32_t strings_len, blob_len, guid_len, us_len;
	uint8_t heap_sizes;
	uint64_t valid, sorted;
	uint32_t rows[ADAC_ECMA_TABLE_COUNT];
	bool has_pdb;                             /* a #Pdb stream: standalone debugging metadata */
	uint8_t pdb_id[20];                       /* #Pdb: the PDB id */
	uint32_t ext_rows[ADAC_ECMA_TABLE_COUNT]; /* #Pdb: row counts of the referenced type-system tables */
	const uint8_t *table[ADAC_ECMA_TABLE_COUNT];
	uint32_t row_size[ADAC_ECMA_TABLE_COUNT];
	uint8_t col_off[ADAC_ECMA_TABLE_COUNT][MAX_COLS];
	uint8_t col_size[ADAC_ECMA_TABLE_COUNT][MAX_COLS];
	/* Image (when opened from one). */
	struct adac_target *t;
	bool has_image;
	bool mapped;
	uint64_t base;
	uint64_t size;
	uint32_t size_of_headers;
	uint32_t nsections;
	struct pe_section *sections;
};

const char *adac_ecma_table_name(unsigned table)
{
	if (table < ADAC_ECMA_TABLE_COUNT && table_defs[table].name)
		return table_defs[table].name;
	return "?";
}

unsigned adac_ecma_columns(unsigned table)
{
	return table < ADAC_ECMA_TABLE_COUNT ? table_defs[table].ncols : 0;
}

/* ---- Parsing ---- */

/* Row count that sizes an index into `table`. In standalone debugging metadata (a #Pdb stream) the
 * type-system tables live in the assembly: their counts are the #Pdb stream's TypeSystemTableRows
 * (Portable PDB v1.0, "#~ stream"), 0 for a table it does not reference. */
static uint32_t rows_for_size(const struct adac_ecma *md, unsigned table)
{
	return md->has_pdb && table < ADAC_ECMA_DOCUMENT ? md->ext_rows[table] : md->rows[table];
}

static uint8_t coded_size(const struct adac_ecma *md, unsigned kind)
{
	const struct coded_def *c = &coded_defs[kind];
	uint32_t max = 0;
	for (unsigned i = 0; i < c->n; i++)
		if (c->tables[i] != NONE && rows_for_size(md, c->tables[i]) > max)
			max = rows_for_size(md, c->tables[i]);
	return max < (1u << (16 - c->bits)) ? 2 : 4;
}

static uint8_t col_width(const struct adac_ecma *md, struct col_def c)
{
	switch (c.kind) {
	case K_U16:
		return 2;
	case K_U32:
		return 4;
	case K_STR:
		return (md->heap_sizes & HEAP_STRINGS_WIDE) ? 4 : 2;
	case K_GUID:
		return (md->heap_sizes & HEAP_GUID_WIDE) ? 4 : 2;
	case K_BLOB:
		return (md->heap_sizes & HEAP_BLOB_WIDE) ? 4 : 2;
	case K_TAB:
		return rows_for_size(md, c.arg) < 65536 ? 2 : 4;
	default:
		return coded_size(md, c.arg);
	}
}

static bool name_is(const char *name, const char *want) { return strcmp(name, want) == 0; }

/* The #Pdb stream: id[20], entry point, referenced type-system tables (only tables below Document)
 * and their row counts. */
static int parse_pdb_stream(struct adac_ecma *md, const uint8_t *p, uint32_t len, struct adac_error *err)
{
	struct adac_cursor c = adac_cursor_make(p, len);
	uint32_t entry = 0;
	uint64_t referenced = 0;
	if (!adac_cursor_need(&c, sizeof md->pdb_id))
		return adac_fail(err, ADAC_E_CORRUPT, 0, "metadata #Pdb stream is truncated (%u bytes)", len);
	memcpy(md->pdb_id, c.p, sizeof md->pdb_id);
	c.p += sizeof md->pdb_id;
	if (adac_cursor_u32(&c, &entry) || adac_cursor_u64(&c, &referenced))
		return adac_fail(err, ADAC_E_CORRUPT, 0, "metadata #Pdb stream is truncated (%u bytes)", len);
	for (unsigned i = 0; i < 64; i++) {
		if (!(referenced >> i & 1))
			continue;
		if (i >= ADAC_ECMA_DOCUMENT)
			return adac_fail(err, ADAC_E_CORRUPT, 0,
			                 "metadata #Pdb stream references table 0x%02x, which is not a type-system table", i);
		if (adac_cursor_u32(&c, &md->ext_rows[i]))
			return adac_fail(err, ADAC_E_CORRUPT, 0, "metadata #Pdb stream is truncated (%u bytes)", len);
	}
	md->has_pdb = true;
	return 0;
}

static int parse_tables(struct adac_ecma *md, const uint8_t *p, uint32_t len, struct adac_error *err)
{
	struct adac_cursor c = adac_cursor_make(p, len);
	uint32_t reserved = 0;
	uint8_t major = 0, minor = 0, reserved2 = 0;
	if (adac_cursor_u32(&c, &reserved) || adac_cursor_u8(&c, &major) || adac_cursor_u8(&c, &minor) ||
	    adac_cursor_u8(&c, &md->heap_sizes) || adac_cursor_u8(&c, &reserved2) || adac_cursor_u64(&c, &md->valid) ||
	    adac_cursor_u64(&c, &md->sorted))
		return adac_fail(err, ADAC_E_CORRUPT, 0, "metadata tables stream header is truncated (%u bytes)", len);
	(void)reserved, (void)major, (void)minor, (void)reserved2;
	for (unsigned i = 0; i < 64; i++) {
		if (!(md->valid >> i & 1))
			continue;
		if (i >= ADAC_ECMA_TABLE_COUNT || !table_defs[i].name)
			return adac_fail(err, ADAC_E_CORRUPT, 0, "metadata has unknown table 0x%02x", i);
		uint32_t n = 0;
		if (adac_cursor_u32(&c, &n))
			return adac_fail(err, ADAC_E_CORRUPT, 0, "metadata row counts are truncated at table %s",
			                 table_defs[i].name);
		if (n > ADAC_MAX_METADATA_ROWS)
			return adac_fail(err, ADAC_E_CORRUPT, 0, "metadata table %s claims %u rows (more than a token can address)",
			                 table_defs[i].name, n);
		md->rows[i] = n;
	}
	if (md->heap_sizes & HEAP_EXTRA_DATA) {
		uint32_t extra = 0;
		if (adac_cursor_u32(&c, &extra))
			return adac_fail(err, ADAC_E_CORRUPT, 0, "metadata tables stream header is truncated (%u bytes)", len);
	}
	for (unsigned i = 0; i < ADAC_ECMA_TABLE_COUNT; i++) {
		if (!md->rows[i])
			continue;
		const struct table_def *td = &table_defs[i];
		uint32_t off = 0;
		for (unsigned k = 0; k < td->ncols; k++) {
			uint8_t w = col_width(md, td->cols[k]);
			md->col_off[i][k] = (uint8_t)off;
			md->col_size[i][k] = w;
			off += w;
		}
		md->row_size[i] = off;
		uint64_t need = (uint64_t)md->rows[i] * off;
		if (need > adac_cursor_left(&c))
			return adac_fail(err, ADAC_E_CORRUPT, 0,
			                 "metadata table %s (%u rows of %u bytes) does not fit its stream (%zu bytes left)",
			                 td->name, md->rows[i], off, adac_cursor_left(&c));
		md->table[i] = c.p;
		c.p += need;
	}
	return 0;
}

static int parse_root(struct adac_ecma *md, struct adac_error *err)
{
	struct adac_cursor c = adac_cursor_make(md->data, md->len);
	uint32_t sig = 0, reserved = 0, vlen = 0;
	uint16_t major = 0, minor = 0;
	if (adac_cursor_u32(&c, &sig) || adac_cursor_u16(&c, &major) || adac_cursor_u16(&c, &minor) ||
	    adac_cursor_u32(&c, &reserved) || adac_cursor_u32(&c, &vlen))
		return adac_fail(err, ADAC_E_CORRUPT, 0, "metadata root is truncated (%zu bytes)", md->len);
	if (sig != 0x424a5342)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "metadata root has signature 0x%08x, not BSJB", sig);
	if (vlen > 255 || !adac_cursor_need(&c, vlen))
		return adac_fail(err, ADAC_E_CORRUPT, 0, "metadata version string length %u is invalid", vlen);
	memcpy(md->version, c.p, vlen);
	md->version[vlen] = '\0';
	c.p += vlen;
	uint16_t flags = 0, nstreams = 0;
	if (adac_cursor_u16(&c, &flags) || adac_cursor_u16(&c, &nstreams))
		return adac_fail(err, ADAC_E_CORRUPT, 0, "metadata root is truncated after the version string");
	if (nstreams > ADAC_MAX_METADATA_STREAMS)
		return adac_fail(err, ADAC_E_LIMIT, 0, "metadata root has %u streams (limit %u)", nstreams,
		                 ADAC_MAX_METADATA_STREAMS);
	const uint8_t *tables = NULL, *pdb = NULL;
	uint32_t tables_len = 0, pdb_len = 0;
	for (unsigned i = 0; i < nstreams; i++) {
		uint32_t off = 0, size = 0;
		if (adac_cursor_u32(&c, &off) || adac_cursor_u32(&c, &size))
			return adac_fail(err, ADAC_E_CORRUPT, 0, "metadata stream header %u is truncated", i);
		size_t left = adac_cursor_left(&c);
		const char *name = (const char *)c.p;
		const void *nul = memchr(name, '\0', left < 32 ? left : 32);
		if (!nul)
			return adac_fail(err, ADAC_E_CORRUPT, 0, "metadata stream header %u has no terminated name", i);
		size_t nlen = (size_t)((const char *)nul - name) + 1;
		if (adac_cursor_skip(&c, (nlen + 3) & ~(size_t)3))
			return adac_fail(err, ADAC_E_CORRUPT, 0, "metadata stream header %u is truncated", i);
		if ((uint64_t)off + size > md->len)
			return adac_fail(err, ADAC_E_CORRUPT, 0,
			                 "metadata stream %s (offset 0x%x, %u bytes) runs past the metadata (%zu bytes)", name,
			                 off, size, md->len);
		const uint8_t *p = md->data + off;
		if ((name_is(name, "#~") || name_is(name, "#-")) && !tables) {
			tables = p;
			tables_len = size;
			md->uncompressed = name_is(name, "#-");
		} else if (name_is(name, "#Strings") && !md->strings) {
			md->strings = p;
			md->strings_len = size;
		} else if (name_is(name, "#Blob") && !md->blob) {
			md->blob = p;
			md->blob_len = size;
		} else if (name_is(name, "#GUID") && !md->guid) {
			md->guid = p;
			md->guid_len = size;
		} else if (name_is(name, "#US") && !md->us) {
			md->us = p;
			md->us_len = size;
		} else if (name_is(name, "#Pdb") && !pdb) {
			pdb = p;
			pdb_len = size;
		}
	}
	(void)flags, (void)major, (void)minor, (void)reserved;
	if (!tables)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "metadata has no #~ or #- tables stream");
	if (pdb && parse_pdb_stream(md, pdb, pdb_len, err))
		return -1;
	return parse_tables(md, tables, tables_len, err);
}

static struct adac_ecma *ecma_new(struct adac_error *err)
{
	struct adac_ecma *md = calloc(1, sizeof *md);
	if (!md)
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for metadata");
	return md;
}

void adac_ecma_free(struct adac_ecma *md)
{
	if (!md)
		return;
	free(md->owned);
	if (md->t)
		adac_target_unview(md->t, &md->view);
	free(md->sections);
	free(md);
}

int adac_ecma_open_blob(const void *data, size_t len, struct adac_ecma **out, struct adac_error *err)
{
	*out = NULL;
	if (len > ADAC_MAX_METADATA_BYTES)
		return adac_fail(err, ADAC_E_LIMIT, 0, "metadata of %zu bytes (limit %u)", len, ADAC_MAX_METADATA_BYTES);
	struct adac_ecma *md = ecma_new(err);
	if (!md)
		return -1;
	md->data = md->owned = malloc(len ? len : 1);
	if (!md->owned) {
		adac_ecma_free(md);
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for %zu bytes of metadata", len);
	}
	memcpy(md->owned, data, len);
	md->len = len;
	if (parse_root(md, err)) {
		adac_ecma_free(md);
		return -1;
	}
	*out = md;
	return 0;
}

static int read_blob(struct adac_target *t, uint64_t addr, uint64_t size, struct adac_ecma *md, struct adac_error *err)
{
	if (size > ADAC_MAX_METADATA_BYTES)
		return adac_fail(err, ADAC_E_LIMIT, addr, "metadata at 0x%llx is %llu bytes (limit %u)",
		                 (unsigned long long)addr, (unsigned long long)size, ADAC_MAX_METADATA_BYTES);
	md->len = (size_t)size;
	/* In place where the target lends its bytes (a core's pages, a released process's copy): a
	 * runtime, one per listing thread, then holds the pages it reads of CoreLib's 3.6 MB, not all. */
	if (adac_target_view(t, addr, (size_t)size, &md->view) && md->view.len == size) {
		md->data = md->view.bytes;
		return parse_root(md, err);
	}
	adac_target_unview(t, &md->view);
	md->data = md->owned = malloc(size ? (size_t)size : 1);
	if (!md->owned)
		return adac_fail(err, ADAC_E_NOMEM, addr, "out of memory for %llu bytes of metadata",
		                 (unsigned long long)size);
	if (adac_read(t, addr, md->owned, (size_t)size, err)) {
		adac_error_wrap(err, "metadata: ");
		return -1;
	}
	return parse_root(md, err);
}

int adac_ecma_open_target_blob(struct adac_target *t, uint64_t addr, uint64_t size, struct adac_ecma **out,
                               struct adac_error *err)
{
	*out = NULL;
	struct adac_ecma *md = ecma_new(err);
	if (!md)
		return -1;
	md->t = t;
	if (read_blob(t, addr, size, md, err)) {
		adac_ecma_free(md);
		return -1;
	}
	*out = md;
	return 0;
}

int adac_ecma_rva_to_addr(const struct adac_ecma *md, uint32_t rva, uint32_t len, uint64_t *addr,
                          struct adac_error *err)
{
	if (!md->has_image)
		return adac_fail(err, ADAC_E_UNSUPPORTED, 0, "metadata was not read from an image: no RVA 0x%x", rva);
	uint64_t end = (uint64_t)rva + len;
	if (md->mapped) {
		if (md->size && end > md->size)
			return adac_fail(err, ADAC_E_CORRUPT, md->base, "RVA 0x%x (+%u) is outside the %llu-byte image at 0x%llx",
			                 rva, len, (unsigned long long)md->size, (unsigned long long)md->base);
		*addr = md->base + rva;
		return 0;
	}
	if (end <= md->size_of_headers) {
		*addr = md->base + rva;
		return 0;
	}
	for (uint32_t i = 0; i < md->nsections; i++) {
		const struct pe_section *s = &md->sections[i];
		if (rva >= s->va && end <= (uint64_t)s->va + s->raw_size) {
			uint64_t off = (uint64_t)s->raw_ptr + (rva - s->va);
			if (md->size && off + len > md->size)
				break;
			*addr = md->base + off;
			return 0;
		}
	}
	return adac_fail(err, ADAC_E_CORRUPT, md->base, "RVA 0x%x (+%u) is in no section of the file image at 0x%llx", rva,
	                 len, (unsigned long long)md->base);
}

/* PE headers: DOS header -> PE signature -> COFF header -> optional header (CLI header directory,
 * SizeOfHeaders) -> section headers. */
static int parse_pe(struct adac_target *t, struct adac_ecma *md, uint32_t *cli_rva, uint32_t *cli_size,
                    struct adac_error *err)
{
	uint64_t base = md->base;
	uint8_t dos[64];
	if (adac_read(t, base, dos, sizeof dos, err))
		return -1;
	if (dos[0] != 'M' || dos[1] != 'Z')
		return adac_fail(err, ADAC_E_CORRUPT, base, "image at 0x%llx has no MZ header", (unsigned long long)base);
	uint32_t lfanew = adac_get_u32(dos, 0x3c);
	if (lfanew < 64 || lfanew > (1u << 20) || (md->size && (uint64_t)lfanew + 24 > md->size))
		return adac_fail(err, ADAC_E_CORRUPT, base, "image at 0x%llx has a bad PE header offset 0x%x",
		                 (unsigned long long)base, lfanew);
	uint8_t nt[24];
	if (adac_read(t, base + lfanew, nt, sizeof nt, err))
		return -1;
	if (memcmp(nt, "PE\0\0", 4) != 0)
		return adac_fail(err, ADAC_E_CORRUPT, base, "image at 0x%llx has no PE signature", (unsigned long long)base);
	uint16_t nsections = adac_get_u16(nt, 6);
	uint16_t opt_size = adac_get_u16(nt, 20);
	if (nsections > ADAC_MAX_PE_SECTIONS)
		return adac_fail(err, ADAC_E_LIMIT, base, "image at 0x%llx has %u sections (limit %u)",
		                 (unsigned long long)base, nsections, ADAC_MAX_PE_SECTIONS);
	uint8_t opt[256];
	if (opt_size < 96 || opt_size > sizeof opt)
		return adac_fail(err, ADAC_E_CORRUPT, base, "image at 0x%llx has an optional header of %u bytes",
		                 (unsigned long long)base, opt_size);
	if (adac_read(t, base + lfanew + 24, opt, opt_size, err))
		return -1;
	uint16_t magic = adac_get_u16(opt, 0);
	uint32_t dirs_off = 0, ndirs_off = 0;
	if (magic == 0x10b) {
		ndirs_off = 92;
		dirs_off = 96;
	} else if (magic == 0x20b) {
		ndirs_off = 108;
		dirs_off = 112;
	} else {
		return adac_fail(err, ADAC_E_CORRUPT, base, "image at 0x%llx has optional header magic 0x%x",
		                 (unsigned long long)base, magic);
	}
	md->size_of_headers = adac_get_u32(opt, 60);
	/* The header must hold the directories (and so NumberOfRvaAndSizes) before either is read. */
	if (dirs_off + 15 * 8 > opt_size || adac_get_u32(opt, ndirs_off) <= 14)
		return adac_fail(err, ADAC_E_CORRUPT, base, "image at 0x%llx has no CLI header directory (not .NET)",
		                 (unsigned long long)base);
	*cli_rva = adac_get_u32(opt, dirs_off + 14 * 8);
	*cli_size = adac_get_u32(opt, dirs_off + 14 * 8 + 4);
	if (*cli_rva == 0 || *cli_size < 72)
		return adac_fail(err, ADAC_E_CORRUPT, base, "image at 0x%llx has no CLI header (not .NET)",
		                 (unsigned long long)base);
	if (nsections) {
		size_t bytes = (size_t)nsections * 40;
		uint8_t *sh = malloc(bytes);
		md->sections = calloc(nsections, sizeof *md->sections);
		if (!sh || !md->sections) {
			free(sh);
			return adac_fail(err, ADAC_E_NOMEM, base, "out of memory for %u section headers", nsections);
		}
		if (adac_read(t, base + lfanew + 24 + opt_size, sh, bytes, err)) {
			free(sh);
			return -1;
		}
		for (unsigned i = 0; i < nsections; i++) {
			const uint8_t *s = sh + (size_t)i * 40;
			md->sections[i] = (struct pe_section){adac_get_u32(s, 12), adac_get_u32(s, 8), adac_get_u32(s, 16),
			                                       adac_get_u32(s, 20)};
		}
		md->nsections = nsections;
		free(sh);
	}
	return 0;
}

int adac_ecma_open_image(struct adac_target *t, uint64_t base, uint64_t size, bool mapped, struct adac_ecma **out,
                         struct adac_error *err)
{
	*out = NULL;
	struct adac_ecma *md = ecma_new(err);
	if (!md)
		return -1;
	md->t = t;
	md->has_image = true;
	md->mapped = mapped;
	md->base = base;
	md->size = size;
	uint32_t cli_rva = 0, cli_size = 0;
	uint64_t cli = 0, mdaddr = 0;
	uint8_t cor[72];
	if (parse_pe(t, md, &cli_rva, &cli_size, err) || adac_ecma_rva_to_addr(md, cli_rva, sizeof cor, &cli, err) ||
	    adac_read(t, cli, cor, sizeof cor, err))
		goto fail;
	uint32_t md_rva = adac_get_u32(cor, 8), md_size = adac_get_u32(cor, 12);
	if (adac_get_u32(cor, 0) < 72 || md_rva == 0 || md_size == 0) {
		adac_fail(err, ADAC_E_CORRUPT, cli, "CLI header at 0x%llx names no metadata", (unsigned long long)cli);
		goto fail;
	}
	if (adac_ecma_rva_to_addr(md, md_rva, md_size, &mdaddr, err) || read_blob(t, mdaddr, md_size, md, err))
		goto fail;
	*out = md;
	return 0;
fail:
	adac_error_wrap(err, "image at 0x%llx: ", (unsigned long long)base);
	adac_ecma_free(md);
	return -1;
}

/* ---- Facts ---- */

uint32_t adac_ecma_rows(const struct adac_ecma *md, unsigned table)
{
	return table < ADAC_ECMA_TABLE_COUNT ? md->rows[table] : 0;
}

uint32_t adac_ecma_row_size(const struct adac_ecma *md, unsigned table)
{
	return table < ADAC_ECMA_TABLE_COUNT ? md->row_size[table] : 0;
}

uint64_t adac_ecma_sorted_mask(const struct adac_ecma *md) { return md->sorted; }
uint64_t adac_ecma_valid_mask(const struct adac_ecma *md) { return md->valid; }
const uint8_t *adac_ecma_pdb_id(const struct adac_ecma *md) { return md->has_pdb ? md->pdb_id : NULL; }
uint8_t adac_ecma_heap_sizes(const struct adac_ecma *md) { return md->heap_sizes; }
const char *adac_ecma_version(const struct adac_ecma *md) { return md->version; }
bool adac_ecma_uncompressed(const struct adac_ecma *md) { return md->uncompressed; }
bool adac_ecma_has_image(const struct adac_ecma *md) { return md->has_image; }
uint64_t adac_ecma_image_base(const struct adac_ecma *md) { return md->base; }
bool adac_ecma_image_mapped(const struct adac_ecma *md) { return md->mapped; }

uint32_t adac_ecma_heap_size(const struct adac_ecma *md, char heap)
{
	switch (heap) {
	case 's':
		return md->strings_len;
	case 'b':
		return md->blob_len;
	case 'g':
		return md->guid_len;
	case 'u':
		return md->us_len;
	default:
		return 0;
	}
}

const uint8_t *adac_ecma_heap_data(const struct adac_ecma *md, char heap, uint32_t *len)
{
	*len = adac_ecma_heap_size(md, heap);
	switch (heap) {
	case 's':
		return md->strings;
	case 'b':
		return md->blob;
	case 'g':
		return md->guid;
	case 'u':
		return md->us;
	default:
		return NULL;
	}
}

const uint8_t *adac_ecma_blob_data(const struct adac_ecma *md, size_t *len)
{
	*len = md->len;
	return md->data;
}

/* ---- Heaps ---- */

int adac_ecma_string(const struct adac_ecma *md, uint32_t index, const char **s, struct adac_error *err)
{
	if (index == 0 && (!md->strings || md->strings_len == 0)) {
		*s = "";
		return 0;
	}
	if (index >= md->strings_len)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "#Strings index 0x%x is past the heap (%u bytes)", index,
		                 md->strings_len);
	const char *p = (const char *)md->strings + index;
	if (!memchr(p, '\0', md->strings_len - index))
		return adac_fail(err, ADAC_E_CORRUPT, 0, "#Strings entry 0x%x is not terminated", index);
	*s = p;
	return 0;
}

int adac_ecma_blob(const struct adac_ecma *md, uint32_t index, const uint8_t **p, uint32_t *len,
                   struct adac_error *err)
{
	if (index == 0) {
		*p = md->blob ? md->blob : (const uint8_t *)"";
		*len = 0;
		return 0;
	}
	if (index >= md->blob_len)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "#Blob index 0x%x is past the heap (%u bytes)", index, md->blob_len);
	size_t pos = index;
	uint32_t n = 0;
	if (adac_ecma_uncompress(md->blob, md->blob_len, &pos, &n) || n > md->blob_len - pos)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "#Blob entry 0x%x has a bad length", index);
	*p = md->blob + pos;
	*len = n;
	return 0;
}

int adac_ecma_guid(const struct adac_ecma *md, uint32_t index, uint8_t guid[16], struct adac_error *err)
{
	if (index == 0) {
		memset(guid, 0, 16);
		return 0;
	}
	if ((uint64_t)index * 16 > md->guid_len)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "#GUID index %u is past the heap (%u bytes)", index, md->guid_len);
	memcpy(guid, md->guid + (size_t)(index - 1) * 16, 16);
	return 0;
}

int adac_ecma_user_string(const struct adac_ecma *md, uint32_t index, const uint8_t **utf16, uint32_t *nbytes,
                          struct adac_error *err)
{
	if (index == 0 || index >= md->us_len)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "#US index 0x%x is past the heap (%u bytes)", index, md->us_len);
	size_t pos = index;
	uint32_t n = 0;
	if (adac_ecma_uncompress(md->us, md->us_len, &pos, &n) || n > md->us_len - pos)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "#US entry 0x%x has a bad length", index);
	*utf16 = md->us + pos;
	*nbytes = n ? n - 1 : 0; /* the last byte flags non-ASCII content */
	return 0;
}

/* ---- Cells ---- */

static const uint8_t *row_ptr(const struct adac_ecma *md, unsigned table, uint32_t rid, struct adac_error *err)
{
	if (table >= ADAC_ECMA_TABLE_COUNT || !table_defs[table].name) {
		adac_fail(err, ADAC_E_BAD_ARG, 0, "no metadata table 0x%x", table);
		return NULL;
	}
	if (rid == 0 || rid > md->rows[table]) {
		adac_fail(err, ADAC_E_CORRUPT, 0, "%s row %u does not exist (the table has %u rows)", table_defs[table].name,
		          rid, md->rows[table]);
		return NULL;
	}
	return md->table[table] + (size_t)(rid - 1) * md->row_size[table];
}

/* Raw column value (coded indexes undecoded); the row is known to exist. */
static uint32_t raw_col(const struct adac_ecma *md, unsigned table, const uint8_t *row, unsigned col)
{
	const uint8_t *p = row + md->col_off[table][col];
	return md->col_size[table][col] == 2 ? adac_get_u16(p, 0) : adac_get_u32(p, 0);
}

static int decode_coded(unsigned kind, uint32_t raw, uint32_t *token, struct adac_error *err)
{
	const struct coded_def *c = &coded_defs[kind];
	uint32_t tag = raw & ((1u << c->bits) - 1), rid = raw >> c->bits;
	if (rid == 0) {
		*token = 0;
		return 0;
	}
	if (tag >= c->n || c->tables[tag] == NONE)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "coded index 0x%x has an invalid tag %u", raw, tag);
	if (rid > 0xffffff)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "coded index 0x%x has a row id past 24 bits", raw);
	*token = ADAC_ECMA_TOKEN(c->tables[tag], rid);
	return 0;
}

static int col(const struct adac_ecma *md, unsigned table, const uint8_t *row, unsigned c, uint32_t *value,
               struct adac_error *err)
{
	uint32_t raw = raw_col(md, table, row, c);
	struct col_def d = table_defs[table].cols[c];
	if (d.kind == K_CODED)
		return decode_coded(d.arg, raw, value, err);
	*value = raw;
	return 0;
}

int adac_ecma_cell(const struct adac_ecma *md, unsigned table, uint32_t rid, unsigned c, uint32_t *value,
                   struct adac_error *err)
{
	const uint8_t *row = row_ptr(md, table, rid, err);
	if (!row)
		return -1;
	if (c >= table_defs[table].ncols)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "%s has no column %u", table_defs[table].name, c);
	return col(md, table, row, c, value, err);
}

static int col_string(const struct adac_ecma *md, unsigned table, const uint8_t *row, unsigned c, const char **s,
                      struct adac_error *err)
{
	return adac_ecma_string(md, raw_col(md, table, row, c), s, err);
}

static int col_blob(const struct adac_ecma *md, unsigned table, const uint8_t *row, unsigned c, const uint8_t **p,
                    uint32_t *len, struct adac_error *err)
{
	return adac_ecma_blob(md, raw_col(md, table, row, c), p, len, err);
}

static void wrap_row(struct adac_error *err, unsigned table, uint32_t rid)
{
	adac_error_wrap(err, "%s row %u: ", table_defs[table].name, rid);
}

/* ---- Lists (TypeDef.FieldList/MethodList, MethodDef.ParamList) ---- */

static unsigned ptr_table(unsigned table)
{
	switch (table) {
	case ADAC_ECMA_FIELD:
		return ADAC_ECMA_FIELDPTR;
	case ADAC_ECMA_METHODDEF:
		return ADAC_ECMA_METHODPTR;
	case ADAC_ECMA_PARAM:
		return ADAC_ECMA_PARAMPTR;
	case ADAC_ECMA_EVENT:
		return ADAC_ECMA_EVENTPTR;
	case ADAC_ECMA_PROPERTY:
		return ADAC_ECMA_PROPERTYPTR;
	default:
		return ADAC_ECMA_TABLE_COUNT;
	}
}

static uint32_t list_count(const struct adac_ecma *md, unsigned table)
{
	unsigned pt = ptr_table(table);
	return pt < ADAC_ECMA_TABLE_COUNT && md->rows[pt] ? md->rows[pt] : md->rows[table];
}

int adac_ecma_list_item(const struct adac_ecma *md, unsigned table, uint32_t pos, uint32_t *rid,
                        struct adac_error *err)
{
	unsigned pt = ptr_table(table);
	if (pt < ADAC_ECMA_TABLE_COUNT && md->rows[pt]) {
		const uint8_t *row = row_ptr(md, pt, pos, err);
		if (!row)
			return -1;
		*rid = raw_col(md, pt, row, 0);
	} else {
		*rid = pos;
	}
	if (*rid == 0 || *rid > md->rows[table])
		return adac_fail(err, ADAC_E_CORRUPT, 0, "%s list position %u names row %u of %u", adac_ecma_table_name(table),
		                 pos, *rid, md->rows[table]);
	return 0;
}

/* [first, end) of the list in column `c` of `table` row `rid`, listing rows of `target`. */
static int list_range(const struct adac_ecma *md, unsigned table, uint32_t rid, unsigned c, unsigned target,
                      uint32_t *first, uint32_t *end, struct adac_error *err)
{
	uint32_t count = list_count(md, target);
	const uint8_t *row = row_ptr(md, table, rid, err);
	if (!row)
		return -1;
	*first = raw_col(md, table, row, c);
	if (rid < md->rows[table])
		*end = raw_col(md, table, row + md->row_size[table], c);
	else
		*end = count + 1;
	if (*first == 0 || *first > count + 1 || *end > count + 1 || *end < *first)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "%s row %u: %s list [%u, %u) is outside the %u rows",
		                 table_defs[table].name, rid, table_defs[target].name, *first, *end, count);
	return 0;
}

/* ---- Rows ---- */

int adac_ecma_module(const struct adac_ecma *md, struct adac_ecma_module_row *out, struct adac_error *err)
{
	const uint8_t *row = row_ptr(md, ADAC_ECMA_MODULE, 1, err);
	if (!row || col_string(md, ADAC_ECMA_MODULE, row, 1, &out->name, err))
		return -1;
	out->mvid = raw_col(md, ADAC_ECMA_MODULE, row, 2);
	return 0;
}

int adac_ecma_typeref(const struct adac_ecma *md, uint32_t rid, struct adac_ecma_typeref *out, struct adac_error *err)
{
	const unsigned T = ADAC_ECMA_TYPEREF;
	const uint8_t *row = row_ptr(md, T, rid, err);
	if (!row || col(md, T, row, 0, &out->scope, err) || col_string(md, T, row, 1, &out->name, err) ||
	    col_string(md, T, row, 2, &out->ns, err)) {
		wrap_row(err, T, rid);
		return -1;
	}
	return 0;
}

int adac_ecma_typedef(const struct adac_ecma *md, uint32_t rid, struct adac_ecma_typedef *out, struct adac_error *err)
{
	const unsigned T = ADAC_ECMA_TYPEDEF;
	const uint8_t *row = row_ptr(md, T, rid, err);
	if (!row || col_string(md, T, row, 1, &out->name, err) || col_string(md, T, row, 2, &out->ns, err) ||
	    col(md, T, row, 3, &out->extends, err) ||
	    list_range(md, T, rid, 4, ADAC_ECMA_FIELD, &out->field_first, &out->field_end, err) ||
	    list_range(md, T, rid, 5, ADAC_ECMA_METHODDEF, &out->method_first, &out->method_end, err)) {
		if (row)
			wrap_row(err, T, rid);
		return -1;
	}
	out->flags = raw_col(md, T, row, 0);
	return 0;
}

int adac_ecma_field(const struct adac_ecma *md, uint32_t rid, struct adac_ecma_field *out, struct adac_error *err)
{
	const unsigned T = ADAC_ECMA_FIELD;
	const uint8_t *row = row_ptr(md, T, rid, err);
	if (!row || col_string(md, T, row, 1, &out->name, err) || col_blob(md, T, row, 2, &out->sig, &out->sig_len, err)) {
		if (row)
			wrap_row(err, T, rid);
		return -1;
	}
	out->flags = (uint16_t)raw_col(md, T, row, 0);
	return 0;
}

int adac_ecma_methoddef(const struct adac_ecma *md, uint32_t rid, struct adac_ecma_methoddef *out,
                        struct adac_error *err)
{
	const unsigned T = ADAC_ECMA_METHODDEF;
	const uint8_t *row = row_ptr(md, T, rid, err);
	if (!row || col_string(md, T, row, 3, &out->name, err) || col_blob(md, T, row, 4, &out->sig, &out->sig_len, err) ||
	    list_range(md, T, rid, 5, ADAC_ECMA_PARAM, &out->param_first, &out->param_end, err)) {
		if (row)
			wrap_row(err, T, rid);
		return -1;
	}
	out->rva = raw_col(md, T, row, 0);
	out->impl_flags = (uint16_t)raw_col(md, T, row, 1);
	out->flags = (uint16_t)raw_col(md, T, row, 2);
	return 0;
}

int adac_ecma_param(const struct adac_ecma *md, uint32_t rid, struct adac_ecma_param *out, struct adac_error *err)
{
	const unsigned T = ADAC_ECMA_PARAM;
	const uint8_t *row = row_ptr(md, T, rid, err);
	if (!row || col_string(md, T, row, 2, &out->name, err)) {
		if (row)
			wrap_row(err, T, rid);
		return -1;
	}
	out->flags = (uint16_t)raw_col(md, T, row, 0);
	out->sequence = (uint16_t)raw_col(md, T, row, 1);
	return 0;
}

int adac_ecma_memberref(const struct adac_ecma *md, uint32_t rid, struct adac_ecma_memberref *out,
                        struct adac_error *err)
{
	const unsigned T = ADAC_ECMA_MEMBERREF;
	const uint8_t *row = row_ptr(md, T, rid, err);
	if (!row || col(md, T, row, 0, &out->parent, err) || col_string(md, T, row, 1, &out->name, err) ||
	    col_blob(md, T, row, 2, &out->sig, &out->sig_len, err)) {
		if (row)
			wrap_row(err, T, rid);
		return -1;
	}
	return 0;
}

int adac_ecma_constant(const struct adac_ecma *md, uint32_t rid, struct adac_ecma_constant *out,
                       struct adac_error *err)
{
	const unsigned T = ADAC_ECMA_CONSTANT;
	const uint8_t *row = row_ptr(md, T, rid, err);
	if (!row || col(md, T, row, 1, &out->parent, err) || col_blob(md, T, row, 2, &out->value, &out->value_len, err)) {
		if (row)
			wrap_row(err, T, rid);
		return -1;
	}
	out->type = (uint8_t)(raw_col(md, T, row, 0) & 0xff);
	return 0;
}

int adac_ecma_genericparam(const struct adac_ecma *md, uint32_t rid, struct adac_ecma_genericparam *out,
                           struct adac_error *err)
{
	const unsigned T = ADAC_ECMA_GENERICPARAM;
	const uint8_t *row = row_ptr(md, T, rid, err);
	if (!row || col(md, T, row, 2, &out->owner, err) || col_string(md, T, row, 3, &out->name, err)) {
		if (row)
			wrap_row(err, T, rid);
		return -1;
	}
	out->number = (uint16_t)raw_col(md, T, row, 0);
	out->flags = (uint16_t)raw_col(md, T, row, 1);
	return 0;
}

static int single_blob(const struct adac_ecma *md, unsigned T, uint32_t rid, unsigned c, const uint8_t **sig,
                       uint32_t *len, struct adac_error *err)
{
	const uint8_t *row = row_ptr(md, T, rid, err);
	if (!row || col_blob(md, T, row, c, sig, len, err)) {
		if (row)
			wrap_row(err, T, rid);
		return -1;
	}
	return 0;
}

int adac_ecma_typespec(const struct adac_ecma *md, uint32_t rid, const uint8_t **sig, uint32_t *len,
                       struct adac_error *err)
{
	return single_blob(md, ADAC_ECMA_TYPESPEC, rid, 0, sig, len, err);
}

int adac_ecma_standalonesig(const struct adac_ecma *md, uint32_t rid, const uint8_t **sig, uint32_t *len,
                            struct adac_error *err)
{
	return single_blob(md, ADAC_ECMA_STANDALONESIG, rid, 0, sig, len, err);
}

int adac_ecma_methodspec(const struct adac_ecma *md, uint32_t rid, struct adac_ecma_methodspec *out,
                         struct adac_error *err)
{
	const unsigned T = ADAC_ECMA_METHODSPEC;
	const uint8_t *row = row_ptr(md, T, rid, err);
	if (!row || col(md, T, row, 0, &out->method, err) || col_blob(md, T, row, 1, &out->inst, &out->inst_len, err)) {
		if (row)
			wrap_row(err, T, rid);
		return -1;
	}
	return 0;
}

int adac_ecma_assemblyref(const struct adac_ecma *md, uint32_t rid, struct adac_ecma_assemblyref *out,
                          struct adac_error *err)
{
	const unsigned T = ADAC_ECMA_ASSEMBLYREF;
	const uint8_t *row = row_ptr(md, T, rid, err);
	if (!row || col_blob(md, T, row, 5, &out->public_key, &out->public_key_len, err) ||
	    col_string(md, T, row, 6, &out->name, err) || col_string(md, T, row, 7, &out->culture, err)) {
		if (row)
			wrap_row(err, T, rid);
		return -1;
	}
	for (unsigned i = 0; i < 4; i++)
		out->version[i] = (uint16_t)raw_col(md, T, row, i);
	out->flags = raw_col(md, T, row, 4);
	return 0;
}

int adac_ecma_assembly_name(const struct adac_ecma *md, const char **name, struct adac_error *err)
{
	if (md->rows[ADAC_ECMA_ASSEMBLY] == 0)
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "metadata has no Assembly row");
	const uint8_t *row = row_ptr(md, ADAC_ECMA_ASSEMBLY, 1, err);
	return row ? col_string(md, ADAC_ECMA_ASSEMBLY, row, 7, name, err) : -1;
}

/* ---- Lookups ---- */

/* First row of a table sorted on column c whose raw value is >= key (binary search); rows+1 if none. */
static uint32_t lower_bound(const struct adac_ecma *md, unsigned table, unsigned c, uint32_t key)
{
	uint32_t lo = 1, hi = md->rows[table] + 1;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const uint8_t *row = md->table[table] + (size_t)(mid - 1) * md->row_size[table];
		if (raw_col(md, table, row, c) < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool is_sorted(const struct adac_ecma *md, unsigned table) { return (md->sorted >> table) & 1; }

/* Calls visit for every row of `table` whose raw column c equals key (binary search when the table is
 * marked sorted, else a scan). visit returns 1 to stop. */
static void for_each_match(const struct adac_ecma *md, unsigned table, unsigned c, uint32_t key,
                           int (*visit)(void *ctx, uint32_t rid, const uint8_t *row), void *ctx)
{
	uint32_t n = md->rows[table];
	uint32_t start = is_sorted(md, table) ? lower_bound(md, table, c, key) : 1;
	for (uint32_t rid = start; rid <= n; rid++) {
		const uint8_t *row = md->table[table] + (size_t)(rid - 1) * md->row_size[table];
		uint32_t v = raw_col(md, table, row, c);
		if (v == key) {
			if (visit(ctx, rid, row))
				return;
		} else if (is_sorted(md, table) && v > key) {
			return;
		}
	}
}

/* Raw coded-index value of a token for coded kind `kind` (0 when the token's table is not in it). */
static uint32_t encode_coded(unsigned kind, uint32_t token)
{
	const struct coded_def *c = &coded_defs[kind];
	for (unsigned tag = 0; tag < c->n; tag++)
		if (c->tables[tag] == ADAC_ECMA_TOKEN_TABLE(token))
			return (ADAC_ECMA_TOKEN_RID(token) << c->bits) | tag;
	return 0;
}

struct row_visit {
	int (*visit)(void *ctx, uint32_t rid);
	void *ctx;
	int rc;
};

static int visit_rid(void *ctx, uint32_t rid, const uint8_t *row)
{
	(void)row;
	struct row_visit *v = ctx;
	v->rc = v->visit(v->ctx, rid);
	return v->rc != 0;
}

int adac_ecma_each_row(const struct adac_ecma *md, unsigned table, unsigned c, uint32_t value,
                       int (*visit)(void *ctx, uint32_t rid), void *ctx, struct adac_error *err)
{
	if (table >= ADAC_ECMA_TABLE_COUNT || !table_defs[table].name || c >= table_defs[table].ncols)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "metadata table 0x%x has no column %u", table, c);
	uint32_t key = value;
	if (table_defs[table].cols[c].kind == K_CODED && value &&
	    !(key = encode_coded(table_defs[table].cols[c].arg, value)))
		return 0; /* a token the column cannot hold: no row holds it */
	struct row_visit v = {visit, ctx, 0};
	for_each_match(md, table, c, key, visit_rid, &v);
	return v.rc;
}

struct first_match {
	uint32_t rid;
	const uint8_t *row;
};

static int take_first(void *ctx, uint32_t rid, const uint8_t *row)
{
	struct first_match *m = ctx;
	m->rid = rid;
	m->row = row;
	return 1;
}

int adac_ecma_enclosing_type(const struct adac_ecma *md, uint32_t typedef_rid, uint32_t *enclosing_rid,
                             struct adac_error *err)
{
	struct first_match m = {0, NULL};
	for_each_match(md, ADAC_ECMA_NESTEDCLASS, 0, typedef_rid, take_first, &m);
	*enclosing_rid = m.row ? raw_col(md, ADAC_ECMA_NESTEDCLASS, m.row, 1) : 0;
	if (*enclosing_rid == typedef_rid)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "TypeDef row %u is nested in itself", typedef_rid);
	return 0;
}

/* Owner of list item `rid` of `target` through TypeDef column c: the last TypeDef whose list starts
 * at or before the item's position. */
static int list_owner(const struct adac_ecma *md, unsigned target, unsigned c, uint32_t rid, uint32_t *owner,
                      struct adac_error *err)
{
	uint32_t pos = rid;
	unsigned pt = ptr_table(target);
	if (pt < ADAC_ECMA_TABLE_COUNT && md->rows[pt]) {
		pos = 0;
		for (uint32_t i = 1; i <= md->rows[pt]; i++) {
			const uint8_t *row = md->table[pt] + (size_t)(i - 1) * md->row_size[pt];
			if (raw_col(md, pt, row, 0) == rid) {
				pos = i;
				break;
			}
		}
	}
	uint32_t n = md->rows[ADAC_ECMA_TYPEDEF];
	if (pos == 0 || n == 0)
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "%s row %u belongs to no TypeDef", table_defs[target].name, rid);
	uint32_t lo = 1, hi = n + 1; /* first TypeDef whose list starts after pos */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const uint8_t *row = md->table[ADAC_ECMA_TYPEDEF] + (size_t)(mid - 1) * md->row_size[ADAC_ECMA_TYPEDEF];
		if (raw_col(md, ADAC_ECMA_TYPEDEF, row, c) <= pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Several TypeDefs may start at the same position (empty lists): take the last one, whose list
	 * is the one that is not empty. */
	uint32_t t = lo - 1;
	uint32_t first = 0, end = 0;
	if (t == 0 || list_range(md, ADAC_ECMA_TYPEDEF, t, c, target, &first, &end, err))
		return t == 0 ? adac_fail(err, ADAC_E_NOT_FOUND, 0, "%s row %u belongs to no TypeDef",
		                          table_defs[target].name, rid)
		              : -1;
	if (pos < first || pos >= end)
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "%s row %u belongs to no TypeDef", table_defs[target].name, rid);
	*owner = t;
	return 0;
}

int adac_ecma_method_owner(const struct adac_ecma *md, uint32_t methoddef_rid, uint32_t *typedef_rid,
                           struct adac_error *err)
{
	return list_owner(md, ADAC_ECMA_METHODDEF, 5, methoddef_rid, typedef_rid, err);
}

int adac_ecma_field_owner(const struct adac_ecma *md, uint32_t field_rid, uint32_t *typedef_rid,
                          struct adac_error *err)
{
	return list_owner(md, ADAC_ECMA_FIELD, 4, field_rid, typedef_rid, err);
}

struct gp_search {
	const struct adac_ecma *md;
	uint32_t number;
	uint32_t count;
	uint32_t rid;
};

static int gp_visit(void *ctx, uint32_t rid, const uint8_t *row)
{
	struct gp_search *s = ctx;
	s->count++;
	if (!s->rid && raw_col(s->md, ADAC_ECMA_GENERICPARAM, row, 0) == s->number)
		s->rid = rid;
	return 0;
}

static int gp_search(const struct adac_ecma *md, uint32_t owner_token, struct gp_search *s, struct adac_error *err)
{
	uint32_t key = encode_coded(CI_TYPEORMETHODDEF, owner_token);
	if (!key)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "token 0x%08x cannot own generic parameters", owner_token);
	s->md = md;
	for_each_match(md, ADAC_ECMA_GENERICPARAM, 2, key, gp_visit, s);
	return 0;
}

int adac_ecma_generic_param_count(const struct adac_ecma *md, uint32_t owner_token, uint32_t *count,
                                  struct adac_error *err)
{
	struct gp_search s = {NULL, UINT32_MAX, 0, 0};
	if (gp_search(md, owner_token, &s, err))
		return -1;
	*count = s.count;
	return 0;
}

int adac_ecma_generic_param(const struct adac_ecma *md, uint32_t owner_token, uint32_t number, uint32_t *rid,
                            struct adac_error *err)
{
	struct gp_search s = {NULL, number, 0, 0};
	if (gp_search(md, owner_token, &s, err))
		return -1;
	if (!s.rid)
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "token 0x%08x has no generic parameter %u", owner_token, number);
	*rid = s.rid;
	return 0;
}

int adac_ecma_param_of(const struct adac_ecma *md, uint32_t methoddef_rid, uint16_t seq, uint32_t *rid,
                       struct adac_error *err)
{
	struct adac_ecma_methoddef m;
	if (adac_ecma_methoddef(md, methoddef_rid, &m, err))
		return -1;
	for (uint32_t pos = m.param_first; pos < m.param_end; pos++) {
		uint32_t r = 0;
		if (adac_ecma_list_item(md, ADAC_ECMA_PARAM, pos, &r, err))
			return -1;
		const uint8_t *row = md->table[ADAC_ECMA_PARAM] + (size_t)(r - 1) * md->row_size[ADAC_ECMA_PARAM];
		if (raw_col(md, ADAC_ECMA_PARAM, row, 1) == seq) {
			*rid = r;
			return 0;
		}
	}
	return adac_fail(err, ADAC_E_NOT_FOUND, 0, "MethodDef row %u has no Param %u", methoddef_rid, seq);
}

int adac_ecma_constant_of(const struct adac_ecma *md, uint32_t parent_token, uint32_t *rid, struct adac_error *err)
{
	uint32_t key = encode_coded(CI_HASCONSTANT, parent_token);
	if (!key)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "token 0x%08x cannot have a constant", parent_token);
	struct first_match m = {0, NULL};
	for_each_match(md, ADAC_ECMA_CONSTANT, 1, key, take_first, &m);
	if (!m.rid)
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "token 0x%08x has no constant", parent_token);
	*rid = m.rid;
	return 0;
}

int adac_ecma_find_typedef(const struct adac_ecma *md, const char *ns, const char *name, uint32_t enclosing_rid,
                           uint32_t *rid, struct adac_error *err)
{
	const unsigned T = ADAC_ECMA_TYPEDEF;
	for (uint32_t r = 1; r <= md->rows[T]; r++) {
		const uint8_t *row = md->table[T] + (size_t)(r - 1) * md->row_size[T];
		const char *n, *s;
		if (col_string(md, T, row, 1, &n, err) || col_string(md, T, row, 2, &s, err))
			return -1;
		if (strcmp(n, name) != 0 || (!enclosing_rid && strcmp(s, ns ? ns : "") != 0))
			continue;
		uint32_t enc = 0;
		if (adac_ecma_enclosing_type(md, r, &enc, err))
			return -1;
		if (enc == enclosing_rid) {
			*rid = r;
			return 0;
		}
	}
	return adac_fail(err, ADAC_E_NOT_FOUND, 0, "no type %s%s%s in the metadata", ns && *ns ? ns : "",
	                 ns && *ns ? "." : "", name);
}

static int find_member(const struct adac_ecma *md, uint32_t typedef_rid, unsigned target, unsigned name_col,
                       const char *name, uint32_t *rid, struct adac_error *err)
{
	struct adac_ecma_typedef td;
	if (adac_ecma_typedef(md, typedef_rid, &td, err))
		return -1;
	uint32_t first = target == ADAC_ECMA_FIELD ? td.field_first : td.method_first;
	uint32_t end = target == ADAC_ECMA_FIELD ? td.field_end : td.method_end;
	for (uint32_t pos = first; pos < end; pos++) {
		uint32_t r = 0;
		const char *n;
		if (adac_ecma_list_item(md, target, pos, &r, err))
			return -1;
		const uint8_t *row = md->table[target] + (size_t)(r - 1) * md->row_size[target];
		if (col_string(md, target, row, name_col, &n, err))
			return -1;
		if (strcmp(n, name) == 0) {
			*rid = r;
			return 0;
		}
	}
	return adac_fail(err, ADAC_E_NOT_FOUND, 0, "TypeDef row %u has no %s %s", typedef_rid,
	                 target == ADAC_ECMA_FIELD ? "field" : "method", name);
}

int adac_ecma_find_field(const struct adac_ecma *md, uint32_t typedef_rid, const char *name, uint32_t *rid,
                         struct adac_error *err)
{
	return find_member(md, typedef_rid, ADAC_ECMA_FIELD, 1, name, rid, err);
}

int adac_ecma_find_method(const struct adac_ecma *md, uint32_t typedef_rid, const char *name, uint32_t *rid,
                          struct adac_error *err)
{
	return find_member(md, typedef_rid, ADAC_ECMA_METHODDEF, 3, name, rid, err);
}

/* ---- Method bodies ---- */

int adac_ecma_method_body(const struct adac_ecma *md, uint32_t rva, struct adac_ecma_method_body *out,
                          struct adac_error *err)
{
	memset(out, 0, sizeof *out);
	uint64_t addr = 0;
	if (rva == 0)
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "method has no IL body (RVA 0)");
	if (adac_ecma_rva_to_addr(md, rva, 1, &addr, err))
		return -1;
	uint8_t h[12];
	if (adac_read(md->t, addr, h, 1, err))
		return -1;
	out->addr = addr;
	if ((h[0] & 3) == 2) {
		out->header_size = 1;
		out->code_size = h[0] >> 2;
		out->max_stack = 8;
	} else if ((h[0] & 3) == 3) {
		if (adac_ecma_rva_to_addr(md, rva, 12, &addr, err) || adac_read(md->t, addr, h, 12, err))
			return -1;
		uint16_t fs = adac_get_u16(h, 0);
		out->fat = true;
		out->flags = fs & 0x0fff;
		out->header_size = (uint8_t)((fs >> 12) * 4);
		out->max_stack = adac_get_u16(h, 2);
		out->code_size = adac_get_u32(h, 4);
		out->local_sig_token = adac_get_u32(h, 8);
		if (out->header_size < 12)
			return adac_fail(err, ADAC_E_CORRUPT, addr, "method body at RVA 0x%x has a %u-byte fat header", rva,
			                 out->header_size);
		if (out->local_sig_token &&
		    (ADAC_ECMA_TOKEN_TABLE(out->local_sig_token) != ADAC_ECMA_STANDALONESIG ||
		     ADAC_ECMA_TOKEN_RID(out->local_sig_token) == 0 ||
		     ADAC_ECMA_TOKEN_RID(out->local_sig_token) > md->rows[ADAC_ECMA_STANDALONESIG]))
			return adac_fail(err, ADAC_E_CORRUPT, addr, "method body at RVA 0x%x has local signature token 0x%08x",
			                 rva, out->local_sig_token);
	} else {
		return adac_fail(err, ADAC_E_CORRUPT, addr, "method body at RVA 0x%x has header byte 0x%02x", rva, h[0]);
	}
	if ((uint64_t)rva + out->header_size > UINT32_MAX ||
	    adac_ecma_rva_to_addr(md, rva + out->header_size, out->code_size, &out->code_addr, err))
		return adac_fail(err, ADAC_E_CORRUPT, addr, "method body at RVA 0x%x: %u bytes of IL run past the image", rva,
		                 out->code_size);
	return 0;
}

/* ---- Per-module cache (ADAC_SLOT_METADATA) ---- */

struct md_entry {
	uint64_t module;
	struct adac_ecma *md;
	uint64_t image_base;    /* the PE image the metadata was read from (0: dynamic metadata) */
	uint32_t image_size;
	uint64_t generation;    /* the runtime's generation the entry was last checked in */
};

struct md_cache {
	struct md_entry *e;
	size_t n, cap;
};

static void md_cache_free(void *p)
{
	struct md_cache *c = p;
	for (size_t i = 0; i < c->n; i++)
		adac_ecma_free(c->e[i].md);
	free(c->e);
	free(c);
}

/* After the target ran: a module's image stays as loaded; a dynamic module's metadata grows (those
 * entries are not kept). Kept entries are checked against their module at their next use. */
static bool md_cache_keep(void *p)
{
	struct md_cache *c = p;
	size_t kept = 0;
	for (size_t i = 0; i < c->n; i++) {
		if (c->e[i].image_size)
			c->e[kept++] = c->e[i];
		else
			adac_ecma_free(c->e[i].md);
	}
	c->n = kept;
	return true;
}

/* Whether a kept entry still describes its module (not unloaded, with another loaded at its address). */
static bool md_entry_current(struct adac_runtime *rt, struct md_entry *e)
{
	if (e->generation == rt->generation)
		return true;
	uint64_t dyn_addr = 0;
	uint32_t dyn_size = 0;
	struct adac_loader_image img;
	if (adac_loader_dynamic_metadata(rt, e->module, &dyn_addr, &dyn_size, NULL) || dyn_size ||
	    adac_loader_image(rt, e->module, &img, NULL) || img.base != e->image_base || img.size != e->image_size)
		return false;
	e->generation = rt->generation;
	return true;
}

const struct adac_ecma *adac_ecma_for_module(struct adac_runtime *rt, uint64_t module, struct adac_error *err)
{
	struct md_cache *c = adac_runtime_slot(rt, ADAC_SLOT_METADATA);
	if (!c) {
		c = calloc(1, sizeof *c);
		if (!c) {
			adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for the metadata cache");
			return NULL;
		}
		adac_runtime_set_slot(rt, ADAC_SLOT_METADATA, c, md_cache_free);
		adac_runtime_set_slot_keep(rt, ADAC_SLOT_METADATA, md_cache_keep);
	}
	for (size_t i = 0; i < c->n; i++) {
		if (c->e[i].module != module)
			continue;
		if (md_entry_current(rt, &c->e[i]))
			return c->e[i].md;
		adac_ecma_free(c->e[i].md);
		c->e[i] = c->e[--c->n];
		break;
	}
	if (c->n >= ADAC_MAX_MODULES) {
		adac_fail(err, ADAC_E_LIMIT, module, "metadata of more than %u modules", ADAC_MAX_MODULES);
		return NULL;
	}
	struct adac_ecma *md = NULL;
	uint64_t dyn_addr = 0;
	uint32_t dyn_size = 0;
	struct adac_loader_image img = {0};
	/* (The loader's errors name the module already.) */
	if (adac_loader_dynamic_metadata(rt, module, &dyn_addr, &dyn_size, err))
		return NULL;
	if (dyn_size) {
		if (adac_ecma_open_target_blob(rt->t, dyn_addr, dyn_size, &md, err))
			goto fail;
	} else {
		if (adac_loader_image(rt, module, &img, err))
			return NULL;
		if (adac_ecma_open_image(rt->t, img.base, img.size, img.mapped, &md, err))
			goto fail;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		struct md_entry *e = realloc(c->e, cap * sizeof *e);
		if (!e) {
			adac_ecma_free(md);
			adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for the metadata cache");
			return NULL;
		}
		c->e = e;
		c->cap = cap;
	}
	c->e[c->n++] = (struct md_entry){module, md, dyn_size ? 0 : img.base, dyn_size ? 0 : img.size, rt->generation};
	return md;
fail:
	adac_error_wrap(err, "Module 0x%llx: ", (unsigned long long)module);
	return NULL;
}
