"""cli.backend_pid: the pid backend through adac-probe.

- modules, threads, registers, frames (against eu-stack) and reads of the synthetic target, also
  through a second target over the process held (adac_target_reopen), on a thread of its own;
- a process whose threads come and go, attached again and again: every thread is held (its
  registers can be read), running stays running and stopped stays stopped;
- signals sent while the process is held are neither lost nor duplicated (SIGTERM, SIGSTOP,
  SIGCONT), and a process killed while held makes reads fail cleanly."""
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import adactest as t  # noqa: E402
import targetlib as tl  # noqa: E402


def probe(pid, *args, label):
    rc, out, err = tl.probe(["pid", str(pid)] + [str(a) for a in args])
    t.check_eq((rc, err), (0, ""), f"{label}: probe exit code and stderr")
    lines = out.splitlines()
    t.check_eq(lines[:1], ["kind pid"], f"{label}: backend kind")
    return lines[1:]


def modules_of(mappings):
    """The module lines adac-probe must print for these /proc/pid/maps mappings."""
    paths = sorted({m[4] for m in mappings if any(x[4] == m[4] and x[3] == 0 for x in mappings)})
    ranges = sorted((tl.module_range(mappings, p), p) for p in paths)
    return [f"0x{b:x} 0x{e:x} {p}" for (b, e), p in ranges]


def probe_frames(lines):
    return [(int(f.split()[0], 16), f.split()[2]) for f in lines]


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def keeps_running(pid, label):
    """A process with a spinning thread accumulates CPU time."""
    before = cpu_ticks(pid)
    deadline = time.time() + 5
    while cpu_ticks(pid) == before and time.time() < deadline:
        time.sleep(0.05)
    t.check(cpu_ticks(pid) > before, f"{label}: the process does not run")


# ---- the synthetic target ----

p, _ = t.start([tl.TARGET, "spin"])
t.check_eq(tl.wait_state(p.pid, ("S",)), "S", "spin: in pause()")  # so its registers stay put
mappings = tl.maps(p.pid)
base, _ = tl.module_range(mappings, tl.FAKE_LIB)
lines = probe(p.pid, "modules", "threads", "regs", p.pid, label="spin")
mods = modules_of(mappings)
t.check_eq(lines[:len(mods)], mods, "spin: modules")
rest = lines[len(mods):]
t.check_eq(rest[:1], [f"1 {p.pid} synthetic-targe"], "spin: threads (index, tid, comm)")
rip = int(rest[1].split()[1], 16)
t.check(any(m[0] <= rip < m[1] and "x" in m[2] for m in mappings), f"spin: rip 0x{rip:x} is not in code")

frames = probe(p.pid, "frames", p.pid, label="spin frames")
t.check_eq(int(frames[0].split()[0], 16), rip, "spin: innermost frame is at rip")
t.check(any(re.match(r"0x[0-9a-f]+ synthetic-target main .*synthetic_target\.c:\d+$", f) for f in frames),
        f"spin: no frame for main with its source line:\n" + "\n".join(frames))
oracle = tl.eu_stack(["-p", str(p.pid)])
if oracle is not None:
    t.check_eq(probe_frames(frames), oracle, "spin: frames against eu-stack -p")

# Reads: the descriptor's magic; nothing at address 0; a short count where the mappings end.
desc = base + tl.elf_dynsym(tl.FAKE_LIB, tl.DESCRIPTOR_SYMBOL)
t.check_eq(probe(p.pid, "text", hex(desc), 7, label="read magic"), ["read 7", "DNCCDAC"], "read: descriptor magic")
t.check_eq(probe(p.pid, "read", 0, 8, label="read 0"), ["read 0", ""], "read: address 0")
with open(f"/proc/{p.pid}/maps") as f:
    ranges = [tuple(int(x, 16) for x in line.split()[0].split("-")) for line in f]
hole = next(e for _, e in ranges if not any(s == e for s, _ in ranges))
t.check_eq(probe(p.pid, "read", hex(hole - 16), 64, label="read hole")[0], "read 16", f"read: up to 0x{hole:x}")

# A second target over the process held (a listing's helper), read on a thread of its own: the
# same bytes, modules and registers (taken by the holder: ptrace answers only the thread holding
# the process); native frames are refused (libdwfl would ask ptrace from that thread).
rc, out, err = tl.probe(["pid", str(p.pid), "allregs", "text", hex(desc), "7", "reopen", "allregs", "text", hex(desc),
                         "7", "modules", "frames", str(p.pid)])
lines = out.splitlines()
held = lines[1:4]
t.check_eq((rc, err), (1, ""), "reopen: exit code (the refused frames) and stderr")
t.check_eq(lines[:5], ["kind pid", f"{p.pid} rip 0x{rip:x}", "read 7", "DNCCDAC", "reopened"], "reopen: the holder")
t.check_eq(lines[5:8], held, "reopen: registers and bytes through the second target")
t.check_eq(lines[8:8 + len(mods)], mods, "reopen: modules through the second target")
t.check_eq(lines[8 + len(mods):], [f"error: process {p.pid}: its native frames are unwound by the thread holding it"],
           "reopen: frames through the second target")
tl.check_untouched(p.pid, "S", "spin after the probes")
p.send_signal(signal.SIGKILL)
p.wait(timeout=10)

# ---- threads that come and go ----

