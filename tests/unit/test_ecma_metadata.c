/* test_ecma_metadata.c - the ECMA-335 reader (dac/metadata/ecma_metadata.c): a hand-built metadata blob with
 * known rows, every kind of corruption (truncation at every length, huge and impossible row counts,
 * bad streams, heap indexes, coded indexes and lists), seeded random mutations with a sweep of every
 * accessor (errors only, never a crash; run it under ADAC_SANITIZE), and, when the .NET samples are
 * built, a real assembly read as a flat file and as a mapped image (same answers).
 * The full row-by-row comparison with System.Reflection.Metadata is in test_signature --oracle. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../check.h"
#include "metadata/ecma_metadata.h"
#include "metadata/signature.h"
#include "target/target.h"
#include "target/target_mem.h"
#include "testutil.h"
#include "types/typename.h"

/* ---- A small metadata blob built by hand ---- */

struct mdbuf {
	uint8_t b[4096];
	size_t n;
};

static void put(struct mdbuf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}
static void put8(struct mdbuf *b, uint8_t v) { put(b, &v, 1); }
static void put16(struct mdbuf *b, uint16_t v) { put(b, &v, 2); }
static void put32(struct mdbuf *b, uint32_t v) { put(b, &v, 4); }
static void align4(struct mdbuf *b)
{
	while (b->n % 4)
		put8(b, 0);
}

/* #Strings offsets of the names below. */
static uint16_t str_off(const char *heap, size_t len, const char *s)
{
	for (size_t i = 1; i < len; i += strlen(heap + i) + 1)
		if (strcmp(heap + i, s) == 0)
			return (uint16_t)i;
	return 0;
}

static const char strings[] = "\0Test.dll\0<Module>\0My\0Outer`1\0Inner\0System\0Object\0count\0Run\0Get\0value\0item\0T\0U\0";
static const uint8_t blobs[] = {0x00, 0x02, 0x06, 0x08, 0x05, 0x00, 0x01, 0x01, 0x13, 0x00,
                                0x06, 0x10, 0x01, 0x01, 0x01, 0x1e, 0x00, 0x04, 0x2a, 0x00, 0x00, 0x00};
/* blob offsets: field sig 1, Run sig 4 (void (!0)), Get sig 10 (void <1>(!!0)), constant 17 */

struct layout {
	size_t tables_off;   /* offset of the #~ stream in the blob */
	size_t rows_off;     /* offset of the row counts */
	size_t typedef_off;  /* first TypeDef row */
	size_t methoddef_off;
	size_t strings_hdr;  /* offset of the #Strings stream header */
};

