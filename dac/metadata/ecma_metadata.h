/* ecma_metadata.h - EcmaMetadata contract: a module's ECMA-335 metadata read from target memory
 * (PE -> CLI header -> metadata root "BSJB" -> streams #~ or #-, #Strings, #Blob, #GUID, #US,
 * and #Pdb for portable PDBs), table rows, heaps, method bodies.
 *
 * The whole metadata blob is copied out of the target with one read and parsed once; every access
 * after that is bounds-checked against the copy. Malformed metadata is ADAC_E_CORRUPT naming the
 * table, row or heap offset. Results that point into the metadata (names, blobs) stay valid while
 * the struct adac_ecma lives (for adac_ecma_for_module: until the runtime closes). */
#ifndef ADAC_ECMA_METADATA_H
#define ADAC_ECMA_METADATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/limits.h"

struct adac_target;
struct adac_runtime;
struct adac_ecma;

/* Table numbers (II.22; 0x30.. are the portable PDB tables). */
enum adac_ecma_table {
	ADAC_ECMA_MODULE = 0x00, ADAC_ECMA_TYPEREF = 0x01, ADAC_ECMA_TYPEDEF = 0x02, ADAC_ECMA_FIELDPTR = 0x03,
	ADAC_ECMA_FIELD = 0x04, ADAC_ECMA_METHODPTR = 0x05, ADAC_ECMA_METHODDEF = 0x06, ADAC_ECMA_PARAMPTR = 0x07,
	ADAC_ECMA_PARAM = 0x08, ADAC_ECMA_INTERFACEIMPL = 0x09, ADAC_ECMA_MEMBERREF = 0x0a, ADAC_ECMA_CONSTANT = 0x0b,
	ADAC_ECMA_CUSTOMATTRIBUTE = 0x0c, ADAC_ECMA_FIELDMARSHAL = 0x0d, ADAC_ECMA_DECLSECURITY = 0x0e,
	ADAC_ECMA_CLASSLAYOUT = 0x0f, ADAC_ECMA_FIELDLAYOUT = 0x10, ADAC_ECMA_STANDALONESIG = 0x11,
	ADAC_ECMA_EVENTMAP = 0x12, ADAC_ECMA_EVENTPTR = 0x13, ADAC_ECMA_EVENT = 0x14, ADAC_ECMA_PROPERTYMAP = 0x15,
	ADAC_ECMA_PROPERTYPTR = 0x16, ADAC_ECMA_PROPERTY = 0x17, ADAC_ECMA_METHODSEMANTICS = 0x18,
	ADAC_ECMA_METHODIMPL = 0x19, ADAC_ECMA_MODULEREF = 0x1a, ADAC_ECMA_TYPESPEC = 0x1b, ADAC_ECMA_IMPLMAP = 0x1c,
	ADAC_ECMA_FIELDRVA = 0x1d, ADAC_ECMA_ENCLOG = 0x1e, ADAC_ECMA_ENCMAP = 0x1f, ADAC_ECMA_ASSEMBLY = 0x20,
	ADAC_ECMA_ASSEMBLYPROCESSOR = 0x21, ADAC_ECMA_ASSEMBLYOS = 0x22, ADAC_ECMA_ASSEMBLYREF = 0x23,
	ADAC_ECMA_ASSEMBLYREFPROCESSOR = 0x24, ADAC_ECMA_ASSEMBLYREFOS = 0x25, ADAC_ECMA_FILE = 0x26,
	ADAC_ECMA_EXPORTEDTYPE = 0x27, ADAC_ECMA_MANIFESTRESOURCE = 0x28, ADAC_ECMA_NESTEDCLASS = 0x29,
	ADAC_ECMA_GENERICPARAM = 0x2a, ADAC_ECMA_METHODSPEC = 0x2b, ADAC_ECMA_GENERICPARAMCONSTRAINT = 0x2c,
	ADAC_ECMA_DOCUMENT = 0x30, ADAC_ECMA_METHODDEBUGINFORMATION = 0x31, ADAC_ECMA_LOCALSCOPE = 0x32,
	ADAC_ECMA_LOCALVARIABLE = 0x33, ADAC_ECMA_LOCALCONSTANT = 0x34, ADAC_ECMA_IMPORTSCOPE = 0x35,
	ADAC_ECMA_STATEMACHINEMETHOD = 0x36, ADAC_ECMA_CUSTOMDEBUGINFORMATION = 0x37,
	ADAC_ECMA_TABLE_COUNT = 0x40,
};

