/* fuzz_ecma_metadata.c - the ECMA-335 reader on arbitrary bytes: a metadata blob ("BSJB", also a
 * standalone portable PDB) through adac_ecma_open_blob, or, for input starting with "MZ", a PE file
 * in a memory target, opened flat and as if mapped (then method bodies too). Every heap entry and
 * every row of every table is then read through the public API, every signature is decoded and
 * formatted in every naming style with metadata names, and the lookups are asked about each row.
 * Results must point into the metadata; a failure always says why. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metadata/ecma_metadata.h"
#include "metadata/signature.h"
#include "target/target.h"
#include "target/target_mem.h"
#include "types/typename.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define IMAGE_BASE 0x10000000ull
/* Rows past which the lookups that scan a table (owners, parameters, names) are not asked again:
 * every row still has its cells and fields read. */
#define DEEP_ROWS 512u

/* Every failure carries a code and a message. */
static void check_failed(int rc, const struct adac_error *err)
{
	if (rc != 0 && (err->code == ADAC_E_OK || err->msg[0] == '\0'))
		__builtin_trap();
}

/* [p, p + n) lies inside the metadata blob. */
static void check_inside(const struct adac_ecma *md, const void *p, size_t n)
{
	size_t len;
	const uint8_t *b = adac_ecma_blob_data(md, &len);
	const uint8_t *q = p;
	if (n == 0)
		return;
	if (q < b || q > b + len || n > (size_t)(b + len - q))
		__builtin_trap();
}

static void check_string(const struct adac_ecma *md, const char *s)
{
	size_t len;
	const uint8_t *b = adac_ecma_blob_data(md, &len);
	if (!s)
		__builtin_trap();
	if ((const uint8_t *)s >= b && (const uint8_t *)s < b + len)
		check_inside(md, s, strlen(s) + 1);
	else if (*s)
		__builtin_trap(); /* only "" (index 0 of an absent heap) lies outside */
}

static void walk_heaps(const struct adac_ecma *md)
{
	uint32_t n = 0;
	(void)adac_ecma_heap_data(md, 's', &n);
	for (uint32_t i = 0; i <= n;) {
		const char *s = NULL;
		struct adac_error err = {0};
		int rc = adac_ecma_string(md, i, &s, &err);
		check_failed(rc, &err);
		if (rc != 0)
			break;
		check_string(md, s);
		i += (uint32_t)strlen(s) + 1;
	}
	const uint8_t *heap = adac_ecma_heap_data(md, 'b', &n);
	for (uint32_t i = 0; i <= n;) {
		const uint8_t *p = NULL;
		uint32_t len = 0;
		struct adac_error err = {0};
		int rc = adac_ecma_blob(md, i, &p, &len, &err);
		check_failed(rc, &err);
		if (rc != 0)
			break;
		check_inside(md, p, len);
		i = i == 0 ? 1 : (uint32_t)(p - heap) + len; /* the next entry; a header is at least a byte */
	}
	heap = adac_ecma_heap_data(md, 'u', &n);
	for (uint32_t i = 0; i <= n;) {
		const uint8_t *p = NULL;
		uint32_t len = 0;
		struct adac_error err = {0};
		int rc = adac_ecma_user_string(md, i, &p, &len, &err);
		check_failed(rc, &err);
		if (rc != 0) {
			if (i == 0) {
				i = 1; /* index 0 is never a #US entry */
				continue;
			}
			break;
		}
		check_inside(md, p, len);
		/* len excludes the flag byte; an empty entry has a one-byte length of 0 or 1 */
		i = (uint32_t)(p - heap) + (len ? len + 1 : heap[i]);
	}
	(void)adac_ecma_heap_data(md, 'g', &n);
	for (uint32_t i = 0; i <= n / 16 + 1; i++) {
		uint8_t guid[16];
		struct adac_error err = {0};
		check_failed(adac_ecma_guid(md, i, guid, &err), &err);
	}
	const uint32_t far[] = {UINT32_MAX, 0x7fffffffu, 0x10000u};
	for (unsigned k = 0; k < 3; k++) {
		const char *s;
		const uint8_t *p;
		uint32_t len;
		uint8_t guid[16];
		struct adac_error e1 = {0}, e2 = {0}, e3 = {0}, e4 = {0};
		check_failed(adac_ecma_string(md, far[k], &s, &e1), &e1);
		check_failed(adac_ecma_blob(md, far[k], &p, &len, &e2), &e2);
		check_failed(adac_ecma_guid(md, far[k], guid, &e3), &e3);
		check_failed(adac_ecma_user_string(md, far[k], &p, &len, &e4), &e4);
	}
}

