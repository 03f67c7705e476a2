/* commands.h - the plugin's commands (commands.c), called by the SB classes in shim.cpp. */
#ifndef ADAC_LLDB_COMMANDS_H
#define ADAC_LLDB_COMMANDS_H

#ifdef __cplusplus
extern "C" {
#endif

struct adac_lldb_cmd;

/* `async <name> <args...>`: runs the shared command `name` on the selected process. args is
 * LLDB's NULL-terminated argument vector (without the command words). 0, or -1 after the
 * failure was reported to LLDB. */
int adac_lldb_async(struct adac_lldb_cmd *cmd, const char *name, char **args);

/* `bt <args...>`: `bt async ...` is `async bt ...`; every other form goes unchanged to LLDB's own
 * `_regexp-bt`. 0, or -1 when the command failed. */
int adac_lldb_bt(struct adac_lldb_cmd *cmd, char **args);

/* `async threads enable | disable`: whether the pending chains (suspended, on no thread) are shown
 * as threads of their own (LLDB's OS plugin, see asyncdac_lldb.py). 0, or -1 when the command
 * failed. */
int adac_lldb_threads(struct adac_lldb_cmd *cmd, char **args);

#ifdef __cplusplus
}
#endif

#endif
