"""ps.convoy: `ps` groups what chains await by identity (view/stack_groups.c), on a createdump core of
targets/dotnet/convoy, checked against the sample's source and the oracle (ClrMD: the statics and the
SemaphoreSlim's queue of TaskNodes):
  1000 ConvoyTop -> ConvoyWait chains await s_lock.WaitAsync(): 1000 distinct TaskNodes, but one
       SemaphoreSlim: "awaiting one SemaphoreSlim 0x<s_lock> (current count 0, 1000 waiters)"
  500  GateWait chains await their own TaskCompletionSource<int>.Task:
       "awaiting 500 distinct Task<Int32> (promise never completed)"
  3    SharedWait chains await s_shared.Task: "awaiting one Task<Int32> 0x<task> (promise never completed)"
--coalesce (text and --json: object, objects, semaphore {address, current_count, waiters}), --stats
(its Awaiting table, text and --json), --address <the SemaphoreSlim> (its 1000 chains), and report's
findings ("shared: <n> chains await ..."); stable chain numbers under --method; --type in every spelling
(and dumpheap --type, ignoring case).
"""
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from btsamples import h  # noqa: E402

SRC = os.path.join(t.SOURCE, "targets", "dotnet", "convoy", "Program.cs")
LOCK = "AsyncdacSamples.ConvoyApp::s_lock"
SHARED = "AsyncdacSamples.ConvoyApp::s_shared._task"
TASK_INT = "System.Threading.Tasks.Task<Int32>"


def await_lines():
    with open(SRC) as f:
        return {m.group(1): i for i, line in enumerate(f, 1) for m in [re.search(r"// @await (\w+)", line)] if m}


