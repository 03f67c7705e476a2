"""locks: the locks held in a process (types/locks.c, runtime/sync_block.c), on the `locks` sample
(targets/dotnet/locks): thread "holder" holds lock (s_monitor) while it waits synchronously for the
LockedTop -> LockedLeaf chain, and two threads wait for s_monitor (so it has a sync block and a
System.Threading.Lock); thread "nested" entered lock (s_thin) twice, uncontended (a thin lock in the
Gate's header); thread "scope" holds the System.Threading.Lock s_lock (EnterScope), one thread waits.
Checked against the sample's managed thread ids (READY), the oracle (ClrMD + Microsoft's DAC: the sync
block's and the thin lock's owners; the Lock's _owningThreadId) and the threads' stacks:
  locks --json   three locks: monitor (entered 1, 2 waiting), thin (entered 2), lock (entered 1, 1 waiting)
  locks          the lines, and the same text live (--pid, before the core) and in lldb-22 (async locks)
  report         the holder's "blocked:" finding names the lock it holds; one "lock:" finding per lock
                 threads wait for
  .NET 10        no SyncBlock contract: one line saying so, exit 1
"""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from btsamples import h  # noqa: E402


def oracle_locks(core):
    d = b.dn()
    rc, out, err = t.run(["dotnet", d["DN_ORACLE"], "locks", core, "--dac", d["DN_DAC11"]], timeout=600,
                         env={"DOTNET_CLI_TELEMETRY_OPTOUT": "1", "DOTNET_NOLOGO": "1"})
    if rc != 0:
        raise SystemExit(f"FAIL: oracle locks on {core} ({rc}): {err.strip()[-2000:]}")
    return json.loads(out)


def net10(tmp):
    d = b.dn()
    app = os.path.join(d["DN_APPS"], "10", "Debug", "locks", "locks.dll")
    proc, ready = t.start([d["DN_HOST"], d["DN_RUNTIME10"], app], timeout=120, env={"DOTNET_RuntimeAsync": "1"})
    try:
        t.check("runtime=10.0" in ready, f"READY names the .NET 10 runtime: {ready}")
        rc, out, err = b.cli(["locks", "--pid", str(proc.pid)])
        t.check_eq((rc, out, err), (1, "", "asyncdac: error: the runtime has no SyncBlock contract: its locks cannot "
                                          "be read\n"), "locks --pid of a .NET 10 process")
    finally:
        proc.kill()
        proc.wait()


