/* dwarf_write.c - the DWARF sections of a symbol file (version 4 or 5): per unit a compile unit with
 * its code ranges, the types its variables use, one subprogram per method with its parameters and
 * locals, and a line program. Forms are chosen to need no other section than the ones written
 * here: strings by DW_FORM_strp, type references CU-relative (ref4), addresses absolute (so a
 * unit's base address is 0), location and range lists by section offset. */
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "symfile/dwarf_write.h"

/* ---- abbreviations: one fixed table, shared by every unit ---- */

enum {
	AB_NONE, AB_CU, AB_SUB, AB_SUB_NODECL, AB_SUB_LEAF, AB_SUB_LEAF_NODECL,
	AB_PARAM_EXPR, AB_PARAM_LIST, AB_PARAM_NOLOC,
	AB_THIS_EXPR, AB_THIS_LIST, AB_THIS_NOLOC,
	AB_VAR_EXPR, AB_VAR_LIST, AB_VAR_NOLOC,
	AB_BASE, AB_PTR, AB_PTR_VOID, AB_STRUCT, AB_STRUCT_LEAF, AB_STRUCT_DECL, AB_MEMBER,
	AB_ARRAY, AB_SUBRANGE, AB_SUBRANGE_DYN, AB_SUBRANGE_FLEX, AB_ENUM, AB_ENUM_LEAF, AB_ENUMERATOR, AB_TYPEDEF, AB_TYPEDEF_VOID,
	AB_COUNT
};

struct abbrev {
	uint16_t tag;
	bool children;
	uint16_t attr[8][2];   /* {DW_AT_*, DW_FORM_*}, ended by {0, 0} */
};

#define NAME {DW_AT_name, DW_FORM_strp}
#define TYPE {DW_AT_type, DW_FORM_ref4}
#define VAR(tag, ...) {tag, false, {NAME, TYPE, __VA_ARGS__}}
#define LOC_EXPR {DW_AT_location, DW_FORM_exprloc}
#define LOC_LIST {DW_AT_location, DW_FORM_sec_offset}
#define ARTIFICIAL {DW_AT_artificial, DW_FORM_flag_present}

static const struct abbrev abbrevs[AB_COUNT] = {
	[AB_CU] = {DW_TAG_compile_unit, true,
	           {{DW_AT_producer, DW_FORM_strp}, {DW_AT_language, DW_FORM_data2}, NAME, {DW_AT_comp_dir, DW_FORM_strp},
	            {DW_AT_low_pc, DW_FORM_addr}, {DW_AT_ranges, DW_FORM_sec_offset}, {DW_AT_stmt_list, DW_FORM_sec_offset}}},
	[AB_SUB] = {DW_TAG_subprogram, true,
	            {NAME, {DW_AT_low_pc, DW_FORM_addr}, {DW_AT_high_pc, DW_FORM_data8}, {DW_AT_decl_file, DW_FORM_udata},
	             {DW_AT_decl_line, DW_FORM_udata}, {DW_AT_external, DW_FORM_flag_present}}},
	[AB_SUB_NODECL] = {DW_TAG_subprogram, true,
	                   {NAME, {DW_AT_low_pc, DW_FORM_addr}, {DW_AT_high_pc, DW_FORM_data8},
	                    {DW_AT_external, DW_FORM_flag_present}}},
	[AB_SUB_LEAF] = {DW_TAG_subprogram, false,
	                 {NAME, {DW_AT_low_pc, DW_FORM_addr}, {DW_AT_high_pc, DW_FORM_data8}, {DW_AT_decl_file, DW_FORM_udata},
	                  {DW_AT_decl_line, DW_FORM_udata}, {DW_AT_external, DW_FORM_flag_present}}},
	[AB_SUB_LEAF_NODECL] = {DW_TAG_subprogram, false,
	                        {NAME, {DW_AT_low_pc, DW_FORM_addr}, {DW_AT_high_pc, DW_FORM_data8},
	                         {DW_AT_external, DW_FORM_flag_present}}},
	[AB_PARAM_EXPR] = VAR(DW_TAG_formal_parameter, LOC_EXPR),
	[AB_PARAM_LIST] = VAR(DW_TAG_formal_parameter, LOC_LIST),
	[AB_PARAM_NOLOC] = VAR(DW_TAG_formal_parameter, {0, 0}),
	[AB_THIS_EXPR] = VAR(DW_TAG_formal_parameter, ARTIFICIAL, LOC_EXPR),
	[AB_THIS_LIST] = VAR(DW_TAG_formal_parameter, ARTIFICIAL, LOC_LIST),
	[AB_THIS_NOLOC] = VAR(DW_TAG_formal_parameter, ARTIFICIAL),
	[AB_VAR_EXPR] = VAR(DW_TAG_variable, LOC_EXPR),
	[AB_VAR_LIST] = VAR(DW_TAG_variable, LOC_LIST),
	[AB_VAR_NOLOC] = VAR(DW_TAG_variable, {0, 0}),
	[AB_BASE] = {DW_TAG_base_type, false, {NAME, {DW_AT_byte_size, DW_FORM_data1}, {DW_AT_encoding, DW_FORM_data1}}},
	[AB_PTR] = {DW_TAG_pointer_type, false, {{DW_AT_byte_size, DW_FORM_data1}, TYPE}},
	[AB_PTR_VOID] = {DW_TAG_pointer_type, false, {{DW_AT_byte_size, DW_FORM_data1}}},
	[AB_STRUCT] = {DW_TAG_structure_type, true, {NAME, {DW_AT_byte_size, DW_FORM_udata}}},
	[AB_STRUCT_LEAF] = {DW_TAG_structure_type, false, {NAME, {DW_AT_byte_size, DW_FORM_udata}}},
	[AB_STRUCT_DECL] = {DW_TAG_structure_type, false, {NAME, {DW_AT_declaration, DW_FORM_flag_present}}},
	[AB_MEMBER] = {DW_TAG_member, false, {NAME, TYPE, {DW_AT_data_member_location, DW_FORM_udata}}},
	[AB_ARRAY] = {DW_TAG_array_type, true, {TYPE}},
	[AB_SUBRANGE] = {DW_TAG_subrange_type, false, {{DW_AT_count, DW_FORM_udata}}},
	[AB_SUBRANGE_DYN] = {DW_TAG_subrange_type, false, {{DW_AT_count, DW_FORM_exprloc}}},
	[AB_SUBRANGE_FLEX] = {DW_TAG_subrange_type, false, {{0, 0}}},
	[AB_ENUM] = {DW_TAG_enumeration_type, true, {NAME, {DW_AT_byte_size, DW_FORM_data1}, TYPE}},
	[AB_ENUM_LEAF] = {DW_TAG_enumeration_type, false, {NAME, {DW_AT_byte_size, DW_FORM_data1}, TYPE}},
	[AB_ENUMERATOR] = {DW_TAG_enumerator, false, {NAME, {DW_AT_const_value, DW_FORM_sdata}}},
	[AB_TYPEDEF] = {DW_TAG_typedef, false, {NAME, TYPE}},
	[AB_TYPEDEF_VOID] = {DW_TAG_typedef, false, {NAME}},
};

