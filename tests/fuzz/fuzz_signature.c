/* fuzz_signature.c - the signature decoder and the type-name engine on arbitrary blobs. The first
 * byte selects: bits 0-2 the kind (enum adac_sig_kind; 6 and 7 are methods), bit 3 4-byte
 * ELEMENT_TYPE_INTERNAL handles, bit 4 ADAC_TN_NO_NAMESPACE, bits 5-7 unused; the rest is the blob.
 * A decoded signature is checked node by node and formatted in every naming style without
 * metadata or runtime (tokens as numbers, generic variables as !n, handles as addresses; names
 * from real metadata are fuzzed by fuzz_ecma_metadata). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metadata/ecma_metadata.h"
#include "metadata/signature.h"
#include "types/typename.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_method(const struct adac_sig_method *m, unsigned depth);

/* Every node is complete: the pointers its element type needs are set, and nesting is bounded. */
static void check_type(const struct adac_sig_type *t, unsigned depth)
{
	if (!t || depth > ADAC_MAX_SIG_DEPTH)
		__builtin_trap();
	switch (t->elem) {
	case ADAC_ELEM_PTR:
	case ADAC_ELEM_BYREF:
	case ADAC_ELEM_SZARRAY:
		check_type(t->inner, depth + 1);
		break;
	case ADAC_ELEM_ARRAY:
		if (t->number == 0)
			__builtin_trap();
		check_type(t->inner, depth + 1);
		break;
	case ADAC_ELEM_GENERICINST:
		if (!t->inner || t->nargs == 0 || !t->args ||
		    (t->inner->elem != ADAC_ELEM_CLASS && t->inner->elem != ADAC_ELEM_VALUETYPE))
			__builtin_trap();
		for (uint32_t i = 0; i < t->nargs; i++)
			check_type(t->args[i], depth + 1);
		break;
	case ADAC_ELEM_FNPTR:
		check_method(t->fnptr, depth + 1);
		break;
	case ADAC_ELEM_CLASS:
	case ADAC_ELEM_VALUETYPE: {
		unsigned table = t->token >> 24;
		if ((table != 0x01 && table != 0x02 && table != 0x1b) || (t->token & 0xffffff) == 0)
			__builtin_trap();
		break;
	}
	default:
		break;
	}
}

static void check_method(const struct adac_sig_method *m, unsigned depth)
{
	if (!m || (m->nparams && !m->params) || (m->sentinel != UINT32_MAX && m->sentinel >= m->nparams))
		__builtin_trap();
	check_type(m->ret, depth);
	for (uint32_t i = 0; i < m->nparams; i++)
		check_type(m->params[i], depth);
}

static void check_text(const struct adac_sig_text *t)
{
	const char *s = adac_sig_text_str(t);
	if (strlen(s) != t->len || t->len >= ADAC_MAX_NAME_BYTES || (t->s && t->len >= t->cap))
		__builtin_trap();
}

static void format(const struct adac_sig *s, const struct adac_type_ctx *n, enum adac_name_style style,
                   unsigned flags)
{
	struct adac_sig_text t = {0};
	struct adac_error err = {0};
	int rc = 0;
	switch (s->kind) {
	case ADAC_SIG_METHOD:
	case ADAC_SIG_PROPERTY:
		rc = adac_tn_sig(n, s->method.ret, style, flags, &t, &err);
		if (rc == 0)
			rc = adac_sig_text_put(&t, " ", &err);
		if (rc == 0)
			rc = adac_tn_params(n, &s->method, style, flags, &t, &err);
		break;
	case ADAC_SIG_LOCALS:
	case ADAC_SIG_METHODSPEC:
		for (uint32_t i = 0; rc == 0 && i < s->count; i++) {
			if (i)
				rc = adac_sig_text_put(&t, ", ", &err);
			if (rc == 0)
				rc = adac_tn_sig(n, s->types[i], style, flags, &t, &err);
		}
		break;
	default:
		rc = adac_tn_sig(n, s->type, style, flags, &t, &err);
		break;
	}
	if (rc != 0 && (err.code == ADAC_E_OK || err.msg[0] == '\0'))
		__builtin_trap();
	check_text(&t);
	if (rc == 0) {
		/* The result's arity stripped, and taken. */
		if (adac_tn_strip_arity(adac_sig_text_str(&t)) > t.len)
			__builtin_trap();
		free(adac_sig_text_take(&t));
		if (t.s || t.len || t.cap)
			__builtin_trap();
	}
	adac_sig_text_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t sel = data[0];
	static const enum adac_sig_kind kinds[8] = {ADAC_SIG_METHOD, ADAC_SIG_PROPERTY, ADAC_SIG_FIELD,
	                                            ADAC_SIG_LOCALS, ADAC_SIG_TYPESPEC, ADAC_SIG_METHODSPEC,
	                                            ADAC_SIG_METHOD, ADAC_SIG_METHOD};
	enum adac_sig_kind kind = kinds[sel & 7];
	const uint8_t *blob = data + 1;
	size_t len = size - 1;

	/* The compressed-integer reader alone, over the whole blob. */
	for (size_t pos = 0; pos < len;) {
		size_t before = pos;
		uint32_t v;
		if (adac_ecma_uncompress(blob, len, &pos, &v) != 0) {
			if (pos != before)
				__builtin_trap();
			pos++;
		} else if (pos <= before || pos > len || pos - before > 4 || v > 0x1fffffff) {
			__builtin_trap();
		}
	}

	struct adac_sig *s = NULL;
	struct adac_error err = {0};
	int rc = adac_sig_decode(blob, len, kind, (sel & 8) ? 4 : 8, &s, &err);
	if (rc != 0) {
		if (s || (err.code != ADAC_E_CORRUPT && err.code != ADAC_E_LIMIT) || err.msg[0] == '\0')
			__builtin_trap();
		return 0;
	}
	if (!s || s->kind != kind)
		__builtin_trap();
	switch (kind) {
	case ADAC_SIG_METHOD:
	case ADAC_SIG_PROPERTY:
		check_method(&s->method, 0);
		break;
	case ADAC_SIG_LOCALS:
	case ADAC_SIG_METHODSPEC:
		if (s->count > len || (s->count && !s->types))
			__builtin_trap();
		for (uint32_t i = 0; i < s->count; i++)
			check_type(s->types[i], 0);
		break;
	default:
		check_type(s->type, 0);
		break;
	}

	struct adac_type_ctx n;
	adac_type_ctx_for_metadata(&n, NULL, 0, 0);
	static const enum adac_name_style styles[] = {ADAC_STYLE_SOS, ADAC_STYLE_CSHARP, ADAC_STYLE_DAC};
	for (unsigned k = 0; k < 3; k++)
		format(s, &n, styles[k], (sel & 0x10) ? ADAC_TN_NO_NAMESPACE : 0u);
	adac_sig_free(s);
	return 0;
}
