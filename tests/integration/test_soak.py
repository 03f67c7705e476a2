"""robust.soak: a live .NET 11 workload (targets/dotnet/soak: 8 workers running chains of runtime-async
calls that check their own locals and checksums) keeps working while asyncdac attaches, reads and
detaches in a loop:
  running   the CLI (`ps --pid`, `bt --pid`, `ps --pid --locals`, `dumpheap --pid --stat`, `pstacks
            --pid`: every thread unwound while the workers run) back to back,
            and lldb-22 (attach, `async ps`, `bt async`, detach) every 10th round, for
            ADAC_SOAK_SECONDS (default 20). Every command succeeds; after each one no thread of the
            workload is left stopped, and it makes progress again within 2 s.
  stopped   the workload stopped with SIGSTOP: 10 CLI reads; after each, every thread is still in
            its group stop and no work was done; after SIGCONT it makes progress again.
  traced    another tracer holds the workload (tests/integration/ptrace_holder.py): the CLI fails
            with exactly "process <pid>: ptrace attach failed: Operation not permitted (already
            traced by process <tracer>)", and the workload goes on; once the tracer detached, the CLI
            reads it again.
Then the workload stops and reports: no error, every checksum right (no unit of work lost or run
twice), no worker stalled. The last line is the summary scripts/soak records.
"""
import os
import re
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402

SANITIZERS = ("AddressSanitizer", "LeakSanitizer", "runtime error:")
COMMANDS = [["ps"], ["bt"], ["ps", "--locals"], ["dumpheap", "--stat"], ["pstacks"]]
PROGRESS_WITHIN = 2.0