static void write_abbrevs(struct adac_bytebuf *b)
{
	for (unsigned code = 1; code < AB_COUNT; code++) {
		const struct abbrev *a = &abbrevs[code];
		adac_bytebuf_uleb(b, code);
		adac_bytebuf_uleb(b, a->tag);
		adac_bytebuf_u8(b, a->children ? DW_CHILDREN_yes : DW_CHILDREN_no);
		for (unsigned i = 0; i < 8 && a->attr[i][0]; i++) {
			adac_bytebuf_uleb(b, a->attr[i][0]);
			adac_bytebuf_uleb(b, a->attr[i][1]);
		}
		adac_bytebuf_u16(b, 0);
	}
	adac_bytebuf_u8(b, 0);
}

/* ---- the string section, each string once ---- */

struct strpool {
	struct adac_bytebuf *sec;
	uint64_t *keys;      /* hash, 0 empty */
	uint32_t *offs;
	size_t cap, count;
	bool failed;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h ? h : 1;
}

static bool strpool_grow(struct strpool *p)
{
	size_t cap = p->cap ? p->cap * 2 : 1024;
	uint64_t *keys = calloc(cap, sizeof *keys);
	uint32_t *offs = calloc(cap, sizeof *offs);
	if (!keys || !offs) {
		free(keys);
		free(offs);
		return false;
	}
	for (size_t i = 0; i < p->cap; i++) {
		if (!p->keys[i])
			continue;
		size_t j = p->keys[i] & (cap - 1);
		while (keys[j])
			j = (j + 1) & (cap - 1);
		keys[j] = p->keys[i];
		offs[j] = p->offs[i];
	}
	free(p->keys);
	free(p->offs);
	p->keys = keys;
	p->offs = offs;
	p->cap = cap;
	return true;
}

/* Offset of s in the string section, adding it the first time. */
static uint32_t strpool_get(struct strpool *p, const char *s)
{
	if (p->failed)
		return 0;
	if ((p->count + 1) * 2 > p->cap && !strpool_grow(p)) {
		p->failed = true;
		return 0;
	}
	uint64_t h = str_hash(s);
	size_t j = h & (p->cap - 1);
	for (; p->keys[j]; j = (j + 1) & (p->cap - 1))
		if (p->keys[j] == h && strcmp((const char *)p->sec->p + p->offs[j], s) == 0)
			return p->offs[j];
	uint32_t off = (uint32_t)p->sec->len;
	adac_bytebuf_str(p->sec, s);
	if (p->sec->failed) {
		p->failed = true;
		return 0;
	}
	p->keys[j] = h;
	p->offs[j] = off;
	p->count++;
	return off;
}

/* ---- per-unit state ---- */

struct fixup {
	size_t pos;       /* in .debug_info: a ref4 to fill */
	uint32_t type;
};

