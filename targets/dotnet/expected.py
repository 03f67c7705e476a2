#!/usr/bin/env python3
"""Writes (or checks) targets/dotnet/<scenario>/expected.json, the facts each sample guarantees.

    python3 targets/dotnet/expected.py --write   # regenerate every expected.json
    python3 targets/dotnet/expected.py --check   # exit 1 if any expected.json is stale

The facts are written here by hand, except the source lines of the awaits, which are taken from
the "// @await <key>" (and "// @running <key>") markers in the sources, so they cannot drift.

expected.json schema (all scenarios):
  scenario, ready{...}: key=value pairs of the READY line besides pid/config/runtime
  assemblies: files built into build/dotnet/apps/<rt>/<Config>/<scenario>/
  chains[]: one entry per chain shape (runtime-async segment reachable through Continuation.Next)
    name, count: how many such chains exist in the process
    head: type of the infrastructure continuation that precedes the frames (DiagnosticIP == NULL),
          or null when the first frame is the head (custom awaiters hold an Action instead)
    task: type of the task whose m_stateObject is the head, null if none
    frames[]: callee -> caller through Next, runtime-created continuations only:
      method: simple method name (ClrMD appends "[[inst]]" for generic methods; compare the prefix),
      method_prefix: instead of method, for compiler-generated names (lambdas, local functions),
      type: declaring type as the DAC names it, source: file relative to targets/dotnet,
      await_line: line of the await that suspended this frame (DiagnosticIP -> IL -> PDB line),
      static, generic{}, shared_code (true: runs __Canon code and keeps a generic context),
      args[] / locals[]: {name, type, value} known values live across the await.
  Values: JSON scalars, or {"char": "A", "code": 65}, {"enum": T, "name": N, "value": V},
  {"boxed": T, "value": V}, {"class": T, "fields": {...}}, {"struct": T, "fields": {...}},
  {"array": elementType, "values": [...]}.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RTC = "System.Runtime.CompilerServices.RuntimeAsyncTaskContinuation"
VTSC = "System.Runtime.CompilerServices.AsyncHelpers+ValueTaskSourceContinuation"
TASK_INT = "System.Runtime.CompilerServices.AsyncHelpers+RuntimeAsyncTask<System.Int32>"
TASK_VOID = "System.Runtime.CompilerServices.AsyncHelpers+RuntimeAsyncTask<System.Threading.Tasks.VoidTaskResult>"

_markers = {}


def line(source, key, kind="await"):
    """Line of the '// @<kind> <key>' marker in targets/dotnet/<source>."""
    if source not in _markers:
        found = {}
        with open(os.path.join(HERE, source), encoding="utf-8") as f:
            for n, text in enumerate(f, 1):
                m = re.search(r"//\s*@(await|running)\s+(\S+)\s*$", text)
                if m:
                    k = (m.group(1), m.group(2))
                    if k in found:
                        raise SystemExit(f"{source}:{n}: duplicate marker @{k[0]} {k[1]}")
                    found[k] = n
        _markers[source] = found
    try:
        return _markers[source][(kind, key)]
    except KeyError:
        raise SystemExit(f"{source}: no marker '// @{kind} {key}'") from None


def v(t, value):
    return {"type": t, "value": value}


def loc(name, t, value):
    return {"name": name, "type": t, "value": value}


def frame(method, type_, source, key, **kw):
    f = {"method": method, "type": type_, "source": source, "await_line": line(source, key)}
    f.update(kw)
    return f


def chain(name, count, frames, head=RTC, task=TASK_INT, **kw):
    c = {"name": name, "count": count, "head": head, "task": task, "frames": frames}
    c.update(kw)
    return c


NS = "AsyncdacSamples."


def nested():
    src = "nested/Program.cs"
    payload = lambda value, name: {"class": NS + "Payload", "fields": {"Value": value, "Name": name}}
    pair = lambda i, tag, c: {"struct": NS + "Pair", "fields": {"Id": i, "Tag": tag, "Count": c}}
    color = lambda n, val: {"enum": NS + "Color", "name": n, "value": val}
    c = frame("C", NS + "NestedApp", src, "C", static=True, generic={"T": "System.String"}, shared_code=True,
              args=[loc("cGeneric", "T", "gen-c"), loc("gate", "System.Threading.Tasks.Task<System.Int32>", {"class": "System.Threading.Tasks.Task<System.Int32>", "note": "s_gate.Task"})],
              locals=[loc("cInt", "System.Int32", 7), loc("cLong", "System.Int64", 9223372036854775807),
                      loc("cDouble", "System.Double", 1e100), loc("cBool", "System.Boolean", True),
                      loc("cChar", "System.Char", {"char": "\u00e9", "code": 233}),
                      loc("cColor", NS + "Color", color("Red", 1)), loc("cString", "System.String", "gamma"),
                      loc("cObj", "System.Object", "obj-c"), loc("cPayload", NS + "Payload", payload(3, "p-c")),
                      loc("cPair", NS + "Pair", pair(33, {"boxed": "System.Int64", "value": 34}, 35)),
                      loc("cLocalT", "T", "gen-c"), loc("cArray", "System.String[]", {"array": "System.String", "values": ["x", "y"]})])
    b = frame("B", NS + "Holder<System.Int32>", src, "B", static=False, generic={"T": "System.Int32"}, shared_code=False,
              this={"class": NS + "Holder<System.Int32>", "fields": {"Field": 500, "Label": "holder-label"}},
              args=[loc("bGeneric", "T", 77)],
              locals=[loc("bInt", "System.Int32", -200), loc("bLong", "System.Int64", -9876543210),
                      loc("bDouble", "System.Double", -0.5), loc("bBool", "System.Boolean", False),
                      loc("bChar", "System.Char", {"char": "b", "code": 98}),
                      loc("bColor", NS + "Color", color("Blue", 3)), loc("bString", "System.String", "beta"),
                      loc("bObj", "System.Object", {"boxed": "System.Double", "value": 2.5}),
                      loc("bPayload", NS + "Payload", payload(2, "p-b")),
                      loc("bPair", NS + "Pair", pair(22, "tag-b", 23)), loc("bLocalT", "T", 77),
                      loc("bArray", "System.Int64[]", {"array": "System.Int64", "values": [10, 20]})])
    a = frame("A", NS + "NestedApp", src, "A", static=True,
              args=[loc("seed", "System.Int32", 1)],
              locals=[loc("aInt", "System.Int32", 42), loc("aLong", "System.Int64", 1234567890123),
                      loc("aDouble", "System.Double", 3.25), loc("aBool", "System.Boolean", True),
                      loc("aChar", "System.Char", {"char": "A", "code": 65}),
                      loc("aColor", NS + "Color", color("Green", 2)), loc("aString", "System.String", "alpha"),
                      loc("aObj", "System.Object", {"boxed": "System.Int32", "value": 99}),
                      loc("aPayload", NS + "Payload", payload(1, "p-a")),
                      loc("aPair", NS + "Pair", pair(11, "tag-a", 12)),
                      loc("aArray", "System.Int32[]", {"array": "System.Int32", "values": [1, 2, 3]}),
                      loc("holder", NS + "Holder<System.Int32>", {"class": NS + "Holder<System.Int32>", "fields": {"Field": 500, "Label": "holder-label"}})])
    return {
        "ready": {"chains": 1},
        "assemblies": ["nested.dll"],
        "awaiting": "NestedApp.s_gate.Task (TaskCompletionSource<int>, never completed)",
        "chains": [chain("A->B->C", 1, [c, b, a])],
    }


def deep():
    src = "deep/Program.cs"
    return {
        "ready": {"chains": 1, "depth": 1000},
        "assemblies": ["deep.dll"],
        "chains": [chain("recursion", 1, [
            frame("Recurse", NS + "DeepApp", src, "Recurse.leaf", static=True, repeat=1, depth_arg=0,
                  args=[loc("depth", "System.Int32", 0)], locals=[loc("marker", "System.Int32", 1)]),
            frame("Recurse", NS + "DeepApp", src, "Recurse.inner", static=True, repeat=999,
                  args=[loc("depth", "System.Int32", "k (1..999, the frame's index from the head)")],
                  locals=[loc("marker", "System.Int32", "k * 3 + 1")]),
        ], total_frames=1000)],
    }


def fanout():
    src = "fanout/Program.cs"
    leaf = frame("AlphaLeaf", NS + "FanoutApp", src, "AlphaLeaf", static=True,
                 args=[loc("id", "System.Int32", "i")], locals=[loc("leafLocal", "System.Int32", "i + 100000")])
    return {
        "ready": {"chains": 10000, "alpha": 5000, "beta": 3000, "gamma": 2000},
        "assemblies": ["fanout.dll"],
        "chain_index_rule": "chain i (creation order): i % 10 in 0..4 -> Alpha, 5..7 -> Beta, 8..9 -> Gamma",
        "chains": [
            chain("Alpha", 5000, [leaf,
                                  frame("AlphaMid", NS + "FanoutApp", src, "AlphaMid", static=True,
                                        locals=[loc("midLocal", "System.Int64", "i * 2")]),
                                  frame("AlphaTop", NS + "FanoutApp", src, "AlphaTop", static=True,
                                        locals=[loc("topLocal", "System.String", "alpha-<i>")])]),
            chain("Beta", 3000, [frame("BetaLeaf", NS + "FanoutApp", src, "BetaLeaf", static=True,
                                       locals=[loc("leafLocal", "System.Double", "i + 0.5")]),
                                 frame("BetaTop", NS + "FanoutApp", src, "BetaTop", static=True,
                                       locals=[loc("topLocal", "System.Object", "boxed int i")])]),
            chain("Gamma", 2000, [leaf,
                                  frame("GammaTop", NS + "FanoutApp", src, "GammaTop", static=True,
                                        locals=[loc("topLocal", "System.Int32", "-i")])]),
        ],
    }


def shapes():
    src = "shapes/Program.cs"
    S = NS + "ShapesApp"
    f = lambda m, key, **kw: frame(m, kw.pop("type", S), src, key, **kw)
    return {
        "ready": {"chains": 13},
        "assemblies": ["shapes.dll"],
        "chains": [
            chain("ValueTask", 1, [f("VtLeaf", "VtLeaf", static=True, locals=[loc("vtLocal", "System.Int32", 314)]),
                                   f("VtTop", "VtTop", static=True)], head=VTSC),
            chain("Custom", 1, [f("CustomLeaf", "CustomLeaf", static=True, locals=[loc("customLocal", "System.String", "custom")]),
                                f("CustomTop", "CustomTop", static=True)], head=None,
                  note="NeverAwaiter.UnsafeOnCompleted holds the Action; no infrastructure continuation"),
            chain("ConfigureFalse", 1, [f("ConfigureFalse", "ConfigureFalse", static=True, locals=[loc("cfgLocal", "System.Int32", 271)]),
                                        f("ConfigureTop", "ConfigureTop", static=True)]),
            chain("AwaitInTry", 1, [f("AwaitInTry", "AwaitInTry", static=True, locals=[loc("tryLocal", "System.Int32", 1001)]),
                                    f("TryTop", "TryTop.0", static=True, args=[loc("which", "System.Int32", 0)])]),
            chain("AwaitInCatch", 1, [f("AwaitInCatch", "AwaitInCatch", static=True,
                                        locals=[loc("catchLocal", "System.Int32", 1002),
                                                loc("ex", "System.InvalidOperationException", {"class": "System.InvalidOperationException", "fields": {"_message": "in-catch"}})]),
                                      f("TryTop", "TryTop.1", static=True, args=[loc("which", "System.Int32", 1)])]),
            chain("AwaitInFinally", 1, [f("AwaitInFinally", "AwaitInFinally", static=True, locals=[loc("finallyLocal", "System.Int32", 1003)]),
                                        f("TryTop", "TryTop.2", static=True, args=[loc("which", "System.Int32", 2)])]),
            chain("Loop", 1, [f("LoopAwaits", "LoopAwaits.park", static=True,
                                locals=[loc("sum", "System.Int32", 3), loc("i", "System.Int32", 3)],
                                other_awaits=[line(src, "LoopAwaits.yield")]),
                              f("LoopTop", "LoopTop", static=True)], head=None,
                  note="parked at iteration i == 3 after three real Task.Yield suspensions; NeverAwaiter holds the Action"),
            chain("GenericValue", 1, [f("GenericWait", "GenericWait", static=True, generic={"T": "System.Int32"}, shared_code=False,
                                        locals=[loc("held", "T", 5)]),
                                      f("GenericValueTop", "GenericValueTop", static=True)]),
            chain("GenericRef", 1, [f("GenericWait", "GenericWait", static=True, generic={"T": "System.String"}, shared_code=True,
                                      locals=[loc("held", "T", "generic-string")]),
                                    f("GenericRefTop", "GenericRefTop", static=True)]),
            chain("GenericRef2", 1, [f("GenericWait", "GenericWait", static=True, generic={"T": NS + "Box"}, shared_code=True,
                                       locals=[loc("held", "T", {"class": NS + "Box", "fields": {"Value": 6}})]),
                                     f("GenericRef2Top", "GenericRef2Top", static=True)]),
            chain("GenericClass", 1, [f("Work", "GenericWorker.Work", type=NS + "GenericWorker<System.__Canon>", static=False,
                                        generic={"T": "System.String"}, shared_code=True,
                                        this={"class": NS + "GenericWorker<System.String>", "fields": {"Item": "worker-item"}},
                                        locals=[loc("copy", "T", "worker-item")]),
                                      f("GenericClassTop", "GenericClassTop", static=True)]),
            chain("Lambda", 1, [{**f(None, "Lambda", type=S + "+<>c__DisplayClass21_0", static=False,
                                     locals=[loc("lambdaLocal", "System.Int32", 55)]), "method": None, "method_prefix": "<LambdaTop>b__"}]),
            chain("LambdaTop", 1, [f("LambdaTop", "LambdaTop", static=True)],
                  note="the lambda returns a Task through a delegate call, so LambdaTop awaits a Task: a separate chain"),
            chain("LocalFunction", 1, [{**f(None, "LocalFunction", type=S + "+<>c__DisplayClass22_0", static=False,
                                            args=[loc("arg", "System.Int32", 66)], locals=[loc("localLocal", "System.Int32", 67)]),
                                        "method": None, "method_prefix": "<LocalFunctionTop>g__Local|"},
                                       f("LocalFunctionTop", "LocalFunctionTop", static=True)]),
        ],
    }


def running():
    src = "running/Program.cs"
    R = NS + "RunningApp"
    return {
        "ready": {"chains": 1, "mode": "park|sigstop|break|failfast|throw|segv|gcloop", "tid": "OS thread id of the running thread"},
        "assemblies": ["running.dll"],
        "running": {
            "thread": "the READY line's tid",
            "running_frame": {"method": "RunLeaf", "type": R, "source": src, "line": line(src, "RunLeaf", "running"),
                              "locals": [loc("leafLocal", "System.Int32", 808)]},
            "stack_contains": ["RunningApp.ParkRunning", "RunningApp.StopHere", "RunningApp.RunLeaf", "IL_STUB_AsyncResume",
                               "DispatchContinuations"],
            "dispatcher": "AsyncDispatcherInfo.t_current on that thread; NextContinuation -> frames below",
            "dispatcher_frames": [
                frame("RunMiddle", R, src, "RunMiddle", static=True, locals=[loc("midLocal", "System.Int64", 909)]),
                frame("RunTop", R, src, "RunTop", static=True, locals=[loc("topLocal", "System.String", "top-running")]),
            ],
            "first_await": frame("RunLeaf", R, src, "RunLeaf", static=True),
            "note": "the RunLeaf continuation from the Task.Delay suspension may still be on the heap (unreachable) "
                    "with Next = RunMiddle's continuation; no task has the chain in m_stateObject while it runs",
        },
        "chains": [],
    }


def mixed():
    M, C, L = NS + "MixedApp", NS + "Classic", NS + "RaLib"
    ps, cs, rs = "mixed/Program.cs", "mixed/classic/Classic.cs", "mixed/ralib/RaLib.cs"
    return {
        "ready": {"chains": 3},
        "assemblies": ["mixed.dll", "MixedClassic.dll", "RaLib.dll"],
        "runtime_async": {"mixed.dll": True, "RaLib.dll": True, "MixedClassic.dll": False,
                          "MixedApp.OptedOutMiddle": False},
        "note": "runtime-async code awaiting a classic Task-returning method calls the runtime's async thunk for it "
                "(a runtime-created continuation whose DiagnosticIP resolves to the classic method, e.g. ClassicMiddle "
                "and OptedOutMiddle); classic state machines themselves are not continuations",
        "chains": [
            chain("ra-classic-ra: RaLeaf", 1, [frame("RaLeaf", L, rs, "RaLeaf", static=True, locals=[loc("raLeafLocal", "System.Int32", 4001)])]),
            chain("ra-classic-ra: thunk(ClassicMiddle)->RaTop", 1, [
                {"method": "ClassicMiddle", "type": C, "thunk": True, "source": cs, "classic_await_line": line(cs, "ClassicMiddle")},
                frame("RaTop", M, ps, "RaTop", static=True, locals=[loc("raTopLocal", "System.Int32", 6001)])]),
            chain("classic-ra-classic: RaMiddle", 1, [frame("RaMiddle", L, rs, "RaMiddle", static=True,
                                                            locals=[loc("raMiddleLocal", "System.Int64", 4002)])],
                  classic_frames={"ClassicLeaf": line(cs, "ClassicLeaf"), "ClassicTop": line(cs, "ClassicTop")}),
            chain("opt-out: RaLeaf2", 1, [frame("RaLeaf2", M, ps, "RaLeaf2", static=True, locals=[loc("raLeaf2Local", "System.Int32", 6002)])]),
            chain("opt-out: thunk(OptedOutMiddle)->RaTop2", 1, [
                {"method": "OptedOutMiddle", "type": M, "thunk": True, "source": ps, "classic_await_line": line(ps, "OptedOutMiddle")},
                frame("RaTop2", M, ps, "RaTop2", static=True, locals=[loc("raTop2Local", "System.Int32", 6004)])]),
        ],
    }


SCENARIOS = {"nested": nested, "deep": deep, "fanout": fanout, "shapes": shapes, "running": running, "mixed": mixed}


def render(name):
    doc = {"scenario": name}
    doc.update(SCENARIOS[name]())
    doc["generated_by"] = "targets/dotnet/expected.py"
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def main(argv):
    mode = argv[1] if len(argv) > 1 else "--check"
    stale = []
    for name in SCENARIOS:
        path = os.path.join(HERE, name, "expected.json")
        text = render(name)
        if mode == "--write":
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        else:
            try:
                with open(path, encoding="utf-8") as f:
                    if f.read() != text:
                        stale.append(path)
            except FileNotFoundError:
                stale.append(path)
    if stale:
        print("expected.py: stale (run targets/dotnet/expected.py --write): " + " ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
