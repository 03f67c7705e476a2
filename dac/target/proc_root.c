/* proc_root.c - see proc_root.h. */
#include "target/proc_root.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "target/target.h"

/* The link /proc/<who>/ns/mnt names the mount namespace ("mnt:[4026531841]"). */
static bool mount_ns(const char *who, char *buf, size_t size)
{
	char path[48];
	snprintf(path, sizeof path, "/proc/%s/ns/mnt", who);
	ssize_t n = readlink(path, buf, size - 1);
	if (n <= 0)
		return false;
	buf[n] = 0;
	return true;
}

void adac_proc_root(int pid, char root[ADAC_PROC_ROOT_MAX])
{
	char who[16], mine[64], theirs[64], path[ADAC_PROC_ROOT_MAX];
	snprintf(who, sizeof who, "%d", pid);
	snprintf(path, sizeof path, "/proc/%d/root", pid);
	root[0] = 0;
	struct stat a, b;
	bool other_ns = mount_ns("self", mine, sizeof mine) && mount_ns(who, theirs, sizeof theirs) &&
	                strcmp(mine, theirs) != 0;
	bool other_root = stat("/proc/self/root", &a) == 0 && stat(path, &b) == 0 &&
	                  (a.st_dev != b.st_dev || a.st_ino != b.st_ino);
	if (other_ns || other_root)
		snprintf(root, ADAC_PROC_ROOT_MAX, "%s", path);
}

int adac_proc_root_path(const char *root, const char *path, char *buf, size_t size)
{
	if (!root || !root[0] || !path || path[0] != '/')
		return -1;
	int n = snprintf(buf, size, "%s%s", root, path);
	return n > 0 && (size_t)n < size ? 0 : -1;
}

int adac_local_process_path(int pid, const char *path, char *buf, size_t size)
{
	char root[ADAC_PROC_ROOT_MAX];
	if (!path || path[0] != '/')
		return -1;
	adac_proc_root(pid, root);
	return adac_proc_root_path(root, path, buf, size);
}