/* Formats a decoded signature with metadata names in every style. */
static void format_sig(const struct adac_ecma *md, const uint8_t *blob, uint32_t len, enum adac_sig_kind kind,
                       uint32_t type_token, uint32_t method_token)
{
	check_inside(md, blob, len);
	struct adac_sig *s = NULL;
	struct adac_error err = {0};
	int rc = adac_sig_decode(blob, len, kind, 8, &s, &err);
	check_failed(rc, &err);
	if (rc != 0)
		return;
	struct adac_type_ctx n;
	adac_type_ctx_for_metadata(&n, md, type_token, method_token);
	static const enum adac_name_style styles[] = {ADAC_STYLE_SOS, ADAC_STYLE_CSHARP, ADAC_STYLE_DAC};
	for (unsigned k = 0; k < 3; k++) {
		enum adac_name_style style = styles[k];
		unsigned flags = k == 0 ? ADAC_TN_NO_NAMESPACE : 0;
		struct adac_sig_text t = {0};
		struct adac_error e = {0};
		int frc = 0;
		switch (kind) {
		case ADAC_SIG_METHOD:
		case ADAC_SIG_PROPERTY:
			frc = adac_tn_sig(&n, s->method.ret, style, flags, &t, &e);
			if (frc == 0)
				frc = adac_tn_params(&n, &s->method, style, flags, &t, &e);
			break;
		case ADAC_SIG_LOCALS:
		case ADAC_SIG_METHODSPEC:
			for (uint32_t i = 0; frc == 0 && i < s->count; i++)
				frc = adac_tn_sig(&n, s->types[i], style, flags, &t, &e);
			break;
		default:
			frc = adac_tn_sig(&n, s->type, style, flags, &t, &e);
			break;
		}
		check_failed(frc, &e);
		if (strlen(adac_sig_text_str(&t)) != t.len)
			__builtin_trap();
		adac_sig_text_free(&t);
	}
	adac_sig_free(s);
}

static void type_token_names(const struct adac_ecma *md, uint32_t token)
{
	struct adac_type_ctx c;
	adac_type_ctx_for_metadata(&c, md, 0, 0);
	for (unsigned k = 0; k < 6; k++) {
		struct adac_sig_text t = {0};
		struct adac_error err = {0};
		int rc = adac_tn_token(&c, token, (enum adac_name_style)(k % 3),
		                       k >= 3 ? ADAC_TN_NO_NAMESPACE | ADAC_TN_NO_ARITY : 0, &t, &err);
		check_failed(rc, &err);
		adac_sig_text_free(&t);
	}
}

static int count_row(void *ctx, uint32_t rid)
{
	(void)rid;
	(*(uint32_t *)ctx)++;
	return 0;
}

