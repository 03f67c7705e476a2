/* symbols_setting.h - where the plugin looks for files a target lacks: LLDB's own
 * target.debug-file-search-paths (directories, and srv*CACHE*URL symbol servers), then
 * $ASYNCDAC_SYMBOL_PATH, then debuginfod ($DEBUGINFOD_URLS). */
#ifndef ADAC_LLDB_SYMBOLS_SETTING_H
#define ADAC_LLDB_SYMBOLS_SETTING_H

#include "target/target.h"

struct adac_lldb_cmd;

/* Gives the target the symbol path the settings say, when it changed since the last command.
 * A malformed entry fails with err (ADAC_E_BAD_ARG naming it). */
int adac_lldb_update_symbols(struct adac_lldb_cmd *cmd, struct adac_target *t, struct adac_error *err);

#endif