def main():
    tmp = t.tmpdir()
    s = b.sample("locks", "Debug")
    try:
        b.wait_parked(s.pid, s.pid)
        rc, live, err = b.cli(["locks", "--pid", str(s.pid)])
        t.check_eq((rc, err), (0, ""), "locks --pid: exit code and stderr")
        core = b.make_core(s.pid, os.path.join(tmp, "locks.core"))
        ids = {k: int(s.fields[k]) for k in ("holder", "nested", "scope", "lockwaiter")}
        waiters = [int(x) for x in s.fields["waiters"].split(",")]
    finally:
        s.kill()
    try:
        j = b.cli_json(["locks", core], "locks")
        locks = {x["kind"]: x for x in j["locks"]} if j else {}
        t.check_eq(sorted(locks), ["lock", "monitor", "thin"], f"locks --json: one lock of each kind: {j}")
        mon, thin, lk = locks.get("monitor", {}), locks.get("thin", {}), locks.get("lock", {})
        t.check_eq((mon.get("type"), mon.get("owner", {}).get("managed_id"), mon.get("entered"), mon.get("waiters")),
                   ("System.Object", ids["holder"], 1, len(waiters)),
                   "the Monitor s_monitor: held once by thread holder, both waiter threads waiting")
        t.check(h(mon.get("lock")) != 0 and isinstance(mon.get("sync_index"), int) and mon["sync_index"] > 0,
                f"the Monitor has a sync block and a Lock: {mon}")
        t.check_eq((thin.get("type"), thin.get("owner", {}).get("managed_id"), thin.get("entered"), thin.get("waiters"),
                    thin.get("sync_index"), thin.get("lock")),
                   ("AsyncdacSamples.LocksApp+Gate", ids["nested"], 2, None, None, None),
                   "the thin lock on s_thin: entered twice by thread nested, in the header")
        t.check_eq((lk.get("type"), lk.get("owner", {}).get("managed_id"), lk.get("entered"), lk.get("waiters")),
                   ("System.Threading.Lock", ids["scope"], 1, 1),
                   "the System.Threading.Lock s_lock: held once by thread scope, thread lock-waiter waiting")
        t.check_eq(j and j["sync_entries"], 1, "one sync table entry in use (s_monitor's)")
        # The oracle: ClrMD's sync blocks and thin locks, and the Lock's fields.
        o = oracle_locks(core)
        held = [x for x in o["sync_blocks"] if x["held"]]
        t.check_eq([(h(x["object"]), x["owner_managed_id"], x["owner_os_id"], x["recursion"]) for x in held],
                   [(h(mon.get("object")), ids["holder"], mon.get("owner", {}).get("tid"), 1)],
                   "oracle: the one held sync block is s_monitor's, held by thread holder (ClrMD counts the entries)")
        t.check_eq([(h(x["object"]), x["owner_managed_id"], x["owner_os_id"], x["recursion"]) for x in o["thin_locks"]],
                   [(h(thin.get("object")), ids["nested"], thin.get("owner", {}).get("tid"), 1)],
                   "oracle: the one thin lock is s_thin's, held by thread nested (ClrMD counts the entries after the first)")
        fields = b.oracle_objects(core, tmp, addresses=[lk.get("object")])["objects"].get(h(lk.get("object")), {}).get("fields", {})
        t.check_eq((fields.get("_owningThreadId"), fields.get("_recursionCount")), (ids["scope"], 0),
                   f"oracle: the Lock's _owningThreadId and _recursionCount: {fields}")
        tid = lk.get("owner", {}).get("tid")
        rc, bt, err = b.cli(["bt", core, "--thread", str(tid)])
        t.check(rc == 0 and "AsyncdacSamples.LocksApp.Scope()" in bt, f"bt --thread {tid}: the Lock's holder runs Scope:\n{bt}")
        # The text.
        def line(x, what):
            who = f"thread tid {x['owner']['tid']} (managed thread {x['owner']['managed_id']})"
            times = "once" if x["entered"] == 1 else f"{x['entered']} times"
            wait = f"; {x['waiters']} thread{'s' if x['waiters'] != 1 else ''} waiting" if x["waiters"] else ""
            return f"lock {x['object']} {what}: held by {who}, entered {times}{wait}"
        want = "\n".join(sorted([line(mon, "System.Object (Monitor)"),
                                 line(thin, "AsyncdacSamples.LocksApp+Gate (Monitor, thin lock)"),
                                 line(lk, "System.Threading.Lock")])) + "\n\n3 locks held; sync table: 1 entry in use.\n"
        rc, text, err = b.cli(["locks", core])
        t.check_eq((rc, text, err), (0, want, ""), "locks: the text")
        t.check_eq(live, text, "locks --pid (before the core) prints what the core's locks prints")
        rc, out, err = t.lldb(["target create --core " + core, "async locks"])
        t.check(rc == 0 and want in out, f"lldb-22: async locks prints the CLI's text:\n{out}{err}")
        # report: the holder blocked on a task while it holds s_monitor, and the locks threads wait for.
        ps = b.cli_json(["ps", core], "ps")
        waits = [w for ch in (ps or {}).get("chains", []) for w in ch.get("sync_waits") or []]
        t.check_eq([(w["managed_id"], w["tid"]) for w in waits], [(ids["holder"], mon.get("owner", {}).get("tid"))],
                   "ps: thread holder waits synchronously for the LockedTop chain")
        rc, report, err = b.cli(["report", core])
        t.check_eq((rc, err), (0, ""), "report: exit code and stderr")
        findings = report.split("\n== Runtime")[0].splitlines()[1:]
        htid = mon.get("owner", {}).get("tid")
        t.check_eq(findings, [
            f"blocked: thread tid {htid} (managed thread {ids['holder']}) waits synchronously for task "
            f"{waits[0]['task'] if waits else '?'} (Task.Wait(), .Result or GetAwaiter().GetResult()) while it holds "
            f"System.Object {mon.get('object')} (Monitor): see `bt --thread {htid}`",
            f"lock: System.Object {mon.get('object')} (Monitor) is held by thread tid {htid} (managed thread "
            f"{ids['holder']}), and 2 threads wait for it: see `locks`",
            f"lock: System.Threading.Lock {lk.get('object')} is held by thread tid {tid} (managed thread {ids['scope']}), "
            f"and 1 thread waits for it: see `locks`"], "report: the findings")
        net10(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
