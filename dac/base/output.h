/* output.h - the sink a front end gives for output: the CLI writes to stdout, the LLDB plugin to
 * the command's result. Everything the library prints goes through one. */
#ifndef ADAC_OUTPUT_H
#define ADAC_OUTPUT_H

#include <stdarg.h>
#include <stddef.h>

struct adac_out {
	void (*write)(void *ctx, const char *text, size_t len);
	void *ctx;
	/* Optional: formats straight into the sink (the CLI's stdout), saving a copy per line. */
	void (*vprint)(void *ctx, const char *fmt, va_list ap);
};

void adac_print(struct adac_out *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void adac_vprint(struct adac_out *out, const char *fmt, va_list ap);

#endif
