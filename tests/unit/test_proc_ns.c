/* test_proc_ns.c - proc_ns (dac/target/proc_ns.c) on this process and its parent, which share its
 * namespaces: no root to go through, thread ids as they are; a root joins absolute paths only.
 * (integration.container runs a process in namespaces of its own.) */
#include <stdio.h>
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
	CHECK_EQ_U64(adac_local_thread_of_process_tid(getpid(), 1234), 1234);

	char buf[64];
	CHECK(adac_proc_root_path("/proc/42/root", "/app/a.dll", buf, sizeof buf) == 0);
	CHECK_EQ_STR(buf, "/proc/42/root/app/a.dll");
	CHECK(adac_proc_root_path("", "/app/a.dll", buf, sizeof buf) == -1);
	CHECK(adac_proc_root_path("/proc/42/root", "a.dll", buf, sizeof buf) == -1);
	CHECK(adac_proc_root_path("/proc/42/root", "[vdso]", buf, sizeof buf) == -1);
	CHECK(adac_proc_root_path("/proc/42/root", "/a/very/long/path/that/does/not/fit/in/the/buffer/given", buf, 32) == -1);
	CHECK(adac_local_process_path(getpid(), "/app/a.dll", buf, sizeof buf) == -1);
	return check_report("proc_ns");
}
