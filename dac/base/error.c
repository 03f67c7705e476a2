/* error.c - error codes, messages and context wrapping. */
#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/line.h"

static const char *const errstr_table[] = {
#define ADAC_X_STR(name, text) text,
	ADAC_ERRORS(ADAC_X_STR)
#undef ADAC_X_STR
};

const char *adac_errstr(enum adac_errcode code)
{
	if ((unsigned)code >= ADAC_E_COUNT_)
		return "unknown error";
	return errstr_table[code];
}

/* Messages are one line of text whatever they quote (an argument, a name or path read from the
 * target): control characters, and bytes that start no UTF-8 sequence (a corrupt name, a sequence
 * the message's size cut), become '?'. */
static void one_line(char *s)
{
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		size_t k = adac_utf8_seq(s + i, n - i);
		if (k == 0 || (unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
			s[i++] = '?';
			continue;
		}
		i += k;
	}
}

void adac_fail_record(struct adac_error *err, enum adac_errcode code, uint64_t addr, const char *fmt, ...)
{
	if (!err || err->code != ADAC_E_OK)
		return;
	err->code = code;
	err->addr = addr;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	one_line(err->msg);
}

void adac_error_wrap(struct adac_error *err, const char *fmt, ...)
{
	if (!err || err->code == ADAC_E_OK)
		return;
	char prefix[ADAC_ERROR_MSG_MAX];
	char old[ADAC_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof old);
	/* Truncation keeps the start of the line, which holds the context. */
	size_t p = strnlen(prefix, sizeof prefix - 1);
	memcpy(err->msg, prefix, p);
	size_t o = strnlen(old, sizeof old - 1);
	if (o > sizeof err->msg - 1 - p)
		o = sizeof err->msg - 1 - p;
	memcpy(err->msg + p, old, o);
	err->msg[p + o] = '\0';
	one_line(err->msg);
}

void adac_error_clear(struct adac_error *err)
{
	if (!err)
		return;
	err->code = ADAC_E_OK;
	err->addr = 0;
	err->msg[0] = '\0';
}

void adac_note_add(char *list, size_t size, const char *fmt, ...)
{
	size_t used = strnlen(list, size);
	if (used + 4 >= size)
		return;
	if (used) {
		memcpy(list + used, "; ", 3);
		used += 2;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(list + used, size - used, fmt, ap);
	va_end(ap);
	one_line(list + used);
}

int adac_error_copy(struct adac_error *err, const struct adac_error *src)
{
	if (err && err != src && err->code == ADAC_E_OK)
		*err = *src;
	return -1;
}
