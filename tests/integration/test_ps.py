"""ps.*: `asyncdac ps` (every pending async operation, issue 6) on the real .NET 11.0.0 runtime.

    test_ps.py fanout            fanout (Release, 10,000 pending chains): a createdump core (JSON, text,
                                 --coalesce, --stats, filters), a gcore core and the live process
    test_ps.py mixed Debug|Release
                                 mixed: classic state machines and runtime-async code awaiting each
                                 other, stitched into one stack per documented chain (Debug: the state
                                 machines are classes; Release: structs inside their boxes); classic
                                 frames at the line of their await (expected.json's classic lines)
    test_ps.py running           a chain a thread is running (marked with its thread), and the stale
                                 and sentinel continuations it leaves (not listed)
    test_ps.py shapes            every chain shape of targets/dotnet/shapes (ValueTask, custom
                                 awaitable, generics, lambdas, ...)
    test_ps.py corrupt           a patched mixed core: a wild Next (the chain ends in its error, the
                                 continuation cut off is listed alone), a deadlock (a cycle)
    test_ps.py errors            bad arguments: one-line errors; the progress line on a terminal
                                 (ASYNCDAC_PROGRESS_DELAY=0), none when stderr is not one
    test_ps.py lldb              `async ps` in lldb-22 prints what the CLI prints

Ground truth, never asyncdac's own output: the oracle (tests/oracle: ClrMD + Microsoft's DAC) lists
every continuation, every task whose m_stateObject is a continuation and every chain; `oracle
objects` reads task fields (m_continuationObject: who awaits a task; StateMachine, <>1__state) for
the stitching; the samples' sources and expected.json give methods, await lines and counts.
Checked on every core: the set of continuation addresses asyncdac accounts for (listed stacks plus
the unlisted stale and sentinel ones) and the task -> head links equal the oracle's; every listed
chain's frames equal the oracle's (DiagnosticIP, MethodDesc, method, module, offset, IL offset,
line, state).
"""
import json
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from btsamples import a16, h  # noqa: E402

FANOUT = {"Alpha": 5000, "Beta": 3000, "Gamma": 2000}
FANOUT_SHAPES = {("AlphaLeaf", "AlphaMid", "AlphaTop"): "Alpha", ("BetaLeaf", "BetaTop"): "Beta",
                 ("AlphaLeaf", "GammaTop"): "Gamma"}
# targets/dotnet/mixed/Program.cs: the documented chains, callee -> caller; (method, kind, module).
MIXED = [
    ("ra-classic-ra", [("AsyncdacSamples.RaLib.RaLeaf", "async", "RaLib.dll"),
                       ("AsyncdacSamples.Classic.ClassicMiddle", "classic", "MixedClassic.dll"),
                       ("AsyncdacSamples.MixedApp.RaTop", "async", "mixed.dll")]),
    ("classic-ra-classic", [("AsyncdacSamples.Classic.ClassicLeaf", "classic", "MixedClassic.dll"),
                            ("AsyncdacSamples.RaLib.RaMiddle", "async", "RaLib.dll"),
                            ("AsyncdacSamples.Classic.ClassicTop", "classic", "MixedClassic.dll")]),
    ("opt-out", [("AsyncdacSamples.MixedApp.RaLeaf2", "async", "mixed.dll"),
                 ("AsyncdacSamples.MixedApp.OptedOutMiddle", "classic", "mixed.dll"),
                 ("AsyncdacSamples.MixedApp.RaTop2", "async", "mixed.dll")]),
]
# Parameter lists as the sources declare them (asyncdac's display format).
MIXED_PARAMS = {
    "AsyncdacSamples.RaLib.RaMiddle": "(System.Func<System.Threading.Tasks.Task<Int32>>)",
}
TASK_INT = "System.Threading.Tasks.Task<Int32>"
RA_TASK = "System.Runtime.CompilerServices.AsyncHelpers+RuntimeAsyncTask<Int32>"


def ps(target, *args, what, want_rc=0):
    """asyncdac ps on a core path or ["--pid", pid]; (stdout) or None."""
    target = target if isinstance(target, list) else [target]
    rc, out, err = t.run([t.CLI, "ps", *target, *args], timeout=600)
    if not t.check(rc == want_rc and err == "", f"{what}: ps {' '.join(args)}: rc {rc}, stderr {err.strip()[-2000:]!r}"):
        return None
    return out


def ps_json(target, *args, what):
    out = ps(target, *args, "--json", what=what)
    if out is None:
        return None
    try:
        return b.document(out, "ps")
    except (ValueError, KeyError) as e:
        t.fail(f"{what}: ps --json is not the expected JSON ({e}): {out[:300]!r}")
        return None


def frames_of(segment_links, chain_frames):
    """The async frames of a stack that belong to one chain segment (by continuation address)."""
    links = set(h(a) for a in segment_links)
    return [f for f in chain_frames if f["kind"] == "async" and h(f["continuation"]) in links]


def check_accounting(d, o, what):
    """Continuation set and task -> head links against the oracle."""
    seen = set()
    links = set()
    for st in d["chains"]:
        for seg in st["segments"]:
            if seg["kind"] != "chain":
                continue
            seen.update(h(a) for a in seg["links"])
            if seg["root"] == "task":
                links.add((h(seg["task"]["address"]), h(seg["head"])))
    for u in d["unlisted"]:
        seen.update(h(a) for a in u["links"])
    want = set(o.conts)
    if not t.check_eq(len(seen), len(want), f"{what}: number of continuations accounted for"):
        print(f"  only asyncdac: {[hex(a) for a in sorted(seen - want)[:10]]}")
        print(f"  only oracle:   {[hex(a) for a in sorted(want - seen)[:10]]}")
    else:
        t.check(seen == want, f"{what}: the continuation addresses differ from the oracle's")
    want_links = set((a, h(x["head"])) for a, x in o.tasks.items())
    if not t.check_eq(len(links), len(want_links), f"{what}: number of task -> head links"):
        print(f"  only asyncdac: {sorted(links - want_links)[:5]}")
        print(f"  only oracle:   {sorted(want_links - links)[:5]}")
    else:
        t.check(links == want_links, f"{what}: the task -> head links differ from the oracle's")
    t.check_eq(d["summary"]["continuations"], len(o.conts), f"{what}: summary continuations")


def check_chain_frames(st, o, what, hidden=lambda f: False):
    """Every chain segment of a listed stack: its async frames equal the oracle chain's user frames."""
    ok = True
    for seg in st["segments"]:
        if seg["kind"] != "chain":
            continue
        oc = o.chain_by_head.get(h(seg["head"]))
        if not t.check(oc is not None, f"{what}: head {seg['head']} is not an oracle chain head"):
            return False
        want = [b.frame_facts(o, f) for f in o.user_frames(oc) if not hidden(f)]
        got = frames_of(seg["links"], st["frames"])
        t.check_eq([h(x) for x in seg["links"]], [h(f["address"]) for f in oc["frames"]], f"{what}: links of {seg['head']}")
        if not t.check_eq(len(got), len(want), f"{what}: frames of chain {seg['head']}"):
            return False
        for i, (g, w) in enumerate(zip(got, want)):
            if not b.check_frame_json(g, w, f"{what}: chain {seg['head']} frame {i}"):
                return False
        ok &= t.check_eq(seg["end"], "complete", f"{what}: chain {seg['head']} end")
    return ok


def label(f):
    """--coalesce/--stats text of an async frame (oracle facts)."""
    where = f" at {os.path.basename(f['file'])}:{f['line']}" if f["file"] else f" [IL_{f['il_offset']:04x}]"
    return f"{f['module']}`{f['method']}{where} [state {f['state']}]"


