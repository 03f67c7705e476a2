"""ps.syncwait: threads blocked synchronously on async chains (sync-over-async, async/sync_wait.c), on
a createdump core of targets/dotnet/syncwait: SyncTop(1).Wait(), SyncTop(2).Result and
SyncTop(3).GetAwaiter().GetResult() each block a thread; SyncTop(4) is awaited by nobody; RunWaitTop(6)
-> RunWaitLeaf, resumed on a thread-pool thread, blocks there in SyncTop(5).Result; RunEventTop(7) ->
RunEventLeaf, on another, in s_event.Wait() (a ManualResetEventSlim never set). Checked
against the oracle (ClrMD: each task's m_continuationObject is a Task+SetOnInvokeMres; the stack of
the thread asyncdac names runs BlockWait / BlockResult / BlockGetResult through
Task.SpinThenBlockingWait) and the core's bytes (the stack slot holds the waiter):
  ps --json    chains[].sync_waits {task, waiter, tid, managed_id, slot, in_register} on chains 1-3 and 5
               only; the running chain RunWaitTop's thread_sync_wait {task, waiter}: SyncTop(5)'s;
               RunEventTop's event_wait {event: s_event, condition, timeout_ms: null}, its Condition the
               one the thread's blocking record waits on, whose Lock is s_event's m_lock (oracle)
  ps (running) "  waiting synchronously for: task 0x<SyncTop(5)'s> (...)" under RunWaitTop, "  in
               ManualResetEventSlim.Wait on System.Threading.ManualResetEventSlim 0x<s_event>" under
               RunEventTop
  ps           "  blocked on: task 0x.. is waited for synchronously (...) by thread tid T (managed
               thread M): its Task+SetOnInvokeMres 0x.. is at 0x.. in that thread's stack"
  bt --thread  the thread's frames, then "  blocked on: task 0x.., waited for synchronously (...): its
               Task+SetOnInvokeMres 0x.. is at 0x.. in this thread's stack; the task's stacks:" and
               the chain SyncLeaf -> SyncTop, numbered as ps numbers it (chain #N, not renumbered)
  report       one "blocked: thread tid T (managed thread M) waits synchronously for task 0x.." per wait;
               "== Blocked threads": each waiting thread, then where its task is suspended: "  then: task
               0x.. is suspended: chain #N, ...SyncLeaf(Int32) at Program.cs:L, awaiting 0x<s_gate's task,
               the oracle's> System.Threading.Tasks.Task<Int32> [WaitingForActivation] (never completed: ...)"
  task ids     SyncTop(4)'s Task.Id was read (READY id4=N): "(Task.Id N)" on its header, task.id in JSON;
               the others have none
The main thread polled m_continuationObject by reflection before READY, so its stack keeps a stale
copy of a waiter: it has no Task.SpinThenBlockingWait frame and must not be named.
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

WAYS = "Task.Wait(), .Result or GetAwaiter().GetResult()"
BLOCKER = {1: "BlockWait", 2: "BlockResult", 3: "BlockGetResult", 5: "RunWaitLeaf"}
WAITED = (1, 2, 3, 5)


def main():
    tmp = t.tmpdir()
    s = b.sample("syncwait", "Debug")
    try:
        b.wait_parked(s.pid, s.pid)
        core = b.make_core(s.pid, os.path.join(tmp, "syncwait.core"))
        pid, id4 = s.pid, int(s.fields["id4"])
    finally:
        s.kill()
    try:
        j = b.cli_json(["ps", core, "--locals"], "ps --locals")
        by_id = {}
        for ch in j["chains"] if j else []:
            top = ch["frames"][-1]
            ident = next(v["value"] for v in top["locals"] if v["name"] == "id")
            by_id[ident] = ch
        t.check_eq(sorted(by_id), [1, 2, 3, 4, 5, 6, 7], "ps: the five SyncTop chains, RunWaitTop and RunEventTop, by their "
                                                         "id argument")
        tasks = {i: h(ch["task"]["address"]) for i, ch in by_id.items()}
        objs = b.oracle_objects(core, tmp, addresses=list(tasks.values()))["objects"]
        mres = {i: h(objs[a]["fields"].get("m_continuationObject")) for i, a in tasks.items()}
        t.check_eq((mres.get(4), mres.get(6), mres.get(7)), (0, 0, 0),
                   "oracle: SyncTop(4)'s, RunWaitTop's and RunEventTop's tasks have no continuation")
        wobjs = b.oracle_objects(core, tmp, addresses=[mres[i] for i in WAITED if i in mres])["objects"]
        t.check_eq([wobjs.get(mres.get(i), {}).get("type") for i in WAITED], ["System.Threading.Tasks.Task+SetOnInvokeMres"] * 4,
                   "oracle: the waited tasks' continuations are Task+SetOnInvokeMres")
        waits = {i: by_id[i].get("sync_waits") for i in by_id}
        t.check_eq((waits.get(4), waits.get(6), waits.get(7)), (None, None, None),
                   "ps --json: SyncTop(4), RunWaitTop and RunEventTop are waited for by no thread")
        # Task ids: only SyncTop(4)'s Task.Id was read (a blocking wait assigns none).
        t.check_eq({i: ch["task"].get("id") for i, ch in by_id.items()}, {1: None, 2: None, 3: None, 4: id4, 5: None, 6: None,
                                                                          7: None},
                   "ps --json: task.id (m_taskId) where the sample read Task.Id")
        # The running chain RunWaitTop: its thread is the one waiting for SyncTop(5).
        w5 = (waits.get(5) or [{}])[0]
        t.check_eq(({i for i, ch in by_id.items() if ch.get("running")}, (by_id.get(6, {}).get("running") or {}).get("tid"),
                    by_id.get(6, {}).get("thread_sync_wait")),
                   ({6, 7}, w5.get("tid"), {"task": f"0x{tasks.get(5, 0):016x}", "waiter": f"0x{mres.get(5, 0):016x}"}),
                   "ps --json: RunWaitTop runs on the thread waiting for SyncTop(5): its thread_sync_wait")
        t.check_eq([i for i, ch in by_id.items() if ch.get("thread_sync_wait")], [6], "ps --json: one thread_sync_wait")
        # The running chain RunEventTop: its thread in s_event.Wait(), on the Condition of s_event's Lock (oracle).
        ev = b.oracle_objects(core, tmp, statics=["AsyncdacSamples.SyncWaitApp::s_event"])["statics"].get(
            "AsyncdacSamples.SyncWaitApp::s_event", {}).get("address")
        ev_lock = h(b.oracle_objects(core, tmp, addresses=[ev])["objects"].get(h(ev), {}).get("fields", {}).get("m_lock"))
        etid = (by_id.get(7, {}).get("running") or {}).get("tid")
        erec = next((x for x in b.oracle_locks(core)["blocking"] if x["os_thread_id"] == etid), {})
        cond = (erec.get("records") or [{}])[0]
        t.check_eq((cond.get("type"), h(cond.get("lock"))), ("System.Threading.Condition", ev_lock),
                   "oracle: RunEventTop's thread waits on a Condition of s_event's m_lock")
        t.check_eq([(i, ch.get("event_wait")) for i, ch in by_id.items() if ch.get("event_wait")],
                   [(7, {"event": f"0x{h(ev):016x}", "condition": f"0x{h(cond.get('object')):016x}", "timeout_ms": None})],
                   "ps --json: RunEventTop's event_wait")
        gate = b.oracle_objects(core, tmp, statics=["AsyncdacSamples.SyncWaitApp::s_gate"])["statics"].get(
            "AsyncdacSamples.SyncWaitApp::s_gate", {}).get("address")
        gate_task = h(b.oracle_objects(core, tmp, addresses=[gate])["objects"].get(h(gate), {}).get("fields", {}).get("_task"))
        with open(os.path.join(t.SOURCE, "targets", "dotnet", "syncwait", "Program.cs")) as f:
            leaf_line = next(i for i, s in enumerate(f, 1) if "// @await SyncLeaf" in s)
        img = corecore.Core(core)
        tids = [waits[i][0]["tid"] for i in WAITED if waits.get(i)]
        stacks = b.oracle_objects(core, tmp, stacks=tids)["stacks"] if tids else {}
        rc, text, err = b.cli(["ps", core])
        t.check_eq((rc, err), (0, ""), "ps: exit code and stderr")
        rc, report, err = b.cli(["report", core])
        t.check_eq((rc, err), (0, ""), "report: exit code and stderr")
        for i in WAITED:
            w = waits.get(i)
            if not t.check(w is not None and len(w) == 1, f"SyncTop({i}): one synchronous waiter: {w}"):
                continue
            w = w[0]
            t.check_eq((h(w["task"]), h(w["waiter"]), w["in_register"]), (tasks[i], mres[i], False),
                       f"SyncTop({i}): task and waiter (oracle), found in stack memory")
            t.check(w["tid"] != pid, f"SyncTop({i}): not the main thread (it holds a stale copy)")
            frames = [f.get("method") or "" for f in stacks.get(str(w["tid"]), [])]
            t.check(any(f"SyncWaitApp.{BLOCKER[i]}" in f for f in frames) and
                    any("Task.SpinThenBlockingWait" in f for f in frames),
                    f"SyncTop({i}): thread {w['tid']} runs {BLOCKER[i]} -> SpinThenBlockingWait (oracle): {frames}")
            t.check_eq(img.read_u64(h(w["slot"])), mres[i], f"SyncTop({i}): the core's word at the slot is the waiter")
            line = (f"  blocked on: task 0x{tasks[i]:016x} is waited for synchronously ({WAYS}) by thread tid "
                    f"{w['tid']} (managed thread {w['managed_id']}): its Task+SetOnInvokeMres 0x{mres[i]:016x} is "
                    f"at 0x{h(w['slot']):016x} in that thread's stack")
            t.check(line in text.splitlines(), f"ps: {line!r} in\n{text}")
            rc, bt, err = b.cli(["bt", core, "--thread", str(w["tid"])])
            t.check_eq((rc, err), (0, ""), f"bt --thread {w['tid']}: exit code and stderr")
            head = (f"  blocked on: task 0x{tasks[i]:016x}, waited for synchronously ({WAYS}): its Task+SetOnInvokeMres "
                    f"0x{mres[i]:016x} is at 0x{h(w['slot']):016x} in this thread's stack; the task's stacks:\n"
                    f"chain #{by_id[i]['index']}: task 0x{tasks[i]:016x} ")
            t.check(head in bt and "SyncWaitApp.SyncLeaf(Int32)" in bt.split(head, 1)[-1] and
                    "SyncWaitApp.SyncTop(Int32)" in bt.split(head, 1)[-1], f"bt --thread {w['tid']}: {head!r} in\n{bt}")
            finding = (f"blocked: thread tid {w['tid']} (managed thread {w['managed_id']}) waits synchronously for task "
                       f"0x{tasks[i]:016x} ({WAYS}): see `bt --thread {w['tid']}`")
            t.check(finding in report.splitlines(), f"report: {finding!r} in\n{report[:3000]}")
        t.check_eq(text.count("  blocked on: "), 4, "ps: four blocked-on lines")
        run = (f"chain #{by_id.get(6, {}).get('index')}: running on thread {w5.get('tid')} (managed thread "
               f"{w5.get('managed_id')}), task 0x{tasks.get(6, 0):016x} ")
        tail = f"\n  waiting synchronously for: task 0x{tasks.get(5, 0):016x} ({WAYS})\n\n"
        t.check(run in text and tail in text.split(run, 1)[-1].split("\nchain #")[0] + "\n" and
                text.count("  waiting synchronously for: ") == 1,
                f"ps: RunWaitTop's thread waits synchronously for SyncTop(5):\n{text}")
        event_line = f"in ManualResetEventSlim.Wait on System.Threading.ManualResetEventSlim 0x{h(ev):016x}"
        t.check(re.search(rf"^chain #{by_id.get(7, {}).get('index')}: running on thread {etid} .*\n"
                          rf"  running: 0x[0-9a-f]+ syncwait\.dll`AsyncdacSamples\.SyncWaitApp\.RunEventLeaf\(Int32\) \+ "
                          rf"0x[0-9a-f]+ at Program\.cs:\d+ \(the method this chain resumed; bt shows what it calls\)\n"
                          rf"  async #0: .*RunEventTop\(Int32\).*\n  {re.escape(event_line)}\n\n", text, re.M) is not None
                and text.count("  in ManualResetEventSlim.Wait on ") == 1,
                f"ps: RunEventTop's thread in s_event.Wait():\n{text}")
        pool = {x["os_thread_id"] for x in b.oracle_locks(core)["blocking"] if x["threadpool_worker"]}
        t.check_eq(sorted(w[0]["tid"] for i, w in waits.items() if w and w[0]["tid"] in pool), [w5.get("tid")],
                   "oracle: of the waiting threads, RunWaitTop's is the one thread-pool worker")
        t.check(etid in pool, "oracle: RunEventTop's thread is a thread-pool worker")
        lines = [(w["tid"], f"thread tid {w['tid']} (managed thread {w['managed_id']}"
                            f"{', thread-pool worker' if w['tid'] in pool else ''}): waits synchronously for task "
                            f"0x{tasks[i]:016x} ({WAYS})\n  then: task 0x{tasks[i]:016x} is suspended: chain "
                            f"#{by_id[i]['index']}, AsyncdacSamples.SyncWaitApp.SyncLeaf(Int32) at Program.cs:{leaf_line}, "
                            f"awaiting 0x{gate_task:016x} System.Threading.Tasks.Task<Int32> [WaitingForActivation] (never "
                            f"completed: a promise, such as a TaskCompletionSource's task)\n")
                 for i, w in ((i, waits[i][0]) for i in WAITED if waits.get(i))]
        lines.append((etid, f"thread tid {etid} (managed thread {by_id[7]['running']['managed_id']}, thread-pool worker): "
                            f"{event_line}\n"))
        want = "".join(text for _, text in sorted(lines))
        section = report.split("\n== Blocked threads\n")[-1].split("\n\n== ")[0] + "\n"
        t.check_eq(section, want, "report: == Blocked threads, each with where its task is suspended")
        t.check(f"chain #{by_id[4]['index']}: task 0x{tasks[4]:016x} System.Runtime.CompilerServices.AsyncHelpers+"
                f"RuntimeAsyncTask<Int32> [WaitingForActivation] (Task.Id {id4})\n" in text, f"ps: SyncTop(4)'s Task.Id:\n{text}")
        t.check_eq(text.count("(Task.Id "), 1, "ps: one task with an id")
        t.check_eq(report.split("\n== Runtime")[0].count("\nblocked: "), 4, "report: four blocked findings")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
