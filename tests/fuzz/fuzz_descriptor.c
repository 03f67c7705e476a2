/* fuzz_descriptor.c - the contract descriptor parser (adac_desc_parse_json) on arbitrary bytes.
 * The input is the JSON up to its first NUL byte; the bytes after the NUL are the pointer_data
 * slots (8 bytes each, little endian; none: a NULL array). Without a NUL, 64 slots i = 0x7f0000000000 + 16 * i (slot 0
 * = 0), as in tests/data/descriptor. A parsed descriptor is dumped, every type, field, global and
 * contract jansson sees in the same JSON is looked up through the public API (and must be there),
 * fields are resolved through adac_desc_resolve, and merging the same JSON again must fail exactly
 * when it defines anything. */
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "asyncdac.h"
#include "runtime/descriptor.h"
#include "view/runtime_view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define DEFAULT_SLOTS 64u
#define MAX_SPECS 256u

static void check_failed(int rc, const struct adac_error *err)
{
	if (rc != 0 && (err->code == ADAC_E_OK || err->msg[0] == '\0'))
		__builtin_trap();
}

struct sink {
	size_t bytes;
	char last;
};

static void sink_write(void *ctx, const char *text, size_t len)
{
	struct sink *s = ctx;
	s->bytes += len;
	if (len)
		s->last = text[len - 1];
}

static const char *const type_names[] = {"A", "B"};

