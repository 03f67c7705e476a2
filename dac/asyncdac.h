/* asyncdac.h - the public API of the data-access library, used by the front ends in plugin/.
 *
 * Front ends make a target (a core file, a live pid, or their own backend such as LLDB's), then
 * run a command on it; the command layer parses the command's options, reads the runtime and
 * prints through an output sink, so the LLDB plugin and the CLI print exactly the same thing. */
#ifndef ASYNCDAC_H
#define ASYNCDAC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/output.h"
#include "target/symbols.h"
#include "target/target.h"

#define ASYNCDAC_VERSION "0.1.0"
/* What this version reads and runs in (`asyncdac --version`), one line each. */
#define ASYNCDAC_SUPPORTED_RUNTIMES                                                          \
	"  .NET 11 on Linux x64: runtime async and classic async, every command\n"            \
	"  .NET 10 with DOTNET_RuntimeAsync=1: bt only (no async debug info, no GC heap)\n"
#define ASYNCDAC_SUPPORTED_LLDB "  LLDB 22 (loaded into another version, the plugin refuses with one line)\n"

/* Which front end runs a command: options that name threads differ (LLDB index vs OS tid). */
enum adac_frontend { ADAC_FRONTEND_CLI, ADAC_FRONTEND_LLDB };

/* Runs `argv[0]` ("runtime", "bt", ...) with its options on the target. Returns 0, or -1 with err
 * set to a one-line message (printed by the front end as LLDB's "error: ..." or the CLI's
 * "asyncdac: error: ..."). Output produced before a failure stays printed. */
int adac_command_run(struct adac_target *t, enum adac_frontend fe, int argc, char **argv,
                     struct adac_out *out, struct adac_error *err);

/* `diff` (commands/cmd_diff.c): argv[0] "diff" and its options, on targets A and B. */
int adac_command_run_diff(struct adac_target *a, struct adac_target *b, int argc, char **argv,
                          struct adac_out *out, struct adac_error *err);

/* A command's help, shared by `help async <cmd>` in LLDB and `asyncdac <cmd> --help`. */
struct adac_command_info {
	const char *name;     /* "runtime" */
	const char *summary;  /* one line, no trailing period, like LLDB's command summaries */
	const char *syntax;   /* the options after the command (and, in the CLI, after the target) */
	const char *details;  /* paragraphs and an option list; may be "" */
	/* What completes option values and the first argument, where they are enumerations:
	 * "--format=tree|folded|dot --dwarf=4|5", and "=select|variable|info" for the first argument
	 * (NULL: none). The options themselves are those the details' "Options:" list names. */
	const char *values;
};

/* The commands in the order help lists them; the array ends with a NULL name. */
const struct adac_command_info *adac_commands(void);
const struct adac_command_info *adac_command_find(const char *name);

/* Completion of a command line (a debugger's tab key), commands/completion.c: words[0..n) are the
 * command's arguments up to the cursor, words[n-1] the one being typed (maybe ""). Returns 0 with
 * *json {"values": [...], "descriptions": [...]}: the words that complete words[n-1] (an option
 * of the details' "Options:" list, or a value of the command's enumerations) with each one's
 * description, none when nothing completes it; -1 with err for an unknown command. */
int adac_command_complete(const char *name, int n, const char *const *words, char **json, struct adac_error *err);
/* The same for a command of a front end's own whose first argument's words `values` names, in
 * adac_command_info.values's form ("=enable|disable"). */
int adac_command_complete_values(const char *values, int n, const char *const *words, char **json,
                                 struct adac_error *err);
/* Whether arg ("--method", "-m") is an option of the command's "Options:" list that takes a value:
 * the next argument is then that value (a front end telling a target from the command's options). */
bool adac_command_option_takes_value(const struct adac_command_info *info, const char *arg);
/* 0 when every option of argv[1..argc) (argv[0] is the command) is one the command's "Options:"
 * list names, with its value when it takes one; else -1 with err (ADAC_E_USAGE), as the command
 * would say it. A front end checks before it opens a target: a live process is not stopped for a
 * mistyped option. (The values themselves are the command's to check.) */
int adac_command_check_options(const struct adac_command_info *info, int argc, char **argv, struct adac_error *err);