struct writer {
	const struct adac_symfile *sf;
	const struct adac_symfile_opts *o;
	struct adac_dwarf_out *out;
	struct strpool str;
	uint32_t *mark;          /* per type id: the stamp of the unit that uses it */
	uint32_t *die;           /* per type id: DIE offset in .debug_info (current unit) */
	uint32_t *stack;         /* DFS over types */
	uint32_t *file_mark;     /* per file id: the stamp of the unit that lists it */
	uint32_t *file_local;    /* per file id: its index in the unit's line header */
	uint32_t *unit_files;    /* the unit's file ids, in header order */
	uint32_t nunit_files;
	struct fixup *fixups;
	size_t nfixups, fixups_cap;
	bool failed;             /* an allocation failed */
	uint32_t stamp;
	size_t unit_start;       /* of the current unit in .debug_info */
};

static struct adac_bytebuf *sec(struct writer *w, enum adac_dwarf_section s) { return &w->out->sec[s]; }

static void strp(struct writer *w, const char *s) { adac_bytebuf_u32(sec(w, ADAC_DW_INFO), strpool_get(&w->str, s)); }

static void type_ref(struct writer *w, uint32_t type)
{
	if (w->nfixups == w->fixups_cap) {
		size_t cap = w->fixups_cap ? w->fixups_cap * 2 : 256;
		struct fixup *f = realloc(w->fixups, cap * sizeof *f);
		if (!f) {
			w->failed = true;
			return;
		}
		w->fixups = f;
		w->fixups_cap = cap;
	}
	w->fixups[w->nfixups++] = (struct fixup){sec(w, ADAC_DW_INFO)->len, type};
	adac_bytebuf_u32(sec(w, ADAC_DW_INFO), 0);
}

/* Marks the types the unit's variables use, and the types those use. */
static void mark_type(struct writer *w, uint32_t id)
{
	const struct adac_symfile *sf = w->sf;
	size_t sp = 0;
	if (!id || w->mark[id] == w->stamp)
		return;
	w->mark[id] = w->stamp;
	w->stack[sp++] = id;
	while (sp) {
		const struct adac_sym_type *t = &sf->types[w->stack[--sp] - 1];
		uint32_t refs[1] = {t->target};
		for (uint32_t i = 0; i < 1 + t->nmembers; i++) {
			uint32_t r = i == 0 ? refs[0] : t->members[i - 1].type;
			if (r && w->mark[r] != w->stamp) {
				w->mark[r] = w->stamp;
				w->stack[sp++] = r; /* each type is pushed at most once per unit: sp <= ntypes */
			}
		}
	}
}

static void write_type(struct writer *w, uint32_t id)
{
	struct adac_bytebuf *b = sec(w, ADAC_DW_INFO);
	const struct adac_sym_type *t = &w->sf->types[id - 1];
	w->die[id] = (uint32_t)(b->len - w->unit_start);
	switch (t->kind) {
	case ADAC_SYM_BASE: {
		static const uint8_t enc[] = {
			[ADAC_SYM_ENC_SIGNED] = DW_ATE_signed, [ADAC_SYM_ENC_UNSIGNED] = DW_ATE_unsigned,
			[ADAC_SYM_ENC_FLOAT] = DW_ATE_float, [ADAC_SYM_ENC_BOOLEAN] = DW_ATE_boolean, [ADAC_SYM_ENC_UTF] = DW_ATE_UTF,
		};
		adac_bytebuf_uleb(b, AB_BASE);
		strp(w, t->name);
		adac_bytebuf_u8(b, (uint8_t)t->size);
		adac_bytebuf_u8(b, enc[t->encoding]);
		break;
	}
	case ADAC_SYM_POINTER:
		adac_bytebuf_uleb(b, t->target ? AB_PTR : AB_PTR_VOID);
		adac_bytebuf_u8(b, 8);
		if (t->target)
			type_ref(w, t->target);
		break;
	case ADAC_SYM_STRUCT:
		if (t->declaration) {
			adac_bytebuf_uleb(b, AB_STRUCT_DECL);
			strp(w, t->name);
			break;
		}
		adac_bytebuf_uleb(b, t->nmembers ? AB_STRUCT : AB_STRUCT_LEAF);
		strp(w, t->name);
		adac_bytebuf_uleb(b, t->size);
		for (uint32_t i = 0; i < t->nmembers; i++) {
			adac_bytebuf_uleb(b, AB_MEMBER);
			strp(w, t->members[i].name);
			type_ref(w, t->members[i].type);
			adac_bytebuf_uleb(b, t->members[i].offset);
		}
		if (t->nmembers)
			adac_bytebuf_u8(b, 0);
		break;
	case ADAC_SYM_ARRAY:
		adac_bytebuf_uleb(b, AB_ARRAY);
		type_ref(w, t->target);
		if (t->dynamic && !w->o->dynamic_counts) {
			adac_bytebuf_uleb(b, AB_SUBRANGE_FLEX);
		} else if (t->dynamic) {
			/* count = the count_size bytes at (the array's address + count_offset) */
			struct adac_bytebuf e = {0};
			adac_bytebuf_u8(&e, DW_OP_push_object_address);
			adac_bytebuf_u8(&e, DW_OP_consts);
			adac_bytebuf_sleb(&e, t->count_offset);
			adac_bytebuf_u8(&e, DW_OP_plus);
			adac_bytebuf_u8(&e, DW_OP_deref_size);
			adac_bytebuf_u8(&e, t->count_size);
			adac_bytebuf_uleb(b, AB_SUBRANGE_DYN);
			adac_bytebuf_uleb(b, e.len);
			adac_bytebuf_put(b, e.p, e.len);
			w->failed |= e.failed;
			adac_bytebuf_free(&e);
		} else {
			adac_bytebuf_uleb(b, AB_SUBRANGE);
			adac_bytebuf_uleb(b, t->count);
		}
		adac_bytebuf_u8(b, 0);
		break;
	case ADAC_SYM_TYPEDEF:
		adac_bytebuf_uleb(b, t->target ? AB_TYPEDEF : AB_TYPEDEF_VOID);
		strp(w, t->name);
		if (t->target)
			type_ref(w, t->target);
		break;
	case ADAC_SYM_ENUM:
		adac_bytebuf_uleb(b, t->nenumerators ? AB_ENUM : AB_ENUM_LEAF);
		strp(w, t->name);
		adac_bytebuf_u8(b, (uint8_t)t->size);
		type_ref(w, t->target);
		for (uint32_t i = 0; i < t->nenumerators; i++) {
			adac_bytebuf_uleb(b, AB_ENUMERATOR);
			strp(w, t->enumerators[i].name);
			adac_bytebuf_sleb(b, t->enumerators[i].value);
		}
		if (t->nenumerators)
			adac_bytebuf_u8(b, 0);
		break;
	}
}

