/* testutil.h - small helpers the unit tests share: an output sink into a string, and reading a
 * whole file. */
#ifndef ADAC_TESTUTIL_H
#define ADAC_TESTUTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Collects what a command or dump prints (an adac_out sink: {.write = buf_write, .ctx = &buf}). */
struct buf {
	char *p;
	size_t n;
};

static inline void buf_write(void *ctx, const char *text, size_t len)
{
	struct buf *b = ctx;
	b->p = realloc(b->p, b->n + len + 1);
	memcpy(b->p + b->n, text, len);
	b->n += len;
	b->p[b->n] = '\0';
}

/* The whole file, NUL-terminated (caller frees); NULL when it cannot be read. */
static inline char *slurp(const char *path, size_t *len)
{
	if (len)
		*len = 0;
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *p = malloc(n > 0 ? (size_t)n + 1 : 1);
	if (n < 0 || fread(p, 1, (size_t)n, f) != (size_t)n)
		n = 0;
	p[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return p;
}

#endif
