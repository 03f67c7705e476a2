"""lldb.dap.<mode>: an IDE's view of asyncdac through lldb-dap (issue 11), over stdio as VS Code
drives it: initialize, attach (coreFile + program, or pid) with the plugin loaded and pending chains
shown as threads (initCommands), configurationDone, threads, stackTrace, scopes, evaluate.

    test_lldb_dap.py core    createdump cores of the running and nested samples
    test_lldb_dap.py live    the same samples, attached by pid
    test_lldb_dap.py step    the running sample launched by lldb-dap, stopped by Debugger.Break,
                             then stepped by instruction as an IDE's "step over" does

Checked, exactly:
  - threads: the process's threads, plus one per pending chain named
    "async: <innermost method> [<task status>]";
  - stackTrace of the thread running a chain: its frames as the plugin shows them in LLDB (names
    equal to `thread backtrace`'s, same order and pcs), the async frames right after the dispatch
    loop, the loop and resume stub presented "subtle" (LLDB: artificial);
  - stackTrace of a chain thread: the chain's frames (C -> B -> A), each with its own id;
  - (core) with `async threads enable --max 2` on the mixed sample's 5 chains: 2 chain threads, then
    "async: 3 more pending chains, not shown as threads" (id 2^53 - 1), its one frame the note;
  - evaluate on an async frame (watch, hover and repl contexts) gives the awaited local's value;
    with the plugin's symbol file loaded (stopCommands), structs, objects, enums and arrays of
    references typed from it, their fields and elements as the value's variables.
  - after steps (lldb-dap's `next`, instruction granularity): the stopped thread's stackTrace
    still has the async frames after the dispatch loop, and evaluate on them still answers.
A live process is attached with stopOnEntry (else lldb-dap may let it run after the attach).
"""
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from dapclient import DapClient, DapError  # noqa: E402
from lldbframes import QUIET, frames_of, raw_section, selected_index  # noqa: E402

# lldb-dap of the same LLDB: next to lldb-22's real binary (/usr/lib/llvm-22/bin/).
LLDB_DAP = os.environ.get("ADAC_LLDB_DAP") or os.path.join(
    os.path.dirname(os.path.realpath(shutil.which(t.LLDB) or t.LLDB)), "lldb-dap")
INIT = [f"plugin load {t.PLUGIN}", "async threads enable"]


def session(target, stop=(), init=INIT):
    dap = DapClient([LLDB_DAP], timeout=120)
    dap.initialize()
    args = {"initCommands": init}
    if stop:
        args["stopCommands"] = list(stop)
    if "core" in target:
        args.update({"coreFile": target["core"], "program": b.dn()["DN_HOST"]})
    else:
        args.update({"pid": target["pid"], "stopOnEntry": True})  # stay stopped after the attach
    dap.attach(args)
    return dap


def lldb_frames(target, tid):
    """[(pc, name)] of `thread backtrace` for thread tid in lldb-22 with the plugin: what lldb-dap must show.
    Without symbol files (lldb-dap runs no command the plugin refreshes them before; its
    stopCommands can: integration.symbols), so the provider names the frames in both."""
    setup = b.lldb_target(core=target.get("core"), pid=target.get("pid"))
    rc, out, err = t.lldb(setup + [f"thread select -t {tid}", "thread backtrace"],
                          pre=QUIET + ["async threads enable", "async symbols --auto off"])
    frames = frames_of(raw_section(out, "thread backtrace"), selected_index(out, f"thread select -t {tid}"))
    return [(pc, re.sub(r"( \[synthetic\])?( \[artificial\])?$", "", text)) for _, pc, text in frames]


def check_running(target, tid):
    want = lldb_frames(target, tid)
    dap = session(target)
    try:
        ids = {th["id"]: th["name"] for th in dap.threads()}
        t.check(tid in ids, f"the running thread {tid} among lldb-dap's threads: {ids}")
        frames = dap.stack(tid)
        got = [(int(f.get("instructionPointerReference", "0"), 16), f["name"]) for f in frames]
        # lldb-dap names a native frame by its function alone; asyncdac's frames by their whole text.
        made = [(pc, name) for pc, name in want if ".dll`" in name]
        t.check_eq([g for g in got if ".dll`" in g[1]], made, "managed and async frames: lldb-dap vs thread backtrace")
        t.check_eq([pc for pc, _ in got], [pc for pc, _ in want], "frame pcs: lldb-dap vs thread backtrace")
        check_async_frames(dap, frames, "parked")
    except DapError as e:
        t.fail(f"lldb-dap: {e}\n{dap.dump()}")
    finally:
        dap.close()


