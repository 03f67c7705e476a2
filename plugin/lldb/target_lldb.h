/* target_lldb.h - the "lldb" data target over the debugger's selected process (target_lldb.c). */
#ifndef ADAC_TARGET_LLDB_H
#define ADAC_TARGET_LLDB_H

#include "target/target.h"

struct adac_lldb_cmd;

/* The target of the selected process: one per process, kept between commands and made anew
 * when the process changes (relaunch, new core, other target selected). Its caches are dropped
 * through stop_id whenever the process ran. NULL with err (ADAC_E_BAD_ARG, a one-line message in
 * LLDB's wording) when there is no stopped process. The plugin owns the target: do not close it. */
struct adac_target *adac_lldb_target(struct adac_lldb_cmd *cmd, struct adac_error *err);

#endif
