/* descriptor.h - the runtime's contract descriptor (DotNetRuntimeContractDescriptor): types, field
 * offsets, globals and contract versions, parsed from its JSON with jansson. */
#ifndef ADAC_DESCRIPTOR_H
#define ADAC_DESCRIPTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct adac_target;
struct adac_descriptor;

/* One descriptor blob as found in the target (the main one first, then sub-descriptors). */
struct adac_desc_blob {
	char name[64];          /* "" for the main descriptor, else the subDescriptors key */
	uint64_t addr;          /* address of the DotNetRuntimeContractDescriptor struct */
	uint32_t flags;
	uint32_t json_size;
	uint32_t pointer_count;
};

struct adac_descriptor *adac_desc_new(void);
void adac_desc_free(struct adac_descriptor *d);

/* Parses one descriptor's JSON and merges it into d. Indirect globals resolve through pdata.
 * Sub-descriptors are recorded (adac_desc_pending_sub) for the loader to read. A name defined
 * twice (within the JSON or across merged descriptors) is ADAC_E_CORRUPT. */
int adac_desc_parse_json(struct adac_descriptor *d, const char *json, size_t len, const uint64_t *pdata,
                         size_t npdata, struct adac_error *err);

/* Reads the descriptor struct at addr from the target, validates it, parses its JSON and follows
 * its sub-descriptors recursively. Sets the target's pointer size from the descriptor flags. */
int adac_desc_load(struct adac_target *t, uint64_t addr, struct adac_descriptor *d, struct adac_error *err);

/* Whether the target still holds the descriptor d was loaded from: the same bytes at the addresses
 * the load read (the structs, their JSON and pointer data, the sub-descriptors' pointers, NULL ones
 * too). False when any differs or cannot be read. */
bool adac_desc_unchanged(struct adac_target *t, const struct adac_descriptor *d);

/* Descriptor facts. */
const char *adac_desc_version(const struct adac_descriptor *d);  /* "2", or the string given */
const char *adac_desc_baseline(const struct adac_descriptor *d); /* "" if absent */
unsigned adac_desc_ptr_size(const struct adac_descriptor *d);
size_t adac_desc_blob_count(const struct adac_descriptor *d);
const struct adac_desc_blob *adac_desc_blob(const struct adac_descriptor *d, size_t i);

/* Types and fields. Failures name the missing type or field. */
bool adac_desc_has_type(const struct adac_descriptor *d, const char *type);
bool adac_desc_has_field(const struct adac_descriptor *d, const char *type, const char *field);
int adac_desc_type_size(const struct adac_descriptor *d, const char *type, uint32_t *size, struct adac_error *err);
int adac_desc_field(const struct adac_descriptor *d, const char *type, const char *field, uint32_t *offset,
                    struct adac_error *err);
size_t adac_desc_type_count(const struct adac_descriptor *d);

/* Globals: numeric value (direct, hex string or resolved indirect) and/or string value. */
bool adac_desc_has_global(const struct adac_descriptor *d, const char *name);
int adac_desc_global(const struct adac_descriptor *d, const char *name, uint64_t *value, struct adac_error *err);
const char *adac_desc_global_string(const struct adac_descriptor *d, const char *name); /* NULL if none */
size_t adac_desc_global_count(const struct adac_descriptor *d);

/* Contracts: version tag as a string ("c1", or "2" for integer versions); NULL when absent. */
const char *adac_desc_contract(const struct adac_descriptor *d, const char *name);
size_t adac_desc_contract_count(const struct adac_descriptor *d);
/* i-th contract in name order. */
const char *adac_desc_contract_at(const struct adac_descriptor *d, size_t i, const char **version);

/* Listing, for printers. The names of the types, globals or contracts in name order: an array
 * the caller frees (not the names), NULL when out of memory. */
enum adac_desc_kind { ADAC_DESC_TYPES, ADAC_DESC_GLOBALS, ADAC_DESC_CONTRACTS };
const char **adac_desc_names(const struct adac_descriptor *d, enum adac_desc_kind kind, size_t *n);

/* The fields of a type (not its size) in offset order, each offset as the JSON gives it (0 when it
 * is not a number): an array the caller frees, NULL when out of memory. */
struct adac_desc_field {
	const char *name;
	uint64_t offset;
};
struct adac_desc_field *adac_desc_fields(const struct adac_descriptor *d, const char *type, size_t *n);

/* The sub-descriptors the last parse found: name, and the address of the pointer to each. */
size_t adac_desc_pending_count(const struct adac_descriptor *d);
const char *adac_desc_pending_sub(const struct adac_descriptor *d, size_t i, uint64_t *addr);

/* Table-driven layout resolution: each contract file lists the fields it reads once, with their
 * width, and resolves them here; required fields that are missing fail with ADAC_E_LAYOUT naming
 * Type.Field, optional ones leave has[i] = 0. Offsets are validated against the type size. */
struct adac_field_spec {
	const char *type;
	const char *field;   /* NULL: the entry asks for the type's size ("!") */
	uint8_t width;       /* bytes read at the offset (0: not checked) */
	bool required;
};
int adac_desc_resolve(const struct adac_descriptor *d, const struct adac_field_spec *specs, size_t n,
                      uint32_t *values, uint8_t *has, struct adac_error *err);

/* The same for a table whose entries name their type by index into type_names (an X-macro list of
 * types) and may read a pointer: width ADAC_WIDTH_PTR stands for ptr_size bytes. The widths used go
 * to widths[i] when widths is not NULL. */
#define ADAC_WIDTH_PTR 0xFF
struct adac_field_def {
	uint8_t type;        /* index into type_names */
	const char *field;
	uint8_t width;       /* or ADAC_WIDTH_PTR */
	bool required;
};
int adac_desc_resolve_defs(const struct adac_descriptor *d, const struct adac_field_def *defs, size_t n,
                           const char *const *type_names, unsigned ptr_size, uint32_t *values, uint8_t *has,
                           uint8_t *widths, struct adac_error *err);

#endif
