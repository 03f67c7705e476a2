/* line.c - a line of text built in memory without printf. */
#include "base/line.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/output.h"

/* adac_line_put_n when the piece does not fit (or memory ran out before). */
void adac_line_grow_put(struct adac_line *b, const char *s, size_t n)
{
	if (b->nomem)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 1024;
		while (b->len + n + 1 > cap)
			cap *= 2;
		char *p = b->borrowed ? malloc(cap) : realloc(b->p, cap);
		if (!p) {
			b->nomem = true;
			return;
		}
		if (b->borrowed)
			memcpy(p, b->p, b->len);
		b->borrowed = false;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

void adac_line_put(struct adac_line *b, const char *s) { adac_line_put_n(b, s, strlen(s)); }

void adac_line_fmt(struct adac_line *b, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n > 0)
		adac_line_put_n(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

void adac_line_u64(struct adac_line *b, uint64_t v)
{
	char tmp[24], *w = tmp + sizeof tmp;
	do
		*--w = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	adac_line_put_n(b, w, (size_t)(tmp + sizeof tmp - w));
}

void adac_line_i64(struct adac_line *b, int64_t v)
{
	if (v < 0) {
		adac_line_put_n(b, "-", 1);
		adac_line_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		adac_line_u64(b, (uint64_t)v);
	}
}

void adac_line_addr(struct adac_line *b, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	char tmp[18] = "0x";
	for (int i = 0; i < 16; i++)
		tmp[2 + i] = hex[(v >> (60 - 4 * i)) & 0xf];
	adac_line_put_n(b, tmp, sizeof tmp);
}

void adac_line_json_str(struct adac_line *b, const char *s)
{
	if (!s)
		adac_line_put(b, "null");
	else
		adac_line_json_strn(b, s, strlen(s));
}

size_t adac_utf8_seq(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	if (!n)
		return 0;
	if (u[0] < 0x80)
		return 1;
	/* The lead byte: 0xC2-0xDF two bytes, 0xE0-0xEF three, 0xF0-0xF4 four (0x80-0xC1 and 0xF5-0xFF
	 * start nothing). */
	size_t len = u[0] >= 0xC2 && u[0] <= 0xDF ? 2 : u[0] >= 0xE0 && u[0] <= 0xEF ? 3 : u[0] >= 0xF0 && u[0] <= 0xF4 ? 4 : 0;
	if (!len || len > n)
		return 0;
	uint32_t cp = u[0] & (0x7Fu >> len);
	for (size_t i = 1; i < len; i++) {
		if ((u[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (u[i] & 0x3F);
	}
	/* Overlong forms, surrogates and past U+10FFFF are not UTF-8. */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return len;
}

/* U+FFFD REPLACEMENT CHARACTER, for a byte that starts no UTF-8 sequence. */
#define REPLACEMENT "\xEF\xBF\xBD"

void adac_line_utf8(struct adac_line *b, const char *s, size_t n)
{
	const char *run = s, *end = s + n;
	while (s < end) {
		if ((unsigned char)*s < 0x80) {
			s++;
			continue;
		}
		size_t len = adac_utf8_seq(s, (size_t)(end - s));
		if (len) {
			s += len;
			continue;
		}
		adac_line_put_n(b, run, (size_t)(s - run));
		adac_line_put_n(b, REPLACEMENT, 3);
		run = ++s;
	}
	adac_line_put_n(b, run, (size_t)(s - run));
}

void adac_line_json_strn(struct adac_line *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	const char *end = s + n;
	adac_line_put_n(b, "\"", 1);
	for (;;) {
		/* A run of what a JSON string holds as it is (as UTF-8, adac_line_utf8), then one escape. */
		const char *run = s;
		unsigned char high = 0;
		for (; s < end && (unsigned char)*s >= 0x20 && *s != '"' && *s != '\\'; s++)
			high |= (unsigned char)*s;
		if (high & 0x80)
			adac_line_utf8(b, run, (size_t)(s - run));
		else
			adac_line_put_n(b, run, (size_t)(s - run));
		if (s == end)
			break;
		unsigned char c = (unsigned char)*s++;
		switch (c) {
		case '"': adac_line_put_n(b, "\\\"", 2); break;
		case '\\': adac_line_put_n(b, "\\\\", 2); break;
		case '\b': adac_line_put_n(b, "\\b", 2); break;
		case '\f': adac_line_put_n(b, "\\f", 2); break;
		case '\n': adac_line_put_n(b, "\\n", 2); break;
		case '\r': adac_line_put_n(b, "\\r", 2); break;
		case '\t': adac_line_put_n(b, "\\t", 2); break;
		default: {
			char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xf]};
			adac_line_put_n(b, u, sizeof u);
		}
		}
	}
	adac_line_put_n(b, "\"", 1);
}

void adac_line_write(struct adac_line *b, struct adac_out *out)
{
	if (b->len)
		out->write(out->ctx, b->p, b->len);
	b->len = 0;
}

void adac_line_free(struct adac_line *b)
{
	if (!b->borrowed)
		free(b->p);
	*b = (struct adac_line){0};
}