def short(label):
    """A label as the --coalesce text tree shows it: no module, the method with its type, types
    without namespaces."""
    label = label.split("`", 1)[-1]
    strip = lambda text: re.sub(r"\b(?:\w+\.)+(?=\w)", "", text)  # noqa: E731
    if label.startswith("awaiting "):
        return strip(label)
    name, rest = label.split("(", 1)
    return ".".join(name.split(".")[-2:]) + "(" + strip(rest.split(")", 1)[0]) + ")" + rest.split(")", 1)[1]


def summary_line(listed, running, conts, tasks, boxes, stale, empty, filtered=0):
    s = f"{listed} chain{'' if listed == 1 else 's'} listed"
    if filtered:
        s += f" ({filtered} more do not match the filters)"
    s += f"; {running} running. Heap: {conts} continuations, {tasks} pending tasks, {boxes} classic state machines"
    if stale or empty:
        s += f"; not listed: {stale} stale continuation chain{'' if stale == 1 else 's'}, {empty} without frames"
    return s + ".\n"


# ---- fanout -------------------------------------------------------------------------------------

def fanout_core(core, o, tmp, what):
    exp = b.expected("fanout")
    lines = {c["name"]: [f["await_line"] for f in c["frames"]] for c in exp["chains"]}
    t0 = time.perf_counter()
    d = ps_json(core, "--timings", what=what)
    elapsed = time.perf_counter() - t0
    if d is None:
        return
    print(f"{what}: ps --json took {elapsed:.3f} s (heap {d['summary']['heap_seconds']:.3f} s, "
          f"link {d['summary']['link_seconds']:.3f} s, {d['summary']['frames_resolved']} frames resolved, "
          f"{d['summary']['frames_cached']} from the cache)", flush=True)
    t.check_eq(len(d["chains"]), 10000, f"{what}: chains listed")
    check_accounting(d, o, what)
    t.check_eq([(u["root"], u["reason"]) for u in d["unlisted"]], [("unowned", "without frames")],
               f"{what}: unlisted (the main thread's sentinel continuation)")
    shapes = {}
    facts = {}  # method name -> oracle facts of one frame (for the labels)
    bad = 0
    for st in d["chains"]:
        names = tuple(f["method"].split("(")[0].rsplit(".", 1)[-1] for f in st["frames"])
        shape = FANOUT_SHAPES.get(names)
        if shape is None:
            bad += 1
            if bad <= 3:
                t.fail(f"{what}: chain {st['index']} has frames {names}")
            continue
        shapes[shape] = shapes.get(shape, 0) + 1
        t.check_eq([f["line"] for f in st["frames"]], lines[shape], f"{what}: {shape} chain {st['index']} lines")
        if st["task"]["type"] != RA_TASK or st["task"]["status"] != "WaitingForActivation":
            t.fail(f"{what}: chain {st['index']} task {st['task']}")
        if not check_chain_frames(st, o, f"{what}: chain {st['index']}"):
            break
        for seg in st["segments"]:
            oc = o.chain_by_head[h(seg["head"])]
            for f in o.user_frames(oc):
                facts.setdefault(f["method"], b.frame_facts(o, f))
    t.check_eq(shapes, FANOUT, f"{what}: chains per shape")
    # Awaited objects: the head RuntimeAsyncTaskContinuation's Task, per the oracle (three samples).
    awaited_type = {}
    picks = {}
    for st in d["chains"]:
        shape = FANOUT_SHAPES.get(tuple(f["method"].split("(")[0].rsplit(".", 1)[-1] for f in st["frames"]))
        picks.setdefault(shape, st)
    heads = [picks[s]["segments"][0]["head"] for s in FANOUT]
    objs = b.oracle_objects(core, tmp, heads)["objects"]
    first_awaited = h(d["chains"][0]["awaiting"]["object"])
    tasks = b.oracle_objects(core, tmp, [objs[h(x)]["fields"]["Task"] for x in heads] + [first_awaited])["objects"]
    for s, head in zip(FANOUT, heads):
        aw = h(objs[h(head)]["fields"]["Task"])
        awaited_type[s] = b.display(tasks[aw]["type"])
        t.check_eq(picks[s]["awaiting"], b.expected_awaiting(aw, tasks[aw], "Task")[1], f"{what}: {s} awaiting")
    t.check_eq(awaited_type, {"Alpha": TASK_INT, "Beta": "System.Threading.Tasks.Task", "Gamma": TASK_INT},
               f"{what}: awaited types (TaskCompletionSource<int>.Task, TaskCompletionSource.Task)")

    summary = summary_line(10000, 0, len(o.conts), 20000, 0, 0, 1)
    # What the stacks await, by identity: every chain its own never-completed promise.
    first = {"Alpha": f"awaiting 7000 distinct {awaited_type['Alpha']} (promise never completed)",
             "Beta": f"awaiting 3000 distinct {awaited_type['Beta']} (promise never completed)",
             "Gamma": f"awaiting 2000 distinct {awaited_type['Gamma']} (promise never completed)"}
    # --coalesce: the documented groups, innermost frame first.
    lab = {m: label(f) for m, f in facts.items()}
    # A line per frame; only where the stacks part is there a branch ("+- ", "|  " while a sibling
    # follows); labels shortened to fit 100 columns.
    sl = {m: short(x) for m, x in lab.items()}
    want = (f"STACKS 1: 7000 chains\n[7000] {short(first['Alpha'])}\n"
            f"[7000] {sl['AlphaLeaf']}\n+- [5000] {sl['AlphaMid']}\n|  [5000] {sl['AlphaTop']}\n"
            f"+- [2000] {sl['GammaTop']}\n\n"
            f"STACKS 2: 3000 chains\n[3000] {short(first['Beta'])}\n"
            f"[3000] {sl['BetaLeaf']}\n[3000] {sl['BetaTop']}\n\n" + summary)
    out = ps(core, "--coalesce", what=what)
    if out is not None:
        t.check_eq(out, want, f"{what}: --coalesce")
        t.check_eq(max(len(x) for x in out.split("\n\n")[0].splitlines()) <= 100, True, f"{what}: --coalesce in 100 columns")
    cj = ps_json(core, "--coalesce", what=what)
    if cj:
        def tree(nodes):
            return [(n["count"], n["frame"], tree(n["callers"])) for n in nodes]
        t.check_eq(tree(cj["coalesce"]), [
            (7000, first["Alpha"], [(7000, lab["AlphaLeaf"], [
                (5000, lab["AlphaMid"], [(5000, lab["AlphaTop"], [])]), (2000, lab["GammaTop"], [])])]),
            (3000, first["Beta"], [(3000, lab["BetaLeaf"], [(3000, lab["BetaTop"], [])])])],
            f"{what}: --coalesce --json")
    # --stats
    out = ps(core, "--stats", what=what)
    if out is not None:
        rows = [(7000, lab["AlphaLeaf"]), (5000, lab["AlphaMid"]), (5000, lab["AlphaTop"]), (3000, lab["BetaLeaf"]),
                (3000, lab["BetaTop"]), (2000, lab["GammaTop"])]
        rows.sort(key=lambda r: (-r[0], r[1]))
        want = ("Frames:\n     Count  Frame (each continuation or state machine once)\n" +
                "".join(f"{n:10d}  {text}\n" for n, text in rows) +
                "\nAwaiting:\n     Count  What the stacks' innermost frames wait for\n"
                f"      7000  {first['Alpha']}\n      3000  {first['Beta']}\n"
                "\nTasks:\n     Count  Status                       Type\n"
                f"     10000  {'WaitingForActivation':<28} {b.display(next(iter(o.tasks.values()))['type'])}\n\n" + summary)
        t.check_eq(out, want, f"{what}: --stats")
        # The heap pass runs in parts at once (a large heap: one per CPU); this small heap walked in
        # one part and in four (ASYNCDAC_HEAP_PARTS) must give what the default walk gives.
        for args in (["--stats"], ["--json"]):
            full = out if args == ["--stats"] else ps(core, *args, what=what)
            for parts in ("1", "4"):
                rc, got, err = t.run([t.CLI, "ps", core, *args], timeout=600, env={"ASYNCDAC_HEAP_PARTS": parts})
                t.check(rc == 0 and got == full, f"{what}: ps {args[0]} in {parts} heap parts differs from the default")
        # The stacks are resolved on helper threads too (a long listing: one per CPU but one), each
        # with its own target and runtime; this listing resolved here alone (the default under
        # ADAC_LIST_HELPER_MIN_STACKS) and with 1 and 3 helpers (ASYNCDAC_LIST_HELPERS) must be the
        # same, in every form that allows helpers, counts of resolved frames included (--json).
        for args in (["--stats"], ["--json"], [], ["--jsonl"], ["--coalesce"]):
            full = out if args == ["--stats"] else ps(core, *args, what=what)
            for helpers in ("1", "3"):
                rc, got, err = t.run([t.CLI, "ps", core, *args], timeout=600, env={"ASYNCDAC_LIST_HELPERS": helpers})
                t.check(rc == 0 and got == full,
                        f"{what}: ps {' '.join(args) or '(text)'} with {helpers} list helpers differs from the default")
        # The threads count the frames of the stacks they resolve (each node once, whichever thread
        # claims it), and with a filter each thread filters the stacks it resolves: the 5000 stacks
        # through AlphaMid, the same listed, counted and formatted on 1 and 3 helpers.
        out = ps(core, "--method", "AlphaMid", "--stats", what=what)
        if out is not None:
            rows = sorted(lab[m] for m in ("AlphaLeaf", "AlphaMid", "AlphaTop"))
            t.check_eq(out.split("\n\n")[0], "Frames:\n     Count  Frame (each continuation or state machine once)\n" +
                       "\n".join(f"{5000:10d}  {text}" for text in rows), f"{what}: --method AlphaMid --stats")
            for args in (["--stats"], ["--json"], [], ["--coalesce"]):
                full = out if args == ["--stats"] else ps(core, "--method", "AlphaMid", *args, what=what)
                for helpers in ("1", "3"):
                    rc, got, err = t.run([t.CLI, "ps", core, "--method", "AlphaMid", *args], timeout=600,
                                         env={"ASYNCDAC_LIST_HELPERS": helpers})
                    t.check(rc == 0 and got == full,
                            f"{what}: ps --method AlphaMid {' '.join(args)} with {helpers} list helpers differs")
            # Options before the core, with their values (-m's value is no core file).
            for args in (["--method", "AlphaMid", "--stats", core], ["-m", "AlphaMid", core, "-s"]):
                rc, got, err = t.run([t.CLI, "ps", *args], timeout=600)
                t.check(rc == 0 and got == out and err == "", f"{what}: ps {' '.join(args)}: rc {rc}, {err.strip()!r}")

    # Filters: they match any frame of a stack.
    def listed(*args):
        j = ps_json(core, *args, what=f"{what} {' '.join(args)}")
        return j["chains"] if j else []
    for method, n in (("AlphaMid", 5000), ("GammaTop", 2000), ("BetaTop", 3000), ("AlphaLeaf", 7000), ("Nope", 0)):
        got = listed("--method", method)
        t.check_eq(len(got), n, f"{what}: --method {method}")
        t.check(all(any(method in f["method"] for f in st["frames"]) for st in got), f"{what}: --method {method} frames")
    t.check_eq(len(listed("--type", TASK_INT)), 7000, f"{what}: --type {TASK_INT} (the awaited task's type)")
    t.check_eq(len(listed("--type", "RuntimeAsyncTaskContinuation", "--method", "BetaLeaf")), 3000,
               f"{what}: --type RuntimeAsyncTaskContinuation --method BetaLeaf")
    st = d["chains"][1234]
    mid = st["segments"][0]["links"][-1]
    for addr, why in ((st["task"]["address"], "its task"), (mid, "its last continuation"),
                      (st["awaiting"]["object"], "the task it awaits")):
        got = listed("--address", addr)
        t.check_eq([x["task"]["address"] for x in got], [st["task"]["address"]], f"{what}: --address {why}")
    got = listed("--address", st["task"]["address"], "--address", d["chains"][5]["task"]["address"])
    t.check_eq(sorted(x["task"]["address"] for x in got), sorted([st["task"]["address"], d["chains"][5]["task"]["address"]]),
               f"{what}: two --address")
    out = ps(core, "--method", "GammaTop", "--coalesce", what=what)
    if out is not None:
        t.check_eq(out, f"STACKS 1: 2000 chains\n[2000] {short(first['Gamma'])}\n"
                   f"[2000] {short(lab['AlphaLeaf'])}\n[2000] {short(lab['GammaTop'])}\n\n" + summary_line(2000, 0, len(o.conts), 20000, 0, 0, 1, 8000),
                   f"{what}: --method GammaTop --coalesce")
    # Text: one block per chain; the first block exactly.
    out = ps(core, what=what)
    if out is not None:
        blocks = out.split("\n\n")
        t.check_eq(len(blocks), 10001, f"{what}: text blocks (10,000 chains and the summary)")
        st = d["chains"][0]
        oc = o.chain_by_head[h(st["segments"][0]["head"])]
        want = (f"chain #0: task {a16(st['task']['address'])} {RA_TASK} [WaitingForActivation]\n" +
                b.expected_awaiting(first_awaited, tasks[first_awaited], "Task")[0] +
                "".join(b.expected_frame_line(i, b.frame_facts(o, f)) for i, f in enumerate(o.user_frames(oc))))
        t.check_eq(blocks[0] + "\n", want, f"{what}: first text block")
        t.check_eq(blocks[-1], summary, f"{what}: text summary")
    return d


