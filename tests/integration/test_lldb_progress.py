"""lldb.progress: a long command in lldb-22 behaves as LLDB's own long work does: it reports its
progress (SBProgress: LLDB's statusline, an IDE's progress through lldb-dap) and stops when the user
asks (SBDebugger::RequestInterrupt, which Ctrl-C and an IDE's cancel come down to). Driven through
the SB API in this process, with the plugin, on a createdump core of the fanout sample (10,001
stacks).

Checked, exactly:
  - `async ps --stats` reports "Scanning the heap", then "Resolving frames", both with details
    "async ps": each from its first report to its total, never going back, and ended complete;
    "Resolving frames" counts the stacks (listed, and without frames, from the summary line);
    `async ps --completed` then "Finding completed tasks", and `async dumpheap` (--stat, --short),
    `async refs` and `async gcroot` of an object "Walking the heap", so, over the scan's bytes;
  - after `async threads enable`, the stop's threads (the OS plugin's scan, no command) report
    "Scanning the heap" over the same bytes, then "Resolving frames", details "async threads";
  - a command interrupted (a listener asks on its first report of a phase) fails with "error:
    interrupted", what it printed being the start of its whole output: `async ps --stats` in its
    heap scan prints nothing, `async ps` while it resolves frames whole stacks, `async dumpheap
    --short` whole lines; then, the interrupt taken back, the same command prints its whole
    output, byte for byte.
  - Ctrl-C in an interactive lldb-22 (a pseudo-terminal; LLDB tells the command's own thread)
    stops `async ps` with "error: interrupted", and the next command runs whole.
The interrupt comes from another thread while the command runs, as Ctrl-C does: when the command
wins the race and ends first, the run is repeated (at most 20 times).
"""
import os
import re
import shutil
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402

rc, lldb_path, err = t.run([shutil.which(t.LLDB) or t.LLDB, "-P"])
t.check_eq((rc, err), (0, ""), "lldb-22 -P")
sys.path.insert(0, lldb_path.strip())
import lldb  # noqa: E402

PROGRESS_BITS = lldb.SBDebugger.eBroadcastBitProgress | lldb.SBDebugger.eBroadcastBitExternalProgress
ATTEMPTS = 20


class Session:
    def __init__(self, core, pre=()):
        self.dbg = lldb.SBDebugger.Create(False)
        self.ci = self.dbg.GetCommandInterpreter()
        self.listener = lldb.SBListener("asyncdac-test")
        self.dbg.GetBroadcaster().AddListener(self.listener, PROGRESS_BITS)
        for c in (f"plugin load {t.PLUGIN}", *pre, f"target create --core {core}"):
            ok, out, err = self.run(c)
            t.check(ok, f"{c}: {err}")
        if not pre:
            self.events()

    def run(self, command):
        r = lldb.SBCommandReturnObject()
        self.ci.HandleCommand(command, r)
        return r.Succeeded(), r.GetOutput() or "", r.GetError() or ""

    def events(self):
        """The progress reports so far: [(id, title, details, completed, total)]."""
        got, ev = [], lldb.SBEvent()
        while self.listener.GetNextEvent(ev):
            d = lldb.SBDebugger.GetProgressDataFromEvent(ev)
            got.append((d.GetValueForKey("progress_id").GetUnsignedIntegerValue(),
                        d.GetValueForKey("title").GetStringValue(200),
                        d.GetValueForKey("details").GetStringValue(200),
                        d.GetValueForKey("completed").GetUnsignedIntegerValue(),
                        d.GetValueForKey("total").GetUnsignedIntegerValue()))
        return got

    def wait_report(self, title, timeout=30):
        """Waits for a progress report titled `title`; whether one came."""
        ev = lldb.SBEvent()
        while self.listener.WaitForEvent(timeout, ev):
            d = lldb.SBDebugger.GetProgressDataFromEvent(ev)
            if d.GetValueForKey("title").GetStringValue(200) == title:
                return True
        return False


