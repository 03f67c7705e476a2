/* symfile.c - the symbol-file model: units, source files, types and methods, checked as they are
 * added so that the writers can trust every id and offset. */
#include "symfile/symfile.h"

#include <stdlib.h>
#include <string.h>

#include "base/limits.h"

/* ---- helpers ---- */

static int nomem(struct adac_error *err) { return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory building a symbol file"); }

static char *dup_str(const char *s) { return strdup(s ? s : ""); }

/* Grows *arr (elements of `size` bytes, *cap of them) to hold n + 1. */
static int grow(void **arr, uint32_t *cap, size_t n, size_t size, struct adac_error *err)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? (size_t)*cap * 2 : 16;
	void *p = realloc(*arr, c * size);
	if (!p)
		return nomem(err);
	*arr = p;
	*cap = (uint32_t)c;
	return 0;
}

static uint64_t hash_bytes(const void *data, size_t n, uint64_t h)
{
	const uint8_t *p = data;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h ? h : 1; /* 0 marks an empty slot */
}

static uint64_t hash_str(const char *s) { return hash_bytes(s, strlen(s), 0xcbf29ce484222325ull); }

/* The id stored for a key (matching through same(ctx, id)), 0 when none. */
static uint32_t index_find(const struct adac_sym_index *x, uint64_t key, bool (*same)(const void *ctx, uint32_t id),
                           const void *ctx)
{
	if (!x->cap)
		return 0;
	for (size_t i = key & (x->cap - 1);; i = (i + 1) & (x->cap - 1)) {
		if (!x->keys[i])
			return 0;
		if (x->keys[i] == key && same(ctx, x->ids[i]))
			return x->ids[i];
	}
}

static int index_add(struct adac_sym_index *x, size_t count, uint64_t key, uint32_t id, struct adac_error *err)
{
	if ((count + 1) * 2 > x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 64;
		uint64_t *keys = calloc(cap, sizeof *keys);
		uint32_t *ids = calloc(cap, sizeof *ids);
		if (!keys || !ids) {
			free(keys);
			free(ids);
			return nomem(err);
		}
		for (size_t i = 0; i < x->cap; i++) {
			if (!x->keys[i])
				continue;
			size_t j = x->keys[i] & (cap - 1);
			while (keys[j])
				j = (j + 1) & (cap - 1);
			keys[j] = x->keys[i];
			ids[j] = x->ids[i];
		}
		free(x->keys);
		free(x->ids);
		x->keys = keys;
		x->ids = ids;
		x->cap = cap;
	}
	size_t j = key & (x->cap - 1);
	while (x->keys[j])
		j = (j + 1) & (x->cap - 1);
	x->keys[j] = key;
	x->ids[j] = id;
	return 0;
}

/* ---- the model ---- */

struct adac_symfile *adac_symfile_new(struct adac_error *err)
{
	struct adac_symfile *sf = calloc(1, sizeof *sf);
	if (!sf)
		nomem(err);
	return sf;
}

static void free_method(struct adac_sym_method *m)
{
	free((char *)m->name);
	free((void *)m->rows);
	for (uint32_t i = 0; i < m->nframes; i++)
		free((void *)m->frames[i].rows);
	free((void *)m->frames);
	for (uint32_t i = 0; i < m->nvars; i++) {
		free((char *)m->vars[i].name);
		free((void *)m->vars[i].locs);
	}
	free((void *)m->vars);
}

