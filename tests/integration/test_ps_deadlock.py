"""ps.deadlock: an await cycle printed as one line (view/pending_view.c adac_pending_cycle_text), on a
createdump core of targets/dotnet/deadlock: DeadA awaits s_b (the task of DeadB -> DeadBOuter), DeadB
awaits s_c (DeadC's task), DeadC awaits s_a (DeadA's task); Bystander awaits s_a too, outside the
cycle. Task addresses from the oracle (ClrMD: the statics s_a, s_b, s_c), lines from the source:
  ps           the cycle's stack ends in "  deadlock: <the line>"; --json: chains[].cycle and .deadlock
               on that stack only
  report       the findings are exactly "deadlock: <the line>" (Bystander and DeadC share s_a, but
               the stacks' innermost chain, DeadA, is one: nothing "shared"), and the deadlock below
And sync-over-async under a lock (async/wait_cycle.c): thread "guard" holds s_guard's Monitor and
waits synchronously (Task.Wait()) for s_guarded, GuardedTop's task, whose stack runs on a thread-pool
thread (GuardedTop -> GuardedLeaf resumed) that waits to enter s_guard. Every fact of the expected
line is the oracle's (ClrMD + Microsoft's DAC): s_guard's sync block and its holder, the pool thread's
blocking record (it enters that sync block's Lock) and its stack (GuardedLeaf), s_guarded's
m_continuationObject (a Task+SetOnInvokeMres) whose m_lock is the Lock of the Condition the guard
thread's blocking record waits on:
  ps           the running stack GuardedTop ends in "  deadlock: thread tid G (managed thread g) waits
               synchronously for task 0x<s_guarded> (...), whose stack runs on thread tid P (managed
               thread p), which waits for System.Object 0x<s_guard> (Monitor) held by thread tid G (...)";
               --json: .deadlock on it (cycle false)
  report       "deadlock: <that line>" instead of the "blocked:" and "lock:" findings it explains; "==
               Blocked threads": each of the two threads, then the other ("  then: ..."), then itself
               "again: a deadlock"
  bt --thread G  the task's stack, with the line
  bt --thread P  after "waiting for: <s_guard>, held by thread tid G", the same cycle from P: "deadlock:
               thread tid P (...) waits for System.Object 0x<s_guard> (Monitor) held by thread tid G
               (...), which waits synchronously for task 0x<s_guarded> (...), whose stack runs on
               thread tid P (...)"
  locks        the same "deadlock: <that line>" (its heap's stacks scanned: the guard thread waits on a
               task's Condition); --json: deadlocks[] [{guard thread, waits_for s_guarded, kind "task"},
               {pool thread, waits_for s_guard, kind "lock"}]
  patched      the guard thread's copies of its waiter zeroed in its stack (a copy of the core): the wait
               is found from its blocking record (sync_waits[].by_record, tid the guard thread's), and
               report's findings are the same
  lldb-22      `async ps` and `async report` of the core print the same lines
"""
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
import corecore  # noqa: E402
from btsamples import h  # noqa: E402

SRC = os.path.join(t.SOURCE, "targets", "dotnet", "deadlock", "Program.cs")
APP = "AsyncdacSamples.DeadlockApp"


WAYS = "Task.Wait(), .Result or GetAwaiter().GetResult()"


