"""bt.net10: the array layout (.NET 10.0.12 with DOTNET_RuntimeAsync=1) through the resume-stub route.

.NET 10 describes no ContinuationObject and records no DiagnosticIP: the Continuation class's
fields come from its FieldDescs, and each frame's method from its Resume pointer -> the
IL_STUB_AsyncResume stub -> its target. The 10.0.12 runtime leaves the stub's target unset, so the
method is the one the stub's name ("IL_STUB_AsyncResume_<method>_<tier>") names in the stub's module.
Expected: the oracle (ClrMD + the 10.0.12 DAC) for the chain's continuations and their Resume stubs;
the method names from targets/dotnet/nested/Program.cs (generic definitions: .NET 10 keeps no
instantiation with the stub).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from btsamples import h  # noqa: E402

# Callee -> caller, as nested/Program.cs declares them (C<T> and Holder<T>.B are generic).
WANT = [
    ("System.Private.CoreLib.dll", "Await"),  # AsyncHelpers.Await: 8 overloads, so only its name
    ("nested.dll", "AsyncdacSamples.NestedApp.C<T>(T, System.Threading.Tasks.Task<Int32>)"),
    ("nested.dll", "AsyncdacSamples.Holder<T>.B(T, System.Threading.Tasks.Task<Int32>)"),
    ("nested.dll", "AsyncdacSamples.NestedApp.A(Int32)"),
]
STUBS = ["IL_STUB_AsyncResume_Await_", "IL_STUB_AsyncResume_C_", "IL_STUB_AsyncResume_B_", "IL_STUB_AsyncResume_A_"]


def start_net10():
    d = b.dn()
    app = os.path.join(d["DN_APPS"], "10", "Debug", "nested", "nested.dll")
    proc, ready = t.start([d["DN_HOST"], d["DN_RUNTIME10"], app], timeout=120, env={"DOTNET_RuntimeAsync": "1"})
    t.check("runtime=10.0" in ready, f"READY names the .NET 10 runtime: {ready}")
    return proc


def oracle10(core, tmp):
    d = b.dn()
    out = os.path.join(tmp, "net10.oracle.json")
    rc, _, err = t.run(["dotnet", d["DN_ORACLE"], core, "--dac", d["DN_DAC10"], "--out", out], timeout=600)
    if rc != 0:
        raise SystemExit(f"FAIL: oracle on {core} ({rc}): {err.strip()[-2000:]}")
    import json
    with open(out) as f:
        return json.load(f)


def check_chain(args, task, chain, what):
    got = b.cli_json(["bt"] + args + ["--address", hex(task), "--json"], what)
    if not got or not t.check(len(got["chains"]) == 1, f"{what}: one chain"):
        return
    c = got["chains"][0]
    t.check_eq(h(c["task"]), task, f"{what}: task")
    t.check_eq(c["end"], "complete", f"{what}: the chain ends at Next == null")
    # Oracle frames with a Resume stub are the ones shown (the last continuation has no Resume).
    want_conts = [f for f in chain["frames"] if f.get("resume_stub")]
    t.check_eq(len(c["frames"]), len(WANT), f"{what}: frame count")
    for i, (f, (module, method)) in enumerate(zip(c["frames"], WANT)):
        t.check_eq(f["module"], module, f"{what}: frame #{i} module")
        t.check_eq(f["method"], method, f"{what}: frame #{i} method")
        t.check_eq(f["diagnostic_ip"], None, f"{what}: frame #{i} has no DiagnosticIP on the array layout")
        t.check_eq(f["state"], 0, f"{what}: frame #{i} state")
        if i < len(want_conts):
            o = want_conts[i]
            t.check_eq(h(f["continuation"]), h(o["address"]), f"{what}: frame #{i} continuation")
            t.check(o["resume_stub"].startswith(STUBS[i]), f"{what}: oracle stub of frame #{i} is {o['resume_stub']}")
        note = f["note"] or ""
        if i == 0:
            t.check("8 methods named Await" in note, f"{what}: frame #0 says the stub's name is ambiguous: {note}")
        else:
            t.check(note.startswith("found by its resume stub's name " + STUBS[i])
                    and note.endswith(": the runtime records no target"),
                    f"{what}: frame #{i} says how it was found: {note}")
            t.check(f["method_desc"] is not None and f["resume_method_desc"] == f["method_desc"],
                    f"{what}: frame #{i} MethodDesc from the resume route")


def main():
    tmp = t.tmpdir()
    proc = start_net10()
    try:
        core = b.make_core(proc.pid, os.path.join(tmp, "net10.core"))
        o = oracle10(core, tmp)
        tasks = [x for x in o["tasks"] if "ThunkTask" in x["type"]]
        if not t.check(len(tasks) == 1, f"oracle: one ThunkTask owns the chain, got {tasks}"):
            t.finish()
        task = h(tasks[0]["address"])
        chain = next(c for c in o["chains"] if h(c["head"]) == h(tasks[0]["head"]))
        layout = {f["name"]: f["offset"] for f in o["layout"]["continuation_fields"]}
        t.check_eq(sorted(layout), ["Data", "Flags", "GCData", "Next", "Resume", "State"],
                   "oracle: the array layout's fields")
        check_chain([core], task, chain, "core")
        check_chain(["--pid", str(proc.pid)], task, chain, "live")
        # The text form: four frames, the first named only by the stub.
        rc, out, err = t.run([t.CLI, "bt", core, "--address", hex(task)], timeout=120)
        lines = [l for l in out.splitlines() if l.startswith("  async #")]
        t.check(rc == 0 and len(lines) == 4 and "System.Private.CoreLib.dll`Await [state 0]" in lines[0]
                and lines[3].endswith("nested.dll`AsyncdacSamples.NestedApp.A(Int32) [state 0]"),
                f"text form:\n{out}{err}")
        # lldb reads the same core the same way.
        rc, lout, lerr = t.lldb([f"target create --core {core}", f"async bt --address {hex(task)}"], timeout=300)
        t.check(rc == 0 and [l for l in lout.splitlines() if l.startswith("  async #")] == lines,
                f"lldb on the core prints the CLI's frames:\n{lout}{lerr}")
    finally:
        proc.kill()
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


main()