static size_t build(uint8_t *out, struct layout *lay)
{
	size_t sl = sizeof strings; /* includes the final NUL */
#define S(x) str_off(strings, sl, x)
	struct mdbuf t = {0};
	put32(&t, 0);
	put8(&t, 2);
	put8(&t, 0);
	put8(&t, 0); /* heap sizes: all 2-byte */
	put8(&t, 1);
	uint64_t valid = (1ull << 0) | (1ull << 1) | (1ull << 2) | (1ull << 4) | (1ull << 6) | (1ull << 8) | (1ull << 0x0b) |
	                 (1ull << 0x29) | (1ull << 0x2a);
	uint64_t sorted = (1ull << 0x0b) | (1ull << 0x29) | (1ull << 0x2a);
	put(&t, &valid, 8);
	put(&t, &sorted, 8);
	size_t rows_off = t.n;
	const uint32_t rows[] = {1, 1, 3, 1, 2, 2, 1, 1, 2};
	for (unsigned i = 0; i < 9; i++)
		put32(&t, rows[i]);
	/* Module */
	put16(&t, 0), put16(&t, S("Test.dll")), put16(&t, 1), put16(&t, 0), put16(&t, 0);
	/* TypeRef: AssemblyRef-less scope 0, System.Object */
	put16(&t, 0), put16(&t, S("Object")), put16(&t, S("System"));
	/* TypeDef x3 */
	size_t typedef_off = t.n;
	put32(&t, 0), put16(&t, S("<Module>")), put16(&t, 0), put16(&t, 0), put16(&t, 1), put16(&t, 1);
	put32(&t, 0x00100001), put16(&t, S("Outer`1")), put16(&t, S("My")), put16(&t, (1 << 2) | 1), put16(&t, 1), put16(&t, 1);
	put32(&t, 0x00100002), put16(&t, S("Inner")), put16(&t, 0), put16(&t, (1 << 2) | 1), put16(&t, 2), put16(&t, 2);
	/* Field */
	put16(&t, 0x0011), put16(&t, S("count")), put16(&t, 1);
	/* MethodDef x2 */
	size_t methoddef_off = t.n;
	put32(&t, 0), put16(&t, 0), put16(&t, 0x0086), put16(&t, S("Run")), put16(&t, 4), put16(&t, 1);
	put32(&t, 0), put16(&t, 0), put16(&t, 0x0086), put16(&t, S("Get")), put16(&t, 10), put16(&t, 2);
	/* Param x2 */
	put16(&t, 0), put16(&t, 1), put16(&t, S("value"));
	put16(&t, 0), put16(&t, 1), put16(&t, S("item"));
	/* Constant: I4 on Field 1 */
	put16(&t, 0x08), put16(&t, (1 << 2) | 0), put16(&t, 17);
	/* NestedClass: Inner (3) in Outer`1 (2) */
	put16(&t, 3), put16(&t, 2);
	/* GenericParam: T of TypeDef 2, U of MethodDef 2 */
	put16(&t, 0), put16(&t, 0), put16(&t, (2 << 1) | 0), put16(&t, S("T"));
	put16(&t, 0), put16(&t, 0), put16(&t, (2 << 1) | 1), put16(&t, S("U"));
	align4(&t);
#undef S

	struct mdbuf m = {0};
	put32(&m, 0x424a5342);
	put16(&m, 1), put16(&m, 1), put32(&m, 0), put32(&m, 12);
	put(&m, "v4.0.30319\0\0", 12);
	put16(&m, 0), put16(&m, 5);
	/* Headers: offsets patched once the sizes are known. */
	struct {
		const char *name;
		size_t hdr;
		const void *data;
		size_t len;
	} st[5] = {{"#~", 0, t.b, t.n}, {"#Strings", 0, strings, (sl + 3) & ~(size_t)3},
	           {"#Blob", 0, blobs, (sizeof blobs + 3) & ~(size_t)3}, {"#GUID", 0, "0123456789abcdef", 16},
	           {"#US", 0, "\0\0\0\0", 4}};
	for (int i = 0; i < 5; i++) {
		st[i].hdr = m.n;
		put32(&m, 0), put32(&m, (uint32_t)st[i].len);
		put(&m, st[i].name, strlen(st[i].name) + 1);
		align4(&m);
	}
	for (int i = 0; i < 5; i++) {
		uint32_t off = (uint32_t)m.n;
		memcpy(m.b + st[i].hdr, &off, 4);
		size_t avail = i == 1 ? sl : i == 2 ? sizeof blobs : st[i].len;
		put(&m, st[i].data, avail);
		while (m.n < off + st[i].len)
			put8(&m, 0);
	}
	if (lay) {
		lay->tables_off = *(uint32_t *)(void *)(m.b + st[0].hdr);
		lay->rows_off = lay->tables_off + rows_off;
		lay->typedef_off = lay->tables_off + typedef_off;
		lay->methoddef_off = lay->tables_off + methoddef_off;
		lay->strings_hdr = st[1].hdr;
	}
	memcpy(out, m.b, m.n);
	return m.n;
}

/* The metadata name of a type token (no runtime). */
static int token_name(const struct adac_ecma *md, uint32_t token, enum adac_name_style style, unsigned flags,
                      struct adac_sig_text *t, struct adac_error *err)
{
	struct adac_type_ctx c;
	adac_type_ctx_for_metadata(&c, md, 0, 0);
	return adac_tn_token(&c, token, style, flags, t, err);
}

static char *fmt_method_sig(const struct adac_ecma *md, uint32_t rid)
{
	struct adac_error err = {0};
	struct adac_ecma_methoddef m;
	uint32_t owner;
	struct adac_sig *s;
	if (adac_ecma_methoddef(md, rid, &m, &err) || adac_ecma_method_owner(md, rid, &owner, &err) ||
	    adac_sig_decode(m.sig, m.sig_len, ADAC_SIG_METHOD, 8, &s, &err))
		return NULL;
	struct adac_type_ctx n;
	adac_type_ctx_for_metadata(&n, md, ADAC_ECMA_TOKEN(ADAC_ECMA_TYPEDEF, owner), ADAC_ECMA_TOKEN(ADAC_ECMA_METHODDEF, rid));
	struct adac_sig_text t = {0};
	int rc = adac_tn_sig(&n, s->method.ret, ADAC_STYLE_SOS, 0, &t, &err);
	if (rc == 0)
		rc = adac_tn_params(&n, &s->method, ADAC_STYLE_SOS, 0, &t, &err);
	adac_sig_free(s);
	if (rc) {
		adac_sig_text_free(&t);
		return NULL;
	}
	return adac_sig_text_take(&t);
}