class Workload:
    """The soak sample, its progress as it prints it."""

    def __init__(self):
        d = b.dn()
        app = os.path.join(d["DN_APPS"], "11", "Debug", "soak", "soak.dll")
        self.proc = subprocess.Popen([d["DN_HOST"], d["DN_RUNTIME11"], app], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        t._children.append(self.proc)
        self.pid = self.proc.pid
        self.units = 0
        self.done = None
        self.ready = threading.Event()
        self.stderr = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()
        if not self.ready.wait(120):
            t.fail(f"the soak workload did not start: {''.join(self.stderr)[-2000:]}")
            t.finish()

    def _read(self):
        for line in self.proc.stdout:
            if line.startswith("READY"):
                self.ready.set()
            m = re.match(r"PROGRESS units=(\d+)", line)
            if m:
                self.units = int(m.group(1))
            if line.startswith("DONE"):
                self.done = dict(kv.split("=", 1) for kv in line.split()[1:])

    def states(self):
        """The state letter of every thread (R, S, D, T: stopped, t: stopped by a tracer...)."""
        out = {}
        for tid in os.listdir(f"/proc/{self.pid}/task"):
            try:
                with open(f"/proc/{self.pid}/task/{tid}/stat") as f:
                    out[int(tid)] = f.read().rsplit(")", 1)[1].split()[0]
            except OSError:
                pass  # a thread that just exited
        return out

    def progresses(self, since, within=PROGRESS_WITHIN):
        """Seconds until the unit count passed `since`, or None."""
        start = time.time()
        while time.time() - start < within:
            if self.units > since:
                return time.time() - start
            time.sleep(0.01)
        return None

    def stop(self):
        self.proc.stdin.write("stop\n")
        self.proc.stdin.flush()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            t.fail("the soak workload did not stop within 60 s")
        time.sleep(0.2)
        return self.done


def settled(w, want, what):
    """Waits (up to 0.5 s) until every thread's state is in want; checks it."""
    deadline = time.time() + 0.5
    while True:
        states = w.states()
        if all(s in want for s in states.values()) or time.time() > deadline:
            break
        time.sleep(0.005)
    bad = {tid: s for tid, s in states.items() if s not in want}
    return t.check(not bad, f"{what}: threads left in the wrong state (want {want}): {bad}")


def run_cli(w, cmd, what):
    rc, out, err = t.run([t.CLI, cmd[0], "--pid", str(w.pid)] + cmd[1:], timeout=120)
    ok = t.check(rc == 0 and not any(s in err for s in SANITIZERS),
                 f"{what}: asyncdac {' '.join(cmd)} --pid: rc {rc}, {err.strip()[-1500:]!r}")
    return ok, out


def main():
    seconds = float(os.environ.get("ADAC_SOAK_SECONDS", "20"))
    w = Workload()
    figures = {"cli": 0, "lldb": 0, "worst_resume": 0.0, "cli_s": 0.0, "lldb_s": 0.0}

    # running: attach, read, detach in a loop
    started = time.time()
    rnd = 0
    while time.time() - started < seconds:
        what = f"running, round {rnd}"
        round_start = time.time()
        if rnd % 10 == 9:
            rc, out, err = t.lldb(["async ps", "bt async", "process detach"], pre=[f"process attach -p {w.pid}"],
                                  timeout=120)
            t.check(rc == 0 and "chains listed" in out and "error:" not in out + err,
                    f"{what}: lldb-22 async ps / bt async: rc {rc}, {(out + err)[-1500:]!r}")
            figures["lldb"] += 1
        else:
            cmd = COMMANDS[rnd % len(COMMANDS)]
            ok, out = run_cli(w, cmd, what)
            if ok and cmd == ["ps"]:
                t.check("8 chains listed" in out or "chains listed" in out, f"{what}: ps lists chains: {out[-500:]!r}")
            figures["cli"] += 1
        units = w.units
        settled(w, "RSDZ", what)
        took = w.progresses(units)
        if not t.check(took is not None, f"{what}: no progress within {PROGRESS_WITHIN} s of the detach"):
            break
        figures["worst_resume"] = max(figures["worst_resume"], took)
        figures["lldb_s" if rnd % 10 == 9 else "cli_s"] += time.time() - round_start
        rnd += 1
    running_units, running_cli = w.units, figures["cli"]

    # stopped: SIGSTOP, reads, SIGCONT
    os.kill(w.pid, signal.SIGSTOP)
    t.wait_stopped(w.pid)
    settled(w, "T", "after SIGSTOP")
    time.sleep(0.3)  # a PROGRESS line written before the stop may still be in the pipe
    units = w.units
    for i in range(10):
        run_cli(w, COMMANDS[i % len(COMMANDS)], f"stopped, read {i}")
        settled(w, "T", f"stopped, read {i}")
        figures["cli"] += 1
    time.sleep(0.3)
    t.check_eq(w.units, units, "work done while the workload was stopped")
    os.kill(w.pid, signal.SIGCONT)
    t.check(w.progresses(units) is not None, f"no progress within {PROGRESS_WITHIN} s of SIGCONT")

    # traced: another tracer holds it
    holder = subprocess.Popen([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "ptrace_holder.py"),
                               str(w.pid)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    t._children.append(holder)
    t.check_eq(holder.stdout.readline().strip(), "SEIZED", "ptrace_holder")
    for i in range(5):
        rc, out, err = t.run([t.CLI, "ps", "--pid", str(w.pid)], timeout=120)
        t.check_eq((rc, err), (1, f"asyncdac: error: process {w.pid}: ptrace attach failed: Operation not permitted "
                                  f"(already traced by process {holder.pid})\n"), f"traced, read {i}")
        figures["cli"] += 1
        units = w.units
        t.check(w.progresses(units) is not None, f"traced, read {i}: no progress within {PROGRESS_WITHIN} s")
    holder.stdin.write("detach\n")
    holder.stdin.flush()
    t.check_eq(holder.stdout.readline().strip(), "DETACHED", "ptrace_holder detach")
    holder.wait(timeout=10)
    run_cli(w, ["ps"], "after the other tracer detached")
    figures["cli"] += 1

    done = w.stop() or {}
    t.check_eq((w.proc.returncode, done.get("errors"), done.get("checksums"), done.get("stalled_workers")),
               (0, "0", "ok", "0"), f"the workload's own verdict ({done}; stderr {''.join(w.stderr)[-1500:]!r})")
    # Rounds a second of each kind (attach, read, detach, and the workload's progress seen again).
    rates = (f"{running_cli / max(figures['cli_s'], 1e-9):.1f} CLI and "
             f"{figures['lldb'] / max(figures['lldb_s'], 1e-9):.2f} lldb-22 rounds/s")
    print(f"soak: {seconds:.0f} s running, {figures['cli']} CLI and {figures['lldb']} lldb-22 attaches ({rates}), "
          f"{done.get('units', '?')} units of work ({running_units} while running), errors {done.get('errors', '?')}, "
          f"checksums {done.get('checksums', '?')}, longest stop {done.get('max_gap_ms', '?')} ms, "
          f"worst resume {figures['worst_resume'] * 1000:.0f} ms")
    t.finish()


if __name__ == "__main__":
    main()