def fanout():
    tmp = t.tmpdir()
    s = b.sample("fanout", "Release")
    try:
        core = b.make_core(s.pid, os.path.join(tmp, "fanout.core"))
        o = b.oracle(core, tmp)
        d = fanout_core(core, o, tmp, "fanout createdump core")
        # Live: the parked process allocates nothing, so it holds exactly the core's chains.
        t0 = time.perf_counter()
        live = ps_json(["--pid", str(s.pid)], what="fanout live")
        print(f"fanout live: ps --json took {time.perf_counter() - t0:.3f} s", flush=True)
        if live and d:
            def key(x):
                return [(st["task"]["address"], tuple(f["continuation"] for f in st["frames"])) for st in x["chains"]]
            t.check_eq(key(live), key(d), "fanout live: the core's chains")
            check_accounting(live, o, "fanout live")
        out = ps(["--pid", str(s.pid)], "--coalesce", what="fanout live")
        core_out = ps(core, "--coalesce", what="fanout core")
        if out is not None and core_out is not None:
            t.check_eq(out, core_out, "fanout live: --coalesce as from the core")
        os.unlink(core)
        gc = b.make_core(s.pid, os.path.join(tmp, "fanout.gcore"), "gcore")
        g = ps_json(gc, what="fanout gcore core")
        if g and d:
            t.check_eq([st["task"]["address"] for st in g["chains"]], [st["task"]["address"] for st in d["chains"]],
                       "fanout gcore core: the chains")
            check_accounting(g, o, "fanout gcore core")
        os.unlink(gc)
    finally:
        s.kill()


