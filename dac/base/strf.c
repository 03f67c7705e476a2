/* strf.c - a formatted string on the heap. */
#include "base/strf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int adac_strf(char **dst, struct adac_error *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	free(*dst);
	*dst = s;
	return 0;
}

char *adac_vformat(const char *fmt, va_list ap)
{
	char *s;
	return vasprintf(&s, fmt, ap) < 0 ? NULL : s;
}
