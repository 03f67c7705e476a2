/* symbols_lldb.h - symbol files in LLDB: `async symbols` loads the file of the managed code in view
 * into the target (the load op of target_lldb.c: target modules add + load at slide 0, replacing
 * the one loaded before), and the plugin refreshes it by itself, once per stop, before the LLDB
 * commands that show frames (opt out with `async symbols --auto off` or ASYNCDAC_AUTO_SYMBOLS=0). */
#ifndef ADAC_SYMBOLS_LLDB_H
#define ADAC_SYMBOLS_LLDB_H

#ifdef __cplusplus
extern "C" {
#endif

struct adac_lldb_cmd;

/* Reads ASYNCDAC_AUTO_SYMBOLS once, at plugin load. */
void adac_lldb_symbols_init(void);

/* `async symbols <args...>`: `--auto on|off` here, anything else the shared command. 0, or -1
 * after the failure was reported to LLDB. */
int adac_lldb_symbols(struct adac_lldb_cmd *cmd, char **args);

/* Before an LLDB command that shows frames: loads the symbols of the selected process when it
 * stopped since they were last loaded. Quiet: a failure shows when `async symbols` is run. */
void adac_lldb_symbols_refresh(struct adac_lldb_cmd *cmd);

/* The LLDB commands before which the symbols are refreshed, NULL-terminated. */
extern const char *const adac_lldb_symbols_watched[];

#ifdef __cplusplus
}
#endif

#endif
