/* asyncdac.h - the public API of the data-access library, used by the front ends in plugin/.
 *
 * Front ends make a target (a core file, a live pid, or their own backend such as LLDB's), then
 * run a command on it; the command layer parses the command's options, reads the runtime and
 * prints through an output sink, so the LLDB plugin and the CLI print exactly the same thing. */
#ifndef ASYNCDAC_H
#define ASYNCDAC_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/output.h"
#include "target/symbols.h"
#include "target/target.h"

#define ASYNCDAC_VERSION "0.1.0"

/* Which front end runs a command: options that name threads differ (LLDB index vs OS tid). */
enum adac_frontend { ADAC_FRONTEND_CLI, ADAC_FRONTEND_LLDB };

/* Runs `argv[0]` ("runtime", "bt", ...) with its options on the target. Returns 0, or -1 with err
 * set to a one-line message (printed by the front end as LLDB's "error: ..." or the CLI's
 * "asyncdac: error: ..."). Output produced before a failure stays printed. */
int adac_command_run(struct adac_target *t, enum adac_frontend fe, int argc, char **argv,
                     struct adac_out *out, struct adac_error *err);

/* A command's help, shared by `help async <cmd>` in LLDB and `asyncdac <cmd> --help`. */
struct adac_command_info {
	const char *name;     /* "runtime" */
	const char *summary;  /* one line, no trailing period, like LLDB's command summaries */
	const char *syntax;   /* the options after the command (and, in the CLI, after the target) */
	const char *details;  /* paragraphs and an option list; may be "" */
};

/* The commands in the order help lists them; the array ends with a NULL name. */
const struct adac_command_info *adac_commands(void);
const struct adac_command_info *adac_command_find(const char *name);

#endif
