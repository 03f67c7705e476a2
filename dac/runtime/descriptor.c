/* descriptor.c - finds nothing itself: reads, validates and parses contract descriptors. */
#include "runtime/descriptor.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "target/target.h"

#define DESC_MAGIC "DNCCDAC"  /* followed by a NUL: 8 bytes */
/* What a load reads, per blob: the struct, the JSON, the pointer data, and each sub-descriptor's
 * pointer variable. */
#define MAX_REGIONS (ADAC_MAX_DESCRIPTOR_BLOBS * (3 + ADAC_MAX_DESCRIPTOR_BLOBS))

struct global {
	char *name;
	bool has_value;
	uint64_t value;
	char *str;       /* string value, or NULL */
};

struct adac_descriptor {
	json_t *types;       /* merged: type name -> {"!": size, field: offset | [offset, "type"]} */
	json_t *contracts;   /* merged: contract name -> version string */
	json_t *global_idx;  /* global name -> index into globals */
	struct global *globals;
	size_t nglobals;
	char version[32];
	char baseline[32];
	unsigned ptr_size;
	struct adac_desc_blob blobs[ADAC_MAX_DESCRIPTOR_BLOBS];
	size_t nblobs;
	/* sub-descriptors found by the last parse: name and the address of the pointer variable */
	char pending_name[ADAC_MAX_DESCRIPTOR_BLOBS][64];
	uint64_t pending_addr[ADAC_MAX_DESCRIPTOR_BLOBS];
	size_t npending;
	/* the target memory a load read (adac_desc_unchanged reads it again), and its digest */
	struct {
		uint64_t addr, len;
	} regions[MAX_REGIONS];
	size_t nregions;
	uint64_t digest;
};

#define FNV_BASIS 0xcbf29ce484222325ull

struct adac_descriptor *adac_desc_new(void)
{
	struct adac_descriptor *d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	d->types = json_object();
	d->contracts = json_object();
	d->global_idx = json_object();
	d->ptr_size = 8;
	d->digest = FNV_BASIS; /* of no bytes: a descriptor not loaded from a target never changes */
	if (!d->types || !d->contracts || !d->global_idx) {
		adac_desc_free(d);
		return NULL;
	}
	return d;
}

void adac_desc_free(struct adac_descriptor *d)
{
	if (!d)
		return;
	json_decref(d->types);
	json_decref(d->contracts);
	json_decref(d->global_idx);
	for (size_t i = 0; i < d->nglobals; i++) {
		free(d->globals[i].name);
		free(d->globals[i].str);
	}
	free(d->globals);
	free(d);
}

/* Parses "0x1f", "31", "-3" (the whole string) into a 64-bit value. */
static bool parse_number(const char *s, uint64_t *out)
{
	if (!s || !*s)
		return false;
	bool neg = *s == '-';
	const char *p = neg ? s + 1 : s;
	if (*p < '0' || *p > '9')
		return false;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(p, &end, 0);
	if (errno || *end)
		return false;
	*out = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	return true;
}

/* A JSON number or numeric string as a 64-bit value. */
static bool json_number(const json_t *v, uint64_t *out)
{
	if (json_is_integer(v)) {
		*out = (uint64_t)json_integer_value(v);
		return true;
	}
	if (json_is_string(v))
		return parse_number(json_string_value(v), out);
	return false;
}

static int add_global(struct adac_descriptor *d, const char *name, bool has_value, uint64_t value,
                      const char *str, struct adac_error *err)
{
	if (json_object_get(d->global_idx, name))
		return adac_fail(err, ADAC_E_CORRUPT, 0, "contract descriptor defines global %s twice", name);
	struct global *grown = realloc(d->globals, (d->nglobals + 1) * sizeof *grown);
	if (!grown)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory parsing the contract descriptor");
	d->globals = grown;
	struct global *g = &d->globals[d->nglobals];
	g->name = strdup(name);
	g->has_value = has_value;
	g->value = value;
	g->str = str ? strdup(str) : NULL;
	if (!g->name || (str && !g->str)) {
		free(g->name);
		free(g->str);
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory parsing the contract descriptor");
	}
	json_object_set_new(d->global_idx, name, json_integer((json_int_t)d->nglobals));
	d->nglobals++;
	return 0;
}

