/* signature.c - decodes ECMA-335 signature blobs into a type tree; the text buffer of names. */
#include "metadata/signature.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metadata/ecma_metadata.h"

/* ---- Arena ---- */

struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

struct adac_sig_arena {
	struct arena_block *head;
};

static void *arena_alloc(struct adac_sig_arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	struct arena_block *b = a->head;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > 4096 ? n : 4096;
		b = malloc(sizeof *b + cap);
		if (!b)
			return NULL;
		b->next = a->head;
		b->used = 0;
		b->cap = cap;
		a->head = b;
	}
	void *p = b->data + b->used;
	b->used += n;
	memset(p, 0, n);
	return p;
}

void adac_sig_free(struct adac_sig *s)
{
	if (!s)
		return;
	if (s->arena) {
		struct arena_block *b = s->arena->head;
		while (b) {
			struct arena_block *next = b->next;
			free(b);
			b = next;
		}
		free(s->arena);
	}
	free(s);
}

/* ---- Decoder ---- */

struct decoder {
	const uint8_t *blob;
	size_t len;
	size_t pos;
	unsigned ptr_size;
	struct adac_sig_arena *arena;
	struct adac_error *err;
};

static int corrupt(struct decoder *d, const char *what)
{
	return adac_fail(d->err, ADAC_E_CORRUPT, 0, "signature: %s at byte %zu of %zu", what, d->pos, d->len);
}

static int u8(struct decoder *d, uint8_t *out)
{
	if (d->pos >= d->len)
		return corrupt(d, "unexpected end");
	*out = d->blob[d->pos++];
	return 0;
}

static int peek(struct decoder *d, uint8_t *out)
{
	if (d->pos >= d->len)
		return corrupt(d, "unexpected end");
	*out = d->blob[d->pos];
	return 0;
}

static int uncompress(struct decoder *d, uint32_t *out)
{
	if (adac_ecma_uncompress(d->blob, d->len, &d->pos, out))
		return corrupt(d, "bad compressed integer");
	return 0;
}

/* A count of items that take at least one byte each. */
static int count(struct decoder *d, uint32_t *out, const char *what)
{
	if (uncompress(d, out))
		return -1;
	if (*out > d->len - d->pos)
		return adac_fail(d->err, ADAC_E_CORRUPT, 0, "signature: %u %s but only %zu bytes left at byte %zu", *out, what,
		                 d->len - d->pos, d->pos);
	return 0;
}

static int typedef_or_ref(struct decoder *d, uint32_t *token)
{
	uint32_t v = 0;
	if (uncompress(d, &v))
		return -1;
	static const uint8_t tables[3] = {ADAC_ECMA_TYPEDEF, ADAC_ECMA_TYPEREF, ADAC_ECMA_TYPESPEC};
	/* A row id past 24 bits has no token: truncating it would name another row (or row 0). */
	if ((v & 3) == 3 || (v >> 2) == 0 || (v >> 2) > 0xffffff)
		return corrupt(d, "bad TypeDefOrRefOrSpec encoding");
	*token = ADAC_ECMA_TOKEN(tables[v & 3], v >> 2);
	return 0;
}

static struct adac_sig_type *new_type(struct decoder *d)
{
	struct adac_sig_type *t = arena_alloc(d->arena, sizeof *t);
	if (!t)
		adac_fail(d->err, ADAC_E_NOMEM, 0, "out of memory decoding a signature");
	return t;
}

static int parse_type(struct decoder *d, unsigned depth, const struct adac_sig_type **out);
static int parse_method(struct decoder *d, unsigned depth, uint8_t cc, struct adac_sig_method *m);

/* Custom modifiers (and ELEMENT_TYPE_CMOD_INTERNAL) before a type: skipped. */
static int skip_cmods(struct decoder *d, bool *had)
{
	for (;;) {
		uint8_t b = 0;
		if (peek(d, &b))
			return -1;
		if (b == ADAC_ELEM_CMOD_OPT || b == ADAC_ELEM_CMOD_REQD) {
			uint32_t tok = 0;
			d->pos++;
			if (typedef_or_ref(d, &tok))
				return -1;
			*had = true;
		} else if (b == ADAC_ELEM_CMOD_INTERNAL) {
			d->pos++;
			if (d->len - d->pos < 1u + d->ptr_size)
				return corrupt(d, "truncated internal modifier");
			d->pos += 1u + d->ptr_size;
			*had = true;
		} else {
			return 0;
		}
	}
}

