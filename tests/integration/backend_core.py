"""cli.backend_core: the core backend through adac-probe, against the live process it was taken
from (gcore) and against a kernel core (abort mode, only when core_pattern can be pointed into a
temporary directory): modules, threads, registers, frames (against eu-stack) and an unknown
thread."""
import os
import re
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import adactest as t  # noqa: E402
import targetlib as tl  # noqa: E402

d = tl.tmpdir()


def probe(kind, target, *args, label, rc=0):
    got_rc, out, err = tl.probe([kind, str(target)] + [str(a) for a in args])
    t.check_eq((got_rc, err), (rc, ""), f"{label}: probe exit code and stderr")
    lines = out.splitlines()
    t.check_eq(lines[:1], [f"kind {kind}"], f"{label}: backend kind")
    return lines[1:]


def check_frames(frames, core, names, label):
    for name in names:
        t.check(any(f.split()[2:3] == [name] for f in frames), f"{label}: no frame for {name}:\n" + "\n".join(frames))
    t.check(any(re.match(r"0x[0-9a-f]+ synthetic-target main .*synthetic_target\.c:\d+$", f) for f in frames),
            f"{label}: main has no source line:\n" + "\n".join(frames))
    oracle = tl.eu_stack([f"--core={core}", f"--executable={tl.TARGET}"])
    if oracle is not None:
        t.check_eq([(int(f.split()[0], 16), f.split()[2]) for f in frames], oracle, f"{label}: frames against eu-stack")


# ---- gcore of the running target: the core must agree with the live process ----

p, _ = t.start([tl.TARGET, "spin"])
t.check_eq(tl.wait_state(p.pid, ("S",)), "S", "spin: in pause()")  # so its registers stay put
live = probe("pid", p.pid, "modules", "threads", "regs", p.pid, label="live")
core = t.gcore(p.pid, os.path.join(d, "spin.core"))
p.send_signal(signal.SIGKILL)
p.wait(timeout=10)

lines = probe("core", core, "modules", "threads", "regs", p.pid, label="gcore")
nmods = len(live) - 2
t.check_eq(lines[:nmods], live[:nmods], "gcore: modules equal the live process's")
t.check_eq(lines[nmods], f"1 {p.pid} ", "gcore: threads (index, tid, no name)")
t.check_eq(lines[nmods + 1], live[nmods + 1], "gcore: registers equal the live process's")
frames = probe("core", core, "frames", p.pid, label="gcore frames")
check_frames(frames, core, ["pause", "main"], "gcore")
t.check_eq(probe("core", core, "regs", 12345, "frames", 12345, label="unknown thread", rc=1),
           [f"error: {core}: no thread 12345 in the core"] * 2, "gcore: unknown thread")

# ---- kernel core of the abort mode ----

kcore = tl.kernel_core([tl.TARGET, "abort"], d)
if kcore:
    pid = int(kcore.rsplit(".", 1)[1])
    lines = probe("core", kcore, "modules", "threads", label="kernel core")
    base, end = tl.core_module_range(kcore, tl.FAKE_LIB)
    t.check(f"0x{base:x} 0x{end:x} {tl.FAKE_LIB}" in lines, f"kernel core: no module line for {tl.FAKE_LIB}")
    t.check_eq(lines[-1], f"1 {pid} ", "kernel core: threads")
    frames = probe("core", kcore, "frames", pid, label="kernel core frames")
    check_frames(frames, kcore, ["abort", "main"], "kernel core")

t.finish()
