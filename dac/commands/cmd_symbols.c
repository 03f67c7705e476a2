/* cmd_symbols.c - `symbols`: a symbol file (ELF with DWARF) for the managed code in view, written to
 * a file for other tools, or loaded into the debugger the command runs in (LLDB). */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "commands/command.h"
#include "base/limits.h"
#include "runtime/runtime.h"
#include "symfile/symfile.h"
#include "view/sym_types.h"
#include "view/managed_symbols.h"

#define DW_LANG_C11 0x1d   /* what the units claim: plain C, so that debuggers take the names as they are */

const struct adac_command_info adac_cmd_symbols_info = {
	.name = "symbols",
	.summary = "Write a symbol file (ELF and DWARF) for the managed code on the stacks and in the async "
	           "chains, so that native debuggers and tools name its frames and show lines and variables",
	.syntax = "[-o <file>] [--stacks [--chain-types] | --all] [--dwarf <4|5>] [--type-depth <n>] [--auto <on|off>]",
	.details =
		"JIT-compiled and ReadyToRun .NET methods have no file a native debugger can\n"
		"read. This writes one: an ELF object whose addresses are the code's own (load\n"
		"it with slide 0), with a symbol per method named like the frames of 'bt'\n"
		"(Namespace.Type.Method(Int32, System.String)) and DWARF: a unit per assembly,\n"
		"line tables from the runtime's debug info and the portable PDBs, the methods'\n"
		"parameters and locals with their registers and stack slots, typed from metadata\n"
		"and the runtime's field layouts (an object is a pointer to a struct of its\n"
		"fields; strings and arrays carry their lengths), and call-frame information\n"
		"from the runtime's unwind info, so that debuggers unwind managed frames.\n"
		"\n"
		"It covers every code version on the threads' stacks and in the async chains\n"
		"they run, and the methods of every suspended chain on the GC heap. In LLDB\n"
		"without -o the file is loaded into the target, replacing the one loaded before;\n"
		"then 'bt', 'image lookup -a', 'frame variable' and 'source list' work on\n"
		"managed frames. The plugin also loads the symbols of the stacks by itself\n"
		"whenever the process has stopped since, before the commands that show frames\n"
		"('async symbols --auto off' stops that; so does ASYNCDAC_AUTO_SYMBOLS=0 in the\n"
		"environment). Elsewhere, load the file yourself: gdb 'add-symbol-file <file>',\n"
		"LLDB 'target modules add <file>' and 'target modules load --file <file> --slide\n"
		"0', libdw tools with '-e <file>'.\n"
		"\n"
		"Options:\n"
		"  -o, --output <file>   Write the file there (required outside LLDB).\n"
		"  -s, --stacks          Only the stacks and their running chains (no heap\n"
		"                        scan: faster on large heaps).\n"
		"      --chain-types     With --stacks: also the types of the variables of\n"
		"                        every suspended chain (not their methods).\n"
		"  -a, --all             Also every JIT-compiled method (the JIT's code heaps);\n"
		"                        ReadyToRun code as without it.\n"
		"      --dwarf <4|5>     DWARF version (default 5).\n"
		"      --type-depth <n>  Lay out objects n references deep from a variable\n"
		"                        (default 2); deeper ones are named only.\n"
		"      --auto <on|off>   (LLDB) Load the symbols by itself once per stop\n"
		"                        (default on).\n",
	.values = "--dwarf=4|5 --auto=on|off",
};

struct symbols_opts {
	const char *output;
	bool stacks, chain_types, all;
	uint64_t dwarf;
	uint64_t type_depth;
};

