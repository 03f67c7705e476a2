/* line.h - a line of text built in memory without printf, written to the sink at once: the lines
 * a million-chain listing repeats (ps's text and JSON Lines). Running out of memory sticks
 * (nomem) and drops what follows. */
#ifndef ADAC_LINE_H
#define ADAC_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct adac_line {
	char *p;
	size_t len, cap;
	bool nomem;
	bool borrowed;   /* p is the caller's buffer (adac_line_on): copied to the heap to grow */
};

struct adac_out;

/* A line that starts in the caller's buffer (most lines fit on the stack: no malloc). */
static inline struct adac_line adac_line_on(char *buf, size_t size)
{
	return (struct adac_line){.p = buf, .cap = size, .borrowed = true};
}

void adac_line_grow_put(struct adac_line *b, const char *s, size_t n);
/* (Inline: a million-stack listing puts hundreds of millions of pieces.) */
static inline void adac_line_put_n(struct adac_line *b, const char *s, size_t n)
{
	if (b->len + n < b->cap && !b->nomem) {
		memcpy(b->p + b->len, s, n);
		b->len += n;
	} else {
		adac_line_grow_put(b, s, n);
	}
}
void adac_line_put(struct adac_line *b, const char *s);
/* A short piece (up to 63 bytes) through vsnprintf, for what the others do not cover. */
void adac_line_fmt(struct adac_line *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void adac_line_u64(struct adac_line *b, uint64_t v);
void adac_line_i64(struct adac_line *b, int64_t v);
/* 0x%016llx, as addresses are printed everywhere. */
void adac_line_addr(struct adac_line *b, uint64_t v);
/* The length (1 to 4) of the UTF-8 sequence s starts with, among its n bytes: 0 when it starts none
 * (a stray continuation byte, a cut sequence, an overlong form, a surrogate, past U+10FFFF), as
 * jansson judges it. */
size_t adac_utf8_seq(const char *s, size_t n);
/* n bytes of text from the target (names, paths), each byte that starts no UTF-8 sequence written
 * as U+FFFD: what JSON may hold (jansson takes no other), and what a terminal shows. */
void adac_line_utf8(struct adac_line *b, const char *s, size_t n);
/* A JSON string escaped as jansson's dump escapes it (quote, backslash, \b \f \n \r \t, other control
 * characters as \u00XX; UTF-8 as it is, a byte that starts no UTF-8 sequence as U+FFFD, as
 * adac_line_utf8), or null for NULL. */
void adac_line_json_str(struct adac_line *b, const char *s);
/* The same for n bytes (a NUL among them too). */
void adac_line_json_strn(struct adac_line *b, const char *s, size_t n);
/* Writes the line to the sink (what it holds, even after nomem) and empties it. */
void adac_line_write(struct adac_line *b, struct adac_out *out);
void adac_line_free(struct adac_line *b);

#endif
