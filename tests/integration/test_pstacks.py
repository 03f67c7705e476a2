"""pstacks: the threads' stacks merged from their outermost frame (SOS parallelstacks), on cores of
  deadlock  a pool worker in Monitor.Enter under GuardedLeaf, resumed by the dispatch loop of GuardedTop's
            chain, the "guard" thread in Task.Wait(), an idle worker, the gate thread, the main
            thread parked in Sample.ParkForever
  running   a pool worker parked in RunLeaf, resumed from RunMiddle's chain (RunMiddle, RunTop)
  starved   (--mode classic) both workers blocked in ManualResetEventSlim.Wait on one event: one
            branch of two threads
Checked against the oracle (ClrMD through Microsoft's DAC): each thread's managed frames, innermost
first (its stack walk's managed methods, compared by name: ClrMD spells parameter types its own way),
the app's frames exactly, and which threads have none (left out); the async frames of the chains a
thread runs (the oracle's dispatcher records: each record's frames with a DiagnosticIP) right after
the frame holding the record on the stack (the oracle's stack pointers); the tree against itself (each group
as long as its threads share frames, counts, order); what each branch's threads wait on as clrthreads
says it; the text as the documented rendering of the JSON; --all against bt's frames; --tids; lldb-22's
`async pstacks` prints what the CLI prints.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402

SEPARATOR = "_" * 48
ASYNC = " [async]"


def walk(node, outer, out):
    """{tid: frames innermost first} of the threads ending in node's subtree; outer: the frames of the
    groups around it, innermost first."""
    frames = node["frames"] + outer
    for x in node["tids"]:
        out[x["tid"]] = frames
    for c in node["callees"]:
        walk(c, frames, out)
    return out


def check_tree(node, what):
    """A group holds its threads' shared frames as far as they go; counts and order as documented."""
    tids, kids = node["tids"], node["callees"]
    t.check_eq(node["threads"], len(tids) + sum(c["threads"] for c in kids), f"{what}: a group's thread count")
    t.check(node["frames"] and not (len(kids) == 1 and not tids), f"{what}: a group ends where its threads part")
    t.check_eq([c["frames"][-1] for c in kids], sorted({c["frames"][-1] for c in kids}, key=lambda f: (
        -next(c["threads"] for c in kids if c["frames"][-1] == f), f)), f"{what}: callees, most threads first")
    t.check_eq([x["tid"] for x in tids], sorted(x["tid"] for x in tids), f"{what}: a branch's threads by id")
    for c in kids:
        check_tree(c, what)


def render(node, depth, tids_shown, lines):
    """The documented text of a group (dac/view/thread_groups.h), from its JSON."""
    indent = 4 * depth
    for c in node["callees"]:
        render(c, depth + 1, tids_shown, lines)
    tids = node["tids"]
    if tids:
        at = indent + (6 if node["callees"] else 2)
        shown = tids[:tids_shown] if tids_shown else tids
        line = " " * at + "~~~~ tid " + ", ".join(str(x["tid"]) for x in shown)
        lines.append(line + (f" and {len(tids) - len(shown)} more" if len(shown) < len(tids) else ""))
        waits = [x["waits_on"] for x in tids]
        if waits[0] and all(w == waits[0] for w in waits):
            lines.append(" " * (at + 5) + waits[0])
        else:
            lines += [" " * (at + 5) + f"tid {x['tid']}: {x['waits_on']}" for x in shown if x["waits_on"]]
    lines += [" " * indent + f"{node['threads']:5d} {f}" for f in node["frames"]]


