/* pdb.h - portable PDB reader: source file and line of an IL offset, local variable names, the await
 * points of classic async methods, through the ECMA-335 metadata reader (ecma_metadata.h). Which PDB
 * belongs to an assembly is pdb_find.h's job. */
#ifndef ADAC_PDB_H
#define ADAC_PDB_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/limits.h"

struct adac_runtime;
struct adac_symbols;

/* StartLine of a hidden sequence point. */
#define ADAC_PDB_HIDDEN_LINE 0xfeefeeu

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

/* The IL offsets of the await points (yield offsets) of a classic async method, from the
 * AsyncMethodSteppingInformation of its state machine's MoveNext method (`movenext_token`), in the
 * compiler's await order: a state machine suspended in state N (<>1__state) is at yield_offsets[N].
 * *n is the number of await points the method has; the first min(*n, max) are stored.
 * ADAC_E_NOT_FOUND when there is no PDB or the method has no such information. */
int adac_pdb_async_yield_offsets(struct adac_runtime *rt, const char *assembly_path, uint32_t movenext_token,
                                 uint32_t *yield_offsets, uint32_t max, uint32_t *n, struct adac_error *err);

/* ---- The reader itself, without a runtime (tests, fuzzing, tools) ---- */

struct adac_pdb;

/* Finds (pdb_find.h: beside it, embedded, then through symbols, which may be NULL) and opens the PDB
 * of an assembly file. A PDB whose id differs from the assembly's CodeView entry is not used; the
 * ADAC_E_NOT_FOUND message then says why. */
struct adac_pdb *adac_pdb_open_for_assembly(const char *assembly_path, struct adac_symbols *symbols,
                                            struct adac_error *err);
/* Opens a PDB image already in memory (copied). */
struct adac_pdb *adac_pdb_open_image(const uint8_t *data, size_t len, const char *origin, struct adac_error *err);
void adac_pdb_close(struct adac_pdb *pdb);

/* Where the PDB came from: "/path/x.pdb" or "embedded in /path/x.dll". */
const char *adac_pdb_origin(const struct adac_pdb *pdb);
/* The 20-byte PDB id of the #Pdb stream (GUID then stamp). */
const uint8_t *adac_pdb_id(const struct adac_pdb *pdb);
uint32_t adac_pdb_method_count(const struct adac_pdb *pdb);
uint32_t adac_pdb_document_count(const struct adac_pdb *pdb);
/* Document name (1-based row), joined from its parts; NULL with err on corrupt data. */
const char *adac_pdb_document_name(struct adac_pdb *pdb, uint32_t doc, struct adac_error *err);

struct adac_seq_point {
	uint32_t il_offset;
	uint32_t document;      /* Document row */
	uint32_t start_line, start_column, end_line, end_column; /* hidden: start_line ADAC_PDB_HIDDEN_LINE, 0s */
};

/* The sequence points of method `token` (0x06xxxxxx), in blob order. *points is malloc'd (caller
 * frees); *n may be 0 (no sequence points). */
int adac_pdb_sequence_points(struct adac_pdb *pdb, uint32_t token, struct adac_seq_point **points, size_t *n,
                             struct adac_error *err);

int adac_pdb_find_line(struct adac_pdb *pdb, uint32_t token, uint32_t il_offset, struct adac_source_line *out,
                       struct adac_error *err);

/* One await point of a classic async method (AsyncMethodSteppingInformation). */
struct adac_pdb_async_step {
	uint32_t yield_offset;     /* IL offset at which MoveNext returns, suspended at this await */
	uint32_t resume_offset;    /* IL offset at which it resumes */
	uint32_t resume_method;    /* MethodDef token of the method that resumes (MoveNext itself) */
};

#define ADAC_PDB_NO_CATCH_HANDLER UINT32_MAX

/* The AsyncMethodSteppingInformation custom debug information of MoveNext method `token`: the IL
 * offset of the compiler's catch handler (ADAC_PDB_NO_CATCH_HANDLER when none) and the await points
 * in the compiler's await order (state N is the N-th). *steps is malloc'd (caller frees).
 * ADAC_E_NOT_FOUND when the method has none (it is not the MoveNext of a classic async method). */
int adac_pdb_async_steps(struct adac_pdb *pdb, uint32_t token, uint32_t *catch_handler, struct adac_pdb_async_step **steps,
                         size_t *n, struct adac_error *err);

/* Local scopes of method `token`, outermost first, with their variables. */
typedef int (*adac_pdb_local_cb)(void *ctx, uint32_t scope_start, uint32_t scope_end, uint16_t index,
                                 uint16_t attributes, const char *name);
int adac_pdb_locals(struct adac_pdb *pdb, uint32_t token, adac_pdb_local_cb cb, void *ctx, struct adac_error *err);
/* The innermost scope's name for slot `index` at il_offset; NULL if none. */
const char *adac_pdb_local_name_at(struct adac_pdb *pdb, uint32_t token, uint32_t index, uint32_t il_offset,
                                   struct adac_error *err);

#endif
