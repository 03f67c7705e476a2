"""cli.runtime_core: `asyncdac runtime <core>` on a gcore core of the running synthetic target
(read after the process is gone) and on a kernel core of its abort mode (only when core_pattern
can be pointed into a temporary directory)."""
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import adactest as t  # noqa: E402
import targetlib as tl  # noqa: E402

d = tl.tmpdir()

# gcore: the base must be where the live process had libcoreclr.so.
p, _ = t.start([tl.TARGET, "spin"])
base, _ = tl.module_range(tl.maps(p.pid), tl.FAKE_LIB)
core = t.gcore(p.pid, os.path.join(d, "spin.core"))
t.check_eq(tl.wait_state(p.pid, ("S",)), "S", "gcore left the target running")
p.send_signal(signal.SIGKILL)
p.wait(timeout=10)
tl.check_runtime([core], tl.FAKE_LIB, base, "gcore")

# Kernel core: the base is checked against the core's NT_FILE note, read here independently.
kcore = tl.kernel_core([tl.TARGET, "abort"], d)
if kcore:
    kbase, _ = tl.core_module_range(kcore, tl.FAKE_LIB)
    tl.check_runtime([kcore], tl.FAKE_LIB, kbase, "kernel core")

t.finish()