def text_of(doc, tids_shown=4, all_threads=False):
    lines = [f"warning: {w}" for w in doc["warnings"]]
    for r in doc["roots"]:
        lines.append(SEPARATOR)
        render(r, 0, tids_shown, lines)
        lines.append("")
    n, roots, out = doc["threads"], len(doc["roots"]), doc["left_out"]
    tail = f"==> {n} thread{'' if n == 1 else 's'} with {roots} root{'' if roots == 1 else 's'}"
    if out:
        tail += (f"; {out} thread{'' if out == 1 else 's'} with no {'' if all_threads else 'managed '}frame left out"
                 + ("" if all_threads else " (pstacks --all shows them)"))
    return "\n".join(lines + [tail]) + "\n"


def method(name):
    """A frame's method without its parameters (ClrMD spells those its own way), ClrMD's IL stub class
    left out."""
    return name.split("(")[0].removeprefix("ILStubClass.")


def with_chains(frames, records):
    """An oracle thread's managed frames (innermost first) with the async frames of its dispatcher
    records, each record's right after the frame holding it on the stack, as (method, exact) pairs."""
    after = {}
    for r in records:
        holding = [i for i, f in enumerate(frames) if f.get("sp") and b.h(f["sp"]) <= b.h(r["address"])]
        after.setdefault(holding[-1] if holding else None, []).append(
            [b.display(f["signature"]) + ASYNC for f in r["frames"] if b.h(f.get("diagnostic_ip"))])
    out = []
    for i, f in enumerate(frames):
        out.append(b.display(f["method"]))
        for chain in after.get(i, []):
            out += chain
    return out


def common(core, tmp, what):
    """pstacks --json against the oracle and itself; returns the document and each thread's frames
    ({tid: frames innermost first}), or (None, {})."""
    doc = b.cli_json(["pstacks", core], "pstacks")
    if not t.check(doc is not None, f"{what}: pstacks --json: a document"):
        return None, {}
    mine = {}
    for r in doc["roots"]:
        check_tree(r, what)
        walk(r, [], mine)
    bt = b.cli_json(["bt", core], "bt")
    tids = [x["tid"] for x in bt["threads"]]
    oracle = b.oracle_objects(core, tmp, stacks=tids)["stacks"]
    dispatchers = b.oracle(core, tmp)
    theirs = {}
    for tid in tids:
        frames = oracle.get(str(tid))
        managed = [f for f in frames if f.get("kind") == "ManagedMethod" and f.get("method")] \
            if isinstance(frames, list) else []
        th = dispatchers.dispatcher_thread(tid)
        records = [r for r in th["records"] if b.h(r["next_continuation"])] if th else []
        if managed:
            theirs[tid] = with_chains(managed, records)
    t.check_eq(sorted(mine), sorted(theirs), f"{what}: the threads with managed frames (oracle)")
    t.check_eq((doc["threads"], doc["left_out"]), (len(theirs), len(tids) - len(theirs)),
               f"{what}: threads grouped and left out (oracle)")
    for tid in sorted(theirs):
        t.check_eq([method(f) for f in mine.get(tid, [])], [method(f) for f in theirs[tid]],
                   f"{what}: thread {tid}'s managed and async frames, innermost first (oracle)")
        t.check_eq([f for f in mine.get(tid, []) if f.startswith("AsyncdacSamples.")],
                   [f for f in theirs[tid] if f.startswith("AsyncdacSamples.")],
                   f"{what}: thread {tid}'s frames of the app, exactly (oracle)")
    # What a branch's threads wait on: what clrthreads says of each.
    waits = {x["tid"]: x["waits_on"] for x in b.cli_json(["clrthreads", core], "clrthreads")["threads"] if x["tid"]}
    ends = {}
    for r in doc["roots"]:
        stack = [r]
        while stack:
            n = stack.pop()
            stack += n["callees"]
            ends.update({x["tid"]: x["waits_on"] for x in n["tids"]})
    t.check_eq(ends, {tid: waits.get(tid) for tid in ends}, f"{what}: what each thread waits on, as clrthreads")
    rc, text, err = b.cli(["pstacks", core])
    t.check_eq((rc, err), (0, ""), f"{what}: pstacks: exit code and stderr")
    t.check_eq(text, text_of(doc), f"{what}: pstacks: the text, as its JSON renders it")
    return doc, mine