/* ---- locations ---- */

static void loc_expr(struct adac_bytebuf *e, const struct adac_sym_loc *l)
{
	if (l->kind == ADAC_SYM_LOC_REG) {
		if (l->reg < 32) {
			adac_bytebuf_u8(e, (uint8_t)(DW_OP_reg0 + l->reg));
		} else {
			adac_bytebuf_u8(e, DW_OP_regx);
			adac_bytebuf_uleb(e, l->reg);
		}
		return;
	}
	if (l->reg < 32) {
		adac_bytebuf_u8(e, (uint8_t)(DW_OP_breg0 + l->reg));
	} else {
		adac_bytebuf_u8(e, DW_OP_bregx);
		adac_bytebuf_uleb(e, l->reg);
	}
	adac_bytebuf_sleb(e, l->offset);
	if (l->kind == ADAC_SYM_LOC_MEM_REF)
		adac_bytebuf_u8(e, DW_OP_deref);
}

/* The location list of v (in the method starting at `start`): its offset in the list section. */
static uint32_t write_loclist(struct writer *w, uint64_t start, const struct adac_sym_var *v)
{
	struct adac_bytebuf *b = sec(w, ADAC_DW_LOC);
	uint32_t off = (uint32_t)b->len;
	for (uint32_t i = 0; i < v->nlocs; i++) {
		const struct adac_sym_loc *l = &v->locs[i];
		struct adac_bytebuf e = {0};
		loc_expr(&e, l);
		if (w->o->dwarf_version >= 5) {
			adac_bytebuf_u8(b, DW_LLE_start_length);
			adac_bytebuf_u64(b, start + l->start);
			adac_bytebuf_uleb(b, l->end - l->start);
			adac_bytebuf_uleb(b, e.len);
		} else {
			adac_bytebuf_u64(b, start + l->start); /* the unit's base address is 0 */
			adac_bytebuf_u64(b, start + l->end);
			adac_bytebuf_u16(b, (uint16_t)e.len);
		}
		adac_bytebuf_put(b, e.p, e.len);
		w->failed |= e.failed;
		adac_bytebuf_free(&e);
	}
	if (w->o->dwarf_version >= 5) {
		adac_bytebuf_u8(b, DW_LLE_end_of_list);
	} else {
		adac_bytebuf_u64(b, 0);
		adac_bytebuf_u64(b, 0);
	}
	return off;
}

static void write_var(struct writer *w, const struct adac_sym_method *m, const struct adac_sym_var *v)
{
	struct adac_bytebuf *b = sec(w, ADAC_DW_INFO);
	bool whole = v->nlocs == 1 && v->locs[0].start == 0 && v->locs[0].end == m->size;
	unsigned form = v->nlocs == 0 ? 2 : whole ? 0 : 1; /* EXPR, LIST, NOLOC */
	unsigned base = v->artificial ? AB_THIS_EXPR : v->is_param ? AB_PARAM_EXPR : AB_VAR_EXPR;
	adac_bytebuf_uleb(b, base + form);
	strp(w, v->name);
	type_ref(w, v->type);
	if (form == 0) {
		struct adac_bytebuf e = {0};
		loc_expr(&e, &v->locs[0]);
		adac_bytebuf_uleb(b, e.len);
		adac_bytebuf_put(b, e.p, e.len);
		w->failed |= e.failed;
		adac_bytebuf_free(&e);
	} else if (form == 1) {
		adac_bytebuf_u32(b, write_loclist(w, m->start, v));
	}
}

/* ---- files and lines ---- */

