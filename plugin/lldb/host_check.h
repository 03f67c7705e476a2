/* host_check.h - is this the LLDB the plugin was built for? Checked by PluginInitialize before it
 * touches LLDB's API (host_check.c). */
#ifndef ADAC_LLDB_HOST_CHECK_H
#define ADAC_LLDB_HOST_CHECK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* own: the file name of the liblldb the plugin's SB calls go to (dladdr of one of them). 0 when no
 * other liblldb is loaded in the process: the host runs the plugin's own. -1 with a one-line
 * reason in msg when another is: the plugin was built against another LLDB than the one that
 * loaded it, and calling LLDB's API would run a second, uninitialised copy of LLDB (it crashes). */
int adac_lldb_host_check(const char *own, char *msg, size_t size);

#ifdef __cplusplus
}
#endif

#endif