void adac_symfile_free(struct adac_symfile *sf)
{
	if (!sf)
		return;
	for (uint32_t i = 0; i < sf->nunits; i++) {
		free(sf->units[i].name);
		free(sf->units[i].comp_dir);
		free(sf->units[i].types);
	}
	free(sf->units);
	for (uint32_t i = 0; i < sf->nfiles; i++)
		free(sf->files[i]);
	free(sf->files);
	free(sf->file_index.keys);
	free(sf->file_index.ids);
	for (uint32_t i = 0; i < sf->ntypes; i++) {
		struct adac_sym_type *t = &sf->types[i];
		free((char *)t->name);
		for (uint32_t j = 0; j < t->nmembers; j++)
			free((char *)t->members[j].name);
		free(t->members);
		for (uint32_t j = 0; j < t->nenumerators; j++)
			free((char *)t->enumerators[j].name);
		free(t->enumerators);
	}
	free(sf->types);
	free(sf->pointer_to);
	for (size_t i = 0; i < sf->nmethods; i++)
		free_method(&sf->methods[i]);
	free(sf->methods);
	free(sf);
}

uint32_t adac_symfile_unit(struct adac_symfile *sf, const char *name, const char *comp_dir, struct adac_error *err)
{
	name = name ? name : "";
	for (uint32_t i = 0; i < sf->nunits; i++)
		if (strcmp(sf->units[i].name, name) == 0)
			return i + 1;
	if (sf->nunits >= ADAC_MAX_SYM_UNITS) {
		adac_fail(err, ADAC_E_LIMIT, 0, "more than ADAC_MAX_SYM_UNITS (%u) units in one symbol file", ADAC_MAX_SYM_UNITS);
		return 0;
	}
	if (grow((void **)&sf->units, &sf->units_cap, sf->nunits, sizeof *sf->units, err))
		return 0;
	struct adac_sym_unit *u = &sf->units[sf->nunits];
	memset(u, 0, sizeof *u);
	u->name = dup_str(name);
	u->comp_dir = dup_str(comp_dir);
	if (!u->name || !u->comp_dir) {
		free(u->name);
		free(u->comp_dir);
		nomem(err);
		return 0;
	}
	return ++sf->nunits;
}

int adac_symfile_unit_type(struct adac_symfile *sf, uint32_t unit, uint32_t type, struct adac_error *err)
{
	if (unit < 1 || unit > sf->nunits || type < 1 || type > sf->ntypes)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "no unit %u or type %u in the symbol file", unit, type);
	struct adac_sym_unit *u = &sf->units[unit - 1];
	for (uint32_t i = 0; i < u->ntypes; i++)
		if (u->types[i] == type)
			return 0;
	if (u->ntypes >= ADAC_MAX_SYM_TYPES)
		return adac_fail(err, ADAC_E_LIMIT, 0, "more than ADAC_MAX_SYM_TYPES (%u) types in unit %s", ADAC_MAX_SYM_TYPES,
		                 u->name);
	if (grow((void **)&u->types, &u->types_cap, u->ntypes, sizeof *u->types, err))
		return -1;
	u->types[u->ntypes++] = type;
	return 0;
}

struct file_key {
	const struct adac_symfile *sf;
	const char *path;
};

static bool same_file(const void *ctx, uint32_t id)
{
	const struct file_key *k = ctx;
	return strcmp(k->sf->files[id - 1], k->path) == 0;
}

uint32_t adac_symfile_file(struct adac_symfile *sf, const char *path, struct adac_error *err)
{
	if (!path || !*path) {
		adac_fail(err, ADAC_E_BAD_ARG, 0, "a source file needs a path");
		return 0;
	}
	struct file_key k = {sf, path};
	uint64_t h = hash_str(path);
	uint32_t id = index_find(&sf->file_index, h, same_file, &k);
	if (id)
		return id;
	if (sf->nfiles >= ADAC_MAX_SYM_FILES) {
		adac_fail(err, ADAC_E_LIMIT, 0, "more than ADAC_MAX_SYM_FILES (%u) source files in one symbol file",
		          ADAC_MAX_SYM_FILES);
		return 0;
	}
	if (grow((void **)&sf->files, &sf->files_cap, sf->nfiles, sizeof *sf->files, err))
		return 0;
	char *copy = dup_str(path);
	if (!copy || index_add(&sf->file_index, sf->nfiles, h, sf->nfiles + 1, err)) {
		free(copy);
		if (!copy)
			nomem(err);
		return 0;
	}
	sf->files[sf->nfiles] = copy;
	return ++sf->nfiles;
}

