/* test_signature.c - signature decoding (dac/metadata/signature.c), the type-name engine on
 * signatures (dac/types/typename.c) and the ECMA-335 reader under them, checked two ways:
 *   - hand-made blobs: every element type in every naming style, malformed input;
 *   - real assemblies (the samples built by scripts/dotnet-setup and the 11.0.0 CoreLib), loaded
 *     into a memory target as flat file images: every table, row, name, signature, parameter and
 *     local signature printed by asyncdac in each naming style (SOS, C#, DAC) is compared line by
 *     line with what System.Reflection.Metadata prints through the same rules
 *     (tests/data/ecma/mdump, "mdump metadata --style").
 * Usage: test_signature                 hand-made cases only
 *        test_signature --oracle        real assemblies (exit 77 when the .NET side is not set up)
 */
#include <stdarg.h>
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

/* ---- Hand-made signatures ---- */

/* Without metadata or runtime: tokens as numbers, generic variables as !n / !!n. */
static char *format_sig(const uint8_t *blob, size_t len, enum adac_sig_kind kind, enum adac_name_style style,
                        unsigned flags, struct adac_error *err)
{
	struct adac_sig *s;
	if (adac_sig_decode(blob, len, kind, 8, &s, err))
		return NULL;
	struct adac_type_ctx n;
	adac_type_ctx_for_metadata(&n, NULL, 0, 0);
	struct adac_sig_text t = {0};
	int rc = 0;
	if (kind == ADAC_SIG_METHOD) {
		rc = adac_tn_sig(&n, s->method.ret, style, flags, &t, err);
		if (rc == 0)
			rc = adac_sig_text_put(&t, " ", err);
		if (rc == 0)
			rc = adac_tn_params(&n, &s->method, style, flags, &t, err);
	} else if (kind == ADAC_SIG_LOCALS || kind == ADAC_SIG_METHODSPEC) {
		for (uint32_t i = 0; rc == 0 && i < s->count; i++) {
			if (i)
				rc = adac_sig_text_put(&t, ", ", err);
			if (rc == 0)
				rc = adac_tn_sig(&n, s->types[i], style, flags, &t, err);
		}
	} else {
		rc = adac_tn_sig(&n, s->type, style, flags, &t, err);
	}
	adac_sig_free(s);
	if (rc) {
		adac_sig_text_free(&t);
		return NULL;
	}
	return adac_sig_text_take(&t);
}

#define CHECK_SIG_F(blob, kind, style, flags, want)                                          \
	do {                                                                                    \
		struct adac_error e_ = {0};                                                         \
		char *got_ = format_sig(blob, sizeof blob, kind, style, flags, &e_);                \
		if (!got_)                                                                          \
			fprintf(stderr, "%s:%d: decode failed: %s\n", __FILE__, __LINE__, e_.msg);        \
		CHECK_EQ_STR(got_, want);                                                           \
		free(got_);                                                                         \
	} while (0)
#define CHECK_SIG(blob, kind, style, want) CHECK_SIG_F(blob, kind, style, 0, want)

static void test_compressed(void)
{
	const uint8_t b[] = {0x03, 0x7f, 0x80, 0x80, 0xae, 0x57, 0xbf, 0xff, 0xc0, 0x00, 0x40, 0x00, 0xdf, 0xff, 0xff, 0xff};
	const uint32_t want[] = {0x03, 0x7f, 0x80, 0x2e57, 0x3fff, 0x4000, 0x1fffffff};
	size_t pos = 0;
	for (unsigned i = 0; i < sizeof want / sizeof want[0]; i++) {
		uint32_t v = 0;
		CHECK(adac_ecma_uncompress(b, sizeof b, &pos, &v) == 0);
		CHECK_EQ_U64(v, want[i]);
	}
	CHECK_EQ_U64(pos, sizeof b);
	uint32_t v;
	const uint8_t bad[] = {0xe0, 0, 0, 0};
	pos = 0;
	CHECK(adac_ecma_uncompress(bad, sizeof bad, &pos, &v) == -1);
	const uint8_t short2[] = {0x80};
	pos = 0;
	CHECK(adac_ecma_uncompress(short2, sizeof short2, &pos, &v) == -1);
	const uint8_t short4[] = {0xc0, 1, 2};
	pos = 0;
	CHECK(adac_ecma_uncompress(short4, sizeof short4, &pos, &v) == -1);
	CHECK_EQ_U64(adac_tn_strip_arity("List`1"), 4);
	CHECK_EQ_U64(adac_tn_strip_arity("Dictionary`12"), 10);
	CHECK_EQ_U64(adac_tn_strip_arity("Plain"), 5);
	CHECK_EQ_U64(adac_tn_strip_arity("`1"), 0);
	CHECK_EQ_U64(adac_tn_strip_arity("Odd`"), 4);
}