# ---- mixed --------------------------------------------------------------------------------------

def classic_await_lines(exp):
    """The await of each classic method of mixed, from expected.json: {"Type.Method": (source, line)} (the
    line from a thunk frame's classic_await_line or a chain's classic_frames; the source by the type)."""
    sources, lines = {}, {}
    for c in exp["chains"]:
        for f in c["frames"]:
            sources.setdefault(f["type"], f["source"])
            if "classic_await_line" in f:
                lines[f["method"]] = f["classic_await_line"]
        lines.update(c.get("classic_frames", {}))
    return {m: (sources[m.rsplit(".", 1)[0]], lines[m.rsplit(".", 1)[1]])
            for _, frames in MIXED for m, kind, _ in frames if kind == "classic"}


def mixed_core(core, o, config, tmp, what, thunks, classic):
    d = ps_json(core, what=what)
    if d is None:
        return
    check_accounting(d, o, what)
    t.check_eq(len(d["chains"]), 3, f"{what}: one stitched stack per documented chain")
    hidden = lambda f: (f["method_type"], f["method"]) in thunks  # noqa: E731
    oracle_objects = []
    for st, (name, frames) in zip(d["chains"], MIXED):
        w = f"{what}: {name}"
        got = [(f["method"].split("(")[0], f["kind"], f["module"]) for f in st["frames"]]
        if not t.check_eq(got, frames, f"{w}: frames (method, kind, module), innermost first"):
            continue
        check_chain_frames(st, o, w, hidden)
        for f, (m, kind, _) in zip(st["frames"], frames):
            if kind == "classic":
                t.check_eq(f["method"], m + MIXED_PARAMS.get(m, "(System.Threading.Tasks.Task<Int32>)"), f"{w}: {m} name")
                t.check_eq(f["state"], 0, f"{w}: {m} await state (its only await)")
                t.check_eq(f["note"], None, f"{w}: {m} note")
                src, line = classic[m]
                t.check_eq((f["line"], (f["file"] or "")[-len(src) - 1:]), (line, "/" + src),
                           f"{w}: {m} await line and file (expected.json)")
                t.check(f["il_offset"] is not None, f"{w}: {m} await IL offset (its yield point in MoveNext)")
        oracle_objects.append(st)
    if len(oracle_objects) != 3:
        return d
    # The stitching, edge by edge, through ClrMD: the task of each segment is awaited (its
    # m_continuationObject) by the next segment: a box itself, or a chain's head continuation.
    addrs = set()
    for st in d["chains"]:
        for seg in st["segments"]:
            addrs.add(seg["task"]["address"])
        if st["awaiting"]:
            addrs.add(st["awaiting"]["object"])
    objs = b.oracle_objects(core, tmp, sorted(addrs))["objects"]
    sms = {}
    if config == "Debug":  # class state machines: their <>1__state through ClrMD
        boxes = [seg["task"]["address"] for st in d["chains"] for seg in st["segments"] if seg["kind"] == "box"]
        sm_addrs = [objs[h(x)]["fields"]["StateMachine"] for x in boxes]
        sm_objs = b.oracle_objects(core, tmp, sm_addrs)["objects"]
        sms = {h(x): sm_objs[h(a)] for x, a in zip(boxes, sm_addrs)}
    for st, (name, frames) in zip(d["chains"], MIXED):
        w = f"{what}: {name}"
        segs = st["segments"]
        for callee, caller in zip(segs, segs[1:]):
            cont = h(objs[h(callee["task"]["address"])]["fields"]["m_continuationObject"])
            want = h(caller["task"]["address"]) if caller["kind"] == "box" else h(caller["head"])
            t.check_eq(cont, want, f"{w}: m_continuationObject of {callee['task']['address']} (ClrMD)")
        t.check_eq(h(objs[h(segs[-1]["task"]["address"])]["fields"]["m_continuationObject"]), 0,
                   f"{w}: the outermost task is awaited by nobody (ClrMD)")
        t.check_eq(st["task"]["address"], segs[-1]["task"]["address"], f"{w}: the stack's task is the outermost")
        for seg in segs:
            ot = objs[h(seg["task"]["address"])]
            t.check_eq((seg["task"]["type"], seg["task"]["state_flags"]),
                       (seg["task"]["type"], ot["fields"]["m_stateFlags"]), f"{w}: m_stateFlags of {seg['task']['address']}")
            if seg["kind"] == "box":
                sm = b.display(ot["type"]).split("+AsyncStateMachineBox<")[-1][:-1]
                f = next(x for x in st["frames"] if x.get("box") == seg["task"]["address"])
                t.check_eq(f["state_machine_type"], sm, f"{w}: state machine type of {seg['task']['address']}")
                if h(seg["task"]["address"]) in sms:
                    t.check_eq(f["state"], sms[h(seg["task"]["address"])]["fields"]["<>1__state"],
                               f"{w}: <>1__state (ClrMD)")
                    t.check_eq(h(f["state_machine"]), h(ot["fields"]["StateMachine"]), f"{w}: the state machine object")
                else:
                    t.check(isinstance(ot["fields"]["StateMachine"], dict), f"{w}: a struct state machine (ClrMD)")
        # What the innermost frame awaits: the gate (a task with the leaf in m_continuationObject).
        aw = h(st["awaiting"]["object"])
        leaf = segs[0]
        t.check_eq(h(objs[aw]["fields"]["m_continuationObject"]),
                   h(leaf["task"]["address"]) if leaf["kind"] == "box" else h(leaf["head"]),
                   f"{w}: the awaited task continues the innermost frame (ClrMD)")
        t.check_eq(st["awaiting"], b.expected_awaiting(aw, objs[aw], st["awaiting"]["field"])[1], f"{w}: awaiting")
    # Text, exactly.
    out = ps(core, what=what)
    if out is not None:
        blocks = []
        for i, st in enumerate(d["chains"]):
            text = (f"chain #{i}: task {a16(st['task']['address'])} {st['task']['type']} [WaitingForActivation]\n"
                    + b.expected_awaiting(h(st["awaiting"]["object"]), objs[h(st["awaiting"]["object"])],
                                          st["awaiting"]["field"])[0])
            n = 0
            for seg in st["segments"]:
                if seg["kind"] == "box":
                    f = next(x for x in st["frames"] if x.get("box") == seg["task"]["address"])
                    src, line = classic[f["method"].split("(")[0]]
                    text += (f"  async #{n}: {a16(f['box'])} {f['module']}`{f['method']} at {os.path.basename(src)}:{line}"
                             " [classic, state 0]\n")
                    n += 1
                else:
                    oc = o.chain_by_head[h(seg["head"])]
                    for f in o.user_frames(oc):
                        if not hidden(f):
                            text += b.expected_frame_line(n, b.frame_facts(o, f))
                            n += 1
            blocks.append(text)
        boxes = sum(1 for st in d["chains"] for seg in st["segments"] if seg["kind"] == "box")
        t.check_eq(boxes, 4, f"{what}: classic frames")
        want = "\n".join(blocks) + "\n" + summary_line(3, 0, len(o.conts), d["summary"]["pending_tasks"], 4, 0, 1)
        t.check_eq(out, want, f"{what}: text")
    # Filters match classic frames and state-machine types too.
    for args, names in ((("--method", "ClassicMiddle"), ["ra-classic-ra"]),
                        (("--method", "Classic"), ["ra-classic-ra", "classic-ra-classic"]),
                        (("--type", "<ClassicLeaf>d__"), ["classic-ra-classic"]),
                        (("--type", "AsyncStateMachineBox"), ["ra-classic-ra", "classic-ra-classic", "opt-out"]),
                        (("--address", d["chains"][1]["segments"][-1]["task"]["address"]), ["classic-ra-classic"]),
                        (("--address", d["chains"][2]["segments"][0]["head"]), ["opt-out"])):
        j = ps_json(core, *args, what=f"{what} {' '.join(args)}")
        if j:
            got = [MIXED[[st["task"]["address"] for st in d["chains"]].index(x["task"]["address"])][0] for x in j["chains"]]
            t.check_eq(got, names, f"{what}: {' '.join(args)}")
    out = ps(core, "--coalesce", what=what)
    if out is not None:
        # Each stack awaits its own TaskCompletionSource's task: three distinct promises.
        t.check(out.startswith(f"STACKS 1: 3 chains\n[3] {short('awaiting 3 distinct ' + TASK_INT)} (promise never completed)\n"),
                f"{what}: --coalesce: one group:\n{out}")
        t.check_eq(len(re.findall(r"^\+- \[1\] ", out, re.M)), 3, f"{what}: --coalesce: three innermost frames")
        src, line = classic["AsyncdacSamples.Classic.ClassicLeaf"]
        t.check(f"+- [1] Classic.ClassicLeaf(Task<Int32>) at "
                f"{os.path.basename(src)}:{line} [classic, state 0]\n" in out, f"{what}: --coalesce classic frame:\n{out}")
    return d


