/* proc_root.h - where this machine sees the files of a local process. A process in a mount
 * namespace of its own (a container) or under another root (chroot) names its files by its own
 * paths: /proc/<pid>/root resolves them from here, where the same path may be missing or be
 * another file. */
#ifndef ADAC_PROC_ROOT_H
#define ADAC_PROC_ROOT_H

#include <stddef.h>

#define ADAC_PROC_ROOT_MAX 32 /* "/proc/<pid>/root" */

/* Sets root to "/proc/<pid>/root" when process pid sees another file system than this process
 * (another mount namespace, or another root directory), else to "": its paths are ours (or this
 * cannot be told, when its namespace may not be looked at). */
void adac_proc_root(int pid, char root[ADAC_PROC_ROOT_MAX]);

/* The absolute path of the process's file as this machine opens it: root then path, in buf. 0, or
 * -1 when root is "", path is not absolute, or it does not fit. */
int adac_proc_root_path(const char *root, const char *path, char *buf, size_t size);

#endif