static void test_method_sigs(void)
{
	const enum adac_name_style SOS = ADAC_STYLE_SOS, CS = ADAC_STYLE_CSHARP, DAC = ADAC_STYLE_DAC;
	/* instance void M(int, string, object, List<!0>, !!1[], int&, My.Outer+Inner[,], char*) */
	const uint8_t m1[] = {0x30, 0x02, 0x08, 0x01, 0x08, 0x0e, 0x1c, 0x15, 0x12, 0x05, 0x01, 0x13, 0x00, 0x1d, 0x1e, 0x01,
	                      0x10, 0x08, 0x14, 0x11, 0x08, 0x02, 0x00, 0x00, 0x0f, 0x03};
	CHECK_SIG(m1, ADAC_SIG_METHOD, SOS,
	          "Void (Int32, System.String, System.Object, 0x01000001<!0>, !!1[], Int32&, 0x02000002[,], Char*)");
	CHECK_SIG_F(m1, ADAC_SIG_METHOD, SOS, ADAC_TN_NO_NAMESPACE,
	            "Void (Int32, String, Object, 0x01000001<!0>, !!1[], Int32&, 0x02000002[,], Char*)");
	CHECK_SIG(m1, ADAC_SIG_METHOD, CS, "void (int, string, object, 0x01000001<!0>, !!1[], int&, 0x02000002[,], char*)");
	CHECK_SIG(m1, ADAC_SIG_METHOD, DAC,
	          "Void (Int32, System.String, System.Object, 0x01000001<!0>, !!1[], Int32 ByRef, 0x02000002[,], Char*)");
	/* Every primitive. */
	const uint8_t prims[] = {0x00, 0x0f, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
	                         0x0a, 0x0b, 0x0c, 0x0d, 0x18, 0x19, 0x16};
	CHECK_SIG(prims, ADAC_SIG_METHOD, SOS,
	          "Void (Boolean, Char, SByte, Byte, Int16, UInt16, Int32, UInt32, Int64, UInt64, Single, Double, IntPtr, "
	          "UIntPtr, TypedReference)");
	CHECK_SIG(prims, ADAC_SIG_METHOD, CS,
	          "void (bool, char, sbyte, byte, short, ushort, int, uint, long, ulong, float, double, nint, nuint, "
	          "System.TypedReference)");
	CHECK_SIG(prims, ADAC_SIG_METHOD, DAC,
	          "Void (Boolean, Char, SByte, Byte, Int16, UInt16, Int32, UInt32, Int64, UInt64, Single, Double, IntPtr, "
	          "UIntPtr, TypedReference)");
	/* Vararg definition and call site (sentinel), and a generic method definition. */
	const uint8_t vdef[] = {0x05, 0x01, 0x01, 0x08};
	CHECK_SIG(vdef, ADAC_SIG_METHOD, SOS, "Void (Int32, ...)");
	const uint8_t vcall[] = {0x05, 0x02, 0x01, 0x08, 0x41, 0x0e};
	CHECK_SIG(vcall, ADAC_SIG_METHOD, SOS, "Void (Int32, ..., System.String)");
	CHECK_SIG(vcall, ADAC_SIG_METHOD, CS, "void (int, ..., string)");
	const uint8_t gen[] = {0x10, 0x02, 0x01, 0x1e, 0x00, 0x1e, 0x01};
	CHECK_SIG(gen, ADAC_SIG_METHOD, SOS, "!!0 (!!1)");
	/* Custom modifiers are skipped; a function pointer; rank-1 multi-dimensional array. */
	const uint8_t mods[] = {0x00, 0x02, 0x20, 0x05, 0x08, 0x1b, 0x00, 0x01, 0x08, 0x0e, 0x14, 0x08, 0x01, 0x00, 0x00};
	CHECK_SIG(mods, ADAC_SIG_METHOD, SOS, "Int32 (Int32 (System.String), Int32[*])");
	CHECK_SIG(mods, ADAC_SIG_METHOD, CS, "int (int (string), int[*])");
	CHECK_SIG(mods, ADAC_SIG_METHOD, DAC, "Int32 (Int32 (System.String), Int32[])");
	/* Locals: pinned byref, typedbyref. */
	const uint8_t locals[] = {0x07, 0x03, 0x45, 0x10, 0x05, 0x16, 0x12, 0x05};
	CHECK_SIG(locals, ADAC_SIG_LOCALS, SOS, "Byte& pinned, TypedReference, 0x01000001");
	CHECK_SIG(locals, ADAC_SIG_LOCALS, CS, "byte&, System.TypedReference, 0x01000001");
	CHECK_SIG(locals, ADAC_SIG_LOCALS, DAC, "Byte ByRef, TypedReference, 0x01000001");
	/* Field, TypeSpec, MethodSpec, INTERNAL handle. */
	const uint8_t field[] = {0x06, 0x1d, 0x1d, 0x13, 0x01};
	CHECK_SIG(field, ADAC_SIG_FIELD, SOS, "!1[][]");
	const uint8_t spec[] = {0x15, 0x11, 0x05, 0x02, 0x08, 0x13, 0x00};
	CHECK_SIG(spec, ADAC_SIG_TYPESPEC, SOS, "0x01000001<Int32, !0>");
	CHECK_SIG(spec, ADAC_SIG_TYPESPEC, CS, "0x01000001<int, !0>");
	CHECK_SIG(spec, ADAC_SIG_TYPESPEC, DAC, "0x01000001<Int32,!0>");
	const uint8_t mspec[] = {0x0a, 0x02, 0x0e, 0x1c};
	CHECK_SIG(mspec, ADAC_SIG_METHODSPEC, SOS, "System.String, System.Object");
	CHECK_SIG(mspec, ADAC_SIG_METHODSPEC, CS, "string, object");
	const uint8_t internal[] = {0x21, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11};
	CHECK_SIG(internal, ADAC_SIG_TYPESPEC, SOS, "0x1122334455667788");
	CHECK_SIG(internal, ADAC_SIG_TYPESPEC, DAC, "0x1122334455667788");
}