def deadlock(tmp):
    fields = {}
    core = b.sample_core("deadlock", "Debug", tmp, parked=True, fields=fields)
    doc, mine = common(core, tmp, "deadlock")
    if not doc:
        return
    threads = {x["managed_id"]: x for x in b.cli_json(["clrthreads", core], "clrthreads")["threads"]}
    guard, pool = threads[int(fields["guard"])]["tid"], threads[int(fields["guardpool"])]["tid"]
    t.check_eq(mine[guard][-3:], ["System.Threading.Tasks.Task.Wait()", "AsyncdacSamples.DeadlockApp.Guard()",
                                  "System.Threading.Thread.StartCallback(System.Threading.Thread*)"],
               "the guard thread waits for the task in Guard()")
    t.check("AsyncdacSamples.DeadlockApp.GuardedLeaf()" in mine[pool] and
            "System.Threading.Monitor.Enter(System.Object)" in mine[pool],
            f"the pool worker enters the Monitor in GuardedLeaf: {mine[pool]}")
    loop = "System.Runtime.CompilerServices.AsyncHelpers+RuntimeAsyncTask<Int32>.DispatchContinuations()"
    at = mine[pool].index(loop) if loop in mine[pool] else 0
    t.check_eq(mine[pool][at - 2:at + 3], ["AsyncdacSamples.DeadlockApp.GuardedLeaf()",
                                           "IL_STUB_AsyncResume(System.Object, Byte&)", loop,
                                           "AsyncdacSamples.DeadlockApp.GuardedTop()" + ASYNC,
                                           "System.Threading.ThreadPoolWorkQueue.Dispatch()"],
               "deadlock: GuardedLeaf's logical caller GuardedTop, right after the loop that resumed it")
    # The pool's threads share StartCallback; the main thread is a root of its own.
    roots = {r["frames"][-1]: r for r in doc["roots"]}
    t.check_eq(sorted(roots), sorted(["System.Threading.Thread.StartCallback(System.Threading.Thread*)",
                                      "System.Environment.CallEntryPoint(IntPtr, System.String[]*, Int32*, Boolean, "
                                      "System.Exception*)"]), "deadlock: the roots")
    rc, text, err = b.cli(["pstacks", core])
    waits = [line.strip() for line in text.splitlines() if "~~~~" not in line and not line.strip()[:1].isdigit()
             and line.strip() and not line.startswith(("_", "==>"))]
    t.check_eq(len(waits), 2, f"deadlock: two branches wait on something: {waits}")
    t.check(any(w.startswith("waiting for: System.Object 0x") and "(Monitor), held by thread tid " in w for w in waits),
            f"deadlock: the worker's Monitor: {waits}")
    t.check(any(w.startswith("waits synchronously for task 0x") for w in waits), f"deadlock: guard's Task.Wait(): {waits}")
    # --all: every thread of bt, with its native frames as bt names them.
    full = b.cli_json(["pstacks", core, "--all"], "pstacks --all")
    bt = b.cli_json(["bt", core], "bt")
    want = {}
    for th in bt["threads"]:
        want[th["tid"]] = []
        for i, f in enumerate(th["frames"]):
            want[th["tid"]].append(f["symbol"] if f["managed"] else f"{f['module']}`{f['symbol']}" if f["symbol"]
                                   else f["module"] or f["pc"])
            for c in th.get("chains") or []:  # a chain right after the last frame at or below its loop's record
                holding = [k for k, g in enumerate(th["frames"]) if g.get("sp") and b.h(g["sp"]) <= b.h(c["dispatcher"])]
                if holding and holding[-1] == i:
                    want[th["tid"]] += [x["method"] + ASYNC for x in c["frames"]]
    got = {}
    for r in full["roots"]:
        check_tree(r, "deadlock --all")
        walk(r, [], got)
    t.check_eq(got, want, "deadlock: pstacks --all: every thread's frames, as bt's")
    t.check_eq((full["threads"], full["left_out"]), (len(want), 0), "deadlock: pstacks --all: threads")
    t.check_eq(b.cli(["pstacks", core, "--all"])[1], text_of(full, all_threads=True), "deadlock: pstacks --all: text")
    # In lldb-22, as the CLI prints it.
    out = b.run_lldb(b.lldb_target(core), ["async pstacks"], "lldb: async pstacks")
    t.check_eq(b.lldb_output(out, "async pstacks"), text, "lldb-22: async pstacks, as the CLI")