/* Indirect reference `[idx]` (or `[[idx]]` unwrapped by the caller) to a pointer_data slot. */
static int resolve_indirect(const json_t *idx_json, const uint64_t *pdata, size_t npdata, const char *what,
                            const char *name, uint64_t *out, struct adac_error *err)
{
	uint64_t idx;
	if (!json_number(idx_json, &idx))
		return adac_fail(err, ADAC_E_CORRUPT, 0, "contract descriptor %s %s has a non-numeric pointer index", what,
		                 name);
	if (idx >= npdata)
		return adac_fail(err, ADAC_E_CORRUPT, 0,
		                 "contract descriptor %s %s uses pointer index %llu, but there are %zu pointers", what, name,
		                 (unsigned long long)idx, npdata);
	*out = pdata[idx];
	return 0;
}

/* Global shapes: V | [V, "type"] | [[idx]] | [idx] | [[idx], "type"]; V is a number or a string. */
static int parse_global(struct adac_descriptor *d, const char *name, json_t *v, const uint64_t *pdata, size_t npdata,
                        struct adac_error *err)
{
	json_t *val = v;
	if (json_is_array(v)) {
		size_t n = json_array_size(v);
		if (n == 1) { /* indirect */
			json_t *inner = json_array_get(v, 0);
			if (json_is_array(inner)) {
				if (json_array_size(inner) != 1)
					return adac_fail(err, ADAC_E_CORRUPT, 0, "contract descriptor global %s has a malformed index", name);
				inner = json_array_get(inner, 0);
			}
			uint64_t value;
			if (resolve_indirect(inner, pdata, npdata, "global", name, &value, err))
				return -1;
			return add_global(d, name, true, value, NULL, err);
		}
		if (n != 2 || !json_is_string(json_array_get(v, 1)))
			return adac_fail(err, ADAC_E_CORRUPT, 0, "contract descriptor global %s has an unknown shape", name);
		val = json_array_get(v, 0);
		if (json_is_array(val)) {
			if (json_array_size(val) != 1)
				return adac_fail(err, ADAC_E_CORRUPT, 0, "contract descriptor global %s has a malformed index", name);
			uint64_t value;
			if (resolve_indirect(json_array_get(val, 0), pdata, npdata, "global", name, &value, err))
				return -1;
			return add_global(d, name, true, value, NULL, err);
		}
	}
	uint64_t value = 0;
	if (json_is_string(val)) {
		bool numeric = parse_number(json_string_value(val), &value);
		return add_global(d, name, numeric, value, json_string_value(val), err);
	}
	if (json_is_integer(val))
		return add_global(d, name, true, (uint64_t)json_integer_value(val), NULL, err);
	return adac_fail(err, ADAC_E_CORRUPT, 0, "contract descriptor global %s is neither a number nor a string", name);
}

static int merge_types(struct adac_descriptor *d, json_t *types, struct adac_error *err)
{
	if (!types)
		return 0;
	if (!json_is_object(types))
		return adac_fail(err, ADAC_E_CORRUPT, 0, "contract descriptor \"types\" is not an object");
	const char *name;
	json_t *fields;
	json_object_foreach(types, name, fields) {
		if (!json_is_object(fields))
			return adac_fail(err, ADAC_E_CORRUPT, 0, "contract descriptor type %s is not an object", name);
		if (json_object_get(d->types, name))
			return adac_fail(err, ADAC_E_CORRUPT, 0, "contract descriptor defines type %s twice", name);
		const char *fname;
		json_t *fv;
		/* The size "!" is a plain number; only fields take the [offset, "type"] form. */
		json_t *size = json_object_get(fields, "!");
		uint64_t v;
		if (size && (!json_number(size, &v) || v > UINT32_MAX))
			return adac_fail(err, ADAC_E_CORRUPT, 0, "contract descriptor type %s has no valid size", name);
		json_object_foreach(fields, fname, fv) {
			uint64_t off;
			json_t *o = json_is_array(fv) ? json_array_get(fv, 0) : fv;
			if (!json_number(o, &off) || off > UINT32_MAX)
				return adac_fail(err, ADAC_E_CORRUPT, 0, "contract descriptor field %s.%s has no valid offset", name,
				                 fname);
		}
		json_object_set(d->types, name, fields);
	}
	return 0;
}