static void check_bad(const uint8_t *blob, size_t len, enum adac_sig_kind kind, enum adac_errcode code, const char *msg,
                      int line)
{
	struct adac_error err = {0};
	struct adac_sig *s = NULL;
	int rc = adac_sig_decode(blob, len, kind, 8, &s, &err);
	if (rc == 0 || err.code != code || !strstr(err.msg, msg)) {
		fprintf(stderr, "%s:%d: want %s \"%s\", got rc=%d %s \"%s\"\n", __FILE__, line, adac_errstr(code), msg, rc,
		        adac_errstr(err.code), err.msg);
		check_failures++;
	}
	adac_sig_free(s);
}

static void test_bad_sigs(void)
{
	const uint8_t empty[1] = {0};
	check_bad(empty, 0, ADAC_SIG_METHOD, ADAC_E_CORRUPT, "unexpected end at byte 0 of 0", __LINE__);
	const uint8_t trunc[] = {0x00, 0x02, 0x01, 0x08};
	check_bad(trunc, sizeof trunc, ADAC_SIG_METHOD, ADAC_E_CORRUPT, "unexpected end at byte 4 of 4", __LINE__);
	const uint8_t trunc2[] = {0x00, 0x01, 0x01, 0x15, 0x12};
	check_bad(trunc2, sizeof trunc2, ADAC_SIG_METHOD, ADAC_E_CORRUPT, "bad compressed integer", __LINE__);
	const uint8_t huge[] = {0x00, 0xdf, 0xff, 0xff, 0xff, 0x01};
	check_bad(huge, sizeof huge, ADAC_SIG_METHOD, ADAC_E_CORRUPT, "536870911 parameters but only 1 bytes left", __LINE__);
	const uint8_t elem[] = {0x00, 0x00, 0x42};
	check_bad(elem, sizeof elem, ADAC_SIG_METHOD, ADAC_E_CORRUPT, "unknown element type at byte 2", __LINE__);
	const uint8_t tok[] = {0x06, 0x12, 0x03};
	check_bad(tok, sizeof tok, ADAC_SIG_FIELD, ADAC_E_CORRUPT, "bad TypeDefOrRefOrSpec encoding", __LINE__);
	/* test_bug_rid_past_24_bits (issue 15): TypeDef row 0x7000000 is no token (it was truncated to 0x02000000). */
	const uint8_t bigrid[] = {0x06, 0x12, 0xdc, 0x00, 0x00, 0x00};
	check_bad(bigrid, sizeof bigrid, ADAC_SIG_FIELD, ADAC_E_CORRUPT, "bad TypeDefOrRefOrSpec encoding", __LINE__);
	const uint8_t notfield[] = {0x00, 0x08};
	check_bad(notfield, sizeof notfield, ADAC_SIG_FIELD, ADAC_E_CORRUPT, "does not start a field signature", __LINE__);
	const uint8_t ginst0[] = {0x15, 0x12, 0x05, 0x00};
	check_bad(ginst0, sizeof ginst0, ADAC_SIG_TYPESPEC, ADAC_E_CORRUPT, "generic instantiation without arguments", __LINE__);
	const uint8_t rank0[] = {0x14, 0x08, 0x00, 0x00, 0x00};
	check_bad(rank0, sizeof rank0, ADAC_SIG_TYPESPEC, ADAC_E_CORRUPT, "array of rank 0", __LINE__);
	uint8_t deep[200];
	memset(deep, 0x1d, sizeof deep - 1);
	deep[sizeof deep - 1] = 0x08;
	check_bad(deep, sizeof deep, ADAC_SIG_TYPESPEC, ADAC_E_LIMIT, "types nested deeper than 64", __LINE__);
	const uint8_t twosent[] = {0x05, 0x02, 0x01, 0x41, 0x08, 0x41, 0x08};
	check_bad(twosent, sizeof twosent, ADAC_SIG_METHOD, ADAC_E_CORRUPT, "second vararg sentinel", __LINE__);
	const uint8_t internal[] = {0x21, 0x01, 0x02};
	check_bad(internal, sizeof internal, ADAC_SIG_TYPESPEC, ADAC_E_CORRUPT, "truncated internal type handle", __LINE__);

	/* Every prefix of a valid blob and every single-byte change: an answer or an error, no crash. */
	const uint8_t m1[] = {0x30, 0x02, 0x08, 0x01, 0x08, 0x0e, 0x1c, 0x15, 0x12, 0x05, 0x01, 0x13, 0x00, 0x1d, 0x1e, 0x01,
	                      0x10, 0x08, 0x14, 0x11, 0x08, 0x02, 0x00, 0x00, 0x0f, 0x03};
	for (size_t n = 0; n < sizeof m1; n++) {
		struct adac_error err = {0};
		char *s = format_sig(m1, n, ADAC_SIG_METHOD, ADAC_STYLE_SOS, 0, &err);
		CHECK(s == NULL && err.code == ADAC_E_CORRUPT);
		free(s);
	}
	uint8_t mut[sizeof m1];
	for (size_t i = 0; i < sizeof m1; i++) {
		for (unsigned v = 0; v < 256; v++) {
			memcpy(mut, m1, sizeof m1);
			mut[i] = (uint8_t)v;
			struct adac_error err = {0};
			for (unsigned k = 0; k < 3; k++) {
				char *s = format_sig(mut, sizeof mut, ADAC_SIG_METHOD, (enum adac_name_style)k, 0, &err);
				CHECK(s != NULL || err.code == ADAC_E_CORRUPT || err.code == ADAC_E_LIMIT);
				free(s);
			}
		}
	}
}