/* ---- types ---- */

static struct adac_sym_type *type_at(const struct adac_symfile *sf, uint32_t id)
{
	return id >= 1 && id <= sf->ntypes ? &sf->types[id - 1] : NULL;
}

const struct adac_sym_type *adac_symfile_type(const struct adac_symfile *sf, uint32_t id) { return type_at(sf, id); }

static uint32_t new_type(struct adac_symfile *sf, const struct adac_sym_type *t, struct adac_error *err)
{
	if (sf->ntypes >= ADAC_MAX_SYM_TYPES) {
		adac_fail(err, ADAC_E_LIMIT, 0, "more than ADAC_MAX_SYM_TYPES (%u) types in one symbol file", ADAC_MAX_SYM_TYPES);
		return 0;
	}
	if (grow((void **)&sf->types, &sf->types_cap, sf->ntypes, sizeof *sf->types, err))
		return 0;
	/* pointer_to has an entry per type id and one for void (id 0). */
	uint32_t had = sf->pointer_cap;
	if (grow((void **)&sf->pointer_to, &sf->pointer_cap, sf->ntypes + 1u, sizeof *sf->pointer_to, err))
		return 0;
	memset(sf->pointer_to + had, 0, (size_t)(sf->pointer_cap - had) * sizeof *sf->pointer_to);
	struct adac_sym_type *nt = &sf->types[sf->ntypes];
	*nt = *t;
	nt->name = NULL;
	nt->members = NULL;
	nt->enumerators = NULL;
	nt->nmembers = nt->nenumerators = 0;
	if (t->name && !(nt->name = dup_str(t->name))) {
		nomem(err);
		return 0;
	}
	return ++sf->ntypes;
}

static int check_type(const struct adac_symfile *sf, uint32_t id, bool void_ok, const char *what, struct adac_error *err)
{
	if ((id == 0 && void_ok) || type_at(sf, id))
		return 0;
	return adac_fail(err, ADAC_E_BAD_ARG, 0, "%s: no type %u in the symbol file", what, id);
}

uint32_t adac_symfile_base_type(struct adac_symfile *sf, const char *name, uint32_t size, enum adac_sym_encoding enc,
                                struct adac_error *err)
{
	if (!name || !*name || size == 0 || size > 16) {
		adac_fail(err, ADAC_E_BAD_ARG, 0, "base type '%s' of %u bytes", name ? name : "", size);
		return 0;
	}
	struct adac_sym_type t = {.kind = ADAC_SYM_BASE, .name = name, .size = size, .encoding = enc};
	return new_type(sf, &t, err);
}

uint32_t adac_symfile_pointer_type(struct adac_symfile *sf, uint32_t target, struct adac_error *err)
{
	if (check_type(sf, target, true, "pointer", err))
		return 0;
	if (sf->pointer_to && sf->pointer_to[target])
		return sf->pointer_to[target];
	struct adac_sym_type t = {.kind = ADAC_SYM_POINTER, .size = 8, .target = target};
	uint32_t id = new_type(sf, &t, err);
	if (id)
		sf->pointer_to[target] = id;
	return id;
}

uint32_t adac_symfile_struct_type(struct adac_symfile *sf, const char *name, uint32_t size, bool declaration,
                                  struct adac_error *err)
{
	if (!name || !*name) {
		adac_fail(err, ADAC_E_BAD_ARG, 0, "a struct type needs a name");
		return 0;
	}
	struct adac_sym_type t = {.kind = ADAC_SYM_STRUCT, .name = name, .size = declaration ? 0 : size,
	                          .declaration = declaration};
	return new_type(sf, &t, err);
}

int adac_symfile_define_struct(struct adac_symfile *sf, uint32_t struct_type, uint32_t size, struct adac_error *err)
{
	struct adac_sym_type *t = type_at(sf, struct_type);
	if (!t || t->kind != ADAC_SYM_STRUCT || !t->declaration)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "type %u is not a declared struct", struct_type);
	t->declaration = false;
	t->size = size;
	return 0;
}