static int parse(int argc, char **argv, struct symbols_opts *o, struct adac_error *err)
{
	memset(o, 0, sizeof *o);
	o->dwarf = 5;
	o->type_depth = ADAC_SYM_DEFAULT_TYPE_DEPTH;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		if (adac_opt_is(a, "-o", "--output")) {
			if (adac_opt_value("symbols", argc, argv, &i, &o->output, err))
				return -1;
		} else if (adac_opt_is(a, "-s", "--stacks")) {
			o->stacks = true;
		} else if (adac_opt_is(a, NULL, "--chain-types")) {
			o->chain_types = true;
		} else if (adac_opt_is(a, "-a", "--all")) {
			o->all = true;
		} else if (adac_opt_is(a, NULL, "--dwarf")) {
			if (adac_opt_value("symbols", argc, argv, &i, &v, err) || adac_opt_u64("symbols", a, v, &o->dwarf, err))
				return -1;
			if (o->dwarf != 4 && o->dwarf != 5)
				return adac_fail(err, ADAC_E_USAGE, 0, "--dwarf must be 4 or 5");
		} else if (adac_opt_is(a, NULL, "--type-depth")) {
			if (adac_opt_value("symbols", argc, argv, &i, &v, err) ||
			    adac_opt_u64("symbols", a, v, &o->type_depth, err))
				return -1;
			if (o->type_depth > ADAC_MAX_SYM_TYPE_DEPTH)
				return adac_fail(err, ADAC_E_USAGE, 0, "--type-depth must be at most %u", ADAC_MAX_SYM_TYPE_DEPTH);
		} else if (adac_opt_is(a, NULL, "--auto")) {
			return adac_fail(err, ADAC_E_USAGE, 0, "--auto applies in LLDB only, and alone: 'async symbols --auto on|off'");
		} else {
			return adac_opt_unknown("symbols", a, err);
		}
	}
	if (o->stacks && o->all)
		return adac_fail(err, ADAC_E_USAGE, 0, "give either --stacks or --all, not both");
	if (o->chain_types && !o->stacks)
		return adac_fail(err, ADAC_E_USAGE, 0, "--chain-types goes with --stacks (without it, the chains are covered)");
	return 0;
}

int adac_cmd_symbols(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                     struct adac_error *err)
{
	(void)fe;
	struct symbols_opts o;
	if (parse(argc, argv, &o, err))
		return -1;
	if (!o.output && !adac_target_can_load_symbols(t))
		return adac_fail(err, ADAC_E_USAGE, 0, "'symbols' needs -o <file>: where to write the symbol file");
	struct adac_runtime *rt = adac_runtime_acquire(t, err);
	if (!rt)
		return -1;
	struct adac_managed_symbols_opts so = {o.stacks ? ADAC_MANAGED_SYMBOLS_STACKS : o.all ? ADAC_MANAGED_SYMBOLS_ALL : ADAC_MANAGED_SYMBOLS_CHAINS,
	                               (unsigned)o.type_depth, o.chain_types};
	/* A file for other tools counts strings and arrays for gdb; one loaded into LLDB leaves them
	 * flexible (LLDB does not evaluate the counts; the plugin's summaries show them). */
	struct adac_symfile_opts fo = {.dwarf_version = (unsigned)o.dwarf, .language = DW_LANG_C11,
	                               .dynamic_counts = o.output != NULL, .producer = "asyncdac " ASYNCDAC_VERSION};
	struct adac_managed_symbols_stats st;
	struct adac_symfile *sf = NULL;
	size_t len = 0;
	char path[ADAC_MAX_PATH_BYTES];
	const char *where = o.output ? o.output : path;
	int rc = -1;
	uint64_t digest[2];
	const char *kept;
	struct adac_managed_symbols *s = adac_managed_symbols_new(rt, &so, err);
	if (!s || adac_managed_symbols_collect(s, err))
		goto out;
	/* Loading what is loaded already (a stop after a step, the same code on the stacks): kept as
	 * it is, without making it again. */
	adac_managed_symbols_digest(s, digest);
	if (!o.output && (kept = adac_target_symbol_file_noted(t, digest))) {
		adac_print(out, "%s", kept);
		rc = 0;
		goto out;
	}
	if (!(sf = adac_managed_symbols_finish(s, &st, err)) ||
	    (!o.output && adac_target_symbols_path(t, path, sizeof path, err)) ||
	    adac_symfile_write(sf, &fo, where, &len, err) || (!o.output && adac_target_load_symbols(t, path, sizeof path, err)))
		goto out;
	char said[ADAC_MAX_PATH_BYTES + 1024];
	int n = snprintf(said, sizeof said, "%s %zu method%s (%zu line rows, %zu variables, %zu types) %s %s (%zu bytes)\n",
	                 o.output ? "Wrote" : "Loaded", st.methods, st.methods == 1 ? "" : "s", st.rows, st.vars, st.types,
	                 o.output ? "to" : "from", where, len);
	if (st.skipped && n > 0 && (size_t)n < sizeof said)
		snprintf(said + n, sizeof said - (size_t)n, "%zu code version%s left out: %s\n", st.skipped,
		         st.skipped == 1 ? "" : "s", st.problems);
	adac_print(out, "%s", said);
	if (!o.output)
		adac_target_note_symbol_file(t, digest, said);
	rc = 0;
out:
	adac_symfile_free(sf);
	adac_managed_symbols_free(s);
	adac_runtime_release(rt);
	return rc;
}