/* Everything jansson sees in root is in d. */
static void check_against_json(const struct adac_descriptor *d, json_t *root)
{
	json_t *types = json_object_get(root, "types");
	json_t *globals = json_object_get(root, "globals");
	json_t *contracts = json_object_get(root, "contracts");
	if (adac_desc_type_count(d) != json_object_size(types) || adac_desc_global_count(d) != json_object_size(globals) ||
	    adac_desc_contract_count(d) != json_object_size(contracts))
		__builtin_trap();
	struct adac_field_spec specs[MAX_SPECS];
	size_t nspecs = 0;
	const char *tname, *fname, *name;
	json_t *fields, *fv, *v;
	json_object_foreach(types, tname, fields) {
		uint32_t size = 0, off = 0;
		struct adac_error err = {0};
		if (!adac_desc_has_type(d, tname))
			__builtin_trap();
		int rc = adac_desc_type_size(d, tname, &size, &err);
		check_failed(rc, &err);
		if ((rc == 0) != (json_object_get(fields, "!") != NULL))
			__builtin_trap();
		if (nspecs < MAX_SPECS) {
			specs[nspecs] = (struct adac_field_spec){tname, NULL, 0, (nspecs & 1) != 0};
			nspecs++;
		}
		json_object_foreach(fields, fname, fv) {
			adac_error_clear(&err);
			if (!adac_desc_has_field(d, tname, fname) || adac_desc_field(d, tname, fname, &off, &err) != 0)
				__builtin_trap();
			if (nspecs < MAX_SPECS && strcmp(fname, "!") != 0)
				specs[nspecs++] = (struct adac_field_spec){tname, fname, (uint8_t)(1u << (off & 3)), (off & 4) != 0};
		}
		adac_error_clear(&err);
		rc = adac_desc_field(d, tname, "\x01no such field", &off, &err);
		if (rc == 0 || err.code != ADAC_E_LAYOUT)
			__builtin_trap();
	}
	json_object_foreach(globals, name, v) {
		uint64_t value = 0;
		struct adac_error err = {0};
		if (!adac_desc_has_global(d, name))
			__builtin_trap();
		int rc = adac_desc_global(d, name, &value, &err);
		check_failed(rc, &err);
		if (rc != 0 && err.code != ADAC_E_LAYOUT)
			__builtin_trap();
		const char *str = adac_desc_global_string(d, name);
		if (rc != 0 && !str)
			__builtin_trap(); /* a global without a number is a string */
	}
	json_object_foreach(contracts, name, v) {
		if (!adac_desc_contract(d, name))
			__builtin_trap();
	}
	const char *prev = NULL;
	for (size_t i = 0; i <= adac_desc_contract_count(d); i++) {
		const char *version = NULL;
		const char *c = adac_desc_contract_at(d, i, &version);
		if ((c == NULL) != (i == adac_desc_contract_count(d)) || (c && (!version || (prev && strcmp(prev, c) >= 0))))
			__builtin_trap();
		prev = c;
	}

	uint32_t values[MAX_SPECS];
	uint8_t has[MAX_SPECS];
	struct adac_error err = {0};
	int rc = adac_desc_resolve(d, specs, nspecs, values, has, &err);
	if (rc != 0 && err.code != ADAC_E_LAYOUT)
		__builtin_trap();
	for (size_t i = 0; rc == 0 && i < nspecs; i++)
		if (specs[i].required && !has[i])
			__builtin_trap();
	const struct adac_field_def defs[] = {
		{0, NULL, 0, false}, {0, "X", ADAC_WIDTH_PTR, false}, {1, "Y", 4, false}, {1, NULL, 0, false},
	};
	uint8_t widths[4];
	adac_error_clear(&err);
	rc = adac_desc_resolve_defs(d, defs, 4, type_names, 8, values, has, widths, &err);
	if (rc != 0 && err.code != ADAC_E_LAYOUT)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t json_len = nul ? (size_t)(nul - data) : size;
	uint64_t *pdata;
	size_t npdata;
	if (nul) {
		npdata = (size - json_len - 1) / 8;
		pdata = malloc((npdata ? npdata : 1) * sizeof *pdata);
		memcpy(pdata, nul + 1, npdata * 8);
	} else {
		npdata = DEFAULT_SLOTS;
		pdata = malloc(npdata * sizeof *pdata);
		for (size_t i = 0; i < npdata; i++)
			pdata[i] = i ? 0x7f0000000000ull + 16 * i : 0;
	}
	const char *json = (const char *)data;

	struct adac_descriptor *d = adac_desc_new();
	struct adac_error err = {0};
	int rc = adac_desc_parse_json(d, json, json_len, npdata ? pdata : NULL, npdata, &err);
	check_failed(rc, &err);
	if (rc == 0) {
		struct sink s = {0, 0};
		struct adac_out out = {.write = sink_write, .ctx = &s};
		adac_desc_dump(d, &out);
		if (s.bytes == 0 || s.last != '\n')
			__builtin_trap();
		(void)adac_desc_version(d);
		(void)adac_desc_baseline(d);
		if (adac_desc_ptr_size(d) != 8 || adac_desc_blob_count(d) != 0 || adac_desc_blob(d, 0))
			__builtin_trap();

		json_error_t jerr;
		json_t *root = json_loadb(json, json_len, JSON_REJECT_DUPLICATES, &jerr);
		if (!root || !json_is_object(root))
			__builtin_trap(); /* the parser took it: so does jansson */
		/* Names the document may or may not define (JSON keys can be anything, "" included). */
		if (adac_desc_has_type(d, "\x01none") != (json_object_get(json_object_get(root, "types"), "\x01none") != NULL) ||
		    adac_desc_has_global(d, "") != (json_object_get(json_object_get(root, "globals"), "") != NULL) ||
		    (adac_desc_contract(d, "\x01none") != NULL) !=
		        (json_object_get(json_object_get(root, "contracts"), "\x01none") != NULL))
			__builtin_trap();
		check_against_json(d, root);

		/* Merging the same JSON again: every name it defines is defined twice. */
		bool defines = json_object_size(json_object_get(root, "types")) ||
		               json_object_size(json_object_get(root, "globals")) ||
		               json_object_size(json_object_get(root, "contracts"));
		adac_error_clear(&err);
		rc = adac_desc_parse_json(d, json, json_len, npdata ? pdata : NULL, npdata, &err);
		check_failed(rc, &err);
		if ((rc != 0) != defines || (rc != 0 && err.code != ADAC_E_CORRUPT))
			__builtin_trap();
		json_decref(root);
	}
	adac_desc_free(d);
	free(pdata);
	return 0;
}