static int parse_type(struct decoder *d, unsigned depth, const struct adac_sig_type **out)
{
	if (depth >= ADAC_MAX_SIG_DEPTH)
		return adac_fail(d->err, ADAC_E_LIMIT, 0, "signature: types nested deeper than %u at byte %zu",
		                 ADAC_MAX_SIG_DEPTH, d->pos);
	bool cmods = false;
	if (skip_cmods(d, &cmods))
		return -1;
	struct adac_sig_type *t = new_type(d);
	if (!t)
		return -1;
	t->has_cmods = cmods;
	uint8_t e = 0;
	if (u8(d, &e))
		return -1;
	t->elem = e;
	switch (e) {
	case ADAC_ELEM_VOID: case ADAC_ELEM_BOOLEAN: case ADAC_ELEM_CHAR: case ADAC_ELEM_I1: case ADAC_ELEM_U1:
	case ADAC_ELEM_I2: case ADAC_ELEM_U2: case ADAC_ELEM_I4: case ADAC_ELEM_U4: case ADAC_ELEM_I8: case ADAC_ELEM_U8:
	case ADAC_ELEM_R4: case ADAC_ELEM_R8: case ADAC_ELEM_STRING: case ADAC_ELEM_TYPEDBYREF: case ADAC_ELEM_I:
	case ADAC_ELEM_U: case ADAC_ELEM_OBJECT:
		break;
	case ADAC_ELEM_PTR: case ADAC_ELEM_BYREF: case ADAC_ELEM_SZARRAY:
		if (parse_type(d, depth + 1, &t->inner))
			return -1;
		break;
	case ADAC_ELEM_PINNED: {
		/* PINNED applies to the type that follows (locals). */
		const struct adac_sig_type *inner;
		if (parse_type(d, depth + 1, &inner))
			return -1;
		*t = *inner;
		t->pinned = true;
		break;
	}
	case ADAC_ELEM_VALUETYPE: case ADAC_ELEM_CLASS:
		if (typedef_or_ref(d, &t->token))
			return -1;
		break;
	case ADAC_ELEM_VAR: case ADAC_ELEM_MVAR:
		if (uncompress(d, &t->number))
			return -1;
		break;
	case ADAC_ELEM_ARRAY: {
		uint32_t nsizes = 0, nlo = 0, v = 0;
		if (parse_type(d, depth + 1, &t->inner) || uncompress(d, &t->number) || count(d, &nsizes, "array sizes"))
			return -1;
		for (uint32_t i = 0; i < nsizes; i++)
			if (uncompress(d, &v))
				return -1;
		if (count(d, &nlo, "array lower bounds"))
			return -1;
		for (uint32_t i = 0; i < nlo; i++)
			if (uncompress(d, &v))
				return -1;
		if (t->number == 0)
			return corrupt(d, "array of rank 0");
		break;
	}
	case ADAC_ELEM_GENERICINST: {
		struct adac_sig_type *g = new_type(d);
		uint8_t kind = 0;
		if (!g || u8(d, &kind))
			return -1;
		if (kind != ADAC_ELEM_CLASS && kind != ADAC_ELEM_VALUETYPE)
			return corrupt(d, "generic instantiation of neither class nor value type");
		g->elem = kind;
		if (typedef_or_ref(d, &g->token) || count(d, &t->nargs, "generic arguments"))
			return -1;
		if (t->nargs == 0)
			return corrupt(d, "generic instantiation without arguments");
		const struct adac_sig_type **args = arena_alloc(d->arena, t->nargs * sizeof *args);
		if (!args)
			return adac_fail(d->err, ADAC_E_NOMEM, 0, "out of memory decoding a signature");
		for (uint32_t i = 0; i < t->nargs; i++)
			if (parse_type(d, depth + 1, &args[i]))
				return -1;
		t->inner = g;
		t->args = args;
		break;
	}
	case ADAC_ELEM_FNPTR: {
		struct adac_sig_method *m = arena_alloc(d->arena, sizeof *m);
		uint8_t cc = 0;
		if (!m)
			return adac_fail(d->err, ADAC_E_NOMEM, 0, "out of memory decoding a signature");
		if (u8(d, &cc) || parse_method(d, depth + 1, cc, m))
			return -1;
		t->fnptr = m;
		break;
	}
	case ADAC_ELEM_INTERNAL: {
		if (d->len - d->pos < d->ptr_size)
			return corrupt(d, "truncated internal type handle");
		uint64_t h = 0;
		memcpy(&h, d->blob + d->pos, d->ptr_size);
		d->pos += d->ptr_size;
		t->handle = h;
		break;
	}
	default:
		d->pos--;
		return corrupt(d, "unknown element type");
	}
	*out = t;
	return 0;
}