static void test_text(void)
{
	struct adac_sig_text t = {0};
	struct adac_error err = {0};
	CHECK_EQ_STR(adac_sig_text_str(&t), "");
	CHECK(adac_sig_text_put(&t, "a,b", &err) == 0);
	CHECK(adac_sig_text_putf(&t, &err, "<%u>", 12u) == 0);
	CHECK_EQ_STR(adac_sig_text_str(&t), "a,b<12>");
	adac_sig_text_free(&t);
	static char big[ADAC_MAX_NAME_BYTES + 1];
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	int rc = adac_sig_text_put(&t, big, &err);
	CHECK_ERR(rc, &err, ADAC_E_LIMIT, "a name is longer than 65536 bytes");
	adac_sig_text_free(&t);
}

/* ---- Real assemblies against System.Reflection.Metadata ---- */

struct out {
	char *p;
	size_t n, cap;
};

static void outf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void outf(struct out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char tmp[8192];
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof tmp)
		n = sizeof tmp - 1;
	if (o->n + (size_t)n + 1 > o->cap) {
		o->cap = (o->cap + (size_t)n + 1) * 2;
		o->p = realloc(o->p, o->cap);
	}
	memcpy(o->p + o->n, tmp, (size_t)n);
	o->n += (size_t)n;
	o->p[o->n] = '\0';
}

/* The naming style of a metadata dump. */
static enum adac_name_style dump_style;

/* Formats a blob with metadata names in the context of a type and a method. */
static const char *fmt_blob(const struct adac_ecma *md, const uint8_t *blob, uint32_t len, enum adac_sig_kind kind,
                            uint32_t type_token, uint32_t method_token, struct adac_sig_text *t)
{
	struct adac_error err = {0};
	struct adac_sig *s = NULL;
	adac_sig_text_free(t);
	struct adac_type_ctx n;
	adac_type_ctx_for_metadata(&n, md, type_token, method_token);
	enum adac_name_style st = dump_style;
	int rc = adac_sig_decode(blob, len, kind, 8, &s, &err);
	if (rc == 0) {
		switch (kind) {
		case ADAC_SIG_METHOD:
			rc = adac_tn_sig(&n, s->method.ret, st, 0, t, &err);
			if (rc == 0)
				rc = adac_sig_text_put(t, " ", &err);
			if (rc == 0)
				rc = adac_tn_params(&n, &s->method, st, 0, t, &err);
			if (rc == 0 && s->method.gen_params)
				rc = adac_sig_text_putf(t, &err, " generic=%u", s->method.gen_params);
			break;
		case ADAC_SIG_LOCALS:
		case ADAC_SIG_METHODSPEC:
			for (uint32_t i = 0; rc == 0 && i < s->count; i++) {
				if (i)
					rc = adac_sig_text_put(t, ", ", &err);
				if (rc == 0)
					rc = adac_tn_sig(&n, s->types[i], st, 0, t, &err);
			}
			break;
		default:
			rc = adac_tn_sig(&n, s->type, st, 0, t, &err);
			break;
		}
	}
	adac_sig_free(s);
	if (rc) {
		adac_sig_text_free(t);
		adac_sig_text_putf(t, &err, "<error %s: %s>", adac_errstr(err.code), err.msg);
	}
	return adac_sig_text_str(t);
}