static void use_file(struct writer *w, uint32_t file)
{
	if (!file || w->file_mark[file] == w->stamp)
		return;
	w->file_mark[file] = w->stamp;
	w->unit_files[w->nunit_files] = file;
	w->file_local[file] = ++w->nunit_files; /* 1-based in both versions (v5's entry 0 is the unit) */
}

static void write_line_header(struct writer *w, const struct adac_sym_unit *u)
{
	struct adac_bytebuf *b = sec(w, ADAC_DW_LINE);
	static const uint8_t std_lengths[12] = {0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1};
	size_t header_len_pos;
	adac_bytebuf_u16(b, (uint16_t)w->o->dwarf_version);
	if (w->o->dwarf_version >= 5) {
		adac_bytebuf_u8(b, 8); /* address_size */
		adac_bytebuf_u8(b, 0); /* segment_selector_size */
	}
	header_len_pos = b->len;
	adac_bytebuf_u32(b, 0);
	adac_bytebuf_u8(b, 1);            /* minimum_instruction_length */
	adac_bytebuf_u8(b, 1);            /* maximum_operations_per_instruction */
	adac_bytebuf_u8(b, 1);            /* default_is_stmt */
	adac_bytebuf_u8(b, (uint8_t)-5);  /* line_base */
	adac_bytebuf_u8(b, 14);           /* line_range */
	adac_bytebuf_u8(b, 13);           /* opcode_base */
	adac_bytebuf_put(b, std_lengths, sizeof std_lengths);
	if (w->o->dwarf_version >= 5) {
		adac_bytebuf_u8(b, 1);
		adac_bytebuf_uleb(b, DW_LNCT_path);
		adac_bytebuf_uleb(b, DW_FORM_string);
		adac_bytebuf_uleb(b, 1);
		adac_bytebuf_str(b, u->comp_dir);
		adac_bytebuf_u8(b, 2);
		adac_bytebuf_uleb(b, DW_LNCT_path);
		adac_bytebuf_uleb(b, DW_FORM_string);
		adac_bytebuf_uleb(b, DW_LNCT_directory_index);
		adac_bytebuf_uleb(b, DW_FORM_udata);
		adac_bytebuf_uleb(b, 1 + w->nunit_files);
		adac_bytebuf_str(b, u->name);
		adac_bytebuf_uleb(b, 0);
		for (uint32_t i = 0; i < w->nunit_files; i++) {
			adac_bytebuf_str(b, w->sf->files[w->unit_files[i] - 1]);
			adac_bytebuf_uleb(b, 0);
		}
	} else {
		adac_bytebuf_u8(b, 0); /* no include_directories: directory 0 is the unit's comp_dir */
		for (uint32_t i = 0; i < w->nunit_files; i++) {
			adac_bytebuf_str(b, w->sf->files[w->unit_files[i] - 1]);
			adac_bytebuf_uleb(b, 0);
			adac_bytebuf_uleb(b, 0);
			adac_bytebuf_uleb(b, 0);
		}
		adac_bytebuf_u8(b, 0);
	}
	adac_bytebuf_patch(b, header_len_pos, b->len - header_len_pos - 4, 4);
}

static void write_sequence(struct writer *w, const struct adac_sym_method *m)
{
	struct adac_bytebuf *b = sec(w, ADAC_DW_LINE);
	if (!m->nrows)
		return;
	adac_bytebuf_u8(b, 0);
	adac_bytebuf_uleb(b, 9);
	adac_bytebuf_u8(b, DW_LNE_set_address);
	adac_bytebuf_u64(b, m->start);
	uint32_t file = 1, line = 1, column = 0, addr = 0;
	for (uint32_t i = 0; i < m->nrows; i++) {
		const struct adac_sym_row *r = &m->rows[i];
		uint32_t f = w->file_local[r->file];
		if (f != file) {
			adac_bytebuf_u8(b, DW_LNS_set_file);
			adac_bytebuf_uleb(b, f);
			file = f;
		}
		if (r->column != column) {
			adac_bytebuf_u8(b, DW_LNS_set_column);
			adac_bytebuf_uleb(b, r->column);
			column = r->column;
		}
		if (r->offset > addr) {
			adac_bytebuf_u8(b, DW_LNS_advance_pc);
			adac_bytebuf_uleb(b, r->offset - addr);
			addr = r->offset;
		}
		if (r->line != line) {
			adac_bytebuf_u8(b, DW_LNS_advance_line);
			adac_bytebuf_sleb(b, (int64_t)r->line - (int64_t)line);
			line = r->line;
		}
		adac_bytebuf_u8(b, DW_LNS_copy);
	}
	adac_bytebuf_u8(b, DW_LNS_advance_pc);
	adac_bytebuf_uleb(b, m->size - addr);
	adac_bytebuf_u8(b, 0);
	adac_bytebuf_uleb(b, 1);
	adac_bytebuf_u8(b, DW_LNE_end_sequence);
}

/* ---- call-frame information ---- */

static void cfa_pad(struct adac_bytebuf *b, size_t start)
{
	while ((b->len - start) % 8)
		adac_bytebuf_u8(b, DW_CFA_nop);
}

/* The CIE every frame description uses: at a call, the CFA is rsp + 8 and the return address at
 * CFA - 8. Offsets of saved registers are factored by -8. */