static int merge_contracts(struct adac_descriptor *d, json_t *contracts, struct adac_error *err)
{
	if (!contracts)
		return 0;
	if (!json_is_object(contracts))
		return adac_fail(err, ADAC_E_CORRUPT, 0, "contract descriptor \"contracts\" is not an object");
	const char *name;
	json_t *v;
	json_object_foreach(contracts, name, v) {
		char tag[32];
		if (json_is_integer(v))
			snprintf(tag, sizeof tag, "%lld", (long long)json_integer_value(v));
		else if (json_is_string(v) && strlen(json_string_value(v)) < sizeof tag)
			snprintf(tag, sizeof tag, "%s", json_string_value(v));
		else
			return adac_fail(err, ADAC_E_CORRUPT, 0, "contract %s has a version that is neither a number nor a short string",
			                 name);
		if (json_object_get(d->contracts, name))
			return adac_fail(err, ADAC_E_CORRUPT, 0, "contract descriptor defines contract %s twice", name);
		json_object_set_new(d->contracts, name, json_string(tag));
	}
	return 0;
}

int adac_desc_parse_json(struct adac_descriptor *d, const char *json, size_t len, const uint64_t *pdata,
                         size_t npdata, struct adac_error *err)
{
	json_error_t jerr;
	json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "contract descriptor JSON is invalid at line %d column %d: %s",
		                 jerr.line, jerr.column, jerr.text);
	int rc = -1;
	d->npending = 0;
	if (!json_is_object(root)) {
		adac_fail(err, ADAC_E_CORRUPT, 0, "contract descriptor JSON is not an object");
		goto out;
	}
	bool first = d->version[0] == '\0';
	json_t *version = json_object_get(root, "version");
	if (first) {
		if (json_is_integer(version))
			snprintf(d->version, sizeof d->version, "%lld", (long long)json_integer_value(version));
		else if (json_is_string(version))
			snprintf(d->version, sizeof d->version, "%s", json_string_value(version));
		else {
			adac_fail(err, ADAC_E_CORRUPT, 0, "contract descriptor JSON has no \"version\"");
			goto out;
		}
		json_t *baseline = json_object_get(root, "baseline");
		snprintf(d->baseline, sizeof d->baseline, "%s", json_is_string(baseline) ? json_string_value(baseline) : "");
	}
	if (merge_types(d, json_object_get(root, "types"), err) ||
	    merge_contracts(d, json_object_get(root, "contracts"), err))
		goto out;
	json_t *globals = json_object_get(root, "globals");
	if (globals && !json_is_object(globals)) {
		adac_fail(err, ADAC_E_CORRUPT, 0, "contract descriptor \"globals\" is not an object");
		goto out;
	}
	const char *name;
	json_t *v;
	json_object_foreach(globals, name, v) {
		if (parse_global(d, name, v, pdata, npdata, err))
			goto out;
	}
	json_t *subs = json_object_get(root, "subDescriptors");
	if (subs && !json_is_object(subs)) {
		adac_fail(err, ADAC_E_CORRUPT, 0, "contract descriptor \"subDescriptors\" is not an object");
		goto out;
	}
	json_object_foreach(subs, name, v) {
		json_t *ref = json_is_array(v) ? json_array_get(v, 0) : NULL;
		if (json_is_array(ref) && json_array_size(ref) == 1)
			ref = json_array_get(ref, 0);
		uint64_t where;
		if (!ref || resolve_indirect(ref, pdata, npdata, "sub-descriptor", name, &where, err)) {
			adac_fail(err, ADAC_E_CORRUPT, 0, "contract descriptor sub-descriptor %s has an unknown shape", name);
			goto out;
		}
		if (d->npending >= ADAC_MAX_DESCRIPTOR_BLOBS) {
			adac_fail(err, ADAC_E_LIMIT, 0, "more than %u sub-descriptors", ADAC_MAX_DESCRIPTOR_BLOBS);
			goto out;
		}
		snprintf(d->pending_name[d->npending], sizeof d->pending_name[0], "%s", name);
		d->pending_addr[d->npending++] = where;
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

static void add_region(struct adac_descriptor *d, uint64_t addr, uint64_t len)
{
	if (d->nregions < MAX_REGIONS && len) {  /* the blob caps keep it below */
		d->regions[d->nregions].addr = addr;
		d->regions[d->nregions++].len = len;
	}
}

/* Reads, validates and parses one descriptor struct; then its sub-descriptors. */
static int load_one(struct adac_target *t, uint64_t addr, const char *name, unsigned depth,
                    struct adac_descriptor *d, struct adac_error *err)
{
	if (depth > ADAC_MAX_SUBDESCRIPTOR_DEPTH)
		return adac_fail(err, ADAC_E_LIMIT, addr, "sub-descriptors nested deeper than ADAC_MAX_SUBDESCRIPTOR_DEPTH (%u)",
		                 ADAC_MAX_SUBDESCRIPTOR_DEPTH);
	if (d->nblobs >= ADAC_MAX_DESCRIPTOR_BLOBS)
		return adac_fail(err, ADAC_E_LIMIT, addr, "more than %u contract descriptors", ADAC_MAX_DESCRIPTOR_BLOBS);
	uint8_t hdr[40];
	if (adac_read(t, addr, hdr, 16, err)) {
		adac_error_wrap(err, "contract descriptor: ");
		return -1;
	}
	if (memcmp(hdr, DESC_MAGIC, 8) != 0)
		return adac_fail(err, ADAC_E_CORRUPT, addr, "contract descriptor at 0x%llx has a bad magic (want \"DNCCDAC\\0\")",
		                 (unsigned long long)addr);
	uint32_t flags, json_size;
	memcpy(&flags, hdr + 8, 4);
	memcpy(&json_size, hdr + 12, 4);
	unsigned ps = (flags & 2u) ? 4 : 8;
	if (depth == 0) {
		d->ptr_size = ps;
		adac_target_set_ptr_size(t, ps);
	} else if (ps != d->ptr_size) {
		return adac_fail(err, ADAC_E_CORRUPT, addr, "sub-descriptor %s at 0x%llx disagrees on the pointer size", name,
		                 (unsigned long long)addr);
	}
	size_t hdr_len = ps == 8 ? 40 : 32;
	if (adac_read(t, addr, hdr, hdr_len, err)) {
		adac_error_wrap(err, "contract descriptor: ");
		return -1;
	}
	uint64_t json_addr = 0, pdata_addr = 0;
	uint32_t pcount;
	if (ps == 8) {
		memcpy(&json_addr, hdr + 16, 8);
		memcpy(&pcount, hdr + 24, 4);
		memcpy(&pdata_addr, hdr + 32, 8);
	} else {
		uint32_t a, b;
		memcpy(&a, hdr + 16, 4);
		memcpy(&pcount, hdr + 20, 4);
		memcpy(&b, hdr + 28, 4);
		json_addr = a;
		pdata_addr = b;
	}
	if (json_size == 0 || json_size > ADAC_MAX_DESCRIPTOR_BYTES)
		return adac_fail(err, ADAC_E_CORRUPT, addr, "contract descriptor at 0x%llx claims %u bytes of JSON (limit %u)",
		                 (unsigned long long)addr, json_size, ADAC_MAX_DESCRIPTOR_BYTES);
	if (pcount > ADAC_MAX_POINTER_DATA)
		return adac_fail(err, ADAC_E_CORRUPT, addr, "contract descriptor at 0x%llx claims %u pointers (limit %u)",
		                 (unsigned long long)addr, pcount, ADAC_MAX_POINTER_DATA);

	add_region(d, addr, hdr_len);
	add_region(d, json_addr, json_size);
	add_region(d, pdata_addr, (uint64_t)pcount * ps);
	struct adac_desc_blob *blob = &d->blobs[d->nblobs++];
	snprintf(blob->name, sizeof blob->name, "%s", name);
	blob->addr = addr;
	blob->flags = flags;
	blob->json_size = json_size;
	blob->pointer_count = pcount;

	char *json = malloc(json_size);
	uint64_t *pdata = calloc(pcount ? pcount : 1, sizeof *pdata);
	int rc = -1;
	if (!json || !pdata) {
		adac_fail(err, ADAC_E_NOMEM, addr, "out of memory reading the contract descriptor");
		goto out;
	}
	if (adac_read(t, json_addr, json, json_size, err)) {
		adac_error_wrap(err, "contract descriptor JSON: ");
		goto out;
	}
	size_t len = json_size;
	while (len > 0 && json[len - 1] == '\0')
		len--;
	for (uint32_t i = 0; i < pcount; i++) {
		if (adac_read_ptr(t, pdata_addr + (uint64_t)i * ps, &pdata[i], err)) {
			adac_error_wrap(err, "contract descriptor pointer data: ");
			goto out;
		}
	}
	if (adac_desc_parse_json(d, json, len, pdata, pcount, err)) {
		if (name[0])
			adac_error_wrap(err, "sub-descriptor %s: ", name);
		goto out;
	}
	/* Copy the pending list: recursion overwrites it. */
	size_t nsub = d->npending;
	char sub_name[ADAC_MAX_DESCRIPTOR_BLOBS][64];
	uint64_t sub_ptr[ADAC_MAX_DESCRIPTOR_BLOBS];
	memcpy(sub_name, d->pending_name, sizeof sub_name);
	memcpy(sub_ptr, d->pending_addr, sizeof sub_ptr);
	for (size_t i = 0; i < nsub; i++) {
		uint64_t sub = 0;
		if (sub_ptr[i] == 0)
			continue;
		add_region(d, sub_ptr[i], ps);  /* NULL now, set later by the runtime: a change */
		if (adac_read_ptr(t, sub_ptr[i], &sub, err)) {
			adac_error_wrap(err, "sub-descriptor %s: ", sub_name[i]);
			goto out;
		}
		if (sub == 0)
			continue; /* that part of the runtime exposes no descriptor */
		if (load_one(t, sub, sub_name[i], depth + 1, d, err))
			goto out;
	}
	rc = 0;
out:
	free(json);
	free(pdata);
	return rc;
}

/* FNV-1a of the regions' bytes as the target has them now; false when one cannot be read. */
static bool digest_regions(struct adac_target *t, const struct adac_descriptor *d, uint64_t *digest)
{
	uint64_t h = FNV_BASIS;
	uint8_t buf[4096];
	for (size_t i = 0; i < d->nregions; i++) {
		for (uint64_t done = 0; done < d->regions[i].len;) {
			size_t n = d->regions[i].len - done < sizeof buf ? (size_t)(d->regions[i].len - done) : sizeof buf;
			if (adac_read(t, d->regions[i].addr + done, buf, n, NULL))
				return false;
			for (size_t j = 0; j < n; j++)
				h = (h ^ buf[j]) * 0x100000001b3ull;
			done += n;
		}
	}
	*digest = h;
	return true;
}

int adac_desc_load(struct adac_target *t, uint64_t addr, struct adac_descriptor *d, struct adac_error *err)
{
	if (load_one(t, addr, "", 0, d, err))
		return -1;
	if (!digest_regions(t, d, &d->digest))
		return adac_fail(err, ADAC_E_READ, addr, "contract descriptor at 0x%llx: cannot read it again",
		                 (unsigned long long)addr);
	return 0;
}

bool adac_desc_unchanged(struct adac_target *t, const struct adac_descriptor *d)
{
	uint64_t now;
	return digest_regions(t, d, &now) && now == d->digest;
}

const char *adac_desc_version(const struct adac_descriptor *d) { return d->version; }
const char *adac_desc_baseline(const struct adac_descriptor *d) { return d->baseline; }
unsigned adac_desc_ptr_size(const struct adac_descriptor *d) { return d->ptr_size; }
size_t adac_desc_blob_count(const struct adac_descriptor *d) { return d->nblobs; }
const struct adac_desc_blob *adac_desc_blob(const struct adac_descriptor *d, size_t i)
{
	return i < d->nblobs ? &d->blobs[i] : NULL;
}

/* Names the runtime in layout errors, so a user can tell an unknown version from corruption. */
static const char *runtime_label(const struct adac_descriptor *d)
{
	const char *v = adac_desc_global_string(d, "RuntimeProductVersionString");
	return v ? v : "of unknown version";
}

bool adac_desc_has_type(const struct adac_descriptor *d, const char *type)
{
	return json_object_get(d->types, type) != NULL;
}

bool adac_desc_has_field(const struct adac_descriptor *d, const char *type, const char *field)
{
	return json_object_get(json_object_get(d->types, type), field) != NULL;
}

int adac_desc_type_size(const struct adac_descriptor *d, const char *type, uint32_t *size, struct adac_error *err)
{
	json_t *t = json_object_get(d->types, type);
	if (!t)
		return adac_fail(err, ADAC_E_LAYOUT, 0, "the runtime (%s) describes no type %s", runtime_label(d), type);
	uint64_t v;
	json_t *s = json_object_get(t, "!");
	if (!s || !json_number(s, &v) || v > UINT32_MAX)
		return adac_fail(err, ADAC_E_LAYOUT, 0, "the runtime (%s) gives no size for type %s", runtime_label(d), type);
	*size = (uint32_t)v;
	return 0;
}

int adac_desc_field(const struct adac_descriptor *d, const char *type, const char *field, uint32_t *offset,
                    struct adac_error *err)
{
	json_t *t = json_object_get(d->types, type);
	if (!t)
		return adac_fail(err, ADAC_E_LAYOUT, 0, "the runtime (%s) describes no type %s", runtime_label(d), type);
	json_t *f = json_object_get(t, field);
	if (!f)
		return adac_fail(err, ADAC_E_LAYOUT, 0, "the runtime (%s) describes no field %s.%s", runtime_label(d), type,
		                 field);
	uint64_t v = 0;
	json_number(json_is_array(f) ? json_array_get(f, 0) : f, &v); /* validated when merged */
	*offset = (uint32_t)v;
	return 0;
}

size_t adac_desc_type_count(const struct adac_descriptor *d) { return json_object_size(d->types); }

static const struct global *find_global(const struct adac_descriptor *d, const char *name)
{
	json_t *i = json_object_get(d->global_idx, name);
	return i ? &d->globals[json_integer_value(i)] : NULL;
}

bool adac_desc_has_global(const struct adac_descriptor *d, const char *name) { return find_global(d, name) != NULL; }

int adac_desc_global(const struct adac_descriptor *d, const char *name, uint64_t *value, struct adac_error *err)
{
	const struct global *g = find_global(d, name);
	if (!g)
		return adac_fail(err, ADAC_E_LAYOUT, 0, "the runtime (%s) describes no global %s", runtime_label(d), name);
	if (!g->has_value)
		return adac_fail(err, ADAC_E_LAYOUT, 0, "the runtime's global %s is not a number (\"%s\")", name,
		                 g->str ? g->str : "");
	*value = g->value;
	return 0;
}

const char *adac_desc_global_string(const struct adac_descriptor *d, const char *name)
{
	const struct global *g = find_global(d, name);
	return g ? g->str : NULL;
}

size_t adac_desc_global_count(const struct adac_descriptor *d) { return d->nglobals; }

const char *adac_desc_contract(const struct adac_descriptor *d, const char *name)
{
	return json_string_value(json_object_get(d->contracts, name));
}

size_t adac_desc_contract_count(const struct adac_descriptor *d) { return json_object_size(d->contracts); }

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static int cmp_offset(const void *a, const void *b)
{
	const struct adac_desc_field *x = a, *y = b;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Names of a JSON object's keys, sorted (caller frees the array, not the names). */
static const char **sorted_keys(json_t *obj, size_t *n)
{
	*n = json_object_size(obj);
	const char **names = malloc((*n ? *n : 1) * sizeof *names);
	if (!names)
		return NULL;
	size_t k = 0;
	const char *key;
	json_t *v;
	json_object_foreach(obj, key, v) names[k++] = key;
	qsort(names, *n, sizeof *names, cmp_str);
	return names;
}

const char *adac_desc_contract_at(const struct adac_descriptor *d, size_t i, const char **version)
{
	size_t n;
	const char **names = sorted_keys(d->contracts, &n);
	if (!names || i >= n) {
		free(names);
		return NULL;
	}
	const char *name = names[i];
	free(names);
	*version = json_string_value(json_object_get(d->contracts, name));
	return name;
}

int adac_desc_resolve(const struct adac_descriptor *d, const struct adac_field_spec *specs, size_t n,
                      uint32_t *values, uint8_t *has, struct adac_error *err)
{
	for (size_t i = 0; i < n; i++) {
		const struct adac_field_spec *s = &specs[i];
		has[i] = 0;
		values[i] = 0;
		uint32_t size = 0;
		bool sized = adac_desc_type_size(d, s->type, &size, NULL) == 0;
		if (!s->field) {
			if (sized) {
				if (size > ADAC_MAX_TYPE_SIZE)
					return adac_fail(err, ADAC_E_LAYOUT, 0, "the runtime's type %s is %u bytes (limit %u)", s->type,
					                 size, ADAC_MAX_TYPE_SIZE);
				values[i] = size;
				has[i] = 1;
			} else if (s->required) {
				return adac_desc_type_size(d, s->type, &size, err);
			}
			continue;
		}
		if (!adac_desc_has_field(d, s->type, s->field)) {
			if (s->required)
				return adac_desc_field(d, s->type, s->field, &values[i], err);
			continue;
		}
		adac_desc_field(d, s->type, s->field, &values[i], NULL);
		if (sized && (uint64_t)values[i] + s->width > size)
			return adac_fail(err, ADAC_E_LAYOUT, 0, "the runtime's field %s.%s at offset %u does not fit its %u-byte type",
			                 s->type, s->field, values[i], size);
		if (s->width > 1 && s->width <= 8 && (values[i] % s->width) != 0)
			return adac_fail(err, ADAC_E_LAYOUT, 0, "the runtime's field %s.%s at offset %u is not %u-byte aligned",
			                 s->type, s->field, values[i], s->width);
		has[i] = 1;
	}
	return 0;
}

int adac_desc_resolve_defs(const struct adac_descriptor *d, const struct adac_field_def *defs, size_t n,
                           const char *const *type_names, unsigned ptr_size, uint32_t *values, uint8_t *has,
                           uint8_t *widths, struct adac_error *err)
{
	for (size_t i = 0; i < n; i++) {
		struct adac_field_spec spec = {type_names[defs[i].type], defs[i].field,
		                               defs[i].width == ADAC_WIDTH_PTR ? (uint8_t)ptr_size : defs[i].width,
		                               defs[i].required};
		if (widths)
			widths[i] = spec.width;
		if (adac_desc_resolve(d, &spec, 1, &values[i], &has[i], err))
			return -1;
	}
	return 0;
}

const char **adac_desc_names(const struct adac_descriptor *d, enum adac_desc_kind kind, size_t *n)
{
	switch (kind) {
	case ADAC_DESC_TYPES: return sorted_keys(d->types, n);
	case ADAC_DESC_GLOBALS: return sorted_keys(d->global_idx, n);
	case ADAC_DESC_CONTRACTS: return sorted_keys(d->contracts, n);
	}
	*n = 0;
	return NULL;
}

struct adac_desc_field *adac_desc_fields(const struct adac_descriptor *d, const char *type, size_t *n)
{
	json_t *fields = json_object_get(d->types, type);
	size_t k = 0;
	struct adac_desc_field *fo = malloc((json_object_size(fields) ? json_object_size(fields) : 1) * sizeof *fo);
	if (!fo) {
		*n = 0;
		return NULL;
	}
	const char *fname;
	json_t *fv;
	json_object_foreach(fields, fname, fv) {
		if (strcmp(fname, "!") == 0)
			continue;
		uint64_t off = 0;
		json_number(json_is_array(fv) ? json_array_get(fv, 0) : fv, &off);
		fo[k++] = (struct adac_desc_field){fname, off};
	}
	qsort(fo, k, sizeof *fo, cmp_offset);
	*n = k;
	return fo;
}

size_t adac_desc_pending_count(const struct adac_descriptor *d) { return d->npending; }

const char *adac_desc_pending_sub(const struct adac_descriptor *d, size_t i, uint64_t *addr)
{
	if (i >= d->npending)
		return NULL;
	*addr = d->pending_addr[i];
	return d->pending_name[i];
}