static const char *type_name(const struct adac_ecma *md, uint32_t token, uint32_t ctx_type, struct adac_sig_text *t)
{
	struct adac_error err = {0};
	adac_sig_text_free(t);
	int rc;
	if (ADAC_ECMA_TOKEN_TABLE(token) == ADAC_ECMA_TYPESPEC) {
		const uint8_t *b;
		uint32_t len;
		rc = adac_ecma_typespec(md, ADAC_ECMA_TOKEN_RID(token), &b, &len, &err);
		if (rc == 0)
			return fmt_blob(md, b, len, ADAC_SIG_TYPESPEC, ctx_type, 0, t);
	} else {
		/* Row names are the metadata's ("Ns.Outer+Inner") in every style, as mdump prints them. */
		struct adac_type_ctx c;
		adac_type_ctx_for_metadata(&c, md, 0, 0);
		rc = adac_tn_token(&c, token, ADAC_STYLE_SOS, 0, t, &err);
	}
	if (rc)
		adac_sig_text_putf(t, &err, "<error %s>", err.msg);
	return adac_sig_text_str(t);
}

static void hex_bytes(struct out *o, const uint8_t *p, uint32_t n)
{
	if (n == 0)
		outf(o, "-");
	for (uint32_t i = 0; i < n; i++)
		outf(o, "%02x", p[i]);
}

static void generic_list(struct out *o, const struct adac_ecma *md, uint32_t owner, const char *prefix)
{
	uint32_t count = 0;
	struct adac_error err = {0};
	if (adac_ecma_generic_param_count(md, owner, &count, &err) || count == 0)
		return;
	outf(o, "%s<", prefix);
	for (uint32_t i = 0; i < count; i++) {
		uint32_t rid;
		struct adac_ecma_genericparam gp;
		if (adac_ecma_generic_param(md, owner, i, &rid, &err) || adac_ecma_genericparam(md, rid, &gp, &err))
			outf(o, "%s<error %s>", i ? ", " : "", err.msg);
		else
			outf(o, "%s%s", i ? ", " : "", gp.name);
	}
	outf(o, ">");
}

#define E(call)                                                                        \
	do {                                                                               \
		if ((call) != 0) {                                                             \
			fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, err.msg); \
			check_failures++;                                                          \
			adac_error_clear(&err);                                                    \
		}                                                                              \
	} while (0)