def main():
    tmp = t.tmpdir()
    try:
        core = b.sample_core("convoy", "Debug", tmp, parked=True)
        st = b.oracle_objects(core, tmp, statics=[LOCK, SHARED])["statics"]
        lock, shared = h(st[LOCK]["address"]), h(st[SHARED]["address"])
        t.check_eq(st[LOCK]["fields"].get("m_currentCount"), 0, "oracle: s_lock.m_currentCount")
        # The oracle's queue: m_asyncHead, then each TaskNode's Next.
        j = b.cli_json(["ps", core], "ps")
        nodes = sorted({h(c["awaiting"]["object"]) for c in j["chains"]
                        if c["frames"][0]["method"].endswith("ConvoyWait(Int32)")})
        t.check_eq(len(nodes), 1000, "ps: 1000 ConvoyWait chains, each awaiting its own TaskNode")
        objs = b.oracle_objects(core, tmp, addresses=nodes)["objects"]
        queue, node = [], h(st[LOCK]["fields"].get("m_asyncHead"))
        while node and len(queue) <= 1000:
            queue.append(node)
            node = h(objs.get(node, {}).get("fields", {}).get("Next"))
        t.check_eq(sorted(queue), nodes, "oracle: s_lock's queue (m_asyncHead .. Next) holds exactly the awaited TaskNodes")

        L = await_lines()
        sem = f"0x{lock:016x}"
        want = (f"STACKS 1: 1000 chains\n[1000] awaiting one SemaphoreSlim {sem} (current count 0, 1000 waiters)\n"
                f"[1000] ConvoyApp.ConvoyWait(Int32) at Program.cs:{L['ConvoyWait']} [state 0]\n"
                f"[1000] ConvoyApp.ConvoyTop(Int32) at Program.cs:{L['ConvoyTop']} [state 0]\n\n"
                f"STACKS 2: 500 chains\n[500] awaiting 500 distinct Task<Int32> (promise never completed)\n"
                f"[500] ConvoyApp.GateWait(Task<Int32>) at Program.cs:{L['GateWait']} [state 0]\n\n"
                f"STACKS 3: 3 chains\n[3] awaiting one Task<Int32> 0x{shared:016x} (promise never completed)\n"
                f"[3] ConvoyApp.SharedWait(Int32) at Program.cs:{L['SharedWait']} [state 0]\n")
        rc, out, err = b.cli(["ps", core, "--coalesce"])
        t.check_eq((rc, err), (0, ""), "ps --coalesce: exit code and stderr")
        t.check_eq(out.split("\n\n1503 chains listed")[0] + "\n", want, "ps --coalesce: grouped by identity")

        first = {
            1000: {"awaiting": f"awaiting one System.Threading.SemaphoreSlim {sem} (current count 0, 1000 waiters)",
                   "object": sem, "objects": 1,
                   "semaphore": {"address": sem, "current_count": 0, "waiters": 1000, "waiters_capped": False}},
            500: {"awaiting": f"awaiting 500 distinct {TASK_INT} (promise never completed)", "objects": 500},
            3: {"awaiting": f"awaiting one {TASK_INT} 0x{shared:016x} (promise never completed)",
                "object": f"0x{shared:016x}", "objects": 1},
        }
        cj = b.cli_json(["ps", core, "--coalesce"], "ps --coalesce")
        got = [{k: v for k, v in n.items() if k != "callers"} for n in cj["coalesce"]] if cj else None
        t.check_eq(got, [dict({"frame": w["awaiting"], "count": n}, **{k: v for k, v in w.items() if k != "awaiting"})
                         for n, w in first.items()], "ps --coalesce --json: the first level")
        sj = b.cli_json(["ps", core, "--stats"], "ps --stats")
        t.check_eq(sj["stats"]["Awaiting"] if sj else None, [dict(w, count=n) for n, w in first.items()],
                   "ps --stats --json: Awaiting")
        rc, out, err = b.cli(["ps", core, "--stats"])
        t.check_eq((rc, err), (0, ""), "ps --stats: exit code and stderr")
        table = "".join(f"{n:10d}  {w['awaiting']}\n" for n, w in first.items())
        t.check(f"Awaiting:\n     Count  What the stacks' innermost frames wait for\n{table}\n" in out,
                f"ps --stats: Awaiting table\n{table}in\n{out}")

        aj = b.cli_json(["ps", core, "--address", sem], "ps --address <SemaphoreSlim>")
        t.check_eq(len(aj["chains"]) if aj else None, 1000, "ps --address <the SemaphoreSlim>: its waiters' chains")
        # --type in any of the spellings: C#, SOS, reflection (arity alone: any instantiation).
        # RuntimeAsyncTask<Int32> owns every chain; 503 await a Task<Int32>, 1000 a TaskNode.
        for spelling, n in (("Task<int>", 1503), ("task<INT32>", 1503), ("System.Threading.Tasks.Task<int>", 503),
                            ("System.Threading.Tasks.Task`1", 503),
                            ("System.Threading.Tasks.Task`1[[System.Int32, System.Private.CoreLib]]", 503),
                            ("System.Threading.Tasks.Task<string>", 0), ("semaphoreslim+tasknode", 1000)):
            tj = b.cli_json(["ps", core, "--type", spelling], f"ps --type {spelling}")
            t.check_eq(len(tj["chains"]) if tj else None, n, f"ps --type {spelling!r}")
        hj = b.cli_json(["dumpheap", core, "--type", "system.threading.semaphoreslim+TaskNode", "--stat"], "dumpheap --type")
        t.check_eq([(s["name"], s["count"]) for s in hj["statistics"]] if hj else None,
                   [("System.Threading.SemaphoreSlim+TaskNode", 1000)], "dumpheap --type (ignoring case): the TaskNodes")
        # Chain numbers are the unfiltered listing's: a filter does not renumber them.
        number = {c["task"]["address"]: c["index"] for c in j["chains"]}
        t.check_eq(sorted(number.values()), list(range(1503)), "ps: chains #0 .. #1502")
        fj = b.cli_json(["ps", core, "--method", "SharedWait"], "ps --method SharedWait")
        got = [(c["index"], number.get(c["task"]["address"])) for c in fj["chains"]] if fj else []
        t.check(len(got) == 3 and all(a == b_ for a, b_ in got) and got[0][0] >= 1500,
                f"ps --method SharedWait: the three chains keep their numbers: {got}")
        rc, out, err = b.cli(["ps", core, "--method", "SharedWait"])
        t.check_eq([int(x) for x in re.findall(r"^chain #(\d+):", out, re.M)], [g[0] for g in got],
                   "ps --method SharedWait: text numbers as JSON's")

        rc, out, err = b.cli(["report", core])
        t.check_eq((rc, err), (0, ""), "report: exit code and stderr")
        findings = out.split("\n\n== Runtime")[0]
        t.check_eq(findings, "== Findings\n"
                   f"shared: 1000 chains await one System.Threading.SemaphoreSlim {sem} (current count 0, 1000 waiters)\n"
                   f"shared: 3 chains await one {TASK_INT} 0x{shared:016x} (promise never completed)",
                   "report: findings")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