def mixed(config):
    exp = b.expected("mixed")
    thunks = set()
    for c in exp["chains"]:
        for f in c["frames"]:
            if f.get("thunk"):
                thunks.add((f["type"], f["method"]))
    tmp = t.tmpdir()
    s = b.sample("mixed", config)
    try:
        core = b.make_core(s.pid, os.path.join(tmp, "mixed.core"))
        o = b.oracle(core, tmp)
        d = mixed_core(core, o, config, tmp, f"mixed {config} core", thunks, classic_await_lines(exp))
        live = ps_json(["--pid", str(s.pid)], what=f"mixed {config} live")
        if live and d:
            t.check_eq(live["chains"], d["chains"], f"mixed {config} live: the core's stacks")
    finally:
        s.kill()


# ---- running ------------------------------------------------------------------------------------

def running():
    tmp = t.tmpdir()
    s = b.sample("running", "Release", mode="park")
    leaf = b.expected("running")["running"]["running_frame"]
    try:
        b.wait_parked(s.pid, s.tid)
        core = b.make_core(s.pid, os.path.join(tmp, "running.core"))
        o = b.oracle(core, tmp)
        resumed = {}
        # The resumed RunLeaf on the thread's stack, as ClrMD walks it: its return address.
        stack = b.oracle_objects(core, tmp, stacks=[s.tid])["stacks"].get(str(s.tid)) or []
        leaf_ip = next((b.h(f["ip"]) for f in stack if f.get("method") == f"{leaf['type']}.{leaf['method']}()"), None)
        for target, what in ((core, "running core"), (["--pid", str(s.pid)], "running live")):
            d = ps_json(target, what=what)
            if not d:
                continue
            check_accounting(d, o, what)
            th = o.dispatcher_thread(s.tid)
            rec = th["records"][0]
            t.check_eq(len(d["chains"]), 1, f"{what}: chains listed")
            st = d["chains"][0]
            t.check_eq((st["running"]["tid"], h(st["running"]["dispatcher"])), (s.tid, h(rec["address"])),
                       f"{what}: running on the READY thread, its dispatcher record")
            t.check_eq(h(st["task"]["address"]), h(rec["current_task"]), f"{what}: task (the record's CurrentTask)")
            t.check_eq(h(st["segments"][0]["head"]), h(rec["next_continuation"]), f"{what}: head (NextContinuation)")
            r = resumed[what] = st["running"].get("resumed") or {}
            t.check_eq((h(r.get("pc")), r.get("method"), r.get("module"), os.path.basename(r.get("file") or ""),
                        r.get("line")),
                       (leaf_ip, f"{leaf['type']}.{leaf['method']}()", "running.dll", os.path.basename(leaf["source"]),
                        leaf["line"]),
                       f"{what}: the method the chain resumed, RunLeaf at its call to StopHere (pc: the oracle's stack)")
            want = [b.frame_facts(o, f) for f in rec["frames"]]
            got = st["frames"]
            if t.check_eq(len(got), len(want), f"{what}: frames"):
                for i, (g, w) in enumerate(zip(got, want)):
                    b.check_frame_json(g, w, f"{what}: frame {i}")
            reasons = sorted((u["root"], u["reason"]) for u in d["unlisted"])
            stale = [u for u in d["unlisted"] if u["root"] == "stale"]
            t.check_eq(len(stale), 1, f"{what}: one stale continuation (the resumed RunLeaf)")
            if stale:
                c = o.conts[h(stale[0]["head"])]
                t.check_eq((c["method"] or {}).get("name"), "RunLeaf", f"{what}: the stale continuation is RunLeaf's")
                t.check_eq(h(c["next"]), h(rec["next_continuation"]), f"{what}: it leads into the running chain")
            t.check(all(r[1] in ("stale", "without frames") for r in reasons), f"{what}: unlisted {reasons}")
        out = ps(core, what="running core")
        if out is not None:
            first = out.split("\n", 1)[0]
            t.check(first.startswith(f"chain #0: running on thread {s.tid} (managed thread "), f"running core: header {first!r}")
            r = resumed.get("running core") or {}
            t.check_eq(out.split("\n")[1], f"  running: 0x{leaf_ip or 0:016x} running.dll`{leaf['type']}.{leaf['method']}() + "
                       f"0x{r.get('offset') or 0:x} at {os.path.basename(leaf['source'])}:{leaf['line']} (the method this chain resumed; bt "
                       f"shows what it calls)", "running core: the running line, first")
        out = ps(core, "--coalesce", what="running core")
        if out is not None:
            t.check(out.startswith("STACKS 1: 1 chain\n[1] running on a thread\n[1] RunningApp.RunMiddle() at Program.cs:"),
                    f"running core: --coalesce:\n{out}")
    finally:
        s.kill()


# ---- shapes -------------------------------------------------------------------------------------

