/* probe.h - `async-probe` (probe.c), compiled only into the test build of the plugin. */
#ifndef ADAC_LLDB_PROBE_H
#define ADAC_LLDB_PROBE_H

#ifdef __cplusplus
extern "C" {
#endif

struct adac_lldb_cmd;

/* Runs adac_probe-style actions on the LLDB data target. 0, or -1 when an action failed. */
int adac_lldb_probe(struct adac_lldb_cmd *cmd, char **args);

#ifdef __cplusplus
}
#endif

#endif
