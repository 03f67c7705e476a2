"""ps.starved: a completed task whose continuation has not run because the thread pool is starved
(targets/dotnet/starved: the pool capped at 2 workers, both blocked; the awaited TaskCompletionSource
completed with RunContinuationsAsynchronously, so the chain's task waits in the global queue behind
nothing, with 3 more work items after it). On a createdump core:
  ps        awaiting line: "completed, but the continuation awaiting it has not run: the thread pool is
            starved (2 worker threads busy, 2 exist, at most 2; 4 work items in the global queues)", text and --json
  ps --stats  "Thread pool:" section: "1 stack awaits a completed task whose continuation has not
            run: the thread pool is starved (...)"; --json stats.thread_pool
            {not_resumed 1, starved true, busy 2, existing 2, max 2, queued 4}
  report    finding "not resumed: chain #0 awaits 0x<task>, which is RanToCompletion: the thread pool is
            starved (...; 2 workers blocked: see Blocked threads)"; and why: "== Blocked threads" has both workers on one line, "2 threads (tid
            A, B; thread-pool workers): in ManualResetEventSlim.Wait on System.Threading.ManualResetEventSlim
            0x<s_block>" (both TS_TPWorkerThread in ClrMD's thread state: `oracle locks`)
  bt        each worker's "in ManualResetEventSlim.Wait on ..." line under its frames (StarvedApp.Block)
The oracle (ClrMD) reads PortableThreadPool's _minThreads/_maxThreads (2, 2), the awaited task's type, and
its ClrThreadPool (`oracle threadpool`): active 2, active + idle 2, max 2, as stats.thread_pool's busy,
existing and max.
"""
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from btsamples import h  # noqa: E402

FACTS = "2 worker threads busy, 2 exist, at most 2; 4 work items in the global queues"
WHAT = "completed, but the continuation awaiting it has not run: the thread pool is starved (" + FACTS + ")"


def main():
    tmp = t.tmpdir()
    core = b.sample_core("starved", "Debug", tmp, parked=True)
    try:
        j, text = b.ps_json_and_text(core)
        t.check_eq(len(j["chains"]), 1, "ps: one chain")
        st = j["chains"][0]
        aw = st["awaiting"]
        t.check_eq(st["frames"][0]["method"], "AsyncdacSamples.StarvedApp.Waiter()", "the chain's frame")
        t.check_eq((aw["type"], aw["status"]), ("System.Threading.Tasks.Task<Int32>", "RanToCompletion"),
                   "the awaited task")
        t.check_eq(aw.get("what"), WHAT, "what it awaits (--json)")
        line = f"  awaiting: 0x{h(aw['object']):016x} {aw['type']} [{aw['status']}] ({WHAT})"
        t.check(line in text.splitlines(), f"awaiting line {line!r} in\n{text}")
        rc, stats, err = b.cli(["ps", core, "--stats"])
        t.check_eq((rc, err), (0, ""), "ps --stats: exit code and stderr")
        want = ("  1 stack awaits a completed task whose continuation has not run: the thread pool is starved ("
                + FACTS + ")")
        t.check("Thread pool:" in stats.splitlines() and want in stats.splitlines(),
                f"ps --stats: {want!r} in\n{stats}")
        js = b.cli_json(["ps", core, "--stats"], "ps")
        t.check_eq(js["stats"].get("thread_pool"),
                   {"not_resumed": 1, "starved": True, "busy": 2, "existing": 2, "max": 2, "queued": 4},
                   "ps --stats --json: stats.thread_pool")
        rc, rep, err = b.cli(["report", core])
        t.check_eq(rc, 0, "report: exit code")
        # (With how many of its workers are blocked: the two below.)
        finding = (f"not resumed: chain #0 awaits 0x{h(aw['object']):016x}, which is RanToCompletion: "
                   f"the thread pool is starved ({FACTS}; 2 workers blocked: see Blocked threads)")
        t.check(finding in rep.splitlines(), f"report finding {finding!r} in\n{rep}")
        # Why it is starved: both workers wait in s_block.Wait() (their blocking records, the MRES's Lock).
        block = b.oracle_objects(core, tmp, statics=["AsyncdacSamples.StarvedApp::s_block"])["statics"].get(
            "AsyncdacSamples.StarvedApp::s_block", {})
        wait = ("in ManualResetEventSlim.Wait on System.Threading.ManualResetEventSlim "
                f"0x{h(block.get('address', '0')):016x}")
        rc, bt, err = b.cli(["bt", core])
        workers = [(hd, frames) for hd, frames, _, other in b.bt_sections(bt) if f"  {wait}" in other]
        t.check_eq([any("AsyncdacSamples.StarvedApp.Block(" in f for f in frames) for _, frames in workers], [True, True],
                   f"bt: the two workers (in StarvedApp.Block) say {wait!r}:\n{bt}")
        tids = sorted(int(re.search(r"tid = (\d+)", hd).group(1)) for hd, _ in workers)
        pool = {x["os_thread_id"] for x in b.oracle_locks(core)["blocking"] if x["threadpool_worker"]}
        t.check_eq(sorted(pool & set(tids)), tids, "oracle: both blocked threads are thread-pool workers")
        section = rep.split("\n== Blocked threads\n")[-1].split("\n\n== ")[0]
        t.check_eq(section, f"2 threads (tid {', '.join(map(str, tids))}; thread-pool workers): {wait}",
                   "report: == Blocked threads")
        # The oracle: the awaited task's type, and the pool's caps.
        rc, heap, err = b.cli(["dumpheap", core, "--type", "System.Threading.PortableThreadPool"])
        pools = [int(m.group(1), 16) for m in re.finditer(r"^(0x[0-9a-f]+) ", heap, re.M)]
        objs = b.oracle_objects(core, tmp, addresses=[h(aw["object"])] + pools)["objects"]
        t.check_eq(b.display(objs[h(aw["object"])]["type"]), "System.Threading.Tasks.Task<Int32>",
                   "the awaited task's type (oracle)")
        caps = [(o["fields"].get("_minThreads"), o["fields"].get("_maxThreads")) for a, o in objs.items()
                if o.get("type") == "System.Threading.PortableThreadPool"]
        t.check_eq(caps, [(2, 2)], "PortableThreadPool _minThreads, _maxThreads (oracle)")
        tp = b.oracle_core_json("threadpool", core)
        mine = js["stats"].get("thread_pool", {})
        t.check_eq((tp.get("portable"), tp.get("active"), tp.get("active", 0) + tp.get("idle", 0), tp.get("max")),
                   (True, mine.get("busy"), mine.get("existing"), mine.get("max")),
                   "the pool's busy, existing and max workers (oracle: ClrThreadPool)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