static void test_synthetic(void)
{
	uint8_t blob[4096];
	size_t len = build(blob, NULL);
	struct adac_ecma *md = NULL;
	struct adac_error err = {0};
	CHECK(adac_ecma_open_blob(blob, len, &md, &err) == 0);
	if (!md) {
		fprintf(stderr, "synthetic metadata: %s\n", err.msg);
		check_failures++;
		return;
	}
	CHECK_EQ_STR(adac_ecma_version(md), "v4.0.30319");
	CHECK_EQ_U64(adac_ecma_rows(md, ADAC_ECMA_TYPEDEF), 3);
	CHECK_EQ_U64(adac_ecma_row_size(md, ADAC_ECMA_TYPEDEF), 14);
	CHECK_EQ_U64(adac_ecma_row_size(md, ADAC_ECMA_GENERICPARAM), 8);
	CHECK(!adac_ecma_has_image(md));
	struct adac_ecma_module_row mod;
	CHECK(adac_ecma_module(md, &mod, &err) == 0);
	CHECK_EQ_STR(mod.name, "Test.dll");
	uint8_t guid[16];
	CHECK(adac_ecma_guid(md, mod.mvid, guid, &err) == 0 && memcmp(guid, "0123456789abcdef", 16) == 0);
	struct adac_ecma_typedef td;
	CHECK(adac_ecma_typedef(md, 3, &td, &err) == 0);
	CHECK_EQ_STR(td.name, "Inner");
	CHECK_EQ_U64(td.extends, 0x01000001);
	CHECK_EQ_U64(td.method_first, 2);
	CHECK_EQ_U64(td.method_end, 3);
	uint32_t v = 0;
	CHECK(adac_ecma_enclosing_type(md, 3, &v, &err) == 0);
	CHECK_EQ_U64(v, 2);
	CHECK(adac_ecma_enclosing_type(md, 2, &v, &err) == 0);
	CHECK_EQ_U64(v, 0);
	CHECK(adac_ecma_method_owner(md, 1, &v, &err) == 0);
	CHECK_EQ_U64(v, 2);
	CHECK(adac_ecma_method_owner(md, 2, &v, &err) == 0);
	CHECK_EQ_U64(v, 3);
	CHECK(adac_ecma_field_owner(md, 1, &v, &err) == 0);
	CHECK_EQ_U64(v, 2);
	CHECK(adac_ecma_find_typedef(md, "My", "Outer`1", 0, &v, &err) == 0);
	CHECK_EQ_U64(v, 2);
	CHECK(adac_ecma_find_typedef(md, NULL, "Inner", 2, &v, &err) == 0);
	CHECK_EQ_U64(v, 3);
	int rc = adac_ecma_find_typedef(md, "", "Inner", 0, &v, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "no type Inner");
	adac_error_clear(&err);
	CHECK(adac_ecma_find_method(md, 3, "Get", &v, &err) == 0);
	CHECK_EQ_U64(v, 2);
	CHECK(adac_ecma_find_field(md, 2, "count", &v, &err) == 0);
	CHECK_EQ_U64(v, 1);
	CHECK(adac_ecma_constant_of(md, 0x04000001, &v, &err) == 0);
	struct adac_ecma_constant c;
	CHECK(adac_ecma_constant(md, v, &c, &err) == 0);
	CHECK(c.type == 0x08 && c.value_len == 4 && c.value[0] == 0x2a);
	CHECK(adac_ecma_param_of(md, 2, 1, &v, &err) == 0);
	struct adac_ecma_param p;
	CHECK(adac_ecma_param(md, v, &p, &err) == 0);
	CHECK_EQ_STR(p.name, "item");
	rc = adac_ecma_param_of(md, 2, 0, &v, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "MethodDef row 2 has no Param 0");
	adac_error_clear(&err);
	CHECK(adac_ecma_generic_param_count(md, 0x02000002, &v, &err) == 0);
	CHECK_EQ_U64(v, 1);
	CHECK(adac_ecma_generic_param_count(md, 0x02000003, &v, &err) == 0);
	CHECK_EQ_U64(v, 0);
	rc = adac_ecma_generic_param(md, 0x06000002, 1, &v, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "token 0x06000002 has no generic parameter 1");
	adac_error_clear(&err);
	struct adac_sig_text t = {0};
	CHECK(token_name(md, 0x02000003, ADAC_STYLE_SOS, 0, &t, &err) == 0);
	CHECK_EQ_STR(adac_sig_text_str(&t), "My.Outer`1+Inner");
	adac_sig_text_free(&t);
	CHECK(token_name(md, 0x02000003, ADAC_STYLE_SOS, ADAC_TN_NO_ARITY, &t, &err) == 0);
	CHECK_EQ_STR(adac_sig_text_str(&t), "My.Outer+Inner");
	adac_sig_text_free(&t);
	CHECK(token_name(md, 0x02000003, ADAC_STYLE_DAC, ADAC_TN_NO_ARITY, &t, &err) == 0);
	CHECK_EQ_STR(adac_sig_text_str(&t), "Inner");
	adac_sig_text_free(&t);
	CHECK(token_name(md, 0x02000002, ADAC_STYLE_SOS, ADAC_TN_NO_NAMESPACE, &t, &err) == 0);
	CHECK_EQ_STR(adac_sig_text_str(&t), "Outer`1");
	adac_sig_text_free(&t);
	char *s = fmt_method_sig(md, 1);
	CHECK_EQ_STR(s, "Void(T)");
	free(s);
	s = fmt_method_sig(md, 2);
	CHECK_EQ_STR(s, "Void(U)");
	free(s);

	/* Accessors refuse what does not exist. */
	rc = adac_ecma_typedef(md, 4, &td, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "TypeDef row 4 does not exist (the table has 3 rows)");
	adac_error_clear(&err);
	rc = adac_ecma_typedef(md, 0, &td, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "TypeDef row 0 does not exist");
	adac_error_clear(&err);
	const char *str;
	rc = adac_ecma_string(md, 5000, &str, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "#Strings index 0x1388 is past the heap");
	adac_error_clear(&err);
	const uint8_t *bp;
	uint32_t bl;
	rc = adac_ecma_blob(md, 30, &bp, &bl, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "#Blob index 0x1e is past the heap");
	adac_error_clear(&err);
	rc = adac_ecma_guid(md, 2, guid, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "#GUID index 2 is past the heap");
	adac_error_clear(&err);
	uint64_t addr;
	rc = adac_ecma_rva_to_addr(md, 0x2000, 4, &addr, &err);
	CHECK_ERR(rc, &err, ADAC_E_UNSUPPORTED, "metadata was not read from an image");
	adac_error_clear(&err);
	rc = adac_ecma_cell(md, 0x2d, 1, 0, &v, &err);
	CHECK_ERR(rc, &err, ADAC_E_BAD_ARG, "no metadata table 0x2d");
	adac_ecma_free(md);
}