def check_async_frames(dap, frames, what):
    """The running sample's async frames in a stackTrace: right after the dispatch loop, at the
    await lines, and evaluate of their locals."""
    exp = b.expected("running")["running"]
    names = [f["name"] for f in frames]
    first = next((i for i, n in enumerate(names) if n.endswith(" [async]")), None)
    if not t.check(first is not None and first >= 2, f"{what}: async frames in the stack trace: {names}"):
        return
    t.check(re.search(r"DispatchContinuations\(\) \+ 0x[0-9a-f]+$", names[first - 1]) and
            frames[first - 1].get("presentationHint") == "subtle",
            f"{what}: the dispatch loop before the async frames, subtle: {frames[first - 1]}")
    t.check(re.search(r"IL_STUB_AsyncResume", names[first - 2]) and frames[first - 2].get("presentationHint") == "subtle",
            f"{what}: the resume stub before it, subtle: {frames[first - 2]}")
    t.check_eq([(m, int(line)) for m, line in re.findall(r"RunningApp\.(\w+)\(\)(?: \+ 0x[0-9a-f]+)? at Program\.cs:(\d+) \[async\]",
                                                        " ".join(names))],
               [(f["method"], f["await_line"]) for f in exp["dispatcher_frames"]],
               f"{what}: methods and await lines of the async frames")
    middle, top = frames[first]["id"], frames[first + 1]["id"]
    for ctx in ("watch", "hover", "repl"):
        r = dap.evaluate("midLocal", middle, ctx)
        t.check(r.get("success") and re.fullmatch(r"909|\(long\) \$\d+ = 909", r["body"]["result"]),
                f"{what}: evaluate midLocal ({ctx}) on RunMiddle: {r}")
    r = dap.evaluate("topLocal", top, "watch")
    t.check_eq(r.get("body", {}).get("result"), 'u"top-running"', f"{what}: evaluate topLocal (watch) on RunTop")


def check_step():
    """lldb-dap launches the running sample in mode break (Debugger.Break: SIGTRAP in libcoreclr,
    under StopHere), then steps three instructions over as an IDE does; each stop's stackTrace
    has the async frames."""
    d = t.dotnet_env()
    app = os.path.join(d["DN_APPS"], "11", "Debug", "running", "running.dll")
    dap = DapClient([LLDB_DAP], timeout=120)
    try:
        dap.initialize()
        dap.launch({"program": d["DN_HOST"], "args": [d["DN_RUNTIME11"], app, "--mode", "break"],
                    "initCommands": INIT})
        stop = dap.wait_event("stopped")["body"]
        tid = stop.get("threadId")
        t.check_eq(stop.get("reason"), "exception", f"the first stop (Debugger.Break's SIGTRAP): {stop}")
        check_async_frames(dap, dap.stack(tid), "at Debugger.Break")
        for i in range(3):
            dap.request("next", {"threadId": tid, "granularity": "instruction"})
            stop = dap.wait_event("stopped")["body"]
            t.check_eq((stop.get("reason"), stop.get("threadId")), ("step", tid), f"stop after step {i + 1}")
        frames = dap.stack(tid)
        t.check(re.search(r"Debugger\.Break\(\)", " ".join(f["name"] for f in frames[:3])),
                f"after the steps: still under Debugger.Break: {[f['name'] for f in frames[:4]]}")
        check_async_frames(dap, frames, "after three steps")
    except DapError as e:
        t.fail(f"lldb-dap: {e}\n{dap.dump()}")
    finally:
        try:
            dap.wait_response(dap.send("disconnect", {"terminateDebuggee": True}), timeout=20)
        except (DapError, OSError):
            pass
        dap.close()


def variables(dap, reply):
    """[(name, value, type)] of the children of an evaluate reply's value ([] without any)."""
    ref = reply.get("body", {}).get("variablesReference")
    if not ref:
        return []
    return [(v["name"], v["value"], v.get("type")) for v in
            dap.request("variables", {"variablesReference": ref})["body"]["variables"]]


def matches(got, want):
    """got equals want, where ADDR in want stands for any 16-digit address."""
    return re.fullmatch(re.escape(repr(want)).replace("ADDR", "0x[0-9a-f]{16}"), repr(got)) is not None


