/* native_symbols.h - libdwfl callbacks that find a native module's ELF file and its debug file
 * (names for native frames): by build-id under /usr/lib/debug/.build-id, by .gnu_debuglink beside
 * the file, in its .debug/ and under /usr/lib/debug, then through the symbol path and debuginfod
 * (symbols.h: DIR/.build-id/, DIR/<debuglink>, symbol servers' `_.debug/elf-buildid-sym-<id>/_.debug`
 * and `<name>/elf-buildid-<id>/<name>` keys). Every candidate must have the module's build-id. A
 * live process's files are opened where it sees them (its root: a container's files). */
#ifndef ADAC_NATIVE_SYMBOLS_H
#define ADAC_NATIVE_SYMBOLS_H

#include <elfutils/libdwfl.h>

#include "target/proc_ns.h"

struct adac_symbols;

/* What the callbacks of one Dwfl look through (libdwfl gives callbacks no context of their own:
 * adac_native_symbols_attach hands this one to each module). */
struct adac_native_symbols {
	struct adac_symbols *symbols;  /* NULL: only the system's locations */
	char root[ADAC_PROC_ROOT_MAX]; /* a live process's: where its files are seen from here
	                                * ("/proc/<pid>/root", proc_ns.h), or "" */
};

/* For a Dwfl over a core file and over a live process (whose ELF files /proc finds). */
extern const Dwfl_Callbacks adac_native_core_callbacks;
extern const Dwfl_Callbacks adac_native_proc_callbacks;

/* After dwfl_report_end: makes ctx the context of every module reported. */
void adac_native_symbols_attach(Dwfl *dwfl, struct adac_native_symbols *ctx);

#endif