def reports_of(s, command, want):
    """Runs command; checks its progress reports' (title, details), in order, are want, and that
    each goes from its first report to its total, never back, and ends complete. Returns (output,
    [total per report])."""
    ok, out, err = s.run(command)
    t.check(ok and err == "", f"{command}: {err}")
    return out, check_reports(s, command, want)


def check_reports(s, what, want):
    """Checks the progress reports so far as reports_of does (asyncdac's: LLDB's own, such as its
    symbol loading, are left out): [total per report]."""
    command = what
    reports = {}
    for pid, title, details, completed, total in s.events():
        if not details.startswith("async "):
            continue
        reports.setdefault(pid, []).append((title, details, completed, total))
    t.check_eq([(r[0][0], r[0][1]) for r in reports.values()], want, f"{command}: its progress reports (title, details)")
    for r in reports.values():
        title, total = r[0][0], r[0][3]
        done = [c for _, _, c, _ in r]
        t.check(all(x[0] == title and x[3] == total for x in r), f"{command}: {title}: one title and total: {r}")
        t.check(done == sorted(done), f"{command}: {title}: completed never goes back: {done}")
        t.check_eq(done[-1], total, f"{command}: {title}: ends complete")
        t.check(total > 0, f"{command}: {title}: has a total")
    return [r[0][3] for r in reports.values()]


def check_progress(s):
    """The reports of each command: the heap's bytes (the scan's total)."""
    out, totals = reports_of(s, "async ps --stats", [("Scanning the heap", "async ps"), ("Resolving frames", "async ps")])
    m = re.search(r"^(\d+) chains listed;.* (\d+) without frames\.$", out, re.M)
    t.check(m is not None, f"async ps --stats: no summary line in:\n{out}")
    if m and len(totals) == 2:
        t.check_eq(totals[1], int(m.group(1)) + int(m.group(2)), "Resolving frames: total = the stacks (listed + without frames)")
    # Every heap walk: the same bytes as the scan's.
    heap = totals[0] if totals else None
    _, walked = reports_of(s, "async ps --completed",
                           [("Scanning the heap", "async ps"), ("Resolving frames", "async ps"),
                            ("Finding completed tasks", "async ps")])
    t.check_eq(walked[2:], [heap], "async ps --completed: the completed tasks' heap walk covers the scan's bytes")
    for command in ("async dumpheap --stat", "async dumpheap --short"):
        out, walked = reports_of(s, command, [("Walking the heap", "async dumpheap")])
        t.check_eq(walked, [heap], f"{command}: the heap's bytes")
    first = out.split()[0] if out.split() else "0x0"
    for command in (f"async refs {first}", f"async gcroot {first}"):
        _, walked = reports_of(s, command, [("Walking the heap", command.split()[0] + " " + command.split()[1])])
        t.check_eq(walked, [heap], f"{command}: the heap's bytes")
    return heap


def check_threads(core, heap):
    """The chains as threads (`async threads enable`): LLDB asks the OS plugin for a stop's threads,
    and its scan reports as a command's would, details "async threads"."""
    s = Session(core, pre=["async threads enable"])
    threads = s.dbg.GetSelectedTarget().GetProcess().GetNumThreads()
    t.check(threads > 10000, f"async threads enable: {threads} threads, expected the 10,000 chains' and the process's")
    totals = check_reports(s, "the threads of the core's stop",
                           [("Scanning the heap", "async threads"), ("Resolving frames", "async threads")])
    t.check_eq(totals[:1], [heap], "async threads: the scan covers the heap's bytes, as async ps's does")
    lldb.SBDebugger.Destroy(s.dbg)


