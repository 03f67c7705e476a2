/* proc_ns.h - a local process seen from another Linux namespace: a process in a container,
 * attached from the host (or from a debugging sidecar). In a mount namespace of its own (or under
 * another root), it names its files by its own paths, which /proc/<pid>/root resolves from here
 * (the same path here may be missing or be another file). In a pid namespace of its own, it
 * knows its threads by other ids than this machine's: the runtime records those. */
#ifndef ADAC_PROC_NS_H
#define ADAC_PROC_NS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ADAC_PROC_ROOT_MAX 32 /* "/proc/<pid>/root" */

/* Sets root to "/proc/<pid>/root" when process pid sees another file system than this process
 * (another mount namespace, or another root directory), else to "": its paths are ours (or this
 * cannot be told, when its namespace may not be looked at). */
void adac_proc_root(int pid, char root[ADAC_PROC_ROOT_MAX]);

/* The absolute path of the process's file as this machine opens it: root then path, in buf. 0, or
 * -1 when root is "", path is not absolute, or it does not fit. */
int adac_proc_root_path(const char *root, const char *path, char *buf, size_t size);

/* The number after field ("TracerPid:", "Tgid:") at a line's start in /proc/<pid>/task/<tid>/status,
 * or the last of its numbers (last: "NSpid:"). false when the file or the field cannot be read. */
bool adac_proc_status_number(int pid, uint64_t tid, const char *field, bool last, uint64_t *out);

/* The id thread tid (this machine's id) of process pid has in the process's own pid namespace (the
 * last of its NSpid ids): tid itself when the namespace is ours. false when it cannot be read (the
 * thread is gone). */
bool adac_proc_ns_tid(int pid, uint64_t tid, uint64_t *ns_tid);

/* (target.h declares the backends' helpers made of these: adac_local_process_path,
 * adac_local_other_pid_ns and adac_local_process_tids.) */

#endif