/* Cells of every row of every table, and each_row on every value seen in the first rows. */
static void walk_cells(const struct adac_ecma *md)
{
	for (unsigned tb = 0; tb < ADAC_ECMA_TABLE_COUNT + 1; tb++) {
		uint32_t rows = adac_ecma_rows(md, tb);
		(void)adac_ecma_table_name(tb);
		(void)adac_ecma_row_size(md, tb);
		unsigned ncols = adac_ecma_columns(tb);
		for (uint32_t r = 0; r <= rows + 1; r++) {
			bool probe = r == 0 || r > rows || r == 1; /* rows that do not exist; a column that does not */
			for (unsigned c = 0; c < ncols + probe; c++) {
				uint32_t v = 0;
				struct adac_error err = {0};
				int rc = adac_ecma_cell(md, tb, r, c, &v, &err);
				check_failed(rc, &err);
				if (rc == 0 && r >= 1 && r <= 8) {
					uint32_t hits = 0;
					struct adac_error e2 = {0};
					check_failed(adac_ecma_each_row(md, tb, c, v, count_row, &hits, &e2), &e2);
					/* A scan finds at least the row the value came from (0 may be a nil coded index
					 * whose raw value is not 0; a sorted table's search trusts the order). */
					if (hits == 0 && v != 0 && !(adac_ecma_sorted_mask(md) >> tb & 1))
						__builtin_trap();
				}
			}
		}
	}
}