/* The same lines as "mdump metadata", from asyncdac's reader. */
static void dump_metadata(const struct adac_ecma *md, struct out *o)
{
	struct adac_error err = {0};
	struct adac_sig_text t = {0}, t2 = {0};
	outf(o, "version %s\n", adac_ecma_version(md));
	/* System.Reflection.Metadata trims the #Strings padding: zeros after the last terminator. */
	uint32_t slen;
	const uint8_t *sp = adac_ecma_heap_data(md, 's', &slen);
	while (slen > 1 && sp[slen - 1] == 0 && sp[slen - 2] == 0)
		slen--;
	outf(o, "heap strings %u\nheap blob %u\nheap guid %u\nheap us %u\n", slen, adac_ecma_heap_size(md, 'b'),
	     adac_ecma_heap_size(md, 'g'), adac_ecma_heap_size(md, 'u'));
	for (unsigned tb = 0; tb <= 0x2c; tb++)
		if (adac_ecma_rows(md, tb))
			outf(o, "rows 0x%02x %u %u\n", tb, adac_ecma_rows(md, tb), adac_ecma_row_size(md, tb));
	const char *aname;
	if (adac_ecma_assembly_name(md, &aname, NULL) == 0) {
		uint32_t v[4] = {0};
		for (unsigned i = 0; i < 4; i++)
			E(adac_ecma_cell(md, ADAC_ECMA_ASSEMBLY, 1, 1 + i, &v[i], &err));
		outf(o, "assembly %s %u.%u.%u.%u\n", aname, v[0], v[1], v[2], v[3]);
	}
	struct adac_ecma_module_row mod;
	E(adac_ecma_module(md, &mod, &err));
	outf(o, "module %s\n", mod.name);
	for (uint32_t r = 1; r <= adac_ecma_rows(md, ADAC_ECMA_ASSEMBLYREF); r++) {
		struct adac_ecma_assemblyref a;
		E(adac_ecma_assemblyref(md, r, &a, &err));
		outf(o, "assemblyref 0x%08x %s %u.%u.%u.%u\n", ADAC_ECMA_TOKEN(ADAC_ECMA_ASSEMBLYREF, r), a.name, a.version[0],
		     a.version[1], a.version[2], a.version[3]);
	}
	for (uint32_t r = 1; r <= adac_ecma_rows(md, ADAC_ECMA_TYPEREF); r++)
		outf(o, "typeref 0x%08x %s\n", ADAC_ECMA_TOKEN(ADAC_ECMA_TYPEREF, r),
		     type_name(md, ADAC_ECMA_TOKEN(ADAC_ECMA_TYPEREF, r), 0, &t));
	for (uint32_t r = 1; r <= adac_ecma_rows(md, ADAC_ECMA_TYPEDEF); r++) {
		uint32_t tok = ADAC_ECMA_TOKEN(ADAC_ECMA_TYPEDEF, r);
		struct adac_ecma_typedef td;
		E(adac_ecma_typedef(md, r, &td, &err));
		char *owner = strdup(type_name(md, tok, 0, &t));
		outf(o, "typedef 0x%08x %s flags=0x%08x extends=%s", tok, owner, td.flags,
		     td.extends ? type_name(md, td.extends, tok, &t2) : "-");
		generic_list(o, md, tok, " generic ");
		outf(o, "\n");
		uint32_t enc = 0;
		E(adac_ecma_enclosing_type(md, r, &enc, &err));
		if (enc)
			outf(o, "nested 0x%08x in 0x%08x\n", tok, ADAC_ECMA_TOKEN(ADAC_ECMA_TYPEDEF, enc));
		for (uint32_t pos = td.field_first; pos < td.field_end; pos++) {
			uint32_t f = 0, owner_rid = 0, crid = 0;
			struct adac_ecma_field fr;
			E(adac_ecma_list_item(md, ADAC_ECMA_FIELD, pos, &f, &err));
			E(adac_ecma_field(md, f, &fr, &err));
			E(adac_ecma_field_owner(md, f, &owner_rid, &err));
			CHECK_EQ_U64(owner_rid, r);
			outf(o, "field 0x%08x %s::%s flags=0x%04x : %s", ADAC_ECMA_TOKEN(ADAC_ECMA_FIELD, f), owner, fr.name, fr.flags,
			     fmt_blob(md, fr.sig, fr.sig_len, ADAC_SIG_FIELD, tok, 0, &t));
			if (adac_ecma_constant_of(md, ADAC_ECMA_TOKEN(ADAC_ECMA_FIELD, f), &crid, NULL) == 0) {
				struct adac_ecma_constant c;
				E(adac_ecma_constant(md, crid, &c, &err));
				outf(o, " = 0x%02x ", c.type);
				hex_bytes(o, c.value, c.value_len);
			}
			outf(o, "\n");
		}
		for (uint32_t pos = td.method_first; pos < td.method_end; pos++) {
			uint32_t m = 0, owner_rid = 0;
			struct adac_ecma_methoddef mr;
			E(adac_ecma_list_item(md, ADAC_ECMA_METHODDEF, pos, &m, &err));
			E(adac_ecma_methoddef(md, m, &mr, &err));
			E(adac_ecma_method_owner(md, m, &owner_rid, &err));
			CHECK_EQ_U64(owner_rid, r);
			uint32_t mtok = ADAC_ECMA_TOKEN(ADAC_ECMA_METHODDEF, m);
			outf(o, "method 0x%08x %s::%s flags=0x%04x impl=0x%04x rva=0x%x : %s", mtok, owner, mr.name, mr.flags,
			     mr.impl_flags, mr.rva, fmt_blob(md, mr.sig, mr.sig_len, ADAC_SIG_METHOD, tok, mtok, &t));
			generic_list(o, md, mtok, " ");
			outf(o, "\n");
			for (uint32_t pp = mr.param_first; pp < mr.param_end; pp++) {
				uint32_t p = 0, again = 0;
				struct adac_ecma_param pr;
				E(adac_ecma_list_item(md, ADAC_ECMA_PARAM, pp, &p, &err));
				E(adac_ecma_param(md, p, &pr, &err));
				E(adac_ecma_param_of(md, m, pr.sequence, &again, &err));
				CHECK_EQ_U64(again, p);
				outf(o, "  param %u %s flags=0x%04x\n", pr.sequence, pr.name, pr.flags);
			}
			if (mr.rva) {
				struct adac_ecma_method_body body;
				if (adac_ecma_method_body(md, mr.rva, &body, &err)) {
					outf(o, "  body <error %s>\n", err.msg);
					adac_error_clear(&err);
					continue;
				}
				outf(o, "  body maxstack=%u code=%u", body.max_stack, body.code_size);
				if (body.local_sig_token) {
					const uint8_t *b;
					uint32_t len;
					E(adac_ecma_standalonesig(md, ADAC_ECMA_TOKEN_RID(body.local_sig_token), &b, &len, &err));
					outf(o, " locals 0x%08x : %s", body.local_sig_token, fmt_blob(md, b, len, ADAC_SIG_LOCALS, tok, mtok, &t));
				}
				outf(o, "\n");
			}
		}
		free(owner);
	}
	for (uint32_t r = 1; r <= adac_ecma_rows(md, ADAC_ECMA_MEMBERREF); r++) {
		struct adac_ecma_memberref mr;
		E(adac_ecma_memberref(md, r, &mr, &err));
		bool is_field = mr.sig_len && (mr.sig[0] & 0x0f) == 0x06;
		outf(o, "memberref 0x%08x 0x%08x %s : %s\n", ADAC_ECMA_TOKEN(ADAC_ECMA_MEMBERREF, r), mr.parent, mr.name,
		     fmt_blob(md, mr.sig, mr.sig_len, is_field ? ADAC_SIG_FIELD : ADAC_SIG_METHOD, 0, 0, &t));
	}
	for (uint32_t r = 1; r <= adac_ecma_rows(md, ADAC_ECMA_TYPESPEC); r++)
		outf(o, "typespec 0x%08x %s\n", ADAC_ECMA_TOKEN(ADAC_ECMA_TYPESPEC, r),
		     type_name(md, ADAC_ECMA_TOKEN(ADAC_ECMA_TYPESPEC, r), 0, &t));
	for (uint32_t r = 1; r <= adac_ecma_rows(md, ADAC_ECMA_METHODSPEC); r++) {
		struct adac_ecma_methodspec ms;
		E(adac_ecma_methodspec(md, r, &ms, &err));
		outf(o, "methodspec 0x%08x 0x%08x <%s>\n", ADAC_ECMA_TOKEN(ADAC_ECMA_METHODSPEC, r), ms.method,
		     fmt_blob(md, ms.inst, ms.inst_len, ADAC_SIG_METHODSPEC, 0, 0, &t));
	}
	for (uint32_t r = 1; r <= adac_ecma_rows(md, ADAC_ECMA_GENERICPARAM); r++) {
		struct adac_ecma_genericparam gp;
		E(adac_ecma_genericparam(md, r, &gp, &err));
		outf(o, "genericparam 0x%08x owner=0x%08x #%u %s flags=0x%04x\n", ADAC_ECMA_TOKEN(ADAC_ECMA_GENERICPARAM, r),
		     gp.owner, gp.number, gp.name, gp.flags);
	}
	for (uint32_t r = 1; r <= adac_ecma_rows(md, ADAC_ECMA_CONSTANT); r++) {
		struct adac_ecma_constant c;
		E(adac_ecma_constant(md, r, &c, &err));
		outf(o, "constant 0x%08x parent=0x%08x type=0x%02x value=", ADAC_ECMA_TOKEN(ADAC_ECMA_CONSTANT, r), c.parent,
		     c.type);
		hex_bytes(o, c.value, c.value_len);
		outf(o, "\n");
	}
	for (uint32_t r = 1; r <= adac_ecma_rows(md, ADAC_ECMA_STANDALONESIG); r++) {
		const uint8_t *b;
		uint32_t len;
		E(adac_ecma_standalonesig(md, r, &b, &len, &err));
		bool locals = len && b[0] == 0x07;
		outf(o, "standalonesig 0x%08x : %s\n", ADAC_ECMA_TOKEN(ADAC_ECMA_STANDALONESIG, r),
		     fmt_blob(md, b, len, locals ? ADAC_SIG_LOCALS : ADAC_SIG_METHOD, 0, 0, &t));
	}
	adac_sig_text_free(&t);
	adac_sig_text_free(&t2);
}