def guard_deadlock(core, tmp, ids):
    """The sync-over-async deadlock's line, from the oracle alone."""
    st = b.oracle_objects(core, tmp, statics=[f"{APP}::s_guard", f"{APP}::s_guarded"])["statics"]
    guard, task = h(st[f"{APP}::s_guard"]["address"]), h(st[f"{APP}::s_guarded"]["address"])
    o = b.oracle_locks(core)
    held = [x for x in o["sync_blocks"] if h(x["object"]) == guard and x["held"]]
    t.check_eq([x["owner_managed_id"] for x in held], [ids["guard"]], "oracle: thread guard holds s_guard's Monitor")
    gtid = held[0]["owner_os_id"] if held else 0
    recs = {x["managed_thread_id"]: (x["os_thread_id"], x["records"][0]) for x in o["blocking"] if x["records"]}
    ptid, prec = recs.get(ids["guardpool"], (0, {}))
    gt, grec = recs.get(ids["guard"], (0, {}))
    t.check_eq((gt, prec.get("type"), grec.get("type")), (gtid, "System.Threading.Lock", "System.Threading.Condition"),
               "oracle: the pool thread's innermost blocking record enters a Lock, the guard thread's waits on a Condition")
    objs = b.oracle_objects(core, tmp, addresses=[task], stacks=[ptid])
    mres = h(objs["objects"].get(task, {}).get("fields", {}).get("m_continuationObject"))
    fields = b.oracle_objects(core, tmp, addresses=[mres])["objects"].get(mres, {})
    t.check_eq((fields.get("type"), h(fields.get("fields", {}).get("m_lock"))),
               ("System.Threading.Tasks.Task+SetOnInvokeMres", h(grec.get("lock"))),
               "oracle: s_guarded's continuation is a Task+SetOnInvokeMres whose Lock the guard thread's Condition uses")
    frames = [f.get("method") or "" for f in objs["stacks"].get(str(ptid), [])]
    t.check(any(f.startswith(f"{APP}.GuardedLeaf()") for f in frames) and
            any(f.startswith("System.Threading.Lock.TryEnterSlow") for f in frames),
            f"oracle: the pool thread runs GuardedLeaf, in Lock.TryEnterSlow: {frames}")
    j = b.cli_json(["locks", core], "locks")
    lk = [x for x in (j["locks"] if j else []) if h(x["object"]) == guard]
    t.check_eq([h(x.get("lock")) for x in lk], [h(prec.get("lock"))], "oracle: the pool thread enters s_guard's Lock")
    g, p = f"thread tid {gtid} (managed thread {ids['guard']})", f"thread tid {ptid} (managed thread {ids['guardpool']})"
    workers = {x["os_thread_id"]: x["threadpool_worker"] for x in o["blocking"]}
    t.check_eq((workers.get(gtid), workers.get(ptid)), (False, True), "oracle: the pool thread is a thread-pool worker")
    pb = f"thread tid {ptid} (managed thread {ids['guardpool']}, thread-pool worker)"  # (as report's blocked threads)
    lock, sync = f"System.Object 0x{guard:016x} (Monitor)", f"task 0x{task:016x} ({WAYS})"
    pw, gw = f"waiting for: {lock}, held by {g}", f"waits synchronously for {sync}"
    blocked = {ptid: f"{pb}: {pw}\n  then: {g}: {gw}\n  then: its stack runs on {pb} again: a deadlock\n",
               gtid: f"{g}: {gw}\n  then: its stack runs on {pb}: {pw}\n  then: {g} again: a deadlock\n"}
    return (task, guard, f"{g} waits synchronously for {sync}, whose stack runs on {p}, which waits for {lock} held by {g}",
            f"{p} waits for {lock} held by {g}, which waits synchronously for {sync}, whose stack runs on {p}", gtid, ptid,
            "".join(blocked[k] for k in sorted(blocked)))