#define ADAC_ECMA_TOKEN(table, rid) (((uint32_t)(table) << 24) | ((uint32_t)(rid) & 0xffffffu))
#define ADAC_ECMA_TOKEN_TABLE(tok) ((uint32_t)(tok) >> 24)
#define ADAC_ECMA_TOKEN_RID(tok) ((uint32_t)(tok) & 0xffffffu)
#define ADAC_ECMA_TOKEN_STRING 0x70u   /* #US token table byte */

/* Name of a table ("TypeDef"), or "table 0x2d" style text for unknown numbers (static buffer-free:
 * unknown tables give "?"). */
const char *adac_ecma_table_name(unsigned table);

/* ---- Opening ---- */

/* The PE image at base (size bytes) in target memory: mapped (loaded, RVA = base + rva) or flat
 * (file layout, RVA translated through the section headers). Reads the headers, the CLI header
 * and the whole metadata blob; keeps t for method bodies (adac_ecma_method_body). */
int adac_ecma_open_image(struct adac_target *t, uint64_t base, uint64_t size, bool mapped, struct adac_ecma **out,
                         struct adac_error *err);
/* A metadata blob (starting at "BSJB") at addr in target memory, e.g. Module.DynamicMetadata. */
int adac_ecma_open_target_blob(struct adac_target *t, uint64_t addr, uint64_t size, struct adac_ecma **out,
                               struct adac_error *err);
/* A metadata blob in host memory (copied). Also opens standalone portable PDBs. */
int adac_ecma_open_blob(const void *data, size_t len, struct adac_ecma **out, struct adac_error *err);
void adac_ecma_free(struct adac_ecma *md);

/* The metadata of a runtime Module (Loader: PEAssembly -> PEImage -> layout, or DynamicMetadata),
 * parsed once and cached in the runtime (ADAC_SLOT_METADATA). NULL with err on failure. */
const struct adac_ecma *adac_ecma_for_module(struct adac_runtime *rt, uint64_t module, struct adac_error *err);

/* ---- Facts ---- */
uint32_t adac_ecma_rows(const struct adac_ecma *md, unsigned table);       /* 0 for absent tables */
uint32_t adac_ecma_row_size(const struct adac_ecma *md, unsigned table);   /* bytes per row */
uint64_t adac_ecma_sorted_mask(const struct adac_ecma *md);
uint64_t adac_ecma_valid_mask(const struct adac_ecma *md);                 /* tables present in #~ */
/* The 20-byte PDB id of the #Pdb stream (standalone debugging metadata: a portable PDB), NULL when
 * there is no #Pdb stream. Its TypeSystemTableRows size the indexes into type-system tables. */
const uint8_t *adac_ecma_pdb_id(const struct adac_ecma *md);
uint8_t adac_ecma_heap_sizes(const struct adac_ecma *md);                  /* #~ HeapSizes byte */
const char *adac_ecma_version(const struct adac_ecma *md);                 /* "v4.0.30319" */
bool adac_ecma_uncompressed(const struct adac_ecma *md);                   /* "#-" tables stream */
/* Heap sizes in bytes (0 when the stream is absent): 's' #Strings, 'b' #Blob, 'g' #GUID, 'u' #US. */
uint32_t adac_ecma_heap_size(const struct adac_ecma *md, char heap);
/* The heap's bytes (NULL when absent), its size in *len. */
const uint8_t *adac_ecma_heap_data(const struct adac_ecma *md, char heap, uint32_t *len);
/* The metadata blob itself (for checks and dumps). */
const uint8_t *adac_ecma_blob_data(const struct adac_ecma *md, size_t *len);
/* Image of the module, when opened from one. */
bool adac_ecma_has_image(const struct adac_ecma *md);
uint64_t adac_ecma_image_base(const struct adac_ecma *md);
bool adac_ecma_image_mapped(const struct adac_ecma *md);

/* ---- Heaps ---- */
int adac_ecma_string(const struct adac_ecma *md, uint32_t index, const char **s, struct adac_error *err);
int adac_ecma_blob(const struct adac_ecma *md, uint32_t index, const uint8_t **p, uint32_t *len,
                   struct adac_error *err);
int adac_ecma_guid(const struct adac_ecma *md, uint32_t index, uint8_t guid[16], struct adac_error *err);
/* #US entry: UTF-16LE bytes (the trailing flag byte excluded). */
int adac_ecma_user_string(const struct adac_ecma *md, uint32_t index, const uint8_t **utf16, uint32_t *nbytes,
                          struct adac_error *err);