p, _ = t.start([tl.CHURN])
for i in range(10):
    lines = probe(p.pid, "threads", "allregs", label=f"churn round {i}")
    threads = [line.split() for line in lines if not line.split()[1:2] == ["rip"]]
    regs = [line.split()[0] for line in lines if line.split()[1:2] == ["rip"]]
    t.check(len(threads) >= 5, f"churn round {i}: only {len(threads)} threads")
    t.check_eq(regs, [th[1] for th in threads], f"churn round {i}: registers of every thread")
    t.check_eq({th[2] for th in threads}, {"thread-churn"}, f"churn round {i}: thread names")
    t.check_eq(tl.status(p.pid)["TracerPid"], "0", f"churn round {i}: TracerPid after")
    t.check("t" not in tl.thread_states(p.pid).values(), f"churn round {i}: a thread is still in a tracing stop")
keeps_running(p.pid, "churn after the probes")

os.kill(p.pid, signal.SIGSTOP)
deadline = time.time() + 10
while set(tl.thread_states(p.pid).values()) != {"T"} and time.time() < deadline:
    time.sleep(0.02)
t.check_eq(set(tl.thread_states(p.pid).values()), {"T"}, "stopped churn: thread states before")
stopped_threads = set(tl.thread_states(p.pid))
for i in range(3):
    lines = probe(p.pid, "threads", "allregs", label=f"stopped churn round {i}")
    t.check_eq({int(line.split()[1]) for line in lines if line.split()[1] != "rip"}, stopped_threads,
               f"stopped churn round {i}: threads")
    t.check_eq(tl.thread_states(p.pid), {tid: "T" for tid in stopped_threads}, f"stopped churn round {i}: states")
    tl.check_untouched(p.pid, "T", f"stopped churn round {i}")
os.kill(p.pid, signal.SIGCONT)
keeps_running(p.pid, "churn after SIGCONT")
p.send_signal(signal.SIGKILL)
p.wait(timeout=10)


# ---- signals while held ----

def hold(pid, actions, while_held, label):
    """Runs the probe on pid with `wait` first; calls while_held() while the probe holds the
    process, then lets the probe go on. Returns (exit code, output lines after "waiting")."""
    q = subprocess.Popen([tl.PROBE, "pid", str(pid), "wait"] + [str(a) for a in actions], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = [q.stdout.readline().strip(), q.stdout.readline().strip()]
    if not t.check_eq(first, ["kind pid", "waiting"], f"{label}: probe attached"):
        q.kill()
    else:
        t.check_eq(t.proc_state(pid), "t", f"{label}: held process state")
        while_held()
    try:
        out, err = q.communicate("\n", timeout=60)
    except subprocess.TimeoutExpired:
        q.kill()
        out, err = q.communicate()
        t.fail(f"{label}: the probe hung")
    t.check_eq(err, "", f"{label}: probe stderr")
    return q.returncode, out.splitlines()


# SIGTERM arrives while held: delivered after the detach, so the process dies of it.
p, _ = t.start([tl.TARGET, "spin"])


def term_while_held():
    os.kill(p.pid, signal.SIGTERM)
    time.sleep(0.1)
    t.check_eq(t.proc_state(p.pid), "t", "SIGTERM while held: still held")


rc, _ = hold(p.pid, ["threads"], term_while_held, "SIGTERM while held")
t.check_eq(rc, 0, "SIGTERM while held: probe exit code")
t.check_eq(p.wait(timeout=10), -signal.SIGTERM, "SIGTERM while held: the process died of it after the detach")

# SIGSTOP arrives while a running process is held: it stops after the detach.
p, _ = t.start([tl.TARGET, "spin"])
rc, _ = hold(p.pid, ["threads"], lambda: os.kill(p.pid, signal.SIGSTOP), "SIGSTOP while held")
t.check_eq(rc, 0, "SIGSTOP while held: probe exit code")
t.check_eq(tl.wait_state(p.pid, ("T",)), "T", "SIGSTOP while held: state after")
tl.check_untouched(p.pid, "T", "SIGSTOP while held")
os.kill(p.pid, signal.SIGCONT)
t.check_eq(tl.wait_state(p.pid, ("S",)), "S", "SIGSTOP while held: state after SIGCONT")
p.send_signal(signal.SIGKILL)
p.wait(timeout=10)

# SIGCONT arrives while a stopped process is held: it runs after the detach.
p, _ = t.start([tl.TARGET, "sigstop"])
t.wait_stopped(p.pid)
rc, _ = hold(p.pid, ["threads"], lambda: os.kill(p.pid, signal.SIGCONT), "SIGCONT while held")
t.check_eq(rc, 0, "SIGCONT while held: probe exit code")
t.check_eq(tl.wait_state(p.pid, ("S",)), "S", "SIGCONT while held: state after")
tl.check_untouched(p.pid, "S", "SIGCONT while held")
p.send_signal(signal.SIGKILL)
p.wait(timeout=10)

# SIGKILL while held: the process dies at once; reads and registers fail, nothing hangs.
p, _ = t.start([tl.TARGET, "spin"])
base, _ = tl.module_range(tl.maps(p.pid), tl.FAKE_LIB)
desc = base + tl.elf_dynsym(tl.FAKE_LIB, tl.DESCRIPTOR_SYMBOL)


def kill_while_held():
    os.kill(p.pid, signal.SIGKILL)
    t.check_eq(tl.wait_state(p.pid, ("Z", "X")), "Z", "SIGKILL while held: process state")


rc, lines = hold(p.pid, ["read", hex(desc), 8, "regs", p.pid, "modules"], kill_while_held, "SIGKILL while held")
t.check_eq(rc, 1, "SIGKILL while held: probe exit code")
t.check_eq(lines, ["read 0", "", f"error: process {p.pid}: thread {p.pid} has exited",
                  f"error: process {p.pid} has exited"], "SIGKILL while held: output")
t.check_eq(p.wait(timeout=10), -signal.SIGKILL, "SIGKILL while held: exit status")

t.finish()