/* One corrupted variant must fail with `code` and a message containing `msg`. */
static void expect_bad(const uint8_t *blob, size_t len, enum adac_errcode code, const char *msg, int line)
{
	struct adac_ecma *md = NULL;
	struct adac_error err = {0};
	int rc = adac_ecma_open_blob(blob, len, &md, &err);
	if (rc == 0 || err.code != code || !strstr(err.msg, msg)) {
		fprintf(stderr, "%s:%d: want %s \"%s\", got rc=%d %s \"%s\"\n", __FILE__, line, adac_errstr(code), msg, rc,
		        adac_errstr(err.code), err.msg);
		check_failures++;
	}
	adac_ecma_free(md);
}

static void test_corrupt(void)
{
	uint8_t good[4096], b[4096];
	struct layout lay;
	size_t len = build(good, &lay);

	/* Every truncation: CORRUPT, never a crash. */
	for (size_t n = 0; n < len; n++) {
		struct adac_ecma *md = NULL;
		struct adac_error err = {0};
		int rc = adac_ecma_open_blob(good, n, &md, &err);
		if (rc == 0 || err.code != ADAC_E_CORRUPT) {
			fprintf(stderr, "truncated to %zu of %zu bytes: rc=%d %s %s\n", n, len, rc, adac_errstr(err.code), err.msg);
			check_failures++;
		}
		adac_ecma_free(md);
	}
	memcpy(b, good, len);
	b[0] = 'X';
	expect_bad(b, len, ADAC_E_CORRUPT, "not BSJB", __LINE__);

	/* Row counts: huge (tables do not fit), impossible (> 24-bit RIDs). */
	memcpy(b, good, len);
	uint32_t huge = 0x00ffffff;
	memcpy(b + lay.rows_off + 2 * 4, &huge, 4);
	expect_bad(b, len, ADAC_E_CORRUPT, "metadata table TypeDef (16777215 rows of 16 bytes) does not fit its stream", __LINE__);
	memcpy(b, good, len);
	uint32_t impossible = 0x01000000;
	memcpy(b + lay.rows_off + 4 * 4, &impossible, 4);
	expect_bad(b, len, ADAC_E_CORRUPT, "metadata table MethodDef claims 16777216 rows", __LINE__);
	memcpy(b, good, len);
	uint32_t big = 70000; /* 4-byte MethodDef indexes: every later table moves */
	memcpy(b + lay.rows_off + 4 * 4, &big, 4);
	expect_bad(b, len, ADAC_E_CORRUPT, "does not fit its stream", __LINE__);

	/* An unknown table bit; a stream past the end; too many streams. */
	memcpy(b, good, len);
	b[lay.tables_off + 8 + 5] |= 0x20; /* valid bit 0x2d */
	expect_bad(b, len, ADAC_E_CORRUPT, "metadata has unknown table 0x2d", __LINE__);
	memcpy(b, good, len);
	uint32_t far = (uint32_t)len;
	memcpy(b + lay.strings_hdr, &far, 4);
	expect_bad(b, len, ADAC_E_CORRUPT, "metadata stream #Strings (offset", __LINE__);
	memcpy(b, good, len);
	uint16_t many = 1000;
	memcpy(b + 16 + 12 + 2, &many, 2);
	expect_bad(b, len, ADAC_E_LIMIT, "metadata root has 1000 streams (limit 64)", __LINE__);

	/* Damage that only an accessor sees: heap index, coded index tag, list range. */
	struct adac_ecma *md = NULL;
	struct adac_error err = {0};
	memcpy(b, good, len);
	uint16_t bad_str = 0x7fff;
	memcpy(b + lay.typedef_off + 14 + 4, &bad_str, 2); /* Outer`1.Name */
	uint16_t bad_coded = (1 << 2) | 3;                 /* TypeDefOrRef tag 3 does not exist */
	memcpy(b + lay.typedef_off + 28 + 8, &bad_coded, 2);
	uint16_t bad_list = 9;                             /* MethodList past the 2 methods */
	memcpy(b + lay.typedef_off + 12, &bad_list, 2);
	CHECK(adac_ecma_open_blob(b, len, &md, &err) == 0);
	if (md) {
		struct adac_ecma_typedef td;
		int rc = adac_ecma_typedef(md, 2, &td, &err);
		CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "TypeDef row 2: #Strings index 0x7fff is past the heap");
		adac_error_clear(&err);
		rc = adac_ecma_typedef(md, 3, &td, &err);
		CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "coded index 0x7 has an invalid tag 3");
		adac_error_clear(&err);
		rc = adac_ecma_typedef(md, 1, &td, &err);
		CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "TypeDef row 1: MethodDef list [9, 1) is outside the 2 rows");
		adac_ecma_free(md);
	}
	/* A type nested in itself. */
	md = NULL;
	adac_error_clear(&err);
	memcpy(b, good, len);
	size_t nested_row = lay.tables_off + (lay.methoddef_off - lay.tables_off) + 2 * 14 + 2 * 6 + 6;
	uint16_t self = 3;
	memcpy(b + nested_row + 2, &self, 2);
	CHECK(adac_ecma_open_blob(b, len, &md, &err) == 0);
	if (md) {
		uint32_t enc;
		int rc = adac_ecma_enclosing_type(md, 3, &enc, &err);
		CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "TypeDef row 3 is nested in itself");
		adac_ecma_free(md);
	}
}

