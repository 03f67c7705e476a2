/* symfile.h - symbol files for code that no file on disk describes (JIT-compiled and ReadyToRun
 * .NET methods): a small in-memory model of methods (code range, line rows, parameters and locals
 * with their locations) and of their types, written as an ELF file with a symbol table and DWARF
 * (version 4 or 5) whose addresses are the code's own, so that a debugger loads it with slide 0.
 *
 * This layer knows ELF and DWARF and nothing of the runtime; view/managed_symbols.c fills the model from a
 * .NET process. The model is x86-64 only: registers are the psABI's DWARF numbers
 * (ADAC_SYM_REG_*), addresses 8 bytes.
 *
 * What the file holds:
 *   - one section (SHT_NOBITS, executable) and one PT_LOAD per cluster of code: methods closer
 *     than ADAC_SYMFILE_CLUSTER_GAP bytes share one, so the file claims no address range far
 *     from the code it describes (other modules' code stays theirs);
 *   - .symtab: one STT_FUNC per method, named by its display name;
 *   - DWARF: one compile unit per unit (a .NET assembly), with its line program, the types its
 *     variables use and one DW_TAG_subprogram per method; variables whose location changes
 *     within the method get a location list;
 *   - .debug_frame: a frame description per part of a method's code that has call-frame rows. */
#ifndef ADAC_SYMFILE_H
#define ADAC_SYMFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* x86-64 DWARF register numbers (System V psABI, figure 3.36). */
enum {
	ADAC_SYM_REG_RAX = 0, ADAC_SYM_REG_RDX = 1, ADAC_SYM_REG_RCX = 2, ADAC_SYM_REG_RBX = 3,
	ADAC_SYM_REG_RSI = 4, ADAC_SYM_REG_RDI = 5, ADAC_SYM_REG_RBP = 6, ADAC_SYM_REG_RSP = 7,
	ADAC_SYM_REG_R8 = 8,   /* r8..r15 are 8..15 */
	ADAC_SYM_REG_RA = 16,  /* the return address column */
	ADAC_SYM_REG_XMM0 = 17, /* xmm0..xmm15 are 17..32 */
};

/* Methods closer than this share one section. */
#define ADAC_SYMFILE_CLUSTER_GAP 4096u

/* ---- types ---- */

enum adac_sym_encoding {
	ADAC_SYM_ENC_SIGNED,
	ADAC_SYM_ENC_UNSIGNED,
	ADAC_SYM_ENC_FLOAT,
	ADAC_SYM_ENC_BOOLEAN,
	ADAC_SYM_ENC_UTF,       /* a character (UTF-16 code unit for 2 bytes) */
};

enum adac_sym_type_kind {
	ADAC_SYM_BASE,       /* name, size, encoding */
	ADAC_SYM_POINTER,    /* to target (0: void *) */
	ADAC_SYM_STRUCT,     /* name, size, members; `declaration` when only named */
	ADAC_SYM_ARRAY,      /* of target: `count` elements, or a count read at run time (below) */
	ADAC_SYM_ENUM,       /* name, underlying base type target, enumerators */
	ADAC_SYM_TYPEDEF,    /* name for target */
};

struct adac_sym_member {
	const char *name;
	uint32_t type;
	uint32_t offset;
};

struct adac_sym_enumerator {
	const char *name;
	int64_t value;
};

/* Type ids are 1-based indexes into types[]; 0 is "no type" (void). */
struct adac_sym_type {
	enum adac_sym_type_kind kind;
	const char *name;           /* BASE, STRUCT, ENUM, TYPEDEF */
	uint32_t size;              /* bytes (BASE, STRUCT, ENUM) */
	enum adac_sym_encoding encoding;
	uint32_t target;            /* POINTER, ARRAY element, ENUM underlying type, TYPEDEF */
	bool declaration;           /* STRUCT known by name only (no size, no members) */
	/* ARRAY: a fixed count, or (dynamic) a count of count_size bytes (4 or 8) read at the array's
	 * own address + count_offset (a negative offset: the length field in front of the elements of
	 * a .NET string or array), described with DW_OP_push_object_address. */
	uint64_t count;
	bool dynamic;
	int32_t count_offset;
	uint8_t count_size;
	uint32_t nmembers;
	struct adac_sym_member *members;
	uint32_t nenumerators;
	struct adac_sym_enumerator *enumerators;
};