def running(tmp):
    s = b.sample("running", "Debug")
    try:
        b.wait_parked(s.pid, s.tid)
        core = b.make_core(s.pid, os.path.join(tmp, "running.core"))
    finally:
        s.kill()
    doc, mine = common(core, tmp, "running")
    if not doc:
        return
    frames = mine.get(s.tid, [])
    loop = "System.Runtime.CompilerServices.AsyncHelpers+RuntimeAsyncTask<Int32>.DispatchContinuations()"
    at = frames.index(loop) if loop in frames else 0
    t.check_eq(frames[at - 2:at + 3], ["AsyncdacSamples.RunningApp.RunLeaf()", "IL_STUB_AsyncResume(System.Object, Byte&)",
                                       loop, "AsyncdacSamples.RunningApp.RunMiddle()" + ASYNC,
                                       "AsyncdacSamples.RunningApp.RunTop()" + ASYNC],
               "running: RunLeaf's logical callers RunMiddle and RunTop, right after the loop that resumed it")
    t.check_eq([f for f in frames[:at] if f.startswith("AsyncdacSamples.")],
               ["AsyncdacSamples.RunningApp.ParkRunning()", "AsyncdacSamples.RunningApp.StopHere(Int32)",
                "AsyncdacSamples.RunningApp.RunLeaf()"], "running: RunLeaf parks in ParkRunning")


def starved(tmp):
    core = b.sample_core("starved", "Debug", tmp, parked=True, mode="classic")
    doc, _ = common(core, tmp, "starved")
    if not doc:
        return
    # Both workers block in Block(Object) on one event: one branch of two threads, one wait.
    branches = []
    stack = list(doc["roots"])
    while stack:
        n = stack.pop()
        stack += n["callees"]
        if len(n["tids"]) == 2:
            branches.append(n)
    if not t.check_eq(len(branches), 1, "starved: one branch of two threads"):
        return
    n = branches[0]
    t.check("AsyncdacSamples.StarvedApp.Block(System.Object)" in n["frames"], f"starved: the workers' Block: {n['frames']}")
    w = {x["waits_on"] for x in n["tids"]}
    t.check(len(w) == 1 and next(iter(w)).startswith("in ManualResetEventSlim.Wait on System.Threading.ManualResetEventSlim 0x"),
            f"starved: both wait on one event: {w}")
    rc, text, err = b.cli(["pstacks", core, "--tids", "1"])
    t.check_eq(text, text_of(doc, tids_shown=1), "starved: pstacks --tids 1")
    t.check(f"~~~~ tid {n['tids'][0]['tid']} and 1 more\n" in text, "starved: --tids 1: 'and 1 more'")
    t.check_eq(b.cli(["pstacks", core, "--tids", "0"])[1], text_of(doc, tids_shown=0), "starved: pstacks --tids 0")
    rc, out, err = b.cli(["pstacks", core, "--tids", "x"])
    t.check_eq((rc, out, err), (2, "", "asyncdac: error: invalid value 'x' for option --tids of 'pstacks'\n"),
               "pstacks --tids x: a usage error")


def main():
    tmp = t.tmpdir()
    deadlock(tmp)
    running(tmp)
    starved(tmp)
    t.finish()


if __name__ == "__main__":
    main()