static void write_cie(struct writer *w)
{
	struct adac_bytebuf *b = sec(w, ADAC_DW_FRAME);
	size_t start = b->len;
	adac_bytebuf_u32(b, 0);
	adac_bytebuf_u32(b, 0xffffffffu); /* CIE_id of .debug_frame */
	adac_bytebuf_u8(b, 4);            /* version (DWARF 4 and 5) */
	adac_bytebuf_u8(b, 0);            /* augmentation "" */
	adac_bytebuf_u8(b, 8);            /* address_size */
	adac_bytebuf_u8(b, 0);            /* segment_selector_size */
	adac_bytebuf_uleb(b, 1);          /* code_alignment_factor */
	adac_bytebuf_sleb(b, -8);         /* data_alignment_factor */
	adac_bytebuf_uleb(b, ADAC_SYM_REG_RA);
	adac_bytebuf_u8(b, DW_CFA_def_cfa);
	adac_bytebuf_uleb(b, ADAC_SYM_REG_RSP);
	adac_bytebuf_uleb(b, 8);
	adac_bytebuf_u8(b, DW_CFA_offset | ADAC_SYM_REG_RA);
	adac_bytebuf_uleb(b, 1);
	cfa_pad(b, start + 4);
	adac_bytebuf_patch(b, start, b->len - start - 4, 4);
}

static const struct adac_sym_saved *find_saved(const struct adac_sym_cfa_row *r, uint16_t reg)
{
	for (uint32_t i = 0; i < r->nsaved; i++)
		if (r->saved[i].reg == reg)
			return &r->saved[i];
	return NULL;
}

static void write_fde(struct writer *w, const struct adac_sym_method *m, const struct adac_sym_frame *f)
{
	struct adac_bytebuf *b = sec(w, ADAC_DW_FRAME);
	size_t start = b->len;
	adac_bytebuf_u32(b, 0);
	adac_bytebuf_u32(b, 0); /* the CIE at offset 0 */
	adac_bytebuf_u64(b, m->start + f->start);
	adac_bytebuf_u64(b, f->end - f->start);
	struct adac_sym_cfa_row prev = {.cfa_reg = ADAC_SYM_REG_RSP, .cfa_offset = 8};
	uint32_t at = 0;
	for (uint32_t i = 0; i < f->nrows; i++) {
		const struct adac_sym_cfa_row *r = &f->rows[i];
		uint32_t delta = r->offset - at;
		if (delta && delta < 0x40) {
			adac_bytebuf_u8(b, (uint8_t)(DW_CFA_advance_loc | delta));
		} else if (delta && delta <= 0xff) {
			adac_bytebuf_u8(b, DW_CFA_advance_loc1);
			adac_bytebuf_u8(b, (uint8_t)delta);
		} else if (delta && delta <= 0xffff) {
			adac_bytebuf_u8(b, DW_CFA_advance_loc2);
			adac_bytebuf_u16(b, (uint16_t)delta);
		} else if (delta) {
			adac_bytebuf_u8(b, DW_CFA_advance_loc4);
			adac_bytebuf_u32(b, delta);
		}
		at = r->offset;
		if (r->cfa_reg != prev.cfa_reg) {
			adac_bytebuf_u8(b, DW_CFA_def_cfa);
			adac_bytebuf_uleb(b, r->cfa_reg);
			adac_bytebuf_uleb(b, (uint64_t)r->cfa_offset);
		} else if (r->cfa_offset != prev.cfa_offset) {
			adac_bytebuf_u8(b, DW_CFA_def_cfa_offset);
			adac_bytebuf_uleb(b, (uint64_t)r->cfa_offset);
		}
		for (uint32_t k = 0; k < r->nsaved; k++) {
			const struct adac_sym_saved *s = &r->saved[k], *was = find_saved(&prev, s->reg);
			if (was && was->at == s->at)
				continue;
			if (s->reg < 0x40 && s->at <= 0) {
				adac_bytebuf_u8(b, (uint8_t)(DW_CFA_offset | s->reg));
				adac_bytebuf_uleb(b, (uint64_t)(s->at / -8));
			} else {
				adac_bytebuf_u8(b, DW_CFA_offset_extended_sf);
				adac_bytebuf_uleb(b, s->reg);
				adac_bytebuf_sleb(b, s->at / -8);
			}
		}
		for (uint32_t k = 0; k < prev.nsaved; k++) {
			if (find_saved(r, prev.saved[k].reg))
				continue;
			adac_bytebuf_u8(b, DW_CFA_same_value); /* restored: in the register again */
			adac_bytebuf_uleb(b, prev.saved[k].reg);
		}
		prev = *r;
	}
	cfa_pad(b, start + 4);
	adac_bytebuf_patch(b, start, b->len - start - 4, 4);
}

/* ---- units ---- */

/* A list section's unit header (v5 .debug_loclists and .debug_rnglists); returns where its length
 * goes. v4's .debug_loc and .debug_ranges have none (SIZE_MAX). */