uint32_t adac_symfile_typedef(struct adac_symfile *sf, const char *name, uint32_t target, struct adac_error *err)
{
	if (!name || !*name || check_type(sf, target, true, "typedef", err)) {
		adac_fail(err, ADAC_E_BAD_ARG, 0, "a typedef needs a name and a type");
		return 0;
	}
	struct adac_sym_type t = {.kind = ADAC_SYM_TYPEDEF, .name = name, .target = target};
	return new_type(sf, &t, err);
}

int adac_symfile_add_member(struct adac_symfile *sf, uint32_t struct_type, const char *name, uint32_t type,
                            uint32_t offset, struct adac_error *err)
{
	struct adac_sym_type *t = type_at(sf, struct_type);
	if (!t || t->kind != ADAC_SYM_STRUCT || t->declaration)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "type %u is not a struct with members", struct_type);
	if (check_type(sf, type, false, "member", err))
		return -1;
	const struct adac_sym_type *mt = type_at(sf, type);
	for (unsigned hops = 0; mt->kind == ADAC_SYM_TYPEDEF && type_at(sf, mt->target) && hops < 8; hops++)
		mt = type_at(sf, mt->target);
	uint64_t msize = mt->kind == ADAC_SYM_ARRAY && mt->dynamic ? 0 : mt->kind == ADAC_SYM_POINTER ? 8 : mt->size;
	if (mt->kind == ADAC_SYM_ARRAY && !mt->dynamic) {
		const struct adac_sym_type *et = type_at(sf, mt->target);
		msize = et ? (uint64_t)(et->kind == ADAC_SYM_POINTER ? 8 : et->size) * mt->count : 0;
	}
	if ((uint64_t)offset + msize > t->size)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "member %s of %s: %llu bytes at offset %u pass the struct's %u bytes",
		                 name ? name : "", t->name, (unsigned long long)msize, offset, t->size);
	if (t->nmembers >= ADAC_MAX_TYPE_FIELDS)
		return adac_fail(err, ADAC_E_LIMIT, 0, "%s: more than ADAC_MAX_TYPE_FIELDS (%u) members", t->name,
		                 ADAC_MAX_TYPE_FIELDS);
	struct adac_sym_member *m = realloc(t->members, ((size_t)t->nmembers + 1) * sizeof *m);
	if (!m)
		return nomem(err);
	t->members = m;
	m[t->nmembers].name = dup_str(name);
	if (!m[t->nmembers].name)
		return nomem(err);
	m[t->nmembers].type = type;
	m[t->nmembers].offset = offset;
	t->nmembers++;
	return 0;
}

uint32_t adac_symfile_array_type(struct adac_symfile *sf, uint32_t element, uint64_t count, struct adac_error *err)
{
	if (check_type(sf, element, false, "array element", err))
		return 0;
	struct adac_sym_type t = {.kind = ADAC_SYM_ARRAY, .target = element, .count = count};
	return new_type(sf, &t, err);
}

uint32_t adac_symfile_dynamic_array_type(struct adac_symfile *sf, uint32_t element, int32_t count_offset,
                                         uint8_t count_size, struct adac_error *err)
{
	if (check_type(sf, element, false, "array element", err))
		return 0;
	if (count_size != 4 && count_size != 8) {
		adac_fail(err, ADAC_E_BAD_ARG, 0, "an array count of %u bytes (4 or 8)", count_size);
		return 0;
	}
	struct adac_sym_type t = {.kind = ADAC_SYM_ARRAY, .target = element, .dynamic = true,
	                          .count_offset = count_offset, .count_size = count_size};
	return new_type(sf, &t, err);
}