/* After the calling-convention byte: [GenParamCount] ParamCount RetType Param*. */
static int parse_method(struct decoder *d, unsigned depth, uint8_t cc, struct adac_sig_method *m)
{
	if (depth >= ADAC_MAX_SIG_DEPTH)
		return adac_fail(d->err, ADAC_E_LIMIT, 0, "signature: types nested deeper than %u", ADAC_MAX_SIG_DEPTH);
	m->callconv = cc;
	m->sentinel = UINT32_MAX;
	if ((cc & ADAC_SIG_CC_GENERIC) && uncompress(d, &m->gen_params))
		return -1;
	if (count(d, &m->nparams, "parameters") || parse_type(d, depth + 1, &m->ret))
		return -1;
	const struct adac_sig_type **params = arena_alloc(d->arena, (m->nparams ? m->nparams : 1) * sizeof *params);
	if (!params)
		return adac_fail(d->err, ADAC_E_NOMEM, 0, "out of memory decoding a signature");
	for (uint32_t i = 0; i < m->nparams; i++) {
		uint8_t b = 0;
		if (peek(d, &b))
			return -1;
		if (b == ADAC_ELEM_SENTINEL) {
			if (m->sentinel != UINT32_MAX)
				return corrupt(d, "second vararg sentinel");
			m->sentinel = i;
			d->pos++;
		}
		if (parse_type(d, depth + 1, &params[i]))
			return -1;
	}
	m->params = params;
	return 0;
}