def shapes():
    exp = b.expected("shapes")

    def short(m):
        return m if m and "<" not in m else "(lambda)"  # expected.json names no lambda / local function

    want_chains = sorted(tuple((short(f["method"]), f["await_line"]) for f in c["frames"]) for c in exp["chains"]
                         for _ in range(c.get("count", 1)))
    tmp = t.tmpdir()
    s = b.sample("shapes", "Release")
    try:
        core = b.make_core(s.pid, os.path.join(tmp, "shapes.core"))
        o = b.oracle(core, tmp)
        d = ps_json(core, what="shapes core")
        if not d:
            return
        check_accounting(d, o, "shapes core")
        # The stacks, per ClrMD: a chain whose task is awaited by another chain's head continuation
        # (its m_continuationObject) continues in that chain (an async lambda awaited by its caller).
        objs = b.oracle_objects(core, tmp, sorted(o.tasks))["objects"]
        heads = {h(x["head"]): a for a, x in o.tasks.items()}
        nxt = {hd: h(objs[task]["fields"]["m_continuationObject"]) for hd, task in heads.items()}
        nxt = {hd: n for hd, n in nxt.items() if n in heads}
        starts = sorted(set(heads) - set(nxt.values()))
        want_stacks = []
        for hd in starts:
            stack = [hd]
            while stack[-1] in nxt:
                stack.append(nxt[stack[-1]])
            want_stacks.append(tuple(stack))
        got_stacks = [tuple(h(seg["head"]) for seg in st["segments"]) for st in d["chains"]]
        t.check_eq(sorted(got_stacks), sorted(want_stacks), "shapes core: stacks (chain heads, innermost first)")
        got_chains = []
        for st in d["chains"]:
            check_chain_frames(st, o, f"shapes core: chain {st['index']}")
            t.check_eq(h(st["task"]["address"]), heads[h(st["segments"][-1]["head"])],
                       f"shapes core: chain {st['index']} task (the outermost chain's)")
            for seg in st["segments"]:
                names = []
                for f in frames_of(seg["links"], st["frames"]):
                    m = re.sub(r"<[^<>]*>$", "", f["method"].split("(")[0])
                    names.append((short(m.rsplit(".", 1)[-1]) if "+<>c" not in m else "(lambda)", f["line"]))
                got_chains.append(tuple(names))
        t.check_eq(sorted(got_chains), want_chains, "shapes core: (method, line) of every chain")
        out = ps(core, "--stats", what="shapes core")
        t.check(out is not None and f"{len(o.tasks):10d}  WaitingForActivation" in out, f"shapes core: --stats:\n{out}")
    finally:
        s.kill()


# ---- corrupt ------------------------------------------------------------------------------------

def corrupt():
    """A patched copy of a mixed core: a wild Next in a chain, and a deadlock (a task awaited by the
    frame it awaits). Everything else stays listed."""
    import struct
    import corecore
    tmp = t.tmpdir()
    core = b.sample_core("mixed", "Release", tmp)
    d = ps_json(core, what="corrupt: the original core")
    if not d or not t.check_eq(len(d["chains"]), 3, "corrupt: the original core's stacks"):
        return
    a, c = d["chains"][0], d["chains"][1]          # ra-classic-ra, classic-ra-classic
    ratop = a["segments"][2]                         # RuntimeAsyncTaskContinuation -> thunk -> RaTop
    thunk, ratop_cont = h(ratop["links"][1]), h(ratop["links"][2])
    leaf_box = h(c["segments"][0]["task"]["address"])
    ramiddle_task = h(c["segments"][1]["task"]["address"])
    top_box = h(c["segments"][2]["task"]["address"])
    img = corecore.Core(core)
    bad = img.unmapped_address()
    # Where the RaMiddle task keeps m_continuationObject (the ClassicTop box, per the original JSON).
    words = [img.read_u64(ramiddle_task + 8 * i) for i in range(1, 9)]
    if not t.check(words.count(top_box) == 1, f"corrupt: m_continuationObject of {ramiddle_task:#x} is not found"):
        return
    cont_off = 8 * (1 + words.index(top_box))
    bad_core = os.path.join(tmp, "mixed.bad.core")
    corecore.patched_copy(core, bad_core, [(thunk + 8, struct.pack("<Q", bad)),
                                           (ramiddle_task + cont_off, struct.pack("<Q", leaf_box))])
    os.unlink(core)
    j = ps_json(bad_core, what="corrupt")
    if not j:
        return
    stacks = {tuple((seg["kind"], h(seg.get("head") or seg["task"]["address"])) for seg in st["segments"]): st
              for st in j["chains"]}
    # 1. The wild Next ends its chain in an error; RaTop's continuation, now held by nothing, is
    #    listed on its own.
    key = tuple((seg["kind"], h(seg.get("head") or seg["task"]["address"])) for seg in a["segments"])
    st = stacks.get(key)
    if t.check(st is not None, f"corrupt: the ra-classic-ra stack is listed: {list(stacks)}"):
        seg = st["segments"][2]
        t.check_eq(([h(x) for x in seg["links"]], seg["end"]), ([h(ratop["links"][0]), thunk], "broken"),
                   "corrupt: the broken chain's links and end")
        t.check(f"{bad:#x}" in (seg["error"] or ""), f"corrupt: the error names {bad:#x}: {seg['error']!r}")
    st = stacks.get((("chain", ratop_cont),))
    if t.check(st is not None, "corrupt: RaTop's continuation listed on its own"):
        t.check_eq((st["segments"][0]["root"], st["task"], [f["method"].split("(")[0] for f in st["frames"]]),
                   ("unowned", None, ["AsyncdacSamples.MixedApp.RaTop"]), "corrupt: the orphaned RaTop")
    # 2. The deadlock: ClassicLeaf awaits RaMiddle, whose task now continues ClassicLeaf.
    st = stacks.get((("box", leaf_box), ("chain", h(c["segments"][1]["head"]))))
    # The cycle as one line, from ClassicLeaf (whose caller closes it) round to it.
    cycle = (rf"[^ ]*ClassicLeaf\(.*?\) at [^ ]+:\d+ awaits task 0x{ramiddle_task:016x} of [^ ]*RaMiddle\(.*?\) at [^ ]+:\d+, "
             rf"which awaits task 0x{leaf_box:016x} of [^ ]*ClassicLeaf\(.*?\) at [^ ]+:\d+")
    if t.check(st is not None, f"corrupt: the cycle is listed: {list(stacks)}"):
        t.check(st["cycle"], "corrupt: the stack is marked as a cycle")
        t.check(re.fullmatch(cycle, st.get("deadlock") or "") is not None, f"corrupt: --json deadlock {st.get('deadlock')!r}")
    st = stacks.get((("box", top_box),))
    t.check(st is not None and not st["cycle"], "corrupt: ClassicTop, awaiting nothing now, is its own stack")
    t.check((("chain", h(d["chains"][2]["segments"][0]["head"])),) not in stacks and len(j["chains"]) == 5,
            f"corrupt: five stacks: {list(stacks)}")
    out = ps(bad_core, what="corrupt")
    if out is not None:
        t.check(re.search(rf"^  deadlock: {cycle}$", out, re.M) is not None, f"corrupt: the deadlock line:\n{out}")
        t.check(f"  async #2: error: Next of Continuation {thunk:#x}: cannot read " in out,
                f"corrupt: the error line, after RaLeaf and ClassicMiddle:\n{out}")
    # 3. A Next cycle (RaTop's continuation made its own caller), filtered out: the unlisted
    #    chain's links are its one continuation, once.
    cyc_core = os.path.join(tmp, "mixed.cycle.core")
    corecore.patched_copy(bad_core, cyc_core, [(ratop_cont + 8, struct.pack("<Q", ratop_cont))])
    os.unlink(bad_core)
    j = ps_json(cyc_core, "--method", "NoSuchMethod", what="corrupt: a Next cycle")
    if j:
        un = [u for u in j["unlisted"] if h(u["head"]) == ratop_cont]
        t.check_eq([(u["root"], u["reason"], [h(x) for x in u["links"]]) for u in un],
                   [("unowned", "filtered", [ratop_cont])], "corrupt: the cycle's unlisted entry")


# ---- errors and lldb ----------------------------------------------------------------------------