def check_nested(target):
    exp = b.expected("nested")["chains"][0]
    # The stop loads the symbol file with the types of the chains' variables (lldb-dap runs no
    # command the plugin would load it before).
    dap = session(target, stop=["async symbols --stacks --chain-types"])
    try:
        chains = [th for th in dap.threads() if th["name"].startswith("async: ")]
        t.check_eq([th["name"] for th in chains],
                   ["async: AsyncdacSamples.NestedApp.C<System.String>(System.String, System.Threading.Tasks.Task<Int32>) "
                    "[WaitingForActivation]"], "lldb-dap's chain threads")
        if not chains:
            return
        frames = dap.stack(chains[0]["id"])
        t.check_eq([re.sub(r" \+ 0x[0-9a-f]+ at ", " at ", f["name"]) for f in frames],
                   ["nested.dll`AsyncdacSamples.NestedApp.C<System.String>(System.String, System.Threading.Tasks.Task<Int32>)"
                    f" at Program.cs:{exp['frames'][0]['await_line']} [async]",
                    "nested.dll`AsyncdacSamples.Holder<Int32>.B(Int32, System.Threading.Tasks.Task<Int32>)"
                    f" at Program.cs:{exp['frames'][1]['await_line']} [async]",
                    f"nested.dll`AsyncdacSamples.NestedApp.A(Int32) at Program.cs:{exp['frames'][2]['await_line']} [async]"],
                   "the chain thread's frames")
        t.check_eq(len({f["id"] for f in frames}), 3, "three distinct frame ids")
        for frame, name, value in ((0, "cInt", "7"), (0, "cString", 'u"gamma"'), (0, "cPair.Id", "33"), (2, "aArray[1]", "2"), (1, "bLong", "-9876543210"),
                                   (1, "bGeneric", "77"), (2, "seed", "1"), (2, "aInt", "42")):
            r = dap.evaluate(name, frames[frame]["id"], "watch")
            t.check_eq(r.get("body", {}).get("result"), value, f"evaluate {name} on frame {frame}")
        # Structs, objects, enums and arrays of references from the continuation's memory with the
        # symbol file's types: an IDE expands them to their fields (strings: their text).
        typed = ((2, "aPair", "AsyncdacSamples.Pair", "AsyncdacSamples.Pair",
                  [("Id", "11", "int"), ("Tag", "ADDR", "object"), ("Count", "12", "int")]),
                 (0, "cPayload", "ADDR", "AsyncdacSamples.Payload", [("Value", "3", "int"), ("Name", 'ADDR "p-c"', "string")]),
                 (1, "this", "ADDR", "AsyncdacSamples.Holder<int>",
                  [("Field", "500", "int"), ("Label", 'ADDR "holder-label"', "string")]),
                 (0, "cColor", "Red", "AsyncdacSamples.Color", []),
                 (0, "cArray", "System.String object *[2]", "System.String object *[2]",
                  [("[0]", 'ADDR "x"', "System.String object *"), ("[1]", 'ADDR "y"', "System.String object *")]))
        for frame, name, result, type_, children in typed:
            r = dap.evaluate(name, frames[frame]["id"], "watch")
            got = (r.get("body", {}).get("result"), r.get("body", {}).get("type"), variables(dap, r))
            t.check(matches(got, (result, type_, children)),
                    f"evaluate {name} on frame {frame}: {got}, expected {(result, type_, children)}")
        r = dap.evaluate("nope", frames[0]["id"], "watch")
        t.check(not r.get("success"), f"evaluate of a name the frame does not have fails: {r}")
    except DapError as e:
        t.fail(f"lldb-dap: {e}\n{dap.dump()}")
    finally:
        dap.close()


def check_capped(target):
    """`async threads enable --max 2` on the mixed sample's 5 chains: 2 chain threads, then one
    counting the other 3, whose one frame says what shows them."""
    dap = session(target, init=[f"plugin load {t.PLUGIN}", "async threads enable --max 2"])
    try:
        chains = [th for th in dap.threads() if th["name"].startswith("async: ")]
        t.check_eq([th["name"] for th in chains[2:]], ["async: 3 more pending chains, not shown as threads"],
                   "lldb-dap's threads after the first two chains")
        t.check_eq([th["id"] for th in chains[2:]], [2**53 - 1], "its thread id (exact as a JavaScript number)")
        t.check(all(re.fullmatch(r"async: AsyncdacSamples\.\S+\(.*\) \[WaitingForActivation\]", th["name"])
                    for th in chains[:2]), f"the first two chain threads: {[th['name'] for th in chains[:2]]}")
        if len(chains) != 3:
            return
        frames = dap.stack(chains[2]["id"])
        t.check_eq([f["name"] for f in frames],
                   ["3 more pending chains are not shown as threads: 2 are, one of each of the first 2 of the 5 "
                    "distinct stacks ('async threads enable --max <n>' changes that; 'async ps --coalesce' groups "
                    "every chain)"], "the counting thread's one frame")
        r = dap.evaluate("x", frames[0]["id"], "watch") if frames else {}
        t.check(not r.get("success"), f"evaluate on the counting thread's frame fails: {r}")
    except DapError as e:
        t.fail(f"lldb-dap: {e}\n{dap.dump()}")
    finally:
        dap.close()


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "core"
    if mode == "step":
        check_step()
        t.finish()
    tmp = t.tmpdir()
    for scenario in ("running", "nested") + (("mixed",) if mode == "core" else ()):
        s = b.sample(scenario, "Debug")
        try:
            if mode == "core":
                target = {"core": b.make_core(s.pid, os.path.join(tmp, f"{scenario}.core"))}
                s.kill()
            else:
                if scenario == "running":
                    b.wait_parked(s.pid, s.tid)
                target = {"pid": s.pid}
            if scenario == "running":
                check_running(target, s.tid)
            elif scenario == "nested":
                check_nested(target)
            else:
                check_capped(target)
        finally:
            s.kill()
    t.finish()


main()
