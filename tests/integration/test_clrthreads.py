"""clrthreads: the managed threads (SOS clrthreads), on cores of
  deadlock  the main thread parked in Sample.ParkForever, the finalizer, the thread pool's workers (one
            waiting for a Monitor "guard" holds, one idle) and gate thread, and "guard" in Task.Wait()
  crash     (--mode unhandled, the runtime's dump at the crash) the thread that threw the unhandled exception
  locks     every thread's count of the locks it holds (SOS's Lock Count), against `locks` and the
            oracle's Monitors; and on .NET 10 (its thread list links Threads through their LinkNext
            fields): every thread
Checked against the oracle (ClrMD through Microsoft's DAC): each thread's managed and OS ids, Thread
address, state flags, GC mode and finalizer mark (ClrRuntime.Threads), the thread store's counts against
those flags, the last thrown exception (ClrThread.CurrentException); the names from the sources
(Thread.Name = "guard"; CoreLib's ".NET TP Worker"); the debugger's indexes from `bt`; what each thread
does: the waiting ones as report's blocked threads say it with their wait chains, the main thread's
place from the oracle's stack and Sample.cs, the idle worker and the finalizer from the oracle's stacks.
lldb-22's `async clrthreads` prints what the CLI prints.
"""
import json
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from btsamples import h  # noqa: E402

BACKGROUND, UNSTARTED, DEAD, WORKER = 0x200, 0x400, 0x800, 0x01000000


def line_of(text, tid):
    """The clrthreads text's lines of thread tid: its own and those under it."""
    lines = text.splitlines()
    k = next((k for k, line in enumerate(lines) if re.match(rf"^ *\S+ +\d+ +{tid} 0x", line)), None)
    if k is None:
        return []
    rest = [line for line in lines[k + 1:]]
    under = []
    for line in rest:
        if not line.startswith("         "):
            break
        under.append(line)
    return [lines[k]] + under


def common(core, tmp, what):
    """clrthreads --json against the oracle; returns (document, text)."""
    j = b.cli_json(["clrthreads", core], "clrthreads")
    if not t.check(j is not None, f"{what}: clrthreads --json: a document"):
        return None, ""
    theirs = b.oracle_core_json("threads", core)["threads"]
    mine = j["threads"]
    t.check_eq([(x["managed_id"], x["tid"] or 0, h(x["thread"]), x["state"], x["gc_mode"], "Finalizer" in x["kinds"])
                for x in mine],
               [(x["managed_id"], x["os_id"], h(x["address"]), x["state"], x["gc_mode"], x["finalizer"]) for x in theirs],
               f"{what}: each thread's ids, Thread, state, GC mode and finalizer mark (oracle)")
    t.check_eq([(x["exception"] or {}).get("object") and (h(x["exception"]["object"]), x["exception"]["type"])
                for x in mine],
               [(x["exception"] or {}).get("object") and (h(x["exception"]["object"]), b.display(x["exception"]["type"]))
                for x in theirs], f"{what}: each thread's last thrown exception (oracle: CurrentException)")
    c = j["counts"] or {}
    t.check_eq(c, {"threads": len(theirs), "unstarted": sum(1 for x in theirs if x["state"] & UNSTARTED),
                   "background": sum(1 for x in theirs if x["state"] & BACKGROUND), "pending": 0,
                   "dead": sum(1 for x in theirs if x["state"] & DEAD)},
               f"{what}: the thread store's counts (oracle: the threads' flags)")
    rc, bt, err = b.cli(["bt", core])
    index = {int(m.group(2)): int(m.group(1)) for m in re.finditer(r"thread #(\d+), tid = (\d+)", bt)}
    t.check_eq({x["tid"]: x["index"] for x in mine if x["tid"]}, {tid: index.get(tid) for tid in
                                                                  (x["tid"] for x in mine if x["tid"])},
               f"{what}: the debugger's indexes, as bt's")
    for x in mine:
        kinds = ([("Finalizer")] if "Finalizer" in x["kinds"] else []) + \
            [k for flag, k in ((WORKER, "Threadpool Worker"), (BACKGROUND, "Background"), (UNSTARTED, "Unstarted"),
                               (DEAD, "Dead")) if x["state"] & flag]
        t.check_eq(x["kinds"], kinds, f"{what}: thread {x['tid']}'s kinds, from its flags")
    rc, text, err = b.cli(["clrthreads", core])
    t.check_eq((rc, err), (0, ""), f"{what}: clrthreads: exit code and stderr")
    head = (f"ThreadCount:      {c.get('threads')}\nUnstartedThread:  {c.get('unstarted')}\nBackgroundThread: "
            f"{c.get('background')}\nPendingThread:    {c.get('pending')}\nDeadThread:       {c.get('dead')}\n\n"
            " DBG   ID     OSID ThreadOBJ          State      GC Mode     Locks Name / kind / exception\n")
    t.check(text.startswith(head), f"{what}: clrthreads: the counts and the header:\n{text}")
    for x in mine:
        tail = " ".join(p for p in (x["name"] and json.dumps(x["name"]), x["kinds"] and f"({', '.join(x['kinds'])})") if p)
        if x["exception"]:
            e = x["exception"]
            tail += (", " if tail else "") + f"{e['type']} 0x{h(e['object']):016x}" + (" (unhandled)" if e["unhandled"] else "")
        mode = x["gc_mode"].capitalize()
        locks = "?" if x["locks_held"] is None else x["locks_held"]
        want = (f"{x['index'] or '-':>4} {x['managed_id']:>4} {x['tid'] or 0:>8} 0x{h(x['thread']):016x} "
                f"0x{x['state']:08x} {mode:<11} {locks:>5}" + (f" {tail}" if tail else ""))
        lines = line_of(text, x["tid"] or 0)
        t.check_eq(lines[:1], [want], f"{what}: clrthreads: thread {x['tid']}'s line")
        if x["tid"] and x["index"]:
            under = [f"         {x['waits_on'] or x['doing']}"] + [f"           then: {s}" for s in x["then"]]
            t.check_eq(lines[1:], under, f"{what}: clrthreads: what thread {x['tid']} does")
    return j, text