static void walk_rows(const struct adac_ecma *md)
{
	struct adac_error err = {0};
	struct adac_ecma_module_row mod;
	int rc = adac_ecma_module(md, &mod, &err);
	check_failed(rc, &err);
	if (rc == 0)
		check_string(md, mod.name);
	const char *aname = NULL;
	adac_error_clear(&err);
	rc = adac_ecma_assembly_name(md, &aname, &err);
	check_failed(rc, &err);

	for (uint32_t r = 0; r <= adac_ecma_rows(md, ADAC_ECMA_TYPEREF) + 1; r++) {
		struct adac_ecma_typeref tr;
		adac_error_clear(&err);
		rc = adac_ecma_typeref(md, r, &tr, &err);
		check_failed(rc, &err);
		if (rc == 0) {
			check_string(md, tr.name);
			check_string(md, tr.ns);
			if (r <= DEEP_ROWS)
				type_token_names(md, ADAC_ECMA_TOKEN(ADAC_ECMA_TYPEREF, r));
		}
	}
	for (uint32_t r = 0; r <= adac_ecma_rows(md, ADAC_ECMA_TYPEDEF) + 1; r++) {
		struct adac_ecma_typedef td;
		adac_error_clear(&err);
		rc = adac_ecma_typedef(md, r, &td, &err);
		check_failed(rc, &err);
		if (rc != 0 || r > DEEP_ROWS)
			continue;
		check_string(md, td.name);
		check_string(md, td.ns);
		uint32_t token = ADAC_ECMA_TOKEN(ADAC_ECMA_TYPEDEF, r), v = 0;
		type_token_names(md, token);
		struct adac_error e = {0};
		check_failed(adac_ecma_enclosing_type(md, r, &v, &e), &e);
		adac_error_clear(&e);
		check_failed(adac_ecma_generic_param_count(md, token, &v, &e), &e);
		adac_error_clear(&e);
		check_failed(adac_ecma_generic_param(md, token, 0, &v, &e), &e);
		adac_error_clear(&e);
		rc = adac_ecma_find_typedef(md, td.ns, td.name, 0, &v, &e);
		check_failed(rc, &e);
		for (uint32_t pos = td.field_first; pos < td.field_end && pos < td.field_first + 64; pos++) {
			uint32_t f = 0, owner = 0;
			struct adac_ecma_field fd;
			adac_error_clear(&e);
			if (adac_ecma_list_item(md, ADAC_ECMA_FIELD, pos, &f, &e) != 0) {
				check_failed(-1, &e);
				continue;
			}
			adac_error_clear(&e);
			check_failed(adac_ecma_field_owner(md, f, &owner, &e), &e);
			adac_error_clear(&e);
			if (adac_ecma_field(md, f, &fd, &e) == 0) {
				adac_error_clear(&e);
				check_failed(adac_ecma_find_field(md, r, fd.name, &v, &e), &e);
				format_sig(md, fd.sig, fd.sig_len, ADAC_SIG_FIELD, token, 0);
			} else {
				check_failed(-1, &e);
			}
			adac_error_clear(&e);
			check_failed(adac_ecma_constant_of(md, ADAC_ECMA_TOKEN(ADAC_ECMA_FIELD, f), &v, &e), &e);
		}
		for (uint32_t pos = td.method_first; pos < td.method_end && pos < td.method_first + 64; pos++) {
			uint32_t m = 0;
			struct adac_ecma_methoddef mdf;
			adac_error_clear(&e);
			if (adac_ecma_list_item(md, ADAC_ECMA_METHODDEF, pos, &m, &e) != 0) {
				check_failed(-1, &e);
				continue;
			}
			adac_error_clear(&e);
			if (adac_ecma_methoddef(md, m, &mdf, &e) == 0) {
				adac_error_clear(&e);
				check_failed(adac_ecma_find_method(md, r, mdf.name, &v, &e), &e);
				format_sig(md, mdf.sig, mdf.sig_len, ADAC_SIG_METHOD, token, ADAC_ECMA_TOKEN(ADAC_ECMA_METHODDEF, m));
			} else {
				check_failed(-1, &e);
			}
		}
	}
	const char *no = "\x01no such name";
	uint32_t v = 0;
	adac_error_clear(&err);
	check_failed(adac_ecma_find_typedef(md, no, no, 0, &v, &err), &err);
	adac_error_clear(&err);
	check_failed(adac_ecma_find_typedef(md, NULL, no, 1, &v, &err), &err);

	for (uint32_t r = 0; r <= adac_ecma_rows(md, ADAC_ECMA_FIELD) + 1; r++) {
		struct adac_ecma_field fd;
		adac_error_clear(&err);
		rc = adac_ecma_field(md, r, &fd, &err);
		check_failed(rc, &err);
		if (rc == 0) {
			check_string(md, fd.name);
			check_inside(md, fd.sig, fd.sig_len);
		}
	}
	for (uint32_t r = 0; r <= adac_ecma_rows(md, ADAC_ECMA_METHODDEF) + 1; r++) {
		struct adac_ecma_methoddef mdf;
		adac_error_clear(&err);
		rc = adac_ecma_methoddef(md, r, &mdf, &err);
		check_failed(rc, &err);
		if (rc != 0)
			continue;
		check_string(md, mdf.name);
		check_inside(md, mdf.sig, mdf.sig_len);
		if (r > DEEP_ROWS)
			continue;
		uint32_t owner = 0, p = 0;
		struct adac_error e = {0};
		check_failed(adac_ecma_method_owner(md, r, &owner, &e), &e);
		for (uint16_t seq = 0; seq < 3; seq++) {
			adac_error_clear(&e);
			check_failed(adac_ecma_param_of(md, r, seq, &p, &e), &e);
		}
		adac_error_clear(&e);
		check_failed(adac_ecma_generic_param_count(md, ADAC_ECMA_TOKEN(ADAC_ECMA_METHODDEF, r), &p, &e), &e);
		for (uint32_t pos = mdf.param_first; pos < mdf.param_end && pos < mdf.param_first + 64; pos++) {
			adac_error_clear(&e);
			if (adac_ecma_list_item(md, ADAC_ECMA_PARAM, pos, &p, &e) != 0) {
				check_failed(-1, &e);
				continue;
			}
			adac_error_clear(&e);
			check_failed(adac_ecma_constant_of(md, ADAC_ECMA_TOKEN(ADAC_ECMA_PARAM, p), &owner, &e), &e);
		}
		if (adac_ecma_has_image(md) && mdf.rva) {
			struct adac_ecma_method_body body;
			uint64_t addr = 0;
			adac_error_clear(&e);
			check_failed(adac_ecma_method_body(md, mdf.rva, &body, &e), &e);
			adac_error_clear(&e);
			check_failed(adac_ecma_rva_to_addr(md, mdf.rva, 16, &addr, &e), &e);
		}
	}
	for (uint32_t r = 0; r <= adac_ecma_rows(md, ADAC_ECMA_PARAM) + 1; r++) {
		struct adac_ecma_param pr;
		adac_error_clear(&err);
		rc = adac_ecma_param(md, r, &pr, &err);
		check_failed(rc, &err);
		if (rc == 0)
			check_string(md, pr.name);
	}
	for (uint32_t r = 0; r <= adac_ecma_rows(md, ADAC_ECMA_MEMBERREF) + 1; r++) {
		struct adac_ecma_memberref mr;
		adac_error_clear(&err);
		rc = adac_ecma_memberref(md, r, &mr, &err);
		check_failed(rc, &err);
		if (rc == 0 && r <= DEEP_ROWS) {
			check_string(md, mr.name);
			bool field = mr.sig_len && (mr.sig[0] & ADAC_SIG_CC_MASK) == ADAC_SIG_CC_FIELD;
			format_sig(md, mr.sig, mr.sig_len, field ? ADAC_SIG_FIELD : ADAC_SIG_METHOD, 0, 0);
		}
	}
	for (uint32_t r = 0; r <= adac_ecma_rows(md, ADAC_ECMA_CONSTANT) + 1; r++) {
		struct adac_ecma_constant c;
		adac_error_clear(&err);
		rc = adac_ecma_constant(md, r, &c, &err);
		check_failed(rc, &err);
		if (rc == 0)
			check_inside(md, c.value, c.value_len);
	}
	for (uint32_t r = 0; r <= adac_ecma_rows(md, ADAC_ECMA_GENERICPARAM) + 1; r++) {
		struct adac_ecma_genericparam gp;
		adac_error_clear(&err);
		rc = adac_ecma_genericparam(md, r, &gp, &err);
		check_failed(rc, &err);
		if (rc == 0)
			check_string(md, gp.name);
	}
	for (uint32_t r = 0; r <= adac_ecma_rows(md, ADAC_ECMA_TYPESPEC) + 1; r++) {
		const uint8_t *sig = NULL;
		uint32_t len = 0;
		adac_error_clear(&err);
		rc = adac_ecma_typespec(md, r, &sig, &len, &err);
		check_failed(rc, &err);
		if (rc == 0 && r <= DEEP_ROWS) {
			format_sig(md, sig, len, ADAC_SIG_TYPESPEC, 0, 0);
			type_token_names(md, ADAC_ECMA_TOKEN(ADAC_ECMA_TYPESPEC, r));
		}
	}
	for (uint32_t r = 0; r <= adac_ecma_rows(md, ADAC_ECMA_METHODSPEC) + 1; r++) {
		struct adac_ecma_methodspec ms;
		adac_error_clear(&err);
		rc = adac_ecma_methodspec(md, r, &ms, &err);
		check_failed(rc, &err);
		if (rc == 0 && r <= DEEP_ROWS)
			format_sig(md, ms.inst, ms.inst_len, ADAC_SIG_METHODSPEC, 0, 0);
	}
	for (uint32_t r = 0; r <= adac_ecma_rows(md, ADAC_ECMA_STANDALONESIG) + 1; r++) {
		const uint8_t *sig = NULL;
		uint32_t len = 0;
		adac_error_clear(&err);
		rc = adac_ecma_standalonesig(md, r, &sig, &len, &err);
		check_failed(rc, &err);
		if (rc == 0 && r <= DEEP_ROWS)
			format_sig(md, sig, len, len && sig[0] == ADAC_SIG_CC_LOCALS ? ADAC_SIG_LOCALS : ADAC_SIG_METHOD, 0, 0);
	}
	for (uint32_t r = 1; r <= adac_ecma_rows(md, ADAC_ECMA_PROPERTY) && r <= DEEP_ROWS; r++) {
		uint32_t index = 0, len = 0;
		const uint8_t *sig = NULL;
		adac_error_clear(&err);
		if (adac_ecma_cell(md, ADAC_ECMA_PROPERTY, r, 2, &index, &err) == 0 &&
		    adac_ecma_blob(md, index, &sig, &len, &err) == 0)
			format_sig(md, sig, len, ADAC_SIG_PROPERTY, 0, 0);
	}
	for (uint32_t r = 0; r <= adac_ecma_rows(md, ADAC_ECMA_ASSEMBLYREF) + 1; r++) {
		struct adac_ecma_assemblyref ar;
		adac_error_clear(&err);
		rc = adac_ecma_assemblyref(md, r, &ar, &err);
		check_failed(rc, &err);
		if (rc == 0) {
			check_string(md, ar.name);
			check_string(md, ar.culture);
			check_inside(md, ar.public_key, ar.public_key_len);
		}
	}
	/* Tokens of tables that are not types, and list items past the lists. */
	const uint32_t odd[] = {0, ADAC_ECMA_TOKEN(ADAC_ECMA_FIELD, 1), ADAC_ECMA_TOKEN(ADAC_ECMA_TYPESPEC, 0xffffff)};
	for (unsigned k = 0; k < 3; k++)
		type_token_names(md, odd[k]);
	const unsigned lists[] = {ADAC_ECMA_FIELD, ADAC_ECMA_METHODDEF, ADAC_ECMA_PARAM, ADAC_ECMA_TYPEDEF};
	for (unsigned k = 0; k < 4; k++) {
		uint32_t rid;
		adac_error_clear(&err);
		check_failed(adac_ecma_list_item(md, lists[k], 0, &rid, &err), &err);
		adac_error_clear(&err);
		check_failed(adac_ecma_list_item(md, lists[k], UINT32_MAX, &rid, &err), &err);
	}
}