static size_t list_header(struct writer *w, struct adac_bytebuf *b)
{
	if (w->o->dwarf_version < 5)
		return SIZE_MAX;
	size_t pos = b->len;
	adac_bytebuf_u32(b, 0);
	adac_bytebuf_u16(b, 5);
	adac_bytebuf_u8(b, 8);
	adac_bytebuf_u8(b, 0);
	adac_bytebuf_u32(b, 0); /* offset_entry_count */
	return pos;
}

static void list_end(struct adac_bytebuf *b, size_t pos)
{
	if (pos != SIZE_MAX)
		adac_bytebuf_patch(b, pos, b->len - pos - 4, 4);
}

/* The unit `unit` with its methods methods[0..n) (sorted by address). */
static void write_unit(struct writer *w, uint32_t unit, const struct adac_sym_method *const *methods, size_t n)
{
	const struct adac_sym_unit *u = &w->sf->units[unit - 1];
	struct adac_bytebuf *info = sec(w, ADAC_DW_INFO), *line = sec(w, ADAC_DW_LINE);
	struct adac_bytebuf *ranges = sec(w, ADAC_DW_RANGES), *loc = sec(w, ADAC_DW_LOC);
	w->stamp++;
	w->nunit_files = 0;
	w->nfixups = 0;
	for (uint32_t i = 0; i < u->ntypes; i++)
		mark_type(w, u->types[i]);
	for (size_t i = 0; i < n; i++) {
		use_file(w, methods[i]->decl_file);
		for (uint32_t j = 0; j < methods[i]->nrows; j++)
			use_file(w, methods[i]->rows[j].file);
		for (uint32_t j = 0; j < methods[i]->nvars; j++)
			mark_type(w, methods[i]->vars[j].type);
	}

	/* Ranges of the unit. */
	size_t ranges_len = list_header(w, ranges);
	uint32_t ranges_off = (uint32_t)ranges->len;
	for (size_t i = 0; i < n; i++) {
		if (w->o->dwarf_version >= 5) {
			adac_bytebuf_u8(ranges, DW_RLE_start_length);
			adac_bytebuf_u64(ranges, methods[i]->start);
			adac_bytebuf_uleb(ranges, methods[i]->size);
		} else {
			adac_bytebuf_u64(ranges, methods[i]->start);
			adac_bytebuf_u64(ranges, methods[i]->start + methods[i]->size);
		}
	}
	if (w->o->dwarf_version >= 5) {
		adac_bytebuf_u8(ranges, DW_RLE_end_of_list);
	} else {
		adac_bytebuf_u64(ranges, 0);
		adac_bytebuf_u64(ranges, 0);
	}
	list_end(ranges, ranges_len);

	/* Line program. */
	size_t line_start = line->len;
	adac_bytebuf_u32(line, 0);
	write_line_header(w, u);
	for (size_t i = 0; i < n; i++)
		write_sequence(w, methods[i]);
	adac_bytebuf_patch(line, line_start, line->len - line_start - 4, 4);

	/* The unit's DIEs, and its entry in .debug_aranges (libdw finds units by address there). */
	struct adac_bytebuf *aranges = sec(w, ADAC_DW_ARANGES);
	size_t aranges_start = aranges->len;
	adac_bytebuf_u32(aranges, 0);
	adac_bytebuf_u16(aranges, 2);
	adac_bytebuf_u32(aranges, (uint32_t)info->len);
	adac_bytebuf_u8(aranges, 8);
	adac_bytebuf_u8(aranges, 0);
	adac_bytebuf_zeros(aranges, 4); /* tuples start at a multiple of 16 */
	for (size_t i = 0; i < n; i++) {
		adac_bytebuf_u64(aranges, methods[i]->start);
		adac_bytebuf_u64(aranges, methods[i]->size);
	}
	adac_bytebuf_zeros(aranges, 16);
	adac_bytebuf_patch(aranges, aranges_start, aranges->len - aranges_start - 4, 4);
	w->unit_start = info->len;
	adac_bytebuf_u32(info, 0);
	adac_bytebuf_u16(info, (uint16_t)w->o->dwarf_version);
	if (w->o->dwarf_version >= 5) {
		adac_bytebuf_u8(info, DW_UT_compile);
		adac_bytebuf_u8(info, 8);
		adac_bytebuf_u32(info, 0);
	} else {
		adac_bytebuf_u32(info, 0);
		adac_bytebuf_u8(info, 8);
	}
	adac_bytebuf_uleb(info, AB_CU);
	strp(w, w->o->producer ? w->o->producer : "asyncdac");
	adac_bytebuf_u16(info, w->o->language);
	strp(w, u->name);
	strp(w, u->comp_dir);
	adac_bytebuf_u64(info, 0);
	adac_bytebuf_u32(info, ranges_off);
	adac_bytebuf_u32(info, (uint32_t)line_start);
	for (uint32_t id = 1; id <= w->sf->ntypes; id++)
		if (w->mark[id] == w->stamp)
			write_type(w, id);
	size_t loc_len = list_header(w, loc);
	for (size_t i = 0; i < n; i++) {
		const struct adac_sym_method *m = methods[i];
		bool decl = m->decl_file && m->decl_line;
		adac_bytebuf_uleb(info, m->nvars ? (decl ? AB_SUB : AB_SUB_NODECL) : (decl ? AB_SUB_LEAF : AB_SUB_LEAF_NODECL));
		strp(w, m->name);
		adac_bytebuf_u64(info, m->start);
		adac_bytebuf_u64(info, m->size);
		if (decl) {
			adac_bytebuf_uleb(info, w->file_local[m->decl_file]);
			adac_bytebuf_uleb(info, m->decl_line);
		}
		for (uint32_t j = 0; j < m->nvars; j++)
			write_var(w, m, &m->vars[j]);
		if (m->nvars)
			adac_bytebuf_u8(info, 0);
	}
	list_end(loc, loc_len);
	adac_bytebuf_u8(info, 0);
	adac_bytebuf_patch(info, w->unit_start, info->len - w->unit_start - 4, 4);
	for (size_t i = 0; i < w->nfixups; i++)
		adac_bytebuf_patch(info, w->fixups[i].pos, w->die[w->fixups[i].type], 4);
}