def deadlock(tmp):
    fields = {}
    core = b.sample_core("deadlock", "Debug", tmp, parked=True, fields=fields)
    j, text = common(core, tmp, "deadlock")
    if not j:
        return
    by_id = {x["managed_id"]: x for x in j["threads"]}
    guard, pool = by_id.get(int(fields["guard"]), {}), by_id.get(int(fields["guardpool"]), {})
    t.check_eq((guard.get("name"), pool.get("name")), ("guard", ".NET TP Worker"), "the threads' names (Thread.Name)")
    # The two waiting threads: what report's blocked threads say of them, with their chains.
    rc, report, err = b.cli(["report", core])
    section = report.split("\n== Blocked threads\n")[-1].split("\n\n== ")[0].splitlines()
    for x in (guard, pool):
        k = next((k for k, line in enumerate(section) if line.startswith(f"thread tid {x.get('tid')} ")), None)
        if not t.check(k is not None, f"report: thread {x.get('tid')} among the blocked threads:\n{section}"):
            continue
        waits = section[k].split("): ", 1)[1]
        then = [line[len("  then: "):] for line in section[k + 1:k + 1 + len(x["then"])]]
        t.check_eq((x["waits_on"], x["then"]), (waits, then), f"thread {x['tid']}: what it waits on and its chain, as report's")
        t.check(x["then"] and x["then"][-1].endswith("again: a deadlock"), f"thread {x['tid']}: the chain comes round")
    # The main thread: where it is parked (oracle's stack; the line from Sample.cs).
    with open(os.path.join(t.SOURCE, "targets", "dotnet", "common", "Sample.cs")) as f:
        sleep_line = next(i for i, s in enumerate(f, 1) if "Thread.Sleep(Timeout.Infinite)" in s)
    main = by_id.get(1, {})
    frames = b.oracle_stack_methods(core, tmp, main.get("tid"))
    t.check("System.Threading.Thread.Sleep(Int32)" in frames and "AsyncdacSamples.Sample.ParkForever()" in frames,
            f"oracle: the main thread sleeps in Sample.ParkForever: {frames}")
    t.check_eq(main.get("doing"), "running: it is in System.Threading.Thread.Sleep(Int32), called from "
               f"AsyncdacSamples.Sample.ParkForever() at Sample.cs:{sleep_line}", "the main thread: where it is")
    # The idle worker waits on the pool's semaphore; the finalizer has no managed frame (oracle's stacks).
    idle = [x for x in j["threads"] if x["doing"] == "idle: waiting for work"]
    t.check_eq(len(idle), 1, "one idle worker")
    for x in idle:
        t.check(any(m.startswith("System.Threading.LowLevelLifoSemaphore.") for m in b.oracle_stack_methods(core, tmp, x["tid"])),
                f"oracle: the idle worker {x['tid']} waits on the pool's semaphore")
    fin = [x for x in j["threads"] if "Finalizer" in x["kinds"]]
    t.check_eq([x["doing"] for x in fin], ["idle: waiting for objects to finalize"], "the finalizer")
    t.check_eq([b.oracle_stack_methods(core, tmp, x["tid"]) for x in fin], [[]], "oracle: the finalizer runs no managed code")
    out = b.run_lldb(b.lldb_target(core), ["async clrthreads"], "lldb: async clrthreads")
    t.check_eq(b.lldb_output(out, "async clrthreads"), text, "lldb-22: async clrthreads, as the CLI")