/* Every accessor over every row, formatting every signature: errors are fine, crashes are not. */
static unsigned sweep(const struct adac_ecma *md)
{
	unsigned errors = 0;
	struct adac_error err;
	for (unsigned tb = 0; tb < ADAC_ECMA_TABLE_COUNT; tb++) {
		uint32_t rows = adac_ecma_rows(md, tb);
		for (uint32_t r = 1; r <= rows && r <= 2000; r++) {
			for (unsigned c = 0; c < adac_ecma_columns(tb); c++) {
				uint32_t v;
				adac_error_clear(&err);
				errors += adac_ecma_cell(md, tb, r, c, &v, &err) != 0;
			}
		}
	}
	for (uint32_t r = 1; r <= adac_ecma_rows(md, ADAC_ECMA_TYPEDEF) && r <= 2000; r++) {
		struct adac_ecma_typedef td;
		struct adac_sig_text t = {0};
		uint32_t v;
		adac_error_clear(&err);
		errors += adac_ecma_typedef(md, r, &td, &err) != 0;
		adac_error_clear(&err);
		errors += token_name(md, ADAC_ECMA_TOKEN(ADAC_ECMA_TYPEDEF, r), ADAC_STYLE_SOS, ADAC_TN_NO_ARITY, &t, &err) != 0;
		adac_sig_text_free(&t);
		adac_error_clear(&err);
		errors += adac_ecma_generic_param_count(md, ADAC_ECMA_TOKEN(ADAC_ECMA_TYPEDEF, r), &v, &err) != 0;
	}
	for (uint32_t r = 1; r <= adac_ecma_rows(md, ADAC_ECMA_METHODDEF) && r <= 2000; r++) {
		uint32_t v;
		adac_error_clear(&err);
		errors += adac_ecma_method_owner(md, r, &v, &err) != 0;
		char *s = fmt_method_sig(md, r);
		errors += s == NULL;
		free(s);
		adac_error_clear(&err);
		errors += adac_ecma_param_of(md, r, 1, &v, &err) != 0 && err.code != ADAC_E_NOT_FOUND;
	}
	for (uint32_t r = 1; r <= adac_ecma_rows(md, ADAC_ECMA_TYPEREF) && r <= 2000; r++) {
		struct adac_sig_text t = {0};
		adac_error_clear(&err);
		errors += token_name(md, ADAC_ECMA_TOKEN(ADAC_ECMA_TYPEREF, r), ADAC_STYLE_SOS, 0, &t, &err) != 0;
		adac_sig_text_free(&t);
	}
	for (uint32_t r = 1; r <= adac_ecma_rows(md, ADAC_ECMA_TYPESPEC) && r <= 2000; r++) {
		struct adac_sig_text t = {0};
		adac_error_clear(&err);
		errors += token_name(md, ADAC_ECMA_TOKEN(ADAC_ECMA_TYPESPEC, r), ADAC_STYLE_SOS, 0, &t, &err) != 0;
		adac_sig_text_free(&t);
	}
	uint32_t v;
	adac_error_clear(&err);
	errors += adac_ecma_find_typedef(md, "No", "Such", 0, &v, &err) != 0 && err.code != ADAC_E_NOT_FOUND;
	return errors;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Random byte changes (1 to 8 per variant) of a valid blob: parse, then sweep. */
static void fuzz(const uint8_t *good, size_t len, unsigned rounds, const char *what)
{
	uint8_t *b = malloc(len);
	unsigned parsed = 0, failed = 0;
	for (unsigned i = 0; i < rounds; i++) {
		memcpy(b, good, len);
		unsigned changes = 1 + (unsigned)(rng() % 8);
		for (unsigned k = 0; k < changes; k++) {
			/* Bias toward the headers and the tables, where damage matters most. */
			size_t at = (rng() & 1) ? rng() % (len < 512 ? len : 512) : rng() % len;
			b[at] = (rng() & 3) ? (uint8_t)rng() : (uint8_t)(b[at] ^ (1u << (rng() % 8)));
		}
		struct adac_ecma *md = NULL;
		struct adac_error err = {0};
		if (adac_ecma_open_blob(b, len, &md, &err) == 0) {
			parsed++;
			sweep(md);
			adac_ecma_free(md);
		} else {
			failed++;
			CHECK(err.code == ADAC_E_CORRUPT || err.code == ADAC_E_LIMIT);
		}
	}
	printf("fuzz %s: %u variants parsed and swept, %u refused\n", what, parsed, failed);
	free(b);
}

/* Regression: a PE32+ optional header too short to hold NumberOfRvaAndSizes (offset 108) had that
 * field read from the uninitialised rest of a local buffer before its size was checked (the answer
 * was the same error; valgrind: "Conditional jump or move depends on uninitialised value(s)" in
 * parse_pe). Found by tests/fuzz/fuzz_ecma_metadata.c's PE path under valgrind. */
static void test_bug_short_optional_header(void)
{
	const uint16_t sizes[] = {96, 100, 111, 112, 231};
	for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		uint8_t pe[0x200] = {'M', 'Z'};
		const uint32_t lfanew = 0x80;
		memcpy(pe + 0x3c, &lfanew, 4);
		memcpy(pe + lfanew, "PE\0\0", 4);
		const uint16_t machine = 0x8664, magic = 0x20b;
		memcpy(pe + lfanew + 4, &machine, 2);
		memcpy(pe + lfanew + 20, &sizes[i], 2);
		memcpy(pe + lfanew + 24, &magic, 2);
		struct adac_memimg *img = adac_memimg_new();
		adac_memimg_add(img, 0x10000000, pe, sizeof pe);
		struct adac_error err = {0};
		struct adac_target *t = adac_target_open_memory(img, &err);
		struct adac_ecma *md = NULL;
		int rc = adac_ecma_open_image(t, 0x10000000, sizeof pe, false, &md, &err);
		CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "has no CLI header directory (not .NET)");
		adac_ecma_free(md);
		adac_target_close(t);
	}
}