static void walk(const struct adac_ecma *md)
{
	(void)adac_ecma_version(md);
	(void)adac_ecma_heap_sizes(md);
	(void)adac_ecma_uncompressed(md);
	(void)adac_ecma_image_base(md);
	(void)adac_ecma_image_mapped(md);
	(void)adac_ecma_pdb_id(md);
	if (strlen(adac_ecma_version(md)) > 255)
		__builtin_trap();
	walk_heaps(md);
	walk_cells(md);
	walk_rows(md);
}

static void open_image(const uint8_t *data, size_t size)
{
	struct adac_memimg *img = adac_memimg_new();
	adac_memimg_add(img, IMAGE_BASE, data, size);
	struct adac_error err = {0};
	struct adac_target *t = adac_target_open_memory(img, &err);
	if (!t)
		__builtin_trap();
	for (unsigned mapped = 0; mapped < 2; mapped++) {
		struct adac_ecma *md = NULL;
		adac_error_clear(&err);
		int rc = adac_ecma_open_image(t, IMAGE_BASE, size, mapped != 0, &md, &err);
		check_failed(rc, &err);
		if (rc == 0) {
			if (!adac_ecma_has_image(md) || adac_ecma_image_base(md) != IMAGE_BASE)
				__builtin_trap();
			walk(md);
			uint64_t addr;
			adac_error_clear(&err);
			check_failed(adac_ecma_rva_to_addr(md, UINT32_MAX, 1, &addr, &err), &err);
			adac_ecma_free(md);
		}
	}
	adac_target_close(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= 2 && data[0] == 'M' && data[1] == 'Z') {
		open_image(data, size);
		return 0;
	}
	struct adac_ecma *md = NULL;
	struct adac_error err = {0};
	int rc = adac_ecma_open_blob(data, size, &md, &err);
	check_failed(rc, &err);
	if (rc == 0) {
		if (adac_ecma_has_image(md))
			__builtin_trap();
		walk(md);
		adac_ecma_free(md);
	}
	return 0;
}