/* Runs a command and returns its stdout (NULL when it fails). */
static char *run_capture(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	if (!p)
		return NULL;
	struct out o = {0};
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, p)) > 0) {
		if (o.n + n + 1 > o.cap) {
			o.cap = (o.cap + n + 1) * 2;
			o.p = realloc(o.p, o.cap);
		}
		memcpy(o.p + o.n, buf, n);
		o.n += n;
		o.p[o.n] = '\0';
	}
	int rc = pclose(p);
	if (rc != 0) {
		free(o.p);
		return NULL;
	}
	return o.p ? o.p : strdup("");
}

/* Line-by-line comparison; prints the first differences. */
static void compare_lines(const char *what, const char *want, const char *got)
{
	const char *a = want, *b = got;
	unsigned line = 1, diffs = 0;
	while (*a || *b) {
		const char *ae = strchr(a, '\n'), *be = strchr(b, '\n');
		size_t al = ae ? (size_t)(ae - a) : strlen(a), bl = be ? (size_t)(be - b) : strlen(b);
		if (al != bl || memcmp(a, b, al) != 0) {
			if (diffs < 10)
				fprintf(stderr, "%s: line %u differs\n  want: %.*s\n  got:  %.*s\n", what, line, (int)al, a, (int)bl, b);
			diffs++;
		}
		a += al + (ae ? 1 : 0);
		b += bl + (be ? 1 : 0);
		line++;
	}
	if (diffs) {
		fprintf(stderr, "%s: %u of %u lines differ\n", what, diffs, line - 1);
		check_failures++;
	} else {
		printf("%s: %u lines identical\n", what, line - 1);
	}
}

static struct adac_target *load_flat(const char *path, uint64_t base, size_t *size)
{
	char *data = slurp(path, size);
	if (!data)
		return NULL;
	struct adac_memimg *img = adac_memimg_new();
	adac_memimg_add(img, base, data, *size);
	free(data);
	struct adac_error err = {0};
	return adac_target_open_memory(img, &err);
}

