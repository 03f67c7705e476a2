/* help.h - the help texts of the plugin's own commands, and the shared table's details as LLDB's
 * long help (help.c): for PluginInitialize and for the adapter's commands (adapter.c). */
#ifndef ADAC_LLDB_HELP_H
#define ADAC_LLDB_HELP_H

#ifdef __cplusplus
extern "C" {
#endif

/* Help texts PluginInitialize registers with the commands. */
extern const char adac_lldb_async_help[];
extern const char adac_lldb_impl_help[];
extern const char adac_lldb_bt_help[];
extern const char adac_lldb_bt_syntax[];
extern const char adac_lldb_threads_help[];
extern const char adac_lldb_threads_syntax[];
/* What completes `async threads`'s argument, in adac_command_info.values's form. */
extern const char adac_lldb_threads_words[];

/* A command's details as LLDB's long help (paragraphs joined into lines LLDB wraps itself).
 * Returns a heap string (caller frees) or NULL when out of memory. */
char *adac_lldb_help_long(const char *details);

#ifdef __cplusplus
}
#endif

#endif
