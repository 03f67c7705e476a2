/* stop_reason.h - why a thread stopped, in LLDB's words ("signal SIGABRT"), from the Linux signal
 * facts a core or a process records (signal number, si_code, fault address). */
#ifndef ADAC_STOP_REASON_H
#define ADAC_STOP_REASON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The Linux x86-64 name of signal signo ("SIGABRT"), or NULL when it has none (realtime signals). */
const char *adac_signal_name(int signo);

/* Writes "signal SIGSEGV" (or "signal 40" for an unnamed one) into buf; for a fault the kernel
 * raised (SIGSEGV, SIGBUS, SIGILL, SIGFPE with si_code > 0) it adds the fault address:
 * "signal SIGSEGV (fault address: 0x10)". buf stays "" when signo is 0. */
void adac_stop_reason_signal(char *buf, size_t size, int signo, int code, uint64_t fault_addr);

/* Whether signal signo ends a process with a core dump by default (signal(7): SIGQUIT, SIGILL,
 * SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGXCPU, SIGXFSZ, SIGSYS). */
bool adac_signal_dumps_core(int signo);

/* Whether thread th crashed: it stopped for such a signal. Not a SIGSTOP: LLDB gives one to a core
 * that records no signal (createdump's, gcore's) and to the process it attaches to. */
struct adac_thread;
bool adac_thread_crashed(const struct adac_thread *th);

#endif