/* One assembly in one naming style. */
static void oracle_case(const char *mdump, const char *dll, enum adac_name_style style)
{
	static const char *const style_names[] = {"sos", "csharp", "dac"};
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "dotnet '%s' metadata '%s' --style %s", mdump, dll, style_names[style]);
	char *want = run_capture(cmd);
	CHECK(want != NULL);
	dump_style = style;
	size_t size;
	uint64_t base = 0x10000000;
	struct adac_target *t = load_flat(dll, base, &size);
	CHECK(t != NULL);
	struct adac_ecma *md = NULL;
	struct adac_error err = {0};
	if (t && adac_ecma_open_image(t, base, size, false, &md, &err)) {
		fprintf(stderr, "%s: %s\n", dll, err.msg);
		check_failures++;
	}
	if (md && want) {
		struct out o = {0};
		dump_metadata(md, &o);
		const char *slash = strrchr(dll, '/');
		char what[1200];
		snprintf(what, sizeof what, "%s (%s)", slash ? slash + 1 : dll, style_names[style]);
		compare_lines(what, want, o.p ? o.p : "");
		free(o.p);
	}
	adac_ecma_free(md);
	adac_target_close(t);
	free(want);
}

static int run_oracle(void)
{
	const char *dn = getenv("ADAC_DOTNET_DIR");
	const char *src = getenv("ADAC_SOURCE_DIR");
	char dir[1024], mdump[1100], corelib[1100], proj[1100], cmd[16384];
	snprintf(dir, sizeof dir, "%s", dn && *dn ? dn : "build/dotnet");
	snprintf(corelib, sizeof corelib, "%s/runtime/11/System.Private.CoreLib.dll", dir);
	struct stat st;
	if (stat(corelib, &st) != 0 || system("command -v dotnet >/dev/null 2>&1") != 0) {
		fprintf(stderr, "signature --oracle: no %s or no dotnet (scripts/dotnet-setup installs them)\n", corelib);
		return 1;
	}
	/* Build mdump (once; a lock keeps concurrent tests from building it twice). */
	snprintf(proj, sizeof proj, "%s/tests/data/ecma/mdump/mdump.csproj", src && *src ? src : ".");
	snprintf(mdump, sizeof mdump, "%s/mdump/mdump.dll", dir);
	snprintf(cmd, sizeof cmd,
	         "flock '%s/mdump.lock' env ASYNCDAC_DOTNET_DIR='%s' dotnet build '%s' -c Release -o '%s/mdump' --nologo "
	         "-v q >'%s/mdump.build.log' 2>&1",
	         dir, dir, proj, dir, dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "building mdump failed: see %s/mdump.build.log\n", dir);
		return 1;
	}
	static const char *const samples[] = {"nested", "shapes", "mixed", "deep", "fanout", "running"};
	unsigned n = 0;
	for (unsigned i = 0; i < sizeof samples / sizeof samples[0]; i++) {
		char dll[2400];
		snprintf(dll, sizeof dll, "%s/apps/11/Debug/%s/%s.dll", dir, samples[i], samples[i]);
		if (stat(dll, &st) != 0)
			continue;
		for (unsigned k = 0; k < 3; k++)
			oracle_case(mdump, dll, (enum adac_name_style)k);
		n++;
	}
	CHECK(n >= 1);
	for (unsigned k = 0; k < 3; k++)
		oracle_case(mdump, corelib, (enum adac_name_style)k);
	return check_report("signature --oracle");
}

/* Type names as users type them, in the SOS style filters compare with. */
static void test_normalize(void)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{"Task<int>", "Task<Int32>"},
		{"Task<Int32>", "Task<Int32>"},
		{"System.Threading.Tasks.Task<System.Int32>", "System.Threading.Tasks.Task<Int32>"},
		{"System.Threading.Tasks.Task`1", "System.Threading.Tasks.Task<"},
		{"System.Threading.Tasks.Task`1[[System.Int32, System.Private.CoreLib]]", "System.Threading.Tasks.Task<Int32>"},
		{"Dictionary`2[[System.String, System.Private.CoreLib],[System.Collections.Generic.List`1[[System.Int64, "
		 "System.Private.CoreLib]], System.Private.CoreLib]]",
		 "Dictionary<System.String, System.Collections.Generic.List<Int64>>"},
		{"Dictionary<string, List<long>>", "Dictionary<System.String, List<Int64>>"},
		{"int[]", "Int32[]"},
		{"Point", "Point"},
		{"Outer+Inner<bool>", "Outer+Inner<Boolean>"},
		{"<ClassicLeaf>d__", "<ClassicLeaf>d__"},
		{"", ""},
	};
	char buf[256];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		CHECK(adac_tn_normalize(cases[i].in, buf, sizeof buf));
		CHECK_EQ_STR(buf, cases[i].want);
	}
	char tiny[8];
	CHECK(!adac_tn_normalize("Task<int>", tiny, sizeof tiny));
	CHECK(strlen(tiny) < sizeof tiny);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--oracle") == 0)
		return run_oracle();
	test_compressed();
	test_method_sigs();
	test_bad_sigs();
	test_text();
	test_normalize();
	return check_report("signature");
}
