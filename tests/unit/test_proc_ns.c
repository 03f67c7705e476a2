/* test_proc_ns.c - proc_ns (dac/target/proc_ns.c) on this process and its parent, which share its
 * namespaces: no root to go through, thread ids as they are; status fields read at a line's start;
 * a root joins absolute paths only; its modules from /proc/<pid>/maps (proc_maps.c).
 * (integration.container runs a process in namespaces of its own.) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "target/proc_ns.h"
#include "target/target.h"

int main(void)
{
	char root[ADAC_PROC_ROOT_MAX] = "x";
	adac_proc_root(getpid(), root);
	CHECK_EQ_STR(root, "");
	adac_proc_root(getppid(), root);
	CHECK_EQ_STR(root, "");

	uint64_t ns = 0;
	CHECK(adac_proc_ns_tid(getpid(), (uint64_t)gettid(), &ns));
	CHECK_EQ_U64(ns, (uint64_t)gettid());
	CHECK(!adac_proc_ns_tid(getpid(), 0, &ns));
	CHECK(!adac_local_other_pid_ns(getpid()));
	struct adac_local_tid *ids = NULL;
	size_t n = 0, mine = 0;
	CHECK(adac_local_process_tids(getpid(), &ids, &n) == 0);
	for (size_t i = 0; i < n; i++) {
		CHECK_EQ_U64(ids[i].process_tid, ids[i].tid);
		mine += ids[i].tid == (uint64_t)gettid();
	}
	CHECK_EQ_U64(mine, 1);
	free(ids);
	CHECK(adac_local_process_tids(0x7fffffff, &ids, &n) == -1 && !ids && n == 0);

	/* Fields at a line's start, the first number or the last. */
	uint64_t v = 0;
	CHECK(adac_proc_status_number(getpid(), (uint64_t)gettid(), "Tgid:", false, &v));
	CHECK_EQ_U64(v, (uint64_t)getpid());
	CHECK(adac_proc_status_number(getpid(), (uint64_t)gettid(), "NSpid:", true, &v));
	CHECK_EQ_U64(v, (uint64_t)gettid());
	CHECK(!adac_proc_status_number(getpid(), (uint64_t)gettid(), "gid:", false, &v));

	char buf[64];
	CHECK(adac_proc_root_path("/proc/42/root", "/app/a.dll", buf, sizeof buf) == 0);
	CHECK_EQ_STR(buf, "/proc/42/root/app/a.dll");
	CHECK(adac_proc_root_path("", "/app/a.dll", buf, sizeof buf) == -1);
	CHECK(adac_proc_root_path("/proc/42/root", "a.dll", buf, sizeof buf) == -1);
	CHECK(adac_proc_root_path("/proc/42/root", "[vdso]", buf, sizeof buf) == -1);
	CHECK(adac_proc_root_path("/proc/42/root", "/a/very/long/path/that/does/not/fit/in/the/buffer/given", buf, 32) == -1);
	CHECK(adac_local_process_path(getpid(), "/app/a.dll", buf, sizeof buf) == -1);

	/* proc_maps.c: this process's modules, one range each, none overlapping another, its executable
	 * among them (based at its offset-0 mapping, ending past its code); none of a process that does
	 * not exist. */
	char exe[4096];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
	CHECK(len > 0);
	exe[len > 0 ? len : 0] = 0;
	struct adac_module *mods = NULL;
	size_t nmods = 0, exes = 0;
	struct adac_error err = {0};
	CHECK(adac_local_process_modules(getpid(), &mods, &nmods, &err) == 0);
	for (size_t i = 0; i < nmods; i++) {
		CHECK(mods[i].base < mods[i].end && mods[i].path[0] == '/');
		for (size_t j = 0; j < i; j++)
			CHECK(mods[j].end <= mods[i].base || mods[i].end <= mods[j].base);
		if (strcmp(mods[i].path, exe) == 0) {
			exes++;
			CHECK(mods[i].base <= (uint64_t)(uintptr_t)&main && (uint64_t)(uintptr_t)&main < mods[i].end);
		}
	}
	CHECK_EQ_U64(exes, 1);
	adac_local_modules_free(mods, nmods);
	CHECK(adac_local_process_modules(0x7fffffff, &mods, &nmods, &err) == -1 && !mods && nmods == 0);
	CHECK(strstr(err.msg, "process 2147483647: cannot read its mappings: the process has exited") != NULL);
	return check_report("proc_ns");
}
