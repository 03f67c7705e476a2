/* stop_reason.c - see stop_reason.h. */
#include "target/stop_reason.h"

#include <stdbool.h>
#include <stdio.h>

#include "target/target.h"

/* Linux x86-64 numbering (what cores of this architecture record), not the host's <signal.h>. */
static const char *const signal_names[] = {
	[1] = "SIGHUP",   [2] = "SIGINT",    [3] = "SIGQUIT",  [4] = "SIGILL",   [5] = "SIGTRAP",
	[6] = "SIGABRT",  [7] = "SIGBUS",    [8] = "SIGFPE",   [9] = "SIGKILL",  [10] = "SIGUSR1",
	[11] = "SIGSEGV", [12] = "SIGUSR2",  [13] = "SIGPIPE", [14] = "SIGALRM", [15] = "SIGTERM",
	[16] = "SIGSTKFLT", [17] = "SIGCHLD", [18] = "SIGCONT", [19] = "SIGSTOP", [20] = "SIGTSTP",
	[21] = "SIGTTIN", [22] = "SIGTTOU",  [23] = "SIGURG",  [24] = "SIGXCPU", [25] = "SIGXFSZ",
	[26] = "SIGVTALRM", [27] = "SIGPROF", [28] = "SIGWINCH", [29] = "SIGIO", [30] = "SIGPWR",
	[31] = "SIGSYS",
};

const char *adac_signal_name(int signo)
{
	if (signo <= 0 || (size_t)signo >= sizeof signal_names / sizeof signal_names[0])
		return NULL;
	return signal_names[signo];
}

void adac_stop_reason_signal(char *buf, size_t size, int signo, int code, uint64_t fault_addr)
{
	if (!size)
		return;
	buf[0] = '\0';
	if (signo <= 0)
		return;
	const char *name = adac_signal_name(signo);
	int n = name ? snprintf(buf, size, "signal %s", name) : snprintf(buf, size, "signal %d", signo);
	/* si_code > 0: raised by the kernel for this fault, so si_addr is meaningful. */
	bool fault = signo == 4 || signo == 7 || signo == 8 || signo == 11;
	if (n > 0 && (size_t)n < size && fault && code > 0)
		snprintf(buf + n, size - (size_t)n, " (fault address: 0x%llx)", (unsigned long long)fault_addr);
}

bool adac_signal_dumps_core(int signo)
{
	switch (signo) {
	case 3: case 4: case 5: case 6: case 7: case 8: case 11: case 24: case 25: case 31:
		return true;
	}
	return false;
}

bool adac_thread_crashed(const struct adac_thread *th)
{
	return adac_signal_dumps_core(th->signo);
}