static int cmp_method(const void *a, const void *b)
{
	const struct adac_sym_method *x = *(const struct adac_sym_method *const *)a;
	const struct adac_sym_method *y = *(const struct adac_sym_method *const *)b;
	if (x->unit != y->unit)
		return x->unit < y->unit ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

int adac_dwarf_write(const struct adac_symfile *sf, const struct adac_symfile_opts *o, struct adac_dwarf_out *out,
                     struct adac_error *err)
{
	memset(out, 0, sizeof *out);
	if (o->dwarf_version != 4 && o->dwarf_version != 5)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "DWARF version %u (4 or 5)", o->dwarf_version);
	bool v5 = o->dwarf_version >= 5;
	out->name[ADAC_DW_ABBREV] = ".debug_abbrev";
	out->name[ADAC_DW_INFO] = ".debug_info";
	out->name[ADAC_DW_STR] = ".debug_str";
	out->name[ADAC_DW_LINE] = ".debug_line";
	out->name[ADAC_DW_LOC] = v5 ? ".debug_loclists" : ".debug_loc";
	out->name[ADAC_DW_RANGES] = v5 ? ".debug_rnglists" : ".debug_ranges";
	out->name[ADAC_DW_ARANGES] = ".debug_aranges";
	out->name[ADAC_DW_FRAME] = ".debug_frame";

	struct writer w = {.sf = sf, .o = o, .out = out};
	w.str.sec = &out->sec[ADAC_DW_STR];
	size_t nt = (size_t)sf->ntypes + 1, nf = (size_t)sf->nfiles + 1;
	w.mark = calloc(nt, sizeof *w.mark);
	w.die = calloc(nt, sizeof *w.die);
	w.stack = calloc(nt, sizeof *w.stack);
	w.file_mark = calloc(nf, sizeof *w.file_mark);
	w.file_local = calloc(nf, sizeof *w.file_local);
	w.unit_files = calloc(nf, sizeof *w.unit_files);
	const struct adac_sym_method **sorted = calloc(sf->nmethods + 1, sizeof *sorted);
	int rc = 0;
	if (!w.mark || !w.die || !w.stack || !w.file_mark || !w.file_local || !w.unit_files || !sorted) {
		rc = adac_fail(err, ADAC_E_NOMEM, 0, "out of memory writing DWARF");
		goto out;
	}
	for (size_t i = 0; i < sf->nmethods; i++)
		sorted[i] = &sf->methods[i];
	qsort(sorted, sf->nmethods, sizeof *sorted, cmp_method);

	adac_bytebuf_u8(w.str.sec, 0); /* offset 0: "" */
	write_abbrevs(&out->sec[ADAC_DW_ABBREV]);
	write_cie(&w);
	for (size_t i = 0; i < sf->nmethods; i++)
		for (uint32_t j = 0; j < sorted[i]->nframes; j++)
			write_fde(&w, sorted[i], &sorted[i]->frames[j]);
	for (size_t i = 0; i < sf->nmethods;) {
		size_t j = i;
		while (j < sf->nmethods && sorted[j]->unit == sorted[i]->unit)
			j++;
		write_unit(&w, sorted[i]->unit, sorted + i, j - i);
		i = j;
	}
	bool failed = w.failed || w.str.failed;
	for (int s = 0; s < ADAC_DW_COUNT; s++)
		failed |= out->sec[s].failed;
	if (failed)
		rc = adac_fail(err, ADAC_E_LIMIT, 0, "DWARF sections past ADAC_MAX_SYMFILE_BYTES (%u) or out of memory",
		               ADAC_MAX_SYMFILE_BYTES);
out:
	free(w.mark);
	free(w.die);
	free(w.stack);
	free(w.file_mark);
	free(w.file_local);
	free(w.unit_files);
	free(w.fixups);
	free(w.str.keys);
	free(w.str.offs);
	free(sorted);
	return rc;
}

void adac_dwarf_out_free(struct adac_dwarf_out *out)
{
	for (int s = 0; s < ADAC_DW_COUNT; s++)
		adac_bytebuf_free(&out->sec[s]);
}