/* ---- Raw cells ---- */
/* Column `col` (0-based, schema order) of row `rid` (1-based) of `table`: plain value, heap index,
 * table index, or a coded index already decoded into a token (0 when nil). */
int adac_ecma_cell(const struct adac_ecma *md, unsigned table, uint32_t rid, unsigned col, uint32_t *value,
                   struct adac_error *err);
unsigned adac_ecma_columns(unsigned table);

/* ---- Rows ---- */
struct adac_ecma_module_row { const char *name; uint32_t mvid; };
struct adac_ecma_typeref { uint32_t scope; const char *name; const char *ns; };
struct adac_ecma_typedef {
	uint32_t flags;
	const char *name;
	const char *ns;
	uint32_t extends;                 /* TypeDefOrRef token, 0 if none */
	uint32_t field_first, field_end;  /* logical list positions [first, end) (see adac_ecma_list_item) */
	uint32_t method_first, method_end;
};
struct adac_ecma_field { uint16_t flags; const char *name; const uint8_t *sig; uint32_t sig_len; };
struct adac_ecma_methoddef {
	uint32_t rva;
	uint16_t impl_flags;
	uint16_t flags;
	const char *name;
	const uint8_t *sig;
	uint32_t sig_len;
	uint32_t param_first, param_end;  /* logical list positions [first, end) */
};
struct adac_ecma_param { uint16_t flags; uint16_t sequence; const char *name; };
struct adac_ecma_memberref { uint32_t parent; const char *name; const uint8_t *sig; uint32_t sig_len; };
struct adac_ecma_constant { uint8_t type; uint32_t parent; const uint8_t *value; uint32_t value_len; };
struct adac_ecma_genericparam { uint16_t number; uint16_t flags; uint32_t owner; const char *name; };
struct adac_ecma_methodspec { uint32_t method; const uint8_t *inst; uint32_t inst_len; };
struct adac_ecma_assemblyref {
	uint16_t version[4];
	uint32_t flags;
	const char *name;
	const char *culture;
	const uint8_t *public_key;
	uint32_t public_key_len;
};

int adac_ecma_module(const struct adac_ecma *md, struct adac_ecma_module_row *out, struct adac_error *err);
int adac_ecma_typeref(const struct adac_ecma *md, uint32_t rid, struct adac_ecma_typeref *out, struct adac_error *err);
int adac_ecma_typedef(const struct adac_ecma *md, uint32_t rid, struct adac_ecma_typedef *out, struct adac_error *err);
int adac_ecma_field(const struct adac_ecma *md, uint32_t rid, struct adac_ecma_field *out, struct adac_error *err);
int adac_ecma_methoddef(const struct adac_ecma *md, uint32_t rid, struct adac_ecma_methoddef *out,
                        struct adac_error *err);
int adac_ecma_param(const struct adac_ecma *md, uint32_t rid, struct adac_ecma_param *out, struct adac_error *err);
int adac_ecma_memberref(const struct adac_ecma *md, uint32_t rid, struct adac_ecma_memberref *out,
                        struct adac_error *err);
int adac_ecma_constant(const struct adac_ecma *md, uint32_t rid, struct adac_ecma_constant *out,
                       struct adac_error *err);
int adac_ecma_genericparam(const struct adac_ecma *md, uint32_t rid, struct adac_ecma_genericparam *out,
                           struct adac_error *err);
int adac_ecma_typespec(const struct adac_ecma *md, uint32_t rid, const uint8_t **sig, uint32_t *len,
                       struct adac_error *err);
int adac_ecma_methodspec(const struct adac_ecma *md, uint32_t rid, struct adac_ecma_methodspec *out,
                         struct adac_error *err);
int adac_ecma_standalonesig(const struct adac_ecma *md, uint32_t rid, const uint8_t **sig, uint32_t *len,
                            struct adac_error *err);
int adac_ecma_assemblyref(const struct adac_ecma *md, uint32_t rid, struct adac_ecma_assemblyref *out,
                          struct adac_error *err);
/* The Assembly row's name ("System.Private.CoreLib"); ADAC_E_NOT_FOUND when there is none. */
int adac_ecma_assembly_name(const struct adac_ecma *md, const char **name, struct adac_error *err);

/* Row id behind a logical position of a Field, MethodDef or Param list (through FieldPtr,
 * MethodPtr or ParamPtr in uncompressed metadata). */
