/* output.h - the sink a front end gives for output: the CLI writes to stdout, the LLDB plugin to
 * the command's result. Everything the library prints goes through one; the library never writes
 * to the terminal itself. */
#ifndef ADAC_OUTPUT_H
#define ADAC_OUTPUT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct adac_out {
	void (*write)(void *ctx, const char *text, size_t len);
	void *ctx;
	/* Optional: formats straight into the sink (the CLI's stdout), saving a copy per line. */
	void (*vprint)(void *ctx, const char *fmt, va_list ap);
	/* Optional: how far a long command is, for a front end that shows it (whether and when to
	 * show it is the front end's choice). `phase` names the step ("scanning the heap"); done of
	 * total units, total 0 when unknown. phase NULL: the command is past its long steps (erase
	 * what was shown). Called often: it must be cheap. */
	void (*progress)(void *ctx, const char *phase, uint64_t done, uint64_t total);
	/* Optional: whether the user asked the command to stop (LLDB's Ctrl-C, an IDE's cancel).
	 * Polled where progress is reported: the command then ends with ADAC_E_INTERRUPTED
	 * ("interrupted", as LLDB says it), keeping what it printed. progress and interrupted are
	 * called on the thread that runs the command (LLDB tells a Ctrl-C to that thread only). */
	bool (*interrupted)(void *ctx);
};

void adac_print(struct adac_out *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void adac_vprint(struct adac_out *out, const char *fmt, va_list ap);

/* Reports progress to the sink, if there is one and it takes it; phase NULL ends it. */
void adac_progress(struct adac_out *out, const char *phase, uint64_t done, uint64_t total);

/* The sink's interrupted, false when it has none (or there is no sink). */
bool adac_interrupted(struct adac_out *out);

#endif
