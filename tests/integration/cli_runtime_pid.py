"""cli.runtime_pid: `asyncdac runtime --pid` on a running and on a stopped synthetic target, in
text and JSON; afterwards the target is exactly as it was (running stays running, stopped stays
stopped, nothing traced, no signal pending)."""
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import adactest as t  # noqa: E402
import targetlib as tl  # noqa: E402

# A running target (sleeping in pause()).
p, _ = t.start([tl.TARGET, "spin"])
t.check_eq(tl.wait_state(p.pid, ("S",)), "S", "spin: state before")
base, _ = tl.module_range(tl.maps(p.pid), tl.FAKE_LIB)
tl.check_runtime(["--pid", str(p.pid)], tl.FAKE_LIB, base, "spin")
tl.check_untouched(p.pid, "S", "spin after the CLI")
# It still runs: it takes SIGTERM's default action at once.
p.send_signal(signal.SIGTERM)
t.check_eq(p.wait(timeout=10), -signal.SIGTERM, "spin: exit status after SIGTERM")

# A stopped target (it raised SIGSTOP).
p, _ = t.start([tl.TARGET, "sigstop"])
t.wait_stopped(p.pid)
base, _ = tl.module_range(tl.maps(p.pid), tl.FAKE_LIB)
tl.check_runtime(["--pid", str(p.pid)], tl.FAKE_LIB, base, "sigstop")
tl.check_untouched(p.pid, "T", "sigstop after the CLI")
# SIGCONT resumes it into its pause() loop, and nothing left pending stops it again.
os.kill(p.pid, signal.SIGCONT)
t.check_eq(tl.wait_state(p.pid, ("S",)), "S", "sigstop: state after SIGCONT")
tl.check_untouched(p.pid, "S", "sigstop after SIGCONT")
p.send_signal(signal.SIGTERM)
t.check_eq(p.wait(timeout=10), -signal.SIGTERM, "sigstop: exit status after SIGTERM")

t.finish()