/* ---- A real assembly, flat and mapped ---- */

/* Lays a PE file out as the loader maps it: headers at base, each section at base + VirtualAddress. */
static uint32_t map_image(struct adac_memimg *img, uint64_t base, const uint8_t *file, size_t len)
{
	uint32_t lfanew, size_of_image = 0, size_of_headers;
	memcpy(&lfanew, file + 0x3c, 4);
	uint16_t nsec, optsz;
	memcpy(&nsec, file + lfanew + 6, 2);
	memcpy(&optsz, file + lfanew + 20, 2);
	memcpy(&size_of_image, file + lfanew + 24 + 56, 4);
	memcpy(&size_of_headers, file + lfanew + 24 + 60, 4);
	uint8_t *mapped = calloc(1, size_of_image);
	memcpy(mapped, file, size_of_headers < len ? size_of_headers : len);
	for (unsigned i = 0; i < nsec; i++) {
		const uint8_t *s = file + lfanew + 24 + optsz + i * 40;
		uint32_t va, raw_size, raw_ptr;
		memcpy(&va, s + 12, 4);
		memcpy(&raw_size, s + 16, 4);
		memcpy(&raw_ptr, s + 20, 4);
		if (va < size_of_image && raw_ptr < len)
			memcpy(mapped + va, file + raw_ptr, raw_size < size_of_image - va ? raw_size : size_of_image - va);
	}
	adac_memimg_add(img, base, mapped, size_of_image);
	free(mapped);
	return size_of_image;
}