uint32_t adac_symfile_enum_type(struct adac_symfile *sf, const char *name, uint32_t underlying, struct adac_error *err)
{
	const struct adac_sym_type *u = type_at(sf, underlying);
	for (unsigned hops = 0; u && u->kind == ADAC_SYM_TYPEDEF && hops < 8; hops++)
		u = type_at(sf, u->target);
	if (!name || !*name || !u || u->kind != ADAC_SYM_BASE) {
		adac_fail(err, ADAC_E_BAD_ARG, 0, "enum '%s' needs a name and a base type", name ? name : "");
		return 0;
	}
	struct adac_sym_type t = {.kind = ADAC_SYM_ENUM, .name = name, .size = u->size, .target = underlying};
	return new_type(sf, &t, err);
}

int adac_symfile_add_enumerator(struct adac_symfile *sf, uint32_t enum_type, const char *name, int64_t value,
                                struct adac_error *err)
{
	struct adac_sym_type *t = type_at(sf, enum_type);
	if (!t || t->kind != ADAC_SYM_ENUM || !name || !*name)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "enumerator '%s' of type %u, which is not an enum", name ? name : "",
		                 enum_type);
	if (t->nenumerators >= ADAC_MAX_TYPE_FIELDS)
		return adac_fail(err, ADAC_E_LIMIT, 0, "%s: more than ADAC_MAX_TYPE_FIELDS (%u) enumerators", t->name,
		                 ADAC_MAX_TYPE_FIELDS);
	struct adac_sym_enumerator *e = realloc(t->enumerators, ((size_t)t->nenumerators + 1) * sizeof *e);
	if (!e)
		return nomem(err);
	t->enumerators = e;
	if (!(e[t->nenumerators].name = dup_str(name)))
		return nomem(err);
	e[t->nenumerators].value = value;
	t->nenumerators++;
	return 0;
}

/* ---- methods ---- */

static int check_method(const struct adac_symfile *sf, const struct adac_sym_method *m, struct adac_error *err)
{
	const char *name = m->name ? m->name : "";
	if (!*name)
		return adac_fail(err, ADAC_E_BAD_ARG, m->start, "a method at 0x%llx without a name", (unsigned long long)m->start);
	if (m->unit < 1 || m->unit > sf->nunits)
		return adac_fail(err, ADAC_E_BAD_ARG, m->start, "%s: no unit %u", name, m->unit);
	if (m->size == 0 || m->start + m->size < m->start)
		return adac_fail(err, ADAC_E_BAD_ARG, m->start, "%s: code range [0x%llx, +0x%llx) is empty or wraps", name,
		                 (unsigned long long)m->start, (unsigned long long)m->size);
	if (m->decl_file > sf->nfiles)
		return adac_fail(err, ADAC_E_BAD_ARG, m->start, "%s: no file %u", name, m->decl_file);
	for (uint32_t i = 0; i < m->nrows; i++) {
		const struct adac_sym_row *r = &m->rows[i];
		if (r->offset >= m->size || (i && r->offset < m->rows[i - 1].offset))
			return adac_fail(err, ADAC_E_BAD_ARG, m->start, "%s: line row %u at offset 0x%x is out of order or past the code",
			                 name, i, r->offset);
		if (r->file < 1 || r->file > sf->nfiles)
			return adac_fail(err, ADAC_E_BAD_ARG, m->start, "%s: line row %u names no file (%u)", name, i, r->file);
	}
	for (uint32_t i = 0; i < m->nframes; i++) {
		const struct adac_sym_frame *f = &m->frames[i];
		if (f->start >= f->end || f->end > m->size || !f->nrows)
			return adac_fail(err, ADAC_E_BAD_ARG, m->start, "%s: frame part [0x%x, 0x%x) is empty or outside the code", name,
			                 f->start, f->end);
		for (uint32_t j = 0; j < f->nrows; j++) {
			const struct adac_sym_cfa_row *r = &f->rows[j];
			bool ok = r->offset < f->end - f->start && (j == 0 || r->offset >= f->rows[j - 1].offset) &&
			          r->cfa_offset >= 0 && r->nsaved <= ADAC_SYM_MAX_SAVED;
			for (uint32_t k = 0; ok && k < r->nsaved; k++)
				ok = r->saved[k].at % 8 == 0;
			if (!ok)
				return adac_fail(err, ADAC_E_BAD_ARG, m->start, "%s: call-frame row %u of part %u is out of order or not "
				                 "described in 8-byte slots", name, j, i);
		}
	}
	for (uint32_t i = 0; i < m->nvars; i++) {
		const struct adac_sym_var *v = &m->vars[i];
		if (!v->name || !*v->name || check_type(sf, v->type, false, v->name ? v->name : "variable", err))
			return adac_fail(err, ADAC_E_BAD_ARG, m->start, "%s: variable %u has no name or type", name, i);
		for (uint32_t j = 0; j < v->nlocs; j++) {
			const struct adac_sym_loc *l = &v->locs[j];
			if (l->start >= l->end || l->end > m->size)
				return adac_fail(err, ADAC_E_BAD_ARG, m->start, "%s: %s: location [0x%x, 0x%x) outside the code", name,
				                 v->name, l->start, l->end);
		}
	}
	return 0;
}

