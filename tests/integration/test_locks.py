"""locks: the locks held in a process (types/locks.c, runtime/sync_block.c), on the `locks` sample
(targets/dotnet/locks): thread "holder" holds lock (s_monitor) while it waits synchronously for the
LockedTop -> LockedLeaf chain, and two threads wait for s_monitor (so it has a sync block and a
System.Threading.Lock); thread "nested" entered lock (s_thin) twice, uncontended (a thin lock in the
Gate's header); thread "scope" holds the System.Threading.Lock s_lock (EnterScope), one thread waits;
threads "ab" and "ba" each hold one of two Gates and wait for the other's (a deadlock); the chain
ResumeTop -> LockedResume runs on a pool thread that waits for s_monitor; thread "pulse-waiter" is in
Monitor.Wait(s_signal), which nobody holds; thread "timed-waiter" in Monitor.Wait(s_held, 3600000 ms)
while thread "signaller" holds s_held; the chain PulseTop -> PulseResume runs on a pool thread in
Monitor.Wait(s_poolSignal); thread "sem-waiter" in s_sem.Wait() (a SemaphoreSlim: Monitor.Wait on its lock
object).
Checked against the sample's managed thread ids (READY), the oracle (ClrMD + Microsoft's DAC: the sync
block's and the thin lock's owners; the Lock's _owningThreadId; each thread's blocking records,
ThreadBlockingInfo.t_first through ClrMD's thread statics) and the threads' stacks:
  locks --json   six locks: s_monitor (entered 1, 3 waiting: the waiter threads and the pool thread), s_thin (thin, entered
                 2), s_lock (entered 1, 1 waiting: lock-waiter), s_a and s_b (each held by one of ab
                 and ba, waited for by the other), s_held (signaller); one deadlock: ab and ba; two
                 threads in Monitor.Wait (pulse-waiter on s_signal, timed-waiter on s_held, the pool
                 thread on s_poolSignal, sem-waiter on s_sem's lock object, named with s_sem), not the
                 holder (its Task.Wait() waits on a ManualResetEventSlim's Condition)
  locks          the lines, and the same text live (--pid, before the core) and in lldb-22 (async locks)
  bt             each waiting thread's "waiting for:" line and deadlock; "in Monitor.Wait:" lines;
                 under a waiting-for line in no deadlock, report's wait chain ("  then: ...")
  ps             the running chains' "waiting for:" and "in Monitor.Wait:" lines (text), waiting_for_lock
                 and monitor_wait (JSON)
  report --json  the same findings ({kind, text}) and blocked threads ({threads, waits_on, then})
  report         the holder's "blocked:" finding names the lock it holds; the deadlock; one "lock:"
                 finding per other lock threads wait for; "== Blocked threads": each waiting thread by
                 what it waits on (the lock, the Monitor.Wait, the holder's task), and what that waits
                 for in turn ("  then: ..."): the holder's task, suspended in LockedLeaf on s_gate's
                 task (the oracle's); ab and ba each other (a deadlock); s_lock's holder nothing
                 recorded: it is in Thread.Sleep, called from Sample.ParkForever at Sample.cs:L (the oracle's
                 stack of it, the line from the source); timed-waiter's Monitor.Wait: s_held's holder
                 (signaller), parked the same way; bt of each waiting thread: the same chain
  .NET 10        no SyncBlock contract: one line saying so, exit 1; report's blocked threads "not known"
                 (report --json: blocked_threads and stacks null, and why in its warnings)
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from btsamples import h  # noqa: E402


def net10(tmp):
    d = b.dn()
    app = os.path.join(d["DN_APPS"], "10", "Debug", "locks", "locks.dll")
    proc, ready = t.start([d["DN_HOST"], d["DN_RUNTIME10"], app], timeout=120, env={"DOTNET_RuntimeAsync": "1"})
    try:
        t.check("runtime=10.0" in ready, f"READY names the .NET 10 runtime: {ready}")
        rc, out, err = b.cli(["locks", "--pid", str(proc.pid)])
        t.check_eq((rc, out, err), (1, "", "asyncdac: error: the runtime has no SyncBlock contract: its locks cannot "
                                          "be read\n"), "locks --pid of a .NET 10 process")
        rc, out, err = b.cli(["report", "--pid", str(proc.pid)])
        section = out.split("\n== Blocked threads\n")[-1].split("\n\n== ")[0].rstrip("\n")
        t.check_eq((rc, section), (0, "not known: neither the heap (synchronous waits for tasks) nor the locks can be "
                                      "read"), "report --pid of a .NET 10 process: blocked threads not known")
        rj = b.cli_json(["report", "--pid", str(proc.pid)], "report --json (.NET 10)") or {}
        heap_error = next((x for x in rj.get("warnings", []) if x.startswith("the heap cannot be scanned: ")), None)
        t.check_eq((rj.get("blocked_threads", 0), rj.get("stacks", 0), bool(heap_error),
                    "the blocked threads are not known: neither the heap (synchronous waits for tasks) nor the locks "
                    "can be read" in rj.get("warnings", [])),
                   (None, None, True, True), f"report --json --pid of a .NET 10 process: {rj.get('warnings')}")
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
        ids = {k: int(s.fields[k]) for k in ("holder", "nested", "scope", "lockwaiter", "ab", "ba", "pool", "pulse",
                                             "timed", "signaller", "pulsepool", "semwaiter")}
        # s_monitor's waiters: the two waiter threads, and the pool thread running LockedResume.
        waiters = [int(x) for x in s.fields["waiters"].split(",")] + [ids["pool"]]
    finally:
        s.kill()
    try:
        j = b.cli_json(["locks", core], "locks")
        all_locks = j["locks"] if j else []
        by_owner = {x["owner"]["managed_id"]: x for x in all_locks}
        t.check_eq(sorted(by_owner), sorted([ids[k] for k in ("holder", "nested", "scope", "ab", "ba", "signaller")]),
                   f"locks --json: one lock held by each of holder, nested, scope, ab, ba and signaller: {j}")
        mon, thin, lk = by_owner.get(ids["holder"], {}), by_owner.get(ids["nested"], {}), by_owner.get(ids["scope"], {})
        sh = by_owner.get(ids["signaller"], {})
        la, lb = by_owner.get(ids["ab"], {}), by_owner.get(ids["ba"], {})
        tids = {x["owner"]["managed_id"]: x["owner"]["tid"] for x in all_locks}
        def waiting(x):
            return sorted(w["managed_id"] for w in x.get("waiting", []))
        t.check_eq((mon.get("kind"), mon.get("type"), mon.get("entered"), mon.get("waiters"), waiting(mon)),
                   ("monitor", "System.Object", 1, len(waiters), sorted(waiters)),
                   "the Monitor s_monitor: held once by thread holder, both waiter threads and the pool thread waiting")
        t.check(h(mon.get("lock")) != 0 and isinstance(mon.get("sync_index"), int) and mon["sync_index"] > 0,
                f"the Monitor has a sync block and a Lock: {mon}")
        t.check_eq((thin.get("kind"), thin.get("type"), thin.get("entered"), thin.get("waiters"), thin.get("sync_index"),
                    thin.get("lock"), waiting(thin)),
                   ("thin", "AsyncdacSamples.LocksApp+Gate", 2, None, None, None, []),
                   "the thin lock on s_thin: entered twice by thread nested, in the header")
        t.check_eq((lk.get("kind"), lk.get("type"), lk.get("entered"), lk.get("waiters"), waiting(lk)),
                   ("lock", "System.Threading.Lock", 1, 1, [ids["lockwaiter"]]),
                   "the System.Threading.Lock s_lock: held once by thread scope, thread lock-waiter waiting")
        t.check_eq([(x.get("kind"), x.get("type"), x.get("entered"), x.get("waiters"), waiting(x)) for x in (la, lb)],
                   [("monitor", "AsyncdacSamples.LocksApp+Gate", 1, 1, [ids["ba"]]),
                    ("monitor", "AsyncdacSamples.LocksApp+Gate", 1, 1, [ids["ab"]])],
                   "s_a held by ab and waited for by ba; s_b held by ba and waited for by ab")
        t.check_eq((sh.get("kind"), sh.get("type"), sh.get("entered"), sh.get("waiters"), waiting(sh)),
                   ("monitor", "AsyncdacSamples.LocksApp+Signal", 1, 0, []),
                   "s_held: held once by signaller (given a sync block by Monitor.Wait), nobody entering")
        t.check_eq(j and j["sync_entries"], 7, "seven sync table entries in use (s_monitor's, s_a's, s_b's, s_signal's, "
                   "s_held's, s_poolSignal's, s_sem's lock object's)")
        # Monitor.Wait: pulse-waiter on s_signal and the pool thread on s_poolSignal (not held), timed-waiter on
        # s_held (held by signaller).
        mw = (j or {}).get("monitor_waits", [])
        sig = next((m["object"] for m in mw if m["managed_id"] == ids["pulse"]), None)
        psig = next((m["object"] for m in mw if m["managed_id"] == ids["pulsepool"]), None)
        sem_obj = next((m["object"] for m in mw if m["managed_id"] == ids["semwaiter"]), None)
        sem = b.oracle_objects(core, tmp, statics=["AsyncdacSamples.LocksApp::s_sem"])["statics"].get(
            "AsyncdacSamples.LocksApp::s_sem", {})
        sem_addr = f"0x{h(sem['address']):016x}" if sem.get("address") else None
        t.check_eq([(m["object"], m["type"], m["managed_id"], m["held"], m["timeout_ms"], m["semaphore"]) for m in mw],
                   sorted([(sig, "AsyncdacSamples.LocksApp+Signal", ids["pulse"], False, None, None),
                           (psig, "AsyncdacSamples.LocksApp+Signal", ids["pulsepool"], False, None, None),
                           (sh.get("object"), "AsyncdacSamples.LocksApp+Signal", ids["timed"], True, 3600000, None),
                           (sem_obj, "System.Runtime.CompilerServices.StrongBox<Boolean>", ids["semwaiter"], False,
                            None, sem_addr)]),
                   "locks --json: monitor_waits: pulse-waiter on s_signal, the pool thread on s_poolSignal, "
                   "timed-waiter on s_held (3600000 ms), sem-waiter on s_sem's lock object (named with s_sem)")
        t.check_eq(h(sem.get("fields", {}).get("m_lockObjAndDisposed")), h(sem_obj),
                   f"oracle: s_sem's m_lockObjAndDisposed is the object sem-waiter waits on: {sem}")
        # One deadlock, from the thread whose wait comes first (by lock address, then thread).
        cycle = [(d["managed_id"], d["waits_for"], d["kind"]) for d in (j["deadlocks"][0] if j and j["deadlocks"] else [])]
        first = ids["ab"] if h(lb.get("object")) < h(la.get("object")) else ids["ba"]
        want_cycle = [(ids["ab"], lb.get("object"), "lock"), (ids["ba"], la.get("object"), "lock")]
        if first == ids["ba"]:
            want_cycle.reverse()
        t.check_eq((len(j["deadlocks"]) if j else None, cycle), (1, want_cycle), "locks --json: the deadlock of ab and ba")
        # The oracle: ClrMD's sync blocks and thin locks, and the Lock's fields.
        o = b.oracle_locks(core)
        held = sorted((h(x["object"]), x["owner_managed_id"], x["owner_os_id"], x["recursion"])
                      for x in o["sync_blocks"] if x["held"])
        t.check_eq(held, sorted((h(x.get("object")), x["owner"]["managed_id"], x["owner"]["tid"], 1)
                                for x in (mon, la, lb, sh)),
                   "oracle: the held sync blocks are s_monitor's, s_a's, s_b's and s_held's, with their holders (ClrMD "
                   "counts the entries)")
        t.check_eq(sorted(h(x["object"]) for x in o["sync_blocks"] if not x["held"]), sorted([h(sig), h(psig), h(sem_obj)]),
                   "oracle: the sync blocks not held are s_signal's, s_poolSignal's and s_sem's lock object's")
        # The oracle's blocking records (Microsoft's DAC resolves the thread-static): each waiting thread's
        # innermost record enters the Lock of what it waits for; each Monitor.Wait's is its Condition.
        first_rec = {x["managed_thread_id"]: x["records"][0] for x in o["blocking"] if x["records"]}
        enters = sorted((w["managed_id"], x["lock"] if x["kind"] == "monitor" else x["object"])
                        for x in all_locks for w in x.get("waiting", []))
        t.check_eq(sorted((m, r["lock"]) for m, r in first_rec.items() if r["type"] == "System.Threading.Lock"), enters,
                   "oracle: the threads whose innermost blocking record enters a Lock, and which, are the waiting ones")
        t.check_eq(sorted((m, r["object"], r["timeout_ms"]) for m, r in first_rec.items()
                          if r["type"] == "System.Threading.Condition"),
                   sorted([(ids["holder"], first_rec.get(ids["holder"], {}).get("object"), -1)] +
                          [(x["managed_id"], x["condition"], x["timeout_ms"] if x["timeout_ms"] is not None else -1)
                           for x in mw]),
                   "oracle: the threads waiting on a Condition: the four in Monitor.Wait (their Conditions and "
                   "timeouts) and the holder (a ManualResetEventSlim's, not listed)")
        t.check_eq([(h(x["object"]), x["owner_managed_id"], x["owner_os_id"], x["recursion"]) for x in o["thin_locks"]],
                   [(h(thin.get("object")), ids["nested"], thin.get("owner", {}).get("tid"), 1)],
                   "oracle: the one thin lock is s_thin's, held by thread nested (ClrMD counts the entries after the first)")
        fields = b.oracle_objects(core, tmp, addresses=[lk.get("object")])["objects"].get(h(lk.get("object")), {}).get("fields", {})
        t.check_eq((fields.get("_owningThreadId"), fields.get("_recursionCount")), (ids["scope"], 0),
                   f"oracle: the Lock's _owningThreadId and _recursionCount: {fields}")
        for who, method in (("scope", "Scope()"), ("lockwaiter", "LockWaiter()"), ("ab", "Crossed("), ("ba", "Crossed(")):
            tid = tids.get(ids[who]) or next((w["tid"] for x in all_locks for w in x.get("waiting", [])
                                              if w["managed_id"] == ids[who]), None)
            rc, bt, err = b.cli(["bt", core, "--thread", str(tid)])
            t.check(rc == 0 and f"AsyncdacSamples.LocksApp.{method}" in bt, f"bt --thread {tid}: thread {who} runs {method}:\n{bt}")
        # bt: a thread waiting for a lock says which, and the deadlock it is in.
        def waiting_for(x):
            d = (f"{x['type']} {x['object']} (Monitor)" if x["kind"] == "monitor" else
                 "System.Threading.Lock " + x["object"])
            return f"waiting for: {d}, held by thread tid {x['owner']['tid']} (managed thread {x['owner']['managed_id']})"
        for x in (mon, lk, la, lb):
            for w in x.get("waiting", []):
                rc, bt, err = b.cli(["bt", core, "--thread", str(w["tid"])])
                want_bt = f"  {waiting_for(x)}\n"
                t.check(rc == 0 and want_bt in bt, f"bt --thread {w['tid']}: {want_bt!r} in\n{bt}")
                t.check_eq(bt.count("  deadlock: "), 1 if x is la or x is lb else 0, f"bt --thread {w['tid']}: deadlock lines")
        # The text.
        idle = {sig: "AsyncdacSamples.LocksApp+Signal (Monitor)", psig: "AsyncdacSamples.LocksApp+Signal (Monitor)",
                sem_obj: f"System.Runtime.CompilerServices.StrongBox<Boolean> (Monitor of System.Threading.SemaphoreSlim "
                         f"{sem_addr})"}
        def in_wait(obj):
            return "".join(f"  in Monitor.Wait: thread tid {m['tid']} (managed thread {m['managed_id']})" +
                           (f", timeout {m['timeout_ms']} ms" if m["timeout_ms"] is not None else "") + "\n"
                           for m in mw if m["object"] == obj)
        def line(x, what):
            who = f"thread tid {x['owner']['tid']} (managed thread {x['owner']['managed_id']})"
            times = "once" if x["entered"] == 1 else f"{x['entered']} times"
            wait = f"; {x['waiters']} thread{'s' if x['waiters'] != 1 else ''} waiting" if x["waiters"] else ""
            wait += "; 1 thread in Monitor.Wait" if x is sh else ""
            return (f"lock {x['object']} {what}: held by {who}, entered {times}{wait}\n" +
                    "".join(f"  waiting: thread tid {w['tid']} (managed thread {w['managed_id']})\n" for w in x["waiting"]) +
                    in_wait(x["object"]))
        what = {id(mon): "System.Object (Monitor)", id(thin): "AsyncdacSamples.LocksApp+Gate (Monitor, thin lock)",
                id(lk): "System.Threading.Lock", id(la): "AsyncdacSamples.LocksApp+Gate (Monitor)",
                id(lb): "AsyncdacSamples.LocksApp+Gate (Monitor)", id(sh): "AsyncdacSamples.LocksApp+Signal (Monitor)"}
        desc = {id(la): f"AsyncdacSamples.LocksApp+Gate {la.get('object')} (Monitor)",
                id(lb): f"AsyncdacSamples.LocksApp+Gate {lb.get('object')} (Monitor)"}
        def holder(x):
            return f"thread tid {x['owner']['tid']} (managed thread {x['owner']['managed_id']})"
        # ab waits for s_b (held by ba), ba for s_a (held by ab); the line starts from the first wait.
        steps = [(la, lb), (lb, la)] if first == ids["ab"] else [(lb, la), (la, lb)]
        deadlock = (f"{holder(steps[0][0])} waits for {desc[id(steps[0][1])]} held by {holder(steps[0][1])}, which waits "
                    f"for {desc[id(steps[1][1])]} held by {holder(steps[1][1])}")
        want = ("".join(line(x, what[id(x)]) for x in sorted((mon, thin, lk, la, lb, sh), key=lambda x: h(x.get("object")))) +
                "".join(f"lock {o} {idle[o]}: not held; 1 thread in Monitor.Wait\n" + in_wait(o) for o in sorted(idle, key=h)) +
                f"deadlock: {deadlock}\n\n6 locks held; 4 threads in Monitor.Wait; sync table: 7 entries in use.\n")
        # bt: a thread in Monitor.Wait says on what, and who holds it; the holder's Task.Wait() is none.
        def in_monitor_wait(m):
            on = (f"{m['object']} {idle[m['object']].split(' ', 1)[1]}" if m["object"] in idle else
                  f"{m['object']} (Monitor)")
            return (f"in Monitor.Wait: waiting for a pulse on {m['type']} {on}, " +
                    (f"held by {holder(sh)}, timeout 3600000 ms" if m["held"] else "which no thread holds"))
        for m in mw:
            rc, bt, err = b.cli(["bt", core, "--thread", str(m["tid"])])
            want_bt = f"  {in_monitor_wait(m)}\n"
            t.check(rc == 0 and want_bt in bt, f"bt --thread {m['tid']}: {want_bt!r} in\n{bt}")
        rc, bt, err = b.cli(["bt", core, "--thread", str(mon.get("owner", {}).get("tid"))])
        t.check(rc == 0 and "Monitor.Wait" not in bt and "  waiting for: " not in bt and "  blocked on: " in bt,
                f"bt of the holder (Task.Wait()): blocked on its task, in no Monitor.Wait:\n{bt}")
        rc, bt, err = b.cli(["bt", core, "--thread", str(la["waiting"][0]["tid"] if la.get("waiting") else 0)])
        t.check(f"  deadlock: {deadlock}\n" in bt, f"bt of a deadlocked thread: the deadlock line:\n{bt}")
        rc, text, err = b.cli(["locks", core])
        t.check_eq((rc, text, err), (0, want, ""), "locks: the text")
        t.check_eq(live, text, "locks --pid (before the core) prints what the core's locks prints")
        rc, out, err = t.lldb(["target create --core " + core, "async locks"])
        t.check(rc == 0 and want in out, f"lldb-22: async locks prints the CLI's text:\n{out}{err}")
        # ... and bt async names each waiting thread's lock, as the CLI's bt does.
        rc, out, err = t.lldb(["target create --core " + core, "bt async all"])
        nwaits = sum(len(x.get("waiting", [])) for x in all_locks)
        t.check(rc == 0 and out.count("  waiting for: ") == nwaits and out.count(f"  deadlock: {deadlock}\n") == 2 and
                out.count("  in Monitor.Wait: waiting for a pulse on ") == 4,
                f"lldb-22: bt async all: {nwaits} 'waiting for:' lines, the deadlock under both of its threads, four "
                f"'in Monitor.Wait:' lines:\n"
                f"{out[-3000:]}{err}")
        # report: the holder blocked on a task while it holds s_monitor, and the locks threads wait for.
        ps = b.cli_json(["ps", core], "ps")
        waits = [w for ch in (ps or {}).get("chains", []) for w in ch.get("sync_waits") or []]
        t.check_eq([(w["managed_id"], w["tid"]) for w in waits], [(ids["holder"], mon.get("owner", {}).get("tid"))],
                   "ps: thread holder waits synchronously for the LockedTop chain")
        # ps: the running chain ResumeTop (LockedResume blocked in lock (s_monitor) on a pool thread).
        running = [ch for ch in (ps or {}).get("chains", []) if ch.get("running")]
        ptid = next((w["tid"] for w in mon.get("waiting", []) if w["managed_id"] == ids["pool"]), None)
        pw = next((m for m in mw if m["managed_id"] == ids["pulsepool"]), {})
        t.check_eq(sorted(((ch["running"].get("tid"), (ch["running"].get("resumed") or {}).get("method"),
                            ch["frames"][0]["method"], ch.get("waiting_for_lock"),
                            ch.get("monitor_wait")) for ch in running), key=str),
                   sorted([(ptid, "AsyncdacSamples.LocksApp.LockedResume()", "AsyncdacSamples.LocksApp.ResumeTop()",
                            {"object": mon.get("object"), "type": "System.Object", "owner": mon.get("owner")}, None),
                           (pw.get("tid"), "AsyncdacSamples.LocksApp.PulseResume()", "AsyncdacSamples.LocksApp.PulseTop()",
                            None,
                            {"object": psig, "type": "AsyncdacSamples.LocksApp+Signal", "condition": pw.get("condition"),
                             "semaphore": None, "owner": None, "timeout_ms": None})], key=str),
                   "ps --json: the running chains ResumeTop (LockedResume resumed), its thread waiting for s_monitor, and "
                   "PulseTop (PulseResume resumed), its thread in Monitor.Wait on s_poolSignal")
        rc, pstext, err = b.cli(["ps", core])
        resumed = {ch["running"]["resumed"]["method"]: ch["running"]["resumed"] for ch in running
                   if ch["running"].get("resumed")}

        def running_line(m):
            r = resumed.get(f"AsyncdacSamples.LocksApp.{m}()") or {}
            return (f"  running: {r.get('pc')} locks.dll`AsyncdacSamples.LocksApp.{m}() + 0x{r.get('offset') or 0:x} at "
                    f"Program.cs:{r.get('line')} (the method this chain resumed; bt shows what it calls)\n")
        want_ps = f"  waiting for: System.Object {mon.get('object')} (Monitor), held by {holder(mon)}\n"
        want_pulse = (f"  in Monitor.Wait: waiting for a pulse on AsyncdacSamples.LocksApp+Signal {psig} "
                      f"(Monitor), which no thread holds\n")
        t.check(rc == 0 and want_ps in pstext and pstext.count("  waiting for: ") == 1 and want_pulse in pstext and
                pstext.count("  in Monitor.Wait: ") == 1 and running_line("LockedResume") in pstext and
                running_line("PulseResume") in pstext,
                f"ps: the running chains' lock wait and Monitor.Wait:\n{pstext}")
        rc, report, err = b.cli(["report", core])
        t.check_eq((rc, err), (0, ""), "report: exit code and stderr")
        findings = report.split("\n== Runtime")[0].splitlines()[1:]
        htid = mon.get("owner", {}).get("tid")
        t.check_eq(findings, [
            f"blocked: thread tid {htid} (managed thread {ids['holder']}) waits synchronously for task "
            f"{waits[0]['task'] if waits else '?'} (Task.Wait(), .Result or GetAwaiter().GetResult()) while it holds "
            f"System.Object {mon.get('object')} (Monitor): see `bt --thread {htid}`",
            f"deadlock: {deadlock}",
            f"lock: System.Object {mon.get('object')} (Monitor) is held by {holder(mon)}, and 3 threads wait for it: "
            f"see `locks`",
            f"lock: System.Threading.Lock {lk.get('object')} is held by {holder(lk)}, and 1 thread waits for it: "
            f"see `locks`"], "report: the findings")
        # ... and its blocked threads: one line per thing waited on, the most threads first.
        blocked = {}
        for x in all_locks:
            for w in x.get("waiting", []):
                blocked.setdefault(waiting_for(x), []).append((w["tid"], w["managed_id"]))
        for w in waits:
            blocked.setdefault(f"waits synchronously for task {w['task']} (Task.Wait(), .Result or "
                               f"GetAwaiter().GetResult())", []).append((w["tid"], w["managed_id"]))
        for m in mw:
            blocked.setdefault(in_monitor_wait(m), []).append((m["tid"], m["managed_id"]))
        # Each line's wait chain: s_monitor's holder waits for LockedTop's task, suspended in LockedLeaf on
        # s_gate's task (the oracle's); ab and ba wait for each other; scope (s_lock's holder) waits for nothing.
        gate = b.oracle_objects(core, tmp, statics=["AsyncdacSamples.LocksApp::s_gate"])["statics"].get(
            "AsyncdacSamples.LocksApp::s_gate", {}).get("address")
        gate_task = b.oracle_objects(core, tmp, addresses=[gate])["objects"].get(h(gate), {}).get("fields", {}).get("_task")
        top = next((ch for ch in (ps or {}).get("chains", []) if ch["frames"][-1]["method"].endswith("LockedTop()")), {})
        with open(os.path.join(t.SOURCE, "targets", "dotnet", "locks", "Program.cs")) as f:
            leaf_line = next(i for i, s in enumerate(f, 1) if "// @await LockedLeaf" in s)
        # scope (s_lock's holder) sleeps in Sample.ParkForever: where it is, from the oracle's stack of it (the
        # CoreLib method the sample's code called, then that code) and the line from the source.
        # (And signaller, s_held's holder, which timed-waiter waits on for a pulse: the same.)
        with open(os.path.join(t.SOURCE, "targets", "dotnet", "common", "Sample.cs")) as f:
            sleep_line = next(i for i, s in enumerate(f, 1) if "Thread.Sleep(Timeout.Infinite)" in s)

        def parked(x, who):
            tid = x.get("owner", {}).get("tid")
            frames = [f["method"] for f in b.oracle_objects(core, tmp, stacks=[tid])["stacks"].get(str(tid), [])
                      if f.get("method")]
            app = next((i for i, m in enumerate(frames) if m.startswith("AsyncdacSamples.")), 0)
            t.check_eq(frames[app - 1:app + 1] if app else frames,
                       ["System.Threading.Thread.Sleep(Int32)", "AsyncdacSamples.Sample.ParkForever()"],
                       f"oracle: {who} sleeps: Thread.Sleep called from Sample.ParkForever")
            where = (f"{frames[app - 1] if app else '?'}, called from {frames[app] if app else '?'} "
                     f"at Sample.cs:{sleep_line}")
            return f"  then: {holder(x)}: no wait recorded: it is in {where}: see `bt --thread {tid}`\n"
        timed = next((m for m in mw if m["held"]), {})
        task_wait = waits[0]["task"] if waits else "?"
        suspended = (f"  then: task {task_wait} is suspended: chain #{top.get('index')}, AsyncdacSamples.LocksApp.LockedLeaf() "
                     f"at Program.cs:{leaf_line}, awaiting 0x{h(gate_task):016x} System.Threading.Tasks.Task<Int32> "
                     f"[WaitingForActivation] (never completed: a promise, such as a TaskCompletionSource's task)\n")
        holder_wait = f"waits synchronously for task {task_wait} (Task.Wait(), .Result or GetAwaiter().GetResult())"
        then = {waiting_for(mon): f"  then: {holder(mon)}: {holder_wait}\n" + suspended, holder_wait: suspended,
                waiting_for(la): f"  then: {holder(la)}: {waiting_for(lb)}\n  then: {holder(lb)} again: a deadlock\n",
                waiting_for(lb): f"  then: {holder(lb)}: {waiting_for(la)}\n  then: {holder(la)} again: a deadlock\n",
                waiting_for(lk): parked(lk, "s_lock's holder"),
                in_monitor_wait(timed): parked(sh, "s_held's holder")}
        # bt of a thread waiting for a lock: the same chain under its waiting-for line, where no deadlock
        # line says it (ab and ba: their deadlock line, no chain).
        for x in (mon, lk, la, lb):
            for w in x.get("waiting", []):
                rc, bt, err = b.cli(["bt", core, "--thread", str(w["tid"])])
                chain = "".join(line + "\n" for line in bt.splitlines() if line.startswith("  then: "))
                t.check_eq((rc, chain), (0, "" if x is la or x is lb else then[waiting_for(x)]),
                           f"bt --thread {w['tid']}: the wait chain of {x['object']}'s waiter")
                t.check(x is la or x is lb or f"  {waiting_for(x)}\n{then[waiting_for(x)]}" in bt,
                        f"bt --thread {w['tid']}: the chain right under its waiting-for line:\n{bt}")
        # ... and of a thread in Monitor.Wait: the holder of the Monitor, when it is held (timed-waiter).
        for m in mw:
            rc, bt, err = b.cli(["bt", core, "--thread", str(m["tid"])])
            chain = "".join(line + "\n" for line in bt.splitlines() if line.startswith("  then: "))
            want_chain = then[in_monitor_wait(m)] if m["held"] else ""
            t.check_eq((rc, chain), (0, want_chain), f"bt --thread {m['tid']}: the wait chain of a Monitor.Wait")
            t.check(f"  {in_monitor_wait(m)}\n{want_chain}" in bt,
                    f"bt --thread {m['tid']}: the chain right under its Monitor.Wait line:\n{bt}")
        # Thread-pool workers (TS_TPWorkerThread in ClrMD's thread state): the pool threads of ResumeTop and
        # PulseTop.
        pool = {x["os_thread_id"] for x in o["blocking"] if x["threadpool_worker"]}
        t.check_eq(sorted(pool & {x[0] for ts in blocked.values() for x in ts}),
                   sorted([ptid, pw.get("tid")]), "oracle: the blocked thread-pool workers are the two pool threads")
        def workers(ts):
            n = sum(x in pool for x, _ in ts)
            return "" if not n else "; thread-pool workers" if n == len(ts) else f"; {n} thread-pool worker{'s' * (n > 1)}"
        want_blocked = ""
        for text, ts in sorted(blocked.items(), key=lambda kv: (-len(kv[1]), min(kv[1]))):
            ts.sort()
            want_blocked += (f"thread tid {ts[0][0]} (managed thread {ts[0][1]}"
                             f"{', thread-pool worker' if ts[0][0] in pool else ''}): {text}\n" if len(ts) == 1 else
                             f"{len(ts)} threads (tid {', '.join(str(x) for x, _ in ts)}{workers(ts)}): {text}\n") + \
                then.get(text, "")
        section = report.split("\n== Blocked threads\n")[-1].split("\n\n== ")[0] + "\n"
        t.check_eq(section, want_blocked, "report: == Blocked threads")
        # report --json: the same findings, and the same blocked threads with their chains.
        rj = b.cli_json(["report", core], "report") or {}
        t.check_eq([f"{x['kind']}: {x['text']}" for x in rj.get("findings", [])], findings, "report --json: findings")
        from_json = ""
        for g in rj.get("blocked_threads") or []:
            ts = g["threads"]
            workers_json = sum(x["threadpool_worker"] for x in ts)
            mark = ("" if not workers_json else "; thread-pool workers" if workers_json == len(ts) else
                    f"; {workers_json} thread-pool worker{'s' * (workers_json > 1)}")
            from_json += (f"thread tid {ts[0]['tid']} (managed thread {ts[0]['managed_id']}"
                          f"{', thread-pool worker' if ts[0]['threadpool_worker'] else ''}): {g['waits_on']}\n"
                          if len(ts) == 1 else
                          f"{len(ts)} threads (tid {', '.join(str(x['tid']) for x in ts)}{mark}): {g['waits_on']}\n")
            from_json += "".join(f"  then: {x}\n" for x in g["then"])
        t.check_eq(from_json, want_blocked, "report --json: blocked_threads (threads, waits_on, then) as the text's")
        net10(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