int adac_ecma_list_item(const struct adac_ecma *md, unsigned table, uint32_t pos, uint32_t *rid,
                        struct adac_error *err);

/* ---- Lookups ---- */
/* Calls visit(ctx, rid) for every row of `table` whose column `col` holds `value` (a coded index
 * compared as the token adac_ecma_cell gives), in row order: a binary search when the table is
 * marked sorted, else a scan. A nonzero return from visit stops the walk and is returned; -1 with
 * err for a table or column that does not exist. */
int adac_ecma_each_row(const struct adac_ecma *md, unsigned table, unsigned col, uint32_t value,
                       int (*visit)(void *ctx, uint32_t rid), void *ctx, struct adac_error *err);
/* Enclosing TypeDef of a nested type (NestedClass), 0 when the type is not nested. */
int adac_ecma_enclosing_type(const struct adac_ecma *md, uint32_t typedef_rid, uint32_t *enclosing_rid,
                             struct adac_error *err);
/* TypeDef owning a MethodDef / Field (the TypeDef whose list contains it). */
int adac_ecma_method_owner(const struct adac_ecma *md, uint32_t methoddef_rid, uint32_t *typedef_rid,
                           struct adac_error *err);
int adac_ecma_field_owner(const struct adac_ecma *md, uint32_t field_rid, uint32_t *typedef_rid,
                          struct adac_error *err);
/* GenericParam rows of a TypeDef or MethodDef token: count, and the row of parameter `number`
 * (ADAC_E_NOT_FOUND when absent). */
int adac_ecma_generic_param_count(const struct adac_ecma *md, uint32_t owner_token, uint32_t *count,
                                  struct adac_error *err);
int adac_ecma_generic_param(const struct adac_ecma *md, uint32_t owner_token, uint32_t number, uint32_t *rid,
                            struct adac_error *err);
/* Param row of a MethodDef for sequence number seq (0 = return value); ADAC_E_NOT_FOUND if none. */
int adac_ecma_param_of(const struct adac_ecma *md, uint32_t methoddef_rid, uint16_t seq, uint32_t *rid,
                       struct adac_error *err);
/* Constant row whose parent is a Field, Param or Property token; ADAC_E_NOT_FOUND if none. */
int adac_ecma_constant_of(const struct adac_ecma *md, uint32_t parent_token, uint32_t *rid, struct adac_error *err);
/* Top-level TypeDef by namespace and name (enclosing_rid 0), or nested TypeDef by name inside
 * enclosing_rid. ADAC_E_NOT_FOUND when absent. */
int adac_ecma_find_typedef(const struct adac_ecma *md, const char *ns, const char *name, uint32_t enclosing_rid,
                           uint32_t *rid, struct adac_error *err);
/* Field / MethodDef of a TypeDef by name (the first match). ADAC_E_NOT_FOUND when absent. */
int adac_ecma_find_field(const struct adac_ecma *md, uint32_t typedef_rid, const char *name, uint32_t *rid,
                         struct adac_error *err);
int adac_ecma_find_method(const struct adac_ecma *md, uint32_t typedef_rid, const char *name, uint32_t *rid,
                          struct adac_error *err);

/* ---- Image ---- */
/* Target address of `len` bytes at an RVA of the image (mapped: base + rva; flat: through the
 * section headers). ADAC_E_UNSUPPORTED without an image, ADAC_E_CORRUPT when outside it. */
int adac_ecma_rva_to_addr(const struct adac_ecma *md, uint32_t rva, uint32_t len, uint64_t *addr,
                          struct adac_error *err);

/* IL method body header (II.25.4) at an RVA, read from the image in target memory. */
struct adac_ecma_method_body {
	uint64_t addr;            /* header address */
	uint64_t code_addr;       /* first IL byte */
	uint32_t code_size;
	uint32_t local_sig_token; /* StandAloneSig token, 0 if none */
	uint16_t max_stack;
	uint16_t flags;           /* fat header flags (0x10 InitLocals, 0x08 MoreSects); 0 for tiny */
	uint8_t header_size;      /* 1 (tiny) or 12 (fat) */
	bool fat;
};
int adac_ecma_method_body(const struct adac_ecma *md, uint32_t rva, struct adac_ecma_method_body *out,
                          struct adac_error *err);

/* ECMA-335 compressed unsigned integer at blob[*pos] (II.23.2); advances *pos. -1 when malformed. */
int adac_ecma_uncompress(const uint8_t *blob, size_t len, size_t *pos, uint32_t *out);

#endif