int adac_symfile_add_method(struct adac_symfile *sf, const struct adac_sym_method *m, struct adac_error *err)
{
	if (check_method(sf, m, err))
		return -1;
	if (sf->nmethods >= ADAC_MAX_SYM_METHODS)
		return adac_fail(err, ADAC_E_LIMIT, m->start, "more than ADAC_MAX_SYM_METHODS (%u) methods in one symbol file",
		                 ADAC_MAX_SYM_METHODS);
	uint32_t cap = (uint32_t)sf->methods_cap;
	if (grow((void **)&sf->methods, &cap, sf->nmethods, sizeof *sf->methods, err))
		return -1;
	sf->methods_cap = cap;
	struct adac_sym_method c = *m;
	struct adac_sym_row *rows = m->nrows ? malloc(m->nrows * sizeof *rows) : NULL;
	struct adac_sym_var *vars = m->nvars ? calloc(m->nvars, sizeof *vars) : NULL;
	struct adac_sym_frame *frames = m->nframes ? calloc(m->nframes, sizeof *frames) : NULL;
	c.name = dup_str(m->name);
	c.rows = rows;
	c.vars = vars;
	c.nvars = 0;
	c.frames = frames;
	c.nframes = 0;
	if ((m->nrows && !rows) || (m->nvars && !vars) || (m->nframes && !frames) || !c.name) {
		free_method(&c);
		return nomem(err);
	}
	for (uint32_t i = 0; i < m->nframes; i++, c.nframes++) {
		frames[i] = m->frames[i];
		struct adac_sym_cfa_row *fr = malloc(m->frames[i].nrows * sizeof *fr);
		frames[i].rows = fr;
		if (!fr) {
			free_method(&c);
			return nomem(err);
		}
		memcpy(fr, m->frames[i].rows, m->frames[i].nrows * sizeof *fr);
	}
	if (m->nrows)
		memcpy(rows, m->rows, m->nrows * sizeof *rows);
	for (uint32_t i = 0; i < m->nvars; i++, c.nvars++) {
		vars[i] = m->vars[i];
		vars[i].name = dup_str(m->vars[i].name);
		struct adac_sym_loc *locs = m->vars[i].nlocs ? malloc(m->vars[i].nlocs * sizeof *locs) : NULL;
		vars[i].locs = locs;
		if (!vars[i].name || (m->vars[i].nlocs && !locs)) {
			c.nvars++;
			free_method(&c);
			return nomem(err);
		}
		if (locs)
			memcpy(locs, m->vars[i].locs, m->vars[i].nlocs * sizeof *locs);
	}
	sf->methods[sf->nmethods++] = c;
	return 0;
}

size_t adac_symfile_method_count(const struct adac_symfile *sf) { return sf->nmethods; }
size_t adac_symfile_type_count(const struct adac_symfile *sf) { return sf->ntypes; }