def on_terminal(argv, delay, stdout_too=False):
    """Runs argv with stderr (and stdout, if stdout_too) on a pseudo-terminal; (stdout, what the
    terminal received)."""
    import pty
    import subprocess
    env = dict(os.environ)
    env.pop("ASYNCDAC_PROGRESS_DELAY", None)
    if delay is not None:
        env["ASYNCDAC_PROGRESS_DELAY"] = delay
    master, slave = pty.openpty()
    p = subprocess.Popen(argv, stdout=slave if stdout_too else subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    out = "" if stdout_too else p.stdout.read().decode()
    data = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    p.wait(timeout=120)
    os.close(master)
    return out, data.decode()


def errors():
    tmp = t.tmpdir()
    core = b.sample_core("nested", "Debug", tmp)
    for args, msg in ((["--coalesce", "--stats"], "give either --coalesce or --stats, not both"),
                      (["--locals", "--coalesce"], "--locals shows frames one by one: it cannot be combined with --coalesce"),
                      (["--address", "nothex"], "invalid value 'nothex' for option --address of 'ps'"),
                      (["--method"], "option --method of 'ps' requires a value"),
                      (["--bogus"], "unknown option '--bogus' for 'ps'"),
                      (["extra"], "unexpected argument 'extra' for 'ps'")):
        rc, out, err = t.run([t.CLI, "ps", core, *args], timeout=60)
        t.check(rc != 0 and out == "" and msg in err and err.count("\n") == 1,
                f"ps {' '.join(args)}: want a one-line error with {msg!r}, got rc={rc} out={out!r} err={err!r}")
    # The progress line: only on a terminal, only after ASYNCDAC_PROGRESS_DELAY (1 s by default)
    # seconds, erased at the end; stdout unchanged.
    plain = ps(core, what="progress: no terminal")
    for delay, want_progress in (("0", True), (None, False)):
        out, err = on_terminal([t.CLI, "ps", core], delay)
        t.check_eq(out, plain, f"progress (delay {delay}): stdout")
        if want_progress:
            t.check(err.startswith("\rasyncdac ps: scanning the heap: ") and "100%\x1b[K" in err and err.endswith("\r\x1b[K"),
                    f"progress (delay {delay}): stderr {err!r}")
        else:
            t.check_eq(err, "", f"progress (delay {delay}, a scan well under a second): stderr")
    # Output to the terminal the progress line is on erases the line first: no text is written
    # after a progress line on its line; the text is the listing's.
    for args in ([], ["--stats"]):
        _, term = on_terminal([t.CLI, "ps", core, *args], "0", stdout_too=True)
        parts = re.split(r"(\rasyncdac ps: [^\r\n]*?\x1b\[K|\r\x1b\[K)", term)
        drawn = [i for i, x in enumerate(parts) if x.startswith("\rasyncdac ps: ")]
        t.check(drawn, f"progress on one terminal (ps {' '.join(args)}): no progress line in {term[:300]!r}")
        for i in drawn:
            # (the split alternates text and control sequences: a draw's next text must be empty)
            t.check(i + 2 < len(parts) and parts[i + 1] == "",
                    f"progress on one terminal (ps {' '.join(args)}): text after a progress line: {parts[i:i + 3]!r}")
        text = "".join(x for x in parts if not x.startswith("\r")).replace("\r\n", "\n")
        t.check_eq(text, ps(core, *args, what="progress: one terminal"), f"progress on one terminal (ps {' '.join(args)}): the text")
    rc, out, err = t.run([t.CLI, "ps", "--help"], timeout=60)
    t.check(rc == 0 and "--coalesce" in out and "--stats" in out and "--method" in out, f"ps --help: {out[:300]!r}")


def lldb():
    tmp = t.tmpdir()
    core = b.sample_core("mixed", "Release", tmp)
    for args in ([], ["--coalesce"], ["--stats"], ["--method", "ClassicLeaf"]):
        cli = ps(core, *args, what=f"lldb: CLI ps {' '.join(args)}")
        cmd = " ".join(["async", "ps"] + args)
        out = b.run_lldb(b.lldb_target(core=core), [cmd], f"lldb {cmd}")
        if cli is not None:
            t.check_eq(b.lldb_output(out, cmd), cli, f"lldb: {cmd}")
    out = b.run_lldb([], ["help async ps"], "lldb help async ps")
    t.check("--coalesce" in out and "\nUsage: async ps " in out, f"lldb: help async ps:\n{out[-1500:]}")
    lldb_large(tmp)


def lldb_large(tmp):
    """A listing past 1 MiB, the fanout sample's 10,000 chains: at LLDB's prompt (`lldb -o`, as
    typed) the plugin has LLDB print it as it is written, not a line at a time once it ends
    (plugin/lldb/shim.cpp). The text is the CLI's wherever it goes: printed by lldb, read by a
    script from a result of its own at the prompt, returned to an IDE by lldb-dap's evaluate (no
    prompt there: the whole text is in the reply)."""
    from dapclient import DapClient, DapError
    core = b.sample_core("fanout", "Release", tmp)
    cli = ps(core, what="lldb, 10,000 chains: CLI")
    if cli is None:
        return
    t.check(len(cli) > 1 << 20, f"lldb, 10,000 chains: the listing passes 1 MiB ({len(cli)} bytes)")
    out = b.run_lldb(b.lldb_target(core=core), ["async ps"], "lldb async ps, 10,000 chains")
    t.check_eq(b.lldb_output(out, "async ps"), cli, "lldb: async ps of 10,000 chains (past 1 MiB: printed as it is written)")
    saved = os.path.join(tmp, "captured.txt")
    script = ("script r = lldb.SBCommandReturnObject(); "
              "lldb.debugger.GetCommandInterpreter().HandleCommand('async ps', r); "
              f"open({saved!r}, 'w').write(r.GetOutput())")
    b.run_lldb(b.lldb_target(core=core), [script], "lldb: a script reads async ps into its result")
    with open(saved) as f:
        t.check_eq(f.read(), cli, "lldb: the result a script gave async ps holds the listing")
    lldb_dap = os.path.join(os.path.dirname(os.path.realpath(shutil.which(t.LLDB) or t.LLDB)), "lldb-dap")
    dap = DapClient([lldb_dap], timeout=300)
    try:
        dap.initialize()
        dap.attach({"initCommands": [f"plugin load {t.PLUGIN}"], "coreFile": core, "program": b.dn()["DN_HOST"]})
        frame = dap.stack(dap.threads()[0]["id"])[0]["id"]
        r = dap.evaluate("`async ps", frame, context="repl")
        t.check_eq(r.get("body", {}).get("result"), cli, "lldb-dap: evaluate `async ps replies with the listing")
    except DapError as e:
        t.fail(f"lldb-dap: {e}\n{dap.dump()}")
    finally:
        dap.close()


# ---- --release -----------------------------------------------------------------------------------

def thread_state(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def pstacks_of(doc, tid):
    """The frames (innermost first) of thread tid in pstacks' JSON, None when it has none."""
    def walk(node, outer):
        frames = node["frames"] + outer
        if any(x["tid"] == tid for x in node["tids"]):
            return frames
        return next((f for c in node["callees"] for f in [walk(c, frames)] if f), None)
    return next((f for r in (doc or {}).get("roots", []) for f in [walk(r, [])] if f), None)


def release():
    """ps --pid --release: the listing of a process held for the whole analysis, from a copy taken
    while it was held (a chain running on a thread included); the process runs on afterwards."""
    for name, mode in (("fanout", None), ("running", "park")):
        s = b.sample(name, "Release", mode=mode)
        try:
            for args in ([], ["--coalesce"], ["--json"]):
                held = ps(["--pid", str(s.pid)], *args, what=f"{name} live")
                copied = ps(["--pid", str(s.pid), "--release"], *args, what=f"{name} live, --release")
                if held is not None and copied is not None:
                    t.check_eq(copied, held, f"{name}: ps {' '.join(args)} --release lists what holding it lists")
                # The copy, and the process held, can be read on several threads: a listing helper
                # reads it through a target of its own (a process cannot be attached twice: the
                # helper's borrows the holder's, with the registers the holder took).
                for how in (["--release"], []):
                    rc, helped, err = t.run([t.CLI, "ps", "--pid", str(s.pid), *how, *args], timeout=600,
                                            env={"ASYNCDAC_LIST_HELPERS": "1"})
                    t.check(rc == 0 and err == "" and helped == held,
                            f"{name}: ps {' '.join(how + args)} with a list helper lists what holding it lists "
                            f"(rc {rc}, {err.strip()[-300:]!r})")
            # ... and the helper did run (a reopen refused would list the same on one thread).
            for how in (["--release"], []):
                rc, out, err = t.run([t.CLI, "ps", "--pid", str(s.pid), *how, "--jsonl", "--timings"], timeout=600,
                                     env={"ASYNCDAC_LIST_HELPERS": "1"})
                summary = json.loads(out.splitlines()[-1])["summary"] if rc == 0 and out else {}
                t.check_eq(summary.get("list_threads"), 2,
                           f"{name}: ps {' '.join(how)} --jsonl --timings: the listing and its helper resolved the "
                           f"stacks ({err.strip()[-300:]!r})")
            # The copy's threads are unwound from it: native frames and all, as the held process's
            # (the running sample, parked: its threads stay where they are).
            if name == "running":
                b.wait_parked(s.pid, s.tid)
            # (Only the parked thread: the runtime's other threads wake up now and then.)
            if name == "running":
                held = b.cli(["bt", "--pid", str(s.pid), "--thread", str(s.tid)])
                copied = b.cli(["bt", "--pid", str(s.pid), "--release", "--thread", str(s.tid)])
                t.check(held[0] == 0 and "libc.so.6`" in held[1] and copied == held,
                        f"{name}: bt --release of the parked thread shows what holding it shows:\n{copied[1][-2000:]}"
                        f"{copied[2]}")
                held, copied = (pstacks_of(b.cli_json(["pstacks", "--pid", str(s.pid), "--all"] + how, "pstacks"), s.tid)
                                for how in ([], ["--release"]))
                t.check(held and "libc.so.6`start_thread" in held and held == copied,
                        f"{name}: pstacks --all --release: the parked thread's frames, as holding it: {copied}")
            t.check(thread_state(s.pid) in "RS", f"{name}: the process runs on after --release")
        finally:
            s.kill()
    rc, _, err = b.cli(["ps", b.sample_core("nested", "Debug", t.tmpdir()), "--release"])
    t.check_eq(rc, 2, f"ps <core> --release: a usage error ({err.strip()})")


MAX_GC_RERUNS = 8  # dac/base/limits.h


def gc():
    """ps --pid (held, and --release) and dumpheap --pid (--stat, and the listing) on a process that collects garbage
    back to back (running --mode gcloop): stopped inside a collection (StructureInvalidCount != 0),
    it is let run a moment and stopped again (copied again) until it is out of it, then listed as any
    other stop: the running chain's
    frames, no heap error. Only when all 8 tries land in a collection (about half the stops do here,
    so now and then all 8) is it walked as it is, and then its JSON and any error say so. bt --locals
    (every command settles first) reads the running chain's saved locals exactly. The process runs
    on."""
    want_frames = [(f"{f['type']}.{f['method']}()", f["await_line"])
                   for f in b.expected("running")["running"]["dispatcher_frames"]]
    s = b.sample("running", "Release", mode="gcloop")
    pid = str(s.pid)
    try:
        counts = []
        for cmd, member, runs in ((["ps", "--json"], "heap_reruns", 25), (["ps", "--json", "--release"], "heap_reruns", 15),
                                  (["dumpheap", "--stat", "--json"], "reruns", 25),
                                  (["dumpheap", "--json"], "reruns", 10)):
            for i in range(runs):
                what = f"gcloop: {' '.join(cmd)} run {i}"
                rc, out, err = t.run([t.CLI, cmd[0], "--pid", pid, *cmd[1:]], timeout=120)
                try:
                    d = b.document(out, cmd[0])
                except (ValueError, KeyError) as e:
                    t.fail(f"{what}: rc {rc}, not the expected JSON ({e}): {out[:300]!r} {err.strip()[-300:]!r}")
                    continue
                n = d[member] if member in d else d["scan"][member]
                counts.append(n)
                if n == MAX_GC_RERUNS and (rc != 0 or not d["structures_valid"]):
                    t.check(rc == 0 or "let run and stopped again 8 times (first: " in err,
                            f"{what}: the tries spent, walked as it was: rc {rc}, {err.strip()[-300:]!r}")
                    continue
                t.check(rc == 0 and err == "" and d["structures_valid"],
                        f"{what}: walked out of a collection: rc {rc}, reruns {n}, "
                        f"structures_valid {d['structures_valid']}, {err.strip()[-300:]!r}")
                if cmd[0] == "dumpheap":
                    t.check(d["errors"] == [] and d["total"]["objects"] > 300000,
                            f"{what}: every object, no error: {d['errors']}, {d['total']}")
                    if "objects" in d:
                        # The listing walk came after the count walk that let the process out of
                        # the collection: it lists what it counts.
                        t.check_eq(len(d["objects"]), d["total"]["objects"], f"{what}: every object counted is listed")
                    continue
                t.check_eq(d["heap_errors"], [], f"{what}: heap errors")
                frames = [(f["method"], f["line"]) for c in d["chains"] for f in c["frames"]]
                t.check_eq(frames, want_frames, f"{what}: the running chain's frames")
        # bt reads the running chain's saved locals: out of a collection too (the command settles
        # first), so they read as the program wrote them.
        for i in range(10):
            rc, out, err = t.run([t.CLI, "bt", "--pid", pid, "--thread", str(s.tid), "--locals"], timeout=120)
            got = [line.strip() for line in out[out.find("  async #0:"):].splitlines()]
            want = [f"(long) midLocal = 909", "(string) topLocal = \"top-running\""]
            t.check(rc == 0 and err == "" and [x for x in got if x.startswith("(") and " = " in x] == want and
                    [re.sub(r".*`(.*) \+ 0x[0-9a-f]+ at Program.cs:(\d+) .*", r"\1:\2", x)
                     for x in got if x.startswith("async #")] == [f"{m}:{n}" for m, n in want_frames],
                    f"gcloop: bt run {i}: rc {rc}, {err.strip()[-300:]!r}:\n{out[-1500:]}")
        t.check(sum(counts) > 0, f"gcloop: stopped inside a collection at least once in {len(counts)} stops: {counts}")
        t.check(sum(n < MAX_GC_RERUNS for n in counts) >= len(counts) // 2, f"gcloop: reruns {counts}")
        t.check(thread_state(s.pid) in "RS", "gcloop: the process runs on")
    finally:
        s.kill()


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else "fanout"
    if what == "fanout":
        fanout()
    elif what == "mixed":
        mixed(sys.argv[2] if len(sys.argv) > 2 else "Debug")
    elif what == "running":
        running()
    elif what == "shapes":
        shapes()
    elif what == "corrupt":
        corrupt()
    elif what == "errors":
        errors()
    elif what == "lldb":
        lldb()
    elif what == "release":
        release()
    elif what == "gc":
        gc()
    else:
        t.fail(f"unknown test {what}")
    t.finish()


if __name__ == "__main__":
    main()