def interrupted_run(s, command, whole, phase):
    """Runs command, asking to interrupt it on its first progress report titled `phase`, until an
    interrupt lands before it ends; checks the interrupted run, and a run after it."""
    for attempt in range(ATTEMPTS):
        s.events()
        asked = threading.Event()

        def interrupt():
            if s.wait_report(phase):
                s.dbg.RequestInterrupt()
                asked.set()

        th = threading.Thread(target=interrupt)
        th.start()
        ok, out, err = s.run(command)
        th.join()
        if asked.is_set():
            s.dbg.CancelInterruptRequest()
        if ok:
            t.check_eq((out, err), (whole, ""), f"{command}: a run the interrupt came too late for")
            continue
        t.check_eq(err, "error: interrupted\n", f"{command}: interrupted (attempt {attempt + 1})")
        t.check(whole.startswith(out), f"{command}: what it printed before the interrupt is the start of "
                                       f"the whole output ({len(out)} bytes):\n{out[-500:]}")
        again = s.run(command)
        t.check_eq(again, (True, whole, ""), f"{command}: run again after the interrupt")
        return out
    t.fail(f"{command}: never interrupted in {ATTEMPTS} runs")
    return None


def ctrl_c(core, stats):
    """Ctrl-C typed 10 ms after `async ps` in lldb-22 on a terminal."""
    import pty
    import select
    import time
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "dumb"
        os.execvp(t.LLDB, [t.LLDB, "-x", "--no-use-colors", "-o", f"plugin load {t.PLUGIN}",
                           "-o", f"target create --core {core}"])
    seen = bytearray()

    def until(start, done, timeout=60):
        end = time.time() + timeout
        while time.time() < end and not done(bytes(seen[start:])):
            if select.select([fd], [], [], 0.01)[0]:
                try:
                    seen.extend(os.read(fd, 1 << 20))
                except OSError:
                    break
        return bytes(seen[start:]).decode(errors="replace").replace("\r\n", "\n")

    def prompt_after(n):
        return lambda b: len(b) > n and b.rstrip().endswith(b"(lldb)")

    try:
        until(0, lambda b: b"was loaded" in b and b.rstrip().endswith(b"(lldb)"))
        for attempt in range(ATTEMPTS):
            start = len(seen)
            os.write(fd, b"async ps\n")
            time.sleep(0.01)
            os.write(fd, b"\x03")
            out = until(start, prompt_after(20))
            if "error: interrupted\n" in out:
                break
        else:
            t.fail(f"Ctrl-C never interrupted async ps in {ATTEMPTS} runs; the last:\n{out[-500:]}")
        start = len(seen)
        os.write(fd, b"async ps --stats\n")
        out = until(start, prompt_after(20))
        t.check_eq(out[out.index("\n") + 1:out.rindex("(lldb)")], stats, "async ps --stats after Ctrl-C")
        os.write(fd, b"quit\n")
    finally:
        os.close(fd)
        os.waitpid(pid, 0)


def main():
    tmp = t.tmpdir()
    core = b.sample_core("fanout", "Debug", tmp)
    s = Session(core)
    heap = check_progress(s)
    check_threads(core, heap)
    ok, stats, err = s.run("async ps --stats")
    t.check(ok and err == "", f"async ps --stats: {err}")
    cut = interrupted_run(s, "async ps --stats", stats, "Scanning the heap")
    t.check_eq(cut, "", "async ps --stats interrupted in its heap scan: no output")
    ok, whole, err = s.run("async ps")
    t.check(ok and err == "", f"async ps: {err}")
    cut = interrupted_run(s, "async ps", whole, "Resolving frames")
    if cut is not None:
        # Whole stacks: the listing stops between two.
        t.check(re.match(r"\n?chain #\d+: ", whole[len(cut):]) is not None,
                f"async ps: the interrupted listing ends inside a stack:\n{cut[-300:]}")
    ok, objects, err = s.run("async dumpheap --short")
    t.check(ok and err == "", f"async dumpheap --short: {err}")
    cut = interrupted_run(s, "async dumpheap --short", objects, "Walking the heap")
    if cut is not None:
        t.check(cut == "" or cut.endswith("\n"), f"async dumpheap --short: the interrupted listing ends inside a line: {cut[-40:]!r}")
    lldb.SBDebugger.Destroy(s.dbg)
    ctrl_c(core, stats)
    t.finish()


main()
