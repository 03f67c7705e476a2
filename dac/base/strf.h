/* strf.h - a formatted string on the heap, replacing the one a pointer held. */
#ifndef ADAC_STRF_H
#define ADAC_STRF_H

#include <stdarg.h>

#include "base/error.h"

/* *dst = the formatted text (the old *dst freed). 0, or -1 with ADAC_E_NOMEM (*dst unchanged). */
int adac_strf(char **dst, struct adac_error *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The text formatted on the heap (free it), NULL when memory runs out. */
char *adac_vformat(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

#endif