/* ---- methods ---- */

enum adac_sym_loc_kind {
	ADAC_SYM_LOC_REG,      /* the value is in register `reg` */
	ADAC_SYM_LOC_MEM,      /* in memory at reg + offset */
	ADAC_SYM_LOC_MEM_REF,  /* in memory at the address stored at reg + offset (a by-reference slot) */
};

/* Where a variable is over the code offsets [start, end) of its method. */
struct adac_sym_loc {
	uint32_t start, end;
	enum adac_sym_loc_kind kind;
	uint16_t reg;
	int32_t offset;
};

struct adac_sym_var {
	const char *name;
	uint32_t type;
	bool is_param;
	bool artificial;            /* compiler-provided (`this`) */
	uint32_t nlocs;             /* 0: the variable exists but its location is not known */
	const struct adac_sym_loc *locs;
};

/* The source position of the code from `offset` to the next row's offset. line 0: no source. */
struct adac_sym_row {
	uint32_t offset;
	uint32_t file;              /* file id (adac_symfile_file) */
	uint32_t line;
	uint32_t column;
};

/* Call-frame information (.debug_frame), for debuggers that unwind with it: from `offset` of a
 * part of the code on, the caller's stack pointer (the CFA) is cfa_reg + cfa_offset and each saved
 * register is in memory at CFA + at (a multiple of 8). The return address is at CFA - 8. */
#define ADAC_SYM_MAX_SAVED 32       /* x86-64's 16 integer and 16 vector registers */
struct adac_sym_saved {
	uint16_t reg;
	int32_t at;
};
struct adac_sym_cfa_row {
	uint32_t offset;            /* from the start of the part */
	uint16_t cfa_reg;
	int32_t cfa_offset;         /* >= 0 */
	uint32_t nsaved;
	struct adac_sym_saved saved[ADAC_SYM_MAX_SAVED];
};
/* A part of a method's code with frame rules of its own: the body, a funclet. */
struct adac_sym_frame {
	uint32_t start, end;        /* offsets from the method's start */
	uint32_t nrows;             /* ascending offsets below end - start; the last holds to the end */
	const struct adac_sym_cfa_row *rows;
};

struct adac_sym_method {
	const char *name;           /* display name: the symbol and DW_AT_name */
	uint32_t unit;              /* unit id (adac_symfile_unit) */
	uint64_t start;
	uint64_t size;
	uint32_t decl_file, decl_line; /* 0: unknown */
	uint32_t nrows;             /* ascending offsets, all below size */
	const struct adac_sym_row *rows;
	uint32_t nvars;             /* parameters first, then locals */
	const struct adac_sym_var *vars;
	uint32_t nframes;           /* call-frame information (0: none) */
	const struct adac_sym_frame *frames;
};

/* ---- the model ---- */

/* The model itself: filled through the functions below, read by the writers of this folder. */
struct adac_sym_unit {
	char *name;
	char *comp_dir;
	uint32_t *types;                    /* written in the unit even when no variable uses them */
	uint32_t ntypes, types_cap;
};

/* Strings to ids (source files). */
struct adac_sym_index {
	uint64_t *keys;    /* hash of the key, 0: empty */
	uint32_t *ids;
	size_t cap;
};

struct adac_symfile {
	struct adac_sym_unit *units;
	uint32_t nunits, units_cap;
	char **files;                       /* files[id - 1] */
	uint32_t nfiles, files_cap;
	struct adac_sym_index file_index;
	struct adac_sym_type *types;        /* types[id - 1] */
	uint32_t ntypes, types_cap;
	uint32_t *pointer_to;               /* pointer_to[id]: the pointer type to id (index 0: void *) */
	uint32_t pointer_cap;
	struct adac_sym_method *methods;    /* arrays and strings inside are owned */
	size_t nmethods, methods_cap;
};


struct adac_symfile *adac_symfile_new(struct adac_error *err);
void adac_symfile_free(struct adac_symfile *sf);

/* A compile unit (a .NET assembly: name "nested.dll", comp_dir its directory; either may be "").
 * Returns its id (>= 1), 0 with err on failure. Units are looked up by name: the same name gives
 * the same id. */