def main():
    tmp = t.tmpdir()
    try:
        fields = {}
        core = b.sample_core("deadlock", "Debug", tmp, parked=True, fields=fields)
        ids = {k: int(fields[k]) for k in ("guard", "guardpool")}
        names = [f"{APP}::s_{x}" for x in "abc"]
        st = b.oracle_objects(core, tmp, statics=names)["statics"]
        a, bb, c = (f"0x{h(st[n]['address']):016x}" for n in names)
        guarded, guard, threads, from_pool, gtid, ptid, blocked = guard_deadlock(core, tmp, ids)
        with open(SRC) as f:
            L = {m.group(1): i for i, line in enumerate(f, 1) for m in [re.search(r"// @await (\w+)", line)] if m}

        def at(m):
            return f"{APP}.{m}() at Program.cs:{L[m]}"
        cycle = (f"{at('DeadA')} awaits task {bb} of {at('DeadB')}, which awaits task {c} of {at('DeadC')}, "
                 f"which awaits task {a} of {at('DeadA')}")

        j = b.cli_json(["ps", core], "ps")
        chains = j["chains"] if j else []
        shapes = sorted(tuple(f["method"].split("(")[0].rsplit(".", 1)[-1] for f in ch["frames"]) for ch in chains)
        t.check_eq(shapes, [("DeadA", "Bystander"), ("DeadA", "DeadC", "DeadB", "DeadBOuter"), ("GuardedTop",)],
                   "ps: the stacks")
        t.check_eq(sorted((len(ch["frames"]), h(ch["task"]["address"]), bool(ch.get("running")), ch["cycle"],
                           ch.get("deadlock")) for ch in chains),
                   sorted([(1, guarded, True, False, threads), (2, h(chains[1]["task"]["address"]) if len(chains) > 1 else 0,
                                                                False, False, None),
                           (4, h(bb), False, True, cycle)]), "ps --json: cycle and deadlock")
        rc, out, err = b.cli(["ps", core])
        t.check_eq((rc, err), (0, ""), "ps: exit code and stderr")
        t.check_eq(out.count("deadlock: "), 2, f"ps: two deadlock lines:\n{out}")
        t.check(f"[state 0]\n  deadlock: {cycle}\n\n" in out, f"ps: the deadlock line ends its stack:\n{out}")
        t.check(re.search(rf"^chain #0: running on thread \d+ \(managed thread {ids['guardpool']}\), task 0x{guarded:016x} "
                          rf".*\n  running: 0x[0-9a-f]+ deadlock\.dll`AsyncdacSamples\.DeadlockApp\.GuardedLeaf\(\) \+ 0x[0-9a-f]+ at "
                          rf"Program\.cs:\d+ \(the method this chain resumed; bt shows what it calls\)\n"
                          rf"  async #0: .*GuardedTop\(\) \+ 0x[0-9a-f]+ at Program\.cs:\d+ \[state 0\]\n(  .*\n)*"
                          rf"  deadlock: {re.escape(threads)}\n\n", out, re.M) is not None,
                f"ps: the running stack GuardedTop ends in {threads!r}:\n{out}")
        rc, out, err = b.cli(["report", core])
        t.check_eq((rc, err), (0, ""), "report: exit code and stderr")
        t.check_eq(out.split("\n\n== Runtime")[0], f"== Findings\ndeadlock: {cycle}\ndeadlock: {threads}",
                   "report: findings")
        t.check_eq(out.split("\n== Blocked threads\n")[-1].split("\n\n== ")[0] + "\n", blocked,
                   "report: == Blocked threads, each with its wait chain round the deadlock")
        rc, out, err = b.cli(["bt", core, "--thread", str(gtid)])
        t.check_eq((rc, err), (0, ""), "bt --thread (guard): exit code and stderr")
        t.check(f"\n  deadlock: {threads}\n" in out, f"bt --thread {gtid}: the deadlock under the task's stack:\n{out}")
        rc, out, err = b.cli(["bt", core, "--thread", str(ptid)])
        t.check_eq((rc, err), (0, ""), "bt --thread (pool): exit code and stderr")
        t.check(re.search(rf"\n  waiting for: .*\n  deadlock: {re.escape(from_pool)}\n  async #0: .*GuardedTop", out) is not None,
                f"bt --thread {ptid}: the deadlock from the pool thread, after its waiting-for line:\n{out}")
        rc, out, err = b.cli(["locks", core])
        t.check_eq((rc, err), (0, ""), "locks: exit code and stderr")
        t.check_eq([x for x in out.splitlines() if x.startswith("deadlock: ")], [f"deadlock: {threads}"],
                   f"locks: the deadlock through the task, as report's:\n{out}")
        j = b.cli_json(["locks", core], "locks")
        t.check_eq(j["deadlocks"] if j else None,
                   [[{"tid": gtid, "managed_id": ids["guard"], "waits_for": f"0x{guarded:016x}", "kind": "task"},
                     {"tid": ptid, "managed_id": ids["guardpool"], "waits_for": f"0x{guard:016x}", "kind": "lock"}]],
                   "locks --json: the deadlock's steps, the guard thread's wait for s_guarded, the pool thread's for s_guard")
        # The guard thread's copies of its waiter (Task+SetOnInvokeMres) patched out of its stack in a copy of
        # the core, one slot at a time as ps finds them: no frame shows the wait any more, its blocking
        # record does (the Condition of the waiter's Lock), and the deadlock is the same.
        cut = os.path.join(tmp, "cut.core")
        shutil.copyfile(core, cut)
        cc = corecore.Core(cut)
        for _ in range(32):
            cj = b.cli_json(["ps", cut], "ps (waiter patched out)") or {}
            w = next((x for ch in cj.get("chains", []) for x in ch.get("sync_waits", []) if h(x["task"]) == guarded), {})
            if w.get("slot") is None or w.get("in_register"):
                break
            cc.write_u64(h(w["slot"]), 0)
        t.check_eq((w.get("tid"), w.get("managed_id"), w.get("slot"), w.get("by_record")), (gtid, ids["guard"], None, True),
                   f"ps --json, the waiter patched out of the guard thread's stack: the wait found by its record: {w}")
        rc, out, err = b.cli(["report", cut])
        t.check_eq(out.split("\n\n== Runtime")[0], f"== Findings\ndeadlock: {cycle}\ndeadlock: {threads}",
                   "report, the waiter patched out: the same findings")
        rc, out, err = t.lldb(["target create --core " + core, "async ps", "async report"])
        t.check(rc == 0 and f"\n  deadlock: {threads}\n" in out and f"\ndeadlock: {threads}\n" in out,
                f"lldb-22: async ps and async report print the deadlock:\n{out}{err}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
