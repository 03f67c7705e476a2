/* managed_symbols.h - symbol files (symfile/symfile.h) for the managed code of a .NET process or core, so
 * that native debuggers and tools (LLDB, gdb, perf, libdw's eu-stack) name JIT-compiled and
 * ReadyToRun methods, give their source lines and show their variables.
 *
 * For each code version (one method's JIT-compiled or ReadyToRun code; tiering can give a method
 * several) the file gets:
 *   - a function symbol and a subprogram named like the frames of `bt` (Namespace.Type.Method(Int32,
 *     System.String)), over the body and funclets (RUNTIME_FUNCTIONs), in a unit per assembly;
 *   - line rows: each native offset of the debug info's bounds, mapped to its IL offset (as
 *     adac_debuginfo_il_offset), then to a file and line by the portable PDB's sequence points (the
 *     nearest at or before it); the prolog takes the method's first line, epilogs and unmapped or
 *     hidden code keep the line before them;
 *   - parameters and locals from the debug info's native variable locations (registers and stack
 *     slots over ranges of the code), named by the Param table and the PDB's local scopes (else
 *     arg<n> / V_<n>), typed as sym_types.h describes.
 * A method whose information cannot be read is left out and counted, with the first reason. */
#ifndef ADAC_MANAGED_SYMBOLS_H
#define ADAC_MANAGED_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;
struct adac_symfile;

enum adac_managed_symbols_scope {
	ADAC_MANAGED_SYMBOLS_STACKS,   /* code on the threads' stacks and in the async chains they run */
	ADAC_MANAGED_SYMBOLS_CHAINS,   /* that, and every suspended async chain on the GC heap */
	ADAC_MANAGED_SYMBOLS_ALL,      /* that, and every JIT-compiled method (ReadyToRun code: as in CHAINS) */
};

struct adac_managed_symbols_opts {
	enum adac_managed_symbols_scope scope;
	unsigned type_depth;           /* sym_types.h; ADAC_SYM_DEFAULT_TYPE_DEPTH */
	bool chain_types;              /* STACKS: also the types of what every suspended chain on the GC
	                                * heap saved, not their methods (a debugger that shows those
	                                * chains' frames itself types their variables by name) */
};

struct adac_managed_symbols_stats {
	size_t methods;                /* code versions described */
	size_t rows, vars;             /* line rows and variables of all of them */
	size_t types;                  /* DWARF types */
	size_t skipped;                /* code versions left out */
	char problems[512];            /* why, "; "-separated (the first few) */
};

struct adac_managed_symbols;

struct adac_managed_symbols *adac_managed_symbols_new(struct adac_runtime *rt, const struct adac_managed_symbols_opts *o,
                                      struct adac_error *err);
void adac_managed_symbols_free(struct adac_managed_symbols *s);

/* Adds the code version containing ip (once); an ip outside JIT-compiled or ReadyToRun code is
 * ignored. -1 only when memory runs out. */
int adac_managed_symbols_add_ip(struct adac_managed_symbols *s, uint64_t ip, struct adac_error *err);

/* Finds what the scope covers: the code versions and the suspension points whose saved types the
 * file describes (adac_managed_symbols_add_ip finds one). -1 only when nothing can be collected (no
 * threads, an unreadable heap for CHAINS, no code heaps for ALL) or for allocations and limits. */
int adac_managed_symbols_collect(struct adac_managed_symbols *s, struct adac_error *err);

/* A digest of what was collected, the options and the symbol path (its generation): the same
 * digest, the same file. A front end loading a file per stop keeps the one it loaded when the
 * digest has not changed, without making the file again. */
void adac_managed_symbols_digest(const struct adac_managed_symbols *s, uint64_t digest[2]);

/* Makes the file of what was collected: each code version's lines and variables, the types.
 * Problems with one method are counted in the stats. Lays out the types and hands over the finished
 * model (the caller frees it). */
struct adac_symfile *adac_managed_symbols_finish(struct adac_managed_symbols *s, struct adac_managed_symbols_stats *stats,
                                         struct adac_error *err);

#endif