int adac_sig_decode(const uint8_t *blob, size_t len, enum adac_sig_kind kind, unsigned ptr_size,
                    struct adac_sig **out, struct adac_error *err)
{
	*out = NULL;
	struct adac_sig *s = calloc(1, sizeof *s);
	struct adac_sig_arena *a = calloc(1, sizeof *a);
	if (!s || !a) {
		free(s);
		free(a);
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory decoding a signature");
	}
	s->arena = a;
	s->kind = kind;
	struct decoder d = {blob, len, 0, ptr_size == 4 ? 4u : 8u, a, err};
	uint8_t cc = 0;
	int rc = 0;
	switch (kind) {
	case ADAC_SIG_METHOD:
		if (u8(&d, &cc))
			rc = -1;
		else if (((cc & ADAC_SIG_CC_MASK) >= ADAC_SIG_CC_FIELD && (cc & ADAC_SIG_CC_MASK) <= ADAC_SIG_CC_PROPERTY) ||
		         (cc & ADAC_SIG_CC_MASK) == ADAC_SIG_CC_GENERICINST)
			/* 0-5 and 9 (unmanaged, function pointers) are methods' */
			rc = adac_fail(err, ADAC_E_CORRUPT, 0, "signature: calling convention 0x%02x is not a method's", cc);
		else
			rc = parse_method(&d, 0, cc, &s->method);
		break;
	case ADAC_SIG_PROPERTY:
		if (u8(&d, &cc))
			rc = -1;
		else if ((cc & ADAC_SIG_CC_MASK) != ADAC_SIG_CC_PROPERTY)
			rc = adac_fail(err, ADAC_E_CORRUPT, 0, "signature: 0x%02x does not start a property signature", cc);
		else
			rc = parse_method(&d, 0, cc, &s->method);
		break;
	case ADAC_SIG_FIELD:
		if (u8(&d, &cc))
			rc = -1;
		else if ((cc & ADAC_SIG_CC_MASK) != ADAC_SIG_CC_FIELD)
			rc = adac_fail(err, ADAC_E_CORRUPT, 0, "signature: 0x%02x does not start a field signature", cc);
		else
			rc = parse_type(&d, 0, &s->type);
		break;
	case ADAC_SIG_TYPESPEC:
		rc = parse_type(&d, 0, &s->type);
		break;
	case ADAC_SIG_LOCALS:
	case ADAC_SIG_METHODSPEC: {
		uint8_t want = kind == ADAC_SIG_LOCALS ? ADAC_SIG_CC_LOCALS : ADAC_SIG_CC_GENERICINST;
		if (u8(&d, &cc)) {
			rc = -1;
			break;
		}
		if (cc != want) {
			rc = adac_fail(err, ADAC_E_CORRUPT, 0, "signature: 0x%02x does not start a %s signature", cc,
			               kind == ADAC_SIG_LOCALS ? "local variable" : "method instantiation");
			break;
		}
		if (count(&d, &s->count, kind == ADAC_SIG_LOCALS ? "locals" : "generic arguments")) {
			rc = -1;
			break;
		}
		const struct adac_sig_type **types = arena_alloc(a, (s->count ? s->count : 1) * sizeof *types);
		if (!types) {
			rc = adac_fail(err, ADAC_E_NOMEM, 0, "out of memory decoding a signature");
			break;
		}
		for (uint32_t i = 0; i < s->count && rc == 0; i++)
			rc = parse_type(&d, 0, &types[i]);
		s->types = types;
		break;
	}
	}
	if (rc) {
		adac_sig_free(s);
		return -1;
	}
	*out = s;
	return 0;
}

/* ---- Text ---- */

static int text_reserve(struct adac_sig_text *t, size_t more, struct adac_error *err)
{
	if (t->len + more + 1 > ADAC_MAX_NAME_BYTES)
		return adac_fail(err, ADAC_E_LIMIT, 0, "a name is longer than %u bytes", ADAC_MAX_NAME_BYTES);
	if (t->len + more + 1 <= t->cap)
		return 0;
	size_t cap = t->cap ? t->cap : 64;
	while (cap < t->len + more + 1)
		cap *= 2;
	char *s = realloc(t->s, cap);
	if (!s)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory formatting a name");
	t->s = s;
	t->cap = cap;
	return 0;
}

int adac_sig_text_putn(struct adac_sig_text *t, const char *s, size_t n, struct adac_error *err)
{
	if (text_reserve(t, n, err))
		return -1;
	memcpy(t->s + t->len, s, n);
	t->len += n;
	t->s[t->len] = '\0';
	return 0;
}

int adac_sig_text_put(struct adac_sig_text *t, const char *s, struct adac_error *err)
{
	return adac_sig_text_putn(t, s, strlen(s), err);
}

int adac_sig_text_putf(struct adac_sig_text *t, struct adac_error *err, const char *fmt, ...)
{
	char small[128];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0)
		return adac_fail(err, ADAC_E_NOMEM, 0, "cannot format a name");
	if ((size_t)n < sizeof small)
		return adac_sig_text_putn(t, small, (size_t)n, err);
	if (text_reserve(t, (size_t)n, err))
		return -1;
	va_start(ap, fmt);
	vsnprintf(t->s + t->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
	return 0;
}

const char *adac_sig_text_str(const struct adac_sig_text *t) { return t->s ? t->s : ""; }

char *adac_sig_text_take(struct adac_sig_text *t)
{
	char *s = t->s ? t->s : strdup("");
	t->s = NULL;
	t->len = t->cap = 0;
	return s;
}

void adac_sig_text_free(struct adac_sig_text *t)
{
	free(t->s);
	t->s = NULL;
	t->len = t->cap = 0;
}
