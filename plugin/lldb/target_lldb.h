/* target_lldb.h - the "lldb" data target over an LLDB process, and the process's runtime
 * (target_lldb.c). */
#ifndef ADAC_TARGET_LLDB_H
#define ADAC_TARGET_LLDB_H

#include <stdbool.h>

#include "target/target.h"

struct adac_lldb_cmd;
struct adac_runtime;

/* The target of the debugger's selected process: one per process, kept between commands and made
 * anew for another process (relaunch, new core, other target selected). Its caches are dropped
 * through stop_id whenever the process ran. NULL with err (ADAC_E_BAD_ARG, a one-line message in
 * LLDB's wording) when there is no stopped process. The plugin owns the target: do not close it. */
struct adac_target *adac_lldb_target(struct adac_lldb_cmd *cmd, struct adac_error *err);

/* The same for the process of target `target_id` (SBTarget::GetGloballyUniqueID) of debugger
 * `debugger_id`, whichever is selected (the Python adapter's requests name their target). */
struct adac_target *adac_lldb_target_find(uint64_t debugger_id, uint64_t target_id, struct adac_error *err);

/* The runtime of a target made by the functions above: opened on first use, kept across stops and
 * refreshed (adac_runtime_refresh) at the first use after the process ran. The frame provider's,
 * and that of the commands run on the target (its runtime source). Owned by the plugin. NULL with
 * err when there is none. */
struct adac_runtime *adac_lldb_runtime(struct adac_target *t, struct adac_error *err);

/* Keeps thread tid's frames (innermost first; copied) as the thread's stack until the process runs. asyncdac's frame provider gives the frames LLDB's
 * unwinder found (its input frames): once it replaced them LLDB no longer shows them, and while it
 * builds them LLDB cannot be asked for them. */
int adac_lldb_target_keep_stack(struct adac_target *t, uint64_t tid, const struct adac_frame *frames, size_t n,
                                struct adac_error *err);

/* While LLDB builds thread tid's frames (a frame provider's request; 0: none), its stack is the one
 * kept, and LLDB itself is not asked (it would run the provider again, or abort): the registers of
 * its innermost frame, when needed, come from the provider's input frames (an SBFrameList, by
 * address; see shim.h). */
void adac_lldb_target_building(struct adac_target *t, uint64_t tid, uint64_t frames);
/* LLDB's own frames of a process in a container (another mount namespace): LLDB looks for its
 * modules at the container's paths on this machine, finds none (or other files: a module there is
 * replaced), and can neither name nor unwind native frames. Shows LLDB's target each ELF file
 * /proc/<pid>/maps names, opened through /proc/<pid>/root, loaded where it is mapped: once a
 * stop, each module once. The same for a core whose modules LLDB did not find (read on another
 * machine): each ELF file the core reader reads them from (at its recorded path, or found
 * through the symbol path), but not while LLDB reads a core's threads (`reading_threads`: the OS
 * plugin; LLDB 22.1.8 then crashes on its private state thread). Nothing for other processes. */
void adac_lldb_target_show_modules(struct adac_target *t, bool reading_threads);
/* The path of the plugin's symbol file loaded into t's target, NULL when none is. */
const char *adac_lldb_target_symbols_file(struct adac_target *t);

#endif
