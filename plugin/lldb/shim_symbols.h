/* shim_symbols.h - the SB calls symbol files need (shim_symbols.cpp): replacing or adding a module
 * of the target, the process's stop id, and the summary LLDB shows for managed strings. */
#ifndef ADAC_LLDB_SHIM_SYMBOLS_H
#define ADAC_LLDB_SHIM_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "target/target.h"

struct adac_lldb_cmd;
struct adac_lldb_process;

/* Removes the module loaded from old_path (may be NULL) and adds the one at new_path, its sections
 * loaded at their own addresses. */
int adac_lldb_process_replace_module(struct adac_lldb_process *p, const char *old_path, const char *new_path,
                                     struct adac_error *err);

/* Shows LLDB the module in file path, its ELF header mapped at base: added to the target and
 * loaded there, unless it is there already; a module LLDB loaded at base from another file is
 * removed first. */
int adac_lldb_process_show_module(struct adac_lldb_process *p, const char *path, uint64_t base, struct adac_error *err);

/* Where the plugin's n-th symbol file goes: <TMPDIR>/asyncdac-symbols-<lldb pid>-<n>/managed (a
 * directory each: LLDB caches modules by path, and shows the file's name, "managed", in frames). */
int adac_lldb_symbols_file(unsigned n, char *buf, size_t size, struct adac_error *err);
/* Whether path is such a file (its directory is removed with it). */
int adac_lldb_is_symbols_file(const char *path);
/* Deletes such a file and its directory. */
void adac_lldb_remove_symbols_file(const char *path);

/* The selected process's stop id (SBProcess::GetStopID, expression runs included); 0 without one. */
uint64_t adac_lldb_cmd_stop_id(struct adac_lldb_cmd *cmd);

#ifdef __cplusplus
}

namespace lldb {
class SBDebugger;
}
/* Adds the category "asyncdac" with summaries for managed strings (the typedef `string` and the
 * struct "System.String object" of the symbol files: the characters, as "..."), and enables it. */
void adac_lldb_add_summaries(lldb::SBDebugger &debugger);
#endif

#endif
