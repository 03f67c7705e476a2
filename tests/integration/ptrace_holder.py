"""ptrace_holder.py <pid>: another debugger, for tests: holds PTRACE_SEIZE on thread <pid> (a
process's main thread) without stopping it, and lets every stop of that thread go on (a signal it
receives is delivered), so the process keeps running while it is "already traced". Prints SEIZED
(or "error <errno>" and exits 1), then, once a line arrives on stdin (or stdin closes), interrupts the
thread, detaches and prints DETACHED. python3 standard library only (ctypes)."""
import ctypes
import os
import select
import sys
import time

PTRACE_CONT, PTRACE_DETACH, PTRACE_SEIZE, PTRACE_INTERRUPT = 7, 17, 0x4206, 0x4207
WALL = 0x40000000

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]


def ptrace(req, pid, data=0):
    return libc.ptrace(req, pid, None, ctypes.c_void_p(data))


def main():
    pid = int(sys.argv[1])
    if ptrace(PTRACE_SEIZE, pid) != 0:
        print(f"error {ctypes.get_errno()}", flush=True)
        sys.exit(1)
    print("SEIZED", flush=True)
    # ptrace requests must come from the thread that attached: one loop does everything.
    detaching = False
    while True:
        if not detaching and select.select([sys.stdin], [], [], 0)[0]:
            sys.stdin.readline()
            detaching = True
            ptrace(PTRACE_INTERRUPT, pid)
        try:
            wpid, status = os.waitpid(pid, WALL | os.WNOHANG)
        except ChildProcessError:
            break
        if wpid == 0:
            time.sleep(0.001)
            continue
        if os.WIFEXITED(status) or os.WIFSIGNALED(status):
            break
        # status >> 16: a ptrace event (our interrupt); 0: a signal for the thread, to deliver.
        sig = 0 if status >> 16 else os.WSTOPSIG(status)
        if detaching:
            ptrace(PTRACE_DETACH, pid, sig)
            break
        ptrace(PTRACE_CONT, pid, sig)
    print("DETACHED", flush=True)


if __name__ == "__main__":
    main()