uint32_t adac_symfile_unit(struct adac_symfile *sf, const char *name, const char *comp_dir, struct adac_error *err);

/* Writes type `type` in unit `unit` whatever uses it (a type a debugger is to find by name, such
 * as those of values saved outside any frame). */
int adac_symfile_unit_type(struct adac_symfile *sf, uint32_t unit, uint32_t type, struct adac_error *err);

/* A source file by path (the same path gives the same id, >= 1), 0 with err. */
uint32_t adac_symfile_file(struct adac_symfile *sf, const char *path, struct adac_error *err);

/* Types: each returns the new type's id, or 0 with err. Strings are copied. */
uint32_t adac_symfile_base_type(struct adac_symfile *sf, const char *name, uint32_t size, enum adac_sym_encoding enc,
                                struct adac_error *err);
/* The pointer type to `target` (one per target: asking again gives the same id). */
uint32_t adac_symfile_pointer_type(struct adac_symfile *sf, uint32_t target, struct adac_error *err);
/* A struct, complete (declaration false: members follow through adac_symfile_add_member) or only
 * declared by name (a type the file does not lay out). */
uint32_t adac_symfile_struct_type(struct adac_symfile *sf, const char *name, uint32_t size, bool declaration,
                                  struct adac_error *err);
/* Turns a declared struct into a complete one of `size` bytes (members follow). */
int adac_symfile_define_struct(struct adac_symfile *sf, uint32_t struct_type, uint32_t size, struct adac_error *err);
int adac_symfile_add_member(struct adac_symfile *sf, uint32_t struct_type, const char *name, uint32_t type,
                            uint32_t offset, struct adac_error *err);
uint32_t adac_symfile_typedef(struct adac_symfile *sf, const char *name, uint32_t target, struct adac_error *err);
uint32_t adac_symfile_array_type(struct adac_symfile *sf, uint32_t element, uint64_t count, struct adac_error *err);
uint32_t adac_symfile_dynamic_array_type(struct adac_symfile *sf, uint32_t element, int32_t count_offset,
                                         uint8_t count_size, struct adac_error *err);
/* An enum over a base type (or a typedef of one). */
uint32_t adac_symfile_enum_type(struct adac_symfile *sf, const char *name, uint32_t underlying, struct adac_error *err);
int adac_symfile_add_enumerator(struct adac_symfile *sf, uint32_t enum_type, const char *name, int64_t value,
                                struct adac_error *err);

/* The type with this id, NULL when there is none. */
const struct adac_sym_type *adac_symfile_type(const struct adac_symfile *sf, uint32_t id);

/* Adds a method (everything copied). ADAC_E_BAD_ARG for rows or locations outside the method, an
 * unknown unit, file or type id; ADAC_E_LIMIT past ADAC_MAX_SYM_METHODS. */
int adac_symfile_add_method(struct adac_symfile *sf, const struct adac_sym_method *m, struct adac_error *err);

size_t adac_symfile_method_count(const struct adac_symfile *sf);
size_t adac_symfile_type_count(const struct adac_symfile *sf);

/* ---- writing ---- */

struct adac_symfile_opts {
	unsigned dwarf_version;     /* 4 or 5 */
	uint16_t language;          /* DW_AT_language of every unit (a DW_LANG_* code) */
	bool dynamic_counts;        /* run-time array counts as DWARF expressions (gdb evaluates them;
	                             * LLDB 22 does not, and takes the expression's size for a count):
	                             * false writes those arrays without a count (flexible) */
	const char *producer;       /* DW_AT_producer, NULL: "asyncdac" */
};

/* The whole ELF image in memory (*image malloc'd, caller frees). ADAC_E_BAD_ARG when methods
 * overlap; ADAC_E_LIMIT past ADAC_MAX_SYMFILE_BYTES or ADAC_MAX_SYM_SECTIONS. */
int adac_symfile_image(const struct adac_symfile *sf, const struct adac_symfile_opts *o, uint8_t **image, size_t *len,
                       struct adac_error *err);

/* Writes the image to path (through a temporary file renamed over it, so a reader never sees a
 * half-written file). *len (may be NULL) receives its size. ADAC_E_IO naming the path. */
int adac_symfile_write(const struct adac_symfile *sf, const struct adac_symfile_opts *o, const char *path, size_t *len,
                       struct adac_error *err);

#endif
