/* synthetic_target.c - a debuggee for tests: loads a fake libcoreclr.so and stops in a chosen way.
 *
 *   synthetic-target <mode> [corruption]
 *     mode: spin     print READY and wait (for attach, gcore or --pid)
 *           bp       call stop_here() (tests set a breakpoint on it), then exit
 *           sigstop  print READY and raise SIGSTOP
 *           abort    print READY and abort() (for kernel core files)
 *     corruption (optional): badmagic | hugesize | badjson | wildjson
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_coreclr.h"

__attribute__((noinline)) void stop_here(void);
__attribute__((noinline)) void stop_here(void)
{
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: synthetic-target spin|bp|sigstop|abort [badmagic|hugesize|badjson|wildjson]\n");
		return 2;
	}
	g_fake_object.state = 42;
	if (argc > 2)
		fake_coreclr_corrupt(argv[2]);
	const char *mode = argv[1];
	if (strcmp(mode, "bp") == 0) {
		stop_here();
		return 0;
	}
	printf("READY pid=%d mode=%s\n", (int)getpid(), mode);
	fflush(stdout);
	if (strcmp(mode, "sigstop") == 0)
		raise(SIGSTOP);
	else if (strcmp(mode, "abort") == 0)
		abort();
	for (;;)
		pause();
}
