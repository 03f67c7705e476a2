/* output.c - printing to a front end's sink. */
#include <stdio.h>
#include <stdlib.h>

#include "base/output.h"

void adac_vprint(struct adac_out *out, const char *fmt, va_list ap)
{
	if (out->vprint) {
		out->vprint(out->ctx, fmt, ap);
		return;
	}
	char small[512];
	va_list copy;
	va_copy(copy, ap);
	int n = vsnprintf(small, sizeof small, fmt, copy);
	va_end(copy);
	if (n < 0)
		return;
	if ((size_t)n < sizeof small) {
		out->write(out->ctx, small, (size_t)n);
		return;
	}
	char *big = malloc((size_t)n + 1);
	if (!big)
		return;
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	out->write(out->ctx, big, (size_t)n);
	free(big);
}

void adac_print(struct adac_out *out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	adac_vprint(out, fmt, ap);
	va_end(ap);
}

void adac_progress(struct adac_out *out, const char *phase, uint64_t done, uint64_t total)
{
	if (out && out->progress)
		out->progress(out->ctx, phase, done, total);
}

bool adac_interrupted(struct adac_out *out)
{
	return out && out->interrupted && out->interrupted(out->ctx);
}