static void test_real(const char *dll)
{
	size_t len;
	uint8_t *file = (uint8_t *)slurp(dll, &len);
	CHECK(file != NULL); /* scripts/dotnet-setup builds the samples */
	if (!file) {
		fprintf(stderr, "ecma_metadata: cannot read %s\n", dll);
		return;
	}
	const uint64_t flat_base = 0x10000000, mapped_base = 0x40000000;
	struct adac_memimg *img = adac_memimg_new();
	adac_memimg_add(img, flat_base, file, len);
	uint32_t image_size = map_image(img, mapped_base, file, len);
	struct adac_error err = {0};
	struct adac_target *t = adac_target_open_memory(img, &err);
	struct adac_ecma *flat = NULL, *mapped = NULL;
	CHECK(adac_ecma_open_image(t, flat_base, len, false, &flat, &err) == 0);
	CHECK(adac_ecma_open_image(t, mapped_base, image_size, true, &mapped, &err) == 0);
	if (flat && mapped) {
		CHECK(adac_ecma_image_mapped(mapped) && !adac_ecma_image_mapped(flat));
		size_t la, lb;
		const uint8_t *a = adac_ecma_blob_data(flat, &la), *bb = adac_ecma_blob_data(mapped, &lb);
		CHECK(la == lb && memcmp(a, bb, la) == 0);
		/* Same method bodies through both RVA translations. */
		unsigned bodies = 0;
		for (uint32_t r = 1; r <= adac_ecma_rows(flat, ADAC_ECMA_METHODDEF); r++) {
			struct adac_ecma_methoddef m;
			struct adac_ecma_method_body x, y;
			CHECK(adac_ecma_methoddef(flat, r, &m, &err) == 0);
			if (!m.rva)
				continue;
			CHECK(adac_ecma_method_body(flat, m.rva, &x, &err) == 0);
			CHECK(adac_ecma_method_body(mapped, m.rva, &y, &err) == 0);
			CHECK(x.code_size == y.code_size && x.local_sig_token == y.local_sig_token && x.max_stack == y.max_stack);
			CHECK_EQ_U64(y.addr, mapped_base + m.rva);
			uint8_t ca[64] = {0}, cb[64] = {0};
			size_t n = x.code_size < sizeof ca ? x.code_size : sizeof ca;
			CHECK(adac_read(t, x.code_addr, ca, n, &err) == 0 && adac_read(t, y.code_addr, cb, n, &err) == 0);
			CHECK(memcmp(ca, cb, n) == 0);
			bodies++;
		}
		CHECK(bodies > 0);
		CHECK_EQ_U64(sweep(flat), 0);
		const char *name;
		CHECK(adac_ecma_assembly_name(flat, &name, &err) == 0);
		printf("ecma_metadata: %s: %u method bodies identical flat and mapped\n", name, bodies);
		uint64_t addr;
		int rc = adac_ecma_rva_to_addr(flat, 0x7ffffff0, 4, &addr, &err);
		CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "RVA 0x7ffffff0 (+4) is in no section");
		adac_error_clear(&err);
		rc = adac_ecma_rva_to_addr(mapped, image_size, 1, &addr, &err);
		CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "is outside the");
		adac_error_clear(&err);
		struct adac_ecma_method_body none;
		rc = adac_ecma_method_body(flat, 0, &none, &err);
		CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "method has no IL body (RVA 0)");
		adac_error_clear(&err);
		size_t mlen;
		const uint8_t *mdata = adac_ecma_blob_data(flat, &mlen);
		fuzz(mdata, mlen, 3000, name);
	}
	adac_ecma_free(flat);
	adac_ecma_free(mapped);
	adac_target_close(t);

	/* Broken PE headers. */
	struct {
		size_t at;
		uint32_t value;
		unsigned width;
		enum adac_errcode code;
		const char *msg;
	} cases[] = {
		{0, 0x5a5a, 2, ADAC_E_CORRUPT, "has no MZ header"},
		{0x3c, 0x7fffffff, 4, ADAC_E_CORRUPT, "has a bad PE header offset 0x7fffffff"},
		{0x80, 0, 4, ADAC_E_CORRUPT, "has no PE signature"},
		{0x80 + 6, 5000, 2, ADAC_E_LIMIT, "has 5000 sections (limit 1024)"},
		{0x80 + 24, 0x1234, 2, ADAC_E_CORRUPT, "has optional header magic 0x1234"},
	};
	uint32_t lfanew;
	memcpy(&lfanew, file + 0x3c, 4);
	for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint8_t *copy = malloc(len);
		memcpy(copy, file, len);
		size_t at = cases[i].at >= 0x80 ? cases[i].at - 0x80 + lfanew : cases[i].at;
		memcpy(copy + at, &cases[i].value, cases[i].width);
		struct adac_memimg *im = adac_memimg_new();
		adac_memimg_add(im, flat_base, copy, len);
		free(copy);
		struct adac_error e = {0};
		struct adac_target *tt = adac_target_open_memory(im, &e);
		struct adac_ecma *md = NULL;
		int rc = adac_ecma_open_image(tt, flat_base, len, false, &md, &e);
		CHECK_ERR(rc, &e, cases[i].code, cases[i].msg);
		adac_ecma_free(md);
		adac_target_close(tt);
	}
	free(file);
}

int main(void)
{
	test_synthetic();
	test_corrupt();
	test_bug_short_optional_header();
	uint8_t good[4096];
	size_t len = build(good, NULL);
	fuzz(good, len, 20000, "synthetic");
	const char *dn = getenv("ADAC_DOTNET_DIR");
	char dll[1024];
	snprintf(dll, sizeof dll, "%s/apps/11/Debug/nested/nested.dll", dn && *dn ? dn : "build/dotnet");
	test_real(dll);
	return check_report("ecma_metadata");
}
