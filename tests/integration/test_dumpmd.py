"""integration.dumpmd: `asyncdac dumpmd` on the real .NET 11.0.0 runtime names methods exactly as
Microsoft's DAC does, and as asyncdac's display format says.

    test_dumpmd.py [scenario [Debug|Release]]      (default: nested Debug)

Starts a sample, makes a full core with createdump, then:
  - the oracle (tests/oracle, ClrMD + the DAC) gives the methods of the suspended continuations;
    mdump (tests/data/ecma/mdump, ClrMD + the DAC) gives every method of every loaded type of the
    sample's module and of every type on the GC heap (CoreLib generics, arrays, async variants and
    their thunks): for all of them, dumpmd's "sos_name" must equal the DAC's name, from the core;
  - the continuation methods, from the core and live: display name (expected below), token, module,
    async flags (0x5 AsyncCall|IsAsyncVariant; 0xd with IsAsyncVariantForValueTask for ValueTask
    methods; 0x15 AsyncCall|IsAsyncVariant|Thunk, hidden, for the runtime's thunk awaiting a classic
    Task-returning method, scenario "mixed"), current code = the DAC's; live and core answers agree;
  - each variant's Task-returning thunk (same token, other MethodDesc): same name, flags 0x12
    (ReturnsTaskOrValueTask|Thunk), hidden;
  - the resume stubs behind the continuations' Resume pointers (found with `asyncdac ip2md`): IL
    stubs named IL_STUB_AsyncResume, hidden, and named as the DAC names them;
  - the text output of one MethodDesc, line by line; bad addresses fail with a one-line error.
Needs scripts/dotnet-setup's build/dotnet (the `dotnet` test fixture); a missing piece is a failure.
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from adactest import DOTNET_DIR, h  # noqa: E402


# asyncdac's display names of the suspended methods, from targets/dotnet/<scenario>/Program.cs.
DISPLAY = {
    "nested": {
        "AsyncdacSamples.NestedApp.A(Int32)",
        "AsyncdacSamples.Holder<Int32>.B(Int32, System.Threading.Tasks.Task<Int32>)",
        "AsyncdacSamples.NestedApp.C<System.__Canon>(System.__Canon, System.Threading.Tasks.Task<Int32>)",
    },
    "shapes": {
        "AsyncdacSamples.ShapesApp.VtLeaf()",
        "AsyncdacSamples.ShapesApp.GenericWait<Int32>(Int32, System.Threading.Tasks.Task<Int32>)",
        "AsyncdacSamples.ShapesApp.GenericWait<System.__Canon>(System.__Canon, System.Threading.Tasks.Task<Int32>)",
        "AsyncdacSamples.GenericWorker<System.__Canon>.Work(System.Threading.Tasks.Task<Int32>)",
        "AsyncdacSamples.ShapesApp+<>c__DisplayClass21_0.<LambdaTop>b__0()",
        "AsyncdacSamples.ShapesApp+<>c__DisplayClass22_0.<LocalFunctionTop>g__Local|0(Int32)",
        "AsyncdacSamples.ShapesApp.ConfigureFalse(System.Threading.Tasks.Task<Int32>)",
    },
}




def dumpmd(target, mds, what):
    """asyncdac dumpmd --json for several MethodDescs: {md: entry}."""
    rc, out, err = t.run([t.CLI, "dumpmd", *target, "--json", *[hex(m) for m in mds]], timeout=600)
    try:
        entries = json.loads(out)["dumpmd"]
    except (ValueError, KeyError) as e:
        t.fail(f"{what}: dumpmd output unparsable ({e}; rc {rc}, stderr {err.strip()[:500]})")
        return {}
    t.check_eq(len(entries), len(mds), f"{what}: entries")
    return {h(e["method_desc"]): e for e in entries}


def build_mdump(dn):
    out = os.path.join(DOTNET_DIR, "mdump")
    proj = os.path.join(t.SOURCE, "tests", "data", "ecma", "mdump", "mdump.csproj")
    rc, o, err = t.run(["flock", os.path.join(DOTNET_DIR, "mdump.lock"), "env", f"ASYNCDAC_DOTNET_DIR={DOTNET_DIR}",
                        "dotnet", "build", proj, "-c", "Release", "-o", out, "--nologo", "-v", "q"], timeout=600)
    if not t.check(rc == 0, f"building mdump failed ({rc}): {(o + err).strip()[-2000:]}"):
        return None
    return os.path.join(out, "mdump.dll")


def main():
    dn = t.dotnet_env()
    scenario = sys.argv[1] if len(sys.argv) > 1 else "nested"
    config = sys.argv[2] if len(sys.argv) > 2 else "Debug"
    mdump = build_mdump(dn)
    s = b.sample(scenario, config)
    live = ["--pid", str(s.pid)]
    tmp = t.tmpdir()
    core = b.make_core(s.pid, os.path.join(tmp, scenario + ".core"))
    oracle = b.oracle(core, tmp).data

    # The resume stubs (IL_STUB_AsyncResume, DynamicMethodDescs) behind the continuations' Resume
    # pointers, found with `asyncdac ip2md` (precode -> MethodDesc).
    # Only user frames have an IL resume stub; infrastructure continuations resume in CoreLib code.
    # One lookup per distinct stub (fanout's 10,000 chains share a handful).
    resumes = sorted({c["resume"] for c in oracle["continuations"] if h(c.get("resume", "0x0")) and c.get("method")})
    stubs = set()
    for resume in resumes:
        rc, out, err = t.run([t.CLI, "ip2md", core, resume, "--json"], timeout=60)
        if t.check(rc == 0, f"ip2md {resume} (resume stub): {err.strip()}"):
            stubs.add(h(json.loads(out)["ip2md"]["method_desc"]))

    # 1. Every method the DAC names, from the core.
    dac_names = {}
    if mdump:
        extra = [a for md in sorted(stubs) for a in ("--md", hex(md))]
        rc, out, err = t.run(["dotnet", mdump, "methods", core, "--dac", dn["DN_DAC11"], "--module", scenario + ".dll",
                              *extra], timeout=600)
        if t.check(rc == 0, f"mdump methods failed ({rc}): {err.strip()[-2000:]}"):
            for line in out.splitlines():
                a, _, name = line.partition(" ")
                dac_names[int(a, 16)] = name
    t.check(len(dac_names) >= 500, f"mdump gave {len(dac_names)} methods, want 500 or more")
    conts = [c["method"] for c in oracle["continuations"] if c.get("method")]
    for m in conts:
        dac_names[h(m["method_desc"])] = m["signature"]
    got = dumpmd([core], sorted(dac_names), "core, all methods")
    diffs = 0
    for md, want in sorted(dac_names.items()):
        e = got.get(md)
        if e is None:
            continue
        if "error" in e:
            t.fail(f"dumpmd {hex(md)} ({want}): {e['error']}")
            diffs += 1
        elif e["sos_name"] != want:
            diffs += 1
            if diffs <= 20:
                t.fail(f"dumpmd {hex(md)}: SOS name\n  want {want}\n  got  {e['sos_name']}")
    print(f"{len(dac_names)} MethodDescs named by the DAC, {diffs} differ", flush=True)
    t.check(len(stubs) >= 1, f"found {len(stubs)} resume stubs")
    for md in sorted(stubs):
        e = got.get(md, {})
        t.check(md in dac_names, f"resume stub {hex(md)}: the DAC names it")
        t.check(e.get("classification") == "Dynamic" and e.get("hidden") and e.get("dynamic", {}).get("il_stub")
                and e["name"].startswith("IL_STUB_AsyncResume("), f"resume stub {hex(md)}: {e}")

    # 2. The suspended methods, core and live.
    mds = sorted({h(m["method_desc"]) for m in conts})
    t.check(len(mds) >= 1, f"the oracle names {len(mds)} suspended methods, want 1 or more")
    core_res = got
    live_res = dumpmd(live, mds, "live")
    displays = set()
    for m in conts:
        md = h(m["method_desc"])
        e = core_res.get(md)
        if not t.check(e is not None and "error" not in e, f"{hex(md)}: no dumpmd answer: {e}"):
            continue
        what = f"{m['name']} ({hex(md)})"
        displays.add(e["name"])
        t.check_eq(h(e["token"]), h(m["token"]), f"{what}: token")
        t.check_eq(e["module_path"], m["module"], f"{what}: module path")
        t.check_eq(h(e["code"] or "0"), h(m["native_code"]), f"{what}: current code")
        flags = h(e["async"]["flags"]) if e["async"] else None
        t.check(flags in (0x5, 0xd, 0x15), f"{what}: async flags {e['async']}")
        if flags == 0x15:
            # The runtime's async thunk for a classic Task-returning method (scenario "mixed"): it is
            # a frame of the chain, but a thunk, so hidden.
            t.check(e["async"]["variant"] and e["async"]["thunk"] and e["hidden"], f"{what}: an async thunk, hidden")
        else:
            t.check(e["async"] and e["async"]["variant"] and not e["async"]["thunk"] and not e["hidden"],
                    f"{what}: an async variant, not hidden")
        t.check_eq(live_res.get(md), e, f"{what}: live answer")
    for name in sorted(DISPLAY.get(scenario, set())):
        t.check(name in displays, f"display name {name!r} not among {sorted(displays)}")

    # 3. The Task-returning thunks of those variants: same token and type, another MethodDesc of the
    #    DAC's list, Thunk flag (other MethodDescs with the token are other instantiations).
    by_token = {}
    for md, e in got.items():
        if "error" not in e and e["token"]:
            by_token.setdefault((e["module"], e["token"], e["method_table"]), []).append(e)
    thunks = named = 0
    for m in conts:
        e = core_res.get(h(m["method_desc"]))
        if not e or "error" in e:
            continue
        for other in by_token.get((e["module"], e["token"], e["method_table"]), []):
            if other["method_desc"] == e["method_desc"] or not (other["async"] and other["async"]["thunk"]):
                continue
            thunks += 1
            t.check(other["hidden"] and h(other["async"]["flags"]) == 0x12 and not other["async"]["variant"],
                    f"thunk {other['method_desc']}: {other['async']}, hidden {other['hidden']}")
            named += other["name"] == e["name"]
    t.check(thunks >= 1 and named >= 1,
            f"found {thunks} async thunks next to the suspended methods, {named} named like their variant")


    # 4. Text output, and errors.
    first = min(mds)
    rc, out, err = t.run([t.CLI, "dumpmd", core, hex(first)], timeout=60)
    e = core_res.get(first, {})
    t.check_eq(rc, 0, "dumpmd text: exit status")
    lines = out.splitlines()
    want = [f"Method Name:      {e.get('name')}", f"SOS Name:         {e.get('sos_name')}",
            f"MethodDesc:       0x{first:016x}"]
    t.check_eq(lines[:3], want, "dumpmd text: first lines")
    for label in ("Class:", "MethodTable:", "mdToken:", "Module:", "Kind:", "Async:", "IsJitted:"):
        t.check(any(line.startswith(label) for line in lines), f"dumpmd text: no {label} line in {out!r}")
    rc, out, err = t.run([t.CLI, "dumpmd", core, "0x1234"], timeout=60)
    t.check(rc == 1 and re.search(r"error: 0x1234 is not a MethodDesc \(misaligned\)", err), f"bad address: {rc} {err!r}")
    rc, out, err = t.run([t.CLI, "dumpmd", core, "0x10"], timeout=60)
    t.check(rc == 1 and "error:" in err and "0x10" in err, f"unreadable address: {rc} {err!r}")
    rc, out, err = t.run([t.CLI, "dumpmd", core], timeout=60)
    t.check(rc != 0 and "needs a MethodDesc address" in err, f"no address: {rc} {err!r}")
    t.finish()


main()
