/* proc_ns.c - see proc_ns.h. */
#include "target/proc_ns.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/limits.h"
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

bool adac_proc_status_number(int pid, uint64_t tid, const char *field, bool last, uint64_t *out)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/task/%llu/status", pid, (unsigned long long)tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	size_t len = strlen(field);
	const char *at = buf;
	while (at && strncmp(at, field, len) != 0) { /* at a line's start: "Tgid:", not "NStgid:" */
		at = strchr(at, '\n');
		at = at ? at + 1 : NULL;
	}
	if (!at)
		return false;
	/* "<field>\t<n>[\t<n>...]\n" */
	const char *end = at + len;
	bool any = false;
	for (;;) {
		while (*end == ' ' || *end == '\t')
			end++;
		char *next;
		unsigned long long v = strtoull(end, &next, 10);
		if (next == end)
			break;
		*out = v;
		any = true;
		end = next;
		if (!last)
			break;
	}
	return any;
}

bool adac_proc_ns_tid(int pid, uint64_t tid, uint64_t *ns_tid)
{
	/* NSpid lists the thread's id in each pid namespace from this machine's down: the last is the
	 * process's own. */
	return adac_proc_status_number(pid, tid, "NSpid:", true, ns_tid);
}

int adac_local_process_path(int pid, const char *path, char *buf, size_t size)
{
	char root[ADAC_PROC_ROOT_MAX];
	if (!path || path[0] != '/')
		return -1;
	adac_proc_root(pid, root);
	return adac_proc_root_path(root, path, buf, size);
}

bool adac_local_other_pid_ns(int pid)
{
	uint64_t main_ns;
	return adac_proc_ns_tid(pid, (uint64_t)pid, &main_ns) && main_ns != (uint64_t)pid;
}

int adac_local_process_tids(int pid, struct adac_local_tid **out, size_t *count)
{
	*out = NULL;
	*count = 0;
	char path[48];
	snprintf(path, sizeof path, "/proc/%d/task", pid);
	DIR *dir = opendir(path);
	if (!dir)
		return -1;
	struct adac_local_tid *ids = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int rc = 0;
	while (n < ADAC_MAX_THREADS && (de = readdir(dir)) != NULL) {
		char *end;
		unsigned long long tid = strtoull(de->d_name, &end, 10);
		uint64_t ns;
		if (*end || !tid || !adac_proc_ns_tid(pid, tid, &ns))
			continue; /* ".", "..", a thread gone meanwhile */
		if (adac_grow((void **)&ids, &cap, n + 1, sizeof *ids, 64)) {
			rc = -1;
			break;
		}
		ids[n++] = (struct adac_local_tid){tid, ns};
	}
	closedir(dir);
	if (rc) {
		free(ids);
		return -1;
	}
	*out = ids;
	*count = n;
	return 0;
}