/* ---- For a debugger that keeps frames and threads of its own (commands/debugger.c) ----
 *
 * The LLDB plugin's frame provider and OS plugin ask these on the runtime of a target
 * (runtime/runtime.h: adac_runtime_open). Each returns 0 with *json a JSON text the caller frees,
 * or -1 with err. A frame entry is either {"input": i}, the debugger's own frame i unchanged (it
 * names native frames itself), or a frame made here:
 *   {"pc", "function", "display", "kind": "managed" | "async", "artificial"?: true, "frame"?: "0x.."}
 * "display" reads like a frame of the debugger ("module`method + 0x.. at File.cs:12", async frames
 * end in " [async]"); "frame" (async frames) is the Continuation, for adac_debugger_value;
 * "artificial" marks runtime machinery (resume stubs, the dispatch loop). Within a thread no two
 * made frames have one pc: a repeated one (a recursion) is shown at the next free byte, because
 * LLDB tells frames without a CFA apart by their pc alone ("display" keeps the true offset). */
struct adac_runtime;

/* The .NET runtime in a target (runtime/runtime.h), kept by the front end while the target stays
 * stopped and refreshed when it stopped again (adac_runtime_refresh keeps what cannot have
 * changed; false: the descriptor changed, close it and open it again); closed before the target.
 * NULL with err (ADAC_E_NO_RUNTIME) when there is none. A front end that keeps one gives it to
 * the commands too (adac_target_set_runtime_source). */
struct adac_runtime *adac_runtime_open(struct adac_target *t, struct adac_error *err);
bool adac_runtime_refresh(struct adac_runtime *rt);
void adac_runtime_close(struct adac_runtime *rt);

/* The frames of OS thread tid: {"frames": [entry...]}, the backend's frames (adac_target_frames) in
 * order with managed ones named, each chain the thread runs spliced in right after the frame of the
 * dispatch loop that resumed it. Fails when the thread is stopped in managed code and the backend
 * cannot give its registers (adac_target_regs), which unwind that frame. */
int adac_debugger_thread(struct adac_runtime *rt, uint64_t tid, char **json, struct adac_error *err);

/* The tid of the thread counting the chains past adac_debugger_chains' cap: above every user-space
 * address and OS thread id, below 2^53 (an IDE keeps thread ids as JavaScript numbers). */
#define ADAC_DEBUGGER_MORE_TID 0x1fffffffffffffull

/* The pending chains (suspended, on no thread), one thread each, at most max_threads of them (0: all):
 * the first chain of each distinct stack (task status and frames), then the first chains in order.
 *   {"table": [entry without "frame"...], "more": n, "threads": [{"tid", "name", "frames": [[table index, "0x..", pc]...]}]}
 * tid is the chain's task (else its head Continuation): an address, never an OS thread id; name is
 * "async: <innermost method> [<task status>]". n chains past the cap are counted, not shown: a last
 * thread says so ("async: <n> more pending chains, ...", tid ADAC_DEBUGGER_MORE_TID), its one frame
 * (pc null, no continuation, kind "note") what shows them. Progress goes to out ("scanning the heap",
 * "resolving frames"; out may be NULL); it is not asked whether the user interrupted: a stop's
 * threads are not a command. */
int adac_debugger_chains(struct adac_runtime *rt, size_t max_threads, struct adac_out *out, char **json,
                         struct adac_error *err);

/* A variable of the async frame of Continuation `frame` (an awaited local, argument or `this`), or a
 * member or element of it: path is "name", "name.Field", "name[2]", "name.Field[0].Other"...
 *   {"name": path, "type": "<C# type>", "basic": "<LLDB basic type>", "bytes": "<hex, target order>",
 *    "count"?: n, "address"?: a, "symbol_type"?: "<type name>", "slot"?: a, "elements"?: n}
 * basic names one of LLDB's eBasicType* ("Int", "Long", "Double", "Bool", "Char16", ...); with
 * "count" the value is an array of n of them (strings and composite values: their UTF-8 text);
 * "address" is where the value lives in the target, when it does. With a symbol file of managed
 * code loaded (adac_target_symbol_file_loaded), an enum, struct or object whose bytes are in
 * the target also has "symbol_type", the name of its type in that file (view/sym_types.h), and
 * "slot", where its bytes are (a reference: the reference itself); with "elements" (an array
 * whose elements are not primitives) the value is that many elements of "symbol_type" from
 * "slot". "basic" and "bytes" then describe its text, for a debugger that does not find the type. */
int adac_debugger_value(struct adac_runtime *rt, uint64_t frame, const char *path, char **json,
                        struct adac_error *err);

#endif