def crash(tmp):
    d = t.dotnet_env()
    app = os.path.join(d["DN_APPS"], "11", "Debug", "crash", "crash.dll")
    core = os.path.join(tmp, "crash.core")  # (the runtime's own dump at the crash: the oracle reads those)
    env = {"DOTNET_DbgEnableMiniDump": "1", "DOTNET_DbgMiniDumpType": "4", "DOTNET_DbgMiniDumpName": core}
    rc, out, err = t.run([d["DN_HOST"], d["DN_RUNTIME11"], app, "--mode", "unhandled"], timeout=120, env=env)
    if not t.check(rc != 0 and os.path.exists(core), f"crash: the sample crashed with a dump (rc {rc}): {err[-500:]}"):
        return
    j, text = common(core, tmp, "crash")
    # The sample's "crasher" threw it, at Validate's throw (the line from the source); the runtime has not
    # marked it unhandled when it writes its dump.
    with open(os.path.join(t.SOURCE, "targets", "dotnet", "crash", "Program.cs")) as f:
        throw_line = next(i for i, s in enumerate(f, 1) if "throw new InvalidOperationException" in s)
    thrown = [(x["name"], x["exception"]["type"], x["doing"]) for x in (j or {}).get("threads", []) if x["exception"]]
    t.check_eq(thrown, [("crasher", "System.InvalidOperationException",
                         f"running: it is in AsyncdacSamples.CrashApp.Validate(Int32) at Program.cs:{throw_line}")],
               "crash: the thread that threw, its exception and where it is")


def net10(tmp):
    """.NET 10 links its thread list through each Thread's LinkNext field (11.0.0 through the Thread):
    every thread, as the oracle (with the .NET 10 DAC) lists them."""
    d = b.dn()
    app = os.path.join(d["DN_APPS"], "10", "Debug", "locks", "locks.dll")
    proc, ready = t.start([d["DN_HOST"], d["DN_RUNTIME10"], app], timeout=120, env={"DOTNET_RuntimeAsync": "1"})
    try:
        core = b.make_core(proc.pid, os.path.join(tmp, "locks10.core"))
    finally:
        proc.kill()
        proc.wait()
    j = b.cli_json(["clrthreads", core], "clrthreads (.NET 10)") or {}
    theirs = b.oracle_core_json("threads", core, dac="DN_DAC10")["threads"]
    t.check_eq([(x["managed_id"], x["tid"] or 0, h(x["thread"]), x["state"], "Finalizer" in x["kinds"])
                for x in j.get("threads", [])],
               [(x["managed_id"], x["os_id"], h(x["address"]), x["state"], x["finalizer"]) for x in theirs],
               ".NET 10: each thread's ids, Thread, state and finalizer mark (oracle)")
    t.check_eq((j.get("counts") or {}).get("threads"), len(theirs), ".NET 10: the thread store's count")
    t.check_eq({x["locks_held"] for x in j.get("threads", [])}, {None},
               ".NET 10: the locks held are not known (no SyncBlock contract)")
    t.check(len(theirs) > 3, f".NET 10: the locks sample's threads ({len(theirs)})")


def locks(tmp):
    """The locks each thread holds (SOS's Lock Count): the locks sample's holders, as `locks` lists the
    locks held and the oracle the Monitors (ClrMD's sync blocks and thin locks, by owner)."""
    fields = {}
    core = b.sample_core("locks", "Debug", tmp, parked=True, fields=fields)
    j, text = common(core, tmp, "locks")
    if not j:
        return
    held = b.cli_json(["locks", core], "locks")["locks"]
    by_owner = {}
    for x in held:
        if x.get("owner"):
            by_owner[x["owner"]["managed_id"]] = by_owner.get(x["owner"]["managed_id"], 0) + 1
    t.check_eq({x["managed_id"]: x["locks_held"] for x in j["threads"]},
               {x["managed_id"]: by_owner.get(x["managed_id"], 0) for x in j["threads"]},
               "locks: each thread's count of locks held, as locks lists them")
    o = b.oracle_locks(core)
    monitors = {}
    for x in [y for y in o["sync_blocks"] if y["held"]] + o["thin_locks"]:
        monitors[x["owner_managed_id"]] = monitors.get(x["owner_managed_id"], 0) + 1
    mine = {}
    for x in held:
        if x.get("owner") and x["kind"] in ("monitor", "thin"):
            mine[x["owner"]["managed_id"]] = mine.get(x["owner"]["managed_id"], 0) + 1
    t.check_eq(mine, monitors, "locks: the Monitors each thread holds (oracle: sync blocks and thin locks by owner)")
    ids = {k: int(v) for k, v in fields.items() if k in ("holder", "nested", "scope", "ab", "ba", "signaller")}
    t.check_eq({k: next(x["locks_held"] for x in j["threads"] if x["managed_id"] == v) for k, v in ids.items()},
               {k: 1 for k in ids}, "locks: the holders (the sample's: a Monitor each, a thin lock entered twice, a Lock)")


def main():
    tmp = t.tmpdir()
    try:
        deadlock(tmp)
        locks(tmp)
        crash(tmp)
        net10(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
